"""Dueling bandits tab: RCDP-UCB against baselines under post-serving contexts, delays, corruption.

UI only: every action is one call into ``engines.dueling`` (``simulate`` or ``sweep``).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import gradio as gr
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from demos import notes
from demos.ui import (
    PHONE_PAIR,
    cache_file,
    choice,
    choices,
    clear_on_error,
    figure_to_image,
    friendly_errors,
    number,
    one_at_a_time,
    text,
)
from engines.common import ASSETS_DIR, InputError
from engines.dueling import (
    BASE_ALGORITHMS,
    DELAYS,
    LIMITS,
    MAPPINGS,
    PRESETS,
    SimConfig,
    estimate_seconds,
    loglog_slope,
    preset_config,
    simulate,
    sweep,
    sweep_seconds,
)

FIG_DIR = ASSETS_DIR / "dueling"

INTRO = ("Watch RCDP-UCB and four baselines learn which of two options people prefer when the feedback comes "
         f"late and some of it is flipped on purpose, and compare their regret. {notes.link('bandits')}")
#: What the Advanced section says about the settings that are not the paper's or the reference's.
ADVANCED_NOTE = (
    "Each round K arms arrive with contexts x ~ U[-pi, pi]^d; a post-serving context y = phi(x) is seen only after "
    "serving. Feedback may be **delayed** (stochastic N(mu, std^2), geometric, or adversarial: floor(sqrt(Lambda)) "
    "rounds while the budget Lambda lasts) and **flipped** (an adversary flips outcomes that favour the better arm "
    "until C is spent). Regret per round is the mean utility gap of the two arms served. "
    "**Not from the paper or the reference:** the fast mode, the same contexts and noise for every algorithm, "
    "the growing radius beta_t, the geometric delay. RCDP-UCB is provisioned for C = 25, Lambda = 10^4, "
    "mu = 100, kappa = 0.25 whatever the environment, as in the paper.")
MODE_INFO = ("faithful: exact refits after every arrival, as the reference code; fast: refits when the history "
             "has grown 5 %, predictor on 128-row minibatches (not from the paper or the reference)")

#: Seconds the tab takes to draw a run's plot, write its CSV and summary (0.14-0.2 s measured on
#: this project's machine, like the engine's cost model; the first plot of a process 0.4 s).
OUTPUT_SECONDS = 0.2
#: Points per curve in the regret plot (thinned evenly over the rounds; the CSV has every T/500-th).
PLOT_POINTS = 2000
#: The tab's cost bounds: estimated run time, array memory, and T x seeds x algorithms rounds
#: (a sweep over T up to its 200,000-round limit with 5 seeds and 5 algorithms fits exactly).
MAX_SECONDS = 300.0
MAX_BYTES = 5e8
MAX_ROUND_STEPS = 5_000_000
EXPLORATIONS = ("constant 0.1 (reference)", "beta_t (not in the reference)")
SWEEP_PARAMS = {"corruption budget C": "corruption_budget", "delay budget Lambda": "delay_budget",
                "horizon T": "T", "delay std": "delay_std"}

#: White pixel rows above each plot, where the image component's toolbar sits (it covered the
#: top-right data and, with the label, the legend).
TOOLBAR_MARGIN = 56
#: Seeds a loaded preset runs (the paper's figures average 5 runs).
PRESET_SEEDS = 5
#: The preset the tab opens with; the controls start at its values.
DEFAULT_PRESET = "Fig. 1 linear, stochastic delay"
#: Delay regimes as the tab names them: the engine's "strategic" is called adversarial everywhere
#: a user reads (intro, labels, presets), so the radio says so too.
DELAY_CHOICES = [("adversarial" if v == "strategic" else v, v) for v in DELAYS]

_COLORS = {"RCDP-UCB": "#1f77b4", "RCDB": "#2ca02c", "CoLSTIM": "#ff7f0e", "MaxInP": "#9467bd",
           "MaxPairUCB": "#d62728"}


def _color(name: str) -> str:
    return _COLORS.get(name.replace("+PS", ""), "black")


def regret_plot(result) -> Image.Image:
    """Mean cumulative regret over seeds with a +/-1 std band, one line per algorithm."""
    fig, ax = plt.subplots(figsize=(8, 4.6))
    T = result.config.T
    idx = np.unique(np.linspace(0, T - 1, min(T, PLOT_POINTS)).astype(np.int64))  # bounded points
    t = idx + 1
    for name, R in result.regret.items():
        m, s = R[:, idx].mean(0), R[:, idx].std(0)
        ax.plot(t, m, color=_color(name), lw=2.6 if name == "RCDP-UCB" else 1.6, label=name)
        ax.fill_between(t, m - s, m + s, color=_color(name), alpha=0.15)
    cfg = result.config
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret (utility units)")
    ax.set_title(plot_title(cfg), fontsize=9, loc="left")
    ax.grid(alpha=0.3)
    _outside_legend(ax)
    return figure_to_image(fig, top_margin=TOOLBAR_MARGIN)


def plot_title(cfg: SimConfig) -> str:
    """The regret plot's title: what was run, in the tab's words (no "phi=-" where there is no
    post-serving context, no "1 seeds")."""
    delay = "adversarial" if cfg.delay == "strategic" else cfg.delay
    context = f"post-serving context phi = {cfg.phi}" if cfg.post_serving else "no post-serving context"
    return (f"Cumulative regret (mean, band +/-1 std)\n{_count(cfg.n_seeds, 'seed')}, d={cfg.d}, K={cfg.K}, "
            f"{context}, delay {delay}, C={cfg.corruption_budget if cfg.corruption != 'none' else 0}, "
            f"mode {cfg.mode}")


def _count(n: int, what: str) -> str:
    """"1 seed", "5 seeds"."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def _with_toolbar_room(path) -> Image.Image:
    """A committed figure with TOOLBAR_MARGIN white rows on top, like the live plots."""
    from PIL import ImageOps

    with Image.open(path) as im:
        return ImageOps.expand(im.convert("RGB"), border=(0, TOOLBAR_MARGIN, 0, 0), fill="white")


