/*
 * tsm2.cu - TSM2 and ISM2: a tall-and-skinny or large A (m x k) times a skinny B
 * (k x n), column-major as in the paper (004_dab40fe45003313a.txt §3 and §5). V0 and V1
 * (Alg. 1 and 2, no shared memory) are in tsm2_v01.cu.
 *
 *   tsm2_v2   Alg. 3: V1 plus a t1 x t2 tile of B in shared memory (column-major,
 *             §3.4: no bank conflicts), t3 elements of A loaded at a time.
 *   tsm2_v3   Alg. 4: V2 plus prefetching: the next t3 elements of A and the next
 *             tile of B are loaded while the current ones are used.
 *   ism2_opt1 Alg. 6: V3 run by m/tcf threads, each looping over rows with stride
 *             m/tcf (the same kernel as V3 with a smaller grid).
 *   ism2_opt2 Alg. 7: the B tile is loaded once and the threads sweep all rows,
 *             loading, updating and storing C, with C and A prefetched.
 * The kernels of ISM2 opt. 1 with B whole (apipe 2) and with rows in vectors (apipe 3) and of
 * opt. 2 are in ism2.cu, the FMA and
 * tensor-core stream kernels of V3 (apipe 3, 4) in tsm2_stream.cu, the device helpers they
 * share with this file in tsm2_common.cuh; this file resolves and launches all of them.
 *
 * H100 adaptation (not in the paper): V2/V3 give every thread a whole row, so
 * m = 10240 makes only 80 blocks of t1 = 128 threads for 132 SMs. Parameter
 * `ksplit` also splits k across blockIdx.y; each block writes its partial sums to
 * a workspace and a second, small kernel adds them in a fixed order and writes C
 * (both launches are timed). ksplit = 1 is the paper's algorithm exactly; ksplit = 0
 * (default) chooses the largest split that keeps the whole grid resident in one wave.
 *
 * t2 and t3 size register arrays, so they are template parameters instantiated
 * for 1, 2, 4, 8, 16; t1 (threads per block), ksplit and tcf are run-time values.
 */
#include "common.h"
#include "cp_async.cuh"
#include "internal.h"
#include "tsm2_common.cuh"

#include <cuda_runtime.h>

#include <stdio.h>

namespace
{

/* ---- V2, V3, ISM2 optimisation 1 ---------------------------------------- */

/*
 * One kernel for Alg. 3 (PREFETCH false) and Alg. 4 (PREFETCH true). Block b of
 * gridDim.x takes row tiles b, b + gridDim.x, ... (one tile for TSM2, tcf tiles
 * for ISM2 Alg. 6); blockIdx.y takes columns [ks*kchunk, (ks+1)*kchunk) of A.
 * With gridDim.y > 1, partial sums go to ws[(ks*n + col)*m + row] and
 * splitk_reduce_kernel adds them (see the file comment). Its register cap: tsm2_regs
 * (tsm2_common.cuh).
 */
template <typename T, int T2, int T3, bool PREFETCH>
__global__ void __maxnreg__((tsm2_regs<T, T2, T3>()))
    tsm2_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m, long n,
                long k, long kchunk, T *__restrict__ ws)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *Bs = reinterpret_cast<T *>(kern_smem); /* currB: t1 x T2, column-major */
    const int t1 = blockDim.x;
    const int tid = threadIdx.x;
    const int ks = blockIdx.y;
    const int nks = gridDim.y;
    const long kbeg = ks * kchunk;
    const long kend = min(k, kbeg + kchunk);

    for (long tile = blockIdx.x; tile * t1 < m; tile += gridDim.x) {
        const long row = tile * t1 + tid;
        /* Rows past m read the last row (valid memory) and store nothing. */
        const T *arow = A + min(row, m - 1);

        for (long p = 0; p < n; p += T2) {
            T c[T2];
#pragma unroll
            for (int q = 0; q < T2; q++)
                c[q] = T(0);

            if constexpr (!PREFETCH) {
                for (long j = kbeg; j < kend; j += t1) {
                    T b[T2];
                    __syncthreads();
                    ldb_row<T, T2>(b, B, j, kend, p, n, k, tid);
                    stb_row<T, T2>(Bs, b, t1, tid);
                    __syncthreads();
                    if (j + t1 <= kend) {
#pragma unroll 1
                        for (int l = 0; l < t1; l += T3) {
                            T a[T3];
                            lda_n<T, T3, false>(a, arow, j + l, kend, m);
                            fma_tile<T, T2, T3>(c, a, Bs + l, t1);
                        }
                    } else {
                        const int lend = (int)(kend - j);
#pragma unroll 1
                        for (int l = 0; l < lend; l += T3) {
                            T a[T3];
                            lda_n<T, T3, true>(a, arow, j + l, kend, m);
                            fma_tile<T, T2, T3>(c, a, Bs + l, t1);
                        }
                    }
                }
            } else {
                /* Alg. 4 lines 13-19: pre-load the first tile of B and of A. */
                T curA[T3], nextA[T3], nextB[T2];
                if (kbeg < kend) {
                    ldb_row<T, T2>(nextB, B, kbeg, kend, p, n, k, tid);
                    stb_row<T, T2>(Bs, nextB, t1, tid);
                    lda_n<T, T3, true>(curA, arow, kbeg, kend, m);
                }
                for (long j = kbeg; j < kend; j += t1) {
                    const bool more = j + t1 < kend;
                    __syncthreads();
                    if (more) /* lines 21-25: the next tile of B into registers */
                        ldb_row<T, T2>(nextB, B, j + t1, kend, p, n, k, tid);
                    if (j + t1 + T3 <= kend) {
                        /* Interior tile: every prefetch below lies inside [kbeg, kend). */
#pragma unroll 1
                        for (int l = 0; l < t1; l += T3) {
                            lda_n<T, T3, false>(nextA, arow, j + l + T3, kend, m);
                            fma_tile<T, T2, T3>(c, curA, Bs + l, t1);
#pragma unroll
                            for (int x = 0; x < T3; x++)
                                curA[x] = nextA[x];
                        }
                    } else {
                        const int lend = (int)min((long)t1, kend - j);
#pragma unroll 1
                        for (int l = 0; l < lend; l += T3) {
                            lda_n<T, T3, true>(nextA, arow, j + l + T3, kend, m);
                            fma_tile<T, T2, T3>(c, curA, Bs + l, t1);
#pragma unroll
                            for (int x = 0; x < T3; x++)
                                curA[x] = nextA[x];
                        }
                    }
                    __syncthreads();
                    if (more) /* lines 40-42 */
                        stb_row<T, T2>(Bs, nextB, t1, tid);
                }
            }

            if (row < m) {
#pragma unroll
                for (int q = 0; q < T2; q++) {
                    if (p + q < n) {
                        if (nks == 1)
                            C[row + (p + q) * m] = c[q];
                        else
                            ws[((long)ks * n + p + q) * m + row] = c[q];
                    }
                }
            }
        }

        __syncthreads(); /* Bs is reused by the next row tile */
    }
}

/* ---- V3 and ISM2 opt. 1 with A prefetched through shared memory ---------- */

/*
 * H100 extension (parameter apipe = 1): the same algorithm as Alg. 4, but the next
 * groups of t3 elements of A are prefetched with cp.async into a ring of ASTAGES
 * stages in shared memory instead of into the nextA registers, so the loads in
 * flight no longer cost registers: three groups are in flight while one is used.
 * Each thread copies and later reads only its own row's elements (As[stage][x][tid]),
 * so A needs no barrier; cp.async.wait_group orders a thread's copies before its
 * reads. B is handled as in Alg. 4 (next tile prefetched into registers). The
 * stream of groups runs across row tiles (ISM2 Alg. 6), so with k = 8 or 16 the
 * pipeline stays full from one row to the next.
 */
