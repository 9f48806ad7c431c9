/*
 * tsm2.c - the TSM2 performance model of 004_dab40fe45003313a.txt §3.6: from the
 * tile sizes t2 (columns of C per pass) and t3 (elements of A fetched at a time)
 * and a GPU description it estimates SM occupancy, memory and compute utilisation
 * (Little's law), whether the kernel is compute- or memory-bound, and a time; then
 * Alg. 5 chooses t2 and t3 by gradient descent, and an exhaustive integer search
 * over the same box checks it.
 *
 * Readings of the seed (each also in docs/model.md):
 *   1. Quantities are real-valued, as the seed writes them (no floor on occupancy),
 *      which is what lets gradient descent work on them.
 *   2. Util_mem divides loads in flight (MaxOccup x t3) by bytes in flight (latency x
 *      B/cycle), as written; util_mem_bytes (extension) puts bytes on both sides.
 *   3. Both utilisations can exceed 1. In Alg. 5's Bandwidth = PeakBand x Util_mem and
 *      Compute_power = PeakPerf x Util_comp roofkit uses min(1, Util): a kernel cannot
 *      beat the peak, and without the cap the objective decreases without bound as t3
 *      grows (1 <= t3 has no upper bound), so gradient descent would never stop.
 *   4. Alg. 5 line 9 bounds t2 by k and line 12 writes Total_memory ~ n x n x k/t2:
 *      both keep the notation of the original TSM2 paper (ref. [21]: A n x n, B n x k,
 *      k skinny). In this paper's notation (A m x k, B k x n) they read t2 <= n and
 *      Total_memory ~ m x k x n/t2, the same as line 2.
 *   5. The predicted time of one (t2, t3) is Alg. 5's objective for the region it lies
 *      in: Total_memory/Bandwidth when r <= 1 (memory-bound, §3.6.2 "otherwise"), else
 *      Total_flops/Compute_power.
 *   6. Gradient descent: the seed gives start 1, step 0.1, stop threshold 1e-4 and
 *      rounding, not the unit of Time nor the gradient. roofkit minimises Time divided
 *      by its value at the start point (so the step does not depend on seconds versus
 *      cycles), takes the gradient by central differences, projects each step onto the
 *      box, and stops when a step moves (t2, t3) by less than 1e-4 (or after
 *      MODEL_GD_MAX_ITER steps). Time_1 and Time_2 are compared before rounding.
 *   7. Kept as written although inconsistent: r counts t3 x t2 multiply-adds against
 *      Peak Perf. (FLOP/s) while Alg. 5's Total_flops counts 2 FLOP per multiply-add,
 *      so at t2 = t2_threshold Time_2 is half of Time_1 (both at full utilisation).
 * Assumes a valid struct model_gpu (model_check_gpu); no allocation, no I/O.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model.h"

#define BYTES_PER_REGISTER    4.0        /* §3.6.2 bytes_per_register: 32-bit registers */
#define EXHAUSTIVE_MAX_POINTS 10000000.0 /* ~0.2 s */

const char *model_check_gpu(const struct model_gpu *g)
{
    if (!g)
        return "missing gpu description";
    if (!isfinite(g->peak_flops) || g->peak_flops <= 0)
        return "peak flops must be positive";
    if (!isfinite(g->bandwidth) || g->bandwidth <= 0)
        return "bandwidth must be positive";
    if (!isfinite(g->clock_hz) || g->clock_hz <= 0)
        return "clock must be positive";
    if (g->sms <= 0)
        return "sms must be positive";
    if (g->regs_per_sm <= 0)
        return "registers per sm must be positive";
    if (!isfinite(g->smem_per_sm) || g->smem_per_sm <= 0)
        return "shared memory per sm must be positive";
    if (g->max_threads_per_sm <= 0)
        return "max threads per sm must be positive";
    if (!isfinite(g->mem_latency_cycles) || g->mem_latency_cycles <= 0)
        return "memory latency must be positive";
    if (!isfinite(g->comp_latency_cycles) || g->comp_latency_cycles <= 0)
        return "compute latency must be positive";
    if (!isfinite(g->regs_fixed) || g->regs_fixed < 0)
        return "fixed registers (C) must not be negative";
    if (g->dram_curve_n != 0) {
        const double *b = g->dram_curve_bytes, *u = g->dram_curve_util;
        const int n = g->dram_curve_n;
        if (n < 2 || !b || !u)
            return "the dram curve needs at least two points";
        for (int i = 0; i < n; i++)
            if (!(isfinite(b[i]) && b[i] > 0 && (i == 0 || b[i] > b[i - 1]) && u[i] > 0 &&
                  u[i] <= 1 && (i == 0 || u[i] >= u[i - 1])))
                return "the dram curve's bytes must ascend and its utilisation rise to 1";
        if (u[n - 1] != 1.0)
            return "the dram curve's last utilisation must be 1";
    }
    return NULL;
}

