'''Blind template variants "ae" and "af": realistic code (web applications and APIs), for evaluation only.

Status: a blind test of the round-9 system (realistic protocol), evaluated once (2026-12-01 14:02 UTC);
validation data since round 10 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ae", "af")

TEMPLATES_AE: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ae", r'''
import os

from flask import Flask, abort, request, send_file, send_from_directory

app = Flask(__name__)
REPORTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reports")
''', r'''
@app.route("/reports/download")
def {f}():
    """Download a previously generated report by its file name."""
    {v} = request.args.get("file", "")
    if not {v}:
        abort(400, "missing file parameter")
    path = os.path.join(REPORTS_DIR, {v})  #!V
    if not os.path.isfile(path):
        abort(404)
    return send_file(path, as_attachment=True)
''', r'''
@app.route("/reports/download")
def {f}():
    """Download a previously generated report by its file name."""
    {v} = request.args.get("file", "")
    if not {v}:
        abort(400, "missing file parameter")
    # send_from_directory answers 404 for names that resolve outside REPORTS_DIR
    return send_from_directory(REPORTS_DIR, {v}, as_attachment=True)
'''),
    _t(22, "af", r'''
from pathlib import Path

from fastapi import FastAPI, File, HTTPException, UploadFile

app = FastAPI()
MEDIA_ROOT = Path("/srv/app/media/uploads")
''', r'''
@app.post("/attachments")
async def {f}({v}: UploadFile = File(...)):
    """Store an uploaded attachment and return where it can be downloaded."""
    if not {v}.filename:
        raise HTTPException(status_code=400, detail="file name required")
    MEDIA_ROOT.mkdir(parents=True, exist_ok=True)
    destination = MEDIA_ROOT / {v}.filename  #!V
    contents = await {v}.read()
    destination.write_bytes(contents)
    return {{"path": f"/media/uploads/{{destination.name}}", "size": len(contents)}}
''', r'''
@app.post("/attachments")
async def {f}({v}: UploadFile = File(...)):
    """Store an uploaded attachment and return where it can be downloaded."""
    if not {v}.filename:
        raise HTTPException(status_code=400, detail="file name required")
    MEDIA_ROOT.mkdir(parents=True, exist_ok=True)
    safe_name = Path({v}.filename).name
    if safe_name in ("", ".", ".."):
        raise HTTPException(status_code=400, detail="invalid file name")
    destination = (MEDIA_ROOT / safe_name).resolve()
    if destination.parent != MEDIA_ROOT.resolve():
        raise HTTPException(status_code=400, detail="invalid file name")
    contents = await {v}.read()
    destination.write_bytes(contents)
    return {{"path": f"/media/uploads/{{destination.name}}", "size": len(contents)}}
'''),
    # ---- CWE-78 OS command injection
    _t(78, "ae", r'''
import ipaddress
import re
import subprocess

from flask import Flask, jsonify, request

app = Flask(__name__)
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{{0,252}}$")
''', r'''
@app.route("/admin/tools/ping", methods=["POST"])
def {f}():
    """Ping a host from the app server and return the output (admin diagnostics page)."""
    {v} = request.form.get("host", "").strip()
    if not {v}:
        return jsonify(error="host is required"), 400
    result = subprocess.run(
        f"ping -c 3 -W 2 {{{v}}}",  #!V
        shell=True,
        capture_output=True,
        text=True,
        timeout=15,
    )
    return jsonify(returncode=result.returncode, output=result.stdout + result.stderr)
''', r'''
@app.route("/admin/tools/ping", methods=["POST"])
def {f}():
    """Ping a host from the app server and return the output (admin diagnostics page)."""
    {v} = request.form.get("host", "").strip()
    try:
        ipaddress.ip_address({v})
    except ValueError:
        if not HOSTNAME_RE.match({v}):
            return jsonify(error="a valid hostname or IP address is required"), 400
    result = subprocess.run(
        ["ping", "-c", "3", "-W", "2", {v}],
        capture_output=True,
        text=True,
        timeout=15,
    )
    return jsonify(returncode=result.returncode, output=result.stdout + result.stderr)
'''),
    _t(78, "af", r'''
import os
import re
import subprocess
import uuid

from django.conf import settings
from django.http import HttpResponseBadRequest, JsonResponse
from django.views.decorators.http import require_POST

SIZE_RE = re.compile(r"^\d{{1,4}}x\d{{1,4}}$")
''', r'''
@require_POST
def {f}(request):
    """Resize an uploaded image with ImageMagick and return the thumbnail URL."""
    upload = request.FILES.get("image")
    if upload is None:
        return HttpResponseBadRequest("no image uploaded")
    {v} = request.POST.get("size", "256x256")
    src = os.path.join(settings.MEDIA_ROOT, "incoming", f"{{uuid.uuid4().hex}}.png")
    dst = os.path.join(settings.MEDIA_ROOT, "thumbs", os.path.basename(src))
    with open(src, "wb") as fh:
        for chunk in upload.chunks():
            fh.write(chunk)
    exit_code = os.system(f"convert {{src}} -resize {{{v}}} {{dst}}")  #!V
    if exit_code != 0:
        return JsonResponse({{"error": "conversion failed"}}, status=500)
    return JsonResponse({{"thumbnail": settings.MEDIA_URL + "thumbs/" + os.path.basename(dst)}})