constexpr int ASTAGES = KERNELS_TSM2_RING_STAGES;

/*
 * V = rows per thread (parameter rpt): 1 is the paper's mapping; 2 or 4 let one read
 * of B from shared memory serve V rows, which divides the shared-memory traffic that
 * bounds t2 = 16 (every thread of a warp reads the same t2 x t3 values of B per t3
 * elements of A) by V, and copy A V elements (up to 16 bytes) at a time when V
 * divides m.
 */
template <typename T, int T2, int T3, int V, int MAXREG = 255>
__global__ void __maxnreg__(MAXREG)
    tsm2_async_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                      long n, long k, long kchunk, T *__restrict__ ws, int ncb)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int t1 = blockDim.x;
    const int tid = threadIdx.x;
    const int rb = t1 * V;                    /* rows per row tile */
    T *Bs = reinterpret_cast<T *>(kern_smem); /* t1 x T2, column-major */
    T *As = Bs + t1 * T2;                     /* [ASTAGES][T3][rb] */
    const int ks = blockIdx.y;
    const int nks = gridDim.y;
    const long kbeg = ks * kchunk;
    const long kend = min(k, kbeg + kchunk);
    const int G = (int)((kend - kbeg + T3 - 1) / T3); /* groups of t3 columns per row tile */
    const long ntiles = (m + rb - 1) / rb;
    /* Column blocks (cblocks = ncb): the ncb blocks of a row tile are neighbours in x, so they
     * run at the same time and the second reads A from the L2 the first filled; block cb takes
     * the column tiles cb, cb + ncb, ... */
    const long bx = blockIdx.x / ncb, gdx = gridDim.x / ncb;
    const int cb = (int)(blockIdx.x % ncb);
    const long mine = bx < ntiles ? (ntiles - 1 - bx) / gdx + 1 : 0;
    const long items = mine * G; /* (row tile, group) pairs this block streams through */
    /* all V rows in one aligned copy of at most 16 bytes */
    constexpr bool VEC_OK = V > 1 && V * sizeof(T) <= 16;
    const bool pair_copy = VEC_OK && m % V == 0;

    for (long p = (long)cb * T2; p < n; p += (long)T2 * ncb) {
        /* Producer: the next (row tile, group) to copy, kept incrementally (no divisions). */
        long issued = 0, itile = bx;
        int ig = 0;
        auto issue = [&]() {
            if (issued < items) {
                const long row0 = itile * rb + (long)tid * V;
                const long c0 = kbeg + (long)ig * T3;
                const int valid = (int)min((long)T3, kend - c0); /* columns inside [kbeg, kend) */
                T *dst = As + (int)(issued & (ASTAGES - 1)) * T3 * rb + tid * V;
                if (V == 1 || pair_copy) {
                    constexpr int BYTES = VEC_OK ? V * sizeof(T) : sizeof(T);
                    const T *src = A + min(row0, m - V) + c0 * m;
#pragma unroll
                    for (int x = 0; x < T3; x++) {
                        /* past kend: zero-fill, read nothing (src stays a valid address) */
                        cp_async_elem<BYTES>(dst + x * rb, src, x < valid);
                        if (x + 1 < valid)
                            src += m;
                    }
                } else {
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        const T *src = A + min(row0 + v, m - 1) + c0 * m;
#pragma unroll
                        for (int x = 0; x < T3; x++) {
                            cp_async_elem<sizeof(T)>(dst + x * rb + v, src, x < valid);
                            if (x + 1 < valid)
                                src += m;
                        }
                    }
                }
                if (++ig == G) {
                    ig = 0;
                    itile += gdx;
                }
            }
            issued++;
            cp_async_commit(); /* empty groups keep wait_group's count uniform */
        };
#pragma unroll 1 /* unrolled, the three copies keep their addresses live: +50 registers */
        for (int i = 0; i < ASTAGES - 1; i++)
            issue();

        /* Consumer. */
        long tile = bx, cur_bt = -1, next_bt = -1;
        int g = 0;
        T c[V][T2], nextB[T2];
#pragma unroll 1
        for (long i = 0; i < items; i++) {
            const long bt = ((long)g * T3) / t1; /* tile of B holding this group's rows */
            if (g == 0) {
#pragma unroll
                for (int v = 0; v < V; v++)
#pragma unroll
                    for (int q = 0; q < T2; q++)
                        c[v][q] = T(0);
            }
            if (bt != cur_bt) { /* the same for every thread of the block */
                __syncthreads();
                if (bt == next_bt) {
                    stb_row<T, T2>(Bs, nextB, t1, tid);
                } else {
                    T b[T2];
                    ldb_row<T, T2>(b, B, kbeg + bt * t1, kend, p, n, k, tid);
                    stb_row<T, T2>(Bs, b, t1, tid);
                }
                __syncthreads();
                cur_bt = bt;
                next_bt = -1;
                if (kbeg + (bt + 1) * t1 < kend) { /* Alg. 4 lines 21-25 */
                    ldb_row<T, T2>(nextB, B, kbeg + (bt + 1) * t1, kend, p, n, k, tid);
                    next_bt = bt + 1;
                }
            }
            issue();
            cp_async_wait<ASTAGES - 1>();
            T a[V][T3];
            const T *src = As + (int)(i & (ASTAGES - 1)) * T3 * rb + tid * V;
#pragma unroll
            for (int x = 0; x < T3; x++) {
                if constexpr (V == 2 && sizeof(T) == 4) {
                    const float2 w = *reinterpret_cast<const float2 *>(src + x * rb);
                    a[0][x] = w.x;
                    a[1][x] = w.y;
                } else if constexpr (V == 2 && sizeof(T) == 8) {
                    const double2 w = *reinterpret_cast<const double2 *>(src + x * rb);
                    a[0][x] = w.x;
                    a[1][x] = w.y;
                } else if constexpr (V == 4 && sizeof(T) == 4) {
                    const float4 w = *reinterpret_cast<const float4 *>(src + x * rb);
                    a[0][x] = w.x;
                    a[1][x] = w.y;
                    a[2][x] = w.z;
                    a[3][x] = w.w;
                } else {
#pragma unroll
                    for (int v = 0; v < V; v++)
                        a[v][x] = src[x * rb + v];
                }
            }
            fma_tile_v<T, T2, T3, V>(c, a, Bs + ((long)g * T3 - bt * t1), t1);
            if (++g == G) {
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const long row = tile * rb + (long)tid * V + v;
                    if (row < m) {
#pragma unroll
                        for (int q = 0; q < T2; q++) {
                            if (p + q < n) {
                                if (nks == 1)
                                    C[row + (p + q) * m] = c[v][q];
                                else
                                    ws[((long)ks * n + p + q) * m + row] = c[v][q];
                            }
                        }
                    }
                }
                g = 0;
                tile += gdx;
            }
        }
        cp_async_wait<0>();
        __syncthreads(); /* the ring and Bs are reused by the next pass */
    }
}

/*
 * Split k, second launch: C = sum over ks of the partial sums, in the fixed order
 * ks = 0, 1, ... (deterministic). ws[ks*mn + i] pairs with C[i] (i = col*m + row). Every
 * thread of the grid takes its own elements, with four independent sums so the loads
 * of one element are in flight together: a first version let the last block of each
 * row tile add them, a chain of n x ksplit dependent loads per thread that cost up to
 * a third of the kernel's time at n = 16. It is launched as a programmatic dependent
 * launch (sm_90): its blocks start while the main kernel's last blocks run and wait
 * here until the partial sums are complete and visible, which hides the launch gap.
 */
