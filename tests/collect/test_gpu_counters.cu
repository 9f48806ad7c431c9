/*
 * test_gpu_counters.cu - collect/ sessions on a real GPU, checked against work known in advance.
 * Label `gpu` (H100; counters need permission, which the GPU machine grants as root); exits 77
 * (ctest: skipped) without a CUDA device.
 *
 * Case map (id: what):
 *   K1  a copy kernel of 4 GiB: dram_read_bytes + dram_write_bytes = 2 x size within 1 %
 *       (the size is 80x L2, so what stays dirty in L2 at the end is under 1 %); the default
 *       set in at most 3 passes
 *   K2  an FP32 FMA loop: FFMA count and flop_count_sp exact (2 x iterations x threads), no
 *       FADD/FMUL; the kernel's side effects are the same as without replay; inst_executed
 *       (warp instructions) between the warp FFMAs and 1.25 x them plus 64 a warp (the loop is
 *       unrolled 16 times: at most 4 loop-control instructions per 16 FFMAs, then the
 *       prologue and the store)
 *   K3  cuBLAS bf16 GEMM 4096^3: tensor operations summed over its launches = 2 m n k (wgmma
 *       path in the default set, and the all-path counter by name); prints tensor_pipe_inst
 *       and tensor_inst_mma
 *   K4  launch configuration: registers = ptxas's (cudaFuncGetAttributes; read from the module's
 *       cubin, the Activity record's allocation beside it), static and dynamic shared memory,
 *       grid, block, demangled name. Runs first, so that its module loads inside a session.
 *   K5  timing mode (--metrics none): Activity timestamps present; 100 launches -> 100 records
 *   K6  100 launches in counter mode with 64-range batches: every launch has counters
 *   K7  every tensor precision `roofkit list metrics` reports (bf16, fp16, tf32, fp64, int8,
 *       fp8): a cuBLASLt GEMM 2048^3 of that type; its tensor operations against 2 m n k. An
 *       alias whose check (collect_metric_holds, shown by `roofkit list metrics`) says
 *       "exact" must equal it, and each precision needs one such alias (each alias must be
 *       listed); the others print what they count, to keep the claim honest; prints
 *       tensor_pipe_inst and tensor_inst_mma beside them
 *   K8  a kernel with no tensor instruction (K2's FMA loop): every tensor_ops_* alias, those
 *       of the default set and those by name (all paths, *_wgmma, *_mma), reads exactly 0,
 *       and so do tensor_inst_mma and tensor_inst_wgmma; tensor_pipe_inst may be > 0 (nvcc's
 *       HFMA2.MMA moves run on the tensor pipe), is printed, and is at most inst_executed
 *   K9  mma.sync through WMMA (nvcuda::wmma, fp32 accumulate), m = n = k = 1024, one warp per
 *       16x16 tile of C: fp16 and bf16 inputs (16x16x16 fragments), tf32 (16x16x8): the
 *       type's tensor_ops_*_mma and its all-path tensor_ops_* = 2 m n k exactly; every
 *       *_wgmma alias and tensor_inst_mma (no HMMA in it) read 0; tensor_pipe_inst > 0
 *   K10 DMMA with a padded n: cublasDgemm m = 8192, n = 12, k = 2048: tensor_ops_fp64
 *       summed over the call's launches counts executed work, more than 2 m n k (the ratio is
 *       printed), a multiple of 2 m k 8 (n padded to a multiple of 8) and at most 2 m k 32;
 *       tensor_inst_mma > 0 (the kernel used DMMA)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "collect.h"
#include "common.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            fail_msg("%s: %s", #call, cudaGetErrorString(e_));                                     \
    } while (0)

#define FMA_ITERS 4096

__global__ void copy_k(float *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void fma_k(float *x, float b, float c)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float a = x[i];
#pragma unroll 16
    for (int k = 0; k < FMA_ITERS; k++)
        a = fmaf(a, b, c);
    x[i] = a;
}

/* Static shared memory of a known size, so the record can be checked. */
__global__ void smem_k(float *x)
{
    __shared__ float tile[1024];
    extern __shared__ float dyn[];
    tile[threadIdx.x] = x[threadIdx.x];
    dyn[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    x[threadIdx.x] = dyn[threadIdx.x] + tile[threadIdx.x];
}

static const struct collect_value *find(const struct collect_launch *l, const char *name)
{
    for (int i = 0; i < l->nvalues; i++)
        if ((l->values[i].alias && strcmp(l->values[i].alias, name) == 0) ||
            (!l->values[i].alias && strcmp(l->values[i].raw, name) == 0))
            return &l->values[i];
    return NULL;
}

static double value(const struct collect_launch *l, const char *name)
{
    const struct collect_value *v = find(l, name);
    if (!v)
        fail_msg("no value %s", name);
    if (v->is_null)
        fail_msg("value %s is NULL", name);
    return v->value;
}

static struct collect_session *begin(const char **names, int n, int max_ranges)
{
    struct collect_options opt;
    struct collect_session *s = NULL;
    memset(&opt, 0, sizeof opt);
    opt.metrics = names;
    opt.nmetrics = n;
    opt.max_ranges = max_ranges;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    return s;
}

static struct collect_result *end(struct collect_session *s, enum collect_mode want)
{
    struct collect_result *r = NULL;
    CHECK(cudaDeviceSynchronize());
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    if (r->mode != want)
        fail_msg("mode %s, want %s: %s", collect_mode_name(r->mode), collect_mode_name(want),
                 r->reason);
    return r;
}

/* K1 */
static void test_copy_dram_bytes(void **state)
{
    (void)state;
    const size_t n = (size_t)1 << 30; /* 4 GiB of floats */
    float *a = NULL, *b = NULL;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMemset(a, 1, n * sizeof(float)));
    CHECK(cudaDeviceSynchronize());
    struct collect_session *s = begin(NULL, 0, 0);
    copy_k<<<132 * 16, 512>>>(b, a, n);
    CHECK(cudaGetLastError());
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 1);
    const struct collect_launch *l = &r->launch[0];
    double rd = value(l, "dram_read_bytes"), wr = value(l, "dram_write_bytes");
    double size = (double)n * sizeof(float);
    print_message("copy 4 GiB: dram read %.6g, write %.6g, sum/(2 size) = %.5f; %d passes; "
                  "gpu_time %.0f ns; gld_efficiency %.2f %%\n",
                  rd, wr, (rd + wr) / (2 * size), r->passes, l->duration_ns,
                  value(l, "gld_efficiency"));
    assert_true(fabs((rd + wr) - 2 * size) <= 0.01 * 2 * size);
    assert_true(fabs(rd - size) <= 0.01 * size);
    assert_true(r->passes <= 3);
    /* the copy itself happened (replay keeps side effects) */
    unsigned char probe[4];
    CHECK(cudaMemcpy(probe, b + n - 1, 4, cudaMemcpyDeviceToHost));
    assert_int_equal(probe[0], 1);
    collect_result_free(r);
    cudaFree(a);
    cudaFree(b);
}

