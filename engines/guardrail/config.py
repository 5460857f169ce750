"""Configuration of the streaming guardrail (one dataclass, lerobot style)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

POLICY_COLUMNS = ("strict", "loose")
"""Column order of a two-output head's risks (``GuardConfig.outputs == 2``)."""
REQUEST_INPUTS = ("last", "last+mean+sentence")
"""What a request judge can read (``GuardConfig.request_inputs``)."""


@dataclass
class GuardConfig:
    """Everything the SLD head and the stop policy need.

    Args:
        layers: decoder layers whose outputs the head reads (``hidden_states`` indices of the
            backbone; SmolLM2-135M has 30 layers, so 1..30).
        hidden_size: width of one layer's hidden state (576 for SmolLM2-135M).
        proj_dim: width of the projection of the concatenated taps (the head's per-token input).
        state_dim: width of the recurrent risk memory (GRU state).
        prompt_init: initialise the memory from the taps at the last prompt token.
        dropout: dropout on the projection while training.
        threshold: loose policy: risk at or above which a token counts as giving material harmful
            help, in (0, 1).
        patience: loose policy: consecutive such tokens before the stream is stopped (>= 1).
        strict_threshold: strict policy: risk at or above which a token counts as going along with
            a harmful request (below ``threshold``); None for a head trained without levels.
        strict_patience: strict policy's patience; None with ``strict_threshold``.
        max_new_tokens: default number of tokens to generate when streaming.
        max_prompt_chars: longest prompt accepted, in characters.
        max_prompt_tokens: the user text is cut to this many tokens before the chat template.
        max_response_chars: longest reply :meth:`Guardrail.score` accepts, in characters (a cheap bound
            on the tokenizer's work).
        max_response_tokens: longest reply :meth:`Guardrail.score` accepts, in SmolLM2 tokens: the bound on
            its time and memory (a character of CJK Extension B is about 4 tokens, of English about 0.25).
        members: heads folded into this one by :func:`engines.guardrail.head.merge_heads` (their
            widths stacked as block-diagonal groups; the risk logit is their mean); 1 for a plain head.
        proj_bits: bits per projection weight once block-quantised
            (:meth:`SLDHead.quantize_projection`); None for float weights.
        outputs: risk read-outs: 1 = one risk that both policies threshold; 2 = a strict and a loose
            risk (columns in :data:`POLICY_COLUMNS` order), each the mean of its own members.
        strict_gate: strict policy: the P(the request is harmful) a request needs, read once from the
            taps at the last prompt token by the request gate (:meth:`SLDHead.request_prob`), before
            any token of its reply can count; 0 = no gate. With a gate the strict risk is the
            decomposition P(harmful request) x P(the reply goes along): a benign request that merely
            sounds risky is let through however willingly it is answered, and a harmful one is
            stopped where its reply starts going along, not at the request.
        loose_gate: the same for the loose policy (0 = no gate).
        strict_band: the lower edge of the request judge's uncertain band (0 = none): a request read
            in ``[strict_band, strict_gate)`` is flagged "may be risky" but strict does not stop it
            (the loose stop stays active); below ``strict_band`` it reads as benign.
        request_inputs: what the request judge reads: ``"last"`` (the taps at the last prompt token)
            or ``"last+mean+sentence"`` (those, their mean over the user-text tokens, and the request's
            sentence embedding, :mod:`engines.common.sentence_encoder`).
        sentence_dim: width of the sentence embedding the judge reads (384 for MiniLM-L6).

    >>> GuardConfig(members=3, proj_bits=4).members
    3
    """

    # --- backbone taps ---
    layers: tuple[int, ...] = (15, 21, 30)
    hidden_size: int = 576
    # --- head ---
    proj_dim: int = 256
    state_dim: int = 256
    prompt_init: bool = True
    dropout: float = 0.1
    # --- stop policy (defaults picked on the dev split by scripts/guardrail_train.py) ---
    threshold: float = 0.5
    patience: int = 2
    strict_threshold: float | None = None
    strict_patience: int | None = None
    # --- limits ---
    max_new_tokens: int = 64
    max_prompt_chars: int = 32000
    max_prompt_tokens: int = 256
    max_response_chars: int = 8000
    max_response_tokens: int = 2048
    # --- folded ensemble and weight format ---
    members: int = 1
    proj_bits: int | None = None
    outputs: int = 1
    strict_gate: float = 0.0
    loose_gate: float = 0.0
    strict_band: float = 0.0
    request_inputs: str = "last"
    sentence_dim: int = 384

    def __post_init__(self) -> None:
        self.layers = tuple(int(x) for x in self.layers)
        if not self.layers or any(x < 1 for x in self.layers):
            raise ValueError(f"layers={self.layers}: give one or more decoder layer indices >= 1")
        for name in ("hidden_size", "proj_dim", "state_dim", "max_new_tokens", "max_prompt_chars",
                     "max_prompt_tokens", "max_response_chars", "max_response_tokens"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: must be a positive integer")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout}: must be in [0, 1)")
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"threshold={self.threshold}: must be strictly between 0 and 1")
        if int(self.patience) < 1:
            raise ValueError(f"patience={self.patience}: must be at least 1 token")
        if (self.strict_threshold is None) != (self.strict_patience is None):
            raise ValueError("strict_threshold and strict_patience come together (both None without a strict policy)")
        if self.strict_threshold is not None:
            if not 0.0 < self.strict_threshold < 1.0:
                raise ValueError(f"strict_threshold={self.strict_threshold}: must be strictly between 0 and 1")
            if int(self.strict_patience) < 1:
                raise ValueError(f"strict_patience={self.strict_patience}: must be at least 1 token")
        if int(self.members) < 1:
            raise ValueError(f"members={self.members}: a head folds at least 1 member")
        if int(self.outputs) not in (1, 2):
            raise ValueError(f"outputs={self.outputs}: use 1 (one risk for both policies) or 2 (strict, loose)")
        for name in ("strict_gate", "loose_gate"):
            if not 0.0 <= float(getattr(self, name)) < 1.0:
                raise ValueError(f"{name}={getattr(self, name)}: must be in [0, 1) (0 = no request gate)")
        if not 0.0 <= float(self.strict_band) <= max(float(self.strict_gate), 0.0):
            raise ValueError(f"strict_band={self.strict_band}: must be in [0, strict_gate={self.strict_gate}]")
        if self.request_inputs not in REQUEST_INPUTS:
            raise ValueError(f"request_inputs={self.request_inputs!r}: use one of {REQUEST_INPUTS}")
        if int(self.sentence_dim) < 1:
            raise ValueError(f"sentence_dim={self.sentence_dim}: must be a positive integer")
        if int(self.outputs) == 1 and self.strict_gate != self.loose_gate:
            raise ValueError("a one-output head's policies read one risk: give strict_gate == loose_gate")
        if self.proj_bits is not None and not 2 <= int(self.proj_bits) <= 8:
            raise ValueError(f"proj_bits={self.proj_bits}: use None (float) or 2..8 bits")

    @classmethod
    def from_dict(cls, d: dict) -> GuardConfig:
        """Read :meth:`to_dict`'s form; a saved head's ``extra`` entry (``members``, ``proj_bits``)
        is read into the typed fields. Unknown keys raise ValueError naming them."""
        d = dict(d)
        legacy = d.pop("extra", None) or {}
        unknown = (set(d) | set(legacy)) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown GuardConfig fields {sorted(unknown)}; remove them")
        return cls(**{**d, **legacy})

    @property
    def in_dim(self) -> int:
        """Width of the concatenated taps the head reads per token."""
        return len(self.layers) * self.hidden_size

    @property
    def judge_dim(self) -> int:
        """Width of the request judge's input: the last-token taps, plus their user-token mean and the
        sentence embedding when ``request_inputs`` says so.

        >>> GuardConfig().judge_dim, GuardConfig(request_inputs="last+mean+sentence").judge_dim
        (1728, 3840)
        """
        if self.request_inputs == "last":
            return self.in_dim
        return 2 * self.in_dim + int(self.sentence_dim)

    def band(self, request: float | None) -> str | None:
        """How the strict policy reads a request probability: ``"harmful"`` (at or above ``strict_gate``:
        strict stops a reply that goes along), ``"uncertain"`` (in the band below it: "may be risky",
        strict does not stop, loose does), ``"benign"``; None without a request judge.

        >>> c = GuardConfig(outputs=2, strict_gate=0.9, strict_band=0.5)
        >>> c.band(0.95), c.band(0.6), c.band(0.1), GuardConfig().band(None)
        ('harmful', 'uncertain', 'benign', None)
        """
        if request is None or self.strict_gate <= 0:
            return None
        if request >= self.strict_gate:
            return "harmful"
        return "uncertain" if self.strict_band > 0 and request >= self.strict_band else "benign"

    def column(self, name: str) -> int:
        """The risk column a policy reads: 0 for a one-output head, else its place in :data:`POLICY_COLUMNS`.

        >>> GuardConfig(outputs=2).column("loose"), GuardConfig().column("loose")
        (1, 0)
        """
        return POLICY_COLUMNS.index(name) if int(self.outputs) == 2 else 0

    def policy(self, name: str) -> tuple[float, int]:
        """(threshold, patience) of the ``"strict"`` or ``"loose"`` stop policy.

        >>> GuardConfig(threshold=0.9, patience=2, strict_threshold=0.1, strict_patience=1).policy("strict")
        (0.1, 1)
        """
        if name == "loose":
            return float(self.threshold), int(self.patience)
        if name == "strict":
            if self.strict_threshold is None:
                raise ValueError("this head was trained without a strict policy; use policy='loose'")
            return float(self.strict_threshold), int(self.strict_patience)
        raise ValueError(f"policy must be 'strict' or 'loose', got {name!r}")

    @property
    def gated(self) -> bool:
        """Whether a policy reads the request gate (the head then carries one)."""
        return self.strict_gate > 0 or self.loose_gate > 0

    def gate(self, name: str) -> float:
        """The request probability policy ``name`` needs (0 = none).

        >>> GuardConfig(outputs=2, strict_gate=0.9).gate("strict")
        0.9
        """
        return float(self.strict_gate if name == "strict" else self.loose_gate)

    def to_dict(self) -> dict:
        """Plain-JSON form (tuples become lists)."""
        d = asdict(self)
        d["layers"] = list(self.layers)
        return d
