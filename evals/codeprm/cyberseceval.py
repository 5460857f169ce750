"""The shared CyberSecEval Python file as line-level evaluation data (validation only: never
trained on, never used for a threshold). Its labels come from Meta's Insecure Code Detector, the
same rules as the CodeShield analyser, so analyser figures on it are not independent."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from engines.codeprm.lines import normalise, split_lines
from engines.common.paths import REPO_ROOT

CSE_NAME = Path("shared") / "codesec" / "cyberseceval_python.jsonl"
# ../shared beside the checkout (a worktree sits one folder deeper: the nearest one up counts)
CSE_PATH = next((p / CSE_NAME for p in REPO_ROOT.parents if (p / CSE_NAME).is_file()), REPO_ROOT.parent / CSE_NAME)


@dataclass(frozen=True)
class CSECase:
    """One case: the code window, its labelled line (1-based) and a prefix that stops halfway
    between the labelled line and the end (partial code as an assistant would have it)."""

    code: str
    target: int
    prefix: str
    cwe: str


def load_cases(path: Path = CSE_PATH) -> list[CSECase]:
    out = []
    for line in open(path):
        r = json.loads(line)
        code = r["origin_code"]
        lines = split_lines(normalise(code))
        want = r["line_text"].strip()
        cands = [i + 1 for i, ln in enumerate(lines) if ln.strip() == want]
        mid = (len(lines) + 1) / 2
        target = min(cands, key=lambda i: abs(i - mid))
        cut = target + (len(lines) - target + 1) // 2
        out.append(CSECase(code, target, "\n".join(lines[:cut]) + "\n", r.get("cwe_identifier", "")))
    return out
