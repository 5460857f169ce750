"""Every endpoint gets its bad inputs through the HTTP API of the running app (raw JSON: NaN, 1e300,
lone surrogates, megabyte-long choices, undecodable and oversized images) and must answer with a
clear, short message, never an empty one, within seconds."""
from __future__ import annotations

import json
import re

import pytest

from engines.guardrail.config import GuardConfig
from evals.hardening import call, upload, write_image

NAN, HUGE = float("nan"), 1e300
MB_TEXT = "x" * 1_000_000
SURROGATE = "bad \ud800 text"
BITS64 = "64 bits (PSNR floor 42 dB)"
GOOD_CODE = "import os\n\n\ndef f(x):\n    return os.path.join('a', x)\n"

# Each endpoint's valid arguments; a row of the table changes one of them. "@kind" is an uploaded
# image file of that kind (evals.hardening.write_image).
DEFAULTS: dict[str, list] = {
    "wm_load": ["@noise", "refuse"],
    "wm_embed": ["@noise", "demo-key", "text", "ICML26", BITS64],
    "wm_attack": ["@noise", 0, 0, 0, "none"],
    "wm_verify": ["@noise", "demo-key", BITS64],
    "wm_sweep": ["@noise", "demo-key"],
    "guardrail_stream": ["What is the capital of Australia?", 0.99, 1, 8, "onnx", True, 1, "strict"],
    "guardrail_score": ["hello", "Hi there.", 0.99, 1, "onnx", "loose"],
    "codeprm_example": ["CWE-78 vulnerable"],
    "codeprm_scan": [GOOD_CODE, False],
    "codeprm_step": [1],
    "codeprm_play": [],
    "codeprm_rank": ["import os\n", "    return 1\n# ---\n    return 2\n"],
    "codeprm_sample": ["import os\n", 2, 16],
    "bandits_preset": ["Fig. 1 linear, adversarial delay"],
    "bandits_run": [4, 3, 100, 1, "polynomial", False, "stochastic", 10.0, 10.0, 100, 5, ["MaxInP"], False, "fast",
                    "constant 0.1 (reference)"],
    "bandits_sweep": [4, 3, 100, 1, "polynomial", False, "stochastic", 10.0, 10.0, 100, 5, ["MaxInP"], False, "fast",
                      "constant 0.1 (reference)", "corruption budget C", "0, 5"],
}

