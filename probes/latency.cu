/*
 * latency.cu - the latency probes: the pointer-chase curve over footprints from
 * 4 KB to 2 GB with its plateaus (L1, L2, H100's far L2, DRAM), shared-memory
 * latency, a tiled GEMM block's staging round, and dependent-FMA latency for fp32,
 * fp64 and fp16 (the model's latency_comp, 004_dab40fe45003313a.txt §3.6).
 *
 * Pointer chase: one thread follows 64-bit
 * pointers, p = *p, through a random cyclic order of 128-byte lines, so neither a
 * prefetcher nor a fixed stride helps; clock64 around the timed steps gives cycles
 * per load. The cyclic order is built on the GPU in O(n) with no host work and no
 * sort: sigma is a keyed bijection of [0, n) (multiply-xorshift rounds on the next
 * power of two, cycle-walked into range), and line sigma(i) points to line
 * sigma(i + 1 mod n) - one cycle through every line. One 2 GB buffer serves every
 * footprint (its first F bytes), so a full curve costs a few hundred milliseconds.
 *
 * Warm-up: for footprints up to 2x the L2 the thread first chases the whole cycle
 * once, so the timed steps that follow revisit lines in the order they were
 * loaded: a cache smaller than the footprint (LRU-like) then misses on every
 * step, which gives the sharp plateaus of the classic method (and H100's far L2
 * partition once the footprint outgrows the near one). Past 2x the L2 it chases 256
 * steps before timing, after the L2 has been flushed: that is DRAM. One launch per footprint:
 * warm-up, then the timed segments (the repetitions) back to back.
 *
 * Checks: sigma is verified to be a bijection (counts), and the pointer the chase
 * ends on must be line sigma(start + steps), computed on the host.
 *
 * pt_chase_far runs the same chase through another GPU's memory for the peer probes
 * (peer.cu): the chain is built and checked on the GPU that owns it, the chase runs on
 * the other, and pointers are the same on both (unified virtual addressing).
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_fp16.h>

#define LINE         128 /* bytes between chased pointers: one L1/L2 line */
#define LINE_WORDS   (LINE / 8)
#define CHASE_UNROLL 16

/* ---- the clock ---- */

__global__ void k_clock(double ns, long long *out)
{
    unsigned long long t0, t1;
    long long c0, c1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    while ((double)(t1 - t0) < ns);
    c1 = clock64();
    out[0] = c1 - c0;
    out[1] = (long long)(t1 - t0);
}

int pt_measure_clock(struct probes *s, double ms, double *mhz)
{
    long long *d = NULL, h[2] = {0, 0};
    int rc = RK_OK;
    PT_CUDA(cudaMalloc(&d, sizeof h));
    k_clock<<<1, 1, 0, s->stream>>>(ms * 1e6, d);
    PT_CUDA(cudaGetLastError());
    pt_sample(s);
    PT_CUDA(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s->stream));
    PT_CUDA(cudaStreamSynchronize(s->stream));
    if (h[1] <= 0) {
        rc =
            rk_error(RK_ECUDA, "the GPU's %%globaltimer did not advance; cannot measure the clock");
        goto out;
    }
    *mhz = (double)h[0] / (double)h[1] * 1e3;
    s->measured_clock_mhz = *mhz;
out:
    cudaFree(d);
    return rc;
}

/* ---- the cyclic order ---- */

struct perm {
    uint64_t n, mask;
    int shift;
    uint64_t mul[4], add[4];
};

static __host__ __device__ uint64_t perm_apply(const struct perm &p, uint64_t i)
{
    do {
        for (int r = 0; r < 4; r++) {
            i = (i * p.mul[r]) & p.mask;
            i ^= i >> p.shift;
            i = (i + p.add[r]) & p.mask;
        }
    } while (i >= p.n); /* cycle-walking: a bijection of [0, 2^bits) restricted to [0, n) */
    return i;
}

static struct perm perm_make(uint64_t n, uint64_t seed)
{
    struct perm p;
    int bits = 1;
    while (((uint64_t)1 << bits) < n)
        bits++;
    p.n = n;
    p.mask = ((uint64_t)1 << bits) - 1;
    p.shift = bits / 2 + 1;
    for (int r = 0; r < 4; r++) {
        p.mul[r] = (pt_hash(seed + 2 * r) | 1) & p.mask; /* odd: invertible mod 2^bits */
        if (p.mul[r] == 1 && bits > 2)
            p.mul[r] = 5;
        p.add[r] = pt_hash(seed + 2 * r + 1) & p.mask;
    }
    return p;
}

__global__ void k_chase_build(uint64_t *buf, struct perm p)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < p.n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t a = perm_apply(p, i), b = perm_apply(p, i + 1 == p.n ? 0 : i + 1);
        buf[a * LINE_WORDS] = (uint64_t)(uintptr_t)(buf + b * LINE_WORDS);
    }
}

