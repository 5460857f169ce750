"""Batch commands (watermark embed/verify, codeprm scan, bandits sweep) and the shared runner:
progress + summary, bad items reported and skipped, exit status, one retry, and Ray runs (a
local Ray with 2 CPUs, one session for the module) giving the one-process outputs."""
from __future__ import annotations

import csv
import json
import os
import signal
from pathlib import Path

import pytest

from engines.codeprm.cli import main as codeprm_main
from engines.common.batch import (
    Item,
    files_in,
    interrupt_deferred,
    ray_address,
    run_batch,
    write_atomic,
)
from engines.common.errors import InputError
from engines.dueling.cli import main as bandits_main
from engines.watermark.cli import main as watermark_main


def _double(x: int) -> int:
    if x < 0:
        raise InputError(f"negative: {x}")
    return 2 * x


def _panoramas(folder: Path, names=("forest", "sunrise"), bad: bool = False) -> Path:
    """Two shipped panoramas at 512x256 (and a file that is no image)."""
    from PIL import Image

    from engines.watermark import example_path

    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        Image.open(example_path(n)).convert("RGB").resize((512, 256), Image.BICUBIC).save(folder / f"{n}.png")
    if bad:
        (folder / "broken.png").write_bytes(b"this is not a PNG")
    return folder


