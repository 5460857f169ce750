"""Model selection for codeprm on VALIDATION data only: the val split + the blind variant "v".

    PYTHONPATH=. HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/codeprm_select.py OLD_ASSETS NEW_ASSETS

Variant e (engines/codeprm/heldout_e.py, the previous final test, evaluated once on 2026-11-30
and seen since) is embedded the same way in the val hosts (seed 20261203) and reported beside v.

Variant v (engines/codeprm/heldout_v.py) is embedded like the test variants: each vulnerable /
fixed pair of data/codeprm/val.jsonl (variant b, val-package hosts or standalone) keeps its host
and family, and the variant-b template is swapped for the variant-v template of that family
(benchmarks/codeprm_eval.py ``variant_items``, seed 20261199). For each asset folder it reports,
model alone and fused with the analysers (each at its own calibrated threshold): val-split file
AUROC, v file AUROC, v pair accuracy and v prefix-50 % AUROC. The new assets are shipped only
if they beat the old ones here. Variants f and g (heldout_f.py, the blind test of 2026-12-01, evaluated once, seen since) are
embedded the same way (seed 20261204). Test data (the test split, variants c, d and the blind
h/i) is never read.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from codeprm_eval import pair_acc, prefix, variant_items  # noqa: E402

from engines.codeprm.engine import CodePRM  # noqa: E402
from engines.codeprm.heldout_v import TEMPLATES_V  # noqa: E402


def v_items(val_path: Path, templates=None, seed: int = 20261199, tag: str = "val-v") -> list[dict]:
    """The val split's variant-b pairs re-made with another variant's templates (default: v)."""
    items = [json.loads(line) for line in open(val_path)]
    pairs = [it for it in items if it.get("pair") is not None and str(it.get("template", "")).endswith("-b")]
    return variant_items(pairs, TEMPLATES_V if templates is None else templates, seed, tag)


def f_items(val_path: Path) -> list[dict]:
    """Variants f and g (the blind test of 2026-12-01, evaluated once and seen since) in the VAL
    hosts (seed 20261204): validation data from then on; the test hosts go to variants h/i."""
    from engines.codeprm.heldout_f import TEMPLATES_F

    return v_items(val_path, TEMPLATES_F, 20261204, "val-f")


def e_items(val_path: Path) -> list[dict]:
    """Variant e (the previous session's final test, evaluated once and now seen) in the VAL hosts:
    validation data from 2026-12-01 on; the test hosts are left to the blind variants f/g."""
    from engines.codeprm.heldout_e import TEMPLATES_E

    return v_items(val_path, TEMPLATES_E, 20261203, "val-e")


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
    ap.add_argument("--write-v", default=None, help="also write the variant-v items here (for --extra-val calibration)")
    ap.add_argument("--write-e", default=None, help="also write variant e in the val hosts here (for --extra-val)")
    ap.add_argument("--write-f", default=None, help="also write variants f/g in the val hosts here (for --extra-val)")
    args = ap.parse_args()
    val = [json.loads(line) for line in open(args.val)]
    vv = v_items(Path(args.val))
    if args.write_v:
        with open(args.write_v, "w") as fh:
            fh.writelines(json.dumps(it) + "\n" for it in vv)
    ve = e_items(Path(args.val))
    vf = f_items(Path(args.val))
    for path, part in ((args.write_e, ve), (args.write_f, vf)):
        if path:
            with open(path, "w") as fh:
                fh.writelines(json.dumps(it) + "\n" for it in part)
    res = {"n_val": len(val), "n_v_files": len(vv), "n_v_pairs": len({it["pair"] for it in vv}),
           "n_e_files": len(ve), "n_f_files": len(vf),
           "assets": {a: score(Path(a), val, vv, {"e": ve, "f": vf}) for a in args.assets}}
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
