"""bandit (PyCQA, Apache-2.0) as a second opinion: run in-process on (repaired) code, every result
whose test maps to a CWE family of the tab kept as a finding, with no further filtering."""
from __future__ import annotations

from engines.codeprm.findings import Finding
from engines.codeprm.labels import bandit_findings


def bandit_findings_batch(codes: list[str]) -> list[list[Finding]]:
    """bandit findings for each piece of code (code that does not parse is repaired or split
    into steps first, so prefixes get findings too).

    >>> [f.cwe for f in bandit_findings_batch(["import os\\nos.system('ls ' + x)\\n"])[0]]
    [78]
    """
    return [bandit_findings(c) for c in codes]