template <typename T>
__global__ void splitk_reduce_kernel(const T *__restrict__ ws, T *__restrict__ C, long mn, int nks)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* griddepcontrol.wait: the whole primary grid is done */
#endif
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < mn;
         i += (long)gridDim.x * blockDim.x) {
        T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
        int s = 0;
        for (; s + 4 <= nks; s += 4) {
            s0 += __ldcg(ws + (long)s * mn + i);
            s1 += __ldcg(ws + (long)(s + 1) * mn + i);
            s2 += __ldcg(ws + (long)(s + 2) * mn + i);
            s3 += __ldcg(ws + (long)(s + 3) * mn + i);
        }
        for (; s < nks; s++)
            s0 += __ldcg(ws + (long)s * mn + i);
        C[i] = (s0 + s1) + (s2 + s3);
    }
}

/* ---- host side ---------------------------------------------------------- */

/* Parameter positions in the registry (registry.c lists them in this order). */
/* P_SPLIT: ksplit (V2/V3) or tcf (ISM2); P_APIPE, P_RPT: V3 and ISM2 opt. 1 only. */
enum {
    P_T1 = 0,
    P_T2 = 1,
    P_T3 = 2,
    P_SPLIT = 3,
    P_APIPE = 4,
    P_RPT = 5,
    P_CB = KERN_TSM2_V3_CBLOCKS
};

template <typename T, bool PF>
using tsm2_fn = void (*)(const T *, const T *, T *, long, long, long, long, T *);
template <typename T>
using async_fn = void (*)(const T *, const T *, T *, long, long, long, long, T *, int);
template <typename T> using ism2_fn = void (*)(const T *, const T *, T *, long, long, long);

#define RK_T3_ROW(T, T2, PF)                                                                       \
    {                                                                                              \
        tsm2_kernel<T, T2, 1, PF>, tsm2_kernel<T, T2, 2, PF>, tsm2_kernel<T, T2, 4, PF>,           \
            tsm2_kernel<T, T2, 8, PF>, tsm2_kernel<T, T2, 16, PF>                                  \
    }

template <typename T, bool PF> tsm2_fn<T, PF> pick_tsm2(long t2, long t3)
{
    static const tsm2_fn<T, PF> table[5][5] = {RK_T3_ROW(T, 1, PF), RK_T3_ROW(T, 2, PF),
                                               RK_T3_ROW(T, 4, PF), RK_T3_ROW(T, 8, PF),
                                               RK_T3_ROW(T, 16, PF)};
    return table[ilog2_pow2(t2)][ilog2_pow2(t3)];
}

#define RK_ASYNC_ROW(T, T2, V)                                                                     \
    {                                                                                              \
        tsm2_async_kernel<T, T2, 1, V>, tsm2_async_kernel<T, T2, 2, V>,                            \
            tsm2_async_kernel<T, T2, 4, V>, tsm2_async_kernel<T, T2, 8, V>,                        \
            tsm2_async_kernel<T, T2, 16, V>                                                        \
    }
#define RK_ASYNC_V(T, V)                                                                           \
    {                                                                                              \
        RK_ASYNC_ROW(T, 1, V), RK_ASYNC_ROW(T, 2, V), RK_ASYNC_ROW(T, 4, V),                       \
            RK_ASYNC_ROW(T, 8, V), RK_ASYNC_ROW(T, 16, V)                                          \
    }

/*
 * Column tiles beyond the powers of two (kernels.h KERNELS_TSM2_XCOLS), for the cp.async
 * kernel only, fp32 only, each with one (t3, rpt): kern_tsm2_xcols_config() says which. At
 * most 128 registers: unbounded, nvcc gave them 125-168 (t2 = 6: 168, t2 = 7: 130), one block
 * of 256 threads per SM; 128 keeps two.
 */
#define RK_XCOLS_MAXREG 128
template <typename T, int T2> constexpr async_fn<T> xcol()
{
    if constexpr (sizeof(T) != 4)
        return nullptr;
    else
        return tsm2_async_kernel<T, T2, KERN_XCOLS_T3(T2), KERN_XCOLS_RPT(T2), RK_XCOLS_MAXREG>;
}

template <typename T> async_fn<T> pick_xcols(long t2)
{
    static const async_fn<T> table[] = {xcol<T, 3>(), xcol<T, 5>(),  xcol<T, 6>(),
                                        xcol<T, 7>(), xcol<T, 20>(), xcol<T, 24>()};
    static const int cols[] = {KERNELS_TSM2_XCOLS};
    static_assert(sizeof table / sizeof table[0] == sizeof cols / sizeof cols[0],
                  "one instantiation per KERNELS_TSM2_XCOLS value");
    for (int i = 0; i < (int)(sizeof cols / sizeof cols[0]); i++)
        if (cols[i] == t2)
            return table[i];
    return nullptr;
}

template <typename T> async_fn<T> pick_async(long t2, long t3, long v)
{
    static const async_fn<T> table[3][5][5] = {RK_ASYNC_V(T, 1), RK_ASYNC_V(T, 2),
                                               RK_ASYNC_V(T, 4)};
    if (ilog2_pow2(t2) < 0) { /* the extra column tiles: one (t3, rpt) each */
        long xt3, xv;
        if (!kern_tsm2_xcols_config(sizeof(T) == 8 ? KERNELS_FP64 : KERNELS_FP32, t2, &xt3, &xv) ||
            xt3 != t3 || xv != v)
            return nullptr;
        return pick_xcols<T>(t2);
    }
    return table[ilog2_pow2(v)][ilog2_pow2(t2)][ilog2_pow2(t3)];
}

enum variant { V2, V3, OPT1, OPT2 };

/* A through the cp.async ring (apipe = 1: V3 and ISM2 opt. 1). */
bool uses_ring(enum variant v, const long *p)
{
    return (v == V3 || v == OPT1) && kern_tsm2_ring(p[P_APIPE]);
}

/* V3 streaming A to registers, every column in one pass (tsm2_stream.cu): FMAs (apipe = 3)
 * or tensor cores (apipe = 4, uses_dmma: fp64 DMMA, fp32 3xTF32). */
bool uses_stream(enum variant v, const long *p)
{
    return v == V3 && kern_tsm2_streams_a(p[P_APIPE]);
}
bool uses_dmma(enum variant v, const long *p)
{
    return v == V3 && kern_tsm2_dmma(p[P_APIPE]);
}

/* Tensor cores, one tile a warp, k within one stage: the row-walking kernels (ISM2's shapes). */
static bool tc_rows(const struct kern_args *a, const long *p, enum variant v)
{
    return uses_dmma(v, p) && p[P_RPT] == 2 && a->k > 0 && a->k <= KERN_TSM2_STREAM_KC &&
           p[P_SPLIT] <= 1; /* k whole: no split */
}

long tile_rows(const long *p, enum variant v);

/* The grid of the row-walking kernels: a block per row tile (t1 / 32 tiles of 16 rows), at
 * most KERN_TSM2_ROWS_BLOCKS a SM (their warps walk the rest). */
static long tc_rows_blocks(const struct kern_args *a, const long *p)
{
    const long blocks = kern_ceil_div(a->m, tile_rows(p, V3));
    const long cap = KERN_TSM2_ROWS_BLOCKS * (long)a->dev->sm_count;
    return blocks < cap ? blocks : cap;
}

/* How fp64's row walk gets A (kern_tsm2_tc_rows_kernel's ring): KERN_TSM2_RING_BULK from
 * KERN_TSM2_BULK_ROWS rows where m is even (every column 16-byte aligned) and its shared memory
 * fits; else through each warp's cp.async ring where every warp walks at least as many tiles as
 * the ring holds (else its prologue and the shared memory that limits resident warps cost more
 * than it gains; docs/perf-log.md) and the ring fits; else in registers. */
