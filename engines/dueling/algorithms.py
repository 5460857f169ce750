"""The learners, one registry entry each, and the parameter vector the kernels read.

An entry says which kernel branch runs the algorithm (``kind``), whether it learns the
post-serving mapping phi whenever the run has post-serving context, and how its exploration
constants are calibrated; the calibration is the reference's (``experiments.py`` of
github.com/youngmin0oh/rcdp-public, MIT). A baseline learns phi only when it is asked for with
the "+PS" suffix; :func:`learns_phi` is the one place that rule is written.

Nothing here imports numba or torch: the configuration, the cost model and the front-ends read
the registry without loading the kernels.

>>> sorted(ALGORITHMS)
['CoLSTIM', 'MaxInP', 'MaxPairUCB', 'RCDB', 'RCDP-UCB']
>>> parse_algorithm("RCDB+PS"), learns_phi("RCDB", e=0), learns_phi("RCDP-UCB", e=10)
(('RCDB', True), False, True)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engines.common.errors import InputError

# kernel branches (``kernels._select``)
RCDP, RCDB, MAXINP, MAXPAIR, COLSTIM = range(5)
# delay regimes as the kernels code them
DELAY_NONE, DELAY_GAUSS, DELAY_GEOM, DELAY_STRATEGIC = range(4)
DELAY_CODES = {"none": DELAY_NONE, "stochastic": DELAY_GAUSS, "geometric": DELAY_GEOM,
               "strategic": DELAY_STRATEGIC}

# layout of the float64 parameter vector every kernel call gets (:func:`engines.dueling.simulate.kernel_params`
# fills it through :func:`pack_params`): slot names in order, and the index the kernels read each by
PARAM_NAMES = ("explore", "beta_t", "walpha", "kappa", "lambda_reg", "delta", "mle_fast", "growth",
               "corr_c", "delay_type", "delay_mean", "delay_std", "delay_budget", "delay_mag")
P_EXPLORE, P_BETA_T, P_WALPHA, P_KAPPA, P_LAMBDA, P_DELTA, P_MLE_FAST, P_GROWTH = range(8)
P_CORR_C, P_DELAY_TYPE, P_DELAY_MEAN, P_DELAY_STD, P_DELAY_BUDGET, P_DELAY_MAG = range(8, 14)
N_PARAMS = len(PARAM_NAMES)


def pack_params(**values: float) -> np.ndarray:
    """The kernels' parameter vector: every slot of :data:`PARAM_NAMES` set by name.

    >>> float(pack_params(**dict.fromkeys(PARAM_NAMES, 0.0) | {"explore": 2.0})[P_EXPLORE])
    2.0
    """
    if set(values) != set(PARAM_NAMES):
        raise ValueError(f"parameter slots missing {sorted(set(PARAM_NAMES) - set(values))}, "
                         f"unknown {sorted(set(values) - set(PARAM_NAMES))}")
    return np.array([float(values[k]) for k in PARAM_NAMES])


class Provisioning(Protocol):
    """What a calibration reads of a configuration (``config.SimConfig`` has these fields): the
    budgets the learners are provisioned for and the reference's constants."""

    kappa: float
    robust_C: float
    robust_mu: float
    robust_Lambda: float
    rcdp_alpha: float
    baseline_alpha: float


#: ``calibrate(cfg, ps, p) -> (exploration constant, weight alpha)``: ``ps`` says whether the
#: learner uses the post-serving predictor, ``p`` is its feature dimension.
Calibration = Callable[[Provisioning, bool, int], "tuple[float, float]"]


@dataclass(frozen=True)
class Algorithm:
    """One learner family.

    Args:
        name: The name users write ("RCDP-UCB"); "+PS" is appended for a baseline that learns phi.
        kind: Its kernel branch (``RCDP``, ``RCDB``, ...).
        calibrate: Its exploration constant and robust-weight alpha for a configuration.
        always_learns_phi: True for a method that learns phi whenever there is post-serving
            context (RCDP-UCB); False for a baseline, which learns it only as "name+PS".
        summary: One line for a reader: what the method is, and where it comes from.
    """

    name: str
    kind: int
    calibrate: Calibration
    always_learns_phi: bool = False
    summary: str = ""


