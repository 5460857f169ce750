"""Fitting the request judge and picking its levels (used by ``scripts/guardrail_train.py``).

The judge is one logistic read-out on the request's inputs (:mod:`engines.guardrail.judge`): the
SmolLM2 taps at the last prompt token, their mean over the user tokens, and the MiniLM embedding,
standardised, class-balanced, with C chosen by cross-validation over request groups of the train
split only. Its two levels come from dev, never from test:

* the **strict gate**: the lowest level at which every benign family of dev (by
  :data:`evals.guardrail.requests.BAR_FAMILY`, each with at least ``min_family`` requests) has at most
  ``cap`` of its requests read as harmful, so strict's false stops stay under the cap in every family,
  never pooled;
* the **band's lower edge**: the level at which the judge catches ``band_recall`` of dev's harmful
  requests (when that is below the gate): between the two, strict does not stop and says "may be risky".
"""
from __future__ import annotations

from collections import Counter

import numpy as np

C_GRID = (0.003, 0.01, 0.03, 0.1)
LEVELS = tuple(np.round(np.concatenate([np.arange(0.05, 0.9, 0.01), np.arange(0.9, 0.999, 0.002)]), 4))


def matrix(rows: list[dict], feats: dict[str, dict[str, np.ndarray]], inputs: str = "last+mean+sentence"):
    """(X, y, kept rows) for the rows that have features: each row's judge input in the engine's order
    (last-token taps, then their user-token mean and the sentence embedding)."""
    from evals.guardrail.content_prompts import norm

    X, y, kept = [], [], []
    for r in rows:
        f = feats.get(norm(r["prompt"]))
        if f is None:
            continue
        parts = [f["last"]] if inputs == "last" else [f["last"], f["mean"], f["sentence"]]
        X.append(np.concatenate(parts))
        y.append(int(r["harmful"]))
        kept.append(r)
    return np.asarray(X, np.float64), np.asarray(y), kept


def fit(X: np.ndarray, y: np.ndarray, groups: list[str], c_grid=C_GRID, log=print) -> tuple[np.ndarray, float, dict]:
    """Standardised, class-balanced logistic regression; C by 5-fold cross-validation over groups
    (out-of-fold AUROC). Returns raw-input weights and bias (the standardisation folded in) and the
    choice's figures."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(X)
    Z = sc.transform(X)
    scores = {}
    for C in c_grid:
        pred = np.zeros(len(y))
        for tr, te in GroupKFold(n_splits=5).split(Z, y, groups):
            clf = LogisticRegression(C=C, max_iter=3000, class_weight="balanced").fit(Z[tr], y[tr])
            pred[te] = clf.decision_function(Z[te])
        scores[C] = float(roc_auc_score(y, pred))
        log(f"judge C={C}: out-of-fold AUROC {scores[C]:.4f}")
    best = max(scores, key=scores.get)
    clf = LogisticRegression(C=best, max_iter=5000, class_weight="balanced").fit(Z, y)
    w = clf.coef_[0] / sc.scale_
    b = float(clf.intercept_[0] - (w * sc.mean_).sum())
    return w, b, {"C": best, "cv_auroc": {str(k): round(v, 4) for k, v in scores.items()}, "train_requests": len(y),
                  "train_harmful": int(y.sum())}


def probs(w: np.ndarray, b: float, X: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(X @ w + b)))


def family_rates(p: np.ndarray, rows: list[dict], level: float) -> dict[str, dict]:
    """Per benign family: requests and the share read at or above ``level``; per harmful source: recall."""
    out: dict[str, dict] = {}
    for fam in sorted({r["bar_family"] for r in rows}):
        idx = [k for k, r in enumerate(rows) if r["bar_family"] == fam]
        hit = int((p[idx] >= level).sum())
        out[fam] = {"n": len(idx), "flagged": hit, "rate": round(hit / len(idx), 4)}
    return out


def pick_levels(p: np.ndarray, rows: list[dict], cap: float = 0.03, min_family: int = 20,
                band_recall: float = 0.95) -> dict:
    """The strict gate and the band's lower edge on dev (see the module docstring)."""
    y = np.array([r["harmful"] for r in rows])
    fams = Counter(r["bar_family"] for r in rows if not r["harmful"])
    capped = [f for f, n in fams.items() if n >= min_family]
    gate = None
    benign, pb = [r for r in rows if not r["harmful"]], p[y == 0]
    for lv in LEVELS:
        rates = family_rates(pb, benign, lv)
        if all(rates[f]["rate"] <= cap for f in capped):
            gate = float(lv)
            break
    gate = float(LEVELS[-1]) if gate is None else gate
    pos = np.sort(p[y == 1])
    band = float(pos[int((1 - band_recall) * len(pos))]) if len(pos) else gate
    band = round(min(band, gate), 4)
    return {"gate": gate, "band": band if band < gate else 0.0, "capped_families": sorted(capped),
            "dev_recall_at_gate": round(float((p[y == 1] >= gate).mean()), 4),
            "dev_recall_at_band": round(float((p[y == 1] >= band).mean()), 4)}


