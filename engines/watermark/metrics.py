"""Image quality against the original: PSNR, WS-PSNR (area-weighted on the sphere) and SSIM."""
from __future__ import annotations

import math

import numpy as np


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB over all channels (8-bit peak 255).

    >>> psnr(np.zeros((2, 2, 3), np.uint8), np.ones((2, 2, 3), np.uint8)) > 48
    True
    """
    if a.dtype == np.uint8 and b.dtype == np.uint8:  # exact integer sum, a fraction of the float64 cost at 4K
        d = a.astype(np.int16) - b.astype(np.int16)
        mse = float(np.square(d, dtype=np.int32).sum(dtype=np.int64)) / d.size
    else:
        mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def ws_psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Weighted-to-spherically-uniform PSNR (Sun, Lu and Yu 2017) of two equirectangular images, dB.

    Each pixel row counts by the area it covers on the sphere, ``w_i = cos(latitude_i)`` with
    ``latitude_i = (1/2 - (i + 1/2)/H) pi``, so the stretched polar rows weigh less than in plain
    PSNR: ``WS-PSNR = 10 log10(255^2 / (sum_i w_i sum_j e_ij^2 / (W sum_i w_i)))`` over all channels.

    >>> x = np.zeros((4, 8, 3), np.uint8); y = x.copy(); y[0] = 10   # error only in a polar row
    >>> round(psnr(x, y), 2), round(ws_psnr(x, y), 2)
    (34.15, 36.47)
    """
    h = a.shape[0]
    w = np.cos((0.5 - (np.arange(h) + 0.5) / h) * np.pi)
    err = (a.astype(np.float64) - b.astype(np.float64)) ** 2
    per_row = err.reshape(h, -1).mean(axis=1)
    wmse = float(np.sum(w * per_row) / np.sum(w))
    return float("inf") if wmse == 0 else 10 * math.log10(255.0 ** 2 / wmse)


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM (Wang et al. 2004; Gaussian window sigma 1.5, K1=0.01, K2=0.03) over channels.

    >>> x = np.random.default_rng(0).integers(0, 255, (32, 32, 3)).astype(np.uint8)
    >>> round(ssim(x, x), 6)
    1.0
    """
    from scipy.ndimage import gaussian_filter

    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    vals = []
    # float32 maps (float64 sums): half the memory traffic of float64 at 4K, same value to ~1e-6
    for ch in range(a.shape[2] if a.ndim == 3 else 1):
        x = (a[..., ch] if a.ndim == 3 else a).astype(np.float32)
        y = (b[..., ch] if b.ndim == 3 else b).astype(np.float32)
        f = lambda z: gaussian_filter(z, 1.5, truncate=3.5)
        mx, my = f(x), f(y)
        sxx, syy, sxy = f(x * x) - mx * mx, f(y * y) - my * my, f(x * y) - mx * my
        m = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
        vals.append(m[3:-3, 3:-3].mean(dtype=np.float64))
    return float(np.mean(vals))

