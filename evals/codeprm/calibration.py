"""Calibration of the codeprm assets on validation data only: aggregation, threshold, analyser weight.

``calibrate`` writes nothing; ``scripts/codeprm_train.py`` (the synthetic-corpus baseline) saves
its result beside that model. The shipped thresholds come from the dev fix pairs (scripts/codeprm_train_lm.py, scripts/codeprm_distill.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from engines.codeprm.config import PRMConfig
from engines.codeprm.engine import CodePRM, aggregate
from engines.codeprm.labels import label_findings
from engines.codeprm.model import featurize


def balanced_threshold(risks: np.ndarray, labels: np.ndarray, cap: float = 1.0) -> tuple[float, float]:
    """Threshold <= ``cap`` with the best balanced accuracy (ties: the lowest), and that accuracy."""
    best = (min(0.5, cap), -1.0)
    for t in np.unique(np.append(risks[risks <= cap], cap)):
        pred = risks >= t
        bal = 0.5 * (pred[labels == 1].mean() + (~pred[labels == 0]).mean())
        if bal > best[1] + 1e-12:
            best = (float(t), float(bal))
    return best


AGGREGATIONS = [("softmin", t, 2) for t in (0.02, 0.05, 0.1, 0.2)] + [("topk", 0.05, k) for k in (1, 2, 3)]


def calibrate(asset_dir: Path, val_path: Path, training: dict | None = None, extra: list[Path] | None = None) -> dict:
    """Pick aggregation, threshold and analyser weight on ``val_path`` (+ ``extra``) for the assets
    in ``asset_dir``; returns the calibration record."""
    prm = CodePRM.load("torch", asset_dir=asset_dir, fuse_analysers=False)
    items = [json.loads(line) for line in open(val_path)]
    for e in extra or []:  # more validation files (e.g. variant v, benchmarks/codeprm_select.py --write-v)
        items += [json.loads(line) for line in open(e)]
    per_file, flagged_labels = [], []
    for it in items:
        code = it["code"]
        feats = featurize(code, prm.cfg, prm.lexer)
        p, _ = prm.step_probs(feats)
        bad = {ln for ln, _c, _r in it["findings"]}
        y = np.array([any(s.start <= b <= s.end for b in bad) for s in feats.spans])
        found = label_findings(code)
        flag = np.array([any(s.start <= f.line <= s.end for f in found) for s in feats.spans])
        flagged_labels += y[flag].tolist()
        per_file.append((p, feats, found, float(bool(bad))))
    labels = np.array([f[3] for f in per_file])
    analyser_prob = float(np.clip(np.mean(flagged_labels) if flagged_labels else 0.5, 0.05, 0.99))
    out = {"analyser_prob": analyser_prob, "n_val_files": len(items), "n_val_flagged_steps": len(flagged_labels),
           "split": str(val_path) + "".join(" + " + str(e) for e in extra or [])}
    for mode in ("model", "fused"):
        best = None
        for agg, tau, k in AGGREGATIONS:
            cfg = PRMConfig(**{**prm.cfg.to_dict(), "aggregation": agg, "tau": tau, "top_k": k,
                               "analyser_prob": analyser_prob})
            fused = prm.with_config(analyser_prob=analyser_prob)
            risks = []
            for p, feats, found, _ in per_file:
                q = fused.fuse(p, feats, found) if mode == "fused" else p
                risks.append(aggregate(q, cfg)[0])
            risks = np.array(risks)
            a = float(roc_auc_score(labels, risks))
            if best is None or a > best["val_file_auroc"] + 1e-9:
                # fused: an analyser finding (step risk >= analyser_prob) always makes the verdict,
                # so the threshold may not sit above analyser_prob; the model adds risk where they are silent
                thr, bal = balanced_threshold(risks, labels, analyser_prob if mode == "fused" else 1.0)
                best = {"aggregation": agg, "tau": tau, "top_k": k, "threshold": thr,
                        "val_file_auroc": a, "val_balanced_accuracy": bal}
        out[mode] = best
    if training is not None:
        out["training"] = training
    (asset_dir / "calibration.json").write_text(json.dumps(out, indent=2))
    return out
