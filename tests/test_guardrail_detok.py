"""Incremental detokenisation: property checks over random byte-level token splits."""
from __future__ import annotations

import random

import pytest

from engines.guardrail.detok import REPLACEMENT, IncrementalDecoder, token_pieces

TEXTS = ["plain ascii text", "naïve café, déjà vu", "日本語のテキスト", "emoji 🎉🍻👩‍👩‍👧 mix", "Ω≈ç√∫ ﬁ", "a\ufffdb"]


def _bpe_like(text: str, rng: random.Random) -> tuple[list[int], dict[int, bytes]]:
    """Cut the UTF-8 bytes of ``text`` at random places (what a byte-level BPE may do) -> ids, vocab."""
    raw, ids, vocab, k = text.encode(), [], {}, 0
    while k < len(raw):
        n = rng.randint(1, 4)
        vocab[len(ids)] = raw[k: k + n]
        ids.append(len(ids))
        k += n
    return ids, vocab


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("seed", range(5))
def test_pieces_join_to_the_text_and_never_show_partial_characters(text, seed):
    ids, vocab = _bpe_like(text, random.Random(seed))

    def decode(xs):
        return b"".join(vocab[x] for x in xs).decode("utf-8", errors="replace")

    pieces = token_pieces(decode, ids)
    assert len(pieces) == len(ids)
    assert "".join(pieces) == text
    if REPLACEMENT not in text:
        assert all(REPLACEMENT not in p for p in pieces)


def test_flush_returns_a_trailing_partial_character():
    raw = "ok 🙂".encode()[:-1]  # the reply ends inside the emoji
    dec = IncrementalDecoder(lambda xs: bytes(xs).decode("utf-8", errors="replace"))
    pieces = [dec.push(b) for b in raw]
    assert "".join(pieces) == "ok " and dec.flush() == REPLACEMENT
    assert IncrementalDecoder(lambda xs: "").flush() == ""
