"""The application-spot family: the hand-labelled spots of ``app_spots.jsonl`` measured for three
methods, each as a user meets it.

Methods:

* ``bandit``: ``bandit -r`` (the command-line tool, every result at any severity and confidence)
  on the same text the engine reads;
* ``analysers``: the analysers as the engine runs them (a step the scan flags because an analyser
  finding lies in it: the model plays no part in those flags);
* ``fused``: the scanner as shipped (``CodePRM.scan_many``, the same path as ``scan DIR``).

Unit: the engine flags *steps*, so a spot is found when a flagged step holds its sink line (for
bandit: a step, as the engine splits the text, holding a bandit result). The stricter line unit
(a flagging finding within one line of the sink) is reported beside it.

Families (each on the labelled files of one split, read at the spot's commit from the snapshot):

* ``whole``: every labelled file: recall of the counted spots (taint and framework settings; logic
  flaws and other weaknesses are neutral: neither counted nor false alarms), and false alarms per
  1,000 lines: flagged steps that hold no labelled line (a sink line +-1 or a source line of any
  spot of the file);
* ``cut_end`` / ``cut_mid``: each counted spot's file cut at the end of its sink line, and in the
  middle of it (half of its characters after the indentation), scanned as a prefix being written
  (``partial=True``): the step being written is flagged (bandit reads the prefix as written);
* ``twins``: each safe twin (the file with the spot's fix applied): flagged when a flagged step
  overlaps the replaced lines and holds no other counted spot's sink line;
* ``unlabelled``: functions of the labelled files that hold no labelled line: the share flagged;
* ``clean_apps``: functions of the split's clean application family (``app_corpus.jsonl``,
  repositories not vulnerable by design): the share flagged.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from engines.codeprm.lines import split_lines
from engines.codeprm.parsing import prepare
from engines.codeprm.steps import Span, split_steps, step_of
from evals.codeprm.app_spots import SPOTS, Spot, apply_twin, load_spots, twin_span

METHODS = ("bandit", "analysers", "fused")
NEAR = 1  # the line unit's tolerance


class SnapshotMissing(RuntimeError):
    """A labelled repository has no snapshot under the mirrors folder."""


@dataclass
class LabelledFile:
    """One labelled file: its text as a scan reads it and its spots."""

    repo: str
    split: str
    commit: str
    path: str
    text: str
    spots: list[Spot]

    @property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    def spot_lines(self) -> set[int]:
        """Lines that belong to some labelled spot of this file (a sink +-1, its flow lines, a
        same-file source)."""
        out = set()
        for s in self.spots:
            out |= set(range(s.sink_line - NEAR, s.sink_line + NEAR + 1)) | set(s.flow_lines)
            if s.source_line is not None and not s.source_path:
                out.add(s.source_line)
        return out


@dataclass
class Flags:
    """What one method flags in one piece of code: flagged steps and the flagging lines."""

    spans: list[Span]
    steps: set[int] = field(default_factory=set)
    lines: set[int] = field(default_factory=set)

    def step_holds(self, line: int) -> bool:
        k = step_of(self.spans, line)
        return k >= 0 and k in self.steps

    def near(self, line: int, tol: int = NEAR) -> bool:
        return any(abs(x - line) <= tol for x in self.lines)

    def finds(self, spot: Spot, upto: int | None = None) -> tuple[bool, bool]:
        """(step unit, line unit): a flagged step holds the spot's sink line or one of its flow
        lines; a flagging line lies within one line of them (only lines up to ``upto`` exist)."""
        where = [ln for ln in (spot.sink_line, *spot.flow_lines) if upto is None or ln <= upto]
        return any(self.step_holds(ln) for ln in where), any(self.near(ln) for ln in where)


def git_dir(mirrors: str, repo: str) -> str:
    from evals.codeprm.fix_pairs import find_mirror

    d = find_mirror(mirrors, "github.com/" + repo)
    if d is None:
        raise SnapshotMissing(f"no snapshot of {repo} under {mirrors}")
    return d


def labelled_files(spots: list[Spot], mirrors: str) -> list[LabelledFile]:
    """The labelled files of ``spots``, read from their snapshots at the spots' commits."""
    from evals.codeprm.fix_pairs import git

    groups: dict[tuple, list[Spot]] = defaultdict(list)
    for s in spots:
        groups[(s.repo, s.split, s.commit, s.path)].append(s)
    out = []
    for (repo, split, commit, path), ss in sorted(groups.items()):
        text = prepare(git(git_dir(mirrors, repo), "show", f"{commit}:{path}"))
        out.append(LabelledFile(repo, split, commit, path, text, sorted(ss, key=lambda s: s.sink_line)))
    return out


