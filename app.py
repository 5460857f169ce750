"""The Gradio app: one tab per engine, assembled here and nowhere else.

Run ``make demo`` (or ``python app.py``); it serves on 127.0.0.1:7860 unless
GRADIO_SERVER_NAME / GRADIO_SERVER_PORT say otherwise, with the engines' read-only verbs as MCP
tools at ``/gradio_api/mcp`` (``demos.mcp_tools``; docs/mcp.md). ``SHOWCASE_MCP=0`` turns MCP off.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import logging
import os
import threading
import time
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


#: glibc malloc settings (``mallopt``) for the server process. By default glibc raises its mmap
#: threshold each time a large block is freed (up to 32 MiB), after which image, audio and tensor
#: buffers of a few MB come from the heaps of up to 8 per core arenas, one per worker thread, and
#: freed space there is kept by the process: 10 clients and 555 requests took RSS from 1.2 to 2.1 GB.
#: A fixed threshold sends every block of at least 1 MiB to its own mapping, returned to the system
#: when freed, and two arenas keep the threads' small blocks from spreading over many heaps.
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
MALLOC_OPTIONS = ((M_MMAP_THRESHOLD, 1 << 20), (M_ARENA_MAX, 2))
#: Sessions whose state (gr.State values and a copy of every component's config, about 0.3 MB each)
#: the server keeps, least recently used dropped first; Gradio's default is 10,000 (about 3 GB).
#: Every API call without a session hash is a session of its own.
STATE_SESSIONS = 256


#: Seconds between two ``malloc_trim`` calls. Blocks under the mmap threshold (JSON, PIL and
#: Python objects of every request) still leave free pages inside the heaps, which glibc keeps until
#: asked: a 560-request soak ended with 0.26 GB of them. The trim hands them back.
TRIM_EVERY_S = 2.0
_trimmer: threading.Thread | None = None


def bound_heap() -> bool:
    """Apply ``MALLOC_OPTIONS`` to this process and start one daemon thread that returns the heaps'
    free pages to the system every ``TRIM_EVERY_S`` seconds. True when glibc took them (False
    elsewhere, e.g. on macOS or musl, where nothing changes)."""
    global _trimmer
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return False
    ok = all(mallopt(opt, value) == 1 for opt, value in MALLOC_OPTIONS)
    if _trimmer is None:
        def run() -> None:
            while True:
                time.sleep(TRIM_EVERY_S)
                trim(0)

        _trimmer = threading.Thread(target=run, name="malloc-trim", daemon=True)
        _trimmer.start()
    return ok


def build_app() -> gr.Blocks:
    """Build the multi-tab Blocks app; every event's inputs are checked first (``guard_inputs``).
    Also bounds the process's heap (``bound_heap``)."""
    bound_heap()
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

    Sessions kept in memory are capped at ``STATE_SESSIONS``. ``RequestGuard`` caps every request body before Gradio parses it and lets only the tools of
    ``demos.mcp_tools`` run over MCP (the tabs' endpoints keep their names for the browser and
    gradio_client); ``mcp_body_limit`` lifts the MCP library's 4 MiB cap to fit a 16 MiB image.
    See ``demos.http_limits``.
    """
    guard = Middleware(RequestGuard, allowed_tools=mcp_tools.tool_names(), check_call=mcp_tools.check_call)
    return {"theme": gr.themes.Soft(), "css": APP_CSS, "show_error": False, "max_file_size": MAX_UPLOAD,
            "state_session_capacity": STATE_SESSIONS,
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
