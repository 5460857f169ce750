"""Occluded caps: find a flat or logo-like disc anywhere on the sphere, and fill it from its rim.

360 cameras and stitchers hide the tripod under a disc over the nadir: a plain fill or a brand
logo. After a rotation that disc can sit anywhere. Its content has nothing to do with the
panorama, and a high-contrast logo puts more energy into the carrier degrees than the panorama
holds there, so it moves every normalised statistic (Eq. C) by about its own spread.

* :func:`find_caps` looks for the disc in the sphere's own geometry, whatever the scene's
  brightness: a circle whose rim just inside is one colour (a logo's background or a plain fill)
  while the panorama just outside steps away from it nearly all the way round, by a few grey
  levels or more, in luminance or in colour. A circle Hough transform on the sphere proposes
  centres (256 x 128 copy), each is moved onto the circle its edge points agree on, and the
  outermost such circle round it is tested (512 x 256 copy). Near a pole, across the seam or on
  the equator (a tall curved blob in the image) the geometry is the same.
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
    in degrees, and ``score`` (the share of directions in which its edge steps; 0 when given)."""

    centre: tuple[float, float, float]
    radius: float
    score: float = 0.0

    @property
    def latitude(self) -> float:
        """Latitude of the centre, degrees (+90 at the image's top row, -90 at its bottom)."""
        return math.degrees(math.asin(max(-1.0, min(1.0, self.centre[2]))))

    @property
    def longitude(self) -> float:
        """Longitude of the centre, degrees: 0 at the image's middle column, -180 at its left edge,
        growing to the right (column ``(longitude + 180) / 360 * width``)."""
        x, y, _ = self.centre
        return (math.degrees(math.atan2(y, x)) % 360.0) - 180.0

    @property
    def sphere_percent(self) -> float:
        """Share of the sphere's area the disc covers, percent: ``(1 - cos radius) / 2``.

        >>> round(nadir_cap(0.1).sphere_percent, 2)     # the bottom 10 % of the rows
        2.45
        """
        return 50.0 * (1.0 - math.cos(math.radians(self.radius)))

    def to_dict(self) -> dict:
        """``latitude_deg``, ``longitude_deg`` (see :attr:`longitude`), ``radius_deg``, ``sphere_percent``.

        >>> nadir_cap(0.1).to_dict()
        {'latitude_deg': -90.0, 'longitude_deg': -180.0, 'radius_deg': 18.0, 'sphere_percent': 2.45}
        """
        return {"latitude_deg": round(self.latitude, 1), "longitude_deg": round(self.longitude, 1),
                "radius_deg": round(self.radius, 1), "sphere_percent": round(self.sphere_percent, 2)}

    def describe(self) -> str:
        """Where the cap is and how large, in words.

        >>> Cap((0.0, -1.0, 0.0), 20.0).describe()
        'a disc of 20.0 deg radius (3.0 % of the sphere) centred at latitude 0, longitude 90 deg'
        """
        lat, lon = self.latitude, self.longitude
        where = ("over the nadir (latitude -90)" if lat < -89.5 else "over the zenith (latitude 90)" if lat > 89.5
                 else f"centred at latitude {lat:.0f}, longitude {lon:.0f} deg")
        return f"a disc of {self.radius:.1f} deg radius ({self.sphere_percent:.1f} % of the sphere) {where}"


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


