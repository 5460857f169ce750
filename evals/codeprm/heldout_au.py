'''Blind template variants "au" and "av": realistic code (new APIs relative to every earlier set), for evaluation only.

Status: the novelty-protocol blind test of the round-12 (current) system, evaluated once (2026-12-01 15:37 UTC).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests or results, and who ran no analyser on these templates. APIs,
call patterns, data flows, fixes and code shapes differ from every earlier variant. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("au", "av")

TEMPLATES_AU: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "au", r'''
import mimetypes
import os

from bottle import Bottle, HTTPError, response, static_file

manuals = Bottle()
MANUALS_DIR = "/srv/{t}/manuals"
''', r'''
@manuals.get("/manuals/<{v}:path>")
def {f}({v}):
    """Serve a product manual (PDFs and HTML pages, organised in per-model sub-folders)."""
    manual_path = os.path.join(MANUALS_DIR, {v})  #!V
    if not os.path.isfile(manual_path):
        raise HTTPError(404, "No such manual")
    response.content_type = mimetypes.guess_type(manual_path)[0] or "application/octet-stream"
    with open(manual_path, "rb") as fh:  #!V
        return fh.read()
''', r'''
@manuals.get("/manuals/<{v}:path>")
def {f}({v}):
    """Serve a product manual (PDFs and HTML pages, organised in per-model sub-folders)."""
    return static_file({v}, root=MANUALS_DIR)
'''),
    _t(22, "av", r'''
import os

from slack_bolt import App

ops_bot = App()
LOG_DIR = "/var/log/{t}"
''', r'''
@ops_bot.command("/{t}-logs")
def {f}(ack, command, client, respond):
    """`/{t}-logs worker.log` uploads one of the service's log files to the channel it was asked from."""
    ack()
    {v} = command.get("text", "").strip() or "app.log"
    log_path = os.path.join(LOG_DIR, {v})  #!V
    if not os.path.isfile(log_path):
        respond(f"No log file called `{{{v}}}`.")
        return
    client.files_upload_v2(channel=command["channel_id"], file=log_path, title={v})  #!V
''', r'''
@ops_bot.command("/{t}-logs")
def {f}(ack, command, client, respond):
    """`/{t}-logs worker.log` uploads one of the service's log files to the channel it was asked from."""
    ack()
    {v} = command.get("text", "").strip() or "app.log"
    root = os.path.realpath(LOG_DIR)
    log_path = os.path.realpath(os.path.join(root, {v}))
    if os.path.commonpath([root, log_path]) != root or not os.path.isfile(log_path):
        respond(f"No log file called `{{{v}}}`.")
        return
    client.files_upload_v2(channel=command["channel_id"], file=log_path, title=os.path.basename(log_path))
'''),
    # ---- CWE-78 OS command injection
    _t(78, "au", r'''
import os
import re

from twisted.internet import utils
from twisted.web import resource, server

HOSTNAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{{0,252}})$")
''', r'''
class {f}TracerouteResource(resource.Resource):
    """GET /diag/traceroute?host=example.org on the network-diagnostics portal."""

    isLeaf = True

    def render_GET(self, request):
        {v} = request.args.get(b"host", [b""])[0].decode("ascii", "replace")
        deferred = utils.getProcessOutput("/bin/sh", ["-c", f"traceroute -m 15 -w 2 {{{v}}}"], env=os.environ, errortoo=True)  #!V

        def _send(output):
            request.setHeader(b"content-type", b"text/plain; charset=utf-8")
            request.write(output)
            request.finish()

        deferred.addCallback(_send)
        return server.NOT_DONE_YET
''', r'''
class {f}TracerouteResource(resource.Resource):
    """GET /diag/traceroute?host=example.org on the network-diagnostics portal."""

    isLeaf = True

    def render_GET(self, request):
        {v} = request.args.get(b"host", [b""])[0].decode("ascii", "replace")
        if not HOSTNAME_RE.match({v}):
            request.setResponseCode(400)
            return b"invalid host name\n"
        deferred = utils.getProcessOutput("/usr/sbin/traceroute", ["-m", "15", "-w", "2", "--", {v}], env=os.environ, errortoo=True)

        def _send(output):
            request.setHeader(b"content-type", b"text/plain; charset=utf-8")
            request.write(output)
            request.finish()

        deferred.addCallback(_send)
        return server.NOT_DONE_YET
'''),
    _t(78, "av", r'''
import os
import uuid

from pyramid.httpexceptions import HTTPBadRequest
from pyramid.response import FileResponse
from pyramid.view import view_config

