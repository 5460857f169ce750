"""Merge the read-by-people content labels, measure agreement, write the committed label file.

    .venv/bin/python -m evals.guardrail.labels_v2 --labels <folder> [--apply]

Reads, under ``--labels`` (the folder of the chunk files, see :mod:`evals.guardrail.label_chunks`):

* ``chunk_XX.jsonl``: the items (id, kind, tokens);
* ``labels_XX.jsonl``: the first pass, one line per item:
  ``{"id", "label": "harmful"|"safe", "anchor": int|null, "note"}``;
* ``second_pass.jsonl``: the second, independent pass on the ids of ``second_pass_ids.txt``
  (same line format).

Checks every item has exactly one first-pass label, labels are one of the two words, a harmful
label has an anchor inside the reply and a safe one has none (a clear error listing the offending
ids otherwise). Reports Cohen's kappa on the label between the passes, anchor agreement (exact
and within 2 tokens) where both say harmful, and how often the paired set's construction labels
were confirmed. Writes ``evals/guardrail/content_labels.jsonl`` (id, label 0/1, anchor, pass),
first-pass rows plus second-pass rows. ``--apply`` copies the first-pass labels and anchors into
``data/guardrail_v2/records.jsonl`` (model view; paired replies keep their construction label and
take the annotated anchor), keeping the regex proposal in ``label_regex``/``anchor_regex``.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LABEL_FILE = Path(__file__).resolve().parent / "content_labels.jsonl"
RECORDS = REPO / "data" / "guardrail_v2" / "records.jsonl"
NEAR = 2  # tokens: "anchor within" tolerance of the agreement report


class LabelError(ValueError):
    """A label file is incomplete or malformed; the message lists what to fix."""


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two raters' binary labels: (p_o - p_e) / (1 - p_e).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 3)
    0.5
    >>> cohen_kappa([1, 0, 1], [1, 0, 1])
    1.0
    """
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two label lists of the same, non-zero length")
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def _read_jsonl(path: Path) -> list[dict]:
    out = []
    for k, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if ln.strip():
            try:
                out.append(json.loads(ln))
            except json.JSONDecodeError as exc:
                raise LabelError(f"{path.name} line {k} is not JSON: {exc}") from exc
    return out


def parse_labels(rows: list[dict], n_tokens: dict[str, int], where: str) -> dict[str, tuple[int, int | None]]:
    """{id: (label 0/1, anchor)} from label lines, validated against the items' token counts."""
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", type=Path, required=True, help="folder with chunk_XX.jsonl and labels_XX.jsonl")
    ap.add_argument("--out", type=Path, default=LABEL_FILE)
    ap.add_argument("--apply", action="store_true", help="write the labels into data/guardrail_v2/records.jsonl")
    args = ap.parse_args()
    items = {}
    for path in sorted(args.labels.glob("chunk_*.jsonl")):
        for it in _read_jsonl(path):
            items[it["id"]] = it
    if not items:
        raise LabelError(f"no chunk_XX.jsonl under {args.labels}")
    n_tokens = {i: len(it["tokens"]) for i, it in items.items()}
    first_rows = [r for p in sorted(args.labels.glob("labels_*.jsonl")) for r in _read_jsonl(p)]
    first = parse_labels(first_rows, n_tokens, "first pass")
    missing = sorted(set(items) - set(first))
    if missing:
        raise LabelError(f"{len(missing)} of {len(items)} items have no first-pass label, e.g. {missing[:10]}")

    second = {}
    sp = args.labels / "second_pass.jsonl"
    if sp.is_file():
        second = parse_labels(_read_jsonl(sp), n_tokens, "second pass")
        both = sorted(set(second) & set(first))
        a, b = [first[i][0] for i in both], [second[i][0] for i in both]
        hh = [i for i in both if first[i][0] and second[i][0]]
        exact = sum(first[i][1] == second[i][1] for i in hh)
        near = sum(abs(first[i][1] - second[i][1]) <= NEAR for i in hh)
        print(f"second pass: {len(both)} items, raw agreement {sum(x == y for x, y in zip(a, b)) / len(both):.3f}, "
              f"Cohen's kappa {cohen_kappa(a, b):.3f}; anchors on {len(hh)} both-harmful: exact {exact}, "
              f"within {NEAR} tokens {near}")
    else:
        print(f"no {sp.name}: agreement not measured")

    paired = [i for i in items if items[i]["kind"] == "paired"]
    if paired:
        want = {i: int(i.endswith("-c")) for i in paired}
        agree = sum(first[i][0] == want[i] for i in paired)
        print(f"paired: annotators confirm the construction label on {agree}/{len(paired)} replies")
    for kind in ("harmful_prompt", "benign_prompt", "paired"):
        ids = [i for i in items if items[i]["kind"] == kind]
        if ids:
            print(f"{kind}: {len(ids)} replies, {sum(first[i][0] for i in ids)} labelled harmful")

    with open(args.out, "w") as f:
        f.writelines(json.dumps({"id": i, "label": first[i][0], "anchor": first[i][1], "pass": 1}) + "\n" for i in sorted(first))
        f.writelines(json.dumps({"id": i, "label": second[i][0], "anchor": second[i][1], "pass": 2}) + "\n" for i in sorted(second))
    print(f"wrote {len(first)} + {len(second)} rows to {args.out}")

    if args.apply:
        recs = _read_jsonl(RECORDS)
        for r in recs:
            if r["id"] not in first:
                continue
            lab, anc = first[r["id"]]
            if r["view"] == "model":
                r["label"], r["anchor"] = lab, anc
            elif r["view"] == "paired" and r["label"]:
                r["anchor"] = anc if anc is not None else r["anchor"]
        with open(RECORDS, "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        print(f"applied labels to {RECORDS}")


if __name__ == "__main__":
    main()
