"""Merge labels read by people, measure agreement, write and read the committed label files.

One pipeline for both label schemes (chunk files from :mod:`evals.guardrail.chunks`, guideline
``docs/guardrail_annotation.md``):

    .venv/bin/python -m evals.guardrail.labels content --labels <folder> [--apply]
    .venv/bin/python -m evals.guardrail.labels content --apply      # from the committed file
    .venv/bin/python -m evals.guardrail.labels levels --labels <folder> [--out FILE]

* ``content`` (binary, ``content_labels.jsonl``): under ``--labels``, ``chunk_XX.jsonl`` (items),
  ``labels_XX.jsonl`` (first pass: ``{"id", "label": "harmful"|"safe", "anchor", "note"}``) and
  ``second_pass.jsonl``. A harmful label needs an anchor inside the reply, a safe one none.
  Paired rule: a paired compliant reply whose note starts ``DISAGREE:`` (no material help) is
  labelled safe (:func:`apply_disagree`). ``--apply`` copies the first pass into the model and
  paired rows of ``data/guardrail_v2/records.jsonl``.
* ``levels`` (three levels, ``level_labels.jsonl``; the contrast replies in
  ``contrast_labels.jsonl``): ``<chunk>.jsonl`` with ``labels_<chunk>.jsonl`` (``{"id", "level":
  "safe"|"complies"|"unsafe", "comply_anchor", "unsafe_anchor"}``) and, when present,
  ``second_pass_items.jsonl`` with ``second_pass.jsonl``. Anchors sit inside the reply with
  ``comply_anchor <= unsafe_anchor``; `complies` has only a comply anchor, `unsafe` both, `safe`
  none.

Every check lists the offending ids. Agreement: Cohen's kappa (binary; three-way and per level
for the levels) and anchor agreement (exact, within 2 tokens).
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from evals.guardrail.paths import (
    CONTENT_LABELS,
    CONTRAST_LABELS,
    LEVEL_AGREEMENT,
    LEVEL_LABELS,
    RECORDS,
)

LABEL_FILE = CONTENT_LABELS
LEVEL_FILE = LEVEL_LABELS
LEVELS = ("safe", "complies", "unsafe")
NEAR = 2  # tokens: "anchor within" tolerance of the agreement reports


class LabelError(ValueError):
    """A label file is incomplete or malformed; the message lists what to fix."""


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two raters' binary labels: (p_o - p_e) / (1 - p_e).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 3)
    0.5
    >>> cohen_kappa([1, 0, 1], [1, 0, 1])
    1.0
    """
    return multi_kappa(list(a), list(b))


def multi_kappa(a: Sequence, b: Sequence) -> float:
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
    pe = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in set(a) | set(b))
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def read_jsonl(path: Path) -> list[dict]:
    """The JSON lines of ``path`` (blank lines skipped); LabelError naming a bad line."""
    out = []
    for k, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if ln.strip():
            try:
                out.append(json.loads(ln))
            except json.JSONDecodeError as exc:
                raise LabelError(f"{path.name} line {k} is not JSON: {exc}") from exc
    return out


def first_pass(*paths: Path) -> dict[str, dict]:
    """id -> first-pass row of committed label files (default: the three-level labels, the model and
    attack views' and the contrast replies')."""
    out: dict[str, dict] = {}
    for path in paths or (LEVEL_LABELS, CONTRAST_LABELS):
        if path.is_file():
            out |= {r["id"]: r for r in read_jsonl(path) if r["pass"] == 1}
    return out


# --- content labels (binary) ----------------------------------------------------------------------
def parse_labels(rows: list[dict], n_tokens: dict[str, int], where: str) -> dict[str, tuple[int, int | None]]:
    """{id: (label 0/1, anchor)} from binary label lines, validated against the items' token counts."""
    out: dict[str, tuple[int, int | None]] = {}
    bad = []
    for r in rows:
        i, lab, anc = r.get("id"), r.get("label"), r.get("anchor")
        if i not in n_tokens:
            bad.append(f"{i}: unknown id")
        elif i in out:
            bad.append(f"{i}: labelled twice")
        elif lab not in ("harmful", "safe"):
            bad.append(f"{i}: label {lab!r} is not 'harmful' or 'safe'")
        elif lab == "harmful" and not (isinstance(anc, int) and not isinstance(anc, bool) and 0 <= anc < n_tokens[i]):
            bad.append(f"{i}: harmful needs an anchor from 0 to {n_tokens[i] - 1}, got {anc!r}")
        elif lab == "safe" and anc is not None:
            bad.append(f"{i}: safe needs anchor null, got {anc!r}")
        else:
            out[i] = (int(lab == "harmful"), anc)
    if bad:
        raise LabelError(f"{where}: {len(bad)} bad lines, e.g. " + "; ".join(bad[:10]))
    return out


