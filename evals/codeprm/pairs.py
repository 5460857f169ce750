"""Real vulnerability-fix pairs (data/codeprm/fix_pairs.jsonl): one record per function that a
fix commit changed, with the vulnerable (before) and fixed (after) source and the split of its
repository (train / dev / test; test repositories are never trained on)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from engines.common.paths import REPO_ROOT

PAIRS_PATH = REPO_ROOT / "data" / "codeprm" / "fix_pairs.jsonl"
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class FixPair:
    uid: str
    repo: str
    split: str
    before: str
    after: str
    cwe: str
    advisory: str
    file: str
    function: str
    vul_lines: tuple[int, ...] = ()  # lines of ``before`` the fix removed or changed (from the git diff)
    fix_lines: tuple[int, ...] = ()  # lines of ``after`` the fix added or changed


def _pick(r: dict, *names: str, default=""):
    for n in names:
        if n in r and r[n] is not None:
            return r[n]
    return default


def load_pairs(path: Path = PAIRS_PATH, splits: tuple[str, ...] = SPLITS) -> list[FixPair]:
    """The pairs of ``splits`` whose two versions differ and are not empty (a partly written last
    line of a growing file is skipped)."""
    out = []
    for line in open(path):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        before = _pick(r, "before", "vulnerable", "vuln_code", "code_before")
        after = _pick(r, "after", "fixed", "fixed_code", "code_after")
        split = _pick(r, "split")
        if not before.strip() or not after.strip() or before == after or split not in splits:
            continue
        cwe = _pick(r, "cwe", "cwes", default="")
        if isinstance(cwe, (list, tuple)):
            cwe = cwe[0] if cwe else ""
        uid = str(_pick(r, "id", "uid", default="")) or \
            f"{_pick(r, 'advisory')}|{_pick(r, 'commit')}|{_pick(r, 'file')}|{_pick(r, 'function')}"
        out.append(FixPair(uid, _pick(r, "repo"), split, before, after, str(cwe or ""), _pick(r, "advisory"),
                           _pick(r, "file"), _pick(r, "function"), tuple(r.get("vulnerable_lines") or ()),
                           tuple(r.get("fix_lines") or ())))
    return out
