/*
 * session.cu - the harness that makes every measurement of kernels/ honest: random
 * inputs, a float64 cuBLAS reference, verification, L2 flushing and CUDA-event
 * timing (kernels.h states the promises; BabelStream's check_solution is the model of
 * the verification).
 *
 * Assumptions:
 *   - One session per device and thread; everything runs on the session's stream.
 *   - Inputs are uniform random numbers in [-1, 1) from a counter-based hash
 *     (splitmix64), never zeros; each prepare() draws fresh ones. For fp32 the
 *     reference multiplies the float inputs converted exactly to double.
 *   - The reference is cublasDgemm, computed lazily once per layout and shape.
 *   - The L2 is flushed by reading a buffer of four times its size that is written
 *     once, when the session starts, and never again: every line the flush leaves
 *     is clean, and the dirty lines of the kernel before (C, split-k partial sums)
 *     are written back during the flush, not during the timed kernel that follows.
 *     (An earlier flush wrote the buffer and then read it back, which could leave
 *     lines it had just written dirty. On the H100 the two give the same times,
 *     tsm2_v3 fp32 10240x16x10240 156.0 against 156.2 us, and the same DRAM writes in
 *     the counters, so that risk was not what it cost; this one has no such risk at
 *     the same cost.) Four sizes: with a replacement that is not LRU, a line survives
 *     n sizes of new lines with a probability of about e^-n (2% at four). Nothing of
 *     it is timed.
 */
#include "common.h"
#include "gpu.h"
#include "internal.h"
#include "verify.cuh"

#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kernels_session {
    struct rk_gpu dev;
    cudaStream_t stream;
    cublasHandle_t cublas;
    cudaEvent_t ev_start, ev_stop;
    void *flush;
    size_t flush_bytes;
    unsigned *flush_sink;
    volatile int *gate; /* host-mapped: gate_kernel waits until it is not 0 (timed_launch) */
    int *gate_dev;
    double *stats; /* device: sum (out-ref)^2, sum ref^2, non-finite count */
    unsigned long long seed, draws;

    int prepared, prec;
    struct kernels_shape shape;
    void *a, *b, *c;   /* inputs and output in the precision */
    double *a64, *b64; /* float64 inputs for the reference (== a, b for fp64) */
    double *ref[2];    /* per enum kernels_layout, NULL until needed */
    void *ws;
    size_t ws_bytes;
    struct model_gpu gpu[KERNELS_NPREC]; /* kernels_session_set_gpu; valid where have_gpu */
    int have_gpu[KERNELS_NPREC];
    int measured; /* a measurement has been timed: WARMUP_S from then on */
};

/* ---- small shared helpers (internal.h) ----------------------------------- */

extern "C" int kern_why(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (why && len) {
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return RK_EUSAGE;
}

extern "C" int kern_check_launch(const char *what)
{
    cudaError_t rc = cudaGetLastError();
    if (rc != cudaSuccess)
        return rk_error(RK_ECUDA, "launching %s failed: %s; check the parameters", what,
                        cudaGetErrorString(rc));
    return RK_OK;
}

extern "C" int kern_check_block(const void *func, unsigned threads, const char *name)
{
    cudaFuncAttributes attr;
    RK_CUDA(cudaFuncGetAttributes(&attr, func));
    if ((int)threads > attr.maxThreadsPerBlock)
        return rk_error(RK_EUSAGE,
                        "%s: a block of %u threads exceeds the %d this kernel allows with %d "
                        "registers per thread; choose a smaller block",
                        name, threads, attr.maxThreadsPerBlock, attr.numRegs);
    return RK_OK;
}

extern "C" int kern_smem_optin(const void *func, size_t bytes, const struct rk_gpu *dev)
{
    if (bytes <= 48 * 1024)
        return RK_OK;
    if ((long)bytes > dev->smem_per_block_optin_bytes)
        return rk_error(RK_EUSAGE, "%zu bytes of shared memory per block exceed the device's %d",
                        bytes, dev->smem_per_block_optin_bytes);
    RK_CUDA(cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return RK_OK;
}

/* ---- device helpers ------------------------------------------------------ */

namespace
{

__device__ __forceinline__ double uniform_pm1(unsigned long long seed, unsigned long long i)
{
    unsigned long long z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0; /* [-1, 1) */
}

template <typename T>
__global__ void fill_kernel(T *x, double *x64, long n, unsigned long long seed)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        T v = (T)uniform_pm1(seed, (unsigned long long)i);
        x[i] = v;
        if (x64)
            x64[i] = (double)v;
    }
}

/* stats += {sum (out-ref)^2 over finite outputs, sum ref^2, count of NaN/Inf}. */
template <typename T>
__global__ void verify_kernel(const T *out, const double *ref, long n, double *stats)
{
    double d2 = 0, r2 = 0, bad = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x)
        verify_term((double)out[i], ref[i], &d2, &r2, &bad);
    verify_block_add(d2, r2, bad, stats);
}

