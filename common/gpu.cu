/*
 * gpu.cu - rk_gpu_read (gpu.h): the one place that turns a CUDA device's properties and
 * attributes into struct rk_gpu.
 */
#include "gpu.h"
#include "launch.h"

#include <cuda_runtime_api.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
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

int rk_gpu_count(char *why, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0)
        return count;
    if (why && len)
        snprintf(why, len, "%s",
                 e == cudaErrorInsufficientDriver
                     ? "no NVIDIA driver, or one older than this CUDA runtime"
                 : e != cudaSuccess ? cudaGetErrorString(e)
                                    : "none found");
    return 0;
}

int rk_gpu_list(struct rk_gpu **out, int *n)
{
    char why[200];
    int count = rk_gpu_count(why, sizeof why);
    struct rk_gpu *g;

    *out = NULL;
    *n = 0;
    if (count == 0)
        return rk_error(RK_ENOGPU, "no usable CUDA GPU (%s)", why);
    if (!(g = (struct rk_gpu *)calloc((size_t)count, sizeof *g)))
        return rk_error(RK_ENOMEM, "out of host memory");
    for (int i = 0; i < count; i++) {
        int rc = rk_gpu_read(i, &g[i]);
        if (rc != RK_OK) {
            free(g);
            return rc;
        }
    }
    *out = g;
    *n = count;
    return RK_OK;
}

int rk_gpu_resolve(const char *spec, int **out, int *n)
{
    struct rk_gpu *g = NULL;
    const char **uuids = NULL;
    int count = 0, rc;

    *out = NULL;
    *n = 0;
    if ((rc = rk_gpu_list(&g, &count)) != RK_OK)
        return rc;
    if (!(uuids = (const char **)calloc((size_t)count, sizeof *uuids))) {
        free(g);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    for (int i = 0; i < count; i++)
        uuids[i] = g[i].uuid;
    rc = rk_device_list_resolve(spec, uuids, count, out, n);
    free(uuids);
    free(g);
    return rc;
}

int rk_pci_numa_node(const char *pci_bus_id)
{
    char path[128], id[32];
    FILE *f;
    int node = -1;
    size_t i;

    /* sysfs names the device in lowercase with a 4-digit domain; CUDA may print 8 digits. */
    const char *p = pci_bus_id;
    if (strlen(p) == 16 && strncmp(p, "0000", 4) == 0)
        p += 4;
    for (i = 0; p[i] && i + 1 < sizeof id; i++)
        id[i] = (char)tolower((unsigned char)p[i]);
    id[i] = '\0';
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", id);
    if (!(f = fopen(path, "r")))
        return -1;
    if (fscanf(f, "%d", &node) != 1)
        node = -1;
    fclose(f);
    return node;
}
