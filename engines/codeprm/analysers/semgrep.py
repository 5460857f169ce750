"""The scan's one semgrep process: every semgrep-based analyser's rules over every file at once.

The engine binary that the ``semgrep`` wheel from PyPI bundles (``semgrep/bin/semgrep-core``) runs
with one rules file (every analyser's YAML rules together, written as JSON) and one targets file:
no semgrep Python CLI, no network, local rule files only. Called this way it also gives each
taint result its dataflow trace (source, the variables it passes through, sink), which the
taint rules turn into plain words. Each file is written to a temporary folder with Python's
line numbering (``lines.for_semgrep``). What semgrep could not do on a file (a rule timed out,
the file did not parse for it) comes back as a :class:`Failure` on that file.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re
import subprocess
import tempfile
from pathlib import Path

from engines.codeprm.findings import Failure
from engines.common.errors import ShowcaseError


class AnalyserUnavailable(ShowcaseError, RuntimeError):
    """An analyser cannot run here (its package or rule files are missing)."""


#: Seconds one rule may run on one file before semgrep gives it up (reported on the file).
RULE_TIMEOUT_S = 10.0


@functools.lru_cache(maxsize=1)
def semgrep_core() -> Path:
    """Path of the semgrep engine binary inside the installed ``semgrep`` wheel."""
    spec = importlib.util.find_spec("semgrep")
    if spec is None or not spec.submodule_search_locations:
        raise AnalyserUnavailable("semgrep is not installed: `pip install --no-deps semgrep==1.185.0` "
                                  "(requirements-nodeps.txt)")
    core = Path(list(spec.submodule_search_locations)[0]) / "bin" / "semgrep-core"
    if not core.is_file():
        raise AnalyserUnavailable(f"the semgrep wheel holds no engine binary at {core}")
    return core


@functools.lru_cache(maxsize=16)
def yaml_rules(files: tuple[Path, ...]) -> list[dict]:
    """Every rule of the YAML ``files`` (semgrep's ``rules:`` lists), read once per process."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where the wheel has it
    rules = []
    for f in files:
        try:
            rules += yaml.load(Path(f).read_text(), Loader=loader)["rules"]
        except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
            raise AnalyserUnavailable(f"semgrep rule file {f} cannot be read ({exc})") from exc
    return rules


def _reason(err: dict, limit_s: float) -> str:
    kind = err.get("error_type") or err.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else str(kind or "error")
    rule = err.get("rule_id")
    rule = f" (rule {rule})" if rule else ""
    if "Timeout" in kind:
        return f"semgrep gave up on this file: its rules ran past the {limit_s:g} s limit per rule"
    if "OutOfMemory" in kind or "Stack" in kind:
        return f"semgrep ran out of memory or stack on this file{rule}"
    if "Syntax" in kind or "Parse" in kind:
        return "semgrep could not parse this file; its rules read none or only part of it"
    return f"semgrep failed on this file: {kind}{rule}: {' '.join(str(err.get('message', '')).split())[:200]}"


_WORD = re.compile(r"[A-Za-z_]\w*")


def select(rules: list[dict], codes: list[str]) -> list[dict]:
    """The rules to run, each limited to the files it can match: a rule with ``codeprm-select``
    (groups of words; a file must name a word of every group) runs only on those files
    (semgrep's ``paths: include``), and not at all when there are none."""
    out = []
    words: list[set[str]] | None = None
    for r in rules:
        need = r.get("codeprm-select")
        if need is None:
            out.append(r)
            continue
        if words is None:  # each file's words, read once
            words = [set(_WORD.findall(c)) for c in codes]
        groups = [set(g) for g in need]
        names = [f"f{i}.py" for i, w in enumerate(words) if all(w & g for g in groups)]
        if names:
            out.append({**{k: v for k, v in r.items() if k != "codeprm-select"}, "paths": {"include": names}})
    return out


class SemgrepRun:
    """One semgrep process over many pieces of code with the given rule files, started at once
    and read when needed (so that the in-process analysers run while semgrep works)."""

    def __init__(self, codes: list[str], rules: list[dict], timeout_s: float = 600.0,
                 rule_timeout_s: float = RULE_TIMEOUT_S) -> None:
        from engines.codeprm.lines import for_semgrep

        self.n = len(codes)
        self.timeout_s = timeout_s
        self.rule_timeout_s = rule_timeout_s
        self.proc = None
        if not codes or not rules:
            return
        doc = json.dumps({"rules": select(rules, codes)})
        core = semgrep_core()
        self.tmp = tempfile.TemporaryDirectory(prefix="codeprm_semgrep_")
        d = Path(self.tmp.name)
        targets = []
        for i, code in enumerate(codes):
            p = d / f"f{i}.py"
            p.write_text(for_semgrep(code), encoding="utf-8", errors="replace")
            targets.append(["CodeTarget", {"path": {"fpath": str(p), "ppath": str(p)}, "analyzer": "python",
                                           "products": ["sast"]}])
        (d / "rules.json").write_text(doc)
        (d / "targets.json").write_text(json.dumps(["Targets", targets]))
        # one job: the scan's own work (bandit, the step model) holds the other core meanwhile
        cmd = ["semgrep-core", "-rules", str(d / "rules.json"), "-targets", str(d / "targets.json"), "-json",
               "-j", "1", "-fast", "-timeout", f"{rule_timeout_s:g}", "-timeout_threshold", "3"]
        # its report goes to files (a pipe would stall semgrep until the caller reads)
        self.out = open(d / "report.json", "w+", encoding="utf-8")  # noqa: SIM115
        self.err = open(d / "stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, executable=str(core), cwd=self.tmp.name, stdout=self.out,
                                     stderr=self.err, text=True,
                                     env={"PATH": "/usr/bin:/bin", "HOME": self.tmp.name,
                                          "SEMGREP_SEND_METRICS": "off"})

    def result(self) -> tuple[list[list[dict]], list[list[Failure]]]:
        """Each piece's semgrep results (as semgrep gives them) and failures, once it has finished."""
        hits: list[list[dict]] = [[] for _ in range(self.n)]
        failed: list[list[Failure]] = [[] for _ in range(self.n)]
        if self.proc is None:
            return hits, failed
        try:
            self.proc.wait(timeout=self.timeout_s)
            self.out.seek(0)
            self.err.seek(0)
            stdout, stderr = self.out.read(), self.err.read()
        except subprocess.TimeoutExpired as exc:
            raise AnalyserUnavailable(f"semgrep took longer than {self.timeout_s:.0f} s on {self.n} files") from exc
        finally:
            self.stop()
        try:  # progress dots (one line per file) come before the report
            res = json.loads(stdout[stdout.index("{"):])
        except ValueError as exc:
            raise AnalyserUnavailable(f"semgrep failed (exit {self.proc.returncode}): "
                                      f"{(stderr or stdout).strip()[-300:]}") from exc
        for hit in res.get("results", []):
            hits[int(Path(hit["path"]).stem[1:])].append(hit)
        for err in res.get("errors", []):
            loc = err.get("location") or {}
            path = err.get("path") or loc.get("path")
            if not path or not Path(path).stem[1:].isdigit():
                continue
            f = Failure("semgrep", _reason(err, self.rule_timeout_s))
            i = int(Path(path).stem[1:])
            if i < self.n and f not in failed[i]:
                failed[i].append(f)
        return hits, failed

    def stop(self) -> None:
        """End the semgrep process (an interrupted scan) and remove its files."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()
        self.tmp.cleanup()
