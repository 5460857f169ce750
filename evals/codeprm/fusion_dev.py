"""The fused scanner's dev choices for the step model with user-input marks
(``scripts/codeprm_train_marks.py``): where the
model may flag, at what threshold, and its weight in the order of steps. Dev repositories only;
test is never read here.

Dev families (each scanned once by the analysers, as a scan reads it; the model scored per
model; the choices then replay the engine's one scoring path, ``fusion.score_steps``):

* ``spots``: the hand-labelled dev spots (``app_spots.jsonl``): each labelled file whole (recall
  of the counted spots, false alarms per 1,000 lines), cut at the end and in the middle of each
  counted spot's line (the step being written flagged), and the safe twins;
* ``rule cuts``: dev application files cut at the end and in the middle of each line a rule pack
  flags on the whole file (at most 4 per file): the written step flagged;
* ``clean prefixes``: dev application files cut in the middle of a line no rule flags (one per
  file): the share with a step only the model flags;
* ``clean functions``: dev application functions (``app_corpus.jsonl``): the share flagged.

Choices: (1) the prefix threshold and the CWE families where the model may flag a prefix: among
thresholds whose model-only flags stay within 2 % of clean prefixes, the one with the most
model-only hits on the dev cuts (spots and rule cuts, middle and end), keeping the families where
those flags hit at least twice and at least half of the family's model-only flags (hits and clean
flags) are hits; every other family gets weight 0 in prefixes (the analysers only). (2) In code that
parses, the model flags in a family only where its own flags on the dev spot files and clean
functions are at least as precise as the analysers' there (at least 3 flags), within 1 false alarm
per 1,000 lines and 1 % of clean functions; else nowhere. (3) The model's weights in the order of
steps (0, 0.5, 1): the best line AUROC of step risks against the dev labels (whole files; prefixes).
"""
from __future__ import annotations

import json
import pickle
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from engines.codeprm.config import PRMConfig
from engines.codeprm.cwe import FAMILIES
from engines.codeprm.fusion import Scored
from engines.codeprm.lines import code_lines_of, split_lines
from evals.codeprm import app_measure as A
from evals.codeprm import families as F
from evals.codeprm import step_items as S
from evals.codeprm.app_spots import SPOTS, load_spots

CACHE = F.DATA / "dev_cache.pkl"
PREFIX_BUDGET = 0.02
FA_BAR = 1.0
CLEAN_BAR = 0.01
MIN_HITS = 2
MIN_PARSE_FLAGS = 3


def build(mirrors: str, seed: int = 0, n_clean: int = 3000, max_per_file: int = 4) -> dict:
    """Every dev family's texts, analysed once (cached in ``data/codeprm/dev_cache.pkl``)."""
    if CACHE.is_file():
        return pickle.loads(CACHE.read_bytes())
    rng = random.Random(seed)
    cfg = PRMConfig()
    spots = load_spots(SPOTS, ("dev",))
    files = A.labelled_files(spots, mirrors)
    cuts = A.cut_items(files)
    twins = A.twin_items(files)
    dev_files = S.labelled_files(("dev",))
    rule_cuts, clean_pre = [], []
    for f in dev_files:
        lines = split_lines(f["text"])
        lab = f["lines"]
        for ln in (rng.sample(lab, max_per_file) if len(lab) > max_per_file else lab):
            fam = next((int(x[1]) for x in f["findings"] if int(x[0]) == ln), 0)
            rule_cuts.append((ln, fam, S.cut_at(f["text"], ln, None), S.cut_at(f["text"], ln, 0.5)))
        free = sorted(code_lines_of(lines) - set(lab))
        free = [ln for ln in free if len(lines[ln - 1].strip()) >= 2]
        if free:
            ln = rng.choice(free)
            clean_pre.append((ln, S.cut_at(f["text"], ln, 0.5)))
    rng.shuffle(clean_pre)
    clean_pre = clean_pre[:1500]
    rows = F.load_corpus(F.APP_CORPUS, ("dev",))
    rng.shuffle(rows)
    clean_fn = [r["code"] for r in rows[:n_clean]]
    out = {
        "files": files, "cuts": cuts, "twins": twins, "rule_cuts": [(a, b) for a, b, _, _ in rule_cuts],
        "spot_whole": F.make_codes([f.text for f in files], cfg),
        "spot_end": F.make_codes([c[1] for c in cuts], cfg, partial=True),
        "spot_mid": F.make_codes([c[2] for c in cuts], cfg, partial=True),
        "twin_codes": F.make_codes([t[1] for t in twins], cfg),
        "rule_end": F.make_codes([c[2] for c in rule_cuts], cfg, partial=True),
        "rule_mid": F.make_codes([c[3] for c in rule_cuts], cfg, partial=True),
        "clean_pre": F.make_codes([c[1] for c in clean_pre], cfg, partial=True),
        "clean_fn": F.make_codes(clean_fn, cfg),
    }
    for c, (ln, _) in zip(out["clean_pre"], clean_pre):
        c.labels = set()
    for key in ("rule_end", "rule_mid"):
        for c, (ln, _, _, _) in zip(out[key], rule_cuts):
            c.labels = {ln}
    CACHE.write_bytes(pickle.dumps(out))
    return out