static int rows_ring(const struct kern_args *a, const long *p)
{
    const long t1 = p[P_T1], tiles = kern_ceil_div(a->m, 16);
    const size_t optin = (size_t)a->dev->smem_per_block_optin_bytes;
    if (a->prec != KERNELS_FP64 || t1 < 32)
        return KERN_TSM2_RING_NONE;
    if (a->m >= KERN_TSM2_BULK_ROWS && a->m % 2 == 0 && a->k <= KERN_TSM2_BULK_MAXK &&
        kern_tsm2_tc_rows_smem(a->prec, p[P_T2], a->k, t1, KERN_TSM2_RING_BULK) <= optin)
        return KERN_TSM2_RING_BULK;
    if (tiles >= KERN_TSM2_RING_STAGES * tc_rows_blocks(a, p) * (t1 / 32) &&
        kern_tsm2_tc_rows_smem(a->prec, p[P_T2], a->k, t1, KERN_TSM2_RING_ASYNC) <= optin)
        return KERN_TSM2_RING_ASYNC;
    return KERN_TSM2_RING_NONE;
}

/* ISM2 opt. 1 with B whole in shared memory (apipe = 2). */
bool uses_rows(enum variant v, const long *p)
{
    return v == OPT1 && p[P_APIPE] == 2;
}

/* ISM2 opt. 1 with rows in vectors (apipe = 3): ism2.cu's ism2_vec_kernel. */
bool uses_vec(enum variant v, const long *p)
{
    return v == OPT1 && kern_ism2_vec(p[P_APIPE]);
}

/* Rows of A per thread: rpt with the ring, the stream or ISM2's vectors, else one. */
long rows_per_thread(enum variant v, const long *p)
{
    return v == V3 || v == OPT1 ? kern_tsm2_rows(p[P_APIPE], p[P_RPT]) : 1;
}

/* Column blocks of V3 (internal.h KERN_TSM2_V3_CBLOCKS; 1: the column tiles are passes inside
 * a block). */
long col_blocks(enum variant v, const long *p)
{
    return v == V3 && p[P_CB] > 1 ? p[P_CB] : 1;
}

/* apipe = 2 (ISM2 opt. 1 only): B whole in shared memory, k rounded up to t3, n to t2. */
size_t rows_smem(const struct kern_args *a, const long *p)
{
    const long kp = (a->k + p[P_T3] - 1) / p[P_T3] * p[P_T3];
    const long np = (a->n + p[P_T2] - 1) / p[P_T2] * p[P_T2];
    return (size_t)kp * (size_t)np * kern_elem(a->prec);
}

/* The vector kernel's shared memory: B, t3 x n. */
size_t vec_smem(const struct kern_args *a, const long *p)
{
    return (size_t)p[P_T3] * (size_t)(a->n > 0 ? a->n : 1) * kern_elem(a->prec);
}

/* ... and with AHEAD its slots behind B: t1 threads x t3 + 1 vectors of 16 bytes (ism2.cu). */
size_t ahead_smem(const struct kern_args *a, const long *p)
{
    return (vec_smem(a, p) + 15) / 16 * 16 + (size_t)p[P_T1] * (size_t)(p[P_T3] + 1) * 16;
}

/* The kernel a configuration runs and its dynamic shared memory (B tile, A ring). */
const void *variant_func(const struct kern_args *a, const long *p, enum variant v, size_t *smem)
{
    const long t1 = p[P_T1], t2 = p[P_T2], t3 = p[P_T3];
    const bool async = uses_ring(v, p);
    const size_t e = kern_elem(a->prec);
    const long rpt = rows_per_thread(v, p);
    if (tc_rows(a, p, v)) {
        const int ring = rows_ring(a, p);
        *smem = kern_tsm2_tc_rows_smem(a->prec, t2, a->k, t1, ring);
        return kern_tsm2_tc_rows_kernel(a->prec, t2, ring, a->m);
    }
    if (uses_dmma(v, p)) {
        *smem = kern_tsm2_tc_smem(a->prec, t2);
        return kern_tsm2_tc_kernel(a->prec, t2, p[P_RPT], a->m);
    }
    if (uses_stream(v, p)) {
        *smem = kern_tsm2_stream_smem(a->prec, t2);
        return kern_tsm2_stream_kernel(a->prec, t2);
    }
    if (uses_rows(v, p)) {
        *smem = rows_smem(a, p);
        return kern_ism2_rows_kernel(a->prec, t2, t3);
    }
    if (uses_vec(v, p) && kern_ism2_outer(p[P_APIPE])) { /* B read through the L1 */
        *smem = 0;
        return kern_ism2_outer_kernel(a->prec, a->m, a->k);
    }
    if (uses_vec(v, p)) { /* B whole, t3 x n */
        *smem = vec_smem(a, p);
        if (kern_ism2_vec_ahead(a, p)) {
            *smem = ahead_smem(a, p);
            return kern_ism2_vec_kernel(a->prec, t3, KERN_ISM2_VEC_AHEAD);
        }
        return kern_ism2_vec_kernel(a->prec, t3,
                                    kern_ism2_vec_layout(a->prec, a->m, a->n, a->k, p[P_T1]));
    }
    *smem = (size_t)t1 * (size_t)t2 * e + (async ? (size_t)ASTAGES * t3 * t1 * rpt * e : 0);
    if (a->prec == KERNELS_FP64) {
        if (v == OPT2)
            return kern_ism2_opt2_kernel(a->prec, t2, t3);
        if (async)
            return (const void *)pick_async<double>(t2, t3, rpt);
        return v == V2 ? (const void *)pick_tsm2<double, false>(t2, t3)
                       : (const void *)pick_tsm2<double, true>(t2, t3);
    }
    if (v == OPT2)
        return kern_ism2_opt2_kernel(a->prec, t2, t3);
    if (async)
        return (const void *)pick_async<float>(t2, t3, rpt);
    return v == V2 ? (const void *)pick_tsm2<float, false>(t2, t3)
                   : (const void *)pick_tsm2<float, true>(t2, t3);
}

/* Rows of A per row tile: t1 threads times rows per thread (rpt, cp.async kernel only); on
 * the tensor cores, the rows of a warp's tiles times the warps. */
long tile_rows(const long *p, enum variant v)
{
    if (uses_dmma(v, p))
        return p[P_T1] / 32 * kern_tsm2_tc_warp_rows(p[P_RPT]);
    return p[P_T1] * rows_per_thread(v, p);
}

/*
 * Split of k for V2/V3: kchunk is a multiple of t3, so that the split asked for is the
 * split that runs. It was a multiple of t1 (whole tiles of B per block), which at k =
 * 10240 and t1 = 256 turned an asked 13 into 10: 100 blocks for 132 SMs (fp32 n = 16,
 * rpt = 4: 174 us). The kernels take any chunk: a block's last tile of B is partial.
 */
void split_k(const struct kern_args *a, const long *p, long *kchunk, long *nks)
{
    long want = p[P_SPLIT] < 1 ? 1 : p[P_SPLIT];
    long t3 = p[P_T3] < 1 ? 1 : p[P_T3];
    *kchunk = kern_ceil_div(kern_ceil_div(a->k, want), t3) * t3;
    *nks = kern_ceil_div(a->k, *kchunk);
}

/*
 * The split of k of the stream kernels. Every block streams the same bytes, so a grid of
 * gx x s blocks runs in ceil(gx s / resident) waves whose last may be part empty: the largest
 * split that keeps every block resident (s0, the ring's rule) leaves a fraction of the block
 * slots idle, and a split that fills them better can run faster despite writing and reading
 * s partial sums of C. Measured on an H100 (fp64 DMMA, n = 32, 10 repetitions of each split
 * 1-12, m = k = 10240, 20480, 40960), at equal busy slots each further slice cost about 1 % of
 * the time (more than its partial sums' bytes) and the busy fraction set the rest: at m =
 * 20480, s0 = 2 (0.81 of the slots busy) ran at 0.95 of the copy ceiling, 3 (0.61) at 0.77, 7
 * (0.94) at 0.98. So: s0, unless a split of at most 8 keeps at least 0.10 more of the slots
 * busy and costs less, by busy slots and 1 % a slice.
 */
