"""Cache SmolLM2 step features of the fix pairs and the CyberSecEval cases (data/codeprm/feats).

    nice -n 10 python scripts/codeprm_lm_features.py [--pairs data/codeprm/fix_pairs.jsonl] [--cse]

Train pairs: only the LM windows that hold a step the fix touched (the rest of a long function
carries no pair signal); dev and test pairs and CyberSecEval: every window (they are scored
whole). The training and benchmark commands compute whatever is missing themselves; this one
fills the cache ahead of them in a useful order.
"""
from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import torch

from engines.codeprm.lm import LMConfig
from engines.codeprm.steps import split_steps
from evals.codeprm.cyberseceval import load_cases
from evals.codeprm.lm_cache import features
from evals.codeprm.pairs import load_pairs
from evals.codeprm.step_labels import pair_lines, risky_steps


def do_pair(p, cfg: LMConfig) -> None:
    if p.split == "train":
        removed, added, near = pair_lines(p.before, p.after, p.vul_lines, p.fix_lines)
        sv, sf = split_steps(p.before, cfg.max_step_lines), split_steps(p.after, cfg.max_step_lines)
        features(p.before, cfg, only_steps=risky_steps(sv, removed | near) or {0})
        features(p.after, cfg, only_steps=risky_steps(sf, added) or risky_steps(sf, removed | near) or {0})
    else:
        features(p.before, cfg)
        features(p.after, cfg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default="data/codeprm/fix_pairs.jsonl")
    ap.add_argument("--cse", action="store_true", help="also the CyberSecEval cases (full and prefix)")
    ap.add_argument("--first-train", type=int, default=350, help="train pairs cached before the test split")
    ap.add_argument("--first-dev", type=int, default=150, help="dev pairs cached before the test split")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = LMConfig()
    t0 = time.time()
    pairs = load_pairs(Path(args.pairs))
    rng = random.Random(0)
    rng.shuffle(pairs)
    by = {sp: [p for p in pairs if p.split == sp] for sp in ("train", "dev", "test")}
    # what training needs first (a seeded share of train and dev), then all of test and
    # CyberSecEval (the benchmark), then the rest of train and dev
    first = by["train"][:args.first_train] + by["dev"][:args.first_dev]
    rest = by["train"][args.first_train:] + by["dev"][args.first_dev:]
    for stage, todo in (("first", first), ("test", by["test"]), ("cse", None), ("rest", rest)):
        if stage == "cse":
            if args.cse:
                for i, c in enumerate(load_cases()):
                    features(c.code, cfg)
                    features(c.prefix, cfg)
                    if i % 50 == 0:
                        print(f"cse {i} {time.time() - t0:.0f}s", flush=True)
            continue
        for i, p in enumerate(todo):
            try:
                do_pair(p, cfg)
            except Exception as exc:  # one bad record must not stop the cache (logged)
                print(f"skip {p.uid}: {type(exc).__name__}: {exc}", flush=True)
            if (i + 1) % 25 == 0:
                print(f"{stage} {i + 1}/{len(todo)} {time.time() - t0:.0f}s", flush=True)
    print(f"done in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