def codes_of(dev: dict) -> list:
    return [c for k in ("spot_whole", "spot_end", "spot_mid", "twin_codes", "rule_end", "rule_mid", "clean_pre",
                        "clean_fn") for c in dev[k]]


def flags_of(code, sc: Scored) -> A.Flags:
    """A scored code as the application benchmark reads a scan: flagged steps and flagging lines."""
    fl = A.Flags(code.spans)
    for k in np.flatnonzero(sc.flagged):
        fl.steps.add(int(k))
        sp = code.spans[k]
        fl.lines |= {f.line for f in code.findings if f.family and sp.start <= f.line <= sp.end}
        if k in sc.model_findings:
            fl.lines.add(sc.model_findings[k].line)
    return fl


def written(code, sc: Scored) -> bool:
    return bool(len(sc.flagged)) and bool(sc.flagged[-1])


def model_only(sc: Scored) -> np.ndarray:
    return sc.by_model & ~sc.by_analysers


def evaluate(dev: dict, cfg: PRMConfig, method: str = "fused") -> dict:
    """Every dev measure of one method and setting (and, per family, the model-only prefix flags:
    hits on the dev cuts and flags of clean prefixes)."""
    files, cuts, twins = dev["files"], dev["cuts"], dev["twins"]
    out: dict = {}
    sc = [c.scored(method, cfg) for c in dev["spot_whole"]]
    w = A.whole_measures(files, [flags_of(c, s) for c, s in zip(dev["spot_whole"], sc)])
    out.update(spot_whole_recall=w["recall"], false_alarms_per_kloc=w["false_alarms_per_kloc"])
    fam_hits: dict = defaultdict(lambda: [0, 0])  # family -> [model-only hits on cuts, model-only clean prefix flags]
    for key, codes in (("spot_end", dev["spot_end"]), ("spot_mid", dev["spot_mid"])):
        hits = []
        for c, item in zip(codes, cuts):
            s = c.scored(method, cfg)
            fl = flags_of(c, s)
            hit = fl.finds(item[0], upto=item[0].sink_line)[0]
            hits.append(hit)
            if hit and len(s.flagged) and model_only(s)[-1] and (len(s.flagged) - 1) in s.model_findings:
                fam_hits[s.model_findings[len(s.flagged) - 1].cwe][0] += 1
        out[f"{key}_recall"] = float(np.mean(hits)) if hits else float("nan")
    for key in ("rule_end", "rule_mid"):
        hits = []
        for c in dev[key]:
            s = c.scored(method, cfg)
            hit = written(c, s)
            hits.append(hit)
            k = len(s.flagged) - 1
            if hit and model_only(s)[-1] and k in s.model_findings:
                fam_hits[s.model_findings[k].cwe][0] += 1
        out[f"{key}_recall"] = float(np.mean(hits)) if hits else float("nan")
    pre = []
    for c in dev["clean_pre"]:
        s = c.scored(method, cfg)
        mo = model_only(s)
        pre.append(bool(mo.any()))
        for k in np.flatnonzero(mo):
            if int(k) in s.model_findings:
                fam_hits[s.model_findings[int(k)].cwe][1] += 1
    out["clean_prefix_model_flags"] = float(np.mean(pre)) if pre else 0.0
    out["clean_prefix_flagged"] = float(np.mean([c.scored(method, cfg).verdict == "vulnerable"
                                                 for c in dev["clean_pre"]]))
    out["clean_fn_flagged"] = float(np.mean([c.scored(method, cfg).verdict == "vulnerable" for c in dev["clean_fn"]]))
    tw = [A.twin_flagged(flags_of(c, c.scored(method, cfg)), t[2], t[3])[0] for c, t in zip(dev["twin_codes"], twins)]
    out["twins_flagged"] = float(np.mean(tw)) if tw else float("nan")
    out["per_family"] = {int(k): v for k, v in fam_hits.items()}
    return out


