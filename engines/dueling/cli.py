"""Command line of the dueling-bandit simulator: ``python -m engines.dueling run|sweep ...``.

``run [--preset NAME] [--T ..] [--d ..] [--K ..] [--phi ..] [--delay ..] [--mode ..]
[--algorithms A,B] [--seeds N] --out DIR [--plot] [--every N] [--overwrite]`` runs one
:func:`engines.dueling.simulate` (the reference's ``main.py run``) and writes

* ``DIR/regret.csv``: the cumulative-regret curves, tidy (round, regret, method, run, seed), every
  ``--every`` rounds (default: every round, as the reference writes them);
* ``DIR/summary.json``: ``SimResult.to_dict()`` (configuration, final-regret table, diagnostics,
  seconds); the ranked table is printed too;
* ``DIR/regret.png`` with ``--plot``: mean cumulative regret +/- 1 std over seeds.

``sweep --param P --values v1,v2,... --seeds N [--seeds-per-task B] [--max-hours H] [the run
flags] --out DIR [--overwrite] [--ray [ADDRESS]]`` runs :func:`engines.dueling.simulate` once per
(value, block of B seeds) and writes

* ``DIR/sweep_runs.csv``: one row per (value, seed, algorithm) with the final cumulative regret;
* ``DIR/sweep.csv``: per (value, algorithm) the mean and std (ddof 0) over seeds;
* ``DIR/sweep.png``: final cumulative regret (utility units, mean +/- 1 std) against P.

Seed r of the N is ``seed_base + 100 r`` (the simulator's convention), whichever block runs it,
so ``--ray`` (one task per block) and one process give the same numbers. Before any work the
cost model (``engines.dueling.cost``) refuses a sweep whose estimated CPU time is over
``--max-hours`` (default 24) or a block over the simulator's own caps; nothing is written then.
A block that fails is reported and its seeds left out of the means; exit status 1 then, 2 on bad
usage, else 0. DIR may be new or a folder, not a file; files of an earlier run there are
replaced only with ``--overwrite``. Ctrl-C or SIGTERM writes the three files for the blocks
finished by then and ends with one line and exit status 130 or 143.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

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
    output_path,
    ray_address,
    refuse_existing,
    run_batch,
    run_command,
    write_atomic,
)
from engines.common.errors import InputError
from engines.dueling.config import SimConfig
from engines.dueling.cost import check_budget, estimate_seconds
from engines.dueling.experiments import PRESETS, SWEEPABLE, preset_config, sweep_values
from engines.dueling.simulate import SimResult, simulate

OUTPUTS = ("sweep_runs.csv", "sweep.csv", "sweep.png")
RUN_OUTPUTS = ("regret.csv", "summary.json", "regret.png")
#: Default cap on a sweep's estimated CPU time (hours of one core, before Ray spreads it).
MAX_SWEEP_HOURS = 24.0


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
    try:
        return sweep_values(param, vals, name=param)
    except InputError as exc:
        raise InputError(f"--values {text!r}: {exc}") from None


def base_config(args: argparse.Namespace) -> SimConfig:
    """The configuration every point of the sweep starts from: a preset or the defaults, then the flags."""
    over = {k: getattr(args, k) for k in ("T", "d", "K", "phi", "delay", "mode") if getattr(args, k) is not None}
    if args.algorithms:
        over["algorithms"] = tuple(a.strip() for a in args.algorithms.split(",") if a.strip())
    if args.post_serving is not None:
        over["post_serving"] = args.post_serving
    if args.seeds is not None:
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


def check_cost(cfg: SimConfig, param: str, values: list, block: int, max_hours: float) -> float:
    """The sweep's estimated CPU seconds (``cost.estimate_seconds`` summed over its blocks), or
    InputError before any work: a block over the simulator's own caps (time, memory, rounds), or
    a total over ``max_hours``."""
    if not max_hours > 0:
        raise InputError(f"--max-hours {max_hours:g}: give a positive number of hours")
    sizes = Counter(min(block, cfg.n_seeds - i) for i in range(0, cfg.n_seeds, block))
    total = 0.0
    for v in values:
        for n, count in sizes.items():
            one = dataclasses.replace(cfg, **{param: v}, n_seeds=n)
            try:
                check_budget(one)
            except InputError as exc:
                raise InputError(f"a block ({param}={v}, {n} seed{'s' if n != 1 else ''}) is refused: {exc}") from None
            total += count * estimate_seconds(one)
    if total > max_hours * 3600:
        raise InputError(f"this sweep would take about {total / 3600:,.1f} h of CPU here (cap --max-hours "
                         f"{max_hours:g}): use fewer values, seeds or rounds"
                         + (", or --mode fast" if cfg.mode == "faithful" else ""))
    return total


def _axes(size: tuple[float, float]):
    """A new matplotlib figure and axes (Agg, loaded on first use: only a plot needs it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)


