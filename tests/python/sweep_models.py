"""A user's model and data for tests/python/test_sweep.py: fp8lab.sweep imports these by name in
each run's process, so they live at the top level of a module on sys.path."""

import torch


class TinyMLP(torch.nn.Module):
    """A user's MLP: forward(x, y) returns the mean squared error."""

    def __init__(self, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 16)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)

    def forward(self, x, y):
        return torch.nn.functional.mse_loss(self.down(torch.relu(self.up(x))), y)


def model(seed: int) -> torch.nn.Module:
    return TinyMLP(seed)


def _batches(seed: int, count: int):
    g = torch.Generator().manual_seed(1000 + seed)
    teacher = torch.randn(32, 16, generator=torch.Generator().manual_seed(7))
    for _ in range(count):
        x = torch.randn(16, 32, generator=g)
        yield x, torch.tanh(x @ teacher)


def data(seed: int):
    return list(_batches(seed, 6))


def eval_batches():
    return list(_batches(99, 3))
