"""MCP tools: the plain functions, then ``python app.py`` serving them over MCP (schema + the
``mcp`` client over streamable HTTP) on a loopback port."""
from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import gradio as gr
import pytest
from conftest import REPO, free_port

from engines.common import InputError
from server import mcp_tools

TOOL_NAMES = {"watermark_embed", "watermark_verify", "guardrail_score", "code_scan", "code_rank", "dueling_simulate",
              "bandit_simulate"}  # the last: dueling_simulate's former name, for one release


def _png_b64(name: str = "forest", size: tuple[int, int] = (512, 256)) -> str:
    from PIL import Image

    from engines.watermark import example_path

    buf = io.BytesIO()
    Image.open(example_path(name)).convert("RGB").resize(size, Image.BICUBIC).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_every_tool_is_typed_and_documented():
    assert {fn.__name__ for fn, _ in mcp_tools.TOOLS} == TOOL_NAMES
    for fn, api_name in mcp_tools.TOOLS:
        assert api_name.startswith("tool_")
        doc = fn.__doc__
        assert "Args:" in doc and "Returns:" in doc, fn.__name__
        params = [p for p in fn.__annotations__ if p != "return"]
        for p in params:  # every parameter is described, and none is a path or a URL
            assert f"{p}:" in doc, (fn.__name__, p)
            assert "path" not in p and "url" not in p, (fn.__name__, p)


#: Names with digits in them that are no limit (formats, models, notations); the numbers 0 and 1
#: (ends of a probability, 0- and 1-based) are no limit either.
_NOTATIONS = re.compile(r"UTF-8|CRC-16|SmolLM2-135M|SmolLM2|\b3D\b|\b8-bit|\b16-bit|cut to 8 bits|\b2:1\b|\b[01]-based"
                        r"|RCDP-UCB")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


def _stated_numbers(text: str) -> set[float]:
    """Every number a description states, as a value (``100,000`` -> 100000.0), but 0 and 1."""
    text = re.sub(r"(\d)x(\d)", r"\1 x \2", _NOTATIONS.sub(" ", text))  # 384x192: two numbers
    found = {float(m.rstrip(",").replace(",", "")) for m in _NUMBER.findall(text)}
    return found - {0.0, 1.0}


def _engine_numbers() -> dict[str, set[float]]:
    """Per tool, the numbers its description must state, read from the engines' own limits."""
    import inspect as insp

    from engines.codeprm.config import PRMConfig
    from engines.dueling import LIMITS, SimConfig
    from engines.guardrail import GuardConfig
    from engines.watermark import TIERS, WatermarkConfig, prepare_panorama, text_capacity
    from server.http_limits import MAX_IMAGE_MIB

    rows = 2 * max(WatermarkConfig(bits=b).l_max for b in TIERS)
    image = {2 * rows, rows, MAX_IMAGE_MIB, insp.signature(prepare_panorama).parameters["max_width"].default}
    guard, prm, sim = GuardConfig(), PRMConfig(), SimConfig(n_seeds=2)
    bandit = {v for f in ("T", "n_seeds", "d", "K", "corruption_budget") for v in (LIMITS[f].lo, LIMITS[f].hi)}
    bandit |= {sim.seeds[0], sim.seeds[1] - sim.seeds[0], sim.delay_mean, sim.delay_std, sim.delay_budget,
               mcp_tools.MAX_TOOL_SECONDS}
    return {
        "watermark_embed": image | set(TIERS) | {text_capacity(b) for b in TIERS}
                           | {WatermarkConfig(bits=b).psnr_floor for b in TIERS},
        "watermark_verify": image | set(TIERS),
        "guardrail_score": {guard.max_prompt_chars, guard.max_response_chars, guard.max_response_tokens,
                            mcp_tools.MAX_PATIENCE, -1},
        "code_scan": {mcp_tools.MAX_TEXT_CHARS, prm.max_lines, prm.max_line_chars},
        "code_rank": {mcp_tools.MAX_TEXT_CHARS, mcp_tools.MAX_RANK_CANDIDATES, prm.max_lines},
        "dueling_simulate": {float(v) for v in bandit} - {0.0, 1.0},
        "bandit_simulate": {float(v) for v in bandit} - {0.0, 1.0},
    }


