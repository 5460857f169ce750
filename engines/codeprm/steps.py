"""Split Python source into steps: blank-line blocks, cut at statement boundaries when long.

Purely line-based (plus a scanner of strings and brackets), so it works on prefixes and on code
that does not parse, which is what a live assistant sees (SecCodePRM, Sec. 3: steps are blank-line
blocks of the code trajectory).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engines.codeprm.lines import Scanner, split_lines

_HEADER_RE = re.compile(r"\s*(@|def |async def |class )")


@dataclass(frozen=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) of one step."""

    start: int
    end: int


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def split_steps(code: str, max_lines: int = 8) -> list[Span]:
    """Return the steps of ``code`` as line spans; blank lines belong to no step.

    Lines are numbered as Python numbers them (``lines.split_lines``). A step ends at a blank
    line, before a ``def``/``class``/decorator at the step's own indentation or shallower, or
    once it holds ``max_lines`` lines and the next line starts a statement no deeper than the
    step's first line. A line inside open brackets or a triple-quoted string (followed by
    ``lines.Scanner``, which knows a ``#`` inside a string is not a comment) starts no step,
    except at the hard cut: no step is longer than twice ``max_lines`` (a long literal or
    docstring is cut into pieces).

    >>> split_steps("import os\\n\\nx = 1\\ny = 2\\n")
    [Span(start=1, end=1), Span(start=3, end=4)]
    >>> split_steps("if line.startswith('#') and f(x,\\n        y):\\n    pass\\n\\nz = 1\\n")
    [Span(start=1, end=3), Span(start=5, end=5)]
    """
    return steps_of_lines(split_lines(code), max_lines)


def steps_of_lines(lines: list[str], max_lines: int = 8) -> list[Span]:
    """:func:`split_steps` of text already split into ``lines`` (what a ``Source`` holds)."""
    spans: list[Span] = []

    def close(a: int, b: int) -> None:
        while b > a and not lines[b - 1].strip():
            b -= 1
        spans.append(Span(a, b))

    start = None
    sc = Scanner()
    base_indent = 0
    for i, line in enumerate(lines, 1):
        stripped = line.strip()
        continuation = sc.continues
        if not stripped and not continuation:
            if start is not None:
                close(start, i - 1)
                start = None
            sc.feed(line)
            continue
        if start is not None:
            n = i - start
            if n >= 2 * max_lines and stripped:
                close(start, i - 1)
                start = None
            elif not continuation:
                ind = _indent(line)
                new_header = _HEADER_RE.match(line) is not None and ind <= base_indent
                after_decorator = lines[i - 2].strip().startswith("@")
                if (new_header and not after_decorator) or (n >= max_lines and ind <= base_indent):
                    close(start, i - 1)
                    start = None
        if start is None and stripped:
            start = i
            base_indent = _indent(line)
        sc.feed(line)
    if start is not None:
        close(start, len(lines))
    return spans


def step_of(spans: list[Span], line: int) -> int:
    """Index of the step holding ``line`` (1-based), or -1 (blank, or outside every step).

    >>> step_of([Span(1, 2), Span(4, 5)], 5), step_of([Span(1, 2), Span(4, 5)], 3)
    (1, -1)
    """
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid].end < line:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(spans) and spans[lo].start <= line <= spans[lo].end else -1
