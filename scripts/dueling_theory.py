"""Theory checks: regret vs T (log-log slope, clean setting), vs corruption budget C, vs the
adversarial delay budget Lambda. Paper claim: R_T = O~(d (sqrt T + C + D)), D = max(sqrt Lambda, mu).

    .venv/bin/python scripts/dueling_theory.py [--seeds 10] [--Tmax 20000]
Writes the figure the tab shows, assets/dueling/theory.png, and its numbers to
data/dueling/theory.json (recorded copy: benchmarks/results/dueling_theory.json); prints Markdown.
Seeds: the reference's convention (42 + 999 + 100 r for phi=polynomial), fixed.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from engines.dueling import SimConfig, loglog_slope, sweep

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "assets" / "dueling"
DATA = ROOT / "data" / "dueling"
COLORS = {"RCDP-UCB": "#1f77b4", "RCDB": "#2ca02c", "CoLSTIM": "#ff7f0e", "MaxInP": "#9467bd",
          "MaxPairUCB": "#d62728"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--Tmax", type=int, default=20000)
    a = ap.parse_args()
    torch.set_num_threads(1)
    out = {}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    # (a) clean setting: no delay, no corruption, no post-serving context
    Ts = np.unique(np.geomspace(250, a.Tmax, 8).astype(int)).tolist()
    out["T"] = {}
    for expl, ls in (("constant", "-"), ("beta_t", ":")):
        clean = SimConfig(T=a.Tmax, n_seeds=a.seeds, delay="none", corruption="none",
                          mode="fast", exploration=expl, max_seconds=1e4,
                          algorithms=("RCDP-UCB",) if expl == "beta_t" else
                          ("RCDP-UCB", "RCDB", "CoLSTIM", "MaxInP", "MaxPairUCB"))
        sw = sweep(clean, "T", Ts)
        for k in sw.mean:
            half = [i for i, t in enumerate(Ts) if t >= a.Tmax / 16]
            slope = loglog_slope(np.array(Ts)[half], sw.mean[k][half])
            key = f"{k} ({expl})"
            out["T"][key] = {"slope_T>=Tmax/16": slope, "mean": sw.mean[k].tolist()}
            axes[0].loglog(Ts, sw.mean[k], ls, marker="o", ms=3, color=COLORS[k],
                           label=f"{key}: slope {slope:.2f}")
    t = np.array(Ts, float)
    ref = out["T"]["RCDP-UCB (constant)"]["mean"][-1]
    axes[0].loglog(t, ref * np.sqrt(t / t[-1]), "k--", lw=0.8, label="slope 0.5 guide")
    axes[0].set_xlabel("horizon T (rounds)")
    axes[0].set_ylabel("cumulative regret (utility units)")
    axes[0].set_title(f"clean setting, d=K=10, {a.seeds} seeds (fast mode)", fontsize=9)
    axes[0].legend(fontsize=6)
    # (b) regret vs corruption budget C, adversarial delay Lambda = 1e4 fixed
    base = SimConfig(T=2000, n_seeds=a.seeds, delay="strategic", mode="faithful", max_seconds=1e4)
    Cs = [0, 25, 50, 100, 200, 400]
    sc = sweep(base, "corruption_budget", Cs)
    out["C"] = {k: {"mean": sc.mean[k].tolist(), "std": sc.std[k].tolist(),
                    "slope_per_flip": float(np.polyfit(Cs, sc.mean[k], 1)[0])} for k in sc.mean}
    for k in sc.mean:
        axes[1].errorbar(Cs, sc.mean[k], yerr=sc.std[k], marker="o", capsize=2, color=COLORS[k],
                         label=f"{k}: {out['C'][k]['slope_per_flip']:.2f}/flip")
    axes[1].set_xlabel("corruption budget C (flipped outcomes)")
    axes[1].set_title("final regret vs C (T=2000, Lambda=1e4, faithful)", fontsize=9)
    axes[1].legend(fontsize=7)
    # (c) regret vs adversarial delay budget Lambda, C = 25
    Ls = [0, 2500, 10000, 40000, 160000]
    sl = sweep(base, "delay_budget", Ls)
    out["Lambda"] = {k: {"mean": sl.mean[k].tolist(), "std": sl.std[k].tolist(),
                         "ratio_max_over_min_Lambda": float(sl.mean[k][-1] / sl.mean[k][0])}
                     for k in sl.mean}
    for k in sl.mean:
        axes[2].errorbar(np.array(Ls) + 1, sl.mean[k], yerr=sl.std[k], marker="o", capsize=2,
                         color=COLORS[k], label=k)
    axes[2].set_xscale("log")
    axes[2].set_xlabel("adversarial delay budget Lambda + 1 (rounds)")
    axes[2].set_title("final regret vs Lambda (T=2000, C=25, faithful)", fontsize=9)
    axes[2].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(OUT / "theory.png", dpi=90)
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "theory.json").write_text(json.dumps(out, indent=1))
    print("| curve | log-log slope (T >= Tmax/16) |\n|---|---|")
    for k, v in out["T"].items():
        print(f"| {k} | {v['slope_T>=Tmax/16']:.3f} |")
    print("\n| algorithm | " + " | ".join(f"C={c}" for c in Cs) + " | fitted regret per flip |")
    print("|---" * (len(Cs) + 2) + "|")
    for k, v in out["C"].items():
        print(f"| {k} | " + " | ".join(f"{m:.0f}" for m in v["mean"]) +
              f" | {v['slope_per_flip']:.2f} |")
    print("\n| algorithm | " + " | ".join(f"Lambda={x}" for x in Ls) + " | ratio last/first |")
    print("|---" * (len(Ls) + 2) + "|")
    for k, v in out["Lambda"].items():
        print(f"| {k} | " + " | ".join(f"{m:.0f}" for m in v["mean"]) +
              f" | {v['ratio_max_over_min_Lambda']:.2f} |")


if __name__ == "__main__":
    main()