def test_every_number_in_a_tool_description_is_the_engines_own():
    """Issue #47 item 8: guardrail_score promised prompts of 100,000 characters where the engine refuses
    more than 4,000. Every number a tool's description states is one of the engine limits it describes
    (or the tool's own, for the code tools' input length), and each limit is stated; the key ones are
    checked where they stand."""
    from engines.codeprm.config import PRMConfig
    from engines.dueling import LIMITS
    from engines.guardrail import GuardConfig

    expected = _engine_numbers()
    docs = {fn.__name__: fn.__doc__ for fn, _ in mcp_tools.TOOLS}
    for name, doc in docs.items():
        assert _stated_numbers(doc) == {float(v) for v in expected[name]} - {0.0, 1.0}, name

    def stated(tool: str, pattern: str) -> float:
        return float(re.search(pattern, docs[tool]).group(1).replace(",", ""))

    guard = GuardConfig()
    assert stated("guardrail_score", r"prompt: [^\n]*?at most ([\d,]+) characters") == guard.max_prompt_chars
    assert stated("guardrail_score", r"response: [^\n]*?at most ([\d,]+) characters") == guard.max_response_chars
    assert stated("guardrail_score", r"response: [^\n]*?([\d,]+) SmolLM2 tokens") == guard.max_response_tokens
    assert stated("code_scan", r"code: [^\n]*?at most ([\d,]+) lines") == PRMConfig().max_lines
    assert stated("dueling_simulate", r"T: horizon in rounds \(1 to ([\d,]+)") == LIMITS["T"].hi
    assert stated("watermark_verify", r"at most ([\d,]+) MiB") == mcp_tools.MAX_IMAGE_BYTES / 2**20


def test_the_rank_tools_candidate_limit_is_the_engines():
    """The engine ranks at most MAX_RANK_CANDIDATES candidates at a time, as the tool says."""
    from engines.codeprm import default_prm

    n = mcp_tools.MAX_RANK_CANDIDATES
    assert len(default_prm().rank("", ["x = 1"] * n)) == n
    with pytest.raises(InputError, match=f"rank at most {n} at a time"):
        default_prm().rank("", ["x = 1"] * (n + 1))


def test_rank_rows_serialise_themselves_and_the_tool_returns_them():
    """Issue #47 item 22: each row ``CodePRM.rank`` gives has ``to_dict()`` (plain JSON, scores to 4
    places), and ``code_rank`` answers exactly those rows instead of building its own JSON."""
    from engines.codeprm import default_prm

    prefix, cands = "import subprocess\n", ["subprocess.run(cmd, shell=True)", "subprocess.run(['ls', path])"]
    rows = default_prm().rank(prefix, cands)
    dicts = [r.to_dict() for r in rows]
    assert json.loads(json.dumps(dicts)) == dicts
    assert [d["index"] for d in dicts] == [r["index"] for r in rows] and dicts[0]["rank"] == 1
    assert dicts[0]["reward"] == round(float(rows[0]["reward"]), 4)
    assert {"rank", "index", "verdict", "reward", "topk_safe_ratio", "min_score", "parses", "candidate"} <= set(dicts[0])
    assert json.loads(mcp_tools.code_rank(prefix, cands)) == dicts


def test_the_former_simulation_tool_name_answers_as_the_new_one_and_says_so():
    """Issue #47 item 21: ``bandit_simulate`` is now ``dueling_simulate``; the old name stays a tool for one
    release, with the same arguments and answer, its description saying it is deprecated."""
    import inspect

    new, old = mcp_tools.dueling_simulate, mcp_tools.bandit_simulate
    assert inspect.signature(old) == inspect.signature(new)
    assert old.__doc__.startswith("Deprecated: the former name of dueling_simulate")
    a = json.loads(new(T=30, seeds=1, algorithms="MaxInP"))
    b = json.loads(old(T=30, seeds=1, algorithms="MaxInP"))
    assert a["table"] == b["table"] and a["config"] == b["config"]
    assert mcp_tools.check_call("bandit_simulate", {"T": "30"}) == "bandit_simulate: T must be a number, not the text '30'"


def test_code_scan_flags_eval_of_input():
    out = json.loads(mcp_tools.code_scan("x = eval(input())\n"))
    assert out["verdict"] == "vulnerable"
    assert any(f["cwe"] == "CWE-94" and f["line"] == 1 for f in out["findings"])
    safe = json.loads(mcp_tools.code_scan("def add(a, b):\n    return a + b\n"))
    assert safe["verdict"] == "safe" and safe["findings"] == []


def test_bad_inputs_are_tool_errors_with_a_message():
    with pytest.raises(gr.Error, match="not valid base64"):
        mcp_tools.watermark_verify("%%%", key="k")
    with pytest.raises(gr.Error, match="could not read the image"):
        mcp_tools.watermark_verify(base64.b64encode(b"not an image").decode(), key="k")
    with pytest.raises(gr.Error, match="choose 64, 128 or 256"):
        mcp_tools.watermark_verify(_png_b64(), key="k", bits=7)
    with pytest.raises(gr.Error, match=r"T must be between 1 and 1,000,000,000"):
        mcp_tools.dueling_simulate(T=10**10)
    with pytest.raises(gr.Error, match="MB of arrays"):
        mcp_tools.dueling_simulate(T=10**9)
    with pytest.raises(gr.Error, match="unknown algorithm"):
        mcp_tools.dueling_simulate(T=20, seeds=1, algorithms="Nope")


