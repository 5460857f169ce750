"""Temporarily cap torch's intra-op threads.

On a small shared CPU, torch's OpenMP pool spins and fights other work; small tensor
programs (the watermark optimiser, the bandit predictor) run several times faster on one
thread. torch's thread count is process-global, so overlapping caps (two tabs at once) are
reference-counted: the first one in saves the old value, the last one out restores it, and no
caller waits for another.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

_LOCK = threading.Lock()
_ACTIVE = 0
_SAVED: int | None = None


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(n)``, restoring the old value; ``None`` = no change.

    >>> before = torch.get_num_threads()
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    global _ACTIVE, _SAVED
    if n is None:
        yield
        return
    with _LOCK:
        if _ACTIVE == 0:
            _SAVED = torch.get_num_threads()
        _ACTIVE += 1
        torch.set_num_threads(n)
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE -= 1
            if _ACTIVE == 0 and _SAVED is not None:
                torch.set_num_threads(_SAVED)
                _SAVED = None


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """Run the block with numpy/scipy's BLAS and OpenMP pools capped at ``n`` threads (``None`` = no
    change): scipy's L-BFGS-B makes many tiny BLAS calls, which a spinning pool on a busy 2-core
    machine slowed about 10x."""
    if n is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=n):
        yield
