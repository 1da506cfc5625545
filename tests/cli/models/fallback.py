# A model that moves an activation to the CPU inside forward (the seed's silent
# CPU fallback): gpuvet must report it at the module "block.post".
import torch


class Post(torch.nn.Module):
    def forward(self, x):
        y = x.cpu()            # the fallback: runs on the CPU from here
        y = torch.tanh(y) * 2
        return y.to("cuda" if torch.cuda.is_available() else "cpu")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(256, 256)
        self.post = Post()

    def forward(self, x):
        return self.post(self.fc(x))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.out = torch.nn.Linear(256, 8)

    def forward(self, x):
        return self.out(self.block(x))


def make():
    return Model(), torch.randn(64, 256)
