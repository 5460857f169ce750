"""codeprm engine: steps, lexer, repair, labellers, aggregation, causality, ONNX parity, scan/rank, SARIF, CLI."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
import torch

from engines.codeprm import (
    CodePRM,
    CodeTooLarge,
    EmptyCode,
    PRMConfig,
    aggregate,
    examples,
    run_analysers,
    split_steps,
    to_sarif,
)
from engines.codeprm.analysers import ANALYSERS, bandit_raw
from engines.codeprm.fusion import ANALYSER_LEVEL, FLAG_LEVEL, MODEL_SPAN, analyser_flags, score_steps
from engines.codeprm.findings import Finding
from engines.codeprm.lines import split_lines
from engines.codeprm.features import featurize
from engines.codeprm.repair import repair
from engines.codeprm.steps import Span
from engines.codeprm.tokens import Lexer
from engines.common.errors import InputError

REPO = Path(__file__).resolve().parents[1]
STDLIB = Path(sysconfig.get_paths()["stdlib"])
REAL_FILES = ["json/decoder.py", "shlex.py", "tempfile.py", "subprocess.py"]


def _read(rel: str) -> str:
    return (STDLIB / rel).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def prm_torch() -> CodePRM:
    return CodePRM.load("torch")


@pytest.fixture(scope="module")
def prm_onnx() -> CodePRM:
    return CodePRM.load("onnx")


# ------------------------------------------------------------------------------ steps and lexer
@pytest.mark.parametrize("rel", REAL_FILES)
@pytest.mark.parametrize("cut", [1.0, 0.5, 0.37])
def test_steps_partition_nonblank_lines(rel, cut):
    text = _read(rel)
    text = text[: int(len(text) * cut)]  # prefixes cut mid-line and mid-block too
    spans = split_steps(text, max_lines=8)
    lines = split_lines(text)
    covered = [ln for s in spans for ln in range(s.start, s.end + 1)]
    assert covered == sorted(set(covered)), "steps overlap or are out of order"
    nonblank = {i for i, ln in enumerate(lines, 1) if ln.strip()}
    assert nonblank <= set(covered)
    assert all(lines[s.start - 1].strip() and lines[s.end - 1].strip() for s in spans)


def test_steps_split_blank_blocks_and_long_blocks():
    code = "a = 1\nb = 2\n\n\nc = 3\n" + "".join(f"x{i} = {i}\n" for i in range(20))
    spans = split_steps(code, max_lines=8)
    assert (spans[0].start, spans[0].end) == (1, 2)
    assert spans[1].start == 5
    assert all(s.end - s.start + 1 <= 8 for s in spans)


@pytest.mark.parametrize("rel", REAL_FILES)
def test_lexer_gives_every_nonblank_line_a_token_even_on_prefixes(rel):
    text = _read(rel)
    lexer = Lexer(4096)
    rng = random.Random(0)
    for cut in [len(text)] + [rng.randrange(len(text)) for _ in range(5)]:
        piece = text[:cut]
        ids, lines = lexer.lex(piece)
        assert ids.min() >= 0 and ids.max() < 4096
        assert np.all(np.diff(lines) >= 0)
        nonblank = {i for i, ln in enumerate(split_lines(piece), 1) if ln.strip()}
        assert nonblank <= set(lines.tolist())


def test_lexer_sees_string_contents_and_drops_comments():
    lx = Lexer()
    a, _ = lx.lex("q = 'SELECT * FROM t'  # run it\n")
    b, _ = lx.lex("q = 'SELECT * FROM t'\n")
    c, _ = lx.lex("q = 'hello world'\n")
    np.testing.assert_array_equal(a, b)
    assert lx.tid("s:select") in a.tolist() and lx.tid("s:select") not in c.tolist()


# ------------------------------------------------------------------------------ repair + labels
@pytest.mark.parametrize("rel", REAL_FILES)
def test_repair_makes_prefixes_parse_and_keeps_line_numbers(rel):
    import ast

    text = _read(rel)
    lines = split_lines(text)
    rng = random.Random(1)
    for _ in range(4):
        n = rng.randrange(10, len(lines))
        prefix = "\n".join(lines[:n])
        fixed = repair(prefix)
        assert fixed is not None
        ast.parse(fixed[0])
        kept = split_lines(fixed[0])
        # every kept line is the original line (a repair may only close brackets at the end)
        for i, ln in enumerate(kept[: max(0, len(kept) - 8)]):
            assert ln == lines[i]


@pytest.mark.parametrize("cut_lines", [0, 1, 2])
def test_labels_survive_broken_prefixes(cut_lines):
    code = "import pickle\nobj = pickle.loads(blob)\n\ndef f(x):\n    return g(x,\n        y"
    lines = split_lines(code)
    piece = "\n".join(lines[: len(lines) - cut_lines])
    assert (2, 502) in {(f.line, f.cwe) for f in run_analysers([piece])[0]}


def test_bandit_in_process_matches_bandit_cli(tmp_path):
    text = _read("tempfile.py") + "\nimport pickle, hashlib\nx = pickle.loads(b)\nh = hashlib.md5(b)\n"
    f = tmp_path / "t.py"
    f.write_text(text)
    exe = Path(sys.executable).parent / "bandit"
    out = subprocess.run([str(exe), "-q", "-f", "json", str(f)], capture_output=True, text=True)
    cli = sorted((r["line_number"], r["test_id"]) for r in json.loads(out.stdout)["results"])
    mine = sorted((line, tid) for line, tid, *_ in bandit_raw(text))
    assert mine == cli and len(cli) >= 2


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("tau", [0.02, 0.1, 1.0])
def test_softmin_lies_between_mean_and_max(seed, tau):
    # (the paper's soft minimum sum_i softmax(-s/T)_i s_i is not monotone in each step: raising
    # the risk of a step far safer than the minimum can lower the program risk a little)
    rng = np.random.default_rng(seed)
    p = rng.random(int(rng.integers(1, 40)))
    cfg = PRMConfig(tau=tau)
    r, w = aggregate(p, cfg)
    assert p.mean() - 1e-12 <= r <= p.max() + 1e-12
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-12)


def test_softmin_tends_to_max_and_topk_is_topk_mean():
    p = np.array([0.1, 0.7, 0.2, 0.65])
    np.testing.assert_allclose(aggregate(p, PRMConfig(tau=1e-4))[0], 0.7, atol=1e-3)
    np.testing.assert_allclose(aggregate(p, PRMConfig(aggregation="topk", top_k=2))[0], 0.675)


@pytest.mark.parametrize("bad", [dict(tau=0), dict(aggregation="max"), dict(prefix_flag_threshold=1.5), dict(max_step_lines=0),
                                 dict(vocab_size=10), dict(top_k=0)])
def test_config_validation(bad):
    with pytest.raises(ValueError):
        PRMConfig(**bad)


# ------------------------------------------------------------------------------ model properties
@pytest.mark.parametrize("rel", REAL_FILES[:2])
def test_step_scores_are_causal_prefix_gives_same_scores(prm_torch, rel):
    text = _read(rel)[:6000]
    full = featurize(text, prm_torch.cfg, prm_torch.lexer)
    p_full, _ = prm_torch.step_probs(full)
    cut = full.spans[len(full.spans) // 2].end
    prefix = "\n".join(split_lines(text)[:cut]) + "\n"
    pre = featurize(prefix, prm_torch.cfg, prm_torch.lexer)
    p_pre, _ = prm_torch.step_probs(pre)
    k = len(pre.spans)
    assert [(s.start, s.end) for s in pre.spans] == [(s.start, s.end) for s in full.spans[:k]]
    torch.testing.assert_close(torch.from_numpy(p_pre), torch.from_numpy(p_full[:k]), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("rel", REAL_FILES)
def test_onnx_matches_torch(prm_torch, prm_onnx, rel):
    text = _read(rel)
    feats = featurize(text, prm_torch.cfg, prm_torch.lexer)
    a, wa = prm_torch.step_probs(feats)
    b, wb = prm_onnx.step_probs(feats)
    torch.testing.assert_close(torch.from_numpy(b), torch.from_numpy(a), atol=1e-4, rtol=0)
    torch.testing.assert_close(torch.from_numpy(wb), torch.from_numpy(wa), atol=1e-4, rtol=0)


# ------------------------------------------------------------------------------ scan / rank
@pytest.mark.parametrize("name", sorted(examples()))
def test_every_example_gets_the_verdict_of_its_label(prm_onnx, name):
    r = prm_onnx.scan(examples()[name])
    assert 0.0 <= r.risk <= 1.0 and all(0.0 <= s.score <= 1.0 for s in r.steps)
    assert r.verdict == name.split()[-1].replace("fixed", "safe"), (name, r)
    flagged = [s for s in r.steps if s.driver]
    # every flag names what drove it, with a finding that has a CWE, a family and its ratings
    for s in flagged:
        assert s.findings and all(f.message and f.cwe and f.family for f in s.findings)
        assert all(f.severity in ("low", "medium", "high") for f in s.findings if f.source != "model")
    assert bool(flagged) == (r.verdict == "vulnerable")
    if r.verdict == "vulnerable":  # the example's own family is among the findings
        assert int(name.split()[0][4:]) in {f.family for f in r.findings}


def test_scan_reports_cwe_findings_on_the_right_step(prm_onnx):
    code = ("import subprocess\n\n\ndef run(host):\n    cmd = 'ping -c 1 ' + host\n"
            "    return subprocess.check_output(cmd, shell=True)\n")
    r = prm_onnx.scan(code)
    assert r.verdict == "vulnerable"
    hits = [(s.start_line, s.end_line, f.cwe, f.line) for s in r.steps for f in s.findings]
    assert any(cwe == 78 and line == 6 and a <= 6 <= b for a, b, cwe, line in hits)
    assert r.drivers and r.steps[r.drivers[0]].start_line <= 6 <= r.steps[r.drivers[0]].end_line
    d = json.loads(r.to_json())
    assert d["verdict"] == "vulnerable" and d["steps"][-1]["findings"][0]["cwe"] == "CWE-78"


def test_partial_code_flag_controls_syntax_error_report(prm_onnx):
    code = "import os\n\ndef f(x):\n    os.system('rm ' + x\n"
    assert prm_onnx.scan(code, partial=True).syntax_error is None
    assert "line" in prm_onnx.scan(code, partial=False).syntax_error


@pytest.mark.parametrize("bad,exc", [("", EmptyCode), ("   \n\n", EmptyCode), (None, InputError), (b"x=1", InputError),
                                     ("x\x00y", InputError), ("x = 1\n" * 20001, CodeTooLarge)])
def test_scan_rejects_bad_input_with_typed_errors(prm_onnx, bad, exc):
    with pytest.raises(exc):
        prm_onnx.scan(bad)


def test_scan_never_executes_user_code(prm_onnx, tmp_path):
    marker = tmp_path / "executed"
    code = f"open({str(marker)!r}, 'w').write('x')\nimport os\nos.system('touch {marker}')\n"
    prm_onnx.scan(code)
    assert not marker.exists()


def test_rank_prefers_secure_continuation_by_topk_safe_ratio_then_softmin(prm_onnx):
    from engines.codeprm.aggregation import softmin_safety, topk_safe_ratio

    prefix = "import subprocess\nfrom flask import request\n\n\ndef archive():\n    name = request.args.get('name')\n"
    bad = "    return subprocess.check_output('tar czf out.tgz ' + name, shell=True)"
    good = "    return subprocess.check_output(['tar', 'czf', 'out.tgz', name])"
    ranked = prm_onnx.rank(prefix, [bad, good])
    assert ranked[0]["candidate"] == good and ranked[0]["rank"] == 1
    # the candidate's own steps (after the prefix) give its scores: exactly the scan's step scores
    code = prefix + good + "\n"
    scan = prm_onnx.scan(code)
    own = [s for s in scan.steps if s.end_line > prefix.count("\n")]
    s = np.array([x.score for x in own])
    assert ranked[0]["reward"] == pytest.approx(softmin_safety(s, prm_onnx.cfg.tau), rel=1e-9)
    assert ranked[0]["topk_safe_ratio"] == topk_safe_ratio(s, prm_onnx.cfg.top_k, 1 - FLAG_LEVEL)
    keys = [(not d["parses"], -d["topk_safe_ratio"], -d["reward"]) for d in ranked]
    assert keys == sorted(keys)
    with pytest.raises(InputError):
        prm_onnx.rank(prefix, [])
    with pytest.raises(InputError):
        prm_onnx.rank(prefix, ["  "])


# ------------------------------------------------------------------------------ SARIF + CLI
def _check_sarif(log: dict, n_lines: dict[str, int]) -> None:
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("none", "note", "warning", "error")
        assert res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        assert 1 <= loc["region"]["startLine"] <= n_lines[loc["artifactLocation"]["uri"]]


def test_sarif_export_structure(prm_onnx):
    ex = examples()
    scans = [prm_onnx.scan(ex["CWE-89 vulnerable"], path="a.py"), prm_onnx.scan(ex["CWE-502 vulnerable"], path="b.py")]
    log = to_sarif(scans)
    _check_sarif(log, {"a.py": scans[0].n_lines, "b.py": scans[1].n_lines})
    assert {"CWE-89", "CWE-502"} <= {r["ruleId"] for r in log["runs"][0]["results"]}
    json.dumps(log)


@pytest.mark.slow
def test_cli_scans_a_folder_and_writes_sarif_without_running_code(tmp_path):
    ex = examples()
    src = tmp_path / "src"
    src.mkdir()
    marker = tmp_path / "ran"
    (src / "bad.py").write_text(ex["CWE-94 vulnerable"] + f"\nopen({str(marker)!r}, 'w')\n")
    (src / "good.py").write_text(ex["CWE-94 fixed"])
    (src / "broken.py").write_text("def f(:\n")
    out = tmp_path / "out.sarif"
    # the installed package runs from any folder (no path set up by hand)
    proc = subprocess.run([sys.executable, "-m", "engines.codeprm", "scan", str(src), "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "bad.py: vulnerable" in proc.stdout and "good.py: safe" in proc.stdout
    assert "broken.py" in proc.stdout
    log = json.loads(out.read_text())
    n = {str(p.as_posix()): len(split_lines(p.read_text())) for p in src.glob("*.py")}
    _check_sarif(log, n)
    assert not marker.exists()


# ------------------------------------------------------------------------------ fusion + vocabulary
def test_an_analyser_finding_flags_its_step_and_the_model_orders_steps(prm_onnx):
    code = "import pickle\n\n\ndef load(blob):\n    return pickle.loads(blob)\n\n\nx = 1\n"
    feats = featurize(code, prm_onnx.cfg, prm_onnx.lexer)
    p, _ = prm_onnx.step_probs(feats)
    found = prm_onnx.analyse([code])[0]
    flagged = analyser_flags(feats.spans, found)
    assert flagged.tolist() == [False, True, False]
    w = prm_onnx.cfg.model_weight
    r = prm_onnx.scan(code)
    model_flag = np.array([s.driver == "model" for s in r.steps])
    want = np.where(flagged, ANALYSER_LEVEL + (1 - ANALYSER_LEVEL) * w * p,
                    np.where(model_flag, FLAG_LEVEL + MODEL_SPAN * p, (FLAG_LEVEL - 0.01) * w * p))
    np.testing.assert_allclose([s.risk for s in r.steps], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose([1 - s.model_score for s in r.steps], p, rtol=1e-9, atol=1e-12)
    assert r.verdict == "vulnerable" and r.steps[1].driver.startswith("analysers")


@pytest.mark.parametrize("seed", range(5))
def test_fused_order_never_contradicts_the_analysers(seed):
    """Random model risks and findings: analyser-flagged steps always sit above the others, and
    within a level the model's order is kept."""
    rng = np.random.default_rng(seed)
    n = 60
    lines = [f"x{i} = f({i})" for i in range(n)]
    spans = [Span(i + 1, i + 1) for i in range(n)]
    m = rng.random(n)
    found = [Finding(i + 1, 78, "bandit:B602", "", "bandit", "low", "high") for i in range(n) if rng.random() < 0.3]
    for w in (0.0, 0.5, 1.0):
        sc = score_steps(lines, spans, m, found, PRMConfig(model_weight=w), True, set(range(1, n + 1)))
        fl = sc.by_analysers
        assert fl.sum() == len(found)
        assert sc.risks[fl].min() > sc.risks[~fl].max()
        assert np.all(np.diff(sc.risks[fl][np.argsort(m[fl])]) >= 0)
        assert np.all(np.diff(sc.risks[~fl][np.argsort(m[~fl])]) >= 0)


