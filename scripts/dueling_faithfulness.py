"""Faithfulness of engines.dueling against the reference: tables and figures.

Reads the regret arrays that ``benchmarks/dueling_vs_reference.py`` saved in data/dueling/
(reference and ours, same configurations, same run seeds) and, for the representative setting,
``ref/out/rep_abs_*_T2000_r3.npz`` (from ``ref/run_ref.py representative``), then checks the bar:
every algorithm's mean final regret lies within the reference's +/-1 std over runs, and the
ranking of the algorithms is the same. Also draws fast vs faithful.

    .venv/bin/python scripts/dueling_faithfulness.py
Writes assets/dueling/faithfulness.png, assets/dueling/fast_vs_faithful.png and prints Markdown.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from engines.dueling import preset_config, simulate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "dueling"
OUT = ROOT / "assets" / "dueling"
REF_NAMES = {"RCDP-UCB (Ours)": "RCDP-UCB", "ColSTIM": "CoLSTIM", "ColSTIM+PS": "CoLSTIM+PS"}
COLORS = {"RCDP-UCB": "#1f77b4", "RCDB": "#2ca02c", "CoLSTIM": "#ff7f0e", "MaxInP": "#9467bd",
          "MaxPairUCB": "#d62728"}


def load(path: Path) -> dict:
    z = np.load(path)
    if "names" in z:
        return {REF_NAMES.get(str(n), str(n)): z[str(n)] for n in z["names"]}
    return {k: z[k] for k in z.files}


def ours(preset: str, T: int, runs: int, mode: str) -> dict:
    tag = preset.split(",")[0].replace(" ", "_").replace(".", "")
    p = DATA / f"ours_{tag}_{preset.split(', ')[1].split()[0]}_{mode}_T{T}_r{runs}.npz"
    if p.exists():
        return load(p)
    res = simulate(preset_config(preset, T=T, n_seeds=runs, mode=mode, max_seconds=1e5))
    np.savez(p, **res.regret)
    return res.regret


def check(name: str, ref: dict, mine: dict, rows: list) -> bool:
    ok_all = True
    rank_ref = sorted(ref, key=lambda k: ref[k][:, -1].mean())
    rank_me = sorted(mine, key=lambda k: mine[k][:, -1].mean())
    for k in rank_ref:
        rm, rs = ref[k][:, -1].mean(), ref[k][:, -1].std()
        mm, ms = mine[k][:, -1].mean(), mine[k][:, -1].std()
        ok = abs(mm - rm) <= rs
        ok_all &= ok
        rows.append(f"| {name} | {k} | {rm:.0f} ± {rs:.0f} | {mm:.0f} ± {ms:.0f} | "
                    f"{(mm - rm) / max(rs, 1e-9):+.2f} | {'yes' if ok else 'NO'} |")
    same = rank_ref == rank_me
    rows.append(f"| {name} | ranking | {' < '.join(rank_ref)} | {' < '.join(rank_me)} | | "
                f"{'same' if same else 'DIFFERENT'} |")
    return ok_all and same


def curves(ax, ref: dict, mine: dict, title: str) -> None:
    for k, rk in ref.items():
        c = COLORS.get(k.replace("+PS", ""), "k")
        t = np.arange(1, rk.shape[1] + 1)
        m, s = rk.mean(0), rk.std(0)
        ax.plot(t, m, "--", color=c, lw=1.4)
        ax.fill_between(t, m - s, m + s, color=c, alpha=0.10)
        ax.plot(t, mine[k].mean(0), "-", color=c, lw=1.8, label=k)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("round t")
    ax.grid(alpha=0.3)


def main() -> None:
    torch.set_num_threads(1)
    rows = [("| config | algorithm | reference mean ± std | ours (faithful) mean ± std | "
            "(ours - ref) / ref std | within ±1 std |"), "|---|---|---|---|---|---|"]
    panels = []
    cfgs = [("linear, adversarial delay (20 runs)", "ref_linear_poly_strategic_T2000_r20.npz",
             "Fig. 1 linear, adversarial delay", 2000, 20),
            ("linear, stochastic delay (20 runs)", "ref_linear_poly_stochastic_T2000_r20.npz",
             "Fig. 1 linear, stochastic delay", 2000, 20)]
    # the post-serving comparison with the most runs (a 1-run file has no std to compare with)
    ps = sorted(DATA.glob("ref_post-serving_abs_strategic_T*_r*.npz"),
                key=lambda p: (int(p.stem.split("_r")[-1]), p.stem))
    if ps and int(ps[-1].stem.split("_r")[-1]) > 1:
        T = int(ps[-1].stem.split("_T")[1].split("_")[0])
        R = int(ps[-1].stem.split("_r")[-1])
        cfgs.append((f"post-serving abs, adversarial (T={T}, {R} runs)", ps[-1].name,
                     "Fig. 2 post-serving (abs), adversarial delay", T, R))
    for dl, nm in (("strategic", "adversarial"), ("stochastic", "stochastic")):
        p = ROOT / "ref" / "out" / f"rep_abs_{dl}_T2000_r3.npz"
        if p.exists():
            cfgs.append((f"representative abs, {nm} (3 runs)", p,
                         f"Fig. 3 representative (abs), {nm} delay", 2000, 3))
    verdicts = {}
    fast_rows = []
    for label, refp, preset, T, R in cfgs:
        refp = refp if isinstance(refp, Path) else DATA / refp
        if not refp.exists():
            print(f"missing {refp}; run benchmarks/dueling_vs_reference.py first")
            continue
        ref = load(refp)
        mine = ours(preset, T, R, "faithful")
        fast = ours(preset, T, R, "fast")
        verdicts[label] = check(label, ref, mine, rows)
        panels.append((label, ref, mine))
        fast_rows.append((label, ref, mine, fast))
    print("\n".join(rows))
    print("\nverdicts:", verdicts)
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.8))
    for ax, (label, ref, mine) in zip(np.atleast_1d(axes), panels):
        curves(ax, ref, mine, label)
    np.atleast_1d(axes)[0].set_ylabel("cumulative regret (utility units)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.suptitle("Reference (dashed, ±1 std band) vs engines.dueling faithful mode (solid), "
                 "same configs and run seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT / "faithfulness.png", dpi=90)
    plt.close(fig)
    # fast vs faithful vs reference: final regret bars
    fig, axes = plt.subplots(1, len(fast_rows), figsize=(4.2 * len(fast_rows), 3.6))
    print("\n| config | algorithm | reference | faithful | fast | fast within faithful ±1 std |")
    print("|---|---|---|---|---|---|")
    for ax, (label, ref, mine, fast) in zip(np.atleast_1d(axes), fast_rows):
        names = list(ref)
        x = np.arange(len(names))
        for j, (src, lab) in enumerate(((ref, "reference"), (mine, "faithful"), (fast, "fast"))):
            ax.bar(x + (j - 1) * 0.27, [src[k][:, -1].mean() for k in names], 0.27,
                   yerr=[src[k][:, -1].std() for k in names], capsize=2, label=lab)
        for k in names:
            fm, fs = mine[k][:, -1].mean(), mine[k][:, -1].std()
            q = fast[k][:, -1].mean()
            print(f"| {label} | {k} | {ref[k][:, -1].mean():.0f} | {fm:.0f} ± {fs:.0f} | {q:.0f} | "
                  f"{'yes' if abs(q - fm) <= fs else 'NO'} |")
        ax.set_xticks(x, [k.replace("+PS", "\n+PS") for k in names], fontsize=7)
        ax.set_title(label, fontsize=9)
    np.atleast_1d(axes)[0].set_ylabel("final cumulative regret")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "fast_vs_faithful.png", dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
