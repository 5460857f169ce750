"""Accuracy of the codeprm tab vs baselines (run by hand; figures go to benchmarks/RESULTS.md#codeprm).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/codeprm_eval.py

Held-out test set: data/codeprm/test.jsonl from evals/codeprm/dataset.py (packages of the
test split, template variant "c" of each of the 13 CWE families, never seen in training):
vulnerable/fixed twins that differ only in the template. Metrics:
- file-level AUROC (label = the twin is the vulnerable one),
- pair accuracy at each method's own threshold (vulnerable flagged AND fixed twin clean),
- partial code: AUROC on the first 50 % of each file's lines (label = a vulnerable line is
  in the prefix), beside the full-code AUROC,
- CyberSecEval (../shared/codesec, validation only, never trained on): labelled-line AUROC
  (each line scored by its step's risk) and top-1 / top-3 step accuracy.
Baselines in the same run: bandit alone (default rules; score = max severity x confidence),
``ruff check --select S`` (score = number of findings), our analysers (the label sources:
filtered bandit + taint + API rules; named "filtered bandit + taint" in the JSON), and a program-level classifier (same encoder, file labels only).

``--variant X``: a held-out set of ``evals/codeprm/registry.py`` (``registry.SETS``) embedded in
the same test hosts: each pair of test.jsonl keeps its host (the same test-package chunk, or
standalone), its pair id and its CWE family; the variant-c template is taken out of the host and
every template of that family in set X is injected instead (``evals.codeprm.embed``, seeded by
the set's ``eval_seed``). Same metrics; CyberSecEval does not depend on the template and is
skipped. Results go to ``benchmarks/results/codeprm_heldout.json`` under key X; the JSON also
holds, per template, the share of vulnerable and of fixed twins each method flags.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/codeprm_eval.py --variant as
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from engines.codeprm.engine import CodePRM
from engines.codeprm.labels import bandit_raw, label_findings
from engines.codeprm.model import featurize
from engines.codeprm.steps import Span
from evals.codeprm import registry
from evals.codeprm.cyberseceval import load_cases
from evals.codeprm.embed import held_out_items, pair_acc, prefix

_W = {"LOW": 1, "MEDIUM": 2, "HIGH": 3, "UNDEFINED": 0}


def bandit_score(code: str) -> float:
    return max((_W.get(s, 0) * _W.get(c, 0) / 9 for _l, _t, _c, s, c, _m in bandit_raw(code)), default=0.0)


def ruff_counts(codes: list[str]) -> list[int]:
    """Findings of `ruff check --select S` per code string (one temp file each)."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    d = Path(tempfile.mkdtemp(prefix="codeprm_ruff_"))
    try:
        for i, c in enumerate(codes):
            (d / f"f{i:05d}.py").write_text(c)
        out = subprocess.run([ruff, "check", "--select", "S", "--output-format", "json", "--no-cache",
                              "--isolated", "--exit-zero", str(d)], capture_output=True, text=True, check=True).stdout
        counts = [0] * len(codes)
        for r in json.loads(out or "[]"):
            counts[int(Path(r["filename"]).stem[1:])] += 1
        return counts
    finally:
        shutil.rmtree(d, ignore_errors=True)


class ProgramLevel:
    """The program-level baseline: same encoder, trained on whole-file labels only."""

    def __init__(self, asset_dir: Path) -> None:
        import torch
        from safetensors.torch import load_file

        from engines.codeprm.config import PRMConfig
        from engines.codeprm.model import StepScorer
        from engines.codeprm.tokens import Lexer

        meta = json.loads((asset_dir / "program_level.json").read_text())
        self.cfg = PRMConfig(**meta["config"])
        self.threshold = meta["threshold"]
        self.model = StepScorer(self.cfg)
        self.model.load_state_dict(load_file(str(asset_dir / "program_level.safetensors")))
        self.model.eval()
        # the vocabulary of the synthetic corpus it was trained on (kept beside its weights)
        vpath = asset_dir / "vocab.json"
        self.lexer = Lexer(self.cfg.vocab_size, json.loads(vpath.read_text()))
        self.torch = torch

    def risk(self, code: str) -> float:
        f = featurize(code, self.cfg, self.lexer, [Span(1, max(1, len(code.splitlines())))])
        with self.torch.inference_mode():
            lo, _ = self.model(self.torch.from_numpy(f.ids[None]), self.torch.from_numpy(f.parts[None]),
                               self.torch.from_numpy(f.gidx),
                               self.torch.from_numpy(f.last))
        return float(1 / (1 + np.exp(-lo.numpy()[0])))


