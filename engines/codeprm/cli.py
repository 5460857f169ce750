"""``python -m engines.codeprm scan PATH [PATH ...] [--out results.sarif] [--json FILE]
[--backend onnx|torch] [--no-analysers] [--partial] [--ray [ADDRESS]]``.

Scans .py files (folders recursively, hidden ones left out), with a progress bar on stderr,
prints one verdict line per file and SARIF 2.1.0. Without ``--out`` (or with ``--out -``) the
SARIF goes to stdout, as bandit's and semgrep's reports do, and the verdict lines to stderr, so
stdout is one JSON document; with ``--out FILE`` the SARIF goes to FILE (kept up to date while
the scan runs) and the verdict lines to stdout. ``--out`` and ``--json`` are refused when they
name one of the inputs or a folder that does not exist; an existing report there is replaced.
Files are read as text, decoded as Python decodes source (PEP 263 coding cookie, BOM, else
UTF-8), never imported or executed; an entry named ``.py`` that is not a regular file (a named
pipe, a socket, a device) is reported and skipped, never opened. An empty file is clean. In one process, each analyser runs once over
the tree: one semgrep process over every file, started first, while bandit and the step model
work file by file here (``CodePRM.scan_many``); a file is done when every analyser has read it,
so a Ctrl-C before semgrep finishes leaves no file scanned. One Ray task per file under
``--ray`` (see ``engines.common.batch``); the model is loaded once per worker process. A file that
cannot be scanned (not Python, too large, unreadable, a broken symbolic link) is reported in the
summary and skipped. A file an analyser could not read (a rule timed out, bandit hit Python's
recursion limit, the parser gave up) is "incomplete" unless a step is flagged: its verdict line,
the JSON and the SARIF (``invocations[].toolExecutionNotifications``) say which analyser and why.

Exit status: 0 every file scanned and safe, 1 at least one file called vulnerable (every file
scanned, if only in part), 2 bad usage, 3 at least one file could not be scanned, or none is
vulnerable and one was read only in part ("incomplete"), 130 interrupted (Ctrl-C: the SARIF and
--json cover the files scanned by then, then one line).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engines.common.batch import (
    INTERRUPTED,
    Item,
    LiveReport,
    Outcome,
    Report,
    _progress,
    add_ray_arguments,
    check_output_file,
    files_in,
    interrupt_deferred,
    ray_address,
    refuse_input_as_output,
    run_batch,
    run_command,
    write_atomic,
)
from engines.common.errors import InputError


@functools.lru_cache(maxsize=4)
def _prm(backend: str, analysers: bool):
    """The shipped scorer, loaded once per process (and so once per Ray worker)."""
    from engines.codeprm.engine import CodePRM

    return CodePRM.load(backend=backend, fuse_analysers=analysers)


@dataclass(frozen=True)
class NotAFile:
    """The payload of an entry named ``.py`` that is not a regular file: reported by what it is,
    never opened (reading a named pipe would block)."""

    kind: str


def _kind(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    return ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file")


def _text(data) -> str:
    from engines.codeprm.source import decode

    if isinstance(data, NotAFile):
        raise InputError(f"skipped: {data.kind}, not a regular file (never opened)")
    return decode(data)


def scan_one(data: bytes, backend: str, analysers: bool, partial: bool, rule_timeout_s: float | None = None):
    """Scan one file's bytes (decoded as Python decodes source): a :class:`ScanResult`. An empty
    file is clean."""
    r = _prm(backend, analysers).scan_many([_text(data)], ["snippet.py"], partial, analysers,
                                           rule_timeout_s=rule_timeout_s)[0]
    if isinstance(r, InputError):
        raise r
    return r


def scan_tree(items: list[Item], backend: str, partial: bool, progress: bool, on_done,
              rule_timeout_s: float | None = None) -> Report:
    """Scan every file in one process, each analyser once over all of them (see the module
    docstring); the same :class:`Report` as ``run_batch`` gives."""
    from engines.common.errors import InputError as Refused

    prm = _prm(backend, True)
    t0 = time.perf_counter()
    outcomes: dict[int, Outcome] = {}
    loaded: list[tuple[int, str]] = []
    for i, it in enumerate(items):
        data = it.load()
        if isinstance(data, bytes):
            loaded.append((i, _text(data)))
        else:
            why = f"skipped: {data.kind}, not a regular file (never opened)" if isinstance(data, NotAFile) \
                else data.reason
            outcomes[i] = Outcome(it.name, False, error=why, kind="input", index=i)
    try:
        with _progress(len(loaded), "scan", progress) as bar:
            results = prm.scan_many([c for _, c in loaded], [items[i].name for i, _ in loaded], partial,
                                    progress=lambda k: bar.update(1), rule_timeout_s=rule_timeout_s)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM where the command turns it into one
        rep = Report([], time.perf_counter() - t0, "one process", 1, total=len(items), interrupted=True)
        rep.terminated = type(exc).__name__ == "Terminated"
        return rep
    for (i, _), r in zip(loaded, results):
        o = (Outcome(items[i].name, False, error=str(r), kind="input", index=i) if isinstance(r, Refused)
             else Outcome(items[i].name, True, r, index=i))
        with interrupt_deferred():
            on_done(items[i], o)
        outcomes[i] = o
    return Report([outcomes[i] for i in sorted(outcomes)], time.perf_counter() - t0, "one process", 1,
                  total=len(items))


def _items(paths: list[str]) -> list[Item]:
    """Every .py entry under ``paths`` (hidden ones aside): files and broken links are read (a
    broken link fails with its reason); a named pipe, socket or device is reported, never opened."""
    out: list[Item] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.suffix.lower() == ".py" and not f.is_dir()
                           and not any(part.startswith(".") for part in f.relative_to(path).parts))
            if not found:
                raise InputError(f"{path} holds no .py files")
        elif path.exists() and not path.is_file():
            found = [path]
        else:
            found = files_in(path, (".py",))
        out += [Item(f.as_posix(), payload=NotAFile(_kind(f))) if f.exists() and not f.is_file()
                else Item(f.as_posix(), path=f) for f in found]
    return out


def _output_files(args: argparse.Namespace, inputs: list[Path]) -> dict[str, Path]:
    """The files the scan will write ({flag: path}; stdout is not one), checked before any work:
    never an input, never a missing folder, never the same file twice."""
    outs = {flag: Path(v) for flag, v in (("--out", args.out), ("--json", args.json_out)) if v not in (None, "-")}
    for flag, path in outs.items():
        refuse_input_as_output(path, inputs, flag)
        check_output_file(path, flag)
    if len(outs) == 2 and os.path.realpath(outs["--out"]) == os.path.realpath(outs["--json"]):
        raise InputError("--out and --json name the same file; give two different files")
    return outs


def _verdict_line(name: str, r) -> str:
    note = f"  [{r.syntax_error}]" if r.syntax_error else ""
    failed = "".join(f"\n  not fully read: {f}" for f in r.failures)
    return (f"{name}: {r.verdict} (risk {r.risk:.3f}, threshold {r.threshold:.3f}, "
            f"{len(r.findings)} findings){note}{failed}")


def cmd_scan(args: argparse.Namespace) -> int:
    """Scan, write the SARIF (and --json) of what was scanned, and give the exit status."""
    from engines.codeprm.sarif import to_sarif

    items = _items(args.paths)
    outs = _output_files(args, [it.path or Path(it.name) for it in items])
    scans: dict[int, object] = {}  # item index -> ScanResult, so outputs are in input order under Ray too

    def sarif() -> str:
        return json.dumps(to_sarif([scans[i] for i in sorted(scans)]), indent=2)

    live = LiveReport(outs["--out"], sarif) if "--out" in outs else None
    if live:
        live.write()

    def done(item: Item, o: Outcome) -> None:
        if o.ok:
            scans[o.index] = dataclasses.replace(o.value, path=o.name)  # the scan ran on bytes; label it with its file
            if live:
                live.update()

    ray = ray_address(args.ray)
    if ray is None and not args.no_analysers:
        rep = scan_tree(items, args.backend, args.partial, not args.quiet, done, args.rule_timeout)
    else:
        rep = run_batch(scan_one, items, (args.backend, not args.no_analysers, args.partial, args.rule_timeout), ray=ray,
                        workers=args.workers, desc="scan", progress=not args.quiet, on_done=done)
    lines: TextIO = sys.stdout if live else sys.stderr  # with the SARIF on stdout, stdout holds only the SARIF
    with interrupt_deferred():
        for o in rep.outcomes:
            if o.ok:
                print(_verdict_line(o.name, scans[o.index]), file=lines)
        if live:
            live.write()
        else:
            print(sarif(), flush=True)
        if "--json" in outs:
            write_atomic(outs["--json"], json.dumps([scans[i].to_dict() for i in sorted(scans)], indent=2))
    where = f"SARIF 2.1.0 written to {live.path}" if live else "SARIF 2.1.0 on stdout"
    if rep.interrupted:
        what = "the SARIF" + (f" in {live.path}" if live else " on stdout")
        what += f" and {outs['--json']}" if "--json" in outs else ""
        print(rep.interrupted_line("file", what), file=sys.stderr)
        return INTERRUPTED
    print(f"{rep.summary('file')}\n{where}", file=sys.stderr)
    if rep.failed:
        return 3
    if any(s.verdict == "vulnerable" for s in scans.values()):
        return 1
    return 3 if any(s.failures for s in scans.values()) else 0


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < v <= 3600:
        raise argparse.ArgumentTypeError(f"give a number of seconds above 0 and at most 3600, got {text}")
    return v


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m engines.codeprm", description="Step-level security scan of Python code.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scan", help="scan files or folders and print or write SARIF")
    sc.add_argument("paths", nargs="+")
    sc.add_argument("--out", default=None,
                    help="write the SARIF to this file (replaced if it exists; default, or '-': stdout)")
    sc.add_argument("--json", dest="json_out", default=None, help="also write the scans as JSON here")
    sc.add_argument("--backend", choices=["onnx", "torch"], default="onnx",
                    help="runtime of the step model: onnxruntime or torch")
    sc.add_argument("--no-analysers", action="store_true", help="the learned model alone (no bandit / CodeShield)")
    sc.add_argument("--partial", action="store_true", help="treat inputs as prefixes of unfinished code")
    sc.add_argument("--quiet", action="store_true", help="no progress bar")
    sc.add_argument("--rule-timeout", type=_seconds, default=None, metavar="SECONDS",
                    help="seconds one semgrep rule may spend on one file before semgrep gives the file up "
                         "(reported on the file; default 10)")
    add_ray_arguments(sc)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run_command(lambda: cmd_scan(args))
