"""Check the hand-written long requests with attached material (issue 44, item 1).

Reads every ``long_en_*.jsonl`` beside this file, validates the schema, prints the counts a
reader needs to judge the set (label x form, label x material kind, per topic, word-length
buckets, openings) and exits non-zero when a required quantity is not met, so that neither
length, ask placement, material kind nor the opening words tell the label apart.

Run: ``python3 evals/guardrail/prompts/v2/check_long.py``
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
OLD_PROMPTS = os.path.dirname(HERE)

FIELDS = ("topic", "family", "harmful", "lang", "form", "material", "prompt")
FAMILY = "longform_attached"
FORMS = ("long_ask_before", "long_ask_after", "long_ask_both")
KINDS = ("email", "notes", "bug_report", "essay", "table", "contract", "recipe", "lecture",
         "spec", "transcript", "article", "code", "story", "protocol", "policy", "other")
TOPIC_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
BUCKETS = ((0, 100, "<100"), (100, 200, "100-200"), (200, 400, "200-400"),
           (400, 800, "400-800"), (800, 10 ** 9, ">800"))

# Required quantities (issue 44 item 1 and the helper brief).
MIN_BENIGN, MIN_HARMFUL = 230, 120
MIN_LONG = {0: 40, 1: 20}            # rows over 400 words, per label
LONG_WORDS = 400
CORE_RANGE, CORE_SHARE = (120, 650), 0.70   # "mostly 120-600 words" of material (+ the ask)
MIN_FORM_SHARE = 0.35                # ask-before and ask-after, each side
MIN_KINDS, MIN_TOPICS = 14, 40
OPENING_MIN_COUNT, OPENING_MAX_SHARE = 10, 0.80
LENGTH_AUROC_MAX = 0.65              # |AUROC - 0.5| <= 0.15 for word count vs label
BUCKET_MIN_ROWS, BUCKET_MAX_DRIFT = 30, 0.20  # harmful share per bucket vs overall share
MIN_SHARED_CHARS = 40                # an old prompt line this long may not appear inside a row


def norm(text: str) -> str:
    """Lower-case, collapse whitespace and strip punctuation so near-copies compare equal."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def words(text: str) -> int:
    return len(text.split())


def opening(text: str) -> str:
    """First three words, lower-cased, punctuation stripped: the surface a shortcut would use."""
    return " ".join(norm(text).split()[:3])


def auroc(scores: list[float], labels: list[int]) -> float:
    """Rank AUROC (ties count half) of ``scores`` for the positive label, pure Python."""
    pos = [s for s, y in zip(scores, labels) if y == 1]
    neg = [s for s, y in zip(scores, labels) if y == 0]
    if not pos or not neg:
        return float("nan")
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    rank_sum = sum(r for r, y in zip(ranks, labels) if y == 1)
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def load_rows() -> tuple[list[dict], list[str]]:
    rows, errors = [], []
    files = sorted(glob.glob(os.path.join(HERE, "long_en_*.jsonl")))
    if not files:
        errors.append("no long_en_*.jsonl files found")
    for path in files:
        name = os.path.basename(path)
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    errors.append(f"{name}:{n}: empty line")
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    errors.append(f"{name}:{n}: not JSON ({exc})")
                    continue
                where = f"{name}:{n}"
                if not isinstance(row, dict) or tuple(sorted(row)) != tuple(sorted(FIELDS)):
                    errors.append(f"{where}: fields must be exactly {FIELDS}")
                    continue
                if not isinstance(row["topic"], str) or not TOPIC_RE.match(row["topic"]):
                    errors.append(f"{where}: topic {row['topic']!r} is not kebab-case")
                if row["family"] != FAMILY:
                    errors.append(f"{where}: family must be {FAMILY!r}")
                if row["harmful"] not in (0, 1) or isinstance(row["harmful"], bool):
                    errors.append(f"{where}: harmful must be the integer 0 or 1")
                if row["lang"] != "en":
                    errors.append(f"{where}: lang must be 'en'")
                if row["form"] not in FORMS:
                    errors.append(f"{where}: form {row['form']!r} not in {FORMS}")
                if row["material"] not in KINDS:
                    errors.append(f"{where}: material {row['material']!r} not in {KINDS}")
                if not isinstance(row["prompt"], str) or "\n" not in row["prompt"]:
                    errors.append(f"{where}: prompt must be text with real newlines")
                    continue
                if row["prompt"].count("\\n") > row["prompt"].count("\n"):
                    errors.append(f"{where}: prompt looks double-escaped (literal backslash-n)")
                row["_where"] = where
                rows.append(row)
    return rows, errors


