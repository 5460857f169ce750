"""Property checks in the style of e3nn's ``assert_equivariant``."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engines.watermark.rotation import random_rotation, rotate_equirect_matrix


def assert_invariant(fn: Callable[[np.ndarray], np.ndarray], image: np.ndarray, n_rotations: int = 4,
                     atol: float = 0.1, rtol: float = 0.0, seed: int = 0,
                     interpolation: str = "bicubic") -> np.ndarray:
    """Check ``fn(rotate(image, R)) == fn(image)`` over Haar-random rotations ``R``.

    The image is rotated by resampling (so the tolerance must cover interpolation error and
    8-bit requantisation). Raises ``AssertionError`` with the worst deviation; returns the
    per-rotation maximum absolute deviations.

    >>> img = np.full((64, 128, 3), 7, np.uint8)
    >>> float(assert_invariant(lambda x: np.array([x.mean()]), img, n_rotations=2, atol=1e-9).max())
    0.0
    """
    rng = np.random.default_rng(seed)
    ref = np.asarray(fn(image), dtype=np.float64)
    devs = []
    for _ in range(n_rotations):
        rot = random_rotation(rng)
        out = np.asarray(fn(rotate_equirect_matrix(image, rot, interpolation)), dtype=np.float64)
        err = np.abs(out - ref)
        devs.append(float(err.max()))
        bad = err > atol + rtol * np.abs(ref)
        if bad.any():
            raise AssertionError(f"not invariant under rotation\n{np.round(rot, 4)}:\nmax deviation "
                                 f"{err.max():.3g} > atol {atol} + rtol {rtol} x |ref| at {int(bad.sum())} entries")
    return np.asarray(devs)


def assert_equivariant(fn: Callable[[np.ndarray], np.ndarray], image: np.ndarray, n_rotations: int = 4,
                       atol_deg: float = 1.0, seed: int = 0) -> np.ndarray:
    """Check ``fn(rotate(image, R)) == R @ fn(image)`` over Haar-random rotations ``R``, for an ``fn``
    that returns a direction on the sphere (a unit 3-vector, e.g. where a disc is), within
    ``atol_deg`` degrees. Raises ``AssertionError`` with the worst angle; returns the angles.

    >>> img = np.zeros((64, 128, 3), np.uint8); img[:4] = 255                  # a bright cap at the zenith
    >>> def brightest(x):
    ...     from engines.watermark.occlusion import _directions
    ...     w = x.mean(-1) ** 4 * np.sin((np.arange(64) + 0.5) * np.pi / 64)[:, None]
    ...     v = (w[..., None] * _directions(64, 128)).sum((0, 1)); return v / np.linalg.norm(v)
    >>> bool(assert_equivariant(brightest, img, n_rotations=2, atol_deg=5).max() < 5)
    True
    """
    rng = np.random.default_rng(seed)
    ref = np.asarray(fn(image), dtype=np.float64)
    angles = []
    for _ in range(n_rotations):
        rot = random_rotation(rng)
        out = np.asarray(fn(rotate_equirect_matrix(image, rot)), dtype=np.float64)
        angle = float(np.degrees(np.arccos(np.clip(out @ (rot @ ref), -1.0, 1.0))))
        angles.append(angle)
        if angle > atol_deg:
            raise AssertionError(f"not equivariant under rotation\n{np.round(rot, 4)}:\n{angle:.2f} deg off "
                                 f"(atol {atol_deg} deg)")
    return np.asarray(angles)