long stream_split(long gx, long resident, long s0, long max_split)
{
    auto busy = [&](long s) {
        const double blocks = (double)gx * (double)s;
        return blocks / (ceil(blocks / (double)resident) * (double)resident);
    };
    auto cost = [&](long s) { return (1.0 + 0.01 * (double)s) / busy(s); };
    long best = s0;
    for (long s = 1; s <= max_split && s <= 8; s++)
        if (busy(s) >= busy(s0) + 0.10 && cost(s) < cost(best))
            best = s;
    return best;
}

int resolve_common(const struct kern_args *a, long *p, enum variant v, char *why, size_t len)
{
    /* Defaults chosen from sweeps on an H100 (docs/perf-notes.md "kernels"). */
    const bool wide = a->m > 0 && a->n > 8; /* t2 = 16: registers and shared memory are tight */
    long xt3 = 0, xrpt = 0;
    if (uses_stream(v, p)) {
        if (a->m > 0 && p[P_T2] == 0)
            p[P_T2] = a->n; /* every column in one pass */
        /* rows per thread: a vector (FMAs); on the tensor cores two a tile of 16 rows, one or
         * two tiles a warp (tile_rows) */
        if (uses_dmma(v, p) && p[P_RPT] != 0 && p[P_RPT] != 2 && p[P_RPT] != 4)
            return kern_why(why, len,
                            "rpt is 2 or 4 with apipe = 4 (one or two tiles of 16 rows a warp), "
                            "not %ld",
                            p[P_RPT]);
        const long r = uses_dmma(v, p) ? (p[P_RPT] ? p[P_RPT] : kern_tsm2_tc_rpt(a->prec))
                       : p[P_T2] > 0   ? kern_tsm2_stream_rows(a->prec, p[P_T2])
                                       : 0;
        if (p[P_T2] != 0 && (p[P_T2] < 1 || p[P_T2] > KERN_TSM2_STREAM_MAXN))
            return kern_why(why, len, "t2 must be 1 to %d with apipe = 3, not %ld",
                            KERN_TSM2_STREAM_MAXN, p[P_T2]);
        if (p[P_T3] != 0 && p[P_T3] != KERN_TSM2_STREAM_T3)
            return kern_why(why, len, "t3 is %d with apipe = 3 (the split's granularity), not %ld",
                            KERN_TSM2_STREAM_T3, p[P_T3]);
        if (r && p[P_RPT] != 0 && p[P_RPT] != r)
            return kern_why(why, len, "rpt is %ld with apipe = 3 in this precision, not %ld", r,
                            p[P_RPT]);
        if (p[P_CB] > 1)
            return kern_why(why, len, "cblocks = %ld needs apipe = 1", p[P_CB]);
        if (a->m > 0 && p[P_T2] < a->n)
            return kern_why(why, len,
                            "t2 = %ld does not cover n = %ld: apipe = 3 runs every column "
                            "in one pass",
                            p[P_T2], a->n);
        p[P_T3] = KERN_TSM2_STREAM_T3;
        p[P_RPT] = r;
        if (p[P_T1] == 0)
            p[P_T1] = 128;
    }
    if (uses_vec(v, p)) {
        /* every column in one pass, K = t3 the least instantiated K covering k, rows in vectors */
        const long vr = kern_ism2_vec_rows(a->prec);
        if (a->m > 0 && a->k > KERN_ISM2_VEC_MAXK)
            return kern_why(why, len, "apipe = 3 (rows in vectors) needs k <= %d, not %ld",
                            KERN_ISM2_VEC_MAXK, a->k);
        if (kern_ism2_outer(p[P_APIPE]) &&
            ((a->m > 0 && (a->k > 2 || (p[P_T3] != 0 && p[P_T3] != a->k))) || p[P_T3] > 2))
            return kern_why(why, len,
                            "apipe = %d (an outer product or rank-2 update) needs k <= 2 and t3 = "
                            "k, not k = %ld, t3 = %ld",
                            KERN_ISM2_OUTER, a->k, p[P_T3]);
        if (p[P_T3] != 0 &&
            (kern_ism2_vec_kernel(a->prec, p[P_T3], 0) == NULL || (a->m > 0 && p[P_T3] < a->k)))
            return kern_why(why, len,
                            "t3 with apipe = 3 is 1, 2, 3, 4, 6, 8, 12, 16, 24 or 32, at least k "
                            "and at most %d (all of a row at once), not %ld",
                            KERN_ISM2_VEC_MAXK, p[P_T3]);
        if (p[P_RPT] != 0 && p[P_RPT] != vr)
            return kern_why(why, len,
                            "rpt is %ld with apipe = 3 in this precision (a 16-byte "
                            "vector of rows), not %ld",
                            vr, p[P_RPT]);
        if (a->m > 0 && p[P_T2] > a->n)
            p[P_T2] = a->n; /* one slice: what runs */
        if (a->m > 0 && p[P_T3] == 0)
            p[P_T3] = kern_ism2_vec_k(a->k);
        p[P_RPT] = vr;
        if (p[P_T1] == 0) /* within 3 % of 256 at 10^6-10^7 rows, up to 6 % faster at 10^5 */
            p[P_T1] = 128;
    }
    const bool xcols = kern_tsm2_xcols_config(a->prec, p[P_T2], &xt3, &xrpt);
    if (xcols && uses_ring(v, p)) { /* an extra column tile: its own t3 and rpt */
        if (p[P_T3] == 0)
            p[P_T3] = xt3;
        if (p[P_RPT] == 0)
            p[P_RPT] = xrpt;
    }
    if (p[P_T1] == 0) /* V3 through the cp.async ring: 256 threads for fp32, and for fp64 at
                         n > 8; else 128 */
        p[P_T1] = (v == V3 && p[P_APIPE] == 1 && (a->prec == KERNELS_FP32 || wide)) ? 256 : 128;
    if (p[P_T3] == 0 && a->m > 0) {
        if (v == V3) /* n > 8: fp64, a ring of 16 columns leaves one block per SM; fp32 with
                        rpt = 4, the best of t3 = 4, 8, 16 on the three n = 16 shapes */
            p[P_T3] = wide ? 8 : 16;
        else if (uses_rows(v, p)) /* groups of 8: within 3% of the best t3 on
                                   * every ism2-suite shape, both precisions
                                   * (a sweep, docs/perf-notes.md) */
            p[P_T3] = a->k <= 4 ? 4 : 8;
        else /* ISM2: a row's k <= 16 elements at once; fp64 at k > 8 in groups of 8 (the
              * roofkit tune sweeps found t3 = 8 best at m = 1e5, 1e6 and 1e7,
              * 5-11% faster than the 4 used before: examples/tune-h100.md) */
            p[P_T3] = a->k <= 4 ? 4 : a->k <= 8 ? 8 : a->prec == KERNELS_FP64 ? 8 : 16;
    }
    if (v == V3 || v == OPT1) {
        if (!uses_rows(v, p) && !uses_stream(v, p) && !uses_vec(v, p) && p[P_APIPE] != 0 &&
            p[P_APIPE] != 1)
            return kern_why(why, len,
                            v == OPT1 ? "apipe must be 0 (registers, Alg. 4), 1 (cp.async ring), "
                                        "2 (B whole in shared memory), 3 (rows in vectors) or 5 "
                                        "(k <= 2: the outer-product kernel)"
                                      : "apipe must be 0 (registers, Alg. 4), 1 (cp.async ring), "
                                        "3 (A streamed to registers, every column at once) or 4 "
                                        "(the same on tensor cores: fp64 DMMA, fp32 3xTF32)");
        if (p[P_RPT] != 0 && p[P_RPT] != 1 && p[P_RPT] != 2 && p[P_RPT] != 4)
            return kern_why(why, len, "rpt must be 1, 2 or 4, not %ld", p[P_RPT]);
        if (p[P_RPT] > 1 && !kern_tsm2_ring(p[P_APIPE]) && !uses_stream(v, p) && !uses_vec(v, p))
            /* rows per thread: the ring and the stream only */
            return kern_why(why, len, "rpt = %ld needs apipe = 1", p[P_RPT]);
        if (v == V3 && p[P_CB] > 1 && !kern_tsm2_ring(p[P_APIPE]))
            return kern_why(why, len, "cblocks = %ld needs apipe = 1", p[P_CB]);
        if (p[P_RPT] == 0 && a->m > 0) /* TSM2: two rows per thread, four for fp32 at n > 8
                                           (a sweep: 87.9 -> 96.2% of the copy
                                           ceiling at m = 20480); ISM2: one */
            p[P_RPT] =
                (p[P_APIPE] == 1 && v == V3) ? (a->prec == KERNELS_FP32 && a->n > 8 ? 4 : 2) : 1;
    }
    const long t1 = p[P_T1], t3 = p[P_T3];
    if (a->m > 0 && p[P_T2] == 0 && !uses_vec(v, p))
        p[P_T2] = kernels_tsm2_cols(a->n); /* the smallest instantiated t2 covering n */
    const bool wide_rows = (p[P_T2] == 24 || p[P_T2] == 32) && uses_rows(v, p);
    if (wide_rows && p[P_T3] != 0 && p[P_T3] != 4 && p[P_T3] != 8 && p[P_T3] != 16)
        return kern_why(why, len, "t2 = %ld with apipe = 2 needs t3 = 4, 8 or 16", p[P_T2]);
    if (p[P_T2] != 0 && ilog2_pow2(p[P_T2]) < 0 && !wide_rows && !uses_stream(v, p) &&
        !uses_vec(v, p)) {
        if (!xcols || !uses_ring(v, p))
            return kern_why(why, len,
                            "t2 must be 1, 2, 4, 8 or 16, not %ld (the other column tiles "
                            "need tsm2_v3 with apipe = 1)",
                            p[P_T2]);
        if ((p[P_T3] != 0 && p[P_T3] != xt3) || (p[P_RPT] != 0 && p[P_RPT] != xrpt))
            return kern_why(why, len, "t2 = %ld is instantiated with t3 = %ld and rpt = %ld only",
                            p[P_T2], xt3, xrpt);
    }
    if (t1 % 32 != 0 || t1 < 32 || t1 > 1024)
        return kern_why(why, len, "t1 must be a multiple of 32 between 32 and 1024, not %ld", t1);
    if (t3 != 0 && ilog2_pow2(t3) < 0 && !uses_vec(v, p)) /* 0: chosen with the shape */
        return kern_why(why, len, "t3 must be 1, 2, 4, 8 or 16, not %ld", t3);
    if (t3 != 0 && t1 % t3 != 0 && !uses_vec(v, p)) /* the vector kernel's t3 is its K */
        return kern_why(why, len, "t1 (%ld) must be a multiple of t3 (%ld)", t1, t3);
    if (a->m <= 0)
        return RK_OK; /* no shape yet: static checks only */
    if (uses_rows(v, p) && rows_smem(a, p) > (size_t)a->dev->smem_per_block_optin_bytes)
        p[P_APIPE] = 1; /* B does not fit whole: the cp.async ring, stored as what ran */

    size_t smem;
    const void *f = variant_func(a, p, v, &smem);
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, f) != cudaSuccess)
        return kern_why(why, len, "cannot query the kernel's attributes");
    if (t1 > attr.maxThreadsPerBlock)
        return kern_why(why, len,
                        "t1 = %ld exceeds the %d threads per block this kernel allows "
                        "with its %d registers",
                        t1, attr.maxThreadsPerBlock, attr.numRegs);
    if (smem > (size_t)a->dev->smem_per_block_optin_bytes)
        return kern_why(why, len, "the tiles need %zu bytes of shared memory per block (limit %d)",
                        smem, a->dev->smem_per_block_optin_bytes);
    int per_sm = 0;
    if (kern_smem_optin(f, smem, a->dev) != RK_OK ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)t1, smem) != cudaSuccess ||
        per_sm < 1)
        return kern_why(why, len,
                        "a block of %ld threads with %zu bytes of shared memory does not "
                        "fit on an SM",
                        t1, smem);
    const long resident = (long)per_sm * a->dev->sm_count; /* blocks in one full wave */

    if (v == V3 && p[P_CB] < 1)
        p[P_CB] = 1;              /* 0: one block takes every column tile, as the paper's */
    if (v == V3 && p[P_CB] > 1) { /* no more column blocks than column tiles: what ran */
        const long tiles = kern_ceil_div(a->n, p[P_T2]);
        if (p[P_CB] > tiles)
            p[P_CB] = tiles;
    }
    if (v == V2 || v == V3) {
        if (p[P_SPLIT] == 0) {
            /* The largest split that keeps every block resident at once. */
            long gx = kern_ceil_div(a->m, tile_rows(p, v)) * col_blocks(v, p);
            long want = resident / gx;
            long max_split = kern_ceil_div(a->k, uses_stream(v, p) ? KERN_TSM2_STREAM_KC : t1);
            /* at least one tile (stream: one stage) of B per block */
            if (want > max_split)
                want = max_split;
            p[P_SPLIT] = want < 1 ? 1 : want;
            if (uses_stream(v, p))
                p[P_SPLIT] = stream_split(gx, resident, p[P_SPLIT], max_split);
        }
        long kchunk, nks;
        split_k(a, p, &kchunk, &nks);
        p[P_SPLIT] = nks; /* store what actually ran */
    } else if (p[P_SPLIT] == 0 && uses_rows(v, p)) {
        /* tcf = 2 (two rows per thread, the second prefetched while the first is used)
         * once every SM has 8 row tiles: at t1 = 128, t3 = 8 within 3% of the best tcf of 1..64
         * on all 12 ism2-suite shapes (a sweep, docs/perf-notes.md; 004 §6 chose 1-8 on a
         * V100); below, 1 where a row is small (n k <= 64: the ism2-grid sweeps at m = 1e5
         * found tcf 2 3-8 % slower there, and up to 5 % faster on wider rows). */
        p[P_SPLIT] = a->m >= 8 * p[P_T1] * a->dev->sm_count || a->n * a->k > 64 ? 2 : 1;
    } else if (p[P_SPLIT] == 0) {
        /* tcf: the fewest threads that still fill every SM in one wave, at most 16 rows
         * per thread (004 §5.2 leaves tcf to offline profiling; this rule was chosen
         * from a sweep of tcf = 1..300 on an H100). */
        long tcf = kern_ceil_div(a->m, resident * tile_rows(p, v));
        /* the vector kernel on rows of 1-2 (t3 <= 2): at least two vectors a thread (with the
         * slices below, on an H100 fp32 10^5 x 32 x 1 8.29 -> 7.44 us, fp64 11.63 -> 10.66;
         * fp32 3 x 10^5 x 24 x 1 13.12 -> 12.22, fp64 25.57 -> 24.27) */
        if (uses_vec(v, p) && p[P_T3] <= 2 && tcf < 2 && !kern_ism2_outer(p[P_APIPE]))
            tcf = 2;
        /* fp64 at t3 <= 2 no more than 8 (kbench, 3 x 10^6 and 10^7 rows x 4-32 columns: 0.86-0.96
         * of 16's time from 16 columns, 0.92-0.99 at 4) */
        if (uses_vec(v, p) && p[P_T3] <= 2 && a->prec == KERNELS_FP64 && tcf > 8)
            tcf = 8;
        /* the vector kernel from t3 = 3, where one wave would take 8 rounds of its U vectors or
         * more: one vector a thread, many waves. A thread's round is its loads, then its FMAs,
         * then its stores; more threads interleave those phases where one thread's rounds
         * cannot (kbench on an H100, tcf 1 against the one-wave rule capped at 16: fp32 10^7 x
         * 4-32 x 4-32 0.91-0.99 of the time, 24 x 24 752 -> 690 us; 3 x 10^6 0.96-0.98 from k =
         * 8; fp64 10^6 x 4-32 x 24-32 0.96-0.99; below 8 rounds, at 10^6 fp32, up to 1.09x
         * slower) */
        if (uses_vec(v, p) && p[P_T3] > 2 && !kern_ism2_outer(p[P_APIPE]) &&
            tcf >= 8 * kern_ism2_vec_inflight(p[P_T3]))
            tcf = 1;
        /* the outer product: one vector a thread, the grid covering m (on an H100, kbench at
         * 10^5-10^7 rows x 8-32 x 1, both precisions: tcf 1 the fastest of 1, 2, 4, 8 on 22 of
         * 24 shapes, the others within 1 %; fp64 10^7 x 32 x 1 915 us against 924-933) */
        if (kern_ism2_outer(p[P_APIPE]))
            tcf = 1;
        p[P_SPLIT] = tcf < 1 ? 1 : tcf > 16 ? 16 : tcf;
    }
    if (uses_vec(v, p)) {
        /* Slices of the columns where the rows leave fewer than VEC_THREADS_SM threads an SM
         * (fp32 10^5 rows: 25000 threads, one vector each): enough slices for 2 VEC_THREADS_SM
         * an SM, each of at least VEC_SLICE_COLS columns, at most 4 for fp32 rows of 1-2 and 2
         * otherwise (each slice reads its rows of A again, from the L2); then t2 as the slices
         * run it (n = 24, t2 7: 4 slices of 6). On an H100 (kbench, 10^5 and 3 x 10^5 rows x
         * 8-32 columns x k 1-32, 1-4 slices, tcf 1-2): fp32 k = 1 best in 4 slices of two
         * vectors a thread, fp64 k = 1 in 2; from k = 4 two slices were best or within 4 % of
         * it, three 3-40 % slower (10^5 x 16 x 24: 11.22 us in 2, 13.84 in 3; x 32 x 16: 11.01,
         * 11.54); fp64 at one vector a thread (50000 threads) slower in 2 at every k >= 2. */
        const long VEC_THREADS_SM = 256, VEC_SLICE_COLS = 4;
        if (p[P_T2] == 0) {
            const long threads = kern_ceil_div(a->m, tile_rows(p, v) * p[P_SPLIT]) * p[P_T1];
            const long sm = a->dev->sm_count;
            const long most = kern_ceil_div(a->n, VEC_SLICE_COLS);
            long want = 1;
            if (kern_ism2_outer(p[P_APIPE])) {
                /* the outer product below 2 VEC_THREADS_SM threads an SM: 2 to 4 slices, about
                 * 12 columns each (same sweep: at 10^5 rows 2 slices best at 8-24 columns, 3 at
                 * 32; at 10^6-10^7 rows, with 250000 threads or more, one within 2 %) */
                if (threads < 2 * VEC_THREADS_SM * sm) {
                    want = kern_ceil_div(a->n, 12);
                    want = want < 2 ? 2 : want > 4 ? 4 : want;
                }
            } else {
                const long cap = p[P_T3] <= 2 && a->prec == KERNELS_FP32 ? 4 : 2;
                if (threads < VEC_THREADS_SM * sm)
                    want = kern_ceil_div(2 * VEC_THREADS_SM * sm, threads);
                want = want > cap ? cap : want;
            }
            p[P_T2] = kern_ceil_div(a->n, want > most ? most : want);
        }
        p[P_T2] = kern_ceil_div(a->n, kern_ceil_div(a->n, p[P_T2]));
    }
    return RK_OK;
}

