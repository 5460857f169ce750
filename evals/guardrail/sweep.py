"""Dev-only hyper-parameter sweep for the SLD head (never reads the test split's labels or traces).

    HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python -m evals.guardrail.sweep NAME [--seed S] [...]

Trains one variant with :func:`evals.guardrail.train.train_head` (best epoch by dev streaming
F1) and saves its weights and dev risk logits under ``data/guardrail/sweep/NAME.pt`` so seed
ensembles can be scored on dev afterwards (``--ensemble A,B,C``: logit-averaged dev traces, same
threshold/patience rule as everything else). ``--score PATH`` scores a saved head (e.g. the
shipped ``assets/guardrail/sld_head.pt``) on today's dev split by the same rule, so a head trained
on an earlier data build can be compared with new candidates on the same dev replies.

``--memory cfc|ssm`` trains the same head with another memory cell in place of the GRU (the issue
names the memory "GRU/SSM/CfC-like"; the shipped head uses the GRU). Same taps, projection,
prompt-initialised state, read-outs, loss and dev epoch pick; see :func:`memory_head`:

* ``cfc``: closed-form continuous-time cell (Hasani et al., Nature MI 2022, Eq. 10, "default"
  mode, time step 1): ``b = tanh(W_b [u_t; s_{t-1}])``,
  ``g = σ(-W_a b + W_t b)``, ``s_t = (1 - g) ⊙ tanh(W_1 b) + g ⊙ tanh(W_2 b)``.
* ``ssm``: a selective real diagonal state space (Mamba-like, Gu & Dao 2023, discretised by
  zero-order hold): ``Δ_t = softplus(W_Δ u_t)``, ``λ_t = exp(-Δ_t ⊙ a)`` with ``a > 0`` learned,
  ``h_t = λ_t ⊙ h_{t-1} + (1 - λ_t) ⊙ W_B u_t``, read out as ``s_t = tanh(W_C h_t)``.

Their recurrence is a Python loop over tokens (training only; ~2 min per seed on one CPU thread).
They are not exported: a variant would be wired into the engine only if it won on dev.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from engines.guardrail.config import GuardConfig
from engines.guardrail.export import load_head
from engines.guardrail.head import SLDHead
from evals.guardrail.options import add_fit_options, add_head_options, head_config
from evals.guardrail.train import (
    columns,
    dev_policy,
    head_traces,
    load_cache,
    pick_policy,
    train_head,
)

ROOT = Path(__file__).resolve().parents[2]

CACHE = ROOT / "data" / "guardrail"


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

        def memory(self, u: torch.Tensor, s0: torch.Tensor) -> torch.Tensor:
            s, seen = s0, []
            for t in range(u.shape[1]):
                s, o = self.cell(u[:, t], s)
                seen.append(o)
            return torch.stack(seen, 1)

    MemoryHead.__name__ = f"SLDHead_{kind}"
    return MemoryHead


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--ensemble", default="")
    ap.add_argument("--score", type=Path, default=None, help="score this saved head on dev and exit")
    ap.add_argument("--cache", type=Path, default=CACHE, help="feature cache (data/guardrail_all for the scaling run)")
    add_fit_options(ap)
    ap.add_argument("--lam-atc", type=float, default=0.5)
    ap.add_argument("--lam-resp", type=float, default=0.5)
    add_head_options(ap)
    ap.add_argument("--atc-low", type=float, default=0.1)
    ap.add_argument("--atc-high", type=float, default=0.9)
    ap.add_argument("--lam-pol", type=float, default=0.0, help="weight of the stream-decision term (atc_loss)")
    ap.add_argument("--pol-patience", type=int, default=3)
    ap.add_argument("--human-weight", type=float, default=1.0, help="loss weight of human-view replies")
    ap.add_argument("--soft-labels", action="store_true", help="response targets = mean human harm score")
    ap.add_argument("--teacher", type=Path, default=None, help="distil from this saved head (e.g. the shipped ensemble)")
    ap.add_argument("--lam-kd", type=float, default=1.0, help="weight of the distillation term (with --teacher)")
    ap.add_argument("--memory", choices=("gru", "cfc", "ssm"), default="gru",
                    help="memory cell: the shipped GRU, or a dev-only variant (memory_head)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = args.cache / "sweep"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    exs = load_cache(args.cache)
    dev = [e for e in exs if e.split == "dev"]
    if args.score is not None:
        head = load_head(args.score)
        thr, pat, reps = dev_policy(head, dev)
        print(f"SCORE {args.score}: dev mean F1 {np.mean([r['f1'] for r in reps.values()]):.4f} "
              + " ".join(f"{v} {r['f1']:.3f} fs {r['false_stop_benign']:.3f}" for v, r in reps.items())
              + f" thr {thr} pat {pat}", flush=True)
        return
    if args.ensemble:
        logits = [torch.load(out / f"{n}.pt")["dev_logits"] for n in args.ensemble.split(",")]
        traces = [torch.sigmoid(torch.stack([torch.tensor(lg[k]) for lg in logits]).mean(0)).tolist()
                  for k in range(len(dev))]
        thr, pat, reps = pick_policy(traces, dev)
        print(f"ENSEMBLE {args.ensemble}: dev mean F1 {np.mean([r['f1'] for r in reps.values()]):.4f} "
              + " ".join(f"{v} {r['f1']:.3f} fs {r['false_stop_benign']:.3f}" for v, r in reps.items())
              + f" thr {thr} pat {pat}", flush=True)
        return
    train = [e for e in exs if e.split == "train"]
    del exs
    cfg = head_config(args)
    head, info = train_head(cfg, train, dev, epochs=args.epochs, lr=args.lr, seed=args.seed,
                            lam_atc=args.lam_atc, lam_resp=args.lam_resp, weight_decay=args.weight_decay,
                            atc_low=args.atc_low, atc_high=args.atc_high, lam_pol=args.lam_pol,
                            pol_patience=args.pol_patience, soft_labels=args.soft_labels,
                            view_weight=None if args.human_weight == 1.0 else {"human": args.human_weight},
                            teacher=None if args.teacher is None else load_head(args.teacher),
                            lam_kd=args.lam_kd if args.teacher is not None else 0.0,
                            head_cls=SLDHead if args.memory == "gru" else memory_head(args.memory),
                            log=lambda *a: print(*a, flush=True))
    cols = columns(cfg, cfg.hidden_size)
    traces, _ = head_traces(head, dev, cols)
    dev_logits = [torch.logit(torch.tensor(t).clamp(1e-7, 1 - 1e-7)).tolist() for t in traces]
    thr, pat, reps = pick_policy(traces, dev)
    torch.save({"config": cfg.to_dict(), "state_dict": head.state_dict(), "info": info,
                "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                "dev_logits": dev_logits}, out / f"{args.name}.pt")
    print(f"RESULT {args.name}: dev mean F1 {info['dev_f1']:.4f} epoch {info['epoch']} "
          + " ".join(f"{v} {r['f1']:.3f} fs {r['false_stop_benign']:.3f}" for v, r in reps.items())
          + f" thr {thr} pat {pat} ({time.time() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
