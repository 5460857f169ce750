"""The evaluation families of the code scanner, scored the same way for every method.

Families (each on one split; dev picks thresholds and the model's weight, test is read once):

* ``clean``: functions of the clean corpus (installed packages of that split) and the fixed
  versions of that split's fix pairs: the share flagged (lower is better);
* ``fix pairs``: pair ranking (vulnerable riskier than its fix, ties half) and verdict pairs
  (vulnerable flagged and fix cleared);
* ``small-diff pairs``: the fix pairs with one function, at most 10 changed lines and a CWE the
  analysers cover; the same two measures;
* ``prefixes``: analyser-labelled lines in prefixes cut mid-function that do not parse (where
  bandit sees nothing): line AUROC; and the share of the unlabelled prefixes flagged;
* ``cyberseceval`` (test only): line AUROC on the shared CyberSecEval Python cases.

Methods: each analyser alone, the analysers together (confident findings), the model alone and
the fused scanner. A method gives per-step risks; the file risk is the paper's soft minimum.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engines.codeprm.analysers import BANDIT_CWE, bandit_findings, codeshield_findings
from engines.codeprm.config import PRMConfig
from engines.codeprm.engine import aggregate, parse_once
from engines.codeprm.findings import Finding
from engines.codeprm.fusion import flagged_steps, fuse_steps
from engines.codeprm.steps import Span, split_steps
from engines.common.paths import REPO_ROOT
from evals.codeprm.pairs import FixPair, load_pairs
from evals.codeprm.step_labels import pair_lines

CORPUS = REPO_ROOT / "data" / "codeprm" / "corpus.jsonl"
REPO_CORPUS = REPO_ROOT / "data" / "codeprm" / "repo_corpus.jsonl"
COVERED_CWES = set(BANDIT_CWE.values()) | {22, 79, 89, 918}
ANALYSER_METHODS = ("bandit", "bandit (any result)", "CodeShield", "analysers")
METHODS = ANALYSER_METHODS + ("model alone", "fused")


@dataclass
class Code:
    """One piece of code with its steps, analyser findings and (once scored) model step risks."""

    text: str
    spans: list[Span]
    findings: list[Finding]
    model: np.ndarray | None = None
    labels: set[int] = field(default_factory=set)  # labelled lines (prefix family)
    parses: bool = True


def make_codes(texts: list[str], cfg: PRMConfig) -> list[Code]:
    """Each text with its steps and its bandit + CodeShield findings, as the engine runs them
    (one parse, repair included)."""
    parsed = [parse_once(t) for t in texts]
    out = [Code(t, split_steps(t, cfg.max_step_lines), bandit_findings(t, p.pieces), parses=p.syntax_error is None)
           for t, p in zip(texts, parsed)]
    for c, cs in zip(out, codeshield_findings(texts)):
        c.findings.extend(cs)
    return out


def step_risks(method: str, c: Code, cfg: PRMConfig) -> np.ndarray:
    """Per-step risks of one method on one piece of code."""
    fs = c.findings
    if method == "bandit":
        return flagged_steps(c.spans, [f for f in fs if f.source == "bandit"])
    if method == "bandit (any result)":
        return flagged_steps(c.spans, [f for f in fs if f.source == "bandit"], confident_only=False)
    if method == "CodeShield":
        return flagged_steps(c.spans, [f for f in fs if f.source == "codeshield"])
    if method == "analysers":
        return flagged_steps(c.spans, fs)
    if method == "model alone":
        return np.asarray(c.model, float)
    w = cfg.model_weight if c.parses else cfg.prefix_model_weight
    return fuse_steps(c.model, flagged_steps(c.spans, fs), w)


def file_risk(method: str, c: Code, cfg: PRMConfig) -> float:
    return aggregate(step_risks(method, c, cfg), cfg)[0] if c.spans else 0.0


def flags(method: str, c: Code, cfg: PRMConfig, model_threshold: float, risk: float | None = None) -> bool:
    """The method's verdict on one piece of code (analysers: any finding of theirs); ``risk`` is
    its file risk when the caller has it already."""
    r = file_risk(method, c, cfg) if risk is None else risk
    if method in ANALYSER_METHODS:
        return r >= 0.5
    if method == "model alone":
        return r >= model_threshold
    return r >= cfg.threshold or bool(flagged_steps(c.spans, c.findings).any())


def line_auroc(method: str, codes: list[Code], cfg: PRMConfig) -> float:
    """AUROC of step risks (each non-blank line takes its step's risk) against labelled lines."""
    from sklearn.metrics import roc_auc_score

    s, y = [], []
    for c in codes:
        p = step_risks(method, c, cfg)
        lines = c.text.splitlines()
        for k, sp in enumerate(c.spans):
            for ln in range(sp.start, sp.end + 1):
                if ln <= len(lines) and lines[ln - 1].strip():
                    s.append(p[k])
                    y.append(ln in c.labels)
    return float(roc_auc_score(y, s)) if 0 < sum(y) < len(y) else float("nan")


# ------------------------------------------------------------------------------------- data
def load_corpus(path: Path, splits: tuple[str, ...]) -> list[dict]:
    return [r for r in map(json.loads, open(path)) if r["split"] in splits] if path.is_file() else []


def confident_lines(row: dict) -> set[int]:
    """Lines of a corpus function that hold a confident analyser finding (its stored raw results)."""
    from engines.codeprm.analysers.bandit import confident

    out = {ln for ln, tid, _c, sev, conf in row.get("bandit", []) if confident(tid, sev, conf)}
    return out | {ln for ln, _c, _r in row.get("codeshield", [])}


def small_diff(p: FixPair, max_changed: int = 10) -> bool:
    """One function, at most ``max_changed`` changed lines, a CWE the analysers cover."""
    removed, added, _ = pair_lines(p.before, p.after, p.vul_lines, p.fix_lines)
    cwes = {int(c[4:]) for c in p.cwe.split(";") if c.startswith("CWE-") and c[4:].isdigit()}
    return 0 < len(removed) + len(added) <= max_changed and bool(cwes & COVERED_CWES)


def cut_prefix(text: str, rng: random.Random) -> str | None:
    """A prefix of a function cut mid-function (inside a line past its first third) that does
    not parse, or None when no such cut is found."""
    lines = text.splitlines()
    if len(lines) < 4:
        return None
    for _ in range(4):
        k = rng.randint(max(2, len(lines) // 3), len(lines) - 1)
        last = lines[k - 1]
        cut = len(last) - len(last.lstrip()) + rng.randint(1, max(1, len(last.strip()) - 1))
        pre = "\n".join(lines[: k - 1] + [last[:cut]])
        if parse_once(pre).syntax_error is not None:
            return pre
    return None


def prefix_items(rows: list[dict], rng: random.Random, n_clean: int) -> list[tuple[str, set[int]]]:
    """(non-parsing prefix, its labelled lines) from every flagged function whose labelled line
    the prefix keeps whole, and from ``n_clean`` unflagged ones."""
    flagged = [r for r in rows if confident_lines(r)]
    clean = [r for r in rows if not confident_lines(r)]
    rng.shuffle(clean)
    out = []
    for r in flagged + clean[:n_clean]:
        pre = cut_prefix(r["code"], rng)
        if pre is None:
            continue
        n = len(pre.splitlines())
        out.append((pre, {ln for ln in confident_lines(r) if ln < n}))
    return out


@dataclass
class Families:
    """The data of every family on one split, analysed (model risks filled in by ``score``)."""

    split: str
    clean: list[Code]
    fix_versions: list[Code]
    pairs: list[tuple[Code, Code, bool]]  # (vulnerable, fixed, small-diff)
    prefixes: list[Code]
    cse: list[Code] = field(default_factory=list)
    cse_prefix: list[Code] = field(default_factory=list)


def build(split: str, cfg: PRMConfig, n_clean: int = 3000, n_prefix_clean: int = 1500, seed: int = 0,
          log=print) -> Families:
    """Load and analyse the families of ``split`` (CyberSecEval too when ``split == "test"``)."""
    rng = random.Random(seed)
    rows = load_corpus(CORPUS, (split,))
    pkg = rng.sample(rows, min(n_clean, len(rows)))
    clean = make_codes([r["code"] for r in pkg], cfg)
    log(f"{split}: {len(clean)} clean functions analysed")
    pairs = load_pairs(splits=(split,)) if (REPO_ROOT / "data" / "codeprm" / "fix_pairs.jsonl").is_file() else []
    vul = make_codes([p.before for p in pairs], cfg)
    fix = make_codes([p.after for p in pairs], cfg)
    log(f"{split}: {len(pairs)} fix pairs analysed")
    pre_rows = rows + load_corpus(REPO_CORPUS, (split,))
    items = prefix_items(pre_rows, rng, n_prefix_clean)
    prefixes = make_codes([t for t, _ in items], cfg)
    for c, (_, lab) in zip(prefixes, items):
        c.labels = lab
    log(f"{split}: {len(prefixes)} non-parsing prefixes ({sum(bool(c.labels) for c in prefixes)} labelled)")
    fam = Families(split, clean, fix, [(v, f, small_diff(p)) for v, f, p in zip(vul, fix, pairs)], prefixes)
    if split == "test":
        from evals.codeprm.cyberseceval import load_cases

        cases = load_cases()
        fam.cse = make_codes([c.code for c in cases], cfg)
        fam.cse_prefix = make_codes([c.prefix for c in cases], cfg)
        for c, k in zip(fam.cse + fam.cse_prefix, [c.target for c in cases] * 2):
            c.labels = {k}
    return fam


def all_codes(f: Families) -> list[Code]:
    return f.clean + f.fix_versions + [v for v, _, _ in f.pairs] + f.prefixes + f.cse + f.cse_prefix


def evaluate(f: Families, cfg: PRMConfig, model_threshold: float, methods=METHODS) -> dict[str, dict]:
    """Every family's measures for every method: {method: {measure: value}}."""
    out = {}
    for m in methods:
        vr = np.array([file_risk(m, v, cfg) for v, _, _ in f.pairs])
        fr = np.array([file_risk(m, x, cfg) for _, x, _ in f.pairs])
        vf = np.array([flags(m, v, cfg, model_threshold, r) for (v, _, _), r in zip(f.pairs, vr)], bool)
        ff = np.array([flags(m, x, cfg, model_threshold, r) for (_, x, _), r in zip(f.pairs, fr)], bool)
        small = np.array([s for _, _, s in f.pairs], bool)
        cl = [flags(m, c, cfg, model_threshold) for c in f.clean]
        cp = [flags(m, c, cfg, model_threshold) for c in f.prefixes if not c.labels]
        row = {
            "clean_flag_rate": float(np.mean(cl)) if cl else float("nan"),
            "clean_prefix_flag_rate": float(np.mean(cp)) if cp else float("nan"),
            "fix_version_flag_rate": float(ff.mean()) if len(ff) else float("nan"),
            "pair_ranking": float(np.mean((vr > fr) + 0.5 * (vr == fr))) if len(vr) else float("nan"),
            "verdict_pairs": float(np.mean(vf & ~ff)) if len(vf) else float("nan"),
            "small_diff_ranking": float(np.mean(((vr > fr) + 0.5 * (vr == fr))[small])) if small.any() else float("nan"),
            "small_diff_verdict_pairs": float(np.mean((vf & ~ff)[small])) if small.any() else float("nan"),
            "prefix_line_auroc": line_auroc(m, f.prefixes, cfg),
        }
        if f.cse:
            row["cse_line_auroc"] = line_auroc(m, f.cse, cfg)
            row["cse_prefix_line_auroc"] = line_auroc(m, f.cse_prefix, cfg)
        out[m] = row
    counts = {"clean": len(f.clean), "fix_pairs": len(f.pairs), "small_diff_pairs": int(sum(s for *_, s in f.pairs)),
              "prefixes": len(f.prefixes), "prefix_labelled_lines": int(sum(len(c.labels) for c in f.prefixes)),
              "cse_cases": len(f.cse)}
    return {"counts": counts, "methods": out}


# measure -> True when higher is better
MEASURES = {"clean_flag_rate": False, "clean_prefix_flag_rate": False, "fix_version_flag_rate": False, "pair_ranking": True, "verdict_pairs": True,
            "small_diff_ranking": True, "small_diff_verdict_pairs": True, "prefix_line_auroc": True,
            "cse_line_auroc": True, "cse_prefix_line_auroc": True}
