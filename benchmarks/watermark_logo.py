"""Tripod logos wherever a rotation puts them, and the whole sharing chain at once (issue 46).

    nice -n 10 .venv/bin/python benchmarks/watermark_logo.py --set dev --rotations 20
    nice -n 10 .venv/bin/python benchmarks/watermark_logo.py --set held-out --rotations 20   # read once
    nice -n 10 .venv/bin/python benchmarks/watermark_logo.py --section fpr --keys 25
    # -> benchmarks/results/watermark_logo.json (each run replaces its own section)
    .venv/bin/python benchmarks/watermark_logo.py --report                                   # the tables

``robustness``: every panorama of the set gets 256 random bits (``WatermarkConfig(bits=256)``, the
shipped defaults otherwise); then, over ``--rotations`` Haar-random rotations, a tripod logo over the
bottom 5, 10 or 15 % of the rows (a cap of 9, 18 or 27 degrees: 0.6, 2.4 or 5.4 % of the sphere's
area), dark or light (:func:`engines.watermark.attacks.logo_patch`), is pasted at the nadir, the
panorama is rotated and saved as JPEG 75, and verified with the key alone; also a logo with text
(10 %), and the whole chain at once: logo (10 %, dark, light and text in turn) -> rotation -> EAC
cubemap -> half size -> JPEG 80 (:func:`engines.watermark.attacks.sharing_chain`), and, without a
logo, rotation, rotation + JPEG 75 and rotation + cubemap round trip. Each read records the bit
accuracy, detection, the patch verify reported (its angle from where the logo went, its radius) and
the verify CPU seconds.

``fpr``: keyed reads under ``--keys`` probe keys of 5 received versions of every panorama (as it is,
rotated + JPEG 75, under a logo + rotation + JPEG 75, and marked under its owner's key then rotated +
JPEG 75 with and without a logo: wrongly keyed for every probe), by the shipped decision rule: the
plain read and, where discs are found, the filled read, each at half the budget, then the other
tiers at their share (:func:`engines.watermark.verification.fallback_configs`).

Sets: dev = the four CC0 examples and nine Poly Haven panoramas (the finder was tuned on them);
held-out = three Poly Haven panoramas and, when built (``scripts/watermark_panoramas.py
--stellarium``), Stellarium's Grossmugl at night; see ``assets/watermark/DATA_CARD.md``. Fixed seeds.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEV = ("forest", "courtyard", "interior", "sunrise", "night_veld", "warehouse_dim", "forest_slope",
       "overcast_field", "dawn_rocks", "house_interior", "city_square", "park_sun", "studio")
HELD_OUT = ("glass_bridge", "museum_dim", "waterfront_dusk", "grossmugl_night")
SIZES = (0.05, 0.10, 0.15)
CACHE = ROOT / "data" / "watermark_logo_cache"


def load(name: str) -> np.ndarray | None:
    """A panorama by name: an example, a committed evaluation panorama, or one built into data/."""
    from PIL import Image

    from engines.watermark.image_io import EXAMPLES, load_example

    if name in EXAMPLES:
        return load_example(name)
    for folder in (ROOT / "assets" / "watermark" / "panoramas", ROOT / "data" / "watermark_panoramas"):
        if (folder / f"{name}.jpg").is_file():
            return np.asarray(Image.open(folder / f"{name}.jpg").convert("RGB"))
    return None


def marked(name: str, img: np.ndarray) -> dict:
    """256 random bits embedded under the image's own key (cached in data/: embedding is not what
    this measures, and it is the slow part)."""
    from engines.watermark import WatermarkConfig, embed

    path = CACHE / f"{name}.npz"
    payload = np.random.default_rng(46).integers(0, 2, 256).astype(np.uint8)
    if path.is_file():
        z = np.load(path)
        if np.array_equal(z["source"], img):
            return {"image": z["image"], "payload": payload, "psnr": float(z["psnr"]), "embed_s": float(z["embed_s"])}
    cpu = time.process_time()
    res = embed(img, payload, f"logo-{name}", WatermarkConfig(bits=256))
    cpu = time.process_time() - cpu
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, image=res.image, source=img, psnr=res.psnr, embed_s=cpu)
    return {"image": res.image, "payload": payload, "psnr": res.psnr, "embed_s": cpu}


def conditions() -> dict:
    """label -> (logo or None, after the rotation); the chain's logo style turns with the draw."""
    from engines.watermark.attacks import jpeg, logo_patch, sharing_chain
    from engines.watermark.projections import cubemap_round_trip

    j75 = lambda x: jpeg(x, 75)
    out = {"rotation": (None, lambda x: x), "rotation + JPEG 75": (None, j75),
           "rotation + cubemap": (None, cubemap_round_trip)}
    for s in SIZES:
        for style in ("dark", "light"):
            out[f"{style} logo {round(100 * s)} % + rotation + JPEG 75"] = (
                lambda x, k, s=s, st=style: logo_patch(x, s, st), j75)
    out["text logo 10 % + rotation + JPEG 75"] = (lambda x, k: logo_patch(x, 0.1, "text"), j75)
    out["logo 10 % + rotation + cubemap + half size + JPEG 80"] = (
        lambda x, k: logo_patch(x, 0.1, ("dark", "light", "text")[k % 3]), sharing_chain)
    return out