def flag_rates(items: list[dict], y: np.ndarray, methods: dict[str, tuple[list, float]]) -> dict:
    """Per template: share of vulnerable twins flagged and of fixed twins flagged, per method
    (tells a missed vulnerability from a false alarm on the fix)."""
    out: dict[str, dict] = {}
    keys = sorted({it["template"] for it in items})
    for key in keys:
        idx = np.array([i for i, it in enumerate(items) if it["template"] == key])
        row = {}
        for name, (scores, thr) in methods.items():
            s = np.asarray(scores, dtype=float)[idx] >= thr
            row[name] = {"vulnerable_flagged": round(float(s[y[idx] == 1].mean()), 3),
                         "fixed_flagged": round(float(s[y[idx] == 0].mean()), 3)}
        out[key] = row
    return out


def cyberseceval(prm: CodePRM) -> dict:
    cases = load_cases()
    line_scores, line_labels, top1, top3 = [], [], [], []
    b_scores = []
    for case in cases:
        code, target = case.code, case.target
        lines = code.splitlines()
        feats = featurize(code, prm.cfg, prm.lexer)
        probs, _ = prm.step_probs(feats)
        if prm.cfg.fuse_analysers:
            probs = prm.fuse(probs, feats, label_findings(code))
        k = next(i for i, s in enumerate(feats.spans) if s.start <= target <= s.end)
        order = list(np.argsort(-probs, kind="stable"))
        top1.append(order[0] == k)
        top3.append(k in order[:3])
        bl = {ln for ln, *_ in bandit_raw(code)}
        for i, s in enumerate(feats.spans):
            for ln in range(s.start, s.end + 1):
                if lines[ln - 1].strip():
                    line_scores.append(probs[i])
                    line_labels.append(ln == target)
                    b_scores.append(ln in bl)
    return {"n": len(cases), "line_auroc": float(roc_auc_score(line_labels, line_scores)),
            "top1": float(np.mean(top1)), "top3": float(np.mean(top3)),
            "bandit_line_auroc": float(roc_auc_score(line_labels, b_scores))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="data/codeprm")
    ap.add_argument("--out", default=None, help="default benchmarks/results/codeprm_eval.json (c) or codeprm_heldout.json (the held-out sets, one key each)")
    ap.add_argument("--variant", choices=["c", *(x.name for x in registry.SETS if x.eval_seed is not None)], default="c",
                    help="c: data/codeprm/test.jsonl; otherwise a held-out set of evals/codeprm/registry.py "
                         "embedded in the same hosts")
    args = ap.parse_args()
    results = Path(__file__).resolve().parent / "results"
    args.out = Path(args.out) if args.out else results / ("codeprm_eval.json" if args.variant == "c" else "codeprm_heldout.json")
    t0 = time.time()
    items = [json.loads(line) for line in open(Path(args.data) / "test.jsonl")]
    if args.variant != "c":
        items = held_out_items(items, args.variant)
        with open(Path(args.data) / f"test_{args.variant}.jsonl", "w") as fh:
            fh.writelines(json.dumps(it) + "\n" for it in items)
    codes = [it["code"] for it in items]
    y = np.array([int(it["vulnerable"]) for it in items])
    pairs = np.array([it["pair"] for it in items])
    prm = CodePRM.load("torch")  # shipped: model fused with the analysers
    solo = CodePRM.load("torch", fuse_analysers=False)
    thr = prm.cfg.threshold
    res: dict = {"variant": args.variant, "n_files": len(items), "n_pairs": len(np.unique(pairs)),
                 "n_standalone_pairs": len({it["pair"] for it in items if it["pkg"] == "standalone"}),
                 "threshold": thr,
                 "threshold_model_only": solo.cfg.threshold, "analyser_prob": prm.cfg.analyser_prob,
                 "aggregation": f"{prm.cfg.aggregation} tau={prm.cfg.tau} k={prm.cfg.top_k}",
                 "aggregation_model_only": f"{solo.cfg.aggregation} tau={solo.cfg.tau} k={solo.cfg.top_k}"}
    methods: dict[str, dict] = {}

    def add(name, scores, flag_thr, prefix_scores=None):
        s = np.asarray(scores, dtype=float)
        m = {"file_auroc": float(roc_auc_score(y, s)), "pair_acc": pair_acc(s, y, pairs, flag_thr),
             "threshold": flag_thr}
        if prefix_scores is not None:
            m["prefix50_auroc"] = float(roc_auc_score(y_pre, prefix_scores))
        methods[name] = m

    pre_codes = [prefix(c) for c in codes]
    y_pre = np.array([int(any(ln <= len(p.splitlines()) for ln, _c, rule in it["findings"]
                              if rule.startswith("template:"))) for it, p in zip(items, pre_codes)])
    solo_scores = [solo.file_risk(c) for c in codes]
    add("codeprm step PRM, model alone", solo_scores, solo.cfg.threshold, [solo.file_risk(p) for p in pre_codes])
    prm_scores = [prm.file_risk(c) for c in codes]
    prm_pre = [prm.file_risk(p) for p in pre_codes]
    add("codeprm step PRM + analysers (noisy-OR; shipped)", prm_scores, thr, prm_pre)
    res["prefix50_positives"] = int(y_pre.sum())
    res["prefix50_auroc_with_full_labels"] = float(roc_auc_score(y, prm_pre))
    b = [bandit_score(c) for c in codes]
    add("bandit alone (default rules)", b, 1e-9, [bandit_score(p) for p in pre_codes])
    add("ruff --select S", ruff_counts(codes), 0.5, ruff_counts(pre_codes))
    lab = [float(bool(label_findings(c))) for c in codes]
    add("analysers (filtered bandit + taint)", lab, 0.5, [float(bool(label_findings(p))) for p in pre_codes])
    pl_dir = Path(__file__).resolve().parents[1] / "evals" / "codeprm" / "baseline"
    if (pl_dir / "program_level.safetensors").is_file():
        pl = ProgramLevel(pl_dir)
        add("program-level classifier (no step labels)", [pl.risk(c) for c in codes], pl.threshold,
            [pl.risk(p) for p in pre_codes])
    res["methods"] = methods
    # pair accuracy per held-out template family, for the PRM
    per = {}
    for p in np.unique(pairs):
        idx = np.where(pairs == p)[0]
        key = items[idx[0]]["template"]
        v = [i for i in idx if y[i] == 1][0]
        f = [i for i in idx if y[i] == 0][0]
        per.setdefault(key, []).append(prm_scores[v] >= thr and prm_scores[f] < thr)
    res["per_template_pair_acc"] = {k: round(float(np.mean(v)), 3) for k, v in sorted(per.items())}
    res["per_template_flag_rates"] = flag_rates(items, y, {"shipped": (prm_scores, thr),
                                                          "model alone": (solo_scores, solo.cfg.threshold),
                                                          "analysers": (lab, 0.5)})
    if args.variant == "c":
        res["cyberseceval"] = {"model_alone": cyberseceval(solo), "fused": cyberseceval(prm)}
    res["seconds"] = round(time.time() - t0, 1)
    res["machine"] = f"{platform.machine()} {platform.python_version()}"
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.variant == "c":
        args.out.write_text(json.dumps(res, indent=2))
    else:  # one file for all held-out sets, the latest run of each
        table = json.loads(args.out.read_text()) if args.out.is_file() else {}
        table[args.variant] = res
        args.out.write_text(json.dumps(table, indent=1))
    print("| method | file AUROC | pair acc | prefix-50% AUROC |\n|---|---|---|---|")
    for k, m in methods.items():
        print(f"| {k} | {m['file_auroc']:.3f} | {m['pair_acc']:.1%} | {m.get('prefix50_auroc', float('nan')):.3f} |")
    print(json.dumps({k: v for k, v in res.items() if k != "methods"}, indent=1))


if __name__ == "__main__":
    main()
