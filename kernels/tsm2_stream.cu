/*
 * tsm2_stream.cu - TSM2 V3 with apipe = 3, "stream" (H100 extension beyond the paper,
 * 004_dab40fe45003313a.txt §3.5 Alg. 4 is what it extends): C = A B with A (m x k) read once,
 * whatever n up to KERN_TSM2_STREAM_MAXN, at the DRAM read rate.
 *
 * Where the other kernels of tsm2.cu fall short (docs/perf-log.md): their tiles cover n in
 * powers of two up to 16 (and a few fp32 extras), so n = 17-32 took two passes over A (half
 * the copy ceiling), and their A goes through shared memory, one shared load per few FMAs,
 * which made the wide fp32 tiles issue-bound. Here:
 *   - a thread owns R rows (one 16-byte vector: 4 fp32 or 2 fp64) and all n columns, in
 *     registers, for its block's range of k; t2 = n exactly (instantiated for every n from
 *     1 to 32: no idle columns);
 *   - A goes straight from DRAM to registers with 16-byte streaming loads (ld.global.cs),
 *     UB of them in flight per thread (a ring of registers, loaded UB/G groups ahead);
 *   - B goes to shared memory in stages of KERN_TSM2_STREAM_KC values of k per column
 *     (cp.async, two stages: the next is copied while the current is used), column-major,
 *     so that one 16-byte shared load gives G consecutive k of a column to every thread of
 *     the warp at once (a broadcast: no bank conflicts) and serves G x R FMAs;
 *   - k is split across blockIdx.y as in V3 (parameter ksplit), partial sums added by the
 *     same second launch (tsm2.cu, splitk_reduce_kernel).
 * Loads of A past k or m read nothing (zeros); B past k or n is zero-filled, so a block's
 * last stage may be partial.
 */
#include "common.h"
#include "cp_async.cuh"
#include "internal.h"
#include "tsm2_common.cuh"

#include <cuda_runtime.h>

#include <utility>