int resolve_v2(const struct kern_args *a, long *p, char *why, size_t len)
{
    return resolve_common(a, p, V2, why, len);
}
int resolve_v3(const struct kern_args *a, long *p, char *why, size_t len)
{
    return resolve_common(a, p, V3, why, len);
}
int resolve_opt1(const struct kern_args *a, long *p, char *why, size_t len)
{
    return resolve_common(a, p, OPT1, why, len);
}
int resolve_opt2(const struct kern_args *a, long *p, char *why, size_t len)
{
    return resolve_common(a, p, OPT2, why, len);
}

/* Workspace of split-k: partial sums, then one counter per row tile. */
size_t ws_partials(const struct kern_args *a)
{
    long kchunk, nks;
    split_k(a, a->p, &kchunk, &nks);
    if (nks <= 1)
        return 0;
    return (size_t)nks * (size_t)a->n * (size_t)a->m * kern_elem(a->prec);
}

size_t workspace_split(const struct kern_args *a)
{
    return ws_partials(a);
}

int launch_variant(const struct kern_args *a, struct kern_launch *info, enum variant v)
{
    const long t1 = a->p[P_T1], t2 = a->p[P_T2], t3 = a->p[P_T3];
    size_t smem;
    const void *f = variant_func(a, a->p, v, &smem);
    const bool async = uses_ring(v, a->p);
    /* ism2.cu's kernels, with their (A, B, C, m, n, k) signature */
    const bool ism2_kernel = v == OPT2 || uses_rows(v, a->p) || uses_vec(v, a->p);
    const long rpt = rows_per_thread(v, a->p);
    long gx, nks = 1, kchunk = a->k;
    void *ws = NULL;
    int rc;

    const int ncb = (int)col_blocks(v, a->p);
    if (v == V2 || v == V3) {
        gx = kern_ceil_div(a->m, tile_rows(a->p, v)) * ncb;
        split_k(a, a->p, &kchunk, &nks);
        if (nks > 1)
            ws = a->ws;
        if (tc_rows(a, a->p, v))
            gx = tc_rows_blocks(a, a->p); /* its warps walk the rest */
    } else {
        gx = kern_ceil_div(a->m, tile_rows(a->p, v) * a->p[P_SPLIT]);
    }
    if (gx > 0x7fffffffL)
        return rk_error(RK_EUSAGE, "grid of %ld blocks is too large; raise t1 or tcf", gx);
    rc = kern_smem_optin(f, smem, a->dev);
    if (rc != RK_OK)
        return rc;
    if (v == V3 && tc_rows(a, a->p, v)) {
        /* One wave where each warp then walks at most ROWS_WAVE_TILES tiles: the blocks that fit
         * at once, their warps walking the rest, so that no block stages B (and splits it into
         * TF32 parts) for a second or third wave of a tile or two a warp. On an H100 that took
         * 10^5 x 32 x 12-32 (t1 256) from 0.73-0.90 of cuBLAS to 0.84-1.04 in fp32 and from
         * 1.03-1.21 to 1.13-1.30 in fp64; with 20 tiles a warp (fp32 10^6-10^7 rows) one wave
         * was 5-12 % slower than KERN_TSM2_ROWS_BLOCKS blocks an SM (docs/perf-log.md). */
        const long ROWS_WAVE_TILES = 8;
        int per_sm = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)t1, smem) !=
                cudaSuccess ||
            per_sm < 1)
            return rk_error(RK_ECUDA,
                            "the occupancy of the row-walking kernel (t1 %ld, %zu bytes "
                            "of shared memory) could not be read",
                            t1, smem);
        const long resident = (long)per_sm * a->dev->sm_count;
        /* the bulk copies' kernel: always one wave, each block walking its block tiles, so
         * that its prologue (B, the barriers) is paid once a block (at 10^6 rows and 2112
         * blocks in 16 waves it was 2-14 % slower than the kernel with A in registers, one wave
         * 2-5 % faster) */
        if (gx > resident && (rows_ring(a, a->p) == KERN_TSM2_RING_BULK ||
                              kern_ceil_div(a->m, 16) <= ROWS_WAVE_TILES * resident * (t1 / 32)))
            gx = resident;
    }

    /* gridDim.y: split-k's slices of k, or the vector kernel's slices of C's columns */
    const long gy = uses_vec(v, a->p) ? kern_ceil_div(a->n, t2) : nks;
    dim3 grid((unsigned)gx, (unsigned)gy), block((unsigned)t1);
    if (a->prec == KERNELS_FP64) {
        const double *A = (const double *)a->a, *B = (const double *)a->b;
        double *C = (double *)a->c;
        if (uses_stream(v, a->p))
            ((async_fn<double>)f)<<<grid, block, smem, a->stream>>>(A, B, C, a->m, a->n, a->k,
                                                                    kchunk, (double *)ws, 1);
        else if (ism2_kernel)
            ((ism2_fn<double>)f)<<<grid, block, smem, a->stream>>>(A, B, C, a->m, a->n, a->k);
        else if (async)
            pick_async<double>(t2, t3, rpt)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (double *)ws, ncb);
        else if (v == V2)
            pick_tsm2<double, false>(t2, t3)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (double *)ws);
        else
            pick_tsm2<double, true>(t2, t3)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (double *)ws);
    } else {
        const float *A = (const float *)a->a, *B = (const float *)a->b;
        float *C = (float *)a->c;
        if (uses_stream(v, a->p))
            ((async_fn<float>)f)<<<grid, block, smem, a->stream>>>(A, B, C, a->m, a->n, a->k,
                                                                   kchunk, (float *)ws, 1);
        else if (ism2_kernel)
            ((ism2_fn<float>)f)<<<grid, block, smem, a->stream>>>(A, B, C, a->m, a->n, a->k);
        else if (async)
            pick_async<float>(t2, t3, rpt)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (float *)ws, ncb);
        else if (v == V2)
            pick_tsm2<float, false>(t2, t3)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (float *)ws);
        else
            pick_tsm2<float, true>(t2, t3)<<<grid, block, smem, a->stream>>>(
                A, B, C, a->m, a->n, a->k, kchunk, (float *)ws);
    }
    kern_launched(info, f, grid.x, grid.y, block.x, 1, smem);
    if ((rc = kern_check_launch(v == OPT2 ? "ism2_opt2" : "tsm2")) != RK_OK)
        return rc;
    if (nks > 1) {
        const long mn = a->m * a->n;
        const unsigned blocks = (unsigned)min(kern_ceil_div(mn, 256), 8L * a->dev->sm_count);
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(256);
        cfg.stream = a->stream;
        cfg.attrs = attr;
        cfg.numAttrs = a->dev->cc_major >= 9 ? 1 : 0; /* PDL needs sm_90 */
        const int parts = (int)nks;
        if (a->prec == KERNELS_FP64)
            RK_CUDA(cudaLaunchKernelEx(&cfg, splitk_reduce_kernel<double>, (const double *)ws,
                                       (double *)a->c, mn, parts));
        else
            RK_CUDA(cudaLaunchKernelEx(&cfg, splitk_reduce_kernel<float>, (const float *)ws,
                                       (float *)a->c, mn, parts));
        info->launches = 2;
        return kern_check_launch("tsm2 split-k reduction");
    }
    return RK_OK;
}

