"""Block-quantised projection weights of the SLD head, in onnxruntime's ``MatMulNBits`` layout.

The head's projection ``W_p`` (``proj_dim x k*H``, 2.65 MB in float32 for the shipped ensemble) is
two thirds of the bytes its step reads per token, and on a CPU whose caches are contended the step
is bound by reading them. ``MatMulNBits`` stores such a weight as ``bits``-bit codes with one float
scale per block of ``block`` inputs, and with ``accuracy_level=0`` it dequantises them and multiplies
in float32 (activations untouched):

* per output row ``n`` and block ``b``: ``s_nb = max|W_nb| / qmax`` with ``qmax = 2**(bits-1) - 1``,
  ``q_nb = round(W_nb / s_nb)`` in ``[-qmax, qmax]`` (stored as ``q + 2**(bits-1)``, the implicit zero
  point of symmetric codes, packed low nibble first for 4 bits);
* ``y = x @ (q s).T + bias`` in float32.

So a quantised head keeps float projection weights that lie on that grid (:func:`snap_to_grid`) and
its torch path stays one float matmul; the ONNX export replaces the float ``Gemm`` by a
``MatMulNBits`` with the grid's codes (:func:`replace_gemm_with_matmulnbits`), and both give the same
risks to float32 rounding (the map from input to output is continuous: no activation rounding,
which would make rare inputs near a rounding boundary differ by ~1e-3).
"""
from __future__ import annotations

import numpy as np
import torch

BLOCK = 32  # inputs per quantisation block (MatMulNBits ``block_size``)
BITS = 4


def _qmax(bits: int) -> int:
    if bits not in (4, 8):
        raise ValueError(f"bits={bits}: MatMulNBits codes of 4 or 8 bits are supported here")
    return 2 ** (bits - 1) - 1


def quantize_weight(w: torch.Tensor, bits: int = BITS, block: int = BLOCK) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-block codes and scales of a ``(N, K)`` weight: ``(N, K/block, block)`` int8 in
    ``[-qmax, qmax]`` and ``(N, K/block)`` float32, with ``w ≈ codes * scales[..., None]``.

    >>> q, s = quantize_weight(torch.tensor([[0.5, -1.0] * 16]))
    >>> q.shape, int(q[0, 0, 0]), int(q[0, 0, 1]), round(float(s[0, 0]) * 7, 6)
    (torch.Size([1, 1, 32]), 4, -7, 1.0)
    """
    qmax = _qmax(bits)
    n, k = w.shape
    if k % block:
        raise ValueError(f"input width {k} is not a multiple of the block size {block}")
    wb = w.detach().float().reshape(n, k // block, block)
    scale = wb.abs().amax(-1) / qmax
    codes = torch.round(wb / torch.where(scale > 0, scale, torch.ones_like(scale)).unsqueeze(-1))
    return codes.clamp(-qmax, qmax).to(torch.int8), scale


def snap_to_grid(w: torch.Tensor, bits: int = BITS, block: int = BLOCK) -> torch.Tensor:
    """``w`` moved to its block grid, ``codes * scales`` (float, same shape): what the kernel
    multiplies by. Re-quantising the result gives back the same codes.

    >>> w = torch.randn(4, 64); g = snap_to_grid(w)
    >>> torch.equal(quantize_weight(g)[0], quantize_weight(w)[0]), torch.equal(snap_to_grid(g), g)
    (True, True)
    """
    q, scale = quantize_weight(w, bits, block)
    return (q.float() * scale.unsqueeze(-1)).reshape(w.shape).to(w.dtype)


def matmulnbits_initializers(codes: torch.Tensor, scales: torch.Tensor, bits: int = BITS) -> tuple[np.ndarray, np.ndarray]:
    """The ``B`` (uint8 ``(N, K/block, block*bits/8)``: codes + ``2**(bits-1)``, two 4-bit codes per
    byte low nibble first) and ``scales`` (``(N, K/block)``) inputs of a ``MatMulNBits`` node."""
    _qmax(bits)
    u = (codes.to(torch.int16) + 2 ** (bits - 1)).to(torch.uint8).numpy()
    if bits == 4:
        u = (u[..., 0::2] | (u[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(u), scales.float().numpy()


def replace_gemm_with_matmulnbits(model, weight_name: str, codes: torch.Tensor, scales: torch.Tensor,
                                  bits: int = BITS, accuracy_level: int = 0) -> int:
    """Swap every ``Gemm`` (``transB=1``) of an ONNX ``model`` that reads ``weight_name`` for a
    ``MatMulNBits`` with these codes (bias kept); drop the float weight. Returns the number swapped."""
    from onnx import helper, numpy_helper

    b_arr, s_arr = matmulnbits_initializers(codes, scales, bits)
    n_out, kb, block = codes.shape
    nodes, swapped = [], 0
    for node in model.graph.node:
        if node.op_type == "Gemm" and len(node.input) > 1 and node.input[1] == weight_name:
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            if attrs.get("transB", 0) != 1 or attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0:
                raise ValueError(f"{node.name}: only Gemm(x, W, b, transB=1) can be swapped")
            bias = node.input[2] if len(node.input) > 2 else ""
            nodes.append(helper.make_node(
                "MatMulNBits", [node.input[0], weight_name + "_qnb", weight_name + "_scales", "", "", bias],
                list(node.output), name=(node.name or weight_name) + "_qnb", domain="com.microsoft",
                K=kb * block, N=n_out, bits=bits, block_size=block, accuracy_level=accuracy_level))
            swapped += 1
        else:
            nodes.append(node)
    if not swapped:
        raise ValueError(f"no Gemm reads {weight_name}")
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    keep = [i for i in model.graph.initializer if i.name != weight_name]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep + [numpy_helper.from_array(b_arr, weight_name + "_qnb"),
                                           numpy_helper.from_array(s_arr, weight_name + "_scales")])
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return swapped
