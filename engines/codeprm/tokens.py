"""A small, robust Python lexer with hashed token ids (no ``tokenize``: it rejects prefixes).

Identifiers, operators and keywords become one token each; a string literal becomes a
STR marker, its prefix letters, up to eight lower-cased words/symbols of its content and an
end marker (so ``"SELECT ... %s"`` or ``"/tmp/x"`` stay visible to the model); numbers become
NUM; comments are dropped; every line starts with an indentation-depth token. An identifier made
of several words (``api_secret``, ``getUserName``) also carries up to three word-part ids, so a
name never seen in training still shares parts (``secret``) with names that were. Ids are CRC32
hashes into ``vocab_size`` buckets, or, once trained, ids from a vocabulary of the token strings
seen at least a few times in the training split (``assets/codeprm/vocab.json``; others -> UNK).
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
_WORD = re.compile(r"[a-z_][a-z0-9_]*|[%{}/<>*=?$;]")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
N_PARTS = 3
# The id cache of a Lexer (shared by every scan of a server) keeps token strings of at most
# CACHE_CHARS characters, at most CACHE_ENTRIES of them: a few tens of MB however many distinct
# names the scanned code holds (a megabyte-long identifier is hashed again, not kept).
CACHE_CHARS = 64
CACHE_ENTRIES = 200_000
_STR_PREFIX = re.compile(r"([rRbBuUfF]{1,2})?('''|\"\"\"|'|\")")


class Lexer:
    """Turn source text into (token id, line) arrays; cached hash per distinct string.

    >>> ids, lines = Lexer(16384).lex("x = input()\\n")
    >>> len(ids) == len(lines) and lines.tolist()[0] == 1
    True
    """

    def __init__(self, vocab_size: int = 16384, vocab: dict[str, int] | None = None) -> None:
        self.vocab_size = vocab_size
        self._cache: dict[str, int] = {}
        # With a vocabulary (token strings seen often in training -> id), every other token is
        # UNK and every other word part is dropped; without one, ids are CRC32 hashes.
        self.vocab = vocab
        if vocab is not None and vocab and max(vocab.values()) >= vocab_size:
            raise ValueError("vocabulary ids must be < vocab_size")
        self.counts: dict[str, int] | None = None  # set to {} to count token strings (training)

    def tid(self, s: str) -> int:
        """Id of token string ``s`` (vocabulary id, UNK, or hash; 0 for an unknown word part)."""
        if self.counts is not None:
            self.counts[s] = self.counts.get(s, 0) + 1
        v = self._cache.get(s)
        if v is None:
            if self.vocab is not None:
                v = self.vocab.get(s, 0 if s.startswith("p:") else UNK)
            else:
                v = _RESERVED + zlib.crc32(s.encode("utf-8", "replace")) % (self.vocab_size - _RESERVED)
            if len(s) <= CACHE_CHARS and len(self._cache) < CACHE_ENTRIES:
                self._cache[s] = v
        return v

    def lex(self, code: str) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and their 1-based line numbers; every non-blank line gets >= 1 token."""
        ids, lines, _ = self.lex_parts(code)
        return ids, lines

    def parts_of(self, name: str) -> list[int]:
        """Hashed word-part ids of an identifier with two or more parts (else [])."""
        ps = [m.lower() for m in _PART.findall(name)]
        if len(ps) < 2:
            return []
        return [i for i in (self.tid("p:" + q) for q in ps[:N_PARTS]) if i]

    def lex_parts(self, code: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Like :meth:`lex`, plus (T, 3) word-part ids of each token (0 = none)."""
        return self._lex(code, None)

    def lex_marks(self, code: str, partial: bool | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """Like :meth:`lex_parts`, plus each token's user-input mark (``user_input.py``) and its
        text as the marks read it (a name or operator itself; a string literal's whole text on its
        STR token; ``"\\x01<depth>"`` for an indentation token, ``"\\n"`` for a line end).
        ``partial``: the text is a prefix cut inside its last line (default: it does not end in a
        line end)."""
        from engines.codeprm.user_input import may_hold_input, user_input_marks

        texts: list[str] = []
        ids, lines, parts = self._lex(code, texts)
        if not may_hold_input(code):  # no input can enter: every mark is 0 (the pass is skipped)
            return ids, lines, parts, np.zeros(len(ids), dtype=np.int64), texts
        part = (bool(code) and not code.endswith("\n")) if partial is None else partial
        return ids, lines, parts, user_input_marks(texts, part), texts

    def _lex(self, code: str, texts: list[str] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids: list[int] = []
        parts: dict[int, list[int]] = {}
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
                    if texts is not None:
                        texts.append("\n")
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
                if texts is not None:
                    texts.append(f"\x01{ind // 4}")
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
                k0 = len(ids)
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
                if texts is not None:
                    texts.append(code[pos:stop])
                    texts.extend([""] * (len(ids) - k0))
                pos = stop
                continue
            m = _NAME.match(code, pos)
            if m:
                ps = self.parts_of(m.group(0))
                if ps:
                    parts[len(ids)] = ps
                ids.append(tid(m.group(0)))
                lines.append(line)
                if texts is not None:
                    texts.append(m.group(0))
                pos = m.end()
                continue
            m = _NUM.match(code, pos)
            if m:
                ids.append(tid("NUM"))
                lines.append(line)
                if texts is not None:
                    texts.append("0")
                pos = m.end()
                continue
            m = _OPS.match(code, pos)
            if m:
                ids.append(tid(m.group(0)))
                lines.append(line)
                if texts is not None:
                    texts.append(m.group(0))
                pos = m.end()
                continue
            ids.append(UNK)
            lines.append(line)
            if texts is not None:
                texts.append("?")
            pos += 1
        if not at_line_start:
            ids.append(tid("NL"))
            lines.append(line)
            if texts is not None:
                texts.append("\n")
        part_arr = np.zeros((len(ids), N_PARTS), dtype=np.int64)
        for i, ps in parts.items():
            part_arr[i, : len(ps)] = ps
        return np.asarray(ids, dtype=np.int64), np.asarray(lines, dtype=np.int64), part_arr


def build_vocab(counts: dict[str, int], vocab_size: int, min_count: int = 5) -> dict[str, int]:
    """Token strings seen >= ``min_count`` times, most frequent first, as ids 3..vocab_size-1.

    >>> build_vocab({"x": 9, "y": 2, "z": 5}, 100)
    {'x': 3, 'z': 4}
    """
    keep = sorted((s for s, c in counts.items() if c >= min_count), key=lambda s: (-counts[s], s))
    return {s: _RESERVED + i for i, s in enumerate(keep[: vocab_size - _RESERVED])}


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
