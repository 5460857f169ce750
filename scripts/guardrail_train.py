"""Train the SLD guardrail head on the cached hidden states, pick the stop policy on dev,
evaluate on the held-out test split, export ONNX, and write assets (one command, seed 0).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/guardrail_train.py

Needs the content-labelled cache ``data/guardrail_v2`` (``make data-guardrail``: the data build,
the label merge and the train-split refusals). Writes ``assets/guardrail/``: ``sld_head.pt``
(config + weights), ``sld_step.onnx`` / ``sld_block.onnx`` / ``sld_init.onnx`` and ``metrics.json``
(training command, seed, dev-picked threshold/patience, test metrics per view and source, the
paired-reply bar, false stops per benign source, bootstrap intervals; see
:mod:`evals.guardrail.content_eval`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import torch

from engines.guardrail.export import export_onnx, load_head, load_members, save_head
from engines.guardrail.head import merge_heads
from evals.guardrail import content_eval as ce
from engines.guardrail.config import GuardConfig
from evals.guardrail import judge_train as jt
from evals.guardrail.attack_replies import prefill_lengths
from evals.guardrail.labels import first_pass
from evals.guardrail.options import add_fit_options, add_head_options, head_config
from evals.guardrail.paths import ASSETS, DATA
from evals.guardrail.train import (
    columns,
    dev_policies,
    dev_policy,
    dev_score,
    evaluate,
    fit_request_gate,
    goes_along_examples,
    head_traces,
    load_cache,
    strict_examples,
    train_head,
)


def _tag(args, group: str, n_train: int) -> str:
    """A short hash of everything a trained member depends on, so --members-dir never reuses a stale one."""
    keys = ("epochs", "lr", "lam_atc", "lam_pol", "pol_patience", "dropout", "weight_decay", "proj_dim", "state_dim",
            "layers", "pooled_dev", "cap_by", "max_false_stop", "view_weight", "ordinal")
    if group == "strict":
        keys += ("strict_target",)
    if group == "loose":
        keys += ("loose_views", "loose_cap_by", "loose_max_false_stop")
    blob = json.dumps([group, n_train] + [getattr(args, k) for k in keys])
    return hashlib.sha1(blob.encode()).hexdigest()[:10]


def _print_views(label: str, views: dict) -> None:
    """One line per test view: F1 with its bootstrap interval and the counts."""
    for v, d in views.items():
        print(f"{label} {v}: F1 {d['f1']:.3f} CI95 {d['f1_ci95'][0]:.3f}-{d['f1_ci95'][1]:.3f} "
              f"positives {d['positives']} negatives {d['negatives']}")


def _print_false_stops(label: str, stops: dict) -> None:
    """One line per benign source: replies stopped of those to its requests."""
    for src, d in stops.items():
        print(f"{label} {src}: {d['stopped']}/{d['n']} ({d['rate']:.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_fit_options(ap)
    ap.add_argument("--seeds", default="", help="comma-separated seeds: train one head per seed and ship their "
                    "logit-averaged ensemble, folded into one head (engines.guardrail.head.merge_heads)")
    ap.add_argument("--lam-atc", type=float, default=0.5)
    ap.add_argument("--lam-pol", type=float, default=0.0, help="weight of the stream-decision term of atc_loss")
    ap.add_argument("--pol-patience", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    add_head_options(ap, layers_help="decoder layers the head reads (of 9,15,21,30)")
    ap.add_argument("--proj-bits", type=int, choices=(4,), default=None,
                    help="ship the projection weights block-quantised to this many bits (engines.guardrail.quant, "
                    "onnxruntime MatMulNBits); the stop policy is re-picked on dev for them")
    ap.add_argument("--pooled-dev", action="store_true", help="pick epoch and stop policy by the F1 of all dev "
                    "replies together (the model view has too few harmful dev replies for a per-view mean)")
    ap.add_argument("--ordinal", action="store_true", help="train both stop policies (strict and loose) on one "
                    "ordinal risk with the three-level labels (evals/guardrail/level_labels.jsonl)")
    ap.add_argument("--levels", type=Path, nargs="*", default=None, help="three-level label files (first-pass rows "
                    "are used; default: evals/guardrail/level_labels.jsonl and contrast_labels.jsonl)")
    ap.add_argument("--max-false-stop", type=float, default=0.05,
                    help="cap on each dev view's share of stopped replies to benign requests")
    ap.add_argument("--view-weight", default="", help="per-view loss weights, e.g. human=2 (loose members)")
    ap.add_argument("--policy-heads", action="store_true", help="one group of seed members per policy (strict on "
                    "the three-level strict targets, loose on the loose labels), folded into one two-output head")
    ap.add_argument("--cap-by", choices=("view", "family"), default="view", help="apply the dev false-stop cap to "
                    "every dev view, or to every benign family (view and source)")
    ap.add_argument("--strict-target", choices=("levels", "goes-along"), default="levels", help="with --policy-heads: "
                    "the strict members' targets: the three-level strict labels, or whether the reply goes along "
                    "(replies to harmful requests only; the request gate, --gate, judges the request)")
    ap.add_argument("--loose-views", default="", help="with --policy-heads: train and pick the loose members on these "
                    "views only (e.g. model,human,forced: the part 2 recipe's data)")
    ap.add_argument("--loose-cap-by", choices=("view", "family"), default=None,
                    help="the loose members' epoch choice caps false stops by this (default: --cap-by)")
    ap.add_argument("--loose-max-false-stop", type=float, default=None,
                    help="the loose members' epoch choice caps false stops at this (default: --max-false-stop)")
    ap.add_argument("--gate", action="store_true", help="fit the request gate, P(the request is harmful) from the "
                    "last prompt token's taps, on the train requests (evals.guardrail.train.fit_request_gate); the "
                    "level each policy needs is picked on dev with its threshold and patience")
    ap.add_argument("--judge", action="store_true", help="fit the request judge (last token, user-token mean and "
                    "MiniLM; evals.guardrail.judge_train) on the request corpus v2's train split, its strict gate and "
                    "uncertain band on its dev split (run `python -m evals.guardrail.requests` first)")
    ap.add_argument("--strict-patiences", default=None, help="patiences strict's policy may use, e.g. 1,2,3 "
                    "(prefill attacks must stop within 8 tokens of the opener)")
    ap.add_argument("--judge-gate", choices=("requests", "replies"), default="requests",
                    help="with --judge: strict's gate is the judge's level picked on dev requests (requests), or is "
                    "picked on dev replies jointly with strict's threshold and patience, under the same per-family cap "
                    "on the replies' false stops (replies)")
    ap.add_argument("--band-recall", type=float, default=0.95, help="with --judge: the band's lower edge catches "
                    "this share of dev's harmful requests")
    ap.add_argument("--strict-members-from", type=Path, default=None, help="with --policy-heads: take the strict "
                    "members (the goes-along read-out) from this saved head instead of training them")
    ap.add_argument("--human-all", type=Path, default=None, help="add the train split's human-view replies of this "
                    "cache (data/guardrail_all: every human-labelled row, `python -m evals.guardrail.data --all-rows`) "
                    "that the main cache lacks")
    ap.add_argument("--members-dir", type=Path, default=None, help="keep trained members here and reuse them "
                    "(lets the two policy groups train in parallel processes)")
    ap.add_argument("--group", choices=("both", "strict", "loose"), default="both",
                    help="with --policy-heads and --members-dir: train only this group's members and stop")
    ap.add_argument("--dev-only", action="store_true", help="train and pick on dev, print the dev figures and stop "
                    "(no test split read, nothing written): for choosing settings")
    ap.add_argument("--out", type=Path, default=ASSETS)
    ap.add_argument("--cache", type=Path, default=DATA, help="feature cache (data/guardrail_all for the scaling run)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    levels = None
    if args.ordinal or args.policy_heads:
        levels = first_pass(*(args.levels or ()))
    judge = None
    if args.judge:
        from evals.guardrail.requests import OUT as CORPUS
        from evals.guardrail.requests import load_corpus, load_features

        corpus, feats = load_corpus(CORPUS), load_features(CORPUS)
        saved = (args.members_dir / f"judge_cap{args.max_false_stop}_band{args.band_recall}.pt"
                 if args.members_dir else None)
        if saved is not None and saved.is_file() and saved.stat().st_mtime > (CORPUS / "feats.pt").stat().st_mtime:
            judge = torch.load(saved, weights_only=False)  # fitted by an earlier run on these features
            print(f"request judge from {saved}: levels {judge['levels']}", flush=True)
        else:
            judge = jt.fit_and_pick(corpus, feats, cap=args.max_false_stop, band_recall=args.band_recall,
                                    log=lambda *a: print(*a, flush=True))
            if saved is not None:
                saved.parent.mkdir(parents=True, exist_ok=True)
                torch.save(judge, saved)
    exs = load_cache(args.cache, levels, judge=jt.judge_map(feats) if args.judge else None)
    view_weight = {k: float(v) for k, v in (kv.split("=") for kv in args.view_weight.split(",") if kv)} or None
    if args.human_all is not None:
        have = {e.id for e in exs}
        extra = [e for e in load_cache(args.human_all, levels, judge=jt.judge_map(feats) if args.judge else None)
                 if e.view == "human" and e.split == "train" and e.id not in have]
        print(f"{len(extra)} more train human-view replies from {args.human_all}", flush=True)
        exs += extra
    split = {s: [e for e in exs if e.split == s] for s in ("train", "dev", "test")}
    print({s: len(v) for s, v in split.items()}, f"loaded in {time.time() - t0:.1f}s", flush=True)
    cfg = head_config(args)
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    common = {"epochs": args.epochs, "lr": args.lr, "lam_atc": args.lam_atc, "weight_decay": args.weight_decay,
              "lam_pol": args.lam_pol, "pol_patience": args.pol_patience, "pooled_dev": args.pooled_dev,
              "max_false_stop": args.max_false_stop, "cap_by": args.cap_by, "log": lambda *a: print(*a, flush=True)}
    group_kw = {"one": {}, "strict": {}, "loose": {}}
    if args.policy_heads:  # one group of members per policy, each on its own targets
        targets = goes_along_examples if args.strict_target == "goes-along" else strict_examples
        loose_views = set(filter(None, args.loose_views.split(",")))
        in_loose = (lambda e: e.view in loose_views) if loose_views else (lambda e: True)
        groups = {"strict": targets(split["train"])[0], "loose": [e for e in split["train"] if in_loose(e)]}
        dev_sets = {"strict": targets(split["dev"])[0], "loose": [e for e in split["dev"] if in_loose(e)]}
        weights = {"strict": None, "loose": view_weight}
        group_kw["loose"] = {k: v for k, v in (("cap_by", args.loose_cap_by),
                                               ("max_false_stop", args.loose_max_false_stop)) if v is not None}
    else:
        groups, dev_sets, weights = {"one": split["train"]}, {"one": split["dev"]}, {"one": view_weight}
    members, infos = [], []
    for group, train in groups.items():
        if args.group not in ("both", group):
            continue  # another process trains that group (--members-dir)
        if group == "strict" and args.strict_members_from is not None:
            kept, counts = load_members(args.strict_members_from)
            members += kept[: counts[0]]
            infos += [{"group": "strict", "epoch": None, "dev_f1": float("nan"), "from": str(args.strict_members_from)}
                      for _ in kept[: counts[0]]]
            print(f"--- strict: {counts[0]} members from {args.strict_members_from}", flush=True)
            continue
        for seed in seeds:
            path = args.members_dir / f"{group}_seed{seed}_{_tag(args, group, len(train))}.pt" if args.members_dir else None
            if path is not None and path.is_file():  # trained by an earlier (or parallel) run of this command
                h, info = load_head(path), json.loads(path.with_suffix(".json").read_text())
                print(f"--- {group} seed {seed}: loaded {path}", flush=True)
            else:
                print(f"--- {group} seed {seed}", flush=True)
                h, info = train_head(cfg, train, dev_sets[group], seed=seed, ordinal=args.ordinal,
                                     view_weight=weights[group], **(common | group_kw[group]))
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    save_head(h, path)
                    path.with_suffix(".json").write_text(json.dumps({k: v for k, v in info.items() if k != "policies"}))
            members.append(h)
            infos.append(info | {"group": group})
    if args.group != "both" and args.policy_heads:
        print(f"trained the {args.group} members into {args.members_dir}", flush=True)
        return
    sizes = [sum(i["group"] == g for i in infos) for g in groups] if args.policy_heads else None
    head = members[0] if len(members) == 1 else merge_heads(members, outputs=sizes)
    if args.proj_bits:  # the deployed weights change, so the policies are picked on dev for them
        head = head.quantize_projection(args.proj_bits)
    gate_info = None
    if args.gate:  # fitted here; each policy's level is picked on dev below (0.5 until then)
        w, b, n_req = fit_request_gate(split["train"], columns(cfg, cfg.hidden_size))
        head.set_gate(w, b, 0.5, 0.5)
        gate_info = {"train_requests": n_req, "C": 0.1}
        print(f"request gate fitted on {n_req} train requests", flush=True)
    if judge is not None:
        lv = judge["levels"]
        head.set_gate(torch.tensor(judge["w"], dtype=torch.float32), judge["b"], lv["gate"], 0.0, lv["band"],
                      "last+mean+sentence")
        gate_info = {"inputs": "last+mean+sentence", **judge["fit"], "levels": lv}
    pick = {"pooled": args.pooled_dev, "max_false_stop": args.max_false_stop, "cap_by": args.cap_by}
    if args.ordinal or args.policy_heads:
        scored = {"loose": set(args.loose_views.split(","))} if args.loose_views else None
        fixed = None
        if judge is not None:
            fixed = {"strict": judge["levels"]["gate"], "loose": 0.0} if args.judge_gate == "requests" else {"loose": 0.0}
        pats = {"strict": tuple(int(x) for x in args.strict_patiences.split(","))} if args.strict_patiences else None
        pols = dev_policies(head, split["dev"], score_views=scored, gates=fixed, patiences=pats, **pick)
    else:
        thr, pat, reps = dev_policy(head, split["dev"], **pick)
        pols = {"loose": {"threshold": thr, "patience": pat, "dev_f1": dev_score(reps), "reps": reps}}
    for name, p in pols.items():
        print(f"{name} policy: dev F1 {p['dev_f1']:.4f} (thr {p['threshold']}, patience {p['patience']}, "
              f"request gate {p.get('gate', 0.0)})", flush=True)
    if args.dev_only:
        for name, p in pols.items():
            print(f"DEV {name}: " + ", ".join(f"{v} F1 {r['f1']:.3f} false-stop(benign) {r['false_stop_benign']:.3f}"
                                              for v, r in p["reps"].items()), flush=True)
        return
    cfg = head.cfg
    cfg.max_prompt_chars = GuardConfig().max_prompt_chars  # a serving limit: the engine's, not the reused members'
    cfg.threshold, cfg.patience = pols["loose"]["threshold"], pols["loose"]["patience"]
    if "strict" in pols:
        cfg.strict_threshold, cfg.strict_patience = pols["strict"]["threshold"], pols["strict"]["patience"]
    if head.request is not None:
        cfg.strict_gate, cfg.loose_gate = pols["strict"]["gate"], pols["loose"]["gate"]
        if cfg.strict_band >= cfg.strict_gate:  # a gate picked on replies below the band's edge leaves no band
            cfg.strict_band = 0.0
        gate_info |= {"strict": cfg.strict_gate, "loose": cfg.loose_gate, "band": cfg.strict_band}
    test_exs = split["test"]
    traces, _ = head_traces(head, test_exs, columns(cfg, cfg.hidden_size))
    strict_traces = head_traces(head, test_exs, columns(cfg, cfg.hidden_size), policy="strict")[0]
    test = evaluate(head, test_exs, cfg.threshold, cfg.patience)
    content = {
        "paired": ce.paired_bar(traces, test_exs, cfg.threshold, cfg.patience),
        "false_stops": ce.false_stops_by_source(traces, test_exs, cfg.threshold, cfg.patience),
        "false_stops_requests": ce.false_stops_by_source(traces, test_exs, cfg.threshold, cfg.patience, view="requests"),
        "views": {v: ce.view_summary(traces, test_exs, cfg.threshold, cfg.patience, v)
                  for v in sorted({e.view for e in test_exs})},
    }
    strict = None
    if "strict" in pols:
        s_exs, s_idx = strict_examples(test_exs)
        s_tr = [strict_traces[k] for k in s_idx]
        thr_s, pat_s = cfg.strict_threshold, cfg.strict_patience
        strict = {
            "views": {v: ce.view_summary(s_tr, s_exs, thr_s, pat_s, v) for v in sorted({e.view for e in s_exs})},
            "false_stops": ce.false_stops_by_source(s_tr, s_exs, thr_s, pat_s),
            "prefill": ce.prefill_bar(s_tr, s_exs, thr_s, pat_s, prefill_lengths({e.id for e in s_exs if e.view == "prefill"}, args.cache)),
            "false_stops_prefill": ce.false_stops_by_source(s_tr, s_exs, thr_s, pat_s, view="prefill"),
            "false_stops_contrast": ce.false_stops_by_source(s_tr, s_exs, thr_s, pat_s, view="contrast"),
            "false_stops_requests": ce.false_stops_by_source(s_tr, s_exs, thr_s, pat_s, view="requests"),
        }
    n_params = sum(p.numel() for p in head.parameters())
    args.out.mkdir(parents=True, exist_ok=True)
    save_head(head, args.out / "sld_head.pt", members=members if len(members) > 1 else None, outputs=sizes)
    export_onnx(head, args.out)
    metrics = {
        "command": ("HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/guardrail_train.py "
                    + " ".join(sys.argv[1:])).strip(),
        "hyper": {k: getattr(args, k) for k in ("dropout", "weight_decay", "proj_dim", "state_dim", "layers")},
        "seed": seeds[0] if len(seeds) == 1 else seeds, "epochs": args.epochs,
        "best_epoch": [i["epoch"] for i in infos], "member_dev_f1": [round(i["dev_f1"], 4) for i in infos],
        "lr": args.lr, "pooled_dev": args.pooled_dev,
        "lam_atc": args.lam_atc, "lam_pol": args.lam_pol, "pol_patience": args.pol_patience,
        "projection_bits": args.proj_bits, "ordinal": args.ordinal, "max_false_stop": args.max_false_stop,
        "policy_heads": args.policy_heads, "cap_by": args.cap_by, "member_groups": [i["group"] for i in infos],
        "strict_target": args.strict_target, "loose_views": args.loose_views, "request_gate": gate_info,
        "view_weight": view_weight,
        "params": n_params, "config": cfg.to_dict(),
        "counts": {s: {v: sum(e.view == v for e in lst) for v in sorted({e.view for e in exs})}
                   for s, lst in split.items()},
        "dev_policies": {k: {"threshold": p["threshold"], "patience": p["patience"], "dev_f1": round(p["dev_f1"], 4),
                             "views": {v: round(r["f1"], 4) for v, r in p["reps"].items()}} for k, p in pols.items()},
        "dev_mean_f1": pols["loose"]["dev_f1"], "threshold": cfg.threshold, "patience": cfg.patience,
        "test": test, "content": content, "strict": strict, "train_seconds": round(time.time() - t0, 1),
        "judge": None if judge is None else judge["report"],
    }
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    for v, r in test.items():
        print(f"TEST {v}: streaming F1 {r['f1']:.3f} P {r['precision']:.3f} R {r['recall']:.3f} "
              f"false-stop(benign) {r['false_stop_benign']:.3f} median latency {r['median_latency']} "
              f"offline resp F1 {r['offline_response']['f1']:.3f}")
    pb = content["paired"]
    print(f"PAIRED: {pb['success']}/{pb['pairs']} pairs ({pb['rate']:.3f}); compliant stopped {pb['compliant_stopped']}, "
          f"refusal finished {pb['refusal_finished']}")
    _print_false_stops("FALSE STOPS", content["false_stops"])
    _print_views("VIEW", content["views"])
    if strict:
        _print_views("STRICT VIEW", strict["views"])
        pf = strict["prefill"]
        print(f"STRICT PREFILL: {pf['within']}/{pf['n']} stopped within {pf['within_tokens']} tokens after the opener "
              f"({pf['within_rate']:.3f}); stopped at all {pf['stopped_rate']:.3f}")
        _print_false_stops("STRICT FALSE STOPS", strict["false_stops"])
        _print_false_stops("STRICT FALSE STOPS (contrast)", strict["false_stops_contrast"])
        _print_false_stops("STRICT FALSE STOPS (request families)", strict["false_stops_requests"])
    _print_false_stops("LOOSE FALSE STOPS (request families)", content["false_stops_requests"])
    if judge is not None:
        for s_name, rep in judge["report"].items():
            print(f"JUDGE {s_name}: AUROC {rep['auroc']} recall at gate {rep['recall_at_gate']} families "
                  + ", ".join(f"{k} {v['rate']:.3f}" for k, v in rep["families_at_gate"].items()))
    print(f"params {n_params:,}; wrote {args.out}")


if __name__ == "__main__":
    main()
