"""Second-opinion analysers from well-kept libraries, one small module each.

- ``bandit``: bandit 1.9.4 run in-process, results mapped to the CWE families the tab reports.
- ``codeshield``: Meta's CodeShield / Insecure Code Detector Python rules (MIT), semgrep rules
  run by the semgrep engine from PyPI (offline, local rule files) plus the detector's own
  Python regex rules.

``run_analysers(codes, names)`` scans several pieces of code in one go (semgrep costs a process
start, so it batches) and returns one list of :class:`Finding` per piece.
"""
from __future__ import annotations

from engines.codeprm.analysers.bandit import (
    BANDIT_CWE,
    bandit_findings,
    bandit_findings_batch,
    bandit_raw,
)
from engines.codeprm.analysers.codeshield import (
    AnalyserUnavailable,
    codeshield_findings,
)
from engines.codeprm.findings import Finding

ANALYSERS = ("bandit", "codeshield")


def run_analysers(codes: list[str], names: tuple[str, ...] = ANALYSERS) -> list[list[Finding]]:
    """Findings of the named analysers on each of ``codes`` (merged, sorted by line).

    >>> [f.source for f in run_analysers(["import pickle\\nx = pickle.loads(b)\\n"])[0]]  # doctest: +SKIP
    ['bandit', 'codeshield']
    """
    unknown = set(names) - set(ANALYSERS)
    if unknown:
        raise ValueError(f"unknown analysers {sorted(unknown)}; choose from {ANALYSERS}")
    out: list[list[Finding]] = [[] for _ in codes]
    if "bandit" in names:
        for acc, fs in zip(out, bandit_findings_batch(codes)):
            acc.extend(fs)
    if "codeshield" in names:
        for acc, fs in zip(out, codeshield_findings(codes)):
            acc.extend(fs)
    return [sorted(fs, key=lambda f: (f.line, f.source, f.rule)) for fs in out]


__all__ = ["ANALYSERS", "BANDIT_CWE", "AnalyserUnavailable", "Finding", "bandit_findings", "bandit_findings_batch",
           "bandit_raw", "codeshield_findings", "run_analysers"]
