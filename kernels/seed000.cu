/*
 * seed000.cu - the kernels of 000_51b464feae8766fa.txt ("Cuda Supported Matrix
 * Multiplication"), row-major C = A B for any m, n, k:
 *
 *   naive  one thread per output, operands straight from global memory (§3,
 *          Table 1 "Naive"); parameter block_size (a block_size^2 thread block).
 *   stso   §1.1 Single Thread Single Output: BLOCK_SIZE^2 tiles of A and B in
 *          shared memory, one output per thread.
 *   stmo   §1.2 Single Thread Multiple Outputs: the same tiles, each thread
 *          computes OP_PER_THREAD outputs of a column, STRIDE = BLOCK_SIZE /
 *          OP_PER_THREAD rows apart.
 *   stmvb  §1.3 Single Thread Multiple Vertical Blocks: PARALLEL blocks of A
 *          (stacked vertically) and PARALLEL blocks of B (side by side) in shared
 *          memory; each thread computes one output in each of the PARALLEL^2 blocks.
 *
 * Borders: as in §1.1, the grid has one more row and column of blocks when
 * BLOCK_SIZE does not divide the matrix; tiles are zero-filled past the edges and
 * threads outside C store nothing. BLOCK_SIZE is a run-time value (dynamic shared
 * memory); OP_PER_THREAD and PARALLEL size register arrays and are templates
 * instantiated for 1, 2, 4 and 8.
 */
#include "common.h"
#include "internal.h"

#include <cuda_runtime.h>

namespace
{

template <typename T>
__global__ void naive_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                             long m, long n, long k)
{
    const long col = blockIdx.x * (long)blockDim.x + threadIdx.x;
    const long row = blockIdx.y * (long)blockDim.y + threadIdx.y;
    if (row >= m || col >= n)
        return;
    T acc = T(0);
    for (long j = 0; j < k; j++)
        acc = fma(A[row * k + j], B[j * n + col], acc);
    C[row * n + col] = acc;
}

/* Loads the bs x bs block of a row-major rows x cols matrix at (r0, c0), zero outside. */
template <typename T>
__device__ __forceinline__ T tile_elem(const T *M, long rows, long cols, long r, long c)
{
    return (r < rows && c < cols) ? M[r * cols + c] : T(0);
}

/* §1.1: C_ij += A_ik B_kj for each block k, one output per thread. */
template <typename T>
__global__ void stso_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                            long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int bs = blockDim.x;
    T *As = reinterpret_cast<T *>(kern_smem);
    T *Bs = As + bs * bs;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row = blockIdx.y * (long)bs + ty, col = blockIdx.x * (long)bs + tx;
    T acc = T(0);
    for (long t = 0; t < k; t += bs) {
        As[ty * bs + tx] = tile_elem(A, m, k, row, t + tx);
        Bs[ty * bs + tx] = tile_elem(B, k, n, t + ty, col);
        __syncthreads();
        for (int e = 0; e < bs; e++)
            acc = fma(As[ty * bs + e], Bs[e * bs + tx], acc);
        __syncthreads();
    }
    if (row < m && col < n)
        C[row * n + col] = acc;
}

/* §1.2: block of bs x (bs / OP) threads; thread (tx, ty) owns rows ty + STRIDE*i. */
template <typename T, int OP>
__global__ void stmo_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                            long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int bs = blockDim.x;
    const int stride = blockDim.y; /* STRIDE = BLOCK_SIZE / OP_PER_THREAD */
    T *As = reinterpret_cast<T *>(kern_smem);
    T *Bs = As + bs * bs;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row0 = blockIdx.y * (long)bs, col = blockIdx.x * (long)bs + tx;
    T c[OP];
