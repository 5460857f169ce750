"""The taint rule pack (written here, MIT like the project): user input that reaches a dangerous
call, followed by semgrep's own taint mode (``mode: taint``) through assignments, f-strings,
``%``/``.format``/concatenation and calls of functions in the same file.

The rules are data: ``assets/codeprm/rules/taint/<sink family>.yaml``, one file per sink family,
each rule with its CWE (metadata ``cwe_id``) and a plain message; sources (Flask, Django,
FastAPI/Starlette and aiohttp request data, ``input()``, ``sys.argv``) and sanitizers are
written into each rule. They run in the scan's one semgrep process beside CodeShield's rules.
Each finding carries semgrep's dataflow trace as a :class:`~engines.codeprm.findings.Trace`:
"`url` comes from `request.form` (line 8) and reaches `requests.get` (line 12)".
"""
from __future__ import annotations

import re

from engines.codeprm.analysers.base import Analyser, hit_finding
from engines.codeprm.findings import Finding, Trace
from engines.common.paths import ASSETS_DIR

RULES_DIR = ASSETS_DIR / "codeprm" / "rules" / "taint"
PREFIX = "codeprm-taint-"
_NAME = re.compile(r"[A-Za-z_][\w.]*$")


def _loc(cli_loc) -> tuple[int, int, str]:
    """(line, column, text) of semgrep's ``["CliLoc", [location, text]]``."""
    try:
        loc, text = cli_loc[1]
        return int(loc["start"]["line"]), int(loc["start"]["col"]), str(text)
    except (TypeError, KeyError, IndexError, ValueError):
        return 0, 0, ""


def source_name(text: str) -> str:
    """The input a source expression reads, without its key or call: ``request.form["url"]`` ->
    ``request.form``, ``request.args.get("q")`` -> ``request.args``, ``input("> ")`` -> ``input()``.

    >>> source_name('request.form["url"]'), source_name('request.args.get("q", "")'), source_name("input()")
    ('request.form', 'request.args', 'input()')
    """
    text = " ".join(text.split())
    m = re.match(r"(?:await\s+)?([A-Za-z_][\w.]*)", text)
    if not m:
        return text[:60]
    name = m.group(1)
    if name.endswith((".get", ".getlist")) and name.count(".") >= 2:
        return name.rsplit(".", 1)[0]
    return name + "()" if text[m.end():].lstrip().startswith("(") else name


def callee(line: str, col: int) -> str:
    """The call whose argument starts at column ``col`` (1-based) of ``line``.

    >>> callee("    resp = requests.get(url, timeout=5)", 25), callee("    x = f(g(a, b))", 13)
    ('requests.get', 'g')
    """
    depth = 0
    for i in range(min(col - 2, len(line) - 1), -1, -1):
        c = line[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    continue
                m = _NAME.search(line[:i].rstrip())
                return m.group(0) if m else ""
            depth -= 1
    return ""


def read(hit: dict, src) -> Finding:
    """A taint result as a finding with its trace (source, the variable carrying it, sink call)."""
    f = hit_finding(hit, "taint")
    tr = hit.get("extra", {}).get("dataflow_trace") or {}
    s_line, _, s_text = _loc(tr.get("taint_source"))
    k_line, k_col, k_text = _loc(tr.get("taint_sink"))
    if not s_line:
        return f
    k_line, k_col = k_line or f.line, k_col or int(hit["start"]["col"])
    names = [v.get("content", "") for v in tr.get("intermediate_vars") or [] if v.get("content")]
    line = src.lines[k_line - 1] if 0 < k_line <= len(src.lines) else ""
    sink = callee(line, k_col) or " ".join(k_text.split())[:60]
    trace = Trace(source_name(s_text), s_line, sink, k_line, names[0] if names else "")
    return Finding(f.line, f.cwe, f.rule, f.message, f.source, f.severity, f.confidence, trace)


ANALYSER = Analyser("taint", rules=tuple(sorted(RULES_DIR.glob("*.yaml"))), owns=lambda rid: PREFIX in rid,
                    read=read, label="taint rules (semgrep taint mode)")
