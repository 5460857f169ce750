"""Can this panorama hold a watermark? Quick checks to run before an embed (well under a second).

An embed takes seconds; these checks refuse at once the panoramas it could only fail on, with what
would work instead:

- size: the carriers use degrees up to ``l_max``, which a panorama samples only with at least
  ``2 x l_max`` rows (:func:`min_size`);
- carrier stability: every carrier ``c_k`` (Eq. C of :mod:`engines.watermark.carriers`) is a ratio
  of band energies, so where the band holds almost nothing but the edges of a flat picture (a flat
  square padded with black bands to 2:1), a change of one grey level swings the carriers by more
  than any margin. An 8-bit image cannot hold a mark there: rounding to 8 bits alone undoes it.
  The check adds one grey level of seeded noise and measures how far the key's carriers move.
"""
from __future__ import annotations

import numpy as np

from engines.common.threads import torch_threads
from engines.watermark.carriers import check_size, get_verifier
from engines.watermark.config import WatermarkConfig
from engines.watermark.errors import EmbedError, ImageFormatError
from engines.watermark.image_io import MIN_WIDTH, luminance, validate_image

UNSTABLE = 2.0
"""Refuse when the median carrier move under one grey level of noise exceeds this many margins.
Measured at 64 bits with the key "demo-key" (600 x 300 px unless named): photographs' crops padded
to 2:1 move 0.026-0.046 (the four examples at 1024 x 512: 0.016-0.048), a flat image with a noisy
patch over 0.5 % of it 0.29 (it embeds, at 47.0 dB); a flat grey square padded with black 2.4, a
flat band padded above and below 3.5, the padded square with two grey levels of noise added 1.1,
and each of these three embeds failed with 17 to 70 of the 128 carriers on the wrong side."""

_DITHER_SEED = 0x5EED_D1
_DRAWS = 2


def min_size(config: WatermarkConfig | None = None) -> tuple[int, int]:
    """The smallest panorama (width, height) in px that ``config``'s carriers fit: ``2 x l_max``
    rows, and at least the engine's minimum width.

    >>> min_size(WatermarkConfig(bits=64)), min_size(WatermarkConfig(bits=1024))
    ((384, 192), (512, 256))
    """
    cfg = config or WatermarkConfig()
    h = 2 * int(cfg.l_max)
    w = max(2 * h, MIN_WIDTH)
    return w, w // 2


def carrier_moves(image: np.ndarray, key: str, config: WatermarkConfig | None = None) -> np.ndarray:
    """How far each of the key's carriers moves when one grey level of seeded noise (-1, 0 or +1 per
    pixel) is added to ``image``: the largest move over two draws, one value per carrier."""
    cfg = config or WatermarkConfig()
    image = validate_image(image, cfg.max_width)
    h, w = image.shape[:2]
    ver, _ = get_verifier(key, cfg, h, w)
    base = ver.measure(luminance(image))
    rng = np.random.default_rng(_DITHER_SEED)
    moves = np.zeros_like(base)
    for _ in range(_DRAWS):
        noise = rng.integers(-1, 2, (h, w), dtype=np.int16)[..., None]
        moved = np.clip(image.astype(np.int16) + noise, 0, 255).astype(np.uint8)
        moves = np.maximum(moves, np.abs(ver.measure(luminance(moved)) - base))
    return np.nan_to_num(moves, nan=np.inf)


def check_embeddable(image: np.ndarray, key: str, config: WatermarkConfig | None = None) -> None:
    """Raise at once, before an embed's wait, for a panorama the embed could only fail on: too few rows
    for the carriers (:class:`~engines.watermark.errors.ImageFormatError`, naming the smallest size
    that works) or a nearly flat picture whose carriers one grey level of noise swings past
    ``UNSTABLE`` margins (:class:`~engines.watermark.errors.EmbedError`). Returns None when the
    embed may go ahead (it can still fail on other grounds, and says so then).

    >>> from engines.watermark import load_example
    >>> check_embeddable(load_example("forest"), "k1") is None
    True
    >>> flat = np.zeros((300, 600, 3), np.uint8); flat[:, 150:450] = 90   # a grey square padded with black
    >>> check_embeddable(flat, "k1")
    Traceback (most recent call last):
    ...
    engines.watermark.errors.EmbedError: this image cannot hold a watermark: ...
    """
    cfg = config or WatermarkConfig()
    image = validate_image(image, cfg.max_width)
    h, w = image.shape[:2]
    try:
        check_size(image, cfg)
    except ImageFormatError:
        mw, mh = min_size(cfg)
        raise ImageFormatError(
            f"this {w} x {h} px panorama is too small for {cfg.bits} bits: the watermark needs at least "
            f"{mw} x {mh} px. Use a larger image (resize it up if you must)") from None
    lum = luminance(image)
    if float(lum.max() - lum.min()) < 1.0:
        raise EmbedError("this image cannot hold a watermark: it is flat (one brightness everywhere). "
                         "Use a photograph")
    with torch_threads(cfg.torch_threads):  # as the embed runs: on a shared 2-core machine one thread is faster
        move = float(np.median(carrier_moves(image, key, cfg)))
    if move > UNSTABLE * cfg.margin:
        raise EmbedError(
            "this image cannot hold a watermark: it is nearly flat (like a flat picture padded with black "
            "bands), so one grey level of change, less than rounding to 8 bits, would undo the mark, at any "
            "size. Use a photograph or an image with detail across it")
