"""Train the step scorer on the synthetic template corpus (a regression baseline), export torch + ONNX.

    nice -n 10 .venv/bin/python scripts/codeprm_train.py --out data/codeprm/synthetic_model   # step-supervised
    nice -n 10 .venv/bin/python scripts/codeprm_train.py --supervision file --out evals/codeprm/baseline

The shipped fast path is not this model: it is distilled from the LM-backed scorer trained on
real fix pairs (scripts/codeprm_train_lm.py, then scripts/codeprm_distill.py).

Reads data/codeprm/{train,val}.jsonl (evals/codeprm/dataset.py). Seed 0, 1 thread (2 threads on a shared 2-core box ran 6x slower).
``--supervision step`` (the PRM): BCE on every step's label (a step is insecure when a labelled
line falls in it). ``--supervision file`` (the program-level baseline): the same encoder sees the
whole file as one step and learns only the file label. The threshold is the one that maximises
balanced accuracy of the file verdict on the validation split (evals/codeprm/calibration.py, run
at the end, for the model alone and fused with the analysers); the test split is never read.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch

from engines.codeprm.config import PRMConfig
from engines.codeprm.engine import aggregate
from engines.codeprm.model import StepScorer, export_onnx, featurize
from engines.codeprm.steps import Span
from engines.codeprm.tokens import Lexer, build_vocab
from evals.codeprm.calibration import calibrate as calibrate_assets

SEED = 0


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in open(path)]


def prepare(items: list[dict], cfg: PRMConfig, lexer: Lexer, whole_file: bool) -> list[tuple]:
    out = []
    for it in items:
        code = it["code"]
        spans = [Span(1, max(1, len(code.splitlines())))] if whole_file else None
        f = featurize(code, cfg, lexer, spans)
        bad = {ln for ln, _cwe, _rule in it["findings"]}
        y = np.array([any(s.start <= b <= s.end for b in bad) for s in f.spans], dtype=np.float32)
        out.append((f, y, float(bool(bad))))
    return out


def collate(batch: list[tuple]):
    T = max(len(f.ids) for f, _, _ in batch)
    B = len(batch)
    ids = np.zeros((B, T), dtype=np.int64)
    parts = np.zeros((B, T, 3), dtype=np.int64)
    L = max(f.gidx.shape[1] for f, _, _ in batch)
    gidx, last, ys = [], [], []
    for b, (f, y, _) in enumerate(batch):
        n = len(f.ids)
        ids[b, :n] = f.ids
        parts[b, :n] = f.parts
        g = np.where(f.gidx >= n, B * T, f.gidx + b * T)
        if g.shape[1] < L:
            g = np.pad(g, ((0, 0), (0, L - g.shape[1])), constant_values=B * T)
        gidx.append(g)
        last.append(f.last + b * T)
        ys.append(y)
    return (torch.from_numpy(ids), torch.from_numpy(parts), torch.from_numpy(np.concatenate(gidx)), torch.from_numpy(np.concatenate(last)),
            torch.from_numpy(np.concatenate(ys)))


def predict(model: StepScorer, data: list[tuple], bs: int = 32) -> list[np.ndarray]:
    model.eval()
    out = []
    with torch.inference_mode():
        for i in range(0, len(data), bs):
            batch = data[i:i + bs]
            ids, parts, gidx, last, _ = collate(batch)
            logits, _ = model(ids, parts, gidx, last)
            p = torch.sigmoid(logits).numpy()
            k = 0
            for f, _, _ in batch:
                out.append(p[k:k + len(f.spans)])
                k += len(f.spans)
    return out


def auroc(scores, labels) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores))


def calibrate(risks: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Threshold maximising balanced accuracy on validation, and that accuracy."""
    best = (0.5, -1.0)
    for t in np.unique(np.concatenate([risks, [0.5]])):
        pred = risks >= t
        tpr = pred[labels == 1].mean() if (labels == 1).any() else 0.0
        tnr = (~pred[labels == 0]).mean() if (labels == 0).any() else 0.0
        bal = 0.5 * (tpr + tnr)
        if bal > best[1] + 1e-12:
            best = (float(t), float(bal))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="data/codeprm")
    ap.add_argument("--out", default="data/codeprm/synthetic_model")
    ap.add_argument("--supervision", choices=["step", "file"], default="step")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, default=12.0)
    ap.add_argument("--min-count", type=int, default=5, help="rarer hashed tokens map to UNK")
    ap.add_argument("--token-dropout", type=float, default=0.05, help="train-time rate of tokens replaced by UNK")
    args = ap.parse_args()
    torch.manual_seed(SEED)
    random.seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(args.threads)
    whole = args.supervision == "file"
    cfg = PRMConfig(max_step_tokens=2048) if whole else PRMConfig()
    t0 = time.time()
    train_items = load(Path(args.data) / "train.jsonl")
    # vocabulary: token strings seen >= min_count times in train; the rest become UNK, so an
    # unseen name at test time meets a trained UNK embedding instead of a random hash bucket
    counter = Lexer(cfg.vocab_size)
    counter.counts = {}
    for it in train_items:
        counter.lex_parts(it["code"])
    vocab = build_vocab(counter.counts, cfg.vocab_size, args.min_count)
    lexer = Lexer(cfg.vocab_size, vocab)
    train = prepare(train_items, cfg, lexer, whole)
    val_items = load(Path(args.data) / "val.jsonl")
    val = prepare(val_items, cfg, lexer, whole)
    pos = float(np.mean(np.concatenate([y for _, y, _ in train])))
    print(f"vocabulary: {len(vocab)} token strings seen >= {args.min_count} times (of {len(counter.counts)})",
          flush=True)
    print(f"prepared {len(train)} train / {len(val)} val in {time.time() - t0:.0f}s; positive steps {pos:.3%}",
          flush=True)
    model = StepScorer(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps_total = args.epochs * ((len(train) + args.batch - 1) // args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps_total, pct_start=0.1)
    pos_weight = torch.tensor(min(10.0, (1 - pos) / max(pos, 1e-6)) ** 0.5)
    lossf = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    rng = random.Random(SEED)
    order = sorted(range(len(train)), key=lambda i: len(train[i][0].ids))
    batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]  # length-bucketed
    log = []
    done = 0
    for ep in range(args.epochs):
        model.train()
        rng.shuffle(batches)
        tot = 0.0
        for bi in batches:
            ids, parts, gidx, last, y = collate([train[i] for i in bi])
            drop = (torch.rand(ids.shape) < args.token_dropout) & (ids >= 3)
            ids = torch.where(drop, torch.ones_like(ids), ids)
            logits, _ = model(ids, parts, gidx, last)
            loss = lossf(logits, y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if done < steps_total - 1:
                sched.step()
            done += 1
            tot += loss.item() * len(bi)
        vp = predict(model, val)
        vr = np.array([aggregate(p, cfg)[0] for p in vp])
        vl = np.array([lab for _, _, lab in val])
        va = auroc(vr, vl)
        log.append({"epoch": ep + 1, "train_loss": tot / len(train), "val_file_auroc": va,
                    "minutes": (time.time() - t0) / 60})
        print(log[-1], flush=True)
        if (time.time() - t0) / 60 > args.max_minutes:
            print("time budget reached; stopping", flush=True)
            break
    vp = predict(model, val)
    vl = np.array([lab for _, _, lab in val])
    # risk-sensitive aggregation: pick tau on validation from a short list, then the threshold
    best = None
    for agg, tau, k in ([("softmin", t, 2) for t in (0.02, 0.05, 0.1, 0.2)] + [("topk", 0.05, k) for k in (1, 2, 3)]):
        c = PRMConfig(**{**cfg.to_dict(), "aggregation": agg, "tau": tau, "top_k": k})
        vr = np.array([aggregate(p, c)[0] for p in vp])
        a = auroc(vr, vl)
        if best is None or a > best[0] + 1e-9:
            best = (a, agg, tau, k, vr)
    a, agg, tau, k, vr = best
    thr, bal = calibrate(vr, vl)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from safetensors.torch import save_file

    stem = "model" if not whole else "program_level"
    if not whole:  # the program-level baseline shares the step model's vocabulary (same corpus)
        (out / "vocab.json").write_text(json.dumps(vocab))
    save_file({n: t.contiguous() for n, t in model.state_dict().items()}, str(out / f"{stem}.safetensors"))
    cal = {"aggregation": agg, "tau": tau, "top_k": k, "threshold": thr, "val_balanced_accuracy": bal,
           "val_file_auroc": a, "n_val": len(val), "supervision": args.supervision, "seed": SEED,
           "train_minutes": round((time.time() - t0) / 60, 2), "epochs": log}
    if whole:
        (out / "program_level.json").write_text(json.dumps({"config": cfg.to_dict(), **cal}, indent=2))
    else:
        (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
        export_onnx(model, cfg, out / "model.onnx")
        training = {k2: v for k2, v in cal.items() if k2 in ("epochs", "train_minutes", "seed", "supervision")}
        cal = {**cal, **calibrate_assets(out, Path(args.data) / "val.jsonl", training)}
    print(json.dumps({k2: v for k2, v in cal.items() if k2 != "epochs"}), f"total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
