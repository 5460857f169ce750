"""Where the guardrail's data pipelines read and write (one home for the paths).

``DATA`` is the git-ignored build of ``make data-guardrail``: records, hidden-state caches and the
part 2 head used by the benchmarks; the committed label files sit beside this module.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "guardrail_v2"
RECORDS = DATA / "records.jsonl"
FEATS = DATA / "feats"
WHEELS = ROOT / "data" / "wheels"
LABEL_DIR = Path(__file__).resolve().parent
CONTENT_LABELS = LABEL_DIR / "content_labels.jsonl"
LEVEL_LABELS = LABEL_DIR / "level_labels.jsonl"
CONTRAST_LABELS = LABEL_DIR / "contrast_labels.jsonl"
LEVEL_AGREEMENT = LABEL_DIR / "level_agreement.json"
PART2_HEAD = DATA / "part2_sld_head.pt"
ASSETS = ROOT / "assets" / "guardrail"  # the shipped head (scripts/guardrail_train.py writes it)
