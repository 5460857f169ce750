'''Blind template variants "ao" and "ap": realistic code (data, ML and scientific Python; desktop and CLI apps), for evaluation only.

Status: the realistic-protocol blind test of the round-11 system, evaluated once (2026-12-01 15:08 UTC);
validation data since round 12 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code, its
rules, models, data, scripts, tests, results or any earlier template set, and who ran no analyser
on these templates. Evaluation only: never train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ao", "ap")

TEMPLATES_AO: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ao", '''
import os

from flask import Flask, abort, send_file

app = Flask(__name__)
REPORT_DIR = os.path.realpath("reports")
''', '''
@app.route("/reports/<path:{v}>")
def {f}({v}):
    """Serve an HTML or PNG report produced by the nightly evaluation job."""
    report_path = os.path.join(REPORT_DIR, {v})  #!V
    if not os.path.isfile(report_path):
        abort(404)
    return send_file(report_path)  #!V
''', '''
@app.route("/reports/<path:{v}>")
def {f}({v}):
    """Serve an HTML or PNG report produced by the nightly evaluation job."""
    report_path = os.path.realpath(os.path.join(REPORT_DIR, {v}))
    if os.path.commonpath([report_path, REPORT_DIR]) != REPORT_DIR:
        abort(404)
    if not os.path.isfile(report_path):
        abort(404)
    return send_file(report_path)
'''),
    _t(22, "ap", '''
import tarfile
from pathlib import Path

DATA_ROOT = Path("~/datasets").expanduser()
''', '''
def {f}({v}: str) -> Path:
    """Unpack a dataset tarball shared by a collaborator into DATA_ROOT/<archive stem>."""
    dest = DATA_ROOT / Path({v}).name.split(".")[0]
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:*") as archive:
        archive.extractall(dest)  #!V
    n_files = sum(1 for p in dest.rglob("*") if p.is_file())
    print(f"extracted {{n_files}} files to {{dest}}")
    return dest
''', '''
def {f}({v}: str) -> Path:
    """Unpack a dataset tarball shared by a collaborator into DATA_ROOT/<archive stem>."""
    dest = DATA_ROOT / Path({v}).name.split(".")[0]
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open({v}, "r:*") as archive:
        archive.extractall(dest, filter="data")
    n_files = sum(1 for p in dest.rglob("*") if p.is_file())
    print(f"extracted {{n_files}} files to {{dest}}")
    return dest
'''),
    # ---- CWE-78 OS command injection
    _t(78, "ao", '''
import subprocess
from pathlib import Path

from flask import Flask, abort, request, send_file

app = Flask(__name__)
NOTEBOOK_DIR = Path("notebooks").resolve()
EXPORT_DIR = Path("exports").resolve()
''', '''
@app.post("/notebooks/export")
def {f}():
    """Render a notebook from the shared folder to HTML for the team wiki."""
    {v} = request.form["notebook"]
    nb_path = (NOTEBOOK_DIR / {v}).resolve()
    if not nb_path.is_relative_to(NOTEBOOK_DIR) or nb_path.suffix != ".ipynb":
        abort(400)
    subprocess.run(f"jupyter nbconvert --to html --output-dir {{EXPORT_DIR}} '{{nb_path}}'", shell=True, check=True)  #!V
    return send_file(EXPORT_DIR / (nb_path.stem + ".html"))
''', '''
@app.post("/notebooks/export")
def {f}():
    """Render a notebook from the shared folder to HTML for the team wiki."""
    {v} = request.form["notebook"]
    nb_path = (NOTEBOOK_DIR / {v}).resolve()
    if not nb_path.is_relative_to(NOTEBOOK_DIR) or nb_path.suffix != ".ipynb":
        abort(400)
    subprocess.run(
        ["jupyter", "nbconvert", "--to", "html", "--output-dir", str(EXPORT_DIR), str(nb_path)],
        check=True,
    )
    return send_file(EXPORT_DIR / (nb_path.stem + ".html"))
'''),
    _t(78, "ap", '''
