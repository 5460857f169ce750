"""Train the shipped step model on the paper's two label sources, then fix its place in the fusion on dev.

    nice -n 10 .venv/bin/python scripts/codeprm_train.py   # -> assets/codeprm/{model.safetensors,model.onnx,vocab.json,config.json,calibration.json}

Label sources (train split only):
(a) analyser step labels on real code: functions of the train packages (``evals.codeprm.corpus``)
    and of the train fix-pair repositories' other code, in full and as prefixes cut
    mid-function; a step is risky when it holds a confident bandit or CodeShield finding;
(b) the train fix pairs' diff labels: the vulnerable version's steps that the fix changed are
    risky, every step of every fixed version safe (``evals.codeprm.step_labels``);
(c) hard negatives, every step safe: unflagged train functions that call a sink of a family that
    flagged functions call too (``families.hard_negatives``), and functions of the train web
    applications (``evals.codeprm.apps``: parameterised queries, argument-list subprocess calls,
    safe loaders, redirects and JSON responses).
The epoch is picked on dev (prefix line AUROC + dev fix-pair ranking). Then, on dev alone
(``choose_fusion``): the model-alone threshold flags at most 5 % of clean dev functions; the
model's weights in the order of steps, its flag threshold in code that does not parse, and in
code that parses its flag threshold and the CWE families where its own flags are at least as
precise as the analysers' (``PRMConfig.model_flag_cwes``; none = it only orders steps there),
are the ones with the largest summed gain over the best single analyser among those that keep
every clean dev family at or under 5 % flagged, the fixed versions cut at a changed line at or
under 10 %, and no dev family below that analyser (weight 0 and no model flags is the analysers
themselves, so one always qualifies). Seed 0, CPU.
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
from engines.codeprm.lines import split_lines
from engines.codeprm.features import featurize
from engines.codeprm.model import StepScorer, export_onnx
from engines.codeprm.parsing import prepare
from engines.codeprm.steps import split_steps
from engines.codeprm.tokens import Lexer, build_vocab
from evals.codeprm import families as F
from evals.codeprm.families import collate, score_model
from evals.codeprm.pairs import load_pairs
from evals.codeprm.step_labels import pair_lines

SEED = 0
BUDGET = 0.05
CUT_BUDGET = 0.10
MIN_FLAGS = 5  # model-only flags a CWE family needs on dev before its precision counts


def step_labels(text: str, lines: set[int], cfg: PRMConfig) -> np.ndarray:
    spans = split_steps(text, cfg.max_step_lines)
    return np.array([float(any(s.start <= ln <= s.end for ln in lines)) for s in spans], np.float32)


def training_texts(cfg: PRMConfig, rng: random.Random, n_clean: int, n_apps: int,
                   log=print) -> tuple[list[tuple[str, np.ndarray, float]], int]:
    """(code, step labels, weight) of the three label sources on the train split; the first
    ``n_a`` items are analyser-labelled or hard negatives, then each fix pair's two versions."""
    rows = F.load_corpus(F.CORPUS, ("train",)) + F.load_corpus(F.REPO_CORPUS, ("train",))
    apps = F.load_corpus(F.APP_CORPUS, ("train",))
    flagged = [r for r in rows if F.confident_lines(r)]
    clean = [r for r in rows if not F.confident_lines(r)]
    rng.shuffle(clean)
    hard = F.hard_negatives(rows + apps)
    hard_ids = {r["id"] for r in hard}
    app_rows = rng.sample(apps, min(n_apps, len(apps)))
    extra = [r for r in hard + app_rows if r["id"] not in {x["id"] for x in clean[:n_clean]}]
    seen, take = set(), []
    for r in flagged + clean[:n_clean] + extra:
        if r["id"] not in seen:
            seen.add(r["id"])
            take.append(r)
    out = []
    for r in take:
        lab = F.confident_lines(r)
        out.append((r["code"], lab))
        for _ in range(2 if lab else 1):
            pre = F.cut_prefix(r["code"], rng)
            if pre is not None:
                n = len(split_lines(pre))
                out.append((pre, {ln for ln in lab if ln < n}))
    items = [(prepare(t), step_labels(prepare(t), lab, cfg), 1.0) for t, lab in out]
    n_a = len(items)
    pairs = load_pairs(splits=("train",))
    for p in pairs:  # a pair's two versions sit next to each other (the ranking pass reads them so)
        before, after = prepare(p.before), prepare(p.after)
        removed, _added, near = pair_lines(before, after, p.vul_lines, p.fix_lines)
        items.append((before, step_labels(before, removed | near, cfg), 1.0))
        items.append((after, np.zeros(len(split_steps(after, cfg.max_step_lines)), np.float32), 1.0))
    log(f"train: {n_a} analyser-labelled texts ({len(flagged)} flagged functions of {len(rows)}; "
        f"{len(hard_ids)} hard negatives calling the flagged functions' sinks; {len(app_rows)} application "
        f"functions), {2 * len(pairs)} fix-pair versions")
    return items, n_a


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


