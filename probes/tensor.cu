/*
 * tensor.cu - tensor-core throughput for bf16, fp16, tf32, fp64, int8 and fp8
 * through cuBLASLt GEMMs on large random matrices.
 *
 * Method: m = n = k = 8192 in the "TN" layout every type supports (A stored k x m
 * and transposed, B k x n, D m x n, column-major; fp8 and int8 require it). The
 * heuristic's candidate algorithms are each timed briefly, the best is timed in
 * full, and its median is the ceiling. bf16 is also run through a plain
 * cublasGemmEx on the same matrices in the same run; the ratio is in params (the
 * issue's target is >= 0.95 of it).
 *
 * Inputs are drawn by a counter-based hash (device.cuh), so the host recomputes
 * any element without copying matrices back: 16 sampled entries of D are checked
 * against a float64 dot product before anything is timed (relative error over the
 * samples; int8 must be exact). No datasheet formula is stored for tensor cores
 * (the device properties give no tensor rate), so theoretical is NaN.
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#define GEMM_N          8192
#define WORKSPACE_BYTES ((size_t)32 << 20) /* what NVIDIA recommends for Hopper */
#define MAX_ALGOS       8
#define N_SAMPLES       16

struct tc_type {
    const char *name, *unit;
    cudaDataType_t ab, cd, scale;
    cublasComputeType_t compute;
    int ab_bytes, cd_bytes;
    double tol; /* relative error over the samples; 0 = exact */
};

/* In the order of PT_TC_* (internal.h). */
static const struct tc_type types[] = {
    {"bf16", "TFLOP/s", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, 1e-2},
    {"fp16", "TFLOP/s", CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, 5e-3},
    {"tf32", "TFLOP/s", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4,
     5e-3},
    {"fp64", "TFLOP/s", CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8, 1e-12},
    {"int8", "TOP/s", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4, 0},
    {"fp8", "TFLOP/s", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2, 2e-2},
};