import argparse
import os
import subprocess
from pathlib import Path
''', '''
def {f}({v}: str, out_dir: str = "wav16k") -> Path:
    """Resample a clip to 16 kHz mono WAV for the speech model's feature extractor."""
    os.makedirs(out_dir, exist_ok=True)
    out_path = Path(out_dir) / (Path({v}).stem + ".wav")
    os.system(f"ffmpeg -y -loglevel error -i '{{{v}}}' -ac 1 -ar 16000 '{{out_path}}'")  #!V
    return out_path


def main() -> None:
    parser = argparse.ArgumentParser(description="Resample every clip listed in a crowd-sourced manifest")
    parser.add_argument("manifest")
    opts = parser.parse_args()
    with open(opts.manifest) as fh:
        for line in fh:
            if line.strip():
                print({f}(line.strip()))
''', '''
def {f}({v}: str, out_dir: str = "wav16k") -> Path:
    """Resample a clip to 16 kHz mono WAV for the speech model's feature extractor."""
    os.makedirs(out_dir, exist_ok=True)
    out_path = Path(out_dir) / (Path({v}).stem + ".wav")
    subprocess.run(
        ["ffmpeg", "-y", "-loglevel", "error", "-i", {v}, "-ac", "1", "-ar", "16000", str(out_path)],
        check=True,
    )
    return out_path


def main() -> None:
    parser = argparse.ArgumentParser(description="Resample every clip listed in a crowd-sourced manifest")
    parser.add_argument("manifest")
    opts = parser.parse_args()
    with open(opts.manifest) as fh:
        for line in fh:
            if line.strip():
                print({f}(line.strip()))
'''),
    # ---- CWE-79 cross-site scripting
    _t(79, "ao", '''
from flask import Flask, request
from markupsafe import escape
from transformers import pipeline

app = Flask(__name__)
classifier = pipeline("sentiment-analysis")
''', '''
@app.route("/predict")
def {f}():
    """Tiny demo page: classify the sentiment of ?q=... and show the result."""
    {v} = request.args.get("q", "")
    result = classifier({v})[0]
    return (
        f"<h2>Sentiment for: {{{v}}}</h2>"  #!V
        f"<p>{{result['label']}} ({{result['score']:.1%}})</p>"
        '<form><input name="q"><button>Classify</button></form>'
    )
''', '''
@app.route("/predict")
def {f}():
    """Tiny demo page: classify the sentiment of ?q=... and show the result."""
    {v} = request.args.get("q", "")
    result = classifier({v})[0]
    return (
        f"<h2>Sentiment for: {{escape({v})}}</h2>"
        f"<p>{{escape(result['label'])}} ({{result['score']:.1%}})</p>"
        '<form><input name="q"><button>Classify</button></form>'
    )
'''),
    _t(79, "ap", '''
import pandas as pd
from flask import Flask, request

app = Flask(__name__)
PAGE = """<!doctype html>
<html><head><title>Upload preview</title></head>
<body><h1>Preview of the uploaded file</h1>{{table}}</body></html>"""
''', '''
@app.post("/preview")
def {f}():
    """Show the first rows of an uploaded CSV so annotators can sanity-check it."""
    {v} = request.files["file"]
    frame = pd.read_csv({v}, nrows=50)
    # render URLs in the "source" column as clickable links
    if "source" in frame.columns:
        frame["source"] = frame["source"].map(lambda u: f'<a href="{{u}}">{{u}}</a>')
    table_html = frame.to_html(index=False, escape=False)  #!V
    return PAGE.format(table=table_html)
''', '''
@app.post("/preview")
def {f}():
    """Show the first rows of an uploaded CSV so annotators can sanity-check it."""
    {v} = request.files["file"]
    frame = pd.read_csv({v}, nrows=50)
    table_html = frame.to_html(index=False, render_links=True)
    return PAGE.format(table=table_html)
'''),
    # ---- CWE-89 SQL injection
    _t(89, "ao", '''
import sqlite3