def _png(fig, ax, xlabel: str, ylabel: str, title: str) -> bytes:
    """Label, grid and legend ``ax``; the figure as PNG bytes (the figure is closed)."""
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _plot(path: Path, param: str, values: list, stats: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    fig, ax = _axes((6.5, 4.2))
    for name, (m, s) in stats.items():
        ax.errorbar(values, m, yerr=s, marker="o", capsize=3, label=name)
    write_atomic(path, _png(fig, ax, param, "final cumulative regret (utility units)", "mean +/- 1 std over seeds"))


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
    if args.param not in SWEEPABLE:
        raise InputError(f"--param {args.param!r}: choose from {', '.join(SWEEPABLE)}")
    if args.seeds_per_task < 1:
        raise InputError("--seeds-per-task must be >= 1")
    cfg = base_config(args)
    values = _values(args.values, args.param)
    est = check_cost(cfg, args.param, values, args.seeds_per_task, args.max_hours)
    items = plan(cfg, args.param, values, args.seeds_per_task)
    out = output_path(args.out, "--out")
    check_output_folder(out)
    refuse_existing([out / name for name in OUTPUTS], args.overwrite)
    make_folder(out)
    rep = run_batch(run_block, items, ray=ray_address(args.ray), workers=args.workers,
                    desc=f"sweep (about {est / 60:.1f} min of CPU)", progress=not args.quiet)
    with interrupt_deferred():
        write_outputs(out, args.param, values, items, rep)
    if rep.interrupted:
        print(rep.interrupted_line("block", f"{out / 'sweep.csv'} (with sweep_runs.csv, sweep.png)"), file=sys.stderr)
        return INTERRUPTED
    print(rep.summary("block") + f"\nwrote {out / 'sweep.csv'}, {out / 'sweep_runs.csv'}, {out / 'sweep.png'}",
          file=sys.stderr)
    return 1 if rep.failed else 0


def _regret_png(res: SimResult) -> bytes:
    """Mean cumulative regret over seeds with a +/-1 std band, at most 2,000 points per curve."""
    T = res.config.T
    idx = np.unique(np.linspace(0, T - 1, min(T, 2000)).astype(np.int64))
    fig, ax = _axes((7, 4.3))
    for name, R in res.regret.items():
        m, sd = R[:, idx].mean(0), R[:, idx].std(0)
        (line,) = ax.plot(idx + 1, m, label=name)
        ax.fill_between(idx + 1, m - sd, m + sd, color=line.get_color(), alpha=0.15)
    return _png(fig, ax, "round t", "cumulative regret (utility units)",
                f"mean +/- 1 std over {res.config.n_seeds} seeds, mode {res.config.mode}")


def cmd_run(args: argparse.Namespace) -> int:
    if args.every < 1:
        raise InputError(f"--every {args.every}: give a whole number of rounds >= 1")
    cfg = base_config(args)
    check_budget(cfg)
    out = output_path(args.out, "--out")
    check_output_folder(out)
    refuse_existing([out / name for name in RUN_OUTPUTS], args.overwrite)
    new_folder = not out.exists()
    make_folder(out)  # before the run: a folder that cannot be made is found out now
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=cfg.T, unit="round", file=sys.stderr, dynamic_ncols=True,
                   desc=f"simulate (about {estimate_seconds(cfg):.0f} s)")
    try:
        res = simulate(cfg, None if bar is None else lambda f, _msg: bar.update(round(f * cfg.T) - bar.n))
    except BaseException:
        if new_folder:  # a run stopped early (Ctrl-C, SIGTERM) leaves no empty folder behind
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    finally:
        if bar is not None:
            bar.close()
    with interrupt_deferred():
        write_atomic(out / "regret.csv", res.to_csv(stride=args.every))
        write_atomic(out / "summary.json", json.dumps(res.to_dict(), indent=1) + "\n")
        if args.plot:
            write_atomic(out / "regret.png", _regret_png(res))
        else:  # an earlier run's plot would not match these curves
            (out / "regret.png").unlink(missing_ok=True)
    for row in res.table():
        print(f"{row['rank']}. {row['algorithm']:<14} {row['final_regret_mean']:10.1f} "
              f"+/- {row['final_regret_std']:.1f}")
    wrote = ", ".join(str(out / n) for n in RUN_OUTPUTS[:3 if args.plot else 2])
    print(f"{res.seconds:.2f} s for {len(res.regret)} algorithms x {cfg.n_seeds} seeds x {cfg.T} rounds "
          f"(mode {cfg.mode}); wrote {wrote}", file=sys.stderr)
    return 0


