"""Training objectives of the SLD head: token and response BCE plus Anchored Temporal Consistency.

PlugGuard / Kelp (arXiv 2510.09694), Sec. 3.3 (Eq. 6-8): :func:`atc_loss` on one level of the
risk; :func:`ordinal_atc_loss` on both levels of one ordinal risk logit (strict and loose
policies); :func:`distill_loss` towards a teacher head's outputs.
"""
from __future__ import annotations

import torch
from torch.nn import functional as F

from engines.guardrail.head import ORDINAL_CUT


def atc_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, labels: torch.Tensor, anchors: torch.Tensor,
             mask: torch.Tensor, *, lam_resp: float = 0.5, lam_atc: float = 1.0, low: float = 0.1,
             high: float = 0.9, weights: torch.Tensor | None = None, lam_pol: float = 0.0,
             patience: int = 3) -> tuple[torch.Tensor, dict]:
    r"""Token BCE + response BCE + Anchored Temporal Consistency (after Kelp, Eq. 6-8).

    For reply ``i`` with T_i tokens, response label ``y_i`` and anchor ``a_i`` (first non-refusal
    sentence of a harmful reply; ``a_i = T_i`` for a benign one), token risk ``r_t = sigmoid(z_t)``:

    .. math::

        L_{tok} &= \tfrac{1}{N}\sum_{i,t} \mathrm{BCE}(r_{it}, \mathbb 1[t \ge a_i]) \\
        L_{resp} &= \tfrac{1}{B}\sum_i \mathrm{BCE}(\sigma(q_{i,T_i}), y_i) \\
        L_{low} &= \tfrac{1}{|\mathcal B|}\sum_{(i,t)\in\mathcal B} \max(0, r_{it} - \epsilon_{lo}),
                  \quad \mathcal B = \{t < a_i\} \ \text{(benign prefix)} \\
        L_{high} &= \tfrac{1}{|\mathcal H|}\sum_{(i,t)\in\mathcal H} \max(0, \tau_{hi} - r_{it}),
                  \quad \mathcal H = \{t \ge a_i\} \\
        L_{mono} &= \tfrac{1}{|\mathcal H'|}\sum_{(i,t)\in\mathcal H'} \max(0, r_{i,t-1} - r_{it}),
                  \quad \mathcal H' = \{t > a_i\} \\
        L &= L_{tok} + \lambda_{resp} L_{resp} + \lambda_{atc}(L_{low} + L_{high} + L_{mono})

    ``L_low`` anchors risk low before the turn, ``L_high`` + ``L_mono`` make it high and
    non-decreasing from the anchor on: the strict stop-if-harmful policy.

    Optional stream-decision term (``lam_pol > 0``; off by default): the stop policy fires iff
    some window of ``p`` (= ``patience``) consecutive risks is all above the threshold, i.e. iff
    :math:`\hat s_i = \max_t \min_{0 \le k < p} r_{i,t-k}` reaches it; so
    :math:`L_{pol} = \tfrac{1}{B}\sum_i \mathrm{BCE}(\hat s_i, y_i)` and
    :math:`L \mathrel{+}= \lambda_{pol} L_{pol}`. Unlike the mean hinge ``L_low`` it punishes one
    isolated run of high risk on a safe reply, which is exactly a false stop. Optional per-reply
    ``weights`` (B,) scale every term of reply ``i`` (e.g. to weight the two views).

    Args (shapes): risk_logits, resp_logits, mask: (B, T); labels: (B,) in [0, 1] (hard labels, or
    soft targets such as a mean human score);
    anchors: (B,) long (T for benign replies). Returns (loss, parts as floats).

    >>> z = torch.zeros(1, 3); m = torch.ones(1, 3)
    >>> loss, parts = atc_loss(z, z, torch.tensor([1.]), torch.tensor([1]), m)
    >>> round(parts["mono"], 3)
    0.0
    """
    _B, T = risk_logits.shape
    t = torch.arange(T, device=risk_logits.device).unsqueeze(0)
    harm = (t >= anchors.unsqueeze(1)).to(mask.dtype) * mask
    benign = (t < anchors.unsqueeze(1)).to(mask.dtype) * mask
    w = torch.ones_like(labels, dtype=mask.dtype) if weights is None else weights.to(mask.dtype)
    wm, wh, wb = mask * w[:, None], harm * w[:, None], benign * w[:, None]
    tok = F.binary_cross_entropy_with_logits(risk_logits, harm, reduction="none")
    l_tok = (tok * wm).sum() / wm.sum().clamp(min=1e-8)
    last = (mask.sum(1).long() - 1).clamp(min=0)
    q_last = resp_logits.gather(1, last.unsqueeze(1)).squeeze(1)
    if weights is None:
        l_resp = F.binary_cross_entropy_with_logits(q_last, labels.to(q_last.dtype))
    else:
        l_resp = (F.binary_cross_entropy_with_logits(q_last, labels.to(q_last.dtype), reduction="none") * w).sum() \
            / w.sum().clamp(min=1e-8)
    r = torch.sigmoid(risk_logits)
    l_low = (F.relu(r - low) * wb).sum() / wb.sum().clamp(min=1e-8)
    l_high = (F.relu(high - r) * wh).sum() / wh.sum().clamp(min=1e-8)
    after = wh[:, 1:] * (t[:, 1:] > anchors.unsqueeze(1)).to(mask.dtype)
    l_mono = (F.relu(r[:, :-1] - r[:, 1:]) * after).sum() / after.sum().clamp(min=1e-8)
    loss = l_tok + lam_resp * l_resp + lam_atc * (l_low + l_high + l_mono)
    parts = {"tok": l_tok, "resp": l_resp, "low": l_low, "high": l_high, "mono": l_mono}
    if lam_pol > 0 and T >= patience:
        s_hat = (r * mask).unfold(1, patience, 1).amin(-1).amax(-1).clamp(1e-6, 1 - 1e-6)
        ok = (mask.sum(1) >= patience).to(mask.dtype) * w
        bce = F.binary_cross_entropy(s_hat, labels.to(s_hat.dtype), reduction="none")
        l_pol = (bce * ok).sum() / ok.sum().clamp(min=1e-8)
        loss = loss + lam_pol * l_pol
        parts["pol"] = l_pol
    return loss, {k: float(v.detach()) for k, v in parts.items()}


