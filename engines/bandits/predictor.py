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

    >>> m = BatchedMLP(seeds=[1, 2], d=3, e=2, capacity=8)
    >>> m.add(np.ones((2, 3)), np.zeros((2, 2)), np.ones((2, 3)), np.zeros((2, 2)))
    >>> m.train_steps(2); m.predict(np.zeros((2, 5, 3))).shape
    (2, 5, 2)
    """

    def __init__(self, seeds: list[int], d: int, e: int, capacity: int, hidden: int = 64,
                 lr: float = 1e-3, batch: int | None = None):
        self.B, self.d, self.e, self.H = len(seeds), d, e, hidden
        self.batch = batch
        shapes = [(d, hidden), (hidden, hidden), (hidden, e)]
        ws, bs = [[] for _ in shapes], [[] for _ in shapes]
        for sd in seeds:
            g = torch.Generator().manual_seed(int(sd))
            for i, (fi, fo) in enumerate(shapes):
                bound = 1.0 / math.sqrt(fi)  # torch's default nn.Linear initialisation
                ws[i].append((torch.rand(fi, fo, generator=g) * 2 - 1) * bound)
                bs[i].append((torch.rand(1, fo, generator=g) * 2 - 1) * bound)
        self.params = [torch.stack(w).requires_grad_() for w in ws] + \
                      [torch.stack(b).requires_grad_() for b in bs]
        self.opt = torch.optim.Adam(self.params, lr=lr, foreach=True)
        self.bx = torch.zeros(self.B, capacity, d)
        self.by = torch.zeros(self.B, capacity, e)
        self.n = 0
        self._g = torch.Generator().manual_seed(int(seeds[0]) + 7919 if seeds else 0)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        W1, W2, W3, b1, b2, b3 = self.params
        h = torch.relu(torch.baddbmm(b1, x, W1))
        h = torch.relu(torch.baddbmm(b2, h, W2))
        return torch.baddbmm(b3, h, W3)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted post-serving contexts for X (B, K, d) -> (B, K, e), float64."""
        with torch.no_grad():
            return self._forward(torch.as_tensor(X, dtype=torch.float32)).double().numpy()

    def add(self, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray) -> None:
        """Append the served pair (x_a, y_a), (x_b, y_b) of every network (each (B, d)/(B, e))."""
        i = self.n
        self.bx[:, i] = torch.as_tensor(xa, dtype=torch.float32)
        self.by[:, i] = torch.as_tensor(ya, dtype=torch.float32)
        self.bx[:, i + 1] = torch.as_tensor(xb, dtype=torch.float32)
        self.by[:, i + 1] = torch.as_tensor(yb, dtype=torch.float32)
        self.n += 2

    def train_steps(self, steps: int) -> float:
        """``steps`` Adam steps on each network's buffer (or a minibatch of it); mean MSE."""
        n = self.n
        if n == 0:
            return float("nan")
        loss_v = float("nan")
        for _ in range(steps):
            if self.batch is None or n <= self.batch:
                x, y = self.bx[:, :n], self.by[:, :n]
            else:
                idx = torch.randint(0, n, (self.B, self.batch), generator=self._g)
                x = torch.gather(self.bx, 1, idx[..., None].expand(-1, -1, self.d))
                y = torch.gather(self.by, 1, idx[..., None].expand(-1, -1, self.e))
            self.opt.zero_grad(set_to_none=True)
            loss = ((self._forward(x) - y) ** 2).mean(dim=(1, 2)).sum()
            loss.backward()
            self.opt.step()
            loss_v = float(loss.detach()) / self.B
        return loss_v
