"""Step-structured materials lists, teacher-forced (view ``materials``; issue 44, item 6).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.materials

The loose policy stops a reply from the first step that names the harmful object with a concrete
material, tool, size, place or timing (``docs/guardrail_annotation.md``, "Where loose draws the line").
SmolLM2 writes such lists rarely, so the loose members see few of them. These replies were written for
this project in that shape (``prompts/v2/materials_lists.jsonl``): a harmful request, an agreeing
opener, then numbered steps that name the object with a size, a shop or a time. They are deliberately
useless as instructions (no real ingredient or method): the line is about the form of the help.
Label ``unsafe`` from the first step (the loose target), ``complies`` from the opener (strict).
Splits as written in the file (train and dev); the tests' own list is not among them.
"""
from __future__ import annotations

import json
import time

import torch

from engines.common.backbone import chat_prompt_ids, load_backbone
from evals.guardrail import attack_replies as ar
from evals.guardrail import content_prompts as cp
from evals.guardrail import data as gd
from evals.guardrail.paths import DATA

FILE = cp.PROMPT_DIR / "v2" / "materials_lists.jsonl"


def records() -> list[dict]:
    """The written lists as reply records (no token ids yet)."""
    out = []
    for ln in FILE.read_text(encoding="utf-8").splitlines():
        if ln.strip():
            r = json.loads(ln)
            out.append({"id": cp.record_id("materials", "own/materials", r["prompt"]), "view": "materials",
                        "source": "own/materials", "category": r["object"], "prompt": r["prompt"],
                        "reply": r["reply"], "anchor_text": r["anchor_text"], "benign_prompt": False,
                        "split": r["split"], "label": 1})
    return out


def main() -> None:
    torch.set_num_threads(1)
    t0 = time.time()
    bb = load_backbone("cpu")
    tok = bb.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    recs = records()
    for r in recs:
        r["prompt_ids"] = chat_prompt_ids(tok, r["prompt"], gd.MAX_PROMPT_TOKENS)
        r["reply_ids"] = tok(r["reply"], add_special_tokens=False)["input_ids"]
        text, offs = gd._offsets(tok, r["reply_ids"])
        start = text.index(r["anchor_text"])
        r["anchor"] = next(k for k, (a, b) in enumerate(offs) if b > start)
    gd._chunked(DATA, recs, 64, "materials", lambda part: gd._tf_chunk(bb, part, 8, pad))
    ar.write_records(DATA / "materials_records.jsonl", recs, ar.FIELDS, t0)


if __name__ == "__main__":
    main()
