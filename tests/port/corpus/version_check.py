import torch


def has_gpu():
    if torch.version.cuda is not None and torch.cuda.is_available():
        return True
    return False


def backend():
    if torch.version.hip:
        return "rocm"
    elif torch.version.cuda:
        return "cuda"
    return "cpu"


def label():
    assert torch.version.cuda, "needs a CUDA build"
    return "cuda " + str(torch.version.cuda)


def portable():
    return torch.version.cuda or torch.version.hip
