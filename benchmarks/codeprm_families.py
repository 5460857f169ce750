"""The code scanner on every held-out family, side by side, with the bars checked.

    nice -n 10 .venv/bin/python benchmarks/codeprm_families.py   # -> benchmarks/results/codeprm_families.json

Test split only (read once): clean functions of the test packages, the test repositories' fix
pairs and their small-diff subset, non-parsing prefixes of test-package and test-repository
functions with analyser-labelled lines, and the shared CyberSecEval Python cases. Methods: bandit
(confident results), bandit (any result in the tab's CWE families), CodeShield, the analysers
together, the learned model alone and the fused scanner, with the shipped thresholds.

Exit status 1 when the fused scanner falls below the best single analyser on any family, or
flags more than 5 % of clean functions; the bars of the issue are written to the JSON.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

from engines.codeprm.engine import CodePRM
from evals.codeprm import families as F
from evals.guardrail.timing import run_header

ROOT = Path(__file__).resolve().parents[1]
SINGLE = ("bandit", "bandit (any result)", "CodeShield")


def _train_module():
    spec = importlib.util.spec_from_file_location("codeprm_train", ROOT / "scripts" / "codeprm_train.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fused_vs_best(table: dict) -> dict[str, dict]:
    """Per measure: the fused value, the best single analyser's, and whether fused is at least
    as good (the clean flag rate is held to the 5 % budget instead: a confident finding always
    flags, so the fused scanner flags a superset of the analysers' functions)."""
    out = {}
    fu = table["fused"]
    for k, hi in F.MEASURES.items():
        if k not in fu or k == "fix_version_flag_rate":
            continue
        vals = [table[m][k] for m in SINGLE if not np.isnan(table[m][k])]
        if not vals or np.isnan(fu[k]):
            continue
        if k in ("clean_flag_rate", "clean_prefix_flag_rate"):
            out[k] = {"fused": fu[k], "best_single": min(vals), "ok": fu[k] <= 0.05}
        else:
            best = max(vals) if hi else min(vals)
            out[k] = {"fused": fu[k], "best_single": best, "ok": fu[k] >= best - 1e-12 if hi else fu[k] <= best + 1e-12}
    return out


def speed(prm: CodePRM, codes: list[str]) -> dict:
    n = sum(c.count("\n") + 1 for c in codes)
    prm.scan(codes[0], analysers=False)
    t = time.perf_counter()
    for c in codes:
        prm.scan(c, analysers=False)
    fast = time.perf_counter() - t
    t = time.perf_counter()
    for c in codes:
        prm.scan(c)
    full = time.perf_counter() - t
    return {"files": len(codes), "lines": n, "model_alone_lines_per_s": round(n / fast, 1),
            "full_scan_lines_per_s": round(n / full, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="benchmarks/results/codeprm_families.json")
    args = ap.parse_args()
    t0 = time.time()
    prm = CodePRM.load("torch")
    solo_t = CodePRM.load("onnx", fuse_analysers=False).cfg.threshold
    fam = F.build("test", prm.cfg, n_clean=10**6)  # every test-package function
    tr = _train_module()
    tr.score(prm.model, prm.cfg, prm.lexer, F.all_codes(fam))
    ev = F.evaluate(fam, prm.cfg, solo_t)
    cmp = fused_vs_best(ev["methods"])
    mo = ev["methods"]["model alone"]
    res = {**run_header(), "command": "python benchmarks/codeprm_families.py", "split": "test",
           "threshold_fused": prm.cfg.threshold, "model_weight": prm.cfg.model_weight,
           "prefix_model_weight": prm.cfg.prefix_model_weight, "threshold_model": solo_t,
           "counts": ev["counts"], "methods": ev["methods"], "fused_vs_best_single_analyser": cmp,
           "bars": {"fused_ge_best_single_analyser_on_every_family": all(v["ok"] for v in cmp.values()),
                    "clean_flag_rate_le_5pct": ev["methods"]["fused"]["clean_flag_rate"] <= 0.05,
                    "clean_prefix_flag_rate_le_5pct": ev["methods"]["fused"]["clean_prefix_flag_rate"] <= 0.05,
                    "model_prefix_line_auroc_ge_0.85": mo["prefix_line_auroc"] >= 0.85,
                    "model_small_diff_ranking_ge_0.70": mo["small_diff_ranking"] >= 0.70}}
    res["speed"] = speed(CodePRM.load("onnx"), [c.text for c in fam.clean[:400]])
    res["bars"]["fast_path_ge_2000_lines_per_s"] = res["speed"]["model_alone_lines_per_s"] >= 2000
    res["seconds"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(res, indent=2))
    for m, row in ev["methods"].items():
        print(f"{m:22s} " + " ".join(f"{k}={v:.3f}" for k, v in row.items()))
    print(json.dumps(res["bars"], indent=1), json.dumps(res["speed"]), flush=True)
    failed = [k for k, v in cmp.items() if not v["ok"]]
    if failed:
        print(f"FAIL: the fused scanner is below the best single analyser on {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
