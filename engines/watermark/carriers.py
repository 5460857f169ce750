"""The key's carriers and the verifier that measures them.

A secret key selects ``K`` degree triples ``(l1, l2, l)`` in the band (``l1 + l2 + l`` even: real,
mirror-safe) and a random sign ``s_k`` for each. Each carrier's statistic is the normalised bispectrum

    c_k = g_k * B(l1, l2, l) / (|f_l1| |f_l2| |f_l|),   g_k = ((2l1+1)(2l2+1)(2l+1))^(1/3)   (Eq. C)

(``B`` from Eq. B/G in :mod:`engines.watermark.bispectrum`; ``g_k`` makes the spread of ``c_k`` on
unmarked content about one for every triple). ``c_k`` is exactly invariant to any rotation.
``P`` pilot carriers carry the key's own signs; the detection score
``z = sum_p s_p c_p / sqrt(sum_p c_p^2)`` is, for an unmarked image or a wrong key, a Rademacher
sum, so ``P(z >= t) <= exp(-t^2/2)`` (Hoeffding) whatever the image.
"""
from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass

import numpy as np
import torch

from engines.common.device import get_device
from engines.watermark.bispectrum import TripleProduct, admissible_triples
from engines.watermark.config import WatermarkConfig
from engines.watermark.errors import ImageFormatError, KeyInputError
from engines.watermark.sht import TorchSHT


@dataclass(frozen=True)
class Carriers:
    """The key's carriers: triples, signs, owner bit (-1 = pilot) and Eq. C gains."""

    triples: np.ndarray
    signs: np.ndarray
    owner: np.ndarray
    gain: np.ndarray


def key_seed(key: str, config: WatermarkConfig) -> int:
    """The 64-bit seed a key and a carrier layout give (SHA-256); an empty key is refused."""
    if not isinstance(key, str) or not key.strip():
        raise KeyInputError("the secret key is empty: type a key (any text; keep it secret)")
    tag = "\x00".join([key, *map(str, config.carrier_key())])
    return int.from_bytes(hashlib.sha256(tag.encode("utf-8")).digest()[:8], "little")


@functools.lru_cache(maxsize=64)
def _carriers_cached(seed: int, bits: int, cpb: int, pilots: int, l_min: int, l_max: int) -> Carriers:
    rng = np.random.default_rng(seed)
    adm = admissible_triples(l_min, l_max)
    k = bits * cpb + pilots
    triples = adm[rng.choice(len(adm), size=k, replace=False)]
    signs = rng.choice([-1.0, 1.0], size=k)
    owner = np.concatenate([np.full(pilots, -1), np.repeat(np.arange(bits), cpb)])
    owner = owner[rng.permutation(k)]
    gain = np.cbrt(np.prod(2 * triples + 1, axis=1).astype(np.float64))
    return Carriers(triples, signs, owner, gain)


def carriers_for(key: str, config: WatermarkConfig) -> Carriers:
    """The carriers a key selects under ``config`` (deterministic).

    >>> c = carriers_for("k1", WatermarkConfig(bits=64))
    >>> c.triples.shape, int((c.owner < 0).sum())
    ((128, 3), 64)
    """
    return _carriers_cached(key_seed(key, config), *config.carrier_key())


class Verifier(torch.nn.Module):
    """Luminance map ``(H, W)`` -> carrier statistics ``c_k`` (Eq. C), all in torch."""

    def __init__(self, height: int, width: int, carriers: Carriers, l_max: int,
                 dtype: torch.dtype = torch.float32):
        super().__init__()
        self.sht = TorchSHT(height, width, l_max, dtype=dtype)
        self.tp = TripleProduct(carriers.triples, l_max, dtype=dtype)
        self.register_buffer("gain", torch.tensor(carriers.gain, dtype=dtype))

    def stats(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        return self.gain * self.tp(re, im)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        re, im = self.sht(y)
        return self.stats(re, im)

    def measure(self, luminance: np.ndarray) -> np.ndarray:
        """``c_k`` of a luminance map (numpy in, numpy out, no autograd)."""
        with torch.no_grad():
            y = torch.tensor(luminance, device=self.gain.device, dtype=self.gain.dtype)
            return self(y).cpu().numpy()


@functools.lru_cache(maxsize=4)  # one is up to 25 MB (256 bits, 2048 x 1024), rebuilt in 0.3 s
def _verifier(height: int, width: int, seed: int, carrier_key: tuple, device: str) -> Verifier:
    car = _carriers_cached(seed, *carrier_key)
    return Verifier(height, width, car, carrier_key[-1]).to(device)


def get_verifier(key: str, config: WatermarkConfig, height: int, width: int) -> tuple[Verifier, Carriers]:
    """The (cached) verifier of ``key`` under ``config`` for ``height x width`` panoramas, and its carriers."""
    seed = key_seed(key, config)
    v = _verifier(height, width, seed, config.carrier_key(), str(get_device(config.device)))
    return v, carriers_for(key, config)


def check_size(image: np.ndarray, config: WatermarkConfig) -> None:
    """Refuse a panorama with fewer rows than the carrier band needs (``2 x l_max``)."""
    h = image.shape[0]
    if h < 2 * config.l_max:
        raise ImageFormatError(
            f"the image has {h} rows; carriers up to degree {config.l_max} need at least {2 * config.l_max} "
            "rows. Use a larger image or lower l_max")


def decode_stats(stats: np.ndarray, carriers: Carriers, config: WatermarkConfig) -> dict:
    """Carrier statistics -> bit scores, bits, pilot z-score and its p-value bound."""
    s = carriers.signs * np.asarray(stats, dtype=np.float64)
    owner = carriers.owner
    scores = np.zeros(config.bits)
    np.add.at(scores, owner[owner >= 0], s[owner >= 0])
    pil = s[owner < 0]
    denom = math.sqrt(float(np.sum(pil ** 2))) or 1.0
    z = float(np.sum(pil) / denom)
    p = 1.0 if z <= 0 else min(1.0, math.exp(-z * z / 2))
    return {"scores": scores, "bits": (scores > 0).astype(np.uint8), "z": z, "p_value": p,
            "detected": z >= config.threshold}
