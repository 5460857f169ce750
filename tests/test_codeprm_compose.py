"""The combinatorial pair generator (evals/codeprm/synth.py: compose_pair) and its exclusions."""
from __future__ import annotations

import ast
from pathlib import Path

from evals.codeprm.mutations import FAMILIES
from evals.codeprm.synth import SINKS2, SOURCES2, compose_pair

ROOT = Path(__file__).resolve().parents[1]


def test_compose_pairs_parse_differ_only_by_the_fix_and_mark_the_sink():
    ok = 0
    for seed in range(300):
        (v, bad_v, cwe), (f, bad_f, cwe2) = compose_pair(seed)
        assert cwe == cwe2 and bad_v and not bad_f and v != f
        try:
            ast.parse(v)
            ast.parse(f)
        except SyntaxError:
            continue  # the dataset builder skips such pairs
        ok += 1
        lines = v.splitlines()
        assert all(1 <= b <= len(lines) and lines[b - 1].strip() for b in bad_v)
        # the twins share everything before the sink
        assert v.splitlines()[:min(bad_v) - 1][:3] == f.splitlines()[:3]
    assert ok >= 280


def test_compose_covers_all_families_with_several_sinks_and_many_sources():
    assert sorted(SINKS2) == FAMILIES
    assert all(len(SINKS2[c]) >= 7 for c in FAMILIES)
    assert len(SOURCES2) >= 30


def test_compose_does_not_contain_the_idioms_of_the_blind_variants():
    # variants v (validation) and e (final test) were written first; the generator must not copy
    # their specific sink idioms, nor those of the seen variant d
    text = (ROOT / "evals" / "codeprm" / "synth.py").read_text().split("# ====", 3)[-1]
    code = text.split("SINKS2", 1)[1]
    for idiom in ("getstatusoutput", ".raw(", "allow_pickle", "hmac.new", "cert_reqs", "np.random", "uuid1",
                  "default_factory", "pulldom", "iterparse", "AsyncHTTPClient", "/dev/shm", "'-c'", "executescript",
                  "Unpickler", "pbkdf2_hmac", "httpx.Client", "jwt.", "FileResponse", "HTMLResponse", "get_argument",
                  "query_params", "create_subprocess_shell", "psycopg2", "joblib", "PROTOCOL_TLSv1", "extractall",
                  "HttpResponse", "feature_external_ges", "aiohttp", "gettempdir", "boto3"):
        assert idiom not in code, idiom
