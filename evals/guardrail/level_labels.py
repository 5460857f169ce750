"""Merge the three-level labels read by people, measure agreement, write the committed label file.

    .venv/bin/python -m evals.guardrail.level_labels --labels <folder>

Reads, under ``--labels`` (the folder of :mod:`evals.guardrail.level_chunks`):

* ``<chunk>.jsonl`` and ``labels_<chunk>.jsonl``: the items and the first pass, one line per item:
  ``{"id", "level": "safe"|"complies"|"unsafe", "comply_anchor": int|null, "unsafe_anchor": int|null}``;
* ``second_pass_items.jsonl`` and ``second_pass.jsonl``: the independent second pass (same format).

Checks every item has exactly one first-pass label, levels are one of the three words, anchors sit
inside the reply with ``comply_anchor <= unsafe_anchor``, a `complies` label has a comply anchor
and no unsafe anchor, an `unsafe` label has both, a `safe` label neither (a clear error listing the
offending ids otherwise). Reports Cohen's kappa between the passes on the three-way label and per
level (that level against the other two), and anchor agreement (exact, within 2 tokens). Writes
``evals/guardrail/level_labels.jsonl`` (id, level, comply_anchor, unsafe_anchor, pass), first-pass
rows plus second-pass rows, and ``level_agreement.json`` beside it.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from evals.guardrail.labels_v2 import LabelError, cohen_kappa

LEVEL_FILE = Path(__file__).resolve().parent / "level_labels.jsonl"
AGREEMENT_FILE = Path(__file__).resolve().parent / "level_agreement.json"
LEVELS = ("safe", "complies", "unsafe")
NEAR = 2


def multi_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa of two raters' labels over any number of classes.

    >>> multi_kappa(["x", "y", "z"], ["x", "y", "z"])
    1.0
    >>> round(multi_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]), 3)
    0.5
    """
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two label lists of the same, non-zero length")
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    classes = set(a) | set(b)
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in classes)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def check_row(row: dict, n_tokens: int) -> str | None:
    """What is wrong with one label row (None when it is well-formed)."""
    lv, ca, ua = row.get("level"), row.get("comply_anchor"), row.get("unsafe_anchor")
    if lv not in LEVELS:
        return f"level {lv!r} is not one of {LEVELS}"
    for name, a in (("comply_anchor", ca), ("unsafe_anchor", ua)):
        if a is not None and not (isinstance(a, int) and 0 <= a < n_tokens):
            return f"{name} {a!r} is outside the reply (0..{n_tokens - 1})"
    if lv == "safe" and (ca is not None or ua is not None):
        return "a safe reply has no anchors"
    if lv == "complies" and (ca is None or ua is not None):
        return "complies needs comply_anchor and no unsafe_anchor"
    if lv == "unsafe" and (ca is None or ua is None or ca > ua):
        return "unsafe needs comply_anchor <= unsafe_anchor"
    return None


def first_pass(path: Path = LEVEL_FILE) -> dict[str, dict]:
    """id -> first-pass row of a committed label file (``level_labels.jsonl`` or ``content_labels.jsonl``)."""
    return {r["id"]: r for r in _read(path) if r["pass"] == 1}


def _read(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def load_pass(items: dict[str, dict], rows: list[dict], what: str) -> dict[str, dict]:
    """Validate one pass's rows against their items; id -> row."""
    out, bad = {}, []
    for row in rows:
        it = items.get(row.get("id"))
        if it is None:
            bad.append(f"{row.get('id')}: not an item of this folder")
            continue
        if row["id"] in out:
            bad.append(f"{row['id']}: labelled twice")
            continue
        why = check_row(row, len(it["tokens"]))
        if why:
            bad.append(f"{row['id']}: {why}")
        out[row["id"]] = row
    if bad:
        raise LabelError(f"{what}: {len(bad)} bad rows:\n" + "\n".join(bad[:40]))
    return out


def agreement(first: dict[str, dict], second: dict[str, dict]) -> dict:
    """Kappa (three-way and per level) and anchor agreement between two passes on shared ids."""
    ids = sorted(set(first) & set(second))
    a = [first[i]["level"] for i in ids]
    b = [second[i]["level"] for i in ids]
    out = {"items": len(ids), "raw": sum(x == y for x, y in zip(a, b)) / len(ids), "kappa": multi_kappa(a, b),
           "counts_first": {lv: a.count(lv) for lv in LEVELS}, "counts_second": {lv: b.count(lv) for lv in LEVELS},
           "per_level": {}}
    for lv in LEVELS:
        x, y = [int(v == lv) for v in a], [int(v == lv) for v in b]
        out["per_level"][lv] = cohen_kappa(x, y) if 0 < sum(x) + sum(y) < 2 * len(x) else float("nan")
    for name, key in (("comply", "comply_anchor"), ("unsafe", "unsafe_anchor")):
        both = [(first[i][key], second[i][key]) for i in ids if first[i][key] is not None and second[i][key] is not None]
        out[f"{name}_anchor"] = {"both": len(both), "exact": sum(p == q for p, q in both),
                                 "within_2": sum(abs(p - q) <= NEAR for p, q in both)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", type=Path, required=True)
    args = ap.parse_args()
    items: dict[str, dict] = {}
    first_rows: list[dict] = []
    for chunk in sorted(args.labels.glob("*.jsonl")):
        if chunk.name.startswith(("labels_", "second_pass")):
            continue
        chunk_items = {it["id"]: it for it in _read(chunk)}
        items.update(chunk_items)
        lab = chunk.with_name("labels_" + chunk.name)
        if not lab.is_file():
            raise LabelError(f"{lab.name} is missing: every chunk needs its first-pass labels")
        rows = _read(lab)
        missing = sorted(set(chunk_items) - {r.get("id") for r in rows})
        if missing:
            raise LabelError(f"{lab.name}: {len(missing)} items without a label, e.g. {missing[:5]}")
        first_rows += rows
    first = load_pass(items, first_rows, "first pass")
    second = load_pass(items, _read(args.labels / "second_pass.jsonl"), "second pass")
    rep = agreement(first, second)
    print(json.dumps(rep, indent=1))
    with open(LEVEL_FILE, "w") as f:
        for p, rows in ((1, first), (2, second)):
            for i in sorted(rows):
                r = rows[i]
                f.write(json.dumps({"id": i, "level": r["level"], "comply_anchor": r["comply_anchor"],
                                    "unsafe_anchor": r["unsafe_anchor"], "pass": p}) + "\n")
    AGREEMENT_FILE.write_text(json.dumps(rep, indent=1) + "\n")
    counts = {lv: sum(r["level"] == lv for r in first.values()) for lv in LEVELS}
    print(f"wrote {LEVEL_FILE} ({len(first)} first-pass rows: {counts}; {len(second)} second-pass rows)")


if __name__ == "__main__":
    main()