def budget_threshold(risks: np.ndarray, budget: float = BUDGET) -> float:
    """The smallest threshold that flags at most ``budget`` of ``risks`` (risk >= t flags)."""
    r = np.sort(np.asarray(risks, float))[::-1]
    k = int(np.floor(budget * len(r)))
    return float(min(1.0, np.nextafter(r[k], 2.0))) if k < len(r) else 0.0


def _gains(ev: dict, an: dict) -> tuple[bool, float]:
    """Whether a dev row is at least the best single analyser on every higher-is-better measure,
    and its summed gain over it."""
    keys = [k for k, hi in F.MEASURES.items() if hi and k in ev and not np.isnan(an.get(k, np.nan))
            and not np.isnan(ev[k])]
    return all(ev[k] >= an[k] - 1e-12 for k in keys), sum(ev[k] - an[k] for k in keys)


def _within_budget(ev: dict, an: dict) -> bool:
    """Every clean dev family at or under its budget (5 %; 10 % for the fixed versions cut at a
    changed line), or at the analysers' own rate where they alone flag more (the fused scanner
    flags whatever they flag)."""
    fams = {"clean_flag_rate": BUDGET, "app_flag_rate": BUDGET, "clean_prefix_flag_rate": BUDGET,
            "fix_version_flag_rate": BUDGET, "cut_fixed_end_flag_rate": CUT_BUDGET,
            "cut_fixed_mid_flag_rate": CUT_BUDGET}
    return all(ev[k] <= max(b, an[k]) + 1e-12 for k, b in fams.items() if k in ev and not np.isnan(ev[k]))


def flag_gate(dev: F.Families, cfg: PRMConfig, t: float) -> tuple[tuple[int, ...], dict]:
    """The CWE families where the model's own flags in dev code that parses, at threshold ``t``,
    are at least as precise as the analysers' flags of that family (at least ``MIN_FLAGS`` of
    them), and the per-family counts behind it."""
    c = replace(cfg, model_flag_threshold=t, model_flag_cwes=tuple(F.CWE_NUMBERS))
    ev = F.evaluate(dev, c, ("fused",))["flags"]["fused"]
    an_all = F.evaluate(dev, c, ("analysers",))["flags"]["analysers"]["analyser_flags_parsing"]
    tot = [sum(v[0] for v in an_all.values()), sum(v[1] for v in an_all.values())]
    keep, table = [], {}
    for fam, (n, hit) in sorted(ev["model_only_parsing"].items()):
        a_n, a_hit = an_all.get(fam, tot)
        prec, a_prec = hit / n, a_hit / max(1, a_n)
        table[fam] = {"model_only_flags": n, "model_precision": round(prec, 4), "analyser_flags": a_n,
                      "analyser_precision": round(a_prec, 4)}
        if n >= MIN_FLAGS and prec >= a_prec:
            keep.append(fam)
    return tuple(keep), table


