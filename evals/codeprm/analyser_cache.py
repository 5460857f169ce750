"""Disk cache of analyser findings (bandit, CodeShield/semgrep, and the hand rules + taint
labeller) per piece of code, so training and benchmarks run each analyser once per function."""
from __future__ import annotations

import json
from pathlib import Path

from engines.codeprm.analysers import run_analysers
from engines.codeprm.findings import Finding
from engines.codeprm.labels import label_findings
from engines.common.paths import REPO_ROOT
from evals.codeprm.lm_cache import code_key

CACHE = REPO_ROOT / "data" / "codeprm" / "analysers"
SOURCES = ("bandit", "codeshield", "hand")


def findings(codes: list[str], batch: int = 64) -> list[dict[str, list[Finding]]]:
    """{source: findings} for each piece of code; "hand" = the project's own rules and taint
    labeller (``labels.label_findings`` minus its bandit part)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out: list[dict | None] = [None] * len(codes)
    todo = []
    for i, c in enumerate(codes):
        p = CACHE / f"{code_key(c)}.json"
        if p.is_file():
            d = json.loads(p.read_text())
            out[i] = {k: [Finding(**f) for f in v] for k, v in d.items()}
        else:
            todo.append(i)
    for a in range(0, len(todo), batch):
        idx = todo[a:a + batch]
        res = run_analysers([codes[i] for i in idx])
        for i, fs in zip(idx, res):
            try:
                hand = [f for f in label_findings(codes[i]) if f.source not in ("bandit",)]
            except (RecursionError, ValueError, SyntaxError):
                hand = []
            d = {"bandit": [f for f in fs if f.source == "bandit"],
                 "codeshield": [f for f in fs if f.source == "codeshield"], "hand": hand}
            out[i] = d
            (CACHE / f"{code_key(codes[i])}.json").write_text(json.dumps(
                {k: [vars(f) if not hasattr(f, "__dataclass_fields__") else
                     {x: getattr(f, x) for x in f.__dataclass_fields__} for f in v] for k, v in d.items()}))
    return out  # type: ignore[return-value]
