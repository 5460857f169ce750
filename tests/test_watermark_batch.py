"""The watermark batch commands as a real process: every folder entry named like an image is done or
reported by name (names that are not UTF-8, named pipes, folders), and EXIF orientation is applied."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engines.watermark import example_path
from engines.watermark.image_io import load_image_noted
from engines.watermark.metrics import psnr


def _small(name: str) -> np.ndarray:
    return np.asarray(Image.open(example_path(name)).convert("RGB").resize((512, 256), Image.BICUBIC))


def _jpeg_with_orientation(img: np.ndarray, orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=95, exif=exif)
    return buf.getvalue()


def test_exif_orientation_is_applied_on_load_with_a_notice():
    img = _small("forest")
    arr, notes = load_image_noted(io.BytesIO(_jpeg_with_orientation(img, 3)))
    assert psnr(arr, img[::-1, ::-1]) > 30 > psnr(arr, img)  # as viewers show it: turned 180 degrees
    assert notes == ["the file's EXIF orientation (rotated 180 degrees) was applied, as image viewers show it"]
    upright, notes = load_image_noted(io.BytesIO(_jpeg_with_orientation(img, 1)))
    assert psnr(upright, img) > 30 and notes == []


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="names that are not UTF-8 and named pipes: Linux")
def test_embed_reports_every_entry_by_name_and_applies_orientation(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    forest, sunrise = _small("forest"), _small("sunrise")
    Image.fromarray(forest).save(src / "a.png")
    Image.fromarray(sunrise).save(os.fsdecode(bytes(src) + b"/caf\xe9.png"))  # a Latin-1 name
    (src / "upside.jpg").write_bytes(_jpeg_with_orientation(forest, 3))
    os.mkfifo(src / "pipe.png")
    (src / "folder.png").mkdir()
    proc = subprocess.run([sys.executable, "-m", "engines.watermark", "embed", str(src), str(out), "--key", "k",
                           "--message", "hi", "--quiet"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr  # two entries failed; the rest is done
    with open(out / "report.csv", encoding="utf-8") as fh:
        rows = {r["file"]: r for r in csv.DictReader(fh)}
    assert sorted(rows) == ["a.png", "caf\\xe9.png", "folder.png", "pipe.png", "upside.jpg"]
    assert rows["pipe.png"]["error"] == "a named pipe (FIFO), not an image file"
    assert rows["folder.png"]["error"] == "a folder, not an image file"
    assert rows["caf\\xe9.png"]["error"] == "" and rows["caf\\xe9.png"]["output"] == "caf\\xe9.png"
    assert (Path(os.fsdecode(bytes(out) + b"/caf\xe9.png"))).is_file()  # written under its own name
    assert "EXIF orientation (rotated 180 degrees) was applied" in rows["upside.jpg"]["notes"]
    marked = np.asarray(Image.open(out / "upside.jpg.png").convert("RGB"))
    assert psnr(marked, forest[::-1, ::-1]) > 30  # embedded the way viewers show it
    assert "FAILED pipe.png" in proc.stderr and "FAILED folder.png" in proc.stderr  # the summary names them


def _gif(img: np.ndarray, frames: int = 2) -> bytes:
    """An animated GIF whose first frame is ``img`` (quantised to 256 colours)."""
    first = Image.fromarray(img)
    buf = io.BytesIO()
    first.save(buf, format="GIF", save_all=True, append_images=[first.rotate(180)] * (frames - 1))
    return buf.getvalue()


def test_the_batch_commands_read_gif_as_the_mcp_tools_do(tmp_path):
    """Issue #47 item 19: the MCP notes accept GIF (first frame, with a notice) but the batch commands'
    suffix list skipped ``.gif`` files in a folder. Now verify reads them, the notice in its JSON."""
    (tmp_path / "anim.gif").write_bytes(_gif(_small("forest")))
    Image.fromarray(_small("sunrise")).save(tmp_path / "b.png")
    proc = subprocess.run([sys.executable, "-m", "engines.watermark", "verify", str(tmp_path), "--key", "k", "--json",
                           "--quiet"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = {r["file"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert sorted(rows) == ["anim.gif", "b.png"]
    assert rows["anim.gif"]["detected"] is False and "error" not in rows["anim.gif"]
    assert any("only the first frame is used" in n for n in rows["anim.gif"]["notes"]), rows["anim.gif"]


@pytest.mark.slow
def test_embed_honours_exif_orientation_6_as_shown(tmp_path):
    """Issue #47 item 18: a JPEG stored on its side with EXIF orientation 6 (a phone's portrait shot) is
    embedded as viewers show it (turned 90 degrees clockwise), not refused."""
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    upright = _small("courtyard")
    stored = np.ascontiguousarray(np.rot90(upright, 1))  # a viewer turns it back 90 degrees clockwise
    (src / "side.jpg").write_bytes(_jpeg_with_orientation(stored, 6))
    proc = subprocess.run([sys.executable, "-m", "engines.watermark", "embed", str(src), str(out), "--key", "k",
                           "--message", "hi", "--quiet"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with open(out / "report.csv", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["error"] == "" and "EXIF orientation (rotated 90 degrees clockwise) was applied" in row["notes"]
    marked = np.asarray(Image.open(out / "side.jpg.png").convert("RGB"))
    assert marked.shape == upright.shape and psnr(marked, upright) > 30
