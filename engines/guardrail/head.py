"""The Streaming Latent Dynamics (SLD) head and the Anchored Temporal Consistency (ATC) loss.

PlugGuard / Kelp (arXiv 2510.09694), Sec. 3.2-3.3, rebuilt for a 135M backbone:

* per-token input ``x_t``: LayerNorm of each tapped layer's hidden state, concatenated and
  projected, ``u_t = GELU(W_p [LN(h_t^{l_1}); ...; LN(h_t^{l_k})])``;
* memory: a discrete-time GRU update ``s_t = GRU(u_t, s_{t-1})``, with ``s_0 = tanh(W_0 u_prompt)``
  from the last prompt token (the prompt-initialised latent state);
* outputs: token risk ``r_t = sigmoid(w_r [s_t; u_t] + b_r)`` and a response-level logit
  ``q_t = w_q s_t + b_q`` (the eventual verdict on the whole reply, readable at any step);
* training objective: :func:`atc_loss`, token and response BCE plus ATC, optionally plus a
  stream-decision term on the statistic the stop policy thresholds (used by the shipped head).

One step costs O(1) in the length of the reply: the head never re-reads the prefix.
"""
from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn
from torch.nn import functional as F

from engines.guardrail.config import GuardConfig
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
        self.risk = nn.Linear(cfg.state_dim + cfg.proj_dim, 1)
        self.resp = nn.Linear(cfg.state_dim, 1)

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
        risk = torch.sigmoid(self.risk(torch.cat([s_new, u], dim=-1))).squeeze(-1)
        resp = torch.sigmoid(self.resp(s_new)).squeeze(-1)
        return risk, resp, s_new

    def forward(self, x: torch.Tensor, prompt_taps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Whole replies at once (training): x (B, T, k * H) -> (risk logits (B, T), resp logits (B, T)).

        Same maths as calling :meth:`step` T times (padding at the end never reaches a real token).
        """
        u = self.embed(x)
        states = self.memory(u, self.init_state(prompt_taps))
        return self.risk(torch.cat([states, u], dim=-1)).squeeze(-1), self.resp(states).squeeze(-1)

    def memory(self, u: torch.Tensor, s0: torch.Tensor) -> torch.Tensor:
        """The memory over whole replies: inputs u (B, T, P) from state s0 (B, S) -> the states the
        read-outs see, (B, T, S). The one place a different memory cell plugs in (dev-only sweep)."""
        return self.gru(u, s0.unsqueeze(0).contiguous())[0]


class StepModule(nn.Module):
    """The exported per-token step: (taps, state) -> (risk, response prob, state); ``head.step``'s
    maths, laid out for a short ONNX graph (static reshapes and splits; one LayerNorm over all taps
    when the norms carry no affine, as :func:`merge_heads` leaves them), since at batch 1 every graph
    node costs about a microsecond."""

    def __init__(self, head: SLDHead) -> None:
        super().__init__()
        self.head = head
        self.L, self.H = len(head.cfg.layers), head.cfg.hidden_size
        self.eps = head.norms[0].eps
        self.plain_norms = all(bool((n.weight == 1).all()) and bool((n.bias == 0).all()) and n.eps == self.eps
                               for n in head.norms)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The head's per-token input, with one LayerNorm over (B, layers, H) when the norms are plain."""
        if not self.plain_norms:
            return self.head.embed(x)
        z = F.layer_norm(x.reshape(-1, self.L, self.H), (self.H,), eps=self.eps)
        return self.head.project(z.reshape(-1, self.L * self.H))

    def update(self, u: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """The memory update s' = GRU(u, s)."""
        return self.head.gru_cell(u, s)

    def forward(self, x: torch.Tensor, s: torch.Tensor):
        h = self.head
        u = self.embed(x)
        s_new = self.update(u, s)
        risk = torch.sigmoid(h.risk(torch.cat([s_new, u], dim=-1))).squeeze(-1)
        resp = torch.sigmoid(h.resp(s_new)).squeeze(-1)
        return risk, resp, s_new


class GroupedStepModule(StepModule):
    """The step of a merged head (:func:`merge_heads`) without its off-block zeros.

    A head folded from K members has block-diagonal GRU weights (gate-major, then member-major
    rows; member-major columns), so two thirds of them are zeros for K = 3, and every token's step
    would multiply them. Here the GRU update runs as one batched matmul over the K members' own
    ``(P/K) x 3S/K`` and ``(S/K) x 3S/K`` blocks (no transposes: the batch broadcasts). The outputs
    are the same as ``head.step``'s, and the per-token float weights are fewer (3.9 MB instead of
    6.2 MB for the shipped head).
    """

    def __init__(self, head: SLDHead) -> None:
        super().__init__(head)
        k = int(head.cfg.members)
        self.k, S, P = k, head.cfg.state_dim // k, head.cfg.proj_dim // k
        self.S, self.P = S, P
        g = head.gru
        wih, whh, bih, bhh = [], [], [], []
        with torch.no_grad():
            for j in range(k):
                rows = [slice(gate * k * S + j * S, gate * k * S + (j + 1) * S) for gate in range(3)]
                cp, cs = slice(j * P, (j + 1) * P), slice(j * S, (j + 1) * S)
                wih.append(torch.cat([g.weight_ih_l0[r, cp] for r in rows]).t())
                whh.append(torch.cat([g.weight_hh_l0[r, cs] for r in rows]).t())
                bih.append(torch.cat([g.bias_ih_l0[r] for r in rows]))
                bhh.append(torch.cat([g.bias_hh_l0[r] for r in rows]))
        self.register_buffer("w_ih", torch.stack(wih).contiguous())  # (K, P/K, 3S/K)
        self.register_buffer("w_hh", torch.stack(whh).contiguous())  # (K, S/K, 3S/K)
        self.register_buffer("b_ih", torch.stack(bih).unsqueeze(1))  # (K, 1, 3S/K)
        self.register_buffer("b_hh", torch.stack(bhh).unsqueeze(1))

    def update(self, u: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        k = self.k
        uk = u.reshape(-1, k, 1, self.P)  # (B, K, 1, P/K) @ (K, P/K, 3S/K): the members batch, B broadcasts
        sk = s.reshape(-1, k, 1, self.S)
        sk_new = gru_update(torch.matmul(uk, self.w_ih) + self.b_ih, torch.matmul(sk, self.w_hh) + self.b_hh, sk,
                            width=self.S)
        return sk_new.reshape(-1, k * self.S)


class BlockStepModule(nn.Module):
    """T consecutive tokens in one call: (taps (T, k * H), state (1, S)) -> (risks (T,), response probs
    (T,), state after the last token (1, S)); the same maths as T calls of ``head.step``.

    Why: through onnxruntime most of a step's cost right after a decode step is the call itself and
    its code and weights coming back into cache, not the arithmetic. Scoring a block of tokens pays
    that once: the projection runs as one matmul over the block, each member's memory as one ONNX
    ``GRU`` node over the block (``linear_before_reset``, PyTorch's gate form), and the read-outs once.
    The recurrence is still sequential inside the node, so the risks are the step-by-step ones and
    the head still never re-reads the prefix. Works for a plain head (one member) and a merged one.
    """

    def __init__(self, head: SLDHead) -> None:
        super().__init__()
        self.grouped = GroupedStepModule(head).eval()  # plain-norm embed and the members' own GRU blocks
        g = self.grouped
        self.grus = nn.ModuleList()
        with torch.no_grad():
            for j in range(g.k):
                cell = nn.GRU(g.P, g.S)
                cell.weight_ih_l0.copy_(g.w_ih[j].t())
                cell.weight_hh_l0.copy_(g.w_hh[j].t())
                cell.bias_ih_l0.copy_(g.b_ih[j, 0])
                cell.bias_hh_l0.copy_(g.b_hh[j, 0])
                self.grus.append(cell.eval())
        self.grus.to(g.w_ih.device)

    def forward(self, x: torch.Tensor, s: torch.Tensor):
        g, h = self.grouped, self.grouped.head
        u = g.embed(x)  # (T, P): one projection for the whole block
        members = [gru(ui.unsqueeze(1), si.unsqueeze(0))[0].squeeze(1)
                   for gru, ui, si in zip(self.grus, u.split(g.P, dim=-1), s.split(g.S, dim=-1))]
        states = torch.cat(members, dim=-1)  # (T, S): the memory after each token
        risk = torch.sigmoid(h.risk(torch.cat([states, u], dim=-1))).squeeze(-1)
        resp = torch.sigmoid(h.resp(states)).squeeze(-1)
        return risk, resp, states[-1:]


class InitModule(nn.Module):
    """The exported memory initialiser: prompt taps -> s_0."""

    def __init__(self, head: SLDHead) -> None:
        super().__init__()
        self.head = head

    def forward(self, p: torch.Tensor):
        return self.head.init_state(p)


def atc_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, labels: torch.Tensor, anchors: torch.Tensor,
             mask: torch.Tensor, *, lam_resp: float = 0.5, lam_atc: float = 1.0, low: float = 0.1,
             high: float = 0.9, weights: torch.Tensor | None = None, lam_pol: float = 0.0,
             patience: int = 3) -> tuple[torch.Tensor, dict]:
    r"""Token BCE + response BCE + Anchored Temporal Consistency (after Kelp, Eq. 6-8).

    For reply ``i`` with T_i tokens, response label ``y_i`` and anchor ``a_i`` (first non-refusal
    sentence of a harmful reply; ``a_i = T_i`` for a benign one), token risk ``r_t = sigmoid(z_t)``:

    .. math::

        L_{tok} &= \tfrac{1}{N}\sum_{i,t} \mathrm{BCE}(r_{it}, \mathbb 1[t \ge a_i]) \\
        L_{resp} &= \tfrac{1}{B}\sum_i \mathrm{BCE}(\sigma(q_{i,T_i}), y_i) \\
        L_{low} &= \tfrac{1}{|\mathcal B|}\sum_{(i,t)\in\mathcal B} \max(0, r_{it} - \epsilon_{lo}),
                  \quad \mathcal B = \{t < a_i\} \ \text{(benign prefix)} \\
        L_{high} &= \tfrac{1}{|\mathcal H|}\sum_{(i,t)\in\mathcal H} \max(0, \tau_{hi} - r_{it}),
                  \quad \mathcal H = \{t \ge a_i\} \\
        L_{mono} &= \tfrac{1}{|\mathcal H'|}\sum_{(i,t)\in\mathcal H'} \max(0, r_{i,t-1} - r_{it}),
                  \quad \mathcal H' = \{t > a_i\} \\
        L &= L_{tok} + \lambda_{resp} L_{resp} + \lambda_{atc}(L_{low} + L_{high} + L_{mono})

    ``L_low`` anchors risk low before the turn, ``L_high`` + ``L_mono`` make it high and
    non-decreasing from the anchor on: the strict stop-if-harmful policy.

    Optional stream-decision term (``lam_pol > 0``; off by default): the stop policy fires iff
    some window of ``p`` (= ``patience``) consecutive risks is all above the threshold, i.e. iff
    :math:`\hat s_i = \max_t \min_{0 \le k < p} r_{i,t-k}` reaches it; so
    :math:`L_{pol} = \tfrac{1}{B}\sum_i \mathrm{BCE}(\hat s_i, y_i)` and
    :math:`L \mathrel{+}= \lambda_{pol} L_{pol}`. Unlike the mean hinge ``L_low`` it punishes one
    isolated run of high risk on a safe reply, which is exactly a false stop. Optional per-reply
    ``weights`` (B,) scale every term of reply ``i`` (e.g. to weight the two views).

    Args (shapes): risk_logits, resp_logits, mask: (B, T); labels: (B,) in [0, 1] (hard labels, or
    soft targets such as a mean human score);
    anchors: (B,) long (T for benign replies). Returns (loss, parts as floats).

    >>> z = torch.zeros(1, 3); m = torch.ones(1, 3)
    >>> loss, parts = atc_loss(z, z, torch.tensor([1.]), torch.tensor([1]), m)
    >>> round(parts["mono"], 3)
    0.0
    """
    _B, T = risk_logits.shape
    t = torch.arange(T, device=risk_logits.device).unsqueeze(0)
    harm = (t >= anchors.unsqueeze(1)).to(mask.dtype) * mask
    benign = (t < anchors.unsqueeze(1)).to(mask.dtype) * mask
    w = torch.ones_like(labels, dtype=mask.dtype) if weights is None else weights.to(mask.dtype)
    wm, wh, wb = mask * w[:, None], harm * w[:, None], benign * w[:, None]
    tok = F.binary_cross_entropy_with_logits(risk_logits, harm, reduction="none")
    l_tok = (tok * wm).sum() / wm.sum().clamp(min=1e-8)
    last = (mask.sum(1).long() - 1).clamp(min=0)
    q_last = resp_logits.gather(1, last.unsqueeze(1)).squeeze(1)
    if weights is None:
        l_resp = F.binary_cross_entropy_with_logits(q_last, labels.to(q_last.dtype))
    else:
        l_resp = (F.binary_cross_entropy_with_logits(q_last, labels.to(q_last.dtype), reduction="none") * w).sum() \
            / w.sum().clamp(min=1e-8)
    r = torch.sigmoid(risk_logits)
    l_low = (F.relu(r - low) * wb).sum() / wb.sum().clamp(min=1e-8)
    l_high = (F.relu(high - r) * wh).sum() / wh.sum().clamp(min=1e-8)
    after = wh[:, 1:] * (t[:, 1:] > anchors.unsqueeze(1)).to(mask.dtype)
    l_mono = (F.relu(r[:, :-1] - r[:, 1:]) * after).sum() / after.sum().clamp(min=1e-8)
    loss = l_tok + lam_resp * l_resp + lam_atc * (l_low + l_high + l_mono)
    parts = {"tok": l_tok, "resp": l_resp, "low": l_low, "high": l_high, "mono": l_mono}
    if lam_pol > 0 and T >= patience:
        s_hat = (r * mask).unfold(1, patience, 1).amin(-1).amax(-1).clamp(1e-6, 1 - 1e-6)
        ok = (mask.sum(1) >= patience).to(mask.dtype) * w
        bce = F.binary_cross_entropy(s_hat, labels.to(s_hat.dtype), reduction="none")
        l_pol = (bce * ok).sum() / ok.sum().clamp(min=1e-8)
        loss = loss + lam_pol * l_pol
        parts["pol"] = l_pol
    return loss, {k: float(v.detach()) for k, v in parts.items()}


def ordinal_atc_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, loose: tuple[torch.Tensor, torch.Tensor],
                     strict: tuple[torch.Tensor, torch.Tensor, torch.Tensor], mask: torch.Tensor,
                     weights: torch.Tensor | None = None, **kw) -> tuple[torch.Tensor, dict]:
    r"""The ATC objective on both levels of one ordinal risk logit (strict and loose policies).

    .. math::

        L = L_{ATC}(z + c, q + c;\ y^{strict}, a^{comply}) + L_{ATC}(z - c, q - c;\ y^{unsafe}, a^{unsafe})

    with :func:`atc_loss` as ``L_ATC`` and ``c`` = :data:`ORDINAL_CUT`: the strict term asks the risk
    to rise past the lower cut where the reply starts going along with a harmful request, the loose
    term past the upper cut where material help starts. ``loose`` = (labels, anchors); ``strict`` =
    (labels, anchors, known), where ``known`` (B,) is 0 for replies whose strict level is not known
    (they add only the loose term). Keyword arguments go to both :func:`atc_loss` calls.

    >>> z = torch.zeros(2, 3); m = torch.ones(2, 3)
    >>> y = torch.tensor([1., 0.]); a = torch.tensor([1, 3])
    >>> loss, parts = ordinal_atc_loss(z, z, (y, a), (y, a, torch.ones(2)), m)
    >>> sorted(parts)[:2], loss.item() > 0
    (['loose_high', 'loose_low'], True)
    """
    w = torch.ones_like(loose[0]) if weights is None else weights
    ls, lp = atc_loss(risk_logits - ORDINAL_CUT, resp_logits - ORDINAL_CUT, loose[0], loose[1], mask, weights=w, **kw)
    ss, sp = atc_loss(risk_logits + ORDINAL_CUT, resp_logits + ORDINAL_CUT, strict[0], strict[1], mask,
                      weights=w * strict[2], **kw)
    parts = {f"loose_{k}": v for k, v in lp.items()} | {f"strict_{k}": v for k, v in sp.items()}
    return ls + ss, parts


def distill_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, teacher_risk: torch.Tensor,
                 teacher_resp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    r"""Knowledge-distillation term: match a teacher head's per-token risk and response outputs.

    .. math::

        L_{kd} = \tfrac{1}{N}\sum_{i,t} m_{it}\,\big[\mathrm{BCE}(\sigma(z_{it}), \sigma(z^T_{it}))
                 + \mathrm{BCE}(\sigma(q_{it}), \sigma(q^T_{it}))\big]

    with the student's risk / response logits ``z``, ``q`` and the teacher's ``z^T``, ``q^T``
    (e.g. the shipped seed ensemble), so one small head can learn the ensemble's smoother risk
    curves and be stepped at a third of its cost. Used with :func:`atc_loss`, never alone.

    >>> z = torch.zeros(1, 2); m = torch.ones(1, 2)
    >>> round(float(distill_loss(z, z, z, z, m)), 4)  # 2 * ln 2
    1.3863
    """
    tr, tq = torch.sigmoid(teacher_risk), torch.sigmoid(teacher_resp)
    per = F.binary_cross_entropy_with_logits(risk_logits, tr, reduction="none") \
        + F.binary_cross_entropy_with_logits(resp_logits, tq, reduction="none")
    return (per * mask).sum() / mask.sum().clamp(min=1e-8)


@torch.no_grad()
def merge_heads(heads: list[SLDHead]) -> SLDHead:
    """Fold K trained heads (same layers and widths) into one SLD head whose risk and response
    logits are the mean of the members' logits: a seed ensemble that is still one plain head.

    Exact because every member's maths is block-separable: each member's LayerNorm affine is
    folded into its block of the (shared-input) projection, the init and GRU weights become
    block-diagonal per gate (PyTorch's r, z, n layout keeps gates in K-wide chunks), and the
    risk/response layers average the members' linear read-outs. Widths become ``K * proj_dim``
    and ``K * state_dim`` (the off-block zeros count as parameters); the step stays O(1).

    >>> cfg = GuardConfig(layers=(1,), hidden_size=8, proj_dim=4, state_dim=3)
    >>> hs = [SLDHead(cfg).eval() for _ in range(2)]
    >>> x, p = torch.randn(1, 5, 8), torch.randn(1, 8)
    >>> m = merge_heads(hs)
    >>> bool(torch.allclose(m(x, p)[0], (hs[0](x, p)[0] + hs[1](x, p)[0]) / 2, atol=1e-6))
    True
    """
    k, c = len(heads), heads[0].cfg
    P, S = c.proj_dim, c.state_dim
    for h in heads:
        if (h.cfg.layers, h.cfg.hidden_size, h.cfg.proj_dim, h.cfg.state_dim, h.cfg.prompt_init) != \
                (c.layers, c.hidden_size, P, S, c.prompt_init):
            raise ValueError("merge_heads needs heads with the same layers, widths and prompt_init")
    members = k * int(c.members)  # merging merged heads nests the blocks the same way
    # the merged head is float; quantize_projection() it afterwards (members' grids are not kept)
    m = SLDHead(GuardConfig(**{**c.to_dict(), "proj_dim": k * P, "state_dim": k * S,
                               "proj_bits": None, "members": members})).to(heads[0].proj.weight)
    for n in m.norms:
        n.weight.fill_(1.0)
        n.bias.zero_()
    for w in (m.proj.weight, m.init.weight, m.gru.weight_ih_l0, m.gru.weight_hh_l0):
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
    w_s = torch.cat([h.risk.weight[:, :S] for h in heads], 1)
    w_u = torch.cat([h.risk.weight[:, S:] for h in heads], 1)
    m.risk.weight.copy_(torch.cat([w_s, w_u], 1) / k)
    m.risk.bias.copy_(sum(h.risk.bias for h in heads) / k)
    m.resp.weight.copy_(torch.cat([h.resp.weight for h in heads], 1) / k)
    m.resp.bias.copy_(sum(h.resp.bias for h in heads) / k)
    return m.eval()
