# A small transformer encoder with a GELU head, random weights from gpuvet's seed.
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2)
        self.head = Head()

    def forward(self, x):
        return self.head(self.encoder(x))


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 96)
        self.fc2 = torch.nn.Linear(96, 10)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def make():
    return Model(), torch.randn(2, 16, 64)
