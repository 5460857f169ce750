"""Streaming metrics: stop decisions, response-level F1, false stops, detection latency."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Detection-latency bins (stop index minus anchor, in tokens), after Qwen3Guard-Stream's
# latency buckets: before the anchor, at it, and growing delays after it.
LATENCY_BINS: tuple[tuple[str, float, float], ...] = (
    ("<0 (before anchor)", -np.inf, -1),
    ("0", 0, 0),
    ("1-4", 1, 4),
    ("5-8", 5, 8),
    ("9-16", 9, 16),
    ("17-32", 17, 32),
    (">32", 33, np.inf),
)


def stop_index(risks: Sequence[float], threshold: float, patience: int) -> int | None:
    """First token index at which ``patience`` consecutive risks reached ``threshold``; else None.

    >>> stop_index([0.1, 0.7, 0.8, 0.2], threshold=0.5, patience=2)
    2
    >>> stop_index([0.1, 0.7, 0.2], threshold=0.5, patience=2) is None
    True
    """
    run = 0
    for i, r in enumerate(risks):
        run = run + 1 if r >= threshold else 0
        if run >= patience:
            return i
    return None


def f1_scores(y_true: Sequence[int], y_pred: Sequence[int]) -> dict:
    """Precision, recall, F1 and accuracy of binary predictions (harmful = positive).

    >>> f1_scores([1, 0, 1, 0], [1, 0, 0, 0])["f1"]
    0.6666666666666666
    """
    y, p = np.asarray(y_true, bool), np.asarray(y_pred, bool)
    tp, fp, fn = int((y & p).sum()), int((~y & p).sum()), int((y & ~p).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "accuracy": float((y == p).mean()) if len(y) else 0.0,
            "n": len(y), "positives": int(y.sum())}


def latency_bins(latencies: Sequence[int]) -> dict[str, float]:
    """Share of detected harmful replies per latency bin (stop index minus anchor, tokens).

    >>> latency_bins([0, 0, 3, 40])["0"]
    0.5
    """
    lat = np.asarray(latencies, float)
    n = max(len(lat), 1)
    return {name: float(((lat >= lo) & (lat <= hi)).sum() / n) for name, lo, hi in LATENCY_BINS}


def streaming_report(traces: Sequence[Sequence[float]], labels: Sequence[int], anchors: Sequence[int | None],
                     benign_prompt: Sequence[bool], threshold: float, patience: int) -> dict:
    """Streaming-mode evaluation: a reply is called harmful iff the stop policy fires on it.

    Returns F1 etc., ``false_stop_benign`` (share of replies to benign prompts that were stopped),
    ``false_stop_safe`` (share of all safe replies stopped), median detection latency (tokens) and
    its bins, over the harmful replies that were stopped.

    >>> rep = streaming_report([[0.9, 0.9], [0.1, 0.1]], [1, 0], [0, None], [False, True], 0.5, 2)
    >>> rep["f1"], rep["false_stop_benign"], rep["median_latency"]
    (1.0, 0.0, 1.0)
    """
    stops = [stop_index(t, threshold, patience) for t in traces]
    pred = [int(s is not None) for s in stops]
    rep = f1_scores(labels, pred)
    benign = [p for p, b, y in zip(pred, benign_prompt, labels) if b and not y]
    safe = [p for p, y in zip(pred, labels) if not y]
    rep["false_stop_benign"] = float(np.mean(benign)) if benign else float("nan")
    rep["n_benign_prompts"] = len(benign)
    rep["false_stop_safe"] = float(np.mean(safe)) if safe else float("nan")
    lat = [s - a for s, y, a in zip(stops, labels, anchors) if y and s is not None and a is not None]
    rep["median_latency"] = float(np.median(lat)) if lat else float("nan")
    rep["latency_bins"] = latency_bins(lat)
    rep["threshold"], rep["patience"] = float(threshold), int(patience)
    return rep
