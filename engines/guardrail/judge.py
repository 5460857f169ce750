"""The request judge's inputs and its reading of one request.

The judge (a logistic read-out inside the head, :meth:`engines.guardrail.head.SLDHead.request_prob`)
reads the request once, before the reply's first token: the protected LM's taps at the last prompt
token, their mean over the user-text tokens, and the request's sentence embedding
(:mod:`engines.common.sentence_encoder`). The LM's part comes free from the prefill the reply needs
anyway; the sentence encoder costs one short forward pass per request. Training
(:mod:`evals.guardrail.requests`) and serving build these inputs with the same functions and the same
cut of the user text (:func:`engines.common.backbone.cut_user_text`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engines.common.backbone import ChatPrompt
from engines.guardrail.config import GuardConfig

BAND_WORDS = {"harmful": "likely harmful", "uncertain": "may be risky", "benign": "likely benign"}


@dataclass
class RequestReading:
    """How the judge read one request: ``probability`` that it is harmful (None without a judge), the
    strict ``band`` it falls in (:meth:`GuardConfig.band`), and whether the judge read a ``cut`` of it
    (its first and last tokens only)."""

    probability: float | None
    band: str | None
    cut: bool = False

    @property
    def words(self) -> str | None:
        """The band in plain words ("likely harmful", "may be risky", "likely benign")."""
        return None if self.band is None else BAND_WORDS[self.band]

    def to_dict(self) -> dict:
        """Plain JSON: ``probability`` (4 places), ``band``, ``words`` and ``cut``.

        >>> RequestReading(0.97123, "harmful").to_dict()["words"]
        'likely harmful'
        """
        p = None if self.probability is None else round(float(self.probability), 4)
        return {"probability": p, "band": self.band, "words": self.words, "cut": self.cut}


def judge_inputs(prompt_taps: torch.Tensor, prompt: ChatPrompt, sentence: np.ndarray | torch.Tensor | None,
                 cfg: GuardConfig) -> torch.Tensor:
    """The judge's input row (1, ``cfg.judge_dim``) from the taps at every prompt position (T, k * H):
    the last position's taps, then (for a ``"last+mean+sentence"`` judge) their mean over the user-text
    tokens and the sentence embedding.

    >>> from engines.common.backbone import ChatPrompt
    >>> cfg = GuardConfig(layers=(1,), hidden_size=2, request_inputs="last+mean+sentence", sentence_dim=3)
    >>> t = torch.arange(8.0).reshape(4, 2)
    >>> judge_inputs(t, ChatPrompt([0, 1, 2, 3], 1, 3, False), np.ones(3), cfg).tolist()
    [[6.0, 7.0, 3.0, 4.0, 1.0, 1.0, 1.0]]
    """
    last = prompt_taps[-1:]
    if cfg.request_inputs == "last":
        return last
    mean = prompt_taps[prompt.user_start: prompt.user_end].mean(0, keepdim=True)
    if sentence is None:
        raise ValueError("this judge reads the sentence embedding: pass the request's embedding")
    s = torch.as_tensor(np.asarray(sentence, dtype=np.float32)).reshape(1, -1).to(last)
    return torch.cat([last, mean, s], dim=-1)
