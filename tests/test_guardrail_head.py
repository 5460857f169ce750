"""SLD head, ATC loss, stop policy, anchors and ONNX export: fast tests, no backbone needed."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from engines.common.onnx_runtime import ort_session
from engines.guardrail.config import GuardConfig
from engines.guardrail.export import (
    BLOCK_ONNX,
    BlockStepModule,
    GroupedStepModule,
    export_block_onnx,
    export_onnx,
    init_input_name,
    load_head,
    save_head,
)
from engines.guardrail.guard import ASSET_DIR
from engines.guardrail.head import SLDHead, merge_heads
from engines.guardrail.labels import find_anchor_char, is_refusal, token_labels
from engines.guardrail.losses import atc_loss, distill_loss
from engines.guardrail.metrics import latency_bins, stop_index, streaming_report
from onnx_equivalence import assert_same_model

SMALL = {"hidden_size": 32, "proj_dim": 16, "state_dim": 12}


def _head(seed: int = 0, **kw) -> SLDHead:
    torch.manual_seed(seed)
    return SLDHead(GuardConfig(**{**SMALL, **kw})).eval()


@pytest.mark.parametrize("layers", [(3,), (9, 15, 21)])
@pytest.mark.parametrize("prompt_init", [True, False])
@pytest.mark.parametrize("batch", [1, 3])
def test_step_by_step_equals_whole_sequence(layers, prompt_init, batch):
    """Streaming (one step per token, O(1) each) gives the training-time forward exactly."""
    head = _head(layers=layers, prompt_init=prompt_init).double()
    T, D = 9, head.cfg.in_dim
    x, p = torch.randn(batch, T, D, dtype=torch.float64) * 4, torch.randn(batch, D, dtype=torch.float64)
    with torch.no_grad():
        risk_logits, resp_logits = head(x, p)
        s = head.init_state(p)
        steps, resp = [], []
        for t in range(T):
            r, q, s = head.step(x[:, t], s)
            steps.append(r)
            resp.append(q)
    torch.testing.assert_close(torch.stack(steps, 1), torch.sigmoid(risk_logits), rtol=0, atol=1e-12)
    torch.testing.assert_close(torch.stack(resp, 1), torch.sigmoid(resp_logits), rtol=0, atol=1e-12)


def test_gru_cell_matches_torch_gru_float64():
    head = _head().double()
    u = torch.randn(4, head.cfg.proj_dim, dtype=torch.float64)
    s = torch.randn(4, head.cfg.state_dim, dtype=torch.float64).tanh()
    ref = head.gru(u.unsqueeze(1), s.unsqueeze(0))[1][0]
    torch.testing.assert_close(head.gru_cell(u, s), ref, rtol=0, atol=1e-12)


def test_head_is_causal():
    """Changing token t never changes risks before t (no peeking at the future)."""
    head = _head().double()
    x, p = torch.randn(2, 8, head.cfg.in_dim, dtype=torch.float64), torch.randn(2, head.cfg.in_dim, dtype=torch.float64)
    y = x.clone()
    y[:, 5:] = torch.randn(2, 3, head.cfg.in_dim, dtype=torch.float64) * 4
    with torch.no_grad():
        a, _ = head(x, p)
        b, _ = head(y, p)
    torch.testing.assert_close(a[:, :5], b[:, :5], rtol=0, atol=0)
    assert (a[:, 5:] - b[:, 5:]).abs().max() > 1e-6


def test_param_budget_of_default_head():
    n = sum(p.numel() for p in SLDHead(GuardConfig()).parameters())
    assert n <= 5_000_000, n


def _logit(p):
    p = torch.as_tensor(p, dtype=torch.float64).clamp(1e-6, 1 - 1e-6)
    return torch.log(p / (1 - p))


def test_atc_penalises_a_dip_after_the_anchor():
    mask = torch.ones(1, 6, dtype=torch.float64)
    y, a = torch.tensor([1.0]), torch.tensor([2])
    mono = _logit([[0.05, 0.05, 0.95, 0.96, 0.97, 0.98]])
    dip = _logit([[0.05, 0.05, 0.95, 0.30, 0.97, 0.98]])
    _, good = atc_loss(mono, mono, y, a, mask)
    _, bad = atc_loss(dip, dip, y, a, mask)
    assert good["mono"] == 0.0 and bad["mono"] > 0.1
    assert bad["high"] > good["high"]


def test_atc_penalises_risk_on_a_benign_reply_and_before_the_anchor():
    mask = torch.ones(2, 4, dtype=torch.float64)
    y, a = torch.tensor([0.0, 1.0]), torch.tensor([4, 3])  # benign reply: anchor = T
    low = _logit([[0.02] * 4, [0.02, 0.02, 0.02, 0.99]])
    high = _logit([[0.8] * 4, [0.8, 0.8, 0.8, 0.99]])
    l_low, p_low = atc_loss(low, low, y, a, mask)
    l_high, p_high = atc_loss(high, high, y, a, mask)
    assert p_low["low"] == 0.0 and p_high["low"] > 0.5
    assert l_high > l_low


def test_atc_ignores_padding():
    y, a = torch.tensor([1.0]), torch.tensor([1])
    z = _logit([[0.1, 0.95, 0.97, 0.0]])
    m3 = torch.tensor([[1.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    l_pad, _ = atc_loss(z, z, y, a, m3)
    l_cut, _ = atc_loss(z[:, :3], z[:, :3], y, a, m3[:, :3])
    torch.testing.assert_close(l_pad, l_cut)


def test_unit_weights_change_nothing():
    z = torch.randn(3, 6, dtype=torch.float64)
    q = torch.randn(3, 6, dtype=torch.float64)
    y, a = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64), torch.tensor([2, 6, 0])
    m = torch.ones(3, 6, dtype=torch.float64)
    m[2, 4:] = 0
    l0, p0 = atc_loss(z, q, y, a, m)
    l1, p1 = atc_loss(z, q, y, a, m, weights=torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(l0, l1)
    assert p0 == pytest.approx(p1)


def test_weights_scale_replies():
    """A reply of weight 0 does not move the loss; doubling one reply's weight moves it towards that reply's loss."""
    y, a, m = torch.tensor([0.0, 0.0]), torch.tensor([4, 4]), torch.ones(2, 4)
    good, bad = _logit([[0.02] * 4]).float(), _logit([[0.9] * 4]).float()
    z = torch.cat([good, bad])
    l_only_good, _ = atc_loss(good, good, y[:1], a[:1], m[:1])
    l_w0, _ = atc_loss(z, z, y, a, m, weights=torch.tensor([1.0, 0.0]))
    torch.testing.assert_close(l_w0, l_only_good)
    l_even, _ = atc_loss(z, z, y, a, m)
    l_bad2, _ = atc_loss(z, z, y, a, m, weights=torch.tensor([1.0, 2.0]))
    assert l_bad2 > l_even > l_w0


@pytest.mark.parametrize("patience", [1, 2, 3])
def test_stream_term_is_the_bce_of_the_stop_statistic(patience):
    """s_hat = max_t min over a patience window: a run of `patience` high risks on a safe reply costs
    log(1 - its minimum); shorter runs (which the stop policy would not fire on) cost much less."""
    y, a, m = torch.tensor([0.0], dtype=torch.float64), torch.tensor([8]), torch.ones(1, 8, dtype=torch.float64)
    run = [0.05] * 8
    for k in range(2, 2 + patience):
        run[k] = 0.9
    short = [0.05] * 8
    for k in range(2, 2 + patience - 1):
        short[k] = 0.9
    _, p_run = atc_loss(_logit([run]), _logit([run]), y, a, m, lam_pol=1.0, patience=patience)
    _, p_short = atc_loss(_logit([short]), _logit([short]), y, a, m, lam_pol=1.0, patience=patience)
    assert p_run["pol"] == pytest.approx(-np.log(1 - 0.9), rel=1e-6)
    assert p_short["pol"] == pytest.approx(-np.log(1 - 0.05), rel=1e-6)
    # a harmful reply whose risk never holds for `patience` tokens is a missed stop and costs the same way
    _, p_miss = atc_loss(_logit([short]), _logit([short]), torch.tensor([1.0], dtype=torch.float64),
                         torch.tensor([2]), m, lam_pol=1.0, patience=patience)
    assert p_miss["pol"] == pytest.approx(-np.log(0.05), rel=1e-6)


def test_stream_term_ignores_padding_and_is_off_by_default():
    y, a = torch.tensor([0.0], dtype=torch.float64), torch.tensor([3])
    z = _logit([[0.1, 0.2, 0.1, 0.99, 0.99]])
    m = torch.tensor([[1.0, 1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    _, parts = atc_loss(z, z, y, a, m, lam_pol=1.0, patience=2)
    assert parts["pol"] == pytest.approx(-np.log(1 - 0.1), rel=1e-6)  # padded 0.99s never count
    assert "pol" not in atc_loss(z, z, y, a, m)[1]


def test_distill_loss_is_smallest_at_the_teacher_and_ignores_padding():
    """BCE towards the teacher's probabilities: its gradient vanishes exactly where the student's
    logits equal the teacher's, and padded tokens (mask 0) never count."""
    torch.manual_seed(0)
    tz, tq = torch.randn(2, 6, dtype=torch.float64), torch.randn(2, 6, dtype=torch.float64)
    m = torch.ones(2, 6, dtype=torch.float64)
    m[1, 4:] = 0
    z = tz.clone().requires_grad_(True)
    q = tq.clone().requires_grad_(True)
    at_teacher = distill_loss(z, q, tz, tq, m)
    at_teacher.backward()
    assert float(z.grad.abs().max()) < 1e-12 and float(q.grad.abs().max()) < 1e-12
    off = distill_loss(tz + 0.5 * torch.randn_like(tz), tq, tz, tq, m)
    assert off.item() > at_teacher.item()
    junk = tz.clone()
    junk[1, 4:] = 40.0  # padded positions: anything goes
    assert distill_loss(junk, tq, tz, tq, m).item() == pytest.approx(at_teacher.item(), rel=1e-12)


