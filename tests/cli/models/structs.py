# A model whose output is a dataclass holding a named tuple, a tensor and None, as
# custom model code returns: the outputs are named by field, in the fields' order
# (score, pair.lo, pair.hi), not by position and not sorted.
import collections
import dataclasses
from typing import Optional

import torch

Pair = collections.namedtuple("Pair", ["lo", "hi"])


@dataclasses.dataclass
class Out:
    score: torch.Tensor
    pair: Pair
    note: Optional[str] = None


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = self.fc(x)
        return Out(score=y.sum(dim=1), pair=Pair(lo=y.min(dim=1).values, hi=y.amax(dim=1)))


def make():
    return Model(), torch.randn(3, 8)
