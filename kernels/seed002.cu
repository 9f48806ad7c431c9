/*
 * seed002.cu - the two ways of 002_7222581b62a7e2b5.txt ("Comparison of rectangular
 * matrix multiplication with and without border conditions", §III) to multiply
 * rectangular row-major matrices whose sizes BLOCK_SIZE need not divide:
 *
 *   rect_padded  Listing 1: A and B are copied into zero-filled matrices padded to
 *                multiples of BLOCK_SIZE, a kernel without any branch multiplies
 *                them, and C is cut out of the padded product. The padding copy
 *                and the cut are untimed preparation (the paper times the kernels);
 *                the timed kernel works on the padded sizes.
 *   rect_border  Algorithm 2: the unpadded matrices; a tile that crosses a border
 *                is loaded element by element with a bounds check (zero outside),
 *                and only threads inside C store.
 *
 * Both use BLOCK_SIZE x BLOCK_SIZE thread blocks and tiles in shared memory (32 x 32
 * in the paper); BLOCK_SIZE is a run-time value.
 */
#include "common.h"
#include "internal.h"

#include <cuda_runtime.h>

namespace
{

/* Listing 1's "normal kernel": m, n, k are multiples of blockDim.x. */
template <typename T>
__global__ void padded_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                              long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int bs = blockDim.x;
    T *As = reinterpret_cast<T *>(kern_smem);
    T *Bs = As + bs * bs;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row = blockIdx.y * (long)bs + ty, col = blockIdx.x * (long)bs + tx;
    T s = T(0);
    (void)m;
    for (long t = 0; t < k; t += bs) {
        As[ty * bs + tx] = A[row * k + t + tx];
        Bs[ty * bs + tx] = B[(t + ty) * n + col];
        __syncthreads();
        for (int e = 0; e < bs; e++)
            s = fma(As[ty * bs + e], Bs[e * bs + tx], s);
        __syncthreads();
    }
    C[row * n + col] = s;
}

/* Algorithm 2's "modified kernel multiplication". */
template <typename T>
__global__ void border_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                              long m, long n, long k)
{
    extern __shared__ __align__(16) unsigned char kern_smem[];
    const int bs = blockDim.x;
    T *As = reinterpret_cast<T *>(kern_smem);
    T *Bs = As + bs * bs;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long row0 = blockIdx.y * (long)bs, col0 = blockIdx.x * (long)bs;
    const long row = row0 + ty, col = col0 + tx;
    const bool edge_mn = row0 + bs > m || col0 + bs > n;
    T s = T(0);
    for (long t = 0; t < k; t += bs) {
        if (edge_mn || t + bs > k) { /* a border case */
            As[ty * bs + tx] = (row < m && t + tx < k) ? A[row * k + t + tx] : T(0);
            Bs[ty * bs + tx] = (t + ty < k && col < n) ? B[(t + ty) * n + col] : T(0);
        } else {
            As[ty * bs + tx] = A[row * k + t + tx];
            Bs[ty * bs + tx] = B[(t + ty) * n + col];
        }
        __syncthreads();
        for (int e = 0; e < bs; e++)
            s = fma(As[ty * bs + e], Bs[e * bs + tx], s);
        __syncthreads();
    }
    if (row < m && col < n) /* the current thread has a legal result */
        C[row * n + col] = s;
}

long round_up(long v, long to)
{
    return (v + to - 1) / to * to;
}

int resolve_rect(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    if (p[0] < 1 || p[0] > 32)
        return kern_why(why, len, "block_size must be 1..32 (block_size^2 <= 1024 threads)");
    return RK_OK;
}

/* Padded sizes and the three padded matrices inside the workspace. */
struct padded {
    long mp, np, kp;
    void *ap, *bp, *cp;
};

struct padded padded_layout(const struct kern_args *a)
{
    struct padded pd;
    const long bs = a->p[0];
    const size_t e = kern_elem(a->prec);
    pd.mp = round_up(a->m, bs);
    pd.np = round_up(a->n, bs);
    pd.kp = round_up(a->k, bs);
    pd.ap = a->ws;
    pd.bp = a->ws ? (char *)a->ws + (size_t)(pd.mp * pd.kp) * e : NULL;
    pd.cp = a->ws ? (char *)pd.bp + (size_t)(pd.kp * pd.np) * e : NULL;
    return pd;
}