def test_model_alone_mode_uses_its_own_threshold():
    cal = json.loads((REPO / "assets" / "codeprm" / "calibration.json").read_text())
    solo = CodePRM.load("onnx", fuse_analysers=False)
    fused = CodePRM.load("onnx")
    assert solo.cfg.solo_threshold == pytest.approx(cal["model"]["threshold"])
    assert fused.cfg.prefix_flag_threshold == pytest.approx(cal["fused"]["prefix_flag_threshold"])
    code = examples()["CWE-798 vulnerable"]
    np.testing.assert_allclose(solo.file_risk(code), solo.file_risk(code, fuse=False))
    assert not [f for f in solo.scan(code).findings if f.source != "model"]  # no analyser ran


def test_unknown_tokens_map_to_unk_and_unknown_parts_drop():
    vocab = {"NL": 3, "IND0": 4, "=": 5, "p:secret": 6}
    ids, _, parts = Lexer(64, vocab).lex_parts("api_secret = load()\n")
    assert ids.tolist() == [4, 1, 5, 1, 1, 1, 3]
    assert parts[1].tolist() == [6, 0, 0] and not parts[2:].any()
    assert PRMConfig().vocab_size > max(CodePRM.load("onnx").vocab.values())


# ------------------------------------------------------------------------------ input and request caps
@pytest.mark.parametrize("code", ['"""Only a docstring: still a Python module."""\n', "\ufeffimport os\nx = 1\n",
                                  "\ufeff'''doc'''\n", "# just a comment\npass\n"])
