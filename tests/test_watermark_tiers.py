"""Payload tiers: the 256-bit tier on the hardest example, 360-pipeline attacks, raw-bit read-out; every tier's
floor and read-back over sizes, and verify naming the capacity a mark was embedded at (issue #32)."""
from __future__ import annotations

import functools
import os
import time
from dataclasses import replace

import numpy as np
import pytest

from engines.watermark import (
    WatermarkConfig,
    bit_accuracy,
    embed,
    embed_seconds,
    verify,
)
from engines.watermark.attacks import jpeg, mirror, nadir_patch, rescale_round_trip
from engines.watermark.config import LEGACY_64, TIERS
from engines.watermark.errors import MessageError
from engines.watermark.image_io import load_example, luminance, resize
from engines.watermark.metrics import psnr, ws_psnr
from engines.watermark.occlusion import fill_cap, find_cap, nadir_cap
from engines.watermark.payload import decode_text, encode_text, text_capacity
from engines.watermark.projections import cubemap_round_trip
from engines.watermark.rotation import random_rotation, rotate_equirect_matrix
from engines.watermark.verification import fallback_configs


@pytest.mark.parametrize("bits,l_min,l_max,margin,floor,probes", [
    (64, 32, 96, 0.3, 42.0, 2), (128, 32, 96, 0.3, 42.0, 2), (256, 32, 96, 0.3, 42.0, 2), (1024, 40, 128, 0.3, 40.0, 2)])
def test_tier_defaults(bits, l_min, l_max, margin, floor, probes):  # one recipe in every tier (issue #32)
    c = WatermarkConfig(bits=bits)
    assert (c.l_min, c.l_max, c.margin, c.psnr_floor, c.probes) == (l_min, l_max, margin, floor, probes)
    assert WatermarkConfig(bits=bits, l_max=80, margin=0.5).l_max == 80  # explicit values win


def test_probes_are_validated():
    with pytest.raises(ValueError, match="probes"):
        WatermarkConfig(probes=9)


def test_thirty_bytes_of_text_with_crc_fit_256_bits():
    assert text_capacity(256) == 30
    msg = "thirty bytes of text, no more!"
    assert len(msg.encode()) == 30
    scores = encode_text(msg, 256).astype(float) * 2 - 1
    scores[[5, 200]] *= -0.2  # two weak wrong bits: the Chase search repairs them under the CRC
    assert decode_text(scores) == msg
    with pytest.raises(MessageError, match="at most 30 bytes"):
        encode_text(msg + "!", 256)


@pytest.fixture(scope="module")
def forest256():
    img = load_example("forest")  # the most textured example: the hardest for the PSNR bar
    cfg = WatermarkConfig(bits=256)
    bits = np.random.default_rng(27).integers(0, 2, 256).astype(np.uint8)
    verify(img, "tier-key", cfg)  # the tables for this size, as the app has them after a load
    verify(img, "tier-key", WatermarkConfig(bits=64))
    embed(img, bits[:64], "tier-key", WatermarkConfig(bits=64))  # this machine's pace, as after a first embed
    predicted = embed_seconds(1024, 512, 256)
    cpu = time.process_time()
    res = embed(img, bits, "tier-key", cfg)
    res.cpu_seconds, res.predicted = time.process_time() - cpu, predicted
    return img, cfg, bits, res


@pytest.mark.slow
def test_the_wait_the_tab_shows_is_within_half_and_twice_a_measured_embed(forest256):
    """The cost model (engines/watermark/cost.py), paced by this machine's earlier embeds, against
    this embed: CPU seconds, which on an idle 2-core machine are its wall seconds (one thread), so a
    busy test machine does not fail it; nor a slower or faster one, as the model learns its pace."""
    _, _, _, res = forest256
    assert 0.5 <= res.cpu_seconds / res.predicted <= 2.0


@pytest.mark.slow
def test_256_bits_at_42_db_on_the_forest(forest256):
    img, cfg, bits, res = forest256
    assert res.psnr >= 42.0 and res.ws_psnr >= 42.0 and res.ssim >= 0.99
    assert res.ws_psnr == pytest.approx(ws_psnr(img, res.image))
    v = verify(res.image, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) == 1.0 and v.message is None
    assert v.bits_hex == np.packbits(bits).tobytes().hex()  # raw bits read out as hex


