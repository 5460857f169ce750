"""API-knowledge rules: code that is insecure by what it calls or writes, whatever the data flow.

The taint labeller (``taint.py``) follows untrusted data into sinks; these rules know the
APIs themselves: weak hash and cipher choices, TLS set-ups that skip verification or use old
protocols, non-cryptographic generators (numpy, ``uuid1``, the clock) feeding a secret,
hard-coded credentials (by name, by the API that takes them, by the shape of the literal),
predictable names in the shared temp directory, shells reached through an argv list, and
deserialisers that run code. Each rule is one check on the AST: nothing is imported or run.
Rules that bandit already applies (``hashlib.md5``, ``random.*``, ``pickle.loads``, ...) are
not repeated here.
"""
from __future__ import annotations

import ast
import itertools
import re

from engines.codeprm.findings import (
    ImportAliases,
    bound_constant,
    call_keywords,
    dotted_name,
    module_constants,
)
from engines.codeprm.findings import const_str as _const_str
from engines.codeprm.findings import last_name as _last
from engines.codeprm.findings import string_built as _string_built

WEAK_HASHES = {"md5", "sha1", "md4", "md2", "sha", "ripemd160", "md5-sha1"}
WEAK_CIPHERS = {"DES", "DES3", "TripleDES", "ARC2", "ARC4", "RC2", "RC4", "Blowfish", "CAST", "CAST5", "IDEA",
                "SEED", "XOR"}
OLD_TLS = {"PROTOCOL_SSLv2", "PROTOCOL_SSLv3", "PROTOCOL_TLSv1", "PROTOCOL_TLSv1_1", "SSLv2_METHOD",
           "SSLv3_METHOD", "TLSv1_METHOD", "TLSv1_1_METHOD", "SSLv3", "TLSv1", "TLSv1_1"}
SHELLS = {"sh", "bash", "zsh", "ksh", "dash", "csh", "tcsh", "fish", "cmd", "cmd.exe", "powershell",
          "powershell.exe", "pwsh"}
WEAK_PASSLIB = {"md5_crypt", "des_crypt", "bsdi_crypt", "bigcrypt", "crypt16", "sun_md5_crypt", "apr_md5_crypt",
                "ldap_md5", "ldap_sha1", "ldap_salted_md5", "ldap_salted_sha1", "ldap_plaintext", "plaintext",
                "hex_md5", "hex_sha1", "mysql323", "mysql41", "oracle10", "postgres_md5", "lmhash", "nthash", "msdcc",
                "msdcc2", "roundup_plaintext", "django_salted_md5", "django_salted_sha1", "django_des_crypt"}
_RANDOM_FUNCS = {"shuffle", "choice", "choices", "sample", "randint", "randrange", "random", "getrandbits",
                 "randbytes", "uniform"}
_WEAK_RNG_CLASSES = {"np.random.default_rng", "numpy.random.default_rng", "np.random.RandomState",
                     "numpy.random.RandomState", "random.Random", "np.random.Generator", "default_rng"}
INTERPRETERS = {"python", "python3", "python2", "node", "nodejs", "perl", "ruby", "php", "lua", "Rscript"}
# PBKDF2 iteration counts below this are too few for password storage (OWASP 2023: 600,000 for
# SHA-256); a literal under it is flagged whatever the hash.
MIN_PBKDF2_ITERATIONS = 100_000

# names that hold a credential: one of these words, or a (qualifier, "key") pair, among the
# name's snake/camel-case parts; a last part in _NOT_SECRET says it names, locates or describes one
_SECRET_WORDS = {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "credential", "credentials",
                 "apikey", "dsn", "bearer", "privkey", "pat"}
_KEY_QUALIFIERS = {"api", "access", "private", "signing", "auth", "secret", "master", "encryption", "session",
                   "client", "hmac", "jwt", "app", "consumer", "webhook", "account"}
_NOT_SECRET = {"field", "name", "names", "env", "var", "url", "uri", "path", "file", "dir", "type", "header", "len",
               "length", "prefix", "suffix", "pattern", "regex", "re", "id", "label", "prompt", "placeholder", "hint",
               "format", "fmt", "policy", "min", "max", "count", "expiry", "expires", "ttl", "timeout", "lifetime",
               "scope", "endpoint", "column", "attr", "param", "kind", "mode", "hash", "hasher", "algorithm", "alg",
               "error", "msg", "message", "required", "enabled", "chars", "location", "source", "mask"}
# literal shapes of well-known secrets (cloud keys, API tokens, private keys) and of URLs with a password
_SECRET_SHAPES = re.compile(r"(AKIA[0-9A-Z]{16}|(sk|rk|pk)_(live|test)_[0-9A-Za-z]{8,}|gh[pousr]_[0-9A-Za-z]{20,}|"
                            r"xox[abprs]-[0-9A-Za-z-]{10,}|AIza[0-9A-Za-z_-]{30,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|"
                            r"hf_[0-9A-Za-z]{30,}|glpat-[0-9A-Za-z_-]{20,}|"
                            r"://[^/\s:@{}]*:[^/\s@{}]+@|"
                            r"(?:^|;)\s*(?i:AccountKey|SharedAccessKey|Password|Pwd)=[^;{}\s<>*'\"()]{8,}\s*(?:;|$))")
# words of a function/variable name that say the value is a secret (for generators and clocks)
_SECRET_CONTEXT = {"token", "secret", "password", "passwd", "pwd", "otp", "nonce", "salt", "session", "csrf",
                   "reset", "verification", "verify", "auth", "pin", "apikey", "invite", "coupon", "voucher",
                   "magic", "activation", "confirm", "confirmation", "recovery", "unsubscribe", "passcode", "code",
                   "gift", "promo", "redeem", "referral", "temporary", "temp_password",
                   "key", "keys", "sid", "cookie", "signup", "onetime", "challenge", "passphrase"}


_FAST_HASHES = {"sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512",
                "blake2b", "blake2s"}


