/*
 * tune.c - the model side of `roofkit tune`: mapping a parameter the model
 * chose onto the values a kernel instantiates, the regret time(choice) / time(best),
 * and a choice of ISM2's thread count factor tcf.
 *
 * 004_dab40fe45003313a.txt §5.2 chooses tcf by offline profiling and §5.1 explains
 * ISM2's shapes as latency-bound, outside §3.6's model. roofkit's tcf model (extension,
 * docs/model.md "tune") is §3.6.2's Little's law applied to the launch that a tcf gives,
 * wave by wave:
 *
 *   rows per thread  r      = tcf * rows_per_thread
 *   threads                 = ceil(m / r), blocks = ceil(threads / t1)
 *   resident blocks  R      = model_blocks_per_sm() * #SM   (registers, shared memory)
 *   in flight / thread      = min(stages, r * ceil(k / t3)) * t3 * e  [B]: a thread streams
 *                             r * ceil(k/t3) groups of t3 elements through a pipeline of
 *                             `stages` groups, so a short stream never fills it
 *   a wave of b blocks moves its share of the DRAM bytes at
 *                             bw * min(1, active SMs / #SM) * util(b blocks)
 *                             (util: model_little_util of the bytes in flight)
 *   each wave starts with      2 DRAM latencies: a block stages B, then waits for its
 *                             first group of A before anything streams. The blocks of a
 *                             wave start together and, with equal work, end together, so
 *                             the next wave's start is not hidden (ncu: the second wave of
 *                             ISM2 fp64 1e5 x 16 x 16 at tcf = 1 costs ~3,000 cycles more
 *                             than its bytes, 1.6 loaded latencies; docs/perf-notes.md)
 *   time = max(flops / peak, sum over waves of (start + bytes), bytes_l2 / bw_l2)
 *
 * Ties (within 1e-9 relative) go to the smaller tcf: more threads (model_ism2_search_tcf
 * says why). Pure: no allocation, no I/O.
 */
#include <math.h>
#include <string.h>

#include "model.h"

static int finite_pos(double x)
{
    return isfinite(x) && x > 0.0;
}

double model_start_s(const struct model_gpu *gpu)
{
    return MODEL_TCF_START_LATENCIES * gpu->mem_latency_cycles / gpu->clock_hz;
}

