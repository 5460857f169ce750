"""What a scan does before scoring: check the input against the caps, normalise its line ends,
parse it once (never run it) and decide whether it is Python at all."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from engines.codeprm.config import PRMConfig
from engines.codeprm.lines import count_lines, normalise, split_lines
from engines.codeprm.repair import pieces as repaired_pieces
from engines.common.errors import InputError


class CodeTooLarge(InputError):
    """The input is larger than the configured limits."""


class EmptyCode(InputError):
    """The input holds no code."""


class NotPython(InputError):
    """The input does not look like Python source (prose, another language, a binary dump)."""


def prepare(code: str) -> str:
    """What every scan reads: BOM dropped, ``\\r\\n`` and ``\\r`` line ends as ``\\n``, tabs expanded.

    >>> prepare("\\ufeffif x:\\r\\n\\ty = 1\\r\\n")
    'if x:\\n        y = 1\\n'
    """
    code = normalise(code.lstrip("\ufeff"))
    return code.expandtabs(8) if "\t" in code else code


def check_code(code, cfg: PRMConfig, what: str = "code") -> str:
    """``code`` checked against the request caps (at once, before any work) and normalised: BOM
    dropped, ``\\r\\n`` and ``\\r`` line ends as ``\\n``, tabs expanded.

    >>> check_code("x = 1\\r\\n", PRMConfig())
    'x = 1\\n'
    """
    return checked_lines(code, cfg, what)[0]


def checked_lines(code, cfg: PRMConfig, what: str = "code") -> tuple[str, list[str]]:
    """:func:`check_code` and the checked text's lines (split once, here)."""
    if not isinstance(code, str):
        raise InputError(f"{what} must be a string, got {type(code).__name__}")
    if "\x00" in code:
        raise InputError(f"the {what} holds NUL bytes; paste Python source text, not a binary file")
    if len(code) > cfg.max_chars:
        raise CodeTooLarge(f"the {what} has {len(code):,} characters; the limit is {cfg.max_chars:,} "
                           "characters per request. Scan a smaller file or split it.")
    code = prepare(code)
    lines = split_lines(code)
    if len(lines) > cfg.max_lines:
        raise CodeTooLarge(f"the {what} has {len(lines):,} lines; the limit is {cfg.max_lines:,} lines per request. "
                           "Split the file.")
    longest = max(map(len, lines), default=0)
    if longest > cfg.max_line_chars:
        raise CodeTooLarge(f"one line has {longest:,} characters; the limit is {cfg.max_line_chars:,} "
                           "characters per line (minified or generated code is not scanned).")
    if not code.strip():
        raise EmptyCode(f"there is no {what} to scan: paste some Python first")
    return code, lines


@dataclass
class Parsed:
    """The one parse of a scan: pieces that parse (the whole code, repaired when needed, or each
    step alone) for the analysers, and the syntax error of the code as given."""

    pieces: list
    syntax_error: str | None
    repairable: bool

    @property
    def parses(self) -> bool:
        return self.syntax_error is None


TOO_DEEP = "the expression is nested too deeply for Python's parser"


def nesting(code: str) -> int:
    """The deepest nesting of ``code``: brackets open at once, or unary operators in a row (each
    is one level of Python's parser), whichever is larger.

    >>> nesting("x = -(-(-1))\\n"), nesting("y = not not not not a\\n")
    (5, 4)
    """
    deepest = depth = run = 0
    for m in _NEST.finditer(code):
        tok = m.group(0)
        if tok in "([{":
            depth += 1
            run = 0
        elif tok in ")]}":
            depth = max(depth - 1, 0)
            run = 0
        elif tok.strip() in ("-", "+", "~", "not"):
            run += 1
        else:
            run = 0
        deepest = max(deepest, depth + run)
    return deepest


_NEST = re.compile(r"[()\[\]{}]|[-+~]|\bnot\b|[^\s()\[\]{}\-+~]+")


def parse_once(code: str, path: str = "snippet.py", lines: list[str] | None = None) -> Parsed:
    """Parse ``code`` (never run it): the whole code when it parses, else repaired / per-step pieces.
    A parser that gives up on nesting (Python's ``MemoryError`` or ``RecursionError``) is named in
    words, with the depth."""
    try:
        tree = compile(code, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return Parsed([(0, code, tree)], None, True)
    except SyntaxError as exc:
        err = f"line {exc.lineno}: {exc.msg}"
    except (RecursionError, MemoryError):
        return Parsed([], f"{TOO_DEEP} ({nesting(code):,} levels)", False)
    except ValueError as exc:
        return Parsed([], str(exc) or type(exc).__name__, False)
    found = repaired_pieces(code, lines=lines)
    return Parsed(found, err, len(found) == 1 and found[0][0] == 0)


_TRIVIAL = (ast.Name, ast.Constant, ast.Attribute, ast.UnaryOp)
# a line that reads as Python even where the code around it does not parse (a broken file)
_PY_LINE = re.compile(r"^(?:(?:async\s+)?def\s+\w+\s*\(|class\s+\w+|import\s+[\w.]+|from\s+[\w.]+\s+import\b|"
                      r"(?:return|raise|yield|assert|del|global|nonlocal)\b|(?:if|elif|while|for|with|except)\b.*:\s*$|"
                      r"(?:else|try|finally)\s*:|@[\w.]+|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/|&%]?=[^=]|\())")


def looks_like_python(code: str, parsed: Parsed, lines: list[str] | None = None) -> bool:
    """True for whatever ``ast.parse`` accepts (a docstring-only module too); for code that does
    not parse, when most non-blank, non-comment lines belong to pieces that parse or read as
    Python statements (``def f(``, ``import x``, ``name = ...``) and at least one is a real
    statement (prose that happens to parse in pieces is not code).

    >>> looks_like_python("'''Only a docstring.'''\\n", parse_once("'''Only a docstring.'''\\n"))
    True
    >>> looks_like_python("def f(:\\n    return 1\\n", parse_once("def f(:\\n    return 1\\n"))
    True
    >>> looks_like_python("Hello, how are you today?", parse_once("Hello, how are you today?"))
    False
    """
    if parsed.syntax_error is None and parsed.pieces or (parsed.syntax_error or "").startswith(TOO_DEEP):
        return True
    lines = [ln.strip() for ln in (split_lines(code) if lines is None else lines)]
    code_lines = [i for i, ln in enumerate(lines, 1) if ln and not ln.startswith("#")]
    if not code_lines:
        return False
    covered = set()
    real = False
    for off, text, tree in parsed.pieces:
        covered.update(range(off + 1, off + count_lines(text) + 1))
        for st in getattr(tree, "body", []):
            if not (isinstance(st, ast.Expr) and isinstance(st.value, _TRIVIAL)):
                real = True
    pyish = {i for i in code_lines if _PY_LINE.match(lines[i - 1])}
    share = sum(i in covered or i in pyish for i in code_lines) / len(code_lines)
    return (real or bool(pyish)) and share >= 0.6


def parse_python(code: str, path: str = "snippet.py") -> Parsed:
    """:func:`parse_once`, refusing text that is not Python with :class:`NotPython`."""
    parsed = parse_once(code, path)
    if not looks_like_python(code, parsed):
        raise NotPython("this does not look like Python: it does not parse, and most lines do not read as "
                        "Python statements. Paste Python source code.")
    return parsed
