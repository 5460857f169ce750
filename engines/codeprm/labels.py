"""Step labels from static analysis: bandit run in-process, and a taint labeller of our own.

Both read the code's AST only; nothing is imported or executed. Prefixes and broken code are
*repaired* first (unclosed brackets closed, a dangling block header given a body, trailing
lines dropped), and when no repair parses, each step is parsed on its own (dedented), so a
live prefix still gets labels.
"""
from __future__ import annotations

import ast
import io
import logging
import textwrap
from dataclasses import dataclass

from engines.codeprm.steps import split_steps

# CWE families this tab reports, with a short explanation for the UI and SARIF.
CWE_INFO: dict[int, str] = {
    22: "Path traversal: a user-controlled path reaches the file system.",
    78: "OS command injection: a shell runs a string built from input.",
    79: "Cross-site scripting: input reaches HTML without escaping.",
    89: "SQL injection: a query is built by string formatting instead of parameters.",
    94: "Code injection: eval/exec (or a debugger shell) runs dynamic code.",
    295: "TLS certificate verification is disabled.",
    327: "Broken or risky cryptography (weak cipher or hash).",
    328: "Weak hash (MD5/SHA-1) used where a strong one is needed.",
    338: "Non-cryptographic random generator used for secrets.",
    377: "Insecure temporary file (predictable name or mktemp).",
    502: "Deserialisation of untrusted data (pickle, marshal, unsafe yaml).",
    611: "XML parsed with external entities enabled (XXE).",
    798: "Hard-coded credential or secret.",
    918: "Server-side request forgery: a request goes to a user-supplied URL.",
}

# bandit test id -> CWE family kept as a label. Everything else (assert, try/except/pass,
# bare imports, subprocess without shell, request timeouts, ...) is left out as noise.
BANDIT_CWE: dict[str, int] = {
    "B102": 94, "B307": 94, "B201": 94, "B302": 502, "B301": 502, "B506": 502, "B614": 502,
    "B303": 328, "B324": 328, "B304": 327, "B305": 327, "B413": 327, "B505": 327,
    "B311": 338, "B105": 798, "B106": 798, "B107": 798,
    "B108": 377, "B306": 377,
    "B313": 611, "B314": 611, "B315": 611, "B316": 611, "B317": 611, "B318": 611, "B319": 611,
    "B320": 611, "B408": 611,
    "B602": 78, "B605": 78, "B604": 78, "B609": 78, "B601": 78, "B606": 78,
    "B608": 89, "B610": 89, "B611": 89,
    "B701": 79, "B702": 79, "B703": 79, "B308": 79, "B704": 79,
    "B310": 918, "B501": 295, "B323": 295, "B502": 295, "B503": 295, "B504": 295, "B202": 22,
}


@dataclass(frozen=True)
class Finding:
    """One security finding on one line."""

    line: int
    cwe: int
    rule: str
    message: str
    source: str  # "bandit", "taint", "template" or "model"

    def to_dict(self) -> dict:
        return {"line": self.line, "cwe": f"CWE-{self.cwe}", "rule": self.rule,
                "message": self.message, "source": self.source}


# ----------------------------------------------------------------------------------- repair
def _close_brackets(text: str) -> str:
    stack: list[str] = []
    pairs = {"(": ")", "[": "]", "{": "}"}
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            if c == "\n" and len(quote) == 1:
                quote = None
        elif c == "#":
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        elif c in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
            i += len(quote)
            continue
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")]}" and stack:
            stack.pop()
        i += 1
    tail = ""
    if quote:
        tail += quote
    return text + tail + "".join(reversed(stack))


def _try_parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def repair(code: str, max_drop: int = 6) -> tuple[str, ast.Module] | None:
    """Make a prefix or broken snippet parse: returns (repaired text, tree) or None.

    Tries, dropping up to ``max_drop`` trailing lines: the text as is, with open brackets and
    strings closed, and with an indented ``pass`` after a dangling ``:``. Line numbers of the
    kept lines are unchanged.

    >>> repair("def f(x):\\n    return g(x,")[0].splitlines()[1]
    '    return g(x,)'
    """
    lines = code.splitlines()
    for drop in range(min(max_drop, max(len(lines) - 1, 0)) + 1):
        body = "\n".join(lines[: len(lines) - drop]) if drop else code
        for cand in (body, _close_brackets(body)):
            tree = _try_parse(cand)
            if tree is not None:
                return cand, tree
            last = cand.rstrip().splitlines()[-1] if cand.strip() else ""
            if last.rstrip().endswith(":"):
                ind = len(last) - len(last.lstrip()) + 4
                cand2 = cand.rstrip() + "\n" + " " * ind + "pass"
                tree = _try_parse(cand2)
                if tree is not None:
                    return cand2, tree
    return None


