"""Saving, loading and ONNX export of the SLD head."""
from __future__ import annotations

from pathlib import Path

import torch

from engines.common.errors import InputError
from engines.guardrail.config import GuardConfig
from engines.guardrail.head import GroupedStepModule, InitModule, SLDHead, StepModule

STEP_ONNX = "sld_step.onnx"
INIT_ONNX = "sld_init.onnx"
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
    head = SLDHead(GuardConfig(**blob["config"]))
    head.load_state_dict(blob["state_dict"])
    return head.to(device).eval()


def export_onnx(head: SLDHead, folder: str | Path) -> tuple[Path, Path]:
    """Export the per-token step (taps, state -> risk, response prob, state) and the prompt
    initialiser (prompt taps -> state) to ONNX, with a dynamic batch axis. A merged ensemble
    (``cfg.extra["members"] > 1``) exports its step as :class:`GroupedStepModule`, without the
    off-block zeros."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    head = head.cpu().eval()
    cfg = head.cfg
    x = torch.zeros(1, cfg.in_dim)
    s = torch.zeros(1, cfg.state_dim)
    step_path, init_path = folder / STEP_ONNX, folder / INIT_ONNX
    with torch.no_grad():
        step = GroupedStepModule(head) if int(cfg.extra.get("members", 1)) > 1 else StepModule(head)
        torch.onnx.export(step.eval(), (x, s), str(step_path), input_names=["taps", "state"],
                          output_names=["risk", "response", "state_out"], opset_version=OPSET,
                          dynamic_axes={"taps": {0: "batch"}, "state": {0: "batch"}, "risk": {0: "batch"},
                                        "response": {0: "batch"}, "state_out": {0: "batch"}},
                          dynamo=False)
        torch.onnx.export(InitModule(head).eval(), (x,), str(init_path), input_names=["prompt_taps"],
                          output_names=["state"], opset_version=OPSET,
                          dynamic_axes={"prompt_taps": {0: "batch"}, "state": {0: "batch"}}, dynamo=False)
    head.eval()  # the exporter restores the wrappers' mode recursively; keep the head in eval
    return step_path, init_path
