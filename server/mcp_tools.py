"""The engines' read-only verbs as small typed API functions, served as MCP tools by ``app.py``.

Each tool takes data (text, numbers, an image as base64 PNG/JPEG bytes) and returns JSON text; none
takes a server path or a URL, none reads or writes a file, and none opens a network connection.
Gradio derives each tool's schema from the type hints and its description from the docstring
(``Args:`` lines become the parameter descriptions), so the docstrings say units and limits.
Bad input raises ``gr.Error`` with the engine's message (shown to the MCP client, never a stack
trace). See docs/mcp.md.
"""
from __future__ import annotations

import base64
import binascii
import functools
import inspect
import io
import json

import gradio as gr
import numpy as np

from server.http_limits import MAX_IMAGE_MIB
from server.inputs import number, refusal, shorten, text
from engines.common import InputError, gpu

#: Largest image a tool decodes (bytes after base64 decoding); the MCP body cap fits it
#: (``server.http_limits.MCP_MAX_BODY``).
MAX_IMAGE_BYTES = MAX_IMAGE_MIB * 2**20
#: Longest code or prefix the code tools accept (characters); the guardrail's prompt and reply limits
#: are the engine's own (``GuardConfig``).
MAX_TEXT_CHARS = 100_000
#: Most consecutive risky tokens ``guardrail_score`` lets a caller ask for.
MAX_PATIENCE = 64
#: Candidates ``code_rank`` takes: the engine ranks at most this many at a time (``CodePRM.rank``).
MAX_RANK_CANDIDATES = 64
#: ``dueling_simulate`` refuses runs estimated to take longer (seconds).
MAX_TOOL_SECONDS = 120.0


