# A model that draws random numbers in forward and uses an op that is not
# deterministic on CUDA (index_add_): the capture must list both.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(32, 32)

    def forward(self, x):
        y = self.fc(x) + 0.01 * torch.rand_like(x)
        acc = torch.zeros(4, 32)
        acc.index_add_(0, torch.tensor([0, 1, 2, 3, 0, 1, 2, 3]), y)
        return acc


def make():
    return Model(), torch.randn(8, 32)