class Rotated:
    """``rotate_equirect_matrix(x, rot)`` for every ``x`` that differs from ``base`` only in its bottom
    rows (a logo over the nadir): ``base`` is resampled once, and for each ``x`` only the output pixels
    whose bicubic taps reach a changed row are resampled again. The samples are the same, so the
    bytes are too (checked in ``tests/test_watermark_logo.py``); it makes the benchmark ~3x cheaper."""

    def __init__(self, base: np.ndarray, rot: np.ndarray) -> None:
        from engines.watermark.rotation import sample_equirect

        h, w = base.shape[:2]
        theta = (np.arange(h) + 0.5) * np.pi / h
        phi = (np.arange(w) + 0.5) * 2 * np.pi / w
        st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
        xyz = np.stack([st * np.cos(phi)[None], st * np.sin(phi)[None], np.broadcast_to(ct, (h, w))], axis=-1)
        src = xyz @ np.asarray(rot)
        self.theta, self.phi = np.arccos(np.clip(src[..., 2], -1, 1)), np.arctan2(src[..., 1], src[..., 0])
        self.base, self.sample = base, sample_equirect
        self.out = self._uint8(sample_equirect(base, self.theta, self.phi, "bicubic"))

    @staticmethod
    def _uint8(x: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(x), 0, 255).astype(np.uint8)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        changed = np.nonzero((x != self.base).any(axis=(1, 2)))[0]
        out = self.out.copy()
        if len(changed):
            h = self.base.shape[0]
            sel = self.theta / np.pi * h - 0.5 >= int(changed[0]) - 4  # the taps span rows -1..+2
            out[sel] = self._uint8(self.sample(x, self.theta[sel], self.phi[sel], "bicubic"))
        return out


def robustness(names: list[str], rotations: int, log, save=lambda partial: None) -> dict:
    from engines.watermark import WatermarkConfig, bit_accuracy, verify
    from engines.watermark.rotation import random_rotation

    cfg = WatermarkConfig(bits=256)
    conds = conditions()
    out = {}
    for name in names:
        img = load(name)
        if img is None:
            log(f"{name}: not built, skipped (scripts/watermark_panoramas.py)")
            continue
        m = marked(name, img)
        rng = np.random.default_rng(4600)
        rows: dict = {k: [] for k in conds}
        for k in range(rotations):
            rot = random_rotation(rng)
            where = rot @ np.array([0.0, 0.0, -1.0])  # where the nadir (and the logo) went
            rotated = Rotated(m["image"], rot)
            for label, (logo, after) in conds.items():
                x = after(rotated(m["image"] if logo is None else logo(m["image"], k)))
                cpu = time.process_time()
                v = verify(x, f"logo-{name}", cfg)
                cpu = time.process_time() - cpu
                near = [c for c in v.patches if math.degrees(math.acos(min(1.0, float(np.dot(c.centre, where))))) < 5]
                rows[label].append({
                    "acc": bit_accuracy(v.bits, m["payload"]), "detected": bool(v.detected), "z": round(v.z, 3),
                    "patch_at_logo": bool(near), "other_patches": len(v.patches) - len(near),
                    "angle_err": (round(math.degrees(math.acos(min(1.0, float(np.dot(near[0].centre, where))))), 2)
                                  if near else None),
                    "radius": round(near[0].radius, 2) if near else None, "filled_read": bool(v.patch_read),
                    "cpu_s": round(cpu, 3)})
        summary = {}
        for label, rs in rows.items():
            acc = np.array([r["acc"] for r in rs])
            summary[label] = {"mean": float(acc.mean()), "min": float(acc.min()), "draws_95": float((acc >= 0.95).mean()),
                              "draws_90": float((acc >= 0.90).mean()), "detected": float(np.mean([r["detected"] for r in rs])),
                              "patch_at_logo": float(np.mean([r["patch_at_logo"] for r in rs])), "n": len(rs)}
        out[name] = {"psnr": m["psnr"], "embed_cpu_s": m["embed_s"], "summary": summary, "draws": rows}
        save(out)  # after every image: a long run stopped early keeps what it measured
        log(f"{name}: PSNR {m['psnr']:.2f} | " + ", ".join(
            f"{k.replace(' + rotation', '').replace(' + JPEG 75', '')} {100 * v['min']:.1f}" for k, v in summary.items()))
    return out


