"""The cost model: how long a simulation will take and how much memory it will hold, before it runs.

``simulate`` refuses a configuration over its budget (:func:`check_budget`), the tab and the batch
command show the estimate as the expected wait, and ``sweep`` refuses a sweep whose estimate is
over budget, all before any work.
"""
from __future__ import annotations

from engines.bandits.algorithms import (
    ALGORITHMS,
    RCDP,
    feature_dim,
    learns_phi,
    parse_algorithm,
)
from engines.bandits.config import SimConfig
from engines.bandits.envs import CHUNK, max_delay
from engines.common.errors import InputError

# Seconds per unit, measured on the shared 2-core CI machine under load (see
# benchmarks/hardening_probes.py and benchmarks/RESULTS.md#hardening): on a quiet machine runs are
# up to 4x faster, so the estimate errs on the long side.
_C_STEP = 4e-6        # per seed-round-algorithm: the kernel's fixed cost of a round (3-5 us at d=1, K=2)
_C_ROUND = 2.5e-9     # per seed-round-algorithm, times (K p^2 + K^2 p) for selection
_C_MLE = 0.55e-9      # per history row per Newton sweep (about 3 a solve), times (p^2 + 16)(1 + p/10)
# The three predictor constants were re-measured (issue #33): the old ones (1.33e-9, 6e-3, 2e-3)
# made post-serving runs look 10-30x longer than they took (a fast 4-value sweep over C "about
# 9 min" that ran in under a minute); these keep a 2-4x margin on the long side under load.
_C_PRED = 0.4e-9      # per buffer row per predictor step, times B * (d H + H^2 + H e)
_C_PY_STEP = 5e-4     # per round per predictor step when the predictor forces round-by-round work
_C_PY_ALGO = 2e-4     # per round per algorithm on that path
_C_OUTPUT = 0.3       # per algorithm: its curves as a plot and CSV at <= 2,000 / 501 points (0.2-0.3 s)


def estimate_seconds(cfg: SimConfig) -> float:
    """Run-time estimate (seconds) for ``cfg`` on a busy 2-core CPU, including the per-round cost
    of every (seed, algorithm) and the plot and CSV of the curves at a bounded number of points;
    used for the time cap.

    >>> estimate_seconds(SimConfig(T=100, n_seeds=1)) < 5
    True
    """
    S, T, K, d, e = cfg.n_seeds, cfg.T, cfg.K, cfg.d, cfg.e_dim
    total = _C_OUTPUT * len(cfg.algorithms)
    n_pred = 0
    for name in cfg.algorithms:
        p = feature_dim(name, d, e)
        n_pred += learns_phi(name, e)
        total += S * T * (_C_STEP + _C_ROUND * (K * p * p + K * K * p))
        if ALGORITHMS[parse_algorithm(name)[0]].kind == RCDP:
            rows = T * T / 2 if cfg.mode == "faithful" else min(T * T / 2, 100 * 100 + T / cfg.fast_refit_growth)
            total += _C_MLE * 3 * S * rows * (p * p + 16) * (1 + p / 10)
    if cfg.uses_predictor:
        H = cfg.predictor_hidden
        flops = n_pred * S * (d * H + H * H + H * e)
        rows = T * T if cfg.mode == "faithful" else T * min(2 * T, cfg.predictor_batch)
        total += _C_PRED * flops * rows * cfg.predictor_epochs
        total += T * (_C_PY_STEP * cfg.predictor_epochs + _C_PY_ALGO * len(cfg.algorithms))
    return total


def estimate_bytes(cfg: SimConfig) -> float:
    """Bytes of the arrays a run of ``cfg`` holds at once: per algorithm and seed the regret curve,
    the delay queues and (RCDP-UCB) the weighted history; the predictor's replay buffers; one chunk
    of context streams. Used for the memory cap.

    >>> estimate_bytes(SimConfig(T=10**7, n_seeds=1, d=1, K=2, algorithms=("MaxInP",))) > 8e7
    True
    """
    S, T, K, d, e = cfg.n_seeds, cfg.T, cfg.K, cfg.d, cfg.e_dim
    R = min(T + 1, max_delay(cfg) + 1)
    total = 8.0 * S * CHUNK * K * (2 * (d + e) + 4)
    n_pred = 0
    for name in cfg.algorithms:
        p = feature_dim(name, d, e)
        n_pred += learns_phi(name, e)
        total += 8.0 * S * (T + p * p + R * (p + 5))
        if ALGORITHMS[parse_algorithm(name)[0]].kind == RCDP:
            total += 8.0 * S * T * (p + 2)
    if cfg.uses_predictor:
        total += 4.0 * n_pred * S * 2 * T * (d + e)
    return total


def check_budget(cfg: SimConfig) -> None:
    """Refuse ``cfg`` with :class:`InputError` before any work when it exceeds ``max_round_steps``
    (T x seeds x algorithms), ``max_bytes`` (:func:`estimate_bytes`) or ``max_seconds``
    (:func:`estimate_seconds`); the message names what to lower."""
    lower = (f"lower T (now {cfg.T:,} rounds), seeds (now {cfg.n_seeds}) or the number of "
             f"algorithms (now {len(cfg.algorithms)})")
    steps = cfg.T * cfg.n_seeds * len(cfg.algorithms)
    if cfg.max_round_steps is not None and steps > cfg.max_round_steps:
        raise InputError(f"T x seeds x algorithms = {steps:,} simulated rounds; the limit here is "
                         f"{cfg.max_round_steps:,}: {lower}")
    mem = estimate_bytes(cfg)
    if mem > cfg.max_bytes:
        raise InputError(f"this run would hold about {mem / 1e6:,.0f} MB of arrays (cap "
                         f"{cfg.max_bytes / 1e6:,.0f} MB): {lower}, or d/K")
    est = estimate_seconds(cfg)
    if est > cfg.max_seconds:
        raise InputError(
            f"this run would take about {est / 60:.0f} min here (cap {cfg.max_seconds / 60:.0f} "
            f"min): {lower}, " + ("or switch to mode 'fast'" if cfg.mode == "faithful" else "or d/K"))