const char *model_check_tsm2(const struct model_tsm2_problem *p, int check_tiles)
{
    if (!p)
        return "missing problem";
    if (p->m <= 0)
        return "m must be positive";
    if (p->n <= 0)
        return "n must be positive";
    if (p->k <= 0)
        return "k must be positive";
    if (p->elem_bytes != 2 && p->elem_bytes != 4 && p->elem_bytes != 8)
        return "elem_bytes must be 2, 4 or 8";
    if (p->t1 < 0)
        return "t1 must not be negative";
    if (check_tiles) {
        if (p->t2 < 1)
            return "t2 must be at least 1";
        if (p->t2 > p->n)
            return "t2 must not exceed n";
        if (p->t3 < 1)
            return "t3 must be at least 1";
        if (p->t3 > p->k)
            return "t3 must not exceed k";
    }
    return NULL;
}

double model_tsm2_t2_threshold(double peak_flops, double bandwidth, int elem_bytes)
{
    if (!isfinite(peak_flops) || peak_flops <= 0 || !isfinite(bandwidth) || bandwidth <= 0 ||
        elem_bytes <= 0)
        return NAN;
    /* 004 §3.6.2: t2^threshold = Peak Perf. / Peak Band. x bytes_per_elem. */
    return peak_flops / bandwidth * elem_bytes;
}

/* 004 §3.6.2 and the times of §3.6.3 at real-valued (t2, t3). */
static void eval_at(const struct model_gpu *g, const struct model_tsm2_problem *p, double t2,
                    double t3, struct model_tsm2_eval *o)
{
    double e = p->elem_bytes;
    double m = (double)p->m, n = (double)p->n, k = (double)p->k;

    memset(o, 0, sizeof *o);
    /* Max SM occupancy estimation */
    o->regs_per_thread = (t2 * 3.0 + t3 * 2.0) * e / BYTES_PER_REGISTER + g->regs_fixed;
    o->smem_per_thread = t2 * e;
    o->occ_hw = g->max_threads_per_sm;
    o->occ_regs = g->regs_per_sm / o->regs_per_thread;
    o->occ_smem = g->smem_per_sm / o->smem_per_thread;
    o->max_occupancy = fmin(o->occ_hw, fmin(o->occ_regs, o->occ_smem));

    /* Max memory bandwidth utilization estimation (Little's law) */
    o->concurrent_mem = o->max_occupancy * t3;
    o->throughput_max_mem = g->bandwidth / (g->sms * g->clock_hz);
    o->concurrent_max_mem = g->mem_latency_cycles * o->throughput_max_mem;
    o->util_mem = o->concurrent_mem / o->concurrent_max_mem;
    o->util_mem_bytes = o->concurrent_mem * e / o->concurrent_max_mem;

    /* Max computing power utilization estimation */
    o->concurrent_comp = o->max_occupancy * t3 * t2;
    o->throughput_max_comp = g->peak_flops / (g->sms * g->clock_hz);
    o->concurrent_max_comp = g->comp_latency_cycles * o->throughput_max_comp;
    o->util_comp = o->concurrent_comp / o->concurrent_max_comp;

    /* Determine compute- or memory-bound */
    o->time_comp = t3 * t2 / (g->peak_flops * g->sms * o->max_occupancy);
    o->time_mem = t3 * e / (g->bandwidth * g->sms * o->max_occupancy);
    o->r = o->time_comp / o->time_mem;
    o->t2_threshold = g->peak_flops / g->bandwidth * e;
    o->bound = o->r > 1.0 ? MODEL_BOUND_COMPUTE : MODEL_BOUND_DRAM;
    o->problem_bound = n > o->t2_threshold ? MODEL_BOUND_COMPUTE : MODEL_BOUND_DRAM;

    /* Alg. 5 (§3.6.3), lines 2-4 and 7-9, with reading 3 (cap) and 4 (notation) */
    o->total_memory = m * k * n / t2 * e;
    o->total_flops = m * k * n * 2.0;
    o->bandwidth_eff = g->bandwidth * fmin(1.0, o->util_mem);
    o->compute_eff = g->peak_flops * fmin(1.0, o->util_comp);
    o->time_mem_total_s = o->total_memory / o->bandwidth_eff;
    o->time_comp_total_s = o->total_flops / o->compute_eff;
    o->predicted_time_s = o->r <= 1.0 ? o->time_mem_total_s : o->time_comp_total_s;
}

