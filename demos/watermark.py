"""Panorama watermark tab: embed keyed bits, rotate/attack the panorama in 3D, verify with the key alone.

UI only: every action is one call into ``engines.watermark`` (``prepare_panorama``, ``embed``,
``attack``, ``verify``, ``rotation_sweep``); the maths lives there.
"""
from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import time
from pathlib import Path

import gradio as gr
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from demos import notes
from demos.ui import (
    PHONE_PAIR,
    choice,
    clear_on_error,
    friendly_errors,
    name_example_buttons,
    number,
    one_at_a_time,
    release_after,
    text,
)
from engines.watermark import (
    ATTACKS,
    EXAMPLES,
    TIERS,
    ImageFormatError,
    WatermarkConfig,
    attack,
    bit_accuracy,
    check_embeddable,
    embed,
    example_path,
    load_image,
    matrix_to_euler,
    prepare_panorama,
    random_rotation,
    resize,
    rotation_sweep,
    text_capacity,
    validate_image,
    verify,
    wait_words,
)

INTRO = ("Hide a short message in a 360° panorama under a secret key, and read it back with the key alone, "
         f"even after the panorama is rotated in 3D. {notes.link('watermark')}")

SWEEP_ANGLES = [0, 1, 5, 15, 45, 90, 180]
#: Capacity choices, one per tier of the engine (the first label names the floor in full).
BIT_MODES = {(f"{b} bits (PSNR floor {WatermarkConfig(bits=b).psnr_floor:g} dB)" if i == 0 else
              f"{b} bits (floor {WatermarkConfig(bits=b).psnr_floor:g} dB)"): b for i, b in enumerate(TIERS)}
DEFAULT_BITS = next(label for label, b in BIT_MODES.items() if b == 256)


def embed_wait(image=None, bits_label: str = DEFAULT_BITS) -> str:
    """The line under Embed before an embed: what embedding the prepared panorama (or, before one is
    loaded, an example-sized one) at the chosen capacity will take."""
    bits = BIT_MODES.get(bits_label, BIT_MODES[DEFAULT_BITS])
    if image is None or (isinstance(image, str) and not image):
        return (f"Embedding a panorama 1024 px wide at {bits} bits takes {wait_words(1024, 512, bits, busy=1.0)} "
                "on an idle 2-core CPU (longer when it is busy).")
    w, h = _size(image)
    return f"Embedding this {w} x {h} px panorama at {bits} bits takes {wait_words(w, h, bits)}."


def _size(image) -> tuple[int, int]:
    """(width, height) of a box's image: a file path (read from the header) or an array."""
    if isinstance(image, str):
        from PIL import Image

        with Image.open(image) as im:
            return im.size
    h, w = np.asarray(image).shape[:2]
    return w, h


def new_panorama(image, bits_label: str):
    """A new prepared panorama (an example, an upload, a pad or resize, or none after a bad upload):
    the results of an earlier one go (watermarked image, its line, difference map, bits, verdict, sweep),
    and the lines under Embed and the sweep button state the waits for this one."""
    return None, embed_wait(image, bits_label), None, None, "", None, sweep_wait(image)


def prepared_shown(load_info: str | None):
    """The prepared panorama shows only when loading changed the upload (padded, resized, downscaled,
    turned upright: the load line has a notice); otherwise it repeats the upload box and pushes Embed
    down on a phone."""
    return gr.update(visible="Notice:" in (load_info or ""))


def capacity_changed(image, bits_label: str, marked):
    """The capacity changed: the wait under Embed follows it, unless a result is shown there."""
    return gr.skip() if marked else embed_wait(image, bits_label)


#: Before a panorama is loaded, the wait is stated for the examples' size and the default capacity.
FIRST_WAIT = embed_wait()