DB_PATH = "experiments.db"
''', '''
def {f}({v}: str) -> list[tuple]:
    """Return all runs of an experiment, best validation loss first (backs the `runs` CLI command)."""
    conn = sqlite3.connect(DB_PATH)
    try:
        rows = conn.execute(
            "SELECT run_id, lr, batch_size, val_loss FROM runs "
            f"WHERE experiment = '{{{v}}}' ORDER BY val_loss ASC"  #!V
        ).fetchall()
    finally:
        conn.close()
    return rows
''', '''
def {f}({v}: str) -> list[tuple]:
    """Return all runs of an experiment, best validation loss first (backs the `runs` CLI command)."""
    conn = sqlite3.connect(DB_PATH)
    try:
        rows = conn.execute(
            "SELECT run_id, lr, batch_size, val_loss FROM runs "
            "WHERE experiment = ? ORDER BY val_loss ASC",
            ({v},),
        ).fetchall()
    finally:
        conn.close()
    return rows
'''),
    _t(89, "ap", '''
import os

import pandas as pd
import sqlalchemy as sa
from fastapi import FastAPI, HTTPException

app = FastAPI()
engine = sa.create_engine(os.environ["WAREHOUSE_URL"])
''', '''
@app.get("/kpis/daily")
def {f}(start: str, end: str, {v}: str = "revenue"):
    """Daily KPI table for the dashboard, sorted by the metric the user picked."""
    sql = sa.text(
        "SELECT day, orders, revenue, refunds FROM daily_kpis "
        f"WHERE day BETWEEN :start AND :end ORDER BY {{{v}}} DESC"  #!V
    )
    frame = pd.read_sql(sql, engine, params={{"start": start, "end": end}})
    return frame.to_dict(orient="records")
''', '''
SORTABLE_METRICS = ("orders", "revenue", "refunds")


@app.get("/kpis/daily")
def {f}(start: str, end: str, {v}: str = "revenue"):
    """Daily KPI table for the dashboard, sorted by the metric the user picked."""
    if {v} not in SORTABLE_METRICS:
        raise HTTPException(status_code=400, detail=f"sort must be one of {{SORTABLE_METRICS}}")
    sql = sa.text(
        "SELECT day, orders, revenue, refunds FROM daily_kpis "
        f"WHERE day BETWEEN :start AND :end ORDER BY {{{v}}} DESC"
    )
    frame = pd.read_sql(sql, engine, params={{"start": start, "end": end}})
    return frame.to_dict(orient="records")
'''),
    # ---- CWE-94 code injection
    _t(94, "ao", '''
import ast
import operator

import numpy as np
import pandas as pd
''', '''
def {f}(frame: pd.DataFrame, column: str, {v}: str) -> pd.DataFrame:
    """Add a derived feature from a --feature formula, e.g. "weight / (height / 100) ** 2"."""
    columns = {{c: frame[c] for c in frame.columns}}
    frame[column] = eval({v}, {{"np": np}}, columns)  #!V
    return frame
''', '''
_OPS = {{
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
}}


def _eval_formula(node: ast.AST, frame: pd.DataFrame):
    if isinstance(node, ast.Expression):
        return _eval_formula(node.body, frame)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name) and node.id in frame.columns:
        return frame[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_formula(node.left, frame), _eval_formula(node.right, frame))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_formula(node.operand, frame))
    raise ValueError(f"unsupported element in formula: {{ast.dump(node)}}")


def {f}(frame: pd.DataFrame, column: str, {v}: str) -> pd.DataFrame:
    """Add a derived feature from a --feature formula, e.g. "weight / (height / 100) ** 2"."""
    frame[column] = _eval_formula(ast.parse({v}, mode="eval"), frame)
    return frame
'''),
    _t(94, "ap", '''
import jinja2
from jinja2.sandbox import SandboxedEnvironment
''', '''
def {f}({v}: str, metrics: dict[str, float], recipients: list[str]) -> dict:
    """Build the weekly model-quality email from the template a team lead saved on the settings page."""
    template = jinja2.Template({v})  #!V
    body = template.render(metrics=metrics, recipients=recipients)
    return {{
        "to": recipients,
        "subject": f"Model quality report ({{len(metrics)}} metrics)",
        "html": body,
    }}
