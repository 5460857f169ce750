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
from server.inputs import choice, choices, number, refusal, shorten, text

__all__ = ["APP_CSS", "BUSY", "PHONE_PAIR", "TOKEN_STREAM", "cache_file", "choice", "choices", "clear_on_error", "describe_code_editors",
           "figure_to_image", "friendly_errors", "name_example_buttons", "number", "one_at_a_time", "release_after", "shorten",
           "text"]

log = logging.getLogger("showcase.ui")

# Class for a gr.HighlightedText that shows a token stream as running text with a per-token risk
# background. Gradio draws each token as a padded chip with a space after it, so sub-word tokens read
# as separate words ("uns alted"); the tokens carry their own leading spaces, so the chips are closed up.
TOKEN_STREAM = "token-stream"
#: Class for a gr.Row of two short controls that stay side by side on a phone (each takes the full width
#: otherwise), so that a tab's main button is reached with less scrolling.
PHONE_PAIR = "phone-pair"
APP_CSS = f"""
.{TOKEN_STREAM} .textfield {{ gap: 0 !important; row-gap: 2px !important; }}
.{TOKEN_STREAM} .token-container {{ margin: 0 !important; padding: 0 !important; }}
.{TOKEN_STREAM} .token {{ font-size: 0 !important; line-height: normal !important; display: inline-block !important;
    margin: 0 1px 0 0 !important; padding: 0 !important; border-radius: 0 !important; }}
.{TOKEN_STREAM} .token .text {{ font-size: var(--text-lg); line-height: 1.7; white-space: pre-wrap; }}
/* Every tab name shows, on a phone too: Gradio moves the tabs that do not fit one line into a "..."
   menu, judged by the widths of a hidden copy of the tab row; the copy measures nothing, and the
   row wraps instead. */
.tab-container.visually-hidden button {{ width: 0 !important; min-width: 0 !important; padding: 0 !important;
    border: 0 !important; overflow: hidden !important; }}
.tab-wrapper, [role=tablist].tab-container {{ height: auto !important; flex-wrap: wrap !important; }}
/* A table header wraps between words, never inside one ("C W E"). */
th, th .header {{ word-break: keep-all !important; overflow-wrap: normal !important; }}
/* On a phone, what sits side by side on a wide screen stacks, so no label or dropdown is cut short,
   and a table keeps columns wide enough for a word and scrolls sideways in its box. */
@media (max-width: 640px) {{
  .row > *, .form > * {{ min-width: 100% !important; }}
  /* ... except two short controls marked as a pair, which share a line: the main button comes up */
  .row.{PHONE_PAIR} > *, .row.{PHONE_PAIR} > .form > * {{ min-width: 40% !important; flex: 1 1 40% !important; }}
  .row.{PHONE_PAIR} > .form {{ flex-direction: row !important; flex-wrap: wrap !important; }}
  /* example thumbnails: four to a line */
  .gallery-item .container.gallery {{ width: 64px !important; height: 40px !important; }}
  .table-wrap th, .table-wrap td {{ min-width: 5.5em !important; max-width: none !important; }}
  /* the code tab's ranking table: its body cells (drawn apart from the header, with the header's
     percentage widths of a phone-wide table: "y e s") and its headers get the same widths in em */
  #codeprm-rank-table th, #codeprm-rank-table .body-cell {{ width: 7.5em !important; min-width: 7.5em !important;
    max-width: 7.5em !important; flex: 0 0 7.5em !important; }}
  #codeprm-rank-table th:last-child, #codeprm-rank-table .body-cell:last-child {{ width: 18em !important;
    min-width: 18em !important; max-width: 18em !important; flex: 0 0 18em !important; }}
  .prose table {{ display: block; overflow-x: auto; }}
}}
"""


#: An exception class named in parentheses inside a message ("could not read the image
#: (UnidentifiedImageError)"): an internal name users cannot act on, dropped from what they read.
_INTERNAL_NAME = re.compile(r" ?\([A-Za-z_.]*(?:Error|Exception|Warning)\)")


def _to_gradio_error(exc: Exception, where: str) -> gr.Error:
    """The error a tab shows for ``exc``: a refusal (one log line) for bad input the user can fix, a
    generic message for a real fault, whose traceback goes to the log once."""
    if isinstance(exc, gr.Error):
        return exc if not exc.print_exception else refusal(where, str(exc.message))
    if isinstance(exc, ShowcaseError):
        return refusal(where, _INTERNAL_NAME.sub("", str(exc)), detail=type(exc).__name__)
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):  # a file that is not an image: the user can fix it
        return refusal(where, "This file is not an image the app can read; use a PNG, JPEG or WebP file.",
                       detail=type(exc).__name__)
    log.error("unexpected error in %s", where, exc_info=exc)
    # no internal names (exception classes) in what users read; the log has the details
    return gr.Error("Something went wrong on the server; the details are in the server log.", print_exception=False)


