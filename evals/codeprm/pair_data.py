"""Fix pairs turned into step-level training / evaluation arrays (LM features, diff labels,
analyser flags), shared by the training script and the benchmark."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.codeprm.lm import LMConfig
from engines.codeprm.steps import Span, split_steps
from evals.codeprm.analyser_cache import SOURCES, findings
from evals.codeprm.lm_cache import features
from evals.codeprm.pairs import FixPair
from evals.codeprm.step_labels import pair_lines, risky_steps


@dataclass
class Side:
    """One version of a pair: its steps, LM features (S, n_layers, 2, D), step label, step weight
    and analyser flags per source (S,)."""

    code: str
    spans: list[Span]
    feats: np.ndarray
    y: np.ndarray
    w: np.ndarray
    flags: dict[str, np.ndarray]


@dataclass
class PairData:
    pair: FixPair
    vul: Side
    fix: Side


def _flags(spans: list[Span], fs: dict) -> dict[str, np.ndarray]:
    out = {}
    starts = np.array([s.start for s in spans])
    for src in SOURCES:
        f = np.zeros(len(spans), dtype=np.float32)
        for x in fs.get(src, []):
            k = int(np.searchsorted(starts, x.line, side="right")) - 1
            if k >= 0 and spans[k].start <= x.line <= spans[k].end:
                f[k] = 1.0
        out[src] = f
    return out


def build(pairs: list[FixPair], cfg: LMConfig, compute: bool = True, log=print) -> list[PairData]:
    """Arrays for each pair; train pairs carry LM features of the windows the fix touched only,
    dev/test pairs of every window. Pairs whose features are missing (``compute=False``) are left out."""
    an = findings([c for p in pairs for c in (p.before, p.after)])
    out = []
    for i, p in enumerate(pairs):
        sv, sf = split_steps(p.before, cfg.max_step_lines), split_steps(p.after, cfg.max_step_lines)
        removed, added, near = pair_lines(p.before, p.after, p.vul_lines, p.fix_lines)
        rv = risky_steps(sv, removed | near)
        cf = risky_steps(sf, added) or risky_steps(sf, removed | near)
        train = p.split == "train"
        fv = features(p.before, cfg, only_steps=(rv or {0}) if train else None, compute=compute)
        ff = features(p.after, cfg, only_steps=(cf or {0}) if train else None, compute=compute)
        if fv is None or ff is None or not rv:
            continue
        flv, flf = _flags(sv, an[2 * i]), _flags(sf, an[2 * i + 1])
        yv = np.zeros(len(sv), dtype=np.float32)
        yv[list(rv)] = 1.0
        wv = np.full(len(sv), 0.3, dtype=np.float32)
        wv[list(rv)] = 1.0
        yf = np.zeros(len(sf), dtype=np.float32)
        wf = np.full(len(sf), 0.3, dtype=np.float32)
        wf[list(cf)] = 1.0
        # analyser labels: a flagged step the diff does not speak for counts as risky (weaker)
        for y, w, fl, keep in ((yv, wv, flv, rv), (yf, wf, flf, cf)):
            an_flag = np.maximum(fl["bandit"], fl["codeshield"]) > 0
            for k in np.flatnonzero(an_flag):
                if k not in keep:
                    y[k], w[k] = 1.0, 0.5
        out.append(PairData(p, Side(p.before, sv, fv.feats, yv, wv, flv), Side(p.after, sf, ff.feats, yf, wf, flf)))
        if (i + 1) % 200 == 0:
            log(f"  built {i + 1}/{len(pairs)}")
    return out
