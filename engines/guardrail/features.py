"""Reading the protected LM's hidden states: the taps the SLD head consumes.

``hidden_states[i]`` of a transformers Llama is the residual stream after decoder layer ``i``
(``0`` = embeddings, the last entry = the final RMS-normed state that feeds the LM head). The
head reads a few intermediate layers (PlugGuard / Kelp, arXiv 2510.09694, Sec. 3.2: risk is
more linearly visible mid-network than at the output).
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from engines.common.errors import InputError


def tap(hidden_states: Sequence[torch.Tensor], layers: Sequence[int]) -> torch.Tensor:
    """Concatenate the chosen layers' hidden states on the last axis: (B, T, len(layers) * H).

    >>> hs = [torch.full((1, 2, 3), float(i)) for i in range(4)]
    >>> tap(hs, (1, 3)).shape
    torch.Size([1, 2, 6])
    """
    n = len(hidden_states)
    for layer in layers:
        if not 0 <= layer < n:
            raise InputError(f"layer {layer} is out of range: the model exposes hidden states 0..{n - 1}")
    return torch.cat([hidden_states[i] for i in layers], dim=-1)


@torch.inference_mode()
def teacher_forced(model, prompt_ids: list[list[int]], response_ids: list[list[int]],
                   layers: Sequence[int], pad_id: int, prompt_all: bool = False):
    """Hidden-state taps for replies fed after their prompts, in one right-padded batch.

    Returns (per-reply tensors (T_i, len(layers) * H) at the reply positions, and the taps at
    the last prompt position (B, len(layers) * H), which initialise the head's memory); with
    ``prompt_all`` also the taps at every prompt position, (P_i, len(layers) * H) per prompt (what
    the request judge averages over). Right padding leaves every real position's attention exactly
    as unpadded.
    """
    seqs = [p + r for p, r in zip(prompt_ids, response_ids)]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    dev = next(model.parameters()).device
    base = model.model if hasattr(model, "model") else model
    out = base(input_ids=ids.to(dev), attention_mask=mask.to(dev), output_hidden_states=True)
    feats = tap(out.hidden_states, layers).float().cpu()
    per, prompt_last = [], []
    for i, (p, r) in enumerate(zip(prompt_ids, response_ids)):
        per.append(feats[i, len(p): len(p) + len(r)])
        prompt_last.append(feats[i, len(p) - 1])
    if prompt_all:
        return per, torch.stack(prompt_last), [feats[i, : len(p)] for i, p in enumerate(prompt_ids)]
    return per, torch.stack(prompt_last)
