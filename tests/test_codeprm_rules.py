"""The rule packs written here (taint: user input reaching a sink; settings: framework settings
left open): every rule has a vulnerable fixture and a safe twin (``tests/data/codeprm/<pack>/
<rule>_{vuln,safe}.py``); each line marked ``# expect`` of a vulnerable fixture holds a finding of
that rule, and its safe twin holds none. Both packs run in one semgrep process with CodeShield's
rules."""
from __future__ import annotations

from pathlib import Path

import pytest

from engines.codeprm.analysers import ANALYSERS, semgrep, start_analysers
from engines.codeprm.cwe import TABLE

DATA = Path(__file__).parent / "data" / "codeprm"
PACKS = ("taint", "settings")


def _rule_names(pack: str) -> list[str]:
    prefix = f"codeprm-{pack}-"
    return sorted({r["id"][len(prefix):].removesuffix("-helper") for r in ANALYSERS[pack].rules()})


CASES = [(pack, name, kind) for pack in PACKS for name in _rule_names(pack) for kind in ("vuln", "safe")]


@pytest.fixture(scope="module")
def results() -> dict:
    """Every fixture through every rule pack, in one semgrep process."""
    files = [DATA / pack / f"{name}_{kind}.py" for pack, name, kind in CASES]
    missing = [str(f) for f in files if not f.is_file()]
    assert not missing, f"rules without a fixture: {missing}"
    texts = [f.read_text() for f in files]
    out = start_analysers(texts, PACKS).results()
    return {case: (text, a) for case, text, a in zip(CASES, texts, out)}


@pytest.mark.parametrize("pack,name,kind", CASES, ids=[f"{p}-{n}-{k}" for p, n, k in CASES])
def test_each_rule_finds_its_fixture_and_passes_its_safe_twin(results, pack, name, kind):
    text, a = results[(pack, name, kind)]
    assert not a.failures
    rule = f"{pack}:codeprm-{pack}-{name}"
    mine = [f for f in a.findings if f.rule in (rule, rule + "-helper")]
    if kind == "safe":
        assert not a.findings, [(f.line, f.rule) for f in a.findings]
        return
    expect = {i for i, line in enumerate(text.splitlines(), 1) if "# expect" in line}
    assert expect and expect <= {f.line for f in mine}, (sorted(expect), sorted(f.line for f in mine))
    assert all(f.family and TABLE[f.cwe].family == f.family for f in mine)  # a CWE of the one table


def test_a_flow_is_explained_in_words_through_a_variable_a_format_and_a_helper(results):
    _, a = results[("taint", "ssrf", "vuln")]
    words = {f.line: f.trace.explain() for f in a.findings if f.trace}
    assert words[20] == "`url` comes from `request.form` (line 19) and reaches `requests.get` (line 20)"
    assert "reaches `fetch` (line 23)" in words[23]  # the helper that sends the request
    _, cmd = results[("taint", "command", "vuln")]
    route = next(f for f in cmd.findings if f.line == 16)
    assert route.trace.explain() == ("`host` comes from a route parameter (line 15) and reaches "
                                     "`os.system` (line 16)")


def test_the_rule_packs_run_in_codeshields_semgrep_process(monkeypatch):
    started = []
    real = semgrep.subprocess.Popen
    monkeypatch.setattr(semgrep.subprocess, "Popen", lambda cmd, *a, **k: (started.append(cmd), real(cmd, *a, **k))[1])
    texts = [(DATA / "taint" / "sql_vuln.py").read_text(), (DATA / "settings" / "debug_vuln.py").read_text(),
             "import os\nos.system(cmd)\n"]
    out = start_analysers(texts).results()
    assert len(started) == 1
    assert {f.source for f in out[0].findings} >= {"taint"} and {f.source for f in out[1].findings} >= {"settings"}
    assert "codeshield" in {f.source for f in out[2].findings}
