'''Blind template variants "ag" and "ah": realistic code (internal tools, scripts, pipelines and jobs), for evaluation only.

Status: a blind test of the round-9 system (realistic protocol), evaluated once (2026-12-01 14:03 UTC);
validation data since round 10 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ag", "ah")

TEMPLATES_AG: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ag", '''
import tarfile
from pathlib import Path

STAGING_DIR = Path("/srv/pipeline/staging")
''', '''
def {f}({v}: str) -> Path:
    """Unpack a downloaded dataset archive into the staging area."""
    dest = STAGING_DIR / Path({v}).stem
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:*") as tar:
        tar.extractall(dest)  #!V
    return dest
''', '''
def {f}({v}: str) -> Path:
    """Unpack a downloaded dataset archive into the staging area."""
    dest = STAGING_DIR / Path({v}).stem
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:*") as tar:
        tar.extractall(dest, filter="data")
    return dest
'''),
    _t(22, "ah", '''
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse

app = FastAPI()
ARTIFACT_ROOT = Path("/var/lib/ci/artifacts")
''', '''
@app.get("/artifacts/{{build_id}}/{{{v}:path}}")
def {f}(build_id: int, {v}: str):
    """Download a file produced by a CI build."""
    artifact = ARTIFACT_ROOT / str(build_id) / {v}  #!V
    if not artifact.is_file():
        raise HTTPException(status_code=404, detail="artifact not found")
    return FileResponse(artifact)
''', '''
@app.get("/artifacts/{{build_id}}/{{{v}:path}}")
def {f}(build_id: int, {v}: str):
    """Download a file produced by a CI build."""
    build_dir = (ARTIFACT_ROOT / str(build_id)).resolve()
    artifact = (build_dir / {v}).resolve()
    if not artifact.is_relative_to(build_dir) or not artifact.is_file():
        raise HTTPException(status_code=404, detail="artifact not found")
    return FileResponse(artifact)
'''),
    # ---- CWE-78 OS command injection
    _t(78, "ag", '''
import re
import subprocess
from datetime import date
''', '''
def {f}({v}: str, out_dir: str = "/backups") -> str:
    """Dump a Postgres database to a dated, gzip-compressed SQL file (`dbtool backup DBNAME`)."""
    outfile = f"{{out_dir}}/{{{v}}}-{{date.today():%Y%m%d}}.sql.gz"
    cmd = f"pg_dump --no-owner {{{v}}} | gzip > {{outfile}}"
    subprocess.run(cmd, shell=True, check=True)  #!V
    return outfile