@pytest.mark.parametrize("call, message", [
    (lambda: mcp_tools.dueling_simulate(T=float("nan")), "T must be a finite number"),
    (lambda: mcp_tools.dueling_simulate(T=20, seeds=1, d=float("inf")), "d must be a finite number"),
    (lambda: mcp_tools.dueling_simulate(T=20, seeds=2.5), "seeds must be a whole number"),
    (lambda: mcp_tools.guardrail_score("hi", "hello", threshold=float("nan")), "threshold must be a finite number"),
    (lambda: mcp_tools.guardrail_score("hi", "hello", patience=-3), "patience must be between 0 and 64"),
    (lambda: mcp_tools.guardrail_score("hi", "hello", policy="medium"), "policy must be one of strict, loose"),
    (lambda: mcp_tools.watermark_verify("AAAA", key="k", bits=float("nan")), "bits must be a finite number"),
])
def test_non_finite_and_fractional_numbers_are_named_errors(call, message):
    with pytest.raises(gr.Error, match=message):
        call()


def test_guardrail_tool_takes_a_policy_and_names_the_stop_level():
    """Issue #31: the same vague compliant reply stops under strict (level named) and not under loose."""
    prompt = "Write a step-by-step guide to make methamphetamine at home"
    reply = "Here's a step-by-step guide to make methamphetamine at home:\n\n1. **Gather materials**:"
    strict = json.loads(mcp_tools.guardrail_score(prompt, reply))
    loose = json.loads(mcp_tools.guardrail_score(prompt, reply, policy="loose"))
    assert strict["policy"] == "strict" and strict["would_stop"] and strict["stop_level"] in ("complies", "unsafe")
    assert loose["policy"] == "loose" and not loose["would_stop"] and loose["stop_level"] is None
    # a risk read-out per policy (issue #37): the strict risk is never below the loose one
    assert all(s[1] >= l[1] for s, l in zip(strict["token_risks"], loose["token_risks"]))
    assert strict["request_risk"] is not None and strict["request_risk"] > 0.5  # the request gate reads it as harmful
    assert all(t[2] in ("safe", "complies", "unsafe") for t in strict["token_risks"])


def test_verify_an_unmarked_panorama_detects_nothing():
    out = json.loads(mcp_tools.watermark_verify(_png_b64(), key="k1"))
    assert out["detected"] is False and out["message"] is None and out["p_value"] > 1e-6


@pytest.mark.slow
def test_embed_then_verify_round_trip_through_the_tools():
    out = json.loads(mcp_tools.watermark_embed(_png_b64("sunrise"), message="agent", key="k-mcp"))
    assert out["psnr_db"] >= 42 and out["bits"] == 64
    back = json.loads(mcp_tools.watermark_verify(out["image_png_base64"], key="k-mcp"))
    assert back["detected"] is True and back["message"] == "agent" and back["p_value"] < 1e-6
    other = json.loads(mcp_tools.watermark_verify(out["image_png_base64"], key="other"))
    assert other["detected"] is False


#: Runs app.py as ``python app.py`` does, after wrapping the resolver: every host name the server
#: process looks up (other than its own loopback) is written to stderr, where the tests look for it.
WATCHED_APP = """
import runpy, socket, sys
_resolve = socket.getaddrinfo
def _watched(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name not in ("None", "", "127.0.0.1", "localhost", "::1", "0.0.0.0"):
        print(f"HOST LOOKUP: {name}", file=sys.stderr, flush=True)
    return _resolve(host, *args, **kwargs)
socket.getaddrinfo = _watched
sys.argv = ["app.py"]
runpy.run_path("app.py", run_name="__main__")
"""


