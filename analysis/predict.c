/*
 * predict.c - a stored measurement becomes one model's inputs, its prediction and the
 * prediction's details (analysis.h, docs/model.md "Which numbers each model takes").
 *
 * analysis_predict() builds the inputs in groups, each a function of its own:
 *
 *   tsm2 model            inputs_tsm2: the TSM2 problem (004_dab40fe45003313a.txt §3.6)
 *                         and its GPU from the ceiling policy
 *   every other model     inputs_roof: flops, the compute and DRAM ceilings
 *   roofline_counters     inputs_counter_levels: the bytes the counters measured
 *   hierarchical and up   inputs_cost_levels: the bytes of the cost formula per level
 *   occupancy and up      inputs_launch: the launch, the GPU's SM resources, the DRAM
 *                         curve, the bytes a thread keeps in flight
 *   issue, issue_counters inputs_issue: instruction counts (analytic or measured), the
 *   and overlap           latencies of the pipes and of a staging round
 *
 * then model_predict() (pure, model/), then the details JSON: every input, every term
 * and each ceiling used with its id, so that a prediction can be traced to the probe
 * that measured each number.
 */
#include "common.h"
#include "internal.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Everything one prediction is built from. */
struct build {
    const struct analysis_device *d;
    const struct db_measurement_row *row;
    const struct db_measurement *m;
    enum model_kind kind;
    struct analysis_judge j;
    struct analysis_flops cf;     /* the counters' operations, for a kernel roofkit did not count */
    double cb[MODEL_LEVEL_COUNT]; /* the counters' bytes of each level (analysis_counter_bytes) */
    int counted;                  /* 1: analytic flops and bytes (roofkit's kernels) */
    struct model_predict_in in;
    struct model_launch launch;
    struct model_issue_counts ic;
    struct model_gpu g;
    struct model_tsm2_problem pr;
    const struct db_ceiling *used[ANALYSIS_USE_COUNT]; /* for the details */
    const char *dram_source;                           /* for the details */
    long t2_kernel, t3_kernel;                         /* tsm2: the kernel's own tiles */
};

/* Takes the policy's ceiling for `use` into the details and returns its SI value. */
static double take(struct build *b, enum analysis_use use)
{
    b->used[use] = analysis_ceiling(b->d, &b->j, use);
    return analysis_ceiling_si(b->used[use]);
}

/* A level without bytes has no term: its ceiling was not used. */
static void drop_unused_levels(struct build *b)
{
    for (int i = MODEL_LEVEL_L2; i < MODEL_LEVEL_COUNT; i++)
        if (!(b->in.level_bytes[i] > 0))
            b->used[analysis_level_use((enum model_level_id)i)] = NULL;
}

double analysis_metric(const struct db_measurement_row *row, const char *name)
{
    for (int i = 0; i < row->n_metrics; i++) {
        const struct db_metric *x = &row->metrics[i];
        if ((x->name && strcmp(x->name, name) == 0) ||
            (x->raw_name && strcmp(x->raw_name, name) == 0))
            return x->value;
    }
    return NAN;
}

int analysis_applies(enum model_kind kind, const struct db_measurement *m)
{
    if (kind != MODEL_KIND_TSM2)
        return 1;
    return m->family && (strcmp(m->family, "tsm2") == 0 || strcmp(m->family, "ism2") == 0);
}

int analysis_elem_bytes(const char *precision)
{
    if (!precision)
        return 0;
    if (strcmp(precision, "fp64") == 0)
        return 8;
    if (strcmp(precision, "fp32") == 0 || strcmp(precision, "tf32") == 0)
        return 4;
    if (strcmp(precision, "fp16") == 0 || strcmp(precision, "bf16") == 0)
        return 2;
    return 0;
}

/* ------------------------------------------------------- registry kernels */

/* The measurement's registry kernel, or NULL (profiled kernels, renamed kernels). */
static const struct kernels_kernel *registry_kernel(const struct db_measurement *m)
{
    return m->kernel ? kernels_find(m->kernel) : NULL;
}

/* The measurement's stored parameters in registry order; RK_ENODATA when one is missing. */
static int registry_params(const struct kernels_kernel *k, const struct db_measurement *m,
                           long *p /* OUT: KERNELS_MAX_PARAMS */)
{
    for (int i = 0; i < k->n_params; i++)
        if (rk_json_long(m->params, k->params[i].name, &p[i]) != RK_OK)
            return RK_ENODATA;
    return RK_OK;
}

