"""Pair measures on vulnerability-fix pairs: pair ranking (the vulnerable version scored riskier
than its fix; ties count half) and verdict pairs (vulnerable flagged AND fix cleared)."""
from __future__ import annotations

import numpy as np


def pair_metrics(risk_vul, risk_fix, threshold: float | None = None) -> dict:
    """Pair ranking, and with a threshold (risk >= threshold = vulnerable) verdict pairs, the
    share of vulnerable versions flagged and of fixed versions flagged.

    >>> pair_metrics([0.9, 0.4], [0.1, 0.4], 0.5)["verdict_pairs"]
    0.5
    """
    v, f = np.asarray(risk_vul, float), np.asarray(risk_fix, float)
    out = {"n_pairs": int(len(v)), "pair_ranking": float(np.mean((v > f) + 0.5 * (v == f))) if len(v) else float("nan")}
    if threshold is not None:
        fv, ff = v >= threshold, f >= threshold
        out.update(verdict_pairs=float(np.mean(fv & ~ff)), vul_flagged=float(fv.mean()), fix_flagged=float(ff.mean()))
    return out


def best_threshold(risk_vul, risk_fix) -> tuple[float, float]:
    """The threshold with the most verdict pairs (ties: the highest such threshold, fewer false
    alarms), and that share."""
    v, f = np.asarray(risk_vul, float), np.asarray(risk_fix, float)
    best = (1.0, -1.0)
    for t in np.unique(np.concatenate([v, f, [1.0]])):
        vp = float(np.mean((v >= t) & (f < t)))
        if vp > best[1] + 1e-12 or (abs(vp - best[1]) <= 1e-12 and t > best[0]):
            best = (float(t), vp)
    return best


def fuse(p_model: np.ndarray, flags: dict[str, np.ndarray], sources, q: float) -> np.ndarray:
    """Noisy-OR of model step risks with analyser flags: 1 - (1 - p)(1 - q * flagged)."""
    fl = np.zeros_like(np.asarray(p_model, float))
    for s in sources:
        fl = np.maximum(fl, flags[s])
    return 1.0 - (1.0 - np.asarray(p_model, float)) * (1.0 - q * fl)
