"""Throughput of a 200-file batch: ``--ray`` with 2 workers against one process, side by side.

    .venv/bin/python benchmarks/batch_ray.py [--files 200] [--repeats 3]

The job is ``python -m engines.watermark verify DIR --key K --json`` over 200 panoramas of
512x256: the four shipped examples, each watermarked once (``engines.watermark.embed``), then
rolled by 50 different yaw angles (a yaw rotation is a horizontal roll of an equirectangular
image; the mark is rotation-invariant, so every file must verify). Each repeat runs both
commands as fresh processes, alternating, and times the whole command (interpreter start,
imports, Ray start-up for ``--ray``, 200 verifications) and reads the batch time and Ray's
start-up from the command's summary. Both must print the same JSON lines (timings aside).
Writes benchmarks/results/batch_ray.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from engines.watermark import EXAMPLES, embed, example_path

OUT = Path(__file__).resolve().parent / "results" / "batch_ray.json"
KEY, MESSAGE = "bench-key", "bench"


def make_job(folder: Path, n: int) -> None:
    """``n`` marked 512x256 panoramas: each example embedded once, then rolled (yaw) per copy."""
    per = -(-n // len(EXAMPLES))
    k = 0
    for name in EXAMPLES:
        img = np.asarray(Image.open(example_path(name)).convert("RGB").resize((512, 256), Image.BICUBIC))
        marked = embed(img, MESSAGE, key=KEY).image
        for j in range(per):
            if k == n:
                return
            shift = (j * 512) // per
            Image.fromarray(np.roll(marked, shift, axis=1)).save(folder / f"{name}_{j:03d}.png")
            k += 1


def run(cmd: list[str]) -> tuple[float, float, float, list[dict]]:
    """(command wall s, batch s as the runner reports it, Ray start-up s within it, JSON rows)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    batch = float(re.search(r"failed in ([\d.]+) s", proc.stderr).group(1))
    start = re.search(r"Ray start-up ([\d.]+) s", proc.stderr)
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    return wall, batch, float(start.group(1)) if start else 0.0, [
        {k: v for k, v in r.items() if k != "seconds"} for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp)
        make_job(job, args.files)
        base = [sys.executable, "-m", "engines.watermark", "verify", str(job), "--key", KEY, "--json", "--quiet"]
        modes = {"one process": base, "ray, 2 workers": [*base, "--ray", "--workers", "2"]}
        walls: dict[str, list[float]] = {m: [] for m in modes}
        steady: dict[str, list[float]] = {m: [] for m in modes}
        starts: dict[str, list[float]] = {m: [] for m in modes}
        outputs: dict[str, list[dict]] = {}
        load = os.getloadavg()
        for _ in range(args.repeats):
            for m, cmd in modes.items():
                w, batch, start, rows = run(cmd)
                walls[m].append(w)
                steady[m].append(batch - start)
                starts[m].append(start)
                outputs.setdefault(m, rows)
                if rows != outputs[m]:
                    raise SystemExit(f"{m}: outputs differ between repeats")
    one, ray = outputs["one process"], outputs["ray, 2 workers"]
    if one != ray:
        raise SystemExit("Ray and one-process outputs differ")
    detected = sum(bool(r["detected"]) and r["message"] == MESSAGE for r in one)
    med = {m: statistics.median(w) for m, w in walls.items()}
    result = {
        "command": "python -m engines.watermark verify DIR --key K --json [--ray --workers 2]",
        "job": f"{args.files} marked 512x256 panoramas (4 examples x yaw rolls)",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()}-core VM, {platform.processor() or platform.machine()}, Python "
                   f"{platform.python_version()}",
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "repeats": args.repeats,
        "files": args.files,
        "verified_with_message": detected,
        "outputs_equal": True,
        "modes": {m: {"wall_s_median": round(med[m], 2), "wall_s_min": round(min(w), 2),
                      "wall_s_max": round(max(w), 2), "files_per_s": round(args.files / med[m], 2),
                      "wall_s_all": [round(x, 2) for x in w],
                      "ray_startup_s_median": round(statistics.median(starts[m]), 2),
                      "batch_s_without_startup_median": round(statistics.median(steady[m]), 2)}
                  for m, w in walls.items()},
        # whole commands (what a user waits for), and the batch alone (Ray start-up taken out)
        "ratio_ray_over_one_process_throughput": round(med["one process"] / med["ray, 2 workers"], 3),
        "ratio_without_ray_startup": round(statistics.median(steady["one process"])
                                           / statistics.median(steady["ray, 2 workers"]), 3),
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
