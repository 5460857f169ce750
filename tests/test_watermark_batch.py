"""The watermark batch commands as a real process: every folder entry named like an image is done or
reported by name (names that are not UTF-8, named pipes, folders), and EXIF orientation is applied."""
from __future__ import annotations

import csv
import io
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
