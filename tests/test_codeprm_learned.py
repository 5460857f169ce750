"""codeprm's learned parts: the paper's soft-min aggregation, analysers off = model alone,
non-Python refused, the CodeShield/semgrep analyser, fast-path ONNX/torch parity, the LM-backed
scorer (causal step features, committed head), fix-pair step labels on real pairs."""
from __future__ import annotations

import json
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from engines.codeprm import CodePRM, NotPython
from engines.codeprm.aggregation import softmin_safety, softmin_weights, topk_safe_ratio
from engines.codeprm.analysers import codeshield_findings, run_analysers
from engines.codeprm.features import featurize
from engines.codeprm.sampling import cut_at_statement
from engines.codeprm.steps import split_steps
from engines.common.errors import InputError, ShowcaseError
from evals.codeprm.step_labels import changed_lines, risky_steps

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "assets" / "codeprm"
STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module")
def prm_onnx() -> CodePRM:
    return CodePRM.load("onnx", fuse_analysers=False)


# ------------------------------------------------------------------------------ aggregation
@pytest.mark.parametrize("seed", range(6))
def test_softmin_tends_to_min_and_lies_between_min_and_mean(seed):
    s = np.random.default_rng(seed).random(int(np.random.default_rng(seed).integers(1, 30)))
    for tau in (0.01, 0.1, 1.0, 10.0):
        v = softmin_safety(s, tau)
        assert s.min() - 1e-12 <= v <= s.mean() + 1e-12
    assert softmin_safety(s, 1e-4) == pytest.approx(s.min(), abs=1e-3)
    assert softmin_safety(s, 1e4) == pytest.approx(s.mean(), abs=1e-3)


@pytest.mark.parametrize("seed", range(4))
def test_softmin_is_permutation_invariant_and_is_the_papers_formula(seed):
    rng = np.random.default_rng(seed)
    s = rng.random(12)
    perm = rng.permutation(12)
    assert softmin_safety(s[perm]) == pytest.approx(softmin_safety(s), rel=1e-12)
    w = np.exp(-s / 0.1) / np.exp(-s / 0.1).sum()  # sum_i softmax(-s/T)_i s_i, T = 0.1
    assert softmin_safety(s) == pytest.approx(float((w * s).sum()), rel=1e-12)
    np.testing.assert_allclose(softmin_weights(s), w, rtol=1e-12)


def test_topk_safe_ratio_counts_safe_steps_among_the_k_least_safe():
    assert topk_safe_ratio([0.9, 0.95, 0.99], k=2) == 1.0
    assert topk_safe_ratio([0.9, 0.1, 0.99, 0.3], k=3) == pytest.approx(1 / 3)
    assert topk_safe_ratio([0.2], k=3) == 0.0
    with pytest.raises(ValueError):
        topk_safe_ratio([0.5], k=0)


# ------------------------------------------------------------------------------ analysers
def test_codeshield_semgrep_rules_find_known_patterns():
    codes = ["import os\n\n\ndef clean(path):\n    os.system('rm -rf ' + path)\n",
             "def q(cur, name):\n    cur.execute(\"SELECT * FROM users WHERE name = '%s'\" % name)\n",
             "import hashlib\nh = hashlib.md5(data).hexdigest()\n",
             "def q(cur, name):\n    cur.execute('SELECT * FROM users WHERE name = ?', (name,))\n"]
    res = codeshield_findings(codes)
    assert (5, 78) in {(f.line, f.cwe) for f in res[0]}
    assert (2, 89) in {(f.line, f.cwe) for f in res[1]}
    assert (2, 328) in {(f.line, f.cwe) for f in res[2]}
    assert res[3] == []  # a parameterised query is not flagged
    assert all(f.source == "codeshield" and f.rule.startswith("codeshield:") for fs in res for f in fs)


