"""Environments: post-serving mappings, true parameters, and seeded random streams.

Everything here follows the reference environment (``ContextualDuelingBanditEnv`` in
github.com/youngmin0oh/rcdp-public/contextual_dueling_bandit.py, MIT):

* pre-serving contexts x ~ Uniform[-pi, pi]^d, K per round;
* post-serving contexts y = phi(x), tiled or cut to e columns (the "linear" mapping is x @ M);
* utility u = <theta*, x> + <zeta*, y> with theta* ~ N(0, 0.1^2 I_d), zeta* ~ N(0, 5^2 I_e),
  drawn from ``np.random.RandomState(run_seed)`` exactly as the reference draws them, so every
  run faces the reference's own true parameters;
* Bradley-Terry-Luce link P(a beats b) = sigmoid(u_a - u_b).

Difference from the reference (stated in the UI): the reference draws contexts, outcomes, delays
and CoLSTIM's perturbations from one global numpy stream, so the realisation an algorithm sees
depends on what it did (a corrupted sample skips a delay draw; CoLSTIM's Gumbel draws shift every
later context). Here each seed has four independent streams (contexts, outcome uniforms, delay
noise, perturbations) so every algorithm faces exactly the same contexts and noise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.dueling.config import SimConfig

#: Rounds generated per chunk; fixed so the realisation does not depend on the execution mode.
CHUNK = 256
_STREAM_CONTEXT, _STREAM_OUTCOME, _STREAM_DELAY, _STREAM_PERTURB = 0, 1, 2, 3


def apply_phi(phi: str, X: np.ndarray, e: int, M: np.ndarray | None = None) -> np.ndarray:
    """Post-serving contexts y = phi(x) over the last axis of ``X``, cut or tiled to ``e`` columns.

    Mirrors the reference's ``get_true_post_context`` for all seven mappings.

    >>> X = np.array([[[-1.0, 2.0]]])
    >>> apply_phi("abs", X, 3)
    array([[[1., 2., 1.]]])
    """
    if e == 0:
        return X[..., :0]
    if phi == "sinusoidal":
        raw = np.concatenate([np.cos(X), np.sin(X)], axis=-1)
    elif phi == "piecewise":
        raw = X * (X > 0) + 0.5 * X * (X <= 0)
    elif phi == "linear":
        if M is None:
            raise ValueError("the linear mapping needs its matrix M")
        return X @ M
    elif phi == "polynomial":
        raw = np.concatenate([X ** 2, np.sqrt(np.abs(X))], axis=-1)
    elif phi == "interaction":
        d = X.shape[-1]
        iu, ju = np.triu_indices(d)
        raw = X[..., iu] * X[..., ju]
    elif phi == "abs":
        raw = np.abs(X)
    elif phi == "cosine":
        raw = np.cos(X)
    else:
        raise ValueError(f"unknown phi {phi!r}")
    m = raw.shape[-1]
    if m >= e:
        return raw[..., :e]
    reps = int(np.ceil(e / m))
    return np.concatenate([raw] * reps, axis=-1)[..., :e]


@dataclass
class TrueParams:
    """True preference parameters of every seed: theta* (S, d), zeta* (S, e), M (S, d, e) or None."""

    theta: np.ndarray
    zeta: np.ndarray
    M: np.ndarray | None


def true_params(cfg: SimConfig) -> TrueParams:
    """Draw theta*, zeta* (and M for phi="linear") per seed exactly as the reference does.

    The reference seeds the global numpy stream with ``run_seed`` and draws
    ``randn(d) * 0.1``, ``randn(e) * 5.0`` and then (linear mapping) ``randn(d, e)``.

    >>> p = true_params(SimConfig(n_seeds=2))
    >>> p.theta.shape, p.zeta.shape
    ((2, 10), (2, 0))
    """
    d, e = cfg.d, cfg.e_dim
    th, ze, Ms = [], [], []
    for seed in cfg.seeds:
        rs = np.random.RandomState(seed)
        th.append(rs.randn(d) * 0.1)
        ze.append(rs.randn(e) * 5.0 if e > 0 else np.zeros(0))
        if cfg.phi == "linear":
            Ms.append(rs.randn(d, e))
    M = np.stack(Ms) if Ms else None
    return TrueParams(np.stack(th), np.stack(ze), M)


class Streams:
    """Per-seed random streams, generated in chunks of ``CHUNK`` rounds.

    ``next_chunk(n)`` returns contexts X (S, n, K, d), outcome uniforms (S, n), delay noise
    (S, n) (standard normal for Gaussian delays, uniform for geometric) and Gumbel perturbations
    (S, n, K) for CoLSTIM.
    """

    def __init__(self, cfg: SimConfig, need_gumbel: bool):
        self.cfg = cfg
        self.need_gumbel = need_gumbel
        mk = lambda s, k: np.random.Generator(np.random.PCG64(np.random.SeedSequence([s, k])))
        self.g_ctx = [mk(s, _STREAM_CONTEXT) for s in cfg.seeds]
        self.g_out = [mk(s, _STREAM_OUTCOME) for s in cfg.seeds]
        self.g_del = [mk(s, _STREAM_DELAY) for s in cfg.seeds]
        self.g_per = [mk(s, _STREAM_PERTURB) for s in cfg.seeds]

    def next_chunk(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        c = self.cfg
        X = np.stack([g.uniform(-np.pi, np.pi, size=(CHUNK, c.K, c.d))[:n] for g in self.g_ctx])
        U = np.stack([g.random(CHUNK)[:n] for g in self.g_out])
        if c.delay == "geometric":
            D = np.stack([g.random(CHUNK)[:n] for g in self.g_del])
        else:
            D = np.stack([g.standard_normal(CHUNK)[:n] for g in self.g_del])
        if self.need_gumbel:
            G = np.stack([g.gumbel(0.0, 1.0, size=(CHUNK, c.K))[:n] for g in self.g_per])
        else:
            G = np.zeros((len(self.g_ctx), n, 1))
        return X, U, D, G


def max_delay(cfg: SimConfig) -> int:
    """An upper bound on any delay this configuration can produce (rounds), for ring buffers.

    Gaussian delays are clamped at mean + 12 std and geometric ones at 60 means (probability
    below 1e-26 per draw); a clamped delay past the horizon changes nothing anyway.

    >>> max_delay(SimConfig(delay="strategic", delay_budget=10000))
    100
    """
    if cfg.delay == "none":
        return 0
    if cfg.delay == "strategic":
        return int(np.sqrt(cfg.delay_budget))
    if cfg.delay == "stochastic":
        return int(np.ceil(cfg.delay_mean + 12 * cfg.delay_std))
    return int(np.ceil(60 * max(cfg.delay_mean, 1.0)))
