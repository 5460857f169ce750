"""Configuration of the code-security process reward model (one dataclass, lerobot style)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class PRMConfig:
    """Everything that shapes how code is split, tokenised, scored and aggregated.

    Args:
        max_step_lines: longest step, in lines; a blank-line block longer than this is cut at a
            statement boundary (the paper uses blank-line blocks; very long blocks blur the step
            signal).
        max_step_tokens: tokens of a step that the attention pooling looks at (the first ones).
        vocab_size: hashed token vocabulary (identifiers, operators, words inside strings).
        embed_dim: token embedding / convolution width.
        hidden_dim: width of the prefix-mean memory and of the mixed token features.
        conv_kernel: kernel of the three causal dilated convolutions.
        user_input: the model reads a fourth input, each token's user-input mark
            (``user_input.py``: which names hold user input, found by a pass over the tokens that
            also reads half-written code), as an embedding added to the token's.
        aggregation: "softmin" (the paper's soft minimum of step security scores,
            ``aggregation.softmin_safety``) or "topk" (mean of the k riskiest steps).
        tau: temperature of the soft minimum (the paper's T = 0.1); smaller is closer to the
            hard minimum.
        top_k: k of the top-k mean, and of the top-k safe ratio that ranks candidates.
        fuse_analysers: fuse the model's step risks with the analysers (bandit + CodeShield) as
            ``fusion.py`` describes; False = the model alone.
        model_weight: weight w of the model's risk in the order of steps, in code that parses
            (0 = the analysers alone decide; chosen on dev by ``scripts/codeprm_train.py``, read
            from ``assets/codeprm/calibration.json``).
        prefix_model_weight: the same weight in code that does not parse (an unfinished prefix,
            where the analysers only see a repaired guess), chosen on dev separately.
        model_flag_threshold: model risk at or above which the model alone flags a step holding
            a sink, in code that parses (only for the families in ``model_flag_cwes``).
        model_flag_cwes: CWE families in which the model's own flags, in code that parses, were
            at least as precise as the analysers' on dev; empty = the model only orders steps
            there.
        prefix_flag_threshold: the model's flag threshold in code that does not parse.
        wide_sinks: the sinks a model flag may name (``cwe.sinks_in``) include calls of the
            code's own functions that hold a sink, and in the line being written every call a
            name cut short can still become (``cwe.WRITING``); off, the families' own calls and
            dotted names cut short only. Part of the dev choices: a model's flag thresholds hold
            only with the sink set they were chosen with (the shipped model's: off).
        prefix_flag_cwes: CWE families in which the model may flag code that does not parse (a
            prefix being written), those where its flags added recall on dev within the
            false-alarm budget; None = every family with sinks (empty = none: the analysers only).
        solo_threshold: the model's flag threshold when it runs alone (``fuse_analysers=False``).
        max_lines: longest input accepted by ``scan`` (a clear error beyond it, never a hang).
        max_chars: longest input accepted by ``scan``, in characters.
        max_line_chars: longest single line accepted (minified or generated code is refused
            with a message rather than tokenised at length).
    """

    # --- steps and tokens ---
    max_step_lines: int = 8
    max_step_tokens: int = 96
    vocab_size: int = 16384
    # --- model ---
    embed_dim: int = 48
    hidden_dim: int = 96
    conv_kernel: int = 3
    user_input: bool = False
    # --- verdict ---
    aggregation: str = "softmin"
    tau: float = 0.1
    top_k: int = 3
    fuse_analysers: bool = True
    model_weight: float = 1.0
    prefix_model_weight: float = 1.0
    model_flag_threshold: float = 1.0
    model_flag_cwes: tuple[int, ...] = ()
    prefix_flag_threshold: float = 1.0
    prefix_flag_cwes: tuple[int, ...] | None = None
    wide_sinks: bool = False
    solo_threshold: float = 1.0
    # --- limits ---
    max_lines: int = 20000
    max_chars: int = 1_000_000
    max_line_chars: int = 10_000

    def __post_init__(self) -> None:
        if self.max_step_lines < 1:
            raise ValueError(f"max_step_lines must be >= 1, got {self.max_step_lines}")
        if self.max_step_tokens < 4:
            raise ValueError(f"max_step_tokens must be >= 4, got {self.max_step_tokens}")
        if self.vocab_size < 256:
            raise ValueError(f"vocab_size must be >= 256, got {self.vocab_size}")
        if self.embed_dim < 8 or self.hidden_dim < 8:
            raise ValueError("embed_dim and hidden_dim must be >= 8")
        if self.conv_kernel < 1:
            raise ValueError(f"conv_kernel must be >= 1, got {self.conv_kernel}")
        if self.aggregation not in ("softmin", "topk"):
            raise ValueError(f"aggregation must be 'softmin' or 'topk', got {self.aggregation!r}")
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {self.tau}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        self.model_flag_cwes = tuple(int(c) for c in self.model_flag_cwes)
        if self.prefix_flag_cwes is not None:
            self.prefix_flag_cwes = tuple(int(c) for c in self.prefix_flag_cwes)
        for name in ("model_weight", "prefix_model_weight", "model_flag_threshold", "prefix_flag_threshold",
                     "solo_threshold"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {v}")
        if self.max_lines < 1 or self.max_chars < 1 or self.max_line_chars < 1:
            raise ValueError("max_lines, max_chars and max_line_chars must be >= 1")

    def to_dict(self) -> dict:
        """The fields as a plain dict (saved beside the weights)."""
        return asdict(self)
