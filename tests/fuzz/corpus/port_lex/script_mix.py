import torch, pynvml
d = torch.device("rocm:1"); t = x.to('hip')
if not torch.version.cuda: print(r"""nvidia-smi""", b'\x00', f"{d!r}")
torch.backends.cudnn.allow_tf32 = torch.backends.cudnn.deterministic = True
s = '''unterminated
