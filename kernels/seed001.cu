/*
 * seed001.cu - the two kernels of 001_7cc6b74500dcf7c8.txt ("Building CUDAmath
 * Part 2"), row-major C = A B:
 *
 *   smem_001         "Copying to the Shared Memory": a 1D block of BlockSize^2
 *                    threads (local_COL = tid % BlockSize, local_ROW = tid /
 *                    BlockSize) copies a BlockSize^2 chunk of A and of B to shared
 *                    memory and each thread computes one output.
 *   blocktile1d_001  "Kernel 1D Blocktiling": each thread computes a column of
 *                    n_entries (TM) outputs from a BM x BK tile of A and a BK x BN
 *                    tile of B, keeping the results in registers. The listing in
 *                    the seed copies only part of its tiles; this follows the kernel
 *                    it points to (siboehm.com/articles/22/CUDA-MMM, kernel 4):
 *                    BM = BN = 64, BK = 8, TM = n_entries (4 or 8), BM*BN/TM threads.
 *
 * The seed assumes square matrices whose size the tiles divide; here tiles are
 * zero-filled past the edges and stores are checked, so any shape works. alpha = 1
 * and beta = 0 (the seed's alpha/beta epilogue reads C, which roofkit poisons).
 */
#include "common.h"
#include "internal.h"

#include <cuda_runtime.h>

namespace
{

template <typename T>
__device__ __forceinline__ T ld_or_zero(const T *M, long rows, long cols, long r, long c)
{
    return (r < rows && c < cols) ? M[r * cols + c] : T(0);
}

template <typename T>
__global__ void smem001_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                               long m, long n, long k, int bs)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *a_shared = reinterpret_cast<T *>(kern_smem);
    T *b_shared = a_shared + bs * bs;
    const int local_col = threadIdx.x % bs;
    const int local_row = threadIdx.x / bs;
    const long out_row = blockIdx.y * (long)bs + local_row;
    const long out_col = blockIdx.x * (long)bs + local_col;
    T sum = T(0);
    for (long i = 0; i < k; i += bs) {
        a_shared[local_row * bs + local_col] = ld_or_zero(A, m, k, out_row, i + local_col);
        b_shared[local_row * bs + local_col] = ld_or_zero(B, k, n, i + local_row, out_col);
        __syncthreads();
        for (int j = 0; j < bs; ++j)
            sum = fma(a_shared[local_row * bs + j], b_shared[j * bs + local_col], sum);
        __syncthreads();
    }
    if (out_row < m && out_col < n)
        C[out_row * n + out_col] = sum;
}

constexpr int BT_BM = 64, BT_BN = 64, BT_BK = 8;

