"""Batch commands of the panorama watermark (``python -m engines.watermark``).

``embed IN_DIR OUT_DIR --key K --message TEXT [--bits N] [--fit refuse|pad|resize] [--overwrite] [--ray [ADDRESS]]``
    writes a PNG into OUT_DIR for every panorama in IN_DIR (``p0.png`` -> ``p0.png``, any other
    format keeps its extension: ``p0.jpg`` -> ``p0.jpg.png``, so p0.jpg and p0.png never share an
    output) and ``OUT_DIR/report.csv`` (file, output, psnr and ws_psnr in dB, ssim, bits,
    min_margin, seconds, notes (what loading changed, e.g. an EXIF orientation applied, then the
    embedder's notes), error; one row per input). OUT_DIR may not be IN_DIR or hold any
    input, and existing files there are replaced only with ``--overwrite``. Each image is written
    as it is done; the report is kept up to date while the batch runs.
``verify DIR --key K [--bits N] [--ray [ADDRESS]] [--json]``
    one line per image; with ``--json`` one JSON object per line (file, detected, message,
    p_value, z, threshold, bits (the capacity it read at), bits_hex, seconds, notes; ``error`` for a
    file that could not be read). A mark embedded at another tier than ``--bits`` is read at that
    tier, and its notes say so.

Both read PNG/JPEG/WebP/BMP/TIFF/GIF files (not recursively; a GIF's first frame, with a notice, as
the MCP tools read it), draw a progress bar on stderr and end with a summary. An empty OUT_DIR is
refused, and a key or message that is not UTF-8 is refused once, before any file. Every entry named like an image is processed or reported by name: a bad file, a
broken symbolic link, or a folder, named pipe, socket or device with an image's name fails with the
reason; a name that is not UTF-8 is shown with ``\\xNN`` escapes.
Exit status: 0 every file was processed, 1 at least one file failed, 2 bad usage, 130
interrupted (Ctrl-C: what was done is written and reported, then one line). Verification
failing to detect a watermark is a result, not a failure. One Ray task per file under ``--ray``
(see ``engines.common.batch``).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engines.common.batch import (
    INTERRUPTED,
    Item,
    LiveReport,
    Outcome,
    Report,
    add_overwrite_argument,
    add_ray_arguments,
    check_output_folder,
    csv_text,
    files_in,
    interrupt_deferred,
    make_folder,
    output_path,
    ray_address,
    refuse_existing,
    refuse_inputs_inside,
    run_batch,
    run_command,
    utf8_argument,
    write_atomic,
)
from engines.common.errors import InputError
from engines.watermark.config import TIERS, WatermarkConfig
from engines.watermark.embedding import embed
from engines.watermark.image_io import prepare_panorama
from engines.watermark.payload import as_bits
from engines.watermark.verification import verify

SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif")
FITS = ("refuse", "pad", "resize")
REPORT = "report.csv"
REPORT_COLUMNS = ["file", "output", "psnr", "ws_psnr", "ssim", "bits", "min_margin", "seconds", "notes", "error"]


def _image(data: bytes, fit: str) -> tuple[np.ndarray, list[str]]:
    """A panorama from a file's bytes (prepare_panorama's checks; wide images downscaled to 2048)."""
    return prepare_panorama(io.BytesIO(data), fit=fit)


def embed_one(data: bytes, message: str, key: str, bits: int, fit: str) -> dict:
    """Embed ``message`` into one image file's bytes: the PNG bytes (``png``) and
    :meth:`EmbedResult.to_dict` without the image, its notes led by what loading changed."""
    _refuse_non_files(data)
    img, notes = _image(data, fit)
    res = embed(img, message, key=key, config=WatermarkConfig(bits=bits))
    return {"png": res.png_bytes(), **res.to_dict(image=False), "notes": notes + res.notes}


def verify_one(data: bytes, key: str, bits: int) -> dict:
    """Verify one image file's bytes under ``key``: :meth:`VerifyResult.to_dict`, its notes led by what
    loading changed (the fields of the JSON line)."""
    _refuse_non_files(data)
    img, notes = _image(data, "refuse")
    v = verify(img, key=key, config=WatermarkConfig(bits=bits))
    return {**v.to_dict(), "notes": notes + v.notes}


@dataclass(frozen=True)
class NotAFile:
    """The payload of a folder entry named like an image that is not a file (a folder, a named pipe,
    a socket, a device): reported by name, never opened (reading a named pipe would block)."""

    kind: str


def shown(name: str) -> str:
    r"""A file name as text a report can hold: bytes that are not UTF-8 (``caf\xe9.png`` from a
    Latin-1 system) are written as ``\xNN`` escapes instead of failing the report.

    >>> shown("caf\udce9.png")
    'caf\\xe9.png'
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _kind(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    return ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file")


def _items(directory: str) -> tuple[list[Item], dict[str, str]]:
    """Every entry of ``directory`` named like an image (hidden ones aside), in name order, and each
    item's file name on disk: files and broken links are read (a broken link fails with its reason),
    anything else is a :class:`NotAFile` that fails with what it is. Every input is done or reported
    by name; names that are not UTF-8 are shown with escapes (:func:`shown`)."""
    path = Path(directory)
    if not path.is_dir():
        found = files_in(path, SUFFIXES)
        return [Item(shown(f.name), path=f) for f in found], {shown(f.name): f.name for f in found}
    entries = sorted((f for f in path.iterdir() if f.suffix.lower() in SUFFIXES and not f.name.startswith(".")),
                     key=lambda f: os.fsencode(f.name))
    if not entries:
        raise InputError(f"{shown(str(path))} holds no {'/'.join(SUFFIXES)} files")
    items = [Item(shown(f.name), path=f) if f.is_file() or (f.is_symlink() and not f.exists())
             else Item(shown(f.name), payload=NotAFile(_kind(f))) for f in entries]
    return items, {shown(f.name): f.name for f in entries}


def _refuse_non_files(data: object) -> None:
    if isinstance(data, NotAFile):
        raise InputError(f"{data.kind}, not an image file")


def _out_name(name: str) -> str:
    """The output of one input: a PNG keeps its name, any other file gets ``.png`` added
    (``p0.jpg`` -> ``p0.jpg.png``), so inputs that share a stem never share an output and a
    name never depends on which other files are there or how they fared."""
    return name if name.lower().endswith(".png") else name + ".png"


def _out_names(on_disk: dict[str, str]) -> dict[str, str]:
    """Input name (as shown) -> output file name (on disk); InputError when two inputs would still meet
    (``p0.jpg`` next to ``p0.jpg.png``, or names that differ only in case: one file on macOS and Windows)."""
    names = {src: _out_name(real) for src, real in on_disk.items()}
    seen: dict[str, str] = {}
    for src, out in names.items():
        if out.lower() in seen:
            raise InputError(f"{seen[out.lower()]} and {src} would both be written to {shown(out)}; rename one of them")
        seen[out.lower()] = src
    return names


def _save(out_dir: Path, output: str, o: Outcome) -> list:
    """Write one finished image (atomically) and give its report row; an image that cannot be
    written turns its outcome into a failure, so the row and the summary say so."""
    if o.ok:
        try:
            write_atomic(out_dir / output, o.value["png"])
        except OSError as exc:
            o.ok, o.kind, o.error = False, "output", f"cannot write {shown(output)} ({exc.strerror or type(exc).__name__})"
    if not o.ok:
        return [o.name, "", "", "", "", "", "", "", "", o.error]
    v = o.value
    return [o.name, shown(output), f"{v['psnr_db']:.3f}", f"{v['ws_psnr_db']:.3f}", f"{v['ssim']:.5f}", v["bits"],
            f"{v['min_margin']:.4f}", f"{v['seconds']:.2f}", "; ".join(v["notes"]), ""]


def cmd_embed(args: argparse.Namespace) -> int:
    out_dir = output_path(args.out_dir, "OUT_DIR")
    items, on_disk = _items(args.in_dir)
    names = _out_names(on_disk)
    refuse_inputs_inside(out_dir, [it.path for it in items if it.path is not None])
    check_output_folder(out_dir)
    refuse_existing([out_dir / n for n in names.values()] + [out_dir / REPORT], args.overwrite)
    make_folder(out_dir)
    rows: dict[int, list] = {}  # item index -> row, so the report is in input order under Ray too
    report = LiveReport(out_dir / REPORT, lambda: csv_text([REPORT_COLUMNS] + [rows[i] for i in sorted(rows)]))
    report.write()

    def done(item: Item, o: Outcome) -> None:
        rows[o.index] = _save(out_dir, names[item.name], o)
        report.update()

    rep = run_batch(embed_one, items, (args.message, args.key, args.bits, args.fit), ray=ray_address(args.ray),
                    workers=args.workers, desc="embed", progress=not args.quiet, on_done=done)
    with interrupt_deferred():
        report.write()
    return _finish(rep, f"report: {report.path}", covered=str(report.path))


def cmd_verify(args: argparse.Namespace) -> int:
    items, _ = _items(args.dir)
    rep = run_batch(verify_one, items, (args.key, args.bits), ray=ray_address(args.ray), workers=args.workers,
                    desc="verify", progress=not args.quiet)
    for o in rep.outcomes:
        if args.json:
            row = {"file": o.name, **o.value} if o.ok else {
                "file": o.name, "detected": None, "message": None, "p_value": None, "error": o.error}
            print(json.dumps(row), flush=True)
        elif o.ok:
            v = o.value
            state = "DETECTED" if v["detected"] else "not detected"
            msg = (f", message {v['message']!r}" if v["message"] is not None else
                   f", raw bits {v['bits_hex']} (hex)" if v["detected"] else "")
            print(f"{o.name}: {state} (z {v['z']:.2f}, threshold {v['threshold']:.2f}, "
                  f"p <= {v['p_value']:.2g}){msg}" + "".join(f"; {n}" for n in v["notes"]))
    return _finish(rep, "", covered="the output above")


def _finish(rep: Report, extra: str, covered: str) -> int:
    """The closing lines and the exit status; an interrupted run ends with one line saying what
    ``covered`` (its report) holds."""
    if rep.interrupted:
        print(rep.interrupted_line("file", covered), file=sys.stderr)
        return INTERRUPTED
    print(rep.summary("file") + (f"\n{extra}" if extra else ""), file=sys.stderr)
    return 1 if rep.failed else 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m engines.watermark",
                                 description="Embed or verify the bispectrum watermark on folders of panoramas.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    em = sub.add_parser("embed", help="watermark every panorama of IN_DIR into OUT_DIR (PNG) with a CSV report")
    em.add_argument("in_dir")
    em.add_argument("out_dir")
    em.add_argument("--message", required=True, help="text to embed (64 bits hold 6 bytes; see --bits)")
    em.add_argument("--fit", choices=FITS, default="refuse",
                    help="what to do with an image that is not 2:1 (refuse = report and skip it)")
    add_overwrite_argument(em)
    ve = sub.add_parser("verify", help="verify every image of DIR under a key (no originals needed)")
    ve.add_argument("dir")
    ve.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    for p in (em, ve):
        p.add_argument("--key", required=True, help="the secret key (any text)")
        p.add_argument("--bits", type=int, default=TIERS[0],
                       help=f"payload bits: {', '.join(map(str, TIERS))} (same at both ends)")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        add_ray_arguments(p)
    return ap


def _command(args: argparse.Namespace) -> int:
    WatermarkConfig(bits=args.bits)
    if not utf8_argument(args.key, "--key"):
        raise InputError("--key is empty")
    if args.cmd == "embed":
        as_bits(utf8_argument(args.message, "--message"), args.bits)  # a message too long for --bits fails here, not once per file
    return cmd_embed(args) if args.cmd == "embed" else cmd_verify(args)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run_command(lambda: _command(args), usage=(InputError, ValueError))
