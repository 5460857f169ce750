"""The 256-bit default tier: PSNR >= 42 dB on the hardest example, 360-pipeline attacks, raw-bit read-out."""
from __future__ import annotations

import numpy as np
import pytest

from engines.watermark import WatermarkConfig, bit_accuracy, embed, verify
from engines.watermark import image as im_ops
from engines.watermark.errors import MessageError
from engines.watermark.payload import decode_text, encode_text, text_capacity
from engines.watermark.projections import cubemap_round_trip


@pytest.mark.parametrize("bits,l_min,l_max,margin,floor,probes", [
    (64, 24, 64, 0.6, 42.0, 0), (128, 32, 96, 0.3, 42.0, 1), (256, 32, 96, 0.3, 42.0, 1), (1024, 32, 96, 0.3, 36.0, 1)])
def test_tier_defaults(bits, l_min, l_max, margin, floor, probes):
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
    img = im_ops.load_example("forest")  # the most textured example: the hardest for the PSNR bar
    cfg = WatermarkConfig(bits=256)
    bits = np.random.default_rng(27).integers(0, 2, 256).astype(np.uint8)
    return img, cfg, bits, embed(img, bits, "tier-key", cfg)


@pytest.mark.slow
def test_256_bits_at_42_db_on_the_forest(forest256):
    img, cfg, bits, res = forest256
    assert res.psnr >= 42.0 and res.ws_psnr >= 42.0 and res.ssim >= 0.99
    assert res.ws_psnr == pytest.approx(im_ops.ws_psnr(img, res.image))
    v = verify(res.image, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) == 1.0 and v.message is None
    assert v.bits_hex == np.packbits(bits).tobytes().hex()  # raw bits read out as hex


ATTACKS = {
    "JPEG 75": lambda x: im_ops.jpeg(x, 75),
    "JPEG 50": lambda x: im_ops.jpeg(x, 50),
    "cubemap": cubemap_round_trip,
    "EAC": lambda x: cubemap_round_trip(x, eac=True),
    "mirror": im_ops.mirror,
    "rescale 1/2 and back": lambda x: im_ops.rescale_round_trip(x, x.shape[1] // 2),
}


@pytest.mark.slow
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_256_bits_survive_rotation_then_360_pipeline_attacks(forest256, attack):
    _, cfg, bits, res = forest256
    rng = np.random.default_rng(sorted(ATTACKS).index(attack))  # a different Haar rotation per attack
    received = ATTACKS[attack](im_ops.rotate_equirect_matrix(res.image, im_ops.random_rotation(rng)))
    v = verify(received, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) >= 0.99


@pytest.mark.slow
def test_256_bits_survive_a_plain_nadir_fill_of_the_delivered_panorama_then_rotation(forest256):
    _, cfg, bits, res = forest256
    patched = im_ops.nadir_patch(res.image, 0.1, "fill")  # the publisher covers its own tripod
    received = im_ops.rotate_equirect_matrix(patched, im_ops.random_rotation(np.random.default_rng(11)))
    v = verify(received, "tier-key", cfg)
    assert v.detected and bit_accuracy(v.bits, bits) >= 0.99


@pytest.mark.slow
def test_tab_reports_raw_bits_as_hex_not_a_missing_message(forest256):
    from demos import watermark as ui

    _, _, bits, res = forest256
    label = next(k for k, v in ui.BIT_MODES.items() if v == 256)
    report = ui.do_verify(res.image, "tier-key", label, bits)
    assert "Watermark detected" in report and np.packbits(bits).tobytes().hex() in report
    assert "100.0 %" in report and "none" not in report
