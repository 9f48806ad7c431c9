/*
 * loaded.cu - the loaded DRAM latency: DRAM read bandwidth against the bytes in flight,
 * and by Little's law the latency a kernel must cover to saturate DRAM (probe
 * lat_dram_loaded).
 *
 * Why: the pointer chase measures a load's latency with empty queues (lat_chase_dram,
 * ~680 cycles on an H100). Near full bandwidth a load waits in the memory system's
 * queues as well, so a kernel with exactly bandwidth x unloaded latency bytes in flight
 * does not saturate DRAM. The models' Little's-law terms (docs/model.md: occupancy,
 * issue, ISM2's tcf) need the latency at the point where bandwidth stops growing
 * (docs/perf-notes.md, "model, fourth round" and "tune").
 *
 * Method: every SM runs the same number of threads (32 .. 2048, one wave, nothing
 * else resident); each thread reads D independent 16-byte elements per step (D = 1 ..
 * 8), and the next step's addresses depend on this step's data (an offset that is
 * always 0 but computed from the loaded words), so exactly D loads per thread are in
 * flight: bytes in flight = SMs x threads x D x 16. The buffer is the DRAM probes'
 * (>= 8x the L2), read once per repetition, coalesced (step s, load d of thread g reads
 * element (s D + d) G + g of G threads). For each configuration the bandwidth is the
 * median of the repetitions; probes_find_knee() finds where the curve crosses 95% of
 * the best bandwidth (interpolated between the sampled points), and the latency there,
 * bytes in flight / bandwidth, is the ceiling (cycles at the SM clock seen, and ns).
 * params keep every point.
 *
 * Verification: each thread XORs every word it read; the XOR over the grid equals the
 * closed form of the pattern's words over the range read (device.cuh), checked once
 * per configuration before it is timed.
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace
{

template <int D>
__global__ void k_loaded(const uint4 *__restrict__ a, long steps, unsigned long long never,
                         uint32_t *xor_out)
{
    const long G = (long)gridDim.x * blockDim.x;
    const long g = blockIdx.x * (long)blockDim.x + threadIdx.x;
    uint32_t x = 0;
    long off = 0; /* always 0, but known only once this step's words have arrived */
    for (long s = 0; s < steps; s++) {
        const uint4 *p = a + s * D * G + g + off;
        uint4 v[D];
#pragma unroll
        for (int d = 0; d < D; d++)
            v[d] = pt_ld_nc_na(p + d * G);
#pragma unroll
        for (int d = 0; d < D; d++)
            x ^= pt_xor4(v[d]);
        off = ((unsigned long long)x == never) ? 1 : 0; /* never: > 32 bits, cannot match */
    }
    atomicXor(xor_out, x);
}

struct loaded_job {
    const uint4 *a;
    int grid, block, depth;
    long steps;
    uint32_t *xor_out;
};

int enqueue_loaded(void *arg, cudaStream_t st)
{
    const struct loaded_job *j = (const struct loaded_job *)arg;
    const unsigned long long never = 1ull << 40;
    switch (j->depth) {
    case 1:
        k_loaded<1><<<j->grid, j->block, 0, st>>>(j->a, j->steps, never, j->xor_out);
        break;
    case 2:
        k_loaded<2><<<j->grid, j->block, 0, st>>>(j->a, j->steps, never, j->xor_out);
        break;
    case 4:
        k_loaded<4><<<j->grid, j->block, 0, st>>>(j->a, j->steps, never, j->xor_out);
        break;
    default:
        k_loaded<8><<<j->grid, j->block, 0, st>>>(j->a, j->steps, never, j->xor_out);
        break;
    }
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

} // namespace

