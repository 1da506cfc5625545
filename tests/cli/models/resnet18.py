# A torchvision ResNet-18 with random weights from the seed gpuvet sets (no download).
import torch
import torchvision


def make():
    model = torchvision.models.resnet18(num_classes=10)
    return model, torch.randn(2, 3, 64, 64)
