"""Integration: the whole app launches on loopback and answers through gradio_client."""
from __future__ import annotations

import pytest

import app as app_module
from demos import about


def test_every_existing_tab_builds():
    labels = [label for label, _ in app_module.available_tabs()]
    assert "About" in labels
    demo = app_module.build_app()
    assert demo.config["mode"] == "blocks"


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
