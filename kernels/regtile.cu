/*
 * regtile.cu - a register-tiled GEMM on the CUDA cores (no tensor cores), row-major
 * C = A B: how far a hand-written kernel gets beside cublasSgemm. Beyond the seeds;
 * it carries on where 003_d5ffc223df97ef85.txt §6 ("Even Odd Memory Scheme") and
 * 001_7cc6b74500dcf7c8.txt (1D block tiling) stop:
 *
 *   - 2D block tiling: a block computes BM x BN of C; each thread TM x TN outputs
 *     in registers, as two (TM/2) x (TN/2) ... halves BM/2 and BN/2 apart so that
 *     a warp's shared-memory fragment loads are 16-byte and conflict-free.
 *   - 16-byte global loads (float4 / double2) of the BM x BK tile of A and the
 *     BK x BN tile of B; A is stored transposed (As[k][m], rows padded by 16 bytes
 *     to avoid bank conflicts on the transposing stores).
 *   - Double-buffered shared memory (the seed's even/odd scheme): the next tiles
 *     are loaded into registers while the current ones are multiplied, then stored
 *     into the other buffer; one __syncthreads per BK step.
 *
 * fp32: BM = BN = 128, BK = 8, TM = TN = 8, 256 threads. fp64: BM = BN = 64, BK = 8,
 * TM = TN = 4, 256 threads (8 x 8 doubles would not fit in the registers).
 * A FAST instantiation needs m % BM = n % BN = k % BK = 0; every other shape takes
 * the CHECKED one, whose loads and stores test the bounds element by element.
 */
#include "common.h"
#include "internal.h"

#include <cuda_runtime.h>