int pt_lat_loaded(struct probes *s, int arg, struct probes_output *out)
{
    /* --quick keeps every point (the whole sweep reads ~28 x 0.4 GB, ~0.1 s): with points
     * 8x apart the crossing moved 8x between runs; it takes fewer repetitions instead. */
    static const int tps[] = {32, 64, 128, 256, 512, 1024, 2048};
    static const int depths[] = {1, 2, 4, 8};
    const int n_tps = (int)(sizeof tps / sizeof *tps),
              n_depth = (int)(sizeof depths / sizeof *depths);
    const int reps = s->quick ? 3 : 5;
    enum { MAXPTS = 7 * 4 }; /* tps x depths */
    double inflight[MAXPTS], bps[MAXPTS], ms[PT_MAX_REPS], knee_ms[PT_MAX_REPS];
    struct loaded_job cfg[MAXPTS];
    int n = 0, rc = RK_OK;
    uint32_t *d_xor = NULL;
    struct loaded_job j;
    struct probes_knee k;
    struct probes_result *r;
    (void)arg;

    if ((rc = pt_alloc_dram(s)) != RK_OK)
        return rc;
    PT_CUDA(cudaMalloc(&d_xor, sizeof *d_xor));
    pt_k_fill_pattern<<<s->dev.sm_count * 8, 256, 0, s->stream>>>((uint32_t *)s->dram[0],
                                                                  s->dram_bytes / 4, 0);
    PT_CUDA(cudaGetLastError());

    memset(&j, 0, sizeof j);
    j.a = (const uint4 *)s->dram[0];
    j.xor_out = d_xor;
    for (int ti = 0; ti < n_tps; ti++) {
        for (int di = 0; di < n_depth; di++) {
            const int per_sm =
                tps[ti] > s->dev.max_threads_per_sm ? s->dev.max_threads_per_sm : tps[ti];
            const long elems = (long)(s->dram_bytes / 16);
            uint32_t got = 0;
            j.block = per_sm < 256 ? per_sm : 256;
            j.grid = s->dev.sm_count * (per_sm / j.block);
            j.depth = depths[di];
            j.steps = elems / ((long)j.depth * j.grid * j.block);
            const long read = j.steps * j.depth * (long)j.grid * j.block; /* elements */
            if (j.steps < 1)
                continue;
            /* check: the XOR of every word read */
            PT_CUDA(cudaMemsetAsync(d_xor, 0, sizeof *d_xor, s->stream));
            if ((rc = enqueue_loaded(&j, s->stream)) != RK_OK)
                goto out;
            PT_CUDA(cudaMemcpyAsync(&got, d_xor, sizeof got, cudaMemcpyDeviceToHost, s->stream));
            PT_CUDA(cudaStreamSynchronize(s->stream));
            if (got != pt_xor_range(0, (uint64_t)read * 4)) {
                rc = rk_error(RK_EVERIFY,
                              "lat_dram_loaded: the reads of %d threads x %d loads returned "
                              "other words than the buffer holds; please report this",
                              j.grid * j.block, j.depth);
                goto out;
            }
            if ((rc = pt_time(s, enqueue_loaded, &j, 1, reps, ms)) != RK_OK)
                goto out;
            cfg[n] = j;
            inflight[n] = (double)s->dev.sm_count * per_sm * j.depth * 16.0;
            bps[n] = (double)read * 16.0 / (pt_median(ms, reps) * 1e-3);
            n++;
            if (rk_interrupted)
                goto out;
        }
    }
    if (probes_find_knee(inflight, bps, n, 0.95, &k) != RK_OK) {
        rc = rk_error(RK_EVERIFY, "lat_dram_loaded: fewer than two configurations ran");
        goto out;
    }
    /* The knee configuration again, for its repetitions (min / median / max). */
    j = cfg[k.index];
    if ((rc = pt_time(s, enqueue_loaded, &j, 1, reps, knee_ms)) != RK_OK)
        goto out;
    {
        const double hz = pt_clock_seen(s) * 1e6;
        double lo, med, hi;
        pt_stats(knee_ms, reps, &lo, &med, &hi);
        /* The value is the sweep's interpolated crossing (probes_find_knee); the knee
         * point's repetitions give its spread: min and max scale it by their ratio to
         * their median (latency = bytes in flight x time / bytes read at that point). */
        const double lat_lo = med > 0 ? k.latency_s * lo / med : k.latency_s;
        const double lat_hi = med > 0 ? k.latency_s * hi / med : k.latency_s;
        for (int unit = 0; unit < 2; unit++) {
            const double f = unit == 0 ? hz : 1e9;
            r = pt_add_result(out, unit == 0 ? "lat_dram_loaded" : "lat_dram_loaded_ns");
            if (!r) {
                rc = rk_error(RK_ENOMEM, "out of host memory");
                goto out;
            }
            r->kind = "latency";
            r->level = "dram";
            r->unit = unit == 0 ? "cycles" : "ns";
            r->value = r->median = k.latency_s * f;
            r->min = lat_lo * f;
            r->max = lat_hi * f;
            r->reps = reps;
            snprintf(r->method, sizeof r->method,
                     "DRAM read with D = 1..8 dependent-step loads of 16 B per thread, 32..2048 "
                     "threads per SM; Little's law where bandwidth crosses 95%% of the best "
                     "(interpolated in log bytes in flight): latency = bytes in flight / "
                     "bandwidth");
            struct rk_buf p = RK_BUF_INIT;
            rk_buf_puts(&p, "{\"frac\":0.95");
            pt_json_fixed(&p, "crossing_bytes", k.crossing_bytes, 0);
            pt_json_fixed(&p, "knee_inflight_bytes", k.inflight_bytes, 0);
            pt_json_fixed(&p, "knee_gbps", k.bandwidth_bps / 1e9, 1);
            pt_json_fixed(&p, "peak_gbps", k.peak_bps / 1e9, 1);
            pt_json_fixed(&p, "least_loaded_ns", k.latency_min_s * 1e9, 1);
            rk_buf_puts(&p, ",\"points\":[");
            /* [bytes in flight, GB/s] pairs, a point without both numbers left out; the
             * points that do not fit in r->params with the closing "]}" are dropped */
            for (int i = 0, first = 1; i < n; i++) {
                const size_t at = p.len;
                if (!isfinite(inflight[i]) || !isfinite(bps[i]))
                    continue;
                rk_buf_puts(&p, first ? "[" : ",[");
                pt_json_fixed(&p, NULL, inflight[i], 0);
                pt_json_fixed(&p, NULL, bps[i] / 1e9, 1);
                rk_buf_puts(&p, "]");
                if (!p.oom && p.len + 2 >= sizeof r->params) {
                    p.len = at;
                    p.s[at] = '\0';
                    break;
                }
                first = 0;
            }
            rk_buf_puts(&p, "]}");
            if ((rc = pt_set_params(r, &p)) != RK_OK)
                goto out;
        }
    }
out:
    cudaFree(d_xor);
    return rc;
}