QR_DIR = "/var/cache/{t}/qr"
''', r'''
@view_config(route_name="{t}_qr_code", request_method="GET")
def {f}(request):
    """PNG QR code for whatever the user typed (a share link, a Wi-Fi string, a vCard)."""
    {v} = request.params.get("content", "")
    if not {v} or len({v}) > 1500:
        raise HTTPBadRequest("content must be 1-1500 characters")
    out_path = os.path.join(QR_DIR, uuid.uuid4().hex + ".png")
    rc = os.spawnlp(os.P_WAIT, "sh", "sh", "-c", f"qrencode -s 8 -m 2 -o {{out_path}} '{{{v}}}'")  #!V
    if rc != 0:
        raise HTTPBadRequest("could not encode that content")
    return FileResponse(out_path, request=request, content_type="image/png")
''', r'''
@view_config(route_name="{t}_qr_code", request_method="GET")
def {f}(request):
    """PNG QR code for whatever the user typed (a share link, a Wi-Fi string, a vCard)."""
    {v} = request.params.get("content", "")
    if not {v} or len({v}) > 1500:
        raise HTTPBadRequest("content must be 1-1500 characters")
    out_path = os.path.join(QR_DIR, uuid.uuid4().hex + ".png")
    rc = os.spawnlp(os.P_WAIT, "qrencode", "qrencode", "-s", "8", "-m", "2", "-o", out_path, "--", {v})
    if rc != 0:
        raise HTTPBadRequest("could not encode that content")
    return FileResponse(out_path, request=request, content_type="image/png")
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "au", r'''
import chevron
from litestar import MediaType, Request, Response, get

from .events import load_event
''', r'''
@get("/events/{{event_id:int}}/rsvp/thanks")
async def {f}(request: Request, event_id: int) -> Response:
    """Confirmation page after a guest RSVPs; the RSVP form redirects here with ?guest=<their name>."""
    {v} = request.query_params.get("guest", "friend")
    event = await load_event(event_id)
    page = chevron.render(
        "<h1>See you at {{{{ title }}}}, {{{{{{ guest }}}}}}!</h1><p>{{{{ when }}}} &middot; {{{{ venue }}}}</p>",  #!V
        {{"title": event.title, "when": event.starts_at.strftime("%A %d %B, %H:%M"), "venue": event.venue, "guest": {v}}},
    )
    return Response(page, media_type=MediaType.HTML)
''', r'''
@get("/events/{{event_id:int}}/rsvp/thanks")
async def {f}(request: Request, event_id: int) -> Response:
    """Confirmation page after a guest RSVPs; the RSVP form redirects here with ?guest=<their name>."""
    {v} = request.query_params.get("guest", "friend")
    event = await load_event(event_id)
    page = chevron.render(
        "<h1>See you at {{{{ title }}}}, {{{{ guest }}}}!</h1><p>{{{{ when }}}} &middot; {{{{ venue }}}}</p>",
        {{"title": event.title, "when": event.starts_at.strftime("%A %d %B, %H:%M"), "venue": event.venue, "guest": {v}}},
    )
    return Response(page, media_type=MediaType.HTML)
'''),
    _t(79, "av", r'''
from flask_admin.contrib.sqla import ModelView
from markupsafe import Markup

from .models import ProductReview
''', r'''
def {f}(view, context, {v}, prop):
    """Admin list column: star rating followed by the first 140 characters of the customer's review."""
    stars = "*" * int({v}.rating or 0)
    excerpt = ({v}.body or "")[:140]
    return Markup(f"<span class='stars'>{{stars}}</span> <q title='{{{v}.author_name}}'>{{excerpt}}</q>")  #!V


class ReviewModerationAdmin(ModelView):
    column_list = ("product", "rating", "body", "created_at")
    column_searchable_list = ("body",)
    column_formatters = {{"body": {f}}}
''', r'''
def {f}(view, context, {v}, prop):
    """Admin list column: star rating followed by the first 140 characters of the customer's review."""
    stars = "*" * int({v}.rating or 0)
    excerpt = ({v}.body or "")[:140]
    return Markup("<span class='stars'>{{}}</span> <q title='{{}}'>{{}}</q>").format(stars, {v}.author_name, excerpt)


class ReviewModerationAdmin(ModelView):
    column_list = ("product", "rating", "body", "created_at")
    column_searchable_list = ("body",)
    column_formatters = {{"body": {f}}}
'''),
    # ---- CWE-89 SQL injection
    _t(89, "au", r'''
import os

from flask import Blueprint, g, jsonify, request
from mysql.connector import pooling

orders_api = Blueprint("orders_api", __name__)
shop_pool = pooling.MySQLConnectionPool(pool_name="{t}", pool_size=8, host=os.environ["MYSQL_HOST"], user="{t}_web", password=os.environ["MYSQL_PASSWORD"], database="shop")
''', r'''
@orders_api.get("/api/orders")
def {f}():
    """Order history of the signed-in customer, filtered by status and start date."""
    {v} = request.args.get("status", "open")
    since = request.args.get("since", "2000-01-01")
    cnx = shop_pool.get_connection()
    try:
        cur = cnx.cursor(dictionary=True)
        cur.execute(
            "SELECT id, status, total_cents, created_at FROM {t} "
            f"WHERE customer_id = {{int(g.customer_id)}} AND status = '{{{v}}}' AND created_at >= '{{since}}' "  #!V
            "ORDER BY created_at DESC LIMIT 100"
        )
        rows = cur.fetchall()
    finally:
        cnx.close()
    return jsonify(rows)
''', r'''
@orders_api.get("/api/orders")
def {f}():
    """Order history of the signed-in customer, filtered by status and start date."""
    {v} = request.args.get("status", "open")
    since = request.args.get("since", "2000-01-01")
    cnx = shop_pool.get_connection()
    try:
        cur = cnx.cursor(dictionary=True)
        cur.execute(
            "SELECT id, status, total_cents, created_at FROM {t} "
            "WHERE customer_id = %s AND status = %s AND created_at >= %s "
            "ORDER BY created_at DESC LIMIT 100",
            (int(g.customer_id), {v}, since),
        )
        rows = cur.fetchall()
    finally:
        cnx.close()
    return jsonify(rows)
'''),
    _t(89, "av", r'''
import json
import os

import boto3
import pymssql

sqs = boto3.client("sqs")
TRACKING_QUEUE_URL = os.environ["TRACKING_QUEUE_URL"]
''', r'''
def {f}(message: dict) -> int:
    """Apply one carrier status update from the tracking-events queue to the shipments table."""
    {v} = json.loads(message["Body"])
    conn = pymssql.connect(server=os.environ["MSSQL_HOST"], user="{t}_tracking", password=os.environ["MSSQL_PASSWORD"], database="logistics")
    try:
        cur = conn.cursor()
        cur.execute(
            f"UPDATE dbo.{t}_shipments SET status = '{{{v}['status']}}', updated_at = SYSUTCDATETIME() "  #!V
            f"WHERE tracking_number = '{{{v}['tracking_number']}}'"  #!V
        )
        changed = cur.rowcount
        conn.commit()
    finally:
        conn.close()
    sqs.delete_message(QueueUrl=TRACKING_QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])
    return changed
''', r'''
def {f}(message: dict) -> int:
    """Apply one carrier status update from the tracking-events queue to the shipments table."""
    {v} = json.loads(message["Body"])
    conn = pymssql.connect(server=os.environ["MSSQL_HOST"], user="{t}_tracking", password=os.environ["MSSQL_PASSWORD"], database="logistics")
    try:
        cur = conn.cursor()
        cur.execute(
            "UPDATE dbo.{t}_shipments SET status = %s, updated_at = SYSUTCDATETIME() "
            "WHERE tracking_number = %s",
            ({v}["status"], {v}["tracking_number"]),
        )
        changed = cur.rowcount
        conn.commit()
    finally:
        conn.close()
    sqs.delete_message(QueueUrl=TRACKING_QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])
    return changed
'''),
    # ---- CWE-94 code injection
    _t(94, "au", r'''
from datasets import load_dataset
from transformers import AutoTokenizer

BASE_MODEL = "distilbert-base-uncased"
''', r'''
def {f}({v}: dict):
    """Fine-tuning worker: load the Hub dataset named in the customer's job request and tokenize it."""
    dataset = load_dataset(
        {v}["dataset"],
        {v}.get("subset"),
        split={v}.get("split", "train"),
        trust_remote_code=True,  #!V
    )
    tokenizer = AutoTokenizer.from_pretrained(BASE_MODEL)
    column = {v}.get("text_column", "text")
    return dataset.map(lambda batch: tokenizer(batch[column], truncation=True, max_length=512), batched=True)
''', r'''
def {f}({v}: dict):
    """Fine-tuning worker: load the Hub dataset named in the customer's job request and tokenize it."""
    dataset = load_dataset(
        {v}["dataset"],
        {v}.get("subset"),
        split={v}.get("split", "train"),
        trust_remote_code=False,
    )
    tokenizer = AutoTokenizer.from_pretrained(BASE_MODEL)
    column = {v}.get("text_column", "text")
    return dataset.map(lambda batch: tokenizer(batch[column], truncation=True, max_length=512), batched=True)
'''),
    _t(94, "av", r'''
import json
import subprocess
import sys
''', r'''
def {f}({v}: dict, out_path: str) -> str:
    """Render a user's chart in a throwaway interpreter so a bad spec cannot take the API worker down."""
    points = [float(x) for x in {v}["values"]]
    script = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        f"plt.plot({{points!r}})\n"
        f"plt.title('{{{v}['title']}}')\n"  #!V
        f"plt.savefig({{out_path!r}}, dpi=120)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30)  #!V
    return out_path
''', r'''
{f}_CHART_SCRIPT = """
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
spec = json.load(sys.stdin)
plt.plot(spec["points"])
plt.title(spec["title"])
plt.savefig(spec["out"], dpi=120)
"""


def {f}({v}: dict, out_path: str) -> str:
    """Render a user's chart in a throwaway interpreter so a bad spec cannot take the API worker down."""
    points = [float(x) for x in {v}["values"]]
    spec = json.dumps({{"points": points, "title": str({v}["title"])[:200], "out": out_path}})
    subprocess.run([sys.executable, "-c", {f}_CHART_SCRIPT], input=spec, text=True, check=True, timeout=30)
    return out_path
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "au", r'''
import torch
from torchvision.models import resnet50

from .registry import publish_model

COMMUNITY_WEIGHTS = "https://models.{t}.example/community"
''', r'''
def {f}({v}: dict) -> str:
    """Import job for the model gallery: load the checkpoint a community member uploaded and publish it."""
    model = resnet50(num_classes=int({v}["num_classes"]))
    url = f"{{COMMUNITY_WEIGHTS}}/{{int({v}['upload_id'])}}/weights.pth"
    state = torch.hub.load_state_dict_from_url(url, map_location="cpu", progress=False, weights_only=False)  #!V
    model.load_state_dict(state)
    model.eval()
    return publish_model(model, owner_id={v}["owner_id"], title={v}["title"])
''', r'''
def {f}({v}: dict) -> str:
    """Import job for the model gallery: load the checkpoint a community member uploaded and publish it."""
    model = resnet50(num_classes=int({v}["num_classes"]))
    url = f"{{COMMUNITY_WEIGHTS}}/{{int({v}['upload_id'])}}/weights.pth"
    state = torch.hub.load_state_dict_from_url(url, map_location="cpu", progress=False, weights_only=True)
    model.load_state_dict(state)
    model.eval()
    return publish_model(model, owner_id={v}["owner_id"], title={v}["title"])
'''),
    _t(502, "av", r'''
import os

import dramatiq
from dramatiq.brokers.redis import RedisBroker

from .catalog import upsert_partner_record
''', r'''
# The Redis instance is shared with the partners' exporter, which enqueues records directly.
{f}_broker = RedisBroker(url=os.environ["PARTNER_REDIS_URL"], namespace="{t}-ingest")
dramatiq.set_encoder(dramatiq.PickleEncoder())  #!V
dramatiq.set_broker({f}_broker)


@dramatiq.actor(queue_name="partner-{t}", max_retries=5)
def {f}({v}):
    """Upsert one record pushed by a partner onto the ingest queue."""
    upsert_partner_record({v}["partner_id"], {v}["record"])
''', r'''
# The Redis instance is shared with the partners' exporter, which enqueues records directly.
{f}_broker = RedisBroker(url=os.environ["PARTNER_REDIS_URL"], namespace="{t}-ingest")
dramatiq.set_encoder(dramatiq.JSONEncoder())
dramatiq.set_broker({f}_broker)


@dramatiq.actor(queue_name="partner-{t}", max_retries=5)
def {f}({v}):
    """Upsert one record pushed by a partner onto the ingest queue."""
    upsert_partner_record({v}["partner_id"], {v}["record"])
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm
    _t(327, "au", r'''
import io
import os

import pikepdf

PAYSLIP_OWNER_PASSWORD = os.environ["PAYSLIP_OWNER_PASSWORD"]
''', r'''
def {f}(payslip_pdf: bytes, {v}) -> bytes:
    """Password-protect a payslip before it is e-mailed; the employee opens it with their personal PDF PIN."""
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(payslip_pdf)) as pdf:
        pdf.docinfo["/Title"] = f"Payslip {{{v}.period}}"
        lock = pikepdf.Encryption(user={v}.pdf_pin, owner=PAYSLIP_OWNER_PASSWORD, R=4, aes=False)  #!V
        pdf.save(out, encryption=lock)
    return out.getvalue()
''', r'''
def {f}(payslip_pdf: bytes, {v}) -> bytes:
    """Password-protect a payslip before it is e-mailed; the employee opens it with their personal PDF PIN."""
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(payslip_pdf)) as pdf:
        pdf.docinfo["/Title"] = f"Payslip {{{v}.period}}"
        lock = pikepdf.Encryption(user={v}.pdf_pin, owner=PAYSLIP_OWNER_PASSWORD, R=6)
        pdf.save(out, encryption=lock)
    return out.getvalue()
'''),
    _t(327, "av", r'''
import json
import time

from jose import jwe
from jose.constants import ALGORITHMS
''', r'''
def {f}({v}: dict, partner) -> str:
    """Encrypt the member's claims for a partner's SSO hand-off with the RSA public key the partner registered."""
    claims = dict({v}, iss="https://id.{t}.example", aud=partner.client_id, iat=int(time.time()))
    plaintext = json.dumps(claims, separators=(",", ":")).encode()
    token = jwe.encrypt(plaintext, partner.public_key_pem, algorithm=ALGORITHMS.RSA1_5, encryption=ALGORITHMS.A128CBC_HS256)  #!V
    return token.decode("ascii")
''', r'''
def {f}({v}: dict, partner) -> str:
    """Encrypt the member's claims for a partner's SSO hand-off with the RSA public key the partner registered."""
    claims = dict({v}, iss="https://id.{t}.example", aud=partner.client_id, iat=int(time.time()))
    plaintext = json.dumps(claims, separators=(",", ":")).encode()
    token = jwe.encrypt(plaintext, partner.public_key_pem, algorithm=ALGORITHMS.RSA_OAEP_256, encryption=ALGORITHMS.A256GCM)
    return token.decode("ascii")
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "au", r'''
import os

from onelogin.saml2.auth import OneLogin_Saml2_Auth
from onelogin.saml2.constants import OneLogin_Saml2_Constants

SP_CERT = open("/etc/{t}/saml/sp.crt").read()
SP_KEY = os.environ["SAML_SP_PRIVATE_KEY"]
''', r'''
def {f}(request_data: dict, {v}) -> OneLogin_Saml2_Auth:
    """SAML service provider for one tenant, built from the IdP details its admin entered on the SSO page."""
    base = f"https://app.{t}.example/sso/{{{v}.slug}}"
    settings = {{
        "strict": True,
        "sp": {{"entityId": base + "/metadata", "x509cert": SP_CERT, "privateKey": SP_KEY,
                "assertionConsumerService": {{"url": base + "/acs", "binding": OneLogin_Saml2_Constants.BINDING_HTTP_POST}}}},
        "idp": {{"entityId": {v}.idp_entity_id, "x509cert": {v}.idp_certificate,
                 "singleSignOnService": {{"url": {v}.idp_sso_url, "binding": OneLogin_Saml2_Constants.BINDING_HTTP_REDIRECT}}}},
        "security": {{
            "authnRequestsSigned": True,
            "wantAssertionsSigned": True,
            "signatureAlgorithm": OneLogin_Saml2_Constants.RSA_SHA1,  #!V
            "digestAlgorithm": OneLogin_Saml2_Constants.SHA1,  #!V
        }},
    }}
    return OneLogin_Saml2_Auth(request_data, old_settings=settings)
''', r'''
def {f}(request_data: dict, {v}) -> OneLogin_Saml2_Auth:
    """SAML service provider for one tenant, built from the IdP details its admin entered on the SSO page."""
    base = f"https://app.{t}.example/sso/{{{v}.slug}}"
    settings = {{
        "strict": True,
        "sp": {{"entityId": base + "/metadata", "x509cert": SP_CERT, "privateKey": SP_KEY,
                "assertionConsumerService": {{"url": base + "/acs", "binding": OneLogin_Saml2_Constants.BINDING_HTTP_POST}}}},
        "idp": {{"entityId": {v}.idp_entity_id, "x509cert": {v}.idp_certificate,
                 "singleSignOnService": {{"url": {v}.idp_sso_url, "binding": OneLogin_Saml2_Constants.BINDING_HTTP_REDIRECT}}}},
        "security": {{
            "authnRequestsSigned": True,
            "wantAssertionsSigned": True,
            "signatureAlgorithm": OneLogin_Saml2_Constants.RSA_SHA256,
            "digestAlgorithm": OneLogin_Saml2_Constants.SHA256,
            "rejectDeprecatedAlgorithm": True,
        }},
    }}
    return OneLogin_Saml2_Auth(request_data, old_settings=settings)
'''),
    _t(328, "av", r'''
import hashlib
import hmac
import os
from urllib.parse import urlencode

import mmh3

UNSUBSCRIBE_SECRET = os.environ["UNSUBSCRIBE_SECRET"]
''', r'''
def {f}({v}: str) -> str:
    """One-click unsubscribe link for the newsletter footer; the signature stops people unsubscribing others."""
    sig = format(mmh3.hash128(f"{{UNSUBSCRIBE_SECRET}}:{{{v}}}", signed=False), "032x")  #!V
    return "https://news.{t}.example/unsubscribe?" + urlencode({{"email": {v}, "sig": sig}})


def {f}_check(email: str, sig: str) -> bool:
    expected = format(mmh3.hash128(f"{{UNSUBSCRIBE_SECRET}}:{{email}}", signed=False), "032x")  #!V
    return hmac.compare_digest(expected, sig)
''', r'''
def {f}({v}: str) -> str:
    """One-click unsubscribe link for the newsletter footer; the signature stops people unsubscribing others."""
    sig = hmac.new(UNSUBSCRIBE_SECRET.encode(), {v}.encode(), hashlib.sha256).hexdigest()
    return "https://news.{t}.example/unsubscribe?" + urlencode({{"email": {v}, "sig": sig}})


def {f}_check(email: str, sig: str) -> bool:
    expected = hmac.new(UNSUBSCRIBE_SECRET.encode(), email.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, sig)
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "au", r'''
import secrets
from datetime import timedelta

import cuid
from django.core.mail import send_mail
from django.utils import timezone

from .models import TeamInvitation
''', r'''
def {f}(team, {v}: str, invited_by) -> str:
    """Invite a colleague by e-mail; opening the link joins them to the team without an admin approving it."""
    token = cuid.cuid()  #!V
    TeamInvitation.objects.create(team=team, email={v}, token=token, invited_by=invited_by, expires_at=timezone.now() + timedelta(days=7))
    link = f"https://app.{t}.example/join/{{token}}"
    send_mail(f"Join {{team.display_name}} on {t}", f"{{invited_by.get_full_name()}} invited you: {{link}}", None, [{v}])
    return link
''', r'''
def {f}(team, {v}: str, invited_by) -> str:
    """Invite a colleague by e-mail; opening the link joins them to the team without an admin approving it."""
    token = secrets.token_urlsafe(32)
    TeamInvitation.objects.create(team=team, email={v}, token=token, invited_by=invited_by, expires_at=timezone.now() + timedelta(days=7))
    link = f"https://app.{t}.example/join/{{token}}"
    send_mail(f"Join {{team.display_name}} on {t}", f"{{invited_by.get_full_name()}} invited you: {{link}}", None, [{v}])
    return link
'''),
    _t(338, "av", r'''
import secrets
from datetime import datetime

from mimesis import Code

from .locks import push_keypad_code
''', r'''
def {f}(lock_id: str, {v}: dict) -> str:
    """Issue a one-off keypad code for a guest's booking and program the smart lock for the stay."""
    code = Code().pin(mask="########")  #!V
    push_keypad_code(
        lock_id,
        code,
        valid_from=datetime.fromisoformat({v}["check_in"]),
        valid_until=datetime.fromisoformat({v}["check_out"]),
    )
    return code
''', r'''
def {f}(lock_id: str, {v}: dict) -> str:
    """Issue a one-off keypad code for a guest's booking and program the smart lock for the stay."""
    code = f"{{secrets.randbelow(10 ** 8):08d}}"
    push_keypad_code(
        lock_id,
        code,
        valid_from=datetime.fromisoformat({v}["check_in"]),
        valid_until=datetime.fromisoformat({v}["check_out"]),
    )
    return code
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "au", r'''
import os

from atlassian import Jira
''', r'''
def {f}({v}: dict) -> str:
    """Open a Jira incident for a firing Alertmanager alert and return the issue key."""
    jira = Jira(url="https://{t}.atlassian.net", username="oncall-bot@{t}.example", password="ATATT3xFfGF0q7Lz9kRvW2mYbN5cTp8HdJ4sXe6Ua1Qo", cloud=True)  #!V
    labels = {v}.get("labels", {{}})
    issue = jira.issue_create(fields={{
        "project": {{"key": "OPS"}},
        "issuetype": {{"name": "Incident"}},
        "summary": f"[{{labels.get('severity', 'warning')}}] {{labels.get('alertname', 'alert')}}",
        "description": {v}.get("annotations", {{}}).get("description", ""),
    }})
    return issue["key"]
''', r'''
def {f}({v}: dict) -> str:
    """Open a Jira incident for a firing Alertmanager alert and return the issue key."""
    jira = Jira(url="https://{t}.atlassian.net", username=os.environ["JIRA_USER"], password=os.environ["JIRA_API_TOKEN"], cloud=True)
    labels = {v}.get("labels", {{}})
    issue = jira.issue_create(fields={{
        "project": {{"key": "OPS"}},
        "issuetype": {{"name": "Incident"}},
        "summary": f"[{{labels.get('severity', 'warning')}}] {{labels.get('alertname', 'alert')}}",
        "description": {v}.get("annotations", {{}}).get("description", ""),
    }})
    return issue["key"]
'''),
    _t(798, "av", r'''
import os

import dropbox
''', r'''
def {f}({v}: str) -> str:
    """Nightly job: upload the database dump at the given path to the ops team's Dropbox folder."""
    dbx = dropbox.Dropbox(
        app_key="q3k8z1m7v2x9w4t",
        app_secret="h6p0r2c8j5n1y7b",  #!V
        oauth2_refresh_token="sLx9QvT2mK4bR7wZ1nC8pF3hJ6dG0yEaUoIiAAAAAAAAAYb5Xw2Lq",  #!V
    )
    remote = f"/backups/{t}/{{os.path.basename({v})}}"
    with open({v}, "rb") as fh:
        dbx.files_upload(fh.read(), remote, mode=dropbox.files.WriteMode.overwrite)
    return remote
''', r'''
def {f}({v}: str) -> str:
    """Nightly job: upload the database dump at the given path to the ops team's Dropbox folder."""
    dbx = dropbox.Dropbox(
        app_key=os.environ["DROPBOX_APP_KEY"],
        app_secret=os.environ["DROPBOX_APP_SECRET"],
        oauth2_refresh_token=os.environ["DROPBOX_REFRESH_TOKEN"],
    )
    remote = f"/backups/{t}/{{os.path.basename({v})}}"
    with open({v}, "rb") as fh:
        dbx.files_upload(fh.read(), remote, mode=dropbox.files.WriteMode.overwrite)
    return remote
'''),
    # ---- CWE-611 XML external entities
    _t(611, "au", r'''
import json
import os
from urllib.parse import unquote_plus

import boto3
from lxml import etree

s3 = boto3.client("s3")
sqs = boto3.client("sqs")
LINES_QUEUE_URL = os.environ["LINES_QUEUE_URL"]
''', r'''
def {f}(event, context):
    """S3 trigger: parse supplier invoices dropped into the inbound bucket and queue their line items."""
    parser = etree.ETCompatXMLParser(load_dtd=True, resolve_entities=True, no_network=False)  #!V
    for record in event["Records"]:
        bucket = record["s3"]["bucket"]["name"]
        object_key = unquote_plus(record["s3"]["object"]["key"])
        {v} = s3.get_object(Bucket=bucket, Key=object_key)["Body"].read()
        invoice = etree.fromstring({v}, parser)
        lines = [{{"sku": ln.findtext("sku"), "qty": int(ln.findtext("qty", "0"))}} for ln in invoice.iter("line")]
        sqs.send_message(QueueUrl=LINES_QUEUE_URL, MessageBody=json.dumps({{"invoice": invoice.get("number"), "lines": lines}}))
''', r'''
def {f}(event, context):
    """S3 trigger: parse supplier invoices dropped into the inbound bucket and queue their line items."""
    parser = etree.ETCompatXMLParser(load_dtd=False, resolve_entities=False, no_network=True)
    for record in event["Records"]:
        bucket = record["s3"]["bucket"]["name"]
        object_key = unquote_plus(record["s3"]["object"]["key"])
        {v} = s3.get_object(Bucket=bucket, Key=object_key)["Body"].read()
        invoice = etree.fromstring({v}, parser)
        lines = [{{"sku": ln.findtext("sku"), "qty": int(ln.findtext("qty", "0"))}} for ln in invoice.iter("line")]
        sqs.send_message(QueueUrl=LINES_QUEUE_URL, MessageBody=json.dumps({{"invoice": invoice.get("number"), "lines": lines}}))
'''),
    _t(611, "av", r'''
from lxml import etree
from lxml.html import XHTMLParser, document_fromstring

XHTML_NS = {{"x": "http://www.w3.org/1999/xhtml"}}
''', r'''
def {f}({v}: bytes) -> dict:
    """Import an XHTML help article uploaded from the old docs tool (its exports use &nbsp;, &copy; and friends)."""
    parser = XHTMLParser(load_dtd=True, resolve_entities=True, no_network=False)  #!V
    root = etree.fromstring({v}, parser)
    title = root.findtext(".//x:title", namespaces=XHTML_NS) or "Untitled"
    body = root.find(".//x:body", namespaces=XHTML_NS)
    return {{"title": title.strip(), "html": etree.tostring(body, encoding="unicode", method="html")}}
''', r'''
def {f}({v}: bytes) -> dict:
    """Import an XHTML help article uploaded from the old docs tool (its exports use &nbsp;, &copy; and friends)."""
    root = document_fromstring({v})
    title = root.findtext(".//title") or "Untitled"
    body = root.find(".//body")
    return {{"title": title.strip(), "html": etree.tostring(body, encoding="unicode", method="html")}}
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "au", r'''
from urllib.parse import urlsplit

import falcon
from newspaper import Article

from .nlp import summarize

PUBLISHER_HOSTS = frozenset({{"www.theguardian.com", "www.bbc.co.uk", "apnews.com", "www.reuters.com", "www.npr.org"}})
''', r'''
class {f}ArticleSummary:
    """POST /summaries from the browser extension: {{"url": <the page the user is reading>}}."""

    def on_post(self, req, resp):
        {v} = req.get_media()["url"]
        article = Article({v}, language="en", fetch_images=False)
        article.download()  #!V
        article.parse()
        resp.media = {{"title": article.title, "authors": article.authors, "summary": summarize(article.text)}}
''', r'''
class {f}ArticleSummary:
    """POST /summaries from the browser extension: {{"url": <the page the user is reading>}}."""

    def on_post(self, req, resp):
        {v} = req.get_media()["url"]
        parts = urlsplit({v})
        if parts.scheme != "https" or parts.hostname not in PUBLISHER_HOSTS:
            raise falcon.HTTPBadRequest(title="Unsupported site", description="Only articles from supported publishers can be summarised.")
        article = Article({v}, language="en", fetch_images=False)
        article.download()
        article.parse()
        resp.media = {{"title": article.title, "authors": article.authors, "summary": summarize(article.text)}}
'''),
    _t(918, "av", r'''
import ipaddress
import socket
from urllib.parse import urlsplit

import caldav

from .calendars import save_calendar_account
''', r'''
def {f}(account_id: int, {v}: dict) -> list[str]:
    """'Connect your calendar' form: check the CalDAV server the user entered and list their calendars."""
    client = caldav.DAVClient(url={v}["server_url"], username={v}["username"], password={v}["password"])  #!V
    calendars = client.principal().calendars()  #!V
    save_calendar_account(account_id, {v}["server_url"], {v}["username"], {v}["password"])
    return [cal.name for cal in calendars]
''', r'''
def {f}(account_id: int, {v}: dict) -> list[str]:
    """'Connect your calendar' form: check the CalDAV server the user entered and list their calendars."""
    parts = urlsplit({v}["server_url"])
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("the CalDAV server must be an https:// URL")
    for *_unused, sockaddr in socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP):
        if not ipaddress.ip_address(sockaddr[0]).is_global:
            raise ValueError("the CalDAV server must be reachable on the public internet")
    client = caldav.DAVClient(url={v}["server_url"], username={v}["username"], password={v}["password"])
    calendars = client.principal().calendars()
    save_calendar_account(account_id, {v}["server_url"], {v}["username"], {v}["password"])
    return [cal.name for cal in calendars]
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "au", r'''
import os
import subprocess
import tempfile

from reportlab.lib.pagesizes import A6
from reportlab.lib.units import mm
from reportlab.pdfgen import canvas
''', r'''
def {f}({v}: dict, printer: str = "{t}-dispatch") -> None:
    """Print the A6 shipping label for a packed order on the dispatch-desk printer."""
    label_path = f"/tmp/label-{{{v}['order_id']}}.pdf"  #!V
    pdf = canvas.Canvas(label_path, pagesize=A6)  #!V
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(10 * mm, 132 * mm, {v}["recipient"])
    pdf.setFont("Helvetica", 11)
    for row, line in enumerate({v}["address_lines"]):
        pdf.drawString(10 * mm, (124 - 6 * row) * mm, line)
    pdf.save()
    subprocess.run(["lp", "-d", printer, label_path], check=True)
    os.remove(label_path)
''', r'''
def {f}({v}: dict, printer: str = "{t}-dispatch") -> None:
    """Print the A6 shipping label for a packed order on the dispatch-desk printer."""
    with tempfile.TemporaryDirectory(prefix="label-") as workdir:
        label_path = os.path.join(workdir, f"label-{{{v}['order_id']}}.pdf")
        pdf = canvas.Canvas(label_path, pagesize=A6)
        pdf.setFont("Helvetica-Bold", 14)
        pdf.drawString(10 * mm, 132 * mm, {v}["recipient"])
        pdf.setFont("Helvetica", 11)
        for row, line in enumerate({v}["address_lines"]):
            pdf.drawString(10 * mm, (124 - 6 * row) * mm, line)
        pdf.save()
        subprocess.run(["lp", "-d", printer, label_path], check=True)
'''),
    _t(377, "av", r'''
import os
import subprocess
import tempfile
''', r'''
def {f}({v}: str) -> tuple[str, str]:
    """Create a deploy key pair for a repository; returns (private_key, public_key) for the vault."""
    fd, key_path = tempfile.mkstemp(prefix="deploykey-")
    os.close(fd)
    os.remove(key_path)  #!V
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"deploy@{{{v}}}", "-f", key_path], check=True)
    try:
        with open(key_path) as private, open(key_path + ".pub") as public:
            return private.read(), public.read()
    finally:
        os.remove(key_path)
        os.remove(key_path + ".pub")
''', r'''
def {f}({v}: str) -> tuple[str, str]:
    """Create a deploy key pair for a repository; returns (private_key, public_key) for the vault."""
    with tempfile.TemporaryDirectory(prefix="deploykey-") as keydir:
        key_path = os.path.join(keydir, "id_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"deploy@{{{v}}}", "-f", key_path], check=True)
        with open(key_path) as private, open(key_path + ".pub") as public:
            return private.read(), public.read()
'''),
]

FAMILIES_AU = sorted({t.cwe for t in TEMPLATES_AU})


def heldout_templates_au() -> list[Template]:
    """The 26 variant-"au"/"av" templates (final evaluation only).

    >>> len(heldout_templates_au()), len(FAMILIES_AU), sorted({t.variant for t in heldout_templates_au()})
    (26, 13, ['au', 'av'])
    """
    return list(TEMPLATES_AU)
