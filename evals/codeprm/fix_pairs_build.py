"""Build the vulnerability-fix pair data set from the PyPA advisory database and repository snapshots.

Usage (snapshots fetched as bare git dirs under ``--mirrors``, one ``owner+name/repo`` each)::

    .venv/bin/python -m evals.codeprm.fix_pairs_build --mirrors <snapshot dir> --releases <archive dir>

Steps: parse the advisories (:mod:`evals.codeprm.advisories`); merge advisories that name the
same fix commit; assign each repository family a split with a fixed hash (rule below); then,
repository by repository (most advisories first), extract the changed functions of each fix
commit (:mod:`evals.codeprm.fix_pairs`), drop duplicates, and append them to the JSONL file
so that a partial file is usable while the build runs. At the end it writes the manifest
``assets/codeprm/sources.csv``, the per-repository table (snapshot commit, licence) and the
counts in ``evals/codeprm/FIX_PAIRS.md``.

Split rule: a repository's family (its name, with known renames and forks folded together, so
that forks of one code base never straddle splits) is hashed as
``sha256(f"{salt}:{family}")``; the first 8 hex digits / 2**32 = u; u < 0.70 train, u < 0.85 dev,
else test. The salt is the first of ``fixpairs-0``, ``fixpairs-1``, ... for which dev and test
each hold 12-20 % of the advisory fix commits, no family holds over 25 % of dev's or test's, and
test's advisories name at least 12 distinct primary CWEs. It is chosen from the advisory database alone (records that name a commit; not
which snapshots could be fetched, nor the code), so adding snapshots never moves a repository.

Advisories that name no commit but link a pull request (``/pull/N``) are used when a snapshot
shows the commit that merged it (:func:`evals.codeprm.advisories.resolve_pull`); failing that, an
issue they link (``/issues/N``) when a commit message says it fixes that issue
(:func:`evals.codeprm.advisories.resolve_issue`; noisier, marked ``origin: issue``).
"""
from __future__ import annotations

import argparse
import collections
import csv
import dataclasses
import hashlib
import json
import time
from pathlib import Path

