"""Model selection for codeprm on VALIDATION data only: the val split + the held-out variant "v".

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/codeprm_select.py OLD_ASSETS NEW_ASSETS

The sets with role "validation" in ``evals/codeprm/registry.py`` (``VALIDATION``) are embedded the same way in the val hosts and reported beside v.

Variant v (evals/codeprm/heldout_v.py) is embedded like the test variants: each vulnerable /
fixed pair of data/codeprm/val.jsonl (variant b, val-package hosts or standalone) keeps its host
and family, and the variant-b template is swapped for the variant-v template of that family
(benchmarks/codeprm_eval.py ``variant_items``, seed 20261199). For each asset folder it reports,
model alone and fused with the analysers (each at its own calibrated threshold): val-split file
AUROC, v file AUROC, v pair accuracy and v prefix-50 % AUROC. The new assets are shipped only
if they beat the old ones here. Test data (the test split's hosts, variants c, d and the sets with role "test") is never read.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from engines.codeprm.engine import CodePRM
from evals.codeprm import registry
from evals.codeprm.embed import pair_acc, prefix, variant_items

ROOT = Path(__file__).resolve().parents[1]
V = registry.get("v")


def v_items(val_path: Path, templates=None, seed: int = V.select_seed, tag: str = "val-v") -> list[dict]:
    """The val split's variant-b pairs re-made with another variant's templates (default: v)."""
    items = [json.loads(line) for line in open(val_path)]
    pairs = [it for it in items if it.get("pair") is not None and str(it.get("template", "")).endswith("-b")]
    return variant_items(pairs, V.templates if templates is None else templates, seed, tag)


# sets embedded in the VAL hosts (registry role "validation"); the test hosts are left to the test sets
VALIDATION = [x.name for x in registry.SETS if x.role == "validation" and x.select_seed is not None]


def seen_items(val_path: Path, variant: str) -> list[dict]:
    """A seen variant (``VALIDATION``) in the val hosts."""
    x = registry.get(variant)
    return v_items(val_path, x.templates, x.select_seed, f"val-{variant}")


def score(asset_dir: Path, val: list[dict], vv: list[dict], more: dict[str, list[dict]] | None = None) -> dict:
    out = score_variant(asset_dir, val, vv, "v")
    for tag, part in (more or {}).items():
        for mode, m in score_variant(asset_dir, [], part, tag).items():
            out[mode].update(m)
    return out


def score_variant(asset_dir: Path, val: list[dict], vv: list[dict], tag: str) -> dict:
    out = {}
    yv = np.array([float(bool(it["findings"])) for it in val])
    y = np.array([int(it["vulnerable"]) for it in vv])
    pairs = np.array([it["pair"] for it in vv])
    pre = [prefix(it["code"]) for it in vv]
    y_pre = np.array([int(any(ln <= len(p.splitlines()) for ln, _c, r in it["findings"] if r.startswith("template:")))
                      for it, p in zip(vv, pre)])
    for mode, fuse in (("model", False), ("fused", True)):
        prm = CodePRM.load("onnx", asset_dir=asset_dir, fuse_analysers=fuse)
        r = np.array([prm.file_risk(it["code"]) for it in vv])
        rp = [prm.file_risk(p) for p in pre]
        out[mode] = {f"{tag}_file_auroc": float(roc_auc_score(y, r)),
                     f"{tag}_pair_acc": pair_acc(r, y, pairs, prm.cfg.threshold),
                     f"{tag}_prefix50_auroc": float(roc_auc_score(y_pre, rp)), "threshold": prm.cfg.threshold}
        if val:
            out[mode]["val_file_auroc"] = float(roc_auc_score(yv, [prm.file_risk(it["code"]) for it in val]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("assets", nargs="+")
    ap.add_argument("--val", default="data/codeprm/val.jsonl")
    ap.add_argument("--out", default="benchmarks/results/codeprm_select.json")
    ap.add_argument("--write-dir", default=None,
                    help="also write v and the VALIDATION variants as val_<x>.jsonl here (for calibration --extra-val)")
    ap.add_argument("--variants", default=",".join(VALIDATION),
                    help="the VALIDATION variants to score (leave out any a candidate was trained on)")
    args = ap.parse_args()
    val = [json.loads(line) for line in open(args.val)]
    parts = {"v": v_items(Path(args.val))} | {k: seen_items(Path(args.val), k) for k in args.variants.split(",") if k}
    if args.write_dir:
        for k, part in parts.items():
            with open(Path(args.write_dir) / f"val_{k}.jsonl", "w") as fh:
                fh.writelines(json.dumps(it) + "\n" for it in part)
    vv = parts.pop("v")
    res = {"n_val": len(val), "n_v_files": len(vv), "n_v_pairs": len({it["pair"] for it in vv}),
           **{f"n_{k}_files": len(p) for k, p in parts.items()},
           "assets": {a: score(Path(a), val, vv, parts) for a in args.assets}}
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
