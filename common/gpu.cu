/*
 * gpu.cu - rk_gpu_read (gpu.h): the one place that turns a CUDA device's properties and
 * attributes into struct rk_gpu.
 */
#include "gpu.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

int rk_gpu_read(int index, struct rk_gpu *d)
{
    struct cudaDeviceProp p;
    int v;

    memset(d, 0, sizeof *d);
    RK_CUDA(cudaGetDeviceProperties(&p, index));
    d->index = index;
    snprintf(d->name, sizeof d->name, "%s", p.name);
    rk_gpu_uuid((const unsigned char *)p.uuid.bytes, d->uuid, sizeof d->uuid);
    RK_CUDA(cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, index));
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sm_count = p.multiProcessorCount;
    d->l2_bytes = p.l2CacheSize;
    d->memory_bytes = (int64_t)p.totalGlobalMem;
    d->bus_width_bits = p.memoryBusWidth;
    d->smem_per_sm_bytes = (int)p.sharedMemPerMultiprocessor;
    d->smem_per_block_optin_bytes = (int)p.sharedMemPerBlockOptin;
    d->regs_per_sm = p.regsPerMultiprocessor;
    d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    /* CUDA 13: the clocks are attributes only (kHz). */
    RK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, index));
    d->sm_clock_mhz = v / 1000;
    RK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, index));
    d->mem_clock_mhz = v / 1000;
    RK_CUDA(cudaDriverGetVersion(&d->driver_version));
    RK_CUDA(cudaRuntimeGetVersion(&d->runtime_version));
    return RK_OK;
}