#define PT_BLAS(call)                                                                              \
    do {                                                                                           \
        cublasStatus_t pt_st_ = (call);                                                            \
        if (pt_st_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            rc = rk_error(RK_ECUDA, "%s failed: %s (%s:%d)", #call, cublasGetStatusString(pt_st_), \
                          __FILE__, __LINE__);                                                     \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* The value of element i of a matrix of type t drawn with seed: host and device agree. */
static __host__ __device__ float draw(uint64_t seed, uint64_t i)
{
    return (float)(2.0 * pt_uniform(seed, i) - 1.0);
}

__global__ void k_fill_gemm(void *p, size_t n, int t, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float f = draw(seed, i);
        switch (t) {
        case PT_TC_BF16:
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(f);
            break;
        case PT_TC_FP16:
            ((__half *)p)[i] = __float2half_rn(f);
            break;
        case PT_TC_TF32:
            ((float *)p)[i] = f;
            break;
        case PT_TC_FP64:
            ((double *)p)[i] = (double)f;
            break;
        case PT_TC_INT8:
            ((int8_t *)p)[i] = (int8_t)floorf(f * 64.0f);
            break;
        default:
            ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(f);
            break;
        }
    }
}

/* The host's view of an input element, converted exactly as the device stored it. */
static double host_in(int t, uint64_t seed, uint64_t i)
{
    float f = draw(seed, i);
    switch (t) {
    case PT_TC_BF16:
        return __bfloat162float(__float2bfloat16_rn(f));
    case PT_TC_FP16:
        return __half2float(__float2half_rn(f));
    case PT_TC_TF32:
    case PT_TC_FP64:
        return f;
    case PT_TC_INT8:
        return (double)(int8_t)floorf(f * 64.0f);
    default:
        return (double)(float)__nv_fp8_e4m3(f);
    }
}

static double host_out(int t, const unsigned char *b)
{
    switch (t) {
    case PT_TC_BF16:
    case PT_TC_FP8: {
        __nv_bfloat16 v;
        memcpy(&v, b, sizeof v);
        return __bfloat162float(v);
    }
    case PT_TC_FP16: {
        __half v;
        memcpy(&v, b, sizeof v);
        return __half2float(v);
    }
    case PT_TC_TF32: {
        float v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    case PT_TC_FP64: {
        double v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    default: {
        int32_t v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    }
}

struct lt_job {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    const cublasLtMatmulAlgo_t *algo;
    const void *alpha, *beta;
    void *a, *b, *d, *ws;
    size_t ws_bytes;
};

static int enqueue_lt(void *arg, cudaStream_t st)
{
    struct lt_job *j = (struct lt_job *)arg;
    cublasStatus_t e = cublasLtMatmul(j->lt, j->op, j->alpha, j->a, j->la, j->b, j->lb, j->beta,
                                      j->d, j->lc, j->d, j->lc, j->algo, j->ws, j->ws_bytes, st);
    if (e != CUBLAS_STATUS_SUCCESS)
        return rk_error(RK_ECUDA, "cublasLtMatmul failed: %s", cublasGetStatusString(e));
    return RK_OK;
}

struct blas_job {
    cublasHandle_t h;
    const void *a, *b;
    void *d;
};

static int enqueue_blas(void *arg, cudaStream_t st)
{
    struct blas_job *j = (struct blas_job *)arg;
    const float alpha = 1.0f, beta = 0.0f;
    (void)st; /* the handle is bound to the session's stream */
    cublasStatus_t e =
        cublasGemmEx(j->h, CUBLAS_OP_T, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &alpha, j->a,
                     CUDA_R_16BF, GEMM_N, j->b, CUDA_R_16BF, GEMM_N, &beta, j->d, CUDA_R_16BF,
                     GEMM_N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (e != CUBLAS_STATUS_SUCCESS)
        return rk_error(RK_ECUDA, "cublasGemmEx (bf16) failed: %s", cublasGetStatusString(e));
    return RK_OK;
}

/* Poisons D, runs one GEMM through fn, compares N_SAMPLES entries with float64. */
static int check_gemm(struct probes *s, int t, pt_enqueue_fn fn, void *arg, void *d,
                      const char *what)
{
    const struct tc_type *ty = &types[t];
    double num = 0, den = 0;
    int rc;
    RK_CUDA(cudaMemsetAsync(d, 0xFF, (size_t)GEMM_N * GEMM_N * ty->cd_bytes, s->stream));
    if ((rc = fn(arg, s->stream)) != RK_OK)
        return rc;
    RK_CUDA(cudaStreamSynchronize(s->stream));
    for (int q = 0; q < N_SAMPLES; q++) {
        uint64_t i = pt_hash(0xAB00 + q) % GEMM_N, j = pt_hash(0xCD00 + q) % GEMM_N;
        unsigned char raw[8];
        double ref = 0, got;
        RK_CUDA(cudaMemcpy(raw, (const unsigned char *)d + (i + j * GEMM_N) * ty->cd_bytes,
                           ty->cd_bytes, cudaMemcpyDeviceToHost));
        got = host_out(t, raw);
        for (uint64_t kk = 0; kk < GEMM_N; kk++)
            ref += host_in(t, 11, kk + i * GEMM_N) * host_in(t, 12, kk + j * GEMM_N);
        if (isnan(got))
            return rk_error(RK_EVERIFY, "the %s %s GEMM left D(%llu,%llu) unwritten", what,
                            ty->name, (unsigned long long)i, (unsigned long long)j);
        num += (got - ref) * (got - ref);
        den += ref * ref;
    }
    if (!(sqrt(num) <= ty->tol * sqrt(den)))
        return rk_error(RK_EVERIFY,
                        "the %s %s GEMM is wrong: relative error %.3g over %d samples "
                        "(allowed %.3g)",
                        what, ty->name, sqrt(num / den), N_SAMPLES, ty->tol);
    return RK_OK;
}

void pt_tensor_release(struct probes *s)
{
    if (s->blas)
        cublasDestroy((cublasHandle_t)s->blas);
    if (s->lt)
        cublasLtDestroy((cublasLtHandle_t)s->lt);
    cudaFree(s->workspace);
    s->blas = s->lt = s->workspace = NULL;
}

int pt_peak_tensor(struct probes *s, int t, struct probes_output *out)
{
    const struct tc_type *ty = &types[t];
    const int reps = s->quick ? 5 : 10, screen_reps = s->quick ? 2 : 3;
    const int max_algos = s->quick ? 3 : MAX_ALGOS;
    const size_t elems = (size_t)GEMM_N * GEMM_N;
    const double flops = 2.0 * GEMM_N * GEMM_N * (double)GEMM_N;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur[MAX_ALGOS];
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    int n_algos = 0, best = -1, rc = RK_OK;
    double ms[PT_MAX_REPS], best_ms[PT_MAX_REPS], best_med = INFINITY, ref_tflops = NAN;
    float alpha_f = 1, beta_f = 0;
    double alpha_d = 1, beta_d = 0;
    int32_t alpha_i = 1, beta_i = 0;
    struct lt_job j;
    struct probes_result *r;

    memset(&j, 0, sizeof j);
    if (!s->gemm[0]) {
        for (int i = 0; i < 3; i++)
            PT_CUDA(cudaMalloc(&s->gemm[i], elems * 8));
        s->gemm_bytes = elems * 8;
    }
    if (!s->lt) {
        cublasLtHandle_t h;
        PT_BLAS(cublasLtCreate(&h));
        s->lt = h;
        PT_CUDA(cudaMalloc(&s->workspace, WORKSPACE_BYTES));
        s->workspace_bytes = WORKSPACE_BYTES;
    }
    k_fill_gemm<<<s->dev.sm_count * 8, 256, 0, s->stream>>>(s->gemm[0], elems, t, 11);
    k_fill_gemm<<<s->dev.sm_count * 8, 256, 0, s->stream>>>(s->gemm[1], elems, t, 12);
    PT_CUDA(cudaGetLastError());

    PT_BLAS(cublasLtMatmulDescCreate(&op, ty->compute, ty->scale));
    PT_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    PT_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    PT_BLAS(cublasLtMatrixLayoutCreate(&la, ty->ab, GEMM_N, GEMM_N, GEMM_N));
    PT_BLAS(cublasLtMatrixLayoutCreate(&lb, ty->ab, GEMM_N, GEMM_N, GEMM_N));
    PT_BLAS(cublasLtMatrixLayoutCreate(&lc, ty->cd, GEMM_N, GEMM_N, GEMM_N));
    PT_BLAS(cublasLtMatmulPreferenceCreate(&pref));
    PT_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &s->workspace_bytes, sizeof s->workspace_bytes));
    PT_BLAS(cublasLtMatmulAlgoGetHeuristic((cublasLtHandle_t)s->lt, op, la, lb, lc, lc, pref,
                                           max_algos, heur, &n_algos));
    if (n_algos == 0) {
        rc = rk_error(RK_ECUDA, "cuBLASLt offers no algorithm for a %s GEMM on this GPU", ty->name);
        goto out;
    }
    j.lt = (cublasLtHandle_t)s->lt;
    j.op = op;
    j.la = la;
    j.lb = lb;
    j.lc = lc;
    j.a = s->gemm[0];
    j.b = s->gemm[1];
    j.d = s->gemm[2];
    j.ws = s->workspace;
    j.ws_bytes = s->workspace_bytes;
    j.alpha = ty->scale == CUDA_R_64F   ? (const void *)&alpha_d
              : ty->scale == CUDA_R_32I ? (const void *)&alpha_i
                                        : (const void *)&alpha_f;
    j.beta = ty->scale == CUDA_R_64F   ? (const void *)&beta_d
             : ty->scale == CUDA_R_32I ? (const void *)&beta_i
                                       : (const void *)&beta_f;
    /* Screen every candidate briefly (each verified first), then time the best in full. */
    for (int a = 0; a < n_algos && !rk_interrupted; a++) {
        if (heur[a].state != CUBLAS_STATUS_SUCCESS)
            continue;
        j.algo = &heur[a].algo;
        if ((rc = check_gemm(s, t, enqueue_lt, &j, j.d, "cuBLASLt")) != RK_OK)
            goto out;
        if ((rc = pt_time(s, enqueue_lt, &j, 1, screen_reps, ms)) != RK_OK)
            goto out;
        double med = pt_median(ms, screen_reps);
        if (med < best_med) {
            best_med = med;
            best = a;
        }
    }
    if (rk_interrupted || best < 0)
        goto out;
    j.algo = &heur[best].algo;
    if ((rc = pt_time(s, enqueue_lt, &j, 2, reps, best_ms)) != RK_OK)
        goto out;
    if (s->energy && model_energy_op_of(ty->name, 1) >= 0) {
        /* the energy probe's tensor point (energy.cu): A and B read, D written, once */
        struct model_energy_work w;
        memset(&w, 0, sizeof w);
        w.flops[model_energy_op_of(ty->name, 1)] = flops;
        w.bytes[MODEL_LEVEL_DRAM] = w.bytes[MODEL_LEVEL_L2] =
            (double)elems * (2.0 * ty->ab_bytes + ty->cd_bytes);
        char name[40];
        snprintf(name, sizeof name, "tensor_%s", ty->name);
        if ((rc = pt_energy_point(s, enqueue_lt, &j, pt_median(best_ms, reps), &w, name)) != RK_OK)
            goto out;
    }

    if (t == PT_TC_BF16) {
        struct blas_job bj = {NULL, s->gemm[0], s->gemm[1], s->gemm[2]};
        if (!s->blas) {
            cublasHandle_t h;
            PT_BLAS(cublasCreate(&h));
            s->blas = h;
        }
        bj.h = (cublasHandle_t)s->blas;
        PT_BLAS(cublasSetStream(bj.h, s->stream));
        if ((rc = check_gemm(s, t, enqueue_blas, &bj, bj.d, "cuBLAS")) != RK_OK)
            goto out;
        if ((rc = pt_time(s, enqueue_blas, &bj, 2, reps, ms)) != RK_OK)
            goto out;
        ref_tflops = flops / pt_median(ms, reps) / 1e9;
    }

    {
        char name[48];
        snprintf(name, sizeof name, "peak_tensor_%s", ty->name);
        r = pt_add_result(out, name);
    }
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    pt_fill_rate(r, best_ms, reps, flops / 1e9);
    r->kind = "compute";
    r->level = NULL;
    r->precision = ty->name;
    r->unit = ty->unit;
    snprintf(r->method, sizeof r->method,
             "cuBLASLt GEMM %dx%dx%d, TN, %s inputs on random data, best of %d heuristic "
             "algorithms (each verified), median of %d",
             GEMM_N, GEMM_N, GEMM_N, ty->name, n_algos, reps);
    {
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p,
                      "{\"m\":%d,\"n\":%d,\"k\":%d,\"layout\":\"TN\",\"algos_tried\":%d,"
                      "\"algo_rank\":%d,\"workspace_bytes\":%zu",
                      GEMM_N, GEMM_N, GEMM_N, n_algos, best, s->workspace_bytes);
        if (t == PT_TC_BF16) {
            pt_json_fixed(&p, "cublas_gemmex_tflops", ref_tflops, 1);
            pt_json_fixed(&p, "ratio_to_cublas", r->value / ref_tflops, 4);
        }
        rk_buf_puts(&p, "}");
        rc = pt_set_params(r, &p);
    }
out:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (lc)
        cublasLtMatrixLayoutDestroy(lc);
    if (lb)
        cublasLtMatrixLayoutDestroy(lb);
    if (la)
        cublasLtMatrixLayoutDestroy(la);
    if (op)
        cublasLtMatmulDescDestroy(op);
    return rc;
}
