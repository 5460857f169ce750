"""Disk cache of SmolLM2 step features (float16, one .npz per piece of code, keyed by its hash),
so that training, model selection and the benchmarks read the LM once per function."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from engines.codeprm.lm import LMConfig, StepFeatures, runner, step_features
from engines.codeprm.steps import Span
from engines.common.paths import REPO_ROOT

CACHE_ROOT = REPO_ROOT / "data" / "codeprm" / "feats"


def cache_dir(cfg: LMConfig) -> Path:
    """The cache folder of one feature configuration (layers, window, steps, dtype)."""
    tag = f"L{'-'.join(map(str, cfg.layers))}_w{cfg.window_tokens}_s{cfg.max_step_lines}_{cfg.dtype}"
    return CACHE_ROOT / tag


def code_key(code: str) -> str:
    return hashlib.sha1(code.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _load(path: Path) -> tuple[StepFeatures, bool] | None:
    try:
        z = np.load(path)
        spans = [Span(int(a), int(b)) for a, b in z["spans"]]
        return StepFeatures(spans, z["feats"], [tuple(w) for w in z["windows"].tolist()]), bool(z["complete"])
    except (OSError, KeyError, ValueError):
        return None


def features(code: str, cfg: LMConfig, only_steps: set[int] | None = None, compute: bool = True,
             device: str | None = None) -> StepFeatures | None:
    """Cached step features of ``code``; computed (and stored) when missing unless ``compute`` is
    False (then None). ``only_steps``: rows that must be present (None = all)."""
    d = cache_dir(cfg)
    path = d / f"{code_key(code)}.npz"
    hit = _load(path) if path.is_file() else None
    if hit is not None:
        sf, complete = hit
        if complete or (only_steps is not None and all(not np.isnan(sf.feats[k]).any() for k in only_steps
                                                       if k < len(sf.spans))):
            return sf
    if not compute:
        return None
    sf = step_features(code, cfg, runner(device, cfg.dtype), only_steps=only_steps)
    complete = only_steps is None
    if hit is not None and not complete and hit[0].feats.shape == sf.feats.shape:
        keep = np.isnan(sf.feats) & ~np.isnan(hit[0].feats)
        sf.feats[keep] = hit[0].feats[keep]
    d.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    np.savez(tmp, feats=sf.feats, spans=np.array([(s.start, s.end) for s in sf.spans], dtype=np.int64).reshape(-1, 2),
             windows=np.array(sf.windows, dtype=np.int64).reshape(-1, 2), complete=np.array(complete))
    tmp.replace(path)
    return sf
