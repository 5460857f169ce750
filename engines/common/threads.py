"""Temporarily cap torch's intra-op threads.

On a small shared CPU, torch's OpenMP pool spins and fights other work; small tensor
programs (the watermark optimiser, the bandit predictor) run several times faster on one
thread. The cap is process-global in torch, so it is taken under a lock and restored after.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

_LOCK = threading.RLock()


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
    if n is None:
        yield
        return
    with _LOCK:
        old = torch.get_num_threads()
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(old)
