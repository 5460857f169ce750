"""Embed seconds per payload tier and panorama width, two code versions side by side in one run.

    git archive main engines | tar -x -C /tmp/old     # the version to compare against
    nice -n 15 .venv/bin/python benchmarks/watermark_embed_times.py --old /tmp/old

Each measurement is one fresh process per (version, tier, width) that imports ``engines`` from
that version's tree, builds the verifier tables for the size (a verify call, not timed), then
times ``embed`` of the forest example (the most textured: the slowest and hardest for the floor),
upscaled with Pillow's bicubic to the width, ``--repeats`` times (``--repeats-256`` for 256 bits at
1024 px, the bar). The versions alternate cell by cell, so both see the same machine load. Prints
a Markdown table (median and min-max seconds, PSNR) and writes
``benchmarks/results/watermark_embed_times.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np
from PIL import Image
from engines.watermark import WatermarkConfig, embed, verify
from engines.watermark import load_example
bits, width, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
img = load_example("forest")
if width != img.shape[1]:
    img = np.asarray(Image.fromarray(img).resize((width, width // 2), Image.BICUBIC))
cfg = WatermarkConfig(bits=bits)
verify(img, "bench-key", cfg)  # tables for this size (cached, as in the app)
payload = np.random.default_rng(bits + width).integers(0, 2, bits)
out = []
for _ in range(repeats):
    t, c = time.perf_counter(), time.process_time()
    res = embed(img, payload, "bench-key", cfg)
    out.append({"s": time.perf_counter() - t, "cpu_s": time.process_time() - c, "psnr": res.psnr})
print(json.dumps(out))
"""


def run(tree: Path, bits: int, width: int, repeats: int) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run([sys.executable, "-c", CHILD, str(bits), str(width), str(repeats)], env=env, cwd=tree,
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old", required=True, help="a tree holding the other version's engines/")
    ap.add_argument("--tiers", default="64,128,256")
    ap.add_argument("--widths", default="1024,2048,4096")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--repeats-256", type=int, default=5)
    ap.add_argument("--out", default="benchmarks/results/watermark_embed_times.json")
    args = ap.parse_args()
    rows = []
    print(f"load average before: {os.getloadavg()}", flush=True)
    for bits in map(int, args.tiers.split(",")):
        for width in map(int, args.widths.split(",")):
            n = args.repeats_256 if (bits, width) == (256, 1024) else args.repeats
            cell = {"bits": bits, "width": width}
            for name, tree in (("old", Path(args.old)), ("new", ROOT)):
                runs = run(tree, bits, width, n)
                ts = [r["s"] for r in runs]
                cell[name] = {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts), "n": n,
                              "median_cpu_s": statistics.median(r["cpu_s"] for r in runs), "psnr": runs[-1]["psnr"]}
            rows.append(cell)
            print(f"{bits} bits {width}: old {cell['old']['median_s']:.2f} s ({cell['old']['psnr']:.2f} dB), "
                  f"new {cell['new']['median_s']:.2f} s ({cell['new']['psnr']:.2f} dB)", flush=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_avg_after": list(os.getloadavg())}
    Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    print("\n| bits | width | old median s (min-max) | new median s (min-max) | old / new | PSNR old / new dB |")
    print("|---|---|---|---|---|---|")
    for c in rows:
        o, w = c["old"], c["new"]
        print(f"| {c['bits']} | {c['width']} | {o['median_s']:.2f} ({o['min_s']:.2f}-{o['max_s']:.2f}, n={o['n']}) | "
              f"{w['median_s']:.2f} ({w['min_s']:.2f}-{w['max_s']:.2f}, n={w['n']}) | "
              f"{o['median_s'] / w['median_s']:.1f}x | {o['psnr']:.2f} / {w['psnr']:.2f} |")


if __name__ == "__main__":
    main()
