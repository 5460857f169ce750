"""Shared pytest fixtures: offline settings, a free loopback port, artefact folder."""
from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Gradio's cache (uploads, reports) of this test session alone: the soak test counts the reports its
# app wrote there, and another app on the machine writing to the shared /tmp/gradio would count too.
if "GRADIO_TEMP_DIR" not in os.environ:
    os.environ["GRADIO_TEMP_DIR"] = tempfile.mkdtemp(prefix="showcase-gradio-")
    atexit.register(shutil.rmtree, os.environ["GRADIO_TEMP_DIR"], True)

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def running_app():
    """The whole app launched on a free loopback port for the test session; yields its URL."""
    import app as app_module

    demo = app_module.build_app()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **app_module.launch_options())
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
