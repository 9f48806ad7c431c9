/*
 * cublas.c - the cuBLAS references, column-major like TSM2 (004_dab40fe45003313a.txt
 * §2.2 compares against cuBLAS GEMM): cublasSgemm (fp32), cublasDgemm (fp64) and
 * cublasGemmEx (either; with tf32 = 1, fp32 runs on the tensor cores in TF32).
 *
 * The session keeps CUBLAS_DEFAULT_MATH, which never lowers the precision asked for:
 * cublasSgemm does not use TF32 and is the CUDA-core reference the register-tiled GEMM
 * is compared with. cuBLAS chooses its
 * own grid and block, which roofkit cannot see here (grid, block, registers: 0).
 */
#include "common.h"
#include "internal.h"

#include <stddef.h>

static int status(cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return RK_OK;
    return rk_error(RK_ECUDA, "%s failed: %s (cuBLAS status %d)", what, cublasGetStatusString(st),
                    (int)st);
}

static int resolve_none(const struct kern_args *a, long *p, char *why, size_t len)
{
    (void)a;
    (void)p;
    (void)why;
    (void)len;
    return RK_OK;
}

static int resolve_gemmex(const struct kern_args *a, long *p, char *why, size_t len)
{
    if (p[0] != 0 && p[0] != 1)
        return kern_why(why, len, "tf32 must be 0 or 1, not %ld", p[0]);
    if (p[0] == 1 && a->prec == KERNELS_FP64)
        return kern_why(why, len, "tf32 = 1 applies to fp32 only");
    return RK_OK;
}

static void no_info(struct kern_launch *info)
{
    for (int d = 0; d < 3; d++)
        info->grid[d] = info->block[d] = 0;
    info->dyn_smem = 0;
    info->func = NULL;
    info->launches = 1;
}

static int launch_sgemm(const struct kern_args *a, struct kern_launch *info)
{
    const float one = 1.0f, zero = 0.0f;
    no_info(info);
    return status(cublasSgemm(a->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)a->m, (int)a->n, (int)a->k,
                              &one, (const float *)a->a, (int)a->m, (const float *)a->b, (int)a->k,
                              &zero, (float *)a->c, (int)a->m),
                  "cublasSgemm");
}

static int launch_dgemm(const struct kern_args *a, struct kern_launch *info)
{
    const double one = 1.0, zero = 0.0;
    no_info(info);
    return status(cublasDgemm(a->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)a->m, (int)a->n, (int)a->k,
                              &one, (const double *)a->a, (int)a->m, (const double *)a->b,
                              (int)a->k, &zero, (double *)a->c, (int)a->m),
                  "cublasDgemm");
}

static int launch_gemmex(const struct kern_args *a, struct kern_launch *info)
{
    const float onef = 1.0f, zerof = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    const int f64 = a->prec == KERNELS_FP64;
    const cudaDataType_t t = f64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasComputeType_t ct =
        f64 ? CUBLAS_COMPUTE_64F : (a->p[0] ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
    no_info(info);
    return status(cublasGemmEx(a->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)a->m, (int)a->n, (int)a->k,
                               f64 ? (const void *)&oned : (const void *)&onef, a->a, t, (int)a->m,
                               a->b, t, (int)a->k,
                               f64 ? (const void *)&zerod : (const void *)&zerof, a->c, t,
                               (int)a->m, ct, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
}

/* TF32 keeps 10 mantissa bits: relative errors near 3e-4 on random data. */
static double tolerance_gemmex(const struct kern_args *a)
{
    if (a->prec == KERNELS_FP64)
        return 1e-12;
    return a->p[0] ? 5e-3 : 1e-4;
}

const struct kern_ops kern_cublas_sgemm = {resolve_none, NULL, NULL, launch_sgemm,
                                           NULL,         NULL, NULL};
const struct kern_ops kern_cublas_dgemm = {resolve_none, NULL, NULL, launch_dgemm,
                                           NULL,         NULL, NULL};
const struct kern_ops kern_cublas_gemmex = {resolve_gemmex,   NULL, NULL, launch_gemmex, NULL,
                                            tolerance_gemmex, NULL};
