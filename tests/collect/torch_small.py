# torch_small.py - a short PyTorch program for `roofkit profile`: matmul, elementwise, reduction.
# Prints a checksum (deterministic) so runs with and without roofkit can be compared. With
# --count it instead counts the CUDA kernels it launches with torch.profiler (the reference for
# "kernels recorded = kernels launched", torch_launches.py).
import sys

import torch


def work():
    torch.manual_seed(0)
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda")
    y = torch.relu(x @ w) + 1.0
    z = torch.softmax(y, dim=1).sum(dim=0)
    s = (z * z).sum()
    return float(s.item())


if "--count" in sys.argv:
    import torch_launches

    kernels = torch_launches.kernels(work)
    print("kernels", len(kernels))
    for e in kernels:
        print("  ", e.name[:100])
else:
    print("checksum %.6f" % work())
