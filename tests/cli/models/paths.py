# Modules reached in the ways module hooks do not see or refuse: a scripted submodule
# (ScriptModules take no hooks), a submodule whose forward is called directly, one whose
# forward is an instance attribute of its own, and one module called twice. The capture
# must name each op's module all the same, and leave the model as it found it.
import torch


class Scale(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


class Own(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.forward = self.halve  # an instance attribute, which the capture must keep

    def halve(self, x):
        return torch.tanh(x) * 0.5


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.scripted = torch.jit.script(Scale())
        self.direct = torch.nn.Sigmoid()
        self.own = Own()
        self.shared = torch.nn.Softsign()

    def forward(self, x):
        x = self.fc(x)
        x = self.scripted(x)
        x = self.direct.forward(x)
        x = self.own(x)
        x = self.shared(self.shared(x))
        return x.sum(1, keepdim=True)


def make():
    return Model(), torch.randn(4, 16)
