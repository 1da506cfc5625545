# A model file whose function fails (gpuvet must name this file and line).
import torch


def make():
    model = torch.nn.Linear(4, 4)
    raise ValueError("the weights file is missing")
    return model, torch.randn(1, 4)
