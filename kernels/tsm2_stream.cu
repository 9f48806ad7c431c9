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

#include <cuda_runtime.h>

#include <utility>

namespace
{

template <typename T> struct v16;
template <> struct v16<float> {
    typedef float4 type;
    enum { lanes = 4 };
};
template <> struct v16<double> {
    typedef double2 type;
    enum { lanes = 2 };
};

/* R consecutive elements as one load or store of R x sizeof(T) bytes (8 or 16). */
template <typename T, int R> struct vec;
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

constexpr int KC = KERN_TSM2_STREAM_KC;

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
    typedef typename v16<T>::type VB;             /* G values of k of a column of B */
    constexpr int G = v16<T>::lanes;              /* k per shared load of a column of B */
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
        T *dst = Bs + s * N * KC;
        if (bvec) {
            constexpr int VPC = KC / G;
            for (int i = tid; i < N * VPC; i += blockDim.x) {
                const int c = i / VPC, kk = (i % VPC) * G;
                const long kg = c0 + kk;
                const bool ok = kg < ke && c < n; /* ke is a multiple of G here */
                cp_async_elem<16>(dst + c * KC + kk, ok ? B + kg + (long)c * k : B, ok);
            }
        } else {
            for (int i = tid; i < N * KC; i += blockDim.x) {
                const int c = i / KC, kk = i % KC;
                const long kg = c0 + kk;
                const bool ok = kg < ke && c < n;
                cp_async_elem<sizeof(T)>(dst + c * KC + kk, ok ? B + kg + (long)c * k : B, ok);
            }
        }
        cp_async_commit();
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
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < N; c++)
            acc[r][c] = T(0);

    T ar[UG][G][R]; /* the ring: the next UG groups */
#pragma unroll
    for (int u = 0; u < UG; u++)
        load_group(ar[u]);

    const long nchunks = (ke - kb + KC - 1) / KC;
    if (nchunks > 0)
        fill(0, kb);
    int s = 0;
#pragma unroll 1
    for (long ch = 0; ch < nchunks; ch++) {
        if (ch + 1 < nchunks)
            fill(s ^ 1, kb + (ch + 1) * KC);
        else
            cp_async_commit(); /* an empty group keeps the count of wait_group uniform */
        cp_async_wait<1>();
        __syncthreads(); /* stage s complete for every thread */
        const T *bs = Bs + s * N * KC;
#pragma unroll 1
        for (int g0 = 0; g0 < KC / G; g0 += UG) {
#pragma unroll
            for (int u = 0; u < UG; u++) {
                T a[G][R];
#pragma unroll
                for (int x = 0; x < G; x++)
#pragma unroll
                    for (int r = 0; r < R; r++)
                        a[x][r] = ar[u][x][r];
                load_group(ar[u]); /* UG groups ahead */
                const T *bk = bs + (g0 + u) * G;
#pragma unroll
                for (int c = 0; c < N; c++) {
                    T b[G];
                    unpack(b, *reinterpret_cast<const VB *>(bk + c * KC));
#pragma unroll
                    for (int x = 0; x < G; x++)
#pragma unroll
                        for (int r = 0; r < R; r++)
                            acc[r][c] = fma(a[x][r], b[x], acc[r][c]);
                }
            }
        }
        __syncthreads(); /* stage s read by every thread before it is filled again */
        s ^= 1;
    }
    cp_async_wait<0>();
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

extern "C" size_t kern_tsm2_stream_smem(int prec, long t2)
{
    return (size_t)2 * (size_t)t2 * KC * kern_elem(prec);
}
