"""In-stream cost per token of the SLD head scored every token against scored in blocks of k tokens.

    .venv/bin/python benchmarks/guardrail_block_ab.py [--blocks 2,4,8,16] [--decode-threads 2]

As in a stream, a SmolLM2-135M KV-cache decode step (``--decode-threads`` torch threads; 2, the app's
setting, by default) runs before every head call, so every call starts with the head's code and
weights out of cache. Per round and per setting, ``--tokens`` tokens are decoded and scored:
* ``step``: the per-token graph ``sld_step.onnx``, one call after every decode step (``block=1``);
* ``block k``: the block graph ``sld_block.onnx``, one call of k tokens after every k-th decode step
  (``Guardrail.stream(block=k)``); its time divided by k is the cost per token.
Settings alternate within a round, so a change in machine load hits all of them alike. Batch 1, one
ORT thread, the engine's session options. Prints per-round medians and their median, and writes
``benchmarks/results/guardrail_block_ab.json``. Compare the ratios, not the milliseconds, across days.

``--engine`` times what the tab shows instead: ``Guardrail.stream(..., block=k)`` on four prompts, two
benign and two harmful (64 tokens each, stop off), both backends, the median of the events' ``head_ms`` (the block's
call, its Python around it included, divided by its tokens) and ``lm_ms``; written to
``benchmarks/results/guardrail_block_engine.json``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from engines.common.onnx_runtime import ort_session
from engines.guardrail.export import BLOCK_ONNX, STEP_ONNX
from evals.guardrail.timing import decoder, run_header

ROOT = Path(__file__).resolve().parents[1]

ASSETS = ROOT / "assets" / "guardrail"
PROMPTS = ["Give me three tips for a good night's sleep.", "Write a short poem about autumn leaves.",
           "How can I hack into my neighbour's Wi-Fi network?",
           "Explain how to steal someone's identity and open credit cards in their name"]  # replies of 64 tokens


def engine(blocks: list[int], rounds: int, out: Path) -> None:
    """The ``--engine`` measure (module docstring)."""
    from engines.guardrail import Guardrail

    torch_guard = Guardrail.load("torch", device="cpu")
    guards = {"onnx": Guardrail.load("onnx", device="cpu", backbone=torch_guard.bb), "torch": torch_guard}
    runs: dict[str, dict[str, list[float]]] = {}
    for r in range(rounds):
        for prompt in PROMPTS:
            for backend, g in guards.items():
                for k in [1] + blocks:
                    ev = list(g.stream(prompt, max_new_tokens=64, threshold=0.999, patience=64, block=k))
                    rec = runs.setdefault(f"{backend} block {k}", {"head_ms": [], "lm_ms": []})
                    rec["head_ms"] += [e.head_ms for e in ev]
                    rec["lm_ms"] += [e.lm_ms for e in ev]
        print(f"round {r}: " + "  ".join(f"{n} {statistics.median(v['head_ms']):.4f}" for n, v in runs.items()),
              flush=True)
    summary = {n: {"tokens": len(v["head_ms"]), "head_ms_median": statistics.median(v["head_ms"]),
                   "lm_ms_median": statistics.median(v["lm_ms"])} for n, v in runs.items()}
    for n, v in summary.items():
        print(f"{n}: head {v['head_ms_median']:.4f} ms/token = {100 * v['head_ms_median'] / v['lm_ms_median']:.2f} % "
              f"of a {v['lm_ms_median']:.1f} ms decode step ({v['tokens']} tokens)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**run_header(),
                               "command": " ".join(["benchmarks/guardrail_block_ab.py"] + sys.argv[1:]),
                               "rounds": rounds, "settings": summary}, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", default="2,4,8,16", help="block sizes k to time (comma-separated)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=192, help="tokens decoded and scored per setting per round")
    ap.add_argument("--decode-threads", type=int, default=2)
    ap.add_argument("--engine", action="store_true", help="time Guardrail.stream(block=k) as the tab does")
    ap.add_argument("--out", type=Path, default=None,
                    help="default benchmarks/results/guardrail_block_ab.json (guardrail_block_engine.json with --engine)")
    args = ap.parse_args()
    blocks = [int(b) for b in args.blocks.split(",")]
    results = ROOT / "benchmarks" / "results"
    if args.engine:
        engine(blocks, args.rounds, args.out or results / "guardrail_block_engine.json")
        return
    args.out = args.out or results / "guardrail_block_ab.json"
    decode = decoder(args.decode_threads)
    step, blk = ort_session(ASSETS / STEP_ONNX, intra_threads=1), ort_session(ASSETS / BLOCK_ONNX, intra_threads=1)
    width = {i.name: i.shape[1] for i in step.get_inputs()}
    rng = np.random.default_rng(0)
    taps = (rng.standard_normal((max(blocks), width["taps"])) * 3).astype(np.float32)
    state = np.zeros((1, width["state"]), np.float32)
    settings = ["step"] + [f"block {k}" for k in blocks]
    runs: dict[str, list[float]] = {s: [] for s in settings}
    decode_ms: list[float] = []
    for r in range(args.rounds):
        for name in settings:
            k = 1 if name == "step" else int(name.split()[1])
            sess = step if name == "step" else blk
            per_token = []
            for _ in range(max(1, args.tokens // k)):
                for _ in range(k):
                    decode_ms.append(decode())
                t0 = time.perf_counter()
                sess.run(None, {"taps": taps[:k], "state": state})
                per_token.append((time.perf_counter() - t0) * 1e3 / k)
            runs[name].append(statistics.median(per_token))
        print(f"round {r}: " + "  ".join(f"{n} {v[-1]:.4f} ms/token" for n, v in runs.items()), flush=True)
    summary = {n: {"median_ms_per_token": statistics.median(v), "min_ms": min(v), "max_ms": max(v), "runs": v}
               for n, v in runs.items()}
    dec = statistics.median(decode_ms)
    for n, v in summary.items():
        m = v["median_ms_per_token"]
        print(f"{n}: {m:.4f} ms/token (rounds {v['min_ms']:.4f}-{v['max_ms']:.4f}), "
              f"{100 * m / dec:.2f} % of a {dec:.1f} ms decode step")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        **run_header(),
        "command": " ".join(["benchmarks/guardrail_block_ab.py"] + sys.argv[1:]),
        "rounds": args.rounds, "tokens_per_setting": args.tokens,
        "decode_step": {"threads": args.decode_threads, "median_ms": dec, "min_ms": min(decode_ms),
                        "max_ms": max(decode_ms)},
        "settings": summary}, indent=2))


if __name__ == "__main__":
    main()
