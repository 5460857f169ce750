"""The hardening probes of issue #24 against the running app: time, peak RSS growth and answer of each.

    .venv/bin/python benchmarks/hardening_probes.py      # writes benchmarks/results/hardening_probes.json

The app runs in this process on a free loopback port; every probe is a raw HTTP call
(``evals.hardening.call``), so NaN, 1e300 and lone surrogates reach the server as a hostile client
would send them. Each endpoint is warmed up first, so a probe's RSS growth is its own, not a model's
first load. "before" quotes the figures the issue measured on the app before the hardening.
"""
from __future__ import annotations

import glob
import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

from evals.guardrail.timing import run_header
from evals.hardening import call, rss_bytes, upload, write_image

OUT = Path(__file__).resolve().parent / "results" / "hardening_probes.json"
BANDIT = [1, 2, 10**7, 1, "polynomial", False, "stochastic", 100.0, 100.0, 10000, 25, ["MaxInP"], False,
          "faithful", "constant 0.1 (reference)"]
BITS64 = "64 bits (PSNR floor 42 dB)"


def _with(base: list, **changes) -> list:
    out = list(base)
    for k, v in changes.items():
        out[int(k[1:])] = v
    return out


def long_code(lines: int = 2000) -> str:
    """About ``lines`` lines of plausible Python: request handlers, half of them shell-injectable."""
    blocks = []
    for i in range(lines // 8):
        risky = 'subprocess.check_output("ls " + name, shell=True)' if i % 2 else 'subprocess.check_output(["ls", name])'
        blocks.append(f"def handler_{i}(request):\n    name = request.args.get('n{i}')\n    if not name:\n"
                      f"        return None\n    out = {risky}\n    return out.decode()\n\n")
    return "import subprocess\n\n\n" + "".join(blocks)


class Peak:
    """Samples this process's RSS every 20 ms while a probe runs."""

    def __enter__(self):
        self.start = self.peak = rss_bytes()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_bytes())

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss_bytes())


