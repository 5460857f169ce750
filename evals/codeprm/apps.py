"""The application-code family: functions of well-known open-source Python web applications and of
web frameworks' example apps (views, handlers, ORM and database code, forms, settings helpers),
split by repository.

It is a clean family (code people run in production, assumed safe), and a source of hard
negatives for the step model: the code that looks most like what users scan (parameterised
queries, ``subprocess`` with argument lists, ``yaml.safe_load``, ``secrets``, escaping,
redirects, JSON responses).

Usage::

    nice -n 10 .venv/bin/python -m evals.codeprm.apps --mirrors <snapshot dir>   # -> data/codeprm/app_corpus.jsonl

The repositories, their snapshot commits, licences and splits are listed in
``evals/codeprm/data/app_repos.csv`` (``folders``: for a framework, the example folders read;
for an application, empty = the whole repository). Test, migration, documentation and vendored
folders are left out. Split rule: ``sha256(f"{salt}:{owner/name}")``, first 8 hex digits / 2**32 =
u; u < 0.6 train, u < 0.8 dev, else test; the salt is the first ``apps-0``, ``apps-1``, ... that
puts at least 5 repositories in each of dev and test. At most ``MAX_PER_REPO`` functions per
repository (a seeded sample), so no application dominates its split.
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
MAX_PER_REPO = 400
SKIP = _SKIP_DIRS | {"migrations", "alembic", "fixtures", "e2e", "scripts", "bin", "node_modules", "static"}


def split_of(repo: str, salt: str) -> str:
    """train / dev / test of a repository under ``salt``.

    >>> split_of("miguelgrinberg/microblog", "apps-0") in ("train", "dev", "test")
    True
    """
    u = int(hashlib.sha256(f"{salt}:{repo.lower()}".encode()).hexdigest()[:8], 16) / 2 ** 32
    return "train" if u < 0.6 else ("dev" if u < 0.8 else "test")


def choose_salt(repos: list[str], tries: int = 100) -> str:
    """The first salt that puts at least 5 repositories in each of dev and test."""
    for i in range(tries):
        salt = f"apps-{i}"
        splits = [split_of(r, salt) for r in repos]
        if splits.count("dev") >= 5 and splits.count("test") >= 5:
            return salt
    raise ValueError("no salt puts 5 repositories in dev and in test")


def wanted(path: str, folders: list[str]) -> bool:
    """Whether a file of the snapshot belongs to the family (see the module docstring)."""
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith(".py") or name.startswith(("test_", "conftest")) or name.endswith("_test.py"):
        return False
    if name in ("setup.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py"):
        return False
    if folders:
        return any(path.startswith(f.rstrip("/") + "/") for f in folders) and not (
            {"tests", "test", "migrations"} & set(parts[:-1]))
    return not (SKIP & {p.lower() for p in parts[:-1]})


def repo_rows(git_dir: str, repo: str, split: str, folders: list[str], rng: random.Random) -> list[dict]:
    """The family's functions of one snapshot at its head (at most ``MAX_PER_REPO``, seeded)."""
    from evals.codeprm.fix_pairs import GitError, git

    names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines() if wanted(n, folders)]
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


def collect(mirrors: str, table: Path = REPOS, seed: int = 0, log=print) -> list[dict]:
    """Every listed repository's functions, with its split; fills in the table's snapshot
    commit, licence, split and function count."""
    from evals.codeprm.fix_pairs import find_mirror, head_commit, licence_of

    rows = list(csv.DictReader(open(table)))
    salt = choose_salt([r["repo"] for r in rows])
    rng = random.Random(seed)
    out = []
    for r in rows:
        d = find_mirror(mirrors, "github.com/" + r["repo"])
        r["split"] = split_of(r["repo"], salt)
        if d is None:
            r.update(snapshot_head="", licence="", functions="0")
            log(f"{r['repo']}: no snapshot under {mirrors}")
            continue
        got = repo_rows(d, r["repo"], r["split"], [f for f in r["folders"].split(";") if f], rng)
        r.update(snapshot_head=head_commit(d), licence=licence_of(d), functions=str(len(got)))
        out += got
        log(f"{r['repo']} ({r['split']}): {len(got)} functions")
    with open(table, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["repo", "framework", "kind", "folders", "split", "snapshot_head", "licence",
                                           "functions"])
        w.writeheader()
        w.writerows(rows)
    log(f"salt {salt}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    rows = collect(a.mirrors)
    label(rows, a.workers, log=lambda m: print(m, flush=True))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    tmp.replace(a.out)
    counts = {s: sum(r["split"] == s for r in rows) for s in ("train", "dev", "test")}
    print(json.dumps({"functions": len(rows), "repositories": len({r["package"] for r in rows}), "per_split": counts}))


if __name__ == "__main__":
    main()
