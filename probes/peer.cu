/*
 * peer.cu - the ceilings between two GPUs of one host (probes_peer_run): copy-engine
 * bandwidth one way and both ways at once, SM-driven bandwidth (kernels that load from or
 * store to the other GPU's memory) one way and both ways, and the latency of one load from
 * the other GPU's memory.
 *
 * Why: a program spread over GPUs moves its data between them either with the copy engines
 * (cudaMemcpyPeer) or with kernels that touch the other GPU's memory (as NCCL's do); the two
 * reach different rates, and the roofline of its transfers needs the one it uses.
 *
 * Assumptions and method:
 *   - The pair is ordered: a's CUDA events time everything, a's SMs run the one-way kernels
 *     and the chase. Each GPU is opened as a session (pt_open: its stream, events, NVML);
 *     peer access is enabled both ways, and what this call enabled it disables again. A pair
 *     without peer access both ways is waived: a copy between its GPUs would be staged
 *     through host memory, which bw_h2d and bw_d2h already measure.
 *   - Buffers: two on each GPU of max(1 GiB, 8x either L2); a copy a -> b reads a0 and writes
 *     b1, a copy b -> a reads b0 and writes a1, 1 GiB per direction and repetition. The
 *     sources hold random doubles (pt_uniform, one seed per GPU).
 *   - Every configuration is checked before it is timed: its destinations are poisoned
 *     (NaN), it runs once, and a kernel on each destination's GPU compares every element,
 *     bit for bit, with pt_uniform of the source's seed.
 *   - Timing: pt_time on a's stream (CUDA events on a around each repetition, 2 warm-ups,
 *     the median with min and max). Work on b's stream is forked from an event on a's stream
 *     and joined back into it, so a repetition's time runs from the moment both directions
 *     may start until both have ended: the wall time of both, on a's clock.
 *   - Bytes are those that cross the link: 1 GiB per direction and repetition.
 *   - The reference of every bandwidth row is cudaMemcpyPeerAsync of 1 GiB on the source
 *     GPU's stream, one per repetition, in the same direction(s), timed the same way in the
 *     same run; each row carries it and its ratio to it (bw_dram_copy's scheme).
 *   - Latency: latency.cu's chase (pt_chase_far) from SMs of a through a chain of 128-byte
 *     lines in b1 (>= 8x b's L2), b's L2 emptied before each SM; ns at a's SM clock measured
 *     with clock64 over %globaltimer.
 *   - The link in words and the datasheet figure come from NVML's NVLink queries (active
 *     links to b or to an NVSwitch) and the per-link rate of a's architecture; without them
 *     the link is "unknown" and the theoretical value NaN.
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#define GIB        ((size_t)1 << 30)
#define COPY_BYTES GIB /* bytes per direction and repetition; the reference's copy */
#define SEED_A     0xA0A0A0A0ull
#define SEED_B     0xB0B0B0B0ull

enum { AB = 1, BA = 2 };            /* directions, as bits */
enum { BY_CE, BY_SM };              /* copy engines or kernels */
enum { ON_SOURCE, ON_DESTINATION }; /* whose stream (copy engine) or SMs drive a direction */

/* Counts the elements of x that differ, bit for bit, from pt_uniform(seed, i). */
__global__ void k_peer_check(const double *x, size_t n, uint64_t seed, unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        mine += __double_as_longlong(x[i]) != __double_as_longlong(pt_uniform(seed, i));
    if (mine)
        atomicAdd(bad, mine);
}

struct peer_pair {
    struct probes *a, *b;
    void *a0, *a1, *b0, *b1; /* sources a0, b0; destinations a1, b1 */
    size_t bytes;            /* of each buffer */
    unsigned long long *bad_a, *bad_b;
    cudaEvent_t fork, join; /* fork is a's, join b's */
    int quick, reps;
    char link[192];  /* in words */
    double link_gbs; /* datasheet rate one way, GB/s; NaN unknown */
};

struct peer_job {
    struct peer_pair *p;
    int by;   /* BY_CE or BY_SM */
    int dirs; /* AB, BA or both */
    int on;   /* ON_SOURCE or ON_DESTINATION */
    size_t size;
    int copies;               /* BY_CE: copies of `size` a direction and repetition */
    int block, blocks_per_sm; /* BY_SM */
};

