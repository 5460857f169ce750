'''Blind template variant "v": a fresh VALIDATION variant (model / threshold selection only).

Written blind on 2026-11-30, after variant d's aggregate results were known and before any
model was trained or run on these templates, in idioms that differ from variants a/b/c/d
(Tornado handlers, Django ``.raw``, numpy ``allow_pickle``, hmac signing, urllib3 without
certificate checks, ``uuid1``/numpy tokens, dataclass defaults, manual zip extraction,
``xml.dom.pulldom``, ``AsyncHTTPClient``, ``/dev/shm`` files). One vulnerable/fixed pair per
CWE family (13).

Use: benchmarks/codeprm_select.py compares candidate models on it (with the existing val split).
It is never a source of TRAINING data: it lives outside ``mutations.TEMPLATES``, so
``mutations.templates()`` (the only way evals/codeprm/dataset.py and evals/codeprm/synth.py
get templates) cannot return it; tests/test_codeprm_heldout_d.py asserts that.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANT = "v"

TEMPLATES_V: list[Template] = [
    # ---- CWE-78: Tornado handler, getstatusoutput with a concatenated command
    _t(78, "v", "import subprocess\nimport tornado.web", """
class {f}Handler(tornado.web.RequestHandler):
    def get(self):
        {v} = self.get_argument("domain")
        status, report = subprocess.getstatusoutput("nslookup " + {v})  #!V
        self.write({{"status": status, "report": report}})
""", """
class {f}Handler(tornado.web.RequestHandler):
    def get(self):
        {v} = self.get_argument("domain")
        done = subprocess.run(["nslookup", {v}], capture_output=True, text=True)
        self.write({{"status": done.returncode, "report": done.stdout}})
"""),
    # ---- CWE-89: Django Manager.raw with %-interpolation
    _t(89, "v", "from django.shortcuts import render\nfrom .models import Article", """
def {f}(request):
    slug = request.GET["slug"]
    articles = Article.objects.raw("SELECT * FROM {t} WHERE slug = '%s'" % slug)  #!V
    return render(request, "list.html", {{"articles": list(articles)}})
""", """
def {f}(request):
    slug = request.GET["slug"]
    articles = Article.objects.raw("SELECT * FROM {t} WHERE slug = %s", [slug])
    return render(request, "list.html", {{"articles": list(articles)}})
"""),
    # ---- CWE-94: Tornado handler executing the request body
    _t(94, "v", "import tornado.web", """
class {f}Handler(tornado.web.RequestHandler):
    def post(self):
        namespace = {{}}
        exec(self.request.body.decode("utf-8"), namespace)  #!V
        self.write(str(namespace.get("answer")))
""", """
class {f}Handler(tornado.web.RequestHandler):
    def post(self):
        import json
        namespace = json.loads(self.request.body.decode("utf-8"))
        self.write(str(namespace.get("answer")))
"""),
    # ---- CWE-502: numpy.load with allow_pickle on an uploaded array file
    _t(502, "v", "import numpy as np", """
def {f}(uploaded_path):
    arrays = np.load(uploaded_path, allow_pickle=True)  #!V
    return {{name: arrays[name].shape for name in arrays.files}}
""", """
def {f}(uploaded_path):
    arrays = np.load(uploaded_path, allow_pickle=False)
    return {{name: arrays[name].shape for name in arrays.files}}
"""),
    # ---- CWE-328: session cookies signed with HMAC-MD5
    _t(328, "v", "import hmac\nimport hashlib", """
def {f}(secret: bytes, {v}: str) -> str:
    mac = hmac.new(secret, {v}.encode(), hashlib.md5).hexdigest()  #!V
    return {v} + "." + mac
""", """
def {f}(secret: bytes, {v}: str) -> str:
    mac = hmac.new(secret, {v}.encode(), hashlib.sha256).hexdigest()
    return {v} + "." + mac
"""),
    # ---- CWE-327: urllib3 pool with certificate checks switched off
    _t(327, "v", "import urllib3", """
def {f}(endpoint):
    pool = urllib3.PoolManager(cert_reqs="CERT_NONE")  #!V
    reply = pool.request("GET", endpoint)
    return reply.data
""", """
def {f}(endpoint):
    import certifi
    pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=certifi.where())
    reply = pool.request("GET", endpoint)
    return reply.data
"""),
    # ---- CWE-338: one-time codes from numpy's generator
    _t(338, "v", "import numpy as np", """
def {f}(user, digits=6):
    otp = "".join(str(d) for d in np.random.randint(0, 10, size=digits))  #!V
    user.{v} = otp
    return otp
""", """
def {f}(user, digits=6):
    import secrets
    otp = "".join(str(secrets.randbelow(10)) for _ in range(digits))
    user.{v} = otp
    return otp
"""),
    # ---- CWE-798: a dataclass with a default SMTP password
    _t(798, "v", "from dataclasses import dataclass, field", """
@dataclass
class {f}MailConfig:
    host: str = "smtp.{t}.example"
    user: str = "mailer"
    smtp_password: str = "Mailer!{t}2024"  #!V
""", """
@dataclass
class {f}MailConfig:
    host: str = "smtp.{t}.example"
    user: str = "mailer"
    smtp_password: str = field(default_factory=lambda: __import__("os").environ["SMTP_PASSWORD"])
"""),
    # ---- CWE-22: manual zip extraction without a containment check
    _t(22, "v", "import os\nimport zipfile", """
def {f}(archive_path, dest):
    with zipfile.ZipFile(archive_path) as zf:
        for member in zf.namelist():
            target = os.path.join(dest, member)
            with open(target, "wb") as out:  #!V
                out.write(zf.read(member))
""", """
def {f}(archive_path, dest):
    root = os.path.realpath(dest)
    with zipfile.ZipFile(archive_path) as zf:
        for member in zf.namelist():
            target = os.path.realpath(os.path.join(root, member))
            if os.path.commonpath([root, target]) != root:
                raise ValueError("unsafe member: " + member)
            with open(target, "wb") as out:
                out.write(zf.read(member))
"""),
    # ---- CWE-79: Tornado handler writing raw markup
    _t(79, "v", "import tornado.web", """
class {f}Handler(tornado.web.RequestHandler):
    def get(self):
        {v} = self.get_argument("tag", "")
        self.write("<li class='tag'>%s</li>" % {v})  #!V
""", """
class {f}Handler(tornado.web.RequestHandler):
    def get(self):
        from tornado.escape import xhtml_escape
        {v} = self.get_argument("tag", "")
        self.write("<li class='tag'>%s</li>" % xhtml_escape({v}))
"""),
    # ---- CWE-611: pulldom on untrusted XML
    _t(611, "v", "from xml.dom import pulldom", """
def {f}(xml_bytes):
    events = pulldom.parseString(xml_bytes)  #!V
    names = []
    for event, node in events:
        if event == pulldom.START_ELEMENT:
            names.append(node.tagName)
    return names
""", """
def {f}(xml_bytes):
    from defusedxml import pulldom as safe_pulldom
    events = safe_pulldom.parseString(xml_bytes)
    names = []
    for event, node in events:
        if event == pulldom.START_ELEMENT:
            names.append(node.tagName)
    return names
"""),
    # ---- CWE-918: Tornado AsyncHTTPClient fetching a user callback URL
    _t(918, "v", "import tornado.web\nfrom tornado.httpclient import AsyncHTTPClient", """
class {f}Handler(tornado.web.RequestHandler):
    async def get(self):
        callback = self.get_argument("callback")
        reply = await AsyncHTTPClient().fetch(callback)  #!V
        self.write(reply.body)
""", """
class {f}Handler(tornado.web.RequestHandler):
    async def get(self):
        from urllib.parse import urlparse
        callback = self.get_argument("callback")
        if urlparse(callback).hostname not in ("hooks.{t}.example", "api.{t}.example"):
            raise tornado.web.HTTPError(403)
        reply = await AsyncHTTPClient().fetch(callback)
        self.write(reply.body)
"""),
    # ---- CWE-377: fixed name in shared memory
    _t(377, "v", "import json", """
def {f}(state):
    spool = "/dev/shm/{t}-state.json"  #!V
    with open(spool, "w") as fh:
        json.dump(state, fh)
    return spool
""", """
def {f}(state):
    import os
    import tempfile
    fd, spool = tempfile.mkstemp(prefix="{t}-state-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(state, fh)
    return spool
"""),
]

FAMILIES_V = sorted({t.cwe for t in TEMPLATES_V})


def validation_templates() -> list[Template]:
    """The 13 variant-"v" templates (selection only, never training).

    >>> len(validation_templates()), len(FAMILIES_V), {t.variant for t in validation_templates()}
    (13, 13, {'v'})
    """
    return list(TEMPLATES_V)
