"""CodePRM: scan Python code step by step, give a risk-sensitive verdict, rank continuations.

One scan parses the code once (never imports or executes it) and walks one way: steps ->
model -> analysers -> :func:`fusion.score_steps` -> result. Step risks come from the learned
step model (a small causal CNN, ``model.py``; onnxruntime or torch) trained on analyser step
labels of real code and on real vulnerability fixes; findings with CWE ids come from the
analysers (bandit, Meta's CodeShield rules run by semgrep). Every analyser finding in the tab's
CWE families flags its step; the model flags a step only where it names a sink and has earned
it on dev, and otherwise orders steps. ``scan``, ``scan_many``, ``file_risk`` and ``rank`` share
one private scoring function, and the benchmark calls the same ``fusion.score_steps``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engines.codeprm.aggregation import aggregate, softmin_safety, topk_safe_ratio
from engines.codeprm.config import PRMConfig
from engines.codeprm.features import Features, featurize
from engines.codeprm.cwe import named, title
from engines.codeprm.findings import LEVELS, Failure, Finding
from engines.codeprm.fusion import FLAG_LEVEL, Scored, score_steps
from engines.codeprm.parsing import CodeTooLarge, EmptyCode, NotPython, check_code, parse_once
from engines.codeprm.repair import repair
from engines.codeprm.source import Source
from engines.codeprm.tokens import Lexer
from engines.common.errors import InputError, ShowcaseError
from engines.common.paths import ASSETS_DIR

ASSET_DIR = ASSETS_DIR / "codeprm"
BACKENDS = ("onnx", "torch")
__all__ = ["CodePRM", "CodeTooLarge", "EmptyCode", "NotPython", "ScanResult", "StepResult", "aggregate",
           "default_prm", "parse_once"]


@dataclass
class StepResult:
    """One scored step. ``score`` is the security score in [0, 1] (1 = secure), ``risk`` = 1 - score."""

    index: int
    start_line: int
    end_line: int
    text: str
    score: float
    hot_line: int
    findings: list[Finding] = field(default_factory=list)
    model_score: float | None = None  # the model's own score before fusing with the analysers
    driver: str = ""  # what flagged the step: "analysers", "model", "analysers + model" or ""

    @property
    def risk(self) -> float:
        return 1.0 - self.score

    @property
    def weakness(self) -> Finding | None:
        """The finding that drives this step's verdict: of a step the analysers flag, their
        finding in a tab family that says most (a traced flow from input to sink first, then the
        most severe and confident); of a step only the model flags, the model's; else None."""
        if not self.driver:
            return None
        by_model = [f for f in self.findings if f.source == "model"]
        found = [f for f in self.findings if f.source != "model" and f.family]
        if not found or not self.driver.startswith("analysers"):
            return by_model[0] if by_model else (found[0] if found else None)
        return max(found, key=lambda f: (f.trace is not None, _rank(f.severity), _rank(f.confidence),
                                         f.source in ("taint", "settings"), -f.line))

    def weakness_dict(self) -> dict | None:
        """The weakness as the tab shows it: the CWE that names it and its title."""
        f = self.weakness
        if f is None:
            return None
        cwe = named(f.cwe, f.family)
        return {"cwe": f"CWE-{cwe}", "title": title(cwe), "line": f.line, "rule": f.rule, "source": f.source,
                "explanation": f.explanation}

    def to_dict(self) -> dict:
        return {"index": self.index, "start_line": self.start_line, "end_line": self.end_line, "text": self.text,
                "score": round(self.score, 6), "risk": round(self.risk, 6), "hot_line": self.hot_line,
                "model_score": None if self.model_score is None else round(self.model_score, 6),
                "driver": self.driver, "weakness": self.weakness_dict(),
                "findings": [f.to_dict() for f in self.findings]}


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else -1


class RankedCandidate(dict):
    """One row of :meth:`CodePRM.rank`: ``rank``, ``index``, ``candidate``, ``parses``, ``verdict``,
    ``topk_safe_ratio``, ``reward``, ``mean_score``, ``min_score``, ``n_steps``, read as a dict."""

    def to_dict(self) -> dict:
        """The row as plain JSON, scores to 4 places."""
        return {k: round(float(v), 4) if isinstance(v, float) else v for k, v in self.items()}