/* The session whose stream or SMs drive direction d of j. */
static struct probes *driver(const struct peer_job *j, int d)
{
    const int on_a = j->on == ON_SOURCE ? d == AB : d == BA;
    return on_a ? j->p->a : j->p->b;
}

static int enqueue_dir(const struct peer_job *j, int d)
{
    struct peer_pair *p = j->p;
    struct probes *src = d == AB ? p->a : p->b, *dst = d == AB ? p->b : p->a, *drv = driver(j, d);
    const char *from = (const char *)(d == AB ? p->a0 : p->b0);
    char *to = (char *)(d == AB ? p->b1 : p->a1);

    if (j->by == BY_CE) {
        for (int c = 0; c < j->copies; c++)
            RK_CUDA(cudaMemcpyPeerAsync(to + (size_t)c * j->size, dst->dev.index,
                                        from + (size_t)c * j->size, src->dev.index, j->size,
                                        drv->stream));
        return RK_OK;
    }
    /* a kernel runs on the current device's streams only */
    RK_CUDA(cudaSetDevice(drv->dev.index));
    pt_k_copy<<<drv->dev.sm_count * j->blocks_per_sm, j->block, 0, drv->stream>>>(
        (const double2 *)from, (double2 *)to, COPY_BYTES / 16);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaSetDevice(p->a->dev.index));
    return RK_OK;
}

/* One repetition of j (pt_enqueue_fn; st is a's stream): b's part forked from and joined
 * into st. */
static int enqueue_job(void *arg, cudaStream_t st)
{
    const struct peer_job *j = (const struct peer_job *)arg;
    struct peer_pair *p = j->p;
    int fork = 0, rc;

    for (int d = AB; d <= BA; d <<= 1)
        if ((j->dirs & d) && driver(j, d) == p->b)
            fork = 1;
    if (fork) {
        RK_CUDA(cudaEventRecord(p->fork, st));
        RK_CUDA(cudaStreamWaitEvent(p->b->stream, p->fork, 0));
    }
    for (int d = AB; d <= BA; d <<= 1)
        if ((j->dirs & d) && (rc = enqueue_dir(j, d)) != RK_OK)
            return rc;
    if (fork) {
        RK_CUDA(cudaEventRecord(p->join, p->b->stream));
        RK_CUDA(cudaStreamWaitEvent(st, p->join, 0));
    }
    return RK_OK;
}

/* Poisons j's destinations, runs j once and compares every element it wrote. */
static int check_job(const struct peer_job *j)
{
    struct peer_pair *p = j->p;
    int rc;

    for (int d = AB; d <= BA; d <<= 1) {
        struct probes *dst = d == AB ? p->b : p->a;
        if (!(j->dirs & d))
            continue;
        RK_CUDA(cudaSetDevice(dst->dev.index));
        RK_CUDA(cudaMemsetAsync(d == AB ? p->b1 : p->a1, 0xFF, COPY_BYTES, dst->stream));
        RK_CUDA(cudaStreamSynchronize(dst->stream));
    }
    RK_CUDA(cudaSetDevice(p->a->dev.index));
    if ((rc = enqueue_job((void *)j, p->a->stream)) != RK_OK)
        return rc;
    RK_CUDA(cudaStreamSynchronize(p->a->stream));
    for (int d = AB; d <= BA; d <<= 1) {
        struct probes *src = d == AB ? p->a : p->b, *dst = d == AB ? p->b : p->a;
        unsigned long long *d_bad = d == AB ? p->bad_b : p->bad_a, bad = 0;
        if (!(j->dirs & d))
            continue;
        RK_CUDA(cudaSetDevice(dst->dev.index));
        RK_CUDA(cudaMemsetAsync(d_bad, 0, sizeof *d_bad, dst->stream));
        k_peer_check<<<dst->dev.sm_count * 8, 256, 0, dst->stream>>>(
            (const double *)(d == AB ? p->b1 : p->a1), COPY_BYTES / 8, d == AB ? SEED_A : SEED_B,
            d_bad);
        RK_CUDA(cudaGetLastError());
        RK_CUDA(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, dst->stream));
        RK_CUDA(cudaStreamSynchronize(dst->stream));
        RK_CUDA(cudaSetDevice(p->a->dev.index));
        if (bad)
            return rk_error(RK_EVERIFY,
                            "a %s copy from GPU %d to GPU %d wrote %llu wrong elements of %zu; "
                            "check the link with 'nvidia-smi nvlink -s' and report this",
                            j->by == BY_CE ? "copy-engine" : "kernel", src->dev.index,
                            dst->dev.index, bad, COPY_BYTES / 8);
    }
    return RK_OK;
}

