"""One ``Source`` through the scan: the text is split into lines once and parsed once, whatever
stage reads it, and bytes are decoded as Python decodes a source file."""
from __future__ import annotations

import sys

import pytest

from engines.codeprm import CodePRM, examples
from engines.codeprm.source import Source, decode


@pytest.fixture(scope="module")
def prm() -> CodePRM:
    return CodePRM.load("onnx")


def _counts(fn) -> tuple[int, int]:
    """(whole-text line splits made by engines.codeprm, parses of the text) while ``fn`` runs."""
    splits = parses = 0

    def hook(frame, event, arg):
        nonlocal splits, parses
        if event == "call" and frame.f_code.co_qualname in ("split_lines", "code_lines_of", "count_lines") \
                and frame.f_globals.get("__name__", "").startswith("engines.codeprm"):
            splits += 1
        elif event == "c_call" and getattr(arg, "__name__", "") in ("compile", "parse"):
            parses += 1

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return splits, parses


@pytest.mark.parametrize("name", ["CWE-918 vulnerable", "CWE-89 fixed"])
def test_a_scan_splits_its_lines_once_and_parses_once(prm, name):
    prm.scan(examples()["CWE-78 vulnerable"])  # warm every analyser on another text
    code = examples()[name] + "\n# a distinct text: no cache can answer\n"
    splits, parses = _counts(lambda: prm.scan(code))
    assert parses == 1  # bandit walks the scan's own tree
    assert splits == 2  # the lines (split once) and which of them hold code (read once)


def test_the_source_is_what_every_stage_reads(prm):
    src = Source.read("import os\r\n\r\nos.system('ls ' + name)\r\n")
    assert src.lines == ["import os", "", "os.system('ls ' + name)"] and src.n_lines == 3
    assert sorted(src.code_lines) == [1, 3] and [(s.start, s.end) for s in src.spans] == [(1, 1), (3, 3)]
    assert src.parsed.parses and src.pieces[0][1] == src.text


def test_bytes_are_decoded_as_python_decodes_them():
    assert decode("# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")).splitlines()[1] == "name = 'café'"
    assert decode(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"
    assert decode("y = 'ü'\n".encode()) == "y = 'ü'\n"
    assert decode(b"# coding: no-such-codec\nx = 1\n").endswith("x = 1\n")  # unknown codec: read as UTF-8
