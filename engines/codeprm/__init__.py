"""Code security stepping: a step-level security process reward model for Python (SecCodePRM).

>>> from engines.codeprm import split_steps
>>> len(split_steps("a = 1\\n\\nb = 2\\n"))
2
"""
from engines.codeprm.analysers import run_analysers
from engines.codeprm.config import PRMConfig
from engines.codeprm.engine import (
    CodePRM,
    CodeTooLarge,
    EmptyCode,
    NotPython,
    ScanResult,
    StepResult,
    aggregate,
    default_prm,
)
from engines.codeprm.examples import examples
from engines.codeprm.findings import CWE_INFO, Failure, Finding, Trace
from engines.codeprm.ranking import explain_ranking
from engines.codeprm.sampling import sample_candidates
from engines.codeprm.sarif import to_sarif
from engines.codeprm.source import Source, decode
from engines.codeprm.steps import Span, split_steps

__all__ = [
    "CWE_INFO",
    "CodePRM",
    "CodeTooLarge",
    "EmptyCode",
    "Failure",
    "Finding",
    "NotPython",
    "PRMConfig",
    "ScanResult",
    "Source",
    "Span",
    "StepResult",
    "Trace",
    "aggregate",
    "decode",
    "default_prm",
    "examples",
    "explain_ranking",
    "run_analysers",
    "sample_candidates",
    "split_steps",
    "to_sarif",
]