static int n_dirs(int dirs)
{
    return (dirs & AB ? 1 : 0) + (dirs & BA ? 1 : 0);
}

/* Checks and times jobs[0..n); the best median's index in *best and its times in best_ms. */
static int best_of(struct peer_pair *p, const struct peer_job *jobs, int n, int *best,
                   double *best_ms /* OUT: p->reps */)
{
    double ms[PT_MAX_REPS], best_med = INFINITY;
    int rc;

    for (int i = 0; i < n; i++) {
        if (rk_interrupted)
            return RK_EINTR;
        if ((rc = check_job(&jobs[i])) != RK_OK)
            return rc;
        if ((rc = pt_time(p->a, enqueue_job, (void *)&jobs[i], 2, p->reps, ms)) != RK_OK)
            return rc;
        const double med = pt_median(ms, p->reps); /* every job moves the same bytes */
        if (med < best_med) {
            best_med = med;
            *best = i;
            memcpy(best_ms, ms, sizeof ms);
        }
    }
    return rk_interrupted ? RK_EINTR : RK_OK;
}

/* A job of p, its sizes and shape zero. */
static struct peer_job job_of(struct peer_pair *p, int by, int dirs, int on)
{
    const struct peer_job j = {p, by, dirs, on, 0, 0, 0, 0}; /* in struct peer_job's order */
    return j;
}

/* cudaMemcpyPeerAsync of COPY_BYTES on the source's stream, direction(s) dirs: GB/s. */
static int reference(struct peer_pair *p, int dirs, double *gbs /* OUT */)
{
    struct peer_job j = job_of(p, BY_CE, dirs, ON_SOURCE);
    double ms[PT_MAX_REPS];
    int best = 0, rc;

    j.size = COPY_BYTES;
    j.copies = 1;
    if ((rc = best_of(p, &j, 1, &best, ms)) != RK_OK)
        return rc;
    *gbs = (double)COPY_BYTES * n_dirs(dirs) / pt_median(ms, p->reps) / 1e6;
    return RK_OK;
}

/* The configurations a row tries: copy sizes x streams, or block sizes x blocks per SM. */
static int make_jobs(struct peer_pair *p, int by, int dirs, int on, struct peer_job *jobs)
{
    static const size_t full_sizes[] = {32u << 20, 256u << 20, GIB}, quick_sizes[] = {GIB};
    static const int full_blocks[] = {256, 512, 1024}, quick_blocks[] = {512, 1024};
    static const int full_per_sm[] = {1, 2, 4, 8}, quick_per_sm[] = {1, 4};
    int n = 0;

    if (by == BY_CE) {
        const size_t *sizes = p->quick ? quick_sizes : full_sizes;
        const int n_sizes = p->quick ? 1 : 3;
        for (int o = ON_SOURCE; o <= ON_DESTINATION; o++)
            for (int i = 0; i < n_sizes; i++) {
                jobs[n] = job_of(p, BY_CE, dirs, o);
                jobs[n].size = sizes[i];
                jobs[n++].copies = (int)(COPY_BYTES / sizes[i]);
            }
        return n;
    }
    for (int bi = 0; bi < (p->quick ? 2 : 3); bi++)
        for (int k = 0; k < (p->quick ? 2 : 4); k++) {
            jobs[n] = job_of(p, BY_SM, dirs, on);
            jobs[n].block = (p->quick ? quick_blocks : full_blocks)[bi];
            jobs[n++].blocks_per_sm = (p->quick ? quick_per_sm : full_per_sm)[k];
        }
    return n;
}

/* {"gpu_a":..,"gpu_b":..,"dev_a":..,"dev_b":..,"link":.. (no closing brace) */
static void params_pair(struct rk_buf *b, const struct peer_pair *p)
{
    rk_buf_puts(b, "{");
    rk_json_key_str(b, "gpu_a", p->a->dev.uuid);
    rk_buf_puts(b, ",");
    rk_json_key_str(b, "gpu_b", p->b->dev.uuid);
    rk_buf_printf(b, ",\"dev_a\":%d,\"dev_b\":%d,", p->a->dev.index, p->b->dev.index);
    rk_json_key_str(b, "link", p->link);
}

