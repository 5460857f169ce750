"""codeprm's one scoring path: analysers at full recall, model flags that name their sink and
earn their place, no flag on a step without code, one CWE table, the same numbers from scan,
scan_many, file_risk, rank and SARIF, and a tree scan with one semgrep process."""
from __future__ import annotations

import dataclasses
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from engines.codeprm import CodePRM, examples, to_sarif
from engines.codeprm.analysers import ANALYSERS, bandit, codeshield, merge, run_analysers, semgrep
from engines.codeprm.cwe import FAMILIES, TABLE, sinks_in
from engines.codeprm.findings import CWE_INFO, Finding

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module")
def prm() -> CodePRM:
    return CodePRM.load("onnx")


def _loud(prm: CodePRM, **cfg) -> CodePRM:
    """The engine with a stand-in model that calls every step risky (risk 0.9)."""
    p = prm.with_config(**cfg)
    p.step_probs = lambda f: (np.full(len(f.spans), 0.9), np.ones((len(f.spans), f.gidx.shape[1])))
    return p


# ------------------------------------------------------------------------------ analysers
@pytest.mark.parametrize("code,test_id,cwe,family", [
    ('SECRET_KEY = "dev-9f8e7d6c5b4a"\n', "B105", 259, 798),
    ("import random\n\n\ndef token():\n    return random.random()\n", "B311", 330, 338),
    ("def connect(user):\n    return login(user, password='hunter22')\n", "B106", 259, 798),
])
def test_every_analyser_finding_flags_its_step_whatever_its_severity(prm, code, test_id, cwe, family):
    r = prm.with_config(prefix_flag_threshold=1.0, model_flag_threshold=1.0).scan(code)
    f = next(f for f in r.findings if f.rule == f"bandit:{test_id}")
    assert (f.cwe, f.family, f.severity) == (cwe, family, "low")  # bandit's own CWE, its low rating
    assert r.verdict == "vulnerable" and any(s.driver.startswith("analysers") and f in s.findings for s in r.steps)


def test_the_merge_keeps_the_most_severe_and_nothing_on_a_line_without_code():
    code = "# eval(x) in a comment\nx = eval(y)\n"
    low = Finding(2, 94, "bandit:B307", "a", "bandit", "low", "low")
    high = Finding(2, 94, "bandit:B307", "b", "bandit", "medium", "high")
    in_comment = Finding(1, 94, "codeshield:insecure-eval-use", "c", "codeshield", "medium")
    assert merge(code, [low, high, in_comment]) == [high]
    assert {(f.line, f.source) for f in run_analysers([code])[0]} == {(2, "bandit"), (2, "codeshield")}


def test_one_cwe_table():
    """One table of names; each analyser maps its own rules into its families, in its module."""
    assert set(CWE_INFO) == set(FAMILIES)
    assert set(bandit.FAMILY.values()) <= set(FAMILIES)  # every bandit test lands in a family of the table
    assert all(TABLE[TABLE[c].family].family == TABLE[c].family for c in TABLE if TABLE[c].family)
    assert all(TABLE[k].calls or TABLE[k].sinks for k in (22, 78, 79, 89, 94, 502, 611, 918))  # the model's sinks
    assert sinks_in(["return redirect(nxt)"]) == []  # a family without sinks is never named by the model
    for a in ANALYSERS.values():  # every semgrep rule names a CWE of the table
        for r in a.rules() if a.rules else []:
            cwe = int(str(r["metadata"]["cwe_id"]).split("-")[1].split(":")[0])
            assert cwe in TABLE and TABLE[cwe].family, (a.name, r["id"], cwe)


# ------------------------------------------------------------------------------ model flags
SINKS = '''import subprocess


def run(cmd):
    # subprocess.run(cmd, shell=True) would be worse
    return subprocess.run(cmd)


def greet(name):
    return "hello " + name


def docs():
    """Call os.system(cmd) and pickle.loads(blob) with care."""
'''


