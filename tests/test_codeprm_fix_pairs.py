"""The fix-pair pipeline: advisory parsing, function-level pair extraction and the committed manifest."""
from __future__ import annotations

import collections
import csv
from pathlib import Path

from evals.codeprm.advisories import (
    cwes_from_keywords,
    fix_records,
    normalise_repo,
    record_cwes,
)
from evals.codeprm.fix_pairs import code_tokens, file_pairs
from evals.codeprm.fix_pairs_build import MANIFEST_COLUMNS, family, hash_split

ROOT = Path(__file__).resolve().parents[1]
SHA = "0123456789abcdef0123456789abcdef01234567"

BEFORE = '''import os


class Store:
    def read(self, root, name):
        """Return a file under root."""
        path = os.path.join(root, name)
        with open(path) as fh:
            return fh.read()

    def size(self, root):
        return len(os.listdir(root))


def helper(x):
    # a comment
    return x + 1
'''


def _edit(text: str, *changes: tuple[str, str]) -> str:
    """``text`` with each (old, new) replaced; every old must stand in it exactly once."""
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


# The fix: a path check in Store.read (its docstring says so) and a comment-only edit in helper.
AFTER = _edit(
    BEFORE,
    ('"""Return a file under root."""', '"""Return a file under root, refusing paths that leave it."""'),
    ("        path = os.path.join(root, name)\n",
     ("        path = os.path.realpath(os.path.join(root, name))\n"
      "        if not path.startswith(os.path.realpath(root) + os.sep):\n"
      '            raise ValueError("path leaves root")\n')),
    ("# a comment", "# a different comment"),
)


def test_osv_git_range_gives_fix_commit_and_keyword_cwe():
    doc = {
        "id": "PYSEC-0000-1", "details": "A path traversal in Store.read allows reading arbitrary files.",
        "aliases": ["CVE-0000-1"],
        "affected": [{"package": {"name": "store"}, "ranges": [
            {"type": "GIT", "repo": "https://github.com/Owner/Store.git",
             "events": [{"introduced": "0"}, {"fixed": SHA}, {"fixed": "v1.2"}]},
            {"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "1.2"}]}]}],
    }
    (rec,) = fix_records(doc)
    assert (rec.repo, rec.commit, rec.origin) == ("github.com/owner/store", SHA, "git_range")
    assert record_cwes(rec) == (["CWE-22"], "keyword")


def test_pull_request_link_used_only_without_a_commit():
    base = {"id": "PYSEC-0000-2", "details": "Cross-site scripting (CWE-79) in the admin page.",
            "references": [{"type": "WEB", "url": "https://github.com/o/r/pull/42"}]}
    (rec,) = fix_records(base)
    assert (rec.commit, rec.origin) == ("pull/42", "pull")
    assert record_cwes(rec) == (["CWE-79"], "advisory")
    with_commit = dict(base, references=base["references"] + [
        {"type": "FIX", "url": f"https://github.com/o/r/commit/{SHA}"}])
    assert [(r.commit, r.origin) for r in fix_records(with_commit)] == [(SHA, "reference")]


def test_repo_urls_and_keywords():
    assert normalise_repo("https://github.com/Pylons/waitress") == "github.com/pylons/waitress"
    assert normalise_repo("https://gitlab.com/a/b") is None
    assert cwes_from_keywords("SQL injection via the order parameter")[0] == "CWE-89"
    assert cwes_from_keywords("nothing to see") == ()


def test_only_the_substantively_changed_function_becomes_a_pair():
    pairs = list(file_pairs(BEFORE, AFTER))
    assert [(b.qualname, a.qualname) for b, a, _, _ in pairs] == [("Store.read", "Store.read")]
    _, _, vuln, fix = pairs[0]
    # Line 1 is the def; the docstring change alone is not what makes it a pair, the path check is.
    assert 3 in vuln and {3, 4, 5} <= set(fix)
    assert code_tokens("def f():\n    # x\n    return 1\n") == code_tokens("def f():\n    return 1  # y\n")


def test_split_is_a_fixed_hash_of_the_family():
    assert family("github.com/mitsuhiko/jinja2") == family("github.com/pallets/jinja")
    assert hash_split("jinja", "fixpairs-5") == hash_split("jinja", "fixpairs-5")
    got = collections.Counter(hash_split(f"repo{i}", "s") for i in range(2000))
    assert 0.65 < got["train"] / 2000 < 0.75 and 0.12 < got["test"] / 2000 < 0.18


def test_committed_manifest_splits_by_repository():
    path = ROOT / "assets" / "codeprm" / "sources.csv"
    rows = list(csv.DictReader(path.open()))
    assert rows and set(MANIFEST_COLUMNS) <= set(rows[0])
    assert len(rows) >= 1000
    splits_of = collections.defaultdict(set)
    for r in rows:
        assert r["repo"].startswith("github.com/") and r["file"].endswith(".py")
        # A commit names the fix, except for release-archive pairs, which name the two releases.
        assert len(r["commit"]) == 40 if r["origin"] != "release_diff" else "==" in r["versions"]
        splits_of[family(r["repo"])].add(r["split"])
    assert all(len(s) == 1 for s in splits_of.values())
    per_split = collections.Counter(r["split"] for r in rows)
    assert set(per_split) == {"train", "dev", "test"}
    test_cwes = {r["cwe"].split(";")[0] for r in rows if r["split"] == "test" and r["cwe"]}
    assert len(test_cwes) >= 8


def test_release_pair_versions_and_named_functions():
    from evals.codeprm.release_pairs import advisory_names, mentioned, version_pair

    doc = {"affected": [{"package": {"name": "Django"}, "versions": ["4.2.13", "4.2.14", "5.0.6", "5.0.7"],
                         "ranges": [{"type": "ECOSYSTEM", "events": [
                             {"introduced": "4.2"}, {"fixed": "4.2.15"}, {"introduced": "5.0"}, {"fixed": "5.0.8"}]}]}]}
    assert version_pair(doc, "django") == ("5.0.7", "5.0.8")
    names = advisory_names("The urlize() and urlizetrunc() template filters are subject to a denial-of-service.")
    assert {"urlize", "urlizetrunc"} <= names
    assert mentioned(names, "django/utils/html.py", "Urlizer.handle_word")
    assert not mentioned(names, "django/contrib/admin/checks.py", "ModelAdminChecks._check_date_hierarchy")