int launch_v2(const struct kern_args *a, struct kern_launch *info)
{
    return launch_variant(a, info, V2);
}
int launch_v3(const struct kern_args *a, struct kern_launch *info)
{
    return launch_variant(a, info, V3);
}
int launch_opt1(const struct kern_args *a, struct kern_launch *info)
{
    return launch_variant(a, info, OPT1);
}
int launch_opt2(const struct kern_args *a, struct kern_launch *info)
{
    return launch_variant(a, info, OPT2);
}

} // namespace

extern "C" int kern_tsm2_walk_odd(const struct kern_args *a, const long *p)
{
    return tc_rows(a, p, V3) && kern_tsm2_walk_odd_at(a->prec, rows_ring(a, p), a->m);
}

extern "C" int kern_ism2_vec_ahead(const struct kern_args *a, const long *p)
{
    if (!kern_ism2_vec_ahead_rule(a->prec, a->m, p[P_T2], p[P_T3], p[P_SPLIT]))
        return 0;
    const void *fa = kern_ism2_vec_kernel(a->prec, p[P_T3], KERN_ISM2_VEC_AHEAD);
    const void *fr = kern_ism2_vec_kernel(a->prec, p[P_T3], KERN_ISM2_VEC_ROWS);
    const size_t sa = ahead_smem(a, p), sr = vec_smem(a, p);
    const long t1 = p[P_T1];
    if (fa == NULL || fr == NULL || sa > (size_t)a->dev->smem_per_block_optin_bytes)
        return 0;
    /* The answer for the configuration asked last: variant_func asks at every launch of the
     * same configuration, and the occupancy queries need not run each time. */
    static thread_local struct {
        const struct rk_gpu *dev;
        const void *fa;
        long t1;
        size_t sa, sr;
        int ahead;
    } last = {};
    if (last.dev == a->dev && last.fa == fa && last.t1 == t1 && last.sa == sa && last.sr == sr)
        return last.ahead;
    int ba = 0, br = 0, ahead = 0;
    if (kern_smem_optin(fa, sa, a->dev) != RK_OK ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ba, fa, (int)t1, sa) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&br, fr, (int)t1, sr) != cudaSuccess)
        (void)cudaGetLastError(); /* a refused query: ROWS, and nothing left for the launch */
    else
        ahead = ba > 0 && ba >= br;
    last.dev = a->dev, last.fa = fa, last.t1 = t1, last.sa = sa, last.sr = sr, last.ahead = ahead;
    return ahead;
}

