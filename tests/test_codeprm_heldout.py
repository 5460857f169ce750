"""The held-out template sets of the codeprm tab (evals/codeprm/registry.py): one data check per set.

Each set covers the 13 CWE families once per variant, renders, parses and injects with only its
vulnerable twin marked, compiles with every placeholder name, and is out of reach of the training
builders; the sets are pairwise distinct and distinct from the training templates.
"""
from __future__ import annotations

import ast
import doctest
import random
import re
from pathlib import Path

import pytest

from evals.codeprm import mutations, registry
from evals.codeprm.embed import host_of
from evals.codeprm.mutations import MARK, inject, render

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ("x = 1\n\n\ndef g(a):\n    return a\n\n\ny = 2\n", "")
# the training builders: they reach templates only through mutations.templates(split) and, by an
# explicit option, the registry's extra_train sets (evals/codeprm/dataset.py --extra-train)
TRAINING_BUILDERS = [ROOT / "evals" / "codeprm" / "synth.py", *sorted((ROOT / "scripts").glob("*.py"))]


def _top_level_names(src: str) -> list[str]:
    names = []
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [n.id for n in node.targets if isinstance(n, ast.Name)]
    return names


def _check_template(t) -> None:
    marked = [ln for ln in t.vulnerable.splitlines() if ln.rstrip().endswith(MARK)]
    assert 1 <= len(marked) <= 2 and t.vulnerable.count(MARK) == len(marked), t.key
    assert MARK not in t.fixed and MARK not in t.imports, t.key
    for seed in range(4):
        imp, body_v, bad_v = render(t, True, random.Random(seed))
        imp_f, body_f, bad_f = render(t, False, random.Random(seed))
        assert imp == imp_f and bad_v and not bad_f and MARK not in body_v + body_f and body_v != body_f, t.key
        compile(imp + "\n\n" + body_v + "\n", "v.py", "exec", flags=0x400)
        compile(imp + "\n\n" + body_f + "\n", "f.py", "exec", flags=0x400)
        # the fixed twin defines what the vulnerable one does (same job, same API), plus at most helpers
        assert set(_top_level_names(body_v)) <= set(_top_level_names(body_f)), t.key
        for host in HOSTS:
            code, bad = inject(host, t, True, random.Random(seed))
            lines = code.splitlines()
            assert bad and all(lines[b - 1].strip() and lines[b - 1].strip() in body_v for b in bad), t.key
            compile(code, "h.py", "exec", flags=0x400)
            code_f, bad_f2 = inject(host, t, False, random.Random(seed))
            assert not bad_f2 and MARK not in code_f, t.key
            compile(code_f, "hf.py", "exec", flags=0x400)
    # every variable / function name the renderer can draw gives valid code (no clashes)
    for v in mutations._VAR:
        for f in ("handle", "handle_" + v):
            for src in (t.vulnerable, t.fixed):
                body = "\n".join(ln.replace("  " + MARK, "") for ln in src.format(f=f, v=v, t="users").splitlines())
                compile(t.imports.format(f=f, v=v, t="users") + "\n\n" + body + "\n", "n.py", "exec", flags=0x400)


@pytest.mark.parametrize("hs", registry.SETS, ids=[s.name for s in registry.SETS])
def test_heldout_set(hs):
    mod, tpls = hs.module, hs.templates
    # one template per family and variant, unique keys, the module's own names agree
    assert tuple(getattr(mod, "VARIANTS", hs.variants)) == hs.variants
    assert getattr(mod, f"FAMILIES_{hs.name.upper()}") == mutations.FAMILIES
    assert len(tpls) == len(hs.variants) * len(mutations.FAMILIES) and len({t.key for t in tpls}) == len(tpls)
    for var in hs.variants:
        assert sorted(t.cwe for t in tpls if t.variant == var) == mutations.FAMILIES, var
    assert doctest.testmod(mod).failed == 0
    # no training or validation builder can reach it
    assert all(t.variant not in hs.variants for t in mutations.TEMPLATES)
    for split in ("train", "val", "test"):
        assert all(t.variant not in hs.variants for t in mutations.templates(split))
    for var in hs.variants:
        with pytest.raises(ValueError):
            mutations.templates(var)
    assert hs.role in ("test", "validation", "selection")
    if hs.role != "validation":
        assert not hs.extra_train
    if hs.role == "test":
        assert hs.select_seed is None and hs.eval_seed is not None
    for t in tpls:
        _check_template(t)


def test_registry_is_the_only_door_to_the_sets():
    assert len({s.name for s in registry.SETS}) == len(registry.SETS)
    variants = [v for s in registry.SETS for v in s.variants]
    assert len(variants) == len(set(variants))
    with pytest.raises(ValueError, match="unknown held-out set"):
        registry.get("zz")
    assert doctest.testmod(registry).failed == 0
    for path in TRAINING_BUILDERS:
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported |= {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        assert not any("heldout_" in m or m.endswith("registry") for m in imported), path
    files = {p.name for p in (ROOT / "evals" / "codeprm").glob("heldout_*.py")}
    assert files == {f"heldout_{s.name}.py" for s in registry.SETS}


def test_sets_are_distinct_from_each_other_and_from_the_training_templates():
    every = list(mutations.TEMPLATES) + registry.all_templates()
    keys = [t.key for t in every]
    assert len(keys) == len(set(keys))
    bodies = [(t.variant, b) for t in every for b in (t.vulnerable, t.fixed)]
    for t in registry.all_templates():
        others = {b for var, b in bodies if var != t.variant}
        assert t.vulnerable not in others and t.fixed not in others, t.key


def test_training_templates_render_and_inject():
    assert doctest.testmod(mutations).failed == 0
    for t in mutations.TEMPLATES:
        _check_template(t)


def test_eval_recovers_the_test_host_exactly():
    host = "import os\n\n\ndef g(a):\n    return a\n\n\nclass K:\n    x = 1\n\n\ny = 2\n"
    for seed in range(4):
        for t in mutations.templates("test"):
            for vul in (True, False):
                for h in (host, ""):
                    code, _ = inject(h, t, vul, random.Random(seed))
                    item = {"code": code, "vulnerable": vul, "pkg": "p", "template": t.key, "pair": 0}
                    _, hl = host_of(item, t)
                    assert ("\n".join(hl) + "\n" if hl else "") == h


def test_no_heldout_variant_in_the_built_split_files():
    folder = ROOT / "data" / "codeprm"
    if not (folder / "train.jsonl").is_file():
        pytest.skip("data/codeprm/*.jsonl not built (make data-codeprm); the builders are checked above")
    held = {v for s in registry.SETS for v in s.variants}
    rx = re.compile(r'"template": "cwe\d+-([a-z]+)"')
    for split in ("train", "val", "test"):
        p = folder / f"{split}.jsonl"
        if p.is_file():
            with open(p) as fh:
                found = {m.group(1) for ln in fh for m in [rx.search(ln)] if m}
            assert not found & held, (split, found & held)