def friendly_errors(fn):
    """Turn engine errors into a short message in the browser; never show a stack trace. Bad input is
    logged as one line, a real fault with its traceback (``_to_gradio_error``).

    Works on plain functions and on generators (streamed events).
    """
    where = fn.__name__
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except Exception as exc:
                raise _to_gradio_error(exc, where) from None
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise _to_gradio_error(exc, where) from None
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


# ----------------------------------------------------------------------------- event wiring
#: What a button that runs one job at a time reads while its job runs (it is disabled then).
BUSY = "{what}... (one at a time: wait for this one to finish)"


def _private(event, fn, outputs) -> None:
    """Add a quick, unnamed front-end step after ``event`` (not an API endpoint)."""
    event(fn, None, outputs, queue=False, api_visibility="private")


def release_after(event, button: gr.Button, label: str) -> None:
    """Make ``button`` usable again, reading ``label``, once ``event`` ends, with a result or an error.

    Gradio 6.31's front end runs a ``.then`` step only after a success (on an error it runs the
    ``.failure`` steps alone), so the release is both."""
    def ready():
        return gr.update(interactive=True, value=label)

    _private(event.then, ready, button)
    _private(event.failure, ready, button)


def one_at_a_time(button: gr.Button, what: str, fn, inputs, outputs, **event_kwargs):
    """Wire ``button`` to run ``fn`` one job at a time: while it runs the button is disabled and says
    so (``BUSY``), so a second click is never dropped without a word; it comes back after a result or
    an error (``release_after``). Returns ``fn``'s event, for further steps."""
    label = button.value

    def busy():
        return gr.update(interactive=False, value=BUSY.format(what=what))

    started = button.click(busy, None, button, queue=False, api_visibility="private")
    event = started.then(fn, inputs, outputs, **event_kwargs)
    release_after(event, button, label)
    return event


def clear_on_error(event, outputs: list, values: list | None = None) -> None:
    """After ``event`` fails, set ``outputs`` to ``values`` (empty by default), so that no result of an
    earlier run stays on screen beside the error, as if it answered the new input."""
    values = [None] * len(outputs) if values is None else list(values)

    def cleared():
        return values[0] if len(values) == 1 else tuple(values)

    _private(event.failure, cleared, outputs)


def name_example_buttons(elem_id: str, names: list[str], what: str) -> None:
    """Give the picture buttons of the ``gr.Examples`` block ``elem_id`` accessible names: Gradio draws
    each example as a thumbnail button with an empty ``alt``, a tab stop a screen reader announces as
    "button" alone. Button i is named "``what``: ``names[i]``" (kept through Gradio's re-renders)."""
    import json

    script = (
        f"const names = {json.dumps(list(names))}, what = {json.dumps(what)};"
        f"const name = () => {{ const box = document.getElementById({json.dumps(elem_id)}); if (!box) return;"
        "  box.querySelectorAll('button.gallery-item').forEach((b, i) => { if (i < names.length) {"
        "    const n = what + ': ' + names[i]; if (b.getAttribute('aria-label') !== n) b.setAttribute('aria-label', n);"
        "    const img = b.querySelector('img'); if (img && img.alt !== names[i]) img.alt = names[i]; } }); };"
        "new MutationObserver(name).observe(document.body, {subtree: true, childList: true}); name();"
    )
    gr.HTML("", js_on_load=script, elem_classes=["example-names"], padding=False, container=False)


def describe_code_editors(names: dict[str, str], hint_id: str) -> None:
    """Name each ``gr.Code`` editor (by its ``elem_id``) for screen readers and point its description at
    the visible element ``hint_id`` (how to leave it from the keyboard): Gradio labels every editor
    "Code input container", and in one, Tab indents instead of moving on."""
    import json

    script = (
        f"const names = {json.dumps(names)}, hint = {json.dumps(hint_id)};"
        "const name = () => { for (const [id, n] of Object.entries(names)) {"
        "  const ed = document.querySelector('#' + id + ' .cm-content'); if (!ed) continue;"
        "  if (ed.getAttribute('aria-label') !== n) ed.setAttribute('aria-label', n);"
        "  if (ed.getAttribute('aria-describedby') !== hint) ed.setAttribute('aria-describedby', hint); } };"
        "new MutationObserver(name).observe(document.body, {subtree: true, childList: true}); name();"
    )
    gr.HTML("", js_on_load=script, padding=False, container=False)
