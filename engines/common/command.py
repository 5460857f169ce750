"""How every command line ends: exit statuses, Ctrl-C and SIGTERM, one line instead of a traceback.

A terminal stops a command with SIGINT (Ctrl-C); ``timeout``, ``kill`` and every job scheduler
stop it with SIGTERM. A command run through :func:`run_command` treats both alike: SIGTERM raises
:class:`Terminated` (a ``KeyboardInterrupt``) where Ctrl-C raises ``KeyboardInterrupt``, so the
batch runner stops at the same point, the command writes its report of the items finished, ends
with one line, and exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), the status
a shell reports for a process a signal ended. :func:`interrupt_deferred` holds both signals back
while a file is written, so an output is never left half-done.

Only the first signal stops the command: a second Ctrl-C a few milliseconds later, a held key or a
repeated SIGTERM finds it already stopping and changes nothing, so it still writes its report and
ends with its one line and status (a second KeyboardInterrupt raised while the first unwinds lands
anywhere: inside a finaliser, "Exception ignored in ... Popen.__del__", or in the interpreter's exit,
which then dies of the signal). :func:`main_entry` (each ``python -m engines.X``) installs this for
the whole process, the command's own imports included.
"""
from __future__ import annotations

import contextlib
import importlib
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
    """Whether a signal has stopped the command that :func:`run_command` is running, and whether it was SIGTERM."""

    signalled = False
    terminated = False


def _stop_once(signum: int, frame: object) -> None:
    """The handler of SIGINT and SIGTERM: the first raises ``KeyboardInterrupt`` (:class:`Terminated`
    for SIGTERM) and has the process ignore both from then on, the command being on its way out
    (ignored, not handled: the interpreter's exit puts a Python handler back to the default, which
    a signal during the exit would then die of; :func:`run_command` puts back what it replaced)."""
    if _Stop.signalled:
        return
    _Stop.signalled = True
    for sig in _STOPS:
        signal.signal(sig, signal.SIG_IGN)
    if signum == signal.SIGTERM:
        _Stop.terminated = True
        raise Terminated
    raise KeyboardInterrupt


def _stopped_line(exc: KeyboardInterrupt) -> tuple[str, int]:
    """The closing line and exit status of a command stopped by ``exc`` outside the batch."""
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)", TERMINATED
    return "interrupted", INTERRUPTED


def _install_stop_handlers() -> dict[int, object]:
    """:func:`_stop_once` for SIGINT and SIGTERM (a signal the process ignores stays ignored, one
    already handled so stays so); the handlers it replaced, to put back."""
    replaced = {}
    if _main_thread():
        for sig in _STOPS:
            current = signal.getsignal(sig)
            if current is not _stop_once and current is not signal.SIG_IGN:
                replaced[sig] = signal.signal(sig, _stop_once)
    if replaced:
        _Stop.signalled = _Stop.terminated = False
    return replaced


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message``, for a report or an ``error:`` line."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__


def utf8_argument(value: str, flag: str) -> str:
    r"""``value`` (a command-line argument) when it is UTF-8 text; else InputError naming ``flag``
    and the first byte that is not. Python decodes argv with the locale and keeps bytes it cannot
    decode as lone surrogates (``'cl\udce9'`` for a Latin-1 ``clé``), which fail later at
    every use, once per file.

    >>> utf8_argument("clé", "--key")
    'clé'
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ord(value[exc.start])
        byte = f"byte 0x{bad - 0xDC00:02X}" if 0xDC80 <= bad <= 0xDCFF else f"character U+{bad:04X}"
        raise InputError(f"{flag} is not UTF-8 text ({byte} at position {exc.start + 1}); the tab and the "
                         "MCP tools take it as UTF-8 too: set a UTF-8 locale (LANG=C.UTF-8) or type it again") from None
    return value


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
        if previous is _stop_once:
            signal.signal(signal.SIGTERM, previous)


def run_command(command: Callable[[], int], usage: tuple[type[BaseException], ...] = (InputError,)) -> int:
    """Run one command's body and end it the same way in every CLI, never with a traceback:
    bad usage (``usage`` exceptions) and an output that cannot be written (OSError) print one
    ``error:`` line and give :data:`USAGE`; Ctrl-C or SIGTERM outside the batch (listing the
    inputs, loading) print one line and give :data:`INTERRUPTED` or :data:`TERMINATED`. Inside
    the batch :func:`~engines.common.batch.run_batch` stops and the command reports what was
    done and returns :data:`INTERRUPTED`; after SIGTERM that status becomes :data:`TERMINATED`.
    Only the first signal counts (:func:`_stop_once`)."""
    replaced = _install_stop_handlers()
    try:
        status = command()
        return TERMINATED if status == INTERRUPTED and _Stop.terminated else status
    except usage as exc:
        print(f"error: {exc}", file=sys.stderr)
    except OSError as exc:
        what = f"{exc.strerror or type(exc).__name__}: {exc.filename}" if exc.filename else one_line(exc)
        print(f"error: cannot write the output ({what})", file=sys.stderr)
    except KeyboardInterrupt as exc:
        line, status = _stopped_line(exc)
        print(line, file=sys.stderr)
        return status
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    return USAGE


def main_entry(cli_module: str) -> int:
    """Run ``cli_module``'s ``main()`` as ``python -m engines.X`` does, with :func:`_stop_once` handling
    SIGINT and SIGTERM from before the command's imports to the process's exit: Ctrl-C while the
    command loads ends it with the same one line and status as later, and presses after the first
    (during the report, or the interpreter's exit) change nothing. Returns the exit status."""
    _install_stop_handlers()
    try:
        return importlib.import_module(cli_module).main()
    except KeyboardInterrupt as exc:
        line, status = _stopped_line(exc)
        print(line, file=sys.stderr)
        return status
