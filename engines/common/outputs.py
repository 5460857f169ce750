"""Where batch commands write: atomically, never over an input, never over a file unasked.

Every output goes through a hidden temp file and an atomic rename (:func:`write_atomic`), so a
crash, Ctrl-C or SIGTERM never leaves a half-written file. An output folder never holds an input
(:func:`refuse_inputs_inside`), an output file is never one of the inputs
(:func:`refuse_input_as_output`), and nothing already there is replaced unless the user says so
(:func:`refuse_existing`). All of it is checked before the batch starts.
"""
from __future__ import annotations

import contextlib
import csv
import io
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from engines.common.errors import InputError

_UMASK = os.umask(0)
os.umask(_UMASK)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``path`` (text as UTF-8) through a hidden temp file in the same folder and an atomic
    rename: a crash or Ctrl-C never leaves a half-written file, and a previous version is
    replaced in one step. A symbolic link at ``path`` is replaced, never written through."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 -> what open() would have given
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """Rows as CSV text (``csv`` module defaults), e.g. for :func:`write_atomic`."""
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue()


class LiveReport:
    """A report file that never claims more than was done while a batch runs: ``render()`` (of
    the items finished so far) is written through :func:`write_atomic` by :meth:`write` (call it
    before the batch, so a previous report there is replaced at once, and after it, interrupted
    or not) and by :meth:`update` (call it as items finish; at most every ``every`` seconds, so a
    long batch does not rewrite its report once per item)."""

    def __init__(self, path: Path, render: Callable[[], bytes | str], every: float = 1.0) -> None:
        self.path, self.render, self.every = Path(path), render, every
        self._last = float("-inf")

    def write(self) -> None:
        write_atomic(self.path, self.render())
        self._last = time.monotonic()

    def update(self) -> None:
        if time.monotonic() - self._last >= self.every:
            self.write()


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def refuse_inputs_inside(out_dir: Path, inputs: Iterable[Path]) -> None:
    """InputError when the output folder is an input's folder or holds an input at any depth (by
    its name or, for a link, by its target), so a batch never writes over its originals."""
    out = _real(out_dir)
    for f in inputs:
        for folder in (_real(f.parent), _real(f).parent):
            if _within(folder, out):
                where = "is the input folder" if folder == out else f"holds the input {f}"
                raise InputError(f"output folder {out_dir} {where}; choose an output folder that holds no input")


def refuse_input_as_output(out: Path, inputs: Iterable[Path], flag: str = "--out") -> None:
    """InputError when the output file ``out`` is one of the inputs (under any name: path, link
    or hard link), so writing it never replaces a file being read."""
    real = _real(out)
    for f in inputs:
        if _real(f) == real or (out.exists() and f.exists() and os.path.samefile(out, f)):
            raise InputError(f"{flag} {out} is one of the inputs; writing there would replace it")


def check_output_file(path: Path, flag: str = "--out") -> None:
    """InputError unless ``path`` can take an output file: not a folder, in a folder that exists
    and can be written (checked before the batch, not found out at its end)."""
    if path.is_dir():
        raise InputError(f"{flag} {path} is a folder; give a file name")
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{flag} {path}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot write in {folder}")


def refuse_existing(paths: Sequence[Path], overwrite: bool) -> None:
    """InputError naming the first of ``paths`` that exists (a dangling link counts), unless
    ``overwrite`` (the command's ``--overwrite``): outputs never replace a file unasked."""
    if overwrite:
        return
    there = [p for p in paths if p.exists() or p.is_symlink()]
    if there:
        more = f" (and {len(there) - 1} more of the outputs)" if len(there) > 1 else ""
        raise InputError(f"{there[0]} already exists{more}; give --overwrite to replace, or choose another output folder")


def output_path(text: str, what: str = "--out") -> Path:
    """The output path a user gave, or InputError when it is empty: ``Path("")`` is the current
    folder, and an empty ``--out`` (an unset shell variable, say) would write there unasked."""
    if not str(text).strip():
        raise InputError(f"{what} is empty: give the folder to write the outputs to")
    return Path(text)


def check_output_folder(path: Path) -> None:
    """InputError when the output folder given is an existing file (or other non-folder)."""
    if path.exists() and not path.is_dir():
        raise InputError(f"{path} is a file, not a folder; give a folder for the outputs")


def make_folder(path: Path) -> None:
    """Create the output folder (and its parents); InputError when it is a file or cannot be made."""
    check_output_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder {path} ({exc.strerror or type(exc).__name__})") from None


def add_overwrite_argument(parser) -> None:
    """``--overwrite`` on an argparse (sub)parser: let outputs replace files already there."""
    parser.add_argument("--overwrite", action="store_true",
                        help="replace output files that already exist (default: refuse)")
