"""The step model's inputs: token ids, word parts and per-step pooling indices of a piece of
code (no torch here, so a scan with onnxruntime never imports it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engines.codeprm.config import PRMConfig
from engines.codeprm.steps import Span, split_steps
from engines.codeprm.tokens import Lexer


@dataclass
class Features:
    """Model inputs for one piece of code, plus what is needed to map results back to lines."""

    ids: np.ndarray      # (T,) int64
    parts: np.ndarray    # (T, 3) int64 word parts of identifiers (0 = none)
    lines: np.ndarray    # (T,) int64 line of each token
    spans: list[Span]
    gidx: np.ndarray     # (S, L) int64, padded with T
    last: np.ndarray     # (S,) int64
    marks: np.ndarray | None = None  # (T,) int64 user-input marks (``user_input.py``), with cfg.user_input


def featurize(code: str, cfg: PRMConfig, lexer: Lexer, spans: list[Span] | None = None,
              partial: bool | None = None) -> Features:
    """Lex ``code``, split it into steps and build the pooling indices (and, with
    ``cfg.user_input``, mark the names that hold user input; ``partial``: the text is cut inside
    its last line, by default when it does not end in a line end).

    >>> f = featurize("import os\\n\\nos.system(x)\\n", PRMConfig(), Lexer())
    >>> len(f.spans), f.gidx.shape[0], int(f.last[-1]) == len(f.ids) - 1
    (2, 2, True)
    """
    marks = None
    if cfg.user_input:
        ids, lines, parts, marks, _ = lexer.lex_marks(code, partial)
    else:
        ids, lines, parts = lexer.lex_parts(code)
    if spans is None:
        spans = split_steps(code, cfg.max_step_lines)
    T = len(ids)
    L = cfg.max_step_tokens
    starts = np.array([s.start for s in spans], dtype=np.int64)
    ends = np.array([s.end for s in spans], dtype=np.int64)
    lo = np.searchsorted(lines, starts, side="left")
    hi = np.searchsorted(lines, ends, side="right")
    S = len(spans)
    gidx = np.full((S, L), T, dtype=np.int64)
    last = np.zeros(S, dtype=np.int64)
    for s in range(S):
        a, b = int(lo[s]), int(hi[s])
        if b <= a:  # no tokens (cannot happen for non-blank lines; be safe)
            a, b = max(0, min(a, T - 1)), max(1, min(a + 1, T))
        n = min(b - a, L)
        gidx[s, :n] = np.arange(a, a + n)
        last[s] = b - 1
    return Features(ids, parts, lines, spans, gidx, last, marks)
