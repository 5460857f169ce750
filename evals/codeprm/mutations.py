'''Mutation pairs: a vulnerable pattern and its fixed twin, injected into real code.

Each template is a small function in one of 13 CWE families, written twice: vulnerable and
fixed. Lines ending in ``#!V`` are the vulnerable ones (the label); the marker is removed when
rendering. Placeholders ``{f}`` (function name), ``{v}`` (a variable) and ``{t}`` (a table or
file stem) are filled with names drawn by a seeded RNG. Variants "a" and "b" of each family
is for training, variant "b" for validation (threshold calibration on an idiom the model has not
seen) and variant "c" is held out for the test set (a different idiom of the same weakness, so
the test measures generalisation beyond the training templates). A fresh variant "d", written
blind after development, lives in evals/codeprm/heldout_d.py, outside ``TEMPLATES`` so that
``templates()`` (and thus no training or validation builder) can ever return it.
'''
from __future__ import annotations

import random
from dataclasses import dataclass

MARK = "#!V"


@dataclass(frozen=True)
class Template:
    """A vulnerable/fixed pair of one CWE family."""

    cwe: int
    variant: str
    imports: str
    vulnerable: str
    fixed: str

    @property
    def key(self) -> str:
        return f"cwe{self.cwe}-{self.variant}"


def _t(cwe, variant, imports, vulnerable, fixed):
    return Template(cwe, variant, imports.strip("\n"), vulnerable.strip("\n"), fixed.strip("\n"))


