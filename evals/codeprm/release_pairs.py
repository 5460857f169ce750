"""Fix pairs from released packages, for advisories whose repository has no usable snapshot.

Why: some of the most-advised Python projects (Django, Airflow, MLflow, LangChain) have
repositories too large to fetch as a snapshot. Their security releases are small patch
releases, so the difference between the last affected release and the first fixed one is
mostly the fix. Both releases are fetched with pip (a wheel when there is one, else the sdist),
every ``.py`` file that differs is compared with :func:`evals.codeprm.fix_pairs.file_pairs`,
and the changed functions become pairs marked ``origin: release_diff`` (noisier than a commit:
a release can carry other changes too).
"""
from __future__ import annotations

import io
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from evals.codeprm.fix_pairs import SKIP_PATH, file_pairs

MAX_FUNCS_PER_RELEASE = 12
MAX_MEMBER_BYTES = 2_000_000


def version_pair(doc: dict, package: str) -> tuple[str, str] | None:
    """(last affected, first fixed) release of ``package``: the highest ``fixed`` version of the
    advisory's ECOSYSTEM ranges that has an affected release below it, and that release."""
    best: tuple[Version, Version] | None = None
    for aff in doc.get("affected") or ():
        if str((aff.get("package") or {}).get("name", "")).lower() != package.lower():
            continue
        affected = []
        for v in aff.get("versions") or ():
            try:
                affected.append(Version(str(v)))
            except InvalidVersion:
                continue
        for rng in aff.get("ranges") or ():
            if rng.get("type") != "ECOSYSTEM":
                continue
            for ev in rng.get("events") or ():
                try:
                    fixed = Version(str(ev["fixed"])) if "fixed" in ev else None
                except InvalidVersion:
                    fixed = None
                if fixed is None:
                    continue
                below = [v for v in affected if v < fixed and not v.is_prerelease]
                if below and (best is None or fixed > best[1]):
                    best = (max(below), fixed)
    return (str(best[0]), str(best[1])) if best else None


def download(package: str, version: str, dest: Path, fetch: bool = True) -> Path | None:
    """A wheel (else sdist) of ``package==version`` in ``dest`` via pip, cached; None if pip fails
    (or, with ``fetch=False``, if it is not in ``dest`` already)."""
    dest.mkdir(parents=True, exist_ok=True)
    want = re.sub(r"[-_.]+", "_", f"{package}-{version}".lower()) + "_"

    def cached() -> Path | None:
        for f in sorted(dest.iterdir()):
            if re.sub(r"[-_.]+", "_", f.name.lower()).startswith(want):
                return f
        return None

    hit = cached()
    if hit or not fetch:
        return hit
    for mode in (["--only-binary", ":all:"], ["--no-binary", ":all:"]):
        p = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                            "-q", *mode, "-d", str(dest), f"{package}=={version}"],
                           capture_output=True, text=True, timeout=300, check=False)
        if p.returncode == 0:
            hit = cached()
            if hit:
                return hit
    return None


def python_files(archive: Path) -> dict[str, str]:
    """Path (top folder of an sdist dropped) -> text of every ``.py`` member of a wheel or sdist."""
    out: dict[str, str] = {}
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if info.filename.endswith(".py") and info.file_size <= MAX_MEMBER_BYTES:
                    name = info.filename.split("/", 1)[1] if archive.suffix == ".zip" else info.filename
                    out[name] = z.read(info).decode("utf-8", "replace")
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.endswith(".py") and m.size <= MAX_MEMBER_BYTES and "/" in m.name:
                    fh = t.extractfile(m)
                    if fh is not None:
                        out[m.name.split("/", 1)[1]] = io.TextIOWrapper(fh, "utf-8", "replace").read()
    return out


def release_function_pairs(before: Path, after: Path) -> list[tuple[str, object, object, str, str, list, list]]:
    """Changed functions between two releases: (file, before span, after span, before text, after text,
    vulnerable lines, fix lines), smallest changes first, at most :data:`MAX_FUNCS_PER_RELEASE`."""
    import textwrap
    bf, af = python_files(before), python_files(after)
    found = []
    for path in sorted(set(bf) & set(af)):
        if bf[path] == af[path] or SKIP_PATH.search(path):
            continue
        bl, al = bf[path].splitlines(keepends=True), af[path].splitlines(keepends=True)
        for bs, a_s, r, a in file_pairs(bf[path], af[path]):
            found.append((path, bs, a_s, textwrap.dedent("".join(bl[bs.start - 1:bs.end])),
                          textwrap.dedent("".join(al[a_s.start - 1:a_s.end])), r, a))
    found.sort(key=lambda x: len(x[5]) + len(x[6]))
    return found[:MAX_FUNCS_PER_RELEASE]


_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]{3,})\s*\(")
_TICK = re.compile(r"`([^`]{4,80})`")
_DOTTED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\b")
_GENERIC = frozenset({"django", "airflow", "apache", "mlflow", "langchain", "weblate", "sentry", "pretix",
                      "utils", "contrib", "core", "models", "http", "python", "version", "versions", "before",
                      "after", "self", "none", "true", "false", "html", "json", "init", "main", "github"})


def advisory_names(text: str) -> set[str]:
    """Code names an advisory's prose mentions: ``name(``, backticked names and dotted paths, lower case."""
    names: set[str] = set()
    for rx in (_CALL, _TICK, _DOTTED):
        for m in rx.finditer(text or ""):
            for part in re.split(r"[^A-Za-z0-9_]+", m.group(1)):
                part = part.strip("_").lower()
                if len(part) >= 4 and part not in _GENERIC and not part.isdigit():
                    names.add(part)
    return names


def mentioned(names: set[str], path: str, qualname: str) -> bool:
    """True when a name from the advisory matches the function's name parts or the file's module path.

    Names of five or more characters also match as a prefix (``urlize`` matches ``Urlizer``)."""
    parts = [p.strip("_").lower() for p in qualname.split(".")]
    parts += [p.lower() for p in re.split(r"[/.]", path[:-3]) if p]
    for n in names:
        for p in parts:
            if n == p or (len(n) >= 5 and p.startswith(n)):
                return True
    return False