/*
 * Reads the flush buffer (written once, at session start) so that the L2 ends up
 * holding its clean lines. The store is never taken (`sentinel` is a run-time value the
 * XOR cannot reach in practice); it exists so the compiler cannot drop the loads.
 */
__global__ void flush_read_kernel(const uint4 *buf, long n, unsigned sentinel, unsigned *sink)
{
    unsigned acc = 0;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == sentinel)
        *sink = acc;
}

/*
 * Holds the stream until the host sets *gate (or 2 s pass, should the host never do it): the
 * work queued behind it then starts back to back once it ends. timed_launch puts it ahead of a
 * warm repetition, as nvbench's blocking kernel does: with the GPU idle, the start event's
 * timestamp is taken when it reaches the GPU and the kernel's launch (host work, then the
 * submission) follows microseconds later, inside the timed span. A cold repetition has the L2
 * flush ahead of it, long enough to hide that (4 x the L2 read: about 65 us on an H100).
 */
__global__ void gate_kernel(const volatile int *gate)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*gate == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > 2000000000ull)
            break;
        __nanosleep(500);
    }
}

/* The warm-up before timing: at least this long [s], at most this many launches; before the
 * first measurement of a session WARMUP_FIRST_S. On an H100 the first measurement of a `roofkit
 * tune` process (fp32 TSM2 10240 x 17 x 10240, after 20 ms of warm-up) ran 3 of its 5 repetitions
 * at 200-313 us where the same configuration measured 182-184 us later in that process. */
#define WARMUP_S       0.02
#define WARMUP_FIRST_S 0.25
#define WARMUP_MAX     1000

const double TOL_FP32 = 1e-4;  /* fp32 lands near 1e-6 on these shapes; far under 1e-3 */
const double TOL_FP64 = 1e-12; /* fp64 lands near 1e-15 */

void free_inputs(struct kernels_session *s)
{
    if (s->a64 && s->a64 != s->a)
        cudaFree(s->a64);
    if (s->b64 && s->b64 != s->b)
        cudaFree(s->b64);
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->c);
    cudaFree(s->ref[0]);
    cudaFree(s->ref[1]);
    cudaFree(s->ws);
    s->a = s->b = s->c = NULL;
    s->a64 = s->b64 = NULL;
    s->ref[0] = s->ref[1] = NULL;
    s->ws = NULL;
    s->ws_bytes = 0;
    s->prepared = 0;
}

int cublas_check(cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return RK_OK;
    return rk_error(RK_ECUDA, "%s failed: %s (cuBLAS status %d)", what, cublasGetStatusString(st),
                    (int)st);
}

/* The float64 reference in the layout asked for (kernels.h, internal.h). */
int ensure_reference(struct kernels_session *s, int layout)
{
    const long m = s->shape.m, n = s->shape.n, k = s->shape.k;
    const double one = 1.0, zero = 0.0;
    cublasStatus_t st;
    if (s->ref[layout])
        return RK_OK;
    RK_CUDA(cudaMalloc((void **)&s->ref[layout], (size_t)m * (size_t)n * sizeof(double)));
    if (layout == KERNELS_COL_MAJOR)
        st = cublasDgemm(s->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, s->a64,
                         (int)m, s->b64, (int)k, &zero, s->ref[layout], (int)m);
    else /* row-major C = A B is column-major C^T = B^T A^T */
        st = cublasDgemm(s->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, s->b64,
                         (int)n, s->a64, (int)k, &zero, s->ref[layout], (int)n);
    return cublas_check(st, "cublasDgemm (the float64 reference)");
}