def test_a_model_flag_names_its_sink_and_the_sink_gives_the_cwe(prm):
    loud = _loud(prm, model_flag_threshold=0.5, model_flag_cwes=tuple(FAMILIES))
    r = loud.scan(SINKS)
    by_model = [s for s in r.steps if s.driver == "model"]
    assert [s.start_line for s in by_model] == [4]  # the step calling subprocess.run, nothing else
    (f,) = by_model[0].findings
    assert (f.source, f.family, f.cwe, f.line) == ("model", 78, 78, 6) and "`subprocess.run(`" in f.message
    assert r.verdict == "vulnerable"


def test_no_step_without_code_is_ever_flagged(prm):
    code = ("# ======================================\n# based on CWE-319: os.system(cmd)\n\n"
            "'''Notes: pickle.loads(blob), eval(x), SELECT * FROM t WHERE a = %s'''\n\n# hashlib.md5(\n")
    loud = _loud(prm, model_flag_threshold=0.0, model_flag_cwes=tuple(FAMILIES), prefix_flag_threshold=0.0)
    for partial in (False, True):
        r = loud.scan(code, partial=partial)
        assert r.verdict == "safe" and not any(s.driver for s in r.steps) and not r.findings


def test_the_gate_keeps_model_flags_out_of_code_that_parses_and_in_prefixes(prm):
    gated = _loud(prm, model_flag_threshold=0.5, model_flag_cwes=(), prefix_flag_threshold=0.5)
    assert not any(s.driver == "model" for s in gated.scan(SINKS).steps)
    prefix = "import pickle\n\n\ndef load(blob):\n    data = pickle.loads(blob"
    r = gated.scan(prefix[: prefix.index("pickle.loads(") + 10], partial=True)  # cut mid-call
    assert r.steps[r.writing].driver in ("model", "analysers + model", "analysers")
    only_prefix = gated.with_config(prefix_flag_threshold=1.0)
    only_prefix.step_probs = gated.step_probs
    assert not any(s.driver == "model" for s in only_prefix.scan(prefix, partial=True).steps)


def test_sinks_are_read_outside_comments():
    assert [(s.family, s.text) for s in sinks_in(["x = 1  # eval(x)", "y = eval(z)"])] == [(94, "eval(")]
    assert not sinks_in(["cur.execute('SELECT * FROM t WHERE a = ?', (a,))"])  # a parameterised query
    assert sinks_in(["cur.execute('SELECT * FROM t WHERE a = %s' % a)"])[0].family == 89
    assert [s.family for s in sinks_in(["    out = subprocess.check_ou"], writing=True)] == [78]
    assert not sinks_in(["    out = subprocess.check_ou"]) and not sinks_in(["    x = os.pa"], writing=True)


# ------------------------------------------------------------------------------ one path
@pytest.mark.parametrize("name", ["CWE-89 vulnerable", "CWE-89 fixed", "CWE-502 vulnerable", "CWE-338 fixed"])
def test_scan_file_risk_rank_and_sarif_agree(prm, name):
    code = examples()[name]
    r = prm.scan(code)
    assert prm.file_risk(code) == pytest.approx(r.risk, abs=1e-12)
    cut = code.rfind("\n", 0, len(code) - 1) + 1
    (ranked,) = prm.rank(code[:cut], [code[cut:]])
    own = [s for s in r.steps if s.end_line > code[:cut].count("\n")]
    assert ranked["verdict"] == ("vulnerable" if any(s.driver for s in own) else "safe")
    assert ranked["min_score"] == pytest.approx(min(s.score for s in own), abs=1e-12)
    res = to_sarif([r])["runs"][0]["results"]
    assert len(res) == len(r.findings)
    assert all(x["properties"]["severity"] in ("low", "medium", "high", "") for x in res)


def test_file_risk_refuses_what_scan_refuses(prm):
    from engines.codeprm import NotPython

    with pytest.raises(NotPython):
        prm.file_risk("Hello, how are you today? I am fine, thanks.")