/* K2 */
static void test_fma_flops(void **state)
{
    (void)state;
    const int blocks = 1024, threads = 256;
    const size_t n = (size_t)blocks * threads;
    float *x = NULL;
    float host[4] = {0};
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMemset(x, 0, n * sizeof(float)));
    const char *names[] = {"default", "flop_count_sp_fma", "flop_count_sp_add",
                           "flop_count_sp_mul"};
    struct collect_session *s = begin(names, 4, 0);
    fma_k<<<blocks, threads>>>(x, 1.0f, 1.0f); /* a = a + 1, FMA_ITERS times */
    CHECK(cudaGetLastError());
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 1);
    const struct collect_launch *l = &r->launch[0];
    double ffma = value(l, "flop_count_sp_fma"), flops = value(l, "flop_count_sp");
    print_message("fma: FFMA %.17g (want %.17g), flop_count_sp %.17g, FADD %g, FMUL %g\n", ffma,
                  (double)FMA_ITERS * n, flops, value(l, "flop_count_sp_add"),
                  value(l, "flop_count_sp_mul"));
    assert_true(ffma == (double)FMA_ITERS * n);
    assert_true(value(l, "flop_count_sp_add") == 0.0);
    assert_true(value(l, "flop_count_sp_mul") == 0.0);
    assert_true(flops == 2.0 * FMA_ITERS * n);
    {
        const double warps = (double)n / 32, warp_ffma = (double)FMA_ITERS * warps;
        const double inst = value(l, "inst_executed");
        print_message("fma: inst_executed %.17g (warp FFMAs %.17g)\n", inst, warp_ffma);
        assert_true(inst >= warp_ffma);
        assert_true(inst <= 1.25 * warp_ffma + 64 * warps);
    }
    /* each replay pass restored x: one pass's worth of increments */
    CHECK(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost));
    assert_true(host[0] == (float)FMA_ITERS);
    collect_result_free(r);
    cudaFree(x);
}

