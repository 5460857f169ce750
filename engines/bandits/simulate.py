"""``simulate(config) -> SimResult``: every algorithm, every seed, one shared realisation.

The driver walks the horizon in chunks of rounds. Contexts, outcome uniforms and delay noise are
drawn once per seed (``envs.Streams``) and shown to every algorithm, so the algorithms are
compared on the same realisation. Per algorithm, a numba kernel (``kernels.run_block``) runs all
seeds. When a learner uses the post-serving predictor, the loop goes round by round: predict
phi_hat(x) for every (learner, seed) at once, run one round of every kernel, then train all the
predictor networks together (``predictor.BatchedMLP``).
"""
from __future__ import annotations

import io
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engines.bandits import kernels as kn
from engines.bandits.config import SimConfig, parse_algorithm
from engines.bandits.envs import CHUNK, Streams, apply_phi, max_delay, true_params
from engines.bandits.predictor import BatchedMLP
from engines.common.errors import InputError
from engines.common.threads import torch_threads

Progress = Callable[[float, str], None]


@dataclass
class SimResult:
    """Cumulative regret of every algorithm over every seed, plus what produced it.

    Attributes:
        config: The configuration that was run.
        regret: {algorithm: array (n_seeds, T)} of cumulative regret
            sum_s ((u*_s - u_{a_s}) + (u*_s - u_{b_s})) / 2.
        seconds: Wall-clock seconds of the run.
        diagnostics: {algorithm: {"flipped": mean flipped outcomes, "delay_used": mean total
            rounds of delay applied (the adversary's spend under "strategic"), "mean_delay": that
            per round, "mean_omega": RCDP-UCB's mean weight omega_t}}.
        exploration: Which exploration radius RCDP-UCB used, in words.
    """

    config: SimConfig
    regret: dict[str, np.ndarray]
    seconds: float
    diagnostics: dict[str, dict] = field(default_factory=dict)
    exploration: str = ""

    def final(self) -> dict[str, tuple[float, float]]:
        """{algorithm: (mean, std over seeds)} of the final cumulative regret (std with ddof=0,
        as the reference's error bars)."""
        return {k: (float(v[:, -1].mean()), float(v[:, -1].std())) for k, v in self.regret.items()}

    def table(self) -> list[dict]:
        """Rows sorted by mean final regret: algorithm, mean, std, min, max, rank."""
        rows = []
        for k, v in self.regret.items():
            f = v[:, -1]
            rows.append({"algorithm": k, "final_regret_mean": float(f.mean()),
                         "final_regret_std": float(f.std()), "min": float(f.min()),
                         "max": float(f.max())})
        rows.sort(key=lambda r: r["final_regret_mean"])
        for i, r in enumerate(rows, 1):
            r["rank"] = i
        return rows

    def to_csv(self, stride: int = 1) -> str:
        """Tidy CSV (round, regret, method, run, seed) like the reference's, every ``stride`` rounds."""
        buf = io.StringIO()
        buf.write("round,regret,method,run,seed\n")
        T = self.config.T
        rounds = np.unique(np.r_[np.arange(stride - 1, T, stride), T - 1])
        seeds = self.config.seeds
        for k, v in self.regret.items():
            for r in range(v.shape[0]):
                for t in rounds:
                    buf.write(f"{t + 1},{v[r, t]:.6g},{k},{r},{seeds[r]}\n")
        return buf.getvalue()

    def __repr__(self) -> str:
        f = ", ".join(f"{k}={m:.1f}±{s:.1f}" for k, (m, s) in self.final().items())
        return f"SimResult(T={self.config.T}, seeds={self.config.n_seeds}, {f}, {self.seconds:.1f}s)"


# ----------------------------------------------------------------------------- cost model
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
        base, ps = parse_algorithm(name)
        p = d + e if (ps or (base == "RCDP-UCB" and e > 0)) else d
        n_pred += int(ps or (base == "RCDP-UCB" and e > 0))
        total += S * T * (_C_STEP + _C_ROUND * (K * p * p + K * K * p))
        if base == "RCDP-UCB":
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
        base, ps = parse_algorithm(name)
        uses = ps or (base == "RCDP-UCB" and e > 0)
        p = d + e if uses else d
        n_pred += int(uses)
        total += 8.0 * S * (T + p * p + R * (p + 5))
        if base == "RCDP-UCB":
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


