"""The toy problem the reference trainers learn. Replace this file with your model and data.

A fixed random "teacher" network labels ``samples`` points drawn from N(0, I); a fraction
(``label_noise``) of the labels is replaced by random classes, so the best reachable loss is above
zero and training visibly plateaus. The student is an MLP with two hidden layers of ``hidden``
units. Everything is a function of the seed: every rank builds the same data set and the same
initial weights without communicating.

Where the data comes from is the part a resize must get right: ``batch(epoch, offset, count)``
returns samples ``offset .. offset + count - 1`` of the epoch's shuffled order, so a step is
defined by its position in the epoch, not by which worker or how many workers read it.
"""
import torch
import torch.nn as nn


class Task:
    """The data set and its per-epoch order."""

    def __init__(self, cfg):
        g = torch.Generator().manual_seed(cfg.seed)
        self.seed = cfg.seed
        self.x = torch.randn(cfg.samples, cfg.features, generator=g)
        w1 = torch.randn(cfg.features, 64, generator=g) / cfg.features**0.5
        w2 = torch.randn(64, cfg.classes, generator=g) / 8.0
        y = (torch.tanh(self.x @ w1) @ w2).argmax(dim=1)
        noisy = torch.rand(cfg.samples, generator=g) < cfg.label_noise
        y[noisy] = torch.randint(cfg.classes, (int(noisy.sum()),), generator=g)
        self.y = y
        self._order = (None, None)

    def order(self, epoch):
        """The shuffled order of ``epoch`` (the same on every rank)."""
        if self._order[0] != epoch:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch + 1)
            self._order = (epoch, torch.randperm(len(self.y), generator=g))
        return self._order[1]

    def batch(self, epoch, offset, count):
        """Samples ``offset .. offset + count - 1`` of the epoch's order (wrapping around the set)."""
        idx = self.order(epoch)[torch.arange(offset, offset + count) % len(self.y)]
        return self.x[idx], self.y[idx]


def make_model(cfg):
    """The student MLP, initialised from the seed (identical on every rank)."""
    torch.manual_seed(cfg.seed + 1)
    return nn.Sequential(
        nn.Linear(cfg.features, cfg.hidden),
        nn.ReLU(),
        nn.Linear(cfg.hidden, cfg.hidden),
        nn.ReLU(),
        nn.Linear(cfg.hidden, cfg.classes),
    )


def loss_fn(logits, labels):
    """Mean cross-entropy over the batch (a mean, so averaging over workers gives the step's mean)."""
    return nn.functional.cross_entropy(logits, labels)
