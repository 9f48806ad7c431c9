/*
 * move.cu - the kernel "move": a GEMM shape's bytes moved and nothing computed, the floor
 * under every kernel of that shape, measured by the same session (cold L2, events, warm-up)
 * as the kernels it is set beside.
 *
 * It reads A (m x k) and B (k x n) once and writes C (m x n) once, column-major as the GEMMs
 * of the suites: C(:, p) = A(:, p mod k) for every column p of C, so that each byte of C
 * comes from a byte of A and the result can be checked exactly (move_check). Columns of A at
 * or past n, and B, are read into a sink that is stored only under a condition the data
 * never meets, so that the compiler keeps the loads. It moves (m k + k n + m n) elements,
 * the effective bytes of 004_dab40fe45003313a.txt Fig. 5 and Fig. 14, at the rate the GPU
 * gives a plain stream of them at this size: launch, ramp-up and tail included. Where a
 * kernel of the shape falls short of the copy ceiling (measured on 1 GiB), this says how much
 * of it the shape's bytes alone reach. It is a plain stream, not the fastest way to move them:
 * on some ISM2 shapes the entry point tsm2 is faster, up to 1.24x (docs/model.md).
 *
 * A thread owns V consecutive rows (one 16-byte vector, or one element where m is not a
 * multiple of V or the vectors would leave the GPU short of threads) and a slice of MOVE_KS
 * columns of A (blockIdx.y): its MOVE_KS loads are independent and in flight together, with
 * streaming loads and stores (ld/st.global.cs) as the TSM2 kernels use. Where n > k each
 * loaded column is stored to every column of C that repeats it, in groups of MOVE_NS columns
 * of C a block: the blocks of a group are neighbours in x and run together, so that the
 * groups after the first find A's lines in the L2 (not checked with counters). B is read by
 * every thread of the grid, a few elements each: read by the first slice of columns alone it
 * took 10240 x 32 x 10240 fp32 to 168.6 us against 135.2 spread (134.5 at one column; H100).
 */
#include "common.h"
#include "internal.h"
#include "verify.cuh"

#include <cuda_runtime.h>

namespace
{

constexpr int MOVE_KS = 8;        /* columns of A a thread loads, all in flight */
constexpr int MOVE_NS = 8;        /* columns of C a block stores where n > k (a column group) */
constexpr int MOVE_THREADS = 256; /* a block */
/* Threads below which the vectors give way to single elements: 16 warps on each of 132 SMs. */
constexpr long MOVE_MIN_THREADS = 132L * 512;

template <typename T, int V> struct lanes;
template <> struct lanes<float, 4> {
    typedef float4 type;
};
template <> struct lanes<double, 2> {
    typedef double2 type;
};
template <typename T> struct lanes<T, 1> {
    typedef T type;
};

__device__ __forceinline__ unsigned bits_of(float x)
{
    return __float_as_uint(x);
}
__device__ __forceinline__ unsigned bits_of(double x)
{
    const unsigned long long b = (unsigned long long)__double_as_longlong(x);
    return (unsigned)(b ^ (b >> 32));
}
__device__ __forceinline__ unsigned bits_of(float4 x)
{
    return bits_of(x.x) ^ bits_of(x.y) ^ bits_of(x.z) ^ bits_of(x.w);
}
__device__ __forceinline__ unsigned bits_of(double2 x)
{
    return bits_of(x.x) ^ bits_of(x.y);
}

/* Stored only when the XOR of every element a thread read equals this: on random data about
 * once in 2^32 threads, and then it writes one word of the sink, nothing that is timed. */
constexpr unsigned SINK_KEY = 0x9e3779b9u;

template <typename T, int V>
__global__ void __launch_bounds__(MOVE_THREADS)
    move_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m, long n,
                long k, int ncg, unsigned *__restrict__ sink)
{
    typedef typename lanes<T, V>::type VT;
    /* neighbours in x: the column groups of one block of rows, which share its loads of A */
    const long rb = blockIdx.x / ncg;
    const int cg = (int)(blockIdx.x % ncg);
    const long row = (rb * blockDim.x + threadIdx.x) * V;
    const long j0 = (long)blockIdx.y * MOVE_KS;
    const long p0 = ncg == 1 ? 0 : (long)cg * MOVE_NS, p1 = ncg == 1 ? n : min(n, p0 + MOVE_NS);
    unsigned x = 0;
    if (row < m) {
        VT a[MOVE_KS];
#pragma unroll
        for (int u = 0; u < MOVE_KS; u++)
            if (j0 + u < k)
                a[u] = __ldcs(reinterpret_cast<const VT *>(A + row + (j0 + u) * m));
#pragma unroll
        for (int u = 0; u < MOVE_KS; u++) {
            const long j = j0 + u;
            if (j >= k)
                break;
            if (j >= n && cg == 0)
                x ^= bits_of(a[u]);
            /* the columns of this group that repeat column j of A */
            for (long p = j >= p0 ? j : j + (p0 - j + k - 1) / k * k; p < p1; p += k)
                __stcs(reinterpret_cast<VT *>(C + row + p * m), a[u]);
        }
    }
    /* B, once, spread over every thread of the grid */
    const long all = (long)gridDim.x * gridDim.y * blockDim.x;
    for (long i = ((long)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x; i < k * n;
         i += all)
        x ^= bits_of(__ldcs(B + i));
    if (x == SINK_KEY)
        sink[0] = x;
}

/* stats += verify_accumulate's sums for C against A's columns, C(:, p) = A(:, p mod k). */
template <typename T>
__global__ void move_check_kernel(const T *__restrict__ A, const T *__restrict__ C, long m, long n,
                                  long k, double *stats)
{
    double d2 = 0, r2 = 0, bad = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < m * n;
         i += (long)gridDim.x * blockDim.x) {
        const long row = i % m, p = i / m;
        verify_term((double)C[i], (double)A[row + (p % k) * m], &d2, &r2, &bad);
    }
    verify_block_add(d2, r2, bad, stats);
}

