"""Cubemap and equi-angular cubemap (EAC) projections of equirectangular panoramas.

360 pipelines store and stream panoramas as six cube faces: the plain cubemap samples each face
uniformly in ``tan`` of the angle from the face centre; YouTube's equi-angular cubemap (EAC)
samples it uniformly in the angle itself (face coordinate ``a`` in [-1, 1] maps to the cube
coordinate ``u = tan(pi a / 4)``), which spreads pixels more evenly over the sphere.

Both directions resample with OpenCV's ``cv2.remap`` (bicubic), an interpolator independent of
the Keys bicubic in :func:`engines.watermark.rotation.sample_equirect`, so a round trip through
these functions is an honest stand-in for a real pipeline, not our own resampler undoing itself.

Conventions as in :mod:`engines.watermark.sht`: pixel ``(i, j)`` of an ``H x W`` panorama sits
at colatitude ``theta = (i + 1/2) pi / H`` and longitude ``phi = (j + 1/2) 2 pi / W``, direction
``(sin theta cos phi, sin theta sin phi, cos theta)``.
"""
from __future__ import annotations

import numpy as np

from engines.watermark.errors import ImageFormatError
from engines.watermark.image_io import validate_image

#: Face order: +x, -x, +y, -y, +z (up), -z (down). Each row: (centre, right, down) unit vectors.
FACES = np.array([
    [[1, 0, 0], [0, 1, 0], [0, 0, -1]],
    [[-1, 0, 0], [0, -1, 0], [0, 0, -1]],
    [[0, 1, 0], [-1, 0, 0], [0, 0, -1]],
    [[0, -1, 0], [1, 0, 0], [0, 0, -1]],
    [[0, 0, 1], [0, 1, 0], [1, 0, 0]],
    [[0, 0, -1], [0, 1, 0], [-1, 0, 0]],
], dtype=np.float64)

PAD = 4  # rows/columns of wrap padding around the panorama for the bicubic taps


def _to_cube(a: np.ndarray, eac: bool) -> np.ndarray:
    """Face coordinate in [-1, 1] -> cube-plane coordinate (``tan`` of the angle for EAC)."""
    return np.tan(a * np.pi / 4) if eac else a


def _from_cube(u: np.ndarray, eac: bool) -> np.ndarray:
    return np.arctan(u) * 4 / np.pi if eac else u


