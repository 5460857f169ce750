"""Train the shipped step model on the paper's two label sources, then fix its place in the fusion on dev.

    nice -n 10 .venv/bin/python scripts/codeprm_train.py   # -> assets/codeprm/{model.safetensors,model.onnx,vocab.json,config.json,calibration.json}

Label sources (train split only):
(a) analyser step labels on real code: functions of the train packages (``evals.codeprm.corpus``)
    and of the train fix-pair repositories' other code, in full and as prefixes cut
    mid-function; a step is risky when it holds a confident bandit or CodeShield finding;
(b) the train fix pairs' diff labels: the vulnerable version's steps that the fix changed are
    risky, the fixed version's steps safe (``evals.codeprm.step_labels``).
The epoch is picked on dev (prefix line AUROC + dev fix-pair ranking). Then, on dev alone:
the model-alone threshold flags at most 5 % of clean functions (dev packages + dev fixed
versions); the fused scanner's model weights (in code that parses, and in code that does not)
and threshold are the ones with the largest summed gain over the best single analyser among
those that flag at most 5 % of each clean family (package functions, fixed versions, prefixes of
unflagged functions) and fall below that analyser on no dev family
(weight 0 is the analysers themselves, so one always qualifies). Seed 0, CPU.
"""
from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from engines.codeprm.config import PRMConfig
from engines.codeprm.model import StepScorer, export_onnx, featurize
from engines.codeprm.steps import split_steps
from engines.codeprm.tokens import Lexer, build_vocab
from evals.codeprm import families as F
from evals.codeprm.pairs import load_pairs
from evals.codeprm.step_labels import pair_lines

SEED = 0
BUDGET = 0.05


def step_labels(text: str, lines: set[int], cfg: PRMConfig) -> np.ndarray:
    spans = split_steps(text, cfg.max_step_lines)
    return np.array([float(any(s.start <= ln <= s.end for ln in lines)) for s in spans], np.float32)


def training_texts(cfg: PRMConfig, rng: random.Random, n_clean: int, log=print) -> list[tuple[str, np.ndarray, float]]:
    """(code, step labels, weight) of both label sources on the train split."""
    rows = F.load_corpus(F.CORPUS, ("train",)) + F.load_corpus(F.REPO_CORPUS, ("train",))
    flagged = [r for r in rows if F.confident_lines(r)]
    clean = [r for r in rows if not F.confident_lines(r)]
    rng.shuffle(clean)
    out = []
    for r in flagged + clean[:n_clean]:
        lab = F.confident_lines(r)
        out.append((r["code"], lab))
        for _ in range(2 if lab else 1):
            pre = F.cut_prefix(r["code"], rng)
            if pre is not None:
                n = len(pre.splitlines())
                out.append((pre, {ln for ln in lab if ln < n}))
    items = [(t, step_labels(t, lab, cfg), 1.0) for t, lab in out]
    n_a = len(items)
    pairs = load_pairs(splits=("train",))
    for p in pairs:  # a pair's two versions sit next to each other (the ranking pass reads them so)
        removed, _added, near = pair_lines(p.before, p.after, p.vul_lines, p.fix_lines)
        items.append((p.before, step_labels(p.before, removed | near, cfg), 1.0))
        items.append((p.after, np.zeros(len(split_steps(p.after, cfg.max_step_lines)), np.float32), 1.0))
    log(f"train: {n_a} analyser-labelled texts ({len(flagged)} flagged functions of {len(rows)}), "
        f"{2 * len(pairs)} fix-pair versions")
    return items, n_a


def collate(batch, cfg: PRMConfig):
    T = max(len(f.ids) for f, _, _ in batch)
    B = len(batch)
    ids = np.zeros((B, T), dtype=np.int64)
    parts = np.zeros((B, T, 3), dtype=np.int64)
    gidx, last, ys, ws = [], [], [], []
    for b, (f, y, w) in enumerate(batch):
        n = len(f.ids)
        ids[b, :n] = f.ids
        parts[b, :n] = f.parts
        gidx.append(np.where(f.gidx >= n, B * T, f.gidx + b * T))
        last.append(f.last + b * T)
        ys.append(y)
        ws.append(np.full(len(y), w, np.float32))
    return (torch.from_numpy(ids), torch.from_numpy(parts), torch.from_numpy(np.concatenate(gidx)),
            torch.from_numpy(np.concatenate(last)), torch.from_numpy(np.concatenate(ys)),
            torch.from_numpy(np.concatenate(ws)))