/*
 * The registry kernel of m with its stored parameters in the model's terms (the registry's
 * own translation, kernels_model_params) and its precision; NULL when m is not a registry
 * kernel, its precision is unknown or a parameter was not stored.
 */
static const struct kernels_kernel *registry_model_params(const struct db_measurement *m,
                                                          struct model_params *mp, int *prec)
{
    const struct kernels_kernel *k = registry_kernel(m);
    long p[KERNELS_MAX_PARAMS] = {0};
    *prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    if (!k || *prec < 0 || registry_params(k, m, p) != RK_OK)
        return NULL;
    kernels_model_params(k, *prec, p, mp);
    return k;
}

/*
 * The counts of a registry kernel (model_cost), recomputed from its shape and stored
 * parameters, so that a correction in model/cost.c reaches measurements stored before
 * it; RK_ENODATA when the kernel is not in the registry or a parameter is missing.
 */
static int registry_cost(const struct db_measurement *m, struct model_cost *cost)
{
    const struct kernels_kernel *k = registry_kernel(m);
    long p[KERNELS_MAX_PARAMS];
    struct kernels_shape sh = {(long)m->m, (long)m->n, (long)m->k};
    int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    if (!k || prec < 0 || m->m <= 0 || m->n <= 0 || m->k <= 0)
        return RK_ENODATA;
    if (registry_params(k, m, p) != RK_OK)
        return RK_ENODATA;
    return kernels_cost(k, prec, &sh, p, cost) == RK_OK ? RK_OK : RK_ENODATA;
}

/* Bytes one thread keeps in flight (kernels_bytes_in_flight); NaN when not modelled. */
static double bytes_in_flight(const struct db_measurement *m)
{
    const struct kernels_kernel *k = registry_kernel(m);
    const struct kernels_shape sh = {(long)m->m, (long)m->n, (long)m->k};
    const int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    long p[KERNELS_MAX_PARAMS] = {0};
    if (!k || prec < 0)
        return NAN;
    return kernels_bytes_in_flight(k, prec, &sh, registry_params(k, m, p) == RK_OK ? p : NULL,
                                   m->grid);
}

/*
 * Row tiles one block computes in turn before it is done (overlap's epilogue term): ISM2's
 * tcf (004 §5.2, Alg. 6 and 7), one for every other kernel and for a library's. The model
 * parameters carry tcf for ISM2's families only, and those of the entry point tsm2 are its
 * variant's (kernels_model_params), so a tsm2 row that ran ISM2 gets its tcf too: testing the
 * row's own cost family, which is TSM2 V3's for the entry point, gave it 1.
 */
static double epilogue_tiles(const struct db_measurement *m)
{
    struct model_params mp;
    int prec;
    if (!registry_model_params(m, &mp, &prec))
        return 1.0;
    return mp.tcf > 1 ? (double)mp.tcf : 1.0;
}

/* ------------------------------------------------------------- tsm2 model */

/* The kernel's own t2 and t3 (V0: 1 and 1; V1: n and 1; the others stored); a reason or NULL. */
static const char *kernel_tiles(const struct kernels_kernel *k, const struct db_measurement *m,
                                long *t2, long *t3)
{
    switch (k->cost_family) {
    case MODEL_FAM_TSM2_V0: /* Alg. 1: one output register, one element of A at a time */
        *t2 = 1;
        *t3 = 1;
        return NULL;
    case MODEL_FAM_TSM2_V1: /* Alg. 2: all n outputs in registers, one element of A */
        *t2 = (long)m->n;
        *t3 = 1;
        return NULL;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        if (rk_json_long(m->params, "t2", t2) != RK_OK ||
            rk_json_long(m->params, "t3", t3) != RK_OK)
            return "t2 or t3 unknown";
        return NULL;
    default:
        return "not a tsm2 or ism2 kernel";
    }
}

/*
 * The TSM2 problem and GPU of a tsm2/ism2 measurement (docs/model.md "TSM2 from a
 * measurement"). Returns NULL or the reason the model cannot be applied.
 */
