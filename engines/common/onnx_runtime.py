"""ONNX Runtime sessions: CUDA provider when present, else CPU, spinning threads off.

Idle ORT worker threads spin by default and steal cycles from torch running beside them,
so every session made here disables spinning.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import onnxruntime as ort

from engines.common.errors import InputError


def providers() -> list[str]:
    """Execution providers to ask for, best first, among those this onnxruntime has."""
    available = ort.get_available_providers()
    wanted = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if os.environ.get("SHOWCASE_DEVICE", "").startswith("cpu"):
        wanted = ["CPUExecutionProvider"]
    return [p for p in wanted if p in available]


def session_options(intra_threads: int | None = None) -> ort.SessionOptions:
    """Session options with spinning disabled and a bounded thread count."""
    opts = ort.SessionOptions()
    threads = intra_threads if intra_threads is not None else min(2, os.cpu_count() or 1)
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return opts


@functools.lru_cache(maxsize=16)
def _cached_session(path: str, intra_threads: int | None) -> ort.InferenceSession:
    return ort.InferenceSession(path, sess_options=session_options(intra_threads), providers=providers())


def ort_session(path: str | Path, intra_threads: int | None = None) -> ort.InferenceSession:
    """Return a (cached) inference session for the ONNX file at ``path``.

    >>> from engines.common.onnx_runtime import providers
    >>> "CPUExecutionProvider" in providers()
    True
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"ONNX model not found: {p}")
    return _cached_session(str(p.resolve()), intra_threads)
