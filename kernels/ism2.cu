/*
 * ism2.cu - ISM2 (004_dab40fe45003313a.txt §5.2): A (m x k) with k small times B (k x n), the
 * kernels that walk the rows of A with B held in shared memory. ISM2 opt. 1 through the ring
 * (apipe 1) runs tsm2.cu's V3 kernel with a smaller grid; this file holds the B-whole rows
 * kernel of opt. 1 (apipe 2, an H100 extension) and opt. 2 (Alg. 7), with their
 * instantiation tables. tsm2.cu resolves and launches them (kern_ism2_rows_kernel,
 * kern_ism2_opt2_kernel).
 */
#include "common.h"
#include "cp_async.cuh"
#include "internal.h"
#include "tsm2_common.cuh"

#include <cuda_runtime.h>

namespace
{

/* ---- ISM2 opt. 1 with B held whole (apipe = 2) --------------------------- */

/*
 * H100 extension of Alg. 6 for B small enough to sit whole in shared memory (ISM2's
 * k = n = 8 or 16: 0.25-2 KB). Alg. 6 runs Alg. 4 once per row tile; with k <= t1 its
 * loop over tiles of B has one trip, so the tile is the same for every row a block
 * owns: it is stored once per block (column-major, k rounded up to t3 and n to t2, zero
 * padded) and no barrier follows. Each thread then walks one stream of items (row r,
 * columns p..p+t2, group g of t3 elements of the row), rows r, r + m/tcf, ...; Alg. 4's
 * nextA holds the next item's group, which at the end of a row is the first group of
 * the thread's next row, so one group is always in flight. The cp.async ring (apipe =
 * 1) spent ~400 instructions per row of k = n = 8 on its producer, bounds checks and
 * barriers (ncu, docs/perf-notes.md "tune"); this loop spends the loads, the FMAs of
 * the rank-t3 updates and the stores.
 */
template <typename T, int T2, int T3>
__global__ void ism2_rows_kernel(const T *__restrict__ A, const T *__restrict__ B,
                                 T *__restrict__ C, long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *Bs = reinterpret_cast<T *>(kern_smem);
    const int ng = (int)((k + T3 - 1) / T3); /* groups of t3 per row */
    const int kp = ng * T3;                  /* leading dimension of Bs */
    const int np = (int)((n + T2 - 1) / T2) * T2;
    const long stride = (long)gridDim.x * blockDim.x;
    long r = blockIdx.x * (long)blockDim.x + threadIdx.x;
    const bool full = kp == k; /* every group lies inside the row: no column checks */
    T cur[T3], nxt[T3], c[T2];
    /* the first group of A is requested before B is staged: the two fetches overlap */
    if (r < m) {
        if (full)
            lda_n<T, T3, false>(cur, A + r, 0, k, m);
        else
            lda_n<T, T3, true>(cur, A + r, 0, k, m);
    }
    for (int i = threadIdx.x; i < kp * np; i += blockDim.x) {
        const int j = i % kp, q = i / kp;
        Bs[i] = (j < k && q < n) ? B[j + (long)q * k] : T(0);
    }
    __syncthreads();
    if (r >= m)
        return; /* no barrier below */
#pragma unroll
    for (int q = 0; q < T2; q++)
        c[q] = T(0);
    int p = 0, g = 0;
#pragma unroll 1
    for (;;) {
        /* The next item of this thread's stream. */
        long rn = r;
        int pn = p, gn = g + 1;
        if (gn == ng) {
            gn = 0;
            pn = p + T2;
            if (pn >= n) {
                pn = 0;
                rn = r + stride;
            }
        }
        if (rn < m) { /* Alg. 4 lines 26-30: prefetch while this group is used */
            if (full)
                lda_n<T, T3, false>(nxt, A + rn, (long)gn * T3, k, m);
            else
                lda_n<T, T3, true>(nxt, A + rn, (long)gn * T3, k, m);
        }
        fma_tile<T, T2, T3>(c, cur, Bs + p * kp + g * T3, kp);
        if (gn == 0) { /* the row's columns p..p+t2 are complete */
#pragma unroll
            for (int q = 0; q < T2; q++) {
                if (p + q < n)
                    C[r + (long)(p + q) * m] = c[q];
                c[q] = T(0);
            }
        }
        if (rn >= m)
            break;
        r = rn;
        p = pn;
        g = gn;
#pragma unroll
        for (int x = 0; x < T3; x++)
            cur[x] = nxt[x];
    }
}

/* A vector of V rows of a column of C at pc: one streaming 16-byte store where the column is
 * 16-byte aligned (whole), else element by element, those below m. */
template <typename T, int V>
__device__ __forceinline__ void store_rows(T *pc, const T (&c)[V], long row, long m, bool whole)
{
    typedef typename vec<T, V>::type VT;
    if (whole) {
        __stcs(reinterpret_cast<VT *>(pc), pack(c));
    } else {
#pragma unroll
        for (int x = 0; x < V; x++)
            if (row + x < m)
                pc[x] = c[x];
    }
}

/* ---- ISM2 opt. 1 with rows in vectors (apipe = 3) ------------------------ */

/*
 * H100 extension of Alg. 6 for k <= KERN_ISM2_VEC_MAXK, where a row of A is a few bytes: the
 * rows kernel above keeps one group of one row (4-8 bytes) in flight a thread, and a warp's
 * loads of a column are 128 bytes, so at k = 1-2 the DRAM sees too few bytes in flight to
 * stream (Little's law; fp32 10^7 x 1 x 1 ran at 0.53 of the copy ceiling). Here a thread owns
 * vectors of V = 16 / sizeof(T) consecutive rows (a float4 or double2 of each column of A),
 * U = 8 / K of them at once with all their K columns (K = 1, 2, 3, 4, 6, 8, 12, 16, 24 or 32,
 * the least covering k: no padded column of A is multiplied where k is one of them): about 128
 * bytes in flight a thread (one vector from K = 6: 96-512 bytes), loaded
 * together (evict-first: A is read once). B sits in shared memory, K x n, zero past k (B is
 * at most KERN_ISM2_VEC_MAXK x 32), read as a broadcast; for each column of C the thread sums
 * K products a row and stores a vector of V rows (streaming: C is written once). Up to K = 8
 * the next round's U vectors are loaded before this round's columns of C are stored, so that a
 * thread's loads stay in flight through its stores (fp32 10^7 x 32 x 1: 478 -> 423 us, 8 x 1
 * 135 -> 119; 95-113 registers); from K = 16 the two rounds would not fit in registers, and fp64 at
 * K = 1 is faster without (below). Above K = 8, in fp32 at K 12-32 where a thread walks several
 * rounds of many columns, the AHEAD instantiation copies the next round into the thread's own slots
 * of shared memory instead (internal.h kern_ism2_vec_ahead_rule says where and why). The vectors of
 * a thread are v, v + S, ... (S the threads of gridDim.x): a warp's loads and stores of one column
 * are 512 contiguous bytes. Where m is not a multiple of V a column of A is not 16-byte aligned:
 * the SIDE and LINE instantiations then take V single rows 32 apart (side_row: a warp's loads and
 * stores of a column stay rows side by side), LINE storing C in whole lines (store_lines); ROWS
 * loads and stores such vectors element by element (internal.h kern_ism2_vec_layout says which
 * where). gridDim.y slices the columns of C (t2 a slice, tsm2.cu), for rows too few to keep every
 * SM busy with one slice: a block then reads its rows of A (again, from the L2) for its slice.
 */
template <typename T, int K, int L>
__global__ void __launch_bounds__(256)
    ism2_vec_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                    long n, long k)
{
    constexpr int V = 16 / (int)sizeof(T);
    constexpr int U = K >= 8 ? 1 : 8 / K; /* kern_ism2_vec_inflight */
    constexpr bool SIDE = L == KERN_ISM2_VEC_SIDE, LINE = L == KERN_ISM2_VEC_LINE;
    constexpr bool AHEAD = L == KERN_ISM2_VEC_AHEAD;
    typedef typename vec<T, V>::type VT;
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *Bs = reinterpret_cast<T *>(kern_smem);
    /* B, K x n in shared memory; called once A's first round is requested, so that the two
     * fetches overlap */
    auto stage_b = [&]() {
        for (long i = threadIdx.x; i < K * n; i += blockDim.x) {
            const int l = (int)(i % K);
            Bs[i] = l < k ? B[l + i / K * k] : T(0);
        }
        __syncthreads();
    };

    const bool whole = m % V == 0; /* every column of A and C 16-byte aligned */
    const long nv = (m + V - 1) / V, stride = (long)gridDim.x * blockDim.x;
    /* SIDE and LINE (m not a multiple of V): rows side by side (tsm2_common.cuh side_base). SIDE
     * runs a round while the thread's first row is inside m, LINE while the warp's is (its stores
     * shuffle between all 32 lanes: tsm2.cu takes LINE only with whole warps). Otherwise vector v
     * is rows v V .. v V + V - 1. */
    auto side_row = [&](long v0, int u, int x) {
        const long v = v0 + u * stride;
        return side_base<V>(v) + (v & 31) + 32 * x;
    };
    auto side_live = [&](long v0) { return side_base<V>(v0) + (v0 & 31) < m; };
    auto line_live = [&](long v0) { return side_base<V>(v0) < m; };
    /* SIDE: column l of vector u's rows, zeros past k and m */
    auto side_load = [&](T(&d)[V], long v0, int u, int l) {
#pragma unroll
        for (int x = 0; x < V; x++) {
            const long r = side_row(v0, u, x);
            d[x] = l < k && r < m ? __ldcs(A + r + l * m) : T(0);
        }
    };
    const int lane = (int)(threadIdx.x & 31);
    /* vector u of the round at v0, rows from `row` (ROWS), is no thread's work: past m (LINE: the
     * warp's rows past it, as its shuffles need every lane; SIDE stores row by row below m) */
    auto idle = [&](long row) { return LINE ? side_base<V>(row / V) >= m : !SIDE && row >= m; };
    const long cs = (n + gridDim.y - 1) / gridDim.y, j0 = blockIdx.y * cs;
    const long j1 = j0 + cs < n ? j0 + cs : n;
    /* A's vectors v0 + u S, u < U, all K columns; zeros past k and m */
    auto load = [&](T(&d)[U][K][V], long v0) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long row = (v0 + u * stride) * V;
#pragma unroll
            for (int l = 0; l < K; l++) {
                const T *pa = A + row + l * m;
                if constexpr (SIDE || LINE) {
                    side_load(d[u][l], v0, u, l);
                } else if (l < k && row < m && whole) {
                    unpack(d[u][l], __ldcs(reinterpret_cast<const VT *>(pa)));
                } else {
#pragma unroll
                    for (int x = 0; x < V; x++)
                        d[u][l][x] = l < k && row + x < m ? __ldcs(pa + x) : T(0);
                }
            }
        }
    };
    /* K <= 8: the next round's vectors load while this round's columns of C are stored; not for
     * fp64 at K = 1 (100 -> 110 registers, and 10^5 x 16-32 x 1 11-14 % slower on the H100) */
    constexpr bool PF = K <= 8 && !(sizeof(T) == 8 && K == 1);
    /* SIDE: vector u's rows of the column at pc, those inside m */
    auto store_side = [&](T *pc, const T(&c)[V], long v0, int u) {
#pragma unroll
        for (int x = 0; x < V; x++) {
            const long r = side_row(v0, u, x);
            if (r < m)
                __stcs(pc + r, c[x]);
        }
    };
    /* column j of that vector, c, into C in the layout's way */
    auto store_vec = [&](long j, const T(&c)[V], long v0, int u, long row) {
        if constexpr (LINE)
            store_lines(C + j * m, side_base<V>(v0 + u * stride), m, c, lane);
        else if constexpr (SIDE)
            store_side(C + j * m, c, v0, u);
        else
            store_rows(C + row + j * m, c, row, m, whole);
    };
    /* this round's columns of C from the vectors a of rows (v0 + u S) V */
    auto store_round = [&](const T(&a)[U][K][V], long v0) {
#pragma unroll 1
        for (long j = j0; j < j1; j++) {
            T b[K];
            lds_n<T, K>(b, Bs + j * K);
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long row = (v0 + u * stride) * V;
                if (idle(row))
                    continue;
                T c[V];
#pragma unroll
                for (int x = 0; x < V; x++) {
                    c[x] = a[u][0][x] * b[0];
#pragma unroll
                    for (int l = 1; l < K; l++)
                        c[x] = fma(a[u][l][x], b[l], c[x]);
                }
                store_vec(j, c, v0, u, row);
            }
        }
    };
    const long first = blockIdx.x * (long)blockDim.x + threadIdx.x;
    /* whether a round runs is written out at each loop below: through one lambda nvcc scheduled
     * the aligned (ROWS) kernels differently, and their grids' figures were measured as they are */
    if constexpr (PF) {
        T a[U][K][V], nx[U][K][V];
        if (SIDE ? side_live(first) : LINE ? line_live(first) : first < nv)
            load(a, first);
        stage_b();
#pragma unroll 1
        for (long v0 = first; SIDE   ? side_live(v0)
                              : LINE ? line_live(v0)
                                     : v0 < nv;
             v0 += U * stride) {
            if (SIDE   ? side_live(v0 + U * stride)
                : LINE ? line_live(v0 + U * stride)
                       : v0 + U * stride < nv)
                load(nx, v0 + U * stride);
            store_round(a, v0);
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int l = 0; l < K; l++)
#pragma unroll
                    for (int x = 0; x < V; x++)
                        a[u][l][x] = nx[u][l][x];
        }
    } else if constexpr (AHEAD && U == 1) {
        /* AHEAD (internal.h): the next round's vector copied into the thread's own slots of
         * shared memory, behind B, while this round's columns are summed and stored; the slots
         * move to registers before the next copy is asked for. A thread's K slots are 16 bytes
         * apart and the threads' K + 1 vectors apart, so that the copies and reads of a warp
         * fall in different banks. No barrier: a thread reads only its own slots. */
        T *const As = Bs + (K * n + V - 1) / V * V + threadIdx.x * (K + 1) * V;
        auto slot = [&](int l) { return As + l * V; };
        auto issue = [&](long v0) {
            const long row = v0 * V;
            const T *pa = A + row;
#pragma unroll
            for (int l = 0; l < K; l++) {
                const bool ok = l < k && row < m;
                cp_async_elem<16>(slot(l), ok ? pa : A, ok);
                pa += m;
            }
            cp_async_commit();
        };
        const long v00 = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (v00 < nv)
            issue(v00);
        stage_b();
#pragma unroll 1
        for (long v0 = v00; v0 < nv; v0 += stride) {
            T a[1][K][V];
            cp_async_wait<0>();
#pragma unroll
            for (int l = 0; l < K; l++)
                unpack(a[0][l], *reinterpret_cast<const VT *>(slot(l)));
            if (v0 + stride < nv)
                issue(v0 + stride);
            store_round(a, v0);
        }
    } else {
        /* A round's loads, then its stores: load and store_round written out, not called. nvcc
         * compiles the calls differently (fp64 K = 1: 106 registers against 100), and on the
         * H100 (kbench, both builds twice in one call) fp64 10^5 x 8-32 x 1 ran 2.5-7.7 %
         * slower through them (32 x 1: 12.6 against 11.7 us); at K = 16 within -3.4 to +2.2 %.
         * B is staged first here: the first round's loads sit inside the loop. */
        stage_b();
#pragma unroll 1
        for (long v0 = blockIdx.x * (long)blockDim.x + threadIdx.x; SIDE   ? side_live(v0)
                                                                    : LINE ? line_live(v0)
                                                                           : v0 < nv;
             v0 += U * stride) {
            T a[U][K][V];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long row = (v0 + u * stride) * V;
#pragma unroll
                for (int l = 0; l < K; l++) {
                    const T *pa = A + row + l * m;
                    if constexpr (SIDE || LINE) {
                        side_load(a[u][l], v0, u, l);
                    } else if (l < k && row < m && whole) {
                        unpack(a[u][l], __ldcs(reinterpret_cast<const VT *>(pa)));
                    } else {
#pragma unroll
                        for (int x = 0; x < V; x++)
                            a[u][l][x] = l < k && row + x < m ? __ldcs(pa + x) : T(0);
                    }
                }
            }
#pragma unroll 1
            for (long j = j0; j < j1; j++) {
                T b[K];
                lds_n<T, K>(b, Bs + j * K);
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const long row = (v0 + u * stride) * V;
                    if (idle(row))
                        continue;
                    T c[V];
#pragma unroll
                    for (int x = 0; x < V; x++) {
                        c[x] = a[u][0][x] * b[0];
#pragma unroll
                        for (int l = 1; l < K; l++)
                            c[x] = fma(a[u][l][x], b[l], c[x]);
                    }
                    store_vec(j, c, v0, u, row);
                }
            }
        }
    }
}