from evals.codeprm.advisories import (
    FixRecord,
    by_repo,
    cwes_in,
    load_fix_records,
    read_tree_yaml,
    record_cwes,
    resolve_issue,
    resolve_pull,
)
from evals.codeprm.fix_pairs import (
    FixPair,
    GitError,
    commit_pairs,
    find_mirror,
    git,
    head_commit,
    licence_of,
    to_json,
)
from evals.codeprm.release_pairs import (
    advisory_names,
    download,
    mentioned,
    release_function_pairs,
    version_pair,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "data" / "codeprm" / "fix_pairs.jsonl"
DEFAULT_MANIFEST = ROOT / "assets" / "codeprm" / "sources.csv"
DEFAULT_REPOS = ROOT / "evals" / "codeprm" / "data" / "fix_pair_repos.csv"
DEFAULT_CARD = ROOT / "evals" / "codeprm" / "FIX_PAIRS.md"
ADVISORY_DB = "github.com/pypa/advisory-database"
MAX_PAIRS_PER_ADVISORY = 12
SPLIT_BOUNDS = (("train", 0.70), ("dev", 0.85), ("test", 1.0))
# Renamed or forked repositories that share one code base (folded into one split family).
FAMILY_ALIASES = {"jinja2": "jinja", "python-tuf": "tuf", "tlslite-ng": "tlslite"}
MANIFEST_COLUMNS = ("advisory", "repo", "commit", "versions", "file", "function", "split", "cwe", "cwe_source",
                    "origin",
                    "before_start", "before_end", "after_start", "after_end", "licence", "id")


def family(repo: str) -> str:
    """Split family of ``github.com/owner/name``: the lower-case name, renames folded."""
    name = repo.rsplit("/", 1)[-1].lower()
    return FAMILY_ALIASES.get(name, name)


def hash_split(fam: str, salt: str) -> str:
    """train / dev / test of a family under ``salt`` (see the module docstring)."""
    u = int(hashlib.sha256(f"{salt}:{fam}".encode()).hexdigest()[:8], 16) / 2 ** 32
    for name, bound in SPLIT_BOUNDS:
        if u < bound:
            return name
    return "test"


def choose_salt(records: list[FixRecord], tries: int = 200) -> str:
    """First salt whose dev/test shares and test CWE spread meet the rule in the module docstring."""
    fams = collections.Counter(family(r.repo) for r in records)
    prim = collections.defaultdict(set)
    for r in records:
        cw, _ = record_cwes(r)
        if cw:
            prim[family(r.repo)].add(cw[0])
    total = sum(fams.values())
    for i in range(tries):
        salt = f"fixpairs-{i}"
        share = collections.Counter()
        largest = collections.Counter()
        test_cwes: set[str] = set()
        for f, n in fams.items():
            s = hash_split(f, salt)
            share[s] += n
            largest[s] = max(largest[s], n)
            if s == "test":
                test_cwes |= prim[f]
        if all(0.12 <= share[s] / total <= 0.20 and largest[s] <= 0.25 * share[s] for s in ("dev", "test")) \
                and len(test_cwes) >= 12:
            return salt
    raise ValueError("no salt meets the split rule; widen the share bounds or raise tries")


def merge_by_commit(records: list[FixRecord]) -> list[FixRecord]:
    """One record per (repo, commit): advisory ids joined with ';', CWE ids unioned."""
    groups: dict[tuple[str, str], list[FixRecord]] = {}
    for r in records:
        groups.setdefault((r.repo, r.commit), []).append(r)
    out = []
    for rs in groups.values():
        rs = sorted(rs, key=lambda r: r.advisory)
        out.append(dataclasses.replace(
            rs[0], advisory=";".join(dict.fromkeys(r.advisory for r in rs)),
            cwes=tuple(dict.fromkeys(c for r in rs for c in r.cwes)),
            details=" ".join(dict.fromkeys(r.details for r in rs))))
    return out


def has_commit(git_dir: str, sha: str) -> bool:
    """True when the snapshot holds ``sha`` and its first parent."""
    try:
        git(git_dir, "cat-file", "-e", f"{sha}^{{commit}}")
        git(git_dir, "cat-file", "-e", f"{sha}^^{{commit}}")
        return True
    except GitError:
        return False


def change_signature(p: FixPair) -> str:
    """Family + function + the text of the changed lines: equal for back-ported copies of a fix."""
    bl, al = p.before.splitlines(), p.after.splitlines()
    rem = "\n".join(bl[i - 1].strip() for i in p.vulnerable_lines if i <= len(bl))
    add = "\n".join(al[i - 1].strip() for i in p.fix_lines if i <= len(al))
    return hashlib.sha1(f"{family(p.repo)}|{p.function}|{rem}|{add}".encode()).hexdigest()


def build(mirrors: str, out: Path, manifest: Path, repos_csv: Path, card: Path, status: Path | None,
          limit_repos: int | None = None, releases: Path | None = None, fetch_releases: bool = True) -> dict:
    """Run the whole pipeline; return summary counts."""
    db = find_mirror(mirrors, ADVISORY_DB)
    if db is None:
        raise FileNotFoundError(f"no snapshot of {ADVISORY_DB} under {mirrors}; fetch it first")
    records = merge_by_commit(load_fix_records(db))
    groups = by_repo(records)
    # Snapshots per family (every fetched owner+name folder), so that a fork's or a renamed
    # repository's snapshot can serve a commit; has_commit() checks the commit is really there.
    fam_mirrors: dict[str, list[str]] = collections.defaultdict(list)
    for d in sorted(Path(mirrors).iterdir()):
        if "+" in d.name:
            gd = find_mirror(mirrors, "github.com/" + d.name.replace("+", "/", 1))
            if gd:
                fam_mirrors[family(d.name.split("+", 1)[1])].append(gd)
    salt = choose_salt([r for r in records if r.origin in ("git_range", "reference")])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    seen_content: set[str] = set()
    seen_change: set[str] = set()
    per_adv: collections.Counter = collections.Counter()
    rows, repo_rows = [], []
    n_pairs = 0
    t0 = time.time()
    for k, (repo, recs) in enumerate(groups.items()):
        if limit_repos is not None and k >= limit_repos:
            break
        fam = family(repo)
        split = hash_split(fam, salt)
        own = find_mirror(mirrors, repo)
        cands = ([own] if own else []) + [m for m in fam_mirrors.get(fam, []) if m != own]
        if not cands:
            repo_rows.append({"repo": repo, "split": split, "advisories": len(recs), "commits_found": 0,
                              "pairs": 0, "snapshot": "", "snapshot_head": "", "licence": "",
                              "note": "no snapshot"})
            continue
        found = 0
        got: list[FixPair] = []
        used: dict[str, str] = {}
        for rec in recs:
            if rec.origin in ("pull", "issue"):
                number = rec.commit.split("/", 1)[1]
                resolve = resolve_pull if rec.origin == "pull" else resolve_issue
                sha = next((s for s in (resolve(m, number) for m in cands) if s), None)
                if sha is None:
                    continue
                rec = dataclasses.replace(rec, commit=sha)
            gd = next((m for m in cands if has_commit(m, rec.commit)), None)
            if gd is None:
                continue
            found += 1
            used[gd] = used.get(gd) or head_commit(gd)
            cwes, src = record_cwes(rec)
            try:
                pairs = commit_pairs(gd, rec, cwes, src)
            except GitError:
                continue
            for p in pairs:
                if not admit(p, rec.advisory.split(";")[0], seen_content, seen_change, per_adv):
                    continue
                p.split = split
                p.id = f"{repo}@{p.commit[:12]}:{p.file}:{p.function}"
                got.append(p)
        licence = licence_of(cands[0])
        append_pairs(out, rows, got, licence)
        n_pairs += len(got)
        repo_rows.append({
            "repo": repo, "split": split, "advisories": len({a for r in recs for a in r.advisory.split(";")}),
            "commits_found": f"{found}/{len(recs)}", "pairs": len(got),
            "snapshot": ";".join(Path(m).parent.name if Path(m).name == "repo" else Path(m).parent.parent.name
                                 for m in used),
            "snapshot_head": ";".join(used.values()), "licence": licence, "note": ""})
        if status is not None and (k % 10 == 9 or k == len(groups) - 1):
            with status.open("a") as fh:
                fh.write(f"{time.strftime('%H:%M', time.gmtime())} UTC {n_pairs} pairs after {k + 1}/"
                         f"{len(groups)} repos in {out} (still running)\n")
    if releases is not None:
        no_snapshot = {r["repo"] for r in repo_rows if r["note"] == "no snapshot"}
        got = release_stage(db, groups, no_snapshot, salt, releases, seen_content, seen_change, per_adv,
                            fetch_releases)
        append_pairs(out, rows, got, "(release archive)")
        n_pairs += len(got)
        for r in repo_rows:
            if r["repo"] in no_snapshot:
                r["pairs"] = sum(1 for p in got if p.repo == r["repo"])
                r["note"] = "no snapshot; pairs from release archives" if r["pairs"] else r["note"]
    summary = write_outputs(rows, repo_rows, manifest, repos_csv, card, salt, db, len(records))
    if status is not None:
        with status.open("a") as fh:
            fh.write(f"{time.strftime('%H:%M', time.gmtime())} UTC DONE {n_pairs} pairs "
                     f"({summary['per_split']}) in {out}; manifest {manifest}\n")
    summary["seconds"] = round(time.time() - t0, 1)
    return summary


def admit(p: FixPair, advisory: str, seen_content: set[str], seen_change: set[str],
          per_adv: collections.Counter) -> bool:
    """Whether pair ``p`` is kept: neither its content nor its change seen before and ``advisory`` under
    :data:`MAX_PAIRS_PER_ADVISORY` pairs. A kept pair is counted in the three."""
    ck, sk = p.key(), change_signature(p)
    if ck in seen_content or sk in seen_change or per_adv[advisory] >= MAX_PAIRS_PER_ADVISORY:
        return False
    seen_content.add(ck)
    seen_change.add(sk)
    per_adv[advisory] += 1
    return True


def append_pairs(out: Path, rows: list[dict], got: list[FixPair], licence: str) -> None:
    """Append the pairs ``got`` to the JSONL ``out`` and their manifest rows (with ``licence``) to ``rows``."""
    with out.open("a") as fh:
        for p in got:
            fh.write(to_json(p) + "\n")
    for p in got:
        rows.append({c: getattr(p, c, "") for c in MANIFEST_COLUMNS if c not in ("cwe", "licence")}
                    | {"cwe": ";".join(p.cwe), "licence": licence})


def release_stage(db: str, groups: dict[str, list[FixRecord]], repos: set[str], salt: str, dest: Path,
                  seen_content: set[str], seen_change: set[str], per_adv: collections.Counter,
                  fetch: bool = True) -> list[FixPair]:
    """Pairs from release archives for the advisories of packages whose repository has no snapshot
    (see :mod:`evals.codeprm.release_pairs`); only functions the advisory text names are kept."""
    pkg_repo = {r.package.lower(): repo for repo in repos for r in groups.get(repo, []) if r.package}
    by_pair: dict[tuple[str, str, str], list[dict]] = collections.defaultdict(list)
    for _, doc in read_tree_yaml(db):
        for aff in doc.get("affected") or ():
            pkg = str((aff.get("package") or {}).get("name", "")).lower()
            if pkg in pkg_repo:
                vp = version_pair(doc, pkg)
                if vp:
                    by_pair[(pkg, *vp)].append(doc)
                break
    got: list[FixPair] = []
    for (pkg, before_v, after_v), docs in sorted(by_pair.items()):
        repo = pkg_repo[pkg]
        text = " ".join(f"{d.get('summary') or ''} {d.get('details') or ''}" for d in docs)
        names = advisory_names(text)
        if not names:
            continue
        b, a = download(pkg, before_v, dest, fetch), download(pkg, after_v, dest, fetch)
        if b is None or a is None:
            continue
        advs = ";".join(sorted(str(d.get("id", "")) for d in docs))
        rec = FixRecord(advs, repo, "", pkg, cwes_in(text), (), str(docs[0].get("summary") or docs[0].get(
            "details") or "").strip().replace("\n", " ")[:300], "release_diff", text)
        cwes, src = record_cwes(rec)
        for path, bs, a_s, btxt, atxt, vuln, fix in release_function_pairs(b, a):
            if not mentioned(names, path, bs.qualname):
                continue
            p = FixPair(advisory=advs, repo=repo, commit="", file=path, function=bs.qualname, cwe=cwes,
                        cwe_source=src, before_start=bs.start, before_end=bs.end, after_start=a_s.start,
                        after_end=a_s.end, before=btxt, after=atxt, vulnerable_lines=vuln, fix_lines=fix,
                        summary=rec.summary, origin="release_diff", split=hash_split(family(repo), salt),
                        versions=f"{pkg}=={before_v}..{after_v}")
            if not admit(p, advs.split(";")[0], seen_content, seen_change, per_adv):
                continue
            p.id = f"{repo}@{pkg}-{before_v}..{after_v}:{path}:{bs.qualname}"
            got.append(p)
    return got


def write_outputs(rows: list[dict], repo_rows: list[dict], manifest: Path, repos_csv: Path, card: Path,
                  salt: str, db: str, n_commits: int) -> dict:
    """Manifest CSV, per-repository CSV and the markdown counts."""
    rows.sort(key=lambda r: (r["repo"], r["commit"], r["file"], r["function"]))
    manifest.parent.mkdir(parents=True, exist_ok=True)
    with manifest.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=MANIFEST_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    repos_csv.parent.mkdir(parents=True, exist_ok=True)
    cols = ("repo", "split", "advisories", "commits_found", "pairs", "snapshot", "snapshot_head", "licence", "note")
    with repos_csv.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(sorted(repo_rows, key=lambda r: r["repo"]))
    per_split = collections.Counter(r["split"] for r in rows)
    cwe_split: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        cwe_split[(r["cwe"].split(";")[0] or "(none)")][r["split"]] += 1
    repos_with = [r for r in repo_rows if r["pairs"]]
    repo_split = collections.Counter(r["split"] for r in repos_with)
    advs = {a for r in rows for a in r["advisory"].split(";")}
    src = collections.Counter(r["cwe_source"] or "(none)" for r in rows)
    origin = collections.Counter(r["origin"] for r in rows)
    db_head = head_commit(db)
    lines = [
        "# Vulnerability-fix pairs (PyPA advisory database)", "",
        "Built by `.venv/bin/python -m evals.codeprm.fix_pairs_build --mirrors <snapshot dir>` from the",
        f"PyPA advisory database snapshot at commit `{db_head}` (CC-BY-4.0) and one git",
        "snapshot per repository (commit of each in `evals/codeprm/data/fix_pair_repos.csv`, with the",
        "repository's licence read from its LICENSE file; the code in the pairs stays under that licence).",
        "Pairs: `data/codeprm/fix_pairs.jsonl` (not in git: it holds the repositories' code, so a clean clone",
        "rebuilds it from the snapshots listed there). Manifest: `assets/codeprm/sources.csv`.", "",
        f"- fix commits named by advisories (non-Python-heavy repositories left out): {n_commits}",
        f"- advisories with at least one pair: {len(advs)}",
        (f"- repositories with a snapshot: {sum(1 for r in repo_rows if r['snapshot'])} of {len(repo_rows)};"
         f" with at least one pair: {len(repos_with)}"),
        f"- pairs: {len(rows)} (train {per_split['train']}, dev {per_split['dev']}, test {per_split['test']})",
        (f"- repositories with pairs per split: train {repo_split['train']}, dev {repo_split['dev']},"
         f" test {repo_split['test']}"),
        f"- split salt: `{salt}` (rule in `evals/codeprm/fix_pairs_build.py`)",
        f"- CWE source: {dict(src)} — `advisory` = stated in the advisory; `keyword` = inferred from the",
        "  advisory prose with the table in `evals/codeprm/advisories.py` (noisier)",
        (f"- how the fix commit was found: {dict(origin)} — `git_range`/`reference`: named by the advisory;"
         " `pull`: the commit that merged a linked pull request; `issue`: the oldest commit whose message"
         " says it fixes a linked issue (noisiest); `release_diff`: for repositories without a snapshot, the"
         " functions the advisory names that changed between the last affected and first fixed release"
         " (archives from PyPI; commit column empty, `versions` says which)"), "",
        "| primary CWE | train | dev | test | all |", "|---|---:|---:|---:|---:|"]
    for c, cnt in sorted(cwe_split.items(), key=lambda kv: -sum(kv[1].values())):
        lines.append(f"| {c} | {cnt['train']} | {cnt['dev']} | {cnt['test']} | {sum(cnt.values())} |")
    lines += ["", "Per pair: the vulnerable function (before the fix commit) and the fixed one, the lines the",
              "fix removed or changed (vulnerable-step candidates) and the lines it added (fix lines), numbered",
              "from the function's first line. Functions over 200 lines, whitespace/comment/docstring-only",
              "changes, test/doc/example/migration files and identical or back-ported duplicate changes are",
              "left out; at most 8 functions per commit and 12 per advisory."]
    card.write_text("\n".join(lines) + "\n")
    return {"pairs": len(rows), "per_split": dict(per_split), "advisories": len(advs),
            "repos_with_pairs": len(repos_with), "salt": salt}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    ap.add_argument("--repos-csv", type=Path, default=DEFAULT_REPOS)
    ap.add_argument("--card", type=Path, default=DEFAULT_CARD)
    ap.add_argument("--status", type=Path, default=None, help="append progress lines to this file")
    ap.add_argument("--limit-repos", type=int, default=None)
    ap.add_argument("--releases", type=Path, default=None,
                    help="folder for pip-downloaded release archives; enables the release-diff stage")
    ap.add_argument("--no-download", action="store_true",
                    help="release-diff stage: use only archives already in --releases")
    a = ap.parse_args(argv)
    print(json.dumps(build(a.mirrors, a.out, a.manifest, a.repos_csv, a.card, a.status, a.limit_repos, a.releases,
                           not a.no_download)))


if __name__ == "__main__":
    main()
