"""Dueling-bandit simulator: RCDP-UCB (arXiv 2605.01752, ICML 2026) against its baselines.

Linear dueling bandits with post-serving contexts, delayed and corrupted feedback, vectorised
over seeds (numba kernels, rank-one inverse updates, one batched predictor for all seeds).

>>> from engines.bandits import SimConfig, simulate
>>> res = simulate(SimConfig(T=40, n_seeds=2, algorithms=("RCDP-UCB", "MaxInP")))
>>> sorted(res.regret)
['MaxInP', 'RCDP-UCB']
"""
from engines.bandits.config import (
                                    BASE_ALGORITHMS,
                                    DELAYS,
                                    MAPPINGS,
                                    MODES,
                                    SimConfig,
                                    parse_algorithm,
                                    post_dim,
)
from engines.bandits.envs import apply_phi, true_params
from engines.bandits.experiments import (
                                    MAX_HORIZON,
                                    PRESETS,
                                    SweepResult,
                                    loglog_slope,
                                    preset_config,
                                    sweep,
                                    sweep_T,
                                    sweep_within_budget,
)
from engines.bandits.simulate import (
                                    SimResult,
                                    check_budget,
                                    estimate_bytes,
                                    estimate_seconds,
                                    simulate,
)

__all__ = [
    "BASE_ALGORITHMS", "DELAYS", "MAPPINGS", "MAX_HORIZON", "MODES", "PRESETS", "SimConfig",
    "SimResult", "SweepResult", "apply_phi", "check_budget", "estimate_bytes", "estimate_seconds",
    "loglog_slope", "parse_algorithm", "post_dim", "preset_config", "simulate", "sweep", "sweep_T",
    "sweep_within_budget", "true_params",
]