/* a's NVML medians since the row began (samples reset by the caller). */
static void fill_nvml(struct probes_result *r, struct probes *a)
{
    const struct pt_samples *t = a->samples;
    r->sm_clock_mhz = pt_median(t->clock_mhz, t->n);
    r->power_w = pt_median(t->power_w, t->n);
    r->temp_c = pt_median(t->temp_c, t->n);
}

/* One bandwidth row: the best of its configurations against the reference ref_gbs. */
static int bw_row(struct peer_pair *p, const char *name, int by, int dirs, int on, double ref_gbs,
                  struct probes_output *out)
{
    static const char *const dir_words[] = {"", "a to b", "b to a", "a to b and b to a at once"};
    static const char *const dir_keys[] = {"", "a_to_b", "b_to_a", "both"};
    struct peer_job jobs[16];
    double best_ms[PT_MAX_REPS];
    int best = 0, rc;
    const int n = make_jobs(p, by, dirs, on, jobs), nd = n_dirs(dirs);
    const struct peer_job *j;
    struct probes_result *r;
    struct rk_buf b = RK_BUF_INIT;

    p->a->samples->n = 0;
    if ((rc = best_of(p, jobs, n, &best, best_ms)) != RK_OK)
        return rc;
    j = &jobs[best];
    if (!(r = pt_add_result(out, name)))
        return rk_error(RK_ENOMEM, "out of host memory");
    r->kind = "bandwidth";
    r->level = "peer";
    r->unit = "GB/s";
    pt_fill_rate(r, best_ms, p->reps, (double)COPY_BYTES * nd / 1e6); /* B / ms / 1e6 = GB/s */
    r->theoretical = p->link_gbs * nd;
    fill_nvml(r, p->a);
    if (by == BY_CE)
        snprintf(r->method, sizeof r->method,
                 "cudaMemcpyPeerAsync %s, peer access on: 1 GiB a direction a repetition %s, on "
                 "the source's or the destination's stream; best median of %d; CUDA events on "
                 "a%s",
                 dir_words[dirs],
                 p->quick ? "in one copy" : "in copies of 32 MiB, 256 MiB or 1 GiB", n,
                 nd > 1 ? " around both directions, started together" : "");
    else
        snprintf(r->method, sizeof r->method,
                 "%s: a kernel on each direction's %s GPU copies 1 GiB with 16-byte %s the other "
                 "GPU's memory, grid-stride, 4 in flight a thread; best median of %d block x grid "
                 "shapes; CUDA events on a%s",
                 dir_words[dirs], on == ON_SOURCE ? "source" : "destination",
                 on == ON_SOURCE ? "stores to" : "loads from", n,
                 nd > 1 ? " around both kernels, started together" : "");
    params_pair(&b, p);
    rk_buf_puts(&b, ",");
    rk_json_key_str(&b, "direction", dir_keys[dirs]);
    rk_buf_printf(&b, ",\"bytes_per_direction\":%zu,\"configurations\":%d,", COPY_BYTES, n);
    if (by == BY_CE) {
        rk_json_key_str(&b, "engine", "copy");
        rk_buf_puts(&b, ",");
        rk_json_key_str(&b, "stream", j->on == ON_SOURCE ? "source" : "destination");
        rk_buf_printf(&b, ",\"copy_bytes\":%zu,\"copies\":%d", j->size, j->copies);
    } else {
        rk_json_key_str(&b, "engine", "sm");
        rk_buf_puts(&b, ",");
        rk_json_key_str(&b, "kernel_on", on == ON_SOURCE ? "source" : "destination");
        rk_buf_printf(&b, ",\"block\":%d,\"blocks_per_sm\":%d,\"grid\":%d,\"elem_bytes\":16",
                      j->block, j->blocks_per_sm, p->a->dev.sm_count * j->blocks_per_sm);
    }
    rk_buf_printf(&b, ",\"memcpy_peer_bytes\":%zu", COPY_BYTES);
    pt_json_fixed(&b, "memcpy_peer_gbs", ref_gbs, 1);
    pt_json_fixed(&b, "ratio_to_memcpy_peer", r->value / ref_gbs, 4);
    rk_buf_puts(&b, "}");
    return pt_set_params(r, &b);
}

