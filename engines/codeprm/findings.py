"""Security findings and the CWE families the codeprm tab reports (shared by the analysers)."""
from __future__ import annotations

import ast
from dataclasses import dataclass

# CWE families this tab reports, with a short explanation for the UI and SARIF.
CWE_INFO: dict[int, str] = {
    22: "Path traversal: a user-controlled path reaches the file system.",
    78: "OS command injection: a shell runs a string built from input.",
    79: "Cross-site scripting: input reaches HTML without escaping.",
    89: "SQL injection: a query is built by string formatting instead of parameters.",
    94: "Code injection: eval/exec (or a debugger shell) runs dynamic code.",
    295: "TLS certificate verification is disabled.",
    327: "Broken or risky cryptography (weak cipher or hash).",
    328: "Weak hash (MD5/SHA-1) used where a strong one is needed.",
    338: "Non-cryptographic random generator used for secrets.",
    377: "Insecure temporary file (predictable name or mktemp).",
    502: "Deserialisation of untrusted data (pickle, marshal, unsafe yaml).",
    611: "XML parsed with external entities enabled (XXE).",
    798: "Hard-coded credential or secret.",
    918: "Server-side request forgery: a request goes to a user-supplied URL.",
}


@dataclass(frozen=True)
class Finding:
    """One security finding on one line."""

    line: int
    cwe: int
    rule: str
    message: str
    source: str  # "bandit", "taint", "rule", "template" or "model"

    def to_dict(self) -> dict:
        return {"line": self.line, "cwe": f"CWE-{self.cwe}", "rule": self.rule,
                "message": self.message, "source": self.source}


def const_str(node: ast.AST | None) -> str | None:
    """The text of a str (or latin-1 bytes) literal; None for anything else.

    >>> const_str(ast.parse("'a'").body[0].value), const_str(ast.parse("x").body[0].value)
    ('a', None)
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        v = node.value
        return v.decode("latin-1") if isinstance(v, bytes) else v
    return None


def last_name(fn: ast.AST) -> str:
    """The last part of a called name (``b`` for ``a.b(...)`` and ``b(...)``); '' otherwise."""
    return fn.attr if isinstance(fn, ast.Attribute) else (fn.id if isinstance(fn, ast.Name) else "")


def string_built(node: ast.AST | None) -> bool:
    """A string built at run time: an f-string with fields, % / + formatting, .format() or .join()
    (psycopg2 ``sql.SQL(...).format`` and ``Markup(...).format`` compose safely and do not count).

    >>> [string_built(ast.parse(c).body[0].value) for c in ("f'{a}'", "'a' + b", "SQL('x').format(y)", "'a'")]
    [True, True, False, False]
    """
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return not (node.func.attr == "format" and isinstance(node.func.value, ast.Call) and
                    last_name(node.func.value.func) in ("SQL", "Composed", "Identifier", "Markup", "SafeString",
                                                        "escape"))
    return False


def dotted_name(node: ast.AST) -> str:
    """Dotted name of a Name/Attribute chain ('' when it is something else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(dotted_name(node.func) + "()")
    return ".".join(reversed(parts))


def module_constants(tree: ast.AST) -> dict[str, ast.AST]:
    """Literals bound by name at module or class level (``VERIFY_TLS = False``, ``OPTS = {...}``,
    or one call on a literal: ``PAGE = string.Template("<h1>$t</h1>")``): what a later
    ``self.VERIFY_TLS``, ``**OPTS`` or ``PAGE.substitute`` stands for. Function bodies are not read.

    >>> sorted(module_constants(ast.parse("A = 1\\nclass C:\\n    B = {'x': 1}\\ndef f():\\n    D = 2")))
    ['A', 'B']
    """
    out: dict[str, ast.AST] = {}
    todo = list(getattr(tree, "body", []))
    while todo:
        st = todo.pop(0)
        if isinstance(st, ast.ClassDef):
            todo.extend(st.body)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and \
                (isinstance(st.value, (ast.Constant, ast.Dict)) or (
                    isinstance(st.value, ast.Call) and len(st.value.args) == 1 and const_str(st.value.args[0]) is not None)):
            out[st.targets[0].id] = st.value
    return out


def bound_constant(node: ast.AST | None, consts: dict[str, ast.AST]) -> ast.AST | None:
    """The literal a name, ``self.NAME`` or ``cls.NAME`` is bound to in ``consts``; the node itself otherwise."""
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") and \
            node.attr in consts:
        return consts[node.attr]
    return node


def call_keywords(node: ast.Call, consts: dict[str, ast.AST]) -> dict[str, ast.AST]:
    """A call's keyword arguments, with ``**OPTIONS`` of a literal dict bound in ``consts`` spread in."""
    kw: dict[str, ast.AST] = {}
    for k in node.keywords:
        if k.arg:
            kw[k.arg] = k.value
            continue
        d = bound_constant(k.value, consts)
        if isinstance(d, ast.Dict):
            kw.update({const_str(a): b for a, b in zip(d.keys, d.values) if const_str(a)})
    return kw


class ImportAliases(ast.NodeVisitor):
    """A node visitor that remembers what each import bound (``import x.y as z``, ``from m import n``),
    so that a call can be read by the module it really comes from."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # import alias -> module path

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module or ''}.{a.name}"

    def resolved(self, full: str) -> str:
        """``full`` with its first part replaced by the module an import bound it to.

        >>> v = ImportAliases(); v.visit(ast.parse("from lxml import etree as ET")); v.resolved("ET.parse")
        'lxml.etree.parse'
        """
        head, _, rest = full.partition(".")
        return self.aliases[head] + ("." + rest if rest else "") if head in self.aliases else full