def _config_arguments(p: argparse.ArgumentParser, seeds: int | None) -> None:
    """The flags that set the simulated configuration (a preset or the defaults, then these)."""
    p.add_argument("--preset", choices=list(PRESETS), default=None, help="start from a paper preset")
    p.add_argument("--seeds", type=int, default=seeds,
                   help=f"independent runs (default {seeds or 'the preset or 5'})")
    p.add_argument("--T", type=int, default=None, help="horizon (rounds)")
    p.add_argument("--d", type=int, default=None, help="context dimension")
    p.add_argument("--K", type=int, default=None, help="arms per round")
    p.add_argument("--phi", default=None, help="post-serving mapping")
    p.add_argument("--post-serving", dest="post_serving", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--delay", default=None, help="stochastic, geometric, strategic or none")
    p.add_argument("--mode", default=None, help="faithful or fast")
    p.add_argument("--algorithms", default=None, help="comma-separated, e.g. RCDP-UCB,RCDB")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    add_overwrite_argument(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m engines.dueling",
                                 description="Dueling-bandit simulations: one run, or sweeps over seeds.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rn = sub.add_parser("run", help="one simulation: regret curves (CSV), summary (JSON), plot (--plot)")
    _config_arguments(rn, seeds=None)
    rn.add_argument("--every", type=int, default=1, help="write the curves every N rounds (default 1)")
    rn.add_argument("--plot", action="store_true", help="also write regret.png")
    rn.set_defaults(func=cmd_run)
    sw = sub.add_parser("sweep", help="final regret against one parameter; CSV + PNG")
    sw.add_argument("--param", required=True, help=f"the swept SimConfig field: {', '.join(SWEEPABLE)}")
    sw.add_argument("--values", required=True, help="comma-separated values, e.g. 0,10,25,50")
    _config_arguments(sw, seeds=5)
    sw.add_argument("--seeds-per-task", type=int, default=1, help="seeds simulated together in one task")
    sw.add_argument("--max-hours", type=float, default=MAX_SWEEP_HOURS,
                    help=f"refuse a sweep estimated over this much CPU time (default {MAX_SWEEP_HOURS:g} h)")
    add_ray_arguments(sw)
    sw.set_defaults(func=cmd_sweep)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run_command(lambda: args.func(args))
