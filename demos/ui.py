"""Small UI helpers shared by every tab (the one home for them). The value checks the tabs use
(``number``, ``choice``, ``choices``, ``text``, ``shorten``) live in ``server.inputs``, shared with the
MCP tools and the input guard, and are re-exported here for the tabs."""
from __future__ import annotations

import functools
import inspect
import logging
import os
import re
import tempfile
import time
from pathlib import Path

import gradio as gr
from gradio import utils as gr_utils

from engines.common import ShowcaseError
from server.inputs import choice, choices, cut_message, number, shorten, text

__all__ = ["APP_CSS", "TOKEN_STREAM", "cache_file", "choice", "choices", "figure_to_image", "friendly_errors",
           "number", "shorten", "text"]

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


#: An exception class named in parentheses inside a message ("could not read the image
#: (UnidentifiedImageError)"): an internal name users cannot act on, dropped from what they read.
_INTERNAL_NAME = re.compile(r" ?\([A-Za-z_.]*(?:Error|Exception|Warning)\)")


def _to_gradio_error(exc: Exception) -> gr.Error:
    if isinstance(exc, ShowcaseError):
        return gr.Error(cut_message(_INTERNAL_NAME.sub("", str(exc))))
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):  # a file that is not an image: the user can fix it
        return gr.Error("This file is not an image the app can read; use a PNG, JPEG or WebP file.")
    log.exception("unexpected error in a tab callback")
    # no internal names (exception classes) in what users read; the log has the details
    return gr.Error("Something went wrong on the server; the details are in the server log.")


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


def figure_to_image(fig, dpi: int = 110, top_margin: int = 0):
    """Render a matplotlib figure to an RGB PIL image (lossless PNG round trip) and close it.

    ``top_margin`` adds that many white pixel rows above the figure: room for the image
    component's toolbar (top right), which would otherwise sit on the plot's data."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    buf.seek(0)
    img = Image.open(buf).convert("RGB")
    if top_margin > 0:
        from PIL import ImageOps

        img = ImageOps.expand(img, border=(0, int(top_margin), 0, 0), fill="white")
    return img


def cache_file(prefix: str, suffix: str = "", name: str | None = None) -> str:
    """A new, empty file path in Gradio's cache for a per-request output (a CSV, a JSON report).

    Files there are served without a copy, and the app's ``delete_cache`` setting removes them, so
    per-request files never pile up in the temporary directory. They live under one folder per
    ``prefix``; with ``name`` the file gets that exact name (what the browser downloads) in a
    folder of its own, and folders that ``delete_cache`` has emptied are removed on the next call,
    so nothing grows.
    """
    folder = Path(gr_utils.get_upload_folder()) / prefix
    folder.mkdir(parents=True, exist_ok=True)
    if name is None:
        fd, path = tempfile.mkstemp(prefix=f"{prefix}_", suffix=suffix, dir=folder)
        os.close(fd)
        return path
    now = time.time()
    for old in folder.iterdir():
        try:  # rmdir removes only empty folders; a minute's grace for one being filled right now
            if old.is_dir() and now - old.stat().st_mtime > 60:
                old.rmdir()
        except OSError:
            pass
    path = Path(tempfile.mkdtemp(dir=folder)) / name
    path.touch()
    return str(path)
