# Writes into values computed earlier: through a view, in place, and with out=.
# On a GPU the capture copies values out in batches; this model proves that a
# value is still sent as the op produced it when a later op overwrites it.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 64)

    def forward(self, x):
        a = self.l1(x)
        b = a * 2.0
        a[:, :16].add_(1.0)          # into a's storage, through a view
        torch.relu_(b)
        torch.mul(a, 3.0, out=b)     # over b
        d = torch.cat([a, b], 1)
        d.mul_(0.5)
        return d.sum(1, keepdim=True) + b[:, :1]


def make():
    return Model(), torch.randn(32, 64)
