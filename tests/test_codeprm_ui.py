"""codeprm tab callbacks called as plain functions (no server), including bad input -> gr.Error."""
from __future__ import annotations

import json
import re
from pathlib import Path

import gradio as gr
import numpy as np
import pytest

from demos import codeprm as tab


@pytest.fixture(scope="module")
def scanned():
    return tab.scan_code(tab.load_example("CWE-89 vulnerable"), False)


def test_scan_callback_outputs(scanned):
    verdict, img, code_html, rows, json_path, sarif_path, state, slider, step_md = scanned
    assert "VULNERABLE" in verdict and "threshold" in verdict
    assert isinstance(img, np.ndarray) and img.ndim == 3 and img.shape[2] == 3
    assert "<pre" in code_html and "SELECT" in code_html
    assert any(r[3] == "CWE-89" for r in rows)
    assert json.loads(Path(json_path).read_text())["verdict"] == "vulnerable"
    assert json.loads(Path(sarif_path).read_text())["version"] == "2.1.0"
    assert slider["maximum"] == max(2, len(state["steps"])) and step_md.startswith("**Step")


def test_code_view_escapes_html():
    out = tab.scan_code("x = '<script>alert(1)</script>'\n", False)
    assert "<script>" not in out[2] and "&lt;script&gt;" in out[2]


def test_step_through_and_play(scanned):
    state = scanned[6]
    n = len(state["steps"])
    _html_1, md_1 = tab.show_step(state, 1)
    assert "Step 1 /" in md_1
    frames = list(tab.play_steps(state, delay=0))
    assert [f[2] for f in frames] == list(range(1, n + 1))
    assert frames[-1][1].startswith(f"**Step {n} / {n}**")


def test_rank_callback_puts_secure_candidate_first():
    rows, best, _ = tab.rank_candidates(tab.RANK_PREFIX, tab.RANK_CANDIDATES)
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    assert "shell=True" not in best and "os.system" not in best and best.startswith("import subprocess")
    assert len(tab.split_candidates(tab.RANK_CANDIDATES)) == 3


def test_rank_table_widths_cover_every_column_and_favour_the_candidate():
    """Without widths the candidate preview takes the row and the numeric headers wrap per letter."""
    with gr.Blocks() as demo:
        tab.build()
    table = next(c for c in demo.blocks.values()
                 if isinstance(c, gr.Dataframe) and "candidate #" in (c.value or {}).get("headers", []))
    rows, _, _ = tab.rank_candidates(tab.RANK_PREFIX, tab.RANK_CANDIDATES)
    widths = [float(w.rstrip("%")) for w in table.column_widths]
    assert len(widths) == len(table.value["headers"]) == len(rows[0]) and sum(widths) == pytest.approx(100)
    assert widths[-1] == max(widths) and min(widths) >= 6


@pytest.mark.parametrize("call", [
    lambda: tab.show_step(None, 1),
    lambda: list(tab.play_steps(None)),
    lambda: tab.rank_candidates("import os\n", "   "),
    lambda: tab.load_example("nope"),
    lambda: tab.sample_with_smollm("   ", 2, 16),
    lambda: tab.sample_with_smollm("import os\n", 20, 16),
])
def test_bad_input_gives_clean_gradio_error(call):
    with pytest.raises(gr.Error) as info:
        call()
    assert "Traceback" not in str(info.value) and "went wrong" not in str(info.value)


@pytest.mark.parametrize("text,message", [
    ("Dear team, the release is on Friday. Please review the notes.", "does not look like Python"),
    ("int main(void) {\n  return 0;\n}\n", "does not look like Python"),
    ("", "no code to scan"),
    ("x = 1\n" * 20001, "limit"),
])
def test_a_failed_scan_shows_a_message_and_clears_the_previous_verdict(scanned, text, message):
    assert "VULNERABLE" in scanned[0]  # a previous verdict was on screen
    out = tab.scan_code(text, False)
    verdict, img, code_html, rows, json_path, sarif_path, state, slider, step_md = out
    assert message in verdict and "VULNERABLE" not in verdict and "SAFE" not in verdict
    assert img is None and code_html == "" and rows == [] and json_path is None and sarif_path is None
    assert state is None and step_md == "" and slider["interactive"] is False


