"""Embed and verify keyed bits in the bispectrum of an equirectangular panorama.

Method (seed paper: spherical invariant bispectrum watermarking). The luminance of the
panorama is a function on the sphere with coefficients ``f_lm``. A secret key selects ``K``
degree triples ``(l1, l2, l)`` in a mid band (``l1 + l2 + l`` even: real, mirror-safe) and a
random sign ``s_k`` for each. Each carrier's statistic is the normalised bispectrum

    c_k = g_k * B(l1, l2, l) / (|f_l1| |f_l2| |f_l|),   g_k = ((2l1+1)(2l2+1)(2l+1))^(1/3)   (Eq. C)

(``B`` from Eq. B/G in :mod:`engines.watermark.bispectrum`; ``g_k`` makes the spread of ``c_k``
on unmarked content about one for every triple). ``c_k`` is exactly invariant to any rotation.

* Embedding (informed, closed loop): find the smallest change ``delta_lm`` of the band
  coefficients such that ``s_k * bit_k * c_k(f + delta) >= margin`` for all carriers
  (squared-hinge penalty + energy, minimised on a linear model of the carriers with exact
  derivatives, re-measured between solves: :func:`_optimise`), synthesise
  ``delta`` alone on the pixel grid and ADD it to R, G and B (never rebuild the image from
  truncated coefficients), quantise to 8 bits, re-measure, and repeat on what is left.
* Verification (key only, no original needed): recompute ``c_k`` from the received image; bit ``i`` is the sign of
  ``u_i = sum_{k in i} s_k c_k``. ``P`` pilot carriers carry the key's own signs; the
  detection score ``z = sum_p s_p c_p / sqrt(sum_p c_p^2)`` is, for an unmarked image or a
  wrong key, a Rademacher sum, so ``P(z >= t) <= exp(-t^2/2)`` (Hoeffding) whatever the image.
  The threshold ``t = sqrt(2 ln(1/fpr))`` (5.26 for 1e-6) bounds the false-positive rate.
"""
from __future__ import annotations

import functools
import hashlib
import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from engines.common.device import get_device
from engines.common.threads import blas_threads, torch_threads
from engines.watermark.bispectrum import TripleProduct, admissible_triples
from engines.watermark.errors import EmbedError, ImageFormatError, KeyInputError
from engines.watermark.image import (
    luminance,
    nadir_patch,
    psnr,
    ssim,
    validate_image,
    ws_psnr,
)
from engines.watermark.payload import as_bits, decode_text
from engines.watermark.sht import TorchSHT, n_alm, synthesis


@functools.lru_cache(maxsize=32)
def _n_admissible(l_min: int, l_max: int) -> int:
    """How many carrier triples the band holds (cached: every config checks it, ~20 ms for 32..96)."""
    return len(admissible_triples(l_min, l_max))


