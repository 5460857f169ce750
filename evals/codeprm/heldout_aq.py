'''Blind template variants "aq" and "ar": realistic code (new APIs relative to every earlier set), for evaluation only.

Status: the novelty-protocol blind test of the round-11 system, evaluated once (2026-12-01 15:09 UTC);
validation data since round 12 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests or results, and who ran no analyser on these templates. APIs,
call patterns, data flows, fixes and code shapes differ from every earlier variant. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("aq", "ar")

TEMPLATES_AQ: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "aq", r'''
from pathlib import Path

from mcp.server.fastmcp import FastMCP

WORKSPACE = Path("/srv/{t}/workspace")
workspace_tools = FastMCP("{t}-workspace")
''', r'''
@workspace_tools.tool()
def {f}({v}: str, max_chars: int = 200_000) -> str:
    """Read a file from the project workspace so the assistant can quote it (path is relative to the workspace)."""
    path = WORKSPACE / {v}  #!V
    if not path.is_file():
        return f"no such file: {{{v}}}"
    return path.read_text(encoding="utf-8", errors="replace")[:max_chars]  #!V
''', r'''
@workspace_tools.tool()
def {f}({v}: str, max_chars: int = 200_000) -> str:
    """Read a file from the project workspace so the assistant can quote it (path is relative to the workspace)."""
    root = WORKSPACE.resolve()
    path = (root / {v}).resolve()
    if not path.is_relative_to(root):
        return f"access denied: {{{v}}} is outside the workspace"
    if not path.is_file():
        return f"no such file: {{{v}}}"
    return path.read_text(encoding="utf-8", errors="replace")[:max_chars]
'''),
    _t(22, "ar", r'''
import os

import boto3
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest, JsonResponse
from django.views.decorators.http import require_POST

s3 = boto3.client("s3")
REPORTS_DIR = "/var/lib/{t}/reports"
SHARE_BUCKET = "{t}-shared-reports"
''', r'''
@login_required
@require_POST
def {f}(request):
    """Publish one of the generated reports to S3 and return a one-hour download link."""
    {v} = request.POST.get("report", "")
    local_path = os.path.join(REPORTS_DIR, {v})
    if not os.path.isfile(local_path):
        return HttpResponseBadRequest("unknown report")
    object_key = f"shared/{{request.user.pk}}/{{os.path.basename(local_path)}}"
    s3.upload_file(local_path, SHARE_BUCKET, object_key)  #!V
    url = s3.generate_presigned_url("get_object", Params={{"Bucket": SHARE_BUCKET, "Key": object_key}}, ExpiresIn=3600)
    return JsonResponse({{"url": url}})
''', r'''
@login_required
@require_POST
def {f}(request):
    """Publish one of the generated reports to S3 and return a one-hour download link."""
    {v} = request.POST.get("report", "")
    root = os.path.realpath(REPORTS_DIR)
    local_path = os.path.realpath(os.path.join(root, {v}))
    if os.path.commonpath([root, local_path]) != root or not os.path.isfile(local_path):
        return HttpResponseBadRequest("unknown report")
    object_key = f"shared/{{request.user.pk}}/{{os.path.basename(local_path)}}"
    s3.upload_file(local_path, SHARE_BUCKET, object_key)
    url = s3.generate_presigned_url("get_object", Params={{"Bucket": SHARE_BUCKET, "Key": object_key}}, ExpiresIn=3600)
    return JsonResponse({{"url": url}})
'''),
    # ---- CWE-78 OS command injection
    _t(78, "aq", r'''
import re

import salt.client
from flask import Blueprint, abort, jsonify, request

ops_api = Blueprint("ops_api", __name__)
salt_local = salt.client.LocalClient()
KNOWN_MINIONS = ("{t}-web-01", "{t}-web-02", "{t}-worker-01")
UNIT_RE = re.compile(r"^[A-Za-z0-9@_.-]{{1,64}}\.service$")
''', r'''
@ops_api.post("/ops/journal")
def {f}():
    """Tail the systemd journal of one unit on one minion for the on-call dashboard."""
    body = request.get_json(force=True)
    {v} = body.get("unit", "")
    minion = body.get("minion", "")
    if minion not in KNOWN_MINIONS:
        abort(400)
    lines = int(body.get("lines", 200))
    out = salt_local.cmd(minion, "cmd.run", [f"journalctl -u {{{v}}} -n {{lines}} --no-pager"])  #!V
    return jsonify(out)