def test_download_names_are_whole(scanned):
    assert Path(scanned[4]).name == "codeprm-scan.json" and Path(scanned[5]).name == "codeprm-scan.sarif"


def test_step_plot_legend_and_labels_do_not_cover_the_bars(scanned):
    import matplotlib.pyplot as plt

    fig, ax = tab._plot_figure(scanned[6])
    fig.canvas.draw()
    axes = ax.get_window_extent()
    assert ax.get_legend().get_window_extent().y1 <= axes.y0  # the legend is below the plot area
    assert ax.xaxis.label.get_window_extent().y1 <= axes.y0 and ax.title.get_window_extent().y0 >= axes.y1
    plt.close(fig)


def test_unparseable_samples_are_marked_and_ranked_last():
    cands = f"    return 1\n{tab.CANDIDATE_SEP}\n{tab.UNPARSEABLE}\n    return (1,"
    rows, best, _ = tab.rank_candidates("def f():\n", cands)
    assert rows[-1][2].startswith("no") and rows[0][2] == "yes" and best.endswith("return 1")


def test_syntax_error_is_scanned_with_a_message():
    verdict = tab.scan_code("def f(:\n    eval(x)\n", False)[0]
    assert "does not parse" in verdict


def test_tab_builds_with_api_names():
    with gr.Blocks() as demo:
        tab.build()
    names = {d.get("api_name") for d in demo.config["dependencies"]}
    assert {"codeprm_scan", "codeprm_step", "codeprm_play", "codeprm_rank", "codeprm_sample",
            "codeprm_example"} <= names


def _chain(demo: gr.Blocks, api_name: str):
    """(the event named api_name, the event that triggers it, the events it triggers) as config dicts."""
    deps = demo.config["dependencies"]
    ev = next(d for d in deps if d["api_name"] == api_name)
    return ev, deps[ev["trigger_after"]], [d for d in deps if d["trigger_after"] == ev["id"]]


def test_rank_waits_for_smollm_samples_and_ranks_the_new_ones():
    """A Rank click while SmolLM2 samples must not rank the candidates being replaced: a Sample click
    disables Rank with a label that says so (and Sample itself, one sampling at a time), ranks the
    sampled candidates once they arrive (only if sampling worked), and gives both buttons back either
    way: after a success and after an error (Gradio 6.31 runs a ``.then`` step after a success only)."""
    with gr.Blocks() as demo:
        tab.build()
    fns = demo.fns
    deps = demo.config["dependencies"]
    sample, before, after = _chain(demo, "codeprm_sample")
    rank_btn = next(b for b in demo.blocks.values() if isinstance(b, gr.Button) and b.value == "Rank")
    sample_btn = next(b for b in demo.blocks.values() if isinstance(b, gr.Button) and b.value.startswith("Sample"))
    on_click = [d for d in deps if d["trigger_after"] is None and (sample_btn._id, "click") in d["targets"]]
    rank_off = next(d for d in on_click if d["outputs"] == [rank_btn._id])
    busy = fns[rank_off["id"]].fn()
    assert not rank_off["queue"] and busy["interactive"] is False and busy["value"] == tab.RANK_WAITS
    assert before in on_click and before["outputs"] == [sample_btn._id]
    assert fns[before["id"]].fn()["interactive"] is False
    (rank_after,) = [d for d in after if d["trigger_only_on_success"]]
    assert fns[rank_after["id"]].fn.__wrapped__ is tab.rank_candidates.__wrapped__
    assert rank_after["inputs"][1] == sample["outputs"][0]  # the sampled candidates, not the old text
    assert rank_after["inputs"][0] == sample["inputs"][0]  # after the same prefix
    for button, label in ((rank_btn, "Rank"), (sample_btn, sample_btn.value)):
        back = [d for d in after if d["outputs"] == [button._id]]
        assert sorted(d["trigger_only_on_failure"] for d in back) == [False, True], button.value
        assert all(fns[d["id"]].fn() == {"__type__": "update", "interactive": True, "value": label} for d in back)
    rank = next(d for d in demo.config["dependencies"] if d["api_name"] == "codeprm_rank")
    assert rank["inputs"] == rank_after["inputs"]


