"""The streaming guardrail: SmolLM2 generates with its KV cache, the SLD head scores every token.

Each generated token is fed back through the LM once (as any KV-cache decode does); the same
forward pass yields the next token's logits and this token's hidden states, so the guard adds
only the head's O(1) step per token (no re-read of the prefix, no second model).
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from engines.common.backbone import ChatPrompt, chat_prompt, load_backbone
from engines.common.device import get_device
from engines.common.errors import InputError
from engines.common.paths import ASSETS_DIR
from engines.guardrail.config import POLICY_COLUMNS, GuardConfig
from engines.guardrail.detok import IncrementalDecoder, token_pieces
from engines.guardrail.export import (
    BLOCK_ONNX,
    INIT_ONNX,
    STEP_ONNX,
    BlockStepModule,
    GroupedStepModule,
    init_input_name,
    load_head,
)
from engines.guardrail.features import tap, teacher_forced
from engines.guardrail.judge import RequestReading, judge_inputs
from engines.guardrail.metrics import stop_index
from engines.guardrail.risks import policy_risks, risk_pair

ASSET_DIR = ASSETS_DIR / "guardrail"
BACKENDS = ("torch", "onnx")
POLICIES = POLICY_COLUMNS
LEVELS = ("safe", "complies", "unsafe")
MAX_BLOCK = 64  # most tokens scored per head call in Guardrail.stream(block=...)


@dataclass
class StreamEvent:
    """One generated token as the guard saw it.

    ``token`` is the text the token adds, whole characters only ("" while it holds part of a
    character another token completes, see :mod:`engines.guardrail.detok`; "" for a shadow event:
    the unguarded continuation after a stop, whose text is never returned). ``lm_ms``/``head_ms``:
    time of the LM decode step that produced this token's hidden states and of the head step on
    them (with ``stream(block=k)``, the block's head call divided by its tokens).
    """

    index: int
    token: str
    token_id: int
    risk: float
    stopped: bool
    lm_ms: float
    head_ms: float
    shadow: bool = False
    level: str = "safe"  # the level this token's risk reaches: safe, complies (strict) or unsafe (loose)
    request: float | None = None  # P(the request is harmful) of a gated head (GuardConfig.gate), else None
    band: str | None = None  # the strict band of that probability: harmful, uncertain or benign (GuardConfig.band)
    cut: bool = False  # the guard read a cut of the request (its first and last tokens, GuardConfig.max_prompt_tokens)

    def to_dict(self) -> dict:
        """Plain JSON of one event (``risk`` and ``request`` to 4 places, times to 3).

        >>> StreamEvent(0, "Hi", 5, 0.12345, False, 10.0, 0.5).to_dict()["risk"]
        0.1235
        """
        return {"index": self.index, "token": self.token, "token_id": self.token_id, "risk": round(float(self.risk), 4),
                "stopped": self.stopped, "lm_ms": round(float(self.lm_ms), 3), "head_ms": round(float(self.head_ms), 3),
                "shadow": self.shadow, "level": self.level,
                "request": None if self.request is None else round(float(self.request), 4),
                "band": self.band, "cut": self.cut}

    def to_dict(self) -> dict:
        """The event as plain JSON: every field, the risk and the request probability to 4 places, the
        times to 3.

        >>> StreamEvent(0, "Hi", 9, 0.123456, False, 2.0, 0.5).to_dict()["risk"]
        0.1235
        """
        return {"index": int(self.index), "token": self.token, "token_id": int(self.token_id),
                "risk": round(float(self.risk), 4), "stopped": bool(self.stopped), "lm_ms": round(float(self.lm_ms), 3),
                "head_ms": round(float(self.head_ms), 3), "shadow": bool(self.shadow), "level": self.level,
                "request": None if self.request is None else round(float(self.request), 4)}


@dataclass
class RiskTrace:
    """Per-token risks of a (prompt, reply) pair and where the stop policy would fire. ``head_ms``: the
    head's time per token (the reply is scored in one block call, so every entry is that call's share).
    ``policy``: the stop policy applied; ``stop_level``: the level of the token it stopped at (None
    without a stop); ``levels``: each token's level; ``request_risk``: P(the request is harmful) for a
    head with a request gate (``GuardConfig.strict_gate`` / ``loose_gate``), else None."""

    tokens: list[str]
    risks: list[float]
    stop_index: int | None
    threshold: float
    patience: int
    response_risk: float = 0.0
    head_ms: list[float] = field(default_factory=list)
    policy: str = "loose"
    stop_level: str | None = None
    levels: list[str] = field(default_factory=list)
    request_risk: float | None = None
    request_band: str | None = None
    request_cut: bool = False

    @property
    def stopped(self) -> bool:
        return self.stop_index is not None

    def to_dict(self) -> dict:
        """The trace as plain JSON (what the MCP tool returns): ``would_stop``, ``stop_token`` (1-based
        or None), ``stop_level``, ``policy``, ``tokens`` (count), ``max_risk``, ``response_risk``,
        ``threshold``, ``patience``, ``request_risk``, ``request`` (the judge's reading: probability, strict
        band, its words and whether it read a cut of the request, :class:`~engines.guardrail.judge.RequestReading`)
        and ``token_risks`` ([token, risk, level] per token), risks to 4 places.

        >>> RiskTrace(["Hi", "!"], [0.1, 0.95], 1, 0.9, 1, 0.5, policy="loose", stop_level="unsafe",
        ...           levels=["safe", "unsafe"]).to_dict()["stop_token"]
        2
        """
        return {"would_stop": self.stopped, "stop_token": None if self.stop_index is None else self.stop_index + 1,
                "stop_level": self.stop_level, "policy": self.policy, "tokens": len(self.risks),
                "max_risk": round(max(self.risks), 4) if self.risks else 0.0,
                "response_risk": round(float(self.response_risk), 4), "threshold": self.threshold,
                "request_risk": None if self.request_risk is None else round(float(self.request_risk), 4),
                "request": RequestReading(self.request_risk, self.request_band, self.request_cut).to_dict(),
                "patience": self.patience,
                "token_risks": [[t, round(float(r), 4), lv] for t, r, lv in zip(self.tokens, self.risks, self.levels)]}


def _check_text(name: str, value, limit: int) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, got {type(value).__name__}")
    if "\x00" in value:
        raise InputError(f"{name} contains a NUL byte; send plain text")
    if not value.strip():
        raise InputError(f"{name} is empty: type some text")
    if len(value) > limit:
        raise InputError(f"{name} is {len(value):,} characters long; the limit is {limit:,}")
    return value


def _whole(name: str, value, most: int) -> int:
    """A whole number from 1 to ``most`` (a float like 8.0 from a slider counts), else InputError."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InputError(f"{name}={value}: choose a whole number from 1 to {most}")
    return value