def old_prompt_lines() -> list[str]:
    """Normalised request texts of the v1 files (tsv: last column; txt: the line)."""
    out = []
    for path in sorted(glob.glob(os.path.join(OLD_PROMPTS, "*.tsv"))
                       + glob.glob(os.path.join(OLD_PROMPTS, "*.txt"))):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip() or line.startswith("#"):
                    continue
                text = line.rstrip("\n").split("\t")[-1]
                if len(text) >= MIN_SHARED_CHARS:
                    out.append(norm(text))
    return out


def table(title: str, counts: dict, cols: list, rows_order: list) -> None:
    print(f"\n{title}")
    width = max([len(str(r)) for r in rows_order] + [8])
    print(" " * width + "".join(f"{c!s:>10}" for c in cols) + f"{'total':>10}")
    for r in rows_order:
        vals = [counts.get((r, c), 0) for c in cols]
        print(f"{r!s:<{width}}" + "".join(f"{v:>10}" for v in vals) + f"{sum(vals):>10}")


def main() -> int:
    rows, errors = load_rows()
    fails = list(errors)
    label_name = {0: "benign", 1: "harmful"}

    # Distinctness, within the set and against the v1 prompt files.
    seen: dict[str, str] = {}
    for r in rows:
        key = norm(r["prompt"])
        if key in seen:
            fails.append(f"{r['_where']}: duplicate of {seen[key]}")
        seen.setdefault(key, r["_where"])
    old = old_prompt_lines()
    for r in rows:
        text = norm(r["prompt"])
        for o in old:
            if o in text:
                fails.append(f"{r['_where']}: contains a v1 prompt: {o[:60]!r}")
                break

    by_label = Counter(r["harmful"] for r in rows)
    print(f"rows: {len(rows)}  benign: {by_label[0]}  harmful: {by_label[1]}")
    if by_label[0] < MIN_BENIGN:
        fails.append(f"benign rows {by_label[0]} < {MIN_BENIGN}")
    if by_label[1] < MIN_HARMFUL:
        fails.append(f"harmful rows {by_label[1]} < {MIN_HARMFUL}")

    # Label x form.
    lf = Counter((label_name[r["harmful"]], r["form"]) for r in rows)
    table("label x form", lf, list(FORMS), ["benign", "harmful"])
    for y in (0, 1):
        n = by_label[y] or 1
        for form in ("long_ask_before", "long_ask_after"):
            share = lf[(label_name[y], form)] / n
            print(f"  {label_name[y]} {form}: {share:.1%}")
            if share < MIN_FORM_SHARE:
                fails.append(f"{label_name[y]} {form} share {share:.1%} < {MIN_FORM_SHARE:.0%}")

    # Label x material kind.
    lk = Counter((r["material"], label_name[r["harmful"]]) for r in rows)
    used = [k for k in KINDS if lk[(k, "benign")] or lk[(k, "harmful")]]
    table("material kind x label", lk, ["benign", "harmful"], used)
    both = [k for k in used if lk[(k, "benign")] and lk[(k, "harmful")]]
    one_sided = [k for k in used if k not in both]
    print(f"  kinds used on both sides: {len(both)}; one-sided: {one_sided or 'none'}")
    if len(both) < MIN_KINDS:
        fails.append(f"material kinds on both sides {len(both)} < {MIN_KINDS}")
    if one_sided:
        fails.append(f"material kinds used on one side only: {one_sided}")

    # Topics: every harmful topic has benign rows with the same material kind.
    tk = defaultdict(Counter)
    for r in rows:
        tk[r["topic"]][(r["harmful"], r["material"])] += 1
    print(f"\nper topic ({len(tk)} topics): benign / harmful  [material kinds]")
    for topic in sorted(tk):
        c = tk[topic]
        b = sum(v for (y, _), v in c.items() if y == 0)
        h = sum(v for (y, _), v in c.items() if y == 1)
        kinds = sorted({k for (_, k) in c})
        print(f"  {topic:<34}{b:>4} /{h:>3}  {','.join(kinds)}")
        for (y, kind), v in c.items():
            if y == 1 and c[(0, kind)] == 0:
                fails.append(f"topic {topic}: harmful '{kind}' rows have no benign '{kind}' twin")
    if len(tk) < MIN_TOPICS:
        fails.append(f"topics {len(tk)} < {MIN_TOPICS}")

    # Length: buckets, rows over 400 words, core range, length-only AUROC, one-sided buckets.
    wl = [words(r["prompt"]) for r in rows]
    labels = [r["harmful"] for r in rows]
    lb = Counter()
    for w, y in zip(wl, labels):
        for lo, hi, name in BUCKETS:
            if lo <= w < hi:
                lb[(name, label_name[y])] += 1
    table("word-length bucket x label", lb, ["benign", "harmful"], [b[2] for b in BUCKETS])
    for y in (0, 1):
        ws = sorted(w for w, yy in zip(wl, labels) if yy == y)
        if ws:
            print(f"  {label_name[y]}: min {ws[0]}  median {ws[len(ws) // 2]}  max {ws[-1]}  "
                  f"mean {sum(ws) / len(ws):.0f}")
        long_n = sum(1 for w in ws if w > LONG_WORDS)
        print(f"  {label_name[y]} rows over {LONG_WORDS} words: {long_n}")
        if long_n < MIN_LONG[y]:
            fails.append(f"{label_name[y]} rows over {LONG_WORDS} words {long_n} < {MIN_LONG[y]}")
    core = sum(1 for w in wl if CORE_RANGE[0] <= w <= CORE_RANGE[1]) / max(len(wl), 1)
    print(f"  share of rows with {CORE_RANGE[0]}-{CORE_RANGE[1]} words: {core:.1%}")
    if core < CORE_SHARE:
        fails.append(f"share in {CORE_RANGE} words {core:.1%} < {CORE_SHARE:.0%}")
    a = auroc([float(w) for w in wl], labels)
    print(f"  length-only AUROC (word count -> harmful): {a:.3f}")
    if not abs(a - 0.5) <= LENGTH_AUROC_MAX - 0.5:
        fails.append(f"length-only AUROC {a:.3f} outside [{1 - LENGTH_AUROC_MAX:.2f}, "
                     f"{LENGTH_AUROC_MAX:.2f}]")
    overall = by_label[1] / max(len(rows), 1)
    for _, _, name in BUCKETS:
        n = lb[(name, "benign")] + lb[(name, "harmful")]
        if n >= BUCKET_MIN_ROWS:
            share = lb[(name, "harmful")] / n
            if abs(share - overall) > BUCKET_MAX_DRIFT:
                fails.append(f"length bucket {name}: harmful share {share:.0%} vs overall "
                             f"{overall:.0%}")

    # Openings: no first-three-words opening with >= 10 rows is more than 80 % one label.
    op = defaultdict(Counter)
    for r in rows:
        op[opening(r["prompt"])][r["harmful"]] += 1
    frequent = sorted(((sum(c.values()), o, c) for o, c in op.items()
                       if sum(c.values()) >= OPENING_MIN_COUNT), reverse=True)
    print(f"\nopenings (first three words) with >= {OPENING_MIN_COUNT} rows: {len(frequent)}"
          f" of {len(op)} distinct")
    for n, o, c in frequent:
        share = max(c[0], c[1]) / n
        flag = "  ONE-SIDED" if share > OPENING_MAX_SHARE else ""
        print(f"  {o!r:<36} benign {c[0]:>3}  harmful {c[1]:>3}  max share {share:.0%}{flag}")
        if share > OPENING_MAX_SHARE:
            fails.append(f"opening {o!r} is {share:.0%} one label ({n} rows)")
    first = defaultdict(Counter)
    for r in rows:
        first[(norm(r["prompt"]).split() or [""])[0]][r["harmful"]] += 1
    top = sorted(first.items(), key=lambda kv: -sum(kv[1].values()))[:12]
    print("  most common first words: " + ", ".join(
        f"{w} {c[0]}/{c[1]}" for w, c in top))

    if fails:
        print(f"\nFAIL ({len(fails)}):")
        for f in fails[:80]:
            print(f"  - {f}")
        if len(fails) > 80:
            print(f"  ... and {len(fails) - 80} more")
        return 1
    print("\nOK: every required quantity is met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