/*
 * ISM2 opt. 1 at k = 1, C = A B an outer product, and at k = 2, a rank-2 update (apipe 5, an
 * H100 extension; K = k): a thread owns one vector of V rows of A's K columns at a time
 * (gridDim.x threads walk the rest; tcf 1 by default, one each), and for each column j of its
 * slice (gridDim.y slices, as the vector kernel's) stores those rows times column j of B, read
 * through the L1 (K values, the same for every thread of a warp). Nothing to stage, so no B in
 * shared memory and no barrier. The
 * vector kernel at K = 1 stages B behind a barrier and holds U = 8 vectors a thread (100
 * registers for fp64), so at 10^5 rows it runs a few thousand threads, each storing column by
 * column; here 25000-50000 threads keep more stores going. On an H100 a microbenchmark of one
 * vector a thread and 8 columns a slice (L2 flushed ahead, 31 repetitions, one process) ran fp64
 * 10^5 x 16 / 24 / 32 x 1 in 6.75-6.78 / 8.51-8.58 / 9.89-10.05 us against cuBLAS's gemmk1
 * kernel's 7.46-7.52 / 9.15 / 10.27-10.62 and a kernel that only stores zeros 6.53-6.56 /
 * 8.10-8.13 / 9.66-9.79; the vector kernel took 9.15-9.31 / 10.85 at 24 / 32 columns (its best
 * slices; 8 columns a slice 10.9-12.3).
 */
