'''Blind template variants "as" and "at": realistic code (e-commerce and SaaS product features), for evaluation only.

Status: the realistic-protocol blind test of the round-12 (current) system, evaluated once (2026-12-01 15:36 UTC).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("as", "at")

TEMPLATES_AS: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "as", '''
import os

from flask import Flask, abort, jsonify, request
from werkzeug.utils import secure_filename

app = Flask(__name__)
AVATAR_DIR = "/srv/app/media/avatars"
ALLOWED_EXTENSIONS = {{"png", "jpg", "jpeg", "webp"}}
''', '''
@app.post("/account/avatar")
def {f}():
    """Store the profile picture uploaded by the signed-in user."""
    {v} = request.files.get("avatar")
    if {v} is None or not {v}.filename:
        abort(400, "No file uploaded")
    ext = {v}.filename.rsplit(".", 1)[-1].lower()
    if ext not in ALLOWED_EXTENSIONS:
        abort(400, "Unsupported image type")
    dest = os.path.join(AVATAR_DIR, {v}.filename)  #!V
    {v}.save(dest)
    return jsonify(url=f"/media/avatars/{{os.path.basename(dest)}}")
''', '''
@app.post("/account/avatar")
def {f}():
    """Store the profile picture uploaded by the signed-in user."""
    {v} = request.files.get("avatar")
    if {v} is None or not {v}.filename:
        abort(400, "No file uploaded")
    safe_name = secure_filename({v}.filename)
    ext = safe_name.rsplit(".", 1)[-1].lower() if "." in safe_name else ""
    if ext not in ALLOWED_EXTENSIONS:
        abort(400, "Unsupported image type")
    dest = os.path.join(AVATAR_DIR, safe_name)
    {v}.save(dest)
    return jsonify(url=f"/media/avatars/{{safe_name}}")
'''),
    _t(22, "at", '''
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse

app = FastAPI()
EXPORT_DIR = Path("/var/lib/shop/exports").resolve()
''', '''
@app.get("/admin/{t}/exports/download")
def {f}({v}: str):
    """Download a CSV/XLSX export that the background worker generated earlier."""
    export_path = EXPORT_DIR / {v}  #!V
    if not export_path.is_file():
        raise HTTPException(status_code=404, detail="Export not found")
    return FileResponse(
        export_path,
        filename=export_path.name,
        media_type="application/octet-stream",
    )
''', '''
@app.get("/admin/{t}/exports/download")
def {f}({v}: str):
    """Download a CSV/XLSX export that the background worker generated earlier."""
    export_path = (EXPORT_DIR / {v}).resolve()
    if not export_path.is_relative_to(EXPORT_DIR) or not export_path.is_file():
        raise HTTPException(status_code=404, detail="Export not found")
    return FileResponse(
        export_path,
        filename=export_path.name,
        media_type="application/octet-stream",
    )
'''),
    # ---- CWE-78 OS command injection
    _t(78, "as", '''
import os
import subprocess
import uuid

WATERMARKED_DIR = "/srv/shop/media/watermarked"
''', '''
def {f}(image_path: str, {v}: str) -> str:
    """Stamp the merchant's store name onto a product photo and return the new file path."""
    out_path = os.path.join(WATERMARKED_DIR, f"{{uuid.uuid4().hex}}.jpg")
    cmd = (
        f"convert {{image_path}} -resize 1200x1200 -gravity SouthEast "
        f"-pointsize 28 -fill white -annotate +24+24 '{{{v}}}' {{out_path}}"
    )
    subprocess.run(cmd, shell=True, check=True, timeout=60)  #!V
    return out_path
''', '''
def {f}(image_path: str, {v}: str) -> str:
    """Stamp the merchant's store name onto a product photo and return the new file path."""
    out_path = os.path.join(WATERMARKED_DIR, f"{{uuid.uuid4().hex}}.jpg")
    cmd = [
        "convert", image_path, "-resize", "1200x1200", "-gravity", "SouthEast",
        "-pointsize", "28", "-fill", "white", "-annotate", "+24+24", {v}, out_path,
    ]
    subprocess.run(cmd, check=True, timeout=60)
    return out_path
'''),
    _t(78, "at", r'''
import os
import re
import subprocess

from django.http import JsonResponse
from django.views.decorators.http import require_POST