def load_app():
    """app.py from the repository root (it is a script, not part of the installed packages)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("app", Path(__file__).resolve().parents[1] / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    app_module = load_app()
    demo = app_module.build_app()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **app_module.launch_options())
    url = f"http://127.0.0.1:{port}/"
    tmp = Path(tempfile.mkdtemp(prefix="hardening_probes_"))
    img = {k: upload(url, write_image(tmp / f"{k}.png", k)) for k in ("huge", "wide", "black", "deep", "noise", "garbage")}
    from PIL import Image

    from engines.watermark.image_io import load_example, resize

    Image.fromarray(resize(load_example("forest"), 2.0)).save(tmp / "pano2048.png")
    img["pano2048"] = upload(url, tmp / "pano2048.png")
    # warm-up: every model and kernel the probes reach is loaded once before measuring
    call(url, "wm_verify", [img["noise"], "k", BITS64])
    call(url, "wm_attack", [img["noise"], 5, 0, 0, "none"])
    call(url, "codeprm_scan", ["import os\n", False])
    call(url, "bandits_run", _with(BANDIT, a2=100))

    session = "probe-play"
    code2000 = long_code()
    probes = [
        # (name, before (issue #24), endpoint, data, session)
        ("wm_attack, 8000x4000 PNG (103 KB)", "108 s, RSS 1.4 -> 8.5 GB", "wm_attack",
         [img["huge"], 10, 0, 0, "none"], None),
        ("wm_load, same 8000x4000 PNG (upload box)", "-", "wm_load", [img["huge"], "refuse"], None),
        ("bandits_run, T=10^7, d=1, K=2, 1 seed", "38 s, +1.9 GB (estimate said 0.15 s)", "bandits_run", BANDIT, None),
        ("bandits_run, T=10^9, d=1, K=2, 1 seed", "passed the 300 s cap on its estimate", "bandits_run",
         _with(BANDIT, a2=10**9), None),
        ("bandits_run, T=10^6, d=1, K=2, 1 seed (accepted)", "-", "bandits_run", _with(BANDIT, a2=10**6), None),
        ("wm_sweep, 4096x2048 image", "212 s, 4.1 GB", "wm_sweep", [img["wide"], "k"], None),
        ("wm_sweep, 2048x1024 (largest accepted)", "-", "wm_sweep", [img["pano2048"], "k"], None),
        ("wm_embed, 2048x1024 (largest accepted)", "-", "wm_embed", [img["pano2048"], "k", "text", "hi", BITS64], None),
        ("wm_attack, 2048x1024, yaw 30, JPEG 75", "-", "wm_attack", [img["pano2048"], 30, 0, 0, "JPEG 75"], None),
        ("codeprm_scan, 2,000 lines", "-", "codeprm_scan", [code2000, False], session),
        ("codeprm_play after that scan", "89 s, 48.6 MB streamed", "codeprm_play", [], session),
        ("wm_attack, yaw = NaN", "all-black image returned", "wm_attack", [img["noise"], float("nan"), 0, 0, "none"], None),
        ("bandits_run, delay_mean = 1e300", "ran; negative delays (int64 overflow)", "bandits_run",
         _with(BANDIT, a2=200, a7=1e300), None),
        ("wm_embed, all-black image", "success, margin -0.00", "wm_embed", [img["black"], "k", "text", "hi", BITS64], None),
        ("wm_embed, 16-bit image", "success, margin -2.28", "wm_embed", [img["deep"], "k", "text", "hi", BITS64], None),
        ("wm_verify, undecodable file", "empty error message", "wm_verify", [img["garbage"], "k", BITS64], None),
        ("guardrail_score, lone surrogate", "'Something went wrong'", "guardrail_score",
         ["hi \ud800", "ok", 0.9, 1, "onnx", "loose"], None),
        ("bandits_run, seeds = NaN (whole-number slider)", "'Something went wrong'", "bandits_run",
         _with(BANDIT, a2=100, a3=float("nan")), None),
        ("wm_load, None for a choice", "'Something went wrong'", "wm_load", [img["noise"], None], None),
        ("bandits_sweep, values 'nan'", "'Something went wrong'", "bandits_sweep",
         _with(BANDIT, a2=100) + ["delay std", "nan, 5"], None),
        ("codeprm_example, 1 MB choice", "echoed back in full", "codeprm_example", ["x" * 1_000_000], None),
    ]
    rows = []
    for name, before, endpoint, data, sess in probes:
        with Peak() as p:
            out = call(url, endpoint, data, timeout=600, session=sess)
        answer = ("ok: " + json.dumps(out.data)[:100]) if out.ok else f"error: {out.message}"
        rows.append({"probe": name, "before": before, "seconds": round(out.seconds, 2),
                     "rss_growth_mb": round((p.peak - p.start) / 1e6, 1), "stream_mb": round(out.stream_bytes / 1e6, 3),
                     "ok": out.ok, "answer": answer[:240]})
        print(f"{name:48s} {out.seconds:7.2f} s  +{(p.peak - p.start) / 1e6:7.1f} MB  {answer[:90]}", flush=True)

    # 100 scans: growth of /tmp/codeprm_* and of the files the app keeps until its cache sweep
    from gradio import utils as gr_utils
    from gradio.route_utils import delete_files_created_by_app

    reports = Path(gr_utils.get_upload_folder()) / "codeprm-scan"
    before_tmp = len(glob.glob(os.path.join(tempfile.gettempdir(), "codeprm_*")))
    before_reports = set(reports.rglob("codeprm-scan.*"))
    with Peak() as p:
        t0 = time.perf_counter()
        for i in range(100):
            call(url, "codeprm_scan", [f"import os\n\n\ndef f{i}(x):\n    return os.system(x)\n", False])
        secs = time.perf_counter() - t0
    after_tmp = len(glob.glob(os.path.join(tempfile.gettempdir(), "codeprm_*")))
    made = len(set(reports.rglob("codeprm-scan.*")) - before_reports)
    delete_files_created_by_app(demo, age=0)
    left = len(set(reports.rglob("codeprm-scan.*")) - before_reports)
    rows.append({"probe": "codeprm_scan x 100", "before": "236 folders left under /tmp/codeprm_* and the cache",
                 "seconds": round(secs, 2), "rss_growth_mb": round((p.peak - p.start) / 1e6, 1), "stream_mb": None,
                 "ok": True, "answer": f"/tmp/codeprm_* {before_tmp} -> {after_tmp}; {made} report files in Gradio's "
                                       f"cache, {left} left after the delete_cache sweep"})
    print(rows[-1])
    big = tmp / "big.bin"
    big.write_bytes(b"\0" * (50 * 1024 * 1024))
    t0 = time.perf_counter()
    try:
        upload(url, big)
        answer = "accepted"
    except Exception as exc:  # noqa: BLE001 - the refusal is the measurement
        answer = f"refused: {getattr(getattr(exc, 'response', None), 'status_code', type(exc).__name__)}"
    rows.append({"probe": "upload 50 MB", "before": "accepted", "seconds": round(time.perf_counter() - t0, 2),
                 "rss_growth_mb": None, "stream_mb": None, "ok": answer == "accepted", "answer": answer})
    print(rows[-1])
    demo.close()
    record = {**run_header(), "command": "python benchmarks/hardening_probes.py", "cpus": os.cpu_count(),
              "load_average_1min": round(os.getloadavg()[0], 2), "probes": rows}
    OUT.write_text(json.dumps(record, indent=1, ensure_ascii=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
