'''Blind template variants "am" and "an": realistic code (backend services and integrations), for evaluation only.

Status: the realistic-protocol blind test of the round-10 system, evaluated once (2026-12-01 14:32 UTC);
validation data since round 11 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("am", "an")

TEMPLATES_AM: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "am", r'''
import os

from flask import Flask, abort, request, send_file

app = Flask(__name__)
UPLOAD_ROOT = "/srv/app/uploads"
''', r'''
@app.route("/files/download")
def {f}():
    """Stream a previously uploaded attachment back to the client."""
    {v} = request.args.get("file", "")
    if not {v}:
        abort(400)
    path = os.path.join(UPLOAD_ROOT, {v})  #!V
    if not os.path.isfile(path):
        abort(404)
    return send_file(path, as_attachment=True)
''', r'''
@app.route("/files/download")
def {f}():
    """Stream a previously uploaded attachment back to the client."""
    {v} = request.args.get("file", "")
    if not {v}:
        abort(400)
    root = os.path.realpath(UPLOAD_ROOT)
    path = os.path.realpath(os.path.join(root, {v}))
    if os.path.commonpath([root, path]) != root:
        abort(404)
    if not os.path.isfile(path):
        abort(404)
    return send_file(path, as_attachment=True)
'''),
    _t(22, "an", r'''
import tarfile
import tempfile
from pathlib import Path

import boto3

s3 = boto3.client("s3")
WORK_ROOT = Path("/var/lib/ingest/work")
''', r'''
def {f}(bucket: str, {v}: str) -> Path:
    """Download a .tar.gz bundle from S3 and unpack it into a fresh job directory."""
    job_dir = WORK_ROOT / Path({v}).stem.replace(".tar", "")
    job_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as fh:
        s3.download_fileobj(bucket, {v}, fh)
        fh.seek(0)
        with tarfile.open(fileobj=fh, mode="r:gz") as tar:
            tar.extractall(job_dir)  #!V
    return job_dir
''', r'''
def {f}(bucket: str, {v}: str) -> Path:
    """Download a .tar.gz bundle from S3 and unpack it into a fresh job directory."""
    job_dir = WORK_ROOT / Path({v}).stem.replace(".tar", "")
    job_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as fh:
        s3.download_fileobj(bucket, {v}, fh)
        fh.seek(0)
        with tarfile.open(fileobj=fh, mode="r:gz") as tar:
            tar.extractall(job_dir, filter="data")
    return job_dir
'''),
    # ---- CWE-78 OS command injection
    _t(78, "am", r'''
import re
import subprocess
from pathlib import Path

THUMB_DIR = Path("/srv/media/thumbs")
SIZE_RE = re.compile(r"\d{{1,4}}x\d{{1,4}}")
''', r'''
def {f}(source_path: str, {v}: str) -> Path:
    """Create a JPEG thumbnail of an uploaded image; the size comes from the API call, e.g. '200x200'."""
    out = THUMB_DIR / (Path(source_path).stem + "_thumb.jpg")
    cmd = f"convert '{{source_path}}' -thumbnail {{{v}}} '{{out}}'"  #!V
    subprocess.run(cmd, shell=True, check=True)  #!V
    return out
''', r'''
def {f}(source_path: str, {v}: str) -> Path:
    """Create a JPEG thumbnail of an uploaded image; the size comes from the API call, e.g. '200x200'."""
    if not SIZE_RE.fullmatch({v}):
        raise ValueError("size must look like 200x200")
    out = THUMB_DIR / (Path(source_path).stem + "_thumb.jpg")
    subprocess.run(["convert", source_path, "-thumbnail", {v}, str(out)], check=True)
    return out
'''),
    _t(78, "an", r'''
import os
import subprocess
import uuid

from celery import Celery

celery_app = Celery("mirror", broker=os.environ.get("BROKER_URL", "redis://localhost:6379/0"))
MIRROR_ROOT = "/srv/mirrors"
''', r'''
@celery_app.task
def {f}({v}: str) -> str:
    """Shallow-clone the repository URL from a queued mirror job."""
    dest = os.path.join(MIRROR_ROOT, uuid.uuid4().hex)
    rc = os.system(f"git clone --depth 1 {{{v}}} {{dest}}")  #!V
    if rc != 0:
        raise RuntimeError(f"git clone failed with status {{rc}}")
    return dest
