"""Incremental detokenisation for streaming: the text each new token adds, whole characters only.

A byte-level BPE tokenizer (SmolLM2's) can split one character (an emoji, most CJK, accented
letters in some contexts) over several tokens. Decoding each growing prefix and taking the new
tail, as a naive stream does, shows U+FFFD for the partial bytes and then loses the character
when it completes. Here a token whose prefix decodes to a trailing partial character adds ""
and the character arrives whole with the token that completes it; so the pieces of a reply
always join to its decoded text.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

REPLACEMENT = "\ufffd"


class IncrementalDecoder:
    """Feed token ids one at a time; get back the text each adds (possibly "").

    ``decode`` maps a list of ids to text (e.g. ``tokenizer.decode``). :meth:`flush` returns what
    is still held (a trailing partial character, shown as U+FFFD), for the last token of a reply.

    >>> raw = "déjà vu 🙂".encode()
    >>> dec = IncrementalDecoder(lambda ids: bytes(ids).decode("utf-8", errors="replace"))
    >>> pieces = [dec.push(b) for b in raw]
    >>> "".join(pieces) == "déjà vu 🙂", pieces[-4:]
    (True, ['', '', '', '🙂'])
    """

    def __init__(self, decode: Callable[[Sequence[int]], str]) -> None:
        self._decode = decode
        self.ids: list[int] = []
        self._text = ""

    def push(self, token_id: int) -> str:
        """Add one token; return the whole characters it completes."""
        self.ids.append(int(token_id))
        full = self._decode(self.ids)
        if full.endswith(REPLACEMENT):
            return ""
        return self._take(full)

    def flush(self) -> str:
        """Return whatever is still held (the end of a reply), partial characters included."""
        return self._take(self._decode(self.ids)) if self.ids else ""

    def _take(self, full: str) -> str:
        new = full[len(self._text):]  # earlier text is never retracted: it has been shown
        self._text = full
        return new


def token_pieces(decode: Callable[[Sequence[int]], str], ids: Sequence[int]) -> list[str]:
    """The text each token of ``ids`` adds, whole characters only; the pieces join to ``decode(ids)``.

    >>> token_pieces(lambda ids: bytes(ids).decode("utf-8", errors="replace"), list("a€".encode()))
    ['a', '', '', '€']
    """
    dec = IncrementalDecoder(decode)
    out = [dec.push(t) for t in ids]
    if out:
        out[-1] += dec.flush()
    return out