class Guardrail:
    """SmolLM2-135M-Instruct guarded by a trained SLD head (torch or ONNX Runtime backend).

    >>> g = Guardrail.load(backend="onnx")                               # doctest: +SKIP
    >>> [e.token for e in g.stream("Name a fruit.", max_new_tokens=3)]   # doctest: +SKIP
    ['Apple', ...]
    >>> g.score("How do I bake bread?", "Mix flour and water.").stop_index is None   # doctest: +SKIP
    True
    """

    def __init__(self, head, cfg: GuardConfig, backend: str, backbone, device: torch.device,
                 asset_dir: Path, policy: str = "strict") -> None:
        self.head, self.cfg, self.backend, self.bb, self.device = head, cfg, backend, backbone, device
        self.policy = _policy_name(policy, cfg)
        self.asset_dir = asset_dir
        self._step_sess = self._init_sess = self._block_sess = None
        # a merged ensemble steps without its off-block zeros (same outputs as head.step)
        self._torch_step = GroupedStepModule(head).eval() if cfg.members > 1 else head.step
        self._torch_block = BlockStepModule(head).eval() if backend == "torch" else None
        if backend == "onnx":
            from engines.common.onnx_runtime import ort_session

            self._step_sess = ort_session(asset_dir / STEP_ONNX, intra_threads=1)
            self._init_sess = ort_session(asset_dir / INIT_ONNX, intra_threads=1)
            self._block_sess = ort_session(asset_dir / BLOCK_ONNX, intra_threads=1)

    def __repr__(self) -> str:
        c = self.cfg
        thr, pat = c.policy(self.policy)
        return (f"Guardrail(backend={self.backend!r}, device={self.device}, layers={c.layers}, "
                f"policy={self.policy!r}, threshold={thr}, patience={pat})")

    @classmethod
    def load(cls, backend: str = "torch", device: str | torch.device | None = None,
             asset_dir: str | Path | None = None, backbone=None, policy: str = "strict") -> Guardrail:
        """Load the backbone (cached per process) and the trained head from ``assets/guardrail``.

        ``backend="onnx"`` runs the head through onnxruntime (CUDA provider when present).
        ``policy`` is the default stop policy of :meth:`stream` and :meth:`score`: ``"strict"``
        stops a reply that starts going along with a harmful request, ``"loose"`` only one that
        gives material harmful help (both read the same risk, at thresholds picked on dev).
        """
        if backend not in BACKENDS:
            raise InputError(f"backend must be one of {BACKENDS}, got {backend!r}")
        dev = torch.device(device) if device is not None else get_device()
        folder = Path(asset_dir) if asset_dir is not None else ASSET_DIR
        head = load_head(folder / "sld_head.pt", device=dev)
        _policy_name(policy, head.cfg)
        bb = backbone if backbone is not None else load_backbone(dev)
        return cls(head, head.cfg, backend, bb, dev, folder, policy)

    # --- head backends -------------------------------------------------------------------
    def _init(self, prompt_taps: torch.Tensor, prompt: ChatPrompt, text: str):
        """Taps at every prompt position (T, k * H) -> (initial state, the judge's reading, (strict, loose)
        risk factors: 1 where the request reaches the policy's gate, else 0)."""
        sentence = None
        if self.head.request is not None and self.cfg.request_inputs != "last":
            sentence = self._encoder().embed([text])[0]
        j = judge_inputs(prompt_taps, prompt, sentence, self.cfg).float()
        if self.backend == "onnx":
            outs = self._init_sess.run(None, {init_input_name(self.cfg): j.cpu().numpy()})
            state, request = outs[0], (float(outs[1][0]) if len(outs) > 1 else None)
        else:
            with torch.no_grad():
                state = self.head.init_state(j[:, : self.cfg.in_dim])
                request = float(self.head.request_prob(j)[0]) if self.head.request is not None else None
        factors = tuple(1.0 if request is None or request >= self.cfg.gate(name) else 0.0 for name in POLICIES)
        return state, RequestReading(request, self.cfg.band(request), prompt.cut), factors

    def _encoder(self):
        from engines.common.sentence_encoder import load_sentence_encoder

        return load_sentence_encoder()

    def _step(self, taps: torch.Tensor, state):
        """One head step -> (risks, response probs, new state); risks and response probs are
        (strict, loose) pairs (the same value twice for a one-output head)."""
        if self.backend == "onnx":
            risk, resp, st = self._step_sess.run(None, {"taps": taps.float().cpu().numpy(), "state": state})
        else:
            with torch.no_grad():
                risk, resp, st = self._torch_step(taps.float(), state)
        return risk_pair(risk[0]), risk_pair(resp[0]), st

    def _block(self, taps: torch.Tensor, state):
        """Consecutive tokens of one reply, taps (T, k * H), in one head call (:class:`BlockStepModule`)
        -> (T (strict, loose) risk pairs, response probs after the last token, state after the last token)."""
        if taps.shape[0] == 1:
            risk, resp, st = self._step(taps, state)
            return [risk], resp, st
        if self.backend == "onnx":
            risk, resp, st = self._block_sess.run(None, {"taps": taps.float().cpu().numpy(), "state": state})
        else:
            with torch.no_grad():
                risk, resp, st = self._torch_block(taps.float(), state)
        return [risk_pair(r) for r in risk], risk_pair(resp[-1]), st

    def _policy(self, threshold, patience, policy=None) -> tuple[float, int, str]:
        """(threshold, patience, policy name): the policy's dev-picked values unless given."""
        name = self.policy if policy is None else _policy_name(policy, self.cfg)
        thr0, pat0 = self.cfg.policy(name)
        thr = thr0 if threshold is None else float(threshold)
        pat = pat0 if patience is None else patience
        if not 0.0 < thr < 1.0:
            raise InputError(f"threshold={thr}: choose a value strictly between 0 and 1")
        return thr, _whole("patience", pat, 64), name

    def level_of(self, risk: float | tuple[float, float]) -> str:
        """The level a token reaches: ``unsafe`` when its loose risk reaches the loose threshold,
        ``complies`` when its strict risk reaches the strict one, else ``safe``. ``risk`` is a
        (strict, loose) pair, or one float for a head whose policies read one risk."""
        strict, loose = risk_pair(risk)
        if loose >= self.cfg.threshold:
            return "unsafe"
        if self.cfg.strict_threshold is not None and strict >= self.cfg.strict_threshold:
            return "complies"
        return "safe"

    def _chat(self, prompt: str) -> ChatPrompt:
        prompt = _check_text("prompt", prompt, self.cfg.max_prompt_chars)
        return chat_prompt(self.bb.tokenizer, prompt, self.cfg.max_prompt_tokens)

    # --- public API ----------------------------------------------------------------------
    @torch.inference_mode()
    def stream(self, prompt: str, max_new_tokens: int | None = None, threshold: float | None = None,
               patience: int | None = None, shadow: bool = False, block: int = 1,
               policy: str | None = None) -> Iterator[StreamEvent]:
        """Generate greedily and yield one :class:`StreamEvent` per token, stopping the moment
        ``patience`` consecutive tokens have risk >= ``threshold`` (by default those of ``policy``,
        else of the policy the guard was loaded with).

        With ``shadow=True`` generation goes on after a stop (up to ``max_new_tokens``) and yields
        shadow events carrying only risk and timing, never the text: what an unguarded run would
        have done. Greedy decoding makes a stream reproducible.

        ``block=k`` scores the reply k tokens per head call (:class:`BlockStepModule`) instead of one:
        the same risks and the same stop token, at a fraction of the head's cost per token, since most
        of a call's cost right after a decode step is the call itself (``benchmarks/RESULTS.md``). The
        price is lag: a token is yielded only once its block (tokens ``[0, k)``, ``[k, 2k)``, ..., the
        last one cut short by the reply's end) is scored, so events arrive in bursts of k, and after a
        stop the LM has decoded up to k - 1 tokens that are never yielded (unless as shadow events).

        >>> g = Guardrail.load()                                             # doctest: +SKIP
        >>> ev = list(g.stream("Say hi.", max_new_tokens=4)); len(ev) <= 4   # doctest: +SKIP
        True
        """
        thr, pat, name = self._policy(threshold, patience, policy)
        col = POLICY_COLUMNS.index(name)
        n_new = _whole("max_new_tokens", self.cfg.max_new_tokens if max_new_tokens is None else max_new_tokens, 512)
        block = _whole("block", block, MAX_BLOCK)
        chat = self._chat(prompt)
        ids = torch.tensor([chat.ids], device=self.device)
        tok, model = self.bb.tokenizer, self.bb.model
        eos = {tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")}
        layers = self.cfg.layers
        out = model(input_ids=ids, use_cache=True, output_hidden_states=True)
        cache = out.cache
        state, reading, factors = self._init(tap(out.hidden_states, layers)[0], chat, prompt)
        request, band = reading.probability, reading.band
        nxt = int(out.logits[0, -1].argmax())
        dec = IncrementalDecoder(tok.decode)
        run, stopped_at = 0, None
        pending: list[tuple[int, int, torch.Tensor, float, bool]] = []  # (index, id, taps, lm ms, last of reply)
        for i in range(n_new):
            if nxt in eos:
                break
            t0 = time.perf_counter()
            out = model(input_ids=torch.tensor([[nxt]], device=self.device), cache=cache,
                        use_cache=True, output_hidden_states=True)
            cache = out.cache
            taps = tap(out.hidden_states, layers)[:, -1]
            if self.device.type == "cuda":
                torch.cuda.synchronize()
            t1 = time.perf_counter()
            following = int(out.logits[0, -1].argmax())
            last = i == n_new - 1 or following in eos  # nothing more will complete this token's text
            pending.append((i, nxt, taps, (t1 - t0) * 1e3, last))
            nxt = following
            if len(pending) < block and not last:
                continue
            t2 = time.perf_counter()
            block_taps = pending[0][2] if len(pending) == 1 else torch.cat([p[2] for p in pending])
            risks, _, state = self._block(block_taps, state)
            head_ms = (time.perf_counter() - t2) * 1e3 / len(pending)
            for (j, tid, _, lm_ms, end), raw in zip(pending, risks):
                both = policy_risks(raw, factors)
                risk = both[col]
                if stopped_at is not None:
                    yield StreamEvent(j, "", -1, risk, True, lm_ms, head_ms, shadow=True, level=self.level_of(both),
                                      request=request, band=band, cut=chat.cut)
                    continue
                text = dec.push(tid) + (dec.flush() if end else "")
                run = run + 1 if risk >= thr else 0
                fired = run >= pat
                yield StreamEvent(j, text, tid, risk, fired, lm_ms, head_ms, level=self.level_of(both), request=request,
                                  band=band, cut=chat.cut)
                if fired:
                    stopped_at = j
                    if not shadow:
                        return
            pending = []

    @torch.inference_mode()
    def score(self, prompt: str, response: str, threshold: float | None = None,
              patience: int | None = None, policy: str | None = None) -> RiskTrace:
        """Teacher-force ``response`` after ``prompt`` and return per-token risks, levels and the
        stop index under ``policy`` (default: the policy the guard was loaded with).

        >>> g = Guardrail.load()                                         # doctest: +SKIP
        >>> tr = g.score("Tell me a joke.", "Why did the chicken cross the road?")   # doctest: +SKIP
        >>> len(tr.tokens) == len(tr.risks)                              # doctest: +SKIP
        True
        """
        thr, pat, name = self._policy(threshold, patience, policy)
        response = _check_text("response", response, self.cfg.max_response_chars)
        chat = self._chat(prompt)
        p_ids = chat.ids
        tok = self.bb.tokenizer
        r_ids = tok(response, add_special_tokens=False)["input_ids"]
        if len(r_ids) > self.cfg.max_response_tokens:  # the cost is per token: CJK or emoji run 3-4 tokens a character
            raise InputError(f"response is {len(r_ids):,} tokens long; the limit is {self.cfg.max_response_tokens:,} "
                             f"tokens (about {4 * self.cfg.max_response_tokens:,} characters of English); score a shorter reply")
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        per, _, prompt_all = teacher_forced(self.bb.model, [p_ids], [r_ids], self.cfg.layers, pad, prompt_all=True)
        state, reading, factors = self._init(prompt_all[0].to(self.device), chat, prompt)
        t0 = time.perf_counter()
        pairs, resp, _ = self._block(per[0].to(self.device), state)  # the whole reply in one head call
        pairs = [policy_risks(p, factors) for p in pairs]
        times = [(time.perf_counter() - t0) * 1e3 / len(pairs)] * len(pairs)
        col = POLICY_COLUMNS.index(name)
        risks = [p[col] for p in pairs]
        tokens = token_pieces(tok.decode, r_ids)
        stop = stop_index(risks, thr, pat)
        levels = [self.level_of(p) for p in pairs]
        return RiskTrace(tokens, risks, stop, thr, pat, policy_risks(risk_pair(resp), factors)[col], times, name,
                         None if stop is None else levels[stop], levels, reading.probability, reading.band, reading.cut)




def _policy_name(policy, cfg: GuardConfig) -> str:
    """A valid policy name for this head, else InputError naming the choices."""
    if policy not in POLICIES:
        raise InputError(f"policy must be one of {POLICIES}, got {policy!r}")
    try:
        cfg.policy(policy)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return policy


_SHARED: dict[tuple[str, str], Guardrail] = {}


def shared_guardrail(backend: str = "torch", device: str | None = None) -> Guardrail:
    """One :class:`Guardrail` per (backend, device) per process (the backbone is shared too).

    >>> shared_guardrail("onnx") is shared_guardrail("onnx")   # doctest: +SKIP
    True
    """
    if backend not in BACKENDS:
        raise InputError(f"backend must be one of {BACKENDS}, got {backend!r}")
    key = (backend, str(device))
    if key not in _SHARED:  # the strict policy when the head has one (calls may pick either)
        pol = "strict" if head_info().get("policies", {}).get("strict") else "loose"
        _SHARED[key] = Guardrail.load(backend=backend, device=device, policy=pol)
    return _SHARED[key]


def head_info(asset_dir: str | Path | None = None) -> dict:
    """What the shipped head is, read from its file without building it: dev-picked ``threshold``
    and ``patience``, tapped ``layers``, ensemble ``members``, ``projection_bits`` (None for float), ``params``
    (a merged ensemble stored as its members: theirs, without the off-block zeros of the folded form) and the
    request probability each policy needs (``gates``, 0 = none), the lower edge of strict's uncertain band
    (``band``) and what the request judge reads (``request_inputs``). Falls back to :class:`GuardConfig` defaults (``params`` 0) without one.

    >>> info = head_info(); 0 < info["threshold"] < 1 and info["members"] >= 1   # doctest: +SKIP
    True
    """
    folder = Path(asset_dir) if asset_dir is not None else ASSET_DIR
    path = folder / "sld_head.pt"
    if not path.is_file():
        c = GuardConfig()
        return {"threshold": c.threshold, "patience": c.patience, "layers": list(c.layers), "members": 1, "params": 0,
                "projection_bits": None, "outputs": 1, "gates": {"strict": 0.0, "loose": 0.0}, "band": 0.0,
                "request_inputs": c.request_inputs, "policies": _policies(c)}
    blob = torch.load(str(path), map_location="cpu", weights_only=True)
    cfg = GuardConfig.from_dict(blob["config"])
    return {"threshold": float(cfg.threshold), "patience": int(cfg.patience), "layers": list(cfg.layers),
            "members": int(cfg.members), "projection_bits": cfg.proj_bits, "outputs": int(cfg.outputs),
            "params": _params(blob), "gates": {"strict": cfg.gate("strict"), "loose": cfg.gate("loose")},
            "band": float(cfg.strict_band), "request_inputs": cfg.request_inputs, "policies": _policies(cfg)}


def _params(blob: dict) -> int:
    """Weights of a saved head: its state, or its members' and its request gate's (a folded head
    stored as members, :func:`~engines.guardrail.export.save_head`)."""
    if "members" not in blob:
        return int(sum(t.numel() for t in blob["state_dict"].values()))
    return int(sum(t.numel() for sd in blob["members"] for t in sd.values())
               + sum(t.numel() for t in blob.get("request", {}).values()))


def _policies(cfg: GuardConfig) -> dict[str, tuple[float, int]]:
    out = {"loose": cfg.policy("loose")}
    if cfg.strict_threshold is not None:
        out = {"strict": cfg.policy("strict")} | out
    return out


def default_policy(asset_dir: str | Path | None = None, policy: str = "loose") -> tuple[float, int]:
    """The (threshold, patience) of ``policy`` the shipped head was tuned to on dev (read from its config).

    >>> thr, pat = default_policy(); 0 < thr < 1 and pat >= 1        # doctest: +SKIP
    True
    """
    info = head_info(asset_dir)
    if policy not in info["policies"]:
        raise InputError(f"policy must be one of {tuple(info['policies'])} for this head, got {policy!r}")
    return info["policies"][policy]
