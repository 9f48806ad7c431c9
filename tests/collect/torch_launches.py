# torch_launches.py - what torch_small.py and torch_mix.py print with --count: the CUDA kernels
# a PyTorch function launches, counted with torch.profiler (the reference for "kernels recorded
# = kernels launched"; torch.profiler and roofkit cannot both hold CUPTI).
import torch


def kernels(work):
    """The CUDA kernel events of one call of work(), memcpy and memset left out."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.init()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work()
        torch.cuda.synchronize()
    return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
            and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
