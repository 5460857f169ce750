"""The hand-written request sets of issue 44 (other languages, role-play wrappers, typed test
probes) keep their counts, label balance per form and distance from the probes."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "evals" / "guardrail" / "prompts" / "v2" / "check_multi.py"


def test_multilingual_corpus_wrappers_and_probes_pass_their_checker():
    run = subprocess.run([sys.executable, str(CHECKER)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "\nOK" in run.stdout