def test_whatever_ast_parse_accepts_is_python(prm_onnx, code):
    r = prm_onnx.scan(code)
    assert r.verdict == "safe" and r.syntax_error is None


def test_a_bom_file_keeps_its_findings_and_line_numbers(prm_onnx):
    r = prm_onnx.scan("\ufeffimport os\nos.system('ls ' + input())\n")
    assert r.verdict == "vulnerable" and {f.line for f in r.findings if f.source == "bandit"} == {2}


@pytest.mark.parametrize("code,word", [("x = [" + "1, " * 200_000 + "]\n", "characters per line"),
                                       ("x = 1\n" * 20_001, "lines per request")])
def test_request_caps_name_the_limit(prm_onnx, code, word):
    with pytest.raises(CodeTooLarge, match=word):
        prm_onnx.scan(code)


def test_rank_caps_the_prefix_times_candidates_with_a_message(prm_onnx):
    prefix = "x = 1\n" * 12_000
    with pytest.raises(CodeTooLarge, match="lines per request"):
        prm_onnx.rank(prefix, ["y = 2", "z = 3"])


JSON_LOADER = '''import json
from pathlib import Path


def load_config(path):
    """Read the app's JSON settings file."""
    with Path(path).open(encoding="utf-8") as fh:
        return json.load(fh)
'''


