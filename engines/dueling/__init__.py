"""Dueling-bandit simulator: RCDP-UCB (arXiv 2605.01752, ICML 2026) against its baselines.

Linear dueling bandits with post-serving contexts, delayed and corrupted feedback, vectorised
over seeds (numba kernels, rank-one inverse updates, one batched predictor for all seeds).
Importing it costs numpy alone: numba loads with the first simulation, torch only when a
learner trains the post-serving predictor.

>>> from engines.dueling import SimConfig, simulate
>>> res = simulate(SimConfig(T=40, n_seeds=2, algorithms=("RCDP-UCB", "MaxInP")))
>>> sorted(res.regret)
['MaxInP', 'RCDP-UCB']
"""
from engines.dueling.algorithms import ALGORITHMS, parse_algorithm
from engines.dueling.config import (
    BASE_ALGORITHMS,
    DELAYS,
    LIMITS,
    MAPPINGS,
    MODES,
    SimConfig,
    post_dim,
)
from engines.dueling.cost import check_budget, estimate_bytes, estimate_seconds
from engines.dueling.envs import apply_phi, true_params
from engines.dueling.experiments import (
    MAX_HORIZON,
    PRESETS,
    SweepResult,
    loglog_slope,
    preset_config,
    sweep,
    sweep_seconds,
)
from engines.dueling.simulate import SimResult, simulate

__all__ = [
    "ALGORITHMS", "BASE_ALGORITHMS", "DELAYS", "LIMITS", "MAPPINGS", "MAX_HORIZON", "MODES", "PRESETS",
    "SimConfig", "SimResult", "SweepResult", "apply_phi", "check_budget", "estimate_bytes",
    "estimate_seconds", "loglog_slope", "parse_algorithm", "post_dim", "preset_config", "simulate",
    "sweep", "sweep_seconds", "true_params",
]
