"""Occluded caps: find a flat or logo-like disc anywhere on the sphere, and fill it from its rim.

360 cameras and stitchers hide the tripod under a disc over the nadir: a plain fill or a brand
logo. After a rotation that disc can sit anywhere. Its content has nothing to do with the
panorama, and a high-contrast logo puts more energy into the carrier degrees than the panorama
holds there, so it moves every normalised statistic (Eq. C) by about its own spread.

* :func:`find_cap` looks for the disc: a circle on the sphere whose inner rim is flat (a logo's
  background or a plain fill; the spread of the luminance around it is a few grey levels) while
  the ring just outside is not. It searches centres over the whole sphere and radii of 4-36
  degrees, coarse then fine, on a 256 x 128 copy.
* :func:`fill_cap` replaces the disc with the harmonic function that matches the ring around it
  (the solution of Laplace's equation on the cap: in stereographic coordinates, which are
  conformal, ``f(r, psi) = sum_m b_m (r / r_rim)^|m| e^{i m psi}`` from the rim's Fourier
  coefficients ``b_m``). It is the smoothest fill that meets the rim, so it adds almost no energy
  in the carrier degrees: what the verifier then reads is the panorama less the cap's own
  content, which moves the statistics about as little as a plain fill of the panorama's own
  nadir does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engines.watermark.rotation import sample_equirect


@dataclass(frozen=True)
class Cap:
    """A disc on the sphere: unit ``centre`` (x, y, z; the nadir is (0, 0, -1)), angular ``radius``
    in degrees, and ``score`` (how much flatter its rim is than the ring outside; 0 when given)."""

    centre: tuple[float, float, float]
    radius: float
    score: float = 0.0

    def describe(self) -> str:
        """Where the cap is, in words (latitude and longitude of its centre, its radius)."""
        x, y, z = self.centre
        lat = math.degrees(math.asin(max(-1.0, min(1.0, z))))
        lon = math.degrees(math.atan2(y, x))
        where = "the nadir" if lat < -85 else "the zenith" if lat > 85 else f"latitude {lat:.0f}, longitude {lon:.0f} deg"
        return f"a disc of {self.radius:.1f} deg radius at {where}"


def nadir_cap(fraction: float, margin: float = 0.0) -> Cap:
    """The cap that the bottom ``fraction`` of an equirectangular panorama's rows covers, widened by
    ``margin`` degrees.

    >>> nadir_cap(0.1).radius
    18.0
    """
    return Cap((0.0, 0.0, -1.0), 180.0 * fraction + margin)


def _frame(centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors completing ``centre`` to an orthonormal frame."""
    c = centre / np.linalg.norm(centre)
    a = np.array([1.0, 0.0, 0.0]) if abs(c[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(c, a)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(c, e1)


def _directions(height: int, width: int) -> np.ndarray:
    theta = (np.arange(height) + 0.5) * np.pi / height
    phi = (np.arange(width) + 0.5) * 2 * np.pi / width
    st = np.sin(theta)[:, None]
    return np.stack([st * np.cos(phi)[None], st * np.sin(phi)[None],
                     np.broadcast_to(np.cos(theta)[:, None], (height, width))], axis=-1)


def _to_angles(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.arccos(np.clip(xyz[..., 2], -1, 1)), np.arctan2(xyz[..., 1], xyz[..., 0])


def _ring_points(centres: np.ndarray, radii: np.ndarray, n_az: int) -> np.ndarray:
    """Directions on circles: ``(C, R, A, 3)`` for centres ``(C, 3)``, radii ``(R,)`` in radians."""
    out = np.empty((len(centres), len(radii), n_az, 3))
    psi = np.arange(n_az) * 2 * np.pi / n_az
    for i, c in enumerate(centres):
        e1, e2 = _frame(c)
        ring = np.cos(psi)[:, None] * e1 + np.sin(psi)[:, None] * e2  # (A, 3)
        out[i] = np.cos(radii)[:, None, None] * c + np.sin(radii)[:, None, None] * ring[None]
    return out


def _fibonacci(n: int) -> np.ndarray:
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    r = np.sqrt(1 - z * z)
    phi = k * math.pi * (3 - math.sqrt(5))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1)


def fill_cap(lum: np.ndarray, cap: Cap, n_az: int = 256) -> np.ndarray:
    """``lum`` (an ``H x W`` luminance map) with ``cap`` replaced by the harmonic fill of the ring just
    outside it (see the module docstring); pixels outside the cap are unchanged.

    >>> y = np.tile(np.linspace(0, 255, 64)[:, None], (1, 128))       # brightness by row
    >>> z = y.copy(); z[58:] = 255                                     # a bright disc over the nadir
    >>> bool(np.abs(fill_cap(z, nadir_cap(6 / 64, 2.0)) - y)[56:].max() < 12)   # the ramp comes back
    True
    """
    h, w = lum.shape
    c = np.asarray(cap.centre, dtype=np.float64)
    c = c / np.linalg.norm(c)
    e1, e2 = _frame(c)
    rho = math.radians(cap.radius)
    rim = _ring_points(c[None], np.array([rho]), n_az)[0, 0]  # (A, 3)
    theta, phi = _to_angles(rim)
    b = sample_equirect(lum, theta, phi, "bilinear")
    coef = np.fft.rfft(b) / n_az
    coef[1:] *= 2.0  # f = Re sum_m coef_m z^m
    xyz = _directions(h, w)
    d = np.arccos(np.clip(xyz @ c, -1, 1))
    inside = d < rho
    if not inside.any():
        return lum.copy()
    p = xyz[inside]
    r = np.tan(d[inside] / 2) / math.tan(rho / 2)
    z = r * np.exp(1j * np.arctan2(p @ e2, p @ e1))
    acc = np.zeros(len(z), np.complex128)
    for cm in coef[::-1]:  # Horner
        acc = acc * z + cm
    out = lum.astype(np.float64).copy()
    out[inside] = acc.real
    return out


#: Detection settings, in grey levels of the luminance (0-255). The rim just inside a pasted disc is
#: flat: its samples spread by less than FLAT (std) around the circle; a logo's background or a plain
#: fill stays within that after resampling and JPEG 75, texture does not. Just outside, the panorama
#: differs from that rim by more than STEP in at least EDGE of the directions around the centre: the
#: disc's edge runs all the way round. A flat region of the panorama itself (a clear sky) meets
#: texture on one side only, so its circles fail that.
FLAT = 2.5
STEP = 20.0
EDGE = 0.75
RADII = (4.0, 40.0)
"""Cap radii searched, degrees (a tripod cover spans about 10-30)."""


def _rings(small: np.ndarray, centres: np.ndarray, radii: np.ndarray, gap: float,
           n_az: int) -> tuple[np.ndarray, np.ndarray]:
    """Luminance samples on the circles ``gap`` degrees inside and outside each (centre, radius):
    ``(C, R, A)`` each."""
    inner = _ring_points(centres, np.radians(radii - gap), n_az)
    outer = _ring_points(centres, np.radians(radii + gap), n_az)
    return (sample_equirect(small, *_to_angles(inner), "bilinear"),
            sample_equirect(small, *_to_angles(outer), "bilinear"))


def _near(c: np.ndarray, step: float, reach: float) -> np.ndarray:
    """Unit vectors on a square grid of ``step`` degrees within ``reach`` of ``c`` (c included)."""
    e1, e2 = _frame(c)
    offs = np.radians(np.arange(-reach, reach + 1e-9, step))
    a, b = np.meshgrid(offs, offs)
    v = c + a.ravel()[:, None] * e1 + b.ravel()[:, None] * e2
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _cube_bin(p: np.ndarray, n: int) -> np.ndarray:
    """Index of the cube-map bin (6 faces of ``n x n``, roughly equal areas) each direction falls in."""
    a = np.abs(p)
    axis = np.argmax(a, axis=-1)
    face = 2 * axis + (np.take_along_axis(p, axis[..., None], -1)[..., 0] < 0)
    top = np.take_along_axis(a, axis[..., None], -1)[..., 0]
    uv = np.stack([np.take_along_axis(p, ((axis + k) % 3)[..., None], -1)[..., 0] for k in (1, 2)], -1) / top[..., None]
    ij = np.clip(((uv + 1) / 2 * n).astype(int), 0, n - 1)
    return (face * n + ij[..., 0]) * n + ij[..., 1]


def _cube_centres(n: int) -> np.ndarray:
    """The direction at the middle of every bin of :func:`_cube_bin`."""
    t = (np.arange(n) + 0.5) / n * 2 - 1
    u, v = np.meshgrid(t, t, indexing="ij")
    out = np.empty((6, n, n, 3))
    for face in range(6):
        axis, sign = face // 2, -1.0 if face % 2 else 1.0
        out[face, ..., axis] = sign
        out[face, ..., (axis + 1) % 3] = u
        out[face, ..., (axis + 2) % 3] = v
    out = out.reshape(-1, 3)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _hough(small: np.ndarray, radii: np.ndarray, n: int = 32) -> np.ndarray:
    """Circle votes on the sphere: every strong edge of ``small`` votes for the points ``rho`` away on
    both sides across it, for each radius; ``(len(radii), 6 n^2)`` votes, weighted by pixel area."""
    h, w = small.shape
    theta = (np.arange(h) + 0.5) * np.pi / h
    g_t = np.gradient(small, axis=0) / (np.pi / h)
    padded = np.concatenate([small[:, -1:], small, small[:, :1]], axis=1)
    g_p = (padded[:, 2:] - padded[:, :-2]) / 2 / (2 * np.pi / w) / np.sin(theta)[:, None]
    mag = np.hypot(g_t, g_p) * (np.pi / h)  # grey levels per pixel height
    strong = mag > STEP / 2
    ii, jj = np.nonzero(strong)
    th, ph = theta[ii], (jj + 0.5) * 2 * np.pi / w
    x = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
    e_t = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), -np.sin(th)], -1)
    e_p = np.stack([-np.sin(ph), np.cos(ph), np.zeros_like(ph)], -1)
    g = g_t[ii, jj][:, None] * e_t + g_p[ii, jj][:, None] * e_p
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    weight = np.sin(th)
    votes = np.zeros((len(radii), 6 * n * n))
    for r, rho in enumerate(np.radians(radii)):
        for sign in (1.0, -1.0):
            p = np.cos(rho) * x + sign * np.sin(rho) * g
            votes[r] += np.bincount(_cube_bin(p, n).ravel(), weights=weight, minlength=6 * n * n)
    return votes / np.sin(np.radians(radii))[:, None]  # per unit of circumference


