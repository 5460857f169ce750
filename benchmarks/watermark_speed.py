"""Speed of the panorama watermark at 1024x512 (and 2048x1024) on this machine (run by hand).

    .venv/bin/python benchmarks/watermark_speed.py --repeats 7

Times embed (ours), verify in torch and in onnxruntime (ours), and the two baselines'
embed/decode on the same images, in one run. Reports median and spread (min-max) in seconds.
The load average is printed because the machine is shared.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from engines.watermark import WatermarkConfig, embed, verify
from engines.watermark.baselines import (
    DwtDctBaseline,
    PowerSpectrumBaseline,
    imwatermark_available,
)
from engines.watermark.image_io import load_example
from engines.watermark.onnx_export import export_verifier, verify_onnx
from engines.watermark.rotation import rotate_equirect


def timeit(fn, repeats: int) -> list[float]:
    fn()  # warm-up (tables, caches, ORT session)
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def row(name: str, ts: list[float], bar: float | None = None) -> str:
    med = statistics.median(ts)
    ok = "" if bar is None else (" | yes" if med <= bar else " | **no**")
    return f"| {name} | {med:.3f} | {min(ts):.3f}-{max(ts):.3f} | {len(ts)}{ok} |"


def verify_paths(name: str, repeats: int, candidates: list[tuple[int, int]] | None = None) -> None:
    """Wall and CPU seconds of verify at 1024x512, 256 bits: no disc in the image, a logo disc
    (found and filled: two reads), the cap search off, and the onnxruntime statistics path.
    ``candidates``: the disc finder's Hough candidate counts (``occlusion.CANDIDATES``,
    ``occlusion.POLE_CANDIDATES``) to time side by side, interleaved run by run so that the machine's
    load falls on each alike."""
    from dataclasses import replace

    from engines.watermark import occlusion
    from engines.watermark.attacks import nadir_patch

    img = load_example(name)
    cfg = WatermarkConfig(bits=256)
    marked = embed(img, np.random.default_rng(0).integers(0, 2, 256), "speed-key", cfg).image
    logo = nadir_patch(marked, 0.1)
    onnx_path = Path(tempfile.mkdtemp()) / "verifier.onnx"
    export_verifier("speed-key", cfg, 512, 1024, onnx_path)
    shipped = (occlusion.CANDIDATES, occlusion.POLE_CANDIDATES)
    counts = candidates or [shipped]
    paths = [("torch, no disc in the image", lambda: verify(marked, "speed-key", cfg), counts),
             ("torch, a logo disc (found, filled, read twice)", lambda: verify(logo, "speed-key", cfg), counts),
             ("torch, cap search off", lambda: verify(marked, "speed-key", replace(cfg, find_caps=False)), [shipped]),
             ("onnxruntime statistics (no cap search)", lambda: verify_onnx(marked, "speed-key", cfg, onnx_path), [shipped])]
    runs = [(f"{label}{f', Hough candidates {n[0]} + {n[1]} near a pole' if len(counts) > 1 else ''}", fn, n)
            for label, fn, ns in paths for n in ns]
    walls: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    cpus: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    try:
        for label, fn, n in runs:  # warm-up
            occlusion.CANDIDATES, occlusion.POLE_CANDIDATES = n
            fn()
        for _ in range(repeats):
            for label, fn, n in runs:
                occlusion.CANDIDATES, occlusion.POLE_CANDIDATES = n
                t, c = time.perf_counter(), time.process_time()
                fn()
                walls[label].append(time.perf_counter() - t)
                cpus[label].append(time.process_time() - c)
    finally:
        occlusion.CANDIDATES, occlusion.POLE_CANDIDATES = shipped
    rows = ["| verify, 256 bits, 1024x512 | median wall s | min-max wall s | median CPU s | runs |", "|---|---|---|---|---|"]
    for label, _, _ in runs:
        w, c = walls[label], cpus[label]
        rows.append(f"| {label} | {statistics.median(w):.3f} | {min(w):.3f}-{max(w):.3f} | "
                    f"{statistics.median(c):.3f} | {repeats} |")
    print("\n".join(rows) + f"\nload average after: {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--image", default="forest")
    ap.add_argument("--verify-only", action="store_true", help="time the verify paths alone (wall and CPU)")
    ap.add_argument("--candidates", default="", help="with --verify-only: Hough candidate counts (anywhere + near "
                    "a pole) to time side by side, e.g. 32+0,64+0,32+32 (default: the shipped counts)")
    args = ap.parse_args()
    if args.verify_only:
        verify_paths(args.image, args.repeats,
                     [tuple(int(v) for v in (n + "+0").split("+")[:2]) for n in args.candidates.split(",") if n])
        return
    print(f"torch threads: {torch.get_num_threads()} (engine uses WatermarkConfig.torch_threads=1); "
          f"load average before: {os.getloadavg()}")
    img = load_example(args.image)
    cfg = WatermarkConfig()
    key = "speed-key"
    bits = np.random.default_rng(0).integers(0, 2, 64)
    marked = embed(img, bits, key, cfg).image
    onnx_path = Path(tempfile.mkdtemp()) / "verifier.onnx"
    export_verifier(key, cfg, 512, 1024, onnx_path)
    rows = ["| step (1024x512 unless noted) | median s | min-max s | runs | meets bar |", "|---|---|---|---|---|"]
    t_embed = timeit(lambda: embed(img, bits, key, cfg), args.repeats)
    rows.append(row("embed 64 bits (ours, bar <= 5 s)", t_embed, 5.0))
    t_ver = timeit(lambda: verify(marked, key, cfg), 3 * args.repeats)
    rows.append(row("verify, torch (ours, bar <= 0.3 s)", t_ver, 0.3))
    t_onnx = timeit(lambda: verify_onnx(marked, key, cfg, onnx_path), 3 * args.repeats)
    rows.append(row("verify, onnxruntime (ours)", t_onnx, 0.3))
    t_rot = timeit(lambda: rotate_equirect(marked, 10, 20, 30), args.repeats)
    rows.append(row("rotate_equirect, bicubic (attack, not part of verify)", t_rot))
    ps = PowerSpectrumBaseline(key, cfg.l_min, cfg.l_max, alpha=0.19)
    ps_bits = bits[: ps.capacity]
    t_ps_e = timeit(lambda: ps.embed(img, ps_bits), args.repeats)
    rows.append(row(f"power-spectrum baseline embed ({ps.capacity} bits, fixed alpha)", t_ps_e))
    ps_img = ps.embed(img, ps_bits)
    t_ps_d = timeit(lambda: ps.decode(ps_img), 3 * args.repeats)
    rows.append(row("power-spectrum baseline decode", t_ps_d))
    if imwatermark_available():
        dd = DwtDctBaseline(bits=64)
        t_dd_e = timeit(lambda: dd.embed(img, bits), args.repeats)
        rows.append(row("DWT-DCT (invisible-watermark) embed", t_dd_e))
        dd_img = dd.embed(img, bits)
        t_dd_d = timeit(lambda: dd.decode(dd_img), 3 * args.repeats)
        rows.append(row("DWT-DCT (invisible-watermark) decode", t_dd_d))
    from PIL import Image

    big = np.asarray(Image.fromarray(img).resize((2048, 1024), Image.BICUBIC))
    big_marked = embed(big, bits, key, cfg).image
    rows.append(row("embed 64 bits, 2048x1024", timeit(lambda: embed(big, bits, key, cfg), max(3, args.repeats // 2))))
    rows.append(row("verify, torch, 2048x1024", timeit(lambda: verify(big_marked, key, cfg), args.repeats)))
    print("\n".join(rows))
    med_v, med_o = statistics.median(t_ver), statistics.median(t_onnx)
    print(f"\nratios (same run): verify torch / ORT = {med_v / med_o:.2f}; embed ours / DWT-DCT embed = "
          f"{statistics.median(t_embed) / statistics.median(t_dd_e) if imwatermark_available() else float('nan'):.1f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
