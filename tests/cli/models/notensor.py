# A model whose output is not a tensor.
import torch


class Talker(torch.nn.Module):
    def forward(self, x):
        return "a string, not a tensor"


def make():
    return Talker(), torch.randn(1, 4)