def _function_context(fn: ast.AST) -> tuple[bool, bool]:
    """(stores passwords, names a secret) for one function, from one walk of its body.

    * stores passwords: an identifier or a string (not the docstring) of the body, a parameter or
      the function's name names a password together with a hash, salt, column or store
      (``password_hash``, ``"INSERT ... password ..."``, ``hash_password``);
    * names a secret: an identifier anywhere in the function (decorators and defaults included)
      has a secret-context word, leaving out the ``secrets`` module itself (a fix's own
      ``secrets.token_*``).
    """
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        else fn.body
    head = fn.decorator_list + [fn.args] + ([fn.returns] if fn.returns is not None else [])
    words: set[str] = set(_words(fn.name))
    secret = False
    for part, in_body in [(st, True) for st in body] + [(h, False) for h in head]:
        for n in ast.walk(part):
            if isinstance(n, (ast.Name, ast.Attribute)):
                name = dotted_name(n)
                w = _words(name)
                if in_body:
                    words.update(w)
                if not secret and not name.startswith("secrets") and set(w) & _SECRET_CONTEXT:
                    secret = True
            elif in_body and isinstance(n, ast.Constant) and isinstance(n.value, str):
                words.update(x.lower() for x in re.findall(r"[A-Za-z]+", n.value))
            elif in_body and isinstance(n, ast.arg):
                words.update(_words(n.arg))
    for a in fn.args.args + fn.args.kwonlyargs:
        words.update(_words(a.arg))
    stores = bool(words & {"password", "passwd", "pwd"}) and bool(words & {"hash", "hashed", "digest", "salt", "store",
                                                                            "insert", "update", "save", "register",
                                                                            "verify", "check", "login"})
    return stores, secret


def _words(name: str) -> list[str]:
    """Lower-case snake/camel-case parts of the last component of a dotted name."""
    last = name.split(".")[-1]
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", last)]


_PLACEHOLDERS = {"", "none", "null", "true", "false", "changeit", "xxx", "***", "<secret>", "<password>", "..."}


def looks_like_secret(value: str) -> bool:
    """A literal that can be a credential: not empty or a placeholder, no spaces, not a path or
    URL, not an UPPER_CASE environment-variable name, not a format template."""
    v = value.strip()
    if v.lower() in _PLACEHOLDERS or len(v) < 4 or len(v) > 400:
        return False
    if v[0] in "<[" and v[-1] in ">]":  # a markup or special token such as "<pad>" or "[CLS]"
        return False
    if any(c.isspace() for c in v) or v.startswith(("/", "./", "http://", "https://", "$", "%(")):
        return False
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", v):  # an environment variable's name
        return False
    return "{" not in v and "%s" not in v


def _is_secret_name(name: str) -> bool:
    w = _words(name)
    if not w or w[-1] in _NOT_SECRET:
        return False
    pairs = any(a in _KEY_QUALIFIERS and b in ("key", "keys") for a, b in itertools.pairwise(w))
    return pairs or bool(set(w) & _SECRET_WORDS)


# keyword arguments that switch TLS certificate or host-name checks off when True
# (pymongo tlsInsecure / tlsAllowInvalidCertificates, insecure_skip_verify, ignore_ssl_errors...)
_TLS_OFF_WHEN_TRUE = re.compile(r"(?i)^(tls|ssl)?_?(insecure|allow_?invalid_?(cert|host)|skip_?(tls_?|ssl_?)?verif|"
                                r"no_?verify|disable_?(tls|ssl|cert)_?verif|ignore_?(ssl|tls|cert))")
# words of a name that say it holds an authenticator (a CRC bound to one is a forged MAC)
_SIGNATURE_WORDS = {"sig", "signature", "mac", "hmac", "authenticator"}


# a command string that starts a shell on the rest: "bash -c '...'", "/bin/sh -c ..."
_SHELL_C = re.compile(r"^\s*(\S*/)?(ba|z|k|da|c|tc)?sh\s+(-\w*\s+)*-\w*c\b")


def _leading_literal(node: ast.AST) -> str:
    """The literal text a built string starts with (f-string head, left operand, format template)."""
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    if isinstance(node, ast.BinOp):
        return _leading_literal(node.left) if not isinstance(node.left, ast.Constant) else str(node.left.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _const_str(node.func.value) or ""
    return ""


def _pickle_serializer(key: str, value: ast.AST | None) -> bool:
    """A task-queue / cache setting that lets pickle through (celery ``task_serializer="pickle"``,
    ``accept_content=["pickle", ...]``, kombu/django-redis ``serializer="pickle"``)."""
    k = key.lower()
    if not k.endswith(("serializer", "accept_content")) or value is None:
        return False
    vals = [value] + list(getattr(value, "elts", []))
    return any((_const_str(x) or "").lower() in ("pickle", "application/x-python-serialize") for x in vals)


# non-cryptographic hash libraries: fine for tables and checksums, forgeable as a MAC
_NON_CRYPTO_HASH_MODULES = {"xxhash", "mmh3", "farmhash", "cityhash", "fnvhash", "fnv", "spookyhash"}
# a literal that looks like an API key or token: one run of 24+ word characters with letters and digits
_TOKENISH = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-]{24,}$")


def _crc_call(node: ast.AST) -> ast.Call | None:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _last(sub.func) in ("crc32", "adler32"):
            return sub
    return None


def _argv_of(last: str, args: list[ast.AST], kw: dict[str, ast.AST]) -> ast.AST | None:
    """The argv a process-starting call runs (a list node), or None when ``last`` starts none."""
    if last in ("Popen", "run", "call", "check_call", "check_output"):
        return args[0] if args else kw.get("args")
    if last == "create_subprocess_exec":
        return ast.List(elts=args, ctx=ast.Load())
    if last in ("execv", "execvp", "execve", "execvpe", "posix_spawn", "posix_spawnp"):
        return args[1] if len(args) > 1 else None
    if last in ("execl", "execlp", "execle", "execlpe"):
        return ast.List(elts=args[1:], ctx=ast.Load())
    if last in ("spawnv", "spawnvp", "spawnve"):
        return args[2] if len(args) > 2 else None
    if last in ("spawnl", "spawnlp", "spawnle"):
        return ast.List(elts=args[2:], ctx=ast.Load())
    # any other launcher (container exec_run, remote runners, kubernetes exec streams, task helpers)
    # handed an argv list, first or as command= / cmd=
    for cand in args[:1] + [kw.get("cmd"), kw.get("command")]:
        if isinstance(cand, (ast.List, ast.Tuple)):
            return cand
    return None


def _target_names(t: ast.AST) -> list[str]:
    if isinstance(t, (ast.Name, ast.Attribute)):
        return [dotted_name(t)]
    if isinstance(t, ast.Subscript):
        key = _const_str(t.slice)
        return [key] if key else []
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    return []


