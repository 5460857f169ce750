"""An experimental step model, not the shipped one: rule-pack labels of real application code, each
token's user-input mark as a fourth input, then its place in the fusion fixed on dev.

    nice -n 19 .venv/bin/python scripts/codeprm_train_marks.py          # -> data/codeprm/marks_model/
    nice -n 19 .venv/bin/python scripts/codeprm_train_marks.py --calibrate-only   # the dev choices alone

The shipped model in ``assets/codeprm`` comes from ``scripts/codeprm_train.py`` (``make
train-codeprm``). A model from this script replaces it only when every figure it touches (the
labelled app spots whole and cut, false alarms, clean flag rates, CyberSecEval, the families
benchmark) is at least as good on the same rows: copy ``--out`` into ``assets/codeprm`` then.

Inputs (``make data-codeprm``): ``data/codeprm/app_files.jsonl`` with its rule-pack labels
(``python -m evals.codeprm.app_labels --analysers taint settings``), ``data/codeprm/app_corpus.jsonl``
and the train fix pairs (``python -m evals.codeprm.fix_pairs_manifest``).

Label sources (train repositories only; ``evals/codeprm/step_items.py``):
(a) the taint and framework-settings rule packs' findings on the train application files (the
    engine's own analysers: semgrep taint mode, helper-function twins), each file whole and cut at
    and inside each labelled line, beside cuts inside other lines (hard negatives: lines that call
    a sink with no finding);
(b) confident bandit / CodeShield findings of the train application functions (and unflagged ones);
(c) the train fix pairs of the CWEs the rule packs cover: changed lines risky, fixed versions safe.
Step BCE (positive weight sqrt(negatives / positives), at most sqrt 20), AdamW, seed 0, CPU; each
text is read in windows of at most ``--window`` tokens (a prefix: its last window). The epoch with
the best dev AUROC of the step being written (dev files cut inside labelled vs other lines) is kept.

Dev choices (``evals/codeprm/fusion_dev.py``, dev repositories only, test never read): the model's
flag threshold in prefixes and the CWE families where it may flag there, its flag threshold and
families in code that parses, and its weights in the order of steps.
"""
from __future__ import annotations

import argparse
import json
import pickle
import random
import time
from pathlib import Path

import numpy as np
import torch

from engines.codeprm.config import PRMConfig
from engines.codeprm.features import Features, featurize
from engines.codeprm.model import StepScorer, export_onnx
from engines.codeprm.steps import split_steps
from engines.codeprm.tokens import Lexer, build_vocab
from evals.codeprm import families as F
from evals.codeprm import step_items as S
from evals.codeprm.families import model_inputs

SEED = 0
FIX_CWES = ("CWE-22", "CWE-78", "CWE-79", "CWE-89", "CWE-94", "CWE-95", "CWE-918", "CWE-601", "CWE-611", "CWE-502",
            "CWE-1336", "CWE-113", "CWE-643", "CWE-90", "CWE-74", "CWE-77", "CWE-1236", "CWE-347", "CWE-614",
            "CWE-1004", "CWE-942", "CWE-489", "CWE-209")
CACHE = F.DATA / "train_cache.pkl"


def step_labels(text: str, lines: set[int], cfg: PRMConfig) -> np.ndarray:
    spans = split_steps(text, cfg.max_step_lines)
    return np.array([float(any(s.start <= ln <= s.end for ln in lines)) for s in spans], np.float32)


def windows(f: Features, y: np.ndarray, size: int, last_only: bool) -> list[tuple[Features, np.ndarray]]:
    """``f`` cut into windows of whole steps of at most ``size`` tokens (a step longer than that
    alone), each re-indexed; ``last_only``: only the window that ends the text."""
    T = len(f.ids)
    if T <= size:
        return [(f, y)]
    lo = np.array([int(g[0]) for g in f.gidx])
    hi = f.last + 1
    out, s = [], len(f.spans)
    groups, end = [], s
    while end > 0:  # from the end, so the last window always ends the text
        a = end - 1
        while a > 0 and hi[end - 1] - lo[a - 1] <= size:
            a -= 1
        groups.append((a, end))
        end = a
        if last_only:
            break
    for a, b in groups:
        t0, t1 = int(lo[a]), int(hi[b - 1])
        if t1 - t0 > size:
            t0 = t1 - size
        g = f.gidx[a:b] - t0
        n = t1 - t0
        g = np.where((f.gidx[a:b] >= T) | (g < 0) | (g >= n), n, g)
        w = Features(f.ids[t0:t1], f.parts[t0:t1], f.lines[t0:t1], f.spans[a:b], g, f.last[a:b] - t0,
                     None if f.marks is None else f.marks[t0:t1])
        out.append((w, y[a:b]))
    return out


