"""Train the LM-backed step head of codeprm on real vulnerability-fix pairs; choose on dev; save.

    nice -n 10 python scripts/codeprm_train_lm.py            # -> assets/codeprm/lm_head.{safetensors,json}

Data: data/codeprm/fix_pairs.jsonl (split by repository). Features: SmolLM2-135M hidden states
per step (engines/codeprm/lm.py), cached in data/codeprm/feats (computed here when missing).
Loss per pair (vulnerable v, fixed f): a ranking loss on the paper's soft-min program safety,
softplus(-beta (S_f - S_v)), plus a weighted step BCE (steps the fix touched in v = risky, the
other steps of v and all steps of f = safe, a step bandit or CodeShield flags and the diff does
not speak for = risky at half weight). Trained on train repositories only; the layer and the
loss mix are chosen by dev pair ranking, the verdict thresholds (model alone, fused with the
analysers) by dev verdict pairs. Test repositories are not read. Seed 0.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch

from engines.codeprm.aggregation import PAPER_TAU, softmin_safety, softmin_torch
from engines.codeprm.lm import LMConfig, LMStepHead
from evals.codeprm.pair_data import build
from evals.codeprm.pairs import PAIRS_PATH, load_pairs
from evals.codeprm.pair_metrics import fuse, pair_metrics, best_threshold

SEED = 0


def _x(side, j: int) -> np.ndarray:
    return side.feats[:, j].reshape(len(side.spans), -1).astype(np.float32)


def train_head(data, j: int, lam: float, cfg: LMConfig, epochs: int = 40, beta: float = 20.0,
               lr: float = 1e-3, seed: int = SEED) -> tuple[LMStepHead, list[dict]]:
    """One head on layer index ``j``; ``lam`` weighs the step BCE against the pair loss."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    items = []
    for d in data:
        xv, xf = _x(d.vul, j), _x(d.fix, j)
        mv, mf = ~np.isnan(xv).any(1), ~np.isnan(xf).any(1)
        if not mv.any() or not mf.any():
            continue
        items.append(tuple(torch.from_numpy(a) for a in (xv[mv], d.vul.y[mv], d.vul.w[mv], xf[mf], d.fix.y[mf],
                                                          d.fix.w[mf])))
    allx = torch.cat([torch.cat([it[0], it[3]]) for it in items])
    head = LMStepHead(allx.shape[1] // 2, cfg.hidden)
    head.mu.copy_(allx.mean(0))
    head.sd.copy_(allx.std(0).clamp_min(1e-3))
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=1e-2)
    log = []
    for ep in range(epochs):
        head.train()
        rng.shuffle(items)
        tot = 0.0
        for a in range(0, len(items), 32):
            batch = items[a:a + 32]
            xs = torch.cat([torch.cat([b[0], b[3]]) for b in batch])
            logits = head(xs)
            ys = torch.cat([torch.cat([b[1], b[4]]) for b in batch])
            ws = torch.cat([torch.cat([b[2], b[5]]) for b in batch])
            step = torch.nn.functional.binary_cross_entropy_with_logits(logits, ys, weight=ws)
            safety = 1.0 - torch.sigmoid(logits)
            k = 0
            pl = []
            for b in batch:
                nv, nf = len(b[0]), len(b[3])
                sv = softmin_torch(safety[k:k + nv], PAPER_TAU)
                sf = softmin_torch(safety[k + nv:k + nv + nf], PAPER_TAU)
                pl.append(torch.nn.functional.softplus(-beta * (sf - sv)))
                k += nv + nf
            loss = torch.stack(pl).mean() + lam * step
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(batch)
        log.append({"epoch": ep + 1, "loss": round(tot / len(items), 5)})
    head.eval()
    return head, log


