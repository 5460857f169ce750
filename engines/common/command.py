"""How every command line ends: exit statuses, Ctrl-C and SIGTERM, one line instead of a traceback.

A terminal stops a command with SIGINT (Ctrl-C); ``timeout``, ``kill`` and every job scheduler
stop it with SIGTERM. A command run through :func:`run_command` treats both alike: SIGTERM raises
:class:`Terminated` (a ``KeyboardInterrupt``) where Ctrl-C raises ``KeyboardInterrupt``, so the
batch runner stops at the same point, the command writes its report of the items finished, ends
with one line, and exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), the status
a shell reports for a process a signal ended. :func:`interrupt_deferred` holds both signals back
while a file is written, so an output is never left half-done.
"""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from engines.common.errors import InputError

#: Exit status of bad usage (argparse's own), and of a run ended by Ctrl-C or by SIGTERM (128 +
#: the signal's number, as shells report it).
USAGE = 2
INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM
_STOPS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a command ran (raised by the handler :func:`run_command` installs)."""


class _Stop:
    """Whether SIGTERM stopped the command that :func:`run_command` is running."""

    terminated = False


def _raise_terminated(signum: int, frame: object) -> None:
    _Stop.terminated = True
    raise Terminated


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message``, for a report or an ``error:`` line."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def interrupt_deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back while the block runs, then deliver the first that
    came as the process would have (``KeyboardInterrupt`` or :class:`Terminated` under the
    handlers a command runs with): a file being written is never left half-done, and an item's
    output and its report entry go together. A signal the process ignores stays ignored; outside
    the main thread (where Python cannot set signal handlers) this does nothing."""
    if not _main_thread():
        yield
        return
    held: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in _STOPS}
    deferred = [sig for sig, handler in previous.items() if handler is not signal.SIG_IGN]
    for sig in deferred:
        signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for sig in deferred:
            signal.signal(sig, previous[sig] if previous[sig] is not None else signal.SIG_DFL)
    if held:
        signal.raise_signal(held[0])


@contextlib.contextmanager
def keep_sigterm_handler() -> Iterator[None]:
    """Put back :func:`run_command`'s SIGTERM handler after the block if a library replaced it
    (``ray.init`` installs one that exits at once, skipping the command's report)."""
    previous = signal.getsignal(signal.SIGTERM) if _main_thread() else None
    try:
        yield
    finally:
        if previous is _raise_terminated:
            signal.signal(signal.SIGTERM, previous)


def run_command(command: Callable[[], int], usage: tuple[type[BaseException], ...] = (InputError,)) -> int:
    """Run one command's body and end it the same way in every CLI, never with a traceback:
    bad usage (``usage`` exceptions) and an output that cannot be written (OSError) print one
    ``error:`` line and give :data:`USAGE`; Ctrl-C or SIGTERM outside the batch (listing the
    inputs, loading) print one line and give :data:`INTERRUPTED` or :data:`TERMINATED`. Inside
    the batch :func:`~engines.common.batch.run_batch` stops and the command reports what was
    done and returns :data:`INTERRUPTED`; after SIGTERM that status becomes :data:`TERMINATED`."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if _main_thread() else None
    _Stop.terminated = False
    try:
        status = command()
        return TERMINATED if status == INTERRUPTED and _Stop.terminated else status
    except usage as exc:
        print(f"error: {exc}", file=sys.stderr)
    except OSError as exc:
        what = f"{exc.strerror or type(exc).__name__}: {exc.filename}" if exc.filename else one_line(exc)
        print(f"error: cannot write the output ({what})", file=sys.stderr)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        print("terminated (SIGTERM)" if terminated else "interrupted", file=sys.stderr)
        return TERMINATED if terminated else INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return USAGE