def build_items(args, rng: random.Random) -> tuple[list[S.Item], list[S.Item]]:
    """Train items (three label sources) and dev items (dev files cut inside lines)."""
    train_files = S.labelled_files(("train",))
    items = []
    for f in train_files:
        items += S.file_items(f, rng, n_neg=args.negatives)
    app_rows = F.load_corpus(F.APP_CORPUS, ("train",))
    items += S.analyser_items(app_rows, rng, args.clean)
    pairs = []
    if (F.DATA / "fix_pairs.jsonl").is_file():
        from evals.codeprm.pairs import load_pairs

        pairs = [p for p in load_pairs(splits=("train",)) if p.cwe in FIX_CWES]
        items += S.pair_items(pairs, rng)
    dev = []
    for f in S.labelled_files(("dev",)):
        dev += [it for it in S.file_items(f, rng, n_neg=args.negatives, mids=(0.5,)) if it.kind != "whole"
                and it.kind != "cut_end"]
    items = [S.window(it, args.keep_lines) for it in items]
    dev = [S.window(it, args.keep_lines) for it in dev]
    counts = {}
    for it in items:
        counts[it.kind] = counts.get(it.kind, 0) + 1
    print(f"train: {len(train_files)} labelled application files ({sum(bool(f['lines']) for f in train_files)} "
          f"with findings), {len(app_rows)} application functions, {len(pairs)} fix pairs -> {counts}; "
          f"dev cuts: {len(dev)}", flush=True)
    return items, dev


def featurize_items(items: list[S.Item], cfg: PRMConfig, lexer: Lexer, size: int, log_every: int = 2000,
                    keep_negative: float = 1.0, rng: random.Random | None = None):
    """(features, step labels, weight) windows of the items; a window of a whole text with no
    risky step is kept with probability ``keep_negative`` (whole files are long and mostly safe)."""
    out = []
    t0 = time.time()
    for k, it in enumerate(items):
        f = featurize(it.text, cfg, lexer, partial=it.partial)
        y = step_labels(it.text, it.labels, cfg)
        if len(f.spans) != len(y) or not len(y):
            continue
        for w, yy in windows(f, y, size, last_only=it.partial):
            if not it.partial and not yy.any() and rng is not None and rng.random() > keep_negative:
                continue
            out.append((w, yy, it.weight))
        if log_every and (k + 1) % log_every == 0:
            print(f"  featurized {k + 1}/{len(items)} ({time.time() - t0:.0f}s)", flush=True)
    return out


def written_auroc(model: StepScorer, cfg: PRMConfig, feats: list) -> float:
    """AUROC of the step being written (the last) between dev cuts inside labelled lines and
    cuts inside other lines."""
    from sklearn.metrics import roc_auc_score

    model.eval()
    scores, ys = [], []
    with torch.inference_mode():
        for a in range(0, len(feats), 32):
            batch = feats[a:a + 32]
            x, y, _ = model_inputs(batch, cfg)
            p = torch.sigmoid(model(*x)[0]).numpy()
            k = 0
            for f, yy, _ in batch:
                k += len(yy)
                scores.append(p[k - 1])
                ys.append(yy[-1])
    return float(roc_auc_score(ys, scores)) if 0 < sum(ys) < len(ys) else float("nan")


