"""Saving, loading and ONNX export of the SLD head."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch

from engines.common.errors import InputError
from engines.guardrail.config import GuardConfig
from engines.guardrail.head import (
    BlockStepModule,
    GroupedStepModule,
    InitModule,
    SLDHead,
    StepModule,
)
from engines.guardrail.quant import quantize_weight, replace_gemm_with_matmulnbits

STEP_ONNX = "sld_step.onnx"
INIT_ONNX = "sld_init.onnx"
BLOCK_ONNX = "sld_block.onnx"
OPSET = 17


def save_head(head: SLDHead, path: str | Path) -> None:
    """Write config + float32 weights to one ``.pt`` file (loaded with ``weights_only=True``)."""
    torch.save({"config": head.cfg.to_dict(), "state_dict": head.state_dict()}, str(path))


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
    head = SLDHead(GuardConfig.from_dict(blob["config"]))
    head.load_state_dict(blob["state_dict"])
    return head.to(device).eval()


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
        torch.onnx.export(InitModule(head).eval(), (x,), str(init_path), input_names=["prompt_taps"],
                          output_names=["state"], opset_version=OPSET,
                          dynamic_axes={"prompt_taps": {0: "batch"}, "state": {0: "batch"}}, dynamo=False)
    head.eval()  # the exporter restores the wrappers' mode recursively; keep the head in eval
    if bits:
        for path in (step_path, init_path):
            _swap_projection(path, head, bits)
    export_block_onnx(head, folder)
    return step_path, init_path
