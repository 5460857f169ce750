"""SARIF 2.1.0 export of scans (one run, one result per finding).

Artifact locations are RFC 3986 URI references (``my file.py`` is ``my%20file.py``); a taint
finding carries its flow from source to sink as a ``codeFlows`` entry; what an analyser could not
read in a file is an ``invocations[0].toolExecutionNotifications`` entry on that file.
"""
from __future__ import annotations

import urllib.parse

from engines.codeprm.cwe import named, title

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SEVERITY_LEVEL = {"high": "error", "medium": "warning", "low": "note"}


def uri(path: str) -> str:
    """A file path as an RFC 3986 URI reference (relative paths stay relative).

    >>> uri("app/my file.py"), uri("/srv/café.py")
    ('app/my%20file.py', '/srv/caf%C3%A9.py')
    """
    return urllib.parse.quote(path.replace("\\", "/").encode("utf-8", "surrogateescape"), safe="/-._~")


def _level(f, step) -> str:
    """The analyser's own severity where it gives one; a model flag is a warning; a finding on
    a step that is not flagged is a note."""
    if not step.driver:
        return "note"
    return _SEVERITY_LEVEL.get(f.severity, "warning")


def _location(scan, line: int, message: str | None = None) -> dict:
    loc = {"physicalLocation": {"artifactLocation": {"uri": uri(scan.path)},
                                "region": {"startLine": max(1, line), "endLine": max(1, line)}}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _code_flow(scan, f) -> list[dict]:
    t = f.trace
    source = f"`{t.variable}` from {t.source}" if t.variable else t.source
    steps = [{"location": _location(scan, t.source_line, f"user input: {source}")},
             {"location": _location(scan, t.sink_line, f"reaches `{t.sink}`")}]
    return [{"message": {"text": t.explain()}, "threadFlows": [{"locations": steps}]}]


def _notifications(scans: list) -> list[dict]:
    out = []
    for scan in scans:
        for fail in scan.failures:
            out.append({"level": "error", "message": {"text": f"{fail.analyser} could not read all of this file: "
                                                              f"{fail.reason}"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(scan.path)}}}],
                        "descriptor": {"id": f"analyser-failed/{fail.analyser}"}})
        if scan.syntax_error and not scan.partial:
            out.append({"level": "warning",
                        "message": {"text": f"the file does not parse ({scan.syntax_error}); it was scanned as a "
                                            "prefix would be, the analysers reading a repaired copy"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(scan.path)}}}],
                        "descriptor": {"id": "syntax-error"}})
    return out


def to_sarif(scans: list) -> dict:
    """A SARIF 2.1.0 log for ``scans`` (ScanResult objects); rules are CWEs.

    >>> to_sarif([])["version"]
    '2.1.0'
    """
    rules: dict[str, dict] = {}
    results = []
    for scan in scans:
        for step in scan.steps:
            for f in step.findings:
                cwe = named(f.cwe, f.family) if f.family else f.cwe
                rid = f"CWE-{cwe}" if cwe else "CODEPRM-RISK"
                if rid not in rules:
                    rules[rid] = {
                        "id": rid,
                        "name": rid.replace("-", ""),
                        "shortDescription": {"text": title(cwe) if cwe else "Step scored as risky by the model"},
                        "helpUri": f"https://cwe.mitre.org/data/definitions/{cwe}.html" if cwe else
                        "https://arxiv.org/abs/2602.10418",
                        "properties": {"tags": ["security"] + ([f"external/cwe/cwe-{cwe}"] if cwe else [])},
                    }
                loc = _location(scan, f.line)
                loc["physicalLocation"]["contextRegion"] = {"startLine": step.start_line, "endLine": step.end_line}
                res = {
                    "ruleId": rid,
                    "ruleIndex": list(rules).index(rid),
                    "level": _level(f, step),
                    "message": {"text": f"{f.explanation} [{f.rule}]"},
                    "locations": [loc],
                    "properties": {"stepIndex": step.index, "stepScore": round(step.score, 6),
                                   "stepRisk": round(step.risk, 6), "source": f.source,
                                   "driver": step.driver, "severity": f.severity, "confidence": f.confidence,
                                   "cwe": f"CWE-{f.cwe}" if f.cwe else "",
                                   "family": f"CWE-{f.family}" if f.family else ""},
                }
                if f.trace:
                    res["codeFlows"] = _code_flow(scan, f)
                results.append(res)
    notes = _notifications(scans)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "codeprm", "informationUri": "https://arxiv.org/abs/2602.10418",
                                "version": "0.1.0", "rules": list(rules.values())}},
            "invocations": [{"executionSuccessful": not any(n["level"] == "error" for n in notes),
                             "toolExecutionNotifications": notes}],
            "results": results,
            "properties": {"files": [{"uri": uri(s.path), "verdict": s.verdict, "risk": round(s.risk, 6),
                                      "threshold": round(s.threshold, 6),
                                      "failures": [f.to_dict() for f in s.failures]} for s in scans]},
        }],
    }
