"""Method notes: each engine's ``docs/<engine>.md``, served by the app as a page of its own, so that a
tab opens with one plain sentence and links here for the method, the data and the measured figures."""
from __future__ import annotations

import re

import gradio as gr

from engines.common import REPO_ROOT

#: engine -> (page title, its notes under docs/)
NOTES = {
    "watermark": ("Panorama watermark: method notes", "watermark.md"),
    "guardrail": ("Streaming guardrail: method notes", "guardrail.md"),
    "codeprm": ("Code security stepping: method notes", "codeprm.md"),
    "bandits": ("Dueling bandits: method notes", "dueling.md"),  # the page keeps its address (notes-bandits)
}
#: A Markdown image with a path relative to docs/ (the page cannot serve repository files).
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\.\./([^)]+)\)")


def route(engine: str) -> str:
    """The page's path under the app's root (``notes-watermark``)."""
    return f"notes-{engine}"


def link(engine: str, words: str = "How it works") -> str:
    """A Markdown link to the engine's notes page (relative, so it holds under any root path; Gradio
    opens it in a new browser tab)."""
    return f"[{words}]({route(engine)})"


def text(engine: str) -> str:
    """The notes as the page shows them: figures the page cannot show are named by their file."""
    body = (REPO_ROOT / "docs" / NOTES[engine][1]).read_text(encoding="utf-8")
    return _IMAGE.sub(lambda m: f"*(figure: {m.group(1)}, `{m.group(2)}` in the repository)*", body)


def add_pages(demo: gr.Blocks) -> None:
    """Add one page per engine to ``demo`` (call after its ``with`` block); none shows in a navbar."""
    for engine, (title, _) in NOTES.items():
        with demo.route(title, route(engine), show_in_navbar=False):
            gr.Navbar(visible="hidden")
            gr.Markdown(f"[Back to the app](./)\n\n{text(engine)}")
