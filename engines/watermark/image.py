"""Image checks, rotation of equirectangular panoramas, quality metrics and attacks."""
from __future__ import annotations

import io
import math

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


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB over all channels (8-bit peak 255).

    >>> psnr(np.zeros((2, 2, 3), np.uint8), np.ones((2, 2, 3), np.uint8)) > 48
    True
    """
    if a.dtype == np.uint8 and b.dtype == np.uint8:  # exact integer sum, a fraction of the float64 cost at 4K
        d = a.astype(np.int16) - b.astype(np.int16)
        mse = float(np.square(d, dtype=np.int32).sum(dtype=np.int64)) / d.size
    else:
        mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def ws_psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Weighted-to-spherically-uniform PSNR (Sun, Lu and Yu 2017) of two equirectangular images, dB.

    Each pixel row counts by the area it covers on the sphere, ``w_i = cos(latitude_i)`` with
    ``latitude_i = (1/2 - (i + 1/2)/H) pi``, so the stretched polar rows weigh less than in plain
    PSNR: ``WS-PSNR = 10 log10(255^2 / (sum_i w_i sum_j e_ij^2 / (W sum_i w_i)))`` over all channels.

    >>> x = np.zeros((4, 8, 3), np.uint8); y = x.copy(); y[0] = 10   # error only in a polar row
    >>> round(psnr(x, y), 2), round(ws_psnr(x, y), 2)
    (34.15, 36.47)
    """
    h = a.shape[0]
    w = np.cos((0.5 - (np.arange(h) + 0.5) / h) * np.pi)
    err = (a.astype(np.float64) - b.astype(np.float64)) ** 2
    per_row = err.reshape(h, -1).mean(axis=1)
    wmse = float(np.sum(w * per_row) / np.sum(w))
    return float("inf") if wmse == 0 else 10 * math.log10(255.0 ** 2 / wmse)


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM (Wang et al. 2004; Gaussian window sigma 1.5, K1=0.01, K2=0.03) over channels.

    >>> x = np.random.default_rng(0).integers(0, 255, (32, 32, 3)).astype(np.uint8)
    >>> round(ssim(x, x), 6)
    1.0
    """
    from scipy.ndimage import gaussian_filter

    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    vals = []
    # float32 maps (float64 sums): half the memory traffic of float64 at 4K, same value to ~1e-6
    for ch in range(a.shape[2] if a.ndim == 3 else 1):
        x = (a[..., ch] if a.ndim == 3 else a).astype(np.float32)
        y = (b[..., ch] if b.ndim == 3 else b).astype(np.float32)
        f = lambda z: gaussian_filter(z, 1.5, truncate=3.5)
        mx, my = f(x), f(y)
        sxx, syy, sxy = f(x * x) - mx * mx, f(y * y) - my * my, f(x * y) - mx * my
        m = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
        vals.append(m[3:-3, 3:-3].mean(dtype=np.float64))
    return float(np.mean(vals))


def check_angles(yaw: float, pitch: float, roll: float) -> tuple[float, float, float]:
    """The three rotation angles as finite floats in degrees: yaw and roll in [-360, 360], pitch in
    [-90, 90] (NaN, infinities and text are refused with :class:`ImageFormatError`).

    >>> check_angles(10, -5, 0)
    (10.0, -5.0, 0.0)
    """
    out = []
    for name, v, lim in (("yaw (deg)", yaw, 360.0), ("pitch (deg)", pitch, 90.0), ("roll (deg)", roll, 360.0)):
        try:
            x = float(v)
        except (TypeError, ValueError, OverflowError):
            raise ImageFormatError(f"{name} must be a number of degrees") from None
        if not math.isfinite(x) or abs(x) > lim:
            raise ImageFormatError(f"{name} must be a finite angle between {-lim:g} and {lim:g} degrees")
        out.append(x)
    return out[0], out[1], out[2]


def euler_matrix(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Rotation matrix ``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` from angles in degrees."""
    y, p, r = (math.radians(v) for v in (yaw, pitch, roll))
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    return rz @ ry @ rx


