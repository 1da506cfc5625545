import subprocess

import pynvml


def gpu_names():
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return out.stdout.splitlines()


def memory():
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    return pynvml.nvmlDeviceGetMemoryInfo(h).total


def via_shell():
    return subprocess.check_output("nvidia-smi --query-gpu=name --format=csv", shell=True)
