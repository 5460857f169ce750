"""The post-serving predictor phi_hat: x -> y, one small MLP per (learner, seed), trained together.

Architecture and optimiser are the reference's ``NeuralApproximator`` (d -> 64 -> 64 -> e, ReLU,
Adam lr 1e-3, MSE, 2 steps per round on the data buffer of served pairs). All B = learners x seeds
networks are stacked into batched weight tensors and trained by one ``torch.bmm`` pass; the loss
is the sum of the per-network mean squared errors, so each network gets exactly its own gradient
and (Adam being element-wise) its own optimiser trajectory.

* ``faithful``: every step uses the network's whole buffer (the reference; cost grows with t^2
  over a run).
* ``fast``: every step uses a minibatch of ``batch`` rows drawn with replacement from the buffer
  (identical to faithful while the buffer is smaller than the batch); constant cost per round.
  Not from the reference.
"""
from __future__ import annotations

import math

import numpy as np
import torch


class BatchedMLP:
    """B independent MLPs R^d -> R^e trained on their own growing buffers.

    Forward and backward passes are written out with ``torch.baddbmm`` (no autograd graph), and
    Adam is torch's update rule (betas 0.9/0.999, eps 1e-8, bias-corrected) applied to the stacked
    tensors; ``tests/test_dueling_engine.py`` checks both against separate ``nn.Sequential``
    networks trained with ``torch.optim.Adam``.

    >>> m = BatchedMLP(seeds=[1, 2], d=3, e=2, capacity=8)
    >>> m.add(np.ones((2, 3)), np.zeros((2, 2)), np.ones((2, 3)), np.zeros((2, 2)))
    >>> loss = m.train_steps(2)
    >>> m.predict(np.zeros((2, 5, 3))).shape
    (2, 5, 2)
    """

    def __init__(self, seeds: list[int], d: int, e: int, capacity: int, hidden: int = 64,
                 lr: float = 1e-3, batch: int | None = None):
        self.B, self.d, self.e, self.H = len(seeds), d, e, hidden
        self.batch = batch
        self.lr = lr
        shapes = [(d, hidden), (hidden, hidden), (hidden, e)]
        ws, bs = [[] for _ in shapes], [[] for _ in shapes]
        for sd in seeds:
            g = torch.Generator().manual_seed(int(sd))
            for i, (fi, fo) in enumerate(shapes):
                bound = 1.0 / math.sqrt(fi)  # torch's default nn.Linear initialisation
                ws[i].append((torch.rand(fi, fo, generator=g) * 2 - 1) * bound)
                bs[i].append((torch.rand(1, fo, generator=g) * 2 - 1) * bound)
        # order: W1, W2, W3, b1, b2, b3
        self.params = [torch.stack(w) for w in ws] + [torch.stack(b) for b in bs]
        self._m = [torch.zeros_like(p) for p in self.params]
        self._v = [torch.zeros_like(p) for p in self.params]
        self._step = 0
        self.bx = torch.zeros(self.B * capacity, d)
        self.by = torch.zeros(self.B * capacity, e)
        self.cap = capacity
        self.n = 0
        self._g = torch.Generator().manual_seed(int(seeds[0]) + 7919 if seeds else 0)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        W1, W2, W3, b1, b2, b3 = self.params
        h = torch.relu(torch.baddbmm(b1, x, W1))
        h = torch.relu(torch.baddbmm(b2, h, W2))
        return torch.baddbmm(b3, h, W3)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted post-serving contexts for X (B, K, d) -> (B, K, e), float64."""
        return self._forward(torch.as_tensor(X, dtype=torch.float32)).double().numpy()

    def add(self, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> None:
        """Append the served pair (x_a, y_a), (x_b, y_b) of every network (each (B, d)/(B, e))."""
        i = self.n
        rows = torch.arange(self.B) * self.cap + i
        self.bx[rows] = torch.as_tensor(xa, dtype=torch.float32)
        self.by[rows] = torch.as_tensor(ya, dtype=torch.float32)
        self.bx[rows + 1] = torch.as_tensor(xb, dtype=torch.float32)
        self.by[rows + 1] = torch.as_tensor(yb, dtype=torch.float32)
        self.n += 2

    def _grads(self, x: torch.Tensor, y: torch.Tensor) -> tuple[list[torch.Tensor], float]:
        """Gradients of sum_b mean_{n,e} (f_b(x) - y)^2 with respect to every stacked parameter."""
        W1, W2, W3, b1, b2, b3 = self.params
        h1 = torch.relu(torch.baddbmm(b1, x, W1))
        h2 = torch.relu(torch.baddbmm(b2, h1, W2))
        r = torch.baddbmm(b3, h2, W3) - y
        n = x.shape[1]
        dout = r * (2.0 / (n * self.e))
        gW3 = torch.bmm(h2.transpose(1, 2), dout)
        gb3 = dout.sum(1, keepdim=True)
        dh2 = torch.bmm(dout, W3.transpose(1, 2)).mul_(h2 > 0)
        gW2 = torch.bmm(h1.transpose(1, 2), dh2)
        gb2 = dh2.sum(1, keepdim=True)
        dh1 = torch.bmm(dh2, W2.transpose(1, 2)).mul_(h1 > 0)
        gW1 = torch.bmm(x.transpose(1, 2), dh1)
        gb1 = dh1.sum(1, keepdim=True)
        return [gW1, gW2, gW3, gb1, gb2, gb3], float((r * r).mean())

    def _adam(self, grads: list[torch.Tensor], b1: float = 0.9, b2: float = 0.999,
              eps: float = 1e-8) -> None:
        """torch.optim.Adam's update (no weight decay, no amsgrad)."""
        self._step += 1
        torch._foreach_lerp_(self._m, grads, 1 - b1)
        torch._foreach_mul_(self._v, b2)
        torch._foreach_addcmul_(self._v, grads, grads, 1 - b2)
        bc1 = 1 - b1 ** self._step
        bc2 = 1 - b2 ** self._step
        denom = torch._foreach_sqrt(self._v)
        torch._foreach_div_(denom, math.sqrt(bc2))
        torch._foreach_add_(denom, eps)
        torch._foreach_addcdiv_(self.params, self._m, denom, -self.lr / bc1)

    def train_steps(self, steps: int) -> float:
        """``steps`` Adam steps on each network's buffer (or a minibatch of it); mean MSE."""
        n = self.n
        if n == 0:
            return float("nan")
        loss_v = float("nan")
        full = self.batch is None or n <= self.batch
        if full:
            x = self.bx.view(self.B, self.cap, self.d)[:, :n]
            y = self.by.view(self.B, self.cap, self.e)[:, :n]
        for _ in range(steps):
            if not full:
                idx = torch.randint(0, n, (self.B, self.batch), generator=self._g)
                idx += (torch.arange(self.B) * self.cap)[:, None]
                flat = idx.view(-1)
                x = self.bx.index_select(0, flat).view(self.B, self.batch, self.d)
                y = self.by.index_select(0, flat).view(self.B, self.batch, self.e)
            grads, loss_v = self._grads(x, y)
            self._adam(grads)
        return loss_v