def line_auroc(codes: list, cfg: PRMConfig, labels: list[set[int]]) -> float:
    """AUROC of each code line's step risk against the labelled lines (lines with code only)."""
    from sklearn.metrics import roc_auc_score

    ys, ss = [], []
    for c, lab in zip(codes, labels):
        sc = c.scored("fused", cfg)
        for k, sp in enumerate(c.spans):
            for ln in range(sp.start, sp.end + 1):
                if ln in c.code:
                    ys.append(ln in lab)
                    ss.append(sc.risks[k])
    return float(roc_auc_score(ys, ss)) if 0 < sum(ys) < len(ys) else float("nan")


def choose(dev: dict, cfg: PRMConfig, log=print) -> tuple[PRMConfig, dict]:
    """The dev choices (see the module docstring) and the tables behind them."""
    an = evaluate(dev, cfg, "analysers")
    base = replace(cfg, model_flag_threshold=1.0, model_flag_cwes=(), prefix_flag_threshold=1.0, prefix_flag_cwes=())
    # (1) prefixes
    last = np.array([c.model[-1] for c in dev["clean_pre"] if c.model is not None and len(c.model)])
    grid = sorted(set(np.quantile(last, [0.9, 0.95, 0.97, 0.98, 0.99, 0.995]).round(4).tolist())) + [1.0]
    tried, best = [], None
    sinks = tuple(sorted(FAMILIES))
    for t in grid:
        c1 = replace(base, prefix_flag_threshold=float(t), prefix_flag_cwes=sinks)
        ev = evaluate(dev, c1)
        keep = tuple(sorted(f for f, (hit, bad) in ev["per_family"].items()
                            if hit >= MIN_HITS and hit >= bad))
        c2 = replace(c1, prefix_flag_cwes=keep)
        ev2 = evaluate(dev, c2) if keep else evaluate(dev, replace(c1, prefix_flag_threshold=1.0, prefix_flag_cwes=()))
        gain = sum(ev2[k] - an[k] for k in ("spot_mid_recall", "spot_end_recall", "rule_mid_recall", "rule_end_recall"))
        ok = ev2["clean_prefix_model_flags"] <= PREFIX_BUDGET + 1e-12
        tried.append({"prefix_threshold": t, "families_before_gate": {str(k): v for k, v in ev["per_family"].items()},
                      "kept": list(keep), "ok": ok, "gain": round(gain, 4),
                      **{k: round(v, 4) for k, v in ev2.items() if k != "per_family"}})
        log(json.dumps(tried[-1]))
        if ok and keep and (best is None or gain > best[0] + 1e-12):
            best = (gain, c2, ev2)
    chosen = best[1] if best else replace(base, prefix_flag_cwes=())
    # (2) code that parses
    parse_tab = {}
    fns = [c for c in dev["clean_fn"] if c.model is not None and len(c.model)]
    mx = np.array([c.model.max() for c in fns])
    for t in sorted(set(np.quantile(mx, [0.99, 0.995, 0.999]).round(4).tolist())):
        c3 = replace(chosen, model_flag_threshold=float(t), model_flag_cwes=sinks)
        ev = evaluate(dev, c3)
        an_fa, fu_fa = an["false_alarms_per_kloc"], ev["false_alarms_per_kloc"]
        gain = ev["spot_whole_recall"] - an["spot_whole_recall"]
        ok = fu_fa <= max(FA_BAR, an_fa) and ev["clean_fn_flagged"] <= max(CLEAN_BAR, an["clean_fn_flagged"]) \
            and ev["twins_flagged"] <= an["twins_flagged"] + 1e-12 and gain > 0
        parse_tab[str(t)] = {"ok": ok, "whole_recall_gain": round(gain, 4), "false_alarms_per_kloc": fu_fa,
                             "clean_fn_flagged": round(ev["clean_fn_flagged"], 4),
                             "twins_flagged": round(ev["twins_flagged"], 4)}
        log(json.dumps({"parse_threshold": t, **parse_tab[str(t)]}))
        if ok and gain > 0:
            chosen = replace(chosen, model_flag_threshold=float(t), model_flag_cwes=sinks)
            break
    # (3) weights in the order of steps
    whole_lab = [{ln for s in f.spots for ln in (s.sink_line, *s.flow_lines)} | {x for x in f.spot_lines()}
                 for f in dev["files"]]
    pre_codes = dev["rule_mid"] + dev["clean_pre"]
    aucs = {}
    for w in (0.0, 0.5, 1.0):
        aucs[f"whole w={w}"] = line_auroc(dev["spot_whole"], replace(chosen, model_weight=w), whole_lab)
        aucs[f"prefix w={w}"] = line_auroc(pre_codes, replace(chosen, prefix_model_weight=w),
                                           [c.labels for c in pre_codes])
    w = max((0.0, 0.5, 1.0), key=lambda v: (round(aucs[f"whole w={v}"], 4), -v))
    wp = max((0.0, 0.5, 1.0), key=lambda v: (round(aucs[f"prefix w={v}"], 4), -v))
    chosen = replace(chosen, model_weight=w, prefix_model_weight=wp)
    fused = evaluate(dev, chosen)
    return chosen, {"analysers": an, "fused": fused, "prefix_grid": tried, "parse_grid": parse_tab,
                    "line_auroc": {k: round(v, 4) for k, v in aucs.items()}}


