"""``@gpu``: Hugging Face ZeroGPU's ``spaces.GPU`` where the ``spaces`` package is installed, and
the function unchanged everywhere else.

On a ZeroGPU Space a GPU is attached only while a function decorated with ``spaces.GPU`` runs;
code outside such a function sees no CUDA device. Locally (and on CPU or dedicated-GPU hosts)
``spaces`` is absent and the decorator is the identity, so the engines stay plain Python.

>>> @gpu(duration=60)
... def double(x):
...     return 2 * x
>>> double(21)
42
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def spaces_available() -> bool:
    """Whether the ``spaces`` package (installed on Hugging Face Spaces) can be imported."""
    return importlib.util.find_spec("spaces") is not None


def gpu(fn: F | None = None, *, duration: int | None = None) -> F | Callable[[F], F]:
    """Mark ``fn`` as a GPU path: ``spaces.GPU`` (``duration``: seconds of GPU the call may hold,
    ZeroGPU's default 60 when None) when ``spaces`` is importable, else ``fn`` itself.

    Use bare (``@gpu``) or with arguments (``@gpu(duration=120)``).
    """

    def wrap(f: F) -> F:
        if not spaces_available():
            return f
        import spaces

        return spaces.GPU(f) if duration is None else spaces.GPU(duration=duration)(f)

    return wrap(fn) if fn is not None else wrap
