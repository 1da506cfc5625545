# Ten TorchScript submodules: the capture's text names the first eight and counts the rest.
import torch


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(10):
            setattr(self, "s%d" % i, torch.jit.script(Scale()))

    def forward(self, x):
        for i in range(10):
            x = getattr(self, "s%d" % i)(x)
        return x


def make():
    return Model(), torch.randn(2, 3)