int model_tsm2_evaluate(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                        struct model_tsm2_eval *out)
{
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_gpu(gpu) || model_check_tsm2(prob, 1))
        return RK_EUSAGE;
    eval_at(gpu, prob, prob->t2, prob->t3, out);
    return RK_OK;
}

int model_tsm2_default_bounds(const struct model_tsm2_problem *prob, struct model_tsm2_bounds *out)
{
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_tsm2(prob, 0))
        return RK_EUSAGE;
    long t3_max = prob->t1 > 0 && prob->t1 < prob->k ? prob->t1 : prob->k;
    /* (3 t2 + 2 t3) bytes/4 <= MODEL_MAX_REGS_PER_THREAD at t3 = 1 (t2) and t2 = 1 (t3) */
    const long regs = MODEL_MAX_REGS_PER_THREAD * 4L / prob->elem_bytes;
    const long t2_regs = (regs - 2) / 3, t3_regs = (regs - 3) / 2;
    if (prob->t1 <= 0 && t3_max > t3_regs)
        t3_max = t3_regs;
    out->t2_min = 1;
    out->t2_max = (int)(prob->n < t2_regs ? prob->n : t2_regs);
    out->t3_min = 1;
    out->t3_max = t3_max > INT_MAX ? INT_MAX : (int)t3_max;
    return RK_OK;
}

/* Validates gpu, prob and the box (defaults when bounds is NULL) into *b. */
static int search_setup(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                        const struct model_tsm2_bounds *bounds, struct model_tsm2_bounds *b)
{
    if (model_check_gpu(gpu) || model_tsm2_default_bounds(prob, b) != RK_OK)
        return RK_EUSAGE;
    if (bounds) {
        if (bounds->t2_min < 1 || bounds->t2_max < bounds->t2_min || bounds->t2_max > prob->n ||
            bounds->t3_min < 1 || bounds->t3_max < bounds->t3_min || bounds->t3_max > prob->k)
            return RK_EUSAGE;
        *b = *bounds;
    }
    return RK_OK;
}

/* Which objective of Alg. 5 a search minimises. */
enum objective { OBJ_MEMORY, OBJ_COMPUTE };

struct gd_region {
    enum objective obj;
    double t2_lo, t2_hi, t3_lo, t3_hi;
};