''', '''
def {f}({v}: str, metrics: dict[str, float], recipients: list[str]) -> dict:
    """Build the weekly model-quality email from the template a team lead saved on the settings page."""
    env = SandboxedEnvironment(autoescape=True)
    template = env.from_string({v})
    body = template.render(metrics=metrics, recipients=recipients)
    return {{
        "to": recipients,
        "subject": f"Model quality report ({{len(metrics)}} metrics)",
        "html": body,
    }}
'''),
    # ---- CWE-502 deserialisation of untrusted data
    _t(502, "ao", '''
import torch
from huggingface_hub import hf_hub_download
from torchvision.models import resnet50
''', '''
def {f}({v}: str, filename: str = "pytorch_model.bin") -> torch.nn.Module:
    """Load fine-tuned ResNet-50 weights from the Hub repo id given with --weights."""
    ckpt_path = hf_hub_download(repo_id={v}, filename=filename)
    state = torch.load(ckpt_path, map_location="cpu")  #!V
    model = resnet50(num_classes=state["fc.weight"].shape[0])
    model.load_state_dict(state)
    return model.eval()
''', '''
def {f}({v}: str, filename: str = "pytorch_model.bin") -> torch.nn.Module:
    """Load fine-tuned ResNet-50 weights from the Hub repo id given with --weights."""
    ckpt_path = hf_hub_download(repo_id={v}, filename=filename)
    state = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    model = resnet50(num_classes=state["fc.weight"].shape[0])
    model.load_state_dict(state)
    return model.eval()
'''),
    _t(502, "ap", '''
import json
import pickle

import numpy as np
import redis

from churn_model import scorer

queue = redis.Redis(host="localhost", port=6379)
''', '''
def {f}({v}: bytes) -> None:
    """Worker step: decode a feature batch pushed by the web tier and store the predictions."""
    job = pickle.loads({v})  #!V
    features = np.asarray(job["features"], dtype=np.float32)
    preds = scorer.predict_proba(features)[:, 1]
    queue.set(f"result:{{job['job_id']}}", json.dumps(preds.tolist()), ex=3600)


def run_worker() -> None:
    while True:
        _, msg = queue.blpop("inference:jobs")
        {f}(msg)
''', '''
def {f}({v}: bytes) -> None:
    """Worker step: decode a feature batch pushed by the web tier and store the predictions."""
    job = json.loads({v})
    features = np.asarray(job["features"], dtype=np.float32)
    preds = scorer.predict_proba(features)[:, 1]
    queue.set(f"result:{{job['job_id']}}", json.dumps(preds.tolist()), ex=3600)


def run_worker() -> None:
    while True:
        _, msg = queue.blpop("inference:jobs")
        {f}(msg)
'''),
    # ---- CWE-327 broken or risky crypto algorithm / mode
    _t(327, "ao", '''
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
''', '''
def {f}({v}: bytes, out_path: str) -> None:
    """Encrypt a serialized model artifact before it is copied to the shared bucket."""
    enc_key = bytes.fromhex(os.environ["ARTIFACT_KEY"])
    padder = padding.PKCS7(128).padder()
    padded = padder.update({v}) + padder.finalize()
    encryptor = Cipher(algorithms.AES(enc_key), modes.ECB()).encryptor()  #!V
    with open(out_path, "wb") as fh:
        fh.write(encryptor.update(padded) + encryptor.finalize())
''', '''
def {f}({v}: bytes, out_path: str) -> None:
    """Encrypt a serialized model artifact before it is copied to the shared bucket."""
    enc_key = bytes.fromhex(os.environ["ARTIFACT_KEY"])
    nonce = os.urandom(12)
    sealed = AESGCM(enc_key).encrypt(nonce, {v}, None)
    with open(out_path, "wb") as fh:
        fh.write(nonce + sealed)
'''),
    _t(327, "ap", '''
import base64
import os

