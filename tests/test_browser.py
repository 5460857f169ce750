"""A real browser: Playwright drives Debian's headless Chromium against the running app.

Skipped, with the reason printed, where Chromium or Playwright is missing (install with
`make browser-deps` as root). Never `playwright install`.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def page(running_app):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (run `make browser-deps` as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    profile = tempfile.mkdtemp(prefix="showcase-chromium-")
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        pg = ctx.new_page()
        pg.goto(running_app, wait_until="domcontentloaded")
        pg.get_by_role("tab", name="About").wait_for(timeout=60_000)
        yield pg
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


def test_tabs_switch_and_about_reports_environment(page, artifacts_dir):
    import app as app_module

    for label, _ in app_module.available_tabs():
        page.get_by_role("tab", name=label).click()
        page.wait_for_timeout(300)
    page.get_by_role("tab", name="About").click()
    page.get_by_role("button", name="Check this machine").click()
    report = page.locator("#environment-report")
    report.get_by_text("onnxruntime").wait_for(timeout=30_000)
    assert "2.13.0" in report.inner_text()
    page.screenshot(path=str(artifacts_dir / "about_tab.png"), full_page=True)