static double objective(const struct model_gpu *g, const struct model_tsm2_problem *p,
                        enum objective obj, double t2, double t3)
{
    struct model_tsm2_eval e;
    eval_at(g, p, t2, t3, &e);
    return obj == OBJ_MEMORY ? e.time_mem_total_s : e.time_comp_total_s;
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* d objective / d x_i by central differences, one-sided at the edges of the box. */
static double partial(const struct model_gpu *g, const struct model_tsm2_problem *p,
                      const struct gd_region *r, double scale, double t2, double t3, int which)
{
    const double h = 1e-6;
    double lo = which == 0 ? r->t2_lo : r->t3_lo, hi = which == 0 ? r->t2_hi : r->t3_hi;
    double x = which == 0 ? t2 : t3;
    if (hi - lo < h)
        return 0.0;
    double a = fmax(lo, x - h), b = fmin(hi, x + h);
    double fa = which == 0 ? objective(g, p, r->obj, a, t3) : objective(g, p, r->obj, t2, a);
    double fb = which == 0 ? objective(g, p, r->obj, b, t3) : objective(g, p, r->obj, t2, b);
    return (fb - fa) / (b - a) / scale;
}

/*
 * One "Use Gradient Descent to Optimize (t2 and t3)" of Alg. 5 over region r: start
 * at (1, 1) projected onto r, step 0.1 on the normalised objective, stop below 1e-4
 * (reading 6). *value is the objective at the unrounded result.
 */
static void gradient_descent(const struct model_gpu *g, const struct model_tsm2_problem *p,
                             const struct gd_region *r, double *t2_out, double *t3_out,
                             double *value, long *iters, int *converged)
{
    double t2 = clampd(MODEL_GD_START, r->t2_lo, r->t2_hi);
    double t3 = clampd(MODEL_GD_START, r->t3_lo, r->t3_hi);
    double scale = objective(g, p, r->obj, t2, t3);
    long it = 0;
    int done = 0;
    while (it < MODEL_GD_MAX_ITER) {
        double g2 = partial(g, p, r, scale, t2, t3, 0);
        double g3 = partial(g, p, r, scale, t2, t3, 1);
        double n2 = clampd(t2 - MODEL_GD_STEP * g2, r->t2_lo, r->t2_hi);
        double n3 = clampd(t3 - MODEL_GD_STEP * g3, r->t3_lo, r->t3_hi);
        double move = hypot(n2 - t2, n3 - t3);
        t2 = n2;
        t3 = n3;
        it++;
        if (!(move >= MODEL_GD_STOP)) { /* also stops on a NaN step */
            done = 1;
            break;
        }
    }
    *t2_out = t2;
    *t3_out = t3;
    *value = objective(g, p, r->obj, t2, t3);
    *iters += it;
    if (!done)
        *converged = 0;
}

/* Fills the parts of a choice that come from evaluating its integer (t2, t3). */
static void finish_choice(const struct model_gpu *g, const struct model_tsm2_problem *p,
                          struct model_tsm2_choice *c)
{
    struct model_tsm2_eval e;
    eval_at(g, p, c->t2, c->t3, &e);
    c->t1 = p->t1;
    c->predicted_time_s = e.predicted_time_s;
    c->bound = e.bound;
}

int model_tsm2_search_gd(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                         const struct model_tsm2_bounds *bounds, struct model_tsm2_choice *out)
{
    struct model_tsm2_bounds b;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (search_setup(gpu, prob, bounds, &b) != RK_OK)
        return RK_EUSAGE;

    double thr = model_tsm2_t2_threshold(gpu->peak_flops, gpu->bandwidth, prob->elem_bytes);
    double t2 = 0, t3 = 0, v;
    out->converged = 1;
    if ((double)prob->n <= thr) {
        /* Alg. 5 lines 1-5: memory-bound problem, Time = Total_memory / Bandwidth over
         * 1 <= t2 <= n, 1 <= t3. */
        struct gd_region r = {OBJ_MEMORY, b.t2_min, b.t2_max, b.t3_min, b.t3_max};
        gradient_descent(gpu, prob, &r, &t2, &t3, &v, &out->iterations, &out->converged);
        out->alg5_branch = 1;
    } else {
        /* Lines 7-11: Time_1 = Total_flops / Compute_power over t2_threshold <= t2 <= n;
         * lines 12-16: Time_2 = Total_memory / Bandwidth over 1 <= t2 <= t2_threshold;
         * lines 17-21: the faster of the two. A region outside the box is skipped. */
        double t2a = 0, t3a = 0, va = INFINITY, t2b = 0, t3b = 0, vb = INFINITY;
        if (thr <= b.t2_max) {
            struct gd_region r1 = {OBJ_COMPUTE, fmax(thr, b.t2_min), b.t2_max, b.t3_min, b.t3_max};
            gradient_descent(gpu, prob, &r1, &t2a, &t3a, &va, &out->iterations, &out->converged);
        }
        if (thr >= b.t2_min) {
            struct gd_region r2 = {OBJ_MEMORY, b.t2_min, fmin(thr, b.t2_max), b.t3_min, b.t3_max};
            gradient_descent(gpu, prob, &r2, &t2b, &t3b, &vb, &out->iterations, &out->converged);
        }
        if (va < vb) {
            t2 = t2a, t3 = t3a, out->alg5_branch = 2;
        } else {
            t2 = t2b, t3 = t3b, out->alg5_branch = 3;
        }
    }
    out->t2_raw = t2;
    out->t3_raw = t3;
    /* "The final t2 and t3 are rounded to the nearest integers"; the box has integer
     * corners, so rounding stays inside it. */
    out->t2 = (int)lround(t2);
    out->t3 = (int)lround(t3);
    finish_choice(gpu, prob, out);
    return RK_OK;
}

int model_tsm2_search_exhaustive(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                                 const struct model_tsm2_bounds *bounds,
                                 struct model_tsm2_choice *out)
{
    struct model_tsm2_bounds b;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (search_setup(gpu, prob, bounds, &b) != RK_OK)
        return RK_EUSAGE;
    if (((double)b.t2_max - b.t2_min + 1) * ((double)b.t3_max - b.t3_min + 1) >
        EXHAUSTIVE_MAX_POINTS)
        return RK_EUSAGE; /* pass a t1 (bounds t3) or a smaller box */

