"""The request judge's levels (evals.guardrail.judge_train.pick_levels): the strict gate caps every benign
family's flagged share on its own, harmful requests never count as false stops, and the band sits below the gate."""
from __future__ import annotations

import numpy as np
import pytest

from evals.guardrail.judge_train import family_rates, pick_levels


def _rows(rng):
    rows, p = [], []
    for fam, hi in (("everyday", 0.3), ("medical", 0.7), ("fiction", 0.5)):
        for _ in range(100):
            rows.append({"harmful": 0, "bar_family": fam})
            p.append(rng.uniform(0.0, hi))
    for _ in range(200):  # harmful requests, listed first and last so a position mix-up would show
        rows.insert(0, {"harmful": 1, "bar_family": "harmful_src"})
        p.insert(0, rng.uniform(0.6, 1.0))
    return rows, np.array(p)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cap", [0.0, 0.03, 0.1])
def test_the_gate_caps_every_benign_family_and_is_the_lowest_that_does(seed, cap):
    rows, p = _rows(np.random.default_rng(seed))
    lv = pick_levels(p, rows, cap=cap, band_recall=0.95)
    benign = [r for r in rows if not r["harmful"]]
    pb = p[[not r["harmful"] for r in rows]]
    rates = family_rates(pb, benign, lv["gate"])
    assert all(v["rate"] <= cap for v in rates.values())
    assert set(lv["capped_families"]) == {"everyday", "medical", "fiction"}
    # the medical family (scores up to 0.7) binds: just below the gate some family is over the cap
    lower = [x for x in np.unique(np.round(pb, 4)) if x < lv["gate"]]
    if lower and lv["gate"] > 0.05:
        assert any(v["rate"] > cap for v in family_rates(pb, benign, lv["gate"] - 0.011).values())
    harm = p[[bool(r["harmful"]) for r in rows]]
    assert lv["dev_recall_at_gate"] == pytest.approx(float((harm >= lv["gate"]).mean()), abs=1e-4)
    assert lv["band"] == 0.0 or lv["band"] < lv["gate"]
