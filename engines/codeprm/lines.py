"""One line numbering for the splitter, the analysers, SARIF and the tab: Python's own.

Python ends a line at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else; a form feed (a PEP 8 page
break), a vertical tab, U+2028 and the other characters ``str.splitlines`` also breaks at are
ordinary characters to the tokenizer, to ``ast`` (so to bandit) and to semgrep. Every part of a
scan therefore numbers lines with :func:`split_lines` on :func:`normalise` d text.

Also here, shared by the step splitter and the prefix repair: a character scanner that follows
strings, comments and brackets across lines (:class:`Scanner`), and which lines hold code at
all (:func:`code_lines`: not blank, not only a comment, not part of a docstring).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

# characters str.splitlines() breaks at that Python does not: given to semgrep as spaces
ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ODD_TABLE = str.maketrans({c: " " for c in ODD_BREAKS})
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_SPECIAL = re.compile(r"[#'\"()\[\]{}]")
_SINGLE_END = {q: re.compile(r"\\|" + q) for q in ("'", '"')}
_TRIPLE_END = {q: re.compile(r"\\|" + q) for q in ("'''", '"""')}


def normalise(code: str) -> str:
    """``\\r\\n`` and ``\\r`` line ends as ``\\n`` (what Python does when it reads source).

    >>> normalise("a = 1\\r\\nb = 2\\rc = 3\\n")
    'a = 1\\nb = 2\\nc = 3\\n'
    """
    return code.replace("\r\n", "\n").replace("\r", "\n") if "\r" in code else code


def split_lines(code: str) -> list[str]:
    """The lines of normalised ``code`` as Python numbers them (line k is item k - 1); a final
    line end does not start another line.

    >>> split_lines("x = 1\\f\\n\\u2028y = 2\\n")
    ['x = 1\\x0c', '\\u2028y = 2']
    """
    if not code:
        return []
    lines = code.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def count_lines(code: str) -> int:
    """How many lines ``code`` has (a final line end does not start another line).

    >>> count_lines("x = 1\\n" * 3), count_lines("x = 1\\ny = 2")
    (3, 2)
    """
    code = normalise(code)
    return code.count("\n") + (0 if not code or code.endswith("\n") else 1)


def for_semgrep(code: str) -> str:
    """``code`` with the characters other tools may break lines at written as spaces, so that
    an external analyser numbers lines exactly as Python does."""
    return code.translate(_ODD_TABLE)


@dataclass
class Scanner:
    """Follows strings, comments and brackets through source text, line by line.

    After :meth:`feed` of a line (without its line end), ``quote`` is the open string's quote
    (triple quotes carry over to the next line; an unterminated one-quote string does not,
    as in Python, unless the line ends in a backslash), ``stack`` the closers of the open
    brackets, ``code_end`` the index in that line where a comment starts (its length when there
    is none) and ``saw_code`` whether the line holds anything outside strings and comments.

    >>> s = Scanner(); s.feed("if line.startswith('#') and f(x,  # comment"); s.stack, s.code_end
    ([')'], 34)
    """

    quote: str | None = None
    stack: list[str] = field(default_factory=list)
    code_end: int = 0
    saw_code: bool = False
    eol_quote: str | None = None

    def feed(self, line: str) -> None:
        self.code_end = n = len(line)
        self.saw_code = False
        i = 0
        while i < n:
            if self.quote:  # inside a string: jump to its end (or a backslash escape)
                m = (_TRIPLE_END if len(self.quote) == 3 else _SINGLE_END)[self.quote].search(line, i)
                if m is None:
                    i = n
                    break
                if m.group(0) == "\\":
                    i = m.end() + 1
                    continue
                i = m.end()
                self.quote = None
                continue
            m = _SPECIAL.search(line, i)
            j = n if m is None else m.start()
            if not self.saw_code and line[i:j].strip():
                self.saw_code = True
            if m is None:
                break
            c = line[j]
            if c == "#":
                self.code_end = j
                break
            if c in "'\"":
                self.quote = line[j:j + 3] if line[j:j + 3] in ('"""', "'''") else c
                i = j + len(self.quote)
                continue
            self.saw_code = True
            if c in _PAIRS:
                self.stack.append(_PAIRS[c])
                if len(self.stack) > 200:  # not real code: stop counting
                    self.stack.clear()
            elif c in ")]}" and self.stack:
                self.stack.pop()
            i = j + 1
        self.eol_quote = self.quote  # the string still open where the line ends
        if self.quote is not None and len(self.quote) == 1 and not line.endswith("\\"):
            self.quote = None

    @property
    def continues(self) -> bool:
        """True when the next line continues this statement (open bracket or triple quote)."""
        return bool(self.stack) or (self.quote is not None and len(self.quote) == 3)


@functools.lru_cache(maxsize=8)
def code_lines(code: str) -> frozenset[int]:
    r"""The lines of normalised ``code`` that hold code: lines of a statement (its continuation
    lines included) that has something outside strings and comments. Blank lines, comment-only
    lines and statements that are only a string (docstrings) hold none. Line-based, so it works
    on prefixes and on code that does not parse.

    >>> sorted(code_lines("'''Doc.\n\nMore.'''\n# note\nx = 1  # set\n\ny = f(\n    'a')\n"))
    [5, 7, 8]
    """
    return code_lines_of(split_lines(code))


def code_lines_of(lines: list[str]) -> frozenset[int]:
    """:func:`code_lines` of text already split into ``lines`` (what a :class:`Source` holds)."""
    out: set[int] = set()
    sc = Scanner()
    stmt: list[int] = []
    has_code = False
    for k, line in enumerate(lines, 1):
        sc.feed(line)
        if line[: sc.code_end].strip():
            stmt.append(k)
        has_code = has_code or sc.saw_code
        if not sc.continues and not line[: sc.code_end].rstrip().endswith("\\"):
            if has_code:
                out.update(stmt)
            stmt, has_code = [], False
    if has_code:
        out.update(stmt)
    return frozenset(out)
