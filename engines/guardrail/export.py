"""Saving, loading and ONNX export of the SLD head, and the layouts the exported graphs run.

The layouts compute exactly ``SLDHead.step`` / ``init_state`` (same read-out,
:meth:`~engines.guardrail.head.SLDHead.readout`), arranged for short graphs: :class:`StepModule`
(one token), :class:`GroupedStepModule` (one token of a merged ensemble, without its off-block
zeros), :class:`BlockStepModule` (T tokens in one call) and :class:`InitModule` (the prompt's state).
The torch backend of :class:`~engines.guardrail.guard.Guardrail` runs the same layouts.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from engines.common.errors import InputError
from engines.guardrail.config import GuardConfig
from engines.guardrail.head import SLDHead, gru_update, merge_heads
from engines.guardrail.quant import quantize_weight, replace_gemm_with_matmulnbits

STEP_ONNX = "sld_step.onnx"
INIT_ONNX = "sld_init.onnx"
BLOCK_ONNX = "sld_block.onnx"
OPSET = 17


class StepModule(nn.Module):
    """The exported per-token step: (taps, state) -> (risk, response prob, state); ``head.step``'s
    maths, laid out for a short ONNX graph (static reshapes and splits; one LayerNorm over all taps
    when the norms carry no affine, as :func:`~engines.guardrail.head.merge_heads` leaves them), since at batch 1 every graph
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
        risk, resp = h.readout(s_new, u)
        return torch.sigmoid(risk), torch.sigmoid(resp), s_new


class GroupedStepModule(StepModule):
    """The step of a merged head (:func:`~engines.guardrail.head.merge_heads`) without its off-block zeros.

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
        risk, resp = h.readout(states, u)
        return torch.sigmoid(risk), torch.sigmoid(resp), states[-1:]


class InitModule(nn.Module):
    """The exported memory initialiser: prompt taps -> s_0, and P(the request is harmful) for a head
    with a request judge (``GuardConfig.strict_gate`` / ``loose_gate``). A judge that reads more than the
    last prompt token takes its whole input (``GuardConfig.judge_dim`` wide, the last-token taps first),
    and the memory starts from that input's first ``in_dim`` entries."""

    def __init__(self, head: SLDHead) -> None:
        super().__init__()
        self.head = head

    def forward(self, p: torch.Tensor):
        h = self.head
        if h.request is None:
            return h.init_state(p)
        return h.init_state(p[:, : h.cfg.in_dim]), h.request_prob(p)


def init_input_name(cfg: GuardConfig) -> str:
    """The initialiser graph's input: the last-token taps, or the request judge's whole input."""
    return "request_inputs" if cfg.gated and cfg.judge_dim != cfg.in_dim else "prompt_taps"


def save_head(head: SLDHead, path: str | Path, members: list[SLDHead] | None = None,
              outputs: list[int] | None = None) -> None:
    """Write config + float32 weights to one ``.pt`` file (loaded with ``weights_only=True``).

    A head folded by :func:`~engines.guardrail.head.merge_heads` from ``members`` (grouped per read-out
    by ``outputs``) is stored as those members, not as its block-diagonal matrices, whose off-block
    zeros would make the file K times larger; :func:`load_head` folds them again (and re-applies the
    projection grid and the request gate), which gives the same head."""
    if members is None:
        torch.save({"config": head.cfg.to_dict(), "state_dict": head.state_dict()}, str(path))
        return
    blob = {"config": head.cfg.to_dict(), "member_config": members[0].cfg.to_dict(),
            "members": [m.state_dict() for m in members], "outputs": list(outputs or [len(members)])}
    if head.request is not None:
        blob["request"] = head.request.state_dict()
    torch.save(blob, str(path))


def load_head(path: str | Path, device: str | torch.device = "cpu") -> SLDHead:
    """Read a head written by :func:`save_head`, in eval mode.

    >>> import tempfile, os
    >>> h = SLDHead(GuardConfig(layers=(1,), hidden_size=4, proj_dim=4, state_dim=4))
    >>> p = os.path.join(tempfile.mkdtemp(), "h.pt"); save_head(h, p)
    >>> load_head(p).cfg.state_dim
    4
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"guardrail head not found at {p}: run scripts/guardrail_train.py")
    blob = torch.load(str(p), map_location=device, weights_only=True)
    cfg = GuardConfig.from_dict(blob["config"])
    if "members" not in blob:
        head = SLDHead(cfg)
        head.load_state_dict(blob["state_dict"])
        return head.to(device).eval()
    member_cfg = GuardConfig.from_dict(blob["member_config"])
    members = []
    for sd in blob["members"]:
        m = SLDHead(member_cfg)
        m.load_state_dict(sd)
        members.append(m.eval())
    head = merge_heads(members, outputs=blob["outputs"])
    if cfg.proj_bits:
        head.quantize_projection(int(cfg.proj_bits))
    if "request" in blob:
        head.set_gate(blob["request"]["weight"], float(blob["request"]["bias"]), cfg.strict_gate, cfg.loose_gate,
                      cfg.strict_band, cfg.request_inputs)
    head.cfg = cfg
    return head.to(device).eval()


def load_members(path: str | Path) -> tuple[list[SLDHead], list[int]]:
    """The members a folded head was saved as (:func:`save_head` with ``members``) and their counts
    per read-out, e.g. ``([s0, s1, s2, l0, l1, l2], [3, 3])``: the first group forms the strict risk."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"guardrail head not found at {p}")
    blob = torch.load(str(p), map_location="cpu", weights_only=True)
    if "members" not in blob:
        raise InputError(f"{p.name} holds one head, not members: save it with its members")
    cfg = GuardConfig.from_dict(blob["member_config"])
    members = []
    for sd in blob["members"]:
        m = SLDHead(cfg)
        m.load_state_dict(sd)
        members.append(m.eval())
    return members, [int(n) for n in blob["outputs"]]


