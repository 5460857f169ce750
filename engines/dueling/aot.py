"""The simulator's kernel compiled ahead of time: a process loads it without numba.

``kernels.run_block`` is numba JIT code. Even with numba's cache warm, a process pays for numba's
import and initialisation (LLVM, and the cached object code linked in) before the first round: most
of a short run's start-up. ``python -m engines.dueling.aot`` (run by the install step, ``make
venv``) compiles ``run_block`` once with numba's ahead-of-time compiler into an extension module
under the project's cache folder (``CACHE_DIR/dueling-aot``), for this machine's CPU; the simulator
then loads that module (:func:`run_block`) and never imports numba. The module's name carries a hash
of the kernel sources, numba's and Python's versions and the CPU, so an edited kernel, an upgrade or
another machine sharing the cache folder never loads a stale or foreign build: it falls back to the
JIT kernel (cached by numba as before) until the command is run again. ``SHOWCASE_DUELING_AOT=0``
always uses the JIT kernel. Both give the same numbers (the same code, compiled by the same LLVM).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from engines.common.paths import CACHE_DIR

_HERE = Path(__file__).resolve().parent
#: Builds kept in the cache folder (checkouts of other versions share it); older ones are removed.
KEEP_BUILDS = 4
#: The files whose text the compiled kernel depends on (the kernels and the constants they read).
SOURCES = ("kernels.py", "algorithms.py")
#: The exported signature: what ``simulate._Learner.run`` passes (C-contiguous float64 / int64 arrays).
_F1, _F2, _F3, _F4 = "f8[::1]", "f8[:, ::1]", "f8[:, :, ::1]", "f8[:, :, :, ::1]"
_I1, _I2, _I3 = "i8[::1]", "i8[:, ::1]", "i8[:, :, ::1]"
SIGNATURE = (f"void(i8, {_F1}, i8, i8, {_F4}, {_F4}, {_F3}, {_F2}, {_F2}, {_F3}, {_F2}, {_F3}, {_I1}, {_F1}, "
             f"{_F1}, {_F2}, {_I3}, {_F3}, {_F2}, {_F2}, {_I2}, {_I2}, {_I2}, {_F3}, {_F2}, {_F2}, {_I1}, {_F1}, {_F1})")


def _cpu() -> str:
    """This CPU's model and feature flags (a build for one CPU may not run on another)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    keep = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features", "CPU part"))]
    return "\n".join(dict.fromkeys(keep))


def _numba_version() -> bytes:
    """numba's version file (version and revision), read without importing numba or its metadata."""
    spec = importlib.util.find_spec("numba")
    if spec is None or spec.origin is None:
        return b"no numba"
    try:
        return (Path(spec.origin).parent / "_version.py").read_bytes()
    except OSError:
        return spec.origin.encode()


def build_key() -> str:
    """A hash of everything the compiled kernel depends on: its sources, numba's and Python's versions,
    the machine and its CPU."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((_HERE / name).read_bytes())
    h.update(_numba_version())
    h.update(f"{sys.version} {platform.machine()}\n{_cpu()}".encode())
    return h.hexdigest()[:16]


def module_name(key: str | None = None) -> str:
    return f"dueling_kernels_{key or build_key()}"


def build_dir() -> Path:
    return CACHE_DIR / "dueling-aot"


def module_path(key: str | None = None) -> Path | None:
    """The compiled module for this source and machine, or None when it has not been built."""
    name = module_name(key)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = build_dir() / (name + suffix)
        if path.is_file():
            return path
    return None


@functools.lru_cache(maxsize=1)
def run_block() -> Callable:
    """``run_block`` compiled ahead of time when it is built for this source and machine (see the
    module doc), else the JIT kernel of :mod:`engines.dueling.kernels`."""
    path = None if os.environ.get("SHOWCASE_DUELING_AOT", "1") == "0" else module_path()
    if path is not None:
        try:
            spec = importlib.util.spec_from_file_location(path.name.split(".")[0], path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.run_block
        except (ImportError, OSError, AttributeError):
            pass  # unreadable or half-written: the JIT kernel does the same work
    from engines.dueling.kernels import run_block as jit

    return jit


def build() -> Path:
    """Compile ``kernels.run_block`` ahead of time for this CPU into :func:`build_dir`; returns the
    module's path. Needs numba and a C compiler (numba's ``pycc``); takes about 15 s of CPU."""
    import warnings

    from numba.pycc import CC

    from engines.dueling import kernels

    key = build_key()
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".build-") as tmp:
        cc = CC(module_name(key))
        cc.output_dir = tmp
        cc.target_cpu = "host"
        cc.verbose = False
        cc.export("run_block", SIGNATURE)(kernels.run_block.py_func)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba announces pycc's deprecation; it is what builds this
            cc.compile()
        built = [p for p in Path(tmp).iterdir() if p.name.startswith(module_name(key) + ".")]
        if not built:
            raise RuntimeError(f"numba's compiler wrote no module into {tmp}")
        os.replace(built[0], out / built[0].name)  # whole or not at all: a running simulator never loads half
    others = sorted((p for p in out.glob("dueling_kernels_*") if p.name != built[0].name),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in others[KEEP_BUILDS - 1:]:  # other sources or machines: the newest few stay (checkouts share it)
        stale.unlink(missing_ok=True)
    return out / built[0].name


def main() -> int:
    try:
        path = build()
    except Exception as exc:  # noqa: BLE001 - no compiler, no numba: the simulator still runs (JIT)
        print(f"the dueling kernel was not compiled ahead of time ({type(exc).__name__}: {exc}); "
              "the simulator uses numba's JIT kernel", file=sys.stderr)
        return 1
    print(f"compiled the dueling kernel ahead of time: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
