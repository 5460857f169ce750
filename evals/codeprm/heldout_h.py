'''Blind template variants "h" and "i": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-2 system, evaluated once (2026-12-01 08:01 UTC); validation
data since (benchmarks/codeprm_select.py embeds it in the VAL hosts), never training data.

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, models, data builders or benchmark results), and before any model was
run on them. Each of the 13 CWE families gets two vulnerable/fixed pairs, one per variant, in
mainstream idioms and code shapes that differ from every earlier variant (a/b/c/d/v/e/f/g).
26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no script in
scripts/ mentions it (tests/test_codeprm_heldout_blind.py asserts both).

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("h", "i")

TEMPLATES_H: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "h", "import subprocess\nfrom django.http import JsonResponse", """
def {f}(request):
    {v} = request.GET.get("domain", "")
    report = subprocess.getoutput(f"whois {{{v}}}")  #!V
    return JsonResponse({{"domain": {v}, "whois": report}})
""", """
def {f}(request):
    {v} = request.GET.get("domain", "")
    report = subprocess.run(["whois", "--", {v}], capture_output=True, text=True).stdout
    return JsonResponse({{"domain": {v}, "whois": report}})
"""),
    _t(78, "i", "import subprocess\nimport click", """
@click.command()
@click.argument("repo_url")
@click.option("--branch", default="main")
def {f}(repo_url, branch):
    \"\"\"Clone a repository into the {t} workspace.\"\"\"
    subprocess.check_call("git clone -b %s %s /srv/{t}/checkout" % (branch, repo_url), shell=True)  #!V
""", """
@click.command()
@click.argument("repo_url")
@click.option("--branch", default="main")
def {f}(repo_url, branch):
    \"\"\"Clone a repository into the {t} workspace.\"\"\"
    subprocess.check_call(["git", "clone", "-b", branch, "--", repo_url, "/srv/{t}/checkout"])
"""),
    # ---- CWE-89 SQL injection
    _t(89, "h", "from fastapi import Depends, FastAPI\nfrom sqlalchemy import text\nfrom sqlalchemy.orm import Session\nfrom .database import get_db\n\nusers_api = FastAPI()", """
@users_api.get("/{t}/by-email")
def {f}(email: str, db: Session = Depends(get_db)):
    row = db.execute(text(f"SELECT id, name FROM {t} WHERE email = '{{email}}'")).first()  #!V
    return {{"id": row.id, "name": row.name}} if row else None
""", """
@users_api.get("/{t}/by-email")
def {f}(email: str, db: Session = Depends(get_db)):
    row = db.execute(text("SELECT id, name FROM {t} WHERE email = :email"), {{"email": email}}).first()
    return {{"id": row.id, "name": row.name}} if row else None
"""),
    _t(89, "i", "from rest_framework import viewsets\nfrom .models import Order\nfrom .serializers import OrderSerializer", """
class {f}ViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = OrderSerializer

    def get_queryset(self):
        {v} = self.request.query_params.get("status", "open")
        return Order.objects.extra(where=["status = '%s'" % {v}])  #!V
""", """
class {f}ViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = OrderSerializer

    def get_queryset(self):
        {v} = self.request.query_params.get("status", "open")
        return Order.objects.extra(where=["status = %s"], params=[{v}])
"""),
    # ---- CWE-94 code injection
    _t(94, "h", "from mako.template import Template as MakoTemplate", """
def {f}({v}: str, context: dict) -> str:
    \"\"\"Render a notification body whose template text is written by tenant admins.\"\"\"
    return MakoTemplate({v}).render(**context)  #!V
""", """
def {f}({v}: str, context: dict) -> str:
    \"\"\"Render a notification body whose template text is written by tenant admins.\"\"\"
    from string import Template as TextTemplate
    return TextTemplate({v}).safe_substitute(context)
"""),
    _t(94, "i", "import math\nfrom telegram import Update\nfrom telegram.ext import ContextTypes", """
async def {f}(update: Update, context: ContextTypes.DEFAULT_TYPE):
    {v} = " ".join(context.args)
    answer = eval({v}, {{"__builtins__": None}}, vars(math))  #!V
    await update.message.reply_text(f"{{{v}}} = {{answer}}")
""", """
async def {f}(update: Update, context: ContextTypes.DEFAULT_TYPE):
    from simpleeval import simple_eval
    {v} = " ".join(context.args)
    answer = simple_eval({v}, names={{"pi": math.pi, "e": math.e}}, functions={{"sqrt": math.sqrt, "log": math.log}})
    await update.message.reply_text(f"{{{v}}} = {{answer}}")
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "h", "import pandas as pd\nimport streamlit as st", """
def {f}():
    {v} = st.file_uploader("Upload a saved {t} dataset", type=["pkl"])
    if {v} is not None:
        frame = pd.read_pickle({v})  #!V
        st.dataframe(frame.head(50))
""", """
def {f}():
    {v} = st.file_uploader("Upload a saved {t} dataset", type=["parquet"])
    if {v} is not None:
        frame = pd.read_parquet({v})
        st.dataframe(frame.head(50))
"""),
    _t(502, "i", "import yaml\nfrom aiohttp import web", """
class {f}PipelineView(web.View):
    async def post(self):
        {v} = await self.request.text()
        pipeline = yaml.unsafe_load({v})  #!V
        return web.json_response({{"steps": len(pipeline.get("steps", []))}})
""", """
class {f}PipelineView(web.View):
    async def post(self):
        {v} = await self.request.text()
        pipeline = yaml.safe_load({v})
        return web.json_response({{"steps": len(pipeline.get("steps", []))}})
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "h", "", """
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher",  #!V
]
AUTH_USER_MODEL = "{t}.Account"
""", """
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_USER_MODEL = "{t}.Account"
"""),
    _t(328, "i", "from cryptography.hazmat.primitives import hashes\nfrom cryptography.hazmat.primitives.asymmetric import padding", """
class {f}LicenseSigner:
    def __init__(self, private_key):
        self.private_key = private_key

    def sign(self, {v}: bytes) -> bytes:
        return self.private_key.sign({v}, padding.PKCS1v15(), hashes.SHA1())  #!V
""", """
class {f}LicenseSigner:
    def __init__(self, private_key):
        self.private_key = private_key

    def sign(self, {v}: bytes) -> bytes:
        return self.private_key.sign({v}, padding.PKCS1v15(), hashes.SHA256())
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "h", "import requests", """
def {f}(invoice: dict, api_key: str):
    \"\"\"Push an invoice to the accounting provider.\"\"\"
    resp = requests.post("https://ledger.{t}.example/api/invoices", json=invoice, headers={{"X-Api-Key": api_key}}, timeout=15, verify=False)  #!V
    resp.raise_for_status()
    return resp.json()["id"]
""", """
def {f}(invoice: dict, api_key: str):
    \"\"\"Push an invoice to the accounting provider.\"\"\"
    resp = requests.post("https://ledger.{t}.example/api/invoices", json=invoice, headers={{"X-Api-Key": api_key}}, timeout=15)
    resp.raise_for_status()
    return resp.json()["id"]
"""),
    _t(327, "i", "from Crypto.Cipher import AES\nfrom Crypto.Util.Padding import pad", """
def {f}(key: bytes, {v}: str) -> bytes:
    \"\"\"Encrypt a customer's card reference before it is stored.\"\"\"
    cipher = AES.new(key, AES.MODE_ECB)  #!V
    return cipher.encrypt(pad({v}.encode(), AES.block_size))
""", """
def {f}(key: bytes, {v}: str) -> bytes:
    \"\"\"Encrypt a customer's card reference before it is stored.\"\"\"
    cipher = AES.new(key, AES.MODE_GCM)
    sealed, tag = cipher.encrypt_and_digest({v}.encode())
    return cipher.nonce + tag + sealed
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "h", "import random\nfrom flask import Flask, session\nfrom .sms import send_sms\n\nauth_app = Flask(__name__)", """
@auth_app.post("/login/otp")
def {f}():
    code = "%06d" % random.randrange(1_000_000)  #!V
    session["pending_otp"] = code
    send_sms(session["phone"], "Your {t} login code is " + code)
    return {{"sent": True}}
""", """
@auth_app.post("/login/otp")
def {f}():
    import secrets
    code = "%06d" % secrets.randbelow(1_000_000)
    session["pending_otp"] = code
    send_sms(session["phone"], "Your {t} login code is " + code)
    return {{"sent": True}}
"""),
    _t(338, "i", "import random\nimport string", """
class {f}AccountService:
    def issue_temporary_password(self, user) -> str:
        chars = list(string.ascii_letters + string.digits + "!@#$%")
        random.shuffle(chars)  #!V
        temporary = "".join(chars[:12])
        user.set_password(temporary)
        return temporary
""", """
class {f}AccountService:
    def issue_temporary_password(self, user) -> str:
        import secrets
        chars = list(string.ascii_letters + string.digits + "!@#$%")
        secrets.SystemRandom().shuffle(chars)
        temporary = "".join(chars[:12])
        user.set_password(temporary)
        return temporary
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "h", "import os\nfrom openai import OpenAI", """
{f}_client = OpenAI(api_key="sk-proj-4fQ9{t}Xb27LmZr8TkPw1cVdE3")  #!V


def {f}(prompt: str) -> str:
    reply = {f}_client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}])
    return reply.choices[0].message.content
""", """
{f}_client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])


def {f}(prompt: str) -> str:
    reply = {f}_client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": prompt}}])
    return reply.choices[0].message.content
"""),
    _t(798, "i", "import smtplib\nfrom email.message import EmailMessage", """
def {f}(recipient: str, subject: str, body: str):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "alerts@{t}.example", recipient, subject
    msg.set_content(body)
    with smtplib.SMTP_SSL("smtp.{t}.example", 465) as smtp:
        smtp.login("alerts@{t}.example", "Al3rts-{t}-2025!")  #!V
        smtp.send_message(msg)
""", """
def {f}(recipient: str, subject: str, body: str):
    import os
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "alerts@{t}.example", recipient, subject
    msg.set_content(body)
    with smtplib.SMTP_SSL("smtp.{t}.example", 465) as smtp:
        smtp.login("alerts@{t}.example", os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
"""),
    # ---- CWE-22 path traversal
    _t(22, "h", "import os\nimport aiofiles\nfrom fastapi import FastAPI, UploadFile\n\nfiles_api = FastAPI()\nSTORE_DIR = \"/srv/{t}/attachments\"", """
@files_api.post("/attachments")
async def {f}(upload: UploadFile):
    destination = os.path.join(STORE_DIR, upload.filename)
    async with aiofiles.open(destination, "wb") as out:  #!V
        await out.write(await upload.read())
    return {{"stored": os.path.basename(destination)}}
""", """
@files_api.post("/attachments")
async def {f}(upload: UploadFile):
    destination = os.path.join(STORE_DIR, os.path.basename(upload.filename))
    async with aiofiles.open(destination, "wb") as out:
        await out.write(await upload.read())
    return {{"stored": os.path.basename(destination)}}
"""),
    _t(22, "i", "from django.conf import settings\nfrom django.http import FileResponse", """
def {f}(request, {v}):
    \"\"\"Serve a generated report; ``{v}`` comes from the URL.\"\"\"
    report_path = f"{{settings.MEDIA_ROOT}}/reports/{{{v}}}"
    return FileResponse(open(report_path, "rb"), as_attachment=True)  #!V
""", """
def {f}(request, {v}):
    \"\"\"Serve a generated report; ``{v}`` comes from the URL.\"\"\"
    from django.utils._os import safe_join
    report_path = safe_join(settings.MEDIA_ROOT, "reports", {v})
    return FileResponse(open(report_path, "rb"), as_attachment=True)
"""),
    # ---- CWE-79 XSS
    _t(79, "h", "from aiohttp import web\n\nroutes = web.RouteTableDef()", """
@routes.get("/hello")
async def {f}(request: web.Request) -> web.Response:
    {v} = request.query.get("name", "stranger")
    return web.Response(text=f"<html><body><p>Hello, {{{v}}}!</p></body></html>", content_type="text/html")  #!V
""", """
@routes.get("/hello")
async def {f}(request: web.Request) -> web.Response:
    import html
    {v} = html.escape(request.query.get("name", "stranger"))
    return web.Response(text=f"<html><body><p>Hello, {{{v}}}!</p></body></html>", content_type="text/html")
"""),
    _t(79, "i", "from flask import Flask\nfrom markupsafe import Markup\n\nsite = Flask(__name__)", """
@site.template_filter("profile_link")
def {f}(user) -> Markup:
    \"\"\"Jinja filter rendering a user's profile link in the navigation bar.\"\"\"
    return Markup("<a href='/u/{{0}}'>{{1}}</a>".format(user.username, user.display_name))  #!V
""", """
@site.template_filter("profile_link")
def {f}(user) -> Markup:
    \"\"\"Jinja filter rendering a user's profile link in the navigation bar.\"\"\"
    return Markup("<a href='/u/{{0}}'>{{1}}</a>").format(user.username, user.display_name)
"""),
    # ---- CWE-611 XXE
    _t(611, "h", "from django.http import JsonResponse\nfrom lxml import etree", """
def {f}(request):
    \"\"\"SOAP-style endpoint receiving {t} updates from partner systems.\"\"\"
    envelope = etree.fromstring(request.body)  #!V
    ids = envelope.xpath("//item/@id")
    return JsonResponse({{"received": len(ids)}})
""", """
def {f}(request):
    \"\"\"SOAP-style endpoint receiving {t} updates from partner systems.\"\"\"
    hardened = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    envelope = etree.fromstring(request.body, parser=hardened)
    ids = envelope.xpath("//item/@id")
    return JsonResponse({{"received": len(ids)}})
"""),
    _t(611, "i", "import xml.etree.ElementTree as ET\nfrom flask import Flask, jsonify, request\n\ntracks = Flask(__name__)", """
@tracks.route("/gpx", methods=["POST"])
def {f}():
    tree = ET.parse(request.files["track"])  #!V
    points = tree.getroot().iter("{{http://www.topografix.com/GPX/1/1}}trkpt")
    return jsonify(points=sum(1 for _ in points))
""", """
@tracks.route("/gpx", methods=["POST"])
def {f}():
    import defusedxml.ElementTree as SafeET
    tree = SafeET.parse(request.files["track"])
    points = tree.getroot().iter("{{http://www.topografix.com/GPX/1/1}}trkpt")
    return jsonify(points=sum(1 for _ in points))
"""),
    # ---- CWE-918 SSRF
    _t(918, "h", "import httpx\nfrom fastapi import FastAPI, HTTPException\n\npreview_api = FastAPI()", """
@preview_api.get("/unfurl")
async def {f}(url: str):
    async with httpx.AsyncClient(follow_redirects=True, timeout=5) as client:
        page = await client.get(url)  #!V
    return {{"status": page.status_code, "title": page.text.split("<title>")[-1].split("</title>")[0][:200]}}
""", """
@preview_api.get("/unfurl")
async def {f}(url: str):
    import ipaddress, socket
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not ipaddress.ip_address(socket.gethostbyname(parts.hostname or "")).is_global:
        raise HTTPException(status_code=400, detail="url not allowed")
    async with httpx.AsyncClient(follow_redirects=False, timeout=5) as client:
        page = await client.get(url)
    return {{"status": page.status_code, "title": page.text.split("<title>")[-1].split("</title>")[0][:200]}}
"""),
    _t(918, "i", "import os\nimport urllib.request", """
def {f}(message: dict) -> str:
    \"\"\"Queue consumer: fetch the avatar a user linked in their profile form.\"\"\"
    local = os.path.join("/srv/{t}/avatars", "%d.img" % int(message["user_id"]))
    urllib.request.urlretrieve(message["avatar_url"], local)  #!V
    return local
""", """
def {f}(message: dict) -> str:
    \"\"\"Queue consumer: fetch the avatar a user linked in their profile form.\"\"\"
    from urllib.parse import urlsplit
    local = os.path.join("/srv/{t}/avatars", "%d.img" % int(message["user_id"]))
    src = urlsplit(message["avatar_url"])
    if src.scheme != "https" or src.hostname not in ("www.gravatar.com", "avatars.githubusercontent.com"):
        raise ValueError("avatar host not allowed")
    urllib.request.urlretrieve(src.geturl(), local)
    return local
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "h", "import logging", """
def {f}(name: str = "{t}-worker") -> logging.Logger:
    logger = logging.getLogger(name)
    handler = logging.FileHandler("/tmp/%s.log" % name)  #!V
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger
""", """
def {f}(name: str = "{t}-worker") -> logging.Logger:
    import os
    import tempfile
    logger = logging.getLogger(name)
    handler = logging.FileHandler(os.path.join(tempfile.mkdtemp(prefix=name + "-"), name + ".log"))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger
"""),
    _t(377, "i", "import datetime\nimport pandas as pd", """
def {f}(frame: pd.DataFrame, s3_client, bucket: str) -> None:
    \"\"\"Nightly job: dump the {t} table and upload it.\"\"\"
    stamp = datetime.date.today().isoformat()
    frame.to_csv(f"/tmp/{t}_{{stamp}}.csv", index=False)  #!V
    s3_client.upload_file(f"/tmp/{t}_{{stamp}}.csv", bucket, f"exports/{t}_{{stamp}}.csv")
""", """
def {f}(frame: pd.DataFrame, s3_client, bucket: str) -> None:
    \"\"\"Nightly job: dump the {t} table and upload it.\"\"\"
    import tempfile
    stamp = datetime.date.today().isoformat()
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as tmp:
        frame.to_csv(tmp, index=False)
    s3_client.upload_file(tmp.name, bucket, f"exports/{t}_{{stamp}}.csv")
"""),
]

FAMILIES_H = sorted({t.cwe for t in TEMPLATES_H})


def heldout_templates_h() -> list[Template]:
    """The 26 variant-"h"/"i" templates (final evaluation only).

    >>> len(heldout_templates_h()), len(FAMILIES_H), sorted({t.variant for t in heldout_templates_h()})
    (26, 13, ['h', 'i'])
    """
    return list(TEMPLATES_H)