''', r'''
@celery_app.task
def {f}({v}: str) -> str:
    """Shallow-clone the repository URL from a queued mirror job."""
    if not {v}.startswith("https://"):
        raise ValueError("only https:// repository URLs are accepted")
    dest = os.path.join(MIRROR_ROOT, uuid.uuid4().hex)
    subprocess.run(["git", "clone", "--depth", "1", "--", {v}, dest], check=True, timeout=600)
    return dest
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "am", r'''
from flask import Flask, request
from markupsafe import escape

app = Flask(__name__)
UNSUBSCRIBED: set[str] = set()
''', r'''
@app.route("/newsletter/unsubscribe")
def {f}():
    """Landing page for the unsubscribe link included in newsletter emails."""
    {v} = request.args.get("email", "").strip().lower()
    UNSUBSCRIBED.add({v})
    return (
        "<html><body><h2>You have been unsubscribed</h2>"
        f"<p>{{{v}}} will no longer receive our newsletter.</p></body></html>"  #!V
    )
''', r'''
@app.route("/newsletter/unsubscribe")
def {f}():
    """Landing page for the unsubscribe link included in newsletter emails."""
    {v} = request.args.get("email", "").strip().lower()
    UNSUBSCRIBED.add({v})
    return (
        "<html><body><h2>You have been unsubscribed</h2>"
        f"<p>{{escape({v})}} will no longer receive our newsletter.</p></body></html>"
    )
'''),
    _t(79, "an", r'''
from jinja2 import Environment, FileSystemLoader, select_autoescape

TEMPLATE_DIR = "templates/email"
''', r'''
def {f}({v}: dict) -> str:
    """Render the HTML notification sent to support staff when a ticket webhook arrives."""
    env = Environment(loader=FileSystemLoader(TEMPLATE_DIR))  #!V
    tpl = env.get_template("new_ticket.html")
    return tpl.render(
        subject={v}.get("subject", ""),
        body={v}.get("body", ""),
        reporter={v}.get("email", ""),
    )
''', r'''
def {f}({v}: dict) -> str:
    """Render the HTML notification sent to support staff when a ticket webhook arrives."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATE_DIR),
        autoescape=select_autoescape(["html", "xml"]),
    )
    tpl = env.get_template("new_ticket.html")
    return tpl.render(
        subject={v}.get("subject", ""),
        body={v}.get("body", ""),
        reporter={v}.get("email", ""),
    )
'''),
    # ---- CWE-89 SQL injection
    _t(89, "am", r'''
import os

import psycopg2
from flask import Flask, jsonify, request

app = Flask(__name__)


def get_conn():
    return psycopg2.connect(os.environ["DATABASE_URL"])
''', r'''
@app.get("/api/{t}/search")
def {f}():
    """Search accounts by (partial) email address for the support console."""
    {v} = request.args.get("email", "")
    with get_conn() as conn, conn.cursor() as cur:
        cur.execute(
            f"SELECT id, email, created_at FROM accounts WHERE email ILIKE '%{{{v}}}%' LIMIT 50"  #!V
        )
        rows = cur.fetchall()
    return jsonify([{{"id": r[0], "email": r[1], "created_at": r[2].isoformat()}} for r in rows])
''', r'''
@app.get("/api/{t}/search")
def {f}():
    """Search accounts by (partial) email address for the support console."""
    {v} = request.args.get("email", "")
    with get_conn() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT id, email, created_at FROM accounts WHERE email ILIKE %s LIMIT 50",
            (f"%{{{v}}}%",),
        )
        rows = cur.fetchall()
    return jsonify([{{"id": r[0], "email": r[1], "created_at": r[2].isoformat()}} for r in rows])
'''),
    _t(89, "an", r'''
import os

import sqlalchemy as sa
from fastapi import FastAPI, HTTPException

app = FastAPI()
engine = sa.create_engine(os.environ["DATABASE_URL"])
SORT_COLUMNS = {{"created_at": "created_at", "total": "total", "status": "status"}}
''', r'''
@app.get("/customers/{{customer_id}}/orders")
def {f}(customer_id: int, {v}: str = "created_at"):
    """List a customer's orders, newest first by default, sorted by the column the client picks."""
    stmt = sa.text(
        "SELECT id, total, status, created_at FROM orders "
        f"WHERE customer_id = :cid ORDER BY {{{v}}} DESC"  #!V
    )
    with engine.connect() as conn:
        rows = conn.execute(stmt, {{"cid": customer_id}}).mappings().all()
    return [dict(r) for r in rows]
''', r'''
@app.get("/customers/{{customer_id}}/orders")
def {f}(customer_id: int, {v}: str = "created_at"):
    """List a customer's orders, newest first by default, sorted by the column the client picks."""
    column = SORT_COLUMNS.get({v})
    if column is None:
        raise HTTPException(status_code=400, detail="unsupported sort column")
    stmt = sa.text(
        "SELECT id, total, status, created_at FROM orders "
        f"WHERE customer_id = :cid ORDER BY {{column}} DESC"
    )
    with engine.connect() as conn:
        rows = conn.execute(stmt, {{"cid": customer_id}}).mappings().all()
    return [dict(r) for r in rows]
'''),
    # ---- CWE-94 code injection
    _t(94, "am", r'''
from simpleeval import simple_eval
''', r'''
def {f}({v}: str, rows: list[dict]) -> list[dict]:
    """Add a computed column to each exported row using the tenant's formula, e.g. "price * quantity"."""
    out = []
    for row in rows:
        enriched = dict(row)
        enriched["computed"] = eval({v}, {{"__builtins__": {{}}}}, row)  #!V
        out.append(enriched)
    return out
''', r'''
def {f}({v}: str, rows: list[dict]) -> list[dict]:
    """Add a computed column to each exported row using the tenant's formula, e.g. "price * quantity"."""
    out = []
    for row in rows:
        enriched = dict(row)
        enriched["computed"] = simple_eval({v}, names=row)
        out.append(enriched)
    return out
'''),
    _t(94, "an", r'''
from flask import Flask, jsonify, render_template_string, request
from jinja2.sandbox import SandboxedEnvironment

app = Flask(__name__)
sandbox_env = SandboxedEnvironment(autoescape=True)
''', r'''
@app.post("/api/notification-templates/preview")
def {f}():
    """Preview a tenant's custom notification template with sample account fields."""
    {v} = (request.get_json(silent=True) or {{}}).get("template", "")
    sample = {{"first_name": "Ada", "plan": "Pro", "renewal_date": "2026-12-31"}}
    html = render_template_string({v}, **sample)  #!V
    return jsonify(html=html)
''', r'''
@app.post("/api/notification-templates/preview")
def {f}():
    """Preview a tenant's custom notification template with sample account fields."""
    {v} = (request.get_json(silent=True) or {{}}).get("template", "")
    sample = {{"first_name": "Ada", "plan": "Pro", "renewal_date": "2026-12-31"}}
    html = sandbox_env.from_string({v}).render(**sample)
    return jsonify(html=html)
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "am", r'''
import json
import pickle

import redis

store = redis.Redis(host="localhost", port=6379, db=0)
''', r'''
def {f}(channel, method, properties, {v}: bytes) -> None:
    """RabbitMQ (pika) consumer callback that applies queued profile updates."""
    job = pickle.loads({v})  #!V
    store.hset(f"account:{{job['account_id']}}", mapping=job["changes"])
    channel.basic_ack(delivery_tag=method.delivery_tag)
''', r'''
def {f}(channel, method, properties, {v}: bytes) -> None:
    """RabbitMQ (pika) consumer callback that applies queued profile updates."""
    job = json.loads({v})
    store.hset(f"account:{{int(job['account_id'])}}", mapping=job["changes"])
    channel.basic_ack(delivery_tag=method.delivery_tag)
'''),
    _t(502, "an", r'''
import yaml
from fastapi import FastAPI, File, HTTPException, UploadFile

app = FastAPI()
''', r'''
@app.post("/pipelines/import")
async def {f}({v}: UploadFile = File(...)):
    """Import a pipeline definition uploaded as a YAML file."""
    content = await {v}.read()
    spec = yaml.load(content, Loader=yaml.Loader)  #!V
    if not isinstance(spec, dict) or "steps" not in spec:
        raise HTTPException(status_code=422, detail="pipeline must define steps")
    return {{"pipeline": spec.get("name", "unnamed"), "steps": len(spec["steps"])}}
''', r'''
@app.post("/pipelines/import")
async def {f}({v}: UploadFile = File(...)):
    """Import a pipeline definition uploaded as a YAML file."""
    content = await {v}.read()
    spec = yaml.safe_load(content)
    if not isinstance(spec, dict) or "steps" not in spec:
        raise HTTPException(status_code=422, detail="pipeline must define steps")
    return {{"pipeline": spec.get("name", "unnamed"), "steps": len(spec["steps"])}}
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "am", r'''
import base64
import os

from Crypto.Cipher import AES
from Crypto.Util.Padding import pad

ENC_KEY = bytes.fromhex(os.environ["TOKEN_ENC_KEY"])
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a third-party OAuth refresh token before it is stored in the accounts table."""
    cipher = AES.new(ENC_KEY, AES.MODE_ECB)  #!V
    ct = cipher.encrypt(pad({v}.encode(), AES.block_size))
    return base64.b64encode(ct).decode()
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a third-party OAuth refresh token before it is stored in the accounts table."""
    nonce = os.urandom(12)
    cipher = AES.new(ENC_KEY, AES.MODE_GCM, nonce=nonce)
    ct, tag = cipher.encrypt_and_digest({v}.encode())
    return base64.b64encode(nonce + tag + ct).decode()
'''),
    _t(327, "an", r'''
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

BACKUP_KEY = bytes.fromhex(os.environ["BACKUP_ENC_KEY"])
''', r'''
def {f}({v}: str) -> bytes:
    """Encrypt a local export file before it is uploaded to the backup bucket."""
    with open({v}, "rb") as fh:
        plain = fh.read()
    iv = os.urandom(8)
    padder = padding.PKCS7(64).padder()
    padded = padder.update(plain) + padder.finalize()
    encryptor = Cipher(algorithms.TripleDES(BACKUP_KEY[:24]), modes.CBC(iv)).encryptor()  #!V
    return iv + encryptor.update(padded) + encryptor.finalize()
''', r'''
def {f}({v}: str) -> bytes:
    """Encrypt a local export file before it is uploaded to the backup bucket."""
    with open({v}, "rb") as fh:
        plain = fh.read()
    nonce = os.urandom(12)
    return nonce + AESGCM(BACKUP_KEY[:32]).encrypt(nonce, plain, None)
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "am", r'''
import hashlib
import secrets
import sqlite3

import bcrypt
''', r'''
def {f}(conn: sqlite3.Connection, email: str, {v}: str) -> int:
    """Register a new account and store its password hash."""
    salt = secrets.token_hex(16)
    digest = hashlib.sha256((salt + {v}).encode()).hexdigest()  #!V
    cur = conn.execute(
        "INSERT INTO accounts (email, password_salt, password_hash) VALUES (?, ?, ?)",
        (email.lower(), salt, digest),
    )
    conn.commit()
    return cur.lastrowid
''', r'''
def {f}(conn: sqlite3.Connection, email: str, {v}: str) -> int:
    """Register a new account and store its password hash."""
    digest = bcrypt.hashpw({v}.encode(), bcrypt.gensalt()).decode()
    cur = conn.execute(
        "INSERT INTO accounts (email, password_hash) VALUES (?, ?)",
        (email.lower(), digest),
    )
    conn.commit()
    return cur.lastrowid
'''),
    _t(328, "an", r'''
import hashlib
import hmac
import os
import time
from urllib.parse import quote

LINK_SECRET = os.environ["LINK_SIGNING_SECRET"]
''', r'''
def {f}({v}: str, ttl: int = 3600) -> str:
    """Build a time-limited download link for a file in the storage bucket."""
    expires = int(time.time()) + ttl
    sig = hashlib.md5(f"{{LINK_SECRET}}:{{{v}}}:{{expires}}".encode()).hexdigest()  #!V
    return f"/download/{{quote({v})}}?expires={{expires}}&sig={{sig}}"
''', r'''
def {f}({v}: str, ttl: int = 3600) -> str:
    """Build a time-limited download link for a file in the storage bucket."""
    expires = int(time.time()) + ttl
    msg = f"{{{v}}}:{{expires}}".encode()
    sig = hmac.new(LINK_SECRET.encode(), msg, hashlib.sha256).hexdigest()
    return f"/download/{{quote({v})}}?expires={{expires}}&sig={{sig}}"
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "am", r'''
import random
import secrets
import sqlite3
import string
from datetime import datetime, timedelta, timezone
''', r'''
def {f}(conn: sqlite3.Connection, {v}: str) -> str:
    """Issue a password-reset token for the account registered under this email."""
    token = "".join(random.choices(string.ascii_letters + string.digits, k=32))  #!V
    expires = datetime.now(timezone.utc) + timedelta(hours=1)
    conn.execute(
        "INSERT INTO password_resets (email, token, expires_at) VALUES (?, ?, ?)",
        ({v}, token, expires.isoformat()),
    )
    conn.commit()
    return token
''', r'''
def {f}(conn: sqlite3.Connection, {v}: str) -> str:
    """Issue a password-reset token for the account registered under this email."""
    token = secrets.token_urlsafe(32)
    expires = datetime.now(timezone.utc) + timedelta(hours=1)
    conn.execute(
        "INSERT INTO password_resets (email, token, expires_at) VALUES (?, ?, ?)",
        ({v}, token, expires.isoformat()),
    )
    conn.commit()
    return token
'''),
    _t(338, "an", r'''
import random
import secrets

import redis

cache = redis.Redis.from_url("redis://localhost:6379/0")
OTP_TTL_SECONDS = 300
''', r'''
def {f}({v}: str) -> str:
    """Generate and cache a 6-digit login verification code to be sent by SMS."""
    code = f"{{random.randint(0, 999999):06d}}"  #!V
    cache.setex(f"otp:{{{v}}}", OTP_TTL_SECONDS, code)
    cache.delete(f"otp_attempts:{{{v}}}")
    return code
''', r'''
def {f}({v}: str) -> str:
    """Generate and cache a 6-digit login verification code to be sent by SMS."""
    code = f"{{secrets.randbelow(1_000_000):06d}}"
    cache.setex(f"otp:{{{v}}}", OTP_TTL_SECONDS, code)
    cache.delete(f"otp_attempts:{{{v}}}")
    return code
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "am", r'''
import os

from twilio.rest import Client
''', r'''
def {f}({v}: str, code: str) -> str:
    """Text a login verification code to the user's phone number."""
    client = Client("AC3f9e2b7c41d08a6e5b9c2d7f10a4e8b3", "9c4e1a7f2b6d8e0c3a5f7b9d1e2c4a6f")  #!V
    msg = client.messages.create(
        to={v},
        from_="+15017250604",
        body=f"Your verification code is {{code}}",
    )
    return msg.sid
''', r'''
def {f}({v}: str, code: str) -> str:
    """Text a login verification code to the user's phone number."""
    client = Client(os.environ["TWILIO_ACCOUNT_SID"], os.environ["TWILIO_AUTH_TOKEN"])
    msg = client.messages.create(
        to={v},
        from_=os.environ["TWILIO_FROM_NUMBER"],
        body=f"Your verification code is {{code}}",
    )
    return msg.sid
'''),
    _t(798, "an", r'''
import os
import smtplib
from email.message import EmailMessage

SMTP_SERVER = "smtp.mailgun.org"
''', r'''
def {f}({v}: str, reset_link: str) -> None:
    """Send the password-reset email to an account's address."""
    msg = EmailMessage()
    msg["Subject"] = "Reset your password"
    msg["From"] = "no-reply@acmeapp.io"
    msg["To"] = {v}
    msg.set_content(f"Use this link to reset your password (valid for 1 hour): {{reset_link}}")
    with smtplib.SMTP(SMTP_SERVER, 587) as smtp:
        smtp.starttls()
        smtp.login("postmaster@mg.acmeapp.io", "b7Kq!2vRt9#LmZx4")  #!V
        smtp.send_message(msg)
''', r'''
def {f}({v}: str, reset_link: str) -> None:
    """Send the password-reset email to an account's address."""
    msg = EmailMessage()
    msg["Subject"] = "Reset your password"
    msg["From"] = "no-reply@acmeapp.io"
    msg["To"] = {v}
    msg.set_content(f"Use this link to reset your password (valid for 1 hour): {{reset_link}}")
    with smtplib.SMTP(SMTP_SERVER, 587) as smtp:
        smtp.starttls()
        smtp.login(os.environ["SMTP_USERNAME"], os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "am", r'''
from flask import Flask, jsonify, request
from lxml import etree

app = Flask(__name__)
''', r'''
@app.post("/api/{t}/import")
def {f}():
    """Import a partner's XML order feed posted to this endpoint."""
    {v} = request.get_data()
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True)  #!V
    root = etree.fromstring({v}, parser)
    orders = [
        {{"ref": o.findtext("ref"), "qty": int(o.findtext("qty") or 0)}}
        for o in root.iter("order")
    ]
    return jsonify(imported=len(orders), orders=orders)
''', r'''
@app.post("/api/{t}/import")
def {f}():
    """Import a partner's XML order feed posted to this endpoint."""
    {v} = request.get_data()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring({v}, parser)
    orders = [
        {{"ref": o.findtext("ref"), "qty": int(o.findtext("qty") or 0)}}
        for o in root.iter("order")
    ]
    return jsonify(imported=len(orders), orders=orders)
'''),
    _t(611, "an", r'''
import xml.sax
from xml.sax.handler import feature_external_ges

import defusedxml.sax


class EmailCollector(xml.sax.ContentHandler):
    """Collect the text of every <email> element in an account export."""

    def __init__(self):
        super().__init__()
        self.emails: list[str] = []
        self._buf: list[str] | None = None

    def startElement(self, tag, attrs):
        self._buf = [] if tag == "email" else None

    def characters(self, content):
        if self._buf is not None:
            self._buf.append(content)

    def endElement(self, tag):
        if tag == "email" and self._buf is not None:
            self.emails.append("".join(self._buf).strip())
        self._buf = None
''', r'''
def {f}({v}: str) -> list[str]:
    """Stream a (possibly very large) uploaded account export file and pull out the e-mail addresses."""
    collector = EmailCollector()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)  #!V
    parser.setContentHandler(collector)
    parser.parse({v})
    return collector.emails
''', r'''
def {f}({v}: str) -> list[str]:
    """Stream a (possibly very large) uploaded account export file and pull out the e-mail addresses."""
    collector = EmailCollector()
    parser = defusedxml.sax.make_parser()
    parser.setContentHandler(collector)
    parser.parse({v})
    return collector.emails
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "am", r'''
import ipaddress
import os
import socket
from urllib.parse import urlparse

import requests
from flask import Flask, abort, g, jsonify, request

app = Flask(__name__)
AVATAR_DIR = "/srv/app/avatars"
''', r'''
@app.post("/account/avatar/from-url")
def {f}():
    """Let a signed-in user set their avatar by pointing at an image URL."""
    {v} = (request.get_json(silent=True) or {{}}).get("url", "")
    resp = requests.get({v}, timeout=10)  #!V
    if resp.status_code != 200 or not resp.headers.get("Content-Type", "").startswith("image/"):
        abort(400, "URL did not return an image")
    path = os.path.join(AVATAR_DIR, f"{{int(g.user_id)}}.img")
    with open(path, "wb") as fh:
        fh.write(resp.content)
    return jsonify(ok=True)
''', r'''
def _resolves_to_public_ip(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return False
    for info in socket.getaddrinfo(parsed.hostname, parsed.port or 443):
        if not ipaddress.ip_address(info[4][0]).is_global:
            return False
    return True


@app.post("/account/avatar/from-url")
def {f}():
    """Let a signed-in user set their avatar by pointing at an image URL."""
    {v} = (request.get_json(silent=True) or {{}}).get("url", "")
    if not _resolves_to_public_ip({v}):
        abort(400, "URL must point to a public http(s) address")
    resp = requests.get({v}, timeout=10, allow_redirects=False)
    if resp.status_code != 200 or not resp.headers.get("Content-Type", "").startswith("image/"):
        abort(400, "URL did not return an image")
    path = os.path.join(AVATAR_DIR, f"{{int(g.user_id)}}.img")
    with open(path, "wb") as fh:
        fh.write(resp.content)
    return jsonify(ok=True)
'''),
    _t(918, "an", r'''
import httpx
from fastapi import FastAPI, HTTPException

app = FastAPI()
INTEGRATION_HOSTS = {{"api.hubapi.com", "login.salesforce.com", "api.pipedrive.com"}}
''', r'''
@app.get("/integrations/check")
async def {f}({v}: str, port: int = 443):
    """Connectivity check the admin UI runs before saving a CRM integration."""
    url = f"https://{{{v}}}:{{port}}/"
    async with httpx.AsyncClient(timeout=5) as client:
        resp = await client.get(url)  #!V
    return {{"reachable": resp.status_code < 500, "status": resp.status_code}}
''', r'''
@app.get("/integrations/check")
async def {f}({v}: str, port: int = 443):
    """Connectivity check the admin UI runs before saving a CRM integration."""
    if {v} not in INTEGRATION_HOSTS or port != 443:
        raise HTTPException(status_code=400, detail="unknown integration host")
    url = f"https://{{{v}}}:{{port}}/"
    async with httpx.AsyncClient(timeout=5, follow_redirects=False) as client:
        resp = await client.get(url)
    return {{"reachable": resp.status_code < 500, "status": resp.status_code}}
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "am", r'''
import csv
import os
import tempfile

import boto3

s3 = boto3.client("s3")
''', r'''
def {f}(bucket: str, {v}: str) -> int:
    """Download a CSV upload from S3 to scratch space and count its data rows."""
    tmp_path = tempfile.mktemp(suffix=".csv")  #!V
    s3.download_file(bucket, {v}, tmp_path)
    try:
        with open(tmp_path, newline="") as fh:
            return max(sum(1 for _ in csv.reader(fh)) - 1, 0)
    finally:
        os.remove(tmp_path)
''', r'''
def {f}(bucket: str, {v}: str) -> int:
    """Download a CSV upload from S3 to scratch space and count its data rows."""
    fd, tmp_path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    s3.download_file(bucket, {v}, tmp_path)
    try:
        with open(tmp_path, newline="") as fh:
            return max(sum(1 for _ in csv.reader(fh)) - 1, 0)
    finally:
        os.remove(tmp_path)
'''),
    _t(377, "an", r'''
import json
import os
import tempfile
import zipfile

import boto3

s3 = boto3.client("s3")
EXPORT_BUCKET = "acme-account-exports"
''', r'''
def {f}({v}: int, records: list[dict]) -> str:
    """Build a GDPR data-export archive for an account and upload it to S3."""
    archive_path = f"/tmp/export_{{{v}}}.zip"  #!V
    with zipfile.ZipFile(archive_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("records.json", json.dumps(records, default=str, indent=2))
    object_key = f"exports/{{{v}}}.zip"
    s3.upload_file(archive_path, EXPORT_BUCKET, object_key)
    os.remove(archive_path)
    return object_key
''', r'''
def {f}({v}: int, records: list[dict]) -> str:
    """Build a GDPR data-export archive for an account and upload it to S3."""
    object_key = f"exports/{{{v}}}.zip"
    with tempfile.TemporaryDirectory(prefix="export_") as workdir:
        archive_path = os.path.join(workdir, "export.zip")
        with zipfile.ZipFile(archive_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("records.json", json.dumps(records, default=str, indent=2))
        s3.upload_file(archive_path, EXPORT_BUCKET, object_key)
    return object_key
'''),
]

FAMILIES_AM = sorted({t.cwe for t in TEMPLATES_AM})


def heldout_templates_am() -> list[Template]:
    """The 26 variant-"am"/"an" templates (final evaluation only).

    >>> len(heldout_templates_am()), len(FAMILIES_AM), sorted({t.variant for t in heldout_templates_am()})
    (26, 13, ['am', 'an'])
    """
    return list(TEMPLATES_AM)
