"""Sweeps and evaluations shared by the tab, the eval script and the benchmark."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engines.watermark.baselines import (
    DwtDctBaseline,
    PowerSpectrumBaseline,
    flatten_power_spectrum,
    imwatermark_available,
)
from engines.watermark.config import WatermarkConfig
from engines.watermark.embedding import embed
from engines.watermark.metrics import psnr
from engines.watermark.rotation import rotate_equirect_matrix
from engines.watermark.verification import bit_accuracy, verify


def axis_angle_matrix(axis: np.ndarray, angle_deg: float) -> np.ndarray:
    """Rotation by ``angle_deg`` about ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    t = np.radians(angle_deg)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(t) * k + (1 - np.cos(t)) * k @ k


SWEEP_AXIS = np.array([1.0, 2.0, 3.0])  # tilted: mixes yaw, pitch and roll


def rotation_sweep(image: np.ndarray, key: str, angles: list[float] | None = None,
                   config: WatermarkConfig | None = None, seed: int = 0,
                   progress: Callable[[float, str], None] | None = None) -> dict:
    """Bit accuracy vs rotation angle (about a tilted axis) for ours and both baselines.

    All three embed random bits into the same image. The power-spectrum scheme is bisected to
    our PSNR (an equal-PSNR comparison: the same pixel budget) and carries as many bits as its
    band allows; DWT-DCT runs at the strongest quantisation step that reads back at 0 degrees
    (:meth:`DwtDctBaseline.embed_checked`). Each is also read after the keyless spectrum-flattening
    attack (:func:`flatten_power_spectrum`), which erases a power-spectrum mark but leaves the
    normalised bispectrum unchanged. Returns a dict with ``angles`` and, per method,
    ``accuracy`` (list), ``bits``, ``psnr`` and ``flatten`` (accuracy after flattening).

    >>> from engines.watermark import load_example, resize
    >>> r = rotation_sweep(resize(load_example("sunrise"), 0.5), "k", angles=[0, 30])
    >>> r["ours"]["accuracy"]
    [1.0, 1.0]
    """
    cfg = config or WatermarkConfig()
    angles = list(angles if angles is not None else [0, 1, 2, 5, 10, 20, 45, 90, 135, 180])
    rng = np.random.default_rng(seed)
    note = progress or (lambda frac, msg: None)
    out: dict = {"angles": angles}

    note(0.0, "embedding (ours)")
    bits = rng.integers(0, 2, cfg.bits).astype(np.uint8)
    res = embed(image, bits, key, cfg)
    methods = {"ours": (res.image, lambda x: verify(x, key, cfg, other_tiers=False).bits, bits, res.psnr)}

    note(0.3, "embedding (power spectrum)")
    ps = PowerSpectrumBaseline(key, cfg.l_min, cfg.l_max)
    ps_bits = rng.integers(0, 2, ps.capacity).astype(np.uint8)
    ps_img, ps_psnr = ps.embed_at_psnr(image, ps_bits, res.psnr)
    methods["power spectrum"] = (ps_img, ps.decode, ps_bits, ps_psnr)

    if imwatermark_available():
        note(0.4, "embedding (DWT-DCT)")
        dd = DwtDctBaseline(bits=cfg.bits)
        dd_img = dd.embed_checked(image, bits)
        methods[f"DWT-DCT (invisible-watermark, step {dd.scale})"] = (dd_img, dd.decode, bits, psnr(image, dd_img))
    else:
        out["note"] = "invisible-watermark is not installed: DWT-DCT baseline skipped"

    for name, (img, dec, b, p) in methods.items():
        flat = flatten_power_spectrum(img, 8, min(263, img.shape[0] // 2 - 1))
        out[name] = {"accuracy": [], "bits": len(b), "psnr": float(p), "flatten": bit_accuracy(dec(flat), b)}
    for i, ang in enumerate(angles):
        note(0.45 + 0.55 * i / len(angles), f"rotation {ang} deg")
        rot = axis_angle_matrix(SWEEP_AXIS, ang)
        for name, (img, dec, b, _) in methods.items():
            x = rotate_equirect_matrix(img, rot) if ang else img
            out[name]["accuracy"].append(bit_accuracy(dec(x), b))
    note(1.0, "done")
    return out


def pilot_z_scores(images: list[np.ndarray], keys: list[str], config: WatermarkConfig | None = None,
                   progress: Callable[[int], None] | None = None, chunk: int = 16) -> np.ndarray:
    """Detection statistic ``z`` of every image under every key, shape ``(len(keys), len(images))``.

    ``z = sum_p s_p c_p / sqrt(sum_p c_p^2)`` over the key's pilot carriers, the score ``verify``
    thresholds (Hoeffding: ``P(z >= t) <= exp(-t^2/2)`` for an unmarked image). The images' band maps
    ``f_l`` of every degree up to ``l_max`` (Eq. G's integrand) are computed once, ``chunk`` images
    at a time, and reused for every key, whose carriers only pick which three maps to multiply: that
    makes false-positive sweeps over many keys cheap. ``progress(k)`` is called after key ``k``.
    """
    import torch

    from engines.watermark.bispectrum import TripleProduct
    from engines.watermark.carriers import carriers_for
    from engines.watermark.image_io import luminance
    from engines.watermark.sht import TorchSHT

    cfg = config or WatermarkConfig()
    sht = TorchSHT(512, 1024, cfg.l_max, dtype=torch.float32)
    ls = np.arange(cfg.l_max + 1)
    every = TripleProduct(np.stack([ls, ls, 0 * ls], 1), cfg.l_max, dtype=torch.float32)  # maps of degrees 0..l_max
    carriers = [carriers_for(key, cfg) for key in keys]
    z = np.empty((len(keys), len(images)))
    for s in range(0, len(images), chunk):
        with torch.no_grad():
            coeffs = [sht(torch.tensor(luminance(x), dtype=torch.float32)) for x in images[s:s + chunk]]
            maps = [every.degree_maps_fft(re, im) for re, im in coeffs]  # (l_max + 1, n_theta, n_phi) each
            norms = [every.norms(re, im) for re, im in coeffs]
        for k, car in enumerate(carriers):
            pil = car.owner < 0
            tp = TripleProduct(car.triples[pil], cfg.l_max, dtype=torch.float32)
            used = torch.tensor(np.unique(car.triples[pil]))  # the degrees tp's tix index, in its order
            with torch.no_grad():
                for i, (m, n) in enumerate(zip(maps, norms)):
                    c = car.signs[pil] * car.gain[pil] * tp.from_maps(m[used], n[used]).numpy()
                    z[k, s + i] = c.sum() / np.sqrt((c ** 2).sum())
            if progress is not None and s + chunk >= len(images):
                progress(k)
    return z
