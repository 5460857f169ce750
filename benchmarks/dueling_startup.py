"""Whole-process speed of the bandit command against the reference's own command, and import costs.

Three measurements, each of whole processes started from a shell-like ``subprocess.run``:

* ``--whole``: in alternating turns, the reference's ``python main.py run linear --delay
  stochastic --n_runs 20 --T 2000`` (github.com/youngmin0oh/rcdp-public, MIT; its
  ``main.py``, ``experiments.py`` and ``contextual_dueling_bandit.py`` copied into the git-ignored
  ``ref/``, run from a scratch folder because it writes ``results/`` there) and ours,
  ``python -m engines.dueling run --preset "Fig. 1 linear, stochastic delay" --seeds 20 --T 2000
  --mode faithful|fast --out DIR --quiet``: the same configuration (d = K = 10, C = 25, N(100,
  100^2) delays, the five algorithms, 20 runs). Both write the regret curves of every round as
  CSV; the reference also draws a PDF, ours writes summary.json (``--plot`` adds a PNG, measured
  as a fourth command with ``--with-plot``). Wall seconds per process and the ratio within each
  turn (median and range over turns), and CPU seconds (user + system).
* ``--breakdown``: where our process's time goes: interpreter start, imports, the kernel's loading
  (the module compiled ahead of time, ``engines.dueling.aot``; or numba and its cache with
  ``SHOWCASE_DUELING_AOT=0``), simulation, writing; and a first run with nothing compiled (no
  AOT build, ``NUMBA_CACHE_DIR`` a new folder: the JIT compiles the kernels).
* ``--imports``: ``import X`` for every engine and command-line module, in turns, less the bare
  interpreter, and which heavy libraries each one loads.

    .venv/bin/python benchmarks/dueling_startup.py --whole --turns 5 --breakdown --imports

Writes ``benchmarks/results/dueling_startup.json`` and prints Markdown tables.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "ref"
OUT = ROOT / "benchmarks" / "results" / "dueling_startup.json"
PY = sys.executable
PRESET = "Fig. 1 linear, stochastic delay"
MODULES = ("engines.common", "engines.dueling", "engines.watermark", "engines.guardrail", "engines.codeprm",
           "engines.dueling.cli", "engines.watermark.cli", "engines.codeprm.cli")
HEAVY = ("numpy", "numba", "scipy", "torch", "onnxruntime", "matplotlib", "PIL", "transformers", "gradio", "ray")


def timed(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one whole process; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _stats(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def whole(turns: int, with_plot: bool) -> dict:
    if not all((REF / f).exists() for f in ("main.py", "experiments.py", "contextual_dueling_bandit.py")):
        raise SystemExit(f"copy the reference's main.py, experiments.py and contextual_dueling_bandit.py into {REF}")
    scratch = Path(tempfile.mkdtemp(prefix="dueling_startup_"))
    for f in ("main.py", "experiments.py", "contextual_dueling_bandit.py"):
        shutil.copy(REF / f, scratch / f)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    commands = {"reference": ([PY, "main.py", "run", "linear", "--delay", "stochastic", "--n_runs", "20", "--T", "2000"],
                              scratch)}
    for mode in ("faithful", "fast"):
        commands[f"ours {mode}"] = ([PY, "-m", "engines.dueling", "run", "--preset", PRESET, "--seeds", "20", "--T", "2000",
                                     "--mode", mode, "--out", str(scratch / f"ours_{mode}"), "--overwrite", "--quiet"], ROOT)
    if with_plot:
        commands["ours fast --plot"] = (commands["ours fast"][0][:-2] + ["--plot", "--overwrite", "--quiet"], ROOT)
    for cmd, cwd in commands.values():  # one untimed turn: the kernel cache and the file cache warm
        timed(cmd, cwd, env)
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    for turn in range(turns):
        for name, (cmd, cwd) in commands.items():
            runs[name].append(timed(cmd, cwd, env))
        print(f"turn {turn + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} s" for k, v in runs.items()), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    out = {"commands": {k: " ".join(c) for k, (c, _) in commands.items()}}
    for name, rs in runs.items():
        out[name] = {"wall": _stats([w for w, _ in rs]), "cpu": _stats([c for _, c in rs])}
        if name != "reference":
            ref = runs["reference"]
            out[name]["ratio_wall"] = _stats([r[0] / o[0] for r, o in zip(ref, rs)])
            out[name]["ratio_cpu"] = _stats([r[1] / o[1] for r, o in zip(ref, rs)])
    return out


_STAGES = r"""
import sys, time
w0, c0 = time.perf_counter(), time.process_time()
stamps = []
def stamp(name):
    stamps.append((name, time.perf_counter() - w0, time.process_time() - c0))