/* Relative error of s->c against the reference (or what ops->check says C must hold);
 * *nonfinite counts NaN/Inf. */
int check_output(struct kernels_session *s, const struct kern_ops *ops,
                 const struct kern_args *args, int layout, double *rel, long *nonfinite)
{
    const long count = s->shape.m * s->shape.n;
    double h[3];
    int blocks = 4 * s->dev.sm_count;
    RK_CUDA(cudaMemsetAsync(s->stats, 0, 3 * sizeof(double), s->stream));
    if (ops->check) {
        const int rc = ops->check(args, s->stats, blocks);
        if (rc != RK_OK)
            return rc;
    } else if (s->prec == KERNELS_FP64)
        verify_kernel<double>
            <<<blocks, 256, 0, s->stream>>>((const double *)s->c, s->ref[layout], count, s->stats);
    else
        verify_kernel<float>
            <<<blocks, 256, 0, s->stream>>>((const float *)s->c, s->ref[layout], count, s->stats);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaMemcpyAsync(h, s->stats, sizeof h, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    *nonfinite = (long)h[2];
    *rel = h[1] > 0 ? sqrt(h[0] / h[1]) : sqrt(h[0]);
    if (*nonfinite > 0)
        *rel = NAN;
    return RK_OK;
}

int flush_l2(struct kernels_session *s, unsigned pass)
{
    const long n = (long)(s->flush_bytes / sizeof(uint4));
    flush_read_kernel<<<4 * s->dev.sm_count, 512, 0, s->stream>>>(
        (const uint4 *)s->flush, n, 0x5eed1e55u ^ pass, s->flush_sink);
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

/* Poisons C with NaN (all bits set), runs prepare/launch/finish once and verifies. */
int poison_and_check_first(struct kernels_session *s, const struct kern_ops *ops,
                           const struct kern_args *args, struct kern_launch *info, int layout,
                           double *rel, long *bad)
{
    int rc;
    RK_CUDA(cudaMemsetAsync(s->c, 0xff, (size_t)args->m * (size_t)args->n * kern_elem(s->prec),
                            s->stream));
    if (ops->prepare && (rc = ops->prepare(args)) != RK_OK)
        return rc;
    memset(info, 0, sizeof *info);
    if ((rc = ops->launch(args, info)) != RK_OK)
        return rc;
    if (ops->finish && (rc = ops->finish(args)) != RK_OK)
        return rc;
    return check_output(s, ops, args, layout, rel, bad);
}

/* One launch between two events; *ns is the elapsed time. gated: behind gate_kernel, released
 * once the launch and the stop event are queued (warm repetitions: no flush ahead of them). */
int timed_launch(struct kernels_session *s, const struct kern_ops *ops,
                 const struct kern_args *args, struct kern_launch *info, const char *name,
                 double *ns, int gated)
{
    float ms = 0;
    int rc = RK_OK;
    cudaError_t cerr = cudaSuccess;
    if (gated) {
        *s->gate = 0;
        gate_kernel<<<1, 1, 0, s->stream>>>(s->gate_dev);
        cerr = cudaGetLastError();
    }
    if (cerr == cudaSuccess)
        cerr = cudaEventRecord(s->ev_start, s->stream);
    if (cerr == cudaSuccess && (rc = ops->launch(args, info)) == RK_OK)
        cerr = cudaEventRecord(s->ev_stop, s->stream);
    if (gated) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        *s->gate = 1; /* on every path: the stream must not wait out the 2 s */
    }
    if (rc != RK_OK)
        return rc;
    if (cerr != cudaSuccess)
        return rk_error(RK_ECUDA, "timing %s: %s", name, cudaGetErrorString(cerr));
    cerr = cudaEventSynchronize(s->ev_stop);
    if (cerr != cudaSuccess)
        return rk_error(RK_ECUDA, "running %s failed: %s", name, cudaGetErrorString(cerr));
    RK_CUDA(cudaEventElapsedTime(&ms, s->ev_start, s->ev_stop));
    *ns = (double)ms * 1e6;
    return RK_OK;
}

/* The launcher's arguments on the prepared inputs, with parameters p (workspace not set). */
void fill_args(struct kernels_session *s, const long *p, struct kern_args *args)
{
    memset(args, 0, sizeof *args);
    args->prec = s->prec;
    args->m = s->shape.m;
    args->n = s->shape.n;
    args->k = s->shape.k;
    args->a = s->a;
    args->b = s->b;
    args->c = s->c;
    args->p = p;
    args->stream = s->stream;
    args->cublas = s->cublas;
    args->dev = &s->dev;
    args->gpu = s->have_gpu[s->prec] ? &s->gpu[s->prec] : NULL;
}

size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

} // namespace

