"""The Streaming Latent Dynamics (SLD) head and the Anchored Temporal Consistency (ATC) loss.

PlugGuard / Kelp (arXiv 2510.09694), Sec. 3.2-3.3, rebuilt for a 135M backbone:

* per-token input ``x_t``: LayerNorm of each tapped layer's hidden state, concatenated and
  projected, ``u_t = GELU(W_p [LN(h_t^{l_1}); ...; LN(h_t^{l_k})])``;
* memory: a discrete-time GRU update ``s_t = GRU(u_t, s_{t-1})``, with ``s_0 = tanh(W_0 u_prompt)``
  from the last prompt token (the prompt-initialised latent state);
* outputs: token risk ``r_t = sigmoid(w_r [s_t; u_t] + b_r)`` and a response-level logit
  ``q_t = w_q s_t + b_q`` (the eventual verdict on the whole reply, readable at any step);
* training objective: :mod:`engines.guardrail.losses` (token and response BCE plus ATC, on one or
  two levels of the risk).

The exported layouts of the per-token step, the block step and the initialiser live in
:mod:`engines.guardrail.export`.

One step costs O(1) in the length of the reply: the head never re-reads the prefix.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch
from torch import nn
from torch.nn import functional as F

from engines.guardrail.config import POLICY_COLUMNS, GuardConfig
from engines.guardrail.quant import BITS, snap_to_grid

ORDINAL_CUT = 2.0
"""Cut points of the ordinal read-out: one risk logit z serves both policies, with
P(level >= complies) = sigmoid(z + ORDINAL_CUT) and P(level = unsafe) = sigmoid(z - ORDINAL_CUT)
(a cumulative-link model with fixed cuts, so seed members merge by averaging z)."""


def gru_update(gi: torch.Tensor, gh: torch.Tensor, s: torch.Tensor, width: int) -> torch.Tensor:
    """GRU gates from the input and state pre-activations ``gi``, ``gh`` (r, z, n chunks of ``width``
    on the last axis, PyTorch's order) and the state ``s``: ``s' = (1 - z) ⊙ n + z ⊙ s``. The width is
    a plain int so the ONNX export splits the gates with one static ``Split``, not shape arithmetic."""
    i_r, i_z, i_n = gi.split(width, dim=-1)
    h_r, h_z, h_n = gh.split(width, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * s


class SLDHead(nn.Module):
    """Streaming Latent Dynamics head (Eq. 2-4 of Kelp, GRU form). See the module docstring.

    >>> head = SLDHead(GuardConfig(layers=(1, 2), hidden_size=8, proj_dim=4, state_dim=3))
    >>> s = head.init_state(torch.zeros(2, 16))
    >>> risk, resp, s = head.step(torch.zeros(2, 16), s)
    >>> tuple(risk.shape), tuple(s.shape)
    ((2,), (2, 3))
    """

    def __init__(self, cfg: GuardConfig) -> None:
        super().__init__()
        self.cfg = cfg
        k, h = len(cfg.layers), cfg.hidden_size
        self.norms = nn.ModuleList([nn.LayerNorm(h) for _ in range(k)])
        self.proj = nn.Linear(k * h, cfg.proj_dim)
        self.drop = nn.Dropout(cfg.dropout)
        self.init = nn.Linear(cfg.proj_dim, cfg.state_dim)
        self.gru = nn.GRU(cfg.proj_dim, cfg.state_dim, batch_first=True)
        self.risk = nn.Linear(cfg.state_dim + cfg.proj_dim, int(cfg.outputs))
        self.resp = nn.Linear(cfg.state_dim, int(cfg.outputs))
        self.request = nn.Linear(cfg.judge_dim, 1) if cfg.gated else None

    @property
    def projection_bits(self) -> int | None:
        """Bits per projection weight when block-quantised (:meth:`quantize_projection`), else None."""
        return int(self.cfg.proj_bits) if self.cfg.proj_bits else None

    @torch.no_grad()
    def quantize_projection(self, bits: int = BITS) -> SLDHead:
        """Move the projection weights (two thirds of the bytes a merged step reads) to their
        ``bits``-bit block grid (:mod:`engines.guardrail.quant`), the form the ONNX export stores as
        ``MatMulNBits`` codes. The torch maths is unchanged (a float matmul, now with grid weights).
        The GRU stays float: its 4-bit ``MatMulNBits`` (K = 384, folded with its zero blocks) was slower
        than the float grouped matmul. Returns ``self``."""
        self.proj.weight.copy_(snap_to_grid(self.proj.weight, bits))
        self.cfg = replace(self.cfg, proj_bits=int(bits))  # never a shared config
        return self

    def __repr__(self) -> str:
        n = sum(p.numel() for p in self.parameters())
        c = self.cfg
        return (f"SLDHead(layers={c.layers}, proj_dim={c.proj_dim}, state_dim={c.state_dim}, "
                f"prompt_init={c.prompt_init}, projection_bits={self.projection_bits}, params={n:,})")

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Per-token input u = GELU(W_p [LN(h^l1); ...]) for taps x of shape (..., k * H)."""
        parts = x.split(self.cfg.hidden_size, dim=-1)
        return self.project(torch.cat([n(p) for n, p in zip(self.norms, parts)], dim=-1))

    def project(self, z: torch.Tensor) -> torch.Tensor:
        """u = GELU(W_p z) for normalised taps z of shape (..., k * H)."""
        return self.drop(F.gelu(self.proj(z)))

    def init_state(self, prompt_taps: torch.Tensor) -> torch.Tensor:
        """s_0 from the taps at the last prompt token (B, k * H) -> (B, state_dim)."""
        if not self.cfg.prompt_init:
            return prompt_taps.new_zeros(prompt_taps.shape[0], self.cfg.state_dim)
        return torch.tanh(self.init(self.embed(prompt_taps)))

    def request_prob(self, judge_inputs: torch.Tensor) -> torch.Tensor:
        """P(the request is harmful) from the request judge's raw inputs (B, ``cfg.judge_dim``: the taps at
        the last prompt token, with their user-token mean and the sentence embedding for a
        ``"last+mean+sentence"`` judge) -> (B,): a logistic read-out (standardisation folded in); ones
        for a head without a request gate."""
        if self.request is None:
            return judge_inputs.new_ones(judge_inputs.shape[0])
        return torch.sigmoid(self.request(judge_inputs).squeeze(-1))

    def gate_factors(self, request: torch.Tensor) -> torch.Tensor:
        """What each risk column is multiplied by, (B,) -> (B, outputs): 1 where the request reaches
        the policy's gate (``cfg.strict_gate`` / ``cfg.loose_gate``; always for a policy without one),
        else 0 (no token of the reply can count towards a stop)."""
        names = POLICY_COLUMNS if int(self.cfg.outputs) == 2 else ("loose",)
        return torch.stack([(request >= self.cfg.gate(n)).to(request.dtype) for n in names], dim=-1)

    @torch.no_grad()
    def set_gate(self, weight: torch.Tensor, bias: float, strict: float, loose: float, band: float = 0.0,
                 request_inputs: str | None = None) -> SLDHead:
        """Install the request judge ``sigmoid(weight . j + bias)`` on its raw inputs ``j``
        (:attr:`GuardConfig.judge_dim` wide, by ``request_inputs``), with the request probability each
        policy needs (``GuardConfig.strict_gate`` / ``loose_gate``) and strict's uncertain band below
        its gate (``GuardConfig.strict_band``). Returns ``self``."""
        self.cfg = replace(self.cfg, strict_gate=float(strict), loose_gate=float(loose), strict_band=float(band),
                           request_inputs=request_inputs or self.cfg.request_inputs)  # never a shared config
        self.request = nn.Linear(self.cfg.judge_dim, 1).to(self.proj.weight)
        self.request.weight.copy_(torch.as_tensor(weight, dtype=torch.float32).reshape(1, -1))
        self.request.bias.fill_(float(bias))
        return self

    def gru_cell(self, u: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """One GRU update written out (gates r, z, n in PyTorch's order), so the step exports to
        plain MatMul/Sigmoid/Tanh ONNX ops and matches ``nn.GRU`` exactly:
        ``r = σ(W_ir u + b_ir + W_hr s + b_hr)``, ``z = σ(W_iz u + b_iz + W_hz s + b_hz)``,
        ``n = tanh(W_in u + b_in + r ⊙ (W_hn s + b_hn))``, ``s' = (1 - z) ⊙ n + z ⊙ s``."""
        gi = F.linear(u, self.gru.weight_ih_l0, self.gru.bias_ih_l0)
        gh = F.linear(s, self.gru.weight_hh_l0, self.gru.bias_hh_l0)
        return gru_update(gi, gh, s, width=self.cfg.state_dim)

    def step(self, x: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One token: taps (B, k * H), state (B, S) -> (risk (B,), response prob (B,), new state)."""
        u = self.embed(x)
        s_new = self.gru_cell(u, s)
        risk, resp = self.readout(s_new, u)
        return torch.sigmoid(risk), torch.sigmoid(resp), s_new

    def forward(self, x: torch.Tensor, prompt_taps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Whole replies at once (training): x (B, T, k * H) -> (risk logits (B, T), resp logits (B, T)).

        Same maths as calling :meth:`step` T times (padding at the end never reaches a real token).
        """
        u = self.embed(x)
        return self.readout(self.memory(u, self.init_state(prompt_taps)), u)

    def readout(self, states: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Risk and response logits from memory states and per-token inputs (Eq. 4 of Kelp):
        ``z_t = w_r [s_t; u_t] + b_r``, ``q_t = w_q s_t + b_q``; shapes (..., S), (..., P) -> (...), (...).
        The one read-out every path uses (training, the step, the block and their ONNX graphs). A
        two-output head (``cfg.outputs == 2``) returns (..., 2): the strict and the loose risk."""
        z, q = self.risk(torch.cat([states, u], dim=-1)), self.resp(states)
        return (z.squeeze(-1), q.squeeze(-1)) if self.risk.out_features == 1 else (z, q)

    def memory(self, u: torch.Tensor, s0: torch.Tensor) -> torch.Tensor:
        """The memory over whole replies: inputs u (B, T, P) from state s0 (B, S) -> the states the
        read-outs see, (B, T, S). The one place a different memory cell plugs in (dev-only sweep)."""
        return self.gru(u, s0.unsqueeze(0).contiguous())[0]


@torch.no_grad()
def merge_heads(heads: list[SLDHead], outputs: Sequence[int] | None = None) -> SLDHead:
    """Fold K trained heads (same layers and widths) into one SLD head whose risk and response
    logits are the mean of the members' logits: a seed ensemble that is still one plain head.
    With ``outputs`` (member counts per read-out, e.g. ``(3, 3)``: the first three heads form the
    strict risk, the last three the loose one) the head gets one risk and response column per group,
    each the mean of its own members (``cfg.outputs = len(outputs)``).

    Exact because every member's maths is block-separable: each member's LayerNorm affine is
    folded into its block of the (shared-input) projection, the init and GRU weights become
    block-diagonal per gate (PyTorch's r, z, n layout keeps gates in K-wide chunks), and the
    risk/response layers average the members' linear read-outs. Widths become ``K * proj_dim``
    and ``K * state_dim`` (the off-block zeros count as parameters); the step stays O(1).

    >>> cfg = GuardConfig(layers=(1,), hidden_size=8, proj_dim=4, state_dim=3)
    >>> hs = [SLDHead(cfg).eval() for _ in range(3)]
    >>> x, p = torch.randn(1, 5, 8), torch.randn(1, 8)
    >>> m = merge_heads(hs[:2])
    >>> bool(torch.allclose(m(x, p)[0], (hs[0](x, p)[0] + hs[1](x, p)[0]) / 2, atol=1e-6))
    True
    >>> two = merge_heads(hs, outputs=(2, 1))(x, p)[0]
    >>> bool(torch.allclose(two[..., 0], m(x, p)[0], atol=1e-6) and torch.allclose(two[..., 1], hs[2](x, p)[0], atol=1e-6))
    True
    """
    k, c = len(heads), heads[0].cfg
    P, S = c.proj_dim, c.state_dim
    sizes = [k] if outputs is None else [int(n) for n in outputs]
    if sum(sizes) != k or min(sizes) < 1:
        raise ValueError(f"outputs={outputs}: member counts must be positive and add up to the {k} heads")
    for h in heads:
        if (h.cfg.layers, h.cfg.hidden_size, h.cfg.proj_dim, h.cfg.state_dim, h.cfg.prompt_init, h.cfg.outputs) != \
                (c.layers, c.hidden_size, P, S, c.prompt_init, 1):
            raise ValueError("merge_heads needs one-output heads with the same layers, widths and prompt_init")
    members = k * int(c.members)  # merging merged heads nests the blocks the same way
    # the merged head is float; quantize_projection() it afterwards (members' grids are not kept)
    m = SLDHead(GuardConfig(**{**c.to_dict(), "proj_dim": k * P, "state_dim": k * S, "proj_bits": None,
                               "members": members, "outputs": len(sizes)})).to(heads[0].proj.weight)
    for n in m.norms:
        n.weight.fill_(1.0)
        n.bias.zero_()
    for w in (m.proj.weight, m.init.weight, m.gru.weight_ih_l0, m.gru.weight_hh_l0, m.risk.weight, m.risk.bias,
              m.resp.weight, m.resp.bias):
        w.zero_()
    for j, h in enumerate(heads):
        g = torch.cat([n.weight for n in h.norms])
        b = torch.cat([n.bias for n in h.norms])
        rp, rs = slice(j * P, (j + 1) * P), slice(j * S, (j + 1) * S)
        m.proj.weight[rp] = h.proj.weight * g
        m.proj.bias[rp] = h.proj.bias + h.proj.weight @ b
        m.init.weight[rs, rp] = h.init.weight
        m.init.bias[rs] = h.init.bias
        for gate in range(3):
            mo, ho = slice(gate * k * S + j * S, gate * k * S + (j + 1) * S), slice(gate * S, (gate + 1) * S)
            m.gru.weight_ih_l0[mo, rp] = h.gru.weight_ih_l0[ho]
            m.gru.weight_hh_l0[mo, rs] = h.gru.weight_hh_l0[ho]
            m.gru.bias_ih_l0[mo] = h.gru.bias_ih_l0[ho]
            m.gru.bias_hh_l0[mo] = h.gru.bias_hh_l0[ho]
    start = 0
    for o, n in enumerate(sizes):  # read-out o: the mean of its own members' read-outs
        for j in range(start, start + n):
            h = heads[j]
            m.risk.weight[o, j * S:(j + 1) * S] = h.risk.weight[0, :S] / n
            m.risk.weight[o, k * S + j * P:k * S + (j + 1) * P] = h.risk.weight[0, S:] / n
            m.risk.bias[o] += h.risk.bias[0] / n
            m.resp.weight[o, j * S:(j + 1) * S] = h.resp.weight[0] / n
            m.resp.bias[o] += h.resp.bias[0] / n
        start += n
    return m.eval()
