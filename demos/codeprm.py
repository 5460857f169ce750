"""Code security stepping tab: step-level security risk, verdict, stepping, ranking, SARIF.

UI only: every action is one call into ``engines.codeprm`` (scan, rank, sample_candidates,
examples). Callbacks are plain functions, testable without a server.
"""
from __future__ import annotations

import html
import json
import time
from pathlib import Path

import gradio as gr
import numpy as np

from demos import notes
from demos.ui import (
    cache_file,
    choice,
    clear_on_error,
    describe_code_editors,
    figure_to_image,
    friendly_errors,
    number,
    one_at_a_time,
    release_after,
)
from demos.ui import text as utf8_text
from engines.codeprm import (
    CWE_INFO,
    NotPython,
    default_prm,
    examples,
    explain_ranking,
    sample_candidates,
    to_sarif,
)
from engines.common import InputError, gpu

CANDIDATE_SEP = "# ---"
#: The ranking table's element id: on a phone its columns keep widths a word fits (demos.ui.APP_CSS).
RANK_TABLE = "codeprm-rank-table"
_EXAMPLES = examples()
_FIRST = "CWE-78 vulnerable"
_FINDING_COLS = ["step", "lines", "step risk", "CWE", "severity", "confidence", "message", "source",
                 "step flagged by"]
#: The ranking table: every number is a risk (0 secure .. 1 insecure) or a share of safe steps.
RANK_COLS = ["rank", "candidate #", "parses", "safe share of riskiest steps", "overall risk", "highest step risk",
             "steps", "verdict", "candidate (first 120 characters)"]
# Step playback sends whole frames of HTML: at most this many, and at most this many bytes in all
# (a 2,000-line scan sent 48.6 MB one frame per step); long scans step through evenly spaced steps.
PLAY_FRAMES = 40
PLAY_BYTES = 8_000_000


def _plot_figure(scan: dict):
    """The step-risk bar chart (figure, axes); its legend sits below the axes, off the bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    steps = scan["steps"]
    risks = [s["risk"] for s in steps]
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    colors = ["#d62728" if s.get("driver") else "#2ca02c" for s in steps]  # red: a flagged step
    ax.bar(range(1, len(risks) + 1), risks, color=colors)
    ax.axhline(scan["threshold"], color="k", ls="--", lw=1, label=f"a step at or above {scan['threshold']:.2f} is flagged")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("step risk")
    ax.set_title(f"file risk {scan['risk']:.3f} -> {scan['verdict']}", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=8, frameon=False)
    fig.subplots_adjust(bottom=0.34)
    return fig, ax


#: White pixel rows above the step-risk plot, where the image component's toolbar sits (it covered the
#: top-right corner of the axes).
PLOT_TOOLBAR_MARGIN = 56


def _plot(scan: dict) -> np.ndarray:
    fig, _ = _plot_figure(scan)
    return np.asarray(figure_to_image(fig, top_margin=PLOT_TOOLBAR_MARGIN))


def _code_html(scan: dict, upto: int | None = None, focus: int | None = None) -> str:
    """The code with each line's step risk in the gutter; risky lines highlighted; escaped."""
    lines = scan["lines"]
    step_of = {}
    for s in scan["steps"]:
        for ln in range(s["start_line"], s["end_line"] + 1):
            step_of[ln] = s
    finding_lines = {f["line"] for s in scan["steps"] for f in s["findings"]}
    rows = []
    for i, text in enumerate(lines, 1):
        s = step_of.get(i)
        shown = s is not None and (upto is None or s["index"] <= upto)
        risk = s["risk"] if shown else None
        bg = ""
        if shown and s.get("driver"):
            bg = "background:#fde0dc;" if i not in finding_lines and i != s["hot_line"] else "background:#f8a5a0;"
        if s is not None and focus is not None and s["index"] == focus:
            bg += "outline:1px solid #1f77b4;"
        gutter = f"{risk:5.2f}" if (shown and i == s["start_line"]) else "     "
        mark = " !" if (shown and i in finding_lines) else "  "
        rows.append(f"<span style='color:#888'>{i:4d} {gutter}{mark}</span> <span style='{bg}'>{html.escape(text) or ' '}</span>")
    return ("<pre style='font-size:12px;line-height:1.35;max-height:520px;overflow:auto'>" + "\n".join(rows) + "</pre>"
            "<p style='font-size:12px;color:#666'>Gutter: line number, step risk (0 = secure, 1 = insecure) at the "
            "step's first line, <b>!</b> = analyser finding. Red: risky step; dark red: the line the finding or the "
            "model's attention points at.</p>")


