/*
 * seed003.cu - the tiled GEMM of 003_d5ffc223df97ef85.txt ("PA2 report", Q1.A,
 * Q1.B, Q2.A), row-major C = A B:
 *
 *   A thread block computes a TILEDIM_M x TILEDIM_N tile of C from TILEDIM_M x
 *   TILEDIM_K tiles of A and TILEDIM_K x TILEDIM_N tiles of B in shared memory,
 *   zero-padded past the matrix edges (Q1.A). The block is bx x by threads with
 *       TILEDIM_M = TILESCALE_M * by,  TILEDIM_N = TILESCALE_N * bx   (Q2.A)
 *   and each thread keeps TILESCALE_M x TILESCALE_N outputs in registers, at the
 *   same position in each by x bx sub-block of the tile. Copies go row by row so
 *   that consecutive threads read consecutive addresses (Q1.B "Memory Coalescing").
 *
 * TILEDIM_* are run-time values (dynamic shared memory); TILESCALE_M x TILESCALE_N
 * sizes the register array and is instantiated for the seed's three geometries
 * (8x1, 8x4, 4x2: Q2.A) and for 1x1, 2x2, 4x4.
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

template <typename T, int SM, int SN>
__global__ void tiled_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                             long m, long n, long k, int tm, int tn, int tk)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    T *As = reinterpret_cast<T *>(kern_smem); /* tm x tk */
    T *Bs = As + tm * tk;                     /* tk x tn */
    const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
    const long row0 = blockIdx.y * (long)tm, col0 = blockIdx.x * (long)tn;
    T c[SM][SN];
#pragma unroll
    for (int i = 0; i < SM; i++)
#pragma unroll
        for (int j = 0; j < SN; j++)
            c[i][j] = T(0);

    for (long t = 0; t < k; t += tk) {
        for (int r = ty; r < tm; r += by)
            for (int cc = tx; cc < tk; cc += bx)
                As[r * tk + cc] = ld_or_zero(A, m, k, row0 + r, t + cc);
        for (int r = ty; r < tk; r += by)
            for (int cc = tx; cc < tn; cc += bx)
                Bs[r * tn + cc] = ld_or_zero(B, k, n, t + r, col0 + cc);
        __syncthreads();
        for (int e = 0; e < tk; e++) {
            T a[SM], b[SN];
#pragma unroll
            for (int i = 0; i < SM; i++)
                a[i] = As[(ty + by * i) * tk + e];
#pragma unroll
            for (int j = 0; j < SN; j++)
                b[j] = Bs[e * tn + tx + bx * j];
#pragma unroll
            for (int i = 0; i < SM; i++)
#pragma unroll
                for (int j = 0; j < SN; j++)
                    c[i][j] = fma(a[i], b[j], c[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < SM; i++) {
        const long row = row0 + ty + by * i;
#pragma unroll
        for (int j = 0; j < SN; j++) {
            const long col = col0 + tx + bx * j;
            if (row < m && col < n)
                C[row * n + col] = c[i][j];
        }
    }
}

/* Registry order: tiledim_m, tiledim_n, tiledim_k, tilescale_m, tilescale_n. */
enum { P_TM, P_TN, P_TK, P_SM, P_SN };

template <typename T> const void *tiled_func(long sm, long sn)
{
    if (sm == 1 && sn == 1)
        return (const void *)tiled_kernel<T, 1, 1>;
    if (sm == 2 && sn == 2)
        return (const void *)tiled_kernel<T, 2, 2>;
    if (sm == 4 && sn == 2)
        return (const void *)tiled_kernel<T, 4, 2>;
    if (sm == 4 && sn == 4)
        return (const void *)tiled_kernel<T, 4, 4>;
    if (sm == 8 && sn == 1)
        return (const void *)tiled_kernel<T, 8, 1>;
    if (sm == 8 && sn == 4)
        return (const void *)tiled_kernel<T, 8, 4>;
    return NULL;
}

int resolve_tiled(const struct kern_args *a, long *p, char *why, size_t len)
{
    const long tm = p[P_TM], tn = p[P_TN], tk = p[P_TK], sm = p[P_SM], sn = p[P_SN];
    if (!tiled_func<float>(sm, sn))
        return kern_why(why, len,
                        "tilescale_m x tilescale_n must be one of 1x1, 2x2, 4x2, 4x4, "
                        "8x1, 8x4, not %ldx%ld",
                        sm, sn);
    if (tm % sm != 0 || tn % sn != 0)
        return kern_why(why, len,
                        "tiledim_m (%ld) and tiledim_n (%ld) must be multiples of "
                        "tilescale_m (%ld) and tilescale_n (%ld)",
                        tm, tn, sm, sn);
    const long by = tm / sm, bx = tn / sn;
    if (bx * by > 1024 || bx < 1 || by < 1)
        return kern_why(why, len, "thread block %ld x %ld exceeds 1024 threads", bx, by);
    if (tk < 1)
        return kern_why(why, len, "tiledim_k must be at least 1");
    if (a->dev &&
        (tm * tk + tk * tn) * (long)kern_elem(a->prec) > a->dev->smem_per_block_optin_bytes)
        return kern_why(why, len, "tiles need more shared memory than the %d bytes per block",
                        a->dev->smem_per_block_optin_bytes);
    return RK_OK;
}

int launch_tiled(const struct kern_args *a, struct kern_launch *info)
{
    const int tm = (int)a->p[P_TM], tn = (int)a->p[P_TN], tk = (int)a->p[P_TK];
    const long sm = a->p[P_SM], sn = a->p[P_SN];
    const unsigned by = (unsigned)(tm / sm), bx = (unsigned)(tn / sn);
    const size_t smem = (size_t)(tm * tk + tk * tn) * kern_elem(a->prec);
    const long gx = (a->n + tn - 1) / tn, gy = (a->m + tm - 1) / tm;
    const void *f =
        a->prec == KERNELS_FP64 ? tiled_func<double>(sm, sn) : tiled_func<float>(sm, sn);
    int rc;
    if (gy > 65535)
        return rk_error(RK_EUSAGE, "tiled_003: m = %ld needs more than 65535 block rows", a->m);
    if ((rc = kern_check_block(f, bx * by, "tiled_003")) != RK_OK)
        return rc;
    if ((rc = kern_smem_optin(f, smem, a->dev)) != RK_OK)
        return rc;
    void *args[] = {(void *)&a->a, (void *)&a->b, (void *)&a->c, (void *)&a->m, (void *)&a->n,
                    (void *)&a->k, (void *)&tm,   (void *)&tn,   (void *)&tk};
    RK_CUDA(
        cudaLaunchKernel(f, dim3((unsigned)gx, (unsigned)gy), dim3(bx, by), args, smem, a->stream));
    kern_launched(info, f, (unsigned)gx, (unsigned)gy, bx, by, smem);
    return kern_check_launch("tiled_003");
}

} // namespace

extern "C" {
const struct kern_ops kern_tiled003 = {resolve_tiled, NULL, NULL, launch_tiled, NULL, NULL, NULL};
}
