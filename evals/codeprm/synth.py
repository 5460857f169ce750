"""Compositional generator of small vulnerable / fixed Python functions (training data).

A function is composed from random parts: an untrusted *source* (request args/form/body,
input(), sys.argv, environment, socket, file), 0-2 *propagation* steps (concatenation,
f-string, % and .format, joins, method calls), an optional *sanitizer*, a *sink* of one of the
13 CWE families (or its safe counterpart), and filler statements, with random names. The sink
line's label is known by construction; the analysers (bandit + taint) label the other lines.
Its parts are generic (the sink vocabulary of bandit's rules and of the taint labeller), not
the function-level idioms of the held-out template variant "c".

    >>> import random
    >>> code, bad, cwe = synth_function(random.Random(0), vulnerable=True)
    >>> len(bad) in (1, 2) and cwe > 0
    True
"""
from __future__ import annotations

import random

NAMES = ["value", "name", "data", "user_input", "payload", "arg", "item", "query", "host", "blob", "target",
         "fname", "key", "text", "raw", "param", "entry", "cmd_arg", "path_part", "term", "ident", "url_in",
         "content", "body", "msg", "filename", "selector", "expr", "record", "token_in"]
FUNCS = ["handle", "process", "load", "fetch", "run", "lookup", "render", "make", "read", "update", "export",
         "sync", "dispatch", "compute", "parse", "serve", "do_task", "view", "api", "worker", "job", "task",
         "get_report", "save", "download", "upload", "check", "preview", "convert", "import_data"]

# (code template using {x} as the untrusted value, needs-import)
SOURCES = [
    ("request.args.get({k!r})", "from flask import request"),
    ("request.args[{k!r}]", "from flask import request"),
    ("request.form.get({k!r}, '')", "from flask import request"),
    ("request.form[{k!r}]", "from flask import request"),
    ("request.get_json()[{k!r}]", "from flask import request"),
    ("request.values.get({k!r})", "from flask import request"),
    ("request.cookies.get({k!r})", "from flask import request"),
    ("request.data", "from flask import request"),
    ("request.GET.get({k!r})", ""),
    ("input({p!r})", ""),
    ("input()", ""),
    ("sys.argv[1]", "import sys"),
    ("sys.argv[-1]", "import sys"),
    ("os.environ.get({K!r})", "import os"),
    ("os.environ[{K!r}]", "import os"),
    ("os.getenv({K!r})", "import os"),
    ("conn.recv(4096)", ""),
    ("sys.stdin.readline()", "import sys"),
]
PROPAGATE = [
    "{y} = {x}.strip()", "{y} = str({x})", "{y} = {x}.lower()", "{y} = '{w}' + {x}", "{y} = {x} + '{w}'",
    "{y} = f'{w}{{{x}}}'", "{y} = '%s' % {x}", "{y} = '{w}{{}}'.format({x})", "{y} = {x}.replace(' ', '')",
    "{y} = ' '.join([{x}])",
]
SANITIZE = [("{y} = int({x})", (22, 78, 89, 94, 79, 918)), ("{y} = shlex.quote({x})", (78,)),
            ("{y} = os.path.basename({x})", (22,)), ("{y} = escape({x})", (79,)),
            ("{y} = secure_filename({x})", (22,))]
FILLER = [
    "log.info('handling %s', {x})", "if not {x}:\n{i}    return None", "result = []", "count = 0",
    "logger.debug('start')", "started = time.time()", "for i in range(3):\n{i}    count += i",
    "items = list(range(10))", "config = load_config()", "assert isinstance(count, int)",
]

