# Batch statistics updated inside forward, by an op that writes running_mean and
# running_var, arguments it does not return: the capture lists them as the op's
# mutated arguments (torch 2.x's _native_batch_norm_legit says so in its schema;
# where there is none, torch 1.x's functional batch_norm in training mode).
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 4)
        self.register_buffer("mean", torch.zeros(16))
        self.register_buffer("var", torch.ones(16))

    def forward(self, x):
        y = self.fc(x)
        try:
            legit = torch.ops.aten._native_batch_norm_legit
        except (AttributeError, RuntimeError):
            legit = None
        if legit is not None:
            y = legit(y, None, None, self.mean, self.var, True, 0.1, 1e-5)[0]
        else:
            y = torch.nn.functional.batch_norm(y, self.mean, self.var, training=True)
        y = y + self.mean  # the statistics as the op left them
        return self.out(torch.relu(y))


def make():
    return Model(), torch.randn(8, 16)