def find_cap(lum: np.ndarray, margin: float = 2.0) -> Cap | None:
    """The largest disc on the sphere with a flat rim and an edge all the way round it (see the module
    docstring), widened by ``margin`` degrees to cover its blurred edge; ``None`` when there is none.

    Candidates come from a circle Hough transform on the sphere (every strong edge votes for the
    centres of the circles it could lie on); the best few are then tested strictly on a 1.5-degree
    grid around them.

    >>> from engines.watermark.image_io import load_example, luminance
    >>> from engines.watermark.attacks import nadir_patch
    >>> find_cap(luminance(load_example("forest"))) is None
    True
    >>> cap = find_cap(luminance(nadir_patch(load_example("forest"), 0.1)))
    >>> cap.describe().startswith("a disc of"), bool(cap.centre[2] < -0.99), 18 <= cap.radius <= 22
    (True, True, True)
    """
    from PIL import Image

    small = np.asarray(Image.fromarray(np.clip(lum, 0, 255).astype(np.float32), mode="F").resize(
        (256, 128), Image.BOX)).astype(np.float64)
    radii = np.arange(RADII[0], RADII[1] + 1e-9, 2.0)
    votes = _hough(small, radii)
    votes = votes / (votes.mean(axis=1, keepdims=True) + 1e-9)  # against chance at each radius
    centres = _cube_centres(32)
    order = np.argsort(-votes, axis=None)
    picked: list[tuple[np.ndarray, float]] = []
    for flat in order[:400]:
        r, b = divmod(int(flat), votes.shape[1])
        c = centres[b]
        if all(float(c @ p) < math.cos(math.radians(6)) for p, _ in picked):
            picked.append((c, radii[r]))
        if len(picked) == 4:
            break
    best = None
    for c0, _ in picked:
        local = _near(c0, 1.5, 3.0)
        fine = np.arange(RADII[0], RADII[1] + 1e-9, 0.5)  # the peak may be an inner ring of a logo
        vi, vo = _rings(small, local, fine, 1.5, 48)
        edge = (np.abs(vo - vi.mean(-1, keepdims=True)) > STEP).mean(-1)
        good = (vi.std(-1) < FLAT) & (edge >= EDGE)
        if not good.any():
            continue
        k, j = np.unravel_index(np.argmax(np.where(good, fine[None], -1.0)), good.shape)
        if best is None or fine[j] + margin > best.radius:
            best = Cap(tuple(float(v) for v in local[k]), float(fine[j]) + margin, float(edge[k, j]))
    return best
