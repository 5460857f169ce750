"""Security findings and the CWE families the codeprm tab reports (shared by the analysers)."""
from __future__ import annotations

from dataclasses import dataclass

# CWE families this tab reports, with a short explanation for the UI and SARIF.
CWE_INFO: dict[int, str] = {
    22: "Path traversal: a user-controlled path reaches the file system.",
    78: "OS command injection: a shell runs a string built from input.",
    79: "Cross-site scripting: input reaches HTML without escaping.",
    89: "SQL injection: a query is built by string formatting instead of parameters.",
    94: "Code injection: eval/exec (or a debugger shell) runs dynamic code.",
    295: "TLS certificate verification is disabled.",
    327: "Broken or risky cryptography (weak cipher or hash).",
    328: "Weak hash (MD5/SHA-1) used where a strong one is needed.",
    338: "Non-cryptographic random generator used for secrets.",
    377: "Insecure temporary file (predictable name or mktemp).",
    502: "Deserialisation of untrusted data (pickle, marshal, unsafe yaml).",
    611: "XML parsed with external entities enabled (XXE).",
    798: "Hard-coded credential or secret.",
    918: "Server-side request forgery: a request goes to a user-supplied URL.",
}


@dataclass(frozen=True)
class Finding:
    """One security finding on one line."""

    line: int
    cwe: int
    rule: str
    message: str
    source: str  # "bandit", "codeshield" or "model"
    confident: bool = True  # a confident analyser finding flags its step on its own

    def to_dict(self) -> dict:
        return {"line": self.line, "cwe": f"CWE-{self.cwe}" if self.cwe else "", "rule": self.rule,
                "message": self.message, "source": self.source, "confident": self.confident}
