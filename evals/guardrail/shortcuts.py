"""The shortcut audit of a request set: can the label be read off a request's form alone?

Two probes, each scored out of fold (five folds by request group, so a probe is never scored on a
request it was fitted on), and one count:

* **length alone**: logistic regression on log characters and log words;
* **first three words alone**: logistic regression on the lower-cased opening (one-hot), so an
  opening seen only in other folds says nothing;
* **one-sided buckets**: every length bucket and every opening with at least ``min_rows`` requests,
  with its share of the minority label (0 means the bucket alone tells the label).

Issue 44's bar: on the judge's training set both probes reach AUROC <= 0.65, and no bucket or opening
with 30 or more rows is one-sided.
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

LENGTH_BUCKETS = (8, 16, 32, 64, 128, 256)  # words: <= 8, 9-16, ..., > 256


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def opening(text: str, n: int = 3) -> str:
    """The first ``n`` words, lower-cased.

    >>> opening("How do I bake bread?")
    'how do i'
    """
    return " ".join(words(text)[:n])


def surface(r: dict) -> dict:
    """What the probes may read of a request: its characters, words and opening (a corpus row, or a
    manifest row that already holds them)."""
    if "prompt" not in r:
        return r
    return r | {"chars": len(r["prompt"]), "words": len(r["prompt"].split()), "opening": opening(r["prompt"])}


def length_bucket(n: int) -> str:
    """The word-count bucket of a request of ``n`` words.

    >>> length_bucket(5), length_bucket(300)
    ('<=8', '>256')
    """
    for b in LENGTH_BUCKETS:
        if n <= b:
            return f"<={b}"
    return f">{LENGTH_BUCKETS[-1]}"


def _oof_auroc(X, y: np.ndarray, groups: list[str]) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    pred = np.zeros(len(y))
    for tr, te in GroupKFold(n_splits=5).split(X, y, groups):
        clf = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced").fit(X[tr], y[tr])
        pred[te] = clf.predict_proba(X[te])[:, 1]
    return float(roc_auc_score(y, pred))


def length_auroc(rows: list[dict]) -> float:
    """Out-of-fold AUROC of the harmful label from log characters and log words alone."""
    rows = [surface(r) for r in rows]
    X = np.array([[np.log1p(r["chars"]), np.log1p(r["words"])] for r in rows])
    return _oof_auroc(X, np.array([r["harmful"] for r in rows]), [r["group"] for r in rows])


def opening_auroc(rows: list[dict], n: int = 3) -> float:
    """Out-of-fold AUROC of the harmful label from the first ``n`` words alone (one-hot)."""
    from scipy.sparse import csr_matrix

    keys = [surface(r)["opening"] if n == 3 else opening(r["prompt"], n) for r in rows]
    vocab = {k: i for i, k in enumerate(sorted(set(keys)))}
    X = csr_matrix((np.ones(len(keys)), (np.arange(len(keys)), [vocab[k] for k in keys])), shape=(len(keys), len(vocab)))
    return _oof_auroc(X, np.array([r["harmful"] for r in rows]), [r["group"] for r in rows])


def one_sided(rows: list[dict], min_rows: int = 30) -> dict[str, dict]:
    """Length buckets and openings with at least ``min_rows`` requests: rows and minority share."""
    out = {}
    rows = [surface(r) for r in rows]
    for kind, key in (("length", lambda r: length_bucket(r["words"])), ("opening", lambda r: r["opening"])):
        n, harm = Counter(), Counter()
        for r in rows:
            k = key(r)
            n[k] += 1
            harm[k] += r["harmful"]
        for k, c in n.items():
            if c >= min_rows:
                out[f"{kind}:{k}"] = {"rows": c, "harmful": harm[k], "minority_share": round(min(harm[k], c - harm[k]) / c, 3)}
    return dict(sorted(out.items(), key=lambda kv: kv[1]["minority_share"]))


def audit(rows: list[dict], min_rows: int = 30) -> dict:
    """The three checks on one request set (see the module docstring)."""
    buckets = one_sided(rows, min_rows)
    return {"rows": len(rows), "length_auroc": round(length_auroc(rows), 3),
            "opening_auroc": round(opening_auroc(rows), 3),
            "one_sided": {k: v for k, v in buckets.items() if v["minority_share"] == 0},
            "least_mixed": dict(list(buckets.items())[:8])}