import pandas as pd
from Crypto.Cipher import AES, DES
from Crypto.Util.Padding import pad
''', '''
def {f}({v}: str, out_path: str) -> None:
    """Replace patient IDs in a cohort export with reversible tokens before sending it to the partner lab."""
    cipher = DES.new(bytes.fromhex(os.environ["COHORT_KEY"]), DES.MODE_ECB)  #!V
    frame = pd.read_csv({v})
    frame["patient_id"] = [
        base64.urlsafe_b64encode(cipher.encrypt(pad(pid.encode(), DES.block_size))).decode()
        for pid in frame["patient_id"].astype(str)
    ]
    frame.to_csv(out_path, index=False)
''', '''
def _pseudonym(secret: bytes, pid: str) -> str:
    # AES-SIV without a nonce is deterministic, so the same patient maps to the same token
    cipher = AES.new(secret, AES.MODE_SIV)
    ciphertext, tag = cipher.encrypt_and_digest(pid.encode())
    return base64.urlsafe_b64encode(tag + ciphertext).decode()


def {f}({v}: str, out_path: str) -> None:
    """Replace patient IDs in a cohort export with reversible tokens before sending it to the partner lab."""
    secret = bytes.fromhex(os.environ["COHORT_KEY"])
    frame = pd.read_csv({v})
    frame["patient_id"] = [_pseudonym(secret, pid) for pid in frame["patient_id"].astype(str)]
    frame.to_csv(out_path, index=False)
'''),
    # ---- CWE-328 weak hash for a security purpose
    _t(328, "ao", '''
import hashlib
import sqlite3

from flask import Flask, jsonify, request
from werkzeug.security import generate_password_hash

app = Flask(__name__)
DB = "labeling.db"
''', '''
@app.post("/signup")
def {f}():
    """Create an annotator account for the labeling tool."""
    body = request.get_json()
    username, {v} = body["username"], body["password"]
    pw_hash = hashlib.md5({v}.encode()).hexdigest()  #!V
    with sqlite3.connect(DB) as conn:
        conn.execute("INSERT INTO annotators (username, pw_hash) VALUES (?, ?)", (username, pw_hash))
    return jsonify(ok=True), 201
''', '''
@app.post("/signup")
def {f}():
    """Create an annotator account for the labeling tool."""
    body = request.get_json()
    username, {v} = body["username"], body["password"]
    pw_hash = generate_password_hash({v})
    with sqlite3.connect(DB) as conn:
        conn.execute("INSERT INTO annotators (username, pw_hash) VALUES (?, ?)", (username, pw_hash))
    return jsonify(ok=True), 201
'''),
    _t(328, "ap", '''