static const char *inputs_tsm2(struct build *b)
{
    const struct db_measurement *m = b->m;
    const struct kernels_kernel *k = registry_kernel(m);
    const int e = analysis_elem_bytes(m->precision);
    const struct db_ceiling *used[ANALYSIS_USE_COUNT];
    long t1 = 0, t2 = 0, t3 = 0;
    const char *why;

    if (!k)
        return "kernel not in the registry";
    if (e != 4 && e != 8)
        return "precision not fp32 or fp64";
    if (m->m <= 0 || m->n <= 0 || m->k <= 0)
        return "shape unknown";
    if (rk_json_long(m->params, "t1", &t1) != RK_OK)
        return "t1 unknown";
    if ((why = kernel_tiles(k, m, &t2, &t3)) != NULL)
        return why;
    if (t1 < 0 || t1 > 1 << 20 || t2 < 1 || t3 < 1 || t2 > 1 << 20 || t3 > 1 << 20)
        return "t1, t2 or t3 out of range";
    b->t2_kernel = t2;
    b->t3_kernel = t3;
    /* A kernel whose tile is wider than the matrix computes min(t2, n) columns per pass. */
    b->pr = (struct model_tsm2_problem){
        .m = (long)m->m,
        .n = (long)m->n,
        .k = (long)m->k,
        .elem_bytes = e,
        .t1 = (int)t1,
        .t2 = (int)(t2 < m->n ? t2 : m->n),
        .t3 = (int)(t3 < m->k ? t3 : m->k),
    };
    analysis_tsm2_gpu(b->d, e, &b->g, used);
    for (int i = 0; i < ANALYSIS_USE_COUNT; i++)
        if (used[i])
            b->used[i] = used[i];
    if (m->registers > 0) /* C of 004 §3.6.2 by offline profiling */
        b->g.regs_fixed = model_tsm2_regs_fixed(m->registers, b->pr.t2, b->pr.t3, e);
    b->in.gpu = &b->g;
    b->in.tsm2 = &b->pr;
    if (!b->used[ANALYSIS_USE_COMPUTE])
        return e == 8 ? "no peak_fp64_fma ceiling" : "no peak_fp32_fma ceiling";
    if (!b->used[ANALYSIS_USE_DRAM])
        return "no bw_dram_read or bw_dram_copy ceiling";
    if (!b->used[ANALYSIS_USE_COMP_LAT])
        return e == 8 ? "no lat_fma_fp64 ceiling" : "no lat_fma_fp32 ceiling";
    return NULL;
}

/* ------------------------------------------------------ every other model */

/* Flops, the compute ceiling and the DRAM ceiling; the seed's DRAM count for roofline. */
static void inputs_roof(struct build *b)
{
    b->in.flops = b->m->flops;
    b->in.peak_flops = take(b, ANALYSIS_USE_COMPUTE); /* NaN: model_predict says so */
    b->in.roofline_bytes = b->m->bytes_dram;
    b->in.bandwidth[MODEL_LEVEL_DRAM] = take(b, ANALYSIS_USE_DRAM);
    b->dram_source = "analytic bytes_dram (no reuse)";
}

/*
 * A kernel roofkit did not count (a profiled program's): the operations the counters saw on
 * every pipe, at one peak that gives each pipe's operations their own peak's time (the sum of
 * operations / peak over the pipes: the arithmetic's time if the pipes did not overlap); the
 * compute ceiling named in the details is the busiest pipe's, and the row is judged as that
 * pipe (its FMA latency, its precision). No operations measured: flops unknown.
 */
static void inputs_counter_flops(struct build *b)
{
    const struct analysis_flops *f = &b->cf;
    if (f->measured == 0)
        return; /* flops stay unknown: model_predict says so */
    analysis_slot_judge(f->slot >= 0 ? (enum analysis_slot)f->slot : ANALYSIS_SLOT_FP32, &b->j);
    b->in.flops = f->total;
    b->in.peak_flops = take(b, ANALYSIS_USE_COMPUTE);
    if (f->total > 0)
        b->in.peak_flops = isfinite(f->time_s) && f->time_s > 0 ? f->total / f->time_s : NAN;
}

