# torch_energy.py - a PyTorch program for `roofkit profile --energy --nvtx`: three steps of 40
# fp32 8192x8192 matmuls in NVTX range "gemm" and 200 in-place multiplies of 2^28 floats in
# range "stream", each kernel long and repeated enough for a per-kernel energy reading (docs/
# metrics.md "Energy"). Prints two numbers of its results.
import torch
a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")
x = torch.randn(1 << 28, device="cuda")
torch.cuda.synchronize()
for step in range(3):
    torch.cuda.nvtx.range_push("gemm")
    for _ in range(40):
        c = a @ b
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("stream")
    for _ in range(200):
        x.mul_(1.0000001)
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(float(c[0, 0]), float(x[0]))
