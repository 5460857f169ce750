"""A short report of what this machine offers the engines (used by the About tab and tests)."""
from __future__ import annotations

import platform

import onnxruntime as ort
import torch

from engines.common.backbone import gguf_path
from engines.common.device import get_device
from engines.common.errors import BackboneUnavailable
from engines.common.onnx_runtime import providers


def environment_report() -> dict[str, str]:
    """Versions, compute device and backbone availability, as strings for display.

    >>> environment_report()["torch"].startswith("2.")
    True
    """
    try:
        gguf = f"{gguf_path().name} ({gguf_path().stat().st_size / 2**20:.1f} MiB)"
    except BackboneUnavailable as exc:
        gguf = f"unavailable: {exc}"
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": str(get_device()),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "not available",
        "onnxruntime": f"{ort.__version__} ({', '.join(providers())})",
        "cpu threads": str(torch.get_num_threads()),
        "language model": gguf,
    }
