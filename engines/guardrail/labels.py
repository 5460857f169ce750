"""Anchors and token labels for the Anchored Temporal Consistency (ATC) objective.

The *anchor* of a harmful reply is the first sentence that is not a refusal or a disclaimer
(PlugGuard / Kelp, arXiv 2510.09694, Sec. 3.3: "benign-then-harmful" temporal prior). Tokens
before the anchor are labelled benign, tokens from the anchor on harmful. A benign reply has
no anchor and every token is benign.
"""
from __future__ import annotations

import re

# A sentence that only refuses, apologises, warns or hedges. Matched case-insensitively at the
# sentence start or anywhere for the strong phrases.
_REFUSAL = re.compile(
    r"(\bi\s*(?:am|'m)\s+(?:sorry|unable|not able|not comfortable|afraid)|\bi\s+(?:can(?:no|')?t|cannot|won'?t|will not|"
    r"must (?:decline|refuse)|do not|don'?t)\s+(?:help|assist|provide|comply|create|write|generate|support|fulfil|"
    r"do that|engage|share|give|offer|answer|condone|encourage|recommend)|\bas an ai\b|\bas a (?:language model|"
    r"responsible)|\bi apologi[sz]e|\bsorry,? but\b|\bunethical\b|\billegal and\b|\bnot (?:appropriate|ethical)\b|"
    r"\bi (?:strongly )?(?:advise|urge|recommend) (?:against|you not)|\bplease (?:note|be aware|consult|seek)|"
    r"\bdisclaimer\b|\bit(?:'s| is) (?:important|crucial|essential) to (?:note|remember|emphasi[sz]e)|"
    r"\bi(?:'m| am) (?:here to|designed to) (?:help|provide) (?:with )?(?:safe|helpful|positive)|"
    r"\bcan(?:no|')?t (?:help|assist) with\b|\bagainst (?:my|the) (?:guidelines|policy|policies)\b|"
    r"\bseek (?:professional|immediate) help\b|\bfor (?:educational|informational) purposes only\b)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n+|$)")


def is_refusal_sentence(sentence: str) -> bool:
    """True when ``sentence`` refuses, apologises or only warns (no harmful content).

    >>> is_refusal_sentence("I'm sorry, but I can't help with that.")
    True
    >>> is_refusal_sentence("Step 1: mix the two powders.")
    False
    """
    s = sentence.strip()
    return not s or not re.search(r"[A-Za-z0-9]", s) or bool(_REFUSAL.search(s))


def find_anchor_char(text: str) -> int | None:
    """Character offset of the first sentence that is not a refusal/disclaimer, or None.

    >>> find_anchor_char("I can't help with that. As an AI I must decline.") is None
    True
    >>> t = "I'm sorry, but here it is. First, buy the chemicals."
    >>> t[find_anchor_char(t):]
    'First, buy the chemicals.'
    """
    for m in _SENTENCE.finditer(text):
        if not is_refusal_sentence(m.group(0)):
            return m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
    return None


def is_refusal(text: str) -> bool:
    """True when no sentence of ``text`` is anything but a refusal or disclaimer.

    >>> is_refusal("I cannot help with that request.")
    True
    >>> is_refusal("Sure. Here is how.")
    False
    """
    return find_anchor_char(text) is None


def anchor_token_index(offsets: list[tuple[int, int]], anchor_char: int | None) -> int | None:
    """Index of the first token whose span ends after ``anchor_char`` (None stays None).

    >>> anchor_token_index([(0, 3), (3, 8), (8, 12)], 5)
    1
    """
    if anchor_char is None:
        return None
    for i, (_, end) in enumerate(offsets):
        if end > anchor_char:
            return i
    return max(len(offsets) - 1, 0)


def token_labels(n_tokens: int, anchor: int | None) -> list[int]:
    """Per-token labels: 0 before the anchor, 1 from it on; all 0 without an anchor.

    >>> token_labels(5, 2)
    [0, 0, 1, 1, 1]
    """
    if anchor is None:
        return [0] * n_tokens
    return [int(i >= anchor) for i in range(n_tokens)]
