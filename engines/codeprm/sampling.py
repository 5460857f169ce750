"""Candidate continuations for ranking: SmolLM2-135M samples of a code prefix, each cut at a
statement boundary so that the ranker scores whole statements."""
from __future__ import annotations

import ast

from engines.common.errors import InputError


def parses(code: str) -> bool:
    """True when ``code`` parses as Python (never run), read as the ranker and every scan read it
    (:func:`engines.codeprm.parsing.prepare`: tabs expanded, line ends normalised), so that a
    continuation kept here is never one :meth:`CodePRM.rank` marks unparseable."""
    from engines.codeprm.parsing import prepare

    try:
        compile(prepare(code), "<candidate>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def cut_at_statement(prefix: str, text: str, separator: str | None = None) -> tuple[str, bool]:
    """The longest run of whole lines of a sampled continuation ``text`` after which
    prefix + continuation parses (it ends at a statement boundary), and whether one was found;
    when none parses, the text up to its last complete line, marked unparseable. A line that reads
    ``separator`` (stripped) ends the text there: a caller that lists candidates between such lines
    would split the continuation in two.

    >>> cut_at_statement("def f(x):\\n", "    y = x + 1\\n    return y\\nprint(f(")
    ('    y = x + 1\\n    return y', True)
    >>> cut_at_statement("def f(x):\\n", "    y = x + 1\\n    # ---\\n    return y\\n", separator="# ---")
    ('    y = x + 1', True)
    """
    base = prefix if (not prefix or prefix.endswith("\n")) else prefix + "\n"
    lines = text.splitlines()
    if len(lines) > 1 and not text.endswith("\n"):
        lines = lines[:-1]  # the last line was cut by the token budget
    if separator is not None:
        lines = next((lines[:i] for i, ln in enumerate(lines) if ln.strip() == separator.strip()), lines)
    for n in range(len(lines), 0, -1):
        cand = "\n".join(lines[:n]).rstrip()
        if cand.strip() and parses(base + cand + "\n"):
            return cand, True
    return ("\n".join(lines).rstrip() or text.rstrip()), False


def sample_candidates(prefix: str, n: int = 4, max_new_tokens: int = 48, seed: int = 0,
                      max_time: float | None = None, separator: str | None = None) -> list[dict]:
    """Sample ``n`` continuations of ``prefix`` from SmolLM2-135M (offline GGUF backbone), each
    cut at a statement boundary (:func:`cut_at_statement`): ``{"text", "parses"}`` per sample.
    ``max_time``: seconds after which generation stops where it is (a caller's time budget).
    ``separator``: a line the caller puts between candidates; a sample is cut before one.

    Plain-text completion of the code (no chat template), temperature 0.8, seeded.

    >>> sample_candidates("import os\\n", n=2)                          # doctest: +SKIP
    [{'text': ..., 'parses': True}, ...]
    """
    from engines.codeprm.config import PRMConfig
    from engines.codeprm.parsing import check_code

    if not isinstance(prefix, str) or not prefix.strip():
        raise InputError("give a code prefix to continue")
    if not 1 <= int(n) <= 8:
        raise InputError("sample between 1 and 8 candidates")
    if not 4 <= int(max_new_tokens) <= 256:
        raise InputError("max_new_tokens must lie in 4..256")
    check_code(prefix, PRMConfig(), "prefix")  # NUL bytes and the caps, before the model loads
    import torch

    from engines.common import backbone

    bb = backbone.load_backbone()
    ids = bb.tokenizer(prefix[-4000:], return_tensors="pt")["input_ids"].to(bb.device)
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = bb.model.generate(ids, do_sample=True, temperature=0.8, top_p=0.95, max_new_tokens=int(max_new_tokens),
                                num_return_sequences=int(n), pad_token_id=bb.tokenizer.eos_token_id,
                                max_time=max_time)
    cands = []
    for row in out:
        text = bb.tokenizer.decode(row[ids.shape[1]:], skip_special_tokens=True)
        cut, ok = cut_at_statement(prefix, text, separator)
        cands.append({"text": cut or "pass", "parses": ok})
    return cands