# Cost bounds (time and memory grow with pixels; benchmarks/hardening_probes.py measures them):
# embed, verify and attack take panoramas up to MAX_WIDTH px wide (the upload box downscales to it);
# the sweep embeds three watermarks and rotates each seven times, so it runs on a copy at most
# SWEEP_WIDTH px wide.
MAX_WIDTH = 2048
SWEEP_WIDTH = 1024
#: The sweep's cost model, seconds = a + b x megapixels of the swept copy, fitted to runs on the
#: 2-core machine class the app is measured on: 512 px took 8 s quiet and 13-22 s shared with other
#: work, 1024 px 21 s quiet and 47 s shared; the model sits between the two (12.5 s and 32 s).
SWEEP_COST = (6.0, 49.6)


def sweep_seconds(width: int, height: int) -> float:
    """Expected seconds for a sweep of a ``width`` x ``height`` panorama (it runs on a copy at most
    ``SWEEP_WIDTH`` px wide)."""
    scale = min(1.0, SWEEP_WIDTH / width)
    a, b = SWEEP_COST
    return a + b * (width * scale) * (height * scale) / 1e6


def sweep_wait(image=None) -> str:
    """The line under the sweep button: what a sweep of the prepared panorama will take."""
    if image is None or (isinstance(image, str) and not image):
        w, h, what = SWEEP_WIDTH, SWEEP_WIDTH // 2, "a 1024 x 512 panorama"
    else:
        w, h = _size(image)
        what = f"this {w} x {h} panorama"
    return f"The sweep takes about {sweep_seconds(w, h):.0f} s on {what}."


def _config(bits_label: str) -> WatermarkConfig:
    choice(bits_label, "Capacity", BIT_MODES)
    return WatermarkConfig(bits=BIT_MODES[bits_label], max_width=MAX_WIDTH)


def _need_image(image, what: str) -> np.ndarray:
    """The image of a box as uint8 RGB: a file path is decoded by the engine's reader, which checks
    the pixel count in the file header before decoding; wider than ``MAX_WIDTH`` is refused."""
    if image is None or (isinstance(image, str) and not image):
        raise ImageFormatError(f"no {what} yet: {'load a panorama first' if what == 'panorama' else 'run the step above first'}")
    if isinstance(image, str):
        image = load_image(image, max_pixels=MAX_WIDTH * MAX_WIDTH // 2, max_size=f"{MAX_WIDTH} x {MAX_WIDTH // 2} px "
                           "(load it through the Panorama box, which downscales)")
    return validate_image(np.asarray(image), max_width=MAX_WIDTH)


@friendly_errors
def load_panorama(path: str | None, fit: str) -> tuple[np.ndarray | None, str]:
    """Read an uploaded/example file and make it a usable 2:1 RGB panorama (one engine call)."""
    if not path:  # cleared: nothing to load, nothing to complain about
        return None, ""
    choice(fit, "If it is not 2:1", ("refuse", "pad", "resize"))
    try:
        img, notes = prepare_panorama(path, fit=fit, max_width=MAX_WIDTH)
    except ImageFormatError as exc:
        raise _with_true_fit_hint(exc) from None
    lines = [f"Loaded **{img.shape[1]} x {img.shape[0]} px** RGB panorama."] + [f"Notice: {n}." for n in notes]
    return img, "\n\n".join(lines)


def load_example_panorama(path: str) -> tuple[np.ndarray | None, str]:
    """An example panorama clicked in the examples row (they are all 2:1)."""
    return load_panorama(path, "refuse")


