"""One batch runner for every engine's command line: progress bar, optional Ray fan-out, one
retry, a summary and the exit status.

A batch is a list of :class:`Item` (a name and a picklable payload, e.g. a file's bytes) and a
module-level function ``work(payload, *args)``. Each item is one call (one Ray task under
``--ray``), so a bad file costs only itself:

* :class:`InputError` (bad input: not an image, not Python, ...) is final. ``work`` never sees
  such an item twice; it is reported as failed with its message.
* Any other exception (a crashed worker, a lost node, an out-of-memory kill) is retried once,
  then reported. Under Ray this is the task's own ``max_retries=1`` and
  ``retry_exceptions=True``; in one process the same rule is applied by hand.

Results come back in item order whatever order the tasks finish in, and the same ``work`` runs
in both modes, so a Ray run and a one-process run give the same outputs.

Outputs, Ctrl-C and SIGTERM: ``on_done`` runs in the driver as each item finishes (so a command
writes that item's output at once), with both signals held off while it runs, so an item's
output and its report entry are written together or not at all. Ctrl-C (SIGINT), or SIGTERM
under :func:`run_command`, ends the batch early and :func:`run_batch` returns what was finished
(``Report.interrupted``); the command then writes its report of exactly those items and ends
with one line and 130 or 143 (``engines.common.command``). Where outputs may go and how they
are written is ``engines.common.outputs``.

This module is the one import point of the batch commands: it also exports the output and
command helpers they use.

Ray: ``address=None`` runs in this process; ``"local"`` starts a Ray instance inside the command
(``num_cpus`` workers, no dashboard) and stops it at the end; anything else (``"auto"``,
``"ray://host:10001"``, ``"host:6379"``) joins that cluster. The payload travels with the task,
so workers need the package installed but no shared file system. A Ray session that is already
running in the process (a test's, a notebook's) is reused and left running.
"""
from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.common.command import (  # noqa: F401 - the batch commands' one import point
    INTERRUPTED,
    TERMINATED,
    USAGE,
    Terminated,
    interrupt_deferred,
    keep_sigterm_handler,
    one_line,
    run_command,
    utf8_argument,
)
from engines.common.errors import InputError
from engines.common.outputs import (  # noqa: F401 - the batch commands' one import point
    LiveReport,
    add_overwrite_argument,
    check_output_file,
    check_output_folder,
    csv_text,
    make_folder,
    output_path,
    refuse_existing,
    refuse_input_as_output,
    refuse_inputs_inside,
    write_atomic,
)

#: ``--ray`` given without an address (and no RAY_ADDRESS): start Ray inside the command.
LOCAL = "local"



@dataclass(frozen=True)
class Item:
    """One unit of work: ``name`` for reports (a file name, ``"C=10 seed 3"``) and its payload.

    With ``path`` set, the payload is that file's bytes, read by the driver just before the item
    is sent (so only the files in flight are held in memory; an unreadable file fails alone).
    """

    name: str
    payload: Any = None
    path: Path | None = None

    def load(self) -> Any:
        if self.path is None:
            return self.payload
        if (gone := _dangling(self.path)) is not None:
            return _Unreadable(gone)
        try:
            size = self.path.stat().st_size
            if size > MAX_FILE_BYTES:
                return _Unreadable(f"{size / 2**20:.0f} MiB; files over {MAX_FILE_BYTES // 2**20} MiB are skipped")
            return self.path.read_bytes()
        except OSError as exc:
            return _Unreadable(f"cannot read the file ({exc.strerror or type(exc).__name__})")


#: Larger files are reported and skipped rather than read.
MAX_FILE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class _Unreadable:
    reason: str


def _dangling(path: Path) -> str | None:
    """Why ``path`` cannot be read when it is a symbolic link whose target is gone, else None."""
    if path.is_symlink() and not path.exists():
        return f"broken symbolic link: its target {os.readlink(path)} does not exist"
    return None


def files_in(path: Path, suffixes: Sequence[str], recursive: bool = False) -> list[Path]:
    """The files under ``path`` (or ``path`` itself) whose suffix is in ``suffixes`` (lower
    case), sorted; hidden files and folders are left out. A symbolic link whose target is gone is
    listed too, so that it is reported as failed with its reason rather than skipped without a
    word. Raises InputError when ``path`` does not exist or holds no such file."""
    path = Path(path)
    if path.is_file():
        return [path]
    if (gone := _dangling(path)) is not None:
        raise InputError(f"{path}: {gone}")
    if not path.is_dir():
        raise InputError(f"no such file or folder: {path}")
    it = path.rglob("*") if recursive else path.iterdir()
    found = sorted(f for f in it if (f.is_file() or _dangling(f) is not None) and f.suffix.lower() in suffixes
                   and not any(part.startswith(".") for part in f.relative_to(path).parts))
    if not found:
        raise InputError(f"{path} holds no {'/'.join(suffixes)} files")
    return found


