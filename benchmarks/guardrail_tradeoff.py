"""Strict's trade-off in plain sight: harmful requests caught against benign requests stopped, per family.

    .venv/bin/python benchmarks/guardrail_tradeoff.py

Strict stops a reply that goes along with a request the judge reads at or above its gate, so at each
gate level the share of harmful requests it can stop is the judge's recall, and the share of a benign
family's requests it stops (their replies go along: they are answered) is that family's flagged share.
The curves come from the shipped head's training report (``assets/guardrail/metrics.json``, key
``judge``: the corpus's dev and test requests, every level of the grid); a dot marks the shipped gate,
a ring the lower edge of the uncertain band. Writes ``docs/figures/guardrail_tradeoff.png`` (shown in
the tab's notes page and cited by RESULTS).
"""
from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
METRICS = ROOT / "assets" / "guardrail" / "metrics.json"
OUT = ROOT / "docs" / "figures" / "guardrail_tradeoff.png"
NAMES = {"long_attached": "long, with attached material", "everyday": "everyday", "risky_benign": "risky-sounding",
         "security_edu": "security education", "medical": "medical", "fiction": "fiction", "writing": "writing requests",
         "writingbench": "WritingBench"}


def main() -> None:
    m = json.loads(METRICS.read_text())
    rep, gate, band = m["judge"], m["config"]["strict_gate"], m["config"]["strict_band"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    for ax, split in zip(axes, ("dev", "test")):
        curve = rep[split]["curve"]
        fams = [f for f in NAMES if f in curve[0]["families"]]
        for f in fams:
            xs = [100 * c["families"][f] for c in curve]
            ys = [100 * c["recall"] for c in curve]
            (line,) = ax.plot(xs, ys, label=NAMES[f], lw=1.6)
            at = min(curve, key=lambda c: abs(c["level"] - gate))
            ax.plot(100 * at["families"][f], 100 * at["recall"], "o", color=line.get_color())
            if band:
                lo = min(curve, key=lambda c: abs(c["level"] - band))
                ax.plot(100 * lo["families"][f], 100 * lo["recall"], "o", mfc="none", color=line.get_color())
        ax.axvline(3, color="grey", ls="--", lw=1)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 101)
        ax.set_xlabel("benign requests of the family the judge reads at or above the level (%)")
        ax.set_title(f"{split} ({'picks the gate' if split == 'dev' else 'held out'})")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("harmful requests read at or above it (%)")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Strict's trade-off: dot = shipped gate ({gate:.3f}), ring = uncertain band from {band:.3f}; "
                 "dashed = the 3 % cap", fontsize=10)
    fig.tight_layout()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
