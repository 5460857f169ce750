"""Driver for the reference code (ours, not the reference's): time its ``run_mapping`` on one
configuration and save the regret curves.

The reference (github.com/youngmin0oh/rcdp-public, MIT) is not in this repository. Put its
``contextual_dueling_bandit.py`` and an ``experiments.py`` holding its learner builders,
environment factories and ``run_mapping`` (copied as read) into ``ref/`` (git-ignored), then:

    .venv/bin/python benchmarks/dueling_ref_driver.py linear --delay strategic --n_runs 20 --out /tmp/x.npz

Runs with one torch thread, like benchmarks/dueling_vs_reference.py runs ours.
"""
import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

REF = Path(__file__).resolve().parents[1] / "ref"


def _load(name: str):
    """Import ``ref/<name>.py`` under its own name (the reference's modules import each other)."""
    spec = importlib.util.spec_from_file_location(name, REF / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_load("contextual_dueling_bandit")
X = _load("experiments")  # the reference's, from ref/

ap = argparse.ArgumentParser()
ap.add_argument("exp"); ap.add_argument("--delay", default="stochastic")
ap.add_argument("--phi", default=None); ap.add_argument("--T", type=int, default=2000)
ap.add_argument("--n_runs", type=int, default=5); ap.add_argument("--d", type=int, default=10)
ap.add_argument("--K", type=int, default=10); ap.add_argument("--C", type=int, default=25)
ap.add_argument("--mag", type=int, default=10000); ap.add_argument("--mean", type=float, default=100.)
ap.add_argument("--std", type=float, default=100.); ap.add_argument("--out", required=True)
ap.add_argument("--threads", type=int, default=1)
a = ap.parse_args()
torch.set_num_threads(a.threads)
phi = a.phi or ("polynomial" if a.exp == "linear" else "abs")
e = 0 if a.exp == "linear" else X.post_dim(phi, a.d)
cfg = {"d": a.d, "K": a.K, "corruption_budget": a.C, "mean": a.mean, "std": a.std,
       "delay_mag": a.mag, "delay_type": a.delay}
t0 = time.perf_counter()
names, reg = X.run_mapping(a.exp, cfg, a.d, e, a.K, phi, a.T, a.n_runs)
sec = time.perf_counter() - t0
np.savez(a.out, names=np.array(names), seconds=sec, **{n: reg[n] for n in names})
print(json.dumps({"seconds": sec, **{n: [float(reg[n][:, -1].mean()), float(reg[n][:, -1].std())] for n in names}}))
