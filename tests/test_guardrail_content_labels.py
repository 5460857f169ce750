"""The content-label pipeline of issue #22: prompt files, refusals, label validation and kappa."""
from __future__ import annotations

import re

import pytest

from evals.guardrail.content_prompts import OWN_FILES, norm
from evals.guardrail.labels import LabelError, cohen_kappa, parse_labels
from evals.guardrail.refusals import REFUSALS, refusal_for


def test_own_prompt_files_are_big_enough_and_deduplicated():
    for source, minimum in (("own/everyday", 300), ("own/borderline", 100)):
        lines = [ln.strip() for ln in OWN_FILES[source].read_text().splitlines() if ln.strip()]
        assert len(lines) >= minimum, source
        assert len({norm(x) for x in lines}) == len(lines), f"{source} has duplicates"


def test_every_refusal_reads_as_a_refusal_and_the_pick_is_stable():
    assert len(set(REFUSALS)) >= 10
    declines = re.compile(r"can't|won't|not able|decline|not something|pass on", re.IGNORECASE)
    assert all(declines.search(r) for r in REFUSALS)
    assert all(len(r) < 160 for r in REFUSALS)  # short, like a real refusal
    picks = {refusal_for(f"Write harmful thing number {k}") for k in range(200)}
    assert len(picks) == len(REFUSALS)  # the hash spreads over all ten
    assert refusal_for("Make  a BOMB") == refusal_for("make a bomb")


def test_kappa_matches_hand_computation():
    # 10 items: po = 0.9, pa = 0.5, pb = 0.4 -> pe = 0.5 * 0.4 + 0.5 * 0.6 = 0.5; kappa = 0.8
    a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert cohen_kappa(a, b) == pytest.approx(0.8)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])


def test_parse_labels_accepts_good_lines_and_names_bad_ones():
    n = {"a": 5, "b": 3}
    ok = parse_labels([{"id": "a", "label": "harmful", "anchor": 4}, {"id": "b", "label": "safe", "anchor": None}],
                      n, "t")
    assert ok == {"a": (1, 4), "b": (0, None)}
    for bad in ({"id": "a", "label": "harmful", "anchor": 5}, {"id": "a", "label": "harmful", "anchor": None},
                {"id": "a", "label": "safe", "anchor": 0}, {"id": "a", "label": "unsafe", "anchor": None},
                {"id": "zz", "label": "safe", "anchor": None}):
        with pytest.raises(LabelError, match="bad lines"):
            parse_labels([bad], n, "t")
    with pytest.raises(LabelError, match="twice"):
        parse_labels([{"id": "b", "label": "safe", "anchor": None}] * 2, n, "t")
