"""Backbone load time: first start (GGUF dequantised by transformers) vs cached safetensors,
and one greedy decode step, each in a fresh process so nothing is shared between runs.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/backbone_load.py --repeats 3
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time, torch
from engines.common import backbone as b
t0 = time.perf_counter()
bb = b._load(torch.device("cpu"), torch.float32)
ids = bb.chat_ids("Say hello.")
with torch.no_grad():
    out = bb.model(ids, use_cache=True)
    past = out.past_key_values
    nxt = out.logits[:, -1:].argmax(-1)
    steps = []
    for _ in range(20):
        t = time.perf_counter()
        out = bb.model(nxt, past_key_values=past, use_cache=True)
        past = out.past_key_values
        nxt = out.logits[:, -1:].argmax(-1)
        steps.append(time.perf_counter() - t)
steps.sort()
print(json.dumps({"source": bb.source, "load_s": bb.load_seconds, "decode_ms": 1000 * steps[len(steps) // 2]}))
"""


def run_child(cache: str) -> dict:
    env = {"SHOWCASE_CACHE": cache, "HF_HUB_OFFLINE": "1"}
    import os

    env = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    first, cached, decode = [], [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            a = run_child(cache)
            b = run_child(cache)
            assert (a["source"], b["source"]) == ("gguf", "cache")
            first.append(a["load_s"])
            cached.append(b["load_s"])
            decode += [a["decode_ms"], b["decode_ms"]]
    med = statistics.median
    print(f"first load (GGUF -> dequantise -> cache): median {med(first):.2f} s, range {min(first):.2f}-{max(first):.2f} s")
    print(f"cached load (safetensors):                median {med(cached):.2f} s, range {min(cached):.2f}-{max(cached):.2f} s")
    print(f"speed-up cached vs first: {med(first) / med(cached):.1f}x")
    print(f"one greedy decode step (KV cache, fp32, CPU): median {med(decode):.1f} ms, range {min(decode):.1f}-{max(decode):.1f} ms")


if __name__ == "__main__":
    main()
