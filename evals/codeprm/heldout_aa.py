'''Blind template variants "aa" and "ab": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-8 system, evaluated once (2026-12-01 12:43 UTC); validation
data since (VAL hosts in benchmarks/codeprm_select.py; the round-9 analysers were fixed on it).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/w/x/y/z).
26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("aa", "ab")

TEMPLATES_AA: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "aa", "from kubernetes import client, config\nfrom kubernetes.stream import stream\n\nconfig.load_incluster_config()\ncore_api = client.CoreV1Api()", """
def {f}(namespace: str, {v}: str) -> str:
    \"\"\"Ops-portal "Rebuild search index" button; ``{v}`` is the tenant slug the support agent typed into the form.\"\"\"
    pods = core_api.list_namespaced_pod(namespace, label_selector="app={t}-web").items
    if not pods:
        raise LookupError("no web pod is running")
    return stream(
        core_api.connect_get_namespaced_pod_exec, pods[0].metadata.name, namespace,
        command=["/bin/sh", "-c", f"python manage.py rebuild_search_index --tenant {{{v}}} --noinput"],  #!V
        stderr=True, stdin=False, stdout=True, tty=False,
    )
""", """
def {f}(namespace: str, {v}: str) -> str:
    \"\"\"Ops-portal "Rebuild search index" button; ``{v}`` is the tenant slug the support agent typed into the form.\"\"\"
    pods = core_api.list_namespaced_pod(namespace, label_selector="app={t}-web").items
    if not pods:
        raise LookupError("no web pod is running")
    return stream(
        core_api.connect_get_namespaced_pod_exec, pods[0].metadata.name, namespace,
        command=["python", "manage.py", "rebuild_search_index", f"--tenant={{{v}}}", "--noinput"],
        stderr=True, stdin=False, stdout=True, tty=False,
    )
"""),
    _t(78, "ab", "import re\nfrom crontab import CronSlices, CronTab\n\nBACKUP_BIN = \"/usr/local/bin/{t}-backup\"", """
def {f}(schedule: str, database: str, {v}: str) -> None:
    \"\"\"Backups page of the self-hosted admin UI: the operator picks a schedule, a database and an ``s3://`` destination.\"\"\"
    if not CronSlices.is_valid(schedule):
        raise ValueError("invalid schedule")
    cron = CronTab(user=True)
    cron.remove_all(comment=f"{t}-backup:{{database}}")
    job = cron.new(command=f"{{BACKUP_BIN}} --database {{database}} --destination {{{v}}} >> /var/log/{t}/backup.log 2>&1", comment=f"{t}-backup:{{database}}")  #!V
    job.setall(schedule)
    cron.write()
""", """
def {f}(schedule: str, database: str, {v}: str) -> None:
    \"\"\"Backups page of the self-hosted admin UI: the operator picks a schedule, a database and an ``s3://`` destination.\"\"\"
    import shlex
    if not CronSlices.is_valid(schedule):
        raise ValueError("invalid schedule")
    if not re.fullmatch(r"[A-Za-z0-9_]{{1,63}}", database):
        raise ValueError("invalid database name")
    if not re.fullmatch(r"s3://[a-z0-9][a-z0-9.-]{{2,62}}(/[A-Za-z0-9._-]+)*/?", {v}):
        raise ValueError("destination must be an s3:// URL")
    cron = CronTab(user=True)
    cron.remove_all(comment=f"{t}-backup:{{database}}")
    command = " ".join([BACKUP_BIN, "--database", shlex.quote(database), "--destination", shlex.quote({v})])
    job = cron.new(command=command + " >> /var/log/{t}/backup.log 2>&1", comment=f"{t}-backup:{{database}}")
    job.setall(schedule)
    cron.write()
"""),
    # ---- CWE-89 SQL injection
    _t(89, "aa", "import os\nimport polars as pl\nimport sqlalchemy as sa\nfrom bottle import Bottle, request, response\n\nchurn_reports = Bottle()\nwarehouse = sa.create_engine(os.environ[\"WAREHOUSE_URL\"], pool_pre_ping=True)", """
@churn_reports.get("/api/churn.csv")
def {f}():
    \"\"\"CSV export behind the churn dashboard; ``plan`` and ``country`` are the dashboard's dropdown values, sent as query parameters.\"\"\"
    {v} = request.query.get("plan", "pro")
    country = request.query.get("country", "DE")
    with warehouse.connect() as conn:
        frame = pl.read_database(f"SELECT account_id, plan, country, churned_at FROM {t} WHERE plan = '{{{v}}}' AND country = '{{country}}' AND churned_at IS NOT NULL", connection=conn)  #!V
    response.content_type = "text/csv"
    return frame.write_csv()
""", """
@churn_reports.get("/api/churn.csv")
def {f}():
    \"\"\"CSV export behind the churn dashboard; ``plan`` and ``country`` are the dashboard's dropdown values, sent as query parameters.\"\"\"
    {v} = request.query.get("plan", "pro")
    country = request.query.get("country", "DE")
    with warehouse.connect() as conn:
        frame = pl.read_database(
            "SELECT account_id, plan, country, churned_at FROM {t} WHERE plan = :plan AND country = :country AND churned_at IS NOT NULL",
            connection=conn,
            execute_options={{"parameters": {{"plan": {v}, "country": country}}}},
        )
    response.content_type = "text/csv"
    return frame.write_csv()
"""),
    _t(89, "ab", "from dataclasses import dataclass\nimport pyodbc", """
@dataclass(frozen=True)
class {f}Request:
    \"\"\"Body of the "archive old invoices" form in the customer portal, relayed as JSON to the billing worker.\"\"\"
    customer_ref: str
    before: str


def {f}(conn: pyodbc.Connection, {v}: {f}Request) -> int:
    \"\"\"Runs the archiving stored procedure for one customer of the billing database.\"\"\"
    cursor = conn.cursor()
    cursor.execute("EXEC dbo.archive_{t} @customer_ref = N'%s', @before = '%s'" % ({v}.customer_ref, {v}.before))  #!V
    archived = cursor.rowcount
    conn.commit()
    return archived
""", """
@dataclass(frozen=True)
class {f}Request:
    \"\"\"Body of the "archive old invoices" form in the customer portal, relayed as JSON to the billing worker.\"\"\"
    customer_ref: str
    before: str


def {f}(conn: pyodbc.Connection, {v}: {f}Request) -> int:
    \"\"\"Runs the archiving stored procedure for one customer of the billing database.\"\"\"
    cursor = conn.cursor()
    cursor.execute("EXEC dbo.archive_{t} @customer_ref = ?, @before = ?", {v}.customer_ref, {v}.before)
    archived = cursor.rowcount
    conn.commit()
    return archived
"""),
    # ---- CWE-94 code injection
    _t(94, "aa", "import operator\nfrom dataclasses import asdict\nfrom starlette.requests import Request\nfrom starlette.responses import JSONResponse\nfrom .inventory import load_devices", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Device inventory API; ``?sort=`` is the column the user clicked in the table header, as a dotted attribute path such as ``site.rack``.\"\"\"
    {v} = request.query_params.get("sort", "hostname")
    devices = await load_devices(request.path_params["site_id"])
    sort_key = eval(f"lambda device: device.{{{v}}}")  #!V
    devices.sort(key=sort_key)
    return JSONResponse([asdict(device) for device in devices[:500]])
""", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Device inventory API; ``?sort=`` is the column the user clicked in the table header, as a dotted attribute path such as ``site.rack``.\"\"\"
    {v} = request.query_params.get("sort", "hostname")
    if not all(part.isidentifier() and not part.startswith("_") for part in {v}.split(".")):
        return JSONResponse({{"error": "unknown sort column"}}, status_code=400)
    devices = await load_devices(request.path_params["site_id"])
    sort_key = operator.attrgetter({v})
    try:
        devices.sort(key=sort_key)
    except AttributeError:
        return JSONResponse({{"error": "unknown sort column"}}, status_code=400)
    return JSONResponse([asdict(device) for device in devices[:500]])
"""),
    _t(94, "ab", "import jinja2\nfrom .gateway import send_sms\n\nsms_env = jinja2.Environment(undefined=jinja2.StrictUndefined)", """
def {f}(merchant, {v}: dict) -> None:
    \"\"\"Shipping notification SMS; each merchant writes its own message template on the settings page (``Hi {{{{ customer.first_name }}}}, ...``).\"\"\"
    message = sms_env.from_string(merchant.sms_template).render(order={v}, customer={v}["customer"])  #!V
    send_sms(to={v}["customer"]["phone"], body=message[:480])
""", """
def {f}(merchant, {v}: dict) -> None:
    \"\"\"Shipping notification SMS; each merchant writes its own message template on the settings page (``Hi {{{{ customer.first_name }}}}, ...``).\"\"\"
    import chevron
    message = chevron.render(merchant.sms_template, {{"order": {v}, "customer": {v}["customer"]}})
    send_sms(to={v}["customer"]["phone"], body=message[:480])
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "aa", "import json\nimport pickle\nfrom kafka import KafkaConsumer\nfrom .ledger import apply_adjustment", """
def {f}(bootstrap: str = "kafka.{t}.internal:9092") -> None:
    \"\"\"Consumer of the ``partner-adjustments`` topic, which the partner-facing ingestion gateway fills with what partners post.\"\"\"
    consumer = KafkaConsumer(
        "partner-adjustments",
        bootstrap_servers=bootstrap,
        group_id="{t}-ledger",
        value_deserializer=pickle.loads,  #!V
        enable_auto_commit=False,
    )
    for message in consumer:
        {v} = message.value
        apply_adjustment({v}["account"], int({v}["amount_cents"]), str({v}["reason"]))
        consumer.commit()
""", """
def {f}(bootstrap: str = "kafka.{t}.internal:9092") -> None:
    \"\"\"Consumer of the ``partner-adjustments`` topic, which the partner-facing ingestion gateway fills with what partners post.\"\"\"
    consumer = KafkaConsumer(
        "partner-adjustments",
        bootstrap_servers=bootstrap,
        group_id="{t}-ledger",
        value_deserializer=lambda encoded: json.loads(encoded.decode("utf-8")),
        enable_auto_commit=False,
    )
    for message in consumer:
        {v} = message.value
        apply_adjustment({v}["account"], int({v}["amount_cents"]), str({v}["reason"]))
        consumer.commit()
"""),
    _t(502, "ab", "from pathlib import Path\nfrom flask import Blueprint, jsonify, request\nfrom gensim.models import KeyedVectors\nfrom .embeddings import register_vectors\n\nprojects = Blueprint(\"projects\", __name__)\nWORKSPACE_ROOT = Path(\"/srv/{t}/workspaces\")", """
@projects.post("/projects/<int:project_id>/embeddings")
def {f}(project_id: int):
    \"\"\""Bring your own embeddings" on the labelling project's settings page; the annotator uploads word vectors trained elsewhere.\"\"\"
    {v} = request.files["vectors"]
    staged = WORKSPACE_ROOT / str(project_id) / "vectors.kv"
    staged.parent.mkdir(parents=True, exist_ok=True)
    {v}.save(staged)
    vectors = KeyedVectors.load(str(staged))  #!V
    register_vectors(project_id, vectors)
    return jsonify(dimensions=vectors.vector_size, words=len(vectors.key_to_index))
""", """
@projects.post("/projects/<int:project_id>/embeddings")
def {f}(project_id: int):
    \"\"\""Bring your own embeddings" on the labelling project's settings page; the annotator uploads word vectors trained elsewhere (word2vec binary format).\"\"\"
    {v} = request.files["vectors"]
    staged = WORKSPACE_ROOT / str(project_id) / "vectors.bin"
    staged.parent.mkdir(parents=True, exist_ok=True)
    {v}.save(staged)
    vectors = KeyedVectors.load_word2vec_format(str(staged), binary=True, limit=500_000)
    register_vectors(project_id, vectors)
    return jsonify(dimensions=vectors.vector_size, words=len(vectors.key_to_index))
"""),
    # ---- CWE-328 weak hash
    _t(328, "aa", "from sqlalchemy import Integer, String\nfrom sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column\nfrom sqlalchemy_utils import PasswordType\n\n\nclass ForumBase(DeclarativeBase):\n    pass", """
class {f}Member(ForumBase):
    \"\"\"Members of the community forum; the password is whatever was typed into the sign-up form.\"\"\"
    __tablename__ = "{t}_members"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password = mapped_column(PasswordType(schemes=["hex_md5"]), nullable=False)  #!V

    def check_password(self, {v}: str) -> bool:
        return self.password == {v}
""", """
class {f}Member(ForumBase):
    \"\"\"Members of the community forum; the password is whatever was typed into the sign-up form.\"\"\"
    __tablename__ = "{t}_members"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password = mapped_column(PasswordType(schemes=["pbkdf2_sha512"]), nullable=False)

    def check_password(self, {v}: str) -> bool:
        return self.password == {v}
"""),
    _t(328, "ab", "import smtplib\nfrom email.message import EmailMessage\nimport dkim\n\nDKIM_KEY_PATH = \"/etc/{t}/dkim/mail.private\"", """
def {f}(recipient: str, subject: str, {v}: str) -> None:
    \"\"\"Sends the "share this list" e-mail; the subject and the note ``{v}`` are typed by the user who shares.\"\"\"
    msg = EmailMessage()
    msg["From"] = "lists@{t}.example"
    msg["To"] = recipient
    msg["Subject"] = subject
    msg.set_content({v})
    with open(DKIM_KEY_PATH, "rb") as fh:
        private_key = fh.read()
    signature = dkim.sign(msg.as_bytes(), b"mail", b"{t}.example", private_key, include_headers=[b"From", b"To", b"Subject"], signature_algorithm=b"rsa-sha1")  #!V
    with smtplib.SMTP("localhost") as relay:
        relay.sendmail("lists@{t}.example", [recipient], signature + msg.as_bytes())
""", """
def {f}(recipient: str, subject: str, {v}: str) -> None:
    \"\"\"Sends the "share this list" e-mail; the subject and the note ``{v}`` are typed by the user who shares.\"\"\"
    msg = EmailMessage()
    msg["From"] = "lists@{t}.example"
    msg["To"] = recipient
    msg["Subject"] = subject
    msg.set_content({v})
    with open(DKIM_KEY_PATH, "rb") as fh:
        private_key = fh.read()
    signature = dkim.sign(msg.as_bytes(), b"mail", b"{t}.example", private_key, include_headers=[b"From", b"To", b"Subject"], signature_algorithm=b"rsa-sha256")
    with smtplib.SMTP("localhost") as relay:
        relay.sendmail("lists@{t}.example", [recipient], signature + msg.as_bytes())
"""),
    # ---- CWE-327 broken / risky crypto or TLS
    _t(327, "aa", "import os\nimport ldap\nimport ldap.dn\n\nLDAP_URI = \"ldaps://ldap.{t}.internal:636\"", """
def {f}(username: str, {v}: str) -> bool:
    \"\"\"Login backend of the intranet portal; username and ``{v}`` (the password) come from the sign-in form.\"\"\"
    if not username or not {v}:
        return False
    ldap.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_NEVER)  #!V
    conn = ldap.initialize(LDAP_URI)
    conn.set_option(ldap.OPT_REFERRALS, 0)
    user_dn = f"uid={{ldap.dn.escape_dn_chars(username)}},ou=people,dc={t},dc=internal"
    try:
        conn.simple_bind_s(user_dn, {v})
    except ldap.INVALID_CREDENTIALS:
        return False
    finally:
        conn.unbind_s()
    return True
""", """
def {f}(username: str, {v}: str) -> bool:
    \"\"\"Login backend of the intranet portal; username and ``{v}`` (the password) come from the sign-in form.\"\"\"
    if not username or not {v}:
        return False
    conn = ldap.initialize(LDAP_URI)
    conn.set_option(ldap.OPT_REFERRALS, 0)
    conn.set_option(ldap.OPT_X_TLS_CACERTFILE, os.environ.get("LDAP_CA_FILE", "/etc/ssl/certs/{t}-ldap-ca.pem"))
    conn.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_DEMAND)
    conn.set_option(ldap.OPT_X_TLS_NEWCTX, 0)
    user_dn = f"uid={{ldap.dn.escape_dn_chars(username)}},ou=people,dc={t},dc=internal"
    try:
        conn.simple_bind_s(user_dn, {v})
    except ldap.INVALID_CREDENTIALS:
        return False
    finally:
        conn.unbind_s()
    return True
"""),
    _t(327, "ab", "import os\nimport pyminizip\nfrom django.core.mail import EmailMessage", """
def {f}(report_path: str, recipient: str, {v}: str) -> None:
    \"\"\"Monthly statement mailer; ``{v}`` is the archive password the client chose in their portal settings.\"\"\"
    archive = report_path + ".zip"
    pyminizip.compress(report_path, None, archive, {v}, 6)  #!V
    mail = EmailMessage("Your monthly statement", "Your statement is attached as an encrypted ZIP archive.", to=[recipient])
    mail.attach_file(archive, mimetype="application/zip")
    mail.send()
    os.remove(archive)
""", """
def {f}(report_path: str, recipient: str, {v}: str) -> None:
    \"\"\"Monthly statement mailer; ``{v}`` is the archive password the client chose in their portal settings.\"\"\"
    import pyzipper
    archive = report_path + ".zip"
    with pyzipper.AESZipFile(archive, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES) as zf:
        zf.setpassword({v}.encode("utf-8"))
        zf.setencryption(pyzipper.WZ_AES, nbits=256)
        zf.write(report_path, arcname=os.path.basename(report_path))
    mail = EmailMessage("Your monthly statement", "Your statement is attached as an encrypted ZIP archive.", to=[recipient])
    mail.attach_file(archive, mimetype="application/zip")
    mail.send()
    os.remove(archive)
"""),
    # ---- CWE-338 weak PRNG for security values
    _t(338, "aa", "import os\nimport random\nimport string\nfrom django.db import transaction\nfrom .models import Voucher\n\nVOUCHER_ALPHABET = string.ascii_uppercase + string.digits", """
@transaction.atomic
def {f}(campaign, count: int) -> list[str]:
    \"\"\"Issues the prepaid vouchers a marketing manager ordered; each code is redeemable once for its face value at checkout.\"\"\"
    rng = random.Random(os.urandom(32))  #!V
    {v}: set[str] = set()
    while len({v}) < count:
        {v}.add("".join(rng.choices(VOUCHER_ALPHABET, k=16)))  #!V
    Voucher.objects.bulk_create([Voucher(campaign=campaign, code=code) for code in sorted({v})])
    return sorted({v})
""", """
@transaction.atomic
def {f}(campaign, count: int) -> list[str]:
    \"\"\"Issues the prepaid vouchers a marketing manager ordered; each code is redeemable once for its face value at checkout.\"\"\"
    from django.utils.crypto import get_random_string
    {v}: set[str] = set()
    while len({v}) < count:
        {v}.add(get_random_string(16, VOUCHER_ALPHABET))
    Voucher.objects.bulk_create([Voucher(campaign=campaign, code=code) for code in sorted({v})])
    return sorted({v})
"""),
    _t(338, "ab", "import random\nfrom dataclasses import dataclass\nfrom urllib.parse import urlencode\n\nUNSUBSCRIBE_BASE = \"https://{t}.example/unsubscribe\"", """
@dataclass
class {f}Footer:
    \"\"\"Footer of every newsletter mail; the one-click unsubscribe link works without login, so its token is all that protects a subscription.\"\"\"
    subscriber_id: int
    email: str

    def unsubscribe_url(self, {v}: str = "weekly") -> str:
        token = "%016x" % random.Random(f"{{{v}}}:{{self.subscriber_id}}").getrandbits(64)  #!V
        return UNSUBSCRIBE_BASE + "?" + urlencode({{"list": {v}, "sid": self.subscriber_id, "token": token}})

    def headers(self) -> dict:
        link = self.unsubscribe_url()
        return {{"List-Unsubscribe": f"<{{link}}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}}
""", """
@dataclass
class {f}Footer:
    \"\"\"Footer of every newsletter mail; the one-click unsubscribe link works without login, so its token is all that protects a subscription.\"\"\"
    subscriber_id: int
    email: str

    def unsubscribe_url(self, {v}: str = "weekly") -> str:
        import hashlib
        import hmac
        import os
        signing_key = os.environ["UNSUBSCRIBE_SIGNING_KEY"].encode()
        token = hmac.new(signing_key, f"{{{v}}}:{{self.subscriber_id}}".encode(), hashlib.sha256).hexdigest()
        return UNSUBSCRIBE_BASE + "?" + urlencode({{"list": {v}, "sid": self.subscriber_id, "token": token}})

    def headers(self) -> dict:
        link = self.unsubscribe_url()
        return {{"List-Unsubscribe": f"<{{link}}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}}
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "aa", "from urllib.parse import quote\nimport requests\nfrom requests.auth import HTTPBasicAuth\n\nJENKINS_URL = \"https://ci.{t}.internal\"", """
class {f}JenkinsClient:
    \"\"\"Used by the release bot to start deploy jobs; ``{v}`` is the job name picked in the bot's menu.\"\"\"

    def __init__(self):
        self.http = requests.Session()
        self.http.auth = HTTPBasicAuth("release-bot", "11e7c2d9a4b8f6035d1c9e2a7b4f8d6c3a")  #!V
        self.http.headers["Accept"] = "application/json"

    def trigger(self, {v}: str, **params) -> int:
        resp = self.http.post(f"{{JENKINS_URL}}/job/{{quote({v}, safe='')}}/buildWithParameters", params=params, timeout=15)
        resp.raise_for_status()
        return resp.status_code
""", """
class {f}JenkinsClient:
    \"\"\"Used by the release bot to start deploy jobs; ``{v}`` is the job name picked in the bot's menu.\"\"\"

    def __init__(self):
        import netrc
        entry = netrc.netrc().authenticators("ci.{t}.internal")
        if entry is None:
            raise RuntimeError("no credentials for ci.{t}.internal in ~/.netrc")
        login, _account, api_token = entry
        self.http = requests.Session()
        self.http.auth = HTTPBasicAuth(login, api_token)
        self.http.headers["Accept"] = "application/json"

    def trigger(self, {v}: str, **params) -> int:
        resp = self.http.post(f"{{JENKINS_URL}}/job/{{quote({v}, safe='')}}/buildWithParameters", params=params, timeout=15)
        resp.raise_for_status()
        return resp.status_code
"""),
    _t(798, "ab", "import functools\nimport hashlib\nimport hmac\nfrom flask import abort, request", """
def {f}(secret: bytes = b"whsec_5f2c9a7e1b4d8c3f6a0e9b2d7c4a1f8e"):  #!V
    \"\"\"Decorator for the payment-provider webhook views: the provider signs every POST body with the shared endpoint secret.\"\"\"
    def decorator(view):
        @functools.wraps(view)
        def wrapper(*args, **kwargs):
            {v} = request.headers.get("X-Signature", "")
            expected = hmac.new(secret, request.get_data(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, {v}):
                abort(401)
            return view(*args, **kwargs)
        return wrapper
    return decorator
""", """
def {f}(secret: bytes | None = None):
    \"\"\"Decorator for the payment-provider webhook views: the provider signs every POST body with the shared endpoint secret.\"\"\"
    if secret is None:
        import boto3
        secret = boto3.client("secretsmanager").get_secret_value(SecretId="{t}/payments/webhook-secret")["SecretString"].encode()

    def decorator(view):
        @functools.wraps(view)
        def wrapper(*args, **kwargs):
            {v} = request.headers.get("X-Signature", "")
            expected = hmac.new(secret, request.get_data(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, {v}):
                abort(401)
            return view(*args, **kwargs)
        return wrapper
    return decorator
"""),
    # ---- CWE-22 path traversal
    _t(22, "aa", "import io\nimport json\nimport os\nimport zipfile\nfrom django.contrib.auth.mixins import LoginRequiredMixin\nfrom django.http import FileResponse, HttpResponseBadRequest\nfrom django.views import View\n\nDOCUMENT_ROOT = \"/srv/{t}/documents\"", """
class {f}BundleView(LoginRequiredMixin, View):
    \"\"\"The "Download selected" button of the document library; the JSON body lists the file names the user ticked.\"\"\"

    def post(self, request):
        {v} = json.loads(request.body).get("documents", [])
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
            for doc in {v}:
                bundle.write(os.path.join(DOCUMENT_ROOT, doc), arcname=os.path.basename(doc))  #!V
        buffer.seek(0)
        return FileResponse(buffer, as_attachment=True, filename="documents.zip")
""", """
class {f}BundleView(LoginRequiredMixin, View):
    \"\"\"The "Download selected" button of the document library; the JSON body lists the file names the user ticked.\"\"\"

    def post(self, request):
        {v} = json.loads(request.body).get("documents", [])
        root = os.path.realpath(DOCUMENT_ROOT)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
            for doc in {v}:
                path = os.path.realpath(os.path.join(root, doc))
                if os.path.commonpath([root, path]) != root or not os.path.isfile(path):
                    return HttpResponseBadRequest("unknown document")
                bundle.write(path, arcname=os.path.basename(path))
        buffer.seek(0)
        return FileResponse(buffer, as_attachment=True, filename="documents.zip")
"""),
    _t(22, "ab", "import os\nfrom rest_framework import status, viewsets\nfrom rest_framework.decorators import action\nfrom rest_framework.response import Response\nfrom .models import SharedFile\nfrom .serializers import SharedFileSerializer", """
class {f}FileViewSet(viewsets.ModelViewSet):
    \"\"\"Team file share; every file lives on disk in its folder's directory.\"\"\"
    queryset = SharedFile.objects.all()
    serializer_class = SharedFileSerializer

    @action(detail=True, methods=["post"])
    def rename(self, request, pk=None):
        \"\"\"The rename dialog posts the new file name the user typed.\"\"\"
        shared = self.get_object()
        {v} = request.data.get("new_name", "")
        destination = os.path.join(os.path.dirname(shared.disk_path), {v})
        os.replace(shared.disk_path, destination)  #!V
        shared.disk_path = destination
        shared.save(update_fields=["disk_path"])
        return Response({{"name": os.path.basename(destination)}})
""", """
class {f}FileViewSet(viewsets.ModelViewSet):
    \"\"\"Team file share; every file lives on disk in its folder's directory.\"\"\"
    queryset = SharedFile.objects.all()
    serializer_class = SharedFileSerializer

    @action(detail=True, methods=["post"])
    def rename(self, request, pk=None):
        \"\"\"The rename dialog posts the new file name the user typed.\"\"\"
        shared = self.get_object()
        {v} = request.data.get("new_name", "")
        if {v} in ("", ".", "..") or os.path.basename({v}) != {v}:
            return Response({{"detail": "invalid file name"}}, status=status.HTTP_400_BAD_REQUEST)
        destination = os.path.join(os.path.dirname(shared.disk_path), {v})
        os.replace(shared.disk_path, destination)
        shared.disk_path = destination
        shared.save(update_fields=["disk_path"])
        return Response({{"name": os.path.basename(destination)}})
"""),
    # ---- CWE-79 XSS
    _t(79, "aa", "import string\nfrom http.server import BaseHTTPRequestHandler\nfrom urllib.parse import parse_qs, urlsplit\nfrom .catalog import PACKAGE_INDEX\n\nSEARCH_PAGE = string.Template(\"<!doctype html><title>Package search</title><h1>$count packages matching &ldquo;$term&rdquo;</h1><ul>$rows</ul>\")", """
class {f}Handler(BaseHTTPRequestHandler):
    \"\"\"Search page of the internal package mirror; the term comes from the ``?q=`` box, names and summaries from whoever uploaded each package.\"\"\"

    def do_GET(self):
        {v} = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
        hits = PACKAGE_INDEX.search({v}, limit=50)
        listing = "".join(f"<li><b>{{p.name}}</b> {{p.summary}}</li>" for p in hits)  #!V
        page = SEARCH_PAGE.substitute(count=len(hits), term={v}, rows=listing)  #!V
        encoded = page.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)
""", """
class {f}Handler(BaseHTTPRequestHandler):
    \"\"\"Search page of the internal package mirror; the term comes from the ``?q=`` box, names and summaries from whoever uploaded each package.\"\"\"

    def do_GET(self):
        from html import escape
        {v} = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
        hits = PACKAGE_INDEX.search({v}, limit=50)
        listing = "".join(f"<li><b>{{escape(p.name)}}</b> {{escape(p.summary)}}</li>" for p in hits)
        page = SEARCH_PAGE.substitute(count=len(hits), term=escape({v}), rows=listing)
        encoded = page.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)
"""),
    _t(79, "ab", "import mistune\nfrom flask import Flask, render_template\nfrom markupsafe import Markup\nfrom .models import Review\n\nshop = Flask(__name__)", """
@shop.template_filter("markdown")
def {f}({v}: str) -> Markup:
    \"\"\"Jinja filter used by ``reviews.html`` as ``{{{{ review.body|markdown }}}}``; review bodies are written by customers.\"\"\"
    return Markup(mistune.html({v}))  #!V


@shop.get("/products/<int:product_id>/reviews")
def {f}_page(product_id: int):
    reviews = Review.query.filter_by(product_id=product_id).order_by(Review.created_at.desc()).limit(50).all()
    return render_template("reviews.html", reviews=reviews)
""", """
@shop.template_filter("markdown")
def {f}({v}: str) -> Markup:
    \"\"\"Jinja filter used by ``reviews.html`` as ``{{{{ review.body|markdown }}}}``; review bodies are written by customers.\"\"\"
    to_html = mistune.create_markdown(escape=True, plugins=["strikethrough", "table"])
    return Markup(to_html({v}))


@shop.get("/products/<int:product_id>/reviews")
def {f}_page(product_id: int):
    reviews = Review.query.filter_by(product_id=product_id).order_by(Review.created_at.desc()).limit(50).all()
    return render_template("reviews.html", reviews=reviews)
"""),
    # ---- CWE-611 XXE / external XML resources
    _t(611, "aa", "import os\nfrom xml.etree import ElementInclude\nfrom xml.etree import ElementTree as ET\n\nFRAGMENT_DIR = \"/srv/{t}/fragments\"", """
def {f}(upload_path: str) -> bytes:
    \"\"\"Publishing worker: renders a topic an author uploaded; its ``<xi:include>`` elements pull shared fragments from the fragment library.\"\"\"
    tree = ET.parse(upload_path)
    {v} = tree.getroot()
    ElementInclude.include({v})  #!V
    return ET.tostring({v}, encoding="utf-8")
""", """
def {f}(upload_path: str) -> bytes:
    \"\"\"Publishing worker: renders a topic an author uploaded; its ``<xi:include>`` elements pull shared fragments from the fragment library.\"\"\"
    root_dir = os.path.realpath(FRAGMENT_DIR)

    def fragment_loader(href, parse, encoding=None):
        candidate = os.path.realpath(os.path.join(root_dir, href))
        if os.path.commonpath([root_dir, candidate]) != root_dir:
            raise ElementInclude.FatalIncludeError(f"include outside the fragment library: {{href}}")
        return ElementInclude.default_loader(candidate, parse, encoding)

    tree = ET.parse(upload_path)
    {v} = tree.getroot()
    ElementInclude.include({v}, loader=fragment_loader)
    return ET.tostring({v}, encoding="utf-8")
"""),
    _t(611, "ab", "from reportlab.graphics import renderPDF\nfrom svglib.svglib import svg2rlg\nfrom .storage import save_letterhead", """
def {f}(account_id: int, {v}) -> str:
    \"\"\"Letterhead settings: the customer uploads their logo as SVG and we turn it into the PDF stamp used on invoices.\"\"\"
    drawing = svg2rlg({v}, resolve_entities=True)  #!V
    if drawing is None:
        raise ValueError("not an SVG image")
    pdf = renderPDF.drawToString(drawing)
    return save_letterhead(account_id, pdf)
""", """
def {f}(account_id: int, {v}) -> str:
    \"\"\"Letterhead settings: the customer uploads their logo as SVG and we turn it into the PDF stamp used on invoices.\"\"\"
    drawing = svg2rlg({v}, resolve_entities=False)
    if drawing is None:
        raise ValueError("not an SVG image")
    pdf = renderPDF.drawToString(drawing)
    return save_letterhead(account_id, pdf)
"""),
    # ---- CWE-918 SSRF
    _t(918, "aa", "import socket\nimport time\nfrom pyramid.view import view_config", """
@view_config(route_name="{t}_port_check", request_method="POST", renderer="json")
def {f}(request):
    \"\"\"The "Test connection" button of the uptime monitor: the customer enters the host and port of the service to watch.\"\"\"
    {v} = request.json_body
    hostname, port = str({v}["host"]), int({v}["port"])
    started = time.monotonic()
    try:
        with socket.create_connection((hostname, port), timeout=5):  #!V
            pass
    except OSError as exc:
        return {{"reachable": False, "error": exc.strerror or str(exc)}}
    return {{"reachable": True, "ms": round((time.monotonic() - started) * 1000)}}
""", """
@view_config(route_name="{t}_port_check", request_method="POST", renderer="json")
def {f}(request):
    \"\"\"The "Test connection" button of the uptime monitor: the customer enters the host and port of the service to watch.\"\"\"
    import ipaddress
    {v} = request.json_body
    hostname, port = str({v}["host"]), int({v}["port"])
    if not 1 <= port <= 65535:
        return {{"reachable": False, "error": "invalid port"}}
    try:
        family, socktype, proto, _canonname, address = socket.getaddrinfo(hostname, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror:
        return {{"reachable": False, "error": "unknown host"}}
    if not ipaddress.ip_address(address[0]).is_global:
        return {{"reachable": False, "error": "address not allowed"}}
    started = time.monotonic()
    try:
        with socket.socket(family, socktype, proto) as sock:
            sock.settimeout(5)
            sock.connect(address)
    except OSError as exc:
        return {{"reachable": False, "error": exc.strerror or str(exc)}}
    return {{"reachable": True, "ms": round((time.monotonic() - started) * 1000)}}
"""),
    _t(918, "ab", "from openai import OpenAI\nfrom .models import Workspace", """
def {f}(workspace: Workspace, {v}: dict) -> list[str]:
    \"\"\""Bring your own model" settings: the workspace admin enters an OpenAI-compatible endpoint and API key; we list its models for the dropdown.\"\"\"
    llm = OpenAI(base_url={v}["base_url"], api_key={v}["api_key"], timeout=10, max_retries=0)  #!V
    models = sorted(m.id for m in llm.models.list())  #!V
    workspace.llm_settings = {{"base_url": {v}["base_url"], "models": models}}
    workspace.save(update_fields=["llm_settings"])
    return models
""", """
def {f}(workspace: Workspace, {v}: dict) -> list[str]:
    \"\"\""Bring your own model" settings: the workspace admin picks a supported provider and enters an API key; we list its models for the dropdown.\"\"\"
    providers = {{
        "openai": "https://api.openai.com/v1",
        "mistral": "https://api.mistral.ai/v1",
        "groq": "https://api.groq.com/openai/v1",
        "together": "https://api.together.xyz/v1",
    }}
    base_url = providers.get(str({v}.get("provider", "")))
    if base_url is None:
        raise ValueError("unsupported provider")
    llm = OpenAI(base_url=base_url, api_key={v}["api_key"], timeout=10, max_retries=0)
    models = sorted(m.id for m in llm.models.list())
    workspace.llm_settings = {{"base_url": base_url, "models": models}}
    workspace.save(update_fields=["llm_settings"])
    return models
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "aa", "import io\nimport os\nimport smtplib\nfrom email.message import EmailMessage\nfrom openpyxl import Workbook", """
def {f}(rows: list[dict], {v}: str, manager_id: int) -> None:
    \"\"\"Nightly job mailing each account manager their pipeline spreadsheet; ``{v}`` is the manager's e-mail address.\"\"\"
    book = Workbook()
    sheet = book.active
    sheet.append(["Account", "Stage", "Value"])
    for row in rows:
        sheet.append([row["account"], row["stage"], row["value"]])
    xlsx_path = f"/tmp/{t}-pipeline-{{manager_id}}.xlsx"  #!V
    book.save(xlsx_path)  #!V
    msg = EmailMessage()
    msg["To"], msg["From"], msg["Subject"] = {v}, "reports@{t}.example", "Your pipeline"
    with open(xlsx_path, "rb") as fh:
        msg.add_attachment(fh.read(), maintype="application", subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet", filename="pipeline.xlsx")
    with smtplib.SMTP("localhost") as relay:
        relay.send_message(msg)
    os.remove(xlsx_path)
""", """
def {f}(rows: list[dict], {v}: str, manager_id: int) -> None:
    \"\"\"Nightly job mailing each account manager their pipeline spreadsheet; ``{v}`` is the manager's e-mail address.\"\"\"
    book = Workbook()
    sheet = book.active
    sheet.append(["Account", "Stage", "Value"])
    for row in rows:
        sheet.append([row["account"], row["stage"], row["value"]])
    buffer = io.BytesIO()
    book.save(buffer)
    msg = EmailMessage()
    msg["To"], msg["From"], msg["Subject"] = {v}, "reports@{t}.example", "Your pipeline"
    msg.add_attachment(buffer.getvalue(), maintype="application", subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet", filename="pipeline.xlsx")
    with smtplib.SMTP("localhost") as relay:
        relay.send_message(msg)
"""),
    _t(377, "ab", "from filelock import FileLock, Timeout\nfrom .mail import run_mailbox_sync", """
def {f}({v}: str) -> bool:
    \"\"\"Cron entry point syncing one tenant's support mailbox; ``{v}`` is the tenant slug from the crontab line, and overlapping runs must not sync the same tenant twice.\"\"\"
    lock = FileLock(f"/tmp/{t}-mailsync-{{{v}}}.lock", timeout=0)  #!V
    try:
        with lock:
            run_mailbox_sync({v})
    except Timeout:
        return False
    return True
""", """
def {f}({v}: str) -> bool:
    \"\"\"Cron entry point syncing one tenant's support mailbox; ``{v}`` is the tenant slug from the crontab line, and overlapping runs must not sync the same tenant twice.\"\"\"
    import platformdirs
    lock_dir = platformdirs.user_state_path("{t}-mailsync", ensure_exists=True)
    lock = FileLock(str(lock_dir / f"{{{v}}}.lock"), timeout=0)
    try:
        with lock:
            run_mailbox_sync({v})
    except Timeout:
        return False
    return True
"""),
]

FAMILIES_AA = sorted({t.cwe for t in TEMPLATES_AA})


def heldout_templates_aa() -> list[Template]:
    """The 26 variant-"aa"/"ab" templates (final evaluation only).

    >>> len(heldout_templates_aa()), len(FAMILIES_AA), sorted({t.variant for t in heldout_templates_aa()})
    (26, 13, ['aa', 'ab'])
    """
    return list(TEMPLATES_AA)
