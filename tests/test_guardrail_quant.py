"""Block-quantised projection weights (engines.guardrail.quant): codes, grid weights, their agreement
with onnxruntime's MatMulNBits, and a quantised head's save / load / export round trip."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from engines.common.onnx_runtime import ort_session
from engines.guardrail.config import GuardConfig
from engines.guardrail.export import (
    GroupedStepModule,
    export_onnx,
    load_head,
    save_head,
)
from engines.guardrail.head import SLDHead, merge_heads
from engines.guardrail.quant import (
    BLOCK,
    matmulnbits_initializers,
    quantize_weight,
    replace_gemm_with_matmulnbits,
    snap_to_grid,
)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("n,k", [(1, 32), (7, 64), (384, 1728)])
def test_codes_round_trip_within_half_a_step(bits, n, k):
    qmax = 2 ** (bits - 1) - 1
    w = torch.randn(n, k, generator=torch.Generator().manual_seed(n + k)) * 0.05
    w[0, :BLOCK] = 0.0  # an all-zero block keeps scale 0 and codes 0
    q, s = quantize_weight(w, bits)
    assert q.dtype == torch.int8 and q.shape == (n, k // BLOCK, BLOCK) and s.shape == (n, k // BLOCK)
    assert float(s[0, 0]) == 0.0 and int(q[0, 0].abs().max()) == 0
    assert bool((q[s > 0].abs().amax(-1) == qmax).all())  # every other block uses the full code range
    back = (q.float() * s.unsqueeze(-1)).reshape(n, k)
    assert bool(((back - w).abs() <= s.repeat_interleave(BLOCK, 1) / 2 + 1e-9).all())
    # grid weights re-quantise to the same codes and (to an ulp) the same scales: the export's codes
    q2, s2 = quantize_weight(snap_to_grid(w, bits), bits)
    assert torch.equal(q2, q)
    torch.testing.assert_close(s2, s, rtol=2e-7, atol=0)
    with pytest.raises(ValueError, match="multiple"):
        quantize_weight(torch.zeros(2, 40), bits)


def test_bad_bit_width_is_refused():
    with pytest.raises(ValueError, match="bits"):
        quantize_weight(torch.zeros(2, 32), bits=3)


def test_4bit_codes_pack_two_per_byte_low_nibble_first():
    q = torch.tensor([[[-7, 7] + [0] * 30]], dtype=torch.int8)
    b, _ = matmulnbits_initializers(q, torch.ones(1, 1), bits=4)
    assert b.shape == (1, 1, 16) and b.dtype == np.uint8
    assert int(b[0, 0, 0]) == (-7 + 8) | ((7 + 8) << 4) and int(b[0, 0, 1]) == 8 | (8 << 4)


def _matmulnbits_model(n: int, k: int, q: torch.Tensor, s: torch.Tensor, bias: np.ndarray, bits: int):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.zeros((n, k), np.float32)  # placeholder the swap removes
    g = helper.make_graph([helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    assert replace_gemm_with_matmulnbits(model, "W", q, s, bits) == 1
    assert [nd.op_type for nd in model.graph.node] == ["MatMulNBits"]
    assert "W" not in {i.name for i in model.graph.initializer}
    onnx.checker.check_model(model)
    with pytest.raises(ValueError, match="no Gemm"):
        replace_gemm_with_matmulnbits(model, "W", q, s, bits)
    return model


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("n,k", [(1, 32), (16, 96), (384, 1728)])
@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("x_scale", [0.1, 10.0])
def test_onnxruntime_matmulnbits_computes_the_grid_matmul(bits, n, k, m, x_scale, tmp_path):
    """What the ONNX export runs (MatMulNBits, accuracy level 0) is the float matmul with grid weights."""
    import onnx

    g = torch.Generator().manual_seed(n * k + m)
    w, x, b = torch.randn(n, k, generator=g) * 0.05, torch.randn(m, k, generator=g) * x_scale, torch.randn(n, generator=g)
    q, s = quantize_weight(w, bits)
    path = tmp_path / "mm.onnx"
    onnx.save(_matmulnbits_model(n, k, q, s, b.numpy(), bits), str(path))
    (y,) = ort_session(path).run(None, {"x": x.numpy()})
    want = F.linear(x, snap_to_grid(w, bits), b).numpy()
    np.testing.assert_allclose(y, want, rtol=0, atol=2e-6 * max(1.0, np.abs(want).max()))


def test_quantised_head_round_trip_and_export(tmp_path):
    """A quantised head saves and loads (grid weights + bit width), stays close to its float self, and
    exports the projection as MatMulNBits in both graphs with no float copy left."""
    import onnx

    torch.manual_seed(0)
    cfg = GuardConfig(layers=(9, 15), hidden_size=64, proj_dim=32, state_dim=32)
    head = SLDHead(cfg).eval()
    x, p = torch.randn(2, 6, cfg.in_dim) * 3, torch.randn(2, cfg.in_dim) * 3
    with torch.no_grad():
        float_risk = torch.sigmoid(head(x, p)[0])
        q = SLDHead(cfg).eval()
        q.load_state_dict(head.state_dict())
        q.quantize_projection(4)
        q_risk = torch.sigmoid(q(x, p)[0])
    assert head.projection_bits is None and q.projection_bits == 4 and cfg.proj_bits is None
    assert 0 < float((q_risk - float_risk).abs().max()) < 0.1
    save_head(q, tmp_path / "h.pt")
    back = load_head(tmp_path / "h.pt")
    assert back.projection_bits == 4 and torch.equal(back.proj.weight, q.proj.weight)
    assert torch.equal(quantize_weight(back.proj.weight)[0], quantize_weight(head.proj.weight)[0])
    step_p, init_p = export_onnx(back, tmp_path / "onnx")
    for path in (step_p, init_p):
        graph = onnx.load(str(path)).graph
        nb = [nd for nd in graph.node if nd.op_type == "MatMulNBits"]
        assert len(nb) == 1 and {a.name: a.i for a in nb[0].attribute if a.name in ("bits", "accuracy_level")} \
            == {"bits": 4, "accuracy_level": 0}
        assert not any(tuple(i.dims) == tuple(head.proj.weight.shape) for i in graph.initializer)
    with pytest.raises(ValueError, match="multiple"):
        SLDHead(GuardConfig(layers=(9,), hidden_size=60, proj_dim=32, state_dim=32)).quantize_projection(4)


def test_quantised_ensemble_agrees_with_onnx_on_every_row(tmp_path):
    """No input is special: with weight-only codes the ONNX step and initialiser follow torch to 1e-5 on
    each of 2,048 random rows (int8 activation rounding, tried first, broke 1e-4 on ~0.1 % of rows)."""
    head = merge_heads([SLDHead(GuardConfig(layers=(9, 15), hidden_size=64, proj_dim=32, state_dim=32)).eval()
                        for _ in range(3)]).quantize_projection(4)
    step_p, init_p = export_onnx(head, tmp_path)
    g = torch.Generator().manual_seed(5)
    x, p = torch.randn(2048, head.cfg.in_dim, generator=g) * 3, torch.randn(2048, head.cfg.in_dim, generator=g) * 3
    s = torch.randn(2048, head.cfg.state_dim, generator=g).tanh()
    with torch.no_grad():
        s0 = head.init_state(p)
        r, q, s1 = GroupedStepModule(head)(x, s)
    (s0_ort,) = ort_session(init_p).run(None, {"prompt_taps": p.numpy()})
    r_ort, q_ort, s1_ort = ort_session(step_p).run(None, {"taps": x.numpy(), "state": s.numpy()})
    for got, want in ((s0_ort, s0), (r_ort, r), (q_ort, q), (s1_ort, s1)):
        np.testing.assert_allclose(got, want.numpy(), atol=1e-5, rtol=0)


def test_speed_floor_reference_has_the_shipped_step_graph(tmp_path):
    """The in-stream cost split in RESULTS.md (benchmarks/guardrail_step_ab.py --floor) rests on its
    narrow reference running the shipped step's graph: the same ORT nodes after optimisation, with
    only the weights shrunk."""
    import onnx
    import onnxruntime as ort

    from engines.common.onnx_runtime import session_options
    from engines.common.paths import ASSETS_DIR
    from evals.guardrail.timing import floor_graphs

    def optimised_ops(path):
        opts = session_options(1)
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED  # portable file
        opts.optimized_model_filepath = str(tmp_path / f"opt_{path.name}")
        ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        return [n.op_type for n in onnx.load(opts.optimized_model_filepath).graph.node]

    shipped = ASSETS_DIR / "guardrail" / "sld_step.onnx"
    narrow, one = floor_graphs(tmp_path)
    assert optimised_ops(narrow) == optimised_ops(shipped)
    assert narrow.stat().st_size < shipped.stat().st_size / 20
    assert optimised_ops(one) == ["Identity"]
