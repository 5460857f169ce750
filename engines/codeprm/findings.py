"""Security findings, how a taint finding's input reached its sink, what an analyser could not
read, and the CWE families the tab reports (from the one table of names in ``cwe.py``; each
analyser maps its own rules to them in its module)."""
from __future__ import annotations

from dataclasses import dataclass

from engines.codeprm.cwe import FAMILIES, title

# CWE families this tab reports, with a short explanation for the UI and SARIF.
CWE_INFO: dict[int, str] = {k: title(k) for k in FAMILIES}
LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class Trace:
    """How user input reaches a sink in a taint finding (semgrep's dataflow trace): the source
    expression and its line, the variable that carries it to the sink (empty when the input
    goes straight in), and the sink call and its line."""

    source: str
    source_line: int
    sink: str
    sink_line: int
    variable: str = ""

    def explain(self) -> str:
        """The flow in plain words.

        >>> Trace("request.form", 8, "requests.get", 12, "url").explain()
        '`url` comes from `request.form` (line 8) and reaches `requests.get` (line 12)'
        """
        src = self.source if " " in self.source else f"`{self.source}`"  # words, or an expression
        head = f"`{self.variable}` comes from {src}" if self.variable else src
        verb = " and reaches" if self.variable else " reaches"
        sink = self.sink if " " in self.sink else f"`{self.sink}`"
        return f"{head} (line {self.source_line}){verb} {sink} (line {self.sink_line})"

    def to_dict(self) -> dict:
        return {"source": self.source, "source_line": self.source_line, "sink": self.sink,
                "sink_line": self.sink_line, "variable": self.variable, "explanation": self.explain()}


@dataclass(frozen=True)
class Failure:
    """An analyser that could not read (all of) a file, and why, in words: its findings there
    may be missing, so the file is never called safe on its word."""

    analyser: str
    reason: str

    def __str__(self) -> str:
        return f"{self.analyser}: {self.reason}"

    def to_dict(self) -> dict:
        return {"analyser": self.analyser, "reason": self.reason}


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
    source: str  # the analyser's name ("bandit", "codeshield", "taint", "settings") or "model"
    severity: str = ""
    confidence: str = ""
    trace: Trace | None = None

    @property
    def family(self) -> int:
        """The tab's CWE family of this finding (0 when outside them), as its analyser maps it."""
        from engines.codeprm.analysers import family_of_finding

        return family_of_finding(self)

    @property
    def confident(self) -> bool:
        """bandit's rating is medium or high on both scales (SQL building at any confidence);
        what "bandit, confident results" counts in the benchmark. Flags do not depend on it."""
        sev, conf = _rank(self.severity), _rank(self.confidence)
        return sev >= 1 and (conf >= 1 or self.rule == "bandit:B608") if self.source == "bandit" else True

    @property
    def explanation(self) -> str:
        """The message, led by the flow in plain words for a taint finding."""
        return f"{self.trace.explain()}: {self.message}" if self.trace else self.message

    def to_dict(self) -> dict:
        return {"line": self.line, "cwe": f"CWE-{self.cwe}" if self.cwe else "", "family": self.family,
                "rule": self.rule, "message": self.message, "source": self.source, "severity": self.severity,
                "confidence": self.confidence, "trace": self.trace.to_dict() if self.trace else None,
                "explanation": self.explanation}


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else -1