def test_scan_many_is_scan_per_file_with_one_semgrep_process(prm, monkeypatch):
    codes = [examples()[k] for k in sorted(examples())][:8] + [(STDLIB / "shlex.py").read_text(), "", "not python at all"]
    started = []
    real = semgrep.SemgrepRun.__init__

    def counting(self, cs, *a, **k):
        started.append(len(cs))
        real(self, cs, *a, **k)

    monkeypatch.setattr(semgrep.SemgrepRun, "__init__", counting)
    many = prm.scan_many(codes, [f"f{i}.py" for i in range(len(codes))])
    assert started == [len(codes) - 1]  # one process over every file that is Python
    monkeypatch.undo()
    for code, got in zip(codes[:-2], many):
        one = prm.scan(code)
        assert [(s.start_line, s.driver, round(s.risk, 9)) for s in got.steps] == \
            [(s.start_line, s.driver, round(s.risk, 9)) for s in one.steps]
        assert sorted(map(repr, got.findings)) == sorted(map(repr, one.findings))
    assert many[-2].verdict == "safe" and not many[-2].steps  # an empty __init__.py is scanned
    assert "does not look like Python" in str(many[-1])


def test_scan_dir_runs_semgrep_once_over_the_tree(tmp_path, monkeypatch, capsys):
    import json

    from engines.codeprm.cli import main

    src = tmp_path / "app"
    (src / "views").mkdir(parents=True)
    for i in range(6):
        (src / "views" / f"v{i}.py").write_text(examples()["CWE-78 vulnerable" if i % 2 else "CWE-78 fixed"])
    (src / "__init__.py").write_text("")
    (src / "settings.py").write_text('SECRET_KEY = "dev-9f8e7d6c5b4a"\n')
    started = []
    real = semgrep.SemgrepRun.__init__
    monkeypatch.setattr(semgrep.SemgrepRun, "__init__", lambda self, cs, *a, **k: (started.append(len(cs)),
                                                                                     real(self, cs, *a, **k))[1])
    out = tmp_path / "scan.sarif"
    assert main(["scan", str(src), "--out", str(out), "--quiet"]) == 1
    assert started == [8]  # one semgrep process over all eight files
    printed = capsys.readouterr().out
    assert "__init__.py: safe" in printed and "settings.py: vulnerable" in printed
    res = json.loads(out.read_text())["runs"][0]["results"]
    secret = next(r for r in res if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("settings.py")
                  and r["properties"]["source"] == "bandit")
    assert (secret["ruleId"], secret["properties"]["severity"], secret["level"]) == ("CWE-259", "low", "note")


def test_scan_dir_overlaps_semgrep_with_bandit_and_the_model_and_gives_the_sequential_sarif(prm, tmp_path,
                                                                                        monkeypatch, capsys):
    """semgrep starts first (one job), bandit and the model run while it works, its output is read
    last, and the SARIF is the one the file-by-file path (``scan`` per file) gives."""
    import json

    from engines.codeprm import analysers
    from engines.codeprm.cli import _items, main

    src = tmp_path / "app"
    (src / "views").mkdir(parents=True)
    names = ["CWE-78 vulnerable", "CWE-89 vulnerable", "CWE-502 vulnerable", "CWE-22 vulnerable", "CWE-78 fixed"]
    for i, name in enumerate(names):
        (src / "views" / f"v{i}.py").write_text(examples()[name])
    (src / "settings.py").write_text('SECRET_KEY = "dev-9f8e7d6c5b4a"\n')
    events = []
    popen, local, result = semgrep.subprocess.Popen, bandit.ANALYSER.local, semgrep.SemgrepRun.result
    monkeypatch.setattr(semgrep.subprocess, "Popen", lambda cmd, *a, **k: (events.append(("semgrep", cmd)),
                                                                          popen(cmd, *a, **k))[1])
    monkeypatch.setitem(analysers.ANALYSERS, "bandit", dataclasses.replace(
        bandit.ANALYSER, local=lambda src: (events.append(("bandit", None)), local(src))[1]))
    monkeypatch.setattr(semgrep.SemgrepRun, "result", lambda self: (events.append(("read", None)), result(self))[1])
    out = tmp_path / "scan.sarif"
    assert main(["scan", str(src), "--out", str(out), "--quiet"]) == 1
    capsys.readouterr()
    kinds = [k for k, _ in events]
    assert kinds == ["semgrep"] + ["bandit"] * (len(names) + 1) + ["read"]
    assert events[0][1][events[0][1].index("-j") + 1] == "1"
    monkeypatch.undo()
    seq = [prm.scan(it.load().decode("utf-8"), path=it.name) for it in _items([str(src)])]
    tree = json.loads(out.read_text())
    assert tree == json.loads(json.dumps(to_sarif(seq)))
    assert {r["properties"]["source"] for r in tree["runs"][0]["results"]} >= {"bandit", "codeshield"}
    assert any(codeshield.semgrep_raw([examples()[n]])[0] for n in names)  # semgrep itself finds some of them


