"""Training replies that teach the head to read the reply: train-split harmful prompts, refused.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.refusal_aug

SmolLM2-135M almost never gives material harmful help, so in the content-labelled data most
harmful *replies* are the human view's teacher-forced ones, and nearly every one of them follows a
harmful *prompt*. A head can then score the request instead of the reply. Here every harmful
prompt of the TRAIN split (model view and human view; never a dev or test prompt, never a
test-only source) is teacher-forced once with a refusal (label safe), so the same kind of request
appears with safe and with harmful replies in training.

The refusals (``train`` in ``refusals.json``) were written for this set and share no phrasing with
the paired test set's (:mod:`evals.guardrail.refusals`; a test checks the two lists are disjoint).
One per prompt, picked by a hash of the prompt. Appends view ``forced`` rows (ids ``aug-<hash>``, split train) to
``data/guardrail_v2/records.jsonl`` (replacing earlier ``aug-`` rows) and writes their taps to
``data/guardrail_v2/feats/forced_*.pt``, with the data script's own teacher-forcing function.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import torch

from engines.common.backbone import chat_prompt_ids, load_backbone
from evals.guardrail import data as gd
from evals.guardrail.content_prompts import norm
from evals.guardrail.paths import DATA
from evals.guardrail.refusals import TRAIN_REFUSALS, pick

OUT = DATA
SOURCE = "own/train_refusals"


def train_refusal_for(prompt: str) -> str:
    """The training refusal for ``prompt``, picked by a SHA-1 of its normalised text.

    >>> train_refusal_for("x") in TRAIN_REFUSALS
    True
    """
    return pick(TRAIN_REFUSALS, prompt, slice(8, 16))


def train_harmful_prompts(records: list[dict]) -> list[dict]:
    """One record per distinct harmful prompt of the train split (model or human view)."""
    seen: dict[str, dict] = {}
    for r in records:
        if r["split"] != "train" or r["benign_prompt"] or r["view"] not in ("model", "human"):
            continue
        key = norm(r["prompt"])
        if key not in seen:
            seen[key] = r
    out = []
    for key in sorted(seen):
        r = seen[key]
        rid = "aug-" + hashlib.sha1(key.encode()).hexdigest()[:12]
        out.append({"id": rid, "view": "forced", "source": SOURCE, "category": r.get("category", ""),
                    "prompt": r["prompt"], "reply": train_refusal_for(r["prompt"]), "label": 0, "anchor": None,
                    "split": "train", "benign_prompt": False})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.manual_seed(gd.SEED)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    path = args.out / "records.jsonl"
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    base = [r for r in recs if not r["id"].startswith("aug-")]
    aug = train_harmful_prompts(base)
    bb = load_backbone("cpu")
    tok = bb.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    for r in aug:
        r["prompt_ids"] = chat_prompt_ids(tok, r["prompt"], gd.MAX_PROMPT_TOKENS)
        r["reply_ids"] = tok(r["reply"], add_special_tokens=False)["input_ids"]
    todo = sorted(aug, key=lambda r: len(r["prompt_ids"]) + len(r["reply_ids"]))
    gd._chunked(args.out, todo, 64, "forced", lambda part: gd._tf_chunk(bb, part, 16, pad))
    fields = ("id", "view", "source", "category", "prompt", "reply", "reply_ids", "label", "anchor", "split",
              "benign_prompt")
    with open(path, "w") as f:
        for r in base:
            f.write(json.dumps(r) + "\n")
        for r in aug:
            f.write(json.dumps({k: r.get(k) for k in fields}) + "\n")
    print(f"{len(aug)} train-split harmful prompts teacher-forced with a refusal in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