    double best = INFINITY;
    for (int t2 = b.t2_min; t2 <= b.t2_max; t2++) {
        for (int t3 = b.t3_min; t3 <= b.t3_max; t3++) {
            struct model_tsm2_eval e;
            eval_at(gpu, prob, t2, t3, &e);
            out->iterations++;
            if (e.predicted_time_s < best) {
                best = e.predicted_time_s;
                out->t2 = t2;
                out->t3 = t3;
            }
        }
    }
    out->t2_raw = out->t2;
    out->t3_raw = out->t3;
    out->converged = 1;
    finish_choice(gpu, prob, out);
    double thr = model_tsm2_t2_threshold(gpu->peak_flops, gpu->bandwidth, prob->elem_bytes);
    out->alg5_branch = (double)prob->n <= thr ? 1 : out->bound == MODEL_BOUND_COMPUTE ? 2 : 3;
    return RK_OK;
}

int model_tsm2_plan_evaluate(const struct model_gpu *gpu, const struct model_tsm2_plan_in *in,
                             struct model_tsm2_plan_eval *out)
{
    double full, rem, per_block, u_full = 1, u_rem = 1, cycles;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_gpu(gpu) || !in || !(in->bytes_dram > 0) || !(in->blocks >= 1) ||
        !(in->resident >= 1) || !(in->bif_block > 0) || !(in->fma >= 0) || !(in->lsu >= 0) ||
        !(in->instr >= in->fma) ||
        !isfinite(in->bytes_dram + in->blocks + in->resident + in->bif_block + in->instr + in->lsu))
        return RK_EUSAGE;
    full = floor(in->blocks / in->resident);
    rem = in->blocks - full * in->resident;
    per_block = in->bytes_dram / in->blocks;
    if (full > 0)
        u_full = model_dram_util(gpu, in->resident * in->bif_block);
    if (rem > 0)
        u_rem = model_dram_util(gpu, rem * in->bif_block);
    if (!(u_full > 0) || !(u_rem > 0))
        return RK_EUSAGE;
    out->waves = full + (rem > 0 ? 1 : 0);
    out->util = full > 0 ? u_full : u_rem;
    out->time_dram_s = full * in->resident * per_block / (gpu->bandwidth * u_full) +
                       rem * per_block / (gpu->bandwidth * u_rem);
    cycles = (double)gpu->sms * gpu->clock_hz;
    out->time_comp_s =
        fmax(2.0 * in->fma / gpu->peak_flops,
             fmax(in->instr / (cycles * MODEL_ISSUE_LANES), in->lsu / (cycles * MODEL_LSU_LANES)));
    out->bound = out->time_comp_s > out->time_dram_s ? MODEL_BOUND_COMPUTE
                 : out->util < 1.0                   ? MODEL_BOUND_LATENCY
                                                     : MODEL_BOUND_DRAM;
    out->time_s = fmax(out->time_dram_s, out->time_comp_s) + out->waves * model_start_s(gpu);
    return RK_OK;
}

#define F(key, unit, type, help)                                                                   \
    {                                                                                              \
#key, unit, help, offsetof(struct model_tsm2_eval, key), type                              \
    }
