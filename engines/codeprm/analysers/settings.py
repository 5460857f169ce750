"""The framework-settings rule pack (written here): debug pages on, Jinja autoescape off, session
cookies readable by scripts or sent in clear, JWTs decoded without checking their signature, CORS
open to any origin with credentials, any Host accepted, tracebacks sent to the client.

Rules as data in ``assets/codeprm/rules/settings/*.yaml`` (semgrep search mode), each with its
CWE and a plain message, run in the scan's one semgrep process.
"""
from __future__ import annotations

from engines.codeprm.analysers.base import Analyser, hit_finding
from engines.codeprm.analysers.semgrep import yaml_rules
from engines.common.paths import ASSETS_DIR

RULES_DIR = ASSETS_DIR / "codeprm" / "rules" / "settings"
PREFIX = "codeprm-settings-"

ANALYSER = Analyser("settings", rules=lambda: yaml_rules(tuple(sorted(RULES_DIR.glob("*.yaml")))),
                    owns=lambda rid: PREFIX in rid, read=lambda hit, src: hit_finding(hit, "settings"),
                    label="framework-settings rules")