extern "C" int kern_tsm2_occupancy(const struct kern_args *a, int variant, const long *p,
                                   int *blocks_per_sm, int *regs)
{
    size_t smem;
    cudaFuncAttributes attr;
    const enum variant v = (enum variant)variant;
    const void *f = variant_func(a, p, v, &smem);
    *blocks_per_sm = 0;
    *regs = 0;
    if (!f || cudaFuncGetAttributes(&attr, f) != cudaSuccess ||
        kern_smem_optin(f, smem, a->dev) != RK_OK ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, f, (int)p[P_T1], smem) !=
            cudaSuccess) {
        (void)cudaGetLastError();
        return RK_EUSAGE;
    }
    *regs = attr.numRegs;
    return *blocks_per_sm > 0 ? RK_OK : RK_EUSAGE;
}

extern "C" {
const struct kern_ops kern_tsm2_v2 = {resolve_v2, workspace_split, NULL, launch_v2, NULL, NULL,
                                      NULL};
const struct kern_ops kern_tsm2_v3 = {resolve_v3, workspace_split, NULL, launch_v3, NULL, NULL,
                                      NULL};
const struct kern_ops kern_ism2_opt1 = {resolve_opt1, NULL, NULL, launch_opt1, NULL, NULL, NULL};
const struct kern_ops kern_ism2_opt2 = {resolve_opt2, NULL, NULL, launch_opt2, NULL, NULL, NULL};
}
