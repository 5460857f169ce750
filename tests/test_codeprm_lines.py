"""codeprm's lines, steps and prefix repair: one line numbering for every part of a scan (a
property test under random insertions of the characters other tools break lines at), the step
splitter's string-aware bracket tracking and hard cut, the repair of code as it is written, and
the request caps."""
from __future__ import annotations

import io
import random
import sysconfig
import time
import tokenize
from pathlib import Path

import pytest

from engines.codeprm import CodePRM, CodeTooLarge, examples, split_steps
from engines.codeprm.analysers import bandit_findings
from engines.codeprm.lines import code_lines, count_lines, split_lines
from engines.codeprm.repair import complete, repair
from engines.common.errors import InputError

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module")
def prm() -> CodePRM:
    return CodePRM.load("onnx")


# ------------------------------------------------------------------------------ one numbering
# An app file with findings in several steps, comments, strings and a docstring to insert into.
APP = '''"""Views of a small app.

Form feeds and odd line breaks are fine here.
"""
import os
import pickle
import subprocess

SECRET_KEY = "dev-9f8e7d6c5b4a"  # the app's signing key


def ping(host):
    # run the system ping; see the '#' docs
    if host.startswith('#') and check(host,
                                      "x"):
        return None
    return subprocess.check_output("ping -c 1 " + host, shell=True)


def load(blob):
    """Read a cached object."""
    return pickle.loads(blob)


def run(cmd):
    label = "run: %s" % cmd  # shown in the log
    os.system(cmd)
'''
ODD = ["\f", "\u2028", "\x0b", "\x85", "\u2029", "\x1c"]


def _inserted(code: str, rng: random.Random) -> str:
    """``code`` with odd line-break characters put inside its comments and strings, and a form
    feed line (a PEP 8 page break) in place of some blank lines."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
            if t.type in (tokenize.COMMENT, tokenize.STRING)]
    lines = code.split("\n")
    for t in sorted(rng.sample(toks, k=min(len(toks), 6)), key=lambda t: (-t.start[0], -t.start[1])):
        row, col = t.start
        quote = 3 if t.string[:3] in ('"""', "'''") else 1
        at = col + (1 if t.type == tokenize.COMMENT else quote)
        lines[row - 1] = lines[row - 1][:at] + rng.choice(ODD) + lines[row - 1][at:]
    out = [("\f" if not ln and rng.random() < 0.5 else ln) for ln in lines]
    return "\n".join(out)


def _line_ends(code: str, rng: random.Random) -> str:
    """``code`` written with \\r\\n, \\r or mixed line ends (a \\r is never followed by a \\n
    that ends an empty line: the two would read as one \\r\\n, in Python too)."""
    ends = rng.choice([["\r\n"], ["\r"], ["\n", "\r\n", "\r"]])
    lines = code.split("\n")
    out, prev = [], ""
    for ln in lines[:-1]:
        end = rng.choice([e for e in ends if not (prev == "\r" and not ln and e == "\n")] or ["\r"])
        out.append(ln + end)
        prev = end
    return "".join(out) + lines[-1]


def _view(r) -> tuple:
    return ([(s.start_line, s.end_line, s.driver) for s in r.steps],
            sorted((f.line, f.cwe, f.rule) for f in r.findings), r.verdict)


@pytest.mark.parametrize("seed", range(4))
def test_odd_line_breaks_never_move_or_drop_a_finding(prm, seed):
    """Property (item 4): inserting form feeds, U+2028 and the other characters str.splitlines
    breaks at (in comments and strings), and writing the file with \\r\\n or \\r line ends, leaves
    every step, every finding's line and the verdict as they were."""
    rng = random.Random(seed)
    base = prm.scan(APP)
    assert {78, 502, 798} <= {f.family for f in base.findings}
    for changed in (_inserted(APP, rng), _line_ends(APP, rng), _line_ends(_inserted(APP, rng), rng)):
        assert changed != APP
        assert _view(prm.scan(changed)) == _view(base)


def test_a_file_full_of_form_feeds_is_not_called_safe(prm):
    """The issue's case: a vulnerable file with six PEP 8 page breaks used to scan SAFE."""
    code = examples()["CWE-78 vulnerable"].replace("\n\n", "\n\f\n") + "\f\n" * 6
    r = prm.scan(code)
    assert r.verdict == "vulnerable" and any(f.family == 78 for f in r.findings)


