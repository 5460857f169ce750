"""The application corpus: real Python web applications (Flask, Django, FastAPI/Starlette,
aiohttp, Tornado, Bottle, Pyramid), fetched as snapshots and split by repository.

Two outputs, both from ``evals/codeprm/data/app_repos.csv`` (repository, framework, kind,
folders, split, snapshot commit, licence, function count):

* ``data/codeprm/app_corpus.jsonl``: the *clean application family*: functions (views,
  handlers, models and ORM code, forms, settings helpers) of the repositories of kind
  ``application`` (open-source applications people run) and ``framework examples``, at most
  ``MAX_PER_REPO`` each. It is assumed safe: its test split gives the share of application code
  flagged, and its train split gives the step model hard negatives (parameterised queries,
  ``subprocess`` with argument lists, ``yaml.safe_load``, escaping, redirects, JSON responses).
* ``data/codeprm/app_files.jsonl``: whole files of *every* repository (the scanner works on files
  and on prefixes of files), with the repository's split and kind, at most ``MAX_FILES_PER_REPO``
  each: the corpus that rule-pack labels (``evals.codeprm.app_labels``) turn into step labels.
  Repositories of kind ``small application`` (tutorials, student and demo apps) and
  ``vulnerable by design`` (teaching apps, labs, course projects with planted flaws) are here
  only: they are not assumed safe.

Usage::

    nice -n 10 .venv/bin/python -m evals.codeprm.apps --mirrors <snapshot dir>

``folders``: for a framework, the example folders read; for an application, empty = the whole
repository. Test, migration, documentation, vendored and virtual-environment folders are left
out. Split rule: ``sha256(f"{salt}:{owner/name}")``, first 8 hex digits / 2**32 = u.
Applications, small applications and framework examples: salt ``apps-2`` (fixed; the first salt
that put at least 5 of the first 30 repositories in each of dev and test), u < 0.6 train,
u < 0.8 dev, else test. Repositories vulnerable by design: salt ``spots-0``, u < 0.2 train,
u < 0.45 dev, else test, so that the hand-labelled taint spots (``app_spots.jsonl``) have
whole repositories for dev and test. The vulnerable-by-design teaching apps the issue puts off
limits (vulpy, dvpwa, DSVW, pygoat, Vulnerable-Flask-App) are refused.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
from pathlib import Path

from engines.common.paths import REPO_ROOT
from evals.codeprm.corpus import _SKIP_DIRS, functions_of, label

REPOS = REPO_ROOT / "evals" / "codeprm" / "data" / "app_repos.csv"
OUT = REPO_ROOT / "data" / "codeprm" / "app_corpus.jsonl"
FILES_OUT = REPO_ROOT / "data" / "codeprm" / "app_files.jsonl"
COLUMNS = ["repo", "framework", "kind", "folders", "split", "snapshot_head", "licence", "functions"]
MAX_PER_REPO = 400
MAX_FILES_PER_REPO = 200
MAX_FILE_BYTES = 200_000
SALT = "apps-2"
POOL_SALT = "spots-0"
POOL_KIND = "vulnerable by design"
CLEAN_KINDS = ("application", "framework examples")
KINDS = CLEAN_KINDS + ("small application", POOL_KIND)
OFF_LIMITS = ("vulpy", "dvpwa", "dsvw", "pygoat", "vulnerable-flask-app")
SKIP = _SKIP_DIRS | {"migrations", "alembic", "fixtures", "e2e", "scripts", "bin", "node_modules", "static", "venv",
                     ".venv", "env", "site-packages", "skf-venv"}
SKIP_NAMES = ("setup.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py", "bottle.py")


def split_of(repo: str, salt: str = SALT, pool: bool = False) -> str:
    """train / dev / test of a repository under ``salt`` (``pool``: the vulnerable-by-design
    thresholds, 0.2 / 0.45).

    >>> split_of("miguelgrinberg/microblog")
    'test'
    """
    u = int(hashlib.sha256(f"{salt}:{repo.lower()}".encode()).hexdigest()[:8], 16) / 2 ** 32
    lo, hi = (0.2, 0.45) if pool else (0.6, 0.8)
    return "train" if u < lo else ("dev" if u < hi else "test")


def row_split(row: dict) -> str:
    """The split of one table row (its kind picks the rule; see the module docstring)."""
    if row["kind"] not in KINDS:
        raise ValueError(f"{row['repo']}: unknown kind {row['kind']!r}; choose from {KINDS}")
    name = row["repo"].split("/")[-1].lower()
    if any(name == x or name.endswith("/" + x) for x in OFF_LIMITS):
        raise ValueError(f"{row['repo']} is off limits for this project")
    pool = row["kind"] == POOL_KIND
    return split_of(row["repo"], POOL_SALT if pool else SALT, pool)


def wanted(path: str, folders: list[str]) -> bool:
    """Whether a file of the snapshot belongs to the corpus (see the module docstring)."""
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith(".py") or name.startswith(("test_", "conftest")) or name.endswith("_test.py"):
        return False
    if name in SKIP_NAMES:
        return False
    if folders:
        return any(path.startswith(f.rstrip("/") + "/") for f in folders) and not (
            {"tests", "test", "migrations", "venv", ".venv", "site-packages"} & set(parts[:-1]))
    return not (SKIP & {p.lower() for p in parts[:-1]})


def snapshot_names(git_dir: str, folders: list[str]) -> list[str]:
    """The snapshot's files at its head that belong to the corpus."""
    from evals.codeprm.fix_pairs import git

    return [n for n in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines() if wanted(n, folders)]


