"""Turn ``benchmarks/watermark_eval.py``'s and ``benchmarks/watermark_tiers.py``'s JSON into Markdown
tables and the sweep plot.

    .venv/bin/python benchmarks/watermark_report.py --json benchmarks/results/watermark_eval.json \
        --plot benchmarks/results/watermark_sweep.png
    .venv/bin/python benchmarks/watermark_report.py --tiers benchmarks/results/watermark_tiers.json
"""
from __future__ import annotations

import argparse
import json

import numpy as np


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _style(method: str, methods: list[str], ours: list[str]) -> dict:
    """Line style per method. Ours' modes all sit at 100 %, so they are nested blues (widest first,
    all solid, underneath); the baselines are thin, in other colours, dashed (power spectrum) or
    dash-dotted, on top."""
    if method in ours:
        k = ours.index(method)
        return {"color": ("#08306b", "#2171b5", "#9ecae1")[k % 3], "lw": 7 - 2.5 * k, "marker": "o",
                "ms": 9 - 2.5 * k, "zorder": 2 + k}
    others = [m for m in methods if m not in ours]
    dash = "--" if method.startswith("power spectrum") else "-."
    color = ("#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")[others.index(method) % 7]
    return {"color": color, "lw": 1.4, "ls": dash, "marker": "s" if dash == "--" else "^", "ms": 4, "zorder": 10}