size_t workspace_padded(const struct kern_args *a)
{
    struct padded pd = padded_layout(a);
    return (size_t)(pd.mp * pd.kp + pd.kp * pd.np + pd.mp * pd.np) * kern_elem(a->prec);
}

/* Listing 1 up to "Do normal kernel multiplication": zero-filled padded copies. */
int prepare_padded(const struct kern_args *a)
{
    struct padded pd = padded_layout(a);
    const size_t e = kern_elem(a->prec);
    RK_CUDA(cudaMemsetAsync(a->ws, 0, a->ws_bytes, a->stream));
    RK_CUDA(cudaMemcpy2DAsync(pd.ap, (size_t)pd.kp * e, a->a, (size_t)a->k * e, (size_t)a->k * e,
                              (size_t)a->m, cudaMemcpyDeviceToDevice, a->stream));
    RK_CUDA(cudaMemcpy2DAsync(pd.bp, (size_t)pd.np * e, a->b, (size_t)a->n * e, (size_t)a->n * e,
                              (size_t)a->k, cudaMemcpyDeviceToDevice, a->stream));
    return RK_OK;
}

/* "Get subMatrix C with dimensions m x p from NewC starting at (0,0)". */
int finish_padded(const struct kern_args *a)
{
    struct padded pd = padded_layout(a);
    const size_t e = kern_elem(a->prec);
    RK_CUDA(cudaMemcpy2DAsync(a->c, (size_t)a->n * e, pd.cp, (size_t)pd.np * e, (size_t)a->n * e,
                              (size_t)a->m, cudaMemcpyDeviceToDevice, a->stream));
    return RK_OK;
}

int launch_rect(const struct kern_args *a, struct kern_launch *info, int padded)
{
    const long bs = a->p[0];
    const size_t smem = 2 * (size_t)bs * bs * kern_elem(a->prec);
    struct padded pd = padded_layout(a);
    const long m = padded ? pd.mp : a->m, n = padded ? pd.np : a->n, k = padded ? pd.kp : a->k;
    const void *A = padded ? pd.ap : a->a, *B = padded ? pd.bp : a->b;
    void *C = padded ? pd.cp : a->c;
    const long gx = (n + bs - 1) / bs, gy = (m + bs - 1) / bs;
    const void *f;
    if (gy > 65535)
        return rk_error(RK_EUSAGE, "rect: m = %ld needs more than 65535 block rows", a->m);
    if (a->prec == KERNELS_FP64)
        f = padded ? (const void *)padded_kernel<double> : (const void *)border_kernel<double>;
    else
        f = padded ? (const void *)padded_kernel<float> : (const void *)border_kernel<float>;
    int rc = kern_check_block(f, (unsigned)(bs * bs), padded ? "rect_padded" : "rect_border");
    if (rc != RK_OK)
        return rc;
    if ((rc = kern_smem_optin(f, smem, a->dev)) != RK_OK)
        return rc;
    void *args[] = {(void *)&A, (void *)&B, (void *)&C, (void *)&m, (void *)&n, (void *)&k};
    RK_CUDA(cudaLaunchKernel(f, dim3((unsigned)gx, (unsigned)gy), dim3((unsigned)bs, (unsigned)bs),
                             args, smem, a->stream));
    kern_launched(info, f, (unsigned)gx, (unsigned)gy, (unsigned)bs, (unsigned)bs, smem);
    return kern_check_launch(padded ? "rect_padded" : "rect_border");
}

int launch_padded(const struct kern_args *a, struct kern_launch *info)
{
    return launch_rect(a, info, 1);
}
int launch_border(const struct kern_args *a, struct kern_launch *info)
{
    return launch_rect(a, info, 0);
}

} // namespace

extern "C" {
const struct kern_ops kern_rect_padded = {
    resolve_rect, workspace_padded, prepare_padded, launch_padded, finish_padded, NULL, NULL};
const struct kern_ops kern_rect_border = {resolve_rect, NULL, NULL, launch_border,
                                          NULL,         NULL, NULL};
}