def false_positives(names: list[str], n_keys: int, log) -> dict:
    from engines.watermark import WatermarkConfig
    from engines.watermark.attacks import jpeg, logo_patch
    from engines.watermark.evaluate import pilot_z_scores
    from engines.watermark.image_io import luminance
    from engines.watermark.occlusion import fill_cap, find_caps
    from engines.watermark.rotation import random_rotation, rotate_equirect_matrix
    from engines.watermark.verification import fallback_configs

    cfg = WatermarkConfig(bits=256)
    rng = np.random.default_rng(4601)
    pool, reads, labels = [], [], []  # luminance views; per received image, the indices of its views
    for n, name in enumerate(names):
        img = load(name)
        if img is None:
            continue
        mk = marked(name, img)["image"]
        style = ("dark", "light", "text")[n % 3]
        rot = random_rotation(rng)
        for label, x in (("as it is", img), ("rotated + JPEG 75", jpeg(rotate_equirect_matrix(img, rot), 75)),
                         ("logo + rotation + JPEG 75", jpeg(rotate_equirect_matrix(logo_patch(img, 0.1, style), rot), 75)),
                         ("another key's mark, rotated + JPEG 75", jpeg(rotate_equirect_matrix(mk, rot), 75)),
                         ("another key's mark under a logo", jpeg(rotate_equirect_matrix(logo_patch(mk, 0.1, style), rot), 75))):
            lum = luminance(x)
            views = [lum]
            caps = find_caps(x)
            if caps:
                filled = lum
                for c in caps:
                    filled = fill_cap(filled, c)
                views.append(filled)
            reads.append(list(range(len(pool), len(pool) + len(views))))
            pool.extend(np.clip(np.repeat(v[..., None], 3, axis=2), 0, 255) for v in views)
            labels.append(f"{name}: {label}")
    keys = [f"fp-probe-{k}" for k in range(n_keys)]
    tiers = [(cfg, cfg.fpr)] + [(c, c.fpr) for _, c, _ in fallback_configs(cfg, 512)]
    hits = np.zeros((n_keys, len(reads)), bool)
    z_all = []
    for c, fpr in tiers:
        z = pilot_z_scores(pool, keys, c)  # (keys, views)
        for i, idx in enumerate(reads):
            best = z[:, idx].max(axis=1)
            thr = math.sqrt(2 * math.log(len(idx) / fpr))
            hits[:, i] |= best >= thr
            if c is cfg:
                z_all.append(best)
        log(f"fpr: tier {c.bits} bits {c.l_min}..{c.l_max} done")
    zs = np.concatenate(z_all)
    out = {"keyed_reads": int(hits.size), "n_keys": n_keys, "received_images": len(reads),
           "with_a_disc": int(sum(len(r) > 1 for r in reads)), "false_positives": int(hits.sum()),
           "z_256_mean": float(zs.mean()), "z_256_std": float(zs.std()), "z_256_max": float(zs.max()),
           "images": labels}
    log(f"false positives: {out['false_positives']} of {out['keyed_reads']}")
    return out


SHORT = {"rotation": "rotation", "rotation + JPEG 75": "rot. + JPEG 75", "rotation + cubemap": "rot. + cubemap"}


def short(label: str) -> str:
    return SHORT.get(label, label.replace(" + rotation + JPEG 75", " + rot. + JPEG 75")
                     .replace(" + rotation + cubemap + half size + JPEG 80", " + rot. + cubemap + half size + JPEG 80"))