TEMPLATES: list[Template] = [
    # ---- CWE-78 OS command injection
    _t(78, "a", "import subprocess", """
def {f}({v}):
    cmd = "ping -c 1 " + {v}
    return subprocess.check_output(cmd, shell=True)  #!V
""", """
def {f}({v}):
    cmd = ["ping", "-c", "1", {v}]
    return subprocess.check_output(cmd)
"""),
    _t(78, "b", "import os", """
def {f}({v}):
    os.system("tar czf /backup/out.tgz %s" % {v})  #!V
""", """
def {f}({v}):
    import shlex
    os.system("tar czf /backup/out.tgz %s" % shlex.quote({v}))
"""),
    _t(78, "c", "import subprocess\nimport sys", """
def {f}():
    {v} = sys.argv[1]
    proc = subprocess.Popen(f"grep -r {{{v}}} /var/log", shell=True, stdout=subprocess.PIPE)  #!V
    return proc.communicate()[0]
""", """
def {f}():
    {v} = sys.argv[1]
    proc = subprocess.Popen(["grep", "-r", {v}, "/var/log"], stdout=subprocess.PIPE)
    return proc.communicate()[0]
"""),
    # ---- CWE-89 SQL injection
    _t(89, "a", "import sqlite3", """
def {f}(conn, {v}):
    cur = conn.cursor()
    cur.execute("SELECT * FROM {t} WHERE name = '%s'" % {v})  #!V
    return cur.fetchall()
""", """
def {f}(conn, {v}):
    cur = conn.cursor()
    cur.execute("SELECT * FROM {t} WHERE name = ?", ({v},))
    return cur.fetchall()
"""),
    _t(89, "b", "from flask import request", """
def {f}(db):
    {v} = request.args.get("id")
    query = "DELETE FROM {t} WHERE id = " + {v}  #!V
    db.execute(query)  #!V
""", """
def {f}(db):
    {v} = request.args.get("id")
    query = "DELETE FROM {t} WHERE id = %s"
    db.execute(query, ({v},))
"""),
    _t(89, "c", "", """
def {f}(session, {v}, limit=10):
    sql = f"SELECT id, email FROM {t} WHERE owner = '{{{v}}}' LIMIT {{limit}}"  #!V
    rows = session.execute(sql).fetchall()  #!V
    return [dict(r) for r in rows]
""", """
def {f}(session, {v}, limit=10):
    sql = "SELECT id, email FROM {t} WHERE owner = :owner LIMIT :limit"
    rows = session.execute(sql, {{"owner": {v}, "limit": int(limit)}}).fetchall()
    return [dict(r) for r in rows]
"""),
    # ---- CWE-94 code injection
    _t(94, "a", "", """
def {f}({v}):
    return eval({v})  #!V
""", """
def {f}({v}):
    import ast
    return ast.literal_eval({v})
"""),
    _t(94, "b", "", """
def {f}({v}, env):
    code = "result = " + {v}
    exec(code, env)  #!V
    return env["result"]
""", """
def {f}({v}, env):
    import json
    env["result"] = json.loads({v})
    return env["result"]
"""),
    _t(94, "c", "from flask import Flask, request\napp = Flask(__name__)", """
@app.route("/calc")
def {f}():
    expr = request.args["{v}"]
    value = eval(expr, {{"__builtins__": {{}}}})  #!V
    return str(value)
""", """
@app.route("/calc")
def {f}():
    expr = request.args["{v}"]
    value = float(expr)
    return str(value)
"""),
    # ---- CWE-502 deserialisation
    _t(502, "a", "import pickle", """
def {f}({v}):
    return pickle.loads({v})  #!V
""", """
def {f}({v}):
    import json
    return json.loads({v})
"""),
    _t(502, "b", "import yaml", """
def {f}(path):
    with open(path) as fh:
        {v} = yaml.load(fh, Loader=yaml.Loader)  #!V
    return {v}
""", """
def {f}(path):
    with open(path) as fh:
        {v} = yaml.safe_load(fh)
    return {v}
"""),
    _t(502, "c", "import marshal\nimport socket", """
def {f}(sock: socket.socket):
    {v} = sock.recv(65536)
    obj = marshal.loads({v})  #!V
    return obj
""", """
def {f}(sock: socket.socket):
    {v} = sock.recv(65536)
    import json
    obj = json.loads({v}.decode("utf-8"))
    return obj
"""),
    # ---- CWE-328 / 327 weak hash or cipher
    _t(328, "a", "import hashlib", """
def {f}(password):
    return hashlib.md5(password.encode()).hexdigest()  #!V
""", """
def {f}(password):
    salt = hashlib.sha256(b"pepper").digest()
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000).hex()
"""),
    _t(328, "b", "import hashlib", """
def {f}({v}):
    h = hashlib.sha1()  #!V
    h.update({v})
    return h.hexdigest()
""", """
def {f}({v}):
    h = hashlib.sha256()
    h.update({v})
    return h.hexdigest()
"""),
    _t(328, "c", "import hashlib", """
def {f}({v}: bytes) -> str:
    digest = hashlib.new("md5", {v})  #!V
    return digest.hexdigest()
""", """
def {f}({v}: bytes) -> str:
    digest = hashlib.new("sha512", {v})
    return digest.hexdigest()
"""),
    # ---- CWE-338 weak randomness for secrets
    _t(338, "a", "import random\nimport string", """
def {f}(n=16):
    alphabet = string.ascii_letters + string.digits
    return "".join(random.choice(alphabet) for _ in range(n))  #!V
""", """
def {f}(n=16):
    import secrets
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))
"""),
    _t(338, "b", "import random", """
def {f}():
    {v} = random.randint(100000, 999999)  #!V
    return str({v})
""", """
def {f}():
    import secrets
    {v} = secrets.randbelow(900000) + 100000
    return str({v})
"""),
    _t(338, "c", "import random", """
def {f}(user):
    session_token = "%032x" % random.getrandbits(128)  #!V
    user.{v} = session_token
    return session_token
""", """
def {f}(user):
    import secrets
    session_token = secrets.token_hex(16)
    user.{v} = session_token
    return session_token
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "a", "", """
def {f}(client):
    password = "S3cr3t!{t}"  #!V
    return client.login("admin", password)
""", """
def {f}(client):
    import os
    password = os.environ["APP_PASSWORD"]
    return client.login("admin", password)
"""),
    _t(798, "b", "", """
def {f}(connect):
    return connect(host="db.internal", user="{v}", password="hunter2{t}")  #!V
""", """
def {f}(connect):
    import os
    return connect(host="db.internal", user="{v}", password=os.environ.get("DB_PASSWORD"))
"""),
    _t(798, "c", "", """
class {f}Settings:
    api_secret = "sk_live_{t}9f8e7d6c5b4a"  #!V
    timeout = 30
""", """
class {f}Settings:
    import os
    api_secret = os.environ.get("API_SECRET", "")
    timeout = 30
"""),
    # ---- CWE-22 path traversal
    _t(22, "a", "import os\nfrom flask import request", """
def {f}(base):
    name = request.args.get("file")
    with open(os.path.join(base, name)) as fh:  #!V
        return fh.read()
""", """
def {f}(base):
    name = request.args.get("file")
    with open(os.path.join(base, os.path.basename(name))) as fh:
        return fh.read()
"""),
    _t(22, "b", "from flask import send_file, request", """
def {f}():
    {v} = request.args["path"]
    return send_file("/srv/files/" + {v})  #!V
""", """
def {f}():
    from werkzeug.utils import secure_filename
    {v} = secure_filename(request.args["path"])
    return send_file("/srv/files/" + {v})
"""),
    _t(22, "c", "import sys\nfrom pathlib import Path", """
def {f}():
    {v} = sys.argv[2]
    target = Path("/var/data/uploads") / {v}
    Path(target).unlink()  #!V
""", """
def {f}():
    import os
    {v} = os.path.basename(sys.argv[2])
    target = Path("/var/data/uploads") / {v}
    target.unlink()
"""),
    # ---- CWE-79 XSS
    _t(79, "a", "from flask import request", """
def {f}():
    {v} = request.args.get("q", "")
    return "<h1>Results for " + {v} + "</h1>"  #!V
""", """
def {f}():
    from markupsafe import escape
    {v} = escape(request.args.get("q", ""))
    return "<h1>Results for " + str({v}) + "</h1>"
"""),
    _t(79, "b", "import jinja2", """
def {f}(template_dir):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir), autoescape=False)  #!V
    return env
