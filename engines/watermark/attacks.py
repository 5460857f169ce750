"""What happens to a panorama on its way to a viewer: compression, noise, blur, rescaling, cubemap
round trips, a logo over a polar cap, a mirror; :func:`attack` applies one by name after a rotation."""
from __future__ import annotations

import io

import numpy as np

from engines.watermark.errors import ImageFormatError
from engines.watermark.image_io import resize, validate_image
from engines.watermark.projections import (
    cubemap_round_trip,
    cubemap_to_equirect,
    equirect_to_cubemap,
)
from engines.watermark.rotation import check_angles, rotate_equirect


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



def mirror(image: np.ndarray) -> np.ndarray:
    """Horizontal mirror (an improper rotation of the sphere)."""
    return np.ascontiguousarray(image[:, ::-1])


def nadir_patch(image: np.ndarray, fraction: float = 0.1, style: str = "logo") -> np.ndarray:
    """Cover the bottom ``fraction`` of the rows, as 360 publishers hide the tripod. ``"logo"``: a
    grey disc with a dark ring and eight bright sectors (sharp, high-contrast edges: the nadir cap is
    a strip in equirect); ``"fill"``: the mean colour of the covered rows (a stitcher's plain fill).

    >>> from engines.watermark.image_io import load_example
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


LOGOS = ("classic", "dark", "light", "text")
"""Tripod covers :func:`logo_patch` draws: the ringed grey logo of :func:`nadir_patch`, a plain
near-black disc, a white disc with a grey ring and emblem, and a blue disc with white lettering."""


def _logo_face(style: str, n: int = 512) -> np.ndarray:
    """The cover as a flat ``n x n`` RGB picture (what a stitcher is given), disc inscribed."""
    from PIL import Image, ImageDraw, ImageFont

    bg = {"classic": (160, 160, 160), "dark": (18, 18, 20), "light": (246, 246, 244), "text": (24, 52, 120)}[style]
    im = Image.new("RGB", (n, n), bg)
    d = ImageDraw.Draw(im)
    c = n / 2
    if style == "light":
        d.ellipse([c - 0.86 * c, c - 0.86 * c, c + 0.86 * c, c + 0.86 * c], outline=(150, 150, 150), width=n // 40)
        d.regular_polygon((c, c, 0.45 * c), 3, fill=(205, 205, 200))
        d.ellipse([c - 0.12 * c, c - 0.12 * c, c + 0.12 * c, c + 0.12 * c], fill=(120, 120, 120))
    elif style == "text":
        font = ImageFont.load_default(size=n // 9)
        for line, y in (("360", 0.62), ("CAMERA", 0.92), ("® 2026", 1.22)):
            d.text((c, y * c), line, fill=(250, 250, 250), font=font, anchor="mm")
        d.ellipse([c - 0.8 * c, c - 0.8 * c, c + 0.8 * c, c + 0.8 * c], outline=(230, 190, 40), width=n // 64)
    return np.asarray(im)


def logo_patch(image: np.ndarray, fraction: float = 0.1, style: str = "classic") -> np.ndarray:
    """Cover the nadir with a tripod logo over the bottom ``fraction`` of the rows (a cap of
    ``180 * fraction`` degrees radius), as a stitcher draws it: a flat picture (:data:`LOGOS`) laid
    on the ground under the camera, i.e. mapped onto the cap in azimuthal equidistant coordinates,
    with an antialiased edge. ``"classic"`` is :func:`nadir_patch`'s logo.

    >>> from engines.watermark.image_io import load_example
    >>> img = load_example("sunrise")
    >>> out = logo_patch(img, 0.1, "text")
    >>> rim = out[464:468].astype(int)                                  # 16 degrees from the nadir
    >>> bool((out[:455] == img[:455]).all()), bool((rim[..., 2] > rim[..., 0] + 50).all())   # a blue disc
    (True, True)
    """
    if style not in LOGOS:
        raise ImageFormatError(f"logo style must be one of {', '.join(LOGOS)}, not {str(style)[:40]!r}")
    if not 0.0 < float(fraction) <= 0.5:
        raise ImageFormatError(f"logo fraction {fraction!r}: choose in (0, 0.5] of the rows")
    if style == "classic":
        return nadir_patch(image, fraction)
    h, w = image.shape[:2]
    face = _logo_face(style).astype(np.float64)
    n = face.shape[0]
    rows = int(np.ceil(h * fraction)) + 2
    i = np.arange(h - rows, h)
    d = (h - i - 0.5) / h  # polar distance from the nadir, in units of pi
    r = (d / fraction)[:, None]  # 1 on the rim
    psi = (np.arange(w) + 0.5) * 2 * np.pi / w
    u = np.clip(((0.5 + 0.5 * r * np.cos(psi)[None]) * n).astype(int), 0, n - 1)
    v = np.clip(((0.5 + 0.5 * r * np.sin(psi)[None]) * n).astype(int), 0, n - 1)
    a = np.clip((1.0 - r) * h * fraction + 0.5, 0.0, 1.0)[..., None]  # one-pixel antialiased rim
    out = image.copy()
    band = image[h - rows:].astype(np.float64)
    out[h - rows:] = np.clip(np.rint(a * face[v, u] + (1 - a) * band), 0, 255).astype(np.uint8)
    return out


def rescale_round_trip(image: np.ndarray, width: int) -> np.ndarray:
    """Downscale to ``width`` px (Pillow bicubic, as a preview would) and back up to the original size."""
    from PIL import Image

    small = np.asarray(Image.fromarray(image).resize((width, width // 2), Image.BICUBIC))
    return np.asarray(Image.fromarray(small).resize((image.shape[1], image.shape[0]), Image.BICUBIC))


SHARING = "sharing chain (EAC faces, half size, JPEG 80)"


def sharing_chain(image: np.ndarray, quality: int = 80) -> np.ndarray:
    """What a 360 viewer does to an upload: the panorama is resampled to equi-angular cubemap (EAC)
    faces, scaled to half size, laid out 3 x 2 in one picture and stored as JPEG at ``quality``; it is
    read back here as an equirectangular panorama of half the height.

    >>> from engines.watermark.image_io import load_example
    >>> sharing_chain(load_example("sunrise")).shape
    (256, 512, 3)
    """
    from PIL import Image

    faces = equirect_to_cubemap(image, eac=True)  # six W/4 faces
    f = max(16, faces.shape[1] // 2)
    small = np.stack([np.asarray(Image.fromarray(x).resize((f, f), Image.BICUBIC)) for x in faces])
    atlas = np.concatenate([np.concatenate(list(small[:3]), axis=1), np.concatenate(list(small[3:]), axis=1)])
    back = jpeg(atlas, quality)
    faces = np.stack([back[r * f:(r + 1) * f, c * f:(c + 1) * f] for r in range(2) for c in range(3)])
    return cubemap_to_equirect(faces, max(128, image.shape[0] // 2), eac=True)


ATTACKS = ("none", "JPEG 75", "JPEG 50", "JPEG 90", "Gaussian noise 2/255", "Gaussian blur 1 px", "resize 0.5x",
           "rescale to 1/2 width and back", "cubemap round trip", "EAC round trip", "nadir logo (bottom 10 %)",
           "nadir fill (bottom 10 %)", "mirror", SHARING)


def attack(image: np.ndarray, yaw: float = 0.0, pitch: float = 0.0, roll: float = 0.0,
           kind: str = "none", seed: int = 0, interpolation: str = "bicubic",
           max_width: int = 4096) -> np.ndarray:
    """Rotate (degrees; skipped when all angles are 0) and then apply one named attack.

    Cost is linear in pixels (16 bicubic taps of float32 RGB per output pixel), so images wider
    than ``max_width`` are refused; angles must be finite (:func:`check_angles`).

    >>> from engines.watermark.image_io import load_example
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
    if kind == SHARING:
        return sharing_chain(out)
    raise AssertionError(kind)  # every name in ATTACKS is handled above