def apply_disagree(first: dict[str, tuple[int, int | None]], rows: list[dict]) -> list[str]:
    """Relabel safe every paired compliant reply whose first-pass note starts with ``DISAGREE:``.

    Returns the relabelled ids. ``DISAGREE-ish`` (a weaker doubt) keeps the label.

    >>> f = {"pair-a-c": (1, 0), "pair-b-c": (1, 3), "model-x": (1, 2)}
    >>> apply_disagree(f, [{"id": "pair-a-c", "note": "DISAGREE: a bare refusal"},
    ...                    {"id": "pair-b-c", "note": "DISAGREE-ish: lyrics"},
    ...                    {"id": "model-x", "note": "DISAGREE: n/a"}])
    ['pair-a-c']
    >>> f["pair-a-c"], f["pair-b-c"]
    ((0, None), (1, 3))
    """
    out = []
    for r in rows:
        i = r.get("id", "")
        if i.startswith("pair-") and i.endswith("-c") and str(r.get("note") or "").startswith("DISAGREE:"):
            first[i] = (0, None)
            out.append(i)
    return sorted(out)


def apply_to_records(first: dict[str, tuple[int, int | None]], records: Path = RECORDS) -> int:
    """Write the first-pass content labels and anchors into the model and paired rows of ``records``."""
    recs = read_jsonl(records)
    n = 0
    for r in recs:
        if r["id"] in first and r["view"] in ("model", "paired"):
            r["label"], r["anchor"] = first[r["id"]]
            n += 1
    with open(records, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return n


def merge_content(folder: Path, out: Path = CONTENT_LABELS) -> dict[str, tuple[int, int | None]]:
    """Validate and merge a folder of binary labels; print agreement; write ``out``; return the first pass."""
    items = {it["id"]: it for path in sorted(folder.glob("chunk_*.jsonl")) for it in read_jsonl(path)}
    if not items:
        raise LabelError(f"no chunk_XX.jsonl under {folder}")
    n_tokens = {i: len(it["tokens"]) for i, it in items.items()}
    first_rows = [r for p in sorted(folder.glob("labels_*.jsonl")) for r in read_jsonl(p)]
    first = parse_labels(first_rows, n_tokens, "first pass")
    missing = sorted(set(items) - set(first))
    if missing:
        raise LabelError(f"{len(missing)} of {len(items)} items have no first-pass label, e.g. {missing[:10]}")
    print(f"paired rule: {len(apply_disagree(first, first_rows))} compliant replies noted DISAGREE: are labelled safe")
    second = {}
    sp = folder / "second_pass.jsonl"
    if sp.is_file():
        second = parse_labels(read_jsonl(sp), n_tokens, "second pass")
        both = sorted(set(second) & set(first))
        a, b = [first[i][0] for i in both], [second[i][0] for i in both]
        hh = [i for i in both if first[i][0] and second[i][0]]
        exact = sum(first[i][1] == second[i][1] for i in hh)
        near = sum(abs(first[i][1] - second[i][1]) <= NEAR for i in hh)
        print(f"second pass: {len(both)} items, raw agreement {sum(x == y for x, y in zip(a, b)) / len(both):.3f}, "
              f"Cohen's kappa {cohen_kappa(a, b):.3f}; anchors on {len(hh)} both-harmful: exact {exact}, "
              f"within {NEAR} tokens {near}")
    paired = [i for i in items if items[i]["kind"] == "paired"]
    if paired:
        agree = sum(first[i][0] == int(i.endswith("-c")) for i in paired)
        kept = [i for i in paired if i.endswith("-c") and first[i][0] and not first[i[:-1] + "r"][0]]
        print(f"paired: content label = construction label on {agree}/{len(paired)} replies; {len(kept)} of "
              f"{len(paired) // 2} pairs have a content-harmful compliant reply and a safe refusal")
    with open(out, "w") as f:
        f.writelines(json.dumps({"id": i, "label": first[i][0], "anchor": first[i][1], "pass": 1}) + "\n" for i in sorted(first))
        f.writelines(json.dumps({"id": i, "label": second[i][0], "anchor": second[i][1], "pass": 2}) + "\n" for i in sorted(second))
    print(f"wrote {len(first)} + {len(second)} rows to {out}")
    return first


# --- three levels ---------------------------------------------------------------------------------
def check_row(row: dict, n_tokens: int) -> str | None:
    """What is wrong with one three-level label row (None when it is well-formed)."""
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


def load_pass(items: dict[str, dict], rows: list[dict], what: str) -> dict[str, dict]:
    """Validate one pass's three-level rows against their items; id -> row."""
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


def merge_levels(folder: Path, out: Path = LEVEL_LABELS, agreement_file: Path | None = LEVEL_AGREEMENT) -> dict:
    """Validate and merge a folder of three-level labels; write ``out`` (and the agreement report
    when the folder has a second pass); return the first pass."""
    items: dict[str, dict] = {}
    first_rows: list[dict] = []
    for chunk in sorted(folder.glob("*.jsonl")):
        if chunk.name.startswith(("labels_", "second_pass")):
            continue
        chunk_items = {it["id"]: it for it in read_jsonl(chunk)}
        items.update(chunk_items)
        lab = chunk.with_name("labels_" + chunk.name)
        if not lab.is_file():
            raise LabelError(f"{lab.name} is missing: every chunk needs its first-pass labels")
        rows = read_jsonl(lab)
        missing = sorted(set(chunk_items) - {r.get("id") for r in rows})
        if missing:
            raise LabelError(f"{lab.name}: {len(missing)} items without a label, e.g. {missing[:5]}")
        first_rows += rows
    first = load_pass(items, first_rows, "first pass")
    second = {}
    if (folder / "second_pass.jsonl").is_file():
        second = load_pass(items, read_jsonl(folder / "second_pass.jsonl"), "second pass")
        rep = agreement(first, second)
        print(json.dumps(rep, indent=1))
        if agreement_file is not None:
            agreement_file.write_text(json.dumps(rep, indent=1) + "\n")
    with open(out, "w") as f:
        for p, rows in ((1, first), (2, second)):
            for i in sorted(rows):
                r = rows[i]
                f.write(json.dumps({"id": i, "level": r["level"], "comply_anchor": r["comply_anchor"],
                                    "unsafe_anchor": r["unsafe_anchor"], "pass": p}) + "\n")
    counts = {lv: sum(r["level"] == lv for r in first.values()) for lv in LEVELS}
    print(f"wrote {out} ({len(first)} first-pass rows: {counts}; {len(second)} second-pass rows)")
    return first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scheme", choices=("content", "levels"))
    ap.add_argument("--labels", type=Path, default=None, help="folder of chunk and label files")
    ap.add_argument("--out", type=Path, default=None, help="committed label file to write (default by scheme)")
    ap.add_argument("--apply", action="store_true", help="content: write the labels into data/guardrail_v2/records.jsonl")
    args = ap.parse_args()
    if args.scheme == "levels":
        if args.labels is None:
            ap.error("levels: give --labels <folder>")
        out = args.out or LEVEL_LABELS
        merge_levels(args.labels, out, LEVEL_AGREEMENT if out == LEVEL_LABELS else None)
        return
    out = args.out or CONTENT_LABELS
    if args.labels is None:
        if not args.apply:
            ap.error("content: give --labels <folder> to merge, or --apply to apply the committed label file")
        first = {r["id"]: (r["label"], r["anchor"]) for r in read_jsonl(out) if r["pass"] == 1}
    else:
        first = merge_content(args.labels, out)
    if args.apply:
        print(f"applied {apply_to_records(first)} labels from {out} to {RECORDS}")


if __name__ == "__main__":
    main()
