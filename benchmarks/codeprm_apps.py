"""The code scanner on real web applications' hand-labelled spots, beside `bandit -r` and the
analysers alone (``evals/codeprm/app_measure.py`` has the measures and the unit).

    nice -n 10 .venv/bin/python benchmarks/codeprm_apps.py --mirrors /work/.mirror --splits dev
    nice -n 10 .venv/bin/python benchmarks/codeprm_apps.py --mirrors /work/.mirror --splits dev test
        # -> benchmarks/results/codeprm_apps.json (+ .md)

The test split is read once per scanner change; dev is free. Needs the snapshots of the labelled
repositories (``evals/codeprm/data/app_spots.jsonl``; fetched with the search tool's ``fetch``)
and, for the clean application family, ``data/codeprm/app_corpus.jsonl`` (``make data-codeprm``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from engines.codeprm.engine import CodePRM
from evals.codeprm import app_measure as A
from evals.guardrail.timing import run_header

BARS = {"whole_recall": 0.80, "false_alarms_per_kloc": 1.0, "cut_end_recall": 0.75, "cut_mid_recall": 0.55,
        "mid_line_gain_over_analysers": 0.10, "clean_flag_rate": 0.01}


def bars(r: dict) -> dict:
    """The issue's application-spot bars on one split's results (fused scanner)."""
    fu, an = r["methods"]["fused"], r["methods"]["analysers"]
    gain = (fu["cut_mid"]["recall"] or 0) - (an["cut_mid"]["recall"] or 0)
    out = {"whole_recall_ge_0.80": fu["whole"]["recall"] >= BARS["whole_recall"],
           "false_alarms_le_1_per_kloc": fu["whole"]["false_alarms_per_kloc"] <= BARS["false_alarms_per_kloc"],
           "cut_end_recall_ge_0.75": (fu["cut_end"]["recall"] or 0) >= BARS["cut_end_recall"],
           "cut_mid_recall_ge_0.55": (fu["cut_mid"]["recall"] or 0) >= BARS["cut_mid_recall"],
           "mid_line_beats_analysers_by_10_points": gain >= BARS["mid_line_gain_over_analysers"] - 1e-12}
    if "clean_apps" in fu:
        out["clean_app_functions_flagged_le_1pct"] = fu["clean_apps"]["flag_rate"] <= BARS["clean_flag_rate"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--splits", nargs="+", default=["dev"], choices=["dev", "test"])
    ap.add_argument("--out", default="benchmarks/results/codeprm_apps.json")
    ap.add_argument("--clean-limit", type=int, default=None, help="at most this many clean application functions")
    a = ap.parse_args()
    t0 = time.time()
    prm = CodePRM.load()
    results = {}
    for split in a.splits:
        try:
            results[split] = A.measure(prm, split, a.mirrors, clean_limit=a.clean_limit,
                                       log=lambda m: print(m, flush=True))
        except A.SnapshotMissing as exc:
            print(f"{split}: {exc}; fetch the labelled repositories first", file=sys.stderr)
            return 2
        results[split]["bars"] = bars(results[split])
    out = {**run_header(), "command": "python benchmarks/codeprm_apps.py --splits " + " ".join(a.splits),
           "unit": "step (a flagged step holds the sink line); recall_line: a flagging finding within 1 line",
           "settings": {k: getattr(prm.cfg, k) for k in ("model_weight", "prefix_model_weight", "model_flag_threshold",
                                                          "model_flag_cwes", "prefix_flag_threshold")},
           "results": results, "seconds": round(time.time() - t0, 1)}
    path = Path(a.out)
    if path.is_file():  # keep the other split's figures from an earlier run
        old = json.loads(path.read_text()).get("results", {})
        out["results"] = {**{k: v for k, v in old.items() if k not in results}, **results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))
    md = A.markdown(out["results"])
    path.with_suffix(".md").write_text(md + "\n")
    print(md)
    print(json.dumps({s: r["bars"] for s, r in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
