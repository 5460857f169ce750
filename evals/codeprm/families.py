"""The evaluation families of the code scanner, scored for every method by the engine's own
scoring path (``engines.codeprm.fusion.score_steps``; the analysers through
``analysers.run_analysers``, the same merge as a scan).

Families (each on one split; dev picks thresholds, weights and the model's flag gate, test is
read once):

* ``clean``: functions of the clean corpus (installed packages of that split): the share flagged;
* ``apps``: functions of real web applications and frameworks' example apps of that split
  (``evals.codeprm.apps``): the share flagged;
* ``fix pairs``: spot recall (a flagged step holds a line the fix changed), pair ranking
  (vulnerable riskier than its fix, ties half), verdict pairs (vulnerable flagged and fix
  cleared), the share of fixed versions flagged; the same on the small-diff subset;
* ``prefixes``: analyser-labelled lines in prefixes cut mid-function that do not parse: line
  AUROC; and the share of the unlabelled prefixes flagged;
* ``cut at labelled lines``: each fix pair's vulnerable version cut at the end and in the middle
  of each of its changed lines (the first five), scanned as a prefix: recall (the step being
  written is flagged), beside the whole version's recall of the same line; the fixed version cut
  at the same place: the share flagged;
* ``cyberseceval`` (test only): line AUROC and spot recall on the shared CyberSecEval cases.

Methods (``fusion.METHODS``): bandit (any result in the tab's families), bandit (confident
results), CodeShield, the analysers together, the model alone, the fused scanner.
"""
from __future__ import annotations

import difflib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engines.codeprm.analysers import findings_of, run_analysers
from engines.codeprm.config import PRMConfig
from engines.codeprm.cwe import FAMILIES, sinks_in
from engines.codeprm.findings import Finding
from engines.codeprm.fusion import METHODS, Scored, score_steps
from engines.codeprm.lines import code_lines, split_lines
from engines.codeprm.parsing import parse_once, prepare
from engines.codeprm.steps import Span, split_steps, step_of
from engines.common.paths import REPO_ROOT
from evals.codeprm.pairs import FixPair, load_pairs
from evals.codeprm.step_labels import pair_lines

DATA = REPO_ROOT / "data" / "codeprm"
CORPUS = DATA / "corpus.jsonl"
REPO_CORPUS = DATA / "repo_corpus.jsonl"
APP_CORPUS = DATA / "app_corpus.jsonl"
SINGLE = ("bandit", "CodeShield")  # the single analysers at any severity: the bar
CWE_NUMBERS = set(FAMILIES)


@dataclass
class Code:
    """One piece of code with its steps, merged analyser findings and (once scored) model risks."""

    text: str
    lines: list[str]
    spans: list[Span]
    code: set[int]
    findings: list[Finding]
    parses: bool = True
    model: np.ndarray | None = None
    hot: list[int] | None = None
    labels: set[int] = field(default_factory=set)  # labelled lines
    partial: bool = False  # a prefix: its last step is being written (scanned as ``partial=True``)

    def scored(self, method: str, cfg: PRMConfig) -> Scored:
        return score_steps(self.lines, self.spans, self.model, self.findings, cfg, self.parses, self.code, self.hot,
                           method, self.partial)


def make_codes(texts: list[str], cfg: PRMConfig, chunk: int = 4000, partial: bool = False) -> list[Code]:
    """Each text as a scan sees it: prepared, split, parsed once (repair included) and analysed
    (one semgrep call per ``chunk`` texts); ``partial``: prefixes being written."""
    texts = [prepare(t) for t in texts]
    out = []
    for a in range(0, len(texts), chunk):
        part = texts[a:a + chunk]
        parsed = [parse_once(t) for t in part]
        found = run_analysers(part, pieces=[p.pieces for p in parsed])
        out += [Code(t, split_lines(t), split_steps(t, cfg.max_step_lines), code_lines(t), fs, p.parses,
                     partial=partial) for t, p, fs in zip(part, parsed, found)]
    return out


