/*
 * tsm2_common.cuh - what tsm2.cu (TSM2 V2, V3 and the split-k reduction) and ism2.cu (ISM2
 * optimisations 1 and 2) share: the device helpers of the paper's algorithms
 * (004_dab40fe45003313a.txt §3.3-3.5 and §5.2: loads of A and B, the rank-t3 update), the register
 * budget of Alg. 4's arrays, and the index of a power-of-two tile in the instantiation tables.
 * Included by .cu files of kernels/ only.
 */
#ifndef RK_KERNELS_TSM2_COMMON_CUH
#define RK_KERNELS_TSM2_COMMON_CUH

#include "internal.h"

#include <cuda_runtime.h>

namespace
{

/* ---- device helpers ------------------------------------------------------ */

/* Loads N consecutive elements from shared memory with the widest aligned loads. */
template <typename T, int N> __device__ __forceinline__ void lds_n(T (&r)[N], const T *p)
{
    if constexpr (sizeof(T) == 4 && N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N / 4; i++) {
            float4 v = reinterpret_cast<const float4 *>(p)[i];
            r[4 * i] = v.x;
            r[4 * i + 1] = v.y;
            r[4 * i + 2] = v.z;
            r[4 * i + 3] = v.w;
        }
    } else if constexpr (sizeof(T) == 4 && N % 2 == 0) {
#pragma unroll
        for (int i = 0; i < N / 2; i++) {
            float2 v = reinterpret_cast<const float2 *>(p)[i];
            r[2 * i] = v.x;
            r[2 * i + 1] = v.y;
        }
    } else if constexpr (sizeof(T) == 8 && N % 2 == 0) {
#pragma unroll
        for (int i = 0; i < N / 2; i++) {
            double2 v = reinterpret_cast<const double2 *>(p)[i];
            r[2 * i] = v.x;
            r[2 * i + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; i++)
            r[i] = p[i];
    }
}

/*
 * Loads A[row, j0 .. j0+N) (column-major, stride m) into registers. A is streamed
 * once: __ldcs (evict-first) keeps it from pushing B and the partial sums out of
 * the L2. CHECKED: columns at or past jend read as zero.
 */
template <typename T, int N, bool CHECKED>
__device__ __forceinline__ void lda_n(T (&r)[N], const T *arow, long j0, long jend, long m)
{
#pragma unroll
    for (int x = 0; x < N; x++) {
        if (!CHECKED || j0 + x < jend)
            r[x] = __ldcs(arow + (j0 + x) * m);
        else
            r[x] = T(0);
    }
}

/* c[q] += sum_x a[x] * Bs[q*t1 + l0 + x]: the rank-t3 update of Alg. 3 lines 26-29. */
template <typename T, int T2, int T3>
__device__ __forceinline__ void fma_tile(T (&c)[T2], const T (&a)[T3], const T *bs, int t1)
{
#pragma unroll
    for (int q = 0; q < T2; q++) {
        T b[T3];
        lds_n<T, T3>(b, bs + q * t1);
#pragma unroll
        for (int x = 0; x < T3; x++)
            c[q] = fma(a[x], b[x], c[q]);
    }
}

/* Row `tid` of the B tile starting at row j, columns p..p+T2, zero outside (kend, n). */
template <typename T, int T2>
__device__ __forceinline__ void ldb_row(T (&r)[T2], const T *B, long j, long kend, long p, long n,
                                        long k, int tid)
{
    const long row = j + tid;
#pragma unroll
    for (int q = 0; q < T2; q++)
        r[q] = (row < kend && p + q < n) ? B[row + (p + q) * k] : T(0);
}

template <typename T, int T2>
__device__ __forceinline__ void stb_row(T *Bs, const T (&r)[T2], int t1, int tid)
{
#pragma unroll
    for (int q = 0; q < T2; q++)
        Bs[q * t1 + tid] = r[q];
}

/*
 * Register budget of one thread: the arrays of Alg. 4 (C, currA, nextA, nextB) plus
 * RK_TSM2_REG_SLACK for addresses and loop state (§3.6.2's R_thread with its C).
 * Unbounded, nvcc hoists the shared loads of a t2 x t3 update ahead of its FMAs,
 * which costs registers and so threads (and loads in flight) per SM. 0: no cap.
 */
#ifndef RK_TSM2_REG_SLACK
#define RK_TSM2_REG_SLACK 48 /* chosen on an H100: better than no cap on 20 of 24 shapes */
#endif
template <typename T, int T2, int T3> constexpr int tsm2_regs()
{
    return RK_TSM2_REG_SLACK == 0 ||
                   (2 * T2 + 2 * T3) * (int)(sizeof(T) / 4) + RK_TSM2_REG_SLACK > 255
               ? 255
               : (2 * T2 + 2 * T3) * (int)(sizeof(T) / 4) + RK_TSM2_REG_SLACK;
}

/* The index of a tile size 1, 2, 4, 8 or 16 in the instantiation tables; -1 for others. */
int ilog2_pow2(long v)
{
    switch (v) {
    case 1:
        return 0;
    case 2:
        return 1;
    case 4:
        return 2;
    case 8:
        return 3;
    case 16:
        return 4;
    default:
        return -1;
    }
}

} // namespace

#endif