def cut(text: str, line: int, mid: bool) -> str:
    """``text`` up to the end of ``line`` (``mid``: up to the middle of its characters after the
    indentation, at least one)."""
    lines = split_lines(text)
    last = lines[line - 1]
    if mid:
        body = last.lstrip()
        last = last[: len(last) - len(body) + max(1, len(body) // 2)]
    return "\n".join(lines[: line - 1] + [last])


# ------------------------------------------------------------------------------ the methods
def bandit_flags(texts: list[str], max_step_lines: int = 8) -> list[Flags]:
    """``bandit -r`` over the texts written as files (every result, any severity and
    confidence), mapped to the engine's steps of each text."""
    with tempfile.TemporaryDirectory(prefix="codeprm_apps_bandit_") as tmp:
        for i, t in enumerate(texts):
            (Path(tmp) / f"f{i}.py").write_text(t, encoding="utf-8")
        p = subprocess.run([sys.executable, "-m", "bandit", "-r", tmp, "-f", "json", "-q"], capture_output=True,
                           text=True, check=False)
        try:
            res = json.loads(p.stdout)
        except json.JSONDecodeError as exc:
            raise RuntimeError(f"bandit failed (exit {p.returncode}): {p.stderr[-300:]}") from exc
    hits: dict[int, set[int]] = defaultdict(set)
    for r in res.get("results", []):
        hits[int(Path(r["filename"]).stem[1:])].add(int(r["line_number"]))
    out = []
    for i, t in enumerate(texts):
        spans = split_steps(t, max_step_lines)
        f = Flags(spans, lines=hits.get(i, set()))
        f.steps = {k for k in (step_of(spans, ln) for ln in f.lines) if k >= 0}
        out.append(f)
    return out


def engine_flags(prm, texts: list[str], partial: bool = False) -> dict[str, list[Flags]]:
    """The shipped scanner over the texts in one ``scan_many`` call: per text, the steps the
    analysers flag and the steps the fused scanner flags (with their flagging lines)."""
    res = prm.scan_many(texts, [f"f{i}.py" for i in range(len(texts))], partial=partial)
    an, fu = [], []
    for r in res:
        if isinstance(r, Exception):
            an.append(Flags([]))
            fu.append(Flags([]))
            continue
        spans = [Span(s.start_line, s.end_line) for s in r.steps]
        a, f = Flags(spans), Flags(spans)
        for k, s in enumerate(r.steps):
            if "analysers" in s.driver:
                a.steps.add(k)
                a.lines |= {x.line for x in s.findings if x.source != "model" and x.family}
            if s.driver:
                f.steps.add(k)
                f.lines |= {x.line for x in s.findings if (x.source == "model" or x.family)}
        an.append(a)
        fu.append(f)
    return {"analysers": an, "fused": fu}


def all_flags(prm, texts: list[str], partial: bool = False) -> dict[str, list[Flags]]:
    out = engine_flags(prm, texts, partial)
    out["bandit"] = bandit_flags(texts, prm.cfg.max_step_lines)
    return out


# ------------------------------------------------------------------------------ the measures
def _rate(hits: list[bool]) -> float | None:
    return round(sum(hits) / len(hits), 4) if hits else None


def _breakdown(spots: list[Spot], hits: list[bool], key) -> dict[str, dict]:
    by: dict[str, list[bool]] = defaultdict(list)
    for s, h in zip(spots, hits):
        by[str(key(s))].append(h)
    return {k: {"n": len(v), "found": sum(v), "recall": _rate(v)} for k, v in sorted(by.items())}


def whole_measures(files: list[LabelledFile], flags: list[Flags]) -> dict:
    """Recall of the counted spots (step and line units, by category, CWE and flow) and false
    alarms per 1,000 lines of the labelled files."""
    spots, step_hits, line_hits = [], [], []
    fa_steps = fa_lines = n_lines = 0
    for lf, fl in zip(files, flags):
        n_lines += len(lf.lines)
        own = lf.spot_lines()
        for k in fl.steps:
            sp = fl.spans[k]
            if not any(sp.start <= ln <= sp.end for ln in own):
                fa_steps += 1
        fa_lines += sum(1 for ln in fl.lines if ln not in own)
        for s in lf.spots:
            if s.counted:
                spots.append(s)
                st, li = fl.finds(s)
                step_hits.append(st)
                line_hits.append(li)
    per_k = 1000.0 / n_lines if n_lines else float("nan")
    return {"spots": len(spots), "files": len(files), "lines": n_lines,
            "recall": _rate(step_hits), "recall_line": _rate(line_hits),
            "false_alarm_steps": fa_steps, "false_alarms_per_kloc": round(fa_steps * per_k, 3),
            "false_alarm_lines": fa_lines, "false_alarms_per_kloc_line": round(fa_lines * per_k, 3),
            "by_category": _breakdown(spots, step_hits, lambda s: s.category),
            "by_cwe": _breakdown(spots, step_hits, lambda s: f"CWE-{s.cwe}"),
            "by_flow": _breakdown(spots, step_hits, lambda s: s.flow),
            "found": [s.id for s, h in zip(spots, step_hits) if h]}


def cut_items(files: list[LabelledFile]) -> list[tuple[Spot, str, str]]:
    """(spot, cut at the end of its sink line, cut in the middle of it) for every counted spot."""
    return [(s, cut(lf.text, s.sink_line, False), cut(lf.text, s.sink_line, True))
            for lf in files for s in lf.spots if s.counted]


def twin_items(files: list[LabelledFile]) -> list[tuple[Spot, str, tuple[int, int], set[int]]]:
    """(spot, patched file, replaced lines in the patched file, other counted spots' sink lines
    moved to the patched file's numbering) for every spot with a twin in its own file."""
    out = []
    for lf in files:
        for s in lf.spots:
            if s.twin is None or s.twin.path != lf.path:
                continue
            lo, hi = twin_span(s.twin)
            shift = (hi - lo) - (s.twin.end_line - s.twin.start_line)
            others = set()
            for o in lf.spots:
                if o is s or not o.counted:
                    continue
                if o.sink_line < s.twin.start_line:
                    others.add(o.sink_line)
                elif o.sink_line > s.twin.end_line:
                    others.add(o.sink_line + shift)
            out.append((s, prepare(apply_twin(lf.text, s.twin)), (lo, hi), others))
    return out


def twin_flagged(fl: Flags, span: tuple[int, int], others: set[int]) -> tuple[bool, bool]:
    """(step unit, line unit): a flagged step overlapping the replaced lines and holding no other
    counted spot's sink; a flagging line inside the replaced lines."""
    lo, hi = span
    step = any(fl.spans[k].start <= hi and fl.spans[k].end >= lo
               and not any(fl.spans[k].start <= o <= fl.spans[k].end for o in others) for k in fl.steps)
    return step, any(lo <= ln <= hi for ln in fl.lines)


def functions_without_spots(files: list[LabelledFile]) -> list[str]:
    """Functions and methods of the labelled files that hold no labelled line."""
    from evals.codeprm.corpus import functions_of

    out = []
    for lf in files:
        own = lf.spot_lines()
        for _, first, code in functions_of(lf.text):
            last = first + len(split_lines(code)) - 1
            if not any(first <= ln <= last for ln in own):
                out.append(code)
    return out


def clean_app_functions(split: str, limit: int | None = None) -> list[str]:
    """Functions of the split's clean application family (``data/codeprm/app_corpus.jsonl``)."""
    from evals.codeprm.apps import OUT

    if not OUT.is_file():
        return []
    with open(OUT, encoding="utf-8") as fh:
        rows = [r["code"] for r in map(json.loads, fh) if r["split"] == split]
    return rows[:limit] if limit else rows


def verdict_rate(flags: list[Flags]) -> float | None:
    return _rate([bool(f.steps) for f in flags])


def measure(prm, split: str, mirrors: str, spots_path: Path = SPOTS, clean_limit: int | None = None,
            log=print) -> dict:
    """Every family of the application spots of ``split`` for every method (see the module
    docstring)."""
    spots = load_spots(spots_path, (split,))
    files = labelled_files(spots, mirrors)
    log(f"{split}: {len(spots)} spots ({sum(s.counted for s in spots)} counted) in {len(files)} files of "
        f"{len({f.repo for f in files})} repositories")
    out: dict = {"split": split, "repositories": sorted({f.repo for f in files}),
                 "spots": dict(Counter(s.category for s in spots)), "methods": {m: {} for m in METHODS}}
    whole = all_flags(prm, [f.text for f in files])
    for m in METHODS:
        out["methods"][m]["whole"] = whole_measures(files, whole[m])
    extra = [(lf, f.spans[k]) for lf, f, a in zip(files, whole["fused"], whole["analysers"]) for k in f.steps - a.steps]
    out["methods"]["fused"]["whole"]["model_only_flags"] = {
        "steps": len(extra), "on_labelled_lines": sum(any(sp.start <= ln <= sp.end for ln in lf.spot_lines())
                                                      for lf, sp in extra)}
    log(f"{split}: whole files scanned")
    cuts = cut_items(files)
    for key, idx in (("cut_end", 1), ("cut_mid", 2)):
        fl = all_flags(prm, [c[idx] for c in cuts], partial=True)
        for m in METHODS:
            found = [f.finds(c[0], upto=c[0].sink_line) for f, c in zip(fl[m], cuts)]
            step, line = [x[0] for x in found], [x[1] for x in found]
            out["methods"][m][key] = {"n": len(cuts), "recall": _rate(step), "recall_line": _rate(line),
                                      "by_category": _breakdown([c[0] for c in cuts], step, lambda s: s.category),
                                      "by_flow": _breakdown([c[0] for c in cuts], step, lambda s: s.flow)}
    log(f"{split}: {len(cuts)} cut pairs scanned")
    twins = twin_items(files)
    if twins:
        fl = all_flags(prm, [t[1] for t in twins])
        for m in METHODS:
            res = [twin_flagged(f, t[2], t[3]) for f, t in zip(fl[m], twins)]
            out["methods"][m]["twins"] = {"n": len(twins), "flag_rate": _rate([r[0] for r in res]),
                                          "flag_rate_line": _rate([r[1] for r in res]),
                                          "flagged": [t[0].id for t, r in zip(twins, res) if r[0]]}
    log(f"{split}: {len(twins)} safe twins scanned")
    for key, codes in (("unlabelled", functions_without_spots(files)),
                       ("clean_apps", clean_app_functions(split, clean_limit))):
        if not codes:
            continue
        fl = all_flags(prm, codes)
        for m in METHODS:
            out["methods"][m][key] = {"n": len(codes), "flag_rate": verdict_rate(fl[m])}
        log(f"{split}: {len(codes)} {key} functions scanned")
    return out


def markdown(results: dict) -> str:
    """One compact table: per split and method, the bars' figures."""
    head = ("| split | method | spots | whole recall (taint / settings / all) | false alarms / 1k lines | "
            "cut at line end | cut mid-line | safe twins flagged | unlabelled functions flagged | "
            "clean app functions flagged |")
    rows = [head, "|---" * 10 + "|"]
    names = {"bandit": "`bandit -r`, any severity", "analysers": "analysers (engine, model off)",
             "fused": "**fused (shipped)**"}

    def pct(v):
        return "-" if v is None else f"{100 * v:.1f} %"

    for split, r in results.items():
        for m in METHODS:
            x = r["methods"][m]
            w = x["whole"]
            cat = w["by_category"]
            rows.append(
                f"| {split} | {names[m]} | {w['spots']} | {pct(cat.get('taint', {}).get('recall'))} / "
                f"{pct(cat.get('settings', {}).get('recall'))} / {pct(w['recall'])} | {w['false_alarms_per_kloc']:.2f} | "
                f"{pct(x['cut_end']['recall'])} | {pct(x['cut_mid']['recall'])} | "
                f"{pct(x.get('twins', {}).get('flag_rate'))} | {pct(x.get('unlabelled', {}).get('flag_rate'))} | "
                f"{pct(x.get('clean_apps', {}).get('flag_rate'))} |")
    return "\n".join(rows)
