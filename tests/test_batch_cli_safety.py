"""Issue #33: the batch commands never lose data. Every test runs the real command line of this
checkout in a subprocess (``python -m engines.<engine> ...``): the output folder never holds an
input, an output never replaces a file unasked, two inputs never share an output, Ctrl-C leaves
the finished outputs and a report of exactly those (one closing line, exit 130, no traceback),
``--out`` is checked before any work, bad numbers are refused in one line, and a broken
symbolic link is reported instead of skipped without a word."""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]

#: The command's per-item function, wrapped to send this process SIGINT (what Ctrl-C sends; or the
#: signal named in $STOP_SIGNAL) as item number AT starts, so the interrupt lands inside that item
#: every time. argv: engine, function name, AT, the command's own arguments.
_INTERRUPT_AT = """
import importlib, os, signal, sys
engine, fn, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
stop = getattr(signal, os.environ.get("STOP_SIGNAL", "SIGINT"))
cli = importlib.import_module(f"engines.{engine}.cli")
real, calls = getattr(cli, fn), []
def work(*args):
    calls.append(1)
    if len(calls) == at:
        os.kill(os.getpid(), stop)
    return real(*args)
setattr(cli, fn, work)
sys.exit(cli.main(sys.argv[4:]))
"""


def _env() -> dict[str, str]:
    """This checkout first on the path, whichever copy of the package is installed."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}


def _default_sigint() -> None:
    """A child started from a background job inherits SIGINT ignored; at a terminal, where Ctrl-C
    is pressed, it has the default disposition (and Python turns it into KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(engine: str, *args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"engines.{engine}", *map(str, args)], check=False, cwd=cwd,
                          env=_env(), capture_output=True, text=True, timeout=300)


def _cli_interrupted_at(engine: str, fn: str, at: int, *args, cwd: Path | None = None,
                        stop: str = "SIGINT") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _INTERRUPT_AT, engine, fn, str(at), *map(str, args)], check=False,
                          cwd=cwd, env={**_env(), "STOP_SIGNAL": stop}, capture_output=True, text=True, timeout=300,
                          preexec_fn=_default_sigint)


def _one_line(proc: subprocess.CompletedProcess) -> str:
    """stderr, which must be a single line and no traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every entry of ``folder`` (links by their target text), to show nothing changed."""
    return {p.name: (os.readlink(p).encode() if p.is_symlink() else p.read_bytes()) for p in folder.iterdir()}


def _panoramas(folder: Path, names: list[str]) -> None:
    """Small panoramas (384 x 192, the smallest every tier accepts) under ``names``, in turn a shipped one,
    the same turned upside down and mirrored, so neighbouring inputs differ."""
    from PIL import Image, ImageOps

    from engines.watermark import example_path

    folder.mkdir(parents=True, exist_ok=True)
    base = Image.open(example_path("forest")).convert("RGB").resize((384, 192), Image.BICUBIC)
    for i, name in enumerate(names):
        (base, base.rotate(180), ImageOps.mirror(base))[i % 3].save(folder / name)


def _report(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)


# ---------------------------------------------------------------------------------- watermark embed
def test_embed_refuses_an_output_folder_that_holds_an_input(tmp_path):
    d = tmp_path / "D"
    d.mkdir()
    (d / "p0.png").write_bytes(b"a png")
    (d / "p0.jpg").write_bytes(b"a jpeg")
    (tmp_path / "same").symlink_to(d)
    before = _snapshot(d)
    cases = {  # output folder -> how the message names it
        str(d): "is the input folder",
        str(tmp_path / "same"): "is the input folder",  # the same folder through a link
        str(tmp_path): "holds the input",  # an input at depth
    }
    for out, why in cases.items():
        proc = _cli("watermark", "embed", d, out, "--key", "k", "--message", "hi", "--quiet")
        assert proc.returncode == 2
        assert _one_line(proc).startswith(f"error: output folder {out} {why}")
    proc = _cli("watermark", "embed", d / "p0.png", d, "--key", "k", "--message", "hi", "--quiet")  # one file
    assert proc.returncode == 2 and "is the input folder" in _one_line(proc)
    assert _snapshot(d) == before