import hashlib
import hmac
import sys
''', '''
def {f}({v}: str, expected: str) -> bool:
    """Check a downloaded checkpoint against the checksum published in the model card."""
    digest = hashlib.md5()  #!V
    with open({v}, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest() == expected.strip().lower()


def main() -> None:
    ckpt, checksum = sys.argv[1], sys.argv[2]
    if not {f}(ckpt, checksum):
        sys.exit(f"checksum mismatch for {{ckpt}}; refusing to load it")
    print("checkpoint verified")
''', '''
def {f}({v}: str, expected: str) -> bool:
    """Check a downloaded checkpoint against the checksum published in the model card."""
    with open({v}, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256")
    return hmac.compare_digest(digest.hexdigest(), expected.strip().lower())


def main() -> None:
    ckpt, checksum = sys.argv[1], sys.argv[2]
    if not {f}(ckpt, checksum):
        sys.exit(f"checksum mismatch for {{ckpt}}; refusing to load it")
    print("checkpoint verified")
'''),
    # ---- CWE-338 weak PRNG for a security value
    _t(338, "ao", '''
import hashlib
import random
import secrets
import sqlite3
import string
''', '''
def {f}({v}: str) -> str:
    """Issue an API key for a client of the inference service; only its hash is stored."""
    alphabet = string.ascii_letters + string.digits
    api_key = "sk-" + "".join(random.choices(alphabet, k=40))  #!V
    with sqlite3.connect("clients.db") as conn:
        conn.execute(
            "INSERT INTO api_keys (client, key_sha256) VALUES (?, ?)",
            ({v}, hashlib.sha256(api_key.encode()).hexdigest()),
        )
    return api_key
''', '''
def {f}({v}: str) -> str:
    """Issue an API key for a client of the inference service; only its hash is stored."""
    alphabet = string.ascii_letters + string.digits
    api_key = "sk-" + "".join(secrets.choice(alphabet) for _ in range(40))
    with sqlite3.connect("clients.db") as conn:
        conn.execute(
            "INSERT INTO api_keys (client, key_sha256) VALUES (?, ?)",
            ({v}, hashlib.sha256(api_key.encode()).hexdigest()),
        )
    return api_key
'''),
    _t(338, "ap", '''
import random
import secrets
import smtplib
import time
from email.message import EmailMessage

PENDING_CODES: dict[str, tuple[str, float]] = {{}}
''', '''
def {f}({v}: str) -> None:
    """Email a 6-digit sign-in code to a user of the desktop app's sync service."""
    code = f"{{random.randint(0, 999_999):06d}}"  #!V
    PENDING_CODES[{v}] = (code, time.time() + 600)
    msg = EmailMessage()
    msg["To"] = {v}
    msg["From"] = "no-reply@labelsync.example"
    msg["Subject"] = "Your sign-in code"
    msg.set_content(f"Your code is {{code}}. It expires in 10 minutes.")
    with smtplib.SMTP("localhost") as smtp:
        smtp.send_message(msg)
''', '''
def {f}({v}: str) -> None:
    """Email a 6-digit sign-in code to a user of the desktop app's sync service."""
    code = f"{{secrets.randbelow(1_000_000):06d}}"
    PENDING_CODES[{v}] = (code, time.time() + 600)
    msg = EmailMessage()
    msg["To"] = {v}
    msg["From"] = "no-reply@labelsync.example"
    msg["Subject"] = "Your sign-in code"
    msg.set_content(f"Your code is {{code}}. It expires in 10 minutes.")
    with smtplib.SMTP("localhost") as smtp:
        smtp.send_message(msg)
'''),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ao", '''
import os

import boto3
''', '''
def {f}({v}: str, bucket: str = "ml-experiment-results") -> str:
    """Upload a finished run's metrics file to S3 and return its s3:// URI."""
    s3 = boto3.client(
        "s3",
        aws_access_key_id="AKIA4QX7RZ2M6KJ3TLNB",  #!V
        aws_secret_access_key="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",  #!V
        region_name="eu-west-1",
    )
    object_key = f"runs/{{os.path.basename({v})}}"
    s3.upload_file({v}, bucket, object_key)
    return f"s3://{{bucket}}/{{object_key}}"
''', '''
def {f}({v}: str, bucket: str = "ml-experiment-results") -> str:
    """Upload a finished run's metrics file to S3 and return its s3:// URI."""
    # credentials come from the standard chain (env vars, ~/.aws, instance role)
    s3 = boto3.client("s3", region_name=os.environ.get("AWS_REGION", "eu-west-1"))
    object_key = f"runs/{{os.path.basename({v})}}"
    s3.upload_file({v}, bucket, object_key)
    return f"s3://{{bucket}}/{{object_key}}"
'''),
    _t(798, "ap", '''
import os

import pandas as pd
import psycopg
''', '''
def {f}({v}: str) -> pd.DataFrame:
    """Pull one month of {t} from the warehouse for the monthly churn report."""
    conn = psycopg.connect(
        host="analytics-db.internal",
        dbname="warehouse",
        user="report_bot",
        password="Wh5!kR9qz2#Lm7vP",  #!V
    )
    with conn:
        frame = pd.read_sql(
            "SELECT * FROM monthly_{t} WHERE month = %(month)s", conn, params={{"month": {v}}}
        )
    return frame
''', '''
def {f}({v}: str) -> pd.DataFrame:
    """Pull one month of {t} from the warehouse for the monthly churn report."""
    conn = psycopg.connect(
        host=os.environ.get("WAREHOUSE_HOST", "analytics-db.internal"),
        dbname="warehouse",
        user=os.environ["WAREHOUSE_USER"],
        password=os.environ["WAREHOUSE_PASSWORD"],
    )
    with conn:
        frame = pd.read_sql(
            "SELECT * FROM monthly_{t} WHERE month = %(month)s", conn, params={{"month": {v}}}
        )
    return frame
'''),
    # ---- CWE-611 XML external entities
    _t(611, "ao", '''
from flask import Flask, jsonify, request
from lxml import etree

app = Flask(__name__)
''', '''
@app.post("/annotations/import")
def {f}():
    """Import a Pascal VOC annotation file uploaded from the labeling UI."""
    {v} = request.files["annotation"].read()
    parser = etree.XMLParser(resolve_entities=True)  #!V
    root = etree.fromstring({v}, parser)
    boxes = [
        {{
            "label": obj.findtext("name"),
            "bbox": [int(float(obj.findtext(f"bndbox/{{c}}"))) for c in ("xmin", "ymin", "xmax", "ymax")],
        }}
        for obj in root.iter("object")
    ]
    return jsonify(image=root.findtext("filename"), boxes=boxes)
''', '''
@app.post("/annotations/import")
def {f}():
    """Import a Pascal VOC annotation file uploaded from the labeling UI."""
    {v} = request.files["annotation"].read()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring({v}, parser)
    boxes = [
        {{
            "label": obj.findtext("name"),
            "bbox": [int(float(obj.findtext(f"bndbox/{{c}}"))) for c in ("xmin", "ymin", "xmax", "ymax")],
        }}
        for obj in root.iter("object")
    ]
    return jsonify(image=root.findtext("filename"), boxes=boxes)
'''),
    _t(611, "ap", '''
import csv
import xml.sax
from xml.sax.handler import feature_external_ges
''', '''
class ReadingHandler(xml.sax.ContentHandler):
    """Collect <reading sensor=".." ts=".." val=".."/> elements from a weather-station export."""

    def __init__(self, writer):
        super().__init__()
        self.writer = writer

    def startElement(self, tag, attrs):
        if tag == "reading":
            self.writer.writerow([attrs.get("sensor"), attrs.get("ts"), attrs.get("val")])


def {f}({v}: str, out_csv: str) -> None:
    """Convert a (multi-GB) station XML export to CSV without loading it into memory."""
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)  #!V
    with open(out_csv, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["sensor", "ts", "reading"])
        parser.setContentHandler(ReadingHandler(writer))
        parser.parse({v})
''', '''
class ReadingHandler(xml.sax.ContentHandler):
    """Collect <reading sensor=".." ts=".." val=".."/> elements from a weather-station export."""

    def __init__(self, writer):
        super().__init__()
        self.writer = writer

    def startElement(self, tag, attrs):
        if tag == "reading":
            self.writer.writerow([attrs.get("sensor"), attrs.get("ts"), attrs.get("val")])


def {f}({v}: str, out_csv: str) -> None:
    """Convert a (multi-GB) station XML export to CSV without loading it into memory."""
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, False)
    with open(out_csv, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["sensor", "ts", "reading"])
        parser.setContentHandler(ReadingHandler(writer))
        parser.parse({v})