""", """
def {f}(template_dir):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(template_dir), autoescape=True)
    return env
"""),
    _t(79, "c", "from flask import request, render_template_string", """
def {f}():
    {v} = request.form["comment"]
    page = "<div class='c'>%s</div>" % {v}
    return render_template_string(page)  #!V
""", """
def {f}():
    {v} = request.form["comment"]
    return render_template_string("<div class='c'>{{{{ c }}}}</div>", c={v})
"""),
    # ---- CWE-611 XXE
    _t(611, "a", "import xml.etree.ElementTree as ET", """
def {f}({v}):
    root = ET.fromstring({v})  #!V
    return root.attrib
""", """
def {f}({v}):
    import defusedxml.ElementTree as DET
    root = DET.fromstring({v})
    return root.attrib
"""),
    _t(611, "b", "from lxml import etree", """
def {f}(path):
    parser = etree.XMLParser(resolve_entities=True)  #!V
    return etree.parse(path, parser)
""", """
def {f}(path):
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    return etree.parse(path, parser)
"""),
    _t(611, "c", "from xml.dom import minidom\nfrom flask import request", """
def {f}():
    {v} = request.data
    doc = minidom.parseString({v})  #!V
    return doc.documentElement.tagName
""", """
def {f}():
    from defusedxml import minidom as safe_minidom
    {v} = request.data
    doc = safe_minidom.parseString({v})
    return doc.documentElement.tagName
"""),
    # ---- CWE-918 SSRF
    _t(918, "a", "import requests\nfrom flask import request", """
def {f}():
    url = request.args.get("url")
    resp = requests.get(url, timeout=5)  #!V
    return resp.text
""", """
def {f}():
    url = request.args.get("url")
    if url not in ("https://api.example.com/status", "https://api.example.com/health"):
        raise ValueError("url not allowed")
    resp = requests.get(url, timeout=5)
    return resp.text
"""),
    _t(918, "b", "import urllib.request", """
def {f}({v}):
    return urllib.request.urlopen({v}).read()  #!V
""", """
def {f}({v}):
    from urllib.parse import urlparse
    if urlparse({v}).hostname != "cdn.example.com":
        raise ValueError("host not allowed")
    return urllib.request.urlopen("https://cdn.example.com" + urlparse({v}).path).read()
"""),
    _t(918, "c", "import httpx\nimport os", """
def {f}():
    {v} = os.environ.get("WEBHOOK_TARGET")
    r = httpx.post({v}, json={{"ok": True}})  #!V
    return r.status_code
""", """
def {f}():
    {v} = "https://hooks.example.com/notify"
    r = httpx.post({v}, json={{"ok": True}})
    return r.status_code
"""),
    # ---- CWE-377 insecure temp file
    _t(377, "a", "import tempfile", """
def {f}(data):
    name = tempfile.mktemp(suffix=".txt")  #!V
    with open(name, "w") as fh:
        fh.write(data)
    return name
""", """
def {f}(data):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write(data)
    return fh.name
