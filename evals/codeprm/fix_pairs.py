"""Extract (vulnerable, fixed) function pairs from vulnerability-fix commits.

Why: the learned code-security PRM needs step labels from real fixes. For each
fix commit an advisory names, the Python files it changes are parsed before
(``commit^``) and after (``commit``) with :mod:`ast`; every function or method
whose body changed becomes one pair. Lines removed or changed in the vulnerable
version are the step-label candidates for "vulnerable", lines added in the fixed
version are the fix lines. Test, doc, example and migration files are skipped;
so are functions over :data:`MAX_FUNC_LINES` lines and changes that touch only
whitespace, comments or docstrings.

The repository snapshots are bare git directories; only ``git`` is run.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import io
import json
import re
import subprocess
import tokenize
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from evals.codeprm.advisories import FixRecord

MAX_FUNC_LINES = 200
MAX_FUNCS_PER_COMMIT = 8
MAX_FILES_PER_COMMIT = 40
SKIP_PATH = re.compile(
    r"(^|/)(tests?|testing|test_[^/]*|[^/]*_tests?\.py|tests?\.py|conftest\.py|docs?|examples?|migrations|alembic|"
    r"benchmarks?|setup\.py|noxfile\.py|fabfile\.py|vendor|_vendor|third_party|node_modules)(/|$)",
    re.IGNORECASE)


class GitError(RuntimeError):
    """A git command on a snapshot failed (missing commit, broken object)."""


@dataclass(frozen=True)
class FunctionSpan:
    """A function or method: dotted qualified name and 1-based inclusive line span."""

    qualname: str
    start: int
    end: int
    body_start: int  # first line after the signature and docstring


@dataclass
class FixPair:
    """One changed function: vulnerable (before) and fixed (after) source with changed lines."""

    advisory: str
    repo: str
    commit: str
    file: str
    function: str
    cwe: list[str]
    cwe_source: str
    before_start: int
    before_end: int
    after_start: int
    after_end: int
    before: str
    after: str
    # 1-based line numbers relative to the function's first line (1 = the def line).
    vulnerable_lines: list[int]
    fix_lines: list[int]
    summary: str
    origin: str
    split: str = ""
    id: str = ""
    versions: str = ""  # "pkg==last_affected..first_fixed" for release-diff pairs, else ""

    def key(self) -> str:
        """Content hash used to drop identical pairs (same code before and after)."""
        return hashlib.sha1((self.before + "\0" + self.after).encode()).hexdigest()


def git(git_dir: str, *args: str, text: bool = True) -> str:
    """Run git on a bare snapshot and return stdout; raise :class:`GitError` on failure."""
    p = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, check=False)
    if p.returncode != 0:
        raise GitError(p.stderr.decode("utf-8", "replace").strip()[:300])
    return p.stdout.decode("utf-8", "replace") if text else p.stdout


def show_file(git_dir: str, rev: str, path: str) -> str | None:
    """File content at ``rev``, or None when absent."""
    try:
        return git(git_dir, "show", f"{rev}:{path}")
    except GitError:
        return None


def changed_py_files(git_dir: str, commit: str) -> list[tuple[str, str]]:
    """(old path, new path) of modified/renamed ``.py`` files in ``commit`` vs its first parent."""
    out = git(git_dir, "diff", "--name-status", "-M", f"{commit}^", commit, "--", "*.py")
    pairs = []
    for line in out.splitlines():
        parts = line.split("\t")
        status = parts[0]
        if status.startswith("M") and len(parts) == 2:
            pairs.append((parts[1], parts[1]))
        elif status.startswith("R") and len(parts) == 3:
            pairs.append((parts[1], parts[2]))
    return [(a, b) for a, b in pairs if not SKIP_PATH.search(b)]


def function_spans(tree: ast.AST) -> list[FunctionSpan]:
    """All (possibly nested) functions with qualified names; innermost spans come last."""
    spans: list[FunctionSpan] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                body = child.body
                first = body[0]
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str) and len(body) > 1):
                    first = body[1]
                spans.append(FunctionSpan(q, start, child.end_lineno or child.lineno, first.lineno))
                visit(child, q + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def code_tokens(src: str) -> list[str]:
    """Token strings of ``src`` without comments, newlines or docstring-only statements.

    Used to decide whether a change is substantive: two functions with equal
    token lists differ only in whitespace, comments or docstrings.
    """
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return src.split()
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                doc_lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    toks = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                          tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if t.type == tokenize.STRING and t.start[0] in doc_lines:
                continue
            toks.append(t.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return src.split()
    return toks


def changed_lines(before: list[str], after: list[str]) -> tuple[set[int], set[int]]:
    """1-based lines removed/replaced in ``before`` and added/replaced in ``after`` (blank lines ignored)."""
    sm = difflib.SequenceMatcher(a=[l.rstrip() for l in before], b=[l.rstrip() for l in after],
                                 autojunk=False)
    rem, add = set(), set()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        rem.update(i + 1 for i in range(i1, i2) if before[i].strip())
        add.update(j + 1 for j in range(j1, j2) if after[j].strip())
    return rem, add


def _dedent_block(lines: list[str]) -> str:
    """Join lines and remove their common indentation so methods parse on their own."""
    import textwrap
    return textwrap.dedent("".join(lines))


def file_pairs(before_src: str, after_src: str) -> Iterator[tuple[FunctionSpan, FunctionSpan, list[int], list[int]]]:
    """Changed functions between two versions of a file: (before span, after span, vuln lines, fix lines).

    Functions are matched by qualified name; for nested functions only the
    innermost changed function is kept (its enclosing function is skipped when
    all of its changes fall inside the nested one).
    """
    try:
        tb, ta = ast.parse(before_src), ast.parse(after_src)
    except (SyntaxError, ValueError):
        return
    bl, al = before_src.splitlines(keepends=True), after_src.splitlines(keepends=True)
    rem, add = changed_lines(bl, al)
    if not rem and not add:
        return
    bspans = {s.qualname: s for s in function_spans(tb)}
    aspans = {s.qualname: s for s in function_spans(ta)}
    hits = []
    for q, bs in bspans.items():
        a_s = aspans.get(q)
        if a_s is None:
            continue
        r = sorted(x for x in rem if bs.start <= x <= bs.end)
        a = sorted(x for x in add if a_s.start <= x <= a_s.end)
        if not r and not a:
            continue
        hits.append((bs, a_s, r, a))
    # Drop an enclosing function when a nested changed function covers all its changed lines.
    keep = []
    for bs, a_s, r, a in hits:
        inner = [h for h in hits if h[0] is not bs and h[0].qualname.startswith(bs.qualname + ".")]
        covered_r = {x for h in inner for x in h[2]}
        covered_a = {x for h in inner for x in h[3]}
        if inner and set(r) <= covered_r and set(a) <= covered_a:
            continue
        keep.append((bs, a_s, r, a))
    for bs, a_s, r, a in keep:
        if bs.end - bs.start + 1 > MAX_FUNC_LINES or a_s.end - a_s.start + 1 > MAX_FUNC_LINES:
            continue
        b_code = _dedent_block(bl[bs.start - 1:bs.end])
        a_code = _dedent_block(al[a_s.start - 1:a_s.end])
        if code_tokens(b_code) == code_tokens(a_code):
            continue
        yield bs, a_s, [x - bs.start + 1 for x in r], [x - a_s.start + 1 for x in a]


def commit_pairs(git_dir: str, rec: FixRecord, cwes: list[str], cwe_source: str) -> list[FixPair]:
    """Pairs from one fix commit, at most :data:`MAX_FUNCS_PER_COMMIT` (smallest changes first)."""
    files = changed_py_files(git_dir, rec.commit)[:MAX_FILES_PER_COMMIT]
    found: list[FixPair] = []
    for old, new in files:
        b = show_file(git_dir, f"{rec.commit}^", old)
        a = show_file(git_dir, rec.commit, new)
        if b is None or a is None:
            continue
        bl, al = b.splitlines(keepends=True), a.splitlines(keepends=True)
        for bs, a_s, r, ad in file_pairs(b, a):
            found.append(FixPair(
                advisory=rec.advisory, repo=rec.repo, commit=rec.commit, file=new, function=bs.qualname,
                cwe=list(cwes), cwe_source=cwe_source,
                before_start=bs.start, before_end=bs.end, after_start=a_s.start, after_end=a_s.end,
                before=_dedent_block(bl[bs.start - 1:bs.end]), after=_dedent_block(al[a_s.start - 1:a_s.end]),
                vulnerable_lines=r, fix_lines=ad, summary=rec.summary, origin=rec.origin))
    # Prefer focused changes: fewest changed lines first, then file order, capped per commit.
    found.sort(key=lambda p: len(p.vulnerable_lines) + len(p.fix_lines))
    return found[:MAX_FUNCS_PER_COMMIT]


def find_mirror(mirror_root: str, repo: str) -> str | None:
    """Bare git dir of ``github.com/owner/name`` under ``mirror_root`` (case-insensitive), or None."""
    want = repo.split("/", 1)[1].replace("/", "+").lower()
    root = Path(mirror_root)
    if not root.is_dir():
        return None
    for d in root.iterdir():
        if d.name.lower() == want:
            for cand in (d / "repo", d / "repo" / ".git"):
                if (cand / "HEAD").exists() and (cand / "objects").is_dir():
                    return str(cand)
    return None


def head_commit(git_dir: str) -> str:
    """The snapshot's HEAD commit hash."""
    return git(git_dir, "rev-parse", "HEAD").strip()


