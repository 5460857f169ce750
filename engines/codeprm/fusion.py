"""Fuse the learned step model with the analysers, so that the scanner is never weaker than
the analysers it runs.

Per step k, with m_k the model's risk, w the model's weight (earned on dev, 0 when the model
does not beat the analysers there) and A the analyser level:

* a step holding a *confident* analyser finding has risk A + (1 - A) w m_k: it is flagged
  whatever the model says, and the model only orders such steps among themselves;
* any other step has risk C w m_k, with C < A: the model adds risk where the analysers are
  silent or blind (prefixes that do not parse, string building, aliases and wrappers), but can
  never outrank a confident finding.

So on every comparison the analysers decide (flagged above unflagged), the fused order equals the
analysers' order, and the model only breaks the analysers' ties; with w = 0 the fused scanner is
exactly the analysers. Each step also records what
drove it: ``"analysers"``, ``"model"``, ``"analysers + model"`` or ``""``.
"""
from __future__ import annotations

import numpy as np

from engines.codeprm.findings import Finding
from engines.codeprm.steps import Span

ANALYSER_LEVEL = 0.99
MODEL_CAP = 0.98


def flagged_steps(spans: list[Span], findings: list[Finding], confident_only: bool = True) -> np.ndarray:
    """1.0 for each step that holds a (confident) finding, else 0.0.

    >>> flagged_steps([Span(1, 2), Span(4, 5)], [Finding(5, 78, "bandit:B602", "", "bandit")]).tolist()
    [0.0, 1.0]
    """
    out = np.zeros(len(spans))
    starts = np.array([s.start for s in spans])
    for f in findings:
        if confident_only and not f.confident:
            continue
        k = int(np.searchsorted(starts, f.line, side="right")) - 1
        if k >= 0 and spans[k].start <= f.line <= spans[k].end:
            out[k] = 1.0
    return out


def fuse_steps(model_risk, flagged, model_weight: float) -> np.ndarray:
    """Fused step risks (see the module docstring).

    >>> fuse_steps(np.array([0.2, 0.9]), np.array([1.0, 0.0]), 1.0).round(4).tolist()
    [0.992, 0.882]
    >>> fuse_steps(np.array([0.2, 0.9]), np.array([1.0, 0.0]), 0.0).round(4).tolist()
    [0.99, 0.0]
    """
    m = np.clip(np.asarray(model_risk, float), 0.0, 1.0)
    fl = np.asarray(flagged, float) > 0
    w = float(model_weight)
    return np.where(fl, ANALYSER_LEVEL + (1.0 - ANALYSER_LEVEL) * w * m, MODEL_CAP * w * m)


def drivers(model_risk, flagged, model_weight: float, step_threshold: float) -> list[str]:
    """What drove each step: the analysers, the model (its weighted risk at or above
    ``step_threshold``: the scan passes the lower of the step and verdict thresholds, so a file
    the model calls vulnerable always names a step), both, or nothing.

    >>> drivers([0.9, 0.9, 0.1], [1.0, 0.0, 0.0], 1.0, 0.5)
    ['analysers + model', 'model', '']
    """
    out = []
    for m, f in zip(np.asarray(model_risk, float), np.asarray(flagged, float)):
        by_model = MODEL_CAP * model_weight * m >= step_threshold and model_weight > 0
        out.append("analysers + model" if f and by_model else "analysers" if f else "model" if by_model else "")
    return out