/* K3 */
static void test_bf16_gemm_tensor_ops(void **state)
{
    (void)state;
    const int m = 4096, n = 4096, k = 4096;
    __nv_bfloat16 *a = NULL, *b = NULL, *c = NULL;
    cublasHandle_t h = NULL;
    float alpha = 1.0f, beta = 0.0f;
    CHECK(cudaMalloc(&a, (size_t)m * k * sizeof *a));
    CHECK(cudaMalloc(&b, (size_t)k * n * sizeof *b));
    CHECK(cudaMalloc(&c, (size_t)m * n * sizeof *c));
    CHECK(cudaMemset(a, 0, (size_t)m * k * sizeof *a));
    CHECK(cudaMemset(b, 0, (size_t)k * n * sizeof *b));
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    /* warm-up outside the session: cuBLAS's first call may launch helper kernels */
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16BF, m,
                                  b, CUDA_R_16BF, k, &beta, c, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
                     CUBLAS_STATUS_SUCCESS);
    CHECK(cudaDeviceSynchronize());
    const char *names[] = {"default", "tensor_ops_bf16", "tensor_pipe_inst", "tensor_inst_mma"};
    struct collect_session *s = begin(names, 4, 0);
    assert_int_equal(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16BF, m,
                                  b, CUDA_R_16BF, k, &beta, c, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
                     CUBLAS_STATUS_SUCCESS);
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    double wg = 0, all = 0, want = 2.0 * m * n * k;
    assert_true(r->nlaunch >= 1);
    for (int i = 0; i < r->nlaunch; i++) {
        wg += value(&r->launch[i], "tensor_ops_bf16_wgmma");
        all += value(&r->launch[i], "tensor_ops_bf16");
        print_message("gemm launch %d: %s, %d regs, tensor_pipe_inst %.0f, tensor_inst_mma %.0f\n",
                      i, r->launch[i].demangled, r->launch[i].registers,
                      value(&r->launch[i], "tensor_pipe_inst"),
                      value(&r->launch[i], "tensor_inst_mma"));
    }
    print_message("bf16 gemm 4096^3: wgmma ops %.17g, all-path ops %.17g, 2mnk %.17g; %d passes\n",
                  wg, all, want, r->passes);
    assert_true(all == want);
    assert_true(wg == want);
    collect_result_free(r);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
}

