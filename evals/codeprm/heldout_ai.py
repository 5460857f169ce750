'''Blind template variants "ai" and "aj": realistic code (a mix of everyday assistant requests), for evaluation only.

Status: a blind test of the round-9 system (realistic protocol), evaluated once (2026-12-01 14:04 UTC);
validation data since round 10 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ai", "aj")

TEMPLATES_AI: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ai", r"""
import os

from flask import Flask, abort, send_file

app = Flask(__name__)
UPLOAD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "uploads")
""", r"""
@app.route("/files/<path:{v}>")
def {f}({v}):
    '''Let users download a file they previously uploaded.'''
    file_path = os.path.join(UPLOAD_DIR, {v})  #!V
    if not os.path.isfile(file_path):
        abort(404)
    return send_file(file_path, as_attachment=True)  #!V
""", r"""
@app.route("/files/<path:{v}>")
def {f}({v}):
    '''Let users download a file they previously uploaded.'''
    base_dir = os.path.realpath(UPLOAD_DIR)
    file_path = os.path.realpath(os.path.join(base_dir, {v}))
    if os.path.commonpath([base_dir, file_path]) != base_dir:
        abort(404)
    if not os.path.isfile(file_path):
        abort(404)
    return send_file(file_path, as_attachment=True)
"""),
    _t(22, "aj", r"""
import tarfile
from pathlib import Path

RESTORE_ROOT = Path("/srv/app/restore")
""", r"""
def {f}({v}: str, workspace_id: int) -> list[str]:
    '''Restore a user-supplied .tar.gz backup into the workspace's folder.'''
    dest = RESTORE_ROOT / str(workspace_id)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:gz") as archive:
        members = archive.getnames()
        archive.extractall(dest)  #!V
    return members
""", r"""
def {f}({v}: str, workspace_id: int) -> list[str]:
    '''Restore a user-supplied .tar.gz backup into the workspace's folder.'''
    dest = RESTORE_ROOT / str(workspace_id)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:gz") as archive:
        members = archive.getnames()
        archive.extractall(dest, filter="data")
    return members
"""),
    # ---- CWE-78 OS command injection
    _t(78, "ai", r"""
import re
import subprocess

from fastapi import FastAPI, HTTPException

app = FastAPI()
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{{0,252}}$")
""", r"""
@app.get("/diagnostics/ping")
def {f}({v}: str, count: int = 4):
    '''Ping a host from the server and return the output to the admin UI.'''
    count = max(1, min(count, 10))
    cmd = f"ping -c {{count}} {{{v}}}"  #!V
    result = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30)  #!V
    return {{"returncode": result.returncode, "output": result.stdout}}
""", r"""
@app.get("/diagnostics/ping")
def {f}({v}: str, count: int = 4):
    '''Ping a host from the server and return the output to the admin UI.'''
    if not HOSTNAME_RE.match({v}):
        raise HTTPException(status_code=400, detail="invalid host")
    count = max(1, min(count, 10))
    cmd = ["ping", "-c", str(count), {v}]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return {{"returncode": result.returncode, "output": result.stdout}}
"""),
    _t(78, "aj", r"""
import os
import subprocess
from pathlib import Path
""", r"""
def {f}({v}: str, bitrate: str = "192k") -> Path:
    '''Extract the audio track of a video file to an MP3 next to the original.'''
    out_path = Path({v}).with_suffix(".mp3")
    exit_code = os.system(f'ffmpeg -y -i "{{{v}}}" -vn -b:a {{bitrate}} "{{out_path}}"')  #!V
    if exit_code != 0:
        raise RuntimeError(f"ffmpeg failed with status {{exit_code}}")
    return out_path
