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
from engines.watermark.errors import (
    EmbedError,
    ImageFormatError,
    KeyInputError,
    MessageError,
)
from engines.watermark.evaluate import rotation_sweep
from engines.watermark.image import (
    ATTACKS,
    EXAMPLES,
    attack,
    example_path,
    load_example,
    load_image,
    load_image_noted,
    matrix_to_euler,
    prepare_panorama,
    random_rotation,
    resize,
    rotate_equirect,
    rotate_equirect_matrix,
    validate_image,
    ws_psnr,
)
from engines.watermark.payload import text_capacity
from engines.watermark.projections import cubemap_round_trip

__all__ = [
    "ATTACKS",
    "EXAMPLES",
    "Carriers",
    "EmbedError",
    "EmbedResult",
    "ImageFormatError",
    "KeyInputError",
    "MessageError",
    "Verifier",
    "VerifyResult",
    "WatermarkConfig",
    "attack",
    "bit_accuracy",
    "carriers_for",
    "cubemap_round_trip",
    "embed",
    "example_path",
    "load_example",
    "load_image",
    "load_image_noted",
    "matrix_to_euler",
    "prepare_panorama",
    "random_rotation",
    "resize",
    "rotate_equirect",
    "rotate_equirect_matrix",
    "rotation_sweep",
    "text_capacity",
    "validate_image",
    "verify",
    "ws_psnr",
]
