"""Which names hold user input: a tolerant pass over the step model's own tokens, with no parse,
so that it reads half-written code (an unfinished call, an open string, a missing body) as well as
whole files. Its marks are an extra input channel of the step model (``model.StepScorer``): the
context SecCodePRM's step scorer is meant to see (where input came from), which a token window
alone does not show.

Per token, one mark:

* ``SOURCE`` (1): part of an expression that reads user input: request data of Flask, Django,
  FastAPI/Starlette, aiohttp, Bottle, Pyramid (``request.form``, ``request.GET``, ``await
  request.json()``...), Tornado's ``self.get_argument(...)``, ``input()``, ``sys.argv``, and the
  parameters of a route handler (a function under a decorator that names ``route``, ``get``,
  ``post``...);
* ``TAINTED`` (2): a name that holds user input where it is read: assigned (directly or through
  f-strings, ``%``, ``.format``, concatenation, other tainted names, ``for``/``with`` targets, a
  container it was appended to) from a source, and not re-assigned since from something else; an
  f-string that formats one; a parameter of a function of the same text that is called with one
  (a helper); a name cut short at the very end of the text that can only be completed to a
  tainted one;
* ``LIVE`` (3): the indentation token that starts a line in a function where some name holds user
  input (so the local context of a line being written knows input is at hand);
* 0 otherwise.

Assignments from a sanitizer (``int(...)``, ``secure_filename(...)``, ``escape(...)``...) do not
carry input. The pass is statement by statement in text order, with one scope per function (the
enclosing functions' names stay visible), plus one extra pass to find helpers.
"""
from __future__ import annotations

import re

import numpy as np

NONE, SOURCE, TAINTED, LIVE = 0, 1, 2, 3
N_MARKS = 4

#: attributes of a request object that hold what the client sent
REQUEST_ATTRS = frozenset((
    "args", "form", "values", "json", "get_json", "get_data", "data", "cookies", "headers", "files", "view_args",
    "GET", "POST", "body", "META", "COOKIES", "FILES", "query_params", "path_params", "match_info", "query", "post",
    "text", "read", "stream", "forms", "params", "matchdict", "json_body", "query_string", "content", "path",
    "full_path", "url", "host", "remote_addr", "environ", "referrer", "user_agent", "multipart", "form_data",
    "query_arguments", "body_arguments", "arguments", "uri"))
REQUEST_NAMES = frozenset(("request", "req", "flask_request"))
#: Tornado request-handler methods that return what the client sent
HANDLER_READS = frozenset(("get_argument", "get_arguments", "get_query_argument", "get_query_arguments",
                           "get_body_argument", "get_body_arguments", "get_cookie", "get_secure_cookie",
                           "get_signed_cookie"))
INPUT_CALLS = frozenset(("input", "raw_input"))
ROUTE_WORDS = frozenset(("route", "get", "post", "put", "delete", "patch", "api_route", "websocket", "view_config",
                         "expose"))
NOT_INPUT_PARAMS = frozenset(("self", "cls", "request", "req", "db", "session", "response", "background_tasks",
                              "current_user", "user", "app"))
SANITIZERS = frozenset(("int", "float", "bool", "len", "UUID", "secure_filename", "quote", "escape", "basename",
                        "clean", "url_for", "reverse", "get_object_or_404", "abs", "round", "hash", "isdigit",
                        "isalnum", "isnumeric", "quote_plus", "escape_filter_chars", "bleach"))
CONTAINER_ADDS = frozenset(("append", "extend", "update", "add", "insert", "setdefault"))
_ASSIGN_OPS = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "//=", "**=", "<<=", ">>=", "@="))
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][\w.]*)")


#: the lexer's texts of its structural tokens (``tokens.Lexer.lex_marks``)
IND, NL = "\x01", "\n"
_FSTR = re.compile(r"([rRbBuUfF]{0,2})['\"]")


def _is_name(t: str) -> bool:
    return _NAME.match(t) is not None


def _is_fstring(t: str) -> bool:
    m = _FSTR.match(t)
    return m is not None and "f" in m.group(1).lower()


class _Stmt:
    """One logical statement: token indices (indentation and line ends left out) and its indent."""

    __slots__ = ("idx", "indent", "inds")

    def __init__(self) -> None:
        self.idx: list[int] = []
        self.inds: list[int] = []
        self.indent = -1


