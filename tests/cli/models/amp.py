# A model that runs its layers in reduced precision as inference code does: under
# torch.autocast (bfloat16 on the CPU, float16 on a GPU), with a layer kept in half
# precision by hand; its output is float32.
import torch


class Amp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.fc2 = torch.nn.Linear(64, 16)

    def forward(self, x):
        dt = torch.float16 if x.is_cuda else torch.bfloat16
        with torch.autocast(device_type=x.device.type, dtype=dt):
            h = torch.nn.functional.gelu(self.fc1(x))
            h = self.norm(h)
            y = self.fc2(h)
        return y.float().softmax(-1)


def make():
    torch.manual_seed(0)
    return Amp(), torch.randn(8, 32)