def choose_fusion(dev: F.Families, cfg: PRMConfig, log=print) -> tuple[PRMConfig, dict]:
    """The fused scanner's dev-chosen settings (see the module docstring) and the dev tables."""
    table = F.evaluate(dev, cfg, F.METHODS[:4])["methods"]
    an = {k: max(table[m][k] for m in F.SINGLE) for k in F.MEASURES if k in table["analysers"]}
    an_rates = {k: table["analysers"][k] for k, hi in F.MEASURES.items() if not hi and k in table["analysers"]}
    m_par = np.concatenate([c.model for c in dev.clean + dev.apps + dev.fix_versions if len(c.model)])
    m_pre = np.concatenate([c.model for c in dev.prefixes + dev.cuts.get("fix_end", []) + dev.cuts.get("fix_mid", [])
                            if len(c.model) and not c.parses])
    grid_par = [1.0] + sorted(set(np.quantile(m_par, [0.99, 0.995, 0.998, 0.999, 0.9995]).round(4).tolist()))
    grid_pre = [1.0] + sorted(set(np.quantile(m_pre, [0.9, 0.95, 0.97, 0.98, 0.99, 0.995]).round(4).tolist()))
    gates = {t: flag_gate(dev, cfg, t) for t in grid_par if t < 1.0}
    best, tried = None, []
    for w in (1.0, 0.5, 0.0):
        for wp in (1.0, 0.5, 0.0):
            for tp in grid_pre:
                for t in grid_par:
                    fams = gates[t][0] if t < 1.0 else ()
                    if t < 1.0 and not fams:
                        continue
                    c = replace(cfg, model_weight=w, prefix_model_weight=wp, prefix_flag_threshold=float(tp),
                                model_flag_threshold=float(t), model_flag_cwes=fams)
                    ev = F.evaluate(dev, c, ("fused",))["methods"]["fused"]
                    ok, gain = _gains(ev, an)
                    ok = ok and _within_budget(ev, an_rates)
                    key = (ok, round(gain, 6), -t, w, wp, tp)
                    tried.append({"w": w, "w_prefix": wp, "prefix_flag": tp, "flag": t, "cwes": list(fams), "ok": ok,
                                  "gain": round(gain, 4)})
                    log(json.dumps(tried[-1]) + " " + json.dumps({k: round(v, 4) for k, v in ev.items()}))
                    if best is None or key > best[0]:
                        best = (key, c, ev)
    return best[1], {"analysers": table, "fused": best[2], "meets_analysers_on_dev": best[0][0],
                     "gates": {str(t): g[1] for t, g in gates.items()}, "tried": len(tried)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="assets/codeprm")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--clean", type=int, default=12000, help="unflagged train functions (with prefixes)")
    ap.add_argument("--apps", type=int, default=6000, help="train application functions (hard negatives)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dev-clean", type=int, default=3000, help="dev package functions (the clean dev family)")
    ap.add_argument("--calibrate-only", action="store_true",
                    help="keep the step model in --out and redo only the dev choices (calibration.json)")
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
    if args.calibrate_only:
        return calibrate(out, cfg, args.dev_clean, t0)
    data, n_a = training_texts(cfg, rng, args.clean, args.apps)
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
    dev = F.build("dev", cfg, n_clean=args.dev_clean, n_prefix_clean=args.dev_clean // 2)
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
        score_model(model, cfg, lexer, F.all_codes(dev))
        ev = F.evaluate(dev, cfg, ("model alone",))["methods"]["model alone"]
        sel = (ev["prefix_line_auroc"] + ev["pair_ranking"]) / 2
        log.append({"epoch": ep + 1, "loss": round(tot / len(items), 5), "dev_prefix_line_auroc": round(ev["prefix_line_auroc"], 4),
                    "dev_pair_ranking": round(ev["pair_ranking"], 4), "dev_small_diff_ranking": round(ev["small_diff_ranking"], 4),
                    "minutes": round((time.time() - t0) / 60, 2)})
        print(log[-1], flush=True)
        if best is None or sel > best[0]:
            best = (sel, ep + 1, {k: v.clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[2])
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    save_file(model.state_dict(), str(out / "model.safetensors"))
    export_onnx(model, cfg, out / "model.onnx")
    (out / "vocab.json").write_text(json.dumps(vocab))
    base = {k: v for k, v in PRMConfig().to_dict().items()
            if k not in ("model_weight", "prefix_model_weight", "model_flag_threshold", "model_flag_cwes",
                         "prefix_flag_threshold", "prefix_flag_cwes", "solo_threshold")}
    (out / "config.json").write_text(json.dumps(base, indent=2))
    write_calibration(out, model, cfg, lexer, dev, {"seed": SEED, "texts": len(items), "epoch": best[1],
                                                    "epochs": log, "minutes": round((time.time() - t0) / 60, 2)})


def calibrate(out: Path, cfg: PRMConfig, dev_clean: int, t0: float) -> None:
    """The dev choices alone, for the step model already in ``out`` (its training log is kept)."""
    from safetensors.torch import load_file

    model = StepScorer(cfg)
    model.load_state_dict(load_file(str(out / "model.safetensors")))
    lexer = Lexer(cfg.vocab_size, json.loads((out / "vocab.json").read_text()))
    dev = F.build("dev", cfg, n_clean=dev_clean, n_prefix_clean=dev_clean // 2)
    training = json.loads((out / "calibration.json").read_text())["training"]
    write_calibration(out, model, cfg, lexer, dev, training)
    print(f"calibrated in {(time.time() - t0) / 60:.1f} min", flush=True)


def write_calibration(out: Path, model: StepScorer, cfg: PRMConfig, lexer: Lexer, dev: F.Families,
                      training: dict) -> None:
    """Score dev with the step model, make every dev choice and write ``calibration.json``."""
    score_model(model, cfg, lexer, F.all_codes(dev))
    clean = dev.clean + dev.apps + dev.fix_versions
    solo = budget_threshold(np.array([c.model.max() if len(c.model) else 0.0 for c in clean]))
    cfg = replace(cfg, solo_threshold=solo)
    fused_cfg, dev_table = choose_fusion(dev, cfg)
    model_dev = F.evaluate(dev, cfg, ("model alone",))["methods"]["model alone"]
    chosen = {k: getattr(fused_cfg, k) for k in ("model_weight", "prefix_model_weight", "model_flag_threshold",
                                                  "model_flag_cwes", "prefix_flag_threshold")}
    cal = {"tau": cfg.tau, "budget": BUDGET, "cut_budget": CUT_BUDGET,
           "model": {"threshold": solo, **{k: round(v, 4) for k, v in model_dev.items()}},
           "fused": {**chosen, "model_flag_cwes": list(fused_cfg.model_flag_cwes),
                     **{k: round(v, 4) for k, v in dev_table["fused"].items()}},
           "dev_analysers": {m: {k: round(v, 4) for k, v in row.items()} for m, row in dev_table["analysers"].items()},
           "fused_meets_analysers_on_dev": dev_table["meets_analysers_on_dev"],
           "model_flag_gates": dev_table["gates"],
           "dev_counts": F.evaluate(dev, cfg, ())["counts"], "training": training}
    (out / "calibration.json").write_text(json.dumps(cal, indent=2))
    print(json.dumps({k: cal[k] for k in ("model", "fused", "dev_analysers", "model_flag_gates")}, indent=1), flush=True)


if __name__ == "__main__":
    main()
