"""Rule-pack step labels for the application corpus: semgrep, run by the engine's own runner with
a given rules folder, over the whole files of ``data/codeprm/app_files.jsonl`` (train and dev
repositories), each file's findings turned into labels of the engine's steps.

Usage::

    nice -n 10 .venv/bin/python -m evals.codeprm.app_labels                       # CodeShield rules
    nice -n 10 .venv/bin/python -m evals.codeprm.app_labels --rules <rule folder>  # e.g. a taint pack
        # -> data/codeprm/app_taint_labels.jsonl

One line per file::

    {"id": "owner/name:path", "repo": ..., "split": "train", "kind": ..., "path": ..., "commit": ...,
     "rules": "<folder name>@<sha256 of its rule files, 12 hex>", "lines": 120,
     "findings": [[line, cwe, rule, severity, taint], ...],
     "steps": [[start, end, label], ...]}

A step is labelled 1 when a finding lies on one of its lines (``taint`` says whether the rule
runs in semgrep's taint mode). The CWE of a finding is the rule's own (any ``cwe`` key of its
metadata), else the runner's. Test repositories are never labelled here: they are read once, by
the benchmark.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path

from engines.codeprm.lines import count_lines
from engines.codeprm.parsing import prepare
from engines.codeprm.steps import split_steps, step_of
from engines.common.paths import REPO_ROOT
from evals.codeprm.apps import FILES_OUT

OUT = REPO_ROOT / "data" / "codeprm" / "app_taint_labels.jsonl"
CWE_RE = re.compile(r"CWE-(\d+)")


def rule_files(rules: Path) -> list[Path]:
    """The YAML rule files of a folder (recursively), sorted."""
    return sorted(p for p in rules.rglob("*") if p.suffix in (".yml", ".yaml") and p.is_file())


def rules_tag(rules: Path) -> str:
    """``<folder name>@<first 12 hex of the sha256 of its rule files>``: which pack labelled."""
    h = hashlib.sha256()
    for p in rule_files(rules):
        h.update(p.relative_to(rules).as_posix().encode())
        h.update(p.read_bytes())
    return f"{rules.name}@{h.hexdigest()[:12]}"


def rule_meta(rules: Path) -> dict[str, tuple[int, bool]]:
    """Rule id -> (CWE from its metadata or 0, whether it runs in taint mode)."""
    import yaml

    out = {}
    for p in rule_files(rules):
        try:
            doc = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError:
            continue
        for r in doc.get("rules", []) if isinstance(doc, dict) else []:
            meta = r.get("metadata", {}) or {}
            cwes = [m for k, v in meta.items() if "cwe" in k.lower() for m in CWE_RE.findall(json.dumps(v))]
            out[str(r.get("id", ""))] = (int(cwes[0]) if cwes else 0, r.get("mode") == "taint")
    return out


def semgrep_findings(codes: list[str], rules: Path, timeout_s: float = 1800.0) -> list[list[tuple]]:
    """(line, cwe, rule, message, severity) of each piece of code under the rules of ``rules``,
    from the engine's semgrep runner (``analysers.codeshield.SemgrepRun``: one offline process, the
    scan's own line numbering). The runner reads its rules from ``RULES_DIR/semgrep``; a runner
    that takes ``rules=`` is given the folder directly, otherwise the folder is copied under a
    temporary ``RULES_DIR`` for the call."""
    import inspect

    from engines.codeprm.analysers import codeshield as cs

    if "rules" in inspect.signature(cs.SemgrepRun).parameters:
        return cs.SemgrepRun(codes, timeout_s=timeout_s, rules=rules).result()
    with tempfile.TemporaryDirectory(prefix="codeprm_rules_") as tmp:
        shutil.copytree(rules, Path(tmp) / "semgrep")
        old = cs.RULES_DIR
        cs.RULES_DIR = Path(tmp)
        try:
            run = cs.SemgrepRun(codes, timeout_s)
        finally:
            cs.RULES_DIR = old
        return run.result()


def label_file(code: str, hits: list[tuple], meta: dict[str, tuple[int, bool]], max_step_lines: int = 8) -> dict:
    """Findings and step labels of one prepared file."""
    spans = split_steps(code, max_step_lines)
    findings = []
    hot = set()
    for line, cwe, rule, _msg, sev in sorted(hits):
        rcwe, taint = meta.get(rule, (0, False))
        findings.append([line, rcwe or cwe, rule, sev, taint])
        k = step_of(spans, line)
        if k >= 0:
            hot.add(k)
    return {"findings": findings, "steps": [[s.start, s.end, int(k in hot)] for k, s in enumerate(spans)]}


def build(rules: Path, splits: tuple[str, ...] = ("train", "dev"), files: Path = FILES_OUT, out: Path = OUT,
          batch: int = 500, limit: int | None = None, log=print) -> dict:
    """Label every file of ``splits`` (test is refused) and write ``out``; returns counts."""
    if "test" in splits:
        raise ValueError("test repositories are read by the benchmark only; label train and dev")
    if not files.is_file():
        raise FileNotFoundError(f"{files} is missing: run `python -m evals.codeprm.apps --mirrors <snapshots>`")
    rows = []
    with open(files, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["split"] in splits:
                rows.append(r)
    rows = rows[:limit] if limit else rows
    tag, meta = rules_tag(rules), rule_meta(rules)
    counts = {"files": 0, "steps": 0, "positive_steps": 0, "findings": 0, "taint_findings": 0}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for a in range(0, len(rows), batch):
            part = rows[a:a + batch]
            codes = [prepare(r["code"]) for r in part]
            for r, code, hits in zip(part, codes, semgrep_findings(codes, rules)):
                lab = label_file(code, hits, meta)
                rec = {k: r[k] for k in ("id", "repo", "split", "kind", "path", "commit")}
                rec.update(rules=tag, lines=count_lines(code), **lab)
                fh.write(json.dumps(rec) + "\n")
                counts["files"] += 1
                counts["steps"] += len(lab["steps"])
                counts["positive_steps"] += sum(s[2] for s in lab["steps"])
                counts["findings"] += len(lab["findings"])
                counts["taint_findings"] += sum(f[4] for f in lab["findings"])
            log(f"{min(a + batch, len(rows))}/{len(rows)} files labelled")
    tmp.replace(out)
    return {"rules": tag, **counts}


def main(argv: list[str] | None = None) -> None:
    from engines.codeprm.analysers.codeshield import RULES_DIR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=Path, default=RULES_DIR / "semgrep", help="folder of semgrep rule files")
    ap.add_argument("--splits", nargs="+", default=["train", "dev"], choices=["train", "dev"])
    ap.add_argument("--files", type=Path, default=FILES_OUT)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--batch", type=int, default=500, help="files per semgrep process")
    ap.add_argument("--limit", type=int, default=None, help="label only the first N files")
    a = ap.parse_args(argv)
    print(json.dumps(build(a.rules, tuple(a.splits), a.files, a.out, a.batch, a.limit,
                           log=lambda m: print(m, flush=True))))


if __name__ == "__main__":
    main()