def _pieces(code: str, max_step_lines: int = 8) -> list[tuple[int, str, ast.Module]]:
    """(line offset, text, tree) pieces that parse: the whole repaired code or each step alone."""
    fixed = repair(code)
    if fixed is not None:
        return [(0, fixed[0], fixed[1])]
    out = []
    lines = code.splitlines()
    for sp in split_steps(code, max_step_lines):
        text = textwrap.dedent("\n".join(lines[sp.start - 1: sp.end]))
        r = repair(text, max_drop=2)
        if r is not None:
            out.append((sp.start - 1, r[0], r[1]))
    return out


# ----------------------------------------------------------------------------------- bandit
class _Bandit:
    """bandit's node visitor run on an in-memory string (its manager only reads files)."""

    def __init__(self) -> None:
        from bandit.core import config, manager

        for name in ("bandit", "bandit.core", "bandit.core.node_visitor", "bandit.core.manager",
                     "bandit.core.tester", "bandit.core.utils"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.manager = manager.BanditManager(config.BanditConfig(), "file", quiet=True)

    def run(self, text: str) -> list:
        from bandit.core import metrics

        m = self.manager
        m.results = []
        m.metrics = metrics.Metrics()
        m.metrics.begin("snippet.py")
        try:
            m._execute_ast_visitor("snippet.py", io.BytesIO(text.encode("utf-8", "replace")), text, {})
        except Exception:  # noqa: BLE001 - a bandit plugin crash must not kill a scan
            return []
        return list(m.results)


_BANDIT: _Bandit | None = None


def bandit_raw(code: str) -> list[tuple[int, str, int, str, str, str]]:
    """All bandit results on (repaired) code: (line, test id, cwe, severity, confidence, text).

    >>> [r[1] for r in bandit_raw("import os\\nos.system('ls ' + x)")]
    ['B605']
    """
    global _BANDIT
    if _BANDIT is None:
        _BANDIT = _Bandit()
    out = []
    for off, text, _tree in _pieces(code):
        for r in _BANDIT.run(text):
            cwe = getattr(getattr(r, "cwe", None), "id", 0) or 0
            out.append((r.lineno + off, r.test_id, int(cwe), str(r.severity), str(r.confidence), r.text))
    return out


def bandit_findings(code: str) -> list[Finding]:
    """bandit results kept as labels (see ``BANDIT_CWE``), on lines of ``code``."""
    n = len(code.splitlines())
    out = []
    for line, tid, _cwe, sev, conf, text in bandit_raw(code):
        fam = BANDIT_CWE.get(tid)
        if fam is None or not 1 <= line <= n:
            continue
        if tid == "B608" and conf == "LOW" and sev == "MEDIUM":
            pass  # SQL string building: bandit's LOW confidence is still the pattern we want
        out.append(Finding(line, fam, f"bandit:{tid}", text, "bandit"))
    return out


# ----------------------------------------------------------------------------------- taint
_SOURCE_ATTRS = {"args", "form", "values", "json", "files", "cookies", "headers", "data",
                 "GET", "POST", "COOKIES", "FILES", "query_params", "path_params", "body"}
_SOURCE_CALLS = {"input", "raw_input", "getenv", "get_json", "recv", "recvfrom", "readline",
                 "read", "urlparse_qs", "parse_qs", "getpass"}
_SANITIZERS = {"int", "float", "bool", "quote", "escape", "basename", "secure_filename",
               "clean", "abs", "len", "normpath_checked", "uuid4", "hex", "literal_eval",
               "quote_plus", "sha256", "safe_join", "isdigit", "isalnum"}
_REQ_FUNCS = {"get", "post", "put", "delete", "head", "patch", "request", "urlopen", "Request",
              "urlretrieve", "open_url", "stream"}
_REQ_MODS = {"requests", "httpx", "urllib", "request", "urllib3", "session", "client", "http"}


def _name(node: ast.AST) -> str:
    """Dotted name of a Name/Attribute chain ('' when it is something else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_name(node.func) + "()")
    return ".".join(reversed(parts))


def _is_string_built(node: ast.AST) -> bool:
    """True for f-strings, % / + formatting and .format() calls."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return True
    return False


class _Taint(ast.NodeVisitor):
    """Flow-insensitive, statement-ordered taint tracking inside each function and module."""

    def __init__(self) -> None:
        self.tainted: set[str] = set()
        self.built: set[str] = set()  # names assigned from string building
        self.findings: list[tuple[int, int, str, str]] = []

    # -- sources and propagation
    def is_source(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            full = _name(node)
            if node.attr in _SOURCE_ATTRS and ("request" in full.lower() or full.startswith("req")):
                return True
            if full in ("os.environ", "sys.argv", "environ", "argv"):
                return True
        if isinstance(node, ast.Subscript) and _name(node.value) in ("os.environ", "sys.argv", "environ", "argv"):
            return True
        if isinstance(node, ast.Call):
            fn = node.func
            last = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")
            full = _name(fn)
            if last in _SOURCE_CALLS and last not in ("read", "readline"):
                return True
            if last in ("read", "readline", "recv") and "request" not in full:
                return True
            if last == "get" and any(s in full for s in ("args", "form", "environ", "values", "cookies",
                                                           "headers", "GET", "POST", "query_params")):
                return True
        return False

    def tainted_expr(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Call):
            fn = node.func
            last = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")
            if last in _SANITIZERS:
                return False
        if self.is_source(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.tainted
        if isinstance(node, (ast.Lambda, ast.Constant)):
            return False
        return any(self.tainted_expr(c) for c in ast.iter_child_nodes(node))

    def _targets(self, t: ast.AST) -> list[str]:
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, (ast.Tuple, ast.List)):
            return [n for e in t.elts for n in self._targets(e)]
        if isinstance(t, ast.Attribute):
            return [_name(t)]
        return []

    def _assign(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        names = [n for t in targets for n in self._targets(t)]
        taint = self.tainted_expr(value)
        built = value is not None and (_is_string_built(value) or
                                       (isinstance(value, ast.Name) and value.id in self.built))
        for n in names:
            (self.tainted.add if taint else self.tainted.discard)(n)
            (self.built.add if built else self.built.discard)(n)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        self._assign(node.targets, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        if self.tainted_expr(node.value):
            for n in self._targets(node.target):
                self.tainted.add(n)
        for n in self._targets(node.target):
            self.built.add(n)

    def visit_For(self, node: ast.For) -> None:
        if self.tainted_expr(node.iter):
            for n in self._targets(node.target):
                self.tainted.add(n)
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None and self.tainted_expr(item.context_expr):
                for n in self._targets(item.optional_vars):
                    self.tainted.add(n)
        self.generic_visit(node)

    def _function(self, node) -> None:
        saved = (set(self.tainted), set(self.built))
        routed = any("route" in _name(d.func if isinstance(d, ast.Call) else d) or
                     _name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("get", "post", "put")
                     for d in node.decorator_list)
        if routed:  # parameters of a web route come from the URL
            for a in node.args.args + node.args.kwonlyargs:
                self.tainted.add(a.arg)
        self.generic_visit(node)
        self.tainted, self.built = saved

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        # a guard `if <check on x>: raise/return` validates x for the code after it
        self.generic_visit(node)
        if node.body and isinstance(node.body[-1], (ast.Raise, ast.Return)):
            for n in ast.walk(node.test):
                if isinstance(n, ast.Name):
                    self.tainted.discard(n.id)

    # -- sinks
    def _hit(self, node: ast.AST, cwe: int, rule: str, msg: str) -> None:
        self.findings.append((node.lineno, cwe, rule, msg))

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        v = node.value
        if v is not None and _is_string_built(v) and self.tainted_expr(v):
            consts = " ".join(c.value for c in ast.walk(v) if isinstance(c, ast.Constant) and isinstance(c.value, str))
            if "<" in consts and ">" in consts:
                self._hit(node, 79, "taint:html", "user input is formatted into HTML without escaping")

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        fn = node.func
        full = _name(fn)
        last = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")
        args = list(node.args)
        first = args[0] if args else None
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        any_taint = any(self.tainted_expr(a) for a in args) or any(self.tainted_expr(v) for v in kw.values())
        shell = isinstance(kw.get("shell"), ast.Constant) and kw["shell"].value is True
        mod = full.split(".")[0] if "." in full else ""
        if last in ("system", "popen") and mod in ("os", "") and any_taint:
            self._hit(node, 78, "taint:os-command", "user input reaches a shell command")
        elif mod == "subprocess" or last in ("Popen", "call", "check_call", "check_output", "run", "getoutput",
                                             "getstatusoutput"):
            if last in ("getoutput", "getstatusoutput") and any_taint:
                self._hit(node, 78, "taint:os-command", "user input reaches a shell command")
            elif shell and self.tainted_expr(first if first is not None else kw.get("args")):
                self._hit(node, 78, "taint:os-command", "user input reaches subprocess with shell=True")
        if last in ("eval", "exec") and mod in ("", "builtins") and any_taint:
            self._hit(node, 94, "taint:eval", "user input is evaluated as code")
        if last in ("execute", "executemany", "executescript", "raw", "text") and first is not None:
            built = _is_string_built(first) or (isinstance(first, ast.Name) and first.id in self.built)
            if built and self.tainted_expr(first):
                self._hit(node, 89, "taint:sql", "SQL built from user input by string formatting")
        if last in ("open", "send_file", "send_from_directory", "remove", "unlink", "rmtree", "FileResponse",
                    "read_text", "read_bytes", "write_text") and first is not None and self.tainted_expr(first):
            if last != "open" or mod in ("", "io", "os", "codecs", "builtins"):
                self._hit(node, 22, "taint:path", "a user-controlled path reaches the file system")
        if last == "Path" and first is not None and self.tainted_expr(first):
            self._hit(node, 22, "taint:path", "a user-controlled path reaches the file system")
        if last in ("loads", "load", "Unpickler") and mod in ("pickle", "marshal", "dill", "cPickle", "shelve") and any_taint:
            self._hit(node, 502, "taint:deserialize", "untrusted data is unpickled")
        if last in ("load", "load_all") and mod == "yaml":
            loader = kw.get("Loader")
            safe = loader is not None and "Safe" in _name(loader)
            if not safe and (any_taint or loader is not None):
                self._hit(node, 502, "taint:yaml", "yaml.load without SafeLoader on untrusted data")
        if last in ("render_template_string", "Markup", "mark_safe", "HTMLResponse", "make_response") and first is not None \
                and self.tainted_expr(first) and (last != "make_response" or _is_string_built(first)):
            self._hit(node, 79, "taint:template", "user input reaches HTML without escaping")
        if last in _REQ_FUNCS and (mod in _REQ_MODS or "request" in full or "session" in full.lower()) \
                and first is not None and self.tainted_expr(first) and "args" not in full:
            self._hit(node, 918, "taint:ssrf", "a request is sent to a user-controlled URL")
        if last in ("fromstring", "parseString", "XML", "parse", "XMLParser") and \
                any(m in full for m in ("etree", "minidom", "xml", "ET", "sax", "pulldom", "lxml")) and \
                not any(m in full.lower() for m in ("defused", "safe")):
            if last == "XMLParser":
                r = kw.get("resolve_entities")
                if r is None or (isinstance(r, ast.Constant) and r.value is True):
                    self._hit(node, 611, "taint:xxe", "XML parser resolves external entities")
            elif any_taint:
                self._hit(node, 611, "taint:xxe", "untrusted XML parsed with the standard library parser")


def taint_findings(code: str) -> list[Finding]:
    """Findings of the taint labeller: untrusted sources flowing into dangerous sinks.

    >>> [f.cwe for f in taint_findings("import os\\ncmd = input()\\nos.system('ls ' + cmd)")]
    [78]
    """
    n = len(code.splitlines())
    out = []
    for off, _text, tree in _pieces(code):
        t = _Taint()
        try:
            t.visit(tree)
        except RecursionError:
            continue
        for line, cwe, rule, msg in t.findings:
            if 1 <= line + off <= n:
                out.append(Finding(line + off, cwe, rule, msg, "taint"))
    return out


def label_findings(code: str) -> list[Finding]:
    """bandit (filtered) + taint findings, one per (line, cwe), sorted by line.

    >>> [(f.line, f.cwe) for f in label_findings("import pickle\\nobj = pickle.loads(data)")]
    [(2, 502)]
    """
    seen = {}
    for f in taint_findings(code) + bandit_findings(code):
        seen.setdefault((f.line, f.cwe), f)
    return sorted(seen.values(), key=lambda f: (f.line, f.cwe))