template <typename T, int K, bool ODD>
__global__ void __launch_bounds__(256)
    ism2_outer_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                      long n, long k)
{
    constexpr int V = 16 / (int)sizeof(T);
    typedef typename vec<T, V>::type VT;
    (void)k; /* K: B's values of column j are B[j K] .. B[j K + K - 1] */
    const long nv = (m + V - 1) / V, stride = (long)gridDim.x * blockDim.x;
    const long cs = (n + gridDim.y - 1) / gridDim.y, j0 = blockIdx.y * cs;
    const long j1 = j0 + cs < n ? j0 + cs : n;
    /* column j of B: K values */
    auto bcol = [&](T(&b)[K], long j) {
#pragma unroll
        for (int l = 0; l < K; l++)
            b[l] = __ldg(B + j * K + l);
    };
    /* C(row, j) from the row's K values of A and column j of B */
    auto dot = [](const T *a, const T *b, int x) {
        T c = a[x] * b[0];
#pragma unroll
        for (int l = 1; l < K; l++)
            c = fma(a[l * V + x], b[l], c);
        return c;
    };
    if constexpr (ODD) {
        /* (ODD: m not a multiple of V, its own instantiation: the stores in lines took the
         * aligned kernel from 40 to 80 registers, fp32 at K = 1) a column of C not 16-byte aligned:
         * rows side by side (side_base, as the vector kernel's SIDE and LINE), and with whole
         * warps C stored in whole runs of 32 elements (store_lines). A vector of V rows stored
         * element by element left each warp store a quarter (fp32) or half of the bytes it spans:
         * on an H100 fp32 299999 x 32 x 1 ran 30.8 us that way, 18.0 with V rows a thread the whole
         * grid's threads apart (cuBLAS 19.9), fp64 299999 x 32 x 1 56.4 -> 30.6 (cuBLAS 36.1),
         * 100003 x 24 x 1 15.6 -> 9.6 */
        const bool lines = blockDim.x % 32 == 0 && m >= KERN_ISM2_VEC_WIDE_ROWS && n >= 8;
        const int lane = (int)(threadIdx.x & 31);
#pragma unroll 1
        for (long v = blockIdx.x * (long)blockDim.x + threadIdx.x;
             side_base<V>(v) + (lines ? 0 : v & 31) < m; v += stride) {
            const long base = side_base<V>(v), r0 = base + (v & 31);
            T a[K * V]; /* rows r0, r0 + 32, ...: the loads of a round in flight together */
#pragma unroll
            for (int l = 0; l < K; l++)
#pragma unroll
                for (int x = 0; x < V; x++)
                    a[l * V + x] = r0 + 32 * x < m ? __ldg(A + r0 + 32 * x + l * m) : T(0);
#pragma unroll 4
            for (long j = j0; j < j1; j++) {
                T b[K];
                bcol(b, j);
                T c[V];
#pragma unroll
                for (int x = 0; x < V; x++)
                    c[x] = dot(a, b, x);
                if (lines) {
                    store_lines(C + j * m, base, m, c, lane);
                } else {
#pragma unroll
                    for (int x = 0; x < V; x++)
                        if (r0 + 32 * x < m)
                            __stcs(C + r0 + 32 * x + j * m, c[x]);
                }
            }
        }
    } else {
#pragma unroll 1
        for (long v = blockIdx.x * (long)blockDim.x + threadIdx.x; v < nv; v += stride) {
            const long row = v * V;
            T a[K * V];
#pragma unroll
            for (int l = 0; l < K; l++) {
                T t[V];
                unpack(t, __ldg(reinterpret_cast<const VT *>(A + row + l * m)));
#pragma unroll
                for (int x = 0; x < V; x++)
                    a[l * V + x] = t[x];
            }
#pragma unroll 8
            for (long j = j0; j < j1; j++) {
                T b[K];
                bcol(b, j);
                T c[V];
#pragma unroll
                for (int x = 0; x < V; x++)
                    c[x] = dot(a, b, x);
                store_rows(C + row + j * m, c, row, m, true);
            }
        }
    }
}