def repo_rows(git_dir: str, repo: str, split: str, folders: list[str], rng: random.Random,
              names: list[str] | None = None) -> list[dict]:
    """The family's functions of one snapshot at its head (at most ``MAX_PER_REPO``, seeded)."""
    from evals.codeprm.fix_pairs import GitError, git

    names = snapshot_names(git_dir, folders) if names is None else names
    funcs, seen = [], set()
    for n in names:
        try:
            src = git(git_dir, "show", f"HEAD:{n}")
        except GitError:
            continue
        for q, k, t in functions_of(src):
            if t not in seen:
                seen.add(t)
                funcs.append((n, q, k, t))
    if len(funcs) > MAX_PER_REPO:
        funcs = rng.sample(funcs, MAX_PER_REPO)
    return [{"id": f"{repo}:{rel}:{q}", "package": repo, "split": split, "path": rel, "qualname": q, "first_line": k,
             "code": t, "source": "app"} for rel, q, k, t in funcs]


def file_rows(git_dir: str, row: dict, commit: str, names: list[str], rng: random.Random) -> list[dict]:
    """Whole files of one snapshot (UTF-8 text up to ``MAX_FILE_BYTES``, not empty; at most
    ``MAX_FILES_PER_REPO``, seeded), each with the repository's split, kind and framework."""
    from evals.codeprm.fix_pairs import GitError, git

    names = sorted(names)
    if len(names) > MAX_FILES_PER_REPO:
        names = sorted(rng.sample(names, MAX_FILES_PER_REPO))
    out = []
    for n in names:
        try:
            raw = git(git_dir, "show", f"HEAD:{n}", text=False)
        except GitError:
            continue
        if not raw.strip() or len(raw) > MAX_FILE_BYTES:
            continue
        try:
            code = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append({"id": f"{row['repo']}:{n}", "repo": row["repo"], "split": row["split"], "kind": row["kind"],
                    "framework": row["framework"], "path": n, "commit": commit, "lines": code.count("\n") + 1,
                    "code": code})
    return out


def read_table(table: Path = REPOS) -> list[dict]:
    """The repository table, each row's split filled in by its rule."""
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["split"] = row_split(r)
    return rows


def collect(mirrors: str, table: Path = REPOS, seed: int = 0, log=print) -> tuple[list[dict], list[dict]]:
    """(clean-family functions, whole files) of every listed repository with a snapshot under
    ``mirrors``; fills in the table's split, snapshot commit, licence and function count (the
    functions of a repository outside the clean family are counted, not written)."""
    from evals.codeprm.fix_pairs import find_mirror, head_commit, licence_of

    rows = read_table(table)
    rng = random.Random(seed)
    frng = random.Random(seed + 1)
    funcs, files = [], []
    for r in rows:
        d = find_mirror(mirrors, "github.com/" + r["repo"])
        if d is None:
            log(f"{r['repo']}: no snapshot under {mirrors}; its recorded commit and licence are kept")
            continue
        folders = [f for f in r["folders"].split(";") if f]
        names = snapshot_names(d, folders)
        got = repo_rows(d, r["repo"], r["split"], folders, rng, names)
        head = head_commit(d)
        if r["snapshot_head"] and r["snapshot_head"] != head:
            log(f"{r['repo']}: snapshot head {head[:12]} differs from the recorded {r['snapshot_head'][:12]}")
        r.update(snapshot_head=head, licence=licence_of(d) or r["licence"], functions=str(len(got)))
        if r["kind"] in CLEAN_KINDS:
            funcs += got
        fs = file_rows(d, r, head, names, frng)
        files += fs
        log(f"{r['repo']} ({r['split']}, {r['kind']}): {len(got)} functions, {len(fs)} files")
    with open(table, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows({k: r[k] for k in COLUMNS} for r in rows)
    return funcs, files


def _write(rows: list[dict], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    tmp.replace(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--files-out", type=Path, default=FILES_OUT)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    rows, files = collect(a.mirrors)
    label(rows, a.workers, log=lambda m: print(m, flush=True))
    _write(rows, a.out)
    _write(files, a.files_out)
    counts = {s: sum(r["split"] == s for r in rows) for s in ("train", "dev", "test")}
    fcounts = {s: sum(r["split"] == s for r in files) for s in ("train", "dev", "test")}
    print(json.dumps({"functions": len(rows), "repositories": len({r["package"] for r in rows}), "per_split": counts,
                      "files": len(files), "file_repositories": len({r["repo"] for r in files}),
                      "files_per_split": fcounts}))


if __name__ == "__main__":
    main()
