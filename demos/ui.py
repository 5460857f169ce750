"""Small UI helpers shared by every tab (the one home for them)."""
from __future__ import annotations

import functools
import inspect
import logging

import gradio as gr

from engines.common import ShowcaseError

log = logging.getLogger("showcase.ui")

# Class for a gr.HighlightedText that shows a token stream as running text with a per-token risk
# background. Gradio draws each token as a padded chip with a space after it, so sub-word tokens read
# as separate words ("uns alted"); the tokens carry their own leading spaces, so the chips are closed up.
TOKEN_STREAM = "token-stream"
APP_CSS = f"""
.{TOKEN_STREAM} .textfield {{ gap: 0 !important; row-gap: 2px !important; }}
.{TOKEN_STREAM} .token-container {{ margin: 0 !important; padding: 0 !important; }}
.{TOKEN_STREAM} .token {{ font-size: 0 !important; line-height: normal !important; display: inline-block !important;
    margin: 0 1px 0 0 !important; padding: 0 !important; border-radius: 0 !important; }}
.{TOKEN_STREAM} .token .text {{ font-size: var(--text-lg); line-height: 1.7; white-space: pre-wrap; }}
"""


def _to_gradio_error(exc: Exception) -> gr.Error:
    if isinstance(exc, ShowcaseError):
        return gr.Error(str(exc))
    log.exception("unexpected error in a tab callback")
    return gr.Error(f"Something went wrong ({type(exc).__name__}). The details are in the server log.")


def friendly_errors(fn):
    """Turn engine errors into a short message in the browser; never show a stack trace.

    Works on plain functions and on generators (streamed events).
    """
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except gr.Error:
                raise
            except Exception as exc:
                raise _to_gradio_error(exc) from exc
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:
            raise _to_gradio_error(exc) from exc
    return wrapper


def figure_to_image(fig, dpi: int = 110):
    """Render a matplotlib figure to an RGB PIL image (lossless PNG round trip) and close it."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    buf.seek(0)
    return Image.open(buf).convert("RGB")
