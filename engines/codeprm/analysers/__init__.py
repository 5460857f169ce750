"""The analysers, from well-kept libraries or written here as data, one small module each, behind
one registry (:data:`ANALYSERS`): a new analyser is one module defining an ``Analyser`` and one
entry here, with its map to the tab's CWE families inside its module.

- ``codeshield``: Meta's CodeShield / Insecure Code Detector Python rules (MIT): semgrep rules plus
  the detector's regex rules.
- ``taint``: the taint rule pack (user input reaching a sink, semgrep's taint mode).
- ``settings``: the framework-settings rule pack (debug on, cookie flags off, ...).
- ``bandit``: bandit 1.9.4 run in-process on the scan's own parse.

``start_analysers`` starts every named analyser on many :class:`Source` s at once: one semgrep
process for every semgrep-based analyser's rules, in the background, while :meth:`Started.step`
runs the in-process work piece by piece; :meth:`Started.results` waits for the rest. Both merge
the same way: one finding per (line, CWE, analyser), the most severe kept, and none on a line
that holds no code (a comment or a docstring). What an analyser could not read is a
:class:`Failure` on that piece, never dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engines.codeprm.analysers import bandit, codeshield, settings, taint
from engines.codeprm.analysers.bandit import bandit_findings, bandit_raw, findings_of
from engines.codeprm.analysers.base import Analyser
from engines.codeprm.analysers.codeshield import codeshield_findings
from engines.codeprm.analysers.semgrep import AnalyserUnavailable, SemgrepRun
from engines.codeprm.cwe import family_of
from engines.codeprm.findings import LEVELS, Failure, Finding
from engines.codeprm.source import Source

#: name -> analyser, started in this order (the semgrep-based ones share one process, started first)
ANALYSERS: dict[str, Analyser] = {a.name: a for a in (codeshield.ANALYSER, taint.ANALYSER, settings.ANALYSER,
                                                       bandit.ANALYSER)}


def family_of_finding(f: Finding) -> int:
    """The tab's CWE family of a finding, as its analyser maps it (a model flag: its CWE's)."""
    a = ANALYSERS.get(f.source)
    return a.family(f) if a else family_of(f.cwe)


@dataclass
class Analysis:
    """What the analysers found in one piece of code, and what they could not read there."""

    findings: list[Finding] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def merge(code: str | Source, found: list[Finding]) -> list[Finding]:
    """One finding per (line, CWE, analyser), the most severe kept, none on a line without code;
    sorted by line.

    >>> f = Finding(2, 78, "bandit:B605", "shell", "bandit", "high", "high")
    >>> [x.line for x in merge("# os.system(x)\\nos.system(x)\\n", [f, Finding(1, 78, "r", "m", "codeshield")])]
    [2]
    """
    lines = Source.of(code).code_lines
    best: dict = {}
    for f in found:
        if f.line not in lines:
            continue
        key = (f.line, f.cwe, f.source)
        if key not in best or _level(f) > _level(best[key]):
            best[key] = f
    return sorted(best.values(), key=lambda f: (f.line, f.source, f.rule))


def _level(f: Finding) -> tuple[int, int, int]:
    return (LEVELS.index(f.severity) if f.severity in LEVELS else -1,
            LEVELS.index(f.confidence) if f.confidence in LEVELS else -1, f.trace is not None)


class Started:
    """Analysers running on many sources; :meth:`results` waits and merges."""

    def __init__(self, sources: list[Source], names: tuple[str, ...], rule_timeout_s: float | None = None) -> None:
        unknown = set(names) - set(ANALYSERS)
        if unknown:
            raise ValueError(f"unknown analysers {sorted(unknown)}; choose from {tuple(ANALYSERS)}")
        self.sources = sources
        self.analysers = [a for n, a in ANALYSERS.items() if n in names]
        self.done: dict[int, Analysis] = {}
        rules = [r for a in self.analysers if a.rules
                 for r in (a.rules_for(sources) if a.rules_for else a.rules())]
        kw = {} if rule_timeout_s is None else {"rule_timeout_s": rule_timeout_s}
        self.semgrep = SemgrepRun([s.text for s in sources], rules, **kw) if rules else None

    def step(self, i: int) -> None:
        """The in-process analysers' work on source ``i``."""
        if i in self.done:
            return
        out = Analysis()
        for a in self.analysers:
            if a.local is not None:
                fs, why = a.local(self.sources[i])
                out.findings += fs
                out.failures += why
        self.done[i] = out

    def results(self) -> list[Analysis]:
        """Every source's merged findings and failures."""
        try:
            for i in range(len(self.sources)):
                self.step(i)
            hits, failed = self.semgrep.result() if self.semgrep else ([[]] * len(self.sources),
                                                                       [[]] * len(self.sources))
        finally:
            self.stop()
        out = []
        for i, src in enumerate(self.sources):
            a = self.done[i]
            for hit in hits[i]:
                owner = next((x for x in self.analysers if x.read and x.owns(hit["check_id"])), None)
                if owner is not None:
                    f = owner.read(hit, src)
                    if f is not None:
                        a.findings.append(f)
            out.append(Analysis(merge(src, a.findings), a.failures + failed[i]))
        return out

    def findings(self) -> list[list[Finding]]:
        return [a.findings for a in self.results()]

    def stop(self) -> None:
        if self.semgrep:
            self.semgrep.stop()


def _sources(codes: list, pieces: list | None) -> list[Source]:
    out = []
    for k, c in enumerate(codes):
        src = Source.of(c)
        if pieces is not None and pieces[k] is not None and "parsed" not in src.__dict__:
            from engines.codeprm.parsing import Parsed

            src.parsed = Parsed(pieces[k], None, True)
        out.append(src)
    return out


def start_analysers(codes: list, names: tuple[str, ...] = tuple(ANALYSERS), pieces: list | None = None,
                    rule_timeout_s: float | None = None) -> Started:
    """Start the named analysers on ``codes`` (:class:`Source` s, or texts; ``pieces``: each
    text's repaired parse, when the caller has it)."""
    return Started(_sources(codes, pieces), names, rule_timeout_s)


def run_analysers(codes: list, names: tuple[str, ...] = tuple(ANALYSERS),
                  pieces: list | None = None) -> list[list[Finding]]:
    """Merged findings of the named analysers on each of ``codes``.

    >>> sorted({f.source for f in run_analysers(["import pickle\\nx = pickle.loads(b)\\n"])[0]})  # doctest: +SKIP
    ['bandit', 'codeshield']
    """
    return start_analysers(codes, names, pieces).findings()


__all__ = [
    "ANALYSERS",
    "Analyser",
    "AnalyserUnavailable",
    "Analysis",
    "Finding",
    "SemgrepRun",
    "Started",
    "bandit_findings",
    "bandit_raw",
    "codeshield_findings",
    "family_of_finding",
    "findings_of",
    "merge",
    "run_analysers",
    "start_analysers",
]