# --------------------------------------------------------------------------------- the model
def collate(batch, cfg: PRMConfig):
    """(features, step labels, weight) items -> padded torch tensors for the step model:
    ids, parts, gidx, last, labels, weights (see :func:`model_inputs` for the model's inputs)."""
    x, y, w = model_inputs(batch, cfg)
    return (x[0], x[1], x[-2], x[-1], y, w)


def model_inputs(batch, cfg: PRMConfig):
    """(features, step labels, weight) items -> (the step model's inputs as a tuple: ids, parts,
    [marks with ``cfg.user_input``,] gidx, last), step labels, step weights."""
    import torch

    T = max(len(f.ids) for f, _, _ in batch)
    B = len(batch)
    ids = np.zeros((B, T), dtype=np.int64)
    parts = np.zeros((B, T, 3), dtype=np.int64)
    marks = np.zeros((B, T), dtype=np.int64)
    gidx, last, ys, ws = [], [], [], []
    for b, (f, y, w) in enumerate(batch):
        n = len(f.ids)
        ids[b, :n] = f.ids
        parts[b, :n] = f.parts
        if f.marks is not None:
            marks[b, :n] = f.marks
        gidx.append(np.where(f.gidx >= n, B * T, f.gidx + b * T))
        last.append(f.last + b * T)
        ys.append(y)
        ws.append(np.full(len(y), w, np.float32))
    x = (torch.from_numpy(ids), torch.from_numpy(parts)) + ((torch.from_numpy(marks),) if cfg.user_input else ()) + \
        (torch.from_numpy(np.concatenate(gidx)), torch.from_numpy(np.concatenate(last)))
    return x, torch.from_numpy(np.concatenate(ys)), torch.from_numpy(np.concatenate(ws))


def score_model(model, cfg: PRMConfig, lexer, codes: list[Code], batch: int = 32) -> None:
    """Fill each code's model step risks and hot lines with a torch step model (batched,
    shortest first); the same numbers ``CodePRM.model_risks`` gives one code at a time."""
    import torch

    from engines.codeprm.features import featurize

    model.eval()
    todo = [c for c in codes if c.spans]
    for c in codes:
        if not c.spans:
            c.model, c.hot = np.zeros(0), []
    feats = [featurize(c.text, cfg, lexer, c.spans) for c in todo]
    order = sorted(range(len(todo)), key=lambda i: len(feats[i].ids))
    with torch.inference_mode():
        for a in range(0, len(order), batch):
            idx = order[a:a + batch]
            items = [(feats[i], np.zeros(len(todo[i].spans), np.float32), 1.0) for i in idx]
            x, _, _ = model_inputs(items, cfg)
            logits, att = model(*x)
            p = torch.sigmoid(logits).double().numpy()
            att, gidx = att.numpy(), x[-2].numpy()
            T = x[0].shape[1]
            k = 0
            for b, i in enumerate(idx):
                f, n = feats[i], len(todo[i].spans)
                todo[i].model = p[k:k + n]
                hot = []
                for s in range(k, k + n):
                    row = gidx[s]
                    valid = row < len(idx) * T
                    local = row[valid] - b * T
                    hot.append(int(f.lines[local[int(np.argmax(att[s][valid]))]]) if valid.any() else todo[i].spans[s - k].start)
                todo[i].hot = hot
                k += n


# ------------------------------------------------------------------------------------- data
def load_corpus(path: Path, splits: tuple[str, ...]) -> list[dict]:
    return [r for r in map(json.loads, open(path)) if r["split"] in splits] if path.is_file() else []


def row_findings(row: dict) -> list[Finding]:
    """The analyser findings stored with a corpus row (bandit raw results, CodeShield lines);
    kept on the row once read."""
    if "_findings" in row:
        return row["_findings"]
    code = prepare(row["code"])
    fs = findings_of(row.get("bandit", []), len(split_lines(code)))
    fs += [Finding(ln, cwe, rule, "", "codeshield", "medium") for ln, cwe, rule in row.get("codeshield", [])]
    keep = code_lines(code)
    row["_findings"] = [f for f in fs if f.line in keep and f.family]
    return row["_findings"]


