"""Shared helpers for every engine: device choice, ONNX sessions, the LM backbone, errors, paths.

This is the one home for these things; engines import from here and never copy them.
"""
from engines.common.errors import BackboneUnavailable, InputError, ShowcaseError
from engines.common.paths import ASSETS_DIR, CACHE_DIR, REPO_ROOT
from engines.common.spaces import gpu

# device choice, the backbone and environment helpers import torch / onnxruntime: loaded on first use
_LAZY = {"get_device": "engines.common.device", "gguf_path": "engines.common.backbone",
         "load_backbone": "engines.common.backbone", "online_host": "engines.common.backbone",
         "environment_report": "engines.common.environment"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'engines.common' has no attribute {name!r}")


__all__ = [
    "ASSETS_DIR",
    "BackboneUnavailable",
    "CACHE_DIR",
    "InputError",
    "REPO_ROOT",
    "ShowcaseError",
    "environment_report",
    "get_device",
    "gguf_path",
    "gpu",
    "load_backbone",
    "online_host",
]