# family -> list of (vulnerable sink, safe sink); {x} is the (possibly tainted) value
SINKS: dict[int, list[tuple[str, str]]] = {
    78: [("os.system({s})", "subprocess.run(['echo', {x}], check=False)"),
         ("os.popen({s}).read()", "subprocess.run(['cat', {x}], capture_output=True).stdout"),
         ("subprocess.call({s}, shell=True)", "subprocess.call(['ls', {x}])"),
         ("subprocess.run({s}, shell=True, check=True)", "subprocess.run(['grep', {x}, 'log.txt'], check=True)"),
         ("subprocess.Popen({s}, shell=True)", "subprocess.Popen(['ping', '-c', '1', {x}])"),
         ("subprocess.check_output({s}, shell=True)", "subprocess.check_output(['whois', {x}])"),
         ("subprocess.getoutput({s})", "subprocess.check_output(['du', '-sh', {x}])")],
    89: [("cursor.execute({q})", "cursor.execute('SELECT * FROM {t} WHERE c = %s', ({x},))"),
         ("db.execute({q})", "db.execute('SELECT * FROM {t} WHERE c = ?', ({x},))"),
         ("conn.execute({q}).fetchall()", "conn.execute('SELECT * FROM {t} WHERE c = :v', {{'v': {x}}}).fetchall()"),
         ("session.execute(text({q}))", "session.execute(text('SELECT * FROM {t} WHERE c = :v'), {{'v': {x}}})")],
    94: [("eval({x})", "ast.literal_eval({x})"), ("exec({x})", "ACTIONS[{x}]()"),
         ("eval({s})", "float({x})"), ("exec(compile({x}, '<input>', 'exec'))", "json.loads({x})")],
    502: [("pickle.loads({x})", "json.loads({x})"), ("pickle.load(open({x}, 'rb'))", "json.load(open({x}))"),
          ("marshal.loads({x})", "json.loads({x})"), ("yaml.load({x}, Loader=yaml.Loader)", "yaml.safe_load({x})"),
          ("yaml.load({x})", "yaml.safe_load({x})"), ("shelve.open({x})", "dbm.open({x}, 'r')"),
          ("dill.loads({x})", "json.loads({x})"), ("jsonpickle.decode({x})", "json.loads({x})")],
    328: [("hashlib.md5({b}).hexdigest()", "hashlib.sha256({b}).hexdigest()"),
          ("hashlib.sha1({b}).hexdigest()", "hashlib.sha512({b}).hexdigest()"),
          ("hashlib.new('md5', {b}).digest()", "hashlib.new('sha256', {b}).digest()"),
          ("hashlib.new('sha1', {b})", "hashlib.new('blake2b', {b})"),
          ("MD5.new({b}).hexdigest()", "SHA256.new({b}).hexdigest()")],
    327: [("DES.new(key, DES.MODE_ECB)", "AES.new(key, AES.MODE_GCM)"),
          ("ARC4.new(key)", "ChaCha20.new(key=key)"),
          ("Cipher(algorithms.AES(key), modes.ECB())", "Cipher(algorithms.AES(key), modes.GCM(iv))"),
          ("Cipher(algorithms.TripleDES(key), modes.CBC(iv))", "Cipher(algorithms.AES(key), modes.CTR(iv))"),
          ("Cipher(algorithms.Blowfish(key), modes.CBC(iv))", "Cipher(algorithms.ChaCha20(key, iv), mode=None)"),
          ("ssl._create_unverified_context()", "ssl.create_default_context()"),
          ("requests.get(url, verify=False, timeout=5)", "requests.get(url, verify=True, timeout=5)")],
    338: [("random.random()", "secrets.randbits(64)"), ("random.randint(0, 999999)", "secrets.randbelow(1000000)"),
          ("random.getrandbits(128)", "secrets.randbits(128)"),
          ("''.join(random.choice(ALPHABET) for _ in range(16))", "''.join(secrets.choice(ALPHABET) for _ in range(16))"),
          ("random.choices(ALPHABET, k=12)", "[secrets.choice(ALPHABET) for _ in range(12)]"),
          ("'%032x' % random.getrandbits(128)", "secrets.token_hex(16)"),
          ("random.SystemRandom().random() if False else random.uniform(0, 1)", "secrets.SystemRandom().random()")],
    798: [("password = '{lit}'", "password = os.environ['APP_PASSWORD']"),
          ("{secret_name} = '{lit}'", "{secret_name} = os.environ.get('{SECRET_NAME}')"),
          ("self.{secret_name} = '{lit}'", "self.{secret_name} = config['{secret_name}']"),
          ("settings = {{'{secret_name}': '{lit}', 'debug': False}}", "settings = {{'{secret_name}': os.environ['{SECRET_NAME}'], 'debug': False}}"),
          ("api_key = '{lit}'", "api_key = os.environ.get('API_KEY')"),
          ("secret_key = '{lit}'", "secret_key = settings.SECRET_KEY"),
          ("auth_token = '{lit}'", "auth_token = keyring.get_password('svc', 'token')"),
          ("client.login(user='admin', password='{lit}')", "client.login(user='admin', password=os.environ['PW'])"),
          ("connect(host='db', user='app', passwd='{lit}')", "connect(host='db', user='app', passwd=get_secret('db'))"),
          ("DB_PASSWORD = '{lit}'", "DB_PASSWORD = os.environ.get('DB_PASSWORD', '')")],
    22: [("open(os.path.join(BASE_DIR, {x})).read()", "open(os.path.join(BASE_DIR, os.path.basename({x}))).read()"),
         ("open('/srv/data/' + {x}, 'rb').read()", "open('/srv/data/' + secure_filename({x}), 'rb').read()"),
         ("send_file(os.path.join(UPLOADS, {x}))", "send_from_directory(UPLOADS, secure_filename({x}))"),
         ("os.remove(os.path.join(CACHE, {x}))", "os.remove(os.path.join(CACHE, os.path.basename({x})))"),
         ("shutil.rmtree(os.path.join(ROOT, {x}))", "shutil.rmtree(os.path.join(ROOT, os.path.basename({x})))"),
         ("Path(ROOT, {x}).read_text()", "Path(ROOT, Path({x}).name).read_text()"),
         ("Path({x}).unlink()", "Path(ROOT, os.path.basename({x})).unlink()")],
    79: [("return '<div>' + {x} + '</div>'", "return '<div>' + escape({x}) + '</div>'"),
         ("return f'<p>Hello {{{x}}}</p>'", "return f'<p>Hello {{escape({x})}}</p>'"),
         ("return render_template_string('<h1>%s</h1>' % {x})", "return render_template_string('<h1>{{{{ v }}}}</h1>', v={x})"),
         ("return Markup({x})", "return escape({x})"),
         ("return make_response('<b>%s</b>' % {x})", "return make_response(escape({x}))"),
         ("env = jinja2.Environment(autoescape=False)", "env = jinja2.Environment(autoescape=True)"),
         ("return mark_safe({x})", "return format_html('{{}}', {x})")],
    611: [("ET.fromstring({x})", "defusedxml.ElementTree.fromstring({x})"),
          ("ET.parse({x})", "defusedxml.ElementTree.parse({x})"),
          ("minidom.parseString({x})", "defusedxml.minidom.parseString({x})"),
          ("etree.fromstring({x})", "etree.fromstring({x}, etree.XMLParser(resolve_entities=False))"),
          ("etree.XMLParser(resolve_entities=True)", "etree.XMLParser(resolve_entities=False, no_network=True)"),
          ("xml.sax.parseString({x}, handler)", "defusedxml.sax.parseString({x}, handler)")],
    918: [("requests.get({x}, timeout=5).text", "requests.get(ALLOWED_URLS[{x}], timeout=5).text"),
          ("{http}.{verb}({x}, timeout=10)", "{http}.{verb}(SERVICE_URL, params={{'q': {x}}}, timeout=10)"),
          ("requests.post({x}, json=payload, timeout=5)", "requests.post(WEBHOOK_URL, json=payload, timeout=5)"),
          ("urllib.request.urlopen({x}).read()", "urllib.request.urlopen(STATUS_URL).read()"),
          ("httpx.get({x})", "httpx.get(API_BASE + '/status')"),
          ("session.get({x}, timeout=3)", "session.get(CATALOG_URL, timeout=3)"),
          ("urlopen({s})", "urlopen(HEALTH_URL)")],
    377: [("tempfile.mktemp()", "tempfile.mkstemp()[1]"), ("open('/tmp/{w}.txt', 'w')", "tempfile.NamedTemporaryFile('w', delete=False)"),
          ("os.path.join('/tmp', '{w}.lock')", "os.path.join(tempfile.mkdtemp(), '{w}.lock')"),
          ("'/var/tmp/{w}_' + str(os.getpid())", "tempfile.mkdtemp(prefix='{w}_')"),
          ("open(tempfile.mktemp(suffix='.csv'), 'w')", "tempfile.TemporaryFile('w+')")],
}
# families whose vulnerability needs an untrusted source flowing into the sink
TAINTED = {78, 89, 94, 22, 79, 918}
IMPORTS = ("import os\nimport sys\nimport subprocess\nimport pickle\nimport hashlib\nimport random\nimport tempfile\n"
           "import json\nimport shlex\nimport yaml\nimport requests\nimport xml.etree.ElementTree as ET\n")