"""),
    _t(377, "b", "", """
def {f}(data):
    path = "/tmp/{t}_cache.json"  #!V
    with open(path, "w") as fh:
        fh.write(data)
""", """
def {f}(data):
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".json")
    with open(fd, "w") as fh:
        fh.write(data)
"""),
    _t(377, "c", "import os", """
def {f}({v}):
    lock_path = os.path.join("/tmp", "{t}.lock")  #!V
    with open(lock_path, "w") as fh:
        fh.write(str({v}))
""", """
def {f}({v}):
    import tempfile
    lock_dir = tempfile.mkdtemp()
    with open(os.path.join(lock_dir, "{t}.lock"), "w") as fh:
        fh.write(str({v}))
"""),
    # ---- CWE-327 broken cipher / TLS
    _t(327, "a", "from Crypto.Cipher import DES", """
def {f}(key, {v}):
    cipher = DES.new(key, DES.MODE_ECB)  #!V
    return cipher.encrypt({v})
""", """
def {f}(key, {v}):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    nonce = key[:12]
    return AESGCM(key).encrypt(nonce, {v}, None)
"""),
    _t(327, "b", "from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes", """
def {f}(key, {v}):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()  #!V
    return enc.update({v}) + enc.finalize()
""", """
def {f}(key, iv, {v}):
    enc = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    return enc.update({v}) + enc.finalize()
"""),
    _t(327, "c", "from cryptography.hazmat.primitives.ciphers import Cipher, algorithms", """
def {f}(key: bytes, {v}: bytes) -> bytes:
    stream = Cipher(algorithms.ARC4(key), mode=None).encryptor()  #!V
    return stream.update({v})
""", """
def {f}(key: bytes, nonce: bytes, {v}: bytes) -> bytes:
    stream = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor()
    return stream.update({v})
"""),
]

FAMILIES = sorted({t.cwe for t in TEMPLATES})
_FN = ["handle", "process", "load_item", "fetch", "run_job", "lookup", "render", "make_token", "read_entry",
       "update_record", "export_data", "sync", "dispatch", "compute", "parse_payload", "serve", "do_task"]
_VAR = ["value", "name", "data", "user_input", "payload", "arg", "item", "query", "host", "blob", "target",
        "fname", "key", "text", "raw", "param"]
_TAB = ["users", "orders", "items", "accounts", "events", "sessions", "logs", "files"]


def templates(split: str) -> list[Template]:
    """Templates of a split: "train" (variant a), "val" (variant b) or "test" (variant c).

    >>> len(templates("train")), len(templates("val")), len(templates("test")), len(FAMILIES)
    (13, 13, 13, 13)
    """
    variant = {"train": "a", "val": "b", "test": "c"}.get(split)
    if variant is None:
        raise ValueError("split must be 'train', 'val' or 'test'")
    return [t for t in TEMPLATES if t.variant == variant]


def render(t: Template, vulnerable: bool, rng: random.Random) -> tuple[str, str, list[int]]:
    """(imports, body, 1-based vulnerable lines within body) with names drawn from ``rng``.

    >>> imp, body, bad = render(TEMPLATES[0], True, random.Random(0))
    >>> bad and "shell=True" in body.splitlines()[bad[0] - 1]
    True
    """
    f = rng.choice(_FN) + ("_" + rng.choice(_VAR) if rng.random() < 0.5 else "")
    v = rng.choice(_VAR)
    tab = rng.choice(_TAB)
    src = t.vulnerable if vulnerable else t.fixed
    text = src.format(f=f, v=v, t=tab)
    lines = text.splitlines()
    bad = [i + 1 for i, ln in enumerate(lines) if ln.rstrip().endswith(MARK)]
    lines = [ln.replace("  " + MARK, "").replace(MARK, "").rstrip() for ln in lines]
    return t.imports.format(f=f, v=v, t=tab), "\n".join(lines), bad


def inside_string(lines: list[str]) -> set[int]:
    '''0-based indices ``k`` such that text inserted before ``lines[k]`` would land inside a
    multi-line string literal (docstrings included).

    >>> sorted(inside_string(['x = """a', '', 'b"""', '', 'y = 1']))
    [1, 2]
    '''
    import io
    import tokenize

    out: set[int] = set()
    starts = []  # f-string starts (Python >= 3.12 tokenizes f-strings in parts)
    fs_start, fs_end = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == fs_start:
                starts.append(tok.start[0])
            elif tok.type == fs_end and starts:
                out.update(range(starts.pop(), tok.end[0]))
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                out.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # untokenizable host: fall back to triple-quote parity per line
        open_q = None
        for k, ln in enumerate(lines):
            if open_q is not None:
                out.add(k)
            for q in ('"""', "'''"):
                if open_q in (None, q) and ln.count(q) % 2:
                    open_q = None if open_q == q else q
    return out


