"""Training and evaluation helpers for the SLD head (used by ``scripts/guardrail_train.py``).

The feature cache is written by the data build (:mod:`evals.guardrail.content_data` and friends);
nothing here touches the backbone, so retraining takes seconds to minutes on a CPU.
"""
from __future__ import annotations

import json
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from engines.guardrail.config import GuardConfig
from engines.guardrail.head import SLDHead
from engines.guardrail.losses import atc_loss, distill_loss, ordinal_atc_loss
from engines.guardrail.metrics import f1_scores, streaming_report
from evals.guardrail.data import TAPS


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
    strict_label: int | None = None  # 1 = complies or unsafe, 0 = safe, None = not known (no strict loss)
    strict_anchor: int | None = None  # first token where the reply starts going along
    key: str | None = None  # the normalised request (how the request judge's inputs are looked up)
    judge: torch.Tensor | None = None  # the request judge's inputs (GuardConfig.judge_dim), when loaded


def columns(cfg: GuardConfig, hidden: int = 576, cache_layers: tuple[int, ...] = TAPS) -> torch.Tensor:
    """Column indices of ``cfg.layers`` inside a cached feature row.

    >>> columns(GuardConfig(layers=(15, 30), hidden_size=2), hidden=2, cache_layers=(9, 15, 21, 30)).tolist()
    [2, 3, 6, 7]
    """
    missing = [x for x in cfg.layers if x not in cache_layers]
    if missing:
        raise ValueError(f"layers {missing} are not in the feature cache {cache_layers}: re-run the data script")
    return torch.cat([torch.arange(cache_layers.index(x) * hidden, (cache_layers.index(x) + 1) * hidden)
                      for x in cfg.layers])


def load_cache(root: Path, levels: dict[str, dict] | None = None,
               judge: dict[str, torch.Tensor] | None = None) -> list[Example]:
    """Read ``*records.jsonl`` and ``feats/*.pt`` under ``root`` into examples.

    ``levels`` (id -> three-level label row, ``evals/guardrail/level_labels.jsonl``) sets the
    strict targets (:func:`strict_target`), and the loose label (``unsafe`` or not) of the views
    labelled only there (prefill, sampled); a reply with its own content label (model view) or
    human label (human view) keeps it as the loose target. Replies to benign requests that nobody
    read are safe (the guideline's rule); other replies without a loose label are skipped.
    ``judge`` (normalised request -> the request judge's inputs, :func:`judge_inputs`) fills
    :attr:`Example.judge`.
    """
    from evals.guardrail.content_prompts import norm

    recs = {}
    for path in sorted(root.glob("*records.jsonl")):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                recs[r["id"]] = r
    levels = levels or {}
    out = []
    for path in sorted((root / "feats").glob("*.pt")):
        blob = torch.load(path)
        for i, feats, prompt in zip(blob["ids"], blob["feats"], blob["prompt"]):
            r = recs.get(i)
            if r is None or feats.shape[0] == 0:
                continue
            lv = levels.get(i)
            label, anchor = r.get("label"), r.get("anchor")
            if lv is not None and label is None:  # views labelled only in three levels
                label, anchor = int(lv["level"] == "unsafe"), lv["unsafe_anchor"]
            if label is None and r.get("benign_prompt") and r["view"] in ("model", "prefill", "sampled", "contrast",
                                                                          "requests"):
                label, anchor = 0, None  # a reply to a benign request not read: safe by the guideline's rule
            if label is None:
                continue
            key = norm(r["prompt"])
            e = Example(i, r["view"], r["source"], r["split"], int(label), anchor, bool(r["benign_prompt"]), feats,
                        prompt, r.get("score"), key=key, judge=None if judge is None else judge.get(key))
            e.strict_label, e.strict_anchor = strict_target(e, lv, r.get("label_regex"))
            out.append(e)
    return out