/* lat_peer_chase: SMs of a chasing pointers through b1. */
static int chase_row(struct peer_pair *p, struct probes_output *out)
{
    const int max_sms = p->quick ? 3 : 8, segs = p->quick ? 2 : 3;
    const int n_sms = p->a->dev.sm_count < max_sms ? p->a->dev.sm_count : max_sms;
    const long steps = p->quick ? 2048 : 4096;
    /* writing 4x b's L2 (of b0, no longer needed) empties it */
    const size_t flush =
        (size_t)p->b->dev.l2_bytes * 4 < p->bytes ? (size_t)p->b->dev.l2_bytes * 4 : p->bytes;
    double cycles[8], ns[8], mhz = 0;
    struct probes_result *r;
    struct rk_buf b = RK_BUF_INIT;
    int rc;

    p->a->samples->n = 0;
    RK_CUDA(cudaSetDevice(p->a->dev.index));
    if ((rc = pt_measure_clock(p->a, 5.0, &mhz)) != RK_OK)
        return rc;
    rc = pt_chase_far(p->b, p->a, p->b1, p->bytes, p->b0, flush, n_sms, steps, segs, cycles);
    if (rc != RK_OK)
        return rc;
    if (rk_interrupted)
        return RK_EINTR;
    for (int i = 0; i < n_sms; i++)
        ns[i] = cycles[i] / mhz * 1e3;
    if (!(r = pt_add_result(out, "lat_peer_chase")))
        return rk_error(RK_ENOMEM, "out of host memory");
    pt_fill_stats(r, ns, n_sms, "latency", "peer", "ns");
    fill_nvml(r, p->a);
    snprintf(r->method, sizeof r->method,
             "one thread on a chases 64-bit pointers (p = *p) through a random cyclic order of "
             "128-byte lines in %zu MiB of b's memory, b's L2 emptied first; clock64 at a's "
             "clock; median of %d SMs of a",
             p->bytes >> 20, n_sms);
    params_pair(&b, p);
    rk_buf_printf(&b,
                  ",\"footprint_bytes\":%zu,\"line_bytes\":128,\"steps\":%ld,\"segments\":%d,"
                  "\"sms\":%d",
                  p->bytes, steps, segs, n_sms);
    pt_json_fixed(&b, "cycles", pt_median(cycles, n_sms), 1);
    pt_json_fixed(&b, "clock_measured_mhz", mhz, 1);
    rk_buf_puts(&b, "}");
    return pt_set_params(r, &b);
}

/*
 * NVLink's rate a link and direction, GB/s, by architecture (NVIDIA's whitepapers: P100 4
 * links 160 GB/s, V100 6 links 300, A100 12 links 600, H100 18 links 900, B200 18 links
 * 1800, both directions together); NaN for a GPU roofkit has no figure for.
 */
static double nvlink_gbs_per_link(int cc_major, int cc_minor)
{
    if (cc_major == 6 && cc_minor == 0)
        return 20;
    if ((cc_major == 7 && cc_minor == 0) || (cc_major == 8 && cc_minor == 0) ||
        (cc_major == 9 && cc_minor == 0))
        return 25;
    if (cc_major == 10 && cc_minor == 0)
        return 50;
    return NAN;
}

/* p->link and p->link_gbs from NVML's link count and CUDA's peer attributes. */
static void describe_link(struct peer_pair *p)
{
    int sw_a = 0, sw_b = 0, rank = -1, atomics = 0;
    const int la = pt_nvml_nvlinks(&p->a->nvml, p->b->dev.pci_bus_id, &sw_a);
    const int lb = pt_nvml_nvlinks(&p->b->nvml, p->a->dev.pci_bus_id, &sw_b);
    const int links = la < 0 || lb < 0 ? -1 : la < lb ? la : lb;
    char what[64];

    if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, p->a->dev.index,
                                  p->b->dev.index) != cudaSuccess ||
        cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, p->a->dev.index,
                                  p->b->dev.index) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a failure of the probes: the words say unknown */
        rank = -1;
    }
    if (links > 0)
        snprintf(what, sizeof what, "NVLink x%d%s", links, sw_a || sw_b ? " through NVSwitch" : "");
    else
        snprintf(what, sizeof what, "%s",
                 links == 0 ? "no NVLink (PCIe)" : "link unknown (no NVML NVLink queries)");
    snprintf(p->link, sizeof p->link, "%s; peer access both ways; P2P rank %d; native atomics %s",
             what, rank,
             rank < 0  ? "unknown"
             : atomics ? "yes"
                       : "no");
    p->link_gbs =
        links > 0 ? links * nvlink_gbs_per_link(p->a->dev.cc_major, p->a->dev.cc_minor) : NAN;
}