def test_distilled_student_moves_towards_its_teacher():
    """train_head(teacher=..., lam_kd=...) pulls a student's risks towards a (here random, frozen)
    teacher's: with a large weight it ends closer to the teacher than the same run without it."""
    import evals.guardrail.train as gt

    cfg = GuardConfig(layers=(9,), hidden_size=4, proj_dim=8, state_dim=8, dropout=0.0)
    g = torch.Generator().manual_seed(1)
    exs = [gt.Example(str(i), "v", "s", "train", i % 2, 0 if i % 2 else None, not i % 2,
                      torch.randn(5, 16, generator=g), torch.randn(16, generator=g)) for i in range(16)]
    torch.manual_seed(7)
    teacher = SLDHead(cfg).eval()
    cols = gt.columns(cfg, cfg.hidden_size)
    want = torch.tensor([r for t in gt.head_traces(teacher, exs, cols)[0] for r in t])

    def gap(**kw):
        h, _ = gt.train_head(cfg, exs, exs, epochs=30, lr=1e-2, log=lambda *a: None, **kw)
        return float((torch.tensor([r for t in gt.head_traces(h, exs, cols)[0] for r in t]) - want).abs().mean())

    assert gap(teacher=teacher, lam_kd=20.0) < 0.5 * gap()
    with pytest.raises(ValueError, match="layers"):
        gt.train_head(GuardConfig(layers=(15,), hidden_size=4, proj_dim=8, state_dim=8), exs, exs, epochs=1,
                      teacher=teacher, lam_kd=1.0, log=lambda *a: None)


