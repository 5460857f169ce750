"""Shared helpers for every engine: device choice, ONNX sessions, the LM backbone, errors, paths.

This is the one home for these things; engines import from here and never copy them.
"""
from engines.common.device import get_device
from engines.common.errors import BackboneUnavailable, InputError, ShowcaseError
from engines.common.paths import ASSETS_DIR, CACHE_DIR, REPO_ROOT

__all__ = [
    "ASSETS_DIR",
    "BackboneUnavailable",
    "CACHE_DIR",
    "InputError",
    "REPO_ROOT",
    "ShowcaseError",
    "get_device",
]