def _params(cfg: SimConfig, base: str, ps: bool, p: int) -> np.ndarray:
    """Per-algorithm constants, with the reference's calibration (experiments.py)."""
    prm = np.zeros(kn.N_PARAMS)
    C_fix = cfg.robust_C
    rcdb_alpha = math.sqrt(p) / (math.sqrt(cfg.kappa) * C_fix)
    rcdb_beta = math.sqrt(p) + rcdb_alpha * C_fix
    if base == "RCDP-UCB":
        mu = cfg.robust_mu
        D = max(math.sqrt(cfg.robust_Lambda), mu) if mu > 0 else math.sqrt(cfg.robust_Lambda)
        prm[kn.P_EXPLORE] = cfg.rcdp_alpha
        prm[kn.P_BETA_T] = 1.0 if cfg.exploration == "beta_t" else 0.0
        prm[kn.P_WALPHA] = math.sqrt(p) / (cfg.robust_C + D + 1e-6)
    elif base == "RCDB":
        prm[kn.P_EXPLORE] = rcdb_beta
        prm[kn.P_WALPHA] = rcdb_alpha
    elif base == "MaxInP":
        prm[kn.P_EXPLORE] = rcdb_beta if ps else cfg.baseline_alpha
    elif base == "MaxPairUCB":
        prm[kn.P_EXPLORE] = rcdb_beta if ps else math.sqrt(p)
    elif base == "CoLSTIM":
        prm[kn.P_EXPLORE] = cfg.baseline_alpha
    prm[kn.P_KAPPA] = cfg.kappa
    prm[kn.P_LAMBDA] = cfg.lambda_reg
    prm[kn.P_DELTA] = 0.05
    prm[kn.P_MLE_FAST] = 1.0 if cfg.mode == "fast" else 0.0
    prm[kn.P_GROWTH] = cfg.fast_refit_growth
    prm[kn.P_CORR_C] = cfg.corruption_budget if cfg.corruption == "strategic" else 0
    prm[kn.P_DELAY_TYPE] = {"none": kn.DELAY_NONE, "stochastic": kn.DELAY_GAUSS,
                            "geometric": kn.DELAY_GEOM, "strategic": kn.DELAY_STRATEGIC}[cfg.delay]
    prm[kn.P_DELAY_MEAN] = cfg.delay_mean
    prm[kn.P_DELAY_STD] = cfg.delay_std
    prm[kn.P_DELAY_BUDGET] = cfg.delay_budget
    prm[kn.P_DELAY_MAG] = int(math.sqrt(cfg.delay_budget))
    return prm


class _Learner:
    """Arrays of one algorithm for all seeds."""

    def __init__(self, cfg: SimConfig, name: str, R: int):
        S, T, d, e = cfg.n_seeds, cfg.T, cfg.d, cfg.e_dim
        self.name = name
        self.base, self.ps = parse_algorithm(name)
        self.kind = kn.KIND[self.base]
        self.uses_pred = e > 0 and (self.ps or self.base == "RCDP-UCB")
        self.p = p = d + e if self.uses_pred else d
        self.prm = _params(cfg, self.base, self.ps, p)
        self.theta = np.zeros((S, p))
        self.Ainv = np.tile(np.eye(p) / cfg.lambda_reg, (S, 1, 1))
        self.corr = np.zeros(S, dtype=np.int64)
        self.delay_total = np.zeros(S)
        self.cum = np.zeros(S)
        self.regret = np.zeros((S, T))
        self.q_dz = np.zeros((S, R, p))
        self.q_o = np.zeros((S, R))
        self.q_w = np.zeros((S, R))
        self.head = np.full((S, R), -1, dtype=np.int64)
        self.tail = np.full((S, R), -1, dtype=np.int64)
        self.nxt = np.full((S, R), -1, dtype=np.int64)
        hT = T if self.kind == kn.RCDP else 1
        self.h_dz = np.zeros((S, hT, p))
        self.h_o = np.zeros((S, hT))
        self.h_w = np.zeros((S, hT))
        self.n_hist = np.zeros(S, dtype=np.int64)
        self.n_refit = np.zeros(S)
        self.omega_sum = np.zeros(S)

    def run(self, t0: int, T: int, Zsel, Zobs, U, unif, dnoise, gum) -> np.ndarray:
        S, n = Zsel.shape[:2]
        arms = np.zeros((S, n, 2), dtype=np.int64)
        c = np.ascontiguousarray
        kn.run_block(self.kind, self.prm, t0, T, c(Zsel), c(Zobs), c(U), c(unif), c(dnoise), c(gum),
                     self.theta, self.Ainv, self.corr, self.delay_total, self.cum, self.regret,
                     arms, self.q_dz, self.q_o, self.q_w, self.head, self.tail, self.nxt,
                     self.h_dz, self.h_o, self.h_w, self.n_hist, self.n_refit, self.omega_sum)
        return arms


def _exploration_label(cfg: SimConfig) -> str:
    if cfg.exploration == "beta_t":
        return ("beta_t = sqrt(lambda) + (sqrt(2 p log(1 + t/(p lambda)) + 2 log(1/0.05)) + sqrt(p))"
                "/kappa (growing radius; our reading of the paper, NOT what the reference runs)")
    return f"constant c_t = {cfg.rcdp_alpha:g} (the reference's tuned constant)"


