"""The server's settings for ``Blocks.launch``: look, errors, uploads, cached files, sessions, the
queue, and the checks in front of every route (``server.edge`` outermost, then
``server.http_limits``)."""
from __future__ import annotations

import contextlib

import gradio as gr
from starlette.middleware import Middleware

from server import edge, mcp_tools
from server.http_limits import MAX_MCP_CALLS, RequestGuard, mcp_body_limit

#: Per-request files (uploads, CSV and JSON outputs) live in Gradio's cache: every 10 minutes, those
#: older than an hour are deleted (and all of them when the server stops).
DELETE_CACHE = (600, 3600)
#: Largest upload accepted; a 2048 x 1024 PNG panorama is about 6 MB.
MAX_UPLOAD = "20mb"
#: Sessions whose state (gr.State values and a copy of every component's config, about 0.3 MB each)
#: the server keeps, least recently used dropped first; Gradio's default is 10,000 (about 3 GB).
#: Every API call without a session hash is a session of its own.
STATE_SESSIONS = 256
#: Words Gradio's front end looks up and its English bundle lacks: the screen-reader live region
#: announced a finished event as the raw key "common.complete".
TRANSLATIONS = {"en": {"common.complete": "Done"}}
#: Events Gradio's queue holds (``Blocks.queue(max_size=...)``): every MCP call the server holds
#: (``MAX_MCP_CALLS``) goes through it, plus room for the tabs' own events; ``CONCURRENCY`` of them
#: run at once.
QUEUE_SIZE = MAX_MCP_CALLS + 64
CONCURRENCY = 2
#: Worker threads for blocking calls: Gradio waits for each held MCP call in one (its loopback
#: client's ``job.result``), and its routes and event functions need theirs beside them (anyio's
#: default is 40, which 40 held calls took whole).
THREADS = MAX_MCP_CALLS + 40


def server_lifespan():
    """The app's start-up: :class:`server.edge.EdgeGuard` in front of the whole middleware stack,
    the thread pool sized to ``THREADS``, and the MCP library's body cap raised (``mcp_body_limit``)."""
    body_limit = mcp_body_limit()

    @contextlib.asynccontextmanager
    async def lifespan(app):
        import anyio.to_thread

        edge.install(app)
        anyio.to_thread.current_default_thread_limiter().total_tokens = THREADS
        async with body_limit(app):
            yield

    return lifespan


def launch_options(css: str = "") -> dict:
    """Look, error, upload and request settings for ``launch`` (Gradio 6 takes theme and CSS there).

    Sessions kept in memory are capped at ``STATE_SESSIONS``. ``server.edge`` refuses foreign hosts
    and origins and ambiguous framing before anything else; ``RequestGuard`` caps every request
    body before Gradio parses it and lets only the tools of ``server.mcp_tools`` run over MCP (the
    tabs' endpoints keep their names for the browser and gradio_client); ``server_lifespan`` installs
    the first, sizes the thread pool and lifts the MCP library's 4 MiB cap to fit a 16 MiB image.
    ``TRANSLATIONS`` fill the words Gradio's front end is missing.
    """
    guard = Middleware(RequestGuard, allowed_tools=mcp_tools.tool_names(), check_call=mcp_tools.check_call)
    return {"theme": gr.themes.Soft(), "css": css, "show_error": False, "max_file_size": MAX_UPLOAD,
            "state_session_capacity": STATE_SESSIONS, "i18n": gr.I18n(**TRANSLATIONS),
            "app_kwargs": {"middleware": [guard], "lifespan": server_lifespan()}}
