'''Blind template variants "ak" and "al": realistic code (new APIs relative to every earlier set), for evaluation only.

Status: the novelty-protocol blind test of the round-10 system, evaluated once (2026-12-01 14:31 UTC);
validation data since round 11 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests or results, and who ran no analyser on these templates. APIs,
call patterns, data flows, fixes and code shapes differ from every earlier variant. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ak", "al")

TEMPLATES_AK: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ak", r'''
import os
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlsplit

DROP_ROOT = "/srv/{t}/dropbox"
''', r'''
class {f}DropHandler(BaseHTTPRequestHandler):
    """Upload endpoint for the build agents: ``PUT /<relative path>`` stores the request body under DROP_ROOT."""

    def do_PUT(self):
        {v} = unquote(urlsplit(self.path).path).lstrip("/")
        length = int(self.headers.get("Content-Length", "0"))
        dest_path = os.path.join(DROP_ROOT, {v})  #!V
        os.makedirs(os.path.dirname(dest_path), exist_ok=True)
        with open(dest_path, "wb") as out:  #!V
            out.write(self.rfile.read(length))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()
''', r'''
class {f}DropHandler(BaseHTTPRequestHandler):
    """Upload endpoint for the build agents: ``PUT /<relative path>`` stores the request body under DROP_ROOT."""

    def do_PUT(self):
        {v} = unquote(urlsplit(self.path).path).lstrip("/")
        length = int(self.headers.get("Content-Length", "0"))
        root = os.path.realpath(DROP_ROOT)
        dest_path = os.path.realpath(os.path.join(root, {v}))
        if not dest_path.startswith(root + os.sep):
            self.send_error(403, "path outside the drop folder")
            return
        os.makedirs(os.path.dirname(dest_path), exist_ok=True)
        with open(dest_path, "wb") as out:
            out.write(self.rfile.read(length))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()
'''),
    _t(22, "al", r'''
import shutil
import zipfile
from pathlib import Path

THEMES_DIR = Path("/var/lib/{t}/themes")
''', r'''
def {f}({v}, theme_id: int) -> int:
    """Install a storefront theme from the .zip a merchant uploaded in the shop admin."""
    theme_dir = THEMES_DIR / str(int(theme_id))
    theme_dir.mkdir(parents=True, exist_ok=True)
    copied = 0
    with zipfile.ZipFile({v}) as bundle:
        for member in bundle.infolist():
            if member.is_dir():
                continue
            out_path = theme_dir / member.filename  #!V
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as src, open(out_path, "wb") as dst:  #!V
                shutil.copyfileobj(src, dst)
            copied += 1
    return copied
''', r'''
def {f}({v}, theme_id: int) -> int:
    """Install a storefront theme from the .zip a merchant uploaded in the shop admin."""
    theme_dir = (THEMES_DIR / str(int(theme_id))).resolve()
    theme_dir.mkdir(parents=True, exist_ok=True)
    copied = 0
    with zipfile.ZipFile({v}) as bundle:
        for member in bundle.infolist():
            if member.is_dir():
                continue
            out_path = (theme_dir / member.filename).resolve()
            if not out_path.is_relative_to(theme_dir):
                raise ValueError(f"theme archive entry escapes the theme folder: {{member.filename!r}}")
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as src, open(out_path, "wb") as dst:
                shutil.copyfileobj(src, dst)
            copied += 1
    return copied
'''),
    # ---- CWE-78 OS command injection
    _t(78, "ak", r'''
import sarge
from flask import Flask, jsonify, request

ops = Flask(__name__)
''', r'''
@ops.get("/certs/expiry")
def {f}():
    """Report when the TLS certificate served on a customer's custom domain expires."""
    {v} = request.args.get("domain", "")
    command = f"openssl s_client -connect {{{v}}}:443 -servername {{{v}}} | openssl x509 -noout -enddate"  #!V
    pipeline = sarge.capture_stdout(command, input="")  #!V
    not_after = pipeline.stdout.text.strip().removeprefix("notAfter=")
    return jsonify(domain={v}, not_after=not_after or None)
''', r'''
@ops.get("/certs/expiry")
def {f}():
    """Report when the TLS certificate served on a customer's custom domain expires."""
    {v} = request.args.get("domain", "")
    command = sarge.shell_format("openssl s_client -connect {{0}}:443 -servername {{0}} | openssl x509 -noout -enddate", {v})
    pipeline = sarge.capture_stdout(command, input="")
    not_after = pipeline.stdout.text.strip().removeprefix("notAfter=")
    return jsonify(domain={v}, not_after=not_after or None)