def strict_target(e: Example, level: dict | None, label_regex: int | None) -> tuple[int | None, int | None]:
    """(strict label, anchor) of one reply: its three-level label where read; otherwise what its
    view settles (replies to benign requests and written refusals are safe, content-unsafe replies
    comply from their anchor on, a reply to a harmful request with only refusal sentences is safe);
    else unknown (None: no strict loss, not in strict figures).

    >>> z = torch.zeros(1, 1)
    >>> strict_target(Example("a", "human", "s", "dev", 0, None, False, z, z), None, 1)
    (None, None)
    >>> strict_target(Example("a", "prefill", "s", "dev", 0, None, False, z, z), {"level": "complies", "comply_anchor": 3}, 1)
    (1, 3)
    """
    if level is not None:
        return (0, None) if level["level"] == "safe" else (1, level["comply_anchor"])
    if e.label:
        return 1, e.anchor
    if e.benign_prompt or e.view == "forced" or label_regex == 0:
        return 0, None
    if e.view == "paired" and e.id.endswith("-r"):
        return 0, None
    return None, None


def strict_examples(exs: list[Example]) -> tuple[list[Example], list[int]]:
    """The examples with a known strict target, relabelled to it, and their indices in ``exs``."""
    idx = [k for k, e in enumerate(exs) if e.strict_label is not None]
    return [replace(exs[k], label=exs[k].strict_label, anchor=exs[k].strict_anchor) for k in idx], idx


