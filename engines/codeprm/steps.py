"""Split Python source into steps: blank-line blocks, cut at statement boundaries when long.

Purely line-based (plus a rough bracket counter), so it works on prefixes and on code that
does not parse, which is what a live assistant sees (SecCodePRM, Sec. 3: steps are blank-line
blocks of the code trajectory).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_STR_RE = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")
_HEADER_RE = re.compile(r"\s*(@|def |async def |class )")


@dataclass(frozen=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) of one step."""

    start: int
    end: int


def _bracket_delta(line: str) -> int:
    code = _STR_RE.sub("", line.split("#", 1)[0]) if "#" in line else _STR_RE.sub("", line)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def split_steps(code: str, max_lines: int = 8) -> list[Span]:
    """Return the steps of ``code`` as line spans; blank lines belong to no step.

    A step ends at a blank line, before a ``def``/``class``/decorator at the step's own
    indentation or shallower, or once it holds ``max_lines`` lines and the next line starts a
    statement no deeper than the step's first line (hard cut at twice ``max_lines``). A line
    inside open brackets or a triple-quoted string never starts a step.

    >>> split_steps("import os\\n\\nx = 1\\ny = 2\\n")
    [Span(start=1, end=1), Span(start=3, end=4)]
    """
    lines = code.splitlines()
    spans: list[Span] = []
    start = None
    depth = 0
    in_triple: str | None = None
    base_indent = 0
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        continuation = depth > 0 or in_triple is not None
        if not stripped and not continuation:
            if start is not None:
                spans.append(Span(start, i - 1))
                start = None
            continue
        if start is not None and not continuation:
            n = i - start
            ind = _indent(line)
            new_header = _HEADER_RE.match(line) is not None and ind <= base_indent
            prev = lines[i - 2].strip() if i >= 2 else ""
            after_decorator = prev.startswith("@")
            if (new_header and not after_decorator) or (n >= max_lines and ind <= base_indent) or n >= 2 * max_lines:
                spans.append(Span(start, i - 1))
                start = None
        if start is None:
            start = i
            base_indent = _indent(line)
        # track triple-quoted strings and brackets for the next line
        for q in ('"""', "'''"):
            c = line.count(q)
            if in_triple == q and c % 2 == 1:
                in_triple = None
            elif in_triple is None and c % 2 == 1:
                in_triple = q
        if in_triple is None:
            depth = max(0, depth + _bracket_delta(line))
            if depth > 50:
                depth = 0
    if start is not None:
        end = len(lines)
        while end > start and not lines[end - 1].strip():
            end -= 1
        spans.append(Span(start, end))
    return spans


def step_of_line(spans: list[Span], line: int) -> int:
    """Index of the step that holds ``line`` (1-based), or -1 if it is blank/outside.

    >>> step_of_line([Span(1, 1), Span(3, 4)], 4)
    1
    """
    for k, s in enumerate(spans):
        if s.start <= line <= s.end:
            return k
    return -1