def inject(host: str, t: Template, vulnerable: bool, rng: random.Random) -> tuple[str, list[int]]:
    """Insert a rendered template into ``host`` code at a top-level blank line (imports on top).

    Returns the new code and the 1-based lines of the injected vulnerable statements (empty
    for the fixed twin).

    >>> code, bad = inject("x = 1\\n\\ny = 2\\n", TEMPLATES[6], True, random.Random(1))
    >>> "eval(" in code.splitlines()[bad[0] - 1]
    True
    """
    imports, body, bad = render(t, vulnerable, rng)
    hl = host.rstrip("\n").splitlines()
    # top-level insertion points: blank line followed by a non-indented line (or the end), and
    # not inside a multi-line string (a module docstring with a blank line before an unindented
    # example would otherwise swallow the template: a "vulnerable" file whose bad code is text)
    in_str = inside_string(hl)
    points = [i for i in range(len(hl)) if not hl[i].strip() and i not in in_str
              and (i + 1 == len(hl) or (hl[i + 1][:1] not in (" ", "\t", "") and not hl[i + 1].startswith((")", "]", "}"))))]
    at = rng.choice(points) if points else len(hl)
    imp = imports.splitlines() if imports else []
    new = imp + ([""] if imp else []) + hl[:at] + [""] + body.splitlines() + [""] + hl[at:]
    offset = len(imp) + (1 if imp else 0) + at + 1
    return "\n".join(new) + "\n", [offset + b for b in bad]


# Statement-level mutations: one vulnerable statement (or its fixed twin) injected into the
# body of a real function, at the indentation of the statement it precedes. ``{v}`` is a name
# taken from the host function (a parameter when there is one). These cover each family's sink
# vocabulary in many contexts; the function-level idioms of variant "c" stay held out.
STATEMENTS: dict[int, list[tuple[str, str]]] = {
    78: [("os.system('cp ' + {v} + ' /tmp/out')", "subprocess.run(['cp', {v}, '/srv/out'], check=True)"),
         ("subprocess.call('ls -l %s' % {v}, shell=True)", "subprocess.call(['ls', '-l', {v}])"),
         ("out = os.popen('file ' + str({v})).read()", "out = subprocess.run(['file', str({v})], capture_output=True).stdout"),
         ("subprocess.run(f'rm -rf {{{v}}}', shell=True)", "shutil.rmtree(os.path.basename(str({v})))")],
    89: [("cursor.execute('SELECT * FROM t WHERE k = %s' % {v})", "cursor.execute('SELECT * FROM t WHERE k = %s', ({v},))"),
         ("db.execute(\"UPDATE acct SET v = '\" + str({v}) + \"'\")", "db.execute('UPDATE acct SET v = ?', (str({v}),))"),
         ("conn.execute(f'DELETE FROM logs WHERE id = {{{v}}}')", "conn.execute('DELETE FROM logs WHERE id = ?', ({v},))")],
    94: [("result = eval({v})", "result = ast.literal_eval({v})"),
         ("exec(str({v}))", "handlers[str({v})]()"),
         ("fn = eval('lambda x: ' + str({v}))", "fn = OPERATIONS.get(str({v}))")],
    502: [("obj = pickle.loads({v})", "obj = json.loads({v})"),
          ("state = pickle.load(open({v}, 'rb'))", "state = json.load(open({v}))"),
          ("cfg = yaml.load({v}, Loader=yaml.Loader)", "cfg = yaml.safe_load({v})"),
          ("data = shelve.open(str({v}))", "data = json.loads(Path(str({v})).read_text())")],
    328: [("digest = hashlib.md5({v}).hexdigest()", "digest = hashlib.sha256({v}).hexdigest()"),
          ("h = hashlib.sha1(str({v}).encode())", "h = hashlib.blake2b(str({v}).encode())")],
    327: [("cipher = DES.new({v}, DES.MODE_ECB)", "cipher = AESGCM({v})"),
          ("mode = modes.ECB()", "mode = modes.GCM(iv)")],
    338: [("token = random.random()", "token = secrets.token_hex(16)"),
          ("nonce = random.randint(0, 2 ** 32)", "nonce = secrets.randbits(32)"),
          ("code = ''.join(random.choices(string.digits, k=6))", "code = ''.join(secrets.choice(string.digits) for _ in range(6))")],
    798: [("password = 'admin123'", "password = os.environ['ADMIN_PASSWORD']"),
          ("secret_key = 'k3y-{v}-prod'", "secret_key = os.environ.get('SECRET_KEY')"),
          ("token = 'ghp_a1b2c3d4e5f6'", "token = keyring.get_password('svc', 'token')")],
    22: [("fh = open(os.path.join(base_dir, request.args['name']))", "fh = open(os.path.join(base_dir, os.path.basename(request.args['name'])))"),
         ("path = input('file: ')\n{i}data = open(path).read()", "path = os.path.basename(input('file: '))\n{i}data = open(os.path.join(ROOT, path)).read()")],
    79: [("return '<p>' + request.args.get('msg', '') + '</p>'", "return '<p>' + escape(request.args.get('msg', '')) + '</p>'"),
         ("env = jinja2.Environment(autoescape=False)", "env = jinja2.Environment(autoescape=True)")],
    611: [("tree = etree.fromstring({v})", "tree = defusedxml.ElementTree.fromstring({v})"),
          ("parser = etree.XMLParser(resolve_entities=True)", "parser = etree.XMLParser(resolve_entities=False)")],
    918: [("resp = requests.get(request.args['url'])", "resp = requests.get(ALLOWED[request.args['site']])"),
          ("page = urllib.request.urlopen(input('url: ')).read()", "page = urllib.request.urlopen(FIXED_URL).read()")],
    377: [("tmp = tempfile.mktemp()", "tmp = tempfile.mkstemp()[1]"),
          ("out = open('/tmp/' + str({v}), 'w')", "out = tempfile.NamedTemporaryFile('w', delete=False)")],
}