namespace
{

constexpr int KC = KERN_TSM2_STREAM_KC;

/* Zeros every element of a (nested) register array. */
template <typename T> __device__ __forceinline__ void zero_all(T &x)
{
    x = T(0);
}
template <typename T, int N> __device__ __forceinline__ void zero_all(T (&a)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        zero_all(a[i]);
}

/*
 * The stages of B for k in [kb, ke), KC values each, double-buffered: body(s) runs on each
 * stage, held in buffer s, while the next is copied into the other (fill(s, c0): one commit
 * group; an empty group after the last keeps wait_group's count). Each stage's copies are
 * waited for and made visible to the block before body, and every thread is done with it
 * before it is filled again; every copy has landed when this returns.
 */
template <typename F, typename Body>
__device__ __forceinline__ void for_each_stage(F &fill, long kb, long ke, Body body)
{
    const long nchunks = (ke - kb + KC - 1) / KC;
    if (nchunks > 0)
        fill(0, kb);
    int s = 0;
#pragma unroll 1
    for (long ch = 0; ch < nchunks; ch++) {
        if (ch + 1 < nchunks)
            fill(s ^ 1, kb + (ch + 1) * KC);
        else
            cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        body(s);
        __syncthreads(); /* stage s read by every thread before it is filled again */
        s ^= 1;
    }
    cp_async_wait<0>();
}

/*
 * One stage of B in shared memory: dst[c * STRIDE + kk] = B(c0 + kk, c) for the COLS columns
 * and KV values of k (KC unless given), zeros past ke or n; one cp.async commit group. With every
 * column of B 16-byte aligned (bvec: k a multiple of 16 / sizeof(T); c0 is a multiple of 16) the
 * copies are 16 bytes, else one element each.
 */
template <typename T, int COLS, int STRIDE, int KV = KC>
__device__ __forceinline__ void fill_stage(T *dst, const T *__restrict__ B, long c0, long ke,
                                           long n, long k, bool bvec)
{
    constexpr int G = 16 / sizeof(T);
    if (bvec) {
        constexpr int VPC = KV / G;
        for (int i = threadIdx.x; i < COLS * VPC; i += blockDim.x) {
            const int c = i / VPC, kk = (i % VPC) * G;
            const long kg = c0 + kk;
            const bool ok = kg < ke && c < n; /* ke is a multiple of G here */
            cp_async_elem<16>(dst + c * STRIDE + kk, ok ? B + kg + (long)c * k : B, ok);
        }
    } else {
        for (int i = threadIdx.x; i < COLS * KV; i += blockDim.x) {
            const int c = i / KV, kk = i % KV;
            const long kg = c0 + kk;
            const bool ok = kg < ke && c < n;
            cp_async_elem<sizeof(T)>(dst + c * STRIDE + kk, ok ? B + kg + (long)c * k : B, ok);
        }
    }
    cp_async_commit();
}

/*
 * Stores the accumulator fragments of TT tiles x NT tiles of 8 columns (mma.sync's D layout:
 * c0, c1 at fragment row g, c2, c3 at row g + 8, columns 2q, 2q + 1 of the tile). The tile
 * rows are permuted as the loads of A were: tile t's fragment row g is row0 + step t and row
 * g + 8 the next one. Rows past m and columns past n are not stored. Where those two rows are
 * whole and the pair is aligned (m and the first row even), c0 and c2 (and c1 and c3) are
 * adjacent in a column of C and go as one store of two elements: a warp's store then fills
 * whole 32-byte sectors (16 rows of 4 columns) where single elements left every other one.
 */
template <typename T, int TT, int NT>
__device__ __forceinline__ void store_fragments(T *out, long m, long n, const T (&acc)[TT][NT][4],
                                                long row0, int step, int q)
{
    typedef typename vec<T, 2>::type pair;
#pragma unroll
    for (int t = 0; t < TT; t++) {
        const long row = row0 + step * t;
        const bool vec2 = m % 2 == 0 && row % 2 == 0 && row + 1 < m;
#pragma unroll
        for (int c = 0; c < NT; c++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const long col = c * 8 + 2 * q + h;
                if (col >= n)
                    continue;
                if (vec2) {
                    pair v;
                    v.x = acc[t][c][h];
                    v.y = acc[t][c][h + 2];
                    *reinterpret_cast<pair *>(out + row + col * m) = v;
                } else {
                    if (row < m)
                        out[row + col * m] = acc[t][c][h];
                    if (row + 1 < m)
                        out[row + 1 + col * m] = acc[t][c][h + 2];
                }
            }
    }
}

/*
 * The row walks' fragments at odd m (their ODD instantiations): fragment rows g and g + 8 are
 * rows r0 = 16 tile + g and r0 + 8 of the tile, so the 8 lanes of a column load (column kc of A,
 * past k or m zeros) and store 8 consecutive elements with each instruction.
 */
template <typename T>
__device__ __forceinline__ void load_own_rows(T (&d)[2], const T *__restrict__ A, long m, long k,
                                              long r0, long kc)
{
    d[0] = kc < k && r0 < m ? __ldcs(A + r0 + kc * m) : T(0);
    d[1] = kc < k && r0 + 8 < m ? __ldcs(A + r0 + 8 + kc * m) : T(0);
}

template <typename T, int NT>
__device__ __forceinline__ void store_own_rows(T *C, long m, long n, const T (&acc)[NT][4], long r0,
                                               int q)
{
#pragma unroll
    for (int c = 0; c < NT; c++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long col = c * 8 + 2 * q + h;
            if (col < n && r0 < m)
                C[r0 + col * m] = acc[c][h];
            if (col < n && r0 + 8 < m)
                C[r0 + 8 + col * m] = acc[c][h + 2];
        }
}

/*
 * N columns (t2), R rows per thread (kern_tsm2_stream_rows), UG groups of G columns of A in
 * flight per thread (the register ring: 128 bytes). Launched with t1 threads (blockDim.x, at
 * most 256), grid (m / (t1 R), nks).
 */
template <typename T, int N, int R>
__global__ void __launch_bounds__(256)
    tsm2_stream_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                       long n, long k, long kchunk, T *__restrict__ ws, int ncb)
{
    typedef typename vec<T, R>::type VA;          /* R rows of a column of A or C */
    constexpr int G = 16 / sizeof(T);             /* k per 16-byte shared load of a column of B */
    constexpr int UG = 128 / (G * R * sizeof(T)); /* groups in the ring: 128 bytes */
    static_assert(UG >= 1 && KC % (G * UG) == 0, "a stage holds whole rounds of groups");
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *Bs = reinterpret_cast<T *>(kern_smem); /* [2][N][KC] */
    (void)ncb;

    const int tid = threadIdx.x;
    const long row0 = ((long)blockIdx.x * blockDim.x + tid) * R;
    const int ks = blockIdx.y, nks = gridDim.y;
    const long kb = (long)ks * kchunk, ke = min(k, kb + kchunk);
    const bool live = row0 < m;
    const bool avec = m % R == 0; /* row0 + c m is then a multiple of R: aligned vectors */
    const bool bvec = k % G == 0; /* every column of B 16-byte aligned (kb: a multiple of 16) */

    /* Stage s <- B(c0 .. c0 + KC - 1, 0 .. N - 1), zeros past ke and n; one commit group. */
    auto fill = [&](int s, long c0) {
        fill_stage<T, N, KC>(Bs + s * N * KC, B, c0, ke, n, k, bvec);
    };

    /* The next group: columns kload .. kload + G - 1 of A, R rows each (zeros past ke or m);
     * pa points at column kload of the thread's rows. */
    const T *pa = A + (live ? row0 : 0) + kb * m;
    long kload = kb;
    auto load_group = [&](T(&d)[G][R]) {
#pragma unroll
        for (int x = 0; x < G; x++) {
            const bool ok = live && kload + x < ke;
            if (avec && ok) {
                unpack(d[x], __ldcs(reinterpret_cast<const VA *>(pa + x * m)));
            } else {
#pragma unroll
                for (int r = 0; r < R; r++)
                    d[x][r] = ok && row0 + r < m ? __ldcs(pa + x * m + r) : T(0);
            }
        }
        kload += G;
        pa += G * m;
    };

    T acc[R][N];
    zero_all(acc);

    T ar[UG][G][R]; /* the ring: the next UG groups */
#pragma unroll
    for (int u = 0; u < UG; u++)
        load_group(ar[u]);

    for_each_stage(fill, kb, ke, [&](int s) {
        const T *bs = Bs + s * N * KC;
#pragma unroll 1
        for (int g0 = 0; g0 < KC / G; g0 += UG) {
#pragma unroll
            for (int u = 0; u < UG; u++) {
                T a[R][G];
#pragma unroll
                for (int x = 0; x < G; x++)
#pragma unroll
                    for (int r = 0; r < R; r++)
                        a[r][x] = ar[u][x][r];
                load_group(ar[u]); /* UG groups ahead */
                fma_tile_v<T, N, G, R>(acc, a, bs + (g0 + u) * G, KC);
            }
        }
    });
    if (!live)
        return;
#pragma unroll
    for (int c = 0; c < N; c++) {
        if (c >= n)
            break;
        T *dst = (nks == 1 ? C : ws + (long)ks * n * m) + (long)c * m + row0;
        T col[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            col[r] = acc[r][c];
        if (avec) {
            *reinterpret_cast<VA *>(dst) = pack(col);
        } else {
#pragma unroll
            for (int r = 0; r < R; r++)
                if (row0 + r < m)
                    dst[r] = col[r];
        }
    }
}

/*
 * fp64 on the tensor cores (apipe = 4): the same stream of A, multiplied by DMMA
 * (mma.sync m16n8k4 f64, sm_90) instead of CUDA-core FMAs, which at n > 16 left the FMA
 * kernel issue-bound (one shared load of B per 2-4 FMAs). A warp owns WT tiles of 16 rows for
 * NT tiles of 8 columns; rpt (rows a thread loads) = 2 WT. WT = 1 is the default
 * (kern_tsm2_tc_rpt): at NT = 4 it needs 90 registers where WT = 2 needs 150, and the blocks that
 * fit per SM more than make up for the halved bytes of A in flight per warp (H100, fp64 n = 25-32,
 * t1 128: 10240 x 32 x 10240 288 against 305 us, 40960 x 32 x 40960 4532 against 4709, 40960 x 20
 * 4436 against 4672; WT = 1 with 8 steps in flight 292-5086 us, WT = 2 with 8 steps 314). Each
 * thread loads two adjacent rows of A with one 16-byte load per tile and k; the tile's fragment row
 * g holds actual row 2g and row g + 8 actual row 2g + 1 (a permutation of the tile's rows, undone
 * when C is stored), so the loads stay whole 128-byte lines per column. B goes through shared
 * memory as in the FMA kernel, column-major with a padded stride (KCP) so that the 8 columns x 4 k
 * of a fragment fall on distinct banks. Columns past n in the last tile of 8 are zeros: tensor
 * work, not memory traffic.
 */
/* A stage's column stride [elements] in the tensor-core kernels: the 8 columns x 4 (fp64) or
 * 8 (fp32) k of a fragment fall on distinct banks. */
constexpr int KCP = KC + 4;

/* d += a b on the tensor cores, fp64: a 16 x 4 fragment (a0, a1), b 4 x 8 (mma.sync m16n8k4). */
__device__ __forceinline__ void mma_f64(double (&d)[4], double a0, double a1, double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

template <int NT, int WT>
__global__ void __launch_bounds__(256)
    tsm2_dmma_kernel(const double *__restrict__ A, const double *__restrict__ B,
                     double *__restrict__ C, long m, long n, long k, long kchunk,
                     double *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int UK = 4; /* steps of 4 k of A in flight (64 bytes a tile) */
    static_assert(KC % (4 * UK) == 0, "a stage holds whole rounds of steps");
    extern __shared__ __align__(16) unsigned char kern_smem[];
    double *Bs = reinterpret_cast<double *>(kern_smem); /* [2][NT * 8][KCP] */
    (void)ncb;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, q = lane & 3;
    const long wrow = ((long)blockIdx.x * (blockDim.x >> 5) + (tid >> 5)) * (16 * WT);
    const int ks = blockIdx.y, nks = gridDim.y;
    const long kb = (long)ks * kchunk, ke = min(k, kb + kchunk);
    const bool avec = m % 2 == 0;
    const bool bvec = k % 2 == 0;

    auto fill = [&](int s, long c0) {
        fill_stage<double, NT * 8, KCP>(Bs + s * NT * 8 * KCP, B, c0, ke, n, k, bvec);
    };

    /* Rows 2g, 2g + 1 of each tile of the warp, column kload + q. */
    long kload = kb;
    auto load_step = [&](double(&d)[WT][2]) {
        const long kc = kload + q;
#pragma unroll
        for (int t = 0; t < WT; t++) {
            const long row = wrow + 16 * t + 2 * g;
            if (avec && kc < ke && row < m) {
                unpack(d[t], __ldcs(reinterpret_cast<const double2 *>(A + row + kc * m)));
            } else {
                d[t][0] = kc < ke && row < m ? __ldcs(A + row + kc * m) : 0.0;
                d[t][1] = kc < ke && row + 1 < m ? __ldcs(A + row + 1 + kc * m) : 0.0;
            }
        }
        kload += 4;
    };

    double acc[WT][NT][4];
    zero_all(acc);

    double ar[UK][WT][2];
#pragma unroll
    for (int u = 0; u < UK; u++)
        load_step(ar[u]);

    for_each_stage(fill, kb, ke, [&](int s) {
        const double *bs = Bs + s * NT * 8 * KCP;
#pragma unroll 1
        for (int k0 = 0; k0 < KC; k0 += 4 * UK) {
#pragma unroll
            for (int u = 0; u < UK; u++) {
                double a[WT][2];
#pragma unroll
                for (int t = 0; t < WT; t++) {
                    a[t][0] = ar[u][t][0];
                    a[t][1] = ar[u][t][1];
                }
                load_step(ar[u]);
                const int kk = k0 + 4 * u + q;
#pragma unroll
                for (int c = 0; c < NT; c++) {
                    const double b = bs[(c * 8 + g) * KCP + kk];
#pragma unroll
                    for (int t = 0; t < WT; t++)
                        mma_f64(acc[t][c], a[t][0], a[t][1], b);
                }
            }
        }
    });
    /* tile t's fragment row g is row 16 t + 2g of the warp's, row g + 8 the next */
    store_fragments(nks == 1 ? C : ws + (long)ks * n * m, m, n, acc, wrow + 2 * g, 16, q);
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

/*
 * fp64 DMMA for k up to one stage (KC), ISM2's shapes: the same fragments and loads as
 * tsm2_dmma_kernel with one tile of 16 rows a warp, but B is staged once per block and each warp
 * walks row tiles (a grid-stride loop: tile, tile + warps x blocks, ...), its ring of A loads
 * running on into the next tile, so a block's start (B's copy, the ring's first loads) is paid
 * once for many tiles rather than for every 64 rows. k is walked in rounds of UK steps of 4
 * (past k: zeros, tensor work only). Launched with split 1 (the whole k in the stage).
 * ODD (m odd): the fragment's own rows, g and g + 8 of the tile, loaded and stored one element
 * at a time (a column's 8 lanes: 64 consecutive bytes an instruction), as
 * tsm2_tf32x3_rows_kernel's ODD; rows 2g and 2g + 1 one at a time touched every other element.
 */
template <int NT, bool ODD>
__global__ void __launch_bounds__(256)
    tsm2_dmma_rows_kernel(const double *__restrict__ A, const double *__restrict__ B,
                          double *__restrict__ C, long m, long n, long k, long kchunk,
                          double *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int UK = 4; /* steps of 4 k of A in flight */
    extern __shared__ __align__(16) unsigned char kern_smem[];
    double *Bs = reinterpret_cast<double *>(kern_smem); /* [NT * 8][KCP] */
    (void)kchunk, (void)ws, (void)ncb;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, q = lane & 3;
    const long warps = blockDim.x >> 5, ntiles = (m + 15) / 16;
    const long stride = (long)gridDim.x * warps;
    const int rounds = (int)((k + 4 * UK - 1) / (4 * UK));
    const bool avec = m % 2 == 0;

    /* The load position: a tile and a round of it; step u of the round, column
     * 4 (UK round + u) + q, rows 2g, 2g + 1 of the tile. */
    long ltile = (long)blockIdx.x * warps + (tid >> 5);
    int lround = 0;
    auto load_step = [&](double(&d)[2], int u) {
        const long kc = 4L * (UK * lround + u) + q, row = 16 * ltile + 2 * g;
        if constexpr (ODD) {
            load_own_rows(d, A, m, k, 16 * ltile + g, kc);
        } else if (avec && kc < k && row < m) {
            unpack(d, __ldcs(reinterpret_cast<const double2 *>(A + row + kc * m)));
        } else {
            d[0] = kc < k && row < m ? __ldcs(A + row + kc * m) : 0.0;
            d[1] = kc < k && row + 1 < m ? __ldcs(A + row + 1 + kc * m) : 0.0;
        }
    };
    auto advance = [&]() {
        if (++lround == rounds) {
            lround = 0;
            ltile += stride;
        }
    };

    double ar[UK][2];
#pragma unroll
    for (int u = 0; u < UK; u++)
        load_step(ar[u], u);
    advance();
    /* B, staged while the first round of A is on its way */
    fill_stage<double, NT * 8, KCP>(Bs, B, 0, k, n, k, k % 2 == 0);
    cp_async_wait<0>();
    __syncthreads();

#pragma unroll 1
    for (long tile = (long)blockIdx.x * warps + (tid >> 5); tile < ntiles; tile += stride) {
        double acc[NT][4];
        zero_all(acc);
#pragma unroll 1
        for (int r = 0; r < rounds; r++) {
#pragma unroll
            for (int u = 0; u < UK; u++) {
                const double a0 = ar[u][0], a1 = ar[u][1];
                load_step(ar[u], u); /* a round ahead, maybe in the next tile */
                const int kk = 4 * (UK * r + u) + q;
#pragma unroll
                for (int c = 0; c < NT; c++)
                    mma_f64(acc[c], a0, a1, Bs[(c * 8 + g) * KCP + kk]);
            }
            advance();
        }
        if constexpr (ODD) {
            store_own_rows(C, m, n, acc, 16 * tile + g, q);
        } else {
            /* fragment row g is row 2g of the tile, row g + 8 row 2g + 1 */
            store_fragments(C, m, n, reinterpret_cast<const decltype(acc)(&)[1]>(acc),
                            16 * tile + 2 * g, 0, q);
        }
    }
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

/*
 * tsm2_dmma_rows_kernel with A through shared memory, for the warps that walk many tiles (large
 * m; tsm2.cu, rows_ring): a ring of ROWS_STAGES tiles of 16 rows x k that belongs to the warp,
 * filled by cp.async copies of 16 bytes (two rows of a column; 8 bytes where m is odd)
 * ROWS_STAGES - 1 tiles ahead of the one multiplied, so a warp keeps up to 3 x 16 x k values of
 * A in flight without holding them in registers (the register version: 4 steps of 4 k). On the
 * H100 at 10^6-10^7 rows it is 0-8 % faster than the register version at k = 24-32 with 16-32
 * columns; at 10^5 rows, a tile or two a warp, the ring's prologue and its shared memory (fewer
 * resident warps) make it 10-20 % slower (docs/perf-log.md). No block-wide barrier follows
 * B's copy: a warp's ring is its own, ordered by cp.async.wait_group and __syncwarp. Columns of
 * the ring past k and rows past m are zero-filled (B past k is zero too). Launched with split 1
 * (the whole k in the stage) and kern_tsm2_tc_rows_smem bytes of shared memory.
 */
/*
 * A warp's 16 rows of a tile of A in shared memory times B's stage, k from 0 to kr (a multiple of
 * 4) in the DMMA fragments' steps of 4: column kk of the tile at at + kk * lda, fragment rows g
 * and g + 8 as its rows 2g and 2g + 1 (one 16-byte read), column c of B at Bs + c * ldb. The
 * multiply of tsm2_dmma_ring_kernel and tsm2_dmma_bulk_kernel.
 */
template <int NT, typename L>
__device__ __forceinline__ void dmma_tile(double (&acc)[NT][4], const double *at, L lda,
                                          const double *Bs, int ldb, int kr, int g, int q)
{
    zero_all(acc);
#pragma unroll 4
    for (int kk = q; kk < kr; kk += 4) {
        const double2 a = *reinterpret_cast<const double2 *>(at + kk * lda + 2 * g);
#pragma unroll
        for (int c = 0; c < NT; c++)
            mma_f64(acc[c], a.x, a.y, Bs[(c * 8 + g) * ldb + kk]);
    }
}

constexpr int ROWS_STAGES = KERN_TSM2_RING_STAGES;
constexpr int ROWS_LD = 20; /* a column of a ring tile: 16 rows + 4, conflict-free 16-byte reads */

template <int NT>
__global__ void __launch_bounds__(256)
    tsm2_dmma_ring_kernel(const double *__restrict__ A, const double *__restrict__ B,
                          double *__restrict__ C, long m, long n, long k, long kchunk,
                          double *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char kern_smem[];
    double *Bs = reinterpret_cast<double *>(kern_smem); /* [NT * 8][KCP] */
    (void)kchunk, (void)ws, (void)ncb;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, q = lane & 3;
    const long warps = blockDim.x >> 5, ntiles = (m + 15) / 16;
    const long stride = (long)gridDim.x * warps;
    const int kr = (int)((k + 3) / 4 * 4); /* k rounded up to the steps of 4 */
    const int tile_elems = kr * ROWS_LD;
    double *ring = Bs + NT * 8 * KCP + (long)(tid >> 5) * ROWS_STAGES * tile_elems;
    const bool avec = m % 2 == 0;

    fill_stage<double, NT * 8, KCP>(Bs, B, 0, k, n, k, k % 2 == 0); /* its own group, first */

    /* One tile of A into ring slot s: column c, rows 2 j, 2 j + 1 (chunk j of 8), lanes
     * striding the kr x 8 chunks; one commit group, empty past the last tile. */
    auto fill = [&](int s, long tile) {
        if (tile < ntiles) {
            double *dst = ring + s * tile_elems;
            for (int i = lane; i < kr * 8; i += 32) {
                const int c = i >> 3, j = i & 7;
                const long row = 16 * tile + 2 * j;
                const double *src = A + row + (long)c * m;
                if (avec) {
                    const bool ok = c < k && row < m;
                    cp_async_elem<16>(dst + c * ROWS_LD + 2 * j, ok ? src : A, ok);
                } else {
                    cp_async_elem<8>(dst + c * ROWS_LD + 2 * j, c < k && row < m ? src : A,
                                     c < k && row < m);
                    cp_async_elem<8>(dst + c * ROWS_LD + 2 * j + 1,
                                     c < k && row + 1 < m ? src + 1 : A, c < k && row + 1 < m);
                }
            }
        }
        cp_async_commit();
    };

    const long first = (long)blockIdx.x * warps + (tid >> 5);
#pragma unroll
    for (int s = 0; s < ROWS_STAGES - 1; s++)
        fill(s, first + s * stride);
    /* B's group, committed before the ring's: landed while the first tiles are on their way */
    cp_async_wait<ROWS_STAGES - 1>();
    __syncthreads();
    int slot = 0;
#pragma unroll 1
    for (long tile = first; tile < ntiles; tile += stride) {
        fill((slot + ROWS_STAGES - 1) % ROWS_STAGES, tile + (ROWS_STAGES - 1) * stride);
        cp_async_wait<ROWS_STAGES - 1>(); /* this tile's group has landed */
        __syncwarp();
        double acc[NT][4];
        dmma_tile(acc, ring + slot * tile_elems, ROWS_LD, Bs, KCP, kr, g, q);
        __syncwarp(); /* every lane has read the slot before it is filled again */
        store_fragments(C, m, n, reinterpret_cast<const decltype(acc)(&)[1]>(acc),
                        16 * tile + 2 * g, 0, q);
        slot = (slot + 1) % ROWS_STAGES;
    }
    cp_async_wait<0>();
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

/* mbarrier and bulk-copy (cp.async.bulk, sm_90) helpers of tsm2_dmma_bulk_kernel; shared
 * addresses as 32-bit .shared::cta offsets. */
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile(
        "mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"((unsigned)__cvta_generic_to_shared(bar)),
        "r"(count)
        : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(bar)),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile(
        "mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"((unsigned)__cvta_generic_to_shared(bar))
        : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned phase)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(a), "r"(phase)
                     : "memory");
}
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes), "r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
}

/*
 * tsm2_dmma_rows_kernel with A in and C out through Hopper's bulk copies (the TMA unit's
 * one-dimensional cp.async.bulk), for many rows (tsm2.cu, rows_ring: m even, from
 * KERN_TSM2_BULK_ROWS). A block of W warps owns block tiles of 16 W rows, walked in one wave
 * (block tile b, b + blocks, ...); warp w multiplies rows 16 w .. 16 w + 15 of it as the
 * register kernel does. A: a ring of BULK_STAGES block tiles in shared memory; warp 0 fills a
 * slot with one bulk copy a column (16 W rows x 8 bytes contiguous: 1 KB at W = 8), all landing
 * on the slot's `full` mbarrier by their byte count, BULK_STAGES - 1 tiles ahead, once every
 * warp has arrived on the slot's `empty` mbarrier. C: each warp writes its fragments to a block
 * tile of C in shared memory, and the last warp writes each column with one bulk copy (16 W rows
 * contiguous) where the register kernel stores 128 bytes a column a warp. Columns of the ring past
 * k are zero (cleared once; B past k is zero too); rows past m keep earlier values, which only
 * rows of C past m depend on, and those are not written. Where it came from (an H100, fp64
 * 10^5-10^7 rows x 16-32 x k 17-32; docs/perf-log.md): 128-byte bulk copies a warp's tile were
 * up to 17 % slower than the cp.async ring at 10^7 rows; a block's 1 KB columns 0.94-1.01x;
 * with C through bulk copies too 0.92-0.99x, and in one wave 0.95-1.00x at 10^6 rows and
 * 0.90-0.98x at 10^7, against 1.00-1.08x at 3 x 10^5 and 1.11-1.29x at 10^5 (too few block
 * tiles a block to repay its prologue). Two stages and B's stage cut to k <= 32: 108 KB a block
 * at t1 256, two blocks an SM, where three stages (152 KB) left one: 0.96-1.01x the time of
 * three at 6 x 10^5 - 10^7 rows (10^6 x 32 x 32 184.3 -> 179.2 us, cuBLAS 180.4).
 */
constexpr int BULK_STAGES = 2;
constexpr int BULK_KS = KERN_TSM2_BULK_MAXK + 4; /* B's stage: k up to 32, padded as KCP */

template <int NT>
__global__ void __launch_bounds__(256)
    tsm2_dmma_bulk_kernel(const double *__restrict__ A, const double *__restrict__ B,
                          double *__restrict__ C, long m, long n, long k, long kchunk,
                          double *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char kern_smem[];
    double *Bs = reinterpret_cast<double *>(kern_smem); /* [NT * 8][BULK_KS] */
    (void)kchunk, (void)ws, (void)ncb;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, q = lane & 3, warp = tid >> 5;
    const int W = blockDim.x >> 5;
    const long rows_bt = 16L * W, nbt = (m + rows_bt - 1) / rows_bt; /* block tiles */
    const int kr = (int)((k + 3) / 4 * 4);
    const int ld = 16 * W + 4; /* a column of a block tile in the ring */
    const long slot_elems = (long)kr * ld;
    double *ring = Bs + NT * 8 * BULK_KS;
    uint64_t *full = reinterpret_cast<uint64_t *>(ring + BULK_STAGES * slot_elems);
    uint64_t *empty = full + BULK_STAGES;
    double *Cs = reinterpret_cast<double *>(empty + BULK_STAGES); /* [NT * 8][ld] */

    fill_stage<double, NT * 8, BULK_KS, KERN_TSM2_BULK_MAXK>(Bs, B, 0, k, n, k, k % 2 == 0);
    for (int s = 0; s < BULK_STAGES; s++) /* columns k .. kr - 1 of every slot, contiguous */
        for (long i = k * ld + tid; i < (long)kr * ld; i += blockDim.x)
            ring[s * slot_elems + i] = 0.0;
    if (tid < BULK_STAGES) {
        mbar_init(full + tid, 1);
        mbar_init(empty + tid, W);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    cp_async_wait<0>();
    __syncthreads();

    /* bytes of a column of block tile bt: 16 W rows, fewer in the last */
    auto col_bytes = [&](long bt) {
        const long r0 = bt * rows_bt;
        return (unsigned)((m - r0 < rows_bt ? m - r0 : rows_bt) * sizeof(double));
    };
    /* warp 0 fills: block tile bt into slot s, one bulk copy a column (16 W rows) */
    auto fill = [&](int s, long bt) {
        if (bt >= nbt)
            return;
        const long r0 = bt * rows_bt;
        const unsigned bytes = col_bytes(bt);
        if (lane == 0)
            mbar_expect_tx(full + s, bytes * (unsigned)k);
        __syncwarp();
        for (int c = lane; c < k; c += 32)
            bulk_copy(ring + s * slot_elems + (long)c * ld, A + r0 + (long)c * m, bytes, full + s);
    };

    if (warp == 0)
#pragma unroll
        for (int s = 0; s < BULK_STAGES - 1; s++)
            fill(s, blockIdx.x + (long)s * gridDim.x);
    long it = 0;
#pragma unroll 1
    for (long bt = blockIdx.x; bt < nbt; bt += gridDim.x, it++) {
        const int slot = (int)(it % BULK_STAGES);
        if (warp == 0) { /* the slot used last iteration, once every warp has read it */
            const long nit = it + BULK_STAGES - 1;
            const int ns = (int)(nit % BULK_STAGES);
            if (it >= 1)
                mbar_wait(empty + ns, (unsigned)(((it - 1) / BULK_STAGES) & 1));
            fill(ns, bt + (long)(BULK_STAGES - 1) * gridDim.x);
        }
        mbar_wait(full + slot, (unsigned)((it / BULK_STAGES) & 1));
        double acc[NT][4];
        dmma_tile(acc, ring + slot * slot_elems + 16 * warp, (long)ld, Bs, BULK_KS, kr, g, q);
        __syncwarp(); /* every lane has read the slot */
        if (lane == 0) {
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive(empty + slot);
        }
        /* C through shared memory: the block tile's columns written by bulk copies of 16 W rows */
        if (warp == W - 1)
            asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        __syncthreads(); /* the last tile's columns have left Cs */
#pragma unroll
        for (int c = 0; c < NT; c++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                *reinterpret_cast<double2 *>(Cs + (c * 8 + 2 * q + h) * ld + 16 * warp + 2 * g) =
                    make_double2(acc[c][h], acc[c][h + 2]);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        if (warp == W - 1) {
            const long r0 = bt * rows_bt;
            const unsigned bytes = col_bytes(bt);
            for (int c = lane; c < n; c += 32)
                asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                                 C + r0 + (long)c * m),
                             "r"((unsigned)__cvta_generic_to_shared(Cs + c * ld)), "r"(bytes)
                             : "memory");
            asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        }
    }
    if (warp == W - 1)
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

/*
 * fp32 on the tensor cores (apipe = 4): 3xTF32. Each fp32 value x is split into a TF32 part
 * hi (x rounded to TF32) and the rest lo = x - hi (split_tf32); a b = hi_a hi_b + hi_a lo_b +
 * lo_a hi_b, the lost lo_a lo_b about 2^-22 of it, so the result keeps fp32's accuracy (the FMA
 * kernel's relative error ~1e-7; roofkit verifies at 1e-4) while the multiplies leave the CUDA
 * cores, which at n > 12 bound the FMA kernel (one shared load of B per 8 FMAs). mma.sync m16n8k8
 * tf32 with fp32 accumulators, for one stage of 64 k at a time, added to the running sums with
 * CUDA-core adds: accumulated in the tensor cores over a block's whole range of k, the error
 * grew with it (1.2e-5 at 1707 k, 4.8e-5 at 6827, above 1e-4 at 40960 on an H100), as a
 * truncating accumulation would. A warp owns TT tiles of 16 rows (rpt = 2 TT rows a thread,
 * TT 2 by default): one 8- or 16-byte load per thread and column gives rows 2TT g .. 2TT g +
 * 2TT - 1, of which tile t takes 2TT g + 2t and 2TT g + 2t + 1 as its fragment rows g, g + 8
 * (the permutation undone at the store).
 */
/*
 * x as hi + lo, both read by mma as TF32 (its top 19 bits: sign, exponent, 10 bits of mantissa).
 * hi is x rounded to the nearest TF32, ties away from zero, by adding half a TF32 ulp to the
 * bits and clearing the 13 below: what cvt.rna.tf32.f32 gives for finite x in two integer
 * operations where cvt compiles to three plus a test for inf and NaN (a NaN still reaches the
 * result through lo). lo = x - hi is exact in fp32 and goes to mma whole: mma reads its TF32
 * bits and ignores the rest, lo truncated instead of rounded, an error of at most 2^-21 of x,
 * the size of the lo_a lo_b term 3xTF32 drops anyway. Seven instructions became three: on the
 * H100 (fp32 10240-40960 rows, k = m, 17-32 columns) the TSM2 kernel ran 10-20 % faster with one
 * tile a warp, 7-12 % with two at 25-32 columns, its relative error on random data 4.8-5.2e-7
 * before and after (docs/perf-log.md).
 */
__device__ __forceinline__ void split_tf32(float x, unsigned &hi, unsigned &lo)
{
    hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    lo = __float_as_uint(x - __uint_as_float(hi));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d += a b in 3xTF32 from the parts of a (ahi, alo) and of b's two values (b0h, b1h; b0l, b1l):
 * the small terms first. */
__device__ __forceinline__ void mma_tf32x3(float (&d)[4], const unsigned (&ahi)[4],
                                           const unsigned (&alo)[4], unsigned b0h, unsigned b1h,
                                           unsigned b0l, unsigned b1l)
{
    mma_tf32(d, alo, b0h, b1h);
    mma_tf32(d, ahi, b0l, b1l);
    mma_tf32(d, ahi, b0h, b1h);
}

/* Tile t's A fragment from a thread's loads d (columns q and q + 4 of rows RW g ..): rows 2t and
 * 2t + 1 of them, split into their TF32 parts. */
template <int RW>
__device__ __forceinline__ void split_fragment(const float (&d)[2][RW], int t, unsigned (&hi)[4],
                                               unsigned (&lo)[4])
{
    split_tf32(d[0][2 * t], hi[0], lo[0]);
    split_tf32(d[0][2 * t + 1], hi[1], lo[1]);
    split_tf32(d[1][2 * t], hi[2], lo[2]);
    split_tf32(d[1][2 * t + 1], hi[3], lo[3]);
}

/*
 * Steps of 8 k of A a thread keeps in flight in tsm2_tf32x3_kernel with NT tiles of 8 columns.
 * Up to 24 columns 2 (32 or 64 bytes a thread): the registers it frees let 4 blocks of 128 fit an
 * SM with two tiles a warp (112 registers against 168 with 4 steps), 13-17 % faster on the H100
 * (fp32 10240-40960 rows, k = m, 17 and 24 columns). At 25-32 columns 4 (165 registers, 3
 * blocks), but 2 below TF32X3_FEW_ROWS rows; a cap of 128 registers (with spills) was 4-5 %
 * faster at 10240 rows but 2-6 % slower at 20480-40960 (docs/perf-log.md).
 */
constexpr int tf32x3_steps(int nt, bool few_rows)
{
    return nt <= 3 || few_rows ? 2 : 4;
}

/* few_rows of tf32x3_steps: below this many rows 2 steps at 25-32 columns as well. With the
 * kernel's body a function (tf32x3_part) they take 124 registers, 4 blocks of 128 an SM, and ran
 * 10240 x 25-32 x 10240 in 170.3-172.6 us against 184.3-186.9 with 4 steps; at 20480-40960 rows
 * 0.6-3.4 % slower. */
constexpr long TF32X3_FEW_ROWS = KERN_TSM2_TF32X3_FEW_ROWS;

/*
 * Steps of 8 k ahead of the loads that tsm2_tf32x3_kernel prefetches A into the L1 at 17-24
 * columns (NT = 3, 2 steps of A in registers). On the H100 (kbench, the same call, two runs
 * each): 10240 x 17-24 x 10240 152.1-154.0 us against 157.5-160.0, 20480 x 17-24 570-576
 * against 607.6-610.4, 40960 x 17 / 24 2295-2315 / 2327-2344 against 2340-2350 / 2364-2365;
 * 3 steps ahead as fast at 10240-20480 and slower at 40960, 4-12 slower than 2. Not at 9-16
 * columns (the prefetch took 95 registers to 107, fewer blocks an SM: 10240 x 9 144 -> 153 us)
 * nor at 25-32 (10240 x 32 173 -> 179, 20480 x 25-32 626-634 -> 649-666 with 2 or 3 steps
 * ahead, 2 or 4 in registers, with or without a cap of 128 registers; docs/perf-log.md).
 */
constexpr int TF32X3_L1_AHEAD = 2;

/*
 * The body of tsm2_tf32x3_kernel: the warp's 16 TT rows from wrow, over k in [kb, ke), sums
 * stored to out (C or the block's slice of partial sums), B staged in Bs. Written as a function
 * of its output and its range of k, the same code compiled to 112 registers at 17-24 columns
 * where inline in the kernel it took 126, and ran 2-6 % faster there on the H100 (10240-40960
 * rows, two tiles a warp; within 2.5 % elsewhere, 20480 x 25 5 % faster; docs/perf-log.md).
 */
template <int NT, int TT, int UK>
__device__ __forceinline__ void
tf32x3_part(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ out,
            long m, long n, long k, long wrow, long kb, long ke, float *Bs)
{
    constexpr int RW = 2 * TT; /* rows a thread loads: two a tile */
    typedef typename vec<float, RW>::type VR;
    static_assert(KC % (8 * UK) == 0, "a stage holds whole rounds of steps");
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const bool avec = m % RW == 0;
    const bool bvec = k % 4 == 0;

    auto fill = [&](int s, long c0) {
        fill_stage<float, NT * 8, KCP>(Bs + s * NT * 8 * KCP, B, c0, ke, n, k, bvec);
    };

    /* Rows RW g .. RW g + RW - 1 of the warp's 16 TT, columns kload + q and kload + q + 4; at
     * 17-24 columns lanes 0-7 also ask the L1 for the warp's rows of the 8 columns
     * TF32X3_L1_AHEAD steps further on (one line a column at two tiles a warp). */
    long kload = kb;
    const long row = wrow + RW * g;
    const int lane8 = lane < 8 ? lane : -1;
    auto load_step = [&](float(&d)[2][RW]) {
        if constexpr (NT == 3) {
            const long kp = kload + 8 * TF32X3_L1_AHEAD + lane8;
            if (lane8 >= 0 && kp < ke && wrow < m)
                asm volatile("prefetch.global.L1 [%0];\n" ::"l"(A + wrow + kp * m));
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long kc = kload + q + 4 * h;
            if (avec && kc < ke && row < m) {
                unpack(d[h], __ldcs(reinterpret_cast<const VR *>(A + row + kc * m)));
            } else {
#pragma unroll
                for (int r = 0; r < RW; r++)
                    d[h][r] = kc < ke && row + r < m ? __ldcs(A + row + r + kc * m) : 0.0f;
            }
        }
        kload += 8;
    };

    float acc[TT][NT][4];
    zero_all(acc);

    float ar[UK][2][RW];
#pragma unroll
    for (int u = 0; u < UK; u++)
        load_step(ar[u]);

    for_each_stage(fill, kb, ke, [&](int s) {
        const float *bs = Bs + s * NT * 8 * KCP;
        float part[TT][NT][4]; /* this stage's sums: the tensor cores accumulate 64 k at most */
        zero_all(part);
#pragma unroll 1
        for (int k0 = 0; k0 < KC; k0 += 8 * UK) {
#pragma unroll
            for (int u = 0; u < UK; u++) {
                /* fragments: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4) */
                unsigned ahi[TT][4], alo[TT][4];
#pragma unroll
                for (int t = 0; t < TT; t++)
                    split_fragment(ar[u], t, ahi[t], alo[t]);
                load_step(ar[u]);
                const int kk = k0 + 8 * u + q;
#pragma unroll
                for (int c = 0; c < NT; c++) {
                    unsigned b0h, b0l, b1h, b1l;
                    split_tf32(bs[(c * 8 + g) * KCP + kk], b0h, b0l);
                    split_tf32(bs[(c * 8 + g) * KCP + kk + 4], b1h, b1l);
#pragma unroll
                    for (int t = 0; t < TT; t++)
                        mma_tf32x3(part[t][c], ahi[t], alo[t], b0h, b1h, b0l, b1l);
                }
            }
        }
#pragma unroll
        for (int t = 0; t < TT; t++)
#pragma unroll
            for (int c = 0; c < NT; c++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[t][c][j] += part[t][c][j];
    });
    /* tile t's fragment row g is row RW g + 2t of the warp's, row g + 8 the next */
    store_fragments(out, m, n, acc, row, 2, q);
}

template <int NT, int TT, int UK>
__global__ void __launch_bounds__(256)
    tsm2_tf32x3_kernel(const float *__restrict__ A, const float *__restrict__ B,
                       float *__restrict__ C, long m, long n, long k, long kchunk,
                       float *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) unsigned char kern_smem[];
    (void)ncb;
    const long wrow = ((long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * (16 * TT);
    const int ks = blockIdx.y, nks = gridDim.y;
    const long kb = (long)ks * kchunk, ke = min(k, kb + kchunk);
    tf32x3_part<NT, TT, UK>(A, B, nks == 1 ? C : ws + (long)ks * n * m, m, n, k, wrow, kb, ke,
                            reinterpret_cast<float *>(kern_smem));
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

/*
 * fp32 3xTF32 for k up to one stage (KC), ISM2's shapes: tsm2_tf32x3_kernel's fragments with one
 * tile of 16 rows a warp (rpt 2: a thread loads rows 2g, 2g + 1 with one 8-byte load a column),
 * walking row tiles as tsm2_dmma_rows_kernel does. B is staged once a block and split into its
 * TF32 parts there, once, instead of by every warp at every step; the whole k is one stage, so
 * the tensor cores accumulate it (the accuracy of the per-stage sums of the general kernel).
 * ODD (m odd, where the 8-byte loads of two rows would be misaligned): the fragment's own rows,
 * g and g + 8 of the tile, loaded and stored one element at a time, so that the 8 lanes of a
 * column read and write 8 consecutive rows (32 bytes) with each instruction; rows 2g and 2g + 1
 * one at a time touched every other element of 64 bytes twice.
 */
template <int NT, bool ODD>
__global__ void __launch_bounds__(256)
    tsm2_tf32x3_rows_kernel(const float *__restrict__ A, const float *__restrict__ B,
                            float *__restrict__ C, long m, long n, long k, long kchunk,
                            float *__restrict__ ws, int ncb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int UK = 4;            /* steps of 8 k of A in flight */
    constexpr int NB = NT * 8 * KCP; /* one stage of B */
    extern __shared__ __align__(16) unsigned char kern_smem[];
    float *Bs = reinterpret_cast<float *>(kern_smem); /* [NT * 8][KCP], as copied */
    unsigned *Bh = reinterpret_cast<unsigned *>(Bs + NB), *Bl = Bh + NB; /* its TF32 parts */
    (void)kchunk, (void)ws, (void)ncb;

    const int tid = threadIdx.x, lane = tid & 31, g = lane >> 2, q = lane & 3;
    const long warps = blockDim.x >> 5, ntiles = (m + 15) / 16;
    const long stride = (long)gridDim.x * warps;
    const int rounds = (int)((k + 8 * UK - 1) / (8 * UK));
    const bool avec = m % 2 == 0;

    /* The load position: a tile and a round of it; step u of the round, columns
     * 8 (UK round + u) + q and + q + 4, rows 2g, 2g + 1 of the tile. */
    long ltile = (long)blockIdx.x * warps + (tid >> 5);
    int lround = 0;
    auto load_step = [&](float(&d)[2][2], int u) {
        const long row = 16 * ltile + 2 * g;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long kc = 8L * (UK * lround + u) + q + 4 * h;
            if constexpr (ODD) {
                load_own_rows(d[h], A, m, k, 16 * ltile + g, kc);
            } else if (avec && kc < k && row < m) {
                unpack(d[h], __ldcs(reinterpret_cast<const float2 *>(A + row + kc * m)));
            } else {
                d[h][0] = kc < k && row < m ? __ldcs(A + row + kc * m) : 0.0f;
                d[h][1] = kc < k && row + 1 < m ? __ldcs(A + row + 1 + kc * m) : 0.0f;
            }
        }
    };
    auto advance = [&]() {
        if (++lround == rounds) {
            lround = 0;
            ltile += stride;
        }
    };

    float ar[UK][2][2];
#pragma unroll
    for (int u = 0; u < UK; u++)
        load_step(ar[u], u);
    advance();
    /* B and its TF32 parts, staged while the first round of A is on its way */
    fill_stage<float, NT * 8, KCP>(Bs, B, 0, k, n, k, k % 4 == 0);
    cp_async_wait<0>();
    __syncthreads();
    for (int i = tid; i < NB; i += blockDim.x)
        split_tf32(Bs[i], Bh[i], Bl[i]);
    __syncthreads();

#pragma unroll 1
    for (long tile = (long)blockIdx.x * warps + (tid >> 5); tile < ntiles; tile += stride) {
        float acc[NT][4];
        zero_all(acc);
#pragma unroll 1
        for (int r = 0; r < rounds; r++) {
#pragma unroll
            for (int u = 0; u < UK; u++) {
                /* fragments: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4) */
                unsigned ahi[4], alo[4];
                split_fragment(ar[u], 0, ahi, alo);
                load_step(ar[u], u); /* a round ahead, maybe in the next tile */
                const int kk = 8 * (UK * r + u) + q;
#pragma unroll
                for (int c = 0; c < NT; c++) {
                    const int i0 = (c * 8 + g) * KCP + kk;
                    mma_tf32x3(acc[c], ahi, alo, Bh[i0], Bh[i0 + 4], Bl[i0], Bl[i0 + 4]);
                }
            }
            advance();
        }
        if constexpr (ODD) {
            store_own_rows(C, m, n, acc, 16 * tile + g, q);
        } else {
            /* fragment row g is row 2g of the tile, row g + 8 row 2g + 1 */
            store_fragments(C, m, n, reinterpret_cast<const decltype(acc)(&)[1]>(acc),
                            16 * tile + 2 * g, 0, q);
        }
    }
#else
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)k, (void)kchunk, (void)ws, (void)ncb;
#endif
}

template <int NT, int TT, bool FEW>
constexpr auto tf32x3 = tsm2_tf32x3_kernel<NT, TT, tf32x3_steps(NT, FEW)>;

template <typename T>
using stream_fn = void (*)(const T *, const T *, T *, long, long, long, long, T *, int);

template <typename T, int... Ns> struct stream_table {
    static constexpr stream_fn<T> fns[sizeof...(Ns)] = {
        tsm2_stream_kernel<T, Ns, KERN_TSM2_STREAM_ROWS(sizeof(T) == 8, Ns)>...};
};

template <typename T, int... I>
constexpr stream_table<T, (I + 1)...> make_table(std::integer_sequence<int, I...>)
{
    return {};
}

template <typename T> const void *stream_kernel(long n)
{
    using table = decltype(make_table<T>(std::make_integer_sequence<int, KERN_TSM2_STREAM_MAXN>{}));
    return n >= 1 && n <= KERN_TSM2_STREAM_MAXN ? (const void *)table::fns[n - 1] : nullptr;
}

} // namespace

extern "C" const void *kern_tsm2_stream_kernel(int prec, long t2)
{
    return prec == KERNELS_FP64 ? stream_kernel<double>(t2) : stream_kernel<float>(t2);
}

extern "C" const void *kern_tsm2_tc_kernel(int prec, long t2, long rpt, long m)
{
    static const stream_fn<double> f64[2][4] = {{tsm2_dmma_kernel<1, 1>, tsm2_dmma_kernel<2, 1>,
                                                 tsm2_dmma_kernel<3, 1>, tsm2_dmma_kernel<4, 1>},
                                                {tsm2_dmma_kernel<1, 2>, tsm2_dmma_kernel<2, 2>,
                                                 tsm2_dmma_kernel<3, 2>, tsm2_dmma_kernel<4, 2>}};
    static const stream_fn<float> f32[2][2][4] = {
        /* [few rows][tiles][columns] */
        {{tf32x3<1, 1, false>, tf32x3<2, 1, false>, tf32x3<3, 1, false>, tf32x3<4, 1, false>},
         {tf32x3<1, 2, false>, tf32x3<2, 2, false>, tf32x3<3, 2, false>, tf32x3<4, 2, false>}},
        {{tf32x3<1, 1, true>, tf32x3<2, 1, true>, tf32x3<3, 1, true>, tf32x3<4, 1, true>},
         {tf32x3<1, 2, true>, tf32x3<2, 2, true>, tf32x3<3, 2, true>, tf32x3<4, 2, true>}}};
    if (t2 < 1 || t2 > 32 || (rpt != 2 && rpt != 4))
        return nullptr;
    const int tiles = (int)rpt / 2 - 1, cols = (int)(t2 - 1) / 8;
    return prec == KERNELS_FP64 ? (const void *)f64[tiles][cols]
                                : (const void *)f32[m < TF32X3_FEW_ROWS][tiles][cols];
}

extern "C" const void *kern_tsm2_tc_rows_kernel(int prec, long t2, int ring, long m)
{
    static const stream_fn<double> f64[3][4] = {
        {tsm2_dmma_rows_kernel<1, false>, tsm2_dmma_rows_kernel<2, false>,
         tsm2_dmma_rows_kernel<3, false>, tsm2_dmma_rows_kernel<4, false>},
        {tsm2_dmma_ring_kernel<1>, tsm2_dmma_ring_kernel<2>, tsm2_dmma_ring_kernel<3>,
         tsm2_dmma_ring_kernel<4>},
        {tsm2_dmma_bulk_kernel<1>, tsm2_dmma_bulk_kernel<2>, tsm2_dmma_bulk_kernel<3>,
         tsm2_dmma_bulk_kernel<4>}};
    static const stream_fn<float> f32[2][4] = {
        {tsm2_tf32x3_rows_kernel<1, false>, tsm2_tf32x3_rows_kernel<2, false>,
         tsm2_tf32x3_rows_kernel<3, false>, tsm2_tf32x3_rows_kernel<4, false>},
        {tsm2_tf32x3_rows_kernel<1, true>, tsm2_tf32x3_rows_kernel<2, true>,
         tsm2_tf32x3_rows_kernel<3, true>, tsm2_tf32x3_rows_kernel<4, true>}};
    if (t2 < 1 || t2 > 32)
        return nullptr;
    if (ring < KERN_TSM2_RING_NONE || ring > KERN_TSM2_RING_BULK)
        return nullptr;
    static const stream_fn<double> f64odd[4] = {
        tsm2_dmma_rows_kernel<1, true>, tsm2_dmma_rows_kernel<2, true>,
        tsm2_dmma_rows_kernel<3, true>, tsm2_dmma_rows_kernel<4, true>};
    const bool odd = kern_tsm2_walk_odd_at(prec, ring, m);
    if (prec == KERNELS_FP64)
        return (const void *)(odd ? f64odd : f64[ring])[(t2 - 1) / 8];
    return (const void *)f32[odd][(t2 - 1) / 8];
}

/* fp64: one stage of B, with the ring: and each warp's ring of A (ROWS_STAGES tiles of 16 rows
 * x k rounded up to 4, ROWS_LD apart); fp32: the stage and its two TF32 parts */
extern "C" size_t kern_tsm2_tc_rows_smem(int prec, long t2, long k, long threads, int ring)
{
    const size_t stage = (size_t)((t2 + 7) / 8 * 8) * (size_t)KCP;
    const size_t tiles =
        ring ? (size_t)(threads / 32) * ROWS_STAGES * (size_t)((k + 3) / 4 * 4) * ROWS_LD : 0;
    if (ring == KERN_TSM2_RING_BULK) /* B's stage of 32 k, BULK_STAGES block tiles of 16 rows a
                                        warp, C's block tile, two barriers a stage (8 bytes) */
        return ((size_t)((t2 + 7) / 8 * 8) * BULK_KS +
                (size_t)(BULK_STAGES * ((k + 3) / 4 * 4) + (t2 + 7) / 8 * 8) *
                    (size_t)(16 * (threads / 32) + 4) +
                2 * BULK_STAGES) *
               sizeof(double);
    return prec == KERNELS_FP64 ? (stage + tiles) * sizeof(double) : 3 * stage * sizeof(float);
}

extern "C" size_t kern_tsm2_tc_smem(int prec, long t2)
{
    return (size_t)2 * (size_t)((t2 + 7) / 8 * 8) * (size_t)KCP * kern_elem(prec);
}

extern "C" size_t kern_tsm2_stream_smem(int prec, long t2)
{
    return (size_t)2 * (size_t)t2 * KC * kern_elem(prec);
}