def tiers_table(d: dict, bits: int) -> list[str]:
    """Bits x attacks: min bit accuracy over the rotations per image, this code / the other version
    (when it ran), plus PSNR and WS-PSNR; the last column counts the reads detected."""
    new, old = d.get(f"{bits}/new", {}), d.get(f"{bits}/old", {})
    names = [n for n in new if n != "meta"]
    cell = lambda a, b: a if b is None else f"{a} / {b}"
    out = ["| | " + " | ".join(names) + " | detected |", "|---" * (len(names) + 2) + "|"]
    for key, label in (("psnr", "PSNR dB"), ("ws_psnr", "WS-PSNR dB")):
        out.append(f"| {label} | " + " | ".join(cell(f"{new[n][key]:.2f}", f"{old[n][key]:.2f}" if n in old else None)
                                                for n in names) + " | |")
    attacks = list(new[names[0]]["attacks"])
    for a in attacks:
        row = [cell(f"{100 * new[n]['attacks'][a]['min']:.1f}",
                    f"{100 * old[n]['attacks'][a]['min']:.1f}" if n in old else None) for n in names]
        det = [new[n]["attacks"][a]["detected"] for n in names]
        det_old = [old[n]["attacks"][a]["detected"] for n in names if n in old]
        out.append(f"| {a} | " + " | ".join(row) + " | " + cell(f"{100 * np.mean(det):.0f} %",
                                                               f"{100 * np.mean(det_old):.0f} %" if det_old else None) + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", default="benchmarks/results/watermark_eval.json")
    ap.add_argument("--plot", default="benchmarks/results/watermark_sweep.png")
    ap.add_argument("--tiers", help="print the tables of watermark_tiers.py's JSON instead")
    args = ap.parse_args()
    if args.tiers:
        with open(args.tiers) as fh:
            t = json.load(fh)
        for bits in sorted({int(k.split("/")[0]) for k in t if "/" in k}):
            print(f"{bits} bits\n" + "\n".join(tiers_table(t, bits)) + "\n")
        return
    with open(args.json) as fh:
        d = json.load(fh)
    out = []
    if "fidelity" in d:
        out += ["### Fidelity and capacity (clean read-back)", "",
                "| mode | image | PSNR dB | SSIM | clean bit acc. | embed s |", "|---|---|---|---|---|---|"]
        for k, v in d["fidelity"].items():
            bits, name = k.split("/")
            out.append(f"| {bits} bits | {name} | {v['psnr']:.2f} | {v['ssim']:.4f} | {pct(v['clean_acc'])} | {v['seconds']:.1f} |")
        for bits in ("64", "128", "256"):
            ps = [v["psnr"] for k, v in d["fidelity"].items() if k.startswith(bits + "/")]
            ss = [v["ssim"] for k, v in d["fidelity"].items() if k.startswith(bits + "/")]
            out.append(f"\n{bits} bits: PSNR min {min(ps):.2f} / median {np.median(ps):.2f} dB; SSIM min {min(ss):.4f}.")
        out.append("")
    for key, title in [("robust64", "64 bits, 1024x512"), ("robust64_large", "64 bits, 2048x1024 (2x upsampled)"),
                       ("robust128", "128 bits, 1024x512"), ("robust256", "256 bits, 1024x512")]:
        if key not in d:
            continue
        out += [f"### Robustness, {title}", "",
                "| image | Haar rotations | bit acc. after rotation (mean / min) | detected | after rotation + JPEG 75 (mean / min) | detected |",
                "|---|---|---|---|---|---|"]
        for name, v in d[key].items():
            out.append(f"| {name} | {v['n']} | {pct(v['rotation_acc'])} / {pct(v['rotation_min'])} | {pct(v['rotation_detected'])} "
                       f"| {pct(v['rot_jpeg75_acc'])} / {pct(v['rot_jpeg75_min'])} | {pct(v['rot_jpeg75_detected'])} |")
        extra = [a for a in ("jpeg50", "resize0.5", "noise2/255", "blur1px", "mirror", "rot+jpeg50")
                 if a in next(iter(d[key].values()))]
        if extra:
            out += ["", "| image | " + " | ".join(extra) + " |", "|---" * (len(extra) + 1) + "|"]
            for name, v in d[key].items():
                out.append(f"| {name} | " + " | ".join(f"{pct(v[a]['acc'])} (z {v[a]['z']:.1f})" for a in extra) + " |")
        out.append("")
    if "fpr" in d:
        f = d["fpr"]
        out += ["### Detection / false positives", "",
                (f"{f['n']} pilot z-scores = {f['n_keys']} random keys x {f['n_images']} images "
                 f"({', '.join(f['images'])}). Threshold z >= {f['threshold']:.3f} (Hoeffding: P <= 1e-6). "
                 f"False positives: **{f['false_positives']}**; z mean {f['z_mean']:.3f}, std {f['z_std']:.3f}, "
                 f"max {f['z_max']:.2f}."), ""]
    if "baselines" in d:
        b = d["baselines"]
        angles = b["angles"]
        head = ("| method | bits | PSNR dB (mean) | " + " | ".join(f"{a} deg" for a in angles)
                + " | JPEG 75 | 45 deg + JPEG 75 | spectrum flattening (keyless) |")
        out += ["### Baselines: bit accuracy (%) vs rotation angle about axis (1,2,3), mean of the 4 panoramas", "",
                head, "|---" * (len(angles) + 6) + "|"]
        methods = list(next(v for k, v in b.items() if k != "angles").keys())
        for m in methods:
            rows = [v[m] for k, v in b.items() if k != "angles"]
            acc = np.mean([r["accuracy"] for r in rows], axis=0)
            out.append(f"| {m} | {rows[0]['bits']} | {np.mean([r['psnr'] for r in rows]):.2f} | "
                       + " | ".join(f"{100 * a:.1f}" for a in acc) + f" | {100 * np.mean([r['jpeg75'] for r in rows]):.1f}"
                       + f" | {100 * np.mean([r.get('rot45_jpeg75', np.nan) for r in rows]):.1f}"
                       + f" | {100 * np.mean([r.get('flatten', np.nan) for r in rows]):.1f} |")
        out.append("")
        if args.plot:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
            ours = [m for m in methods if m.startswith("ours")]
            for m in methods:
                rows = [v[m] for k, v in b.items() if k != "angles"]
                acc = 100 * np.mean([r["accuracy"] for r in rows], axis=0)
                ax.plot(angles, acc, label=f"{m} ({rows[0]['bits']} bits, "
                        f"{np.mean([r['psnr'] for r in rows]):.1f} dB)", **_style(m, methods, ours))
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xlabel("rotation angle about axis (1,2,3) (degrees)")
            ax.set_ylabel("bit accuracy (%), mean of 4 panoramas")
            ax.set_ylim(30, 104)
            ax.axhline(50, color="grey", lw=0.8, ls=":")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
            fig.tight_layout()
            fig.savefig(args.plot)
            out.append(f"Plot: `{args.plot}`.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