def goes_along_examples(exs: list[Example]) -> tuple[list[Example], list[int]]:
    """The "reply goes along" targets of the decomposed strict policy, and their indices in ``exs``:
    replies to harmful requests whose strict level is known (complies or unsafe from the comply
    anchor on; safe: a refusal, or a reply that answers something else) and the written refusals of
    the train split. Replies to benign requests carry no target here: whether a request is harmful
    is the request gate's question (:meth:`engines.guardrail.head.SLDHead.request_prob`), so this
    read-out only learns whether the reply has started doing what was asked.

    >>> z = torch.zeros(1, 1)
    >>> ex = [Example("a", "model", "s", "dev", 0, None, True, z, z, strict_label=0),
    ...       Example("b", "model", "s", "dev", 0, None, False, z, z, strict_label=1, strict_anchor=2)]
    >>> [(e.id, e.label, e.anchor) for e in goes_along_examples(ex)[0]]
    [('b', 1, 2)]
    """
    idx = [k for k, e in enumerate(exs) if (e.strict_label is not None and not e.benign_prompt) or e.view == "forced"]
    return [replace(exs[k], label=exs[k].strict_label or 0, anchor=exs[k].strict_anchor if exs[k].strict_label else None)
            for k in idx], idx


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
def strict_at_least_loose(r: torch.Tensor, q: torch.Tensor, col: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Column ``col`` of gated (strict, loose) token and response risks ``(..., 2)``, with the strict
    column never below the loose one (:func:`engines.guardrail.risks.policy_risks`)."""
    if col == 0:
        return torch.maximum(r[..., 0], r[..., 1]), torch.maximum(q[..., 0], q[..., 1])
    return r[..., col], q[..., col]


@torch.no_grad()
def head_traces(head: SLDHead, exs: list[Example], cols, batch: int = 64,
                policy: str = "loose", gated: bool = True) -> tuple[list[list[float]], list[float]]:
    """Token risks per reply and the final response-level probability, in eval mode (the risk column
    ``policy`` reads on a two-output head, the strict one never below the loose one; zero for a
    reply whose request misses the policy's request gate. ``gated=False``: each column's own risk,
    neither gated nor composed)."""
    head.eval()
    col = head.cfg.column(policy) if head.cfg.outputs > 1 else None
    traces, resp = [], []
    for b in range(0, len(exs), batch):
        sub = exs[b: b + batch]
        x, p, _m, *_ = _batch(sub, cols)
        rl, ql = head(x, p)
        f = head.gate_factors(head.request_prob(judge_batch(head, sub, cols)))  # (B, outputs): 0 below a policy's gate
        if not gated:  # each column's own risk, ungated (dev_policies gates and composes them itself)
            f = torch.ones_like(f)
        if col is not None and gated:
            r, q = strict_at_least_loose(torch.sigmoid(rl) * f[:, None], torch.sigmoid(ql) * f[:, None], col)
        elif col is not None:
            r, q = torch.sigmoid(rl[..., col]), torch.sigmoid(ql[..., col])
        else:
            r, q = torch.sigmoid(rl) * f[:, :1], torch.sigmoid(ql) * f[:, :1]
        for k, e in enumerate(sub):
            n = e.feats.shape[0]
            traces.append(r[k, :n].tolist())
            resp.append(float(q[k, n - 1]))
    return traces, resp


THRESHOLDS = (0.005, 0.01, *np.round(np.arange(0.02, 0.96, 0.02), 2), 0.97, 0.98, 0.99, 0.995, 0.998, 0.999)
"""Stop thresholds tried on dev: a 0.02 grid, and finer towards both ends, where a folded ensemble's
or a gated head's risks crowd."""


def fit_request_gate(train: list[Example], cols, C: float = 0.1) -> tuple[torch.Tensor, float, int]:
    """The request gate's weights: logistic regression from the raw taps at the last prompt token
    (columns ``cols``) to "the request is harmful" (its source's benign flag), fitted once per distinct
    request of ``train`` (a request with several replies counts once), with the standardisation folded
    into the weights so the engine applies ``sigmoid(w . p + b)`` to raw taps. Returns (w, b, requests).

    >>> z = [Example(str(i), "model", "s", "train", 0, None, i % 2 == 0, torch.zeros(1, 2),
    ...              torch.tensor([float(i % 2), 1.0 - i % 2])) for i in range(6)]
    >>> w, b, n = fit_request_gate(z, torch.arange(2))
    >>> n, bool(torch.sigmoid(w @ torch.tensor([1.0, 0.0]) + b) > 0.5)
    (2, True)
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    seen: dict[bytes, Example] = {}
    for e in train:
        seen.setdefault(e.prompt[cols].float().numpy().tobytes(), e)
    reqs = list(seen.values())
    X = np.stack([e.prompt[cols].float().numpy() for e in reqs]).astype(np.float64)
    y = np.array([0 if e.benign_prompt else 1 for e in reqs])
    sc = StandardScaler().fit(X)
    clf = LogisticRegression(C=C, max_iter=5000, random_state=0).fit(sc.transform(X), y)
    w = clf.coef_[0] / sc.scale_
    b = float(clf.intercept_[0] - (w * sc.mean_).sum())
    return torch.tensor(w, dtype=torch.float32), b, len(reqs)
PATIENCES = (1, 2, 3, 4, 6)


def window_peak(trace: Sequence[float], patience: int) -> float:
    """The largest risk that ``patience`` consecutive tokens all reach: the policy with this
    patience stops the trace iff its threshold is at or below this value (-1 for a shorter trace).

    >>> window_peak([0.1, 0.7, 0.8, 0.2], 2)
    0.7
    """
    a = np.asarray(trace, float)
    if len(a) < patience:
        return -1.0
    return float(np.lib.stride_tricks.sliding_window_view(a, patience).min(axis=1).max())


def pick_policy(traces, exs, max_false_stop: float = 0.05, pooled: bool = False,
                thresholds: Sequence[float] = THRESHOLDS, cap_by: str = "view",
                score_views: Collection[str] | None = None,
                patiences: Sequence[int] = PATIENCES) -> tuple[float, int, dict]:
    """Threshold and patience maximising mean dev F1 over views, with benign false stops capped.

    ``pooled``: maximise the F1 of all dev replies together instead of the mean of the per-view
    F1s (every harmful dev reply counts once, whatever its view). ``cap_by="family"`` caps the share
    of stopped replies to benign requests in every benign family (view and source) instead of every
    view. ``score_views``: only these views' replies count towards the F1 maximised (the cap still
    covers every benign family given). The per-view reports of the chosen policy are returned either
    way (``"pooled"`` added when used, over the scored views). ``patiences``: the patiences tried.
    """
    views = sorted({e.view for e in exs if score_views is None or e.view in score_views})
    y = np.array([e.label for e in exs], bool)
    view_of = np.array([e.view for e in exs])
    scored = np.isin(view_of, views)
    families = _benign_families(exs, cap_by)
    best = None
    for pat in patiences:
        peak = np.array([window_peak(t, pat) for t in traces])
        for thr in thresholds:
            pred = peak >= thr
            ok = _cap_ok(pred, families, max_false_stop)
            f1s = [f1_scores(y[view_of == v], pred[view_of == v])["f1"] for v in views]
            score = (ok, f1_scores(y[scored], pred[scored])["f1"] if pooled else float(np.mean(f1s)))
            if best is None or score > best[0]:
                best = (score, float(thr), pat)
    thr, pat = best[1], best[2]
    reps = {}
    for v in views:
        idx = [k for k, e in enumerate(exs) if e.view == v]
        reps[v] = streaming_report([traces[k] for k in idx], [exs[k].label for k in idx],
                                   [exs[k].anchor for k in idx], [exs[k].benign_prompt for k in idx], thr, pat)
    if pooled:
        idx = np.flatnonzero(scored)
        reps["pooled"] = streaming_report([traces[k] for k in idx], [exs[k].label for k in idx],
                                          [exs[k].anchor for k in idx], [exs[k].benign_prompt for k in idx], thr, pat)
    return thr, pat, reps


def dev_policy(head: SLDHead, dev: list[Example], pooled: bool = False,
               max_false_stop: float = 0.05, cap_by: str = "view") -> tuple[float, int, dict]:
    """Threshold, patience and per-view dev reports of a trained head, by :func:`pick_policy`."""
    traces, _ = head_traces(head, dev, columns(head.cfg, head.cfg.hidden_size))
    return pick_policy(traces, dev, pooled=pooled, max_false_stop=max_false_stop, cap_by=cap_by)


def dev_score(reps: dict) -> float:
    """The figure :func:`pick_policy` maximised: pooled F1 when present, else the mean per-view F1."""
    return float(reps["pooled"]["f1"]) if "pooled" in reps else float(np.mean([r["f1"] for r in reps.values()]))


def train_head(cfg: GuardConfig, train: list[Example], dev: list[Example], *, epochs: int = 12, lr: float = 1e-3,
               batch: int = 32, seed: int = 0, lam_resp: float = 0.5, lam_atc: float = 1.0,
               weight_decay: float = 1e-4, atc_low: float = 0.1, atc_high: float = 0.9,
               lam_pol: float = 0.0, pol_patience: int = 3, view_weight: dict[str, float] | None = None,
               soft_labels: bool = False, teacher: SLDHead | None = None, lam_kd: float = 0.0,
               head_cls: type[SLDHead] = SLDHead, pooled_dev: bool = False, ordinal: bool = False,
               max_false_stop: float = 0.05, cap_by: str = "view", log=print) -> tuple[SLDHead, dict]:
    """Fit an SLD head with the ATC objective; keep the epoch with the best dev streaming F1.

    ``ordinal``: fit both policies on the one risk logit (:func:`~engines.guardrail.losses.ordinal_atc_loss`
    on the loose labels and the examples' strict targets); each policy's threshold and patience are
    picked on dev against its own labels (:func:`dev_policies`) and the epoch by their mean dev F1.
    ``max_false_stop`` caps each dev view's (``cap_by="family"``: each benign family's) share of
    stopped replies to benign requests.

    ``lam_pol`` / ``pol_patience`` switch on the stream-decision term of :func:`atc_loss`;
    ``view_weight`` (e.g. ``{"human": 2.0}``) weights every loss term of a reply by its view;
    ``soft_labels`` makes the response-level targets the mean human harm score where one exists;
    ``teacher`` with ``lam_kd > 0`` adds :func:`~engines.guardrail.losses.distill_loss` towards that
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
            kw = {"lam_resp": lam_resp, "lam_atc": lam_atc, "low": atc_low, "high": atc_high, "lam_pol": lam_pol,
                  "patience": pol_patience}
            if ordinal:
                sub = [train[k] for k in ch]
                T = x.shape[1]
                ys = torch.tensor([float(e.strict_label or 0) for e in sub])
                as_ = torch.tensor([e.strict_anchor if e.strict_label and e.strict_anchor is not None else T
                                    for e in sub], dtype=torch.long)
                known = torch.tensor([float(e.strict_label is not None) for e in sub])
                loss, _ = ordinal_atc_loss(rl, ql, (y, a), (ys, as_, known), m, weights=w, **kw)
            else:
                loss, _ = atc_loss(rl, ql, y, a, m, weights=w, **kw)
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
        if ordinal:
            pols = dev_policies(head, dev, pooled=pooled_dev, max_false_stop=max_false_stop, cap_by=cap_by)
            f1 = float(np.mean([p["dev_f1"] for p in pols.values()]))
            log(f"epoch {ep + 1}/{epochs} loss {tot / len(train):.4f} dev F1 strict {pols['strict']['dev_f1']:.3f} "
                f"(thr {pols['strict']['threshold']}, patience {pols['strict']['patience']}) loose "
                f"{pols['loose']['dev_f1']:.3f} (thr {pols['loose']['threshold']}, patience {pols['loose']['patience']})")
            pol = (pols["loose"]["threshold"], pols["loose"]["patience"], ep + 1, pols)
        else:
            traces, _ = head_traces(head, dev, cols)
            thr, pat, reps = pick_policy(traces, dev, pooled=pooled_dev, max_false_stop=max_false_stop, cap_by=cap_by)
            f1 = dev_score(reps)
            log(f"epoch {ep + 1}/{epochs} loss {tot / len(train):.4f} dev mean F1 {f1:.3f} (thr {thr}, patience {pat})")
            pol = (thr, pat, ep + 1, None)
        if f1 > best[0]:
            best = (f1, {k: v.detach().clone() for k, v in head.state_dict().items()}, pol)
    head.load_state_dict(best[1])
    head.eval()
    info = {"dev_f1": best[0], "threshold": best[2][0], "patience": best[2][1], "epoch": best[2][2]}
    if best[2][3] is not None:
        info["policies"] = best[2][3]
    return head, info


