"""``SimConfig``: every knob of one dueling-bandit simulation, validated on construction.

Defaults are the reference implementation's (github.com/youngmin0oh/rcdp-public, ``experiments.py``
and ``contextual_dueling_bandit.py``, MIT): d = K = 10, T = 2000, corruption budget C = 25,
stochastic delays N(100, 100^2), adversarial delay budget Lambda = 10^4, RCDP-UCB provisioned at
the hardest setting (C = 25, Lambda = 10^4, mu = 100, kappa = 0.25) with exploration constant 0.1.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import NamedTuple

from engines.common.errors import InputError
from engines.common.numbers import plain_number
from engines.dueling.algorithms import ALGORITHMS, learns_phi, parse_algorithm

#: Pre -> post-serving mappings phi of the reference (``get_true_post_context``).
MAPPINGS = ("polynomial", "abs", "cosine", "sinusoidal", "linear", "piecewise", "interaction")
#: Delay regimes: reference "stochastic" (Gaussian, clipped at 0), "geometric" (reference class
#: ``StochasticGeometricDelay``), "strategic" (adversarial, budget Lambda), "none".
DELAYS = ("stochastic", "geometric", "strategic", "none")
CORRUPTIONS = ("strategic", "none")
#: Algorithm families (``algorithms.ALGORITHMS``); append "+PS" to give a baseline the learned
#: post-serving predictor.
BASE_ALGORITHMS = tuple(ALGORITHMS)
MODES = ("faithful", "fast")
EXPLORATIONS = ("constant", "beta_t")

#: Seed offsets of the reference (``experiments._PHI_ORDER``): base = 42 + 1000 * index + 999.
PHI_SEED_ORDER = ("polynomial", "abs", "cosine", "sinusoidal")

#: Hard size cap: estimated seconds above which ``simulate`` refuses to start.
MAX_ESTIMATED_SECONDS = 900.0
#: Memory cap: estimated bytes of arrays (regret curves, histories, queues) above which ``simulate``
#: refuses to start.
MAX_ESTIMATED_BYTES = 2e9
class Limit(NamedTuple):
    """The range of one number a user sets: ``lo <= value <= hi``, whole or not, and its label
    (the tab's words: messages name what the user sees)."""

    lo: float
    hi: float
    whole: bool
    label: str


#: The bounds of every number a user sets, declared once: ``SimConfig`` refuses anything outside,
#: and the tab, the MCP tool and the batch command read theirs here. Past them, delays and
#: budgets stop meaning anything for the horizons this engine runs and int64 arithmetic in the
#: kernels would overflow. How long a run may take is the cost model's business
#: (``cost.check_budget``), not a bound's.
LIMITS: dict[str, Limit] = {
    "d": Limit(1, 200, True, "d (pre-serving dimension)"),
    "K": Limit(2, 500, True, "K (arms per round)"),
    "T": Limit(1, 10**9, True, "T (rounds)"),
    "n_seeds": Limit(1, 10_000, True, "seeds (independent runs)"),
    "delay_mean": Limit(0, 1e6, False, "stochastic delay mean mu (rounds)"),
    "delay_std": Limit(0, 1e6, False, "Gaussian delay std (rounds)"),
    "delay_budget": Limit(0, 1e12, True, "adversarial delay budget Lambda (rounds)"),
    "corruption_budget": Limit(0, 1e9, True, "corruption budget C (flips)"),
}


def post_dim(phi: str, d: int) -> int:
    """Natural post-serving dimension d_y of ``phi`` (reference ``experiments.post_dim``).

    >>> post_dim("sinusoidal", 10), post_dim("abs", 10), post_dim("interaction", 4)
    (20, 10, 10)
    """
    if phi in ("sinusoidal", "polynomial"):
        return 2 * d
    if phi == "interaction":
        return d * (d + 1) // 2
    return d


def reference_seed_base(phi: str) -> int:
    """The reference's per-mapping base seed: 42 + 1000 * index(phi) + 999 (0 offset if unlisted).

    >>> reference_seed_base("polynomial"), reference_seed_base("abs")
    (1041, 2041)
    """
    idx = PHI_SEED_ORDER.index(phi) if phi in PHI_SEED_ORDER else 0
    return 42 + idx * 1000 + 999


def _checked(name: str, v: object) -> int | float:
    """``v`` as field ``name`` takes it, or InputError naming the field and its bound (``LIMITS``)."""
    lo, hi, whole, label = LIMITS[name]
    try:
        if isinstance(v, bool):
            raise TypeError
        x = float(v)  # type: ignore[arg-type]
        if not math.isfinite(x) or (whole and x != int(x)):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{label} must be {'a whole' if whole else 'a finite'} number, got {str(v)[:40]}") from None
    if x < lo:
        raise InputError(f"{label} must be at least {plain_number(lo)} (got {plain_number(x)})")
    if x > hi:
        raise InputError(f"{label} must be between {plain_number(lo)} and {plain_number(hi)} (got {plain_number(x)})")
    return int(x) if whole else x


@dataclass
class SimConfig:
    """One simulation: environment, adversary, learners, seeds and execution mode.

    Args:
        d: Pre-serving context dimension d_x (contexts uniform on [-pi, pi]^d).
        K: Arms per round.
        T: Horizon (rounds).
        phi: Pre -> post-serving mapping, one of ``MAPPINGS``.
        post_serving: Whether the utility has a post-serving part y = phi(x); False is the
            reference's "linear" experiment (e = 0).
        e: Post-serving dimension; None = the mapping's natural one (``post_dim``).
        delay: Delay regime, one of ``DELAYS``.
        delay_mean: Mean mu_tau of stochastic delays (rounds).
        delay_std: Std of Gaussian stochastic delays (rounds).
        delay_budget: Adversarial delay budget Lambda (total rounds of delay); each delayed
            sample waits floor(sqrt(Lambda)) rounds while the budget lasts.
        corruption: "strategic" (flip outcomes that favour the better arm until C is spent) or
            "none".
        corruption_budget: Corruption budget C (number of flipped outcomes).
        algorithms: Learners to run, names from ``BASE_ALGORITHMS``, baselines optionally
            suffixed "+PS" (they then learn and use the post-serving predictor).
        lambda_reg: Ridge regulariser lambda of every learner.
        rcdp_alpha: RCDP-UCB exploration constant c_t (reference: 0.1).
        exploration: "constant" (reference: c_t = rcdp_alpha) or "beta_t" (a growing radius,
            see ``beta_t``; not in the reference).
        robust_C: Corruption budget RCDP-UCB is provisioned for (reference: 25).
        robust_Lambda: Delay budget RCDP-UCB is provisioned for (reference: 1e4).
        robust_mu: Mean delay RCDP-UCB is provisioned for (reference: 100).
        kappa: Lower bound on the link derivative (reference: 0.25).
        baseline_alpha: Exploration constant of RCDB / CoLSTIM / MaxInP x-only (reference 0.5).
        n_seeds: Independent runs; run r uses seed ``seed_base + 100 r`` like the reference.
        seed_base: None = the reference's per-mapping base seed.
        mode: "faithful" (exact weighted MLE after every arrival, full-batch predictor) or
            "fast" (exact MLE refits on a geometric schedule, minibatch predictor; not from
            the paper or the reference). In faithful mode the MLE is solved once per round that
            has arrivals: the reference re-solves to convergence after each arrival from a warm
            start, so only the round's last solve matters (same curves, see the parity test).
        fast_refit_growth: Fast mode: refit the MLE when the arrived history has grown by this
            fraction since the last refit (refits at every arrival below 100 samples).
        predictor_batch: Fast mode: minibatch size of each predictor Adam step.
        predictor_hidden: Hidden width of the post-serving MLP (reference: 64).
        predictor_lr: Adam learning rate of the predictor (reference: 1e-3).
        predictor_epochs: Adam steps per round (reference: 2).
        max_seconds: Refuse configurations whose estimated run time exceeds this.
        max_bytes: Refuse configurations whose estimated array memory exceeds this.
        max_round_steps: Refuse configurations with more than this many T x seeds x
            algorithms rounds (None: no such cap); bounds time and memory whatever the estimate.
    """

    # --- environment ---
    d: int = 10
    K: int = 10
    T: int = 2000
    phi: str = "polynomial"
    post_serving: bool = False
    e: int | None = None
    # --- delays ---
    delay: str = "stochastic"
    delay_mean: float = 100.0
    delay_std: float = 100.0
    delay_budget: int = 10000
    # --- corruption ---
    corruption: str = "strategic"
    corruption_budget: int = 25
    # --- learners ---
    algorithms: tuple[str, ...] = BASE_ALGORITHMS
    lambda_reg: float = 1.0
    rcdp_alpha: float = 0.1
    exploration: str = "constant"
    robust_C: float = 25.0
    robust_Lambda: float = 10000.0
    robust_mu: float = 100.0
    kappa: float = 0.25
    baseline_alpha: float = 0.5
    # --- seeds ---
    n_seeds: int = 5
    seed_base: int | None = None
    # --- execution ---
    mode: str = "faithful"
    fast_refit_growth: float = 0.05
    predictor_batch: int = 128
    predictor_hidden: int = 64
    predictor_lr: float = 1e-3
    predictor_epochs: int = 2
    max_seconds: float = MAX_ESTIMATED_SECONDS
    max_bytes: float = MAX_ESTIMATED_BYTES
    max_round_steps: int | None = None

    def __post_init__(self) -> None:
        for name in LIMITS:
            setattr(self, name, _checked(name, getattr(self, name)))
        if self.phi not in MAPPINGS:
            raise InputError(f"unknown mapping phi={self.phi!r}; choose from {', '.join(MAPPINGS)}")
        if self.delay not in DELAYS:
            raise InputError(f"unknown delay {self.delay!r}; choose from {', '.join(DELAYS)}")
        if self.corruption not in CORRUPTIONS:
            raise InputError(f"unknown corruption {self.corruption!r}; choose from "
                             f"{', '.join(CORRUPTIONS)}")
        if self.mode not in MODES:
            raise InputError(f"mode must be 'faithful' or 'fast', got {self.mode!r}")
        if self.exploration not in EXPLORATIONS:
            raise InputError(f"exploration must be 'constant' or 'beta_t', got {self.exploration!r}")
        for name in ("lambda_reg", "kappa", "predictor_lr"):
            if not float(getattr(self, name)) > 0:
                raise InputError(f"{name} must be > 0 (got {getattr(self, name)!r})")
        if not 0 < self.kappa <= 0.25:
            raise InputError(f"kappa is a lower bound on the logistic derivative, so 0 < kappa <= "
                             f"0.25 (got {self.kappa})")
        if self.e is not None and (self.e < 1 or self.e > 400):
            raise InputError(f"e must be between 1 and 400 or None (got {self.e})")
        if self.post_serving and self.e is None and post_dim(self.phi, self.d) > 400:
            raise InputError(f"phi={self.phi} with d={self.d} gives a post-serving dimension above "
                             "400; lower d or set e")
        if isinstance(self.algorithms, str):
            self.algorithms = (self.algorithms,)
        self.algorithms = tuple(self.algorithms)
        if not self.algorithms:
            raise InputError("pick at least one algorithm")
        if len(set(self.algorithms)) != len(self.algorithms):
            raise InputError(f"an algorithm is listed twice: {self.algorithms}")
        for a in self.algorithms:
            if parse_algorithm(a)[1] and not self.post_serving:
                raise InputError(f"{a} needs post-serving context; set post_serving=True or drop "
                                 "the '+PS'")
        if not 0 < self.fast_refit_growth <= 10:
            raise InputError("fast_refit_growth must be in (0, 10]")
        if self.predictor_batch < 8 or self.predictor_hidden < 1 or self.predictor_epochs < 1:
            raise InputError("predictor_batch >= 8, predictor_hidden >= 1, predictor_epochs >= 1")
        for name in ("max_seconds", "max_bytes"):
            if not float(getattr(self, name)) > 0:
                raise InputError(f"{name} must be > 0 (got {getattr(self, name)!r})")
        if self.max_round_steps is not None and self.max_round_steps < 1:
            raise InputError(f"max_round_steps must be >= 1 or None (got {self.max_round_steps!r})")

    # ------------------------------------------------------------------ derived quantities
    @property
    def e_dim(self) -> int:
        """Post-serving dimension actually simulated (0 without post-serving context)."""
        if not self.post_serving:
            return 0
        return int(self.e) if self.e is not None else post_dim(self.phi, self.d)

    @property
    def seeds(self) -> list[int]:
        """The run seeds: ``seed_base + 100 r`` (the reference's convention)."""
        base = reference_seed_base(self.phi) if self.seed_base is None else int(self.seed_base)
        return [base + 100 * r for r in range(self.n_seeds)]

    @property
    def uses_predictor(self) -> bool:
        """Whether any learner trains the post-serving MLP in this run."""
        return any(learns_phi(a, self.e_dim) for a in self.algorithms)

    def to_dict(self) -> dict:
        """Plain-dict view (for CSV headers, JSON, the UI)."""
        out = asdict(self)
        out["algorithms"] = list(self.algorithms)
        return out
