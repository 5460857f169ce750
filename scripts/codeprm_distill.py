"""Distil the LM-backed step scorer into the fast path (the small causal CNN of model.py).

    nice -n 10 python scripts/codeprm_distill.py       # -> assets/codeprm/{model.safetensors,model.onnx,vocab.json,config.json,calibration.json}

Targets: on the train repositories' fix-pair functions, the LM head's step risks (soft labels)
on every step it scored; on analyser-labelled host code (chunks of the standard library and of
the installed packages whose package hashes to the train split), bandit + CodeShield flags as
hard labels. The verdict threshold is chosen on the dev pairs (most verdict pairs). Seed 0, CPU.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch

from engines.codeprm.aggregation import softmin_safety
from engines.codeprm.analysers import run_analysers
from engines.codeprm.config import PRMConfig
from engines.codeprm.lm import LMConfig, LMScorer, StepFeatures
from engines.codeprm.model import StepScorer, export_onnx, featurize
from engines.codeprm.steps import split_steps
from engines.codeprm.tokens import Lexer, build_vocab
from evals.codeprm.dataset import chunks, package_files, split_of
from evals.codeprm.pair_data import build
from evals.codeprm.pair_metrics import best_threshold, fuse, pair_metrics
from evals.codeprm.pairs import PAIRS_PATH, load_pairs

SEED = 0


def host_chunks(n: int, rng: random.Random) -> tuple[list[str], list]:
    """Chunks of train-split host packages (2 per file, 10 files per package) with their
    analyser findings: every chunk an analyser flags, and unflagged ones up to ``n`` in all."""
    out = []
    for pkg, files in package_files().items():
        if split_of(pkg) != "train":
            continue
        for f in files[:10]:
            try:
                out += chunks(f.read_text(encoding="utf-8", errors="replace"), rng, 2)
            except OSError:
                continue
    found = run_analysers(out)
    flagged = [i for i, f in enumerate(found) if f]
    clean = [i for i, f in enumerate(found) if not f]
    rng.shuffle(clean)
    keep = sorted(flagged + clean[:max(0, n - len(flagged))])
    return [out[i] for i in keep], [found[i] for i in keep]


def collate(batch, cfg: PRMConfig):
    T = max(len(f.ids) for f, _, _ in batch)
    B = len(batch)
    ids = np.zeros((B, T), dtype=np.int64)
    parts = np.zeros((B, T, 3), dtype=np.int64)
    L = cfg.max_step_tokens
    gidx, last, ys, ms = [], [], [], []
    for b, (f, y, m) in enumerate(batch):
        n = len(f.ids)
        ids[b, :n] = f.ids
        parts[b, :n] = f.parts
        gidx.append(np.where(f.gidx >= n, B * T, f.gidx + b * T))
        last.append(f.last + b * T)
        ys.append(y)
        ms.append(m)
    return (torch.from_numpy(ids), torch.from_numpy(parts), torch.from_numpy(np.concatenate(gidx)),
            torch.from_numpy(np.concatenate(last)), torch.from_numpy(np.concatenate(ys)),
            torch.from_numpy(np.concatenate(ms)))


def risks(model: StepScorer, feats, cfg: PRMConfig) -> list[np.ndarray]:
    out = []
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(feats), 32):
            batch = [(f, np.zeros(len(f.spans), np.float32), np.zeros(len(f.spans), np.float32)) for f in feats[i:i + 32]]
            ids, parts, gidx, last, _, _ = collate(batch, cfg)
            p = torch.sigmoid(model(ids, parts, gidx, last)[0]).double().numpy()
            k = 0
            for f, _, _ in batch:
                out.append(p[k:k + len(f.spans)])
                k += len(f.spans)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default=str(PAIRS_PATH))
    ap.add_argument("--out", default="assets/codeprm")
    ap.add_argument("--host-chunks", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    rng = random.Random(SEED)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    out = Path(args.out)
    teacher = LMScorer.load(out)
    lmcfg: LMConfig = teacher.cfg
    cfg = PRMConfig(max_step_lines=lmcfg.max_step_lines, tau=0.1)
    pairs = load_pairs(Path(args.pairs), ("train", "dev"))
    data = build(pairs, lmcfg, compute=False)
    tr = [d for d in data if d.pair.split == "train"]
    dev = [d for d in data if d.pair.split == "dev"]
    codes, targets, masks = [], [], []
    for d in tr:
        for side in (d.vul, d.fix):
            j = lmcfg.layers.index(lmcfg.layer)
            ok = ~np.isnan(side.feats[:, j]).reshape(len(side.spans), -1).any(1)
            p = teacher.risks_from_features(StepFeatures(side.spans, side.feats))
            codes.append(side.code)
            targets.append(p.astype(np.float32))
            masks.append(ok.astype(np.float32))
    n_pair_fns = len(codes)
    hosts, found = host_chunks(args.host_chunks, rng)
    for code, fs in zip(hosts, found):
        spans = split_steps(code, cfg.max_step_lines)
        y = np.zeros(len(spans), np.float32)
        for f in fs:
            for k, s in enumerate(spans):
                if s.start <= f.line <= s.end:
                    y[k] = 1.0
        codes.append(code)
        targets.append(y)
        masks.append(np.full(len(spans), 0.5, np.float32))
    print(f"distil data: {n_pair_fns} fix-pair functions (teacher), {len(hosts)} host chunks (analysers, "
          f"{sum(int(t.max() > 0) for t in targets[n_pair_fns:])} flagged) in {time.time() - t0:.0f}s", flush=True)
    counter = Lexer(cfg.vocab_size)
    counter.counts = {}
    for c in codes:
        counter.lex_parts(c)
    vocab = build_vocab(counter.counts, cfg.vocab_size, 3)
    lexer = Lexer(cfg.vocab_size, vocab)
    items = []
    for c, y, m in zip(codes, targets, masks):
        f = featurize(c, cfg, lexer)
        if len(f.spans) == len(y):
            items.append((f, y, m))
    model = StepScorer(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    order = sorted(range(len(items)), key=lambda i: len(items[i][0].ids))
    batches = [order[i:i + 32] for i in range(0, len(order), 32)]
    log = []
    for ep in range(args.epochs):
        model.train()
        rng.shuffle(batches)
        tot = 0.0
        for bi in batches:
            ids, parts, gidx, last, y, m = collate([items[i] for i in bi], cfg)
            logits, _ = model(ids, parts, gidx, last)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none") * m).sum() / m.sum().clamp_min(1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot += loss.item() * len(bi)
        log.append({"epoch": ep + 1, "loss": round(tot / len(items), 5), "minutes": round((time.time() - t0) / 60, 2)})
        print(log[-1], flush=True)
    # agreement with the teacher and the dev threshold
    dv = [featurize(d.vul.code, cfg, lexer) for d in dev]
    df = [featurize(d.fix.code, cfg, lexer) for d in dev]
    rv = np.array([1 - softmin_safety(1 - p) for p in risks(model, dv, cfg)])
    rf = np.array([1 - softmin_safety(1 - p) for p in risks(model, df, cfg)])
    thr, _ = best_threshold(rv, rf)
    dev_m = pair_metrics(rv, rf, thr)
    # fused with the analysers: the sources and analyser_prob the LM head chose on dev
    lm_fused = json.loads((out / "lm_head.json").read_text())["fused"]
    srcs, q = lm_fused["sources"], lm_fused["analyser_prob"]
    pv, pf = risks(model, dv, cfg), risks(model, df, cfg)
    fv = np.array([1 - softmin_safety(1 - fuse(p, d.vul.flags, srcs, q)) for p, d in zip(pv, dev)])
    ff = np.array([1 - softmin_safety(1 - fuse(p, d.fix.flags, srcs, q)) for p, d in zip(pf, dev)])
    thr_f, _ = best_threshold(fv, ff)
    dev_f = pair_metrics(fv, ff, thr_f)
    from safetensors.torch import save_file

    cfg = PRMConfig(**{**cfg.to_dict(), "threshold": thr})
    save_file(model.state_dict(), str(out / "model.safetensors"))
    export_onnx(model, cfg, out / "model.onnx")
    (out / "vocab.json").write_text(json.dumps(vocab))
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
    cal = {"tau": 0.1, "model": {"threshold": thr, **dev_m},
           "fused": {"sources": srcs, "analyser_prob": q, "threshold": thr_f, **dev_f},
           "training": {"seed": SEED, "teacher": "lm_head", "n_pair_functions": n_pair_fns, "n_host_chunks": len(hosts),
                        "epochs": log, "minutes": round((time.time() - t0) / 60, 2)}}
    (out / "calibration.json").write_text(json.dumps(cal, indent=2))
    print(json.dumps({k: cal[k] for k in ("model", "fused")}, indent=1), flush=True)


if __name__ == "__main__":
    main()