/* Blocks of MOVE_NS columns of C: n > k only (else every column of C is one of A's). */
int col_groups(const struct kern_args *a)
{
    return a->n > a->k ? (int)kern_ceil_div(a->n, MOVE_NS) : 1;
}

int vector_width(const struct kern_args *a)
{
    const int v = a->prec == KERNELS_FP64 ? 2 : 4;
    if (a->m % v != 0 ||
        kern_ceil_div(a->m, v) * kern_ceil_div(a->k, MOVE_KS) * col_groups(a) < MOVE_MIN_THREADS)
        return 1;
    return v;
}

int resolve_move(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)p, (void)why, (void)len;
    if (a && a->k > 65535L * MOVE_KS)
        return kern_why(why, len, "k = %ld is more than move's %ld slices of %d columns", a->k,
                        65535L, MOVE_KS);
    return RK_OK;
}

/* The sink: one word; the rest of the workspace is unused. */
size_t workspace_move(const struct kern_args *a)
{
    (void)a;
    return sizeof(unsigned);
}

template <typename T, int V> int launch_as(const struct kern_args *a, struct kern_launch *info)
{
    const long threads = kern_ceil_div(a->m, V);
    const int ncg = col_groups(a);
    const long gx = kern_ceil_div(threads, MOVE_THREADS) * ncg, gy = kern_ceil_div(a->k, MOVE_KS);
    if (gx > 0x7fffffffL)
        return rk_error(RK_EUSAGE, "move: m = %ld needs more than 2^31 blocks", a->m);
    const dim3 grid((unsigned)gx, (unsigned)gy), block(MOVE_THREADS);
    move_kernel<T, V><<<grid, block, 0, a->stream>>>((const T *)a->a, (const T *)a->b, (T *)a->c,
                                                     a->m, a->n, a->k, ncg, (unsigned *)a->ws);
    RK_CUDA(cudaGetLastError());
    info->grid[0] = grid.x;
    info->grid[1] = grid.y;
    info->grid[2] = 1;
    info->block[0] = MOVE_THREADS;
    info->block[1] = info->block[2] = 1;
    info->dyn_smem = 0;
    info->func = (const void *)move_kernel<T, V>;
    info->launches = 1;
    return RK_OK;
}

int launch_move(const struct kern_args *a, struct kern_launch *info)
{
    const int v = vector_width(a);
    if (a->prec == KERNELS_FP64)
        return v == 1 ? launch_as<double, 1>(a, info) : launch_as<double, 2>(a, info);
    return v == 1 ? launch_as<float, 1>(a, info) : launch_as<float, 4>(a, info);
}

int check_move(const struct kern_args *a, double *stats, int blocks)
{
    if (a->prec == KERNELS_FP64)
        move_check_kernel<double><<<blocks, 256, 0, a->stream>>>(
            (const double *)a->a, (const double *)a->c, a->m, a->n, a->k, stats);
    else
        move_check_kernel<float><<<blocks, 256, 0, a->stream>>>(
            (const float *)a->a, (const float *)a->c, a->m, a->n, a->k, stats);
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

/* A copy is exact: any difference is a fault. */
double tolerance_move(const struct kern_args *a)
{
    (void)a;
    return 0.0;
}

} // namespace

extern "C" const struct kern_ops kern_move = {resolve_move, workspace_move, NULL,      launch_move,
                                              NULL,         tolerance_move, check_move};
