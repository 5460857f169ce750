"""bandit (PyCQA, Apache-2.0) as an analyser, run in-process on (repaired) code.

Every result of a test in the tab's CWE families (``cwe.BANDIT_FAMILY``) is a finding, whatever
its severity and confidence (both are kept and shown); the finding's CWE is bandit's own where
it gives one. bandit's tests outside these families (assert, try/except/pass, bare imports,
requests without a timeout) are dropped as noise.
"""
from __future__ import annotations

import io
import logging

from engines.codeprm.cwe import BANDIT_FAMILY
from engines.codeprm.findings import Finding
from engines.codeprm.repair import pieces as repaired_pieces


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


def findings_of(raw: list, n_lines: int) -> list[Finding]:
    """Findings from bandit results (as :func:`bandit_raw` gives them, or stored in the corpus)
    on lines 1..``n_lines``: the tab's families only, bandit's own CWE where it gives one."""
    out = []
    for line, tid, cwe, sev, conf, *text in raw:
        fam = BANDIT_FAMILY.get(tid)
        if fam is not None and 1 <= line <= n_lines:
            out.append(Finding(line, int(cwe) or fam, f"bandit:{tid}", text[0] if text else f"bandit {tid}",
                               "bandit", str(sev).lower(), str(conf).lower()))
    return out


def bandit_findings(code: str, pieces: list | None = None) -> list[Finding]:
    """bandit's findings in the tab's CWE families on lines of ``code``, with bandit's ratings.

    >>> [(f.cwe, f.family, f.severity) for f in bandit_findings("import os\\nos.system('ls ' + x)\\n")]
    [(78, 78, 'high')]
    """
    from engines.codeprm.lines import count_lines

    return findings_of(bandit_raw(code, pieces), count_lines(code))
