"""The (strict, loose) risks of one head output, as each stop policy counts them."""
from __future__ import annotations

import numpy as np


def risk_pair(values) -> tuple[float, float]:
    """(strict, loose) from one head output: a two-output row, or one value both policies read."""
    if isinstance(values, (int, float)):
        return float(values), float(values)
    flat = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
    return (flat[0], flat[0]) if len(flat) == 1 else (flat[0], flat[1])


def policy_risks(pair: tuple[float, float], factors: tuple[float, float]) -> tuple[float, float]:
    """The (strict, loose) risks a token counts with: the head's pair times the request gate's factors
    (0 for a policy whose gate the request did not reach, else 1), the strict risk never below the
    loose one: a reply that gives material harmful help has gone along with the request, whatever
    the gate read from the request (so strict never stops later than loose at the same settings).

    >>> policy_risks((0.2, 0.9), (0.0, 1.0))
    (0.9, 0.9)
    >>> policy_risks((0.8, 0.1), (1.0, 1.0))
    (0.8, 0.1)
    """
    strict, loose = pair[0] * factors[0], pair[1] * factors[1]
    return max(strict, loose), loose