def _swap_projection(path: Path, head: SLDHead, bits: int) -> None:
    """Rewrite the float projection ``Gemm`` of an exported graph (its weight found by value: the
    head's grid weights, :mod:`engines.guardrail.quant`) as the ``MatMulNBits`` holding their codes."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    w = head.proj.weight.detach().cpu()
    names = [i.name for i in model.graph.initializer
             if tuple(i.dims) == tuple(w.shape) and np.array_equal(numpy_helper.to_array(i), w.numpy())]
    if len(names) != 1:
        raise RuntimeError(f"{path.name}: expected one initializer equal to the projection weight, found {len(names)}")
    codes, scales = quantize_weight(w, bits)
    replace_gemm_with_matmulnbits(model, names[0], codes, scales, bits)
    onnx.save(model, str(path))


def export_block_onnx(head: SLDHead, folder: str | Path) -> Path:
    """Export :class:`BlockStepModule` (taps of T consecutive tokens of one stream, state -> T risks,
    T response probs, state after the last) to ``folder / BLOCK_ONNX``, with a dynamic token axis; a
    block-quantised projection is stored as ``MatMulNBits`` codes, as in :func:`export_onnx`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    head = head.cpu().eval()
    path = folder / BLOCK_ONNX
    x, s = torch.zeros(3, head.cfg.in_dim), torch.zeros(1, head.cfg.state_dim)
    with torch.no_grad(), warnings.catch_warnings():
        # the exporter warns about GRU batch sizes other than 1 (the block graph is batch 1, h0 an input)
        # and the tracer about nn.GRU's checks of the input and state widths (fixed, not the token axis)
        warnings.filterwarnings("ignore", message="Exporting a model to ONNX with a batch_size other than 1")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning, module=r"torch\.nn\.modules\.rnn")
        torch.onnx.export(BlockStepModule(head).eval(), (x, s), str(path), input_names=["taps", "state"],
                          output_names=["risk", "response", "state_out"], opset_version=OPSET,
                          dynamic_axes={"taps": {0: "tokens"}, "risk": {0: "tokens"}, "response": {0: "tokens"}},
                          dynamo=False)
    head.eval()
    if head.projection_bits:
        _swap_projection(path, head, head.projection_bits)
    return path


def export_onnx(head: SLDHead, folder: str | Path) -> tuple[Path, Path]:
    """Export the per-token step (taps, state -> risk, response prob, state) and the prompt
    initialiser (prompt taps -> state) to ONNX, with a dynamic batch axis, and the block step
    (:func:`export_block_onnx`, written beside them). A merged ensemble
    (``cfg.members > 1``) exports its step as :class:`GroupedStepModule`, without the
    off-block zeros; a head with block-quantised projection weights (:meth:`SLDHead.quantize_projection`)
    stores them as ``com.microsoft.MatMulNBits`` codes in every graph (same maths as its torch path).
    Returns the step's and the initialiser's paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    head = head.cpu().eval()
    bits = head.projection_bits
    cfg = head.cfg
    x = torch.zeros(1, cfg.in_dim)
    s = torch.zeros(1, cfg.state_dim)
    step_path, init_path = folder / STEP_ONNX, folder / INIT_ONNX
    with torch.no_grad():
        step = GroupedStepModule(head) if cfg.members > 1 else StepModule(head)
        torch.onnx.export(step.eval(), (x, s), str(step_path), input_names=["taps", "state"],
                          output_names=["risk", "response", "state_out"], opset_version=OPSET,
                          dynamic_axes={"taps": {0: "batch"}, "state": {0: "batch"}, "risk": {0: "batch"},
                                        "response": {0: "batch"}, "state_out": {0: "batch"}},
                          dynamo=False)
        outs = ["state"] if head.request is None else ["state", "request"]
        name = init_input_name(cfg)
        j = torch.zeros(1, cfg.judge_dim if head.request is not None else cfg.in_dim)
        torch.onnx.export(InitModule(head).eval(), (j,), str(init_path), input_names=[name],
                          output_names=outs, opset_version=OPSET,
                          dynamic_axes={name: {0: "batch"}} | {o: {0: "batch"} for o in outs}, dynamo=False)
    head.eval()  # the exporter restores the wrappers' mode recursively; keep the head in eval
    if bits:
        for path in (step_path, init_path):
            _swap_projection(path, head, bits)
    export_block_onnx(head, folder)
    return step_path, init_path
