"""bandit (PyCQA, Apache-2.0) as an analyser, run in-process on the scan's own parse.

Every result of a test in the tab's CWE families (:data:`FAMILY`, this analyser's own map) is a
finding, whatever its severity and confidence (both are kept and shown); the finding's CWE is
bandit's own where it gives one. bandit's tests outside these families (assert,
try/except/pass, bare imports, requests without a timeout) are dropped as noise. bandit's node
visitor walks the tree the scan already parsed (no second parse). Where bandit cannot read the
file (its visitor hits Python's recursion limit, a plugin crashes, the file does not parse at
all) the file gets a :class:`Failure` naming why.
"""
from __future__ import annotations

import io
import logging

from engines.codeprm.analysers.base import Analyser
from engines.codeprm.findings import Failure, Finding
from engines.codeprm.repair import pieces as repaired_pieces

#: bandit test id -> the tab's CWE family it reports.
FAMILY: dict[str, int] = {
    **dict.fromkeys(("B202",), 22),
    **dict.fromkeys(("B602", "B605", "B604", "B609", "B601", "B606"), 78),
    **dict.fromkeys(("B701", "B702", "B703", "B308", "B704"), 79),
    **dict.fromkeys(("B608", "B610", "B611"), 89),
    **dict.fromkeys(("B102", "B307", "B201"), 94),
    **dict.fromkeys(("B501", "B507", "B323", "B502", "B503", "B504"), 295),
    **dict.fromkeys(("B304", "B305", "B505"), 327),
    **dict.fromkeys(("B303", "B324"), 328),
    **dict.fromkeys(("B311",), 338),
    **dict.fromkeys(("B108", "B306"), 377),
    **dict.fromkeys(("B301", "B302", "B506", "B614"), 502),
    **dict.fromkeys(("B313", "B314", "B315", "B316", "B317", "B318", "B319", "B320"), 611),
    **dict.fromkeys(("B105", "B106", "B107"), 798),
    **dict.fromkeys(("B310",), 918),
}


class BanditFailed(Exception):
    """bandit could not read a piece of code (the reason in words)."""


class _Bandit:
    """bandit's node visitor run on a tree parsed here (its manager only reads files)."""

    def __init__(self) -> None:
        from bandit.core import config, manager

        for name in ("bandit", "bandit.core", "bandit.core.node_visitor", "bandit.core.manager",
                     "bandit.core.tester", "bandit.core.utils"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.manager = manager.BanditManager(config.BanditConfig(), "file", quiet=True)

    def run(self, text: str, tree=None) -> list:
        """bandit's results on ``text`` (walking ``tree`` when given, else bandit's own parse)."""
        import ast

        from bandit.core import metrics, node_visitor

        m = self.manager
        m.metrics = metrics.Metrics()
        m.metrics.begin("snippet.py")
        v = node_visitor.BanditNodeVisitor("snippet.py", io.BytesIO(text.encode("utf-8", "replace")), m.b_ma, m.b_ts,
                                           m.debug, {}, m.metrics)
        try:
            v.generic_visit(ast.parse(text) if tree is None else tree)
            v.context = {"file_data": v.fdata, "filename": v.fname, "lineno": 0, "linerange": [0, 1], "col_offset": 0}
            v.update_scores(v.tester.run_tests(v.context, "File"))
        except RecursionError as exc:
            raise BanditFailed("bandit hit Python's recursion limit: the code is nested too deeply for its "
                               "checks") from exc
        except Exception as exc:
            raise BanditFailed(f"bandit failed on this file ({type(exc).__name__}: {str(exc)[:120]})") from exc
        return list(v.tester.results)


_BANDIT: _Bandit | None = None


def _raw(pieces: list) -> tuple[list[tuple[int, str, int, str, str, str]], list[str]]:
    global _BANDIT
    if _BANDIT is None:
        _BANDIT = _Bandit()
    out, failed = [], []
    for off, text, tree in pieces:
        try:
            results = _BANDIT.run(text, tree)
        except BanditFailed as exc:
            failed.append(str(exc))
            continue
        for r in results:
            cwe = getattr(getattr(r, "cwe", None), "id", 0) or 0
            out.append((r.lineno + off, r.test_id, int(cwe), str(r.severity), str(r.confidence), r.text))
    return out, failed


def bandit_raw(code: str, pieces: list | None = None) -> list[tuple[int, str, int, str, str, str]]:
    """All bandit results on (repaired) code: (line, test id, cwe, severity, confidence, text).
    ``pieces`` are ``repair.pieces(code)`` when the caller has them already (one repair per scan).

    >>> [r[1] for r in bandit_raw("import os\\nos.system('ls ' + x)")]
    ['B605']
    """
    return _raw(repaired_pieces(code) if pieces is None else pieces)[0]


def findings_of(raw: list, n_lines: int) -> list[Finding]:
    """Findings from bandit results (as :func:`bandit_raw` gives them, or stored in the corpus)
    on lines 1..``n_lines``: the tab's families only, bandit's own CWE where it gives one."""
    out = []
    for line, tid, cwe, sev, conf, *text in raw:
        fam = FAMILY.get(tid)
        if fam is not None and 1 <= line <= n_lines:
            out.append(Finding(line, int(cwe) or fam, f"bandit:{tid}", text[0] if text else f"bandit {tid}",
                               "bandit", str(sev).lower(), str(conf).lower()))
    return out


def bandit_findings(code: str, pieces: list | None = None) -> list[Finding]:
    """bandit's findings in the tab's CWE families on lines of ``code``, with bandit's ratings.

    >>> [(f.cwe, f.family, f.severity) for f in bandit_findings("import os\\nos.system('ls ' + x)\\n")]
    [(78, 78, 'high')]
    """
    from engines.codeprm.lines import count_lines

    return findings_of(bandit_raw(code, pieces), count_lines(code))


def _step_pieces(src) -> list:
    """Each step of ``src`` that parses alone, as (line offset, text, tree)."""
    import ast
    import textwrap

    out = []
    for sp in src.spans:
        text = textwrap.dedent("\n".join(src.lines[sp.start - 1: sp.end]))
        try:
            out.append((sp.start - 1, text, ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return out


def local(src) -> tuple[list[Finding], list[Failure]]:
    """bandit on one :class:`~engines.codeprm.source.Source`: its findings, and a failure where it
    could not read the code (or the parser could not, so bandit read nothing)."""
    if not src.lines:
        return [], []
    raw, failed = _raw(src.pieces)
    if failed and len(src.pieces) == 1:  # the whole file failed: read it again step by step
        more, _ = _raw(_step_pieces(src))
        raw += more
        failed = [f"{r}; the steps it could read alone were checked one by one" for r in failed]
    why = [Failure("bandit", r) for r in dict.fromkeys(failed)]
    if not src.pieces and src.parsed.syntax_error:
        raw += _raw(_step_pieces(src))[0]
        why.append(Failure("bandit", f"Python's parser could not read this file ({src.parsed.syntax_error}); "
                                     "bandit checked only the steps that parse alone"))
    return findings_of(raw, src.n_lines), why


def family(f: Finding) -> int:
    return FAMILY.get(f.rule.split(":", 1)[-1], 0)


ANALYSER = Analyser("bandit", family=family, local=local, label="bandit 1.9.4")
