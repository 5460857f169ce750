"""Parse the PyPA advisory database (OSV records in YAML) into fix-commit records.

Why: the learned code-security PRM trains on real vulnerability fixes. An OSV
advisory whose ``GIT`` range has a ``fixed`` event names the commit that fixed
the vulnerability in a repository; that commit's diff gives the vulnerable and
fixed versions of the changed functions. The database is read straight from a
bare git snapshot (``git cat-file --batch``), so no work tree is needed.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import yaml

GITHUB_REPO = re.compile(r"^(?:https?|git)://(?:www\.)?github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")
COMMIT_URL = re.compile(r"github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/commit/([0-9a-f]{7,40})")
ISSUE_URL = re.compile(r"github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/issues/(\d+)")
PULL_URL = re.compile(r"github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/(\d+)")
SHA = re.compile(r"^[0-9a-f]{40}$")
CWE = re.compile(r"\bCWE[- ]?(\d{1,4})\b", re.IGNORECASE)

# Repositories whose fixes are mostly C/C++ (or vendored C) rather than Python.
NON_PYTHON_REPOS = frozenset({
    "github.com/tensorflow/tensorflow",
    "github.com/pytorch/pytorch",
    "github.com/python/cpython",
    "github.com/python-pillow/pillow",
    "github.com/numpy/numpy",
    "github.com/onnx/onnx",
    "github.com/lxml/lxml",
    "github.com/ultrajson/ultrajson",
    "github.com/esnme/ultrajson",
    "github.com/pyca/cryptography",
    "github.com/apache/arrow",
    "github.com/opencv/opencv",
    "github.com/opencv/opencv-python",
    "github.com/msgpack/msgpack-python",
    "github.com/ray-project/ray",
    "github.com/micropython/micropython",
    "github.com/jimmo/micropython",
    "github.com/bytecodealliance/wasmtime",
    "github.com/fluture-js/fluture-node",
    "github.com/python/typed_ast",
})


@dataclass(frozen=True)
class FixRecord:
    """One (advisory, repository, fix commit) triple with what the advisory says about it."""

    advisory: str
    repo: str  # github.com/owner/name, lower-cased
    commit: str  # full 40-hex SHA
    package: str
    cwes: tuple[str, ...] = field(default_factory=tuple)
    aliases: tuple[str, ...] = field(default_factory=tuple)
    summary: str = ""
    # "git_range" (OSV GIT range), "reference" (a /commit/ URL), "pull" (a /pull/N URL; ``commit``
    # is then "pull/N" until :func:`resolve_pull` finds the merged commit in a snapshot) or "issue"
    # (an /issues/N URL; "issue/N" until :func:`resolve_issue` finds a commit saying it fixes N).
    origin: str = "git_range"
    details: str = ""  # summary and details prose, for CWE keywords


def normalise_repo(url: str) -> str | None:
    """Return ``github.com/owner/name`` (lower case) for a GitHub clone URL, else None."""
    m = GITHUB_REPO.match(url.strip())
    if not m:
        return None
    return f"github.com/{m.group(1)}/{m.group(2)}".lower()


def cwes_in(text: str) -> tuple[str, ...]:
    """CWE ids (``CWE-79``) named anywhere in ``text``, in order of first mention."""
    seen: dict[str, None] = {}
    for m in CWE.finditer(text or ""):
        seen[f"CWE-{int(m.group(1))}"] = None
    return tuple(seen)


def read_tree_yaml(git_dir: str, prefix: str = "vulns/", rev: str = "HEAD") -> Iterator[tuple[str, dict]]:
    """Yield (path, parsed YAML) for every ``*.yaml`` under ``prefix`` at ``rev`` of a bare repo."""
    names = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", rev, prefix],
        check=True, capture_output=True, text=True).stdout.split("\n")
    names = [n for n in names if n.endswith((".yaml", ".yml"))]
    for path, blob in cat_files(git_dir, [f"{rev}:{n}" for n in names]):
        try:
            doc = yaml.safe_load(blob.decode("utf-8", "replace"))
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict):
            yield path.split(":", 1)[1], doc


def cat_files(git_dir: str, specs: list[str]) -> Iterator[tuple[str, bytes]]:
    """Yield (spec, content) for each ``rev:path`` spec through one ``git cat-file --batch``."""
    p = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                       input="".join(s + "\n" for s in specs).encode(), capture_output=True, check=True)
    out, pos = p.stdout, 0
    for spec in specs:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        yield spec, out[pos:pos + size]
        pos += size + 1


def fix_records(doc: dict) -> list[FixRecord]:
    """Fix commits named by an OSV advisory's GIT ranges (``fixed`` events with a 40-hex SHA)."""
    adv = str(doc.get("id", ""))
    aliases = tuple(str(a) for a in doc.get("aliases") or ())
    text = " ".join(str(doc.get(k) or "") for k in ("summary", "details"))
    dbs = doc.get("database_specific") or {}
    cwes = tuple(dict.fromkeys(cwes_in(text) + tuple(
        f"CWE-{int(c.split('-')[-1])}" for c in (dbs.get("cwe_ids") or []) if str(c).split("-")[-1].isdigit())))
    summary = str(doc.get("summary") or doc.get("details") or "").strip().replace("\n", " ")[:300]
    out: dict[tuple[str, str], FixRecord] = {}
    for aff in doc.get("affected") or ():
        pkg = str((aff.get("package") or {}).get("name", ""))
        for rng in aff.get("ranges") or ():
            if rng.get("type") != "GIT":
                continue
            repo = normalise_repo(str(rng.get("repo", "")))
            if repo is None:
                continue
            for ev in rng.get("events") or ():
                sha = str(ev.get("fixed", "")).strip().lower()
                if SHA.match(sha):
                    out.setdefault((repo, sha), FixRecord(adv, repo, sha, pkg, cwes, aliases, summary, "git_range", text))
    # References of type FIX (or any /commit/ URL) name fix commits too when no GIT range does.
    pkgs = [str((a.get("package") or {}).get("name", "")) for a in doc.get("affected") or ()]
    for ref in doc.get("references") or ():
        m = COMMIT_URL.search(str(ref.get("url", "")))
        if not m or len(m.group(3)) != 40:
            continue
        repo = f"github.com/{m.group(1)}/{m.group(2)}".lower()
        sha = m.group(3).lower()
        if any(r == repo for r, _ in out) and (repo, sha) not in out and ref.get("type") != "FIX":
            continue
        out.setdefault((repo, sha), FixRecord(adv, repo, sha, pkgs[0] if pkgs else "", cwes, aliases,
                                              summary, "reference", text))
    # No commit named: a pull request the advisory links to stands for the fix (resolved later); else
    # an issue it links to: the commit whose message says it fixes that issue (noisiest).
    for url, kind in ((PULL_URL, "pull"), (ISSUE_URL, "issue")):
        if out:
            break
        for ref in doc.get("references") or ():
            m = url.search(str(ref.get("url", "")))
            if m:
                repo = f"github.com/{m.group(1)}/{m.group(2)}".lower()
                out.setdefault((repo, m.group(3)), FixRecord(adv, repo, f"{kind}/{m.group(3)}", pkgs[0] if pkgs else "",
                                                             cwes, aliases, summary, kind, text))
    return list(out.values())