/* roofline_counters: the traffic the counters measured; a level they do not give has no term. */
static void inputs_counter_levels(struct build *b)
{
    const double l2 = b->cb[MODEL_LEVEL_L2], sh = b->cb[MODEL_LEVEL_SHARED];
    b->in.level_bytes[MODEL_LEVEL_DRAM] =
        analysis_metric(b->row, "dram_read_bytes") + analysis_metric(b->row, "dram_write_bytes");
    b->in.level_bytes[MODEL_LEVEL_L2] = isfinite(l2) ? l2 : 0;
    b->in.level_bytes[MODEL_LEVEL_SHARED] = isfinite(sh) ? sh : 0;
    b->dram_source = "counters dram_read_bytes + dram_write_bytes";
    b->in.bandwidth[MODEL_LEVEL_L2] = take(b, ANALYSIS_USE_L2);
    b->in.bandwidth[MODEL_LEVEL_SHARED] = take(b, ANALYSIS_USE_SHARED);
    drop_unused_levels(b);
}

/* hierarchical, occupancy, issue and up: the cost formula's bytes per level, recomputed for a
 * registry kernel (its compulsory DRAM bytes), else the analytic bytes stored with the row. */
static void inputs_cost_levels(struct build *b)
{
    struct model_cost rc;
    double *lb = b->in.level_bytes;
    if (registry_cost(b->m, &rc) == RK_OK) {
        lb[MODEL_LEVEL_DRAM] = rc.bytes_dram_min;
        lb[MODEL_LEVEL_L2] = rc.bytes_l2;
        lb[MODEL_LEVEL_L1] = rc.bytes_l1;
        lb[MODEL_LEVEL_SHARED] = rc.bytes_shared;
        b->dram_source = "compulsory (model_cost bytes_dram_min)";
    } else if (b->counted) {
        lb[MODEL_LEVEL_DRAM] = b->m->bytes_dram;
        lb[MODEL_LEVEL_L2] = b->m->bytes_l2;
        lb[MODEL_LEVEL_L1] = b->m->bytes_l1;
        lb[MODEL_LEVEL_SHARED] = b->m->bytes_shared;
    } else {
        /* no analytic counts (issue_counters and overlap only): the counters' traffic; a
         * level they did not measure has no term */
        lb[MODEL_LEVEL_DRAM] = analysis_metric(b->row, "dram_read_bytes") +
                               analysis_metric(b->row, "dram_write_bytes");
        for (int l = MODEL_LEVEL_L2; l < MODEL_LEVEL_COUNT; l++)
            lb[l] = isfinite(b->cb[l]) ? b->cb[l] : 0.0;
        b->dram_source = "counters dram_read_bytes + dram_write_bytes";
    }
    b->in.bandwidth[MODEL_LEVEL_L2] = take(b, ANALYSIS_USE_L2);
    b->in.bandwidth[MODEL_LEVEL_L1] = take(b, ANALYSIS_USE_L1);
    b->in.bandwidth[MODEL_LEVEL_SHARED] = take(b, ANALYSIS_USE_SHARED);
    drop_unused_levels(b);
}

/*
 * The SM resources, clock, DRAM bandwidth and DRAM latency of the device, and the DRAM
 * curve (bandwidth against bytes in flight, probe lat_dram_loaded) when it was measured:
 * the utilisation a launch's bytes in flight reach is read off that curve, which holds
 * both the unloaded latency of a few loads in flight and the queueing near full
 * bandwidth; without it, Little's law at the unloaded chase plateau (docs/model.md
 * "occupancy"). The chase latency also times the issue model's staging loads.
 */
static void occupancy_gpu(struct build *b)
{
    const struct analysis_device *d = b->d;
    struct model_gpu *g = &b->g;
    memset(g, 0, sizeof *g);
    if (d->ncurve >= 2) {
        g->dram_curve_bytes = d->curve_bytes;
        g->dram_curve_util = d->curve_util;
        g->dram_curve_n = d->ncurve;
    }
    g->sms = d->dev.sm_count;
    g->regs_per_sm = d->dev.regs_per_sm;
    g->smem_per_sm = d->dev.smem_per_sm_bytes;
    g->max_threads_per_sm = d->dev.max_threads_per_sm;
    g->clock_hz = d->dev.sm_clock_mhz > 0 ? d->dev.sm_clock_mhz * 1e6 : NAN;
    g->bandwidth = analysis_ceiling_si(b->used[ANALYSIS_USE_DRAM]);
    g->mem_latency_cycles = take(b, ANALYSIS_USE_MEM_LAT);
    if (!isfinite(g->mem_latency_cycles) && d->npts > 0) {
        b->used[ANALYSIS_USE_MEM_LAT] = NULL; /* no DRAM plateau: the curve's largest footprint */
        g->mem_latency_cycles = d->pts[d->npts - 1].cycles;
    }
}