@pytest.mark.parametrize("rel", [None, "json/decoder.py", "shlex.py", "tempfile.py", "subprocess.py"])
def test_a_verdict_is_vulnerable_exactly_when_a_step_names_what_flagged_it(prm_onnx, rel):
    code = JSON_LOADER if rel is None else _read(rel)
    r = prm_onnx.scan(code)
    flagged = [s for s in r.steps if s.driver]
    assert (r.verdict == "vulnerable") == bool(flagged)
    for s in flagged:
        assert s.findings, s
        assert {f.source for f in s.findings} & (set(ANALYSERS) if "analysers" in s.driver else {"model"})


def test_lexer_id_cache_is_bounded():
    """The lexer's id cache keeps short token strings only, and no more than its entry cap: a
    megabyte-long identifier or a flood of distinct names does not stay in a server's memory."""
    from engines.codeprm import tokens

    lexer = tokens.Lexer()
    long_name = "a" * 100_000
    ids, _ = lexer.lex(f"{long_name} = 1\nshort_name = 2\n")
    again, _ = lexer.lex(f"{long_name} = 1\nshort_name = 2\n")
    assert ids.tolist() == again.tolist()  # the same ids, cached or not
    assert long_name not in lexer._cache and "short_name" in lexer._cache
    assert max(map(len, lexer._cache)) <= tokens.CACHE_CHARS
    lexer._cache.update({f"n{i}": 5 for i in range(tokens.CACHE_ENTRIES)})
    full = len(lexer._cache)
    lexer.lex("brand_new_name = 3\n")
    assert "brand_new_name" not in lexer._cache and len(lexer._cache) == full


def test_the_sampler_cuts_by_the_rankers_parse_rule(prm_onnx):
    """Issue #48 item 6: the sampler judged a continuation by compiling it as written, the ranker after
    expanding tabs as Python's reader does; a tab-indented sample was dropped as unparseable that the
    ranker parses. Both now read the code the same way."""
    from engines.codeprm.sampling import cut_at_statement

    prefix = "def f(name):\n        y = 1\n"
    cut, ok = cut_at_statement(prefix, "\tif name:\n\t\treturn name, len(name)\nprint(")
    assert ok and cut == "\tif name:\n\t\treturn name, len(name)"
    ranked = prm_onnx.rank(prefix, [cut])
    assert ranked[0]["parses"]