def matrix_to_euler(rot: np.ndarray) -> tuple[float, float, float]:
    """Inverse of :func:`euler_matrix` (degrees)."""
    pitch = math.degrees(math.asin(max(-1.0, min(1.0, -rot[2, 0]))))
    yaw = math.degrees(math.atan2(rot[1, 0], rot[0, 0]))
    roll = math.degrees(math.atan2(rot[2, 1], rot[2, 2]))
    return yaw, pitch, roll


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A Haar-random rotation matrix (QR of a Gaussian matrix with the sign fix, det +1)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def _keys_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys cubic-convolution weights (a = -0.5) for taps at offsets -1, 0, 1, 2."""
    a = -0.5
    out = []
    for d in (1 + t, t, 1 - t, 2 - t):
        d = np.abs(d)
        w = np.where(d <= 1, (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1,
                     np.where(d < 2, a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a, 0.0))
        out.append(w)
    return out


def sample_equirect(image: np.ndarray, theta: np.ndarray, phi: np.ndarray,
                    interpolation: str = "bicubic") -> np.ndarray:
    """Sample an equirectangular image at sphere points, wrapping in longitude and across poles."""
    h, w = image.shape[:2]
    pad = 2
    src = image.astype(np.float32)
    if src.ndim == 2:
        src = src[..., None]
    # rows beyond a pole are the rows on the other side, half a turn away
    top = np.roll(src[:pad][::-1], w // 2, axis=1)
    bottom = np.roll(src[-pad:][::-1], w // 2, axis=1)
    src = np.concatenate([top, src, bottom], axis=0)
    src = np.concatenate([src[:, -pad:], src, src[:, :pad]], axis=1)
    fy = theta / np.pi * h - 0.5 + pad
    fx = np.mod(phi / (2 * np.pi) * w - 0.5, w) + pad
    if interpolation == "nearest":
        out = src[np.clip(np.rint(fy).astype(int), 0, h + 2 * pad - 1), np.rint(fx).astype(int) % (w + 2 * pad)]
    elif interpolation == "bilinear":
        y0, x0 = np.floor(fy).astype(int), np.floor(fx).astype(int)
        ty, tx = (fy - y0)[..., None], (fx - x0)[..., None]
        out = ((1 - ty) * ((1 - tx) * src[y0, x0] + tx * src[y0, x0 + 1])
               + ty * ((1 - tx) * src[y0 + 1, x0] + tx * src[y0 + 1, x0 + 1]))
    elif interpolation == "bicubic":
        y0, x0 = np.floor(fy).astype(int), np.floor(fx).astype(int)
        wy = [w.astype(np.float32) for w in _keys_weights(fy - y0)]
        wx = [w.astype(np.float32) for w in _keys_weights(fx - x0)]
        out = 0.0
        for i, wyi in enumerate(wy):
            yy = np.clip(y0 + i - 1, 0, h + 2 * pad - 1)
            row = 0.0
            for j, wxj in enumerate(wx):
                row = row + wxj[..., None] * src[yy, np.clip(x0 + j - 1, 0, w + 2 * pad - 1)]
            out = out + wyi[..., None] * row
    else:
        raise ImageFormatError(f"interpolation must be nearest, bilinear or bicubic, not {interpolation!r}")
    return out if image.ndim == 3 else out[..., 0]


def rotate_equirect_matrix(image: np.ndarray, rot: np.ndarray, interpolation: str = "bicubic") -> np.ndarray:
    """Rotate a panorama by the rotation matrix ``rot`` (active: content at ``x`` moves to ``rot @ x``)."""
    h, w = image.shape[:2]
    theta = (np.arange(h) + 0.5) * np.pi / h
    phi = (np.arange(w) + 0.5) * 2 * np.pi / w
    st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
    xyz = np.stack([st * np.cos(phi)[None], st * np.sin(phi)[None], np.broadcast_to(ct, (h, w))], axis=-1)
    src = xyz @ np.asarray(rot)  # rot^T x for each output direction x
    s_theta = np.arccos(np.clip(src[..., 2], -1, 1))
    s_phi = np.arctan2(src[..., 1], src[..., 0])
    out = sample_equirect(image, s_theta, s_phi, interpolation)
    if image.dtype == np.uint8:
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return out


def rotate_equirect(image: np.ndarray, yaw: float, pitch: float, roll: float,
                    interpolation: str = "bicubic") -> np.ndarray:
    """Rotate an equirectangular panorama in 3D by yaw, pitch and roll (degrees), resampling.

    The rotation is ``Rz(yaw) Ry(pitch) Rx(roll)``; pixels are resampled with Keys bicubic
    (``a = -0.5``), bilinear or nearest interpolation, wrapping in longitude and across the
    poles. uint8 in, uint8 out.

    >>> img = np.random.default_rng(0).integers(0, 255, (128, 256, 3)).astype(np.uint8)
    >>> bool((rotate_equirect(img, 360 / 256 * 4, 0, 0) == np.roll(img, 4, axis=1)).all())
    True
    """
    validate_image(image, max_width=1 << 16) if image.ndim == 3 else None
    return rotate_equirect_matrix(image, euler_matrix(*check_angles(yaw, pitch, roll)), interpolation)


def jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """JPEG round trip through Pillow at ``quality`` (4:2:0 chroma subsampling, Pillow's default)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=int(quality))
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


def gaussian_noise(image: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Add white Gaussian noise of std ``sigma`` (in 0..1 units, e.g. 2/255) and requantise."""
    noisy = image.astype(np.float64) + rng.normal(0, sigma * 255.0, image.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def gaussian_blur(image: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    """Gaussian blur (std ``sigma`` pixels) per channel, wrapping in longitude."""
    from scipy.ndimage import gaussian_filter

    out = gaussian_filter(image.astype(np.float64), sigma=(sigma, sigma, 0), mode=("nearest", "wrap", "nearest"))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def resize(image: np.ndarray, scale: float) -> np.ndarray:
    """Resize by ``scale`` with Pillow's bicubic filter (keeps 2:1)."""
    from PIL import Image

    nw = max(2, round(image.shape[1] * scale) // 2 * 2)
    return np.asarray(Image.fromarray(image).resize((nw, nw // 2), Image.BICUBIC))


def mirror(image: np.ndarray) -> np.ndarray:
    """Horizontal mirror (an improper rotation of the sphere)."""
    return np.ascontiguousarray(image[:, ::-1])


def nadir_patch(image: np.ndarray, fraction: float = 0.1, style: str = "logo") -> np.ndarray:
    """Cover the bottom ``fraction`` of the rows, as 360 publishers hide the tripod. ``"logo"``: a
    grey disc with a dark ring and eight bright sectors (sharp, high-contrast edges: the nadir cap is
    a strip in equirect); ``"fill"``: the mean colour of the covered rows (a stitcher's plain fill).

    >>> img = load_example("sunrise")
    >>> out = nadir_patch(img)
    >>> bool((out[:460] == img[:460]).all()), bool((out[470:] != img[470:]).any())
    (True, True)
    """
    if style not in ("logo", "fill"):
        raise ImageFormatError(f"nadir patch style must be logo or fill, not {str(style)[:40]!r}")
    out = image.copy()
    h, w = image.shape[:2]
    rows = max(1, round(h * fraction))
    if style == "fill":
        out[h - rows:] = np.rint(image[h - rows:].reshape(-1, image.shape[2]).mean(axis=0)).astype(np.uint8)
        return out
    i = np.arange(h - rows, h)[:, None]
    j = np.arange(w)[None, :]
    rel = (h - i - 0.5) / rows  # 1 at the top of the patch, ~0 at the pole
    logo = np.full((rows, w), 160.0)
    logo[np.broadcast_to((rel > 0.55) & (rel < 0.75), logo.shape)] = 40.0
    logo[(rel < 0.5) & ((j * 8 // w) % 2 == 0)] = 230.0
    out[h - rows:] = np.clip(logo, 0, 255).astype(np.uint8)[..., None]
    return out


def rescale_round_trip(image: np.ndarray, width: int) -> np.ndarray:
    """Downscale to ``width`` px (Pillow bicubic, as a preview would) and back up to the original size."""
    from PIL import Image

    small = np.asarray(Image.fromarray(image).resize((width, width // 2), Image.BICUBIC))
    return np.asarray(Image.fromarray(small).resize((image.shape[1], image.shape[0]), Image.BICUBIC))


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


ATTACKS = ("none", "JPEG 75", "JPEG 50", "JPEG 90", "Gaussian noise 2/255", "Gaussian blur 1 px", "resize 0.5x",
           "rescale to 1/2 width and back", "cubemap round trip", "EAC round trip", "nadir logo (bottom 10 %)",
           "nadir fill (bottom 10 %)", "mirror")


def attack(image: np.ndarray, yaw: float = 0.0, pitch: float = 0.0, roll: float = 0.0,
           kind: str = "none", seed: int = 0, interpolation: str = "bicubic",
           max_width: int = 4096) -> np.ndarray:
    """Rotate (degrees; skipped when all angles are 0) and then apply one named attack.

    Cost is linear in pixels (16 bicubic taps of float32 RGB per output pixel), so images wider
    than ``max_width`` are refused; angles must be finite (:func:`check_angles`).

    >>> img = load_example("sunrise")
    >>> attack(img, 0, 0, 0, "resize 0.5x").shape
    (256, 512, 3)
    """
    validate_image(image, max_width=max_width)
    yaw, pitch, roll = check_angles(yaw, pitch, roll)
    if kind not in ATTACKS:
        raise ImageFormatError(f"unknown attack {str(kind)[:40]!r}; choose one of: {', '.join(ATTACKS)}")
    out = image
    if any(abs(a) > 1e-9 for a in (yaw, pitch, roll)):
        out = rotate_equirect(out, yaw, pitch, roll, interpolation)
    if kind == "none":
        return out
    if kind == "JPEG 75":
        return jpeg(out, 75)
    if kind == "JPEG 50":
        return jpeg(out, 50)
    if kind == "JPEG 90":
        return jpeg(out, 90)
    if kind == "rescale to 1/2 width and back":
        return rescale_round_trip(out, max(256, out.shape[1] // 4 * 2))
    if kind in ("cubemap round trip", "EAC round trip"):
        from engines.watermark.projections import cubemap_round_trip

        return cubemap_round_trip(out, eac=kind.startswith("EAC"))
    if kind == "nadir logo (bottom 10 %)":
        return nadir_patch(out, 0.1)
    if kind == "nadir fill (bottom 10 %)":
        return nadir_patch(out, 0.1, "fill")
    if kind == "Gaussian noise 2/255":
        return gaussian_noise(out, 2 / 255, np.random.default_rng(seed))
    if kind == "Gaussian blur 1 px":
        return gaussian_blur(out, 1.0)
    if kind == "resize 0.5x":
        return resize(out, 0.5)
    if kind == "mirror":
        return mirror(out)
    raise AssertionError(kind)  # every name in ATTACKS is handled above


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
    and the notices of :func:`decode_notices` (what was dropped: 16-bit depth, later frames).

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