def _writing_md(scan: dict) -> str:
    """For a partial scan: the step being written (the last one), its risk and what flags it."""
    s = scan["steps"][scan["writing"]]
    state = f"flagged by {s['driver']}" if s.get("driver") else "not flagged"
    w = s.get("weakness")
    return (f"**Being written:** step {s['index'] + 1} (lines {s['start_line']}-{s['end_line']}), "
            f"risk **{s['risk']:.2f}**, {state}" + (f" ({w['cwe']}: {w['title']})" if w else "") + ".")


def _verdict_md(scan: dict) -> str:
    v = scan["verdict"]
    n_flag = sum(bool(s.get("driver")) for s in scan["steps"])
    word = {"vulnerable": "VULNERABLE", "incomplete": "NOT FULLY CHECKED"}.get(v, "SAFE")
    head = f"### {word}: {n_flag} flagged step{'s' if n_flag != 1 else ''}, file risk {scan['risk']:.2f}"
    parts = [head, (f"{len(scan['steps'])} steps over {scan['n_lines']} lines. A step is flagged when an analyser "
                    f"finding lies in it (any severity) or its risk (0 to 1, no unit) reaches the threshold "
                    f"{scan['threshold']:.2f}; one flagged step makes the file vulnerable.")]
    for f in scan.get("failures", []):
        parts.append(f"**{f['analyser']} could not read all of this code:** {f['reason']}. Its findings there may be "
                     "missing, so the code is not called safe on its word.")
    if scan.get("writing") is not None:
        parts.append(_writing_md(scan))
    if scan.get("syntax_error"):
        parts.append(f"**Note:** the code does not parse ({scan['syntax_error']}); it was scanned anyway, as a prefix "
                     "would be. Tick *partial code* if it is unfinished on purpose.")
    if scan["drivers"] and n_flag:
        d = [scan["steps"][i] for i in scan["drivers"]]
        parts.append("**Steps that drove the verdict:** " + "; ".join(
            f"step {s['index'] + 1} (lines {s['start_line']}-{s['end_line']}, risk {s['risk']:.2f}"
            + (f", {s['weakness']['cwe']}: {s['weakness']['title']}" if s.get("weakness") else "")
            + (f", flagged by {s['driver']}" if s.get("driver") else "") + ")" for s in d))
        flows = [s["weakness"]["explanation"] for s in d if s.get("weakness") and s["weakness"]["source"] == "taint"]
        if flows:
            parts.append("**How input reaches the sink:** " + "; ".join(flows) + ".")
    return "\n\n".join(parts)


def _findings_rows(scan: dict) -> list[list]:
    rows = []
    for s in scan["steps"]:
        for f in s["findings"]:
            cwe = f["cwe"] or "-"
            if f["cwe"] and f.get("family") and f["cwe"] != f"CWE-{f['family']}":
                cwe += f" (family CWE-{f['family']})"
            rows.append([s["index"] + 1, f"{s['start_line']}-{s['end_line']} (line {f['line']})", round(s["risk"], 3),
                         cwe, f.get("severity") or "-", f.get("confidence") or "-", f.get("explanation") or f["message"],
                         f["source"],
                         s.get("driver") or "not flagged"])
    return rows


