"""Calibrate codeprm's verdict on the validation split (never on test or CyberSecEval).

    .venv/bin/python scripts/codeprm_calibrate.py   # rewrites assets/codeprm/calibration.json

For two modes, the model alone and the model fused with the analysers (noisy-OR, see
``CodePRM.fuse``), it picks the risk-sensitive aggregation (soft minimum with tau in
{0.02, 0.05, 0.1, 0.2}, or top-k mean with k in {1, 2, 3}) with the best file-level AUROC on
val, then the threshold with the best balanced accuracy (fused: at most ``analyser_prob``, so that
a finding of the analysers always calls the file vulnerable). ``--extra-val`` adds validation files
(the shipped calibration uses the val split + the validation variants in the val hosts,
data/codeprm/val_<x>.jsonl written by benchmarks/codeprm_select.py --write-dir; the command is in
the README; never test data). ``analyser_prob`` is the fraction of
val steps flagged by the analysers that are labelled insecure. Run by codeprm_train.py at the end.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from evals.codeprm.calibration import calibrate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--assets", default="assets/codeprm")
    ap.add_argument("--val", default="data/codeprm/val.jsonl")
    ap.add_argument("--extra-val", nargs="*", default=[], help="more validation jsonl files (e.g. data/codeprm/val_v.jsonl)")
    args = ap.parse_args()
    d = Path(args.assets)
    old = json.loads((d / "calibration.json").read_text()) if (d / "calibration.json").is_file() else {}
    training = old.get("training") or {k: v for k, v in old.items() if k in ("epochs", "train_minutes", "seed", "supervision")}
    res = calibrate(d, Path(args.val), training, [Path(e) for e in args.extra_val])
    print(json.dumps({k: v for k, v in res.items() if k != "training"}, indent=1))


if __name__ == "__main__":
    main()