VERIFY_PREFIX = "shop-verification="
DOMAIN_RE = re.compile(r"^(?!-)[a-z0-9-]{{1,63}}(?:\.[a-z0-9-]{{1,63}})+$")
''', '''
@require_POST
def {f}(request):
    """Check that a tenant published our TXT record before enabling their custom domain."""
    {v} = request.POST.get("domain", "").strip().lower()
    token = request.user.tenant.verification_token
    output = os.popen(f"dig +short TXT {{{v}}}").read()  #!V
    verified = f'"{{VERIFY_PREFIX}}{{token}}"' in output.split()
    if verified:
        request.user.tenant.enable_custom_domain({v})
    return JsonResponse({{"domain": {v}, "verified": verified}})
''', '''
@require_POST
def {f}(request):
    """Check that a tenant published our TXT record before enabling their custom domain."""
    {v} = request.POST.get("domain", "").strip().lower()
    if not DOMAIN_RE.fullmatch({v}):
        return JsonResponse({{"error": "Enter a valid domain name"}}, status=400)
    token = request.user.tenant.verification_token
    result = subprocess.run(
        ["dig", "+short", "TXT", {v}], capture_output=True, encoding="utf-8", timeout=10
    )
    verified = f'"{{VERIFY_PREFIX}}{{token}}"' in result.stdout.split()
    if verified:
        request.user.tenant.enable_custom_domain({v})
    return JsonResponse({{"domain": {v}, "verified": verified}})
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "as", '''
from flask import Flask, render_template, request
from markupsafe import escape

from shop.catalog import search_products

app = Flask(__name__)
''', '''
@app.get("/{t}/search")
def {f}():
    """Storefront product search."""
    {v} = request.args.get("q", "").strip()
    matches = search_products({v}, limit=24)
    if not matches:
        return f"<p class='empty'>No products matched <strong>{{{v}}}</strong>. Try another search.</p>"  #!V
    return render_template("search.html", products=matches, search_term={v})
''', '''
@app.get("/{t}/search")
def {f}():
    """Storefront product search."""
    {v} = request.args.get("q", "").strip()
    matches = search_products({v}, limit=24)
    if not matches:
        return f"<p class='empty'>No products matched <strong>{{escape({v})}}</strong>. Try another search.</p>"
    return render_template("search.html", products=matches, search_term={v})
'''),
    _t(79, "at", '''
from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()
''', '''
@register.simple_tag
def {f}(order):
    """Show the buyer's gift message on the order detail page and the packing slip."""
    {v} = (order.gift_message or "").strip()
    if not {v}:
        return ""
    return mark_safe(  #!V
        f'<blockquote class="gift-message">{{{v}}}<footer>{{order.billing_first_name}}</footer></blockquote>'
    )
''', '''
@register.simple_tag
def {f}(order):
    """Show the buyer's gift message on the order detail page and the packing slip."""
    {v} = (order.gift_message or "").strip()
    if not {v}:
        return ""
    return format_html(
        '<blockquote class="gift-message">{{}}<footer>{{}}</footer></blockquote>',
        {v},
        order.billing_first_name,
    )
'''),
    # ---- CWE-89 SQL injection
    _t(89, "as", '''
import sqlite3

from flask import Flask, g, jsonify, request

app = Flask(__name__)
DB_PATH = "shop.db"


def get_db():
    if "db" not in g:
        g.db = sqlite3.connect(DB_PATH)
        g.db.row_factory = sqlite3.Row
    return g.db
''', '''
@app.get("/support/{t}/lookup")
def {f}():
    """Let support agents look up a customer's recent orders by e-mail address."""
    {v} = request.args.get("email", "").strip()
    rows = get_db().execute(
        "SELECT id, status, total_cents, created_at FROM orders "
        f"WHERE customer_email = '{{{v}}}' ORDER BY created_at DESC LIMIT 50"  #!V
    ).fetchall()
    return jsonify([dict(row) for row in rows])
''', '''
@app.get("/support/{t}/lookup")
def {f}():
    """Let support agents look up a customer's recent orders by e-mail address."""
    {v} = request.args.get("email", "").strip()
    rows = get_db().execute(
        "SELECT id, status, total_cents, created_at FROM orders "
        "WHERE customer_email = ? ORDER BY created_at DESC LIMIT 50",
        ({v},),
    ).fetchall()
    return jsonify([dict(row) for row in rows])
'''),
    _t(89, "at", '''
import sqlalchemy as sa
from fastapi import Depends, FastAPI
from sqlalchemy.orm import Session

from app.db import get_session

app = FastAPI()
''', '''
@app.get("/admin/dashboard/{t}/revenue")
def {f}({v}: str = "paid", days: int = 30, session: Session = Depends(get_session)):
    """Daily revenue for the admin dashboard chart, filtered by order status."""
    stmt = sa.text(
        "SELECT date(created_at) AS day, SUM(total_cents) AS revenue FROM orders "
        f"WHERE status = '{{{v}}}' AND created_at >= date('now', '-{{days}} days') "  #!V
        "GROUP BY day ORDER BY day"
    )
    rows = session.execute(stmt).mappings().all()
    return [dict(row) for row in rows]
''', '''
@app.get("/admin/dashboard/{t}/revenue")
def {f}({v}: str = "paid", days: int = 30, session: Session = Depends(get_session)):
    """Daily revenue for the admin dashboard chart, filtered by order status."""
    stmt = sa.text(
        "SELECT date(created_at) AS day, SUM(total_cents) AS revenue FROM orders "
        "WHERE status = :status AND created_at >= date('now', :since) "
        "GROUP BY day ORDER BY day"
    )
    params = {{"status": {v}, "since": f"-{{days}} days"}}
    rows = session.execute(stmt, params).mappings().all()
    return [dict(row) for row in rows]
'''),
    # ---- CWE-94 code injection
    _t(94, "as", '''
from jinja2 import Template
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

_template_env = SandboxedEnvironment(autoescape=True)
''', '''
def {f}({v}: str, order, customer) -> str:
    """Render the merchant's customised order-confirmation e-mail.

    ``{v}`` is the Jinja template the merchant edited on the Notifications settings page.
    """
    tmpl = Template({v}, autoescape=True)  #!V
    return tmpl.render(order=order, customer=customer, shop=order.shop)
''', '''
def {f}({v}: str, order, customer) -> str:
    """Render the merchant's customised order-confirmation e-mail.

    ``{v}`` is the Jinja template the merchant edited on the Notifications settings page.
    """
    tmpl = _template_env.from_string({v})
    try:
        return tmpl.render(order=order, customer=customer, shop=order.shop)
    except SecurityError as exc:
        raise ValueError("This template uses features that are not allowed") from exc
'''),
    _t(94, "at", '''
from decimal import Decimal

from simpleeval import simple_eval

FORMULA_FUNCTIONS = {{"min": min, "max": max, "round": round}}
''', '''
def {f}({v}: str, cart) -> Decimal:
    """Apply a merchant-defined shipping fee formula, e.g. ``"0 if subtotal >= 50 else 4.99"``."""
    context = {{
        "subtotal": float(cart.subtotal),
        "weight_kg": float(cart.total_weight_kg),
        "line_count": len(cart.lines),
        "country": cart.shipping_country,
    }}
    fee = eval({v}, {{"__builtins__": {{}}, **FORMULA_FUNCTIONS}}, context)  #!V
    return Decimal(str(round(float(fee), 2)))
''', '''
def {f}({v}: str, cart) -> Decimal:
    """Apply a merchant-defined shipping fee formula, e.g. ``"0 if subtotal >= 50 else 4.99"``."""
    context = {{
        "subtotal": float(cart.subtotal),
        "weight_kg": float(cart.total_weight_kg),
        "line_count": len(cart.lines),
        "country": cart.shipping_country,
    }}
    fee = simple_eval({v}, names=context, functions=FORMULA_FUNCTIONS)
    return Decimal(str(round(float(fee), 2)))
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "as", '''
import base64
import binascii
import json
import pickle

from flask import Flask, jsonify, request

app = Flask(__name__)
EMPTY_CART = {{"lines": [], "coupon": None}}
''', '''
@app.get("/cart")
def {f}():
    """Restore a guest shopper's cart from the ``cart`` cookie set by the storefront."""
    {v} = request.cookies.get("cart")
    cart = dict(EMPTY_CART)
    if {v}:
        cart = pickle.loads(base64.urlsafe_b64decode({v}))  #!V
    return jsonify(cart)
''', '''
@app.get("/cart")
def {f}():
    """Restore a guest shopper's cart from the ``cart`` cookie set by the storefront."""
    {v} = request.cookies.get("cart")
    cart = dict(EMPTY_CART)
    if {v}:
        try:
            cart = json.loads(base64.urlsafe_b64decode({v}))
        except (binascii.Error, ValueError):
            cart = dict(EMPTY_CART)
    return jsonify(cart)
'''),
    _t(502, "at", '''
import yaml
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.views.decorators.http import require_POST
''', '''
@login_required
@require_POST
def {f}(request):
    """Import workspace settings (branding, notification rules) from an exported YAML file."""
    {v} = request.FILES["settings_file"].read()
    imported = yaml.load({v}, Loader=yaml.Loader)  #!V
    if not isinstance(imported, dict):
        return JsonResponse({{"error": "Expected a mapping at the top level"}}, status=400)
    request.user.workspace.apply_settings(imported)
    return JsonResponse({{"imported": sorted(imported)}})
''', '''
@login_required
@require_POST
def {f}(request):
    """Import workspace settings (branding, notification rules) from an exported YAML file."""
    {v} = request.FILES["settings_file"].read()
    try:
        imported = yaml.safe_load({v})
    except yaml.YAMLError:
        return JsonResponse({{"error": "The file is not valid YAML"}}, status=400)
    if not isinstance(imported, dict):
        return JsonResponse({{"error": "Expected a mapping at the top level"}}, status=400)
    request.user.workspace.apply_settings(imported)
    return JsonResponse({{"imported": sorted(imported)}})
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "as", '''
import base64
import os

from Crypto.Cipher import AES
from Crypto.Util.Padding import pad, unpad

# 32-byte key provided by the secrets manager at deploy time
FIELD_KEY = bytes.fromhex(os.environ["FIELD_ENCRYPTION_KEY"])
''', '''
def {f}({v}: str) -> str:
    """Encrypt a merchant's third-party API token before it is stored in the integrations table."""
    cipher = AES.new(FIELD_KEY, AES.MODE_ECB)  #!V
    ciphertext = cipher.encrypt(pad({v}.encode("utf-8"), AES.block_size))
    return base64.b64encode(ciphertext).decode("ascii")


def decrypt_integration_token(stored: str) -> str:
    cipher = AES.new(FIELD_KEY, AES.MODE_ECB)  #!V
    return unpad(cipher.decrypt(base64.b64decode(stored)), AES.block_size).decode("utf-8")
''', '''
def {f}({v}: str) -> str:
    """Encrypt a merchant's third-party API token before it is stored in the integrations table."""
    cipher = AES.new(FIELD_KEY, AES.MODE_GCM)
    ciphertext, tag = cipher.encrypt_and_digest({v}.encode("utf-8"))
    return base64.b64encode(cipher.nonce + tag + ciphertext).decode("ascii")


def decrypt_integration_token(stored: str) -> str:
    packed = base64.b64decode(stored)
    nonce, tag, ciphertext = packed[:16], packed[16:32], packed[32:]
    cipher = AES.new(FIELD_KEY, AES.MODE_GCM, nonce=nonce)
    return cipher.decrypt_and_verify(ciphertext, tag).decode("utf-8")
'''),
    _t(327, "at", '''
import base64

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
''', '''
def {f}({v}: str, partner_public_pem: bytes) -> str:
    """Encrypt the webhook signing secret for a payment partner using their RSA public key."""
    public_key = serialization.load_pem_public_key(partner_public_pem)
    if not isinstance(public_key, rsa.RSAPublicKey):
        raise TypeError("Partner key must be an RSA public key")
    ciphertext = public_key.encrypt({v}.encode("utf-8"), padding.PKCS1v15())  #!V
    return base64.b64encode(ciphertext).decode("ascii")
''', '''
def {f}({v}: str, partner_public_pem: bytes) -> str:
    """Encrypt the webhook signing secret for a payment partner using their RSA public key."""
    public_key = serialization.load_pem_public_key(partner_public_pem)
    if not isinstance(public_key, rsa.RSAPublicKey):
        raise TypeError("Partner key must be an RSA public key")
    ciphertext = public_key.encrypt(
        {v}.encode("utf-8"),
        padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None),
    )
    return base64.b64encode(ciphertext).decode("ascii")
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "as", '''
import hashlib
import hmac
import os

PBKDF2_ITERATIONS = 600_000
''', '''
def {f}({v}: str) -> str:
    """Hash a user's password at sign-up for storage in ``users.password_hash``."""
    salt = os.urandom(16).hex()
    digest = hashlib.sha1((salt + {v}).encode("utf-8")).hexdigest()  #!V
    return f"{{salt}}${{digest}}"


def verify_password(candidate: str, stored: str) -> bool:
    salt, digest = stored.split("$", 1)
    expected = hashlib.sha1((salt + candidate).encode("utf-8")).hexdigest()  #!V
    return hmac.compare_digest(expected, digest)
''', '''
def {f}({v}: str) -> str:
    """Hash a user's password at sign-up for storage in ``users.password_hash``."""
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", {v}.encode("utf-8"), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${{PBKDF2_ITERATIONS}}${{salt.hex()}}${{digest.hex()}}"


def verify_password(candidate: str, stored: str) -> bool:
    _algo, iterations, salt_hex, digest_hex = stored.split("$", 3)
    expected = hashlib.pbkdf2_hmac(
        "sha256", candidate.encode("utf-8"), bytes.fromhex(salt_hex), int(iterations)
    )
    return hmac.compare_digest(expected.hex(), digest_hex)
'''),
    _t(328, "at", '''
import hashlib
import hmac
import os
import time

from flask import Flask, abort, request, send_file

app = Flask(__name__)
LINK_SECRET = os.environ["DOWNLOAD_LINK_SECRET"]
''', '''
def sign_download(order_id: int, expires: int) -> str:
    msg = f"{{LINK_SECRET}}:{{order_id}}:{{expires}}"
    return hashlib.md5(msg.encode("utf-8")).hexdigest()  #!V


@app.get("/downloads/<int:order_id>")
def {f}(order_id: int):
    """Serve a purchased digital product when the e-mailed link is valid and unexpired."""
    {v} = request.args.get("sig", "")
    expires = request.args.get("exp", default=0, type=int)
    if expires < time.time() or not hmac.compare_digest(sign_download(order_id, expires), {v}):
        abort(403)
    return send_file(f"/srv/shop/digital/{{order_id}}.zip", as_attachment=True)
''', '''
def sign_download(order_id: int, expires: int) -> str:
    msg = f"{{order_id}}:{{expires}}".encode("utf-8")
    return hmac.new(LINK_SECRET.encode("utf-8"), msg, hashlib.sha256).hexdigest()


@app.get("/downloads/<int:order_id>")
def {f}(order_id: int):
    """Serve a purchased digital product when the e-mailed link is valid and unexpired."""
    {v} = request.args.get("sig", "")
    expires = request.args.get("exp", default=0, type=int)
    if expires < time.time() or not hmac.compare_digest(sign_download(order_id, expires), {v}):
        abort(403)
    return send_file(f"/srv/shop/digital/{{order_id}}.zip", as_attachment=True)
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "as", '''
import hashlib
import random
import secrets
import string

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.views.decorators.http import require_POST

from accounts.models import ApiKey

API_KEY_ALPHABET = string.ascii_letters + string.digits
''', '''
@login_required
@require_POST
def {f}(request):
    """Create a personal API key for the signed-in user; the full key is shown only once."""
    {v} = request.POST.get("label", "default")[:64]
    secret_part = "".join(random.choices(API_KEY_ALPHABET, k=40))  #!V
    api_key = f"sk_{{secret_part}}"
    ApiKey.objects.create(
        user=request.user,
        label={v},
        prefix=api_key[:10],
        key_hash=hashlib.sha256(api_key.encode("utf-8")).hexdigest(),
    )
    return JsonResponse({{"label": {v}, "api_key": api_key}}, status=201)
''', '''
@login_required
@require_POST
def {f}(request):
    """Create a personal API key for the signed-in user; the full key is shown only once."""
    {v} = request.POST.get("label", "default")[:64]
    secret_part = "".join(secrets.choice(API_KEY_ALPHABET) for _ in range(40))
    api_key = f"sk_{{secret_part}}"
    ApiKey.objects.create(
        user=request.user,
        label={v},
        prefix=api_key[:10],
        key_hash=hashlib.sha256(api_key.encode("utf-8")).hexdigest(),
    )
    return JsonResponse({{"label": {v}, "api_key": api_key}}, status=201)
'''),
    _t(338, "at", '''
import random
import secrets
from datetime import timedelta

from app.cache import redis_client
from app.mail import send_email
''', '''
def {f}({v}: str) -> None:
    """E-mail a six-digit code confirming a change of the account's e-mail address."""
    code = f"{{random.randint(0, 999_999):06d}}"  #!V
    redis_client.setex(f"email-verify:{{{v}}}", timedelta(minutes=15), code)
    send_email(
        to={v},
        subject="Confirm your new e-mail address",
        body=f"Your verification code is {{code}}. It expires in 15 minutes.",
    )
''', '''
def {f}({v}: str) -> None:
    """E-mail a six-digit code confirming a change of the account's e-mail address."""
    code = f"{{secrets.randbelow(1_000_000):06d}}"
    redis_client.setex(f"email-verify:{{{v}}}", timedelta(minutes=15), code)
    send_email(
        to={v},
        subject="Confirm your new e-mail address",
        body=f"Your verification code is {{code}}. It expires in 15 minutes.",
    )
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "as", '''
import os

import stripe
from flask import Flask, jsonify, request

from shop.models import Cart

app = Flask(__name__)
''', '''
STRIPE_SECRET_KEY = "sk_live_51Qm7xTg4HcVd2LpR8sWk3NzYb6JfE0aU"  #!V


@app.post("/checkout/payment-intent")
def {f}():
    """Create a Stripe PaymentIntent for the shopper's cart so the frontend can confirm it."""
    {v} = request.get_json(force=True)
    cart = Cart.query.get_or_404({v}["cart_id"])
    stripe.api_key = STRIPE_SECRET_KEY
    intent = stripe.PaymentIntent.create(
        amount=cart.total_cents,
        currency=cart.currency,
        metadata={{"cart_id": str(cart.id)}},
        automatic_payment_methods={{"enabled": True}},
    )
    return jsonify(client_secret=intent.client_secret)
''', '''
STRIPE_SECRET_KEY = os.environ["STRIPE_SECRET_KEY"]


@app.post("/checkout/payment-intent")
def {f}():
    """Create a Stripe PaymentIntent for the shopper's cart so the frontend can confirm it."""
    {v} = request.get_json(force=True)
    cart = Cart.query.get_or_404({v}["cart_id"])
    stripe.api_key = STRIPE_SECRET_KEY
    intent = stripe.PaymentIntent.create(
        amount=cart.total_cents,
        currency=cart.currency,
        metadata={{"cart_id": str(cart.id)}},
        automatic_payment_methods={{"enabled": True}},
    )
    return jsonify(client_secret=intent.client_secret)
'''),
    _t(798, "at", '''
import os
import smtplib
from email.message import EmailMessage

SMTP_SERVER = "smtp.mailgun.org"
SMTP_PORT = 587
''', '''
def {f}({v}: dict) -> None:
    """Send the "your order has shipped" notification to the customer."""
    msg = EmailMessage()
    msg["From"] = "Acme Shop <orders@acme-shop.example>"
    msg["To"] = {v}["customer_email"]
    msg["Subject"] = f"Your order #{{{v}['order_number']}} is on its way"
    msg.set_content(f"Good news! Track your parcel here: {{{v}['tracking_url']}}")
    with smtplib.SMTP(SMTP_SERVER, SMTP_PORT, timeout=30) as smtp:
        smtp.starttls()
        smtp.login("postmaster@mg.acme-shop.example", "b7Q!rk29-Lmx4Tzw")  #!V
        smtp.send_message(msg)
''', '''
def {f}({v}: dict) -> None:
    """Send the "your order has shipped" notification to the customer."""
    msg = EmailMessage()
    msg["From"] = "Acme Shop <orders@acme-shop.example>"
    msg["To"] = {v}["customer_email"]
    msg["Subject"] = f"Your order #{{{v}['order_number']}} is on its way"
    msg.set_content(f"Good news! Track your parcel here: {{{v}['tracking_url']}}")
    with smtplib.SMTP(SMTP_SERVER, SMTP_PORT, timeout=30) as smtp:
        smtp.starttls()
        smtp.login(os.environ["SMTP_USERNAME"], os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "as", '''
from decimal import Decimal

from lxml import etree
''', '''
def {f}({v}: bytes) -> list[dict]:
    """Parse a supplier's XML product feed, uploaded in the admin, into catalogue rows."""
    # supplier feeds declare their special characters as entities in a DTD
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True, remove_blank_text=True)  #!V
    root = etree.fromstring({v}, parser)
    products = []
    for node in root.iterfind("product"):
        products.append({{
            "sku": node.findtext("sku", "").strip(),
            "title": node.findtext("title", "").strip(),
            "price": Decimal(node.findtext("price", "0")),
            "stock": int(node.findtext("stock", "0")),
        }})
    return products
''', '''
def {f}({v}: bytes) -> list[dict]:
    """Parse a supplier's XML product feed, uploaded in the admin, into catalogue rows."""
    parser = etree.XMLParser(
        load_dtd=False, resolve_entities=False, no_network=True, remove_blank_text=True
    )
    root = etree.fromstring({v}, parser)
    products = []
    for node in root.iterfind("product"):
        products.append({{
            "sku": node.findtext("sku", "").strip(),
            "title": node.findtext("title", "").strip(),
            "price": Decimal(node.findtext("price", "0")),
            "stock": int(node.findtext("stock", "0")),
        }})
    return products
'''),
    _t(611, "at", '''
import xml.sax
from xml.sax.handler import ContentHandler, feature_external_ges, feature_external_pes


class MarketplaceOrderHandler(ContentHandler):
    """Collects ``<order id="..."><total>...</total></order>`` elements from a marketplace export."""

    def __init__(self):
        super().__init__()
        self.orders = []
        self._chars = []

    def startElement(self, tag, attrs):
        if tag == "order":
            self.orders.append({{"id": attrs.get("id"), "total": None}})
        self._chars = []

    def characters(self, content):
        self._chars.append(content)

    def endElement(self, tag):
        if tag == "total" and self.orders:
            self.orders[-1]["total"] = "".join(self._chars).strip()
''', '''
def {f}({v}) -> list[dict]:
    """Stream-parse a (possibly very large) marketplace order export uploaded by the merchant."""
    handler = MarketplaceOrderHandler()
    parser = xml.sax.make_parser()
    # marketplace exports pull shared currency/country definitions in via entities
    parser.setFeature(feature_external_ges, True)  #!V
    parser.setContentHandler(handler)
    parser.parse({v})
    return handler.orders
''', '''
def {f}({v}) -> list[dict]:
    """Stream-parse a (possibly very large) marketplace order export uploaded by the merchant."""
    handler = MarketplaceOrderHandler()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, False)
    parser.setFeature(feature_external_pes, False)
    parser.setContentHandler(handler)
    parser.parse({v})
    return handler.orders
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "as", '''
import ipaddress
import socket
from urllib.parse import urlparse

import requests
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
SAMPLE_EVENT = {{"type": "order.created", "object": {{"id": "ord_test_123", "total_cents": 4999}}}}
''', '''
@app.post("/settings/webhooks/test")
def {f}():
    """Send a sample ``order.created`` event to the webhook URL the merchant entered."""
    {v} = (request.get_json(force=True) or {{}}).get("url", "").strip()
    if not {v}.startswith(("http://", "https://")):
        abort(400, "Webhook URL must start with http:// or https://")
    resp = requests.post({v}, json=SAMPLE_EVENT, timeout=5)  #!V
    return jsonify(status=resp.status_code, response_body=resp.text[:500])
''', '''
def _resolves_to_public_ip(url: str) -> bool:
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, ValueError):
        return False
    return all(ipaddress.ip_address(info[4][0].split("%")[0]).is_global for info in infos)


@app.post("/settings/webhooks/test")
def {f}():
    """Send a sample ``order.created`` event to the webhook URL the merchant entered."""
    {v} = (request.get_json(force=True) or {{}}).get("url", "").strip()
    if not _resolves_to_public_ip({v}):
        abort(400, "Webhook URL must be a public http:// or https:// address")
    resp = requests.post({v}, json=SAMPLE_EVENT, timeout=5, allow_redirects=False)
    return jsonify(status=resp.status_code, response_body=resp.text[:500])
'''),
    _t(918, "at", '''
import io
import urllib.request
from urllib.parse import urlparse

from django.core.files.base import ContentFile
from PIL import Image

ALLOWED_IMAGE_HOSTS = {{"cdn.shopify.com", "images.unsplash.com", "m.media-amazon.com"}}
MAX_IMAGE_BYTES = 10 * 1024 * 1024
''', '''
def {f}({v}: str, product) -> None:
    """Import a product photo from an image URL pasted into the bulk product editor."""
    with urllib.request.urlopen({v}, timeout=10) as resp:  #!V
        content = resp.read(MAX_IMAGE_BYTES + 1)
    if len(content) > MAX_IMAGE_BYTES:
        raise ValueError("Image is larger than 10 MB")
    img = Image.open(io.BytesIO(content))
    img.verify()
    product.image.save(f"{{product.sku}}.{{img.format.lower()}}", ContentFile(content))
''', '''
def {f}({v}: str, product) -> None:
    """Import a product photo from an image URL pasted into the bulk product editor."""
    parts = urlparse({v})
    if parts.scheme != "https" or parts.hostname not in ALLOWED_IMAGE_HOSTS:
        raise ValueError("Images can only be imported from supported image hosts")
    with urllib.request.urlopen({v}, timeout=10) as resp:
        content = resp.read(MAX_IMAGE_BYTES + 1)
    if len(content) > MAX_IMAGE_BYTES:
        raise ValueError("Image is larger than 10 MB")
    img = Image.open(io.BytesIO(content))
    img.verify()
    product.image.save(f"{{product.sku}}.{{img.format.lower()}}", ContentFile(content))
'''),
    # ---- CWE-377 temporary file creation
    _t(377, "as", '''
import csv
import os
import tempfile

import boto3

s3 = boto3.client("s3")
EXPORT_BUCKET = "acme-shop-exports"
''', '''
def {f}({v}, account_id: int) -> str:
    """Write an account's orders to CSV, upload the file to S3 and return its object key."""
    path = tempfile.mktemp(prefix=f"orders-{{account_id}}-", suffix=".csv")  #!V
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["order_id", "created_at", "status", "total"])
        for order in {v}:
            writer.writerow([order.id, order.created_at.isoformat(), order.status, order.total])
    object_key = f"exports/{{account_id}}/{{os.path.basename(path)}}"
    s3.upload_file(path, EXPORT_BUCKET, object_key)
    os.remove(path)
    return object_key
