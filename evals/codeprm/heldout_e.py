'''Blind template variant "e": a fresh TEST variant, evaluated exactly once at the very end.

Written blind on 2026-11-30 (together with variant "v"), after variant d's aggregate results
were known and before any model was trained or run on these templates, in idioms that differ
from variants a/b/c/d/v (``sh -c`` argv lists, ``sqlite3.executescript``, ``ast``-compiled
aiohttp uploads, ``pickle.Unpickler`` over a Redis cache, PBKDF2-SHA1 with few rounds, httpx
without verification, ``uuid1`` reset tokens, JWT signing literals, FastAPI ``FileResponse``,
Starlette ``HTMLResponse`` f-strings, ``ElementTree.iterparse``, urllib3 webhooks from a JSON
body, ``/var/tmp`` copies). One vulnerable/fixed pair per CWE family (13).

Evaluation only (benchmarks/codeprm_eval.py --variant e). It lives OUTSIDE
``mutations.TEMPLATES``; no script in scripts/ imports it (tests/test_codeprm_heldout_d.py
asserts that). Do not train, calibrate, select or tune on this module.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANT = "e"

TEMPLATES_E: list[Template] = [
    # ---- CWE-78: a shell reached through an argv list
    _t(78, "e", "import subprocess", """
def {f}(archive_name: str, workdir: str = "/srv/{t}"):
    script = "cd " + workdir + " && tar xzf " + archive_name
    worker = subprocess.Popen(["/bin/sh", "-c", script], stdout=subprocess.PIPE)  #!V
    return worker.wait()
""", """
def {f}(archive_name: str, workdir: str = "/srv/{t}"):
    worker = subprocess.Popen(["tar", "xzf", archive_name], cwd=workdir, stdout=subprocess.PIPE)
    return worker.wait()
"""),
    # ---- CWE-89: executescript over a joined batch of INSERTs
    _t(89, "e", "import sqlite3", """
def {f}(db_path, rows):
    statements = ["INSERT INTO {t} (label, note) VALUES ('%s', '%s');" % (r["label"], r["note"]) for r in rows]
    with sqlite3.connect(db_path) as con:
        con.executescript("\\n".join(statements))  #!V
    return len(statements)
""", """
def {f}(db_path, rows):
    params = [(r["label"], r["note"]) for r in rows]
    with sqlite3.connect(db_path) as con:
        con.executemany("INSERT INTO {t} (label, note) VALUES (?, ?)", params)
    return len(params)
"""),
    # ---- CWE-94: aiohttp upload compiled through ast and executed
    _t(94, "e", "import ast\nfrom aiohttp import web", """
async def {f}(request: web.Request) -> web.Response:
    source = await request.text()
    tree = ast.parse(source, mode="exec")
    scope = {{}}
    exec(compile(tree, "<plugin>", "exec"), scope)  #!V
    return web.json_response(sorted(k for k in scope if not k.startswith("__")))
""", """
async def {f}(request: web.Request) -> web.Response:
    source = await request.text()
    scope = ast.literal_eval(source)
    if not isinstance(scope, dict):
        raise web.HTTPBadRequest()
    return web.json_response(sorted(str(k) for k in scope))
"""),
    # ---- CWE-502: pickle.Unpickler over bytes from a shared Redis cache
    _t(502, "e", "import io\nimport pickle\nimport redis", """
def {f}(cache: redis.Redis, {v}: str):
    blob = cache.get("{t}:" + {v})
    if blob is None:
        return None
    return pickle.Unpickler(io.BytesIO(blob)).load()  #!V
""", """
def {f}(cache: redis.Redis, {v}: str):
    import json
    blob = cache.get("{t}:" + {v})
    if blob is None:
        return None
    return json.loads(blob.decode("utf-8"))
"""),
    # ---- CWE-328: PBKDF2 over SHA-1 with a token iteration count
    _t(328, "e", "import hashlib\nimport os", """
def {f}(password: str):
    salt = os.urandom(8)
    derived = hashlib.pbkdf2_hmac("sha1", password.encode(), salt, 1000)  #!V
    return salt.hex() + ":" + derived.hex()
""", """
def {f}(password: str):
    salt = os.urandom(16)
    derived = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000)
    return salt.hex() + ":" + derived.hex()
"""),
    # ---- CWE-327: an httpx client that skips TLS verification
    _t(327, "e", "import httpx", """
def {f}(base_url: str, {v}: str):
    with httpx.Client(base_url=base_url, verify=False) as api:  #!V
        return api.get("/v1/{t}/" + {v}).json()
""", """
def {f}(base_url: str, {v}: str):
    with httpx.Client(base_url=base_url, verify=True) as api:
        return api.get("/v1/{t}/" + {v}).json()
"""),
    # ---- CWE-338: password-reset tokens from uuid1 (time + MAC)
    _t(338, "e", "import uuid", """
def {f}(account, store):
    reset_token = uuid.uuid1().hex  #!V
    store.save(account.id, reset_token)
    return reset_token
""", """
def {f}(account, store):
    import secrets
    reset_token = secrets.token_urlsafe(32)
    store.save(account.id, reset_token)
    return reset_token
"""),
    # ---- CWE-798: a JWT signed with a literal key
    _t(798, "e", "import jwt", """
def {f}(user_id: int) -> str:
    claims = {{"sub": str(user_id), "scope": "{t}"}}
    return jwt.encode(claims, "prod-signing-key-{t}-7c1e", algorithm="HS256")  #!V
""", """
def {f}(user_id: int) -> str:
    import os
    claims = {{"sub": str(user_id), "scope": "{t}"}}
    return jwt.encode(claims, os.environ["JWT_SIGNING_KEY"], algorithm="HS256")
"""),
    # ---- CWE-22: FastAPI file download joined with a path parameter
    _t(22, "e", "from pathlib import Path\nfrom fastapi import FastAPI\nfrom fastapi.responses import FileResponse\n\napi = FastAPI()\nUPLOAD_ROOT = Path(\"/srv/{t}/uploads\")", """
@api.get("/download/{{{v}:path}}")
async def {f}({v}: str):
    return FileResponse(UPLOAD_ROOT / {v})  #!V
""", """
@api.get("/download/{{{v}:path}}")
async def {f}({v}: str):
    from fastapi import HTTPException
    target = (UPLOAD_ROOT / {v}).resolve()
    if not target.is_relative_to(UPLOAD_ROOT.resolve()):
        raise HTTPException(status_code=404)
    return FileResponse(target)
"""),
    # ---- CWE-79: Starlette HTMLResponse built with an f-string
    _t(79, "e", "from starlette.requests import Request\nfrom starlette.responses import HTMLResponse", """
async def {f}(request: Request):
    {v} = request.query_params.get("q", "")
    return HTMLResponse(f"<h2>No results for <em>{{{v}}}</em></h2>")  #!V
""", """
async def {f}(request: Request):
    import html
    {v} = request.query_params.get("q", "")
    return HTMLResponse(f"<h2>No results for <em>{{html.escape({v})}}</em></h2>")
"""),
    # ---- CWE-611: ElementTree.iterparse over an uploaded document
    _t(611, "e", "import xml.etree.ElementTree as ElementTree", """
def {f}(upload_stream):
    totals = {{}}
    for _event, elem in ElementTree.iterparse(upload_stream):  #!V
        if elem.tag == "line":
            totals[elem.get("sku")] = totals.get(elem.get("sku"), 0) + int(elem.get("qty", "0"))
    return totals
""", """
def {f}(upload_stream):
    import defusedxml.ElementTree as SafeTree
    totals = {{}}
    for _event, elem in SafeTree.iterparse(upload_stream):
        if elem.tag == "line":
            totals[elem.get("sku")] = totals.get(elem.get("sku"), 0) + int(elem.get("qty", "0"))
    return totals
"""),
    # ---- CWE-918: urllib3 webhook delivery to a URL from the JSON body
    _t(918, "e", "import json\nimport urllib3\n\nhttp = urllib3.PoolManager()", """
def {f}(event_body: bytes):
    event = json.loads(event_body)
    delivery = http.request("POST", event["webhook_url"], body=json.dumps(event["data"]))  #!V
    return delivery.status
""", """
def {f}(event_body: bytes):
    from urllib.parse import urlsplit
    event = json.loads(event_body)
    target = urlsplit(event["webhook_url"])
    if target.scheme != "https" or target.hostname not in ("hooks.{t}.example",):
        raise PermissionError("webhook host not allowed")
    delivery = http.request("POST", target.geturl(), body=json.dumps(event["data"]))
    return delivery.status
"""),
    # ---- CWE-377: a copy with a guessable name in /var/tmp
    _t(377, "e", "import os\nimport shutil", """
def {f}(source_file):
    staging = "/var/tmp/" + os.path.basename(source_file) + ".staging"  #!V
    shutil.copyfile(source_file, staging)
    return staging
""", """
def {f}(source_file):
    import tempfile
    staging_dir = tempfile.mkdtemp(prefix="{t}-")
    staging = os.path.join(staging_dir, os.path.basename(source_file) + ".staging")
    shutil.copyfile(source_file, staging)
    return staging
"""),
]

FAMILIES_E = sorted({t.cwe for t in TEMPLATES_E})


def heldout_templates_e() -> list[Template]:
    """The 13 variant-"e" templates (final evaluation only).

    >>> len(heldout_templates_e()), len(FAMILIES_E), {t.variant for t in heldout_templates_e()}
    (13, 13, {'e'})
    """
    return list(TEMPLATES_E)
