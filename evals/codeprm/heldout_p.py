'''Blind template variants "p" and "q": two fresh TEST variants, for evaluation only.

Status: a second blind test of the round-4 system, evaluated once (2026-12-01 10:00 UTC).
Validation data since (embedded in the VAL hosts by benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant (a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("p", "q")

TEMPLATES_P: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "p", "import docker", """
class {f}ContainerLogSearch:
    \"\"\"Support console: count the log lines that match the pattern an agent typed into the search box.\"\"\"

    def __init__(self, client: docker.DockerClient | None = None):
        self.client = client or docker.from_env()

    def count_matches(self, container_name: str, {v}: str) -> int:
        container = self.client.containers.get(container_name)
        result = container.exec_run(["sh", "-c", f"grep -c -- '{{{v}}}' /var/log/{t}/app.log"], demux=False)  #!V
        return int(result.output.decode().strip() or 0)
""", """
class {f}ContainerLogSearch:
    \"\"\"Support console: count the log lines that match the pattern an agent typed into the search box.\"\"\"

    def __init__(self, client: docker.DockerClient | None = None):
        self.client = client or docker.from_env()

    def count_matches(self, container_name: str, {v}: str) -> int:
        container = self.client.containers.get(container_name)
        result = container.exec_run(["grep", "-c", "--", {v}, "/var/log/{t}/app.log"], demux=False)
        return int(result.output.decode().strip() or 0)
"""),
    _t(78, "q", "import os\nimport discord\nfrom discord.ext import commands\n\nopsbot = commands.Bot(command_prefix=\"!\", intents=discord.Intents.default())", """
@opsbot.command(name="dns")
async def {f}(ctx: commands.Context, {v}: str):
    \"\"\"``!dns example.org``: any member of the #ops channel can look up a hostname.\"\"\"
    answer = os.popen(f"dig +short {{{v}}} A").read()  #!V
    await ctx.reply(f"```{{answer or 'no records'}}```")
""", """
@opsbot.command(name="dns")
async def {f}(ctx: commands.Context, {v}: str):
    \"\"\"``!dns example.org``: any member of the #ops channel can look up a hostname.\"\"\"
    import re
    import shlex
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.-]{{0,252}}", {v}):
        await ctx.reply("that does not look like a hostname")
        return
    answer = os.popen("dig +short " + shlex.quote({v}) + " A").read()
    await ctx.reply(f"```{{answer or 'no records'}}```")
"""),
    # ---- CWE-89 SQL injection
    _t(89, "p", "import clickhouse_connect\nfrom ninja import Router\n\nanalytics = Router()\nch = clickhouse_connect.get_client(host=\"clickhouse.{t}.internal\", database=\"{t}\")", """
@analytics.get("/events/daily")
def {f}(request, kind: str, days: int = 7):
    \"\"\"Daily event counts for the analytics page; ``kind`` is the filter picked in the dropdown.\"\"\"
    result = ch.query(f"SELECT toDate(ts) AS day, count() AS n FROM {t} WHERE event_type = '{{kind}}' AND ts > now() - INTERVAL {{days}} DAY GROUP BY day ORDER BY day")  #!V
    return [{{"day": str(day), "count": n}} for day, n in result.result_rows]
""", """
@analytics.get("/events/daily")
def {f}(request, kind: str, days: int = 7):
    \"\"\"Daily event counts for the analytics page; ``kind`` is the filter picked in the dropdown.\"\"\"
    result = ch.query(
        "SELECT toDate(ts) AS day, count() AS n FROM {t} WHERE event_type = {{kind:String}} AND ts > now() - INTERVAL {{days:UInt32}} DAY GROUP BY day ORDER BY day",
        parameters={{"kind": kind, "days": days}},
    )
    return [{{"day": str(day), "count": n}} for day, n in result.result_rows]
"""),
    _t(89, "q", "import aiosqlite\nfrom starlette.websockets import WebSocket\n\nEDITABLE_COLUMNS = (\"title\", \"status\", \"assignee\", \"due_date\")", """
async def {f}(websocket: WebSocket) -> None:
    \"\"\"Kanban board socket: the browser sends ``{{"card": id, "changes": {{column: value}}}}`` on every edit.\"\"\"
    await websocket.accept()
    async with aiosqlite.connect("/srv/{t}/board.db") as db:
        async for {v} in websocket.iter_json():
            changes = {v}["changes"]
            assignments = ", ".join(f"{{col}} = '{{val}}'" for col, val in changes.items())
            await db.execute(f"UPDATE {t} SET {{assignments}} WHERE id = {{int({v}['card'])}}")  #!V
            await db.commit()
            await websocket.send_json({{"card": {v}["card"], "updated": sorted(changes)}})
""", """
async def {f}(websocket: WebSocket) -> None:
    \"\"\"Kanban board socket: the browser sends ``{{"card": id, "changes": {{column: value}}}}`` on every edit.\"\"\"
    await websocket.accept()
    async with aiosqlite.connect("/srv/{t}/board.db") as db:
        async for {v} in websocket.iter_json():
            changes = {{col: val for col, val in {v}["changes"].items() if col in EDITABLE_COLUMNS}}
            if not changes:
                continue
            assignments = ", ".join(f"{{col}} = ?" for col in changes)
            await db.execute(f"UPDATE {t} SET {{assignments}} WHERE id = ?", (*changes.values(), int({v}["card"])))
            await db.commit()
            await websocket.send_json({{"card": {v}["card"], "updated": sorted(changes)}})
"""),
    # ---- CWE-94 code injection
    _t(94, "p", "from chameleon import PageTemplate\nfrom pyramid.view import view_config", """
@view_config(route_name="{t}_signature_preview", request_method="POST", renderer="json")
def {f}(request):
    \"\"\"Preview the e-mail signature a user designs on the settings page (``${{name}}``, ``${{title}}``).\"\"\"
    {v} = request.POST["signature"]
    profile = request.user.profile
    html_out = PageTemplate({v})(name=profile.display_name, title=profile.job_title)  #!V
    return {{"preview": html_out}}
""", """
@view_config(route_name="{t}_signature_preview", request_method="POST", renderer="json")
def {f}(request):
    \"\"\"Preview the e-mail signature a user designs on the settings page (``${{name}}``, ``${{title}}``).\"\"\"
    {v} = request.POST["signature"]
    profile = request.user.profile
    body = {v}.replace("${{name}}", profile.display_name).replace("${{title}}", profile.job_title)
    html_out = PageTemplate("<div class='signature'>${{body}}</div>")(body=body)
    return {{"preview": html_out}}
"""),
    _t(94, "q", "import bottle\n\ntiles = bottle.Bottle()", """
@tiles.get("/map/tiles")
def {f}():
    \"\"\"Tile grid for the viewport the front-end reports in ``X-Viewport``, e.g. ``(1280, 720)``.\"\"\"
    {v} = bottle.request.get_header("X-Viewport", "(1024, 768)")
    width, height = eval({v})  #!V
    zoom = int(bottle.request.query.get("zoom", 12))
    return {{"zoom": zoom, "columns": -(-int(width) // 256), "rows": -(-int(height) // 256)}}
""", """
@tiles.get("/map/tiles")
def {f}():
    \"\"\"Tile grid for the viewport the front-end reports in ``X-Viewport``, e.g. ``(1280, 720)``.\"\"\"
    {v} = bottle.request.get_header("X-Viewport", "(1024, 768)")
    width, height = (int(part) for part in {v}.strip("() ").split(","))
    zoom = int(bottle.request.query.get("zoom", 12))
    return {{"zoom": zoom, "columns": -(-int(width) // 256), "rows": -(-int(height) // 256)}}
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "p", "import base64\nimport pickle\nimport zlib\nfrom flask_socketio import SocketIO, emit\n\nsocketio = SocketIO()", """
@socketio.on("restore_workspace")
def {f}({v}):
    \"\"\"The whiteboard client sends back the snapshot it kept in localStorage when it reconnects.\"\"\"
    snapshot = zlib.decompress(base64.b64decode({v}["snapshot"]))
    workspace = pickle.loads(snapshot)  #!V
    emit("workspace_restored", {{"shapes": len(workspace["shapes"]), "title": workspace["title"]}})
""", """
@socketio.on("restore_workspace")
def {f}({v}):
    \"\"\"The whiteboard client sends back the snapshot it kept in localStorage when it reconnects.\"\"\"
    import json
    snapshot = zlib.decompress(base64.b64decode({v}["snapshot"]))
    workspace = json.loads(snapshot)
    emit("workspace_restored", {{"shapes": len(workspace["shapes"]), "title": workspace["title"]}})
"""),
    _t(502, "q", "import os\nfrom celery import Celery", """
{f}_app = Celery("{t}", broker=os.environ.get("CELERY_BROKER_URL", "redis://localhost:6379/0"))
{f}_app.conf.update(
    task_serializer="pickle",
    result_serializer="pickle",
    accept_content=["pickle", "json"],  #!V
    task_acks_late=True,
)


@{f}_app.task
def {f}(report_id: int, filters: dict) -> dict:
    \"\"\"Build a report; tasks are published by the web tier and by the partner gateway, which shares the broker.\"\"\"
    from .reports import build_report
    return build_report(report_id, **filters)
""", """
{f}_app = Celery("{t}", broker=os.environ.get("CELERY_BROKER_URL", "redis://localhost:6379/0"))
{f}_app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
)


@{f}_app.task
def {f}(report_id: int, filters: dict) -> dict:
    \"\"\"Build a report; tasks are published by the web tier and by the partner gateway, which shares the broker.\"\"\"
    from .reports import build_report
    return build_report(report_id, **filters)
"""),
    # ---- CWE-328 weak hash for security
    _t(328, "p", "from django.contrib.auth.hashers import make_password\nfrom rest_framework import serializers\nfrom .models import Member", """
class {f}SignupSerializer(serializers.ModelSerializer):
    \"\"\"Body of ``POST /api/signup`` from the mobile app.\"\"\"
    password = serializers.CharField(write_only=True, min_length=10)

    class Meta:
        model = Member
        fields = ("email", "display_name", "password")

    def create(self, validated_data):
        validated_data["password"] = make_password(validated_data["password"], hasher="unsalted_md5")  #!V
        return Member.objects.create(**validated_data)
""", """
class {f}SignupSerializer(serializers.ModelSerializer):
    \"\"\"Body of ``POST /api/signup`` from the mobile app.\"\"\"
    password = serializers.CharField(write_only=True, min_length=10)

    class Meta:
        model = Member
        fields = ("email", "display_name", "password")

    def create(self, validated_data):
        validated_data["password"] = make_password(validated_data["password"])
        return Member.objects.create(**validated_data)
"""),
    _t(328, "q", "import hashlib\nimport time\nimport httpx", """
class {f}PaymentGateway:
    \"\"\"Client of the acquirer's order API; every request carries a signature over its parameters.\"\"\"

    def __init__(self, merchant_id: str, api_secret: str):
        self.merchant_id = merchant_id
        self.api_secret = api_secret

    def sign(self, params: dict) -> str:
        canonical = "&".join(f"{{k}}={{params[k]}}" for k in sorted(params))
        return hashlib.md5((canonical + "&key=" + self.api_secret).encode()).hexdigest().upper()  #!V

    def create_order(self, order_no: str, amount_cents: int) -> dict:
        params = {{"merchant_id": self.merchant_id, "order_no": order_no, "amount": amount_cents, "ts": int(time.time()), "sign_type": "MD5"}}
        params["sign"] = self.sign(params)
        return httpx.post("https://pay.{t}.example/v2/orders", data=params, timeout=10).json()
""", """
class {f}PaymentGateway:
    \"\"\"Client of the acquirer's order API; every request carries a signature over its parameters.\"\"\"

    def __init__(self, merchant_id: str, api_secret: str):
        self.merchant_id = merchant_id
        self.api_secret = api_secret

    def sign(self, params: dict) -> str:
        import hmac
        canonical = "&".join(f"{{k}}={{params[k]}}" for k in sorted(params))
        return hmac.new(self.api_secret.encode(), canonical.encode(), hashlib.sha256).hexdigest().upper()

    def create_order(self, order_no: str, amount_cents: int) -> dict:
        params = {{"merchant_id": self.merchant_id, "order_no": order_no, "amount": amount_cents, "ts": int(time.time()), "sign_type": "HMAC-SHA256"}}
        params["sign"] = self.sign(params)
        return httpx.post("https://pay.{t}.example/v2/orders", data=params, timeout=10).json()
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "p", "import json\nimport ssl\nimport websockets", """
async def {f}(symbols: list[str], on_tick) -> None:
    \"\"\"Subscribe to the exchange's price stream and hand every tick to ``on_tick``.\"\"\"
    tls = ssl.create_default_context()
    tls.check_hostname = False  #!V
    tls.verify_mode = ssl.CERT_NONE  #!V
    async with websockets.connect("wss://stream.{t}.example/v1/ticks", ssl=tls) as feed:
        await feed.send(json.dumps({{"op": "subscribe", "symbols": symbols}}))
        async for {v} in feed:
            await on_tick(json.loads({v}))
""", """
async def {f}(symbols: list[str], on_tick) -> None:
    \"\"\"Subscribe to the exchange's price stream and hand every tick to ``on_tick``.\"\"\"
    import certifi
    tls = ssl.create_default_context(cafile=certifi.where())
    tls.minimum_version = ssl.TLSVersion.TLSv1_2
    async with websockets.connect("wss://stream.{t}.example/v1/ticks", ssl=tls) as feed:
        await feed.send(json.dumps({{"op": "subscribe", "symbols": symbols}}))
        async for {v} in feed:
            await on_tick(json.loads({v}))
"""),
    _t(327, "q", "import os\nimport boto3\nfrom botocore.config import Config", """
def {f}(bucket: str, object_key: str, local_path: str) -> None:
    \"\"\"Upload a finished export to the on-prem MinIO cluster.\"\"\"
    s3 = boto3.client(
        "s3",
        endpoint_url=os.environ["MINIO_ENDPOINT"],
        aws_access_key_id=os.environ["MINIO_ACCESS_KEY"],
        aws_secret_access_key=os.environ["MINIO_SECRET_KEY"],
        config=Config(signature_version="s3v4", retries={{"max_attempts": 5}}),
        verify=False,  #!V
    )
    s3.upload_file(local_path, bucket, object_key, ExtraArgs={{"ServerSideEncryption": "AES256"}})
""", """
def {f}(bucket: str, object_key: str, local_path: str) -> None:
    \"\"\"Upload a finished export to the on-prem MinIO cluster.\"\"\"
    s3 = boto3.client(
        "s3",
        endpoint_url=os.environ["MINIO_ENDPOINT"],
        aws_access_key_id=os.environ["MINIO_ACCESS_KEY"],
        aws_secret_access_key=os.environ["MINIO_SECRET_KEY"],
        config=Config(signature_version="s3v4", retries={{"max_attempts": 5}}),
        verify=os.environ.get("MINIO_CA_BUNDLE", "/etc/ssl/certs/{t}-minio-ca.pem"),
    )
    s3.upload_file(local_path, bucket, object_key, ExtraArgs={{"ServerSideEncryption": "AES256"}})
"""),
    # ---- CWE-338 weak PRNG for secrets
    _t(338, "p", "import random\nfrom django.core.mail import send_mail\nfrom django.db.models.signals import post_save\nfrom django.dispatch import receiver\nfrom .models import EmailVerification, User", """
@receiver(post_save, sender=User)
def {f}(sender, instance, created, **kwargs):
    \"\"\"Send the e-mail confirmation code when somebody signs up.\"\"\"
    if not created:
        return
    code = str(random.random())[2:8]  #!V
    EmailVerification.objects.create(user=instance, code=code)
    send_mail("Confirm your {t} account", f"Your confirmation code is {{code}}", "noreply@{t}.example", [instance.email])
""", """
@receiver(post_save, sender=User)
def {f}(sender, instance, created, **kwargs):
    \"\"\"Send the e-mail confirmation code when somebody signs up.\"\"\"
    import secrets
    if not created:
        return
    code = f"{{secrets.randbelow(10 ** 6):06d}}"
    EmailVerification.objects.create(user=instance, code=code)
    send_mail("Confirm your {t} account", f"Your confirmation code is {{code}}", "noreply@{t}.example", [instance.email])
"""),
    _t(338, "q", "import base64\nimport random\nimport pyotp", """
class {f}TwoFactorEnrollment:
    \"\"\"Called from the security settings page when a user turns on authenticator-app sign-in.\"\"\"

    def __init__(self, issuer: str = "{t}"):
        self.issuer = issuer

    def begin(self, user) -> str:
        seed = random.getrandbits(160).to_bytes(20, "big")  #!V
        user.totp_secret = base64.b32encode(seed).decode()
        user.save(update_fields=["totp_secret"])
        return pyotp.TOTP(user.totp_secret).provisioning_uri(name=user.email, issuer_name=self.issuer)
""", """
class {f}TwoFactorEnrollment:
    \"\"\"Called from the security settings page when a user turns on authenticator-app sign-in.\"\"\"

    def __init__(self, issuer: str = "{t}"):
        self.issuer = issuer

    def begin(self, user) -> str:
        import secrets
        seed = secrets.token_bytes(20)
        user.totp_secret = base64.b32encode(seed).decode()
        user.save(update_fields=["totp_secret"])
        return pyotp.TOTP(user.totp_secret).provisioning_uri(name=user.email, issuer_name=self.issuer)
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "p", "import os\nfrom azure.storage.blob import BlobServiceClient, ContentSettings", """
{f}_blobs = BlobServiceClient.from_connection_string(
    "DefaultEndpointsProtocol=https;AccountName={t}media;AccountKey=YnY62dQujO5DvJT6nsKJqwXcZMF0RFG6Y18HWc/l0rLOfitSr9MupOnefqUWyb8bmHQgiK5vEUst87ygAzIclA==;EndpointSuffix=core.windows.net"  #!V
)


def {f}(user_id: int, image_bytes: bytes) -> str:
    \"\"\"Store the avatar a user uploaded and return its public URL.\"\"\"
    blob = {f}_blobs.get_blob_client(container="avatars", blob=f"{{user_id}}.png")
    blob.upload_blob(image_bytes, overwrite=True, content_settings=ContentSettings(content_type="image/png"))
    return blob.url
""", """
{f}_blobs = BlobServiceClient.from_connection_string(
    os.environ["AZURE_STORAGE_CONNECTION_STRING"]
)


def {f}(user_id: int, image_bytes: bytes) -> str:
    \"\"\"Store the avatar a user uploaded and return its public URL.\"\"\"
    blob = {f}_blobs.get_blob_client(container="avatars", blob=f"{{user_id}}.png")
    blob.upload_blob(image_bytes, overwrite=True, content_settings=ContentSettings(content_type="image/png"))
    return blob.url
"""),
    _t(798, "q", "import os\nfrom cryptography.fernet import Fernet", """
class {f}TokenVault:
    \"\"\"Keeps the OAuth refresh tokens of connected third-party accounts encrypted at rest.\"\"\"

    fernet = Fernet(b"MhAzk2h2W2OcQuZBBrCn8uZpBnTZcwj9PuvetDMeBns=")  #!V

    def __init__(self, store):
        self.store = store

    def put(self, account_id: int, refresh_token: str) -> None:
        self.store.set(f"{t}:refresh:{{account_id}}", self.fernet.encrypt(refresh_token.encode()))

    def get(self, account_id: int) -> str:
        return self.fernet.decrypt(self.store.get(f"{t}:refresh:{{account_id}}")).decode()
""", """
class {f}TokenVault:
    \"\"\"Keeps the OAuth refresh tokens of connected third-party accounts encrypted at rest.\"\"\"

    fernet = Fernet(os.environ["TOKEN_VAULT_KEY"].encode())

    def __init__(self, store):
        self.store = store

    def put(self, account_id: int, refresh_token: str) -> None:
        self.store.set(f"{t}:refresh:{{account_id}}", self.fernet.encrypt(refresh_token.encode()))

    def get(self, account_id: int) -> str:
        return self.fernet.decrypt(self.store.get(f"{t}:refresh:{{account_id}}")).decode()
"""),
    # ---- CWE-22 path traversal
    _t(22, "p", "import os\nimport tornado.web\n\nDOCS_DIR = \"/srv/{t}/docs\"", """
class {f}DocPageHandler(tornado.web.RequestHandler):
    \"\"\"Routed as ``/help/(.+)``: the help-centre article whose slug is in the URL.\"\"\"

    def get(self, {v}: str) -> None:
        page_path = os.path.join(DOCS_DIR, {v} + ".md")
        if not os.path.isfile(page_path):
            raise tornado.web.HTTPError(404)
        with open(page_path, encoding="utf-8") as fh:  #!V
            self.render("doc.html", markdown_source=fh.read(), slug={v})
""", """
class {f}DocPageHandler(tornado.web.RequestHandler):
    \"\"\"Routed as ``/help/(.+)``: the help-centre article whose slug is in the URL.\"\"\"

    def get(self, {v}: str) -> None:
        import re
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{{0,80}}(/[a-z0-9][a-z0-9_-]{{0,80}}){{0,3}}", {v}):
            raise tornado.web.HTTPError(404)
        page_path = os.path.join(DOCS_DIR, {v} + ".md")
        if not os.path.isfile(page_path):
            raise tornado.web.HTTPError(404)
        with open(page_path, encoding="utf-8") as fh:
            self.render("doc.html", markdown_source=fh.read(), slug={v})
"""),
    _t(22, "q", "import json\nimport shutil\nfrom pathlib import Path\nimport aio_pika\n\nSTAGING = Path(\"/srv/{t}/staging\")\nPUBLISHED = Path(\"/srv/{t}/public\")", """
async def {f}(message: aio_pika.abc.AbstractIncomingMessage) -> None:
    \"\"\"Publish step of the site builder; the CMS enqueues ``{{"page": id, "target": path}}`` when an editor hits Publish.\"\"\"
    async with message.process():
        {v} = json.loads(message.body)
        destination = PUBLISHED / {v}["target"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STAGING / f"{{int({v}['page'])}}.html", destination)  #!V
""", """
async def {f}(message: aio_pika.abc.AbstractIncomingMessage) -> None:
    \"\"\"Publish step of the site builder; the CMS enqueues ``{{"page": id, "target": path}}`` when an editor hits Publish.\"\"\"
    async with message.process():
        {v} = json.loads(message.body)
        destination = (PUBLISHED / {v}["target"]).resolve()
        if not destination.is_relative_to(PUBLISHED.resolve()):
            raise ValueError("publish target outside the public tree")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STAGING / f"{{int({v}['page'])}}.html", destination)
"""),
    # ---- CWE-79 XSS
    _t(79, "p", "from fasthtml.common import B, Div, H2, NotStr, P, Q, fast_app\n\nguestbook, rt = fast_app()", """
@rt("/guestbook/thanks", methods=["post"])
def {f}({v}: str, message: str):
    \"\"\"Shown right after a visitor signs the guestbook form.\"\"\"
    return Div(
        H2("Thanks for signing!"),
        P(NotStr(f"<b>{{{v}}}</b> wrote: <q>{{message}}</q>")),  #!V
    )
""", """
@rt("/guestbook/thanks", methods=["post"])
def {f}({v}: str, message: str):
    \"\"\"Shown right after a visitor signs the guestbook form.\"\"\"
    return Div(
        H2("Thanks for signing!"),
        P(B({v}), " wrote: ", Q(message)),
    )
"""),
    _t(79, "q", "from dash import Dash, Input, Output, State, dcc\nfrom .store import append_note, recent_notes\n\nboard = Dash(__name__)", """
@board.callback(Output("notes-feed", "children"), Input("post-note", "n_clicks"), State("note-text", "value"), prevent_initial_call=True)
def {f}(n_clicks, {v}):
    \"\"\"Team notes board: a note typed by one member is shown to everybody who opens the board.\"\"\"
    append_note({v} or "")
    return [dcc.Markdown(note, dangerously_allow_html=True) for note in recent_notes(limit=50)]  #!V
""", """
@board.callback(Output("notes-feed", "children"), Input("post-note", "n_clicks"), State("note-text", "value"), prevent_initial_call=True)
def {f}(n_clicks, {v}):
    \"\"\"Team notes board: a note typed by one member is shown to everybody who opens the board.\"\"\"
    append_note({v} or "")
    return [dcc.Markdown(note, dangerously_allow_html=False) for note in recent_notes(limit=50)]
"""),
    # ---- CWE-611 XXE
    _t(611, "p", "from zeep import Client, Settings\nfrom zeep.transports import Transport", """
class {f}CarrierTracking:
    \"\"\"Shipment status from a partner carrier's SOAP service (run by the carrier, not by us).\"\"\"

    def __init__(self, wsdl: str = "https://ws.carrier.example/{t}/Tracking?wsdl"):
        settings = Settings(strict=False, xml_huge_tree=True, forbid_dtd=False, forbid_entities=False, forbid_external=False)  #!V
        self.client = Client(wsdl, settings=settings, transport=Transport(timeout=15))

    def status(self, tracking_number: str) -> str:
        reply = self.client.service.GetTrackingStatus(TrackingNumber=tracking_number)
        return reply.StatusDescription
""", """
class {f}CarrierTracking:
    \"\"\"Shipment status from a partner carrier's SOAP service (run by the carrier, not by us).\"\"\"

    def __init__(self, wsdl: str = "https://ws.carrier.example/{t}/Tracking?wsdl"):
        settings = Settings(strict=False, xml_huge_tree=False, forbid_dtd=True, forbid_entities=True, forbid_external=True)
        self.client = Client(wsdl, settings=settings, transport=Transport(timeout=15))

    def status(self, tracking_number: str) -> str:
        reply = self.client.service.GetTrackingStatus(TrackingNumber=tracking_number)
        return reply.StatusDescription
"""),
    _t(611, "q", "from django.http import JsonResponse\nfrom django.views.decorators.http import require_POST\nfrom lxml import etree\nfrom .models import Product", """
@require_POST
def {f}(request):
    \"\"\"Suppliers upload their product catalogue (XML) on the partner portal.\"\"\"
    {v} = request.FILES["catalogue"]
    imported = 0
    for _event, node in etree.iterparse({v}, events=("end",), tag="product", load_dtd=True, resolve_entities=True, no_network=False):  #!V
        Product.objects.update_or_create(sku=node.get("sku"), defaults={{"name": node.findtext("name"), "price": node.findtext("price")}})
        imported += 1
        node.clear()
    return JsonResponse({{"imported": imported}})
""", """
@require_POST
def {f}(request):
    \"\"\"Suppliers upload their product catalogue (XML) on the partner portal.\"\"\"
    {v} = request.FILES["catalogue"]
    imported = 0
    for _event, node in etree.iterparse({v}, events=("end",), tag="product", load_dtd=False, resolve_entities=False, no_network=True):
        Product.objects.update_or_create(sku=node.get("sku"), defaults={{"name": node.findtext("name"), "price": node.findtext("price")}})
        imported += 1
        node.clear()
    return JsonResponse({{"imported": imported}})
"""),
    # ---- CWE-918 SSRF
    _t(918, "p", "from flask import Blueprint, abort, jsonify, request\nfrom langchain_community.document_loaders import WebBaseLoader\nfrom .llm import answer_question\n\nassistant = Blueprint(\"assistant\", __name__)", """
@assistant.post("/ask-page")
def {f}():
    \"\"\"Chat with a web page: the user pastes a link and asks a question about it.\"\"\"
    body = request.get_json()
    {v} = body["url"]
    docs = WebBaseLoader({v}).load()  #!V
    return jsonify(answer=answer_question(body["question"], docs), source={v})
""", """
@assistant.post("/ask-page")
def {f}():
    \"\"\"Chat with a web page: the user pastes a link and asks a question about it.\"\"\"
    import ipaddress
    import socket
    from urllib.parse import urlsplit
    body = request.get_json()
    {v} = body["url"]
    parts = urlsplit({v})
    if parts.scheme not in ("http", "https") or not parts.hostname:
        abort(400)
    addresses = {{info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or 443)}}
    if not addresses or not all(ipaddress.ip_address(a).is_global for a in addresses):
        abort(400)
    docs = WebBaseLoader({v}, requests_kwargs={{"allow_redirects": False}}).load()
    return jsonify(answer=answer_question(body["question"], docs), source={v})
"""),
    _t(918, "q", "import smtplib\nfrom rq import get_current_job", """
def {f}(tenant_id: int, smtp_host: str, smtp_port: int, username: str, password: str) -> dict:
    \"\"\"RQ job behind the "Send test e-mail" button of a tenant's mail settings form.\"\"\"
    job = get_current_job()
    try:
        with smtplib.SMTP(smtp_host, int(smtp_port), timeout=10) as relay:  #!V
            relay.starttls()
            relay.login(username, password)
            banner = relay.noop()
        result = {{"ok": True, "reply": banner[1].decode(errors="replace")}}
    except (OSError, smtplib.SMTPException) as exc:
        result = {{"ok": False, "error": str(exc)}}
    job.meta["smtp_test"] = result
    job.save_meta()
    return result
""", """
def {f}(tenant_id: int, smtp_host: str, smtp_port: int, username: str, password: str) -> dict:
    \"\"\"RQ job behind the "Send test e-mail" button of a tenant's mail settings form.\"\"\"
    import ipaddress
    import socket
    job = get_current_job()
    try:
        if int(smtp_port) not in (25, 465, 587, 2525):
            raise smtplib.SMTPException("port not allowed")
        addresses = {{info[4][0] for info in socket.getaddrinfo(smtp_host, int(smtp_port), proto=socket.IPPROTO_TCP)}}
        if not addresses or not all(ipaddress.ip_address(a).is_global for a in addresses):
            raise smtplib.SMTPException("host not allowed")
        with smtplib.SMTP(smtp_host, int(smtp_port), timeout=10) as relay:
            relay.starttls()
            relay.login(username, password)
            banner = relay.noop()
        result = {{"ok": True, "reply": banner[1].decode(errors="replace")}}
    except (OSError, smtplib.SMTPException) as exc:
        result = {{"ok": False, "error": str(exc)}}
    job.meta["smtp_test"] = result
    job.save_meta()
    return result
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "p", "import subprocess\nimport dramatiq\nimport requests\nfrom .storage import upload_audio", """
@dramatiq.actor(max_retries=3, time_limit=600_000)
def {f}(episode_id: int, source_url: str) -> None:
    \"\"\"Podcast pipeline: transcode an episode to 128 kbit/s MP3; ``source_url`` is the pre-signed link to our media bucket.\"\"\"
    raw_path = f"/tmp/{t}-episode-{{episode_id}}.src"  #!V
    mp3_path = f"/tmp/{t}-episode-{{episode_id}}.mp3"  #!V
    with requests.get(source_url, stream=True, timeout=30) as download, open(raw_path, "wb") as out:
        for chunk in download.iter_content(1 << 16):
            out.write(chunk)
    subprocess.run(["ffmpeg", "-y", "-i", raw_path, "-b:a", "128k", mp3_path], check=True, capture_output=True)
    upload_audio(episode_id, mp3_path)
""", """
@dramatiq.actor(max_retries=3, time_limit=600_000)
def {f}(episode_id: int, source_url: str) -> None:
    \"\"\"Podcast pipeline: transcode an episode to 128 kbit/s MP3; ``source_url`` is the pre-signed link to our media bucket.\"\"\"
    import os
    import tempfile
    with tempfile.TemporaryDirectory(prefix="{t}-episode-") as workdir:
        raw_path = os.path.join(workdir, "source")
        mp3_path = os.path.join(workdir, "episode.mp3")
        with requests.get(source_url, stream=True, timeout=30) as download, open(raw_path, "wb") as out:
            for chunk in download.iter_content(1 << 16):
                out.write(chunk)
        subprocess.run(["ffmpeg", "-y", "-i", raw_path, "-b:a", "128k", mp3_path], check=True, capture_output=True)
        upload_audio(episode_id, mp3_path)
"""),
    _t(377, "q", "import argparse\nimport joblib\nfrom sklearn.linear_model import LogisticRegression\nfrom .features import load_training_frame", """
def {f}(argv=None) -> str:
    \"\"\"``train-churn --run-name NAME``: fit the churn model and leave the artefact for the deploy step.\"\"\"
    parser = argparse.ArgumentParser(prog="train-churn")
    parser.add_argument("--run-name", default="nightly")
    args = parser.parse_args(argv)
    features, labels = load_training_frame("{t}")
    model = LogisticRegression(max_iter=1000).fit(features, labels)
    artefact = "/tmp/churn-%s.joblib" % args.run_name  #!V
    joblib.dump(model, artefact)
    return artefact
""", """
def {f}(argv=None) -> str:
    \"\"\"``train-churn --run-name NAME``: fit the churn model and leave the artefact for the deploy step.\"\"\"
    import os
    import tempfile
    parser = argparse.ArgumentParser(prog="train-churn")
    parser.add_argument("--run-name", default="nightly")
    args = parser.parse_args(argv)
    features, labels = load_training_frame("{t}")
    model = LogisticRegression(max_iter=1000).fit(features, labels)
    artefact = os.path.join(tempfile.mkdtemp(prefix="churn-"), "model.joblib")
    joblib.dump(model, artefact)
    return artefact
"""),
]

FAMILIES_P = sorted({t.cwe for t in TEMPLATES_P})


def heldout_templates_p() -> list[Template]:
    """The 26 variant-"p"/"q" templates (final evaluation only).

    >>> len(heldout_templates_p()), len(FAMILIES_P), sorted({t.variant for t in heldout_templates_p()})
    (26, 13, ['p', 'q'])
    """
    return list(TEMPLATES_P)
