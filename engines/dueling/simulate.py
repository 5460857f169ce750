"""``simulate(config) -> SimResult``: every algorithm, every seed, one shared realisation.

The driver walks the horizon in chunks of rounds. Contexts, outcome uniforms and delay noise are
drawn once per seed (``envs.Streams``) and shown to every algorithm, so the algorithms are
compared on the same realisation. Per algorithm, a numba kernel (``kernels.run_block``, compiled
ahead of time where it is built: ``engines.dueling.aot``) runs all seeds. When a learner uses the post-serving predictor, the loop goes round by round: predict
phi_hat(x) for every (learner, seed) at once, run one round of every kernel, then train all the
predictor networks together (``predictor.BatchedMLP``).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engines.common.errors import InputError
from engines.dueling.algorithms import (
    ALGORITHMS,
    COLSTIM,
    DELAY_CODES,
    RCDP,
    feature_dim,
    learns_phi,
    pack_params,
    parse_algorithm,
)
from engines.dueling.config import SimConfig
from engines.dueling.cost import check_budget
from engines.dueling.envs import CHUNK, Streams, apply_phi, max_delay, true_params

Progress = Callable[[float, str], None]


def kernel_params(cfg: SimConfig, name: str) -> np.ndarray:
    """The parameter vector the kernels read for learner ``name`` in ``cfg`` (layout ``algorithms.PARAM_NAMES``)."""
    base, _ = parse_algorithm(name)
    uses = learns_phi(name, cfg.e_dim)
    explore, walpha = ALGORITHMS[base].calibrate(cfg, uses, feature_dim(name, cfg.d, cfg.e_dim))
    return pack_params(
        explore=explore, walpha=walpha,
        beta_t=1.0 if ALGORITHMS[base].kind == RCDP and cfg.exploration == "beta_t" else 0.0,
        kappa=cfg.kappa, lambda_reg=cfg.lambda_reg, delta=0.05,
        mle_fast=1.0 if cfg.mode == "fast" else 0.0, growth=cfg.fast_refit_growth,
        corr_c=cfg.corruption_budget if cfg.corruption == "strategic" else 0,
        delay_type=DELAY_CODES[cfg.delay], delay_mean=cfg.delay_mean, delay_std=cfg.delay_std,
        delay_budget=cfg.delay_budget, delay_mag=int(math.sqrt(cfg.delay_budget)))


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
        T = self.config.T
        idx = np.unique(np.r_[np.arange(stride - 1, T, stride), T - 1])
        rounds = (idx + 1).tolist()
        parts = ["round,regret,method,run,seed\n"]
        for k, v in self.regret.items():
            for r, seed in enumerate(self.config.seeds):
                row = "%d,%.6g" + f",{k},{r},{seed}\n".replace("%", "%%")  # one printf-style template a row
                parts.append("".join([row % tx for tx in zip(rounds, v[r, idx].tolist())]))
        return "".join(parts)

    def to_dict(self, points: int = 0) -> dict:
        """The result as plain JSON-ready data: the configuration, the final-regret table (rows as
        :meth:`table`), the diagnostics, the run time, and with ``points`` > 0 the mean and std
        curves over seeds at up to ``points`` evenly spaced rounds (the last round included).

        >>> r = simulate(SimConfig(T=30, n_seeds=2, algorithms=("MaxInP",)))
        >>> d = r.to_dict(points=3)
        >>> d["table"][0]["algorithm"], d["curves"]["round"]
        ('MaxInP', [1, 15, 30])
        """
        out = {"config": self.config.to_dict(), "seconds": round(self.seconds, 3),
               "exploration": self.exploration,
               "table": [{k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}
                         for row in self.table()],
               "diagnostics": {k: {m: round(v, 6) for m, v in dg.items()} for k, dg in self.diagnostics.items()}}
        if points > 0:
            T = self.config.T
            idx = np.unique(np.linspace(0, T - 1, min(T, points)).round().astype(np.int64))
            out["curves"] = {"round": (idx + 1).tolist(),
                             "mean": {k: np.round(v[:, idx].mean(0), 6).tolist() for k, v in self.regret.items()},
                             "std": {k: np.round(v[:, idx].std(0), 6).tolist() for k, v in self.regret.items()}}
        return out

    def __repr__(self) -> str:
        f = ", ".join(f"{k}={m:.1f}±{s:.1f}" for k, (m, s) in self.final().items())
        return f"SimResult(T={self.config.T}, seeds={self.config.n_seeds}, {f}, {self.seconds:.1f}s)"


class _Learner:
    """Arrays of one algorithm for all seeds."""

    def __init__(self, cfg: SimConfig, name: str, R: int):
        S, T, d, e = cfg.n_seeds, cfg.T, cfg.d, cfg.e_dim
        self.name = name
        self.kind = ALGORITHMS[parse_algorithm(name)[0]].kind
        self.uses_pred = learns_phi(name, e)
        self.p = p = d + e if self.uses_pred else d
        self.prm = kernel_params(cfg, name)
        from engines.dueling.aot import run_block  # the kernel loads with the first run, not on import

        self._kernel = run_block()
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
        hT = T if self.kind == RCDP else 1
        self.h_dz = np.zeros((S, p, hT))
        self.h_o = np.zeros((S, hT))
        self.h_w = np.zeros((S, hT))
        self.n_hist = np.zeros(S, dtype=np.int64)
        self.n_refit = np.zeros(S)
        self.omega_sum = np.zeros(S)

    def run(self, t0: int, T: int, Zsel, Zobs, U, unif, dnoise, gum) -> np.ndarray:
        S, n = Zsel.shape[:2]
        arms = np.zeros((S, n, 2), dtype=np.int64)
        c = np.ascontiguousarray
        self._kernel(self.kind, self.prm, t0, T, c(Zsel), c(Zobs), c(U), c(unif), c(dnoise), c(gum),
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
    if not cfg.uses_predictor:
        return _simulate(cfg, progress)  # numpy and numba only: torch is never imported
    from engines.common.threads import torch_threads

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
    streams = Streams(cfg, need_gumbel=any(lr.kind == COLSTIM for lr in learners))
    pl = [lr for lr in learners if lr.uses_pred]
    pred = None
    if pl:
        from engines.dueling.predictor import BatchedMLP

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
                lr.run(t, T, X, Zobs if lr.kind == RCDP else X, U, unif, dnoise, gum)
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
        if lr.kind == RCDP:
            dd["mean_omega"] = float(lr.omega_sum.mean() / T)
        diag[lr.name] = dd
    return SimResult(cfg, {lr.name: lr.regret for lr in learners},
                     time.perf_counter() - t_start, diag, _exploration_label(cfg))

