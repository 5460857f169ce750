"""The taint labeller: untrusted data followed from sources into dangerous sinks, per CWE family.

Flow-insensitive, statement-ordered tracking inside each function and module, on the AST only
(nothing is imported or run). Two levels: data from outside (request fields, uploads, CLI,
environment, sockets, queue messages, archive member names, parameters of web routes and
handlers) and any caller's value (every parameter). Sanitisers, allow-list checks and guards
clear both. ``labels.py`` runs it on repaired code beside bandit and the API rules.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from engines.codeprm.findings import (
    ImportAliases,
    bound_constant,
    call_keywords,
    last_name,
    module_constants,
)
from engines.codeprm.findings import const_str as _const_str
from engines.codeprm.findings import dotted_name as _name
from engines.codeprm.findings import string_built as _string_built

_SOURCE_ATTRS = {"args", "form", "forms", "params", "arguments", "values", "json", "files", "cookies", "headers", "data",
                 "GET", "POST", "COOKIES", "FILES", "META", "query_params", "path_params", "body", "query",
                 "match_info", "rel_url", "query_string", "path", "full_path", "url", "base_url", "referrer",
                 "user_agent", "path_info", "raw_uri", "uri", "host_url"}
_SOURCE_CALLS = {"input", "raw_input", "getenv", "get_json", "recv", "recvfrom", "readline",
                 "read", "urlparse_qs", "parse_qs", "getpass", "get_argument", "get_arguments",
                 "get_query_argument", "get_query_arguments", "get_body_argument", "get_body_arguments",
                 "get_cookie", "namelist", "infolist", "getmembers", "getnames", "get_filename"}
# methods of a request object that return what the client sent (aiohttp/starlette/flask)
_REQUEST_READS = {"text", "json", "post", "read", "body", "form", "get_data", "content", "stream"}
_SANITIZERS = {"int", "float", "bool", "quote", "escape", "basename", "secure_filename", "shell_format", "shell_quote",
               "clean", "abs", "len", "normpath_checked", "uuid4", "hex", "literal_eval",
               "quote_plus", "sha256", "safe_join", "isdigit", "isalnum", "format_html", "xhtml_escape",
               "conditional_escape", "escape_html", "quoteattr", "urlencode", "UUID", "ip_address", "ip_network",
               "compile_restricted", "compile_restricted_exec", "compile_restricted_eval"}
_REQ_FUNCS = {"get", "post", "put", "delete", "head", "patch", "request", "urlopen", "Request",
              "urlretrieve", "open_url", "stream", "fetch", "request_encode_url", "request_encode_body"}
_REQ_MODS = {"requests", "httpx", "urllib", "request", "urllib3", "session", "client", "http"}
_REMOTE_SHELLS = {"c", "conn", "connection", "ctx", "cxn", "host", "remote", "ssh"}
_HTTP_METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"}
# parameters whose name says they carry what a client, a message or an upload sent
_UNTRUSTED_PARAM = re.compile(r"(?i)(^|_)(request|req|event|payload|body|upload|uploaded|untrusted|user|form|"
                              r"query|webhook|callback|incoming|submitted|remote|message|msg|job)(_|$|s$)")
_HANDLER_BASES = ("Handler", "View", "Resource", "Endpoint", "APIView", "Consumer")
_HANDLER_METHODS = {"get", "post", "put", "patch", "delete", "head", "options",
                    "receive", "receive_json", "websocket_receive", "on_message"}  # + websocket consumers
# sinks where any caller-controlled value is already a finding (bandit flags most of them on
# sight): shell strings, eval/exec, SQL built by formatting, stdlib XML parsing, HTTP clients;
# file paths and HTML need data that really comes from outside (a request, an upload, input()).
_HTML_SINKS = {"render_template_string", "Markup", "mark_safe", "HTMLResponse", "make_response", "HttpResponse",
               "Response", "write", "finish", "SafeString", "NotStr", "raw"}
_MARKED_SAFE = ("render_template_string", "Markup", "mark_safe", "SafeString", "NotStr", "raw")
_PATH_CALLS = {"send_file", "FileResponse", "static_file", "FileWrapper", "serve_file", "serve_download"}
# calls whose name says they fetch what a URL points to (loaders, crawlers, headless browsers)
_FETCHER = re.compile(r"(Loader|Reader|Crawler|Scraper|WebhookClient)$|^(goto|navigate|crawl|scrape|download|fetch_url|load_url|"
                      r"urlretrieve|open_url|read_url|from_url|clone_from)$")
_OS_PATH_CALLS = {"remove", "unlink", "rmdir", "removedirs", "listdir", "makedirs", "mkdir", "chmod", "chown",
                  "rename", "replace", "scandir"}
_SHUTIL_PATH_CALLS = {"rmtree", "copy", "copy2", "copyfile", "copytree", "move", "unpack_archive"}
_PATH_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "open", "unlink", "rmdir", "mkdir", "touch",
                 "iterdir"}
# writers that take the destination path as their first argument (pandas, matplotlib, numpy)
_WRITER_METHODS = {"to_parquet", "to_csv", "to_excel", "to_feather", "to_json", "to_hdf", "to_pickle", "to_stata",
                   "to_orc", "savefig", "tofile"}


def _url_named(node: ast.AST) -> bool:
    """The expression names a URL (a variable, attribute or key called *url*, *uri*, *link*...)."""
    words = [_name(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))]
    words += [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return any(re.search(r"(?i)(url|uri|link|href|endpoint|webhook|callback|feed|src)", w) for w in words)


def _const_str_of(node: ast.AST) -> str:
    return node.value.lower() if isinstance(node, ast.Constant) and isinstance(node.value, str) else "html"


def _html_consts(node: ast.AST) -> bool:
    consts = " ".join(c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return "<" in consts and ">" in consts


def _raw_value(node: ast.AST) -> bool:
    """The expression has a non-literal part that no sanitiser call (escape, clean, ...) wraps."""
    if isinstance(node, ast.Constant):
        return False
    if isinstance(node, ast.Call):
        if _name(node.func).split(".")[-1] in _SANITIZERS | {"format_html", "render_to_string", "render"}:
            return False
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
            return _raw_value(node.func.value) or any(_raw_value(a) for a in node.args) or \
                any(_raw_value(k.value) for k in node.keywords)
        return True
    if isinstance(node, (ast.JoinedStr, ast.BinOp, ast.FormattedValue, ast.IfExp, ast.BoolOp)):
        return any(_raw_value(c) for c in ast.iter_child_nodes(node)
                   if not isinstance(c, (ast.operator, ast.boolop, ast.expr_context)))
    return True


def _escapes_markup(node: ast.Call) -> bool:
    """A ``.replace("<", ...)`` chain: the value's markup characters are escaped by hand
    (``json.dumps(state).replace("<", "\\u003c")`` before it goes into a <script>)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
        if node.args and _const_str(node.args[0]) in ("<", "&"):
            return True
        node = node.func.value
    return False


def _typed_field(node: ast.AST) -> bool:
    """An f-string field printed as a number or a date (``{n:d}``, ``{x:.2f}``, ``{t:%Y-%m-%d}``):
    its text is digits and the spec's own characters, never markup, a path or a command."""
    if not isinstance(node, ast.FormattedValue) or not isinstance(node.format_spec, ast.JoinedStr):
        return False
    if any(not isinstance(v, ast.Constant) for v in node.format_spec.values):
        return False
    spec = "".join(str(v.value) for v in node.format_spec.values)
    return bool(re.fullmatch(r"[<>^=+\- #0-9,_.]*[bdoxXneEfFgG%]", spec) or
                re.fullmatch(r"[^<>&'\"]*%[a-zA-Z][^<>&'\"]*", spec))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


# calls whose truth says a value is well-formed or allowed (not merely that a file exists)
_VALIDATOR_CALLS = {"startswith", "endswith", "is_relative_to", "match", "fullmatch", "isalnum", "isdigit",
                    "isidentifier", "isascii", "isdecimal", "isnumeric", "commonpath", "url_has_allowed_host_and_scheme",
                    "is_safe_url", "issubset"}
_NOT_VALIDATORS = {"len", "bool", "any", "all", "isinstance", "hasattr", "callable", "getattr", "str", "int", "float",
                   "exists", "isfile", "isdir", "print", "type", "id", "repr", "list", "dict", "set", "tuple"}
_VALIDATOR_PREFIXES = ("is_valid", "valid", "is_allowed", "allowed", "check", "is_safe", "verify", "ensure")


