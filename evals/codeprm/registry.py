"""One registry of the held-out template sets (evaluation data of the codeprm tab).

Each set is a module ``evals/codeprm/heldout_<name>.py`` holding 13 or 26 vulnerable/fixed
templates (``TEMPLATES_<NAME>``), one or two template variants per CWE family, written apart
from the training templates in ``evals/codeprm/mutations.py``. A set's ``role`` says what it may
be used for:

- ``"test"``: the current test sets, read only by ``benchmarks/codeprm_eval.py``;
- ``"validation"``: sets already evaluated once, embedded in the validation hosts by
  ``benchmarks/codeprm_select.py`` (``select_seed``) and never by a training builder;
- ``"selection"``: the validation variant ``v`` used for model selection only.

``eval_seed`` seeds the embedding into the test hosts, ``select_seed`` the embedding into the
validation hosts (``None``: the set is not embedded there). ``extra_train`` marks the sets that
``evals/codeprm/dataset.py --extra-train`` may turn into training templates (off by default).

>>> [s.name for s in SETS][:3], len(templates("f"))
(['d', 'e', 'v'], 26)
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from evals.codeprm.mutations import Template


@dataclass(frozen=True)
class HeldoutSet:
    """One held-out template set: its module suffix, variants, role and embedding seeds."""

    name: str
    variants: tuple[str, ...]
    role: str
    eval_seed: int | None = None
    select_seed: int | None = None
    extra_train: bool = False

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(f"evals.codeprm.heldout_{self.name}")

    @property
    def templates(self) -> list[Template]:
        return list(getattr(self.module, f"TEMPLATES_{self.name.upper()}"))


def _pair(name: str) -> tuple[str, str]:
    """The two variants of a set named after its first: f -> (f, g), aa -> (aa, ab)."""
    return name, name[:-1] + chr(ord(name[-1]) + 1)


def _set(name: str, role: str, eval_seed: int | None, select_seed: int | None, extra_train: bool = False) -> HeldoutSet:
    return HeldoutSet(name, _pair(name), role, eval_seed, select_seed, extra_train)


SETS: list[HeldoutSet] = [
    HeldoutSet("d", ("d",), "test", eval_seed=20261130),
    HeldoutSet("e", ("e",), "validation", eval_seed=20261201, select_seed=20261203),
    HeldoutSet("v", ("v",), "selection", select_seed=20261199),
    _set("f", "validation", 20261202, 20261204, extra_train=True),
    _set("h", "validation", 20261205, 20261207, extra_train=True),
    _set("j", "validation", 20261206, 20261208, extra_train=True),
    _set("l", "validation", 20261209, 20261210, extra_train=True),
    _set("n", "validation", 20261211, 20261212, extra_train=True),
    _set("p", "validation", 20261213, 20261214),
    _set("r", "validation", 20261215, 20261216),
    _set("t", "validation", 20261218, 20261219),
    _set("w", "validation", 20261220, 20261221),
    _set("y", "validation", 20261222, 20261223),
    _set("aa", "validation", 20261224, 20261225),
    _set("ac", "validation", 20261226, 20261227),
    _set("ae", "validation", 20261228, 20261229),
    _set("ag", "validation", 20261230, 20261231),
    _set("ai", "validation", 20261232, 20261233),
    _set("ak", "validation", 20261234, 20261235),
    _set("am", "validation", 20261236, 20261237),
    _set("ao", "validation", 20261238, 20261239),
    _set("aq", "validation", 20261240, 20261241),
    _set("as", "test", 20261242, None),
    _set("au", "test", 20261244, None),
]
BY_NAME: dict[str, HeldoutSet] = {s.name: s for s in SETS}


def get(name: str) -> HeldoutSet:
    """The set called ``name``; ValueError naming the known sets otherwise."""
    if name not in BY_NAME:
        raise ValueError(f"unknown held-out set {name!r}; choose one of {', '.join(BY_NAME)}")
    return BY_NAME[name]


def templates(name: str) -> list[Template]:
    """The templates of set ``name``."""
    return get(name).templates


def all_templates() -> list[Template]:
    """Every held-out template, all sets."""
    return [t for s in SETS for t in s.templates]