def _lit(rng: random.Random) -> str:
    return rng.choice(["hunter2", "S3cr3t!", "changeme", "admin123", "sk_live_", "ghp_", "AKIA", "p@ss"]) + \
        "".join(rng.choice("abcdef0123456789") for _ in range(rng.randint(4, 14)))


def synth_function(rng: random.Random, vulnerable: bool, cwe: int | None = None) -> tuple[str, list[int], int]:
    """One composed function: (code, [vulnerable line] or [], cwe family)."""
    cwe = cwe if cwe is not None else rng.choice(sorted(SINKS))
    x = rng.choice(NAMES)
    fn = rng.choice(FUNCS) + rng.choice(["", "_" + rng.choice(NAMES)])
    ind = "    "
    imports = [ln for ln in IMPORTS.splitlines() if rng.random() < 0.35]
    body: list[str] = []
    params = []
    routed = rng.random() < 0.3
    src_code, src_imp = rng.choice(SOURCES)
    if src_imp:
        imports.append(src_imp)
    if cwe in TAINTED or rng.random() < 0.3:
        if rng.random() < 0.2 and not routed:
            params.append(x)  # value arrives as a parameter (bandit-style pattern only)
        else:
            body.append(f"{x} = " + src_code.format(k=rng.choice(NAMES), p=rng.choice(["> ", "name: ", ""]),
                                                     K=rng.choice(NAMES).upper()))
    else:
        params.append(x)
    for _ in range(rng.randint(0, 2)):
        body.append(rng.choice(FILLER).format(x=x, i=ind))
    cur = x
    for _ in range(rng.randint(0, 2)):
        y = rng.choice(NAMES)
        body.append(rng.choice(PROPAGATE).format(x=cur, y=y, w=rng.choice(["id=", "/data/", "q:", "name ", ""])))
        cur = y
    if not vulnerable and cwe in TAINTED and rng.random() < 0.4:
        cands = [s for s, fams in SANITIZE if cwe in fams]
        if cands:
            y = rng.choice(NAMES)
            body.append(rng.choice(cands).format(x=cur, y=y))
            cur = y
            vul_sink, safe_sink = rng.choice(SINKS[cwe])
            sink = vul_sink  # the sanitised value may go into the risky-looking sink
            if cwe == 79 and "autoescape" in sink:
                sink = safe_sink
        else:
            sink = rng.choice(SINKS[cwe])[1]
    else:
        pair = rng.choice(SINKS[cwe])
        sink = pair[0] if vulnerable else pair[1]
    t = rng.choice(["users", "orders", "items", "logs", "accounts"])
    s_expr = rng.choice([f"'ls ' + {cur}", f"f'convert {{{cur}}} out.png'", f"'cat %s' % {cur}", f"'echo {{}}'.format({cur})"])
    q_expr = rng.choice([f"\"SELECT * FROM {t} WHERE name = '\" + {cur} + \"'\"", f"f\"DELETE FROM {t} WHERE id = {{{cur}}}\"",
                         f"\"UPDATE {t} SET v = '%s'\" % {cur}", f"\"SELECT id FROM {t} WHERE k = '{{}}'\".format({cur})"])
    b_expr = rng.choice([f"{cur}.encode()", f"{cur}", f"str({cur}).encode('utf-8')"])
    secret_name = rng.choice(["api", "client", "db", "app", "access", "auth", "private", "admin", "smtp", "aws"]) + "_" + \
        rng.choice(["secret", "password", "token", "key", "pass", "pwd", "secret_key"])
    pre = None
    if cwe == 89 and rng.random() < 0.5:  # the query is built on its own line, then executed
        qn = rng.choice(["sql", "query", "stmt", "q"])
        pre = f"{qn} = {q_expr}" if "?" not in sink and "%s'," not in sink and ":v'" not in sink else None
        if pre:
            q_expr = qn
    sink_line = sink.format(x=cur, s=s_expr, q=q_expr, b=b_expr, t=t, w=rng.choice(NAMES), lit=_lit(rng),
                            http=rng.choice(["requests", "httpx", "session", "client"]),
                            verb=rng.choice(["get", "post", "put", "delete", "head"]),
                            secret_name=secret_name, SECRET_NAME=secret_name.upper())
    if pre:
        body.append(pre)
    if not sink_line.startswith(("return", "env =")) and "=" not in sink_line.split("(")[0]:
        sink_line = f"{rng.choice(['result', 'out', 'resp', 'obj', 'digest', 'h', 'token', 'tmp'])} = {sink_line}"
    body.append(sink_line)
    if not sink_line.startswith("return") and rng.random() < 0.6:
        body.append("return " + sink_line.split("=")[0].strip() if "=" in sink_line else "return None")
    head = []
    if routed:
        head.append(f"@app.route('/{fn}', methods=['GET', 'POST'])")
    head.append(f"def {fn}({', '.join(params)}):")
    lines = sorted(set(imports)) + ([""] if imports else []) + head + [ind + b.replace("\n", "\n") for b in body]
    text = "\n".join(lines) + "\n"
    all_lines = text.splitlines()
    bad_line = next(i + 1 for i in range(len(all_lines) - 1, -1, -1) if all_lines[i].strip() == sink_line.strip())
    bad = [bad_line - 1, bad_line] if pre else [bad_line]
    return text, (bad if vulnerable else []), cwe


# =============================================================================================
# Combinatorial generator (v2): sources x propagation forms x sink APIs x code shapes, made as
# vulnerable / fixed PAIRS that share every random draw and differ only by the idiomatic fix.
#
# The aim is to teach the semantics (an untrusted value reaching a dangerous sink without the
# fix), not one function-level idiom. The sink line's label comes from the construction (the
# mutation rule); all other lines are labelled by the analysers (bandit + taint), as before.
# It was written after the blind variants v and e (evals/codeprm/heldout_{v,e}.py) and
# deliberately does NOT contain their specific sink idioms (e.g. getstatusoutput, Manager.raw,
# numpy allow_pickle, hmac-md5, urllib3 cert_reqs, numpy/uuid1 tokens, dataclass secrets,
# pulldom, iterparse, AsyncHTTPClient, /dev/shm, sh -c argv lists, executescript,
# pickle.Unpickler, pbkdf2-sha1, httpx verify=False, jwt literal keys, FileResponse,
# HTMLResponse), nor those of the seen variant d, so v and e keep measuring generalisation.
# =============================================================================================

