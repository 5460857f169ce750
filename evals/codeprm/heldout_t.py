'''Blind template variants "t" and "u": two fresh TEST variants, for evaluation only.

Status: the second blind test of the round-5 system, evaluated once (2026-12-01 10:44 UTC). Validation
data since (embedded in the VAL hosts by benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s).
26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("t", "u")

TEMPLATES_T: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "t", "import asyncio\nfrom mcp.server.fastmcp import FastMCP\n\nREPO_ROOT = \"/srv/{t}/checkout\"\ncode_tools = FastMCP(\"{t}-code-search\")", """
@code_tools.tool()
async def {f}({v}: str, glob: str = "*.py") -> str:
    \"\"\"Search the checked-out repository; the coding agent fills the pattern and the glob from the conversation.\"\"\"
    proc = await asyncio.create_subprocess_exec("bash", "-c", f"rg --line-number --glob '{{glob}}' -e '{{{v}}}' .", cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE)  #!V
    out, _err = await proc.communicate()
    return out.decode(errors="replace")[:20000]
""", """
@code_tools.tool()
async def {f}({v}: str, glob: str = "*.py") -> str:
    \"\"\"Search the checked-out repository; the coding agent fills the pattern and the glob from the conversation.\"\"\"
    proc = await asyncio.create_subprocess_exec("rg", "--line-number", "--glob", glob, "-e", {v}, "--", ".", cwd=REPO_ROOT, stdout=asyncio.subprocess.PIPE)
    out, _err = await proc.communicate()
    return out.decode(errors="replace")[:20000]
"""),
    _t(78, "u", "import os\nimport subprocess\nimport sys", """
def {f}() -> int:
    \"\"\"Pull-request CI step: lint only the files the PR touches (the runner exports the PR's branch name).\"\"\"
    {v} = os.environ["GITHUB_HEAD_REF"]
    changed = subprocess.check_output(f"git fetch --depth=50 origin {{{v}}} && git diff --name-only origin/main...origin/{{{v}}}", shell=True, text=True)  #!V
    files = [line for line in changed.splitlines() if line.endswith(".py")]
    if not files:
        return 0
    return subprocess.call([sys.executable, "-m", "ruff", "check", *files])
""", """
def {f}() -> int:
    \"\"\"Pull-request CI step: lint only the files the PR touches (the runner exports the PR's branch name).\"\"\"
    import re
    {v} = os.environ["GITHUB_HEAD_REF"]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]{{0,200}}", {v}):
        raise SystemExit("unexpected branch name")
    subprocess.check_call(["git", "fetch", "--depth=50", "origin", {v}])
    changed = subprocess.check_output(["git", "diff", "--name-only", f"origin/main...origin/{{{v}}}"], text=True)
    files = [line for line in changed.splitlines() if line.endswith(".py")]
    if not files:
        return 0
    return subprocess.call([sys.executable, "-m", "ruff", "check", *files])
"""),
    # ---- CWE-89 SQL injection
    _t(89, "t", "import json\nimport os\nimport pymysql", """
def {f}(body: bytes) -> int:
    \"\"\"Consumer of the carrier-status queue; each message is the JSON a courier's webhook posted to us.\"\"\"
    {v} = json.loads(body)
    conn = pymysql.connect(host=os.environ["MYSQL_HOST"], user="{t}_writer", password=os.environ["MYSQL_PASSWORD"], database="{t}")
    try:
        with conn.cursor() as cur:
            stmt = "UPDATE {t} SET status = '%s', note = '%s' WHERE tracking_no = '%s'" % ({v}["status"], {v}.get("note", ""), {v}["tracking_no"])  #!V
            changed = cur.execute(stmt)  #!V
        conn.commit()
    finally:
        conn.close()
    return changed
""", """
def {f}(body: bytes) -> int:
    \"\"\"Consumer of the carrier-status queue; each message is the JSON a courier's webhook posted to us.\"\"\"
    {v} = json.loads(body)
    conn = pymysql.connect(host=os.environ["MYSQL_HOST"], user="{t}_writer", password=os.environ["MYSQL_PASSWORD"], database="{t}")
    try:
        with conn.cursor() as cur:
            stmt = "UPDATE {t} SET status = %s, note = %s WHERE tracking_no = %s"
            changed = cur.execute(stmt, ({v}["status"], {v}.get("note", ""), {v}["tracking_no"]))
        conn.commit()
    finally:
        conn.close()
    return changed
"""),
    _t(89, "u", "import os\nimport strawberry\nfrom sqlalchemy import create_engine\n\nbilling_db = create_engine(os.environ[\"BILLING_DATABASE_URL\"], pool_pre_ping=True)", """
@strawberry.type
class {f}Invoice:
    number: str
    total_cents: int
    status: str


@strawberry.type
class {f}Query:
    @strawberry.field
    def invoices(self, {v}: str, status: str = "open") -> list[{f}Invoice]:
        \"\"\"Billing page resolver; the customer reference and status come straight from the GraphQL query variables.\"\"\"
        with billing_db.connect() as conn:
            result = conn.exec_driver_sql(f"SELECT number, total_cents, status FROM {t} WHERE customer_ref = '{{{v}}}' AND status = '{{status}}' ORDER BY issued_at DESC")  #!V
            return [{f}Invoice(number=r.number, total_cents=r.total_cents, status=r.status) for r in result]
""", """
@strawberry.type
class {f}Invoice:
    number: str
    total_cents: int
    status: str


@strawberry.type
class {f}Query:
    @strawberry.field
    def invoices(self, {v}: str, status: str = "open") -> list[{f}Invoice]:
        \"\"\"Billing page resolver; the customer reference and status come straight from the GraphQL query variables.\"\"\"
        with billing_db.connect() as conn:
            result = conn.exec_driver_sql("SELECT number, total_cents, status FROM {t} WHERE customer_ref = %(ref)s AND status = %(status)s ORDER BY issued_at DESC", {{"ref": {v}, "status": status}})
            return [{f}Invoice(number=r.number, total_cents=r.total_cents, status=r.status) for r in result]
"""),
    # ---- CWE-94 code injection
    _t(94, "t", "from dataclasses import dataclass\nfrom jinja2.nativetypes import NativeEnvironment", """
@dataclass
class {f}Step:
    \"\"\"One step of a customer-defined order workflow, saved from the no-code automation builder.

    ``when`` is the condition the customer typed, e.g. ``{{{{ order.total > 100 and order.country == "DE" }}}}``.
    \"\"\"
    name: str
    when: str
    action: str

    def applies_to(self, order: dict) -> bool:
        outcome = NativeEnvironment().from_string(self.when).render(order=order)  #!V
        return bool(outcome)
""", """
@dataclass
class {f}Step:
    \"\"\"One step of a customer-defined order workflow, saved from the no-code automation builder.

    ``when`` is the condition the customer typed, e.g. ``{{{{ order.total > 100 and order.country == "DE" }}}}``.
    \"\"\"
    name: str
    when: str
    action: str

    def applies_to(self, order: dict) -> bool:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        class _SandboxedNative(ImmutableSandboxedEnvironment, NativeEnvironment):
            pass

        outcome = _SandboxedNative().from_string(self.when).render(order=order)
        return bool(outcome)
"""),
    _t(94, "u", "import json\nimport pandas as pd\nfrom openai import AsyncOpenAI\n\nllm = AsyncOpenAI()\nALLOWED_AGGREGATIONS = (\"sum\", \"mean\", \"count\", \"max\", \"min\")", """
async def {f}(frame: pd.DataFrame, question: str) -> str:
    \"\"\"The dashboard's ask-your-data box: the analyst's question is turned into a pandas expression by the model.\"\"\"
    reply = await llm.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {{"role": "system", "content": "Reply with a single pandas expression over the DataFrame `df` and nothing else. Columns: " + ", ".join(map(str, frame.columns))}},
            {{"role": "user", "content": question}},
        ],
    )
    {v} = reply.choices[0].message.content.strip().strip("`")
    answer = eval({v}, {{"df": frame, "pd": pd}})  #!V
    return str(answer)
""", """
async def {f}(frame: pd.DataFrame, question: str) -> str:
    \"\"\"The dashboard's ask-your-data box: the analyst's question is turned into a pandas expression by the model.\"\"\"
    reply = await llm.chat.completions.create(
        model="gpt-4o-mini",
        response_format={{"type": "json_object"}},
        messages=[
            {{"role": "system", "content": 'Reply with JSON {{"column": ..., "aggregation": ..., "group_by": ... or null}}. Columns: ' + ", ".join(map(str, frame.columns))}},
            {{"role": "user", "content": question}},
        ],
    )
    {v} = json.loads(reply.choices[0].message.content)
    column, aggregation, group_by = {v}.get("column"), {v}.get("aggregation"), {v}.get("group_by")
    if column not in frame.columns or aggregation not in ALLOWED_AGGREGATIONS or (group_by is not None and group_by not in frame.columns):
        return "Sorry, that question cannot be answered from this table."
    series = frame.groupby(group_by)[column] if group_by is not None else frame[column]
    return str(getattr(series, aggregation)())
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "t", "import json\nimport tempfile\nfrom flask import Flask, jsonify, request\nfrom sqlitedict import SqliteDict\n\ndesk = Flask(__name__)", """
@desk.post("/projects/import")
def {f}():
    \"\"\"Import a project a user exported from the desktop app (the ``.{t}db`` file picked in the upload dialog).\"\"\"
    {v} = request.files["project"]
    with tempfile.NamedTemporaryFile(suffix=".sqlite") as staged:
        {v}.save(staged)
        staged.flush()
        with SqliteDict(staged.name, tablename="project", flag="r") as project:  #!V
            settings = dict(project.items())  #!V
    return jsonify(name=settings.get("name"), layers=len(settings.get("layers", [])))
""", """
@desk.post("/projects/import")
def {f}():
    \"\"\"Import a project a user exported from the desktop app (the ``.{t}db`` file picked in the upload dialog).\"\"\"
    {v} = request.files["project"]
    with tempfile.NamedTemporaryFile(suffix=".sqlite") as staged:
        {v}.save(staged)
        staged.flush()
        with SqliteDict(staged.name, tablename="project", flag="r", encode=json.dumps, decode=json.loads) as project:
            settings = dict(project.items())
    return jsonify(name=settings.get("name"), layers=len(settings.get("layers", [])))
"""),
    _t(502, "u", "import asyncio\nimport json\nimport pickle\nimport struct", """
class {f}MetricsProtocol(asyncio.Protocol):
    \"\"\"Receives the metric batches that agents on customer hosts push to port 7700 (4-byte length, then the body).\"\"\"

    def __init__(self, sink: list):
        self.sink = sink
        self.pending = bytearray()

    def data_received(self, chunk: bytes) -> None:
        self.pending.extend(chunk)
        while len(self.pending) >= 4:
            (size,) = struct.unpack("!I", self.pending[:4])
            if len(self.pending) < 4 + size:
                return
            frame = bytes(self.pending[4:4 + size])
            del self.pending[:4 + size]
            batch = pickle.loads(frame)  #!V
            self.sink.extend(batch["points"])


async def {f}(sink: list, port: int = 7700) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: {f}MetricsProtocol(sink), "0.0.0.0", port)
    async with server:
        await server.serve_forever()
""", """
class {f}MetricsProtocol(asyncio.Protocol):
    \"\"\"Receives the metric batches that agents on customer hosts push to port 7700 (4-byte length, then the body).\"\"\"

    def __init__(self, sink: list):
        self.sink = sink
        self.pending = bytearray()

    def data_received(self, chunk: bytes) -> None:
        self.pending.extend(chunk)
        while len(self.pending) >= 4:
            (size,) = struct.unpack("!I", self.pending[:4])
            if len(self.pending) < 4 + size:
                return
            frame = bytes(self.pending[4:4 + size])
            del self.pending[:4 + size]
            batch = json.loads(frame.decode("utf-8"))
            self.sink.extend(batch["points"])


async def {f}(sink: list, port: int = 7700) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: {f}MetricsProtocol(sink), "0.0.0.0", port)
    async with server:
        await server.serve_forever()
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "t", "import argparse\nimport datetime\nimport sys\nfrom pathlib import Path\nfrom cryptography import x509\nfrom cryptography.hazmat.primitives import hashes, serialization", """
def {f}(argv=None) -> None:
    \"\"\"``sign-device-csr --csr ... --ca-key ... --ca-cert ...``: the factory line's client-certificate tool.\"\"\"
    parser = argparse.ArgumentParser(prog="sign-device-csr")
    parser.add_argument("--csr", type=Path, required=True)
    parser.add_argument("--ca-key", type=Path, required=True)
    parser.add_argument("--ca-cert", type=Path, required=True)
    args = parser.parse_args(argv)
    csr = x509.load_pem_x509_csr(args.csr.read_bytes())
    ca_key = serialization.load_pem_private_key(args.ca_key.read_bytes(), password=None)
    ca_cert = x509.load_pem_x509_certificate(args.ca_cert.read_bytes())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(csr.subject)
        .issuer_name(ca_cert.subject)
        .public_key(csr.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=825))
    )
    cert = builder.sign(ca_key, hashes.SHA1())  #!V
    sys.stdout.buffer.write(cert.public_bytes(serialization.Encoding.PEM))
""", """
def {f}(argv=None) -> None:
    \"\"\"``sign-device-csr --csr ... --ca-key ... --ca-cert ...``: the factory line's client-certificate tool.\"\"\"
    parser = argparse.ArgumentParser(prog="sign-device-csr")
    parser.add_argument("--csr", type=Path, required=True)
    parser.add_argument("--ca-key", type=Path, required=True)
    parser.add_argument("--ca-cert", type=Path, required=True)
    args = parser.parse_args(argv)
    csr = x509.load_pem_x509_csr(args.csr.read_bytes())
    ca_key = serialization.load_pem_private_key(args.ca_key.read_bytes(), password=None)
    ca_cert = x509.load_pem_x509_certificate(args.ca_cert.read_bytes())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(csr.subject)
        .issuer_name(ca_cert.subject)
        .public_key(csr.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=825))
    )
    cert = builder.sign(ca_key, hashes.SHA256())
    sys.stdout.buffer.write(cert.public_bytes(serialization.Encoding.PEM))
"""),
    _t(328, "u", "import hmac\nimport time\nimport xxhash\nfrom starlette.requests import Request\nfrom starlette.responses import JSONResponse", """
class {f}SignedIngest:
    \"\"\"Ingest endpoint; our edge workers sign each forwarded event in ``X-Signature`` with the shared secret.\"\"\"

    def __init__(self, shared_secret: bytes, tolerance_s: int = 300):
        self.shared_secret = shared_secret
        self.tolerance_s = tolerance_s

    def expected(self, timestamp: str, body: bytes) -> str:
        return xxhash.xxh3_128_hexdigest(self.shared_secret + timestamp.encode() + b"." + body)  #!V

    async def __call__(self, request: Request) -> JSONResponse:
        timestamp = request.headers.get("X-Timestamp", "0")
        {v} = await request.body()
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > self.tolerance_s:
            return JSONResponse({{"error": "stale request"}}, status_code=401)
        if not hmac.compare_digest(self.expected(timestamp, {v}), request.headers.get("X-Signature", "")):
            return JSONResponse({{"error": "bad signature"}}, status_code=401)
        return JSONResponse({{"accepted": len({v})}})
""", """
class {f}SignedIngest:
    \"\"\"Ingest endpoint; our edge workers sign each forwarded event in ``X-Signature`` with the shared secret.\"\"\"

    def __init__(self, shared_secret: bytes, tolerance_s: int = 300):
        self.shared_secret = shared_secret
        self.tolerance_s = tolerance_s

    def expected(self, timestamp: str, body: bytes) -> str:
        import hashlib
        return hmac.new(self.shared_secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()

    async def __call__(self, request: Request) -> JSONResponse:
        timestamp = request.headers.get("X-Timestamp", "0")
        {v} = await request.body()
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > self.tolerance_s:
            return JSONResponse({{"error": "stale request"}}, status_code=401)
        if not hmac.compare_digest(self.expected(timestamp, {v}), request.headers.get("X-Signature", "")):
            return JSONResponse({{"error": "bad signature"}}, status_code=401)
        return JSONResponse({{"accepted": len({v})}})
"""),
    # ---- CWE-327 broken / risky crypto or TLS
    _t(327, "t", "import os\nfrom confluent_kafka import Producer", """
def {f}() -> Producer:
    \"\"\"Producer for the managed Kafka cluster that receives the {t} change events.\"\"\"
    return Producer({{
        "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"],
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": os.environ["KAFKA_USERNAME"],
        "sasl.password": os.environ["KAFKA_PASSWORD"],
        "enable.ssl.certificate.verification": False,  #!V
        "ssl.endpoint.identification.algorithm": "none",  #!V
        "linger.ms": 20,
    }})
""", """
def {f}() -> Producer:
    \"\"\"Producer for the managed Kafka cluster that receives the {t} change events.\"\"\"
    import certifi
    return Producer({{
        "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"],
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": os.environ["KAFKA_USERNAME"],
        "sasl.password": os.environ["KAFKA_PASSWORD"],
        "ssl.ca.location": certifi.where(),
        "enable.ssl.certificate.verification": True,
        "ssl.endpoint.identification.algorithm": "https",
        "linger.ms": 20,
    }})
"""),
    _t(327, "u", "import base64\nimport os\nfrom cryptography.hazmat.primitives import hashes, serialization\nfrom cryptography.hazmat.primitives.asymmetric import padding\nfrom cryptography.hazmat.primitives.ciphers.aead import AESGCM", """
class {f}EnvelopeSealer:
    \"\"\"Seals card-holder exports for the acquiring bank with the RSA public key it gave us at onboarding.\"\"\"

    def __init__(self, bank_public_pem: bytes):
        self.bank_key = serialization.load_pem_public_key(bank_public_pem)

    def seal(self, {v}: bytes) -> dict:
        content_key = AESGCM.generate_key(bit_length=256)
        nonce = os.urandom(12)
        wrapped = self.bank_key.encrypt(content_key, padding.PKCS1v15())  #!V
        return {{
            "wrapped_key": base64.b64encode(wrapped).decode(),
            "nonce": base64.b64encode(nonce).decode(),
            "ciphertext": base64.b64encode(AESGCM(content_key).encrypt(nonce, {v}, None)).decode(),
        }}
""", """
class {f}EnvelopeSealer:
    \"\"\"Seals card-holder exports for the acquiring bank with the RSA public key it gave us at onboarding.\"\"\"

    def __init__(self, bank_public_pem: bytes):
        self.bank_key = serialization.load_pem_public_key(bank_public_pem)

    def seal(self, {v}: bytes) -> dict:
        content_key = AESGCM.generate_key(bit_length=256)
        nonce = os.urandom(12)
        wrapped = self.bank_key.encrypt(content_key, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
        return {{
            "wrapped_key": base64.b64encode(wrapped).decode(),
            "nonce": base64.b64encode(nonce).decode(),
            "ciphertext": base64.b64encode(AESGCM(content_key).encrypt(nonce, {v}, None)).decode(),
        }}
"""),
    # ---- CWE-338 weak randomness for secrets
    _t(338, "t", "from django.contrib.auth import get_user_model\nfrom django.core.mail import send_mail\nfrom django.core.management.base import BaseCommand\nfrom faker import Faker", """
class {f}Command(BaseCommand):
    \"\"\"``manage.py invite_staff alice@example.com bob@example.com``: create staff accounts with a first password.\"\"\"
    help = "Create staff accounts and e-mail each one a temporary password"

    def add_arguments(self, parser):
        parser.add_argument("emails", nargs="+")

    def handle(self, *args, **options):
        faker = Faker()
        for email in options["emails"]:
            temporary = faker.password(length=14, special_chars=True)  #!V
            user = get_user_model().objects.create_user(username=email, email=email, password=temporary, is_staff=True)
            send_mail("Your {t} staff account", f"Sign in as {{email}} with the temporary password {{temporary}} and change it.", None, [email])
            self.stdout.write(f"invited user {{user.pk}}")
""", """
class {f}Command(BaseCommand):
    \"\"\"``manage.py invite_staff alice@example.com bob@example.com``: create staff accounts with a first password.\"\"\"
    help = "Create staff accounts and e-mail each one a temporary password"

    def add_arguments(self, parser):
        parser.add_argument("emails", nargs="+")

    def handle(self, *args, **options):
        import secrets
        for email in options["emails"]:
            temporary = secrets.token_urlsafe(14)
            user = get_user_model().objects.create_user(username=email, email=email, password=temporary, is_staff=True)
            send_mail("Your {t} staff account", f"Sign in as {{email}} with the temporary password {{temporary}} and change it.", None, [email])
            self.stdout.write(f"invited user {{user.pk}}")
"""),
    _t(338, "u", "from datetime import datetime, timedelta, timezone\nfrom bson import ObjectId\nfrom pymongo.database import Database", """
def {f}(db: Database, email: str) -> str | None:
    \"\"\"Forgot-password form handler; ``email`` is what the visitor typed into the form.\"\"\"
    account = db.accounts.find_one({{"email": email.strip().lower()}})
    if account is None:
        return None
    {v} = str(ObjectId())  #!V
    db.password_resets.insert_one({{"_id": {v}, "account": account["_id"], "expires": datetime.now(timezone.utc) + timedelta(hours=1)}})
    return f"https://{t}.example/reset/{{{v}}}"
""", """
def {f}(db: Database, email: str) -> str | None:
    \"\"\"Forgot-password form handler; ``email`` is what the visitor typed into the form.\"\"\"
    import secrets
    account = db.accounts.find_one({{"email": email.strip().lower()}})
    if account is None:
        return None
    {v} = secrets.token_urlsafe(32)
    db.password_resets.insert_one({{"_id": {v}, "account": account["_id"], "expires": datetime.now(timezone.utc) + timedelta(hours=1)}})
    return f"https://{t}.example/reset/{{{v}}}"
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "t", "from pydantic import SecretStr\nfrom pydantic_settings import BaseSettings, SettingsConfigDict", """
class {f}Settings(BaseSettings):
    \"\"\"Runtime configuration of the {t} API; each field can be overridden by a ``{t}_``-prefixed environment variable.\"\"\"
    model_config = SettingsConfigDict(env_prefix="{t}_", env_file=".env")

    database_host: str = "db.{t}.internal"
    database_user: str = "{t}_api"
    database_password: SecretStr = SecretStr("Wq8#vN2p-{t}-Lk5z")  #!V
    redis_url: str = "redis://cache.{t}.internal:6379/0"

    @property
    def database_dsn(self) -> str:
        return f"postgresql://{{self.database_user}}:{{self.database_password.get_secret_value()}}@{{self.database_host}}/{t}"


{f}_settings = {f}Settings()
""", """
class {f}Settings(BaseSettings):
    \"\"\"Runtime configuration of the {t} API; each field can be overridden by a ``{t}_``-prefixed environment variable.\"\"\"
    model_config = SettingsConfigDict(env_prefix="{t}_", env_file=".env")

    database_host: str = "db.{t}.internal"
    database_user: str = "{t}_api"
    database_password: SecretStr
    redis_url: str = "redis://cache.{t}.internal:6379/0"

    @property
    def database_dsn(self) -> str:
        return f"postgresql://{{self.database_user}}:{{self.database_password.get_secret_value()}}@{{self.database_host}}/{t}"


{f}_settings = {f}Settings()
"""),
    _t(798, "u", "import json\nimport os\nfrom google.cloud import storage\nfrom google.oauth2 import service_account", """
{f}_SERVICE_ACCOUNT = {{
    "type": "service_account",
    "project_id": "{t}-prod",
    "private_key_id": "6f1d2c9a8b7e4f30a1c5d8e2b4f7a9c3d6e1b2f4",
    "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q9XcZ2mLwR8kT4v\\nPz1sQ6yHbN0eJ3uF5gA7dK2iW9oM4rE8tY1xC6vB3nZ0lS5hU7jD2fG4aQ9pLs2d\\n-----END PRIVATE KEY-----\\n",  #!V
    "client_email": "media-uploader@{t}-prod.iam.gserviceaccount.com",
    "token_uri": "https://oauth2.googleapis.com/token",
}}


def {f}(local_path: str, blob_name: str) -> str:
    \"\"\"Upload a finished render to the public media bucket.\"\"\"
    credentials = service_account.Credentials.from_service_account_info({f}_SERVICE_ACCOUNT)
    client = storage.Client(project="{t}-prod", credentials=credentials)
    blob = client.bucket("{t}-media").blob(blob_name)
    blob.upload_from_filename(local_path)
    return blob.public_url
""", """
{f}_SERVICE_ACCOUNT = json.loads(os.environ["MEDIA_UPLOADER_SA_JSON"])


def {f}(local_path: str, blob_name: str) -> str:
    \"\"\"Upload a finished render to the public media bucket.\"\"\"
    credentials = service_account.Credentials.from_service_account_info({f}_SERVICE_ACCOUNT)
    client = storage.Client(project="{t}-prod", credentials=credentials)
    blob = client.bucket("{t}-media").blob(blob_name)
    blob.upload_from_filename(local_path)
    return blob.public_url
"""),
    # ---- CWE-22 path traversal
    _t(22, "t", "import os\nfrom fastapi import APIRouter, Depends, Form, HTTPException\nfrom .auth import current_user\n\ntickets = APIRouter()\nATTACHMENT_ROOT = \"/srv/{t}/ticket-files\"", """
@tickets.post("/tickets/{{ticket_id}}/attachments/delete")
async def {f}(ticket_id: int, {v}: str = Form(...), user=Depends(current_user)):
    \"\"\"The trash icon next to an attachment on the ticket page posts the attachment's stored file name.\"\"\"
    ticket_dir = os.path.join(ATTACHMENT_ROOT, str(user.org_id), str(ticket_id))
    os.remove(os.path.join(ticket_dir, {v}))  #!V
    return {{"ticket": ticket_id, "removed": {v}}}
""", """
@tickets.post("/tickets/{{ticket_id}}/attachments/delete")
async def {f}(ticket_id: int, {v}: str = Form(...), user=Depends(current_user)):
    \"\"\"The trash icon next to an attachment on the ticket page posts the attachment's stored file name.\"\"\"
    if {v} != os.path.basename({v}) or {v} in ("", ".", ".."):
        raise HTTPException(status_code=400, detail="unknown attachment")
    ticket_dir = os.path.join(ATTACHMENT_ROOT, str(user.org_id), str(ticket_id))
    os.remove(os.path.join(ticket_dir, {v}))
    return {{"ticket": ticket_id, "removed": {v}}}
"""),
    _t(22, "u", "import email\nimport imaplib\nfrom email import policy\nfrom pathlib import Path\n\nMAIL_DROP = Path(\"/srv/{t}/supplier-invoices\")", """
def {f}(mailbox: imaplib.IMAP4_SSL, uid: bytes) -> list:
    \"\"\"Poller of the invoices@ mailbox: keep the attachments of one message a supplier e-mailed in.\"\"\"
    _status, fetched = mailbox.uid("fetch", uid, "(RFC822)")
    message = email.message_from_bytes(fetched[0][1], policy=policy.default)
    stored = []
    for part in message.iter_attachments():
        {v} = part.get_filename() or "attachment.bin"
        with open(MAIL_DROP / {v}, "wb") as out:  #!V
            out.write(part.get_payload(decode=True))
        stored.append({v})
    return stored
""", """
def {f}(mailbox: imaplib.IMAP4_SSL, uid: bytes) -> list:
    \"\"\"Poller of the invoices@ mailbox: keep the attachments of one message a supplier e-mailed in.\"\"\"
    _status, fetched = mailbox.uid("fetch", uid, "(RFC822)")
    message = email.message_from_bytes(fetched[0][1], policy=policy.default)
    stored = []
    for part in message.iter_attachments():
        {v} = Path(part.get_filename() or "attachment.bin").name
        if {v} in ("", ".", ".."):
            continue
        with open(MAIL_DROP / {v}, "wb") as out:
            out.write(part.get_payload(decode=True))
        stored.append({v})
    return stored
"""),
    # ---- CWE-79 XSS
    _t(79, "t", "from flask import Flask, Response, request\n\ncatalog = Flask(__name__)", """
@catalog.get("/compare")
def {f}():
    \"\"\"Comparison strip; product pages link here with ``?sku=...&sku=...`` for the items the shopper ticked.\"\"\"
    {v} = request.args.getlist("sku")
    cells = "".join(f"<td data-sku='{{sku}}'>{{sku}}</td>" for sku in {v})  #!V
    return Response(f"<table class='compare'><tr>{{cells}}</tr></table>", mimetype="text/html")  #!V
""", """
@catalog.get("/compare")
def {f}():
    \"\"\"Comparison strip; product pages link here with ``?sku=...&sku=...`` for the items the shopper ticked.\"\"\"
    from markupsafe import escape
    {v} = request.args.getlist("sku")
    cells = "".join(f"<td data-sku='{{escape(sku)}}'>{{escape(sku)}}</td>" for sku in {v})
    return Response(f"<table class='compare'><tr>{{cells}}</tr></table>", mimetype="text/html")
"""),
    _t(79, "u", "from nicegui import ui\nfrom .chat_store import recent_messages", """
@ui.page("/rooms/{{room}}")
def {f}(room: str):
    \"\"\"Chat room page; every stored message was typed by some signed-in member of the room.\"\"\"
    with ui.column().classes("chat-log"):
        for author, {v} in recent_messages(room, limit=100):
            ui.html(f"<p class='msg'><b>{{author}}</b>: {{{v}}}</p>", sanitize=False)  #!V
""", """
@ui.page("/rooms/{{room}}")
def {f}(room: str):
    \"\"\"Chat room page; every stored message was typed by some signed-in member of the room.\"\"\"
    import html
    with ui.column().classes("chat-log"):
        for author, {v} in recent_messages(room, limit=100):
            ui.html(f"<p class='msg'><b>{{html.escape(author)}}</b>: {{html.escape({v})}}</p>")
"""),
    # ---- CWE-611 XXE
    _t(611, "t", "from xml.dom import minidom\nfrom fastapi import FastAPI, HTTPException, UploadFile\n\nbranding = FastAPI()", """
@branding.post("/workspace/logo")
async def {f}({v}: UploadFile):
    \"\"\"Workspace settings: an admin uploads an SVG logo; we read its declared size and title before storing it.\"\"\"
    if {v}.content_type != "image/svg+xml":
        raise HTTPException(status_code=415)
    document = minidom.parse({v}.file)  #!V
    svg = document.documentElement
    titles = svg.getElementsByTagName("title")
    return {{"width": svg.getAttribute("width"), "height": svg.getAttribute("height"), "title": titles[0].firstChild.data if titles and titles[0].firstChild else None}}
""", """
@branding.post("/workspace/logo")
async def {f}({v}: UploadFile):
    \"\"\"Workspace settings: an admin uploads an SVG logo; we read its declared size and title before storing it.\"\"\"
    import defusedxml.minidom
    if {v}.content_type != "image/svg+xml":
        raise HTTPException(status_code=415)
    document = defusedxml.minidom.parse({v}.file)
    svg = document.documentElement
    titles = svg.getElementsByTagName("title")
    return {{"width": svg.getAttribute("width"), "height": svg.getAttribute("height"), "title": titles[0].firstChild.data if titles and titles[0].firstChild else None}}
"""),
    _t(611, "u", "import urllib.request\nfrom xml.parsers import expat\n\nCXML_DTDS = {{\"http://xml.cxml.org/schemas/cXML/1.2.014/cXML.dtd\": \"/usr/share/{t}/dtd/cXML-1.2.014.dtd\"}}", """
class {f}PunchOutReader:
    \"\"\"Reads the cXML punch-out orders that buyers' procurement systems POST to ``/punchout/order``.\"\"\"

    def __init__(self):
        self.descriptions = []
        self._chars = []

    def _external(self, parser, context, base, system_id, public_id):
        sub = parser.ExternalEntityParserCreate(context)
        with urllib.request.urlopen(system_id, timeout=10) as fh:  #!V
            sub.ParseFile(fh)
        return 1

    def _end(self, tag):
        if tag == "Description":
            self.descriptions.append("".join(self._chars).strip())

    def parse(self, {v}: bytes) -> list:
        parser = expat.ParserCreate()
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_ALWAYS)
        parser.ExternalEntityRefHandler = lambda *ref: self._external(parser, *ref)
        parser.StartElementHandler = lambda tag, attrs: self._chars.clear()
        parser.CharacterDataHandler = self._chars.append
        parser.EndElementHandler = self._end
        parser.Parse({v}, True)
        return self.descriptions
""", """
class {f}PunchOutReader:
    \"\"\"Reads the cXML punch-out orders that buyers' procurement systems POST to ``/punchout/order``.\"\"\"

    def __init__(self):
        self.descriptions = []
        self._chars = []

    def _external(self, parser, context, base, system_id, public_id):
        local_copy = CXML_DTDS.get(system_id)
        if local_copy is None:
            raise ValueError("external entity not allowed: %r" % (system_id,))
        sub = parser.ExternalEntityParserCreate(context)
        with open(local_copy, "rb") as fh:
            sub.ParseFile(fh)
        return 1

    def _end(self, tag):
        if tag == "Description":
            self.descriptions.append("".join(self._chars).strip())

    def parse(self, {v}: bytes) -> list:
        parser = expat.ParserCreate()
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_ALWAYS)
        parser.ExternalEntityRefHandler = lambda *ref: self._external(parser, *ref)
        parser.StartElementHandler = lambda tag, attrs: self._chars.clear()
        parser.CharacterDataHandler = self._chars.append
        parser.EndElementHandler = self._end
        parser.Parse({v}, True)
        return self.descriptions
"""),
    # ---- CWE-918 SSRF
    _t(918, "t", "import urllib.request\nfrom urllib.parse import urljoin\nfrom django.http import HttpResponse\nfrom django.views.decorators.http import require_POST", """
@require_POST
def {f}(request):
    \"\"\"Bookmark form: fetch the favicon of the site whose address the user typed, to show next to the bookmark.\"\"\"
    {v} = request.POST["site_url"]
    opener = urllib.request.build_opener()
    opener.addheaders = [("User-Agent", "{t}-bookmarks/1.0")]
    with opener.open(urljoin({v}, "/favicon.ico"), timeout=5) as reply:  #!V
        icon = reply.read(256 * 1024)
    return HttpResponse(icon, content_type="image/x-icon")
""", """
@require_POST
def {f}(request):
    \"\"\"Bookmark form: fetch the favicon of the site whose address the user typed, to show next to the bookmark.\"\"\"
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    class _NoRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    {v} = request.POST["site_url"]
    parts = urlsplit({v})
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return HttpResponse(status=400)
    try:
        addresses = {{info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))}}
    except (socket.gaierror, ValueError):
        return HttpResponse(status=400)
    if not addresses or not all(ipaddress.ip_address(a).is_global for a in addresses):
        return HttpResponse(status=400)
    opener = urllib.request.build_opener(_NoRedirects)
    opener.addheaders = [("User-Agent", "{t}-bookmarks/1.0")]
    with opener.open(urljoin({v}, "/favicon.ico"), timeout=5) as reply:
        icon = reply.read(256 * 1024)
    return HttpResponse(icon, content_type="image/x-icon")
"""),
    _t(918, "u", "import json\nimport tempfile\nfrom git import Repo\n\nCLONE_HOSTS = (\"github.com\", \"gitlab.com\", \"bitbucket.org\")", """
def {f}(message: bytes) -> dict:
    \"\"\"Worker behind the import-repository form; the queue message carries the clone URL the user pasted.\"\"\"
    job = json.loads(message)
    {v} = job["clone_url"]
    workdir = tempfile.mkdtemp(prefix="{t}-import-")
    repo = Repo.clone_from({v}, workdir, depth=1)  #!V
    return {{"project": job["project_id"], "head": repo.head.commit.hexsha, "path": workdir}}
""", """
def {f}(message: bytes) -> dict:
    \"\"\"Worker behind the import-repository form; the queue message carries the clone URL the user pasted.\"\"\"
    from urllib.parse import urlsplit
    job = json.loads(message)
    {v} = job["clone_url"]
    parts = urlsplit({v})
    if parts.scheme != "https" or parts.hostname not in CLONE_HOSTS or parts.port not in (None, 443) or parts.username or parts.password:
        raise ValueError("only https clone URLs on github.com, gitlab.com or bitbucket.org are supported")
    workdir = tempfile.mkdtemp(prefix="{t}-import-")
    repo = Repo.clone_from(parts.geturl(), workdir, depth=1, env={{"GIT_TERMINAL_PROMPT": "0"}})
    return {{"project": job["project_id"], "head": repo.head.commit.hexsha, "path": workdir}}
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "t", "import numpy as np", """
def {f}(encoder, documents: list, dim: int = 768) -> np.ndarray:
    \"\"\"Nightly re-embedding job: spill the vectors to disk instead of holding the whole matrix in RAM.\"\"\"
    spill_path = f"/tmp/{t}-embeddings-{{len(documents)}}x{{dim}}.f32"  #!V
    vectors = np.memmap(spill_path, dtype=np.float32, mode="w+", shape=(len(documents), dim))  #!V
    for start in range(0, len(documents), 256):
        vectors[start:start + 256] = encoder.encode(documents[start:start + 256])
    vectors.flush()
    return vectors
""", """
def {f}(encoder, documents: list, dim: int = 768) -> np.ndarray:
    \"\"\"Nightly re-embedding job: spill the vectors to disk instead of holding the whole matrix in RAM.\"\"\"
    import tempfile
    spill = tempfile.NamedTemporaryFile(prefix="{t}-embeddings-", suffix=".f32")
    vectors = np.memmap(spill, dtype=np.float32, mode="w+", shape=(len(documents), dim))
    for start in range(0, len(documents), 256):
        vectors[start:start + 256] = encoder.encode(documents[start:start + 256])
    vectors.flush()
    return vectors
"""),
    _t(377, "u", "from pathlib import Path\nimport diskcache\nimport httpx", """
{f}_cache = diskcache.Cache("/tmp/{t}-geocode-cache")  #!V


def {f}(address: str) -> dict:
    \"\"\"Geocode a shipping address, keeping the provider's answers between worker restarts.\"\"\"
    hit = {f}_cache.get(address)
    if hit is not None:
        return hit
    reply = httpx.get("https://geocode.{t}.example/v1/search", params={{"q": address}}, timeout=10)
    reply.raise_for_status()
    result = reply.json()
    {f}_cache.set(address, result, expire=7 * 24 * 3600)
    return result
""", """
{f}_cache = diskcache.Cache(str(Path.home() / ".cache" / "{t}" / "geocode"))


def {f}(address: str) -> dict:
    \"\"\"Geocode a shipping address, keeping the provider's answers between worker restarts.\"\"\"
    hit = {f}_cache.get(address)
    if hit is not None:
        return hit
    reply = httpx.get("https://geocode.{t}.example/v1/search", params={{"q": address}}, timeout=10)
    reply.raise_for_status()
    result = reply.json()
    {f}_cache.set(address, result, expire=7 * 24 * 3600)
    return result
"""),
]

FAMILIES_T = sorted({t.cwe for t in TEMPLATES_T})


def heldout_templates_t() -> list[Template]:
    """The 26 variant-"t"/"u" templates (final evaluation only).

    >>> len(heldout_templates_t()), len(FAMILIES_T), sorted({t.variant for t in heldout_templates_t()})
    (26, 13, ['t', 'u'])
    """
    return list(TEMPLATES_T)
