"""Integration: the whole app launches on loopback and answers through gradio_client."""
from __future__ import annotations

import pytest

import app as app_module
from demos import about


FIVE_TABS = ["Panorama watermark", "Streaming guardrail", "Code security stepping", "Dueling bandits", "About"]


def test_all_five_tabs_exist_and_build():
    assert [label for label, _ in app_module.available_tabs()] == FIVE_TABS
    assert all(callable(mod.build) for _, mod in app_module.available_tabs())
    demo = app_module.build_app()
    assert demo.config["mode"] == "blocks"
    labels = [c["props"].get("label") for c in demo.config["components"] if c.get("type") == "tabitem"]
    assert labels == FIVE_TABS


def test_a_missing_tab_module_is_an_error(monkeypatch):
    monkeypatch.setattr(app_module, "TABS", [*app_module.TABS, ("Nowhere", "demos.nowhere")])
    with pytest.raises(ImportError, match="'Nowhere' tab needs demos.nowhere"):
        app_module.available_tabs()


def test_about_callback_as_plain_function():
    table = about.environment_table()
    assert "| torch | 2.13.0" in table
    assert "SmolLM2" in about.backbone_status()


@pytest.mark.slow
def test_app_serves_and_endpoints_answer(running_app):
    from gradio_client import Client

    client = Client(running_app, verbose=False)
    api = client.view_api(print_info=False, return_format="dict")
    names = set(api["named_endpoints"])
    assert "/environment" in names
    table = client.predict(api_name="/environment")
    assert "onnxruntime" in table and "CPUExecutionProvider" in table


def test_server_memory_bounds_are_set():
    """The heap settings take on this (glibc) host and the sessions kept are capped well below
    Gradio's 10,000 (about 0.3 MB each); the soak test measures their effect."""
    import platform

    from server import memory

    if platform.libc_ver()[0] == "glibc":
        assert memory.bound_heap() is True
        assert memory.trimmer_alive()
    assert app_module.launch_options()["state_session_capacity"] == app_module.STATE_SESSIONS <= 1000


def test_the_one_gradio_internal_replaced_is_pinned():
    """``guard_inputs`` replaces ``Blocks.preprocess_data`` (a Gradio internal, not public API). It
    calls the original with (block_fn, inputs, state, explicit_call): if a Gradio upgrade changes that
    method, this fails here rather than as a server error on every event. The release it was written
    against is the one ``requirements.txt`` pins."""
    import asyncio
    import inspect
    import re

    import gradio as gr

    from conftest import REPO

    pin = re.search(r"^gradio\[mcp\]==([\d.]+)$", (REPO / "requirements.txt").read_text(), re.M).group(1)
    assert gr.__version__ == pin
    params = list(inspect.signature(gr.Blocks.preprocess_data).parameters)
    assert params == ["self", "block_fn", "inputs", "state", "explicit_call"], params
    assert inspect.iscoroutinefunction(gr.Blocks.preprocess_data)
    demo = app_module.build_app()
    assert demo.preprocess_data.__wrapped__ == gr.Blocks.preprocess_data.__get__(demo)
    # and it runs as Gradio calls it: a NaN angle is refused naming the slider, before conversion
    fn = next(f for f in demo.fns.values() if f.api_name == "wm_attack")
    with pytest.raises(gr.Error, match=r"yaw \(deg\) must be a finite number"):
        asyncio.run(demo.preprocess_data(fn, [None, float("nan"), 0, 0, "none"], None))