def calibrate(out: Path, mirrors: str, threads: int = 1, log=print) -> dict:
    """Score dev with the step model in ``out``, make the dev choices and write
    ``out/calibration.json``."""
    import torch
    from safetensors.torch import load_file

    from engines.codeprm.model import StepScorer
    from engines.codeprm.tokens import Lexer

    torch.set_num_threads(threads)
    cfg_d = json.loads((out / "config.json").read_text())
    cfg = PRMConfig(**{k: v for k, v in cfg_d.items() if k in PRMConfig.__dataclass_fields__})
    model = StepScorer(cfg)
    model.load_state_dict(load_file(str(out / "model.safetensors")))
    lexer = Lexer(cfg.vocab_size, json.loads((out / "vocab.json").read_text()))
    dev = build(mirrors)
    F.score_model(model, cfg, lexer, codes_of(dev))
    chosen, tables = choose(dev, cfg, log)
    clean = [c.model.max() for c in dev["clean_fn"] if c.model is not None and len(c.model)]
    solo = budget_threshold(np.array(clean), 0.05)
    keys = ("model_weight", "prefix_model_weight", "model_flag_threshold", "model_flag_cwes", "prefix_flag_threshold",
            "prefix_flag_cwes")
    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in ((k, getattr(chosen, k)) for k in keys)}
    fams = {str(k): {"prefixes": "step model + analysers" if k in (chosen.prefix_flag_cwes or ()) else "analysers only",
                     "code that parses": "step model + analysers" if k in chosen.model_flag_cwes else "analysers only"}
            for k in sorted(FAMILIES)}
    training = json.loads((out / "training.json").read_text()) if (out / "training.json").is_file() else {}
    fig = {k: round(v, 4) for k, v in tables["fused"].items() if k != "per_family"}
    cal = {"tau": cfg.tau, "prefix_budget": PREFIX_BUDGET, "model": {"threshold": solo},
           "fused": {**settings, **fig}, "dev_analysers": {k: round(v, 4) for k, v in tables["analysers"].items()
                                                             if k != "per_family"},
           "families": fams, "dev_model_only_prefix_flags": {str(k): v for k, v in tables["fused"]["per_family"].items()},
           "prefix_grid": tables["prefix_grid"], "parse_grid": tables["parse_grid"],
           "line_auroc": tables["line_auroc"], "dev_counts": {k: len(dev[k]) for k in (
               "spot_whole", "spot_end", "spot_mid", "twin_codes", "rule_end", "rule_mid", "clean_pre", "clean_fn")},
           "training": training}
    (out / "calibration.json").write_text(json.dumps(cal, indent=2))
    log(json.dumps({k: cal[k] for k in ("fused", "dev_analysers", "families", "dev_counts")}, indent=1))
    return cal


def budget_threshold(risks: np.ndarray, budget: float) -> float:
    """The smallest threshold that flags at most ``budget`` of ``risks`` (risk >= t flags)."""
    r = np.sort(np.asarray(risks, float))[::-1]
    k = int(np.floor(budget * len(r)))
    return float(min(1.0, np.nextafter(r[k], 2.0))) if k < len(r) else 0.0
