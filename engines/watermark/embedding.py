"""Embed keyed bits in the bispectrum of an equirectangular panorama (informed, closed loop).

Find the smallest change ``delta_lm`` of the band coefficients such that
``s_k * bit_k * c_k(f + delta) >= goal_k`` for all carriers (Eq. C of
:mod:`engines.watermark.carriers`; solved by :func:`engines.watermark.optimise.optimise`),
synthesise ``delta`` alone on the pixel grid and ADD it to R, G and B (never rebuild the image from
truncated coefficients), quantise to 8 bits, re-measure, and repeat on what is left. Then attack the
result the way a viewer would (a rotation and JPEG 75), raise each carrier's goal by how far it moved,
and embed again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from engines.common.threads import torch_threads
from engines.watermark.attacks import jpeg, sharing_chain
from engines.watermark.carriers import Verifier, check_size, get_verifier, key_seed
from engines.watermark.config import WatermarkConfig
from engines.watermark.cost import observe
from engines.watermark.errors import EmbedError
from engines.watermark.image_io import luminance, resize, validate_image
from engines.watermark.metrics import psnr, ssim, ws_psnr
from engines.watermark.optimise import optimise
from engines.watermark.payload import as_bits, bits_hex
from engines.watermark.rotation import random_rotation, rotate_equirect_matrix
from engines.watermark.sht import synthesis


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

    def png_bytes(self) -> bytes:
        """The watermarked panorama as PNG file bytes (lossless: what to save or send)."""
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(self.image).save(buf, format="PNG")
        return buf.getvalue()

    def to_dict(self, image: bool = True) -> dict:
        """The result as JSON-ready values: the image as base64 PNG (``image_png_base64``, left out
        with ``image=False``), ``psnr_db``, ``ws_psnr_db``, ``ssim``, ``bits`` (how many),
        ``bits_hex`` (the payload, most significant bit first), ``is_text``, ``min_margin``,
        ``seconds`` and ``notes``.

        >>> r = EmbedResult(np.zeros((2, 4, 3), np.uint8), 43.21234, 0.99, np.array([1, 0, 1, 0, 1, 1, 1, 1]),
        ...                 False, 0.3, 1.5)
        >>> d = r.to_dict(image=False); d["psnr_db"], d["bits"], d["bits_hex"]
        (43.212, 8, 'af')
        """
        import base64

        out = {"image_png_base64": base64.b64encode(self.png_bytes()).decode()} if image else {}
        return out | {"psnr_db": round(self.psnr, 3), "ws_psnr_db": round(self.ws_psnr, 3),
                      "ssim": round(self.ssim, 5), "bits": len(self.bits), "bits_hex": bits_hex(self.bits),
                      "is_text": bool(self.is_text), "min_margin": round(self.min_margin, 4),
                      "seconds": round(self.seconds, 2), "notes": list(self.notes)}

    def __repr__(self) -> str:
        return (f"EmbedResult(shape={self.image.shape}, psnr={self.psnr:.2f} dB, ws_psnr={self.ws_psnr:.2f} dB, "
                f"ssim={self.ssim:.4f}, "
                f"bits={len(self.bits)}, min_margin={self.min_margin:.2f}, seconds={self.seconds:.2f})")


def _quantise(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


@dataclass
class ClosedLoop:
    """The embedder's state between rounds: the change so far, in float (``work``) and as the 8-bit
    image it gives (``out``), and every carrier's goal for ``target_k * c_k``."""

    ver: Verifier
    target: torch.Tensor
    cfg: WatermarkConfig
    work: np.ndarray
    out: np.ndarray
    goal: torch.Tensor

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        return self.work, self.out

    def restore(self, state: tuple[np.ndarray, np.ndarray]) -> None:
        self.work, self.out = state

    def set_work(self, work: np.ndarray) -> None:
        self.work, self.out = work, _quantise(work)

    def _coeffs(self, image: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        g = self.ver.gain
        return self.ver.sht(torch.tensor(luminance(image), device=g.device, dtype=torch.float32))

    def rounds(self, n: int) -> None:
        """Up to ``n`` optimiser rounds from the current output (fewer once every goal is met)."""
        cfg, ver = self.cfg, self.ver
        h, w = self.out.shape[:2]
        for _ in range(n):
            with torch.no_grad():
                re0, im0 = self._coeffs(self.out)
                if bool((self.target * ver.stats(re0, im0) >= self.goal).all()):
                    break
            dm = optimise(ver, re0, im0, self.goal, self.target, cfg)
            self.set_work(self.work + synthesis(dm[0] + 1j * dm[1], cfg.l_max, h, w)[..., None])


def share_within_floor(image: np.ndarray, before: np.ndarray, after: np.ndarray, floor: float) -> float:
    """Largest ``s`` in [0, 1] (to 1/4096) with ``before + s (after - before)``, quantised, at or above
    ``floor`` dB PSNR against ``image`` (0 when even ``before`` is not)."""
    def ok(s: float) -> bool:
        return psnr(image, _quantise(before + s * (after - before))) >= floor

    if ok(1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def probe_moves(image: np.ndarray, key: str, cfg: WatermarkConfig, target: np.ndarray) -> np.ndarray:
    """Worst change of each carrier's signed statistic ``target_k c_k`` over ``cfg.probes`` simulated
    attacks of a copy at most 1024 px wide, each after a key-seeded Haar-random rotation: JPEG 75, then
    the sharing chain of a 360 viewer (:func:`engines.watermark.attacks.sharing_chain`: EAC faces at
    half size in JPEG 80), in turn."""
    small = image if image.shape[1] <= 1024 else resize(image, 1024 / image.shape[1])
    h, w = small.shape[:2]
    ver, _ = get_verifier(key, cfg, h, w)
    rng = np.random.default_rng(key_seed(key, cfg) ^ 0x5EED)
    base = target * ver.measure(luminance(small))
    worst = np.zeros_like(base)
    for i in range(cfg.probes):
        rotated = rotate_equirect_matrix(small, random_rotation(rng))
        if i % 2 == 0:
            moved = target * ver.measure(luminance(jpeg(rotated, 75))) - base
        else:  # read at half size: a verifier of that size sees the same c_k
            shared = sharing_chain(rotated)
            half, _ = get_verifier(key, cfg, *shared.shape[:2])
            moved = target * half.measure(luminance(shared)) - base
        worst = np.minimum(worst, moved)
    return worst


def embed(image: np.ndarray, message: str | np.ndarray | list, key: str,
          config: WatermarkConfig | None = None) -> EmbedResult:
    """Embed ``message`` (text or a 0/1 array of ``config.bits``) into ``image`` under ``key``.

    >>> from engines.watermark import load_example, resize, verify
    >>> img = resize(load_example("sunrise"), 0.5)             # 512 x 256
    >>> res = embed(img, "hello", key="k1")
    >>> res.psnr >= 42, verify(res.image, key="k1").message
    (True, 'hello')
    """
    cfg = config or WatermarkConfig()
    with torch_threads(cfg.torch_threads):
        res = _embed(image, message, key, cfg)
    h, w = res.image.shape[:2]
    observe(w, h, len(res.bits), res.seconds)  # the next wait shown is in this machine's seconds
    return res


def _embed(image: np.ndarray, message: str | np.ndarray | list, key: str, cfg: WatermarkConfig,
           _retry: bool = False) -> EmbedResult:
    t0 = time.perf_counter()
    image = validate_image(image, cfg.max_width)
    check_size(image, cfg)
    payload, is_text = as_bits(message, cfg.bits)
    lum0 = luminance(image)
    if float(lum0.max() - lum0.min()) < 1.0:
        raise EmbedError("the image is flat (one brightness everywhere, e.g. all black): the bispectral "
                         "carriers need texture to hold the watermark. Use a photograph")
    h, w = image.shape[:2]
    ver, car = get_verifier(key, cfg, h, w)
    target = car.signs * np.where(car.owner < 0, 1.0, 2.0 * payload[np.maximum(car.owner, 0)] - 1.0)
    f32 = {"device": ver.gain.device, "dtype": torch.float32}
    target_t = torch.tensor(target, **f32)
    notes: list[str] = []
    loop = ClosedLoop(ver, target_t, cfg, image.astype(np.float64), image,
                      torch.full_like(target_t, cfg.margin))

    loop.rounds(cfg.rounds)
    if cfg.probes:
        # closed loop per carrier: raise each carrier's target by 1.5x its worst move under the
        # embedder's own attacks, then embed again from the current output
        moves = probe_moves(loop.out, key, cfg, target)
        loop.goal = torch.tensor(cfg.margin + 1.5 * np.maximum(0.0, -moves), **f32)
        loop.rounds(cfg.rounds)
        if psnr(image, loop.out) >= cfg.psnr_floor + 3.0:
            # smooth images leave PSNR unused, and their carriers move most under JPEG (little
            # energy in the band): spend the headroom on twice the targets, unless that overshoots
            kept = loop.snapshot()
            loop.goal = loop.goal * 2.0
            loop.rounds(cfg.rounds)
            if psnr(image, loop.out) < cfg.psnr_floor + 1.0:
                loop.restore(kept)
    work, out = loop.snapshot()
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
        lo = share_within_floor(image, image.astype(np.float64), work, cfg.psnr_floor)
        out = _quantise(image + lo * (work - image))
        notes.append(f"unscaled PSNR {p:.2f} dB; change scaled to {lo:.2f}x to keep PSNR >= {cfg.psnr_floor} dB; robustness is lower")
        p = psnr(image, out)
    margins = target * ver.measure(luminance(out))
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
