"""SARIF 2.1.0 export of scans (one run, one result per finding)."""
from __future__ import annotations

from engines.codeprm.cwe import title

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SEVERITY_LEVEL = {"high": "error", "medium": "warning", "low": "note"}


def _level(f, step) -> str:
    """The analyser's own severity where it gives one; a model flag is a warning; a finding on
    a step that is not flagged is a note."""
    if not step.driver:
        return "note"
    return _SEVERITY_LEVEL.get(f.severity, "warning")


def to_sarif(scans: list) -> dict:
    """A SARIF 2.1.0 log for ``scans`` (ScanResult objects); rules are CWE families.

    >>> to_sarif([])["version"]
    '2.1.0'
    """
    rules: dict[str, dict] = {}
    results = []
    for scan in scans:
        for step in scan.steps:
            for f in step.findings:
                rid = f"CWE-{f.cwe}" if f.cwe else "CODEPRM-RISK"
                if rid not in rules:
                    rules[rid] = {
                        "id": rid,
                        "name": rid.replace("-", ""),
                        "shortDescription": {"text": title(f.cwe) if f.cwe else "Step scored as risky by the model"},
                        "helpUri": f"https://cwe.mitre.org/data/definitions/{f.cwe}.html" if f.cwe else
                        "https://arxiv.org/abs/2602.10418",
                        "properties": {"tags": ["security"] + ([f"external/cwe/cwe-{f.cwe}"] if f.cwe else [])},
                    }
                results.append({
                    "ruleId": rid,
                    "ruleIndex": list(rules).index(rid),
                    "level": _level(f, step),
                    "message": {"text": f"{f.message} [{f.rule}]"},
                    "locations": [{"physicalLocation": {
                        "artifactLocation": {"uri": scan.path},
                        "region": {"startLine": f.line, "endLine": f.line},
                        "contextRegion": {"startLine": step.start_line, "endLine": step.end_line},
                    }}],
                    "properties": {"stepIndex": step.index, "stepScore": round(step.score, 6),
                                   "stepRisk": round(step.risk, 6), "source": f.source,
                                   "driver": step.driver, "severity": f.severity, "confidence": f.confidence,
                                   "family": f"CWE-{f.family}" if f.family else ""},
                })
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "codeprm", "informationUri": "https://arxiv.org/abs/2602.10418",
                                "version": "0.1.0", "rules": list(rules.values())}},
            "results": results,
            "properties": {"files": [{"uri": s.path, "verdict": s.verdict, "risk": round(s.risk, 6),
                                      "threshold": round(s.threshold, 6)} for s in scans]},
        }],
    }
