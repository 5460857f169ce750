"""Evaluate a saved SLD head on a feature cache's test split, its stop policy picked on that cache's
dev split by the same rule as training (one command; used for the data-scaling run).

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/guardrail_evaluate.py assets/guardrail/sld_head.pt \\
        --cache data/guardrail_v2 --out data/guardrail_v2/shipped_head_metrics.json

The head is only read: nothing is trained, and the dev split alone decides the threshold and
patience. Writes the same per-view report as ``metrics.json["test"]``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from engines.guardrail.export import load_head
from evals.guardrail.paths import DATA
from evals.guardrail.train import (
    dev_policy,
    evaluate,
    load_cache,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("head", type=Path)
    ap.add_argument("--cache", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    head = load_head(args.head)
    exs = load_cache(args.cache)
    dev = [e for e in exs if e.split == "dev"]
    test = [e for e in exs if e.split == "test"]
    thr, pat, reps = dev_policy(head, dev)
    dev_f1 = float(np.mean([r["f1"] for r in reps.values()]))
    report = evaluate(head, test, thr, pat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"head": str(args.head), "cache": str(args.cache), "threshold": thr,
                                    "patience": pat, "dev_mean_f1": dev_f1, "test": report}, indent=2))
    print(f"dev mean F1 {dev_f1:.4f} (thr {thr}, patience {pat}); "
          + " ".join(f"TEST {v} F1 {r['f1']:.3f}" for v, r in report.items()))


if __name__ == "__main__":
    main()