def _statements(texts: list[str]) -> list[_Stmt]:
    out, cur, depth = [], _Stmt(), 0
    for i, t in enumerate(texts):
        if t.startswith(IND):
            cur.inds.append(i)
            if cur.indent < 0:
                cur.indent = int(t[1:] or 0)
            continue
        if t == NL:
            if depth <= 0:
                if cur.idx or cur.inds:
                    out.append(cur)
                cur, depth = _Stmt(), 0
            continue
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth = max(0, depth - 1)
        cur.idx.append(i)
    if cur.idx or cur.inds:
        out.append(cur)
    return out


def _fstring_names(lit: str) -> list[str]:
    """The names an f-string formats (``f"a {b.c} {d!r}"`` -> ``b.c``, ``d``).

    >>> _fstring_names('f"a {b.c} {d!r} {{e}}"')
    ['b.c', 'd']
    """
    return _FIELD.findall(lit) if _is_fstring(lit) else []


class _Pass:
    """One pass over the statements (see the module docstring)."""

    def __init__(self, texts: list[str], partial: bool, defs: set[str], helpers: dict[str, set[int]]) -> None:
        self.t = texts
        self.defs = defs                # names of the functions this text defines
        self.partial = partial
        self.helpers = helpers          # function name -> parameter positions called with input
        self.found: dict[str, set[int]] = {}
        self.marks = np.zeros(len(texts), dtype=np.int64)
        self.scopes: list[tuple[int, set[str]]] = [(-1, set())]
        self.route_pending = False

    # ---------------------------------------------------------------- names
    def tainted(self, name: str) -> bool:
        parts = name.split(".")
        for scope in self.scopes:
            held = scope[1]
            for k in range(1, len(parts) + 1):
                if ".".join(parts[:k]) in held:
                    return True
        return False

    def live(self) -> bool:
        return any(s[1] for s in self.scopes)

    def chain(self, idx: list[int], p: int) -> tuple[str, int]:
        """The dotted name starting at position ``p`` of ``idx`` and the position after it."""
        t = self.t
        names = [t[idx[p]]]
        q = p + 1
        while q + 1 < len(idx) and t[idx[q]] == "." and _is_name(t[idx[q + 1]]):
            names.append(t[idx[q + 1]])
            q += 2
        return ".".join(names), q

    # ---------------------------------------------------------------- expressions
    def expr(self, idx: list[int], a: int, b: int) -> bool:
        """Mark sources and tainted names in positions ``a..b-1``; True when the value carries
        input (some source or tainted name outside every sanitizer call)."""
        t, m = self.t, self.marks
        carries = False
        calls: list[bool] = []   # per open bracket: whether it is a sanitizer's call
        p = a
        while p < b:
            i = idx[p]
            s = t[i]
            if s in _OPEN:
                prev = t[idx[p - 1]] if p > a else ""
                calls.append(s == "(" and prev in SANITIZERS)
                p += 1
                continue
            if s in _CLOSE:
                if calls:
                    calls.pop()
                p += 1
                continue
            safe = any(calls)
            if _is_fstring(s):
                if any(self.tainted(n) or n.split(".")[0] in REQUEST_NAMES for n in _fstring_names(s)):
                    m[i] = TAINTED
                    carries = carries or not safe
                p += 1
                continue
            if not _is_name(s) or (p > a and t[idx[p - 1]] == "."):
                p += 1
                continue
            name, q = self.chain(idx, p)
            parts = name.split(".")
            nxt = t[idx[q]] if q < b else ""
            src_end = self.source_at(parts, nxt)
            if src_end:
                for r in range(p, min(q, p + 2 * src_end - 1)):
                    m[idx[r]] = SOURCE
                carries = carries or not safe
            elif self.tainted(name):
                for r in range(p, q):
                    m[idx[r]] = TAINTED
                carries = carries or not safe
            elif self.partial and q >= len(idx) and idx[q - 1] == self.last_name and len(parts[-1]) >= 1:
                whole = ".".join(parts)
                if any(n.startswith(whole) and n != whole for sc in self.scopes for n in sc[1]):
                    for r in range(p, q):
                        m[idx[r]] = TAINTED
            callee = parts[-1] if (len(parts) == 1 or parts[0] in ("self", "cls")) else ""
            if nxt == "(" and callee in self.defs:
                self.note_call(idx, q, b, callee)
            if nxt == "(" and parts[-1] in CONTAINER_ADDS and len(parts) > 1:
                end = self.close(idx, q, b)
                if self.expr(idx, q + 1, end):
                    self.scopes[-1][1].add(".".join(parts[:-1]))
                    for r in range(p, p + 2 * (len(parts) - 1) - 1):
                        m[idx[r]] = TAINTED
                p = end
                continue
            p = q
        return carries

    def source_at(self, parts: list[str], nxt: str) -> int:
        """How many parts of a dotted name read user input (0: none)."""
        if len(parts) >= 2 and parts[0] in REQUEST_NAMES and parts[1] in REQUEST_ATTRS:
            return 2
        if len(parts) >= 3 and parts[0] == "self" and parts[1] == "request" and parts[2] in REQUEST_ATTRS:
            return 3
        if len(parts) >= 3 and parts[0] == "flask" and parts[1] == "request" and parts[2] in REQUEST_ATTRS:
            return 3
        if len(parts) == 2 and parts[0] == "self" and parts[1] in HANDLER_READS and nxt == "(":
            return 2
        if len(parts) == 1 and parts[0] in INPUT_CALLS and nxt == "(":
            return 1
        if len(parts) >= 2 and parts[0] == "sys" and parts[1] == "argv":
            return 2
        return 0

    def close(self, idx: list[int], p: int, b: int) -> int:
        """Position after the bracket opened at ``p`` (or ``b``)."""
        depth = 0
        for q in range(p, b):
            s = self.t[idx[q]]
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                depth -= 1
                if depth == 0:
                    return q + 1
        return b

    def note_call(self, idx: list[int], p: int, b: int, name: str) -> None:
        """A call of a function of this text: the positions of its arguments that carry input."""
        end = self.close(idx, p, b)
        k, depth, start = 0, 0, p + 1
        for q in range(p + 1, end):
            s = self.t[idx[q]]
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                depth -= 1
            if (s == "," and depth == 0) or (depth < 0 or q == end - 1):
                stop = q
                if start < stop and "=" not in [self.t[idx[r]] for r in range(start, stop)]:
                    saved = self.marks.copy()
                    if self.expr(idx, start, stop):
                        self.found.setdefault(name, set()).add(k)
                    self.marks = saved
                k += 1
                start = q + 1
            if depth < 0:
                break

    # ---------------------------------------------------------------- statements
    def targets(self, idx: list[int], a: int, b: int) -> list[tuple[str, list[int]]]:
        """The names an assignment target list writes (a subscript writes its container)."""
        out, p, depth = [], a, 0
        t = self.t
        while p < b:
            s = t[idx[p]]
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                depth -= 1
            elif s == ":" and depth == 0:
                break  # an annotation follows
            elif _is_name(s) and (p == a or t[idx[p - 1]] != ".") and s not in ("for", "in", "async"):
                name, q = self.chain(idx, p)
                out.append((name, [idx[r] for r in range(p, q)]))
                p = q
                continue
            p += 1
        return out

    def params(self, idx: list[int]) -> list[tuple[str, int, bool]]:
        """(name, token index, counts as raw input) of each parameter of a ``def``."""
        t = self.t
        try:
            p = next(k for k, i in enumerate(idx) if t[i] == "(")
        except StopIteration:
            return []
        out, depth, want = [], 0, True
        for k in range(p + 1, len(idx)):
            s = t[idx[k]]
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and s == ",":
                want = True
            elif depth == 0 and want and _is_name(s):
                want = False
                ann = t[idx[k + 1]] if k + 1 < len(idx) else ""
                typ = t[idx[k + 2]] if ann == ":" and k + 2 < len(idx) else ""
                raw = s not in NOT_INPUT_PARAMS and (ann != ":" or typ in ("str", "Optional", "Any"))
                out.append((s, idx[k], raw))
        return out

    def run(self, stmts: list[_Stmt]) -> np.ndarray:
        t, m = self.t, self.marks
        self.last_name = next((i for i in range(len(t) - 1, -1, -1) if _is_name(t[i])), -1)
        for st in stmts:
            idx = st.idx
            if not idx:
                continue
            indent = st.indent if st.indent >= 0 else 0
            head = t[idx[0]]
            if head == "@":
                self.route_pending = self.route_pending or any(t[i] in ROUTE_WORDS for i in idx[1:])
                continue
            is_def = head == "def" or (head == "async" and len(idx) > 1 and t[idx[1]] == "def")
            while len(self.scopes) > 1 and self.scopes[-1][0] >= indent:
                self.scopes.pop()
            if is_def:
                name = t[idx[2 if head == "async" else 1]] if len(idx) > (2 if head == "async" else 1) else ""
                held: set[str] = set()
                wanted = self.helpers.get(name, set())
                params = self.params(idx)
                shift = 1 if params and params[0][0] in ("self", "cls") else 0
                for k, (pname, i, raw) in enumerate(params):
                    if (self.route_pending and raw) or (k - shift) in wanted:
                        held.add(pname)
                        m[i] = SOURCE if self.route_pending else TAINTED
                self.scopes.append((indent, held))
                self.route_pending = False
                continue
            if head == "class":
                self.route_pending = False
                self.scopes.append((indent, set()))
                continue
            if self.live():
                for i in st.inds:
                    m[i] = LIVE
            self.statement(idx)
        return m

    def statement(self, idx: list[int]) -> None:
        t = self.t
        n = len(idx)
        head = t[idx[0]]
        if head == "async" and n > 1:
            idx, n = idx[1:], n - 1
            head = t[idx[0]]
        if head == "for":
            k = 1
            try:
                j = next(p for p in range(k, n) if t[idx[p]] == "in")
            except StopIteration:
                self.expr(idx, 0, n)
                return
            end = next((p for p in range(n - 1, j, -1) if t[idx[p]] == ":"), n)
            if self.expr(idx, j + 1, end):
                self.write(self.targets(idx, k, j), True)
            return
        if head == "with":
            carries = self.expr(idx, 1, n)
            for p in range(1, n - 1):
                if t[idx[p]] == "as" and _is_name(t[idx[p + 1]]):
                    self.write([(t[idx[p + 1]], [idx[p + 1]])], carries)
            return
        depth, eq = 0, -1
        for p in range(n):
            s = t[idx[p]]
            if s in _OPEN:
                depth += 1
            elif s in _CLOSE:
                depth -= 1
            elif depth == 0 and s in _ASSIGN_OPS:
                eq = p  # the last top-level one: `a = b = value`
        if eq < 0:
            self.expr(idx, 0, n)
            return
        carries = self.expr(idx, eq + 1, n)
        segs, a = [], 0
        for p in range(eq + 1):
            if p == eq or (t[idx[p]] == "=" and p < eq):
                segs.append((a, p))
                a = p + 1
        for a, b in segs:
            names = self.targets(idx, a, b)
            if any(t[idx[r]] in ("[", "(") for r in range(a, b)):
                self.expr(idx, a, b)  # a subscript or call in a target reads its names
            self.write(names, carries, augmented=t[idx[eq]] != "=")

    def write(self, names: list[tuple[str, list[int]]], carries: bool, augmented: bool = False) -> None:
        held = self.scopes[-1][1]
        for name, toks in names:
            if carries:
                held.add(name)
                for i in toks:
                    self.marks[i] = TAINTED
            elif not augmented:
                held.discard(name)


