/*
 * flops.cu - FMA throughput of the CUDA cores for fp64, fp32, fp16x2 and bf16x2
 * (mixbench's method; the target: >= 97% of SMs x lanes x 2 x clock seen).
 *
 * Each thread runs CHAINS independent chains x = x*y + z, unrolled UNROLL times
 * inside a run-time loop, so the loop's own instructions (a counter, a compare, a
 * branch) are 3 in every CHAINS*UNROLL+3 issued: the kernel can reach 99.4% of the
 * issue rate. y and z are kernel arguments, so nothing folds at compile time.
 * Dead-code guard: the chains' sum is stored only when it equals `never`, a value
 * the chains cannot reach (they converge to 1); the compiler cannot know that, so
 * every FMA stays. tests/probes/sass-check.sh checks that FFMA, DFMA, HFMA2 and
 * HFMA2.BF16 are in the SASS.
 *
 * The SM clock is read twice: NVML samples while the kernels run (the clock seen,
 * used for the theoretical value) and, inside the kernel, clock64 over
 * %globaltimer in block 0 (stored in params, and the fallback without NVML).
 */
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define CHAINS             8
#define UNROLL             64
#define PEAK_BLOCK         256
#define PEAK_BLOCKS_PER_SM 4

static __device__ __forceinline__ float fma_t(float x, float y, float z)
{
    return fmaf(x, y, z);
}
static __device__ __forceinline__ double fma_t(double x, double y, double z)
{
    return fma(x, y, z);
}
static __device__ __forceinline__ __half2 fma_t(__half2 x, __half2 y, __half2 z)
{
    return __hfma2(x, y, z);
}
static __device__ __forceinline__ __nv_bfloat162 fma_t(__nv_bfloat162 x, __nv_bfloat162 y,
                                                       __nv_bfloat162 z)
{
    return __hfma2(x, y, z);
}

static __device__ __forceinline__ bool same(float a, float b)
{
    return a == b;
}
static __device__ __forceinline__ bool same(double a, double b)
{
    return a == b;
}
static __device__ __forceinline__ bool same(__half2 a, __half2 b)
{
    return __hbeq2(a, b);
}
static __device__ __forceinline__ bool same(__nv_bfloat162 a, __nv_bfloat162 b)
{
    return __hbeq2(a, b);
}

/* Per-type conversions from two floats (lanes) and back, host and device. */
template <typename T> struct conv;
template <> struct conv<float> {
    static __host__ __device__ float make(float a, float)
    {
        return a;
    }
    static double lane(float v, int)
    {
        return v;
    }
};
template <> struct conv<double> {
    static __host__ __device__ double make(float a, float)
    {
        return a;
    }
    static double lane(double v, int)
    {
        return v;
    }
};
template <> struct conv<__half2> {
    static __host__ __device__ __half2 make(float a, float b)
    {
        return __floats2half2_rn(a, b);
    }
    static double lane(__half2 v, int i)
    {
        return i ? __high2float(v) : __low2float(v);
    }
};
template <> struct conv<__nv_bfloat162> {
    static __host__ __device__ __nv_bfloat162 make(float a, float b)
    {
        return __floats2bfloat162_rn(a, b);
    }
    static double lane(__nv_bfloat162 v, int i)
    {
        return i ? __high2float(v) : __low2float(v);
    }
};

static __host__ __device__ float x0_of(int c, int lane)
{
    return 0.5f + 0.05f * (float)c + 0.125f * (float)lane;
}

template <typename T>
__global__ void __launch_bounds__(PEAK_BLOCK)
    k_peak(T y, T z, int iters, T never, T *out, int verify, long long *clk)
{
    T x[CHAINS];
    long long c0 = 0;
    unsigned long long g0 = 0;
    const bool timer = blockIdx.x == 0 && threadIdx.x == 0;
    if (timer) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
        c0 = clock64();
    }
#pragma unroll
    for (int c = 0; c < CHAINS; c++)
        x[c] = conv<T>::make(x0_of(c, 0), x0_of(c, 1));
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int c = 0; c < CHAINS; c++)
                x[c] = fma_t(x[c], y, z);
    }
    T sum = x[0];
#pragma unroll
    for (int c = 1; c < CHAINS; c++)
        sum = sum + x[c];
    /* never taken in timed runs (the chains converge to 1): keeps every FMA alive */
    if (verify || same(sum, never))
        out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    if (timer) {
        unsigned long long g1;
        long long c1 = clock64();
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
        clk[0] = c1 - c0;
        clk[1] = (long long)(g1 - g0);
    }
}

template <typename T> struct peak_job {
    T y, z, never;
    int iters, grid;
    T *out;
    long long *clk;
};