def test_atc_gradcheck_float64():
    z = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
    q = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
    y, a, m = torch.tensor([1.0, 0.0], dtype=torch.float64), torch.tensor([2, 5]), torch.ones(2, 5, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda z, q: atc_loss(z, q, y, a, m)[0], (z, q))


@pytest.mark.parametrize("risks,thr,pat,want", [
    ([0.1, 0.6, 0.7, 0.8], 0.5, 1, 1),
    ([0.1, 0.6, 0.7, 0.8], 0.5, 3, 3),
    ([0.6, 0.1, 0.6, 0.1], 0.5, 2, None),
    ([0.5, 0.5], 0.5, 2, 1),  # ">=" threshold
    ([], 0.5, 1, None),
])
def test_stop_index(risks, thr, pat, want):
    assert stop_index(risks, thr, pat) == want


def test_streaming_report_counts_false_stops_and_latency():
    traces = [[0.9, 0.9, 0.9], [0.0, 0.0, 0.9], [0.9, 0.9, 0.0], [0.0, 0.0, 0.0]]
    rep = streaming_report(traces, [1, 1, 0, 0], [0, 0, None, None], [False, False, True, True], 0.5, 1)
    assert rep["precision"] == pytest.approx(2 / 3) and rep["recall"] == 1.0
    assert rep["false_stop_benign"] == 0.5
    assert rep["median_latency"] == 1.0  # stops at 0 and 2, anchors 0 and 0
    assert sum(latency_bins([0, 2, 40]).values()) == pytest.approx(1.0)