import numpy
stamp("numpy")
import engines.dueling.cli as cli
stamp("engine and command modules")
from engines.dueling import SimConfig, simulate, preset_config
simulate(SimConfig(T=1, n_seeds=1, algorithms=("MaxInP",)))
stamp("loading the kernel (first simulate): the AOT module, or numba and its cache with SHOWCASE_DUELING_AOT=0")
cfg = preset_config("Fig. 1 linear, stochastic delay", n_seeds=20, T=2000, mode=sys.argv[1])
res = simulate(cfg)
stamp("simulation")
import json, pathlib
out = pathlib.Path(sys.argv[2]); out.mkdir(exist_ok=True)
cli.write_atomic(out / "regret.csv", res.to_csv())
cli.write_atomic(out / "summary.json", json.dumps(res.to_dict(), indent=1))
stamp("writing regret.csv and summary.json")
print(json.dumps(stamps))
"""


def breakdown(repeats: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="dueling_breakdown_"))
    out: dict = {}
    base = [timed([PY, "-c", "pass"]) for _ in range(repeats)]
    out["interpreter start (python -c pass)"] = {"wall": _stats([w for w, _ in base]),
                                                 "cpu": _stats([c for _, c in base])}
    for mode, extra in (("faithful", {}), ("fast", {}), ("fast, JIT kernel", {"SHOWCASE_DUELING_AOT": "0"})):
        rows = []
        for _ in range(repeats):
            proc = subprocess.run([PY, "-c", _STAGES, mode.split(",")[0], str(scratch / mode)], cwd=ROOT,
                                  capture_output=True, text=True, check=True, env={**os.environ, **extra})
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        stages = {}
        for i, (name, _, _) in enumerate(rows[0]):
            walls = [r[i][1] - (r[i - 1][1] if i else 0) for r in rows]
            cpus = [r[i][2] - (r[i - 1][2] if i else 0) for r in rows]
            stages[name] = {"wall": _stats(walls), "cpu": _stats(cpus)}
        out[mode] = stages
    cold = Path(tempfile.mkdtemp(prefix="numba_cold_"))  # no AOT build and an empty numba cache: the JIT compiles
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cold), "SHOWCASE_CACHE": str(cold)}
    t = timed([PY, "-m", "engines.dueling", "run", "--preset", PRESET, "--seeds", "20", "--T", "2000", "--mode",
               "fast", "--out", str(scratch / "cold"), "--quiet"], ROOT, env)
    out["fast, empty kernel cache (first run after install)"] = {"wall": t[0], "cpu": t[1]}
    shutil.rmtree(cold, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return out


def imports(turns: int) -> dict:
    probe = "import sys, importlib; importlib.import_module(sys.argv[1]); print(','.join(m for m in sys.argv[2:] if m in sys.modules))"
    loaded = {m: subprocess.run([PY, "-c", probe, m, *HEAVY], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip() for m in MODULES}
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in ("(bare interpreter)", *MODULES)}
    for _ in range(turns):
        times["(bare interpreter)"].append(timed([PY, "-c", "pass"], ROOT))
        for m in MODULES:
            times[m].append(timed([PY, "-c", f"import {m}"], ROOT))
    bare_w = statistics.median(w for w, _ in times["(bare interpreter)"])
    bare_c = statistics.median(c for _, c in times["(bare interpreter)"])
    return {m: {"wall_s": statistics.median(w for w, _ in ts) - (0 if m.startswith("(") else bare_w),
                "cpu_s": statistics.median(c for _, c in ts) - (0 if m.startswith("(") else bare_c),
                "loads": loaded.get(m, "")} for m, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--with-plot", action="store_true", help="also time ours with --plot")
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--imports", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the breakdown and turns of the imports")
    a = ap.parse_args()
    report = json.loads(OUT.read_text()) if OUT.exists() else {}
    report.update({"machine": "2-core x86_64 CPU, 24 GiB, no GPU (shared with 4 other jobs)",
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())})
    if a.whole:
        report["whole"] = whole(a.turns, a.with_plot)
        print("\n| command | wall median [min, max] (s) | CPU median (s) | speed-up, wall, per turn: median [min, max] |")
        print("|---|---|---|---|")
        for name, r in report["whole"].items():
            if name == "commands":
                continue
            sp = (f"{r['ratio_wall']['median']:.1f}x [{r['ratio_wall']['min']:.1f}, {r['ratio_wall']['max']:.1f}]"
                  if "ratio_wall" in r else "-")
            print(f"| {name} | {r['wall']['median']:.2f} [{r['wall']['min']:.2f}, {r['wall']['max']:.2f}] | "
                  f"{r['cpu']['median']:.2f} | {sp} |")
    if a.breakdown:
        report["breakdown"] = breakdown(a.repeats)
        print(json.dumps(report["breakdown"], indent=1))
    if a.imports:
        report["imports"] = imports(a.repeats)
        print("\n| module | import wall (s) | import CPU (s) | heavy libraries loaded |")
        print("|---|---|---|---|")
        for m, r in report["imports"].items():
            print(f"| {m} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['loads'] or '-'} |")
    OUT.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
