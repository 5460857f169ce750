"""Vulnerable/fixed example pairs for the tab, one per CWE family (13 families, 26 snippets).

Fixed text, so the engine carries no template data: each pair shows one weakness and its fix.

>>> ex = examples(); len(ex) == 26 and any("vulnerable" in k for k in ex)
True
"""
from __future__ import annotations

_EXAMPLES: dict[str, str] = {
    'CWE-78 vulnerable': (
        'import subprocess\n'
        '\n'
        '\n'
        'def render_host(text):\n'
        '    cmd = "ping -c 1 " + text\n'
        '    return subprocess.check_output(cmd, shell=True)\n'
    ),
    'CWE-78 fixed': (
        'import subprocess\n'
        '\n'
        '\n'
        'def render_host(text):\n'
        '    cmd = ["ping", "-c", "1", text]\n'
        '    return subprocess.check_output(cmd)\n'
    ),
    'CWE-89 vulnerable': (
        'import sqlite3\n'
        '\n'
        '\n'
        'def load_item(conn, host):\n'
        '    cur = conn.cursor()\n'
        '    cur.execute("SELECT * FROM items WHERE name = \'%s\'" % host)\n'
        '    return cur.fetchall()\n'
    ),
    'CWE-89 fixed': (
        'import sqlite3\n'
        '\n'
        '\n'
        'def load_item(conn, host):\n'
        '    cur = conn.cursor()\n'
        '    cur.execute("SELECT * FROM items WHERE name = ?", (host,))\n'
        '    return cur.fetchall()\n'
    ),
    'CWE-94 vulnerable': (
        'def lookup_host(blob):\n'
        '    return eval(blob)\n'
    ),
    'CWE-94 fixed': (
        'def lookup_host(blob):\n'
        '    import ast\n'
        '    return ast.literal_eval(blob)\n'
    ),
    'CWE-502 vulnerable': (
        'import pickle\n'
        '\n'
        '\n'
        'def do_task_fname(arg):\n'
        '    return pickle.loads(arg)\n'
    ),
    'CWE-502 fixed': (
        'import pickle\n'
        '\n'
        '\n'
        'def do_task_fname(arg):\n'
        '    import json\n'
        '    return json.loads(arg)\n'
    ),
    'CWE-328 vulnerable': (
        'import hashlib\n'
        '\n'
        '\n'
        'def do_task(password):\n'
        '    return hashlib.md5(password.encode()).hexdigest()\n'
    ),
    'CWE-328 fixed': (
        'import hashlib\n'
        '\n'
        '\n'
        'def do_task(password):\n'
        '    salt = hashlib.sha256(b"pepper").digest()\n'
        '    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000).hex()\n'
    ),
    'CWE-338 vulnerable': (
        'import random\n'
        'import string\n'
        '\n'
        '\n'
        'def fetch_raw(n=16):\n'
        '    alphabet = string.ascii_letters + string.digits\n'
        '    return "".join(random.choice(alphabet) for _ in range(n))\n'
    ),
    'CWE-338 fixed': (
        'import random\n'
        'import string\n'
        '\n'
        '\n'
        'def fetch_raw(n=16):\n'
        '    import secrets\n'
        '    alphabet = string.ascii_letters + string.digits\n'
        '    return "".join(secrets.choice(alphabet) for _ in range(n))\n'
    ),
    'CWE-798 vulnerable': (
        'def compute_name(client):\n'
        '    password = "S3cr3t!accounts"\n'
        '    return client.login("admin", password)\n'
    ),
    'CWE-798 fixed': (
        'def compute_name(client):\n'
        '    import os\n'
        '    password = os.environ["APP_PASSWORD"]\n'
        '    return client.login("admin", password)\n'
    ),
    'CWE-22 vulnerable': (
        'import tarfile\n'
        '\n'
        '\n'
        'def unpack_upload(upload, dest):\n'
        '    with tarfile.open(upload) as tar:\n'
        '        tar.extractall(dest)\n'
    ),
    'CWE-22 fixed': (
        'import tarfile\n'
        '\n'
        '\n'
        'def unpack_upload(upload, dest):\n'
        '    with tarfile.open(upload) as tar:\n'
        '        tar.extractall(dest, filter="data")\n'
    ),
    'CWE-79 vulnerable': (
        'from flask import request\n'
        'from jinja2 import Environment\n'
        '\n'
        '\n'
        'def run_job_arg():\n'
        '    env = Environment(autoescape=False)\n'
        '    page = env.from_string("<h1>Results for {{ q }}</h1>")\n'
        '    return page.render(q=request.args.get("q", ""))\n'
    ),
    'CWE-79 fixed': (
        'from flask import request\n'
        'from jinja2 import Environment, select_autoescape\n'
        '\n'
        '\n'
        'def run_job_arg():\n'
        '    env = Environment(autoescape=select_autoescape(default=True))\n'
        '    page = env.from_string("<h1>Results for {{ q }}</h1>")\n'
        '    return page.render(q=request.args.get("q", ""))\n'
    ),
    'CWE-611 vulnerable': (
        'import xml.etree.ElementTree as ET\n'
        '\n'
        '\n'
        'def sync(target):\n'
        '    root = ET.fromstring(target)\n'
        '    return root.attrib\n'
    ),
    'CWE-611 fixed': (
        'import xml.etree.ElementTree as ET\n'
        '\n'
        '\n'
        'def sync(target):\n'
        '    import defusedxml.ElementTree as DET\n'
        '    root = DET.fromstring(target)\n'
        '    return root.attrib\n'
    ),
    'CWE-918 vulnerable': (
        'import urllib.request\n'
        'from flask import request\n'
        '\n'
        '\n'
        'def parse_payload():\n'
        '    url = request.args.get("url")\n'
        '    with urllib.request.urlopen(url, timeout=5) as resp:\n'
        '        return resp.read()\n'
    ),
    'CWE-918 fixed': (
        'import requests\n'
        'from flask import request\n'
        '\n'
        '\n'
        'def parse_payload():\n'
        '    url = request.args.get("url")\n'
        '    if url not in ("https://api.example.com/status", "https://api.example.com/health"):\n'
        '        raise ValueError("url not allowed")\n'
        '    resp = requests.get(url, timeout=5)\n'
        '    return resp.text\n'
    ),
    'CWE-377 vulnerable': (
        'import tempfile\n'
        '\n'
        '\n'
        'def make_token(data):\n'
        '    name = tempfile.mktemp(suffix=".txt")\n'
        '    with open(name, "w") as fh:\n'
        '        fh.write(data)\n'
        '    return name\n'
    ),
    'CWE-377 fixed': (
        'import tempfile\n'
        '\n'
        '\n'
        'def make_token(data):\n'
        '    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:\n'
        '        fh.write(data)\n'
        '    return fh.name\n'
    ),
    'CWE-327 vulnerable': (
        'from Crypto.Cipher import DES\n'
        '\n'
        '\n'
        'def process(key, raw):\n'
        '    cipher = DES.new(key, DES.MODE_ECB)\n'
        '    return cipher.encrypt(raw)\n'
    ),
    'CWE-327 fixed': (
        'from Crypto.Cipher import DES\n'
        '\n'
        '\n'
        'def process(key, raw):\n'
        '    from cryptography.hazmat.primitives.ciphers.aead import AESGCM\n'
        '    nonce = key[:12]\n'
        '    return AESGCM(key).encrypt(nonce, raw, None)\n'
    ),
}


def examples() -> dict[str, str]:
    """The 26 example snippets, keyed "CWE-<n> vulnerable" / "CWE-<n> fixed"."""
    return dict(_EXAMPLES)