/* ---- ISM2 optimisation 2 ------------------------------------------------ */

/*
 * Alg. 7: for each tile of B (loaded once), every thread sweeps rows r, r + T, ...
 * (T = m/tcf threads in all). C holds the sum so far between tiles of B, so C is
 * loaded (prefetched one row ahead, nextC) except for the first tile, which starts
 * from zero: the harness poisons C, and C = A*B needs no initial value. The next
 * group of A is prefetched across row boundaries (Alg. 4 lines 26-38 per row).
 */
/* Alg. 7 adds nextC to Alg. 4's registers. */
template <typename T, int T2, int T3> constexpr int opt2_regs()
{
    return tsm2_regs<T, T2, T3>() + T2 * (int)(sizeof(T) / 4) > 255
               ? 255
               : tsm2_regs<T, T2, T3>() + T2 * (int)(sizeof(T) / 4);
}

template <typename T, int T2, int T3>
__global__ void __maxnreg__((opt2_regs<T, T2, T3>()))
    ism2_opt2_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                     long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *Bs = reinterpret_cast<T *>(kern_smem);
    const int t1 = blockDim.x;
    const int tid = threadIdx.x;
    const long total = (long)gridDim.x * t1;
    const long r0 = blockIdx.x * (long)t1 + tid;

    for (long p = 0; p < n; p += T2) {
        for (long j = 0; j < k; j += t1) {
            T b[T2];
            __syncthreads();
            ldb_row<T, T2>(b, B, j, k, p, n, k, tid);
            stb_row<T, T2>(Bs, b, t1, tid);
            __syncthreads();

            const bool first = (j == 0);
            const int lend = (int)min((long)t1, k - j);
            T c[T2], nextC[T2], curA[T3], nextA[T3];
#pragma unroll
            for (int q = 0; q < T2; q++)
                c[q] = (!first && r0 < m && p + q < n) ? C[r0 + (p + q) * m] : T(0);
            lda_n<T, T3, true>(curA, A + min(r0, m - 1), j, j + lend, m);

            for (long r = r0; r < m; r += total) {
                const long rn = r + total;
#pragma unroll
                for (int q = 0; q < T2; q++) /* lines 22-28: prefetch the next C */
                    nextC[q] = (!first && rn < m && p + q < n) ? C[rn + (p + q) * m] : T(0);
#pragma unroll 1
                for (int l = 0; l < lend; l += T3) {
                    const bool same_row = l + T3 < lend;
                    const long rr = same_row ? r : min(rn, m - 1);
                    const long ll = same_row ? l + T3 : 0;
                    lda_n<T, T3, true>(nextA, A + rr, j + ll, j + lend, m);
                    fma_tile<T, T2, T3>(c, curA, Bs + l, t1);
#pragma unroll
                    for (int x = 0; x < T3; x++)
                        curA[x] = nextA[x];
                }
#pragma unroll
                for (int q = 0; q < T2; q++) { /* lines 31-39 */
                    if (p + q < n)
                        C[r + (p + q) * m] = c[q];
                    c[q] = nextC[q];
                }
            }
        }
    }
}

