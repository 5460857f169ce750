"""Evaluate the panorama watermark against every bar of issue 3 (run by hand; minutes).

    nice -n 10 .venv/bin/python benchmarks/watermark_eval.py --rotations 100 --out benchmarks/results/watermark_eval.json

Fixed seeds throughout. Images: the four CC0 example panoramas at 1024x512, and the same four
upsampled 2x (bicubic) to 2048x1024 (no larger real panoramas ship with the project).
Prints a Markdown report and writes the raw numbers as JSON.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from engines.watermark import WatermarkConfig, bit_accuracy, embed, verify
from engines.watermark.attacks import gaussian_blur, gaussian_noise, jpeg, mirror
from engines.watermark.baselines import (
    DwtDctBaseline,
    PowerSpectrumBaseline,
    flatten_power_spectrum,
    imwatermark_available,
)
from engines.watermark.evaluate import SWEEP_AXIS, axis_angle_matrix, pilot_z_scores
from engines.watermark.image_io import EXAMPLES, load_example, resize
from engines.watermark.metrics import psnr
from engines.watermark.rotation import random_rotation, rotate_equirect_matrix


def upsample2(img: np.ndarray) -> np.ndarray:
    from PIL import Image

    h, w = img.shape[:2]
    return np.asarray(Image.fromarray(img).resize((2 * w, 2 * h), Image.BICUBIC))


def fidelity(images: dict, log) -> dict:
    out = {}
    for bits in (64, 128, 256):
        cfg = WatermarkConfig(bits=bits)
        for name, img in images.items():
            rng = np.random.default_rng(bits)
            payload = rng.integers(0, 2, bits)
            r = embed(img, payload, f"eval-{name}", cfg)
            v = verify(r.image, f"eval-{name}", cfg)
            out[f"{bits}/{name}"] = {"psnr": r.psnr, "ssim": r.ssim, "seconds": r.seconds,
                                     "clean_acc": bit_accuracy(v.bits, payload), "detected": v.detected,
                                     "notes": r.notes, "min_margin": r.min_margin}
            log(f"fidelity {bits} bits {name}: PSNR {r.psnr:.2f} dB SSIM {r.ssim:.4f} acc {out[f'{bits}/{name}']['clean_acc']:.3f} {r.seconds:.1f}s")
    return out


def robustness(images: dict, bits: int, rotations: int, log, extra_attacks: bool = True) -> dict:
    cfg = WatermarkConfig(bits=bits)
    out = {}
    for name, img in images.items():
        rng = np.random.default_rng(1000 + bits)
        payload = rng.integers(0, 2, bits)
        key = f"robust-{name}"
        marked = embed(img, payload, key, cfg).image
        rot_acc, jpg_acc, rot_det, jpg_det = [], [], [], []
        for _ in range(rotations):
            x = rotate_equirect_matrix(marked, random_rotation(rng))
            v = verify(x, key, cfg)
            rot_acc.append(bit_accuracy(v.bits, payload))
            rot_det.append(v.detected)
            v = verify(jpeg(x, 75), key, cfg)
            jpg_acc.append(bit_accuracy(v.bits, payload))
            jpg_det.append(v.detected)
        res = {"rotation_acc": float(np.mean(rot_acc)), "rotation_min": float(np.min(rot_acc)),
               "rotation_detected": float(np.mean(rot_det)), "rot_jpeg75_acc": float(np.mean(jpg_acc)),
               "rot_jpeg75_min": float(np.min(jpg_acc)), "rot_jpeg75_detected": float(np.mean(jpg_det)),
               "n": rotations}
        if extra_attacks:
            arng = np.random.default_rng(7)
            for label, fn in [("jpeg50", lambda z: jpeg(z, 50)), ("resize0.5", lambda z: resize(z, 0.5)),
                              ("noise2/255", lambda z, g=arng: gaussian_noise(z, 2 / 255, g)),
                              ("blur1px", lambda z: gaussian_blur(z, 1.0)), ("mirror", mirror),
                              ("rot+jpeg50", lambda z, g=arng: jpeg(rotate_equirect_matrix(z, random_rotation(g)), 50))]:
                v = verify(fn(marked), key, cfg)
                res[label] = {"acc": bit_accuracy(v.bits, payload), "detected": bool(v.detected), "z": v.z}
        out[name] = res
        log(f"robust {bits} bits {name} ({img.shape[1]}x{img.shape[0]}): rot {res['rotation_acc']:.4f} "
            f"(min {res['rotation_min']:.3f}) rot+jpeg75 {res['rot_jpeg75_acc']:.4f} (min {res['rot_jpeg75_min']:.3f})")
    return out


def false_positives(images: dict, n_keys: int, log) -> dict:
    """Pilot z-scores for unmarked images (and images marked with another key) under many keys."""
    cfg = WatermarkConfig()
    rng = np.random.default_rng(42)
    pool = []
    for name, img in images.items():
        pool.append((f"{name} unmarked", img))
        pool.append((f"{name} rotated+JPEG75", jpeg(rotate_equirect_matrix(img, random_rotation(rng)), 75)))
        pool.append((f"{name} marked with another key", embed(img, "other", f"owner-{name}", cfg).image))
    t0 = time.time()

    def progress(k: int) -> None:
        if k % 100 == 0:
            log(f"fpr: {k}/{n_keys} keys, {time.time() - t0:.0f}s")

    zs = pilot_z_scores([img for _, img in pool], [f"probe-{k}" for k in range(n_keys)], cfg, progress).ravel()
    thr = cfg.threshold
    return {"n": int(zs.size), "n_keys": n_keys, "n_images": len(pool), "threshold": thr,
            "false_positives": int((zs >= thr).sum()), "z_mean": float(zs.mean()), "z_std": float(zs.std()),
            "z_max": float(zs.max()), "images": [p[0] for p in pool]}


def baselines(images: dict, angles: list[float], log) -> dict:
    """Accuracy vs rotation angle and capacity for ours and both baselines, same images."""
    out = {"angles": angles}
    cfg = WatermarkConfig()
    for name, img in images.items():
        rng = np.random.default_rng(5)
        key = f"base-{name}"
        bits = rng.integers(0, 2, 64)
        ours = embed(img, bits, key, cfg)
        ps = PowerSpectrumBaseline(key, cfg.l_min, cfg.l_max)
        ps_bits = rng.integers(0, 2, ps.capacity)
        ps_img, ps_psnr = ps.embed_at_psnr(img, ps_bits, ours.psnr)
        ps64 = PowerSpectrumBaseline(key, 8, 71)  # 64 degrees: enough capacity for 64 bits
        ps64_img, ps64_psnr = ps64.embed_at_psnr(img, bits, ours.psnr)
        methods = {"ours": (ours.image, lambda x, k=key: verify(x, k, cfg).bits, bits, ours.psnr),
                   f"power spectrum l={cfg.l_min}..{cfg.l_max}": (ps_img, ps.decode, ps_bits, ps_psnr),
                   "power spectrum l=8..71": (ps64_img, lambda x, p=ps64: p.decode(x, 64), bits, ps64_psnr)}
        for n in (128, 256):  # the larger modes, each against a power spectrum of n degrees (l = 8..7+n)
            cfg_n = WatermarkConfig(bits=n)
            bits_n = rng.integers(0, 2, n)
            ours_n = embed(img, bits_n, key, cfg_n)
            ps_n = PowerSpectrumBaseline(key, 8, 7 + n)
            ps_n_img, ps_n_psnr = ps_n.embed_at_psnr(img, bits_n, ours_n.psnr)
            methods[f"ours, {n} bits"] = (ours_n.image, lambda x, k=key, c=cfg_n: verify(x, k, c).bits, bits_n,
                                          ours_n.psnr)
            methods[f"power spectrum l=8..{7 + n}"] = (ps_n_img, lambda x, p=ps_n, n=n: p.decode(x, n), bits_n,
                                                       ps_n_psnr)
        if imwatermark_available():
            dd = DwtDctBaseline(bits=64, scale=36)  # the package default step
            dd_img = dd.embed(img, bits)
            methods["DWT-DCT (invisible-watermark, step 36)"] = (dd_img, dd.decode, bits, psnr(img, dd_img))
            ddc = DwtDctBaseline(bits=64)  # the strongest step that reads back unrotated on this image
            ddc_img = ddc.embed_checked(img, bits)
            methods["DWT-DCT (invisible-watermark, checked step)"] = (ddc_img, ddc.decode, bits, psnr(img, ddc_img))
        res = {}
        for m, (mimg, dec, b, p) in methods.items():
            accs = []
            for ang in angles:
                x = rotate_equirect_matrix(mimg, axis_angle_matrix(SWEEP_AXIS, ang)) if ang else mimg
                accs.append(bit_accuracy(dec(x), b))
            jp = bit_accuracy(dec(jpeg(mimg, 75)), b)
            rj = bit_accuracy(dec(jpeg(rotate_equirect_matrix(mimg, axis_angle_matrix(SWEEP_AXIS, 45)), 75)), b)
            flat = flatten_power_spectrum(mimg)
            res[m] = {"bits": len(b), "psnr": float(p), "accuracy": accs, "jpeg75": jp, "rot45_jpeg75": rj,
                      "flatten": bit_accuracy(dec(flat), b), "flatten_psnr": psnr(mimg, flat)}
        out[name] = res
        log(f"baselines {name}: " + "; ".join(f"{m} {v['bits']}b {v['psnr']:.1f}dB {np.round(v['accuracy'], 2).tolist()}"
                                                for m, v in res.items()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rotations", type=int, default=100)
    ap.add_argument("--rotations-large", type=int, default=10, help="rotations per 2048x1024 image")
    ap.add_argument("--rotations-modes", type=int, default=20, help="rotations per image in 128/256-bit modes")
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("--only", default="fidelity,robust,fpr,baselines")
    ap.add_argument("--out", default="benchmarks/results/watermark_eval.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:7.1f}s] {msg}", flush=True)

    small = {n: load_example(n) for n in EXAMPLES}
    large = {f"{n}@2048": upsample2(img) for n, img in small.items()}
    only = set(args.only.split(","))
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    results: dict = json.loads(out_path.read_text()) if out_path.is_file() else {}

    def save():
        out_path.write_text(json.dumps(results, indent=1, default=float))

    if "fidelity" in only:
        results["fidelity"] = fidelity({**small, **large}, log)
        save()
    if "robust" in only:
        results["robust64"] = robustness(small, 64, args.rotations, log)
        save()
        results["robust64_large"] = robustness(large, 64, args.rotations_large, log, extra_attacks=False)
        save()
        for bits in (128, 256) if args.rotations_modes else ():  # 256 bits: watermark_tiers.py
            results[f"robust{bits}"] = robustness(small, bits, args.rotations_modes, log, extra_attacks=False)
            save()
    if "robust_large" in only and "robust" not in only:
        results["robust64_large"] = robustness(large, 64, args.rotations_large, log, extra_attacks=False)
        save()
    if "fpr" in only:
        results["fpr"] = false_positives(small, args.keys, log)
        save()
        log(f"fpr: {results['fpr']}")
    if "baselines" in only:
        results["baselines"] = baselines(small, [0, 1, 2, 5, 10, 20, 45, 90, 180], log)
        save()
    results["meta"] = {"seconds": time.time() - t0, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    save()
    log(f"done: {out_path}")


if __name__ == "__main__":
    main()