def test_embed_refuses_inputs_that_would_share_an_output(tmp_path):
    d = tmp_path / "D"
    d.mkdir()
    (d / "p0.jpg").write_bytes(b"a jpeg")
    (d / "p0.jpg.png").write_bytes(b"a png")
    proc = _cli("watermark", "embed", d, tmp_path / "E", "--key", "k", "--message", "hi", "--quiet")
    assert proc.returncode == 2
    assert _one_line(proc) == "error: p0.jpg and p0.jpg.png would both be written to p0.jpg.png; rename one of them"
    assert not (tmp_path / "E").exists()


@pytest.mark.slow
def test_embed_keeps_each_inputs_extension_reports_broken_links_and_never_overwrites(tmp_path):
    d, e = tmp_path / "D", tmp_path / "E"
    _panoramas(d, ["p0.png", "p0.jpg", "p1.png"])  # p0.png next to p0.jpg: the pair that used to meet
    (d / "gone.png").symlink_to(d / "deleted.png")  # a broken symbolic link
    before = _snapshot(d)
    args = ["--key", "k", "--message", "hi", "--quiet"]
    proc = _cli("watermark", "embed", d, e, *args)
    assert proc.returncode == 1, proc.stderr  # the broken link failed; the rest was done
    assert "FAILED gone.png: broken symbolic link: its target" in proc.stderr
    assert sorted(p.name for p in e.iterdir()) == ["p0.jpg.png", "p0.png", "p1.png", "report.csv"]
    rows = {r["file"]: r for r in _report(e / "report.csv")}
    assert {f: r["output"] for f, r in rows.items()} == {
        "gone.png": "", "p0.jpg": "p0.jpg.png", "p0.png": "p0.png", "p1.png": "p1.png"}
    assert rows["gone.png"]["error"].startswith("broken symbolic link")
    for src, out in (("p0.jpg", "p0.jpg.png"), ("p0.png", "p0.png"), ("p1.png", "p1.png")):
        assert np.abs(_pixels(e / out) - _pixels(d / src)).mean() < 3  # the marked copy of its own input
        assert np.abs(_pixels(e / out) - _pixels(d / ("p0.png" if src == "p0.jpg" else "p0.jpg"))).mean() > 10
    assert _snapshot(d) == before

    outputs = _snapshot(e)
    again = _cli("watermark", "embed", d, e, *args)  # the same command again: refused, nothing touched
    assert again.returncode == 2
    assert re.fullmatch(r"error: .*E/p0\.jpg\.png already exists \(and 3 more of the outputs\); "
                        r"give --overwrite to replace, or choose another output folder", _one_line(again))
    assert _snapshot(e) == outputs


@pytest.mark.slow
def test_ctrl_c_mid_embed_keeps_what_was_done_and_replaces_the_stale_report(tmp_path):
    d, e = tmp_path / "D", tmp_path / "E"
    _panoramas(d, [f"p{i}.png" for i in range(4)])
    e.mkdir()
    (e / "report.csv").write_text("file,output\np0.png,p0.png\np1.png,p1.png\np2.png,p2.png\np3.png,p3.png\n")
    proc = _cli_interrupted_at("watermark", "embed_one", 3, "embed", d, e, "--key", "k", "--message", "hi",
                               "--overwrite", "--quiet")
    assert proc.returncode == 130
    assert _one_line(proc) == f"interrupted after 2 of 4 files; {e / 'report.csv'} covers those 2"
    assert sorted(p.name for p in e.iterdir()) == ["p0.png", "p1.png", "report.csv"]  # no temp file left
    rows = _report(e / "report.csv")
    assert [(r["file"], r["output"], r["error"]) for r in rows] == [("p0.png", "p0.png", ""), ("p1.png", "p1.png", "")]
    assert all(float(r["psnr"]) > 35 for r in rows)
    for name in ("p0.png", "p1.png"):
        assert _pixels(e / name).shape == (192, 384, 3)


@pytest.mark.slow
def test_a_ctrl_c_from_outside_ends_embed_in_one_line(tmp_path):
    """The same as the test above with the signal sent from outside, as a terminal does: the count
    depends on timing, so the test checks that the line, the report and the folder agree."""
    d, e = tmp_path / "D", tmp_path / "E"
    _panoramas(d, [f"p{i}.png" for i in range(3)])
    proc = subprocess.Popen([sys.executable, "-m", "engines.watermark", "embed", str(d), str(e), "--key", "k",
                             "--message", "hi", "--quiet"], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)  # noqa: PLW1509 - one signal call, no lock taken
    deadline = time.monotonic() + 240
    while not (e / "p0.png").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)  # while the second of three images is being marked
    _, err = proc.communicate(timeout=120)
    done = proc.returncode == 130 and re.fullmatch(rf"interrupted after (\d) of 3 files; {re.escape(str(e))}/report"
                                                   r"\.csv covers (those \d|that one)", err.strip())
    assert done, (proc.returncode, err)
    n = int(done.group(1))
    assert "Traceback" not in err and 1 <= n < 3
    assert [r["file"] for r in _report(e / "report.csv")] == [f"p{i}.png" for i in range(n)]
    assert sorted(p.name for p in e.iterdir()) == sorted([f"p{i}.png" for i in range(n)] + ["report.csv"])