def test_python_line_numbering():
    assert split_lines("a\fb\nc\u2028d\n") == ["a\fb", "c\u2028d"]
    assert count_lines("x\n" * 3) == 3 and count_lines("x\ny") == 2 and count_lines("") == 0
    assert len(split_lines("a\fb\nc\u2028d\n")) == len("a\fb\nc\u2028d\n".splitlines()) - 2


# ------------------------------------------------------------------------------ steps
@pytest.mark.parametrize("line", ["    if line.startswith('#') and ok(x,", "    url = ('https://h/p#frag', a,",
                                  '    note = f"{x} # not a comment" + g(y,'])
def test_a_hash_inside_a_string_does_not_leave_a_bracket_open(line):
    code = f"def f(x):\n{line}\n            y)\n    return 1\n\n\nz = 2\n\n\ndef g():\n    return 3\n"
    spans = split_steps(code)
    assert [(s.start, s.end) for s in spans] == [(1, 4), (7, 7), (10, 11)]


@pytest.mark.parametrize("rel", ["json/decoder.py", "shlex.py", "tempfile.py", "subprocess.py", "typing.py",
                                 "argparse.py", "email/_header_value_parser.py"])
def test_no_step_is_longer_than_the_hard_cut(rel):
    """Long literals, docstrings and calls are cut too: no step exceeds 2 x max_step_lines."""
    text = (STDLIB / rel).read_text(encoding="utf-8")
    for max_lines in (4, 8):
        spans = split_steps(text, max_lines)
        assert max(s.end - s.start + 1 for s in spans) <= 2 * max_lines
        lines = split_lines(text)
        assert all(lines[s.start - 1].strip() and lines[s.end - 1].strip() for s in spans)


def test_code_lines_leave_out_comments_blank_lines_and_docstrings():
    code = '"""Module doc.\n\nMore."""\n# comment\nx = 1  # set\n\ny = f(\n    "a",\n)\ns = """\ntext\n"""\n'
    assert sorted(code_lines(code)) == [5, 7, 8, 9, 10, 11, 12]
    assert code_lines("# only\n\n'''doc'''\n") == set()


# ------------------------------------------------------------------------------ repair
@pytest.mark.parametrize("prefix,line", [
    ("def handler(req):\n    host = req.args['h']\n    try:\n        subprocess.run('nslookup ' + host, shell=True", 4),
    ("def handler(req):\n    try:\n        out = os.system('ping ' +", 3),
    ("if mode == 'a':\n    x = 1\nelif mode == 'b':\n    y = 2\nelse:\n    os.system('rm ' + path", 6),
    ("def f(cmd):\n    return os.system(f\"run {cmd", 2),
    ("class A:\n    def go(self, cmd):\n        with open(p) as fh:\n            os.popen('cat ' + cmd)", 4),
])
def test_repair_closes_every_open_block_and_keeps_the_line_being_written(prefix, line):
    fixed = repair(prefix)
    assert fixed is not None, prefix
    kept = split_lines(fixed[0])
    assert kept[: line - 1] == split_lines(prefix)[: line - 1]
    assert kept[line - 1].startswith(split_lines(prefix)[line - 1])  # the line being written stays
    assert any(f.line == line and f.family == 78 for f in bandit_findings(prefix)), bandit_findings(prefix)


def test_complete_gives_try_an_except_and_a_header_a_body():
    assert complete("try:\n    x = f(")[0] == "try:\n    x = f()\nexcept BaseException:\n    pass"
    assert "    pass" in next(c for c in complete("for x in y") if c.endswith("pass"))


def test_a_step_starting_with_elif_is_read_on_its_own():
    from engines.codeprm.repair import pieces

    code = "elif x:\n    os.system('rm ' + y)\n\n\ndef f(:\n    pass\n"
    got = pieces(code)
    assert got and any(f.line == 2 and f.family == 78 for f in bandit_findings(code, got))


# ------------------------------------------------------------------------------ caps
def test_the_line_cap_counts_lines_as_python_does(prm):
    prm.scan("x = 1\n" * 20_000)  # exactly the cap: scanned
    with pytest.raises(CodeTooLarge, match="20,001 lines"):
        prm.scan("x = 1\n" * 20_001)


def test_a_nul_byte_in_a_sampling_prefix_is_refused_at_once(monkeypatch):
    from engines.codeprm import sampling
    from engines.common import backbone

    def no_model():
        raise AssertionError("the model was loaded for a prefix that is refused")

    monkeypatch.setattr(backbone, "load_backbone", no_model)
    t = time.perf_counter()
    with pytest.raises(InputError, match="NUL"):
        sampling.sample_candidates("import os\n\x00")
    assert time.perf_counter() - t < 1.0
