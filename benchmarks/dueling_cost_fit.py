"""Fit the bandit engine's cost model (``engines/dueling/cost.py``) to runs measured on this machine.

Runs a grid of configurations that exercises each term of the model (pair selection over d and K,
the faithful and fast weighted MLE, the post-serving predictor in both modes, the per-round
Python work of the predictor path), measures each run's CPU seconds (its wall time on an unloaded
machine: every run is single-threaded), and fits the model's constants by non-negative least
squares on relative error. Prints the constants, the fit's worst ratio, and the ratio of the
current estimate to the measured time for each configuration; writes
``benchmarks/results/dueling_cost_fit.json``.

    .venv/bin/python benchmarks/dueling_cost_fit.py            # measure, fit, compare
    .venv/bin/python benchmarks/dueling_cost_fit.py --check    # compare the shipped model only
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from engines.dueling import SimConfig, preset_config, simulate
from engines.dueling.cost import FEATURES, estimate_seconds, features
from engines.dueling.experiments import PS_ALGORITHMS

OUT = Path(__file__).resolve().parent / "results" / "dueling_cost_fit.json"


def grid() -> dict[str, SimConfig]:
    """Configurations of 0.01-20 CPU seconds each, spanning the model's terms; those marked
    "(once)" are timed once."""
    lin, fig2, fig3 = ("Fig. 1 linear, stochastic delay", "Fig. 2 post-serving (abs), stochastic delay",
                       "Fig. 3 representative (abs), stochastic delay")
    g = {}
    for mode in ("faithful", "fast"):
        for T, S in ((1000, 2), (2000, 5), (4000, 2)):
            g[f"linear {mode} T={T} S={S}"] = preset_config(lin, T=T, n_seeds=S, mode=mode)
        g[f"Fig. 3 {mode} T=300 S=2"] = preset_config(fig3, T=300, n_seeds=2, mode=mode)
        g[f"Fig. 2 {mode} T=200 S=1"] = preset_config(fig2, T=200, n_seeds=1, mode=mode)
        g[f"RCDP-UCB d=20 {mode} T=2000 S=2"] = SimConfig(d=20, T=2000, n_seeds=2, mode=mode, algorithms=("RCDP-UCB",))
    g["Fig. 2 fast T=600 S=2"] = preset_config(fig2, T=600, n_seeds=2, mode="fast")
    g["Fig. 2 fast T=1500 S=1"] = preset_config(fig2, T=1500, n_seeds=1, mode="fast")
    g["Fig. 3 faithful T=600 S=1"] = preset_config(fig3, T=600, n_seeds=1)
    g["Fig. 3 faithful T=1200 S=1"] = preset_config(fig3, T=1200, n_seeds=1)
    g["Fig. 3 faithful T=2000 S=1 (once)"] = preset_config(fig3, T=2000, n_seeds=1)
    g["Fig. 2 faithful T=1000 S=1 (once)"] = preset_config(fig2, T=1000, n_seeds=1)
    for d, K in ((1, 2), (5, 50), (20, 20), (40, 10)):
        for alg in ("MaxInP", "RCDB", "CoLSTIM"):
            g[f"{alg} d={d} K={K} T=5000 S=2"] = SimConfig(d=d, K=K, T=5000, n_seeds=2, algorithms=(alg,),
                                                           delay="none")
    g["MaxPairUCB d=10 K=100 T=2000 S=2"] = SimConfig(d=10, K=100, T=2000, n_seeds=2, algorithms=("MaxPairUCB",))
    g["MaxInP d=1 K=2 T=200000 S=1"] = SimConfig(d=1, K=2, T=200_000, n_seeds=1, algorithms=("MaxInP",),
                                                 delay="none")
    return {k: dataclasses.replace(c, max_seconds=1e6, max_bytes=1e12) for k, c in g.items()}


def measure(cfg: SimConfig, repeats: int) -> float:
    """Median CPU seconds of ``repeats`` runs (numba kernels and torch already loaded)."""
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        simulate(cfg)
        times.append(time.process_time() - t0)
    return float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="compare the shipped model; fit nothing")
    a = ap.parse_args()
    simulate(SimConfig(T=5, n_seeds=1, post_serving=True, phi="abs", algorithms=PS_ALGORITHMS))  # load kernels
    rows = []
    for name, cfg in grid().items():
        cpu = measure(cfg, 1 if "(once)" in name else a.repeats)
        rows.append({"config": name, "cpu_s": cpu, "estimate_s": estimate_seconds(cfg),
                     "features": dict(zip(FEATURES, features(cfg)))})
        print(f"{name:40s} cpu {cpu:7.3f} s  estimate {rows[-1]['estimate_s']:7.3f} s  "
              f"ratio {rows[-1]['estimate_s'] / cpu:5.2f}", flush=True)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": "2-core x86_64 CPU, 24 GiB, no GPU (shared with 4 other jobs)", "runs": rows}
    if not a.check:
        from scipy.optimize import nnls

        X = np.array([[r["features"][f] for f in FEATURES] for r in rows])
        y = np.array([r["cpu_s"] for r in rows])
        coef, _ = nnls(X / y[:, None], np.ones(len(y)))  # least squares on relative error
        fit = X @ coef
        report["fit"] = dict(zip(FEATURES, coef.tolist()))
        report["fit_ratio_range"] = [float((fit / y).min()), float((fit / y).max())]
        print("\nfitted constants (paste into engines/dueling/cost.py COSTS):")
        for f, c in zip(FEATURES, coef):
            print(f"    {f!r}: {c:.3g},")
        print(f"fit / measured: {(fit / y).min():.2f} .. {(fit / y).max():.2f}")
    ratios = [r["estimate_s"] / r["cpu_s"] for r in rows]
    report["shipped_ratio_range"] = [min(ratios), max(ratios)]
    print(f"shipped estimate / measured: {min(ratios):.2f} .. {max(ratios):.2f}")
    OUT.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