template <typename T> using opt2_fn = void (*)(const T *, const T *, T *, long, long, long);

/* The 5 x 5 (t2, t3) instantiations of a kernel templated <T, T2, T3> (ISM2 opt. 2 and the
 * B-whole opt. 1 kernel share the signature). */
#define RK_T2T3_ROW(K, T, T2)                                                                      \
    {                                                                                              \
        K<T, T2, 1>, K<T, T2, 2>, K<T, T2, 4>, K<T, T2, 8>, K<T, T2, 16>                           \
    }
#define RK_T2T3_TABLE(K, T)                                                                        \
    {                                                                                              \
        RK_T2T3_ROW(K, T, 1), RK_T2T3_ROW(K, T, 2), RK_T2T3_ROW(K, T, 4), RK_T2T3_ROW(K, T, 8),    \
            RK_T2T3_ROW(K, T, 16)                                                                  \
    }

template <typename T> opt2_fn<T> pick_opt2(long t2, long t3)
{
    static const opt2_fn<T> table[5][5] = RK_T2T3_TABLE(ism2_opt2_kernel, T);
    return table[ilog2_pow2(t2)][ilog2_pow2(t3)];
}

/* The rows kernel also covers n = 17-32 in one pass over a row's columns (kernels.h
 * KERNELS_ISM2_WIDE_COLS: t2 24 and 32 with t3 4, 8, 16), where t2 = 16 walks each row twice. */