def test_the_benchmark_fails_when_fused_is_below_an_analyser_at_any_severity():
    import importlib.util

    spec = importlib.util.spec_from_file_location("codeprm_families",
                                                  Path(__file__).resolve().parents[1] / "benchmarks" / "codeprm_families.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    row = {"spot_recall": 0.10, "pair_ranking": 0.60, "cse_line_auroc": 0.80}
    table = {"bandit": dict(row), "CodeShield": dict(row, spot_recall=0.12), "fused": dict(row, spot_recall=0.11)}
    cmp = bench.fused_vs_best(table)
    assert not cmp["spot_recall"]["ok"] and cmp["spot_recall"]["best_single"] == 0.12
    assert cmp["pair_ranking"]["ok"] and cmp["cse_line_auroc"]["ok"]
    table["fused"]["spot_recall"] = 0.12
    assert all(v["ok"] for v in bench.fused_vs_best(table).values())


ISSUE_FALSE_ALARMS = [
    'def login(db, username):\n    cur = db.execute("SELECT id FROM users WHERE username = ?", (username,))\n'
    '    return cur.fetchone()\n',
    "# ======================================================\n# based on CWE-319\n\n\ndef f():\n    return 1\n",
    "from django.shortcuts import redirect\n\n\ndef logout(request):\n    request.session.flush()\n"
    "    return redirect('login')\n",
    "from django.http import JsonResponse\n\n\ndef status(request):\n    return JsonResponse({'ok': True, 'user': "
    "request.user.username})\n",
    "import random\n\n\ndef shuffle_cards(cards):\n    return sorted(cards)\n",
    "import pickle  # results are cached as pickle files\nimport json\n\n\ndef load(path):\n"
    "    with open(path) as fh:\n        return json.load(fh)\n",
]


@pytest.mark.parametrize("code", ISSUE_FALSE_ALARMS)
def test_the_issues_false_alarms_are_not_flagged_whole_or_as_they_are_written(prm, code):
    """Part 3's model-only false alarms on web apps: a parameterised query, comment steps, a
    redirect, a JSON response, ``import random``, an import line naming pickle."""
    assert prm.scan(code).verdict == "safe"
    lines = code.rstrip("\n").split("\n")
    for k in range(1, len(lines) + 1):  # every prefix, as the code is typed line by line
        r = prm.scan("\n".join(lines[:k]), partial=True)
        assert not any(s.driver == "model" for s in r.steps), (k, r)


def test_the_tab_says_analysers_only_where_the_model_cannot_flag(prm):
    """``family_modes``: a family the model can never name (no sink of its own: redirects with the
    shipped narrow sink set) or where its prefix weight is 0 is "analysers only"."""
    modes = prm.family_modes()
    assert modes[78] == "step model + analysers" and modes[601] == "analysers only"
    assert prm.with_config(wide_sinks=True).family_modes()[601] == "step model + analysers"
    off = prm.with_config(prefix_flag_cwes=(), model_flag_threshold=1.0).family_modes()
    assert set(off.values()) == {"analysers only"}
