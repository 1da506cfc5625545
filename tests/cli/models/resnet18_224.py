# ResNet-18 at ImageNet size, batch 8 (GV_MODEL_BATCH overrides), for the GPU
# measurements; random weights from gpuvet's seed.
import os

import torch
import torchvision


def make():
    model = torchvision.models.resnet18()
    batch = int(os.environ.get("GV_MODEL_BATCH", "8"))
    return model, torch.randn(batch, 3, 224, 224)