def rank_pass(model: StepScorer, cfg: PRMConfig, pairs: list, opt, rng: random.Random, weight: float) -> None:
    """One pass of the paper's pairwise objective over the train fix pairs: the vulnerable
    version's program risk (soft minimum of step safety, T = 0.1) above its fix's, by a logistic
    loss on the difference."""
    from engines.codeprm.aggregation import softmin_torch

    model.train()
    order = list(range(len(pairs)))
    rng.shuffle(order)
    for a in range(0, len(order), 16):
        batch = [x for i in order[a:a + 16] for x in pairs[i]]
        ids, parts, gidx, last, _, _ = collate(batch, cfg)
        p = torch.sigmoid(model(ids, parts, gidx, last)[0])
        risks, k = [], 0
        for f, _, _ in batch:
            n = len(f.spans)
            risks.append(1 - softmin_torch(1 - p[k:k + n], cfg.tau))
            k += n
        r = torch.stack(risks).reshape(-1, 2)
        loss = weight * torch.nn.functional.softplus(-10.0 * (r[:, 0] - r[:, 1])).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()


def score(model: StepScorer, cfg: PRMConfig, lexer: Lexer, codes: list[F.Code]) -> None:
    """Fill each code's model step risks (batched, longest first)."""
    model.eval()
    todo = [c for c in codes if c.spans]
    for c in codes:
        if not c.spans:
            c.model = np.zeros(0)
    feats = [featurize(c.text, cfg, lexer, c.spans) for c in todo]
    order = sorted(range(len(todo)), key=lambda i: len(feats[i].ids))
    with torch.inference_mode():
        for a in range(0, len(order), 32):
            idx = order[a:a + 32]
            batch = [(feats[i], np.zeros(len(todo[i].spans), np.float32), 1.0) for i in idx]
            ids, parts, gidx, last, _, _ = collate(batch, cfg)
            p = torch.sigmoid(model(ids, parts, gidx, last)[0]).double().numpy()
            k = 0
            for i in idx:
                n = len(todo[i].spans)
                todo[i].model = p[k:k + n]
                k += n


def budget_threshold(risks: np.ndarray, budget: float = BUDGET) -> float:
    """The smallest threshold that flags at most ``budget`` of ``risks`` (risk >= t flags)."""
    r = np.sort(np.asarray(risks, float))[::-1]
    k = int(np.floor(budget * len(r)))
    return float(min(1.0, np.nextafter(r[k], 2.0))) if k < len(r) else 0.0


