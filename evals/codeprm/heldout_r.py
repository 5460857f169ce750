'''Blind template variants "r" and "s": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-5 system, evaluated once (2026-12-01 10:22 UTC). Validation data
since (embedded in the VAL hosts by benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q). 26 pairs
in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("r", "s")

TEMPLATES_R: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "r", "import pendulum\nfrom airflow.decorators import dag, task", """
@dag(schedule=None, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False, params={{"region": "eu-west-1"}})
def {f}():
    \"\"\"Manually triggered export; operators type the ``region`` into the "Trigger DAG w/ config" form.\"\"\"

    @task.bash
    def dump_region(params=None) -> str:
        region = params["region"]
        return f"/opt/{t}/bin/export --region {{region}} --out /data/{t}/exports"  #!V

    dump_region()


{f}_dag = {f}()
""", """
@dag(schedule=None, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False, params={{"region": "eu-west-1"}})
def {f}():
    \"\"\"Manually triggered export; operators type the ``region`` into the "Trigger DAG w/ config" form.\"\"\"

    @task.bash
    def dump_region(params=None) -> str:
        import re
        import shlex
        region = params["region"]
        if not re.fullmatch(r"[a-z]{{2}}(-[a-z]+)+-\\d", region):
            raise ValueError("unknown region")
        return f"/opt/{t}/bin/export --region {{shlex.quote(region)}} --out /data/{t}/exports"

    dump_region()


{f}_dag = {f}()
"""),
    _t(78, "s", "import subprocess\nimport gradio as gr\n\nBUILD_HOSTS = (\"build1.{t}.internal\", \"build2.{t}.internal\")", """
def {f}(build_host: str, {v}: str) -> str:
    \"\"\"Log viewer tab of the team's Gradio tools page: pick a build host, type the job name.\"\"\"
    remote = f"tail -n 200 /var/log/builds/{{{v}}}.log"
    done = subprocess.run(["ssh", "-o", "BatchMode=yes", f"deploy@{{build_host}}", remote], capture_output=True, text=True, timeout=30)  #!V
    return done.stdout or done.stderr


{f}_ui = gr.Interface(fn={f}, inputs=[gr.Dropdown(list(BUILD_HOSTS), label="Host"), gr.Textbox(label="Job")], outputs=gr.Textbox(lines=20, label="Log"))
""", """
def {f}(build_host: str, {v}: str) -> str:
    \"\"\"Log viewer tab of the team's Gradio tools page: pick a build host, type the job name.\"\"\"
    import re
    import shlex
    if build_host not in BUILD_HOSTS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{{0,80}}", {v}) or ".." in {v}:
        raise gr.Error("unknown host or job")
    remote = "tail -n 200 -- " + shlex.quote(f"/var/log/builds/{{{v}}}.log")
    done = subprocess.run(["ssh", "-o", "BatchMode=yes", f"deploy@{{build_host}}", remote], capture_output=True, text=True, timeout=30)
    return done.stdout or done.stderr


{f}_ui = gr.Interface(fn={f}, inputs=[gr.Dropdown(list(BUILD_HOSTS), label="Host"), gr.Textbox(label="Job")], outputs=gr.Textbox(lines=20, label="Log"))
"""),
    # ---- CWE-89 SQL injection
    _t(89, "r", "from fastapi import Cookie, FastAPI\nfrom google.cloud import bigquery\n\ninsights = FastAPI()\nbq = bigquery.Client()", """
@insights.get("/insights/top-products")
def {f}(region: str = Cookie(default="eu"), limit: int = 10):
    \"\"\"Best sellers for the region the visitor picked in the site header (kept in the ``region`` cookie).\"\"\"
    sql = f"SELECT product, SUM(revenue) AS revenue FROM `analytics.{t}` WHERE region = '{{region}}' GROUP BY product ORDER BY revenue DESC LIMIT {{int(limit)}}"  #!V
    rows = bq.query(sql).result()  #!V
    return [{{"product": row["product"], "revenue": float(row["revenue"])}} for row in rows]
""", """
@insights.get("/insights/top-products")
def {f}(region: str = Cookie(default="eu"), limit: int = 10):
    \"\"\"Best sellers for the region the visitor picked in the site header (kept in the ``region`` cookie).\"\"\"
    sql = "SELECT product, SUM(revenue) AS revenue FROM `analytics.{t}` WHERE region = @region GROUP BY product ORDER BY revenue DESC LIMIT @limit"
    config = bigquery.QueryJobConfig(query_parameters=[
        bigquery.ScalarQueryParameter("region", "STRING", region),
        bigquery.ScalarQueryParameter("limit", "INT64", int(limit)),
    ])
    rows = bq.query(sql, job_config=config).result()
    return [{{"product": row["product"], "revenue": float(row["revenue"])}} for row in rows]
"""),
    _t(89, "s", "import json\nimport os\nimport azure.functions as func\nimport snowflake.connector\n\napp = func.FunctionApp()", """
@app.route(route="crm/accounts", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def {f}(req: func.HttpRequest) -> func.HttpResponse:
    \"\"\"CRM sidebar lookup; ``email`` is what the support agent typed into the search field.\"\"\"
    email = req.params.get("email", "")
    conn = snowflake.connector.connect(
        account=os.environ["SNOWFLAKE_ACCOUNT"],
        user=os.environ["SNOWFLAKE_USER"],
        password=os.environ["SNOWFLAKE_PASSWORD"],
        warehouse="CRM_WH",
        database="CRM",
        schema="PUBLIC",
    )
    try:
        cur = conn.cursor()
        cur.execute("SELECT account_id, plan, mrr FROM {t} WHERE lower(email) = lower('" + email + "') LIMIT 20")  #!V
        rows = cur.fetchall()
    finally:
        conn.close()
    body = json.dumps([{{"account_id": a, "plan": p, "mrr": float(m)}} for a, p, m in rows])
    return func.HttpResponse(body, mimetype="application/json")
""", """
@app.route(route="crm/accounts", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def {f}(req: func.HttpRequest) -> func.HttpResponse:
    \"\"\"CRM sidebar lookup; ``email`` is what the support agent typed into the search field.\"\"\"
    email = req.params.get("email", "")
    conn = snowflake.connector.connect(
        account=os.environ["SNOWFLAKE_ACCOUNT"],
        user=os.environ["SNOWFLAKE_USER"],
        password=os.environ["SNOWFLAKE_PASSWORD"],
        warehouse="CRM_WH",
        database="CRM",
        schema="PUBLIC",
    )
    try:
        cur = conn.cursor()
        cur.execute("SELECT account_id, plan, mrr FROM {t} WHERE lower(email) = lower(%(email)s) LIMIT 20", {{"email": email}})
        rows = cur.fetchall()
    finally:
        conn.close()
    body = json.dumps([{{"account_id": a, "plan": p, "mrr": float(m)}} for a, p, m in rows])
    return func.HttpResponse(body, mimetype="application/json")
"""),
    # ---- CWE-94 code injection
    _t(94, "r", "from dataclasses import dataclass, field\nfrom jinja2 import Environment", """
@dataclass
class {f}AlertRule:
    \"\"\"An alert from the monitoring settings page; tenants type ``condition``, e.g. ``cpu > 90 and host.startswith('db')``.\"\"\"
    name: str
    condition: str
    _check: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self._check = Environment().compile_expression(self.condition)  #!V

    def fires(self, sample: dict) -> bool:
        return bool(self._check(**sample))
""", """
@dataclass
class {f}AlertRule:
    \"\"\"An alert from the monitoring settings page; tenants type ``condition``, e.g. ``cpu > 90 and host.startswith('db')``.\"\"\"
    name: str
    condition: str
    _check: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        from jinja2.sandbox import SandboxedEnvironment
        self._check = SandboxedEnvironment().compile_expression(self.condition)

    def fires(self, sample: dict) -> bool:
        return bool(self._check(**sample))
"""),
    _t(94, "s", "import json\nimport sympy\n\nSYMPY_LOCALS = {{name: sympy.Symbol(name) for name in \"xyzt\"}} | {{name: getattr(sympy, name) for name in (\"sin\", \"cos\", \"tan\", \"exp\", \"log\", \"sqrt\", \"pi\", \"E\")}}", """
async def {f}(websocket) -> None:
    \"\"\"Homework helper socket; each message is ``{{"expr": ..., "var": ...}}`` as a student typed it in the browser.\"\"\"
    async for message in websocket:
        {v} = json.loads(message)
        expr = sympy.sympify({v}["expr"], locals=SYMPY_LOCALS)  #!V
        var = sympy.Symbol(str({v}.get("var", "x")))
        await websocket.send(json.dumps({{"derivative": str(sympy.diff(expr, var)), "latex": sympy.latex(expr)}}))
""", """
async def {f}(websocket) -> None:
    \"\"\"Homework helper socket; each message is ``{{"expr": ..., "var": ...}}`` as a student typed it in the browser.\"\"\"
    import re
    async for message in websocket:
        {v} = json.loads(message)
        source = str({v}["expr"])
        names = set(re.findall(r"[A-Za-z_]\\w*", source))
        if not re.fullmatch(r"[A-Za-z0-9+\\-*/^(). ]{{1,200}}", source) or re.search(r"\\.(?!\\d)", source) or not names <= SYMPY_LOCALS.keys():
            await websocket.send(json.dumps({{"error": "unsupported expression"}}))
            continue
        expr = sympy.sympify(source, locals=SYMPY_LOCALS)
        var = sympy.Symbol(str({v}.get("var", "x")))
        await websocket.send(json.dumps({{"derivative": str(sympy.diff(expr, var)), "latex": sympy.latex(expr)}}))
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "r", "import cloudpickle\nimport zmq", """
class {f}ResultCollector:
    \"\"\"Gathers the results that notebook workers anywhere on the lab network push to port 5557.\"\"\"

    def __init__(self, endpoint: str = "tcp://*:5557"):
        self.sock = zmq.Context.instance().socket(zmq.PULL)
        self.sock.bind(endpoint)
        self.results = {{}}

    def drain(self, max_messages: int = 100) -> int:
        for _ in range(max_messages):
            if not self.sock.poll(100):
                break
            {v} = cloudpickle.loads(self.sock.recv())  #!V
            self.results[{v}["task_id"]] = {v}["value"]
        return len(self.results)
""", """
class {f}ResultCollector:
    \"\"\"Gathers the results that notebook workers anywhere on the lab network push to port 5557.\"\"\"

    def __init__(self, endpoint: str = "tcp://*:5557"):
        self.sock = zmq.Context.instance().socket(zmq.PULL)
        self.sock.bind(endpoint)
        self.results = {{}}

    def drain(self, max_messages: int = 100) -> int:
        for _ in range(max_messages):
            if not self.sock.poll(100):
                break
            {v} = self.sock.recv_json()
            self.results[{v}["task_id"]] = {v}["value"]
        return len(self.results)
"""),
    _t(502, "s", "import yaml\nfrom ninja import Router\n\ndeploys = Router()", """
@deploys.post("/deployments/preview")
def {f}(request):
    \"\"\"``{t}ctl deploy --dry-run`` posts the developer's multi-document Kubernetes manifest as the request body.\"\"\"
    documents = [doc for doc in yaml.load_all(request.body, Loader=yaml.UnsafeLoader) if doc]  #!V
    return {{"count": len(documents), "kinds": sorted({{str(doc.get("kind")) for doc in documents if isinstance(doc, dict)}})}}
""", """
@deploys.post("/deployments/preview")
def {f}(request):
    \"\"\"``{t}ctl deploy --dry-run`` posts the developer's multi-document Kubernetes manifest as the request body.\"\"\"
    documents = [doc for doc in yaml.safe_load_all(request.body) if doc]
    return {{"count": len(documents), "kinds": sorted({{str(doc.get("kind")) for doc in documents if isinstance(doc, dict)}})}}
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "r", "import hmac\nimport socket\nimport ssl\nfrom cryptography import x509\nfrom cryptography.hazmat.primitives import hashes", """
class {f}TerminalLink:
    \"\"\"TLS link to a payment terminal on the shop LAN, pinned to the fingerprint the installer copied from its setup screen.\"\"\"

    def __init__(self, address: str, pin: str, port: int = 8443):
        self.address, self.port = address, port
        self.pin = pin.replace(":", "").lower()

    def open(self) -> ssl.SSLSocket:
        ctx = ssl.create_default_context(cafile="/etc/{t}/terminal-ca.pem")
        tls = ctx.wrap_socket(socket.create_connection((self.address, self.port), timeout=10), server_hostname=self.address)
        cert = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        if not hmac.compare_digest(cert.fingerprint(hashes.SHA1()).hex(), self.pin):  #!V
            tls.close()
            raise ssl.SSLError("terminal certificate does not match the pin")
        return tls
""", """
class {f}TerminalLink:
    \"\"\"TLS link to a payment terminal on the shop LAN, pinned to the fingerprint the installer copied from its setup screen.\"\"\"

    def __init__(self, address: str, pin: str, port: int = 8443):
        self.address, self.port = address, port
        self.pin = pin.replace(":", "").lower()

    def open(self) -> ssl.SSLSocket:
        ctx = ssl.create_default_context(cafile="/etc/{t}/terminal-ca.pem")
        tls = ctx.wrap_socket(socket.create_connection((self.address, self.port), timeout=10), server_hostname=self.address)
        cert = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        if not hmac.compare_digest(cert.fingerprint(hashes.SHA256()).hex(), self.pin):
            tls.close()
            raise ssl.SSLError("terminal certificate does not match the pin")
        return tls
"""),
    _t(328, "s", "import base64\nimport json\nimport rsa", """
def {f}(license_fields: dict, private_key_pem: bytes) -> str:
    \"\"\"Issue the license file a customer downloads after purchase; the desktop app checks the signature offline.\"\"\"
    payload = json.dumps(license_fields, sort_keys=True, separators=(",", ":")).encode()
    signing_key = rsa.PrivateKey.load_pkcs1(private_key_pem)
    signature = rsa.sign(payload, signing_key, "SHA-1")  #!V
    return base64.urlsafe_b64encode(payload).decode() + "." + base64.urlsafe_b64encode(signature).decode()
""", """
def {f}(license_fields: dict, private_key_pem: bytes) -> str:
    \"\"\"Issue the license file a customer downloads after purchase; the desktop app checks the signature offline.\"\"\"
    payload = json.dumps(license_fields, sort_keys=True, separators=(",", ":")).encode()
    signing_key = rsa.PrivateKey.load_pkcs1(private_key_pem)
    signature = rsa.sign(payload, signing_key, "SHA-256")
    return base64.urlsafe_b64encode(payload).decode() + "." + base64.urlsafe_b64encode(signature).decode()
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "r", "import os\nfrom elasticsearch import Elasticsearch", """
{f}_search = Elasticsearch(
    os.environ.get("ELASTIC_URL", "https://search.{t}.internal:9200"),
    api_key=os.environ["ELASTIC_API_KEY"],
    verify_certs=False,  #!V
    ssl_show_warn=False,
    request_timeout=10,
)


def {f}(q: str, size: int = 20) -> list:
    \"\"\"Full-text search behind the site's search box.\"\"\"
    hits = {f}_search.search(index="{t}", query={{"multi_match": {{"query": q, "fields": ["title^2", "body"]}}}}, size=size)
    return [hit["_source"] for hit in hits["hits"]["hits"]]
""", """
{f}_search = Elasticsearch(
    os.environ.get("ELASTIC_URL", "https://search.{t}.internal:9200"),
    api_key=os.environ["ELASTIC_API_KEY"],
    ca_certs=os.environ.get("ELASTIC_CA_CERTS", "/etc/ssl/certs/{t}-elastic-ca.pem"),
    request_timeout=10,
)


def {f}(q: str, size: int = 20) -> list:
    \"\"\"Full-text search behind the site's search box.\"\"\"
    hits = {f}_search.search(index="{t}", query={{"multi_match": {{"query": q, "fields": ["title^2", "body"]}}}}, size=size)
    return [hit["_source"] for hit in hits["hits"]["hits"]]
"""),
    _t(327, "s", "import asyncio\nimport ssl", """
async def {f}(on_client, cert_file: str, key_file: str, port: int = 8883) -> asyncio.Server:
    \"\"\"Start the telemetry listener that the sensor gateways in the field connect to.\"\"\"
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_file, key_file)
    ctx.minimum_version = ssl.TLSVersion.TLSv1  #!V
    ctx.set_ciphers("ALL:@SECLEVEL=0")  #!V
    return await asyncio.start_server(on_client, host="0.0.0.0", port=port, ssl=ctx)
""", """
async def {f}(on_client, cert_file: str, key_file: str, port: int = 8883) -> asyncio.Server:
    \"\"\"Start the telemetry listener that the sensor gateways in the field connect to.\"\"\"
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_file, key_file)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers("ECDHE+AESGCM:ECDHE+CHACHA20")
    return await asyncio.start_server(on_client, host="0.0.0.0", port=port, ssl=ctx)
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "r", "import numpy as np\nimport pandas as pd\n\nGIFT_ALPHABET = list(\"ABCDEFGHJKLMNPQRSTUVWXYZ23456789\")", """
def {f}(batch_size: int, value_cents: int) -> pd.DataFrame:
    \"\"\"Generate a batch of redeemable gift-card codes for the finance team's export; each one is worth ``value_cents``.\"\"\"
    picks = np.random.choice(GIFT_ALPHABET, size=(batch_size, 16))  #!V
    codes = ["-".join("".join(row[i:i + 4]) for i in range(0, 16, 4)) for row in picks]
    return pd.DataFrame({{"code": codes, "value_cents": value_cents, "redeemed": False}})
""", """
def {f}(batch_size: int, value_cents: int) -> pd.DataFrame:
    \"\"\"Generate a batch of redeemable gift-card codes for the finance team's export; each one is worth ``value_cents``.\"\"\"
    import secrets
    picks = [[secrets.choice(GIFT_ALPHABET) for _ in range(16)] for _ in range(batch_size)]
    codes = ["-".join("".join(row[i:i + 4]) for i in range(0, 16, 4)) for row in picks]
    return pd.DataFrame({{"code": codes, "value_cents": value_cents, "redeemed": False}})
"""),
    _t(338, "s", "import os\nimport random\nfrom cryptography.hazmat.primitives.ciphers.aead import AESGCM", """
class {f}TenantKeyring:
    \"\"\"Creates the data key of each new tenant; it encrypts the documents that tenant uploads.\"\"\"

    def __init__(self, kms):
        self.kms = kms

    def create_tenant_key(self, tenant_id: int) -> bytes:
        data_key = bytes(random.randint(0, 255) for _ in range(32))  #!V
        self.kms.store_wrapped(tenant_id, self.kms.wrap(data_key))
        return data_key

    def seal(self, data_key: bytes, document: bytes) -> bytes:
        nonce = os.urandom(12)
        return nonce + AESGCM(data_key).encrypt(nonce, document, None)
""", """
class {f}TenantKeyring:
    \"\"\"Creates the data key of each new tenant; it encrypts the documents that tenant uploads.\"\"\"

    def __init__(self, kms):
        self.kms = kms

    def create_tenant_key(self, tenant_id: int) -> bytes:
        data_key = AESGCM.generate_key(bit_length=256)
        self.kms.store_wrapped(tenant_id, self.kms.wrap(data_key))
        return data_key

    def seal(self, data_key: bytes, document: bytes) -> bytes:
        nonce = os.urandom(12)
        return nonce + AESGCM(data_key).encrypt(nonce, document, None)
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "r", "import os\nfrom twilio.rest import Client", """
def {f}(phone: str, code: str) -> str:
    \"\"\"Text the one-time sign-in code to the phone number on the user's account.\"\"\"
    sms = Client("AC3f9b2e7d1c6a4058b9e2f7d3c1a6b4e8", "9e4c1f7a2b8d6e3f0a5c7b9d1e2f4a6c")  #!V
    message = sms.messages.create(to=phone, from_=os.environ.get("TWILIO_FROM_NUMBER", "+14155550123"), body=f"Your {t} sign-in code is {{code}}")
    return message.sid
""", """
def {f}(phone: str, code: str) -> str:
    \"\"\"Text the one-time sign-in code to the phone number on the user's account.\"\"\"
    sms = Client(os.environ["TWILIO_ACCOUNT_SID"], os.environ["TWILIO_AUTH_TOKEN"])
    message = sms.messages.create(to=phone, from_=os.environ.get("TWILIO_FROM_NUMBER", "+14155550123"), body=f"Your {t} sign-in code is {{code}}")
    return message.sid
"""),
    _t(798, "s", "import os\nfrom huggingface_hub import snapshot_download", """
os.environ.setdefault("HF_TOKEN", "hf_qWbRtZpLmXnKcVdJgHsYfAeUoIyTrEw{t}")  #!V


def {f}(repo_id: str = "{t}-ml/support-classifier", revision: str = "main") -> str:
    \"\"\"Fetch the private fine-tuned model that the inference workers serve.\"\"\"
    return snapshot_download(repo_id=repo_id, revision=revision, cache_dir="/srv/{t}/models")
""", """
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def {f}(repo_id: str = "{t}-ml/support-classifier", revision: str = "main") -> str:
    \"\"\"Fetch the private fine-tuned model that the inference workers serve.\"\"\"
    return snapshot_download(repo_id=repo_id, revision=revision, cache_dir="/srv/{t}/models", token=os.environ["HF_TOKEN"])
"""),
    # ---- CWE-22 path traversal
    _t(22, "r", "from pathlib import Path, PurePosixPath\nfrom aiohttp import web\n\nINVOICE_ROOT = Path(\"/srv/{t}/invoices\")", """
async def {f}(request: web.Request) -> web.StreamResponse:
    \"\"\"Routed as ``/invoices/{{path:.+}}``: the PDF link in the customer's billing e-mail.\"\"\"
    {v} = request.match_info["path"]
    return web.FileResponse(INVOICE_ROOT / {v}, headers={{"Content-Disposition": "attachment"}})  #!V
""", """
async def {f}(request: web.Request) -> web.StreamResponse:
    \"\"\"Routed as ``/invoices/{{path:.+}}``: the PDF link in the customer's billing e-mail.\"\"\"
    {v} = request.match_info["path"]
    relative = PurePosixPath({v})
    if relative.is_absolute() or ".." in relative.parts:
        raise web.HTTPNotFound()
    return web.FileResponse(INVOICE_ROOT / relative, headers={{"Content-Disposition": "attachment"}})
"""),
    _t(22, "s", "import base64\nfrom pathlib import Path\nfrom channels.generic.websocket import JsonWebsocketConsumer\n\nDRAFTS_DIR = Path(\"/srv/{t}/drafts\")", """
class {f}DraftConsumer(JsonWebsocketConsumer):
    \"\"\"Editor autosave: every few seconds the browser sends ``{{"file": name, "content": base64}}``.\"\"\"

    def receive_json(self, content, **kwargs):
        user_dir = DRAFTS_DIR / str(self.scope["user"].pk)
        user_dir.mkdir(parents=True, exist_ok=True)
        (user_dir / content["file"]).write_bytes(base64.b64decode(content["content"]))  #!V
        self.send_json({{"saved": content["file"]}})
""", """
class {f}DraftConsumer(JsonWebsocketConsumer):
    \"\"\"Editor autosave: every few seconds the browser sends ``{{"file": name, "content": base64}}``.\"\"\"

    def receive_json(self, content, **kwargs):
        user_dir = DRAFTS_DIR / str(self.scope["user"].pk)
        user_dir.mkdir(parents=True, exist_ok=True)
        draft_name = Path(str(content["file"])).name
        if draft_name in ("", ".", ".."):
            self.send_json({{"error": "invalid draft name"}})
            return
        (user_dir / draft_name).write_bytes(base64.b64decode(content["content"]))
        self.send_json({{"saved": draft_name}})
"""),
    # ---- CWE-79 XSS
    _t(79, "r", "import cherrypy", """
class {f}StatusPage:
    \"\"\"Public status page; ``component`` comes from the link in the incident e-mail.\"\"\"

    def __init__(self, statuses: dict):
        self.statuses = statuses

    @cherrypy.expose
    def index(self, component: str = "all"):
        state = self.statuses.get(component, "unknown")
        return f"<html><body><h1>Status of {{component}}</h1><p class='state'>{{state}}</p></body></html>"  #!V
""", """
class {f}StatusPage:
    \"\"\"Public status page; ``component`` comes from the link in the incident e-mail.\"\"\"

    def __init__(self, statuses: dict):
        self.statuses = statuses

    @cherrypy.expose
    def index(self, component: str = "all"):
        import html
        state = self.statuses.get(component, "unknown")
        return f"<html><body><h1>Status of {{html.escape(component)}}</h1><p class='state'>{{html.escape(state)}}</p></body></html>"
"""),
    _t(79, "s", "from dominate import document\nfrom dominate.tags import div, h1, img, p\nfrom dominate.util import raw", """
def {f}(profile) -> str:
    \"\"\"Public member page; ``profile.bio`` is what the member wrote on their settings page.\"\"\"
    page = document(title=f"{{profile.display_name}} on {t}")
    with page:
        with div(cls="profile"):
            img(src=profile.avatar_url, alt="")
            h1(profile.display_name)
            p(raw(profile.bio), cls="bio")  #!V
    return page.render()
""", """
def {f}(profile) -> str:
    \"\"\"Public member page; ``profile.bio`` is what the member wrote on their settings page.\"\"\"
    page = document(title=f"{{profile.display_name}} on {t}")
    with page:
        with div(cls="profile"):
            img(src=profile.avatar_url, alt="")
            h1(profile.display_name)
            p(profile.bio, cls="bio")
    return page.render()
"""),
    # ---- CWE-611 XXE
    _t(611, "r", "from django.http import JsonResponse\nfrom django.views.decorators.http import require_POST\nfrom lxml import etree\n\nSNIPPET_DIR = \"/srv/{t}/report-snippets/\"\nXI_INCLUDE = \"{{http://www.w3.org/2001/XInclude}}include\"", """
@require_POST
def {f}(request):
    \"\"\"Report designer: a customer uploads a layout (XML) that may pull in our shared header and footer snippets.\"\"\"
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    layout = etree.fromstring(request.FILES["layout"].read(), parser, base_url=SNIPPET_DIR)
    layout.getroottree().xinclude()  #!V
    sections = [section.get("title") for section in layout.iter("section")]
    return JsonResponse({{"sections": sections, "preview": "".join(layout.itertext())[:2000]}})
""", """
@require_POST
def {f}(request):
    \"\"\"Report designer: a customer uploads a layout (XML) that may pull in our shared header and footer snippets.\"\"\"
    import re
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    layout = etree.fromstring(request.FILES["layout"].read(), parser, base_url=SNIPPET_DIR)
    for include in layout.iter(XI_INCLUDE):
        if include.get("parse", "xml") != "xml" or not re.fullmatch(r"[a-z0-9_-]{{1,64}}\\.xml", include.get("href", "")):
            return JsonResponse({{"error": "layouts may only include the shared snippets"}}, status=400)
    layout.getroottree().xinclude()
    sections = [section.get("title") for section in layout.iter("section")]
    return JsonResponse({{"sections": sections, "preview": "".join(layout.itertext())[:2000]}})
"""),
    _t(611, "s", "from pathlib import Path\nfrom lxml import etree\n\nONIX_DTD_DIR = Path(\"/usr/share/xml/onix\")", """
class {f}DtdResolver(etree.Resolver):
    \"\"\"Serves the ONIX DTDs that publisher feeds name in their DOCTYPE.\"\"\"

    def resolve(self, system_url, public_id, context):
        return self.resolve_filename(system_url, context)  #!V


def {f}(feed_path: str) -> list[dict]:
    \"\"\"Nightly import of the ONIX file a publisher dropped into their SFTP inbox.\"\"\"
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True, no_network=True)  #!V
    parser.resolvers.add({f}DtdResolver())
    tree = etree.parse(feed_path, parser)
    return [{{"record": product.findtext("RecordReference"), "title": product.findtext(".//TitleText")}} for product in tree.iter("Product")]
""", """
class {f}DtdResolver(etree.Resolver):
    \"\"\"Serves the ONIX DTDs that publisher feeds name in their DOCTYPE.\"\"\"

    def resolve(self, system_url, public_id, context):
        local = ONIX_DTD_DIR / Path(system_url or "").name
        if local.suffix in (".dtd", ".ent", ".mod") and local.is_file():
            return self.resolve_filename(str(local), context)
        return self.resolve_empty(context)


def {f}(feed_path: str) -> list[dict]:
    \"\"\"Nightly import of the ONIX file a publisher dropped into their SFTP inbox.\"\"\"
    parser = etree.XMLParser(load_dtd=True, resolve_entities=False, no_network=True)
    parser.resolvers.add({f}DtdResolver())
    tree = etree.parse(feed_path, parser)
    return [{{"record": product.findtext("RecordReference"), "title": product.findtext(".//TitleText")}} for product in tree.iter("Product")]
"""),
    # ---- CWE-918 SSRF
    _t(918, "r", "import trafilatura\nfrom huey import RedisHuey\n\nhuey = RedisHuey(\"{t}\")", """
@huey.task(retries=2)
def {f}(bookmark_id: int, {v}: str) -> dict:
    \"\"\"Read-later app: the API enqueues this with the link a user saved from the browser extension.\"\"\"
    downloaded = trafilatura.fetch_url({v})  #!V
    article = trafilatura.extract(downloaded) if downloaded else None
    return {{"bookmark": bookmark_id, "words": len(article.split()) if article else 0, "article": article}}
""", """
@huey.task(retries=2)
def {f}(bookmark_id: int, {v}: str) -> dict:
    \"\"\"Read-later app: the API enqueues this with the link a user saved from the browser extension.\"\"\"
    import ipaddress
    import socket
    from urllib.parse import urlsplit
    import httpx
    parts = urlsplit({v})
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return {{"bookmark": bookmark_id, "error": "unsupported link"}}
    resolved = {{info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))}}
    if not resolved or not all(ipaddress.ip_address(a).is_global for a in resolved):
        return {{"bookmark": bookmark_id, "error": "unsupported link"}}
    reply = httpx.get({v}, follow_redirects=False, timeout=15)
    downloaded = reply.text if reply.status_code == 200 else None
    article = trafilatura.extract(downloaded) if downloaded else None
    return {{"bookmark": bookmark_id, "words": len(article.split()) if article else 0, "article": article}}
"""),
    _t(918, "s", "import boto3\nfrom botocore.config import Config\nfrom flask import jsonify, request\nfrom flask.views import MethodView", """
class {f}StorageCheckView(MethodView):
    \"\"\"``POST /settings/storage/test``: a workspace admin checks the S3-compatible bucket exports should go to.\"\"\"

    def post(self):
        body = request.get_json()
        s3 = boto3.client(
            "s3",
            endpoint_url=body["endpoint"],  #!V
            aws_access_key_id=body["access_key"],
            aws_secret_access_key=body["secret_key"],
            config=Config(connect_timeout=5, retries={{"max_attempts": 1}}),
        )
        s3.head_bucket(Bucket=body["bucket"])  #!V
        return jsonify(ok=True)
""", """
class {f}StorageCheckView(MethodView):
    \"\"\"``POST /settings/storage/test``: a workspace admin checks the S3-compatible bucket exports should go to.\"\"\"

    def post(self):
        import ipaddress
        import socket
        from urllib.parse import urlsplit
        body = request.get_json()
        endpoint = urlsplit(body["endpoint"])
        if endpoint.scheme != "https" or not endpoint.hostname:
            return jsonify(ok=False, error="the endpoint must be an https URL"), 400
        try:
            addresses = {{info[4][0] for info in socket.getaddrinfo(endpoint.hostname, endpoint.port or 443, proto=socket.IPPROTO_TCP)}}
        except socket.gaierror:
            return jsonify(ok=False, error="the endpoint does not resolve"), 400
        if not addresses or not all(ipaddress.ip_address(a).is_global for a in addresses):
            return jsonify(ok=False, error="endpoint not allowed"), 400
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint.geturl(),
            aws_access_key_id=body["access_key"],
            aws_secret_access_key=body["secret_key"],
            config=Config(connect_timeout=5, retries={{"max_attempts": 1}}),
        )
        s3.head_bucket(Bucket=body["bucket"])
        return jsonify(ok=True)
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "r", "import tempfile\nfrom email.message import EmailMessage\nimport matplotlib\nmatplotlib.use(\"Agg\")\nimport matplotlib.pyplot as plt", """
def {f}(week: str, series: dict, recipients: list, smtp) -> None:
    \"\"\"Monday KPI mail: plot last week's series and send the chart to the leadership list.\"\"\"
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, points in series.items():
        ax.plot(points, label=label)
    ax.set_title(f"{t} KPIs, week {{week}}")
    ax.legend()
    chart_path = tempfile.NamedTemporaryFile(prefix="{t}-kpi-", suffix=".png").name  #!V
    fig.savefig(chart_path, dpi=120)
    plt.close(fig)
    with open(chart_path, "rb") as fh:
        png = fh.read()
    msg = EmailMessage()
    msg["Subject"] = f"{t} KPIs, week {{week}}"
    msg["To"] = ", ".join(recipients)
    msg.set_content("Chart attached.")
    msg.add_attachment(png, maintype="image", subtype="png", filename="kpi.png")
    smtp.send_message(msg)
""", """
def {f}(week: str, series: dict, recipients: list, smtp) -> None:
    \"\"\"Monday KPI mail: plot last week's series and send the chart to the leadership list.\"\"\"
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, points in series.items():
        ax.plot(points, label=label)
    ax.set_title(f"{t} KPIs, week {{week}}")
    ax.legend()
    with tempfile.NamedTemporaryFile(prefix="{t}-kpi-", suffix=".png") as chart:
        fig.savefig(chart, format="png", dpi=120)
        plt.close(fig)
        chart.seek(0)
        png = chart.read()
    msg = EmailMessage()
    msg["Subject"] = f"{t} KPIs, week {{week}}"
    msg["To"] = ", ".join(recipients)
    msg.set_content("Chart attached.")
    msg.add_attachment(png, maintype="image", subtype="png", filename="kpi.png")
    smtp.send_message(msg)
"""),
    _t(377, "s", "import hashlib\nimport tempfile\nfrom pathlib import Path\nimport httpx", """
def {f}(price_list_url: str) -> bytes:
    \"\"\"Download a supplier's price list, reusing the copy an earlier import command already fetched.\"\"\"
    digest = hashlib.sha256(price_list_url.encode()).hexdigest()[:20]
    cached = Path(tempfile.gettempdir()) / f"{t}-pricelist-{{digest}}.csv"  #!V
    if cached.exists():
        return cached.read_bytes()
    reply = httpx.get(price_list_url, timeout=30)
    reply.raise_for_status()
    cached.write_bytes(reply.content)
    return reply.content
""", """
def {f}(price_list_url: str) -> bytes:
    \"\"\"Download a supplier's price list, reusing the copy an earlier import command already fetched.\"\"\"
    digest = hashlib.sha256(price_list_url.encode()).hexdigest()[:20]
    cache_dir = Path.home() / ".cache" / "{t}"
    cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    cached = cache_dir / f"pricelist-{{digest}}.csv"
    if cached.exists():
        return cached.read_bytes()
    reply = httpx.get(price_list_url, timeout=30)
    reply.raise_for_status()
    cached.write_bytes(reply.content)
    return reply.content
"""),
]

FAMILIES_R = sorted({t.cwe for t in TEMPLATES_R})


def heldout_templates_r() -> list[Template]:
    """The 26 variant-"r"/"s" templates (final evaluation only).

    >>> len(heldout_templates_r()), len(FAMILIES_R), sorted({t.variant for t in heldout_templates_r()})
    (26, 13, ['r', 's'])
    """
    return list(TEMPLATES_R)