template <typename T> static int enqueue_peak(void *arg, cudaStream_t st)
{
    peak_job<T> *j = (peak_job<T> *)arg;
    k_peak<T><<<j->grid, PEAK_BLOCK, 0, st>>>(j->y, j->z, j->iters, j->never, j->out, 0, j->clk);
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

/* One block, one outer iteration, every thread's sum stored: compare with float64. */
template <typename T> static int check_peak(struct probes *s, peak_job<T> *j, int lanes, double tol)
{
    T got[PEAK_BLOCK];
    double y[2], z[2];
    int rc = RK_OK;
    for (int l = 0; l < lanes; l++) {
        y[l] = conv<T>::lane(j->y, l);
        z[l] = conv<T>::lane(j->z, l);
    }
    k_peak<T><<<1, PEAK_BLOCK, 0, s->stream>>>(j->y, j->z, 1, j->never, j->out, 1, j->clk);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaMemcpyAsync(got, j->out, sizeof got, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    for (int l = 0; l < lanes && rc == RK_OK; l++) {
        double want = 0;
        for (int c = 0; c < CHAINS; c++) {
            double x = conv<T>::lane(conv<T>::make(x0_of(c, 0), x0_of(c, 1)), l);
            for (int u = 0; u < UNROLL; u++)
                x = x * y[l] + z[l];
            want += x;
        }
        for (int t = 0; t < PEAK_BLOCK; t++)
            if (!(fabs(conv<T>::lane(got[t], l) - want) <= tol * fabs(want))) {
                rc = rk_error(RK_EVERIFY,
                              "the FMA throughput kernel computed %g, not %g; "
                              "please report this",
                              conv<T>::lane(got[t], l), want);
                break;
            }
    }
    return rc;
}

template <typename T>
static int run_peak(struct probes *s, const char *name, const char *prec, const char *sass,
                    int lanes_per_value, double tol, struct probes_output *out)
{
    const int reps = s->quick ? 4 : 10;
    const double target_ms = s->quick ? 4.0 : 10.0;
    int lanes = probes_lanes_per_sm(s->dev.cc_major, s->dev.cc_minor, prec);
    double flops_per_fma = 2.0 * lanes_per_value;
    double ms[PT_MAX_REPS], clk_mhz_kernel, seen, est_rate;
    long long h_clk[2];
    peak_job<T> j{};
    int rc = RK_OK;
    struct probes_result *r;

    /* x <- (15/16) x + 1/16: exact in every format, converges to 1, never overflows. */
    j.y = conv<T>::make(0.9375f, 0.9375f);
    j.z = conv<T>::make(0.0625f, 0.0625f);
    j.never = conv<T>::make(-1234.5f, -1234.5f);
    j.grid = s->dev.sm_count * PEAK_BLOCKS_PER_SM;
    PT_CUDA(cudaMalloc(&j.out, (size_t)j.grid * PEAK_BLOCK * sizeof(T)));
    PT_CUDA(cudaMalloc(&j.clk, 2 * sizeof(long long)));
    if ((rc = check_peak<T>(s, &j, lanes_per_value, tol)) != RK_OK)
        goto out;
    /* Iterations for about target_ms at the datasheet rate (64 lanes if unknown). */
    est_rate =
        (double)s->dev.sm_count * (lanes ? lanes : 64) * flops_per_fma * s->dev.sm_clock_mhz * 1e6;
    j.iters = (int)(est_rate * target_ms * 1e-3 /
                    ((double)j.grid * PEAK_BLOCK * CHAINS * UNROLL * flops_per_fma));
    if (j.iters < 1)
        j.iters = 1;
    if ((rc = pt_time(s, enqueue_peak<T>, &j, 2, reps, ms)) != RK_OK)
        goto out;
    PT_CUDA(cudaMemcpy(h_clk, j.clk, sizeof h_clk, cudaMemcpyDeviceToHost));
    clk_mhz_kernel = h_clk[1] > 0 ? (double)h_clk[0] / (double)h_clk[1] * 1e3 : NAN;
    if (s->measured_clock_mhz <= 0 && !isnan(clk_mhz_kernel))
        s->measured_clock_mhz = clk_mhz_kernel;
    r = pt_add_result(out, name);
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    {
        double flops =
            (double)j.grid * PEAK_BLOCK * CHAINS * UNROLL * (double)j.iters * flops_per_fma;
        pt_fill_rate(r, ms, reps, flops / 1e9); /* flop / ms / 1e9 = TFLOP/s */
    }
    seen = pt_clock_seen(s);
    r->kind = "compute";
    r->level = NULL;
    r->precision = prec;
    r->unit = "TFLOP/s";
    r->theoretical =
        lanes ? (double)s->dev.sm_count * lanes * flops_per_fma * seen * 1e6 / 1e12 : NAN;
    snprintf(r->method, sizeof r->method,
             "%d independent %s chains per thread unrolled %d, %d blocks of %d threads; flops = "
             "%g per instruction; dead-code guard: conditional store",
             CHAINS, sass, UNROLL, j.grid, PEAK_BLOCK, flops_per_fma);
    {
        /* unknown (no clock measured, no lanes known for this precision): null */
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p,
                      "{\"chains\":%d,\"unroll\":%d,\"iters\":%d,\"grid\":%d,\"block\":%d,"
                      "\"lanes_per_sm\":%d",
                      CHAINS, UNROLL, j.iters, j.grid, PEAK_BLOCK, lanes);
        pt_json_fixed(&p, "clock_seen_mhz", seen, 0);
        pt_json_fixed(&p, "clock_measured_mhz", clk_mhz_kernel, 1);
        pt_json_fixed(&p, "fraction_of_theoretical", r->value / r->theoretical, 4);
        rk_buf_puts(&p, "}");
        rc = pt_set_params(r, &p);
    }
out:
    cudaFree(j.out);
    cudaFree(j.clk);
    return rc;
}

int pt_peak_fma(struct probes *s, int prec, struct probes_output *out)
{
    switch (prec) {
    case PT_FP64:
        return run_peak<double>(s, "peak_fp64_fma", "fp64", "DFMA", 1, 1e-12, out);
    case PT_FP32:
        return run_peak<float>(s, "peak_fp32_fma", "fp32", "FFMA", 1, 1e-5, out);
    case PT_FP16X2:
        return run_peak<__half2>(s, "peak_fp16x2_fma", "fp16x2", "HFMA2", 2, 1e-2, out);
    default:
        return run_peak<__nv_bfloat162>(s, "peak_bf16x2_fma", "bf16x2", "HFMA2.BF16", 2, 5e-2, out);
    }
}
