"""Flag rates on clean library and application functions and CyberSecEval line AUROC, for the
code on ``PYTHONPATH`` (so a change and the code it replaces run on the same rows).

    nice -n 10 .venv/bin/python -m evals.codeprm.corpus          # or only its collected rows
    nice -n 10 .venv/bin/python benchmarks/codeprm_flag_rates.py --mirrors ../mirrors --out now.json
    git archive main engines evals assets/codeprm | tar -x -C /tmp/old && (cd /tmp/old &&
        PYTHONPATH=/tmp/old python <checkout>/benchmarks/codeprm_flag_rates.py --mirrors ... --out before.json)

Library: every test-split function of ``data/codeprm/corpus.jsonl`` (or its ``.collected.jsonl``);
application: the test web apps of ``evals/codeprm/data/app_repos.csv`` (each snapshot's HEAD,
at most 400 functions each, seed 0); CSE: the shared CyberSecEval Python cases (validation only).
Methods as ``benchmarks/codeprm_families.py`` (the engine's one scoring path).
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from pathlib import Path

from engines.codeprm.engine import CodePRM
from evals.codeprm import families as F

METHODS = ("bandit", "CodeShield", "analysers", "fused")


def app_rows(mirrors: str) -> list[dict]:
    from evals.codeprm.apps import REPOS, repo_rows
    from evals.codeprm.fix_pairs import find_mirror

    out = []
    for r in csv.DictReader(open(REPOS)):
        d = find_mirror(mirrors, "github.com/" + r["repo"]) if r["split"] == "test" else None
        if d is not None:
            out += repo_rows(d, r["repo"], "test", [f for f in r["folders"].split(";") if f], random.Random(0))
    return out


def rates(prm: CodePRM, texts: list[str]) -> tuple[dict, list]:
    codes = F.make_codes(texts, prm.cfg)
    F.score_model(prm.model, prm.cfg, prm.lexer, codes)
    scored = {m: [c.scored(m, prm.cfg) for c in codes] for m in METHODS}
    return {m: F._rate(s) for m, s in scored.items()}, [i for i, s in enumerate(scored["fused"]) if s.verdict == "vulnerable"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--corpus", type=Path, default=F.CORPUS)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    t0 = time.time()
    prm = CodePRM.load("torch")
    corpus = a.corpus if a.corpus.is_file() else a.corpus.with_suffix(".collected.jsonl")
    lib = F.load_corpus(corpus, ("test",))
    apps = app_rows(a.mirrors)
    out: dict = {"library_n": len(lib), "apps_n": len(apps)}
    out["library"], flagged = rates(prm, [r["code"] for r in lib])
    out["library_flagged"] = [lib[i]["id"] for i in flagged]
    out["apps"], flagged = rates(prm, [r["code"] for r in apps])
    out["apps_flagged"] = [apps[i]["id"] for i in flagged]
    from evals.codeprm.cyberseceval import load_cases

    cases = load_cases()
    codes = F.make_codes([c.code for c in cases], prm.cfg)
    for c, k in zip(codes, cases):
        c.labels = {k.target}
    F.score_model(prm.model, prm.cfg, prm.lexer, codes)
    out["cse_line_auroc"] = {m: F.line_auroc([c.scored(m, prm.cfg) for c in codes], codes) for m in METHODS}
    out["seconds"] = round(time.time() - t0, 1)
    a.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: v for k, v in out.items() if not k.endswith("_flagged")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
