"""Device choice: CUDA when present, else CPU; ``SHOWCASE_DEVICE`` overrides."""
from __future__ import annotations

import os

import torch

from engines.common.errors import InputError

ENV_VAR = "SHOWCASE_DEVICE"


def get_device(prefer: str | None = None) -> torch.device:
    """Return the torch device to compute on.

    Order: the ``prefer`` argument, then the ``SHOWCASE_DEVICE`` environment variable
    ("cpu", "cuda", "cuda:1", ...), then CUDA if available, else CPU.

    >>> get_device("cpu")
    device(type='cpu')
    """
    choice = prefer or os.environ.get(ENV_VAR) or ""
    if choice:
        dev = torch.device(choice)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise InputError(f"device {choice!r} was asked for but CUDA is not available here")
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
