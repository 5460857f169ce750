"""Items of the step model's training and dev data: texts with labelled lines (a step holding one
is risky), whole or cut as a prefix being written.

Sources (by split; test repositories are never read here):

* application files with rule-pack labels (``data/codeprm/app_files.jsonl`` joined with
  ``data/codeprm/app_taint_labels.jsonl``, ``python -m evals.codeprm.app_labels --analysers taint
  settings``): each file whole, and cut at each labelled line: at its end and inside it (the step
  being written holds the sink to come, so it is risky), beside cuts inside other lines (lines that
  call a sink of some family first: the hard negatives, then others), whose labels are the
  labelled lines before the cut;
* application functions with their analyser labels (``data/codeprm/app_corpus.jsonl``: confident
  bandit and CodeShield findings), the ones flagged and a sample of the others;
* fix pairs (``data/codeprm/fix_pairs.jsonl``): the lines the fix changed are risky in the
  vulnerable version, nothing in the fixed one; both whole and cut inside the first changed line.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from engines.codeprm.cwe import sinks_in
from engines.codeprm.lines import code_lines_of, split_lines
from engines.codeprm.parsing import prepare
from evals.codeprm import families as F

LABELS = F.DATA / "app_taint_labels.jsonl"
FILES = F.DATA / "app_files.jsonl"
MID = (0.35, 0.5, 0.7)  # where inside a line a training cut falls (share of its characters after the indent)


@dataclass
class Item:
    """One text and its labelled lines; ``partial``: a prefix cut inside its last line."""

    text: str
    labels: set[int]
    partial: bool = False
    kind: str = "whole"
    weight: float = 1.0
    source: str = ""
    meta: dict = field(default_factory=dict)


def cut_at(text: str, line: int, frac: float | None) -> str:
    """``text`` up to ``line``: the whole line (``frac`` None) or ``frac`` of its characters after
    the indentation (at least one, never the whole line).

    >>> cut_at("a = 1\\n    b = f(x)\\nc\\n", 2, 0.5)
    'a = 1\\n    b = f'
    """
    lines = split_lines(text)
    last = lines[line - 1]
    if frac is not None:
        body = last.lstrip()
        k = min(max(1, round(len(body) * frac)), max(1, len(body) - 1))
        last = last[: len(last) - len(body) + k]
    return "\n".join(lines[: line - 1] + [last])


def window(item: Item, keep: int) -> Item:
    """A training item of at most ``keep`` lines: a prefix keeps its last ``keep`` lines (the
    model reads at most a window of tokens anyway), renumbered; a whole text is kept whole."""
    if not item.partial:
        return item
    lines = split_lines(item.text)
    off = max(0, len(lines) - keep)
    if not off:
        return item
    return Item("\n".join(lines[off:]), {x - off for x in item.labels if x > off}, True, item.kind, item.weight,
                item.source, item.meta)


def labelled_files(splits: tuple[str, ...], sources: tuple[str, ...] = ("taint", "settings")) -> list[dict]:
    """The application files of ``splits`` with their rule-pack findings: ``{"id", "repo", "split",
    "text", "lines": labelled lines, "findings": [[line, cwe, rule, ...], ...]}``."""
    if not LABELS.is_file() or not FILES.is_file():
        raise FileNotFoundError(f"{LABELS} or {FILES} is missing: run `python -m evals.codeprm.apps` and "
                                "`python -m evals.codeprm.app_labels --analysers taint settings`")
    labels = {}
    with open(LABELS, encoding="utf-8") as fh:
        for r in map(json.loads, fh):
            if r["split"] in splits:
                labels[r["id"]] = r
    out = []
    with open(FILES, encoding="utf-8") as fh:
        for r in map(json.loads, fh):
            lab = labels.get(r["id"])
            if lab is None:
                continue
            fs = [f for f in lab["findings"] if str(f[2]).split(":")[0] in sources]
            out.append({"id": r["id"], "repo": r["repo"], "split": r["split"], "text": prepare(r["code"]),
                        "lines": sorted({int(f[0]) for f in fs}), "findings": fs})
    return out


def file_items(f: dict, rng: random.Random, n_neg: int = 2, mids: tuple[float, ...] = MID,
               max_pos: int = 6) -> list[Item]:
    """A labelled file whole, cut at (up to ``max_pos`` of) its labelled lines (end, and inside at
    each of ``mids``), and cut inside ``n_neg`` other code lines (sink-calling lines first)."""
    text, lab = f["text"], set(f["lines"])
    lines = split_lines(text)
    out = [Item(text, lab, False, "whole", source=f["id"])]
    pos = sorted(lab)
    if len(pos) > max_pos:
        pos = sorted(rng.sample(pos, max_pos))
    for ln in pos:
        before = {x for x in lab if x <= ln}
        out.append(Item(cut_at(text, ln, None), before, True, "cut_end", source=f["id"], meta={"line": ln}))
        for m in mids:
            if len(lines[ln - 1].strip()) >= 2:
                out.append(Item(cut_at(text, ln, m), before, True, "cut_mid", source=f["id"], meta={"line": ln}))
    code = sorted(code_lines_of(lines) - lab)
    if code and n_neg:
        sinky = [ln for ln in code if sinks_in([lines[ln - 1]]) and len(lines[ln - 1].strip()) >= 2]
        rest = [ln for ln in code if ln not in set(sinky) and len(lines[ln - 1].strip()) >= 2]
        picks = rng.sample(sinky, min(len(sinky), n_neg))
        picks += rng.sample(rest, min(len(rest), n_neg - len(picks)))
        for ln in picks:
            kind = "cut_neg_sink" if ln in sinky else "cut_neg"
            out.append(Item(cut_at(text, ln, rng.choice(mids)), {x for x in lab if x < ln}, True, kind,
                            source=f["id"], meta={"line": ln}))
    return out


def analyser_items(rows: list[dict], rng: random.Random, n_clean: int) -> list[Item]:
    """Application functions with confident analyser findings (whole, and cut inside a flagged
    line) and ``n_clean`` unflagged ones (whole)."""
    flagged = [r for r in rows if F.confident_lines(r)]
    clean = [r for r in rows if not F.row_findings(r)]
    rng.shuffle(clean)
    out = []
    for r in flagged:
        text, lab = prepare(r["code"]), F.confident_lines(r)
        out.append(Item(text, lab, False, "analysers", source=r["id"]))
        ln = rng.choice(sorted(lab))
        out.append(Item(cut_at(text, ln, rng.choice(MID)), {x for x in lab if x <= ln}, True, "analysers_cut",
                        source=r["id"]))
    out += [Item(prepare(r["code"]), set(), False, "clean", source=r["id"]) for r in clean[:n_clean]]
    return out


def pair_items(pairs: list, rng: random.Random) -> list[Item]:
    """Each fix pair's vulnerable version (changed lines risky) and fixed version (nothing risky),
    whole and cut inside the first changed line."""
    from evals.codeprm.step_labels import pair_lines

    out = []
    for p in pairs:
        before, after = prepare(p.before), prepare(p.after)
        removed, _added, near = pair_lines(before, after, p.vul_lines, p.fix_lines)
        lab = removed | near
        out.append(Item(before, lab, False, "pair_vulnerable", source=p.uid))
        out.append(Item(after, set(), False, "pair_fixed", source=p.uid))
        nb = len(split_lines(before))
        first = min((x for x in lab if x <= nb), default=None)
        if first is not None and split_lines(before)[first - 1].strip():
            out.append(Item(cut_at(before, first, 0.5), {x for x in lab if x <= first}, True, "pair_cut",
                            source=p.uid))
    return out