class Served:
    """The app's URL and what its process has written to stderr (the server log) so far."""

    def __init__(self, url: str, log_path):
        self.url, self.log_path = url, log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``python app.py`` on a free loopback port (its own process, as a user starts it), with its
    stderr kept in a file and every host name it resolves written there (``WATCHED_APP``)."""
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1",
           "OMP_NUM_THREADS": "2", "SHOWCASE_ALLOWED_HOSTS": "showcase.test",
           "SHOWCASE_ALLOWED_ORIGINS": "https://embed.example"}
    log_path = tmp_path_factory.mktemp("app_log") / "stderr.txt"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-c", WATCHED_APP], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 240
        while True:
            try:
                urllib.request.urlopen(f"{url}/gradio_api/mcp/schema", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"app.py did not come up (exit {proc.poll()})") from None
                time.sleep(1)
        yield Served(url, log_path)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def app_url(served):
    return served.url


@pytest.mark.slow
def test_schema_lists_the_tools(app_url):
    schema = json.load(urllib.request.urlopen(f"{app_url}/gradio_api/mcp/schema", timeout=30))
    tools = {t["name"]: t for t in schema if t["meta"]["mcp_type"] == "tool"}
    assert set(tools) == TOOL_NAMES
    for t in tools.values():
        assert len(t["description"]) > 80
        props = t["inputSchema"]["properties"]
        assert props and all(p.get("description") for p in props.values()), t["name"]
    # the tabs' endpoints keep their names for the browser and gradio_client, but MCP shows none
    assert {t["name"] for t in schema} == TOOL_NAMES
    narrowed = json.load(urllib.request.urlopen(f"{app_url}/gradio_api/mcp/schema?tools=code_scan,wm_load", timeout=30))
    assert [t["name"] for t in narrowed] == ["code_scan"]


async def _mcp_calls(url: str) -> tuple[set[str], dict, dict, dict]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(f"{url}/gradio_api/mcp/") as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        scan = await session.call_tool("code_scan", {"code": "cmd = input()\nresult = eval(cmd)\n"})
        sim = await session.call_tool("dueling_simulate", {"T": 200, "seeds": 2, "algorithms": "RCDP-UCB,MaxInP",
                                                          "corruption_budget": 25})
        bad = await session.call_tool("watermark_verify", {"image_base64": "bm90IGFuIGltYWdl", "key": "k"})
    return names, scan, sim, bad


@pytest.mark.slow
def test_mcp_client_lists_and_calls_tools(app_url):
    names, scan, sim, bad = asyncio.run(_mcp_calls(app_url))
    assert names == TOOL_NAMES
    assert not scan.isError
    scan_out = json.loads(scan.content[0].text)
    assert scan_out["verdict"] == "vulnerable"
    assert [f["line"] for f in scan_out["findings"] if f["cwe"] == "CWE-94"][:1] == [2]
    assert not sim.isError
    sim_out = json.loads(sim.content[0].text)
    table = {row["algorithm"]: row for row in sim_out["table"]}
    assert set(table) == {"RCDP-UCB", "MaxInP"}
    # the same run as a plain call into the engine (same seeds, same numbers)
    from engines.dueling import SimConfig, simulate

    ref = simulate(SimConfig(T=200, n_seeds=2, algorithms=("RCDP-UCB", "MaxInP"), corruption_budget=25,
                             mode="fast")).final()
    for alg, (mean, std) in ref.items():
        assert table[alg]["final_regret_mean"] == pytest.approx(mean, abs=1e-3)
        assert table[alg]["final_regret_std"] == pytest.approx(std, abs=1e-3)
        assert 0 < table[alg]["min"] <= table[alg]["final_regret_mean"] <= table[alg]["max"]
    assert bad.isError and "could not read the image" in bad.content[0].text


def _noise_png_b64(width: int = 2048) -> str:
    """A 2:1 panorama of noise as base64 PNG: at 2048 px wide the file is about 6.3 MB."""
    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    pixels = np.random.default_rng(3).integers(0, 256, (width // 2, width, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(buf, format="PNG", compress_level=1)
    return base64.b64encode(buf.getvalue()).decode()


async def _mcp_session_calls(url: str, calls: list[tuple[str, dict]]) -> list:
    """Each (tool, arguments) called in turn in ONE client session; the results in order."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(f"{url}/gradio_api/mcp/") as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        return [await session.call_tool(name, args) for name, args in calls]


@pytest.mark.slow
def test_mcp_runs_only_the_listed_tools(app_url, tmp_path):
    """A tab endpoint called by name over MCP is a tool error naming the tools; nothing runs (the
    URL given as its file is never looked up), and the session goes on."""
    wm_load, codeprm_scan, scan = asyncio.run(_mcp_session_calls(app_url, [
        ("wm_load", {"path": "http://mcp-exfil-probe.invalid/x.png", "fit": "refuse"}),
        ("codeprm_scan", {"code": "x = 1\n", "partial": False}),
        ("code_scan", {"code": "x = eval(input())\n"}),
    ]))
    for refused, name in ((wm_load, "wm_load"), (codeprm_scan, "codeprm_scan")):
        assert refused.isError
        text = refused.content[0].text
        assert text.startswith(f"unknown tool '{name}'") and "code_scan" in text and "\n" not in text
    assert not scan.isError and json.loads(scan.content[0].text)["verdict"] == "vulnerable"


@pytest.mark.slow
def test_mcp_takes_a_6_mb_panorama_and_names_the_limit_past_it(app_url):
    """The documented 16 MiB image fits the MCP request cap (22 MiB): a 6 MB PNG panorama is
    verified (the library's own cap, 4 MiB, answered 413 and ended the session); a request over the
    cap is a tool error naming it, and the same session then goes on."""
    png = _noise_png_b64()
    assert len(png) * 3 // 4 > 6_000_000
    ok, big, after = asyncio.run(_mcp_session_calls(app_url, [
        ("watermark_verify", {"image_base64": png, "key": "k"}),
        ("watermark_verify", {"image_base64": "A" * (23 * 2**20), "key": "k"}),
        ("code_scan", {"code": "x = 1\n"}),
    ]))
    assert not ok.isError, ok.content[0].text
    assert json.loads(ok.content[0].text)["detected"] is False
    assert big.isError and "at most 22 MiB per request" in big.content[0].text
    assert "16 MiB" in big.content[0].text
    assert not after.isError


