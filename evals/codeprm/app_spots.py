"""Hand-labelled spots in real web applications (``evals/codeprm/data/app_spots.jsonl``): where
user input reaches a dangerous call, where a framework setting is left open, and (marked apart,
never counted by the bars) logic flaws and other weaknesses; each with a safe twin where the fix
is known. The labelling rule is ``docs/codeprm_spot_labels.md``.

One spot a line::

    {"repo": "owner/name", "split": "test", "commit": "<40 hex>", "path": "app/views.py",
     "sink_line": 18, "source_line": 15, "cwe": 22, "category": "taint", "flow": "variable",
     "source": "request.form['filename']", "sink": "open(", "reason": "...",
     "twin": {"path": "app/views.py", "start_line": 18, "end_line": 18, "replacement": "..."}}

``source_path`` (optional) names the file of the source when it is not the sink's file;
``flow_lines`` (optional) lists the lines of the sink's file where the dangerous value is built on
the way (the f-string or concatenation of a query a later line executes). Lines
count as Python counts them (``engines.codeprm.lines.split_lines``, 1-based).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from engines.common.paths import REPO_ROOT

SPOTS = REPO_ROOT / "evals" / "codeprm" / "data" / "app_spots.jsonl"
CATEGORIES = ("taint", "settings", "logic", "weakness")
COUNTED = ("taint", "settings")  # the bars count these; logic flaws and other weaknesses are neutral
FLOWS = ("direct", "variable", "format", "helper", "setting", "other")


@dataclass(frozen=True)
class Twin:
    """The safe twin of a spot: lines ``start_line..end_line`` of ``path`` replaced by
    ``replacement`` (whole lines, their indentation included)."""

    path: str
    start_line: int
    end_line: int
    replacement: str


@dataclass(frozen=True)
class Spot:
    """One hand-labelled spot (see the module docstring)."""

    repo: str
    split: str
    commit: str
    path: str
    sink_line: int
    source_line: int | None
    cwe: int
    category: str
    flow: str
    source: str
    sink: str
    reason: str
    twin: Twin | None = None
    source_path: str | None = None
    flow_lines: tuple[int, ...] = ()
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def id(self) -> str:
        return f"{self.repo}:{self.path}:{self.sink_line}:CWE-{self.cwe}"

    @property
    def counted(self) -> bool:
        return self.category in COUNTED

    def to_dict(self) -> dict:
        d = {"repo": self.repo, "split": self.split, "commit": self.commit, "path": self.path,
             "sink_line": self.sink_line, "source_line": self.source_line, "cwe": self.cwe,
             "category": self.category, "flow": self.flow, "source": self.source, "sink": self.sink,
             "reason": self.reason,
             "twin": None if self.twin is None else {"path": self.twin.path, "start_line": self.twin.start_line,
                                                     "end_line": self.twin.end_line,
                                                     "replacement": self.twin.replacement}}
        if self.source_path:
            d["source_path"] = self.source_path
        if self.flow_lines:
            d["flow_lines"] = list(self.flow_lines)
        return d


class SpotError(ValueError):
    """A spot line that is not well formed."""


_KEYS = {"repo", "split", "commit", "path", "sink_line", "source_line", "cwe", "category", "flow", "source", "sink",
         "reason", "twin"}


def parse_spot(d: dict) -> Spot:
    """A spot from its JSON object; :class:`SpotError` names what is wrong."""
    missing = _KEYS - set(d)
    if missing:
        raise SpotError(f"missing keys {sorted(missing)}")
    if d["category"] not in CATEGORIES:
        raise SpotError(f"category {d['category']!r} not in {CATEGORIES}")
    if d["flow"] not in FLOWS:
        raise SpotError(f"flow {d['flow']!r} not in {FLOWS}")
    if d["split"] not in ("train", "dev", "test"):
        raise SpotError(f"split {d['split']!r}")
    if not re.fullmatch(r"[0-9a-f]{40}", str(d["commit"])):
        raise SpotError(f"commit {d['commit']!r} is not a 40-hex commit")
    if not (isinstance(d["sink_line"], int) and d["sink_line"] >= 1):
        raise SpotError(f"sink_line {d['sink_line']!r}")
    if d["source_line"] is not None and not (isinstance(d["source_line"], int) and d["source_line"] >= 1):
        raise SpotError(f"source_line {d['source_line']!r}")
    if not (isinstance(d["cwe"], int) and d["cwe"] > 0):
        raise SpotError(f"cwe {d['cwe']!r}")
    if not (d["sink"] and d["reason"]):
        raise SpotError("sink and reason must be given")
    t = d["twin"]
    twin = None
    if t is not None:
        if not (isinstance(t.get("start_line"), int) and isinstance(t.get("end_line"), int)
                and 1 <= t["start_line"] <= t["end_line"] and isinstance(t.get("replacement"), str) and t.get("path")):
            raise SpotError(f"twin {t!r}")
        twin = Twin(t["path"], t["start_line"], t["end_line"], t["replacement"])
    flow = d.get("flow_lines", [])
    if not (isinstance(flow, list) and all(isinstance(x, int) and x >= 1 for x in flow)):
        raise SpotError(f"flow_lines {flow!r}")
    return Spot(d["repo"], d["split"], d["commit"], d["path"], d["sink_line"], d["source_line"], d["cwe"],
                d["category"], d["flow"], d["source"], d["sink"], d["reason"], twin, d.get("source_path"),
                tuple(flow), {k: v for k, v in d.items() if k not in _KEYS | {"source_path", "flow_lines"}})


def load_spots(path: Path = SPOTS, splits: tuple[str, ...] = ("train", "dev", "test")) -> list[Spot]:
    """Every spot of ``splits``; a malformed line raises :class:`SpotError` with its line number."""
    out = []
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            s = parse_spot(json.loads(line))
        except (ValueError, TypeError, AttributeError) as exc:
            raise SpotError(f"{path}:{i}: {exc}") from exc
        if s.split in splits:
            out.append(s)
    return out


def file_lines(text: str) -> list[str]:
    """The lines of a file as the spots (and every part of a scan) count them: Python's own
    numbering (``engines.codeprm.lines``)."""
    from engines.codeprm.lines import normalise, split_lines

    return split_lines(normalise(text))


def apply_twin(text: str, twin: Twin) -> str:
    """The file with the twin's lines replaced (the file's line ends kept as ``\\n``)."""
    lines = file_lines(text)
    if twin.end_line > len(lines):
        raise SpotError(f"twin lines {twin.start_line}-{twin.end_line} past the end ({len(lines)} lines)")
    new = lines[: twin.start_line - 1] + twin.replacement.rstrip("\n").split("\n") + lines[twin.end_line:]
    return "\n".join(new) + "\n"


def twin_span(twin: Twin) -> tuple[int, int]:
    """First and last line of the replacement in the patched file."""
    return twin.start_line, twin.start_line + len(twin.replacement.rstrip("\n").split("\n")) - 1


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s)


def parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def check_spot(spot: Spot, text: str, source_text: str | None = None, twin_text: str | None = None) -> list[str]:
    """Problems of a spot against its file at its commit (empty when none): the sink's text must
    stand on the sink line, the source's on the source line, and the twin must apply and parse
    (when the file parses)."""
    probs = []
    lines = file_lines(text)
    if spot.sink_line > len(lines):
        return [f"sink_line {spot.sink_line} past the end ({len(lines)} lines)"]
    if _norm(spot.sink) not in _norm(lines[spot.sink_line - 1]):
        probs.append(f"sink {spot.sink!r} not on line {spot.sink_line}: {lines[spot.sink_line - 1].strip()[:120]!r}")
    if any(x > len(lines) for x in spot.flow_lines):
        probs.append(f"flow_lines {list(spot.flow_lines)} past the end ({len(lines)} lines)")
    if spot.source_line is not None:
        src_lines = file_lines(source_text) if source_text is not None else lines
        if spot.source_line > len(src_lines):
            probs.append(f"source_line {spot.source_line} past the end")
        elif _norm(spot.source) not in _norm(src_lines[spot.source_line - 1]):
            probs.append(f"source {spot.source!r} not on line {spot.source_line}: "
                         f"{src_lines[spot.source_line - 1].strip()[:120]!r}")
    if spot.twin is not None:
        base = twin_text if twin_text is not None else text
        try:
            patched = apply_twin(base, spot.twin)
        except SpotError as exc:
            probs.append(str(exc))
        else:
            if parses(base) and not parses(patched):
                probs.append("the twin does not parse")
            if patched == base.rstrip("\n") + "\n" or patched == base:
                probs.append("the twin changes nothing")
    return probs


def twin_parses_alone(twin: Twin) -> bool:
    """Whether the replacement parses as statements on its own (a check that needs no snapshot):
    its first line's indentation is taken off every line that has it (the lines of a continued
    string keep theirs); a replacement that opens a block gets a ``pass`` body."""
    lines = twin.replacement.rstrip("\n").split("\n")
    ind = len(lines[0]) - len(lines[0].lstrip())
    body = "\n".join(ln[ind:] if not ln[:ind].strip() else ln for ln in lines)
    return parses(body) or parses(body + "\n    pass")
