"""Time to the first token: the request judge's cost, against a head whose gate reads the last token only.

    git show 1667e8e:assets/guardrail/sld_head.pt > data/guardrail_v2/part4/sld_head.pt   (+ its three .onnx files)
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/guardrail_ttft.py [--rounds 5]

What a user waits for before the first word: the chat prompt's prefill through SmolLM2, the request
judge, the memory's start, the first decode step and its head step (``Guardrail.stream`` up to its
first event, onnx backend, as in the tab). Two guards share one backbone in one process and take turns
on the same prompts within each round (short, 60-token and 256-token requests), so the machine's load
falls on both alike: the shipped head (last-token taps + their user-token mean + MiniLM) and the part 4
head (last-token taps only). Each figure is the median over rounds of the per-prompt median; the ratio
is taken within each round. Writes ``benchmarks/results/guardrail_ttft.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch

from engines.common.backbone import load_backbone
from engines.common.sentence_encoder import load_sentence_encoder
from engines.guardrail import Guardrail

ROOT = Path(__file__).resolve().parents[1]
PART4 = ROOT / "data" / "guardrail_v2" / "part4"
PROMPTS = {
    "short (12 tokens)": "What is the capital of Australia?",
    "medium (~60 tokens)": "I'm planning a week in Lisbon with my parents, who don't walk far. " * 4
                           + "Which neighbourhoods should we stay in?",
    "long (256 tokens, cut)": "Summarise this report for my manager.\n\n"
                              + "The team met on Tuesday, reviewed the budget and agreed the plan. " * 60,
}


def first_token_ms(guard: Guardrail, prompt: str) -> float:
    t0 = time.perf_counter()
    next(iter(guard.stream(prompt, max_new_tokens=1)))
    return (time.perf_counter() - t0) * 1e3


@torch.inference_mode()
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5, help="calls per prompt and guard in a round")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the app's setting)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    bb = load_backbone("cpu")
    load_sentence_encoder()
    guards = {"shipped (judge: last + mean + MiniLM)": Guardrail.load("onnx", device="cpu", backbone=bb),
              "part 4 (gate: last token)": Guardrail.load("onnx", device="cpu", backbone=bb, asset_dir=PART4)}
    names = list(guards)
    for g in guards.values():  # warm up: sessions, caches, the encoder
        for p in PROMPTS.values():
            first_token_ms(g, p)
    per = {n: {p: [] for p in PROMPTS} for n in names}
    ratios = {p: [] for p in PROMPTS}
    for r in range(args.rounds):
        for p, text in PROMPTS.items():
            got = {}
            for n in (names if r % 2 == 0 else names[::-1]):
                got[n] = statistics.median(first_token_ms(guards[n], text) for _ in range(args.repeats))
                per[n][p].append(got[n])
            ratios[p].append(got[names[0]] / got[names[1]])
    rows = {p: {n: {"median_ms": round(statistics.median(per[n][p]), 1), "min_ms": round(min(per[n][p]), 1),
                    "max_ms": round(max(per[n][p]), 1)} for n in names} |
            {"ratio": round(statistics.median(ratios[p]), 3), "ratio_range": [round(min(ratios[p]), 3),
                                                                             round(max(ratios[p]), 3)]}
            for p in PROMPTS}
    out = {"command": "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/guardrail_ttft.py "
                      f"--rounds {args.rounds} --repeats {args.repeats} --threads {args.threads}",
           "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows}
    path = ROOT / "benchmarks" / "results" / "guardrail_ttft.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"| request | {' | '.join(names)} | ratio (range) |")
    print("|---|---|---|---|")
    for p, d in rows.items():
        print(f"| {p} | " + " | ".join(f"{d[n]['median_ms']} ms" for n in names)
              + f" | {d['ratio']:.3f} ({d['ratio_range'][0]:.3f}-{d['ratio_range'][1]:.3f}) |")


if __name__ == "__main__":
    main()
