"""Batch command of the dueling-bandit simulator (``python -m engines.bandits sweep ...``).

``sweep --param P --values v1,v2,... --seeds N [--seeds-per-task B] [--preset NAME] [--T ..]
[--d ..] [--K ..] [--phi ..] [--delay ..] [--mode ..] [--algorithms A,B] --out DIR [--overwrite] [--ray [ADDRESS]]``

Runs :func:`engines.bandits.simulate` once per (value, block of B seeds) and writes

* ``DIR/sweep_runs.csv``: one row per (value, seed, algorithm) with the final cumulative regret;
* ``DIR/sweep.csv``: per (value, algorithm) the mean and std (ddof 0) over seeds;
* ``DIR/sweep.png``: final cumulative regret (utility units, mean +/- 1 std) against P.

Seed r of the N is ``seed_base + 100 r`` (the simulator's convention), whichever block runs it,
so ``--ray`` (one task per block) and one process give the same numbers. A block that fails is
reported and its seeds left out of the means; exit status 1 then, 2 on bad usage, else 0. DIR
may be new or a folder, not a file; files of an earlier sweep there are replaced only with
``--overwrite``. Ctrl-C writes the three files for the blocks finished by then, ends with one
line and exit status 130.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import math
import sys
from pathlib import Path

import numpy as np

from engines.bandits.config import SimConfig
from engines.bandits.experiments import PRESETS, SWEEPABLE, preset_config
from engines.bandits.simulate import simulate
from engines.common.batch import (
    INTERRUPTED,
    Item,
    Report,
    add_overwrite_argument,
    add_ray_arguments,
    check_output_folder,
    csv_text,
    interrupt_deferred,
    make_folder,
    ray_address,
    refuse_existing,
    run_batch,
    run_command,
    write_atomic,
)
from engines.common.errors import InputError

INT_PARAMS = ("corruption_budget", "delay_budget", "d", "K")
OUTPUTS = ("sweep_runs.csv", "sweep.csv", "sweep.png")


def run_block(spec: tuple[dict, int, int]) -> dict[str, list[float]]:
    """Simulate one block: (SimConfig fields, first seed, number of seeds) -> {algorithm: final
    cumulative regret of each seed}."""
    fields, seed0, n = spec
    res = simulate(SimConfig(**{**fields, "n_seeds": n, "seed_base": seed0}))
    return {a: [float(x) for x in r[:, -1]] for a, r in res.regret.items()}


def _values(text: str, param: str) -> list[float | int]:
    try:
        vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--values {text!r}: give numbers separated by commas, e.g. 0,10,25") from None
    if not 1 <= len(vals) <= 50:
        raise InputError("give between 1 and 50 values")
    if bad := [v for v in vals if not math.isfinite(v)]:
        raise InputError(f"--values {text!r}: {bad[0]} is not a finite number")
    if param in INT_PARAMS:
        if frac := [v for v in vals if not v.is_integer()]:
            raise InputError(f"--values {text!r}: {param} takes whole numbers, not {frac[0]:g}")
        return [int(v) for v in vals]
    return vals


def base_config(args: argparse.Namespace) -> SimConfig:
    """The configuration every point of the sweep starts from: a preset or the defaults, then the flags."""
    over = {k: getattr(args, k) for k in ("T", "d", "K", "phi", "delay", "mode") if getattr(args, k) is not None}
    if args.algorithms:
        over["algorithms"] = tuple(a.strip() for a in args.algorithms.split(",") if a.strip())
    if args.post_serving is not None:
        over["post_serving"] = args.post_serving
    over["n_seeds"] = args.seeds
    if args.preset:
        return preset_config(args.preset, **over)
    return SimConfig(**over)


def plan(cfg: SimConfig, param: str, values: list, block: int) -> list[Item]:
    """One item per (value, seed block); the payload is everything the task needs."""
    if param not in SWEEPABLE:
        raise InputError(f"--param {param!r}: choose from {', '.join(SWEEPABLE)}")
    if block < 1:
        raise InputError("--seeds-per-task must be >= 1")
    seeds = cfg.seeds
    items = []
    for v in values:
        fields = dataclasses.asdict(dataclasses.replace(cfg, **{param: v}))  # validates every value
        fields.pop("n_seeds"), fields.pop("seed_base")
        for i in range(0, len(seeds), block):
            n = min(block, len(seeds) - i)
            items.append(Item(f"{param}={v} seeds {i}..{i + n - 1}", (fields, seeds[i], n)))
    return items


def _plot(path: Path, param: str, values: list, stats: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, (m, s) in stats.items():
        ax.errorbar(values, m, yerr=s, marker="o", capsize=3, label=name)
    ax.set_xlabel(param)
    ax.set_ylabel("final cumulative regret (utility units)")
    ax.set_title("mean +/- 1 std over seeds", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    write_atomic(path, buf.getvalue())


def write_outputs(out: Path, param: str, values: list, items: list[Item], rep: Report) -> None:
    """The three files, from the blocks in ``rep`` (all of them, or those finished before Ctrl-C).
    With no block to plot, a sweep.png left by an earlier run is removed rather than left to
    stand beside tables it does not match."""
    finals: dict[float, dict[str, dict[int, float]]] = {v: {} for v in values}
    runs: list[list] = [[param, "seed", "algorithm", "final_regret"]]
    for o in rep.ok:
        fields, seed0, _ = items[o.index].payload
        v = fields[param]
        for alg, regs in o.value.items():
            for j, r in enumerate(regs):
                seed = seed0 + 100 * j
                finals[v].setdefault(alg, {})[seed] = r
                runs.append([v, seed, alg, f"{r:.6g}"])
    write_atomic(out / "sweep_runs.csv", csv_text(runs))
    algs = list(dict.fromkeys(a for v in values for a in finals[v]))
    stats = {}
    means: list[list] = [[param, "algorithm", "final_regret_mean", "final_regret_std", "seeds"]]
    for a in algs:
        m = np.array([np.mean(list(finals[v].get(a, {}).values()) or [np.nan]) for v in values])
        s = np.array([np.std(list(finals[v].get(a, {}).values()) or [np.nan]) for v in values])
        stats[a] = (m, s)
        for v, mi, si in zip(values, m, s):
            means.append([v, a, f"{mi:.6g}", f"{si:.6g}", len(finals[v].get(a, {}))])
    write_atomic(out / "sweep.csv", csv_text(means))
    if algs:
        _plot(out / "sweep.png", param, values, stats)
    else:
        (out / "sweep.png").unlink(missing_ok=True)


def cmd_sweep(args: argparse.Namespace) -> int:
    cfg = base_config(args)
    values = _values(args.values, args.param)
    items = plan(cfg, args.param, values, args.seeds_per_task)
    out = Path(args.out)
    check_output_folder(out)
    refuse_existing([out / name for name in OUTPUTS], args.overwrite)
    make_folder(out)
    rep = run_batch(run_block, items, ray=ray_address(args.ray), workers=args.workers, desc="sweep",
                    progress=not args.quiet)
    with interrupt_deferred():
        write_outputs(out, args.param, values, items, rep)
    if rep.interrupted:
        print(rep.interrupted_line("block", f"{out / 'sweep.csv'} (with sweep_runs.csv, sweep.png)"), file=sys.stderr)
        return INTERRUPTED
    print(rep.summary("block") + f"\nwrote {out / 'sweep.csv'}, {out / 'sweep_runs.csv'}, {out / 'sweep.png'}",
          file=sys.stderr)
    return 1 if rep.failed else 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m engines.bandits",
                                 description="Dueling-bandit sweeps over seeds, one task per seed block.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sw = sub.add_parser("sweep", help="final regret against one parameter; CSV + PNG")
    sw.add_argument("--param", required=True, help=f"the swept SimConfig field: {', '.join(SWEEPABLE)}")
    sw.add_argument("--values", required=True, help="comma-separated values, e.g. 0,10,25,50")
    sw.add_argument("--seeds", type=int, default=5, help="seeds per value (default 5)")
    sw.add_argument("--seeds-per-task", type=int, default=1, help="seeds simulated together in one task")
    sw.add_argument("--preset", choices=list(PRESETS), default=None, help="start from a paper preset")
    sw.add_argument("--T", type=int, default=None, help="horizon (rounds)")
    sw.add_argument("--d", type=int, default=None, help="context dimension")
    sw.add_argument("--K", type=int, default=None, help="arms per round")
    sw.add_argument("--phi", default=None, help="post-serving mapping")
    sw.add_argument("--post-serving", dest="post_serving", action=argparse.BooleanOptionalAction, default=None)
    sw.add_argument("--delay", default=None, help="stochastic, geometric, strategic or none")
    sw.add_argument("--mode", default=None, help="faithful or fast")
    sw.add_argument("--algorithms", default=None, help="comma-separated, e.g. RCDP-UCB,RCDB")
    sw.add_argument("--out", required=True, help="output folder (created if missing)")
    add_overwrite_argument(sw)
    sw.add_argument("--quiet", action="store_true", help="no progress bar")
    add_ray_arguments(sw)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run_command(lambda: cmd_sweep(args))