/*
 * occupancy and up: the launch recorded with the measurement (a library call's is its longest
 * kernel, recorded by `roofkit run`'s counter launches, and missing when it ran without
 * counters). Returns 0 when the launch is unknown (the model then has no occupancy term).
 */
static int inputs_launch(struct build *b)
{
    const struct db_measurement *m = b->m;
    const long blocks = (long)m->grid[0] * m->grid[1] * m->grid[2];
    const int threads = m->block[0] * m->block[1] * m->block[2];
    b->in.launch_s = take(b, ANALYSIS_USE_LAUNCH);
    if (!(blocks > 0 && threads > 0))
        return 0;
    occupancy_gpu(b);
    b->launch = (struct model_launch){(double)blocks, threads, m->registers > 0 ? m->registers : 0,
                                      (double)(m->smem_static > 0 ? m->smem_static : 0) +
                                          (m->smem_dynamic > 0 ? m->smem_dynamic : 0),
                                      bytes_in_flight(m)};
    b->in.gpu = &b->g;
    b->in.launch = &b->launch;
    return 1;
}

/*
 * The instruction and wavefront counts of the issue model (docs/model.md "issue"); RK_ENODATA
 * for a kernel without them (TSM2 V1-V3, ISM2 and cuBLAS are refused by model_issue_counts).
 */
static int issue_counts(const struct db_measurement *m, struct model_issue_counts *c)
{
    struct model_params mp;
    int prec;
    struct model_shape ms = {(long)m->m, (long)m->n, (long)m->k, analysis_elem_bytes(m->precision)};
    int cols = m->block[0] > 32 ? 32 : m->block[0];
    const struct kernels_kernel *k = registry_model_params(m, &mp, &prec);
    if (!k || cols < 1)
        return RK_ENODATA;
    if (model_issue_counts(k->cost_family, &ms, &mp, cols, c) != RK_OK)
        return RK_ENODATA;
    /* the counts' shared instructions move one element each: the seeds' kernels; a kernel that
     * loads vectors issues fewer, not counted (kernels_smem_load_bytes) */
    if (kernels_smem_load_bytes(k, prec) != ms.elem_bytes)
        c->smem_instr = 0;
    return RK_OK;
}

/*
 * The counts of issue_counters and overlap: the warp instructions the counters measured
 * (inst_executed) in place of the counted ones; a kernel without analytic counts
 * (counted = 0: TSM2 V1-V3, ISM2, cuBLAS) gets counts holding only those, its FMAs
 * from the measured flop count of its precision (0 when that pipe is unused: cuBLAS
 * DGEMM runs on the tensor cores) with no chain limit (its independent chains are not
 * known). RK_ENODATA when instructions were not measured.
 */
static int measured_issue_counts(struct build *b, int counted)
{
    struct model_issue_counts *c = &b->ic;
    const double inst = analysis_metric(b->row, "inst_executed");
    if (!(isfinite(inst) && inst > 0))
        return RK_ENODATA;
    if (!counted) {
        const int e = analysis_elem_bytes(b->j.precision);
        const double fl = analysis_metric(b->row, e == 8   ? "flop_count_dp"
                                                  : e == 2 ? "flop_count_hp"
                                                           : "flop_count_sp");
        const struct kernels_kernel *k = registry_kernel(b->m);
        memset(c, 0, sizeof *c);
        c->fma_warp = isfinite(fl) && fl > 0 ? fl / (2.0 * 32.0) : 0;
        c->acc_per_thread = 0; /* unknown: no chain limit */
        c->serial_loop = k && k->cost_family == MODEL_FAM_TSM2_V1;
        c->bytes_dram = c->bytes_in_flight_per_thread = c->bytes_l2 = NAN;
    }
    c->instr_warp = inst;
    return RK_OK;
}