/* Enables from's access to to's memory; *enabled = 1 if this call did. */
static int enable_peer(int from, int to, int *enabled /* OUT */)
{
    cudaError_t e;

    *enabled = 0;
    RK_CUDA(cudaSetDevice(from));
    e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); /* the runtime keeps it for cudaGetLastError: clear it */
        return RK_OK;
    }
    if (e != cudaSuccess)
        return rk_error(RK_ECUDA, "cannot enable GPU %d's access to GPU %d's memory: %s", from, to,
                        cudaGetErrorString(e));
    *enabled = 1;
    return RK_OK;
}

/* Frees one GPU's part of the pair and closes its session (NULL: nothing to do); disables its
 * access to GPU `other` when this call enabled it: RK_OK, or RK_ECUDA when that fails. */
static int close_side(struct probes *s, int other, int enabled, void *src, void *dst,
                      unsigned long long *bad, cudaEvent_t ev)
{
    int rc = RK_OK;
    if (!s)
        return RK_OK;
    cudaSetDevice(s->dev.index);
    cudaFree(src);
    cudaFree(dst);
    cudaFree(bad);
    if (ev)
        cudaEventDestroy(ev);
    if (enabled && cudaDeviceDisablePeerAccess(other) != cudaSuccess)
        rc = rk_error(RK_ECUDA, "cannot disable GPU %d's access to GPU %d's memory", s->dev.index,
                      other);
    probes_close(s);
    return rc;
}

/* Buffers, counters and events on one GPU of the pair, its source filled with `seed`. */
static int alloc_side(struct peer_pair *p, struct probes *s, void **src, void **dst,
                      unsigned long long **bad, cudaEvent_t *ev, uint64_t seed)
{
    RK_CUDA(cudaSetDevice(s->dev.index));
    RK_CUDA(cudaMalloc(src, p->bytes));
    RK_CUDA(cudaMalloc(dst, p->bytes));
    RK_CUDA(cudaMalloc(bad, sizeof **bad));
    RK_CUDA(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
    pt_k_fill_uniform<<<s->dev.sm_count * 8, 256, 0, s->stream>>>((double *)*src, COPY_BYTES / 8,
                                                                  seed);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaStreamSynchronize(s->stream));
    return RK_OK;
}