/* K4 */
static void test_launch_config(void **state)
{
    (void)state;
    float *x = NULL;
    struct cudaFuncAttributes fa_copy, fa_smem;
    CHECK(cudaMalloc(&x, 1 << 20));
    CHECK(cudaMemset(x, 0, 1 << 20));
    /* This case runs first: with lazy module loading the module of these kernels loads inside
     * the session, whose MODULE_LOADED callback reads ptxas's register counts from its cubin. */
    const char *names[] = {"gpu_time"};
    struct collect_session *s = begin(names, 1, 0);
    CHECK(cudaFuncGetAttributes(&fa_copy, copy_k));
    CHECK(cudaFuncGetAttributes(&fa_smem, smem_k));
    copy_k<<<dim3(7, 3, 2), dim3(64, 2, 1)>>>(x + 4096, x, 4096);
    smem_k<<<2, 256, 256 * sizeof(float)>>>(x);
    CHECK(cudaGetLastError());
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 2);
    const struct collect_launch *c = &r->launch[0], *m = &r->launch[1];
    print_message("copy_k: %d registers (ptxas %d, allocated %d), smem_k: %d registers (ptxas "
                  "%d), static %d (%zu), dynamic %d\n",
                  c->registers, fa_copy.numRegs, c->registers_alloc, m->registers, fa_smem.numRegs,
                  m->static_smem, fa_smem.sharedSizeBytes, m->dynamic_smem);
    assert_true(c->has_record && m->has_record);
    assert_true(c->registers_alloc >= c->registers);
    assert_int_equal(c->registers, fa_copy.numRegs);
    assert_int_equal(m->registers, fa_smem.numRegs);
    assert_int_equal(c->grid[0], 7);
    assert_int_equal(c->grid[1], 3);
    assert_int_equal(c->grid[2], 2);
    assert_int_equal(c->block[0], 64);
    assert_int_equal(c->block[1], 2);
    assert_int_equal(m->static_smem, (int)fa_smem.sharedSizeBytes);
    assert_int_equal(m->static_smem, 1024 * (int)sizeof(float));
    assert_int_equal(m->dynamic_smem, 256 * (int)sizeof(float));
    assert_string_equal(c->demangled, "copy_k(float*, float const*, unsigned long)");
    assert_string_equal(m->name, "_Z6smem_kPf");
    assert_true(c->duration_ns > 0);
    collect_result_free(r);
    cudaFree(x);
}

/* K5 */
static void test_timing_mode(void **state)
{
    (void)state;
    float *x = NULL;
    CHECK(cudaMalloc(&x, 1 << 20));
    struct collect_options opt;
    memset(&opt, 0, sizeof opt);
    opt.nmetrics = -1;
    struct collect_session *s = NULL;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    for (int i = 0; i < 100; i++)
        copy_k<<<64, 256>>>(x + 65536, x, 65536);
    struct collect_result *r = end(s, COLLECT_MODE_TIMING);
    assert_int_equal(r->nlaunch, 100);
    for (int i = 0; i < r->nlaunch; i++) {
        assert_true(r->launch[i].has_record);
        assert_true(r->launch[i].start_ns > 0 && r->launch[i].end_ns > r->launch[i].start_ns);
        assert_int_equal(r->launch[i].nvalues > 0 ? r->launch[i].has_counters : 0, 0);
    }
    collect_result_free(r);
    cudaFree(x);
}

/* K6 */
static void test_many_launches(void **state)
{
    (void)state;
    float *x = NULL;
    CHECK(cudaMalloc(&x, 1 << 22));
    CHECK(cudaMemset(x, 0, 1 << 22));
    struct collect_session *s = begin(NULL, 0, 0);
    for (int i = 0; i < 100; i++)
        copy_k<<<64, 256>>>(x + 262144, x, 262144);
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 100);
    assert_int_equal(r->nmismatch, 0);
    for (int i = 0; i < r->nlaunch; i++) {
        assert_true(r->launch[i].has_counters);
        /* 1 MiB read from L2 or DRAM: l2 bytes at least the bytes loaded */
        assert_true(value(&r->launch[i], "l2_bytes") >= 262144.0 * 4);
    }
    collect_result_free(r);
    cudaFree(x);
}

/* K7 */
struct tc_case {
    const char *type;
    cudaDataType_t ab, cd, scale;
    cublasComputeType_t compute;
    int ab_bytes, cd_bytes;
    const char *alias[2]; /* the tensor-ops aliases of this type (NULL: none) */
};

static void lt_check(cublasStatus_t e, const char *what)
{
    if (e != CUBLAS_STATUS_SUCCESS)
        fail_msg("%s: %s", what, cublasGetStatusString(e));
}