def confident_lines(row: dict) -> set[int]:
    """Lines of a corpus function holding a confident analyser finding (the step model's labels:
    bandit at severity and confidence >= medium, SQL building at any confidence, any CodeShield rule)."""
    return {f.line for f in row_findings(row) if f.confident}


def hard_negatives(rows: list[dict]) -> list[dict]:
    """Rows no analyser flags (at any severity) that call a sink of a family some flagged row of
    ``rows`` calls too: they share the positives' APIs, not their weakness."""
    flagged_fams = {f.family for r in rows for f in row_findings(r)}
    out = []
    for r in rows:
        if row_findings(r):
            continue
        fams = {s.family for s in sinks_in(split_lines(prepare(r["code"])))}
        if fams & flagged_fams:
            out.append(r)
    return out


def small_diff(p: FixPair, max_changed: int = 10) -> bool:
    """One function, at most ``max_changed`` changed lines, a CWE the analysers cover."""
    removed, added, _ = pair_lines(p.before, p.after, p.vul_lines, p.fix_lines)
    cwes = {int(c[4:]) for c in p.cwe.split(";") if c.startswith("CWE-") and c[4:].isdigit()}
    return 0 < len(removed) + len(added) <= max_changed and bool(cwes & CWE_NUMBERS)


def cut_prefix(text: str, rng: random.Random) -> str | None:
    """A prefix of a function cut mid-function (inside a line past its first third) that does
    not parse, or None when no such cut is found."""
    lines = split_lines(prepare(text))
    if len(lines) < 4:
        return None
    for _ in range(4):
        k = rng.randint(max(2, len(lines) // 3), len(lines) - 1)
        last = lines[k - 1]
        cut = len(last) - len(last.lstrip()) + rng.randint(1, max(1, len(last.strip()) - 1))
        pre = "\n".join(lines[: k - 1] + [last[:cut]])
        if not parse_once(pre).parses:
            return pre
    return None


def prefix_items(rows: list[dict], rng: random.Random, n_clean: int) -> list[tuple[str, set[int]]]:
    """(non-parsing prefix, its labelled lines) from every function with a confident finding
    (labelled where the prefix keeps the line whole), and from ``n_clean`` functions with no
    finding at any severity (the clean prefixes)."""
    flagged = [r for r in rows if confident_lines(r)]
    clean = [r for r in rows if not row_findings(r)]
    rng.shuffle(clean)
    out = []
    for r in flagged + clean[:n_clean]:
        pre = cut_prefix(r["code"], rng)
        if pre is None:
            continue
        n = len(split_lines(pre))
        out.append((pre, {ln for ln in confident_lines(r) if ln < n}))
    return out


def counterpart(before: str, after: str, line: int) -> int:
    """The line of ``after`` standing where ``line`` of ``before`` stood (its replacement, or
    the line before a deletion)."""
    a, b = split_lines(prepare(before)), split_lines(prepare(after))
    sm = difflib.SequenceMatcher(a=[x.strip() for x in a], b=[x.strip() for x in b], autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if i1 < line <= i2:
            if tag == "equal":
                return j1 + line - i1
            if tag == "replace":
                return j1 + min(line - i1, j2 - j1)
            return max(1, j1)
    return max(1, len(b))


def _cut(lines: list[str], k: int, mid: bool) -> str:
    last = lines[k - 1]
    if mid:
        body = last.lstrip()
        last = last[: len(last) - len(body) + max(1, len(body) // 2)]
    return "\n".join(lines[: k - 1] + [last])


def cut_items(pairs: list[FixPair], per_pair: int = 5) -> list[dict]:
    """Per fix pair, each of its first ``per_pair`` changed code lines: the vulnerable version cut
    at the end and in the middle of that line, and the fixed version cut at the same place."""
    out = []
    for p in pairs:
        before, after = prepare(p.before), prepare(p.after)
        removed, _, near = pair_lines(before, after, p.vul_lines, p.fix_lines)
        code = code_lines(before)
        bl, al = split_lines(before), split_lines(after)
        for k in sorted(ln for ln in removed if ln in code)[:per_pair]:
            j = counterpart(before, after, k)
            if not al[j - 1].strip():
                continue
            out.append({"line": k, "whole": before, "vul_end": _cut(bl, k, False), "vul_mid": _cut(bl, k, True),
                        "fix_end": _cut(al, j, False), "fix_mid": _cut(al, j, True)})
    return out


@dataclass
class Families:
    """The data of every family on one split, analysed (model risks filled in by ``score_model``)."""

    split: str
    clean: list[Code]
    apps: list[Code]
    fix_versions: list[Code]
    pairs: list[tuple[Code, Code, bool]]  # (vulnerable, fixed, small-diff)
    prefixes: list[Code]
    cuts: dict[str, list[Code]] = field(default_factory=dict)  # whole / vul_end / vul_mid / fix_end / fix_mid
    cse: list[Code] = field(default_factory=list)
    cse_prefix: list[Code] = field(default_factory=list)


def build(split: str, cfg: PRMConfig, n_clean: int = 3000, n_prefix_clean: int = 1500, n_apps: int = 10**6,
          seed: int = 0, log=print) -> Families:
    """Load and analyse the families of ``split`` (CyberSecEval too when ``split == "test"``)."""
    rng = random.Random(seed)
    rows = load_corpus(CORPUS, (split,))
    clean = make_codes([r["code"] for r in rng.sample(rows, min(n_clean, len(rows)))], cfg)
    app_rows = load_corpus(APP_CORPUS, (split,))
    apps = make_codes([r["code"] for r in rng.sample(app_rows, min(n_apps, len(app_rows)))], cfg)
    log(f"{split}: {len(clean)} clean functions, {len(apps)} application functions analysed")
    pairs = load_pairs(splits=(split,)) if (DATA / "fix_pairs.jsonl").is_file() else []
    vul = make_codes([p.before for p in pairs], cfg)
    fix = make_codes([p.after for p in pairs], cfg)
    for c, p in zip(vul, pairs):
        removed, _, near = pair_lines(c.text, prepare(p.after), p.vul_lines, p.fix_lines)
        c.labels = (removed | near) & c.code
    log(f"{split}: {len(pairs)} fix pairs analysed")
    items = prefix_items(rows + load_corpus(REPO_CORPUS, (split,)), rng, n_prefix_clean)
    prefixes = make_codes([t for t, _ in items], cfg, partial=True)
    for c, (_, lab) in zip(prefixes, items):
        c.labels = lab
    log(f"{split}: {len(prefixes)} non-parsing prefixes ({sum(bool(c.labels) for c in prefixes)} labelled)")
    cut = cut_items(pairs)
    cuts = {k: make_codes([it[k] for it in cut], cfg, partial=k != "whole")
            for k in ("whole", "vul_end", "vul_mid", "fix_end", "fix_mid")}
    for k in ("whole", "vul_end", "vul_mid"):
        for c, it in zip(cuts[k], cut):
            c.labels = {it["line"]}
    log(f"{split}: {len(cut)} cuts at changed lines of {len({it['whole'] for it in cut})} fix pairs")
    fam = Families(split, clean, apps, fix, [(v, f, small_diff(p)) for v, f, p in zip(vul, fix, pairs)], prefixes,
                   cuts)
    if split == "test":
        from evals.codeprm.cyberseceval import load_cases

        cases = load_cases()
        fam.cse = make_codes([c.code for c in cases], cfg)
        fam.cse_prefix = make_codes([c.prefix for c in cases], cfg, partial=True)
        for c, k in zip(fam.cse + fam.cse_prefix, [c.target for c in cases] * 2):
            c.labels = {k}
    return fam


def all_codes(f: Families) -> list[Code]:
    return (f.clean + f.apps + f.fix_versions + [v for v, _, _ in f.pairs] + f.prefixes
            + [c for cs in f.cuts.values() for c in cs] + f.cse + f.cse_prefix)


# ---------------------------------------------------------------------------------- measures
def line_auroc(scored: list[Scored], codes: list[Code]) -> float:
    """AUROC of step risks (each line with code takes its step's risk) against labelled lines."""
    from sklearn.metrics import roc_auc_score

    s, y = [], []
    for sc, c in zip(scored, codes):
        for k, sp in enumerate(c.spans):
            for ln in range(sp.start, sp.end + 1):
                if ln in c.code:
                    s.append(sc.risks[k])
                    y.append(ln in c.labels)
    return float(roc_auc_score(y, s)) if 0 < sum(y) < len(y) else float("nan")


def spot_recall(scored: list[Scored], codes: list[Code]) -> float:
    """Share of labelled pieces of code in which a flagged step holds a labelled line."""
    hits = [any(sc.flagged[step_of(c.spans, ln)] for ln in c.labels if step_of(c.spans, ln) >= 0)
            for sc, c in zip(scored, codes) if c.labels]
    return float(np.mean(hits)) if hits else float("nan")


def _rate(scored: list[Scored]) -> float:
    return float(np.mean([s.verdict == "vulnerable" for s in scored])) if scored else float("nan")


def model_only(scored: list[Scored], codes: list[Code], parses: bool = True) -> dict[int, list[int]]:
    """Per CWE family of the named sink: [model-only flags, those on a labelled step], over the
    codes that parse (or do not)."""
    out: dict[int, list[int]] = {}
    for sc, c in zip(scored, codes):
        if c.parses != parses:
            continue
        for k, f in sc.model_findings.items():
            row = out.setdefault(f.family, [0, 0])
            row[0] += 1
            row[1] += any(c.spans[k].start <= ln <= c.spans[k].end for ln in c.labels)
    return out


def analyser_precision(scored: list[Scored], codes: list[Code]) -> dict[int, list[int]]:
    """Per CWE family: [analyser-flagged steps, those on a labelled step], codes that parse."""
    out: dict[int, list[int]] = {}
    for sc, c in zip(scored, codes):
        if not c.parses:
            continue
        for k in np.flatnonzero(sc.by_analysers):
            sp = c.spans[k]
            fams = {f.family for f in c.findings if sp.start <= f.line <= sp.end and f.family}
            hit = any(sp.start <= ln <= sp.end for ln in c.labels)
            for fam in fams:
                row = out.setdefault(fam, [0, 0])
                row[0] += 1
                row[1] += hit
    return out


def empty_flags(scored: list[Scored], codes: list[Code]) -> int:
    """Flagged steps that hold no code (must be none)."""
    return sum(int(sc.flagged[k]) for sc, c in zip(scored, codes) for k, sp in enumerate(c.spans)
               if not any(sp.start <= ln <= sp.end for ln in c.code))


def evaluate(f: Families, cfg: PRMConfig, methods=METHODS) -> dict:
    """Every family's measures for every method: {"counts", "methods": {method: {measure: value}},
    "model_only", "analyser_precision", "empty_flags"}."""
    out, extra = {}, {}
    for m in methods:
        S = {name: [c.scored(m, cfg) for c in cs] for name, cs in
             (("clean", f.clean), ("apps", f.apps), ("fix", f.fix_versions), ("vul", [v for v, _, _ in f.pairs]),
              ("prefixes", f.prefixes), ("cse", f.cse), ("cse_prefix", f.cse_prefix))}
        C = {k: [c.scored(m, cfg) for c in cs] for k, cs in f.cuts.items()}
        vr = np.array([s.risk for s in S["vul"]])
        fr = np.array([s.risk for s in S["fix"]])
        vf = np.array([s.verdict == "vulnerable" for s in S["vul"]], bool)
        ff = np.array([s.verdict == "vulnerable" for s in S["fix"]], bool)
        small = np.array([s for _, _, s in f.pairs], bool)
        rank = (vr > fr) + 0.5 * (vr == fr)
        vul = [v for v, _, _ in f.pairs]
        row = {
            "clean_flag_rate": _rate(S["clean"]),
            "app_flag_rate": _rate(S["apps"]),
            "fix_version_flag_rate": float(ff.mean()) if len(ff) else float("nan"),
            "clean_prefix_flag_rate": _rate([s for s, c in zip(S["prefixes"], f.prefixes) if not c.labels]),
            "spot_recall": spot_recall(S["vul"], vul),
            "pair_ranking": float(rank.mean()) if len(rank) else float("nan"),
            "verdict_pairs": float((vf & ~ff).mean()) if len(vf) else float("nan"),
            "small_diff_ranking": float(rank[small].mean()) if small.any() else float("nan"),
            "small_diff_verdict_pairs": float((vf & ~ff)[small].mean()) if small.any() else float("nan"),
            "prefix_line_auroc": line_auroc(S["prefixes"], f.prefixes),
        }
        if f.cuts.get("whole"):
            row.update(cut_whole_recall=spot_recall(C["whole"], f.cuts["whole"]),
                       cut_end_recall=spot_recall(C["vul_end"], f.cuts["vul_end"]),
                       cut_mid_recall=spot_recall(C["vul_mid"], f.cuts["vul_mid"]),
                       cut_fixed_end_flag_rate=_rate(C["fix_end"]), cut_fixed_mid_flag_rate=_rate(C["fix_mid"]))
        if f.cse:
            row.update(cse_line_auroc=line_auroc(S["cse"], f.cse),
                       cse_prefix_line_auroc=line_auroc(S["cse_prefix"], f.cse_prefix),
                       cse_spot_recall=spot_recall(S["cse"], f.cse))
        out[m] = row
        parse_codes = f.clean + f.apps + f.fix_versions + vul
        parse_scored = S["clean"] + S["apps"] + S["fix"] + S["vul"]
        every = [c for cs in (f.clean, f.apps, f.fix_versions, vul, f.prefixes, f.cse, f.cse_prefix,
                              *f.cuts.values()) for c in cs]
        every_s = [s for ss in (S["clean"], S["apps"], S["fix"], S["vul"], S["prefixes"], S["cse"], S["cse_prefix"],
                                *C.values()) for s in ss]
        extra[m] = {"model_only_parsing": model_only(parse_scored, parse_codes),
                    "analyser_flags_parsing": analyser_precision(parse_scored, parse_codes),
                    "empty_flags": empty_flags(every_s, every)}
    counts = {"clean": len(f.clean), "apps": len(f.apps), "fix_pairs": len(f.pairs),
              "small_diff_pairs": int(sum(s for *_, s in f.pairs)), "prefixes": len(f.prefixes),
              "prefix_labelled_lines": int(sum(len(c.labels) for c in f.prefixes)),
              "cut_pairs": len(f.cuts.get("whole", [])), "cse_cases": len(f.cse)}
    return {"counts": counts, "methods": out, "flags": extra}


# measure -> True when higher is better
MEASURES = {"clean_flag_rate": False, "app_flag_rate": False, "fix_version_flag_rate": False,
            "clean_prefix_flag_rate": False, "spot_recall": True, "pair_ranking": True, "verdict_pairs": True,
            "small_diff_ranking": True, "small_diff_verdict_pairs": True, "prefix_line_auroc": True,
            "cut_whole_recall": True, "cut_end_recall": True, "cut_mid_recall": True,
            "cut_fixed_end_flag_rate": False, "cut_fixed_mid_flag_rate": False,
            "cse_line_auroc": True, "cse_prefix_line_auroc": True, "cse_spot_recall": True}
