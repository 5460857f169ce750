"""The cost model: how long a simulation will take and how much memory it will hold, before it runs.

``simulate`` refuses a configuration over its budget (:func:`check_budget`), the tab and the batch
command show the estimate as the expected wait, and ``sweep`` refuses a sweep whose estimate is
over budget, all before any work.
"""
from __future__ import annotations

from engines.common.errors import InputError
from engines.dueling.algorithms import (
    ALGORITHMS,
    MAXPAIR,
    RCDB,
    RCDP,
    feature_dim,
    learns_phi,
    parse_algorithm,
)
from engines.dueling.config import SimConfig
from engines.dueling.envs import CHUNK, max_delay

#: The terms of the run-time model, each a count of work (see :func:`features`).
FEATURES = ("run", "contexts", "rounds", "selection_kp2", "selection_k2p", "mle_rows", "mle_rows_p2",
            "predictor_flops", "predictor_flops_long", "predictor_rounds", "predictor_algo_rounds")
#: Seconds per unit of each term, fitted by ``benchmarks/dueling_cost_fit.py`` to CPU seconds of
#: runs on the 2-core machine this project runs on (an unloaded machine's wall time; a busy one
#: takes longer).
COSTS = {
    "run": 3.06e-4,
    "contexts": 8.07e-9,
    "rounds": 2.92e-7,
    "selection_kp2": 6.07e-10,
    "selection_k2p": 4.23e-10,
    "mle_rows": 1.24e-8,
    "mle_rows_p2": 7.81e-11,
    "predictor_flops": 2.62e-10,
    "predictor_flops_long": 1.22e-11,
    "predictor_rounds": 0.0,
    "predictor_algo_rounds": 1.08e-4,
}


def _typical_delay(cfg: SimConfig) -> float:
    """Rounds a typical sample waits before it arrives (how far the arrived history lags t)."""
    if cfg.delay == "strategic":
        return min(max_delay(cfg), cfg.delay_budget / max(cfg.T, 1) * 2)
    return 0.0 if cfg.delay == "none" else float(cfg.delay_mean)


def features(cfg: SimConfig) -> list[float]:
    """The work of a run of ``cfg``, term by term (``FEATURES``): seeds x rounds x algorithms, the
    pair selection's K p^2 and K^2 p multiply-adds, the weighted-MLE history rows RCDP-UCB
    sweeps (about (T - delay)^2 / 2 in faithful mode, where every round with an arrival
    re-solves over the whole history), the predictor's multiply-adds (and, for full-buffer
    steps, the same times T / 1000) and its per-round Python."""
    S, T, K, d, e = cfg.n_seeds, cfg.T, cfg.K, cfg.d, cfg.e_dim
    f = dict.fromkeys(FEATURES, 0.0)
    f["run"] = 1.0
    f["contexts"] = S * T * K * (d + e)
    n_pred = 0
    arrived = max(T - _typical_delay(cfg), 0.0)
    for name in cfg.algorithms:
        kind = ALGORITHMS[parse_algorithm(name)[0]].kind
        p = feature_dim(name, d, e)
        n_pred += learns_phi(name, e)
        f["rounds"] += S * T
        f["selection_kp2"] += S * T * K * p * p
        if kind in (RCDB, MAXPAIR):
            f["selection_k2p"] += S * T * K * K * p
        if kind == RCDP:
            rows = arrived * arrived / 2
            if cfg.mode == "fast":
                rows = min(rows, 100 * 100 / 2 + arrived / cfg.fast_refit_growth)
            f["mle_rows"] += S * rows
            f["mle_rows_p2"] += S * rows * p * p
    if n_pred:
        H = cfg.predictor_hidden
        rows = T * T if cfg.mode == "faithful" else T * min(2 * T, cfg.predictor_batch)
        f["predictor_flops"] = n_pred * S * (d * H + H * H + H * e) * rows * cfg.predictor_epochs
        # full-buffer steps slow down per multiply-add as the buffer outgrows the caches
        f["predictor_flops_long"] = f["predictor_flops"] * T / 1000 if cfg.mode == "faithful" else 0.0
        f["predictor_rounds"] = T * cfg.predictor_epochs
        f["predictor_algo_rounds"] = T * len(cfg.algorithms)
    return [f[k] for k in FEATURES]


def estimate_seconds(cfg: SimConfig) -> float:
    """Run-time estimate (seconds) of ``simulate(cfg)`` on this project's 2-core machine: the
    model's terms (:func:`features`) times their fitted costs (``COSTS``). Used for the caps and
    shown as the expected wait.

    >>> estimate_seconds(SimConfig(T=100, n_seeds=1)) < 5
    True
    """
    return float(sum(c * COSTS[k] for k, c in zip(FEATURES, features(cfg))))


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