def _n(x: float) -> str:
    """A number as a description states it: ``4,000``, ``1,000,000,000``, ``0.5``."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _limits() -> dict[str, str]:
    """Every number the tools' descriptions state, read from the engines' own limits."""
    from engines.codeprm.config import PRMConfig
    from engines.dueling import LIMITS, SimConfig
    from engines.guardrail import GuardConfig
    from engines.watermark import TIERS, WatermarkConfig, prepare_panorama, text_capacity

    rows = 2 * max(WatermarkConfig(bits=b).l_max for b in TIERS)  # a carrier of degree l needs 2 l rows
    guard, prm, sim = GuardConfig(), PRMConfig(), SimConfig(n_seeds=2)
    floors = {WatermarkConfig(bits=b).psnr_floor for b in TIERS}
    out = {"min_w": _n(2 * rows), "min_h": _n(rows), "max_mib": _n(MAX_IMAGE_MIB),
           "downscale": _n(inspect.signature(prepare_panorama).parameters["max_width"].default),
           "tiers": f"{', '.join(map(_n, TIERS[:-1]))} or {_n(TIERS[-1])}",
           "capacity": f"{_n(TIERS[0])} bits hold {_n(text_capacity(TIERS[0]))} bytes of UTF-8, "
                       + ", ".join(f"{_n(b)} bits {_n(text_capacity(b))}" for b in TIERS[1:]),
           "floor": " / ".join(f"{_n(f)} dB" for f in sorted(floors)),
           "prompt_chars": _n(guard.max_prompt_chars), "response_chars": _n(guard.max_response_chars),
           "response_tokens": _n(guard.max_response_tokens), "max_patience": _n(MAX_PATIENCE),
           "code_chars": _n(MAX_TEXT_CHARS), "code_lines": _n(prm.max_lines), "line_chars": _n(prm.max_line_chars),
           "candidates": _n(MAX_RANK_CANDIDATES), "max_seconds": _n(MAX_TOOL_SECONDS),
           "seed0": str(sim.seeds[0]), "seed_step": str(sim.seeds[1] - sim.seeds[0]),
           "delay_mean": _n(sim.delay_mean), "delay_std": _n(sim.delay_std), "delay_budget": _n(sim.delay_budget)}
    for field, name in (("T", "T"), ("n_seeds", "seeds"), ("d", "d"), ("K", "K"), ("corruption_budget", "C")):
        out[f"{name}_lo"], out[f"{name}_hi"] = _n(LIMITS[field].lo), _n(LIMITS[field].hi)
    return out


def _described(fn):
    """``fn`` with the engine limits (``_limits``) written into its docstring's ``{placeholders}``:
    Gradio makes the MCP tool's description from it, so every number there is the engine's."""
    fn.__doc__ = fn.__doc__.format(**_limits())
    return fn


def _tool(fn):
    """Engine errors -> ``gr.Error`` with the message (the MCP client sees it as the tool's error),
    logged as one line (``refusal``)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error as exc:
            raise exc if not exc.print_exception else refusal(fn.__name__, str(exc.message)) from None
        except (InputError, ValueError) as exc:
            raise refusal(fn.__name__, str(exc), detail=type(exc).__name__) from None

    return wrapper


def decoded_size(text: str) -> int:
    """The bytes base64 ``text`` decodes to, counted before decoding: 3 for every 4 characters,
    less one for each ``=`` of padding (exact for valid base64, never rounded up or down).

    >>> decoded_size("QUJD"), decoded_size("QUI="), decoded_size("QQ==")
    (3, 2, 1)
    """
    return len(text) // 4 * 3 - text[-2:].count("=")


def _decode_image(image_base64: str) -> tuple[np.ndarray, list[str]]:
    """base64 (optionally a ``data:image/...;base64,`` URI) of a PNG/JPEG -> RGB uint8 panorama and
    the notices of what decoding changed (16-bit depth cut to 8, later GIF frames dropped, downscale)."""
    from engines.watermark import prepare_panorama

    if not isinstance(image_base64, str) or not image_base64.strip():
        raise InputError("image_base64 is empty: send the PNG or JPEG file's bytes, base64-encoded")
    text = image_base64.strip()
    if text.startswith("data:"):
        text = text.split(",", 1)[-1]
    size = decoded_size(text)
    if size > MAX_IMAGE_BYTES:
        raise InputError(f"the image is {size:,} bytes, larger than {MAX_IMAGE_BYTES // 2**20} MiB "
                         f"({MAX_IMAGE_BYTES:,} bytes); send a smaller one (downscale or JPEG)")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InputError("image_base64 is not valid base64") from None
    return prepare_panorama(io.BytesIO(data), fit="refuse")


def _json(value) -> str:
    """Tools answer JSON text (what an MCP client shows its model; gradio would send a dict's repr)."""
    return json.dumps(value, ensure_ascii=False)


def _text(name: str, value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``value`` as text within ``limit`` characters; None, non-text and lone surrogates (which
    would fail later as a raw codec error) are refused naming ``name``."""
    if value is None:
        raise InputError(f"{name}: give text")
    return text(value, name, limit)


def _tier(bits) -> int:
    """``bits`` as one of the watermark's tiers (``engines.watermark.TIERS``), else an InputError."""
    from engines.watermark import TIERS

    bits = number(bits, "bits", whole=True)
    if bits not in TIERS:
        raise InputError(f"bits={bits}: choose {', '.join(map(str, TIERS[:-1]))} or {TIERS[-1]}")
    return int(bits)


@_tool
@_described
def watermark_embed(image_base64: str, message: str, key: str, bits: int = 64) -> str:
    """Embed a short text message into an equirectangular (2:1) panorama under a secret key.

    The mark lives in rotation-invariant spherical bispectra, so it survives 3D rotation of the panorama. Takes seconds to a minute on a CPU.

    Args:
        image_base64: the panorama as a base64-encoded PNG or JPEG file, 2:1 aspect ratio, 8-bit RGB, at least {min_w}x{min_h} pixels, at most {max_mib} MiB; wider than {downscale} px is downscaled.
        message: text to embed; {capacity} (a CRC-16 makes the decoded text exact or absent).
        key: the secret key (any non-empty text); the same key is needed to verify.
        bits: payload size in bits: {tiers} (PSNR floor {floor} in each tier).

    Returns:
        a JSON object: image_png_base64 (the watermarked panorama, PNG, base64), psnr_db, ws_psnr_db, ssim (0-1), bits, bits_hex (the payload), is_text, min_margin, seconds, notes (what decoding changed, e.g. 16-bit depth cut to 8 bits or the first GIF frame only, then the embedder's notes).
    """
    from engines.watermark import WatermarkConfig, embed

    bits = _tier(bits)
    if not _text("key", key, 1000):
        raise InputError("key is empty")
    img, notes = _decode_image(image_base64)
    res = embed(img, _text("message", message, 256), key=key, config=WatermarkConfig(bits=bits))
    return _json({**res.to_dict(), "notes": notes + res.notes})


@_tool
@_described
def watermark_verify(image_base64: str, key: str, bits: int = 64) -> str:
    """Check a panorama for the bispectrum watermark under a key alone (no original needed); reads the embedded text if present.

    Works after any 3D rotation of the panorama and after mild JPEG, noise, blur or resizing. Takes about a second.

    Args:
        image_base64: the panorama as a base64-encoded PNG or JPEG file (2:1, 8-bit RGB, at least {min_w}x{min_h} pixels, at most {max_mib} MiB; wider than {downscale} px is downscaled).
        key: the secret key used at embedding.
        bits: payload size used at embedding: {tiers}.

    Returns:
        a JSON object: detected (pilot z-score >= threshold), message (text or null), p_value (Hoeffding bound on a false detection), z, threshold, bits (the capacity it was read at: another tier's when the mark was embedded there, as notes then says), bits_hex, seconds, notes (what decoding changed: 16-bit depth cut to 8 bits, first GIF frame only, downscaling; and the tier it was read at when that is not ``bits``).
    """
    from engines.watermark import WatermarkConfig, verify

    bits = _tier(bits)
    if not _text("key", key, 1000):
        raise InputError("key is empty")
    img, notes = _decode_image(image_base64)
    v = verify(img, key=key, config=WatermarkConfig(bits=bits))
    return _json({**v.to_dict(), "notes": notes + v.notes})


@gpu
@_tool
@_described
def guardrail_score(prompt: str, response: str, threshold: float = -1.0, patience: int = 0,
                    policy: str = "strict") -> str:
    """Score an assistant reply to a prompt token by token for harmful content (streaming guardrail head on SmolLM2-135M).

    The reply is teacher-forced after the prompt; the head gives each token a risk in [0, 1] per policy and the stop policy fires at the first of `patience` consecutive tokens with risk >= `threshold`. Strict stops a reply that starts going along with a harmful request (only once a request gate judges the request harmful; its risk is never below loose's), loose only one that gives material harmful help. Takes a few seconds on a CPU.

    Args:
        prompt: the user's prompt (plain text, at most {prompt_chars} characters).
        response: the reply to score (plain text, at most {response_chars} characters and {response_tokens} SmolLM2 tokens; CJK text runs several tokens a character).
        threshold: per-token risk threshold in (0, 1); -1 uses the policy's dev-picked threshold.
        patience: consecutive risky tokens needed to stop, at most {max_patience}; 0 uses the policy's dev-picked value.
        policy: "strict" or "loose".

    Returns:
        a JSON object: would_stop, stop_token (1-based or null), stop_level (complies or unsafe; null without a stop), policy, tokens, max_risk, response_risk (0 safe .. 1 harmful), request_risk (P(the request is harmful) by the request gate), threshold, patience, token_risks (list of [token, risk, level]).
    """
    from engines.guardrail import POLICIES, shared_guardrail

    threshold = number(threshold, "threshold", -1.0, 1.0)
    patience = number(patience, "patience", 0, MAX_PATIENCE, whole=True)
    if policy not in POLICIES:
        raise InputError(f"policy must be one of {', '.join(POLICIES)}, got {str(policy)[:40]!r}")
    thr = None if threshold < 0 else threshold
    pat = None if patience <= 0 else patience
    tr = shared_guardrail("torch").score(_text("prompt", prompt, None), _text("response", response, None),
                                         threshold=thr, patience=pat, policy=policy)
    return _json(tr.to_dict())


@_tool
@_described
def code_scan(code: str, partial: bool = False) -> str:
    """Step-level security scan of Python source: each step (statement group) gets a security score, the file a verdict.

    The code is parsed as text, never imported or executed. Findings come from the learned step model fused with the analysers: bandit, CodeShield, and taint and framework-settings rules (user input reaching a sink, explained as a source -> sink flow). Takes about a second.

    Args:
        code: Python source code (at most {code_chars} characters, at most {code_lines} lines, at most {line_chars} characters a line).
        partial: true when the code is an unfinished prefix (a syntax error at its end is then expected).

    Returns:
        a JSON object: verdict (safe, vulnerable, or incomplete: no step flagged but an analyser could not read the code), risk (0 secure .. 1 insecure), threshold, steps, findings (line, cwe: the analyser's own CWE, family: the tab's CWE family, rule, message, source: bandit, codeshield, taint, settings or model, severity and confidence: low, medium, high or empty where the analyser rates none, trace: for a taint finding its source and sink lines, explanation: the flow in words), flagged_steps (1-based step, lines, what flagged it: analysers, model or both, and weakness: the CWE that drives it with its title), drivers (1-based steps that drove the verdict), failures (analyser and reason, for each analyser that could not read the code), syntax_error.
    """
    from engines.codeprm import default_prm

    return _json(default_prm().scan(_text("code", code), partial=bool(partial)).brief_dict())


@_tool
@_described
def code_rank(prefix: str, candidates: list[str]) -> str:
    """Rank candidate continuations of a Python prefix by security (safest first), as a code assistant's re-ranker would.

    Each candidate's own steps are scored in the context of the prefix; the rank uses the top-k safe ratio, ties broken by the soft minimum of the step scores. Nothing is executed.

    Args:
        prefix: the code written so far (may be empty; at most {code_chars} characters).
        candidates: 1 to {candidates} candidate continuations (each non-empty Python text; the prefix and the candidates together at most {code_lines} lines).

    Returns:
        a JSON list, one object per candidate, best first: rank, index (0-based position in the input), verdict, reward (soft-min safety 0..1), topk_safe_ratio, mean_score, min_score, n_steps (the candidate's own steps), parses, candidate.
    """
    from engines.codeprm import default_prm

    if not isinstance(candidates, list):
        raise InputError("candidates must be a list of strings")
    rows = default_prm().rank(_text("prefix", prefix), [_text("candidate", c) for c in candidates])
    return _json([r.to_dict() for r in rows])


@_tool
@_described
def dueling_simulate(T: int = 500, seeds: int = 3, d: int = 10, K: int = 10, corruption_budget: int = 25,
                    delay: str = "stochastic", algorithms: str = "RCDP-UCB,RCDB,MaxInP", mode: str = "fast") -> str:
    """Simulate linear dueling bandits with delayed and corrupted feedback; compare RCDP-UCB with baselines by cumulative regret.

    Regret per round is the mean utility gap of the two served arms (utility units). Every algorithm sees the same contexts and noise. Runs estimated over {max_seconds} s are refused before they start (the message says what to lower).

    Args:
        T: horizon in rounds ({T_lo} to {T_hi}, within the time cap).
        seeds: independent runs ({seeds_lo} to {seeds_hi}, within the time cap); seed r is {seed0} + {seed_step} r.
        d: context dimension ({d_lo} to {d_hi}).
        K: arms per round ({K_lo} to {K_hi}).
        corruption_budget: number of preference outcomes an adversary may flip (0 = no corruption; at most {C_hi}).
        delay: feedback delay: stochastic (Gaussian, mean {delay_mean} and standard deviation {delay_std} rounds), geometric, strategic (adversarial, budget {delay_budget} rounds) or none.
        algorithms: comma-separated subset of RCDP-UCB, RCDB, CoLSTIM, MaxInP, MaxPairUCB.
        mode: fast (approximate refits) or faithful (the reference's exact refits; slower).

    Returns:
        a JSON object: table (per algorithm: rank, final_regret_mean, final_regret_std, min, max, in utility units), seconds, config (every SimConfig field), diagnostics (per algorithm: outcomes flipped, delay applied), exploration.
    """
    from engines.dueling import LIMITS, SimConfig, simulate

    args = {"T": ("T", T), "n_seeds": ("seeds", seeds), "d": ("d", d), "K": ("K", K),
            "corruption_budget": ("corruption_budget", corruption_budget)}
    # the engine's bounds (engines.dueling.LIMITS), under this tool's argument names
    vals = {f: number(v, name, LIMITS[f].lo, LIMITS[f].hi, whole=LIMITS[f].whole) for f, (name, v) in args.items()}
    algos = tuple(a.strip() for a in _text("algorithms", algorithms, 200).split(",") if a.strip())
    cfg = SimConfig(**vals, corruption="strategic" if vals["corruption_budget"] > 0 else "none", delay=delay,
                    algorithms=algos, mode=mode, max_seconds=MAX_TOOL_SECONDS)
    return _json(simulate(cfg).to_dict())


def _former_name(fn, name: str):
    """``fn`` served under its former tool name ``name`` for one release: the same arguments and
    answer; its description says it is deprecated and names the tool to use."""

    @functools.wraps(fn)
    def alias(*args, **kwargs):
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    summary, rest = fn.__doc__.split("\n\n", 1)
    alias.__doc__ = (f"Deprecated: the former name of {fn.__name__}, answered the same way; use {fn.__name__} "
                     f"(this name goes in the next release). {summary}\n\n{rest}")
    return alias


bandit_simulate = _former_name(dueling_simulate, "bandit_simulate")

#: (function, api_name): api names are new, so the tabs' endpoints keep theirs; MCP tool names are
#: the function names.
TOOLS = [
    (watermark_embed, "tool_watermark_embed"),
    (watermark_verify, "tool_watermark_verify"),
    (guardrail_score, "tool_guardrail_score"),
    (code_scan, "tool_code_scan"),
    (code_rank, "tool_code_rank"),
    (dueling_simulate, "tool_dueling_simulate"),
    (bandit_simulate, "tool_bandit_simulate"),
]


def tool_names() -> list[str]:
    """The MCP tool names as clients see them: the function names, prefixed with the Space's name
    on a Hugging Face Space (as Gradio names them there). Only these may run over MCP."""
    from gradio.utils import get_space

    space = get_space()
    prefix = space.split("/")[-1] + "_" if space else ""
    return [prefix + fn.__name__ for fn, _ in TOOLS]


#: JSON type each Python annotation of a tool parameter takes, as named in a message.
_JSON_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int, float), "a number"), "float": ((int, float), "a number"), "str": ((str,), "text"),
    "bool": ((bool,), "true or false"), "list[str]": ((list,), "a list of strings"),
}