static void test_tensor_ops_every_precision(void **state)
{
    (void)state;
    static const struct tc_case cases[] = {
        {"bf16",
         CUDA_R_16BF,
         CUDA_R_16BF,
         CUDA_R_32F,
         CUBLAS_COMPUTE_32F,
         2,
         2,
         {"tensor_ops_bf16_wgmma", "tensor_ops_bf16"}},
        {"fp16",
         CUDA_R_16F,
         CUDA_R_16F,
         CUDA_R_32F,
         CUBLAS_COMPUTE_32F,
         2,
         2,
         {"tensor_ops_fp16_wgmma", "tensor_ops_fp16"}},
        {"tf32",
         CUDA_R_32F,
         CUDA_R_32F,
         CUDA_R_32F,
         CUBLAS_COMPUTE_32F_FAST_TF32,
         4,
         4,
         {"tensor_ops_tf32", NULL}},
        {"fp64",
         CUDA_R_64F,
         CUDA_R_64F,
         CUDA_R_64F,
         CUBLAS_COMPUTE_64F,
         8,
         8,
         {"tensor_ops_fp64", NULL}},
        {"int8",
         CUDA_R_8I,
         CUDA_R_32I,
         CUDA_R_32I,
         CUBLAS_COMPUTE_32I,
         1,
         4,
         {"tensor_ops_int8", NULL}},
        {"fp8",
         CUDA_R_8F_E4M3,
         CUDA_R_16BF,
         CUDA_R_32F,
         CUBLAS_COMPUTE_32F,
         1,
         2,
         {"tensor_ops_fp8", NULL}},
    };
    const int n = 2048;
    const double want = 2.0 * n * n * n;
    const size_t ws_bytes = (size_t)32 << 20;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N; /* "TN": what int8 and fp8 need */
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const int32_t one_i = 1, zero_i = 0;
    cublasLtHandle_t lt = NULL;
    void *a = NULL, *b = NULL, *d = NULL, *ws = NULL;
    lt_check(cublasLtCreate(&lt), "cublasLtCreate");
    CHECK(cudaMalloc(&a, (size_t)n * n * 8));
    CHECK(cudaMalloc(&b, (size_t)n * n * 8));
    CHECK(cudaMalloc(&d, (size_t)n * n * 8));
    CHECK(cudaMalloc(&ws, ws_bytes));
    /* small integers in every type (0x01 bytes: bf16/fp16/fp32/fp64 tiny normals, int8 1, fp8
     * a subnormal): the counts do not depend on the values */
    CHECK(cudaMemset(a, 0x01, (size_t)n * n * 8));
    CHECK(cudaMemset(b, 0x01, (size_t)n * n * 8));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const struct tc_case *t = &cases[c];
        const void *alpha = t->scale == CUDA_R_64F   ? (const void *)&one_d
                            : t->scale == CUDA_R_32I ? (const void *)&one_i
                                                     : (const void *)&one_f;
        const void *beta = t->scale == CUDA_R_64F   ? (const void *)&zero_d
                           : t->scale == CUDA_R_32I ? (const void *)&zero_i
                                                    : (const void *)&zero_f;
        cublasLtMatmulDesc_t op = NULL;
        cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
        lt_check(cublasLtMatmulDescCreate(&op, t->compute, t->scale), "cublasLtMatmulDescCreate");
        lt_check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                 "TRANSA");
        lt_check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                 "TRANSB");
        lt_check(cublasLtMatrixLayoutCreate(&la, t->ab, n, n, n), "layout A");
        lt_check(cublasLtMatrixLayoutCreate(&lb, t->ab, n, n, n), "layout B");
        lt_check(cublasLtMatrixLayoutCreate(&lc, t->cd, n, n, n), "layout C");
        /* warm-up outside the session (the heuristic's first call may launch helpers) */
        lt_check(
            cublasLtMatmul(lt, op, alpha, a, la, b, lb, beta, d, lc, d, lc, NULL, ws, ws_bytes, 0),
            t->type);
        CHECK(cudaDeviceSynchronize());
        const char *names[4] = {"tensor_pipe_inst", "tensor_inst_mma", t->alias[0], t->alias[1]};
        struct collect_session *s = begin(names, t->alias[1] ? 4 : 3, 0);
        lt_check(
            cublasLtMatmul(lt, op, alpha, a, la, b, lb, beta, d, lc, d, lc, NULL, ws, ws_bytes, 0),
            t->type);
        struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
        assert_true(r->nlaunch >= 1);
        int exact = 0;
        for (int k = 0; k < 2 && t->alias[k]; k++) {
            double ops = 0, inst = 0, mma = 0;
            for (int i = 0; i < r->nlaunch; i++) {
                ops += value(&r->launch[i], t->alias[k]);
                inst += value(&r->launch[i], "tensor_pipe_inst");
                mma += value(&r->launch[i], "tensor_inst_mma");
            }
            const struct collect_metric *cm = collect_metric_find(t->alias[k]);
            if (!cm)
                fail_msg("K7 %s: no metric %s", t->type, t->alias[k]);
            const char *holds = collect_metric_holds(cm);
            print_message("K7 %s %-22s %.17g ops = %.6f x 2mnk (%d launch%s, %s, tensor_pipe_inst "
                          "%.0f, tensor_inst_mma %.0f); listed as: %s\n",
                          t->type, t->alias[k], ops, ops / want, r->nlaunch,
                          r->nlaunch == 1 ? "" : "es", r->launch[0].demangled, inst, mma,
                          holds ? holds : "(not checked)");
            if (holds && strncmp(holds, "exact", 5) == 0) {
                assert_true(ops == want);
                exact++;
            }
        }
        /* every precision here has an alias listed as exact: without one, K7 would only print */
        if (exact == 0)
            fail_msg("K7 %s: no alias listed as exact, nothing compared with 2mnk", t->type);
        collect_result_free(r);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatmulDescDestroy(op);
    }
    cublasLtDestroy(lt);
    cudaFree(ws);
    cudaFree(d);
    cudaFree(b);
    cudaFree(a);
}

