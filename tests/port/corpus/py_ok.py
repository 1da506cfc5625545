"""A portable PyTorch script: zero findings."""
import torch

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.zeros(4, device=dev)
if torch.cuda.is_available():
    vendor = "rocm" if torch.version.hip else "cuda"
    n = torch.cuda.device_count()
    props = torch.cuda.get_device_properties(0)
    print(vendor, n, props.name)
torch.backends.cuda.matmul.allow_tf32 = False
