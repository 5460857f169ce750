"""Messages to bits and back: UTF-8 text with a CRC-16 checksum and Chase soft decoding.

Text layout in a ``bits``-bit payload: ``n = bits // 8 - 2`` bytes of UTF-8 (zero-padded),
then a CRC-16/CCITT over them (with a text-mode seed, so an arbitrary bit payload rarely
passes as text). Decoding takes the soft scores: if the hard decision fails the CRC it
flips up to two of the eight least reliable bits (Chase-II, 37 candidates) and accepts the
first candidate that checks out and is valid UTF-8; otherwise the message is ``None``. So a
decoded text is exact or absent, never garbage (up to the 2^-16 CRC miss rate per candidate).
"""
from __future__ import annotations

import itertools

import numpy as np

from engines.watermark.errors import MessageError

CRC_SEED = 0x1D0F  # not the usual 0xFFFF: marks the payload as text


def crc16(data: bytes, seed: int = CRC_SEED) -> int:
    """CRC-16/CCITT (poly 0x1021) of ``data``.

    >>> hex(crc16(b"123456789", seed=0xFFFF))
    '0x29b1'
    """
    crc = seed
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def text_capacity(bits: int) -> int:
    """Bytes of UTF-8 text a ``bits``-bit payload carries (two bytes go to the CRC)."""
    return max(0, bits // 8 - 2)


def _what_fits(n_bytes: int, bits: int) -> str:
    """What to do with a text of ``n_bytes`` too long for ``bits``: the smallest offered capacity
    (``TIERS``) that carries it, or, where none does, shorten it.

    >>> _what_fits(20, 64), _what_fits(40, 256)
    ('Shorten it, or choose 256 bits (up to 30 bytes)', 'Shorten it to at most 30 bytes: 256 bits is the largest capacity offered')
    """
    from engines.watermark.config import TIERS

    fits = [b for b in TIERS if b > bits and text_capacity(b) >= n_bytes]
    if fits:
        return f"Shorten it, or choose {fits[0]} bits (up to {text_capacity(fits[0])} bytes)"
    if bits >= max(TIERS):
        largest = f": {bits} bits is the largest capacity offered" if bits == max(TIERS) else ""
        return f"Shorten it to at most {text_capacity(bits)} bytes{largest}"
    return f"Shorten it to at most {text_capacity(max(TIERS))} bytes and choose {max(TIERS)} bits"


def encode_text(text: str, bits: int) -> np.ndarray:
    """UTF-8 text -> payload bits (uint8 array of length ``bits``).

    >>> decode_text(encode_text("hi", 64).astype(float) * 2 - 1)
    'hi'
    """
    if not isinstance(text, str):
        raise MessageError("the message must be text or a bit array")
    if "\x00" in text:
        raise MessageError("the message may not contain NUL characters")
    data = text.encode("utf-8")
    cap = text_capacity(bits)
    if len(data) > cap:
        raise MessageError(f"the message is {len(data)} UTF-8 bytes; {bits}-bit mode carries at most {cap} "
                           f"bytes of text. {_what_fits(len(data), bits)}")
    body = data + bytes(cap - len(data))
    crc = crc16(body)
    raw = body + bytes([crc >> 8, crc & 0xFF])
    out = np.unpackbits(np.frombuffer(raw, np.uint8))
    return np.concatenate([out, np.zeros(bits - len(out), np.uint8)])


def _check(hard: np.ndarray, cap: int) -> str | None:
    raw = np.packbits(hard[: 8 * (cap + 2)]).tobytes()
    body, crc = raw[:cap], raw[cap:cap + 2]
    if crc16(body) != (crc[0] << 8 | crc[1]):
        return None
    text = body.rstrip(b"\x00")
    if b"\x00" in text:
        return None
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return None


def decode_text(scores: np.ndarray, flips: int = 2, candidates: int = 8,
                doubt: np.ndarray | None = None) -> str | None:
    """Soft scores (positive = bit 1) -> text, or ``None`` when no candidate checks out.

    The bits tried first are the least reliable: smallest ``|score|``, or, with ``doubt`` (per bit,
    >= 0: how much an erasure such as an occluded cap may have moved it), smallest
    ``|score| / (1 + doubt / median(doubt))``.

    >>> s = encode_text("hi", 64).astype(float) * 2 - 1
    >>> s[3] = -1.5 * s[3]                       # a confident wrong bit: not among the weakest ...
    >>> decode_text(s) is None
    True
    >>> doubt = np.zeros(64); doubt[3] = 50.0; doubt[10] = 1.0   # ... unless the erasure names it
    >>> decode_text(s, doubt=doubt)
    'hi'
    """
    scores = np.asarray(scores, dtype=np.float64)
    cap = text_capacity(len(scores))
    if cap == 0:
        return None
    hard = (scores > 0).astype(np.uint8)
    n = 8 * (cap + 2)
    reliability = np.abs(scores[:n])
    if doubt is not None:
        d = np.asarray(doubt, dtype=np.float64)[:n]
        reliability = reliability / (1.0 + d / (np.median(d[d > 0]) if (d > 0).any() else 1.0))
    weakest = np.argsort(reliability, kind="stable")[:candidates]
    for n in range(flips + 1):
        for combo in itertools.combinations(weakest, n):
            trial = hard.copy()
            trial[list(combo)] ^= 1
            text = _check(trial, cap)
            if text is not None:
                return text
    return None


def bits_hex(bits: np.ndarray) -> str:
    """0/1 bits as hexadecimal, most significant bit first (a last partial byte is zero-padded).

    >>> bits_hex(np.array([1, 0, 1, 0, 1, 1, 1, 1]))
    'af'
    """
    return np.packbits(np.asarray(bits, dtype=np.uint8)).tobytes().hex()


def as_bits(message: str | np.ndarray | list, bits: int) -> tuple[np.ndarray, bool]:
    """Normalise a message to ``(payload bits, is_text)``."""
    if isinstance(message, str):
        return encode_text(message, bits), True
    arr = np.asarray(message)
    if arr.ndim != 1 or arr.size != bits or not np.isin(arr, (0, 1)).all():
        raise MessageError(f"a bit message must be a 1-D array of exactly {bits} zeros and ones "
                           f"(got shape {arr.shape})")
    return arr.astype(np.uint8), False