''', '''
def {f}({v}: str, out_dir: str = "/backups") -> str:
    """Dump a Postgres database to a dated, gzip-compressed SQL file (`dbtool backup DBNAME`)."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", {v}):
        raise ValueError(f"invalid database name: {{{v}!r}}")
    outfile = f"{{out_dir}}/{{{v}}}-{{date.today():%Y%m%d}}.sql.gz"
    subprocess.run(
        ["pg_dump", "--no-owner", "--compress=9", "--file", outfile, "--dbname", {v}],
        check=True,
    )
    return outfile
'''),
    _t(78, "ah", '''
import os
import subprocess
import tempfile
''', '''
def {f}({v}: dict) -> str:
    """Build worker: clone the repository named in a job message and return the checkout path."""
    repo_url = {v}["repo_url"]
    branch = {v}.get("branch", "main")
    workdir = tempfile.mkdtemp(prefix="build-")
    rc = os.system(f"git clone --depth 1 --branch {{branch}} {{repo_url}} {{workdir}}")  #!V
    if rc != 0:
        raise RuntimeError(f"git clone failed for {{repo_url}}")
    return workdir
''', '''
def {f}({v}: dict) -> str:
    """Build worker: clone the repository named in a job message and return the checkout path."""
    repo_url = {v}["repo_url"]
    branch = {v}.get("branch", "main")
    if not repo_url.startswith("https://"):
        raise ValueError("only https repository URLs are supported")
    workdir = tempfile.mkdtemp(prefix="build-")
    subprocess.run(
        ["git", "clone", "--depth", "1", "--branch", branch, "--", repo_url, workdir],
        check=True,
    )
    return workdir
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "ag", '''
import html
from datetime import datetime
from pathlib import Path
''', '''
def {f}({v}: list[dict], out_path: str = "reports/failed_jobs.html") -> None:
    """Write a static HTML summary of failed background jobs for the on-call dashboard."""
    rows = []
    for job in {v}:
        rows.append(f"<tr><td>{{job['id']}}</td><td>{{job['queue']}}</td><td>{{job['error']}}</td></tr>")  #!V
    page = (
        f"<html><body><h1>Failed jobs {{datetime.now():%Y-%m-%d %H:%M}}</h1>"
        "<table><tr><th>ID</th><th>Queue</th><th>Error</th></tr>"
        + "".join(rows)
        + "</table></body></html>"
    )
    Path(out_path).write_text(page, encoding="utf-8")
''', '''
def {f}({v}: list[dict], out_path: str = "reports/failed_jobs.html") -> None:
    """Write a static HTML summary of failed background jobs for the on-call dashboard."""
    rows = []
    for job in {v}:
        cells = (html.escape(str(job[col])) for col in ("id", "queue", "error"))
        rows.append("<tr>" + "".join(f"<td>{{c}}</td>" for c in cells) + "</tr>")
    page = (
        f"<html><body><h1>Failed jobs {{datetime.now():%Y-%m-%d %H:%M}}</h1>"
        "<table><tr><th>ID</th><th>Queue</th><th>Error</th></tr>"
        + "".join(rows)
        + "</table></body></html>"
    )
    Path(out_path).write_text(page, encoding="utf-8")
'''),
    _t(79, "ah", '''
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape

SITE_DIR = Path("/srv/mltracker/site")
''', '''
def {f}({v}: dict) -> Path:
    """Render the static detail page of an experiment run (params, metrics, owner notes)."""
    env = Environment(loader=FileSystemLoader("templates"), autoescape=False)  #!V
    page = env.get_template("run_detail.html")
    out = SITE_DIR / "runs" / f"{{int({v}['run_id'])}}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page.render(run={v}), encoding="utf-8")
    return out
''', '''
def {f}({v}: dict) -> Path:
    """Render the static detail page of an experiment run (params, metrics, owner notes)."""
    env = Environment(
        loader=FileSystemLoader("templates"),
        autoescape=select_autoescape(["html", "xml"]),
    )
    page = env.get_template("run_detail.html")
    out = SITE_DIR / "runs" / f"{{int({v}['run_id'])}}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page.render(run={v}), encoding="utf-8")
    return out
'''),
    # ---- CWE-89 SQL injection
    _t(89, "ag", '''
import sqlite3

DB_PATH = "/var/lib/jobrunner/jobs.db"
''', '''
def {f}({v}: str, limit: int = 50) -> list[tuple]:
    """Return the most recent job runs of one owner (`jobctl history --owner OWNER`)."""
    conn = sqlite3.connect(DB_PATH)
    try:
        cur = conn.execute(
            f"SELECT id, status, started_at FROM job_runs WHERE owner = '{{{v}}}' "  #!V
            f"ORDER BY started_at DESC LIMIT {{int(limit)}}"
        )
        return cur.fetchall()
    finally:
        conn.close()
''', '''
def {f}({v}: str, limit: int = 50) -> list[tuple]:
    """Return the most recent job runs of one owner (`jobctl history --owner OWNER`)."""
    conn = sqlite3.connect(DB_PATH)
    try:
        cur = conn.execute(
            "SELECT id, status, started_at FROM job_runs WHERE owner = ? "
            "ORDER BY started_at DESC LIMIT ?",
            ({v}, int(limit)),
        )
        return cur.fetchall()
    finally:
        conn.close()
'''),
    _t(89, "ah", '''
import os

import pandas as pd
import sqlalchemy as sa

engine = sa.create_engine(os.environ["WAREHOUSE_URL"])
''', '''
def {f}({v}: str, since: str) -> pd.DataFrame:
    """Pull one tenant's events since a given day for the nightly feature build."""
    sql = f"SELECT * FROM events WHERE tenant_id = '{{{v}}}' AND event_date >= '{{since}}'"  #!V
    frame = pd.read_sql(sql, engine)
    frame["event_date"] = pd.to_datetime(frame["event_date"])
    return frame
