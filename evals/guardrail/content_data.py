"""Build the content-labelled guardrail data and its hidden-state cache (issue #22, items 2-3).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.content_data

Writes under ``data/guardrail_v2/`` (git-ignored):

* ``records.jsonl``: one reply per line: id, view, source, category, prompt, reply text,
  reply token ids, split, benign_prompt, the label/anchor where known, and the refusal-regex
  proposal (``label_regex``/``anchor_regex``). Model-view replies carry ``label: null`` until
  the content labels are merged (``python -m evals.guardrail.labels content --apply``).
* ``feats/<view>_<chunk>.pt``: float16 taps per reply token (layers 9/15/21/30) and at the last
  prompt token, written by the data script's own functions, so the features are exactly those
  the streaming guard sees.

Three views:

1. ``model``: SmolLM2-135M-Instruct's greedy 48-token replies (KV cache) to the prompts of
   :mod:`evals.guardrail.content_prompts`. Labels come from people reading the replies.
2. ``human``: the data script's human view, unchanged (same rows, ids, labels and splits).
3. ``paired``: held-out harmful prompts (test split or test-only source) that have a real
   human-labelled compliant reply, teacher-forced once with that reply (harmful) and once with a
   refusal from :mod:`evals.guardrail.refusals` (safe). No model writes harmful text for this.

Record ids of the model and paired views are hashes of source and prompt, so a re-run reuses
every cached reply and only computes what is new.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path

import torch

from engines.common.backbone import chat_prompt_ids, load_backbone
from engines.guardrail.labels import anchor_token_index, find_anchor_char
from evals.guardrail import content_prompts as cp
from evals.guardrail import data as gd
from evals.guardrail.paths import DATA
from evals.guardrail.refusals import refusal_for

OUT = DATA
MAX_PAIRS = 150
FIELDS = ("id", "view", "source", "category", "prompt", "reply", "reply_ids", "label", "anchor", "label_regex",
          "anchor_regex", "score", "split", "benign_prompt", "pair")


def human_records() -> list[dict]:
    """The data script's human view with its original ids (``human-%05d``, seed-0 order) and splits."""
    recs = gd.human_view(random.Random(gd.SEED))
    for k, r in enumerate(recs):
        r["id"] = f"human-{k:05d}"
    return recs


def paired_records(human: list[dict]) -> list[dict]:
    """Refusal/compliant reply pairs for held-out harmful prompts with a real compliant human reply.

    One pair per prompt (the compliant reply with the highest human score, ties by hash), at most
    ``MAX_PAIRS``, prompts chosen by hash.
    """
    best: dict[str, dict] = {}
    for r in human:
        if r["split"] != "test" or not r["label"] or r["benign_prompt"]:
            continue
        key = cp.norm(r["prompt"])
        rank = (r.get("score") or 1.0, hashlib.sha1(r["reply"].encode()).hexdigest())
        if key not in best or rank > best[key][0]:
            best[key] = (rank, r)
    keys = sorted(best, key=lambda k: hashlib.sha1(k.encode()).hexdigest())[:MAX_PAIRS]
    out = []
    for key in keys:
        h = best[key][1]
        pair = cp.record_id("pair", h["source"], h["prompt"])
        base = {"view": "paired", "source": h["source"], "category": h["category"], "prompt": h["prompt"],
                "benign_prompt": False, "split": "test", "pair": pair}
        out.append(base | {"id": pair + "-c", "reply": h["reply"], "label": 1, "human_id": h["id"]})
        out.append(base | {"id": pair + "-r", "reply": refusal_for(h["prompt"]), "label": 0})
    return out


def regex_proposal(tok, ids: list[int]) -> tuple[int, int | None]:
    """(label, anchor) the refusal regex proposes for a reply: harmful from its first non-refusal sentence."""
    text, offs = gd._offsets(tok, ids)
    c = find_anchor_char(text)
    return int(c is not None), anchor_token_index(offs, c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared 2-core box)")
    ap.add_argument("--views", default="model,paired,human")
    ap.add_argument("--no-own", action="store_true", help="skip the hand-written prompt files (partial build)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.manual_seed(gd.SEED)
    torch.set_num_threads(args.threads)
    views = args.views.split(",")
    t_start = time.time()

    model = cp.model_prompts(include_own=not args.no_own)
    human = human_records()
    cp.assign_splits(model + human)
    for r in model:
        r["id"] = cp.record_id("model", r["source"], r["prompt"])
    paired = paired_records(human)

    bb = load_backbone("cpu")
    tok = bb.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if "model" in views:
        for r in model:
            r["prompt_ids"] = chat_prompt_ids(tok, r["prompt"], gd.MAX_PROMPT_TOKENS)
        model.sort(key=lambda r: len(r["prompt_ids"]))
        gd._chunked(out, model, 64, "model", lambda part: gd._gen_chunk(bb, part, 16),
                    restore=lambda r, meta: gd.label_reply(tok, r, meta["reply_ids"]))
        print(f"[model] done at {time.time() - t_start:.0f}s", flush=True)
    if "paired" in views:
        for r in paired:
            r["prompt_ids"] = chat_prompt_ids(tok, r["prompt"], gd.MAX_PROMPT_TOKENS)
            r["full_reply"] = r["reply"]
            r["keep"] = gd.label_reply(tok, r, tok(r["reply"], add_special_tokens=False)["input_ids"][:gd.MAX_REPLY_TOKENS])
        dropped = {r["pair"] for r in paired if not r["keep"]}  # harmful part starts after the 96-token cut
        paired = [r for r in paired if r["pair"] not in dropped]
        todo = sorted(paired, key=lambda r: len(r["prompt_ids"]) + len(r["reply_ids"]))
        gd._chunked(out, todo, 64, "paired", lambda part: gd._tf_chunk(bb, part, 8, pad))
        print(f"[paired] {len(paired) // 2} pairs, done at {time.time() - t_start:.0f}s", flush=True)
    if "human" in views:
        gd.run_teacher_forced(bb, human, out, batch=8, chunk=64, harm_cap=gd.HARM_CAP)
        print(f"[human] done at {time.time() - t_start:.0f}s", flush=True)

    keep = []
    for r in model + paired + human:
        if r["view"] not in views or not r.get("reply_ids"):
            continue
        r["label_regex"], r["anchor_regex"] = regex_proposal(tok, r["reply_ids"])
        if r["view"] == "model":  # content labels come from annotators, see docs/guardrail_annotation.md
            r["label"] = r["anchor"] = None
        keep.append(r)
    with open(out / "records.jsonl", "w") as f:
        for r in keep:
            f.write(json.dumps({k: r.get(k) for k in FIELDS}) + "\n")
    print(f"wrote {len(keep)} records to {out / 'records.jsonl'} in {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