# (endpoint, {argument index: bad value}, expected substring of the error message)
TABLE: list[tuple[str, dict, str]] = [
    ("wm_load", {0: "@garbage"}, "could not read the file"),
    ("wm_load", {1: MB_TEXT}, "not one of the choices"),
    ("wm_load", {1: None}, "nothing chosen"),
    ("wm_embed", {0: None}, "no panorama yet"),
    ("wm_embed", {0: "@black"}, "flat"),
    ("wm_embed", {0: "@deep"}, "16-bit"),
    ("wm_embed", {0: "@huge"}, "8000 x 4000 px"),
    ("wm_embed", {1: SURROGATE}, "not valid UTF-8"),
    ("wm_embed", {4: None}, "nothing chosen"),
    ("wm_embed", {3: "far too long for sixty-four bits"}, "bytes"),
    ("wm_attack", {0: "@garbage"}, "could not read the file"),
    ("wm_attack", {0: "@huge"}, "8000 x 4000 px"),
    ("wm_attack", {1: NAN}, "finite"),
    ("wm_attack", {2: HUGE}, "between -90 and 90"),
    ("wm_attack", {3: "abc"}, "not a number"),
    ("wm_attack", {1: "10"}, "yaw (deg): '10' is text, not a number"),
    ("wm_attack", {4: MB_TEXT}, "not one of the choices"),
    ("wm_verify", {0: "@garbage"}, "could not read the file"),
    ("wm_load", {0: {"path": "http://bad-input-probe.invalid/p.png", "meta": {"_type": "gradio.FileData"}}},
     "not a web address"),
    ("wm_verify", {0: {"path": "//bad-input-probe.invalid/p.png", "meta": {"_type": "gradio.FileData"}}},
     "not a web address"),
    ("wm_attack", {0: {"path": "https://bad-input-probe.invalid/p.png", "meta": {"_type": "gradio.FileData"}}},
     "not a web address"),
    ("wm_verify", {1: ""}, "key is empty"),
    ("wm_verify", {2: 64}, "not one of the choices"),
    ("wm_sweep", {0: "@wide"}, "4096 x 2048 px"),
    ("wm_sweep", {1: SURROGATE}, "not valid UTF-8"),
    ("guardrail_stream", {0: SURROGATE}, "not valid UTF-8"),
    ("guardrail_stream", {1: NAN}, "finite"),
    ("guardrail_stream", {2: NAN}, "finite"),
    ("guardrail_stream", {3: 1e9}, "between 8 and 128"),
    ("guardrail_stream", {4: None}, "nothing chosen"),
    ("guardrail_stream", {5: "yes"}, "true or false"),
    ("guardrail_stream", {6: 3}, "not one of the choices"),
    ("guardrail_stream", {0: "x" * (GuardConfig().max_prompt_chars + 1)}, "limit"),
    ("guardrail_stream", {7: "lenient"}, "not one of the choices"),
    ("guardrail_score", {1: SURROGATE}, "not valid UTF-8"),
    ("guardrail_score", {2: "abc"}, "not a number"),
    ("guardrail_score", {4: MB_TEXT}, "not one of the choices"),
    ("guardrail_score", {5: None}, "nothing chosen"),
    ("codeprm_example", {0: MB_TEXT}, "not one of the choices"),
    ("codeprm_example", {0: None}, "nothing chosen"),
    ("codeprm_scan", {0: SURROGATE}, "not valid UTF-8"),
    ("codeprm_scan", {1: "yes"}, "true or false"),
    ("codeprm_step", {0: NAN}, "finite"),
    ("codeprm_play", {}, "scan some code first"),
    ("codeprm_rank", {0: SURROGATE}, "not valid UTF-8"),
    ("codeprm_rank", {1: ""}, "candidate"),
    ("codeprm_sample", {1: NAN}, "finite"),
    ("codeprm_sample", {2: HUGE}, "between 8 and 128"),
    ("bandits_preset", {0: None}, "nothing chosen"),
    ("bandits_preset", {0: MB_TEXT}, "not one of the choices"),
    ("bandits_run", {0: NAN}, "finite"),
    ("bandits_run", {2: NAN}, "finite"),
    ("bandits_run", {2: 10**7, 0: 1, 1: 2}, "simulated rounds"),
    ("bandits_run", {2: 10**9}, "simulated rounds"),
    ("bandits_run", {3: 2.5}, "whole number"),
    ("bandits_run", {2: "200"}, "T (rounds): '200' is text, not a number"),
    ("bandits_run", {4: None}, "nothing chosen"),
    ("bandits_run", {7: HUGE}, "stochastic delay mean mu (rounds) must be between 0 and 1,000,000"),
    ("bandits_run", {8: float("inf")}, "finite"),
    ("bandits_run", {9: -1}, "between 0 and"),
    ("bandits_run", {11: ["MaxInP", "UCB"]}, "not one of the choices"),
    ("bandits_run", {13: MB_TEXT}, "not one of the choices"),
    ("bandits_sweep", {16: "nan, 5"}, "finite"),
    ("bandits_sweep", {15: "y" * 5000}, "not one of the choices"),
    ("bandits_sweep", {15: "horizon T", 16: "10, 1e9"}, "between 1 and"),
]


