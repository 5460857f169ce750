"""SmolLM2's own replies to benign requests of the request corpus v2 (view ``requests``).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.request_replies

Why: a strict false stop is a stop in the *reply* to a benign request, so the per-family bars need the
live model's replies to the dev and test requests of every benign family; and the loose members learn
that the replies to long requests with attached material and to everyday requests are safe from the
train requests' replies (issue 44, item 6).

Which requests (a hash of the request picks them, at most :data:`PER_FAMILY` per split and family):
every benign family of dev and test (the WritingBench replies are the content build's), and the long
and everyday families of train. Greedy 48-token replies through the content build's generation path
(the same prompt cut as serving). Replies to benign requests are safe by the guideline's rule, so
nothing here needs reading. Writes ``data/guardrail_v2/requests_records.jsonl`` and
``feats/requests_*.pt`` beside the content build.
"""
from __future__ import annotations

import argparse
import time

import torch

from engines.common.backbone import chat_prompt_ids, load_backbone
from evals.guardrail import attack_replies as ar
from evals.guardrail import content_prompts as cp
from evals.guardrail import data as gd
from evals.guardrail import request_sources as rs
from evals.guardrail.paths import DATA
from evals.guardrail.requests import OUT as CORPUS
from evals.guardrail.requests import load_corpus

PER_FAMILY = {"train": 300, "dev": 120, "test": 150}
TRAIN_FAMILIES = ("long_attached", "everyday")
FIELDS = ar.FIELDS + ("family", "bar_family", "lang", "form")


def plan(rows: list[dict], taken: set[str]) -> list[dict]:
    """The benign requests to reply to (see the module docstring), none already in the reply data."""
    out = []
    for split, cap in PER_FAMILY.items():
        fams = sorted({r["bar_family"] for r in rows if r["split"] == split and not r["harmful"]})
        for fam in fams:
            if fam == "writingbench" or (split == "train" and fam not in TRAIN_FAMILIES):
                continue
            pool = [r for r in rows if r["split"] == split and not r["harmful"] and r["bar_family"] == fam
                    and cp.norm(r["prompt"]) not in taken]
            pool.sort(key=lambda r: rs.unit(cp.norm(r["prompt"]), "replies"))
            for r in pool[:cap]:
                out.append({"id": cp.record_id("requests", r["source"], r["prompt"]), "view": "requests",
                            "source": f"v2/{fam}", "category": r["family"], "prompt": r["prompt"],
                            "benign_prompt": True, "split": split, "label": None, "family": r["family"],
                            "bar_family": fam, "lang": r["lang"], "form": r["form"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dry-run", action="store_true", help="print the plan's counts and exit")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(gd.SEED)
    rows = load_corpus(CORPUS)
    taken = {cp.norm(r["prompt"]) for r in rows if r["source"] in ("own/everyday", "own/borderline", "own/contrast",
                                                                   "own/writing", "inspect_evals/writingbench")}
    todo = plan(rows, taken)
    counts: dict[str, int] = {}
    for r in todo:
        counts[f"{r['split']}/{r['bar_family']}"] = counts.get(f"{r['split']}/{r['bar_family']}", 0) + 1
    print(counts, flush=True)
    if args.dry_run:
        return
    t0 = time.time()
    bb = load_backbone("cpu")
    for r in todo:
        r["prompt_ids"] = chat_prompt_ids(bb.tokenizer, r["prompt"], gd.MAX_PROMPT_TOKENS)
    todo.sort(key=lambda r: len(r["prompt_ids"]))
    gd._chunked(DATA, todo, 64, "requests", lambda part: gd._gen_chunk(bb, part, 16), restore=ar._restore)
    ar.write_records(DATA / "requests_records.jsonl", todo, FIELDS, t0)


if __name__ == "__main__":
    main()