def _padded(image: np.ndarray) -> np.ndarray:
    """The panorama with ``PAD`` wrapped columns each side and ``PAD`` rows past each pole (the
    rows on the other side of the pole, half a turn away), as float32."""
    src = image.astype(np.float32)
    w = src.shape[1]
    top = np.roll(src[:PAD][::-1], w // 2, axis=1)
    bottom = np.roll(src[-PAD:][::-1], w // 2, axis=1)
    src = np.concatenate([top, src, bottom], axis=0)
    return np.concatenate([src[:, -PAD:], src, src[:, :PAD]], axis=1)


def _remap(src: np.ndarray, fx: np.ndarray, fy: np.ndarray, border: int) -> np.ndarray:
    import cv2

    out = cv2.remap(src, fx.astype(np.float32), fy.astype(np.float32), interpolation=cv2.INTER_CUBIC,
                    borderMode=border)
    return out


def _check_face_size(face: int) -> int:
    if isinstance(face, bool) or not isinstance(face, (int, np.integer)) or not 16 <= face <= 4096:
        raise ImageFormatError(f"face size {face!r}: choose a whole number of pixels between 16 and 4096")
    return int(face)


def equirect_to_cubemap(image: np.ndarray, face: int | None = None, eac: bool = False) -> np.ndarray:
    """Six ``face x face`` cube faces (``6 x F x F x 3`` uint8) of a panorama; ``face`` defaults to W/4.

    >>> from engines.watermark.image_io import load_example
    >>> equirect_to_cubemap(load_example("sunrise")).shape
    (6, 256, 256, 3)
    """
    image = validate_image(image, max_width=8192)
    h, w = image.shape[:2]
    f = _check_face_size(face if face is not None else w // 4)
    import cv2

    src = _padded(image)
    a = (np.arange(f) + 0.5) * 2 / f - 1
    u = _to_cube(a, eac)
    uu, vv = np.meshgrid(u, u)  # uu: right (columns), vv: down (rows)
    out = np.empty((6, f, f, 3), np.uint8)
    for k, (c, r, d) in enumerate(FACES):
        xyz = c[None, None] + uu[..., None] * r[None, None] + vv[..., None] * d[None, None]
        xyz /= np.linalg.norm(xyz, axis=-1, keepdims=True)
        theta = np.arccos(np.clip(xyz[..., 2], -1, 1))
        phi = np.mod(np.arctan2(xyz[..., 1], xyz[..., 0]), 2 * np.pi)
        fy = theta / np.pi * h - 0.5 + PAD
        fx = phi / (2 * np.pi) * w - 0.5 + PAD
        out[k] = np.clip(np.rint(_remap(src, fx, fy, cv2.BORDER_REFLECT)), 0, 255).astype(np.uint8)
    return out


def cubemap_to_equirect(faces: np.ndarray, height: int, eac: bool = False) -> np.ndarray:
    """Panorama (``height x 2 height x 3`` uint8) resampled from six cube faces (``6 x F x F x 3``).

    Each output direction is read from the face its largest coordinate points at; the bicubic
    taps at a face's edge repeat the edge pixels (what a per-face reprojection does).
    """
    faces = np.asarray(faces)
    if faces.ndim != 4 or faces.shape[0] != 6 or faces.shape[1] != faces.shape[2] or faces.shape[3] != 3 \
            or faces.dtype != np.uint8:
        raise ImageFormatError(f"expected six square uint8 RGB faces (6 x F x F x 3), got {faces.shape} {faces.dtype}")
    if isinstance(height, bool) or not isinstance(height, (int, np.integer)) or not 128 <= height <= 4096:
        raise ImageFormatError(f"height {height!r}: choose a whole number of rows between 128 and 4096")
    import cv2

    f = faces.shape[1]
    h, w = int(height), 2 * int(height)
    theta = (np.arange(h) + 0.5) * np.pi / h
    phi = (np.arange(w) + 0.5) * 2 * np.pi / w
    st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
    xyz = np.stack([st * np.cos(phi)[None], st * np.sin(phi)[None], np.broadcast_to(ct, (h, w))], axis=-1)
    proj = xyz @ FACES[:, 0].T  # (h, w, 6): component along each face centre
    which = np.argmax(proj, axis=-1)
    out = np.zeros((h, w, 3), np.float32)
    for k, (c, r, d) in enumerate(FACES):
        sel = which == k
        depth = np.where(sel, xyz @ c, 1.0)  # directions of other faces are read and then dropped
        a_r = _from_cube(np.clip((xyz @ r) / depth, -1, 1), eac)
        a_d = _from_cube(np.clip((xyz @ d) / depth, -1, 1), eac)
        fx = (a_r + 1) * f / 2 - 0.5
        fy = (a_d + 1) * f / 2 - 0.5
        vals = _remap(faces[k].astype(np.float32), fx, fy, cv2.BORDER_REPLICATE)
        out[sel] = vals[sel]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def cubemap_round_trip(image: np.ndarray, eac: bool = False, face: int | None = None) -> np.ndarray:
    """Equirectangular -> six cube (or EAC) faces -> equirectangular at the same size (uint8).

    >>> from engines.watermark.image_io import load_example
    >>> from engines.watermark.metrics import psnr
    >>> img = load_example("sunrise")
    >>> bool(psnr(img, cubemap_round_trip(img)) > 30), bool(psnr(img, cubemap_round_trip(img, eac=True)) > 30)
    (True, True)
    """
    image = validate_image(image, max_width=8192)
    return cubemap_to_equirect(equirect_to_cubemap(image, face, eac), image.shape[0], eac)
