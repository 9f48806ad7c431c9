/*
 * energy.cu - the energy probe (energy_fit): the energy per flop, per byte and the constant
 * power of the GPU, fitted as Choi, Bedard, Fowler and Vuduc fit their energy roofline ("A
 * roofline model of energy", IPDPS 2013): microbenchmarks that sweep the intensity, each read
 * with NVML's energy counter (meter.c), then one least-squares fit (model_energy_fit) of
 *
 *     E = sum_op W_op eps_op + sum_level Q_level eps_level + p0 T
 *
 * over every point at once. The points:
 *   - the sweep kernel below, per precision (fp32, fp64) and level (DRAM, L2, shared): each
 *     thread streams 16-byte vectors from that level and runs k FMAs on every element
 *     (k in {0, 32, 256}: memory-bound to compute-bound);
 *   - one warp that only sleeps (k_static): the GPU's constant power with its clocks up and
 *     nothing to do, which pins p0. Without it time and DRAM bytes are nearly collinear over
 *     the sweep (its memory-bound points all stream at the DRAM rate) and the fit traded one
 *     for the other (p0 0 W on an H100 that idles at ~72 W);
 *   - the tensor GEMMs of tensor.cu (bf16, fp16, fp64), run by this probe with s->energy set
 *     so that they add their point (pt_energy_point) after they have timed themselves.
 * The sweep's FMAs work on data as a GEMM's inner loop does: each element loaded is multiplied
 * by E_NACC weights of the thread (random, in registers) into E_NACC accumulators, so every FMA
 * reads other registers and its operands and results keep changing. A first sweep ran one chain
 * a = a * 0.9375 + 0.0625 per element, which converges to 1 within about a hundred FMAs: its
 * operands then stop toggling and it fitted fp32 at 3.8 pJ/FLOP, where CUDA-core GEMMs (cuBLAS,
 * the seeds' tiled kernels) on the same H100 spent 8-9 pJ a flop beyond their bytes, and the
 * model fell 40-50 % short of their readings. For the same reason the FMA peak kernels of
 * flops.cu (constant operands) are not points of the fit.
 * A GEMM's bytes are its compulsory DRAM traffic (A, B read, D written once): its on-chip
 * traffic is not separated from its tensor eps. L1 is not swept: no eps for it.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define E_BLOCK      256
#define E_BLOCKS_SM  8
#define E_TILE_VECS  (4 * E_BLOCK)       /* shared tile: 16 KiB of 16-byte vectors */
#define E_L2_BYTES   ((size_t)16 << 20)  /* well inside an H100's 50 MiB L2 */
#define E_CALL_BYTES ((double)(1 << 30)) /* bytes one call moves at its level */

enum { LEVEL_DRAM, LEVEL_L2, LEVEL_SHARED, N_LEVELS };
static const char *const level_name[N_LEVELS] = {"dram", "l2", "shared"};
static const int ks[] = {0, 32, 256}; /* memory-bound, near the ridge, compute-bound: the
                                          kernels instantiated in enqueue_sweep */
#define N_KS ((int)(sizeof ks / sizeof ks[0]))

template <typename T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
    enum { lanes = 4 };
};
template <> struct vec16<double> {
    typedef double2 type;
    enum { lanes = 2 };
};

