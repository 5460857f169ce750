"""Reading panoramas: decoding files safely, checking that an array is a usable equirectangular
panorama, making it one (pad, stretch, downscale), the bundled examples and the luminance channel."""
from __future__ import annotations

import numpy as np

from engines.watermark.errors import ImageFormatError

MIN_WIDTH = 256
#: Largest image (pixels, from the file header) that :func:`load_image` decodes at all: 40 MP is
#: 120 MB as 8-bit RGB. Larger files are refused before any pixel is decoded.
MAX_DECODE_PIXELS = 40_000_000


def validate_image(image: np.ndarray, max_width: int = 4096) -> np.ndarray:
    """Check an equirectangular panorama and return it as uint8 ``H x W x 3``.

    Raises :class:`ImageFormatError` (an ``InputError``) saying what to change: grayscale,
    RGBA and 16-bit inputs, non-2:1 aspect ratios, images under 256 px wide and images wider
    than ``max_width`` are refused (the UI offers padding/resizing/downscaling first).

    >>> validate_image(np.zeros((128, 256, 3), np.uint8)).shape
    (128, 256, 3)
    """
    if not isinstance(image, np.ndarray):
        raise ImageFormatError(f"expected a numpy image array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ImageFormatError(f"expected 8-bit pixels (uint8), got {image.dtype}; convert to 8-bit RGB "
                               "first (16-bit and float images are not supported)")
    if image.ndim == 2:
        raise ImageFormatError("the image is grayscale (one channel); convert it to RGB first")
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ImageFormatError(f"expected an H x W x 3 RGB image, got shape {image.shape}")
    if image.shape[2] == 4:
        raise ImageFormatError("the image has an alpha channel (RGBA); flatten it to RGB first")
    h, w = image.shape[:2]
    if w < MIN_WIDTH:
        raise ImageFormatError(f"the image is {w} px wide; panoramas must be at least {MIN_WIDTH} px wide")
    if w != 2 * h:
        raise ImageFormatError(f"an equirectangular panorama is 2:1 (width = 2 x height); this one is "
                               f"{w}x{h}. Pad or resize it to {w}x{w // 2} first")
    if w > max_width:
        raise ImageFormatError(f"the image is {w} px wide; the limit is {max_width} px. Downscale it first")
    return image


def luminance(image: np.ndarray) -> np.ndarray:
    """Mean of R, G, B as float64 (the channel the watermark lives in)."""
    return image.astype(np.float64).mean(axis=2)



