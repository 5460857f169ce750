"""The taint rule pack (written here, MIT like the project): user input that reaches a dangerous
call, followed by semgrep's own taint mode (``mode: taint``) through assignments, f-strings,
``%``/``.format``/concatenation and calls of functions in the same file.

The rules are data: ``assets/codeprm/rules/taint/<sink family>.yaml``, one file per sink family,
each rule with its CWE (metadata ``cwe_id``), a plain message and its sinks; ``sources.yaml``
holds what every rule shares (sources: Flask, Django, FastAPI/Starlette and aiohttp request data,
route parameters, ``input()``, ``sys.argv``; sanitizers: ``int()``, ``secure_filename``,
``shlex.quote``, escaping, allow-list checks, ...), added to each rule by :func:`rules`. OSS
semgrep follows taint within one function (and into the result of any call), not into the body
of a function the input is passed to; a rule whose metadata names ``helper-calls`` (its sink
calls) also gets, per scan, a ``-helper`` twin whose sink is an argument of a call of a function
of the same file that hands the parameter in that position to such a call
(``taint_helpers.py``, read from the scan's own parse). They run in
the scan's one semgrep process beside CodeShield's rules.
Each finding carries semgrep's dataflow trace as a :class:`~engines.codeprm.findings.Trace`:
"`url` comes from `request.form` (line 8) and reaches `requests.get` (line 12)".
"""
from __future__ import annotations

import functools
import re

from engines.codeprm.analysers.base import Analyser, hit_finding
from engines.codeprm.analysers.semgrep import AnalyserUnavailable, yaml_rules
from engines.codeprm.findings import Finding, Trace
from engines.common.paths import ASSETS_DIR

RULES_DIR = ASSETS_DIR / "codeprm" / "rules" / "taint"
PREFIX = "codeprm-taint-"
_NAME = re.compile(r"[A-Za-z_][\w.]*$")


OPTIONS = {"taint_assume_safe_functions": False, "taint_assume_safe_indexes": False,
           "taint_assume_safe_booleans": True, "taint_assume_safe_numbers": True}


#: a file where user input can enter at all names one of these (request data, route handlers of
#: Flask, FastAPI/Starlette, aiohttp and Django, input(), sys.argv)
SOURCE_WORDS = ("request", "input", "raw_input", "argv", "route", "api_route", "fastapi", "FastAPI",
                "APIRouter", "starlette", "flask", "Flask", "Blueprint", "aiohttp", "django")


def _patterns(node) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k in ("pattern", "pattern-inside") and isinstance(v, str)] + \
            [p for k, v in node.items() if k not in ("pattern", "pattern-inside") for p in _patterns(v)]
    return [p for v in node for p in _patterns(v)] if isinstance(node, list) else []


def sink_words(sinks: list) -> list[str]:
    """The names a rule's sinks call or index (``execute``, ``headers``): semgrep runs the rule
    only on files that name one of them and a source word."""
    return sorted({m.group(1) for p in _patterns(sinks)
                   for m in re.finditer(r"(?<![$\w])([A-Za-z_]\w*)(?:\s*[(\[]|\.\$)", p)})


@functools.lru_cache(maxsize=1)
def rules() -> list[dict]:
    """Every taint rule, completed with the shared sources and sanitizers (and its helper twin)."""
    import yaml

    try:
        common = yaml.load((RULES_DIR / "sources.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as exc:
        raise AnalyserUnavailable(f"taint sources missing in {RULES_DIR}: {exc}") from exc
    out = []
    for r in yaml_rules(tuple(f for f in sorted(RULES_DIR.glob("*.yaml")) if f.name != "sources.yaml")):
        rule = {"mode": "taint", "languages": ["python"], "options": OPTIONS, **r,
                "pattern-sources": common["sources"] + r.get("pattern-sources", [])
                + (common["local-sources"] if r.get("metadata", {}).get("local-input", True) else []),
                "pattern-sanitizers": common["sanitizers"] + r.get("pattern-sanitizers", []),
                "codeprm-select": [SOURCE_WORDS, sink_words(r["pattern-sinks"])]
                + ([r["metadata"]["requires"]] if r.get("metadata", {}).get("requires") else [])}
        out.append(rule)
    return out


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
    if re.fullmatch(r"[A-Za-z_]\w*", s_text.strip()):  # a route handler's parameter
        names, s_text = [s_text.strip()], "a route parameter"
    line = src.lines[k_line - 1] if 0 < k_line <= len(src.lines) else ""
    sink = callee(line, k_col) or ("a response header" if "header" in f.rule else " ".join(k_text.split())[:60])
    trace = Trace(s_text if " " in s_text else source_name(s_text), s_line, sink, k_line, names[0] if names else "")
    return Finding(f.line, f.cwe, f.rule, f.message, f.source, f.severity, f.confidence, trace)


def rules_for(sources: list) -> list[dict]:
    """The rules for one scan of ``sources``: the pack, and the helper twins their files need."""
    from engines.codeprm.analysers.taint_helpers import functions, helper_rule

    rx = re.compile(r"\b(?:" + "|".join(SOURCE_WORDS) + r")\b")
    summaries = [functions(s.pieces[0][2]) if s.pieces and s.pieces[0][0] == 0 and rx.search(s.text) else None
                 for s in sources]
    base = rules()
    twins = [helper_rule(r, summaries) for r in base]
    return base + [t for t in twins if t is not None]


ANALYSER = Analyser("taint", rules=rules, owns=lambda rid: PREFIX in rid, read=read, rules_for=rules_for,
                    label="taint rules (semgrep taint mode)")