def choose_fusion(dev: F.Families, cfg: PRMConfig, model_t: float, log=print) -> tuple[float, float, float, dict]:
    """(model weight in code that parses, in code that does not, fused threshold, dev table),
    on dev alone (see the module docstring)."""
    clean = dev.clean + dev.fix_versions + [p for p in dev.prefixes if not p.labels]
    table = F.evaluate(dev, cfg, model_t, F.ANALYSER_METHODS)["methods"]
    an = {k: max(table[m][k] for m in F.ANALYSER_METHODS) for k in F.MEASURES if k in table["analysers"]}
    flagged = np.array([F.flagged_steps(x.spans, x.findings).any() for x in clean])
    best = None
    for w in (1.0, 0.5, 0.0):
        for wp in (1.0, 0.5, 0.0):
            c = replace(cfg, model_weight=w, prefix_model_weight=wp)
            unflagged = np.array([F.file_risk("fused", x, c) for x, f in zip(clean, flagged) if not f])
            room = max(0.0, BUDGET - float(flagged.mean())) * len(clean) / max(1, len(unflagged))
            t0 = budget_threshold(unflagged, room)
            for t in sorted({t0, *np.quantile(unflagged, np.linspace(0.95, 0.999, 25)).tolist(), 1.0}):
                if t < t0:
                    continue
                ev = F.evaluate(dev, replace(c, threshold=float(t)), model_t, ("fused",))["methods"]["fused"]
                ok = max(ev["clean_flag_rate"], ev["clean_prefix_flag_rate"], ev["fix_version_flag_rate"]) <= BUDGET and all(
                    ev[k] >= an[k] - 1e-12 for k, hi in F.MEASURES.items() if hi and k in ev and not np.isnan(an.get(k, np.nan)))
                gain = sum(ev[k] - an[k] for k, hi in F.MEASURES.items() if hi and k in ev and not np.isnan(an.get(k, np.nan)))
                key = (ok, round(gain, 6), w, wp, t)
                log(f"  w={w} w_prefix={wp} t={t:.4f}: ok={ok} gain={gain:+.4f} "
                    + json.dumps({k: round(v, 4) for k, v in ev.items()}))
                if best is None or key > best[0]:
                    best = (key, w, wp, float(t), ev)
    return best[1], best[2], best[3], {"analysers": table, "fused": best[4], "meets_analysers_on_dev": best[0][0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="assets/codeprm")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--clean", type=int, default=12000, help="unflagged train functions (with prefixes)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rank-weight", type=float, default=1.0,
                    help="weight of the pair ranking loss (vulnerable version riskier than its fix) per epoch")
    args = ap.parse_args()
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    rng = random.Random(SEED)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    out = Path(args.out)
    cfg = PRMConfig()
    data, n_a = training_texts(cfg, rng, args.clean)
    counter = Lexer(cfg.vocab_size)
    counter.counts = {}
    for t, _, _ in data:
        counter.lex_parts(t)
    vocab = build_vocab(counter.counts, cfg.vocab_size, 3)
    lexer = Lexer(cfg.vocab_size, vocab)
    def feat(t: str, y: np.ndarray, w: float):
        f = featurize(t, cfg, lexer)
        return (f, y, w) if len(f.spans) == len(y) and len(f.ids) <= 6000 else None

    items = [x for x in (feat(*d) for d in data[:n_a]) if x]
    pair_items = []
    for a in range(n_a, len(data), 2):  # a fix pair's two versions, vulnerable first
        v, f = feat(*data[a]), feat(*data[a + 1])
        if v and f:
            items += [v, f]
            pair_items.append((v, f))
    print(f"{len(pair_items)} fix pairs for the ranking pass", flush=True)
    pos = float(sum(y.sum() for _, y, _ in items))
    neg = float(sum(len(y) for _, y, _ in items)) - pos
    pos_weight = torch.tensor(min(20.0, neg / max(pos, 1.0)) ** 0.5)
    print(f"{len(items)} training texts, {int(pos)} risky steps of {int(pos + neg)}, pos_weight {pos_weight:.2f}, "
          f"{time.time() - t0:.0f}s", flush=True)
    dev = F.build("dev", cfg)
    model = StepScorer(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    order = sorted(range(len(items)), key=lambda i: len(items[i][0].ids))
    batches = [order[i:i + 32] for i in range(0, len(order), 32)]
    log, best = [], None
    for ep in range(args.epochs):
        model.train()
        rng.shuffle(batches)
        tot = 0.0
        for bi in batches:
            ids, parts, gidx, last, y, w = collate([items[i] for i in bi], cfg)
            logits, _ = model(ids, parts, gidx, last)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(
                logits, y, pos_weight=pos_weight, reduction="none") * w).sum() / w.sum().clamp_min(1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot += loss.item() * len(bi)
        if args.rank_weight > 0:
            rank_pass(model, cfg, pair_items, opt, rng, args.rank_weight)
        score(model, cfg, lexer, F.all_codes(dev))
        ev = F.evaluate(dev, cfg, 0.5, ("model alone",))["methods"]["model alone"]
        sel = (ev["prefix_line_auroc"] + ev["pair_ranking"]) / 2
        log.append({"epoch": ep + 1, "loss": round(tot / len(items), 5), "dev_prefix_line_auroc": round(ev["prefix_line_auroc"], 4),
                    "dev_pair_ranking": round(ev["pair_ranking"], 4), "dev_small_diff_ranking": round(ev["small_diff_ranking"], 4),
                    "minutes": round((time.time() - t0) / 60, 2)})
        print(log[-1], flush=True)
        if best is None or sel > best[0]:
            best = (sel, ep + 1, {k: v.clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[2])
    score(model, cfg, lexer, F.all_codes(dev))
    clean = dev.clean + dev.fix_versions
    model_t = budget_threshold(np.array([F.file_risk("model alone", c, cfg) for c in clean]))
    w, wp, t, dev_table = choose_fusion(dev, cfg, model_t)
    model_dev = F.evaluate(dev, cfg, model_t, ("model alone",))["methods"]["model alone"]
    from safetensors.torch import save_file

    cfg = replace(cfg, threshold=t, model_weight=w, prefix_model_weight=wp)
    out.mkdir(parents=True, exist_ok=True)
    save_file(model.state_dict(), str(out / "model.safetensors"))
    export_onnx(model, cfg, out / "model.onnx")
    (out / "vocab.json").write_text(json.dumps(vocab))
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
    cal = {"tau": cfg.tau, "budget": BUDGET,
           "model": {"threshold": model_t, **{k: round(v, 4) for k, v in model_dev.items()}},
           "fused": {"threshold": t, "model_weight": w, "prefix_model_weight": wp, **{k: round(v, 4) for k, v in dev_table["fused"].items()}},
           "dev_analysers": {m: {k: round(v, 4) for k, v in row.items()} for m, row in dev_table["analysers"].items()},
           "fused_meets_analysers_on_dev": dev_table["meets_analysers_on_dev"],
           "dev_counts": F.evaluate(dev, cfg, model_t, ())["counts"],
           "training": {"seed": SEED, "texts": len(items), "epoch": best[1], "epochs": log,
                        "minutes": round((time.time() - t0) / 60, 2)}}
    (out / "calibration.json").write_text(json.dumps(cal, indent=2))
    print(json.dumps({k: cal[k] for k in ("model", "fused", "dev_analysers")}, indent=1), flush=True)


if __name__ == "__main__":
    main()
