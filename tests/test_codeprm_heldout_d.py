"""Variant "d" (engines/codeprm/heldout_d.py) is evaluation-only: never in training/validation data."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from engines.codeprm import mutations
from engines.codeprm.heldout_d import FAMILIES_D, TEMPLATES_D, heldout_templates
from engines.codeprm.mutations import inject, render

ROOT = Path(__file__).resolve().parents[1]


def test_variant_d_covers_the_13_families_once():
    assert FAMILIES_D == mutations.FAMILIES
    assert sorted(t.cwe for t in TEMPLATES_D) == mutations.FAMILIES
    assert {t.variant for t in heldout_templates()} == {"d"}


def test_variant_d_is_excluded_from_the_training_and_validation_builders():
    # the builders only reach templates through mutations.TEMPLATES / templates(split)
    assert all(t.variant != "d" for t in mutations.TEMPLATES)
    for split in ("train", "val", "test"):
        assert all(t.variant != "d" for t in mutations.templates(split))
    with pytest.raises(ValueError):
        mutations.templates("d")
    d_keys = {t.key for t in TEMPLATES_D}
    assert not d_keys & {t.key for t in mutations.TEMPLATES}
    # neither data script imports the held-out module or names variant d
    for script in ("scripts/codeprm_dataset.py", "scripts/codeprm_synth.py"):
        text = (ROOT / script).read_text()
        assert "heldout_d" not in text and "TEMPLATES_D" not in text
        assert not re.search(r"""["']d["']\s*[,:)\]]""", text.split('"""', 2)[-1]), script
    # and no training script in scripts/ touches it
    for script in ROOT.glob("scripts/*.py"):
        assert "heldout_d" not in script.read_text(), script


def test_variant_d_is_not_in_the_shipped_data_files():
    for split in ("train", "val", "test"):
        p = ROOT / "data" / "codeprm" / f"{split}.jsonl"
        if p.is_file():
            with open(p) as fh:
                assert not any('"template": "cwe' in ln and '-d"' in ln for ln in fh), split


@pytest.mark.parametrize("t", TEMPLATES_D, ids=lambda t: t.key)
def test_variant_d_pair_renders_parses_and_marks_only_the_vulnerable_twin(t):
    for seed in range(3):
        imp, body_v, bad_v = render(t, True, random.Random(seed))
        _, body_f, bad_f = render(t, False, random.Random(seed))
        assert bad_v and not bad_f and "#!V" not in body_v
        assert body_v != body_f
        compile(imp + "\n\n" + body_v + "\n", "v.py", "exec", flags=0x400)
        compile(imp + "\n\n" + body_f + "\n", "f.py", "exec", flags=0x400)
        host = "x = 1\n\n\ndef g(a):\n    return a\n\n\ny = 2\n"
        code, bad = inject(host, t, True, random.Random(seed))
        lines = code.splitlines()
        assert all(lines[b - 1].strip() and lines[b - 1].strip() in body_v for b in bad)
        compile(code, "h.py", "exec", flags=0x400)


@pytest.mark.parametrize("seed", range(4))
def test_eval_recovers_the_variant_c_host_exactly(seed):
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from codeprm_eval import host_of

    host = "import os\n\n\ndef g(a):\n    return a\n\n\nclass K:\n    x = 1\n\n\ny = 2\n"
    for t in mutations.templates("test"):
        for vul in (True, False):
            for h in (host, ""):
                code, _ = inject(h, t, vul, random.Random(seed))
                item = {"code": code, "vulnerable": vul, "pkg": "p", "template": t.key, "pair": 0}
                _, hl = host_of(item, t)
                assert ("\n".join(hl) + "\n" if hl else "") == h


# ---- variants "v" (validation / selection only) and "e" (final test once, validation since 2026-12-01)
from engines.codeprm.heldout_e import FAMILIES_E, TEMPLATES_E  # noqa: E402
from engines.codeprm.heldout_v import FAMILIES_V, TEMPLATES_V  # noqa: E402

TRAINING_BUILDERS = ("scripts/codeprm_dataset.py", "scripts/codeprm_synth.py", "scripts/codeprm_train.py")


@pytest.mark.parametrize("tpls,fams,var", [(TEMPLATES_V, FAMILIES_V, "v"), (TEMPLATES_E, FAMILIES_E, "e")])
def test_variants_v_e_cover_the_13_families_and_are_excluded_from_training(tpls, fams, var):
    assert fams == mutations.FAMILIES and sorted(t.cwe for t in tpls) == mutations.FAMILIES
    assert {t.variant for t in tpls} == {var}
    assert all(t.variant not in ("v", "e") for t in mutations.TEMPLATES)
    for split in ("train", "val", "test"):
        assert all(t.variant not in ("d", "v", "e") for t in mutations.templates(split))
    with pytest.raises(ValueError):
        mutations.templates(var)
    # no training builder can reach v or e
    for script in TRAINING_BUILDERS:
        text = (ROOT / script).read_text()
        for name in ("heldout_v", "heldout_e", "TEMPLATES_V", "TEMPLATES_E", "validation_templates"):
            assert name not in text, (script, name)
    # e (evaluated once as the final test on 2026-11-30, seen since) is validation data now: only
    # the selection script embeds it, in the VAL hosts; nothing else in scripts/ touches it
    for script in ROOT.glob("scripts/*.py"):
        if script.name != "codeprm_select.py":
            assert "heldout_e" not in script.read_text(), script
    # templates are pairwise distinct from every other variant
    others = {(t.vulnerable, t.fixed) for t in list(mutations.TEMPLATES) + list(TEMPLATES_D)}
    assert not others & {(t.vulnerable, t.fixed) for t in tpls}


def test_variants_v_e_not_in_the_training_data_file():
    p = ROOT / "data" / "codeprm" / "train.jsonl"
    if p.is_file():
        with open(p) as fh:
            assert not any('-v"' in ln or '-e"' in ln for ln in fh if '"template": "cwe' in ln)


@pytest.mark.parametrize("t", TEMPLATES_V + TEMPLATES_E, ids=lambda t: t.key)
def test_variant_v_e_pair_renders_parses_and_marks_only_the_vulnerable_twin(t):
    for seed in range(2):
        imp, body_v, bad_v = render(t, True, random.Random(seed))
        _, body_f, bad_f = render(t, False, random.Random(seed))
        assert bad_v and not bad_f and "#!V" not in body_v and body_v != body_f
        compile(imp + "\n\n" + body_v + "\n", "v.py", "exec", flags=0x400)
        compile(imp + "\n\n" + body_f + "\n", "f.py", "exec", flags=0x400)
        code, bad = inject("x = 1\n\n\ndef g(a):\n    return a\n", t, True, random.Random(seed))
        assert all(code.splitlines()[b - 1].strip() in body_v for b in bad)
