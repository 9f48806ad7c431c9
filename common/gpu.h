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

#ifdef __cplusplus
}
#endif
#endif /* RK_COMMON_GPU_H */