/* K8 */
static int tensor_alias(const char *alias)
{
    return strncmp(alias, "tensor_ops_", 11) == 0 || strncmp(alias, "tensor_inst_", 12) == 0 ||
           strcmp(alias, "tensor_pipe_inst") == 0;
}

static void test_no_tensor_instruction(void **state)
{
    (void)state;
    const int blocks = 1024, threads = 256;
    float *x = NULL;
    CHECK(cudaMalloc(&x, (size_t)blocks * threads * sizeof(float)));
    CHECK(cudaMemset(x, 0, (size_t)blocks * threads * sizeof(float)));
    /* the default set, and every tensor alias it does not have, by name */
    const char *names[64];
    int n = 0, nops = 0;
    names[n++] = "default";
    for (int i = 0; i < collect_metric_count() && n < 64; i++) {
        const struct collect_metric *m = collect_metric_get(i);
        if (tensor_alias(m->alias) && !m->in_default)
            names[n++] = m->alias;
    }
    struct collect_session *s = begin(names, n, 0);
    fma_k<<<blocks, threads>>>(x, 1.0f, 1.0f);
    CHECK(cudaGetLastError());
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 1);
    const struct collect_launch *l = &r->launch[0];
    for (int i = 0; i < collect_metric_count(); i++) {
        const char *alias = collect_metric_get(i)->alias;
        if (!tensor_alias(alias) || strcmp(alias, "tensor_pipe_inst") == 0)
            continue;
        double v = value(l, alias);
        if (v != 0.0)
            fail_msg("K8 FMA loop: %s = %.17g, want 0 (no tensor instruction)", alias, v);
        nops += strncmp(alias, "tensor_ops_", 11) == 0;
    }
    assert_true(nops >= 14); /* 6 in the default set, 4 all-path and 4 mma.sync by name */
    print_message("K8 FMA loop: %d tensor_ops_* aliases read 0; tensor_pipe_inst %.17g, "
                  "flop_count_hp %.17g (HFMA2.MMA moves); %d passes\n",
                  nops, value(l, "tensor_pipe_inst"), value(l, "flop_count_hp"), r->passes);
    /* the tensor pipe's warp instructions are among all warp instructions executed */
    assert_true(value(l, "tensor_pipe_inst") <= value(l, "inst_executed"));
    collect_result_free(r);
    cudaFree(x);
}

/* K9: one warp per 16x16 tile of C = A B (A row-major m x k, B column-major k x n, C row-major),
 * FK the fragments' k: 16 for fp16 and bf16, 8 for tf32. */