def curve(p: np.ndarray, rows: list[dict], levels=LEVELS) -> list[dict]:
    """Recall of harmful requests against each benign family's flagged share, level by level (the
    strict trade-off, plotted in RESULTS and the tab's notes)."""
    y = np.array([r["harmful"] for r in rows])
    benign = [r for r in rows if not r["harmful"]]
    pb = p[y == 0]
    out = []
    for lv in levels:
        fam = family_rates(pb, benign, lv)
        out.append({"level": float(lv), "recall": round(float((p[y == 1] >= lv).mean()), 4),
                    "families": {k: v["rate"] for k, v in fam.items()}})
    return out


def judge_map(feats: dict[str, dict[str, np.ndarray]]):
    """normalised request -> the judge's input row (torch float16, last-token taps, user-token mean,
    sentence embedding), for :func:`evals.guardrail.train.load_cache`."""
    import torch

    return {k: torch.from_numpy(np.concatenate([f["last"], f["mean"], f["sentence"]])).half() for k, f in feats.items()}


def fit_and_pick(rows: list[dict], feats: dict, cap: float, band_recall: float, log=print) -> dict:
    """Fit the judge on the corpus's train requests and pick its levels on dev: {"w", "b", "levels",
    "fit", "report"} (the report: AUROC, per-family flagged shares at the gate and the band, recall per
    harmful source, and the trade-off curve, on dev and on test)."""
    from sklearn.metrics import roc_auc_score

    data = {s: matrix([r for r in rows if r["split"] == s], feats) for s in ("train", "dev", "test")}
    X, y, kept = data["train"]
    w, b, info = fit(X, y, [r["group"] for r in kept], log=log)
    Xd, _, kd = data["dev"]
    pd = probs(w, b, Xd)
    levels = pick_levels(pd, kd, cap=cap, band_recall=band_recall)
    log(f"judge levels on dev: {levels}")
    report = {}
    for s in ("dev", "test"):
        Xs, ys, ks = data[s]
        p = probs(w, b, Xs)
        by_source: dict[str, dict] = {}
        for src in sorted({r["source"] for r in ks if r["harmful"]}):
            idx = [i for i, r in enumerate(ks) if r["harmful"] and r["source"] == src]
            by_source[src] = {"n": len(idx), "recall_at_gate": round(float((p[idx] >= levels["gate"]).mean()), 4)}
        report[s] = {"auroc": round(float(roc_auc_score(ys, p)), 4), "requests": len(ys), "harmful": int(ys.sum()),
                     "recall_at_gate": round(float((p[ys == 1] >= levels["gate"]).mean()), 4),
                     "families_at_gate": family_rates(p[ys == 0], [r for r in ks if not r["harmful"]], levels["gate"]),
                     "families_at_band": (family_rates(p[ys == 0], [r for r in ks if not r["harmful"]], levels["band"])
                                          if levels["band"] else None),
                     "harmful_sources": by_source, "curve": curve(p, ks)}
    return {"w": w, "b": b, "levels": levels, "fit": info, "report": report}