def ordinal_atc_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, loose: tuple[torch.Tensor, torch.Tensor],
                     strict: tuple[torch.Tensor, torch.Tensor, torch.Tensor], mask: torch.Tensor,
                     weights: torch.Tensor | None = None, **kw) -> tuple[torch.Tensor, dict]:
    r"""The ATC objective on both levels of one ordinal risk logit (strict and loose policies).

    .. math::

        L = L_{ATC}(z + c, q + c;\ y^{strict}, a^{comply}) + L_{ATC}(z - c, q - c;\ y^{unsafe}, a^{unsafe})

    with :func:`atc_loss` as ``L_ATC`` and ``c`` = :data:`ORDINAL_CUT`: the strict term asks the risk
    to rise past the lower cut where the reply starts going along with a harmful request, the loose
    term past the upper cut where material help starts. ``loose`` = (labels, anchors); ``strict`` =
    (labels, anchors, known), where ``known`` (B,) is 0 for replies whose strict level is not known
    (they add only the loose term). Keyword arguments go to both :func:`atc_loss` calls.

    >>> z = torch.zeros(2, 3); m = torch.ones(2, 3)
    >>> y = torch.tensor([1., 0.]); a = torch.tensor([1, 3])
    >>> loss, parts = ordinal_atc_loss(z, z, (y, a), (y, a, torch.ones(2)), m)
    >>> sorted(parts)[:2], loss.item() > 0
    (['loose_high', 'loose_low'], True)
    """
    w = torch.ones_like(loose[0]) if weights is None else weights
    ls, lp = atc_loss(risk_logits - ORDINAL_CUT, resp_logits - ORDINAL_CUT, loose[0], loose[1], mask, weights=w, **kw)
    ss, sp = atc_loss(risk_logits + ORDINAL_CUT, resp_logits + ORDINAL_CUT, strict[0], strict[1], mask,
                      weights=w * strict[2], **kw)
    parts = {f"loose_{k}": v for k, v in lp.items()} | {f"strict_{k}": v for k, v in sp.items()}
    return ls + ss, parts


def distill_loss(risk_logits: torch.Tensor, resp_logits: torch.Tensor, teacher_risk: torch.Tensor,
                 teacher_resp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    r"""Knowledge-distillation term: match a teacher head's per-token risk and response outputs.

    .. math::

        L_{kd} = \tfrac{1}{N}\sum_{i,t} m_{it}\,\big[\mathrm{BCE}(\sigma(z_{it}), \sigma(z^T_{it}))
                 + \mathrm{BCE}(\sigma(q_{it}), \sigma(q^T_{it}))\big]

    with the student's risk / response logits ``z``, ``q`` and the teacher's ``z^T``, ``q^T``
    (e.g. the shipped seed ensemble), so one small head can learn the ensemble's smoother risk
    curves and be stepped at a third of its cost. Used with :func:`atc_loss`, never alone.

    >>> z = torch.zeros(1, 2); m = torch.ones(1, 2)
    >>> round(float(distill_loss(z, z, z, z, m)), 4)  # 2 * ln 2
    1.3863
    """
    tr, tq = torch.sigmoid(teacher_risk), torch.sigmoid(teacher_resp)
    per = F.binary_cross_entropy_with_logits(risk_logits, tr, reduction="none") \
        + F.binary_cross_entropy_with_logits(resp_logits, tq, reduction="none")
    return (per * mask).sum() / mask.sum().clamp(min=1e-8)