def fit_sizes(w: int, h: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(width, height) that 'pad' and 'resize' make of a w x h image: what ``prepare_panorama``
    produces (pad: black bands up to 2:1, never cropping; resize: stretch to the larger side)."""
    if w >= 2 * h:
        th = w // 2 + w % 2
        pad = (2 * th, th)
    else:
        pad = (2 * h, h)
    new_w = max(w, 2 * h) // 2 * 2
    return pad, (new_w, new_w // 2)


def _with_true_fit_hint(exc: ImageFormatError) -> ImageFormatError:
    """The engine's not-2:1 refusal hints "pad or resize it to {w}x{w/2}", which is not what the
    tab's pad gives (a 300 x 300 image pads to 600 x 300): name the sizes each choice produces."""
    m = re.search(r"this one is (\d+)x(\d+)\. Pad or resize", str(exc))
    if not m:
        return exc
    w, h = int(m.group(1)), int(m.group(2))
    (pw, ph), (rw, rh) = fit_sizes(w, h)
    return ImageFormatError(f"an equirectangular panorama is 2:1 (width = 2 x height); this one is {w} x {h} px. "
                            f"Under 'If it is not 2:1' choose pad (black bands, gives {pw} x {ph} px) or "
                            f"resize (stretches it to {rw} x {rh} px), then load it again")


#: The engine's notes as a reader of the tab should get them: (start of the note, plain words).
PLAIN_NOTES = (
    ("PSNR floor", ("The image-quality floor was reached, so the watermark was embedded more gently; "
                    "it reads back, but survives less attack.")),
    ("unscaled PSNR", ("The change was scaled down to keep the image quality above the floor; "
                       "the watermark survives less attack.")),
    ("smallest carrier margin", ("The watermark reads back, but is weaker than the target on this "
                                 "image, so it survives less attack.")),
)


def plain_note(note: str) -> str:
    """An engine note in plain words (no internal quantities such as carrier margins)."""
    return next((words for start, words in PLAIN_NOTES if note.startswith(start)), note)


def _diff_map(original: np.ndarray, marked: np.ndarray) -> np.ndarray:
    d = np.abs(marked.astype(np.int16) - original.astype(np.int16)).max(axis=2) * 10
    d = np.clip(d, 0, 255).astype(np.uint8)
    return np.repeat(d[..., None], 3, axis=2)


def source_name(path: str | None) -> str:
    """The uploaded file's name without its extension, kept for naming the watermarked download."""
    return _stem(path) if path else ""


@friendly_errors
def do_embed(image, key: str, mode: str, message: str, bits_label: str, source: str | None = None):
    """Embed a text or random-bit message. Generator: a status line first, then the results.

    On any error the watermarked image, the difference map and the embedded bits are cleared and the
    line under Embed states the wait again before the error is raised (shown once, as the error
    toast): nothing stale from an earlier run stays next to a failed one."""
    try:
        yield from _embed_steps(image, key, mode, message, bits_label, source)
    except Exception:
        yield None, _wait_line(image, bits_label), None, None
        raise


def _wait_line(image, bits_label) -> str:
    """The wait line for ``image``, or the first wait when the image cannot be read."""
    try:
        return embed_wait(image, bits_label)
    except Exception:  # noqa: BLE001 - an unreadable image: the wait for an example-sized one
        return FIRST_WAIT


def _embed_steps(image, key: str, mode: str, message: str, bits_label: str, source: str | None):
    """The work of :func:`do_embed`: (watermarked, status, difference map, bits) updates. The
    watermarked PNG is named after ``source`` (the upload) or the image's own file, and the capacity."""
    img = _need_image(image, "panorama")
    cfg = _config(bits_label)
    key = text(key, "Secret key", 1000)
    choice(mode, "Message", ("text", "random bits"))
    message = text(message, "Text", 1000)
    if mode == "text":
        payload = message
    else:
        payload = np.random.default_rng().integers(0, 2, cfg.bits).astype(np.uint8)
    # a panorama the embed could only fail on is refused now, before the wait (engine pre-check)
    check_embeddable(img, key, cfg)
    # the previous result goes as the work starts: it is not the result of these settings
    h, w = img.shape[:2]
    yield None, f"Embedding {cfg.bits} bits into this {w} x {h} px panorama: {wait_words(w, h, cfg.bits)} ...", None, None
    res = embed(img, payload, key, cfg)
    kind = f"text {message!r} ({len(message.encode())} of {text_capacity(cfg.bits)} bytes + CRC-16)" \
        if mode == "text" else f"{cfg.bits} random bits `{res.to_dict(image=False)['bits_hex']}`"
    stats = (f"**PSNR {res.psnr:.2f} dB**, **WS-PSNR {res.ws_psnr:.2f} dB** (rows weighted by their area on the "
             f"sphere), **SSIM {res.ssim:.4f}**, payload: {kind}.  \n"
             f"{cfg.n_carriers} bispectral carriers, embedded in {res.seconds:.1f} s.")
    if res.notes:
        stats += "  \n" + "  \n".join(f"Notice: {plain_note(n)}" for n in dict.fromkeys(res.notes))
    name = f"{source or _stem(image)}-watermarked-{cfg.bits}bits.png"
    yield named_png(res.image, name), stats, _diff_map(img, res.image), res.bits


#: Files the tab hands to Gradio (named downloads) live here for FILES_FOR seconds.
FILES_FOR = 3600


def _stem(image) -> str:
    """The name of the file a box holds, without its extension ("panorama" for an array)."""
    stem = Path(image).stem if isinstance(image, str) and image else "panorama"
    return re.sub(r"[^\w.-]+", "_", stem)[:80] or "panorama"


def named_png(image: np.ndarray, name: str) -> str:
    """``image`` saved as a PNG called ``name`` (what the download button offers), in a folder of its own
    under the temp folder; files older than :data:`FILES_FOR` seconds there are removed, so the folder
    stays bounded."""
    from PIL import Image

    root = Path(tempfile.gettempdir()) / "icml26-watermark-tab"
    root.mkdir(exist_ok=True)
    now = time.time()
    for old in root.iterdir():
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > FILES_FOR:
                shutil.rmtree(old)
    folder = Path(tempfile.mkdtemp(dir=root))
    Image.fromarray(image).save(folder / name, format="PNG")
    return str(folder / name)


#: The Embed button's label while an embed runs (the button is disabled until it ends).
EMBED_BUSY = "Embedding... (one at a time: wait for this one to finish)"


def embed_busy():
    """Embed button update when an embed starts: disabled, with a label saying one is running."""
    return gr.update(interactive=False, value=EMBED_BUSY)


def embed_ready():
    """Embed button update when the embed ends, with a result or an error: usable again."""
    return gr.update(interactive=True, value="Embed")


@friendly_errors
def random_angles() -> tuple[float, float, float]:
    """A Haar-random rotation as (yaw, pitch, roll) in degrees."""
    yaw, pitch, roll = matrix_to_euler(random_rotation(np.random.default_rng()))
    return round(yaw, 2), round(pitch, 2), round(roll, 2)


@friendly_errors
def do_attack(marked, yaw: float, pitch: float, roll: float, kind: str) -> np.ndarray:
    """Rotate the watermarked panorama in 3D (bicubic, 8-bit) and apply an optional attack."""
    img = _need_image(marked, "watermarked image")
    angles = [number(v, f"{name} (deg)", -lim, lim) for v, name, lim in
              ((yaw, "yaw", 180), (pitch, "pitch", 90), (roll, "roll", 180))]
    choice(kind, "then", ATTACKS)
    return attack(img, *angles, kind, max_width=MAX_WIDTH)


@friendly_errors
def do_verify(image, key: str, bits_label: str, embedded_bits) -> str:
    """Verification (image and key only) of the image in the 'received' box with the key."""
    img = _need_image(image, "received image")
    cfg = _config(bits_label)
    v = verify(img, text(key, "Secret key", 1000), cfg)
    verdict = "**Watermark detected**" if v.detected else "**No watermark** (for this key)"
    head = (f"{verdict}: pilot z = {v.z:.2f} (threshold {v.threshold:.2f}), "
            f"p-value <= {v.p_value:.2g} (Hoeffding bound).")
    n = len(v.bits)  # another capacity than the chosen one when verify found the mark there (see notes)
    if v.message is not None:
        payload = f"Decoded message: **{v.message!r}** (text; its CRC-16 checks out)."
    elif v.detected:
        payload = (f"Decoded message: {n} raw bits `{v.bits_hex}` (hex). They are not a text message "
                   "that passes a CRC-16; if you embedded random bits, compare them with the ones shown at embedding.")
    else:
        payload = "Decoded message: none (no watermark under this key, so its bits mean nothing)."
    lines = [head, payload, patch_line(v)] + [f"Note: {note}." for note in v.notes if not note.startswith("a disc of")]
    if embedded_bits is not None and len(embedded_bits) == n:
        acc = bit_accuracy(v.bits, np.asarray(embedded_bits))
        lines.append(f"Bit accuracy against the embedded bits: **{100 * acc:.1f} %** "
                     f"({round(acc * n)} of {n}).")
    lines.append(f"Verified in {1000 * v.seconds:.0f} ms.")
    return "  \n".join(lines)


def patch_line(v) -> str:
    """Whether verify found a tripod cover or logo, where (latitude and longitude of its centre) and
    how large (share of the sphere), in words."""
    if not v.patches:
        return "Patch (tripod cover or logo): none found."
    where = "; ".join(f"{c.sphere_percent:.1f} % of the sphere, centred at latitude {c.latitude:.0f}°, "
                      f"longitude {c.longitude:.0f}° (0° = the image's middle column)" for c in v.patches)
    read = ("it was filled from its rim before reading, and that read counted" if v.patch_read
            else "the read without filling it was the stronger one and counted")
    return f"Patch (tripod cover or logo): **found**: {where}; {read}."


def _sweep_figure(result: dict):
    """Bit accuracy vs angle per method. Ours and the power spectrum both sit at 100 % on most images,
    so ours is drawn wide underneath and the others thin and dashed on top, and the legend goes under
    the axes, where no curve can be."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 4.2), dpi=100, gridspec_kw={"width_ratios": [3, 1]})
    styles = {"ours": {"color": "#1f77b4", "marker": "o", "lw": 4, "ms": 9, "zorder": 2},
              "power spectrum": {"color": "#2ca02c", "marker": "s", "lw": 1.5, "ls": "--", "ms": 5, "zorder": 3}}
    other = {"color": "#d62728", "marker": "^", "lw": 1.5, "ls": "-.", "ms": 6, "zorder": 3}
    for name, vals in result.items():
        if not isinstance(vals, dict):
            continue
        ax.plot(result["angles"], [100 * a for a in vals["accuracy"]], **styles.get(name, other),
                label=f"{name}: {vals['bits']} bits, PSNR {vals['psnr']:.1f} dB")
    ax.set_xlabel("rotation angle about a tilted axis (degrees)")
    ax.set_ylabel("bit accuracy (%)")
    ax.set_ylim(30, 104)  # room for the wide markers at 100 %
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    # where the two rotation-invariant schemes differ: a keyless attack that flattens the power
    # spectrum erases per-degree powers but leaves the normalised bispectrum unchanged
    names = [n for n, v in result.items() if isinstance(v, dict) and "flatten" in v]
    if names:
        colours = [styles.get(n, other)["color"] for n in names]
        bx.bar(range(len(names)), [100 * result[n]["flatten"] for n in names], color=colours)
        bx.set_xticks(range(len(names)), [n.split(" (")[0] for n in names], rotation=30, ha="right", fontsize=8)
        bx.axhline(50, color="grey", lw=0.8, ls=":")
        bx.set_ylim(0, 104)
        bx.set_title("after keyless spectrum\nflattening (0 deg)", fontsize=9)
        bx.set_ylabel("bit accuracy (%)")
    else:
        bx.set_visible(False)
    fig.tight_layout()
    return fig


@friendly_errors
def do_sweep(image, key: str, progress=gr.Progress()):  # noqa: B008 - gradio's progress idiom
    """Bit accuracy vs rotation angle for ours and both baselines on the loaded panorama (a copy at
    most ``SWEEP_WIDTH`` px wide: three embeddings and 21 rotations cost time linear in pixels)."""
    img = _need_image(image, "panorama")
    key = text(key, "Secret key", 1000)
    shrunk = ""
    if img.shape[1] > SWEEP_WIDTH:
        shrunk = f"  \nNotice: the sweep ran on a {SWEEP_WIDTH} x {SWEEP_WIDTH // 2} px copy of the {img.shape[1]} px panorama."
        img = resize(img, SWEEP_WIDTH / img.shape[1])

    def report(frac: float, msg: str) -> None:
        progress(frac, desc=msg)

    result = rotation_sweep(img, key, angles=SWEEP_ANGLES, progress=report)
    summary = "  \n".join(f"{k}: " + ", ".join(f"{a:.0f} deg {100 * x:.0f} %" for a, x in
                                               zip(result["angles"], v["accuracy"], strict=True))
                          for k, v in result.items() if isinstance(v, dict))
    flat = ", ".join(f"{k.split(' (')[0]} {100 * v['flatten']:.0f} %" for k, v in result.items()
                     if isinstance(v, dict) and "flatten" in v)
    if flat:
        summary += f"  \nAfter keyless spectrum flattening: {flat}."
    summary += ("  \nHow to read it: the power-spectrum scheme is given the same PSNR as ours (the same pixel "
                "budget), so the curves compare robustness at equal visibility. It is rotation-invariant too, so "
                "both stay flat in angle; but it writes one bit per degree's power, which anyone can flatten "
                "without the key, while ours lives in phase relations between degrees that flattening leaves "
                "unchanged. DWT-DCT runs at the strongest step that reads back unrotated; it is planar, so a "
                "3D rotation scrambles its blocks.")
    if "note" in result:
        summary += f"  \nNotice: {result['note']}"
    return _sweep_figure(result), summary + shrunk


def build() -> None:
    """Add the watermark tab's components and events (app.py wraps this in a gr.Tab)."""
    gr.Markdown(INTRO)
    embedded_bits = gr.State(None)
    source = gr.State("")  # the upload's name, for the download's
    with gr.Row():
        with gr.Column():
            upload = gr.Image(type="filepath", label="Panorama (equirectangular, 2:1)", format="png",
                              image_mode=None, sources=["upload", "clipboard"])
            fit = gr.Radio(["refuse", "pad", "resize"], value="refuse", label="If it is not 2:1")
            load_info = gr.Markdown(render=False)
            panorama = gr.Image(type="filepath", image_mode=None, format="png",
                                label="Prepared panorama (input to Embed)", interactive=False, render=False,
                                visible=False)
            # an example loads by its own click event: the upload box's change event fires twice when
            # a new file replaces the old one, and so did the toast of a bad upload
            gr.Examples([[str(example_path(n))] for n in EXAMPLES], inputs=[upload], label="CC0 examples",
                        fn=load_example_panorama, outputs=[panorama, load_info], run_on_click=True, cache_examples=False,
                        api_visibility="private", elem_id="wm-examples")
            load_info.render()
            panorama.render()
        with gr.Column():
            with gr.Row(elem_classes=[PHONE_PAIR]):  # side by side: the result below Embed stays in view
                key = gr.Textbox(label="Secret key", type="password", value="demo-key")
                mode = gr.Radio(["text", "random bits"], value="text", label="Message")
            message = gr.Textbox(label=f"Text (UTF-8; {text_capacity(TIERS[0])} bytes in {TIERS[0]}-bit mode, "
                                     + ", ".join(f"{text_capacity(b)} in {b}" for b in TIERS[1:]) + ")", value="ICML26")
            bits_label = gr.Radio(list(BIT_MODES), value=DEFAULT_BITS, label="Capacity")
            embed_btn = gr.Button("Embed", variant="primary")
            # status and result next to the button that starts them (the result in view at 1400 x 1000);
            # before an embed and after a failed one, the wait
            embed_info = gr.Markdown(FIRST_WAIT)
            marked = gr.Image(type="filepath", image_mode=None, format="png", label="Watermarked (PNG)",
                              interactive=False)
            diff = gr.Image(type="numpy", format="png", label="|difference| x 10", interactive=False)
    gr.Markdown("#### Rotate and attack")
    with gr.Row():
        yaw = gr.Slider(-180, 180, value=0, step=0.1, label="yaw (deg)")
        pitch = gr.Slider(-90, 90, value=0, step=0.1, label="pitch (deg)")
        roll = gr.Slider(-180, 180, value=0, step=0.1, label="roll (deg)")
    with gr.Row():
        rand_btn = gr.Button("Random rotation")
        kind = gr.Dropdown(list(ATTACKS), value="JPEG 75", label="then")
        attack_btn = gr.Button("Rotate / attack")
    received = gr.Image(type="filepath", image_mode=None, format="png",
                        label="Received (rotated/attacked; or upload any image to verify)")
    verify_btn = gr.Button("Verify", variant="primary")
    verify_info = gr.Markdown()
    gr.Markdown("#### Sweep: bit accuracy vs rotation angle (ours, power spectrum, DWT-DCT)")
    sweep_btn = gr.Button("Run sweep on the loaded panorama")
    sweep_info = gr.Markdown(sweep_wait())
    sweep_plot = gr.Plot(label="accuracy vs angle")
    name_example_buttons("wm-examples", list(EXAMPLES), "Example panorama")

    # a bad upload leaves no earlier panorama or "Loaded ..." line behind it
    loaded = upload.upload(load_panorama, [upload, fit], [panorama, load_info], api_name="wm_load")
    clear_on_error(loaded, [panorama, load_info])
    # embed, attack and verify hold a panorama's transforms in memory and use every core: two of them
    # at once in all (not two of each), which bounds the server's peak memory under many clients
    CPU_GROUP = {"concurrency_id": "watermark", "concurrency_limit": 2}
    upload.clear(load_panorama, [upload, fit], [panorama, load_info], api_visibility="private")
    # the upload's (or clicked example's) file name, for naming the watermarked download
    upload.change(source_name, upload, source, queue=False, api_visibility="private")
    # a new panorama (or none after a bad upload): no result of an earlier one stays, and the waits
    # under Embed and the sweep button are this one's
    panorama.change(new_panorama, [panorama, bits_label],
                    [marked, embed_info, diff, embedded_bits, verify_info, sweep_plot, sweep_info],
                    api_visibility="private")
    load_info.change(prepared_shown, load_info, panorama, queue=False, api_visibility="private")
    bits_label.change(capacity_changed, [panorama, bits_label, marked], embed_info, api_visibility="private")
    # one embed at a time per page: while one runs the button is disabled and says so, so that a
    # second click is not silently dropped; it comes back when the embed ends, also on an error
    embedded = embed_btn.click(embed_busy, None, embed_btn, queue=False, api_visibility="private").then(
        do_embed, [panorama, key, mode, message, bits_label, source], [marked, embed_info, diff, embedded_bits],
        api_name="wm_embed", **CPU_GROUP)
    release_after(embedded, embed_btn, "Embed")
    clear_on_error(embedded, [marked, diff, embedded_bits])  # the wait line is do_embed's last update
    rand_btn.click(random_angles, None, [yaw, pitch, roll], api_name="wm_random_rotation")
    attack_btn.click(do_attack, [marked, yaw, pitch, roll, kind], [received], api_name="wm_attack", **CPU_GROUP)
    verified = verify_btn.click(do_verify, [received, key, bits_label, embedded_bits], [verify_info],
                                api_name="wm_verify", **CPU_GROUP)
    clear_on_error(verified, [verify_info], [""])
    swept = one_at_a_time(sweep_btn, "Sweeping", do_sweep, [panorama, key], [sweep_plot, sweep_info],
                          api_name="wm_sweep")
    clear_on_error(swept, [sweep_plot, sweep_info], [None, ""])
