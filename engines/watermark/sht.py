"""Spherical-harmonic transforms of equirectangular images (pixel-centre / Fejer-1 grid).

Two implementations of the same maths:

* ``ducc0`` (``analysis_2d`` / ``synthesis_2d`` with geometry ``"F1"``): fast and exact for
  band-limited maps; used to synthesise the watermark change and as the reference in tests.
* :class:`TorchSHT`: a pure-torch Legendre transform (a DFT along rings as a matmul, then
  Fejer-1 quadrature against tabulated normalised associated Legendre functions). It is
  differentiable, runs on CUDA when present, and exports to ONNX.

Conventions: pixel ``(i, j)`` of an ``H x W`` image sits at colatitude
``theta_i = (i + 1/2) pi / H`` and longitude ``phi_j = (j + 1/2) 2 pi / W`` (``phi0 = pi/W``).
Coefficients follow ducc0/healpy: complex ``a_lm`` for ``m >= 0`` with the Condon-Shortley
phase; ``a_{l,-m} = (-1)^m conj(a_lm)`` for real maps. The "full" layout used by the
bispectrum stores degree ``l`` at ``[l*l : (l+1)*(l+1)]`` ordered ``m = -l..l``.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import torch


def n_alm(lmax: int) -> int:
    """Number of ``m >= 0`` coefficients up to ``lmax`` (ducc0 triangular layout)."""
    return (lmax + 1) * (lmax + 2) // 2


def alm_index(l: int, m: int, lmax: int) -> int:
    """Index of ``a_lm`` (``m >= 0``) in ducc0's default layout (m-major, healpy order)."""
    return m * (2 * lmax + 1 - m) // 2 + l


def phi0(width: int) -> float:
    """Longitude of the first pixel column (pixel centres)."""
    return math.pi / width


def analysis(y: np.ndarray, lmax: int, nthreads: int = 1) -> np.ndarray:
    """``a_lm`` (complex128, ducc0 layout) of a float map ``y`` (H x W) with ducc0 (F1 grid).

    >>> import numpy as np
    >>> a = analysis(np.ones((16, 32)), lmax=4)
    >>> float(round(abs(a[0]) / np.sqrt(4 * np.pi), 6))
    1.0
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    return __import__("ducc0").sht.analysis_2d(map=y[None], spin=0, lmax=lmax, geometry="F1",
                                                phi0=phi0(y.shape[1]), nthreads=nthreads)[0]


def synthesis(alm: np.ndarray, lmax: int, height: int, width: int, nthreads: int = 1) -> np.ndarray:
    """Float map (H x W) from ``a_lm`` (ducc0 layout) on the pixel-centre grid (ducc0 F1).

    >>> import numpy as np
    >>> a = np.zeros(n_alm(4), complex); a[0] = np.sqrt(4 * np.pi)
    >>> round(float(synthesis(a, 4, 8, 16).mean()), 9)
    1.0
    """
    alm = np.ascontiguousarray(alm, dtype=np.complex128)[None]
    return __import__("ducc0").sht.synthesis_2d(alm=alm, spin=0, lmax=lmax, geometry="F1", ntheta=height,
                                                 nphi=width, phi0=phi0(width), nthreads=nthreads)[0]


def full_index_tables(lmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gather tables from the ``m >= 0`` layout to the full ``m = -l..l`` layout.

    Returns ``(src, sign, conj)``: ``full[k] = sign[k] * (conj(a[src[k]]) if conj[k] else a[src[k]])``.
    """
    size = (lmax + 1) ** 2
    src = np.zeros(size, np.int64)
    sign = np.ones(size, np.float64)
    conj = np.zeros(size, bool)
    for l in range(lmax + 1):
        for m in range(-l, l + 1):
            k = l * l + l + m
            src[k] = alm_index(l, abs(m), lmax)
            if m < 0:
                sign[k] = (-1.0) ** m
                conj[k] = True
    return src, sign, conj


def to_full(alm: np.ndarray, lmax: int) -> np.ndarray:
    """``a_lm`` (ducc0 layout, m >= 0) to the full layout (complex, ``(lmax+1)^2``)."""
    src, sign, conj = full_index_tables(lmax)
    a = alm[src]
    a = np.where(conj, np.conj(a), a)
    return a * sign


def from_full(full: np.ndarray, lmax: int) -> np.ndarray:
    """Inverse of :func:`to_full` (keeps the ``m >= 0`` entries)."""
    out = np.zeros(n_alm(lmax), np.complex128)
    for l in range(lmax + 1):
        for m in range(l + 1):
            out[alm_index(l, m, lmax)] = full[l * l + l + m]
    return out


