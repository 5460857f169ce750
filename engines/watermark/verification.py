"""Key-only verification: recompute the carriers' ``c_k`` from the received image; bit ``i`` is the
sign of ``u_i = sum_{k in i} s_k c_k``, and the pilots' z-score against the Hoeffding threshold
``t = sqrt(2 ln(1/fpr))`` (5.26 for 1e-6) says whether a watermark is there at all."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from engines.common.threads import torch_threads
from engines.watermark.carriers import (
    Carriers,
    check_size,
    decode_stats,
    get_verifier,
)
from engines.watermark.config import LEGACY_64, TIERS, WatermarkConfig
from engines.watermark.errors import KeyInputError
from engines.watermark.image_io import luminance, validate_image
from engines.watermark.occlusion import Cap, fill_cap, find_caps
from engines.watermark.payload import bits_hex, decode_text


@dataclass
class VerifyResult:
    """Output of :func:`verify`.

    Attributes:
        bits: decoded payload bits. scores: soft score per bit (sign = bit).
        message: the text, when a text payload was embedded and its CRC checks out, else None.
        detected: pilot z-score at or above the threshold. z: pilot z-score.
        p_value: Hoeffding bound on the chance of a z this high without the watermark.
        threshold: the z threshold used. seconds: wall time.
        notes: what the user should know, e.g. that the mark was read at another capacity than the one asked.
        config: the configuration the result was read with (another tier's when ``notes`` says so).
        patches: the discs (tripod covers, logos) the search found, largest first; empty when none.
        patch_read: whether the read that counts is the one with those discs filled from their rims.
    """

    bits: np.ndarray
    scores: np.ndarray
    message: str | None
    detected: bool
    z: float
    p_value: float
    threshold: float
    seconds: float
    notes: list[str] = field(default_factory=list)
    config: WatermarkConfig | None = None
    patches: list[Cap] = field(default_factory=list)
    patch_read: bool = False

    @property
    def bits_hex(self) -> str:
        """The decoded bits as hexadecimal, most significant bit first (what a raw-bit payload reads as).

        >>> VerifyResult(np.array([1, 0, 1, 0, 1, 1, 1, 1]), np.zeros(8), None, True, 6.0, 1e-8, 5.26, 0.0).bits_hex
        'af'
        """
        return bits_hex(self.bits)

    def to_dict(self) -> dict:
        """The result as JSON-ready values: ``detected``, ``message`` (text or None), ``p_value``,
        ``z``, ``threshold``, ``bits`` (the capacity it was read at), ``bits_hex``, ``seconds``, ``notes``,
        ``patch_found``, ``patches`` (each disc's ``latitude_deg``, ``longitude_deg``, ``radius_deg`` and
        ``sphere_percent``: :meth:`Cap.to_dict`) and ``patch_read`` (whether the read with them filled counted).

        >>> VerifyResult(np.array([1, 0, 1, 0, 1, 1, 1, 1]), np.zeros(8), None, True, 6.0, 1e-8, 5.26, 0.0).to_dict()["bits_hex"]
        'af'
        """
        return {"detected": bool(self.detected), "message": self.message, "p_value": float(self.p_value),
                "z": round(float(self.z), 4), "threshold": round(float(self.threshold), 4), "bits": len(self.bits),
                "bits_hex": self.bits_hex, "seconds": round(float(self.seconds), 3), "notes": list(self.notes),
                "patch_found": bool(self.patches), "patches": [c.to_dict() for c in self.patches],
                "patch_read": bool(self.patch_read)}

    def __repr__(self) -> str:
        return (f"VerifyResult(detected={self.detected}, z={self.z:.2f}, p_value={self.p_value:.3g}, "
                f"message={self.message!r}, seconds={self.seconds:.3f})")


def verify(image: np.ndarray, key: str, config: WatermarkConfig | None = None, *,
           other_tiers: bool = True) -> VerifyResult:
    """Key-only verification: decode the payload under ``key`` from ``image`` alone (no original needed).

    With ``config.find_caps``, discs pasted over part of the sphere (a tripod cover or a logo, wherever
    a rotation put it: :func:`engines.watermark.occlusion.find_caps`) are looked for; when there are
    any, the panorama is also read with them filled from their rims, the read with the higher pilot
    z-score counts (each at ``fpr / 2``: the search does not depend on the key, so the union bound
    holds), and the result says where they are (``patches``) and which read counted. Bits whose
    carriers the discs moved most are then the first the text decoder doubts (erasure-aware decoding).

    When nothing reads under ``config`` and ``other_tiers`` is set, the other capacities of
    :data:`TIERS` (and the 64-bit band of :data:`LEGACY_64`) are tried for the same key, so a mark
    embedded at another capacity is reported and read (with a note naming that capacity) instead of
    "no watermark". Those tries share a false-positive budget of ``config.fpr`` (each runs at
    ``fpr / n``), so an unmarked image passes with probability at most ``2 * fpr`` in all.

    >>> from engines.watermark import load_example
    >>> res = verify(load_example("forest"), key="k1")   # never watermarked
    >>> res.detected, res.message
    (False, None)
    """
    t0 = time.perf_counter()
    cfg = config or WatermarkConfig()
    image = validate_image(image, cfg.max_width)
    check_size(image, cfg)
    lum = luminance(image)
    views: list[tuple[list[Cap], np.ndarray]] = [([], lum)]
    if cfg.find_caps:
        caps = find_caps(image)
        if caps:
            filled = lum
            for cap in caps:
                filled = fill_cap(filled, cap)
            views.append((caps, filled))
    res = _verify_at(views, key, cfg, t0)
    if res.detected or not other_tiers:
        return res
    tried = []
    for label, alt, how in fallback_configs(cfg, image.shape[0]):
        tried.append(label)
        found = _verify_at(views, key, alt, t0)
        if found.detected:
            found.notes.append(f"the watermark was embedded at {label}, not at the {cfg.bits} bits asked for: "
                               f"read there ({how})")
            return found
    res.seconds = time.perf_counter() - t0
    if tried:
        res.notes.append(f"no watermark at {cfg.bits} bits under this key, nor at {', '.join(tried)}")
    return res


def fallback_configs(config: WatermarkConfig, height: int) -> list[tuple[str, WatermarkConfig, str]]:
    """The other tiers' configurations :func:`verify` tries after ``config`` read nothing: (label,
    config, how to read it directly) each, with ``config``'s runtime settings and ``config.fpr`` split
    evenly among them. Those whose carriers equal ``config``'s, or whose band does not fit ``height``
    rows, are left out."""
    runtime = {"device": config.device, "torch_threads": config.torch_threads, "max_width": config.max_width}
    cands = [(f"{b} bits", WatermarkConfig(bits=b, **runtime), f"choose {b} bits to verify it directly")
             for b in TIERS]
    lo, hi = LEGACY_64["l_min"], LEGACY_64["l_max"]
    cands.append((f"64 bits in the older {lo}..{hi} band", WatermarkConfig(**LEGACY_64, **runtime),
                  f"WatermarkConfig(bits=64, l_min={lo}, l_max={hi}) reads it directly; embed again for the current band"))
    picked = [c for c in cands if c[1].carrier_key() != config.carrier_key() and height >= 2 * c[1].l_max]
    return [(label, replace(c, fpr=config.fpr / len(picked)), how) for label, c, how in picked]


def _verify_at(views: list[tuple[list[Cap], np.ndarray]], key: str, cfg: WatermarkConfig,
               t0: float) -> VerifyResult:
    """:func:`verify` under one configuration: each view is ``(discs filled, luminance)``; with more
    than one, each is read at ``fpr / len(views)`` and the one with the higher z-score counts."""
    h, w = views[0][1].shape
    ver, car = get_verifier(key, cfg, h, w)
    if len(views) > 1:
        cfg = replace(cfg, fpr=cfg.fpr / len(views))
    with torch_threads(cfg.torch_threads):
        stats = [ver.measure(lum) for _, lum in views]
    zs = [decode_stats(st, car, cfg)["z"] for st in stats]
    best = int(np.argmax(zs))
    caps = views[-1][0]
    if best == 0:
        res = verify_result(stats[0], car, cfg, t0)
    else:
        moved = np.abs(stats[best] - stats[0])  # how far the discs' content moved each carrier
        doubt = np.zeros(cfg.bits)
        np.add.at(doubt, car.owner[car.owner >= 0], moved[car.owner >= 0])
        res = verify_result(stats[best], car, cfg, t0, doubt=doubt)
    res.patches, res.patch_read = list(caps), best > 0
    if caps:
        what = "; ".join(c.describe() for c in caps)
        res.notes.append(f"{what} (a tripod cover or logo) hid part of the panorama: "
                         + ("it was filled from its rim before reading" if best else
                            "the read without filling it was the stronger one and counts"))
    return res


def verify_result(stats: np.ndarray, carriers: Carriers, config: WatermarkConfig, t0: float,
                  doubt: np.ndarray | None = None) -> VerifyResult:
    """Carrier statistics (from torch or onnxruntime) -> :class:`VerifyResult`; ``doubt`` (per bit,
    >= 0) makes the text decoder try flipping the most doubtful bits first."""
    dec = decode_stats(stats, carriers, config)
    message = decode_text(dec["scores"], doubt=doubt) if dec["detected"] else None
    return VerifyResult(bits=dec["bits"], scores=dec["scores"], message=message, detected=dec["detected"],
                        z=dec["z"], p_value=dec["p_value"], threshold=config.threshold,
                        seconds=time.perf_counter() - t0, config=config)


def bit_accuracy(decoded: np.ndarray, embedded: np.ndarray) -> float:
    """Fraction of equal bits.

    >>> bit_accuracy(np.array([1, 0, 1, 1]), np.array([1, 0, 0, 1]))
    0.75
    """
    decoded, embedded = np.asarray(decoded), np.asarray(embedded)
    if decoded.shape != embedded.shape:
        raise KeyInputError(f"bit arrays differ in length: {decoded.shape} vs {embedded.shape}")
    return float(np.mean(decoded == embedded))

