"""ONNX export of the verifier: onnxruntime must match torch to 1e-4 on real images."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from engines.watermark import WatermarkConfig
from engines.watermark.carriers import decode_stats, get_verifier
from engines.watermark.image_io import load_example as load
from engines.watermark.image_io import luminance, resize
from engines.watermark.onnx_export import export_verifier, onnx_stats, verify_onnx


@pytest.mark.parametrize("name", ["forest", "sunrise"])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_onnx_verifier_matches_torch(tmp_path, name, scale):
    img = load(name) if scale == 1.0 else resize(load(name), scale)
    cfg = WatermarkConfig()
    h, w = img.shape[:2]
    path = export_verifier("onnx-key", cfg, h, w, tmp_path / "v.onnx")
    got = onnx_stats(img, "onnx-key", cfg, path)
    ver, car = get_verifier("onnx-key", cfg, h, w)
    with torch.no_grad():
        ref = ver(torch.tensor(luminance(img), dtype=torch.float32)).numpy()
    np.testing.assert_allclose(got, ref, atol=1e-4, rtol=0)
    a, b = decode_stats(got, car, cfg), decode_stats(ref, car, cfg)
    np.testing.assert_allclose(a["scores"], b["scores"], atol=1e-4, rtol=0)
    assert verify_onnx(img, "onnx-key", cfg, path).detected == a["detected"]
