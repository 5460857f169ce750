"""UI-callback tests for the watermark tab: callbacks called as plain functions (no server)."""
from __future__ import annotations

from pathlib import Path

import gradio as gr
import numpy as np
import pytest
from PIL import Image

from demos import watermark as ui
from engines.watermark.image_io import example_path, load_example, resize

ui64 = next(iter(ui.BIT_MODES))  # the 64-bit mode label


@pytest.fixture(scope="module")
def loaded():
    img, info = ui.load_panorama(str(example_path("sunrise")), "refuse")
    return img, info


@pytest.fixture(scope="module")
def embedded(loaded):
    steps = list(ui.do_embed(loaded[0], "ui-key", "text", "hi!", ui64, ui.source_name(str(example_path("sunrise")))))
    assert "Embedding" in steps[0][1] and " s" in steps[0][1].split("about ")[1]  # first a status line with the wait
    return steps[-1]


def _pixels(path: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"))


def test_load_example(loaded):
    img, info = loaded
    assert img.shape == (512, 1024, 3) and "1024 x 512 px" in info
    assert ui.load_panorama(None, "refuse") == (None, "")  # clearing the upload is not an error


@pytest.mark.slow
def test_embed_attack_verify_round_trip(loaded, embedded):
    path, stats, diff, bits = embedded
    assert Path(path).name == "sunrise-watermarked-64bits.png"  # the download: the input's name and the capacity
    marked = _pixels(path)
    assert marked.dtype == np.uint8 and marked.shape == loaded[0].shape
    assert "PSNR" in stats and "dB" in stats and "SSIM" in stats
    psnr = float(stats.split("PSNR ")[1].split(" dB")[0])
    assert psnr >= 42.0
    assert diff.shape == marked.shape and diff.max() > 0
    yaw, pitch, roll = ui.random_angles()
    assert -180 <= yaw <= 180 and -90 <= pitch <= 90
    # a fixed random rotation: the read-back rate over many rotations is the benchmark's figure
    yaw, pitch, roll = (round(a, 2) for a in ui.matrix_to_euler(ui.random_rotation(np.random.default_rng(3))))
    received = ui.do_attack(marked, yaw, pitch, roll, "JPEG 75")
    report = ui.do_verify(received, "ui-key", ui64, bits)
    assert "Watermark detected" in report and "'hi!'" in report and "100.0 %" in report
    report = ui.do_verify(received, "wrong-key", ui64, bits)
    assert "No watermark" in report and "none" in report


def test_unmarked_image_reads_as_no_watermark(loaded):
    report = ui.do_verify(loaded[0], "ui-key", ui64, None)
    assert "No watermark" in report and "Bit accuracy" not in report


@pytest.mark.slow
def test_sweep_plot_has_all_three_methods(monkeypatch):
    monkeypatch.setattr(ui, "SWEEP_ANGLES", [0, 30])
    fig, summary = ui.do_sweep(resize(load_example("interior"), 0.5), "sweep-key", progress=lambda *a, **k: None)
    labels = [line.get_label() for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert any(lab.startswith("ours") for lab in labels) and any(lab.startswith("power spectrum") for lab in labels)
    assert "ours: 0 deg 100 %, 30 deg 100 %" in summary
    if "not installed" not in summary:
        assert any(lab.startswith("DWT-DCT") for lab in labels)


def test_sweep_figure_keeps_overlapping_curves_and_legend_visible():
    """Ours and the power spectrum at 100 % everywhere: ours must not hide under it, and the legend
    must not cover a curve."""
    flat = {"bits": 64, "psnr": 42.0, "accuracy": [1.0, 1.0, 1.0]}
    fig = ui._sweep_figure({"angles": [0, 45, 90], "ours": flat, "power spectrum": dict(flat, bits=41),
                            "DWT-DCT": {"bits": 64, "psnr": 33.0, "accuracy": [1.0, 0.45, 0.4]}})
    ax = fig.axes[0]
    lines = {ln.get_label().split(":")[0]: ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    ours, ps = lines["ours"], lines["power spectrum"]
    assert ours.get_linewidth() > 2 * ps.get_linewidth() and ps.get_linestyle() != "-"
    assert ours.get_zorder() < ps.get_zorder()  # the wide line underneath, the thin dashed one on top
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend, axes = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert legend.y1 <= axes.y0  # under the axes
    assert legend.y0 >= 0  # and still inside the figure


def _write(tmp_path, arr, name="x.png"):
    p = tmp_path / name
    Image.fromarray(arr).save(p)
    return str(p)


@pytest.mark.parametrize("arr,fit,match", [
    (np.zeros((300, 500, 3), np.uint8), "refuse", "2:1"),
    (np.zeros((100, 200, 3), np.uint8), "refuse", "at least 256"),
    (np.zeros((256, 512), np.uint8), "refuse", "grayscale"),
    (np.zeros((256, 512, 4), np.uint8), "refuse", "alpha"),
    (np.zeros((256, 512), np.uint16), "refuse", "16-bit"),
])
def test_bad_uploads_give_a_clean_gradio_error(tmp_path, arr, fit, match):
    with pytest.raises(gr.Error, match=match):
        ui.load_panorama(_write(tmp_path, arr), fit)


@pytest.mark.parametrize("fit,shape", [("pad", (300, 600, 3)), ("resize", (300, 600, 3))])
def test_non_2to1_is_padded_or_resized_with_a_notice(tmp_path, fit, shape):
    img, info = ui.load_panorama(_write(tmp_path, np.full((300, 500, 3), 90, np.uint8)), fit)
    assert img.shape == shape and "Notice" in info and fit[:3] in info


def test_huge_image_is_downscaled_with_a_notice(tmp_path):
    img, info = ui.load_panorama(_write(tmp_path, np.zeros((1500, 3000, 3), np.uint8)), "refuse")
    assert img.shape == (1024, 2048, 3) and "downscaled" in info


@pytest.mark.parametrize("call,match", [
    (lambda: list(ui.do_embed(None, "k", "text", "hi", ui64)), "load a panorama"),
    (lambda: list(ui.do_embed(load_example("forest"), "", "text", "hi", ui64)), "key is empty"),
    (lambda: list(ui.do_embed(load_example("forest"), "k", "text", "much too long", ui64)), "at most 6 bytes"),
    (lambda: ui.do_verify(None, "k", ui64, None), "received image"),
    (lambda: ui.do_attack(None, 1, 2, 3, "none"), "watermarked image"),
])
def test_bad_input_in_callbacks_is_a_clean_gradio_error(call, match):
    with pytest.raises(gr.Error, match=match):
        call()


def test_pixel_cap_is_checked_from_the_header_before_decoding(tmp_path):
    """An 8000 x 4000 PNG of one colour is ~100 KB on disk: refused for the attack step from the header
    size alone, downscaled with a notice by the upload box."""
    path = _write(tmp_path, np.full((4000, 8000, 3), 70, np.uint8), "big.png")
    with pytest.raises(gr.Error, match="8000 x 4000 px"):
        ui.do_attack(path, 1, 2, 3, "none")
    img, info = ui.load_panorama(path, "refuse")
    assert img.shape == (1024, 2048, 3) and "downscaled" in info


@pytest.mark.parametrize("bad,match", [
    ({"yaw": float("nan")}, "yaw"), ({"pitch": 1e300}, "pitch"), ({"roll": "x"}, "roll"),
    ({"kind": "y" * 10_000}, "not one of the choices"),
])
def test_attack_refuses_bad_numbers_and_choices(bad, match):
    args = {"marked": resize(load_example("forest"), 0.5), "yaw": 1, "pitch": 2, "roll": 3, "kind": "none"} | bad
    with pytest.raises(gr.Error, match=match) as err:
        ui.do_attack(**args)
    assert len(str(err.value)) < 300  # a long input is never echoed back


def test_flat_image_embed_is_refused_at_once_and_keeps_the_wait_line():
    """Issues #33 and #48: a flat image is refused before the embed's wait begins (the engine's
    pre-check); no result from an earlier run stays (image, difference map and bits are emptied) and
    the line under Embed states the wait again instead of going blank."""
    steps = ui.do_embed(np.zeros((256, 512, 3), np.uint8), "k", "text", "hi", ui64)
    first = next(steps)
    assert first[0] is None and first[2] is None and first[3] is None
    assert first[1].startswith("Embedding this 512 x 256 px panorama at 64 bits takes about")  # the wait, not the work
    with pytest.raises(gr.Error, match="flat"):
        next(steps)


def test_bad_input_clears_an_earlier_result_too():
    steps = ui.do_embed(None, "k", "text", "hi", ui64)
    assert next(steps) == (None, ui.embed_wait(None, ui64), None, None)
    with pytest.raises(gr.Error, match="load a panorama"):
        next(steps)


def test_embed_status_sits_next_to_the_embed_button():
    with gr.Blocks() as demo:
        ui.build()
    col = next(b for b in demo.blocks.values() if isinstance(b, gr.Button) and b.value == "Embed").parent
    assert any(isinstance(c, gr.Markdown) for c in col.children)


@pytest.mark.parametrize("w,h,pad,resized", [(300, 300, (600, 300), (600, 300)),
                                             (500, 300, (600, 300), (600, 300)),
                                             (701, 300, (702, 351), (700, 350))])
def test_not_2to1_hint_names_what_pad_and_resize_really_give(tmp_path, w, h, pad, resized):
    """Issue #33: the hint said "pad or resize it to 300x150" for a 300 x 300 image; pad gives 600 x 300."""
    src = np.full((h, w, 3), 90, np.uint8)
    with pytest.raises(gr.Error, match="2:1") as err:
        ui.load_panorama(_write(tmp_path, src), "refuse")
    assert f"pad (black bands, gives {pad[0]} x {pad[1]} px)" in str(err.value)
    assert f"to {resized[0]} x {resized[1]} px" in str(err.value)
    for fit, want in (("pad", pad), ("resize", resized)):
        img, _info = ui.load_panorama(_write(tmp_path, src), fit)
        assert (img.shape[1], img.shape[0]) == want


def test_embed_notes_are_plain_words_not_log_lines():
    raw = ["PSNR floor 42 dB reached at margin 0.6 (unscaled 41.2 dB); re-embedded at margin 0.3",
           "smallest carrier margin 0.21 is below the target 0.3: the watermark reads back, but survives less attack"]
    for note in raw:
        plain = ui.plain_note(note)
        assert "margin" not in plain and "attack" in plain


def test_tab_text_has_no_emoji_or_internal_error_names():
    import inspect
    import re

    from demos import dueling as bandits

    emoji = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]")
    for mod in (ui, bandits):
        assert not emoji.search(inspect.getsource(mod))


def test_a_file_that_is_not_an_image_is_named_in_plain_words(tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    with pytest.raises(gr.Error) as err:
        ui.load_panorama(str(path), "refuse")
    assert "Error" not in str(err.value) and "image" in str(err.value)


def test_sixteen_bit_file_in_the_embed_box_is_refused_clearly(tmp_path):
    path = tmp_path / "deep.png"
    Image.fromarray(np.full((256, 512), 40000, np.uint16)).save(path)
    with pytest.raises(gr.Error, match="16-bit"):
        list(ui.do_embed(str(path), "k", "text", "hi", ui64))


def test_second_embed_click_is_not_dropped_silently():
    """While an embed runs, the Embed button is disabled and its label says one is running (a
    second click used to vanish without a word); it comes back when the embed ends, on an error too."""
    with gr.Blocks() as demo:
        ui.build()
    deps = demo.config["dependencies"]
    embed = next(d for d in deps if d["api_name"] == "wm_embed")
    before = deps[embed["trigger_after"]]
    button = next(b for b in demo.blocks.values() if isinstance(b, gr.Button) and b.value == "Embed")
    assert before["targets"] == [(button._id, "click")] and before["outputs"] == [button._id]
    assert not before["queue"]  # answered at once, not behind the embeds of other users
    busy = demo.fns[before["id"]].fn()
    assert busy["interactive"] is False and "one at a time" in busy["value"]
    # back after a result and after an error (Gradio 6.31 runs a .then step after a success only)
    after = [d for d in deps if d["trigger_after"] == embed["id"] and d["outputs"] == [button._id]]
    assert sorted(d["trigger_only_on_failure"] for d in after) == [False, True]
    assert not any(d["trigger_only_on_success"] for d in after)
    for d in after:
        assert demo.fns[d["id"]].fn() == {"__type__": "update", "interactive": True, "value": "Embed"}


def test_a_new_panorama_clears_the_old_result_and_the_prepared_copy_shows_only_when_changed(tmp_path):
    """Issue #48 items 3 and 7: a new panorama (or none, after a bad upload) leaves no earlier result
    and states its own waits; the prepared copy shows only when loading changed the upload."""
    marked, wait, diff, bits, verdict, plot, sweep = ui.new_panorama(None, ui64)
    assert (marked, diff, bits, verdict, plot) == (None, None, None, "", None)
    assert wait == ui.embed_wait(None, ui64) and "takes about" in wait and "sweep takes about" in sweep
    img, md = ui.load_panorama(str(ui.example_path("forest")), "refuse")
    assert ui.prepared_shown(md)["visible"] is False
    from PIL import Image

    path = tmp_path / "square.png"
    Image.fromarray(np.full((300, 300, 3), 90, np.uint8)).save(path)
    img, md = ui.load_panorama(str(path), "pad")
    assert ui.prepared_shown(md)["visible"] is True
    assert ui.new_panorama(img, ui64)[1].startswith("Embedding this 600 x 300 px panorama at 64 bits takes about")