GATES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998)
"""Request-gate levels tried on dev for a head with a request gate (0 = the policy ignores it)."""


def judge_batch(head: SLDHead, exs: list[Example], cols) -> torch.Tensor:
    """The request judge's inputs of a batch of examples: the prompt taps for a last-token judge, else
    each example's loaded :attr:`Example.judge` row (a missing one is an error: rebuild the request features)."""
    if head.cfg.request_inputs == "last" or head.request is None:
        return torch.stack([e.prompt[cols].float() for e in exs])
    missing = [e.id for e in exs if e.judge is None]
    if missing:
        raise ValueError(f"{len(missing)} replies have no request-judge inputs (e.g. {missing[:3]}): "
                         "run `python -m evals.guardrail.requests` first")
    return torch.stack([e.judge.float() for e in exs])


@torch.no_grad()
def request_probs(head: SLDHead, exs: list[Example], cols) -> np.ndarray:
    """P(the request is harmful) of each example's request by the head's request judge (ones without one)."""
    if not exs:
        return np.zeros(0)
    return head.request_prob(judge_batch(head, exs, cols)).numpy()


def dev_policies(head: SLDHead, dev: list[Example], pooled: bool = False,
                 max_false_stop: float = 0.05, cap_by: str = "view",
                 score_views: dict[str, Collection[str]] | None = None,
                 gates: dict[str, float] | None = None,
                 patiences: dict[str, Sequence[int]] | None = None) -> dict[str, dict]:
    """Both stop policies of an ordinal or two-output head, each picked on dev against its own
    labels and from its own risk column: {"strict"|"loose": {"threshold", "patience", "dev_f1",
    "reps"}}. Strict is scored on the dev replies whose strict level is known (:func:`strict_examples`);
    ``score_views`` (policy -> views) limits a policy's F1 to those views' replies, its false-stop cap
    still covering every benign family of ``dev``. A head with a request gate also gets each policy's
    gate level picked from :data:`GATES` (the entry ``"gate"``), jointly with its threshold and patience,
    unless ``gates`` fixes a policy's level (the request judge's, picked on its own dev requests).
    ``patiences`` (policy -> patiences tried) narrows a policy's patience grid."""
    cols = columns(head.cfg, head.cfg.hidden_size)
    traces = {p: head_traces(head, dev, cols, policy=p, gated=False)[0] for p in ("strict", "loose")}
    req = request_probs(head, dev, cols)
    out = {}
    s_exs, s_idx = strict_examples(dev)
    loose_on = np.ones(len(dev), bool)
    for name, idx in (("loose", list(range(len(dev)))), ("strict", s_idx)):  # strict reads loose's risk too
        exs = [dev[k] for k in idx] if name == "loose" else s_exs
        best = None
        tried = (gates[name],) if gates and name in gates else GATES if head.request is not None else (0.0,)
        for gate in tried:
            tr = [_policy_trace(traces, name, k, req[k] >= gate, loose_on[k], head.cfg.outputs) for k in idx]
            thr, pat, reps = pick_policy(tr, exs, pooled=pooled, max_false_stop=max_false_stop, cap_by=cap_by,
                                         score_views=(score_views or {}).get(name),
                                         patiences=(patiences or {}).get(name, PATIENCES))
            stopped = np.array([window_peak(t, pat) >= thr for t in tr])
            key = (_cap_ok(stopped, _benign_families(exs, cap_by), max_false_stop), dev_score(reps))
            if best is None or key > best[0]:
                best = (key, {"threshold": thr, "patience": pat, "dev_f1": dev_score(reps), "reps": reps, "gate": gate})
        out[name] = best[1]
        if name == "loose":
            loose_on = req >= best[1]["gate"]
    return {k: out[k] for k in ("strict", "loose")}


