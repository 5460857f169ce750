"""Export the verifier (luminance map -> carrier statistics, Eq. C) to ONNX and run it in ORT.

The exported graph holds the key's carrier tables (which triples, which gains), so an exported
file is as secret as the key. One file per (key, config, image size); files are written to the
cache dir unless a path is given.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from engines.common.onnx_runtime import ort_session
from engines.common.paths import CACHE_DIR
from engines.watermark.carriers import carriers_for, get_verifier
from engines.watermark.config import WatermarkConfig
from engines.watermark.image_io import luminance, validate_image
from engines.watermark.verification import VerifyResult, verify_result


def default_path(key: str, config: WatermarkConfig, height: int, width: int) -> Path:
    """Cache path of the exported verifier for this key, config and size."""
    tag = hashlib.sha256(f"{key}\x00{config!r}\x00{height}x{width}".encode()).hexdigest()[:16]
    return CACHE_DIR / "watermark" / f"verifier-{height}x{width}-{tag}.onnx"


def export_verifier(key: str, config: WatermarkConfig | None = None, height: int = 512, width: int = 1024,
                    path: str | Path | None = None) -> Path:
    """Write the float32 verifier graph for ``key`` to ``path`` (input ``y``: H x W luminance).

    >>> import tempfile, pathlib
    >>> p = export_verifier("k1", height=256, width=512, path=pathlib.Path(tempfile.mkdtemp()) / "v.onnx")
    >>> p.suffix
    '.onnx'
    """
    cfg = config or WatermarkConfig()
    ver, _ = get_verifier(key, cfg, height, width)
    ver_cpu = _cpu_copy(ver)
    out = Path(path) if path is not None else default_path(key, cfg, height, width)
    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(height, width, dtype=torch.float32)
    torch.onnx.export(ver_cpu, (dummy,), str(out), input_names=["y"], output_names=["stats"],
                      dynamo=False, opset_version=17)
    return out


def _cpu_copy(ver: torch.nn.Module) -> torch.nn.Module:
    import copy

    return copy.deepcopy(ver).to("cpu").float().eval()


def onnx_stats(image: np.ndarray, key: str, config: WatermarkConfig | None = None,
               path: str | Path | None = None) -> np.ndarray:
    """Carrier statistics of ``image`` computed by onnxruntime (exporting on first use)."""
    cfg = config or WatermarkConfig()
    image = validate_image(image, cfg.max_width)
    h, w = image.shape[:2]
    p = Path(path) if path is not None else default_path(key, cfg, h, w)
    if not p.is_file():
        export_verifier(key, cfg, h, w, p)
    sess = ort_session(p)
    return sess.run(None, {"y": luminance(image).astype(np.float32)})[0]


def verify_onnx(image: np.ndarray, key: str, config: WatermarkConfig | None = None,
                path: str | Path | None = None) -> VerifyResult:
    """Same as :func:`engines.watermark.verify`, with the statistics computed in onnxruntime."""
    import time

    t0 = time.perf_counter()
    cfg = config or WatermarkConfig()
    stats = onnx_stats(image, key, cfg, path)
    return verify_result(stats, carriers_for(key, cfg), cfg, t0)
