"""Inter-rater agreement of the PyRIT harm Likert set: a ceiling for the human view's labels.

    .venv/bin/python -m evals.guardrail.rater_agreement

For every row with several human scores whose prompt falls in the train or dev split (test rows are
not read), each rater's own binary label (score >= HARM_THRESHOLD) is compared with the label the
data script gives from the other raters' mean score. Prints F1 / precision / recall / accuracy of
"one rater vs the others" (benchmarks/RESULTS.md#guardrail, fourth round).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import evals.guardrail.data as gd
from engines.guardrail.metrics import f1_scores

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    z = gd._wheel("pyrit")
    rows = []
    for name in sorted(z.namelist()):
        if name.endswith(".csv") and "/scorer_evals/harm/" in name:
            for row in gd._csv_rows(z, name):
                prompt = (row.get("objective") or "").strip()
                reply = (row.get("assistant_response") or "").strip()
                scores = [float(v) for k, v in row.items() if k and k.startswith("human_score") and v not in (None, "")]
                if prompt and reply and scores:
                    rows.append((gd._split_of(prompt), scores))
    counts = {n: sum(len(s) == n for _, s in rows) for n in sorted({len(s) for _, s in rows})}
    multi = [s for split, s in rows if split in ("train", "dev") and len(s) >= 2]
    y, p = [], []
    for s in multi:
        for k in range(len(s)):
            others = s[:k] + s[k + 1:]
            y.append(int(np.mean(others) >= gd.HARM_THRESHOLD))
            p.append(int(s[k] >= gd.HARM_THRESHOLD))
    r = f1_scores(y, p)
    print(f"{len(rows)} harm rows; raters per row: {counts}")
    print(f"{len(multi)} train/dev rows with >= 2 raters, {len(y)} (rater, row) pairs: one rater vs the others' "
          f"mean label: F1 {r['f1']:.3f}, precision {r['precision']:.3f}, recall {r['recall']:.3f}, "
          f"accuracy {r['accuracy']:.3f}")


if __name__ == "__main__":
    main()
