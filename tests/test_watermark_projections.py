"""Cubemap / EAC projections, WS-PSNR and the 360-pipeline attacks, on real and band-limited maps."""
from __future__ import annotations

import numpy as np
import pytest

from engines.watermark import sht
from engines.watermark.attacks import attack, nadir_patch
from engines.watermark.errors import ImageFormatError
from engines.watermark.image_io import load_example, resize
from engines.watermark.metrics import psnr, ws_psnr
from engines.watermark.projections import (
    FACES,
    cubemap_round_trip,
    cubemap_to_equirect,
    equirect_to_cubemap,
)


def smooth_panorama(seed: int, lmax: int = 24, height: int = 256) -> np.ndarray:
    """A band-limited random panorama (8-bit RGB): what a resampler should carry through unchanged."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=sht.n_alm(lmax)) + 1j * rng.normal(size=sht.n_alm(lmax))
    a[: lmax + 1] = a[: lmax + 1].real
    a[0] = 0
    y = sht.synthesis(a, lmax, height, 2 * height)
    y = 128 + 60 * y / np.abs(y).max()
    return np.repeat(np.clip(np.rint(y), 0, 255).astype(np.uint8)[..., None], 3, axis=2)


def test_faces_are_an_orthonormal_right_handed_frame_each():
    for c, r, d in FACES:
        np.testing.assert_allclose(np.array([c, r, d]) @ np.array([c, r, d]).T, np.eye(3), atol=1e-12)
    assert {tuple(c) for c in FACES[:, 0]} == {(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)}


@pytest.mark.parametrize("eac", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_round_trip_keeps_a_band_limited_panorama(eac, seed):
    img = smooth_panorama(seed)
    out = cubemap_round_trip(img, eac=eac)
    assert out.shape == img.shape and out.dtype == np.uint8
    assert ws_psnr(img, out) > 40  # only the two resamplings' interpolation error remains
    assert not np.array_equal(out, img)  # it really resampled


def test_up_face_centre_is_the_north_pole_and_eac_samples_differently():
    img = smooth_panorama(7)
    faces = equirect_to_cubemap(img, face=64)
    assert faces.shape == (6, 64, 64, 3)
    pole = img[0].astype(float).mean()  # the top row circles the pole
    assert abs(faces[4, 31:33, 31:33].astype(float).mean() - pole) < 6
    eac = equirect_to_cubemap(img, face=64, eac=True)
    np.testing.assert_allclose(eac[:, 31:33, 31:33].astype(float), faces[:, 31:33, 31:33].astype(float), atol=3)
    assert np.abs(eac[:, :4].astype(float) - faces[:, :4]).max() > 5  # edges: equal angle vs equal tangent


def test_real_panorama_survives_both_projections_reasonably():
    img = load_example("sunrise")
    for eac in (False, True):
        assert ws_psnr(img, cubemap_round_trip(img, eac=eac)) > 36


@pytest.mark.parametrize("bad", [np.zeros((5, 8, 8, 3), np.uint8), np.zeros((6, 8, 9, 3), np.uint8),
                                 np.zeros((6, 8, 8, 3), np.float32)])
def test_bad_faces_are_refused(bad):
    with pytest.raises(ImageFormatError, match="six square"):
        cubemap_to_equirect(bad, 128)


def test_ws_psnr_weighs_polar_rows_less_and_equals_psnr_for_uniform_error():
    img = load_example("interior")
    uniform = np.clip(img.astype(int) + 2, 0, 255).astype(np.uint8)
    assert ws_psnr(img, uniform) == pytest.approx(psnr(img, uniform), abs=0.05)
    polar = img.copy()
    polar[:20] = 0
    equator = img.copy()
    equator[246:266] = 0
    assert ws_psnr(img, polar) > psnr(img, polar) + 10
    assert ws_psnr(img, equator) < psnr(img, equator)


def test_nadir_patch_covers_exactly_the_bottom_tenth():
    img = load_example("forest")
    out = nadir_patch(img, 0.1)
    np.testing.assert_array_equal(out[:461], img[:461])
    assert (out[461:] != img[461:]).any(axis=2).mean() > 0.9


@pytest.mark.parametrize("kind", ["cubemap round trip", "EAC round trip", "rescale to 1/2 width and back",
                                  "nadir logo (bottom 10 %)", "nadir fill (bottom 10 %)", "JPEG 90"])
def test_new_attacks_keep_the_shape(kind):
    img = resize(load_example("courtyard"), 0.5)
    out = attack(img, 0, 0, 0, kind)
    assert out.shape == img.shape and out.dtype == np.uint8 and not np.array_equal(out, img)