/*
 * overlap, for a kernel whose traffic roofkit does not count (a library's, TSM2 V1-V3, ISM2):
 * the L2 and shared-memory bytes the counters measured, where they exceed the compulsory
 * or analytic ones (cuBLAS's tiles move their operands through L2 and shared memory many
 * times; its compulsory count has them once).
 */
static void measured_levels(struct build *b)
{
    const double l2 = b->cb[MODEL_LEVEL_L2], sh = b->cb[MODEL_LEVEL_SHARED];
    if (isfinite(l2) && l2 > b->in.level_bytes[MODEL_LEVEL_L2]) {
        b->in.level_bytes[MODEL_LEVEL_L2] = l2;
        b->used[ANALYSIS_USE_L2] = analysis_ceiling(b->d, &b->j, ANALYSIS_USE_L2);
    }
    if (isfinite(sh) && sh > b->in.level_bytes[MODEL_LEVEL_SHARED]) {
        b->in.level_bytes[MODEL_LEVEL_SHARED] = sh;
        b->used[ANALYSIS_USE_SHARED] = analysis_ceiling(b->d, &b->j, ANALYSIS_USE_SHARED);
    }
}

/* issue_counters and overlap: the DRAM traffic the counters saw, as roofline_counters takes
 * it; overlap's epilogue term gets its writes. */
static void measured_dram(struct build *b)
{
    const double r = analysis_metric(b->row, "dram_read_bytes");
    const double w = analysis_metric(b->row, "dram_write_bytes");
    if (!(isfinite(r) && isfinite(w) && r + w > 0))
        return;
    b->in.level_bytes[MODEL_LEVEL_DRAM] = r + w;
    b->dram_source = "counters dram_read_bytes + dram_write_bytes";
    if (b->kind == MODEL_KIND_OVERLAP) {
        b->in.dram_write_bytes = w;
        b->in.epilogue_tiles = epilogue_tiles(b->m);
    }
}

/* The latencies the issue model's terms take: an L2 hit's and a staging round's extra. */
static void staging_latencies(struct build *b)
{
    /* H100's L2 is two partitions and addresses are spread over both, so an SM's loads find
     * half their lines in the near partition (lat_chase_l2) and half in the far one
     * (lat_chase_l2_far): the mean of the two, or the near one alone when the far one was
     * not measured; nothing when neither was */
    const double near = take(b, ANALYSIS_USE_L2_LAT), far = take(b, ANALYSIS_USE_L2_FAR_LAT);
    if (!isfinite(near)) {
        b->used[ANALYSIS_USE_L2_LAT] = b->used[ANALYSIS_USE_L2_FAR_LAT] = NULL;
        b->in.l2_latency_cycles = NAN;
    } else if (!isfinite(far)) {
        b->used[ANALYSIS_USE_L2_FAR_LAT] = NULL;
        b->in.l2_latency_cycles = near;
    } else {
        b->in.l2_latency_cycles = (near + far) / 2.0;
    }
    /* the round's store, barrier and loop (probe); absent: nothing */
    b->in.stage_extra_cycles = take(b, ANALYSIS_USE_STAGE_EXTRA);
    if (!(b->in.stage_extra_cycles >= 0))
        b->used[ANALYSIS_USE_STAGE_EXTRA] = NULL;
}

/*
 * issue, issue_counters and overlap: the instruction counts (analytic where roofkit counts
 * the kernel, measured inst_executed for the last two) and the latencies of their terms.
 * RK_ENODATA with *why when a measured count is missing.
 */
