# A model that draws random numbers in forward and uses an op that is not
# deterministic on CUDA (index_add_): the capture must list both. Every tensor
# it makes is made on its input's device, so it runs on the CPU, a GPU and the
# meta device alike.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(32, 32)

    def forward(self, x):
        y = self.fc(x) + 0.01 * torch.rand_like(x)
        acc = x.new_zeros(4, 32)
        acc.index_add_(0, torch.arange(8, device=x.device) % 4, y)
        return acc


def make():
    return Model(), torch.randn(8, 32)