def inject_statement(host: str, cwe: int, vulnerable: bool, rng: random.Random) -> tuple[str, list[int]] | None:
    """Insert one statement of family ``cwe`` into a function body of ``host``.

    Returns (code, [line of the statement] if vulnerable else []), or None when ``host`` has
    no function body to put it in.

    >>> code, bad = inject_statement("def f(a):\\n    return a\\n", 94, True, random.Random(0))
    >>> "eval" in code.splitlines()[bad[0] - 1] or "exec" in code.splitlines()[bad[0] - 1]
    True
    """
    import re

    lines = host.splitlines()
    in_str = inside_string(lines)
    spots = []
    for i, ln in enumerate(lines):
        if i in in_str:  # a "def" in a docstring example is not a function
            continue
        m = re.match(r"(\s*)(async\s+)?def\s+\w+\((.*?)[),]", ln)
        if m:
            params = [p.strip().split(":")[0].split("=")[0].strip("* ") for p in m.group(3).split(",")]
            params = [p for p in params if p and p not in ("self", "cls")]
            for j in range(i + 1, min(len(lines), i + 30)):
                body = lines[j]
                ind = len(body) - len(body.lstrip())
                if body.strip() and ind > len(m.group(1)) and not body.strip().startswith(("'", '"', ")", "]", "}", "#", "@")) \
                        and (lines[j - 1].rstrip().endswith(":") or j == i + 1 or lines[j - 1].strip() == "" or ind <= len(lines[j - 1]) - len(lines[j - 1].lstrip())):
                    spots.append((j, body[:ind], params))
                    break
    if not spots:
        return None
    j, indent, params = rng.choice(spots)
    v = rng.choice(params) if params else rng.choice(_VAR)
    bad_stmt, good_stmt = rng.choice(STATEMENTS[cwe])
    stmt = (bad_stmt if vulnerable else good_stmt).format(v=v, i=indent)
    new_lines = [indent + s if k == 0 else s for k, s in enumerate(stmt.split("\n"))]
    out = lines[:j] + new_lines + lines[j:]
    bad = [j + len(new_lines)] if vulnerable else []  # the sink is the statement's last line
    return "\n".join(out) + "\n", bad
