"""Helpers shared by the guardrail speed benchmarks: run header, a decode-step driver, floor graphs.

``decoder`` runs one SmolLM2-135M KV-cache decode step so a timed head call starts with its
weights out of cache, as in a stream; ``floor_graphs`` builds the reference graphs that split the
step graph's cost into onnxruntime's call, the graph's nodes and the weights' bytes.
"""
from __future__ import annotations

import platform
import time
from pathlib import Path

from engines.common.paths import ASSETS_DIR


def run_header() -> dict:
    """When and where a benchmark ran: the first keys of every guardrail speed record."""
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}"}


def decoder(threads: int = 1):
    """A function running one SmolLM2-135M KV-cache decode step on ``threads`` torch threads (the cache
    is kept short); it returns the step's wall time in ms."""
    import torch

    from engines.common.backbone import load_backbone

    torch.set_num_threads(threads)
    bb = load_backbone("cpu")
    ids = bb.chat_ids("Explain how vaccines train the immune system.")
    with torch.inference_mode():
        first = bb.model(input_ids=ids, use_cache=True, output_hidden_states=True)
    state = {"n": 0, "cache": first.cache, "nxt": first.logits[:, -1:].argmax(-1)}

    @torch.inference_mode()
    def step() -> float:
        t0 = time.perf_counter()
        if state["n"] == 64:  # restart from the prompt, so the cost per step stays that of a short reply
            o = bb.model(input_ids=ids, use_cache=True, output_hidden_states=True)
            state.update(n=0, cache=o.cache, nxt=o.logits[:, -1:].argmax(-1))
        o = bb.model(input_ids=state["nxt"], cache=state["cache"], use_cache=True, output_hidden_states=True)
        state.update(n=state["n"] + 1, cache=o.cache, nxt=o.logits[:, -1:].argmax(-1))
        return (time.perf_counter() - t0) * 1e3

    return step


def floor_graphs(folder: Path) -> list[Path]:
    """The floor references (see the module docstring), written under ``folder``."""
    import onnx
    import torch
    from onnx import TensorProto, helper

    from engines.guardrail.config import GuardConfig
    from engines.guardrail.export import export_onnx, load_head
    from engines.guardrail.head import SLDHead, merge_heads

    path = ASSETS_DIR / "guardrail" / "sld_head.pt"
    shipped = load_head(path).cfg
    k = int(shipped.members)
    groups = torch.load(str(path), map_location="cpu", weights_only=True).get("outputs")  # members per read-out
    cfg = GuardConfig(**{**shipped.to_dict(), "proj_dim": 8, "state_dim": 8, "members": 1, "proj_bits": None,
                         "outputs": 1, "strict_gate": 0.0, "loose_gate": 0.0, "strict_band": 0.0})
    torch.manual_seed(0)
    tiny = merge_heads([SLDHead(cfg).eval() for _ in range(k)], outputs=groups)
    if shipped.proj_bits:
        tiny = tiny.quantize_projection(int(shipped.proj_bits))
    step, _ = export_onnx(tiny, folder / "narrow")
    narrow = folder / "narrow_8wide_step.onnx"
    step.rename(narrow)
    ins = [helper.make_tensor_value_info("taps", TensorProto.FLOAT, ["batch", cfg.in_dim]),
           helper.make_tensor_value_info("state", TensorProto.FLOAT, ["batch", 8])]
    graph = helper.make_graph([helper.make_node("Identity", ["state"], ["state_out"])], "one_node", ins,
                              [helper.make_tensor_value_info("state_out", TensorProto.FLOAT, ["batch", 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    one = folder / "one_node_identity.onnx"
    onnx.save(model, str(one))
    return [narrow, one]
