"""CodePRM: scan Python code step by step, give a risk-sensitive verdict, rank continuations.

The code is lexed and parsed, never imported or executed. Step scores come from the trained
step scorer (torch or onnxruntime); findings with CWE ids come from the analysers (bandit run
in-process on repaired code, and the taint labeller), and the model's own hot line explains a
risky step the analysers say nothing about.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engines.codeprm.config import PRMConfig
from engines.codeprm.labels import CWE_INFO, Finding, label_findings, repair
from engines.codeprm.model import Features, featurize
from engines.codeprm.tokens import Lexer
from engines.common.errors import InputError, ShowcaseError
from engines.common.paths import ASSETS_DIR

ASSET_DIR = ASSETS_DIR / "codeprm"

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

    @property
    def risk(self) -> float:
        return 1.0 - self.score

    def to_dict(self) -> dict:
        return {"index": self.index, "start_line": self.start_line, "end_line": self.end_line, "text": self.text,
                "score": round(self.score, 6), "risk": round(self.risk, 6), "hot_line": self.hot_line,
                "model_score": None if self.model_score is None else round(self.model_score, 6),
                "findings": [f.to_dict() for f in self.findings]}


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

    def __repr__(self) -> str:
        return (f"ScanResult(verdict={self.verdict!r}, risk={self.risk:.3f}, threshold={self.threshold:.3f}, "
                f"steps={len(self.steps)}, findings={sum(len(s.findings) for s in self.steps)})")

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.steps for f in s.findings]

    def to_dict(self) -> dict:
        return {"path": self.path, "verdict": self.verdict, "risk": round(self.risk, 6),
                "threshold": round(self.threshold, 6), "partial": self.partial, "syntax_error": self.syntax_error,
                "n_lines": self.n_lines, "drivers": self.drivers, "steps": [s.to_dict() for s in self.steps]}

    def to_json(self, indent: int | None = 2) -> str:
        """The scan as JSON (what the tab's JSON download holds)."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_sarif(self) -> dict:
        """The scan as a SARIF 2.1.0 log (one run)."""
        from engines.codeprm.sarif import to_sarif

        return to_sarif([self])


def aggregate(probs: np.ndarray, cfg: PRMConfig) -> tuple[float, np.ndarray]:
    """Risk-sensitive aggregation of step risks p_i into a file risk, and each step's weight.

    "softmin": risk = 1 - softmin_tau(r), r_i = 1 - p_i the step security scores and
    softmin_tau(r) = -tau * log((1/n) sum_i exp(-r_i / tau)) (the soft minimum over step
    scores of SecCodePRM's risk-sensitive aggregation); it lies between the mean and the max of
    the p_i and tends to the max as tau -> 0. "topk": the mean of the k largest p_i.

    >>> risk, w = aggregate(np.array([0.01, 0.9, 0.02]), PRMConfig(tau=0.05))
    >>> 0.8 < risk <= 0.9 and int(np.argmax(w)) == 1
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
    z = p / cfg.tau
    m = z.max()
    lse = m + math.log(np.exp(z - m).sum()) - math.log(p.size)
    w = np.exp(z - m)
    return float(min(1.0, max(0.0, cfg.tau * lse))), w / w.sum()


class CodePRM:
    """The step-level security process reward model.

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
    def load(cls, backend: str = "torch", asset_dir: str | Path | None = None, **overrides) -> CodePRM:
        """Load the shipped weights (``assets/codeprm``) with the calibrated threshold.

        ``backend`` is "torch" or "onnx"; ``overrides`` replace config fields (e.g. tau).
        """
        if backend not in ("torch", "onnx"):
            raise InputError(f"backend must be 'torch' or 'onnx', got {backend!r}")
        d = Path(asset_dir) if asset_dir is not None else ASSET_DIR
        try:
            cfg_dict = json.loads((d / "config.json").read_text())
        except OSError as exc:
            raise ShowcaseError(f"codeprm assets missing in {d}: run scripts/codeprm_train.py") from exc
        cal = d / "calibration.json"
        fuse = overrides.get("fuse_analysers", cfg_dict.get("fuse_analysers", True))
        if cal.is_file():
            c = json.loads(cal.read_text())
            mode = c.get("fused" if fuse else "model", c)
            cfg_dict.update({k: mode[k] for k in ("threshold", "tau", "aggregation", "top_k") if k in mode})
            if "analyser_prob" in c:
                cfg_dict["analyser_prob"] = c["analyser_prob"]
        cfg_dict.update(overrides)
        cfg = PRMConfig(**cfg_dict)
        vocab = json.loads((d / "vocab.json").read_text()) if (d / "vocab.json").is_file() else None
        if backend == "onnx":
            from engines.common.onnx_runtime import ort_session

            return cls(cfg, "onnx", session=ort_session(d / "model.onnx"), vocab=vocab)
        from safetensors.torch import load_file

        from engines.codeprm.model import StepScorer

        model = StepScorer(cfg)
        model.load_state_dict(load_file(str(d / "model.safetensors")))
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

    def _check(self, code) -> str:
        if not isinstance(code, str):
            raise InputError(f"code must be a string, got {type(code).__name__}")
        if "\x00" in code:
            raise InputError("the code holds NUL bytes; paste Python source text, not a binary file")
        if len(code) > self.cfg.max_chars:
            raise CodeTooLarge(f"the code has {len(code):,} characters; the limit is {self.cfg.max_chars:,}. "
                               "Scan a smaller file or split it.")
        n = code.count("\n") + 1
        if n > self.cfg.max_lines:
            raise CodeTooLarge(f"the code has {n:,} lines; the limit is {self.cfg.max_lines:,}. Split the file.")
        if not code.strip():
            raise EmptyCode("there is no code to scan: paste some Python first")
        return code.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8) if "\r" in code or "\t" in code else code

    def scan(self, code: str, partial: bool = False, path: str = "snippet.py", analysers: bool = True) -> ScanResult:
        """Score every step of ``code`` and give the verdict.

        ``partial=True`` says the code is a prefix (a live completion): a syntax error at its end
        is expected and not reported. ``analysers=False`` skips bandit/taint findings (model only).

        >>> prm = CodePRM.load()                                             # doctest: +SKIP
        >>> r = prm.scan("import pickle\\nobj = pickle.loads(blob)\\n")        # doctest: +SKIP
        >>> r.verdict, r.steps[-1].findings[0].cwe                             # doctest: +SKIP
        ('vulnerable', 502)
        """
        code = self._check(code)
        feats = featurize(code, self.cfg, self.lexer)
        model_probs, att = self.step_probs(feats)
        found = label_findings(code) if analysers or self.cfg.fuse_analysers else []
        probs = self.fuse(model_probs, feats, found) if self.cfg.fuse_analysers else model_probs
        risk, weights = aggregate(probs, self.cfg)
        syntax_error = None
        try:
            compile(code, path, "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST: parse only, never run
        except SyntaxError as exc:
            if not (partial and repair(code) is not None):
                syntax_error = f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:
            syntax_error = str(exc)
        if not analysers:
            found = []
        lines = code.splitlines()
        steps = []
        for k, sp in enumerate(feats.spans):
            p = float(probs[k])
            row = feats.gidx[k]
            valid = row < len(feats.ids)
            hot = int(feats.lines[row[valid][int(np.argmax(att[k][valid]))]]) if valid.any() else sp.start
            fs = [f for f in found if sp.start <= f.line <= sp.end]
            if not fs and p >= self.cfg.step_threshold:
                text = "\n".join(lines[sp.start - 1: sp.end])
                cwe = next((c for rx, c in _HINTS if rx.search(lines[hot - 1] if hot - 1 < len(lines) else "")), None)
                cwe = cwe or next((c for rx, c in _HINTS if rx.search(text)), 0)
                msg = (CWE_INFO.get(cwe, "Risky pattern") if cwe else "The model scores this step as risky") + \
                    f" (model, step risk {p:.2f}; no analyser rule matched)"
                fs = [Finding(hot, cwe, "codeprm:model", msg, "model")]
            steps.append(StepResult(k, sp.start, sp.end, "\n".join(lines[sp.start - 1: sp.end]), 1.0 - p, hot, fs,
                                    1.0 - float(model_probs[k])))
        order = np.argsort(-weights)[:3]
        drivers = [int(i) for i in order if probs[i] >= 0.5 * max(risk, 1e-9)]
        verdict = "vulnerable" if risk >= self.cfg.threshold else "safe"
        return ScanResult(steps, risk, verdict, self.cfg.threshold, drivers, partial, syntax_error, len(lines), path)

    def fuse(self, probs: np.ndarray, feats: Features, found: list[Finding]) -> np.ndarray:
        """Noisy-OR of the model's step risks with the analysers' flags (a flagged step has risk
        at least ``analyser_prob``): p = 1 - (1 - p_model) * (1 - analyser_prob * flagged)."""
        flagged = np.zeros(len(feats.spans))
        starts = np.array([s.start for s in feats.spans])
        for f in found:
            k = int(np.searchsorted(starts, f.line, side="right")) - 1
            if k >= 0 and feats.spans[k].start <= f.line <= feats.spans[k].end:
                flagged[k] = 1.0
        return 1.0 - (1.0 - probs) * (1.0 - self.cfg.analyser_prob * flagged)

    def file_risk(self, code: str, fuse: bool | None = None) -> float:
        """Aggregate risk of ``code`` (model alone, or fused with the analysers); for evaluation."""
        code = self._check(code)
        feats = featurize(code, self.cfg, self.lexer)
        probs, _ = self.step_probs(feats)
        if self.cfg.fuse_analysers if fuse is None else fuse:
            probs = self.fuse(probs, feats, label_findings(code))
        return aggregate(probs, self.cfg)[0]

    # ------------------------------------------------------------------ ranking
    def rank(self, prefix: str, candidates: list[str]) -> list[dict]:
        """Rank candidate continuations of ``prefix`` by mean step reward (no length bias).

        The reward of a candidate is the mean over its own steps (scored in the context of the
        prefix) of log r_i, r_i the step security score (fused with the analysers when the
        config says so): the cumulative step reward divided by the number of steps, so long and
        short continuations compete fairly.

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
        out = []
        for i, cand in enumerate(candidates):
            if not isinstance(cand, str) or not cand.strip():
                raise InputError(f"candidate {i + 1} is empty")
            code = self._check(base + cand)
            feats = featurize(code, self.cfg, self.lexer)
            probs, _ = self.step_probs(feats)
            if self.cfg.fuse_analysers:
                probs = self.fuse(probs, feats, label_findings(code))
            own = [k for k, sp in enumerate(feats.spans) if sp.end > n_prefix]
            p = probs[own] if own else probs[-1:]
            r = np.clip(1.0 - p, 1e-6, 1.0)
            reward = float(np.mean(np.log(r)))
            out.append({"index": i, "candidate": cand, "reward": reward, "mean_score": float(np.exp(reward)),
                        "min_score": float(r.min()), "n_steps": len(p),
                        "verdict": "vulnerable" if aggregate(p, self.cfg)[0] >= self.cfg.threshold else "safe"})
        out.sort(key=lambda d: -d["reward"])
        for k, d in enumerate(out):
            d["rank"] = k + 1
        return out

    def with_config(self, **changes) -> CodePRM:
        """A copy with some config fields changed (same weights)."""
        new = CodePRM(replace(self.cfg, **changes), self.backend, self.model, self.session, self.vocab)
        return new


_DEFAULT: dict[str, CodePRM] = {}


def default_prm(backend: str = "onnx") -> CodePRM:
    """The shipped model, loaded once per process and backend (what the tab uses).

    >>> default_prm("onnx").backend                                       # doctest: +SKIP
    'onnx'
    """
    if backend not in _DEFAULT:
        _DEFAULT[backend] = CodePRM.load(backend)
    return _DEFAULT[backend]


def sample_candidates(prefix: str, n: int = 4, max_new_tokens: int = 48, seed: int = 0) -> list[str]:
    """Sample ``n`` continuations of ``prefix`` from SmolLM2-135M (offline GGUF backbone).

    Plain-text completion of the code (no chat template), temperature 0.8, seeded.

    >>> sample_candidates("import os\\n", n=2)                          # doctest: +SKIP
    [...]
    """
    import torch

    from engines.common.backbone import load_backbone

    if not isinstance(prefix, str) or not prefix.strip():
        raise InputError("give a code prefix to continue")
    if not 1 <= int(n) <= 8:
        raise InputError("sample between 1 and 8 candidates")
    if not 4 <= int(max_new_tokens) <= 256:
        raise InputError("max_new_tokens must lie in 4..256")
    bb = load_backbone()
    ids = bb.tokenizer(prefix[-4000:], return_tensors="pt")["input_ids"].to(bb.device)
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = bb.model.generate(ids, do_sample=True, temperature=0.8, top_p=0.95, max_new_tokens=int(max_new_tokens),
                                num_return_sequences=int(n), pad_token_id=bb.tokenizer.eos_token_id)
    cands = []
    for row in out:
        text = bb.tokenizer.decode(row[ids.shape[1]:], skip_special_tokens=True)
        cands.append(text.rstrip() or "pass")
    return cands