""", r"""
def {f}({v}: str, bitrate: str = "192k") -> Path:
    '''Extract the audio track of a video file to an MP3 next to the original.'''
    out_path = Path({v}).with_suffix(".mp3")
    proc = subprocess.run(
        ["ffmpeg", "-y", "-i", {v}, "-vn", "-b:a", bitrate, str(out_path)],
        capture_output=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg failed with status {{proc.returncode}}")
    return out_path
"""),
    # ---- CWE-79 cross-site scripting
    _t(79, "ai", r"""
from flask import Flask, request
from markupsafe import escape

app = Flask(__name__)
PRODUCTS = ["Laptop stand", "USB-C hub", "Mechanical keyboard", "Noise-cancelling headphones"]
""", r"""
@app.route("/search")
def {f}():
    '''Simple search page that echoes the query and lists matching products.'''
    {v} = request.args.get("q", "")
    matches = [p for p in PRODUCTS if {v}.lower() in p.lower()]
    rows = "".join(f"<li>{{p}}</li>" for p in matches)
    return f"<h1>Results for '{{{v}}}'</h1><ul>{{rows}}</ul>"  #!V
""", r"""
@app.route("/search")
def {f}():
    '''Simple search page that echoes the query and lists matching products.'''
    {v} = request.args.get("q", "")
    matches = [p for p in PRODUCTS if {v}.lower() in p.lower()]
    rows = "".join(f"<li>{{escape(p)}}</li>" for p in matches)
    return f"<h1>Results for '{{escape({v})}}'</h1><ul>{{rows}}</ul>"
"""),
    _t(79, "aj", r"""
import csv
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

TEMPLATE_DIR = Path(__file__).parent / "templates"
""", r"""
def {f}({v}: str, out_file: str = "feedback.html") -> None:
    '''Render uploaded customer feedback (CSV) into an HTML page for the support team.'''
    env = Environment(loader=FileSystemLoader(TEMPLATE_DIR))  #!V
    template = env.get_template("feedback.html")
    with open({v}, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    page = template.render(rows=rows, total=len(rows))
    Path(out_file).write_text(page, encoding="utf-8")
""", r"""
def {f}({v}: str, out_file: str = "feedback.html") -> None:
    '''Render uploaded customer feedback (CSV) into an HTML page for the support team.'''
    env = Environment(
        loader=FileSystemLoader(TEMPLATE_DIR),
        autoescape=select_autoescape(["html", "xml"]),
    )
    template = env.get_template("feedback.html")
    with open({v}, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    page = template.render(rows=rows, total=len(rows))
    Path(out_file).write_text(page, encoding="utf-8")
"""),
    # ---- CWE-89 SQL injection
    _t(89, "ai", r"""
import sqlite3

DB_PATH = "app.db"
""", r"""
def {f}({v}: str) -> dict | None:
    '''Look up a user account by username for the profile page.'''
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    try:
        cur = conn.execute(
            f"SELECT id, username, email, created_at FROM {t} WHERE username = '{{{v}}}'"  #!V
        )
        row = cur.fetchone()
        return dict(row) if row else None
    finally:
        conn.close()
""", r"""
def {f}({v}: str) -> dict | None:
    '''Look up a user account by username for the profile page.'''
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    try:
        cur = conn.execute(
            "SELECT id, username, email, created_at FROM {t} WHERE username = ?",
            ({v},),
        )
        row = cur.fetchone()
        return dict(row) if row else None
    finally:
        conn.close()
"""),
    _t(89, "aj", r"""
import sqlalchemy as sa
from fastapi import FastAPI
from sqlalchemy.orm import sessionmaker

app = FastAPI()
engine = sa.create_engine("postgresql+psycopg://shop_app@localhost/shop")
SessionLocal = sessionmaker(bind=engine)
""", r"""
@app.get("/api/products/search")
def {f}({v}: str, limit: int = 20):
    '''Product search used by the storefront search box.'''
    limit = max(1, min(limit, 100))
    stmt = sa.text(
        f"SELECT id, title, price FROM products WHERE title ILIKE '%{{{v}}}%' "  #!V
        f"ORDER BY title LIMIT {{limit}}"
    )
    with SessionLocal() as db:
        rows = db.execute(stmt).mappings().all()
    return [dict(r) for r in rows]
""", r"""
@app.get("/api/products/search")
def {f}({v}: str, limit: int = 20):
    '''Product search used by the storefront search box.'''
    limit = max(1, min(limit, 100))
    stmt = sa.text(
        "SELECT id, title, price FROM products WHERE title ILIKE :pattern "
        "ORDER BY title LIMIT :limit"
    )
    with SessionLocal() as db:
        rows = db.execute(stmt, {{"pattern": f"%{{{v}}}%", "limit": limit}}).mappings().all()
    return [dict(r) for r in rows]
"""),
    # ---- CWE-94 code injection
    _t(94, "ai", r"""
import ast
import operator

from flask import Flask, jsonify, request

app = Flask(__name__)

_OPS = {{
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}}
""", r"""
@app.post("/api/calc")
def {f}():
    '''Evaluate the arithmetic expression typed into the calculator widget.'''
    {v} = (request.get_json(silent=True) or {{}}).get("expression", "")
    try:
        result = eval({v})  #!V
    except Exception as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(result=result)
""", r"""
def _eval_node(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_node(node.left), _eval_node(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_node(node.operand))
    raise ValueError("unsupported expression")


@app.post("/api/calc")
def {f}():
    '''Evaluate the arithmetic expression typed into the calculator widget.'''
    {v} = (request.get_json(silent=True) or {{}}).get("expression", "")
    try:
        result = _eval_node(ast.parse({v}, mode="eval").body)
    except Exception as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(result=result)
"""),
    _t(94, "aj", r"""
from flask import Flask, render_template_string, request

app = Flask(__name__)
""", r"""
@app.route("/greeting")
def {f}():
    '''Render a personalised birthday card page.'''
    {v} = request.args.get("to", "friend")
    sender = "the whole team"
    page = f"<div class='card'><h2>Happy birthday, {{{v}}}!</h2><p>From {{sender}}</p></div>"  #!V
    return render_template_string(page)  #!V
""", r"""
@app.route("/greeting")
def {f}():
    '''Render a personalised birthday card page.'''
    {v} = request.args.get("to", "friend")
    sender = "the whole team"
    page = "<div class='card'><h2>Happy birthday, {{{{ recipient }}}}!</h2><p>From {{{{ sender }}}}</p></div>"
    return render_template_string(page, recipient={v}, sender=sender)
"""),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "ai", r"""
import base64
import json
import pickle

from flask import Flask, jsonify, request

app = Flask(__name__)
""", r"""
@app.route("/cart")
def {f}():
    '''Return the shopping cart that is kept in the visitor's cookie.'''
    {v} = request.cookies.get("cart")
    cart = pickle.loads(base64.b64decode({v})) if {v} else []  #!V
    if not isinstance(cart, list):
        cart = []
    return jsonify(items=cart, count=len(cart))
""", r"""
@app.route("/cart")
def {f}():
    '''Return the shopping cart that is kept in the visitor's cookie.'''
    {v} = request.cookies.get("cart")
    try:
        cart = json.loads(base64.b64decode({v})) if {v} else []
    except ValueError:
        cart = []
    if not isinstance(cart, list):
        cart = []
    return jsonify(items=cart, count=len(cart))
"""),
    _t(502, "aj", r"""
import yaml
from fastapi import FastAPI, File, HTTPException, UploadFile

app = FastAPI()
""", r"""
@app.post("/pipelines/import")
async def {f}({v}: UploadFile = File(...)):
    '''Import a CI pipeline definition uploaded as a YAML file.'''
    content = await {v}.read()
    try:
        spec = yaml.load(content, Loader=yaml.Loader)  #!V
    except yaml.YAMLError as exc:
        raise HTTPException(status_code=400, detail=f"invalid YAML: {{exc}}")
    if not isinstance(spec, dict) or "stages" not in spec:
        raise HTTPException(status_code=422, detail="missing 'stages'")
    return {{"pipeline": spec.get("name", "unnamed"), "stages": len(spec["stages"])}}
""", r"""
@app.post("/pipelines/import")
async def {f}({v}: UploadFile = File(...)):
    '''Import a CI pipeline definition uploaded as a YAML file.'''
    content = await {v}.read()
    try:
        spec = yaml.safe_load(content)
    except yaml.YAMLError as exc:
        raise HTTPException(status_code=400, detail=f"invalid YAML: {{exc}}")
    if not isinstance(spec, dict) or "stages" not in spec:
        raise HTTPException(status_code=422, detail="missing 'stages'")
    return {{"pipeline": spec.get("name", "unnamed"), "stages": len(spec["stages"])}}
"""),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "ai", r"""
import base64
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ENCRYPTION_KEY = bytes.fromhex(os.environ["TOKEN_ENCRYPTION_KEY"])  # 32 bytes, hex encoded
""", r"""
def {f}({v}: str) -> str:
    '''Encrypt a customer's third-party API token before it is stored in the database.'''
    padder = padding.PKCS7(128).padder()
    padded = padder.update({v}.encode("utf-8")) + padder.finalize()
    encryptor = Cipher(algorithms.AES(ENCRYPTION_KEY), modes.ECB()).encryptor()  #!V
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    return base64.b64encode(ciphertext).decode("ascii")
""", r"""
def {f}({v}: str) -> str:
    '''Encrypt a customer's third-party API token before it is stored in the database.'''
    nonce = os.urandom(12)
    ciphertext = AESGCM(ENCRYPTION_KEY).encrypt(nonce, {v}.encode("utf-8"), None)
    # nonce is stored in front of the ciphertext so the token can be decrypted later
    blob_out = nonce + ciphertext
    return base64.b64encode(blob_out).decode("ascii")
"""),
    _t(327, "aj", r"""
import base64
import json
import os

from Crypto.Cipher import AES, DES
from Crypto.Random import get_random_bytes
from Crypto.Util.Padding import pad

COOKIE_SECRET = bytes.fromhex(os.environ["REMEMBER_ME_SECRET"])  # 32 random bytes
""", r"""
def {f}({v}: dict) -> str:
    '''Encrypt the remember-me payload (user id and expiry) that is stored in a cookie.'''
    plaintext = json.dumps({v}, separators=(",", ":")).encode()
    iv = get_random_bytes(8)
    cipher = DES.new(COOKIE_SECRET[:8], DES.MODE_CBC, iv)  #!V
    token = iv + cipher.encrypt(pad(plaintext, DES.block_size))
    return base64.urlsafe_b64encode(token).decode()
""", r"""
def {f}({v}: dict) -> str:
    '''Encrypt the remember-me payload (user id and expiry) that is stored in a cookie.'''
    plaintext = json.dumps({v}, separators=(",", ":")).encode()
    cipher = AES.new(COOKIE_SECRET[:32], AES.MODE_GCM)
    ciphertext, tag = cipher.encrypt_and_digest(plaintext)
    token = cipher.nonce + tag + ciphertext
    return base64.urlsafe_b64encode(token).decode()
"""),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "ai", r"""
import hashlib
import os
import sqlite3

conn = sqlite3.connect("users.db", check_same_thread=False)
""", r"""
def {f}(username: str, {v}: str) -> None:
    '''Create a new account from the sign-up form.'''
    password_hash = hashlib.md5({v}.encode("utf-8")).hexdigest()  #!V
    conn.execute(
        "INSERT INTO {t} (username, password_hash) VALUES (?, ?)",
        (username.strip().lower(), password_hash),
    )
    conn.commit()
""", r"""
def {f}(username: str, {v}: str) -> None:
    '''Create a new account from the sign-up form.'''
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", {v}.encode("utf-8"), salt, 600_000)
    password_hash = f"pbkdf2_sha256$600000${{salt.hex()}}${{digest.hex()}}"
    conn.execute(
        "INSERT INTO {t} (username, password_hash) VALUES (?, ?)",
        (username.strip().lower(), password_hash),
    )
    conn.commit()
"""),
    _t(328, "aj", r"""
import hashlib
import hmac
import json
import os

from flask import Flask, abort, request

app = Flask(__name__)
WEBHOOK_SECRET = os.environ["PARTNER_WEBHOOK_SECRET"]
""", r"""
@app.post("/webhooks/fulfilment")
def {f}():
    '''Receive order status callbacks from the fulfilment partner.'''
    {v} = request.get_data()
    signature = request.headers.get("X-Signature", "")
    expected = hashlib.md5(WEBHOOK_SECRET.encode() + {v}).hexdigest()  #!V
    if not hmac.compare_digest(expected, signature):
        abort(401)
    event = json.loads({v})
    app.logger.info("fulfilment event %s for order %s", event.get("type"), event.get("order_id"))
    return "", 204
""", r"""
@app.post("/webhooks/fulfilment")
def {f}():
    '''Receive order status callbacks from the fulfilment partner.'''
    {v} = request.get_data()
    signature = request.headers.get("X-Signature", "")
    expected = hmac.new(WEBHOOK_SECRET.encode(), {v}, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        abort(401)
    event = json.loads({v})
    app.logger.info("fulfilment event %s for order %s", event.get("type"), event.get("order_id"))
    return "", 204
"""),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "ai", r"""
import random
import secrets
import string
from datetime import datetime, timedelta, timezone

RESET_TOKENS: dict[str, tuple[str, datetime]] = {{}}
""", r"""
def {f}({v}: str) -> str:
    '''Create a password-reset link for the given e-mail address.'''
    alphabet = string.ascii_letters + string.digits
    token = "".join(random.choices(alphabet, k=32))  #!V
    expires = datetime.now(timezone.utc) + timedelta(hours=1)
    RESET_TOKENS[token] = ({v}.strip().lower(), expires)
    return f"https://app.example.com/reset-password?token={{token}}"
""", r"""
def {f}({v}: str) -> str:
    '''Create a password-reset link for the given e-mail address.'''
    token = secrets.token_urlsafe(32)
    expires = datetime.now(timezone.utc) + timedelta(hours=1)
    RESET_TOKENS[token] = ({v}.strip().lower(), expires)
    return f"https://app.example.com/reset-password?token={{token}}"
"""),
    _t(338, "aj", r"""
import random
import secrets

import redis

cache = redis.Redis(host="localhost", port=6379, decode_responses=True)
""", r"""
class {f}Service:
    '''Issues and checks the six-digit login codes sent by SMS.'''

    ttl_seconds = 300

    def __init__(self, sms_client):
        self.sms = sms_client

    def send_code(self, {v}: str) -> None:
        code = f"{{random.randint(0, 999999):06d}}"  #!V
        cache.setex(f"otp:{{{v}}}", self.ttl_seconds, code)
        self.sms.send({v}, f"Your login code is {{code}}")

    def verify(self, {v}: str, submitted: str) -> bool:
        stored = cache.get(f"otp:{{{v}}}")
        return stored is not None and secrets.compare_digest(stored, submitted)
""", r"""
class {f}Service:
    '''Issues and checks the six-digit login codes sent by SMS.'''

    ttl_seconds = 300

    def __init__(self, sms_client):
        self.sms = sms_client

    def send_code(self, {v}: str) -> None:
        code = f"{{secrets.randbelow(1_000_000):06d}}"
        cache.setex(f"otp:{{{v}}}", self.ttl_seconds, code)
        self.sms.send({v}, f"Your login code is {{code}}")

    def verify(self, {v}: str, submitted: str) -> bool:
        stored = cache.get(f"otp:{{{v}}}")
        return stored is not None and secrets.compare_digest(stored, submitted)
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ai", r"""
import os

import psycopg2
from psycopg2.extras import RealDictCursor
""", r"""
def {f}({v}: int) -> list[dict]:
    '''Fetch the most recent orders of a customer for the account dashboard.'''
    conn = psycopg2.connect(
        host="db.internal.example.com",
        dbname="shop",
        user="shop_app",
        password="Wint3r!2026-prod",  #!V
    )
    try:
        with conn.cursor(cursor_factory=RealDictCursor) as cur:
            cur.execute(
                "SELECT id, total, status FROM orders WHERE customer_id = %s "
                "ORDER BY created_at DESC LIMIT 20",
                ({v},),
            )
            return cur.fetchall()
    finally:
        conn.close()
""", r"""
def {f}({v}: int) -> list[dict]:
    '''Fetch the most recent orders of a customer for the account dashboard.'''
    conn = psycopg2.connect(
        host=os.environ.get("DB_HOST", "db.internal.example.com"),
        dbname="shop",
        user=os.environ.get("DB_USER", "shop_app"),
        password=os.environ["DB_PASSWORD"],
    )
    try:
        with conn.cursor(cursor_factory=RealDictCursor) as cur:
            cur.execute(
                "SELECT id, total, status FROM orders WHERE customer_id = %s "
                "ORDER BY created_at DESC LIMIT 20",
                ({v},),
            )
            return cur.fetchall()
    finally:
        conn.close()
"""),
    _t(798, "aj", r"""
import os
import uuid

import boto3

BUCKET = "acme-user-uploads"
""", r"""
def {f}({v}: bytes, content_type: str = "application/octet-stream") -> str:
    '''Upload a user's file to S3 and return a pre-signed download URL.'''
    s3 = boto3.client(
        "s3",
        region_name="eu-west-1",
        aws_access_key_id="AKIA4Q7XZ2M3N5P6R8TW",  #!V
        aws_secret_access_key="o9Jk2+VbQ1wX7sLm4Hc8RtYz3NfGa6PeUd0KiW5q",  #!V
    )
    object_key = f"uploads/{{uuid.uuid4().hex}}"
    s3.put_object(Bucket=BUCKET, Key=object_key, Body={v}, ContentType=content_type)
    return s3.generate_presigned_url(
        "get_object", Params={{"Bucket": BUCKET, "Key": object_key}}, ExpiresIn=3600
    )
""", r"""
def {f}({v}: bytes, content_type: str = "application/octet-stream") -> str:
    '''Upload a user's file to S3 and return a pre-signed download URL.'''
    # credentials come from the environment / instance role via boto3's default chain
    s3 = boto3.client("s3", region_name=os.environ.get("AWS_REGION", "eu-west-1"))
    object_key = f"uploads/{{uuid.uuid4().hex}}"
    s3.put_object(Bucket=BUCKET, Key=object_key, Body={v}, ContentType=content_type)
    return s3.generate_presigned_url(
        "get_object", Params={{"Bucket": BUCKET, "Key": object_key}}, ExpiresIn=3600
    )
"""),
    # ---- CWE-611 XML external entities
    _t(611, "ai", r"""
from fastapi import FastAPI, HTTPException, Request
from lxml import etree

app = FastAPI()
""", r"""
@app.post("/api/products/import")
async def {f}(request: Request):
    '''Import products from a supplier's XML catalogue posted as the request body.'''
    {v} = await request.body()
    # supplier catalogues declare their own entities (currency, brand names) in the DTD
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True)  #!V
    try:
        root = etree.fromstring({v}, parser)
    except etree.XMLSyntaxError as exc:
        raise HTTPException(status_code=400, detail=str(exc))
    products = [
        {{"sku": p.findtext("sku"), "title": p.findtext("title"), "price": float(p.findtext("price") or 0)}}
        for p in root.iter("product")
    ]
    return {{"imported": len(products), "products": products}}
""", r"""
@app.post("/api/products/import")
async def {f}(request: Request):
    '''Import products from a supplier's XML catalogue posted as the request body.'''
    {v} = await request.body()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring({v}, parser)
    except etree.XMLSyntaxError as exc:
        raise HTTPException(status_code=400, detail=str(exc))
    products = [
        {{"sku": p.findtext("sku"), "title": p.findtext("title"), "price": float(p.findtext("price") or 0)}}
        for p in root.iter("product")
    ]
    return {{"imported": len(products), "products": products}}
"""),
    _t(611, "aj", r"""
import xml.sax
from xml.sax.handler import feature_external_ges, feature_external_pes
""", r"""
class TagCounter(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.counts: dict[str, int] = {{}}

    def startElement(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1


def {f}({v}: str) -> dict[str, int]:
    '''Stream through an uploaded XML export and count its elements by tag.'''
    handler = TagCounter()
    parser = xml.sax.make_parser()
    # exports may pull shared fragments in through external entities
    parser.setFeature(feature_external_ges, True)  #!V
    parser.setContentHandler(handler)
    parser.parse({v})
    return handler.counts
""", r"""
class TagCounter(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.counts: dict[str, int] = {{}}

    def startElement(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1


def {f}({v}: str) -> dict[str, int]:
    '''Stream through an uploaded XML export and count its elements by tag.'''
    handler = TagCounter()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, False)
    parser.setFeature(feature_external_pes, False)
    parser.setContentHandler(handler)
    parser.parse({v})
    return handler.counts
"""),
    # ---- CWE-918 server-side request forgery
    _t(918, "ai", r"""
import ipaddress
import socket
from urllib.parse import urlparse

import requests
from bs4 import BeautifulSoup
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
""", r"""
@app.get("/api/link-preview")
def {f}():
    '''Return title and description for a URL pasted into the chat box.'''
    {v} = request.args.get("url", "")
    if not {v}:
        abort(400)
    resp = requests.get({v}, timeout=5)  #!V
    soup = BeautifulSoup(resp.text, "html.parser")
    desc = soup.find("meta", attrs={{"name": "description"}})
    return jsonify(
        url={v},
        title=soup.title.string if soup.title else None,
        description=desc.get("content") if desc else None,
    )
""", r"""
def _is_public_http_url(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return False
    try:
        infos = socket.getaddrinfo(parsed.hostname, parsed.port or 443)
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_global for info in infos)


@app.get("/api/link-preview")
def {f}():
    '''Return title and description for a URL pasted into the chat box.'''
    {v} = request.args.get("url", "")
    if not {v} or not _is_public_http_url({v}):
        abort(400)
    resp = requests.get({v}, timeout=5, allow_redirects=False)
    soup = BeautifulSoup(resp.text, "html.parser")
    desc = soup.find("meta", attrs={{"name": "description"}})
    return jsonify(
        url={v},
        title=soup.title.string if soup.title else None,
        description=desc.get("content") if desc else None,
    )
"""),
    _t(918, "aj", r"""
import uuid
from pathlib import Path
from urllib.parse import urlparse

import httpx
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()
AVATAR_DIR = Path("/var/lib/app/avatars")
ALLOWED_AVATAR_HOSTS = {{"gravatar.com", "secure.gravatar.com", "avatars.githubusercontent.com"}}


class AvatarImport(BaseModel):
    image_url: str
""", r"""
@app.post("/me/avatar/import")
async def {f}({v}: AvatarImport):
    '''Download a profile picture from a URL the user pasted and store it.'''
    async with httpx.AsyncClient(timeout=10, follow_redirects=True) as client:
        resp = await client.get({v}.image_url)  #!V
    if resp.status_code != 200 or not resp.headers.get("content-type", "").startswith("image/"):
        raise HTTPException(status_code=400, detail="URL did not return an image")
    path = AVATAR_DIR / f"{{uuid.uuid4().hex}}.img"
    path.write_bytes(resp.content)
    return {{"avatar": path.name}}
""", r"""
@app.post("/me/avatar/import")
async def {f}({v}: AvatarImport):
    '''Download a profile picture from a URL the user pasted and store it.'''
    parsed = urlparse({v}.image_url)
    if parsed.scheme != "https" or parsed.hostname not in ALLOWED_AVATAR_HOSTS:
        raise HTTPException(status_code=400, detail="avatar host not allowed")
    async with httpx.AsyncClient(timeout=10, follow_redirects=False) as client:
        resp = await client.get({v}.image_url)
    if resp.status_code != 200 or not resp.headers.get("content-type", "").startswith("image/"):
        raise HTTPException(status_code=400, detail="URL did not return an image")
    path = AVATAR_DIR / f"{{uuid.uuid4().hex}}.img"
    path.write_bytes(resp.content)
    return {{"avatar": path.name}}
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "ai", r"""
import csv
import os
import tempfile
""", r"""
def {f}({v}: list[dict]) -> str:
    '''Write report rows to a temporary CSV file and return its path for the mailer.'''
    tmp_path = tempfile.mktemp(suffix=".csv", prefix="report_")  #!V
    with open(tmp_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list({v}[0].keys()))
        writer.writeheader()
        writer.writerows({v})
    return tmp_path
""", r"""
def {f}({v}: list[dict]) -> str:
    '''Write report rows to a temporary CSV file and return its path for the mailer.'''
    fd, tmp_path = tempfile.mkstemp(suffix=".csv", prefix="report_")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list({v}[0].keys()))
        writer.writeheader()
        writer.writerows({v})
    return tmp_path
"""),
    _t(377, "aj", r"""
import os
import re
import tarfile
import tempfile
import urllib.request

RELEASES_URL = "https://downloads.example.com/releases"
INSTALL_DIR = "/opt/acme"
VERSION_RE = re.compile(r"\d+\.\d+\.\d+")
""", r"""
def {f}({v}: str) -> str:
    '''Download and unpack the release tarball for the requested version.'''
    if not VERSION_RE.fullmatch({v}):
        raise ValueError(f"bad version string: {{{v}!r}}")
    archive_path = f"/tmp/acme-{{{v}}}.tar.gz"  #!V
    urllib.request.urlretrieve(f"{{RELEASES_URL}}/acme-{{{v}}}.tar.gz", archive_path)
    dest = os.path.join(INSTALL_DIR, {v})
    with tarfile.open(archive_path) as tar:
        tar.extractall(dest, filter="data")
    os.remove(archive_path)
    return dest
""", r"""
def {f}({v}: str) -> str:
    '''Download and unpack the release tarball for the requested version.'''
    if not VERSION_RE.fullmatch({v}):
        raise ValueError(f"bad version string: {{{v}!r}}")
    dest = os.path.join(INSTALL_DIR, {v})
    with tempfile.TemporaryDirectory(prefix="acme-") as workdir:
        archive_path = os.path.join(workdir, f"acme-{{{v}}}.tar.gz")
        urllib.request.urlretrieve(f"{{RELEASES_URL}}/acme-{{{v}}}.tar.gz", archive_path)
        with tarfile.open(archive_path) as tar:
            tar.extractall(dest, filter="data")
    return dest
"""),
]

FAMILIES_AI = sorted({t.cwe for t in TEMPLATES_AI})


def heldout_templates_ai() -> list[Template]:
    """The 26 variant-"ai"/"aj" templates (final evaluation only).

    >>> len(heldout_templates_ai()), len(FAMILIES_AI), sorted({t.variant for t in heldout_templates_ai()})
    (26, 13, ['ai', 'aj'])
    """
    return list(TEMPLATES_AI)
