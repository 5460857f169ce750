"""Panorama watermark: keyed bits in spherical harmonics, read back from SO(3)-invariant bispectra.

>>> from engines.watermark import WatermarkConfig
>>> WatermarkConfig().bits
64
"""
from engines.watermark.attacks import ATTACKS, attack
from engines.watermark.carriers import Carriers, Verifier, carriers_for
from engines.watermark.config import TIERS, WatermarkConfig
from engines.watermark.cost import embed_seconds, wait_words
from engines.watermark.embedding import EmbedResult, embed
from engines.watermark.errors import (
    EmbedError,
    ImageFormatError,
    KeyInputError,
    MessageError,
)
from engines.watermark.evaluate import rotation_sweep
from engines.watermark.image_io import (
    EXAMPLES,
    example_path,
    load_example,
    load_image,
    load_image_noted,
    prepare_panorama,
    resize,
    validate_image,
)
from engines.watermark.metrics import psnr, ssim, ws_psnr
from engines.watermark.payload import text_capacity
from engines.watermark.precheck import check_embeddable, min_size
from engines.watermark.projections import cubemap_round_trip
from engines.watermark.rotation import (
    matrix_to_euler,
    random_rotation,
    rotate_equirect,
    rotate_equirect_matrix,
)
from engines.watermark.verification import VerifyResult, bit_accuracy, verify

__all__ = [
    "ATTACKS",
    "EXAMPLES",
    "TIERS",
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
    "check_embeddable",
    "cubemap_round_trip",
    "embed",
    "embed_seconds",
    "example_path",
    "load_example",
    "load_image",
    "load_image_noted",
    "matrix_to_euler",
    "min_size",
    "prepare_panorama",
    "psnr",
    "random_rotation",
    "resize",
    "rotate_equirect",
    "rotate_equirect_matrix",
    "rotation_sweep",
    "ssim",
    "text_capacity",
    "validate_image",
    "verify",
    "wait_words",
    "ws_psnr",
]