def test_findings_table_shows_severity_and_confidence(scanned):
    rows = scanned[3]
    header = tab._FINDING_COLS
    sev, conf = header.index("severity"), header.index("confidence")
    bandit = [r for r in rows if r[header.index("source")] == "bandit"]
    assert bandit and all(r[sev] in ("low", "medium", "high") and r[conf] in ("low", "medium", "high") for r in bandit)


def test_a_low_severity_secret_flags_its_step_and_shows_bandits_own_cwe():
    out = tab.scan_code('SECRET_KEY = "dev-9f8e7d6c5b4a"\nDEBUG = False\n', False)
    assert "VULNERABLE" in out[0]
    row = next(r for r in out[3] if r[7] == "bandit")
    assert row[3] == "CWE-259 (family CWE-798)" and row[4] == "low" and row[8] == "analysers"


def test_partial_box_follows_the_step_being_written():
    """As a prefix grows, the partial scan names the step being written and its risk; a clean
    step reads not flagged, the shell call being typed reads flagged."""
    head = "import os\n\n\ndef run(cmd):\n    label = 'run: ' + cmd\n"
    first = tab.rescan_partial(head, True)[0]
    assert "Being written:** step 2 (lines 4-5)" in first and "not flagged" in first
    grown = tab.rescan_partial(head + "    os.system('sh -c ' + cmd", True)[0]
    assert "Being written:** step 2 (lines 4-6)" in grown and "flagged by analysers" in grown
    assert tab.rescan_partial(head, False) == tuple(gr.skip() for _ in range(9))  # unticked: nothing changes


def test_the_sampling_line_and_the_rank_table_agree_and_the_table_says_why(monkeypatch):
    """Issue #48 item 6: the sampling line counted 4 candidates that parse, yet the rank table marked
    one "no (ranked last)". A sample with a line reading ``# ---`` (the separator the Candidates box
    uses) was split in two there, and the half left alone does not parse. Every candidate the line
    counts parses in the table, and the table's first row comes with the scores that put it there."""
    from engines.codeprm.sampling import cut_at_statement

    raw = ['    out = "tar czf out.tgz"\n    # ---\n    return subprocess.check_output(["tar", out, name])\n',
           '    return subprocess.check_output("tar czf out.tgz " + name, shell=True)\n',
           "    return (\n"]

    def sampled(prefix, n, **kw):  # SmolLM2's texts, cut as the engine cuts them (it is told the separator)
        cuts = [cut_at_statement(prefix, t, *([kw["separator"]] if "separator" in kw else [])) for t in raw]
        return [{"text": c, "parses": ok} for c, ok in cuts]

    monkeypatch.setattr(tab, "sample_candidates", sampled)
    cands, info = tab.sample_with_smollm(tab.RANK_PREFIX, 2, 48)
    m = re.match(r"(\d+) candidates? that parse", info)
    assert m, info
    ranked = tab.rank_candidates(tab.RANK_PREFIX, cands)
    rows = ranked[0]
    assert len(rows) == int(m.group(1)) == 2 and all(r[2] == "yes" for r in rows), (info, rows)
    why = ranked[2]
    first, second = rows[0], rows[1]
    assert f"Candidate {first[1]} ranks first" in why and f"candidate {second[1]}" in why, why
    assert re.search(r"\d\.\d\d", why), why                         # with the numbers that decided
