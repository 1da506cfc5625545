"""Device strings: "hip" in a docstring is not a finding: torch.device("hip")."""
import torch

# torch.device("rocm") in a comment is not a finding either
dev = torch.device("hip")
x = torch.zeros(4, device="rocm:0")
y = x.to("hip")
z = torch.ones(2, device="cuda")
name = "hip"  # a plain string, not passed to torch
print(f"running on {name}")