@pytest.mark.parametrize("text,anchor_text", [
    ("I'm sorry, but I can't help with that.", None),
    ("As an AI, I cannot provide that. However, here is how: mix A and B.", "However, here is how: mix A and B."),
    ("Sure, here is a tutorial. Step 1: get the parts.", "Sure, here is a tutorial."),
    ("It is important to note this is illegal and unethical. Step 1: buy a mask.", "Step 1: buy a mask."),
])
def test_anchor_is_first_non_refusal_sentence(text, anchor_text):
    c = find_anchor_char(text)
    if anchor_text is None:
        assert c is None and is_refusal(text)
    else:
        assert text[c:].startswith(anchor_text)
        assert c == 0 or is_refusal(text[:c])


def test_token_labels_step_at_anchor():
    assert token_labels(4, None) == [0, 0, 0, 0]
    assert token_labels(4, 0) == [1, 1, 1, 1]


@pytest.mark.parametrize("bad", [{"threshold": 0.0}, {"threshold": 1.0}, {"patience": 0}, {"layers": ()},
                                 {"layers": (0,)}, {"dropout": 1.0}, {"state_dim": 0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        GuardConfig(**bad)


def test_save_load_round_trip(tmp_path):
    head = _head(seed=3)
    save_head(head, tmp_path / "h.pt")
    back = load_head(tmp_path / "h.pt")
    for (k, v), (k2, v2) in zip(head.state_dict().items(), back.state_dict().items()):
        assert k == k2
        torch.testing.assert_close(v, v2, rtol=0, atol=0)


def test_compact_save_folds_the_members_and_the_gate_back(tmp_path):
    """save_head(members=...) stores the members, not the block-diagonal fold, and load_head gives the
    same head: same outputs, same gate levels and request probability."""
    members = [_head(seed=s) for s in range(4)]
    head = _gated()
    save_head(head, tmp_path / "h.pt", members=members, outputs=[2, 2])
    save_head(head, tmp_path / "full.pt")
    assert (tmp_path / "h.pt").stat().st_size < (tmp_path / "full.pt").stat().st_size
    back = load_head(tmp_path / "h.pt")
    assert (back.cfg.strict_gate, back.cfg.loose_gate) == (0.6, 0.0) and back.cfg.gated
    g = torch.Generator().manual_seed(0)
    x, p = torch.randn(3, head.cfg.in_dim, generator=g), torch.randn(3, head.cfg.in_dim, generator=g)
    with torch.no_grad():
        want, got = head.step(x, head.init_state(p)), back.step(x, back.init_state(p))
        torch.testing.assert_close(back.request_prob(p), head.request_prob(p))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)


def test_gate_factors_follow_each_policys_level():
    """Strict counts a reply only where P(harmful request) reaches its gate; loose (gate 0) always."""
    head = _gated()
    f = head.gate_factors(torch.tensor([[0.2], [0.6], [0.9]]))
    assert f.reshape(3, 2).tolist() == [[0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("prompt_init", [True, False])
def test_merged_heads_are_the_logit_mean_of_the_members(prompt_init):
    """merge_heads folds a seed ensemble into one head exactly (float64), step by step too."""
    members = [_head(seed=s, layers=(9, 15), prompt_init=prompt_init).double() for s in range(3)]
    with torch.no_grad():
        for h in members:  # non-trivial LayerNorm affines, which the merge folds into the projection
            for n in h.norms:
                n.weight.normal_(1.0, 0.3)
                n.bias.normal_(0.0, 0.3)
        merged = merge_heads(members).double()
        assert merged.cfg.proj_dim == 3 * SMALL["proj_dim"] and merged.cfg.state_dim == 3 * SMALL["state_dim"]
        x = torch.randn(2, 7, merged.cfg.in_dim, dtype=torch.float64) * 3
        p = torch.randn(2, merged.cfg.in_dim, dtype=torch.float64) * 3
        outs = [h(x, p) for h in members]
        rl, ql = merged(x, p)
        torch.testing.assert_close(rl, torch.stack([o[0] for o in outs]).mean(0), rtol=0, atol=1e-10)
        torch.testing.assert_close(ql, torch.stack([o[1] for o in outs]).mean(0), rtol=0, atol=1e-10)
        s = merged.init_state(p)
        for t in range(x.shape[1]):
            r, _, s = merged.step(x[:, t], s)
        torch.testing.assert_close(r, torch.sigmoid(rl[:, -1]), rtol=0, atol=1e-10)
    with pytest.raises(ValueError):
        merge_heads([members[0], _head(layers=(3,)).double()])


@pytest.mark.parametrize("nested", [False, True])
def test_grouped_step_equals_the_merged_step(nested):
    """The zero-free step of a merged head gives the merged head's step exactly (float64), also for a
    merge of merged heads (2 x 2 members), and records the member count it relies on."""
    torch.manual_seed(0)
    if nested:
        pairs = [[_head(seed=2 * i + j).double() for j in range(2)] for i in range(2)]
        merged = merge_heads([merge_heads(pr).double() for pr in pairs]).double()
        assert merged.cfg.members == 4
    else:
        members = [_head(seed=s).double() for s in range(3)]
        with torch.no_grad():
            for h in members:  # affine LayerNorms, which merge_heads folds away (plain norms remain)
                for n in h.norms:
                    n.weight.normal_(1.0, 0.3)
                    n.bias.normal_(0.0, 0.3)
        merged = merge_heads(members).double()
        assert merged.cfg.members == 3
    grouped = GroupedStepModule(merged).double()
    assert grouped.plain_norms
    x = torch.randn(4, merged.cfg.in_dim, dtype=torch.float64) * 3
    s = torch.randn(4, merged.cfg.state_dim, dtype=torch.float64).tanh()
    with torch.no_grad():
        for want, got in zip(merged.step(x, s), grouped(x, s)):
            torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
        merged.norms[0].weight.mul_(1.5)  # not plain any more: the grouped step falls back to head.embed
        grouped = GroupedStepModule(merged).double()
        assert not grouped.plain_norms
        for want, got in zip(merged.step(x, s), grouped(x, s)):
            torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    k = merged.cfg.members
    n_grouped = grouped.w_ih.numel() + grouped.w_hh.numel()
    assert n_grouped * k == merged.gru.weight_ih_l0.numel() + merged.gru.weight_hh_l0.numel()


def test_merged_export_drops_the_off_block_zeros(tmp_path):
    """A merged head exports the grouped step (smaller file, same outputs as the torch head)."""
    merged = merge_heads([_head(seed=s, hidden_size=32, proj_dim=64, state_dim=64) for s in range(3)])
    plain_dir, grouped_dir = tmp_path / "plain", tmp_path / "grouped"
    plain = SLDHead(GuardConfig(**{**merged.cfg.to_dict(), "members": 1, "proj_bits": None})).eval()
    plain.load_state_dict(merged.state_dict())
    export_onnx(plain, plain_dir)
    step_p, _ = export_onnx(merged, grouped_dir)
    assert step_p.stat().st_size < 0.75 * (plain_dir / step_p.name).stat().st_size
    x = torch.randn(3, merged.cfg.in_dim) * 3
    s = torch.randn(3, merged.cfg.state_dim).tanh()
    with torch.no_grad():
        r, q, s1 = merged.step(x, s)
    outs = ort_session(step_p).run(None, {"taps": x.numpy(), "state": s.numpy()})
    for got, want in zip(outs, (r, q, s1)):
        np.testing.assert_allclose(got, want.numpy(), atol=1e-5, rtol=0)


def _heads():
    yield "random-small", _head(seed=1)
    yield "random-small-4bit", _head(seed=1).quantize_projection(4)
    yield "merged-4bit", merge_heads([_head(seed=s) for s in range(3)]).quantize_projection(4)
    yield "two-output-4bit", merge_heads([_head(seed=s) for s in range(4)], outputs=(2, 2)).quantize_projection(4)
    yield "gated-two-output", _gated()
    yield "judged-two-output", _gated(judge=True)
    yield "trained", load_head(ASSET_DIR / "sld_head.pt")  # committed: missing is a failure


def _gated(judge: bool = False) -> SLDHead:
    """A two-output head with a request gate (strict needs P(harmful request) >= 0.6, loose none); with
    ``judge`` the gate reads the last-token taps, their user-token mean and a sentence embedding, and
    strict has an uncertain band from 0.3."""
    head = merge_heads([_head(seed=s) for s in range(4)], outputs=(2, 2)).quantize_projection(4)
    inputs = "last+mean+sentence" if judge else "last"
    width = replace(head.cfg, request_inputs=inputs).judge_dim
    w = torch.randn(width, generator=torch.Generator().manual_seed(5)) * 0.1
    return head.set_gate(w, 0.2, strict=0.6, loose=0.0, band=0.3 if judge else 0.0, request_inputs=inputs)


@pytest.mark.parametrize("which", ["random-small", "random-small-4bit", "merged-4bit", "two-output-4bit",
                                   "gated-two-output", "judged-two-output", "trained"])
@pytest.mark.parametrize("batch", [1, 4])
def test_onnx_matches_torch(which, batch, tmp_path):
    """ORT and torch agree to 1e-4 on the exported step and prompt initialiser (4-bit projection
    weights run as MatMulNBits codes in ORT and as grid weights in torch)."""
    head = dict(_heads())[which]
    step_p, init_p = export_onnx(head, tmp_path)
    assert not head.training
    g = torch.Generator().manual_seed(batch)
    D, _S = head.cfg.in_dim, head.cfg.state_dim
    x = torch.randn(batch, D, generator=g) * 3
    p = torch.randn(batch, head.cfg.judge_dim if head.cfg.gated else D, generator=g) * 3
    with torch.no_grad():
        s0 = head.init_state(p[:, :D])
        r, q, s1 = head.step(x, s0)
    init_out = ort_session(init_p).run(None, {init_input_name(head.cfg): p.numpy()})
    s0_ort = init_out[0]
    if head.cfg.gated:  # the initialiser also reads out P(the request is harmful) for the gate
        np.testing.assert_allclose(init_out[1].reshape(-1), head.request_prob(p).reshape(-1).detach().numpy(),
                                   atol=1e-4, rtol=0)
    r_ort, q_ort, s1_ort = ort_session(step_p).run(None, {"taps": x.numpy(), "state": s0.numpy()})
    np.testing.assert_allclose(s0_ort, s0.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(r_ort, r.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(q_ort, q.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(s1_ort, s1.numpy(), atol=1e-4, rtol=0)


def test_committed_onnx_matches_committed_torch_head():
    """The ONNX files shipped in assets/ are the export of the shipped torch head."""
    assert (ASSET_DIR / "sld_step.onnx").is_file(), "committed asset missing from assets/guardrail"
    head = load_head(ASSET_DIR / "sld_head.pt")
    g = torch.Generator().manual_seed(7)
    x = torch.randn(5, head.cfg.in_dim, generator=g) * 3
    s = torch.randn(5, head.cfg.state_dim, generator=g).tanh()
    with torch.no_grad():
        r, _, s1 = head.step(x, s)
    r_ort, _, s1_ort = ort_session(ASSET_DIR / "sld_step.onnx").run(None, {"taps": x.numpy(), "state": s.numpy()})
    np.testing.assert_allclose(r_ort, r.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(s1_ort, s1.numpy(), atol=1e-4, rtol=0)


def _token_by_token(head: SLDHead, x: torch.Tensor, s: torch.Tensor):
    """Risks, response probs and the last state from T calls of ``head.step`` (batch 1)."""
    risks, resps = [], []
    with torch.no_grad():
        for t in range(x.shape[0]):
            r, q, s = head.step(x[t: t + 1], s)
            risks.append(r)
            resps.append(q)
    return torch.cat(risks), torch.cat(resps), s


@pytest.mark.parametrize("which", ["random-small", "random-small-4bit", "merged-4bit", "two-output-4bit", "trained"])
@pytest.mark.parametrize("tokens", [1, 2, 7])
def test_block_step_is_the_token_by_token_step(which, tokens):
    """T tokens scored in one BlockStepModule call give the risks, response probs and final state of
    T calls of head.step, for a plain head and a merged (grouped) one."""
    head = dict(_heads())[which]
    g = torch.Generator().manual_seed(tokens)
    x = torch.randn(tokens, head.cfg.in_dim, generator=g) * 3
    with torch.no_grad():
        s0 = head.init_state(torch.randn(1, head.cfg.in_dim, generator=g) * 3)
        got = BlockStepModule(head)(x, s0)
    for a, b in zip(got, _token_by_token(head, x, s0)):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def test_blocks_chain_through_their_state():
    """Scoring a reply as blocks 3 + 1 + 5, each starting from the last one's state, equals one call of 9:
    the recurrence carries across calls, so a stream can score in blocks of any size."""
    head = merge_heads([_head(seed=s) for s in range(3)])
    blk = BlockStepModule(head)
    x = torch.randn(9, head.cfg.in_dim) * 3
    s = torch.zeros(1, head.cfg.state_dim)
    with torch.no_grad():
        whole = blk(x, s)
        parts, st = [], s
        for a, b in ((0, 3), (3, 4), (4, 9)):
            r, _, st = blk(x[a:b], st)
            parts.append(r)
    torch.testing.assert_close(torch.cat(parts), whole[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(st, whole[2], atol=1e-6, rtol=0)


@pytest.mark.parametrize("which", ["random-small", "merged-4bit", "two-output-4bit", "trained"])
def test_block_onnx_matches_torch_for_any_block_length(which, tmp_path):
    """The exported block graph has a dynamic token axis and agrees with torch to 1e-4 at every length,
    including one token; its 4-bit projection runs as MatMulNBits."""
    import onnx

    head = dict(_heads())[which]
    path = export_block_onnx(head, tmp_path)
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert ops.count("GRU") == int(head.cfg.members)
    assert ("MatMulNBits" in ops) == bool(head.projection_bits)
    sess = ort_session(path, intra_threads=1)
    g = torch.Generator().manual_seed(3)
    s0 = torch.randn(1, head.cfg.state_dim, generator=g).tanh()
    for tokens in (1, 4, 16):
        x = torch.randn(tokens, head.cfg.in_dim, generator=g) * 3
        want = _token_by_token(head, x, s0)
        for got, w in zip(sess.run(None, {"taps": x.numpy(), "state": s0.numpy()}), want):
            np.testing.assert_allclose(got, w.numpy(), atol=1e-4, rtol=0)


def _block_feeds(cfg: GuardConfig) -> dict[str, np.ndarray]:
    """Fixed inputs for the block graph: 7 tokens of taps at the scale of real ones, a tanh state."""
    g = np.random.default_rng(11)
    return {"taps": (g.standard_normal((7, cfg.in_dim)) * 3).astype(np.float32),
            "state": np.tanh(g.standard_normal((1, cfg.state_dim))).astype(np.float32)}


def test_committed_block_onnx_is_the_export_of_the_committed_head(tmp_path):
    """assets/guardrail/sld_block.onnx is what export_block_onnx writes for the shipped head: the same
    graph and weights (floats to 1e-5 relative, integer codes exactly) and the same outputs on fixed
    inputs to 1e-5, on any CPU (a re-export rounds some floats differently elsewhere; never bytes)."""
    assert (ASSET_DIR / BLOCK_ONNX).is_file(), "committed asset missing from assets/guardrail"
    head = load_head(ASSET_DIR / "sld_head.pt")
    path = export_block_onnx(head, tmp_path)
    assert_same_model(path, ASSET_DIR / BLOCK_ONNX, feeds=_block_feeds(head.cfg))


def _nudged(src, dst, name: str, how) -> None:
    """A copy of the ONNX file ``src`` at ``dst`` with the float initializer ``name`` changed by ``how``."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(src))
    for i, t in enumerate(m.graph.initializer):
        if t.name == name:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(how(numpy_helper.to_array(t).copy()), name))
    onnx.save(m, str(dst))


def test_the_onnx_comparison_takes_last_bit_rounding_and_catches_real_changes(tmp_path):
    """What the committed-asset check accepts and refuses: a float one unit in the last place off (what
    another CPU's re-export gives) passes, though the files' bytes differ; a weight moved by 1e-3, a
    changed graph input or a missing operator fails."""
    import onnx


    head = _head(seed=2)
    path = export_block_onnx(head, tmp_path / "a")
    feeds = _block_feeds(head.cfg)
    name = next(t.name for t in onnx.load(str(path)).graph.initializer if t.data_type == onnx.TensorProto.FLOAT
                and len(t.dims) > 1)

    def one_ulp(w):
        w.flat[7] = np.nextafter(w.flat[7], np.float32(np.inf))
        return w

    _nudged(path, tmp_path / "ulp.onnx", name, one_ulp)
    assert (tmp_path / "ulp.onnx").read_bytes() != path.read_bytes()  # a byte-for-byte check would fail here
    assert_same_model(tmp_path / "ulp.onnx", path, feeds=feeds)

    def moved(w):
        w.flat[7] += 1e-3
        return w

    _nudged(path, tmp_path / "moved.onnx", name, moved)
    with pytest.raises(AssertionError, match=f"weight {name}"):
        assert_same_model(tmp_path / "moved.onnx", path)
    other = export_block_onnx(_head(seed=2, state_dim=16), tmp_path / "b")  # another state width
    with pytest.raises(AssertionError, match="differ in their inputs"):
        assert_same_model(other, path)
    m = onnx.load(str(path))
    del m.graph.node[-1]
    onnx.save(m, str(tmp_path / "cut.onnx"))
    with pytest.raises(AssertionError, match="differ in their"):
        assert_same_model(tmp_path / "cut.onnx", path)


def test_shipped_policy_is_the_dev_picked_one():
    """The tab's default threshold/patience are those the training script picked on dev."""
    import json

    from engines.guardrail.guard import default_policy, head_info

    assert (ASSET_DIR / "metrics.json").is_file(), "committed asset missing from assets/guardrail"
    m = json.loads((ASSET_DIR / "metrics.json").read_text())
    assert default_policy() == (m["threshold"], m["patience"])
    assert m["params"] == sum(p.numel() for p in load_head(ASSET_DIR / "sld_head.pt").parameters())
    info = head_info()  # what the tab's text says about the head: its members' weights, without the fold's zeros
    assert info["params"] <= min(m["params"], 5_000_000)
    assert (info["layers"], info["members"]) == (m["config"]["layers"], m["config"]["members"])
    assert head_info(ASSET_DIR / "missing")["params"] == 0


def test_dev_policy_separates_a_learnable_split_and_doctests_run():
    """dev_policy (used by the train, sweep and evaluate scripts) is pick_policy over the head's
    own dev traces: on a linearly separable toy split it stops every harmful reply and no benign one."""
    import doctest

    import evals.guardrail.train as gt

    cfg = GuardConfig(layers=(9,), hidden_size=4, proj_dim=8, state_dim=8)
    exs = [gt.Example(str(i), "v", "s", "dev", i % 2, 0 if i % 2 else None, not i % 2,
                      torch.tensor([[1., -1., 1., -1.] * 4] * 3) * (1 - 2 * (i % 2)), torch.zeros(16))
           for i in range(8)]
    head, _ = gt.train_head(cfg, exs, exs, epochs=40, lr=1e-2, log=lambda *a: None)
    thr, pat, reps = gt.dev_policy(head, exs)
    traces, _ = gt.head_traces(head, exs, gt.columns(head.cfg, head.cfg.hidden_size))
    assert (thr, pat) == gt.pick_policy(traces, exs)[:2]
    assert reps["v"]["f1"] == 1.0 and reps["v"]["false_stop_benign"] == 0.0
    assert doctest.testmod(gt).failed == 0


def test_config_reads_a_saved_heads_extra_into_typed_fields():
    """Heads saved with the config's former ``extra`` dict load into ``members`` / ``proj_bits``;
    unknown keys and bad values are refused with the field's name."""
    c = GuardConfig.from_dict({**GuardConfig().to_dict(), "extra": {"members": 3, "proj_bits": 4}})
    assert (c.members, c.proj_bits) == (3, 4)
    assert GuardConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="bogus"):
        GuardConfig.from_dict({"bogus": 1})
    with pytest.raises(ValueError, match="members"):
        GuardConfig(members=0)
    with pytest.raises(ValueError, match="proj_bits"):
        GuardConfig(proj_bits=16)


def test_a_stream_event_serialises_itself():
    """Issue #47 item 22: ``StreamEvent.to_dict()`` is plain JSON with every field (risk and times rounded)."""
    import json

    from engines.guardrail.guard import StreamEvent

    ev = StreamEvent(index=3, token=" hi", token_id=42, risk=np.float32(0.123456789), stopped=False,
                     lm_ms=1.23456, head_ms=0.5, level="complies", request=0.9876543)
    d = json.loads(json.dumps(ev.to_dict()))
    assert d == {"index": 3, "token": " hi", "token_id": 42, "risk": 0.1235, "stopped": False, "lm_ms": 1.235,
                 "head_ms": 0.5, "shadow": False, "level": "complies", "request": 0.9877}
    assert StreamEvent(0, "", 1, 0.0, True, 0.0, 0.0).to_dict()["request"] is None