_MAY = re.compile(r"\b(?:" + "|".join(sorted(REQUEST_NAMES | HANDLER_READS | INPUT_CALLS | {"argv"})) + r")\b"
                  r"|^[ \t]*@.*\b(?:" + "|".join(sorted(ROUTE_WORDS)) + r")\b", re.MULTILINE)


def may_hold_input(code: str) -> bool:
    """Whether user input can enter ``code`` at all (it names a request, a handler read, input(),
    argv, or has a route decorator); without one every mark is 0.

    >>> may_hold_input("def f(x):\\n    return x + 1\\n"), may_hold_input("@app.get('/')\\ndef f(q): ...")
    (False, True)
    """
    return _MAY.search(code) is not None


def user_input_marks(texts: list[str], partial: bool = False) -> np.ndarray:
    """The mark of every token (see the module docstring) from the tokens' texts as the lexer
    gives them (``tokens.Lexer.lex_marks``); ``partial``: the text ends inside its last line, so a
    name cut short at its very end may be completed.

    >>> from engines.codeprm.tokens import Lexer
    >>> code = "def view():\\n    url = request.form['u']\\n    requests.get(url"
    >>> _, _, _, marks, texts = Lexer().lex_marks(code, partial=True)
    >>> [t for t, k in zip(texts, marks) if k == TAINTED]
    ['url', 'url']
    """
    stmts = _statements(texts)
    defs = set()
    for st in stmts:
        names = [texts[i] for i in st.idx[:3]]
        k = 1 if names[:1] == ["def"] else 2 if names[:2] == ["async", "def"] else 0
        if k and len(names) > k and _is_name(names[k]):
            defs.add(names[k])
    first = _Pass(texts, partial, defs, {})
    first.run(stmts)
    if not first.found:
        return first.marks
    return _Pass(texts, partial, defs, first.found).run(stmts)