''', r'''
@require_POST
def {f}(request):
    """Resize an uploaded image with ImageMagick and return the thumbnail URL."""
    upload = request.FILES.get("image")
    if upload is None:
        return HttpResponseBadRequest("no image uploaded")
    {v} = request.POST.get("size", "256x256")
    if not SIZE_RE.match({v}):
        return HttpResponseBadRequest("size must look like 256x256")
    src = os.path.join(settings.MEDIA_ROOT, "incoming", f"{{uuid.uuid4().hex}}.png")
    dst = os.path.join(settings.MEDIA_ROOT, "thumbs", os.path.basename(src))
    with open(src, "wb") as fh:
        for chunk in upload.chunks():
            fh.write(chunk)
    completed = subprocess.run(["convert", src, "-resize", {v}, dst], capture_output=True)
    if completed.returncode != 0:
        return JsonResponse({{"error": "conversion failed"}}, status=500)
    return JsonResponse({{"thumbnail": settings.MEDIA_URL + "thumbs/" + os.path.basename(dst)}})
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "ae", r'''
import sqlite3

from flask import Flask, request
from markupsafe import escape

app = Flask(__name__)
DB_PATH = "catalog.db"
''', r'''
@app.route("/search")
def {f}():
    """Render a small HTML page listing products whose title matches the search term."""
    {v} = request.args.get("q", "")
    conn = sqlite3.connect(DB_PATH)
    try:
        rows = conn.execute(
            "SELECT title, price FROM products WHERE title LIKE ? LIMIT 20", (f"%{{{v}}}%",)
        ).fetchall()
    finally:
        conn.close()
    items_html = "".join(f"<li>{{escape(title)}} - ${{price:.2f}}</li>" for title, price in rows)
    return f"<h1>Results for {{{v}}}</h1><ul>{{items_html}}</ul>"  #!V
''', r'''
@app.route("/search")
def {f}():
    """Render a small HTML page listing products whose title matches the search term."""
    {v} = request.args.get("q", "")
    conn = sqlite3.connect(DB_PATH)
    try:
        rows = conn.execute(
            "SELECT title, price FROM products WHERE title LIKE ? LIMIT 20", (f"%{{{v}}}%",)
        ).fetchall()
    finally:
        conn.close()
    items_html = "".join(f"<li>{{escape(title)}} - ${{price:.2f}}</li>" for title, price in rows)
    return f"<h1>Results for {{escape({v})}}</h1><ul>{{items_html}}</ul>"
'''),
    _t(79, "af", r'''
from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()
''', r'''
@register.filter(name="github_link")
def {f}({v}):
    """Template filter: turn the GitHub handle from a user's profile into a link with avatar."""
    gh_user = ({v} or "").strip().lstrip("@")
    if not gh_user:
        return ""
    html = (
        f'<a class="gh" href="https://github.com/{{gh_user}}" rel="nofollow">'
        f'<img src="https://github.com/{{gh_user}}.png?size=32" alt=""> @{{gh_user}}</a>'
    )
    return mark_safe(html)  #!V
''', r'''
@register.filter(name="github_link")
def {f}({v}):
    """Template filter: turn the GitHub handle from a user's profile into a link with avatar."""
    gh_user = ({v} or "").strip().lstrip("@")
    if not gh_user:
        return ""
    return format_html(
        '<a class="gh" href="https://github.com/{{0}}" rel="nofollow">'
        '<img src="https://github.com/{{0}}.png?size=32" alt=""> @{{0}}</a>',
        gh_user,
    )
'''),
    # ---- CWE-89 SQL injection
    _t(89, "ae", r'''
import sqlite3

from flask import Flask, g, jsonify, request

app = Flask(__name__)
DATABASE = "app.db"


def get_db():
    if "db" not in g:
        g.db = sqlite3.connect(DATABASE)
        g.db.row_factory = sqlite3.Row
    return g.db
''', r'''
@app.route("/api/{t}/lookup")
def {f}():
    """Look up an account by e-mail address for the support dashboard."""
    {v} = request.args.get("email", "").strip().lower()
    if not {v}:
        return jsonify(error="email is required"), 400
    cur = get_db().execute(
        f"SELECT id, email, display_name, created_at FROM {t} WHERE email = '{{{v}}}'"  #!V
    )
    row = cur.fetchone()
    if row is None:
        return jsonify(error="not found"), 404
    return jsonify(dict(row))
''', r'''
@app.route("/api/{t}/lookup")
def {f}():
    """Look up an account by e-mail address for the support dashboard."""
    {v} = request.args.get("email", "").strip().lower()
    if not {v}:
        return jsonify(error="email is required"), 400
    cur = get_db().execute(
        "SELECT id, email, display_name, created_at FROM {t} WHERE email = ?", ({v},)
    )
    row = cur.fetchone()
    if row is None:
        return jsonify(error="not found"), 404
    return jsonify(dict(row))
'''),
    _t(89, "af", r'''
import sqlalchemy as sa
from fastapi import Depends, FastAPI, HTTPException
from sqlalchemy.orm import Session

from app.db import get_session

app = FastAPI()
SORT_COLUMNS = {{"newest": "created_at", "total": "total", "status": "status"}}
''', r'''
@app.get("/customers/{{customer_id}}/orders")
def {f}(
    customer_id: int,
    {v}: str = "created_at",
    db: Session = Depends(get_session),
):
    """List a customer's orders, sorted by the column the client asks for."""
    stmt = sa.text(
        "SELECT id, status, total, created_at FROM orders "
        f"WHERE customer_id = :cid ORDER BY {{{v}}} DESC LIMIT 100"  #!V
    )
    rows = db.execute(stmt, {{"cid": customer_id}}).mappings().all()
    return [dict(r) for r in rows]
''', r'''
@app.get("/customers/{{customer_id}}/orders")
def {f}(
    customer_id: int,
    {v}: str = "newest",
    db: Session = Depends(get_session),
):
    """List a customer's orders, sorted by the column the client asks for."""
    order_col = SORT_COLUMNS.get({v})
    if order_col is None:
        raise HTTPException(status_code=400, detail=f"sort must be one of {{sorted(SORT_COLUMNS)}}")
    stmt = sa.text(
        "SELECT id, status, total, created_at FROM orders "
        f"WHERE customer_id = :cid ORDER BY {{order_col}} DESC LIMIT 100"
    )
    rows = db.execute(stmt, {{"cid": customer_id}}).mappings().all()
    return [dict(r) for r in rows]
'''),
    # ---- CWE-94 code injection
    _t(94, "ae", r'''
from flask import Flask, render_template_string, request

app = Flask(__name__)
''', r'''
@app.route("/welcome")
def {f}():
    """Personalised landing page for the links sent in onboarding e-mails."""
    {v} = request.args.get("name", "there")
    page = f"""
    <!doctype html>
    <title>Welcome</title>
    <h1>Welcome, {{{v}}}!</h1>
    <p>Your workspace is ready. <a href="/dashboard">Open the dashboard</a></p>
    """
    return render_template_string(page)  #!V
''', r'''
@app.route("/welcome")
def {f}():
    """Personalised landing page for the links sent in onboarding e-mails."""
    {v} = request.args.get("name", "there")
    page = """
    <!doctype html>
    <title>Welcome</title>
    <h1>Welcome, {{{{ visitor }}}}!</h1>
    <p>Your workspace is ready. <a href="/dashboard">Open the dashboard</a></p>
    """
    return render_template_string(page, visitor={v})
'''),
    _t(94, "af", r'''
import ast
import operator

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()


class FormulaIn(BaseModel):
    expression: str
    variables: dict[str, float] = {{}}


_OPS = {{
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
}}
''', r'''
@app.post("/pricing/preview")
def {f}({v}: FormulaIn):
    """Evaluate a merchant-defined pricing formula such as 'base * 1.2 + shipping'."""
    try:
        result = eval({v}.expression, {{"__builtins__": {{}}}}, dict({v}.variables))  #!V
    except Exception as exc:
        raise HTTPException(status_code=400, detail=f"invalid formula: {{exc}}")
    if not isinstance(result, (int, float)):
        raise HTTPException(status_code=400, detail="formula must produce a number")
    return {{"result": round(float(result), 2)}}
''', r'''
def _eval_formula(node, env):
    if isinstance(node, ast.Expression):
        return _eval_formula(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_formula(node.left, env), _eval_formula(node.right, env))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_formula(node.operand, env))
    raise ValueError("unsupported element in formula")


@app.post("/pricing/preview")
def {f}({v}: FormulaIn):
    """Evaluate a merchant-defined pricing formula such as 'base * 1.2 + shipping'."""
    try:
        tree = ast.parse({v}.expression, mode="eval")
        result = _eval_formula(tree, dict({v}.variables))
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        raise HTTPException(status_code=400, detail=f"invalid formula: {{exc}}")
    return {{"result": round(float(result), 2)}}
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "ae", r'''
import base64
import os
import pickle

from flask import Flask, jsonify, request
from itsdangerous import BadSignature, URLSafeSerializer

app = Flask(__name__)
app.secret_key = os.environ["FLASK_SECRET_KEY"]
''', r'''
@app.route("/cart")
def {f}():
    """Return the shopping cart that is kept client-side in the 'cart' cookie."""
    {v} = request.cookies.get("cart")
    if not {v}:
        return jsonify(lines=[], count=0)
    try:
        cart = pickle.loads(base64.urlsafe_b64decode({v}))  #!V
    except Exception:
        return jsonify(error="corrupt cart cookie"), 400
    lines = cart.get("lines", [])
    return jsonify(lines=lines, count=sum(int(line["qty"]) for line in lines))
''', r'''
@app.route("/cart")
def {f}():
    """Return the shopping cart that is kept client-side in the 'cart' cookie."""
    {v} = request.cookies.get("cart")
    if not {v}:
        return jsonify(lines=[], count=0)
    serializer = URLSafeSerializer(app.secret_key, salt="cart")
    try:
        cart = serializer.loads({v})
    except BadSignature:
        return jsonify(error="corrupt cart cookie"), 400
    lines = cart.get("lines", []) if isinstance(cart, dict) else []
    return jsonify(lines=lines, count=sum(int(line["qty"]) for line in lines))
'''),
    _t(502, "af", r'''
import yaml
from django.http import JsonResponse
from django.views.decorators.http import require_POST

from ci.models import Pipeline
''', r'''
@require_POST
def {f}(request):
    """Import a CI pipeline definition uploaded as a YAML file."""
    upload = request.FILES.get("pipeline")
    if upload is None:
        return JsonResponse({{"error": "no file uploaded"}}, status=400)
    {v} = upload.read().decode("utf-8")
    try:
        spec = yaml.load({v}, Loader=yaml.Loader)  #!V
    except yaml.YAMLError as exc:
        return JsonResponse({{"error": f"invalid YAML: {{exc}}"}}, status=400)
    if not isinstance(spec, dict) or "steps" not in spec:
        return JsonResponse({{"error": "pipeline must define 'steps'"}}, status=422)
    pipeline = Pipeline.objects.create(owner=request.user, title=spec.get("name", "untitled"), spec=spec)
    return JsonResponse({{"id": pipeline.pk, "steps": len(spec["steps"])}}, status=201)
''', r'''
@require_POST
def {f}(request):
    """Import a CI pipeline definition uploaded as a YAML file."""
    upload = request.FILES.get("pipeline")
    if upload is None:
        return JsonResponse({{"error": "no file uploaded"}}, status=400)
    {v} = upload.read().decode("utf-8")
    try:
        spec = yaml.safe_load({v})
    except yaml.YAMLError as exc:
        return JsonResponse({{"error": f"invalid YAML: {{exc}}"}}, status=400)
    if not isinstance(spec, dict) or "steps" not in spec:
        return JsonResponse({{"error": "pipeline must define 'steps'"}}, status=422)
    pipeline = Pipeline.objects.create(owner=request.user, title=spec.get("name", "untitled"), spec=spec)
    return JsonResponse({{"id": pipeline.pk, "steps": len(spec["steps"])}}, status=201)
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "ae", r'''
import base64
import os

from Crypto.Cipher import AES
from Crypto.Util.Padding import pad

TOKEN_ENC_KEY = bytes.fromhex(os.environ["TOKEN_ENC_KEY"])  # 32 bytes, hex-encoded
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a third-party OAuth refresh token before it is written to the database.

    Returns base64 text suitable for the ``integrations.refresh_token_enc`` column.
    """
    if not {v}:
        raise ValueError("empty token")
    cipher = AES.new(TOKEN_ENC_KEY, AES.MODE_ECB)  #!V
    ciphertext = cipher.encrypt(pad({v}.encode("utf-8"), AES.block_size))
    return base64.b64encode(ciphertext).decode("ascii")
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a third-party OAuth refresh token before it is written to the database.

    Returns base64 text suitable for the ``integrations.refresh_token_enc`` column.
    """
    if not {v}:
        raise ValueError("empty token")
    cipher = AES.new(TOKEN_ENC_KEY, AES.MODE_GCM)
    ciphertext, tag = cipher.encrypt_and_digest({v}.encode("utf-8"))
    return base64.b64encode(cipher.nonce + tag + ciphertext).decode("ascii")
'''),
    _t(327, "af", r'''
import base64
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

PII_KEY = base64.b64decode(os.environ["PII_ENCRYPTION_KEY"])  # 32 random bytes
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a customer's e-mail address for storage.

    The output is deterministic so that login can still look customers up with
    ``WHERE email_enc = %s`` without decrypting the whole table.
    """
    normalised = {v}.strip().lower().encode("utf-8")
    padder = padding.PKCS7(128).padder()
    padded = padder.update(normalised) + padder.finalize()
    encryptor = Cipher(algorithms.AES(PII_KEY), modes.ECB()).encryptor()  #!V
    token = encryptor.update(padded) + encryptor.finalize()
    return base64.urlsafe_b64encode(token).decode("ascii")
''', r'''
def {f}({v}: str) -> str:
    """Encrypt a customer's e-mail address for storage.

    The output is deterministic so that login can still look customers up with
    ``WHERE email_enc = %s`` without decrypting the whole table.
    """
    normalised = {v}.strip().lower().encode("utf-8")
    # AES-SIV: deterministic authenticated encryption, bound to this column
    token = AESSIV(PII_KEY).encrypt(normalised, [b"customers.email"])
    return base64.urlsafe_b64encode(token).decode("ascii")
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "ae", r'''
import hashlib

from flask import Flask, jsonify, request
from werkzeug.security import generate_password_hash

from myapp.models import User, db

app = Flask(__name__)
''', r'''
@app.route("/api/register", methods=["POST"])
def {f}():
    """Create a user account from the sign-up form."""
    body = request.get_json(force=True)
    email = body.get("email", "").strip().lower()
    {v} = body.get("password", "")
    if not email or len({v}) < 8:
        return jsonify(error="email and a password of at least 8 characters are required"), 400
    if User.query.filter_by(email=email).first():
        return jsonify(error="email already registered"), 409
    user = User(email=email, password_hash=hashlib.md5({v}.encode()).hexdigest())  #!V
    db.session.add(user)
    db.session.commit()
    return jsonify(id=user.id, email=user.email), 201
''', r'''
@app.route("/api/register", methods=["POST"])
def {f}():
    """Create a user account from the sign-up form."""
    body = request.get_json(force=True)
    email = body.get("email", "").strip().lower()
    {v} = body.get("password", "")
    if not email or len({v}) < 8:
        return jsonify(error="email and a password of at least 8 characters are required"), 400
    if User.query.filter_by(email=email).first():
        return jsonify(error="email already registered"), 409
    user = User(email=email, password_hash=generate_password_hash({v}))
    db.session.add(user)
    db.session.commit()
    return jsonify(id=user.id, email=user.email), 201
'''),
    _t(328, "af", r'''
import hashlib
import hmac
import json
import os

from fastapi import FastAPI, Header, HTTPException, Request

from billing.tasks import enqueue_billing_event

app = FastAPI()
WEBHOOK_SECRET = os.environ["BILLING_WEBHOOK_SECRET"].encode()
''', r'''
@app.post("/webhooks/billing")
async def {f}(request: Request, x_signature: str = Header(...)):
    """Receive billing events; the sender signs each body with our shared secret."""
    {v} = await request.body()
    expected = hashlib.md5(WEBHOOK_SECRET + {v}).hexdigest()  #!V
    if expected != x_signature:
        raise HTTPException(status_code=401, detail="bad signature")
    event = json.loads({v})
    await enqueue_billing_event(event)
    return {{"ok": True}}
''', r'''
@app.post("/webhooks/billing")
async def {f}(request: Request, x_signature: str = Header(...)):
    """Receive billing events; the sender signs each body with our shared secret."""
    {v} = await request.body()
    expected = hmac.new(WEBHOOK_SECRET, {v}, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, x_signature):
        raise HTTPException(status_code=401, detail="bad signature")
    event = json.loads({v})
    await enqueue_billing_event(event)
    return {{"ok": True}}
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "ae", r'''
import random
import secrets
import string
from datetime import datetime, timedelta, timezone

from django.contrib.auth import get_user_model
from django.core.mail import send_mail

from accounts.models import PasswordResetToken

RESET_TOKEN_ALPHABET = string.ascii_letters + string.digits
''', r'''
def {f}({v}: str) -> None:
    """Start the password-reset flow for the account registered under this e-mail."""
    user = get_user_model().objects.filter(email__iexact={v}).first()
    if user is None:
        return  # do not reveal whether the address is registered
    token = "".join(random.choices(RESET_TOKEN_ALPHABET, k=40))  #!V
    PasswordResetToken.objects.create(
        user=user, token=token, expires_at=datetime.now(timezone.utc) + timedelta(hours=1)
    )
    send_mail(
        "Reset your password",
        f"Use this link to choose a new password: https://app.example.com/reset/{{token}}",
        "no-reply@example.com",
        [user.email],
    )
''', r'''
def {f}({v}: str) -> None:
    """Start the password-reset flow for the account registered under this e-mail."""
    user = get_user_model().objects.filter(email__iexact={v}).first()
    if user is None:
        return  # do not reveal whether the address is registered
    token = secrets.token_urlsafe(32)
    PasswordResetToken.objects.create(
        user=user, token=token, expires_at=datetime.now(timezone.utc) + timedelta(hours=1)
    )
    send_mail(
        "Reset your password",
        f"Use this link to choose a new password: https://app.example.com/reset/{{token}}",
        "no-reply@example.com",
        [user.email],
    )
'''),
    _t(338, "af", r'''
import random
import secrets

from myapp.cache import redis_client
from myapp.sms import send_sms

OTP_TTL_SECONDS = 300
''', r'''
def {f}(user_id: int, {v}: str) -> None:
    """Text a 6-digit login code to the phone number on file for a pending 2FA login."""
    attempts_key = f"otp-sent:{{user_id}}"
    if redis_client.incr(attempts_key) > 5:
        raise RuntimeError("too many codes requested, try again later")
    redis_client.expire(attempts_key, 3600)
    code = f"{{random.randint(0, 999999):06d}}"  #!V
    redis_client.setex(f"otp:{{user_id}}", OTP_TTL_SECONDS, code)
    send_sms({v}, f"Your login code is {{code}}. It expires in 5 minutes.")
''', r'''
def {f}(user_id: int, {v}: str) -> None:
    """Text a 6-digit login code to the phone number on file for a pending 2FA login."""
    attempts_key = f"otp-sent:{{user_id}}"
    if redis_client.incr(attempts_key) > 5:
        raise RuntimeError("too many codes requested, try again later")
    redis_client.expire(attempts_key, 3600)
    code = f"{{secrets.randbelow(1_000_000):06d}}"
    redis_client.setex(f"otp:{{user_id}}", OTP_TTL_SECONDS, code)
    send_sms({v}, f"Your login code is {{code}}. It expires in 5 minutes.")
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ae", r'''
import os

from twilio.rest import Client
''', r'''
def {f}(phone_number: str, {v}: str) -> str:
    """Send an order-status SMS to a customer and return the Twilio message SID."""
    account_sid = "AC7e1f9a3b5c2d4e6f8a0b1c3d5e7f9a2b"
    auth_token = "9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c"  #!V
    client = Client(account_sid, auth_token)
    message = client.messages.create(
        body={v}[:1600],
        from_="+14155550123",
        to=phone_number,
    )
    return message.sid
''', r'''
def {f}(phone_number: str, {v}: str) -> str:
    """Send an order-status SMS to a customer and return the Twilio message SID."""
    account_sid = os.environ["TWILIO_ACCOUNT_SID"]
    auth_token = os.environ["TWILIO_AUTH_TOKEN"]
    client = Client(account_sid, auth_token)
    message = client.messages.create(
        body={v}[:1600],
        from_=os.environ["TWILIO_FROM_NUMBER"],
        to=phone_number,
    )
    return message.sid
'''),
    _t(798, "af", r'''
import os
import uuid

import boto3
from flask import Flask, jsonify, request
from werkzeug.utils import secure_filename

app = Flask(__name__)
AVATAR_BUCKET = "acme-user-avatars"
''', r'''
@app.route("/api/avatar", methods=["POST"])
def {f}():
    """Upload the user's new avatar to S3 and return its public URL."""
    {v} = request.files.get("avatar")
    if {v} is None or not {v}.filename:
        return jsonify(error="no file"), 400
    s3 = boto3.client(
        "s3",
        region_name="eu-west-1",
        aws_access_key_id="AKIA4QX7Z2LMNB3TR5WD",  #!V
        aws_secret_access_key="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",  #!V
    )
    object_key = f"avatars/{{uuid.uuid4().hex}}-{{secure_filename({v}.filename)}}"
    s3.upload_fileobj({v}, AVATAR_BUCKET, object_key, ExtraArgs={{"ContentType": {v}.mimetype}})
    return jsonify(url=f"https://{{AVATAR_BUCKET}}.s3.eu-west-1.amazonaws.com/{{object_key}}"), 201
''', r'''
@app.route("/api/avatar", methods=["POST"])
def {f}():
    """Upload the user's new avatar to S3 and return its public URL."""
    {v} = request.files.get("avatar")
    if {v} is None or not {v}.filename:
        return jsonify(error="no file"), 400
    # credentials come from the environment / instance role via boto3's default chain
    s3 = boto3.client("s3", region_name=os.environ.get("AWS_REGION", "eu-west-1"))
    object_key = f"avatars/{{uuid.uuid4().hex}}-{{secure_filename({v}.filename)}}"
    s3.upload_fileobj({v}, AVATAR_BUCKET, object_key, ExtraArgs={{"ContentType": {v}.mimetype}})
    return jsonify(url=f"https://{{AVATAR_BUCKET}}.s3.eu-west-1.amazonaws.com/{{object_key}}"), 201
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "ae", r'''
from flask import Flask, jsonify, request
from lxml import etree

app = Flask(__name__)
''', r'''
@app.route("/api/feeds/products", methods=["POST"])
def {f}():
    """Import a supplier's product feed that is POSTed as an XML document."""
    {v} = request.get_data()
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True)  #!V
    try:
        root = etree.fromstring({v}, parser)
    except etree.XMLSyntaxError as exc:
        return jsonify(error=f"malformed XML: {{exc}}"), 400
    products = [
        {{
            "sku": p.findtext("sku"),
            "title": p.findtext("title"),
            "price": float(p.findtext("price") or 0),
        }}
        for p in root.iterfind(".//product")
    ]
    return jsonify(imported=len(products), products=products)
''', r'''
@app.route("/api/feeds/products", methods=["POST"])
def {f}():
    """Import a supplier's product feed that is POSTed as an XML document."""
    {v} = request.get_data()
    parser = etree.XMLParser(load_dtd=False, resolve_entities=False, no_network=True)
    try:
        root = etree.fromstring({v}, parser)
    except etree.XMLSyntaxError as exc:
        return jsonify(error=f"malformed XML: {{exc}}"), 400
    products = [
        {{
            "sku": p.findtext("sku"),
            "title": p.findtext("title"),
            "price": float(p.findtext("price") or 0),
        }}
        for p in root.iterfind(".//product")
    ]
    return jsonify(imported=len(products), products=products)
'''),
    _t(611, "af", r'''
import xml.sax
from xml.sax.handler import feature_external_ges, feature_namespaces

import defusedxml.sax
from django.http import HttpResponseBadRequest, JsonResponse
from django.views.decorators.http import require_POST

from inventory.models import StockLevel


class StockHandler(xml.sax.ContentHandler):
    """Collects sku -> quantity pairs from <item><sku/><qty/></item> records."""

    def __init__(self):
        super().__init__()
        self.levels = {{}}
        self._current = {{}}
        self._field = None

    def startElement(self, tag, attrs):
        if tag == "item":
            self._current = {{}}
        self._field = tag

    def characters(self, content):
        if self._field in ("sku", "qty"):
            self._current[self._field] = self._current.get(self._field, "") + content

    def endElement(self, tag):
        if tag == "item" and "sku" in self._current:
            qty = self._current.get("qty", "0").strip() or "0"
            self.levels[self._current["sku"].strip()] = int(qty)
        self._field = None
''', r'''
@require_POST
def {f}(request):
    """Apply a warehouse stock-level export (a large XML file) to the inventory."""
    {v} = request.FILES.get("export")
    if {v} is None:
        return HttpResponseBadRequest("missing export file")
    stock_handler = StockHandler()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_namespaces, False)
    # the warehouse system declares its entities in an external DTD
    parser.setFeature(feature_external_ges, True)  #!V
    parser.setContentHandler(stock_handler)
    try:
        parser.parse({v})
    except xml.sax.SAXParseException as exc:
        return HttpResponseBadRequest(f"invalid XML: {{exc}}")
    for sku, qty in stock_handler.levels.items():
        StockLevel.objects.filter(sku=sku).update(quantity=qty)
    return JsonResponse({{"updated": len(stock_handler.levels)}})
''', r'''
@require_POST
def {f}(request):
    """Apply a warehouse stock-level export (a large XML file) to the inventory."""
    {v} = request.FILES.get("export")
    if {v} is None:
        return HttpResponseBadRequest("missing export file")
    stock_handler = StockHandler()
    parser = defusedxml.sax.make_parser()
    parser.setFeature(feature_namespaces, False)
    parser.setContentHandler(stock_handler)
    try:
        parser.parse({v})
    except (xml.sax.SAXParseException, defusedxml.DefusedXmlException) as exc:
        return HttpResponseBadRequest(f"invalid XML: {{exc}}")
    for sku, qty in stock_handler.levels.items():
        StockLevel.objects.filter(sku=sku).update(quantity=qty)
    return JsonResponse({{"updated": len(stock_handler.levels)}})
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "ae", r'''
import ipaddress
import socket
from urllib.parse import urlparse

import requests
from bs4 import BeautifulSoup
from flask import Flask, jsonify, request

app = Flask(__name__)
''', r'''
@app.route("/api/link-preview", methods=["POST"])
def {f}():
    """Fetch a URL pasted into the chat box and return its title and description."""
    {v} = (request.get_json(silent=True) or {{}}).get("url", "")
    if not {v}.startswith(("http://", "https://")):
        return jsonify(error="url must be http(s)"), 400
    try:
        resp = requests.get({v}, timeout=5, headers={{"User-Agent": "LinkPreviewBot/1.0"}})  #!V
        resp.raise_for_status()
    except requests.RequestException as exc:
        return jsonify(error=str(exc)), 502
    soup = BeautifulSoup(resp.text[:500_000], "html.parser")
    desc = soup.find("meta", attrs={{"name": "description"}})
    return jsonify(
        url={v},
        title=soup.title.string.strip() if soup.title and soup.title.string else None,
        description=desc.get("content") if desc else None,
    )
''', r'''
def _is_public_http_url(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return False
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parsed.hostname, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(info[4][0].split("%")[0]).is_global for info in infos)


@app.route("/api/link-preview", methods=["POST"])
def {f}():
    """Fetch a URL pasted into the chat box and return its title and description."""
    {v} = (request.get_json(silent=True) or {{}}).get("url", "")
    if not _is_public_http_url({v}):
        return jsonify(error="url must be a public http(s) address"), 400
    try:
        resp = requests.get({v}, timeout=5, allow_redirects=False, headers={{"User-Agent": "LinkPreviewBot/1.0"}})
        resp.raise_for_status()
    except requests.RequestException as exc:
        return jsonify(error=str(exc)), 502
    soup = BeautifulSoup(resp.text[:500_000], "html.parser")
    desc = soup.find("meta", attrs={{"name": "description"}})
    return jsonify(
        url={v},
        title=soup.title.string.strip() if soup.title and soup.title.string else None,
        description=desc.get("content") if desc else None,
    )
'''),
    _t(918, "af", r'''
import urllib.request
from urllib.parse import urlparse

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import Response

app = FastAPI()
ALLOWED_IMAGE_HOSTS = {{"images.unsplash.com", "cdn.shopify.com", "i.imgur.com"}}
MAX_IMAGE_BYTES = 5 * 1024 * 1024
''', r'''
@app.get("/image-proxy")
def {f}({v}: str = Query(..., alias="src")):
    """Serve remote product images from our own origin (avoids mixed-content warnings)."""
    parsed = urlparse({v})
    if parsed.scheme not in ("http", "https"):
        raise HTTPException(status_code=400, detail="unsupported URL scheme")
    try:
        with urllib.request.urlopen({v}, timeout=10) as upstream:  #!V
            content_type = upstream.headers.get_content_type()
            body = upstream.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise HTTPException(status_code=502, detail=f"upstream error: {{exc}}")
    if len(body) > MAX_IMAGE_BYTES or not content_type.startswith("image/"):
        raise HTTPException(status_code=415, detail="not an acceptable image")
    return Response(content=body, media_type=content_type, headers={{"Cache-Control": "public, max-age=86400"}})
''', r'''
@app.get("/image-proxy")
def {f}({v}: str = Query(..., alias="src")):
    """Serve remote product images from our own origin (avoids mixed-content warnings)."""
    parsed = urlparse({v})
    if parsed.scheme != "https" or parsed.hostname not in ALLOWED_IMAGE_HOSTS:
        raise HTTPException(status_code=400, detail="image host is not allowed")
    try:
        with urllib.request.urlopen({v}, timeout=10) as upstream:
            content_type = upstream.headers.get_content_type()
            body = upstream.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise HTTPException(status_code=502, detail=f"upstream error: {{exc}}")
    if len(body) > MAX_IMAGE_BYTES or not content_type.startswith("image/"):
        raise HTTPException(status_code=415, detail="not an acceptable image")
    return Response(content=body, media_type=content_type, headers={{"Cache-Control": "public, max-age=86400"}})
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "ae", r'''
import csv
import os
import tempfile

from flask import Flask, after_this_request, request, send_file

from myapp.models import Order

app = Flask(__name__)
''', r'''
@app.route("/admin/export/orders.csv")
def {f}():
    """Export the orders created since a given date as a CSV download."""
    {v} = request.args.get("since", "1970-01-01")
    rows = Order.query.filter(Order.created_at >= {v}).order_by(Order.created_at).all()
    path = tempfile.mktemp(suffix=".csv", prefix="orders-")  #!V
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "customer_email", "total", "created_at"])
        for order in rows:
            writer.writerow([order.id, order.customer_email, order.total, order.created_at.isoformat()])

    @after_this_request
    def _cleanup(response):
        os.remove(path)
        return response

    return send_file(path, mimetype="text/csv", as_attachment=True, download_name="orders.csv")
''', r'''
@app.route("/admin/export/orders.csv")
def {f}():
    """Export the orders created since a given date as a CSV download."""
    {v} = request.args.get("since", "1970-01-01")
    rows = Order.query.filter(Order.created_at >= {v}).order_by(Order.created_at).all()
    fd, path = tempfile.mkstemp(suffix=".csv", prefix="orders-")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "customer_email", "total", "created_at"])
        for order in rows:
            writer.writerow([order.id, order.customer_email, order.total, order.created_at.isoformat()])

    @after_this_request
    def _cleanup(response):
        os.remove(path)
        return response

    return send_file(path, mimetype="text/csv", as_attachment=True, download_name="orders.csv")
'''),
    _t(377, "af", r'''
import os
import tempfile

from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest, JsonResponse
from PIL import Image

from profiles.storage import store_avatar
''', r'''
@login_required
def {f}(request):
    """Normalise an uploaded avatar to a 256x256 PNG and hand it to avatar storage."""
    {v} = request.FILES.get("avatar")
    if {v} is None:
        return HttpResponseBadRequest("no avatar uploaded")
    tmp_path = f"/tmp/avatar_{{request.user.pk}}.png"  #!V
    with Image.open({v}) as img:
        img = img.convert("RGB")
        img.thumbnail((256, 256))
        img.save(tmp_path, format="PNG")
    try:
        url = store_avatar(request.user, tmp_path)
    finally:
        os.remove(tmp_path)
    return JsonResponse({{"avatar_url": url}})
''', r'''
@login_required
def {f}(request):
    """Normalise an uploaded avatar to a 256x256 PNG and hand it to avatar storage."""
    {v} = request.FILES.get("avatar")
    if {v} is None:
        return HttpResponseBadRequest("no avatar uploaded")
    with tempfile.NamedTemporaryFile(suffix=".png", prefix="avatar_") as tmp:
        with Image.open({v}) as img:
            img = img.convert("RGB")
            img.thumbnail((256, 256))
            img.save(tmp, format="PNG")
        tmp.flush()
        url = store_avatar(request.user, tmp.name)
    return JsonResponse({{"avatar_url": url}})
'''),
]

FAMILIES_AE = sorted({t.cwe for t in TEMPLATES_AE})


def heldout_templates_ae() -> list[Template]:
    """The 26 variant-"ae"/"af" templates (final evaluation only).

    >>> len(heldout_templates_ae()), len(FAMILIES_AE), sorted({t.variant for t in heldout_templates_ae()})
    (26, 13, ['ae', 'af'])
    """
    return list(TEMPLATES_AE)
