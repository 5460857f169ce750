"""The Gradio app: one tab per engine, assembled here and nowhere else.

Run ``make demo`` (or ``python app.py``); it serves on 127.0.0.1:7860 unless
GRADIO_SERVER_NAME / GRADIO_SERVER_PORT say otherwise, with the engines' read-only verbs as MCP
tools at ``/gradio_api/mcp`` (``demos.mcp_tools``; docs/mcp.md). ``SHOWCASE_MCP=0`` turns MCP off.
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

import gradio as gr  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from demos import mcp_tools  # noqa: E402  (after the env set-up above)
from demos.http_limits import RequestGuard, mcp_body_limit  # noqa: E402
from demos.ui import APP_CSS  # noqa: E402
from demos.ui import guard_inputs  # noqa: E402

log = logging.getLogger("showcase")

# (tab label, module under demos/). Every tab is part of the app: a missing module is an error.
TABS: list[tuple[str, str]] = [
    ("Panorama watermark", "demos.watermark"),
    ("Streaming guardrail", "demos.guardrail"),
    ("Code security stepping", "demos.codeprm"),
    ("Dueling bandits", "demos.bandits"),
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


#: Per-request files (uploads, CSV and JSON outputs) live in Gradio's cache: every 10 minutes, those
#: older than an hour are deleted (and all of them when the server stops).
DELETE_CACHE = (600, 3600)
#: Largest upload accepted; a 2048 x 1024 PNG panorama is about 6 MB.
MAX_UPLOAD = "20mb"


def build_app() -> gr.Blocks:
    """Build the multi-tab Blocks app; every event's inputs are checked first (``guard_inputs``)."""
    with gr.Blocks(title="ICML 2026 methods, runnable", analytics_enabled=False, delete_cache=DELETE_CACHE) as demo:
        gr.Markdown("# ICML 2026 methods, runnable\nFour methods, real implementations, real data. "
                    "Everything runs locally.")
        with gr.Tabs():
            for label, mod in available_tabs():
                with gr.Tab(label, id=label.lower().replace(" ", "-")):
                    mod.build()
        mcp_tools.register()
    guard_inputs(demo)
    demo.queue(default_concurrency_limit=2, max_size=32)
    return demo


def launch_options() -> dict:
    """Look, error, upload and request settings for ``launch`` (Gradio 6 takes theme and CSS there).

    ``RequestGuard`` caps every request body before Gradio parses it and lets only the tools of
    ``demos.mcp_tools`` run over MCP (the tabs' endpoints keep their names for the browser and
    gradio_client); ``mcp_body_limit`` lifts the MCP library's 4 MiB cap to fit a 16 MiB image.
    See ``demos.http_limits``.
    """
    guard = Middleware(RequestGuard, allowed_tools=mcp_tools.tool_names(), check_call=mcp_tools.check_call)
    return {"theme": gr.themes.Soft(), "css": APP_CSS, "show_error": False, "max_file_size": MAX_UPLOAD,
            "app_kwargs": {"middleware": [guard], "lifespan": mcp_body_limit()}}


def main() -> None:
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