def test_run_analysers_merges_bandit_and_codeshield():
    (fs,) = run_analysers(["import pickle\n\n\ndef load(blob):\n    return pickle.loads(blob)\n"])
    assert {(f.line, f.cwe, f.source) for f in fs} >= {(5, 502, "bandit"), (5, 502, "codeshield")}
    with pytest.raises(ValueError):
        run_analysers(["x = 1\n"], ("nope",))


# ------------------------------------------------------------------------------ engine
def test_analysers_off_means_the_model_alone(prm_onnx):
    code = "import pickle\n\n\ndef load(blob):\n    return pickle.loads(blob)\n"
    r = prm_onnx.scan(code, analysers=False)
    assert not any(f.source in ("bandit", "codeshield", "taint", "rule") for f in r.findings)
    feats = featurize(code, prm_onnx.cfg, prm_onnx.lexer)
    p, _ = prm_onnx.step_probs(feats)
    np.testing.assert_allclose([1 - s.model_score for s in r.steps], p, rtol=1e-9, atol=1e-12)
    # the model's own order: a riskier model step is a riskier step
    order = np.argsort(p)
    assert np.all(np.diff(np.array([s.risk for s in r.steps])[order]) >= 0)
    # a model that calls every step safe gives a safe verdict with the analysers off, even on pickle.loads
    muted = prm_onnx.with_config()
    muted.step_probs = lambda f: (np.zeros(len(f.spans)), np.ones((len(f.spans), f.gidx.shape[1])))
    assert muted.scan(code, analysers=False).verdict == "safe"
    fused = muted.with_config(fuse_analysers=True, model_weight=1.0)
    fused.step_probs = muted.step_probs
    assert fused.scan(code).verdict == "vulnerable"
    assert fused.scan(code, analysers=False).verdict == "safe"


@pytest.mark.parametrize("text", ["Hello, could you please tell me how my code looks?",
                                  "int main(void) {\n  printf(\"hi\\n\");\n  return 0;\n}\n",
                                  "function f(x) {\n  const y = x + 1;\n  return y;\n}\n",
                                  "# Notes\n\nThe meeting is at noon.\nBring the slides.\n"])
def test_non_python_text_is_refused_with_a_typed_error(prm_onnx, text):
    with pytest.raises(NotPython, match="does not look like Python"):
        prm_onnx.scan(text)


def test_broken_or_partial_python_is_still_scanned(prm_onnx):
    assert prm_onnx.scan("def f(:\n    eval(x)\n").syntax_error
    r = prm_onnx.scan("import os\n\ndef f(x):\n    os.system('rm ' + x\n", partial=True)
    assert r.syntax_error is None and len(r.steps) == 2


def test_rank_puts_unparseable_candidates_last(prm_onnx):
    prefix = "import subprocess\n\n\ndef archive(name):\n"
    ranked = prm_onnx.rank(prefix, ["    return subprocess.check_output(['tar', 'czf', 'o.tgz', name]",
                                     "    return subprocess.check_output(['tar', 'czf', 'o.tgz', name])"])
    assert [d["parses"] for d in ranked] == [True, False] and ranked[0]["index"] == 1
    assert all(0.0 <= d["topk_safe_ratio"] <= 1.0 and 0.0 <= d["reward"] <= 1.0 for d in ranked)


def test_sampled_continuations_are_cut_at_a_statement_boundary():
    assert cut_at_statement("def f(x):\n", "    y = x + 1\n    return y\nprint(f(") == ("    y = x + 1\n    return y", True)
    assert cut_at_statement("x = [\n", "1, 2,\n3") == ("1, 2,", False)


def test_onnx_matches_torch_on_real_code_at_1e_4():
    a, b = CodePRM.load("torch"), CodePRM.load("onnx")
    for rel in ("shlex.py", "tempfile.py"):
        text = (STDLIB / rel).read_text()
        feats = featurize(text, a.cfg, a.lexer)
        pa, _ = a.step_probs(feats)
        pb, _ = b.step_probs(feats)
        np.testing.assert_allclose(pb, pa, atol=1e-4, rtol=0)


