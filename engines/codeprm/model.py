"""The step scorer: a small causal code encoder with per-step attention pooling and a score head.

tokens (+ each token's user-input mark, ``user_input.py``, as a second embedding) -> embedding ->
three causal dilated convolutions (local context, ~3 lines) -> a causal
prefix-mean memory (the running mean of projected features over all code so far, the global
context: imports, web framework, where input came from) mixed in -> per step: attention-pooled token features of the step + the GRU state at the step's
last token -> MLP -> logit of "this step is insecure". Causal by construction, so the score of
a step never depends on code after it: a prefix gets exactly the scores the full file would
give its steps (SecCodePRM's prefix-level scoring, Sec. 3).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engines.codeprm.config import PRMConfig
from engines.codeprm.user_input import N_MARKS


class StepScorer(nn.Module):
    """Causal conv + prefix-mean-memory encoder with per-step attention pooling.

    With ``cfg.user_input`` the forward pass takes the tokens' marks after the word parts.

    >>> m = StepScorer(PRMConfig())
    >>> ids = torch.randint(3, 100, (1, 12)); gidx = torch.tensor([[0, 1, 2, 12], [3, 4, 5, 6]])
    >>> m(ids, torch.zeros(1, 12, 3, dtype=torch.long), gidx, torch.tensor([2, 6]))[0].shape
    torch.Size([2])
    """

    def __init__(self, cfg: PRMConfig) -> None:
        super().__init__()
        e, h, k = cfg.embed_dim, cfg.hidden_dim, cfg.conv_kernel
        self.k = k
        self.hidden = h
        self.emb = nn.Embedding(cfg.vocab_size, e, padding_idx=0)
        self.user_input = cfg.user_input
        self.mark = nn.Embedding(N_MARKS, e, padding_idx=0) if cfg.user_input else None
        self.convs = nn.ModuleList([nn.Conv1d(e, e, k, dilation=d) for d in (1, 2, 4)])
        self.mem = nn.Conv1d(e, h, 1)
        self.mix = nn.Conv1d(e + h, h, 1)
        fdim = h + e
        self.fdim = fdim
        self.att = nn.Linear(fdim, 1)
        self.head = nn.Sequential(nn.Linear(fdim + h, 128), nn.GELU(), nn.Linear(128, 1))

    def __repr__(self) -> str:
        n = sum(p.numel() for p in self.parameters())
        return f"StepScorer(params={n}, embed={self.emb.embedding_dim}, hidden={self.hidden})"

    def features(self, ids: torch.Tensor, parts: torch.Tensor, marks: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T) token ids, (B, T, 3) word-part ids and (B, T) user-input marks ->
        (B, T, hidden + embed) causal features."""
        x = self.emb(ids) + self.emb(parts).sum(2)
        if self.mark is not None:
            x = x + self.mark(marks)
        x = x.transpose(1, 2)                                      # (B, E, T)
        for conv in self.convs:
            pad = (self.k - 1) * conv.dilation[0]
            x = x + F.relu(conv(F.pad(x, (pad, 0))))
        count = torch.arange(1, ids.shape[1] + 1, dtype=x.dtype).reshape(1, 1, -1)
        mem = torch.cumsum(self.mem(x), dim=2) / count             # causal running mean
        hseq = F.relu(self.mix(torch.cat([x, mem], dim=1)))
        return torch.cat([hseq, x], dim=1).transpose(1, 2)         # (B, T, H + E)

    def forward(self, ids: torch.Tensor, parts: torch.Tensor, *rest: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Step logits (S,) and attention weights (S, L) from ``ids, parts, [marks,] gidx, last``.

        ``marks`` (B, T): each token's user-input mark (only with ``cfg.user_input``); ``gidx``
        (S, L) holds indices into the flattened (B*T) tokens of each step's tokens, padded with
        B*T; ``last`` (S,) the flat index of each step's last token.
        """
        marks, gidx, last = rest if self.mark is not None else (None, *rest)
        f = self.features(ids, parts, marks)
        f = f.reshape(-1, self.fdim)
        f = torch.cat([f, torch.zeros(1, self.fdim, dtype=f.dtype)], dim=0)
        g = f[gidx]                                                # (S, L, F)
        pad = gidx >= (f.shape[0] - 1)
        a = self.att(g).squeeze(-1).masked_fill(pad, -1e4)
        w = torch.softmax(a, dim=-1)
        pooled = (w.unsqueeze(-1) * g).sum(1)
        ctx = f[last][:, : self.hidden]
        logits = self.head(torch.cat([pooled, ctx], dim=-1)).squeeze(-1)
        return logits, w


def export_onnx(model: StepScorer, cfg: PRMConfig, path) -> None:
    """Export the step scorer for onnxruntime (opset 17; dynamic tokens, steps, step length)."""
    model.eval()
    ids = torch.randint(3, cfg.vocab_size, (1, 200))
    gidx = torch.tensor([[0, 1, 2, 3] + [200] * (cfg.max_step_tokens - 4), list(range(4, 4 + cfg.max_step_tokens))])
    last = torch.tensor([3, 199])
    parts = torch.randint(0, cfg.vocab_size, (1, 200, 3))
    marks = torch.randint(0, N_MARKS, (1, 200))
    names = ["ids", "parts"] + (["marks"] if cfg.user_input else []) + ["gidx", "last"]
    args = (ids, parts) + ((marks,) if cfg.user_input else ()) + (gidx, last)
    torch.onnx.export(model, args, str(path), input_names=names,
                      output_names=["logits", "attention"], opset_version=17, dynamo=False,
                      dynamic_axes={"ids": {1: "T"}, "parts": {1: "T"}, "marks": {1: "T"}, "gidx": {0: "S", 1: "L"},
                                    "last": {0: "S"}, "logits": {0: "S"}, "attention": {0: "S", 1: "L"}})