# untrusted sources: (expression, imports, how the value enters: "expr" | "param")
SOURCES2 = [
    ("request.args.get({k!r})", "from flask import request"), ("request.args[{k!r}]", "from flask import request"),
    ("request.form[{k!r}]", "from flask import request"), ("request.form.get({k!r}, '')", "from flask import request"),
    ("request.get_json()[{k!r}]", "from flask import request"), ("request.json.get({k!r})", "from flask import request"),
    ("request.headers.get({H!r})", "from flask import request"), ("request.cookies[{k!r}]", "from flask import request"),
    ("request.files[{k!r}].read()", "from flask import request"), ("request.values[{k!r}]", "from flask import request"),
    ("request.GET[{k!r}]", ""), ("request.POST.get({k!r})", ""), ("request.META.get({M!r})", ""),
    ("request.body.decode()", ""), ("request.query[{k!r}]", ""), ("(await request.post())[{k!r}]", ""),
    ("(await request.json())[{k!r}]", ""), ("input({p!r})", ""), ("input()", ""), ("sys.argv[1]", "import sys"),
    ("sys.argv[2]", "import sys"), ("args.{k}", ""), ("sys.stdin.read().strip()", "import sys"),
    ("os.environ[{K!r}]", "import os"), ("os.environ.get({K!r}, '')", "import os"), ("os.getenv({K!r})", "import os"),
    ("open({fpath!r}).read()", ""), ("Path({fpath!r}).read_text()", "from pathlib import Path"),
    ("conn.recv(1024).decode()", ""), ("sock.recv(4096)", ""), ("event['body']", ""),
    ("json.loads(event['body'])[{k!r}]", "import json"), ("message.value.decode()", ""),
    ("params[{k!r}]", ""), ("payload.get({k!r})", ""), ("form_data[{k!r}]", ""),
]
# propagation of x into y (one statement each)
PROPAGATE2 = [
    "{y} = {x}", "{y} = {x}.strip()", "{y} = str({x})", "{y} = {x}.lower()", "{y} = {x}.replace('\\n', '')",
    "{y} = {x}.split(',')[0]", "{y} = {x}[:256]", "{y} = {x} or 'default'", "{y} = ''.join([{x}])",
    "{y} = '%s' % ({x},)", "{y} = '{{}}'.format({x})", "{y} = f'{{{x}}}'", "{y} = {x}.decode() if isinstance({x}, bytes) else {x}",
    "{y} = (lambda v: v)({x})", "{y} = _clean({x})", "{y} = normalize({x})", "{y} = dict(v={x})['v']",
    "{y} = [{x}][0]", "{y} = {{'v': {x}}}.get('v')", "{y} = textwrap.dedent({x})",
]
HELPERS = ["def _clean(v):\n    return v.strip()", "def normalize(v):\n    return str(v).strip()"]
# holders: how the value may be stored before use (same name, or attribute / container)
HOLDERS = [("{x}", None), ("self.{x}", "self"), ("cfg.{x}", None), ("opts[{xq}]", None), ("state[{xq}]", None)]

# string builders for commands / queries / markup / paths / urls: {x} is the (tainted) value
BUILD = ["{pre}' + {x} + '{post}", "f'{pre}{{{x}}}{post}'", "'{pre}%s{post}' % {x}", "'{pre}{{}}{post}'.format({x})",
         "''.join(['{pre}', {x}, '{post}'])", "'{pre}' + str({x}) + '{post}'", "'{pre}%(v)s{post}' % {{'v': {x}}}"]
_CMDS = [("ping -c 1 ", ""), ("nslookup ", ""), ("convert ", " out.png"), ("tar czf /backup/a.tgz ", ""), ("git clone ", " repo"),
         ("ls -la ", ""), ("grep -r ", " /var/log"), ("ffmpeg -i ", " out.mp4"), ("curl -s ", ""), ("du -sh ", ""),
         ("zip -r out.zip ", ""), ("whois ", ""), ("rm -f /srv/cache/", ""), ("chmod 644 ", ""), ("sh ./scripts/", ".sh")]
_ARGV = {"ping -c 1 ": "['ping', '-c', '1', {x}]", "nslookup ": "['nslookup', {x}]", "convert ": "['convert', {x}, 'out.png']",
         "tar czf /backup/a.tgz ": "['tar', 'czf', '/backup/a.tgz', {x}]", "git clone ": "['git', 'clone', '--', {x}, 'repo']",
         "ls -la ": "['ls', '-la', '--', {x}]", "grep -r ": "['grep', '-r', '--', {x}, '/var/log']",
         "ffmpeg -i ": "['ffmpeg', '-i', {x}, 'out.mp4']", "curl -s ": "['curl', '-s', '--', {x}]",
         "du -sh ": "['du', '-sh', '--', {x}]", "zip -r out.zip ": "['zip', '-r', 'out.zip', {x}]",
         "whois ": "['whois', {x}]", "rm -f /srv/cache/": "['rm', '-f', '/srv/cache/' + os.path.basename({x})]",
         "chmod 644 ": "['chmod', '644', '--', {x}]", "sh ./scripts/": "['sh', './scripts/' + os.path.basename({x}) + '.sh']"}
_SQL = [("SELECT * FROM {t} WHERE name = '", "'"), ("DELETE FROM {t} WHERE id = ", ""), ("UPDATE {t} SET status = 'x' WHERE owner = '", "'"),
        ("SELECT id, email FROM {t} WHERE email LIKE '%", "%'"), ("INSERT INTO {t} (label) VALUES ('", "')"),
        ("SELECT count(*) FROM {t} WHERE kind = '", "'"), ("SELECT * FROM {t} ORDER BY ", "")]
_HTML = [("<p>", "</p>"), ("<h1>Hello ", "</h1>"), ("<div class='msg'>", "</div>"), ("<a href='/u/", "'>profile</a>"),
         ("<li>", "</li>"), ("<span title='", "'>x</span>"), ("<td>", "</td>"), ("<b>Results for ", "</b>")]

