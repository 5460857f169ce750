"""Which functions of a file hand one of their parameters to a sink: the summaries that let OSS
semgrep's taint mode (which follows input within a function, and into what a call returns, but
not into the body of the function the input is passed to) follow input into a local helper.

For each taint rule whose metadata names ``helper-calls`` (a regular expression of its sink
calls' dotted names), :func:`helper_rule` reads each file's own parse (the scan's one tree, no
second parse): a function whose k-th parameter reaches the first argument of such a call (directly
or through local assignments; a list of arguments is not a command string) is a helper, and the
rule's ``-helper`` twin gets a sink at the k-th argument of each call of it, in that file only.
Plain sink patterns, so the twin costs about what a search rule costs.
"""
from __future__ import annotations

import ast
import re

_SELF = ("self", "cls")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _names(node: ast.AST | None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node is not None else set()


def _reaches(fn: ast.FunctionDef | ast.AsyncFunctionDef, calls: re.Pattern) -> list[int]:
    """Indexes (among the positional parameters, ``self``/``cls`` left out) of the parameters
    that reach a sink call's first argument in ``fn``'s body."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if params and params[0] in _SELF:
        params = params[1:]
    tainted = {p: {p} for p in params}  # parameter -> local names carrying it
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    for _ in range(3):  # a few rounds of local propagation through assignments
        for a in assigns:
            used = _names(a.value)
            targets = a.targets if isinstance(a, ast.Assign) else [a.target]
            for p, carriers in tainted.items():
                if used & carriers:
                    carriers |= {n for t in targets for n in _names(t)}
    hits = set()
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and node.args and calls.fullmatch(_dotted(node.func) or "")):
            continue
        arg = node.args[0]
        if isinstance(arg, (ast.List, ast.Tuple)):
            continue
        used = _names(arg)
        hits |= {k for k, p in enumerate(params) if used & tainted[p]}
    return sorted(hits)


def helpers_of(tree: ast.AST, calls: str) -> list[tuple[str, bool, int]]:
    """(function name, is a method, parameter index) of every helper in ``tree`` for ``calls``."""
    rx = re.compile(calls)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for fn in node.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out += [(fn.name, True, k) for k in _reaches(fn, rx)]
        elif isinstance(node, ast.Module):
            for fn in node.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out += [(fn.name, False, k) for k in _reaches(fn, rx)]
    return out


def helper_rule(rule: dict, trees: list) -> dict | None:
    """The ``-helper`` twin of a composed taint ``rule`` for files whose parse trees are ``trees``
    (None where a file has no tree), or None when no file holds a helper."""
    calls = rule.get("metadata", {}).get("helper-calls")
    if not calls:
        return None
    sinks: dict[str, None] = {}
    files: list[str] = []
    for i, tree in enumerate(trees):
        found = helpers_of(tree, calls) if tree is not None else []
        for name, method, k in found:
            args = "".join("$A%d, " % j for j in range(k)) + "$X, ..."
            sinks[f"$O.{name}({args})" if method else f"{name}({args})"] = None
        if found:
            files.append(f"f{i}.py")
    if not sinks:
        return None
    return {**{k: v for k, v in rule.items() if k != "codeprm-select"}, "id": rule["id"] + "-helper",
            "message": rule["message"] + " (through a helper function)", "paths": {"include": files},
            "pattern-sinks": [{"patterns": [{"pattern-either": [{"pattern": s} for s in sinks]},
                                            {"focus-metavariable": "$X"}]}]}