ATTACKS = {
    "JPEG 75": lambda x: jpeg(x, 75),
    "JPEG 50": lambda x: jpeg(x, 50),
    "cubemap": cubemap_round_trip,
    "EAC": lambda x: cubemap_round_trip(x, eac=True),
    "mirror": mirror,
    "rescale 1/2 and back": lambda x: rescale_round_trip(x, x.shape[1] // 2),
}


@pytest.mark.slow
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_256_bits_survive_rotation_then_360_pipeline_attacks(forest256, attack):
    _, cfg, bits, res = forest256
    rng = np.random.default_rng(sorted(ATTACKS).index(attack))  # a different Haar rotation per attack
    received = ATTACKS[attack](rotate_equirect_matrix(res.image, random_rotation(rng)))
    v = verify(received, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) >= 0.99


@pytest.mark.slow
def test_256_bits_survive_a_plain_nadir_fill_of_the_delivered_panorama_then_rotation(forest256):
    _, cfg, bits, res = forest256
    patched = nadir_patch(res.image, 0.1, "fill")  # the publisher covers its own tripod
    received = rotate_equirect_matrix(patched, random_rotation(np.random.default_rng(11)))
    v = verify(received, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) >= 0.99


@pytest.mark.slow
def test_tab_reports_raw_bits_as_hex_not_a_missing_message(forest256):
    from demos import watermark as ui

    _, _, bits, res = forest256
    label = next(k for k, v in ui.BIT_MODES.items() if v == 256)
    report = ui.do_verify(res.image, "tier-key", label, bits)
    message = next(line for line in report.split("\n") if line.startswith("Decoded message:"))
    assert "Watermark detected" in report and np.packbits(bits).tobytes().hex() in message
    assert not message.startswith("Decoded message: none") and "100.0 %" in report


# ------------------------------------------------------------------ issue #32: every tier holds
MATRIX_KEY = "tier-matrix"
MATRIX_IMAGES = ("forest", "sunrise")  # the most textured (hardest for the floor) and the smoothest (moves most)
RUN_4K = os.environ.get("WATERMARK_4K") == "1"


@functools.cache
def _panorama(name: str, width: int) -> np.ndarray:
    """A bundled example, upscaled with Pillow's bicubic to ``width`` (the examples are 1024 wide)."""
    from PIL import Image

    img = load_example(name)
    if width == img.shape[1]:
        return img
    return np.asarray(Image.fromarray(img).resize((width, width // 2), Image.BICUBIC))


@functools.cache
def _embedded(bits: int, name: str, width: int):
    """(original, EmbedResult, payload) of one tier on one example at one width; shared between tests."""
    img = _panorama(name, width)
    payload = np.random.default_rng(bits + width).integers(0, 2, bits).astype(np.uint8)
    return img, embed(img, payload, MATRIX_KEY, WatermarkConfig(bits=bits)), payload


@pytest.mark.slow
@pytest.mark.parametrize("width", [1024, 2048, pytest.param(4096, marks=[pytest.mark.slow, pytest.mark.skipif(
    not RUN_4K, reason="native 4K: minutes per tier on 2 cores; set WATERMARK_4K=1 to run it")])])
@pytest.mark.parametrize("name", MATRIX_IMAGES)
@pytest.mark.parametrize("bits", TIERS)
def test_every_tier_meets_its_floor_and_reads_back_after_a_rotation(bits, name, width):
    img, res, payload = _embedded(bits, name, width)
    floor = WatermarkConfig(bits=bits).psnr_floor
    print(f"{bits} bits, {name} {width}: PSNR {res.psnr:.2f} dB, WS-PSNR {res.ws_psnr:.2f} dB, "
          f"embed {res.seconds:.1f} s, notes {res.notes}")  # shown by pytest -rA
    assert res.psnr >= floor and res.psnr == pytest.approx(psnr(img, res.image))
    rot = random_rotation(np.random.default_rng(width + bits))
    v = verify(rotate_equirect_matrix(res.image, rot), MATRIX_KEY, WatermarkConfig(bits=bits), other_tiers=False)
    assert v.detected and bit_accuracy(v.bits, payload) == 1.0


def _contrast(img: np.ndarray, factor: float) -> np.ndarray:
    mean = img.mean()
    return np.clip(np.rint(mean + factor * (img.astype(float) - mean)), 0, 255).astype(np.uint8)


@pytest.mark.slow
def test_64_bits_hold_on_the_panorama_where_the_old_64_bit_tier_failed():
    # issue #32's case: on the forest with 15 % more contrast, key "key9" and this payload, the old
    # 64-bit tier (24..64, margin 0.6, no probe) ended with 2 of 128 carriers on the wrong side at
    # 1024x512 and 1 at 2048x1024 (EmbedError) while 128 and 256 bits held at 44.9 and 42.3 dB
    img = _contrast(load_example("forest"), 1.15)
    payload = np.random.default_rng(int.from_bytes(b"key9", "little")).integers(0, 2, 64).astype(np.uint8)
    res = embed(img, payload, "key9", WatermarkConfig(bits=64))
    assert res.psnr >= 42.0
    rot = random_rotation(np.random.default_rng(3))
    v = verify(rotate_equirect_matrix(res.image, rot), "key9", WatermarkConfig(bits=64), other_tiers=False)
    assert v.detected and bit_accuracy(v.bits, payload) == 1.0


# ------------------------------------------------- issue #32: verify names the capacity it read at
def test_fallback_tiers_share_the_false_positive_budget():
    cfg = WatermarkConfig(bits=64)
    alts = fallback_configs(cfg, 512)
    assert [c.bits for _, c, _ in alts] == [128, 256, 64]  # the other tiers, then the pre-#32 64-bit band
    assert (alts[-1][1].l_min, alts[-1][1].l_max) == (LEGACY_64["l_min"], LEGACY_64["l_max"])
    assert sum(c.fpr for _, c, _ in alts) == pytest.approx(cfg.fpr)
    assert all(c.threshold > cfg.threshold for _, c, _ in alts)
    assert [c.l_max for _, c, _ in fallback_configs(cfg, 128)] == [64]  # 128 rows: only the 24..64 band fits


def test_a_mark_in_the_pre_issue_32_64_bit_band_still_reads_with_a_note():
    img = resize(load_example("courtyard"), 0.5)
    old = WatermarkConfig(**LEGACY_64, margin=0.6, probes=0)  # the 64-bit tier as it embedded before
    res = embed(img, "old", "legacy-key", old)
    v = verify(res.image, "legacy-key")
    assert v.detected and v.message == "old" and v.config.l_max == LEGACY_64["l_max"]
    assert "24..64 band" in v.notes[0] and "embed again" in v.notes[0]


@pytest.mark.slow
def test_verify_at_the_wrong_capacity_names_the_right_one_and_reads_it():
    from demos import watermark as ui

    img, res, payload = _embedded(128, "forest", 1024)
    asked = WatermarkConfig(bits=64)
    assert not verify(res.image, MATRIX_KEY, asked, other_tiers=False).detected  # the old answer
    v = verify(res.image, MATRIX_KEY, asked)
    assert v.detected and v.config.bits == 128 and bit_accuracy(v.bits, payload) == 1.0
    assert v.notes == [("the watermark was embedded at 128 bits, not at the 64 bits asked for: "
                        "read there (choose 128 bits to verify it directly)")]
    label = next(k for k, b in ui.BIT_MODES.items() if b == 64)
    report = ui.do_verify(res.image, MATRIX_KEY, label, payload)
    assert "Watermark detected" in report and "embedded at 128 bits" in report and "100.0 %" in report
    unmarked = verify(img, MATRIX_KEY, asked)
    assert not unmarked.detected and unmarked.config.bits == 64
    assert unmarked.notes == [("no watermark at 64 bits under this key, nor at 128 bits, 256 bits, "
                               "64 bits in the older 24..64 band")]


# ------------------------------------------------------ a tripod logo: found anywhere, filled, read
def test_find_caps_is_on_by_default_and_validated():
    assert WatermarkConfig().find_caps is True
    with pytest.raises(ValueError, match="find_caps"):
        WatermarkConfig(find_caps="yes")


@pytest.mark.parametrize("seed", range(3))
def test_a_logo_disc_is_found_wherever_a_rotation_puts_it(seed):
    """Like e3nn's assert_equivariant: the cap found on a rotated panorama is the rotated cap."""
    img = load_example(("forest", "courtyard", "sunrise")[seed])
    rot = random_rotation(np.random.default_rng(seed))
    received = jpeg(rotate_equirect_matrix(nadir_patch(img, 0.1), rot), 75)
    cap = find_cap(luminance(received))
    assert cap is not None
    truth = rot @ np.array([0.0, 0.0, -1.0])
    assert np.degrees(np.arccos(np.clip(np.dot(cap.centre, truth), -1, 1))) < 2.0  # where the logo went
    assert 18.0 <= cap.radius <= 22.0  # the logo's 18 degrees, and the margin over its blurred edge
    assert find_cap(luminance(jpeg(rotate_equirect_matrix(img, rot), 75))) is None  # no logo, no cap


def test_fill_from_the_rim_restores_smooth_content_and_leaves_the_rest():
    y = luminance(load_example("sunrise")).copy()
    from scipy.ndimage import gaussian_filter

    smooth = gaussian_filter(y, 12, mode=("nearest", "wrap"))
    covered = smooth.copy()
    covered[-51:] = 160.0  # a flat disc over the nadir (10 % of the rows)
    out = fill_cap(covered, nadir_cap(0.1, 2.0))
    assert np.array_equal(out[:440], covered[:440])  # outside the cap nothing changes
    assert np.abs(out[-51:] - smooth[-51:]).mean() < 0.1 * np.abs(covered[-51:] - smooth[-51:]).mean()


@pytest.fixture(scope="module")
def sunrise_logo():
    """The sunrise (smooth: the logo outweighs its band energy most) with 256 bits, under a logo, a
    rotation and JPEG 75: 56 % of bits read before the cap search."""
    img = load_example("sunrise")
    payload = np.random.default_rng(0).integers(0, 2, 256).astype(np.uint8)
    cfg = WatermarkConfig(bits=256)
    res = embed(img, payload, "logo-key", cfg)
    rot = random_rotation(np.random.default_rng(100))
    return res, payload, cfg, rot


@pytest.mark.slow
def test_256_bits_read_through_a_tripod_logo_after_rotation_and_jpeg(sunrise_logo):
    res, payload, cfg, rot = sunrise_logo
    assert res.psnr >= 42.0
    received = jpeg(rotate_equirect_matrix(nadir_patch(res.image, 0.1), rot), 75)
    v = verify(received, "logo-key", cfg)
    assert v.detected and bit_accuracy(v.bits, payload) >= 0.95  # the bar; measured 98.0 %
    assert any("tripod cover or logo" in n for n in v.notes)
    assert v.threshold > WatermarkConfig().threshold  # two reads: each at half the false-positive budget
    blind = verify(received, "logo-key", replace(cfg, find_caps=False))
    assert bit_accuracy(blind.bits, payload) < 0.8  # without the search the logo erases the payload
    clean = verify(jpeg(rotate_equirect_matrix(res.image, rot), 75), "logo-key", cfg)
    assert bit_accuracy(clean.bits, payload) == 1.0 and not clean.notes  # no logo: one read, as before
    assert clean.threshold == cfg.threshold


@pytest.mark.slow
def test_text_reads_through_a_logo_and_an_unmarked_logo_image_does_not(sunrise_logo):
    _, _, cfg, rot = sunrise_logo
    img = load_example("courtyard")
    res = embed(img, "tripod logo", "logo-key", cfg)
    v = verify(jpeg(rotate_equirect_matrix(nadir_patch(res.image, 0.1), rot), 75), "logo-key", cfg)
    assert v.message == "tripod logo"
    unmarked = verify(jpeg(rotate_equirect_matrix(nadir_patch(img, 0.1), rot), 75), "logo-key", cfg)
    assert not unmarked.detected and unmarked.message is None
