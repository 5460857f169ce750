"""Payload tiers (bits vs PSNR / WS-PSNR / SSIM) and 360-pipeline robustness of the panorama watermark.

    nice -n 10 .venv/bin/python benchmarks/watermark_tiers.py --section tiers --tiers 256:3:all
    nice -n 10 .venv/bin/python benchmarks/watermark_tiers.py --section 4k
    nice -n 10 .venv/bin/python benchmarks/watermark_tiers.py --section tiers --tiers 64:0:examples,128:0:examples,1024:1:forest
    nice -n 10 .venv/bin/python benchmarks/watermark_tiers.py --section fpr --keys 200
    # -> benchmarks/results/watermark_tiers.json (latest run of each section, one key each)

Section ``4k``: native 4096x2048 embedding (the four examples upsampled 4x, bicubic: no 4K
panorama ships with the project): embed and verify seconds in the default configuration (64 bits)
and the 256-bit tier, PSNR / WS-PSNR / SSIM, and bit accuracy after the 360-preview pipeline
4096 -> 1024 -> 4096 (Pillow bicubic) and after a rotation + JPEG 75 at 4K.

For each tier ``BITS:ROTATIONS:IMAGES`` of ``--tiers`` (``WatermarkConfig(bits=BITS)``, default
otherwise; IMAGES = ``all``, ``examples`` or comma-free names joined by ``+``) and each image:
embed random bits, report PSNR, WS-PSNR, SSIM, embed seconds (wall and CPU: the machine is
shared) and clean read-back; then, over ``ROTATIONS`` Haar-random rotations (independent bicubic
resampler), bit accuracy after the
rotation alone and after the rotation followed by each 360-pipeline attack: JPEG 50/75/90, an
equirect -> cubemap -> equirect and an equirect -> EAC -> equirect round trip (OpenCV remap), a
rescale to half width and back, a nadir logo (high-contrast) or a plain fill (mean colour) over the
bottom 10 % of rows, and a mirror.

Images: the four CC0 example panoramas (1024x512) and two photographs the method was never tuned
on (scikit-learn's bundled ``china.jpg`` and ``flower.jpg``, stretched to 1024x512).
Fixed seeds throughout; a run replaces the entries it measures (per tier and image) and keeps the rest.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from engines.watermark import WatermarkConfig, bit_accuracy, embed, verify
from engines.watermark.attacks import jpeg, mirror, nadir_patch, rescale_round_trip
from engines.watermark.evaluate import pilot_z_scores
from engines.watermark.image_io import EXAMPLES, load_example
from engines.watermark.projections import cubemap_round_trip
from engines.watermark.rotation import random_rotation, rotate_equirect_matrix

ATTACKS = {
    "rotation": lambda x: x,
    "rotation + JPEG 75": lambda x: jpeg(x, 75),
    "rotation + JPEG 50": lambda x: jpeg(x, 50),
    "rotation + JPEG 90": lambda x: jpeg(x, 90),
    "rotation + cubemap round trip": lambda x: cubemap_round_trip(x),
    "rotation + EAC round trip": lambda x: cubemap_round_trip(x, eac=True),
    "rotation + rescale 1/2 and back": lambda x: rescale_round_trip(x, x.shape[1] // 2),
    "rotation + nadir logo 10 %": lambda x: nadir_patch(x, 0.1),
    "rotation + nadir fill 10 %": lambda x: nadir_patch(x, 0.1, "fill"),
    "rotation + mirror": mirror,
}
#: Attacks on the delivered panorama's own nadir (a publisher's tripod patch), then the rotation.
PRE_ATTACKS = {
    "nadir fill 10 % + rotation": lambda x: nadir_patch(x, 0.1, "fill"),
    "nadir logo 10 % + rotation": lambda x: nadir_patch(x, 0.1),
}
#: The same on the delivered panorama, then the rotation, then JPEG 75 (the issue #32 logo bar);
#: "top cap": the logo over the top 10 % of rows instead (the zenith), which the loop does not simulate.
PRE_ATTACKS_JPEG = {
    "nadir logo 10 % + rotation + JPEG 75": lambda x: nadir_patch(x, 0.1),
    "top-cap logo 10 % + rotation + JPEG 75": lambda x: nadir_patch(x[::-1], 0.1)[::-1],
}


def fresh_images() -> dict:
    from PIL import Image
    from sklearn.datasets import load_sample_image

    return {name: np.asarray(Image.fromarray(load_sample_image(f"{name}.jpg")).resize((1024, 512), Image.BICUBIC))
            for name in ("china", "flower")}


def run_tier(bits: int, images: dict, rotations: int, log, occlusion: float = 0.0) -> dict:
    cfg = WatermarkConfig(bits=bits, occlusion=occlusion)
    out = {}
    for name, img in images.items():
        rng = np.random.default_rng(10_000 + bits)
        payload = rng.integers(0, 2, bits)
        key = f"tier-{bits}-{name}"
        cpu = time.process_time()
        res = embed(img, payload, key, cfg)
        cpu = time.process_time() - cpu
        v0 = verify(res.image, key, cfg)
        row = {"psnr": res.psnr, "ws_psnr": res.ws_psnr, "ssim": res.ssim, "embed_s": res.seconds, "embed_cpu_s": cpu,
               "min_margin": res.min_margin, "notes": res.notes, "clean": bit_accuracy(v0.bits, payload),
               "clean_z": v0.z, "attacks": {}}
        every = ATTACKS | PRE_ATTACKS | PRE_ATTACKS_JPEG
        accs: dict = {k: [] for k in every}
        dets: dict = {k: [] for k in every}
        for _ in range(rotations):
            rot = random_rotation(rng)
            rotated = rotate_equirect_matrix(res.image, rot)
            received = {label: fn(rotated) for label, fn in ATTACKS.items()}
            received |= {label: rotate_equirect_matrix(fn(res.image), rot) for label, fn in PRE_ATTACKS.items()}
            received |= {label: jpeg(rotate_equirect_matrix(fn(res.image), rot), 75)
                         for label, fn in PRE_ATTACKS_JPEG.items()}
            for label, x in received.items():
                v = verify(x, key, cfg)
                accs[label].append(bit_accuracy(v.bits, payload))
                dets[label].append(bool(v.detected))
        for label in (every if rotations else ()):
            row["attacks"][label] = {"mean": float(np.mean(accs[label])), "min": float(np.min(accs[label])),
                                     "detected": float(np.mean(dets[label])), "n": rotations}
        out[name] = row
        log(f"{bits} bits {name}: PSNR {res.psnr:.2f} WS-PSNR {res.ws_psnr:.2f} SSIM {res.ssim:.4f} "
            f"embed {res.seconds:.1f}s (CPU {cpu:.1f}s) clean {row['clean']:.4f} | "
            + ", ".join(f"{k.replace('rotation + ', '')} {100 * v['mean']:.2f}" for k, v in row["attacks"].items()))
    return out


def native_4k(names: list[str], repeats: int, log) -> dict:
    from PIL import Image

    out = {}
    for name in names:
        small = load_example(name)
        img = np.asarray(Image.fromarray(small).resize((4096, 2048), Image.BICUBIC))
        row = {}
        for bits in (64, 256):
            cfg = WatermarkConfig(bits=bits)
            payload = np.random.default_rng(bits).integers(0, 2, bits)
            key = f"4k-{name}-{bits}"
            runs, cpu = [], []
            for _ in range(repeats if bits == 64 else 1):
                c0 = time.process_time()
                runs.append(embed(img, payload, key, cfg))
                cpu.append(time.process_time() - c0)
            res = runs[-1]
            t_ver, cpu_ver = [], []
            for _ in range(3):
                c0 = time.process_time()
                v = verify(res.image, key, cfg)
                cpu_ver.append(time.process_time() - c0)
                t_ver.append(v.seconds)
            preview = rescale_round_trip(res.image, 1024)
            rot = jpeg(rotate_equirect_matrix(res.image, random_rotation(np.random.default_rng(4))), 75)
            row[str(bits)] = {"embed_s": [r.seconds for r in runs], "embed_cpu_s": cpu, "verify_s": t_ver,
                              "verify_cpu_s": cpu_ver, "psnr": res.psnr,
                              "ws_psnr": res.ws_psnr, "ssim": res.ssim, "clean": bit_accuracy(v.bits, payload),
                              "rescale_4096_1024_4096": bit_accuracy(verify(preview, key, cfg).bits, payload),
                              "rotation_jpeg75": bit_accuracy(verify(rot, key, cfg).bits, payload)}
            log(f"4K {name} {bits} bits: {row[str(bits)]}")
        out[name] = row
    return out


def false_positives(bits: int, n_keys: int, log) -> dict:
    """Pilot z-scores of unmarked images (examples, fresh photos, and each rotated + JPEG 75) under
    ``n_keys`` keys in the ``bits`` tier: how often an unmarked image passes the threshold."""
    cfg = WatermarkConfig(bits=bits)
    rng = np.random.default_rng(99)
    pool = []
    for img in ({n: load_example(n) for n in EXAMPLES} | fresh_images()).values():
        pool += [img, jpeg(rotate_equirect_matrix(img, random_rotation(rng)), 75)]
    zs = pilot_z_scores(pool, [f"fp-probe-{k}" for k in range(n_keys)], cfg).ravel()
    out = {"bits": bits, "n": int(zs.size), "n_keys": n_keys, "n_images": len(pool), "threshold": cfg.threshold,
           "false_positives": int((zs >= cfg.threshold).sum()), "z_mean": float(zs.mean()),
           "z_std": float(zs.std()), "z_max": float(zs.max())}
    log(f"false positives: {out}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tiers", default="256:3:all", help="BITS:ROTATIONS:IMAGES, comma-separated")
    ap.add_argument("--section", choices=("tiers", "4k", "fpr"), default="tiers")
    ap.add_argument("--keys", type=int, default=200, help="keys for the false-positive section")
    ap.add_argument("--images-4k", default="forest,sunrise")
    ap.add_argument("--repeats-4k", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/watermark_tiers.json")
    ap.add_argument("--occlusion", type=float, default=0.0,
                    help="WatermarkConfig.occlusion for the tiers section (its entries go under '<bits>+logo')")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:7.1f}s] {msg}", flush=True)

    out_path = Path(args.out)
    results: dict = {}  # this run's entries only; merged into the file at each save

    def save() -> None:
        """Merge this run's entries into the file under a lock (sections may run side by side):
        top-level keys are replaced, except ``tiers``, where each tier's images are replaced one by one."""
        import fcntl

        with open(Path(tempfile.gettempdir()) / "watermark_tiers.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            cur = json.loads(out_path.read_text()) if out_path.is_file() else {}
            for k, v in results.items():
                if k == "tiers":
                    for bits, rows in v.items():
                        cur.setdefault("tiers", {}).setdefault(bits, {}).update(rows)
                else:
                    cur[k] = v
            out_path.write_text(json.dumps(cur, indent=1, default=float))

    if args.section == "fpr":
        results["false_positives_256"] = false_positives(256, args.keys, log)
        save()
        return
    if args.section == "4k":
        results["native_4k"] = native_4k(args.images_4k.split(","), args.repeats_4k, log)
        results["native_4k"]["meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                        "load_avg": list(__import__("os").getloadavg())}
        save()
        log(f"done: {out_path}")
        return
    images = {n: load_example(n) for n in EXAMPLES} | fresh_images()
    results.setdefault("tiers", {})
    for spec in args.tiers.split(","):
        bits, rotations, which = spec.split(":")
        names = (list(images) if which == "all" else list(EXAMPLES) if which == "examples" else which.split("+"))
        bits_key = f"{bits}+logo" if args.occlusion else bits
        results["tiers"][bits_key] = run_tier(int(bits), {n: images[n] for n in names}, int(rotations), log,
                                              args.occlusion)
        results["tiers"][bits_key]["meta"] = {"occlusion": args.occlusion, "rotations": int(rotations),
                                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                          "load_avg": list(__import__("os").getloadavg())}
        save()
    save()
    log(f"done: {out_path}")


if __name__ == "__main__":
    main()