@dataclass
class WatermarkConfig:
    """Settings of the bispectrum watermark.

    Args:
        bits: payload bits (64, 128, 256, ...); text mode spends 16 of them on a CRC.
        carriers_per_bit: bispectral scalars per payload bit (soft-combined).
        pilots: key-signed pilot carriers used for detection.
        l_min: lowest degree a carrier triple may use. ``None``: 32 (every tier).
        l_max: highest degree a carrier triple may use. ``None``: 96 (every tier; a panorama at
            least 2 x l_max = 192 rows high). Higher degrees hold less of a photograph's energy, so
            moving their normalised bispectrum costs less PSNR: the 256-bit tier gains about 3.5 dB
            from 32..96 over 24..64. The 64-bit tier used 24..64 with margin 0.6 and no probe until
            issue #32: on textured panoramas it then needed more change than 128 and 256 bits did
            and could fail the floor where they held (:data:`LEGACY_64` still reads such marks).
        margin: target of ``s_k * c_k`` (Eq. C) for every carrier after embedding. ``None``:
            0.3 (the probe below raises it where a carrier is fragile).
        psnr_floor: the embedder scales its change down rather than go below this PSNR (dB).
            ``None`` picks the tier's floor: 42 dB up to 256 bits, 36 dB above
            (see ``benchmarks/RESULTS.md#watermark`` for the bits-vs-PSNR curve).
        probes: closed-loop strength allocation per carrier: after embedding, the embedder
            attacks its own output this many times (a key-seeded Haar-random rotation, then
            JPEG 75, on a copy at most 1024 px wide), measures how far each carrier moved, and
            re-embeds with each carrier's target raised by 1.5x its worst move, so fragile
            carriers get more change and robust ones none; where the PSNR is then still 3 dB or
            more above the floor (smooth images), the targets are doubled unless that ends within
            1 dB of the floor. ``None``: 1 (every tier).
        occlusion: when above 0, after the usual rounds the embedder also pushes every carrier
            towards its side in a copy of its output whose bottom ``occlusion`` of rows is covered
            by a high-contrast logo (:func:`engines.watermark.image.nadir_patch`), as 360
            publishers hide the tripod, while the clean output keeps its goals. The logo's energy
            in the carrier degrees moves the normalised statistics by std ~1, so this costs
            change: it gets only what the PSNR floor leaves (weaker goals, or none, on smooth
            panoramas whose band energy the logo dwarfs; the notes say so). 0 (default): off.
        steps: L-BFGS-B iterations per linear solve.
        rounds: closed-loop rounds (embed, quantise, re-measure).
        energy_weight: weight of the change energy against the hinge penalty.
        energy: "pixel" penalises the mean square change over equirectangular pixels (what
            PSNR measures; rows are uniform in theta, so polar area counts more), "sphere" the
            L2 norm on the sphere (sum of |delta_lm|^2).
        fpr: false-positive probability the detection threshold guarantees (Hoeffding bound).
        device: torch device ("cpu", "cuda"); ``None`` = CUDA when present, else CPU.
        torch_threads: CPU threads for torch (and the embedder's scipy BLAS) inside embed/verify (restored after); ``None``
            leaves torch's setting. The tensors are small, and on a shared 2-core machine one
            thread was ~9x faster than two (OpenMP oversubscription).
        max_width: wider images are refused (the UI downscales first).
    """

    # payload
    bits: int = 64
    carriers_per_bit: int = 1
    pilots: int = 64
    # carrier band
    l_min: int | None = None
    l_max: int | None = None
    # strength and fidelity
    margin: float | None = None
    psnr_floor: float | None = None
    steps: int = 30
    rounds: int = 2
    energy_weight: float = 0.05
    energy: str = "pixel"
    # detection
    fpr: float = 1e-6
    # runtime
    device: str | None = None
    torch_threads: int | None = 1
    max_width: int = 4096
    probes: int | None = None
    occlusion: float = 0.0

    def __post_init__(self) -> None:
        # one recipe for every tier (issue #32): a smaller payload then needs a subset of the change
        # a larger one does, so it holds its floor wherever the larger tier does
        if self.l_min is None:
            self.l_min = 32
        if self.l_max is None:
            self.l_max = 96
        if self.margin is None:
            self.margin = 0.3
        if self.probes is None:
            self.probes = 1
        for name in ("bits", "carriers_per_bit", "pilots", "l_min", "l_max", "steps", "rounds", "max_width",
                     "probes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{name}={v!r}: must be a whole number")  # noqa: TRY004 - config errors are ValueError
        if isinstance(self.occlusion, bool) or not isinstance(self.occlusion, (int, float)) \
                or not 0 <= self.occlusion <= 0.25:
            raise ValueError(f"occlusion={self.occlusion!r}: a fraction of rows in [0, 0.25]")
        for name in ("margin", "psnr_floor", "energy_weight", "fpr"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise ValueError(f"{name}={v!r}: must be a finite number")
        if not 256 <= self.max_width <= 8192:
            raise ValueError(f"max_width={self.max_width}: choose between 256 and 8192 px (cost grows with pixels)")
        if self.steps > 500 or self.rounds > 10:
            raise ValueError(f"steps={self.steps}, rounds={self.rounds}: at most 500 steps and 10 rounds")
        if self.psnr_floor is None:
            self.psnr_floor = 42.0 if self.bits <= 256 else 36.0
        if not 20.0 <= self.psnr_floor <= 60.0:
            raise ValueError(f"psnr_floor={self.psnr_floor}: choose between 20 and 60 dB (42 is invisible)")
        if not 8 <= self.bits <= 1024:
            raise ValueError(f"bits={self.bits}: choose between 8 and 1024 (64, 128 and 256 are tested)")
        if self.carriers_per_bit < 1:
            raise ValueError("carriers_per_bit must be >= 1")
        if self.pilots < 16:
            raise ValueError(f"pilots={self.pilots}: use at least 16 so a watermark can pass the threshold")
        if not 2 <= self.l_min < self.l_max:
            raise ValueError(f"need 2 <= l_min < l_max, got l_min={self.l_min}, l_max={self.l_max}")
        n_adm = _n_admissible(int(self.l_min), int(self.l_max))
        if self.n_carriers > n_adm:
            raise ValueError(f"{self.n_carriers} carriers but only {n_adm} triples in [{self.l_min}, {self.l_max}]: "
                             "widen the band or lower bits/carriers_per_bit")
        if not 0 < self.margin <= 10:
            raise ValueError(f"margin={self.margin}: choose in (0, 10] (0.3 is the default)")
        if self.energy_weight < 0:
            raise ValueError(f"energy_weight={self.energy_weight}: must be >= 0")
        if not 0 < self.fpr < 0.5:
            raise ValueError("fpr must be in (0, 0.5)")
        if self.energy not in ("pixel", "sphere"):
            raise ValueError(f"energy={self.energy!r}: use 'pixel' or 'sphere'")
        if self.steps < 1 or self.rounds < 1:
            raise ValueError("steps and rounds must be >= 1")
        if not 0 <= self.probes <= 4:
            raise ValueError(f"probes={self.probes}: choose 0..4 simulated attacks (each costs a rotation and a round)")

    @property
    def n_carriers(self) -> int:
        return self.bits * self.carriers_per_bit + self.pilots

    @property
    def threshold(self) -> float:
        """Detection threshold on ``z``: ``sqrt(2 ln(1/fpr))``."""
        return math.sqrt(2 * math.log(1 / self.fpr))


TIERS = (64, 128, 256)
"""Payload sizes the tab, the batch CLI and the MCP tools offer (floor 42 dB each)."""

LEGACY_64 = {"bits": 64, "l_min": 24, "l_max": 64}
"""The 64-bit tier's carrier band before issue #32 (it also had margin 0.6 and no probe, which only
the embedder uses): :func:`verify` still tries it, so marks made then keep reading."""


_GN_STEPS = 3
"""Linear solves per optimiser round (:func:`_optimise`)."""

_OCCLUSION_GOAL = 1.0
"""The occluded view's goals, times the clean view's."""
_OCCLUSION_WEIGHT = 0.5
"""The weight of the occluded view's hinge: a softer ask than the clean view's, so the few carriers
the logo moves most may stay short there (the bar is >= 95 % of bits under the logo, 100 % without it)."""


@dataclass(frozen=True)
class Carriers:
    """The key's carriers: triples, signs, owner bit (-1 = pilot) and Eq. C gains."""

    triples: np.ndarray
    signs: np.ndarray
    owner: np.ndarray
    gain: np.ndarray


def _key_seed(key: str, config: WatermarkConfig) -> int:
    if not isinstance(key, str) or not key.strip():
        raise KeyInputError("the secret key is empty: type a key (any text; keep it secret)")
    tag = f"{key}\x00{config.bits}\x00{config.carriers_per_bit}\x00{config.pilots}\x00{config.l_min}\x00{config.l_max}"
    return int.from_bytes(hashlib.sha256(tag.encode("utf-8")).digest()[:8], "little")


@functools.lru_cache(maxsize=64)
def _carriers_cached(seed: int, bits: int, cpb: int, pilots: int, l_min: int, l_max: int) -> Carriers:
    rng = np.random.default_rng(seed)
    adm = admissible_triples(l_min, l_max)
    k = bits * cpb + pilots
    triples = adm[rng.choice(len(adm), size=k, replace=False)]
    signs = rng.choice([-1.0, 1.0], size=k)
    owner = np.concatenate([np.full(pilots, -1), np.repeat(np.arange(bits), cpb)])
    owner = owner[rng.permutation(k)]
    gain = np.cbrt(np.prod(2 * triples + 1, axis=1).astype(np.float64))
    return Carriers(triples, signs, owner, gain)


def carriers_for(key: str, config: WatermarkConfig) -> Carriers:
    """The carriers a key selects under ``config`` (deterministic)."""
    c = config
    return _carriers_cached(_key_seed(key, c), c.bits, c.carriers_per_bit, c.pilots, c.l_min, c.l_max)


class Verifier(torch.nn.Module):
    """Luminance map ``(H, W)`` -> carrier statistics ``c_k`` (Eq. C), all in torch."""

    def __init__(self, height: int, width: int, carriers: Carriers, l_max: int,
                 dtype: torch.dtype = torch.float32):
        super().__init__()
        self.sht = TorchSHT(height, width, l_max, dtype=dtype)
        self.tp = TripleProduct(carriers.triples, l_max, dtype=dtype)
        self.register_buffer("gain", torch.tensor(carriers.gain, dtype=dtype))

    def stats(self, re: torch.Tensor, im: torch.Tensor) -> torch.Tensor:
        return self.gain * self.tp(re, im)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        re, im = self.sht(y)
        return self.stats(re, im)


@functools.lru_cache(maxsize=4)  # one is up to 25 MB (256 bits, 2048 x 1024), rebuilt in 0.3 s
def _verifier(height: int, width: int, seed: int, config_key: tuple, device: str) -> Verifier:
    bits, cpb, pilots, l_min, l_max = config_key
    car = _carriers_cached(seed, bits, cpb, pilots, l_min, l_max)
    return Verifier(height, width, car, l_max).to(device)


def _get_verifier(key: str, config: WatermarkConfig, height: int, width: int) -> tuple[Verifier, Carriers]:
    c = config
    seed = _key_seed(key, c)
    dev = str(get_device(c.device))
    v = _verifier(height, width, seed, (c.bits, c.carriers_per_bit, c.pilots, c.l_min, c.l_max), dev)
    return v, carriers_for(key, c)


def decode_stats(stats: np.ndarray, carriers: Carriers, config: WatermarkConfig) -> dict:
    """Carrier statistics -> bit scores, bits, pilot z-score and its p-value bound."""
    s = carriers.signs * np.asarray(stats, dtype=np.float64)
    owner = carriers.owner
    scores = np.zeros(config.bits)
    np.add.at(scores, owner[owner >= 0], s[owner >= 0])
    pil = s[owner < 0]
    denom = math.sqrt(float(np.sum(pil ** 2))) or 1.0
    z = float(np.sum(pil) / denom)
    p = 1.0 if z <= 0 else min(1.0, math.exp(-z * z / 2))
    return {"scores": scores, "bits": (scores > 0).astype(np.uint8), "z": z, "p_value": p,
            "detected": z >= config.threshold}


@dataclass
class EmbedResult:
    """Output of :func:`embed`.

    Attributes:
        image: watermarked panorama, uint8 H x W x 3.
        psnr: PSNR against the input (dB). ssim: mean SSIM against the input.
        ws_psnr: WS-PSNR against the input (dB; rows weighted by their area on the sphere).
        bits: the payload bits embedded. is_text: whether they encode a text message.
        min_margin: smallest ``s_k c_k`` over carriers measured on the 8-bit output.
        seconds: wall time. notes: anything the user should know (e.g. PSNR floor hit).
    """

    image: np.ndarray
    psnr: float
    ssim: float
    bits: np.ndarray
    is_text: bool
    min_margin: float
    seconds: float
    notes: list[str] = field(default_factory=list)
    ws_psnr: float = float("nan")

    def __repr__(self) -> str:
        return (f"EmbedResult(shape={self.image.shape}, psnr={self.psnr:.2f} dB, ws_psnr={self.ws_psnr:.2f} dB, "
                f"ssim={self.ssim:.4f}, "
                f"bits={len(self.bits)}, min_margin={self.min_margin:.2f}, seconds={self.seconds:.2f})")


@dataclass
class VerifyResult:
    """Output of :func:`verify`.

    Attributes:
        bits: decoded payload bits. scores: soft score per bit (sign = bit).
        message: the text, when a text payload was embedded and its CRC checks out, else None.
        detected: pilot z-score at or above the threshold. z: pilot z-score.
        p_value: Hoeffding bound on the chance of a z this high without the watermark.
        threshold: the z threshold used. seconds: wall time.
        notes: what the user should know, e.g. that the mark was read at another capacity than the one asked.
        config: the configuration the result was read with (another tier's when ``notes`` says so).
    """

    bits: np.ndarray
    scores: np.ndarray
    message: str | None
    detected: bool
    z: float
    p_value: float
    threshold: float
    seconds: float
    notes: list[str] = field(default_factory=list)
    config: WatermarkConfig | None = None

    @property
    def bits_hex(self) -> str:
        """The decoded bits as hexadecimal, most significant bit first (what a raw-bit payload reads as).

        >>> VerifyResult(np.array([1, 0, 1, 0, 1, 1, 1, 1]), np.zeros(8), None, True, 6.0, 1e-8, 5.26, 0.0).bits_hex
        'af'
        """
        return np.packbits(np.asarray(self.bits, dtype=np.uint8)).tobytes().hex()

    def __repr__(self) -> str:
        return (f"VerifyResult(detected={self.detected}, z={self.z:.2f}, p_value={self.p_value:.3g}, "
                f"message={self.message!r}, seconds={self.seconds:.3f})")


def _check_size(image: np.ndarray, config: WatermarkConfig) -> None:
    h = image.shape[0]
    if h < 2 * config.l_max:
        raise ImageFormatError(
            f"the image has {h} rows; carriers up to degree {config.l_max} need at least {2 * config.l_max} "
            "rows. Use a larger image or lower l_max")


def _energy_blocks(tp: TripleProduct, cfg: WatermarkConfig) -> np.ndarray:
    """:func:`_energy_blocks_uncached`, kept on the (cached) carrier module: it depends only on its
    degrees, the energy kind and the floor, and costs ~0.1 s to build."""
    key = (cfg.energy, cfg.psnr_floor)
    cache = tp.__dict__.setdefault("_energy_cache", {})
    if key not in cache:
        cache[key] = _energy_blocks_uncached(tp, cfg)
    return cache[key]


def _energy_blocks_uncached(tp: TripleProduct, cfg: WatermarkConfig) -> np.ndarray:
    """Quadratic form of the change energy in the per-degree coefficients: ``E = sum_m x_m^T Q_m x_m``
    for the real parts and the imaginary parts alike (``Q``: ``(2, M, D, D)``, divided by the
    budget the energy is measured against).

    "pixel": the mean square of the change over equirectangular pixels (rows uniform in theta,
    what PSNR measures): on the exact grid, rows weighted by ``w_i / sin(theta_i)``; a ring's
    ``sum_phi`` keeps ``m = 0`` once and ``m > 0`` twice. "sphere": ``sum |delta_lm|^2`` over the
    sphere (``m = 0`` once, ``m > 0`` twice)."""
    legd = tp.legd.detach().cpu().double().numpy()  # (D, T, M)
    _, n_t, n_m = legd.shape
    cm = np.where(np.arange(n_m) == 0, 1.0, 2.0)
    mse_floor = 255.0 ** 2 / 10 ** (cfg.psnr_floor / 10)
    if cfg.energy == "pixel":
        xg, wg = np.polynomial.legendre.leggauss(n_t)
        q = wg / np.sqrt(1 - xg ** 2) / np.pi / mse_floor  # (T,)
        lm = legd.transpose(2, 0, 1)  # (M, D, T)
        qre = np.einsum("mdt,t,met->mde", lm, q, lm) * cm[:, None, None]
    else:
        gm = tp.gmask.detach().cpu().double().numpy().T  # (M, D)
        qre = np.stack([np.diag(g) for g in gm]) * cm[:, None, None] / (4 * np.pi * mse_floor)
    qim = qre.copy()
    qim[0] = 0.0  # Im a_l0 is zero for a real map
    return np.stack([qre, qim])


def _optimise(ver: Verifier, views: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], target: torch.Tensor,
              cfg: WatermarkConfig) -> np.ndarray:
    """Smallest band change with ``target_k * c_k >= goal_k`` in every view (returned as ``(2, n_alm)``).

    A view is ``(re, im, goal)``: the coefficients of the current output, or of that output as an
    attack leaves it (e.g. with a logo over its nadir), and the goals there; the same change is
    added to each (in an attacked view the part of the change under the logo is lost, which the
    next round's re-measurement corrects).

    Linearise every ``c_k`` at the current coefficients (exact derivatives from
    :meth:`TripleProduct.linearise`), minimise squared hinge + ``energy_weight`` x change energy (a
    quadratic form, :func:`_energy_blocks`) under that linear model with L-BFGS-B (``cfg.steps``
    iterations; each costs a sparse product, not a pass over the grid); then measure ``c_k``
    exactly where that landed, shift the linear model to agree there (same derivatives: the
    carriers are close to linear over one round's change) and solve again, ``_GN_STEPS`` solves in
    all."""
    from scipy.optimize import minimize
    from scipy.sparse import csr_matrix, vstack

    tp = ver.tp
    n_d, n_m = tp.n_degrees, tp.lmax + 1
    gain = ver.gain
    coeffs = [tp.coeffs(re0, im0) for re0, im0, _ in views]
    ar0 = coeffs[0][0]
    q = _energy_blocks(tp, cfg)  # (2, M, D, D)
    gmask = tp.gmask.detach().cpu().double().numpy()  # (D, M)
    free = np.stack([gmask, gmask * (np.arange(n_m) > 0)]).ravel()  # (2, D, M) flattened
    t = np.tile(target.detach().cpu().double().numpy(), len(views))
    goal = np.concatenate([g.detach().cpu().double().numpy() for _, _, g in views]) * 1.15
    vw = np.concatenate([np.full(len(target), 1.0 if i == 0 else _OCCLUSION_WEIGHT) for i in range(len(views))])
    tix = tp.tix.cpu().numpy()
    k = len(tix)
    rows = np.repeat(np.arange(k), 3 * 2 * n_m)
    cols = (np.arange(2)[None, None, :, None] * n_d * n_m + tix[:, :, None, None] * n_m
            + np.arange(n_m)[None, None, None, :])
    cols = np.broadcast_to(cols, (k, 3, 2, n_m)).ravel()
    delta = np.zeros(2 * n_d * n_m)
    ew = cfg.energy_weight

    jm = None
    for _ in range(_GN_STEPS):
        d_t = torch.tensor(delta.reshape(2, n_d, n_m), dtype=ar0.dtype, device=ar0.device)
        with torch.no_grad():
            if jm is None:
                parts, jacs = [], []
                for ar, ai in coeffs:
                    b, jac = tp.linearise(ar + d_t[0], ai + d_t[1])
                    jac = (gain[:, None, None, None] * jac).cpu().double().numpy()
                    jacs.append(csr_matrix((jac.ravel(), (rows, cols)), shape=(k, 2 * n_d * n_m)))
                    parts.append(b)
                jm = vstack(jacs).tocsr()
            else:
                parts = [tp.values(ar + d_t[0], ai + d_t[1]) for ar, ai in coeffs]
            c_now = torch.cat([gain * b for b in parts]).cpu().double().numpy()
        base = c_now - jm @ delta  # linear model: c(x) ~ base + J x

        def loss(x: np.ndarray, jm: csr_matrix = jm, base: np.ndarray = base) -> tuple[float, np.ndarray]:
            h = np.maximum(0.0, goal - t * (base + jm @ x)) * vw
            xs = x.reshape(2, n_d, n_m).transpose(0, 2, 1)[..., None]  # (2, M, D, 1)
            qx = (q @ xs)[..., 0]  # (2, M, D)
            energy = float((xs[..., 0] * qx).sum())
            grad = -2.0 * (jm.T @ (t * h * vw)) + ew * 2.0 * qx.transpose(0, 2, 1).ravel()
            return float(h @ h) + ew * energy, grad * free

        with blas_threads(cfg.torch_threads):  # after scipy.optimize is loaded: the cap covers its BLAS
            delta = minimize(loss, delta, jac=True, method="L-BFGS-B",
                             options={"maxiter": cfg.steps, "gtol": 1e-12, "ftol": 1e-15}).x
    d = delta.reshape(2, n_d, n_m) * gmask
    out = np.zeros((2, n_alm(tp.lmax)))
    gidx = tp.gidx.cpu().numpy()
    np.add.at(out[0], gidx, d[0].ravel())
    np.add.at(out[1], gidx, d[1].ravel())
    return out


