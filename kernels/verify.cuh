/*
 * verify.cuh - the sums a verification adds up (session.cu's verify_kernel, move.cu's exact
 * check): over finite outputs the squared difference from the reference, the squared
 * reference, and the count of NaN/Inf outputs; kernels_run's relative error is
 * sqrt(sum (out-ref)^2 / sum ref^2).
 */
#ifndef RK_KERNELS_VERIFY_CUH
#define RK_KERNELS_VERIFY_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ double verify_warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* One output o against its reference r. */
__device__ __forceinline__ void verify_term(double o, double r, double *d2, double *r2, double *bad)
{
    if (isfinite(o)) {
        const double d = o - r;
        *d2 += d * d;
    } else {
        *bad += 1;
    }
    *r2 += r * r;
}

/* stats[0..2] += the block's sums (every thread of the block calls it; at most 1024). */
__device__ __forceinline__ void verify_block_add(double d2, double r2, double bad, double *stats)
{
    __shared__ double part[3][32];
    d2 = verify_warp_sum(d2);
    r2 = verify_warp_sum(r2);
    bad = verify_warp_sum(bad);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        part[0][warp] = d2;
        part[1][warp] = r2;
        part[2][warp] = bad;
    }
    __syncthreads();
    if (warp == 0) {
        const int nw = blockDim.x >> 5;
        d2 = verify_warp_sum(lane < nw ? part[0][lane] : 0);
        r2 = verify_warp_sum(lane < nw ? part[1][lane] : 0);
        bad = verify_warp_sum(lane < nw ? part[2][lane] : 0);
        if (lane == 0) {
            atomicAdd(&stats[0], d2);
            atomicAdd(&stats[1], r2);
            atomicAdd(&stats[2], bad);
        }
    }
}

#endif
