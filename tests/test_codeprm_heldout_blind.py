"""The blind held-out variants written by independent authors (f/g, h/i, j/k, l/m, n/o, p/q, r/s,
t/u, w/x, y/z, aa/ab, ac/ad, ak/al, aq/ar, au/av; and ae/af, ag/ah, ai/aj, am/an, ao/ap, as/at of the "realistic" protocol): one table, one set of checks. Each was the blind test of one system and evaluated once; the earlier ones are
validation data since (embedded in the VAL hosts by scripts/codeprm_select.py only); the newest
one tests the current system. None is training data in the default build (`codeprm_dataset.py
--extra-train` is an experiment switch, off by default)."""
from __future__ import annotations

import ast
import doctest
import importlib
import random
import re
from pathlib import Path

import pytest

from engines.codeprm import mutations
from engines.codeprm.heldout_d import TEMPLATES_D
from engines.codeprm.heldout_e import TEMPLATES_E
from engines.codeprm.heldout_v import TEMPLATES_V
from engines.codeprm.mutations import MARK, inject, render

ROOT = Path(__file__).resolve().parents[1]
HOST = "x = 1\n\n\ndef g(a):\n    return a\n\n\ny = 2\n"
EVAL_HARNESS = ROOT / "benchmarks" / "codeprm_eval.py"
SELECTION = ROOT / "scripts" / "codeprm_select.py"
DATASET = ROOT / "scripts" / "codeprm_dataset.py"  # may add seen variants to train by option (--extra-train)

# module suffix, its two variants, role ("validation": blind once, seen since; "test": current)
BLIND = [("f", ("f", "g"), "validation"), ("h", ("h", "i"), "validation"), ("j", ("j", "k"), "validation"),
         ("l", ("l", "m"), "validation"), ("n", ("n", "o"), "validation"),
         ("p", ("p", "q"), "validation"), ("r", ("r", "s"), "validation"),
         ("t", ("t", "u"), "validation"), ("w", ("w", "x"), "validation"),
         ("y", ("y", "z"), "validation"), ("aa", ("aa", "ab"), "validation"),
         ("ac", ("ac", "ad"), "validation"),
         # the "realistic" protocol: typical assistant code, blind tests of the round-9 system (seen since)
         ("ae", ("ae", "af"), "validation"), ("ag", ("ag", "ah"), "validation"), ("ai", ("ai", "aj"), "validation"),
         # the blind tests of the round-10 system (seen since): one novelty-protocol set, one realistic
         ("ak", ("ak", "al"), "validation"), ("am", ("am", "an"), "validation"),
         # the blind tests of the round-11 system (seen since): one realistic, one novelty
         ("ao", ("ao", "ap"), "validation"), ("aq", ("aq", "ar"), "validation"),
         # the blind tests of the round-12 system: one realistic-protocol set, one novelty-protocol set
         ("as", ("as", "at"), "test"), ("au", ("au", "av"), "test")]


def _module(x: str):
    return importlib.import_module(f"engines.codeprm.heldout_{x}")


def _templates(x: str) -> list:
    return list(getattr(_module(x), f"TEMPLATES_{x.upper()}"))


ALL_BLIND = [(x, t) for x, _v, _r in BLIND for t in _templates(x)]


@pytest.mark.parametrize("x,variants,role", BLIND, ids=[b[0] for b in BLIND])
def test_each_variant_covers_the_13_families_once(x, variants, role):
    mod, tpls = _module(x), _templates(x)
    assert tuple(mod.VARIANTS) == variants
    assert getattr(mod, f"FAMILIES_{x.upper()}") == mutations.FAMILIES
    assert len(tpls) == 2 * len(mutations.FAMILIES) == 26 and len({t.key for t in tpls}) == 26
    for var in variants:
        assert sorted(t.cwe for t in tpls if t.variant == var) == mutations.FAMILIES, var
    assert {t.variant for t in getattr(mod, f"heldout_templates_{x}")()} == set(variants)
    assert doctest.testmod(mod).failed == 0


