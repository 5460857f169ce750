'''Blind template variants "f" and "g": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-1 system, evaluated once (2026-12-01 07:38 UTC); validation
data since (benchmarks/codeprm_select.py embeds it in the VAL hosts), never training data.

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, models, data builders or benchmark results), and before any model was run
on them. Each of the 13 CWE families gets two vulnerable/fixed pairs, one per variant, in
idioms and code shapes that differ from every earlier variant (a/b/c/d/v/e). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no script in
scripts/ mentions it (tests/test_codeprm_heldout_blind.py asserts both).

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("f", "g")

TEMPLATES_F: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "f", "import paramiko", """
def {f}(ssh: paramiko.SSHClient, {v}: str):
    \"\"\"Disk usage of a customer-supplied directory on the storage host.\"\"\"
    _stdin, stdout, _stderr = ssh.exec_command(f"du -sh /srv/{t}/{{{v}}}")  #!V
    return stdout.read().decode().strip()
""", """
def {f}(ssh: paramiko.SSHClient, {v}: str):
    \"\"\"Disk usage of a customer-supplied directory on the storage host.\"\"\"
    import shlex
    _stdin, stdout, _stderr = ssh.exec_command("du -sh -- " + shlex.quote(f"/srv/{t}/{{{v}}}"))
    return stdout.read().decode().strip()
"""),
    _t(78, "g", "import subprocess\nfrom celery import shared_task", """
@shared_task
def {f}(message: dict):
    src, fmt = message["source_path"], message["format"]
    cmd = "ffmpeg -y -i '%s' /srv/{t}/out.%s" % (src, fmt)
    done = subprocess.run(cmd, shell=True, capture_output=True)  #!V
    return done.returncode
""", """
@shared_task
def {f}(message: dict):
    src, fmt = message["source_path"], message["format"]
    cmd = ["ffmpeg", "-y", "-i", src, "/srv/{t}/out.%s" % fmt]
    done = subprocess.run(cmd, capture_output=True)
    return done.returncode
"""),
    # ---- CWE-89 SQL injection
    _t(89, "f", "import asyncpg\nfrom fastapi import FastAPI\n\nservice = FastAPI()", """
@service.get("/{t}/search")
async def {f}(tenant: str, {v}: str):
    pool: asyncpg.Pool = service.state.pool
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT id, title FROM {t} WHERE tenant = $1 AND title ILIKE '%" + {v} + "%'", tenant)  #!V
    return [dict(r) for r in rows]
""", """
@service.get("/{t}/search")
async def {f}(tenant: str, {v}: str):
    pool: asyncpg.Pool = service.state.pool
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT id, title FROM {t} WHERE tenant = $1 AND title ILIKE $2", tenant, f"%{{{v}}}%")
    return [dict(r) for r in rows]
"""),
    _t(89, "g", "import sys\nimport pandas as pd\nimport sqlalchemy", """
def {f}(engine: sqlalchemy.engine.Engine, argv=None):
    region, since = (argv or sys.argv)[1:3]
    frame = pd.read_sql("SELECT day, revenue FROM {t} WHERE region = '{{}}' AND day >= '{{}}'".format(region, since), engine)  #!V
    frame.to_csv(sys.stdout, index=False)
    return len(frame)
""", """
def {f}(engine: sqlalchemy.engine.Engine, argv=None):
    region, since = (argv or sys.argv)[1:3]
    frame = pd.read_sql(sqlalchemy.text("SELECT day, revenue FROM {t} WHERE region = :region AND day >= :since"), engine, params={{"region": region, "since": since}})
    frame.to_csv(sys.stdout, index=False)
    return len(frame)
"""),
    # ---- CWE-94 code injection
    _t(94, "f", "from flask import Flask, request\nfrom jinja2 import Template\n\nsite = Flask(__name__)", """
@site.post("/preview")
def {f}():
    {v} = request.form["body_template"]
    html_out = Template({v}).render(user=request.form.get("user", "friend"))  #!V
    return {{"preview": html_out}}
""", """
@site.post("/preview")
def {f}():
    from jinja2.sandbox import SandboxedEnvironment
    {v} = request.form["body_template"]
    html_out = SandboxedEnvironment(autoescape=True).from_string({v}).render(user=request.form.get("user", "friend"))
    return {{"preview": html_out}}
"""),
    _t(94, "g", "import os\nimport runpy\nfrom flask import Blueprint, jsonify, request\nfrom werkzeug.utils import secure_filename\n\njobs = Blueprint(\"jobs\", __name__)\nSPOOL_DIR = \"/srv/{t}/job-configs\"", """
@jobs.post("/jobs/settings")
def {f}():
    upload = request.files["settings"]
    saved = os.path.join(SPOOL_DIR, secure_filename(upload.filename))
    upload.save(saved)
    settings = runpy.run_path(saved)  #!V
    return jsonify({{k: str(settings[k]) for k in settings if k.isupper()}})
""", """
@jobs.post("/jobs/settings")
def {f}():
    import tomllib
    upload = request.files["settings"]
    saved = os.path.join(SPOOL_DIR, secure_filename(upload.filename))
    upload.save(saved)
    with open(saved, "rb") as fh:
        settings = tomllib.load(fh)
    return jsonify({{k: str(settings[k]) for k in settings if k.isupper()}})
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "f", "import io\nimport torch\nfrom fastapi import FastAPI, UploadFile\n\nmodels_api = FastAPI()", """
@models_api.post("/checkpoints")
async def {f}(upload: UploadFile):
    {v} = await upload.read()
    state = torch.load(io.BytesIO({v}), map_location="cpu", weights_only=False)  #!V
    return {{"tensors": len(state), "name": upload.filename}}
""", """
@models_api.post("/checkpoints")
async def {f}(upload: UploadFile):
    {v} = await upload.read()
    state = torch.load(io.BytesIO({v}), map_location="cpu", weights_only=True)
    return {{"tensors": len(state), "name": upload.filename}}
"""),
    _t(502, "g", "import json\nimport jsonpickle", """
class {f}Worker:
    def __init__(self, sqs_queue):
        self.sqs_queue = sqs_queue

    def poll_once(self):
        for msg in self.sqs_queue.receive_messages(MaxNumberOfMessages=10):
            job = jsonpickle.decode(msg.body)  #!V
            self.handle(job)
            msg.delete()
""", """
class {f}Worker:
    def __init__(self, sqs_queue):
        self.sqs_queue = sqs_queue

    def poll_once(self):
        for msg in self.sqs_queue.receive_messages(MaxNumberOfMessages=10):
            job = json.loads(msg.body)
            self.handle(job)
            msg.delete()
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "f", "from Crypto.Hash import SHA1\nfrom Crypto.PublicKey import RSA\nfrom Crypto.Signature import pkcs1_15", """
def {f}(private_pem: bytes, {v}: bytes) -> bytes:
    \"\"\"Sign a release manifest before it is published.\"\"\"
    signer = pkcs1_15.new(RSA.import_key(private_pem))
    digest = SHA1.new({v})  #!V
    return signer.sign(digest)
""", """
def {f}(private_pem: bytes, {v}: bytes) -> bytes:
    \"\"\"Sign a release manifest before it is published.\"\"\"
    from Crypto.Hash import SHA256
    signer = pkcs1_15.new(RSA.import_key(private_pem))
    digest = SHA256.new({v})
    return signer.sign(digest)
"""),
    _t(328, "g", "from passlib.context import CryptContext", """
class {f}Accounts:
    pwd_context = CryptContext(schemes=["md5_crypt"], deprecated="auto")  #!V

    def set_password(self, user, raw_password: str) -> None:
        user.password_hash = self.pwd_context.hash(raw_password)

    def check_password(self, user, raw_password: str) -> bool:
        return self.pwd_context.verify(raw_password, user.password_hash)
""", """
class {f}Accounts:
    pwd_context = CryptContext(schemes=["bcrypt"], deprecated="auto")

    def set_password(self, user, raw_password: str) -> None:
        user.password_hash = self.pwd_context.hash(raw_password)

    def check_password(self, user, raw_password: str) -> bool:
        return self.pwd_context.verify(raw_password, user.password_hash)
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "f", "import requests", """
class {f}Client:
    def __init__(self, base_url: str, api_token: str):
        self.base_url = base_url.rstrip("/")
        self.http = requests.Session()
        self.http.verify = False  #!V
        self.http.headers["Authorization"] = "Bearer " + api_token

    def get_{t}(self, ident):
        return self.http.get(f"{{self.base_url}}/{t}/{{ident}}", timeout=10).json()
""", """
class {f}Client:
    def __init__(self, base_url: str, api_token: str):
        self.base_url = base_url.rstrip("/")
        self.http = requests.Session()
        self.http.verify = True
        self.http.headers["Authorization"] = "Bearer " + api_token

    def get_{t}(self, ident):
        return self.http.get(f"{{self.base_url}}/{t}/{{ident}}", timeout=10).json()
"""),
    _t(327, "g", "import os\nfrom Crypto.Cipher import Blowfish\nfrom Crypto.Util.Padding import pad", """
def {f}(master_key: bytes, {v}: str) -> bytes:
    \"\"\"Encrypt a third-party API token before storing it in the database.\"\"\"
    iv = os.urandom(8)
    cipher = Blowfish.new(master_key, Blowfish.MODE_CBC, iv)  #!V
    return iv + cipher.encrypt(pad({v}.encode(), Blowfish.block_size))
""", """
def {f}(master_key: bytes, {v}: str) -> bytes:
    \"\"\"Encrypt a third-party API token before storing it in the database.\"\"\"
    from Crypto.Cipher import AES
    nonce = os.urandom(12)
    cipher = AES.new(master_key, AES.MODE_GCM, nonce=nonce)
    sealed, tag = cipher.encrypt_and_digest({v}.encode())
    return nonce + sealed + tag
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "f", "import random\nimport string\nfrom django.db import models", """
def {f}():
    return "".join(random.sample(string.ascii_uppercase + string.digits, 10))  #!V


class {f}Invite(models.Model):
    code = models.CharField(max_length=10, unique=True, default={f})
    email = models.EmailField()
""", """
def {f}():
    import secrets
    return "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(10))


class {f}Invite(models.Model):
    code = models.CharField(max_length=10, unique=True, default={f})
    email = models.EmailField()
"""),
    _t(338, "g", "import base64\nimport random", """
class {f}SessionStore:
    def __init__(self, backend):
        self.backend = backend

    def create(self, user_id: int) -> str:
        sid = base64.urlsafe_b64encode(random.randbytes(24)).decode()  #!V
        self.backend.set("sess:" + sid, user_id, ex=3600)
        return sid
""", """
class {f}SessionStore:
    def __init__(self, backend):
        self.backend = backend

    def create(self, user_id: int) -> str:
        import secrets
        sid = base64.urlsafe_b64encode(secrets.token_bytes(24)).decode()
        self.backend.set("sess:" + sid, user_id, ex=3600)
        return sid
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "f", "from flask import Flask", """
def {f}() -> Flask:
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY="9f1c2b7e-{t}-4d8a-b3c6-prod",  #!V
        SESSION_COOKIE_SECURE=True,
    )
    return app
""", """
def {f}() -> Flask:
    import os
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=os.environ["FLASK_SECRET_KEY"],
        SESSION_COOKIE_SECURE=True,
    )
    return app
"""),
    _t(798, "g", "import os\nfrom contextlib import contextmanager\nfrom sqlalchemy import create_engine\nfrom sqlalchemy.orm import sessionmaker", """
{f}_engine = create_engine("postgresql+psycopg2://{t}_svc:Xk29!pq7Lm@db.internal:5432/{t}", pool_pre_ping=True)  #!V
{f}_session = sessionmaker(bind={f}_engine)


@contextmanager
def {f}_unit_of_work():
    with {f}_session() as session, session.begin():
        yield session
""", """
{f}_engine = create_engine(os.environ["DATABASE_URL"], pool_pre_ping=True)
{f}_session = sessionmaker(bind={f}_engine)


@contextmanager
def {f}_unit_of_work():
    with {f}_session() as session, session.begin():
        yield session
"""),
    # ---- CWE-22 path traversal
    _t(22, "f", "import os\nfrom flask import Blueprint, jsonify, request\n\nuploads = Blueprint(\"uploads\", __name__)\nUPLOAD_DIR = \"/srv/{t}/incoming\"", """
@uploads.route("/avatar", methods=["POST"])
def {f}():
    picture = request.files["avatar"]
    destination = os.path.join(UPLOAD_DIR, picture.filename)
    picture.save(destination)  #!V
    return jsonify(saved=os.path.basename(destination)), 201
""", """
@uploads.route("/avatar", methods=["POST"])
def {f}():
    from werkzeug.utils import secure_filename
    picture = request.files["avatar"]
    destination = os.path.join(UPLOAD_DIR, secure_filename(picture.filename))
    picture.save(destination)
    return jsonify(saved=os.path.basename(destination)), 201
"""),
    _t(22, "g", "from pathlib import Path\nfrom fastapi import APIRouter, HTTPException\n\nlogs_router = APIRouter()\nLOG_DIR = Path(\"/var/log/{t}\")", """
@logs_router.get("/logs")
def {f}(service: str, lines: int = 200):
    logfile = LOG_DIR.joinpath(service + ".log")
    if not logfile.exists():
        raise HTTPException(status_code=404)
    return {{"tail": logfile.read_text().splitlines()[-lines:]}}  #!V
""", """
@logs_router.get("/logs")
def {f}(service: str, lines: int = 200):
    logfile = LOG_DIR.joinpath(service + ".log").resolve()
    if logfile.parent != LOG_DIR.resolve() or not logfile.exists():
        raise HTTPException(status_code=404)
    return {{"tail": logfile.read_text().splitlines()[-lines:]}}
"""),
    # ---- CWE-79 XSS
    _t(79, "f", "from django.contrib import admin\nfrom django.utils.safestring import mark_safe\nfrom .models import Profile", """
@admin.register(Profile)
class {f}ProfileAdmin(admin.ModelAdmin):
    list_display = ("username", "summary")

    @admin.display(description="Summary")
    def summary(self, obj):
        return mark_safe(f"<b>{{obj.display_name}}</b> <small>{{obj.bio}}</small>")  #!V
""", """
@admin.register(Profile)
class {f}ProfileAdmin(admin.ModelAdmin):
    list_display = ("username", "summary")

    @admin.display(description="Summary")
    def summary(self, obj):
        from django.utils.html import format_html
        return format_html("<b>{{}}</b> <small>{{}}</small>", obj.display_name, obj.bio)
"""),
    _t(79, "g", "from flask import Flask, make_response, request\n\nportal = Flask(__name__)", """
@portal.errorhandler(404)
def {f}(error):
    page = "<h1>Not found</h1><p>No page at %s</p>" % request.path
    resp = make_response(page, 404)  #!V
    resp.headers["Content-Type"] = "text/html; charset=utf-8"
    return resp
""", """
@portal.errorhandler(404)
def {f}(error):
    from markupsafe import escape
    page = "<h1>Not found</h1><p>No page at %s</p>" % escape(request.path)
    resp = make_response(page, 404)
    resp.headers["Content-Type"] = "text/html; charset=utf-8"
    return resp
"""),
    # ---- CWE-611 XXE
    _t(611, "f", "from lxml import objectify", """
def {f}(feed_stream):
    \"\"\"Parse a partner's product feed (uploaded by the partner).\"\"\"
    parser = objectify.makeparser(load_dtd=True, no_network=False)  #!V
    catalog = objectify.parse(feed_stream, parser).getroot()
    return [(p.sku.text, float(p.price)) for p in catalog.iterchildren(tag="product")]
""", """
def {f}(feed_stream):
    \"\"\"Parse a partner's product feed (uploaded by the partner).\"\"\"
    parser = objectify.makeparser(resolve_entities=False, no_network=True)
    catalog = objectify.parse(feed_stream, parser).getroot()
    return [(p.sku.text, float(p.price)) for p in catalog.iterchildren(tag="product")]
"""),
    _t(611, "g", "import xmltodict\nfrom flask import jsonify, request", """
def {f}():
    \"\"\"Import a supplier's order batch posted as XML.\"\"\"
    batch = xmltodict.parse(request.get_data(), disable_entities=False)  #!V
    orders = batch["orders"]["order"]
    return jsonify(count=len(orders), first=orders[0]["@id"] if orders else None)
""", """
def {f}():
    \"\"\"Import a supplier's order batch posted as XML.\"\"\"
    batch = xmltodict.parse(request.get_data(), disable_entities=True)
    orders = batch["orders"]["order"]
    return jsonify(count=len(orders), first=orders[0]["@id"] if orders else None)
"""),
    # ---- CWE-918 SSRF
    _t(918, "f", "import json\nimport pandas as pd", """
def {f}(event, context):
    \"\"\"Lambda: preview the first rows of a CSV the user links to.\"\"\"
    params = json.loads(event["body"])
    frame = pd.read_csv(params["csv_url"], nrows=20)  #!V
    return {{"statusCode": 200, "body": frame.to_json(orient="records")}}
""", """
def {f}(event, context):
    \"\"\"Lambda: preview the first rows of a CSV the user links to.\"\"\"
    from urllib.parse import urlsplit
    params = json.loads(event["body"])
    source = urlsplit(params["csv_url"])
    if source.scheme != "https" or source.hostname not in ("data.{t}.example", "exports.{t}.example"):
        return {{"statusCode": 400, "body": "unsupported source"}}
    frame = pd.read_csv(source.geturl(), nrows=20)
    return {{"statusCode": 200, "body": frame.to_json(orient="records")}}
"""),
    _t(918, "g", "import http.client\nfrom fastapi import FastAPI, HTTPException\nfrom pydantic import BaseModel\n\nprobe_app = FastAPI()\n\n\nclass Probe(BaseModel):\n    host: str\n    path: str = \"/health\"", """
@probe_app.post("/integrations/probe")
def {f}(probe: Probe):
    conn = http.client.HTTPSConnection(probe.host, timeout=5)  #!V
    conn.request("GET", probe.path)  #!V
    return {{"status": conn.getresponse().status}}
""", """
@probe_app.post("/integrations/probe")
def {f}(probe: Probe):
    if probe.host not in ("billing.{t}.example", "crm.{t}.example"):
        raise HTTPException(status_code=400, detail="unknown integration")
    conn = http.client.HTTPSConnection(probe.host, timeout=5)
    conn.request("GET", probe.path)
    return {{"status": conn.getresponse().status}}
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "f", "import sqlite3\nimport tempfile\nfrom pathlib import Path", """
class {f}Cache:
    db_path = Path("/tmp") / "{t}-cache.sqlite3"  #!V

    def __init__(self):
        self.conn = sqlite3.connect(self.db_path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB)")
""", """
class {f}Cache:
    db_path = Path(tempfile.mkdtemp(prefix="{t}-cache-")) / "cache.sqlite3"

    def __init__(self):
        self.conn = sqlite3.connect(self.db_path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB)")
"""),
    _t(377, "g", "import os\nimport subprocess", """
def {f}(job_id: int, repo_url: str) -> str:
    workdir = "/tmp/build-%d" % job_id
    os.makedirs(workdir, exist_ok=True)  #!V
    subprocess.run(["git", "clone", "--depth", "1", "--", repo_url, workdir], check=True)
    return workdir
""", """
def {f}(job_id: int, repo_url: str) -> str:
    import tempfile
    workdir = tempfile.mkdtemp(prefix="build-%d-" % job_id)
    subprocess.run(["git", "clone", "--depth", "1", "--", repo_url, workdir], check=True)
    return workdir
"""),
]

FAMILIES_F = sorted({t.cwe for t in TEMPLATES_F})


def heldout_templates_f() -> list[Template]:
    """The 26 variant-"f"/"g" templates (final evaluation only).

    >>> len(heldout_templates_f()), len(FAMILIES_F), sorted({t.variant for t in heldout_templates_f()})
    (26, 13, ['f', 'g'])
    """
    return list(TEMPLATES_F)