@dataclass
class Outcome:
    """What became of one item: ``value`` when ``ok``, else ``error`` (one line) and ``kind``
    ("input" for bad input, "crash" for anything else, after the retry). ``index`` is the item's
    place in the batch (an interrupted batch returns only the finished items)."""

    name: str
    ok: bool
    value: Any = None
    error: str = ""
    kind: str = ""
    attempts: int = 1
    index: int = -1


@dataclass
class Report:
    """Every finished item's :class:`Outcome` in item order, and how the batch ran. After Ctrl-C
    ``interrupted`` is set and ``outcomes`` holds only the items finished by then (of ``total``);
    ``terminated`` says the stop was SIGTERM rather than Ctrl-C."""

    outcomes: list[Outcome]
    seconds: float
    runner: str
    workers: int
    notes: list[str] = field(default_factory=list)
    total: int = 0
    interrupted: bool = False
    terminated: bool = False

    @property
    def ok(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.ok]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    def summary(self, noun: str = "item") -> str:
        """A few lines: counts, time, throughput, and one line per failed item."""
        n, bad = len(self.outcomes), self.failed
        rate = n / self.seconds if self.seconds > 0 else float("inf")
        head = (f"{n} {noun}{'s' if n != 1 else ''}: {n - len(bad)} done, {len(bad)} failed "
                f"in {self.seconds:.1f} s ({rate:.2f} {noun}s/s; {self.runner}, {self.workers} "
                f"worker{'s' if self.workers != 1 else ''})")
        lines = [head]
        lines += [f"  FAILED {o.name}: {o.error}" for o in bad]
        lines += [f"  note: {s}" for s in self.notes]
        return "\n".join(lines)

    def interrupted_line(self, noun: str, what: str) -> str:
        """The one line an interrupted command ends with, e.g. ``interrupted after 4 of 6 files;
        OUT/report.csv covers those 4`` (``what`` names the report; "terminated (SIGTERM)" in
        place of "interrupted" after SIGTERM)."""
        n = len(self.outcomes)
        those = "none of them" if n == 0 else "that one" if n == 1 else f"those {n}"
        stop = "terminated (SIGTERM)" if self.terminated else "interrupted"
        return f"{stop} after {n} of {self.total} {noun}{'s' if self.total != 1 else ''}; {what} covers {those}"


def ray_address(flag: str | None) -> str | None:
    """The Ray target of a ``--ray [ADDRESS]`` flag: None (no Ray), an address, or ``LOCAL``.

    ``--ray`` without an address joins ``$RAY_ADDRESS`` when it is set, else starts Ray locally.

    >>> ray_address(None) is None, ray_address("ray://head:10001")
    (True, 'ray://head:10001')
    """
    if flag is None:
        return None
    if flag == LOCAL:
        return os.environ.get("RAY_ADDRESS") or LOCAL
    return flag


def add_ray_arguments(parser) -> None:
    """``--ray [ADDRESS]`` and ``--workers N`` on an argparse (sub)parser."""
    parser.add_argument("--ray", nargs="?", const=LOCAL, default=None, metavar="ADDRESS",
                        help="run one Ray task per item: no address starts Ray inside the command "
                             "(or joins $RAY_ADDRESS), an address (auto, ray://host:10001) joins "
                             "that cluster")
    parser.add_argument("--workers", type=int, default=None,
                        help="CPUs of the Ray started inside the command (default: all)")


def _call(work: Callable, payload: Any, *args: Any) -> tuple[bool, Any]:
    """Run one item; bad input comes back as (False, message) instead of raising, so neither Ray
    nor the local loop retries it. Anything else propagates (and is retried once)."""
    if isinstance(payload, _Unreadable):
        return False, payload.reason
    try:
        return True, work(payload, *args)
    except InputError as exc:
        return False, str(exc)


def _progress(total: int, desc: str, show: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="item", file=sys.stderr, disable=not show, dynamic_ncols=True)


#: ``finish(index, outcome)``: records one finished item (see :func:`run_batch`).
Finish = Callable[[int, Outcome], None]


