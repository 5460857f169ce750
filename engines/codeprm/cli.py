"""``python -m engines.codeprm scan PATH [PATH ...] [--out results.sarif] [--json FILE]
[--backend onnx|torch|lm] [--no-analysers] [--partial] [--ray [ADDRESS]]``.

Scans .py files (folders recursively, hidden ones left out), with a progress bar on stderr,
prints one verdict line per file and writes SARIF 2.1.0 (to --out, default codeprm.sarif).
Files are read as text, never imported or executed. One Ray task per file under ``--ray`` (see
``engines.common.batch``); the model is loaded once per worker process. A file that cannot be
scanned (not Python, too large, unreadable) is reported in the summary and skipped.

Exit status: 0 every file scanned and safe, 1 at least one file called vulnerable, 2 bad usage,
3 at least one file could not be scanned.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from pathlib import Path

from engines.common.batch import (
    Item,
    add_ray_arguments,
    files_in,
    ray_address,
    run_batch,
)
from engines.common.errors import InputError


@functools.lru_cache(maxsize=4)
def _prm(backend: str, analysers: bool):
    """The shipped scorer, loaded once per process (and so once per Ray worker)."""
    from engines.codeprm.engine import CodePRM

    return CodePRM.load(backend=backend, fuse_analysers=analysers)


def scan_one(data: bytes, backend: str, analysers: bool, partial: bool):
    """Scan one file's bytes (UTF-8, undecodable bytes replaced): a :class:`ScanResult`."""
    return _prm(backend, analysers).scan(data.decode("utf-8", errors="replace"), partial=partial,
                                         analysers=analysers)


def _items(paths: list[str]) -> list[Item]:
    files: list[Path] = []
    for p in paths:
        files += files_in(Path(p), (".py",), recursive=True)
    return [Item(f.as_posix(), path=f) for f in files]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engines.codeprm", description="Step-level security scan of Python code.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scan", help="scan files or folders and write SARIF")
    sc.add_argument("paths", nargs="+")
    sc.add_argument("--out", default="codeprm.sarif", help="SARIF output path ('-' for stdout)")
    sc.add_argument("--json", dest="json_out", default=None, help="also write the scans as JSON here")
    sc.add_argument("--backend", choices=["onnx", "torch", "lm"], default="onnx",
                    help="onnx/torch: the fast path (distilled CNN); lm: SmolLM2 + step head (CUDA when present)")
    sc.add_argument("--no-analysers", action="store_true", help="the learned model alone (no bandit / CodeShield)")
    sc.add_argument("--partial", action="store_true", help="treat inputs as prefixes of unfinished code")
    sc.add_argument("--quiet", action="store_true", help="no progress bar")
    add_ray_arguments(sc)
    args = ap.parse_args(argv)

    from engines.codeprm.sarif import to_sarif

    try:
        items = _items(args.paths)
        rep = run_batch(scan_one, items, (args.backend, not args.no_analysers, args.partial),
                        ray=ray_address(args.ray), workers=args.workers, desc="scan", progress=not args.quiet)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scans = []
    for o in rep.outcomes:
        if not o.ok:
            continue
        r = dataclasses.replace(o.value, path=o.name)  # the scan ran on bytes; label it with its file
        scans.append(r)
        note = f"  [{r.syntax_error}]" if r.syntax_error else ""
        print(f"{o.name}: {r.verdict} (risk {r.risk:.3f}, threshold {r.threshold:.3f}, "
              f"{len(r.findings)} findings){note}")
    sarif = json.dumps(to_sarif(scans), indent=2)
    if args.out == "-":
        print(sarif)
    else:
        Path(args.out).write_text(sarif)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps([s.to_dict() for s in scans], indent=2))
    print(rep.summary("file") + ("" if args.out == "-" else f"\nSARIF 2.1.0 written to {args.out}"), file=sys.stderr)
    if rep.failed:
        return 3
    return 1 if any(s.verdict == "vulnerable" for s in scans) else 0