# ---------------------------------------------------------------------------------- codeprm scan
def test_scan_refuses_to_write_over_an_input_or_into_a_missing_folder(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("import os\nos.system(input())\n")
    (tmp_path / "sub").mkdir()
    cases = {
        ("--out", src): f"error: --out {src} is one of the inputs; writing there would replace it",
        ("--json", src): f"error: --json {src} is one of the inputs; writing there would replace it",
        ("--out", tmp_path / "missing" / "o.sarif"):
            f"error: --out {tmp_path / 'missing' / 'o.sarif'}: the folder {tmp_path / 'missing'} does not exist; "
            "create it first",
        ("--out", tmp_path / "sub"): f"error: --out {tmp_path / 'sub'} is a folder; give a file name",
    }
    for (flag, path), message in cases.items():
        proc = _cli("codeprm", "scan", src, flag, path, "--quiet", "--no-analysers", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr  # usage, not "vulnerable" (1)
        assert _one_line(proc) == message
    assert src.read_text() == "import os\nos.system(input())\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub", "x.py"]


def test_scan_prints_sarif_to_stdout_unless_told_and_reports_broken_links(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("def add(a, b):\n    return a + b\n")
    (src / "b.py").write_text("import pickle\n\n\ndef load(blob):\n    return pickle.loads(blob)\n")
    (src / "c.py").symlink_to(src / "deleted.py")
    proc = _cli("codeprm", "scan", "src", "--quiet", "--no-analysers", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr  # c.py could not be scanned
    sarif = json.loads(proc.stdout)  # stdout is the SARIF and nothing else
    assert sarif["version"] == "2.1.0"
    assert [f["uri"] for f in sarif["runs"][0]["properties"]["files"]] == ["src/a.py", "src/b.py"]
    assert "src/a.py: safe" in proc.stderr and "src/b.py: " in proc.stderr
    assert "FAILED src/c.py: broken symbolic link: its target" in proc.stderr
    assert "SARIF 2.1.0 on stdout" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # no codeprm.sarif written unasked


def test_ctrl_c_mid_scan_leaves_sarif_and_json_of_exactly_the_files_scanned(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(50):
        (src / f"m{i:02d}.py").write_text(f"import os\n\n\ndef run{i}(cmd):\n    return os.system(cmd)\n")
    out, js = tmp_path / "scan.sarif", tmp_path / "scan.json"
    out.write_text(json.dumps({"stale": "a previous run over all 50 files"}))
    proc = _cli_interrupted_at("codeprm", "scan_one", 18, "scan", "src", "--out", out, "--json", js, "--quiet",
                               "--no-analysers", cwd=tmp_path)
    assert proc.returncode == 130
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"interrupted after 17 of 50 files; the SARIF in {out} and {js} covers those 17"
    want = [f"src/m{i:02d}.py" for i in range(17)]
    assert [f["uri"] for f in json.loads(out.read_text())["runs"][0]["properties"]["files"]] == want
    assert [s["path"] for s in json.loads(js.read_text())] == want
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == want  # the verdict lines, same files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scan.json", "scan.sarif", "src"]  # no temp file left


# ---------------------------------------------------------------------------------- bandits sweep
def test_sweep_refuses_bad_values_and_outputs_it_would_replace(tmp_path):
    base = ["sweep", "--param", "corruption_budget", "--seeds", "1", "--T", "50", "--quiet"]
    cases = {
        ("--values", "nan", "--out", tmp_path / "a"): "error: --values 'nan': nan is not a finite number",
        ("--values", "0,inf", "--out", tmp_path / "a"): "error: --values '0,inf': inf is not a finite number",
        ("--values", "2.5", "--out", tmp_path / "a"): "error: --values '2.5': corruption_budget takes whole "
                                                      "numbers, not 2.5",
    }
    (tmp_path / "file").write_text("not a folder")
    cases[("--values", "0", "--out", tmp_path / "file")] = (f"error: {tmp_path / 'file'} is a file, not a folder; "
                                                            "give a folder for the outputs")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "sweep.csv").write_text("an earlier sweep")
    cases[("--values", "0", "--out", tmp_path / "old")] = (f"error: {tmp_path / 'old' / 'sweep.csv'} already exists; "
                                                           "give --overwrite to replace, or choose another output folder")
    for extra, message in cases.items():
        proc = _cli("dueling", *base, *extra)
        assert proc.returncode == 2, proc.stderr
        assert _one_line(proc) == message
    assert not (tmp_path / "a").exists()
    assert (tmp_path / "file").read_text() == "not a folder"
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == ["sweep.csv"]
    assert (tmp_path / "old" / "sweep.csv").read_text() == "an earlier sweep"


def test_ctrl_c_mid_sweep_writes_the_finished_blocks(tmp_path):
    out = tmp_path / "sweep"
    proc = _cli_interrupted_at("dueling", "run_block", 3, "sweep", "--param", "corruption_budget", "--values",
                               "0,5,10", "--seeds", "1", "--T", "60", "--algorithms", "RCDB", "--out", out, "--quiet")
    assert proc.returncode == 130
    assert _one_line(proc) == (f"interrupted after 2 of 3 blocks; {out / 'sweep.csv'} (with sweep_runs.csv, "
                               "sweep.png) covers those 2")
    runs = _report(out / "sweep_runs.csv")
    assert [(r["corruption_budget"], r["algorithm"]) for r in runs] == [("0", "RCDB"), ("5", "RCDB")]
    means = {r["corruption_budget"]: r["seeds"] for r in _report(out / "sweep.csv")}
    assert means == {"0": "1", "5": "1", "10": "0"}  # the value not reached has no seed
    assert sorted(p.name for p in out.iterdir()) == ["sweep.csv", "sweep.png", "sweep_runs.csv"]


# ---------------------------------------------------------------------------------- SIGTERM
def test_sigterm_mid_sweep_writes_the_finished_blocks_like_ctrl_c(tmp_path):
    """Issue #39: `timeout` and job schedulers send SIGTERM; a sweep stopped so left an empty folder."""
    out = tmp_path / "sweep"
    proc = _cli_interrupted_at("dueling", "run_block", 3, "sweep", "--param", "corruption_budget", "--values",
                               "0,5,10", "--seeds", "1", "--T", "60", "--algorithms", "RCDB", "--out", out, "--quiet",
                               stop="SIGTERM")
    assert proc.returncode == 143  # 128 + SIGTERM, as a shell reports it
    assert _one_line(proc) == (f"terminated (SIGTERM) after 2 of 3 blocks; {out / 'sweep.csv'} (with "
                               "sweep_runs.csv, sweep.png) covers those 2")
    runs = _report(out / "sweep_runs.csv")
    assert [(r["corruption_budget"], r["algorithm"]) for r in runs] == [("0", "RCDB"), ("5", "RCDB")]
    assert {r["corruption_budget"]: r["seeds"] for r in _report(out / "sweep.csv")} == {"0": "1", "5": "1", "10": "0"}
    assert sorted(p.name for p in out.iterdir()) == ["sweep.csv", "sweep.png", "sweep_runs.csv"]


def test_sigterm_mid_scan_leaves_the_sarif_of_the_files_scanned(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):
        (src / f"m{i}.py").write_text(f"import os\n\n\ndef run{i}(cmd):\n    return os.system(cmd)\n")
    out = tmp_path / "scan.sarif"
    proc = _cli_interrupted_at("codeprm", "scan_one", 4, "scan", "src", "--out", out, "--quiet", "--no-analysers",
                               cwd=tmp_path, stop="SIGTERM")
    assert proc.returncode == 143
    assert _one_line(proc) == f"terminated (SIGTERM) after 3 of 6 files; the SARIF in {out} covers those 3"
    assert [f["uri"] for f in json.loads(out.read_text())["runs"][0]["properties"]["files"]] == [
        f"src/m{i}.py" for i in range(3)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scan.sarif", "src"]  # no temp file left


@pytest.mark.slow
def test_sigterm_from_outside_ends_embed_in_one_line(tmp_path):
    """SIGTERM sent from outside while the second of three images is marked, as `timeout` sends it:
    the images done, a report of exactly those, one line, exit 143."""
    d, e = tmp_path / "D", tmp_path / "E"
    _panoramas(d, [f"p{i}.png" for i in range(3)])
    proc = subprocess.Popen([sys.executable, "-m", "engines.watermark", "embed", str(d), str(e), "--key", "k",
                             "--message", "hi", "--quiet"], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not (e / "p0.png").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.terminate()  # SIGTERM
    _, err = proc.communicate(timeout=120)
    done = proc.returncode == 143 and re.fullmatch(
        rf"terminated \(SIGTERM\) after (\d) of 3 files; {re.escape(str(e))}/report\.csv covers (those \d|that one)",
        err.strip())
    assert done, (proc.returncode, err)
    n = int(done.group(1))
    assert 1 <= n < 3
    assert [r["file"] for r in _report(e / "report.csv")] == [f"p{i}.png" for i in range(n)]
    assert sorted(p.name for p in e.iterdir()) == sorted([f"p{i}.png" for i in range(n)] + ["report.csv"])


# ---------------------------------------------------------------------------------- sweep cost
@pytest.mark.parametrize("flags, message", [
    (["--seeds", "1000000000"], r"error: seeds \(independent runs\) must be between 1 and 10,000 \(got 1,000,000,000\)"),
    (["--seeds", "1", "--T", "1000000000"],
     r"error: a block \(corruption_budget=0, 1 seed\) is refused: this run would hold about [\d,]+ MB of arrays .*"),
    (["--seeds", "10000", "--T", "50000"], (r"error: this sweep would take about [\d,.]+ h of CPU here \(cap "
                                             r"--max-hours 24\): use fewer values, seeds or rounds, or --mode fast")),
])
def test_sweep_refuses_impossible_work_up_front(tmp_path, flags, message):
    """Issue #39: `--seeds 1000000000` grew past 1.5 GB, and `--T 1000000000 --seeds 1` failed its
    block and then wrote an empty sweep.csv and sweep.png. Both, and a sweep whose estimate is days,
    are refused at once by the cost model, before any folder or file is made."""
    out = tmp_path / "sweep"
    t0 = time.monotonic()
    proc = _cli("dueling", "sweep", "--param", "corruption_budget", "--values", "0,25", *flags, "--out", out,
                "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert re.fullmatch(message, _one_line(proc)), proc.stderr
    assert time.monotonic() - t0 < 60  # no work started: imports and the estimate only
    assert not out.exists()


# ---------------------------------------------------------------------------------- dueling run
def test_run_writes_the_curves_and_summary_and_never_an_empty_folder(tmp_path):
    """`python -m engines.dueling run` (the reference's `main.py run`): the curves of every round,
    the summary, the plot on request; existing outputs refused; stopped by SIGTERM mid-run, it
    leaves no folder and ends in one line with 143."""
    out = tmp_path / "run"
    args = ["run", "--T", "200", "--seeds", "2", "--algorithms", "RCDP-UCB,MaxInP", "--out", out, "--quiet"]
    proc = _cli("dueling", *args, "--plot")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["regret.csv", "regret.png", "summary.json"]
    rows = _report(out / "regret.csv")
    assert len(rows) == 2 * 2 * 200 and {r["seed"] for r in rows} == {"1041", "1141"}
    summary = json.loads((out / "summary.json").read_text())
    finals = {a: [float(r["regret"]) for r in rows if r["method"] == a and r["round"] == "200"] for a in ("RCDP-UCB", "MaxInP")}
    for row in summary["table"]:
        assert row["final_regret_mean"] == pytest.approx(np.mean(finals[row["algorithm"]]), rel=1e-5)
    assert [line.split()[1] for line in proc.stdout.splitlines()] == [r["algorithm"] for r in summary["table"]]
    again = _cli("dueling", *args)
    assert again.returncode == 2 and "already exists" in _one_line(again)
    assert _cli("dueling", *args, "--overwrite").returncode == 0
    assert not (out / "regret.png").exists()  # an earlier plot does not stand beside new curves

    stopped = tmp_path / "stopped"
    proc = _cli_interrupted_at("dueling", "simulate", 1, *args[:-3], "--out", stopped, "--quiet", stop="SIGTERM")
    assert proc.returncode == 143 and _one_line(proc) == "terminated (SIGTERM)"
    assert not stopped.exists()



# ---------------------------------------------------------------------------------- issue #47: empty paths, keys, Ctrl-C
def test_an_empty_output_path_is_refused_before_any_work(tmp_path):
    """Issue #47 item 15: ``--out ''`` (and an empty OUT_DIR) exited 0 and wrote into the current folder.
    Each command now refuses it in one line, exit 2, and the folder it runs in stays empty."""
    src = tmp_path / "in"
    _panoramas(src, ["p0.png"])
    here = tmp_path / "here"
    here.mkdir()
    commands = {
        "dueling run": ("dueling", "run", "--T", "20", "--seeds", "1", "--algorithms", "MaxInP", "--out", "", "--quiet"),
        "dueling sweep": ("dueling", "sweep", "--param", "corruption_budget", "--values", "0,1", "--T", "20",
                          "--seeds", "1", "--algorithms", "MaxInP", "--out", "", "--quiet"),
        "watermark embed": ("watermark", "embed", src, "", "--key", "k", "--message", "hi", "--quiet"),
    }
    for name, (engine, *args) in commands.items():
        proc = _cli(engine, *args, cwd=here)
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert "is empty" in _one_line(proc), (name, proc.stderr)
        assert list(here.iterdir()) == [], (name, list(here.iterdir()))


def test_a_key_or_message_that_is_not_utf8_is_refused_once(tmp_path):
    """Issue #47 item 16: ``--key $'cl\\xe9'`` (a Latin-1 terminal) failed every file with
    ``UnicodeEncodeError ... '\\udce9'``. The key and the message are text that the tab and the MCP tools
    take too, so a value that is not UTF-8 is refused once, before any file, naming the flag and the
    byte; nothing is written."""
    src, out = tmp_path / "in", tmp_path / "out"
    _panoramas(src, ["p0.png", "p1.png"])
    cases = [(["embed", src, out, "--key", b"cl\xe9", "--message", "hi"], "--key"),
             (["embed", src, out, "--key", "k", "--message", b"caf\xe9"], "--message"),
             (["verify", src, "--key", b"cl\xe9"], "--key")]
    for args, flag in cases:
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        proc = subprocess.run([sys.executable.encode(), b"-m", b"engines.watermark", *argv, b"--quiet"], env=_env(),
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        line = _one_line(proc)
        assert line.startswith(f"error: {flag} is not UTF-8 text") and "0xE9" in line, line
        assert "UnicodeEncodeError" not in proc.stderr and "udce9" not in proc.stderr
    assert not out.exists()


def _stderr_lines(err: str) -> list[str]:
    """stderr without the progress bar's redrawn lines."""
    return [line for line in err.replace("\r", "\n").splitlines()
            if line.strip() and "round/s" not in line and "rounds/s" not in line and "simulate (about" not in line
            and "it/s" not in line and "s/it" not in line]


@pytest.mark.parametrize("presses", [2, 15])
def test_ctrl_c_pressed_twice_or_held_ends_in_one_line_with_130(tmp_path, presses):
    """Issue #47 item 17: two Ctrl-C 20 ms apart (or a held key) printed ``Exception ignored in
    <function Popen.__del__> ... KeyboardInterrupt`` after the clean message, or ended the process by
    the signal itself. The first press stops the run; the later ones are let go: exit 130, one line."""
    out = tmp_path / "run"
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "engines.dueling", "run", "--T", "200000", "--seeds", "2",
                                 "--mode", "fast", "--algorithms", "MaxInP,RCDB", "--out", str(out)], env=_env(),
                                stdout=subprocess.DEVNULL, stderr=err, preexec_fn=_default_sigint)  # noqa: PLW1509
    deadline = time.monotonic() + 120
    while "round" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the progress bar is drawn: the run has started
    time.sleep(0.3)
    for _ in range(presses):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    assert proc.wait(timeout=120) == 130, (proc.returncode, log.read_text()[-2000:])
    text = log.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text, text[-2000:]
    assert _stderr_lines(text) == ["interrupted"], text[-2000:]
    assert not out.exists()


@pytest.mark.slow
def test_ctrl_c_pressed_twice_mid_embed_ends_in_one_line_with_130(tmp_path):
    """The same for embed, pressed twice while the second of three images is being marked."""
    d, e = tmp_path / "D", tmp_path / "E"
    _panoramas(d, [f"p{i}.png" for i in range(3)])
    proc = subprocess.Popen([sys.executable, "-m", "engines.watermark", "embed", str(d), str(e), "--key", "k",
                             "--message", "hi", "--quiet"], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)  # noqa: PLW1509
    deadline = time.monotonic() + 240
    while not (e / "p0.png").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    for _ in range(2):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("interrupted after "), err