class ApiRules(ImportAliases):
    """Collects (line, cwe, rule, message) for API misuse; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[tuple[int, int, str, str]] = []
        self.functions: list[str] = []
        self.password_fns: list[bool] = []  # per enclosing function: does it store or check passwords?
        self.secret_fns: list[bool] = []  # per enclosing function: does an identifier in it name a secret?
        self.argv_names: dict[str, ast.AST] = {}  # names bound to a shell argv list
        self.weak_rngs: set[str] = set()  # names bound to a non-cryptographic generator instance
        self.unauth_connections = False  # a multiprocessing.connection Listener/Client without authkey was made
        self.consts: dict[str, ast.AST] = {}  # module / class literals (module_constants), set before the visit

    def hit(self, node: ast.AST, cwe: int, rule: str, msg: str) -> None:
        self.findings.append((node.lineno, cwe, f"rule:{rule}", msg))

    # ------------------------------------------------------------ context
    def _function(self, node) -> None:
        # the function's context: its name and the literal names its decorators give it
        # (@mutation.field("createApiKey"), @app.command("reset-token"))
        labels = [_const_str(a) or "" for d in node.decorator_list if isinstance(d, ast.Call) for a in d.args[:1]]
        self.functions.append("_".join([node.name] + [re.sub(r"\W+", "_", x) for x in labels if x]))
        stores, secret = _function_context(node)
        self.password_fns.append(stores)
        self.secret_fns.append(secret)
        saved = dict(self.argv_names)
        for arg, default in zip(reversed(node.args.args + node.args.kwonlyargs),
                                reversed(node.args.defaults + [d for d in node.args.kw_defaults if d is not None])):
            self._credential(arg.arg, default, node)
        self.generic_visit(node)
        self.functions.pop()
        self.password_fns.pop()
        self.secret_fns.pop()
        self.argv_names = saved

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _secret_context(self, names: list[str]) -> bool:
        def words(n: str) -> set[str]:  # plurals count too: pins, tokens, codes
            w = set(_words(n))
            return w | {x[:-1] for x in w if x.endswith("s") and len(x) > 3}
        return any(words(n) & _SECRET_CONTEXT for n in names + self.functions[-1:] if n)

    # ------------------------------------------------------------ assignments
    def _credential(self, name: str, value: ast.AST | None, node: ast.AST) -> None:
        lit = _const_str(value)
        if lit is not None and _is_secret_name(name) and looks_like_secret(lit) and \
                lit.lower().replace("_", "") != name.split(".")[-1].lower().replace("_", ""):
            self.hit(node if not hasattr(value, "lineno") else value, 798, "hardcoded-credential",
                     f"a literal credential is assigned to {name!r}")

    def _assigned(self, targets: list[ast.AST], value: ast.AST | None, node: ast.AST) -> None:
        names = [n for t in targets for n in _target_names(t)]
        for n in names:
            self._credential(n, value, node)
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == 2 and \
                    set(_words(n)) & {"auth", "creds", "credentials", "login", "basic"} and \
                    _const_str(value.elts[0]) is not None and looks_like_secret(_const_str(value.elts[1]) or ""):
                self.hit(value, 798, "hardcoded-credential", f"a literal (user, password) pair is assigned to {n!r}")
            attr = n.split(".")[-1]
            if _pickle_serializer(attr, value):
                self.hit(node, 502, "pickle-serializer", f"{attr} accepts pickle: any producer can run code in the worker")
            if attr in ("check_hostname", "verify", "verify_ssl") and isinstance(value, ast.Constant) and \
                    value.value is False and "." in n:
                self.hit(node, 295, "tls-no-verify", f"{attr} = False turns TLS checks off")
            if attr == "verify_mode" and value is not None and ((_const_str(value) or "") == "CERT_NONE" or
                                                                 _last(value) == "CERT_NONE"):
                self.hit(node, 295, "tls-no-verify", "certificates are not checked (CERT_NONE)")
            if attr in ("minimum_version", "maximum_version") and isinstance(value, ast.Attribute) and \
                    value.attr in OLD_TLS and attr == "minimum_version":
                self.hit(node, 327, "old-tls", f"{value.attr} is an obsolete TLS version")
        if value is not None:
            if any(set(_words(n)) & _SIGNATURE_WORDS for n in names) and _crc_call(value) is not None:
                self.hit(node, 328, "crc-signature", "a CRC is not a keyed hash: anyone can forge this signature")
            self._weak_random(value, names, node)
            if isinstance(value, ast.Call) and dotted_name(value.func) in _WEAK_RNG_CLASSES:
                self.weak_rngs.update(t.id for t in targets if isinstance(t, ast.Name))
            if self._shell_argv(value):
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.argv_names[t.id] = value

    def visit_Assign(self, node: ast.Assign) -> None:
        self._assigned(node.targets, node.value, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assigned([node.target], node.value, node)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self._weak_random(node.value, [], node)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:  # random.shuffle(chars) in make_password()
        self._weak_random(node.value, [], node)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for k, v in zip(node.keys, node.values):
            key = _const_str(k)
            if key is None:
                continue
            if _pickle_serializer(key, v):
                self.hit(v, 502, "pickle-serializer", f"{key} accepts pickle: any producer can run code in the worker")
            kl = key.lower()
            if ("verif" in kl or "validate" in kl) and ("ssl" in kl or "tls" in kl or "cert" in kl) and \
                    isinstance(v, ast.Constant) and v.value in (False, "false", "none"):
                self.hit(v, 295, "tls-no-verify", f"{key} turns TLS certificate checks off")
            if kl.endswith("endpoint.identification.algorithm") and (_const_str(v) or "x").lower() in ("", "none"):
                self.hit(v, 295, "tls-no-verify", "TLS host-name checks are off (endpoint identification 'none')")
            lit = _const_str(v)
            if key.lower() in ("authorization", "proxy-authorization") and lit:
                parts = lit.split(None, 1)
                if len(parts) == 2 and looks_like_secret(parts[1]):
                    self.hit(v, 798, "hardcoded-credential", "a literal credential is sent in an Authorization header")
            elif lit is not None and (_is_secret_name(key.replace("-", "_"))) and looks_like_secret(lit):
                self.hit(v, 798, "hardcoded-credential", f"a literal credential is stored under {key!r}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        lit = _const_str(node)
        if lit and _SECRET_SHAPES.search(lit):
            self.hit(node, 798, "secret-literal", "the literal looks like a real key, token or password-bearing URL")
        # an HTML template that prints a value raw: bottle {{!x}}, mustache / handlebars {{{x}}}
        if lit and "<" in lit and ">" in lit and re.search(r"\{\{!\s*\w|\{\{\{\s*\w|\{%\s*raw\s+\w", lit):
            self.hit(node, 79, "template-raw-output", "the HTML template prints a value without escaping ({{!...}} / {{{...}}} / {% raw ... %})")
        if lit and re.search(r"(Unsalted)?(MD5|SHA1)PasswordHasher|UnsaltedSHA1|CryptPasswordHasher", lit):
            self.hit(node, 328, "weak-password-hash", "a broken password hasher is configured")

    # ------------------------------------------------------------ generators in a secret context
    def _weak_random(self, value: ast.AST, names: list[str], node: ast.AST) -> None:
        # a string printed from the clock or the process id in a secret's context (its name, the
        # function's or a decorator's) is guessable; a bare clock reading only under a secret's name
        printed = _string_built(value) or (isinstance(value, ast.Call) and _last(value.func) in ("str", "format", "hex"))
        for sub in ast.walk(value):
            if not isinstance(sub, ast.Call):
                continue
            full = dotted_name(sub.func)
            on_weak_rng = isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name) and \
                sub.func.value.id in self.weak_rngs
            clock = full in ("time.time", "time.time_ns")
            stamp = printed and (clock or full == "os.getpid")
            weak = (full.startswith(("np.random.", "numpy.random.", "random.Random", "Random(")) or on_weak_rng or
                    full in ("uuid.uuid1", "uuid1", "uuid.uuid3", "uuid3", "uuid.uuid5", "uuid5", "ObjectId",
                             "bson.ObjectId") or
                    (full.split(".")[0].lower() in ("faker", "fake") and full.endswith((".password", ".pystr"))) or
                    (full.startswith("random.") and full.split(".")[-1] in _RANDOM_FUNCS)) and "SystemRandom" not in full
            if ((weak or stamp) and self._secret_context(names)) or (
                    clock and any(set(_words(n)) & _SECRET_CONTEXT for n in names)):
                self.hit(node, 338, "weak-random", f"{full}() is predictable; secrets need the secrets module")
                return

    # ------------------------------------------------------------ calls
    def _shell_argv(self, node: ast.AST | None) -> bool:
        """An argv list that starts a shell on a command that is not a literal: ["sh", "-c", cmd]."""
        if isinstance(node, ast.Name) and node.id in self.argv_names:
            return True
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) < 3:
            return False
        first = _const_str(node.elts[0])
        if first is None or first.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower() not in SHELLS:
            return False
        flags = [(_const_str(e) or "").lower() for e in node.elts[1:]]
        if not any(f in ("-c", "/c", "-command", "-lc", "-ec") for f in flags):
            return False
        return any(_const_str(e) is None for e in node.elts[1:])

    def visit_Call(self, node: ast.Call) -> None:
        fn = node.func
        full = dotted_name(fn)
        last = _last(fn)
        rfull = self.resolved(full)
        parts = set(full.replace("()", "").split(".")) | set(rfull.replace("()", "").split("."))
        args = list(node.args)
        kw = call_keywords(node, self.consts)
        # ---- 78: a shell reached through an argv list, or asyncio's shell launcher; the sh
        # package runs sh.bash("-c", cmd) as the argv ["bash", "-c", cmd]
        if self._shell_argv(_argv_of(last, args, kw)) or (
                rfull.split(".")[0] == "sh" and full.count(".") == 1 and last in SHELLS and
                self._shell_argv(ast.List(elts=[ast.Constant(last)] + args, ctx=ast.Load()))):
            self.hit(node, 78, "shell-argv", "a shell (sh -c) runs a command string built at run time")
        if last == "create_subprocess_shell" and args and _const_str(args[0]) is None:
            self.hit(node, 78, "subprocess-shell", "asyncio runs a non-literal command through the shell")
        if last in ("run_process", "open_process") and "anyio" in parts and args and _string_built(args[0]):
            self.hit(node, 78, "subprocess-shell", "anyio runs a command string through the shell")
        if args and _string_built(args[0]) and _SHELL_C.match(_leading_literal(args[0])):
            self.hit(node, 78, "shell-string", "a command string built at run time is run by `sh -c`")
        # ---- 328: a CRC keyed with a secret is no MAC
        if last in ("sign", "verify", "sign_hash") and any(
                re.fullmatch(r"((rsa|ecdsa|dsa|hmac)-?)?(sha-?1|md5)", (_const_str(a) or "").lower())
                for a in args[1:] + list(kw.values())):  # "SHA1", dkim signature_algorithm=b"rsa-sha1"
            self.hit(node, 328, "weak-hash", "the signature is computed over a broken hash (SHA-1 / MD5)")
        if parts & _NON_CRYPTO_HASH_MODULES and any(
                _is_secret_name(dotted_name(n)) for a in args for n in ast.walk(a) if isinstance(n, (ast.Name, ast.Attribute))):
            self.hit(node, 328, "crc-signature", f"{full} is not a keyed hash: a digest over a secret can be forged")
        if last in ("crc32", "adler32") and parts & {"zlib", "binascii"} and any(
                _is_secret_name(dotted_name(n)) for a in args for n in ast.walk(a) if isinstance(n, (ast.Name, ast.Attribute))):
            self.hit(node, 328, "crc-signature", "a CRC over a secret is not a keyed hash: anyone can forge it")
        # ---- 328: a broken hash handed over as the digest function (signer_kwargs={"digest_method":
        # hashlib.md5}, digestmod=hashlib.sha1) or an ldap3 password scheme (hashed(HASHED_SALTED_MD5, pw))
        for v in args + list(kw.values()) + [d for a in args + list(kw.values()) if isinstance(a, ast.Dict)
                                             for d in a.values]:
            if self._weak_digest_ref(v) and last not in ("new", "HMAC", "digest", "compare_digest"):
                self.hit(node, 328, "weak-digest-arg", "a broken hash (MD5 / SHA-1) is passed in as the digest function")
                break
        if last == "hashed" and args and re.fullmatch(r"HASHED_(SALTED_)?(MD5|SHA)", dotted_name(args[0]).split(".")[-1]):
            self.hit(node, 328, "weak-password-hash", "the password is stored with a broken hash scheme (MD5 / SHA-1)")
        # ---- 328: a fast hash (SHA-2, SHA-3, BLAKE2) computed over a password in code that stores or
        # checks passwords: a GPU guesses billions a second (use bcrypt / argon2 / scrypt / pbkdf2)
        if last in _FAST_HASHES and dotted_name(fn).split(".")[0] in ("hashlib", "") and args and \
                self.password_fns and self.password_fns[-1] and _const_str(args[0]) is None and \
                (self.resolved(full).startswith("hashlib.") or full.startswith("hashlib.")) and \
                not any("token" in _words(dotted_name(n)) for n in ast.walk(args[0]) if isinstance(n, (ast.Name, ast.Attribute))):
            self.hit(node, 328, "fast-password-hash", f"a password is hashed with {last}, a fast hash (use bcrypt, argon2 or scrypt)")
        # ---- 327: pypdf's 128-bit / 40-bit encryption is RC4
        if last == "encrypt" and ("use_128bit" in kw or "RC4" in (_const_str(kw.get("algorithm")) or "").upper()):
            self.hit(node, 327, "weak-cipher", "the PDF is encrypted with RC4 (use algorithm='AES-256')")
        # ---- 328: paramiko's get_fingerprint() is MD5 (pin host keys by SHA-256)
        if last == "get_fingerprint" and isinstance(fn, ast.Attribute) and not args:
            self.hit(node, 328, "weak-hash", "get_fingerprint() is an MD5 digest of the key (compare SHA-256 fingerprints)")
        # ---- 338: generators that say they are not secure, and word-list name generators used for secrets
        if "non_secure" in last or (last in ("generate", "Generate", "generate_slug") and
                                    rfull.split(".")[0] in ("petname", "coolname") and self._fn_mentions_secret()):
            self.hit(node, 338, "weak-random", f"{full} uses a non-cryptographic generator for a secret value")
        # ---- 327 / 328: weak algorithms chosen by keyword (gnupg symmetric="3DES", pyhanko md_algorithm="sha1")
        for k, v in kw.items():
            val = (_const_str(v) or "").upper().replace("-", "")
            kl = (k or "").lower()
            if kl in ("symmetric", "cipher_algo", "cipher", "cipher_algorithm", "encryption_algorithm") and \
                    val in ("3DES", "DES", "DES3", "TRIPLEDES", "CAST5", "IDEA", "BLOWFISH", "RC4", "RC2"):
                self.hit(node, 327, "weak-cipher", f"{k}={_const_str(v)!r} is a broken or legacy cipher")
            if re.fullmatch(r"(md|digest|hash|signature_hash|hash_alg|digest_alg|md_alg)(_?(algorithm|algo|alg|name|method))?", kl) \
                    and val in ("MD5", "SHA1", "SHA"):
                self.hit(node, 328, "weak-hash", f"{k}={_const_str(v)!r} selects a broken hash")
        # ---- 502: kombu consumers that accept pickle unpickle what any publisher sends
        acc = kw.get("accept")
        if last == "Consumer" and isinstance(acc, (ast.List, ast.Tuple, ast.Set)) and any(
                (_const_str(e) or "") in ("pickle", "application/x-python-serialize") for e in acc.elts):
            self.hit(node, 502, "pickle-serializer", "the consumer accepts pickle: any publisher can run code in it")
        # ---- 502: zmq's recv_pyobj unpickles whatever a peer sends
        if last == "recv_pyobj":
            self.hit(node, 502, "unpickle-socket", "recv_pyobj() unpickles what the peer sent (use recv_json / recv)")
        # ---- 502: multiprocessing connections unpickle what they receive
        if rfull in ("multiprocessing.connection.Listener", "multiprocessing.connection.Client") and "authkey" not in kw:
            self.unauth_connections = True
        if last == "recv" and not args and not kw and self.unauth_connections:
            self.hit(node, 502, "unpickle-connection", "Connection.recv() unpickles data from an unauthenticated peer")
        # ---- 328: weak hashes reached through generic constructors
        if last == "pbkdf2_hmac" and args:
            h = (_const_str(args[0]) or "").lower()
            iters = args[3] if len(args) > 3 else kw.get("iterations")
            if h in WEAK_HASHES:
                self.hit(node, 328, "weak-kdf-hash", f"PBKDF2 over {h} is too weak for passwords")
            elif isinstance(iters, ast.Constant) and isinstance(iters.value, int) and iters.value < MIN_PBKDF2_ITERATIONS:
                self.hit(node, 328, "weak-kdf-iterations", f"PBKDF2 with {iters.value:,} iterations is too few")
        if last in ("new", "digest") and full.split(".")[0] == "hmac":
            dm = args[2] if len(args) > 2 else kw.get("digestmod")
            name = (_const_str(dm) or _last(dm) if dm is not None else "").lower()
            if name in WEAK_HASHES:
                self.hit(node, 328, "weak-hmac", f"HMAC over {name} is weak")
        if last in ("MD5", "SHA1", "MD4") and ("hashes" in parts or full in ("MD5", "SHA1")):
            self.hit(node, 328, "weak-hash", f"{last} is a broken hash")
        if last == "new" and parts & {"MD5", "SHA1", "MD4", "MD2"}:
            self.hit(node, 328, "weak-hash", f"{full} is a broken hash")
        if last in ("sha256", "sha512", "sha384", "sha224", "sha3_256", "sha3_512", "blake2b", "blake2s") and \
                full.split(".")[0] == "hashlib" and any(set(_words(dotted_name(n))) & {"password", "passwd", "pwd",
                                                                                      "passphrase", "pin"}
                                                        for a in args for n in ast.walk(a) if isinstance(n, (ast.Name, ast.Attribute))):
            self.hit(node, 328, "fast-password-hash", f"{full} is a fast, unsalted hash: passwords need a slow KDF")
        if parts & WEAK_PASSLIB and last in ("hash", "encrypt", "using", "verify"):
            self.hit(node, 328, "weak-password-hash", f"{full} is a broken password hash")
        if rfull == "jinja2.Template" or (last == "Environment" and "jinja2" in parts and not any(
                k.arg == "autoescape" for k in node.keywords)):
            self.hit(node, 79, "jinja-no-autoescape", "jinja2 does not escape HTML here unless autoescape is on")
        if last in ("tmpnam", "tempnam"):
            self.hit(node, 377, "predictable-temp", f"{last}() returns a predictable name")
        if last in ("AutoAddPolicy", "WarningPolicy"):
            self.hit(node, 295, "ssh-no-verify", f"paramiko {last} accepts unknown host keys")
        # ---- 327: weak ciphers, ECB, old TLS, verification off
        if last == "new" and "PKCS1_v1_5" in parts and "Cipher" in parts:
            self.hit(node, 327, "rsa-pkcs1v15", "RSA PKCS#1 v1.5 encryption is open to padding-oracle attacks")
        if last == "encrypt" and any(isinstance(a, ast.Call) and _last(a.func) == "PKCS1v15" for a in args):
            self.hit(node, 327, "rsa-pkcs1v15", "RSA PKCS#1 v1.5 encryption is open to padding-oracle attacks")
        if last == "new" and parts & WEAK_CIPHERS:
            self.hit(node, 327, "weak-cipher", f"{full} uses a broken cipher")
        if last in WEAK_CIPHERS and "algorithms" in parts:
            self.hit(node, 327, "weak-cipher", f"{last} is a broken cipher")
        if last == "ECB" and "modes" in parts:
            self.hit(node, 327, "ecb-mode", "ECB mode leaks plaintext structure")
        for a in args + list(kw.values()):
            if isinstance(a, ast.Attribute) and a.attr == "MODE_ECB":
                self.hit(node, 327, "ecb-mode", "ECB mode leaks plaintext structure")
            if isinstance(a, ast.Attribute) and a.attr in OLD_TLS and ("ssl" in dotted_name(a) or "SSL" in dotted_name(a)):
                self.hit(node, 327, "old-tls", f"{a.attr} is an obsolete TLS/SSL version")
        for k, v in kw.items():
            v = bound_constant(v, self.consts)  # validate_cert=self.VERIFY_TLS with VERIFY_TLS = False
            if k in ("verify", "verify_ssl", "ssl", "check_hostname", "validate_certs", "verify_certs", "ssl_verify",
                     "tls_verify", "validate_cert", "verify_cert") and isinstance(v, ast.Constant) and v.value is False:
                self.hit(node, 295, "tls-no-verify", f"{k}=False turns TLS certificate checks off")
            if _TLS_OFF_WHEN_TRUE.search(k) and isinstance(v, ast.Constant) and v.value is True:
                self.hit(node, 295, "tls-no-verify", f"{k}=True turns TLS certificate checks off")
            if _last(v) == "CERT_NONE" or (_const_str(v) or "").upper() == "CERT_NONE" or (
                    k in ("cert_reqs", "verify_mode", "ssl_cert_reqs", "tls_cert_reqs") and (
                        (_const_str(v) or "").lower() == "none" or (isinstance(v, ast.Constant) and v.value is None))):
                self.hit(node, 295, "tls-no-verify", "certificates are not checked (CERT_NONE)")
        if any(isinstance(a, ast.Attribute) and a.attr in ("OPT_X_TLS_NEVER", "OPT_X_TLS_ALLOW") for a in args):
            self.hit(node, 295, "tls-no-verify", "the LDAP client does not check the server certificate")
        if last.startswith("compress") and rfull.startswith("pyminizip") and len(args) > 3 and \
                not (isinstance(args[3], ast.Constant) and args[3].value is None):
            self.hit(node, 327, "weak-cipher", "pyminizip encrypts with ZipCrypto, which is broken (use AES, e.g. pyzipper)")
        if last in ("_create_unverified_context", "_create_stdlib_context"):
            self.hit(node, 295, "tls-no-verify", "an unverified TLS context skips certificate checks")
        if last == "decode" and "jwt" in parts:
            opts = kw.get("options")
            algs = kw.get("algorithms")
            off = isinstance(opts, ast.Dict) and any(_const_str(k) == "verify_signature" and isinstance(v, ast.Constant)
                                                     and v.value is False for k, v in zip(opts.keys, opts.values))
            none = isinstance(algs, (ast.List, ast.Tuple)) and any((_const_str(e) or "").lower() == "none" for e in algs.elts)
            if off or none:
                self.hit(node, 327, "jwt-unverified", "the JWT signature is not verified")
        # ---- 798: literal secrets handed to APIs that take a key or a password
        secret_pos = None
        if last in ("encode", "decode") and "jwt" in parts:
            secret_pos = 1
        elif full in ("hmac.new", "hmac.digest") or last in ("Fernet", "URLSafeTimedSerializer", "URLSafeSerializer",
                                                              "TimestampSigner", "Signer", "Serializer"):
            secret_pos = 0
        elif last in ("login", "HTTPBasicAuth", "HTTPDigestAuth", "BasicAuth", "set_password", "authenticate",
                      "simple_bind_s", "bind_s") or last.endswith(("Credentials", "Credential")):
            secret_pos = 1
        elif last == "new" and parts & {"AES", "ChaCha20", "ChaCha20_Poly1305", "Salsa20"}:
            secret_pos = 0
        if secret_pos is not None:
            cand = args[secret_pos] if len(args) > secret_pos else (kw.get("key") or kw.get("secret") or kw.get("password"))
            lit = _const_str(cand)
            if lit is None and isinstance(cand, ast.Call) and _last(cand.func) == "encode":
                lit = _const_str(cand.func.value) if isinstance(cand.func, ast.Attribute) else None
            if lit is not None and looks_like_secret(lit):
                self.hit(node, 798, "hardcoded-credential", f"{full or last}() is given a literal secret")
        for k, v in kw.items():
            if k == "auth" and isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == 2 and \
                    looks_like_secret(_const_str(v.elts[1]) or ""):
                self.hit(node, 798, "hardcoded-credential", "a literal password is passed as auth")
            else:
                self._credential(k, v, node)
        if last in ("SecretStr", "SecretBytes", "SecretValue") and args and looks_like_secret(_const_str(args[0]) or ""):
            self.hit(node, 798, "hardcoded-credential", f"{last}() wraps a literal secret: it is still in the source")
        if last.endswith(("Client", "Auth", "Credentials")) and any(_TOKENISH.match(_const_str(a) or "") for a in args):
            self.hit(node, 798, "hardcoded-credential", f"{last}() is given a literal key or token")
        if last in ("getenv", "get", "setdefault") and len(args) == 2 and (last == "getenv" or "environ" in full) and \
                _is_secret_name(_const_str(args[0]) or "") and looks_like_secret(_const_str(args[1]) or ""):
            self.hit(node, 798, "hardcoded-credential", "a literal credential is the fallback of an environment lookup")
        # ---- 94: an interpreter run on a code string built at run time (python -c ...)
        argv = _argv_of(last, args, kw)
        if isinstance(argv, (ast.List, ast.Tuple)) and len(argv.elts) >= 3:
            head = _const_str(argv.elts[0]) or ("python" if dotted_name(argv.elts[0]) == "sys.executable" else "")
            prog = head.rsplit("/", 1)[-1].lower()
            if (prog in INTERPRETERS or prog.startswith("python")) and any(
                    (_const_str(e) or "") in ("-c", "-e", "--eval", "-r") for e in argv.elts[1:]) and \
                    any(_const_str(e) is None for e in argv.elts[1:]):
                self.hit(node, 94, "interpreter-argv", "an interpreter runs a code string built at run time")
        # ---- 377: predictable names in the shared temp directory
        if full in ("os.path.join", "path.join", "join", "posixpath.join") and args and self._tempdir(args[0]) and \
                not any(self._random_name(a) for a in args[1:]):
            self.hit(node, 377, "predictable-temp", "a predictable file name in the shared temp directory")
        # ---- 502: deserialisers that can run code
        if last == "load" and parts & {"torch"} and "hub" not in parts and not (isinstance(kw.get("weights_only"), ast.Constant)
                                                         and kw["weights_only"].value is True):
            self.hit(node, 502, "torch-load", "torch.load without weights_only=True unpickles arbitrary objects")
        if last in ("load", "loads") and parts & {"joblib", "dill", "cloudpickle", "jsonpickle", "shelve"}:
            self.hit(node, 502, "unsafe-deserialise", f"{full} can run code from the data")
        if last in ("decode",) and "jsonpickle" in parts:
            self.hit(node, 502, "unsafe-deserialise", "jsonpickle.decode can run code from the data")
        trusted = kw.get("trusted")
        if last in ("load", "loads") and "skops" in rfull and trusted is not None and (
                (isinstance(trusted, ast.Constant) and trusted.value is True) or
                (isinstance(trusted, ast.Call) and _last(trusted.func) == "get_untrusted_types")):
            self.hit(node, 502, "unsafe-deserialise", "skops trusts every type the file names: it can run code from the data")
        if last == "SqliteDict" and "decode" not in kw:
            self.hit(node, 502, "unsafe-deserialise", "SqliteDict unpickles its values unless given another decode")
        # a deserializer callback that is pickle (kafka value_deserializer=pickle.loads, loads=dill.loads)
        for k, v in kw.items():
            if isinstance(v, ast.Attribute) and v.attr in ("loads", "load") and \
                    dotted_name(v.value) in ("pickle", "cPickle", "dill", "cloudpickle", "marshal", "jsonpickle"):
                self.hit(node, 502, "unsafe-deserialise", f"{k}={dotted_name(v)}: every message is unpickled")
        if last == "load" and "gensim" in rfull:  # gensim models and KeyedVectors are pickles
            self.hit(node, 502, "unsafe-deserialise", f"{full} unpickles the model file")
        if last == "read_pickle":
            self.hit(node, 502, "unsafe-deserialise", "read_pickle unpickles arbitrary objects")
        if last == "load" and parts & {"np", "numpy"} and isinstance(kw.get("allow_pickle"), ast.Constant) and \
                kw["allow_pickle"].value is True:
            self.hit(node, 502, "numpy-pickle", "numpy.load with allow_pickle=True unpickles arbitrary objects")
        if last in ("unsafe_load", "full_load", "unsafe_load_all") and "yaml" in parts:
            self.hit(node, 502, "unsafe-yaml", f"yaml.{last} can build arbitrary objects")
        # ---- 611: parsers told to resolve external entities
        if last in ("setFeature", "set_feature") and len(args) >= 2 and isinstance(args[1], ast.Constant) and \
                args[1].value is True and ("external" in dotted_name(args[0]).lower() or
                                           "external" in (_const_str(args[0]) or "").lower()):
            self.hit(node, 611, "xxe-feature", "the XML parser is told to load external entities")
        entities_off = isinstance(kw.get("resolve_entities"), ast.Constant) and kw["resolve_entities"].value is False
        if any(isinstance(kw.get(k), ast.Constant) and kw[k].value is True and not (k == "load_dtd" and entities_off)
               for k in ("resolve_entities", "load_dtd")) or (
                last in ("XMLParser", "makeparser", "XMLPullParser", "iterparse") and
                isinstance(kw.get("no_network"), ast.Constant) and kw["no_network"].value is False):
            self.hit(node, 611, "xxe-parser", "the XML parser resolves entities / loads DTDs / fetches them")
        if any(k in ("forbid_entities", "forbid_external", "forbid_dtd") and isinstance(v, ast.Constant) and v.value is False
               for k, v in kw.items()):
            self.hit(node, 611, "xxe-parser", "entity / external-reference protection is switched off")
        for k, v in kw.items():
            if _pickle_serializer(k, v):
                self.hit(node, 502, "pickle-serializer", f"{k} accepts pickle: any producer can run code in the worker")
        if "cairosvg" in parts and isinstance(kw.get("unsafe"), ast.Constant) and kw["unsafe"].value is True:
            self.hit(node, 611, "xxe-parser", "cairosvg unsafe=True resolves external entities and files")
        # ---- 502 / 328 / 79: unsafe modes chosen by a keyword or a literal
        if last == "load_model" and isinstance(kw.get("safe_mode"), ast.Constant) and kw["safe_mode"].value is False:
            self.hit(node, 502, "unsafe-deserialise", "load_model(safe_mode=False) runs code stored in the model")
        if last == "YAML" and (_const_str(kw.get("typ")) or "").lower() in ("unsafe", "full"):
            self.hit(node, 502, "unsafe-yaml", "ruamel YAML(typ='unsafe') builds arbitrary objects")
        if last == "file_digest" and len(args) > 1 and (_const_str(args[1]) or "").lower() in WEAK_HASHES:
            self.hit(node, 328, "weak-hash", f"file_digest with {_const_str(args[1])} is a broken hash")
        if last in ("from_string", "Template", "render_template_string") and args and \
                re.search(r"\|\s*safe\b|autoescape\s+(false|off)", _const_str(args[0]) or ""):
            self.hit(node, 79, "template-safe-filter", "the template marks data |safe: it is not escaped")
        if "xmltodict" in parts and last == "parse" and isinstance(kw.get("disable_entities"), ast.Constant) and \
                kw["disable_entities"].value is False:
            self.hit(node, 611, "xxe-parser", "xmltodict is told to expand entities")
        if last in ("generate_password_hash", "make_password"):
            method = _const_str(kw.get("method") or kw.get("hasher") or (args[1] if len(args) > 1 and
                                                                         last == "make_password" else None)) or ""
            if method and re.search(r"(?i)(md5|sha1|plain|^crypt$|^des)", method):
                self.hit(node, 328, "weak-password-hash", f"passwords hashed with {method!r}")
        # a constant IV or nonce: the same keystream / block chain for every message
        if (last == "new" and parts & ({"AES", "ChaCha20", "Salsa20"} | WEAK_CIPHERS)) or \
                (last in ("CBC", "CFB", "OFB", "CTR", "GCM") and "modes" in parts):
            ivs = [kw[k] for k in ("iv", "nonce", "IV") if k in kw] + (args[2:3] if last == "new" else args[:1])
            if any(_const_str(v) is not None for v in ivs):
                self.hit(node, 327, "static-iv", "a constant IV / nonce is reused for every message")
        for k in ("default_scheme", "scheme"):
            if (_const_str(kw.get(k)) or "").lower() in WEAK_PASSLIB:
                self.hit(node, 328, "weak-password-hash", f"passwords hashed with the broken {_const_str(kw[k])!r} scheme")
        if last == "select_autoescape":
            exts = kw.get("enabled_extensions", args[0] if args else None)
            if isinstance(exts, (ast.List, ast.Tuple)) and not any(
                    (_const_str(e) or "").lower().lstrip(".") in ("html", "htm") for e in exts.elts):
                self.hit(node, 79, "jinja-no-autoescape", "autoescape is on for some extensions only: HTML templates are not escaped")
        if last in ("CryptContext", "PasswordType"):  # passlib contexts, sqlalchemy_utils PasswordType(schemes=[...])
            schemes = kw.get("schemes") or (args[0] if args else None)
            weak = [(_const_str(e) or "") for e in getattr(schemes, "elts", [])]
            if any(w.lower() in WEAK_PASSLIB for w in weak):
                self.hit(node, 328, "weak-password-hash", "the password context uses a broken scheme")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # plumbum: local["bash"]["-c", cmd] binds a shell to a command string built at run time
        inner = node.value
        if isinstance(inner, ast.Subscript) and _last(inner.value) == "local" and _const_str(inner.slice) is not None:
            rest = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if self._shell_argv(ast.List(elts=[inner.slice] + rest, ctx=ast.Load())):
                self.hit(node, 78, "shell-argv", "a shell (sh -c) runs a command string built at run time")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # pyaes / other ECB modes of operation
        if node.attr.endswith("ModeOfOperationECB"):
            self.hit(node, 327, "weak-cipher", f"{node.attr}: ECB leaks patterns of the plaintext")
        # libxml2 parse options that substitute entities or load external DTDs
        if node.attr in ("XML_PARSE_NOENT", "XML_PARSE_DTDLOAD") and dotted_name(node.value) == "libxml2":
            self.hit(node, 611, "xxe-option", f"libxml2.{node.attr} expands entities / loads external DTDs")
        # SNMPv3 privacy with DES / 3DES (pysnmp usmDESPrivProtocol, usm3DESEDEPrivProtocol)
        if re.fullmatch(r"usm(3?DES\w*|DES)PrivProtocol", node.attr):
            self.hit(node, 327, "weak-cipher", "SNMPv3 privacy uses DES / 3DES (use usmAesCfb128Protocol or stronger)")
        # NamedTemporaryFile(...).name: the file is closed and deleted at once, its name reused later
        if node.attr == "name" and isinstance(node.value, ast.Call) and _last(node.value.func) == "NamedTemporaryFile":
            self.hit(node, 377, "predictable-temp", "the name of a temporary file that is already gone is reused (race)")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, (ast.Add, ast.Div)) and self._tempdir(node.left) and not self._random_name(node.right):
            self.hit(node, 377, "predictable-temp", "a predictable file name in the shared temp directory")
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        vals = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
        if vals and self._tempdir(vals[0]) and not any(self._random_name(v) for v in vals[1:]):
            self.hit(node, 377, "predictable-temp", "a predictable file name in the shared temp directory")
        self.generic_visit(node)

    # ------------------------------------------------------------ helpers
    def _fn_mentions_secret(self) -> bool:
        return bool(self.secret_fns) and (self.secret_fns[-1] or self._secret_context([]))

    def _weak_digest_ref(self, node: ast.AST) -> bool:
        """``hashlib.md5`` / ``hashlib.sha1`` (or ``md5`` imported from hashlib) named, not called."""
        if isinstance(node, ast.Attribute) and node.attr in ("md5", "sha1") and dotted_name(node.value) == "hashlib":
            return True
        return isinstance(node, ast.Name) and node.id in ("md5", "sha1") and \
            self.resolved(node.id) in ("hashlib.md5", "hashlib.sha1")

    @staticmethod
    def _tempdir(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Call):
            if _last(node.func) in ("Path", "PurePath") and node.args:
                return ApiRules._tempdir(node.args[0])
            return _last(node.func) == "gettempdir"
        return isinstance(node, ast.Attribute) and node.attr == "tempdir" and dotted_name(node.value) == "tempfile"

    @staticmethod
    def _random_name(node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                full = dotted_name(sub.func)
                if full.startswith("secrets.") or full.split(".")[-1] in ("uuid4", "token_hex", "token_urlsafe", "urandom",
                                                                         "mkstemp", "mkdtemp"):
                    return True
        return False


def rule_findings_tree(tree: ast.AST) -> list[tuple[int, int, str, str]]:
    """(line, cwe, rule, message) for every rule hit in a parsed module.

    >>> import ast
    >>> [f[1:3] for f in rule_findings_tree(ast.parse("import hashlib\\nk = hashlib.pbkdf2_hmac('sha1', p, s, 1000)"))]
    [(328, 'rule:weak-kdf-hash')]
    """
    v = ApiRules()
    v.consts = module_constants(tree)
    try:
        v.visit(tree)
    except RecursionError:
        return []
    return v.findings
