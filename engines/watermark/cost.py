"""What an embed costs: seconds from the panorama's size and the payload, for the waits a front-end shows.

``seconds = a + b * megapixels + c * bits / 256``: the optimiser's work grows with the carriers
(bits), the analysis, synthesis, quality metrics and the probe's attacks with the pixels. The
coefficients are a least-squares fit to the CPU seconds that ``benchmarks/watermark_embed_times.py``
measured for this code (the forest example, 64/128/256 bits at 1024 and 2048 px wide, one thread:
on an idle 2-core CPU the wall time; a busy machine takes longer, as the tab says).
"""
from __future__ import annotations

import os

EMBED_COST = (2.20, 1.27, 0.19)
"""(a, b, c) of the module docstring's model, seconds: fitted on 2026-12-04 to six warm embeds (64, 128,
256 bits x 1024 and 2048 px wide; 2.40-5.18 CPU s), each within 0.82-1.11x of the fit."""


def embed_seconds(width: int, height: int, bits: int) -> float:
    """Expected seconds of :func:`engines.watermark.embed` for a ``width x height`` panorama.

    >>> embed_seconds(2048, 1024, 256) > embed_seconds(1024, 512, 256) > embed_seconds(1024, 512, 64)
    True
    """
    a, b, c = EMBED_COST
    return a + b * width * height / 1e6 + c * bits / 256


def busy_factor() -> float:
    """How many times longer than on an idle machine a one-thread job takes now: the 1-minute load
    average over the CPU count, at least 1 (1 where the load average is not available)."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except (AttributeError, OSError):
        return 1.0


def wait_words(width: int, height: int, bits: int, busy: float | None = None) -> str:
    """The expected wait in words: ``"about 3 s"`` on an idle machine, ``"about 15 s (the machine is
    busy: about 5x an idle one)"`` when ``busy`` (default: :func:`busy_factor`) is 1.5 or more.

    >>> wait_words(1024, 512, 256, busy=1.0)
    'about 3 s'
    >>> wait_words(1024, 512, 256, busy=5.0)
    'about 15 s (the machine is busy: about 5x an idle one)'
    """
    busy = busy_factor() if busy is None else busy
    idle = embed_seconds(width, height, bits)
    if busy < 1.5:
        return f"about {max(1, round(idle))} s"
    return f"about {max(1, round(idle * busy))} s (the machine is busy: about {busy:.0f}x an idle one)"