template <typename In, typename Frag, int FK>
__global__ void wmma_k(const In *a, const In *b, float *c, int m, int n, int k)
{
    using namespace nvcuda;
    const int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32);
    const int tm = warp / (n / 16), tn = warp % (n / 16);
    if (tm >= m / 16)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, FK, Frag, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, FK, Frag, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, FK, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int kk = 0; kk < k; kk += FK) {
        wmma::load_matrix_sync(fa, a + (size_t)tm * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + (size_t)tn * 16 * k + kk, k);
        if constexpr (FK == 8) {
            for (int t = 0; t < fa.num_elements; t++)
                fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
            for (int t = 0; t < fb.num_elements; t++)
                fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
        }
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + (size_t)tm * 16 * n + (size_t)tn * 16, fc, n, wmma::mem_row_major);
}

static void test_wmma_mma_sync(void **state)
{
    (void)state;
    const int m = 1024, n = 1024, k = 1024, threads = 128;
    const int blocks = (m / 16) * (n / 16) * 32 / threads;
    const double want = 2.0 * m * n * k;
    static const char *const types[3] = {"fp16", "bf16", "tf32"};
    static const char *const mma[3] = {"tensor_ops_fp16_mma", "tensor_ops_bf16_mma",
                                       "tensor_ops_tf32_mma"};
    static const char *const all[3] = {"tensor_ops_fp16", "tensor_ops_bf16", "tensor_ops_tf32"};
    static const char *const wgmma[4] = {"tensor_ops_fp16_wgmma", "tensor_ops_bf16_wgmma",
                                         "tensor_ops_tf32_wgmma", "tensor_ops_int8_wgmma"};
    void *a = NULL, *b = NULL;
    float *c = NULL;
    CHECK(cudaMalloc(&a, (size_t)m * k * sizeof(float)));
    CHECK(cudaMalloc(&b, (size_t)k * n * sizeof(float)));
    CHECK(cudaMalloc(&c, (size_t)m * n * sizeof(float)));
    CHECK(cudaMemset(a, 0, (size_t)m * k * sizeof(float))); /* the counts do not depend on it */
    CHECK(cudaMemset(b, 0, (size_t)k * n * sizeof(float)));
    const char *names[] = {mma[0],           mma[1],   mma[2],   "tensor_ops_int8_mma",
                           all[0],           all[1],   all[2],   wgmma[0],
                           wgmma[1],         wgmma[2], wgmma[3], "tensor_pipe_inst",
                           "tensor_inst_mma"};
    struct collect_session *s = begin(names, (int)(sizeof names / sizeof *names), 0);
    wmma_k<half, half, 16><<<blocks, threads>>>((const half *)a, (const half *)b, c, m, n, k);
    wmma_k<__nv_bfloat16, __nv_bfloat16, 16>
        <<<blocks, threads>>>((const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, c, m, n, k);
    wmma_k<float, nvcuda::wmma::precision::tf32, 8>
        <<<blocks, threads>>>((const float *)a, (const float *)b, c, m, n, k);
    CHECK(cudaGetLastError());
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->nlaunch, 3);
    for (int t = 0; t < 3; t++) {
        const struct collect_launch *l = &r->launch[t];
        double ops = value(l, mma[t]), allp = value(l, all[t]);
        print_message("K9 wmma %s %d^3: %s %.17g = %.6f x 2mnk, %s %.17g, tensor_pipe_inst %.0f, "
                      "tensor_inst_mma %.0f (%s)\n",
                      types[t], m, mma[t], ops, ops / want, all[t], allp,
                      value(l, "tensor_pipe_inst"), value(l, "tensor_inst_mma"), l->demangled);
        for (int o = 0; o < 3; o++)
            if (o != t)
                print_message("K9 wmma %s: %s %.17g\n", types[t], mma[o], value(l, mma[o]));
        assert_true(ops == want);
        assert_true(allp == want);
        for (int w = 0; w < 4; w++)
            if (value(l, wgmma[w]) != 0.0)
                fail_msg("K9 wmma %s: %s = %.17g, want 0 (mma.sync, no wgmma)", types[t], wgmma[w],
                         value(l, wgmma[w]));
        assert_true(value(l, "tensor_inst_mma") == 0.0);
        assert_true(value(l, "tensor_pipe_inst") > 0.0);
    }
    collect_result_free(r);
    cudaFree(c);
    cudaFree(b);
    cudaFree(a);
}