_PULL_INDEX: dict[str, dict[str, str]] = {}
_MERGE_SUBJECT = re.compile(r"^Merge pull request #(\d+)\b")
_SQUASH_SUBJECT = re.compile(r"\(#(\d+)\)\s*$")


def resolve_pull(git_dir: str, number: str) -> str | None:
    """Commit that merged pull request ``number`` in a snapshot: the ``Merge pull request #N``
    merge commit (diffed against its first parent, i.e. the whole PR), else a squash commit whose
    subject ends with ``(#N)``; None when not found. One ``git log`` per snapshot, cached."""
    index = _PULL_INDEX.get(git_dir)
    if index is None:
        p = subprocess.run(["git", "--git-dir", git_dir, "log", "--all", "--format=%H %P%x00%s"],
                           capture_output=True, text=True, errors="replace", check=False)
        merges: dict[str, str] = {}
        squashes: dict[str, str] = {}
        for line in p.stdout.splitlines() if p.returncode == 0 else ():
            shas, _, subject = line.partition("\0")
            parts = shas.split()
            m = _MERGE_SUBJECT.match(subject)
            if m and len(parts) == 3:
                merges.setdefault(m.group(1), parts[0])
                continue
            m = _SQUASH_SUBJECT.search(subject)
            if m and len(parts) == 2:
                squashes.setdefault(m.group(1), parts[0])
        index = _PULL_INDEX[git_dir] = squashes | merges
    return index.get(number)