# per family: (vulnerable sink, fixed sink). {x}: the value; {s}: a string built from it (BUILD);
# {pq}: a parameterised query; {argv}: an argv list; {t}: a table; {lit}: a secret literal.
# Multi-line fixes use "\n"; every line is indented like the sink.
SINKS2: dict[int, list[tuple[str, str]]] = {
    78: [("os.system({s})", "subprocess.run({argv}, check=True)"),
         ("subprocess.run({s}, shell=True)", "subprocess.run({argv})"),
         ("subprocess.call({s}, shell=True)", "subprocess.call({argv})"),
         ("subprocess.check_call({s}, shell=True)", "subprocess.check_call({argv})"),
         ("subprocess.check_output({s}, shell=True, text=True)", "subprocess.check_output({argv}, text=True)"),
         ("subprocess.Popen({s}, shell=True, stdout=subprocess.PIPE)", "subprocess.Popen({argv}, stdout=subprocess.PIPE)"),
         ("os.popen({s}).read()", "subprocess.run({argv}, capture_output=True, text=True).stdout"),
         ("subprocess.run({s}, shell=True, capture_output=True)", "subprocess.run({s_quoted}, shell=True, capture_output=True)"),
         ("pexpect.run({s})", "pexpect.run({argv0}, args={argv1})"),
         ("ssh.exec_command({s})", "ssh.exec_command(shlex.join({argv}))")],
    89: [("cursor.execute({s})", "cursor.execute({pq}, ({x},))"), ("db.execute({s})", "db.execute({pq}, ({x},))"),
         ("conn.execute({s}).fetchall()", "conn.execute({pq}, ({x},)).fetchall()"),
         ("session.execute(text({s}))", "session.execute(text({pq_named}), {{'v': {x}}})"),
         ("pd.read_sql({s}, engine)", "pd.read_sql({pq}, engine, params=({x},))"),
         ("db.execute_sql({s})", "db.execute_sql({pq}, ({x},))"),
         ("await pool.fetch({s})", "await pool.fetch({pq_dollar}, {x})"),
         ("cur.execute({s}); rows = cur.fetchall()", "cur.execute({pq}, [{x}]); rows = cur.fetchall()")],
    94: [("eval({x})", "ast.literal_eval({x})"), ("exec({x})", "HANDLERS[{x}]()"), ("eval({x}, {{}}, {{}})", "float({x})"),
         ("exec({x}, globals())", "json.loads({x})"), ("eval(compile({x}, '<expr>', 'eval'))", "ast.literal_eval({x})"),
         ("exec('result = ' + {x})", "result = int({x})"), ("eval('lambda row: ' + {x})", "OPERATORS[{x}]"),
         ("__import__({x})", "PLUGINS[{x}]"), ("importlib.import_module({x})", "importlib.import_module(ALLOWED_MODULES[{x}])")],
    502: [("pickle.loads({x})", "json.loads({x})"), ("pickle.load(open({x}, 'rb'))", "json.load(open({x}))"),
          ("pickle.load({fh})", "json.load({fh})"), ("cPickle.loads({x})", "json.loads({x})"),
          ("marshal.loads({x})", "json.loads({x})"), ("yaml.load({x}, Loader=yaml.Loader)", "yaml.safe_load({x})"),
          ("yaml.load({x}, Loader=yaml.FullLoader)", "yaml.load({x}, Loader=yaml.SafeLoader)"),
          ("yaml.unsafe_load({x})", "yaml.safe_load({x})"), ("dill.loads({x})", "json.loads({x})"),
          ("shelve.open({x})", "json.loads(Path({x}).read_text())"), ("jsonpickle.decode({x})", "json.loads({x})"),
          ("torch.load({x})", "torch.load({x}, weights_only=True)"), ("pd.read_pickle({x})", "pd.read_json({x})")],
    328: [("hashlib.md5({b}).hexdigest()", "hashlib.sha256({b}).hexdigest()"),
          ("hashlib.sha1({b}).hexdigest()", "hashlib.sha512({b}).hexdigest()"),
          ("hashlib.new('md5', {b}).hexdigest()", "hashlib.new('sha256', {b}).hexdigest()"),
          ("hashlib.new('sha1', {b}).digest()", "hashlib.blake2b({b}).digest()"),
          ("MD5.new({b}).hexdigest()", "SHA256.new({b}).hexdigest()"),
          ("hashlib.md5(salt + {b}).hexdigest()", "hashlib.scrypt({b}, salt=salt, n=2 ** 14, r=8, p=1).hex()"),
          ("hashlib.sha1(salt + {b}).hexdigest()", "bcrypt.hashpw({b}, bcrypt.gensalt()).decode()")],
    327: [("DES.new(key, DES.MODE_ECB)", "AES.new(key, AES.MODE_GCM)"), ("AES.new(key, AES.MODE_ECB)", "AES.new(key, AES.MODE_GCM)"),
          ("ARC4.new(key)", "ChaCha20_Poly1305.new(key=key)"), ("DES3.new(key, DES3.MODE_CBC, iv)", "AES.new(key, AES.MODE_GCM)"),
          ("Blowfish.new(key, Blowfish.MODE_ECB)", "AES.new(key, AES.MODE_GCM)"),
          ("Cipher(algorithms.AES(key), modes.ECB())", "Cipher(algorithms.AES(key), modes.GCM(iv))"),
          ("Cipher(algorithms.TripleDES(key), modes.CBC(iv))", "Cipher(algorithms.AES(key), modes.CTR(iv))"),
          ("ssl._create_unverified_context()", "ssl.create_default_context()"),
          ("requests.get({x}, verify=False, timeout=5)", "requests.get({x}, timeout=5)"),
          ("ssl.wrap_socket(sock, ssl_version=ssl.PROTOCOL_SSLv3)", "ssl.create_default_context().wrap_socket(sock, server_hostname=host)"),
          ("ctx.verify_mode = ssl.CERT_NONE", "ctx.verify_mode = ssl.CERT_REQUIRED")],
    338: [("random.random()", "secrets.randbits(64)"), ("random.randint(100000, 999999)", "secrets.randbelow(900000) + 100000"),
          ("random.getrandbits(128)", "secrets.randbits(128)"), ("random.randrange(10 ** 8)", "secrets.randbelow(10 ** 8)"),
          ("''.join(random.choice(ALPHABET) for _ in range(20))", "''.join(secrets.choice(ALPHABET) for _ in range(20))"),
          ("''.join(random.choices(ALPHABET, k=16))", "secrets.token_urlsafe(16)"),
          ("'%032x' % random.getrandbits(128)", "secrets.token_hex(16)"), ("str(random.random())[2:]", "secrets.token_hex(8)"),
          ("random.Random(seed).getrandbits(64)", "secrets.randbits(64)"), ("bytes(random.getrandbits(8) for _ in range(16))", "os.urandom(16)")],
    798: [("{secret_name} = '{lit}'", "{secret_name} = os.environ['{SECRET_NAME}']"),
          ("{secret_name} = '{lit}'", "{secret_name} = os.getenv('{SECRET_NAME}')"),
          ("{secret_name} = '{lit}'", "{secret_name} = keyring.get_password('{t}', '{secret_name}')"),
          ("client.login('admin', '{lit}')", "client.login('admin', os.environ['ADMIN_PASSWORD'])"),
          ("connect(host='db', user='app', password='{lit}')", "connect(host='db', user='app', password=vault.read('db/password'))"),
          ("headers = {{'Authorization': 'Bearer {lit}'}}", "headers = {{'Authorization': 'Bearer ' + os.environ['API_TOKEN']}}"),
          ("smtp.login('noreply@{t}.example', '{lit}')", "smtp.login('noreply@{t}.example', settings.SMTP_PASSWORD)"),
          ("{SECRET_NAME} = '{lit}'", "{SECRET_NAME} = os.environ.get('{SECRET_NAME}', '')"),
          ("creds = {{'user': 'svc', '{secret_name}': '{lit}'}}", "creds = {{'user': 'svc', '{secret_name}': get_secret('{secret_name}')}}")],
    22: [("open(os.path.join(BASE_DIR, {x})).read()", "open(os.path.join(BASE_DIR, os.path.basename({x}))).read()"),
         ("open(BASE_DIR + '/' + {x}, 'rb').read()", "open(BASE_DIR + '/' + secure_filename({x}), 'rb').read()"),
         ("send_file(os.path.join(UPLOADS, {x}))", "send_from_directory(UPLOADS, {x})"),
         ("os.remove(os.path.join(CACHE_DIR, {x}))", "os.remove(os.path.join(CACHE_DIR, os.path.basename({x})))"),
         ("shutil.copy(os.path.join(ROOT, {x}), backup_dir)", "shutil.copy(os.path.join(ROOT, os.path.basename({x})), backup_dir)"),
         ("(Path(ROOT) / {x}).read_bytes()", "(Path(ROOT) / Path({x}).name).read_bytes()"),
         ("Path(ROOT, {x}).write_text(data)", "Path(ROOT, secure_filename({x})).write_text(data)"),
         ("open(os.path.join(BASE_DIR, {x})).read()",
          "full = os.path.realpath(os.path.join(BASE_DIR, {x}))\nif not full.startswith(os.path.realpath(BASE_DIR) + os.sep):\n    raise PermissionError(full)\nopen(full).read()"),
         ("os.unlink(os.path.join(CACHE_DIR, {x}))",
          "full = os.path.abspath(os.path.join(CACHE_DIR, {x}))\nif os.path.dirname(full) != os.path.abspath(CACHE_DIR):\n    raise ValueError('bad path')\nos.unlink(full)")],
    79: [("return {s}", "return {s_escaped}"), ("return make_response({s})", "return make_response({s_escaped})"),
         ("return Markup({s})", "return Markup({s_escaped})"), ("return mark_safe({s})", "return format_html({fmt}, {x})"),
         ("return render_template_string({s})", "return render_template_string({tpl}, v={x})"),
         ("return Response({s}, mimetype='text/html')", "return Response({s_escaped}, mimetype='text/html')"),
         ("env = jinja2.Environment(loader=loader, autoescape=False)", "env = jinja2.Environment(loader=loader, autoescape=True)"),
         ("resp.write({s})", "resp.write({s_escaped})")],
    611: [("ET.fromstring({x})", "defusedxml.ElementTree.fromstring({x})"), ("ET.parse({x})", "defusedxml.ElementTree.parse({x})"),
          ("minidom.parseString({x})", "defusedxml.minidom.parseString({x})"), ("minidom.parse({x})", "defusedxml.minidom.parse({x})"),
          ("etree.fromstring({x})", "etree.fromstring({x}, etree.XMLParser(resolve_entities=False, no_network=True))"),
          ("etree.parse({x}, etree.XMLParser(resolve_entities=True))", "etree.parse({x}, etree.XMLParser(resolve_entities=False))"),
          ("xml.sax.parseString({x}, handler)", "defusedxml.sax.parseString({x}, handler)"),
          ("xml.sax.parse({x}, handler)", "defusedxml.sax.parse({x}, handler)"),
          ("expatbuilder.parseString({x})", "defusedxml.expatbuilder.parseString({x})"),
          ("etree.XML({x})", "etree.XML({x}, etree.XMLParser(resolve_entities=False))")],
    918: [("requests.get({x}, timeout=5)", "requests.get(ALLOWED_URLS[{x}], timeout=5)"),
          ("requests.post({x}, json=body, timeout=5)", "requests.post(WEBHOOK_URL, json=body, timeout=5)"),
          ("urllib.request.urlopen({x}).read()", "urllib.request.urlopen(STATUS_URL).read()"),
          ("urllib.request.urlopen(urllib.request.Request({x})).read()", "urllib.request.urlopen(urllib.request.Request(API_BASE + '/status')).read()"),
          ("httpx.get({x}, timeout=5)", "httpx.get(API_BASE, params={{'q': {x}}}, timeout=5)"),
          ("session.get({x})", "session.get(CATALOG_URL, params={{'id': {x}}})"),
          ("requests.head({s}, timeout=3)", "requests.head(HEALTH_URL, timeout=3)"),
          ("requests.get({x}, timeout=5)",
           "if urlparse({x}).hostname not in ALLOWED_HOSTS:\n    raise ValueError('host not allowed')\nrequests.get({x}, timeout=5)"),
          ("urllib.request.urlopen({x}).read()",
           "if urlparse({x}).scheme != 'https' or urlparse({x}).netloc not in ALLOWED_HOSTS:\n    abort(400)\nurllib.request.urlopen({x}).read()")],
    377: [("tempfile.mktemp()", "tempfile.mkstemp()[1]"), ("tempfile.mktemp(suffix='.txt')", "tempfile.NamedTemporaryFile(suffix='.txt', delete=False).name"),
          ("open('/tmp/{w}.txt', 'w')", "tempfile.NamedTemporaryFile('w', delete=False)"),
          ("os.path.join('/tmp', '{w}.lock')", "os.path.join(tempfile.mkdtemp(), '{w}.lock')"),
          ("'/tmp/{w}_' + str(os.getpid())", "tempfile.mkdtemp(prefix='{w}_')"),
          ("Path('/tmp') / '{w}.json'", "Path(tempfile.mkdtemp()) / '{w}.json'"),
          ("os.open('/tmp/{w}.pid', os.O_CREAT | os.O_WRONLY)", "tempfile.mkstemp(suffix='.pid')[0]"),
          ("open(f'/tmp/{w}-{{os.getpid()}}.log', 'a')", "tempfile.TemporaryFile('a+')")],
}
TAINTED2 = {78, 89, 94, 22, 79, 918, 502, 611}
SHAPES = ["def", "route", "method", "async", "handler", "main", "nested"]
IMPORTS2 = ["import os", "import sys", "import json", "import subprocess", "import shlex", "import hashlib", "import random",
            "import secrets", "import tempfile", "import pickle", "import yaml", "import requests", "import logging",
            "from pathlib import Path", "from urllib.parse import urlparse", "import xml.etree.ElementTree as ET", "import ast",
            "import textwrap", "import time"]


