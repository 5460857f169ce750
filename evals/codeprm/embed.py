"""Embedding held-out templates into the hosts of the test or validation split.

A pair of ``data/codeprm/{test,val}.jsonl`` is a host (a package chunk, or nothing) with one
vulnerable/fixed template injected; ``host_of`` takes the template out again and
``variant_items`` injects another set's template of the same CWE family into the same host, so
every set is measured on the same hosts. ``pair_acc`` and ``prefix`` are the metrics' helpers.
"""
from __future__ import annotations

import numpy as np

from evals.codeprm import registry


def pair_acc(scores: np.ndarray, labels: np.ndarray, pairs: np.ndarray, thr: float) -> float:
    ok = []
    for p in np.unique(pairs):
        idx = np.where(pairs == p)[0]
        v = idx[labels[idx] == 1]
        f = idx[labels[idx] == 0]
        if len(v) and len(f):
            ok.append(scores[v[0]] >= thr and scores[f[0]] < thr)
    return float(np.mean(ok))


def prefix(code: str, frac: float = 0.5) -> str:
    lines = code.splitlines()
    return "\n".join(lines[: max(1, int(round(len(lines) * frac)))]) + "\n"


def _body_regex(src: str):
    """Regex matching a template source rendered with any names."""
    import re

    s = src.replace("{f}", "\x00F").replace("{v}", "\x00V").replace("{t}", "\x00T")
    s = s.replace("{{", "{").replace("}}", "}")
    lines = [ln.replace("  " + "#!V", "").replace("#!V", "").rstrip() for ln in s.splitlines()]
    pat = re.escape("\n".join(lines))
    for k in ("\x00F", "\x00V", "\x00T"):
        pat = pat.replace(re.escape(k), r"\w+")
    return re.compile(pat), len(lines)


def host_of(item: dict, tpl) -> tuple[str, list[str]]:
    """Recover the host chunk a template was injected into (inverse of mutations.inject)."""
    from evals.codeprm.mutations import render

    lines = item["code"].rstrip("\n").splitlines()
    imports, _, _ = render(tpl, bool(item["vulnerable"]), __import__("random").Random(0))
    n_imp = len(imports.splitlines()) + (1 if imports else 0)
    assert not imports or lines[: n_imp - 1] == imports.splitlines(), item["template"]
    rest = lines[n_imp:]
    rx, nb = _body_regex(tpl.vulnerable if item["vulnerable"] else tpl.fixed)
    for at in range(len(rest) - nb):
        if rest[at] == "" and rest[at + 1 + nb: at + 2 + nb] in ([""], []) and rx.fullmatch("\n".join(rest[at + 1: at + 1 + nb])):
            return item["pkg"], rest[:at] + rest[at + 2 + nb:]
    raise ValueError(f"template {item['template']} not found in pair {item['pair']}")


def variant_items(items: list[dict], new_templates, seed: int, tag: str, old_templates=None) -> list[dict]:
    """The pairs of ``items`` re-made with the template of another variant, same family and host.

    Each pair keeps its host (the same package chunk, or standalone), its pair id and its CWE
    family; the old template is taken out of the host (``host_of``) and the new variant's
    template of that family is injected instead (evals/codeprm/dataset.py's ``injected`` /
    ``make_item``, seeded)."""
    import random

    from evals.codeprm.dataset import injected, make_item
    from evals.codeprm.mutations import TEMPLATES

    by_key = {t.key: t for t in (old_templates or TEMPLATES)}
    new_of: dict[int, list] = {}
    for t in new_templates:
        new_of.setdefault(t.cwe, []).append(t)
    rng = random.Random(seed)
    out = []
    for p in sorted({it["pair"] for it in items if it.get("pair") is not None}):
        twins = [it for it in items if it["pair"] == p]
        hosts = {(host_of(it, by_key[it["template"]])[0], tuple(host_of(it, by_key[it["template"]])[1])) for it in twins}
        assert len(hosts) == 1, f"pair {p}: twins disagree on the host"
        pkg, hl = hosts.pop()
        host = "\n".join(hl) + "\n" if hl else ""
        family = new_of[by_key[twins[0]["template"]].cwe]
        for k, tpl in enumerate(family):  # one pair per template of the family, same host
            s = rng.randrange(1 << 30)
            pid = p if len(family) == 1 else p * 10 + k
            for vul in (True, False):
                code, bad, span, _ = injected(host, tpl, vul, s)
                out.append(make_item(code, pkg, tag, tpl, vul, bad, span, pair=pid))
    return out


def held_out_items(items: list[dict], variant: str) -> list[dict]:
    """The test pairs of ``items`` (variant c) re-made with a held-out variant's templates, same
    family and host (every template of the family in turn, so f/h/j give 520 pairs)."""
    s = registry.get(variant)
    if s.eval_seed is None:
        raise ValueError(f"set {variant!r} is not embedded in the test hosts")
    return variant_items(items, s.templates, s.eval_seed, f"test-{variant}")