def legendre_table(theta: np.ndarray, lmax: int) -> np.ndarray:
    """Orthonormal associated Legendre functions ``Pbar_lm(cos theta)`` (float64).

    Shape ``(len(theta), n_alm(lmax))`` in ducc0's layout, with the Condon-Shortley phase, so
    that ``Y_lm(theta, phi) = Pbar_lm(cos theta) exp(i m phi)``. Standard three-term recursion
    in ``l`` started from ``Pbar_mm``; stable for the degrees used here (l <= a few hundred).
    """
    x = np.cos(theta)
    s = np.sin(theta)
    out = np.zeros((len(theta), n_alm(lmax)))
    pmm = np.full_like(x, 1.0 / math.sqrt(4 * math.pi))
    for m in range(lmax + 1):
        if m > 0:
            pmm = -pmm * s * math.sqrt((2 * m + 1) / (2 * m))
        out[:, alm_index(m, m, lmax)] = pmm
        if m == lmax:
            break
        p1 = math.sqrt(2 * m + 3) * x * pmm
        out[:, alm_index(m + 1, m, lmax)] = p1
        p2 = pmm
        for l in range(m + 2, lmax + 1):
            a = math.sqrt((4 * l * l - 1) / (l * l - m * m))
            b = math.sqrt(((l - 1) ** 2 - m * m) / (4 * (l - 1) ** 2 - 1))
            p = a * (x * p1 - b * p2)
            out[:, alm_index(l, m, lmax)] = p
            p2, p1 = p1, p
    return out


def fejer1_weights(n: int) -> np.ndarray:
    """Fejer's first-rule quadrature weights for ``theta_i = (i+1/2) pi / n`` (sum to 2).

    Integrates ``g(cos theta) sin theta dtheta`` exactly for polynomials ``g`` of degree < n.
    """
    theta = (np.arange(n) + 0.5) * np.pi / n
    k = np.arange(1, n // 2 + 1)
    w = 1 - 2 * (np.cos(2 * np.outer(theta, k)) / (4 * k * k - 1)).sum(axis=1)
    return w * 2 / n


@functools.lru_cache(maxsize=8)
def _analysis_tables(height: int, width: int, lmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    theta = (np.arange(height) + 0.5) * np.pi / height
    phi = (np.arange(width) + 0.5) * 2 * np.pi / width
    m = np.arange(lmax + 1)
    # ring DFT: F_m(theta_i) = (2 pi / W) sum_j y_ij exp(-i m phi_j)
    cos = np.cos(np.outer(phi, m)) * (2 * np.pi / width)
    sin = -np.sin(np.outer(phi, m)) * (2 * np.pi / width)
    leg = legendre_table(theta, lmax) * fejer1_weights(height)[:, None]
    return cos, sin, leg


class TorchSHT(torch.nn.Module):
    """Forward SHT ``(..., H, W) -> (re, im)`` of ``a_lm`` (ducc0 layout) in pure torch.

    Quadrature: ``a_lm = sum_i w_i Pbar_lm(theta_i) (2 pi / W) sum_j y_ij e^{-i m phi_j}`` with
    Fejer-1 weights ``w_i``. Exact for maps band-limited to ``l + lmax < H``; on real images it
    agrees with ducc0's (upsampled) F1 analysis up to the aliasing of the top of the spectrum.

    >>> import torch
    >>> sht = TorchSHT(16, 32, lmax=4)
    >>> re, im = sht(torch.ones(16, 32, dtype=torch.float64))
    >>> round(float(re[0]) / (4 * 3.141592653589793) ** 0.5, 6)
    1.0
    """

    def __init__(self, height: int, width: int, lmax: int, dtype: torch.dtype = torch.float64):
        super().__init__()
        cos, sin, leg = _analysis_tables(height, width, lmax)
        self.height, self.width, self.lmax = height, width, lmax
        m_of = np.concatenate([[m] * (lmax + 1 - m) for m in range(lmax + 1)])
        self.register_buffer("cos", torch.tensor(cos, dtype=dtype))
        self.register_buffer("sin", torch.tensor(sin, dtype=dtype))
        self.register_buffer("leg", torch.tensor(leg, dtype=dtype))  # (H, n_alm)
        self.register_buffer("m_of", torch.tensor(m_of, dtype=torch.long))

    def __repr__(self) -> str:
        return f"TorchSHT(height={self.height}, width={self.width}, lmax={self.lmax})"

    def forward(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        fr = y @ self.cos  # (..., H, M)
        fi = y @ self.sin
        fr = fr.index_select(-1, self.m_of)  # (..., H, n_alm)
        fi = fi.index_select(-1, self.m_of)
        re = (fr * self.leg).sum(-2)
        im = (fi * self.leg).sum(-2)
        return re, im