namespace
{

template <typename T> struct vec16;
template <> struct vec16<float> {
    using type = float4;
    static constexpr int n = 4;
};
template <> struct vec16<double> {
    using type = double2;
    static constexpr int n = 2;
};

template <typename T>
__device__ __forceinline__ void unpack(T *dst, const typename vec16<T>::type &v);
template <> __device__ __forceinline__ void unpack<float>(float *d, const float4 &v)
{
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
    d[3] = v.w;
}
template <> __device__ __forceinline__ void unpack<double>(double *d, const double2 &v)
{
    d[0] = v.x;
    d[1] = v.y;
}

template <typename T> __device__ __forceinline__ typename vec16<T>::type pack(const T *s);
template <> __device__ __forceinline__ float4 pack<float>(const float *s)
{
    return make_float4(s[0], s[1], s[2], s[3]);
}
template <> __device__ __forceinline__ double2 pack<double>(const double *s)
{
    return make_double2(s[0], s[1]);
}

template <typename T, int BM, int BN, int BK, int TM, int TN, bool CHECKED>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2)
    regtile_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                   long n, long k)
{
    using V = typename vec16<T>::type;
    constexpr int VEC = vec16<T>::n;
    constexpr int TX = BN / TN, TY = BM / TM, THREADS = TX * TY;
    constexpr int HM = TM / 2, HN = TN / 2;     /* half micro-tiles */
    constexpr int AS_LD = BM + VEC;             /* padded row of As (16 bytes) */
    constexpr int LA = BM * BK / VEC / THREADS; /* 16-byte loads of A per thread */
    constexpr int LB = BK * BN / VEC / THREADS; /* 16-byte loads of B per thread */
    static_assert(HM == VEC && HN == VEC, "a half micro-tile is one 16-byte vector");
    static_assert(LA >= 1 && LB >= 1 && LA * VEC * THREADS == BM * BK &&
                      LB * VEC * THREADS == BK * BN,
                  "tiles split evenly over the threads");

    __shared__ __align__(16) T As[2][BK][AS_LD];
    __shared__ __align__(16) T Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const long row0 = blockIdx.y * (long)BM, col0 = blockIdx.x * (long)BN;

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = T(0);

    T ra[LA][VEC], rb[LB][VEC]; /* the next tiles, on their way to shared memory */

    auto load_global = [&](long k0) {
#pragma unroll
        for (int l = 0; l < LA; l++) {
            const int v = tid + l * THREADS;
            const int r = v / (BK / VEC), cv = v % (BK / VEC);
            const long gr = row0 + r, gc = k0 + cv * VEC;
            if (!CHECKED) {
                unpack<T>(ra[l], *reinterpret_cast<const V *>(A + gr * k + gc));
            } else {
#pragma unroll
                for (int q = 0; q < VEC; q++)
                    ra[l][q] = (gr < m && gc + q < k) ? A[gr * k + gc + q] : T(0);
            }
        }
#pragma unroll
        for (int l = 0; l < LB; l++) {
            const int v = tid + l * THREADS;
            const int r = v / (BN / VEC), cv = v % (BN / VEC);
            const long gr = k0 + r, gc = col0 + cv * VEC;
            if (!CHECKED) {
                unpack<T>(rb[l], *reinterpret_cast<const V *>(B + gr * n + gc));
            } else {
#pragma unroll
                for (int q = 0; q < VEC; q++)
                    rb[l][q] = (gr < k && gc + q < n) ? B[gr * n + gc + q] : T(0);
            }
        }
    };
    auto store_shared = [&](int buf) {
#pragma unroll
        for (int l = 0; l < LA; l++) {
            const int v = tid + l * THREADS;
            const int r = v / (BK / VEC), cv = v % (BK / VEC);
#pragma unroll
            for (int q = 0; q < VEC; q++)
                As[buf][cv * VEC + q][r] = ra[l][q]; /* transposed */
        }
#pragma unroll
        for (int l = 0; l < LB; l++) {
            const int v = tid + l * THREADS;
            const int r = v / (BN / VEC), cv = v % (BN / VEC);
            *reinterpret_cast<V *>(&Bs[buf][r][cv * VEC]) = pack<T>(rb[l]);
        }
    };

    const long ntiles = (k + BK - 1) / BK;
    load_global(0);
    store_shared(0);
    __syncthreads();

    for (long t = 0; t < ntiles; t++) {
        const int cur = (int)(t & 1);
        if (t + 1 < ntiles)
            load_global((t + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            T a[TM], b[TN];
            unpack<T>(a, *reinterpret_cast<const V *>(&As[cur][kk][ty * HM]));
            unpack<T>(a + HM, *reinterpret_cast<const V *>(&As[cur][kk][BM / 2 + ty * HM]));
            unpack<T>(b, *reinterpret_cast<const V *>(&Bs[cur][kk][tx * HN]));
            unpack<T>(b + HN, *reinterpret_cast<const V *>(&Bs[cur][kk][BN / 2 + tx * HN]));
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        if (t + 1 < ntiles)
            store_shared(cur ^ 1);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; i++) {
        const long gr = row0 + (i < HM ? ty * HM + i : BM / 2 + ty * HM + (i - HM));
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long gc = col0 + h * (BN / 2) + tx * HN;
            if (!CHECKED) {
                *reinterpret_cast<V *>(C + gr * n + gc) = pack<T>(&acc[i][h * HN]);
            } else {
#pragma unroll
                for (int q = 0; q < HN; q++)
                    if (gr < m && gc + q < n)
                        C[gr * n + gc + q] = acc[i][h * HN + q];
            }
        }
    }
}

template <typename T> struct cfg;
template <> struct cfg<float> {
    static constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
};
template <> struct cfg<double> {
    static constexpr int BM = 64, BN = 64, BK = 8, TM = 4, TN = 4;
};

template <typename T> int launch_t(const struct kern_args *a, struct kern_launch *info)
{
    using K = cfg<T>;
    constexpr unsigned threads = (K::BM / K::TM) * (K::BN / K::TN);
    const long gx = (a->n + K::BN - 1) / K::BN, gy = (a->m + K::BM - 1) / K::BM;
    const bool fast = a->m % K::BM == 0 && a->n % K::BN == 0 && a->k % K::BK == 0;
    const void *f;
    if (gy > 65535)
        return rk_error(RK_EUSAGE, "regtile: m = %ld needs more than 65535 block rows", a->m);
    dim3 grid((unsigned)gx, (unsigned)gy);
    const T *A = (const T *)a->a, *B = (const T *)a->b;
    T *C = (T *)a->c;
    if (fast) {
        f = (const void *)regtile_kernel<T, K::BM, K::BN, K::BK, K::TM, K::TN, false>;
        regtile_kernel<T, K::BM, K::BN, K::BK, K::TM, K::TN, false>
            <<<grid, threads, 0, a->stream>>>(A, B, C, a->m, a->n, a->k);
    } else {
        f = (const void *)regtile_kernel<T, K::BM, K::BN, K::BK, K::TM, K::TN, true>;
        regtile_kernel<T, K::BM, K::BN, K::BK, K::TM, K::TN, true>
            <<<grid, threads, 0, a->stream>>>(A, B, C, a->m, a->n, a->k);
    }
    kern_launched(info, f, grid.x, grid.y, threads, 1, 0);
    return kern_check_launch("regtile");
}

int launch_regtile(const struct kern_args *a, struct kern_launch *info)
{
    return a->prec == KERNELS_FP64 ? launch_t<double>(a, info) : launch_t<float>(a, info);
}

} // namespace

extern "C" {
const struct kern_ops kern_regtile = {NULL, NULL, NULL, launch_regtile, NULL, NULL, NULL};
}
