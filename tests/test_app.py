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

    if platform.libc_ver()[0] == "glibc":
        assert app_module.bound_heap() is True
        assert app_module._trimmer is not None and app_module._trimmer.is_alive()
    assert app_module.launch_options()["state_session_capacity"] == app_module.STATE_SESSIONS <= 1000
