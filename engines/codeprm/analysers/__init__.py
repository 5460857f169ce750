"""The analysers, from well-kept libraries, one small module each, behind one registry.

- ``bandit``: bandit 1.9.4 run in-process on the scan's own parse (repaired when it does not
  parse).
- ``codeshield``: Meta's CodeShield / Insecure Code Detector Python rules (MIT): semgrep rules run
  by the semgrep engine from PyPI (offline, local rule files) plus the detector's regex rules.

``start_analysers`` starts every named analyser on many pieces of code at once: semgrep as one
process in the background, while :meth:`Started.step` runs the in-process ones (bandit) piece by
piece; :meth:`Started.findings` waits for the rest. ``run_analysers`` does all three. Both merge the same way: one finding per (line, CWE, analyser), the most severe
kept, and none on a line that holds no code (a comment or a docstring).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engines.codeprm.analysers.bandit import bandit_findings, bandit_raw, findings_of
from engines.codeprm.analysers.codeshield import (
    AnalyserUnavailable,
    SemgrepRun,
    codeshield_findings,
)
from engines.codeprm.findings import LEVELS, Finding
from engines.codeprm.lines import code_lines


@dataclass
class Pending:
    """One analyser at work on many pieces of code: ``step(i)`` does its in-process work on
    piece i, ``result()`` gives every piece's findings once it is done."""

    result: Callable[[], list[list[Finding]]]
    step: Callable[[int], None] = lambda i: None
    stop: Callable[[], None] = lambda: None


def _bandit(codes: list[str], pieces: list | None) -> Pending:
    found: dict[int, list[Finding]] = {}
    pieces = pieces or [None] * len(codes)

    def step(i: int) -> None:
        if i not in found:
            found[i] = bandit_findings(codes[i], pieces[i])

    def result() -> list[list[Finding]]:
        for i in range(len(codes)):
            step(i)
        return [found[i] for i in range(len(codes))]

    return Pending(result, step)


def _codeshield(codes: list[str], pieces: list | None) -> Pending:
    run = SemgrepRun(codes)
    return Pending(lambda: codeshield_findings(codes, run), stop=run.stop)


# name -> starter(codes, repaired pieces of each or None) -> Pending; started in this order
ANALYSERS: dict[str, Callable[[list[str], list | None], Pending]] = {"codeshield": _codeshield, "bandit": _bandit}


def merge(code: str, found: list[Finding]) -> list[Finding]:
    """One finding per (line, CWE, analyser), the most severe kept, none on a line without code;
    sorted by line.

    >>> f = Finding(2, 78, "bandit:B605", "shell", "bandit", "high", "high")
    >>> [x.line for x in merge("# os.system(x)\\nos.system(x)\\n", [f, Finding(1, 78, "r", "m", "codeshield")])]
    [2]
    """
    lines = code_lines(code)
    best: dict = {}
    for f in found:
        if f.line not in lines:
            continue
        key = (f.line, f.cwe, f.source)
        if key not in best or _level(f) > _level(best[key]):
            best[key] = f
    return sorted(best.values(), key=lambda f: (f.line, f.source, f.rule))


def _level(f: Finding) -> tuple[int, int]:
    return (LEVELS.index(f.severity) if f.severity in LEVELS else -1,
            LEVELS.index(f.confidence) if f.confidence in LEVELS else -1)


class Started:
    """Analysers running on many pieces of code; :meth:`findings` waits and merges."""

    def __init__(self, codes: list[str], names: tuple[str, ...], pieces: list | None) -> None:
        unknown = set(names) - set(ANALYSERS)
        if unknown:
            raise ValueError(f"unknown analysers {sorted(unknown)}; choose from {tuple(ANALYSERS)}")
        self.codes = codes
        self.pending: list[Pending] = []
        try:
            for name, start in ANALYSERS.items():
                if name in names:
                    self.pending.append(start(codes, pieces))
        except BaseException:
            self.stop()
            raise

    def step(self, i: int) -> None:
        """The in-process analysers' work on piece ``i``."""
        for p in self.pending:
            p.step(i)

    def findings(self) -> list[list[Finding]]:
        out: list[list[Finding]] = [[] for _ in self.codes]
        try:
            for p in self.pending:
                for acc, fs in zip(out, p.result()):
                    acc.extend(fs)
        finally:
            self.stop()
        return [merge(c, fs) for c, fs in zip(self.codes, out)]

    def stop(self) -> None:
        for p in self.pending:
            p.stop()


def start_analysers(codes: list[str], names: tuple[str, ...] = tuple(ANALYSERS),
                    pieces: list | None = None) -> Started:
    """Start the named analysers on ``codes`` (``pieces``: each code's repaired parse, when the
    caller has it)."""
    return Started(codes, names, pieces)


def run_analysers(codes: list[str], names: tuple[str, ...] = tuple(ANALYSERS),
                  pieces: list | None = None) -> list[list[Finding]]:
    """Merged findings of the named analysers on each of ``codes``.

    >>> [f.source for f in run_analysers(["import pickle\\nx = pickle.loads(b)\\n"])[0]]  # doctest: +SKIP
    ['bandit', 'codeshield']
    """
    return start_analysers(codes, names, pieces).findings()


__all__ = ["ANALYSERS", "AnalyserUnavailable", "Finding", "Pending", "SemgrepRun", "Started", "bandit_findings",
           "bandit_raw", "codeshield_findings", "findings_of", "merge", "run_analysers", "start_analysers"]
