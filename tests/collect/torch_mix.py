# torch_mix.py - a PyTorch program with a wide mix of kernels for `roofkit profile`: matmuls of
# every precision the H100's pipes run (fp32 on the CUDA cores, tf32, fp16, bf16, fp64 on DMMA
# with a padded n, fp8 and int8 through cuBLASLt), a linear layer with its bias fused by
# cuBLASLt, convolutions (cuDNN), softmax, layer and batch norm, elementwise, reductions, a scan,
# a transpose, a gather and random numbers. Every kernel is sized to run for several
# microseconds on an H100. Each GEMM's useful work (2 m n k) is printed on stderr as
# "gemm NAME m n k" so that counters can be checked against it.
#
# Prints a checksum (deterministic) so runs with and without roofkit can be compared. With
# --count it instead lists the CUDA kernels it launches (torch_launches.py).
import sys

import torch


def gemm(name, m, n, k):
    print("gemm %s %d %d %d" % (name, m, n, k), file=sys.stderr)


def matmuls(acc):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(2048, 2048, device="cuda")
    b = torch.randn(2048, 2048, device="cuda")
    acc.append((a @ b).sum())  # fp32 on the CUDA cores
    gemm("fp32", 2048, 2048, 2048)
    torch.backends.cuda.matmul.allow_tf32 = True
    acc.append((a @ b).sum())  # tf32 tensor cores
    gemm("tf32", 2048, 2048, 2048)
    torch.backends.cuda.matmul.allow_tf32 = False
    for dt, name in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        x = torch.randn(4096, 4096, device="cuda", dtype=dt)
        y = torch.randn(4096, 4096, device="cuda", dtype=dt)
        acc.append((x @ y).float().sum())
        gemm(name, 4096, 4096, 4096)
    # a linear layer: cuBLASLt with the bias added in its epilogue
    lin = torch.nn.Linear(4096, 4096, device="cuda", dtype=torch.bfloat16)
    xin = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        acc.append(lin(xin).float().sum())
    gemm("bf16_linear", 8192, 4096, 4096)
    # fp64 on the DMMA tensor cores, square and with n = 12 (padded to the MMA's tile)
    d = torch.randn(2048, 2048, device="cuda", dtype=torch.float64)
    acc.append((d @ d).sum().float())
    gemm("fp64", 2048, 2048, 2048)
    d12 = torch.randn(2048, 12, device="cuda", dtype=torch.float64)
    big = torch.randn(8192, 2048, device="cuda", dtype=torch.float64)
    acc.append((big @ d12).sum().float())
    gemm("fp64_n12", 8192, 12, 2048)
    # int8 and fp8 through cuBLASLt (where this PyTorch has them)
    try:
        i8a = torch.randint(-4, 4, (4096, 4096), device="cuda", dtype=torch.int8)
        i8b = torch.randint(-4, 4, (4096, 4096), device="cuda", dtype=torch.int8).t()
        acc.append(torch._int_mm(i8a, i8b).float().sum())
        gemm("int8", 4096, 4096, 4096)
    except (RuntimeError, AttributeError) as e:
        print("int8 matmul skipped: %s" % str(e).splitlines()[0], file=sys.stderr)
    try:
        f8a = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn)
        f8b = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        out = torch._scaled_mm(f8a, f8b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        acc.append((out[0] if isinstance(out, tuple) else out).float().sum())
        gemm("fp8", 4096, 4096, 4096)
    except (RuntimeError, AttributeError, TypeError) as e:
        print("fp8 matmul skipped: %s" % str(e).splitlines()[0], file=sys.stderr)


def layers(acc):
    x = torch.randn(8192, 4096, device="cuda")
    acc.append(torch.softmax(x, dim=1).sum())
    ln = torch.nn.LayerNorm(4096, device="cuda")
    with torch.no_grad():
        acc.append(ln(x).sum())
        acc.append(torch.nn.functional.layer_norm(x.bfloat16(), (4096,)).float().sum())
    torch.backends.cudnn.benchmark = False
    img = torch.randn(32, 64, 112, 112, device="cuda")
    conv = torch.nn.Conv2d(64, 64, 3, padding=1, device="cuda")
    bn = torch.nn.BatchNorm2d(64, device="cuda")
    with torch.no_grad():
        acc.append(conv(img).sum())
        acc.append(bn(img).sum())
        conv16 = conv.half().to(memory_format=torch.channels_last)
        img16 = img.half().to(memory_format=torch.channels_last)
        acc.append(conv16(img16).float().sum())


def elementwise(acc):
    x = torch.randn(4096, 4096, device="cuda")
    y = torch.randn(4096, 4096, device="cuda")
    acc.append(torch.nn.functional.gelu(x).sum())
    acc.append((x + y).sum())
    acc.append((x * 3.0).relu().sum())
    acc.append(torch.exp(x * 0.01).mean())
    acc.append(x.max())
    acc.append(x.sum(dim=0).sum())
    acc.append(torch.cumsum(x, dim=1)[:, -1].sum())
    acc.append(x.t().contiguous()[0].sum())
    idx = torch.randint(0, 4096, (65536,), device="cuda")
    acc.append(torch.nn.functional.embedding(idx, x).sum())


def work():
    torch.manual_seed(0)
    acc = []
    matmuls(acc)
    layers(acc)
    elementwise(acc)
    return float(torch.stack([a.float() for a in acc]).sum().item())


if "--count" in sys.argv:
    import torch_launches

    kernels = torch_launches.kernels(work)
    print("kernels", len(kernels), "distinct", len({e.name for e in kernels}))
    for e in kernels:
        print("  %8.1f us  %s" % (e.device_time, e.name[:110]))
else:
    print("checksum %.6e" % work())
