"""The Gradio app: one tab per engine, assembled here and nowhere else; the server around the tabs
(input checks, request caps, MCP tools, memory bounds) is the ``server`` package.

Run ``make demo`` (or ``python app.py``); it serves on 127.0.0.1:7860 unless
GRADIO_SERVER_NAME / GRADIO_SERVER_PORT say otherwise, with the engines' read-only verbs as MCP
tools at ``/gradio_api/mcp`` (``server.mcp_tools``; docs/mcp.md). ``SHOWCASE_MCP=0`` turns MCP off.
"""
from __future__ import annotations

import importlib
import logging
import os
import warnings

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from engines.common import online_host  # noqa: E402

# Offline unless this host is allowed the hub (a Space, or SHOWCASE_ALLOW_HUB=1).
os.environ.setdefault("HF_HUB_OFFLINE", "0" if online_host() else "1")

import gradio as gr  # noqa: E402  (after the env set-up above)

from demos import notes  # noqa: E402
from demos.ui import APP_CSS  # noqa: E402
from server import mcp_tools  # noqa: E402
from server.inputs import guard_inputs  # noqa: E402
from server.launch import CONCURRENCY, DELETE_CACHE, QUEUE_SIZE, STATE_SESSIONS  # noqa: E402,F401  (STATE_SESSIONS: what tests read)
from server.launch import launch_options as server_launch_options  # noqa: E402
from server.memory import bound_heap  # noqa: E402

log = logging.getLogger("showcase")

# (tab label, module under demos/). Every tab is part of the app: a missing module is an error.
TABS: list[tuple[str, str]] = [
    ("Panorama watermark", "demos.watermark"),
    ("Streaming guardrail", "demos.guardrail"),
    ("Code security stepping", "demos.codeprm"),
    ("Dueling bandits", "demos.dueling"),
    ("About", "demos.about"),
]


def available_tabs() -> list[tuple[str, object]]:
    """Every tab's demo module, imported; raises ImportError naming the tab whose module is missing."""
    tabs = []
    for label, modname in TABS:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                raise ImportError(f"the {label!r} tab needs {modname}, which is missing") from exc
            raise
        tabs.append((label, mod))
    return tabs


def build_app() -> gr.Blocks:
    """Build the multi-tab Blocks app and its method-notes pages (``demos.notes``); every event's
    inputs are checked first (``guard_inputs``). Also bounds the process's heap (``bound_heap``)."""
    bound_heap()
    with gr.Blocks(title="ICML 2026 methods, runnable", analytics_enabled=False, delete_cache=DELETE_CACHE) as demo:
        gr.Navbar(visible="hidden")  # the notes pages are reached from each tab's intro, not from a bar
        gr.Markdown("# ICML 2026 methods, runnable\nFour methods, real implementations, real data. "
                    "Everything runs locally.")
        with gr.Tabs():
            for label, mod in available_tabs():
                with gr.Tab(label, id=label.lower().replace(" ", "-")):
                    mod.build()
        mcp_tools.register()
    notes.add_pages(demo)
    guard_inputs(demo)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    return demo


def launch_options() -> dict:
    """The server's settings for ``launch`` (``server.launch``), with the tabs' CSS."""
    return server_launch_options(css=APP_CSS)


def main() -> None:
    # one line per record, named: refusals of bad input are one "refused ..." line each (server.inputs)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # Gradio warns about the tabs' gr.State inputs as if they were MCP tools; they are not (RequestGuard).
    warnings.filterwarnings("ignore", message="This MCP server includes a tool that has a gr.State input")
    demo = build_app()
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        mcp_server=os.environ.get("SHOWCASE_MCP", "1") != "0",
        **launch_options(),
    )


if __name__ == "__main__":
    main()
