"""Replay the reference's own random stream through our kernels (strategic delay, no predictor).

With adversarial delay and no post-serving context the reference consumes its global numpy
stream in a fixed order per round: contexts uniform(-pi, pi, (K, d)), [CoLSTIM: rand(), gumbel(K)],
then rand() for the outcome. We rebuild that stream from ``np.random.seed(run_seed)`` and feed it
to the engine's kernels, then compare with the regret curves the reference code itself produced
(``ref/run_ref.py linear --delay strategic``; the reference is not part of this repository).

    .venv/bin/python scripts/dueling_reference_replay.py ref/out/lin_strat20.npz
    .venv/bin/python scripts/dueling_reference_replay.py --runs 100

With ``--runs N`` (no reference file needed) it replays the reference's streams for N runs
(bit-identical to the reference code for RCDP-UCB, CoLSTIM and MaxInP, see the first mode) and
compares the ranking with our independent-stream simulation on the same N run seeds: with many
runs both orders agree where the algorithms truly differ.
"""
from __future__ import annotations

import sys

import numpy as np

from engines.dueling.experiments import preset_config
from engines.dueling.simulate import _Learner

REF_NAMES = {"RCDP-UCB (Ours)": "RCDP-UCB", "RCDB": "RCDB", "ColSTIM": "CoLSTIM",
             "MaxInP": "MaxInP", "MaxPairUCB": "MaxPairUCB"}


def replay(name: str, run_idx: int, T: int = 2000) -> np.ndarray:
    cfg = preset_config("Fig. 1 linear, adversarial delay", n_seeds=run_idx + 1, T=T,
                        algorithms=(name,))
    seed, d, K = cfg.seeds[run_idx], cfg.d, cfg.K
    rs = np.random.RandomState(seed)
    theta = rs.randn(d) * 0.1
    rs.randn(0)
    X = np.empty((T, K, d)); unif = np.empty(T); gum = np.zeros((T, K))
    for t in range(T):
        X[t] = rs.uniform(-np.pi, np.pi, size=(K, d))
        if name == "CoLSTIM":
            rs.rand()
            gum[t] = rs.gumbel(0.0, 1.0, size=K)
        unif[t] = rs.rand()
    import dataclasses
    cfg1 = dataclasses.replace(cfg, n_seeds=1)
    lr = _Learner(cfg1, name, R=min(T + 1, int(np.sqrt(cfg.delay_budget)) + 1))
    U = X @ theta
    lr.run(0, T, X[None], X[None], U[None], unif[None], np.zeros((1, T)), gum[None])
    return lr.regret[0]


def main(path: str) -> None:
    ref = np.load(path)
    n_runs = ref["RCDB"].shape[0]
    print("| algorithm | runs with identical curves (max abs diff < 1e-6) | max abs diff of final regret |")
    print("|---|---|---|")
    for rname, ours in REF_NAMES.items():
        same, worst = 0, 0.0
        for r in range(n_runs):
            got = replay(ours, r)
            diff = np.abs(got - ref[rname][r]).max()
            same += diff < 1e-6
            worst = max(worst, abs(got[-1] - ref[rname][r][-1]))
        print(f"| {ours} | {same}/{n_runs} | {worst:.3g} |")


def many(n_runs: int) -> None:
    from engines.dueling import simulate
    cfg = preset_config("Fig. 1 linear, adversarial delay", n_seeds=n_runs)
    ours = simulate(cfg).regret
    print(f"| algorithm | reference streams, {n_runs} runs | independent streams, {n_runs} runs |")
    print("|---|---|---|")
    rep = {}
    for name in REF_NAMES.values():
        f = np.array([replay(name, r)[-1] for r in range(n_runs)])
        rep[name] = f.mean()
        o = ours[name][:, -1]
        print(f"| {name} | {f.mean():.0f} ± {f.std():.0f} | {o.mean():.0f} ± {o.std():.0f} |")
    print("ranking, reference streams:  ", " < ".join(sorted(rep, key=rep.get)))
    print("ranking, independent streams:", " < ".join(sorted(ours, key=lambda k: ours[k][:, -1].mean())))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--runs":
        many(int(sys.argv[2]))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "ref/out/lin_strat20.npz")