template <typename T> opt2_fn<T> pick_rows(long t2, long t3)
{
    static const opt2_fn<T> table[5][5] = RK_T2T3_TABLE(ism2_rows_kernel, T);
    static const opt2_fn<T> wide[2][3] = {
        {ism2_rows_kernel<T, 24, 4>, ism2_rows_kernel<T, 24, 8>, ism2_rows_kernel<T, 24, 16>},
        {ism2_rows_kernel<T, 32, 4>, ism2_rows_kernel<T, 32, 8>, ism2_rows_kernel<T, 32, 16>}};
    if (t2 == 24 || t2 == 32)
        return t3 >= 4 && ilog2_pow2(t3) >= 2 ? wide[t2 == 32][ilog2_pow2(t3) - 2] : nullptr;
    return table[ilog2_pow2(t2)][ilog2_pow2(t3)];
}

/* The vector kernel for each K of KERN_ISM2_VEC_KS, in its order. */
template <typename T> using vec_fn = void (*)(const T *, const T *, T *, long, long, long);
template <typename T, int L, int... Ks> struct vec_table {
    static constexpr vec_fn<T> fns[sizeof...(Ks)] = {ism2_vec_kernel<T, Ks, L>...};
};

/* The one of them for K = t3, or NULL. */
template <typename T, int L, int... Ks> const void *vec_pick(long t3)
{
    static constexpr long ks[] = {Ks...};
    for (int i = 0; i < (int)sizeof...(Ks); i++)
        if (ks[i] == t3)
            return (const void *)vec_table<T, L, Ks...>::fns[i];
    return nullptr;
}