def _share_within_floor(image: np.ndarray, before: np.ndarray, after: np.ndarray, floor: float) -> float:
    """Largest ``s`` in [0, 1] (to 1/4096) with ``before + s (after - before)``, quantised, at or above
    ``floor`` dB PSNR against ``image`` (0 when even ``before`` is not)."""
    def ok(s: float) -> bool:
        return psnr(image, np.clip(np.rint(before + s * (after - before)), 0, 255).astype(np.uint8)) >= floor

    if ok(1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _probe_moves(image: np.ndarray, key: str, cfg: WatermarkConfig, target: np.ndarray) -> np.ndarray:
    """Worst change of each carrier's signed statistic ``target_k c_k`` over ``cfg.probes`` simulated
    attacks (key-seeded Haar-random rotation, then JPEG 75) of a copy at most 1024 px wide."""
    from engines.watermark.image import (
        jpeg,
        random_rotation,
        resize,
        rotate_equirect_matrix,
    )

    small = image if image.shape[1] <= 1024 else resize(image, 1024 / image.shape[1])
    h, w = small.shape[:2]
    ver, _ = _get_verifier(key, cfg, h, w)
    rng = np.random.default_rng(_key_seed(key, cfg) ^ 0x5EED)

    def signed(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return target * ver(torch.tensor(luminance(x), device=ver.gain.device, dtype=ver.gain.dtype)).cpu().numpy()

    base = signed(small)
    worst = np.zeros_like(base)
    for _ in range(cfg.probes):
        moved = signed(jpeg(rotate_equirect_matrix(small, random_rotation(rng)), 75)) - base
        worst = np.minimum(worst, moved)
    return worst


def embed(image: np.ndarray, message: str | np.ndarray | list, key: str,
          config: WatermarkConfig | None = None) -> EmbedResult:
    """Embed ``message`` (text or a 0/1 array of ``config.bits``) into ``image`` under ``key``.

    >>> from engines.watermark.image import load_example, resize
    >>> img = resize(load_example("sunrise"), 0.5)             # 512 x 256
    >>> res = embed(img, "hello", key="k1")
    >>> res.psnr >= 42, verify(res.image, key="k1").message
    (True, 'hello')
    """
    cfg = config or WatermarkConfig()
    with torch_threads(cfg.torch_threads):
        return _embed(image, message, key, cfg)


def _embed(image: np.ndarray, message: str | np.ndarray | list, key: str, cfg: WatermarkConfig,
           _retry: bool = False) -> EmbedResult:
    t0 = time.perf_counter()
    image = validate_image(image, cfg.max_width)
    _check_size(image, cfg)
    payload, is_text = as_bits(message, cfg.bits)
    lum0 = luminance(image)
    if float(lum0.max() - lum0.min()) < 1.0:
        raise EmbedError("the image is flat (one brightness everywhere, e.g. all black): the bispectral "
                         "carriers need texture to hold the watermark. Use a photograph")
    h, w = image.shape[:2]
    ver, car = _get_verifier(key, cfg, h, w)
    dev = ver.gain.device
    L = cfg.l_max
    target = car.signs * np.where(car.owner < 0, 1.0, 2.0 * payload[np.maximum(car.owner, 0)] - 1.0)
    f32 = {"device": dev, "dtype": torch.float32}
    target_t = torch.tensor(target, **f32)

    notes: list[str] = []

    work = image.astype(np.float64)
    out = image
    goal = torch.full_like(target_t, cfg.margin)

    def rounds(n: int, occluded: float | None = None) -> None:
        """Up to ``n`` optimiser rounds from the current output; with ``occluded``, a second view (the
        output under a nadir logo) at ``occluded`` x the goals joins each."""
        nonlocal work, out
        for _ in range(n):
            views = []
            with torch.no_grad():
                for x in [out] + ([nadir_patch(out, cfg.occlusion)] if occluded else []):
                    re0, im0 = ver.sht(torch.tensor(luminance(x), **f32))
                    views.append((re0, im0, goal if not views else goal * occluded))
                if all(bool((target_t * ver.stats(re0, im0) >= g).all()) for re0, im0, g in views):
                    break
            dm = _optimise(ver, views, target_t, cfg)
            work = work + synthesis(dm[0] + 1j * dm[1], L, h, w)[..., None]
            out = np.clip(np.rint(work), 0, 255).astype(np.uint8)

    rounds(cfg.rounds)
    if cfg.probes:
        # closed loop per carrier: raise each carrier's target by 1.5x its worst move under the
        # embedder's own attacks, then embed again from the current output
        moves = _probe_moves(out, key, cfg, target)
        goal = torch.tensor(cfg.margin + 1.5 * np.maximum(0.0, -moves), **f32)
        rounds(cfg.rounds)
        if psnr(image, out) >= cfg.psnr_floor + 3.0:
            # smooth images leave PSNR unused, and their carriers move most under JPEG (little
            # energy in the band): spend the headroom on twice the targets, unless that overshoots
            kept = (work, out)
            goal = goal * 2.0
            rounds(cfg.rounds)
            if psnr(image, out) < cfg.psnr_floor + 1.0:
                work, out = kept
    if cfg.occlusion and psnr(image, out) >= cfg.psnr_floor:
        # the logo view gets what the floor leaves: embed for it on top (the clean view keeps its
        # goals), then go only as far towards that as the floor allows (both ends meet the clean
        # goals, so every point between does, to first order; checked)
        kept = (work, out)
        rounds(cfg.rounds, occluded=_OCCLUSION_GOAL)
        share = _share_within_floor(image, kept[0], work, cfg.psnr_floor)
        work = kept[0] + share * (work - kept[0])
        out = np.clip(np.rint(work), 0, 255).astype(np.uint8)
        with torch.no_grad():
            c_mix = ver(torch.tensor(luminance(out), **f32))
        if share == 0.0 or not bool((target_t * c_mix >= 0.5 * goal).all()):
            work, out = kept
            notes.append(f"no room under the PSNR floor of {cfg.psnr_floor} dB for the nadir-logo protection: "
                         "embedded without it (a logo over the nadir will erase much of the payload)")
        elif share < 1.0:
            notes.append(f"nadir-logo protection at {share:.2f}x to keep PSNR >= {cfg.psnr_floor} dB: "
                         "a logo over the nadir may erase part of the payload")
    p = psnr(image, out)
    if p < cfg.psnr_floor and not _retry:
        # the budget binds: ask every carrier for less (keeps all of them on the right side,
        # unlike scaling the whole change down), then scale only if that is still too much
        retry = _embed(image, message, key, replace(cfg, margin=cfg.margin / 2), _retry=True)
        retry.seconds = time.perf_counter() - t0
        retry.notes.insert(0, f"PSNR floor {cfg.psnr_floor} dB reached at margin {cfg.margin} "
                              f"(unscaled {p:.2f} dB); re-embedded at margin {cfg.margin / 2}")
        return retry
    if p < cfg.psnr_floor:
        lo = _share_within_floor(image, image.astype(np.float64), work, cfg.psnr_floor)
        out = np.clip(np.rint(image + lo * (work - image)), 0, 255).astype(np.uint8)
        notes.append(f"unscaled PSNR {p:.2f} dB; change scaled to {lo:.2f}x to keep PSNR >= {cfg.psnr_floor} dB; robustness is lower")
        p = psnr(image, out)
    with torch.no_grad():
        c_fin = ver(torch.tensor(luminance(out), **f32)).cpu().numpy()
    margins = target * c_fin
    wrong = int(np.sum(~(margins > 0)))  # NaN counts as wrong
    if wrong:
        low = float(np.nanmin(margins)) if np.isfinite(margins).any() else float("nan")
        why = (f"the PSNR floor of {cfg.psnr_floor} dB scaled the change down too far; lower the floor or embed fewer bits"
               if notes else "the image has too little texture in the carrier band; use a more detailed panorama "
               "or fewer bits")
        raise EmbedError(f"the watermark did not take: {wrong} of {len(margins)} carriers end on the wrong side "
                         f"(smallest margin {low:.2f}, target {cfg.margin}), so it would not read back: {why}")
    if float(margins.min()) < cfg.margin:
        notes.append(f"smallest carrier margin {float(margins.min()):.2f} is below the target {cfg.margin}: "
                     "the watermark reads back, but survives less attack")
    return EmbedResult(image=out, psnr=p, ssim=ssim(image, out), bits=payload, is_text=is_text,
                       min_margin=float(margins.min()), seconds=time.perf_counter() - t0, notes=notes,
                       ws_psnr=ws_psnr(image, out))


def verify(image: np.ndarray, key: str, config: WatermarkConfig | None = None, *,
           other_tiers: bool = True) -> VerifyResult:
    """Key-only verification: decode the payload under ``key`` from ``image`` alone (no original needed).

    When nothing reads under ``config`` and ``other_tiers`` is set, the other capacities of
    :data:`TIERS` (and the 64-bit band of :data:`LEGACY_64`) are tried for the same key, so a mark
    embedded at another capacity is reported and read (with a note naming that capacity) instead of
    "no watermark". Those tries share a false-positive budget of ``config.fpr`` (each runs at
    ``fpr / n``), so an unmarked image passes with probability at most ``2 * fpr`` in all.

    >>> from engines.watermark.image import load_example
    >>> res = verify(load_example("forest"), key="k1")   # never watermarked
    >>> res.detected, res.message
    (False, None)
    """
    t0 = time.perf_counter()
    cfg = config or WatermarkConfig()
    image = validate_image(image, cfg.max_width)
    _check_size(image, cfg)
    res = _verify_at(image, key, cfg, t0)
    if res.detected or not other_tiers:
        return res
    tried = []
    for label, alt, how in _fallback_configs(cfg, image.shape[0]):
        tried.append(label)
        found = _verify_at(image, key, alt, t0)
        if found.detected:
            found.notes.append(f"the watermark was embedded at {label}, not at the {cfg.bits} bits asked for: "
                               f"read there ({how})")
            return found
    res.seconds = time.perf_counter() - t0
    if tried:
        res.notes.append(f"no watermark at {cfg.bits} bits under this key, nor at {', '.join(tried)}")
    return res


def _fallback_configs(config: WatermarkConfig, height: int) -> list[tuple[str, WatermarkConfig, str]]:
    """The other tiers' configurations :func:`verify` tries after ``config`` read nothing: (label,
    config, how to read it directly) each, with ``config``'s runtime settings and ``config.fpr`` split
    evenly among them. Those whose carriers equal ``config``'s, or whose band does not fit ``height``
    rows, are left out."""
    def carriers_of(c: WatermarkConfig) -> tuple:
        return c.bits, c.carriers_per_bit, c.pilots, c.l_min, c.l_max

    runtime = {"device": config.device, "torch_threads": config.torch_threads, "max_width": config.max_width}
    cands = [(f"{b} bits", WatermarkConfig(bits=b, **runtime), f"choose {b} bits to verify it directly")
             for b in TIERS]
    lo, hi = LEGACY_64["l_min"], LEGACY_64["l_max"]
    cands.append((f"64 bits in the {lo}..{hi} band of versions before issue #32", WatermarkConfig(**LEGACY_64, **runtime),
                  f"WatermarkConfig(bits=64, l_min={lo}, l_max={hi}) reads it directly; embed again for the current band"))
    picked = [c for c in cands if carriers_of(c[1]) != carriers_of(config) and height >= 2 * c[1].l_max]
    return [(label, replace(c, fpr=config.fpr / len(picked)), how) for label, c, how in picked]


def _verify_at(image: np.ndarray, key: str, cfg: WatermarkConfig, t0: float) -> VerifyResult:
    """:func:`verify` under one configuration (the image already validated and large enough)."""
    h, w = image.shape[:2]
    ver, car = _get_verifier(key, cfg, h, w)
    with torch.no_grad(), torch_threads(cfg.torch_threads):
        stats = ver(torch.tensor(luminance(image), device=ver.gain.device, dtype=ver.gain.dtype)).cpu().numpy()
    return verify_result(stats, car, cfg, t0)


def verify_result(stats: np.ndarray, carriers: Carriers, config: WatermarkConfig, t0: float) -> VerifyResult:
    """Carrier statistics (from torch or onnxruntime) -> :class:`VerifyResult`."""
    dec = decode_stats(stats, carriers, config)
    message = decode_text(dec["scores"]) if dec["detected"] else None
    return VerifyResult(bits=dec["bits"], scores=dec["scores"], message=message, detected=dec["detected"],
                        z=dec["z"], p_value=dec["p_value"], threshold=config.threshold,
                        seconds=time.perf_counter() - t0, config=config)


def bit_accuracy(decoded: np.ndarray, embedded: np.ndarray) -> float:
    """Fraction of equal bits.

    >>> bit_accuracy(np.array([1, 0, 1, 1]), np.array([1, 0, 0, 1]))
    0.75
    """
    decoded, embedded = np.asarray(decoded), np.asarray(embedded)
    if decoded.shape != embedded.shape:
        raise KeyInputError(f"bit arrays differ in length: {decoded.shape} vs {embedded.shape}")
    return float(np.mean(decoded == embedded))
