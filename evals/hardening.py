"""Raw API calls to the running app, and the inputs the hardening checks send it.

``gradio_client`` refuses to send NaN, infinities or lone surrogates, but any HTTP client can, so
these calls post raw JSON to Gradio's ``/gradio_api/call/<endpoint>`` route and read the event
stream back, counting its bytes. Used by ``tests/test_bad_inputs.py``, ``tests/test_soak.py`` and
``benchmarks/hardening_probes.py``; localhost only.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

API = "gradio_api"


@dataclass
class Outcome:
    """What one call returned: ``ok`` with ``data``, or an error with its ``message`` (None when the
    server sent no message at all), plus wall time and bytes of the event stream."""

    ok: bool
    data: list | None
    message: str | None
    seconds: float
    stream_bytes: int


def upload(base: str, path: str | Path, timeout: float = 60.0) -> dict:
    """Upload a file; returns the FileData dict an endpoint takes (raises on HTTP errors, e.g. 413)."""
    path = Path(path)
    with path.open("rb") as fh:
        r = httpx.post(f"{base}{API}/upload", files={"files": (path.name, fh)}, timeout=timeout)
    r.raise_for_status()
    return {"path": r.json()[0], "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}


def call(base: str, api_name: str, data: list, timeout: float = 180.0, session: str | None = None) -> Outcome:
    """Call ``/<api_name>`` with ``data`` as raw JSON (NaN and lone surrogates allowed) and wait for the
    last event. ``session``: a session hash, so that state (e.g. the last scan) carries over."""
    t0 = time.perf_counter()
    body = json.dumps({"data": data, **({"session_hash": session} if session else {})}, allow_nan=True)
    r = httpx.post(f"{base}{API}/call/{api_name.lstrip('/')}", content=body,
                   headers={"content-type": "application/json"}, timeout=timeout)
    r.raise_for_status()
    event_id = r.json()["event_id"]
    event, payload, nbytes = None, None, 0
    with httpx.stream("GET", f"{base}{API}/call/{api_name.lstrip('/')}/{event_id}", timeout=timeout) as s:
        for line in s.iter_lines():
            nbytes += len(line) + 1
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                payload = line.split(":", 1)[1].strip()
                if event in ("complete", "error"):
                    break
    seconds = time.perf_counter() - t0
    if event == "complete":
        return Outcome(True, json.loads(payload), None, seconds, nbytes)
    try:
        message = json.loads(payload) if payload else None
    except json.JSONDecodeError:
        message = payload
    if isinstance(message, dict):
        message = message.get("message") or message.get("error")
    return Outcome(False, None, message or None, seconds, nbytes)


def write_image(path: str | Path, kind: str) -> Path:
    """A test image file: ``huge`` (8000 x 4000 RGB of one colour, about 100 KB as PNG), ``wide``
    (4096 x 2048 gradient), ``black`` (512 x 256 zeros), ``deep`` (512 x 256 16-bit grey), ``noise``
    (512 x 256 RGB noise, a usable panorama) or ``garbage`` (bytes that are no image)."""
    from PIL import Image

    path = Path(path)
    rng = np.random.default_rng(0)
    if kind == "garbage":
        path.write_bytes(b"this is not an image\x00" * 50)
    elif kind == "huge":
        Image.fromarray(np.full((4000, 8000, 3), 90, np.uint8)).save(path)
    elif kind == "wide":  # a smooth gradient: small as PNG, textured enough to embed into
        x = np.linspace(0, 8 * np.pi, 4096)
        row = (127 + 100 * np.sin(x)).astype(np.uint8)
        Image.fromarray(np.repeat(np.repeat(row[None, :, None], 2048, 0), 3, 2)).save(path)
    elif kind == "black":
        Image.fromarray(np.zeros((256, 512, 3), np.uint8)).save(path)
    elif kind == "deep":
        Image.fromarray(np.full((256, 512), 40000, np.uint16)).save(path)
    elif kind == "noise":
        Image.fromarray(rng.integers(0, 256, (256, 512, 3), dtype=np.uint8)).save(path)
    else:
        raise ValueError(f"unknown image kind {kind!r}")
    return path


def rss_bytes() -> int:
    """Resident set size of this process (the app runs in-process in the checks)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096