def resize(image: np.ndarray, scale: float) -> np.ndarray:
    """Resize by ``scale`` with Pillow's bicubic filter (keeps 2:1)."""
    from PIL import Image

    nw = max(2, round(image.shape[1] * scale) // 2 * 2)
    return np.asarray(Image.fromarray(image).resize((nw, nw // 2), Image.BICUBIC))



EXAMPLES = ("forest", "courtyard", "interior", "sunrise")


def example_path(name: str):
    """Path of a bundled CC0 example panorama (``assets/watermark/<name>.png``)."""
    from engines.common.paths import ASSETS_DIR

    if name not in EXAMPLES:
        raise ImageFormatError(f"unknown example {name!r}; choose one of {', '.join(EXAMPLES)}")
    return ASSETS_DIR / "watermark" / f"{name}.png"


def load_example(name: str) -> np.ndarray:
    """A bundled example panorama as uint8 ``512 x 1024 x 3``.

    >>> load_example("forest").shape
    (512, 1024, 3)
    """
    from PIL import Image

    return np.asarray(Image.open(example_path(name)).convert("RGB"))



#: EXIF Orientation values other than 1 (as stored -> as shown), in words.
ORIENTATIONS = {2: "mirrored left to right", 3: "rotated 180 degrees", 4: "mirrored top to bottom",
                5: "mirrored and rotated 90 degrees", 6: "rotated 90 degrees clockwise",
                7: "mirrored and rotated 90 degrees", 8: "rotated 90 degrees counter-clockwise"}


def decode_notices(pil) -> list[str]:
    """What decoding ``pil`` (an opened Pillow image) to 8-bit RGB drops without refusing it, for
    the user to read: the low byte of 16-bit-per-channel colour (a 48-bit PNG, which Pillow opens
    as 8-bit RGB) and every frame of an animation (GIF, APNG, WebP) but the first."""
    notes = []
    rawmodes = [str(t[3] if isinstance(t[3], str) else (t[3] or ("",))[0]) for t in (pil.tile or []) if len(t) > 3]
    if any(";16" in r for r in rawmodes):
        notes.append("the image has 16 bits per channel (48-bit colour); it was reduced to 8 bits per channel, "
                     "as the watermark works on 8-bit RGB")
    frames = getattr(pil, "n_frames", 1)
    if getattr(pil, "is_animated", False) or frames > 1:
        notes.append(f"the image is animated ({frames} frames); only the first frame is used")
    return notes


def load_image(source, max_pixels: int = MAX_DECODE_PIXELS, max_size: str = "") -> np.ndarray:
    """:func:`load_image_noted` without its notices (callers that show none)."""
    return load_image_noted(source, max_pixels, max_size)[0]


def load_image_noted(source, max_pixels: int = MAX_DECODE_PIXELS, max_size: str = "") -> tuple[np.ndarray, list[str]]:
    """Decode an image file (path or file object) to uint8 ``H x W x 3`` RGB, refusing what the
    watermark cannot use with :class:`ImageFormatError` saying what to change; returns the pixels
    and the notices of :func:`decode_notices` (what was dropped: 16-bit depth, later frames). An EXIF
    orientation is applied, as viewers do, and a notice says so.

    The pixel count is read from the file header and checked against ``max_pixels`` BEFORE any
    pixel is decoded (a small PNG can hold a huge image). Grayscale, alpha and 16-bit/float
    images are refused (converting them silently would change the picture the user sees);
    ``max_size`` is the size the message names as the limit (default: the pixel count).

    >>> img, notes = load_image_noted(example_path("forest"))
    >>> img.shape, notes
    ((512, 1024, 3), [])
    """
    from PIL import Image

    try:
        pil = Image.open(source)
    except Exception as exc:  # noqa: BLE001 - Pillow raises OSError, SyntaxError, struct.error, ... on bad files
        raise ImageFormatError(f"could not read the image ({type(exc).__name__}); upload a PNG or JPEG") from None
    with pil:
        w, h = pil.size
        if w * h > max_pixels:
            limit = max_size or f"{max_pixels / 1e6:.1f} MP"
            raise ImageFormatError(f"the image is {w} x {h} px ({w * h / 1e6:.1f} MP); the limit here is {limit}. "
                                   "Downscale it first")
        mode = pil.mode
        if mode in ("I;16", "I;16B", "I;16L", "I", "F"):
            raise ImageFormatError(f"the image has {mode} pixels (16-bit or float); save it as 8-bit RGB first")
        if mode in ("L", "1", "LA"):
            raise ImageFormatError("the image is grayscale; save it as RGB first")
        if mode in ("RGBA", "PA") or (mode == "P" and "transparency" in pil.info):
            raise ImageFormatError("the image has an alpha channel (transparency); flatten it to RGB first")
        notes = decode_notices(pil)
        try:
            orientation = int(pil.getexif().get(0x0112, 1) or 1)
        except Exception:  # noqa: BLE001 - a malformed EXIF block is ignored, as viewers do
            orientation = 1
        try:
            if orientation in ORIENTATIONS:  # turn it the way every viewer shows it
                from PIL import ImageOps

                pil = ImageOps.exif_transpose(pil)
                notes.append(f"the file's EXIF orientation ({ORIENTATIONS[orientation]}) was applied, "
                             "as image viewers show it")
            return np.asarray(pil.convert("RGB")), notes
        except Exception as exc:  # noqa: BLE001 - a truncated or corrupt body fails only here
            raise ImageFormatError(f"could not decode the image ({type(exc).__name__}); upload a PNG or JPEG") from None


def prepare_panorama(source, fit: str = "refuse", max_width: int = 2048) -> tuple[np.ndarray, list[str]]:
    """Load a panorama (path or array) and make it usable, saying what was changed.

    ``fit`` decides what happens to an image that is not 2:1: ``"refuse"`` (raise, naming the
    two options), ``"pad"`` (black bands to 2:1) or ``"resize"`` (stretch to 2:1). Images wider
    than ``max_width`` are downscaled with a notice. Files are decoded by :func:`load_image_noted`
    (its notices lead the list)
    (header pixel cap first; grayscale, RGBA/palette-with-alpha and 16-bit/float refused with a
    message saying how to convert them).

    >>> img, notes = prepare_panorama(load_example("forest"))
    >>> img.shape, notes
    ((512, 1024, 3), [])
    """
    from PIL import Image

    if fit not in ("refuse", "pad", "resize"):
        raise ImageFormatError(f"fit must be refuse, pad or resize, not {str(fit)[:40]!r}")
    notes: list[str] = []
    if isinstance(source, np.ndarray):
        arr = source
    else:
        arr, notes = load_image_noted(source)
    if arr.ndim == 3 and arr.shape[2] == 3 and arr.dtype == np.uint8 and arr.shape[1] != 2 * arr.shape[0]:
        h, w = arr.shape[:2]
        side = max(w, 2 * h)  # width of the 2:1 result of padding or stretching
        if fit != "refuse" and side * side // 2 > MAX_DECODE_PIXELS:
            raise ImageFormatError(f"making this {w} x {h} px image 2:1 would give {side} x {side // 2} px, over the "
                                   f"{MAX_DECODE_PIXELS / 1e6:.0f} MP limit; crop it closer to 2:1 first")
        if fit == "pad":
            if w >= 2 * h:
                tgt_h = w // 2 + (w % 2)
                padded = np.zeros((tgt_h, 2 * tgt_h, 3), np.uint8)
                top = (tgt_h - h) // 2
                padded[top:top + h, :w] = arr
                arr = padded
            else:
                padded = np.zeros((h, 2 * h, 3), np.uint8)
                left = (2 * h - w) // 2
                padded[:, left:left + w] = arr
                arr = padded
            notes.append(f"padded from {w}x{h} to {arr.shape[1]}x{arr.shape[0]} (2:1) with black")
        elif fit == "resize":
            new_w = max(w, 2 * h) // 2 * 2
            arr = np.asarray(Image.fromarray(arr).resize((new_w, new_w // 2), Image.BICUBIC))
            notes.append(f"resized from {w}x{h} to {new_w}x{new_w // 2} (2:1)")
    if arr.ndim == 3 and arr.shape[2] == 3 and arr.dtype == np.uint8 and arr.shape[1] > max_width:
        w0 = arr.shape[1]
        arr = resize(arr, max_width / w0)
        notes.append(f"downscaled from {w0} to {arr.shape[1]} px wide (limit {max_width} px)")
    return validate_image(arr, max_width=max_width), notes
