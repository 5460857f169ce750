"""How many times one scan splits its text into lines and parses it, by module.

    .venv/bin/python benchmarks/codeprm_parse_count.py [FILE]

Counts, with a profiler hook, every call of the line-splitting functions of ``engines.codeprm``
(``split_lines``, ``count_lines``, ``code_lines``, ``code_lines_of``) and of ``str.splitlines``, and
every parse (``compile``/``ast.parse``), each under the module that made the call, during one
``CodePRM.scan`` of FILE (default: the tab's SSRF example). Prints a table.
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

SPLITTERS = {"split_lines", "count_lines", "code_lines", "code_lines_of"}


def count(fn) -> tuple[collections.Counter, collections.Counter]:
    """(line splits, parses) by calling module while ``fn()`` runs."""
    splits: collections.Counter = collections.Counter()
    parses: collections.Counter = collections.Counter()

    def where(frame) -> str:
        while frame.f_back is not None and frame.f_globals.get("__name__") == "functools":
            frame = frame.f_back  # a cached property: the module that asked for it
        name = frame.f_globals.get("__name__", "?")
        return name.rsplit(".", 1)[-1] + ".py" if name.startswith("engines.") else name.split(".")[0]

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_qualname in SPLITTERS and \
                frame.f_globals.get("__name__", "").startswith("engines.codeprm") and frame.f_back is not None:
            splits[where(frame.f_back)] += 1
        elif event == "c_call" and getattr(arg, "__name__", "") == "splitlines":
            splits[where(frame)] += 1
        elif event == "c_call" and getattr(arg, "__name__", "") == "compile":
            parses[where(frame)] += 1

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return splits, parses


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    args = ap.parse_args()
    from engines.codeprm import default_prm, examples

    code = Path(args.file).read_text() if args.file else examples()["CWE-918 vulnerable"]
    prm = default_prm()
    prm.scan(examples()["CWE-78 vulnerable"])  # warm (another text: no cache hit): rule files, plugins, model
    splits, parses = count(lambda: prm.scan(code))
    print("| module | line splits | parses |\n|---|---|---|")
    for mod in sorted(set(splits) | set(parses)):
        print(f"| {mod} | {splits[mod]} | {parses[mod]} |")
    print(f"| total | {sum(splits.values())} | {sum(parses.values())} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