/* K10 */
static void test_dmma_padded(void **state)
{
    (void)state;
    const int m = 8192, n = 12, k = 2048;
    const double want = 2.0 * m * n * k, per_n = 2.0 * m * k; /* operations per column of C */
    const double one = 1.0, zero = 0.0;
    double *a = NULL, *b = NULL, *c = NULL;
    cublasHandle_t h = NULL;
    CHECK(cudaMalloc(&a, (size_t)m * k * sizeof(double)));
    CHECK(cudaMalloc(&b, (size_t)k * n * sizeof(double)));
    CHECK(cudaMalloc(&c, (size_t)m * n * sizeof(double)));
    CHECK(cudaMemset(a, 0, (size_t)m * k * sizeof(double)));
    CHECK(cudaMemset(b, 0, (size_t)k * n * sizeof(double)));
    assert_int_equal(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    /* warm-up outside the session */
    assert_int_equal(
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m),
        CUBLAS_STATUS_SUCCESS);
    CHECK(cudaDeviceSynchronize());
    const char *names[] = {"default", "tensor_inst_mma", "tensor_pipe_inst"};
    struct collect_session *s = begin(names, 3, 0);
    assert_int_equal(
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m),
        CUBLAS_STATUS_SUCCESS);
    struct collect_result *r = end(s, COLLECT_MODE_COUNTERS);
    assert_true(r->nlaunch >= 1);
    double ops = 0, inst = 0, pipe = 0, dp = 0;
    for (int i = 0; i < r->nlaunch; i++) {
        ops += value(&r->launch[i], "tensor_ops_fp64");
        inst += value(&r->launch[i], "tensor_inst_mma");
        pipe += value(&r->launch[i], "tensor_pipe_inst");
        dp += value(&r->launch[i], "flop_count_dp");
    }
    print_message("K10 dgemm %d x %d x %d: tensor_ops_fp64 %.17g = %.4f x 2mnk (n padded to "
                  "%.2f); tensor_inst_mma %.0f, tensor_pipe_inst %.0f, flop_count_dp %.17g (%d "
                  "launch%s, %s)\n",
                  m, n, k, ops, ops / want, ops / per_n, inst, pipe, dp, r->nlaunch,
                  r->nlaunch == 1 ? "" : "es", r->launch[0].demangled);
    if (inst <= 0.0)
        fail_msg("K10 dgemm %d x %d x %d: cuBLAS chose a kernel without DMMA (%s)", m, n, k,
                 r->launch[0].demangled);
    assert_true(ops > want);                  /* executed, not useful, work */
    assert_true(ops <= per_n * 32);           /* n padded to at most 32 */
    assert_true(fmod(ops, per_n * 8) == 0.0); /* to a multiple of 8: whole DMMA tiles */
    collect_result_free(r);
    cublasDestroy(h);
    cudaFree(c);
    cudaFree(b);
    cudaFree(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_config),
        cmocka_unit_test(test_copy_dram_bytes),
        cmocka_unit_test(test_fma_flops),
        cmocka_unit_test(test_bf16_gemm_tensor_ops),
        cmocka_unit_test(test_timing_mode),
        cmocka_unit_test(test_many_launches),
        cmocka_unit_test(test_tensor_ops_every_precision),
        cmocka_unit_test(test_no_tensor_instruction),
        cmocka_unit_test(test_wmma_mma_sync),
        cmocka_unit_test(test_dmma_padded),
    };
    setenv("CUDA_MODULE_LOADING", "LAZY", 1); /* see test_launch_config */
    if (cudaFree(0) != cudaSuccess) {
        printf("no CUDA device: skipped\n");
        return 77; /* ctest's SKIP_RETURN_CODE for this test, not a pass */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
