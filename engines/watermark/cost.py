"""What an embed costs: seconds from the panorama's size and the payload, for the waits a front-end shows.

``seconds = a + b * megapixels + c * bits / 256``: the optimiser's work grows with the carriers
(bits), the analysis, synthesis, quality metrics and the probe's attacks with the pixels. The
coefficients are a least-squares fit to the CPU seconds that ``benchmarks/watermark_embed_times.py``
measured for this code (the forest example, 64/128/256 bits at 1024 and 2048 px wide, one thread:
on an idle 2-core CPU the wall time; a busy machine takes longer, as the tab says). Machines differ in
speed, so every embed this process runs teaches the model this machine's pace (:func:`observe`): after
the first embed the wait a front-end shows is in this machine's seconds, not the fitting machine's.
"""
from __future__ import annotations

import math
import os

EMBED_COST = (2.20, 1.27, 0.19)
"""(a, b, c) of the module docstring's model, seconds: a fit to warm embeds of 64, 128 and 256 bits at
1024 and 2048 px wide (``benchmarks/watermark_embed_times.py``; the fit and its spread are in
benchmarks/RESULTS.md)."""


_PACE = {"ratio": 1.0, "seen": 0}
"""This machine's idle seconds over the model's, from the embeds this process has run (1 before any)."""


def model_seconds(width: int, height: int, bits: int) -> float:
    """Seconds of an embed on the machine :data:`EMBED_COST` was fitted on, idle."""
    a, b, c = EMBED_COST
    return a + b * width * height / 1e6 + c * bits / 256


def embed_seconds(width: int, height: int, bits: int) -> float:
    """Expected seconds of :func:`engines.watermark.embed` for a ``width x height`` panorama on this
    machine, idle: the fitted model times this machine's pace (:func:`observe`).

    >>> embed_seconds(2048, 1024, 256) > embed_seconds(1024, 512, 256) > embed_seconds(1024, 512, 64)
    True
    """
    return model_seconds(width, height, bits) * _PACE["ratio"]


def observe(width: int, height: int, bits: int, seconds: float, busy: float | None = None) -> None:
    """Learn this machine's pace from an embed it ran in ``seconds`` wall time while the machine was
    ``busy`` (default: :func:`busy_factor` now): a running geometric mean of measured over modelled
    idle seconds, so one odd embed moves the estimate only part of the way.

    >>> before = dict(_PACE); observe(1024, 512, 256, 2 * model_seconds(1024, 512, 256), busy=1.0)
    >>> round(embed_seconds(1024, 512, 256) / model_seconds(1024, 512, 256), 2); _PACE.update(before)
    2.0
    """
    busy = busy_factor() if busy is None else busy
    ratio = seconds / max(busy, 1.0) / model_seconds(width, height, bits)
    if not math.isfinite(ratio) or ratio <= 0:
        return
    n = min(_PACE["seen"], 4)  # the last few embeds count most: the machine's load and clock change
    _PACE["ratio"] = math.exp((n * math.log(_PACE["ratio"]) + math.log(ratio)) / (n + 1))
    _PACE["seen"] += 1


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

    >>> pace = dict(_PACE); _PACE.update(ratio=1.0)  # at the fitting machine's pace
    >>> wait_words(1024, 512, 256, busy=1.0)
    'about 3 s'
    >>> wait_words(1024, 512, 256, busy=5.0)
    'about 15 s (the machine is busy: about 5x an idle one)'
    >>> _PACE.update(pace)
    """
    busy = busy_factor() if busy is None else busy
    idle = embed_seconds(width, height, bits)
    if busy < 1.5:
        return f"about {max(1, round(idle))} s"
    return f"about {max(1, round(idle * busy))} s (the machine is busy: about {busy:.0f}x an idle one)"
