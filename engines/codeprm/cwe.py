"""What the tab knows about weaknesses, in one table of names: the CWE families it reports, each
with its explanation and the sinks (calls and expressions) a model-only flag may name.

A finding keeps the CWE its analyser gives (bandit's own ``cwe`` where it has one: CWE-259 for a
hard-coded password, CWE-330 for ``random``); its *family* is the tab's row it belongs to. Each
analyser maps its own rules to families in its own module (``analysers/bandit.py`` holds bandit's
tests; the semgrep rule packs carry a CWE per rule). A step the model alone flags must hold one of
a family's sinks: the flag names that call or expression, and its CWE is that sink's family, never
a guess from words. Families with no sinks are the analysers' alone (the model never names them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Weakness:
    """One CWE: its explanation, the family it belongs to (itself for a family), and for a
    family the calls that are its sinks (dotted names; the last part alone matches too when it is
    given with a dot) and a regular expression of its other sinks (expressions: a string handed
    to a query, ``verify=False``)."""

    title: str
    family: int = 0
    calls: tuple[str, ...] = ()
    sinks: str = ""


TABLE: dict[int, Weakness] = {
    22: Weakness("Path traversal: a user-controlled path reaches the file system.", 22,
                 ("send_file", "send_from_directory", "FileResponse", ".extractall")),
    78: Weakness("OS command injection: a shell runs a string built from input.", 78,
                 ("os.system", "os.popen", "os.popen2", "os.popen3", "subprocess.run", "subprocess.call",
                  "subprocess.check_call", "subprocess.check_output", "subprocess.Popen", "subprocess.getoutput",
                  "subprocess.getstatusoutput", "commands.getoutput", "os.spawnl", "os.spawnlp", "os.spawnv",
                  "os.spawnvp", "os.execl", "os.execlp", "os.execv", "os.execvp", "os.execve")),
    79: Weakness("Cross-site scripting: input reaches HTML without escaping.", 79,
                 ("render_template_string", "Markup", "mark_safe", "SafeString", "SafeText", "format_html"),
                 r"autoescape\s*=\s*False|\|\s*safe\b"),
    89: Weakness("SQL injection: a query is built by string formatting instead of parameters.", 89, (),
                 r"\.(?:execute|executemany|executescript|raw|extra|read_sql(?:_query)?)\s*\(\s*(?:f['\"]|[A-Za-z_(])"
                 r"|(?i:['\"]\s*(?:select|insert|update|delete)\b[^'\"]*['\"]\s*(?:%|\+|\.format\b))"
                 r"|(?i:\bf['\"]\s*(?:select|insert|update|delete)\b[^'\"]*\{)"),
    94: Weakness("Code injection: eval/exec (or a debugger shell) runs dynamic code.", 94,
                 ("eval", "exec"), r"\bdebug\s*=\s*True"),
    295: Weakness("TLS certificate verification is disabled.", 295, ("ssl._create_unverified_context",),
                  r"\bverify\s*=\s*False|\bCERT_NONE\b|check_hostname\s*=\s*False"),
    327: Weakness("Broken or risky cryptography (weak cipher or hash).", 327,
                  ("DES.new", "DES3.new", "ARC2.new", "ARC4.new", "Blowfish.new", "IDEA.new"),
                  r"\bMODE_ECB\b|\bmodes\.ECB\b"),
    328: Weakness("Weak hash (MD5/SHA-1) used where a strong one is needed.", 328,
                  ("hashlib.md5", "hashlib.sha1"), r"\bhashlib\.new\(\s*['\"](?:md5|sha1)"),
    338: Weakness("Non-cryptographic random generator used for secrets.", 338,
                  ("random.random", "random.randint", "random.randrange", "random.choice", "random.choices",
                   "random.getrandbits", "random.sample", "random.uniform")),
    377: Weakness("Insecure temporary file (predictable name or mktemp).", 377,
                  ("tempfile.mktemp", ".mktemp"), r"['\"]/(?:var/)?tmp/"),
    502: Weakness("Deserialisation of untrusted data (pickle, marshal, unsafe yaml).", 502,
                  ("pickle.loads", "pickle.load", "pickle.Unpickler", "cPickle.loads", "cPickle.load", "dill.loads",
                   "dill.load", "marshal.loads", "marshal.load", "jsonpickle.decode", "shelve.open", "yaml.load",
                   "yaml.unsafe_load", "yaml.full_load", "yaml.load_all", "torch.load")),
    611: Weakness("XML parsed with external entities enabled (XXE).", 611,
                  tuple(f"{m}.{f}" for m in ("etree", "ElementTree", "ET", "minidom", "pulldom", "sax", "expatbuilder")
                        for f in ("parse", "fromstring", "XML", "parseString", "iterparse", "XMLParser"))),
    798: Weakness("Hard-coded credential or secret.", 798, (),
                  r"(?i:\b\w*(?:password|passwd|pwd|secret|token|api_?key|private_?key|credential)\w*['\"]?\s*[:=]"
                  r"\s*[rbu]?['\"][^'\"\s]{4,}['\"])"),
    918: Weakness("Server-side request forgery: a request goes to a user-supplied URL.", 918,
                  ("urlopen", "urllib.request.Request"),
                  r"\b(?:requests|httpx|session|client)\.(?:get|post|put|delete|head|patch|request)\s*\(\s*(?!['\"])"),
    # families only the analysers report (no sinks: the model never names them)
    90: Weakness("LDAP injection: input is built into an LDAP filter or name.", 90),
    113: Weakness("HTTP header injection: input is written into a response header.", 113),
    209: Weakness("Error details (a traceback) are sent to the client.", 209),
    347: Weakness("A token's signature is not verified (JWT decoded without verification).", 347),
    601: Weakness("Open redirect: a redirect goes to a user-supplied URL.", 601),
    614: Weakness("A session cookie is sent without its Secure or HttpOnly flag.", 614),
    643: Weakness("XPath injection: input is built into an XPath query.", 643),
    942: Weakness("A permissive origin or host policy: any origin with credentials, or any Host.", 942),
    # CWEs the analysers give that belong to a family above
    95: Weakness("Eval injection: input reaches eval, exec or compile.", 94),
    183: Weakness("A permissive allow-list of hosts (any Host header accepted).", 942),
    489: Weakness("Active debug code: the debugger or debug pages are on.", 94),
    1004: Weakness("A sensitive cookie without the HttpOnly flag.", 614),
    1336: Weakness("Server-side template injection: input becomes template source.", 94),
    20: Weakness("Improper input validation (an unsafe parser of untrusted input)."),
    80: Weakness("Basic cross-site scripting: a template or markup built without escaping.", 79),
    259: Weakness("Use of a hard-coded password.", 798),
    323: Weakness("A nonce or key pair reused in encryption.", 327),
    326: Weakness("Inadequate encryption strength.", 327),
    330: Weakness("Insufficiently random values.", 338),
    335: Weakness("A pseudo-random generator seeded with a fixed value.", 338),
}
FAMILIES: tuple[int, ...] = tuple(k for k, w in TABLE.items() if w.family == k)


def _call_pattern(name: str) -> str:
    """A call of ``name`` (``a.b`` also as ``x.a.b``; ``.b`` as any ``x.b``; a bare ``b`` not after a dot)."""
    lead = r"\." if name.startswith(".") else r"(?<![\w.])"
    return lead + re.escape(name.lstrip(".")) + r"\s*\("


_SINKS = [(k, re.compile("|".join([_call_pattern(c) for c in TABLE[k].calls] + ([TABLE[k].sinks] if TABLE[k].sinks
                                                                                  else []))))
          for k in FAMILIES if TABLE[k].calls or TABLE[k].sinks]
_CALLS = sorted((c.lstrip("."), k) for k in FAMILIES for c in TABLE[k].calls)
_TAIL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)$")


def title(cwe: int) -> str:
    """The explanation of a CWE id (its family's when the table has it only as a member).

    >>> title(259)
    'Use of a hard-coded password.'
    """
    w = TABLE.get(cwe)
    return w.title if w else f"CWE-{cwe}"


def family_of(cwe: int) -> int:
    """The tab family of a CWE id, or 0 when it belongs to none.

    >>> family_of(330), family_of(89), family_of(400)
    (338, 89, 0)
    """
    w = TABLE.get(cwe)
    return w.family if w else 0


def named(cwe: int, family: int) -> int:
    """The CWE that names a finding's weakness: its own when it belongs to its family (CWE-259
    in the hard-coded-credential family), else the family (bandit calls ``urlopen`` CWE-22, but
    its family is SSRF, CWE-918).

    >>> named(259, 798), named(22, 918), named(0, 94)
    (259, 918, 94)
    """
    return cwe if cwe and family_of(cwe) == family else family


@dataclass(frozen=True)
class Sink:
    """A sink found in code: its family, the 1-based line and the matched call or expression."""

    family: int
    line: int
    text: str


#: calls that the line being written can still become, per family, beyond each family's own
#: calls (a name cut short names them: ``cursor.exe``, ``pickle.l``, ``requests``); a leading dot
#: is any object's method. Only for the last line of a prefix: whole code names the families' own.
WRITING: dict[int, tuple[str, ...]] = {
    89: (".execute", ".executemany", ".executescript", ".raw", "read_sql", "read_sql_query"),
    918: ("requests.get", "requests.post", "requests.put", "requests.delete", "requests.head", "requests.patch",
          "requests.request", "httpx.get", "httpx.post", "httpx.request", "urllib.request.urlopen"),
    22: ("open", "send_file", "send_from_directory", "FileResponse", "os.remove", "os.unlink", "shutil.rmtree"),
    94: ("eval", "exec", "Template", ".from_string", "ImageMath.eval", "DEBUG"),
    79: ("render_template_string", "Markup", "mark_safe", "make_response", "HttpResponse"),
    601: ("redirect", "HttpResponseRedirect", "RedirectResponse"),
    643: (".xpath",),
}
_WRITING = sorted({(c, k) for k in FAMILIES for c in TABLE[k].calls} | {(c, k) for k, v in WRITING.items() for c in v})
_WRITING_RX = [(k, re.compile("|".join(_call_pattern(c) for c in v))) for k, v in sorted(WRITING.items())]
_DEF = re.compile(r"(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")


def helper_sinks(lines: list[str]) -> dict[str, int]:
    """Functions defined in ``lines`` whose body holds a sink: name -> the sink's family (the
    first one). A call of such a helper is a sink of that family too (a flow through a helper).

    >>> helper_sinks(["def run(cmd):", "    return os.system(cmd)", "", "def f():", "    return 1"])
    {'run': 78}
    """
    out: dict[str, int] = {}
    k, n = 0, len(lines)
    while k < n:
        m = _DEF.match(lines[k])
        if not m:
            k += 1
            continue
        ind, name, body = len(m.group(1)), m.group(2), []
        j = k + 1
        while j < n and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind):
            body.append(lines[j])
            j += 1
        fams = [s.family for s in sinks_in(body)]
        if fams and name not in out:
            out[name] = fams[0]
        k += 1
    return out


def _completions(cut: str, helpers: dict[str, int]) -> set[int]:
    """Families of the calls a name cut short at the end of a line being written can become."""
    if not cut:
        return set()
    last = cut.rsplit(".", 1)[-1]
    fams = set()
    for c, f in _WRITING:
        if c.startswith("."):
            if len(last) >= 2 and c[1:].startswith(last) and "." in cut:
                fams.add(f)
        elif "." in cut:
            tail = ".".join(cut.split(".")[-2:])
            if last and (c.startswith(cut) or c.startswith(tail)) and "." in c:
                fams.add(f)
        elif len(cut) >= 3 and c.startswith(cut):
            fams.add(f)
    for name, f in helpers.items():
        if len(last) >= 2 and name.startswith(last):
            fams.add(f)
    return fams


def sinks_in(lines: list[str], first_line: int = 1, writing: bool = False,
             helpers: dict[str, int] | None = None, wide: bool = True) -> list[Sink]:
    """Every sink of every family in ``lines`` (comments left out), numbered from ``first_line``.
    ``writing``: the last line is being written, so a call name cut short at its end (``pickle.l``,
    ``cursor.exe``, ``requests``) names the calls it can become (:data:`WRITING`). ``helpers``
    (:func:`helper_sinks`): calls of functions of the same code that hold a sink are sinks of
    its family. ``wide=False``: in the line being written only a dotted call name cut short with
    at least 3 letters after its last dot names the families' own calls (no :data:`WRITING`).

    >>> [(s.family, s.line, s.text) for s in sinks_in(["x = 1  # os.system(x)", "os.system('ls ' + d)"])]
    [(78, 2, 'os.system(')]
    >>> [(s.family, s.text) for s in sinks_in(["    data = pickle.loa"], writing=True)]
    [(502, 'pickle.loa')]
    >>> [(s.family, s.text) for s in sinks_in(["    out = run(name"], helpers={"run": 78})]
    [(78, 'run(')]
    """
    out = []
    helpers = helpers or {}
    hx = re.compile("|".join(r"(?<!def )" + _call_pattern(h) for h in helpers)) if helpers else None
    for k, line in enumerate(lines, first_line):
        code = _strip_comment(line)
        for fam, rx in _SINKS:
            m = rx.search(code)
            if m:
                out.append(Sink(fam, k, m.group(0).strip()))
        if hx is not None:
            for m in hx.finditer(code):
                fam = helpers[m.group(0).rstrip("( ").lstrip(".").strip()]
                if not any(s.family == fam and s.line == k for s in out):
                    out.append(Sink(fam, k, m.group(0).strip()))
        if writing and k == first_line + len(lines) - 1:
            m = _TAIL.search(code.rstrip("( "))
            cut = m.group(1) if m else ""
            if not wide:
                fams = set()
                if "." in cut and len(cut.rsplit(".", 1)[1]) >= 3:
                    tail2 = ".".join(cut.split(".")[-2:])
                    fams = {f for c, f in _CALLS if "." in c and (c.startswith(cut) or c.startswith(tail2))}
                out += [Sink(f, k, cut) for f in sorted(fams) if not any(s.family == f and s.line == k for s in out)]
                continue
            fams = _completions(cut, helpers)
            for fam, rx in _WRITING_RX:  # a call already opened on the line being written
                m = rx.search(code)
                if m and not any(s.family == fam and s.line == k for s in out):
                    out.append(Sink(fam, k, m.group(0).strip()))
            out += [Sink(f, k, cut) for f in sorted(fams) if not any(s.family == f and s.line == k for s in out)]
    return out


def _strip_comment(line: str) -> str:
    from engines.codeprm.lines import Scanner

    if "#" not in line:
        return line
    sc = Scanner()
    sc.feed(line)
    return line[: sc.code_end]
