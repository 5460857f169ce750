"""The embedder's solver: the smallest band change that puts every carrier past its goal.

Linearise every ``c_k`` (Eq. C) at the current coefficients (exact derivatives from
:meth:`TripleProduct.linearise`), minimise squared hinge + ``energy_weight`` x change energy (a
quadratic form, :func:`energy_blocks`) under that linear model with L-BFGS-B; then measure ``c_k``
exactly where that landed, shift the linear model to agree there (same derivatives: the carriers
are close to linear over one round's change) and solve again, :data:`GN_STEPS` solves in all.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from engines.common.threads import blas_threads
from engines.watermark.bispectrum import _grid_tables
from engines.watermark.carriers import Verifier
from engines.watermark.config import WatermarkConfig
from engines.watermark.sht import alm_index, n_alm

GN_STEPS = 3
"""Linear solves per optimiser round."""

@functools.lru_cache(maxsize=16)
def energy_blocks(degrees: tuple[int, ...], lmax: int, energy: str, psnr_floor: float) -> np.ndarray:
    """Quadratic form of the change energy in the per-degree coefficients: ``E = sum_m x_m^T Q_m x_m``
    for the real parts and the imaginary parts alike (``Q``: ``(2, M, D, D)``, divided by the
    budget the energy is measured against). Cached: it depends only on the degrees, the energy kind
    and the floor, and costs ~0.1 s to build.

    "pixel": the mean square of the change over equirectangular pixels (rows uniform in theta,
    what PSNR measures): on the exact grid, rows weighted by ``w_i / sin(theta_i)``; a ring's
    ``sum_phi`` keeps ``m = 0`` once and ``m > 0`` twice. "sphere": ``sum |delta_lm|^2`` over the
    sphere (``m = 0`` once, ``m > 0`` twice)."""
    leg = _grid_tables(lmax)[0]  # (T, n_alm)
    n_t, n_m = leg.shape[0], lmax + 1
    legd = np.zeros((len(degrees), n_t, n_m))
    gm = np.zeros((n_m, len(degrees)))
    for i, l in enumerate(degrees):
        for m in range(l + 1):
            legd[i, :, m] = leg[:, alm_index(l, m, lmax)]
            gm[m, i] = 1.0
    cm = np.where(np.arange(n_m) == 0, 1.0, 2.0)
    mse_floor = 255.0 ** 2 / 10 ** (psnr_floor / 10)
    if energy == "pixel":
        xg, wg = np.polynomial.legendre.leggauss(n_t)
        q = wg / np.sqrt(1 - xg ** 2) / np.pi / mse_floor  # (T,)
        lm = legd.transpose(2, 0, 1)  # (M, D, T)
        qre = np.einsum("mdt,t,met->mde", lm, q, lm) * cm[:, None, None]
    else:
        qre = np.stack([np.diag(g) for g in gm]) * cm[:, None, None] / (4 * np.pi * mse_floor)
    qim = qre.copy()
    qim[0] = 0.0  # Im a_l0 is zero for a real map
    out = np.stack([qre, qim])
    out.flags.writeable = False  # shared by every caller
    return out


def optimise(ver: Verifier, re: torch.Tensor, im: torch.Tensor, goal: torch.Tensor, target: torch.Tensor,
             cfg: WatermarkConfig) -> np.ndarray:
    """Smallest band change with ``target_k * c_k >= goal_k`` from the coefficients ``re``, ``im`` of the
    current output, returned as ``(2, n_alm)``. Each L-BFGS-B iteration costs a sparse product, not a
    pass over the grid."""
    from scipy.optimize import minimize
    from scipy.sparse import csr_matrix

    tp = ver.tp
    n_d, n_m = tp.n_degrees, tp.lmax + 1
    gain = ver.gain
    ar0, ai0 = tp.coeffs(re, im)
    q = energy_blocks(tuple(int(x) for x in np.unique(tp.triples)), int(tp.lmax), cfg.energy,
                      float(cfg.psnr_floor))  # (2, M, D, D)
    gmask = tp.gmask.detach().cpu().double().numpy()  # (D, M)
    free = np.stack([gmask, gmask * (np.arange(n_m) > 0)]).ravel()  # (2, D, M) flattened
    t = target.detach().cpu().double().numpy()
    goal = goal.detach().cpu().double().numpy() * 1.15  # aim past the goal: quantising loses a little
    tix = tp.tix.cpu().numpy()
    k = len(tix)
    rows = np.repeat(np.arange(k), 3 * 2 * n_m)
    cols = (np.arange(2)[None, None, :, None] * n_d * n_m + tix[:, :, None, None] * n_m
            + np.arange(n_m)[None, None, None, :])
    cols = np.broadcast_to(cols, (k, 3, 2, n_m)).ravel()
    delta = np.zeros(2 * n_d * n_m)
    ew = cfg.energy_weight

    jm = None
    for _ in range(GN_STEPS):
        d_t = torch.tensor(delta.reshape(2, n_d, n_m), dtype=ar0.dtype, device=ar0.device)
        with torch.no_grad():
            if jm is None:
                b, jac = tp.linearise(ar0 + d_t[0], ai0 + d_t[1])
                jac = (gain[:, None, None, None] * jac).cpu().double().numpy()
                jm = csr_matrix((jac.ravel(), (rows, cols)), shape=(k, 2 * n_d * n_m))
            else:
                b = tp.values(ar0 + d_t[0], ai0 + d_t[1])
            c_now = (gain * b).cpu().double().numpy()
        base = c_now - jm @ delta  # linear model: c(x) ~ base + J x

        def loss(x: np.ndarray, jm: csr_matrix = jm, base: np.ndarray = base) -> tuple[float, np.ndarray]:
            h = np.maximum(0.0, goal - t * (base + jm @ x))
            xs = x.reshape(2, n_d, n_m).transpose(0, 2, 1)[..., None]  # (2, M, D, 1)
            qx = (q @ xs)[..., 0]  # (2, M, D)
            energy = float((xs[..., 0] * qx).sum())
            grad = -2.0 * (jm.T @ (t * h)) + ew * 2.0 * qx.transpose(0, 2, 1).ravel()
            return float(h @ h) + ew * energy, grad * free

        with blas_threads(cfg.torch_threads):  # after scipy.optimize is loaded: the cap covers its BLAS
            delta = minimize(loss, delta, jac=True, method="L-BFGS-B",
                             options={"maxiter": cfg.steps, "gtol": 1e-12, "ftol": 1e-15}).x
    d = delta.reshape(2, n_d, n_m) * gmask
    out = np.zeros((2, n_alm(tp.lmax)))
    gidx = tp.gidx.cpu().numpy()
    np.add.at(out[0], gidx, d[0].ravel())
    np.add.at(out[1], gidx, d[1].ravel())
    return out
