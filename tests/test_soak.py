"""A bounded soak on localhost: 10 concurrent clients send 560 mixed requests (every tab: watermark
embed, verify and attack on small panoramas, guardrail streams and scores, code scans, bandit runs,
and bad inputs) to the running app. Every valid request succeeds, every bad one gets a message, the
server's RSS grows by at most 0.5 GB after warm-up (peak included), the sessions kept in memory stay
within the app's cap, and 100 code scans leave no temporary files behind once Gradio's cache is
swept."""
from __future__ import annotations

import glob
import random
import tempfile
import threading
import time
from pathlib import Path

import pytest

from evals.hardening import call, rss_bytes, upload, write_image

CLIENTS = 10
SCANS_PER_CLIENT = 10  # 100 scans in all
WALL_LIMIT_S = 540
GROWTH_LIMIT = 0.5e9
BITS64 = "64 bits (PSNR floor 42 dB)"
BANDITS = [3, 3, 200, 1, "polynomial", False, "stochastic", 10.0, 10.0, 100, 5, ["MaxInP"], False, "fast",
           "constant 0.1 (reference)"]


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


def _jobs(client: int, noise: dict, marked: dict) -> list[tuple[str, list, bool]]:
    """(endpoint, data, valid) for one client: 56 requests over every tab, 8 of them bad, in a
    fixed shuffled order. Inputs are small (a 512 x 256 panorama, 8-token replies, T = 200)."""
    c = client
    jobs = [("codeprm_scan", [_code(c * 100 + k), False], True) for k in range(SCANS_PER_CLIENT)]
    jobs += [("wm_embed", [noise, f"key {c}", "text", "hi", BITS64], True)]
    jobs += [("wm_verify", [marked, "soak key", BITS64], True)] * 3
    jobs += [("wm_verify", [noise, f"key {c}", BITS64], True)] * 3
    jobs += [("wm_attack", [marked, float(c + k), 5.0, 0.0, "JPEG 75"], True) for k in range(6)]
    jobs += [("guardrail_stream", [f"What is the capital of Australia? ({c}.{k})", 0.99, 1, 8, "onnx", False, 1, "strict"], True)
             for k in range(4)]
    jobs += [("guardrail_score", ["hello", f"Hi there, {c}.{k}.", 0.99, 1, "onnx", "loose"], True) for k in range(6)]
    jobs += [("bandits_run", BANDITS, True)] * 8
    jobs += [("codeprm_example", ["CWE-78 vulnerable"], True)] * 8
    jobs += [("wm_attack", [noise, float("nan"), 0, 0, "none"], False)] * 3
    jobs += [("codeprm_example", ["x" * 100_000], False)] * 3
    jobs += [("bandits_run", [*BANDITS[:2], 10**7, *BANDITS[3:]], False)] * 2
    random.Random(client).shuffle(jobs)
    return jobs


@pytest.mark.slow
def test_ten_clients_560_mixed_requests_bounded(app_and_url, tmp_path):
    from gradio import utils as gr_utils
    from gradio.route_utils import delete_files_created_by_app

    import app as app_module

    demo, url = app_and_url
    noise = upload(url, write_image(tmp_path / "noise.png", "noise"))
    out = call(url, "wm_embed", [noise, "soak key", "text", "hi", BITS64])
    assert out.ok, out.message
    marked = {"path": out.data[0]["path"], "meta": {"_type": "gradio.FileData"}}
    # warm-up: every endpoint once from each client at the same time, so the growth measured below
    # is the soak's, not the models' first load or the worker threads' first concurrent use
    def warm(i: int) -> None:
        for endpoint, data, _ in {e: (e, d, v) for e, d, v in _jobs(i, noise, marked) if v}.values():
            assert call(url, endpoint, data).ok, endpoint

    warmers = [threading.Thread(target=warm, args=(i,)) for i in range(CLIENTS)]
    for t in warmers:
        t.start()
    for t in warmers:
        t.join(WALL_LIMIT_S)
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
        for endpoint, data, valid in _jobs(i, noise, marked):
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
    rss1 = rss_bytes()

    n_jobs = sum(len(_jobs(i, noise, marked)) for i in range(CLIENTS))
    assert n_jobs >= 500
    assert len(results) == n_jobs, "a client did not finish in time"
    failed = [(e, o.message) for e, valid, o in results if valid and not o.ok]
    assert not failed, failed[:5]
    bad = [(e, o) for e, valid, o in results if not valid]
    assert all(not o.ok and o.message for _, o in bad), [(e, o.message) for e, o in bad][:5]
    # the watermark read back from the marked panorama in every verify of it
    verdicts = [o.data[0] for e, _, o in results if e == "wm_verify" and "'hi'" in o.data[0]]
    assert len(verdicts) == 3 * CLIENTS and all("Watermark detected" in v for v in verdicts)
    print(f"\nsoak: {len(results)} requests from {CLIENTS} clients in {wall:.1f} s, RSS after warm-up "
          f"{rss0 / 1e9:.2f} GB -> peak {peak[0] / 1e9:.2f} GB, end {rss1 / 1e9:.2f} GB; "
          f"{len(demo.state_holder.session_data)} sessions kept")
    growth = peak[0] - rss0
    assert growth <= GROWTH_LIMIT, f"RSS grew by {growth / 1e9:.2f} GB"
    # every call above was a session of its own: only the newest STATE_SESSIONS are kept
    assert len(demo.state_holder.session_data) <= app_module.STATE_SESSIONS < n_jobs

    # 100 scans: nothing new in the temporary directory; their reports sit in Gradio's cache, and
    # the app's delete_cache sweep (run here with age 0) removes every one of them
    assert set(glob.glob(str(Path(tempfile.gettempdir()) / "codeprm_*"))) == tmp_before
    new = set(scans.rglob("codeprm-scan.*")) - reports_before
    assert len(new) >= 2 * CLIENTS * SCANS_PER_CLIENT  # a JSON and a SARIF report per scan
    delete_files_created_by_app(demo, age=0)
    assert not set(scans.rglob("codeprm-scan.*")) & new