def _outside_legend(ax) -> None:
    """Legend to the right of the axes, at the bottom: it covers no data, and the image
    component's toolbar (top right) and nothing else can cover it."""
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(1.01, 0.0), borderaxespad=0.0)


def sweep_plot(sw, loglog: bool = False) -> Image.Image:
    """Final regret (mean +/- std over seeds) against the swept parameter."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    x = np.array(sw.values)
    for name in sw.mean:
        ax.errorbar(x, sw.mean[name], yerr=sw.std[name], marker="o", capsize=3,
                    color=_color(name), label=name)
    label = {"corruption_budget": "corruption budget C (flipped outcomes)",
             "delay_budget": "adversarial delay budget Lambda (rounds)", "T": "horizon T (rounds)",
             "delay_std": "stochastic delay std (rounds)"}.get(sw.param, sw.param)
    ax.set_xlabel(label)
    ax.set_ylabel("final cumulative regret (utility units)")
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
        for name in sw.mean:
            try:
                ax.plot([], [], " ", label=f"{name}: slope {loglog_slope(x, sw.mean[name]):.2f}")
            except InputError:
                pass
    ax.set_title("Final regret vs the swept parameter (mean +/- 1 std)", fontsize=9, loc="left")
    ax.grid(alpha=0.3, which="both")
    _outside_legend(ax)
    return figure_to_image(fig, top_margin=TOOLBAR_MARGIN)


def _number(value, name: str):
    """A control's value within the engine's bounds for that field (``engines.dueling.LIMITS``)."""
    lim = LIMITS[name]
    return number(value, lim.label, lim.lo, lim.hi, whole=lim.whole)


def _config(d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
            corruption_budget, algorithms, baselines_ps, mode, exploration) -> SimConfig:
    algos = choices(algorithms, "algorithms", BASE_ALGORITHMS)
    if not algos:
        raise InputError("tick at least one algorithm")
    post_serving = choice(post_serving, "post-serving context y = phi(x)", (True, False))
    if choice(baselines_ps, "baselines use the predictor (+PS)", (True, False)):
        if not post_serving:
            raise InputError("'baselines use the predictor' needs post-serving context: tick it too")
        algos = [a if a == "RCDP-UCB" else f"{a}+PS" for a in algos]
    d, K, T, seeds, delay_mean, delay_std, delay_budget, corruption_budget = (
        _number(v, name) for v, name in ((d, "d"), (K, "K"), (T, "T"), (seeds, "n_seeds"),
                                         (delay_mean, "delay_mean"), (delay_std, "delay_std"),
                                         (delay_budget, "delay_budget"),
                                         (corruption_budget, "corruption_budget")))
    return SimConfig(d=d, K=K, T=T, n_seeds=seeds, phi=choice(phi, "mapping phi", MAPPINGS),
                     post_serving=post_serving, delay=choice(delay, "delay regime", DELAYS),
                     delay_mean=delay_mean, delay_std=delay_std, delay_budget=delay_budget,
                     corruption="strategic" if corruption_budget > 0 else "none",
                     corruption_budget=corruption_budget, algorithms=tuple(algos),
                     mode=choice(mode, "mode", ("faithful", "fast")),
                     exploration="beta_t" if choice(exploration, "RCDP-UCB exploration",
                                                    EXPLORATIONS).startswith("beta") else "constant",
                     max_seconds=MAX_SECONDS, max_bytes=MAX_BYTES, max_round_steps=MAX_ROUND_STEPS)


def _summary(res) -> str:
    cfg = res.config
    lines = [(f"**{res.seconds:.1f} s** for {_count(len(res.regret), 'algorithm')} x {_count(cfg.n_seeds, 'seed')} x "
              f"{_count(cfg.T, 'round')} (mode **{cfg.mode}**). RCDP-UCB exploration: {res.exploration}."),
             "",
             ("| algorithm | outcomes flipped (mean per seed) | delay applied (rounds, total) | "
              "mean delay per sample (rounds) | RCDP-UCB mean weight omega |"),
             "|---|---|---|---|---|"]
    for k, dg in res.diagnostics.items():
        om = f"{dg['mean_omega']:.3f}" if "mean_omega" in dg else "-"
        lines.append(f"| {k} | {dg['flipped']:.1f} | {dg['delay_used']:.0f} | "
                     f"{dg['mean_delay']:.1f} | {om} |")
    return "\n".join(lines)


def wait_seconds(cfg: SimConfig) -> float:
    """What a Run click is expected to take here: the simulation (the engine's cost model) and
    this tab's plot and CSV of its curves."""
    return estimate_seconds(cfg) + OUTPUT_SECONDS


def _seconds(s: float) -> str:
    """A wait in plain words: "0.4 s", "12 s", "3.5 min"."""
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def _shown_wait(progress, total: float, work: Callable[[float], float]) -> Callable[[float, str], None]:
    """A progress callback that shows the expected wait: the estimate at the start, then the time
    left, the estimate of the work still to do (``work(fraction of rounds)`` is the share done)
    scaled by the pace measured so far."""
    start = time.monotonic()
    progress(0.0, desc=f"about {_seconds(total)} (estimated for this machine)")

    def show(fraction: float, message: str) -> None:
        done, elapsed = min(max(work(fraction), 0.0), 1.0), time.monotonic() - start
        left = total * (1 - done) if done < 0.05 or elapsed < 1 else elapsed / done * (1 - done)
        progress(fraction, desc=f"{message}: about {_seconds(left)} left")

    return show


@friendly_errors
def run_simulation(d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
                   corruption_budget, algorithms, baselines_ps, mode, exploration,
                   progress=gr.Progress()):  # noqa: B008 - gradio idiom
    """Run one simulation; return (regret plot, final-regret table, CSV path, summary markdown)."""
    cfg = _config(d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
                  corruption_budget, algorithms, baselines_ps, mode, exploration)
    show = None
    if progress is not None:  # gr.Progress has a length (0 before any tqdm): never test its truth
        total = estimate_seconds(cfg)
        show = _shown_wait(progress, wait_seconds(cfg),
                           lambda f: estimate_seconds(dataclasses.replace(cfg, T=max(1, round(f * cfg.T)))) / total)
    res = simulate(cfg, progress=show)
    table = [[r["rank"], r["algorithm"], round(r["final_regret_mean"], 1),
              round(r["final_regret_std"], 1), round(r["min"], 1), round(r["max"], 1)]
             for r in res.table()]
    path = cache_file("bandits_regret", ".csv")  # in Gradio's cache: the app's delete_cache removes it
    with open(path, "w") as fh:
        fh.write(res.to_csv(stride=max(1, cfg.T // 500)))
    return regret_plot(res), table, path, _summary(res)


@friendly_errors
def run_sweep(d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
              corruption_budget, algorithms, baselines_ps, mode, exploration, param, values,
              progress=gr.Progress()):  # noqa: B008 - gradio idiom
    """Final regret vs C, Lambda, or T (T from a single run); returns (plot, table)."""
    cfg = _config(d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
                  corruption_budget, algorithms, baselines_ps, mode, exploration)
    values = text(values, "values (comma-separated)", 2000)
    try:
        vals = [float(v) for v in values.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise InputError("values must be numbers separated by commas, e.g. 0, 10, 25, 50") from None
    key = SWEEP_PARAMS[choice(param, "sweep", SWEEP_PARAMS)]
    show = None
    if progress is not None:  # gr.Progress has a length (0 before any tqdm): never test its truth
        show = _shown_wait(progress, sweep_seconds(cfg, key, vals) + OUTPUT_SECONDS, lambda f: f)
    sw = sweep(cfg, key, vals, progress=show)
    rows = [[r[sw.param], r["algorithm"], round(r["final_regret_mean"], 1),
             round(r["final_regret_std"], 1)] for r in sw.rows()]
    return sweep_plot(sw, loglog=(key == "T")), rows


@friendly_errors
def load_preset(name: str):
    """Fill the controls from a preset (one of the paper's figures)."""
    choice(name, "Preset (paper figure)", PRESETS)
    cfg = preset_config(name, n_seeds=PRESET_SEEDS)
    base = sorted({a.replace("+PS", "") for a in cfg.algorithms}, key=BASE_ALGORITHMS.index)
    ps = any(a.endswith("+PS") for a in cfg.algorithms)
    mode, why = preset_mode(cfg)
    wait = wait_seconds(dataclasses.replace(cfg, mode=mode))
    return (cfg.d, cfg.K, cfg.T, PRESET_SEEDS, cfg.phi, cfg.post_serving, cfg.delay,
            cfg.delay_mean, cfg.delay_std, cfg.delay_budget, cfg.corruption_budget, base, ps, mode,
            f"Reproduces {PRESETS[name][0]}. {why} A run takes about {_seconds(wait)} here.")


def preset_mode(cfg: SimConfig) -> tuple[str, str]:
    """The mode a preset runs in as loaded, and a sentence saying why.

    A preset must run when the user presses Run right after loading it, so it gets the
    reference's 'faithful' mode only when that fits the tab's time cap, else 'fast'.
    """
    est = estimate_seconds(dataclasses.replace(cfg, mode="faithful"))
    if est <= MAX_SECONDS:
        return "faithful", "Mode: faithful (what the reference code does)."
    return "fast", (f"Mode set to fast: faithful would take about {est / 60:.0f} min here, over "
                    f"this tab's {MAX_SECONDS / 60:.0f} min limit.")


def build() -> None:
    """Add the Dueling bandits tab's components and events."""
    gr.Markdown(INTRO)
    # The controls open at the default preset's values, so the dropdown and controls agree.
    (v_d, v_K, v_T, v_seeds, v_phi, v_ps, v_delay, v_mu, v_std, v_lam, v_C, v_algos, v_bps,
     v_mode, v_note) = load_preset(DEFAULT_PRESET)
    with gr.Row():
        preset = gr.Dropdown(list(PRESETS), value=DEFAULT_PRESET, label="Preset (paper figure)", scale=3)
        preset_btn = gr.Button("Load preset", variant="secondary", scale=1)
    with gr.Row():
        with gr.Row(elem_classes=[PHONE_PAIR]):  # on a phone two to a line, so Run comes up
            d = gr.Slider(LIMITS["d"].lo, LIMITS["d"].hi, value=v_d, step=1, label=LIMITS["d"].label)
            K = gr.Slider(LIMITS["K"].lo, LIMITS["K"].hi, value=v_K, step=1, label=LIMITS["K"].label)
        with gr.Row(elem_classes=[PHONE_PAIR]):
            T = gr.Number(value=v_T, precision=0, label="T (rounds)")
            seeds = gr.Number(value=v_seeds, label=LIMITS["n_seeds"].label)  # bounds: checked in _number
    with gr.Row():
        algorithms = gr.CheckboxGroup(list(BASE_ALGORITHMS), value=v_algos, label="algorithms", scale=2)
        delay = gr.Radio(DELAY_CHOICES, value=v_delay, label="delay regime", scale=2)
        corruption_budget = gr.Number(value=v_C, precision=0, label="corruption budget C (flips)", scale=1)
    # Run before the advanced settings, which are read all the same: on a phone it is reached sooner
    run_btn = gr.Button("Run", variant="primary")
    preset_note = gr.Markdown(v_note)  # what the preset reproduces and the wait, under Run
    with gr.Accordion("Advanced: context, delay parameters, mode", open=False):
        gr.Markdown(ADVANCED_NOTE)
        with gr.Row():
            post_serving = gr.Checkbox(value=v_ps, label="post-serving context y = phi(x)")
            phi = gr.Dropdown(list(MAPPINGS), value=v_phi, label="mapping phi")
            baselines_ps = gr.Checkbox(value=v_bps, label="baselines use the predictor (+PS)")
        with gr.Row():
            delay_mean = gr.Number(value=v_mu, label="stochastic delay mean mu (rounds)")
            delay_std = gr.Number(value=v_std, label="Gaussian delay std (rounds)")
            delay_budget = gr.Number(value=v_lam, precision=0,
                                     label="adversarial delay budget Lambda (rounds)")
        with gr.Row():
            mode = gr.Radio(["faithful", "fast"], value=v_mode, label="mode", info=MODE_INFO)
            exploration = gr.Radio(list(EXPLORATIONS), value=EXPLORATIONS[0], label="RCDP-UCB exploration")
    with gr.Row():
        plot = gr.Image(format="png", type="pil", show_label=False, elem_id="bandits-regret-plot",
                        label="cumulative regret (mean +/- 1 std)")
        with gr.Column():
            table = gr.Dataframe(headers=["rank", "algorithm", "final regret mean",
                                          "std", "min", "max"], label="final cumulative regret",
                                 interactive=False)
            csv = gr.File(label="CSV (round, regret, method, run, seed)")
    summary = gr.Markdown()
    gr.Markdown("#### Scaling panel: final regret vs a budget or the horizon "
                "(the learner's provisioning stays fixed)")
    with gr.Row():
        param = gr.Dropdown(list(SWEEP_PARAMS), value="corruption budget C", label="sweep")
        values = gr.Textbox(value="0, 25, 50, 100", label="values (comma-separated)")
        sweep_btn = gr.Button("Run sweep", variant="secondary")
    with gr.Row():
        sweep_img = gr.Image(format="png", type="pil", show_label=False,  # title in the figure
                             elem_id="bandits-sweep-plot",
                             label="final regret vs parameter")
        sweep_table = gr.Dataframe(headers=["value", "algorithm", "mean", "std"],
                                   label="sweep results", interactive=False)

    captions = {
        "faithfulness.png": ("Reference (dashed, +/-1 std) vs this engine in faithful mode "
                             "(solid), same configurations and run seeds"),
        "fast_vs_faithful.png": "Final regret: reference vs faithful vs fast mode",
        "theory.png": "Theory checks: regret vs T (log-log), vs C, vs Lambda",
    }
    figs = [(f, cap) for f, cap in captions.items() if (FIG_DIR / f).exists()]
    if figs:
        with gr.Accordion("Measured results (figures from scripts/bandits_*.py, committed)",
                          open=False):
            for f, cap in figs:  # caption above, not over, the committed figure
                gr.Markdown(f"**{cap}**")
                gr.Image(value=_with_toolbar_room(FIG_DIR / f), format="png", label=cap,
                         show_label=False, interactive=False)

    controls = [d, K, T, seeds, phi, post_serving, delay, delay_mean, delay_std, delay_budget,
                corruption_budget, algorithms, baselines_ps, mode, exploration]
    preset_btn.click(load_preset, [preset], [d, K, T, seeds, phi, post_serving, delay, delay_mean,
                                             delay_std, delay_budget, corruption_budget,
                                             algorithms, baselines_ps, mode, preset_note],
                     api_name="bandits_preset")
    # one run at a time: a second click meets a busy button that says so (and comes back after an
    # error too); a failed run clears the previous run's results, which no longer match the controls
    ran = one_at_a_time(run_btn, "Running", run_simulation, controls, [plot, table, csv, summary],
                        api_name="bandits_run", scroll_to_output=True)
    clear_on_error(ran, [plot, table, csv, summary], [None, None, None, ""])
    swept = one_at_a_time(sweep_btn, "Sweeping", run_sweep, controls + [param, values], [sweep_img, sweep_table],
                          api_name="bandits_sweep", scroll_to_output=True)
    clear_on_error(swept, [sweep_img, sweep_table])
