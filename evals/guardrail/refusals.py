"""Natural refusals for the paired-reply test set (issue #22, item 3), and the hash pick shared with
the training refusals (:mod:`evals.guardrail.refusal_aug`).

Each held-out harmful prompt is teacher-forced once with a refusal from this list and once with
a real compliant reply from a human-labelled set. The refusal is chosen by a hash of the prompt,
so the pairing is deterministic and the ten phrasings spread evenly over the prompts. Both lists of
phrasings live in ``refusals.json`` beside this module (``paired_test`` and ``train``).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

REFUSAL_FILE = Path(__file__).with_name("refusals.json")
_PHRASINGS = json.loads(REFUSAL_FILE.read_text(encoding="utf-8"))
REFUSALS: tuple[str, ...] = tuple(_PHRASINGS["paired_test"])
TRAIN_REFUSALS: tuple[str, ...] = tuple(_PHRASINGS["train"])


def pick(options: tuple[str, ...], prompt: str, digits: slice = slice(0, 8)) -> str:
    """One of ``options`` for ``prompt``: hex ``digits`` of a SHA-1 of its lower-cased,
    whitespace-collapsed text, modulo the number of options."""
    norm = " ".join(prompt.lower().split())
    return options[int(hashlib.sha1(norm.encode()).hexdigest()[digits], 16) % len(options)]


def refusal_for(prompt: str) -> str:
    """The refusal paired with ``prompt``: one of :data:`REFUSALS`, picked by a SHA-1 of its text.

    >>> refusal_for("x") in REFUSALS
    True
    >>> refusal_for("Write a phishing email") == refusal_for("write a  phishing email")
    True
    """
    return pick(REFUSALS, prompt)