'''),
    # ---- CWE-918 server-side request forgery
    _t(918, "ao", '''
import io
import ipaddress
import socket
from urllib.parse import urlparse

import requests
from fastapi import FastAPI, HTTPException
from PIL import Image
from pydantic import BaseModel

from vision import classify_image

app = FastAPI()


class ImageRequest(BaseModel):
    url: str
''', '''
@app.post("/classify-url")
def {f}({v}: ImageRequest):
    """Classify an image given by URL (used by the chat-bot integration)."""
    resp = requests.get({v}.url, timeout=10)  #!V
    resp.raise_for_status()
    image = Image.open(io.BytesIO(resp.content)).convert("RGB")
    return {{"labels": classify_image(image)}}
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


@app.post("/classify-url")
def {f}({v}: ImageRequest):
    """Classify an image given by URL (used by the chat-bot integration)."""
    if not _is_public_http_url({v}.url):
        raise HTTPException(status_code=400, detail="URL must point to a public http(s) host")
    resp = requests.get({v}.url, timeout=10, allow_redirects=False)
    resp.raise_for_status()
    image = Image.open(io.BytesIO(resp.content)).convert("RGB")
    return {{"labels": classify_image(image)}}
'''),
    _t(918, "ap", '''
from urllib.parse import urlparse

