"""Training and evaluation helpers for the SLD head (used by ``scripts/guardrail_train.py``).

The feature cache is written by ``evals/guardrail/data.py``; nothing here touches the
backbone, so retraining takes seconds to minutes on a CPU.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engines.guardrail.config import GuardConfig
from engines.guardrail.head import SLDHead, atc_loss, distill_loss
from engines.guardrail.metrics import f1_scores, streaming_report


@dataclass
class Example:
    """One cached reply: taps per token (T, D) float16, prompt taps (D,), labels and meta."""

    id: str
    view: str
    source: str
    split: str
    label: int
    anchor: int | None
    benign_prompt: bool
    feats: torch.Tensor
    prompt: torch.Tensor
    score: float | None = None  # mean human harm score (PyRIT harm Likert set only)


CACHE_LAYERS = (9, 15, 21, 30)  # the layers evals/guardrail/data.py stores, in this order


def columns(cfg: GuardConfig, hidden: int = 576, cache_layers: tuple[int, ...] = CACHE_LAYERS) -> torch.Tensor:
    """Column indices of ``cfg.layers`` inside a cached feature row.

    >>> columns(GuardConfig(layers=(15, 30), hidden_size=2), hidden=2, cache_layers=(9, 15, 21, 30)).tolist()
    [2, 3, 6, 7]
    """
    missing = [x for x in cfg.layers if x not in cache_layers]
    if missing:
        raise ValueError(f"layers {missing} are not in the feature cache {cache_layers}: re-run the data script")
    return torch.cat([torch.arange(cache_layers.index(x) * hidden, (cache_layers.index(x) + 1) * hidden)
                      for x in cfg.layers])


def load_cache(root: Path) -> list[Example]:
    """Read ``records.jsonl`` and ``feats/*.pt`` under ``root`` into examples."""
    recs = {}
    with open(root / "records.jsonl") as f:
        for line in f:
            r = json.loads(line)
            recs[r["id"]] = r
    out = []
    for path in sorted((root / "feats").glob("*.pt")):
        blob = torch.load(path)
        for i, feats, prompt in zip(blob["ids"], blob["feats"], blob["prompt"]):
            r = recs.get(i)
            if r is None or feats.shape[0] == 0:
                continue
            out.append(Example(i, r["view"], r["source"], r["split"], int(r["label"]), r["anchor"],
                               bool(r["benign_prompt"]), feats, prompt, r.get("score")))
    return out


def _batch(exs: list[Example], cols, soft: bool = False) -> tuple[torch.Tensor, ...]:
    """Padded taps, prompt taps, mask, response targets (the mean human score where one exists if
    ``soft``, else the label) and anchors (T for safe replies) of a list of examples."""
    T = max(e.feats.shape[0] for e in exs)
    D = exs[0].feats[:, cols].shape[1]
    x = torch.zeros(len(exs), T, D)
    m = torch.zeros(len(exs), T)
    for k, e in enumerate(exs):
        n = e.feats.shape[0]
        x[k, :n] = e.feats[:, cols].float()
        m[k, :n] = 1
    p = torch.stack([e.prompt[cols].float() for e in exs])
    y = torch.tensor([e.score if soft and e.score is not None else e.label for e in exs], dtype=torch.float32)
    a = torch.tensor([e.anchor if (e.label and e.anchor is not None) else T for e in exs], dtype=torch.long)
    return x, p, m, y, a


@torch.no_grad()
def head_traces(head: SLDHead, exs: list[Example], cols, batch: int = 64) -> tuple[list[list[float]], list[float]]:
    """Token risks per reply and the final response-level probability, in eval mode."""
    head.eval()
    traces, resp = [], []
    for b in range(0, len(exs), batch):
        sub = exs[b: b + batch]
        x, p, _m, *_ = _batch(sub, cols)
        rl, ql = head(x, p)
        r, q = torch.sigmoid(rl), torch.sigmoid(ql)
        for k, e in enumerate(sub):
            n = e.feats.shape[0]
            traces.append(r[k, :n].tolist())
            resp.append(float(q[k, n - 1]))
    return traces, resp


def pick_policy(traces, exs, max_false_stop: float = 0.05, pooled: bool = False) -> tuple[float, int, dict]:
    """Threshold and patience maximising mean dev F1 over views, with benign false stops capped.

    ``pooled``: maximise the F1 of all dev replies together instead of the mean of the per-view
    F1s. With content labels the model view has 2 harmful dev replies, so its own F1 jumps between
    0, 0.5 and 1 on a single reply and would decide the pick; pooled, every harmful dev reply
    counts once. The per-view reports are returned either way (``"pooled"`` added when used).
    """
    best = None
    views = sorted({e.view for e in exs})
    for thr in [*np.round(np.arange(0.2, 0.96, 0.05), 2), 0.97, 0.98, 0.99]:
        for pat in (1, 2, 3, 4, 6):
            reps = {}
            for v in views:
                idx = [k for k, e in enumerate(exs) if e.view == v]
                reps[v] = streaming_report([traces[k] for k in idx], [exs[k].label for k in idx],
                                           [exs[k].anchor for k in idx], [exs[k].benign_prompt for k in idx],
                                           float(thr), pat)
            fs = [r["false_stop_benign"] for r in reps.values() if not math.isnan(r["false_stop_benign"])]
            ok = all(f <= max_false_stop for f in fs)
            if pooled:
                reps["pooled"] = streaming_report(traces, [e.label for e in exs], [e.anchor for e in exs],
                                                  [e.benign_prompt for e in exs], float(thr), pat)
                score = (ok, reps["pooled"]["f1"])
            else:
                score = (ok, float(np.mean([r["f1"] for r in reps.values()])))
            if best is None or score > best[0]:
                best = (score, float(thr), pat, reps)
    return best[1], best[2], best[3]


def dev_policy(head: SLDHead, dev: list[Example], pooled: bool = False) -> tuple[float, int, dict]:
    """Threshold, patience and per-view dev reports of a trained head, by :func:`pick_policy`."""
    traces, _ = head_traces(head, dev, columns(head.cfg, head.cfg.hidden_size))
    return pick_policy(traces, dev, pooled=pooled)


def dev_score(reps: dict) -> float:
    """The figure :func:`pick_policy` maximised: pooled F1 when present, else the mean per-view F1."""
    return float(reps["pooled"]["f1"]) if "pooled" in reps else float(np.mean([r["f1"] for r in reps.values()]))


def train_head(cfg: GuardConfig, train: list[Example], dev: list[Example], *, epochs: int = 12, lr: float = 1e-3,
               batch: int = 32, seed: int = 0, lam_resp: float = 0.5, lam_atc: float = 1.0,
               weight_decay: float = 1e-4, atc_low: float = 0.1, atc_high: float = 0.9,
               lam_pol: float = 0.0, pol_patience: int = 3, view_weight: dict[str, float] | None = None,
               soft_labels: bool = False, teacher: SLDHead | None = None, lam_kd: float = 0.0,
               head_cls: type[SLDHead] = SLDHead, pooled_dev: bool = False, log=print) -> tuple[SLDHead, dict]:
    """Fit an SLD head with the ATC objective; keep the epoch with the best dev streaming F1.

    ``lam_pol`` / ``pol_patience`` switch on the stream-decision term of :func:`atc_loss`;
    ``view_weight`` (e.g. ``{"human": 2.0}``) weights every loss term of a reply by its view;
    ``soft_labels`` makes the response-level targets the mean human harm score where one exists;
    ``teacher`` with ``lam_kd > 0`` adds :func:`~engines.guardrail.head.distill_loss` towards that
    (trained, frozen) head's outputs on the same training replies; ``head_cls`` is the head to fit
    (an :class:`SLDHead` subclass with another memory cell, for the dev-only sweep);
    ``pooled_dev`` picks epoch and policy by the pooled dev F1 (:func:`pick_policy`).

    >>> cfg = GuardConfig(layers=(9,), hidden_size=4, proj_dim=8, state_dim=8)
    >>> ex = [Example(str(i), "v", "s", "train", i % 2, 0 if i % 2 else None, not i % 2,
    ...               torch.tensor([[1., -1., 1., -1.] * 4] * 3) * (1 - 2 * (i % 2)), torch.zeros(16))
    ...       for i in range(8)]
    >>> head, info = train_head(cfg, ex, ex, epochs=40, lr=1e-2, log=lambda *a: None)
    >>> info["dev_f1"] > 0.9
    True
    """
    torch.manual_seed(seed)
    rng = random.Random(seed)
    if teacher is not None:
        teacher.eval()
        if tuple(teacher.cfg.layers) != tuple(cfg.layers):
            raise ValueError(f"teacher reads layers {teacher.cfg.layers}, the student {cfg.layers}: they must match")
    cols = columns(cfg, cfg.hidden_size)
    head = head_cls(cfg)
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    best = (-1.0, None, None)
    teacher_out: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = {}
    order = sorted(range(len(train)), key=lambda k: train[k].feats.shape[0])
    for ep in range(epochs):
        head.train()
        chunks = [order[b: b + batch] for b in range(0, len(order), batch)]
        rng.shuffle(chunks)
        tot = 0.0
        for ch in chunks:
            x, p, m, y, a = _batch([train[k] for k in ch], cols, soft=soft_labels)
            rl, ql = head(x, p)
            w = None if not view_weight else torch.tensor([view_weight.get(train[k].view, 1.0) for k in ch])
            loss, _ = atc_loss(rl, ql, y, a, m, lam_resp=lam_resp, lam_atc=lam_atc, low=atc_low, high=atc_high,
                               weights=w, lam_pol=lam_pol, patience=pol_patience)
            if teacher is not None and lam_kd > 0:
                key = tuple(ch)  # the chunks are fixed (only their order is shuffled): teacher runs once each
                if key not in teacher_out:
                    with torch.no_grad():
                        teacher_out[key] = teacher(x, p)
                loss = loss + lam_kd * distill_loss(rl, ql, *teacher_out[key], m)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
            opt.step()
            tot += float(loss.detach()) * len(ch)
        sched.step()
        traces, _ = head_traces(head, dev, cols)
        thr, pat, reps = pick_policy(traces, dev, pooled=pooled_dev)
        f1 = dev_score(reps)
        log(f"epoch {ep + 1}/{epochs} loss {tot / len(train):.4f} dev mean F1 {f1:.3f} (thr {thr}, patience {pat})")
        if f1 > best[0]:
            best = (f1, {k: v.detach().clone() for k, v in head.state_dict().items()}, (thr, pat, ep + 1))
    head.load_state_dict(best[1])
    head.eval()
    return head, {"dev_f1": best[0], "threshold": best[2][0], "patience": best[2][1], "epoch": best[2][2]}


def evaluate(head: SLDHead, exs: list[Example], threshold: float, patience: int) -> dict:
    """Per-view streaming report plus offline response-level F1 (response output >= 0.5)."""
    cols = columns(head.cfg, head.cfg.hidden_size)
    traces, resp = head_traces(head, exs, cols)
    out = {}
    for v in sorted({e.view for e in exs}):
        idx = [k for k, e in enumerate(exs) if e.view == v]
        rep = streaming_report([traces[k] for k in idx], [exs[k].label for k in idx], [exs[k].anchor for k in idx],
                               [exs[k].benign_prompt for k in idx], threshold, patience)
        rep["offline_response"] = f1_scores([exs[k].label for k in idx], [int(resp[k] >= 0.5) for k in idx])
        rep["by_source"] = {}
        for s in sorted({exs[k].source for k in idx}):
            sidx = [k for k in idx if exs[k].source == s]
            r = streaming_report([traces[k] for k in sidx], [exs[k].label for k in sidx],
                                 [exs[k].anchor for k in sidx], [exs[k].benign_prompt for k in sidx],
                                 threshold, patience)
            rep["by_source"][s] = {k: r[k] for k in ("f1", "precision", "recall", "n", "positives",
                                                     "false_stop_safe")}
        out[v] = rep
    return out
