"""A/B per-call cost of SLD head step graphs through onnxruntime, alternating in one process.

    git show 0306c3b:assets/guardrail/sld_step.onnx > /tmp/float_step.onnx   # float head of 12-01 17:44
    .venv/bin/python benchmarks/guardrail_step_ab.py /tmp/float_step.onnx assets/guardrail/sld_step.onnx

Each round times every graph for ``--calls`` calls (batch 1, one ORT thread, the session options
the engine uses) and keeps the per-call median; graphs alternate within a round, so a change in
machine load hits all of them alike. ``--after-decode`` runs a SmolLM2-135M decode step before each
timed call (graphs alternating token by token), so every step starts with its weights out of cache,
as in a stream; ``--decode-threads 2`` gives that step torch's default thread count here, as the app
runs it (the decode's median time is written too). ``--floor`` adds two reference graphs built in a
temporary folder: the shipped step's structure (same layers, three members, 4-bit projection, same
ORT nodes) with 8-wide members, so its weights are 40 KB instead of 1.6 MB, and a one-node graph
(``Identity``): what onnxruntime's ``run`` costs by itself. Against the shipped step they split its
cost into ORT's call, the graph's nodes and the weights' bytes. Prints the per-round medians and
their median, and writes the run under its variant's key (``warm``, ``floor``, ``after_decode``,
``floor_after_decode``, ``_t<threads>`` appended when the decode step has more than one thread) of
``benchmarks/results/guardrail_step_ab.json``, leaving the other variants' latest runs in place.
Compare the ratios, not the milliseconds, across days.

    .venv/bin/python benchmarks/guardrail_step_ab.py assets/guardrail/sld_step.onnx --floor --after-decode
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from engines.common.onnx_runtime import ort_session
from evals.guardrail.timing import decoder, floor_graphs, run_header

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--after-decode", action="store_true", help="a backbone decode step before every timed call")
    ap.add_argument("--decode-threads", type=int, default=1,
                    help="torch threads of the decode step (the app leaves torch at its default, 2 here)")
    ap.add_argument("--floor", action="store_true",
                    help="add the 8-wide same-structure step and a one-node graph as references")
    ap.add_argument("--out", type=Path, default=None,
                    help="JSON file keyed by variant (default benchmarks/results/guardrail_step_ab.json)")
    args = ap.parse_args()
    if args.out is None:
        args.out = ROOT / "benchmarks" / "results" / "guardrail_step_ab.json"
    variant = "_".join(k for k, on in (("floor", args.floor), ("after_decode", args.after_decode)) if on) or "warm"
    variant += f"_t{args.decode_threads}" if args.after_decode and args.decode_threads != 1 else ""
    evict = decoder(args.decode_threads) if args.after_decode else None
    decode_ms: list[float] = []
    tmp = tempfile.TemporaryDirectory()
    if args.floor:
        args.graphs += floor_graphs(Path(tmp.name))
    label = {str(p): f"floor/{p.name}" if p.parent == Path(tmp.name) else str(p) for p in args.graphs}
    sessions = {str(p): ort_session(p, intra_threads=1) for p in args.graphs}
    rng = np.random.default_rng(0)
    feeds = {}
    for name, s in sessions.items():
        shapes = {i.name: i.shape[1] for i in s.get_inputs()}
        feeds[name] = {"taps": (rng.standard_normal((1, shapes["taps"])) * 3).astype(np.float32),
                       "state": np.zeros((1, shapes["state"]), np.float32)}
    runs: dict[str, list[float]] = {n: [] for n in sessions}
    for r in range(args.rounds):
        if evict is None:
            for name, s in sessions.items():
                f = feeds[name]
                ts = []
                for _ in range(args.calls):
                    t0 = time.perf_counter()
                    s.run(None, f)
                    ts.append((time.perf_counter() - t0) * 1e3)
                runs[name].append(statistics.median(ts))
            continue
        per = {n: [] for n in sessions}
        for _ in range(args.calls):
            for name, s in sessions.items():
                decode_ms.append(evict())
                t0 = time.perf_counter()
                s.run(None, feeds[name])
                per[name].append((time.perf_counter() - t0) * 1e3)
        for name, v in per.items():
            runs[name].append(statistics.median(v))
        print(f"round {r}: " + "  ".join(f"{Path(n).name} {v[-1]:.4f} ms" for n, v in runs.items()), flush=True)
    summary = {label[n]: {"median_ms": statistics.median(v), "min_ms": min(v), "max_ms": max(v), "runs": v,
                          "bytes": Path(n).stat().st_size} for n, v in runs.items()}
    tmp.cleanup()
    for n, v in summary.items():
        print(f"{n}: median {v['median_ms']:.4f} ms (rounds {v['min_ms']:.4f}-{v['max_ms']:.4f}), {v['bytes'] / 1e6:.2f} MB")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {**run_header(), "rounds": args.rounds, "calls": args.calls, "graphs": summary}
    if decode_ms:
        record["decode_step"] = {"threads": args.decode_threads, "median_ms": statistics.median(decode_ms),
                                 "min_ms": min(decode_ms), "max_ms": max(decode_ms)}
        print(f"decode step ({args.decode_threads} torch threads): median {statistics.median(decode_ms):.2f} ms")
    merged = json.loads(args.out.read_text()) if args.out.exists() else {}
    merged[variant] = record  # read-modify-write: only this variant's latest run is replaced
    args.out.write_text(json.dumps(merged, indent=2) + "\n")
    print(f"wrote {args.out} [{variant}]")


if __name__ == "__main__":
    main()
