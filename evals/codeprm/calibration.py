"""Threshold choice for the codeprm calibration (validation data only)."""
from __future__ import annotations

import numpy as np


def balanced_threshold(risks: np.ndarray, labels: np.ndarray, cap: float = 1.0) -> tuple[float, float]:
    """Threshold <= ``cap`` with the best balanced accuracy (ties: the lowest), and that accuracy."""
    best = (min(0.5, cap), -1.0)
    for t in np.unique(np.append(risks[risks <= cap], cap)):
        pred = risks >= t
        bal = 0.5 * (pred[labels == 1].mean() + (~pred[labels == 0]).mean())
        if bal > best[1] + 1e-12:
            best = (float(t), float(bal))
    return best