def _directions(height: int, width: int, rows: tuple[int, int] | None = None) -> np.ndarray:
    """Unit vectors of the pixel centres of an ``height x width`` panorama (rows ``rows[0]:rows[1]``)."""
    theta = (np.arange(*(rows or (0, height))) + 0.5) * np.pi / height
    phi = (np.arange(width) + 0.5) * 2 * np.pi / width
    st = np.sin(theta)[:, None]
    return np.stack([st * np.cos(phi)[None], st * np.sin(phi)[None],
                     np.broadcast_to(np.cos(theta)[:, None], (len(theta), width))], axis=-1)


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
    >>> z = y.copy(); z[58:] = 0                                       # a black disc over the nadir
    >>> err = np.abs(fill_cap(z, nadir_cap(6 / 64, 2.0)) - y)[58:].mean()
    >>> bool(err < 0.1 * np.abs(z - y)[58:].mean())                   # the ramp (nearly) comes back
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
    out = lum.astype(np.float64).copy()
    lat = math.acos(max(-1.0, min(1.0, c[2])))  # polar angle of the centre
    r0 = max(0, math.floor((lat - rho) / math.pi * h))  # only the rows the cap can reach
    r1 = min(h, math.ceil((lat + rho) / math.pi * h) + 1)
    xyz = _directions(h, w, (r0, r1))
    d = np.arccos(np.clip(xyz @ c, -1, 1))
    inside = d < rho
    if not inside.any():
        return out
    p = xyz[inside]
    r = np.tan(d[inside] / 2) / math.tan(rho / 2)
    z = r * np.exp(1j * np.arctan2(p @ e2, p @ e1))
    acc = np.zeros(len(z), np.complex128)
    for cm in coef[::-1]:  # Horner
        acc = acc * z + cm
    band = out[r0:r1]
    band[inside] = acc.real
    return out


#: Detection settings, in grey levels of the luminance (0-255) and degrees. Just inside a pasted disc
#: its rim is one colour: across the directions around the centre, the luminance there spreads by less
#: than FLAT (the 75th percentile of the distance to the median: a few strokes of lettering, JPEG
#: ringing or a blurred spot may stray). Just outside, the panorama differs from that rim by more than
#: STEP (and by more than three times that spread) in at least EDGE of the directions: the disc's edge
#: runs (nearly) all the way round, and in at least FIT of them the strongest radial step lies within
#: half a degree of one circle (a pasted disc is round; a lamp's octagon or a window is not). A flat
#: region of the panorama itself (a clear sky, a white floor) meets the rest of the scene on one side only, so its circles fail that. STEP is low on purpose: a dark cover
#: in a night scene differs from the ground by a few grey levels, and a disc found that need not have
#: been costs nothing (the plain read is kept when it is stronger).
FLAT = 3.0
STEP = 6.0
EDGE = 0.7
FIT = 0.7
GAP = 1.0
"""Degrees inside and outside the edge where the rim and the panorama are read (past the blur)."""
RADII = (5.0, 48.0)
"""Cap radii searched, degrees: a tripod cover over the bottom 3-26 % of the rows."""
MAX_CAPS = 3
CANDIDATES = 32
"""Hough peaks (at least 8 degrees apart) looked at anywhere on the sphere."""
POLE_CANDIDATES = 32
"""Further peaks looked at near a pole (``|z| > POLE_Z``): a busy room or a sky full of lamps holds
tens of circle-like peaks, and a disc near a pole, whose votes spread, may rank below them (further
peaks elsewhere would add verify time without such a reason)."""
POLE_Z = 0.85
"""Near a pole (within 32 degrees) the image's rows squeeze the edges' directions, so Hough votes
land farther off a disc's centre and are spread thinner."""


