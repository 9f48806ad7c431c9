/*
 * gpu.h - fills common.h's struct rk_gpu from the CUDA runtime (gpu.cu, library rk_common_gpu:
 * it needs the CUDA runtime, which rk_common does not). probes/ and kernels/ link it, each
 * reading the device it opens, so that the two describe a GPU alike and neither depends on the
 * other.
 */
#ifndef RK_COMMON_GPU_H
#define RK_COMMON_GPU_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reads CUDA device `index` into *out: cudaGetDeviceProperties (name, UUID, compute
 * capability, SMs, bus width, L2, memory, shared memory, registers, threads), the PCI bus id,
 * the peak SM and memory clocks (device attributes: CUDA 13 has no clock fields in
 * cudaDeviceProp) and the driver and runtime versions. Does not select the device. RK_OK, or
 * RK_ECUDA (RK_ENOMEM) with the failing call printed; *out is then partly filled.
 */
int rk_gpu_read(int index, struct rk_gpu *out /* OUT */);

/*
 * How many CUDA devices this process can use; 0 when there is none, no driver or too old a
 * driver, with the reason written to why (may be NULL). Prints nothing.
 */
int rk_gpu_count(char *why, size_t len);

/*
 * Every GPU this process can use, read with rk_gpu_read: *out malloc'd (free it), *n >= 1.
 * RK_OK, RK_ENOGPU (printed, with the reason), RK_ECUDA, RK_ENOMEM.
 */
int rk_gpu_list(struct rk_gpu **out /* OUT */, int *n /* OUT */);

/*
 * Resolves a --device list ("all", indices, UUIDs: launch.h's rk_device_list_resolve) against
 * the GPUs present. RK_OK with *out malloc'd, or the printed error.
 */
int rk_gpu_resolve(const char *spec, int **out /* OUT */, int *n /* OUT */);

/* The NUMA node of a PCI device ("0000:19:00.0") from Linux's sysfs; -1 when unknown. */
int rk_pci_numa_node(const char *pci_bus_id);

#ifdef __cplusplus
}
#endif
#endif /* RK_COMMON_GPU_H */