# calls that put a URL into a reply, a log line or a record rather than fetch it (``jsonify(url=u)``)
_OUTPUT_BUILDER = re.compile(r"(jsonify|dict|redirect|url_for|format|append|update|setdefault|"
                             r"render\w*|\w*Response|debug|info|warning|error|exception|log)$")
_IP_CHECKS = {"is_global", "is_private", "is_loopback", "is_link_local", "is_reserved", "is_multicast",
              "is_unspecified"}
_SCHEME_PREFIX = re.compile(r"[a-z][a-z0-9+.-]*(:(//)?)?")


def _origin_names(value: ast.AST) -> set[str]:
    """The names a value is computed from, for guards that validate it (``host = urlparse(url).hostname``:
    checking host checks url). A name read only for one field (``room = msg["room"]``,
    ``msg.get("room")``) is left out: checking that field says nothing about the rest of ``msg``."""
    other, fields = set(), set()
    for n in ast.walk(value):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Constant):
            fields.add(id(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and \
                isinstance(n.func.value, ast.Name) and n.args and isinstance(n.args[0], ast.Constant):
            fields.add(id(n.func.value))
    for n in ast.walk(value):
        if isinstance(n, ast.Name) and id(n) not in fields:
            other.add(n.id)
    return other


def _path_contained(test: ast.AST) -> bool:
    """The test checks path containment (``is_relative_to``, ``commonpath``, a resolved ``startswith``)."""
    return any(isinstance(n, ast.Call) and last_name(n.func) in ("is_relative_to", "commonpath", "relative_to")
               for n in ast.walk(test)) or any(
        isinstance(n, ast.Call) and last_name(n.func) == "startswith" and any(
            isinstance(m, ast.Call) and last_name(m.func) in ("realpath", "abspath", "resolve") for m in ast.walk(n.func))
        for n in ast.walk(test))


def checking_wrappers(tree: ast.AST) -> set[str]:
    """Module-level functions that raise on a bad argument and return that argument (or a value
    made from it): ``def _public_url(u): if ...: raise ...; return u``. Their result is checked input."""
    out = set()
    for fn in getattr(tree, "body", []):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs}
        raises = any(isinstance(n, ast.Raise) for n in ast.walk(fn))
        returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if raises and returns and all(_names(r) & params for r in returns):
            out.add(fn.name)
    return out


def _raw_markdown(node: ast.AST | None) -> bool:
    """``MarkdownIt()`` / ``MarkdownIt("commonmark" | "gfm-like", {...})`` without ``"html": False``: those
    presets pass raw HTML in the source through (``"js-default"`` and ``"zero"`` do not)."""
    if not (isinstance(node, ast.Call) and last_name(node.func) == "MarkdownIt"):
        return False
    preset = _const_str(node.args[0]) if node.args else "commonmark"
    opts = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "options_update"), None)
    html_off = isinstance(opts, ast.Dict) and any(_const_str(k) == "html" and isinstance(v, ast.Constant) and not v.value
                                                  for k, v in zip(opts.keys, opts.values))
    return preset in ("commonmark", "gfm-like") and not html_off


def _upload(node: ast.AST | None) -> bool:
    """``request.FILES["f"]`` / ``request.files.get("f")``: an uploaded file object."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        node = node.func.value
    elif isinstance(node, ast.Subscript):
        node = node.value
    else:
        return False
    return isinstance(node, ast.Attribute) and node.attr in ("FILES", "files") and "request" in _name(node.value).lower()


def _scheme_only(test: ast.AST) -> bool:
    """A test that reads only a URL's scheme (``url.startswith(("http://", "https://"))``,
    ``parsed.scheme != "https"``): it says nothing about the host, so it validates nothing."""
    if isinstance(test, ast.Compare):
        return isinstance(test.left, ast.Attribute) and test.left.attr == "scheme"
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and test.args:
        arg = test.args[0]
        lits = [e for e in (arg.elts if isinstance(arg, ast.Tuple) else [arg])]
        return all(isinstance(e, ast.Constant) and isinstance(e.value, str) and
                   _SCHEME_PREFIX.fullmatch(e.value.lower()) and e.value.lower().startswith(("http", "ftp", "ws"))
                   for e in lits)
    return False


def _validated(test: ast.AST) -> set[str]:
    """Names a guard's test validates: comparisons (membership, equality), validator calls
    (startswith, is_relative_to, regex match, is_allowed_*...), under not/and/or; a truth test,
    an existence check (``if not p.exists(): raise``) or a URL-scheme check validates nothing."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _validated(test.operand)
    if isinstance(test, ast.BoolOp):
        return set().union(*(_validated(v) for v in test.values))
    if _scheme_only(test):
        return set()
    # ip_address(host).is_global, all(ip_address(a).is_global for a in addrs): the resolved address was checked
    if any(isinstance(n, ast.Attribute) and n.attr in _IP_CHECKS for n in ast.walk(test)) and (
            isinstance(test, ast.Attribute) or (isinstance(test, ast.Call) and last_name(test.func) in ("all", "any"))):
        return _names(test)
    if isinstance(test, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)) for op in test.ops):
        return _names(test)
    if isinstance(test, ast.Call):
        last = _name(test.func).split(".")[-1]
        if last in _VALIDATOR_CALLS or last.lower().startswith(_VALIDATOR_PREFIXES):
            return _names(test)
        # a predicate of the code's own (`if not on_platform(url): raise`), not a builtin truth test
        if isinstance(test.func, ast.Name) and test.func.id not in _NOT_VALIDATORS:
            return _names(test)
    return set()


def _allow_checked(test: ast.AST) -> set[str]:
    """Names an if-test validates by a positive allow-list check (membership in a fixed
    collection, equality with a literal, path containment); empty for truth or URL-prefix tests."""
    if isinstance(test, ast.BoolOp):
        return set().union(*(_allow_checked(v) for v in test.values)) if isinstance(test.op, ast.And) else set()
    if _scheme_only(test):
        return set()
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and isinstance(right, (ast.Name, ast.Attribute, ast.Set, ast.Tuple, ast.List)) and \
                not (isinstance(right, ast.Attribute) and "request" in _name(right)):
            return _names(test.left)
        if isinstance(op, ast.Eq):
            if isinstance(right, ast.Constant):
                return _names(test.left)
            if isinstance(test.left, ast.Constant):
                return _names(right)
            if any(isinstance(c, ast.Call) and _name(c.func).split(".")[-1] in ("realpath", "abspath", "resolve",
                                                                                 "commonpath") for c in ast.walk(test)):
                return _names(test)
    if isinstance(test, ast.Call):
        last = _name(test.func).split(".")[-1]
        if last in ("is_relative_to", "fullmatch") or (last == "startswith" and any(
                isinstance(c, ast.Call) and _name(c.func).split(".")[-1] in ("realpath", "abspath", "resolve")
                for c in ast.walk(test.func))):
            return _names(test)
    return set()


@dataclass(frozen=True)
class _CallSite:
    """What every sink check reads about one call: the node, its dotted and import-resolved names,
    the module it comes from, its last name part, arguments, and whether any argument carries a
    caller's value."""

    node: ast.Call
    fn: ast.AST
    full: str
    rfull: str
    mod: str
    last: str
    args: list
    first: ast.AST | None
    kw: dict
    any_weak: bool


