/*
 * tsm2_common.cuh - what tsm2.cu (TSM2 V2, V3 and the split-k reduction), tsm2_stream.cu (V3
 * streaming A) and ism2.cu (ISM2 optimisations 1 and 2) share: vector loads and stores, the
 * device helpers of the paper's algorithms (004_dab40fe45003313a.txt §3.3-3.5 and §5.2: loads of
 * A and B, the rank-t3 update, for one row or V), the register budget of Alg. 4's arrays, and the
 * index of a power-of-two tile in the instantiation tables.
 * Included by .cu files of kernels/ only.
 */
#ifndef RK_KERNELS_TSM2_COMMON_CUH
#define RK_KERNELS_TSM2_COMMON_CUH

#include "internal.h"

#include <cuda_runtime.h>

namespace
{

/* ---- device helpers ------------------------------------------------------ */

/* R consecutive elements as one load or store of R x sizeof(T) bytes (4 to 16), and an array
 * of R from or to one. */
template <typename T, int R> struct vec;
template <> struct vec<float, 1> {
    typedef float type;
};
template <> struct vec<float, 2> {
    typedef float2 type;
};
template <> struct vec<float, 4> {
    typedef float4 type;
};
template <> struct vec<double, 1> {
    typedef double type;
};
template <> struct vec<double, 2> {
    typedef double2 type;
};

__device__ __forceinline__ void unpack(float (&d)[1], float v)
{
    d[0] = v;
}
__device__ __forceinline__ void unpack(float (&d)[2], const float2 &v)
{
    d[0] = v.x;
    d[1] = v.y;
}
__device__ __forceinline__ void unpack(float (&d)[4], const float4 &v)
{
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
    d[3] = v.w;
}
__device__ __forceinline__ void unpack(double (&d)[1], double v)
{
    d[0] = v;
}
__device__ __forceinline__ void unpack(double (&d)[2], const double2 &v)
{
    d[0] = v.x;
    d[1] = v.y;
}
__device__ __forceinline__ float2 pack(const float (&d)[2])
{
    return make_float2(d[0], d[1]);
}
__device__ __forceinline__ float4 pack(const float (&d)[4])
{
    return make_float4(d[0], d[1], d[2], d[3]);
}
__device__ __forceinline__ double pack(const double (&d)[1])
{
    return d[0];
}
__device__ __forceinline__ double2 pack(const double (&d)[2])
{
    return make_double2(d[0], d[1]);
}

/* Loads N consecutive elements from shared memory with the widest aligned loads (16 bytes,
 * else 8, else one element). */
template <typename T, int N> __device__ __forceinline__ void lds_n(T (&r)[N], const T *p)
{
    constexpr int W = sizeof(T) == 4 && N % 4 == 0 ? 4 : N % 2 == 0 ? 2 : 1;
    typedef typename vec<T, W>::type V;
#pragma unroll
    for (int i = 0; i < N / W; i++)
        unpack(reinterpret_cast<T(&)[W]>(r[W * i]), reinterpret_cast<const V *>(p)[i]);
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

/* c[v][q] += sum_x a[v][x] * Bs[q*t1 + l0 + x] for the V rows of a thread: each value of
 * B read from shared memory serves V rows (register blocking along m). */
template <typename T, int T2, int T3, int V>
__device__ __forceinline__ void fma_tile_v(T (&c)[V][T2], const T (&a)[V][T3], const T *bs, int t1)
{
#pragma unroll
    for (int q = 0; q < T2; q++) {
        T b[T3];
        lds_n<T, T3>(b, bs + q * t1);
#pragma unroll
        for (int v = 0; v < V; v++)
#pragma unroll
            for (int x = 0; x < T3; x++)
                c[v][q] = fma(a[v][x], b[x], c[v][q]);
    }
}

/* c[q] += sum_x a[x] * Bs[q*t1 + l0 + x]: the rank-t3 update of Alg. 3 lines 26-29 (one row). */
template <typename T, int T2, int T3>
__device__ __forceinline__ void fma_tile(T (&c)[T2], const T (&a)[T3], const T *bs, int t1)
{
    fma_tile_v<T, T2, T3, 1>(reinterpret_cast<T(&)[1][T2]>(c),
                             reinterpret_cast<const T(&)[1][T3]>(a), bs, t1);
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

/*
 * Rows side by side, for m not a multiple of the 16-byte vector (a column not aligned for it): the
 * vector of index v is V single rows 32 apart, a warp's 32 vectors (v >> 5 the same) the 32 V
 * consecutive rows from side_base(v), lane v & 31 taking rows side_base(v) + (v & 31) + 32 x, so
 * that each of the warp's loads and stores of a column is 32 rows side by side. The ISM2 vector
 * and outer-product kernels (layouts SIDE and LINE) and move use it.
 */
template <int V> __device__ __forceinline__ long side_base(long v)
{
    return (v >> 5) * (32 * V);
}

/*
 * A warp's rows base .. base + 32 V - 1 of one column of C (lane l holds rows base + l + 32 x in
 * c[x]) where the column is not 16-byte aligned (m not a multiple of the vector): stored in whole
 * runs of 32 elements (128 bytes for fp32, 256 for fp64) that start on a multiple of 32 elements,
 * the values rotated between lanes by one shuffle a store, V + 1 stores, of which the first and
 * last are the runs this warp shares with its neighbours. Stored as rows side by side instead,
 * each of a warp's stores would span two lines, written in halves by two stores; on an H100 the
 * DRAM bytes were the same (ncu) but fp32 10000001 x 32 x 1 took 601-657 us against 425 at m =
 * 10^7. Every lane of the warp must call it (the shuffles); rows at or past m are not stored.
 */
template <typename T, int V>
__device__ __forceinline__ void store_lines(T *col, long base, long m, const T (&c)[V], int lane)
{
    /* the chunk's first element's place in its run of 32 */
    const int s = (int)((reinterpret_cast<unsigned long long>(col + base) / sizeof(T)) & 31);
    const int src = (lane - s) & 31;
#pragma unroll
    for (int x = 0; x <= V; x++) {
        /* lane i sends its element of store x: c[x] where it lands in run x, else c[x - 1] */
        const T snd = lane < 32 - s ? c[x < V ? x : V - 1] : c[x > 0 ? x - 1 : 0];
        const T v = __shfl_sync(0xffffffffu, snd, src);
        const long q = 32L * x + lane - s; /* the row this lane stores, past base */
        if (q >= 0 && q < 32L * V && base + q < m)
            __stcs(col + base + q, v);
    }
}

#endif