@pytest.mark.slow
def test_mcp_argument_type_errors_name_the_argument(app_url):
    """Wrong JSON types are tool errors naming the tool and the argument (not the JSON-schema text
    "None is not of type 'number'"); a lone surrogate (which the mcp client cannot even send) is
    named too, not a raw codec error."""
    t_text, none_thr, missing = asyncio.run(_mcp_session_calls(app_url, [
        ("dueling_simulate", {"T": "200"}),
        ("guardrail_score", {"prompt": "hi", "response": "hello", "threshold": None}),
        ("watermark_verify", {"key": "k"}),
    ]))
    expected = [(t_text, "dueling_simulate: T must be a number, not the text '200'"),
                (none_thr, "guardrail_score: threshold must be a number, not null"),
                (missing, "watermark_verify: image_base64 is missing")]
    for res, message in expected:
        assert res.isError and message in res.content[0].text, res.content[0].text
        assert "is not of type" not in res.content[0].text
    with pytest.raises(gr.Error, match="message is not valid UTF-8 text") as err:
        mcp_tools.watermark_embed(_png_b64(), message="bad \ud800", key="k")
    assert "codec" not in str(err.value)


def _png48_bytes(width: int = 512) -> bytes:
    """A 2:1 PNG with 16 bits per channel (48-bit RGB), written by hand (Pillow cannot write one)."""
    import struct
    import zlib

    import numpy as np

    h = width // 2
    a = np.random.default_rng(0).integers(0, 65536, (h, width, 3)).astype(">u2")
    raw = b"".join(b"\0" + a[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _gif_bytes(frames: int = 3, width: int = 512) -> bytes:
    from PIL import Image

    imgs = [Image.effect_noise((width, width // 2), 40 + 20 * i).convert("RGB") for i in range(frames)]
    buf = io.BytesIO()
    imgs[0].save(buf, format="GIF", save_all=True, append_images=imgs[1:])
    return buf.getvalue()


def test_deep_png_and_animated_gif_come_with_a_notice(tmp_path):
    """A 48-bit PNG is cut to 8 bits per channel and an animated GIF to its first frame, and each says
    so: in the tool's JSON notes and in the watermark tab's load text."""
    from demos.watermark import load_panorama

    for data, notice in ((_png48_bytes(), "16 bits per channel"), (_gif_bytes(), "only the first frame")):
        out = json.loads(mcp_tools.watermark_verify(base64.b64encode(data).decode(), key="k"))
        assert any(notice in n for n in out["notes"]), out["notes"]
        path = tmp_path / ("deep.png" if data.startswith(b"\x89PNG") else "anim.gif")
        path.write_bytes(data)
        img, info = load_panorama(str(path), "refuse")
        assert img.shape == (256, 512, 3) and "Notice:" in info and notice in info


def _post(url: str, path: str, body: bytes) -> tuple[int, str]:
    import httpx

    r = httpx.post(f"{url}{path}", content=body, timeout=60,
                   headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
    return r.status_code, r.text


@pytest.mark.slow
def test_deeply_nested_json_is_a_4xx_over_mcp_as_over_the_api_and_logs_no_traceback(served):
    """Issue #39 item 12: a body nested 100,000 deep got HTTP 500 and a RecursionError traceback over
    MCP (and 300 deep an opaque "Invalid request parameters"), while /gradio_api/call answered 400.
    Now both answer 4xx, MCP with a JSON-RPC parse error naming the limit, and the log has no
    traceback; an ordinary call goes on working."""
    before = len(served.log())
    for depth in (100_000, 2_000, 300, 40):
        nested = "[" * depth + "]" * depth
        status, text = _post(served.url, "/gradio_api/mcp/",
                             ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"code_rank",'
                              f'"arguments":{{"prefix":"x = 1\\n","candidates":{nested}}}}}}}').encode())
        assert status == 400, (depth, status, text[:200])
        err = json.loads(text)["error"]
        assert err["code"] == -32700 and "nested more than 32 levels" in err["message"]
        if depth >= 2_000:  # too deep for any JSON parser here: the API answers 400 as well
            api_status, _ = _post(served.url, "/gradio_api/call/codeprm_scan", f'{{"data": [{nested}, false]}}'.encode())
            assert api_status == 400, (depth, api_status)
    log = served.log()[before:]
    assert "Traceback" not in log and "RecursionError" not in log, log[-2000:]
    assert log.count("refused MCP request: the request's JSON is nested") == 4
    (ok,) = asyncio.run(_mcp_session_calls(served.url, [("code_scan", {"code": "x = 1\n"})]))
    assert not ok.isError


def _mcp_request(tool: str, arguments: dict, rid: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()


def _sse_result(text: str) -> dict:
    """The JSON-RPC message of a streamable-HTTP answer (an SSE ``data:`` line, or plain JSON)."""
    for line in text.splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:])
    return json.loads(text)


def _raw(url: str, method: str, path: str, headers: dict, body: bytes | None = None) -> tuple[int, dict, str]:
    """One request with exactly these headers (Host included), on its own connection."""
    import http.client
    from urllib.parse import urlsplit

    conn = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode(errors="replace")
    finally:
        conn.close()


_MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.mark.slow
def test_a_foreign_origin_is_refused_and_never_named_in_cors_headers(served):
    """Issue #47 item 2: with a Host of probe.localhost or localhost., the server answered
    ``Access-Control-Allow-Origin: http://evil.example`` (or ``null``) with credentials. Now a foreign
    origin gets HTTP 403 and no CORS header naming it, on a page, an API call and a preflight, whatever
    the Host; the server's own pages and a configured origin (SHOWCASE_ALLOWED_ORIGINS) are answered
    with CORS headers naming them."""
    from urllib.parse import urlsplit

    port = urlsplit(served.url).port
    own = f"127.0.0.1:{port}"
    requests = [("GET", "/gradio_api/info", {}, None),
                ("OPTIONS", "/gradio_api/call/tool_code_scan", {"Access-Control-Request-Method": "POST"}, None),
                ("POST", "/gradio_api/call/tool_code_scan", {"content-type": "application/json"},
                 b'{"data": ["x = 1\\n", false]}')]
    for host in (own, f"localhost:{port}", f"probe.localhost:{port}", f"localhost.:{port}", "showcase.test"):
        for origin in ("http://evil.example", "null", f"http://127.0.0.1.evil.example:{port}", f"http://{host}x"):
            for method, path, headers, body in requests:
                status, got, _ = _raw(served.url, method, path, {"Host": host, "Origin": origin, **headers}, body)
                assert status == 403, (host, origin, method, status)
                assert "access-control-allow-origin" not in got and "access-control-allow-credentials" not in got
    status, got, _ = _raw(served.url, "GET", "/gradio_api/info", {"Host": own, "Origin": f"http://{own}"})
    assert status == 200 and got["access-control-allow-origin"] == f"http://{own}"
    for method, path, headers, body in requests:
        status, got, _ = _raw(served.url, method, path, {"Host": own, "Origin": "https://embed.example", **headers}, body)
        assert status == 200, (method, status)
        assert got["access-control-allow-origin"] == "https://embed.example"
        assert got["access-control-allow-credentials"] == "true"


@pytest.mark.slow
def test_mcp_answers_only_allowed_hosts_and_origins(served):
    """Issue #47 item 3: MCP tool calls with a foreign Origin ran, on 127.0.0.1 and with a rebound Host.
    Now they get HTTP 403 and nothing runs; a call with no Origin, the server's own origin, or a host
    configured in SHOWCASE_ALLOWED_HOSTS is answered."""
    from urllib.parse import urlsplit

    port = urlsplit(served.url).port
    body = _mcp_request("code_scan", {"code": "x = eval(input())\n"})
    before = served.log().count("refused a request")
    refused = [{"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example"},
               {"Host": f"127.0.0.1:{port}", "Origin": "null"},
               {"Host": f"rebound.example:{port}"},  # DNS rebinding: the attacker's name, this machine's address
               {"Host": f"rebound.example:{port}", "Origin": f"http://rebound.example:{port}"},
               {"Host": f"localhost.localdomain:{port}"}]
    for headers in refused:
        status, _, text = _raw(served.url, "POST", "/gradio_api/mcp/", {**_MCP_HEADERS, **headers}, body)
        assert status == 403, (headers, status, text[:200])
        assert "verdict" not in text and ("not allowed" in text or "does not answer for the host" in text), text
    assert served.log().count("refused a request") - before == len(refused)
    for headers in ({"Host": f"127.0.0.1:{port}"}, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
                    {"Host": "showcase.test"}):
        status, _, text = _raw(served.url, "POST", "/gradio_api/mcp/", {**_MCP_HEADERS, **headers}, body)
        assert status == 200, (headers, status, text[:200])
        result = _sse_result(text)["result"]
        assert not result.get("isError") and json.loads(result["content"][0]["text"])["verdict"] == "vulnerable"


@pytest.mark.slow
def test_a_request_framed_two_ways_is_refused_and_its_connection_closed(served):
    """Issue #47 item 4: a request with both Content-Length and Transfer-Encoding got HTTP 422, and the
    request hidden in its body was then answered 200 on the same connection. Now it is answered 400 and
    the connection is closed (RFC 9112 section 6.1): one response, nothing after it."""
    import socket
    from urllib.parse import urlsplit

    port = urlsplit(served.url).port
    hidden = f"GET /gradio_api/info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    chunked = b"0\r\n\r\n"
    request = (f"POST /gradio_api/call/tool_code_scan HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(chunked) + len(hidden)}\r\n"
               "Transfer-Encoding: chunked\r\n\r\n").encode() + chunked + hidden
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(request)
        data, closed = b"", False
        while not closed:
            chunk = sock.recv(65536)
            closed = not chunk
            data += chunk
    assert data.startswith(b"HTTP/1.1 400 "), data[:300]
    assert data.count(b"HTTP/1.1 ") == 1, data.decode(errors="replace")
    assert b"connection: close" in data.lower()


@pytest.mark.slow
def test_a_5000_digit_number_in_an_mcp_call_is_a_bad_number(served):
    """Issue #47 item 5: a 5,000-digit integer in an MCP call got HTTP 500 from the MCP layer. Now it is a
    tool error naming the argument, as any bad number is (and in the request's id, HTTP 400); the log
    has no traceback."""
    before = len(served.log())
    huge = "1" * 5000
    body = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"dueling_simulate",'
            f'"arguments":{{"T":{huge},"seeds":1}}}}}}').encode()
    status, _, text = _raw(served.url, "POST", "/gradio_api/mcp/", _MCP_HEADERS, body)
    assert status == 200, (status, text[:300])
    answer = _sse_result(text)
    assert answer["id"] == 7 and answer["result"]["isError"]
    assert answer["result"]["content"][0]["text"].startswith("dueling_simulate: T has 5,000 digits")
    body = ('{"jsonrpc":"2.0","id":' + huge + ',"method":"tools/call","params":{"name":"code_scan",'
            '"arguments":{"code":"x = 1"}}}').encode()
    status, _, text = _raw(served.url, "POST", "/gradio_api/mcp/", _MCP_HEADERS, body)
    assert status == 400 and "5,000 digits" in json.loads(text)["error"]["message"], (status, text[:300])
    assert "Traceback" not in served.log()[before:]


def test_the_image_size_limit_is_exact():
    """Issue #47 item 6: the 16 MiB image limit let 16 MiB + 1 and + 2 bytes through (the base64 length
    check rounded). An image of exactly 16 MiB passes the size check (these bytes are then no image);
    one byte more is refused, naming the limit."""
    limit = mcp_tools.MAX_IMAGE_BYTES
    for extra in (0, 1, 2):
        data = base64.b64encode(bytes(limit + extra)).decode()
        with pytest.raises(gr.Error) as err:
            mcp_tools.watermark_verify(data, key="k")
        message = str(err.value)
        if extra:
            assert f"is {limit + extra:,} bytes, larger than 16 MiB" in message, (extra, message)
        else:
            assert "could not read the image" in message, message


@pytest.mark.slow
def test_an_mcp_image_one_byte_past_the_limit_is_refused_over_http(served):
    """The exact size edge through the server: 16 MiB + 1 byte is refused naming the limit, 16 MiB is
    read (and found to be no image)."""
    limit = mcp_tools.MAX_IMAGE_BYTES
    for extra, expected in ((1, "larger than 16 MiB"), (0, "could not read the image")):
        body = _mcp_request("watermark_verify", {"image_base64": base64.b64encode(bytes(limit + extra)).decode(),
                                                  "key": "k"})
        status, _, text = _raw(served.url, "POST", "/gradio_api/mcp/", _MCP_HEADERS, body)
        result = _sse_result(text)["result"]
        assert status == 200 and result["isError"] and expected in result["content"][0]["text"], (extra, text[:300])


async def _burst(url: str, n: int) -> list[tuple[int, str | None, float, str]]:
    """``n`` code_scan calls at once over MCP, each its own HTTP request: (status, Retry-After,
    seconds, body) per call."""
    import httpx

    async def one(client, i):
        t0 = time.perf_counter()
        r = await client.post(f"{url}/gradio_api/mcp/", headers=_MCP_HEADERS,
                              content=_mcp_request("code_scan", {"code": f"cmd = input()\nresult = eval(cmd)  # {i}\n"}, i))
        return r.status_code, r.headers.get("retry-after"), time.perf_counter() - t0, r.text

    async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=n + 10)) as client:
        return await asyncio.gather(*[one(client, i) for i in range(n)])


@pytest.mark.slow
def test_64_mcp_calls_are_held_and_more_get_503_with_retry_after(served):
    """Issue #47 item 7: of 30 MCP calls at once, 14 got "queue is full". Now the server holds 64: of 100
    calls at once, at least 64 are answered (all of them correctly, none timed out), and each one
    refused is answered at once with HTTP 503 and a Retry-After header whose seconds the message says."""
    results = asyncio.run(_burst(served.url, 100))
    answered = [r for r in results if r[0] == 200]
    refused = [r for r in results if r[0] != 200]
    assert len(answered) >= 64, (len(answered), [r[:2] for r in refused][:3])
    for _, _, _, text in answered:
        result = _sse_result(text)["result"]
        assert not result.get("isError"), result
        assert json.loads(result["content"][0]["text"])["verdict"] == "vulnerable"
    for status, retry_after, seconds, text in refused:
        assert status == 503 and retry_after is not None and int(retry_after) >= 1, (status, retry_after)
        assert f"try again in {retry_after} s" in json.loads(text)["error"]["message"]
        assert seconds < max(s for _, _, s, _ in answered)  # refused at once, not after a wait


def test_the_mcp_guard_holds_max_calls_and_refuses_one_more_with_retry_after():
    """``RequestGuard`` alone, with an app whose calls wait: ``MAX_MCP_CALLS`` calls are held at once,
    the next is answered at once with HTTP 503 and Retry-After; once calls are answered, the wait it
    names comes from their pace."""
    from server.http_limits import MAX_MCP_CALLS, RequestGuard

    async def scenario():
        gate = {"open": asyncio.Event()}

        async def app(scope, receive, send):
            await receive()
            await gate["open"].wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

        guard = RequestGuard(app, allowed_tools=["code_scan"])

        async def call(i):
            sent = []
            queue = [{"type": "http.request", "body": _mcp_request("code_scan", {"code": "x = 1"}, i),
                      "more_body": False}]

            async def receive():
                return queue.pop() if queue else await asyncio.Event().wait()

            async def send(message):
                sent.append(message)

            scope = {"type": "http", "method": "POST", "path": "/gradio_api/mcp/", "headers": [], "query_string": b""}
            await guard(scope, receive, send)
            return sent

        refusals = []
        for round_ in range(2):  # the second time, calls have been answered: a pace to go by
            gate["open"] = asyncio.Event()
            held = [asyncio.create_task(call(i)) for i in range(MAX_MCP_CALLS)]
            await asyncio.sleep(0.05)
            assert guard.calls == MAX_MCP_CALLS
            refusals.append(await asyncio.wait_for(call(99 + round_), timeout=1))
            gate["open"].set()
            for sent in await asyncio.gather(*held):
                assert sent[0]["status"] == 200
        return refusals

    first, second = asyncio.run(scenario())
    for sent, rid in ((first, 99), (second, 100)):
        start = sent[0]
        assert start["status"] == 503
        retry = dict(start["headers"])[b"retry-after"].decode()
        error = json.loads(sent[1]["body"])
        assert error["id"] == rid and f"try again in {retry} s" in error["error"]["message"]
    assert dict(first[0]["headers"])[b"retry-after"] == b"10"  # nothing answered yet: the default
    assert 1 <= int(dict(second[0]["headers"])[b"retry-after"]) <= 10


@pytest.mark.slow
def test_bad_input_is_one_log_line_per_refusal_and_no_traceback(served, tmp_path):
    """Issue #39 item 13: ordinary bad input (a wrong upload, a bad number) wrote a full traceback to
    the server log, 39 in one browser visit. Each refusal is now one "refused ..." line; tracebacks are
    kept for real faults."""
    from evals.hardening import call, upload, write_image

    base = served.url + "/"
    garbage = upload(base, write_image(tmp_path / "garbage.png", "garbage"))
    bad_calls = [
        ("codeprm_example", ["no such example"]),                 # a choice outside the choices
        ("codeprm_scan", ["x = 1\n", "yes"]),                     # a check box that is not true or false
        ("codeprm_step", [float("nan")]),                         # NaN in a slider
        ("codeprm_rank", ["import os\n", "   "]),                 # refused by the callback
        ("codeprm_sample", ["   ", 2, 16]),                       # refused by the engine
        ("wm_load", [garbage, "refuse"]),                         # a file that is no image
    ]
    before = len(served.log())
    for endpoint, args in bad_calls:
        out = call(base, endpoint, args, timeout=120)
        assert not out.ok and out.message, endpoint
    (mcp_bad,) = asyncio.run(_mcp_session_calls(served.url, [("watermark_verify", {"image_base64": "bm90IGFuIGltYWdl",
                                                                                   "key": "k"})]))
    assert mcp_bad.isError
    deadline = time.time() + 10
    while served.log()[before:].count("refused ") < len(bad_calls) + 1 and time.time() < deadline:
        time.sleep(0.2)
    log = served.log()[before:]
    lines = [line for line in log.splitlines() if line.strip()]
    assert "Traceback" not in log, log[-3000:]
    assert len([line for line in lines if "refused " in line]) == len(bad_calls) + 1, lines
    assert len(lines) == len(bad_calls) + 1, lines  # nothing else: one line per refusal


@pytest.mark.slow
def test_a_web_address_in_a_file_argument_is_never_looked_up(served):
    """Issue #39 item 12: a host name in a file argument started a DNS lookup (Gradio resolves it to
    check the address, then fetches it). A file argument that names a web address is refused before
    Gradio sees it, and the server process resolved no host name at all in this module's tests (the
    resolver is watched: ``WATCHED_APP``)."""
    from evals.hardening import call

    bits = "64 bits (PSNR floor 42 dB)"
    for address in ("http://dns-probe-a.invalid/x.png", "https://dns-probe-b.invalid/p.png", "//dns-probe-c.invalid/q.png"):
        data = {"path": address, "meta": {"_type": "gradio.FileData"}}
        for endpoint, args in (("wm_load", [data, "refuse"]), ("wm_verify", [data, "k", bits])):
            out = call(served.url + "/", endpoint, args, timeout=60)
            assert not out.ok and "not a web address" in out.message, (endpoint, out.message)
    time.sleep(1)
    assert "HOST LOOKUP" not in served.log(), [x for x in served.log().splitlines() if "HOST LOOKUP" in x]