template <typename T, int TM>
__global__ void __launch_bounds__(BT_BM *BT_BN / TM)
    blocktile1d_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, long m,
                       long n, long k)
{
    constexpr int threads = BT_BM * BT_BN / TM;
    __shared__ T As[BT_BM * BT_BK];
    __shared__ T Bs[BT_BK * BT_BN];
    const int tid = threadIdx.x;
    const int thread_col = tid % BT_BN;
    const int thread_row = tid / BT_BN; /* 0 .. BM/TM - 1 */
    const long row0 = blockIdx.y * (long)BT_BM, col0 = blockIdx.x * (long)BT_BN;
    T res[TM];
#pragma unroll
    for (int i = 0; i < TM; i++)
        res[i] = T(0);

    for (long bk = 0; bk < k; bk += BT_BK) {
        for (int i = tid; i < BT_BM * BT_BK; i += threads) {
            const int r = i / BT_BK, c = i % BT_BK;
            As[r * BT_BK + c] = ld_or_zero(A, m, k, row0 + r, bk + c);
        }
        for (int i = tid; i < BT_BK * BT_BN; i += threads) {
            const int r = i / BT_BN, c = i % BT_BN;
            Bs[r * BT_BN + c] = ld_or_zero(B, k, n, bk + r, col0 + c);
        }
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BT_BK; ++dot) {
            const T tmp_b = Bs[dot * BT_BN + thread_col];
#pragma unroll
            for (int r = 0; r < TM; ++r)
                res[r] = fma(As[(thread_row * TM + r) * BT_BK + dot], tmp_b, res[r]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const long row = row0 + thread_row * TM + r, col = col0 + thread_col;
        if (row < m && col < n)
            C[row * n + col] = res[r];
    }
}

void fill_info(struct kern_launch *info, long gx, long gy, unsigned threads, size_t smem,
               const void *f)
{
    kern_launched(info, f, (unsigned)gx, (unsigned)gy, threads, 1, smem);
}

/* smem_001 {block_size}; blocktile1d_001 {n_entries}. */
int resolve_smem(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    if (p[0] < 1 || p[0] > 32)
        return kern_why(why, len, "block_size must be 1..32 (block_size^2 <= 1024 threads)");
    return RK_OK;
}

int resolve_bt(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    if (p[0] != 4 && p[0] != 8)
        return kern_why(why, len, "n_entries must be 4 or 8, not %ld", p[0]);
    return RK_OK;
}

int launch_smem(const struct kern_args *a, struct kern_launch *info)
{
    const int bs = (int)a->p[0];
    const long gx = kern_ceil_div(a->n, bs), gy = kern_ceil_div(a->m, bs);
    const size_t smem = 2 * (size_t)bs * bs * kern_elem(a->prec);
    if (gy > 65535)
        return rk_error(RK_EUSAGE, "smem_001: m = %ld needs more than 65535 block rows", a->m);
    dim3 grid((unsigned)gx, (unsigned)gy), block((unsigned)(bs * bs));
    const void *f = a->prec == KERNELS_FP64 ? (const void *)smem001_kernel<double>
                                            : (const void *)smem001_kernel<float>;
    int rc = kern_check_block(f, block.x, "smem_001");
    if (rc != RK_OK)
        return rc;
    if ((rc = kern_smem_optin(f, smem, a->dev)) != RK_OK)
        return rc;
    if (a->prec == KERNELS_FP64) {
        smem001_kernel<double><<<grid, block, smem, a->stream>>>(
            (const double *)a->a, (const double *)a->b, (double *)a->c, a->m, a->n, a->k, bs);
    } else {
        smem001_kernel<float><<<grid, block, smem, a->stream>>>(
            (const float *)a->a, (const float *)a->b, (float *)a->c, a->m, a->n, a->k, bs);
    }
    fill_info(info, gx, gy, block.x, smem, f);
    return kern_check_launch("smem_001");
}

template <typename T> int launch_bt_t(const struct kern_args *a, struct kern_launch *info)
{
    const long gx = kern_ceil_div(a->n, BT_BN), gy = kern_ceil_div(a->m, BT_BM);
    const void *f;
    unsigned threads;
    if (gy > 65535)
        return rk_error(RK_EUSAGE, "blocktile1d_001: m = %ld needs more than 65535 block rows",
                        a->m);
    dim3 grid((unsigned)gx, (unsigned)gy);
    if (a->p[0] == 4) {
        f = (const void *)blocktile1d_kernel<T, 4>;
        threads = BT_BM * BT_BN / 4;
        blocktile1d_kernel<T, 4><<<grid, threads, 0, a->stream>>>((const T *)a->a, (const T *)a->b,
                                                                  (T *)a->c, a->m, a->n, a->k);
    } else {
        f = (const void *)blocktile1d_kernel<T, 8>;
        threads = BT_BM * BT_BN / 8;
        blocktile1d_kernel<T, 8><<<grid, threads, 0, a->stream>>>((const T *)a->a, (const T *)a->b,
                                                                  (T *)a->c, a->m, a->n, a->k);
    }
    fill_info(info, gx, gy, threads, 0, f);
    return kern_check_launch("blocktile1d_001");
}

int launch_bt(const struct kern_args *a, struct kern_launch *info)
{
    return a->prec == KERNELS_FP64 ? launch_bt_t<double>(a, info) : launch_bt_t<float>(a, info);
}

} // namespace

extern "C" {
const struct kern_ops kern_smem001 = {resolve_smem, NULL, NULL, launch_smem, NULL, NULL, NULL};
const struct kern_ops kern_blocktile1d = {resolve_bt, NULL, NULL, launch_bt, NULL, NULL, NULL};
}
