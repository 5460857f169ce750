"""bandit (PyCQA, Apache-2.0) as a second opinion, run in-process on (repaired) code.

Every result whose test maps to a CWE family of the tab (``BANDIT_CWE``) is a finding. It is
*confident* (it flags its step on its own) when bandit rates its severity medium or high and its
confidence medium or high; bandit's SQL-building test (B608) counts at any confidence. The rest
(hard-coded-password guesses, ``random`` calls, shell=True in an unknown call) is shown and left
to the model and the aggregate. bandit's tests outside these families (assert, try/except/pass,
bare imports) are dropped as noise.
"""
from __future__ import annotations

import io
import logging

from engines.codeprm.findings import Finding
from engines.codeprm.repair import pieces as repaired_pieces

# bandit test id -> CWE family the tab reports
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
_LEVEL = {"LOW": 0, "MEDIUM": 1, "HIGH": 2}


def confident(test_id: str, severity: str, confidence: str) -> bool:
    """Whether a bandit result flags its step on its own (see the module docstring).

    >>> confident("B602", "HIGH", "HIGH"), confident("B105", "LOW", "MEDIUM")
    (True, False)
    """
    sev, conf = _LEVEL.get(severity.upper(), 0), _LEVEL.get(confidence.upper(), 0)
    return test_id in BANDIT_CWE and sev >= 1 and (conf >= 1 or test_id == "B608")


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
    ``pieces`` are ``repair.pieces(code)`` when the caller has them already (one repair per scan).

    >>> [r[1] for r in bandit_raw("import os\\nos.system('ls ' + x)")]
    ['B605']
    """
    global _BANDIT
    if _BANDIT is None:
        _BANDIT = _Bandit()
    out = []
    for off, text, _tree in repaired_pieces(code) if pieces is None else pieces:
        for r in _BANDIT.run(text):
            cwe = getattr(getattr(r, "cwe", None), "id", 0) or 0
            out.append((r.lineno + off, r.test_id, int(cwe), str(r.severity), str(r.confidence), r.text))
    return out


def bandit_findings(code: str, pieces: list | None = None) -> list[Finding]:
    """bandit's results in the tab's CWE families, on lines of ``code``, each marked confident or not.

    >>> [(f.cwe, f.confident) for f in bandit_findings("import os\\nos.system('ls ' + x)\\n")]
    [(78, True)]
    """
    n = len(code.splitlines())
    out = []
    for line, tid, _cwe, sev, conf, text in bandit_raw(code, pieces):
        fam = BANDIT_CWE.get(tid)
        if fam is not None and 1 <= line <= n:
            out.append(Finding(line, fam, f"bandit:{tid}", text, "bandit", confident(tid, sev, conf)))
    return out


def bandit_findings_batch(codes: list[str]) -> list[list[Finding]]:
    """bandit findings for each piece of code (code that does not parse is repaired or split
    into steps first, so prefixes get findings too).

    >>> [f.cwe for f in bandit_findings_batch(["import os\\nos.system('ls ' + x)\\n"])[0]]
    [78]
    """
    return [bandit_findings(c) for c in codes]