/* ---- public API ---------------------------------------------------------- */

extern "C" {

const char *kernels_precision_name(int prec)
{
    return prec == KERNELS_FP64 ? "fp64" : prec == KERNELS_FP32 ? "fp32" : "?";
}

int kernels_precision_parse(const char *s)
{
    if (s && strcmp(s, "fp32") == 0)
        return KERNELS_FP32;
    if (s && strcmp(s, "fp64") == 0)
        return KERNELS_FP64;
    return -1;
}

const char *kernels_layout_name(int layout)
{
    return layout == KERNELS_COL_MAJOR ? "column-major" : "row-major";
}

int kernels_session_open(int ordinal, unsigned long long seed, struct kernels_session **out)
{
    struct kernels_session *s = NULL;
    int count = 0, rc = RK_OK;
    cudaError_t cerr;
    cublasStatus_t st;

    *out = NULL;
    cerr = cudaGetDeviceCount(&count);
    if (cerr != cudaSuccess || count == 0)
        return rk_error(RK_ENOGPU, "no usable CUDA GPU (%s); run roofkit on a machine with one",
                        cerr != cudaSuccess ? cudaGetErrorString(cerr) : "0 devices");
    if (ordinal < 0 || ordinal >= count)
        return rk_error(RK_ENOGPU,
                        "there is no CUDA device %d (this machine has %d); pass --device", ordinal,
                        count);
    s = (struct kernels_session *)calloc(1, sizeof *s);
    if (!s)
        return rk_error(RK_ENOMEM, "out of host memory");
    s->seed = seed;
    RK_CUDA(cudaSetDevice(ordinal));
    if ((rc = rk_gpu_read(ordinal, &s->dev)) != RK_OK)
        goto out;

#define TRY(call)                                                                                  \
    do {                                                                                           \
        cerr = (call);                                                                             \
        if (cerr != cudaSuccess) {                                                                 \
            rc = rk_error(cerr == cudaErrorMemoryAllocation ? RK_ENOMEM : RK_ECUDA,                \
                          "%s failed: %s", #call, cudaGetErrorString(cerr));                       \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
    TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    TRY(cudaEventCreate(&s->ev_start));
    TRY(cudaEventCreate(&s->ev_stop));
    s->flush_bytes =
        round_up(4 * (size_t)(s->dev.l2_bytes > 0 ? s->dev.l2_bytes : 64 << 20), 1 << 20);
    TRY(cudaMalloc(&s->flush, s->flush_bytes));
    /* written once, never again: flush_l2 only reads it */
    TRY(cudaMemsetAsync(s->flush, 0x5a, s->flush_bytes, s->stream));
    TRY(cudaMalloc((void **)&s->flush_sink, sizeof(unsigned)));
    TRY(cudaHostAlloc((void **)&s->gate, sizeof(int), cudaHostAllocMapped));
    TRY(cudaHostGetDevicePointer((void **)&s->gate_dev, (void *)s->gate, 0));
    TRY(cudaMalloc((void **)&s->stats, 4 * sizeof(double)));
#undef TRY
    st = cublasCreate(&s->cublas);
    if (st != CUBLAS_STATUS_SUCCESS) {
        rc = cublas_check(st, "cublasCreate");
        s->cublas = NULL;
        goto out;
    }
    st = cublasSetStream(s->cublas, s->stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
        rc = cublas_check(st, "cublasSetStream");
        goto out;
    }
    /*
     * Default math: cuBLAS's fastest mode that never lowers the precision asked for, so
     * cublasSgemm stays on the CUDA cores (TF32 only with cublas_gemmex tf32 = 1; the GPU
     * test checks the error). CUBLAS_PEDANTIC_MATH was tried first: it made cublasDgemm
     * up to 1.4x slower on the ISM2 shapes, an unfair reference.
     */
    st = cublasSetMathMode(s->cublas, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        rc = cublas_check(st, "cublasSetMathMode");
        goto out;
    }
out:
    if (rc != RK_OK) {
        kernels_session_close(s);
        return rc;
    }
    *out = s;
    return RK_OK;
}

void kernels_session_close(struct kernels_session *s)
{
    if (!s)
        return;
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    free_inputs(s);
    if (s->cublas)
        cublasDestroy(s->cublas);
    cudaFree(s->flush);
    cudaFree(s->flush_sink);
    if (s->gate)
        cudaFreeHost((void *)s->gate);
    cudaFree(s->stats);
    if (s->ev_start)
        cudaEventDestroy(s->ev_start);
    if (s->ev_stop)
        cudaEventDestroy(s->ev_stop);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    free(s);
}

const struct rk_gpu *kernels_session_device(const struct kernels_session *s)
{
    return &s->dev;
}

void kernels_session_set_gpu(struct kernels_session *s, int prec, const struct model_gpu *gpu)
{
    if (prec < 0 || prec >= KERNELS_NPREC)
        return;
    s->have_gpu[prec] = gpu != NULL;
    if (gpu) {
        s->gpu[prec] = *gpu;
        s->gpu[prec].dram_curve_bytes = s->gpu[prec].dram_curve_util = NULL; /* not kept */
        s->gpu[prec].dram_curve_n = 0;
    }
}

size_t kernels_bytes_needed(int prec, const struct kernels_shape *sh)
{
    const size_t e = kern_elem(prec);
    const size_t mk = (size_t)sh->m * (size_t)sh->k, kn = (size_t)sh->k * (size_t)sh->n,
                 mn = (size_t)sh->m * (size_t)sh->n;
    size_t bytes = (mk + kn + mn) * e; /* A, B, C */
    if (prec != KERNELS_FP64)
        bytes += (mk + kn) * sizeof(double); /* float64 copies for the reference */
    bytes += 2 * mn * sizeof(double);        /* references, both layouts */
    bytes += (size_t)256 << 20;              /* cuBLAS workspace and allocation slack */
    return bytes;
}

int kernels_session_prepare(struct kernels_session *s, int prec, const struct kernels_shape *sh)
{
    size_t free_b = 0, total_b = 0, need;
    const size_t e = kern_elem(prec);
    size_t mk, kn, mn;
    int blocks;

    if (sh->m < 1 || sh->n < 1 || sh->k < 1)
        return rk_error(RK_EUSAGE, "shape %ldx%ldx%ld has a dimension below 1", sh->m, sh->n,
                        sh->k);
    if (sh->m > 0x7fffffffL || sh->n > 0x7fffffffL || sh->k > 0x7fffffffL ||
        (double)sh->m * (double)sh->k > 9.0e15 || (double)sh->m * (double)sh->n > 9.0e15 ||
        (double)sh->k * (double)sh->n > 9.0e15)
        return rk_error(RK_EUSAGE, "shape %ldx%ldx%ld is beyond what cuBLAS accepts", sh->m, sh->n,
                        sh->k);
    RK_CUDA(cudaStreamSynchronize(s->stream));
    free_inputs(s);

    /* Refuse before allocating anything. */
    need = kernels_bytes_needed(prec, sh);
    RK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b)
        return rk_error(RK_ENOMEM,
                        "shape %ldx%ldx%ld in %s needs %.2f GB of GPU memory but %.2f GB are free; "
                        "choose smaller --sizes",
                        sh->m, sh->n, sh->k, kernels_precision_name(prec), need / 1e9,
                        free_b / 1e9);

    mk = (size_t)sh->m * (size_t)sh->k;
    kn = (size_t)sh->k * (size_t)sh->n;
    mn = (size_t)sh->m * (size_t)sh->n;
    RK_CUDA(cudaMalloc(&s->a, mk * e));
    RK_CUDA(cudaMalloc(&s->b, kn * e));
    RK_CUDA(cudaMalloc(&s->c, mn * e));
    if (prec == KERNELS_FP64) {
        s->a64 = (double *)s->a;
        s->b64 = (double *)s->b;
    } else {
        RK_CUDA(cudaMalloc((void **)&s->a64, mk * sizeof(double)));
        RK_CUDA(cudaMalloc((void **)&s->b64, kn * sizeof(double)));
    }
    s->prec = prec;
    s->shape = *sh;
    s->draws++;
    blocks = 8 * s->dev.sm_count;
    {
        const unsigned long long seed_a = s->seed ^ (s->draws * 0x2545F4914F6CDD1DULL);
        const unsigned long long seed_b = seed_a ^ 0xD1B54A32D192ED03ULL;
        if (prec == KERNELS_FP64) {
            fill_kernel<double><<<blocks, 256, 0, s->stream>>>(s->a64, NULL, (long)mk, seed_a);
            fill_kernel<double><<<blocks, 256, 0, s->stream>>>(s->b64, NULL, (long)kn, seed_b);
        } else {
            fill_kernel<float>
                <<<blocks, 256, 0, s->stream>>>((float *)s->a, s->a64, (long)mk, seed_a);
            fill_kernel<float>
                <<<blocks, 256, 0, s->stream>>>((float *)s->b, s->b64, (long)kn, seed_b);
        }
    }
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaStreamSynchronize(s->stream));
    s->prepared = 1;
    return RK_OK;
}

int kernels_session_measure(struct kernels_session *s, const struct kernels_kernel *k,
                            const long *params, const struct kernels_options *opts,
                            struct kernels_result *r)
{
    const struct kern_ops *ops = (const struct kern_ops *)k->impl;
    struct kern_args args;
    struct kern_launch info;
    const int reps = opts && opts->reps > 0 ? opts->reps : 10;
    const int warm = opts ? opts->warm : 0;
    const int warmup = opts && opts->warmup > 0 ? opts->warmup : 2;
    const int layout = k->layout;
    double *times = NULL, rel1 = 0, rel2 = 0;
    long bad1 = 0, bad2 = 0;
    size_t ws_need;
    char why[200] = "", note[224] = "";
    int rc = RK_OK;

    memset(r, 0, sizeof *r);
    (void)cudaGetLastError(); /* a refused launch of an earlier configuration leaves it set */
    if (!s->prepared)
        RK_BUG("kernels_session_measure before kernels_session_prepare");
    if (!(k->precisions & KERNELS_PREC_BIT(s->prec)))
        return rk_error(RK_EUSAGE, "kernel '%s' has no %s version", k->name,
                        kernels_precision_name(s->prec));

    for (int i = 0; i < k->n_params; i++)
        r->params[i] = params ? params[i] : k->params[i].def;
    rc = kernels_check(k, s->prec, r->params, why, sizeof why);
    if (rc != RK_OK)
        return rk_error(RK_EUSAGE, "%s: %s", k->name, why);

    fill_args(s, r->params, &args);
    args.note = note;
    args.note_len = sizeof note;
    if (ops->resolve && ops->resolve(&args, r->params, why, sizeof why) != RK_OK)
        return rk_error(RK_EUSAGE, "%s on %ldx%ldx%ld: %s", k->name, args.m, args.n, args.k, why);
    kernels_params_json(k, r->params, r->params_json, sizeof r->params_json);
    if (note[0]) /* the resolve's reason, as more keys of the same object */
        kern_json_append(r->params_json, sizeof r->params_json, note);

    /* Workspace: refuse before allocating when it does not fit. */
    ws_need = ops->workspace ? ops->workspace(&args) : 0;
    if (ws_need > s->ws_bytes) {
        size_t free_b = 0, total_b = 0;
        cudaFree(s->ws);
        s->ws = NULL;
        s->ws_bytes = 0;
        RK_CUDA(cudaMemGetInfo(&free_b, &total_b));
        if (ws_need + ((size_t)64 << 20) > free_b)
            return rk_error(RK_ENOMEM, "%s needs %.2f GB of workspace but %.2f GB are free",
                            k->name, ws_need / 1e9, free_b / 1e9);
        RK_CUDA(cudaMalloc(&s->ws, ws_need));
        s->ws_bytes = ws_need;
    }
    args.ws = s->ws;
    args.ws_bytes = ws_need;

    rc = ops->check ? RK_OK : ensure_reference(s, layout);
    if (rc != RK_OK)
        return rc;
    times = (double *)calloc((size_t)reps, sizeof *times);
    if (!times)
        return rk_error(RK_ENOMEM, "out of host memory");

    /* 1. Poison the output, run once, verify: every element must have been written. */
    rc = poison_and_check_first(s, ops, &args, &info, layout, &rel1, &bad1);
    if (rc != RK_OK)
        goto out;

    /* 2. Warm-up, then the timed repetitions. The warm-up runs at least `warmup` launches and
     * WARMUP_S of them (at most WARMUP_MAX): on an H100, after the host work of preparing a
     * shape (random inputs, the float64 reference), the first 2-3 launches of a 1.1 ms kernel
     * ran 1.19x slower (fp64 TSM2 20480 x 16: 1299, 1299, 1287, then 1091-1097 us) whenever the
     * run prepared both precisions, so 2 launches left them in the median. The first
     * measurement of a session warms up for all of WARMUP_FIRST_S: capped at WARMUP_MAX
     * launches, a 5 us kernel had 10 ms of it. */
    {
        const double t0 = rk_now_s(), span = s->measured ? WARMUP_S : WARMUP_FIRST_S;
        const int most = s->measured ? WARMUP_MAX : INT_MAX;
        for (int i = 0; rc == RK_OK && (i < warmup || (i < most && rk_now_s() - t0 < span)); i++) {
            rc = ops->launch(&args, &info);
            if (rc == RK_OK && i + 1 >= warmup && cudaStreamSynchronize(s->stream) != cudaSuccess)
                rc = rk_error(RK_ECUDA, "%s: the warm-up launches failed: %s", k->name,
                              cudaGetErrorString(cudaGetLastError()));
        }
    }
    for (int i = 0; i < reps && rc == RK_OK; i++) {
        if (!warm)
            rc = flush_l2(s, (unsigned)i);
        if (rc == RK_OK)
            rc = timed_launch(s, ops, &args, &info, k->name, &times[i], warm);
    }
    if (rc != RK_OK)
        goto out;
    s->measured = 1;

    /* 3. Verify the last timed output too: a race shows as a moving error. */
    if (ops->finish && (rc = ops->finish(&args)) != RK_OK)
        goto out;
    if ((rc = check_output(s, ops, &args, layout, &rel2, &bad2)) != RK_OK)
        goto out;

    if (opts && opts->times_ns) { /* in the order timed, before the median sorts them */
        memcpy(opts->times_ns, times, (size_t)reps * sizeof *times);
        r->times_ns = opts->times_ns;
    }
    r->time_median_ns = model_median(times, (size_t)reps); /* sorts times */
    r->time_min_ns = times[0];
    r->time_max_ns = times[reps - 1];
    r->reps = reps;
    r->warm = warm;
    r->tolerance =
        ops->tolerance ? ops->tolerance(&args) : (s->prec == KERNELS_FP64 ? TOL_FP64 : TOL_FP32);
    r->nonfinite = bad1 > bad2 ? bad1 : bad2;
    r->rel_error = (bad1 || bad2) ? NAN : (rel1 > rel2 ? rel1 : rel2);
    r->verified = !bad1 && !bad2 && rel1 <= r->tolerance && rel2 <= r->tolerance;
    for (int d = 0; d < 3; d++) {
        r->grid[d] = info.grid[d];
        r->block[d] = info.block[d];
    }
    r->launches = info.launches;
    if (info.func) {
        cudaFuncAttributes attr;
        if (cudaFuncGetAttributes(&attr, info.func) == cudaSuccess) {
            r->registers = attr.numRegs;
            r->smem_static = (long)attr.sharedSizeBytes;
            r->smem_dynamic = (long)info.dyn_smem;
        }
    }
out:
    free(times);
    return rc;
}

/* kernels_session_launch and kernels_session_repeat: n launches between the hook's calls. */
static int launch_n(struct kernels_session *s, const struct kernels_kernel *k, const long *params,
                    int warm, long n, const struct kernels_hook *hook);

int kernels_session_launch(struct kernels_session *s, const struct kernels_kernel *k,
                           const long *params, int warm, const struct kernels_hook *hook)
{
    return launch_n(s, k, params, warm, 1, hook);
}

int kernels_session_repeat(struct kernels_session *s, const struct kernels_kernel *k,
                           const long *params, long n, const struct kernels_hook *hook)
{
    return launch_n(s, k, params, 1, n < 1 ? 1 : n, hook);
}

static int launch_n(struct kernels_session *s, const struct kernels_kernel *k, const long *params,
                    int warm, long n, const struct kernels_hook *hook)
{
    const struct kern_ops *ops = (const struct kern_ops *)k->impl;
    struct kern_args args;
    struct kern_launch info;
    long p[KERNELS_MAX_PARAMS] = {0};
    char why[200] = "";
    int rc;

    (void)cudaGetLastError();
    if (!s->prepared)
        RK_BUG("kernels_session_launch before kernels_session_prepare");
    for (int i = 0; i < k->n_params; i++)
        p[i] = params[i];
    fill_args(s, p, &args);
    if (ops->resolve && ops->resolve(&args, p, why, sizeof why) != RK_OK)
        return rk_error(RK_EUSAGE, "%s on %ldx%ldx%ld: %s", k->name, args.m, args.n, args.k, why);
    args.ws = s->ws;
    args.ws_bytes = ops->workspace ? ops->workspace(&args) : 0;
    if (args.ws_bytes > s->ws_bytes)
        RK_BUG("kernels_session_launch without kernels_session_measure of the same kernel");
    if (!warm && (rc = flush_l2(s, 0x1a7c4u)) != RK_OK)
        return rc;
    if (ops->prepare && (rc = ops->prepare(&args)) != RK_OK)
        return rc;
    RK_CUDA(cudaDeviceSynchronize());
    if (hook && hook->begin && (rc = hook->begin(hook->arg)) != RK_OK)
        return rc;
    rc = RK_OK;
    for (long i = 0; i < n && rc == RK_OK; i++) {
        memset(&info, 0, sizeof info);
        rc = ops->launch(&args, &info);
    }
    cudaError_t cerr = cudaDeviceSynchronize();
    if (rc == RK_OK && cerr != cudaSuccess)
        rc = rk_error(RK_ECUDA, "running %s failed: %s", k->name, cudaGetErrorString(cerr));
    /* The collector's session is closed whatever happened, so that CUPTI lets go. */
    int hrc = hook && hook->end ? hook->end(hook->arg) : RK_OK;
    return rc != RK_OK ? rc : hrc;
}

} /* extern "C" */

int kernels_session_check(struct kernels_session *s, const struct kernels_kernel *k,
                          const long *params, long *resolved, char *why, size_t why_len)
{
    const struct kern_ops *ops = (const struct kern_ops *)k->impl;
    struct kern_args args;
    long p[KERNELS_MAX_PARAMS] = {0};
    int rc;

    if (!s->prepared)
        RK_BUG("kernels_session_check before kernels_session_prepare");
    for (int i = 0; i < k->n_params; i++)
        p[i] = params ? params[i] : k->params[i].def;
    rc = kernels_check(k, s->prec, p, why, why_len);
    if (rc == RK_OK) {
        fill_args(s, p, &args);
        if (ops->resolve)
            rc = ops->resolve(&args, p, why, why_len);
    }
    (void)cudaGetLastError(); /* a refused attribute query must not leak into the next launch */
    if (rc == RK_OK && resolved)
        for (int i = 0; i < KERNELS_MAX_PARAMS; i++)
            resolved[i] = p[i];
    return rc;
}
