"""CLI: ``python -m engines.codeprm scan PATH [PATH ...] [--out results.sarif] [--json] [--backend onnx]``.

Scans .py files (folders recursively), prints one verdict line per file and writes SARIF 2.1.0
(to --out, default codeprm.sarif). Files are read as text, never imported or executed. Exit
status: 0 all safe, 1 at least one file called vulnerable, 2 bad usage.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engines.common.errors import InputError


def _files(paths: list[str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*.py") if not any(part.startswith(".") for part in f.parts))
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"no such file or folder: {p}")
    return out


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
    args = ap.parse_args(argv)

    from engines.codeprm.engine import CodePRM
    from engines.codeprm.sarif import to_sarif

    try:
        files = _files(args.paths)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prm = CodePRM.load(backend=args.backend, fuse_analysers=not args.no_analysers)
    scans = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
            r = prm.scan(text, partial=args.partial, path=f.as_posix(), analysers=not args.no_analysers)
        except InputError as exc:
            print(f"{f}: skipped ({exc})", file=sys.stderr)
            continue
        scans.append(r)
        note = f"  [{r.syntax_error}]" if r.syntax_error else ""
        print(f"{f}: {r.verdict} (risk {r.risk:.3f}, threshold {r.threshold:.3f}, "
              f"{len(r.findings)} findings){note}")
    sarif = json.dumps(to_sarif(scans), indent=2)
    if args.out == "-":
        print(sarif)
    else:
        Path(args.out).write_text(sarif)
        print(f"SARIF 2.1.0 written to {args.out}", file=sys.stderr)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps([s.to_dict() for s in scans], indent=2))
    return 1 if any(s.verdict == "vulnerable" for s in scans) else 0


if __name__ == "__main__":
    sys.exit(main())
