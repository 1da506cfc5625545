import torch
from torch.backends import cudnn

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.allow_tf32 = False
cudnn.benchmark = False
if torch.backends.cudnn.benchmark == True:
    print("benchmark on")
