"""Variants "h" and "i" (engines/codeprm/heldout_h.py): never training data; the blind test once, validation since."""
from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from engines.codeprm import mutations
from engines.codeprm.heldout_d import TEMPLATES_D
from engines.codeprm.heldout_e import TEMPLATES_E
from engines.codeprm.heldout_f import TEMPLATES_F
from engines.codeprm.heldout_h import FAMILIES_H, TEMPLATES_H, VARIANTS, heldout_templates_h
from engines.codeprm.heldout_v import TEMPLATES_V
from engines.codeprm.mutations import MARK, inject, render

ROOT = Path(__file__).resolve().parents[1]
HOST = "x = 1\n\n\ndef g(a):\n    return a\n\n\ny = 2\n"


def test_variants_h_i_cover_the_13_families_once_each():
    assert VARIANTS == ("h", "i")
    assert FAMILIES_H == mutations.FAMILIES
    assert len(TEMPLATES_H) == 2 * len(mutations.FAMILIES) == 26
    for var in VARIANTS:
        assert sorted(t.cwe for t in TEMPLATES_H if t.variant == var) == mutations.FAMILIES, var
    assert {t.variant for t in heldout_templates_h()} == {"h", "i"}
    assert len({t.key for t in TEMPLATES_H}) == 26


def test_variants_h_i_are_excluded_from_the_training_and_validation_builders():
    assert all(t.variant not in VARIANTS for t in mutations.TEMPLATES)
    for split in ("train", "val", "test"):
        assert all(t.variant not in VARIANTS for t in mutations.templates(split))
    for var in VARIANTS:
        with pytest.raises(ValueError):
            mutations.templates(var)
    assert not {t.key for t in TEMPLATES_H} & {t.key for t in mutations.TEMPLATES}
    # h/i were the blind test of the round-2 system (one run, 2026-12-01 08:01 UTC) and are
    # validation data since: only the selection script embeds them, in the VAL hosts; no
    # training builder or other script touches the module
    for script in ROOT.glob("scripts/*.py"):
        if script.name == "codeprm_select.py":
            continue
        text = script.read_text()
        for name in ("heldout_h", "TEMPLATES_H", "heldout_templates_h", "FAMILIES_H"):
            assert name not in text, (script, name)


def test_variants_h_i_are_not_in_the_shipped_data_files():
    for split in ("train", "val", "test"):
        p = ROOT / "data" / "codeprm" / f"{split}.jsonl"
        if p.is_file():
            with open(p) as fh:
                assert not any(re.search(r'"template": "cwe\d+-[hi]"', ln) for ln in fh), split


def test_variants_h_i_are_distinct_from_every_other_variant():
    others = list(mutations.TEMPLATES) + list(TEMPLATES_D) + list(TEMPLATES_V) + list(TEMPLATES_E) + list(TEMPLATES_F)
    other_bodies = {t.vulnerable for t in others} | {t.fixed for t in others}
    for t in TEMPLATES_H:
        assert t.vulnerable not in other_bodies and t.fixed not in other_bodies, t.key
    assert not {t.key for t in TEMPLATES_H} & {t.key for t in others}
    pairs = {(t.vulnerable, t.fixed) for t in TEMPLATES_H}
    assert len(pairs) == len(TEMPLATES_H)


def _top_level_names(src: str) -> list[str]:
    names = []
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [n.id for n in node.targets if isinstance(n, ast.Name)]
    return names


@pytest.mark.parametrize("t", TEMPLATES_H, ids=lambda t: t.key)
def test_variant_h_i_template_shape(t):
    marked = [ln for ln in t.vulnerable.splitlines() if ln.rstrip().endswith(MARK)]
    assert 1 <= len(marked) <= 2
    assert MARK not in t.fixed and MARK not in t.imports
    assert 3 <= len(t.vulnerable.splitlines()) <= 12
    assert 3 <= len(t.fixed.splitlines()) <= 12


@pytest.mark.parametrize("t", TEMPLATES_H, ids=lambda t: t.key)
def test_variant_h_i_pair_renders_parses_and_marks_only_the_vulnerable_twin(t):
    for seed in range(3):
        imp, body_v, bad_v = render(t, True, random.Random(seed))
        imp_f, body_f, bad_f = render(t, False, random.Random(seed))
        assert imp == imp_f
        assert bad_v and not bad_f and MARK not in body_v and MARK not in body_f
        assert body_v != body_f
        assert all(body_v.splitlines()[b - 1].strip() for b in bad_v)
        compile(imp + "\n\n" + body_v + "\n", "v.py", "exec", flags=0x400)
        compile(imp + "\n\n" + body_f + "\n", "f.py", "exec", flags=0x400)
        # the fixed twin defines the same things as the vulnerable one (same job, same API)
        assert _top_level_names(body_v) == _top_level_names(body_f)
        for host in (HOST, ""):
            code, bad = inject(host, t, True, random.Random(seed))
            lines = code.splitlines()
            assert bad and all(lines[b - 1].strip() and lines[b - 1].strip() in body_v for b in bad)
            compile(code, "h.py", "exec", flags=0x400)
            code_f, bad_f2 = inject(host, t, False, random.Random(seed))
            assert not bad_f2 and MARK not in code_f
            compile(code_f, "hf.py", "exec", flags=0x400)