def test_fast_path_loads_from_committed_assets_and_missing_assets_fail(tmp_path):
    for name in ("model.onnx", "model.safetensors", "config.json", "calibration.json", "vocab.json"):
        assert (ASSETS / name).is_file(), f"committed asset missing: {name}"
    cal = json.loads((ASSETS / "calibration.json").read_text())
    assert CodePRM.load("onnx", fuse_analysers=False).cfg.solo_threshold == pytest.approx(cal["model"]["threshold"])
    with pytest.raises(ShowcaseError):
        CodePRM.load("onnx", asset_dir=tmp_path)
    shutil.copy(ASSETS / "config.json", tmp_path / "config.json")
    shutil.copy(ASSETS / "calibration.json", tmp_path / "calibration.json")
    with pytest.raises(ShowcaseError):
        CodePRM.load("torch", asset_dir=tmp_path)
    with pytest.raises(InputError):
        CodePRM.load("lm", asset_dir=tmp_path)


# ------------------------------------------------------------------------------ fix pairs
# Fix pairs written for these tests in the shape the advisory pipeline extracts (function before
# and after its fix); the real pairs are rebuilt by `python -m evals.codeprm.fix_pairs_build`.
FIX_PAIRS = [
    {"cwe": "CWE-22",
     "before": "def read_upload(root, name):\n    path = os.path.join(root, name)\n\n"
               "    with open(path, 'rb') as fh:\n        return fh.read()\n",
     "after": "def read_upload(root, name):\n    path = os.path.realpath(os.path.join(root, name))\n"
              "    if not path.startswith(os.path.realpath(root) + os.sep):\n"
              "        raise ValueError('path escapes the upload folder')\n\n"
              "    with open(path, 'rb') as fh:\n        return fh.read()\n"},
    {"cwe": "CWE-78",
     "before": "def thumbnail(src, dst):\n    log.info('thumb %s', src)\n\n"
               "    cmd = 'convert %s -resize 64x64 %s' % (src, dst)\n    subprocess.call(cmd, shell=True)\n",
     "after": "def thumbnail(src, dst):\n    log.info('thumb %s', src)\n\n"
              "    subprocess.call(['convert', src, '-resize', '64x64', dst])\n"},
    {"cwe": "CWE-502",
     "before": "def load_settings(text):\n    data = yaml.load(text)\n\n    return Settings(**data)\n",
     "after": "def load_settings(text):\n    data = yaml.safe_load(text)\n\n    return Settings(**data)\n"},
    {"cwe": "CWE-89",
     "before": "def find_user(db, name):\n    cur = db.cursor()\n\n"
               "    cur.execute(\"SELECT * FROM users WHERE name = '%s'\" % name)\n    return cur.fetchone()\n",
     "after": "def find_user(db, name):\n    cur = db.cursor()\n\n"
              "    cur.execute('SELECT * FROM users WHERE name = ?', (name,))\n    return cur.fetchone()\n"},
]


def _fixture() -> list[dict]:
    return FIX_PAIRS


def test_fix_pair_step_labels_mark_the_step_the_fix_changed():
    rows = _fixture()
    for r in rows:
        removed, added, near = changed_lines(r["before"], r["after"])
        assert removed or added
        spans = split_steps(r["before"], 8)
        risky = risky_steps(spans, removed | near)
        assert risky, r["cwe"]
        before = r["before"].splitlines()
        for ln in removed:
            if before[ln - 1].strip():
                assert any(spans[k].start <= ln <= spans[k].end for k in risky)


def test_fast_path_scores_real_fix_pairs(prm_onnx):
    for r in _fixture():
        for code in (r["before"], r["after"]):
            s = prm_onnx.scan(code, analysers=False)
            assert 0.0 <= s.risk <= 1.0 and len(s.steps) == len(split_steps(code, prm_onnx.cfg.max_step_lines))