def load_fix_records(git_dir: str, rev: str = "HEAD") -> list[FixRecord]:
    """All fix records of the PyPA database at ``rev``, non-Python-heavy repositories left out."""
    recs: list[FixRecord] = []
    for _, doc in read_tree_yaml(git_dir, "vulns/", rev):
        recs.extend(r for r in fix_records(doc) if r.repo not in NON_PYTHON_REPOS)
    return recs


def by_repo(records: Iterable[FixRecord]) -> dict[str, list[FixRecord]]:
    """Group records by repository, most advisories first."""
    groups: dict[str, list[FixRecord]] = {}
    for r in records:
        groups.setdefault(r.repo, []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


# Vulnerability classes named in advisory prose, mapped to their CWE id. Checked in this order;
# used only where the advisory names no CWE id itself (the record says which source gave it).
CWE_KEYWORDS: tuple[tuple[str, str], ...] = (
    # CWE titles as huntr.dev-style advisories quote them.
    (r"rendered ui layers|clickjacking|x-frame-options", "CWE-1021"),
    (r"allocation of resources without limits", "CWE-770"),
    (r"improper privilege management", "CWE-269"),
    (r"missing authorization", "CWE-862"),
    (r"insufficient session expiration|session (does not|doesn't|never) expire", "CWE-613"),
    (r"weak password requirements", "CWE-521"),
    (r"unrestricted upload|dangerous type", "CWE-434"),
    (r"formula elements|csv injection", "CWE-1236"),
    (r"broken or risky cryptographic|weak (cipher|crypto)", "CWE-327"),
    (r"sensitive cookie|httponly|secure (flag|attribute)", "CWE-614"),
    (r"buffer overflow|out[- ]of[- ]bounds", "CWE-120"),
    (r"buffer overrun|memory corruption", "CWE-787"),
    (r"integer overflow|overflow check|allocation overflow", "CWE-190"),
    (r"improper cleanup on thrown exception", "CWE-460"),
    (r"missing authentication", "CWE-306"),
    (r"business logic", "CWE-840"),
    (r"user enumeration|username enumeration|account enumeration", "CWE-203"),
    (r"dns rebinding", "CWE-350"),
    (r"formula injection", "CWE-1236"),
    (r"hard-?coded (jwt |secret |credential|password|key)", "CWE-798"),
    (r"untrusted search path", "CWE-426"),
    (r"argument injection|option injection|insecure (non-multi )?options", "CWE-88"),
    (r"verification of (a )?cryptographic signature|verify key fingerprints", "CWE-347"),
    (r"\becb\b", "CWE-327"),
    (r"did not verify certificates|verify=false", "CWE-295"),
    (r"\brandom` library|insufficient (\w+ )?randomness|pin randomness|predictable", "CWE-330"),
    (r"cross[- ]site[- ]scripting|\bxss\b|script injection|html injection", "CWE-79"),
    (r"sql injection|\bsqli\b", "CWE-89"),
    ((r"command injection|shell injection|os command|shell metacharacter|arbitrary (shell )?commands?"
      r"|\bpopen\b|shell=true|escaping of the shell"), "CWE-78"),
    (r"server[- ]side request forgery|\bssrf\b", "CWE-918"),
    (r"cross[- ]site request forgery|\bcsrf\b|\bxsrf\b", "CWE-352"),
    ((r"path traversal|directory traversal|archive traversal|zip ?slip|\.\./|arbitrary file (read|write|access|overwrite)"
      r"|outside (of )?the (intended|expected|upload|base|root)"), "CWE-22"),
    (r"open redirect|url redirect|redirect(ion)? to (an )?(arbitrary|untrusted|external)", "CWE-601"),
    (r"xml external entit|\bxxe\b|entity expansion|billion laughs", "CWE-611"),
    (r"template injection|\bssti\b", "CWE-1336"),
    (r"deseriali[sz]|unpickl|pickle|yaml\.load|unsafe load", "CWE-502"),
    ((r"regular expression denial|\bredos\b|catastrophic backtracking|regular expression.{0,60}"
      r"(denial|exponential|polynomial|complexity|slow)|inefficient regular expression"), "CWE-1333"),
    (r"code injection|arbitrary (python )?code|remote code execution|code execution|\beval\(|\bexec\(|sandbox", "CWE-94"),
    (r"internal (systems|network|services)", "CWE-918"),
    (r"yaml", "CWE-502"),
    (r"crlf|header injection|response splitting|request smuggling", "CWE-444"),
    (r"ldap injection", "CWE-90"),
    (r"timing (attack|side|leak|discrepanc)|constant[- ]time", "CWE-208"),
    ((r"certificate (validation|verification)|hostname (verification|check)|verify ssl|tls verification"
      r"|man[- ]in[- ]the[- ]middle|certificate errors?"), "CWE-295"),
    (r"signature (verification|validation|check)|forged? signature|signature bypass", "CWE-347"),
    (r"session fixation", "CWE-384"),
    (r"brute[- ]force|rate limit", "CWE-307"),
    (r"symlink|symbolic link", "CWE-59"),
    (r"temporary (file|director)|tmp file|/tmp\b", "CWE-377"),
    (r"authentication bypass|bypass (the )?authentication|improper authentication|unauthenticated|impersonat",
     "CWE-287"),
    (r"privilege escalation|authori[sz]ation|access control|unauthori[sz]ed|permission|bypass", "CWE-863"),
    (r"cleartext|plain ?text (password|secret)|stored in clear|password hash|weak (hash|password)", "CWE-312"),
    (r"information (disclosure|exposure|leak)|sensitive (information|data)|leak|exposes? |exposure", "CWE-200"),
    ((r"denial of service|\bdos\b|resource exhaustion|memory exhaustion|infinite loop|uncontrolled resource"
      r"|excessive (memory|cpu)|hang|exhaust"), "CWE-400"),
    (r"improperly handled exceptions|unhandled exception", "CWE-755"),
    (r"input validation|improper validation|does not (properly )?(validate|sanitize)", "CWE-20"),
    (r"injection", "CWE-74"),
)
_CWE_KEYWORDS = tuple((re.compile(p, re.IGNORECASE), c) for p, c in CWE_KEYWORDS)


def cwes_from_keywords(text: str, limit: int = 3) -> tuple[str, ...]:
    """CWE ids whose vulnerability class the advisory prose names, in :data:`CWE_KEYWORDS` order."""
    found = [c for rx, c in _CWE_KEYWORDS if rx.search(text or "")]
    return tuple(dict.fromkeys(found))[:limit]


def record_cwes(rec: FixRecord) -> tuple[list[str], str]:
    """(CWE ids, source) for a record: ids the advisory states ("advisory"), else keywords ("keyword")."""
    if rec.cwes:
        return list(rec.cwes), "advisory"
    kw = cwes_from_keywords(rec.details or rec.summary)
    return (list(kw), "keyword") if kw else ([], "")


_ISSUE_INDEX: dict[str, dict[str, str]] = {}
_FIXES = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\b[:\s]+(?:issue\s+)?#(\d+)\b", re.IGNORECASE)


def resolve_issue(git_dir: str, number: str) -> str | None:
    """Oldest non-merge commit whose message says it fixes/closes/resolves issue ``number``
    (``Fixes #N``); None when none does. One ``git log`` per snapshot, cached."""
    index = _ISSUE_INDEX.get(git_dir)
    if index is None:
        p = subprocess.run(["git", "--git-dir", git_dir, "log", "--all", "--no-merges", "--reverse",
                            "--format=%x01%H%x00%B"], capture_output=True, text=True, errors="replace", check=False)
        index = {}
        for chunk in p.stdout.split("\x01") if p.returncode == 0 else ():
            sha, _, body = chunk.partition("\0")
            for m in _FIXES.finditer(body):
                index.setdefault(m.group(1), sha.strip())
        _ISSUE_INDEX[git_dir] = index
    return index.get(number)
