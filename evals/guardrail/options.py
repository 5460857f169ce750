"""The head-training options that ``scripts/guardrail_train.py`` and :mod:`evals.guardrail.sweep`
share: one default each, and the head configuration they describe."""
from __future__ import annotations

import argparse

from engines.guardrail.config import GuardConfig


def add_fit_options(ap: argparse.ArgumentParser) -> None:
    """``--epochs``, ``--lr`` and ``--seed`` of :func:`evals.guardrail.train.train_head`."""
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)


def add_head_options(ap: argparse.ArgumentParser, layers_help: str | None = None) -> None:
    """``--dropout``, ``--weight-decay`` and the head's shape: ``--proj-dim``, ``--state-dim``, ``--layers``."""
    ap.add_argument("--dropout", type=float, default=0.3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--proj-dim", type=int, default=128)
    ap.add_argument("--state-dim", type=int, default=128)
    ap.add_argument("--layers", default="15,21,30", help=layers_help)


def head_config(args: argparse.Namespace) -> GuardConfig:
    """The :class:`GuardConfig` of parsed :func:`add_head_options` options.

    >>> ap = argparse.ArgumentParser(); add_head_options(ap)
    >>> head_config(ap.parse_args(["--layers", "15,30"])).layers
    (15, 30)
    """
    return GuardConfig(layers=tuple(int(x) for x in args.layers.split(",")), dropout=args.dropout,
                       proj_dim=args.proj_dim, state_dim=args.state_dim)
