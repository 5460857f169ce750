"""Rotation-invariant bispectrum of spherical-harmonic coefficients.

The bispectrum of a function on the sphere with coefficients ``f_lm`` is

    B(l1, l2, l) = sum_{m1, m2} C^{l m}_{l1 m1 l2 m2} f_{l1 m1} f_{l2 m2} conj(f_{l m}),   m = m1 + m2   (Eq. B)

with Clebsch-Gordan coefficients ``C``. Under a rotation each degree block transforms by its
Wigner-D matrix and the CG coefficients intertwine them, so ``B`` is exactly SO(3)-invariant.
For a real function and ``l1 + l2 + l`` even, ``B`` is real and also invariant under mirror
reflections (parity multiplies degree ``l`` by ``(-1)^l``).

Two evaluations of Eq. B live here:

* :func:`bispectrum_cg`: the literal sum with CG coefficients from Wigner 3j symbols
  (``ducc0.misc.wigner3j_int``, Schulten-Gordon recursion). Slow; the reference.
* :class:`TripleProduct`: Gaunt's theorem turns Eq. B into a triple-product integral of the
  per-degree band maps ``f_l(x) = sum_m f_lm Y_lm(x)``:

      B(l1, l2, l) = (-1)^(l1-l2) sqrt(4 pi) / (sqrt((2 l1+1)(2 l2+1)) (l1 l2 l; 0 0 0))
                     * integral f_l1 f_l2 f_l dOmega                                             (Eq. G)

  evaluated exactly with a Gauss-Legendre x equispaced grid of degree ``3 lmax``. This is
  the fast, differentiable, ONNX-exportable path used by ``embed`` and ``verify``.

The watermark uses the normalised (cosine-like) scalar
``b = B / (|f_l1| |f_l2| |f_l|)`` with ``|f_l|^2 = sum_m |f_lm|^2``; ``|b| <= 1``.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import torch

from engines.watermark.sht import alm_index, legendre_table


def wigner3j_000(l1: int, l2: int, l3: int) -> float:
    """Closed form of ``(l1 l2 l3; 0 0 0)`` (zero when ``l1+l2+l3`` is odd or not a triangle).

    >>> round(wigner3j_000(1, 1, 0), 12) == round(-1 / math.sqrt(3), 12)
    True
    """
    J = l1 + l2 + l3
    if J % 2 or l3 > l1 + l2 or l3 < abs(l1 - l2):
        return 0.0
    g = J // 2
    lf = math.lgamma
    logv = 0.5 * (lf(J - 2 * l1 + 1) + lf(J - 2 * l2 + 1) + lf(J - 2 * l3 + 1) - lf(J + 2)) \
        + lf(g + 1) - lf(g - l1 + 1) - lf(g - l2 + 1) - lf(g - l3 + 1)
    return (-1) ** g * math.exp(logv)


def wigner3j(l1: int, l2: int, l3: int, m1: int, m2: int, m3: int) -> float:
    """One Wigner 3j symbol ``(l1 l2 l3; m1 m2 m3)`` via ``ducc0.misc.wigner3j_int``.

    >>> round(wigner3j(1, 1, 0, 0, 0, 0), 12) == round(-1 / math.sqrt(3), 12)
    True
    """
    from ducc0.misc import wigner3j_int

    if m1 + m2 + m3 != 0 or abs(m1) > l1 or abs(m2) > l2 or abs(m3) > l3:
        return 0.0
    lo, vals = wigner3j_int(l2, l3, m2, m3)
    k = l1 - int(lo)
    return float(vals[k]) if 0 <= k < len(vals) else 0.0


def clebsch_gordan(l1: int, m1: int, l2: int, m2: int, l: int, m: int) -> float:
    """``C^{l m}_{l1 m1 l2 m2} = (-1)^(l1-l2+m) sqrt(2l+1) (l1 l2 l; m1 m2 -m)``.

    >>> round(clebsch_gordan(1, 1, 1, -1, 0, 0), 12) == round(1 / math.sqrt(3), 12)
    True
    """
    sign = -1.0 if (l1 - l2 + m) % 2 else 1.0
    return sign * math.sqrt(2 * l + 1) * wigner3j(l1, l2, l, m1, m2, -m)


def bispectrum_cg(full: np.ndarray, l1: int, l2: int, l: int) -> complex:
    """Eq. B by the literal CG sum (reference; ``O(l1 l2)`` 3j calls). ``full`` in full layout.

    >>> import numpy as np
    >>> f = np.random.default_rng(0).normal(size=16) + 0j
    >>> bool(abs(bispectrum_cg(f, 1, 1, 2)) > 0)
    True
    """
    from ducc0.misc import wigner3j_int

    l1, l2, l = int(l1), int(l2), int(l)
    total = 0j
    for m2 in range(-l2, l2 + 1):
        for m in range(-l, l + 1):
            m1 = m - m2
            if abs(m1) > l1:
                continue
            lo, vals = wigner3j_int(l2, l, m2, -m)  # (x l2 l; m1 m2 -m) for x = lo..
            k = l1 - int(lo)
            if not 0 <= k < len(vals):
                continue
            cg = (-1.0 if (l1 - l2 + m) % 2 else 1.0) * math.sqrt(2 * l + 1) * vals[k]
            total += cg * full[l1 * l1 + l1 + m1] * full[l2 * l2 + l2 + m2] * np.conj(full[l * l + l + m])
    return total


def gaunt_factor(l1: int, l2: int, l: int) -> float:
    """``kappa`` with ``B(l1,l2,l) = kappa * integral f_l1 f_l2 f_l`` (Eq. G); needs an even sum."""
    w = wigner3j_000(l1, l2, l)
    if w == 0.0:
        raise ValueError(f"triple ({l1},{l2},{l}) has (l1 l2 l;000)=0: use l1+l2+l even and a triangle")
    sign = -1.0 if (l1 - l2) % 2 else 1.0
    return sign * math.sqrt(4 * math.pi) / (math.sqrt((2 * l1 + 1) * (2 * l2 + 1)) * w)


def admissible_triples(lmin: int, lmax: int) -> np.ndarray:
    """All sorted triples ``lmin <= l1 <= l2 <= l3 <= lmax`` with an even sum and ``l3 <= l1 + l2``."""
    out = [(a, b, c) for a in range(lmin, lmax + 1) for b in range(a, lmax + 1)
           for c in range(b, min(lmax, a + b) + 1) if (a + b + c) % 2 == 0]
    return np.asarray(out, dtype=np.int64)


@functools.lru_cache(maxsize=8)
def _grid_tables(lmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Legendre x equispaced grid exact for products of three degree-``lmax`` maps."""
    n_theta = (3 * lmax) // 2 + 1
    n_phi = 3 * lmax + 1
    x, w = np.polynomial.legendre.leggauss(n_theta)
    theta = np.arccos(x)
    leg = legendre_table(theta, lmax)  # (n_theta, n_alm)
    phi = np.arange(n_phi) * 2 * np.pi / n_phi
    m = np.arange(lmax + 1)
    fac = np.where(m == 0, 1.0, 2.0)
    cos = np.cos(np.outer(m, phi)) * fac[:, None]   # Re sum_m over +-m: f = sum a P (2 Re e^{im phi})
    sin = -np.sin(np.outer(m, phi)) * fac[:, None]
    weights = np.repeat(w[:, None] * (2 * np.pi / n_phi), n_phi, axis=1)
    return leg, cos, sin, weights