__global__ void k_perm_count(struct perm p, unsigned *count)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < p.n;
         i += (uint64_t)gridDim.x * blockDim.x)
        atomicAdd(&count[perm_apply(p, i)], 1u);
}

__global__ void k_count_bad(const unsigned *count, uint64_t n, unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        mine += count[i] != 1u;
    if (mine)
        atomicAdd(bad, mine);
}

static __device__ __forceinline__ uint64_t ld_ca_u64(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}

/*
 * One thread on SM `sm`: `warm` untimed loads from `start`, then `segs` timed segments of
 * `steps` loads each (cycles[seg]), ending on *end. The grid has blocks on every SM; thread 0
 * of the first block that finds itself on SM `sm` (%smid) claims the chase, the rest return.
 */
__global__ void k_chase(const uint64_t *start, long warm, long steps, int segs, long long *cycles,
                        uint64_t *end, int sm, int *claimed)
{
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x != 0 || (int)smid != sm || atomicExch(claimed, 1) != 0)
        return;
    const uint64_t *p = start;
    for (long i = 0; i < warm; i++)
        p = (const uint64_t *)ld_ca_u64(p);
    for (int seg = 0; seg < segs; seg++) {
        long long t0 = clock64();
        for (long i = 0; i < steps; i += CHASE_UNROLL) {
#pragma unroll
            for (int u = 0; u < CHASE_UNROLL; u++)
                p = (const uint64_t *)ld_ca_u64(p);
        }
        long long t1 = clock64();
        cycles[seg] = t1 - t0;
    }
    end[0] = (uint64_t)(uintptr_t)p;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

#define CHASE_MAX_SEGS 8

/* What k_chase writes, on the GPU that runs it. */
struct chase_run {
    long long *d_cycles; /* CHASE_MAX_SEGS */
    uint64_t *d_end;
    int *d_claimed;
};

/* Allocates c's buffers on the current device: RK_OK, or an rk_err (message printed). */
static int chase_run_alloc(struct chase_run *c)
{
    memset(c, 0, sizeof *c);
    RK_CUDA(cudaMalloc(&c->d_cycles, CHASE_MAX_SEGS * sizeof *c->d_cycles));
    RK_CUDA(cudaMalloc(&c->d_end, sizeof *c->d_end));
    RK_CUDA(cudaMalloc(&c->d_claimed, sizeof *c->d_claimed));
    return RK_OK;
}

static void chase_run_free(struct chase_run *c)
{
    cudaFree(c->d_cycles);
    cudaFree(c->d_end);
    cudaFree(c->d_claimed);
    memset(c, 0, sizeof *c);
}

/*
 * One chase by thread 0 of a block on SM `sm` of s's GPU (the current device), on s's stream:
 * `warm` untimed loads from start, then `segs` (<= CHASE_MAX_SEGS) timed segments of `steps`
 * loads. Checks that it ended on `want` and writes the median segment's cycles per load to
 * *cycles; `fp` (bytes) names the chain in the message of a wrong end.
 */
