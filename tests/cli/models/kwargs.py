# A model called as real ones are: a positional tensor, keyword arguments (a tensor mask,
# a float, a string) and an output dict with a nested tuple, a None and a number, as
# a HuggingFace model's output has. GV_TEST_KW_SCALE changes the float argument (another
# call); GV_TEST_KW_GAIN scales only the logits (another value of one output).
import os

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x, mask=None, scale=1.0, mode="sum", cache=None):
        h1 = torch.tanh(self.proj(x)) * scale
        h2 = h1.masked_fill(~mask, 0.0)
        pooled = h2.sum(dim=1) if mode == "sum" else h2.mean(dim=1)
        logits = self.out(pooled) * float(os.environ.get("GV_TEST_KW_GAIN", "1"))
        return {"logits": logits, "hidden": (h1, h2), "cache": cache, "n": 3}


def make():
    x = torch.randn(2, 5, 16)
    mask = torch.rand(2, 5, 1) > 0.3
    scale = float(os.environ.get("GV_TEST_KW_SCALE", "0.5"))
    return Model(), (x,), {"mask": mask, "scale": scale, "mode": "sum", "cache": None}