def _rcdb_constants(cfg: Provisioning, p: int) -> tuple[float, float]:
    """RCDB's weight alpha = sqrt(p) / (sqrt(kappa) C) and radius beta = sqrt(p) + alpha C, at the
    corruption budget C the learners are provisioned for (reference calibration)."""
    alpha = math.sqrt(p) / (math.sqrt(cfg.kappa) * cfg.robust_C)
    return alpha, math.sqrt(p) + alpha * cfg.robust_C


def _rcdp(cfg: Provisioning, ps: bool, p: int) -> tuple[float, float]:
    # omega_t = min(1, alpha / ||dz||_{V^-1}) with alpha = sqrt(p) / (C + D), D = max(sqrt(Lambda), mu)
    mu = cfg.robust_mu
    D = max(math.sqrt(cfg.robust_Lambda), mu) if mu > 0 else math.sqrt(cfg.robust_Lambda)
    return cfg.rcdp_alpha, math.sqrt(p) / (cfg.robust_C + D + 1e-6)


def _rcdb(cfg: Provisioning, ps: bool, p: int) -> tuple[float, float]:
    alpha, beta = _rcdb_constants(cfg, p)
    return beta, alpha


def _maxinp(cfg: Provisioning, ps: bool, p: int) -> tuple[float, float]:
    return (_rcdb_constants(cfg, p)[1] if ps else cfg.baseline_alpha), 0.0


def _maxpair(cfg: Provisioning, ps: bool, p: int) -> tuple[float, float]:
    return (_rcdb_constants(cfg, p)[1] if ps else math.sqrt(p)), 0.0


def _colstim(cfg: Provisioning, ps: bool, p: int) -> tuple[float, float]:
    return cfg.baseline_alpha, 0.0


#: name -> :class:`Algorithm`, in the order the tab and the tables list them.
ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("RCDP-UCB", RCDP, _rcdp, always_learns_phi=True,
              summary="robust weighted MLE with delay- and corruption-aware weights (the paper's method)"),
    Algorithm("RCDB", RCDB, _rcdb, summary="robust contextual dueling bandit, weighted online Newton"),
    Algorithm("CoLSTIM", COLSTIM, _colstim, summary="perturbed-leader arm plus optimistic challenger"),
    Algorithm("MaxInP", MAXINP, _maxinp, summary="maximum informative pair among plausible winners"),
    Algorithm("MaxPairUCB", MAXPAIR, _maxpair, summary="joint pair upper confidence bound"),
)}


def parse_algorithm(name: str) -> tuple[str, bool]:
    """Split ``"RCDB+PS"`` into ``("RCDB", True)``; raise InputError on unknown names.

    >>> parse_algorithm("MaxInP+PS")
    ('MaxInP', True)
    """
    base, ps = (name[:-3], True) if name.endswith("+PS") else (name, False)
    if base not in ALGORITHMS:
        raise InputError(f"unknown algorithm {name!r}; choose from {', '.join(ALGORITHMS)} "
                         "(append '+PS' to give a baseline the post-serving predictor)")
    if ps and ALGORITHMS[base].always_learns_phi:
        raise InputError(f"{base} always uses the predictor when there is post-serving context; "
                         f"write '{base}' without '+PS'")
    return base, ps


def learns_phi(name: str, e: int) -> bool:
    """Whether learner ``name`` trains and uses the post-serving predictor when the run's
    post-serving dimension is ``e`` (0: no post-serving context, so nobody does)."""
    base, ps = parse_algorithm(name)
    return e > 0 and (ps or ALGORITHMS[base].always_learns_phi)


def feature_dim(name: str, d: int, e: int) -> int:
    """Dimension p of the features learner ``name`` selects on: d, or d + e when it learns phi."""
    return d + e if learns_phi(name, e) else d