const struct model_field model_tsm2_fields[] = {
    F(regs_per_thread, "registers", MODEL_F_DOUBLE,
      "R_thread = (3 t2 + 2 t3) x bytes/4 + C (004 §3.6.2)"),
    F(smem_per_thread, "B", MODEL_F_DOUBLE, "S_thread = t2 x bytes (004 §3.6.2)"),
    F(occ_hw, "threads/SM", MODEL_F_DOUBLE, "HW_MAX, resident threads per SM (004 §3.6.2)"),
    F(occ_regs, "threads/SM", MODEL_F_DOUBLE, "R_SM / R_thread (004 §3.6.2)"),
    F(occ_smem, "threads/SM", MODEL_F_DOUBLE, "S_SM / S_thread (004 §3.6.2)"),
    F(max_occupancy, "threads/SM", MODEL_F_DOUBLE,
      "MaxOccup_SM = min(HW_MAX, R_SM/R_thread, S_SM/S_thread) (004 §3.6.2)"),
    F(concurrent_mem, "loads/SM", MODEL_F_DOUBLE, "Concurrent_mem = MaxOccup_SM x t3 (004 §3.6.2)"),
    F(throughput_max_mem, "B/cycle/SM", MODEL_F_DOUBLE,
      "Throughput_max_mem = Peak Band. / (#SM x core_clock) (004 §3.6.2)"),
    F(concurrent_max_mem, "B/SM", MODEL_F_DOUBLE,
      "Concurrent_max_mem = latency_mem x Throughput_max_mem, Little's law (004 §3.6.2)"),
    F(util_mem, "1", MODEL_F_DOUBLE,
      "Util_mem = Concurrent_mem / Concurrent_max_mem, as written: loads over bytes, may "
      "exceed 1 (004 §3.6.2)"),
    F(util_mem_bytes, "1", MODEL_F_DOUBLE,
      "extension: Concurrent_mem x bytes / Concurrent_max_mem, bytes over bytes; not used "
      "for the times"),
    F(concurrent_comp, "FMA/SM", MODEL_F_DOUBLE,
      "Concurrent_comp = MaxOccup_SM x t3 x t2 (004 §3.6.2)"),
    F(throughput_max_comp, "FLOP/cycle/SM", MODEL_F_DOUBLE,
      "Throughput_max_comp = Peak Perf. / (#SM x core_clock) (004 §3.6.2)"),
    F(concurrent_max_comp, "FLOP/SM", MODEL_F_DOUBLE,
      "Concurrent_max_comp = latency_comp x Throughput_max_comp, Little's law (004 §3.6.2)"),
    F(util_comp, "1", MODEL_F_DOUBLE,
      "Util_comp = Concurrent_comp / Concurrent_max_comp, may exceed 1 (004 §3.6.2)"),
    F(time_comp, "s", MODEL_F_DOUBLE,
      "time_comp = t3 x t2 / (Peak Perf. x #SM x Occupancy_SM) (004 §3.6.2)"),
    F(time_mem, "s", MODEL_F_DOUBLE,
      "time_mem = t3 x bytes / (Peak Band. x #SM x Occupancy_SM) (004 §3.6.2)"),
    F(r, "1", MODEL_F_DOUBLE,
      "r = time_comp / time_mem = t2/bytes x Peak Band./Peak Perf.; > 1 compute-bound "
      "(004 §3.6.2)"),
    F(t2_threshold, "elements", MODEL_F_DOUBLE,
      "t2_threshold = Peak Perf. / Peak Band. x bytes, r = 1 (004 §3.6.2)"),
    F(bound, "", MODEL_F_BOUND, "this t2: compute if r > 1, else dram (004 §3.6.2)"),
    F(problem_bound, "", MODEL_F_BOUND,
      "original problem: compute if n > t2_threshold, else dram (004 §3.6.3 Alg. 5 line 1)"),
    F(total_memory, "B", MODEL_F_DOUBLE, "Total_memory = m x k x n/t2 x bytes (Alg. 5 line 2)"),
    F(total_flops, "FLOP", MODEL_F_DOUBLE, "Total_flops = m x k x n x 2 (Alg. 5 line 7)"),
    F(bandwidth_eff, "B/s", MODEL_F_DOUBLE,
      "Bandwidth = Peak Band. x min(1, Util_mem) (Alg. 5 line 3; the cap is roofkit's)"),
    F(compute_eff, "FLOP/s", MODEL_F_DOUBLE,
      "Compute_power = Peak Perf. x min(1, Util_comp) (Alg. 5 line 8; the cap is roofkit's)"),
    F(time_mem_total_s, "s", MODEL_F_DOUBLE, "Time = Total_memory / Bandwidth (Alg. 5 line 4)"),
    F(time_comp_total_s, "s", MODEL_F_DOUBLE,
      "Time_1 = Total_flops / Compute_power (Alg. 5 line 9)"),
    F(predicted_time_s, "s", MODEL_F_DOUBLE,
      "Alg. 5's objective where this t2 lies: time_mem_total_s if r <= 1, else "
      "time_comp_total_s"),
};
#undef F
const int model_tsm2_nfields = (int)(sizeof model_tsm2_fields / sizeof model_tsm2_fields[0]);

double model_field_double(const struct model_field *f, const void *base)
{
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case MODEL_F_DOUBLE: {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    case MODEL_F_INT: {
        int i;
        memcpy(&i, p, sizeof i);
        return i;
    }
    case MODEL_F_BOUND: {
        enum model_bound b;
        memcpy(&b, p, sizeof b);
        return (double)b;
    }
    }
    return NAN;
}

double model_tsm2_regs_fixed(double registers, double t2, double t3, int elem_bytes)
{
    double c = registers - (3.0 * t2 + 2.0 * t3) * elem_bytes / 4.0;
    return c > 0 ? c : 0;
}
