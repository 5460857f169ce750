"""Meta's CodeShield / Insecure Code Detector rules for Python, run offline.

The rules (MIT, Meta Platforms; copied unchanged from the ``inspect-evals`` 0.28.0 wheel,
``cyberseceval_4/insecure_code_detector/rules/``) live in ``assets/codeprm/codeshield``:
semgrep rules in ``semgrep/`` and the detector's Python regex rules in ``regex/python.yaml``.
The semgrep rules run with the engine binary that the ``semgrep`` wheel from PyPI bundles
(``semgrep/bin/semgrep-core``, started as ``osemgrep scan --experimental --metrics=off
--config <dir>``): it needs none of semgrep's Python CLI dependencies, reads only local rule
files and never reaches the network. Many files go to one call (a call costs a process start).
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re
import subprocess
import tempfile
from pathlib import Path

from engines.codeprm.findings import Finding
from engines.common.errors import ShowcaseError
from engines.common.paths import ASSETS_DIR

RULES_DIR = ASSETS_DIR / "codeprm" / "codeshield"
_CWE_RE = re.compile(r"CWE-(\d+)")


class AnalyserUnavailable(ShowcaseError, RuntimeError):
    """An analyser cannot run here (its package or rule files are missing)."""


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


@functools.lru_cache(maxsize=1)
def regex_rules() -> list[tuple[re.Pattern, int, str, str]]:
    """The detector's Python regex rules: (pattern, cwe, rule id, message)."""
    import yaml

    path = RULES_DIR / "regex" / "python.yaml"
    if not path.is_file():
        raise AnalyserUnavailable(f"CodeShield rule files missing in {RULES_DIR}")
    out = []
    for r in yaml.safe_load(path.read_text()):
        cwe = int(_CWE_RE.search(r["cwe_id"]).group(1))
        out.append((re.compile(r["rule"]), cwe, r["pattern_id"], " ".join(r["description"].split())))
    return out


def _cwe_of(meta: dict) -> int:
    m = _CWE_RE.search(str(meta.get("cwe_id", "")))
    return int(m.group(1)) if m else 0


_SEVERITY = {"INFO": "low", "WARNING": "medium", "ERROR": "high"}


class SemgrepRun:
    """One semgrep process over many pieces of code, started at once and read when needed (so
    that a tree scan runs the other analysers while semgrep works). Each piece is written to a
    temporary folder with Python's line numbering (``lines.for_semgrep``)."""

    def __init__(self, codes: list[str], timeout_s: float = 600.0) -> None:
        from engines.codeprm.lines import for_semgrep

        rules = RULES_DIR / "semgrep"
        if not rules.is_dir():
            raise AnalyserUnavailable(f"CodeShield semgrep rules missing in {rules}")
        self.n = len(codes)
        self.timeout_s = timeout_s
        self.proc = None
        if not codes:
            return
        self.tmp = tempfile.TemporaryDirectory(prefix="codeshield_")
        names = []
        for i, code in enumerate(codes):
            p = Path(self.tmp.name) / f"f{i}.py"
            p.write_text(for_semgrep(code), encoding="utf-8", errors="replace")
            names.append(p.name)
        # one job: the scan's own work (bandit, the step model) holds the other core meanwhile, and a
        # second semgrep worker costs about 0.1 s more CPU on a 100-file tree for the same results
        cmd = ["osemgrep", "scan", "--experimental", "--metrics=off", "--disable-version-check", "--quiet",
               "--json", "--no-git-ignore", "--timeout", "10", "--jobs", "1", "--config", str(rules), *names]
        # its report goes to files (a pipe would stall semgrep until the caller reads)
        self.out = open(Path(self.tmp.name) / "report.json", "w+", encoding="utf-8")  # noqa: SIM115
        self.err = open(Path(self.tmp.name) / "stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, executable=str(semgrep_core()), cwd=self.tmp.name, stdout=self.out,
                                     stderr=self.err, text=True,
                                     env={"PATH": "/usr/bin:/bin", "HOME": self.tmp.name,
                                          "SEMGREP_SEND_METRICS": "off"})

    def result(self) -> list[list[tuple[int, int, str, str, str]]]:
        """(line, cwe, rule, message, severity) of each piece, once semgrep has finished."""
        out: list[list[tuple[int, int, str, str, str]]] = [[] for _ in range(self.n)]
        if self.proc is None:
            return out
        try:
            self.proc.wait(timeout=self.timeout_s)
            self.out.seek(0)
            self.err.seek(0)
            stdout, stderr = self.out.read(), self.err.read()
        except subprocess.TimeoutExpired as exc:
            raise AnalyserUnavailable(f"semgrep took longer than {self.timeout_s:.0f} s on {self.n} files") from exc
        finally:
            self.stop()
        try:
            res = json.loads(stdout)
        except json.JSONDecodeError as exc:
            raise AnalyserUnavailable(f"semgrep failed (exit {self.proc.returncode}): {stderr.strip()[-300:]}") from exc
        for hit in res.get("results", []):
            i = int(Path(hit["path"]).stem[1:])
            extra = hit.get("extra", {})
            rule = hit["check_id"].rsplit(".", 1)[-1]
            out[i].append((int(hit["start"]["line"]), _cwe_of(extra.get("metadata", {})), rule,
                           " ".join(str(extra.get("message", "")).split()),
                           _SEVERITY.get(str(extra.get("severity", "")).upper(), "medium")))
        return out

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


def semgrep_raw(codes: list[str], timeout_s: float = 600.0) -> list[list[tuple[int, int, str, str, str]]]:
    """semgrep results of the CodeShield rules on each piece of code: (line, cwe, rule, message, severity)."""
    return SemgrepRun(codes, timeout_s).result()


def regex_findings(code: str) -> list[Finding]:
    """The detector's Python regex rules, line by line (Python's line numbering)."""
    from engines.codeprm.lines import split_lines

    out = []
    for ln, text in enumerate(split_lines(code), 1):
        for rx, cwe, rule, msg in regex_rules():
            if rx.search(text):
                out.append(Finding(ln, cwe, f"codeshield:{rule}", msg, "codeshield", "medium"))
    return out


def codeshield_findings(codes: list[str], run: SemgrepRun | None = None) -> list[list[Finding]]:
    """CodeShield findings (semgrep rules + the detector's Python regex rules) for each piece of
    code; ``run`` is a semgrep process already started on ``codes``.

    >>> [(f.line, f.cwe) for f in codeshield_findings(["import os\\n\\nos.system(cmd)\\n"])[0]]  # doctest: +SKIP
    [(3, 78)]
    """
    sem = (run or SemgrepRun(codes)).result()
    out = []
    for code, hits in zip(codes, sem):
        fs = [Finding(line, cwe, f"codeshield:{rule}", msg, "codeshield", sev) for line, cwe, rule, msg, sev in hits]
        out.append(sorted(set(fs + regex_findings(code)), key=lambda f: (f.line, f.rule)))
    return out
