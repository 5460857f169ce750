"""The code scanner on every held-out family, side by side, with the bars checked.

    nice -n 10 .venv/bin/python benchmarks/codeprm_families.py   # -> benchmarks/results/codeprm_families.json (+ .md)

Test split only (read once): clean functions of the test packages, functions of the test web
applications, the test repositories' fix pairs (and their small-diff subset, and each cut at the
end and in the middle of its first changed line, beside the fixed version cut at the same
place), non-parsing prefixes with analyser-labelled lines, and the shared CyberSecEval Python
cases. Methods (``engines.codeprm.fusion.METHODS``), all through the engine's one scoring path:
bandit (any result in the tab's CWE families), bandit (confident results), CodeShield, the
analysers together, the learned model alone and the fused scanner, at the shipped settings.

Exit status 1 when the fused scanner falls below the best single analyser at any severity
(bandit, CodeShield) on any family, or flags more than 5 % of the library or application
functions; every bar of the issue is written to the JSON, and one markdown table beside it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from engines.codeprm.engine import CodePRM
from evals.codeprm import families as F
from evals.guardrail.timing import run_header

ROWS = (("bandit", "bandit 1.9.4, any severity"), ("bandit confident", "bandit 1.9.4, confident results"),
        ("CodeShield", "CodeShield (semgrep + regex rules)"), ("analysers", "analysers together, any severity"),
        ("model alone", "step model alone"), ("fused", "**fused (shipped)**"))
COLUMNS = (("clean_flag_rate", "library functions flagged", "%"), ("app_flag_rate", "application functions flagged", "%"),
           ("fix_version_flag_rate", "fixed versions flagged", "%"), ("spot_recall", "fix-pair spot recall", "%"),
           ("pair_ranking", "pair ranking", ""), ("verdict_pairs", "verdict pairs", "%"),
           ("small_diff_ranking", "small-diff ranking", ""), ("prefix_line_auroc", "prefix line AUROC", ""),
           ("clean_prefix_flag_rate", "clean prefixes flagged", "%"),
           ("cut_whole_recall", "cut family: whole-version recall", "%"), ("cut_end_recall", "line-end cut recall", "%"),
           ("cut_mid_recall", "mid-line cut recall", "%"), ("cut_fixed_end_flag_rate", "fixed, line-end cut flagged", "%"),
           ("cut_fixed_mid_flag_rate", "fixed, mid-line cut flagged", "%"), ("cse_line_auroc", "CSE line AUROC", ""),
           ("cse_prefix_line_auroc", "CSE prefix line AUROC", ""), ("cse_spot_recall", "CSE spot recall", "%"))
# the bar's measures (fused >= the best single analyser at any severity) and part 3's figures
BAR_MEASURES = ("spot_recall", "verdict_pairs", "pair_ranking", "small_diff_ranking", "small_diff_verdict_pairs",
                "prefix_line_auroc", "cut_end_recall", "cut_mid_recall", "cse_line_auroc", "cse_prefix_line_auroc",
                "cse_spot_recall")
PART3 = {"clean_flag_rate": 0.017, "prefix_line_auroc": 0.963, "cse_line_auroc": 0.727}


def fused_vs_best(table: dict) -> dict[str, dict]:
    """Per bar measure: the fused value, the best single analyser's at any severity, and whether
    fused is at least as good."""
    out = {}
    for k in BAR_MEASURES:
        vals = [table[m][k] for m in F.SINGLE if k in table[m] and not np.isnan(table[m][k])]
        if vals and not np.isnan(table["fused"].get(k, np.nan)):
            out[k] = {"fused": table["fused"][k], "best_single": max(vals), "ok": table["fused"][k] >= max(vals) - 1e-12}
    return out


def precision(counts: dict) -> tuple[int, float]:
    n = sum(v[0] for v in counts.values())
    return n, (sum(v[1] for v in counts.values()) / n if n else float("nan"))


def markdown(table: dict) -> str:
    head = "| method | " + " | ".join(c[1] for c in COLUMNS) + " |"
    lines = [head, "|---" * (len(COLUMNS) + 1) + "|"]
    for m, name in ROWS:
        cells = []
        for k, _, unit in COLUMNS:
            v = table[m].get(k, float("nan"))
            cells.append("-" if np.isnan(v) else (f"{100 * v:.1f} %" if unit == "%" else f"{v:.3f}"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed(prm: CodePRM, codes: list[str]) -> dict:
    n = sum(c.count("\n") + 1 for c in codes)
    prm.scan(codes[0], analysers=False)
    t = time.perf_counter()
    for c in codes:
        prm.scan(c, analysers=False)
    fast = time.perf_counter() - t
    t = time.perf_counter()
    for c in codes[:100]:
        prm.scan(c)
    one = (time.perf_counter() - t) / min(100, len(codes))
    return {"files": len(codes), "lines": n, "model_alone_lines_per_s": round(n / fast, 1),
            "single_scan_seconds_mean": round(one, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="benchmarks/results/codeprm_families.json")
    args = ap.parse_args()
    t0 = time.time()
    prm = CodePRM.load("torch")
    fam = F.build("test", prm.cfg, n_clean=10**6)  # every test-package function
    F.score_model(prm.model, prm.cfg, prm.lexer, F.all_codes(fam))
    ev = F.evaluate(fam, prm.cfg)
    tab = ev["methods"]
    cmp = fused_vs_best(tab)
    fu = tab["fused"]
    mo_n, mo_p = precision(ev["flags"]["fused"]["model_only_parsing"])
    an_n, an_p = precision(ev["flags"]["analysers"]["analyser_flags_parsing"])
    bars = {
        "fused_ge_best_single_analyser_any_severity": all(v["ok"] for v in cmp.values()),
        "library_flag_rate_le_5pct": fu["clean_flag_rate"] <= 0.05,
        "app_flag_rate_le_5pct": fu["app_flag_rate"] <= 0.05,
        "model_only_flags_in_parsing_code": {"flags": mo_n, "precision": mo_p, "analyser_flags": an_n,
                                             "analyser_precision": an_p,
                                             "ok": mo_n == 0 or mo_p >= an_p},
        "no_flagged_step_without_code": {m: v["empty_flags"] for m, v in ev["flags"].items()},
        "cut_end_within_5_points_of_whole": fu["cut_end_recall"] >= fu["cut_whole_recall"] - 0.05,
        "cut_mid_ge_0.6_of_whole": fu["cut_mid_recall"] >= 0.6 * fu["cut_whole_recall"],
        "cut_fixed_flagged_le_10pct": max(fu["cut_fixed_end_flag_rate"], fu["cut_fixed_mid_flag_rate"]) <= 0.10,
        "cut_fused_ge_bandit_both_cuts": all(fu[k] >= tab["bandit"][k] for k in ("cut_end_recall", "cut_mid_recall")),
        "part3_figures_kept": {k: {"was": v, "now": fu[k], "ok": fu[k] <= v if k == "clean_flag_rate" else fu[k] >= v}
                               for k, v in PART3.items()},
    }
    res = {**run_header(), "command": "python benchmarks/codeprm_families.py", "split": "test",
           "settings": {k: getattr(prm.cfg, k) for k in ("model_weight", "prefix_model_weight", "model_flag_threshold",
                                                          "model_flag_cwes", "prefix_flag_threshold", "solo_threshold")},
           "counts": ev["counts"], "methods": tab, "flags": ev["flags"], "fused_vs_best_single_analyser": cmp,
           "bars": bars}
    res["speed"] = speed(CodePRM.load("onnx"), [c.text for c in fam.clean[:400]])
    res["seconds"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(res, indent=2, default=str))
    Path(args.out).with_suffix(".md").write_text(markdown(tab) + "\n")
    print(markdown(tab))
    print(json.dumps(bars, indent=1, default=str), json.dumps(res["speed"]), flush=True)
    failed = [k for k, v in cmp.items() if not v["ok"]]
    failed += [k for k in ("library_flag_rate_le_5pct", "app_flag_rate_le_5pct") if not bars[k]]
    if failed:
        print(f"FAIL: the fused scanner misses its bar on {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