def _step_md(scan: dict, k: int) -> str:
    s = scan["steps"][k]
    lines = [(f"**Step {k + 1} / {len(scan['steps'])}**, lines {s['start_line']}-{s['end_line']}: "
              f"risk **{s['risk']:.3f}** (0 = secure, 1 = insecure)")]
    for f in s["findings"]:
        rating = ", ".join(x for x in (f.get("severity") and f"severity {f['severity']}",
                                       f.get("confidence") and f"confidence {f['confidence']}") if x)
        lines.append(f"- `{f['cwe'] or 'risk'}` line {f['line']}: {f.get('explanation') or f['message']} ({f['source']}"
                     + (f"; {rating}" if rating else "") + ")")
    if s.get("driver"):
        lines.append(f"- this step is flagged by: **{s['driver']}**")
    if not s["findings"]:
        lines.append("- no findings on this step")
    return "\n".join(lines)


@friendly_errors
def load_example(name: str) -> str:
    """The code of a named example (vulnerable/fixed pairs across CWE families); none chosen (the
    dropdown emptied after an edit) leaves the code as it is."""
    if name is None or name == "":
        return gr.skip()
    choice(name, "Examples", _EXAMPLES)
    return _EXAMPLES[name]


#: How to leave a code editor from the keyboard (in one, Tab indents); the editors' description.
KEYS_HINT = "Keyboard: in a code box Tab indents; to move on, press Escape, then Tab."


#: The examples dropdown after the code is edited (run in the browser): emptied once the code is no
#: longer the named example (the editor may drop a last line end, so ends are trimmed).
_EXAMPLE_AFTER_EDIT_JS = ("(name, code) => { const ex = " + json.dumps(_EXAMPLES) + "; return name && (ex[name] || '')"
                          ".trim() !== (code || '').trim() ? null : name; }")


def _cleared(message: str):
    """Outputs of a scan that did not happen: the message instead of a verdict, everything else
    emptied (so a previous verdict never stays on screen next to new code)."""
    return (f"### Not scanned: {message}", None, "", [], None, None, None, gr.update(maximum=2, value=1, interactive=False),
            "")


@friendly_errors
def scan_code(code: str, partial: bool):
    """Scan the code: verdict, step plot, highlighted code, findings table, JSON and SARIF files, state.

    Text that is not Python, empty or too large gives a message in place of the verdict and clears
    the previous scan's outputs."""
    prm = default_prm("onnx")
    try:
        r = prm.scan(utf8_text(code, "Python code"), partial=bool(partial))
    except NotPython:
        return _cleared("This does not look like Python: paste Python source code to scan.")
    except InputError as exc:
        return _cleared(str(exc))
    if r.syntax_error and not partial:
        gr.Warning(f"The code does not parse ({r.syntax_error}); scanned as a prefix would be.")
    scan = r.to_dict()
    scan["lines"] = r.lines
    json_path = cache_file("codeprm-scan", name="codeprm-scan.json")
    sarif_path = cache_file("codeprm-scan", name="codeprm-scan.sarif")
    Path(json_path).write_text(r.to_json())  # in Gradio's cache: the app's delete_cache removes them
    Path(sarif_path).write_text(json.dumps(to_sarif([r]), indent=2))
    n = len(scan["steps"])
    return (_verdict_md(scan), _plot(scan), _code_html(scan), _findings_rows(scan), json_path,
            sarif_path, scan, gr.update(maximum=max(2, n), value=n, interactive=True),
            _step_md(scan, n - 1))


def rescan_partial(code: str, partial: bool):
    """While *partial code* is ticked, every edit rescans (the step being written and its risk
    follow the prefix as it grows); otherwise nothing changes until Scan."""
    if not partial or not (code or "").strip():
        return tuple(gr.skip() for _ in range(9))
    return scan_code(code, True)


@friendly_errors
def show_step(scan: dict | None, k: float):
    """Code and details up to step k (1-based) of the last scan."""
    if not scan:
        raise InputError("scan some code first")
    k = int(min(max(1, number(k, "Step through (step)")), len(scan["steps"]))) - 1
    return _code_html(scan, upto=k, focus=k), _step_md(scan, k)


