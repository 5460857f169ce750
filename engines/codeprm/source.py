"""One piece of code as every stage of a scan reads it: read once, split into lines once, parsed
once, then handed whole to the step splitter, the model, the analysers (bandit, the semgrep rule
packs) and the fusion, so that no stage splits or parses the text again.

Python's own reading decides what the text is: bytes are decoded as the interpreter decodes a
source file (:func:`decode`: a PEP 263 coding cookie, a UTF-8 BOM, else UTF-8), line ends are
Python's (``lines.py``), and the parse is ``compile(..., PyCF_ONLY_AST)`` (never run).
"""
from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass, field
from functools import cached_property

from engines.codeprm.config import PRMConfig
from engines.codeprm.lines import code_lines_of, split_lines
from engines.codeprm.parsing import EmptyCode, NotPython, Parsed, checked_lines, looks_like_python, parse_once, prepare
from engines.codeprm.steps import Span, steps_of_lines


def decode(data: bytes) -> str:
    """Source bytes as Python decodes them: the PEP 263 cookie or a UTF-8 BOM names the codec
    (``tokenize.detect_encoding``), else UTF-8; bytes the codec cannot decode become U+FFFD
    (the analysers still read the rest), and an unknown codec name falls back to UTF-8.

    >>> decode(b"# -*- coding: latin-1 -*-\\nname = 'caf\\xe9'\\n").splitlines()[1]
    "name = 'café'"
    """
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown codec in the cookie, or a BOM that contradicts it
        enc = "utf-8"
    try:
        codecs.lookup(enc)
    except LookupError:
        enc = "utf-8"
    text = data.decode(enc, errors="replace")
    return text.removeprefix("\ufeff")


@dataclass(eq=False)
class Source:
    """The text of one piece of code with everything the stages read from it.

    ``text`` is the prepared text (BOM dropped, Python's line ends as ``\\n``, tabs expanded),
    ``lines`` its lines as Python numbers them. ``code_lines`` (lines that hold code), ``parsed``
    (the one parse: pieces that parse, the syntax error) and ``spans`` (the steps) are computed
    once, on first use."""

    text: str
    lines: list[str]
    path: str = "snippet.py"
    max_step_lines: int = 8
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, code, cfg: PRMConfig | None = None, path: str = "snippet.py", what: str = "code",
             python: bool = True, empty: bool = False) -> Source:
        """``code`` checked against the caps of ``cfg`` (a typed error at once, before any work),
        prepared and, with ``python``, refused with :class:`NotPython` when it is not Python.
        ``empty``: an empty text is a Source with no lines instead of :class:`EmptyCode`."""
        cfg = cfg or PRMConfig()
        try:
            text, lines = checked_lines(code, cfg, what)
        except EmptyCode:
            if not empty:
                raise
            return cls("", [], path, cfg.max_step_lines)
        src = cls(text, lines, path, cfg.max_step_lines)
        if python and not looks_like_python(text, src.parsed, lines):
            raise NotPython("this does not look like Python: it does not parse, and most lines do not read as "
                            "Python statements. Paste Python source code.")
        return src

    @classmethod
    def of(cls, code: str | Source, path: str = "snippet.py", max_step_lines: int = 8) -> Source:
        """A Source of ``code`` with no caps and no Python check (evaluation, analyser calls)."""
        if isinstance(code, Source):
            return code
        text = prepare(code)
        return cls(text, split_lines(text), path, max_step_lines)

    @property
    def n_lines(self) -> int:
        return len(self.lines)

    @property
    def empty(self) -> bool:
        return not self.text.strip()

    @cached_property
    def code_lines(self) -> frozenset[int]:
        return code_lines_of(self.lines)

    @cached_property
    def parsed(self) -> Parsed:
        return parse_once(self.text, self.path, self.lines) if self.lines else Parsed([], None, True)

    @property
    def pieces(self) -> list:
        return self.parsed.pieces

    @cached_property
    def spans(self) -> list[Span]:
        return steps_of_lines(self.lines, self.max_step_lines)
