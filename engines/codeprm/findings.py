"""Security findings, and the CWE families the tab reports (from the one table in ``cwe.py``)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.codeprm.cwe import FAMILIES, family_of, title

# CWE families this tab reports, with a short explanation for the UI and SARIF.
CWE_INFO: dict[int, str] = {k: title(k) for k in FAMILIES}
LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class Finding:
    """One security finding on one line.

    ``cwe`` is the analyser's own CWE (bandit's ``cwe`` where it gives one); ``severity`` and
    ``confidence`` are the analyser's ratings (``"low"``, ``"medium"``, ``"high"``, or ``""``
    where it gives none: CodeShield rates no confidence, the model neither).
    """

    line: int
    cwe: int
    rule: str
    message: str
    source: str  # "bandit", "codeshield" or "model"
    severity: str = ""
    confidence: str = ""

    @property
    def family(self) -> int:
        """The tab's CWE family of this finding (0 when outside them)."""
        return _bandit_family(self.rule) if self.source == "bandit" else family_of(self.cwe)

    @property
    def confident(self) -> bool:
        """bandit's rating is medium or high on both scales (SQL building at any confidence);
        what "bandit, confident results" counts in the benchmark. Flags do not depend on it."""
        sev, conf = _rank(self.severity), _rank(self.confidence)
        return sev >= 1 and (conf >= 1 or self.rule == "bandit:B608") if self.source == "bandit" else True

    def to_dict(self) -> dict:
        return {"line": self.line, "cwe": f"CWE-{self.cwe}" if self.cwe else "", "family": self.family,
                "rule": self.rule, "message": self.message, "source": self.source, "severity": self.severity,
                "confidence": self.confidence}


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else -1


def _bandit_family(rule: str) -> int:
    from engines.codeprm.cwe import BANDIT_FAMILY

    return BANDIT_FAMILY.get(rule.split(":", 1)[-1], 0)
