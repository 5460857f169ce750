"""Step labels from static analysis: bandit run in-process, a taint labeller of our own
(``taint.py``), and API-knowledge rules (``rules.py``), fused into one finding per line and CWE.

All read the code's AST only; nothing is imported or executed. bandit's on-sight rules for
shells, URL opening, SQL building and password literals are kept only where the taint
labeller confirms a dynamic, unsanitised value (or the literal can be a credential), so that a
fixed twin (``shlex.quote``, an allow-listed URL, placeholders) is not flagged for the API it
still calls. Prefixes and broken code are
*repaired* first (unclosed brackets closed, a dangling block header given a body, trailing
lines dropped), and when no repair parses, each step is parsed on its own (dedented), so a
live prefix still gets labels.
"""
from __future__ import annotations

import ast
import io
import logging
import re
import textwrap

from engines.codeprm.findings import CWE_INFO, Finding
from engines.codeprm.rules import looks_like_secret, rule_findings_tree
from engines.codeprm.steps import split_steps
from engines.codeprm.taint import MARK_DYNAMIC, MARK_VETTED, taint_hits

__all__ = ["CWE_INFO", "Finding", "bandit_findings", "label_findings", "repair", "taint_findings"]

# bandit test id -> CWE family kept as a label. Everything else (assert, try/except/pass,
# bare imports such as B408/B413, subprocess without shell, request timeouts, ...) is left out
# as noise.
BANDIT_CWE: dict[str, int] = {
    "B102": 94, "B307": 94, "B201": 94, "B302": 502, "B301": 502, "B506": 502, "B614": 502,
    "B303": 328, "B324": 328, "B304": 327, "B305": 327, "B505": 327,
    "B311": 338, "B105": 798, "B106": 798, "B107": 798,
    "B108": 377, "B306": 377,
    "B313": 611, "B314": 611, "B315": 611, "B316": 611, "B317": 611, "B318": 611, "B319": 611,
    "B320": 611,
    "B602": 78, "B605": 78, "B604": 78, "B609": 78, "B601": 78, "B606": 78,
    "B608": 89, "B610": 89, "B611": 89,
    "B701": 79, "B702": 79, "B703": 79, "B308": 79, "B704": 79,
    "B310": 918, "B501": 295, "B507": 295, "B323": 295, "B502": 295, "B503": 295, "B504": 295, "B202": 22,
}


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


def bandit_raw(code: str, pieces: list | None = None) -> list[tuple[int, str, int, str, str, str]]:
    """All bandit results on (repaired) code: (line, test id, cwe, severity, confidence, text).
    ``pieces`` are ``_pieces(code)`` when the caller has them already (one repair per scan).

    >>> [r[1] for r in bandit_raw("import os\\nos.system('ls ' + x)")]
    ['B605']
    """
    global _BANDIT
    if _BANDIT is None:
        _BANDIT = _Bandit()
    out = []
    for off, text, _tree in _pieces(code) if pieces is None else pieces:
        for r in _BANDIT.run(text):
            cwe = getattr(getattr(r, "cwe", None), "id", 0) or 0
            out.append((r.lineno + off, r.test_id, int(cwe), str(r.severity), str(r.confidence), r.text))
    return out


def bandit_findings(code: str, pieces: list | None = None) -> list[Finding]:
    """bandit results kept as labels (see ``BANDIT_CWE``), on lines of ``code``."""
    n = len(code.splitlines())
    out = []
    for line, tid, _cwe, sev, conf, text in bandit_raw(code, pieces):
        fam = BANDIT_CWE.get(tid)
        if fam is None or not 1 <= line <= n:
            continue
        if tid == "B608" and conf == "LOW" and sev == "MEDIUM":
            pass  # SQL string building: bandit's LOW confidence is still the pattern we want
        out.append(Finding(line, fam, f"bandit:{tid}", text, "bandit"))
    return out


