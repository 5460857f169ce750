'''Fresh held-out template variant "d": one vulnerable/fixed pair per CWE family, written blind.

Variant "c" of evals/codeprm/mutations.py was looked at during development (its test figures
are optimistic). These 13 pairs were written afterwards, before the model was run on any of
them, in idioms that differ from variants a/b/c (FastAPI / asyncio, psycopg2, Django,
aiohttp, joblib, boto3, tarfile, xml.sax, ssl, class-based hashers and rule engines), and
evaluated exactly once (benchmarks/codeprm_eval.py --variant d; figures in
benchmarks/RESULTS.md). Nothing was tuned after seeing the results.

They live OUTSIDE ``mutations.TEMPLATES`` on purpose: ``mutations.templates()`` (the only way
evals/codeprm/dataset.py and evals/codeprm/synth.py get templates) cannot return them, and
tests/test_codeprm_heldout_d.py asserts that. Do not train, calibrate or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANT = "d"

TEMPLATES_D: list[Template] = [
    # ---- CWE-78 OS command injection: FastAPI + asyncio shell
    _t(78, "d", "import asyncio\nfrom fastapi import APIRouter\n\nrouter = APIRouter()", """
@router.get("/thumbnail")
async def {f}(src: str, width: int = 128):
    command_line = "convert {{}} -resize {{}}x out_{t}.png".format(src, width)
    child = await asyncio.create_subprocess_shell(command_line, stdout=asyncio.subprocess.PIPE)  #!V
    produced, _ = await child.communicate()
    return {{"ok": child.returncode == 0, "log": produced.decode()}}
""", """
@router.get("/thumbnail")
async def {f}(src: str, width: int = 128):
    argv = ["convert", "--", src, "-resize", f"{{int(width)}}x", "out_{t}.png"]
    child = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    produced, _ = await child.communicate()
    return {{"ok": child.returncode == 0, "log": produced.decode()}}
"""),
    # ---- CWE-89 SQL injection: psycopg2 cursor context manager, str.format
    _t(89, "d", "import psycopg2", """
def {f}(dsn, {v}, sort_column="created_at"):
    with psycopg2.connect(dsn) as pg:
        with pg.cursor() as cur:
            cur.execute("SELECT id, total FROM {t} WHERE customer = '{{}}' ORDER BY {{}}".format({v}, sort_column))  #!V
            return cur.fetchall()
""", """
def {f}(dsn, {v}, sort_column="created_at"):
    from psycopg2 import sql
    with psycopg2.connect(dsn) as pg:
        with pg.cursor() as cur:
            stmt = sql.SQL("SELECT id, total FROM {t} WHERE customer = %s ORDER BY {{}}").format(sql.Identifier(sort_column))
            cur.execute(stmt, ({v},))
            return cur.fetchall()
"""),
    # ---- CWE-94 code injection: a rule engine class compiling user-supplied expressions
    _t(94, "d", "import operator\n\nCOMPARE = {{\"<\": operator.lt, \">\": operator.gt, \"==\": operator.eq}}", """
class {f}Rule:
    def __init__(self, expression: str):
        self.expression = expression

    def matches(self, record: dict) -> bool:
        program = compile(self.expression, "<rule>", "eval")  #!V
        return bool(eval(program, {{}}, dict(record)))  #!V
""", """
class {f}Rule:
    def __init__(self, expression: str):
        self.expression = expression

    def matches(self, record: dict) -> bool:
        field, op, bound = self.expression.split()
        return COMPARE[op](float(record[field]), float(bound))
"""),
    # ---- CWE-502 deserialisation: joblib model upload
    _t(502, "d", "import io\nimport joblib\nfrom flask import Flask, request, jsonify\n\nweb = Flask(__name__)\nREGISTRY = {{}}", """
@web.post("/models/<name>")
def {f}(name):
    raw_bytes = request.files["{v}"].read()
    estimator = joblib.load(io.BytesIO(raw_bytes))  #!V
    REGISTRY[name] = estimator
    return jsonify(stored=name)
""", """
@web.post("/models/<name>")
def {f}(name):
    import json
    raw_bytes = request.files["{v}"].read()
    estimator = json.loads(raw_bytes.decode("utf-8"))
    REGISTRY[name] = {{"coef": [float(c) for c in estimator["coef"]], "intercept": float(estimator["intercept"])}}
    return jsonify(stored=name)
"""),
    # ---- CWE-328 weak hash: a Django-style password hasher class
    _t(328, "d", "import hashlib", """
class {f}PasswordHasher:
    algorithm = "{t}_legacy"

    def encode(self, password: str, salt: str) -> str:
        digest = hashlib.sha1((salt + password).encode("utf-8")).hexdigest()  #!V
        return "%s$%s$%s" % (self.algorithm, salt, digest)
""", """
class {f}PasswordHasher:
    algorithm = "{t}_scrypt"

    def encode(self, password: str, salt: str) -> str:
        digest = hashlib.scrypt(password.encode("utf-8"), salt=salt.encode("utf-8"), n=2 ** 14, r=8, p=1).hex()
        return "%s$%s$%s" % (self.algorithm, salt, digest)
"""),
    # ---- CWE-327 broken TLS: legacy protocol pinned on an ssl context
    _t(327, "d", "import socket\nimport ssl", """
def {f}(hostname: str, port: int = 443) -> str:
    context = ssl.SSLContext(ssl.PROTOCOL_TLSv1)  #!V
    with socket.create_connection((hostname, port), timeout=10) as sock:
        with context.wrap_socket(sock, server_hostname=hostname) as tls:
            return tls.version()
""", """
def {f}(hostname: str, port: int = 443) -> str:
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection((hostname, port), timeout=10) as sock:
        with context.wrap_socket(sock, server_hostname=hostname) as tls:
            return tls.version()
"""),
    # ---- CWE-338 weak randomness: a time-seeded Random instance for API keys
    _t(338, "d", "import random\nimport time", """
def {f}(account, length=40):
    generator = random.Random(time.time())  #!V
    account.{v} = "".join(generator.choice("0123456789abcdef") for _ in range(length))  #!V
    return account.{v}
""", """
def {f}(account, length=40):
    import secrets
    account.{v} = secrets.token_hex(length // 2)
    return account.{v}
"""),
    # ---- CWE-798 hard-coded credentials: boto3 client with inline keys
    _t(798, "d", "import boto3", """
def {f}(bucket="{t}-archive"):
    s3 = boto3.client(
        "s3",
        aws_access_key_id="AKIA4EXAMPLE7Q{t}",  #!V
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCY{t}Zq",  #!V
        region_name="eu-west-1",
    )
    return s3.list_objects_v2(Bucket=bucket)
""", """
def {f}(bucket="{t}-archive"):
    session = boto3.session.Session(profile_name="{t}-reader")
    s3 = session.client(
        "s3",
        region_name="eu-west-1",
    )
    return s3.list_objects_v2(Bucket=bucket)
"""),
    # ---- CWE-22 path traversal: tar extraction of an uploaded archive (zip slip)
    _t(22, "d", "import tarfile\nfrom pathlib import Path", """
def {f}(uploaded_archive, workdir="/srv/{t}/unpacked"):
    dest = Path(workdir)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=uploaded_archive, mode="r:gz") as bundle:
        bundle.extractall(dest)  #!V
    return sorted(p.name for p in dest.iterdir())
""", """
def {f}(uploaded_archive, workdir="/srv/{t}/unpacked"):
    dest = Path(workdir)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=uploaded_archive, mode="r:gz") as bundle:
        bundle.extractall(dest, filter="data")
    return sorted(p.name for p in dest.iterdir())
"""),
    # ---- CWE-79 XSS: Django view building HTML with an f-string
    _t(79, "d", "from django.http import HttpResponse", """
def {f}(request):
    {v} = request.GET.get("display_name", "guest")
    markup = f"<p class='welcome'>Welcome back, {{{v}}}!</p>"
    return HttpResponse(markup)  #!V
""", """
def {f}(request):
    from django.utils.html import format_html
    {v} = request.GET.get("display_name", "guest")
    markup = format_html("<p class='welcome'>Welcome back, {{}}!</p>", {v})
    return HttpResponse(markup)
"""),
    # ---- CWE-611 XXE: SAX parser with external general entities switched on
    _t(611, "d", "import xml.sax\nfrom xml.sax.handler import feature_external_ges", """
def {f}(stream, handler):
    reader = xml.sax.make_parser()
    reader.setFeature(feature_external_ges, True)  #!V
    reader.setContentHandler(handler)
    reader.parse(stream)
    return handler
""", """
def {f}(stream, handler):
    import defusedxml.sax
    reader = defusedxml.sax.make_parser()
    reader.setFeature(feature_external_ges, False)
    reader.setContentHandler(handler)
    reader.parse(stream)
    return handler
"""),
    # ---- CWE-918 SSRF: aiohttp image proxy
    _t(918, "d", "import aiohttp\nfrom aiohttp import web", """
async def {f}(request: web.Request) -> web.Response:
    {v} = request.query["src"]
    async with aiohttp.ClientSession() as client:
        async with client.get({v}) as upstream:  #!V
            body = await upstream.read()
    return web.Response(body=body, content_type="image/png")
""", """
async def {f}(request: web.Request) -> web.Response:
    from urllib.parse import urlsplit
    {v} = request.query["src"]
    parts = urlsplit({v})
    if parts.scheme != "https" or parts.hostname not in ("img.example.com", "static.example.com"):
        raise web.HTTPForbidden()
    async with aiohttp.ClientSession() as client:
        async with client.get(parts.geturl()) as upstream:
            body = await upstream.read()
    return web.Response(body=body, content_type="image/png")
"""),
    # ---- CWE-377 insecure temp file: predictable name in the system temp dir
    _t(377, "d", "import csv\nimport os\nimport tempfile", """
def {f}(rows):
    export_path = os.path.join(tempfile.gettempdir(), "{t}-export-%d.csv" % os.getpid())  #!V
    with open(export_path, "w", newline="") as out:
        csv.writer(out).writerows(rows)
    return export_path
""", """
def {f}(rows):
    fd, export_path = tempfile.mkstemp(prefix="{t}-export-", suffix=".csv")
    with os.fdopen(fd, "w", newline="") as out:
        csv.writer(out).writerows(rows)
    return export_path
"""),
]

FAMILIES_D = sorted({t.cwe for t in TEMPLATES_D})


def heldout_templates() -> list[Template]:
    """The 13 variant-"d" templates (evaluation only).

    >>> len(heldout_templates()), len(FAMILIES_D), {t.variant for t in heldout_templates()}
    (13, 13, {'d'})
    """
    return list(TEMPLATES_D)