class TripleProduct(torch.nn.Module):
    """Normalised bispectrum scalars ``b_k`` of given triples from ``a_lm`` (Eq. G).

    Input: real and imaginary parts of ``a_lm`` in ducc0's layout up to ``lmax`` (or more; the
    extra entries are ignored), shape ``(..., n_alm)``. Output: ``b`` of shape ``(..., K)``.

    >>> import numpy as np, torch
    >>> tp = TripleProduct(np.array([[2, 2, 2]]), lmax=2)
    >>> a = torch.randn(2, 6, dtype=torch.float64)
    >>> tp(a[0], a[1]).shape
    torch.Size([1])
    """

    def __init__(self, triples: np.ndarray, lmax: int, dtype: torch.dtype = torch.float64):
        super().__init__()
        triples = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        leg, cos, sin, weights = _grid_tables(lmax)
        degrees = np.unique(triples)
        self.lmax = lmax
        self.triples = triples
        pos = {int(l): i for i, l in enumerate(degrees)}
        # per used degree: gather its m >= 0 coefficients from ducc0 layout (padded to lmax+1)
        gidx = np.zeros((len(degrees), lmax + 1), np.int64)
        gmask = np.zeros((len(degrees), lmax + 1))
        for i, l in enumerate(degrees):
            for m in range(l + 1):
                gidx[i, m] = alm_index(int(l), m, lmax)
                gmask[i, m] = 1.0
        # Legendre values per used degree: (D, n_theta, lmax+1)
        legd = np.zeros((len(degrees), leg.shape[0], lmax + 1))
        for i, l in enumerate(degrees):
            for m in range(l + 1):
                legd[i, :, m] = leg[:, alm_index(int(l), m, lmax)]
        kappa = np.array([gaunt_factor(*map(int, t)) for t in triples])
        tix = np.array([[pos[int(l)] for l in t] for t in triples], dtype=np.int64)
        # |f_l|^2 = |a_l0|^2 + 2 sum_{m>0} |a_lm|^2
        nw = np.where(np.arange(lmax + 1) == 0, 1.0, 2.0)
        for name, arr in [("legd", legd), ("cos", cos), ("sin", sin), ("weights", weights),
                          ("gmask", gmask), ("kappa", kappa), ("normw", nw)]:
            self.register_buffer(name, torch.tensor(arr, dtype=dtype))
        self.register_buffer("gidx", torch.tensor(gidx.reshape(-1)))
        self.register_buffer("tix", torch.tensor(tix))
        self.n_degrees = len(degrees)

    def __repr__(self) -> str:
        return f"TripleProduct(triples={len(self.triples)}, degrees={self.n_degrees}, lmax={self.lmax})"

    def degree_maps(self, re: torch.Tensor, im: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Band maps ``f_l`` on the exact grid ``(..., D, n_theta, n_phi)`` and ``|f_l|`` ``(..., D)``."""
        shape = re.shape[:-1]
        ar = re.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        ai = im.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        gr = ar.unsqueeze(-2) * self.legd  # (..., D, n_theta, M)
        gi = ai.unsqueeze(-2) * self.legd
        maps = gr @ self.cos + gi @ self.sin  # (..., D, n_theta, n_phi)
        norms = torch.sqrt(((ar * ar + ai * ai) * self.normw).sum(-1))
        return maps, norms

    def degree_maps_fft(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        """The band maps of :meth:`degree_maps` by an inverse real FFT along each ring instead of
        the dense ``cos``/``sin`` products (same numbers, several times faster at ``lmax`` ~ 100;
        used by the embedder's optimiser, while the exported verifier keeps the matmul form)."""
        shape = re.shape[:-1]
        ar = re.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        ai = im.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        spec = torch.complex(ar.unsqueeze(-2) * self.legd, ai.unsqueeze(-2) * self.legd)  # (..., D, n_theta, M)
        n_phi = self.cos.shape[-1]
        # irfft(norm="forward") sums X_0 + 2 Re sum_{m>0} X_m e^{i m phi_j}: the m=0 once, m>0 twice rule
        return torch.fft.irfft(spec, n=n_phi, dim=-1, norm="forward")

    def coeffs(self, re: torch.Tensor, im: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``m >= 0`` coefficients of every used degree, ``(D, lmax+1)`` each (zero above ``m = l``)."""
        ar = re.index_select(-1, self.gidx).reshape(self.n_degrees, self.lmax + 1) * self.gmask
        ai = im.index_select(-1, self.gidx).reshape(self.n_degrees, self.lmax + 1) * self.gmask
        return ar, ai

    def linearise(self, ar: torch.Tensor, ai: torch.Tensor, chunk: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
        """Normalised ``b_k`` and their exact first derivatives at the per-degree coefficients ``ar``,
        ``ai`` (``(D, lmax+1)``, from :meth:`coeffs`).

        Returns ``b`` ``(K,)`` and ``jac`` ``(K, 3, 2, lmax+1)``: ``jac[k, r, 0, m]`` is
        ``d b_k / d Re a_{l m}`` and ``jac[k, r, 1, m]`` ``d b_k / d Im a_{l m}`` for the degree
        ``l = triples[k, r]`` (a degree used twice in a triple gets its two parts in two slots).
        Each carrier's derivative is the band map product of its other two degrees projected on
        the third (Gaunt), so ``b`` and ``jac`` come from one pass over the carriers, a few at a time,
        without materialising every carrier's three maps at once. The embedder optimises against
        this linear model (cheap) and re-linearises, instead of differentiating the full path at
        every optimiser step.
        """
        n_phi = self.cos.shape[-1]
        M = self.lmax + 1
        spec = torch.complex(ar.unsqueeze(-2) * self.legd, ai.unsqueeze(-2) * self.legd)  # (D, T, M)
        maps = torch.fft.irfft(spec, n=n_phi, dim=-1, norm="forward")  # (D, T, n_phi)
        norm2 = ((ar * ar + ai * ai) * self.normw).sum(-1)  # |f_l|^2, (D,)
        K = self.tix.shape[0]
        integral = torch.empty(K, dtype=ar.dtype, device=ar.device)
        jac = torch.empty(K, 3, 2, M, dtype=ar.dtype, device=ar.device)
        w = self.weights
        for s in range(0, K, chunk):
            t = self.tix[s:s + chunk]
            a, b, c = maps[t[:, 0]], maps[t[:, 1]], maps[t[:, 2]]
            wa = a * w
            bc = b * c
            integral[s:s + chunk] = (wa * bc).sum((-1, -2))
            g = torch.stack([w * bc, wa * c, wa * b], 1)  # d integral / d map of each role
            # sum_phi g cos[m] = normw_m Re rfft(g)_m and sum_phi g sin[m] = normw_m Im rfft(g)_m
            fh = torch.fft.rfft(g, dim=-1)[..., :M]
            leg = self.legd[t]  # (c, 3, T, M)
            jac[s:s + chunk, :, 0] = (leg * fh.real).sum(-2) * self.normw
            jac[s:s + chunk, :, 1] = (leg * fh.imag).sum(-2) * self.normw
        nt = norm2[self.tix]  # (K, 3)
        denom = torch.sqrt(nt.prod(-1)) + 1e-30
        bval = self.kappa * integral / denom
        coef = torch.stack([ar, ai], 1)[self.tix]  # (K, 3, 2, M)
        # d log|f_l| / d a_lm = normw_m a_lm / |f_l|^2 for each role's degree
        dlog = coef * self.normw / (nt[..., None, None] + 1e-30)
        jac = (self.kappa / denom)[:, None, None, None] * jac - bval[:, None, None, None] * dlog
        return bval, jac

    def values(self, ar: torch.Tensor, ai: torch.Tensor) -> torch.Tensor:
        """Normalised ``b_k`` from the per-degree coefficients of :meth:`coeffs` (the ``b`` of
        :meth:`linearise` without its derivatives)."""
        spec = torch.complex(ar.unsqueeze(-2) * self.legd, ai.unsqueeze(-2) * self.legd)
        maps = torch.fft.irfft(spec, n=self.cos.shape[-1], dim=-1, norm="forward")
        return self.from_maps(maps, torch.sqrt(((ar * ar + ai * ai) * self.normw).sum(-1)))

    def forward(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        maps, norms = self.degree_maps(re, im)
        return self.from_maps(maps, norms)

    def norms(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        """``|f_l|`` of every used degree ``(..., D)`` (cheap: no grid)."""
        shape = re.shape[:-1]
        ar = re.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        ai = im.index_select(-1, self.gidx).reshape(*shape, self.n_degrees, self.lmax + 1) * self.gmask
        return torch.sqrt(((ar * ar + ai * ai) * self.normw).sum(-1))

    def from_maps(self, maps: torch.Tensor, norms: torch.Tensor) -> torch.Tensor:
        """Normalised ``b_k`` from band maps and norms (band maps are linear in ``a_lm``, so the
        embedder adds the maps of its change to the fixed maps of the image instead of redoing both)."""
        if maps.dim() == 3 and not torch.jit.is_tracing() and not torch.onnx.is_in_onnx_export():
            # eager: a few carriers at a time (the same sums, without every carrier's three maps in
            # memory at once, which cost more in allocation than in arithmetic)
            integral = torch.cat([(maps[t[:, 0]] * self.weights * maps[t[:, 1]] * maps[t[:, 2]]).sum((-1, -2))
                                  for t in self.tix.split(16)])
        else:
            m1 = maps.index_select(-3, self.tix[:, 0])
            m2 = maps.index_select(-3, self.tix[:, 1])
            m3 = maps.index_select(-3, self.tix[:, 2])
            integral = (m1 * m2 * m3 * self.weights).sum((-1, -2))
        denom = (norms.index_select(-1, self.tix[:, 0]) * norms.index_select(-1, self.tix[:, 1])
                 * norms.index_select(-1, self.tix[:, 2]))
        return self.kappa * integral / (denom + 1e-30)

    def raw(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        """Un-normalised ``B(l1, l2, l)`` (Eq. B) of every triple."""
        maps, _ = self.degree_maps(re, im)
        m1 = maps.index_select(-3, self.tix[:, 0])
        m2 = maps.index_select(-3, self.tix[:, 1])
        m3 = maps.index_select(-3, self.tix[:, 2])
        return self.kappa * (m1 * m2 * m3 * self.weights).sum((-1, -2))
