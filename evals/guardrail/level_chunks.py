"""Write the replies to be given three-level labels by reading into chunk files (issue #31, item 1).

    .venv/bin/python -m evals.guardrail.level_chunks --out <folder> [--views model,prefill,sampled]

Reads the reply ids cached by :mod:`evals.guardrail.content_data` (model view) and
:mod:`evals.guardrail.attack_replies` (prefill and sampled views) under ``data/guardrail_v2/feats``
and writes, under ``--out``:

* ``<view>_<kind>_XX.jsonl``: at most 200 replies a file, one view and kind (replies to harmful
  or to benign prompts) per file, ordered by a hash of the id. Each line: id, view, kind, source,
  prompt (cut to 64 tokens as the model saw it), prefill, reply, ``tokens`` (``[index, text]``)
  and, for the model view, the committed content label (``content``: harmful/safe + anchor),
  which fixes `unsafe` and its anchor; nothing else is proposed.
* ``<same name>.txt``: the same items for reading, the reply with every token's index inline.
* ``second_pass_items.jsonl``: 200 items for an independent second pass (seed 0; 100 prefill,
  50 sampled, 50 model-view replies to harmful prompts), without the content label.

Annotators read every reply against docs/guardrail_annotation.md ("Three levels") and write
``labels_<chunk name>.jsonl`` beside it: ``{"id", "level", "comply_anchor", "unsafe_anchor", "note"}``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

import torch

from engines.common.backbone import load_backbone
from engines.guardrail.detok import token_pieces
from evals.guardrail import attack_replies as ar
from evals.guardrail import content_prompts as cp
from evals.guardrail.data import MAX_PROMPT_TOKENS
from evals.guardrail.labels_v2 import LABEL_FILE
from evals.guardrail.level_labels import first_pass

FEATS = ar.OUT / "feats"
CHUNK = 200
SECOND_PASS = {"prefill": 100, "sampled": 50, "model": 50}
SEED = 0


def cached_replies(views: list[str]) -> dict[str, dict]:
    """id -> the cached meta (reply ids and text) of every reply of ``views``."""
    out = {}
    for view in views:
        for path in sorted(FEATS.glob(f"{view}_*.pt")):
            blob = torch.load(path)
            for i, meta in zip(blob["ids"], blob["meta"]):
                out[i] = meta
    return out


HUMAN_REREAD = (0.2, 0.8)  # mean Likert harm scores re-read against the guideline (train/dev only)


def human_reread() -> list[dict]:
    """Human-view replies of PyRIT's harm Likert set in the train and dev splits whose mean score is
    borderline (``HUMAN_REREAD``): re-read against the guideline (issue #31, item 4); test keeps
    PyRIT's labels."""
    lo, hi = HUMAN_REREAD
    out = []
    for ln in (ar.OUT / "records.jsonl").read_text().splitlines():
        r = json.loads(ln)
        if r["view"] == "human" and r["split"] in ("train", "dev") and r["source"] == "pyrit/scorer_evals/harm" \
                and r.get("score") is not None and lo <= r["score"] <= hi:
            out.append(r | {"prefill": ""})
    return out


def planned(views: list[str]) -> list[dict]:
    """The records of ``views`` with prompts, splits and (attack views) prefills."""
    recs = human_reread() if "human" in views else []
    if "model" in views:
        model = cp.model_prompts()
        cp.assign_splits(model)
        for r in model:
            recs.append(r | {"id": cp.record_id("model", r["source"], r["prompt"]), "prefill": ""})
    recs += [r for r in ar.attack_plan() if r["view"] in views]
    return recs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--views", default="model,prefill,sampled", help="of model, prefill, sampled, human "
                    "(human: the borderline harm-set replies of train/dev, re-read)")
    args = ap.parse_args()
    views = args.views.split(",")
    tok = load_backbone("cpu").tokenizer
    content = first_pass(LABEL_FILE)
    cached = cached_replies([v for v in views if v != "human"])
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in planned(views):
        meta = cached.get(r["id"]) if r["view"] != "human" else r
        if meta is None or not meta["reply_ids"]:
            continue
        kind = "benign" if r["benign_prompt"] else "harmful"
        if r["view"] == "model" and kind == "benign":
            continue  # replies to benign requests: safe unless content-harmful (none of 777 were)
        pieces = token_pieces(tok.decode, meta["reply_ids"])
        p_ids = tok(r["prompt"], add_special_tokens=False)["input_ids"]
        prompt = tok.decode(p_ids[:MAX_PROMPT_TOKENS]) + (" [...]" if len(p_ids) > MAX_PROMPT_TOKENS else "")
        item = {"id": r["id"], "view": r["view"], "kind": kind, "source": r["source"], "split": r["split"],
                "prompt": prompt, "prefill": r["prefill"], "reply": "".join(pieces),
                "tokens": [[i, p] for i, p in enumerate(pieces)]}
        if r["view"] == "human":
            item["human_label"] = {"label": "harmful" if r["label"] else "safe", "mean_likert": r["score"]}
        if r["id"] in content:
            c = content[r["id"]]
            item["content"] = {"label": "harmful" if c["label"] else "safe", "anchor": c["anchor"]}
        groups.setdefault((r["view"], kind), []).append(item)
    args.out.mkdir(parents=True, exist_ok=True)
    for (view, kind), lst in sorted(groups.items()):
        lst.sort(key=lambda x: hashlib.sha1(x["id"].encode()).hexdigest())
        parts = max(1, -(-len(lst) // CHUNK))
        size = -(-len(lst) // parts)
        for p in range(parts):
            name = f"{view}_{kind}_{p:02d}"
            part = lst[p * size: (p + 1) * size]
            with open(args.out / f"{name}.jsonl", "w") as f:
                f.writelines(json.dumps(it, ensure_ascii=False) + "\n" for it in part)
            with open(args.out / f"{name}.txt", "w") as f:
                for it in part:
                    inline = "".join(f"⟨{i}⟩{p}" for i, p in it["tokens"])
                    extra = f"\ncontent label: {it['content']}" if "content" in it else ""
                    if "human_label" in it:
                        extra = f"\nPyRIT human label: {it['human_label']}"
                    f.write(f"=== {it['id']}  [{it['source']}]\nPROMPT: {it['prompt']}\n"
                            f"PREFILL: {it['prefill']!r}\nREPLY: {inline}{extra}\n\n")
            print(f"{name}: {len(part)} replies")
    rng = random.Random(SEED)
    picked = []
    for view, n in SECOND_PASS.items():
        ids = sorted(it["id"] for it in groups.get((view, "harmful"), []))
        picked += rng.sample(ids, min(n, len(ids)))
    by_id = {it["id"]: it for lst in groups.values() for it in lst}
    with open(args.out / "second_pass_items.jsonl", "w") as f:
        f.writelines(json.dumps({k: v for k, v in by_id[i].items() if k != "content"}, ensure_ascii=False) + "\n"
                     for i in picked)
    with open(args.out / "second_pass_items.txt", "w") as f:
        for i in picked:
            it = by_id[i]
            inline = "".join(f"⟨{k}⟩{p}" for k, p in it["tokens"])
            f.write(f"=== {it['id']}  [{it['source']}]\nPROMPT: {it['prompt']}\nPREFILL: {it['prefill']!r}\n"
                    f"REPLY: {inline}\n\n")
    print(f"second pass: {len(picked)} items")


if __name__ == "__main__":
    main()
