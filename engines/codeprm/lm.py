"""The learned step scorer that reads code through SmolLM2-135M's hidden states.

Code -> steps (``steps.split_steps``: blank-line blocks, cut at statements) -> SmolLM2 tokens
(one pass per window of at most ``window_tokens`` tokens, windows made of whole steps) -> for
each step, at a few layers of the residual stream: the mean hidden state of the step's tokens
and the mean of all tokens of the window up to the step's end (the causal code context) ->
a small MLP -> the step's risk logit. The LM is causal, so a step's features never depend on
code after it: a prefix gets the scores the full code gives its complete steps (SecCodePRM's
prefix-level scoring). Step safety s_i = 1 - sigmoid(logit); the program score is the soft
minimum (``aggregation.softmin_safety``).
"""
from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from engines.codeprm.steps import Span, split_steps
from engines.common.errors import ShowcaseError

_LOCK = threading.Lock()


@dataclass
class LMConfig:
    """What shapes the LM-backed step scorer.

    Args:
        layers: residual-stream layers whose step features are computed (the LM runs only up
            to the deepest one).
        layer: the layer the head reads (one of ``layers``; chosen on the dev repositories).
        window_tokens: longest LM pass; longer code is cut into windows of whole steps.
        max_step_lines: step length cap of ``split_steps`` (the same steps the fast path scores).
        hidden: width of the head's hidden layer.
        dtype: LM compute dtype ("bfloat16" or "float32").
    """

    layers: tuple[int, ...] = (6, 9, 12)
    layer: int = 9
    window_tokens: int = 384
    max_step_lines: int = 8
    hidden: int = 128
    dtype: str = "bfloat16"

    def __post_init__(self) -> None:
        self.layers = tuple(int(x) for x in self.layers)
        if not self.layers or min(self.layers) < 1 or max(self.layers) > 30:
            raise ValueError(f"layers must lie in 1..30 (SmolLM2-135M has 30), got {self.layers}")
        if self.layer not in self.layers:
            raise ValueError(f"layer {self.layer} must be one of layers {self.layers}")
        if self.window_tokens < 32:
            raise ValueError(f"window_tokens must be >= 32, got {self.window_tokens}")
        if self.max_step_lines < 1 or self.hidden < 4:
            raise ValueError("max_step_lines must be >= 1 and hidden >= 4")
        if self.dtype not in ("bfloat16", "float32"):
            raise ValueError(f"dtype must be 'bfloat16' or 'float32', got {self.dtype!r}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["layers"] = list(self.layers)
        return d


@dataclass
class StepFeatures:
    """LM features of one piece of code: spans and (S, n_layers, 2, D) float16 [step mean, context
    mean]; rows of steps outside the computed windows are NaN."""

    spans: list[Span]
    feats: np.ndarray
    windows: list[tuple[int, int]] = field(default_factory=list)  # (first step, last step) per window


def _token_lines(code: str, offsets: list[tuple[int, int]]) -> np.ndarray:
    """1-based line of each token: the line of its first non-blank character (a token that is
    only whitespace belongs to the line where it ends)."""
    starts = np.cumsum([0] + [len(x) + 1 for x in code.split("\n")])
    out = np.empty(len(offsets), dtype=np.int64)
    for i, (a, b) in enumerate(offsets):
        piece = code[a:b]
        k = len(piece) - len(piece.lstrip())
        pos = a + k if k < len(piece) else max(a, b - 1)
        out[i] = int(np.searchsorted(starts, pos, side="right"))
    return out


def plan_windows(tok_lo: np.ndarray, tok_hi: np.ndarray, window_tokens: int) -> list[tuple[int, int]]:
    """Pack consecutive steps (token ranges [lo, hi)) into windows of at most ``window_tokens``
    tokens; a step longer than that gets a window of its own (cut at the limit).

    >>> plan_windows(np.array([0, 10, 30]), np.array([10, 30, 100]), 40)
    [(0, 1), (2, 2)]
    """
    out = []
    first = 0
    for s in range(1, len(tok_lo) + 1):
        if s == len(tok_lo) or tok_hi[s] - tok_lo[first] > window_tokens:
            out.append((first, s - 1))
            first = s
    return out


class _Runner:
    """SmolLM2 run up to a given layer with its own loop over the decoder layers (the shared
    backbone object is never changed, so other engines can use it at the same time)."""

    def __init__(self, bb) -> None:
        self.bb = bb
        self.m = bb.model.model
        self._last: tuple | None = None  # (ids, layers, KV cache, hidden states) of the last pass

    @torch.inference_mode()
    def hidden(self, ids: list[int], layers: tuple[int, ...]) -> list[torch.Tensor]:
        """Hidden states (T, D) at each of ``layers`` for the token ids ``ids``. The LM is causal,
        so when ``ids`` shares a prefix with the previous pass (a fix after its vulnerable
        version, a prefix after its full code) only the new tokens are run, on the kept KV cache."""
        layers = tuple(layers)
        c = 0
        if self._last is not None and self._last[1] == layers:
            prev = self._last[0]
            n = min(len(prev), len(ids))
            while c < n and prev[c] == ids[c]:
                c += 1
        if c == len(ids) and c > 0:
            return [h[:c] for h in self._last[3]]
        if c >= 16:
            cache = self._last[2]
            cache.crop(-(len(self._last[0]) - c))  # drop the tokens after the shared prefix
            new = self._run(ids[c:], layers, cache, c)
            out = [torch.cat([h[:c], g]) for h, g in zip(self._last[3], new)]
        else:
            from transformers import DynamicCache

            cache = DynamicCache()
            out = self._run(ids, layers, cache, 0)
        self._last = (list(ids), layers, cache, out)
        return out

    def _run(self, ids: list[int], layers: tuple[int, ...], cache, start: int) -> list[torch.Tensor]:
        from transformers.masking_utils import create_causal_mask

        m = self.m
        x = torch.tensor([ids], dtype=torch.long, device=self.bb.device)
        h = m.embed_tokens(x)
        pos = torch.arange(start, start + x.shape[1], device=x.device).unsqueeze(0)
        mask = create_causal_mask(config=m.config, inputs_embeds=h, attention_mask=None, cache=cache,
                                  position_ids=pos)
        pe = m.rotary_emb(h, position_ids=pos)
        want = set(layers)
        got = {}
        for i, layer in enumerate(m.layers[: max(layers)], 1):
            h = layer(h, attention_mask=mask, position_embeddings=pe, position_ids=pos, cache=cache, use_cache=True)
            if isinstance(h, tuple):
                h = h[0]
            if i in want:
                got[i] = h[0].float()
        return [got[k] for k in layers]


_RUNNERS: dict[tuple[str, str], _Runner] = {}


def runner(device: str | None = None, dtype: str = "bfloat16") -> _Runner:
    """The SmolLM2 runner for a device (CUDA when present) and dtype, loaded once per process."""
    from engines.common.backbone import load_backbone
    from engines.common.device import get_device

    dev = str(get_device(device))
    key = (dev, dtype)
    with _LOCK:
        if key not in _RUNNERS:
            _RUNNERS[key] = _Runner(load_backbone(dev, dtype=getattr(torch, dtype)))
        return _RUNNERS[key]


def step_features(code: str, cfg: LMConfig, run: _Runner, spans: list[Span] | None = None,
                  only_steps: set[int] | None = None) -> StepFeatures:
    """LM step features of ``code`` (see the module docstring). ``only_steps`` limits the LM
    passes to the windows that hold those step indices (the training cache skips windows a fix
    did not touch); the other rows stay NaN."""
    if spans is None:
        spans = split_steps(code, cfg.max_step_lines)
    tok = run.bb.tokenizer
    enc = tok(code, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    D = run.m.config.hidden_size
    S = len(spans)
    out = np.full((S, len(cfg.layers), 2, D), np.nan, dtype=np.float16)
    if not ids or not S:
        return StepFeatures(spans, out, [])
    lines = _token_lines(code, enc["offset_mapping"])
    lo = np.searchsorted(lines, [s.start for s in spans], side="left")
    hi = np.searchsorted(lines, [s.end for s in spans], side="right")
    hi = np.maximum(hi, lo)
    wins = plan_windows(lo, hi, cfg.window_tokens)
    for w, (a, b) in enumerate(wins):
        if only_steps is not None and not any(a <= k <= b for k in only_steps):
            continue
        t0 = int(lo[a])
        t1 = min(int(hi[b]), t0 + cfg.window_tokens)
        if t1 <= t0:
            continue
        hs = run.hidden(ids[t0:t1], cfg.layers)
        for j, h in enumerate(hs):
            csum = torch.cumsum(h, 0)
            for s in range(a, b + 1):
                s0, s1 = int(lo[s]) - t0, min(int(hi[s]), t1) - t0
                if s1 <= s0:        # a step without tokens of its own (cut off): use its neighbour
                    s0, s1 = max(0, min(s0, t1 - t0 - 1)), max(1, min(s0 + 1, t1 - t0))
                out[s, j, 0] = (h[s0:s1].mean(0)).cpu().numpy().astype(np.float16)
                out[s, j, 1] = (csum[s1 - 1] / s1).cpu().numpy().astype(np.float16)
    return StepFeatures(spans, out, wins)


class LMStepHead(nn.Module):
    """Standardised [step mean, context mean] of one layer -> MLP -> step risk logit.

    >>> h = LMStepHead(8, 4); h(torch.zeros(3, 16)).shape
    torch.Size([3])
    """

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.register_buffer("mu", torch.zeros(2 * dim))
        self.register_buffer("sd", torch.ones(2 * dim))
        self.net = nn.Sequential(nn.Dropout(0.1), nn.Linear(2 * dim, hidden), nn.GELU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mu) / self.sd).squeeze(-1)


class LMScorer:
    """Loads the LM head from ``assets/codeprm`` and scores steps of code with SmolLM2 features.

    >>> sc = LMScorer.load()                                       # doctest: +SKIP
    >>> sc.step_risks("import os\\nos.system(cmd)\\n")[1].shape      # doctest: +SKIP
    (1,)
    """

    def __init__(self, cfg: LMConfig, head: LMStepHead, device: str | None = None) -> None:
        self.cfg = cfg
        self.head = head.eval()
        self.device = device

    @classmethod
    def load(cls, asset_dir: str | Path | None = None, device: str | None = None) -> LMScorer:
        from safetensors.torch import load_file

        from engines.common.paths import ASSETS_DIR

        d = Path(asset_dir) if asset_dir is not None else ASSETS_DIR / "codeprm"
        try:
            meta = json.loads((d / "lm_head.json").read_text())
            state = load_file(str(d / "lm_head.safetensors"))
        except (OSError, ValueError) as exc:
            raise ShowcaseError(f"codeprm LM head missing in {d}: run scripts/codeprm_train_lm.py") from exc
        cfg = LMConfig(**meta["config"])
        head = LMStepHead(state["mu"].numel() // 2, cfg.hidden)
        head.load_state_dict(state)
        return cls(cfg, head, device)

    def risks_from_features(self, sf: StepFeatures) -> np.ndarray:
        """Step risk probabilities from cached features (NaN rows -> risk 0: not scored)."""
        j = self.cfg.layers.index(self.cfg.layer)
        x = sf.feats[:, j].reshape(len(sf.spans), -1).astype(np.float32)
        ok = ~np.isnan(x).any(1)
        p = np.zeros(len(sf.spans))
        if ok.any():
            with torch.inference_mode():
                p[ok] = torch.sigmoid(self.head(torch.from_numpy(x[ok]))).double().numpy()
        return p

    def step_risks(self, code: str, spans: list[Span] | None = None) -> tuple[list[Span], np.ndarray]:
        """Steps of ``code`` and each step's risk probability (1 - safety)."""
        sf = step_features(code, self.cfg, runner(self.device, self.cfg.dtype), spans)
        return sf.spans, self.risks_from_features(sf)