static int measure(struct peer_pair *p, struct probes_output *out)
{
    const int64_t l2 =
        p->a->dev.l2_bytes > p->b->dev.l2_bytes ? p->a->dev.l2_bytes : p->b->dev.l2_bytes;
    double ref_ab = NAN, ref_ba = NAN, ref_bi = NAN;
    int rc;

    /* max(1 GiB, 8x the larger L2), a whole number of MiB: the chase's chain lives in b1 */
    p->bytes = (size_t)l2 * 8 > GIB ? (size_t)l2 * 8 : GIB;
    p->bytes = (p->bytes + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    for (int i = 0; i < 2; i++) {
        const struct rk_gpu *d = i ? &p->b->dev : &p->a->dev;
        if ((size_t)d->memory_bytes < 2 * p->bytes + ((size_t)512 << 20))
            return rk_error(RK_ENOMEM,
                            "the peer probes need 2 buffers of %zu MiB on each GPU; GPU %d has "
                            "%lld MiB",
                            p->bytes >> 20, d->index, (long long)(d->memory_bytes >> 20));
    }
    if ((rc = alloc_side(p, p->a, &p->a0, &p->a1, &p->bad_a, &p->fork, SEED_A)) != RK_OK ||
        (rc = alloc_side(p, p->b, &p->b0, &p->b1, &p->bad_b, &p->join, SEED_B)) != RK_OK)
        return rc;
    RK_CUDA(cudaSetDevice(p->a->dev.index));
    describe_link(p);

    if ((rc = reference(p, AB, &ref_ab)) != RK_OK || (rc = reference(p, BA, &ref_ba)) != RK_OK ||
        (rc = reference(p, AB | BA, &ref_bi)) != RK_OK)
        return rc;
    if ((rc = bw_row(p, "bw_peer_ce_uni", BY_CE, AB, ON_SOURCE, ref_ab, out)) != RK_OK ||
        (rc = bw_row(p, "bw_peer_ce_bi", BY_CE, AB | BA, ON_SOURCE, ref_bi, out)) != RK_OK ||
        (rc = bw_row(p, "bw_peer_sm_read", BY_SM, BA, ON_DESTINATION, ref_ba, out)) != RK_OK ||
        (rc = bw_row(p, "bw_peer_sm_write", BY_SM, AB, ON_SOURCE, ref_ab, out)) != RK_OK ||
        (rc = bw_row(p, "bw_peer_sm_bi", BY_SM, AB | BA, ON_SOURCE, ref_bi, out)) != RK_OK)
        return rc;
    return chase_row(p, out);
}

int probes_peer_waived(int dev_a, int dev_b, char *why, size_t len)
{
    char tmp[320];
    int count = 0, ab = 0, ba = 0;
    cudaError_t e = cudaGetDeviceCount(&count);

    if (e != cudaSuccess || count == 0)
        snprintf(tmp, sizeof tmp, "no usable CUDA GPU (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    else if (count < 2)
        snprintf(tmp, sizeof tmp, "this machine has one CUDA GPU; the peer probes need two");
    else if (dev_a < 0 || dev_b < 0 || dev_a >= count || dev_b >= count)
        snprintf(tmp, sizeof tmp, "no CUDA device %d (this machine has %d)",
                 dev_a < 0 || dev_a >= count ? dev_a : dev_b, count);
    else if (dev_a == dev_b)
        snprintf(tmp, sizeof tmp, "GPU %d with itself: the peer probes need two GPUs", dev_a);
    else if ((e = cudaDeviceCanAccessPeer(&ab, dev_a, dev_b)) != cudaSuccess ||
             (e = cudaDeviceCanAccessPeer(&ba, dev_b, dev_a)) != cudaSuccess)
        snprintf(tmp, sizeof tmp, "cannot ask whether GPUs %d and %d reach each other: %s", dev_a,
                 dev_b, cudaGetErrorString(e));
    else if (!ab || !ba)
        snprintf(tmp, sizeof tmp,
                 "GPU %d cannot access GPU %d's memory (cudaDeviceCanAccessPeer 0): a copy "
                 "between them is staged through host memory, which bw_h2d and bw_d2h measure",
                 ab ? dev_b : dev_a, ab ? dev_a : dev_b);
    else
        tmp[0] = '\0';
    if (why && len)
        snprintf(why, len, "%s", tmp);
    return tmp[0] != '\0';
}

int probes_peer_run(int dev_a, int dev_b, int quick, struct probes_output *out)
{
    const int first = out->n_results;
    int prev = -1, en_ab = 0, en_ba = 0, rc = RK_OK, rc2;
    struct peer_pair p;

    memset(&p, 0, sizeof p);
    if (rk_interrupted)
        return RK_EINTR;
    if (probes_peer_waived(dev_a, dev_b, NULL, 0))
        return RK_OK;
    RK_CUDA(cudaGetDevice(&prev));
    p.quick = quick;
    p.reps = quick ? 5 : 10;
    if ((rc = pt_open(dev_a, quick, 0, &p.a)) != RK_OK ||
        (rc = pt_open(dev_b, quick, 0, &p.b)) != RK_OK ||
        (rc = enable_peer(dev_a, dev_b, &en_ab)) != RK_OK ||
        (rc = enable_peer(dev_b, dev_a, &en_ba)) != RK_OK)
        goto out;
    rc = measure(&p, out);
    if (rc == RK_OK && rk_interrupted)
        rc = RK_EINTR;
out:
    rc2 = close_side(p.a, dev_b, en_ab, p.a0, p.a1, p.bad_a, p.fork);
    rc = rc != RK_OK ? rc : rc2;
    rc2 = close_side(p.b, dev_a, en_ba, p.b0, p.b1, p.bad_b, p.join);
    rc = rc != RK_OK ? rc : rc2;
    if (prev >= 0)
        cudaSetDevice(prev);
    if (rc != RK_OK)
        out->n_results = first; /* nothing of a failed or interrupted pair is handed on */
    return rc;
}
