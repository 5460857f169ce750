"""The dev-only memory variants of ``evals/guardrail/sweep.py --memory`` (CfC, selective SSM)."""
from __future__ import annotations

import pytest
import torch

from engines.guardrail.config import GuardConfig
from evals.guardrail import sweep
from evals.guardrail.train import Example, train_head

SMALL = GuardConfig(layers=(9,), hidden_size=16, proj_dim=8, state_dim=6)


@pytest.mark.parametrize("kind", ["cfc", "ssm"])
def test_variant_is_causal_and_has_no_gru(kind):
    """Changing token t never changes risks before t, and does change them from t on."""
    torch.manual_seed(0)
    head = sweep.memory_head(kind)(SMALL).double().eval()
    assert not hasattr(head, "gru")
    x = torch.randn(2, 7, SMALL.in_dim, dtype=torch.float64)
    p = torch.randn(2, SMALL.in_dim, dtype=torch.float64)
    y = x.clone()
    y[:, 4:] = torch.randn(2, 3, SMALL.in_dim, dtype=torch.float64) * 4
    with torch.no_grad():
        a, qa = head(x, p)
        b, qb = head(y, p)
    assert a.shape == qa.shape == (2, 7)
    torch.testing.assert_close(a[:, :4], b[:, :4], rtol=0, atol=0)
    torch.testing.assert_close(qa[:, :4], qb[:, :4], rtol=0, atol=0)
    assert (a[:, 4:] - b[:, 4:]).abs().max() > 1e-6


@pytest.mark.parametrize("kind", ["cfc", "ssm"])
def test_variant_state_stays_bounded_on_large_inputs(kind):
    """Each update is a convex mix (CfC: of two tanh terms; SSM: of the old state and W_B u_t), so
    the carried state never leaves its bound over a long reply, however large the inputs."""
    torch.manual_seed(1)
    head = sweep.memory_head(kind)(SMALL).eval()
    with torch.no_grad():
        u = torch.randn(3, 200, SMALL.proj_dim) * 50
        s = head.init_state(torch.randn(3, SMALL.in_dim))
        bound = 1.0 if kind == "cfc" else float(s.abs().max())
        for t in range(u.shape[1]):
            if kind == "ssm":
                bound = max(bound, float(head.inp(u[:, t]).abs().max()))
            s, seen = head.cell(u[:, t], s)
            assert seen.abs().max() <= 1.0
            assert s.abs().max() <= bound * (1 + 1e-6)


@pytest.mark.parametrize("kind", ["cfc", "ssm"])
def test_variant_learns_a_separable_split_through_train_head(kind):
    """The sweep's way in: train_head builds and fits the variant it is given."""
    cfg = GuardConfig(layers=(9,), hidden_size=4, proj_dim=8, state_dim=8)
    ex = [Example(str(i), "v", "s", "train", i % 2, 0 if i % 2 else None, not i % 2,
                  torch.tensor([[1., -1., 1., -1.] * 4] * 3) * (1 - 2 * (i % 2)), torch.zeros(16))
          for i in range(8)]
    head, info = train_head(cfg, ex, ex, epochs=40, lr=1e-2, head_cls=sweep.memory_head(kind),
                            log=lambda *a: None)
    assert type(head).__name__ == f"SLDHead_{kind}"
    assert info["dev_f1"] > 0.9


def test_unknown_memory_is_refused():
    with pytest.raises(ValueError, match="choose 'cfc' or 'ssm'"):
        sweep.memory_head("lstm")
