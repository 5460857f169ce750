"""A flagged step names the weakness it holds (the finding that drives it, not some other
analyser's CWE), a taint finding is explained as a source -> sink flow in the scan, the tab, SARIF
``codeFlows`` and MCP, and the tab reads everything from ``ScanResult`` (no engine internals)."""
from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest

from engines.codeprm import CodePRM, examples, to_sarif

ROOT = Path(__file__).resolve().parents[1]
SSRF = '''import requests
from flask import Flask, request

app = Flask(__name__)


@app.route("/fetch", methods=["POST"])
def fetch():
    url = request.form["url"]
    headers = {"User-Agent": "preview"}

    resp = requests.get(url, headers=headers, timeout=5)
    return resp.text
'''


@pytest.fixture(scope="module")
def prm() -> CodePRM:
    return CodePRM.load("onnx")


@pytest.mark.parametrize("name,cwe", [("CWE-918 vulnerable", "CWE-918"), ("CWE-79 vulnerable", "CWE-79"),
                                      ("CWE-94 vulnerable", "CWE-94")])
def test_the_verdict_names_the_weakness_the_step_holds(prm, name, cwe):
    r = prm.scan(examples()[name])
    lead = r.steps[r.drivers[0]]
    assert lead.driver and lead.weakness_dict()["cwe"] == cwe
    from demos.codeprm import _verdict_md

    scan = r.to_dict()
    assert f"{cwe}:" in _verdict_md(scan)


def test_a_taint_finding_is_explained_in_the_scan_the_tab_and_sarif(prm):
    r = prm.scan(SSRF, path="app/my views.py")
    f = next(f for f in r.findings if f.source == "taint")
    words = "`url` comes from `request.form` (line 9) and reaches `requests.get` (line 12)"
    assert f.trace.explain() == words and f.line == 12
    step = next(s for s in r.steps if f in s.findings)
    assert step.weakness is f and step.weakness_dict()["cwe"] == "CWE-918"
    from demos.codeprm import _verdict_md

    assert words in _verdict_md(r.to_dict())
    res = next(x for x in to_sarif([r])["runs"][0]["results"] if "codeFlows" in x)
    flow = res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [loc["location"]["physicalLocation"]["region"]["startLine"] for loc in flow] == [9, 12]
    assert flow[0]["location"]["physicalLocation"]["artifactLocation"]["uri"] == "app/my%20views.py"


def test_mcp_code_scan_carries_the_weakness_the_flow_and_failures():
    from server import mcp_tools

    out = json.loads(mcp_tools.code_scan(SSRF))
    assert out["verdict"] == "vulnerable" and out["failures"] == []
    assert any(s["weakness"]["cwe"] == "CWE-918" for s in out["flagged_steps"])
    assert any(f["trace"] and "reaches `requests.get`" in f["explanation"] for f in out["findings"])
    from engines.codeprm import default_prm

    assert out == json.loads(json.dumps(default_prm().scan(SSRF).brief_dict()))  # the tool answers the engine's own form
    assert "def code_scan" in inspect.getsource(mcp_tools) and "brief_dict()" in inspect.getsource(mcp_tools.code_scan)


def test_the_tab_imports_no_engine_internals():
    tree = ast.parse((ROOT / "demos" / "codeprm.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {m for m in mods if m.startswith("engines.codeprm.")}, mods
