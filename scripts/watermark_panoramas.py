"""Build the watermark's evaluation panoramas (1024 x 512 equirectangular, 8-bit) from their sources.

    # CC0 HDRIs from Poly Haven, as bundled in the public repository pmndrs/drei-assets (folder hdri/)
    python scripts/watermark_panoramas.py --hdri PATH/TO/drei-assets/hdri        # -> assets/watermark/panoramas/
    # Stellarium's Grossmugl landscape at night (GPL-2+, Debian's stellarium-data): built, not committed
    apt-get download stellarium-data && dpkg -x stellarium-data_*.deb /tmp/stellarium
    python scripts/watermark_panoramas.py --stellarium /tmp/stellarium/usr/share/stellarium  # -> data/watermark_panoramas/

Each HDRI is tone-mapped as a phone's automatic exposure would (Reinhard's global operator at the
key given in :data:`HDRI`, then the sRGB gamma); scenes a camera would shoot dark (night, low-light
rooms) get a low key and mild sensor noise (sigma 1.5 grey levels, fixed seed) before an 8-bit JPEG
at quality 92, which is what users bring. The splits (dev, held-out) are fixed here and named in
``assets/watermark/DATA_CARD.md``; the held-out ones are read once, never tuned on.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: name -> (HDRI file stem, Reinhard key, sensor noise in grey levels, split, kind in words)
HDRI = {
    "night_veld": ("dikhololo_night_1k", 0.008, 1.5, "dev", "night, stars over dark grass"),
    "warehouse_dim": ("empty_warehouse_01_1k", 0.012, 1.5, "dev", "indoor low-light, concrete floor"),
    "forest_slope": ("forest_slope_1k", 0.18, 0.0, "dev", "busy texture down to the nadir"),
    "overcast_field": ("immenstadter_horn_1k", 0.18, 0.0, "dev", "overcast sky, grass"),
    "dawn_rocks": ("kiara_1_dawn_1k", 0.05, 0.0, "dev", "dusk, rocks to the nadir"),
    "house_interior": ("lebombo_1k", 0.18, 0.0, "dev", "bright indoor, light floor"),
    "city_square": ("potsdamer_platz_1k", 0.18, 0.0, "dev", "street, overcast, towers"),
    "park_sun": ("rooitou_park_1k", 0.18, 0.0, "dev", "bright sky, lawn"),
    "studio": ("studio_small_03_1k", 0.18, 0.0, "dev", "photo studio, white floor, dark walls"),
    "glass_bridge": ("adams_place_bridge_1k", 0.18, 0.0, "held-out", "grey indoor walkway (studio-like surfaces)"),
    "museum_dim": ("st_fagans_interior_1k", 0.015, 1.5, "held-out", "indoor low-light"),
    "waterfront_dusk": ("venice_sunset_1k", 0.12, 0.0, "held-out", "street by the water at sunset"),
}
#: built from Debian's stellarium-data (GPL-2+) into data/, not committed
STELLARIUM = {"grossmugl_night": ("held-out", "night: field with town lights and the Milky Way")}
SIZE = (1024, 512)


def read_hdr(path: Path) -> np.ndarray:
    """A Radiance RGBE file (new-style run-length rows) as linear float RGB, ``H x W x 3``."""
    data = path.read_bytes()
    pos = 0
    while True:
        end = data.index(b"\n", pos)
        line, pos = data[pos:end], end + 1
        if line[:2] in (b"-Y", b"+Y"):
            _, h, _, w = line.split()
            h, w = int(h), int(w)
            break
    buf = np.frombuffer(data, np.uint8, offset=pos)
    px = np.empty((h, w, 4), np.uint8)
    i = 0
    for y in range(h):
        if buf[i] != 2 or buf[i + 1] != 2:
            raise ValueError(f"{path.name}: only run-length RGBE rows are read")
        i += 4
        for c in range(4):
            x = 0
            while x < w:
                n = int(buf[i])
                i += 1
                if n > 128:
                    px[y, x:x + n - 128, c] = buf[i]
                    i, x = i + 1, x + n - 128
                else:
                    px[y, x:x + n, c] = buf[i:i + n]
                    i, x = i + n, x + n
    e = px[..., 3].astype(np.int32)
    scale = np.where(e > 0, np.ldexp(1.0, e - 136), 0.0)
    return px[..., :3] * scale[..., None]


def tone_map(rgb: np.ndarray, key: float, noise: float, seed: int) -> np.ndarray:
    """Reinhard's global operator at ``key`` (the scene's median luminance maps there), sRGB-like
    gamma 1/2.2, optional Gaussian noise, 8 bits."""
    lum = rgb @ np.array([0.2126, 0.7152, 0.0722])
    x = rgb * (key / max(float(np.median(lum)), 1e-9))
    y = 255.0 * np.clip(x / (1.0 + x), 0.0, 1.0) ** (1 / 2.2)
    if noise:
        y = y + np.random.default_rng(seed).normal(0.0, noise, y.shape[:2])[..., None]
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


def save(img: np.ndarray, path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.fromarray(img)
    if im.size != SIZE:
        im = im.resize(SIZE, Image.LANCZOS)
    im.save(path, quality=92)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {path.stat().st_size // 1024} KB")


def grossmugl_night(root: Path) -> np.ndarray:
    """Stellarium's Grossmugl landscape as Stellarium draws it on a moonless night: the daylight
    photograph at 10 % brightness, its light-pollution layer (town lights) added, the Milky Way
    texture as the sky (2048 x 1024 equirectangular canvas, altitude +90 at the top)."""
    from PIL import Image

    land = root / "landscapes" / "grossmugl"
    h, w = 1024, 2048
    sky = np.asarray(Image.open(root / "textures" / "milkyway.png").convert("RGB").resize((w, h)), np.float64)
    out = 0.6 * sky + np.array([4.0, 6.0, 12.0])
    photo = np.asarray(Image.open(land / "grossmugl_leeberg_crop11.25_2048.png").convert("RGBA"), np.float64)
    top = round((90 - 11.25) / 180 * h)  # the photograph spans altitude +11.25 .. -90
    photo = np.asarray(Image.fromarray(photo.astype(np.uint8), "RGBA").resize((w, h - top), Image.BICUBIC),
                       np.float64)
    alpha = photo[..., 3:] / 255.0
    out[top:] = (1 - alpha) * out[top:] + alpha * 0.10 * photo[..., :3]
    illum = np.asarray(Image.open(land / "grossmugl_leeberg_illum_crop0_2048.png").convert("RGB")
                       .resize((w, h // 2), Image.BICUBIC), np.float64)  # altitude +90 .. 0
    out[: h // 2] += illum
    out = out + np.random.default_rng(7).normal(0.0, 1.5, (h, w))[..., None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hdri", type=Path, help="folder holding the Poly Haven *_1k.hdr files")
    ap.add_argument("--stellarium", type=Path, help="Stellarium's data folder (usr/share/stellarium of the .deb)")
    args = ap.parse_args()
    if args.hdri is None and args.stellarium is None:
        ap.error("give --hdri and/or --stellarium")
    if args.hdri:
        for k, (name, (stem, key, noise, _, _)) in enumerate(HDRI.items()):
            save(tone_map(read_hdr(args.hdri / f"{stem}.hdr"), key, noise, seed=k),
                 ROOT / "assets" / "watermark" / "panoramas" / f"{name}.jpg")
    if args.stellarium:
        save(grossmugl_night(args.stellarium), ROOT / "data" / "watermark_panoramas" / "grossmugl_night.jpg")


if __name__ == "__main__":
    main()