@pytest.fixture(scope="module")
def files(running_app, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad_images")
    kinds = ("garbage", "huge", "wide", "black", "deep", "noise")
    return {k: upload(running_app, write_image(folder / f"{k}.png", k)) for k in kinds}


def _args(endpoint: str, change: dict, files: dict) -> list:
    args = list(DEFAULTS[endpoint])
    for i, v in change.items():
        args[i] = v
    return [files[a[1:]] if isinstance(a, str) and a.startswith("@") else a for a in args]


@pytest.mark.slow
@pytest.mark.parametrize("endpoint,change,expected", TABLE,
                         ids=[f"{e}-{'-'.join(map(str, c))}-{x[:20]}" for e, c, x in TABLE])
def test_bad_input_gets_a_clear_message(running_app, files, endpoint, change, expected):
    out = call(running_app, endpoint, _args(endpoint, change, files), timeout=120)
    assert not out.ok, f"{endpoint} accepted a bad input: {str(out.data)[:200]}"
    assert out.message, f"{endpoint} answered with an empty error message"
    assert expected in out.message, out.message
    assert len(out.message) <= 300  # never echoes a long input back
    assert not re.search(r"\(\w*(?:Error|Exception)\)", out.message), out.message  # no class names (issue #39)
    assert out.seconds < 60


@pytest.mark.slow
def test_every_endpoint_is_in_the_table(running_app):
    """A new tab endpoint must get its rows of bad inputs here (the MCP tools, ``tool_*``, take typed
    data rather than components and are checked by their own tests)."""
    import httpx

    info = httpx.get(f"{running_app}gradio_api/info", timeout=30).json()
    named = {n.lstrip("/") for n in info["named_endpoints"] if not n.lstrip("/").startswith("tool_")}
    without_inputs = {n for n in named if not info["named_endpoints"]["/" + n]["parameters"]}
    assert named - without_inputs - {"codeprm_play"} <= {e for e, _, _ in TABLE}, named


@pytest.mark.slow
def test_valid_defaults_succeed(running_app, files):
    """The table's base arguments are valid, so each row fails for its one bad value only."""
    for endpoint in ("wm_attack", "codeprm_scan", "bandits_run", "codeprm_example", "bandits_preset"):
        out = call(running_app, endpoint, _args(endpoint, {}, files))
        assert out.ok, (endpoint, out.message)


@pytest.mark.slow
def test_oversized_upload_is_refused(running_app, tmp_path):
    import httpx

    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (21 * 1024 * 1024))
    with pytest.raises(httpx.HTTPStatusError) as err:
        upload(running_app, big)
    assert err.value.response.status_code == 413


def _raw_post(base: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    """POST over a bare socket (the declared Content-Length need not match what is sent);
    returns the status code and the response body."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(base)
    head = "".join(f"{k}: {v}\r\n" for k, v in {"host": u.netloc, "connection": "close", **headers}.items())
    with socket.create_connection((u.hostname, u.port), timeout=30) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.slow
def test_api_call_body_over_the_cap_is_refused_before_parsing(running_app):
    """``/gradio_api/call`` refuses a body just over the 24 MiB cap with 413 and a message naming the
    cap: declared in Content-Length (answered with only 1 KB of the body sent, so nothing was read
    or parsed), or streamed without a length (refused while counting, 1 MiB chunks)."""
    import httpx

    from server.http_limits import API_MAX_BODY

    status, body = _raw_post(running_app, "/gradio_api/call/codeprm_scan",
                             {"content-type": "application/json", "content-length": str(API_MAX_BODY + 1)},
                             b'{"data": ["' + b"x" * 1000)
    assert status == 413
    assert "API calls take at most 24 MiB" in json.loads(body)["detail"]

    def stream():
        yield b'{"data": ["'
        for _ in range(API_MAX_BODY // 2**20):
            yield b"x" * 2**20
        yield b'", false]}'

    r = httpx.post(f"{running_app}gradio_api/call/codeprm_scan", content=stream(),
                   headers={"content-type": "application/json"}, timeout=60)
    assert r.status_code == 413 and "at most 24 MiB" in r.json()["detail"]
    # a body under the cap is parsed and run as before
    assert call(running_app, "codeprm_scan", [GOOD_CODE, False]).ok