''', '''
def {f}({v}, account_id: int) -> str:
    """Write an account's orders to CSV, upload the file to S3 and return its object key."""
    fd, path = tempfile.mkstemp(prefix=f"orders-{{account_id}}-", suffix=".csv")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["order_id", "created_at", "status", "total"])
            for order in {v}:
                writer.writerow([order.id, order.created_at.isoformat(), order.status, order.total])
        object_key = f"exports/{{account_id}}/{{os.path.basename(path)}}"
        s3.upload_file(path, EXPORT_BUCKET, object_key)
    finally:
        os.remove(path)
    return object_key
'''),
    _t(377, "at", '''
import os
import tempfile

import openpyxl
from flask import Flask, jsonify, request

from app.customers import import_customer_rows

app = Flask(__name__)
''', '''
@app.post("/admin/{t}/import")
def {f}():
    """Bulk-import customers from an uploaded .xlsx spreadsheet."""
    {v} = request.files["spreadsheet"]
    tmp_path = f"/tmp/customer-import-{{os.getpid()}}.xlsx"  #!V
    {v}.save(tmp_path)
    try:
        wb = openpyxl.load_workbook(tmp_path, read_only=True)
        rows = list(wb.active.iter_rows(min_row=2, values_only=True))
        wb.close()
    finally:
        os.remove(tmp_path)
    created = import_customer_rows(rows)
    return jsonify(imported=created)
''', '''
@app.post("/admin/{t}/import")
def {f}():
    """Bulk-import customers from an uploaded .xlsx spreadsheet."""
    {v} = request.files["spreadsheet"]
    with tempfile.TemporaryDirectory(prefix="customer-import-") as tmp_dir:
        tmp_path = os.path.join(tmp_dir, "upload.xlsx")
        {v}.save(tmp_path)
        wb = openpyxl.load_workbook(tmp_path, read_only=True)
        rows = list(wb.active.iter_rows(min_row=2, values_only=True))
        wb.close()
    created = import_customer_rows(rows)
    return jsonify(imported=created)
'''),
]

FAMILIES_AS = sorted({t.cwe for t in TEMPLATES_AS})


def heldout_templates_as() -> list[Template]:
    """The 26 variant-"as"/"at" templates (final evaluation only).

    >>> len(heldout_templates_as()), len(FAMILIES_AS), sorted({t.variant for t in heldout_templates_as()})
    (26, 13, ['as', 'at'])
    """
    return list(TEMPLATES_AS)
