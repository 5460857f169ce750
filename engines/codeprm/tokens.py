"""A small, robust Python lexer with hashed token ids (no ``tokenize``: it rejects prefixes).

Identifiers, operators and keywords become one token each; a string literal becomes a
STR marker, its prefix letters, up to eight lower-cased words/symbols of its content and an
end marker (so ``"SELECT ... %s"`` or ``"/tmp/x"`` stay visible to the model); numbers become
NUM; comments are dropped; every line starts with an indentation-depth token. Ids are CRC32
hashes into ``vocab_size`` buckets, so the vocabulary needs no file.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

PAD, UNK, BOS = 0, 1, 2
_RESERVED = 3
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM = re.compile(r"\d[\w.]*")
_OPS = re.compile(r"\*\*=?|//=?|->|:=|[=!<>]=|<<=?|>>=?|[-+*/%&|^@]=|[()\[\]{}:;,.~+\-*/%&|^<>=@!]")
_WORD = re.compile(r"[a-z_]+|[%{}/<>*=?$;]")
_STR_PREFIX = re.compile(r"([rRbBuUfF]{1,2})?('''|\"\"\"|'|\")")


class Lexer:
    """Turn source text into (token id, line) arrays; cached hash per distinct string.

    >>> ids, lines = Lexer(16384).lex("x = input()\\n")
    >>> len(ids) == len(lines) and lines.tolist()[0] == 1
    True
    """

    def __init__(self, vocab_size: int = 16384) -> None:
        self.vocab_size = vocab_size
        self._cache: dict[str, int] = {}

    def tid(self, s: str) -> int:
        """Hashed id of token string ``s``."""
        v = self._cache.get(s)
        if v is None:
            v = _RESERVED + zlib.crc32(s.encode("utf-8", "replace")) % (self.vocab_size - _RESERVED)
            if len(self._cache) < 500_000:
                self._cache[s] = v
        return v

    def lex(self, code: str) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and their 1-based line numbers; every non-blank line gets >= 1 token."""
        ids: list[int] = []
        lines: list[int] = []
        tid = self.tid
        n = len(code)
        pos = 0
        line = 1
        at_line_start = True
        while pos < n:
            ch = code[pos]
            if ch == "\n":
                if not at_line_start:
                    ids.append(tid("NL"))
                    lines.append(line)
                line += 1
                pos += 1
                at_line_start = True
                continue
            if ch in " \t\r\f\\":
                pos += 1
                continue
            if at_line_start:
                # indentation depth of this line
                ls = code.rfind("\n", 0, pos) + 1
                ind = len(code[ls:pos].expandtabs(4))
                ids.append(tid(f"IND{min(ind // 4, 7)}"))
                lines.append(line)
                at_line_start = False
            if ch == "#":
                e = code.find("\n", pos)
                pos = n if e < 0 else e
                continue
            m = _STR_PREFIX.match(code, pos)
            if m:  # a string literal, with its prefix letters (the regex needs the quote next)
                prefix = (m.group(1) or "").lower()
                q = m.group(2)
                end = _find_str_end(code, m.end(), q)
                body = code[m.end():end]
                ids.append(tid("STR" + ("F" if "f" in prefix else "") + ("B" if "b" in prefix else "")))
                lines.append(line)
                for w in _WORD.findall(body[:400].lower())[:8]:
                    ids.append(tid("s:" + w))
                    lines.append(line)
                ids.append(tid("/STR"))
                lines.append(line)
                stop = min(n, end + len(q))
                for _ in range(code.count("\n", pos, stop)):  # lines inside the string get a marker
                    line += 1
                    ids.append(tid("SCONT"))
                    lines.append(line)
                pos = stop
                continue
            m = _NAME.match(code, pos)
            if m:
                ids.append(tid(m.group(0)))
                lines.append(line)
                pos = m.end()
                continue
            m = _NUM.match(code, pos)
            if m:
                ids.append(tid("NUM"))
                lines.append(line)
                pos = m.end()
                continue
            m = _OPS.match(code, pos)
            if m:
                ids.append(tid(m.group(0)))
                lines.append(line)
                pos = m.end()
                continue
            ids.append(UNK)
            lines.append(line)
            pos += 1
        if not at_line_start:
            ids.append(tid("NL"))
            lines.append(line)
        return np.asarray(ids, dtype=np.int64), np.asarray(lines, dtype=np.int64)


def _find_str_end(code: str, start: int, q: str) -> int:
    """Index where the closing quote ``q`` starts (end of line/text when unterminated)."""
    if len(q) == 3:
        e = code.find(q, start)
        while e > 0 and code[e - 1] == "\\" and (e - 2 < 0 or code[e - 2] != "\\"):
            e = code.find(q, e + 1)
        return len(code) if e < 0 else e
    i = start
    n = len(code)
    while i < n:
        c = code[i]
        if c == "\\":
            i += 2
            continue
        if c == q:
            return i
        if c == "\n":
            return i  # unterminated single-quoted string: stop at end of line
        i += 1
    return n
