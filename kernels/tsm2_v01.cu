/*
 * tsm2_v01.cu - TSM2 V0 and V1, the paper's first two kernels (004_dab40fe45003313a.txt §3.2,
 * §3.3): one thread per row of A (m x k), B (k x n) read from global memory, column-major.
 *
 *   tsm2_v0   Alg. 1: inner product; A is read n times.
 *   tsm2_v1   Alg. 2: outer product: each element of A read once, n running sums in
 *             registers (in chunks of up to 16 columns).
 *
 * Neither uses shared memory or tiles: their one parameter is t1 (threads per block). The tiled
 * kernels (V2, V3, ISM2) are in tsm2.cu.
 */
#include "common.h"
#include "internal.h"

#include <cuda_runtime.h>

#include <stdio.h>

namespace
{

/* ---- V0, V1 ------------------------------------------------------------- */

/*
 * Alg. 1. The running sum stays in a register (the listing adds into C directly).
 * The loop over k runs U = KERNELS_TSM2_V0_UNROLL steps at a time, each group's loads
 * written before its FMAs, so that a thread has U elements of A in flight at once: the
 * model's bytes in flight (docs/model.md "occupancy"). Written as a plain unrolled loop,
 * nvcc issued the fp64 kernel's loads in two rounds (three steps, a DFMA, the fourth),
 * waiting two DRAM latencies per group (tests/kernels/sass-check.sh checks the order).
 * The sum's order is the listing's: j ascending.
 */
template <typename T>
__global__ void tsm2_v0_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                               long m, long n, long k)
{
    constexpr int U = KERNELS_TSM2_V0_UNROLL;
    const long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= m)
        return;
    for (long p = 0; p < n; p++) {
        T acc = T(0);
        long j = 0;
#pragma unroll 1 /* one group's loads in flight, not the next group's too */
        for (; j + U <= k; j += U) {
            T a[U], b[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                a[u] = A[row + (j + u) * m];
                b[u] = B[j + u + p * k];
            }
            __syncwarp(); /* keeps ptxas from sinking the group's last loads past its FMAs */
#pragma unroll
            for (int u = 0; u < U; u++)
                acc = fma(a[u], b[u], acc);
        }
        for (; j < k; j++)
            acc = fma(A[row + j * m], B[j + p * k], acc);
        C[row + p * m] = acc;
    }
}

/* Alg. 2, n taken NC columns at a time (registers need a compile-time count); k in groups
 * of U = KERNELS_TSM2_V1_UNROLL(NC) steps whose loads precede their FMAs, as in V0, so that
 * a thread has U elements of A in flight (the model's bytes in flight). ptxas (CUDA 13.0)
 * does not always keep that order: without a barrier it issued fp64 nc 8's second load of A
 * and fp64 nc 2's fourth after FMAs that wait on the first (two DRAM rounds per group: fp64
 * n = 8 ran at 2100 cycles a group, n = 4 at 1100). With __syncwarp between loads and FMAs
 * it keeps A's order for nc 1, 2, 8 and 16 but splits nc 4's loads, and it moves nc 16's
 * loads of B after the first FMA, where without it they all precede it (on the H100 at
 * 10240 x 16 x 10240: fp64 8.5 -> 9.6 ms, fp32 6.4 -> 7.1; nc 2 fp64 2.0 -> 1.3 ms, nc 8
 * 5.5 -> 4.6). So nc 4 and nc 16 go without it; tests/kernels/sass-check.sh checks every
 * instantiation's main loop. */
template <typename T, int NC>
__global__ void tsm2_v1_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                               long m, long n, long k)
{
    constexpr int U = KERNELS_TSM2_V1_UNROLL(NC);
    const long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= m)
        return;
    for (long p = 0; p < n; p += NC) {
        T acc[NC];
#pragma unroll
        for (int q = 0; q < NC; q++)
            acc[q] = T(0);
        long j = 0;
#pragma unroll 1
        for (; j + U <= k; j += U) {
            T a[U], b[U][NC];
#pragma unroll
            for (int u = 0; u < U; u++) /* A first: the DRAM stream */
                a[u] = A[row + (j + u) * m];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int q = 0; q < NC; q++)
                    b[u][q] = p + q < n ? B[j + u + (p + q) * k] : T(0);
            if (NC != 4 && NC != 16) /* see the comment above the kernel */
                __syncwarp();
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int q = 0; q < NC; q++)
                    if (p + q < n)
                        acc[q] = fma(a[u], b[u][q], acc[q]);
        }
        for (; j < k; j++) {
            const T a = A[row + j * m];
#pragma unroll
            for (int q = 0; q < NC; q++)
                if (p + q < n)
                    acc[q] = fma(a, B[j + (p + q) * k], acc[q]);
        }
#pragma unroll
        for (int q = 0; q < NC; q++)
            if (p + q < n)
                C[row + (p + q) * m] = acc[q];
    }
}

/* ---- host side ---------------------------------------------------------- */

/* V0 and V1: parameter t1 only. */
int resolve_t1(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    if (p[0] % 32 != 0 || p[0] < 32 || p[0] > 1024)
        return kern_why(why, len, "t1 must be a multiple of 32 between 32 and 1024, not %ld", p[0]);
    return RK_OK;
}

template <typename T> const void *v1_func(long n)
{
    long nc = kernels_tsm2_cols(n);
    switch (nc) {
    case 1:
        return (const void *)tsm2_v1_kernel<T, 1>;
    case 2:
        return (const void *)tsm2_v1_kernel<T, 2>;
    case 4:
        return (const void *)tsm2_v1_kernel<T, 4>;
    case 8:
        return (const void *)tsm2_v1_kernel<T, 8>;
    default:
        return (const void *)tsm2_v1_kernel<T, 16>;
    }
}

int launch_v01(const struct kern_args *a, struct kern_launch *info, int v1)
{
    const long t1 = a->p[0];
    const long gx = kern_ceil_div(a->m, t1);
    const void *f;
    if (gx > 0x7fffffffL)
        return rk_error(RK_EUSAGE, "grid of %ld blocks is too large; raise t1", gx);
    if (a->prec == KERNELS_FP64)
        f = v1 ? v1_func<double>(a->n) : (const void *)tsm2_v0_kernel<double>;
    else
        f = v1 ? v1_func<float>(a->n) : (const void *)tsm2_v0_kernel<float>;
    int rc = kern_check_block(f, (unsigned)t1, v1 ? "tsm2_v1" : "tsm2_v0");
    if (rc != RK_OK)
        return rc;
    void *args[] = {(void *)&a->a, (void *)&a->b, (void *)&a->c,
                    (void *)&a->m, (void *)&a->n, (void *)&a->k};
    RK_CUDA(cudaLaunchKernel(f, dim3((unsigned)gx), dim3((unsigned)t1), args, 0, a->stream));
    kern_launched(info, f, (unsigned)gx, 1, (unsigned)t1, 1, 0);
    return kern_check_launch(v1 ? "tsm2_v1" : "tsm2_v0");
}

int launch_v0(const struct kern_args *a, struct kern_launch *info)
{
    return launch_v01(a, info, 0);
}
int launch_v1(const struct kern_args *a, struct kern_launch *info)
{
    return launch_v01(a, info, 1);
}

} // namespace

extern "C" {
const struct kern_ops kern_tsm2_v0 = {resolve_t1, NULL, NULL, launch_v0, NULL, NULL, NULL};
const struct kern_ops kern_tsm2_v1 = {resolve_t1, NULL, NULL, launch_v1, NULL, NULL, NULL};
}