def _policy_trace(traces: dict, name: str, k: int, on: bool, loose_on: bool, outputs: int) -> list[float]:
    """Reply ``k``'s token risks under policy ``name`` at a request gate that the request reaches
    (``on``) or not; on a two-output head the strict risk is never below the (gated) loose risk."""
    own = traces[name][k] if on else [0.0] * len(traces[name][k])
    if name != "strict" or outputs < 2:
        return own
    loose = traces["loose"][k] if loose_on else [0.0] * len(own)
    return [max(a, b) for a, b in zip(own, loose)]


def _benign_families(exs: list[Example], cap_by: str) -> list[np.ndarray]:
    """Masks of the replies to benign requests, one per view (``cap_by="view"``) or per family (view
    and source), that the dev false-stop cap covers."""
    if cap_by not in ("view", "family"):
        raise ValueError(f"cap_by={cap_by!r}: use 'view' or 'family'")
    key = np.array([e.view if cap_by == "view" else f"{e.view}/{e.source}" for e in exs])
    benign = np.array([e.benign_prompt and not e.label for e in exs], bool)
    return [m for m in (benign & (key == g) for g in sorted(set(key))) if m.any()]


def _cap_ok(stopped: np.ndarray, families: list[np.ndarray], max_false_stop: float) -> bool:
    """Whether every benign family's share of stopped replies is at or under the cap."""
    return all(stopped[m].mean() <= max_false_stop for m in families)


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