def train(args) -> None:
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    rng = random.Random(SEED)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    out = Path(args.out)
    cfg = PRMConfig(user_input=True, wide_sinks=True)
    if CACHE.is_file() and not args.rebuild:
        vocab, data, dev_feats = pickle.loads(CACHE.read_bytes())
        print(f"read {len(data)} training windows from {CACHE}", flush=True)
    else:
        items, dev_items = build_items(args, rng)
        counter = Lexer(cfg.vocab_size)
        counter.counts = {}
        seen = set()
        for it in items:
            if it.source not in seen:
                seen.add(it.source)
                counter.lex_parts(it.text)
        vocab = build_vocab(counter.counts, cfg.vocab_size, 3)
        lexer = Lexer(cfg.vocab_size, vocab)
        data = featurize_items(items, cfg, lexer, args.window, keep_negative=args.keep_negative, rng=rng)
        dev_feats = featurize_items(dev_items, cfg, lexer, args.window)
        CACHE.write_bytes(pickle.dumps((vocab, data, dev_feats)))
        print(f"{len(data)} training windows, {len(dev_feats)} dev cuts, {time.time() - t0:.0f}s", flush=True)
    pos = float(sum(y.sum() for _, y, _ in data))
    neg = float(sum(len(y) for _, y, _ in data)) - pos
    pos_weight = torch.tensor(min(20.0, neg / max(pos, 1.0)) ** 0.5)
    print(f"{int(pos)} risky steps of {int(pos + neg)}, pos_weight {pos_weight:.2f}", flush=True)
    model = StepScorer(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    order = sorted(range(len(data)), key=lambda i: len(data[i][0].ids))
    batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]
    log, best = [], None
    for ep in range(args.epochs):
        model.train()
        rng.shuffle(batches)
        tot = 0.0
        for bi in batches:
            x, y, w = model_inputs([data[i] for i in bi], cfg)
            logits, _ = model(*x)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(
                logits, y, pos_weight=pos_weight, reduction="none") * w).sum() / w.sum().clamp_min(1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot += loss.item() * len(bi)
        auc = written_auroc(model, cfg, dev_feats)
        log.append({"epoch": ep + 1, "loss": round(tot / len(data), 5), "dev_written_step_auroc": round(auc, 4),
                    "minutes": round((time.time() - t0) / 60, 2)})
        print(log[-1], flush=True)
        if best is None or auc > best[0]:
            best = (auc, ep + 1, {k: v.clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[2])
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    save_file(model.state_dict(), str(out / "model.safetensors"))
    export_onnx(model, cfg, out / "model.onnx")
    (out / "vocab.json").write_text(json.dumps(vocab))
    base = {k: v for k, v in cfg.to_dict().items()
            if k not in ("model_weight", "prefix_model_weight", "model_flag_threshold", "model_flag_cwes",
                         "prefix_flag_threshold", "prefix_flag_cwes", "solo_threshold")}
    (out / "config.json").write_text(json.dumps(base, indent=2))
    training = {"seed": SEED, "windows": len(data), "risky_steps": int(pos), "steps": int(pos + neg),
                "epoch": best[1], "epochs": log, "minutes": round((time.time() - t0) / 60, 2)}
    (out / "training.json").write_text(json.dumps(training, indent=2))
    print(f"trained in {training['minutes']} min; calibrate with --calibrate-only", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/codeprm/marks_model")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--window", type=int, default=1024, help="tokens per training window")
    ap.add_argument("--negatives", type=int, default=2, help="cuts inside unlabelled lines per file")
    ap.add_argument("--keep-negative", type=float, default=0.3,
                    help="share of the windows of whole texts with no risky step that are kept")
    ap.add_argument("--keep-lines", type=int, default=200, help="lines a training prefix keeps before its cut")
    ap.add_argument("--clean", type=int, default=3000, help="unflagged train application functions")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the feature cache")
    ap.add_argument("--mirrors", default="../mirrors", help="snapshots of the labelled dev repositories")
    ap.add_argument("--calibrate-only", action="store_true", help="keep the step model in --out; redo the dev choices")
    args = ap.parse_args()
    if not args.calibrate_only:
        train(args)
    from evals.codeprm.fusion_dev import calibrate

    calibrate(Path(args.out), args.mirrors, threads=args.threads)


if __name__ == "__main__":
    main()