import pandas as pd
from flask import Flask, abort, jsonify, request

app = Flask(__name__)
ALLOWED_DATA_HOSTS = {{"catalog.data.gov", "raw.githubusercontent.com", "storage.googleapis.com"}}
''', '''
@app.post("/datasets/import")
def {f}():
    """Import a public CSV dataset by URL and return a quick profile of its columns."""
    {v} = request.get_json()["source_url"]
    frame = pd.read_csv({v})  #!V
    profile = {{
        col: {{"dtype": str(frame[col].dtype), "nulls": int(frame[col].isna().sum())}}
        for col in frame.columns
    }}
    return jsonify(rows=len(frame), columns=profile)
''', '''
@app.post("/datasets/import")
def {f}():
    """Import a public CSV dataset by URL and return a quick profile of its columns."""
    {v} = request.get_json()["source_url"]
    parts = urlparse({v})
    if parts.scheme != "https" or parts.hostname not in ALLOWED_DATA_HOSTS:
        abort(400, description="dataset URL must be https on an approved host")
    frame = pd.read_csv({v})
    profile = {{
        col: {{"dtype": str(frame[col].dtype), "nulls": int(frame[col].isna().sum())}}
        for col in frame.columns
    }}
    return jsonify(rows=len(frame), columns=profile)
'''),
    # ---- CWE-377 insecure temporary file
    _t(377, "ao", '''
import os
import tempfile

import pandas as pd
from slack_sdk import WebClient

slack = WebClient(token=os.environ["SLACK_BOT_TOKEN"])
''', '''
def {f}({v}: pd.DataFrame, channel: str) -> None:
    """Write the daily QA summary to an Excel file and post it to the team's Slack channel."""
    xlsx_path = tempfile.mktemp(suffix=".xlsx", prefix="qa_summary_")  #!V
    {v}.to_excel(xlsx_path, index=False)
    try:
        slack.files_upload_v2(channel=channel, file=xlsx_path, title="Daily QA summary")
    finally:
        os.remove(xlsx_path)
''', '''
def {f}({v}: pd.DataFrame, channel: str) -> None:
    """Write the daily QA summary to an Excel file and post it to the team's Slack channel."""
    with tempfile.TemporaryDirectory(prefix="qa_summary_") as tmpdir:
        xlsx_path = os.path.join(tmpdir, "qa_summary.xlsx")
        {v}.to_excel(xlsx_path, index=False)
        slack.files_upload_v2(channel=channel, file=xlsx_path, title="Daily QA summary")
'''),
    _t(377, "ap", '''
import os
import subprocess
import tempfile
''', '''
def {f}({v}: str) -> str:
    """Open a cell's source in the user's $EDITOR (like `git commit`) and return the edited code."""
    scratch = os.path.join(tempfile.gettempdir(), "cell_edit.py")  #!V
    with open(scratch, "w") as fh:  #!V
        fh.write({v})
    editor = os.environ.get("EDITOR", "nano")
    subprocess.run([editor, scratch], check=True)
    with open(scratch) as fh:
        return fh.read()
''', '''
def {f}({v}: str) -> str:
    """Open a cell's source in the user's $EDITOR (like `git commit`) and return the edited code."""
    fd, scratch = tempfile.mkstemp(prefix="cell_edit_", suffix=".py")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write({v})
        editor = os.environ.get("EDITOR", "nano")
        subprocess.run([editor, scratch], check=True)
        with open(scratch) as fh:
            return fh.read()
    finally:
        os.remove(scratch)
'''),
]

FAMILIES_AO = sorted({t.cwe for t in TEMPLATES_AO})


def heldout_templates_ao() -> list[Template]:
    """The 26 variant-"ao"/"ap" templates (final evaluation only).

    >>> len(heldout_templates_ao()), len(FAMILIES_AO), sorted({t.variant for t in heldout_templates_ao()})
    (26, 13, ['ao', 'ap'])
    """
    return list(TEMPLATES_AO)
