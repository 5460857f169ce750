"""A bounded soak on localhost: 20 concurrent clients send a mix of valid and bad requests to the
running app; every valid one succeeds, every bad one gets a message, the server's memory stays
bounded, and 100 code scans leave no temporary files behind once Gradio's cache is swept."""
from __future__ import annotations

import glob
import tempfile
import threading
import time
from pathlib import Path

import pytest

from evals.hardening import call, rss_bytes, upload, write_image

CLIENTS = 20
SCANS_PER_CLIENT = 5  # 100 scans in all
WALL_LIMIT_S = 240


@pytest.fixture(scope="module")
def app_and_url():
    import socket

    import app as app_module

    demo = app_module.build_app()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **app_module.launch_options())
    try:
        yield demo, f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def _code(i: int) -> str:
    return f"import subprocess\n\n\ndef run_{i}(name):\n    return subprocess.call(['ls', name])\n"


def _jobs(client: int, noise: dict) -> list[tuple[str, list, bool]]:
    """(endpoint, data, valid) for one client: five scans and three other requests, one of them bad."""
    jobs = [("codeprm_scan", [_code(client * 10 + k), False], True) for k in range(SCANS_PER_CLIENT)]
    jobs += [
        ("bandits_run", [3, 3, 200, 1, "polynomial", False, "stochastic", 10.0, 10.0, 100, 5, ["MaxInP"], False,
                         "fast", "constant 0.1 (reference)"], True),
        ("wm_attack", [noise, 10.0 + client, 5.0, 0.0, "JPEG 75"], True),
        [("wm_attack", [noise, float("nan"), 0, 0, "none"], False),
         ("codeprm_example", ["x" * 100_000], False),
         ("bandits_run", [3, 3, 10**7, 1, "polynomial", False, "stochastic", 10.0, 10.0, 100, 5, ["MaxInP"], False,
                          "fast", "constant 0.1 (reference)"], False)][client % 3],
    ]
    return jobs


@pytest.mark.slow
def test_twenty_clients_mixed_endpoints_bounded(app_and_url, tmp_path):
    from gradio import utils as gr_utils
    from gradio.route_utils import delete_files_created_by_app

    demo, url = app_and_url
    noise = upload(url, write_image(tmp_path / "noise.png", "noise"))
    # warm up every model once, so the growth measured below is the soak's, not the first load's
    for endpoint, data, _ in _jobs(0, noise)[SCANS_PER_CLIENT - 1:]:
        call(url, endpoint, data)
    tmp_before = set(glob.glob(str(Path(tempfile.gettempdir()) / "codeprm_*")))
    scans = Path(gr_utils.get_upload_folder()) / "codeprm-scan"
    reports_before = set(scans.rglob("codeprm-scan.*"))
    rss0, peak = rss_bytes(), [rss_bytes()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_bytes())

    results: list[tuple[str, bool, object]] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        for endpoint, data, valid in _jobs(i, noise):
            out = call(url, endpoint, data, timeout=WALL_LIMIT_S)
            with lock:
                results.append((endpoint, valid, out))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WALL_LIMIT_S)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()

    assert len(results) == CLIENTS * (SCANS_PER_CLIENT + 3), "a client did not finish in time"
    failed = [(e, o.message) for e, valid, o in results if valid and not o.ok]
    assert not failed, failed[:5]
    bad = [(e, o) for e, valid, o in results if not valid]
    assert all(not o.ok and o.message for _, o in bad), [(e, o.message) for e, o in bad][:5]
    assert wall < WALL_LIMIT_S
    growth = peak[0] - rss0
    assert growth < 1.5e9, f"RSS grew by {growth / 1e9:.2f} GB"
    print(f"\nsoak: {len(results)} requests from {CLIENTS} clients in {wall:.1f} s, "
          f"RSS {rss0 / 1e9:.2f} GB -> peak {peak[0] / 1e9:.2f} GB")

    # 100 scans: nothing new in the temporary directory; their reports sit in Gradio's cache, and
    # the app's delete_cache sweep (run here with age 0) removes every one of them
    assert set(glob.glob(str(Path(tempfile.gettempdir()) / "codeprm_*"))) == tmp_before
    new = set(scans.rglob("codeprm-scan.*")) - reports_before
    assert len(new) >= 2 * CLIENTS * SCANS_PER_CLIENT  # a JSON and a SARIF report per scan
    delete_files_created_by_app(demo, age=0)
    assert not set(scans.rglob("codeprm-scan.*")) & new
