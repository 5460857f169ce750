"""What the repository holds: code that says what is (history lives in git), and measurements that a
table cites."""
from __future__ import annotations

import re

from conftest import REPO

#: A date, or a mention of the issue or the round of work a line came from: history, not behaviour.
HISTORY = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b[Ii]ssue #\d+|\bpart \d+\b|\bround \d+ of issue")


def test_engine_and_server_code_carries_no_history():
    """Issue #47 item 23: ``engines/watermark/cost.py`` said "fitted on 2026-12-04" in a docstring.
    Fitted figures and dates belong in RESULTS.md, the story of a change in git: no file of the engines
    or the server names a date, an issue or a round of work."""
    found = []
    for path in sorted([*(REPO / "engines").rglob("*.py"), *(REPO / "server").rglob("*.py")]):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_every_stored_result_is_cited_or_a_benchmarks_output():
    """Issue #47 item 23: benchmarks/results/ held files no table cites and no script writes. Each file
    there is cited by RESULTS.md (or a data card), or is what a benchmark script writes (its latest run)."""
    results = REPO / "benchmarks" / "results"
    cited = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    cited += "".join(p.read_text(encoding="utf-8") for p in (REPO / "assets").glob("*/DATA_CARD.md"))
    scripts = "".join(p.read_text(encoding="utf-8") for p in [*(REPO / "benchmarks").glob("*.py"),
                                                                *(REPO / "scripts").glob("*.py")])
    stray = [p.name for p in sorted(results.iterdir())
             if p.name not in cited and p.name not in scripts and p.stem not in scripts]
    assert not stray, stray


def test_the_former_make_targets_run_the_renamed_jobs():
    """Issue #47 item 21: ``make bench-bandits`` and ``make figures-bandits`` are now ``bench-dueling`` and
    ``figures-dueling``; the old targets stay, for one release, and run the same commands."""
    import subprocess

    for old, new in (("bench-bandits", "bench-dueling"), ("figures-bandits", "figures-dueling")):
        dry = [subprocess.run(["make", "-n", "-W", "requirements.txt", t], cwd=REPO, capture_output=True,
                              text=True, timeout=60) for t in (old, new)]
        commands = [[line for line in d.stdout.splitlines() if "dueling_" in line] for d in dry]
        assert dry[0].returncode == 0 and commands[0] and commands[0] == commands[1], (old, dry[0].stdout, dry[0].stderr)
