"""The paper's experiments as presets, and sweeps for the scaling views the theory predicts.

Presets follow the reference's registry (``experiments.py`` of rcdp-public): ``linear`` (paper
Fig. 1, no post-serving context), ``post-serving`` (Fig. 2, every method learns phi),
``representative`` (Fig. 3, only RCDP-UCB uses phi) and the stochastic-delay-std ablation
(appendix), each at d = K = 10, T = 2000, C = 25, N(100, 100^2) or adversarial Lambda = 10^4.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engines.common.errors import InputError
from engines.dueling.config import BASE_ALGORITHMS, LIMITS, SimConfig
from engines.dueling.cost import check_budget, estimate_seconds
from engines.dueling.simulate import SimResult, simulate

PS_ALGORITHMS = ("RCDP-UCB", "RCDB+PS", "CoLSTIM+PS", "MaxInP+PS", "MaxPairUCB+PS")

_BASE = {"d": 10, "K": 10, "T": 2000, "corruption": "strategic", "corruption_budget": 25,
             "delay_mean": 100.0, "delay_std": 100.0, "delay_budget": 10000}

#: The paper's figures, each run under both delay regimes: (figure, what it reproduces, phi,
#: post_serving, algorithms). Fig. 1's description names its panel per delay.
_FIGURES = (
    ("Fig. 1 linear", "paper Fig. 1 ({panel}): linear utility", "polynomial", False,
     BASE_ALGORITHMS),
    ("Fig. 2 post-serving (abs)", "paper Fig. 2: every method learns phi = abs", "abs", True,
     PS_ALGORITHMS),
    ("Fig. 3 representative (abs)", "paper Fig. 3: only RCDP-UCB learns phi = abs", "abs", True,
     BASE_ALGORITHMS),
)
#: (delay regime, its name in words, the Fig. 1 panel that shows it)
_DELAYS = (("strategic", "adversarial", "left"), ("stochastic", "stochastic", "right"))

#: name -> (what it reproduces, in words a reader of the tab understands; SimConfig keyword
#: arguments). Reference commands, in order: ``main.py run linear --delay strategic|stochastic``,
#: ``run post-serving --phi abs --delay ...``, ``run representative --phi abs --delay ...``,
#: ``run std-ablation``.
PRESETS: dict[str, tuple[str, dict]] = {
    f"{figure}, {words} delay": (
        f"{about.format(panel=panel)}, {words} delay",
        dict(_BASE, phi=phi, post_serving=post_serving, delay=delay, algorithms=algorithms))
    for figure, about, phi, post_serving, algorithms in _FIGURES
    for delay, words, panel in _DELAYS
}
PRESETS["Appendix delay-std ablation (std 100)"] = (
    "the appendix delay-std ablation at std 100 (of 0/50/100/150), RCDP-UCB only",
    dict(_BASE, phi="polynomial", post_serving=False, delay="stochastic",
         algorithms=("RCDP-UCB",)))


def preset_config(name: str, **overrides) -> SimConfig:
    """The SimConfig of a preset, with keyword overrides (e.g. ``T=500, mode="fast"``).

    >>> preset_config("Fig. 1 linear, adversarial delay", n_seeds=3).delay
    'strategic'
    """
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r}; choose from: {'; '.join(PRESETS)}")
    kw = dict(PRESETS[name][1])
    kw.update(overrides)
    return SimConfig(**kw)


@dataclass
class SweepResult:
    """Final regret (mean and std over seeds) of each algorithm at each value of one parameter."""

    param: str
    values: list[float]
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    seconds: float = 0.0
    results: list[SimResult] = field(default_factory=list, repr=False)

    def rows(self) -> list[dict]:
        """One row per (value, algorithm)."""
        return [{self.param: v, "algorithm": a, "final_regret_mean": float(self.mean[a][i]),
                 "final_regret_std": float(self.std[a][i])}
                for i, v in enumerate(self.values) for a in self.mean]

    def to_dict(self) -> dict:
        """The sweep as plain JSON-ready data: ``param``, ``values``, per algorithm the ``mean`` and
        ``std`` of the final regret at each value, the same as ``rows``, ``seconds``, and each run's
        :meth:`SimResult.to_dict` (``runs``; one run over T)."""
        def r6(x: float) -> float:
            return round(float(x), 6)

        return {"param": self.param, "values": [v.item() if hasattr(v, "item") else v for v in self.values],
                "mean": {a: [r6(x) for x in m] for a, m in self.mean.items()},
                "std": {a: [r6(x) for x in s] for a, s in self.std.items()},
                "rows": [{k: r6(v) if isinstance(v, float) else v for k, v in row.items()} for row in self.rows()],
                "seconds": round(float(self.seconds), 3), "runs": [r.to_dict() for r in self.results]}


SWEEPABLE = ("corruption_budget", "delay_budget", "delay_std", "delay_mean", "d", "K")
#: How progress messages name each swept parameter (the tab's words, not the field names).
SWEEP_NAMES = {"corruption_budget": "C", "delay_budget": "Lambda", "delay_std": "delay std",
               "delay_mean": "delay mean", "d": "d", "K": "K", "T": "T"}
MAX_HORIZON = 200_000  # longest horizon a sweep over T accepts (rounds)
MAX_SWEEP_VALUES = 50  # most values one sweep takes


def sweep_values(param: str, values: Sequence[object], name: str | None = None) -> list[int | float]:
    """``values`` as ``param`` takes them: finite numbers, whole ones for a whole-number field
    (``config.LIMITS``), between 1 and ``MAX_SWEEP_VALUES`` of them; InputError otherwise, calling
    the parameter ``name`` (default: its label in the tab).

    >>> sweep_values("corruption_budget", [0, 25.0]), sweep_values("delay_std", ["50"])
    ([0, 25], [50.0])
    """
    if param not in (*SWEEPABLE, "T"):
        raise InputError(f"cannot sweep {param!r}; choose from {', '.join((*SWEEPABLE, 'T'))}")
    try:
        vals = [float(v) for v in values]  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InputError("sweep values must be numbers") from None
    if not 1 <= len(vals) <= MAX_SWEEP_VALUES:
        raise InputError(f"give between 1 and {MAX_SWEEP_VALUES} values to sweep (got {len(vals)})")
    if bad := [v for v in vals if not math.isfinite(v)]:
        raise InputError(f"{bad[0]} is not a finite number")
    if LIMITS[param].whole:
        if frac := [v for v in vals if not v.is_integer()]:
            raise InputError(f"{name or LIMITS[param].label} takes whole numbers, not {frac[0]:g}")
        return [int(v) for v in vals]
    return vals


def _sweep_configs(cfg: SimConfig, param: str, vals: list[int | float]) -> list[SimConfig]:
    """The runs a sweep makes: one per value, or over T one of the longest horizon."""
    if param == "T":
        if max(vals) > MAX_HORIZON or min(vals) < 1:
            raise InputError(f"horizons must be between 1 and {MAX_HORIZON}")
        return [dataclasses.replace(cfg, T=max(vals))]
    if param == "delay_budget" and cfg.delay != "strategic":
        raise InputError("the delay budget only acts with the adversarial delay regime: choose it first")
    return [dataclasses.replace(cfg, **{param: v}) for v in vals]


def sweep_seconds(cfg: SimConfig, param: str, values: Sequence[float]) -> float:
    """The estimated run time of :func:`sweep` (``cost.estimate_seconds`` of each of its runs).

    >>> sweep_seconds(SimConfig(T=100, n_seeds=1), "corruption_budget", [0, 10]) < 5
    True
    """
    return sum(estimate_seconds(c) for c in _sweep_configs(cfg, param, sweep_values(param, values)))


def sweep(cfg: SimConfig, param: str, values: Sequence[float],
          progress: Callable[[float, str], None] | None = None) -> SweepResult:
    """Final regret of every algorithm against one parameter: the corruption budget C, the delay
    budget Lambda, a delay's mean or std, d, K, or the horizon T.

    The learners' provisioning (robust_C, robust_Lambda, ...) stays fixed, as in the paper, so
    the curve shows the environment's effect alone. Over T it is ONE run of length max(values),
    read at each horizon: exact, not an approximation, since no learner knows T, so the regret
    after T' rounds of a longer run is the regret of a T'-round run. Refused with
    :class:`InputError` before any work when a value is invalid (:func:`sweep_values`), a horizon
    lies outside 1..``MAX_HORIZON``, the delay budget is swept without adversarial delay, or the
    estimated run time of the whole sweep (``cost.estimate_seconds``) exceeds ``cfg.max_seconds``.

    >>> s = sweep(SimConfig(T=30, n_seeds=2, algorithms=("RCDP-UCB",)), "corruption_budget", [0, 5])
    >>> s.mean["RCDP-UCB"].shape
    (2,)
    >>> sweep(SimConfig(T=40, n_seeds=2, algorithms=("MaxInP",)), "T", [10, 40]).values
    [10.0, 40.0]
    """
    vals = sweep_values(param, values)
    configs = _sweep_configs(cfg, param, vals)
    for c in configs:
        check_budget(dataclasses.replace(c, max_seconds=float("inf")))  # rounds and memory, per run
    total = sum(estimate_seconds(c) for c in configs)
    if total > cfg.max_seconds:
        raise InputError(f"this sweep would take about {total / 60:.0f} min here (cap "
                         f"{cfg.max_seconds / 60:.0f} min): use fewer values, seeds or rounds"
                         + (", or mode 'fast'" if cfg.mode == "faithful" else ""))
    if param == "T":
        res = simulate(configs[0], progress)
        idx = np.array(sorted(set(vals))) - 1
        return SweepResult("T", [float(t + 1) for t in idx], {a: v[:, idx].mean(0) for a, v in res.regret.items()},
                           {a: v[:, idx].std(0) for a, v in res.regret.items()}, res.seconds, [res])
    results, seconds = [], 0.0
    for i, (v, c) in enumerate(zip(vals, configs)):
        sub = None
        if progress is not None:
            def sub(f, msg, i=i, v=v):
                progress((i + f) / len(vals), f"{SWEEP_NAMES[param]} = {v:g}: {msg}")
        res = simulate(c, sub)
        seconds += res.seconds
        results.append(res)
    mean = {a: np.array([r.regret[a][:, -1].mean() for r in results]) for a in results[0].regret}
    std = {a: np.array([r.regret[a][:, -1].std() for r in results]) for a in results[0].regret}
    return SweepResult(param, [float(v) for v in vals], mean, std, seconds, results)


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (regret ~ T^slope).

    >>> round(loglog_slope([100, 400, 1600], [10, 20, 40]), 3)
    0.5
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 2:
        raise InputError("need at least two positive points for a log-log slope")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def std_ablation(stds: Sequence[float] = (0, 50, 100, 150), T: int = 2000, n_seeds: int = 5,
                 mode: str = "faithful") -> dict[float, SimResult]:
    """RCDP-UCB under N(100, std^2) delays (reference ``_run_std_ablation``: seeds 42 + 10 std +
    100 r, d = K = 10, no post-serving context, C = 25)."""
    out = {}
    for sd in stds:
        cfg = preset_config("Appendix delay-std ablation (std 100)", delay_std=float(sd), T=T,
                            n_seeds=n_seeds, mode=mode, seed_base=42 + int(sd) * 10)
        out[float(sd)] = simulate(cfg)
    return out