def _lit2(rng: random.Random) -> str:
    return rng.choice(["hunter2", "S3cr3t!", "changeme", "admin123", "sk_live_", "ghp_", "AKIA", "p@ss", "Passw0rd",
                       "xoxb-", "prod_", "letmein", "Tr0ub4dor", "eyJhbGciOi"]) + \
        "".join(rng.choice("abcdefABCDEF0123456789") for _ in range(rng.randint(4, 20)))


def compose_pair(seed: int, cwe: int | None = None) -> list[tuple[str, list[int], int]]:
    """A vulnerable / fixed pair sharing all random draws: [(code, bad lines, cwe), (code, [], cwe)].

    >>> (v, bv, c), (f, bf, _) = compose_pair(3)
    >>> bool(bv) and not bf and v != f
    True
    """
    return [_compose(random.Random(seed), vul, cwe) for vul in (True, False)]


def _compose(rng: random.Random, vulnerable: bool, cwe: int | None) -> tuple[str, list[int], int]:
    cwe = cwe if cwe is not None else rng.choice(sorted(SINKS2))
    x = rng.choice(NAMES)
    fn = rng.choice(FUNCS) + rng.choice(["", "_" + rng.choice(NAMES)])
    shape = rng.choice(SHAPES)
    imports = {ln for ln in IMPORTS2 if rng.random() < 0.3}
    pre: list[str] = []  # module-level helper definitions
    body: list[str] = []
    params: list[str] = []
    tainted = cwe in TAINTED2 or rng.random() < 0.3
    if tainted and (shape != "route" or rng.random() < 0.7) and rng.random() < 0.85:
        src, imp = rng.choice(SOURCES2)
        if "await" in src and shape != "async":
            src, imp = "request.args.get({k!r})", "from flask import request"
        if imp:
            imports.add(imp)
        if src.startswith("args."):
            imports.add("import argparse")
            body.append("parser = argparse.ArgumentParser()")
            body.append(f"parser.add_argument('--{x}')")
            body.append("args = parser.parse_args()")
            src = "args.{x}"
        if "json.loads" in src:
            imports.add("import json")
        body.append(f"{x} = " + src.format(k=rng.choice(NAMES), H="X-" + rng.choice(NAMES).title(), M="HTTP_X_" + rng.choice(NAMES).upper(),
                                           p=rng.choice(["> ", "name: ", "url: ", ""]), K=rng.choice(NAMES).upper(),
                                           fpath=rng.choice(["input.txt", "/etc/app/req", "upload.dat"]), x=x))
    else:
        params.append(x)
    for _ in range(rng.randint(0, 2)):
        body.append(rng.choice(FILLER).format(x=x, i="    "))
    cur = x
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        y = rng.choice(NAMES)
        form = rng.choice(PROPAGATE2)
        if "_clean" in form or "normalize" in form:
            h = HELPERS[0] if "_clean" in form else HELPERS[1]
            if h not in pre:
                pre.append(h)
        if "textwrap" in form:
            imports.add("import textwrap")
        body.append(form.format(x=cur, y=y))
        cur = y
    holder, need = rng.choice(HOLDERS)
    if shape in ("method", "handler") and rng.random() < 0.5 or holder.startswith(("cfg", "opts", "state")) and rng.random() < 0.5:
        if holder.startswith("self") and shape not in ("method", "handler"):
            holder = "{x}"
        h = holder.format(x=cur, xq=repr(cur))
        if h != cur:
            if h.startswith("cfg"):
                body.append("cfg = types.SimpleNamespace()")
                imports.add("import types")
            elif h.startswith(("opts", "state")):
                body.append(f"{h.split('[')[0]} = {{}}")
            body.append(f"{h} = {cur}")
            cur = h
    # the sink
    vul_sink, fix_sink = rng.choice(SINKS2[cwe])
    t = rng.choice(["users", "orders", "items", "logs", "accounts", "invoices", "tickets", "assets"])
    build = rng.choice(BUILD)
    if cwe == 78:
        pre_s, post_s = rng.choice(_CMDS)
    elif cwe == 89:
        pre_s, post_s = rng.choice(_SQL)
        pre_s = pre_s.format(t=t)
    elif cwe == 79:
        pre_s, post_s = rng.choice(_HTML)
    else:
        pre_s, post_s = rng.choice([("https://", "/api"), ("", ""), ("/data/", ".json")])
    s_expr = build.format(pre=pre_s.replace("'", "\\'") if "'" in build[:2] or build.startswith("f'") or build.startswith("''") else pre_s,
                          post=post_s, x=cur) if False else _build(build, pre_s, post_s, cur)
    s_var = None
    if "{s}" in vul_sink and rng.random() < 0.5:  # build on its own line
        s_var = rng.choice({78: ["cmd", "command", "cmdline", "shell_cmd"], 89: ["sql", "query", "stmt", "q"],
                            79: ["html", "page", "markup", "body"]}.get(cwe, ["target", "url", "dest"]))
        s_line = f"{s_var} = {s_expr}"
        s_expr = s_var
    else:
        s_line = None
    pq_col = "name" if "name" in pre_s else "id"
    argv = _ARGV.get(pre_s, "['echo', {x}]").format(x=cur)
    fields = dict(x=cur, s=s_expr, t=t, w=rng.choice(NAMES), lit=_lit2(rng), fh=rng.choice(["fh", "stream", "f"]),
                  b=rng.choice([f"{cur}.encode()", f"str({cur}).encode('utf-8')", cur]),
                  pq=f"'SELECT * FROM {t} WHERE {pq_col} = %s'", pq_named=f"'SELECT * FROM {t} WHERE {pq_col} = :v'",
                  pq_dollar=f"'SELECT * FROM {t} WHERE {pq_col} = $1'", argv=argv, argv0=repr(argv.split("'")[1]) if "'" in argv else "'echo'",
                  argv1="[" + argv.split(",", 1)[1].strip() if "," in argv else "[]",
                  s_quoted=_build(build, pre_s, post_s, f"shlex.quote({cur})"),
                  s_escaped=_build(build, pre_s, post_s, rng.choice([f"escape({cur})", f"html.escape({cur})", f"markupsafe.escape({cur})"])),
                  fmt=repr(pre_s + "{}" + post_s), tpl=repr(pre_s + "{{ v }}" + post_s))
    secret_name = rng.choice(["api", "client", "db", "app", "access", "auth", "private", "admin", "smtp", "aws", "stripe", "github"]) + \
        "_" + rng.choice(["secret", "password", "token", "key", "pass", "pwd", "secret_key", "api_key"])
    fields.update(secret_name=secret_name, SECRET_NAME=secret_name.upper())
    sink = (vul_sink if vulnerable else fix_sink).format(**fields)
    if s_line and ("{s}" in (vul_sink if vulnerable else fix_sink)):
        body.append(s_line)
    elif s_line and not vulnerable and "{s}" in vul_sink:
        pass  # the fix does not build the string
    sink_lines = sink.split("\n")
    last = sink_lines[-1]
    if not last.startswith(("return", "if ", "raise")) and " = " not in last.split("(")[0] and not last.startswith(("env =", "ctx.")):
        last = f"{rng.choice(['result', 'out', 'resp', 'obj', 'digest', 'token', 'tmp', 'data', 'rows', 'value'])} = {last}"
        if cwe == 78 and rng.random() < 0.3:
            last = last.split(" = ", 1)[1]
    sink_lines[-1] = last
    if cwe == 502 and "{fh}" in vul_sink:
        body.append(f"with open({cur}, 'rb') as {fields['fh']}:")
        sink_lines = ["    " + s for s in sink_lines]
    sink_at = len(body) + len(sink_lines) - 1  # index of the sink's last line in body
    body += sink_lines
    if not last.strip().startswith("return") and rng.random() < 0.6:
        lhs = last.strip().split(" = ")[0] if " = " in last else None
        body.append(f"return {lhs}" if lhs and lhs.isidentifier() else "return None")
    # the code shape
    ind = "    "
    head: list[str] = []
    if shape == "route":
        head = [f"@app.route('/{fn}', methods=['GET', 'POST'])", f"def {fn}({', '.join(params)}):"]
    elif shape == "async":
        head = [f"async def {fn}({', '.join(['request'] + params)}):"]
    elif shape == "handler":
        head = [f"def lambda_handler(event, context{''.join(', ' + p for p in params)}):"]
    elif shape == "method":
        cls = rng.choice(["Service", "Handler", "Worker", "Exporter", "Client", "Manager", "Job"])
        head = [f"class {fn.title().replace('_', '')}{cls}:", f"{ind}def {fn}(self{''.join(', ' + p for p in params)}):"]
        ind = "        "
    elif shape == "main":
        head = [f"def {fn}({', '.join(params)}):"] if params else ["if __name__ == '__main__':"]
    elif shape == "nested":
        head = [f"def {fn}({', '.join(params)}):", f"    def _inner():"]
        ind = "        "
    else:
        head = [f"def {fn}({', '.join(params)}):"]
    if shape != "method":
        body = [b.replace("self.", "ctx_") if "self." in b else b for b in body]
    out_body = []
    for b in body:
        out_body += [ind + ln for ln in b.split("\n")]
    if shape == "nested":
        out_body.append("    return _inner()")
    if shape == "route":
        imports.add("from flask import Flask")
        pre.insert(0, "app = Flask(__name__)")
    lines = sorted(imports) + ([""] if imports else []) + sum(([p, ""] for p in pre), []) + head + out_body
    text = "\n".join(lines) + "\n"
    bad_line = len(sorted(imports)) + (1 if imports else 0) + sum(len(p.splitlines()) + 1 for p in pre) + len(head) + \
        sum(len(b.split("\n")) for b in body[:sink_at]) + 1
    assert text.splitlines()[bad_line - 1].strip() == body[sink_at].split("\n")[-1].strip(), (text, bad_line)
    bad = [bad_line]
    if s_line and "{s}" in vul_sink and vulnerable:
        bad.append(bad_line - 1 if text.splitlines()[bad_line - 2].strip() == s_line.strip() else bad_line)
    return text, (sorted(set(bad)) if vulnerable else []), cwe


def _build(build: str, pre: str, post: str, x: str) -> str:
    esc = lambda s: s.replace("\\", "\\\\").replace("'", "\\'")  # noqa: E731
    if build.startswith("f'"):
        return "f'" + esc(pre).replace("{", "{{").replace("}", "}}") + "{" + x + "}" + esc(post).replace("{", "{{").replace("}", "}}") + "'"
    if "format(" in build:
        return "'" + esc(pre).replace("{", "{{").replace("}", "}}") + "{}" + esc(post).replace("{", "{{").replace("}", "}}") + "'.format(" + x + ")"
    if "%(v)s" in build:
        return "'" + esc(pre).replace("%", "%%") + "%(v)s" + esc(post).replace("%", "%%") + "' % {'v': " + x + "}"
    if "%s" in build:
        return "'" + esc(pre).replace("%", "%%") + "%s" + esc(post).replace("%", "%%") + "' % " + x
    if build.startswith("''.join"):
        return f"''.join(['{esc(pre)}', {x}, '{esc(post)}'])"
    if "str(" in build:
        return f"'{esc(pre)}' + str({x}) + '{esc(post)}'"
    return f"'{esc(pre)}' + {x} + '{esc(post)}'"
