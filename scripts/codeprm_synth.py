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