def licence_of(git_dir: str) -> str:
    """Short licence name guessed from the head of the snapshot's LICENSE/COPYING file ('' if none)."""
    names = git(git_dir, "ls-tree", "--name-only", "HEAD").split("\n")
    lic = [n for n in names if re.match(r"(?i)^(licen[cs]e|copying)(\.(txt|md|rst))?$", n)]
    if not lic:
        return ""
    head = (show_file(git_dir, "HEAD", lic[0]) or "")[:3000].lower()
    rules = [("apache license", "Apache-2.0"), ("mit license", "MIT"),
             ("permission is hereby granted, free of charge", "MIT"),
             ("gnu affero general public license", "AGPL-3.0"),
             ("gnu lesser general public license", "LGPL"), ("gnu library general public", "LGPL"),
             ("gnu general public license", "GPL"), ("mozilla public license", "MPL-2.0"),
             ("zope public license", "ZPL-2.1"), ("python software foundation", "PSF"),
             ("eclipse public license", "EPL"), ("bsd", "BSD"),
             ("redistribution and use in source and binary forms", "BSD"), ("isc license", "ISC"),
             ("the unlicense", "Unlicense"), ("creative commons", "CC"), ("business source license", "BUSL")]
    for needle, name in rules:
        if needle in head:
            return name
    return "other"


def to_json(p: FixPair) -> str:
    """One JSONL line for a pair."""
    return json.dumps(asdict(p), ensure_ascii=False)
