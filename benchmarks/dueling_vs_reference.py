"""Side-by-side speed (and regret) of engines.dueling against the reference code, in one run.

The reference (github.com/youngmin0oh/rcdp-public, MIT) is NOT part of this repository: write its
``contextual_dueling_bandit.py`` and the builders/``run_mapping`` of its ``experiments.py`` into
``ref/`` (git-ignored); ``benchmarks/dueling_ref_driver.py`` runs and times it (see README.md).
Both sides run with one torch thread on the same machine, one after the other.

    .venv/bin/python benchmarks/dueling_vs_reference.py            # all cases
    .venv/bin/python benchmarks/dueling_vs_reference.py --cases linear

Cases:
  linear  paper Fig. 1 configs (T=2000, d=K=10, 20 runs, strategic and stochastic delay)
  ps      paper Fig. 2 config phi=abs, adversarial delay, REDUCED to --ps-T rounds x --ps-runs runs
  big     T=10^5, 20 seeds, five algorithms, fast mode (ours only)
Outputs: a Markdown table on stdout, JSON in benchmarks/results/dueling_vs_reference.json, the regret arrays in
data/dueling/*.npz (git-ignored) for scripts/dueling_faithfulness.py.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from engines.dueling import preset_config, simulate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "dueling"
REF_NAMES = {"RCDP-UCB (Ours)": "RCDP-UCB", "ColSTIM": "CoLSTIM", "ColSTIM+PS": "CoLSTIM+PS"}


def run_reference(exp: str, delay: str, T: int, runs: int, phi: str | None) -> tuple[float, dict]:
    out = DATA / f"ref_{exp}_{phi or 'poly'}_{delay}_T{T}_r{runs}.npz"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "dueling_ref_driver.py"), exp,
           "--delay", delay, "--T", str(T), "--n_runs", str(runs), "--out", str(out)]
    cmd += ["--phi", phi] if phi else []
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT / "ref")
    wall = time.perf_counter() - t0
    z = np.load(out)
    reg = {REF_NAMES.get(str(n), str(n)): z[str(n)] for n in z["names"]}
    return float(z["seconds"]), reg | {"_wall": wall}


def run_ours(preset: str, T: int, runs: int, mode: str, repeats: int) -> tuple[list[float], dict]:
    times, res = [], None
    for _ in range(repeats):
        res = simulate(preset_config(preset, T=T, n_seeds=runs, mode=mode, max_seconds=1e5))
        times.append(res.seconds)
    tag = preset.split(",")[0].replace(" ", "_").replace(".", "")
    np.savez(DATA / f"ours_{tag}_{preset.split(', ')[1].split()[0]}_{mode}_T{T}_r{runs}.npz",
             **res.regret)
    return times, res.regret


def fmt_final(reg: dict) -> dict:
    return {k: [float(v[:, -1].mean()), float(v[:, -1].std())] for k, v in reg.items()
            if not k.startswith("_")}


def compared(case: str, mode: str, ref_s: float, ref_reg: dict, times: list[float], reg: dict) -> dict:
    """A report row for a case both sides ran: the reference's seconds, ours (median, min, max), the speed-up
    and each side's final regret."""
    median = statistics.median(times)
    return {"case": case, "mode": mode, "reference_s": ref_s, "ours_median_s": median,
            "ours_min_s": min(times), "ours_max_s": max(times), "speedup": ref_s / median,
            "reference_final": fmt_final(ref_reg), "ours_final": fmt_final(reg)}


def add_case(report: dict, row: dict) -> None:
    """Append ``row`` to the report's cases and print it as it comes."""
    report["cases"].append(row)
    print(json.dumps(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="linear,ps,big")
    ap.add_argument("--ps-T", type=int, default=1000)
    ap.add_argument("--ps-runs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default="faithful,fast", help="our modes to time in the ps case")
    a = ap.parse_args()
    torch.set_num_threads(1)
    DATA.mkdir(parents=True, exist_ok=True)
    simulate(preset_config("Fig. 2 post-serving (abs), adversarial delay", T=5, n_seeds=1))  # JIT
    report = {"machine": "2-core x86_64 CPU, 24 GiB, no GPU (shared with 4 other jobs)",
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cases": []}
    cases = a.cases.split(",")
    if "linear" in cases:
        for delay, name in (("strategic", "adversarial"), ("stochastic", "stochastic")):
            preset = f"Fig. 1 linear, {name} delay"
            ref_s, ref_reg = run_reference("linear", delay, 2000, 20, None)
            for mode in ("faithful", "fast"):
                times, reg = run_ours(preset, 2000, 20, mode, a.repeats)
                add_case(report, compared(f"linear {delay} T=2000 x 20 runs", mode, ref_s, ref_reg, times, reg))
    if "ps" in cases:
        T, R = a.ps_T, a.ps_runs
        ref_s, ref_reg = run_reference("post-serving", "strategic", T, R, "abs")
        for mode in a.modes.split(","):
            times, reg = run_ours("Fig. 2 post-serving (abs), adversarial delay", T, R, mode,
                                  1 if mode == "faithful" else a.repeats)
            add_case(report, compared(f"post-serving abs strategic T={T} x {R} runs", mode, ref_s, ref_reg,
                                      times, reg))
    if "big" in cases:
        times, reg = run_ours("Fig. 1 linear, stochastic delay", 100000, 20, "fast", 1)
        add_case(report, {"case": "linear stochastic T=100000 x 20 seeds x 5 algorithms",
                          "mode": "fast", "ours_median_s": times[0], "ours_final": fmt_final(reg)})
    out = ROOT / "benchmarks" / "results" / "dueling_vs_reference.json"
    old = json.loads(out.read_text()) if out.exists() else {"cases": []}
    keep = [c for c in old["cases"] if (c["case"], c["mode"]) not in
            {(c2["case"], c2["mode"]) for c2 in report["cases"]}]
    report["cases"] = keep + report["cases"]
    out.write_text(json.dumps(report, indent=1))
    print("\n| case | mode | reference (s) | ours median [min, max] (s) | speed-up |")
    print("|---|---|---|---|---|")
    for c in report["cases"]:
        ref = f"{c['reference_s']:.1f}" if "reference_s" in c else "-"
        sp = f"{c['speedup']:.1f}x" if "speedup" in c else "-"
        print(f"| {c['case']} | {c['mode']} | {ref} | {c['ours_median_s']:.2f} "
              f"[{c.get('ours_min_s', c['ours_median_s']):.2f}, "
              f"{c.get('ours_max_s', c['ours_median_s']):.2f}] | {sp} |")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
