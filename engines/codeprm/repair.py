"""Make a prefix or broken snippet parse, so the analysers (which need a syntax tree) see live,
unfinished code too. The line being written stays: its open string is ended, an operand it
waits for is filled with a placeholder name, its brackets are closed, a block header it opens
gets a body, and every block still open is closed (``try`` gets an ``except``). Lines are only
appended, so every line keeps its number. Failing that, trailing lines are dropped; failing
that, each step is parsed on its own. Never runs the code."""
from __future__ import annotations

import ast
import re
import textwrap

from engines.codeprm.lines import Scanner, split_lines
from engines.codeprm.steps import steps_of_lines

PLACEHOLDER = "_"
# a line ending in one of these waits for an operand
_WANTS_OPERAND = re.compile(r"(?:[-+*/%&|^<>=!~@:]|\*\*|//|<<|>>|\.|\b(?:and|or|not|in|is|if|else|lambda|"
                            r"return|await|yield|from|import|as|assert|raise|del|for|while|with|elif|except))\s*$")
_HEADER = re.compile(r"\s*(?:async\s+)?(?:def|class|if|elif|else|for|while|with|try|except|finally|match|case)\b")
_CONTINUER = re.compile(r"\s*(?:elif|else|except|finally)\b")


def _try_parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _open_tries(lines: list[str]) -> list[int]:
    """Indents of ``try:`` blocks still waiting for their ``except``/``finally``, innermost last."""
    open_: list[int] = []
    sc = Scanner()
    for line in lines:
        cont = sc.continues
        sc.feed(line)
        s = line.strip()
        if cont or not s or s.startswith("#"):
            continue
        ind = _indent(line)
        if re.match(r"(?:except|finally)\b", s) and open_ and open_[-1] == ind:
            open_.pop()
            continue
        while open_ and ind <= open_[-1]:
            open_.pop()  # a try closed some other way (broken code): forget it
        if re.match(r"try\s*:", s):
            open_.append(ind)
    return open_


def complete(code: str) -> list[str]:
    """Ways to finish ``code`` at its end (most faithful first) that keep every line, the last
    one included: strings ended, an operand filled in, brackets closed, a header given a body,
    open ``try`` blocks given an ``except``.

    >>> complete("try:\\n    os.system('nslookup ' +")[0]
    "try:\\n    os.system('nslookup ' + _)\\nexcept BaseException:\\n    pass"
    """
    lines = split_lines(code)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return []
    sc = Scanner()
    for line in lines:
        sc.feed(line)
    last = lines[-1]
    quote = sc.eol_quote or ""
    closers = "".join(reversed(sc.stack))
    body_ind = " " * (_indent(last) + 4)
    tail = last[: sc.code_end].rstrip() if not quote else last
    needs = not quote and bool(_WANTS_OPERAND.search(tail))
    fills = [" " + PLACEHOLDER, ""] if needs else ["", " " + PLACEHOLDER]
    if not quote and re.match(r"\s*(?:async\s+)?def\s+\w+$", tail):
        fills.insert(0, "()")  # a function name being typed
    ends = [quote, "}" + quote] if quote else [""]  # an f-string may also wait for its "}"
    tails = [tail]
    word = re.search(r"(?<=[\s(\[{,])[A-Za-z_]\w*$", tail) if not quote else None
    if word:  # a word cut short inside an expression ("[x i" of "[x if ...]"): also without it
        tails.append(tail[: word.start()].rstrip())
    out = []
    for tail, fill, q in ((t, f, q) for t in tails for q in ends for f in fills):
        end = tail + q + fill + closers
        for colon in ("", ":"):
            cand = lines[:-1] + [end + colon]
            stripped = (end + colon).rstrip()
            if stripped.endswith(":") or (_HEADER.match(last) and colon):
                cand.append(body_ind + "pass")
            elif stripped.lstrip().startswith("@"):
                cand.append(" " * _indent(last) + "def _(): pass")
            for ind in reversed(_open_tries(cand)):
                cand += [" " * ind + "except BaseException:", " " * (ind + 4) + "pass"]
            out.append("\n".join(cand))
    return out


def repair(code: str, max_drop: int = 6, lines: list[str] | None = None) -> tuple[str, ast.Module] | None:
    """Make a prefix or broken snippet parse: returns (repaired text, tree) or None.

    Tries the code as is, then :func:`complete` (the last line kept), then the same with up to
    ``max_drop`` trailing lines dropped. Line numbers of the kept lines are unchanged.

    >>> repair("def f(x):\\n    return g(x,")[0].splitlines()[1]
    '    return g(x,)'
    >>> repair("if a:\\n    x = 1\\nelif subprocess.run('ls ' + d, shell=True")[0].splitlines()[2]
    "elif subprocess.run('ls ' + d, shell=True):"
    """
    lines = split_lines(code) if lines is None else lines
    for drop in range(min(max_drop, max(len(lines) - 1, 0)) + 1):
        body = "\n".join(lines[: len(lines) - drop]) if drop else code
        for cand in ([body] if drop == 0 else []) + complete(body):
            tree = _try_parse(cand)
            if tree is not None:
                return cand, tree
    return None


def pieces(code: str, max_step_lines: int = 8, lines: list[str] | None = None) -> list[tuple[int, str, ast.Module]]:
    """(line offset, text, tree) pieces that parse: the whole repaired code or each step alone
    (a step that continues a block, ``elif``/``else``/``except``/``finally``, is read after a
    stand-in header line, so its offset is one less)."""
    lines = split_lines(code) if lines is None else lines
    fixed = repair(code, lines=lines)
    if fixed is not None:
        return [(0, fixed[0], fixed[1])]
    out = []
    for sp in steps_of_lines(lines, max_step_lines):
        text = textwrap.dedent("\n".join(lines[sp.start - 1: sp.end]))
        r = repair(text, max_drop=2)
        if r is not None:
            out.append((sp.start - 1, r[0], r[1]))
            continue
        m = _CONTINUER.match(text)
        if m:
            head = "try:\n    pass" if m.group(0).strip() in ("except", "finally") else "if _:\n    pass"
            lead = head.count("\n") + 1
            r = repair(head + "\n" + text, max_drop=2)
            if r is not None:
                out.append((sp.start - 1 - lead, r[0], r[1]))
    return out