def report(path: Path) -> str:
    """Markdown tables of a results file: per held-out image, and over the dev set."""
    res = json.loads(path.read_text())
    out = []
    for key, title in (("robustness/held-out", "held-out"), ("robustness/dev", "dev")):
        if key not in res:
            continue
        imgs = res[key]["images"]
        names = list(imgs)
        conds = list(next(iter(imgs.values()))["summary"])
        n = next(iter(imgs.values()))["summary"][conds[0]]["n"]
        if title == "held-out":
            out.append(f"| {title}: min % (mean %) over {n} rotations | " + " | ".join(f"{k}*" for k in names)
                       + " | draws >= 95 % | patch found |")
            out.append("|---" * (len(names) + 3) + "|")
            out.append("| PSNR dB | " + " | ".join(f"{imgs[k]['psnr']:.2f}" for k in names) + " | | |")
            for c in conds:
                cells = [f"{100 * imgs[k]['summary'][c]['min']:.1f} ({100 * imgs[k]['summary'][c]['mean']:.1f})" for k in names]
                d95 = np.mean([imgs[k]["summary"][c]["draws_95"] for k in names])
                found = np.mean([imgs[k]["summary"][c]["patch_at_logo"] for k in names])
                out.append(f"| {short(c)} | " + " | ".join(cells) + f" | {100 * d95:.0f} % | "
                           + (f"{100 * found:.0f} % |" if "logo" in c else "- |"))
        else:
            out.append(f"| {title} ({len(names)} images x {n} rotations) | worst image: min % | mean % | draws >= 95 % "
                       "| patch found | worst image |")
            out.append("|---|---|---|---|---|---|")
            for c in conds:
                mins = {k: imgs[k]["summary"][c]["min"] for k in names}
                worst = min(mins, key=mins.get)
                mean = np.mean([imgs[k]["summary"][c]["mean"] for k in names])
                d95 = np.mean([imgs[k]["summary"][c]["draws_95"] for k in names])
                found = np.mean([imgs[k]["summary"][c]["patch_at_logo"] for k in names])
                out.append(f"| {short(c)} | {100 * mins[worst]:.1f} | {100 * mean:.1f} | {100 * d95:.0f} % | "
                           + (f"{100 * found:.0f} %" if "logo" in c else "-") + f" | {worst} |")
            out.append(f"PSNR dB: {min(v['psnr'] for v in imgs.values()):.2f}-{max(v['psnr'] for v in imgs.values()):.2f}")
        cpu = [r["cpu_s"] for v in imgs.values() for rs in v["draws"].values() for r in rs]
        out.append(f"verify CPU s over {len(cpu)} reads ({title}): median {np.median(cpu):.3f}, "
                   f"90th percentile {np.quantile(cpu, 0.9):.3f}")
        out.append("")
    if "fpr" in res:
        f = res["fpr"]
        out.append(f"false positives: {f['false_positives']} of {f['keyed_reads']} keyed reads ({f['n_keys']} keys x "
                   f"{f['received_images']} received images, {f['with_a_disc']} with a disc found); 256-bit pilot z "
                   f"mean {f['z_256_mean']:.3f}, std {f['z_256_std']:.3f}, max {f['z_256_max']:.2f}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--section", choices=("robustness", "fpr"), default="robustness")
    ap.add_argument("--set", default="dev", help="dev, held-out, or names joined by commas")
    ap.add_argument("--rotations", type=int, default=20)
    ap.add_argument("--keys", type=int, default=25)
    ap.add_argument("--out", default="benchmarks/results/watermark_logo.json")
    ap.add_argument("--report", action="store_true", help="print the Markdown tables of --out and stop")
    args = ap.parse_args()
    if args.report:
        print(report(ROOT / args.out))
        return
    import torch

    torch.set_num_threads(1)
    t0 = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    names = {"dev": list(DEV), "held-out": list(HELD_OUT), "all": list(DEV + HELD_OUT)}.get(args.set, args.set.split(","))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_avg": list(os.getloadavg()),
            "set": args.set, "seconds": None}
    if args.section == "fpr" and args.set == "dev":
        names = list(DEV + HELD_OUT)
    out_path = ROOT / args.out

    def write(entry: dict) -> None:
        meta["seconds"] = round(time.time() - t0, 1)
        cur = json.loads(out_path.read_text()) if out_path.is_file() else {}
        cur.update(entry)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(cur, indent=1, default=float))

    key = f"robustness/{args.set}"
    if args.section == "fpr":
        write({"fpr": false_positives(names, args.keys, log) | {"meta": meta}})
    else:
        images = robustness(names, args.rotations, log, lambda part: write({key: {"images": part, "meta": meta}}))
        write({key: {"images": images, "meta": meta}})
    log(f"done: {out_path}")


if __name__ == "__main__":
    main()
