'''Blind template variants "w" and "x": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-6 system, evaluated once (2026-12-01 11:18 UTC); validation
data since (VAL hosts in benchmarks/codeprm_select.py; the round-7 analysers were fixed on it).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u).
26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("w", "x")

TEMPLATES_W: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "w", "import asyncio\nimport os\nimport re\n\nMEDIA_ROOT = \"/srv/{t}/images\"", """
async def {f}(ctx: dict, upload_id: int, {v}: str) -> int:
    \"\"\"arq job queued by the image API; ``{v}`` is the ``size`` query parameter the client asked for (e.g. ``800x600``).\"\"\"
    source = os.path.join(MEDIA_ROOT, "originals", f"{{upload_id}}.png")
    resized = os.path.join(MEDIA_ROOT, "resized", f"{{upload_id}}.webp")
    pid = os.posix_spawnp("sh", ["sh", "-c", f"magick {{source}} -resize {{{v}}} -strip {{resized}}"], dict(os.environ))  #!V
    _pid, status = await asyncio.to_thread(os.waitpid, pid, 0)
    return os.waitstatus_to_exitcode(status)
""", """
async def {f}(ctx: dict, upload_id: int, {v}: str) -> int:
    \"\"\"arq job queued by the image API; ``{v}`` is the ``size`` query parameter the client asked for (e.g. ``800x600``).\"\"\"
    if not re.fullmatch(r"[0-9]{{1,5}}x[0-9]{{1,5}}", {v}):
        raise ValueError("size must look like 800x600")
    source = os.path.join(MEDIA_ROOT, "originals", f"{{upload_id}}.png")
    resized = os.path.join(MEDIA_ROOT, "resized", f"{{upload_id}}.webp")
    pid = os.posix_spawnp("magick", ["magick", source, "-resize", {v}, "-strip", resized], dict(os.environ))
    _pid, status = await asyncio.to_thread(os.waitpid, pid, 0)
    return os.waitstatus_to_exitcode(status)
"""),
    _t(78, "x", "from plumbum import local\nfrom prefect import flow, get_run_logger\n\nMIRROR_DIR = \"/srv/{t}/mirror.git\"", """
@flow(name="{t}-release-notes")
def {f}({v}: str, since_tag: str = "v1.0.0") -> str:
    \"\"\"Release-notes flow; both refs are typed into the deployment's run form in the Prefect UI.\"\"\"
    logger = get_run_logger()
    git_log = local["bash"]["-c", f"git -C {{MIRROR_DIR}} log --no-merges --format='%h %s' {{since_tag}}..{{{v}}}"]  #!V
    notes = git_log()
    logger.info("collected %d commits", len(notes.splitlines()))
    return notes
""", """
@flow(name="{t}-release-notes")
def {f}({v}: str, since_tag: str = "v1.0.0") -> str:
    \"\"\"Release-notes flow; both refs are typed into the deployment's run form in the Prefect UI.\"\"\"
    logger = get_run_logger()
    if since_tag.startswith("-") or {v}.startswith("-"):
        raise ValueError("refs must not start with '-'")
    git_log = local["git"]["-C", MIRROR_DIR, "log", "--no-merges", "--format=%h %s", "--end-of-options", f"{{since_tag}}..{{{v}}}", "--"]
    notes = git_log()
    logger.info("collected %d commits", len(notes.splitlines()))
    return notes
"""),
    # ---- CWE-89 SQL injection
    _t(89, "w", "import json\nimport os\nimport oracledb\n\npool = oracledb.create_pool(user=\"{t}_ro\", password=os.environ[\"ORACLE_PASSWORD\"], dsn=os.environ[\"ORACLE_DSN\"], min=1, max=4)", """
def {f}(event: dict, context) -> dict:
    \"\"\"API Gateway proxy handler behind ``GET /{t}/search?city=...&status=...``.\"\"\"
    {v} = event.get("queryStringParameters") or {{}}
    city, status = {v}.get("city", ""), {v}.get("status", "active")
    with pool.acquire() as conn:
        cursor = conn.cursor()
        cursor.execute(f"SELECT id, display_name FROM {t} WHERE city = '{{city}}' AND status = '{{status}}' FETCH FIRST 50 ROWS ONLY")  #!V
        rows = cursor.fetchall()
    return {{"statusCode": 200, "body": json.dumps([{{"id": r[0], "display_name": r[1]}} for r in rows])}}
""", """
def {f}(event: dict, context) -> dict:
    \"\"\"API Gateway proxy handler behind ``GET /{t}/search?city=...&status=...``.\"\"\"
    {v} = event.get("queryStringParameters") or {{}}
    city, status = {v}.get("city", ""), {v}.get("status", "active")
    with pool.acquire() as conn:
        cursor = conn.cursor()
        cursor.execute("SELECT id, display_name FROM {t} WHERE city = :city AND status = :status FETCH FIRST 50 ROWS ONLY", city=city, status=status)
        rows = cursor.fetchall()
    return {{"statusCode": 200, "body": json.dumps([{{"id": r[0], "display_name": r[1]}} for r in rows])}}
"""),
    _t(89, "x", "from cassandra.cluster import Cluster\nfrom temporalio import activity\n\nreadings_session = Cluster([\"cassandra.{t}.internal\"]).connect(\"{t}\")", """
@activity.defn(name="{t}_purge_device_readings")
async def {f}(device_id: str, {v}: str) -> None:
    \"\"\"Activity of the data-erasure workflow; the arguments are copied from the erasure request a customer filed in the portal.\"\"\"
    stmt = "DELETE FROM {t}_readings WHERE device_id = '" + device_id + "' AND day < '" + {v} + "'"  #!V
    readings_session.execute(stmt)  #!V
    activity.heartbeat(device_id)
""", """
@activity.defn(name="{t}_purge_device_readings")
async def {f}(device_id: str, {v}: str) -> None:
    \"\"\"Activity of the data-erasure workflow; the arguments are copied from the erasure request a customer filed in the portal.\"\"\"
    stmt = readings_session.prepare("DELETE FROM {t}_readings WHERE device_id = ? AND day < ?")
    readings_session.execute(stmt, (device_id, {v}))
    activity.heartbeat(device_id)
"""),
    # ---- CWE-94 code injection
    _t(94, "w", "import pandas as pd\nfrom quart import Quart, jsonify, request\n\nreports = Quart(__name__)\nORDERS = pd.read_parquet(\"/srv/{t}/orders.parquet\")", """
@reports.get("/orders/filter")
async def {f}():
    \"\"\"Ad-hoc filter box on the orders report, e.g. ``?where=total > 100 and country == 'DE'``.\"\"\"
    {v} = request.args.get("where", "")
    matched = ORDERS.query({v}, engine="python") if {v} else ORDERS  #!V
    return jsonify(matched.head(200).to_dict(orient="records"))
""", """
@reports.get("/orders/filter")
async def {f}():
    \"\"\"Ad-hoc filter box on the orders report, e.g. ``?where=total > 100 and country == 'DE'``.\"\"\"
    import ast
    import operator
    comparisons = {{"==": operator.eq, "!=": operator.ne, ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}}
    {v} = request.args.get("where", "")
    mask = pd.Series(True, index=ORDERS.index)
    for clause in filter(None, (c.strip() for c in {v}.split(" and "))):
        parts = clause.split(maxsplit=2)
        if len(parts) != 3 or parts[0] not in ORDERS.columns or parts[1] not in comparisons:
            return jsonify(error="unsupported filter"), 400
        try:
            literal = ast.literal_eval(parts[2])
        except (ValueError, SyntaxError):
            return jsonify(error="unsupported filter"), 400
        mask &= comparisons[parts[1]](ORDERS[parts[0]], literal)
    matched = ORDERS[mask]
    return jsonify(matched.head(200).to_dict(orient="records"))
"""),
    _t(94, "x", "import datetime\nfrom sqlalchemy.orm import Session\nfrom .models import ShippingRule", """
def {f}(db: Session, tenant_id: int, order: dict) -> float:
    \"\"\"Shipping quote; each merchant writes its own pricing rule in the dashboard's code editor (it sets ``price``).\"\"\"
    rule = db.query(ShippingRule).filter_by(tenant_id=tenant_id).one()
    {v} = {{"order": order, "today": datetime.date.today(), "price": 0.0}}
    exec(rule.source, {v})  #!V
    return float({v}["price"])
""", """
def {f}(db: Session, tenant_id: int, order: dict) -> float:
    \"\"\"Shipping quote; each merchant writes its own pricing rule in the dashboard's code editor (it sets ``price``).\"\"\"
    from RestrictedPython import compile_restricted, safe_globals
    from RestrictedPython.Eval import default_guarded_getitem
    from RestrictedPython.Guards import safer_getattr
    rule = db.query(ShippingRule).filter_by(tenant_id=tenant_id).one()
    {v} = dict(safe_globals, _getitem_=default_guarded_getitem, _getattr_=safer_getattr, order=order, today=datetime.date.today(), price=0.0)
    byte_code = compile_restricted(rule.source, filename=f"<rule {{tenant_id}}>", mode="exec")
    exec(byte_code, {v})
    return float({v}["price"])
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "w", "import yaml\nfrom django.contrib.auth.decorators import login_required\nfrom django.http import JsonResponse\nfrom .models import Pipeline", """
@login_required
def {f}(request):
    \"\"\"The "Import pipeline" button: the user picks a ``pipeline.yml`` exported from another workspace.\"\"\"
    {v} = request.FILES["pipeline"].read()
    spec = yaml.load({v}, Loader=yaml.CLoader)  #!V
    pipeline = Pipeline.objects.create(owner=request.user, title=spec.get("title", "untitled"), steps=spec.get("steps", []))
    return JsonResponse({{"id": pipeline.pk, "steps": len(pipeline.steps)}})
""", """
@login_required
def {f}(request):
    \"\"\"The "Import pipeline" button: the user picks a ``pipeline.yml`` exported from another workspace.\"\"\"
    {v} = request.FILES["pipeline"].read()
    spec = yaml.load({v}, Loader=yaml.CSafeLoader)
    pipeline = Pipeline.objects.create(owner=request.user, title=spec.get("title", "untitled"), steps=spec.get("steps", []))
    return JsonResponse({{"id": pipeline.pk, "steps": len(pipeline.steps)}})
"""),
    _t(502, "x", "import json\nimport boto3\nimport skops.io as sio\n\nmodels_bucket = boto3.client(\"s3\")", """
def {f}(record: dict):
    \"\"\"Handler of the model-upload queue; data scientists of every team drop fitted estimators into the shared ``{t}-models`` bucket.\"\"\"
    {v} = json.loads(record["body"])
    obj = models_bucket.get_object(Bucket="{t}-models", Key={v}["key"])
    model_bytes = obj["Body"].read()
    estimator = sio.loads(model_bytes, trusted=sio.get_untrusted_types(data=model_bytes))  #!V
    return estimator
""", """
def {f}(record: dict):
    \"\"\"Handler of the model-upload queue; data scientists of every team drop fitted estimators into the shared ``{t}-models`` bucket.\"\"\"
    reviewed = {{"sklearn._loss.link.Interval", "sklearn._loss.link.LogitLink", "sklearn._loss.loss.HalfBinomialLoss", "numpy.dtype"}}
    {v} = json.loads(record["body"])
    obj = models_bucket.get_object(Bucket="{t}-models", Key={v}["key"])
    model_bytes = obj["Body"].read()
    untrusted = sio.get_untrusted_types(data=model_bytes)
    unexpected = sorted(set(untrusted) - reviewed)
    if unexpected:
        raise ValueError(f"model uses types nobody has reviewed: {{unexpected}}")
    estimator = sio.loads(model_bytes, trusted=untrusted)
    return estimator
"""),
    # ---- CWE-328 weak hash
    _t(328, "w", "import base64\nimport getpass\nimport os\nfrom pathlib import Path\nfrom cryptography.fernet import Fernet\nfrom cryptography.hazmat.primitives import hashes\nfrom cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC", """
def {f}(archive: Path) -> Path:
    \"\"\"``{t}-backup seal ARCHIVE``: encrypt a local backup with a passphrase the operator types at the prompt.\"\"\"
    passphrase = getpass.getpass("Backup passphrase: ")
    salt = os.urandom(16)
    kdf = PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=10_000)  #!V
    {v} = base64.urlsafe_b64encode(kdf.derive(passphrase.encode()))
    sealed = archive.with_suffix(archive.suffix + ".sealed")
    sealed.write_bytes(salt + Fernet({v}).encrypt(archive.read_bytes()))
    return sealed
""", """
def {f}(archive: Path) -> Path:
    \"\"\"``{t}-backup seal ARCHIVE``: encrypt a local backup with a passphrase the operator types at the prompt.\"\"\"
    passphrase = getpass.getpass("Backup passphrase: ")
    salt = os.urandom(16)
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=600_000)
    {v} = base64.urlsafe_b64encode(kdf.derive(passphrase.encode()))
    sealed = archive.with_suffix(archive.suffix + ".sealed")
    sealed.write_bytes(salt + Fernet({v}).encrypt(archive.read_bytes()))
    return sealed
"""),
    _t(328, "x", "import os\nimport click\nfrom passlib.apache import HtpasswdFile\n\nHTPASSWD_PATH = \"/etc/nginx/{t}.htpasswd\"", """
@click.command()
@click.argument("username")
@click.password_option()
def {f}(username: str, password: str) -> None:
    \"\"\"``add-staging-user alice``: give a contractor access to the basic-auth protected staging site.\"\"\"
    {v} = HtpasswdFile(HTPASSWD_PATH, new=not os.path.exists(HTPASSWD_PATH), default_scheme="apr_md5_crypt")  #!V
    {v}.set_password(username, password)
    {v}.save()
    click.echo(f"added {{username}}")
""", """
@click.command()
@click.argument("username")
@click.password_option()
def {f}(username: str, password: str) -> None:
    \"\"\"``add-staging-user alice``: give a contractor access to the basic-auth protected staging site.\"\"\"
    {v} = HtpasswdFile(HTPASSWD_PATH, new=not os.path.exists(HTPASSWD_PATH), default_scheme="bcrypt")
    {v}.set_password(username, password)
    {v}.save()
    click.echo(f"added {{username}}")
"""),
    # ---- CWE-327 broken / risky crypto or TLS
    _t(327, "w", "import os\nimport redis.asyncio as aioredis", """
class {f}RateLimiter:
    \"\"\"Per-window request limiter shared by all API replicas, backed by the managed Redis add-on (``rediss://`` URL in the environment).\"\"\"

    def __init__(self, limit: int = 100, window_s: int = 60):
        self.redis = aioredis.from_url(os.environ["REDIS_TLS_URL"], ssl_cert_reqs=None, decode_responses=True)  #!V
        self.limit, self.window_s = limit, window_s

    async def allow(self, {v}: str) -> bool:
        bucket = f"{t}:rl:{{{v}}}"
        count = await self.redis.incr(bucket)
        if count == 1:
            await self.redis.expire(bucket, self.window_s)
        return count <= self.limit
""", """
class {f}RateLimiter:
    \"\"\"Per-window request limiter shared by all API replicas, backed by the managed Redis add-on (``rediss://`` URL in the environment).\"\"\"

    def __init__(self, limit: int = 100, window_s: int = 60):
        self.redis = aioredis.from_url(os.environ["REDIS_TLS_URL"], ssl_cert_reqs="required", ssl_ca_certs=os.environ.get("REDIS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt"), decode_responses=True)
        self.limit, self.window_s = limit, window_s

    async def allow(self, {v}: str) -> bool:
        bucket = f"{t}:rl:{{{v}}}"
        count = await self.redis.incr(bucket)
        if count == 1:
            await self.redis.expire(bucket, self.window_s)
        return count <= self.limit
"""),
    _t(327, "x", "from cryptography.hazmat.primitives import serialization\nfrom cryptography.hazmat.primitives.asymmetric import rsa\nfrom .models import TenantSigningKey", """
def {f}(tenant_id: int, {v}: str) -> str:
    \"\"\"Create the key a new tenant's SSO integration signs its ID tokens with; ``{v}`` is the key id published in the JWKS.\"\"\"
    private_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)  #!V
    pem = private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    TenantSigningKey.objects.create(tenant_id=tenant_id, kid={v}, private_pem=pem.decode())
    return private_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
""", """
def {f}(tenant_id: int, {v}: str) -> str:
    \"\"\"Create the key a new tenant's SSO integration signs its ID tokens with; ``{v}`` is the key id published in the JWKS.\"\"\"
    private_key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    pem = private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    TenantSigningKey.objects.create(tenant_id=tenant_id, kid={v}, private_pem=pem.decode())
    return private_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
"""),
    # ---- CWE-338 weak randomness for secrets
    _t(338, "w", "import hashlib\nimport os\nimport time\nfrom ariadne import MutationType\n\nmutation = MutationType()", """
@mutation.field("createApiKey")
def {f}(obj, info, label: str) -> dict:
    \"\"\"``createApiKey(label: String!)``: issue a personal API key to the signed-in user; the key is shown once.\"\"\"
    user = info.context["request"].user
    {v} = "{t}_" + format(time.time_ns(), "x") + format(os.getpid(), "x")  #!V
    info.context["db"].api_keys.insert_one({{"user": user.id, "label": label, "sha256": hashlib.sha256({v}.encode()).hexdigest()}})
    return {{"label": label, "key": {v}}}
""", """
@mutation.field("createApiKey")
def {f}(obj, info, label: str) -> dict:
    \"\"\"``createApiKey(label: String!)``: issue a personal API key to the signed-in user; the key is shown once.\"\"\"
    import secrets
    user = info.context["request"].user
    {v} = "{t}_" + secrets.token_urlsafe(32)
    info.context["db"].api_keys.insert_one({{"user": user.id, "label": label, "sha256": hashlib.sha256({v}.encode()).hexdigest()}})
    return {{"label": label, "key": {v}}}
"""),
    _t(338, "x", "import hashlib\nimport time\nfrom fastapi import BackgroundTasks, FastAPI\nfrom pydantic import BaseModel, EmailStr\nfrom .mailer import send_verification\nfrom .store import save_pending_signup\n\nsignup_api = FastAPI()\n\n\nclass Signup(BaseModel):\n    email: EmailStr\n    display_name: str", """
@signup_api.post("/signup")
async def {f}(form: Signup, tasks: BackgroundTasks):
    \"\"\"Sign-up form; we e-mail a confirmation link before the account is activated.\"\"\"
    {v} = hashlib.md5(f"{{form.email}}:{{time.time()}}".encode()).hexdigest()  #!V
    await save_pending_signup(email=form.email, display_name=form.display_name, token={v})
    tasks.add_task(send_verification, form.email, f"https://{t}.example/confirm?token={{{v}}}")
    return {{"status": "check your inbox"}}
""", """
@signup_api.post("/signup")
async def {f}(form: Signup, tasks: BackgroundTasks):
    \"\"\"Sign-up form; we e-mail a confirmation link before the account is activated.\"\"\"
    import secrets
    {v} = secrets.token_urlsafe(32)
    await save_pending_signup(email=form.email, display_name=form.display_name, token={v})
    tasks.add_task(send_verification, form.email, f"https://{t}.example/confirm?token={{{v}}}")
    return {{"status": "check your inbox"}}
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "w", "import os\nimport requests", """
MAILGUN_DOMAIN = "mg.{t}.example"
{f}_MAILGUN_AUTH = ("api", "key-3c9f1b7e2a6d4085b1e9c7a2f4d8e6b0")  #!V


def {f}(to: str, subject: str, {v}: str) -> str:
    \"\"\"Send a transactional e-mail through Mailgun's HTTP API.\"\"\"
    reply = requests.post(f"https://api.mailgun.net/v3/{{MAILGUN_DOMAIN}}/messages", auth={f}_MAILGUN_AUTH, data={{"from": f"{t} <noreply@{{MAILGUN_DOMAIN}}>", "to": to, "subject": subject, "text": {v}}}, timeout=10)
    reply.raise_for_status()
    return reply.json()["id"]
""", """
MAILGUN_DOMAIN = "mg.{t}.example"
{f}_MAILGUN_AUTH = ("api", os.environ["MAILGUN_API_KEY"])


def {f}(to: str, subject: str, {v}: str) -> str:
    \"\"\"Send a transactional e-mail through Mailgun's HTTP API.\"\"\"
    reply = requests.post(f"https://api.mailgun.net/v3/{{MAILGUN_DOMAIN}}/messages", auth={f}_MAILGUN_AUTH, data={{"from": f"{t} <noreply@{{MAILGUN_DOMAIN}}>", "to": to, "subject": subject, "text": {v}}}, timeout=10)
    reply.raise_for_status()
    return reply.json()["id"]
"""),
    _t(798, "x", "import os\nfrom aiogram import Bot, Dispatcher, F\nfrom aiogram.types import Message", """
{f}_bot = Bot(token="7312849056:AAHq3vK9xZ{t}mP2wLr8TnB5cYdF6gJ0sEo")  #!V
{f}_dispatcher = Dispatcher()


@{f}_dispatcher.message(F.text.startswith("/status"))
async def {f}(message: Message) -> None:
    \"\"\"``/status <order>`` in the shop's Telegram support bot.\"\"\"
    {v} = message.text.removeprefix("/status").strip()
    await message.answer(f"Order {{{v}}} is being packed.")
""", """
{f}_bot = Bot(token=os.environ["TELEGRAM_BOT_TOKEN"])
{f}_dispatcher = Dispatcher()


@{f}_dispatcher.message(F.text.startswith("/status"))
async def {f}(message: Message) -> None:
    \"\"\"``/status <order>`` in the shop's Telegram support bot.\"\"\"
    {v} = message.text.removeprefix("/status").strip()
    await message.answer(f"Order {{{v}}} is being packed.")
"""),
    # ---- CWE-22 path traversal
    _t(22, "w", "from pathlib import Path\nimport pandas as pd\nimport socketio\n\ngrid_events = socketio.AsyncServer(async_mode=\"asgi\")\nEXPORT_DIR = Path(\"/srv/{t}/exports\")", """
@grid_events.on("export_table")
async def {f}(sid, {v}):
    \"\"\"The grid's Export dialog emits the rows on screen and the file name the user typed.\"\"\"
    session = await grid_events.get_session(sid)
    frame = pd.DataFrame.from_records({v}["rows"])
    destination = EXPORT_DIR / str(session["user_id"]) / f"{{{v}['filename']}}.parquet"
    frame.to_parquet(destination, index=False)  #!V
    await grid_events.emit("export_ready", {{"file": destination.name}}, to=sid)
""", """
@grid_events.on("export_table")
async def {f}(sid, {v}):
    \"\"\"The grid's Export dialog emits the rows on screen and the file name the user typed.\"\"\"
    session = await grid_events.get_session(sid)
    frame = pd.DataFrame.from_records({v}["rows"])
    user_dir = (EXPORT_DIR / str(session["user_id"])).resolve()
    destination = (user_dir / f"{{{v}['filename']}}.parquet").resolve()
    if destination.parent != user_dir:
        await grid_events.emit("export_failed", {{"reason": "invalid file name"}}, to=sid)
        return
    frame.to_parquet(destination, index=False)
    await grid_events.emit("export_ready", {{"file": destination.name}}, to=sid)
"""),
    _t(22, "x", "import os\nimport sqlite3\nfrom flask import Flask, g, jsonify, request\n\nportal = Flask(__name__)\nTENANT_DB_DIR = \"/var/lib/{t}/tenants\"", """
@portal.before_request
def {f}():
    \"\"\"Every API call carries the ``X-Tenant`` header the SPA sets after login; each tenant has its own SQLite file.\"\"\"
    {v} = request.headers.get("X-Tenant", "")
    if not {v}:
        return jsonify(error="missing tenant"), 400
    g.db = sqlite3.connect(os.path.join(TENANT_DB_DIR, {v} + ".sqlite3"))  #!V
    return None
""", """
@portal.before_request
def {f}():
    \"\"\"Every API call carries the ``X-Tenant`` header the SPA sets after login; each tenant has its own SQLite file.\"\"\"
    import re
    {v} = request.headers.get("X-Tenant", "")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{{0,62}}", {v}):
        return jsonify(error="unknown tenant"), 400
    g.db = sqlite3.connect(os.path.join(TENANT_DB_DIR, {v} + ".sqlite3"))
    return None
"""),
    # ---- CWE-79 XSS
    _t(79, "w", "from sanic import Sanic\nfrom sanic.response import html\n\nstatus_page = Sanic(\"{t}_status\")", """
@status_page.get("/incidents/search")
async def {f}(request):
    \"\"\"Public status page; the search box submits ``?component=...``.\"\"\"
    {v} = request.args.get("component", "")
    incidents = await request.app.ctx.store.incidents_for({v})
    rows = "".join(f"<li>{{i.opened_at:%Y-%m-%d}} {{i.summary}}</li>" for i in incidents)
    return html(f"<h1>Incidents affecting {{{v}}}</h1><ul>{{rows}}</ul>")  #!V
""", """
@status_page.get("/incidents/search")
async def {f}(request):
    \"\"\"Public status page; the search box submits ``?component=...``.\"\"\"
    from markupsafe import escape
    {v} = request.args.get("component", "")
    incidents = await request.app.ctx.store.incidents_for({v})
    rows = "".join(f"<li>{{i.opened_at:%Y-%m-%d}} {{escape(i.summary)}}</li>" for i in incidents)
    return html(f"<h1>Incidents affecting {{escape({v})}}</h1><ul>{{rows}}</ul>")
"""),
    _t(79, "x", "from fastapi import FastAPI\nfrom fastapi.responses import HTMLResponse\nfrom jinja2 import Environment, FileSystemLoader, select_autoescape\nfrom .profiles import get_profile\n\ndirectory = FastAPI()", """
{f}_templates = Environment(loader=FileSystemLoader("templates/{t}"), autoescape=select_autoescape(enabled_extensions=("xml",)))  #!V


@directory.get("/people/{{username}}", response_class=HTMLResponse)
async def {f}(username: str):
    \"\"\"Member directory page; headline, bio and website are whatever the member saved on their profile.\"\"\"
    {v} = await get_profile(username)
    return {f}_templates.get_template("profile.html").render(profile={v})
""", """
{f}_templates = Environment(loader=FileSystemLoader("templates/{t}"), autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml")))


@directory.get("/people/{{username}}", response_class=HTMLResponse)
async def {f}(username: str):
    \"\"\"Member directory page; headline, bio and website are whatever the member saved on their profile.\"\"\"
    {v} = await get_profile(username)
    return {f}_templates.get_template("profile.html").render(profile={v})
"""),
    # ---- CWE-611 XXE
    _t(611, "w", "from lxml import etree\nfrom pyramid.response import Response\nfrom pyramid.view import view_config", """
@view_config(route_name="{t}_report_preview", request_method="POST")
def {f}(request):
    \"\"\"Report designer preview: the analyst uploads their own XSLT stylesheet and we apply it to the sample data set.\"\"\"
    {v} = request.POST["stylesheet"].file.read()
    transform = etree.XSLT(etree.fromstring({v}))  #!V
    sample = etree.parse("/srv/{t}/samples/report.xml")
    return Response(body=bytes(transform(sample)), content_type="text/html")
""", """
@view_config(route_name="{t}_report_preview", request_method="POST")
def {f}(request):
    \"\"\"Report designer preview: the analyst uploads their own XSLT stylesheet and we apply it to the sample data set.\"\"\"
    {v} = request.POST["stylesheet"].file.read()
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
    transform = etree.XSLT(etree.fromstring({v}, parser), access_control=etree.XSLTAccessControl.DENY_ALL)
    sample = etree.parse("/srv/{t}/samples/report.xml")
    return Response(body=bytes(transform(sample)), content_type="text/html")
"""),
    _t(611, "x", "import xmlrpc.client\nfrom django.http import HttpResponse\nfrom django.views.decorators.csrf import csrf_exempt\nfrom .models import Pingback, Post", """
@csrf_exempt
def {f}(request):
    \"\"\"``/xmlrpc/``: blogs that link to one of our posts send a ``pingback.ping`` XML-RPC call here.\"\"\"
    {v}, method = xmlrpc.client.loads(request.body)  #!V
    if method != "pingback.ping" or len({v}) != 2:
        return HttpResponse(xmlrpc.client.dumps(xmlrpc.client.Fault(-32601, "unsupported method"), methodresponse=True), content_type="text/xml")
    source_uri, target_uri = {v}
    post = Post.objects.filter(permalink=target_uri).first()
    if post is None:
        return HttpResponse(xmlrpc.client.dumps(xmlrpc.client.Fault(33, "target not found"), methodresponse=True), content_type="text/xml")
    Pingback.objects.get_or_create(post=post, source=source_uri)
    return HttpResponse(xmlrpc.client.dumps(("registered",), methodresponse=True), content_type="text/xml")
""", """
from defusedxml.xmlrpc import monkey_patch

monkey_patch()


@csrf_exempt
def {f}(request):
    \"\"\"``/xmlrpc/``: blogs that link to one of our posts send a ``pingback.ping`` XML-RPC call here.\"\"\"
    {v}, method = xmlrpc.client.loads(request.body)
    if method != "pingback.ping" or len({v}) != 2:
        return HttpResponse(xmlrpc.client.dumps(xmlrpc.client.Fault(-32601, "unsupported method"), methodresponse=True), content_type="text/xml")
    source_uri, target_uri = {v}
    post = Post.objects.filter(permalink=target_uri).first()
    if post is None:
        return HttpResponse(xmlrpc.client.dumps(xmlrpc.client.Fault(33, "target not found"), methodresponse=True), content_type="text/xml")
    Pingback.objects.get_or_create(post=post, source=source_uri)
    return HttpResponse(xmlrpc.client.dumps(("registered",), methodresponse=True), content_type="text/xml")
"""),
    # ---- CWE-918 SSRF
    _t(918, "w", "import re\nimport httplib2\nfrom fastapi import FastAPI, Form\n\nunfurler = FastAPI()\nLINK_PATTERN = re.compile(r\"https?://[^\\s<>]+\")", """
@unfurler.post("/hooks/mattermost/unfurl")
def {f}({v}: str = Form(..., alias="text"), user_name: str = Form("")):
    \"\"\"Mattermost outgoing webhook: every message posted in the subscribed channels is forwarded here.\"\"\"
    match = LINK_PATTERN.search({v})
    if match is None:
        return {{}}
    http = httplib2.Http(timeout=5)
    _response, content = http.request(match.group(0), "GET", headers={{"User-Agent": "{t}-unfurl/2.0"}})  #!V
    title = re.search(rb"<title>(.*?)</title>", content[:65536], re.S | re.I)
    return {{"text": title.group(1).decode(errors="replace") if title else match.group(0)}}
""", """
@unfurler.post("/hooks/mattermost/unfurl")
def {f}({v}: str = Form(..., alias="text"), user_name: str = Form("")):
    \"\"\"Mattermost outgoing webhook: every message posted in the subscribed channels is forwarded here.\"\"\"
    from urllib.parse import urlsplit
    unfurl_hosts = ("github.com", "gitlab.com", "www.youtube.com", "docs.google.com", "en.wikipedia.org")
    match = LINK_PATTERN.search({v})
    if match is None:
        return {{}}
    parts = urlsplit(match.group(0))
    if parts.scheme != "https" or parts.hostname not in unfurl_hosts or parts.port not in (None, 443):
        return {{}}
    http = httplib2.Http(timeout=5)
    http.follow_redirects = False
    _response, content = http.request(parts.geturl(), "GET", headers={{"User-Agent": "{t}-unfurl/2.0"}})
    title = re.search(rb"<title>(.*?)</title>", content[:65536], re.S | re.I)
    return {{"text": title.group(1).decode(errors="replace") if title else match.group(0)}}
"""),
    _t(918, "x", "import json\nimport websockets\nfrom .feeds import publish_tick", """
async def {f}(workspace_id: int, {v}: dict) -> None:
    \"\"\"Market-data bridge; ``{v}`` is the data-source form the workspace admin filled in (stream URL and symbols).\"\"\"
    async with websockets.connect({v}["stream_url"], open_timeout=10, max_size=2 ** 20) as upstream:  #!V
        await upstream.send(json.dumps({{"action": "subscribe", "symbols": {v}["symbols"]}}))
        async for frame in upstream:
            await publish_tick(workspace_id, json.loads(frame))
""", """
async def {f}(workspace_id: int, {v}: dict) -> None:
    \"\"\"Market-data bridge; ``{v}`` is the data-source form the workspace admin filled in (stream URL and symbols).\"\"\"
    from urllib.parse import urlsplit
    providers = ("stream.data.alpaca.markets", "ws.finnhub.io", "socket.polygon.io")
    parts = urlsplit({v}["stream_url"])
    if parts.scheme != "wss" or parts.hostname not in providers or parts.port not in (None, 443):
        raise ValueError("unsupported market-data provider")
    async with websockets.connect(parts.geturl(), open_timeout=10, max_size=2 ** 20) as upstream:
        await upstream.send(json.dumps({{"action": "subscribe", "symbols": {v}["symbols"]}}))
        async for frame in upstream:
            await publish_tick(workspace_id, json.loads(frame))
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "w", "import os\nimport subprocess", """
def {f}(source: str, {v}: str, on_progress) -> int:
    \"\"\"Transcode worker: ffmpeg reports its progress into a named pipe that we read while it runs.\"\"\"
    fifo = f"/tmp/{t}-ffmpeg-progress.fifo"  #!V
    if not os.path.exists(fifo):
        os.mkfifo(fifo)  #!V
    proc = subprocess.Popen(["ffmpeg", "-y", "-i", source, "-progress", fifo, "-nostats", {v}])
    with open(fifo) as pipe:
        for line in pipe:
            if line.startswith("out_time_ms="):
                on_progress(int(line.split("=", 1)[1]))
    return proc.wait()
""", """
def {f}(source: str, {v}: str, on_progress) -> int:
    \"\"\"Transcode worker: ffmpeg reports its progress into a named pipe that we read while it runs.\"\"\"
    import shutil
    import tempfile
    workdir = tempfile.mkdtemp(prefix="{t}-ffmpeg-")
    fifo = os.path.join(workdir, "progress.fifo")
    os.mkfifo(fifo, 0o600)
    try:
        proc = subprocess.Popen(["ffmpeg", "-y", "-i", source, "-progress", fifo, "-nostats", {v}])
        with open(fifo) as pipe:
            for line in pipe:
                if line.startswith("out_time_ms="):
                    on_progress(int(line.split("=", 1)[1]))
        return proc.wait()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
"""),
    _t(377, "x", "import hashlib\nimport boto3\nimport soundfile as sf\n\ncdn_bucket = boto3.client(\"s3\")", """
def {f}(tts_model, {v}: str, voice: str = "alloy") -> str:
    \"\"\"Narration worker: synthesize the article text an editor submitted and publish the WAV to the CDN bucket.\"\"\"
    audio, sample_rate = tts_model.synthesize({v}, voice=voice)
    object_key = f"narrations/{{hashlib.sha256({v}.encode()).hexdigest()}}-{{voice}}.wav"
    wav_path = f"/tmp/{t}-narration-{{voice}}.wav"  #!V
    sf.write(wav_path, audio, sample_rate)  #!V
    cdn_bucket.upload_file(wav_path, "{t}-cdn", object_key)
    return object_key
""", """
def {f}(tts_model, {v}: str, voice: str = "alloy") -> str:
    \"\"\"Narration worker: synthesize the article text an editor submitted and publish the WAV to the CDN bucket.\"\"\"
    import tempfile
    audio, sample_rate = tts_model.synthesize({v}, voice=voice)
    object_key = f"narrations/{{hashlib.sha256({v}.encode()).hexdigest()}}-{{voice}}.wav"
    with tempfile.NamedTemporaryFile(prefix="{t}-narration-", suffix=".wav") as wav:
        sf.write(wav.name, audio, sample_rate)
        cdn_bucket.upload_file(wav.name, "{t}-cdn", object_key)
    return object_key
"""),
]

FAMILIES_W = sorted({t.cwe for t in TEMPLATES_W})


def heldout_templates_w() -> list[Template]:
    """The 26 variant-"w"/"x" templates (final evaluation only).

    >>> len(heldout_templates_w()), len(FAMILIES_W), sorted({t.variant for t in heldout_templates_w()})
    (26, 13, ['w', 'x'])
    """
    return list(TEMPLATES_W)