''', '''
def {f}({v}: str, since: str) -> pd.DataFrame:
    """Pull one tenant's events since a given day for the nightly feature build."""
    stmt = sa.text("SELECT * FROM events WHERE tenant_id = :tenant AND event_date >= :since")
    frame = pd.read_sql(stmt, engine, params={{"tenant": {v}, "since": since}})
    frame["event_date"] = pd.to_datetime(frame["event_date"])
    return frame
'''),
    # ---- CWE-94 code injection
    _t(94, "ag", '''
import ast
''', '''
def {f}(config: dict, overrides: list[str]) -> dict:
    """Apply `--set section.option=VALUE` overrides from the command line to a config dict."""
    for {v} in overrides:
        dotted, _, literal = {v}.partition("=")
        section, _, option = dotted.partition(".")
        # Convert "8", "0.5", "[1, 2]", "True" to the matching Python type.
        config.setdefault(section, {{}})[option] = eval(literal)  #!V
    return config
''', '''
def {f}(config: dict, overrides: list[str]) -> dict:
    """Apply `--set section.option=VALUE` overrides from the command line to a config dict."""
    for {v} in overrides:
        dotted, _, literal = {v}.partition("=")
        section, _, option = dotted.partition(".")
        # Convert "8", "0.5", "[1, 2]", "True" to the matching Python type.
        try:
            parsed = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            parsed = literal
        config.setdefault(section, {{}})[option] = parsed
    return config
'''),
    _t(94, "ah", '''
from jinja2 import Template
from jinja2.sandbox import SandboxedEnvironment
''', '''
def {f}({v}: str, event: dict) -> str:
    """Render a team's custom alert message for a monitoring event.

    Teams configure the message template in the alerting settings, e.g.
    "{{{{ event.service }}}} is {{{{ event.state }}}} since {{{{ event.since }}}}".
    """
    context = {{"event": event, "severity": str(event.get("severity", "info")).upper()}}
    message = Template({v}).render(**context)  #!V
    return message.strip()
