"""Make a prefix or broken snippet parse, so the analysers (which need a syntax tree) see live,
unfinished code too: open brackets and strings closed, a dangling block header given a body,
trailing lines dropped; failing that, each step parsed on its own. Never runs the code."""
from __future__ import annotations

import ast
import textwrap

from engines.codeprm.steps import split_steps


def _close_brackets(text: str) -> str:
    stack: list[str] = []
    pairs = {"(": ")", "[": "]", "{": "}"}
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            if c == "\n" and len(quote) == 1:
                quote = None
        elif c == "#":
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        elif c in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
            i += len(quote)
            continue
        elif c in pairs:
            stack.append(pairs[c])
        elif c in ")]}" and stack:
            stack.pop()
        i += 1
    tail = ""
    if quote:
        tail += quote
    return text + tail + "".join(reversed(stack))


def _try_parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def repair(code: str, max_drop: int = 6) -> tuple[str, ast.Module] | None:
    """Make a prefix or broken snippet parse: returns (repaired text, tree) or None.

    Tries, dropping up to ``max_drop`` trailing lines: the text as is, with open brackets and
    strings closed, and with an indented ``pass`` after a dangling ``:``. Line numbers of the
    kept lines are unchanged.

    >>> repair("def f(x):\\n    return g(x,")[0].splitlines()[1]
    '    return g(x,)'
    """
    lines = code.splitlines()
    for drop in range(min(max_drop, max(len(lines) - 1, 0)) + 1):
        body = "\n".join(lines[: len(lines) - drop]) if drop else code
        for cand in (body, _close_brackets(body)):
            tree = _try_parse(cand)
            if tree is not None:
                return cand, tree
            last = cand.rstrip().splitlines()[-1] if cand.strip() else ""
            if last.rstrip().endswith(":"):
                ind = len(last) - len(last.lstrip()) + 4
                cand2 = cand.rstrip() + "\n" + " " * ind + "pass"
                tree = _try_parse(cand2)
                if tree is not None:
                    return cand2, tree
    return None


def pieces(code: str, max_step_lines: int = 8) -> list[tuple[int, str, ast.Module]]:
    """(line offset, text, tree) pieces that parse: the whole repaired code or each step alone."""
    fixed = repair(code)
    if fixed is not None:
        return [(0, fixed[0], fixed[1])]
    out = []
    lines = code.splitlines()
    for sp in split_steps(code, max_step_lines):
        text = textwrap.dedent("\n".join(lines[sp.start - 1: sp.end]))
        r = repair(text, max_drop=2)
        if r is not None:
            out.append((sp.start - 1, r[0], r[1]))
    return out
