"""Rotations of the sphere and resampling of equirectangular panoramas under them."""
from __future__ import annotations

import math

import numpy as np

from engines.watermark.errors import ImageFormatError
from engines.watermark.image_io import validate_image


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

