'''Blind template variants "l" and "m": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-3 system, evaluated once (2026-12-01 08:50 UTC); validation data
since (embedded in the VAL hosts by benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, fixes and code shapes
that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness mentions it
(tests/test_codeprm_heldout_blind.py asserts both).

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("l", "m")

TEMPLATES_L: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "l", "import asyncssh\nfrom aiohttp import web", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Support tool: tail the journal of the service an operator picked in the web UI.\"\"\"
    service = request.query["service"]
    lines = request.query.get("lines", "100")
    async with asyncssh.connect("app1.{t}.internal", username="support") as conn:
        result = await conn.run(f"journalctl -u {{service}} -n {{lines}} --no-pager")  #!V
    return web.Response(text=result.stdout)
""", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Support tool: tail the journal of the service an operator picked in the web UI.\"\"\"
    import shlex
    service = request.query["service"]
    lines = request.query.get("lines", "100")
    async with asyncssh.connect("app1.{t}.internal", username="support") as conn:
        result = await conn.run(shlex.join(["journalctl", "-u", service, "-n", str(int(lines)), "--no-pager"]))
    return web.Response(text=result.stdout)
"""),
    _t(78, "m", "import anyio", """
async def {f}(job: dict) -> int:
    \"\"\"Worker: convert an uploaded document to PDF; ``job`` is posted by the public API.\"\"\"
    source = f"/srv/{t}/uploads/{{int(job['upload_id'])}}"
    target_pdf = source + ".pdf"
    done = await anyio.run_process(f"pandoc {{source}} --from {{job['from_format']}} -o {{target_pdf}}", check=False)  #!V
    return done.returncode
""", """
async def {f}(job: dict) -> int:
    \"\"\"Worker: convert an uploaded document to PDF; ``job`` is posted by the public API.\"\"\"
    source = f"/srv/{t}/uploads/{{int(job['upload_id'])}}"
    target_pdf = source + ".pdf"
    done = await anyio.run_process(["pandoc", source, "--from", job["from_format"], "-o", target_pdf], check=False)
    return done.returncode
"""),
    # ---- CWE-89 SQL injection
    _t(89, "l", "from django.db.models.expressions import RawSQL\nfrom django.http import JsonResponse\nfrom .models import Listing", """
def {f}(request):
    \"\"\"Listings sorted by distance from the coordinates the browser sent.\"\"\"
    lat, lng = request.GET["lat"], request.GET["lng"]
    distance = RawSQL("point(lng, lat) <@> point(%s, %s)" % (lng, lat), [])  #!V
    nearby = Listing.objects.annotate(distance=distance).order_by("distance")[:20]
    return JsonResponse({{"results": [{{"id": row.id, "miles": row.distance}} for row in nearby]}})
""", """
def {f}(request):
    \"\"\"Listings sorted by distance from the coordinates the browser sent.\"\"\"
    lat, lng = request.GET["lat"], request.GET["lng"]
    distance = RawSQL("point(lng, lat) <@> point(%s, %s)", [lng, lat])
    nearby = Listing.objects.annotate(distance=distance).order_by("distance")[:20]
    return JsonResponse({{"results": [{{"id": row.id, "miles": row.distance}} for row in nearby]}})
"""),
    _t(89, "m", "from peewee import PostgresqlDatabase\n\ndb = PostgresqlDatabase(\"{t}\")", """
class {f}Repository:
    def archive_for_customer(self, {v}: str, before: str) -> int:
        \"\"\"Called by the support portal with the values the agent typed in.\"\"\"
        cursor = db.execute_sql("UPDATE {t} SET archived = true WHERE customer_ref = '" + {v} + "' AND created < '" + before + "'")  #!V
        return cursor.rowcount
""", """
class {f}Repository:
    def archive_for_customer(self, {v}: str, before: str) -> int:
        \"\"\"Called by the support portal with the values the agent typed in.\"\"\"
        cursor = db.execute_sql("UPDATE {t} SET archived = true WHERE customer_ref = %s AND created < %s", ({v}, before))
        return cursor.rowcount
"""),
    # ---- CWE-94 code injection
    _t(94, "l", "from django.http import JsonResponse", """
def {f}(request):
    \"\"\"Return the dashboard layout the browser saved in its ``layout`` cookie.\"\"\"
    {v} = request.COOKIES.get("layout", "{{}}")
    layout = eval({v})  #!V
    return JsonResponse({{"widgets": layout.get("widgets", []), "theme": layout.get("theme", "light")}})
""", """
def {f}(request):
    \"\"\"Return the dashboard layout the browser saved in its ``layout`` cookie.\"\"\"
    import json
    {v} = request.COOKIES.get("layout", "{{}}")
    layout = json.loads({v})
    return JsonResponse({{"widgets": layout.get("widgets", []), "theme": layout.get("theme", "light")}})
"""),
    _t(94, "m", "", """
class {f}AutomationRule:
    \"\"\"Helpdesk automation; the script text is written by tenant admins in the web UI.\"\"\"

    def __init__(self, script: str):
        self.script = script

    def apply(self, ticket) -> None:
        exec(self.script, {{"ticket": ticket}})  #!V
""", """
class {f}AutomationRule:
    \"\"\"Helpdesk automation; the script text is written by tenant admins in the web UI.\"\"\"

    def __init__(self, script: str):
        self.script = script

    def apply(self, ticket) -> None:
        from RestrictedPython import compile_restricted, safe_globals
        from RestrictedPython.Guards import full_write_guard
        exec(compile_restricted(self.script, "<rule>", "exec"), {{**safe_globals, "_write_": full_write_guard, "ticket": ticket}})
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "l", "from multiprocessing.connection import Listener", """
def {f}(handle_job, address=("jobs.{t}.internal", 6000)) -> None:
    \"\"\"Job receiver: dispatchers on other hosts connect and send job descriptions.\"\"\"
    with Listener(address) as server:
        while True:
            with server.accept() as conn:
                handle_job(conn.recv())  #!V
""", """
def {f}(handle_job, address=("jobs.{t}.internal", 6000)) -> None:
    \"\"\"Job receiver: dispatchers on other hosts connect and send job descriptions.\"\"\"
    import json
    with Listener(address) as server:
        while True:
            with server.accept() as conn:
                handle_job(json.loads(conn.recv_bytes()))
"""),
    _t(502, "m", "import pickle\nimport socketserver", """
class {f}MetricsHandler(socketserver.StreamRequestHandler):
    \"\"\"Collects metric batches pushed by monitoring agents over TCP.\"\"\"

    def handle(self):
        batch = pickle.load(self.rfile)  #!V
        for series, points in batch.items():
            self.server.store.append(series, points)
        self.wfile.write(b"ok\\n")
""", """
class {f}MetricsHandler(socketserver.StreamRequestHandler):
    \"\"\"Collects metric batches pushed by monitoring agents over TCP.\"\"\"

    def handle(self):
        import json
        batch = json.loads(self.rfile.readline())
        for series, points in batch.items():
            self.server.store.append(series, points)
        self.wfile.write(b"ok\\n")
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "l", "from flask import Blueprint, request\nfrom werkzeug.security import generate_password_hash\nfrom .models import User, db\n\naccounts = Blueprint(\"accounts\", __name__)", """
@accounts.post("/signup")
def {f}():
    form = request.form
    user = User(email=form["email"], password_hash=generate_password_hash(form["password"], method="sha1"))  #!V
    db.session.add(user)
    db.session.commit()
    return {{"id": user.id}}, 201
""", """
@accounts.post("/signup")
def {f}():
    form = request.form
    user = User(email=form["email"], password_hash=generate_password_hash(form["password"], method="scrypt"))
    db.session.add(user)
    db.session.commit()
    return {{"id": user.id}}, 201
"""),
    _t(328, "m", "import time\nimport zlib\nfrom flask import current_app, url_for", """
def {f}(file_id: int, ttl: int = 3600) -> str:
    \"\"\"Signed, expiring download link for a private file.\"\"\"
    expires = int(time.time()) + ttl
    secret = current_app.config["SECRET_KEY"]
    sig = "%08x" % zlib.crc32(f"{{secret}}:{{file_id}}:{{expires}}".encode())  #!V
    return url_for("files.download", file_id=file_id, expires=expires, sig=sig, _external=True)
""", """
def {f}(file_id: int, ttl: int = 3600) -> str:
    \"\"\"Signed, expiring download link for a private file.\"\"\"
    import hashlib
    import hmac
    expires = int(time.time()) + ttl
    secret = current_app.config["SECRET_KEY"]
    sig = hmac.new(secret.encode(), f"{{file_id}}:{{expires}}".encode(), hashlib.sha256).hexdigest()
    return url_for("files.download", file_id=file_id, expires=expires, sig=sig, _external=True)
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "l", "import os\nimport smtplib\nimport ssl\nfrom email.message import EmailMessage", """
def {f}(msg: EmailMessage, relay: str = "mail.{t}.internal") -> None:
    with smtplib.SMTP(relay, 587, timeout=20) as smtp:
        smtp.starttls(context=ssl._create_unverified_context())  #!V
        smtp.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
""", """
def {f}(msg: EmailMessage, relay: str = "mail.{t}.internal") -> None:
    with smtplib.SMTP(relay, 587, timeout=20) as smtp:
        smtp.starttls(context=ssl.create_default_context())
        smtp.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
"""),
    _t(327, "m", "import os\nfrom pymongo import MongoClient", """
def {f}() -> MongoClient:
    \"\"\"Shared client for the {t} service (hosted cluster, TLS required).\"\"\"
    return MongoClient(
        os.environ["MONGO_URI"],
        tls=True,
        tlsAllowInvalidCertificates=True,  #!V
        serverSelectionTimeoutMS=5000,
    )
""", """
def {f}() -> MongoClient:
    \"\"\"Shared client for the {t} service (hosted cluster, TLS required).\"\"\"
    import certifi
    return MongoClient(
        os.environ["MONGO_URI"],
        tls=True,
        tlsCAFile=certifi.where(),
        serverSelectionTimeoutMS=5000,
    )
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "l", "import hashlib\nimport random\nfrom starlette.responses import RedirectResponse", """
async def {f}(request):
    \"\"\"Start the OAuth login: remember an anti-CSRF ``state`` value in the session.\"\"\"
    state = hashlib.sha256(str(random.random()).encode()).hexdigest()  #!V
    request.session["oauth_state"] = state
    return RedirectResponse(f"https://auth.{t}.example/authorize?client_id=web&state={{state}}")
""", """
async def {f}(request):
    \"\"\"Start the OAuth login: remember an anti-CSRF ``state`` value in the session.\"\"\"
    import secrets
    state = secrets.token_urlsafe(32)
    request.session["oauth_state"] = state
    return RedirectResponse(f"https://auth.{t}.example/authorize?client_id=web&state={{state}}")
"""),
    _t(338, "m", "import random\nimport string\nfrom pydantic import BaseModel, Field\n\nSECRET_ALPHABET = string.ascii_letters + string.digits", """
class {f}ApiClient(BaseModel):
    \"\"\"A third-party integration registered by a customer; ``secret`` authenticates its calls.\"\"\"
    display_name: str
    client_id: str
    secret: str = Field(default_factory=lambda: "".join(random.choices(SECRET_ALPHABET, k=40)))  #!V
""", """
class {f}ApiClient(BaseModel):
    \"\"\"A third-party integration registered by a customer; ``secret`` authenticates its calls.\"\"\"
    display_name: str
    client_id: str
    secret: str = Field(default_factory=lambda: "".join(random.SystemRandom().choices(SECRET_ALPHABET, k=40)))
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "l", "import os\nimport sendgrid\nfrom sendgrid.helpers.mail import Mail", """
SENDGRID_API_KEY = os.getenv("SENDGRID_API_KEY", "SG.q7Hc2{t}Lw9.Zt3mX81vKp0RbNf5YsD2eW4uJaG6hQ")  #!V


def {f}(to_email: str, subject: str, html_body: str) -> int:
    client = sendgrid.SendGridAPIClient(api_key=SENDGRID_API_KEY)
    reply = client.send(Mail(from_email="noreply@{t}.example", to_emails=to_email, subject=subject, html_content=html_body))
    return reply.status_code
""", """
SENDGRID_API_KEY = os.environ["SENDGRID_API_KEY"]


def {f}(to_email: str, subject: str, html_body: str) -> int:
    client = sendgrid.SendGridAPIClient(api_key=SENDGRID_API_KEY)
    reply = client.send(Mail(from_email="noreply@{t}.example", to_emails=to_email, subject=subject, html_content=html_body))
    return reply.status_code
"""),
    _t(798, "m", "import functools\nfrom flask import Response, request", """
def {f}(view):
    \"\"\"Protect the ops dashboard with HTTP basic auth.\"\"\"
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        auth = request.authorization
        if not auth or auth.username != "ops" or auth.password != "0ps-D4shb0ard!{t}":  #!V
            return Response("login required", 401, {{"WWW-Authenticate": 'Basic realm="ops"'}})
        return view(*args, **kwargs)
    return wrapper
""", """
def {f}(view):
    \"\"\"Protect the ops dashboard with HTTP basic auth.\"\"\"
    import hmac
    import os
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        auth = request.authorization
        if not auth or auth.username != "ops" or not hmac.compare_digest(auth.password or "", os.environ["OPS_DASHBOARD_PASSWORD"]):
            return Response("login required", 401, {{"WWW-Authenticate": 'Basic realm="ops"'}})
        return view(*args, **kwargs)
    return wrapper
"""),
    # ---- CWE-22 path traversal
    _t(22, "l", "import grpc\nfrom pathlib import Path\nfrom . import exports_pb2, exports_pb2_grpc\n\nEXPORT_ROOT = Path(\"/srv/{t}/exports\")", """
class {f}Servicer(exports_pb2_grpc.ExportServicer):
    def Download(self, request, context):
        \"\"\"Send back an export file; ``request.path`` is chosen by the API client.\"\"\"
        with open(EXPORT_ROOT / request.path, "rb") as fh:  #!V
            return exports_pb2.Chunk(content=fh.read())
""", """
class {f}Servicer(exports_pb2_grpc.ExportServicer):
    def Download(self, request, context):
        \"\"\"Send back an export file; ``request.path`` is chosen by the API client.\"\"\"
        wanted = (EXPORT_ROOT / request.path).resolve()
        try:
            wanted.relative_to(EXPORT_ROOT.resolve())
        except ValueError:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "path outside the export root")
        with open(wanted, "rb") as fh:
            return exports_pb2.Chunk(content=fh.read())
"""),
    _t(22, "m", "import shutil\nfrom pathlib import Path\nfrom fastapi import APIRouter\n\nworkspaces = APIRouter()\nWORKSPACE_ROOT = Path(\"/srv/{t}/workspaces\")", """
@workspaces.delete("/workspaces")
async def {f}(workspace_id: str):
    \"\"\"Delete a workspace; ids are the uuid4 strings handed out when it was created.\"\"\"
    shutil.rmtree(WORKSPACE_ROOT / workspace_id, ignore_errors=True)  #!V
    return {{"deleted": workspace_id}}
""", """
@workspaces.delete("/workspaces")
async def {f}(workspace_id: str):
    \"\"\"Delete a workspace; ids are the uuid4 strings handed out when it was created.\"\"\"
    import uuid
    workspace_id = str(uuid.UUID(workspace_id))
    shutil.rmtree(WORKSPACE_ROOT / workspace_id, ignore_errors=True)
    return {{"deleted": workspace_id}}
"""),
    # ---- CWE-79 XSS
    _t(79, "l", "import markdown\nfrom django.db import models\nfrom django.utils.safestring import mark_safe", """
class {f}Comment(models.Model):
    author = models.CharField(max_length=80)
    body = models.TextField(help_text="Markdown written by site visitors")

    def body_html(self):
        return mark_safe(markdown.markdown(self.body))  #!V
""", """
class {f}Comment(models.Model):
    author = models.CharField(max_length=80)
    body = models.TextField(help_text="Markdown written by site visitors")

    def body_html(self):
        import nh3
        return mark_safe(nh3.clean(markdown.markdown(self.body)))
"""),
    _t(79, "m", "import streamlit as st\nfrom .metrics import load_metrics", """
def {f}():
    \"\"\"Shared dashboard page; the team name comes from the link the viewer was sent.\"\"\"
    {v} = st.query_params.get("team", "everyone")
    st.markdown(f"<h2 class='banner'>Dashboard for {{{v}}}</h2>", unsafe_allow_html=True)  #!V
    st.line_chart(load_metrics({v}))
""", """
def {f}():
    \"\"\"Shared dashboard page; the team name comes from the link the viewer was sent.\"\"\"
    import html
    {v} = st.query_params.get("team", "everyone")
    st.markdown(f"<h2 class='banner'>Dashboard for {{html.escape({v})}}</h2>", unsafe_allow_html=True)
    st.line_chart(load_metrics({v}))
"""),
    # ---- CWE-611 XXE
    _t(611, "l", "from flask import Flask, abort, request\nfrom lxml import etree\n\ninvoices = Flask(__name__)", """
@invoices.put("/invoices/<int:invoice_id>")
def {f}(invoice_id: int):
    \"\"\"Accept an invoice document uploaded by a supplier and validate it against its DTD.\"\"\"
    parser = etree.XMLParser(dtd_validation=True, no_network=False)  #!V
    doc = etree.fromstring(request.get_data(), parser)
    return {{"invoice": invoice_id, "total": doc.findtext("total")}}
""", """
@invoices.put("/invoices/<int:invoice_id>")
def {f}(invoice_id: int):
    \"\"\"Accept an invoice document uploaded by a supplier and validate it against its DTD.\"\"\"
    parser = etree.XMLParser(load_dtd=False, resolve_entities=False, no_network=True)
    doc = etree.fromstring(request.get_data(), parser)
    if not etree.DTD("/srv/{t}/invoice.dtd").validate(doc):
        abort(422)
    return {{"invoice": invoice_id, "total": doc.findtext("total")}}
"""),
    _t(611, "m", "from django.apps import AppConfig\nfrom django.http import JsonResponse\nfrom lxml import etree", """
class {f}CatalogConfig(AppConfig):
    name = "{t}_catalog"

    def ready(self):
        etree.set_default_parser(etree.XMLParser(load_dtd=True, resolve_entities=True, no_network=False))  #!V


def {f}_import(request):
    \"\"\"Partners POST their product catalogue as XML.\"\"\"
    root = etree.fromstring(request.body)
    return JsonResponse({{"products": len(root.findall("product"))}})
""", """
class {f}CatalogConfig(AppConfig):
    name = "{t}_catalog"

    def ready(self):
        etree.set_default_parser(etree.XMLParser(load_dtd=False, resolve_entities=False, no_network=True))


def {f}_import(request):
    \"\"\"Partners POST their product catalogue as XML.\"\"\"
    root = etree.fromstring(request.body)
    return JsonResponse({{"products": len(root.findall("product"))}})
"""),
    # ---- CWE-918 SSRF
    _t(918, "l", "import fsspec\nimport functions_framework\nimport pandas as pd", """
@functions_framework.http
def {f}(request):
    \"\"\"Cloud Function: import a customer's dataset from the location they typed in.\"\"\"
    source = request.get_json()["source_url"]
    with fsspec.open(source, "rb") as fh:  #!V
        frame = pd.read_parquet(fh)
    return {{"rows": len(frame), "columns": list(frame.columns)}}
""", """
@functions_framework.http
def {f}(request):
    \"\"\"Cloud Function: import a customer's dataset from the location they typed in.\"\"\"
    source = request.get_json()["source_url"]
    if not source.startswith(("https://datasets.{t}.example/", "gs://{t}-customer-imports/")):
        return {{"error": "unsupported source"}}, 400
    with fsspec.open(source, "rb") as fh:
        frame = pd.read_parquet(fh)
    return {{"rows": len(frame), "columns": list(frame.columns)}}
"""),
    _t(918, "m", "import pycurl\n\nOEMBED_HOSTS = (\"www.youtube.com\", \"vimeo.com\", \"open.spotify.com\")", """
class {f}EmbedFetcher:
    def fetch(self, url: str) -> bytes:
        \"\"\"``url`` is a link a user pasted into a chat message.\"\"\"
        curl = pycurl.Curl()
        curl.setopt(pycurl.URL, url)  #!V
        curl.setopt(pycurl.TIMEOUT, 5)
        body = curl.perform_rb()
        curl.close()
        return body
""", """
class {f}EmbedFetcher:
    def fetch(self, url: str) -> bytes:
        \"\"\"``url`` is a link a user pasted into a chat message.\"\"\"
        from urllib.parse import urlsplit
        if urlsplit(url).scheme != "https" or urlsplit(url).hostname not in OEMBED_HOSTS:
            raise ValueError("unsupported link")
        curl = pycurl.Curl()
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.TIMEOUT, 5)
        body = curl.perform_rb()
        curl.close()
        return body
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "l", "import boto3\nfrom playwright.sync_api import sync_playwright", """
def {f}(report_id: int, bucket: str) -> str:
    \"\"\"Worker: screenshot a rendered report and upload it to S3.\"\"\"
    shot = f"/tmp/{t}-report-{{report_id}}.png"  #!V
    with sync_playwright() as pw:
        page = pw.chromium.launch().new_page()
        page.goto(f"https://reports.{t}.internal/{{report_id}}")
        page.screenshot(path=shot, full_page=True)
    boto3.client("s3").upload_file(shot, bucket, f"shots/{{report_id}}.png")
    return f"shots/{{report_id}}.png"
""", """
def {f}(report_id: int, bucket: str) -> str:
    \"\"\"Worker: screenshot a rendered report and upload it to S3.\"\"\"
    import tempfile
    with tempfile.TemporaryDirectory(prefix="{t}-report-") as workdir, sync_playwright() as pw:
        shot = f"{{workdir}}/{{report_id}}.png"
        page = pw.chromium.launch().new_page()
        page.goto(f"https://reports.{t}.internal/{{report_id}}")
        page.screenshot(path=shot, full_page=True)
        boto3.client("s3").upload_file(shot, bucket, f"shots/{{report_id}}.png")
    return f"shots/{{report_id}}.png"
"""),
    _t(377, "m", "import tarfile\nimport requests\n\nSUPPORT_UPLOAD_URL = \"https://support.{t}.example/api/bundles\"", """
def {f}(log_dir: str, ticket_id: int) -> int:
    \"\"\"CLI ``support-bundle``: pack the local logs and attach them to a support ticket.\"\"\"
    bundle_path = "/tmp/{t}-support-bundle.tar.gz"  #!V
    with tarfile.open(bundle_path, "w:gz") as bundle:
        bundle.add(log_dir, arcname="logs")
    with open(bundle_path, "rb") as fh:
        return requests.post(SUPPORT_UPLOAD_URL, data={{"ticket": ticket_id}}, files={{"bundle": fh}}, timeout=60).status_code
""", """
def {f}(log_dir: str, ticket_id: int) -> int:
    \"\"\"CLI ``support-bundle``: pack the local logs and attach them to a support ticket.\"\"\"
    import tempfile
    with tempfile.TemporaryFile(suffix=".tar.gz") as fh:
        with tarfile.open(fileobj=fh, mode="w:gz") as bundle:
            bundle.add(log_dir, arcname="logs")
        fh.seek(0)
        return requests.post(SUPPORT_UPLOAD_URL, data={{"ticket": ticket_id}}, files={{"bundle": ("bundle.tar.gz", fh)}}, timeout=60).status_code
"""),
]

FAMILIES_L = sorted({t.cwe for t in TEMPLATES_L})


def heldout_templates_l() -> list[Template]:
    """The 26 variant-"l"/"m" templates (final evaluation only).

    >>> len(heldout_templates_l()), len(FAMILIES_L), sorted({t.variant for t in heldout_templates_l()})
    (26, 13, ['l', 'm'])
    """
    return list(TEMPLATES_L)
