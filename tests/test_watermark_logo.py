"""A tripod logo found wherever a rotation puts it, on dark and light panoramas, and verify saying what
it saw: whether there is a patch, where, and how large (issue #46)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from engines.common.paths import ASSETS_DIR
from engines.watermark import WatermarkConfig, verify
from engines.watermark.attacks import jpeg, logo_patch, sharing_chain
from engines.watermark.occlusion import find_cap, find_caps
from engines.watermark.rotation import random_rotation, rotate_equirect_matrix
from engines.watermark.testing import assert_equivariant

DARK, LIGHT = "night_veld", "house_interior"  # a night scene (median grey 28) and a bright room
NADIR = np.array([0.0, 0.0, -1.0])


def panorama(name: str) -> np.ndarray:
    return np.asarray(Image.open(ASSETS_DIR / "watermark" / "panoramas" / f"{name}.jpg").convert("RGB"))


def direction(lat: float, lon: float) -> np.ndarray:
    """The unit vector at a latitude and a longitude as verify reports them (0 = the middle column)."""
    la, ph = math.radians(lat), math.radians(lon + 180.0)
    return np.array([math.cos(la) * math.cos(ph), math.cos(la) * math.sin(ph), math.sin(la)])


def nadir_to(target: np.ndarray, spin: float) -> np.ndarray:
    """A rotation that turns the panorama by ``spin`` degrees about the vertical, then carries the nadir
    to ``target`` (Rodrigues about the axis normal to both)."""
    s = math.radians(spin)
    turn = np.array([[math.cos(s), -math.sin(s), 0.0], [math.sin(s), math.cos(s), 0.0], [0.0, 0.0, 1.0]])
    axis = np.cross(NADIR, target)
    sin_a, cos_a = np.linalg.norm(axis), float(NADIR @ target)
    if sin_a < 1e-9:
        return turn if cos_a > 0 else np.diag([1.0, -1.0, -1.0]) @ turn
    k = axis / sin_a
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return (np.eye(3) + sin_a * kx + (1 - cos_a) * kx @ kx) @ turn


def angle(a, b) -> float:
    return math.degrees(math.acos(float(np.clip(np.dot(a, b), -1.0, 1.0))))


@pytest.mark.parametrize("name,style,seed", [(DARK, "light", 0), (DARK, "text", 1), (LIGHT, "dark", 2)])
def test_the_cap_found_turns_with_the_panorama(name, style, seed):
    """Like e3nn's assert_equivariant: over Haar rotations, where the disc is found is the rotated
    nadir (within 1 degree) and its size does not change (the logo's 18 degrees + a 2-degree margin)."""
    radii = []

    def centre(x):
        cap = find_cap(jpeg(x, 75))
        assert cap is not None, "the logo was not found"
        radii.append(cap.radius)
        return np.asarray(cap.centre)

    assert_equivariant(centre, logo_patch(panorama(name), 0.1, style), n_rotations=2, atol_deg=1.0, seed=seed)
    assert max(radii) - min(radii) <= 1.0 and all(18.0 <= r <= 21.0 for r in radii)


@pytest.mark.parametrize("lat,lon,style,name", [
    (0.0, 180.0, "dark", LIGHT),     # on the equator, across the left/right seam: a tall curved blob
    (5.0, -178.0, "light", DARK),    # across the seam the other way
    (86.0, 40.0, "text", DARK),      # at the zenith pole, the rows it covers wrap round
    (80.0, -150.0, "light", LIGHT),  # near the zenith, its rim squeezed into few rows
    (-88.0, -90.0, "light", LIGHT),  # near the nadir, tilted off the pole
])
def test_found_across_the_seam_at_a_pole_and_on_the_equator(lat, lon, style, name):
    target = direction(lat, lon)
    x = jpeg(rotate_equirect_matrix(logo_patch(panorama(name), 0.1, style), nadir_to(target, 37.0)), 75)
    cap = find_cap(x)
    assert cap is not None
    assert angle(cap.centre, target) < 1.0 and 18.0 <= cap.radius <= 21.0


def test_found_after_the_whole_sharing_chain():
    """Logo -> rotation -> EAC cubemap -> half size -> JPEG 80: read at 512 x 256."""
    rot = random_rotation(np.random.default_rng(46))
    x = sharing_chain(rotate_equirect_matrix(logo_patch(panorama(LIGHT), 0.1, "dark"), rot))
    assert x.shape == (256, 512, 3)
    cap = find_cap(x)
    assert cap is not None and angle(cap.centre, rot @ NADIR) < 1.5 and 18.0 <= cap.radius <= 21.5


@pytest.mark.parametrize("name", ["forest_slope", "city_square", DARK])
def test_no_logo_no_patch(name):
    rot = random_rotation(np.random.default_rng(7))
    assert find_caps(jpeg(rotate_equirect_matrix(panorama(name), rot), 75)) == []


def test_verify_and_the_tab_report_whether_where_and_how_large():
    from demos.watermark import patch_line

    target = direction(20.0, -120.0)
    x = jpeg(rotate_equirect_matrix(logo_patch(panorama(DARK), 0.15, "light"), nadir_to(target, 0.0)), 75)
    v = verify(x, "any key", WatermarkConfig(bits=256), other_tiers=False)
    assert not v.detected  # never watermarked: a patch is reported all the same
    d = v.to_dict()
    assert d["patch_found"] is True and len(d["patches"]) == 1
    p = d["patches"][0]
    assert abs(p["latitude_deg"] - 20.0) < 1.0 and abs(p["longitude_deg"] + 120.0) < 1.0
    assert 27.0 <= p["radius_deg"] <= 30.0 and 5.4 <= p["sphere_percent"] <= 6.8  # 27 deg: 5.4 % of the sphere
    assert any("latitude 20, longitude -120" in n for n in v.notes)
    line = patch_line(v)
    assert "**found**" in line and "latitude 20°" in line and "longitude -120°" in line and "% of the sphere" in line
    import io

    from engines.watermark.cli import verify_one

    buf = io.BytesIO()
    Image.fromarray(x).save(buf, format="PNG")
    row = verify_one(buf.getvalue(), "any key", 256)  # the batch CLI's JSON row (the MCP tool's too)
    assert row["patch_found"] is True and row["patches"] == d["patches"] and isinstance(row["patch_read"], bool)
    clean = verify(jpeg(panorama(DARK), 75), "any key", WatermarkConfig(bits=256), other_tiers=False)
    assert clean.to_dict()["patch_found"] is False and clean.patches == []
    assert patch_line(clean) == "Patch (tripod cover or logo): none found."


def test_the_benchmarks_partial_rotation_gives_the_same_bytes():
    """benchmarks/watermark_logo.py resamples only the pixels a nadir logo reaches: the same bytes as a
    full rotation, for logos of every size."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("watermark_logo",
                                                  Path(__file__).resolve().parents[1] / "benchmarks" / "watermark_logo.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    img = panorama(DARK)[::2, ::2].copy()  # 512 x 256 keeps it cheap
    rot = random_rotation(np.random.default_rng(3))
    rotated = bench.Rotated(img, rot)
    for style, fraction in (("light", 0.05), ("text", 0.15)):
        x = logo_patch(img, fraction, style)
        assert np.array_equal(rotated(x), rotate_equirect_matrix(x, rot))
    assert np.array_equal(rotated(img), rotate_equirect_matrix(img, rot))


def test_found_in_a_busy_room_near_the_zenith():
    """The interior example's ceiling holds tens of circle-like Hough peaks; a logo turned to latitude
    77 ranks below them and is still looked at (CANDIDATES, POLE_CANDIDATES)."""
    from engines.watermark.image_io import load_example

    target = direction(77.3, 145.8)
    x = jpeg(rotate_equirect_matrix(logo_patch(load_example("interior"), 0.1, "dark"), nadir_to(target, 11.0)), 75)
    cap = find_cap(x)
    assert cap is not None and angle(cap.centre, target) < 1.0 and 18.0 <= cap.radius <= 21.0
