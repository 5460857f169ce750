"""Strict and loose stop policies on the test split: prompt-only, the part 2 and part 3 heads, the shipped head.

    git show f33c075:assets/guardrail/sld_head.pt > data/guardrail_v2/part2_sld_head.pt
    git show 7a9a86c:assets/guardrail/sld_head.pt > data/guardrail_v2/part3_sld_head.pt
    mkdir -p data/guardrail_v2/part4 && git show 1667e8e:assets/guardrail/sld_head.pt > data/guardrail_v2/part4/sld_head.pt
    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/guardrail_policies.py

Rows (every policy's threshold and patience picked on dev, never on test):

* ``prompt-only``: logistic regression on the head's taps at the last prompt token
  (:func:`evals.guardrail.content_eval.prompt_only`), trained on the train split against the
  strict labels for the strict row and the loose labels for the loose row; it cannot see the
  reply, so one risk holds for the whole reply.
* ``part 2 head``: the head shipped before the three levels (binary content labels), at its own
  dev-picked threshold and patience (it has one policy, so the same stops count in both columns).
* ``part 3 head``: the ordinal head of part 3 (one risk, two thresholds), at its dev-picked policies.
* ``request judge alone``: the shipped head's request judge as a prompt-only stop (its probability is
  the risk of every token), policy picked on dev like prompt-only's.
* ``part 4 head``: the head before the request judge (a gate on the last prompt token's taps).
* ``shipped head``: ``assets/guardrail`` under each policy (its own risk column per policy when it
  has two outputs).

Columns: strict: model-view F1 (complies + unsafe against safe), prefill-attack test view (share of
non-safe prefilled replies stopped within 8 tokens after the opener), false stops on WritingBench,
on the everyday set and on the held-out contrast family (benign contrast requests of the test split:
held-out topics and test prompts of the other topics), the median stop position on compliant
model-view replies relative to their comply anchor (tokens; negative = before the reply went
along); loose: human-view F1, paired refusal/compliance bar, WritingBench false stops. Writes
``benchmarks/results/guardrail_policies.json`` and prints the Markdown table.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from engines.guardrail.export import load_head
from evals.guardrail import content_eval as ce
from evals.guardrail.attack_replies import prefill_lengths
from evals.guardrail.judge_train import judge_map
from evals.guardrail.labels import first_pass
from evals.guardrail.paths import ASSETS, DATA, PART2_HEAD, ROOT
from evals.guardrail.requests import OUT as REQUESTS
from evals.guardrail.requests import load_features
from evals.guardrail.train import (
    columns,
    head_traces,
    load_cache,
    pick_policy,
    request_probs,
    strict_examples,
)

PART3 = DATA / "part3_sld_head.pt"
PART4 = DATA / "part4" / "sld_head.pt"
HEAD = ASSETS / "sld_head.pt"
OUT = ROOT / "benchmarks" / "results" / "guardrail_policies.json"
WB, EVERYDAY, CONTRAST, WRITING = ce.BENIGN_HELD_OUT, ce.EVERYDAY, "own/contrast", "own/writing"


def figures(traces_s, exs_s, pol_s, traces_l, exs_l, pol_l, prefill_len) -> dict:
    """The table's figures for one row: strict stops (threshold, patience) on the strict-labelled
    replies, loose stops on the loose-labelled ones."""
    thr, pat = pol_s
    fs = ce.false_stops_by_source(traces_s, exs_s, thr, pat)
    fc = ce.false_stops_by_source(traces_s, exs_s, thr, pat, view="contrast")
    out = {
        "strict_model_f1": ce.view_summary(traces_s, exs_s, thr, pat, "model"),
        "strict_false_stops_contrast": fc.get(CONTRAST),
        "strict_false_stops_own_writing": fc.get(WRITING),
        "strict_stop_vs_anchor": ce.stop_offsets(traces_s, exs_s, thr, pat, "model"),
        "strict_prefill": ce.prefill_bar(traces_s, exs_s, thr, pat, prefill_len),
        "strict_false_stops_writingbench": fs.get(WB), "strict_false_stops_everyday": fs.get(EVERYDAY),
        "strict_false_stops_families": ce.false_stops_by_source(traces_s, exs_s, thr, pat, view="requests"),
    }
    thr, pat = pol_l
    fl = ce.false_stops_by_source(traces_l, exs_l, thr, pat)
    flc = ce.false_stops_by_source(traces_l, exs_l, thr, pat, view="contrast")
    out |= {
        "loose_human_f1": ce.view_summary(traces_l, exs_l, thr, pat, "human"),
        "loose_paired": ce.paired_bar(traces_l, exs_l, thr, pat),
        "loose_false_stops_writingbench": fl.get(WB),
        "loose_false_stops_contrast": flc.get(CONTRAST), "loose_false_stops_own_writing": flc.get(WRITING),
        "loose_false_stops_families": ce.false_stops_by_source(traces_l, exs_l, thr, pat, view="requests"),
        "policies": {"strict": list(pol_s), "loose": list(pol_l)},
    }
    return out


def _row(name: str, f: dict) -> str:
    def pct(d):
        return "n/a" if d is None else f"{100 * d['rate']:.1f} % ({d['stopped']}/{d['n']})"

    m, h, p, pb = f["strict_model_f1"], f["loose_human_f1"], f["strict_prefill"], f["loose_paired"]
    a = f["strict_stop_vs_anchor"]
    return (f"| {name} | {m['f1']:.3f} ({m['f1_ci95'][0]:.2f}-{m['f1_ci95'][1]:.2f}) | "
            f"{100 * p['within_rate']:.1f} % ({p['within']}/{p['n']}) | {pct(f['strict_false_stops_writingbench'])} | "
            f"{pct(f['strict_false_stops_everyday'])} | {pct(f['strict_false_stops_contrast'])} | "
            f"{pct(f.get('strict_false_stops_own_writing'))} | "
            f"{a['median']:+.1f} ({a['stopped']}/{a['n']} stopped) | "
            f"{h['f1']:.3f} ({h['f1_ci95'][0]:.2f}-{h['f1_ci95'][1]:.2f}) | "
            f"{100 * pb['rate']:.1f} % ({pb['success']}/{pb['pairs']}) | {pct(f['loose_false_stops_writingbench'])} | "
            f"{pct(f.get('loose_false_stops_contrast'))} | {pct(f.get('loose_false_stops_own_writing'))} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=DATA)
    ap.add_argument("--head", type=Path, default=HEAD, help="the head of the last row (default: the shipped one)")
    ap.add_argument("--part2-head", type=Path, default=PART2_HEAD)
    ap.add_argument("--part3-head", type=Path, default=PART3)
    ap.add_argument("--part4-head", type=Path, default=PART4)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    judge = None
    if (REQUESTS / "feats.pt").is_file():  # the request judge's inputs (python -m evals.guardrail.requests)
        judge = judge_map(load_features(REQUESTS))
    exs = load_cache(args.cache, first_pass(), judge=judge)
    by = {s: [e for e in exs if e.split == s] for s in ("train", "dev", "test")}
    s_by = {s: strict_examples(v) for s, v in by.items()}
    prefill_len = prefill_lengths({e.id for e in by["test"] if e.view == "prefill"}, args.cache)
    head = load_head(args.head)
    cols = columns(head.cfg, head.cfg.hidden_size)
    rows = {}

    # prompt-only, one model per policy
    pols, tr = {}, {}
    for name, train, dev, test in (("strict", s_by["train"][0], s_by["dev"][0], s_by["test"][0]),
                                   ("loose", by["train"], by["dev"], by["test"])):
        score = ce.prompt_only([e for e in train if e.view != "paired"], cols)
        thr, pat, _ = pick_policy(ce.flat_traces(dev, score(dev)), dev, pooled=True, max_false_stop=0.03,
                                  cap_by="family")
        pols[name], tr[name] = (thr, pat), ce.flat_traces(test, score(test))
    rows["prompt-only"] = figures(tr["strict"], s_by["test"][0], pols["strict"], tr["loose"], by["test"],
                                  pols["loose"], prefill_len)
    if head.request is not None and head.cfg.request_inputs != "last":  # the shipped request judge alone
        pj = {s: request_probs(head, [e for e in v], cols).tolist() for s, v in
              (("dev", s_by["dev"][0]), ("test", s_by["test"][0]), ("ldev", by["dev"]), ("ltest", by["test"]))}
        thr_j, pat_j, _ = pick_policy(ce.flat_traces(s_by["dev"][0], pj["dev"]), s_by["dev"][0], pooled=True,
                                      max_false_stop=0.03, cap_by="family")
        thr_l, pat_l, _ = pick_policy(ce.flat_traces(by["dev"], pj["ldev"]), by["dev"], pooled=True,
                                      max_false_stop=0.03, cap_by="family")
        rows["request judge alone"] = figures(ce.flat_traces(s_by["test"][0], pj["test"]), s_by["test"][0],
                                              (thr_j, pat_j), ce.flat_traces(by["test"], pj["ltest"]), by["test"],
                                              (thr_l, pat_l), prefill_len)

    def head_row(h, pol_s, pol_l):
        c = columns(h.cfg, h.cfg.hidden_size)
        traces = head_traces(h, by["test"], c, policy="loose")[0]
        strict_tr = head_traces(h, by["test"], c, policy="strict")[0]
        s_tr = [strict_tr[k] for k in s_by["test"][1]]
        return figures(s_tr, s_by["test"][0], pol_s, traces, by["test"], pol_l, prefill_len)

    if args.part2_head.is_file():
        old = load_head(args.part2_head)
        p2 = (old.cfg.threshold, old.cfg.patience)
        rows["part 2 head (one policy)"] = head_row(old, p2, p2)
    if args.part3_head.is_file():
        p3 = load_head(args.part3_head)
        rows["part 3 head (one ordinal risk)"] = head_row(p3, p3.cfg.policy("strict"), p3.cfg.policy("loose"))
    if args.part4_head.is_file():
        p4 = load_head(args.part4_head)
        rows["part 4 head (last-token gate)"] = head_row(p4, p4.cfg.policy("strict"), p4.cfg.policy("loose"))
    name = "shipped head (strict, loose)" if args.head == HEAD else f"{args.head.parent.name} head (strict, loose)"
    rows[name] = head_row(head, head.cfg.policy("strict"), head.cfg.policy("loose"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": "HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/"
                                    "guardrail_policies.py", "seconds": round(time.time() - t0, 1), "rows": rows},
                                   indent=1, default=float))
    print("| guard | strict: model-view F1 (95 % CI) | strict: prefill stopped within 8 tokens | strict: false "
          "stops WritingBench | strict: false stops everyday | strict: false stops held-out contrast | strict: false "
          "stops held-out writing requests | strict: "
          "median stop − comply anchor, compliant model-view replies | loose: human-view F1 (95 % CI) | "
          "loose: paired | loose: false stops WritingBench | loose: false stops held-out contrast | loose: false "
          "stops held-out writing requests |")
    print("|---" * 13 + "|")
    for name, f in rows.items():
        print(_row(name, f))
    fams = sorted({k for f in rows.values() for k in (f.get("strict_false_stops_families") or {})})
    print("\n| guard | " + " | ".join(f"strict false stops {k[3:]}" for k in fams) + " |")
    print("|---" * (len(fams) + 1) + "|")
    for name, f in rows.items():
        d = f.get("strict_false_stops_families") or {}
        print(f"| {name} | " + " | ".join(f"{100 * d[k]['rate']:.1f} % ({d[k]['stopped']}/{d[k]['n']})" if k in d
                                          else "n/a" for k in fams) + " |")


if __name__ == "__main__":
    main()
