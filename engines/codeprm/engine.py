"""CodePRM: scan Python code step by step, give a risk-sensitive verdict, rank continuations.

One scan parses the code once (never imports or executes it) and walks one way: steps ->
model -> analysers -> fusion -> aggregate. Step risks come from the learned step model (a small
causal CNN, ``model.py``; onnxruntime or torch) trained on analyser step labels of real code and
on real vulnerability fixes; findings with CWE ids come from the analysers (bandit, Meta's
CodeShield rules run by semgrep); ``fusion.py`` combines the two so that a confident analyser
finding always flags its step and the model adds risk where the analysers are silent or blind.
The verdict is the paper's soft minimum of step safety (``aggregation.py``).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engines.codeprm.aggregation import softmin_safety, softmin_weights, topk_safe_ratio
from engines.codeprm.config import PRMConfig
from engines.codeprm.findings import CWE_INFO, Finding
from engines.codeprm.fusion import drivers as step_drivers
from engines.codeprm.fusion import flagged_steps, fuse_steps
from engines.codeprm.model import Features, featurize
from engines.codeprm.repair import pieces as repaired_pieces
from engines.codeprm.repair import repair
from engines.codeprm.steps import Span, split_steps
from engines.codeprm.tokens import Lexer
from engines.common.errors import InputError, ShowcaseError
from engines.common.paths import ASSETS_DIR

ASSET_DIR = ASSETS_DIR / "codeprm"
BACKENDS = ("onnx", "torch")

# words in a step -> the CWE family a model-only finding most likely belongs to (explanations)
_HINTS = [
    (re.compile(r"\b(shell\s*=\s*True|os\.system|popen|getoutput)\b"), 78),
    (re.compile(r"\b(execute|executemany|SELECT|INSERT|UPDATE|DELETE)\b", re.IGNORECASE), 89),
    (re.compile(r"\b(eval|exec|compile)\s*\("), 94),
    (re.compile(r"\b(pickle|marshal|shelve|yaml\.load|dill)\b"), 502),
    (re.compile(r"\b(md5|sha1)\b", re.IGNORECASE), 328),
    (re.compile(r"\b(DES|ARC4|RC4|Blowfish|ECB|verify\s*=\s*False|_create_unverified_context)\b"), 327),
    (re.compile(r"\brandom\.\w+|\brandint\b|getrandbits"), 338),
    (re.compile(r"(password|passwd|secret|token|api_key)\w*\s*=\s*['\"]", re.IGNORECASE), 798),
    (re.compile(r"\b(send_file|open|unlink|remove|Path)\s*\("), 22),
    (re.compile(r"<\w+|render_template_string|Markup|autoescape"), 79),
    (re.compile(r"\b(etree|minidom|XMLParser|fromstring|parseString)\b"), 611),
    (re.compile(r"\b(requests|httpx|urlopen|urllib)\b"), 918),
    (re.compile(r"/tmp\b|mktemp"), 377),
]


class CodeTooLarge(InputError):
    """The input is larger than the configured limits."""


class EmptyCode(InputError):
    """The input holds no code."""


class NotPython(InputError):
    """The input does not look like Python source (prose, another language, a binary dump)."""


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
    driver: str = ""  # what drove the step's risk: "analysers", "model", "analysers + model" or ""

    @property
    def risk(self) -> float:
        return 1.0 - self.score

    def to_dict(self) -> dict:
        return {"index": self.index, "start_line": self.start_line, "end_line": self.end_line, "text": self.text,
                "score": round(self.score, 6), "risk": round(self.risk, 6), "hot_line": self.hot_line,
                "model_score": None if self.model_score is None else round(self.model_score, 6),
                "driver": self.driver, "findings": [f.to_dict() for f in self.findings]}


@dataclass
class ScanResult:
    """The scan of one piece of code: steps, aggregate risk, verdict and what drove it."""

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

    def __repr__(self) -> str:
        return (f"ScanResult(verdict={self.verdict!r}, risk={self.risk:.3f}, threshold={self.threshold:.3f}, "
                f"steps={len(self.steps)}, findings={sum(len(s.findings) for s in self.steps)})")

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.steps for f in s.findings]

    def to_dict(self) -> dict:
        return {"path": self.path, "verdict": self.verdict, "risk": round(self.risk, 6),
                "threshold": round(self.threshold, 6), "partial": self.partial, "syntax_error": self.syntax_error,
                "n_lines": self.n_lines, "analysers": self.analysers, "drivers": self.drivers,
                "steps": [s.to_dict() for s in self.steps]}

    def to_json(self, indent: int | None = 2) -> str:
        """The scan as JSON (what the tab's JSON download holds)."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_sarif(self) -> dict:
        """The scan as a SARIF 2.1.0 log (one run)."""
        from engines.codeprm.sarif import to_sarif

        return to_sarif([self])


def aggregate(probs: np.ndarray, cfg: PRMConfig) -> tuple[float, np.ndarray]:
    """Risk-sensitive aggregation of step risks p_i into a program risk, and each step's weight.

    "softmin": risk = 1 - S with S = sum_i softmax(-s / tau)_i s_i the soft minimum of the step
    safety scores s_i = 1 - p_i (SecCodePRM's risk-sensitive aggregation,
    ``aggregation.softmin_safety``); it lies between the mean and the max of the p_i and tends
    to the max as tau -> 0. "topk": the mean of the k largest p_i.

    >>> risk, w = aggregate(np.array([0.01, 0.9, 0.02]), PRMConfig(tau=0.1))
    >>> 0.85 < risk <= 0.9 and int(np.argmax(w)) == 1
    True
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.size == 0:
        return 0.0, p
    if cfg.aggregation == "topk":
        k = min(cfg.top_k, p.size)
        idx = np.argsort(-p)[:k]
        w = np.zeros_like(p)
        w[idx] = 1.0 / k
        return float(p[idx].mean()), w
    return float(min(1.0, max(0.0, 1.0 - softmin_safety(1.0 - p, cfg.tau)))), softmin_weights(1.0 - p, cfg.tau)


@dataclass
class Parsed:
    """The one parse of a scan: pieces that parse (the whole code, repaired when needed, or each
    step alone) for the analysers, and the syntax error of the code as given."""

    pieces: list
    syntax_error: str | None
    repairable: bool


def parse_once(code: str, path: str = "snippet.py") -> Parsed:
    """Parse ``code`` (never run it): the whole code when it parses, else repaired / per-step pieces."""
    try:
        tree = compile(code, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return Parsed([(0, code, tree)], None, True)
    except SyntaxError as exc:
        err = f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return Parsed([], str(exc) or type(exc).__name__, False)
    pieces = repaired_pieces(code)
    return Parsed(pieces, err, len(pieces) == 1 and pieces[0][0] == 0)


_TRIVIAL = (ast.Name, ast.Constant, ast.Attribute, ast.UnaryOp)
# a line that reads as Python even where the code around it does not parse (a broken file)
_PY_LINE = re.compile(r"^(?:(?:async\s+)?def\s+\w+\s*\(|class\s+\w+|import\s+[\w.]+|from\s+[\w.]+\s+import\b|"
                      r"(?:return|raise|yield|assert|del|global|nonlocal)\b|(?:if|elif|while|for|with|except)\b.*:\s*$|"
                      r"(?:else|try|finally)\s*:|@[\w.]+|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/|&%]?=[^=]|\())")


def looks_like_python(code: str, parsed: Parsed) -> bool:
    """True for whatever ``ast.parse`` accepts (a docstring-only module too); for code that does
    not parse, when most non-blank, non-comment lines belong to pieces that parse or read as
    Python statements (``def f(``, ``import x``, ``name = ...``) and at least one is a real
    statement (prose that happens to parse in pieces is not code).

    >>> looks_like_python("'''Only a docstring.'''\\n", parse_once("'''Only a docstring.'''\\n"))
    True
    >>> looks_like_python("def f(:\\n    return 1\\n", parse_once("def f(:\\n    return 1\\n"))
    True
    >>> looks_like_python("Hello, how are you today?", parse_once("Hello, how are you today?"))
    False
    """
    if parsed.syntax_error is None and parsed.pieces:
        return True
    lines = [ln.strip() for ln in code.splitlines()]
    code_lines = [i for i, ln in enumerate(lines, 1) if ln and not ln.startswith("#")]
    if not code_lines:
        return False
    covered = set()
    real = False
    for off, text, tree in parsed.pieces:
        n = len(text.splitlines())
        covered.update(range(off + 1, off + n + 1))
        for st in getattr(tree, "body", []):
            if not (isinstance(st, ast.Expr) and isinstance(st.value, _TRIVIAL)):
                real = True
    pyish = {i for i in code_lines if _PY_LINE.match(lines[i - 1])}
    share = sum(i in covered or i in pyish for i in code_lines) / len(code_lines)
    return (real or bool(pyish)) and share >= 0.6


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
        """Load the shipped step model with its dev-chosen threshold and model weight.

        ``backend``: "onnx" (onnxruntime) or "torch". ``overrides`` replace config fields;
        ``fuse_analysers=False`` loads the model-alone threshold. Missing assets raise
        :class:`ShowcaseError`.
        """
        if backend not in BACKENDS:
            raise InputError(f"backend must be one of {BACKENDS}, got {backend!r}")
        d = Path(asset_dir) if asset_dir is not None else ASSET_DIR
        try:
            cfg_dict = json.loads((d / "config.json").read_text())
            cal = json.loads((d / "calibration.json").read_text())
        except (OSError, ValueError) as exc:
            raise ShowcaseError(f"codeprm assets missing in {d}: run scripts/codeprm_train.py") from exc
        fuse = overrides.get("fuse_analysers", cfg_dict.get("fuse_analysers", True))
        cfg_dict.update(threshold=cal["fused" if fuse else "model"]["threshold"], aggregation="softmin",
                        tau=cal.get("tau", cfg_dict.get("tau", 0.1)),
                        model_weight=cal["fused"].get("model_weight", cfg_dict.get("model_weight", 1.0)),
                        prefix_model_weight=cal["fused"].get("prefix_model_weight",
                                                             cfg_dict.get("prefix_model_weight", 1.0)))
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
        if self.backend == "onnx":
            logits, w = self.session.run(None, {"ids": ids, "parts": feats.parts[None], "gidx": feats.gidx,
                                                "last": feats.last})
        else:
            import torch

            with torch.inference_mode():
                lt, wt = self.model(torch.from_numpy(ids), torch.from_numpy(feats.parts[None]),
                                    torch.from_numpy(feats.gidx), torch.from_numpy(feats.last))
            logits, w = lt.numpy(), wt.numpy()
        return 1.0 / (1.0 + np.exp(-logits.astype(np.float64))), w

    def model_risks(self, code: str, spans: list[Span]) -> tuple[np.ndarray, list[int]]:
        """The learned model's step risks for ``code`` and each step's hot line (where its
        attention points)."""
        if not spans:
            return np.zeros(0), []
        feats = featurize(code, self.cfg, self.lexer, spans)
        p, att = self.step_probs(feats)
        hot = []
        for k, sp in enumerate(spans):
            row = feats.gidx[k]
            valid = row < len(feats.ids)
            hot.append(int(feats.lines[row[valid][int(np.argmax(att[k][valid]))]]) if valid.any() else sp.start)
        return p, hot

    def analyse(self, codes: list[str], parsed: list[Parsed] | None = None) -> list[list[Finding]]:
        """Analyser findings for each piece of code: bandit (on the scan's own parse) and
        CodeShield (one semgrep call for all pieces), one per (line, CWE, analyser)."""
        from engines.codeprm.analysers import bandit_findings, codeshield_findings

        parsed = parsed or [parse_once(c) for c in codes]
        shield = codeshield_findings(codes)
        out = []
        for code, p, cs in zip(codes, parsed, shield):
            seen: dict = {}
            for f in bandit_findings(code, p.pieces) + cs:
                key = (f.line, f.cwe, f.source)
                if key not in seen or (f.confident and not seen[key].confident):
                    seen[key] = f
            out.append(sorted(seen.values(), key=lambda f: (f.line, f.cwe, f.source)))
        return out

    def _check(self, code) -> str:
        """The code, checked against the request caps and normalised (BOM, line ends, tabs)."""
        if not isinstance(code, str):
            raise InputError(f"code must be a string, got {type(code).__name__}")
        if "\x00" in code:
            raise InputError("the code holds NUL bytes; paste Python source text, not a binary file")
        if len(code) > self.cfg.max_chars:
            raise CodeTooLarge(f"the code has {len(code):,} characters; the limit is {self.cfg.max_chars:,} "
                               "characters per request. Scan a smaller file or split it.")
        n = code.count("\n") + 1
        if n > self.cfg.max_lines:
            raise CodeTooLarge(f"the code has {n:,} lines; the limit is {self.cfg.max_lines:,} lines per request. "
                               "Split the file.")
        longest = max(map(len, code.splitlines()), default=0)
        if longest > self.cfg.max_line_chars:
            raise CodeTooLarge(f"one line has {longest:,} characters; the limit is {self.cfg.max_line_chars:,} "
                               "characters per line (minified or generated code is not scanned).")
        code = code.lstrip("\ufeff")
        if not code.strip():
            raise EmptyCode("there is no code to scan: paste some Python first")
        return code.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8) if "\r" in code or "\t" in code else code

    def _parse_python(self, code: str, path: str) -> Parsed:
        parsed = parse_once(code, path)
        if not looks_like_python(code, parsed):
            raise NotPython("this does not look like Python: it does not parse, and most lines do not read as "
                            "Python statements. Paste Python source code.")
        return parsed

    def weight(self, parses: bool, analysers: bool = True) -> float:
        """The model's weight in the fusion: for code that parses, or for code that does not."""
        if not (analysers and self.cfg.fuse_analysers):
            return 1.0
        return self.cfg.model_weight if parses else self.cfg.prefix_model_weight

    def _fused(self, model_p: np.ndarray, spans: list[Span], found: list[Finding], analysers: bool,
               parses: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Fused step risks and the confident-finding flag of each step (``fusion.py``)."""
        if not (analysers and self.cfg.fuse_analysers):
            return np.asarray(model_p, float), np.zeros(len(spans))
        flagged = flagged_steps(spans, found)
        return fuse_steps(model_p, flagged, self.weight(parses)), flagged

    def scan(self, code: str, partial: bool = False, path: str = "snippet.py", analysers: bool = True) -> ScanResult:
        """Score every step of ``code`` and give the verdict.

        One parse, then steps -> model -> analysers -> fusion -> aggregate. ``partial=True``
        says the code is a prefix (a live completion): a syntax error at its end is expected and
        not reported. ``analysers=False`` means the learned model alone: no analyser runs,
        nothing is fused, and the verdict uses the model-alone threshold when the engine was
        loaded with ``fuse_analysers=False``. Text that is not Python raises :class:`NotPython`;
        input over the caps raises :class:`CodeTooLarge`.

        >>> prm = CodePRM.load()                                             # doctest: +SKIP
        >>> r = prm.scan("import pickle\\nobj = pickle.loads(blob)\\n")        # doctest: +SKIP
        >>> r.verdict, r.steps[-1].findings[0].cwe                             # doctest: +SKIP
        ('vulnerable', 502)
        """
        code = self._check(code)
        parsed = self._parse_python(code, path)
        spans = split_steps(code, self.cfg.max_step_lines)
        model_p, hot = self.model_risks(code, spans)
        found = self.analyse([code], [parsed])[0] if analysers else []
        parses = parsed.syntax_error is None
        probs, flagged = self._fused(model_p, spans, found, analysers, parses)
        risk, weights = aggregate(probs, self.cfg)
        why = step_drivers(model_p, flagged, self.weight(parses, analysers),
                           min(self.cfg.step_threshold, self.cfg.threshold))
        if risk < self.cfg.threshold:  # a safe file: the model flagged no step (only confident findings flag)
            why = [w if w.startswith("analysers") else "" for w in why]
        syntax_error = parsed.syntax_error
        if syntax_error is not None and partial and (parsed.repairable or repair(code) is not None):
            syntax_error = None
        lines = code.splitlines()
        steps = []
        for k, sp in enumerate(spans):
            p = float(probs[k])
            text = "\n".join(lines[sp.start - 1: sp.end])
            fs = [f for f in found if sp.start <= f.line <= sp.end]
            if why[k] == "model":
                fs.append(self._model_finding(hot[k], lines, text, float(model_p[k])))
            steps.append(StepResult(k, sp.start, sp.end, text, 1.0 - p, hot[k], fs, 1.0 - float(model_p[k]), why[k]))
        order = np.argsort(-weights)[:3]
        drivers = [int(i) for i in order if probs[i] >= 0.5 * max(risk, 1e-9)]
        flagged_any = bool(flagged.any())
        verdict = "vulnerable" if (risk >= self.cfg.threshold or flagged_any) else "safe"
        return ScanResult(steps, risk, verdict, self.cfg.threshold, drivers, partial, syntax_error, len(lines), path,
                          analysers)

    @staticmethod
    def _model_finding(hot: int, lines: list[str], text: str, p: float) -> Finding:
        """A finding for a step that the model alone drove: the CWE family its words suggest."""
        cwe = next((c for rx, c in _HINTS if rx.search(lines[hot - 1] if 0 < hot <= len(lines) else "")), None)
        cwe = cwe or next((c for rx, c in _HINTS if rx.search(text)), 0)
        what = CWE_INFO.get(cwe, "Risky pattern") if cwe else "The model scores this step as risky"
        return Finding(hot, cwe, "codeprm:model", f"{what} (model, step risk {p:.2f}; no analyser rule matched)",
                       "model", confident=False)

    def file_risk(self, code: str, fuse: bool | None = None) -> float:
        """Aggregate risk of ``code`` (model alone, or fused with the analysers); for evaluation."""
        code = self._check(code)
        spans = split_steps(code, self.cfg.max_step_lines)
        probs, _ = self.model_risks(code, spans)
        use = self.cfg.fuse_analysers if fuse is None else fuse
        parsed = parse_once(code)
        found = self.analyse([code], [parsed])[0] if use else []
        return aggregate(self._fused(probs, spans, found, use, parsed.syntax_error is None)[0], self.cfg)[0]

    # ------------------------------------------------------------------ ranking
    def rank(self, prefix: str, candidates: list[str], analysers: bool = True) -> list[dict]:
        """Rank candidate continuations of ``prefix`` (SecCodePRM's candidate ranking).

        Each candidate's own steps (scored in the context of the prefix, fused with the analysers
        when the config says so) give safety scores s_i. Candidates are ranked by the top-k safe
        ratio (share of its k least safe steps that are safe, ``aggregation.topk_safe_ratio``),
        ties broken by the soft minimum of the s_i (``aggregation.softmin_safety``, the
        ``reward``). A candidate whose prefix + candidate does not parse is marked
        (``parses=False``) and ranked after every one that does. The whole request (prefix once
        per candidate) is held to the scan's line cap.

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
        base = prefix if (not prefix or prefix.endswith("\n")) else prefix + "\n"
        n_prefix = base.count("\n")
        total = sum(n_prefix + (c.count("\n") + 1 if isinstance(c, str) else 0) for c in candidates)
        if total > self.cfg.max_lines:
            raise CodeTooLarge(f"ranking {len(candidates)} candidates after a {n_prefix:,}-line prefix scores "
                               f"{total:,} lines; the limit is {self.cfg.max_lines:,} lines per request. "
                               "Shorten the prefix or rank fewer candidates.")
        codes, parsed = [], []
        for i, cand in enumerate(candidates):
            if not isinstance(cand, str) or not cand.strip():
                raise InputError(f"candidate {i + 1} is empty")
            codes.append(self._check(base + cand))
            parsed.append(parse_once(codes[-1]))
        use = analysers and self.cfg.fuse_analysers
        found = self.analyse(codes, parsed) if use else [[] for _ in codes]
        out = []
        for i, (cand, code, pa, fs) in enumerate(zip(candidates, codes, parsed, found)):
            spans = split_steps(code, self.cfg.max_step_lines)
            probs, _ = self.model_risks(code, spans)
            probs, flagged = self._fused(probs, spans, fs, use, pa.syntax_error is None)
            own = [k for k, sp in enumerate(spans) if sp.end > n_prefix]
            p = probs[own] if own else probs[-1:]
            s = 1.0 - p
            vul = aggregate(p, self.cfg)[0] >= self.cfg.threshold or bool(flagged[own].any() if own else False)
            out.append({"index": i, "candidate": cand, "parses": pa.syntax_error is None,
                        "topk_safe_ratio": topk_safe_ratio(s, self.cfg.top_k, 1.0 - self.cfg.step_threshold),
                        "reward": softmin_safety(s, self.cfg.tau), "mean_score": float(s.mean()),
                        "min_score": float(s.min()), "n_steps": len(p),
                        "verdict": "vulnerable" if vul else "safe"})
        out.sort(key=lambda d: (not d["parses"], -d["topk_safe_ratio"], -d["reward"], d["index"]))
        for k, d in enumerate(out):
            d["rank"] = k + 1
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