def simulate(config: SimConfig, progress: Progress | None = None) -> SimResult:
    """Run every algorithm of ``config`` over every seed; return cumulative-regret curves.

    Raises InputError (with the estimate) when the run would exceed ``config.max_seconds``,
    ``config.max_bytes`` or ``config.max_round_steps`` (:func:`check_budget`).

    >>> r = simulate(SimConfig(T=50, n_seeds=2, algorithms=("RCDP-UCB", "RCDB")))
    >>> r.regret["RCDB"].shape
    (2, 50)
    """
    if not isinstance(config, SimConfig):
        raise InputError("simulate() takes a SimConfig")
    cfg = config
    check_budget(cfg)
    # The predictor's matmuls are tiny: one intra-op thread is fastest, and on a busy machine
    # several spinning OpenMP threads can be 10x slower. Restored on exit.
    with torch_threads(1):
        return _simulate(cfg, progress)


def _simulate(cfg: SimConfig, progress: Progress | None) -> SimResult:
    t_start = time.perf_counter()
    S, T, d, e = cfg.n_seeds, cfg.T, cfg.d, cfg.e_dim
    tp = true_params(cfg)
    R = min(T + 1, max_delay(cfg) + 1)
    learners = [_Learner(cfg, a, R) for a in cfg.algorithms]
    streams = Streams(cfg, need_gumbel=any(lr.kind == kn.COLSTIM for lr in learners))
    pl = [lr for lr in learners if lr.uses_pred]
    pred = None
    if pl:
        seeds = [s * 16 + j for j in range(len(pl)) for s in cfg.seeds]
        pred = BatchedMLP(seeds, d, e, capacity=2 * T, hidden=cfg.predictor_hidden,
                          lr=cfg.predictor_lr,
                          batch=cfg.predictor_batch if cfg.mode == "fast" else None)
    sidx = np.arange(S)
    t = 0
    while t < T:
        n = min(CHUNK, T - t)
        X, unif, dnoise, gum = streams.next_chunk(n)
        if e > 0:
            if cfg.phi == "linear":
                Y = np.einsum("snkd,sde->snke", X, tp.M)
            else:
                Y = apply_phi(cfg.phi, X, e)
            U = np.einsum("snkd,sd->snk", X, tp.theta) + np.einsum("snke,se->snk", Y, tp.zeta)
            Zobs = np.concatenate([X, Y], axis=-1)
        else:
            Y = X[..., :0]
            U = np.einsum("snkd,sd->snk", X, tp.theta)
            Zobs = X
        if pred is None:
            for lr in learners:
                lr.run(t, T, X, Zobs if lr.kind == kn.RCDP else X, U, unif, dnoise, gum)
        else:
            for r in range(n):
                sl = slice(r, r + 1)
                Xr = X[:, r]
                yhat = pred.predict(np.concatenate([Xr] * len(pl))).reshape(len(pl), S, -1, e)
                xa, ya, xb, yb = [], [], [], []
                for lr in learners:
                    if lr.uses_pred:
                        j = pl.index(lr)
                        Zs = np.concatenate([Xr, yhat[j]], axis=-1)[:, None]
                    else:
                        Zs = X[:, sl]
                    arms = lr.run(t + r, T, Zs, Zobs[:, sl], U[:, sl], unif[:, sl],
                                  dnoise[:, sl], gum[:, sl])
                    if lr.uses_pred:
                        a, b = arms[:, 0, 0], arms[:, 0, 1]
                        xa.append(Xr[sidx, a]); ya.append(Y[sidx, r, a])
                        xb.append(Xr[sidx, b]); yb.append(Y[sidx, r, b])
                pred.add(np.concatenate(xa), np.concatenate(ya), np.concatenate(xb),
                         np.concatenate(yb))
                pred.train_steps(cfg.predictor_epochs)
                if progress is not None and (t + r) % 50 == 0:
                    progress((t + r + 1) / T, f"round {t + r + 1}/{T}")
        t += n
        if progress is not None:
            progress(t / T, f"round {t}/{T}")
    diag = {}
    for lr in learners:
        dd = {"flipped": float(lr.corr.mean()), "delay_used": float(lr.delay_total.mean()),
              "mean_delay": float(lr.delay_total.mean() / T)}
        if lr.kind == kn.RCDP:
            dd["mean_omega"] = float(lr.omega_sum.mean() / T)
        diag[lr.name] = dd
    return SimResult(cfg, {lr.name: lr.regret for lr in learners},
                     time.perf_counter() - t_start, diag, _exploration_label(cfg))