static __device__ __forceinline__ float lane(const float4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
static __device__ __forceinline__ double lane(const double2 &v, int i)
{
    return i == 0 ? v.x : v.y;
}

/* Uniform values in [-1, 1) from a hash of the index: host and device agree. */
static __host__ __device__ double e_draw(unsigned long long i)
{
    i = (i ^ 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    i ^= i >> 31;
    return (double)(i >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Accumulators and weights per thread: the register tile of the sweep's FMAs. */
#define E_NACC 8

/* The weights of thread tid: uniform in [-1, 1), fixed per thread (host and device agree). */
template <typename T> static __host__ __device__ T e_weight(long tid, int j)
{
    return (T)e_draw(0x5EEDull << 40 | (unsigned long long)(tid * E_NACC + j));
}

/* The work on one loaded vector: K = 0 adds each element to an accumulator (1 flop); K > 0
 * runs K FMAs per element, acc[q % E_NACC] += x * w[(q + q / E_NACC) % E_NACC] (2K flops): as in
 * a GEMM's inner loop, one loaded value times a row of register-held values into independent
 * accumulators, every FMA on other registers and on data that changes. Unrolled: the loop is
 * FMAs alone (a loop counted at run time spent a third of its instructions on the loop). */
template <int K, typename T, typename V>
static __device__ __forceinline__ void work(T (&acc)[E_NACC], const V &v, const T (&w)[E_NACC])
{
#pragma unroll
    for (int l = 0; l < vec16<T>::lanes; l++) {
        const T x = lane(v, l);
        if (K == 0)
            acc[l] += x;
#pragma unroll
        for (int q = 0; q < K; q++)
            acc[q % E_NACC] = fma(x, w[(q + q / E_NACC) % E_NACC], acc[q % E_NACC]);
    }
}

/*
 * One call: LEVEL_DRAM streams n_vec vectors of buf once (grid-stride); LEVEL_L2 streams the
 * first n_vec vectors `passes` times with ld.global.cg (L2, not L1); LEVEL_SHARED copies one
 * E_TILE_VECS tile per block into shared memory and reads it `passes` times. out[thread] gets
 * the sum of the thread's chains when verify is set or it equals never (dead-code guard).
 */
template <typename T, int LEVEL, int K>
__global__ void __launch_bounds__(E_BLOCK)
    k_esweep(const typename vec16<T>::type *__restrict__ buf, long n_vec, int passes, T never,
             T *out, int verify)
{
    typedef typename vec16<T>::type V;
    __shared__ V tile[LEVEL == LEVEL_SHARED ? E_TILE_VECS : 1];
    T acc[E_NACC], w[E_NACC];
    long tid = (long)blockIdx.x * blockDim.x + threadIdx.x, stride = (long)gridDim.x * blockDim.x;
#pragma unroll
    for (int l = 0; l < E_NACC; l++) {
        acc[l] = 0;
        w[l] = e_weight<T>(tid, l);
    }
    if (LEVEL == LEVEL_DRAM) {
        for (long i = tid; i < n_vec; i += stride)
            work<K>(acc, buf[i], w);
    } else if (LEVEL == LEVEL_L2) {
        for (int p = 0; p < passes; p++)
            for (long i = tid; i < n_vec; i += stride)
                work<K>(acc, __ldcg(&buf[i]), w);
    } else {
        long base = ((long)blockIdx.x * E_TILE_VECS) % (n_vec - E_TILE_VECS + 1);
        for (int i = threadIdx.x; i < E_TILE_VECS; i += E_BLOCK)
            tile[i] = buf[base + i];
        __syncthreads();
        for (int p = 0; p < passes; p++)
#pragma unroll
            for (int j = 0; j < E_TILE_VECS / E_BLOCK; j++)
                work<K>(acc, tile[threadIdx.x + j * E_BLOCK], w);
    }
    T sum = 0;
#pragma unroll
    for (int l = 0; l < E_NACC; l++)
        sum += acc[l];
    if (verify || sum == never)
        out[tid] = sum;
}

template <typename T> __global__ void k_efill(T *buf, long n)
{
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x)
        buf[i] = (T)e_draw((unsigned long long)i);
}

template <typename T> struct sweep_job {
    const typename vec16<T>::type *buf;
    long n_vec;
    int level, passes, k, grid, verify;
    T *out;
};

/* The level's kernel for FMA count K (one of ks). */
template <typename T, int K> static void launch_k(const sweep_job<T> *j, cudaStream_t st)
{
    const T never = (T)-1234.5;
    if (j->level == LEVEL_DRAM)
        k_esweep<T, LEVEL_DRAM, K>
            <<<j->grid, E_BLOCK, 0, st>>>(j->buf, j->n_vec, j->passes, never, j->out, j->verify);
    else if (j->level == LEVEL_L2)
        k_esweep<T, LEVEL_L2, K>
            <<<j->grid, E_BLOCK, 0, st>>>(j->buf, j->n_vec, j->passes, never, j->out, j->verify);
    else
        k_esweep<T, LEVEL_SHARED, K>
            <<<j->grid, E_BLOCK, 0, st>>>(j->buf, j->n_vec, j->passes, never, j->out, j->verify);
}

template <typename T> static int enqueue_sweep(void *arg, cudaStream_t st)
{
    sweep_job<T> *j = (sweep_job<T> *)arg;
    if (j->k == ks[0])
        launch_k<T, 0>(j, st);
    else if (j->k == ks[1])
        launch_k<T, 32>(j, st);
    else if (j->k == ks[2])
        launch_k<T, 256>(j, st);
    else
        RK_BUG("energy sweep: an FMA count without a kernel");
    return cudaGetLastError() == cudaSuccess
               ? RK_OK
               : rk_error(RK_ECUDA, "the energy sweep kernel did not launch");
}

/* The static point: one warp that sleeps until %globaltimer has advanced by ns. */
__global__ void k_static(long long ns)
{
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(100000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

#define E_STATIC_MS 10.0 /* one call of k_static */

static int enqueue_static(void *arg, cudaStream_t st)
{
    (void)arg;
    k_static<<<1, 32, 0, st>>>((long long)(E_STATIC_MS * 1e6));
    return cudaGetLastError() == cudaSuccess
               ? RK_OK
               : rk_error(RK_ECUDA, "the energy probe's sleeping kernel did not launch");
}

/* Host float64 replay of thread tid of job j (j->verify set). */
template <typename T> static double host_thread(const sweep_job<T> *j, long tid)
{
    const int lanes = vec16<T>::lanes;
    const long stride = (long)j->grid * E_BLOCK;
    double acc[E_NACC] = {0}, w[E_NACC];
    for (int l = 0; l < E_NACC; l++)
        w[l] = (double)e_weight<T>(tid, l);
    auto one = [&](long v) {
        for (int l = 0; l < lanes; l++) {
            const double x = (double)(T)e_draw((unsigned long long)(v * lanes + l));
            if (j->k == 0)
                acc[l] += x;
            for (int q = 0; q < j->k; q++)
                acc[q % E_NACC] += x * w[(q + q / E_NACC) % E_NACC];
        }
    };
    if (j->level == LEVEL_DRAM) {
        for (long i = tid; i < j->n_vec; i += stride)
            one(i);
    } else if (j->level == LEVEL_L2) {
        for (int p = 0; p < j->passes; p++)
            for (long i = tid; i < j->n_vec; i += stride)
                one(i);
    } else {
        long blk = tid / E_BLOCK, t = tid % E_BLOCK;
        long base = (blk * E_TILE_VECS) % (j->n_vec - E_TILE_VECS + 1);
        for (int p = 0; p < j->passes; p++)
            for (int q = 0; q < E_TILE_VECS / E_BLOCK; q++)
                one(base + t + q * E_BLOCK);
    }
    double sum = 0;
    for (int l = 0; l < E_NACC; l++)
        sum += acc[l];
    return sum;
}

/* Runs a small copy of each level's call (every thread written) and compares 64 threads with
 * the float64 replay. */
template <typename T> static int check_sweep(struct probes *s, const char *prec)
{
    const double tol = sizeof(T) == 4 ? 1e-4 : 1e-10;
    for (int level = 0; level < N_LEVELS; level++) {
        sweep_job<T> j{};
        j.buf = (const typename vec16<T>::type *)s->dram[0];
        j.n_vec = level == LEVEL_DRAM ? 1 << 16 : 1 << 14;
        j.level = level;
        j.passes = 3;
        j.k = ks[1];
        j.grid = 16;
        j.verify = 1;
        j.out = (T *)s->dram[1];
        int rc = enqueue_sweep<T>(&j, s->stream);
        if (rc != RK_OK)
            return rc;
        T got[16 * E_BLOCK];
        RK_CUDA(cudaMemcpyAsync(got, j.out, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        RK_CUDA(cudaStreamSynchronize(s->stream));
        for (long t = 0; t < 16 * E_BLOCK; t += 16 * E_BLOCK / 64) {
            double want = host_thread<T>(&j, t);
            if (!(fabs((double)got[t] - want) <= tol * (fabs(want) + 1)))
                return rk_error(RK_EVERIFY,
                                "the %s energy sweep kernel (%s) is wrong: thread %ld gave %.17g, "
                                "float64 says %.17g",
                                prec, level_name[level], t, (double)got[t], want);
        }
    }
    return RK_OK;
}

/* A batch of pt_energy_point: n calls of fn on the probe's stream inside the meter's bracket;
 * RK_EINTR once rk_interrupted, so that no second batch starts. */
struct point_batch {
    struct probes *s;
    pt_enqueue_fn fn;
    void *arg;
    const char *name;
};

static int run_point_batch(void *arg, long n, const struct probes_bracket *b)
{
    const struct point_batch *pb = (const struct point_batch *)arg;
    int lrc = b->begin(b->arg);
    if (lrc != RK_OK)
        return lrc;
    for (long i = 0; i < n && lrc == RK_OK; i++)
        lrc = pb->fn(pb->arg, pb->s->stream);
    cudaError_t e = cudaStreamSynchronize(pb->s->stream);
    int erc = b->end(b->arg);
    if (lrc != RK_OK)
        return lrc;
    if (e != cudaSuccess)
        return rk_error(RK_ECUDA, "the energy batch of %s failed: %s", pb->name,
                        cudaGetErrorString(e));
    if (erc != RK_OK)
        return erc;
    return rk_interrupted ? RK_EINTR : RK_OK;
}

int pt_energy_point(struct probes *s, pt_enqueue_fn fn, void *arg, double call_ms,
                    const struct model_energy_work *work, const char *name)
{
    struct pt_energy_set *set = s->energy;
    struct probes_energy r;
    struct point_batch pb = {s, fn, arg, name};

    if (!set || set->n >= PT_ENERGY_MAX_POINTS)
        return RK_OK;
    int rc = probes_meter_read(set->meter, probes_energy_launches(call_ms * 1e-3), run_point_batch,
                               &pb, &r, NULL);
    if (rc == RK_ENODATA)
        return rk_error(RK_ENODATA,
                        "the energy counter did not move enough over %ld calls of %s (%.2f s)",
                        r.launches, name, r.batch_s);
    if (rc != RK_OK)
        return rc;
    struct pt_energy_point *p = &set->p[set->n++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->w = *work;
    p->w.time_s = r.batch_s / (double)r.launches;
    p->w.energy_j = r.energy_j;
    p->r = r;
    return RK_OK;
}

/* The sweep of one precision: every level and k, each timed, then read. */
template <typename T> static int sweep(struct probes *s, const char *prec, int op)
{
    const double elem = sizeof(T);
    const long dram_vec = (long)(E_CALL_BYTES / 16);
    k_efill<T><<<s->dev.sm_count * 8, 256, 0, s->stream>>>((T *)s->dram[0], dram_vec * 16 / elem);
    RK_CUDA(cudaGetLastError());
    int rc = check_sweep<T>(s, prec);
    if (rc != RK_OK)
        return rc;
    for (int level = 0; level < N_LEVELS && !rk_interrupted; level++)
        for (int q = 0; q < N_KS && !rk_interrupted; q++) {
            sweep_job<T> j{};
            struct model_energy_work w;
            double ms[3], bytes;
            char name[40];
            memset(&w, 0, sizeof w);
            j.buf = (const typename vec16<T>::type *)s->dram[0];
            j.level = level;
            j.k = ks[q];
            j.grid = s->dev.sm_count * E_BLOCKS_SM;
            j.out = (T *)s->dram[1];
            if (level == LEVEL_DRAM) {
                j.n_vec = dram_vec;
                j.passes = 1;
                bytes = (double)dram_vec * 16;
                w.bytes[MODEL_LEVEL_DRAM] = w.bytes[MODEL_LEVEL_L2] = bytes;
            } else if (level == LEVEL_L2) {
                j.n_vec = (long)(E_L2_BYTES / 16);
                j.passes = (int)(E_CALL_BYTES / (double)E_L2_BYTES);
                bytes = (double)j.n_vec * 16 * j.passes;
                w.bytes[MODEL_LEVEL_L2] = bytes;
            } else {
                j.n_vec = dram_vec;
                j.passes = (int)(E_CALL_BYTES / ((double)j.grid * E_TILE_VECS * 16));
                bytes = (double)j.grid * E_TILE_VECS * 16 * j.passes;
                w.bytes[MODEL_LEVEL_SHARED] = bytes;
                w.bytes[MODEL_LEVEL_L2] = (double)j.grid * E_TILE_VECS * 16; /* the fill */
            }
            w.flops[op] = bytes / elem * (ks[q] == 0 ? 1.0 : 2.0 * ks[q]);
            if ((rc = pt_time(s, enqueue_sweep<T>, &j, 1, 3, ms)) != RK_OK)
                return rc;
            snprintf(name, sizeof name, "%s_%s_k%d", level_name[level], prec, ks[q]);
            if ((rc = pt_energy_point(s, enqueue_sweep<T>, &j, pt_median(ms, 3), &w, name)) !=
                RK_OK)
                return rc;
        }
    return rk_interrupted ? RK_EINTR : RK_OK;
}

/* Runs registry probe `name` (unless waived) into a scratch output: its energy point only. */
static int run_for_energy(struct probes *s, const char *name)
{
    for (int i = 0; i < probes_count(); i++) {
        if (strcmp(probes_get(i)->name, name) != 0 || probes_waived(s, i))
            continue;
        struct probes_output scratch = {};
        int quick = s->quick;
        s->quick = 1;
        int rc = probes_run(s, i, &scratch);
        s->quick = quick;
        probes_output_release(&scratch);
        return rc;
    }
    return RK_OK;
}

/* One ceiling of the fit. */
static int add_ceiling(struct probes_output *out, const char *name, const char *level,
                       const char *prec, double value, const char *unit, int n,
                       const struct rk_buf *params)
{
    struct probes_result *r = pt_add_result(out, name);
    if (!r)
        return rk_error(RK_ENOMEM, "out of host memory");
    r->kind = "energy";
    r->level = level;
    r->precision = prec;
    r->value = r->median = r->min = r->max = value; /* one fit, one value */
    r->unit = unit;
    r->reps = n;
    snprintf(r->method, sizeof r->method,
             "one joint least-squares fit (relative errors) of E = sum flops x eps_flop + sum "
             "bytes x eps_byte + P0 x T over %d intensity microbenchmarks read with NVML's "
             "energy counter (Choi et al., IPDPS 2013)",
             n);
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, params->s ? params->s : "{}");
    return pt_set_params(r, &b);
}

/*
 * The power cap the GPU enforces now (NVML's enforced limit: the board's, or one an
 * administrator set), as ceiling power_limit [W]: the energy roofline's capped roof. Read, not
 * measured; nothing stored where NVML does not give it.
 */
static int add_power_limit(struct probes *s, struct probes_output *out)
{
    unsigned mw = 0;
    if (!s->nvml.get_power_limit || s->nvml.get_power_limit(s->nvml.device, &mw) != 0 || !mw) {
        rk_warn("energy_fit: NVML gives no enforced power limit; no power_limit ceiling");
        return RK_OK;
    }
    struct probes_result *r = pt_add_result(out, "power_limit");
    if (!r)
        return rk_error(RK_ENOMEM, "out of host memory");
    r->kind = "energy";
    r->value = r->median = r->min = r->max = mw * 1e-3;
    r->unit = "W";
    r->reps = 1;
    snprintf(r->method, sizeof r->method,
             "NVML's enforced power limit (nvmlDeviceGetEnforcedPowerLimit), read once");
    return RK_OK;
}

/* The points and residuals as JSON columns (what the ceilings' params carry). */
static void points_json(struct rk_buf *b, const struct pt_energy_set *set, const double *res,
                        unsigned clamped)
{
    static const char *const cols[] = {"time_s", "energy_j", "power_w", "residual"};
    /* the unknowns the fit fixed at 0, by model_energy_fit's column numbers */
    rk_buf_puts(b, "{\"fit\":\"joint\",\"clamped_at_zero\":[");
    for (int c = 0, first = 1; c < MODEL_EOP_COUNT + MODEL_LEVEL_COUNT + 1; c++) {
        if (!(clamped & (1u << c)))
            continue;
        rk_buf_puts(b, first ? "" : ",");
        first = 0;
        rk_json_str(b, c < MODEL_EOP_COUNT ? model_energy_op_name((enum model_energy_op)c)
                       : c < MODEL_EOP_COUNT + MODEL_LEVEL_COUNT
                           ? model_level_name((enum model_level_id)(c - MODEL_EOP_COUNT))
                           : "static");
    }
    rk_buf_puts(b, "],\"names\":[");
    for (int i = 0; i < set->n; i++) {
        if (i)
            rk_buf_puts(b, ",");
        rk_json_str(b, set->p[i].name);
    }
    rk_buf_puts(b, "],\"op\":[");
    for (int i = 0; i < set->n; i++) {
        int op = -1;
        for (int o = 0; o < MODEL_EOP_COUNT; o++)
            if (set->p[i].w.flops[o] > 0)
                op = o;
        rk_buf_puts(b, i ? "," : "");
        if (op < 0)
            rk_buf_puts(b, "null");
        else
            rk_json_str(b, model_energy_op_name((enum model_energy_op)op));
    }
    rk_buf_puts(b, "],\"flops\":[");
    for (int i = 0; i < set->n; i++) {
        double f = 0;
        for (int o = 0; o < MODEL_EOP_COUNT; o++)
            f += set->p[i].w.flops[o];
        rk_buf_printf(b, "%s%.6g", i ? "," : "", f);
    }
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        if (l == MODEL_LEVEL_L1)
            continue;
        rk_buf_printf(b, "],\"bytes_%s\":[", model_level_name((enum model_level_id)l));
        for (int i = 0; i < set->n; i++)
            rk_buf_printf(b, "%s%.6g", i ? "," : "", set->p[i].w.bytes[l]);
    }
    for (int c = 0; c < 4; c++) {
        rk_buf_printf(b, "],\"%s\":[", cols[c]);
        for (int i = 0; i < set->n; i++) {
            const struct pt_energy_point *p = &set->p[i];
            double v = c == 0   ? p->w.time_s
                       : c == 1 ? p->w.energy_j
                       : c == 2 ? p->r.power_w
                                : res[i];
            rk_buf_printf(b, "%s%.6g", i ? "," : "", v);
        }
    }
    rk_buf_puts(b, "]}");
}

int pt_energy(struct probes *s, int arg, struct probes_output *out)
{
    struct pt_energy_set *set = (struct pt_energy_set *)calloc(1, sizeof *set);
    char why[200] = "";
    int rc = RK_OK;
    (void)arg;

    if (!set)
        return rk_error(RK_ENOMEM, "out of host memory");
    if (probes_meter_open(s->dev.pci_bus_id, &set->meter, why, sizeof why) != RK_OK) {
        rk_warn("energy_fit: %s; no energy ceilings measured", why);
        free(set);
        return RK_OK;
    }
    if ((rc = pt_alloc_dram(s)) != RK_OK)
        goto out;
    s->energy = set;
    {
        /* warm up about a second (a first reading after idle reads low), not recorded */
        sweep_job<float> j{};
        j.buf = (const float4 *)s->dram[0];
        j.n_vec = (long)(E_CALL_BYTES / 16);
        j.level = LEVEL_DRAM;
        j.passes = 1;
        j.k = ks[1];
        j.grid = s->dev.sm_count * E_BLOCKS_SM;
        j.out = (float *)s->dram[1];
        for (int i = 0; i < 2000 && rc == RK_OK; i++)
            rc = enqueue_sweep<float>(&j, s->stream);
        PT_CUDA(cudaStreamSynchronize(s->stream));
    }
    if (rc == RK_OK)
        rc = sweep<float>(s, "fp32", MODEL_EOP_FP32);
    if (rc == RK_OK)
        rc = sweep<double>(s, "fp64", MODEL_EOP_FP64);
    if (rc == RK_OK) {
        struct model_energy_work w;
        memset(&w, 0, sizeof w); /* no flops, no bytes: E = p0 T */
        rc = pt_energy_point(s, enqueue_static, NULL, E_STATIC_MS, &w, "static");
    }
    static const char *const others[] = {"peak_tensor_bf16", "peak_tensor_fp16",
                                         "peak_tensor_fp64"};
    for (size_t i = 0; i < sizeof others / sizeof others[0] && rc == RK_OK; i++)
        rc = run_for_energy(s, others[i]);
    s->energy = NULL;
    if (rc != RK_OK)
        goto out;
    {
        struct model_energy e;
        double res[PT_ENERGY_MAX_POINTS];
        const char *fwhy = NULL;
        struct model_energy_work w[PT_ENERGY_MAX_POINTS];
        for (int i = 0; i < set->n; i++)
            w[i] = set->p[i].w;
        unsigned clamped = 0;
        rc = model_energy_fit(w, set->n, &e, res, &clamped, &fwhy);
        if (rc != RK_OK || clamped) /* the points, to see why */
            for (int i = 0; i < set->n; i++)
                rk_info("energy_fit: %-18s %7.1f W (NVML samples %7.1f W) %.5g J in %.5g s",
                        set->p[i].name, set->p[i].r.power_w, set->p[i].r.power_sampled_w,
                        set->p[i].w.energy_j, set->p[i].w.time_s);
        if (rc != RK_OK) {
            rc = rk_error(rc, "energy_fit: the fit of %d points failed: %s", set->n, fwhy);
            goto out;
        }
        struct rk_buf pj = RK_BUF_INIT;
        points_json(&pj, set, res, clamped);
        rc = pj.oom ? rk_error(RK_ENOMEM, "out of host memory") : RK_OK;
        for (int o = 0; o < MODEL_EOP_COUNT && rc == RK_OK; o++) {
            char name[48];
            const char *op = model_energy_op_name((enum model_energy_op)o);
            if (isnan(e.eps_flop[o]))
                continue;
            snprintf(name, sizeof name, "energy_flop_%s", op);
            rc = add_ceiling(out, name, strncmp(op, "tc_", 3) == 0 ? "tensor" : NULL,
                             strncmp(op, "tc_", 3) == 0 ? op + 3 : op, e.eps_flop[o] * 1e12,
                             "pJ/FLOP", set->n, &pj);
        }
        for (int l = 0; l < MODEL_LEVEL_COUNT && rc == RK_OK; l++) {
            char name[48];
            const char *lv = model_level_name((enum model_level_id)l);
            if (isnan(e.eps_byte[l]))
                continue;
            snprintf(name, sizeof name, "energy_byte_%s", lv);
            rc = add_ceiling(out, name, lv, NULL, e.eps_byte[l] * 1e12, "pJ/B", set->n, &pj);
        }
        if (rc == RK_OK)
            rc = add_ceiling(out, "energy_static", NULL, NULL, e.p0_w, "W", set->n, &pj);
        rk_buf_release(&pj);
        if (rc == RK_OK)
            rc = add_power_limit(s, out);
    }
out:
    s->energy = NULL;
    probes_meter_close(set->meter);
    free(set);
    return rc;
}
