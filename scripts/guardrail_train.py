"""Train the SLD guardrail head on the cached hidden states, pick the stop policy on dev,
evaluate on the held-out test split, export ONNX, and write assets (one command, seed 0).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/guardrail_train.py

Needs the content-labelled cache ``data/guardrail_v2`` (``make data-guardrail``: the data build,
the label merge and the train-split refusals). Writes ``assets/guardrail/``: ``sld_head.pt``
(config + weights), ``sld_step.onnx`` / ``sld_block.onnx`` / ``sld_init.onnx`` and ``metrics.json``
(training command, seed, dev-picked threshold/patience, test metrics per view and source, the
paired-reply bar, false stops per benign source, bootstrap intervals; see
:mod:`evals.guardrail.content_eval`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from engines.guardrail.config import GuardConfig
from engines.guardrail.export import export_onnx, save_head
from engines.guardrail.head import merge_heads
from engines.guardrail.train import (
    columns,
    dev_policy,
    dev_score,
    evaluate,
    head_traces,
    load_cache,
    train_head,
)
from evals.guardrail import content_eval as ce

ROOT = Path(__file__).resolve().parents[1]

CACHE = ROOT / "data" / "guardrail_v2"
ASSETS = ROOT / "assets" / "guardrail"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", default="", help="comma-separated seeds: train one head per seed and ship their "
                    "logit-averaged ensemble, folded into one head (engines.guardrail.head.merge_heads)")
    ap.add_argument("--lam-atc", type=float, default=0.5)
    ap.add_argument("--lam-pol", type=float, default=0.0, help="weight of the stream-decision term of atc_loss")
    ap.add_argument("--pol-patience", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dropout", type=float, default=0.3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--proj-dim", type=int, default=128)
    ap.add_argument("--state-dim", type=int, default=128)
    ap.add_argument("--layers", default="15,21,30", help="decoder layers the head reads (of 9,15,21,30)")
    ap.add_argument("--proj-bits", type=int, choices=(4,), default=None,
                    help="ship the projection weights block-quantised to this many bits (engines.guardrail.quant, "
                    "onnxruntime MatMulNBits); the stop policy is re-picked on dev for them")
    ap.add_argument("--pooled-dev", action="store_true", help="pick epoch and stop policy by the F1 of all dev "
                    "replies together (the model view has too few harmful dev replies for a per-view mean)")
    ap.add_argument("--out", type=Path, default=ASSETS)
    ap.add_argument("--cache", type=Path, default=CACHE, help="feature cache (data/guardrail_all for the scaling run)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    exs = load_cache(args.cache)
    split = {s: [e for e in exs if e.split == s] for s in ("train", "dev", "test")}
    print({s: len(v) for s, v in split.items()}, f"loaded in {time.time() - t0:.1f}s", flush=True)
    cfg = GuardConfig(layers=tuple(int(x) for x in args.layers.split(",")), dropout=args.dropout,
                      proj_dim=args.proj_dim, state_dim=args.state_dim)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    members, infos = [], []
    for seed in seeds:
        print(f"--- seed {seed}", flush=True)
        h, info = train_head(cfg, split["train"], split["dev"], epochs=args.epochs, lr=args.lr, seed=seed,
                             lam_atc=args.lam_atc, weight_decay=args.weight_decay, lam_pol=args.lam_pol,
                             pol_patience=args.pol_patience, pooled_dev=args.pooled_dev,
                             log=lambda *a: print(*a, flush=True))
        members.append(h)
        infos.append(info)
    if len(members) == 1:
        head = members[0]
    else:  # one head whose logits are the members' mean; the stop policy is re-picked on dev for it
        head = merge_heads(members)
        thr, pat, reps = dev_policy(head, split["dev"], pooled=args.pooled_dev)
        info = {"dev_f1": dev_score(reps), "threshold": thr, "patience": pat,
                "epoch": [i["epoch"] for i in infos], "member_dev_f1": [i["dev_f1"] for i in infos]}
        print(f"ensemble of seeds {seeds}: dev mean F1 {info['dev_f1']:.4f} (thr {thr}, patience {pat})", flush=True)
    if args.proj_bits:  # the deployed weights change, so the policy is re-picked on dev for them
        float_dev = info["dev_f1"]
        head = head.quantize_projection(args.proj_bits)
        thr, pat, reps = dev_policy(head, split["dev"], pooled=args.pooled_dev)
        info = {**info, "dev_f1": dev_score(reps), "threshold": thr,
                "patience": pat, "float_dev_f1": float_dev}
        print(f"{args.proj_bits}-bit projection weights: dev mean F1 {info['dev_f1']:.4f} (float {float_dev:.4f}; "
              f"thr {thr}, patience {pat})", flush=True)
    cfg = head.cfg
    cfg.threshold, cfg.patience = info["threshold"], info["patience"]
    _, _, reps_final = dev_policy(head, split["dev"], pooled=args.pooled_dev)
    test = evaluate(head, split["test"], cfg.threshold, cfg.patience)
    traces, _ = head_traces(head, split["test"], columns(cfg, cfg.hidden_size))
    content = {
        "paired": ce.paired_bar(traces, split["test"], cfg.threshold, cfg.patience),
        "false_stops": ce.false_stops_by_source(traces, split["test"], cfg.threshold, cfg.patience),
        "views": {v: ce.view_summary(traces, split["test"], cfg.threshold, cfg.patience, v)
                  for v in sorted({e.view for e in split["test"]})},
    }
    n_params = sum(p.numel() for p in head.parameters())
    args.out.mkdir(parents=True, exist_ok=True)
    save_head(head, args.out / "sld_head.pt")
    export_onnx(head, args.out)
    metrics = {
        "command": ("HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/guardrail_train.py "
                    + " ".join(sys.argv[1:])).strip(),
        "hyper": {k: getattr(args, k) for k in ("dropout", "weight_decay", "proj_dim", "state_dim", "layers")},
        "seed": seeds[0] if len(seeds) == 1 else seeds, "epochs": args.epochs, "best_epoch": info["epoch"],
        "lr": args.lr, **({"member_dev_f1": info["member_dev_f1"]} if len(seeds) > 1 else {}),
        "pooled_dev": args.pooled_dev, "dev_views": {v: round(r["f1"], 4) for v, r in reps_final.items()},
        "lam_atc": args.lam_atc, "lam_pol": args.lam_pol, "pol_patience": args.pol_patience,
        "projection_bits": args.proj_bits,
        **({"float_dev_mean_f1": info["float_dev_f1"]} if args.proj_bits else {}),
        "params": n_params, "config": cfg.to_dict(),
        "counts": {s: {v: sum(e.view == v for e in lst) for v in ("human", "model", "forced", "paired")}
                   for s, lst in split.items()},
        "dev_mean_f1": info["dev_f1"], "threshold": cfg.threshold, "patience": cfg.patience,
        "test": test, "content": content, "train_seconds": round(time.time() - t0, 1),
    }
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    for v, r in test.items():
        print(f"TEST {v}: streaming F1 {r['f1']:.3f} P {r['precision']:.3f} R {r['recall']:.3f} "
              f"false-stop(benign) {r['false_stop_benign']:.3f} median latency {r['median_latency']} "
              f"offline resp F1 {r['offline_response']['f1']:.3f}")
    pb = content["paired"]
    print(f"PAIRED: {pb['success']}/{pb['pairs']} pairs ({pb['rate']:.3f}); compliant stopped {pb['compliant_stopped']}, "
          f"refusal finished {pb['refusal_finished']}")
    for src, d in content["false_stops"].items():
        print(f"FALSE STOPS {src}: {d['stopped']}/{d['n']} ({d['rate']:.3f})")
    for v, d in content["views"].items():
        print(f"VIEW {v}: F1 {d['f1']:.3f} CI95 {d['f1_ci95'][0]:.3f}-{d['f1_ci95'][1]:.3f} "
              f"positives {d['positives']} negatives {d['negatives']}")
    print(f"params {n_params:,}; wrote {args.out}")


if __name__ == "__main__":
    main()