''', r'''
@ops_api.post("/ops/journal")
def {f}():
    """Tail the systemd journal of one unit on one minion for the on-call dashboard."""
    body = request.get_json(force=True)
    {v} = body.get("unit", "")
    minion = body.get("minion", "")
    if minion not in KNOWN_MINIONS or not UNIT_RE.fullmatch({v}):
        abort(400)
    lines = max(1, min(int(body.get("lines", 200)), 2000))
    out = salt_local.cmd(minion, "cmd.run", [f"journalctl -u {{{v}}} -n {{lines}} --no-pager"], kwarg={{"python_shell": False}})
    return jsonify(out)
'''),
    _t(78, "ar", r'''
import os
import re

import winrm

APP_SERVERS = ("{t}-app01.corp.example", "{t}-app02.corp.example")
SERVICE_RE = re.compile(r"^[A-Za-z0-9_.-]{{1,80}}$")
''', r'''
def {f}(server: str, {v}: str) -> str:
    """Handler for the chat bot's /restart-service command: restart a Windows service on an app server."""
    if server not in APP_SERVERS:
        raise PermissionError(f"unknown server {{server}}")
    session = winrm.Session(f"https://{{server}}:5986/wsman", auth=(os.environ["WINRM_USER"], os.environ["WINRM_PASSWORD"]), transport="ntlm")
    script = f"Restart-Service -Name '{{{v}}}' -Force; (Get-Service -Name '{{{v}}}').Status"  #!V
    result = session.run_ps(script)  #!V
    return result.std_out.decode("utf-8", "replace").strip()
