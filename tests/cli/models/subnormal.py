# Activations scaled into float32's subnormal range and back (issue 35: y * 2^-130, then
# * 2^65 twice), and the sum and variance of 2^18 values, which ATen vectorizes by CPU
# capability and (the variance) splits over its threads: a float64 referee computed in the
# environment judged differs with its ISA and thread count.
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        y = x * 2.0 ** -130
        y = y * 2.0 ** 65
        y = y * 2.0 ** 65
        return y, x.sum(), x.var()


def make():
    return Model(), torch.randn(1 << 18)