'''),
    _t(78, "al", r'''
import shlex
import subprocess
''', r'''
def {f}(account_id: int, {v}: str, run_at: str = "now + 1 hour") -> str:
    """Queue the one-off "your trial ends soon" reminder with at(1); ``{v}`` is the note the sales rep typed in the CRM."""
    {v} = {v}.strip()[:500]
    job_script = f"/opt/{t}/bin/send-reminder --account {{account_id}} --note '{{{v}}}'\n"  #!V
    done = subprocess.run(["at", run_at], input=job_script, text=True, capture_output=True, check=True)  #!V
    return done.stderr.strip()
''', r'''
def {f}(account_id: int, {v}: str, run_at: str = "now + 1 hour") -> str:
    """Queue the one-off "your trial ends soon" reminder with at(1); ``{v}`` is the note the sales rep typed in the CRM."""
    {v} = {v}.strip()[:500]
    job_script = shlex.join(["/opt/{t}/bin/send-reminder", "--account", str(int(account_id)), "--note", {v}]) + "\n"
    done = subprocess.run(["at", run_at], input=job_script, text=True, capture_output=True, check=True)
    return done.stderr.strip()
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "ak", r'''
import html

from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div
from bokeh.plotting import figure
from .metrics import daily_signups
''', r'''
def {f}(doc):
    """Bokeh server app behind ``/signups?campaign=...`` links that marketing shares on the wiki."""
    args = doc.session_context.request.arguments
    {v} = args.get("campaign", [b"all"])[0].decode("utf-8", "replace")
    frame = daily_signups(campaign={v})
    plot = figure(x_axis_type="datetime", height=320, sizing_mode="stretch_width")
    plot.line("day", "signups", source=ColumnDataSource(frame))
    header = Div(text=f"<h2>Daily sign-ups for campaign <code>{{{v}}}</code></h2>")  #!V
    doc.add_root(column(header, plot, sizing_mode="stretch_width"))
''', r'''
def {f}(doc):
    """Bokeh server app behind ``/signups?campaign=...`` links that marketing shares on the wiki."""
    args = doc.session_context.request.arguments
    {v} = args.get("campaign", [b"all"])[0].decode("utf-8", "replace")
    frame = daily_signups(campaign={v})
    plot = figure(x_axis_type="datetime", height=320, sizing_mode="stretch_width")
    plot.line("day", "signups", source=ColumnDataSource(frame))
    header = Div(text=f"<h2>Daily sign-ups for campaign <code>{{html.escape({v})}}</code></h2>")
    doc.add_root(column(header, plot, sizing_mode="stretch_width"))
'''),
    _t(79, "al", r'''
import nh3
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from docutils.core import publish_parts
from .models import ReviewComment
''', r'''
def {f}(request, comment_id: int):
    """Docs portal: show a review comment, which readers write in reStructuredText."""
    comment = get_object_or_404(ReviewComment, pk=comment_id)
    {v} = comment.body
    parts = publish_parts(source={v}, writer_name="html")  #!V
    return HttpResponse(
        f"<article class='review-comment'><header>{{comment.author_id}}</header>{{parts['html_body']}}</article>"
    )
''', r'''
def {f}(request, comment_id: int):
    """Docs portal: show a review comment, which readers write in reStructuredText."""
    comment = get_object_or_404(ReviewComment, pk=comment_id)
    {v} = comment.body
    parts = publish_parts(
        source={v},
        writer_name="html",
        settings_overrides={{"raw_enabled": False, "file_insertion_enabled": False, "report_level": 5}},
    )
    body_html = nh3.clean(parts["html_body"])
    return HttpResponse(
        f"<article class='review-comment'><header>{{comment.author_id}}</header>{{body_html}}</article>"
    )
'''),
    # ---- CWE-89 SQL injection
    _t(89, "ak", r'''
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("{t}-partner-export").getOrCreate()
''', r'''
def {f}({v}: str, since: str, out_uri: str) -> int:
    """Partner export job; ``{v}`` and ``since`` come from the export request a partner files in the portal."""
    frame = spark.sql(
        f"SELECT order_id, sku, quantity, amount FROM warehouse.{t} "
        f"WHERE partner_code = '{{{v}}}' AND order_date >= '{{since}}'"  #!V
    )
    frame.write.mode("overwrite").parquet(out_uri)
    return frame.count()
''', r'''
def {f}({v}: str, since: str, out_uri: str) -> int:
    """Partner export job; ``{v}`` and ``since`` come from the export request a partner files in the portal."""
    frame = spark.sql(
        "SELECT order_id, sku, quantity, amount FROM warehouse.{t} "
        "WHERE partner_code = :partner AND order_date >= :since",
        args={{"partner": {v}, "since": since}},
    )
    frame.write.mode("overwrite").parquet(out_uri)
    return frame.count()
'''),
    _t(89, "al", r'''
import sqlite_utils
from flask import Flask, jsonify, request

catalog = Flask(__name__)
db = sqlite_utils.Database("/var/lib/{t}/catalog.db")
''', r'''
@catalog.get("/api/books")
def {f}():
    """Public search box of the library catalogue: list books by an author."""
    {v} = request.args.get("author", "").strip()
    page = max(int(request.args.get("page", "1")), 1)
    rows = db["books"].rows_where(f"author = '{{{v}}}'", order_by="published desc", limit=25, offset=(page - 1) * 25)  #!V
    return jsonify(author={v}, page=page, books=list(rows))
''', r'''
@catalog.get("/api/books")
def {f}():
    """Public search box of the library catalogue: list books by an author."""
    {v} = request.args.get("author", "").strip()
    page = max(int(request.args.get("page", "1")), 1)
    rows = db["books"].rows_where("author = ?", [{v}], order_by="published desc", limit=25, offset=(page - 1) * 25)
    return jsonify(author={v}, page=page, books=list(rows))
'''),
    # ---- CWE-94 code injection
    _t(94, "ak", r'''
import string

from bottle import Bottle, SimpleTemplate, request, response
from .store import load_order, load_shop

receipts = Bottle()
''', r'''
@receipts.post("/shops/<shop_id:int>/receipt-preview")
def {f}(shop_id):
    """Live preview of the receipt template a shop owner is editing in the dashboard."""
    {v} = request.forms.getunicode("template", "")
    shop = load_shop(shop_id)
    sample = load_order(shop.last_order_id)
    response.content_type = "text/plain; charset=utf-8"
    return SimpleTemplate({v}).render(shop=shop, order=sample)  #!V
''', r'''
@receipts.post("/shops/<shop_id:int>/receipt-preview")
def {f}(shop_id):
    """Live preview of the receipt template a shop owner is editing in the dashboard."""
    {v} = request.forms.getunicode("template", "")
    shop = load_shop(shop_id)
    sample = load_order(shop.last_order_id)
    response.content_type = "text/plain; charset=utf-8"
    fields = {{"shop_name": shop.display_name, "order_number": sample.number, "order_total": f"{{sample.total:.2f}}"}}
    return string.Template({v}).safe_substitute(fields)
'''),
    _t(94, "al", r'''
from celery import shared_task
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from .bench import run_benchmark
''', r'''
@shared_task
def {f}(evaluation_id: int, {v}: str, revision: str = "main") -> dict:
    """Benchmark a model that a user submitted to the public leaderboard by its Hugging Face repo id."""
    tokenizer = AutoTokenizer.from_pretrained({v}, revision=revision, trust_remote_code=True)  #!V
    model = AutoModelForSequenceClassification.from_pretrained({v}, revision=revision, trust_remote_code=True)  #!V
    model.eval()
    return run_benchmark(evaluation_id, model, tokenizer)
''', r'''
@shared_task
def {f}(evaluation_id: int, {v}: str, revision: str = "main") -> dict:
    """Benchmark a model that a user submitted to the public leaderboard by its Hugging Face repo id."""
    tokenizer = AutoTokenizer.from_pretrained({v}, revision=revision, trust_remote_code=False)
    model = AutoModelForSequenceClassification.from_pretrained(
        {v}, revision=revision, trust_remote_code=False, use_safetensors=True
    )
    model.eval()
    return run_benchmark(evaluation_id, model, tokenizer)
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "ak", r'''
from fastapi import FastAPI, HTTPException, UploadFile
from hydra.utils import instantiate
from omegaconf import OmegaConf

pipelines = FastAPI()
ALLOWED_TARGETS = {{"torch.nn.Linear", "torchvision.models.resnet18", "torch.optim.AdamW", "torch.optim.SGD", "{t}_models.TabularNet"}}
''', r'''
@pipelines.post("/experiments")
async def {f}(config_file: UploadFile):
    """Start a training run from the YAML experiment config a researcher uploads in the web UI."""
    {v} = (await config_file.read()).decode("utf-8")
    cfg = OmegaConf.create({v})
    model = instantiate(cfg.model)  #!V
    optimizer = instantiate(cfg.optimizer, params=model.parameters())  #!V
    return {{"model": type(model).__name__, "optimizer": type(optimizer).__name__}}
''', r'''
def _{f}_check_targets(node) -> None:
    if isinstance(node, dict):
        if "_target_" in node and node["_target_"] not in ALLOWED_TARGETS:
            raise HTTPException(status_code=400, detail=f"_target_ not allowed: {{node['_target_']!r}}")
        for child in node.values():
            _{f}_check_targets(child)
    elif isinstance(node, list):
        for child in node:
            _{f}_check_targets(child)


@pipelines.post("/experiments")
async def {f}(config_file: UploadFile):
    """Start a training run from the YAML experiment config a researcher uploads in the web UI."""
    {v} = (await config_file.read()).decode("utf-8")
    cfg = OmegaConf.create({v})
    _{f}_check_targets(OmegaConf.to_container(cfg, resolve=False))
    model = instantiate(cfg.model)
    optimizer = instantiate(cfg.optimizer, params=model.parameters())
    return {{"model": type(model).__name__, "optimizer": type(optimizer).__name__}}
'''),
    _t(502, "al", r'''
import mlflow.pyfunc
import pandas as pd
from flask import Flask, abort, jsonify, request

scoring = Flask(__name__)
APPROVED_MODELS = {{"churn-classifier", "ltv-regressor", "{t}-fraud-score"}}
''', r'''
@scoring.post("/score")
def {f}():
    """Score a batch of rows with the model the caller names, e.g. ``runs:/<run id>/model`` from their experiment."""
    body = request.get_json(force=True)
    {v} = body["model_uri"]
    model = mlflow.pyfunc.load_model({v})  #!V
    predictions = model.predict(pd.DataFrame(body["rows"]))
    return jsonify(model={v}, predictions=pd.Series(predictions).tolist())
''', r'''
@scoring.post("/score")
def {f}():
    """Score a batch of rows with a registered model the caller names, e.g. ``churn-classifier``."""
    body = request.get_json(force=True)
    {v} = body["model_name"]
    if {v} not in APPROVED_MODELS:
        abort(404)
    model = mlflow.pyfunc.load_model(f"models:/{{{v}}}@production")
    predictions = model.predict(pd.DataFrame(body["rows"]))
    return jsonify(model={v}, predictions=pd.Series(predictions).tolist())
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm
    _t(327, "ak", r'''
import socket

from OpenSSL import SSL
''', r'''
def {f}(cert_file: str, key_file: str, port: int = 8883) -> SSL.Connection:
    """Accept one TLS connection from a smart-meter gateway on the field network."""
    ctx = SSL.Context(SSL.TLSv1_METHOD)  #!V
    ctx.use_certificate_chain_file(cert_file)
    ctx.use_privatekey_file(key_file)
    listener = socket.create_server(("0.0.0.0", port))
    {v}, _peer = listener.accept()
    conn = SSL.Connection(ctx, {v})
    conn.set_accept_state()
    conn.do_handshake()
    return conn
''', r'''
def {f}(cert_file: str, key_file: str, port: int = 8883) -> SSL.Connection:
    """Accept one TLS connection from a smart-meter gateway on the field network."""
    ctx = SSL.Context(SSL.TLS_SERVER_METHOD)
    ctx.set_min_proto_version(SSL.TLS1_2_VERSION)
    ctx.use_certificate_chain_file(cert_file)
    ctx.use_privatekey_file(key_file)
    listener = socket.create_server(("0.0.0.0", port))
    {v}, _peer = listener.accept()
    conn = SSL.Connection(ctx, {v})
    conn.set_accept_state()
    conn.do_handshake()
    return conn
'''),
    _t(327, "al", r'''
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs12
''', r'''
def {f}(cert_pem: bytes, private_pem: bytes, {v}: str) -> bytes:
    """Bundle a device certificate and its key into the .p12 a field technician imports; ``{v}`` is the export password they chose."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    private_key = serialization.load_pem_private_key(private_pem, password=None)
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(50_000)
        .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)  #!V
        .hmac_hash(hashes.SHA1())  #!V
        .build({v}.encode("utf-8"))
    )
    return pkcs12.serialize_key_and_certificates(b"{t}-device", private_key, cert, None, encryption)
''', r'''
def {f}(cert_pem: bytes, private_pem: bytes, {v}: str) -> bytes:
    """Bundle a device certificate and its key into the .p12 a field technician imports; ``{v}`` is the export password they chose."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    private_key = serialization.load_pem_private_key(private_pem, password=None)
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(50_000)
        .key_cert_algorithm(pkcs12.PBES.PBESv2SHA256AndAES256CBC)
        .hmac_hash(hashes.SHA256())
        .build({v}.encode("utf-8"))
    )
    return pkcs12.serialize_key_and_certificates(b"{t}-device", private_key, cert, None, encryption)
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "ak", r'''
import base64
import hashlib
import json

from ecdsa import SigningKey
''', r'''
def {f}({v}: dict, signing_pem: str) -> str:
    """Issue an offline licence file: the customer's licence terms, signed with our ECDSA key."""
    signer = SigningKey.from_pem(signing_pem)
    body = json.dumps({v}, sort_keys=True, separators=(",", ":")).encode("utf-8")
    signature = signer.sign(body, hashfunc=hashlib.sha1)  #!V
    return base64.urlsafe_b64encode(body).decode() + "." + base64.urlsafe_b64encode(signature).decode()
''', r'''
def {f}({v}: dict, signing_pem: str) -> str:
    """Issue an offline licence file: the customer's licence terms, signed with our ECDSA key."""
    signer = SigningKey.from_pem(signing_pem)
    body = json.dumps({v}, sort_keys=True, separators=(",", ":")).encode("utf-8")
    signature = signer.sign(body, hashfunc=hashlib.sha256)
    return base64.urlsafe_b64encode(body).decode() + "." + base64.urlsafe_b64encode(signature).decode()
'''),
    _t(328, "al", r'''
import base64
import hashlib

import paramiko
''', r'''
class {f}PinnedHostKey(paramiko.MissingHostKeyPolicy):
    """Accept the partner's SFTP server only if its host key matches the fingerprint they sent us out of band."""

    def __init__(self, pinned: str):
        self.pinned = pinned.replace(":", "").lower()

    def missing_host_key(self, client, hostname, {v}):
        seen = {v}.get_fingerprint().hex()  #!V
        if seen != self.pinned:
            raise paramiko.SSHException(f"host key for {{hostname}} does not match the pinned fingerprint")
        client.get_host_keys().add(hostname, {v}.get_name(), {v})
''', r'''
class {f}PinnedHostKey(paramiko.MissingHostKeyPolicy):
    """Accept the partner's SFTP server only if its host key matches the fingerprint they sent us out of band."""

    def __init__(self, pinned: str):
        self.pinned = pinned.removeprefix("SHA256:").rstrip("=")

    def missing_host_key(self, client, hostname, {v}):
        seen = base64.b64encode(hashlib.sha256({v}.asbytes()).digest()).decode().rstrip("=")
        if seen != self.pinned:
            raise paramiko.SSHException(f"host key for {{hostname}} does not match the pinned fingerprint")
        client.get_host_keys().add(hostname, {v}.get_name(), {v})
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "ak", r'''
from django.http import JsonResponse
from django.views.decorators.http import require_POST
from nanoid import generate, non_secure_generate
from .models import ShareLink
''', r'''
@require_POST
def {f}(request, document_id: int):
    """Create an unlisted share link: whoever holds the URL can open the document without logging in."""
    {v} = non_secure_generate(size=21)  #!V
    ShareLink.objects.create(document_id=document_id, owner=request.user, slug={v})
    return JsonResponse({{"url": request.build_absolute_uri(f"/s/{{{v}}}")}}, status=201)
''', r'''
@require_POST
def {f}(request, document_id: int):
    """Create an unlisted share link: whoever holds the URL can open the document without logging in."""
    {v} = generate(size=21)
    ShareLink.objects.create(document_id=document_id, owner=request.user, slug={v})
    return JsonResponse({{"url": request.build_absolute_uri(f"/s/{{{v}}}")}}, status=201)
'''),
    _t(338, "al", r'''
import petname
from xkcdpass import xkcd_password
from .wifi import push_guest_passphrase
''', r'''
def {f}(site_id: int, valid_hours: int = 24) -> str:
    """Rotate a venue's guest Wi-Fi passphrase; staff read it out to customers, so it is made of words."""
    if not 1 <= valid_hours <= 168:
        raise ValueError("a guest passphrase is valid for at most one week")
    {v} = petname.generate(words=4, separator="-")  #!V
    push_guest_passphrase(site_id, {v}, valid_hours=valid_hours)
    return {v}
''', r'''
def {f}(site_id: int, valid_hours: int = 24) -> str:
    """Rotate a venue's guest Wi-Fi passphrase; staff read it out to customers, so it is made of words."""
    if not 1 <= valid_hours <= 168:
        raise ValueError("a guest passphrase is valid for at most one week")
    wordlist = xkcd_password.generate_wordlist(wordfile=xkcd_password.locate_wordfile(), min_length=4, max_length=8)
    {v} = xkcd_password.generate_xkcdpassword(wordlist, numwords=4, delimiter="-")
    push_guest_passphrase(site_id, {v}, valid_hours=valid_hours)
    return {v}
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ak", r'''
import io
import os

import paramiko
''', r'''
{f}_SFTP_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"  #!V
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBq7c9Vf1xJ0mT3rZkQ2hY8wLpN4sGdE6uB5vX9aKcR0wAAAJgZ3mF2Gd5h\n"
    "dgAAAAtzc2gtZWQyNTUxOQAAACBq7c9Vf1xJ0mT3rZkQ2hY8wLpN4sGdE6uB5vX9aKcR0w\n"
    "AAAEBm2Qx7pL4vN9cT1sW6yH3uJ0eK8rD5fG2bA7zX4qM1nWrtz1V/XEnSZPetmRDaFjzA\n"
    "uk3iwZ0Tq4Hm9f1opxHTAAAAEXNldHRsZW1lbnRAe3R9LWV0bAECAwQ=\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


def {f}({v}: str) -> None:
    """Upload a generated settlement file to the bank's SFTP drop."""
    pkey = paramiko.Ed25519Key.from_private_key(io.StringIO({f}_SFTP_KEY))
    with paramiko.SSHClient() as client:
        client.load_system_host_keys()
        client.connect("sftp.bank-{t}.example", username="acme-settlement", pkey=pkey, look_for_keys=False)
        with client.open_sftp() as sftp:
            sftp.put({v}, "/inbound/" + os.path.basename({v}))
''', r'''
{f}_SFTP_KEY = os.environ.get("BANK_SFTP_KEY_FILE", "/run/secrets/bank_sftp_ed25519")


def {f}({v}: str) -> None:
    """Upload a generated settlement file to the bank's SFTP drop."""
    pkey = paramiko.Ed25519Key.from_private_key_file({f}_SFTP_KEY)
    with paramiko.SSHClient() as client:
        client.load_system_host_keys()
        client.connect("sftp.bank-{t}.example", username="acme-settlement", pkey=pkey, look_for_keys=False)
        with client.open_sftp() as sftp:
            sftp.put({v}, "/inbound/" + os.path.basename({v}))
'''),
    _t(798, "al", r'''
import os

import gitlab
''', r'''
class {f}ReleaseNotes:
    """Collects the merged merge requests for the changelog of a release picked in the release dashboard."""

    def __init__(self, project_path: str = "platform/{t}-api"):
        self.gl = gitlab.Gitlab("https://gitlab.{t}.example", private_token="glpat-9XbQ2mTz7LkVw4RcPn1J")  #!V
        self.project = self.gl.projects.get(project_path)

    def collect(self, {v}: str) -> list[str]:
        merged = self.project.mergerequests.list(state="merged", target_branch="main", updated_after={v}, iterator=True)
        return [f"- {{mr.title}} (!{{mr.iid}}, @{{mr.author['username']}})" for mr in merged]
''', r'''
class {f}ReleaseNotes:
    """Collects the merged merge requests for the changelog of a release picked in the release dashboard."""

    def __init__(self, project_path: str = "platform/{t}-api"):
        self.gl = gitlab.Gitlab("https://gitlab.{t}.example", private_token=os.environ["GITLAB_RELEASE_TOKEN"])
        self.project = self.gl.projects.get(project_path)

    def collect(self, {v}: str) -> list[str]:
        merged = self.project.mergerequests.list(state="merged", target_branch="main", updated_after={v}, iterator=True)
        return [f"- {{mr.title}} (!{{mr.iid}}, @{{mr.author['username']}})" for mr in merged]
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "ak", r'''
from xsdata.formats.dataclass.parsers import XmlParser
from xsdata.formats.dataclass.parsers.config import ParserConfig
from .bindings.purchase_order import PurchaseOrder
''', r'''
def {f}({v}: bytes) -> PurchaseOrder:
    """Bind a purchase order a supplier posted to our EDI endpoint to the generated dataclasses."""
    config = ParserConfig(process_xinclude=True, fail_on_unknown_properties=False)  #!V
    parser = XmlParser(config=config)
    order = parser.from_bytes({v}, PurchaseOrder)
    if not order.lines:
        raise ValueError("purchase order has no lines")
    return order
''', r'''
def {f}({v}: bytes) -> PurchaseOrder:
    """Bind a purchase order a supplier posted to our EDI endpoint to the generated dataclasses."""
    config = ParserConfig(fail_on_unknown_properties=False)
    parser = XmlParser(config=config)
    order = parser.from_bytes({v}, PurchaseOrder)
    if not order.lines:
        raise ValueError("purchase order has no lines")
    return order
'''),
    _t(611, "al", r'''
import libxml2
''', r'''
def {f}({v}: bytes) -> dict:
    """Summarise a libvirt domain definition that a tenant uploaded, before the VM is imported."""
    doc = libxml2.readMemory({v}, len({v}), "domain.xml", None, libxml2.XML_PARSE_NOENT | libxml2.XML_PARSE_DTDLOAD)  #!V
    ctx = doc.xpathNewContext()
    try:
        def first(path):
            nodes = ctx.xpathEval(path)
            return nodes[0].content if nodes else None

        return {{
            "domain": first("/domain/name"),
            "memory_kib": first("/domain/memory"),
            "vcpus": first("/domain/vcpu"),
            "disks": [node.prop("file") for node in ctx.xpathEval("/domain/devices/disk/source")],
        }}
    finally:
        ctx.xpathFreeContext()
        doc.freeDoc()
''', r'''
def {f}({v}: bytes) -> dict:
    """Summarise a libvirt domain definition that a tenant uploaded, before the VM is imported."""
    doc = libxml2.readMemory({v}, len({v}), "domain.xml", None, libxml2.XML_PARSE_NONET)
    ctx = doc.xpathNewContext()
    try:
        def first(path):
            nodes = ctx.xpathEval(path)
            return nodes[0].content if nodes else None

        return {{
            "domain": first("/domain/name"),
            "memory_kib": first("/domain/memory"),
            "vcpus": first("/domain/vcpu"),
            "disks": [node.prop("file") for node in ctx.xpathEval("/domain/devices/disk/source")],
        }}
    finally:
        ctx.xpathFreeContext()
        doc.freeDoc()
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "ak", r'''
import ipaddress
import socket
from urllib.parse import urlsplit

import cv2
from fastapi import FastAPI, HTTPException
from fastapi.responses import Response

nvr = FastAPI()
''', r'''
@nvr.get("/cameras/preview")
def {f}({v}: str):
    """Grab one frame from the stream URL a customer typed into the "add camera" form, to show a preview."""
    capture = cv2.VideoCapture({v}, cv2.CAP_FFMPEG)  #!V
    try:
        ok, frame = capture.read()
    finally:
        capture.release()
    if not ok:
        raise HTTPException(status_code=422, detail="could not read a frame from the camera")
    _ok, jpeg = cv2.imencode(".jpg", frame)
    return Response(content=jpeg.tobytes(), media_type="image/jpeg")
''', r'''
def _{f}_public_stream(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("rtsp", "rtsps") or not parts.hostname:
        raise HTTPException(status_code=422, detail="camera URL must be rtsp:// or rtsps://")
    for *_rest, sockaddr in socket.getaddrinfo(parts.hostname, parts.port or 554, proto=socket.IPPROTO_TCP):
        if not ipaddress.ip_address(sockaddr[0]).is_global:
            raise HTTPException(status_code=422, detail="camera must be reachable on a public address")
    return url


@nvr.get("/cameras/preview")
def {f}({v}: str):
    """Grab one frame from the stream URL a customer typed into the "add camera" form, to show a preview."""
    capture = cv2.VideoCapture(_{f}_public_stream({v}), cv2.CAP_FFMPEG)
    try:
        ok, frame = capture.read()
    finally:
        capture.release()
    if not ok:
        raise HTTPException(status_code=422, detail="could not read a frame from the camera")
    _ok, jpeg = cv2.imencode(".jpg", frame)
    return Response(content=jpeg.tobytes(), media_type="image/jpeg")
'''),
    _t(918, "al", r'''
import ipaddress
import socket
import xmlrpc.client
from urllib.parse import urlsplit

from celery import shared_task
from .models import ImportedPost
''', r'''
@shared_task
def {f}(account_id: int, {v}: str, username: str, app_password: str) -> int:
    """Import the published posts of a customer's WordPress blog; ``{v}`` is the blog URL from the onboarding form."""
    endpoint = {v}.rstrip("/") + "/xmlrpc.php"
    blog = xmlrpc.client.ServerProxy(endpoint)  #!V
    posts = blog.wp.getPosts(1, username, app_password, {{"number": 100, "post_status": "publish"}})  #!V
    for post in posts:
        ImportedPost.objects.update_or_create(
            account_id=account_id, remote_id=post["post_id"],
            defaults={{"title": post["post_title"], "body_html": post["post_content"]}},
        )
    return len(posts)
''', r'''
@shared_task
def {f}(account_id: int, {v}: str, username: str, app_password: str) -> int:
    """Import the published posts of a customer's WordPress blog; ``{v}`` is the blog URL from the onboarding form."""
    parts = urlsplit({v})
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("blog URL must be an https:// URL")
    resolved = {{info[4][0] for info in socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)}}
    if not all(ipaddress.ip_address(addr).is_global for addr in resolved):
        raise ValueError("blog URL must resolve to public addresses only")
    endpoint = {v}.rstrip("/") + "/xmlrpc.php"
    blog = xmlrpc.client.ServerProxy(endpoint)
    posts = blog.wp.getPosts(1, username, app_password, {{"number": 100, "post_status": "publish"}})
    for post in posts:
        ImportedPost.objects.update_or_create(
            account_id=account_id, remote_id=post["post_id"],
            defaults={{"title": post["post_title"], "body_html": post["post_content"]}},
        )
    return len(posts)
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "ak", r'''
import os
import subprocess
import tempfile
''', r'''
def {f}(repo_url: str, dest_dir: str, {v}: str) -> None:
    """Clone a customer's private repository with the access token they connected; ``{v}`` is that token."""
    askpass = "/tmp/{t}-git-askpass.sh"  #!V
    with open(askpass, "w") as fh:  #!V
        fh.write('#!/bin/sh\nexec printf "%s\\n" "$GIT_TOKEN"\n')
    os.chmod(askpass, 0o700)
    env = dict(os.environ, GIT_ASKPASS=askpass, GIT_TOKEN={v}, GIT_TERMINAL_PROMPT="0")
    try:
        subprocess.run(["git", "clone", "--depth", "1", "--", repo_url, dest_dir], env=env, check=True, timeout=300)
    finally:
        os.remove(askpass)
''', r'''
def {f}(repo_url: str, dest_dir: str, {v}: str) -> None:
    """Clone a customer's private repository with the access token they connected; ``{v}`` is that token."""
    fd, askpass = tempfile.mkstemp(prefix="{t}-git-askpass-", suffix=".sh")
    with os.fdopen(fd, "w") as fh:
        fh.write('#!/bin/sh\nexec printf "%s\\n" "$GIT_TOKEN"\n')
    os.chmod(askpass, 0o700)
    env = dict(os.environ, GIT_ASKPASS=askpass, GIT_TOKEN={v}, GIT_TERMINAL_PROMPT="0")
    try:
        subprocess.run(["git", "clone", "--depth", "1", "--", repo_url, dest_dir], env=env, check=True, timeout=300)
    finally:
        os.remove(askpass)
'''),
    _t(377, "al", r'''
import subprocess
import tempfile
from pathlib import Path
''', r'''
def {f}({v}: str) -> bytes:
    """Convert an uploaded .docx/.odt contract to PDF with headless LibreOffice and return the PDF bytes."""
    source = Path({v})
    subprocess.run(
        ["soffice", "--headless", "--convert-to", "pdf", "--outdir", "/tmp", str(source)],  #!V
        check=True, timeout=120, capture_output=True,
    )
    pdf_path = Path("/tmp") / (source.stem + ".pdf")  #!V
    try:
        return pdf_path.read_bytes()
    finally:
        pdf_path.unlink(missing_ok=True)
''', r'''
def {f}({v}: str) -> bytes:
    """Convert an uploaded .docx/.odt contract to PDF with headless LibreOffice and return the PDF bytes."""
    source = Path({v})
    with tempfile.TemporaryDirectory(prefix="{t}-pdf-") as outdir:
        subprocess.run(
            ["soffice", "--headless", "--convert-to", "pdf", "--outdir", outdir, str(source)],
            check=True, timeout=120, capture_output=True,
        )
        pdf_path = Path(outdir) / (source.stem + ".pdf")
        return pdf_path.read_bytes()
'''),
]

FAMILIES_AK = sorted({t.cwe for t in TEMPLATES_AK})


def heldout_templates_ak() -> list[Template]:
    """The 26 variant-"ak"/"al" templates (final evaluation only).

    >>> len(heldout_templates_ak()), len(FAMILIES_AK), sorted({t.variant for t in heldout_templates_ak()})
    (26, 13, ['ak', 'al'])
    """
    return list(TEMPLATES_AK)