def _rows(path: Path, drop=("seconds",)) -> list[dict]:
    with open(path) as fh:
        return [{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(fh)]


# ---------------------------------------------------------------------------------- the runner
def test_bad_input_is_reported_once_and_the_rest_is_done():
    rep = run_batch(_double, [Item("a", 1), Item("b", -1), Item("c", 3)], progress=False)
    assert [o.ok for o in rep.outcomes] == [True, False, True]
    assert [o.value for o in rep.ok] == [2, 6]
    bad = rep.failed[0]
    assert (bad.name, bad.kind, bad.attempts, bad.error) == ("b", "input", 1, "negative: -1")
    assert "3 items: 2 done, 1 failed" in rep.summary() and "FAILED b: negative: -1" in rep.summary()


def test_a_crash_is_retried_once_then_reported(tmp_path):
    calls = []

    def flaky(name: str) -> str:
        calls.append(name)
        if name == "always" or calls.count(name) == 1:
            raise RuntimeError(f"lost {name}")
        return name

    rep = run_batch(flaky, [Item("once", "once"), Item("always", "always")], progress=False)
    assert (rep.outcomes[0].ok, rep.outcomes[0].value, rep.outcomes[0].attempts) == (True, "once", 2)
    assert (rep.outcomes[1].ok, rep.outcomes[1].kind, rep.outcomes[1].attempts) == (False, "crash", 2)
    assert rep.outcomes[1].error == "RuntimeError: lost always"
    assert calls == ["once", "once", "always", "always"]


def test_unreadable_and_missing_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        files_in(tmp_path / "nope", (".png",))
    with pytest.raises(InputError, match="holds no .png files"):
        files_in(tmp_path, (".png",))
    rep = run_batch(len, [Item("gone", path=tmp_path / "gone.png")], progress=False)
    assert rep.failed[0].error.startswith("cannot read the file")


def test_ctrl_c_stops_the_batch_and_returns_exactly_what_was_finished():
    seen = []

    def stop_at_c(name: str) -> str:
        if name == "c":
            raise KeyboardInterrupt  # what Ctrl-C raises inside an item's work
        return name.upper()

    rep = run_batch(stop_at_c, [Item(n, n) for n in "abcd"], progress=False,
                    on_done=lambda item, o: seen.append((item.name, o.index, o.value)))
    assert rep.interrupted and rep.total == 4
    assert [(o.name, o.index, o.value) for o in rep.outcomes] == seen == [("a", 0, "A"), ("b", 1, "B")]
    assert rep.interrupted_line("file", "out/report.csv") == "interrupted after 2 of 4 files; out/report.csv covers those 2"


@pytest.fixture
def sigint_default():
    """Python's own SIGINT handler, whatever this process inherited (a job started in the background
    by a non-interactive shell ignores SIGINT)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_is_held_while_an_output_is_written(tmp_path, sigint_default):
    target = tmp_path / "out.bin"
    with pytest.raises(KeyboardInterrupt), interrupt_deferred():
        os.kill(os.getpid(), signal.SIGINT)  # arrives mid-write ...
        write_atomic(target, b"all of it")  # ... and the write still completes
    assert target.read_bytes() == b"all of it"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]  # the temp file was renamed, not left
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ray_address_rules(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_address(None) is None and ray_address("local") == "local"
    assert ray_address("ray://head:10001") == "ray://head:10001"
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert ray_address("local") == "head:6379"


def test_a_cluster_address_nobody_answers_is_a_usage_error_not_a_hang(tmp_path, capsys):
    d = _panoramas(tmp_path / "in", names=("forest",))
    rc = watermark_main(["verify", str(d), "--key", "k1", "--ray", "127.0.0.1:1", "--quiet"])
    assert rc == 2
    assert "could not join the Ray cluster at 127.0.0.1:1: nothing answers there" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- the commands
def test_watermark_verify_reports_bad_files_and_fails(tmp_path, capsys):
    d = _panoramas(tmp_path / "in", names=("forest",), bad=True)
    rc = watermark_main(["verify", str(d), "--key", "k1", "--json", "--quiet"])
    out, err = capsys.readouterr()
    rows = {r["file"]: r for r in map(json.loads, out.splitlines())}
    assert rc == 1
    assert rows["forest.png"]["detected"] is False and rows["forest.png"]["message"] is None
    assert rows["forest.png"]["p_value"] > 1e-6
    assert "could not read the image" in rows["broken.png"]["error"]
    assert "2 files: 1 done, 1 failed" in err and "FAILED broken.png" in err


def test_watermark_bad_usage_is_exit_2(tmp_path, capsys):
    assert watermark_main(["verify", str(tmp_path / "missing"), "--key", "k"]) == 2
    assert watermark_main(["verify", str(tmp_path), "--key", "k", "--bits", "3"]) == 2
    assert watermark_main(["embed", str(tmp_path), str(tmp_path / "o"), "--key", "k",
                           "--message", "far too long for 64 bits"]) == 2
    assert not (tmp_path / "o").exists()
    assert "error:" in capsys.readouterr().err


def test_codeprm_scan_folder_skips_what_it_cannot_scan(tmp_path, capsys):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "app.py").write_text("cmd = input()\nresult = eval(cmd)\n")
    (src / "pkg" / "util.py").write_text("def add(a, b):\n    return a + b\n")
    (src / "blob.py").write_bytes(b"\x00\x01\x02 binary")
    sarif = tmp_path / "out.sarif"
    rc = codeprm_main(["scan", str(src), "--out", str(sarif), "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 3
    assert f"{src.as_posix()}/app.py: vulnerable" in out and "util.py: safe" in out
    assert "FAILED" in err and "blob.py" in err and "NUL bytes" in err
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(sarif.read_text())["runs"][0]["results"]}
    assert uris == {f"{src.as_posix()}/app.py"}


def test_bandits_sweep_writes_csv_and_png(tmp_path, capsys):
    out = tmp_path / "sweep"
    rc = bandits_main(["sweep", "--param", "corruption_budget", "--values", "0,25", "--seeds", "2", "--T", "150",
                       "--algorithms", "RCDP-UCB,MaxInP", "--out", str(out), "--quiet"])
    assert rc == 0, capsys.readouterr().err
    runs, means = _rows(out / "sweep_runs.csv"), _rows(out / "sweep.csv")
    assert len(runs) == 2 * 2 * 2 and len(means) == 2 * 2
    assert {r["seed"] for r in runs} == {"1041", "1141"}
    for m in means:  # the means are the runs' means
        regs = [float(r["final_regret"]) for r in runs
                if r["algorithm"] == m["algorithm"] and r["corruption_budget"] == m["corruption_budget"]]
        assert float(m["final_regret_mean"]) == pytest.approx(sum(regs) / len(regs), rel=1e-5)
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the adversary's budget hurts: more flipped outcomes, more regret
    by = {(m["algorithm"], m["corruption_budget"]): float(m["final_regret_mean"]) for m in means}
    assert by[("RCDP-UCB", "25")] > by[("RCDP-UCB", "0")]


def test_bandits_sweep_refuses_unknown_parameter(tmp_path, capsys):
    assert bandits_main(["sweep", "--param", "colour", "--values", "1", "--out", str(tmp_path)]) == 2
    assert "choose from" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- Ray
@pytest.fixture(scope="module")
def ray_session():
    """One local Ray with 2 CPUs for the module; the commands reuse it (and leave it running)."""
    import ray  # a requirement: missing, the test fails

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_embed_then_verify_round_trips_and_equals_one_process(tmp_path, capsys, ray_session):
    src = _panoramas(tmp_path / "in", bad=True)
    args = ["--key", "studio-key", "--message", "hello!", "--quiet"]
    assert watermark_main(["embed", str(src), str(tmp_path / "ray"), *args, "--ray"]) == 1  # broken.png
    assert watermark_main(["embed", str(src), str(tmp_path / "one"), *args]) == 1
    capsys.readouterr()
    for name in ("forest.png", "sunrise.png"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    assert _rows(tmp_path / "ray" / "report.csv") == _rows(tmp_path / "one" / "report.csv")
    rows = {r["file"]: r for r in _rows(tmp_path / "ray" / "report.csv")}
    assert float(rows["forest.png"]["psnr"]) >= 42 and rows["forest.png"]["bits"] == "64"
    assert "could not read the image" in rows["broken.png"]["error"]

    assert watermark_main(["verify", str(tmp_path / "ray"), "--key", "studio-key", "--json", "--ray",
                           "--quiet"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["file"] for x in lines] == ["forest.png", "sunrise.png"]
    assert all(x["detected"] and x["message"] == "hello!" and x["p_value"] < 1e-6 for x in lines)
    assert watermark_main(["verify", str(tmp_path / "ray"), "--key", "other-key", "--json", "--ray",
                           "--quiet"]) == 0
    assert not any(json.loads(x)["detected"] for x in capsys.readouterr().out.splitlines())


@pytest.mark.slow
def test_ray_codeprm_scan_and_bandits_sweep_equal_one_process(tmp_path, capsys, ray_session):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        (src / f"m{i}.py").write_text(f"import subprocess\n\ndef run{i}(cmd):\n    "
                                      f"return subprocess.run(cmd, shell={i % 2 == 0})\n")
    sarifs = []
    for extra in ([], ["--ray"]):
        out = tmp_path / f"scan{len(extra)}.sarif"
        assert codeprm_main(["scan", str(src), "--out", str(out), "--quiet", *extra]) == 1
        sarifs.append(json.loads(out.read_text()))
    assert sarifs[0] == sarifs[1]

    outs = []
    for extra in ([], ["--ray"]):
        out = tmp_path / f"sweep{len(extra)}"
        assert bandits_main(["sweep", "--param", "delay_std", "--values", "0,100", "--seeds", "3", "--T", "120",
                             "--algorithms", "RCDP-UCB,RCDB", "--out", str(out), "--quiet", *extra]) == 0
        outs.append((out / "sweep_runs.csv").read_text())
    assert outs[0] == outs[1]
    capsys.readouterr()


@pytest.mark.slow
def test_ray_retries_a_crashed_task_once_then_reports_it(tmp_path, ray_session):
    marker = tmp_path / "first-try"

    def crash_first_time(name: str) -> str:
        if name == "dies":
            os._exit(1)  # the worker process dies (a lost node looks the same to the driver)
        if not marker.exists():
            marker.write_text("x")
            raise RuntimeError("transient")
        return name

    rep = run_batch(crash_first_time, [Item("flaky", "flaky"), Item("dies", "dies")],
                    ray="local", progress=False)
    assert rep.outcomes[0].ok and rep.outcomes[0].value == "flaky"
    assert not rep.outcomes[1].ok and rep.outcomes[1].kind == "crash"
    assert rep.runner == "Ray local" and rep.workers == 2
