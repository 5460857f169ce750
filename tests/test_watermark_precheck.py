"""The embed's pre-check (``engines.watermark.check_embeddable``): refuses at once, before an embed's
wait, the panoramas an embed could only fail on, and lets photographs through (issue #48 item 2)."""
from __future__ import annotations

import numpy as np
import pytest

from engines.watermark import (
    EmbedError,
    ImageFormatError,
    WatermarkConfig,
    check_embeddable,
    embed,
    load_example,
    min_size,
    prepare_panorama,
)
from engines.watermark.precheck import UNSTABLE, carrier_moves

CFG = WatermarkConfig(bits=64)


def _flat_square_padded() -> np.ndarray:
    """What the tab's pad option makes of a 300 x 300 flat grey image: 600 x 300 with black bands."""
    img, notes = prepare_panorama(np.full((300, 300, 3), 90, np.uint8), fit="pad")
    assert img.shape == (300, 600, 3) and notes
    return img


def test_min_size_is_what_the_carriers_need():
    assert min_size(CFG) == (384, 192)
    assert min_size(WatermarkConfig(bits=1024)) == (512, 256)  # a higher band: more rows
    small = np.asarray(load_example("forest")[::2, ::2][:191, :382])  # a photograph, one row short
    with pytest.raises(ImageFormatError, match="at least 384 x 192 px"):
        check_embeddable(small, "demo-key", CFG)


@pytest.mark.parametrize("name", ["forest", "sunrise", "interior", "courtyard"])
def test_photographs_and_their_padded_crops_pass(name):
    photo = load_example(name)
    check_embeddable(photo, "demo-key", CFG)
    crop, _ = prepare_panorama(np.ascontiguousarray(photo[100:400, 300:600]), fit="pad")
    check_embeddable(crop, "demo-key", CFG)
    assert float(np.median(carrier_moves(crop, "demo-key", CFG))) < UNSTABLE * CFG.margin / 4  # far from the line


def test_a_flat_image_with_a_little_detail_passes():
    """The nearest case that embeds: a flat image with a noisy patch over 0.5 % of it."""
    img = np.full((300, 600, 3), 90, np.uint8)
    img[135:165, 285:315] = np.random.default_rng(0).integers(0, 256, (30, 30, 3))
    check_embeddable(img, "demo-key", CFG)


@pytest.mark.parametrize("key", ["demo-key", "another key"])
def test_a_flat_square_padded_to_2_to_1_is_refused_with_what_works(key):
    with pytest.raises(EmbedError, match="cannot hold a watermark.*photograph"):
        check_embeddable(_flat_square_padded(), key, CFG)
    with pytest.raises(EmbedError, match="flat"):
        check_embeddable(np.full((256, 512, 3), 7, np.uint8), key, CFG)


@pytest.mark.slow
def test_the_embed_fails_on_what_the_precheck_refuses():
    """The pre-check is no stricter than the embed: on the padded flat square the embed itself fails
    (after its full wait), with about half of the carriers on the wrong side."""
    with pytest.raises(EmbedError, match="did not take"):
        embed(_flat_square_padded(), "ICML26", "demo-key", CFG)
