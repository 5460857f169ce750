"""SecCodePRM's risk-sensitive aggregation of step safety scores (arXiv 2602.10418, Sec. 3).

Step scores here are *safety* scores s_i in [0, 1] (1 = secure). The program score is a soft
minimum, dominated by the least safe step, so one risky step is enough to make a program risky
however many safe steps surround it; candidates are ranked by the top-k safe ratio.
"""
from __future__ import annotations

import numpy as np

from engines.codeprm.config import PRMConfig

PAPER_TAU = 0.1


def softmin_safety(scores, tau: float = PAPER_TAU) -> float:
    """Soft minimum of step safety scores: S = sum_i softmax(-s / tau)_i * s_i (the paper's
    risk-sensitive aggregation, T = 0.1). It lies between min(s) and mean(s), tends to min(s)
    as tau -> 0 and to mean(s) as tau -> inf, and does not depend on the order of the steps.

    >>> round(softmin_safety([0.9, 0.1, 0.95]), 3)
    0.1
    >>> softmin_safety([])
    1.0
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size == 0:
        return 1.0
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    z = -s / tau
    w = np.exp(z - z.max())
    return float((w * s).sum() / w.sum())


def softmin_weights(scores, tau: float = PAPER_TAU) -> np.ndarray:
    """The softmax(-s / tau) weights of :func:`softmin_safety` (which steps drive the score)."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size == 0:
        return s
    z = -s / tau
    w = np.exp(z - z.max())
    return w / w.sum()


def topk_safe_ratio(scores, k: int = 3, threshold: float = 0.5) -> float:
    """Top-k safe ratio: the share of the k least safe steps whose safety is at least
    ``threshold`` (1.0 = even the k riskiest steps look safe). Used to rank candidate
    programs; ties are broken by :func:`softmin_safety`.

    >>> topk_safe_ratio([0.9, 0.2, 0.8, 0.7], k=2)
    0.5
    """
    s = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    if s.size == 0:
        return 1.0
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return float((s[:k] >= threshold).mean())


def softmin_torch(scores, tau: float = PAPER_TAU):
    """:func:`softmin_safety` over the last axis of a torch tensor (differentiable; for training)."""
    import torch

    w = torch.softmax(-scores / tau, dim=-1)
    return (w * scores).sum(-1)


def aggregate(probs: np.ndarray, cfg: PRMConfig) -> tuple[float, np.ndarray]:
    """Risk-sensitive aggregation of step risks p_i into a program risk, and each step's weight.

    "softmin": risk = 1 - S with S = sum_i softmax(-s / tau)_i s_i the soft minimum of the step
    safety scores s_i = 1 - p_i (SecCodePRM's risk-sensitive aggregation,
    ``aggregation.softmin_safety``); it lies between the mean and the max of the p_i and tends
    to the max as tau -> 0. "topk": the mean of the k largest p_i.

    >>> risk, w = aggregate(np.array([0.01, 0.9, 0.02]), PRMConfig(tau=0.1))
    >>> 0.85 < risk <= 0.9 and int(np.argmax(w)) == 1
    True
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.size == 0:
        return 0.0, p
    if cfg.aggregation == "topk":
        k = min(cfg.top_k, p.size)
        idx = np.argsort(-p)[:k]
        w = np.zeros_like(p)
        w[idx] = 1.0 / k
        return float(p[idx].mean()), w
    return float(min(1.0, max(0.0, 1.0 - softmin_safety(1.0 - p, cfg.tau)))), softmin_weights(1.0 - p, cfg.tau)
