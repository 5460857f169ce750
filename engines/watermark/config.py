"""Settings of the bispectrum watermark and the payload tiers every front-end offers."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from engines.watermark.bispectrum import admissible_triples


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
        l_min: lowest degree a carrier triple may use. ``None``: 32, or 40 above 256 bits.
        l_max: highest degree a carrier triple may use. ``None``: 96, or 128 above 256 bits; a
            panorama needs at least ``2 x l_max`` rows. Higher degrees hold less of a photograph's
            energy, so moving their normalised bispectrum costs less PSNR, and move more under
            resampling and JPEG.
        margin: target of ``s_k * c_k`` (Eq. C) for every carrier after embedding. ``None``: 0.3
            (the probe below raises it where a carrier is fragile).
        psnr_floor: the embedder scales its change down rather than go below this PSNR (dB).
            ``None`` picks the tier's floor: 42 dB up to 256 bits, 40 dB above.
        probes: closed-loop strength allocation per carrier: after embedding, the embedder
            attacks its own output this many times (a key-seeded Haar-random rotation, then JPEG 75
            or, every second time, a 360 viewer's sharing chain; on a copy at most 1024 px wide),
            measures how far each carrier moved, and re-embeds with each carrier's target raised by
            1.5x its worst move, so fragile carriers get more change and robust ones none; where the
            PSNR is then still 3 dB or more above the floor (smooth images), the targets are doubled
            unless that ends within 1 dB of the floor. ``None``: 2.
        find_caps: when verifying, look for pasted discs anywhere on the sphere (a tripod cover or a
            stitcher's logo, :func:`engines.watermark.occlusion.find_caps`) and, when there are any,
            also read the panorama with them filled from their rims
            (:func:`engines.watermark.occlusion.fill_cap`); the read with the higher pilot z-score
            counts, each at half the false-positive budget. Costs about 0.1 s per verify, and a
            second read when a disc is found.
        steps: L-BFGS-B iterations per linear solve.
        rounds: closed-loop rounds (embed, quantise, re-measure).
        energy_weight: weight of the change energy against the hinge penalty.
        energy: "pixel" penalises the mean square change over equirectangular pixels (what
            PSNR measures; rows are uniform in theta, so polar area counts more), "sphere" the
            L2 norm on the sphere (sum of |delta_lm|^2).
        fpr: false-positive probability the detection threshold guarantees (Hoeffding bound).
        device: torch device ("cpu", "cuda"); ``None`` = CUDA when present, else CPU.
        torch_threads: CPU threads for torch (and the embedder's scipy BLAS) inside embed and
            verify, restored after; ``None`` leaves torch's setting. The tensors are small: on a
            shared 2-core machine one thread is faster than two.
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
    find_caps: bool = True

    def __post_init__(self) -> None:
        # one recipe for every tier: a smaller payload then needs a subset of the change a larger
        # one does, so it holds its floor wherever the larger tier does
        large = isinstance(self.bits, (int, np.integer)) and self.bits > 256  # 1024 bits: a wider, higher band
        if self.l_min is None:
            self.l_min = 40 if large else 32
        if self.l_max is None:
            self.l_max = 128 if large else 96
        if self.margin is None:
            self.margin = 0.3
        if self.probes is None:
            self.probes = 2
        for name in ("bits", "carriers_per_bit", "pilots", "l_min", "l_max", "steps", "rounds", "max_width",
                     "probes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{name}={v!r}: must be a whole number")  # noqa: TRY004 - config errors are ValueError
        if not isinstance(self.find_caps, bool):
            raise ValueError(f"find_caps={self.find_caps!r}: True or False")  # noqa: TRY004 - config errors are ValueError
        for name in ("margin", "psnr_floor", "energy_weight", "fpr"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise ValueError(f"{name}={v!r}: must be a finite number")
        if not 256 <= self.max_width <= 8192:
            raise ValueError(f"max_width={self.max_width}: choose between 256 and 8192 px (cost grows with pixels)")
        if self.steps > 500 or self.rounds > 10:
            raise ValueError(f"steps={self.steps}, rounds={self.rounds}: at most 500 steps and 10 rounds")
        if self.psnr_floor is None:
            self.psnr_floor = 42.0 if self.bits <= 256 else 40.0
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
        """Detection threshold on ``z``: ``sqrt(2 ln(1/fpr))``.

        >>> round(WatermarkConfig(fpr=1e-6).threshold, 3)
        5.257
        """
        return math.sqrt(2 * math.log(1 / self.fpr))

    def carrier_key(self) -> tuple[int, int, int, int, int]:
        """The fields that decide which carriers a key selects (bits, carriers per bit, pilots, band)."""
        return int(self.bits), int(self.carriers_per_bit), int(self.pilots), int(self.l_min), int(self.l_max)


TIERS = (64, 128, 256)
"""Payload sizes the tab, the batch CLI and the MCP tools offer (floor 42 dB each)."""

LEGACY_64 = {"bits": 64, "l_min": 24, "l_max": 64}
"""The 64-bit tier's earlier carrier band (24..64): :func:`engines.watermark.verify` still tries it,
so marks embedded in it keep reading."""