def _run_visitors(code: str, visitor_of, pieces: list | None = None) -> list[Finding]:
    n = len(code.splitlines())
    out = []
    for off, _text, tree in _pieces(code) if pieces is None else pieces:
        try:
            hits = visitor_of(tree)
        except RecursionError:
            continue
        for line, cwe, rule, msg, source in hits:
            if 1 <= line + off <= n:
                out.append(Finding(line + off, cwe, rule, msg, source))
    return out


def _taint_and_dynamic(code: str, pieces: list | None = None) -> tuple[list[Finding], set[int], set[int]]:
    """Taint findings, lines that build a string from a caller's value (they confirm bandit's
    SQL-building rule) and exec/eval/mark_safe lines whose argument is literal or sanitised."""
    out = _run_visitors(code, taint_hits, pieces)
    return ([f for f in out if f.cwe], {f.line for f in out if f.rule == MARK_DYNAMIC},
            {f.line for f in out if f.rule == MARK_VETTED})


def taint_findings(code: str) -> list[Finding]:
    """Findings of the taint labeller: untrusted sources flowing into dangerous sinks.

    >>> [f.cwe for f in taint_findings("import os\\ncmd = input()\\nos.system('ls ' + cmd)")]
    [78]
    """
    return _taint_and_dynamic(code)[0]


def rule_findings(code: str, pieces: list | None = None) -> list[Finding]:
    """Findings of the API-knowledge rules (engines/codeprm/rules.py) on (repaired) code.

    >>> [(f.cwe, f.rule) for f in rule_findings("import hmac, hashlib\\nm = hmac.new(k, msg, hashlib.md5)")]
    [(328, 'rule:weak-hmac')]
    """
    return _run_visitors(code, lambda tree: [h + ("rule",) for h in rule_findings_tree(tree)], pieces)


# bandit rules that fire on any call of an API, whether or not its input is dynamic; kept only
# where the taint labeller confirms a dynamic, unsanitised argument on the same line. bandit's
# SQL-building rule (B608) is kept where the string is built from a caller's value, and its
# hard-coded-password rules where the literal can be a credential (not "<pad>", "", a path, ...)
_CONFIRM = {"B602": 78, "B605": 78, "B604": 78, "B601": 78, "B310": 918}
# bandit rules that fire on any exec/eval/mark_safe/Markup: dropped where that call's argument is a literal
# or passes through a sanitiser (compile_restricted, escape, bleach/nh3 clean, ...), and its
# xml.sax warning where that parser's external-entity features are switched off
_VETTABLE = {"bandit:B102", "bandit:B307", "bandit:B703", "bandit:B308", "bandit:B702", "bandit:B704", "bandit:B317"}


def _secret_literal_in(message: str) -> bool:
    m = re.search(r"'(.*)'", message)
    return m is None or looks_like_secret(m.group(1))


def label_findings(code: str) -> list[Finding]:
    """bandit (filtered) + taint + API-rule findings, one per (line, cwe), sorted by line.

    >>> [(f.line, f.cwe) for f in label_findings("import pickle\\nobj = pickle.loads(data)")]
    [(2, 502)]
    """
    seen = {}
    pieces = _pieces(code)  # repair once, for all three analysers
    taint, dynamic, vetted = _taint_and_dynamic(code, pieces)
    confirmed = {(f.line, f.cwe) for f in taint}
    bandit = [f for f in bandit_findings(code, pieces)
              if (f.rule[7:] not in _CONFIRM or (f.line, _CONFIRM[f.rule[7:]]) in confirmed)
              and (f.rule != "bandit:B608" or f.line in dynamic)
              and (f.rule not in _VETTABLE or f.line not in vetted)
              and (f.rule not in ("bandit:B105", "bandit:B106", "bandit:B107") or _secret_literal_in(f.message))]
    for f in taint + rule_findings(code, pieces) + bandit:
        seen.setdefault((f.line, f.cwe), f)
    return sorted(seen.values(), key=lambda f: (f.line, f.cwe))
