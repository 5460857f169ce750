"""What an analyser is to the scan: a name, its own map of its findings to the tab's CWE families,
and either semgrep rule files (run in the scan's one semgrep process) or in-process work on one
:class:`~engines.codeprm.source.Source` at a time. A new analyser is one module that defines an
:class:`Analyser` and one entry in ``analysers.ANALYSERS``."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from engines.codeprm.cwe import family_of
from engines.codeprm.findings import Failure, Finding

_CWE_RE = re.compile(r"CWE-(\d+)")
SEVERITY = {"INFO": "low", "WARNING": "medium", "ERROR": "high"}


@dataclass(frozen=True)
class Analyser:
    """One analyser.

    ``family(finding)``: the tab's CWE family of one of its findings (by default its CWE's);
    ``rules()``: the semgrep rules it runs (read once; ``rules_for(sources)`` instead where a scan's
    files add rules of their own); ``owns(rule_id)``: whether a semgrep result is
    its own; ``read(hit, source)``: a semgrep result as a finding; ``local(source)``: in-process
    findings on one source and what it could not read there."""

    name: str
    family: Callable[[Finding], int] = lambda f: family_of(f.cwe)
    rules: Callable[[], list[dict]] | None = None
    owns: Callable[[str], bool] = lambda rule_id: False
    read: Callable[[dict, object], Finding | None] | None = None
    local: Callable[[object], tuple[list[Finding], list[Failure]]] | None = None
    rules_for: Callable[[list], list[dict]] | None = None  # the rules for one scan, when they depend on it
    label: str = field(default="")

    @property
    def title(self) -> str:
        return self.label or self.name


def cwe_of(meta: dict) -> int:
    """The CWE number in a rule's metadata (``cwe_id`` or ``cwe``: "CWE-89: ..."), 0 when none."""
    m = _CWE_RE.search(str(meta.get("cwe_id", "") or meta.get("cwe", "")))
    return int(m.group(1)) if m else 0


def rule_name(check_id: str) -> str:
    """A semgrep check id without the folder path semgrep may put before it."""
    return check_id.rsplit(".", 1)[-1]


def hit_finding(hit: dict, source: str) -> Finding:
    """A semgrep result as a finding of analyser ``source`` (no trace)."""
    extra = hit.get("extra", {})
    return Finding(int(hit["start"]["line"]), cwe_of(extra.get("metadata", {})), f"{source}:{rule_name(hit['check_id'])}",
                   " ".join(str(extra.get("message", "")).split()),
                   source, SEVERITY.get(str(extra.get("severity", "")).upper(), "medium"))