def _local(work: Callable, items: Sequence[Item], args: tuple, finish: Finish) -> None:
    for i, it in enumerate(items):
        for attempt in (1, 2):
            try:
                ok, val = _call(work, it.load(), *args)
                outcome = (Outcome(it.name, True, val, attempts=attempt) if ok else
                           Outcome(it.name, False, error=val, kind="input", attempts=attempt))
                break
            except Exception as exc:  # noqa: BLE001 - reported per item, after one retry
                if attempt == 2:
                    outcome = Outcome(it.name, False, error=one_line(exc), kind="crash", attempts=2)
        finish(i, outcome)


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``host:port`` or ``ray://host:port`` address nobody answers on within ``timeout`` s
    (``ray.init`` itself retries such an address for minutes)."""
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"could not join the Ray cluster at {address}: nothing answers there "
                         f"({one_line(exc)})") from None


def _ray_start(address: str, workers: int | None) -> tuple[Any, bool]:
    """(ray module, whether we started it). Reuses a session already open in this process.
    Raises InputError when Ray is not installed or the cluster cannot be joined."""
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs the ray package: pip install -r requirements.txt") from None
    if ray.is_initialized():
        return ray, False
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                          "logging_level": "ERROR", "configure_logging": True}
    try:
        with keep_sigterm_handler():  # ray.init's own handler would exit without the report
            if address == LOCAL:
                ray.init(num_cpus=workers or os.cpu_count() or 1, **kw)
            else:
                _reachable(address)
                ray.init(address=address, **kw)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError from ray.init
        where = "start Ray here" if address == LOCAL else f"join the Ray cluster at {address}"
        raise InputError(f"could not {where}: {one_line(exc)}") from None
    return ray, True


def _ray(work: Callable, items: Sequence[Item], args: tuple, finish: Finish, address: str,
         workers: int | None, notes: list[str]) -> int:
    t0 = time.perf_counter()
    ray, started = _ray_start(address, workers)
    if started:
        notes.append(f"Ray start-up {time.perf_counter() - t0:.1f} s (included above)")
    pending: list[Any] = []
    try:
        task = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=True)(_call)
        shared = [ray.put(a) for a in args]  # stored once; Ray resolves top-level refs in the task
        n = int(ray.cluster_resources().get("CPU", 1))
        window = max(2, 4 * n)  # tasks in flight: keeps every worker busy, bounds driver memory
        index: dict[Any, int] = {}
        nxt = 0
        while nxt < len(items) or pending:
            while nxt < len(items) and len(pending) < window:
                ref = task.remote(work, items[nxt].load(), *shared)
                index[ref], nxt = nxt, nxt + 1
                pending.append(ref)
            ready, pending = ray.wait(pending, num_returns=1)
            for r in ready:
                i = index.pop(r)
                name = items[i].name
                try:
                    ok, val = ray.get(r)
                    outcome = (Outcome(name, True, val) if ok else
                               Outcome(name, False, error=val, kind="input"))
                except Exception as exc:  # noqa: BLE001 - RayTaskError after the retry, lost worker, ...
                    cause = getattr(exc, "cause", None) or exc
                    outcome = Outcome(name, False, error=one_line(cause), kind="crash", attempts=2)
                finish(i, outcome)
        return n
    except KeyboardInterrupt:
        for ref in pending:  # a joined cluster would otherwise go on running them
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        raise
    finally:
        if started:
            ray.shutdown()


def run_batch(work: Callable, items: Sequence[Item], args: tuple = (), *, ray: str | None = None,
              workers: int | None = None, desc: str = "items", progress: bool = True,
              on_done: Callable[[Item, Outcome], None] | None = None) -> Report:
    """Run ``work(item.payload, *args)`` for every item; see the module docstring for the rules.

    ``work`` must be a module-level function (Ray ships it by reference); ``args`` are shared by
    every item (sent to the object store once under Ray). ``ray`` is a :func:`ray_address`
    result. ``progress`` draws a tqdm bar on stderr. ``on_done(item, outcome)`` runs in this
    process as each item finishes (in finishing order under Ray), with Ctrl-C held off, so the
    caller can write that item's output at once; it may mark the outcome failed (an output that
    could not be written). Ctrl-C stops the batch: the report then holds the finished items only
    and ``interrupted`` is set; it is not raised.

    >>> def double(x): return 2 * x
    >>> r = run_batch(double, [Item("a", 1), Item("b", 2)], progress=False)
    >>> [o.value for o in r.outcomes], r.runner
    ([2, 4], 'one process')
    """
    if workers is not None and workers < 1:
        raise InputError(f"--workers {workers}: give at least 1")
    t0 = time.perf_counter()
    notes: list[str] = []
    done: dict[int, Outcome] = {}
    runner = "one process" if ray is None else "Ray local" if ray == LOCAL else f"Ray at {ray}"
    n, interrupted, terminated = 1 if ray is None else workers or 1, False, False
    with _progress(len(items), desc, progress) as bar:

        def finish(i: int, outcome: Outcome) -> None:
            outcome.index = i
            with interrupt_deferred():
                if on_done is not None:
                    on_done(items[i], outcome)
                done[i] = outcome
            bar.update(1)

        try:
            if ray is None:
                _local(work, items, args, finish)
            else:
                n = _ray(work, items, args, finish, ray, workers, notes)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM under run_command (Terminated)
            interrupted, terminated = True, isinstance(exc, Terminated)
    return Report([done[i] for i in sorted(done)], time.perf_counter() - t0, runner, n, notes,
                  total=len(items), interrupted=interrupted, terminated=terminated)