static int inputs_issue(struct build *b, const char **why)
{
    const int measured = b->kind == MODEL_KIND_ISSUE_COUNTERS || b->kind == MODEL_KIND_OVERLAP;
    int counted = issue_counts(b->m, &b->ic) == RK_OK;
    const int analytic = counted; /* roofkit counts this kernel's traffic */
    struct model_issue_counts *ic = &b->ic;

    if (measured) {
        if (measured_issue_counts(b, counted) != RK_OK) {
            *why = "inst_executed not measured";
            return RK_ENODATA;
        }
        counted = 1;
    }
    if (!counted)
        return RK_OK;               /* no pipe term: the occupancy model */
    if (isfinite(ic->bytes_dram)) { /* sector-counted DRAM bytes (TSM2 V0) */
        b->in.level_bytes[MODEL_LEVEL_DRAM] = ic->bytes_dram;
        b->dram_source = "sectors the access pattern moves (issue counts)";
    }
    if (measured)
        measured_dram(b);
    if (b->kind == MODEL_KIND_OVERLAP && !analytic)
        measured_levels(b);
    if (isfinite(ic->bytes_in_flight_per_thread)) /* the sector in flight (TSM2 V0) */
        b->launch.bytes_in_flight_per_thread = ic->bytes_in_flight_per_thread;
    if (isfinite(ic->bytes_l2)) /* sectors behind L1 (naive) */
        b->in.level_bytes[MODEL_LEVEL_L2] = ic->bytes_l2;
    if (ic->tiles > 0 && ic->stage_rounds > 0)
        staging_latencies(b);
    b->g.comp_latency_cycles = take(b, ANALYSIS_USE_COMP_LAT);
    if (ic->smem_instr > 0) { /* a shared instruction's issue cycles (probe) */
        b->g.issue_cycles_shared = take(b, ANALYSIS_USE_ISSUE_SHARED);
        if (!(b->g.issue_cycles_shared > 0))
            b->g.issue_cycles_shared = 0;
    }
    b->in.bandwidth[MODEL_LEVEL_L1] = take(b, ANALYSIS_USE_L1);
    b->in.bandwidth[MODEL_LEVEL_SHARED] = take(b, ANALYSIS_USE_SHARED);
    b->in.issue = ic;
    return RK_OK;
}

/* All the inputs of b->kind; RK_ENODATA with *why when the model cannot be applied. */
static int build_inputs(struct build *b, const char **why)
{
    const enum model_kind k = b->kind;
    const int measured =
        k == MODEL_KIND_COUNTERS || k == MODEL_KIND_ISSUE_COUNTERS || k == MODEL_KIND_OVERLAP;
    const int issue_like =
        k == MODEL_KIND_ISSUE || k == MODEL_KIND_ISSUE_COUNTERS || k == MODEL_KIND_OVERLAP;

    if (k == MODEL_KIND_TSM2)
        return (*why = inputs_tsm2(b)) != NULL ? RK_ENODATA : RK_OK;
    if (!b->counted && !measured) {
        *why = "no analytic flops or bytes (a kernel roofkit does not count): the counter "
               "models predict it";
        return RK_ENODATA;
    }
    inputs_roof(b);
    if (!b->counted)
        inputs_counter_flops(b);
    if (k == MODEL_KIND_COUNTERS)
        inputs_counter_levels(b);
    if (k == MODEL_KIND_HIERARCHICAL || k == MODEL_KIND_OCCUPANCY || issue_like)
        inputs_cost_levels(b);
    if ((k == MODEL_KIND_OCCUPANCY || issue_like) && inputs_launch(b) && issue_like)
        return inputs_issue(b, why);
    return RK_OK;
}

int analysis_predict(const struct analysis_device *d, const struct db_measurement_row *row,
                     enum model_kind kind, struct analysis_prediction *out, const char **why)
{
    struct build *b = calloc(1, sizeof *b);
    struct model_prediction p;
    int rc;

    memset(out, 0, sizeof *out);
    *why = NULL;
    if (!b)
        return rk_error(RK_ENOMEM, "out of host memory");
    b->d = d;
    b->row = row;
    b->m = &row->m;
    b->kind = kind;
    analysis_judge_of(b->m, &b->j);
    b->counted = isfinite(b->m->flops);
    analysis_counter_bytes(row, b->cb);
    if (!b->counted)
        analysis_counter_flops(d, row, &b->cf);
    rc = build_inputs(b, why);
    if (rc == RK_OK && model_predict(kind, &b->in, &p, why) != RK_OK)
        rc = RK_ENODATA;
    if (rc == RK_OK)
        rc = analysis_details(kind, &b->in, &p, b->used, b->dram_source, b->t2_kernel, b->t3_kernel,
                              &out->details);
    if (rc == RK_OK) {
        out->time_ns = p.time_s * 1e9;
        out->bound = model_bound_name(p.bound);
    }
    free(b);
    return rc;
}
