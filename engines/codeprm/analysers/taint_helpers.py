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
from dataclasses import dataclass

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


@dataclass
class Function:
    """What a helper summary needs of one function: its positional parameters (``self``/``cls``
    left out), the local names each one reaches through assignments, and its calls with the
    names in their first argument (None for a list or tuple of arguments)."""

    name: str
    method: bool
    params: list[str]
    carriers: dict[str, set[str]]
    calls: list[tuple[str, set[str] | None]]


def _function(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> Function:
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if params and params[0] in _SELF:
        params = params[1:]
    assigns, calls = [], []
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            assigns.append((_names(n.value), {x for t in targets for x in _names(t)}))
        elif isinstance(n, ast.Call) and n.args:
            arg = n.args[0]
            calls.append((_dotted(n.func), None if isinstance(arg, (ast.List, ast.Tuple)) else _names(arg)))
    carriers = {p: {p} for p in params}
    for _ in range(3):  # a few rounds of local propagation through assignments
        for used, targets in assigns:
            for c in carriers.values():
                if used & c:
                    c |= targets
    return Function(fn.name, method, params, carriers, calls)


def functions(tree: ast.AST) -> list[Function]:
    """The module's functions and its classes' methods, summarised once per file."""
    out = []
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(_function(node, False))
        elif isinstance(node, ast.ClassDef):
            out += [_function(fn, True) for fn in node.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return out


def helpers_of(funcs: list[Function], calls: str) -> list[tuple[str, bool, int]]:
    """(function name, is a method, parameter index) of every function of ``funcs`` whose
    parameter at that index reaches the first argument of a call matching ``calls``."""
    rx = re.compile(calls)
    out = []
    for f in funcs:
        hit = set()
        for name, used in f.calls:
            if used and name and rx.fullmatch(name):
                hit |= {k for k, p in enumerate(f.params) if used & f.carriers[p]}
        out += [(f.name, f.method, k) for k in sorted(hit)]
    return out


def helper_rule(rule: dict, summaries: list[list[Function] | None]) -> dict | None:
    """The ``-helper`` twin of a composed taint ``rule`` for files summarised as ``summaries``
    (None where a file has no tree or cannot hold the rule's flow), or None when no file holds
    a helper."""
    calls = rule.get("metadata", {}).get("helper-calls")
    if not calls:
        return None
    sinks: dict[str, None] = {}
    files: list[str] = []
    for i, funcs in enumerate(summaries):
        found = helpers_of(funcs, calls) if funcs else []
        for name, method, k in found:
            args = "".join(f"$A{j}, " for j in range(k)) + "$X, ..."
            sinks[f"$O.{name}({args})" if method else f"{name}({args})"] = None
        if found:
            files.append(f"f{i}.py")
    if not sinks:
        return None
    return {**{k: v for k, v in rule.items() if k != "codeprm-select"}, "id": rule["id"] + "-helper",
            "message": rule["message"] + " (through a helper function)", "paths": {"include": files},
            "pattern-sinks": [{"patterns": [{"pattern-either": [{"pattern": s} for s in sinks]},
                                            {"focus-metavariable": "$X"}]}]}