#pragma unroll
    for (int i = 0; i < OP; i++)
        c[i] = T(0);
    for (long t = 0; t < k; t += bs) {
#pragma unroll
        for (int i = 0; i < OP; i++) {
            const int r = ty + stride * i;
            As[r * bs + tx] = tile_elem(A, m, k, row0 + r, t + tx);
            Bs[r * bs + tx] = tile_elem(B, k, n, t + r, col);
        }
        __syncthreads();
        for (int e = 0; e < bs; e++) {
            const T b = Bs[e * bs + tx];
#pragma unroll
            for (int i = 0; i < OP; i++)
                c[i] = fma(As[(ty + stride * i) * bs + e], b, c[i]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < OP; i++) {
        const long row = row0 + ty + stride * i;
        if (row < m && col < n)
            C[row * n + col] = c[i];
    }
}

/*
 * §1.3: a bs x bs thread block computes a (P*bs) x (P*bs) tile of C; As holds P
 * vertical blocks of A, Bs P horizontal blocks of B (2 P bs^2 elements, the
 * "2 x (16 x 16 x 8) x 8 = 32KB" of the text for bs = 16, P = 8, doubles).
 */
template <typename T, int P>
__global__ void stmvb_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                             long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int bs = blockDim.x;
    T *As = reinterpret_cast<T *>(kern_smem); /* [P][bs][bs] */
    T *Bs = As + P * bs * bs;                 /* [P][bs][bs] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row0 = blockIdx.y * (long)P * bs, col0 = blockIdx.x * (long)P * bs;
    T c[P][P];
#pragma unroll
    for (int i = 0; i < P; i++)
#pragma unroll
        for (int j = 0; j < P; j++)
            c[i][j] = T(0);
    for (long t = 0; t < k; t += bs) {
#pragma unroll
        for (int i = 0; i < P; i++) {
            As[(i * bs + ty) * bs + tx] = tile_elem(A, m, k, row0 + i * bs + ty, t + tx);
            Bs[(i * bs + ty) * bs + tx] = tile_elem(B, k, n, t + ty, col0 + i * bs + tx);
        }
        __syncthreads();
        for (int e = 0; e < bs; e++) {
            T a[P], b[P];
#pragma unroll
            for (int i = 0; i < P; i++) {
                a[i] = As[(i * bs + ty) * bs + e];
                b[i] = Bs[(i * bs + e) * bs + tx];
            }
#pragma unroll
            for (int i = 0; i < P; i++)
#pragma unroll
                for (int j = 0; j < P; j++)
                    c[i][j] = fma(a[i], b[j], c[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < P; i++) {
        const long row = row0 + i * bs + ty;
#pragma unroll
        for (int j = 0; j < P; j++) {
            const long col = col0 + j * bs + tx;
            if (row < m && col < n)
                C[row * n + col] = c[i][j];
        }
    }
}

int is_pow2_upto8(long v)
{
    return v == 1 || v == 2 || v == 4 || v == 8;
}

/* Registry order: naive {block_size}, stso {block_size}, stmo {block_size, op_per_thread},
 * stmvb {block_size, parallel}. */

int resolve_naive(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    if (p[0] < 1 || p[0] > 32)
        return kern_why(why, len, "block_size must be 1..32 (block_size^2 <= 1024 threads)");
    return RK_OK;
}

int resolve_stso(const struct kern_args *a, long *p, char *why, size_t len)
{
    if (p[0] < 1 || p[0] > 32)
        return kern_why(why, len, "block_size must be 1..32 (block_size^2 <= 1024 threads)");
    if (a->dev && 2 * p[0] * p[0] * (long)kern_elem(a->prec) > a->dev->smem_per_block_optin_bytes)
        return kern_why(why, len, "tiles exceed the shared memory per block");
    return RK_OK;
}

int resolve_stmo(const struct kern_args *a, long *p, char *why, size_t len)
{
    if (resolve_stso(a, p, why, len) != RK_OK)
        return RK_EUSAGE;
    if (!is_pow2_upto8(p[1]))
        return kern_why(why, len, "op_per_thread must be 1, 2, 4 or 8, not %ld", p[1]);
    if (p[0] % p[1] != 0)
        return kern_why(why, len, "block_size (%ld) must be a multiple of op_per_thread (%ld)",
                        p[0], p[1]);
    return RK_OK;
}

int resolve_stmvb(const struct kern_args *a, long *p, char *why, size_t len)
{
    if (p[0] < 1 || p[0] > 32)
        return kern_why(why, len, "block_size must be 1..32 (block_size^2 <= 1024 threads)");
    if (!is_pow2_upto8(p[1]))
        return kern_why(why, len, "parallel must be 1, 2, 4 or 8, not %ld", p[1]);
    if (a->dev &&
        2 * p[1] * p[0] * p[0] * (long)kern_elem(a->prec) > a->dev->smem_per_block_optin_bytes)
        return kern_why(why, len,
                        "2 x parallel x block_size^2 elements exceed the %d bytes of "
                        "shared memory per block",
                        a->dev->smem_per_block_optin_bytes);
    return RK_OK;
}

/* Launches f on a grid covering m x n with tiles of th x tw, block bx x by. */
int launch2d(const struct kern_args *a, struct kern_launch *info, const void *f, long tile_h,
             long tile_w, unsigned bx, unsigned by, size_t smem, const char *name)
{
    const long gx = kern_ceil_div(a->n, tile_w), gy = kern_ceil_div(a->m, tile_h);
    int rc;
    if (gy > 65535 || gx > 0x7fffffffL)
        return rk_error(RK_EUSAGE,
                        "%s: a grid of %ld x %ld blocks is too large; choose a larger "
                        "block",
                        name, gx, gy);
    if ((rc = kern_check_block(f, bx * by, name)) != RK_OK)
        return rc;
    if ((rc = kern_smem_optin(f, smem, a->dev)) != RK_OK)
        return rc;
    void *args[] = {(void *)&a->a, (void *)&a->b, (void *)&a->c,
                    (void *)&a->m, (void *)&a->n, (void *)&a->k};
    RK_CUDA(
        cudaLaunchKernel(f, dim3((unsigned)gx, (unsigned)gy), dim3(bx, by), args, smem, a->stream));
    kern_launched(info, f, (unsigned)gx, (unsigned)gy, bx, by, smem);
    return kern_check_launch(name);
}

int launch_naive(const struct kern_args *a, struct kern_launch *info)
{
    const long bs = a->p[0];
    const void *f = a->prec == KERNELS_FP64 ? (const void *)naive_kernel<double>
                                            : (const void *)naive_kernel<float>;
    return launch2d(a, info, f, bs, bs, (unsigned)bs, (unsigned)bs, 0, "naive");
}

int launch_stso(const struct kern_args *a, struct kern_launch *info)
{
    const long bs = a->p[0];
    const void *f = a->prec == KERNELS_FP64 ? (const void *)stso_kernel<double>
                                            : (const void *)stso_kernel<float>;
    return launch2d(a, info, f, bs, bs, (unsigned)bs, (unsigned)bs,
                    2 * bs * bs * kern_elem(a->prec), "stso");
}

template <typename T> const void *stmo_func(long op)
{
    switch (op) {
    case 1:
        return (const void *)stmo_kernel<T, 1>;
    case 2:
        return (const void *)stmo_kernel<T, 2>;
    case 4:
        return (const void *)stmo_kernel<T, 4>;
    default:
        return (const void *)stmo_kernel<T, 8>;
    }
}

int launch_stmo(const struct kern_args *a, struct kern_launch *info)
{
    const long bs = a->p[0], op = a->p[1];
    const void *f = a->prec == KERNELS_FP64 ? stmo_func<double>(op) : stmo_func<float>(op);
    return launch2d(a, info, f, bs, bs, (unsigned)bs, (unsigned)(bs / op),
                    2 * bs * bs * kern_elem(a->prec), "stmo");
}

template <typename T> const void *stmvb_func(long par)
{
    switch (par) {
    case 1:
        return (const void *)stmvb_kernel<T, 1>;
    case 2:
        return (const void *)stmvb_kernel<T, 2>;
    case 4:
        return (const void *)stmvb_kernel<T, 4>;
    default:
        return (const void *)stmvb_kernel<T, 8>;
    }
}

int launch_stmvb(const struct kern_args *a, struct kern_launch *info)
{
    const long bs = a->p[0], par = a->p[1];
    const void *f = a->prec == KERNELS_FP64 ? stmvb_func<double>(par) : stmvb_func<float>(par);
    return launch2d(a, info, f, par * bs, par * bs, (unsigned)bs, (unsigned)bs,
                    2 * par * bs * bs * kern_elem(a->prec), "stmvb");
}

} // namespace

extern "C" {
const struct kern_ops kern_naive = {resolve_naive, NULL, NULL, launch_naive, NULL, NULL, NULL};
const struct kern_ops kern_stso = {resolve_stso, NULL, NULL, launch_stso, NULL, NULL, NULL};
const struct kern_ops kern_stmo = {resolve_stmo, NULL, NULL, launch_stmo, NULL, NULL, NULL};
const struct kern_ops kern_stmvb = {resolve_stmvb, NULL, NULL, launch_stmvb, NULL, NULL, NULL};
}
