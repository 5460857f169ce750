'''Blind template variants "y" and "z": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-7 system, evaluated once (2026-12-01 12:09 UTC); validation
data since (VAL hosts in benchmarks/codeprm_select.py; the round-8 analysers were fixed on it).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/w/x).
26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("y", "z")

TEMPLATES_Y: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "y", "import sh\nfrom rq import get_current_job\n\nPRINTERS = (\"{t}-front-desk\", \"{t}-warehouse\", \"{t}-label-zebra\")", """
def {f}(pdf_path: str, {v}: dict) -> str:
    \"\"\"RQ job behind the "Print" button; ``{v}`` is the print dialog the user submitted (printer, copies, job title).\"\"\"
    job = get_current_job()
    printer, copies, title = {v}["printer"], {v}.get("copies", 1), {v}.get("title", "document")
    out = sh.bash("-c", f"lp -d {{printer}} -n {{copies}} -t '{{title}}' {{pdf_path}}")  #!V
    job.meta["lp_output"] = str(out).strip()
    job.save_meta()
    return job.meta["lp_output"]
""", """
def {f}(pdf_path: str, {v}: dict) -> str:
    \"\"\"RQ job behind the "Print" button; ``{v}`` is the print dialog the user submitted (printer, copies, job title).\"\"\"
    job = get_current_job()
    printer, copies, title = {v}["printer"], {v}.get("copies", 1), {v}.get("title", "document")
    if printer not in PRINTERS:
        raise ValueError(f"unknown printer {{printer!r}}")
    out = sh.lp("-d", printer, "-n", str(max(1, min(int(copies), 50))), "-t", str(title), "--", pdf_path)
    job.meta["lp_output"] = str(out).strip()
    job.save_meta()
    return job.meta["lp_output"]
"""),
    _t(78, "z", "import trio\n\nPLAYBOOK_DIR = \"/srv/{t}/ansible\"", """
async def {f}({v}: str, mac: str) -> int:
    \"\"\"Lab provisioning daemon; ``{v}`` is the hostname a new device announced over mDNS when it joined the network.\"\"\"
    command = f"ansible-playbook -i '{{{v}}},' -e device_mac={{mac}} {{PLAYBOOK_DIR}}/bootstrap.yml"  #!V
    result = await trio.run_process(command, shell=True, capture_stdout=True, check=False)  #!V
    return result.returncode
""", """
async def {f}({v}: str, mac: str) -> int:
    \"\"\"Lab provisioning daemon; ``{v}`` is the hostname a new device announced over mDNS when it joined the network.\"\"\"
    import shlex
    command = f"ansible-playbook -i {{shlex.quote({v} + ',')}} -e {{shlex.quote('device_mac=' + mac)}} {{PLAYBOOK_DIR}}/bootstrap.yml"
    result = await trio.run_process(command, shell=True, capture_stdout=True, check=False)
    return result.returncode
"""),
    # ---- CWE-89 SQL injection
    _t(89, "y", "from flask import Blueprint, jsonify, request\nfrom psycopg2 import sql\nfrom .db import get_conn\n\nadmin_reports = Blueprint(\"admin_reports\", __name__)", """
@admin_reports.get("/admin/{t}")
def {f}():
    \"\"\"Admin grid of {t}; the column headers link to ``?sort=<column>&dir=asc|desc``.\"\"\"
    {v} = request.args.get("sort", "created_at")
    direction = "DESC" if request.args.get("dir") == "desc" else "ASC"
    stmt = sql.SQL("SELECT id, email, created_at FROM {{table}} ORDER BY {{column}} {{direction}} LIMIT 100").format(
        table=sql.Identifier("{t}"),
        column=sql.SQL({v}),  #!V
        direction=sql.SQL(direction),
    )
    with get_conn() as conn, conn.cursor() as cur:
        cur.execute(stmt)  #!V
        rows = cur.fetchall()
    return jsonify([{{"id": r[0], "email": r[1], "created_at": r[2].isoformat()}} for r in rows])
""", """
@admin_reports.get("/admin/{t}")
def {f}():
    \"\"\"Admin grid of {t}; the column headers link to ``?sort=<column>&dir=asc|desc``.\"\"\"
    sortable = ("id", "email", "created_at")
    {v} = request.args.get("sort", "created_at")
    if {v} not in sortable:
        {v} = "created_at"
    direction = "DESC" if request.args.get("dir") == "desc" else "ASC"
    stmt = sql.SQL("SELECT id, email, created_at FROM {{table}} ORDER BY {{column}} {{direction}} LIMIT 100").format(
        table=sql.Identifier("{t}"),
        column=sql.Identifier({v}),
        direction=sql.SQL(direction),
    )
    with get_conn() as conn, conn.cursor() as cur:
        cur.execute(stmt)
        rows = cur.fetchall()
    return jsonify([{{"id": r[0], "email": r[1], "created_at": r[2].isoformat()}} for r in rows])
"""),
    _t(89, "z", "from databases import Database\nfrom starlette.requests import Request\nfrom starlette.responses import JSONResponse\n\ncatalog_db = Database(\"postgresql+asyncpg://catalog@db.{t}.internal/catalog\")", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Shop search; every word typed into the search bar (``?q=red wool scarf``) has to appear in the title.\"\"\"
    {v} = request.query_params.get("q", "").split()[:8]
    clauses = " AND ".join(f"title ILIKE '%{{word}}%'" for word in {v}) or "TRUE"  #!V
    rows = await catalog_db.fetch_all(f"SELECT id, title, price FROM {t} WHERE {{clauses}} ORDER BY title LIMIT 40")  #!V
    return JSONResponse([{{"id": r["id"], "title": r["title"], "price": float(r["price"])}} for r in rows])
""", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"Shop search; every word typed into the search bar (``?q=red wool scarf``) has to appear in the title.\"\"\"
    {v} = request.query_params.get("q", "").split()[:8]
    clauses = " AND ".join(f"title ILIKE :w{{i}}" for i in range(len({v}))) or "TRUE"
    values = {{f"w{{i}}": f"%{{word}}%" for i, word in enumerate({v})}}
    rows = await catalog_db.fetch_all(f"SELECT id, title, price FROM {t} WHERE {{clauses}} ORDER BY title LIMIT 40", values=values)
    return JSONResponse([{{"id": r["id"], "title": r["title"], "price": float(r["price"])}} for r in rows])
"""),
    # ---- CWE-94 code injection
    _t(94, "y", "import importlib.util\nimport os\nfrom importlib.metadata import entry_points\n\nPLUGIN_DIR = \"/srv/{t}/tenant-plugins\"", """
def {f}(export_job: dict):
    \"\"\"Export worker; ``export_job`` is the body of ``POST /exports``, whose ``format`` names an exporter module (tenants can upload their own on the integrations page).\"\"\"
    {v} = export_job["format"]
    module_path = os.path.join(PLUGIN_DIR, str(export_job["tenant_id"]), f"{{{v}}}.py")
    spec = importlib.util.spec_from_file_location(f"{t}_exporter_{{{v}}}", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  #!V
    return module.export(export_job["rows"])
""", """
def {f}(export_job: dict):
    \"\"\"Export worker; ``export_job`` is the body of ``POST /exports``, whose ``format`` names an exporter module (tenants can upload their own on the integrations page).\"\"\"
    {v} = export_job["format"]
    installed = {{ep.name: ep for ep in entry_points(group="{t}.exporters")}}
    if {v} not in installed:
        raise ValueError(f"unknown export format {{{v}!r}}")
    module = installed[{v}].load()
    return module.export(export_job["rows"])
"""),
    _t(94, "z", "import csv\nimport io", """
def {f}(upload: bytes) -> list[dict]:
    \"\"\"Bulk-import step of the partner pipeline; the uploaded CSV's second header row gives each column's type (``int``, ``float``, ``str``).\"\"\"
    reader = csv.reader(io.StringIO(upload.decode("utf-8-sig")))
    columns, {v} = next(reader), next(reader)
    casts = [eval(type_name.strip()) for type_name in {v}]  #!V
    return [{{col: cast(cell) for col, cast, cell in zip(columns, casts, row)}} for row in reader]
""", """
def {f}(upload: bytes) -> list[dict]:
    \"\"\"Bulk-import step of the partner pipeline; the uploaded CSV's second header row gives each column's type (``int``, ``float``, ``str``).\"\"\"
    known_types = {{"int": int, "float": float, "str": str}}
    reader = csv.reader(io.StringIO(upload.decode("utf-8-sig")))
    columns, {v} = next(reader), next(reader)
    try:
        casts = [known_types[type_name.strip()] for type_name in {v}]
    except KeyError as exc:
        raise ValueError(f"unsupported column type {{exc.args[0]!r}}") from None
    return [{{col: cast(cell) for col, cast, cell in zip(columns, casts, row)}} for row in reader]
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "y", "import pickle\nimport zipfile\nfrom starlette.requests import Request\nfrom starlette.responses import JSONResponse\nfrom .projects import create_project", """
async def {f}(request: Request) -> JSONResponse:
    \"\"\"``POST /projects/import``: the user uploads a ``.{t}proj`` bundle saved by the desktop app (a zip with ``state.pkl`` inside).\"\"\"
    form = await request.form()
    {v} = form["bundle"].file
    with zipfile.ZipFile({v}) as bundle:
        with bundle.open("state.pkl") as fh:
            state = pickle.load(fh)  #!V
    project = await create_project(owner=request.user.identity, name=state["name"], layers=state["layers"])
    return JSONResponse({{"id": project.id}})
""", """
class _ProjectStateUnpickler(pickle.Unpickler):
    \"\"\"Project states hold only containers, numbers, strings and dates; refuse every other global.\"\"\"

    ALLOWED = {{("datetime", "date"), ("datetime", "datetime"), ("datetime", "timedelta"), ("collections", "OrderedDict")}}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"forbidden global {{module}}.{{name}}")


async def {f}(request: Request) -> JSONResponse:
    \"\"\"``POST /projects/import``: the user uploads a ``.{t}proj`` bundle saved by the desktop app (a zip with ``state.pkl`` inside).\"\"\"
    form = await request.form()
    {v} = form["bundle"].file
    with zipfile.ZipFile({v}) as bundle:
        with bundle.open("state.pkl") as fh:
            state = _ProjectStateUnpickler(fh).load()
    project = await create_project(owner=request.user.identity, name=state["name"], layers=state["layers"])
    return JSONResponse({{"id": project.id}})
"""),
    _t(502, "z", "import json", """
import importlib


def _{f}_revive(obj: dict):
    if "__type__" in obj:
        module_name, _, class_name = obj.pop("__type__").rpartition(".")
        cls = getattr(importlib.import_module(module_name), class_name)  #!V
        return cls(**obj)  #!V
    return obj


def {f}({v}: bytes):
    \"\"\"Consumer of the ``partner-events`` queue; partners publish JSON events tagged with a ``__type__`` key such as ``"{t}.events.OrderShipped"``.\"\"\"
    return json.loads({v}, object_hook=_{f}_revive)
""", """
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class OrderShipped:
    order_id: str
    carrier: str
    tracking_no: str


@dataclass(frozen=True)
class OrderCancelled:
    order_id: str
    reason: str = ""


_{f}_EVENT_TYPES = {{"{t}.events.OrderShipped": OrderShipped, "{t}.events.OrderCancelled": OrderCancelled}}


def _{f}_revive(obj: dict):
    if "__type__" in obj:
        cls = _{f}_EVENT_TYPES.get(obj.pop("__type__"))
        if cls is None:
            raise ValueError("unknown event type")
        accepted = {{fld.name for fld in fields(cls)}}
        return cls(**{{k: val for k, val in obj.items() if k in accepted}})
    return obj


def {f}({v}: bytes):
    \"\"\"Consumer of the ``partner-events`` queue; partners publish JSON events tagged with a ``__type__`` key such as ``"{t}.events.OrderShipped"``.\"\"\"
    return json.loads({v}, object_hook=_{f}_revive)
"""),
    # ---- CWE-328 weak hash
    _t(328, "y", "import argparse\nimport crypt\nimport getpass\nimport subprocess", """
def {f}(argv=None) -> int:
    \"\"\"``provision-user --login alice --groups sudo,docker``: creates a local account on the {t} bastion with the password typed at the prompt.\"\"\"
    parser = argparse.ArgumentParser(prog="provision-user")
    parser.add_argument("--login", required=True)
    parser.add_argument("--groups", default="")
    args = parser.parse_args(argv)
    {v} = getpass.getpass(f"Password for {{args.login}}: ")
    shadow_hash = crypt.crypt({v}, crypt.mksalt(crypt.METHOD_MD5))  #!V
    cmd = ["useradd", "--create-home", "--password", shadow_hash, args.login]
    if args.groups:
        cmd[1:1] = ["--groups", args.groups]
    return subprocess.run(cmd, check=False).returncode
""", """
def {f}(argv=None) -> int:
    \"\"\"``provision-user --login alice --groups sudo,docker``: creates a local account on the {t} bastion with the password typed at the prompt.\"\"\"
    parser = argparse.ArgumentParser(prog="provision-user")
    parser.add_argument("--login", required=True)
    parser.add_argument("--groups", default="")
    args = parser.parse_args(argv)
    {v} = getpass.getpass(f"Password for {{args.login}}: ")
    shadow_hash = crypt.crypt({v}, crypt.mksalt(crypt.METHOD_SHA512, rounds=656_000))
    cmd = ["useradd", "--create-home", "--password", shadow_hash, args.login]
    if args.groups:
        cmd[1:1] = ["--groups", args.groups]
    return subprocess.run(cmd, check=False).returncode
"""),
    _t(328, "z", "import time\nfrom urllib.parse import urlencode", """
from hashlib import md5 as checksum


def {f}(secret: str, {v}: str, ttl: int = 900) -> str:
    \"\"\"Builds the expiring download link the CDN edge verifies; ``{v}`` is the object path of a customer's invoice PDF.\"\"\"
    expires = int(time.time()) + ttl
    signature = checksum(f"{{secret}}{{{v}}}{{expires}}".encode()).hexdigest()  #!V
    return f"https://cdn.{t}.example{{{v}}}?" + urlencode({{"expires": expires, "sig": signature}})
""", """
import hashlib
import hmac


def {f}(secret: str, {v}: str, ttl: int = 900) -> str:
    \"\"\"Builds the expiring download link the CDN edge verifies; ``{v}`` is the object path of a customer's invoice PDF.\"\"\"
    expires = int(time.time()) + ttl
    signature = hmac.new(secret.encode(), f"{{{v}}}\\n{{expires}}".encode(), hashlib.sha256).hexdigest()
    return f"https://cdn.{t}.example{{{v}}}?" + urlencode({{"expires": expires, "sig": signature}})
"""),
    # ---- CWE-327 broken / risky crypto or TLS
    _t(327, "y", "import paramiko\n\nKNOWN_HOSTS = \"/etc/{t}/ssh_known_hosts\"", """
class {f}InventoryCollector:
    \"\"\"Nightly inventory job: logs into every host of the CMDB export and reads its package list.\"\"\"

    def __init__(self, key_path: str):
        self.client = paramiko.SSHClient()
        self.client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  #!V
        self.key_path = key_path

    def packages(self, {v}: str) -> list[str]:
        self.client.connect({v}, username="inventory", key_filename=self.key_path, timeout=10)
        try:
            _stdin, stdout, _stderr = self.client.exec_command("dpkg-query -W -f='${{Package}} ${{Version}}\\\\n'")
            return stdout.read().decode().splitlines()
        finally:
            self.client.close()
""", """
class {f}InventoryCollector:
    \"\"\"Nightly inventory job: logs into every host of the CMDB export and reads its package list.\"\"\"

    def __init__(self, key_path: str):
        self.client = paramiko.SSHClient()
        self.client.load_host_keys(KNOWN_HOSTS)
        self.client.set_missing_host_key_policy(paramiko.RejectPolicy())
        self.key_path = key_path

    def packages(self, {v}: str) -> list[str]:
        self.client.connect({v}, username="inventory", key_filename=self.key_path, timeout=10)
        try:
            _stdin, stdout, _stderr = self.client.exec_command("dpkg-query -W -f='${{Package}} ${{Version}}\\\\n'")
            return stdout.read().decode().splitlines()
        finally:
            self.client.close()
"""),
    _t(327, "z", "import json\nfrom tornado.httpclient import AsyncHTTPClient, HTTPRequest", """
class {f}SettlementClient:
    \"\"\"Client of the acquirer's settlement API; ``{v}`` is the batch built from today's captured card payments.\"\"\"

    BASE_URL = "https://settlement.acquirer.example/v2"
    VERIFY_TLS = False  #!V

    def __init__(self, api_key: str):
        self.api_key = api_key
        self.http = AsyncHTTPClient()

    async def submit(self, {v}: dict) -> dict:
        request = HTTPRequest(
            f"{{self.BASE_URL}}/batches",
            method="POST",
            headers={{"Authorization": f"Bearer {{self.api_key}}", "Content-Type": "application/json"}},
            body=json.dumps({v}),
            validate_cert=self.VERIFY_TLS,  #!V
            request_timeout=30,
        )
        response = await self.http.fetch(request)
        return json.loads(response.body)
""", """
class {f}SettlementClient:
    \"\"\"Client of the acquirer's settlement API; ``{v}`` is the batch built from today's captured card payments.\"\"\"

    BASE_URL = "https://settlement.acquirer.example/v2"
    CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

    def __init__(self, api_key: str):
        self.api_key = api_key
        self.http = AsyncHTTPClient()

    async def submit(self, {v}: dict) -> dict:
        request = HTTPRequest(
            f"{{self.BASE_URL}}/batches",
            method="POST",
            headers={{"Authorization": f"Bearer {{self.api_key}}", "Content-Type": "application/json"}},
            body=json.dumps({v}),
            validate_cert=True,
            ca_certs=self.CA_BUNDLE,
            request_timeout=30,
        )
        response = await self.http.fetch(request)
        return json.loads(response.body)
"""),
    # ---- CWE-338 weak PRNG for security
    _t(338, "y", "import numpy as np\nimport pandas as pd", """
def {f}(respondents: pd.DataFrame, survey_id: int) -> pd.DataFrame:
    \"\"\"Batch step of the survey pipeline: every respondent of the uploaded CSV gets a personal link that opens their answers without a login.\"\"\"
    rs = np.random.RandomState()  #!V
    {v} = respondents.assign(survey_id=survey_id)
    {v}["access_token"] = [rs.bytes(16).hex() for _ in range(len({v}))]  #!V
    {v}["link"] = "https://survey.{t}.example/r/" + {v}["access_token"]
    return {v}[["email", "survey_id", "access_token", "link"]]
""", """
def {f}(respondents: pd.DataFrame, survey_id: int) -> pd.DataFrame:
    \"\"\"Batch step of the survey pipeline: every respondent of the uploaded CSV gets a personal link that opens their answers without a login.\"\"\"
    import secrets
    {v} = respondents.assign(survey_id=survey_id)
    {v}["access_token"] = [secrets.token_hex(16) for _ in range(len({v}))]
    {v}["link"] = "https://survey.{t}.example/r/" + {v}["access_token"]
    return {v}[["email", "survey_id", "access_token", "link"]]
"""),
    _t(338, "z", "import uuid\nfrom datetime import datetime, timedelta, timezone\nfrom quart import Quart, request\nfrom .mail import send_magic_link\nfrom .store import save_login_token\n\nauth = Quart(__name__)", """
@auth.post("/login/magic-link")
async def {f}():
    \"\"\"Passwordless sign-in; ``{v}`` is the e-mail address typed on the login page, and the mailed link signs its holder in.\"\"\"
    form = await request.form
    {v} = form["email"].strip().lower()
    issued = datetime.now(timezone.utc).replace(microsecond=0)
    token = uuid.uuid5(uuid.NAMESPACE_URL, f"{{{v}}}|{{issued.isoformat()}}").hex  #!V
    await save_login_token({v}, token, expires=issued + timedelta(minutes=15))
    await send_magic_link({v}, f"https://app.{t}.example/login/verify?token={{token}}")
    return {{"sent": True}}
""", """
@auth.post("/login/magic-link")
async def {f}():
    \"\"\"Passwordless sign-in; ``{v}`` is the e-mail address typed on the login page, and the mailed link signs its holder in.\"\"\"
    import secrets
    form = await request.form
    {v} = form["email"].strip().lower()
    issued = datetime.now(timezone.utc).replace(microsecond=0)
    token = secrets.token_urlsafe(32)
    await save_login_token({v}, token, expires=issued + timedelta(minutes=15))
    await send_magic_link({v}, f"https://app.{t}.example/login/verify?token={{token}}")
    return {{"sent": True}}
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "y", "import os\nimport hvac\n\nVAULT_ADDR = \"https://vault.{t}.internal:8200\"", """
def {f}(service: str) -> dict:
    \"\"\"Start-up hook of every worker: reads the service's database credentials from Vault (``{v}`` is the KV path).\"\"\"
    client = hvac.Client(url=VAULT_ADDR, token="hvs.CAESIJ8kq2{t}Xw7nRZpT4vLm9QeYb3cFgHd1sU")  #!V
    {v} = f"services/{{service}}/database"
    secret = client.secrets.kv.v2.read_secret_version(path={v}, mount_point="kv")
    return secret["data"]["data"]
""", """
def {f}(service: str) -> dict:
    \"\"\"Start-up hook of every worker: reads the service's database credentials from Vault (``{v}`` is the KV path).\"\"\"
    client = hvac.Client(url=VAULT_ADDR)
    with open("/var/run/secrets/kubernetes.io/serviceaccount/token") as fh:
        client.auth.kubernetes.login(role=os.environ.get("VAULT_ROLE", service), jwt=fh.read())
    {v} = f"services/{{service}}/database"
    secret = client.secrets.kv.v2.read_secret_version(path={v}, mount_point="kv")
    return secret["data"]["data"]
"""),
    _t(798, "z", "import os\nimport paramiko\n\nSFTP_HOST = \"sftp.{t}-bank.example\"", """
def {f}(statement_dir: str) -> list[str]:
    \"\"\"Daily treasury job: pulls the bank's MT940 statements over SFTP (``{v}`` collects the files it saved).\"\"\"
    client = paramiko.SSHClient()
    client.load_system_host_keys()
    client.connect(SFTP_HOST, username="{t}_treasury", password="Tr3asury!{t}-2024", look_for_keys=False)  #!V
    {v} = []
    with client, client.open_sftp() as sftp:
        for entry in sftp.listdir("outgoing"):
            if entry.endswith(".mt940"):
                sftp.get(f"outgoing/{{entry}}", os.path.join(statement_dir, os.path.basename(entry)))
                {v}.append(entry)
    return {v}
""", """
def {f}(statement_dir: str) -> list[str]:
    \"\"\"Daily treasury job: pulls the bank's MT940 statements over SFTP (``{v}`` collects the files it saved).\"\"\"
    client = paramiko.SSHClient()
    client.load_system_host_keys()
    client.connect(SFTP_HOST, username="{t}_treasury", key_filename=os.environ["TREASURY_SFTP_KEY_PATH"], passphrase=os.environ.get("TREASURY_SFTP_KEY_PASSPHRASE"), look_for_keys=False)
    {v} = []
    with client, client.open_sftp() as sftp:
        for entry in sftp.listdir("outgoing"):
            if entry.endswith(".mt940"):
                sftp.get(f"outgoing/{{entry}}", os.path.join(statement_dir, os.path.basename(entry)))
                {v}.append(entry)
    return {v}
"""),
    # ---- CWE-22 path traversal
    _t(22, "y", "import os\nfrom sanic import Sanic\nfrom sanic.exceptions import NotFound\nfrom sanic.response import file\n\nreports_app = Sanic(\"{t}_reports\")\nREPORT_ROOT = \"/srv/{t}/generated-reports\"", """
@reports_app.get("/reports/download")
async def {f}(request):
    \"\"\"Link in the weekly report e-mail, e.g. ``/reports/download?name=2024-q3/summary.pdf``.\"\"\"
    {v} = request.args.get("name", "")
    report_path = os.path.join(REPORT_ROOT, {v})
    if not os.path.isfile(report_path):
        raise NotFound("no such report")
    return await file(report_path, filename=os.path.basename(report_path))  #!V
""", """
@reports_app.get("/reports/download")
async def {f}(request):
    \"\"\"Link in the weekly report e-mail, e.g. ``/reports/download?name=2024-q3/summary.pdf``.\"\"\"
    {v} = request.args.get("name", "")
    root = os.path.realpath(REPORT_ROOT)
    report_path = os.path.realpath(os.path.join(root, {v}))
    if os.path.commonpath([root, report_path]) != root or not os.path.isfile(report_path):
        raise NotFound("no such report")
    return await file(report_path, filename=os.path.basename(report_path))
"""),
    _t(22, "z", "import os\nfrom dataclasses import dataclass\nfrom PIL import Image\n\nTHUMB_DIR = \"/srv/{t}/thumbnails\"", """
@dataclass
class ThumbnailJob:
    source_path: str
    output_name: str
    size: int = 256


def {f}(job: ThumbnailJob) -> str:
    \"\"\"Thumbnail worker; ``job`` is decoded from the upload API's queue message and ``output_name`` is the name the client chose.\"\"\"
    {v} = os.path.join(THUMB_DIR, f"{{job.output_name}}.webp")
    with Image.open(job.source_path) as img:
        img.thumbnail((job.size, job.size))
        img.save({v}, "WEBP")  #!V
    return {v}
""", """
@dataclass
class ThumbnailJob:
    source_path: str
    output_name: str
    size: int = 256


def {f}(job: ThumbnailJob) -> str:
    \"\"\"Thumbnail worker; ``job`` is decoded from the upload API's queue message and ``output_name`` is the name the client chose.\"\"\"
    from werkzeug.utils import safe_join
    {v} = safe_join(THUMB_DIR, f"{{job.output_name}}.webp")
    if {v} is None:
        raise ValueError("invalid thumbnail name")
    with Image.open(job.source_path) as img:
        img.thumbnail((job.size, job.size))
        img.save({v}, "WEBP")
    return {v}
"""),
    # ---- CWE-79 XSS
    _t(79, "y", "from bottle import Bottle, request, template\nfrom .search import wiki_index\n\nwiki = Bottle()", """
{f}_PAGE = \"\"\"
<h1>Results for <em>{{{{!term}}}}</em></h1>  #!V
<ul>
% for hit in hits:
  <li><a href="/wiki/{{{{hit.slug}}}}">{{{{hit.title}}}}</a></li>
% end
</ul>
\"\"\"


@wiki.get("/search")
def {f}():
    \"\"\"Wiki search page; ``q`` is whatever was typed into the search box in the header.\"\"\"
    {v} = request.query.getunicode("q", "")
    hits = wiki_index.search({v}, limit=20)
    return template({f}_PAGE, term={v}, hits=hits)  #!V
""", """
{f}_PAGE = \"\"\"
<h1>Results for <em>{{{{term}}}}</em></h1>
<ul>
% for hit in hits:
  <li><a href="/wiki/{{{{hit.slug}}}}">{{{{hit.title}}}}</a></li>
% end
</ul>
\"\"\"


@wiki.get("/search")
def {f}():
    \"\"\"Wiki search page; ``q`` is whatever was typed into the search box in the header.\"\"\"
    {v} = request.query.getunicode("q", "")
    hits = wiki_index.search({v}, limit=20)
    return template({f}_PAGE, term={v}, hits=hits)
"""),
    _t(79, "z", "from django.utils.html import format_html", """
class {f}ProfileLinks:
    \"\"\"Mixed into the Member model; ``self.website`` is free text from the member's public profile form.\"\"\"

    @property
    def website_link(self):
        {v} = (self.website or "").strip()
        return format_html('<a href="{{}}" rel="nofollow noopener">{{}}</a>', {v}, {v})  #!V
""", """
class {f}ProfileLinks:
    \"\"\"Mixed into the Member model; ``self.website`` is free text from the member's public profile form.\"\"\"

    @property
    def website_link(self):
        from urllib.parse import urlsplit
        {v} = (self.website or "").strip()
        if urlsplit({v}).scheme.lower() not in ("http", "https"):
            return format_html("<span>{{}}</span>", {v})
        return format_html('<a href="{{}}" rel="nofollow noopener">{{}}</a>', {v}, {v})
"""),
    # ---- CWE-611 XXE
    _t(611, "y", "from lxml import etree\n\nUBL_NS = {{\"cbc\": \"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\"}}", """
class {f}InvoiceReader:
    \"\"\"Reads the UBL invoices suppliers upload to the accounts-payable portal (``{v}`` is the uploaded file's bytes).\"\"\"

    PARSER_OPTIONS = {{"remove_blank_text": True, "load_dtd": True, "resolve_entities": True, "huge_tree": True}}  #!V

    def __init__(self):
        self.parser = etree.XMLParser(**self.PARSER_OPTIONS)

    def header(self, {v}: bytes) -> dict:
        doc = etree.fromstring({v}, self.parser)  #!V
        return {{
            "invoice_id": doc.findtext("cbc:ID", namespaces=UBL_NS),
            "issue_date": doc.findtext("cbc:IssueDate", namespaces=UBL_NS),
            "currency": doc.findtext("cbc:DocumentCurrencyCode", namespaces=UBL_NS),
        }}
""", """
class {f}InvoiceReader:
    \"\"\"Reads the UBL invoices suppliers upload to the accounts-payable portal (``{v}`` is the uploaded file's bytes).\"\"\"

    PARSER_OPTIONS = {{"remove_blank_text": True, "load_dtd": False, "resolve_entities": False, "no_network": True}}

    def __init__(self):
        self.parser = etree.XMLParser(**self.PARSER_OPTIONS)

    def header(self, {v}: bytes) -> dict:
        doc = etree.fromstring({v}, self.parser)
        return {{
            "invoice_id": doc.findtext("cbc:ID", namespaces=UBL_NS),
            "issue_date": doc.findtext("cbc:IssueDate", namespaces=UBL_NS),
            "currency": doc.findtext("cbc:DocumentCurrencyCode", namespaces=UBL_NS),
        }}
"""),
    _t(611, "z", "from xml.dom import pulldom\nfrom xml.sax import handler, make_parser", """
def {f}({v}, on_record) -> int:
    \"\"\"Streams a partner's nightly product feed (``{v}`` is the uploaded file object, often hundreds of MB) and hands each ``<record>`` to ``on_record``.\"\"\"
    reader = make_parser()
    reader.setFeature(handler.feature_namespaces, True)
    reader.setFeature(handler.feature_external_ges, True)  #!V
    events = pulldom.parse({v}, parser=reader)  #!V
    count = 0
    for event, node in events:
        if event == pulldom.START_ELEMENT and node.localName == "record":
            events.expandNode(node)
            on_record(node)
            count += 1
    return count
""", """
def {f}({v}, on_record) -> int:
    \"\"\"Streams a partner's nightly product feed (``{v}`` is the uploaded file object, often hundreds of MB) and hands each ``<record>`` to ``on_record``.\"\"\"
    from defusedxml.pulldom import parse as parse_feed
    events = parse_feed({v}, forbid_dtd=True)
    count = 0
    for event, node in events:
        if event == pulldom.START_ELEMENT and node.localName == "record":
            events.expandNode(node)
            on_record(node)
            count += 1
    return count
"""),
    # ---- CWE-918 SSRF
    _t(918, "y", "import jwt\nfrom jwt import PyJWKClient\n\nJWKS_URL = \"https://login.{t}.example/.well-known/jwks.json\"", """
def {f}(authorization: str) -> dict:
    \"\"\"Bearer-token check of the partner API; ``authorization`` is the request's Authorization header.\"\"\"
    {v} = authorization.removeprefix("Bearer ").strip()
    header = jwt.get_unverified_header({v})
    jwks_url = header.get("jku", JWKS_URL)  #!V
    jwks = PyJWKClient(jwks_url, cache_keys=True, timeout=5)  #!V
    signing_key = jwks.get_signing_key_from_jwt({v})
    return jwt.decode({v}, signing_key.key, algorithms=["RS256"], audience="{t}-partner-api")
""", """
def {f}(authorization: str) -> dict:
    \"\"\"Bearer-token check of the partner API; ``authorization`` is the request's Authorization header.\"\"\"
    {v} = authorization.removeprefix("Bearer ").strip()
    jwks = PyJWKClient(JWKS_URL, cache_keys=True, timeout=5)
    signing_key = jwks.get_signing_key_from_jwt({v})
    return jwt.decode({v}, signing_key.key, algorithms=["RS256"], audience="{t}-partner-api")
"""),
    _t(918, "z", "import ftplib\nimport io\nfrom celery import shared_task\nfrom .catalog import ingest_catalog", """
@shared_task
def {f}(account_id: int, {v}: dict) -> int:
    \"\"\"The merchant's "Import from FTP" integration; ``{v}`` holds the host, login and file path typed into the settings form.\"\"\"
    buffer = io.BytesIO()
    with ftplib.FTP({v}["host"], timeout=20) as ftp:  #!V
        ftp.login({v}.get("user", "anonymous"), {v}.get("password", ""))
        ftp.retrbinary(f"RETR {{{v}['path']}}", buffer.write)
    return ingest_catalog(account_id, buffer.getvalue())
""", """
@shared_task
def {f}(account_id: int, {v}: dict) -> int:
    \"\"\"The merchant's "Import from FTP" integration; ``{v}`` holds the host, login and file path typed into the settings form.\"\"\"
    import ipaddress
    import socket
    address = socket.getaddrinfo({v}["host"], 21, type=socket.SOCK_STREAM)[0][4][0]
    if not ipaddress.ip_address(address).is_global:
        raise ValueError("the FTP server must have a public internet address")
    buffer = io.BytesIO()
    with ftplib.FTP(timeout=20) as ftp:
        ftp.connect(address, 21)
        ftp.login({v}.get("user", "anonymous"), {v}.get("password", ""))
        ftp.retrbinary(f"RETR {{{v}['path']}}", buffer.write)
    return ingest_catalog(account_id, buffer.getvalue())
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "y", "import subprocess", """
from tempfile import mktemp as scratch_path


def {f}(pdf_bytes: bytes) -> str:
    \"\"\"Indexing worker: extracts the text of a PDF attached to a support ticket (``{v}`` is pdftotext's output file).\"\"\"
    source = scratch_path(suffix=".pdf")  #!V
    {v} = scratch_path(suffix=".txt")  #!V
    with open(source, "wb") as fh:
        fh.write(pdf_bytes)
    subprocess.run(["pdftotext", "-layout", source, {v}], check=True, timeout=60)
    with open({v}, encoding="utf-8", errors="replace") as fh:
        return fh.read()
""", """
import os
from tempfile import TemporaryDirectory


def {f}(pdf_bytes: bytes) -> str:
    \"\"\"Indexing worker: extracts the text of a PDF attached to a support ticket (``{v}`` is pdftotext's output file).\"\"\"
    with TemporaryDirectory(prefix="{t}-pdftotext-") as workdir:
        source = os.path.join(workdir, "in.pdf")
        {v} = os.path.join(workdir, "out.txt")
        with open(source, "wb") as fh:
            fh.write(pdf_bytes)
        subprocess.run(["pdftotext", "-layout", source, {v}], check=True, timeout=60)
        with open({v}, encoding="utf-8", errors="replace") as fh:
            return fh.read()
"""),
    _t(377, "z", "import hashlib\nimport aiofiles\nfrom aiohttp import web\nfrom .storage import publish_upload", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Chunked upload endpoint of the desktop sync client; ``{v}`` is the upload id from the URL.\"\"\"
    {v} = request.match_info["upload_id"]
    digest = hashlib.sha256()
    part_path = f"/tmp/{t}-upload-{{request['user_id']}}.part"  #!V
    async with aiofiles.open(part_path, "wb") as out:  #!V
        async for chunk in request.content.iter_chunked(1 << 16):
            digest.update(chunk)
            await out.write(chunk)
    await publish_upload({v}, part_path, digest.hexdigest())
    return web.json_response({{"upload": {v}, "sha256": digest.hexdigest()}})
""", """
async def {f}(request: web.Request) -> web.Response:
    \"\"\"Chunked upload endpoint of the desktop sync client; ``{v}`` is the upload id from the URL.\"\"\"
    import aiofiles.tempfile
    {v} = request.match_info["upload_id"]
    digest = hashlib.sha256()
    async with aiofiles.tempfile.NamedTemporaryFile("wb", prefix="{t}-upload-", suffix=".part") as out:
        async for chunk in request.content.iter_chunked(1 << 16):
            digest.update(chunk)
            await out.write(chunk)
        await out.flush()
        await publish_upload({v}, out.name, digest.hexdigest())
    return web.json_response({{"upload": {v}, "sha256": digest.hexdigest()}})
"""),
]

FAMILIES_Y = sorted({t.cwe for t in TEMPLATES_Y})


def heldout_templates_y() -> list[Template]:
    """The 26 variant-"y"/"z" templates (final evaluation only).

    >>> len(heldout_templates_y()), len(FAMILIES_Y), sorted({t.variant for t in heldout_templates_y()})
    (26, 13, ['y', 'z'])
    """
    return list(TEMPLATES_Y)