''', r'''
def {f}(server: str, {v}: str) -> str:
    """Handler for the chat bot's /restart-service command: restart a Windows service on an app server."""
    if server not in APP_SERVERS:
        raise PermissionError(f"unknown server {{server}}")
    if not SERVICE_RE.fullmatch({v}):
        raise ValueError("service names may only contain letters, digits, '.', '_' and '-'")
    session = winrm.Session(f"https://{{server}}:5986/wsman", auth=(os.environ["WINRM_USER"], os.environ["WINRM_PASSWORD"]), transport="ntlm")
    script = f"Restart-Service -Name '{{{v}}}' -Force; (Get-Service -Name '{{{v}}}').Status"
    result = session.run_ps(script)
    return result.std_out.decode("utf-8", "replace").strip()
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "aq", r'''
import markdown2
from fastapi import FastAPI, Form
from fastapi.responses import HTMLResponse

app = FastAPI()
MD_EXTRAS = ["fenced-code-blocks", "tables", "strike"]
''', r'''
@app.post("/comments/preview", response_class=HTMLResponse)
def {f}({v}: str = Form(...)):
    """Live preview of a comment while the user is still typing it in the editor."""
    rendered = markdown2.markdown({v}, extras=MD_EXTRAS)  #!V
    return HTMLResponse(f"<div class='comment-preview'>{{rendered}}</div>")
''', r'''
@app.post("/comments/preview", response_class=HTMLResponse)
def {f}({v}: str = Form(...)):
    """Live preview of a comment while the user is still typing it in the editor."""
    rendered = markdown2.markdown({v}, extras=MD_EXTRAS, safe_mode="escape")
    return HTMLResponse(f"<div class='comment-preview'>{{rendered}}</div>")
'''),
    _t(79, "ar", r'''
import tornado.template
import tornado.web

GUESTBOOK: list[dict] = []
''', r'''
class {f}Handler(tornado.web.RequestHandler):
    """Public guestbook: visitors leave a short note that everybody can read."""

    PAGE = tornado.template.Template(
        "<h1>Guestbook</h1><ul class='notes'>"
        "{{% for note in notes %}}"
        "<li><b>{{{{ note['author'] }}}}</b>: {{% raw note['message'] %}}</li>"  #!V
        "{{% end %}}</ul>"
    )

    def get(self):
        self.write(self.PAGE.generate(notes=GUESTBOOK[-50:]))

    def post(self):
        {v} = self.get_body_argument("message")
        GUESTBOOK.append({{"author": self.get_body_argument("author", "anonymous"), "message": {v}}})
        self.redirect(self.request.path)
''', r'''
class {f}Handler(tornado.web.RequestHandler):
    """Public guestbook: visitors leave a short note that everybody can read."""

    PAGE = tornado.template.Template(
        "<h1>Guestbook</h1><ul class='notes'>"
        "{{% for note in notes %}}"
        "<li><b>{{{{ note['author'] }}}}</b>: {{{{ note['message'] }}}}</li>"
        "{{% end %}}</ul>"
    )

    def get(self):
        self.write(self.PAGE.generate(notes=GUESTBOOK[-50:]))

    def post(self):
        {v} = self.get_body_argument("message")
        GUESTBOOK.append({{"author": self.get_body_argument("author", "anonymous"), "message": {v}}})
        self.redirect(self.request.path)
'''),
    # ---- CWE-89 SQL injection
    _t(89, "aq", r'''
import os

import sqlalchemy as sa
from fastapi import FastAPI, HTTPException, Query

app = FastAPI()
engine = sa.create_engine(os.environ["DATABASE_URL"], pool_pre_ping=True)
tickets = sa.Table(
    "tickets",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("subject", sa.String),
    sa.Column("priority", sa.Integer),
    sa.Column("status", sa.String),
    sa.Column("created_at", sa.DateTime),
)
SORTABLE = {{"created_at": tickets.c.created_at, "priority": tickets.c.priority, "status": tickets.c.status}}
''', r'''
@app.get("/tickets")
def {f}({v}: str = Query("created_at"), descending: bool = True):
    """Ticket list for the support console; the clicked table header is sent as the sort column."""
    column = sa.literal_column({v})  #!V
    stmt = sa.select(tickets).order_by(column.desc() if descending else column.asc()).limit(100)
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(stmt)]
''', r'''
@app.get("/tickets")
def {f}({v}: str = Query("created_at"), descending: bool = True):
    """Ticket list for the support console; the clicked table header is sent as the sort column."""
    column = SORTABLE.get({v})
    if column is None:
        raise HTTPException(status_code=400, detail="unsupported sort column")
    stmt = sa.select(tickets).order_by(column.desc() if descending else column.asc()).limit(100)
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(stmt)]
'''),
    _t(89, "ar", r'''
from datetime import date

from flask import Blueprint, abort, jsonify, request
from peewee import SQL

from .models import Order

finance = Blueprint("finance", __name__)
''', r'''
@finance.get("/api/{t}/recent")
def {f}():
    """Recent orders for the finance dashboard, optionally starting from a given day."""
    {v} = request.args.get("since", "2000-01-01")
    rows = (
        Order.select(Order.id, Order.customer, Order.total, Order.created)
        .where(SQL(f"created >= '{{{v}}}'"))  #!V
        .order_by(Order.created.desc())
        .limit(200)
    )
    return jsonify(list(rows.dicts()))
''', r'''
@finance.get("/api/{t}/recent")
def {f}():
    """Recent orders for the finance dashboard, optionally starting from a given day."""
    {v} = request.args.get("since", "2000-01-01")
    try:
        since = date.fromisoformat({v})
    except ValueError:
        abort(400)
    rows = (
        Order.select(Order.id, Order.customer, Order.total, Order.created)
        .where(Order.created >= since)
        .order_by(Order.created.desc())
        .limit(200)
    )
    return jsonify(list(rows.dicts()))
'''),
    # ---- CWE-94 code injection
    _t(94, "aq", r'''
import torch
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
LOADED_MODELS: dict[str, torch.nn.Module] = {{}}
APPROVED_HUB_MODELS = {{
    "pytorch/vision:v0.17.0": {{"resnet50", "mobilenet_v3_large", "vit_b_16"}},
    "NVIDIA/DeepLearningExamples:torchhub": {{"nvidia_efficientnet_b0"}},
}}
''', r'''
@app.post("/admin/benchmarks/models")
def {f}():
    """Register a Torch Hub model ("owner/repo:ref" plus entrypoint) with the benchmarking service."""
    {v} = request.get_json(force=True)
    repo = {v}["repo"]
    entrypoint = {v}.get("entrypoint", "model")
    model = torch.hub.load(repo, entrypoint, pretrained=True, trust_repo=True)  #!V
    model.eval()
    LOADED_MODELS[f"{{repo}}/{{entrypoint}}"] = model
    return jsonify({{"loaded": f"{{repo}}/{{entrypoint}}"}}), 201
''', r'''
@app.post("/admin/benchmarks/models")
def {f}():
    """Register a Torch Hub model ("owner/repo:ref" plus entrypoint) with the benchmarking service."""
    {v} = request.get_json(force=True)
    repo = {v}["repo"]
    entrypoint = {v}.get("entrypoint", "model")
    if entrypoint not in APPROVED_HUB_MODELS.get(repo, ()):
        abort(400, description="only reviewed, pinned hub repositories can be loaded")
    model = torch.hub.load(repo, entrypoint, pretrained=True, trust_repo=True)
    model.eval()
    LOADED_MODELS[f"{{repo}}/{{entrypoint}}"] = model
    return jsonify({{"loaded": f"{{repo}}/{{entrypoint}}"}}), 201
'''),
    _t(94, "ar", r'''
from flask import Flask, Response, request
from genshi.template import MarkupTemplate
from jinja2.sandbox import SandboxedEnvironment

from .orders import sample_order

app = Flask(__name__)
invoice_sandbox = SandboxedEnvironment(autoescape=True)
''', r'''
@app.post("/settings/invoice-template/preview")
def {f}():
    """Let a merchant preview their customised invoice layout against a sample order."""
    {v} = request.form["template"]
    page = MarkupTemplate({v}).generate(order=sample_order()).render("html")  #!V
    return Response(page, mimetype="text/html")
''', r'''
@app.post("/settings/invoice-template/preview")
def {f}():
    """Let a merchant preview their customised invoice layout against a sample order."""
    {v} = request.form["template"]
    page = invoice_sandbox.from_string({v}).render(order=sample_order())
    return Response(page, mimetype="text/html")
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "aq", r'''
import Pyro4

from .featurestore import upsert_features
''', r'''
@Pyro4.expose
class FeatureIngest:
    """Remote object the data-science notebooks push computed feature frames to."""

    def push(self, {v}):
        return upsert_features({v})


def {f}(bind_host: str = "0.0.0.0", port: int = 9090) -> None:
    """Run the Pyro daemon that notebooks on the analytics VLAN connect to."""
    Pyro4.config.SERIALIZER = "pickle"
    Pyro4.config.SERIALIZERS_ACCEPTED.add("pickle")  #!V
    daemon = Pyro4.Daemon(host=bind_host, port=port)
    daemon.register(FeatureIngest(), objectId="feature.ingest")
    daemon.requestLoop()
''', r'''
@Pyro4.expose
class FeatureIngest:
    """Remote object the data-science notebooks push computed feature frames to."""

    def push(self, {v}):
        return upsert_features({v})


def {f}(bind_host: str = "0.0.0.0", port: int = 9090) -> None:
    """Run the Pyro daemon that notebooks on the analytics VLAN connect to."""
    Pyro4.config.SERIALIZER = "serpent"
    Pyro4.config.SERIALIZERS_ACCEPTED = {{"serpent", "json"}}
    daemon = Pyro4.Daemon(host=bind_host, port=port)
    daemon.register(FeatureIngest(), objectId="feature.ingest")
    daemon.requestLoop()
'''),
    _t(502, "ar", r'''
from kombu import Connection, Exchange, Queue

from .ledger import apply_partner_settlement

PARTNER_EXCHANGE = Exchange("partner.events", type="topic", durable=True)
SETTLEMENT_QUEUE = Queue("{t}.settlements", PARTNER_EXCHANGE, routing_key="settlement.*")
''', r'''
def _on_settlement({v}, message):
    apply_partner_settlement({v})
    message.ack()


def {f}(broker_url: str) -> None:
    """Consume the settlement events our payment partner publishes onto the shared vhost."""
    with Connection(broker_url, heartbeat=30) as conn:
        with conn.Consumer(SETTLEMENT_QUEUE, callbacks=[_on_settlement], accept=["json", "pickle"]):  #!V
            while True:
                conn.drain_events()
''', r'''
def _on_settlement({v}, message):
    apply_partner_settlement({v})
    message.ack()


def {f}(broker_url: str) -> None:
    """Consume the settlement events our payment partner publishes onto the shared vhost."""
    with Connection(broker_url, heartbeat=30) as conn:
        with conn.Consumer(SETTLEMENT_QUEUE, callbacks=[_on_settlement], accept=["json"]):
            while True:
                conn.drain_events()
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "aq", r'''
import base64
import os

import pyaes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VAULT_KEY = bytes.fromhex(os.environ["CREDENTIAL_VAULT_KEY"])
''', r'''
def {f}({v}: str) -> str:
    """Seal a customer's third-party API token before it is stored in the integrations table."""
    encrypter = pyaes.Encrypter(pyaes.AESModeOfOperationECB(VAULT_KEY))  #!V
    sealed = encrypter.feed({v}.encode("utf-8"))
    sealed += encrypter.feed()
    return base64.b64encode(sealed).decode("ascii")
''', r'''
def {f}({v}: str) -> str:
    """Seal a customer's third-party API token before it is stored in the integrations table."""
    nonce = os.urandom(12)
    sealed = nonce + AESGCM(VAULT_KEY).encrypt(nonce, {v}.encode("utf-8"), b"{t}-integration-token")
    return base64.b64encode(sealed).decode("ascii")
'''),
    _t(327, "ar", r'''
import os

import gnupg

gpg = gnupg.GPG(gnupghome="/var/lib/{t}/gnupg")
''', r'''
def {f}({v}: str) -> str:
    """Encrypt the nightly database dump with the offsite-backup passphrase before it leaves the host."""
    out_path = {v} + ".gpg"
    with open({v}, "rb") as dump:
        result = gpg.encrypt_file(dump, recipients=None, symmetric="3DES", passphrase=os.environ["BACKUP_PASSPHRASE"], armor=False, output=out_path)  #!V
    if not result.ok:
        raise RuntimeError(f"gpg failed: {{result.status}}")
    return out_path
''', r'''
def {f}({v}: str) -> str:
    """Encrypt the nightly database dump with the offsite-backup passphrase before it leaves the host."""
    out_path = {v} + ".gpg"
    with open({v}, "rb") as dump:
        result = gpg.encrypt_file(dump, recipients=None, symmetric="AES256", passphrase=os.environ["BACKUP_PASSPHRASE"], armor=False, output=out_path)
    if not result.ok:
        raise RuntimeError(f"gpg failed: {{result.status}}")
    return out_path
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "aq", r'''
import hashlib
import os

from .models import db
''', r'''
def {f}(account, {v}: str) -> None:
    """Store the new password chosen at the end of the reset flow."""
    salt = os.urandom(16)
    digest = hashlib.blake2b({v}.encode("utf-8"), salt=salt, digest_size=32).hexdigest()  #!V
    account.password_hash = f"blake2b${{salt.hex()}}${{digest}}"
    db.session.commit()
''', r'''
def {f}(account, {v}: str) -> None:
    """Store the new password chosen at the end of the reset flow."""
    salt = os.urandom(16)
    digest = hashlib.scrypt({v}.encode("utf-8"), salt=salt, n=2**14, r=8, p=1, dklen=32).hex()
    account.password_hash = f"scrypt$16384$8$1${{salt.hex()}}${{digest}}"
    db.session.commit()
'''),
    _t(328, "ar", r'''
import io
import os

from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import signers

APPROVAL_SIGNER = signers.SimpleSigner.load(
    "/etc/{t}/signing/approval.key.pem",
    "/etc/{t}/signing/approval.cert.pem",
    key_passphrase=os.environ["SIGNING_KEY_PASSPHRASE"].encode(),
)
''', r'''
def {f}({v}: bytes) -> bytes:
    """Apply the company's approval signature to a contract PDF uploaded by the legal team."""
    writer = IncrementalPdfFileWriter(io.BytesIO({v}))
    meta = signers.PdfSignatureMetadata(field_name="CompanyApproval", md_algorithm="sha1", reason="Approved by {t} legal")  #!V
    signed = signers.sign_pdf(writer, meta, signer=APPROVAL_SIGNER)
    return signed.getvalue()
''', r'''
def {f}({v}: bytes) -> bytes:
    """Apply the company's approval signature to a contract PDF uploaded by the legal team."""
    writer = IncrementalPdfFileWriter(io.BytesIO({v}))
    meta = signers.PdfSignatureMetadata(field_name="CompanyApproval", md_algorithm="sha256", reason="Approved by {t} legal")
    signed = signers.sign_pdf(writer, meta, signer=APPROVAL_SIGNER)
    return signed.getvalue()
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "aq", r'''
import secrets

import numpy as np
''', r'''
def {f}({v}: list[dict]) -> list[dict]:
    """Give every parcel in a carrier manifest the 6-digit PIN that opens its pickup locker."""
    rng = np.random.default_rng()
    pins = rng.integers(0, 1_000_000, size=len({v}))  #!V
    for parcel, pin in zip({v}, pins):
        parcel["locker_pin"] = f"{{int(pin):06d}}"
    return {v}
''', r'''
def {f}({v}: list[dict]) -> list[dict]:
    """Give every parcel in a carrier manifest the 6-digit PIN that opens its pickup locker."""
    pins = [secrets.randbelow(1_000_000) for _ in {v}]
    for parcel, pin in zip({v}, pins):
        parcel["locker_pin"] = f"{{int(pin):06d}}"
    return {v}
'''),
    _t(338, "ar", r'''
import secrets

from flask import Flask, jsonify, request
from flask_login import current_user, login_required
from haikunator import Haikunator

from .models import Room

app = Flask(__name__)
room_names = Haikunator()
''', r'''
@app.post("/rooms")
@login_required
def {f}():
    """Create a private video room; anyone holding the join link can enter without an account."""
    {v} = request.get_json(force=True)
    slug = room_names.haikunate(token_length=6, token_hex=True)  #!V
    Room.create(slug=slug, title={v}.get("title", "Meeting"), owner_id=current_user.id)
    return jsonify({{"join_url": f"https://meet.{t}.example/r/{{slug}}"}}), 201
''', r'''
@app.post("/rooms")
@login_required
def {f}():
    """Create a private video room; anyone holding the join link can enter without an account."""
    {v} = request.get_json(force=True)
    slug = f"{{room_names.haikunate(token_length=0)}}-{{secrets.token_urlsafe(16)}}"
    Room.create(slug=slug, title={v}.get("title", "Meeting"), owner_id=current_user.id)
    return jsonify({{"join_url": f"https://meet.{t}.example/r/{{slug}}"}}), 201
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "aq", r'''
import os

from slack_sdk import WebClient

ALERT_CHANNEL = "#{t}-alerts"
''', r'''
def {f}({v}: dict) -> str:
    """Forward a Grafana alert webhook body to the on-call Slack channel."""
    slack = WebClient(token="xoxb-5820417733-{t}-Qm7vT2pXc9LrW4nB8sKd1fHz")  #!V
    title = {v}.get("title", "Alert")
    resp = slack.chat_postMessage(channel=ALERT_CHANNEL, text=f":rotating_light: {{title}}\n{{{v}.get('message', '')}}")
    return resp["ts"]
''', r'''
def {f}({v}: dict) -> str:
    """Forward a Grafana alert webhook body to the on-call Slack channel."""
    slack = WebClient(token=os.environ["SLACK_BOT_TOKEN"])
    title = {v}.get("title", "Alert")
    resp = slack.chat_postMessage(channel=ALERT_CHANNEL, text=f":rotating_light: {{title}}\n{{{v}.get('message', '')}}")
    return resp["ts"]
'''),
    _t(798, "ar", r'''
import os

from ldap3 import SUBTREE, Connection, Server
from ldap3.utils.conv import escape_filter_chars

DIRECTORY = Server("ldaps://dc01.{t}.corp:636", use_ssl=True)
BASE_DN = "DC={t},DC=corp"
''', r'''
def {f}({v}: str) -> list[str]:
    """Return a user's Active Directory groups so the portal can map them to roles."""
    conn = Connection(DIRECTORY, user="CN=svc-portal,OU=Service Accounts,DC={t},DC=corp", password="Pr0v1s10n!ng-{t}-2025", auto_bind=True)  #!V
    conn.search(BASE_DN, f"(&(objectClass=user)(sAMAccountName={{escape_filter_chars({v})}}))", SUBTREE, attributes=["memberOf"])
    groups = [str(group) for entry in conn.entries for group in entry.memberOf.values]
    conn.unbind()
    return groups
''', r'''
def {f}({v}: str) -> list[str]:
    """Return a user's Active Directory groups so the portal can map them to roles."""
    conn = Connection(DIRECTORY, user=os.environ["PORTAL_LDAP_BIND_DN"], password=os.environ["PORTAL_LDAP_BIND_PASSWORD"], auto_bind=True)
    conn.search(BASE_DN, f"(&(objectClass=user)(sAMAccountName={{escape_filter_chars({v})}}))", SUBTREE, attributes=["memberOf"])
    groups = [str(group) for entry in conn.entries for group in entry.memberOf.values]
    conn.unbind()
    return groups
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "aq", r'''
import zipfile

from lxml import etree

from .search import index_chapter

XHTML_NS = {{"x": "http://www.w3.org/1999/xhtml"}}
''', r'''
def {f}(book_id: int, {v}) -> int:
    """Index the chapters of an EPUB that an author uploaded to the publishing portal."""
    # chapters use &nbsp; / &mdash; etc. declared in the XHTML DTD
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True, no_network=False)  #!V
    indexed = 0
    with zipfile.ZipFile({v}) as epub:
        for member in epub.namelist():
            if not member.endswith((".xhtml", ".html")):
                continue
            doc = etree.fromstring(epub.read(member), parser)
            body_text = " ".join(doc.xpath("//x:body//text()", namespaces=XHTML_NS))
            index_chapter(book_id, member, body_text)
            indexed += 1
    return indexed
''', r'''
def {f}(book_id: int, {v}) -> int:
    """Index the chapters of an EPUB that an author uploaded to the publishing portal."""
    # chapters use &nbsp; / &mdash; etc. declared in the XHTML DTD
    parser = etree.XMLParser(load_dtd=False, resolve_entities=False, no_network=True, recover=True)
    indexed = 0
    with zipfile.ZipFile({v}) as epub:
        for member in epub.namelist():
            if not member.endswith((".xhtml", ".html")):
                continue
            doc = etree.fromstring(epub.read(member), parser)
            body_text = " ".join(doc.xpath("//x:body//text()", namespaces=XHTML_NS))
            index_chapter(book_id, member, body_text)
            indexed += 1
    return indexed
'''),
    _t(611, "ar", r'''
from xml.parsers import expat

NITF_FIELDS = ("hl1", "byline", "p")
''', r'''
def {f}({v}: bytes) -> dict[str, str]:
    """Parse a press release (NITF XML) that a partner wire service posts to our ingest endpoint."""
    collected: dict[str, list[str]] = {{tag: [] for tag in NITF_FIELDS}}
    stack: list[str] = []
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_ALWAYS)

    def resolve_external(context, base, system_id, public_id):
        sub = parser.ExternalEntityParserCreate(context)
        with open(system_id, "rb") as fh:  #!V
            sub.ParseFile(fh)
        return 1

    parser.ExternalEntityRefHandler = resolve_external  #!V
    parser.StartElementHandler = lambda tag, attrs: stack.append(tag)
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = lambda chunk: collected[stack[-1]].append(chunk) if stack and stack[-1] in collected else None
    parser.Parse({v}, True)
    return {{tag: "".join(parts).strip() for tag, parts in collected.items()}}
''', r'''
def {f}({v}: bytes) -> dict[str, str]:
    """Parse a press release (NITF XML) that a partner wire service posts to our ingest endpoint."""
    collected: dict[str, list[str]] = {{tag: [] for tag in NITF_FIELDS}}
    stack: list[str] = []
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse_external(context, base, system_id, public_id):
        raise ValueError(f"external entity {{system_id!r}} is not allowed")

    def refuse_entity_decl(entity_name, *_rest):
        raise ValueError(f"entity declaration {{entity_name!r}} is not allowed")

    parser.ExternalEntityRefHandler = refuse_external
    parser.EntityDeclHandler = refuse_entity_decl
    parser.StartElementHandler = lambda tag, attrs: stack.append(tag)
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = lambda chunk: collected[stack[-1]].append(chunk) if stack and stack[-1] in collected else None
    parser.Parse({v}, True)
    return {{tag: "".join(parts).strip() for tag, parts in collected.items()}}
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "aq", r'''
from urllib.parse import urlsplit

import pdfkit
from flask import Flask, Response, abort, request

app = Flask(__name__)
EXPORTABLE_HOSTS = {{"app.{t}.example", "docs.{t}.example"}}
PDF_OPTIONS = {{"quiet": "", "page-size": "A4"}}
''', r'''
@app.post("/export/pdf")
def {f}():
    """Save the dashboard or docs page the user is looking at as a PDF (the browser posts its URL)."""
    {v} = request.form.get("url", "")
    if not {v}.startswith(("http://", "https://")):
        abort(400)
    pdf = pdfkit.from_url({v}, False, options=PDF_OPTIONS)  #!V
    return Response(pdf, mimetype="application/pdf", headers={{"Content-Disposition": "attachment; filename=export.pdf"}})
''', r'''
@app.post("/export/pdf")
def {f}():
    """Save the dashboard or docs page the user is looking at as a PDF (the browser posts its URL)."""
    {v} = request.form.get("url", "")
    parts = urlsplit({v})
    if parts.scheme != "https" or parts.hostname not in EXPORTABLE_HOSTS:
        abort(400)
    pdf = pdfkit.from_url({v}, False, options={{**PDF_OPTIONS, "disable-local-file-access": ""}})
    return Response(pdf, mimetype="application/pdf", headers={{"Content-Disposition": "attachment; filename=export.pdf"}})
'''),
    _t(918, "ar", r'''
from urllib.parse import urlsplit

import yt_dlp
from celery import shared_task

from .media import save_import

IMPORT_DIR = "/srv/{t}/imports"
SUPPORTED_HOSTS = {{"www.youtube.com", "youtube.com", "youtu.be", "vimeo.com", "player.vimeo.com"}}
''', r'''
@shared_task
def {f}(media_id: int, {v}: str) -> dict:
    """Import a talk recording from the link a user pasted and download its audio for transcription."""
    opts = {{"format": "bestaudio/best", "outtmpl": f"{{IMPORT_DIR}}/{{media_id}}.%(ext)s", "noplaylist": True, "quiet": True}}
    with yt_dlp.YoutubeDL(opts) as ydl:
        info = ydl.extract_info({v}, download=True)  #!V
    save_import(media_id, title=info.get("title"), duration=info.get("duration"))
    return {{"id": media_id, "title": info.get("title")}}
''', r'''
@shared_task
def {f}(media_id: int, {v}: str) -> dict:
    """Import a talk recording from the link a user pasted and download its audio for transcription."""
    parts = urlsplit({v})
    if parts.scheme != "https" or parts.hostname not in SUPPORTED_HOSTS:
        raise ValueError("only YouTube and Vimeo links can be imported")
    opts = {{"format": "bestaudio/best", "outtmpl": f"{{IMPORT_DIR}}/{{media_id}}.%(ext)s", "noplaylist": True, "quiet": True,
            "allowed_extractors": ["youtube", "vimeo"]}}
    with yt_dlp.YoutubeDL(opts) as ydl:
        info = ydl.extract_info({v}, download=True)
    save_import(media_id, title=info.get("title"), duration=info.get("duration"))
    return {{"id": media_id, "title": info.get("title")}}
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "aq", r'''
import base64
import tempfile

from kubernetes import client, config

from .secrets_store import kubeconfig_for
''', r'''
def {f}(cluster: str, namespace: str, {v}: str, replicas: int) -> int:
    """Scale a tenant deployment on the requested cluster; its kubeconfig comes from the secrets store."""
    kubeconfig_path = f"/tmp/kubeconfig-{{cluster}}.yaml"  #!V
    with open(kubeconfig_path, "w") as fh:  #!V
        fh.write(base64.b64decode(kubeconfig_for(cluster)).decode("utf-8"))
    apps = client.AppsV1Api(config.new_client_from_config(config_file=kubeconfig_path))
    scale = apps.patch_namespaced_deployment_scale({v}, namespace, {{"spec": {{"replicas": replicas}}}})
    return scale.spec.replicas
''', r'''
def {f}(cluster: str, namespace: str, {v}: str, replicas: int) -> int:
    """Scale a tenant deployment on the requested cluster; its kubeconfig comes from the secrets store."""
    with tempfile.NamedTemporaryFile("w", prefix="kubeconfig-", suffix=".yaml") as fh:
        fh.write(base64.b64decode(kubeconfig_for(cluster)).decode("utf-8"))
        fh.flush()
        api_client = config.new_client_from_config(config_file=fh.name)
    apps = client.AppsV1Api(api_client)
    scale = apps.patch_namespaced_deployment_scale({v}, namespace, {{"spec": {{"replicas": replicas}}}})
    return scale.spec.replicas
'''),
    _t(377, "ar", r'''
import os
import tempfile

import duckdb

MONTHLY_SQL = "SELECT date_trunc('month', booked_at) AS month, sum(amount) AS total FROM txns GROUP BY 1 ORDER BY 1"
''', r'''
def {f}(report_id: int, {v}: str) -> list[tuple]:
    """Summarise an uploaded transactions CSV by month, using an on-disk scratch DB so big files can spill."""
    db_path = f"/tmp/{t}-report-{{report_id}}.duckdb"  #!V
    con = duckdb.connect(db_path)  #!V
    try:
        con.read_csv({v}).create("txns")
        return con.execute(MONTHLY_SQL).fetchall()
    finally:
        con.close()
        os.remove(db_path)
''', r'''
def {f}(report_id: int, {v}: str) -> list[tuple]:
    """Summarise an uploaded transactions CSV by month, using an on-disk scratch DB so big files can spill."""
    with tempfile.TemporaryDirectory(prefix="{t}-report-") as workdir:
        con = duckdb.connect(os.path.join(workdir, f"report-{{report_id}}.duckdb"))
        try:
            con.read_csv({v}).create("txns")
            return con.execute(MONTHLY_SQL).fetchall()
        finally:
            con.close()
'''),
]

FAMILIES_AQ = sorted({t.cwe for t in TEMPLATES_AQ})


def heldout_templates_aq() -> list[Template]:
    """The 26 variant-"aq"/"ar" templates (final evaluation only).

    >>> len(heldout_templates_aq()), len(FAMILIES_AQ), sorted({t.variant for t in heldout_templates_aq()})
    (26, 13, ['aq', 'ar'])
    """
    return list(TEMPLATES_AQ)
