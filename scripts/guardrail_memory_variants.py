"""Dev-only check: the SLD head with another memory cell in place of the GRU (never reads test).

    PYTHONPATH=. HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python scripts/guardrail_memory_variants.py \
        --memory cfc|ssm NAME --seed S --lam-pol 0.5

The issue names the memory "GRU/SSM/CfC-like"; the shipped head uses the GRU. This script trains
the same head (taps, projection, prompt-initialised state, read-outs, loss, dev epoch pick) with
one of two other discrete-time memories, through the unchanged :mod:`scripts.guardrail_sweep`
(its options and its ``data/<cache>/sweep/NAME.pt`` output, so ``guardrail_sweep.py --ensemble``
scores seed ensembles of these variants on dev):

* ``cfc``: closed-form continuous-time cell (Hasani et al., Nature MI 2022, Eq. 10, "default"
  mode, time step 1): ``b = tanh(W_b [u_t; s_{t-1}])``,
  ``g = σ(-W_a b + W_t b)``, ``s_t = (1 - g) ⊙ tanh(W_1 b) + g ⊙ tanh(W_2 b)``.
* ``ssm``: a selective real diagonal state space (Mamba-like, Gu & Dao 2023, discretised by
  zero-order hold): ``Δ_t = softplus(W_Δ u_t)``, ``λ_t = exp(-Δ_t ⊙ a)`` with ``a > 0`` learned,
  ``h_t = λ_t ⊙ h_{t-1} + (1 - λ_t) ⊙ W_B u_t``, read out as ``s_t = tanh(W_C h_t)``.

The recurrence is a Python loop over tokens (training only; ~2 min per seed on one CPU thread).
The variants are not exported: a variant would be wired into the engine only if it won on dev.
"""
from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engines.guardrail.train as train_module
from engines.guardrail.config import GuardConfig
from engines.guardrail.head import SLDHead


def memory_head(kind: str) -> type[SLDHead]:
    """An :class:`SLDHead` subclass whose memory is ``kind`` ("cfc" or "ssm") instead of the GRU."""
    if kind not in ("cfc", "ssm"):
        raise ValueError(f"memory={kind!r}: choose 'cfc' or 'ssm'")

    class MemoryHead(SLDHead):
        def __init__(self, cfg: GuardConfig) -> None:
            super().__init__(cfg)
            P, S = cfg.proj_dim, cfg.state_dim
            del self.gru
            if kind == "cfc":
                self.bb = nn.Linear(P + S, S)
                self.ff1, self.ff2 = nn.Linear(S, S), nn.Linear(S, S)
                self.ta, self.tb = nn.Linear(S, S), nn.Linear(S, S)
            else:
                self.inp, self.dt, self.out = nn.Linear(P, S), nn.Linear(P, S), nn.Linear(S, S)
                self.loga = nn.Parameter(torch.log(torch.linspace(0.05, 1.0, S)))

        def cell(self, u: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """(new carried state, state the read-outs see)."""
            if kind == "cfc":
                b = torch.tanh(self.bb(torch.cat([u, s], -1)))
                g = torch.sigmoid(-self.ta(b) + self.tb(b))
                s = torch.tanh(self.ff1(b)) * (1 - g) + g * torch.tanh(self.ff2(b))
                return s, s
            lam = torch.exp(-F.softplus(self.dt(u)) * torch.exp(self.loga))
            h = lam * s + (1 - lam) * self.inp(u)
            return h, torch.tanh(self.out(h))

        def forward(self, x: torch.Tensor, prompt_taps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            u = self.embed(x)
            s = self.init_state(prompt_taps)
            seen = []
            for t in range(u.shape[1]):
                s, o = self.cell(u[:, t], s)
                seen.append(o)
            states = torch.stack(seen, 1)
            return self.risk(torch.cat([states, u], dim=-1)).squeeze(-1), self.resp(states).squeeze(-1)

    MemoryHead.__name__ = f"SLDHead_{kind}"
    return MemoryHead


def main() -> None:
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--memory", required=True, choices=("cfc", "ssm"))
    args, rest = ap.parse_known_args()
    train_module.SLDHead = memory_head(args.memory)  # train_head builds its head from this name
    sys.argv = [str(ROOT / "scripts" / "guardrail_sweep.py"), *rest]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