class _Taint(ImportAliases):
    """Flow-insensitive, statement-ordered taint tracking inside each function and module.

    Two levels: ``tainted`` names carry data from outside (request fields, uploads, input(),
    argv, environment, sockets, archive member names, parameters of web routes and handlers or
    named like a request/payload/upload); ``weak`` names carry a caller's value (any parameter).
    Sinks that are findings on sight (shells, eval, SQL formatting, XML, HTTP clients) fire on
    either; file paths and HTML fire on ``tainted`` only. Sanitisers (quote/escape/basename/int,
    ...) and guards (``if <check on x>: raise/return``) clear both.
    """

    def __init__(self) -> None:
        super().__init__()
        self.tainted: set[str] = set()
        self.weak: set[str] = set()
        self.web: set[str] = set()  # names derived from what a web client sent, even through sanitisers
        self.built: set[str] = set()  # names assigned from string building
        self.html: set[str] = set()  # names assigned from HTML built with tainted parts
        self.classes: list[ast.ClassDef] = []
        self.safe_parsers: set[str] = set()  # names bound to an XML parser with entities off
        self.sax_parsers: dict[str, int] = {}  # names bound to xml.sax.make_parser() -> that line
        self.safe_default_parser = False  # lxml's default parser was replaced by one with entities off
        self.clean_keys: set[str] = set()  # dicts built by a comprehension that allow-lists its keys
        self.url_names: set[str] = set()  # names bound to a value read from a URL-named field
        self.xml_feeds: set[str] = set()  # names bound to an incremental XML parser that resolves entities
        self.vetted_lines: set[int] = set()  # exec/eval/mark_safe lines whose argument is literal or sanitised
        self.frames: set[str] = set()  # names bound to a pandas object (its query/eval run expressions)
        self.restricted: set[str] = set()  # names bound to code compiled by RestrictedPython
        self.defused_xmlrpc = False  # defusedxml.xmlrpc.monkey_patch() hardened xmlrpc's parser
        self.bash_tasks: list[bool] = []  # per enclosing function: an Airflow @task.bash (it returns a command)
        self.origin: dict[str, set[str]] = {}  # name -> the names its value was computed from
        self.dynamic_lines: set[int] = set()  # lines that build a string from a caller's value
        self.findings: list[tuple[int, int, str, str]] = []
        self.consts: dict[str, ast.AST] = {}  # module / class literals (module_constants), set before the visit
        self.validators: set[str] = set()  # module functions that raise on bad input and return it (checking wrappers)
        self.path_checked: set[str] = set()  # request paths cleared by a containment check only (not shell-safe)
        self.downloaders: set[str] = set()  # names bound to a yt_dlp.YoutubeDL(...) (it fetches any URL)
        self.archives: set[str] = set()  # names bound to an open zip/tar archive (its .open() reads a member)
        self.uploads: set[str] = set()  # names bound to an uploaded file object (request.FILES["x"]): not a path
        self.sandboxes: set[str] = set()  # names bound to a jinja2 SandboxedEnvironment()
        self.raw_markdown: set[str] = set()  # names bound to a MarkdownIt() that passes raw HTML through
        self.from_fields: set[str] = set()  # names bound to strings formatted from self.<field> values
        # parameters tainted only because of their name (``payload``, ``user_input``) outside a route or
        # handler: opening such a path whole is the caller's choice of file, not a traversal
        self.by_name: set[str] = set()
        self.escapers: set[str] = set()  # names bound to a renderer made with escape=True (mistune.create_markdown)

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
        # http.server / socketserver handlers: the request line and headers are the client's
        if isinstance(node, ast.Attribute) and _name(node) in ("self.path", "self.headers", "self.requestline") and \
                self.classes and any(_name(b).endswith("RequestHandler") for b in self.classes[-1].bases):
            return True
        if isinstance(node, ast.Call):
            fn = node.func
            last = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")
            full = _name(fn)
            on_request = "request" in full.lower() or full.startswith("req")
            if last in _REQUEST_READS and on_request and isinstance(fn, ast.Attribute):
                return True
            if last in _SOURCE_CALLS and last not in ("read", "readline"):
                return True
            if last in ("read", "readline", "recv") and "request" not in full:
                return True
            if last == "get" and any(s in full for s in ("args", "form", "environ", "values", "cookies",
                                                           "headers", "GET", "POST", "query_params", "query",
                                                           "match_info", "META")):
                return True
        return False

    def tainted_expr(self, node: ast.AST | None, weak: bool = False) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Call):
            fn = node.func
            last = fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")
            safe_md = last == "markdown" and any(k.arg == "safe_mode" and not (isinstance(k.value, ast.Constant) and
                                                                             not k.value.value) for k in node.keywords)
            if last in _SANITIZERS or _name(fn) == "shlex.join" or _escapes_markup(node) or safe_md or (
                    isinstance(fn, ast.Name) and fn.id in self.validators):
                return False
            # SORT_COLUMNS.get(key): a value of a literal mapping (an allow-list lookup), unless the
            # default is the caller's value
            if last == "get" and isinstance(fn, ast.Attribute) and self._literal_map(fn.value):
                return len(node.args) > 1 and self.tainted_expr(node.args[1], weak)
        if isinstance(node, ast.Subscript) and self._literal_map(node.value):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                node.attr in ("id", "pk") or node.attr.endswith("_id")) and not self.is_source(node):
            return False  # a record's key (comment.author_id): a number, not markup or a path
        if isinstance(node, ast.Attribute) and (node.attr in ("stem", "suffix") or (
                node.attr == "name" and isinstance(node.value, ast.Call) and
                last_name(node.value.func) in ("Path", "PurePath", "PurePosixPath", "PosixPath"))):
            return False  # p.stem / Path(p).name: the last component, no separators left
        if isinstance(node, ast.Attribute) and re.match(r"(self\.)?(request|req)\.(user|method|scheme|is_secure)\b",
                                                        _name(node)):
            return False  # the authenticated user and the request's method are the server's, not the client's text
        if self.is_source(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.tainted or (weak and node.id in self.weak)
        if isinstance(node, (ast.Lambda, ast.Constant)) or _typed_field(node):
            return False
        if isinstance(node, ast.IfExp):  # "DESC" if request.args.get("dir") == "desc" else "ASC": the test picks, it is not the value
            return self.tainted_expr(node.body, weak) or self.tainted_expr(node.orelse, weak)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            # ",".join("?" for _ in ids) carries no data: only the elements count, and a loop
            # variable only when its iterable is tainted
            bound = {n for g in node.generators if self.tainted_expr(g.iter, weak) and not self._keys_of_clean(g.iter)
                     for n in self._targets(g.target)}
            # `... for col in cols if col in ALLOWED`: the allow-list check clears col
            bound -= {n for g in node.generators for c in g.ifs for n in _allow_checked(c)}
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            # the loop variables count as tainted inside the elements, so sanitisers still apply
            saved = (self.tainted, self.weak)
            self.tainted, self.weak = self.tainted | bound, self.weak | bound
            try:
                return any(self.tainted_expr(e, weak) for e in elts)
            finally:
                self.tainted, self.weak = saved
        return any(self.tainted_expr(c, weak) for c in ast.iter_child_nodes(node))

    def _built_from_fields(self, node: ast.AST) -> bool:
        """A string formatted from ``self.<field>`` values (a job's or a record's data), unquoted."""
        if isinstance(node, ast.Name):
            return node.id in self.built and node.id in self.from_fields
        if not _string_built(node):
            return False
        return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" and
                   not n.attr.isupper() for n in ast.walk(node)) and not any(
            isinstance(n, ast.Call) and last_name(n.func) in _SANITIZERS for n in ast.walk(node))

    def _literal_map(self, node: ast.AST) -> bool:
        """``node`` is a module- or class-level dict literal whose values are all literals."""
        d = bound_constant(node, self.consts)
        return d is not node and isinstance(d, ast.Dict) and bool(d.values) and all(
            isinstance(v, ast.Constant) for v in d.values)

    def _keys_of_clean(self, it: ast.AST) -> bool:
        """Iterating ``it`` yields the keys of a dict whose keys passed an allow-list filter."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "keys":
            it = it.func.value
        return isinstance(it, ast.Name) and it.id in self.clean_keys

    def host_dynamic(self, url: ast.AST, weak: bool) -> bool:
        """The URL's scheme/host part is tainted (SSRF), not only its path or query: the first piece
        of an f-string / concatenation / format template decides, unless it is a bare scheme."""
        head = None
        if isinstance(url, ast.JoinedStr) and url.values:
            head = url.values[0]
            rest = url.values[1:]
        elif isinstance(url, ast.BinOp) and isinstance(url.op, ast.Add):
            parts = []
            node = url
            while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                parts.append(node.right)
                node = node.left
            head, rest = node, list(reversed(parts))
        elif isinstance(url, ast.Call) and isinstance(url.func, ast.Attribute) and url.func.attr == "format" and \
                isinstance(url.func.value, ast.Constant):
            head, rest = url.func.value, list(url.args)
        if head is None:
            return self.tainted_expr(url, weak)
        if isinstance(head, ast.FormattedValue):
            head = head.value
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            after = head.value.split("://", 1)[-1] if "://" in head.value else None
            if after is not None and after.strip("/"):  # "https://api.example.com/..." fixes the host
                return False
            if after is None and not head.value.startswith("//"):  # "/path" or a relative URL
                return False
            return any(self.tainted_expr(r, weak) for r in rest[:1])
        return self.tainted_expr(head, weak)

    def _targets(self, t: ast.AST) -> list[str]:
        if isinstance(t, ast.Name):
            return [t.id]
        if isinstance(t, (ast.Tuple, ast.List)):
            return [n for e in t.elts for n in self._targets(e)]
        if isinstance(t, ast.Attribute):
            return [_name(t)]
        if isinstance(t, ast.Starred):
            return self._targets(t.value)
        return []

    def _assign(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        names = [n for t in targets for n in self._targets(t)]
        taint = self.tainted_expr(value)
        weak = taint or self.tainted_expr(value, weak=True)
        built = value is not None and (_string_built(value) or
                                       (isinstance(value, ast.Name) and value.id in self.built))
        html = value is not None and ((_string_built(value) and taint and _html_consts(value)) or
                                      (isinstance(value, ast.Name) and value.id in self.html))
        src = _origin_names(value) if value is not None else set()
        web = value is not None and self._from_web(value)
        clean_keys = isinstance(value, ast.DictComp) and bool(
            _names(value.key) & {n for g in value.generators for c in g.ifs for n in _allow_checked(c)})
        url = value is not None and _url_named(value)
        fields = value is not None and self._built_from_fields(value)
        for n in names:
            (self.from_fields.add if fields else self.from_fields.discard)(n)
            (self.clean_keys.add if clean_keys else self.clean_keys.discard)(n)
            (self.url_names.add if url else self.url_names.discard)(n)
            self.origin[n] = src
            (self.web.add if web else self.web.discard)(n)
            (self.tainted.add if taint else self.tainted.discard)(n)
            (self.weak.add if weak else self.weak.discard)(n)
            (self.built.add if built else self.built.discard)(n)
            (self.html.add if html else self.html.discard)(n)

    def _from_web(self, node: ast.AST) -> bool:
        """The value derives from a request, an upload or a handler's parameter (sanitised or not):
        what matters for sinks that run a file's *content* (a safe file name is still their code)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.web:
                return True
            if isinstance(n, (ast.Attribute, ast.Call)):
                full = _name(n.func if isinstance(n, ast.Call) else n)
                if "request" in full.lower() or full.startswith("req"):
                    return True
        return False

    def _spread(self, targets: list[str], src: ast.AST) -> None:
        if self.tainted_expr(src):
            self.tainted.update(targets)
        if self.tainted_expr(src, weak=True):
            self.weak.update(targets)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        self._assign(node.targets, node.value)
        v = node.value
        bound = [n for t in node.targets for n in self._targets(t)]
        (self.archives.update if self._archive(v) else self.archives.difference_update)(bound)
        (self.uploads.update if _upload(v) else self.uploads.difference_update)(bound)
        (self.raw_markdown.update if _raw_markdown(v) else self.raw_markdown.difference_update)(bound)
        ydl = isinstance(v, ast.Call) and last_name(v.func) == "YoutubeDL"
        (self.downloaders.update if ydl else self.downloaders.difference_update)(bound)
        sandbox = isinstance(v, ast.Call) and "Sandboxed" in last_name(v.func)
        (self.sandboxes.update if sandbox else self.sandboxes.difference_update)(bound)
        escaping = isinstance(v, ast.Call) and any(k.arg == "escape" and isinstance(k.value, ast.Constant) and
                                                  k.value.value is True for k in v.keywords)
        (self.escapers.update if escaping else self.escapers.difference_update)(bound)
        if not isinstance(v, ast.Call):
            self.frames.difference_update(bound)
            self.restricted.difference_update(bound)
            return
        rv, last = self.resolved(_name(v.func)), last_name(v.func)
        (self.frames.update if rv.startswith("pandas.") else self.frames.difference_update)(bound)
        (self.restricted.update if last.startswith("compile_restricted") else self.restricted.difference_update)(bound)
        r = call_keywords(v, self.consts).get("resolve_entities")
        entities_off = isinstance(r, ast.Constant) and r.value is False
        if last in ("XMLPullParser", "XMLParser") and not any(m in rv.lower() for m in ("defused", "safe")) and \
                not entities_off:
            self.xml_feeds.update(bound)
        if last in ("XMLParser", "makeparser") and entities_off:
            self.safe_parsers.update(bound)
        if last == "make_parser" and "sax" in rv:
            self.sax_parsers.update({n: node.lineno for n in bound})

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        names = self._targets(node.target)
        self._spread(names, node.value)
        self.built.update(names)

    def visit_For(self, node: ast.For) -> None:
        if not self._keys_of_clean(node.iter):
            self._spread(self._targets(node.target), node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if not self._keys_of_clean(node.iter):
            self._spread(self._targets(node.target), node.iter)
        for n in {n for c in node.ifs for n in _allow_checked(c)}:
            self.tainted.discard(n)
            self.weak.discard(n)
        self.generic_visit(node)

    def _archive(self, value: ast.AST | None) -> bool:
        return isinstance(value, ast.Call) and (last_name(value.func) in ("ZipFile", "PyZipFile", "TarFile") or
                                                self.resolved(_name(value.func)) == "tarfile.open")

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._spread(self._targets(item.optional_vars), item.context_expr)
                if self._archive(item.context_expr):
                    self.archives.update(self._targets(item.optional_vars))
                if isinstance(item.context_expr, ast.Call) and last_name(item.context_expr.func) == "YoutubeDL":
                    self.downloaders.update(self._targets(item.optional_vars))
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()

    def _function(self, node) -> None:
        saved = (set(self.tainted), set(self.weak), set(self.built), set(self.html), set(self.web), set(self.by_name),
                 set(self.path_checked))
        a = node.args
        self.by_name -= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None}
        routed = any("route" in _name(d.func if isinstance(d, ast.Call) else d) or
                     _name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("get", "post", "put", "patch",
                                                                                       "delete", "websocket", "expose") or
                     # @rt("/path"), @app.api_route("/x/{id}"), ...: a URL pattern names a web route
                     (isinstance(d, ast.Call) and d.args and (_const_str(d.args[0]) or "").startswith("/")) or
                     # @sio.on("export_table"), @sio.event: a socket.io event handler gets what the client emitted
                     (isinstance(d, ast.Call) and last_name(d.func) == "on" and d.args and _const_str(d.args[0])) or
                     (isinstance(d, ast.Attribute) and d.attr == "event" and "sio" in _name(d.value).lower()) or
                     # a task-queue job (@huey.task, @app.task, @shared_task, @dramatiq.actor): its
                     # arguments arrive in a queue message that a web request enqueued
                     last_name(d.func if isinstance(d, ast.Call) else d) in ("task", "shared_task", "actor",
                                                                             "periodic_task", "db_task", "tool")
                     for d in node.decorator_list)
        handler = bool(self.classes) and node.name in _HANDLER_METHODS and any(
            _name(b).split(".")[-1].endswith(_HANDLER_BASES) for b in self.classes[-1].bases)
        first_arg = next((a.arg for a in node.args.posonlyargs + node.args.args if a.arg not in ("self", "cls")), "")
        handler = handler or first_arg in ("request", "req")  # a Django-style view: the rest comes from the URL
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                  if a.arg not in ("self", "cls")]
        params += [a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None]
        self.weak.update(params)
        # FastAPI dependencies (user=Depends(current_user)) are computed by the server, not sent
        pos = node.args.posonlyargs + node.args.args
        defaults = dict(zip([a.arg for a in pos][len(pos) - len(node.args.defaults):], node.args.defaults))
        defaults.update({a.arg: d for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None})
        injected = {p for p, d in defaults.items() if isinstance(d, ast.Call) and last_name(d.func) in ("Depends", "Security")}
        # a route's parameters typed as numbers, UUIDs or dates are parsed by the framework before the call
        typed = {a.arg for a in pos + node.args.kwonlyargs if a.annotation is not None and
                 _name(a.annotation).split(".")[-1] in ("int", "float", "bool", "UUID", "date", "datetime", "Decimal")}
        injected |= typed if routed else set()
        for p in params:
            if p in injected:
                continue
            if routed or handler or _UNTRUSTED_PARAM.search(p):  # parameters of a web route come from the URL
                self.tainted.add(p)
                self.web.add(p)
                if not (routed or handler):
                    self.by_name.add(p)
        self.bash_tasks.append(any(_name(d.func if isinstance(d, ast.Call) else d).endswith("task.bash")
                                   for d in node.decorator_list))
        self.generic_visit(node)
        self.bash_tasks.pop()
        self.tainted, self.weak, self.built, self.html, self.web, self.by_name, self.path_checked = saved

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        # an allow-list check `if x in ALLOWED:` / `if host == "...":` / `if p.is_relative_to(root):`
        # validates x inside its body; a guard `if <check on x>: raise/return/abort` validates x
        # for the code after it
        checked = self._with_origins(_allow_checked(node.test))
        if checked:
            saved = (set(self.tainted), set(self.weak))
            self.tainted -= checked
            self.weak -= checked
            self.visit(node.test)
            for st in node.body:
                self.visit(st)
            self.tainted, self.weak = saved
            for st in node.orelse:
                self.visit(st)
        else:
            self.generic_visit(node)
        if self._aborts(node.body[-1] if node.body else None):
            cleared = self._with_origins(_validated(node.test))
            # a containment check (p.is_relative_to(root)) makes a path safe to open, not to paste
            # into a shell command line: a file name can still hold quotes and ;
            if _path_contained(node.test):
                self.path_checked |= {n for n in cleared if n in self.tainted}
            for n in cleared:
                self.tainted.discard(n)
                self.weak.discard(n)

    def visit_Expr(self, node: ast.Expr) -> None:
        # check_targets(cfg) / validate_upload(f) as a statement: it raises on bad input, so what it
        # was given is validated for the code after it
        self.generic_visit(node)
        v = node.value
        if isinstance(v, ast.Call) and set(last_name(v.func).lower().split("_")) & {"check", "validate", "verify",
                                                                                      "ensure", "assert"}:
            for n in self._with_origins(set().union(*(_names(a) for a in v.args)) if v.args else set()):
                self.tainted.discard(n)
                self.weak.discard(n)

    def visit_Try(self, node: ast.Try) -> None:
        # try: p.relative_to(root) / validate(x) ... except ...: raise/return/abort  validates p
        # for the code after the try, as an if-guard does
        self.generic_visit(node)
        checks = [st.value for st in node.body if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)]
        if checks and node.handlers and all(self._aborts(h.body[-1] if h.body else None) for h in node.handlers):
            for call in checks:
                last = _name(call.func).split(".")[-1]
                if last in ("relative_to", "validate", "validate_email", "validate_ipv46_address", "full_clean") or \
                        last.lower().startswith(_VALIDATOR_PREFIXES):
                    recv = call.func.value if isinstance(call.func, ast.Attribute) and last == "relative_to" else call
                    for n in self._with_origins(_names(recv)):
                        self.tainted.discard(n)
                        self.weak.discard(n)

    visit_TryStar = visit_Try

    @staticmethod
    def _aborts(last: ast.AST | None) -> bool:
        return isinstance(last, (ast.Raise, ast.Return, ast.Continue)) or (
            isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and
            _name(last.value.func).split(".")[-1] in ("abort", "send_error", "exit"))

    def _with_origins(self, names: set[str]) -> set[str]:
        """Checked names and the names they were computed from, two steps back
        (``host = urlparse(url).hostname`` checks ``url`` too)."""
        out = set(names)
        for _ in range(2):  # two steps back: addrs = getaddrinfo(parts.hostname), parts = urlsplit(url)
            out |= set().union(*(self.origin.get(n, set()) for n in out))
        return out

    def _note_dynamic(self, node: ast.AST) -> None:
        if _string_built(node) and self.tainted_expr(node, weak=True):
            self.dynamic_lines.add(node.lineno)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._note_dynamic(node)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._note_dynamic(node)
        self.generic_visit(node)

    # -- sinks
    def _hit(self, node: ast.AST, cwe: int, rule: str, msg: str) -> None:
        self.findings.append((node.lineno, cwe, rule, msg))

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        v = node.value
        if self.bash_tasks and self.bash_tasks[-1] and self._built_taint(v, weak=True):
            self._hit(node, 78, "taint:os-command", "an Airflow @task.bash returns a command built from its arguments")
        if v is not None and _string_built(v) and self.tainted_expr(v) and _html_consts(v):
            self._hit(node, 79, "taint:html", "user input is formatted into HTML without escaping")

    def _built_taint(self, node: ast.AST | None, weak: bool = False) -> bool:
        """A string built by formatting (or a name bound to one) with a tainted, unsanitised part."""
        if node is None:
            return False
        built = _string_built(node) or (isinstance(node, ast.Name) and node.id in self.built)
        return built and self.tainted_expr(node, weak)

    def _html_arg(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.html
        return _string_built(node) and self.tainted_expr(node) and _html_consts(node)

    def _path_sink(self, c: _CallSite) -> bool:
        """A file-system call whose path (an argument, or the Path it is a method of) is tainted."""
        node, last, mod, args = c.node, c.last, c.mod, c.args
        if last == "open" and (mod in ("", "io", "os", "codecs", "builtins", "aiofiles", "anyio", "trio", "PIL") or
                               _name(node.func) == "Image.open"):
            # an uploaded file object is read from memory, not opened by name (its .filename is a path)
            upload = _upload(args[0]) or isinstance(args[0], ast.Name) and args[0].id in self.uploads | self.by_name \
                if args else False
            return bool(args) and not upload and self.tainted_expr(args[0])
        if last in _PATH_CALLS or (last in ("file", "file_stream") and "response" in c.rfull):
            return any(self.tainted_expr(a) for a in args[:2])
        if last == "upload_file" and args:  # boto3 s3.upload_file(local_path, bucket, key) reads that local file
            return self.tainted_expr(args[0])
        if (last in _WRITER_METHODS and isinstance(node.func, ast.Attribute)) or (last == "connect" and mod == "sqlite3"):
            dest = args[0] if args else next((k.value for k in node.keywords if k.arg in ("path", "path_or_buf",
                                                                                          "fname", "database")), None)
            return dest is not None and self.tainted_expr(dest)
        if (last in _OS_PATH_CALLS and mod == "os") or (last in _SHUTIL_PATH_CALLS and mod == "shutil"):
            return any(self.tainted_expr(a) for a in args[:2])
        if last == "write" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.value.id in self.archives and args:  # ZipFile.write(path) reads that file into the archive
            return self.tainted_expr(args[0])
        if last == "save" and isinstance(node.func, ast.Attribute) and args:  # an upload saved under its own name
            return self.tainted_expr(node.func.value) and self.tainted_expr(args[0])
        if last in _PATH_METHODS and isinstance(node.func, ast.Attribute) and mod not in ("os", "shutil", "io"):
            recv = node.func.value
            pathish = isinstance(recv, ast.BinOp) and isinstance(recv.op, ast.Div) or (
                isinstance(recv, ast.Call) and _name(recv.func).split(".")[-1] in ("Path", "PurePath"))
            return (pathish or isinstance(recv, ast.Name)) and self.tainted_expr(recv) and \
                not (isinstance(recv, ast.Name) and recv.id in {"self", "cls"} | self.archives)
        return False

    def visit_Call(self, node: ast.Call) -> None:
        self._note_dynamic(node)
        self.generic_visit(node)
        fn = node.func
        full = _name(fn)
        args = list(node.args)
        kw = call_keywords(node, self.consts)
        rfull = self.resolved(full)
        c = _CallSite(node, fn, full, rfull, rfull.split(".")[0] if "." in rfull else "",
                      last_name(fn),
                      args, args[0] if args else None, kw,
                      any(self.tainted_expr(a, True) for a in args) or any(self.tainted_expr(v, True) for v in kw.values()))
        # one method per CWE family; within a family the order of checks decides which rule names a
        # (line, cwe) finding first
        for sinks in (self._command_sinks, self._sql_sinks, self._code_sinks, self._html_sinks, self._ssrf_sinks,
                      self._path_sinks, self._deserialise_sinks, self._xml_sinks):
            sinks(c)

    def _command_sinks(self, c: _CallSite) -> None:
        """CWE-78: shells, subprocess with shell=True, remote shells (fabric/invoke, paramiko)."""
        node, last, mod, first, kw = c.node, c.last, c.mod, c.first, c.kw
        shell = isinstance(kw.get("shell"), ast.Constant) and kw["shell"].value is True
        if last in ("system", "popen") and mod in ("os", "") and c.any_weak:
            self._hit(node, 78, "taint:os-command", "user input reaches a shell command")
        elif mod == "subprocess" or last in ("Popen", "call", "check_call", "check_output", "run", "getoutput",
                                             "getstatusoutput"):
            if last in ("getoutput", "getstatusoutput") and c.any_weak:
                self._hit(node, 78, "taint:os-command", "user input reaches a shell command")
            elif shell and self.tainted_expr(first if first is not None else kw.get("args"), True):
                self._hit(node, 78, "taint:os-command", "user input reaches subprocess with shell=True")
            elif shell and first is not None and _string_built(first) and _names(first) & self.path_checked:
                self._hit(node, 78, "taint:os-command", "a request path (checked to stay in its folder, not quoted) is pasted into a shell command")
            elif shell and first is not None and self._built_from_fields(first):
                self._hit(node, 78, "taint:os-command", "a shell command is formatted from an object's fields (shell=True)")
        elif shell and any(self.tainted_expr(a, True) for a in c.args):  # e.g. asyncio.to_thread(subprocess.run, cmd, shell=True)
            self._hit(node, 78, "taint:os-command", "user input reaches a call with shell=True")
        recv = c.fn.value if isinstance(c.fn, ast.Attribute) else None
        if last in ("run", "sudo", "local") and first is not None and (
                (isinstance(recv, ast.Name) and recv.id in _REMOTE_SHELLS) or c.rfull.startswith(("fabric", "invoke"))) \
                and self._built_taint(first, weak=True):
            self._hit(node, 78, "taint:remote-command", "a shell (fabric/invoke) runs a command built from input")
        argv = first if isinstance(first, (ast.List, ast.Tuple)) else None
        if argv is not None and argv.elts and (_const_str(argv.elts[0]) or "").rsplit("/", 1)[-1] == "ssh" and \
                any(self._built_taint(e, weak=True) for e in argv.elts[1:]):
            self._hit(node, 78, "taint:remote-command", "ssh runs a command string built from input on the remote shell")
        if self._built_taint(kw.get("bash_command"), weak=True):
            self._hit(node, 78, "taint:os-command", "a bash_command built from input runs in a shell")
        if last == "new" and self._built_taint(kw.get("command"), weak=True):  # python-crontab: cron runs it with sh
            self._hit(node, 78, "taint:os-command", "a cron job's shell command is built from input")
        if last == "exec_command" and first is not None and self._built_taint(first, weak=True):
            self._hit(node, 78, "taint:remote-command", "a remote shell runs a command built from input")
        # sarge parses its command strings with shell syntax (pipes, &&, redirections)
        if "sarge" in c.rfull and last in ("run", "capture_stdout", "capture_stderr", "capture_both", "get_stdout",
                                            "get_stderr", "get_both", "Command", "Pipeline") and first is not None \
                and not isinstance(first, ast.Constant) and self.tainted_expr(first, True):
            self._hit(node, 78, "taint:os-command", "sarge runs a command line built from input (shell syntax)")
        # at / sh / crontab read a shell script on stdin: subprocess.run(["at", when], input=script)
        argv0 = first.elts[0] if isinstance(first, (ast.List, ast.Tuple)) and first.elts else None
        if (_const_str(argv0) or "").rsplit("/", 1)[-1] in ("at", "batch", "sh", "bash", "zsh", "dash", "ksh", "crontab") \
                and self._built_taint(kw.get("input"), weak=True):
            self._hit(node, 78, "taint:os-command", "the shell script given on stdin is built from input")
        # salt's cmd.run / cmd.shell and winrm's run_ps / run_cmd run their command line in a remote shell
        if last == "cmd" and len(c.args) > 2 and (_const_str(c.args[1]) or "") in ("cmd.run", "cmd.shell", "cmd.script",
                                                                                       "cmd.run_all") and \
                any(self._built_taint(e, weak=True) for e in ast.walk(c.args[2]) if isinstance(e, ast.expr)):
            self._hit(node, 78, "taint:remote-command", "salt runs a command line built from input on the minion")
        if last in ("run_ps", "run_cmd") and first is not None and self._built_taint(first, weak=True):
            self._hit(node, 78, "taint:remote-command", "a remote shell (WinRM) runs a command built from input")
        # ansible_runner.run(module="shell", module_args=...): the arguments are a shell command line
        module = (_const_str(kw.get("module")) or "").rsplit(".", 1)[-1]
        if last in ("run", "run_async") and "ansible_runner" in c.rfull and module in ("shell", "raw") and \
                self._built_taint(kw.get("module_args"), weak=True):
            self._hit(node, 78, "taint:remote-command", f"ansible's {module} module runs a command line built from input")

    def _sql_sinks(self, c: _CallSite) -> None:
        """CWE-89: raw SQL through text() and SQL strings built by formatting."""
        node, last, first = c.node, c.last, c.first
        if last == "text" and ("sqlalchemy" in c.rfull or c.mod in ("sa", "")) and first is not None and \
                not isinstance(first, ast.Constant) and self.tainted_expr(first, True):
            self._hit(node, 89, "taint:sql", "user input becomes raw SQL through text()")
        if (last == "literal_column" and first is not None and not isinstance(first, ast.Constant) and
                self.tainted_expr(first)) or (last == "SQL" and "peewee" in c.rfull and self._built_taint(first, weak=True)):
            self._hit(node, 89, "taint:sql", f"{last}() puts user input into the SQL text")
        if last == "SQL" and ("psycopg" in c.rfull or c.mod == "sql") and first is not None and \
                not isinstance(first, ast.Constant) and self.tainted_expr(first, True):
            self._hit(node, 89, "taint:sql", "sql.SQL() marks user input as trusted SQL text (use sql.Identifier / placeholders)")
        if last in ("execute", "executemany", "executescript", "raw", "text", "read_sql", "read_sql_query",
                    "RawSQL", "extra", "rows_where", "count_where", "delete_where") and first is not None:
            built = _string_built(first) or (isinstance(first, ast.Name) and first.id in self.built)
            if built and self.tainted_expr(first, True):
                self._hit(node, 89, "taint:sql", "SQL built from user input by string formatting")

    def _code_sinks(self, c: _CallSite) -> None:
        """CWE-94: templates compiled from input, eval/exec, imports, files run as code, interpreters;
        also marks exec/eval lines and mako templates whose bandit warning is vetted."""
        node, fn, full, last, mod, first, kw = c.node, c.fn, c.full, c.last, c.mod, c.first, c.kw
        if last in ("Template", "PageTemplate", "PageTextTemplate", "MarkupTemplate", "NewTextTemplate") and any(
                m in c.rfull for m in ("tornado", "mako", "django", "chameleon", "genshi")) and \
                first is not None and self.tainted_expr(first):
            self._hit(node, 94, "taint:template-injection", "user input is compiled as a template (SSTI)")
        if last == "SimpleTemplate" and "bottle" in c.rfull and first is not None and self.tainted_expr(first):
            self._hit(node, 94, "taint:template-injection", "user input is compiled as a bottle template (SSTI)")
        if last == "load" and "hub" in c.rfull.split(".") and "torch" in c.rfull and first is not None and \
                not isinstance(first, ast.Constant) and self.tainted_expr(first):
            self._hit(node, 94, "taint:remote-code", "torch.hub.load runs the hubconf.py of a repository the caller names")
        # transformers' trust_remote_code=True runs the Python files of whatever repository it is given
        trc = kw.get("trust_remote_code")
        repo = first if first is not None else kw.get("pretrained_model_name_or_path", kw.get("model", kw.get("path")))
        if isinstance(trc, ast.Constant) and trc.value is True and repo is not None and \
                not isinstance(repo, ast.Constant) and self.tainted_expr(repo, weak=True):
            self._hit(node, 94, "taint:remote-code", "trust_remote_code=True runs the code of a repository the caller names")
        # a Cheetah template is compiled to Python: any source that is not the code's own literal runs as code
        if c.rfull.split(".")[-1] == "Template" and "Cheetah" in c.rfull and first is not None and self.tainted_expr(first, weak=True):
            self._hit(node, 94, "taint:template-injection", "a Cheetah template (compiled to Python) comes from outside the code")
        if last in ("eval", "exec") and mod in ("", "builtins") and first is not None and (
                not _raw_value(first) or (isinstance(first, ast.Name) and first.id in self.restricted)):
            self.vetted_lines.add(node.lineno)
        # DataFrame.query / DataFrame.eval / pd.eval run their string as an expression
        if last in ("query", "eval") and isinstance(fn, ast.Attribute) and first is not None and (
                (isinstance(fn.value, ast.Name) and fn.value.id in self.frames) or c.rfull.startswith("pandas.")
                or "engine" in kw) and self.tainted_expr(first):
            self._hit(node, 94, "taint:eval", f"pandas {last}() evaluates an expression from user input")
        filters = kw.get("default_filters")
        if last == "Template" and isinstance(filters, (ast.List, ast.Tuple)) and any(
                (_const_str(e) or "") in ("h", "x") for e in filters.elts):  # mako escaping every ${}
            self.vetted_lines.add(node.lineno)
        if last in ("eval", "exec") and mod in ("", "builtins") and self.tainted_expr(first, True):  # the code, not its globals
            self._hit(node, 94, "taint:eval", "user input is evaluated as code")
        if last in ("import_module", "__import__") and first is not None and self.tainted_expr(first):
            self._hit(node, 94, "taint:import", "a module named by user input is imported")
        sandboxed = "Sandboxed" in full or any("Sandboxed" in _name(x.func) for x in ast.walk(fn) if isinstance(x, ast.Call)) \
            or (isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id in self.sandboxes)
        if (last == "from_string" or c.rfull == "jinja2.Template") and first is not None and \
                self.tainted_expr(first) and not sandboxed:
            self._hit(node, 94, "taint:template-injection", "user input is compiled as a template (SSTI)")
        if last in ("run_path", "run_module", "load_source", "spec_from_file_location") and \
                any(self._from_web(a) for a in c.args[:2]):
            self._hit(node, 94, "taint:run-file", "a Python file that a client sent or chose is executed")
        if last in ("sympify", "parse_expr") and first is not None and self.tainted_expr(first, True):
            self._hit(node, 94, "taint:eval", f"{last} evaluates its string argument as Python")
        if last in ("runsource", "runcode") and c.any_weak:
            self._hit(node, 94, "taint:eval", "user input is run by an interactive interpreter")

    def _html_sinks(self, c: _CallSite) -> None:
        """CWE-79: unescaped input in HTML bodies, values marked safe, raw-HTML switches."""
        node, full, last, first, kw = c.node, c.full, c.last, c.first, c.kw
        tpl = bound_constant(c.fn.value, self.consts) if isinstance(c.fn, ast.Attribute) else None
        if last in ("substitute", "safe_substitute") and isinstance(tpl, ast.Call) and last_name(tpl.func) == "Template" \
                and _html_consts(tpl) and any(self.tainted_expr(v) for v in list(kw.values()) + c.args):
            self._hit(node, 79, "taint:template", "user input is substituted into an HTML string.Template without escaping")
        if last == "format_html" and first is not None and self._built_taint(first, weak=True):
            self._hit(node, 79, "taint:template", "format_html is given a pre-built string: its input is not escaped")
        if last in _HTML_SINKS or (last == "html" and "response" in c.rfull):  # sanic.response.html
            cands = c.args[:1] + [kw[k] for k in ("text", "body", "content", "html") if k in kw]
            # page.encode() / f"...".encode("utf-8") is the same HTML as bytes
            cands = [x.func.value if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and
                     x.func.attr == "encode" else x for x in cands]
            ctype = next((_const_str_of(kw[k]) for k in ("content_type", "mimetype", "media_type") if k in kw), None)
            html_default = last in ("HttpResponse", "HTMLResponse", "make_response", "write", "finish", "html")
            on_self = full.startswith("self.") or last not in ("write", "finish")
            # these send text/html unless told otherwise: any unescaped input built into the body is XSS
            loose = (html_default and ctype is None) or "html" in (ctype or "")
            into_body = on_self and (ctype is None or "html" in ctype) and any(
                self._html_arg(x) or (loose and self._built_taint(x)) for x in cands)
            marked_safe = last in _MARKED_SAFE and first is not None and (last != "raw" or "dominate" in c.rfull) and (
                self.tainted_expr(first) or (last in ("NotStr", "raw") and self._built_taint(first, weak=True)) or
                (last == "raw" and not isinstance(first, ast.Constant) and self.tainted_expr(first, weak=True)))
            if last in ("Markup", "mark_safe", "SafeString") and first is not None and (not _raw_value(first) or (
                    isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id in self.escapers)):
                self.vetted_lines.add(node.lineno)
            if into_body or marked_safe:
                self._hit(node, 79, "taint:template", "user input reaches HTML without escaping")
        # DataFrame.to_html(escape=False) writes the cells' text as markup
        esc = kw.get("escape")
        if last == "to_html" and isinstance(esc, ast.Constant) and esc.value is False and isinstance(c.fn, ast.Attribute) \
                and self.tainted_expr(c.fn.value, weak=True):
            self._hit(node, 79, "taint:template", "a table of outside data is rendered with escape=False")
        # bokeh Div / panel and ipywidgets HTML panes render their text as HTML
        if (last == "Div" and "bokeh" in c.rfull) or (last == "HTML" and any(m in c.rfull for m in ("panel", "ipywidgets"))):
            cands = c.args[:1] + [kw[k] for k in ("text", "value", "object") if k in kw]
            if any(self._html_arg(x) or self._built_taint(x) for x in cands):
                self._hit(node, 79, "taint:template", "input is built into an HTML widget's markup without escaping")
        # docutils writes raw HTML from the `raw` directive unless raw_enabled is off
        if last in ("publish_parts", "publish_string", "publish_file", "publish_doctree") and "docutils" in c.rfull:
            src = kw.get("source", first)
            writer = (_const_str(kw.get("writer_name")) or "").lower()
            ov = kw.get("settings_overrides")
            raw_off = isinstance(ov, ast.Dict) and any(_const_str(k) == "raw_enabled" and isinstance(v, ast.Constant)
                                                       and not v.value for k, v in zip(ov.keys, ov.values))
            if "html" in writer and not raw_off and src is not None and self.tainted_expr(src, weak=True):
                self._hit(node, 79, "taint:template", "reStructuredText from outside is published as HTML with raw HTML on")
        # yattag's doc.asis(s) inserts s verbatim; markdown-it with html on passes raw HTML through
        if last == "asis" and isinstance(c.fn, ast.Attribute) and first is not None and self._built_taint(first, weak=True):
            self._hit(node, 79, "taint:template", "a string built from input is inserted as raw HTML (asis)")
        if last == "render" and isinstance(c.fn, ast.Attribute) and isinstance(c.fn.value, ast.Name) and \
                c.fn.value.id in self.raw_markdown and first is not None and self.tainted_expr(first, weak=True):
            self._hit(node, 79, "taint:template", "markdown-it renders input with raw HTML enabled (html is not False)")
        raw_html = next((k for k in ("unsafe_allow_html", "dangerously_allow_html", "allow_unsafe_html")
                         if isinstance(kw.get(k), ast.Constant) and kw[k].value is True), None) or (
            "sanitize" if isinstance(kw.get("sanitize"), ast.Constant) and kw["sanitize"].value is False else None)
        if raw_html and first is not None and _raw_value(first) and not (
                isinstance(first, ast.Name) and first.id not in self.weak | self.tainted and first.id.isupper()):
            self._hit(node, 79, "taint:template", f"a non-literal, unescaped value is rendered as raw HTML ({raw_html}=True)")

    def _ssrf_sinks(self, c: _CallSite) -> None:
        """CWE-918: HTTP clients, connections, loaders and headless browsers given a caller's URL or host."""
        node, fn, full, last, mod, args, first, kw = c.node, c.fn, c.full, c.last, c.mod, c.args, c.first, c.kw
        url_kw = kw.get("url")
        endpoint = next((v for k, v in kw.items() if k in ("endpoint_url", "endpoint", "base_url", "host_url", "api_url")), None)
        if endpoint is not None and self._from_web(endpoint) and self.host_dynamic(endpoint, weak=False):
            self._hit(node, 918, "taint:ssrf", "a client is pointed at an endpoint taken from the request")
        if last == "open" and isinstance(fn, ast.Attribute) and "opener" in _name(fn.value).lower() and first is not None \
                and self.host_dynamic(first, weak=True):
            self._hit(node, 918, "taint:ssrf", "a urllib opener fetches a URL from the caller")
        if (url_kw is not None and self.host_dynamic(url_kw, weak=True) and last not in _REQ_FUNCS
                and not _OUTPUT_BUILDER.match(last)) or (
                last == "parse" and "feedparser" in c.rfull and first is not None and self.host_dynamic(first, weak=True)):
            self._hit(node, 918, "taint:ssrf", "a URL from the caller is fetched")
        if ((last == "connect" and c.rfull.startswith("websockets")) or last == "ws_connect") and first is not None \
                and self.host_dynamic(first, weak=True):
            self._hit(node, 918, "taint:ssrf", "a websocket is opened to a URL from the caller")
        if last in ("PyJWKClient", "JWKClient") and first is not None and self.host_dynamic(first, weak=True):
            self._hit(node, 918, "taint:ssrf", "the key set is fetched from a URL the caller (or the token's jku) chose")
        if last in ("HTTPConnection", "HTTPSConnection", "create_connection", "SMTP", "SMTP_SSL", "FTP", "FTP_TLS",
                    "Telnet") and first is not None and self.tainted_expr(first):
            self._hit(node, 918, "taint:ssrf", "a connection is opened to a user-supplied host")
        # document loaders, crawlers and headless browsers handed a URL from a request or a job
        if _FETCHER.search(last) and first is not None and (_url_named(first) or "url" in last.lower() or (
                isinstance(first, ast.Name) and first.id in self.url_names)) and self.host_dynamic(first, weak=False) and \
                last not in _REQ_FUNCS and not _name(fn).startswith(("self.", "os.", "json.", "yaml.", "pickle.")) and \
                not any(m in c.rfull for m in ("redis", "valkey", "kombu")):  # a DSN to a server, not a fetch
            self._hit(node, 918, "taint:ssrf", "a URL from the request is fetched")
        # URL openers that fetch any scheme (fsspec, smart_open: on request data only, libraries pass
        # their callers' paths through them) and libcurl's URL option
        if (last in ("open", "open_files", "cat") and mod in ("fsspec", "smart_open") and first is not None
                and self.host_dynamic(first, weak=False)) or (
                last == "setopt" and len(args) > 1 and _name(args[0]).split(".")[-1] == "URL" and
                self.host_dynamic(args[1], weak=True)):
            self._hit(node, 918, "taint:ssrf", "a URL from the caller is fetched")
        if ((last == "VideoCapture" and "cv2" in c.rfull) or (last in ("ServerProxy", "Server") and "xmlrpc" in c.rfull)) \
                and first is not None and self.host_dynamic(first, weak=False):
            self._hit(node, 918, "taint:ssrf", f"{last} connects to a URL from the caller")
        if last in ("extract_info", "download") and isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and \
                fn.value.id in self.downloaders and c.args and self.host_dynamic(c.args[0], weak=False):
            self._hit(node, 918, "taint:ssrf", "yt-dlp fetches a URL from the caller (any host, any scheme it supports)")
        # imageio opens http(s) URLs as readily as files
        body = isinstance(first, ast.Attribute) and first.attr in ("content", "raw", "body", "data") or (
            isinstance(first, ast.Call) and last_name(first.func) in ("read", "getvalue", "BytesIO"))
        if last in ("imread", "imopen", "imiter", "improps") and "imageio" in c.rfull and first is not None and \
                not body and self.host_dynamic(first, weak=False):
            self._hit(node, 918, "taint:ssrf", "imageio fetches the URL it is given, here one from the caller")
        if last.startswith("read_") and mod in ("pd", "pandas") and first is not None and self.tainted_expr(first) and \
                (_url_named(first) or (isinstance(first, ast.Name) and first.id in self.url_names)):
            self._hit(node, 918, "taint:ssrf", "pandas fetches a user-supplied URL")
        if last in _REQ_FUNCS and (mod in _REQ_MODS or "request" in full or "session" in full.lower()
                                   or "client" in full.lower() or "http" in full.lower()) and "args" not in full:
            url = first
            if isinstance(first, ast.Constant) and str(first.value).upper() in _HTTP_METHODS:
                url = args[1] if len(args) > 1 else kw.get("url")
            url = url if url is not None else kw.get("url")
            strong_only = full.startswith("self.") or last == "Request" or mod not in _REQ_MODS | {"aiohttp"} and \
                not any(k in full.lower() for k in ("session", "client", "http"))
            if url is not None and self.host_dynamic(url, weak=not strong_only):
                self._hit(node, 918, "taint:ssrf", "a request is sent to a user-controlled URL")

    def _path_sinks(self, c: _CallSite) -> None:
        """CWE-22: a file-system call on a path that came from outside."""
        if self._path_sink(c):
            self._hit(c.node, 22, "taint:path", "a user-controlled path reaches the file system")

    def _deserialise_sinks(self, c: _CallSite) -> None:
        """CWE-502: pickle-family loads and yaml.load without a safe loader on a caller's data."""
        node, last, mod, args, kw = c.node, c.last, c.mod, c.args, c.kw
        if last in ("loads", "load", "Unpickler") and mod in ("pickle", "marshal", "dill", "cPickle", "shelve") and c.any_weak:
            self._hit(node, 502, "taint:deserialize", "untrusted data is unpickled")
        if last in ("load", "load_all") and mod == "yaml":
            loader = kw.get("Loader") or (args[1] if len(args) > 1 else None)
            safe = loader is not None and "Safe" in _name(loader)
            if not safe and (c.any_weak or loader is not None):
                self._hit(node, 502, "taint:yaml", "yaml.load without SafeLoader on untrusted data")
        # hydra's instantiate builds any class a config's _target_ names; mlflow models are pickles
        if last in ("instantiate", "call") and "hydra" in c.rfull and c.args and self.tainted_expr(c.args[0], weak=True):
            self._hit(node, 502, "taint:deserialize", "hydra instantiates whatever classes an outside config names (_target_)")
        if last == "load_model" and "mlflow" in c.rfull and c.first is not None and self.tainted_expr(c.first):
            self._hit(node, 502, "taint:deserialize", "an mlflow model (a pickle) is loaded from a URI the caller chose")

    def _xml_sinks(self, c: _CallSite) -> None:
        """CWE-611: XML parsed with entity expansion on (stdlib / lxml), unless a hardened parser is used."""
        node, fn, last, args, first, kw = c.node, c.fn, c.last, c.args, c.first, c.kw
        xfull = c.rfull
        if isinstance(kw.get("process_xinclude"), ast.Constant) and kw["process_xinclude"].value is True:
            self._hit(node, 611, "taint:xxe", "XInclude processing is on: the document can pull in local files and URLs")
        # xmlschema's defuse="never" turns its XXE defence off (the default defuses remote sources)
        if "xmlschema" in xfull and (_const_str(kw.get("defuse")) or "") == "never" and c.any_weak:
            self._hit(node, 611, "taint:xxe", "xmlschema is told never to defuse the XML it loads (defuse='never')")
        # parser.setFeature(feature_external_ges, False): the sax parser bandit warns about is hardened
        if last == "setFeature" and isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and \
                fn.value.id in self.sax_parsers and len(args) == 2 and "external" in (_name(args[0]) + (
                    _const_str(args[0]) or "")) and isinstance(args[1], ast.Constant) and not args[1].value:
            self.vetted_lines.add(self.sax_parsers[fn.value.id])
        if xfull.startswith("defusedxml.xmlrpc") and last == "monkey_patch":
            self.defused_xmlrpc = True
        if last == "loads" and xfull.startswith(("xmlrpc", "xmlrpclib")) and c.any_weak and not self.defused_xmlrpc:
            self._hit(node, 611, "taint:xxe", "xmlrpc parses untrusted XML with the standard library (entity expansion)")
        if last == "feed" and isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and \
                fn.value.id in self.xml_feeds and first is not None and self.tainted_expr(first):
            self._hit(node, 611, "taint:xxe", "request data is fed to an XML parser that expands entities")
        if last == "set_default_parser" and first is not None and isinstance(first, ast.Call):
            r = {k.arg: k.value for k in first.keywords}.get("resolve_entities")
            self.safe_default_parser = isinstance(r, ast.Constant) and r.value is False
        parser = args[1] if len(args) > 1 else kw.get("parser")
        own_opts = isinstance(kw.get("resolve_entities"), ast.Constant) and kw["resolve_entities"].value is False
        safe_parser = (isinstance(parser, (ast.Name, ast.Attribute)) and _name(parser) in self.safe_parsers) or (
            parser is None and self.safe_default_parser and "lxml" in xfull) or (own_opts and last != "XMLParser")
        if last in ("fromstring", "parseString", "XML", "parse", "XMLParser", "iterparse", "XMLID") and \
                any(m in xfull for m in ("etree", "minidom", "xml", "ET", "sax", "pulldom", "lxml", "ElementTree")) and \
                not any(m in xfull.lower() for m in ("defused", "safe", "xmltodict")) and not safe_parser:
            if last == "XMLParser":
                r = kw.get("resolve_entities")
                if r is None or (isinstance(r, ast.Constant) and r.value is True):
                    self._hit(node, 611, "taint:xxe", "XML parser resolves external entities")
            elif c.any_weak:
                self._hit(node, 611, "taint:xxe", "untrusted XML parsed with the standard library parser")


MARK_DYNAMIC = "taint:dynamic-string"
MARK_VETTED = "taint:vetted"


def taint_hits(tree: ast.AST) -> list[tuple[int, int, str, str, str]]:
    """(line, cwe, rule, message, "taint") for a parsed module, plus marker rows (cwe 0) that confirm
    or vet bandit's on-sight rules: ``MARK_DYNAMIC`` = a line that builds a string from a caller's
    value, ``MARK_VETTED`` = an exec/eval/mark_safe/mako line whose argument is literal or sanitised.

    >>> [h[1:3] for h in taint_hits(ast.parse("import os\\ndef f(p):\\n    os.system('ls ' + p)"))]
    [(78, 'taint:os-command'), (0, 'taint:dynamic-string')]
    """
    t = _Taint()
    t.consts = module_constants(tree)
    t.validators = checking_wrappers(tree)
    t.visit(tree)
    # lines that build a string from a caller's value: confirms bandit's SQL-building rule
    dyn = [(ln, 0, MARK_DYNAMIC, "", "taint") for ln in sorted(t.dynamic_lines)]
    dyn += [(ln, 0, MARK_VETTED, "", "taint") for ln in sorted(t.vetted_lines)]
    return [h + ("taint",) for h in t.findings] + dyn
