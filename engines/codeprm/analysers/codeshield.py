"""Meta's CodeShield / Insecure Code Detector rules for Python, run offline.

The rules (MIT, Meta Platforms; copied unchanged from the ``inspect-evals`` 0.28.0 wheel,
``cyberseceval_4/insecure_code_detector/rules/``) live in ``assets/codeprm/codeshield``:
semgrep rules in ``semgrep/`` (run in the scan's one semgrep process, ``analysers/semgrep.py``)
and the detector's Python regex rules in ``regex/python.yaml`` (run here, line by line). Each
rule carries its CWE; its family is that CWE's.
"""
from __future__ import annotations

import functools
import re

from engines.codeprm.analysers.base import Analyser, hit_finding
from engines.codeprm.analysers.semgrep import AnalyserUnavailable, SemgrepRun, yaml_rules
from engines.codeprm.findings import Failure, Finding
from engines.common.paths import ASSETS_DIR

RULES_DIR = ASSETS_DIR / "codeprm" / "codeshield"
_CWE_RE = re.compile(r"CWE-(\d+)")


def rules() -> list[dict]:
    """CodeShield's semgrep rules, as shipped."""
    files = tuple(sorted((RULES_DIR / "semgrep").glob("*.yaml")))
    if not files:
        raise AnalyserUnavailable(f"CodeShield semgrep rules missing in {RULES_DIR / 'semgrep'}")
    return yaml_rules(files)


@functools.lru_cache(maxsize=1)
def regex_rules() -> list[tuple[re.Pattern, int, str, str]]:
    """The detector's Python regex rules: (pattern, cwe, rule id, message)."""
    import yaml

    path = RULES_DIR / "regex" / "python.yaml"
    if not path.is_file():
        raise AnalyserUnavailable(f"CodeShield rule files missing in {RULES_DIR}")
    out = []
    for r in yaml.safe_load(path.read_text()):
        cwe = int(_CWE_RE.search(r["cwe_id"]).group(1))
        out.append((re.compile(r["rule"]), cwe, r["pattern_id"], " ".join(r["description"].split())))
    return out


def regex_findings(code: str, lines: list[str] | None = None) -> list[Finding]:
    """The detector's Python regex rules, line by line (Python's line numbering)."""
    from engines.codeprm.lines import split_lines

    out = []
    for ln, text in enumerate(split_lines(code) if lines is None else lines, 1):
        for rx, cwe, rule, msg in regex_rules():
            if rx.search(text):
                out.append(Finding(ln, cwe, f"codeshield:{rule}", msg, "codeshield", "medium"))
    return out


def local(src) -> tuple[list[Finding], list[Failure]]:
    return regex_findings(src.text, src.lines), []


def owns(rule_id: str) -> bool:
    return not rule_id.rsplit(".", 1)[-1].startswith("codeprm-")


def semgrep_raw(codes: list[str], timeout_s: float = 600.0) -> list[list[tuple[int, int, str, str, str]]]:
    """semgrep results of the CodeShield rules on each piece of code: (line, cwe, rule, message, severity)."""
    hits, _ = SemgrepRun(codes, rules(), timeout_s).result()
    out = []
    for hs in hits:
        fs = [hit_finding(h, "codeshield") for h in hs]
        out.append([(f.line, f.cwe, f.rule.split(":", 1)[1], f.message, f.severity) for f in fs])
    return out


def codeshield_findings(codes: list[str]) -> list[list[Finding]]:
    """CodeShield findings (semgrep rules + the detector's Python regex rules) for each piece of code.

    >>> [(f.line, f.cwe) for f in codeshield_findings(["import os\\n\\nos.system(cmd)\\n"])[0]]  # doctest: +SKIP
    [(3, 78)]
    """
    from engines.codeprm.analysers import run_analysers

    return run_analysers(codes, ("codeshield",))


ANALYSER = Analyser("codeshield", rules=rules, owns=owns, read=lambda hit, src: hit_finding(hit, "codeshield"),
                    local=local, label="CodeShield (semgrep + regex rules)")
