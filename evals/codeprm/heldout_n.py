'''Blind template variants "n" and "o": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-4 system, evaluated once (2026-12-01 09:50 UTC).
Validation data since (embedded in the VAL hosts by benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("n", "o")

TEMPLATES_N: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "n", "import falcon\nfrom invoke import run\n\nREPO_DIR = \"/srv/{t}/repo\"", """
class {f}CommitResource:
    \"\"\"Release dashboard: show the commit or tag a reviewer typed into the search box.\"\"\"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        {v} = req.get_param("ref", required=True)
        shown = run(f"git -C {{REPO_DIR}} show --stat --format=%H%n%an%n%s {{{v}}}", hide=True, warn=True)  #!V
        resp.media = {{"ref": {v}, "ok": shown.ok, "stat": shown.stdout}}
""", """
class {f}CommitResource:
    \"\"\"Release dashboard: show the commit or tag a reviewer typed into the search box.\"\"\"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        import shlex
        {v} = req.get_param("ref", required=True)
        shown = run(shlex.join(["git", "-C", REPO_DIR, "show", "--stat", "--format=%H%n%an%n%s", "--end-of-options", {v}]), hide=True, warn=True)
        resp.media = {{"ref": {v}, "ok": shown.ok, "stat": shown.stdout}}
"""),
    _t(78, "o", "import os\nimport pexpect", """
def {f}(job: dict) -> int:
    \"\"\"Backup worker; ``job`` is queued by the tenant self-service page ("back up my database").\"\"\"
    database = job["database"]
    archive = f"/backups/{t}/{{int(job['job_id'])}}.sql.gz"
    child = pexpect.spawn(f"/bin/bash -c 'pg_dump -h db.{t}.internal -U backup -W {{database}} | gzip > {{archive}}'", timeout=900)  #!V
    child.expect("Password:")
    child.sendline(os.environ["BACKUP_DB_PASSWORD"])
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus
""", """
def {f}(job: dict) -> int:
    \"\"\"Backup worker; ``job`` is queued by the tenant self-service page ("back up my database").\"\"\"
    database = job["database"]
    archive = f"/backups/{t}/{{int(job['job_id'])}}.sql.gz"
    script = 'pg_dump -h db.{t}.internal -U backup -W -- "$1" | gzip > "$2"'
    child = pexpect.spawn("/bin/bash", ["-c", script, "pg-backup", database, archive], timeout=900)
    child.expect("Password:")
    child.sendline(os.environ["BACKUP_DB_PASSWORD"])
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus
"""),
    # ---- CWE-89 SQL injection
    _t(89, "n", "from litestar import patch\nfrom psycopg import AsyncConnection", """
@patch("/{t}/{{item_id:int}}/label")
async def {f}(item_id: int, data: dict[str, str], db: AsyncConnection) -> dict:
    \"\"\"Rename an item's label; ``data`` is the JSON body the web client sent.\"\"\"
    new_label = data["label"]
    colour = data.get("colour", "grey")
    await db.execute(f"UPDATE {t} SET label = '{{new_label}}', colour = '{{colour}}' WHERE id = {{item_id}}")  #!V
    await db.commit()
    return {{"id": item_id, "label": new_label, "colour": colour}}
""", """
@patch("/{t}/{{item_id:int}}/label")
async def {f}(item_id: int, data: dict[str, str], db: AsyncConnection) -> dict:
    \"\"\"Rename an item's label; ``data`` is the JSON body the web client sent.\"\"\"
    new_label = data["label"]
    colour = data.get("colour", "grey")
    await db.execute("UPDATE {t} SET label = %s, colour = %s WHERE id = %s", (new_label, colour, item_id))
    await db.commit()
    return {{"id": item_id, "label": new_label, "colour": colour}}
"""),
    _t(89, "o", "from django.db import connection\nfrom rest_framework.response import Response\nfrom rest_framework.views import APIView", """
class {f}MonthlyReportView(APIView):
    def get(self, request):
        \"\"\"Monthly totals; the optional filter comes from the report page's query string.\"\"\"
        sql = "SELECT date_trunc('month', created) AS month, sum(amount) FROM {t} WHERE tenant_id = %s"
        params = [request.user.tenant_id]
        {v} = request.query_params.get("category")
        if {v}:
            sql += " AND category = '" + {v} + "'"  #!V
        sql += " GROUP BY 1 ORDER BY 1"
        with connection.cursor() as cursor:
            cursor.execute(sql, params)  #!V
            rows = cursor.fetchall()
        return Response([{{"month": m.isoformat(), "total": float(s)}} for m, s in rows])
""", """
class {f}MonthlyReportView(APIView):
    def get(self, request):
        \"\"\"Monthly totals; the optional filter comes from the report page's query string.\"\"\"
        sql = "SELECT date_trunc('month', created) AS month, sum(amount) FROM {t} WHERE tenant_id = %s"
        params = [request.user.tenant_id]
        {v} = request.query_params.get("category")
        if {v}:
            sql += " AND category = %s"
            params.append({v})
        sql += " GROUP BY 1 ORDER BY 1"
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return Response([{{"month": m.isoformat(), "total": float(s)}} for m, s in rows])
"""),
    # ---- CWE-94 code injection
    _t(94, "n", "from fastapi import FastAPI\nfrom pydantic import BaseModel\n\npricing_api = FastAPI()", """
class {f}PriceRule(BaseModel):
    \"\"\"A discount rule a shop owner types in the admin UI, e.g. ``price * 0.9 if qty > 10 else price``.\"\"\"
    name: str
    formula: str

    def apply(self, price: float, qty: int) -> float:
        return float(eval(self.formula, {{"__builtins__": {{}}}}, {{"price": price, "qty": qty}}))  #!V


@pricing_api.post("/quote")
def {f}(rule: {f}PriceRule, price: float, qty: int = 1):
    return {{"rule": rule.name, "total": rule.apply(price, qty) * qty}}
""", """
class {f}PriceRule(BaseModel):
    \"\"\"A discount rule a shop owner types in the admin UI, e.g. ``price * 0.9 if qty > 10 else price``.\"\"\"
    name: str
    formula: str

    def apply(self, price: float, qty: int) -> float:
        import ast
        import operator
        ops = {{ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.Gt: operator.gt, ast.Lt: operator.lt, ast.GtE: operator.ge, ast.LtE: operator.le}}
        names = {{"price": price, "qty": qty}}

        def ev(node):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                return node.value
            if isinstance(node, ast.Name) and node.id in names:
                return names[node.id]
            if isinstance(node, ast.BinOp) and type(node.op) in ops:
                return ops[type(node.op)](ev(node.left), ev(node.right))
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in ops:
                return ops[type(node.ops[0])](ev(node.left), ev(node.comparators[0]))
            if isinstance(node, ast.IfExp):
                return ev(node.body) if ev(node.test) else ev(node.orelse)
            raise ValueError("unsupported expression in pricing rule")

        return float(ev(ast.parse(self.formula, mode="eval").body))


@pricing_api.post("/quote")
def {f}(rule: {f}PriceRule, price: float, qty: int = 1):
    return {{"rule": rule.name, "total": rule.apply(price, qty) * qty}}
"""),
    _t(94, "o", "import json\nfrom confluent_kafka import Consumer", """
def {f}(consumer: Consumer, sink) -> None:
    \"\"\"ETL worker: each message carries rows plus the column expression a tenant configured in the UI.\"\"\"
    while True:
        msg = consumer.poll(1.0)
        if msg is None or msg.error():
            continue
        {v} = json.loads(msg.value())
        scope = {{}}
        exec(f"def transform(row):\\n    return {{{v}['expression']}}", scope)  #!V
        sink.write_rows([scope["transform"](row) for row in {v}["rows"]])
""", """
def {f}(consumer: Consumer, sink) -> None:
    \"\"\"ETL worker: each message carries rows plus the column expression a tenant configured in the UI.\"\"\"
    from simpleeval import EvalWithCompoundTypes
    while True:
        msg = consumer.poll(1.0)
        if msg is None or msg.error():
            continue
        {v} = json.loads(msg.value())
        sink.write_rows([EvalWithCompoundTypes(names={{"row": row}}).eval({v}["expression"]) for row in {v}["rows"]])
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "n", "import base64\nimport pickle\nfrom sanic import Sanic, json as json_response\n\nstorefront = Sanic(\"{t}_storefront\")", """
@storefront.get("/cart")
async def {f}(request):
    \"\"\"Show the basket kept in the visitor's ``cart`` cookie.\"\"\"
    {v} = request.cookies.get("cart")
    cart = pickle.loads(base64.urlsafe_b64decode({v})) if {v} else {{"items": []}}  #!V
    return json_response({{"items": cart["items"], "count": len(cart["items"])}})
""", """
@storefront.get("/cart")
async def {f}(request):
    \"\"\"Show the basket kept in the visitor's ``cart`` cookie.\"\"\"
    from itsdangerous import BadSignature, URLSafeSerializer
    {v} = request.cookies.get("cart")
    try:
        cart = URLSafeSerializer(request.app.config.SECRET, salt="cart").loads({v}) if {v} else {{"items": []}}
    except BadSignature:
        cart = {{"items": []}}
    return json_response({{"items": cart["items"], "count": len(cart["items"])}})
"""),
    _t(502, "o", "import dill\nfrom google.cloud import pubsub_v1", """
class {f}TaskRunner:
    \"\"\"Runs the analysis tasks that notebook users submit through the ``{t}-tasks`` topic.\"\"\"

    def __init__(self, project: str, results):
        self.subscriber = pubsub_v1.SubscriberClient()
        self.path = self.subscriber.subscription_path(project, "{t}-tasks-sub")
        self.results = results

    def on_message(self, message) -> None:
        task = dill.loads(message.data)  #!V
        self.results.put(message.message_id, task["fn"](*task["args"]))
        message.ack()

    def serve(self):
        return self.subscriber.subscribe(self.path, callback=self.on_message)
""", """
class {f}TaskRunner:
    \"\"\"Runs the analysis tasks that notebook users submit through the ``{t}-tasks`` topic.\"\"\"

    def __init__(self, project: str, results):
        self.subscriber = pubsub_v1.SubscriberClient()
        self.path = self.subscriber.subscription_path(project, "{t}-tasks-sub")
        self.results = results

    def on_message(self, message) -> None:
        import json
        from .analysis import REGISTERED_TASKS
        task = json.loads(message.data)
        self.results.put(message.message_id, REGISTERED_TASKS[task["fn"]](*task["args"]))
        message.ack()

    def serve(self):
        return self.subscriber.subscribe(self.path, callback=self.on_message)
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "n", "import os\nimport typer\nfrom Crypto.Hash import MD5\nfrom .db import insert_user\n\ncli = typer.Typer()", """
@cli.command()
def {f}(email: str, admin: bool = False):
    \"\"\"``create-user``: prompt for the new account's password and store its hash.\"\"\"
    password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    salt = os.urandom(16)
    password_hash = salt.hex() + "$" + MD5.new(salt + password.encode()).hexdigest()  #!V
    insert_user(email=email, password_hash=password_hash, is_admin=admin)
    typer.echo(f"created {{email}}")
""", """
@cli.command()
def {f}(email: str, admin: bool = False):
    \"\"\"``create-user``: prompt for the new account's password and store its hash.\"\"\"
    import bcrypt
    password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=12)).decode()
    insert_user(email=email, password_hash=password_hash, is_admin=admin)
    typer.echo(f"created {{email}}")
"""),
    _t(328, "o", "from passlib import hash as passlib_hash\nfrom sqlalchemy import String\nfrom sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, validates\n\n\nclass Base(DeclarativeBase):\n    pass", """
class {f}Member(Base):
    __tablename__ = "{t}"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(255), unique=True)
    password: Mapped[str] = mapped_column(String(255))

    @validates("password")
    def _hash_password(self, key, raw_password):
        \"\"\"``member.password = form.password.data`` stores the hash, never the plain text.\"\"\"
        return passlib_hash.ldap_salted_sha1.hash(raw_password)  #!V

    def check_password(self, candidate: str) -> bool:
        return passlib_hash.ldap_salted_sha1.verify(candidate, self.password)
""", """
class {f}Member(Base):
    __tablename__ = "{t}"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(255), unique=True)
    password: Mapped[str] = mapped_column(String(255))

    @validates("password")
    def _hash_password(self, key, raw_password):
        \"\"\"``member.password = form.password.data`` stores the hash, never the plain text.\"\"\"
        return passlib_hash.argon2.hash(raw_password)

    def check_password(self, candidate: str) -> bool:
        return passlib_hash.argon2.verify(candidate, self.password)
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "n", "import os\nfrom cryptography.hazmat.primitives import padding\nfrom cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes\nfrom sqlalchemy.types import LargeBinary, TypeDecorator", """
class {f}EncryptedText(TypeDecorator):
    \"\"\"Column type for customers' national ID numbers; the key is fetched from the KMS at start-up.\"\"\"
    impl = LargeBinary
    cache_ok = True

    def __init__(self, key: bytes):
        super().__init__()
        self.key = key

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        iv = os.urandom(8)
        padder = padding.PKCS7(64).padder()
        enc = Cipher(algorithms.TripleDES(self.key), modes.CBC(iv)).encryptor()  #!V
        return iv + enc.update(padder.update(value.encode()) + padder.finalize()) + enc.finalize()

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        dec = Cipher(algorithms.TripleDES(self.key), modes.CBC(value[:8])).decryptor()  #!V
        unpadder = padding.PKCS7(64).unpadder()
        return (unpadder.update(dec.update(value[8:]) + dec.finalize()) + unpadder.finalize()).decode()
""", """
class {f}EncryptedText(TypeDecorator):
    \"\"\"Column type for customers' national ID numbers; the key is fetched from the KMS at start-up.\"\"\"
    impl = LargeBinary
    cache_ok = True

    def __init__(self, key: bytes):
        super().__init__()
        self.key = key

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        nonce = os.urandom(12)
        enc = Cipher(algorithms.AES(self.key), modes.GCM(nonce)).encryptor()
        sealed = enc.update(value.encode()) + enc.finalize()
        return nonce + enc.tag + sealed

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        dec = Cipher(algorithms.AES(self.key), modes.GCM(value[:12], value[12:28])).decryptor()
        return (dec.update(value[28:]) + dec.finalize()).decode()
"""),
    _t(327, "o", "import ssl\nfrom ldap3 import Connection, Server, Tls", """
class {f}DirectoryBackend:
    \"\"\"Sign-in backend: checks the username and password typed into the login form against AD.\"\"\"

    def __init__(self, uri: str = "ldaps://dc1.{t}.corp:636"):
        tls = Tls(validate=ssl.CERT_NONE)  #!V
        self.server = Server(uri, use_ssl=True, tls=tls, connect_timeout=5)

    def authenticate(self, username: str, password: str) -> bool:
        if not username or not password:
            return False
        conn = Connection(self.server, user=f"{{username}}@{t}.corp", password=password)
        try:
            return conn.bind()
        finally:
            conn.unbind()
""", """
class {f}DirectoryBackend:
    \"\"\"Sign-in backend: checks the username and password typed into the login form against AD.\"\"\"

    def __init__(self, uri: str = "ldaps://dc1.{t}.corp:636"):
        tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file="/etc/ssl/certs/{t}-corp-root-ca.pem")
        self.server = Server(uri, use_ssl=True, tls=tls, connect_timeout=5)

    def authenticate(self, username: str, password: str) -> bool:
        if not username or not password:
            return False
        conn = Connection(self.server, user=f"{{username}}@{t}.corp", password=password)
        try:
            return conn.bind()
        finally:
            conn.unbind()
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "n", "import hmac\nimport random\nimport falcon", """
class {f}CsrfMiddleware:
    \"\"\"Double-submit CSRF protection: a token cookie that every form must echo in ``X-CSRF-Token``.\"\"\"

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.method in ("POST", "PUT", "PATCH", "DELETE"):
            expected = req.cookies.get("csrftoken", "")
            if not expected or not hmac.compare_digest(req.get_header("X-CSRF-Token", default=""), expected):
                raise falcon.HTTPForbidden(description="CSRF check failed")

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        if "csrftoken" not in req.cookies:
            token = f"{{random.randrange(16 ** 32):032x}}"  #!V
            resp.set_cookie("csrftoken", token, secure=True, http_only=False, same_site="Strict")
""", """
class {f}CsrfMiddleware:
    \"\"\"Double-submit CSRF protection: a token cookie that every form must echo in ``X-CSRF-Token``.\"\"\"

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.method in ("POST", "PUT", "PATCH", "DELETE"):
            expected = req.cookies.get("csrftoken", "")
            if not expected or not hmac.compare_digest(req.get_header("X-CSRF-Token", default=""), expected):
                raise falcon.HTTPForbidden(description="CSRF check failed")

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        import secrets
        if "csrftoken" not in req.cookies:
            token = f"{{secrets.randbelow(16 ** 32):032x}}"
            resp.set_cookie("csrftoken", token, secure=True, http_only=False, same_site="Strict")
"""),
    _t(338, "o", "import random\nimport uuid\nfrom dataclasses import dataclass\nfrom datetime import datetime, timedelta, timezone", """
@dataclass
class {f}ShareLink:
    \"\"\"Link that lets anyone holding it download a private document.\"\"\"
    document_id: int
    token: str
    expires_at: datetime

    @classmethod
    def create(cls, document_id: int, days: int = 7) -> "{f}ShareLink":
        token = str(uuid.UUID(int=random.getrandbits(128), version=4))  #!V
        return cls(document_id, token, datetime.now(timezone.utc) + timedelta(days=days))

    def url(self) -> str:
        return f"https://share.{t}.example/d/{{self.token}}"
""", """
@dataclass
class {f}ShareLink:
    \"\"\"Link that lets anyone holding it download a private document.\"\"\"
    document_id: int
    token: str
    expires_at: datetime

    @classmethod
    def create(cls, document_id: int, days: int = 7) -> "{f}ShareLink":
        import secrets
        token = str(uuid.UUID(int=secrets.randbits(128), version=4))
        return cls(document_id, token, datetime.now(timezone.utc) + timedelta(days=days))

    def url(self) -> str:
        return f"https://share.{t}.example/d/{{self.token}}"
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "n", "import os\nimport stripe", """
stripe.api_key = "sk_live_51Nq{t}8ZbXk2LmP0dR7tYw3VcQe9HsJf"  #!V


def {f}(order_id: int, amount_cents: int, currency: str = "eur") -> str:
    \"\"\"Create the payment intent of a checkout; returns the client secret for Stripe.js.\"\"\"
    intent = stripe.PaymentIntent.create(
        amount=amount_cents,
        currency=currency,
        metadata={{"order_id": str(order_id)}},
        automatic_payment_methods={{"enabled": True}},
    )
    return intent.client_secret
""", """
stripe.api_key = os.environ["STRIPE_SECRET_KEY"]


def {f}(order_id: int, amount_cents: int, currency: str = "eur") -> str:
    \"\"\"Create the payment intent of a checkout; returns the client secret for Stripe.js.\"\"\"
    intent = stripe.PaymentIntent.create(
        amount=amount_cents,
        currency=currency,
        metadata={{"order_id": str(order_id)}},
        automatic_payment_methods={{"enabled": True}},
    )
    return intent.client_secret
"""),
    _t(798, "o", "import os\nfrom pathlib import Path\n\nBASE_DIR = Path(__file__).resolve().parent.parent", """
DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "{t}",
        "USER": "{t}_app",
        "PASSWORD": "pG-{t}-9v!Qw27Lx",  #!V
        "HOST": os.environ.get("DB_HOST", "localhost"),
        "PORT": "5432",
        "CONN_MAX_AGE": 60,
    }}
}}
""", """
DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "{t}",
        "USER": "{t}_app",
        "PASSWORD": os.environ["DB_PASSWORD"],
        "HOST": os.environ.get("DB_HOST", "localhost"),
        "PORT": "5432",
        "CONN_MAX_AGE": 60,
    }}
}}
"""),
    # ---- CWE-22 path traversal
    _t(22, "n", "import os\nimport falcon\n\nINBOX_DIR = \"/srv/{t}/inbox\"", """
class {f}UploadResource:
    \"\"\"Raw-body uploads from the desktop sync client, which sends the file name in ``X-File-Name``.\"\"\"

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        {v} = req.get_header("X-File-Name", required=True)
        destination = os.path.join(INBOX_DIR, {v})
        with open(destination, "wb") as out:  #!V
            out.write(req.bounded_stream.read())
        resp.status = falcon.HTTP_201
        resp.media = {{"stored": {v}}}
""", """
class {f}UploadResource:
    \"\"\"Raw-body uploads from the desktop sync client, which sends the file name in ``X-File-Name``.\"\"\"

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        {v} = req.get_header("X-File-Name", required=True)
        destination = os.path.realpath(os.path.join(INBOX_DIR, {v}))
        if os.path.dirname(destination) != os.path.realpath(INBOX_DIR):
            raise falcon.HTTPBadRequest(description="invalid file name")
        with open(destination, "wb") as out:
            out.write(req.bounded_stream.read())
        resp.status = falcon.HTTP_201
        resp.media = {{"stored": {v}}}
"""),
    _t(22, "o", "from io import BytesIO\nfrom pathlib import Path\nfrom litestar import Response, get\nfrom litestar.exceptions import NotFoundException\nfrom PIL import Image\n\nMEDIA_ROOT = Path(\"/srv/{t}/media\")", """
@get("/thumbnail")
async def {f}(src: str, size: int = 256) -> Response:
    \"\"\"Thumbnail of a media file; ``src`` is the relative path the gallery page asks for.\"\"\"
    picture = MEDIA_ROOT / src
    if not picture.is_file():
        raise NotFoundException()
    with Image.open(picture) as img:  #!V
        img.thumbnail((size, size))
        buf = BytesIO()
        img.save(buf, format="WEBP")
    return Response(content=buf.getvalue(), media_type="image/webp")
""", """
@get("/thumbnail")
async def {f}(src: str, size: int = 256) -> Response:
    \"\"\"Thumbnail of a media file; ``src`` is the relative path the gallery page asks for.\"\"\"
    picture = (MEDIA_ROOT / src).resolve()
    if not picture.is_relative_to(MEDIA_ROOT.resolve()) or not picture.is_file():
        raise NotFoundException()
    with Image.open(picture) as img:
        img.thumbnail((size, size))
        buf = BytesIO()
        img.save(buf, format="WEBP")
    return Response(content=buf.getvalue(), media_type="image/webp")
"""),
    # ---- CWE-79 XSS
    _t(79, "n", "import falcon\nfrom mako.template import Template", """
class {f}SearchResource:
    def __init__(self, index):
        self.index = index

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        {v} = req.get_param("q", default="")
        page = Template("<h1>Search</h1><p>${{len(hits)}} results for <b>${{term}}</b></p>")
        resp.content_type = falcon.MEDIA_HTML
        resp.text = page.render(term={v}, hits=self.index.search({v}))  #!V
""", """
class {f}SearchResource:
    def __init__(self, index):
        self.index = index

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        {v} = req.get_param("q", default="")
        page = Template("<h1>Search</h1><p>${{len(hits)}} results for <b>${{term}}</b></p>", default_filters=["h"])
        resp.content_type = falcon.MEDIA_HTML
        resp.text = page.render(term={v}, hits=self.index.search({v}))
"""),
    _t(79, "o", "import json\nfrom quart import Quart\nfrom .profiles import load_profile\n\nspa = Quart(__name__)", """
@spa.get("/u/<username>")
async def {f}(username: str):
    \"\"\"Server-render the profile page shell; the SPA hydrates from ``window.__PROFILE__``.\"\"\"
    profile = await load_profile(username)
    state = {{"username": profile.username, "bio": profile.bio, "links": profile.links}}
    return f"<!doctype html><div id='app'></div><script>window.__PROFILE__ = {{json.dumps(state)}};</script><script src='/static/app.js'></script>"  #!V
""", """
@spa.get("/u/<username>")
async def {f}(username: str):
    \"\"\"Server-render the profile page shell; the SPA hydrates from ``window.__PROFILE__``.\"\"\"
    profile = await load_profile(username)
    state = {{"username": profile.username, "bio": profile.bio, "links": profile.links}}
    payload = json.dumps(state).replace("<", "\\\\u003c").replace(">", "\\\\u003e").replace("&", "\\\\u0026")
    return f"<!doctype html><div id='app'></div><script>window.__PROFILE__ = {{payload}};</script><script src='/static/app.js'></script>"
"""),
    # ---- CWE-611 XXE
    _t(611, "n", "import xml.sax\nfrom sanic import Sanic, json as json_response\n\nfeeds = Sanic(\"{t}_feeds\")", """
class {f}PriceHandler(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.prices, self._sku, self._chars = {{}}, None, []

    def startElement(self, tag, attrs):
        if tag == "item":
            self._sku = attrs.get("sku")
        self._chars = []

    def characters(self, content):
        self._chars.append(content)

    def endElement(self, tag):
        if tag == "price" and self._sku:
            self.prices[self._sku] = float("".join(self._chars))


@feeds.post("/suppliers/prices")
async def {f}(request):
    \"\"\"Suppliers push their price list as an XML document.\"\"\"
    handler = {f}PriceHandler()
    xml.sax.parseString(request.body, handler)  #!V
    return json_response({{"updated": len(handler.prices)}})
""", """
class {f}PriceHandler(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.prices, self._sku, self._chars = {{}}, None, []

    def startElement(self, tag, attrs):
        if tag == "item":
            self._sku = attrs.get("sku")
        self._chars = []

    def characters(self, content):
        self._chars.append(content)

    def endElement(self, tag):
        if tag == "price" and self._sku:
            self.prices[self._sku] = float("".join(self._chars))


@feeds.post("/suppliers/prices")
async def {f}(request):
    \"\"\"Suppliers push their price list as an XML document.\"\"\"
    import defusedxml.sax
    handler = {f}PriceHandler()
    defusedxml.sax.parseString(request.body, handler)
    return json_response({{"updated": len(handler.prices)}})
"""),
    _t(611, "o", "import xml.etree.ElementTree as ET\nfrom starlette.requests import Request\nfrom starlette.responses import JSONResponse", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Bulk import: partners stream a (possibly huge) ``<contacts>`` export as the request body.\"\"\"
    parser = ET.XMLPullParser(events=("end",))
    imported = 0
    async for chunk in request.stream():
        parser.feed(chunk)  #!V
        for _event, elem in parser.read_events():
            if elem.tag == "contact":
                await request.app.state.contacts.upsert(elem.findtext("email"), elem.findtext("name"))
                imported += 1
                elem.clear()
    parser.close()
    return JSONResponse({{"imported": imported}})
""", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Bulk import: partners stream a (possibly huge) ``<contacts>`` export as the request body.\"\"\"
    import tempfile
    import defusedxml.ElementTree as SafeET
    imported = 0
    with tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024) as spool:
        async for chunk in request.stream():
            spool.write(chunk)
        spool.seek(0)
        for _event, elem in SafeET.iterparse(spool, events=("end",)):
            if elem.tag == "contact":
                await request.app.state.contacts.upsert(elem.findtext("email"), elem.findtext("name"))
                imported += 1
                elem.clear()
    return JSONResponse({{"imported": imported}})
"""),
    # ---- CWE-918 SSRF
    _t(918, "n", "import requests\nfrom fastapi import APIRouter, HTTPException\nfrom PIL import Image\nfrom pydantic import BaseModel, HttpUrl\n\navatars = APIRouter()\n\n\nclass AvatarImport(BaseModel):\n    image_url: HttpUrl", """
@avatars.post("/users/{{user_id}}/avatar/import")
def {f}(user_id: int, body: AvatarImport):
    \"\"\"Let a user set their avatar from an image URL they paste into the profile form.\"\"\"
    {v} = str(body.image_url)
    upstream = requests.get({v}, stream=True, timeout=10)  #!V
    if upstream.status_code != 200:
        raise HTTPException(status_code=422, detail="could not fetch image")
    with Image.open(upstream.raw) as img:
        img.thumbnail((256, 256))
        img.save(f"/srv/{t}/avatars/{{user_id}}.png")
    return {{"source": {v}}}
""", """
@avatars.post("/users/{{user_id}}/avatar/import")
def {f}(user_id: int, body: AvatarImport):
    \"\"\"Let a user set their avatar from an image URL they paste into the profile form.\"\"\"
    from urllib.parse import urlsplit
    {v} = str(body.image_url)
    if urlsplit({v}).scheme != "https" or urlsplit({v}).hostname not in ("images.unsplash.com", "i.imgur.com", "cdn.{t}.example"):
        raise HTTPException(status_code=400, detail="image host not supported")
    upstream = requests.get({v}, stream=True, timeout=10, allow_redirects=False)
    if upstream.status_code != 200:
        raise HTTPException(status_code=422, detail="could not fetch image")
    with Image.open(upstream.raw) as img:
        img.thumbnail((256, 256))
        img.save(f"/srv/{t}/avatars/{{user_id}}.png")
    return {{"source": {v}}}
"""),
    _t(918, "o", "from playwright.async_api import async_playwright", """
async def {f}(ctx, job: dict) -> str:
    \"\"\"arq task: render the page a customer entered in the "website preview" form to a PDF.\"\"\"
    {v} = job["page_url"]
    out_key = f"previews/{{int(job['preview_id'])}}.pdf"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch()
        page = await browser.new_page()
        await page.goto({v}, wait_until="networkidle")  #!V
        await ctx["storage"].put(out_key, await page.pdf(format="A4"))
        await browser.close()
    return out_key
""", """
async def {f}(ctx, job: dict) -> str:
    \"\"\"arq task: render the page a customer entered in the "website preview" form to a PDF.\"\"\"
    from urllib.parse import urlsplit

    def on_platform(url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme == "https" and (parts.hostname or "").endswith(".sites.{t}.example")

    {v} = job["page_url"]
    if not on_platform({v}):
        raise ValueError("only sites hosted on the platform can be previewed")
    out_key = f"previews/{{int(job['preview_id'])}}.pdf"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch()
        page = await browser.new_page()
        await page.route("**/*", lambda route: route.continue_() if on_platform(route.request.url) else route.abort())
        await page.goto({v}, wait_until="networkidle")
        await ctx["storage"].put(out_key, await page.pdf(format="A4"))
        await browser.close()
    return out_key
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "n", "import json\nimport zipfile\nfrom django.contrib.auth.decorators import login_required\nfrom django.http import FileResponse", """
@login_required
def {f}(request):
    \"\"\"The "download my data" page: bundle the signed-in user's records as a zip.\"\"\"
    user = request.user
    archive_path = f"/tmp/{t}-export-{{user.pk}}.zip"  #!V
    with zipfile.ZipFile(archive_path, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("profile.json", json.dumps({{"username": user.username, "email": user.email}}))
        bundle.writestr("orders.json", json.dumps(list(user.orders.values("id", "total", "created")), default=str))
    return FileResponse(open(archive_path, "rb"), as_attachment=True, filename="my-data.zip")
""", """
@login_required
def {f}(request):
    \"\"\"The "download my data" page: bundle the signed-in user's records as a zip.\"\"\"
    import tempfile
    user = request.user
    spool = tempfile.TemporaryFile(suffix=".zip")
    with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("profile.json", json.dumps({{"username": user.username, "email": user.email}}))
        bundle.writestr("orders.json", json.dumps(list(user.orders.values("id", "total", "created")), default=str))
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename="my-data.zip")
"""),
    _t(377, "o", "import asyncio\nimport json\nimport os", """
class {f}ControlSocket:
    \"\"\"Local control channel: the ``{t}ctl`` CLI connects here to pause or resume the worker.\"\"\"

    def __init__(self, worker):
        self.worker = worker
        self.path = "/tmp/{t}-worker.sock"  #!V

    async def _client(self, reader, writer):
        command = json.loads(await reader.readline())
        writer.write((json.dumps(await self.worker.control(command["action"])) + "\\n").encode())
        await writer.drain()
        writer.close()

    async def serve(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        server = await asyncio.start_unix_server(self._client, path=self.path)
        os.chmod(self.path, 0o600)
        return server
""", """
class {f}ControlSocket:
    \"\"\"Local control channel: the ``{t}ctl`` CLI connects here to pause or resume the worker.\"\"\"

    def __init__(self, worker):
        import tempfile
        self.worker = worker
        self.path = os.path.join(os.environ.get("XDG_RUNTIME_DIR") or tempfile.mkdtemp(prefix="{t}-"), "{t}-worker.sock")

    async def _client(self, reader, writer):
        command = json.loads(await reader.readline())
        writer.write((json.dumps(await self.worker.control(command["action"])) + "\\n").encode())
        await writer.drain()
        writer.close()

    async def serve(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        server = await asyncio.start_unix_server(self._client, path=self.path)
        os.chmod(self.path, 0o600)
        return server
"""),
]

FAMILIES_N = sorted({t.cwe for t in TEMPLATES_N})


def heldout_templates_n() -> list[Template]:
    """The 26 variant-"n"/"o" templates (final evaluation only).

    >>> len(heldout_templates_n()), len(FAMILIES_N), sorted({t.variant for t in heldout_templates_n()})
    (26, 13, ['n', 'o'])
    """
    return list(TEMPLATES_N)