@pytest.mark.parametrize("x,variants,role", BLIND, ids=[b[0] for b in BLIND])
def test_no_builder_can_reach_the_variant(x, variants, role):
    assert all(t.variant not in variants for t in mutations.TEMPLATES)
    for split in ("train", "val", "test"):
        assert all(t.variant not in variants for t in mutations.templates(split))
    for var in variants:
        with pytest.raises(ValueError):
            mutations.templates(var)
    # only the evaluation harness loads it, and the selection and dataset scripts once it is validation
    # data (the default build must still leave it out: checked on the split files below)
    names = (f"heldout_{x}", f"TEMPLATES_{x.upper()}", f"heldout_templates_{x}", f"FAMILIES_{x.upper()}")
    allowed = {EVAL_HARNESS} | ({SELECTION, DATASET} if role == "validation" else set())
    for folder in ("scripts", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path not in allowed:
                text = path.read_text(errors="ignore")
                assert not any(n in text for n in names), (path, x)
    for split in ("train", "val", "test"):
        p = ROOT / "data" / "codeprm" / f"{split}.jsonl"
        if p.is_file():
            rx = re.compile(r'"template": "cwe\d+-(' + "|".join(variants) + ')"')
            with open(p) as fh:
                assert not any(rx.search(ln) for ln in fh), (split, x)


def test_blind_variants_are_distinct_from_every_other_variant():
    earlier = list(mutations.TEMPLATES) + list(TEMPLATES_D) + list(TEMPLATES_V) + list(TEMPLATES_E)
    bodies = [(t.variant, b) for t in earlier + [t for _x, t in ALL_BLIND] for b in (t.vulnerable, t.fixed)]
    for x, t in ALL_BLIND:
        others = {b for var, b in bodies if var != t.variant}
        assert t.vulnerable not in others and t.fixed not in others, t.key
    keys = [t.key for t in earlier] + [t.key for _x, t in ALL_BLIND]
    assert len(keys) == len(set(keys))


def _top_level_names(src: str) -> list[str]:
    names = []
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [n.id for n in node.targets if isinstance(n, ast.Name)]
    return names


@pytest.mark.parametrize("t", [t for _x, t in ALL_BLIND], ids=lambda t: t.key)
def test_template_shape(t):
    marked = [ln for ln in t.vulnerable.splitlines() if ln.rstrip().endswith(MARK)]
    assert 1 <= len(marked) <= 2 and t.vulnerable.count(MARK) == len(marked)
    assert MARK not in t.fixed and MARK not in t.imports


@pytest.mark.parametrize("t", [t for _x, t in ALL_BLIND], ids=lambda t: t.key)
def test_pair_renders_parses_injects_and_marks_only_the_vulnerable_twin(t):
    for seed in range(4):
        imp, body_v, bad_v = render(t, True, random.Random(seed))
        imp_f, body_f, bad_f = render(t, False, random.Random(seed))
        assert imp == imp_f and bad_v and not bad_f and MARK not in body_v + body_f and body_v != body_f
        compile(imp + "\n\n" + body_v + "\n", "v.py", "exec", flags=0x400)
        compile(imp + "\n\n" + body_f + "\n", "f.py", "exec", flags=0x400)
        # the fixed twin defines what the vulnerable one does (same job, same API), plus at most
        # helpers of its own (y/z's 502 fix adds a restricted unpickler class)
        assert set(_top_level_names(body_v)) <= set(_top_level_names(body_f))
        for host in (HOST, ""):
            code, bad = inject(host, t, True, random.Random(seed))
            lines = code.splitlines()
            assert bad and all(lines[b - 1].strip() and lines[b - 1].strip() in body_v for b in bad)
            compile(code, "h.py", "exec", flags=0x400)
            code_f, bad_f2 = inject(host, t, False, random.Random(seed))
            assert not bad_f2 and MARK not in code_f
            compile(code_f, "hf.py", "exec", flags=0x400)


@pytest.mark.parametrize("t", [t for _x, t in ALL_BLIND], ids=lambda t: t.key)
def test_template_compiles_with_every_placeholder_name(t):
    # every variable / function name the renderer can draw must give valid code (no clashes)
    for v in mutations._VAR:
        for f in ("handle", "handle_" + v):
            for src in (t.vulnerable, t.fixed):
                body = "\n".join(ln.replace("  " + MARK, "") for ln in src.format(f=f, v=v, t="users").splitlines())
                compile(t.imports.format(f=f, v=v, t="users") + "\n\n" + body + "\n", "n.py", "exec", flags=0x400)
