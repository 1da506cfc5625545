# Three linear layers large enough for the CPU's oneDNN matmul (and for cuBLAS
# to choose tensor cores), with GELU between them.
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(512, 512)
        self.l2 = torch.nn.Linear(512, 512)
        self.l3 = torch.nn.Linear(512, 64)

    def forward(self, x):
        return self.l3(F.gelu(self.l2(F.gelu(self.l1(x)))))


def make():
    return Model(), torch.randn(128, 512)
