"""Typed errors of the watermark engine (all are ``InputError``, hence ``ValueError``)."""
from engines.common.errors import InputError


class ImageFormatError(InputError):
    """The image is not an 8-bit RGB 2:1 panorama of a usable size."""


class MessageError(InputError):
    """The message does not fit the configured capacity or is malformed."""


class KeyInputError(InputError):
    """The secret key is empty or unusable."""


class EmbedError(InputError):
    """The watermark could not be embedded into this image with the margin it needs to be read."""
