"""How-it-works pages: each engine's ``docs/notes/<engine>.md``, written for a person using the tab,
served by the app as a page of its own, so that a tab opens with one plain sentence and links here.
The developer notes (``docs/<engine>.md``: method, data, Python interface) stay in the repository.
Figures a page states that the tab also states (the guard head's size) are filled in from the engine
when the page is built, so the two never disagree."""
from __future__ import annotations

import re

import gradio as gr

from engines.common import REPO_ROOT

#: engine -> (page title, its notes under docs/)
NOTES = {
    "watermark": ("Panorama watermark: how it works", "notes/watermark.md"),
    "guardrail": ("Streaming guardrail: how it works", "notes/guardrail.md"),
    "codeprm": ("Code security stepping: how it works", "notes/codeprm.md"),
    "bandits": ("Dueling bandits: how it works", "notes/bandits.md"),
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


def facts(engine: str) -> dict[str, str]:
    """The engine's figures a page names in ``{placeholders}``: for the guard, the shipped head's size
    and the layers it reads, in the words of the tab's Advanced section."""
    if engine != "guardrail":
        return {}
    from engines.guardrail import head_info

    info = head_info()
    layers = [str(x) for x in info["layers"]]
    return {"head_params": f"{info['params'] / 1e6:.2f} M",
            "head_layers": f"{len(layers)} ({', '.join(layers[:-1])} and {layers[-1]})" if len(layers) > 1 else layers[0]}


def text(engine: str) -> str:
    """The page as shown: its ``{placeholders}`` filled (``facts``), figures the page cannot show named
    by their file."""
    body = (REPO_ROOT / "docs" / NOTES[engine][1]).read_text(encoding="utf-8")
    for key, value in facts(engine).items():
        body = body.replace("{" + key + "}", value)
    return _IMAGE.sub(lambda m: f"*(figure: {m.group(1)}, `{m.group(2)}` in the repository)*", body)


def parts(engine: str) -> list[tuple[str, str]]:
    """The page as a sequence of ("markdown", text) and ("figure", path under docs/ | caption) parts: a
    figure the repository holds is shown as an image, in its place in the text."""
    body = (REPO_ROOT / "docs" / NOTES[engine][1]).read_text(encoding="utf-8")
    for key, value in facts(engine).items():
        body = body.replace("{" + key + "}", value)
    out, at = [], 0
    for m in _IMAGE.finditer(body):
        if (REPO_ROOT / "docs" / m.group(2)).is_file():
            out.append(("markdown", body[at:m.start()]))
            out.append(("figure", f"{m.group(2)}|{m.group(1)}"))
            at = m.end()
    out.append(("markdown", body[at:]))
    return [(k, v) for k, v in out if v.strip()]


def add_pages(demo: gr.Blocks) -> None:
    """Add one page per engine to ``demo`` (call after its ``with`` block); none shows in a navbar."""
    for engine, (title, _) in NOTES.items():
        with demo.route(title, route(engine), show_in_navbar=False):
            gr.Navbar(visible="hidden")
            gr.Markdown("[Back to the app](./)")
            for kind, value in parts(engine):
                if kind == "markdown":
                    gr.Markdown(value)
                else:
                    path, caption = value.split("|", 1)
                    gr.Image(str(REPO_ROOT / "docs" / path), label=caption, interactive=False, alt_text=caption,
                             buttons=[])
