"""Speed of codeprm scoring in lines/s (run by hand; figures go to benchmarks/RESULTS.md#codeprm).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/codeprm_speed.py

Corpus: the first N stdlib modules (sorted by name) up to ~20,000 lines, read as text. Each
setting is timed `--repeats` times over the whole corpus; we report the median and the spread
(min..max). Settings, all in one run:
- model only through onnxruntime (lexing + step split + ORT): the bar (>= 2,000 lines/s),
- model only through torch, same inputs,
- full `scan` (model + bandit in-process + CodeShield via semgrep + fusion) through onnxruntime,
- the SmolLM2-135M backbone alternative: one forward pass over 512-token windows (random
  weights of the same architecture, so only speed is measured), no head at all: an upper bound
  on what a SmolLM2-hidden-state scorer could reach here.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sysconfig
import time
from pathlib import Path

from engines.codeprm.engine import CodePRM
from engines.codeprm.features import featurize


def corpus(max_lines: int) -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    out, n = [], 0
    for f in sorted(root.glob("*.py")):
        t = f.read_text(encoding="utf-8", errors="replace")
        if len(t.splitlines()) > 4000:
            continue
        out.append(t)
        n += len(t.splitlines())
        if n >= max_lines:
            break
    return out


def timed(fn, repeats: int) -> list[float]:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smollm-tokens", type=int, default=4096)
    ap.add_argument("--out", default="benchmarks/results/codeprm_speed.json")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(2)
    files = corpus(args.lines)
    n_lines = sum(len(t.splitlines()) for t in files)
    onnx = CodePRM.load("onnx")
    pt = CodePRM.load("torch")
    res = {"files": len(files), "lines": n_lines, "repeats": args.repeats, "cpu_count": os.cpu_count(),
           "machine": f"{platform.machine()}, python {platform.python_version()}, torch {torch.__version__}",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "settings": {}}

    def model_only(prm):
        return lambda: [prm.step_probs(featurize(t, prm.cfg, prm.lexer)) for t in files]

    onnx.step_probs(featurize(files[0], onnx.cfg, onnx.lexer))  # warm-up
    lex_only = timed(lambda: [featurize(t, onnx.cfg, onnx.lexer) for t in files], args.repeats)
    for name, fn in [("featurize only (lex + steps)", None), ("model only, onnxruntime", model_only(onnx)),
                     ("model only, torch", model_only(pt)),
                     ("full scan (model + bandit + CodeShield), onnxruntime",
                      lambda: [onnx.scan(t) for t in files])]:
        ts = lex_only if fn is None else timed(fn, args.repeats if "full" not in name else max(1, args.repeats // 2))
        res["settings"][name] = {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
                                 "lines_per_s": n_lines / statistics.median(ts),
                                 "lines_per_s_range": [n_lines / max(ts), n_lines / min(ts)]}
        print(name, json.dumps(res["settings"][name]), flush=True)
    # the SmolLM2 alternative: backbone forward only over 512-token windows
    try:
        from transformers import AutoTokenizer  # noqa: F401

        from engines.common.backbone import random_backbone

        bb = random_backbone(device="cpu")
        text = "\n".join(files)
        chars_per_line = len(text) / max(1, text.count("\n"))
        ntok = args.smollm_tokens
        ids = torch.randint(0, bb.model.config.vocab_size, (1, ntok))
        # real code tokenises at ~ (chars per token); measure it with the GGUF tokenizer when present
        try:
            from engines.common.backbone import load_backbone

            tok = load_backbone("cpu").tokenizer
            sample = text[:200000]
            tokens_per_line = len(tok(sample)["input_ids"]) / max(1, sample.count("\n"))
        except Exception:  # noqa: BLE001 - no GGUF: assume ~4 chars per token
            tokens_per_line = chars_per_line / 4
        with torch.inference_mode():
            def fwd():
                for s in range(0, ntok, 512):
                    bb.model.model(input_ids=ids[:, s:s + 512])
            fwd()
            ts = timed(fwd, max(1, args.repeats // 2))
        tps = ntok / statistics.median(ts)
        res["settings"]["SmolLM2-135M backbone forward only, torch"] = {
            "median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts), "tokens_per_s": tps,
            "tokens_per_line": tokens_per_line, "lines_per_s": tps / tokens_per_line}
        print("smollm2", json.dumps(res["settings"]["SmolLM2-135M backbone forward only, torch"]), flush=True)
    except Exception as exc:  # noqa: BLE001
        res["smollm2_error"] = repr(exc)
    Path(args.out).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
