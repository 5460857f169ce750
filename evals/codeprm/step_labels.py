"""Step labels of a vulnerability-fix pair from its diff.

The vulnerable version's steps that hold a line the fix removed or changed are risky; where the
fix only adds lines (a missing check), the step of the first code line after the insertion point
(or before it, at the end of the function) is risky. Every other step of the vulnerable
version, and every step of the fixed version, counts as safe.
"""
from __future__ import annotations

import difflib

from engines.codeprm.lines import normalise, split_lines
from engines.codeprm.steps import Span, step_of


def changed_lines(before: str, after: str) -> tuple[set[int], set[int], set[int]]:
    """1-based lines of ``before`` that the fix removed or replaced, lines of ``after`` that it
    added, and lines of ``before`` next to a pure insertion.

    >>> changed_lines("a\\nb\\nc\\n", "a\\nB\\nc\\nd\\n")
    ({2}, {2, 4}, {3})
    """
    a, b = split_lines(normalise(before)), split_lines(normalise(after))
    sm = difflib.SequenceMatcher(a=[x.strip() for x in a], b=[x.strip() for x in b], autojunk=False)
    removed, added, near = set(), set(), set()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag in ("replace", "delete"):
            removed.update(range(i1 + 1, i2 + 1))
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
        if tag == "insert":
            nxt = next((k for k in range(i1 + 1, len(a) + 1) if a[k - 1].strip()), None)
            prv = next((k for k in range(i1, 0, -1) if a[k - 1].strip()), None)
            if nxt is not None or prv is not None:
                near.add(nxt if nxt is not None else prv)
    return removed, added, near


def risky_steps(spans: list[Span], lines: set[int]) -> set[int]:
    """Indices of the steps that hold any of ``lines``."""
    return {k for k in (step_of(spans, ln) for ln in lines) if k >= 0}


def pair_lines(before: str, after: str, vul_lines=(), fix_lines=()) -> tuple[set[int], set[int], set[int]]:
    """:func:`changed_lines`, with the git diff's own changed lines when the record has them."""
    removed, added, near = changed_lines(before, after)
    if vul_lines or fix_lines:
        removed, added = set(vul_lines), set(fix_lines)
        if removed:
            near = set()
    return removed, added, near
