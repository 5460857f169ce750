"""Cache SmolLM2 step features of the fix pairs and the CyberSecEval cases (data/codeprm/feats).

    nice -n 10 python scripts/codeprm_lm_features.py [--pairs data/codeprm/fix_pairs.jsonl] [--cse] [--follow]

Train pairs: only the LM windows that hold a step the fix touched (the rest of a long function
carries no pair signal); dev and test pairs and CyberSecEval: every window (they are scored
whole). ``--follow`` keeps polling a growing pairs file until its writer marks it complete.
"""
from __future__ import annotations

import argparse
import json
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
    ap.add_argument("--follow", action="store_true")
    ap.add_argument("--done-flag", default=None, help="with --follow: stop once this file says 'complete'")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = LMConfig()
    t0 = time.time()
    done: set[str] = set()
    while True:
        pairs = load_pairs(Path(args.pairs)) if Path(args.pairs).is_file() else []
        # train first (only the windows a fix touched: cheap), then dev and test (scored whole)
        todo = [p for p in pairs if p.uid not in done]
        todo.sort(key=lambda p: p.split != "train")
        for p in todo:
            try:
                do_pair(p, cfg)
            except Exception as exc:  # one bad record must not stop the cache (logged)
                print(f"skip {p.uid}: {type(exc).__name__}: {exc}", flush=True)
            done.add(p.uid)
            if len(done) % 25 == 0:
                print(f"pairs {len(done)}/{len(pairs)} {time.time() - t0:.0f}s", flush=True)
        if not args.follow or pairs_complete(args.done_flag):
            if args.follow and any(p.uid not in done for p in load_pairs(Path(args.pairs))):
                continue
            break
        time.sleep(30)
    if args.cse:
        for i, c in enumerate(load_cases()):
            features(c.code, cfg)
            features(c.prefix, cfg)
            if i % 50 == 0:
                print(f"cse {i} {time.time() - t0:.0f}s", flush=True)
    print(f"done in {time.time() - t0:.0f}s", flush=True)


def pairs_complete(flag: str | None) -> bool:
    return flag is not None and Path(flag).is_file() and "complete" in Path(flag).read_text().lower()


if __name__ == "__main__":
    main()
