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
 * on some ISM2 shapes the entry point tsm2 is faster, up to 1.14x (docs/model.md).
 *
 * A thread owns U vectors of V consecutive rows (16 bytes; where m is not a multiple of V, V
 * single rows 32 apart, a warp's 32 vectors 32 V consecutive rows, or one row below
 * MOVE_SIDE_ROWS with k <= MOVE_SIDE_K), S vectors apart (S the threads of the grid's rows: a
 * warp's accesses of a column are contiguous), and a slice of MOVE_LOADS / U columns of A
 * (blockIdx.y): its MOVE_LOADS loads are independent and in flight together (fewer where k is short
 * of them), with streaming loads and stores (ld/st.global.cs) as the TSM2 kernels use. Where n > k
 * each loaded column is stored to every column of C that repeats it. Where the rows leave the GPU
 * short of blocks, U shrinks, then C's columns are split in groups: the blocks of a group are
 * neighbours in x and run together, so that the groups after the first find A's lines in the
 * L2 (not checked with counters). B is read by every thread of the grid, a few elements each:
 * read by the first slice of columns alone it took 10240 x 32 x 10240 fp32 to 168.6 us
 * against 135.2 spread (134.5 at one column; H100).
 */
#include "common.h"
#include "internal.h"
#include "tsm2_common.cuh" /* vec: V elements as one 16-byte access */
#include "verify.cuh"

#include <cuda_runtime.h>

namespace
{

constexpr int MOVE_LOADS = 8;     /* vectors of A a thread loads at once: U rows x its columns */
constexpr int MOVE_NS = 8;        /* columns of C a group stores at most, where n > k */
constexpr int MOVE_THREADS = 256; /* a block */
constexpr int MOVE_WAVE = 2;      /* blocks an SM that the rows, then C's column groups, fill */
/*
 * At m not a multiple of the 16-byte vector (ODD): single rows from this many rows, V of them a
 * vector (a warp's rows side by side, 128 bytes of A in flight a thread as at aligned m), one
 * row a vector below; C in whole lines from MOVE_LINE_ROWS rows where n >= 8 and k <= 2. On an
 * H100 (kbench, suite ism2-odd's shapes, each way in one call) against one row a vector
 * everywhere: fp32 1000003 x 32 x 1 72.2 -> 53.0 us, 10000001 x 32 x 2 835 -> 561, x 2 x 12 255
 * -> 214, fp64 10000001 x 32 x 1 1358 -> 1051, but at 100003 rows (k <= 24) 1.03-1.13x slower
 * in fp32 (fewer threads); C in whole lines against rows side by side: 10000001 x 32 x 1 578 ->
 * 538, fp64 1051 -> 1029, 10000001 x 8 x 1-2 0.97-0.99 of the time, but 1.02-1.24x slower at 10^6
 * rows and at 10^7 with 2 columns.
 */
constexpr long MOVE_SIDE_ROWS = 300000;
/* ... and one row a vector there only up to this k: at m = k = 10241 (TSM2's shapes, thousands
 * of slices of k, blocks aplenty) one row a thread read fp32 A at 0.69 of the copy ceiling
 * (203 us against 135 at m = 10240). */
constexpr long MOVE_SIDE_K = 64;
constexpr long MOVE_LINE_ROWS = 4000000;

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

template <typename T, int V, int U, bool ODD>
__global__ void __launch_bounds__(MOVE_THREADS)
    move_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m, long n,
                long k, int ncg, int lines, unsigned *__restrict__ sink)
{
    typedef typename vec<T, V>::type VT;
    constexpr int KS = MOVE_LOADS / U; /* columns of A a thread loads for each of its rows */
    /* neighbours in x: the column groups of one block of rows, which share its loads of A */
    const long rb = blockIdx.x / ncg;
    const int cg = (int)(blockIdx.x % ncg);
    const long stride = (long)(gridDim.x / ncg) * blockDim.x; /* vectors apart: U rows */
    const long v0 = rb * blockDim.x + threadIdx.x;
    const long j0 = (long)blockIdx.y * KS;
    const long per = (n + ncg - 1) / ncg; /* columns of C a group stores */
    const long p0 = (long)cg * per, p1 = min(n, p0 + per);
    unsigned x = 0;
    if constexpr (ODD) {
        /* m not a multiple of V: rows side by side (tsm2_common.cuh side_base, the vector kernel's
         * SIDE layout in ism2.cu); where `lines`, C in whole runs of 32
         * elements (store_lines: ism2.cu's LINE). Every lane of a warp runs every vector (the
         * shuffles), rows past m neither loaded nor stored. */
        const int lane = (int)(threadIdx.x & 31);
        T a[U][KS][V];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long v = v0 + u * stride, base = side_base<V>(v) + (v & 31);
#pragma unroll
            for (int l = 0; l < KS; l++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    a[u][l][e] = base + 32 * e < m && j0 + l < k
                                     ? __ldcs(A + base + 32 * e + (j0 + l) * m)
                                     : T(0);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long v = v0 + u * stride, wbase = side_base<V>(v), base = wbase + (v & 31);
            if (wbase >= m)
                break;
#pragma unroll
            for (int l = 0; l < KS; l++) {
                const long j = j0 + l;
                if (j >= k)
                    break;
                if (j >= n && cg == 0)
#pragma unroll
                    for (int e = 0; e < V; e++)
                        x ^= bits_of(a[u][l][e]);
                for (long p = j >= p0 ? j : j + (p0 - j + k - 1) / k * k; p < p1; p += k) {
                    if (lines) {
                        store_lines(C + p * m, wbase, m, a[u][l], lane);
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            if (base + 32 * e < m)
                                __stcs(C + base + 32 * e + p * m, a[u][l][e]);
                    }
                }
            }
        }
    } else {
        /* The two paths are written out: through one walk of (load, stop, store) lambdas nvcc
         * compiled the unaligned ones differently, and on an H100 fp64 1000003 x 32 x 1 ran 5 %
         * slower, 10000001 x 32 x 24 2 % (kbench, both builds twice in one call). */
        VT a[U][KS];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long row = (v0 + u * stride) * V;
#pragma unroll
            for (int l = 0; l < KS; l++)
                if (row < m && j0 + l < k)
                    a[u][l] = __ldcs(reinterpret_cast<const VT *>(A + row + (j0 + l) * m));
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long row = (v0 + u * stride) * V;
            if (row >= m)
                break;
#pragma unroll
            for (int l = 0; l < KS; l++) {
                const long j = j0 + l;
                if (j >= k)
                    break;
                if (j >= n && cg == 0)
                    x ^= bits_of(a[u][l]);
                /* the columns of this group that repeat column j of A */
                for (long p = j >= p0 ? j : j + (p0 - j + k - 1) / k * k; p < p1; p += k)
                    __stcs(reinterpret_cast<VT *>(C + row + p * m), a[u][l]);
            }
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

/* stats += verify.cuh's sums for C against A's columns, C(:, p) = A(:, p mod k). */
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

/*
 * How a launch covers the shape: V rows a vector (16 bytes where m allows, else one element),
 * U vectors of rows a thread (U times its columns of A: MOVE_LOADS loads in flight, as many as
 * k allows, so that a few columns still keep 128 bytes in flight a thread), ncg groups of C's
 * columns where n > k. U shrinks, then the groups grow, until the blocks fill MOVE_WAVE a SM.
 */
struct plan {
    int v, u, ncg, odd, lines;
    long rows_blocks, slices;
};

struct plan plan_of(const struct kern_args *a)
{
    struct plan pl;
    const long want = (long)MOVE_WAVE * a->dev->sm_count;
    pl.v = a->prec == KERNELS_FP64 ? 2 : 4;
    pl.odd = a->m % pl.v != 0;
    if (pl.odd && a->m < MOVE_SIDE_ROWS && a->k <= MOVE_SIDE_K)
        pl.v = 1;
    pl.lines = pl.odd && a->m >= MOVE_LINE_ROWS && a->n >= 8 && a->k <= 2;
    pl.u = a->k >= 8 ? 1 : a->k >= 4 ? 2 : a->k >= 2 ? 4 : 8;
    /* at odd m whole warps of vectors, 32 V rows each */
    const long nv = pl.odd ? kern_ceil_div(a->m, 32L * pl.v) * 32 : kern_ceil_div(a->m, pl.v);
    for (;;) {
        pl.slices = kern_ceil_div(a->k, MOVE_LOADS / pl.u);
        pl.rows_blocks = kern_ceil_div(nv, (long)pl.u * MOVE_THREADS);
        if (pl.u == 1 || pl.rows_blocks * pl.slices >= want)
            break;
        pl.u /= 2;
    }
    pl.ncg = 1;
    if (a->n > a->k && pl.rows_blocks * pl.slices < want) {
        const long g = kern_ceil_div(want, pl.rows_blocks * pl.slices);
        const long most = kern_ceil_div(a->n, MOVE_NS);
        pl.ncg = (int)(g < most ? g : most);
    }
    return pl;
}

int resolve_move(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)p; /* no parameters */
    if (a && a->k > 65535L * MOVE_LOADS)
        return kern_why(why, len, "k = %ld is more than move's %ld slices of %d columns", a->k,
                        65535L, MOVE_LOADS);
    return RK_OK;
}

/* The sink: one word; the rest of the workspace is unused. */
size_t workspace_move(const struct kern_args *a)
{
    (void)a;
    return sizeof(unsigned);
}

template <typename T, int V, int U, bool ODD>
int launch_as(const struct kern_args *a, const struct plan *pl, struct kern_launch *info)
{
    const long gx = pl->rows_blocks * pl->ncg, gy = pl->slices;
    if (gx > 0x7fffffffL)
        return rk_error(RK_EUSAGE, "move: m = %ld needs more than 2^31 blocks", a->m);
    const dim3 grid((unsigned)gx, (unsigned)gy), block(MOVE_THREADS);
    move_kernel<T, V, U, ODD><<<grid, block, 0, a->stream>>>((const T *)a->a, (const T *)a->b,
                                                             (T *)a->c, a->m, a->n, a->k, pl->ncg,
                                                             pl->lines, (unsigned *)a->ws);
    RK_CUDA(cudaGetLastError());
    kern_launched(info, (const void *)move_kernel<T, V, U, ODD>, grid.x, grid.y, MOVE_THREADS, 1,
                  0);
    return RK_OK;
}

template <typename T, int V, bool ODD>
int launch_v(const struct kern_args *a, const struct plan *pl, struct kern_launch *info)
{
    switch (pl->u) {
    case 8:
        return launch_as<T, V, 8, ODD>(a, pl, info);
    case 4:
        return launch_as<T, V, 4, ODD>(a, pl, info);
    case 2:
        return launch_as<T, V, 2, ODD>(a, pl, info);
    default:
        return launch_as<T, V, 1, ODD>(a, pl, info);
    }
}

int launch_move(const struct kern_args *a, struct kern_launch *info)
{
    const struct plan pl = plan_of(a);
    if (pl.v == 1)
        return a->prec == KERNELS_FP64 ? launch_v<double, 1, true>(a, &pl, info)
                                       : launch_v<float, 1, true>(a, &pl, info);
    if (a->prec == KERNELS_FP64)
        return pl.odd ? launch_v<double, 2, true>(a, &pl, info)
                      : launch_v<double, 2, false>(a, &pl, info);
    return pl.odd ? launch_v<float, 4, true>(a, &pl, info)
                  : launch_v<float, 4, false>(a, &pl, info);
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
