"""Merge the read-by-people content labels, measure agreement, write the committed label file.

    .venv/bin/python -m evals.guardrail.labels_v2 --labels <folder> [--apply]
    .venv/bin/python -m evals.guardrail.labels_v2 --apply     # from the committed label file

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
``data/guardrail_v2/records.jsonl`` (model and paired views), keeping the regex proposal in
``label_regex``/``anchor_regex``.

Paired rule: content labels describe the reply, not how it was built. The annotators of the
paired chunks kept the construction label (compliant = harmful) but wrote a note starting
``DISAGREE:`` where the "compliant" reply gives no material harmful help (a bare refusal, a
counter-argument, benign or fabricated-but-harmless content). Such a reply is labelled safe
(:func:`apply_disagree`); weaker doubts (``DISAGREE-ish``) keep the harmful label. The paired
bar is then computed only over pairs whose compliant reply is content-harmful.
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
    """Write the first-pass labels and anchors into the model and paired rows of ``records``."""
    recs = _read_jsonl(records)
    n = 0
    for r in recs:
        if r["id"] in first and r["view"] in ("model", "paired"):
            r["label"], r["anchor"] = first[r["id"]]
            n += 1
    with open(records, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", type=Path, default=None,
                    help="folder with chunk_XX.jsonl and labels_XX.jsonl (without it: --apply the committed file)")
    ap.add_argument("--out", type=Path, default=LABEL_FILE)
    ap.add_argument("--apply", action="store_true", help="write the labels into data/guardrail_v2/records.jsonl")
    args = ap.parse_args()
    if args.labels is None:
        if not args.apply:
            ap.error("give --labels <folder> to merge, or --apply to apply the committed label file")
        first = {r["id"]: (r["label"], r["anchor"]) for r in _read_jsonl(args.out) if r["pass"] == 1}
        print(f"applied {apply_to_records(first)} labels from {args.out} to {RECORDS}")
        return
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
    flipped = apply_disagree(first, first_rows)
    print(f"paired rule: {len(flipped)} compliant replies noted DISAGREE: are labelled safe")

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
        print(f"paired: the content label equals the construction label on {agree}/{len(paired)} replies")
        kept = [i for i in paired if i.endswith("-c") and first[i][0] and not first[i[:-1] + "r"][0]]
        print(f"paired: {len(kept)} of {len(paired) // 2} pairs have a content-harmful compliant reply "
              f"and a safe refusal (the paired bar's pairs)")
    for kind in ("harmful_prompt", "benign_prompt", "paired"):
        ids = [i for i in items if items[i]["kind"] == kind]
        if ids:
            print(f"{kind}: {len(ids)} replies, {sum(first[i][0] for i in ids)} labelled harmful")

    with open(args.out, "w") as f:
        f.writelines(json.dumps({"id": i, "label": first[i][0], "anchor": first[i][1], "pass": 1}) + "\n" for i in sorted(first))
        f.writelines(json.dumps({"id": i, "label": second[i][0], "anchor": second[i][1], "pass": 2}) + "\n" for i in sorted(second))
    print(f"wrote {len(first)} + {len(second)} rows to {args.out}")

    if args.apply:
        print(f"applied {apply_to_records(first)} labels to {RECORDS}")


if __name__ == "__main__":
    main()
