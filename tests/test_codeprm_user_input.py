"""The token-level user-input marks (``engines/codeprm/user_input.py``): which names hold user
input, read from the tokens alone, in whole and half-written code, both ways (a name assigned from
the request is marked; a constant, a sanitised value or a re-assigned name is not)."""
from __future__ import annotations

import pytest

from engines.codeprm.tokens import Lexer
from engines.codeprm.user_input import LIVE, SOURCE, TAINTED


def marked(code: str, mark: int = TAINTED, partial: bool | None = None) -> list[tuple[int, str]]:
    _, lines, _, marks, texts = Lexer().lex_marks(code, partial)
    return [(int(ln), t) for t, k, ln in zip(texts, marks, lines) if k == mark]


HALF = "@app.route('/fetch', methods=['POST'])\ndef fetch():\n    url = request.form['url']\n    r = requests.get(ur"


def test_a_request_derived_name_is_marked_in_half_written_code():
    assert (3, "url") in marked(HALF)                       # assigned from request.form
    assert [t for _, t in marked(HALF, SOURCE)] == ["request", ".", "form"]
    assert (4, "ur") in marked(HALF)                        # cut short at the end: can only become `url`
    _, _, _, marks, texts = Lexer().lex_marks(HALF)
    assert marks[[k for k, t in enumerate(texts) if t.startswith("\x01")][-1]] == LIVE  # input at hand on line 4


def test_a_constant_is_not_marked():
    code = "def fetch():\n    url = 'https://example.com/api'\n    r = requests.get(ur"
    assert marked(code) == [] and marked(code, SOURCE) == []
    again = "def fetch():\n    url = request.form['url']\n    url = DEFAULT_URL\n    r = requests.get(url"
    assert (4, "url") not in marked(again)                 # re-assigned from a constant: input no longer


@pytest.mark.parametrize("line,holds", [
    ("q = f\"SELECT * FROM t WHERE a = '{name}'\"", True),
    ("q = 'SELECT * FROM t WHERE a = ' + name", True),
    ("q = 'SELECT %s' % name", True),
    ("q = '{}'.format(name)", True),
    ("q = int(name)", False),
    ("q = secure_filename(name)", False),
    ("q = 'SELECT * FROM t'", False),
])
def test_input_is_followed_through_formats_and_stopped_by_sanitizers(line, holds):
    code = f"def view():\n    name = request.args.get('n')\n    {line}\n    cur.execute(q"
    assert ((4, "q") in marked(code)) is holds


def test_route_parameters_tornado_arguments_input_and_helpers():
    route = "@app.get('/items/{name}')\nasync def item(name: str, item_id: int):\n    return open(name"
    assert (2, "name") in marked(route, SOURCE) and (2, "item_id") not in marked(route, SOURCE)
    assert (3, "name") in marked(route)
    tornado = "class H(RequestHandler):\n    def get(self):\n        q = self.get_argument('q')\n        self.write(q)\n"
    assert (4, "q") in marked(tornado)
    local = "x = input()\nos.system('ls ' + x)\n"
    assert (2, "x") in marked(local)
    helper = "def run(cmd):\n    os.system(cmd)\n\n@app.route('/r')\ndef r():\n    run(request.args['c'])\n"
    assert (2, "cmd") in marked(helper)                    # a parameter of a helper called with input


def test_marks_align_with_tokens_and_scopes_end_with_their_function():
    code = "def a():\n    x = request.json\n\ndef b():\n    return x\n"
    ids, lines, parts, marks, texts = Lexer().lex_marks(code)
    assert len(ids) == len(marks) == len(texts) == len(lines)
    assert (5, "x") not in marked(code)                    # b's x is not a's


# ------------------------------------------------------------------------------ the step model's new input
APP = '''from flask import Flask, request
import requests
import sqlite3

app = Flask(__name__)


@app.route("/fetch", methods=["POST"])
def fetch():
    url = request.form["url"]
    target = "http://" + url
    return requests.get(target).text


@app.route("/user")
def user():
    name = request.args.get("name", "")
    cur = sqlite3.connect("db").cursor()
    cur.execute(f"SELECT * FROM users WHERE name = '{name}'")
    return str(cur.fetchall())
'''


def test_a_step_model_with_marks_reads_them_and_onnx_matches_torch(tmp_path):
    """The marks input of the step model (``PRMConfig.user_input``), on a small untrained model
    exported as the training script exports it: torch and ONNX agree, and the marks move the scores."""
    from dataclasses import replace

    import numpy as np
    import torch

    from engines.codeprm.config import PRMConfig
    from engines.codeprm.engine import CodePRM
    from engines.codeprm.features import featurize
    from engines.codeprm.model import StepScorer, export_onnx
    from engines.common.onnx_runtime import ort_session

    cfg = PRMConfig(user_input=True, vocab_size=512)
    torch.manual_seed(0)
    model = StepScorer(cfg).eval()
    export_onnx(model, cfg, tmp_path / "model.onnx")
    a = CodePRM(cfg, "torch", model=model)
    b = CodePRM(cfg, "onnx", session=ort_session(tmp_path / "model.onnx"))
    assert [i.name for i in b.session.get_inputs()] == ["ids", "parts", "marks", "gidx", "last"]
    for code in (APP, APP[: APP.index('"SELECT') + 12]):  # whole, and cut inside a line
        feats = featurize(code, a.cfg, a.lexer)
        assert (feats.marks == TAINTED).any() and (feats.marks == SOURCE).any()
        pa, wa = a.step_probs(feats)
        pb, wb = b.step_probs(feats)
        np.testing.assert_allclose(pb, pa, atol=1e-4, rtol=0)
        np.testing.assert_allclose(wb, wa, atol=1e-4, rtol=0)
        pz, _ = a.step_probs(replace(feats, marks=np.zeros_like(feats.marks)))
        assert np.abs(pz - pa).max() > 1e-3  # the marks move the scores: the input is read


def test_the_shipped_step_model_has_no_marks_input_and_scans_as_it_was_calibrated():
    """The committed model in assets/codeprm was trained without marks: it loads with the marks
    and the wide sink set off (its dev choices were made without them) and reads three inputs."""
    from engines.codeprm.engine import CodePRM

    prm = CodePRM.load("onnx")
    assert not prm.cfg.user_input and not prm.cfg.wide_sinks
    assert [i.name for i in prm.session.get_inputs()] == ["ids", "parts", "gidx", "last"]
    r = prm.scan(APP)
    assert r.verdict == "vulnerable" and r.to_dict()["steps"]