def _json_kind(value: object) -> str:
    """How a JSON value reads in a message: ``the text '200'``, ``null``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text {shorten(value)}"
    return {dict: "an object", list: "a list"}.get(type(value), shorten(value))


def check_call(name: str, arguments: object) -> str | None:
    """A one-line message naming the argument when ``arguments`` do not fit tool ``name`` (missing,
    unknown, or of the wrong JSON type); None when they fit.

    Runs before the MCP library's JSON-schema check, whose messages name no argument ("None is not
    of type 'number'"). Ranges, whole numbers and lengths are the tools' own checks.
    """
    fns = {n: fn for n, (fn, _) in zip(tool_names(), TOOLS)}
    fn = fns.get(name)
    if fn is None:
        return None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"{name}: the arguments must be a JSON object, not {_json_kind(arguments)}"
    params = inspect.signature(inspect.unwrap(fn)).parameters
    unknown = sorted(set(arguments) - set(params))
    if unknown:
        return f"{name}: unknown argument {shorten(unknown[0])}; it takes {', '.join(params)}"
    for pname, p in params.items():
        if pname not in arguments:
            if p.default is inspect.Parameter.empty:
                return f"{name}: {pname} is missing"
            continue
        value = arguments[pname]
        types, what = _JSON_KINDS.get(str(p.annotation), ((object,), "a value"))
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            return f"{name}: {pname} must be {what}, not {_json_kind(value)}"
        odd = [v for v in value if not isinstance(v, str)][:1] if isinstance(value, list) else []
        if odd:
            return f"{name}: {pname} must be {what}, not a list holding {_json_kind(odd[0])}"
    return None


def register() -> None:
    """Add every tool as an API endpoint of the Blocks being built (call inside ``gr.Blocks``)."""
    for fn, name in TOOLS:
        gr.api(fn, api_name=name)