template <int L> const void *vec_kernel(int prec, long t3)
{
    return prec == KERNELS_FP64 ? vec_pick<double, L, KERN_ISM2_VEC_KS>(t3)
                                : vec_pick<float, L, KERN_ISM2_VEC_KS>(t3);
}

/* AHEAD's instantiations: fp32, K from KERN_ISM2_VEC_AHEAD_MINK (internal.h says why). */
const void *ahead_kernel(long t3)
{
    static_assert(KERN_ISM2_VEC_AHEAD_MINK == 12, "the first K of AHEAD's instantiations");
    return vec_pick<float, KERN_ISM2_VEC_AHEAD, 12, 16, 24, 32>(t3);
}

} // namespace

extern "C" const void *kern_ism2_rows_kernel(int prec, long t2, long t3)
{
    return prec == KERNELS_FP64 ? (const void *)pick_rows<double>(t2, t3)
                                : (const void *)pick_rows<float>(t2, t3);
}

extern "C" const void *kern_ism2_vec_kernel(int prec, long t3, int layout)
{
    switch (layout) {
    case KERN_ISM2_VEC_SIDE:
        return vec_kernel<KERN_ISM2_VEC_SIDE>(prec, t3);
    case KERN_ISM2_VEC_LINE:
        return vec_kernel<KERN_ISM2_VEC_LINE>(prec, t3);
    case KERN_ISM2_VEC_AHEAD:
        return prec == KERNELS_FP32 ? ahead_kernel(t3) : nullptr;
    default:
        return vec_kernel<KERN_ISM2_VEC_ROWS>(prec, t3);
    }
}

template <bool ODD> static const void *outer_kernel(int prec, long k)
{
    if (k == 2)
        return prec == KERNELS_FP64 ? (const void *)ism2_outer_kernel<double, 2, ODD>
                                    : (const void *)ism2_outer_kernel<float, 2, ODD>;
    return prec == KERNELS_FP64 ? (const void *)ism2_outer_kernel<double, 1, ODD>
                                : (const void *)ism2_outer_kernel<float, 1, ODD>;
}

extern "C" const void *kern_ism2_outer_kernel(int prec, long m, long k)
{
    return m % kern_ism2_vec_rows(prec) != 0 ? outer_kernel<true>(prec, k)
                                             : outer_kernel<false>(prec, k);
}

extern "C" const void *kern_ism2_opt2_kernel(int prec, long t2, long t3)
{
    return prec == KERNELS_FP64 ? (const void *)pick_opt2<double>(t2, t3)
                                : (const void *)pick_opt2<float>(t2, t3);
}
