"""codeprm on held-out TEST repositories' real vulnerability-fix pairs, one table.

    nice -n 10 python benchmarks/codeprm_pairs.py     # -> benchmarks/results/codeprm_pairs.json

Rows: the learned model alone (SmolLM2 step head), fused with the analysers, the analysers
alone, bandit, CodeShield (semgrep), and the fast path (distilled CNN) alone. Columns: pair
ranking (vulnerable version scored riskier than its fix; ties count half), verdict pairs
(vulnerable flagged AND fix cleared; thresholds chosen on dev repositories), and line AUROC on
the shared CyberSecEval Python cases, on full code and on prefixes (validation only; its labels
come from the same detector as CodeShield, so those figures are not independent). Program score:
the paper's soft minimum of step safety (T = 0.1). Also the fast path's and the LM path's
throughput on this CPU.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from engines.codeprm.aggregation import PAPER_TAU, softmin_safety
from engines.codeprm.engine import CodePRM
from engines.codeprm.lm import LMScorer, StepFeatures, runner, step_features
from engines.codeprm.steps import split_steps
from evals.codeprm.analyser_cache import findings
from evals.codeprm.cyberseceval import load_cases
from evals.codeprm.lm_cache import features
from evals.codeprm.pair_data import build, _flags
from evals.codeprm.pair_metrics import fuse, pair_metrics
from evals.codeprm.pairs import PAIRS_PATH, load_pairs
from evals.guardrail.timing import run_header

ROWS = ["model alone (SmolLM2 step head)", "fused (model + analysers)", "analysers alone", "bandit",
        "CodeShield (semgrep)", "fast path alone (distilled CNN)"]


def _risk(p: np.ndarray) -> float:
    return 1.0 - softmin_safety(1.0 - np.asarray(p, float), PAPER_TAU)


def step_risks(kind: str, code: str, spans, feats: StepFeatures | None, flags: dict, lm: LMScorer, meta: dict,
               fast: CodePRM) -> np.ndarray:
    """Per-step risk of one method on one piece of code."""
    srcs = meta["fused"]["sources"]
    if kind.startswith("model"):
        return lm.risks_from_features(feats)
    if kind.startswith("fused"):
        return fuse(lm.risks_from_features(feats), flags, srcs, meta["fused"]["analyser_prob"])
    if kind == "analysers alone":
        return fuse(np.zeros(len(spans)), flags, srcs, 1.0)
    if kind == "bandit":
        return flags["bandit"].astype(float)
    if kind.startswith("CodeShield"):
        return flags["codeshield"].astype(float)
    return fast.model_risks(code, spans)[0]  # CyberSecEval windows are fragments: score steps, no Python check


def threshold(kind: str, meta: dict, fast: CodePRM) -> float:
    if kind.startswith("model"):
        return meta["model"]["threshold"]
    if kind.startswith("fused"):
        return meta["fused"]["threshold"]
    if kind.startswith("fast"):
        return fast.cfg.threshold
    return 0.5  # an analyser verdict: any finding


def line_auroc(kind, cases, which: str, lm, meta, fast) -> float:
    scores, labels = [], []
    codes = [getattr(c, which) for c in cases]
    an = findings(codes)
    for c, code, fs in zip(cases, codes, an):
        spans = split_steps(code, lm.cfg.max_step_lines)
        sf = features(code, lm.cfg) if kind.startswith(("model", "fused")) else None
        p = step_risks(kind, code, spans, sf, _flags(spans, fs), lm, meta, fast)
        lines = code.splitlines()
        for k, s in enumerate(spans):
            for ln in range(s.start, s.end + 1):
                if ln <= len(lines) and lines[ln - 1].strip():
                    scores.append(p[k])
                    labels.append(ln == c.target)
    return float(roc_auc_score(labels, scores))


def speed(fast: CodePRM, lm: LMScorer, codes: list[str], lm_n: int) -> dict:
    n_lines = sum(c.count("\n") + 1 for c in codes)
    fast.scan(codes[0], analysers=False)
    t = time.perf_counter()
    for c in codes:
        fast.scan(c, analysers=False)
    dt = time.perf_counter() - t
    sub = codes[:lm_n]
    run = runner("cpu", lm.cfg.dtype)
    step_features(sub[0], lm.cfg, run)
    t = time.perf_counter()
    for c in sub:
        step_features(c, lm.cfg, run)
    dl = time.perf_counter() - t
    ll = sum(c.count("\n") + 1 for c in sub)
    return {"fast_path_lines_per_s": round(n_lines / dt, 1), "fast_path_files": len(codes), "fast_path_lines": n_lines,
            "lm_path_cpu_lines_per_s": round(ll / dl, 1), "lm_path_files": len(sub), "lm_path_lines": ll,
            "torch_threads": torch.get_num_threads()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default=str(PAIRS_PATH))
    ap.add_argument("--out", default="benchmarks/results/codeprm_pairs.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lm-speed-files", type=int, default=20)
    ap.add_argument("--cached-only", action="store_true",
                    help="only test pairs and CyberSecEval cases whose LM features are cached (a subset when "
                         "CPU time ran short; the JSON says how many)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    lm = LMScorer.load()
    meta = json.loads(Path("assets/codeprm/lm_head.json").read_text())
    fast = CodePRM.load("onnx", fuse_analysers=False)
    all_test = load_pairs(Path(args.pairs), ("test",))
    test = build(all_test, lm.cfg, compute=not args.cached_only)
    cases = load_cases()
    n_cases = len(cases)
    if args.cached_only:
        cases = [c for c in cases if features(c.code, lm.cfg, compute=False) is not None
                 and features(c.prefix, lm.cfg, compute=False) is not None]
    res = {**run_header(), "command": "python benchmarks/codeprm_pairs.py" + (" --cached-only" if args.cached_only else ""),
           "tau": PAPER_TAU, "n_test_pairs": len(test), "n_test_pairs_in_split": len(all_test),
           "n_test_repos": len({d.pair.repo for d in test}), "n_cse_cases": len(cases), "n_cse_cases_in_file": n_cases,
           "rows": []}
    for kind in ROWS:
        rv, rf = [], []
        for d in test:
            for side, acc in ((d.vul, rv), (d.fix, rf)):
                sf = StepFeatures(side.spans, side.feats)
                acc.append(_risk(step_risks(kind, side.code, side.spans, sf, side.flags, lm, meta, fast)))
        m = pair_metrics(rv, rf, threshold(kind, meta, fast))
        full = line_auroc(kind, cases, "code", lm, meta, fast)
        pre = line_auroc(kind, cases, "prefix", lm, meta, fast)
        row = {"method": kind, **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
               "cse_line_auroc": round(full, 4), "cse_prefix_line_auroc": round(pre, 4),
               "prefix_gap": round(full - pre, 4)}
        print(row, flush=True)
        res["rows"].append(row)
    by = {r["method"]: r for r in res["rows"]}
    mo, fu, an = by[ROWS[0]], by[ROWS[1]], by[ROWS[2]]
    res["bars"] = {
        "model_alone_pair_ranking_ge_0.85": mo["pair_ranking"] >= 0.85,
        "fused_verdict_pairs_ge_55pct": fu["verdict_pairs"] >= 0.55,
        "fused_beats_analysers_on_both_pair_measures": fu["pair_ranking"] > an["pair_ranking"]
        and fu["verdict_pairs"] > an["verdict_pairs"],
        "prefix_auroc_within_0.05_model": abs(mo["prefix_gap"]) <= 0.05,
        "prefix_auroc_within_0.05_fused": abs(fu["prefix_gap"]) <= 0.05,
    }
    res["speed"] = speed(fast, lm, [d.vul.code for d in test], args.lm_speed_files)
    res["speed"]["fast_path_bar_2000_lines_per_s"] = res["speed"]["fast_path_lines_per_s"] >= 2000
    res["seconds"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(json.dumps(res["bars"], indent=1), json.dumps(res["speed"], indent=1), flush=True)


if __name__ == "__main__":
    main()
