"""Whether two ONNX files are the same model, to a stated tolerance: the same graph (operators in
order, their inputs, outputs and attributes, the graph's inputs and outputs with their types and
shapes, the initializers' names, types and shapes), float weights within ``rtol``/``atol``, integer
weights equal, and the same outputs on fixed inputs.

A re-export on another CPU rounds some float differently in the last bit (a weight folded by a
vectorised kernel), so comparing the files byte for byte fails on machines other than the one that
wrote them; this compares what matters instead.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

#: Float weights and outputs may differ by a few units in the last place (float32: ~6e-8 relative).
WEIGHT_RTOL, WEIGHT_ATOL = 1e-5, 1e-7
OUTPUT_ATOL = 1e-5


def _tensor_summary(t: onnx.TensorProto) -> tuple:
    return (t.name, t.data_type, tuple(t.dims))


def _value_info(v: onnx.ValueInfoProto) -> tuple:
    tt = v.type.tensor_type
    dims = tuple(d.dim_param or d.dim_value for d in tt.shape.dim)
    return (v.name, tt.elem_type, dims)


def _attributes(node: onnx.NodeProto) -> list[tuple]:
    """(name, value) per attribute; a tensor attribute (a Constant's value) as its summary, compared
    by value separately."""
    out = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.TENSOR:
            out.append((a.name, _tensor_summary(a.t)))
        elif a.type == onnx.AttributeProto.GRAPH:
            out.append((a.name, "graph"))
        else:
            out.append((a.name, onnx.helper.get_attribute_value(a)))
    return out


def structure(model: onnx.ModelProto) -> dict:
    """Everything about the graph but the float values, in a form ``==`` compares."""
    g = model.graph
    return {
        "opsets": sorted((o.domain, o.version) for o in model.opset_import),
        "inputs": [_value_info(v) for v in g.input],
        "outputs": [_value_info(v) for v in g.output],
        "initializers": [_tensor_summary(t) for t in g.initializer],
        "nodes": [(n.op_type, n.domain, tuple(n.input), tuple(n.output), _attributes(n)) for n in g.node],
    }


def _weights(model: onnx.ModelProto) -> list[tuple[str, np.ndarray]]:
    """The initializers and the Constant nodes' tensors, as arrays, in graph order."""
    g = model.graph
    found = [(t.name, numpy_helper.to_array(t)) for t in g.initializer]
    for n in g.node:
        found += [(f"{n.output[0]}.{a.name}", numpy_helper.to_array(a.t)) for a in n.attribute
                  if a.type == onnx.AttributeProto.TENSOR]
    return found


def assert_same_model(got: str | Path, want: str | Path, feeds: dict[str, np.ndarray] | None = None,
                      rtol: float = WEIGHT_RTOL, atol: float = WEIGHT_ATOL, output_atol: float = OUTPUT_ATOL) -> None:
    """AssertionError naming the first difference between the ONNX files ``got`` and ``want`` beyond
    the tolerances; with ``feeds``, both are also run (onnxruntime, CPU) and their outputs compared."""
    a, b = onnx.load(str(got)), onnx.load(str(want))
    sa, sb = structure(a), structure(b)
    for key in sa:
        assert sa[key] == sb[key], f"the graphs differ in their {key}"
    for (name, x), (_, y) in zip(_weights(a), _weights(b)):
        if np.issubdtype(x.dtype, np.floating):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"weight {name}")
        else:
            np.testing.assert_array_equal(x, y, err_msg=f"weight {name}")
    if feeds is not None:
        from engines.common.onnx_runtime import ort_session

        outs_a = ort_session(got, intra_threads=1).run(None, feeds)
        outs_b = ort_session(want, intra_threads=1).run(None, feeds)
        for name, x, y in zip(sa["outputs"], outs_a, outs_b):
            np.testing.assert_allclose(x, y, rtol=0, atol=output_atol, err_msg=f"output {name[0]}")
