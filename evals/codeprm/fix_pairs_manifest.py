"""Rebuild the fix pairs that ``assets/codeprm/sources.csv`` lists from the repositories' snapshots
alone, without the advisory database: each row names a repository, the fix commit, the file, the
function and its line ranges; the pair is that function before (the commit's parent) and after the
commit, cut by the same code as the full build (``fix_pairs.file_pairs``), so a rebuilt pair is
the built one. Rows whose snapshot is missing are skipped and counted.

    nice -n 10 .venv/bin/python -m evals.codeprm.fix_pairs_manifest --mirrors /work/.mirror --splits train
        # -> data/codeprm/fix_pairs.jsonl (the rows of those splits whose snapshots are there)

``--cwes`` keeps only pairs whose advisory names one of those CWEs.
"""
from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

from evals.codeprm.fix_pairs import FixPair, GitError, _dedent_block, file_pairs, find_mirror, show_file, to_json
from evals.codeprm.fix_pairs_build import DEFAULT_MANIFEST, DEFAULT_OUT


def rebuild(mirrors: str, splits: tuple[str, ...], out: Path = DEFAULT_OUT, manifest: Path = DEFAULT_MANIFEST,
            cwes: set[str] | None = None, log=print) -> dict:
    """Write the pairs of ``splits`` (and ``cwes``, e.g. {"CWE-89"}) found in the snapshots to
    ``out``; returns counts."""
    rows = [r for r in csv.DictReader(open(manifest, encoding="utf-8"))
            if r["split"] in splits and r["commit"] and (cwes is None or r["cwe"] in cwes)]
    counts: Counter = Counter()
    files: dict[tuple, tuple[str | None, str | None]] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for r in rows:
            gd = find_mirror(mirrors, r["repo"])
            if gd is None:
                counts["no snapshot"] += 1
                continue
            key = (gd, r["commit"], r["file"])
            if key not in files:
                try:
                    files[key] = (show_file(gd, f"{r['commit']}^", r["file"]), show_file(gd, r["commit"], r["file"]))
                except GitError:
                    files[key] = (None, None)
            b, a = files[key]
            if b is None or a is None:
                counts["commit or file missing"] += 1
                continue
            bl, al = b.splitlines(keepends=True), a.splitlines(keepends=True)
            hit = None
            for bs, a_s, rem, add in file_pairs(b, a):
                if bs.qualname == r["function"] and bs.start == int(r["before_start"]):
                    hit = (bs, a_s, rem, add)
                    break
            if hit is None:
                counts["function not found"] += 1
                continue
            bs, a_s, rem, add = hit
            p = FixPair(advisory=r["advisory"], repo=r["repo"], commit=r["commit"], file=r["file"],
                        function=bs.qualname, cwe=[r["cwe"]] if r["cwe"] else [], cwe_source=r["cwe_source"],
                        before_start=bs.start, before_end=bs.end, after_start=a_s.start, after_end=a_s.end,
                        before=_dedent_block(bl[bs.start - 1:bs.end]), after=_dedent_block(al[a_s.start - 1:a_s.end]),
                        vulnerable_lines=rem, fix_lines=add, summary="", origin=r["origin"], split=r["split"],
                        id=r["id"])
            fh.write(to_json(p) + "\n")
            counts["pairs"] += 1
    log(f"{counts['pairs']} of {len(rows)} listed pairs rebuilt ({dict(counts)})")
    return {"listed": len(rows), **counts}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--splits", nargs="+", default=["train"], choices=["train", "dev", "test"])
    ap.add_argument("--cwes", nargs="*", default=None, help="keep only these CWEs (CWE-89 ...)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    a = ap.parse_args(argv)
    print(json.dumps(rebuild(a.mirrors, tuple(a.splits), a.out, a.manifest, set(a.cwes) if a.cwes else None)))


if __name__ == "__main__":
    main()
