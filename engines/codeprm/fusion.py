"""The one scoring path: analyser findings and the step model's risks -> flagged steps, step
risks, the file's risk and its verdict. ``scan``, ``file_risk``, ``rank`` and the benchmark all
call :func:`score_steps`; the benchmark's baselines are its ``method`` argument.

A step is *flagged* by
* the analysers: it holds an analyser finding in the tab's CWE families on a line with code,
  whatever the finding's severity (the scanner is at least as sensitive as any analyser it runs);
* the model: its risk m is at least the model's threshold, the step holds code, and it holds a
  sink of a CWE family (``cwe.sinks_in``: a family's calls and expressions; with
  ``PRMConfig.wide_sinks`` also a call of a function of the same code that holds one, and in the
  line being written any call a name cut short can become): the flag
  names that call or expression, and its CWE is the sink's family. In code that parses, the family must also be one where the model's own flags
  were at least as precise as the analysers' on dev (``PRMConfig.model_flag_cwes``); elsewhere the
  model only orders steps. In code that does not parse (a prefix being written) it flags where its
  dev-chosen prefix threshold says, in the families where that added recall on dev
  (``PRMConfig.prefix_flag_cwes``); in the others the analysers alone flag.

Step risks keep flagged steps above unflagged ones, and analysers' flags above the model's; the
model orders steps within each level, with weight w (earned on dev; w = 0 is the analysers):
analysers 0.99 + 0.01 w m, model 0.5 + 0.48 m, unflagged 0.49 w m. The file's risk is the
paper's soft minimum of step safety (``engine.aggregate``); the verdict is "vulnerable" exactly
when some step is flagged, so it always names what flagged it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.codeprm.aggregation import aggregate
from engines.codeprm.config import PRMConfig
from engines.codeprm.cwe import Sink, helper_sinks, sinks_in, title
from engines.codeprm.findings import Finding
from engines.codeprm.steps import Span, step_of

ANALYSER_LEVEL = 0.99
FLAG_LEVEL = 0.5
MODEL_SPAN = 0.48
METHODS = ("bandit", "bandit confident", "CodeShield", "analysers", "model alone", "fused")


@dataclass
class Scored:
    """Everything one piece of code scores to."""

    risks: np.ndarray           # (S,) step risks
    model: np.ndarray           # (S,) the model's own step risks (zeros when it did not run)
    by_analysers: np.ndarray    # (S,) bool
    by_model: np.ndarray        # (S,) bool
    model_findings: dict[int, Finding]  # step -> the finding naming the sink a model flag is about
    risk: float
    verdict: str

    @property
    def flagged(self) -> np.ndarray:
        return self.by_analysers | self.by_model

    def drivers(self) -> list[str]:
        """What flagged each step: "analysers", "model", "analysers + model" or ""."""
        return ["analysers + model" if a and m else "analysers" if a else "model" if m else ""
                for a, m in zip(self.by_analysers, self.by_model)]


def verdict(flagged) -> str:
    """The verdict of a piece of code from its flagged steps."""
    return "vulnerable" if bool(np.any(flagged)) else "safe"


def _counts(method: str, f: Finding) -> bool:
    if not f.family:
        return False
    if method == "bandit":
        return f.source == "bandit"
    if method == "bandit confident":
        return f.source == "bandit" and f.confident
    if method == "CodeShield":
        return f.source == "codeshield"
    return method in ("analysers", "fused")


def analyser_flags(spans: list[Span], findings: list[Finding], method: str = "fused") -> np.ndarray:
    """The steps that hold a finding the method counts.

    >>> analyser_flags([Span(1, 2), Span(4, 5)], [Finding(5, 78, "bandit:B602", "", "bandit", "low")]).tolist()
    [False, True]
    """
    out = np.zeros(len(spans), bool)
    for f in findings:
        k = step_of(spans, f.line)
        if k >= 0 and _counts(method, f):
            out[k] = True
    return out


def _sink_for(sinks: list[Sink], hot: int, allowed) -> Sink | None:
    ok = [s for s in sinks if allowed is None or s.family in allowed]
    return min(ok, key=lambda s: (abs(s.line - hot), s.line)) if ok else None


def model_finding(sink: Sink, risk: float) -> Finding:
    """The finding a model-only flag carries: the sink it is about and that sink's family."""
    return Finding(sink.line, sink.family, "codeprm:model",
                   f"{title(sink.family)} The step model scores this step {risk:.2f} at `{sink.text}` "
                   "(no analyser rule matched).", "model")


def score_steps(lines: list[str], spans: list[Span], model: np.ndarray | None, findings: list[Finding],
                cfg: PRMConfig, parses: bool, code: set[int], hot: list[int] | None = None,
                method: str = "fused", partial: bool = False) -> Scored:
    """Score one piece of code (see the module docstring).

    ``lines``: its lines (``lines.split_lines``); ``model``: the model's step risks (None when it
    did not run); ``code``: the lines that hold code (``lines.code_lines``); ``hot``: each step's
    hot line (where the model's attention points); ``method``: "fused", or a baseline of
    ``METHODS``; ``partial``: the code is a prefix, so its last step is being written: the
    model reads it as it reads code that does not parse (the analysers cannot see a call not
    yet finished), and a call name cut short at its end names the calls it can become.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    S = len(spans)
    m = np.zeros(S) if model is None else np.clip(np.asarray(model, float), 0.0, 1.0)
    by_a = analyser_flags(spans, findings, method) if method != "model alone" else np.zeros(S, bool)
    by_m = np.zeros(S, bool)
    named: dict[int, Finding] = {}
    helpers: dict[str, int] | None = None  # the code's own functions that hold a sink (read once, when needed)
    use_model = model is not None and method in ("fused", "model alone")
    if use_model:
        for k, sp in enumerate(spans):
            writing = partial and k == S - 1
            as_prefix = not parses or writing
            t = cfg.solo_threshold if method == "model alone" else (cfg.prefix_flag_threshold if as_prefix
                                                                      else cfg.model_flag_threshold)
            allowed = None
            if method == "fused":
                allowed = set(cfg.model_flag_cwes) if not as_prefix else (
                    None if cfg.prefix_flag_cwes is None else set(cfg.prefix_flag_cwes))
            if m[k] < t:
                continue
            rows = [ln for ln in range(sp.start, sp.end + 1) if ln in code]
            if not rows:
                continue  # a step with no code is never flagged
            if helpers is None:
                helpers = helper_sinks([ln_text if i + 1 in code else "" for i, ln_text in enumerate(lines)]) \
                    if cfg.wide_sinks else {}
            sink = _sink_for(sinks_in([lines[ln - 1] if ln in code else "" for ln in range(sp.start, sp.end + 1)],
                                      sp.start, writing, helpers, wide=cfg.wide_sinks), hot[k] if hot else sp.start,
                             allowed)
            if sink is not None:
                by_m[k] = True
                if not by_a[k]:
                    named[k] = model_finding(sink, float(m[k]))
    w = 0.0 if not use_model or method != "fused" else (cfg.model_weight if parses else cfg.prefix_model_weight)
    if method == "model alone":
        w = 1.0
    risks = np.where(by_a, ANALYSER_LEVEL + (1 - ANALYSER_LEVEL) * w * m,
                     np.where(by_m, FLAG_LEVEL + MODEL_SPAN * m, (FLAG_LEVEL - 0.01) * w * m))
    risk = aggregate(risks, cfg)[0] if S else 0.0
    return Scored(risks, m, by_a, by_m, named, risk, verdict(by_a | by_m))