@friendly_errors
def play_steps(scan: dict | None, delay: float = 0.35):
    """Stream the steps one by one (the play button); at most ``PLAY_FRAMES`` frames and
    ``PLAY_BYTES`` bytes of HTML, over evenly spaced steps when there are more."""
    if not scan:
        raise InputError("scan some code first")
    n = len(scan["steps"])
    frames = max(1, min(n, PLAY_FRAMES, PLAY_BYTES // max(1, len(_code_html(scan)))))
    for k in sorted({round(i * (n - 1) / max(1, frames - 1)) for i in range(frames)} | {n - 1}):
        yield _code_html(scan, upto=k, focus=k), _step_md(scan, k), k + 1
        if delay:
            time.sleep(delay)


def split_candidates(text: str) -> list[str]:
    """Candidates are separated by lines that read ``# ---``."""
    parts, cur = [], []
    for line in (text or "").splitlines():
        if line.strip() == CANDIDATE_SEP:
            parts.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    parts.append("\n".join(cur))
    return [p.strip("\n") for p in parts if p.strip()]


@friendly_errors
def rank_candidates(prefix: str, candidates: str):
    """Rank candidate continuations (top-k safe ratio, then soft-min step safety); unparseable
    candidates are marked and ranked last. A table, the best candidate, and why it ranks first (the
    scores that decided, and how many candidates parse: the same count the sampling line gives)."""
    prefix, candidates = utf8_text(prefix, "Prefix"), utf8_text(candidates, "Candidates")
    cands = split_candidates(candidates)
    if not cands:
        raise InputError(f"give candidate continuations, separated by lines reading `{CANDIDATE_SEP}`")
    ranked = default_prm("onnx").rank(prefix or "", [c for c in cands])
    rows = [[d["rank"], d["index"] + 1, "yes" if d["parses"] else "no (ranked last)", round(d["topk_safe_ratio"], 3),
             round(1 - d["reward"], 3), round(1 - d["min_score"], 3), d["n_steps"], d["verdict"], d["candidate"][:120]]
            for d in ranked]
    best = (prefix.rstrip("\n") + "\n" if prefix else "") + ranked[0]["candidate"]
    return rows, best, explain_ranking(ranked)


#: The Rank button's label while SmolLM2 samples: it is disabled then (a Rank click would rank the
#: candidates being replaced), and the new candidates are ranked as soon as they arrive.
RANK_WAITS = "Rank (after sampling)"


def rank_busy():
    """Rank button update when sampling starts: disabled, saying it ranks once the samples arrive."""
    return gr.update(interactive=False, value=RANK_WAITS)


def rank_ready():
    """Rank button update when sampling ends (with new candidates or an error): usable again."""
    return gr.update(interactive=True, value="Rank")


UNPARSEABLE = "# (unparseable: SmolLM2 did not reach a statement boundary)"
#: Seconds SmolLM2 may sample to find candidates that parse: rounds of samples (new seeds) go on
#: until enough parse or the budget is spent, and a round stops where it is at the budget's end.
SAMPLE_BUDGET_S = 60.0


@gpu(duration=90)  # SmolLM2 samples on the GPU where there is one (ZeroGPU: attached for the call)
@friendly_errors
def sample_with_smollm(prefix: str, n: float, max_new_tokens: float) -> tuple[str, str]:
    """Sample until ``n`` candidates parse (each cut at a statement boundary) or ``SAMPLE_BUDGET_S``
    has passed: (the parseable candidates joined with separator lines, a line saying how many samples
    were drawn and dropped). Most samples of a 135M model do not reach a statement boundary; a table
    of failures is no ranking, so they are dropped and counted."""
    n = number(n, "SmolLM2 samples", 1, 8, whole=True)
    max_new_tokens = number(max_new_tokens, "max new tokens", 4, 256, whole=True)
    prefix = utf8_text(prefix, "Prefix")
    kept, drawn, unparseable, seed, t0 = [], 0, 0, 0, time.monotonic()
    while len(kept) < n and (seed == 0 or time.monotonic() - t0 < SAMPLE_BUDGET_S):
        left = SAMPLE_BUDGET_S - (time.monotonic() - t0)  # a round stops where it is when the budget is spent
        batch = sample_candidates(prefix, n=min(8, 2 * (n - len(kept))), max_new_tokens=max_new_tokens, seed=seed,
                                  max_time=max(5.0, left), separator=CANDIDATE_SEP)  # never a "# ---" inside one
        drawn += len(batch)
        unparseable += sum(not c["parses"] for c in batch)
        kept += [c["text"] for c in batch if c["parses"] and c["text"] not in kept]
        seed += 1
    seconds = time.monotonic() - t0
    if not kept:
        raise InputError(f"SmolLM2 wrote no continuation that parses in {drawn} samples ({seconds:.0f} s); end the "
                         "prefix at a statement boundary or allow more new tokens")
    others = drawn - unparseable - min(len(kept), n)  # repeats, and parseable ones past the n asked for
    kept = kept[:n]
    info = (f"{len(kept)} candidate{'s' if len(kept) != 1 else ''} that parse, from {drawn} samples in "
            f"{seconds:.0f} s: {unparseable} did not parse and were dropped"
            + (f", {others} more {'was' if others == 1 else 'were'} repeated or past the {n} asked for"
               if others else "") + ".")
    if len(kept) < n:
        info += f" Fewer than the {n} asked for: sampling stops after {SAMPLE_BUDGET_S:.0f} s."
    return f"\n{CANDIDATE_SEP}\n".join(kept), info


RANK_PREFIX = '''import subprocess
from flask import request


def archive():
    name = request.args.get("name")
'''
RANK_CANDIDATES = f'''    return subprocess.check_output("tar czf out.tgz " + name, shell=True)
{CANDIDATE_SEP}
    return subprocess.check_output(["tar", "czf", "out.tgz", name])
{CANDIDATE_SEP}
    import os
    os.system("tar czf out.tgz %s" % name)
    return "ok"'''


def family_list() -> str:
    """The CWE families, each with what flags it: the step model with the analysers where it
    earned that on dev, the analysers only where its weight is 0."""
    modes = default_prm("onnx").family_modes()
    return "\n".join(f"- **CWE-{k}** ({modes.get(k, 'analysers only')}): {v}" for k, v in sorted(CWE_INFO.items()))


def build() -> None:
    """Add the tab's components and events (app.py wraps this in a gr.Tab)."""
    gr.Markdown("Paste Python code to see which steps of it are insecure and why, or rank candidate "
                f"continuations of unfinished code by security; the code is read, never run. {notes.link('codeprm')}")
    state = gr.State(None)
    with gr.Row():
        with gr.Column(scale=3):
            example = gr.Dropdown(list(_EXAMPLES), value=_FIRST, label="Examples (vulnerable / fixed pairs)")
            code = gr.Code(value=_EXAMPLES[_FIRST], language="python", label="Python code", lines=18,
                           elem_id="codeprm-code")
            gr.Markdown(KEYS_HINT, elem_id="codeprm-keys-hint")
            with gr.Row():
                partial = gr.Checkbox(False, label="Partial code (an unfinished prefix: rescans as you type)")
                scan_btn = gr.Button("Scan", variant="primary")
        with gr.Column(scale=2):
            verdict = gr.Markdown()
            plot = gr.Image(format="png", label="Step risk", show_label=False, type="numpy", interactive=False,
                            elem_id="codeprm-step-plot")
            # one file per row: side by side, the file names were cut short
            json_file = gr.File(label="JSON (codeprm-scan.json)")
            sarif_file = gr.File(label="SARIF 2.1.0 (codeprm-scan.sarif)")
    with gr.Row():
        step = gr.Slider(1, 2, value=1, step=1, label="Step through (step)", interactive=False)
        play = gr.Button("▶ Play steps")
    with gr.Row():
        code_view = gr.HTML()
        step_info = gr.Markdown()
    findings = gr.Dataframe(headers=_FINDING_COLS,
                            label="Findings (CWE ids from bandit, CodeShield, the taint and settings rules, or the model)",
                            interactive=False, wrap=True)
    with gr.Accordion("CWE families", open=False):
        gr.Markdown(family_list())
    gr.Markdown("### Secure generation: rank candidate continuations\nEach candidate's steps get a risk after "
                "the prefix; candidates are ranked by the share of their riskiest steps that are safe, ties broken "
                "by their overall risk; candidates that do not parse come last.")
    with gr.Row():
        prefix = gr.Code(value=RANK_PREFIX, language="python", label="Prefix", lines=8, elem_id="codeprm-prefix")
        cands = gr.Code(value=RANK_CANDIDATES, language="python", label=f"Candidates (separated by `{CANDIDATE_SEP}`)",
                        lines=8, elem_id="codeprm-candidates")
    with gr.Row():
        n_samples = gr.Slider(1, 8, value=4, step=1, label="SmolLM2 samples")
        max_new = gr.Slider(8, 128, value=48, step=8, label="max new tokens")
        sample_btn = gr.Button("Sample candidates with SmolLM2")
        rank_btn = gr.Button("Rank", variant="primary")
    sample_info = gr.Markdown(f"Sampling keeps the candidates that parse, for up to {SAMPLE_BUDGET_S:.0f} s.")
    # Fixed widths: left to itself the candidate column takes the row and the numeric headers wrap
    # one letter per line (on a phone the widths are set in the app's CSS: RANK_TABLE).
    ranked = gr.Dataframe(headers=RANK_COLS,
                          interactive=False, wrap=True, elem_id=RANK_TABLE,
                          column_widths=["6%", "8%", "9%", "8%", "9%", "8%", "6%", "8%", "38%"])
    rank_info = gr.Markdown()
    best = gr.Code(language="python", label="Best continuation")

    example.change(load_example, example, code, api_name="codeprm_example")
    # an edit makes the code no longer the example the dropdown names: it names none then
    # (in the browser: the server would not send the same emptied value a second time)
    code.input(None, [example, code], example, js=_EXAMPLE_AFTER_EDIT_JS, queue=False, api_visibility="private")
    describe_code_editors({"codeprm-code": "Python code", "codeprm-prefix": "Prefix",
                           "codeprm-candidates": "Candidates"}, "codeprm-keys-hint")
    outs = [verdict, plot, code_view, findings, json_file, sarif_file, state, step, step_info]
    scanned = scan_btn.click(scan_code, [code, partial], outs, api_name="codeprm_scan")
    clear_on_error(scanned, outs, ["", None, "", None, None, None, None, gr.update(maximum=2, value=1, interactive=False), ""])
    code.change(rescan_partial, [code, partial], outs, trigger_mode="always_last", show_progress="hidden",
                api_visibility="private")
    step.release(show_step, [state, step], [code_view, step_info], api_name="codeprm_step")
    play.click(play_steps, [state], [code_view, step_info, step], api_name="codeprm_play")
    ranked_ev = rank_btn.click(rank_candidates, [prefix, cands], [ranked, best, rank_info], api_name="codeprm_rank")
    clear_on_error(ranked_ev, [ranked, best, rank_info], [None, None, ""])
    # one sampling at a time, and while SmolLM2 samples Rank is disabled too (it would rank the old
    # candidates); the new ones are ranked when they arrive, and both buttons come back whether
    # sampling worked or not
    sample_btn.click(rank_busy, None, rank_btn, queue=False, api_visibility="private")
    sampled = one_at_a_time(sample_btn, "Sampling", sample_with_smollm, [prefix, n_samples, max_new],
                            [cands, sample_info], api_name="codeprm_sample")
    release_after(sampled, rank_btn, "Rank")
    sampled.success(rank_candidates, [prefix, cands], [ranked, best, rank_info], api_visibility="private")