''', '''
def {f}({v}: str, event: dict) -> str:
    """Render a team's custom alert message for a monitoring event.

    Teams configure the message template in the alerting settings, e.g.
    "{{{{ event.service }}}} is {{{{ event.state }}}} since {{{{ event.since }}}}".
    """
    context = {{"event": event, "severity": str(event.get("severity", "info")).upper()}}
    env = SandboxedEnvironment()
    message = env.from_string({v}).render(**context)
    return message.strip()
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "ag", '''
import json
import logging
import pickle

import redis

log = logging.getLogger(__name__)
queue_client = redis.Redis.from_url("redis://queue.internal:6379/0")
JOB_HANDLERS: dict = {{}}
''', '''
def {f}(queue_name: str = "thumbnail-jobs") -> None:
    """Worker loop: pop jobs off a Redis list and dispatch them to the registered handler."""
    while True:
        _, {v} = queue_client.blpop(queue_name)
        job = pickle.loads({v})  #!V
        handler = JOB_HANDLERS.get(job["type"])
        if handler is None:
            log.warning("no handler for job type %s", job["type"])
            continue
        handler(**job.get("kwargs", {{}}))
''', '''
def {f}(queue_name: str = "thumbnail-jobs") -> None:
    """Worker loop: pop jobs off a Redis list and dispatch them to the registered handler."""
    while True:
        _, {v} = queue_client.blpop(queue_name)
        job = json.loads({v})
        handler = JOB_HANDLERS.get(job["type"])
        if handler is None:
            log.warning("no handler for job type %s", job["type"])
            continue
        handler(**job.get("kwargs", {{}}))
'''),
    _t(502, "ah", '''
import yaml
''', '''
def {f}({v}: str) -> dict:
    """Load a pipeline definition file submitted by a user (steps, resources, schedule)."""
    with open({v}, "r", encoding="utf-8") as fh:
        spec = yaml.load(fh, Loader=yaml.Loader)  #!V
    if not isinstance(spec, dict) or "steps" not in spec:
        raise ValueError("pipeline spec has no steps")
    spec.setdefault("schedule", "@daily")
    return spec
''', '''
def {f}({v}: str) -> dict:
    """Load a pipeline definition file submitted by a user (steps, resources, schedule)."""
    with open({v}, "r", encoding="utf-8") as fh:
        spec = yaml.safe_load(fh)
    if not isinstance(spec, dict) or "steps" not in spec:
        raise ValueError("pipeline spec has no steps")
    spec.setdefault("schedule", "@daily")
    return spec
'''),
    # ---- CWE-327 broken or risky cryptographic algorithm or mode
    _t(327, "ag", '''
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
''', '''
def {f}({v}: bytes, secret: bytes) -> bytes:
    """Encrypt a database dump before it is uploaded to the offsite backup bucket."""
    padder = padding.PKCS7(128).padder()
    padded = padder.update({v}) + padder.finalize()
    encryptor = Cipher(algorithms.AES(secret), modes.ECB()).encryptor()  #!V
    return encryptor.update(padded) + encryptor.finalize()
''', '''
def {f}({v}: bytes, secret: bytes) -> bytes:
    """Encrypt a database dump before it is uploaded to the offsite backup bucket."""
    nonce = os.urandom(12)
    sealed = AESGCM(secret).encrypt(nonce, {v}, None)
    # Store the nonce in front of the ciphertext so the restore job can decrypt it.
    return nonce + sealed
'''),
    _t(327, "ah", '''
import socket
import ssl
from datetime import datetime, timezone
''', '''
def {f}({v}: str, port: int = 443) -> int:
    """Return the number of days until the TLS certificate of an internal endpoint expires."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLSv1)  #!V
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.check_hostname = True
    ctx.load_default_certs()
    with socket.create_connection(({v}, port), timeout=10) as sock:
        with ctx.wrap_socket(sock, server_hostname={v}) as tls:
            cert = tls.getpeercert()
    expires = datetime.fromtimestamp(ssl.cert_time_to_seconds(cert["notAfter"]), tz=timezone.utc)
    return (expires - datetime.now(timezone.utc)).days
''', '''
def {f}({v}: str, port: int = 443) -> int:
    """Return the number of days until the TLS certificate of an internal endpoint expires."""
    ctx = ssl.create_default_context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(({v}, port), timeout=10) as sock:
        with ctx.wrap_socket(sock, server_hostname={v}) as tls:
            cert = tls.getpeercert()
    expires = datetime.fromtimestamp(ssl.cert_time_to_seconds(cert["notAfter"]), tz=timezone.utc)
    return (expires - datetime.now(timezone.utc)).days
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "ag", '''
import getpass
import hashlib
import json
import os
from pathlib import Path

USERS_FILE = Path.home() / ".config" / "opsctl" / "users.json"
''', '''
def {f}({v}: str) -> None:
    """`opsctl user add USERNAME`: prompt for a password and store the user's hash."""
    password = getpass.getpass(f"Password for {{{v}}}: ")
    users = json.loads(USERS_FILE.read_text()) if USERS_FILE.exists() else {{}}
    users[{v}] = {{"hash": hashlib.md5(password.encode()).hexdigest()}}  #!V
    USERS_FILE.parent.mkdir(parents=True, exist_ok=True)
    USERS_FILE.write_text(json.dumps(users, indent=2))
''', '''
def {f}({v}: str) -> None:
    """`opsctl user add USERNAME`: prompt for a password and store the user's hash."""
    password = getpass.getpass(f"Password for {{{v}}}: ")
    users = json.loads(USERS_FILE.read_text()) if USERS_FILE.exists() else {{}}
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    users[{v}] = {{"algo": "scrypt", "salt": salt.hex(), "hash": digest.hex()}}
    USERS_FILE.parent.mkdir(parents=True, exist_ok=True)
    USERS_FILE.write_text(json.dumps(users, indent=2))
'''),
    _t(328, "ah", '''
import hashlib
import hmac
''', '''
def {f}({v}: str, expected_digest: str) -> None:
    """Verify a downloaded release artifact against its published checksum before deploying it."""
    digest = hashlib.md5()  #!V
    with open({v}, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != expected_digest.strip().lower():
        raise RuntimeError(f"checksum mismatch for {{{v}}}, refusing to deploy")
''', '''
def {f}({v}: str, expected_digest: str) -> None:
    """Verify a downloaded release artifact against its published checksum before deploying it."""
    digest = hashlib.sha256()
    with open({v}, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    if not hmac.compare_digest(digest.hexdigest(), expected_digest.strip().lower()):
        raise RuntimeError(f"checksum mismatch for {{{v}}}, refusing to deploy")
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "ag", '''
import random
import secrets
import string
from datetime import datetime, timedelta, timezone

TOKEN_ALPHABET = string.ascii_letters + string.digits
''', '''
def {f}({v}: str, ttl_days: int = 90) -> dict:
    """Issue a new API token for a service account (`svcctl token create ACCOUNT`)."""
    token = "svc_" + "".join(random.choices(TOKEN_ALPHABET, k=40))  #!V
    return {{
        "account": {v},
        "token": token,
        "expires_at": (datetime.now(timezone.utc) + timedelta(days=ttl_days)).isoformat(),
    }}
''', '''
def {f}({v}: str, ttl_days: int = 90) -> dict:
    """Issue a new API token for a service account (`svcctl token create ACCOUNT`)."""
    token = "svc_" + "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(40))
    return {{
        "account": {v},
        "token": token,
        "expires_at": (datetime.now(timezone.utc) + timedelta(days=ttl_days)).isoformat(),
    }}
'''),
    _t(338, "ah", '''
import random
import secrets
import time

import redis

otp_store = redis.Redis(decode_responses=True)
''', '''
def {f}({v}: str) -> str:
    """Generate a 6-digit verification code for `opsctl login` and cache it for five minutes.

    The code is e-mailed to the user's registered address by the notifier worker.
    """
    code = f"{{random.randint(0, 999999):06d}}"  #!V
    otp_store.hset(f"otp:{{{v}}}", mapping={{"code": code, "issued_at": int(time.time())}})
    otp_store.expire(f"otp:{{{v}}}", 300)
    return code
''', '''
def {f}({v}: str) -> str:
    """Generate a 6-digit verification code for `opsctl login` and cache it for five minutes.

    The code is e-mailed to the user's registered address by the notifier worker.
    """
    code = f"{{secrets.randbelow(1_000_000):06d}}"
    otp_store.hset(f"otp:{{{v}}}", mapping={{"code": code, "issued_at": int(time.time())}})
    otp_store.expire(f"otp:{{{v}}}", 300)
    return code
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ag", '''
import os

import boto3
''', '''
def {f}({v}: str, bucket: str = "corp-build-artifacts") -> str:
    """Upload a build artifact to S3 and return its object path."""
    s3 = boto3.client(
        "s3",
        aws_access_key_id="AKIAQ3EGRX7PLM2WZ5TB",  #!V
        aws_secret_access_key="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",  #!V
        region_name="eu-west-1",
    )
    object_path = f"artifacts/{{os.path.basename({v})}}"
    s3.upload_file({v}, bucket, object_path)
    return object_path
''', '''
def {f}({v}: str, bucket: str = "corp-build-artifacts") -> str:
    """Upload a build artifact to S3 and return its object path."""
    # Credentials come from the standard AWS chain (env vars, profile or instance role).
    s3 = boto3.client("s3", region_name=os.environ.get("AWS_REGION", "eu-west-1"))
    object_path = f"artifacts/{{os.path.basename({v})}}"
    s3.upload_file({v}, bucket, object_path)
    return object_path
'''),
    _t(798, "ah", '''
import os
import smtplib
from email.message import EmailMessage
''', '''
def {f}({v}: str, recipients: list[str]) -> None:
    """Send the nightly ETL summary e-mail to the data team."""
    msg = EmailMessage()
    msg["Subject"] = "Nightly ETL summary"
    msg["From"] = "etl-bot@corp.example.com"
    msg["To"] = ", ".join(recipients)
    msg.set_content({v})
    with smtplib.SMTP("smtp.corp.example.com", 587) as smtp:
        smtp.starttls()
        smtp.login("etl-bot@corp.example.com", "Etl-B0t!2026")  #!V
        smtp.send_message(msg)
''', '''
def {f}({v}: str, recipients: list[str]) -> None:
    """Send the nightly ETL summary e-mail to the data team."""
    msg = EmailMessage()
    msg["Subject"] = "Nightly ETL summary"
    msg["From"] = "etl-bot@corp.example.com"
    msg["To"] = ", ".join(recipients)
    msg.set_content({v})
    with smtplib.SMTP("smtp.corp.example.com", 587) as smtp:
        smtp.starttls()
        smtp.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
        smtp.send_message(msg)
'''),
    # ---- CWE-611 XML external entity processing
    _t(611, "ag", '''
from lxml import etree
''', '''
def {f}({v}: bytes) -> dict:
    """Summarise a JUnit XML report uploaded by a CI runner."""
    parser = etree.XMLParser(load_dtd=True, resolve_entities=True)  #!V
    root = etree.fromstring({v}, parser)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    summary = {{"tests": 0, "failures": 0, "errors": 0, "skipped": 0}}
    for suite in suites:
        for field in summary:
            summary[field] += int(suite.get(field, 0))
    return summary
''', '''
def {f}({v}: bytes) -> dict:
    """Summarise a JUnit XML report uploaded by a CI runner."""
    parser = etree.XMLParser(load_dtd=False, resolve_entities=False, no_network=True)
    root = etree.fromstring({v}, parser)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    summary = {{"tests": 0, "failures": 0, "errors": 0, "skipped": 0}}
    for suite in suites:
        for field in summary:
            summary[field] += int(suite.get(field, 0))
    return summary
'''),
    _t(611, "ah", '''
import xml.sax
from xml.sax.handler import feature_external_ges

import defusedxml.sax
''', '''
class _ProductFeedHandler(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.skus = []

    def startElement(self, tag, attrs):
        if tag == "product":
            self.skus.append(attrs.get("sku"))


def {f}({v}: str) -> list[str]:
    """Stream a (possibly multi-GB) supplier product feed file and collect the SKUs."""
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)  #!V
    collector = _ProductFeedHandler()
    parser.setContentHandler(collector)
    parser.parse({v})
    return collector.skus
''', '''
class _ProductFeedHandler(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.skus = []

    def startElement(self, tag, attrs):
        if tag == "product":
            self.skus.append(attrs.get("sku"))


def {f}({v}: str) -> list[str]:
    """Stream a (possibly multi-GB) supplier product feed file and collect the SKUs."""
    parser = defusedxml.sax.make_parser()
    collector = _ProductFeedHandler()
    parser.setContentHandler(collector)
    parser.parse({v})
    return collector.skus
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "ag", '''
import ipaddress
import socket
from urllib.parse import urlparse

import requests
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
''', '''
@app.post("/api/webhooks/test")
def {f}():
    """Send a test delivery to the webhook URL a user is configuring."""
    {v} = request.get_json(force=True).get("url", "")
    resp = requests.post({v}, json={{"event": "ping"}}, timeout=5)  #!V
    return jsonify(status=resp.status_code, body=resp.content[:500].decode(errors="replace"))
''', '''
def _is_public_http_url(url: str) -> bool:
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443)
    except socket.gaierror:
        return False
    return all(ipaddress.ip_address(info[4][0]).is_global for info in infos)


@app.post("/api/webhooks/test")
def {f}():
    """Send a test delivery to the webhook URL a user is configuring."""
    {v} = request.get_json(force=True).get("url", "")
    if not _is_public_http_url({v}):
        abort(400, "webhook URL must point to a public http(s) address")
    resp = requests.post({v}, json={{"event": "ping"}}, timeout=5, allow_redirects=False)
    return jsonify(status=resp.status_code, body=resp.content[:500].decode(errors="replace"))
'''),
    _t(918, "ah", '''
import shutil
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

ALLOWED_SOURCES = {{"data.corp.example.com", "s3.eu-west-1.amazonaws.com"}}
DOWNLOAD_DIR = Path("/srv/ingest/incoming")
''', '''
def {f}({v}: dict) -> Path:
    """Ingest worker: download the dataset referenced by a queue message."""
    source_url = {v}["source_url"]
    dest = DOWNLOAD_DIR / f"{{int({v}['dataset_id'])}}.parquet"
    with urllib.request.urlopen(source_url, timeout=30) as resp, open(dest, "wb") as out:  #!V
        shutil.copyfileobj(resp, out)
    return dest
''', '''
def {f}({v}: dict) -> Path:
    """Ingest worker: download the dataset referenced by a queue message."""
    source_url = {v}["source_url"]
    parts = urlparse(source_url)
    if parts.scheme != "https" or parts.hostname not in ALLOWED_SOURCES:
        raise ValueError(f"refusing to download from {{parts.hostname!r}}")
    dest = DOWNLOAD_DIR / f"{{int({v}['dataset_id'])}}.parquet"
    with urllib.request.urlopen(source_url, timeout=30) as resp, open(dest, "wb") as out:
        shutil.copyfileobj(resp, out)
    return dest
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "ag", '''
import os
import subprocess
import tempfile
''', '''
def {f}({v}: str) -> bytes:
    """Render a pipeline DAG (Graphviz DOT source) to PNG with the `dot` binary."""
    dot_path = tempfile.mktemp(suffix=".dot")  #!V
    with open(dot_path, "w", encoding="utf-8") as fh:
        fh.write({v})
    try:
        return subprocess.run(["dot", "-Tpng", dot_path], capture_output=True, check=True).stdout
    finally:
        os.remove(dot_path)
''', '''
def {f}({v}: str) -> bytes:
    """Render a pipeline DAG (Graphviz DOT source) to PNG with the `dot` binary."""
    fd, dot_path = tempfile.mkstemp(suffix=".dot")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write({v})
    try:
        return subprocess.run(["dot", "-Tpng", dot_path], capture_output=True, check=True).stdout
    finally:
        os.remove(dot_path)
'''),
    _t(377, "ah", '''
import csv
import os
import tempfile
''', '''
def {f}({v}: list[dict], report_id: str) -> str:
    """Write a report's rows to a CSV file that the uploader job then picks up."""
    out_path = f"/tmp/report_{{report_id}}.csv"  #!V
    with open(out_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list({v}[0].keys()))
        writer.writeheader()
        writer.writerows({v})
    return out_path
''', '''
def {f}({v}: list[dict], report_id: str) -> str:
    """Write a report's rows to a CSV file that the uploader job then picks up."""
    fd, out_path = tempfile.mkstemp(prefix="report_", suffix=".csv")
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list({v}[0].keys()))
        writer.writeheader()
        writer.writerows({v})
    return out_path
'''),
]

FAMILIES_AG = sorted({t.cwe for t in TEMPLATES_AG})


def heldout_templates_ag() -> list[Template]:
    """The 26 variant-"ag"/"ah" templates (final evaluation only).

    >>> len(heldout_templates_ag()), len(FAMILIES_AG), sorted({t.variant for t in heldout_templates_ag()})
    (26, 13, ['ag', 'ah'])
    """
    return list(TEMPLATES_AG)
