'''Blind template variants "j" and "k": two fresh TEST variants, for evaluation only.

Status: the second blind test of the round-2 system, evaluated once (2026-12-01 08:20 UTC);
validation data since (benchmarks/codeprm_select.py embeds it in the VAL hosts), never training data.

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns and code shapes that
differ from every earlier variant (a/b/c/d/v/e/f/g/h/i). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ mentions it (tests/test_codeprm_heldout_blind.py asserts both).

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("j", "k")

TEMPLATES_J: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "j", "from fabric import Connection\nfrom slack_bolt import App\n\nbolt = App()", """
@bolt.command("/restart")
def {f}(ack, command, respond):
    \"\"\"ChatOps: any workspace member can ask for a service restart.\"\"\"
    ack()
    {v} = command["text"].strip()
    with Connection("ops@app1.{t}.internal") as conn:
        result = conn.sudo(f"systemctl restart {{{v}}}", hide=True)  #!V
    respond(f"{{{v}}}: exit {{result.exited}}")
""", """
@bolt.command("/restart")
def {f}(ack, command, respond):
    \"\"\"ChatOps: any workspace member can ask for a service restart.\"\"\"
    import shlex
    ack()
    {v} = command["text"].strip()
    with Connection("ops@app1.{t}.internal") as conn:
        result = conn.sudo("systemctl restart -- " + shlex.quote({v}), hide=True)
    respond(f"{{{v}}}: exit {{result.exited}}")
"""),
    _t(78, "k", "import asyncio\nimport subprocess\nfrom fastapi import FastAPI\n\nocr_api = FastAPI()", """
@ocr_api.get("/scans/{{scan_id}}/text")
async def {f}(scan_id: int, lang: str = "eng"):
    cmd = " ".join(["tesseract", f"/srv/{t}/scans/{{scan_id}}.png", "stdout", "-l", lang])
    done = await asyncio.to_thread(subprocess.run, cmd, shell=True, capture_output=True, text=True)  #!V
    return {{"scan": scan_id, "text": done.stdout}}
""", """
@ocr_api.get("/scans/{{scan_id}}/text")
async def {f}(scan_id: int, lang: str = "eng"):
    cmd = ["tesseract", f"/srv/{t}/scans/{{scan_id}}.png", "stdout", "-l", lang]
    done = await asyncio.to_thread(subprocess.run, cmd, capture_output=True, text=True)
    return {{"scan": scan_id, "text": done.stdout}}
"""),
    # ---- CWE-89 SQL injection
    _t(89, "j", "import duckdb\nfrom fastapi import FastAPI, Query\n\nstats_api = FastAPI()", """
@stats_api.get("/{t}/totals")
def {f}(ids: list[str] = Query(...)):
    con = duckdb.connect("/srv/{t}/warehouse.duckdb", read_only=True)
    in_list = ", ".join(f"'{{i}}'" for i in ids)
    rows = con.execute(f"SELECT id, sum(amount) FROM {t} WHERE id IN ({{in_list}}) GROUP BY id").fetchall()  #!V
    return dict(rows)
""", """
@stats_api.get("/{t}/totals")
def {f}(ids: list[str] = Query(...)):
    con = duckdb.connect("/srv/{t}/warehouse.duckdb", read_only=True)
    in_list = ", ".join("?" for _ in ids)
    rows = con.execute(f"SELECT id, sum(amount) FROM {t} WHERE id IN ({{in_list}}) GROUP BY id", list(ids)).fetchall()
    return dict(rows)
"""),
    _t(89, "k", "from flask import Flask, jsonify, request\nfrom sqlalchemy import text\nfrom .models import Product\n\nshop = Flask(__name__)", """
@shop.get("/products")
def {f}():
    sort = request.args.get("sort", "name")
    products = Product.query.order_by(text(sort)).limit(50).all()  #!V
    return jsonify([p.to_dict() for p in products])
""", """
@shop.get("/products")
def {f}():
    sort = request.args.get("sort", "name")
    column = {{"name": Product.name, "price": Product.price, "newest": Product.created_at.desc()}}.get(sort, Product.name)
    products = Product.query.order_by(column).limit(50).all()
    return jsonify([p.to_dict() for p in products])
"""),
    # ---- CWE-94 code injection
    _t(94, "j", "USER_PREFERENCES = (\"theme\", \"language\", \"timezone\", \"digest_frequency\")", """
def {f}(prefs, form: dict) -> None:
    \"\"\"Store the preferences a user submitted on the account settings page.\"\"\"
    for field, {v} in form.items():
        exec(f"prefs.{{field}} = '{{{v}}}'")  #!V
""", """
def {f}(prefs, form: dict) -> None:
    \"\"\"Store the preferences a user submitted on the account settings page.\"\"\"
    for field, {v} in form.items():
        if field in USER_PREFERENCES:
            setattr(prefs, field, str({v}))
"""),
    _t(94, "k", "import tornado.template\nimport tornado.web", """
class {f}CardHandler(tornado.web.RequestHandler):
    def post(self):
        \"\"\"Preview a greeting card whose text the visitor typed in.\"\"\"
        {v} = self.get_body_argument("greeting")
        page = tornado.template.Template({v}).generate(user=self.current_user)  #!V
        self.finish(page)
""", """
class {f}CardHandler(tornado.web.RequestHandler):
    def post(self):
        \"\"\"Preview a greeting card whose text the visitor typed in.\"\"\"
        {v} = self.get_body_argument("greeting")
        page = tornado.template.Template("<p>{{{{ greeting }}}}</p>").generate(greeting={v}, user=self.current_user)
        self.finish(page)
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "j", "import uuid\nimport keras\nfrom fastapi import FastAPI, UploadFile\n\nml_api = FastAPI()", """
@ml_api.post("/models")
async def {f}(upload: UploadFile):
    staged = f"/srv/{t}/incoming/{{uuid.uuid4().hex}}.keras"
    with open(staged, "wb") as out:
        out.write(await upload.read())
    model = keras.models.load_model(staged, safe_mode=False)  #!V
    return {{"layers": len(model.layers), "params": model.count_params()}}
""", """
@ml_api.post("/models")
async def {f}(upload: UploadFile):
    staged = f"/srv/{t}/incoming/{{uuid.uuid4().hex}}.keras"
    with open(staged, "wb") as out:
        out.write(await upload.read())
    model = keras.models.load_model(staged, safe_mode=True)
    return {{"layers": len(model.layers), "params": model.count_params()}}
"""),
    _t(502, "k", "from ruamel.yaml import YAML", """
def {f}(repo, ref: str) -> list:
    \"\"\"Webhook worker: read the pipeline file of a pushed commit (any contributor can edit it).\"\"\"
    {v} = repo.get_contents(".{t}-ci.yml", ref=ref).decoded_content
    pipeline = YAML(typ="unsafe", pure=True).load({v})  #!V
    return [step["name"] for step in pipeline.get("steps", [])]
""", """
def {f}(repo, ref: str) -> list:
    \"\"\"Webhook worker: read the pipeline file of a pushed commit (any contributor can edit it).\"\"\"
    {v} = repo.get_contents(".{t}-ci.yml", ref=ref).decoded_content
    pipeline = YAML(typ="safe", pure=True).load({v})
    return [step["name"] for step in pipeline.get("steps", [])]
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "j", "import hashlib", """
def {f}(firmware_path: str, expected: str) -> bool:
    \"\"\"Check an uploaded firmware image against the vendor's published checksum before flashing.\"\"\"
    with open(firmware_path, "rb") as fh:
        digest = hashlib.file_digest(fh, "md5").hexdigest()  #!V
    return digest == expected.strip().lower()
""", """
def {f}(firmware_path: str, expected: str) -> bool:
    \"\"\"Check an uploaded firmware image against the vendor's published checksum before flashing.\"\"\"
    with open(firmware_path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    return digest == expected.strip().lower()
"""),
    _t(328, "k", "import json\nfrom cryptography.hazmat.primitives import hashes", """
class {f}AuditLog:
    def __init__(self, store):
        self.store = store

    def append(self, event: dict) -> str:
        \"\"\"Append an event to the tamper-evident, hash-chained audit trail.\"\"\"
        record = json.dumps(event, sort_keys=True)
        chain = hashes.Hash(hashes.MD5())  #!V
        chain.update(((self.store.last_hash() or "") + record).encode())
        entry_hash = chain.finalize().hex()
        self.store.write(record, entry_hash)
        return entry_hash
""", """
class {f}AuditLog:
    def __init__(self, store):
        self.store = store

    def append(self, event: dict) -> str:
        \"\"\"Append an event to the tamper-evident, hash-chained audit trail.\"\"\"
        record = json.dumps(event, sort_keys=True)
        chain = hashes.Hash(hashes.SHA256())
        chain.update(((self.store.last_hash() or "") + record).encode())
        entry_hash = chain.finalize().hex()
        self.store.write(record, entry_hash)
        return entry_hash
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "j", "import ssl\nimport aiohttp", """
class {f}InventoryClient:
    def __init__(self, base_url: str):
        self.base_url = base_url

    async def stock_level(self, sku: str) -> int:
        connector = aiohttp.TCPConnector(ssl=False)  #!V
        async with aiohttp.ClientSession(connector=connector) as client:
            async with client.get(f"{{self.base_url}}/stock/{{sku}}") as resp:
                return (await resp.json())["available"]
""", """
class {f}InventoryClient:
    def __init__(self, base_url: str):
        self.base_url = base_url

    async def stock_level(self, sku: str) -> int:
        connector = aiohttp.TCPConnector(ssl=ssl.create_default_context())
        async with aiohttp.ClientSession(connector=connector) as client:
            async with client.get(f"{{self.base_url}}/stock/{{sku}}") as resp:
                return (await resp.json())["available"]
"""),
    _t(327, "k", "from Crypto.Cipher import AES, DES3\nfrom Crypto.Random import get_random_bytes\nfrom Crypto.Util.Padding import pad", """
def {f}(backup_key: bytes, {v}: bytes) -> bytes:
    \"\"\"Encrypt a nightly database dump before it is copied off-site.\"\"\"
    iv = get_random_bytes(8)
    cipher = DES3.new(backup_key, DES3.MODE_CBC, iv)  #!V
    return iv + cipher.encrypt(pad({v}, DES3.block_size))
""", """
def {f}(backup_key: bytes, {v}: bytes) -> bytes:
    \"\"\"Encrypt a nightly database dump before it is copied off-site.\"\"\"
    nonce = get_random_bytes(16)
    cipher = AES.new(backup_key, AES.MODE_EAX, nonce=nonce)
    sealed, tag = cipher.encrypt_and_digest({v})
    return nonce + tag + sealed
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "j", "import boto3\nimport numpy as np\n\nkeys_table = boto3.resource(\"dynamodb\").Table(\"{t}-api-keys\")", """
def {f}(event, context):
    \"\"\"Cloud function: issue the API key of a newly registered integration.\"\"\"
    rng = np.random.default_rng()  #!V
    api_key = "{t}_" + rng.bytes(24).hex()  #!V
    keys_table.put_item(Item={{"integration": event["integration_id"], "api_key": api_key}})
    return {{"statusCode": 201, "api_key": api_key}}
""", """
def {f}(event, context):
    \"\"\"Cloud function: issue the API key of a newly registered integration.\"\"\"
    import secrets
    api_key = "{t}_" + secrets.token_hex(24)
    keys_table.put_item(Item={{"integration": event["integration_id"], "api_key": api_key}})
    return {{"statusCode": 201, "api_key": api_key}}
"""),
    _t(338, "k", "import random\nimport string", """
class {f}InviteService:
    _rng = random.Random()  #!V
    alphabet = string.ascii_letters + string.digits

    def new_invite_code(self, team) -> str:
        code = "".join(self._rng.choices(self.alphabet, k=20))
        team.pending_invites.add(code)
        return code
""", """
class {f}InviteService:
    _rng = random.SystemRandom()
    alphabet = string.ascii_letters + string.digits

    def new_invite_code(self, team) -> str:
        code = "".join(self._rng.choices(self.alphabet, k=20))
        team.pending_invites.add(code)
        return code
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "j", "import os\nimport pika", """
def {f}(on_message):
    \"\"\"Start the {t} queue consumer.\"\"\"
    credentials = pika.PlainCredentials("{t}-worker", "Rq7!mZ2x-{t}-prod")  #!V
    params = pika.ConnectionParameters(host="mq.internal", credentials=credentials, heartbeat=30)
    channel = pika.BlockingConnection(params).channel()
    channel.basic_consume(queue="{t}", on_message_callback=on_message)
    channel.start_consuming()
""", """
def {f}(on_message):
    \"\"\"Start the {t} queue consumer.\"\"\"
    credentials = pika.PlainCredentials("{t}-worker", os.environ["RABBITMQ_PASSWORD"])
    params = pika.ConnectionParameters(host="mq.internal", credentials=credentials, heartbeat=30)
    channel = pika.BlockingConnection(params).channel()
    channel.basic_consume(queue="{t}", on_message_callback=on_message)
    channel.start_consuming()
"""),
    _t(798, "k", "import os\nimport requests", """
GITHUB_HEADERS = {{"Accept": "application/vnd.github+json", "Authorization": "Bearer ghp_R4nD0m{t}T0k3nXq9LmZ2pW7vB1cN8"}}  #!V


def {f}(repo: str) -> list:
    resp = requests.get(f"https://api.github.com/repos/{{repo}}/pulls", headers=GITHUB_HEADERS, timeout=10)
    resp.raise_for_status()
    return [pr["number"] for pr in resp.json()]
""", """
GITHUB_HEADERS = {{"Accept": "application/vnd.github+json", "Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]}}


def {f}(repo: str) -> list:
    resp = requests.get(f"https://api.github.com/repos/{{repo}}/pulls", headers=GITHUB_HEADERS, timeout=10)
    resp.raise_for_status()
    return [pr["number"] for pr in resp.json()]
"""),
    # ---- CWE-22 path traversal
    _t(22, "j", "import os", """
def {f}(s3, bucket: str, prefix: str, dest_dir: str) -> int:
    \"\"\"Mirror a customer-writable S3 prefix to the local render farm.\"\"\"
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            local = os.path.join(dest_dir, obj["Key"])
            os.makedirs(os.path.dirname(local), exist_ok=True)
            s3.download_file(bucket, obj["Key"], local)  #!V
            count += 1
    return count
""", """
def {f}(s3, bucket: str, prefix: str, dest_dir: str) -> int:
    \"\"\"Mirror a customer-writable S3 prefix to the local render farm.\"\"\"
    count = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            local = os.path.realpath(os.path.join(dest_dir, obj["Key"]))
            if not local.startswith(os.path.realpath(dest_dir) + os.sep):
                continue
            os.makedirs(os.path.dirname(local), exist_ok=True)
            s3.download_file(bucket, obj["Key"], local)
            count += 1
    return count
"""),
    _t(22, "k", "import json\nimport os\nfrom starlette.middleware.base import BaseHTTPMiddleware\n\nLOCALE_DIR = \"/srv/{t}/locales\"\nSUPPORTED_LANGS = (\"en\", \"de\", \"fr\", \"es\", \"ja\")", """
class {f}LocaleMiddleware(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        lang = request.cookies.get("lang", "en")
        with open(os.path.join(LOCALE_DIR, lang + ".json"), encoding="utf-8") as fh:  #!V
            request.state.messages = json.load(fh)
        return await call_next(request)
""", """
class {f}LocaleMiddleware(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        lang = request.cookies.get("lang", "en")
        if lang not in SUPPORTED_LANGS:
            lang = "en"
        with open(os.path.join(LOCALE_DIR, lang + ".json"), encoding="utf-8") as fh:
            request.state.messages = json.load(fh)
        return await call_next(request)
"""),
    # ---- CWE-79 XSS
    _t(79, "j", "from jinja2 import Environment, PackageLoader, select_autoescape", """
class {f}CommentRenderer:
    env = Environment(loader=PackageLoader("{t}"), autoescape=select_autoescape())

    def render_thread(self, comments) -> str:
        \"\"\"Comment bodies are written by site visitors.\"\"\"
        tmpl = self.env.from_string("<ul>{{% for c in comments %}}<li>{{{{ c.body|safe }}}}</li>{{% endfor %}}</ul>")  #!V
        return tmpl.render(comments=comments)
""", """
class {f}CommentRenderer:
    env = Environment(loader=PackageLoader("{t}"), autoescape=select_autoescape())

    def render_thread(self, comments) -> str:
        \"\"\"Comment bodies are written by site visitors.\"\"\"
        tmpl = self.env.from_string("<ul>{{% for c in comments %}}<li>{{{{ c.body }}}}</li>{{% endfor %}}</ul>")
        return tmpl.render(comments=comments)
"""),
    _t(79, "k", "from django import template\nfrom django.utils.html import format_html\n\nregister = template.Library()", """
@register.simple_tag
def {f}(user):
    \"\"\"Navbar badge showing the member's self-chosen display name.\"\"\"
    return format_html("<span class='badge'>" + user.display_name + "</span>")  #!V
""", """
@register.simple_tag
def {f}(user):
    \"\"\"Navbar badge showing the member's self-chosen display name.\"\"\"
    return format_html("<span class='badge'>{{}}</span>", user.display_name)
"""),
    # ---- CWE-611 XXE
    _t(611, "j", "from aiohttp import web\nfrom lxml import etree", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Stream-parse an Atom feed uploaded by a publisher.\"\"\"
    feed = etree.XMLPullParser(events=("end",), tag="entry", load_dtd=True, resolve_entities=True)  #!V
    titles = []
    async for chunk in request.content.iter_chunked(65536):
        feed.feed(chunk)
        titles.extend(el.findtext("title") for _, el in feed.read_events())
    return web.json_response({{"entries": len(titles), "titles": titles[:20]}})
""", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Stream-parse an Atom feed uploaded by a publisher.\"\"\"
    feed = etree.XMLPullParser(events=("end",), tag="entry", load_dtd=False, resolve_entities=False, no_network=True)
    titles = []
    async for chunk in request.content.iter_chunked(65536):
        feed.feed(chunk)
        titles.extend(el.findtext("title") for _, el in feed.read_events())
    return web.json_response({{"entries": len(titles), "titles": titles[:20]}})
"""),
    _t(611, "k", "import cairosvg\nfrom flask import Blueprint, request\nfrom flask_login import current_user\n\nprofile_bp = Blueprint(\"profile\", __name__)", """
@profile_bp.post("/avatar")
def {f}():
    {v} = request.files["avatar"].read()
    png = cairosvg.svg2png(bytestring={v}, output_width=256, output_height=256, unsafe=True)  #!V
    current_user.avatar_png = png
    return "", 204
""", """
@profile_bp.post("/avatar")
def {f}():
    {v} = request.files["avatar"].read()
    png = cairosvg.svg2png(bytestring={v}, output_width=256, output_height=256, unsafe=False)
    current_user.avatar_png = png
    return "", 204
"""),
    # ---- CWE-918 SSRF
    _t(918, "j", "import feedparser\nfrom flask import Flask, abort, jsonify, request\n\nreader = Flask(__name__)", """
@reader.post("/feeds")
def {f}():
    feed_url = request.get_json()["url"]
    parsed = feedparser.parse(feed_url)  #!V
    if parsed.bozo and not parsed.entries:
        abort(422)
    return jsonify(title=parsed.feed.get("title"), items=len(parsed.entries))
""", """
@reader.post("/feeds")
def {f}():
    import ipaddress, socket
    from urllib.parse import urlsplit
    feed_url = request.get_json()["url"]
    parts = urlsplit(feed_url)
    if parts.scheme not in ("http", "https") or not all(ipaddress.ip_address(a[4][0]).is_global for a in socket.getaddrinfo(parts.hostname or "", None)):
        abort(400)
    parsed = feedparser.parse(feed_url)
    if parsed.bozo and not parsed.entries:
        abort(422)
    return jsonify(title=parsed.feed.get("title"), items=len(parsed.entries))
"""),
    _t(918, "k", "from django.core.exceptions import PermissionDenied\nfrom django.http import HttpResponse\nfrom weasyprint import HTML", """
def {f}(request):
    \"\"\"Export the dashboard page the user is looking at as a PDF.\"\"\"
    {v} = request.GET["page_url"]
    pdf = HTML(url={v}).write_pdf()  #!V
    return HttpResponse(pdf, content_type="application/pdf")
""", """
def {f}(request):
    \"\"\"Export the dashboard page the user is looking at as a PDF.\"\"\"
    from urllib.parse import urlsplit
    {v} = request.GET["page_url"]
    if urlsplit({v}).scheme != "https" or urlsplit({v}).hostname != "dashboard.{t}.example":
        raise PermissionDenied("only dashboard pages can be exported")
    pdf = HTML(url={v}).write_pdf()
    return HttpResponse(pdf, content_type="application/pdf")
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "j", "import os\nimport tempfile", """
def {f}(pdf_bytes: bytes, invoice_no: int) -> str:
    spool_dir = os.environ.get("TMPDIR", "/tmp")
    path = os.path.join(spool_dir, "{t}-invoice-%d.pdf" % invoice_no)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  #!V
    with os.fdopen(fd, "wb") as out:
        out.write(pdf_bytes)
    return path
""", """
def {f}(pdf_bytes: bytes, invoice_no: int) -> str:
    fd, path = tempfile.mkstemp(prefix="{t}-invoice-%d-" % invoice_no, suffix=".pdf")
    with os.fdopen(fd, "wb") as out:
        out.write(pdf_bytes)
    return path
"""),
    _t(377, "k", "import os\nimport shutil\nimport tempfile\nimport boto3\nfrom celery import Celery\n\ncelery_app = Celery(\"{t}\")", """
@celery_app.task
def {f}(site_id: int, s3_bucket: str) -> str:
    \"\"\"Nightly backup of a customer site's media folder.\"\"\"
    archive = shutil.make_archive(f"/tmp/{t}-site-{{site_id}}", "gztar", root_dir=f"/srv/{t}/media/{{site_id}}")  #!V
    object_key = f"backups/{t}/{{site_id}}.tar.gz"
    boto3.client("s3").upload_file(archive, s3_bucket, object_key)
    return object_key
""", """
@celery_app.task
def {f}(site_id: int, s3_bucket: str) -> str:
    \"\"\"Nightly backup of a customer site's media folder.\"\"\"
    archive = shutil.make_archive(os.path.join(tempfile.mkdtemp(prefix="{t}-backup-"), f"site-{{site_id}}"), "gztar", root_dir=f"/srv/{t}/media/{{site_id}}")
    object_key = f"backups/{t}/{{site_id}}.tar.gz"
    boto3.client("s3").upload_file(archive, s3_bucket, object_key)
    return object_key
"""),
]

FAMILIES_J = sorted({t.cwe for t in TEMPLATES_J})


def heldout_templates_j() -> list[Template]:
    """The 26 variant-"j"/"k" templates (final evaluation only).

    >>> len(heldout_templates_j()), len(FAMILIES_J), sorted({t.variant for t in heldout_templates_j()})
    (26, 13, ['j', 'k'])
    """
    return list(TEMPLATES_J)