static int chase_on_sm(struct probes *s, const struct chase_run *c, const uint64_t *start,
                       long warm, long steps, int segs, int sm, uint64_t want, int64_t fp,
                       double *cycles)
{
    long long cyc[CHASE_MAX_SEGS];
    uint64_t got = 0;
    int claimed = 0;

    if (segs < 1 || segs > CHASE_MAX_SEGS)
        RK_BUG("chase_on_sm: segments out of range");
    RK_CUDA(cudaMemsetAsync(c->d_claimed, 0, sizeof *c->d_claimed, s->stream));
    k_chase<<<s->dev.sm_count * 4, 32, 0, s->stream>>>(start, warm, steps, segs, c->d_cycles,
                                                       c->d_end, sm, c->d_claimed);
    RK_CUDA(cudaGetLastError());
    pt_sample(s);
    RK_CUDA(cudaMemcpyAsync(cyc, c->d_cycles, (size_t)segs * sizeof cyc[0], cudaMemcpyDeviceToHost,
                            s->stream));
    RK_CUDA(cudaMemcpyAsync(&got, c->d_end, sizeof got, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(
        cudaMemcpyAsync(&claimed, c->d_claimed, sizeof claimed, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    if (!claimed)
        return rk_error(RK_ECUDA,
                        "no block of the pointer chase ran on SM %d of %d; is the GPU "
                        "shared with another process (MPS, MIG)?",
                        sm, s->dev.sm_count);
    if (got != want)
        return rk_error(RK_EVERIFY,
                        "the pointer chase over %lld bytes ended on the wrong "
                        "line; please report this",
                        (long long)fp);
    qsort(cyc, (size_t)segs, sizeof cyc[0], cmp_ll);
    *cycles = (double)cyc[segs / 2] / (double)steps;
    return RK_OK;
}

/* Checks that sigma is a bijection of [0, n): every line gets exactly one pointer. */
static int check_perm(struct probes *s, const struct perm &p, unsigned *d_count,
                      unsigned long long *d_bad)
{
    unsigned long long bad = 0;
    RK_CUDA(cudaMemsetAsync(d_count, 0, p.n * sizeof *d_count, s->stream));
    RK_CUDA(cudaMemsetAsync(d_bad, 0, sizeof *d_bad, s->stream));
    k_perm_count<<<s->dev.sm_count * 8, 256, 0, s->stream>>>(p, d_count);
    k_count_bad<<<s->dev.sm_count * 8, 256, 0, s->stream>>>(d_count, p.n, d_bad);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    if (bad)
        return rk_error(RK_EVERIFY,
                        "the pointer-chase order over %llu lines is not a permutation "
                        "(%llu lines wrong); please report this",
                        (unsigned long long)p.n, bad);
    return RK_OK;
}

static const char *level_name(const char *level)
{
    if (strcmp(level, "l1") == 0)
        return "L1";
    if (strcmp(level, "l2") == 0)
        return "L2 (near partition)";
    if (strcmp(level, "l2_far") == 0)
        return "L2 (far partition)";
    return "DRAM";
}

static int store_plateaus(struct probes *s, struct probes_output *out, int first_pt, double mhz,
                          int n_sms)
{
    struct probes_plateau pl[32];
    const struct probes_point *pts = out->points + first_pt;
    int n = out->n_points - first_pt;
    int k = probes_find_plateaus(pts, n, s->dev.l2_bytes, 0.08, pl, 32);

    for (int i = 0; i < k; i++) {
        if (!pl[i].level)
            continue;
        for (int unit = 0; unit < 2; unit++) {
            char name[48];
            double v[64];
            int m = 0;
            snprintf(name, sizeof name, "lat_chase_%s%s", pl[i].level, unit ? "_ns" : "");
            struct probes_result *r = pt_add_result(out, name);
            if (!r)
                return rk_error(RK_ENOMEM, "out of host memory");
            for (int q = pl[i].first; q <= pl[i].last && m < 64; q++)
                v[m++] = unit ? pts[q].ns : pts[q].cycles;
            pt_stats(v, m, &r->min, &r->median, &r->max);
            r->kind = "latency";
            r->level = strcmp(pl[i].level, "l2_far") == 0 ? "l2" : pl[i].level;
            r->precision = NULL;
            r->unit = unit ? "ns" : "cycles";
            r->value = unit ? pl[i].ns : pl[i].cycles;
            r->reps = m;
            snprintf(r->method, sizeof r->method,
                     "%s plateau of the 64-bit pointer chase (one thread, p = *p, random cyclic "
                     "order of %d-byte lines, clock64; each point the median over %d SMs), "
                     "median of its %d points",
                     level_name(pl[i].level), LINE, n_sms, m);
            struct rk_buf p = RK_BUF_INIT;
            rk_buf_puts(&p, "{");
            rk_json_key_str(&p, "plateau", pl[i].level);
            rk_buf_printf(&p,
                          ",\"from_bytes\":%lld,\"to_bytes\":%lld,\"points\":%d,\"line_bytes\":%d,"
                          "\"tolerance\":0.08",
                          (long long)pl[i].from_bytes, (long long)pl[i].to_bytes, m, LINE);
            pt_json_fixed(&p, "clock_measured_mhz", mhz, 1);
            rk_buf_printf(&p, ",\"sms\":%d}", n_sms);
            int rc = pt_set_params(r, &p);
            if (rc != RK_OK)
                return rc;
        }
    }
    return RK_OK;
}

/*
 * The chase is timed from CHASE_SMS SMs spread over the chip, one after the other, and each
 * point is their median. One SM's latency to the L2 depends on where it sits: on the H100,
 * SMs 0, 6, ..., 126 saw the near L2 at 272-300 cycles (median 281), the far one at
 * 517-548 and DRAM at 684-697 (the chase timed from each of them in turn), and SM 0 is a
 * different place on each chip (which TPCs are fused off varies), so one SM's figure moved
 * by 6% between machines.
 */
#define CHASE_SMS       8
#define CHASE_SMS_QUICK 3

int pt_lat_chase(struct probes *s, int arg, struct probes_output *out)
{
    const int per_octave = s->quick ? 2 : 3, reps = s->quick ? 2 : 3; /* timed segments */
    const int n_sms = s->dev.sm_count < (s->quick ? CHASE_SMS_QUICK : CHASE_SMS)
                          ? s->dev.sm_count
                          : (s->quick ? CHASE_SMS_QUICK : CHASE_SMS);
    struct chase_run c;
    const int64_t min_fp = 4096, max_fp = (int64_t)2 << 30;
    const int64_t l2 = s->dev.l2_bytes;
    unsigned *d_count = NULL;
    unsigned long long *d_bad = NULL;
    uint64_t *buf;
    void *flush = NULL;
    const size_t flush_bytes = (size_t)s->dev.l2_bytes * 4;
    int rc = RK_OK, first_pt = out->n_points, n_fp = 0;
    double mhz = 0;
    (void)arg;

    memset(&c, 0, sizeof c);
    if ((size_t)s->dev.memory_bytes < (size_t)max_fp + ((size_t)512 << 20))
        return rk_error(RK_ENOMEM, "the pointer chase needs a 2 GiB buffer; the GPU has %lld MiB",
                        (long long)(s->dev.memory_bytes >> 20));
    if (!s->chase) {
        PT_CUDA(cudaMalloc(&s->chase, (size_t)max_fp));
        s->chase_bytes = (size_t)max_fp;
    }
    buf = (uint64_t *)s->chase;
    PT_CUDA(cudaMalloc(&d_count, (size_t)(max_fp / LINE) * sizeof *d_count));
    PT_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
    if ((rc = chase_run_alloc(&c)) != RK_OK)
        goto out;
    PT_CUDA(cudaMalloc(&flush, flush_bytes));
    if ((rc = pt_measure_clock(s, 5.0, &mhz)) != RK_OK)
        goto out;

    n_fp = (int)lround(log2((double)max_fp / min_fp) * per_octave) + 1;
    for (int f = 0; f < n_fp && !rk_interrupted; f++) {
        int64_t fp = (int64_t)llround(min_fp * pow(2.0, (double)f / per_octave));
        fp = (fp + LINE - 1) / LINE * LINE;
        uint64_t n = (uint64_t)(fp / LINE);
        struct perm p = perm_make(n, 0x5EED0000u + (uint64_t)f);
        long steps = fp <= 2 * l2 ? (s->quick ? 4096 : 8192) : (s->quick ? 2048 : 4096);
        long warm = fp <= 2 * l2 ? (long)(n > 256 ? n : 256) : 256;
        uint64_t pos = pt_hash((uint64_t)f) % n, want;
        struct probes_point pt;
        double per_sm[CHASE_SMS], lo, med, hi;

        k_chase_build<<<s->dev.sm_count * 8, 256, 0, s->stream>>>(buf, p);
        PT_CUDA(cudaGetLastError());
        if ((rc = check_perm(s, p, d_count, d_bad)) != RK_OK)
            goto out;
        want = (uint64_t)(uintptr_t)(buf + perm_apply(p, (pos + (uint64_t)warm +
                                                          (uint64_t)steps * (uint64_t)reps) %
                                                             n) *
                                               LINE_WORDS);
        for (int i = 0; i < n_sms; i++) {
            /* DRAM footprints start cold: writing 4x the L2 elsewhere evicts the lines
             * that building the chain (or the previous SM's chase) left in the L2. */
            if (fp > 2 * l2)
                PT_CUDA(cudaMemsetAsync(flush, 0, flush_bytes, s->stream));
            rc = chase_on_sm(s, &c, buf + perm_apply(p, pos) * LINE_WORDS, warm, steps, reps,
                             i * s->dev.sm_count / n_sms, want, fp, &per_sm[i]);
            if (rc != RK_OK)
                goto out;
        }
        pt_stats(per_sm, n_sms, &lo, &med, &hi);
        pt.footprint_bytes = fp;
        pt.stride_bytes = LINE;
        pt.cycles = med;
        pt.ns = pt.cycles / mhz * 1e3;
        if ((rc = pt_add_point(out, &pt)) != RK_OK)
            goto out;
        rk_progress("lat_chase", f + 1, n_fp);
    }
    rk_progress_end();
    if (rk_interrupted)
        goto out;
    rc = store_plateaus(s, out, first_pt, mhz, n_sms);
out:
    cudaFree(d_count);
    cudaFree(d_bad);
    chase_run_free(&c);
    cudaFree(flush);
    return rc;
}

int pt_chase_far(struct probes *own, struct probes *run, void *buf, size_t bytes, void *flush,
                 size_t flush_bytes, int n_sms, long steps, int segs, double *cycles)
{
    const uint64_t n = bytes / LINE;
    const long warm = 256; /* as at the DRAM points of pt_lat_chase */
    const struct perm p = perm_make(n, 0xFA2C4A5Eu);
    unsigned *d_count = NULL;
    unsigned long long *d_bad = NULL;
    struct chase_run c;
    int rc = RK_OK;

    memset(&c, 0, sizeof c);
    PT_CUDA(cudaSetDevice(own->dev.index));
    PT_CUDA(cudaMalloc(&d_count, n * sizeof *d_count));
    PT_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
    k_chase_build<<<own->dev.sm_count * 8, 256, 0, own->stream>>>((uint64_t *)buf, p);
    PT_CUDA(cudaGetLastError());
    if ((rc = check_perm(own, p, d_count, d_bad)) != RK_OK)
        goto out;
    PT_CUDA(cudaSetDevice(run->dev.index));
    if ((rc = chase_run_alloc(&c)) != RK_OK)
        goto out;
    for (int i = 0; i < n_sms && !rk_interrupted; i++) {
        /* each SM from its own place in the cycle: no line of one chase waits in a cache for
         * the next; and the owner's L2 emptied of what building (or the last chase) left */
        const uint64_t pos = pt_hash(0xFA2C0000u + (uint64_t)i) % n;
        const uint64_t *start = (const uint64_t *)buf + perm_apply(p, pos) * LINE_WORDS;
        const uint64_t want =
            (uint64_t)(uintptr_t)((const uint64_t *)buf +
                                  perm_apply(p,
                                             (pos + (uint64_t)warm + (uint64_t)steps * segs) % n) *
                                      LINE_WORDS);
        if (flush) {
            PT_CUDA(cudaSetDevice(own->dev.index));
            PT_CUDA(cudaMemsetAsync(flush, 0, flush_bytes, own->stream));
            PT_CUDA(cudaStreamSynchronize(own->stream));
            PT_CUDA(cudaSetDevice(run->dev.index));
        }
        rc = chase_on_sm(run, &c, start, warm, steps, segs, i * run->dev.sm_count / n_sms, want,
                         (int64_t)bytes, &cycles[i]);
        if (rc != RK_OK)
            goto out;
    }
out:
    cudaSetDevice(own->dev.index); /* each buffer freed with its GPU current */
    cudaFree(d_count);
    cudaFree(d_bad);
    cudaSetDevice(run->dev.index);
    chase_run_free(&c);
    return rc;
}

/* ---- shared memory ---- */

#define SH_ENTRIES 1024

__global__ void k_lat_shared(const uint32_t *order, long warm, long steps, long long *cycles,
                             uint32_t *end)
{
    __shared__ uint32_t sm[SH_ENTRIES];
    for (int i = threadIdx.x; i < SH_ENTRIES; i += blockDim.x)
        sm[i] = order[i];
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    uint32_t j = 0;
    for (long i = 0; i < warm; i++)
        j = sm[j];
    long long t0 = clock64();
    for (long i = 0; i < steps; i += CHASE_UNROLL) {
#pragma unroll
        for (int u = 0; u < CHASE_UNROLL; u++)
            j = sm[j]; /* a 32-bit index chase: one LDS per step */
    }
    long long t1 = clock64();
    cycles[0] = t1 - t0;
    end[0] = j;
}

/* Sattolo's algorithm: idx[0..n) becomes one random cycle through all n entries, the same
 * for the same seed. */
static void random_cycle(int *idx, uint32_t n, uint64_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        idx[i] = (int)i;
    for (uint32_t i = n > 0 ? n - 1 : 0; i > 0; i--) {
        int k = (int)(pt_hash(seed + (uint64_t)i) % (uint64_t)i), t = idx[i];
        idx[i] = idx[k];
        idx[k] = t;
    }
}

int pt_lat_shared(struct probes *s, int arg, struct probes_output *out)
{
    const int reps = s->quick ? 3 : 9;
    const long warm = SH_ENTRIES, steps = 16384;
    uint32_t order[SH_ENTRIES], *d_order = NULL, *d_end = NULL, got, want = 0;
    long long *d_cycles = NULL, cyc;
    double v[16], mhz = 0;
    int idx[SH_ENTRIES], rc = RK_OK;
    struct probes_result *r;
    (void)arg;

    random_cycle(idx, SH_ENTRIES, 0xC0FFEEu);
    for (int i = 0; i < SH_ENTRIES; i++)
        order[idx[i]] = (uint32_t)idx[(i + 1) % SH_ENTRIES];
    for (long i = 0; i < warm + steps; i++)
        want = order[want];

    PT_CUDA(cudaMalloc(&d_order, sizeof order));
    PT_CUDA(cudaMalloc(&d_end, sizeof *d_end));
    PT_CUDA(cudaMalloc(&d_cycles, sizeof *d_cycles));
    PT_CUDA(cudaMemcpyAsync(d_order, order, sizeof order, cudaMemcpyHostToDevice, s->stream));
    if (s->measured_clock_mhz <= 0 && (rc = pt_measure_clock(s, 2.0, &mhz)) != RK_OK)
        goto out;
    mhz = s->measured_clock_mhz;
    for (int rep = 0; rep < reps; rep++) {
        k_lat_shared<<<1, 256, 0, s->stream>>>(d_order, warm, steps, d_cycles, d_end);
        PT_CUDA(cudaGetLastError());
        pt_sample(s);
        PT_CUDA(cudaMemcpyAsync(&cyc, d_cycles, sizeof cyc, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaMemcpyAsync(&got, d_end, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaStreamSynchronize(s->stream));
        if (got != want) {
            rc = rk_error(RK_EVERIFY,
                          "the shared-memory chase ended on entry %u, not %u; please "
                          "report this",
                          got, want);
            goto out;
        }
        v[rep] = (double)cyc / (double)steps;
    }
    for (int unit = 0; unit < 2; unit++) {
        r = pt_add_result(out, unit ? "lat_shared_ns" : "lat_shared");
        if (!r) {
            rc = rk_error(RK_ENOMEM, "out of host memory");
            goto out;
        }
        pt_stats(v, reps, &r->min, &r->median, &r->max);
        if (unit) {
            r->min = r->min / mhz * 1e3;
            r->median = r->median / mhz * 1e3;
            r->max = r->max / mhz * 1e3;
        }
        r->value = r->median;
        r->reps = reps;
        r->kind = "latency";
        r->level = "shared";
        r->unit = unit ? "ns" : "cycles";
        snprintf(r->method, sizeof r->method,
                 "one thread chases a random cycle of %d 32-bit indices in shared memory, "
                 "j = s[j], clock64 over %ld steps",
                 SH_ENTRIES, steps);
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p, "{\"entries\":%d,\"steps\":%ld", SH_ENTRIES, steps);
        pt_json_fixed(&p, "clock_measured_mhz", mhz, 1);
        rk_buf_puts(&p, "}");
        if ((rc = pt_set_params(r, &p)) != RK_OK)
            goto out;
    }
out:
    cudaFree(d_order);
    cudaFree(d_end);
    cudaFree(d_cycles);
    return rc;
}

/* ---- a staging round ---- */

/*
 * The round a tiled GEMM block waits for before it computes (the model's staging term,
 * docs/model.md "issue"): every thread of a block of STAGE_THREADS loads one word of a
 * 1 KB segment (coalesced: 8 lines), stores it to shared memory, the block meets at a
 * barrier, and the next segment's number is word 0 of this one (a random cycle through
 * the segments, Sattolo), so each round waits for the last. Every SM runs `per_sm`
 * blocks, each on its own place in the cycle. Beside it, thread 0 of one block chases
 * the same cycle alone (one load a step, no store, no barrier): the round's cycles
 * beyond that chase are what staging adds to a load's latency.
 */
#define STAGE_THREADS 256
#define STAGE_SEG     (4 * STAGE_THREADS) /* bytes a round stages */
/* the footprint: inside the near L2 plateau of the chase (H100: to ~20 MB); at most half
 * the L2 of a smaller GPU */
#define STAGE_BYTES (4u << 20)

__global__ void k_lat_stage(const uint32_t *buf, uint32_t nsegs, long rounds, int alone,
                            long long *cycles, uint32_t *end)
{
    __shared__ uint32_t sh[2][STAGE_THREADS];
    uint32_t seg = (uint32_t)(((uint64_t)blockIdx.x * 2654435761u) % nsegs);
    long long t0 = 0;
    if (alone) { /* one thread, one load a step */
        if (threadIdx.x != 0)
            return;
        t0 = clock64();
        for (long r = 0; r < rounds; r++)
            seg = buf[(size_t)seg * STAGE_THREADS];
    } else {
        t0 = clock64();
        for (long r = 0; r < rounds; r++) {
            const int b = (int)(r & 1); /* two buffers: one barrier a round is enough */
            sh[b][threadIdx.x] = buf[(size_t)seg * STAGE_THREADS + threadIdx.x];
            __syncthreads();
            seg = sh[b][0];
        }
    }
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = clock64() - t0;
        end[blockIdx.x] = seg;
    }
}

int pt_lat_stage(struct probes *s, int arg, struct probes_output *out)
{
    const int reps = s->quick ? 3 : 7;
    const long rounds = s->quick ? 1024 : 4096;
    const int n_sms = s->dev.sm_count, per_sm[2] = {1, 4};
    const int max_blocks = n_sms * per_sm[1];
    /* the footprint: STAGE_BYTES, or half the L2 where that is smaller */
    const uint32_t bytes = s->dev.l2_bytes > 0 && (int64_t)STAGE_BYTES > s->dev.l2_bytes / 2
                               ? (uint32_t)(s->dev.l2_bytes / 2 / STAGE_SEG * STAGE_SEG)
                               : STAGE_BYTES;
    const uint32_t nsegs = bytes / STAGE_SEG;
    uint32_t *h = NULL, *d_buf = NULL, *d_end = NULL, *h_end = NULL, want = 0;
    long long *d_cycles = NULL, *h_cycles = NULL;
    double v[3][16], med[3], mhz;
    int *idx = NULL, rc = RK_OK;
    struct probes_result *r;
    (void)arg;

    h = (uint32_t *)malloc((size_t)bytes);
    idx = (int *)malloc(sizeof(int) * nsegs);
    h_cycles = (long long *)malloc(sizeof(long long) * (size_t)max_blocks);
    h_end = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)max_blocks);
    if (!h || !idx || !h_cycles || !h_end) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    /* one random cycle through the segments; word 0 of a segment names the next, the other
     * words are filler the block stages too */
    random_cycle(idx, nsegs, 0x57A6Eu);
    for (uint32_t i = 0; i < nsegs; i++)
        for (uint32_t w = 0; w < STAGE_THREADS; w++)
            h[(size_t)idx[i] * STAGE_THREADS + w] =
                w ? (uint32_t)pt_hash(i * 131u + w) : (uint32_t)idx[(i + 1) % nsegs];

    PT_CUDA(cudaMalloc(&d_buf, (size_t)bytes));
    PT_CUDA(cudaMalloc(&d_cycles, sizeof(long long) * (size_t)max_blocks));
    PT_CUDA(cudaMalloc(&d_end, sizeof(uint32_t) * (size_t)max_blocks));
    PT_CUDA(cudaMemcpyAsync(d_buf, h, (size_t)bytes, cudaMemcpyHostToDevice, s->stream));
    if (s->measured_clock_mhz <= 0 && (rc = pt_measure_clock(s, 2.0, &mhz)) != RK_OK)
        goto out;
    mhz = s->measured_clock_mhz;
    /* where block 0's walk from segment 0 must end after `rounds` rounds */
    for (long i = 0; i < rounds; i++)
        want = h[(size_t)want * STAGE_THREADS];
    /* warm the L2 with the whole buffer: one untimed pass of every block */
    k_lat_stage<<<max_blocks, STAGE_THREADS, 0, s->stream>>>(d_buf, nsegs, nsegs / 64 + 1, 0,
                                                             d_cycles, d_end);
    PT_CUDA(cudaGetLastError());
    for (int rep = 0; rep < reps && !rk_interrupted; rep++) {
        for (int c = 0; c < 3; c++) { /* 1 block a SM, 4 blocks a SM, the lone chase */
            const int blocks = c == 2 ? 1 : n_sms * per_sm[c];
            k_lat_stage<<<blocks, STAGE_THREADS, 0, s->stream>>>(d_buf, nsegs, rounds, c == 2,
                                                                 d_cycles, d_end);
            PT_CUDA(cudaGetLastError());
            pt_sample(s);
            PT_CUDA(cudaMemcpyAsync(h_cycles, d_cycles, sizeof(long long) * (size_t)blocks,
                                    cudaMemcpyDeviceToHost, s->stream));
            PT_CUDA(cudaMemcpyAsync(h_end, d_end, sizeof(uint32_t) * (size_t)blocks,
                                    cudaMemcpyDeviceToHost, s->stream));
            PT_CUDA(cudaStreamSynchronize(s->stream));
            if (h_end[0] != want) { /* block 0 starts at segment 0 */
                rc = rk_error(RK_EVERIFY,
                              "the staging chase ended on segment %u, not %u; please report "
                              "this",
                              h_end[0], want);
                goto out;
            }
            /* the median block's cycles a round */
            double per[4 * 1024];
            const int nb = blocks < 4 * 1024 ? blocks : 4 * 1024;
            for (int b = 0; b < nb; b++)
                per[b] = (double)h_cycles[b] / (double)rounds;
            v[c][rep] = pt_median(per, nb);
        }
    }
    if (rk_interrupted)
        goto out;
    for (int c = 0; c < 3; c++)
        med[c] = pt_median(v[c], reps);
    /* each result is filled before the next is added: pt_add_result may move the array */
    r = pt_add_result(out, "lat_stage_l2");
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    pt_fill_stats(r, v[0], reps, "latency", "stage", "cycles");
    snprintf(r->method, sizeof r->method,
             "a staging round of a %d-thread block, one block a SM: every thread loads one word "
             "of a 1 KB segment (L2-resident, %u MB, random cycle), stores it to shared "
             "memory, barrier; the next segment is word 0; clock64 over %ld rounds, median "
             "block",
             STAGE_THREADS, bytes >> 20, rounds);
    {
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p,
                      "{\"threads\":%d,\"footprint_bytes\":%u,\"rounds\":%ld,\"blocks_per_sm\":1",
                      STAGE_THREADS, bytes, rounds);
        pt_json_fixed(&p, "cycles_4_blocks_per_sm", med[1], 1);
        pt_json_fixed(&p, "cycles_alone", med[2], 1);
        pt_json_fixed(&p, "extra_over_alone", med[0] - med[2], 1);
        pt_json_fixed(&p, "clock_measured_mhz", mhz, 1);
        rk_buf_puts(&p, "}");
        if ((rc = pt_set_params(r, &p)) != RK_OK)
            goto out;
    }
    {
        /* what a round adds to the lone load: the model's staging rounds pay it on top of a
         * load's latency (docs/model.md "issue"); each repetition's pair */
        double d[16];
        for (int rep = 0; rep < reps; rep++)
            d[rep] = v[0][rep] - v[2][rep];
        r = pt_add_result(out, "lat_stage_extra");
        if (!r) {
            rc = rk_error(RK_ENOMEM, "out of host memory");
            goto out;
        }
        pt_fill_stats(r, d, reps, "latency", "stage", "cycles");
        snprintf(r->method, sizeof r->method,
                 "lat_stage_l2's round less one thread's chase of the same segments (one load "
                 "a step, no store, no barrier): the shared store, barrier and loop a staging "
                 "round adds to a load's latency");
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_puts(&p, "{");
        pt_json_fixed(&p, "round_cycles", med[0], 1);
        pt_json_fixed(&p, "alone_cycles", med[2], 1);
        rk_buf_printf(&p, ",\"footprint_bytes\":%u}", bytes);
        rc = pt_set_params(r, &p);
    }
out:
    free(h);
    free(idx);
    free(h_cycles);
    free(h_end);
    cudaFree(d_buf);
    cudaFree(d_cycles);
    cudaFree(d_end);
    return rc;
}

/* ---- dependent FMA ---- */

#define FMA_UNROLL 256

static __device__ __forceinline__ float fma_of(float x, float y, float z)
{
    return fmaf(x, y, z);
}
static __device__ __forceinline__ double fma_of(double x, double y, double z)
{
    return fma(x, y, z);
}
static __device__ __forceinline__ __half fma_of(__half x, __half y, __half z)
{
    return __hfma(x, y, z);
}

template <typename T> __global__ void k_lat_fma(T x, T y, T z, int outer, long long *cycles, T *out)
{
    long long t0 = clock64();
    for (int o = 0; o < outer; o++) {
#pragma unroll
        for (int u = 0; u < FMA_UNROLL; u++)
            x = fma_of(x, y, z); /* each FMA waits for the one before */
    }
    long long t1 = clock64();
    cycles[0] = t1 - t0;
    out[0] = x;
}

template <typename T> static double to_double(T v)
{
    return (double)v;
}
template <> double to_double<__half>(__half v)
{
    return (double)__half2float(v);
}

template <typename T>
static int run_lat_fma(struct probes *s, T x, T y, T z, double tol, int reps, double *v)
{
    const int outer = 16;
    long long *d_cycles = NULL, cyc;
    T *d_out = NULL, got;
    double want = to_double(x);
    int rc = RK_OK;

    for (int i = 0; i < outer * FMA_UNROLL; i++)
        want = want * to_double(y) + to_double(z);
    PT_CUDA(cudaMalloc(&d_cycles, sizeof *d_cycles));
    PT_CUDA(cudaMalloc(&d_out, sizeof *d_out));
    for (int rep = 0; rep < reps; rep++) {
        k_lat_fma<T><<<1, 1, 0, s->stream>>>(x, y, z, outer, d_cycles, d_out);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaMemcpyAsync(&cyc, d_cycles, sizeof cyc, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaMemcpyAsync(&got, d_out, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaStreamSynchronize(s->stream));
        if (!(fabs(to_double(got) - want) <= tol * fabs(want))) {
            rc = rk_error(RK_EVERIFY,
                          "the dependent-FMA chain computed %g, not %g; please "
                          "report this",
                          to_double(got), want);
            goto out;
        }
        v[rep] = (double)cyc / (outer * FMA_UNROLL);
    }
out:
    cudaFree(d_cycles);
    cudaFree(d_out);
    return rc;
}

int pt_lat_fma(struct probes *s, int prec, struct probes_output *out)
{
    const int reps = s->quick ? 3 : 9;
    double v[16];
    int rc;
    const char *pname = prec == PT_FP32 ? "fp32" : prec == PT_FP64 ? "fp64" : "fp16";
    char name[48];
    struct probes_result *r;

    /* x <- (15/16) x + 1/16: exact in every format, converges to 1 and stays finite
     * (fp16 stalls a few ulps short of 1 where the step drops under half an ulp). */
    if (prec == PT_FP32)
        rc = run_lat_fma<float>(s, 0.5f, 0.9375f, 0.0625f, 1e-4, reps, v);
    else if (prec == PT_FP64)
        rc = run_lat_fma<double>(s, 0.5, 0.9375, 0.0625, 1e-12, reps, v);
    else
        rc = run_lat_fma<__half>(s, __float2half(0.5f), __float2half(0.9375f),
                                 __float2half(0.0625f), 2e-2, reps, v);
    if (rc != RK_OK)
        return rc;
    snprintf(name, sizeof name, "lat_fma_%s", pname);
    r = pt_add_result(out, name);
    if (!r)
        return rk_error(RK_ENOMEM, "out of host memory");
    pt_stats(v, reps, &r->min, &r->median, &r->max);
    r->value = r->median;
    r->reps = reps;
    r->kind = "latency";
    r->level = "register";
    r->precision = pname;
    r->unit = "cycles";
    snprintf(r->method, sizeof r->method,
             "one thread, a chain of %d dependent %s FMAs x = x*y + z, clock64", 16 * FMA_UNROLL,
             prec == PT_FP32   ? "FFMA"
             : prec == PT_FP64 ? "DFMA"
                               : "HFMA");
    snprintf(r->params, sizeof r->params, "{\"chain\":%d}", 16 * FMA_UNROLL);
    return RK_OK;
}