@dataclass
class ScanResult:
    """The scan of one piece of code: steps, aggregate risk, verdict and what drove it.

    ``threshold`` is the step risk at or above which a step is flagged; the verdict is
    "vulnerable" exactly when a step is flagged, "incomplete" when none is but an analyser could
    not read the code (``failures`` says which and why: a file is never called safe because an
    analyser gave up), else "safe". ``writing`` is, for a partial scan, the index of the step
    being written (the last one). ``lines`` are the scanned text's lines as Python numbers them
    (what the tab shows)."""

    steps: list[StepResult]
    risk: float
    verdict: str
    threshold: float
    drivers: list[int]
    partial: bool
    syntax_error: str | None
    n_lines: int
    path: str = "snippet.py"
    analysers: bool = True
    writing: int | None = None
    failures: list[Failure] = field(default_factory=list)
    lines: list[str] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        return (f"ScanResult(verdict={self.verdict!r}, risk={self.risk:.3f}, steps={len(self.steps)}, "
                f"flagged={sum(bool(s.driver) for s in self.steps)}, findings={len(self.findings)})")

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.steps for f in s.findings]

    def to_dict(self) -> dict:
        return {"path": self.path, "verdict": self.verdict, "risk": round(self.risk, 6),
                "threshold": round(self.threshold, 6), "partial": self.partial, "syntax_error": self.syntax_error,
                "n_lines": self.n_lines, "analysers": self.analysers, "drivers": self.drivers,
                "writing": self.writing, "failures": [f.to_dict() for f in self.failures],
                "steps": [s.to_dict() for s in self.steps]}

    def brief_dict(self) -> dict:
        """The scan without its steps' text and scores: verdict, risk, findings, the flagged steps with
        the weakness each holds, drivers, failures (what an agent's tool call answers)."""
        return {"verdict": self.verdict, "risk": round(float(self.risk), 4), "threshold": round(float(self.threshold), 4),
                "steps": len(self.steps), "findings": [f.to_dict() for f in self.findings],
                "flagged_steps": [{"step": s.index + 1, "lines": [s.start_line, s.end_line], "flagged_by": s.driver,
                                   "weakness": s.weakness_dict()} for s in self.steps if s.driver],
                "drivers": [i + 1 for i in self.drivers], "failures": [f.to_dict() for f in self.failures],
                "syntax_error": self.syntax_error}

    @property
    def code(self) -> str:
        """The scanned text (BOM dropped, Python's line ends, tabs expanded)."""
        return "\n".join(self.lines) + ("\n" if self.lines else "")

    def to_json(self, indent: int | None = 2) -> str:
        """The scan as JSON (what the tab's JSON download holds)."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_sarif(self) -> dict:
        """The scan as a SARIF 2.1.0 log (one run)."""
        from engines.codeprm.sarif import to_sarif

        return to_sarif([self])


@dataclass
class _Piece:
    """One piece of code on its way through the scoring path: its :class:`Source` and what the
    model and the analysers said of it."""

    src: Source
    model: np.ndarray | None = None
    hot: list[int] = field(default_factory=list)
    found: list[Finding] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


class CodePRM:
    """The step-level security process reward model, fused with the analysers.

    >>> prm = CodePRM.load()                                         # doctest: +SKIP
    >>> prm.scan("import os\\nos.system('ls ' + input())").verdict   # doctest: +SKIP
    'vulnerable'
    """

    def __init__(self, cfg: PRMConfig, backend: str, model=None, session=None, vocab: dict | None = None) -> None:
        self.cfg = cfg
        self.backend = backend
        self.model = model
        self.session = session
        self.vocab = vocab
        self.lexer = Lexer(cfg.vocab_size, vocab)

    def __repr__(self) -> str:
        return f"CodePRM(backend={self.backend!r}, cfg={self.cfg!r})"

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, backend: str = "onnx", asset_dir: str | Path | None = None, **overrides) -> CodePRM:
        """Load the shipped step model with its dev-chosen thresholds and weights.

        ``backend``: "onnx" (onnxruntime) or "torch". ``overrides`` replace config fields;
        ``fuse_analysers=False`` is the model alone. Missing assets raise :class:`ShowcaseError`.
        """
        if backend not in BACKENDS:
            raise InputError(f"backend must be one of {BACKENDS}, got {backend!r}")
        d = Path(asset_dir) if asset_dir is not None else ASSET_DIR
        try:
            cfg_dict = json.loads((d / "config.json").read_text())
            cal = json.loads((d / "calibration.json").read_text())
        except (OSError, ValueError) as exc:
            raise ShowcaseError(f"codeprm assets missing in {d}: run scripts/codeprm_train.py") from exc
        cfg_dict.update({k: v for k, v in cal["fused"].items() if k in PRMConfig.__dataclass_fields__},
                        solo_threshold=cal["model"]["threshold"], tau=cal.get("tau", cfg_dict.get("tau", 0.1)))
        cfg_dict.update(overrides)
        cfg = PRMConfig(**{k: v for k, v in cfg_dict.items() if k in PRMConfig.__dataclass_fields__})
        vocab = json.loads((d / "vocab.json").read_text()) if (d / "vocab.json").is_file() else None
        if backend == "onnx":
            from engines.common.onnx_runtime import ort_session

            return cls(cfg, "onnx", session=ort_session(d / "model.onnx"), vocab=vocab)
        from safetensors.torch import load_file

        from engines.codeprm.model import StepScorer

        model = StepScorer(cfg)
        try:
            model.load_state_dict(load_file(str(d / "model.safetensors")))
        except OSError as exc:
            raise ShowcaseError(f"codeprm weights missing in {d}: run scripts/codeprm_train.py") from exc
        model.eval()
        return cls(cfg, "torch", model=model, vocab=vocab)

    # ------------------------------------------------------------------ scoring
    def step_probs(self, feats: Features) -> tuple[np.ndarray, np.ndarray]:
        """Per-step risk probabilities (S,) and attention weights (S, L) for featurized code."""
        ids = feats.ids[None, :]
        extra = {"marks": feats.marks[None, :]} if self.cfg.user_input else {}
        if self.backend == "onnx":
            logits, w = self.session.run(None, {"ids": ids, "parts": feats.parts[None], **extra, "gidx": feats.gidx,
                                                "last": feats.last})
        else:
            import torch

            with torch.inference_mode():
                lt, wt = self.model(torch.from_numpy(ids), torch.from_numpy(feats.parts[None]),
                                    *[torch.from_numpy(v) for v in extra.values()],
                                    torch.from_numpy(feats.gidx), torch.from_numpy(feats.last))
            logits, w = lt.numpy(), wt.numpy()
        return 1.0 / (1.0 + np.exp(-logits.astype(np.float64))), w

    def model_risks(self, src: Source | str, spans=None) -> tuple[np.ndarray, list[int]]:
        """The learned model's step risks for ``src`` (a :class:`Source`, or a text) and each
        step's hot line (where its attention points)."""
        src = Source.of(src, max_step_lines=self.cfg.max_step_lines)
        spans = src.spans if spans is None else spans
        if not spans:
            return np.zeros(0), []
        feats = featurize(src.text, self.cfg, self.lexer, spans)
        p, att = self.step_probs(feats)
        hot = []
        for k, sp in enumerate(spans):
            row = feats.gidx[k]
            valid = row < len(feats.ids)
            hot.append(int(feats.lines[row[valid][int(np.argmax(att[k][valid]))]]) if valid.any() else sp.start)
        return p, hot

    def analyse(self, codes: list, parsed: list | None = None) -> list[list[Finding]]:
        """Merged analyser findings for each piece of code (:class:`Source` s or texts; bandit on
        the scan's own parse, the semgrep rule packs in one semgrep call for all pieces)."""
        from engines.codeprm.analysers import start_analysers

        pieces = [p.pieces for p in parsed] if parsed else None
        return start_analysers(codes, pieces=pieces).findings()

    def _fuses(self, analysers: bool) -> bool:
        return analysers and self.cfg.fuse_analysers

    def _source(self, code, path: str = "snippet.py", what: str = "code", empty: bool = False) -> Source:
        return Source.read(code, self.cfg, path, what, empty=empty)

    def _piece(self, src: Source, model: bool = True) -> _Piece:
        p = _Piece(src)
        if model:
            p.model, p.hot = self.model_risks(src)
        return p

    def _score(self, p: _Piece, analysers: bool, partial: bool = False) -> Scored:
        """The one scoring function behind scan, scan_many, file_risk and rank."""
        method = "fused" if self._fuses(analysers) else "model alone"
        src = p.src
        return score_steps(src.lines, src.spans, p.model, p.found if method == "fused" else [], self.cfg,
                           src.parsed.parses, src.code_lines, p.hot, method, partial)

    def _result(self, p: _Piece, sc: Scored, partial: bool, path: str, analysers: bool) -> ScanResult:
        src = p.src
        syntax_error = src.parsed.syntax_error
        if syntax_error is not None and partial and (src.parsed.repairable or repair(src.text, lines=src.lines)
                                                     is not None):
            syntax_error = None
        why = sc.drivers()
        steps = []
        for k, sp in enumerate(src.spans):
            fs = [f for f in p.found if sp.start <= f.line <= sp.end] + ([sc.model_findings[k]]
                                                                        if k in sc.model_findings else [])
            steps.append(StepResult(k, sp.start, sp.end, "\n".join(src.lines[sp.start - 1: sp.end]),
                                    1.0 - float(sc.risks[k]), p.hot[k] if p.hot else sp.start, fs,
                                    1.0 - float(sc.model[k]), why[k]))
        weights = aggregate(sc.risks, self.cfg)[1] if len(sc.risks) else np.zeros(0)
        flagged = [int(i) for i in np.argsort(-weights, kind="stable") if sc.flagged[i]][:3]
        drivers = flagged or [int(i) for i in np.argsort(-weights, kind="stable")[:1]]
        verdict = "incomplete" if sc.verdict == "safe" and p.failures else sc.verdict
        return ScanResult(steps, sc.risk, verdict, FLAG_LEVEL, drivers, partial, syntax_error, src.n_lines, path,
                          analysers, len(steps) - 1 if partial and steps else None, list(p.failures), src.lines)

    def scan(self, code: str, partial: bool = False, path: str = "snippet.py", analysers: bool = True) -> ScanResult:
        """Score every step of ``code`` and give the verdict.

        The text is read once into a :class:`Source` (lines, code lines, steps, one parse), then
        steps -> model -> analysers -> fusion all read that. ``partial=True`` says the code is
        a prefix (a live completion): a syntax error at its end is expected and not reported,
        and ``writing`` names the step being written. ``analysers=False`` means the learned model
        alone: no analyser runs and the model flags at its own threshold. Text that is not Python
        raises :class:`NotPython`; input over the caps raises :class:`CodeTooLarge`. An analyser
        that cannot read the code is named in ``failures`` (and the verdict is then never "safe").

        >>> prm = CodePRM.load()                                             # doctest: +SKIP
        >>> r = prm.scan("import pickle\\nobj = pickle.loads(blob)\\n")        # doctest: +SKIP
        >>> r.verdict, r.steps[-1].findings[0].cwe                             # doctest: +SKIP
        ('vulnerable', 502)
        """
        return self.scan_many([code], [path], partial, analysers, empty=False, raise_errors=True)[0]

    def scan_many(self, codes: list[str], paths: list[str] | None = None, partial: bool = False,
                  analysers: bool = True, progress=None, empty: bool = True, raise_errors: bool = False,
                  rule_timeout_s: float | None = None) -> list[ScanResult | InputError]:
        """Scan many files with one semgrep process over all of them, started first so that it
        runs while bandit and the model work here (what ``scan DIR`` does). A file that cannot
        be scanned (not Python, too large) gives its :class:`InputError` in its place (raised
        with ``raise_errors``); an empty one is safe, with no steps (``empty=False``: refused).
        ``progress(i)`` is called as each file's own analysis finishes; ``rule_timeout_s`` is
        semgrep's limit per rule and file."""
        from engines.codeprm.analysers import start_analysers

        paths = paths or [f"snippet{i}.py" for i in range(len(codes))]
        pieces: list[_Piece | InputError] = []
        for code, path in zip(codes, paths):
            try:
                pieces.append(_Piece(self._source(code, path, empty=empty)))
            except InputError as exc:
                if raise_errors:
                    raise
                pieces.append(exc)
        ok = [p for p in pieces if isinstance(p, _Piece)]
        started = start_analysers([p.src for p in ok], rule_timeout_s=rule_timeout_s) \
            if self._fuses(analysers) else None
        try:
            k = 0
            for i, p in enumerate(pieces):
                if isinstance(p, _Piece):
                    p.model, p.hot = self.model_risks(p.src)
                    if started:
                        started.step(k)
                    k += 1
                if progress:
                    progress(i)
            found = started.results() if started else []
        finally:
            if started:
                started.stop()
        for p, a in zip(ok, found):
            p.found, p.failures = a.findings, a.failures
        return [p if isinstance(p, InputError) else
                self._result(p, self._score(p, analysers, partial), partial, path, analysers)
                for p, path in zip(pieces, paths)]

    def file_risk(self, code: str, fuse: bool | None = None) -> float:
        """Aggregate risk of ``code`` (model alone, or fused with the analysers), by the scan's
        own scoring path; for evaluation."""
        use = self.cfg.fuse_analysers if fuse is None else fuse
        p = self._piece(self._source(code))
        if use:
            p.found = self.analyse([p.src])[0]
        return self._score(p, use).risk

    # ------------------------------------------------------------------ ranking
    def rank(self, prefix: str, candidates: list[str], analysers: bool = True) -> list[RankedCandidate]:
        """Rank candidate continuations of ``prefix`` (SecCodePRM's candidate ranking).

        Each candidate's own steps (scored in the context of the prefix by the scan's scoring
        path) give safety scores s_i. Candidates are ranked by the top-k safe ratio (share of
        its k least safe steps that are safe, ``aggregation.topk_safe_ratio``), ties broken by
        the soft minimum of the s_i (``aggregation.softmin_safety``, the ``reward``). A candidate
        whose prefix + candidate does not parse is marked (``parses=False``) and ranked after
        every one that does. The whole request (prefix once per candidate) is held to the
        scan's line cap.

        >>> prm = CodePRM.load()                                          # doctest: +SKIP
        >>> prm.rank("import subprocess\\n", ["subprocess.run(cmd, shell=True)",
        ...          "subprocess.run(['ls', path])"])[0]["index"]          # doctest: +SKIP
        1
        """
        if not isinstance(candidates, (list, tuple)) or not candidates:
            raise InputError("give at least one candidate continuation")
        if not isinstance(prefix, str):
            raise InputError("prefix must be a string")
        if len(candidates) > 64:
            raise InputError(f"{len(candidates)} candidates given; rank at most 64 at a time")
        base = check_code(prefix, self.cfg, "prefix") if prefix.strip() else ""
        base = base if (not base or base.endswith("\n")) else base + "\n"
        n_prefix = base.count("\n")
        total = sum(n_prefix + (c.count("\n") + 1 if isinstance(c, str) else 0) for c in candidates)
        if total > self.cfg.max_lines:
            raise CodeTooLarge(f"ranking {len(candidates)} candidates after a {n_prefix:,}-line prefix scores "
                               f"{total:,} lines; the limit is {self.cfg.max_lines:,} lines per request. "
                               "Shorten the prefix or rank fewer candidates.")
        pieces = []
        for i, cand in enumerate(candidates):
            if not isinstance(cand, str) or not cand.strip():
                raise InputError(f"candidate {i + 1} is empty")
            pieces.append(self._piece(Source.read(base + cand, self.cfg, what=f"candidate {i + 1}", python=False)))
        if self._fuses(analysers):
            for p, fs in zip(pieces, self.analyse([p.src for p in pieces])):
                p.found = fs
        out = []
        for i, (cand, p) in enumerate(zip(candidates, pieces)):
            sc = self._score(p, analysers)
            own = [k for k, sp in enumerate(p.src.spans) if sp.end > n_prefix] or [len(p.src.spans) - 1]
            s = 1.0 - sc.risks[own]
            out.append(RankedCandidate({"index": i, "candidate": cand, "parses": p.src.parsed.parses,
                        "topk_safe_ratio": topk_safe_ratio(s, self.cfg.top_k, 1.0 - FLAG_LEVEL),
                        "reward": softmin_safety(s, self.cfg.tau), "mean_score": float(s.mean()),
                        "min_score": float(s.min()), "n_steps": len(s),
                        "verdict": "vulnerable" if sc.flagged[own].any() else "safe"}))
        out.sort(key=lambda d: (not d["parses"], -d["topk_safe_ratio"], -d["reward"], d["index"]))
        for k, d in enumerate(out):
            d["rank"] = k + 1
        return out

    def family_modes(self) -> dict[int, str]:
        """What flags each CWE family: "step model + analysers" where the model may flag it (in
        prefixes being written or in code that parses: the families where it earned that on dev),
        else "analysers only" (the model's weight is 0 there: it never flags that family).

        >>> CodePRM.load().family_modes()[78] in ("step model + analysers", "analysers only")  # doctest: +SKIP
        True
        """
        from engines.codeprm.cwe import FAMILIES, TABLE, WRITING

        fused = self._fuses(True)
        pre = set(FAMILIES) if self.cfg.prefix_flag_cwes is None else set(self.cfg.prefix_flag_cwes)
        if self.cfg.prefix_flag_threshold >= 1.0:
            pre = set()
        par = set(self.cfg.model_flag_cwes) if self.cfg.model_flag_threshold < 1.0 else set()
        out = {}
        for k in FAMILIES:
            named = bool(TABLE[k].calls or TABLE[k].sinks or (self.cfg.wide_sinks and k in WRITING))
            out[k] = "step model + analysers" if fused and named and k in (pre | par) else "analysers only"
        return out

    def with_config(self, **changes) -> CodePRM:
        """A copy with some config fields changed (same weights)."""
        return CodePRM(replace(self.cfg, **changes), self.backend, self.model, self.session, self.vocab)


_DEFAULT: dict[str, CodePRM] = {}


def default_prm(backend: str = "onnx") -> CodePRM:
    """The shipped model, loaded once per process and backend (what the tab uses).

    >>> default_prm("onnx").backend                                       # doctest: +SKIP
    'onnx'
    """
    if backend not in _DEFAULT:
        _DEFAULT[backend] = CodePRM.load(backend)
    return _DEFAULT[backend]