def program_safety(head: LMStepHead, side, j: int) -> tuple[float, np.ndarray]:
    """Soft-min safety of a whole function and its step risks (steps without features: risk 0)."""
    x = _x(side, j)
    ok = ~np.isnan(x).any(1)
    p = np.zeros(len(side.spans))
    if ok.any():
        with torch.inference_mode():
            p[ok] = torch.sigmoid(head(torch.from_numpy(x[ok]))).double().numpy()
    return softmin_safety(1.0 - p), p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default=str(PAIRS_PATH))
    ap.add_argument("--out", default="assets/codeprm")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cached-only", action="store_true", help="skip pairs whose LM features are not cached yet")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    np.random.seed(SEED)
    t0 = time.time()
    cfg = LMConfig()
    pairs = load_pairs(Path(args.pairs), ("train", "dev"))
    data = build(pairs, cfg, compute=not args.cached_only)
    tr = [d for d in data if d.pair.split == "train"]
    dev = [d for d in data if d.pair.split == "dev"]
    print(f"pairs: {len(tr)} train / {len(dev)} dev ({len(pairs)} read) in {time.time() - t0:.0f}s", flush=True)
    selection = []
    best = None
    for layer in cfg.layers:
        j = cfg.layers.index(layer)
        for lam in (0.5, 2.0):
            head, log = train_head(tr, j, lam, cfg, epochs=args.epochs)
            sv = np.array([program_safety(head, d.vul, j)[0] for d in dev])
            sf = np.array([program_safety(head, d.fix, j)[0] for d in dev])
            m = pair_metrics(1 - sv, 1 - sf)
            row = {"layer": layer, "lambda_step": lam, "dev_pair_ranking": m["pair_ranking"],
                   "final_loss": log[-1]["loss"], "minutes": round((time.time() - t0) / 60, 2)}
            print(row, flush=True)
            selection.append(row)
            if best is None or m["pair_ranking"] > best[0]:
                best = (m["pair_ranking"], layer, lam, head, log)
    _, layer, lam, head, log = best
    cfg = LMConfig(**{**cfg.to_dict(), "layer": layer})
    j = cfg.layers.index(layer)
    # thresholds on dev: model alone, and fused with the analysers (noisy-OR, analyser_prob q)
    pv = [program_safety(head, d.vul, j)[1] for d in dev]
    pf = [program_safety(head, d.fix, j)[1] for d in dev]
    rv = np.array([1 - softmin_safety(1 - p) for p in pv])
    rf = np.array([1 - softmin_safety(1 - p) for p in pf])
    t_model, vp_model = best_threshold(rv, rf)
    fused_rows = []
    for srcs in (("bandit", "codeshield"), ("bandit", "codeshield", "hand")):
        for q in (0.5, 0.7, 0.9, 0.97):
            fv = np.array([1 - softmin_safety(1 - fuse(p, d.vul.flags, srcs, q)) for p, d in zip(pv, dev)])
            ff = np.array([1 - softmin_safety(1 - fuse(p, d.fix.flags, srcs, q)) for p, d in zip(pf, dev)])
            t, vp = best_threshold(fv, ff)
            m = pair_metrics(fv, ff, t)
            fused_rows.append({"sources": list(srcs), "analyser_prob": q, "threshold": t, **m})
    fused_best = max(fused_rows, key=lambda r: (r["verdict_pairs"], r["pair_ranking"]))
    # do the hand rules + taint labeller add to bandit + CodeShield on dev? (analysers alone)
    analysers_dev = {}
    for srcs in (("bandit",), ("codeshield",), ("bandit", "codeshield"), ("bandit", "codeshield", "hand")):
        av = np.array([1 - softmin_safety(1 - fuse(np.zeros(len(d.vul.spans)), d.vul.flags, srcs, 1.0)) for d in dev])
        af = np.array([1 - softmin_safety(1 - fuse(np.zeros(len(d.fix.spans)), d.fix.flags, srcs, 1.0)) for d in dev])
        analysers_dev["+".join(srcs)] = pair_metrics(av, af, 0.5)
    out = Path(args.out)
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in head.state_dict().items()}, str(out / "lm_head.safetensors"))
    meta = {
        "config": cfg.to_dict(), "tau": PAPER_TAU,
        "model": {"threshold": t_model, **pair_metrics(rv, rf, t_model)},
        "fused": fused_best, "fused_grid": fused_rows, "selection": selection, "analysers_dev": analysers_dev,
        "training": {"seed": SEED, "lambda_step": lam, "epochs": args.epochs, "log": log[-5:],
                     "n_train_pairs": len(tr), "n_dev_pairs": len(dev),
                     "n_train_repos": len({d.pair.repo for d in tr}), "n_dev_repos": len({d.pair.repo for d in dev}),
                     "minutes": round((time.time() - t0) / 60, 2)},
    }
    (out / "lm_head.json").write_text(json.dumps(meta, indent=2))
    print(json.dumps({k: meta[k] for k in ("model", "fused", "analysers_dev")}, indent=1), flush=True)


if __name__ == "__main__":
    main()