int model_tune_nearest(double v, const long *values, int n)
{
    int best = -1;
    double best_d = INFINITY;
    if (!values || n < 1 || !finite_pos(v))
        return -1;
    for (int i = 0; i < n; i++) {
        double d;
        if (values[i] <= 0)
            continue;
        d = fabs(log2(v) - log2((double)values[i]));
        /* ties (3 between 2 and 4 is not one: log2 3 is nearer 4) go to the smaller */
        if (d < best_d - 1e-12 || (fabs(d - best_d) <= 1e-12 && values[i] < values[best])) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

/* The largest of values[0..n) (ascending) <= v and the smallest >= v; the ends outside. */
static void neighbours(const long *values, int n, long v, long out[2])
{
    out[0] = values[0];
    out[1] = values[n - 1];
    for (int i = 0; i < n; i++) {
        if (values[i] <= v)
            out[0] = values[i];
        if (values[n - 1 - i] >= v)
            out[1] = values[n - 1 - i];
    }
}

int model_tune_map_tsm2(const struct model_gpu *gpu, const struct model_tsm2_problem *prob, int t2,
                        int t3, const long *t2s, int n2, const long *t3s, int n3, long *t2_out,
                        long *t3_out)
{
    struct model_tsm2_problem p;
    long c2[2], c3[2];
    double best = INFINITY;
    if (!gpu || !prob || !t2s || !t3s || n2 < 1 || n3 < 1 || !t2_out || !t3_out)
        return RK_EUSAGE;
    neighbours(t2s, n2, t2, c2);
    neighbours(t3s, n3, t3, c3);
    *t2_out = c2[0];
    *t3_out = c3[0];
    p = *prob;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            struct model_tsm2_eval e;
            p.t2 = (int)c2[i];
            p.t3 = (int)c3[j];
            if (model_tsm2_evaluate(gpu, &p, &e) != RK_OK)
                continue;
            if (e.predicted_time_s < best || (e.predicted_time_s == best && c3[j] > *t3_out)) {
                best = e.predicted_time_s;
                *t2_out = c2[i];
                *t3_out = c3[j];
            }
        }
    return isfinite(best) ? RK_OK : RK_EUSAGE;
}

double model_tune_regret(double time_choice_s, double time_best_s)
{
    if (!finite_pos(time_choice_s) || !finite_pos(time_best_s))
        return NAN;
    return time_choice_s / time_best_s;
}

const char *model_check_ism2_tcf(const struct model_ism2_tcf_in *in)
{
    const char *why;
    if (!in || !in->gpu)
        return "no input";
    if ((why = model_check_gpu(in->gpu)) != NULL)
        return why;
    if (in->fam != MODEL_FAM_ISM2 && in->fam != MODEL_FAM_ISM2_OPT2)
        return "family must be ism2 or ism2_opt2";
    if (in->shape.m < 1 || in->shape.n < 1 || in->shape.k < 1)
        return "m, n and k must be positive";
    if (in->shape.elem_bytes != 4 && in->shape.elem_bytes != 8)
        return "elem_bytes must be 4 or 8";
    if (in->t1 < 1 || in->t2 < 1 || in->t3 < 1)
        return "t1, t2 and t3 must be positive";
    if (in->rows_per_thread < 1 || in->stages < 1)
        return "rows_per_thread and stages must be positive";
    if (in->regs_per_thread < 0 || !(isfinite(in->smem_per_block) && in->smem_per_block >= 0))
        return "registers and shared memory must not be negative";
    return NULL;
}

/* One wave of `blocks` blocks moving `bytes`: its time at the bandwidth it can use. */
static double wave_time(const struct model_ism2_tcf_in *in, double blocks, double bif_thread,
                        double bytes, double *util)
{
    const struct model_gpu *g = in->gpu;
    double active = blocks < g->sms ? blocks : g->sms;
    double u = model_dram_util(g, blocks * in->t1 * bif_thread);
    *util = u;
    if (!finite_pos(u))
        return INFINITY;
    return bytes / (g->bandwidth * (active / g->sms) * u);
}

int model_ism2_tcf_evaluate(const struct model_ism2_tcf_in *in, long tcf,
                            struct model_ism2_tcf_eval *out)
{
    struct model_launch l;
    struct model_params mp;
    struct model_cost cost;
    double rows, threads, groups, bif, per_wave, full, rem, bytes_block, t_l2 = 0;
    int bps;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_ism2_tcf(in) != NULL || tcf < 1 || tcf > 100000000L)
        return RK_EUSAGE;
    memset(&mp, 0, sizeof mp);
    mp.t1 = in->t1;
    mp.t2 = in->t2;
    mp.t3 = in->t3;
    mp.tcf = (int)tcf;
    if (model_cost(in->fam, &in->shape, &mp, &cost) != RK_OK)
        return RK_EUSAGE;

    rows = (double)tcf * in->rows_per_thread;
    threads = ceil((double)in->shape.m / rows);
    memset(&l, 0, sizeof l);
    l.blocks = ceil(threads / in->t1);
    l.threads_per_block = in->t1;
    l.regs_per_thread = in->regs_per_thread;
    l.smem_per_block = in->smem_per_block;
    bps = model_blocks_per_sm(in->gpu, &l);
    if (bps <= 0)
        return RK_EUSAGE; /* a block does not fit on an SM */
    groups = rows * ceil((double)in->shape.k / in->t3);
    bif = (groups < in->stages ? groups : in->stages) * in->t3 * in->shape.elem_bytes;
    per_wave = (double)bps * in->gpu->sms;
    full = floor(l.blocks / per_wave);
    rem = l.blocks - full * per_wave;
    bytes_block = cost.bytes_dram_min / l.blocks;

    out->tcf = tcf;
    out->blocks = l.blocks;
    out->blocks_per_sm = bps;
    out->waves = l.blocks / per_wave;
    out->bytes_in_flight_per_thread = bif;
    out->util_full = out->util_tail = 1.0;
    out->time_dram_s = 0;
    if (full > 0)
        out->time_dram_s +=
            full * wave_time(in, per_wave, bif, per_wave * bytes_block, &out->util_full);
    if (rem > 0)
        out->time_dram_s += wave_time(in, rem, bif, rem * bytes_block, &out->util_tail);
    out->time_start_s = (full + (rem > 0 ? 1 : 0)) * model_start_s(in->gpu);
    out->time_compute_s = cost.flops / in->gpu->peak_flops;
    if (finite_pos(in->bw_l2))
        t_l2 = cost.bytes_l2 / in->bw_l2;
    out->time_l2_s = t_l2;
    out->time_s = out->time_dram_s + out->time_start_s;
    out->bound = MODEL_BOUND_DRAM;
    if ((full > 0 && out->util_full < 1) || (full == 0 && out->util_tail < 1))
        out->bound = MODEL_BOUND_LATENCY;
    if (out->time_compute_s > out->time_s) {
        out->time_s = out->time_compute_s;
        out->bound = MODEL_BOUND_COMPUTE;
    }
    if (t_l2 > out->time_s) {
        out->time_s = t_l2;
        out->bound = MODEL_BOUND_L2;
    }
    return isfinite(out->time_s) ? RK_OK : RK_EUSAGE;
}

int model_ism2_search_tcf(const struct model_ism2_tcf_in *in, long tcf_max,
                          struct model_ism2_tcf_eval *out)
{
    struct model_ism2_tcf_eval e;
    int found = 0;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_ism2_tcf(in) != NULL || tcf_max < 1 || tcf_max > 1000000L)
        return RK_EUSAGE;
    for (long tcf = 1; tcf <= tcf_max; tcf++) {
        if (model_ism2_tcf_evaluate(in, tcf, &e) != RK_OK)
            continue;
        /* ascending tcf: a tie (within the tolerance) keeps the smaller tcf, i.e. more
         * threads. The model counts DRAM bytes in flight, not instructions: with few warps
         * per scheduler the ISM2 kernel is issue-latency-bound (ncu, docs/perf-notes.md
         * "tune"), so among choices it predicts equal, more warps is the safe side. */
        if (!found || e.time_s < out->time_s * (1 - 1e-9))
            *out = e;
        found = 1;
    }
    return found ? RK_OK : RK_EUSAGE;
}
