"""The application corpus table, the hand-labelled spots and their measurement (cheap: no scanner
runs here; the snapshot checks skip where the fetched snapshots are absent)."""
from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from evals.codeprm import app_labels as L
from evals.codeprm import app_measure as A
from evals.codeprm.app_spots import (
    SPOTS,
    SpotError,
    Twin,
    apply_twin,
    check_spot,
    load_spots,
    parse_spot,
    twin_parses_alone,
    twin_span,
)
from evals.codeprm.apps import REPOS, read_table, row_split, split_of


@pytest.fixture(scope="module")
def spots():
    return load_spots(SPOTS)


@pytest.fixture(scope="module")
def table():
    return {r["repo"]: r for r in read_table(REPOS)}


def test_table_splits_are_the_recorded_ones_and_rules_refuse_bad_rows():
    with open(REPOS, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len({r["repo"].lower() for r in rows}) == len(rows) >= 100
    assert all(r["split"] == row_split(r) for r in rows)  # the table and its rule agree
    assert split_of("miguelgrinberg/microblog") == "test"  # part 4's split kept
    with pytest.raises(ValueError, match="off limits"):
        row_split({"repo": "someone/pygoat", "kind": "vulnerable by design"})
    with pytest.raises(ValueError, match="unknown kind"):
        row_split({"repo": "a/b", "kind": "library"})


def test_every_spot_is_well_formed_and_in_a_held_out_repository(spots, table):
    assert spots
    for s in spots:
        assert s.repo in table, s.id
        assert table[s.repo]["split"] == s.split, s.id
        assert s.split in ("dev", "test"), s.id  # no labelled repository is in train
        assert table[s.repo]["kind"] == "vulnerable by design", s.id
        assert s.commit == table[s.repo]["snapshot_head"], s.id
        if s.twin is not None:
            assert s.twin.path == s.path and twin_parses_alone(s.twin), s.id
    ids = [(s.id, s.category) for s in spots]
    assert len(ids) == len(set(ids))
    dev = {s.repo for s in spots if s.split == "dev"}
    test = {s.repo for s in spots if s.split == "test"}
    assert not dev & test


def test_the_test_split_meets_the_issue_counts(spots):
    test = [s for s in spots if s.split == "test" and s.counted]
    assert len(test) >= 150 and len({s.repo for s in test}) >= 10
    assert len({s.cwe for s in test if s.category == "taint"}) >= 8
    assert {"variable", "format", "helper"} <= {s.flow for s in test}
    assert Counter(s.category for s in spots if s.split == "test")["settings"] > 0
    dev = [s for s in spots if s.split == "dev" and s.counted]
    assert len({s.repo for s in dev}) >= 5


def test_a_malformed_spot_is_refused_with_its_reason():
    good = json.loads(SPOTS.read_text().splitlines()[0])
    assert parse_spot(good).id
    for bad, msg in ((dict(good, category="style"), "category"), (dict(good, commit="abc"), "commit"),
                     (dict(good, sink_line=0), "sink_line"), (dict(good, flow_lines=[-1]), "flow_lines"),
                     ({k: v for k, v in good.items() if k != "twin"}, "missing")):
        with pytest.raises(SpotError, match=msg):
            parse_spot(bad)


def _mirrors() -> str | None:
    for d in (os.environ.get("CODEPRM_MIRRORS"), "/work/.mirror", str(Path(__file__).parents[1].parent / "mirrors")):
        if d and Path(d).is_dir():
            return d
    return None


def test_every_spot_stands_on_its_snapshot(spots):
    mirrors = _mirrors()
    if mirrors is None:
        pytest.skip("no snapshots of the labelled repositories here (set CODEPRM_MIRRORS to the fetched snapshots)")
    from evals.codeprm.fix_pairs import GitError, find_mirror, git

    checked, problems = 0, []
    for s in spots:
        d = find_mirror(mirrors, "github.com/" + s.repo)
        if d is None:
            continue
        try:
            text = git(d, "show", f"{s.commit}:{s.path}")
            src = git(d, "show", f"{s.commit}:{s.source_path}") if s.source_path else None
        except GitError as exc:
            problems.append(f"{s.id}: {exc}")
            continue
        problems += [f"{s.id}: {p}" for p in check_spot(s, text, src)]
        checked += 1
    if not checked:
        pytest.skip(f"none of the labelled repositories has a snapshot under {mirrors}")
    assert not problems, problems[:5]


def test_twins_apply_by_whole_lines_and_checks_catch_a_wrong_line():
    text = "import os\n\ndef f(p):\n    return open(p)\n"
    t = Twin("a.py", 4, 4, "    import os.path\n    return open(os.path.basename(p))")
    patched = apply_twin(text, t)
    assert patched.splitlines()[3:] == ["    import os.path", "    return open(os.path.basename(p))"]
    assert twin_span(t) == (4, 5)
    s = parse_spot({"repo": "a/b", "split": "test", "commit": "0" * 40, "path": "a.py", "sink_line": 4,
                    "source_line": 3, "cwe": 22, "category": "taint", "flow": "direct", "source": "def f(p)",
                    "sink": "open(", "reason": "r", "twin": {"path": "a.py", "start_line": 4, "end_line": 4,
                                                              "replacement": t.replacement}})
    assert check_spot(s, text) == []
    assert "not on line" in check_spot(parse_spot(dict(s.to_dict(), sink_line=1)), text)[0]
    broken = dict(s.to_dict(), twin={"path": "a.py", "start_line": 4, "end_line": 4, "replacement": "    return ("})
    assert check_spot(parse_spot(broken), text) == ["the twin does not parse"]


def _lf(text, spots):
    return A.LabelledFile("a/b", "test", "0" * 40, "a.py", text, spots)


def _spot(line, cat="taint", flow_lines=(), source_line=None):
    return parse_spot({"repo": "a/b", "split": "test", "commit": "0" * 40, "path": "a.py", "sink_line": line,
                       "source_line": source_line, "cwe": 89, "category": cat, "flow": "format", "source": "",
                       "sink": "x", "reason": "r", "twin": None, "flow_lines": list(flow_lines)})


def test_whole_file_measures_count_steps_flow_lines_and_neutral_spots():
    text = "q = f'{x}'\n\ncur.execute(q)\n\na = 1\n\nb = 2\n\nc = 3\n"
    spots = [_spot(3, flow_lines=(1,)), _spot(7, cat="logic"), _spot(9)]
    lf = _lf(text, spots)
    spans = A.split_steps(text)
    fl = A.Flags(spans, steps={0, 2, 3}, lines={1, 5, 7})  # the query line, a = 1, the logic spot
    m = A.whole_measures([lf], [fl])
    assert m["spots"] == 2 and m["recall"] == 0.5  # found through its flow line; line 9 missed
    assert m["false_alarm_steps"] == 1 and m["false_alarms_per_kloc"] == pytest.approx(1000 / 9, abs=1e-3)
    assert m["by_category"]["taint"]["found"] == 1


def test_cuts_and_twin_flags():
    text = "def f(x):\n    y = 1\n    os.system('ls ' + x)\n"
    assert A.cut(text, 3, False).endswith("os.system('ls ' + x)")
    assert A.cut(text, 3, True).splitlines()[-1] == "    os.system("
    fl = A.Flags([A.Span(1, 3)], steps={0})
    assert A.twin_flagged(fl, (3, 3), set()) == (True, False)
    assert A.twin_flagged(fl, (3, 3), {2}) == (False, False)  # the step holds another spot


def test_rule_pack_labels_mark_the_steps_holding_findings(tmp_path):
    (tmp_path / "r.yml").write_text("rules:\n- id: sqli\n  mode: taint\n  metadata: {cwe: ['CWE-89: SQL']}\n"
                                    "  pattern-sources: []\n  pattern-sinks: []\n  message: m\n  languages: [python]\n"
                                    "  severity: ERROR\n")
    meta = L.rule_meta(tmp_path)
    assert meta == {"sqli": (89, True)}
    assert L.rules_tag(tmp_path) == L.rules_tag(tmp_path) and L.rules_tag(tmp_path).startswith(tmp_path.name + "@")
    lab = L.label_file("a = 1\n\nb = 2\nc = 3\n", [(4, 0, "sqli", "msg", "high")], meta)
    assert lab["steps"] == [[1, 1, 0], [3, 4, 1]]
    assert lab["findings"] == [[4, 89, "sqli", "high", True]]
    with pytest.raises(ValueError, match="test"):
        L.build(tmp_path, ("train", "test"))