def _box(image: np.ndarray, width: int) -> np.ndarray:
    """``image`` (``H x W`` or ``H x W x C``) as float channels ``H' x W' x C``, box-averaged down to
    ``width`` px when wider (8-bit RGB stays 8-bit on the way: Pillow's box filter)."""
    from PIL import Image

    x = image if image.ndim == 3 else image[..., None]
    if x.shape[1] <= width:
        return x.astype(np.float64)
    if x.dtype == np.uint8 and x.shape[2] == 3:
        return np.asarray(Image.fromarray(x).resize((width, width // 2), Image.BOX), np.float64)
    return np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(x[..., k], dtype=np.float32), mode="F").resize(
        (width, width // 2), Image.BOX)) for k in range(x.shape[2])], -1).astype(np.float64)


def _nearest(img: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """``img`` (``H x W x C``) at the pixels nearest to the directions ``xyz`` (``..., 3``)."""
    h, w = img.shape[:2]
    theta, phi = _to_angles(xyz)
    i = np.clip((theta * (h / np.pi)).astype(int), 0, h - 1)
    j = (np.mod(phi, 2 * np.pi) * (w / (2 * np.pi))).astype(int) % w
    return img[i, j]


def _dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Colour distance in grey levels: the root mean square over channels (a grey step of ``k`` is ``k``)."""
    return np.sqrt(np.mean((a - b) ** 2, axis=-1))


def _cube_bin(p: np.ndarray, n: int) -> np.ndarray:
    """Index of the cube-map bin (6 faces of ``n x n``, roughly equal areas) each direction falls in."""
    p = p.reshape(-1, 3)
    rows = np.arange(len(p))
    axis = np.argmax(np.abs(p), axis=-1)
    main = p[rows, axis]
    face = 2 * axis + (main < 0)
    top = np.abs(main)
    i = np.clip(((p[rows, (axis + 1) % 3] / top + 1) * (n / 2)).astype(int), 0, n - 1)
    j = np.clip(((p[rows, (axis + 2) % 3] / top + 1) * (n / 2)).astype(int), 0, n - 1)
    return (face * n + i) * n + j


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


def _hough(small: np.ndarray, fine: np.ndarray, radii: np.ndarray, n: int = 32) -> np.ndarray:
    """Circle votes on the sphere: every edge of ``small`` (``H x W x C``; colour edges count) that has
    a flat side (one colour from one to two degrees off the edge, next to the step across it, read
    on the finer copy ``fine``) votes for the points ``rho`` away on that side, for each radius (a disc's edge always has its rim
    of one colour on the inside); ``(len(radii), 6 n^2)`` votes, weighted by pixel area, per unit of
    circumference."""
    h, w = small.shape[:2]
    theta = (np.arange(h) + 0.5) * np.pi / h
    g_t = np.gradient(small, axis=0)  # grey levels per pixel height, per channel
    padded = np.concatenate([small[:, -1:], small, small[:, :1]], axis=1)
    g_p = (padded[:, 2:] - padded[:, :-2]) / 2 * (h / w * 2) / np.sin(theta)[:, None, None]
    # the colour edge: principal direction of the structure tensor, its root-mean-square strength
    a, b, c = (g_t ** 2).mean(-1), (g_t * g_p).mean(-1), (g_p ** 2).mean(-1)
    mag = np.sqrt(np.maximum((a + c) / 2 + np.sqrt(((a - c) / 2) ** 2 + b ** 2), 0.0))
    ang = 0.5 * np.arctan2(2 * b, a - c)
    ii, jj = np.nonzero(mag > max(STEP / 2, float(np.quantile(mag, 0.6))))  # the stronger edges
    th, ph = theta[ii], (jj + 0.5) * 2 * np.pi / w
    x = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
    e_t = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), -np.sin(th)], -1)
    e_p = np.stack([-np.sin(ph), np.cos(ph), np.zeros_like(ph)], -1)
    g = np.cos(ang[ii, jj])[:, None] * e_t + np.sin(ang[ii, jj])[:, None] * e_p
    votes = np.zeros((len(radii), 6 * n * n))
    side = {a: _nearest(fine, x + math.radians(a) * g) for a in (-2.0, -1.0, 1.0, 2.0)}
    contrast = _dist(side[1.0], side[-1.0])
    for sign in (1.0, -1.0):
        # the flat side: one colour from one to two degrees off the edge, next to the step across it
        keep = _dist(side[sign], side[2 * sign]) < np.maximum(FLAT, 0.35 * contrast)
        weight = np.sin(th[keep])
        for r, rho in enumerate(np.radians(radii)):
            p = np.cos(rho) * x[keep] + sign * np.sin(rho) * g[keep]
            votes[r] += np.bincount(_cube_bin(p, n).ravel(), weights=weight, minlength=6 * n * n)
    return votes / np.sin(np.radians(radii))[:, None]


def _profiles(img: np.ndarray, c: np.ndarray, radii: np.ndarray, n_az: int) -> np.ndarray:
    """Colour along ``n_az`` great-circle rays from ``c``, at ``radii`` degrees: ``(n_az, R, C)``."""
    pts = _ring_points(c[None], np.radians(radii), n_az)[0]  # (R, A, 3)
    return np.swapaxes(sample_equirect(img, *_to_angles(pts), "bilinear"), 0, 1)


def _profiles_around(img: np.ndarray, cs: list[np.ndarray], rhos: list[float],
                     n_az: int) -> tuple[np.ndarray, np.ndarray]:
    """Profiles (:func:`_profiles`) round several centres at once, each over its own radius +- 8
    degrees: ``(radii (C, R), profiles (C, A, R, channels))``."""
    radii = np.maximum(0.5, np.asarray(rhos, np.float64)[:, None] + np.arange(-8.0, 8.01, 0.5)[None])
    psi = np.arange(n_az) * 2 * np.pi / n_az
    pts = np.empty((len(cs), n_az, radii.shape[1], 3))
    for i, c in enumerate(cs):
        e1, e2 = _frame(c)
        ring = np.cos(psi)[:, None] * e1 + np.sin(psi)[:, None] * e2  # (A, 3)
        rad = np.radians(radii[i])
        pts[i] = np.cos(rad)[None, :, None] * c + np.sin(rad)[None, :, None] * ring[:, None]
    return radii, sample_equirect(img, *_to_angles(pts), "bilinear")


def _edges(p: np.ndarray) -> np.ndarray:
    """Radial step across two degrees on every ray of a 0.5-degree profile: ``(A, R - 4)``."""
    return _dist(p[:, 4:], p[:, :-4])


def _centre(img: np.ndarray, c: np.ndarray, rho: float, n_az: int = 48, reach: float = 3.0,
            step: float = 0.5, seen: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, float]:
    """Move ``c`` onto the centre of the circle near radius ``rho`` that most rays agree on.

    On every ray from ``c``, each local maximum of the radial step with a flat stretch just inside
    it is an edge point at ``e(psi)`` (to a fraction of the 0.5-degree sampling). A centre off by
    ``(a, b)`` sees a circle's edge at ``rho + a cos psi + b sin psi``, so each offset within
    ``reach`` degrees is scored by the most rays whose corrected edges share one radius; the best
    offset is then refined by least squares on the points that agree with it. Returns the centre and
    the share of the rays that agree (a pasted disc: nearly all; texture: few). ``seen``: the radii
    and profiles, when :func:`_profiles_around` has read them already.
    """
    radii, p = seen if seen is not None else (r[0] for r in _profiles_around(img, [c], [rho], n_az))
    d = _edges(p)
    mid = radii[2:-2]
    k_gap = round(GAP / 0.5)
    inside = np.full(d.shape, np.inf)
    n_r = p.shape[1]
    inside[:, k_gap:] = _dist(p[:, 2:n_r - 2 - k_gap], p[:, :n_r - 4 - k_gap])  # over the degree inside
    lo, here, hi = d[:, :-2], d[:, 1:-1], d[:, 2:]
    peak = (here >= lo) & (here > hi) & (here >= STEP) & (inside[:, 1:-1] < np.maximum(FLAT, 0.15 * here))
    ai, ri = np.nonzero(peak)
    if len(ai) < 8:
        return c, 0.0
    curv = lo[ai, ri] - 2 * here[ai, ri] + hi[ai, ri]
    frac = np.where(curv < 0, 0.5 * (lo[ai, ri] - hi[ai, ri]) / np.where(curv < 0, curv, -1.0), 0.0)
    e = mid[ri + 1] + 0.5 * np.clip(frac, -0.5, 0.5)  # parabolic peak
    psi = ai * 2 * np.pi / n_az
    off = np.arange(-reach, reach + 1e-9, step)
    oa, ob = (v.ravel() for v in np.meshgrid(off, off, indexing="ij"))
    at = e[None] - oa[:, None] * np.cos(psi)[None] - ob[:, None] * np.sin(psi)[None]  # (O, P)
    nb = int(radii[-1] / 0.5) + 8
    bins = np.clip(np.rint(at / 0.5).astype(int), 0, nb - 1)
    count = np.bincount((np.arange(len(oa))[:, None] * nb + bins).ravel(), minlength=len(oa) * nb)
    count = count.reshape(len(oa), nb).astype(float)
    count = count[:, :-2] + count[:, 1:-1] + count[:, 2:]  # within half a degree either way
    best, k = np.unravel_index(int(np.argmax(count)), count.shape)
    r_best = (k + 1) * 0.5
    on = np.abs(at[best] - r_best) <= 0.75
    basis = np.stack([np.ones(len(e)), np.cos(psi), np.sin(psi)], 1)
    shift = (oa[best], ob[best])
    if on.sum() >= 8:
        coef = np.linalg.lstsq(basis[on], e[on], rcond=None)[0]
        if abs(coef[1] - oa[best]) <= 1.0 and abs(coef[2] - ob[best]) <= 1.0:
            shift = (coef[1], coef[2])
    e1, e2 = _frame(c)
    c = c + math.radians(shift[0]) * e1 + math.radians(shift[1]) * e2
    return c / np.linalg.norm(c), min(1.0, float(len(np.unique(ai[on]))) / n_az)


def _peaks(d: np.ndarray, mid: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Each row's strongest step within ``window`` (radii ``mid``, 0.5 degree apart), placed to a
    fraction of the sampling by a parabola through it and its neighbours."""
    dw = np.where(window[None], d, -np.inf)
    k = np.clip(np.argmax(dw, axis=1), 1, d.shape[1] - 2)
    rows = np.arange(len(d))
    lo, here, hi = d[rows, k - 1], d[rows, k], d[rows, k + 1]
    curv = lo - 2 * here + hi
    frac = np.where(curv < 0, 0.5 * (lo - hi) / np.where(curv < 0, curv, -1.0), 0.0)
    return mid[k] + 0.5 * np.clip(frac, -0.5, 0.5)


def _test_cap(img: np.ndarray, c: np.ndarray, n_az: int = 72) -> tuple[float, float] | None:
    """The outermost circle around ``c`` that is a pasted disc's edge (see FLAT, STEP, EDGE, FIT):
    ``(radius, share of the directions that step)``, or None."""
    radii = np.arange(RADII[0] - 3.0, RADII[1] + 3.01, 0.5)
    p = _profiles(img, c, radii, n_az)
    d = _edges(p)
    mid = radii[2:-2]
    strong = np.quantile(d, 1.0 - EDGE, axis=0)  # the step that EDGE of the rays exceed
    k_gap = round(GAP / 0.5)
    # how far each ring strays from its own median colour: the rim test below, for every radius at
    # once, with twice its allowance (circles whose rim cannot pass are not looked at further)
    ring_spread = np.quantile(_dist(p, np.median(p, axis=0, keepdims=True)), 0.75, axis=0)
    med_step = np.median(d, axis=0)
    peaks = [k for k in range(1, len(mid) - 1) if strong[k] >= STEP and strong[k] >= strong[k - 1]
             and strong[k] >= strong[k + 1] and RADII[0] <= mid[k] <= RADII[1]
             and ring_spread[max(0, k + 1 - k_gap):k + 4 - k_gap].min() < max(FLAT, 0.3 * med_step[k])]
    for k in sorted(peaks, reverse=True):
        edge = _peaks(d, mid, np.abs(mid - mid[k]) <= 1.5)  # each ray's edge near this circle
        r = float(np.median(edge))
        on = float(np.mean(np.abs(edge - r) <= 0.5))
        j = int(np.argmin(np.abs(radii - r)))
        if j - k_gap < 0 or j + k_gap >= len(radii):
            continue
        inner, outer = p[:, j - k_gap], p[:, j + k_gap]
        m = np.median(inner, axis=0)
        spread = float(np.quantile(_dist(inner, m), 0.75))
        steps = _dist(outer, m)
        share = float(np.mean(steps > max(STEP, 3 * spread)))
        if spread < max(FLAT, 0.15 * float(np.median(steps))) and share >= EDGE and on >= FIT:
            return r, share
    return None


def find_caps(image: np.ndarray, margin: float = 2.0) -> list[Cap]:
    """Every disc on the sphere (at most MAX_CAPS, largest first) whose edge runs round a rim of one
    colour (see FLAT, STEP, EDGE, FIT), each widened by ``margin`` degrees over its blurred edge.

    Candidates come from a circle Hough transform on the sphere (each edge with a flat side votes for
    the centres of the circles it could lie on, on that side); each is moved onto the circle its
    edge points fit, and its radius is the outermost such circle round that centre (a logo's own
    rings are inside it).

    >>> from engines.watermark.image_io import load_example, luminance
    >>> from engines.watermark.attacks import nadir_patch
    >>> find_caps(luminance(load_example("forest")))
    []
    >>> cap, = find_caps(luminance(nadir_patch(load_example("forest"), 0.1)))
    >>> bool(cap.centre[2] < -0.99), 18 <= cap.radius <= 22
    (True, True)
    """
    small = _box(image, 256)
    mid = _box(image, 512)
    radii = np.arange(RADII[0], RADII[1] + 1e-9, 2.0)
    votes = _hough(small, mid, radii)
    votes = (votes / (votes.mean(axis=1, keepdims=True) + 1e-9)).ravel()  # against chance at each radius
    centres = _cube_centres(32)
    top = np.argpartition(-votes, 1000)[:1000]
    order = top[np.argsort(-votes[top])]
    votes = votes.reshape(len(radii), -1)
    picked: list[tuple[np.ndarray, float]] = []
    for flat_i in order:
        r, b = divmod(int(flat_i), votes.shape[1])
        if votes[r, b] <= 1.0:
            break
        c = centres[b]
        if len(picked) >= CANDIDATES and abs(float(c[2])) <= POLE_Z:
            continue
        if all(float(c @ p) < math.cos(math.radians(8)) for p, _ in picked):
            picked.append((c, float(radii[r])))
        if len(picked) == CANDIDATES + POLE_CANDIDATES:
            break
    caps: list[Cap] = []
    radii_all, seen = _profiles_around(mid, [c for c, _ in picked], [r for _, r in picked], 32)  # a quick look first
    # near a pole the image's rows squeeze the edges' directions, so votes land farther off the centre
    reach = [6.0 if abs(c0[2]) > POLE_Z else 3.0 for c0, _ in picked]
    screened = [(c0, r0, _centre(mid, c0, r0, n_az=32, reach=reach[i], seen=(radii_all[i], seen[i]))[1], reach[i])
                for i, (c0, r0) in enumerate(picked)]
    for c0, r0, _, far in sorted((t for t in screened if t[2] >= FIT - 0.1), key=lambda t: -t[2]):
        if len(caps) == MAX_CAPS:
            break
        c, agree = _centre(mid, c0, r0, reach=far)
        if agree < FIT - 0.1:
            continue
        # once more from there: near a pole one step is short, and from a start a degree or two off a
        # logo's inner rings take some rays
        c, again = _centre(mid, c, r0, reach=1.0, step=0.25)
        if max(agree, again) < FIT:
            continue
        found = _test_cap(mid, c)
        if found is None:
            continue
        r, share = found
        if any(float(c @ np.asarray(k.centre)) > math.cos(math.radians(max(r, k.radius))) for k in caps):
            continue  # the same disc, reached from another of its rings
        caps.append(Cap(tuple(float(v) for v in c), r + margin, share))
    return sorted(caps, key=lambda k: -k.radius)[:MAX_CAPS]


def find_cap(image: np.ndarray, margin: float = 2.0) -> Cap | None:
    """The largest disc :func:`find_caps` finds, or ``None``.

    >>> from engines.watermark.image_io import load_example, luminance
    >>> find_cap(luminance(load_example("forest"))) is None
    True
    """
    caps = find_caps(image, margin)
    return caps[0] if caps else None
