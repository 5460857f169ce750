"""Panorama watermark: keyed bits in spherical harmonics, read back from SO(3)-invariant bispectra.

>>> from engines.watermark import WatermarkConfig
>>> WatermarkConfig().bits
64
"""
from engines.watermark.core import (
    Carriers,
    EmbedResult,
    Verifier,
    VerifyResult,
    WatermarkConfig,
    bit_accuracy,
    carriers_for,
    embed,
    verify,
)
from engines.watermark.errors import ImageFormatError, KeyInputError, MessageError
from engines.watermark.image import (
    random_rotation,
    rotate_equirect,
    rotate_equirect_matrix,
)

__all__ = [
    "Carriers", "EmbedResult", "ImageFormatError", "KeyInputError", "MessageError", "Verifier",
    "VerifyResult", "WatermarkConfig", "bit_accuracy", "carriers_for", "embed", "random_rotation",
    "rotate_equirect", "rotate_equirect_matrix", "verify",
]
