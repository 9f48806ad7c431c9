/*
 * predict.c - one prediction of one kernel's time from numbers: the three models
 * `roofkit model` stores (docs/model.md "Predictions"). It only chooses which of
 * the formulas in roofline.c and tsm2.c to apply and checks that every number the
 * model needs is known; the ceilings and analytic counts are chosen by the caller
 * (cli/model.c), which keeps this file free of names, units and JSON.
 *
 *   roofline      max(flops / peak, bytes_dram / bw_dram): the seeds' roofline
 *                 (003 Q5.A), with the seed's DRAM count
 *   hierarchical  max(flops / peak, max_i bytes_i / bw_i) over the levels whose
 *                 traffic is > 0 (extension: the roofline of every memory level)
 *   tsm2          004 §3.6.2 and Alg. 5's objective at the kernel's own (t2, t3)
 *   roofline_counters  extension: the hierarchical roofline on the bytes the
 *                 counters measured at each level (DRAM must be known)
 *   occupancy     extension: launch_s + the hierarchical roofline with the DRAM
 *                 bandwidth scaled by Little's law over the resident threads
 *                 (occupancy.c)
 *   issue         extension: occupancy, and the busiest SM's pipes (instruction
 *                 issue, FMA chains, shared and L1 wavefronts; model_pipe_time())
 *                 when they take longer than occupancy's body
 *   issue_counters  extension: issue with the warp instructions the counters measured
 *                 in place of the counted ones (in->issue required)
 *   overlap       extension: issue_counters' terms combined as a p-norm instead of
 *                 their maximum, C's last writes after them (struct model_overlap)
 *
 * Assumes: SI units; NaN means unknown. Pure: no allocation, no I/O.
 */
#include <math.h>
#include <string.h>

#include "model.h"

static const char *const kind_names[MODEL_KIND_COUNT] = {
    [MODEL_KIND_ROOFLINE] = "roofline",
    [MODEL_KIND_HIERARCHICAL] = "hierarchical",
    [MODEL_KIND_TSM2] = "tsm2",
    [MODEL_KIND_COUNTERS] = "roofline_counters",
    [MODEL_KIND_OCCUPANCY] = "occupancy",
    [MODEL_KIND_ISSUE] = "issue",
    [MODEL_KIND_ISSUE_COUNTERS] = "issue_counters",
    [MODEL_KIND_OVERLAP] = "overlap",
};

static const char *const overlap_names[MODEL_OVL_COUNT] = {
    [MODEL_OVL_DRAM] = "dram",     [MODEL_OVL_L2] = "l2",       [MODEL_OVL_L1] = "l1",
    [MODEL_OVL_SHARED] = "shared", [MODEL_OVL_FMA] = "fma",     [MODEL_OVL_ISSUE] = "issue",
    [MODEL_OVL_STAGE] = "stage",   [MODEL_OVL_CHAIN] = "chain",
};

const char *model_overlap_term_name(enum model_overlap_term t)
{
    if ((int)t < 0 || t >= MODEL_OVL_COUNT)
        return "?";
    return overlap_names[t];
}

const char *model_kind_name(enum model_kind kind)
{
    if ((int)kind < 0 || kind >= MODEL_KIND_COUNT)
        return "?";
    return kind_names[kind];
}

int model_kind_from_name(const char *name, enum model_kind *out)
{
    if (!name || !out)
        return RK_EUSAGE;
    for (int i = 0; i < MODEL_KIND_COUNT; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (enum model_kind)i;
            return RK_OK;
        }
    }
    return RK_EUSAGE;
}

static int known_positive(double x)
{
    return isfinite(x) && x > 0.0;
}

static int known_nonnegative(double x)
{
    return isfinite(x) && x >= 0.0;
}

/* Reasons a level lacks what the hierarchical roofline needs, by level. */
static const char *const no_bytes[MODEL_LEVEL_COUNT] = {"dram bytes unknown", "l2 bytes unknown",
                                                        "l1 bytes unknown", "shared bytes unknown"};
static const char *const no_bw[MODEL_LEVEL_COUNT] = {"no dram bandwidth", "no l2 bandwidth",
                                                     "no l1 bandwidth", "no shared bandwidth"};

static const char *predict_roofline(const struct model_predict_in *in, struct model_prediction *out)
{
    if (!known_nonnegative(in->flops))
        return "flops unknown";
    if (!known_positive(in->peak_flops))
        return "no compute ceiling";
    if (!known_nonnegative(in->roofline_bytes))
        return no_bytes[MODEL_LEVEL_DRAM];
    if (!known_positive(in->bandwidth[MODEL_LEVEL_DRAM]))
        return no_bw[MODEL_LEVEL_DRAM];
    if (model_roofline_time(in->flops, in->peak_flops, in->roofline_bytes,
                            in->bandwidth[MODEL_LEVEL_DRAM], &out->terms) != RK_OK)
        return "invalid roofline input";
    out->time_s = out->terms.time_s;
    out->bound = out->terms.bound;
    return NULL;
}

static const char *predict_hierarchical(const struct model_predict_in *in,
                                        struct model_prediction *out)
{
    struct model_level lv[MODEL_LEVEL_COUNT];
    int n = 0;

    if (!known_nonnegative(in->flops))
        return "flops unknown";
    if (!known_positive(in->peak_flops))
        return "no compute ceiling";
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++) {
        if (!known_nonnegative(in->level_bytes[i]))
            return no_bytes[i];
        if (in->level_bytes[i] == 0.0)
            continue; /* no traffic at this level: no term, no ceiling needed */
        if (!known_positive(in->bandwidth[i]))
            return no_bw[i];
        lv[n].id = (enum model_level_id)i;
        lv[n].bytes = in->level_bytes[i];
        lv[n].bandwidth = in->bandwidth[i];
        n++;
    }
    if (model_hierarchical_time(in->flops, in->peak_flops, lv, n, 0.0, &out->terms) != RK_OK)
        return "invalid hierarchical input";
    out->time_s = out->terms.time_s;
    out->bound = out->terms.bound;
    return NULL;
}

static const char *predict_counters(const struct model_predict_in *in, struct model_prediction *out)
{
    if (!known_nonnegative(in->level_bytes[MODEL_LEVEL_DRAM]))
        return "dram counter unknown";
    return predict_hierarchical(in, out);
}

static const char *predict_occupancy(const struct model_predict_in *in,
                                     struct model_prediction *out)
{
    struct model_predict_in scaled;
    const char *why;
    if (!known_nonnegative(in->launch_s))
        return "no launch cost";
    if (in->launch) {
        if (!in->gpu)
            return "no gpu description";
        if (model_occupancy(in->gpu, in->launch, &out->occ) != RK_OK)
            return "invalid launch or gpu for occupancy";
    } else {
        out->occ.util = 1.0; /* configuration unknown (a library's kernel): no derating */
        out->occ.bytes_in_flight = NAN;
    }
    scaled = *in;
    scaled.bandwidth[MODEL_LEVEL_DRAM] = in->bandwidth[MODEL_LEVEL_DRAM] * out->occ.util;
    if ((why = predict_hierarchical(&scaled, out)) != NULL)
        return why;
    /* the launch cost is serial with the kernel's body: it adds */
    out->time_s = in->launch_s + out->terms.time_s;
    /* a DRAM term stretched by Little's law is bound by memory latency, not bandwidth;
     * within MODEL_LATENCY_UTIL of the bandwidth (the measured curve's last few percent) it
     * stays bandwidth-bound */
    if (in->launch_s > out->terms.time_s ||
        (out->bound == MODEL_BOUND_DRAM && out->occ.util < MODEL_LATENCY_UTIL))
        out->bound = MODEL_BOUND_LATENCY;
    return NULL;
}

/*
 * The latency of one staging round: a tile element is fetched from DRAM by the first
 * block that stages it and from L2 by the others, so the share f of L2 requests that
 * miss (DRAM bytes / L2 bytes) waits the DRAM latency, the rest an L2 hit's; the round
 * then stores to shared memory and meets at a barrier, which adds stage_extra_cycles
 * (measured, when known). 0 when a latency is unknown (no staging term).
 */
static double stage_latency(const struct model_predict_in *in)
{
    double f, l2 = in->l2_latency_cycles, mem = in->gpu ? in->gpu->mem_latency_cycles : NAN;
    if (!known_positive(l2) || !known_positive(mem) ||
        !known_positive(in->level_bytes[MODEL_LEVEL_L2]))
        return 0.0;
    f = in->level_bytes[MODEL_LEVEL_DRAM] / in->level_bytes[MODEL_LEVEL_L2];
    if (!(f >= 0.0))
        return 0.0;
    if (f > 1.0)
        f = 1.0;
    return f * mem + (1.0 - f) * l2 +
           (known_positive(in->stage_extra_cycles) ? in->stage_extra_cycles : 0.0);
}

static const char *predict_issue(const struct model_predict_in *in, struct model_prediction *out)
{
    struct model_predict_in l1f;
    const char *why;
    if (in->issue && in->launch && known_nonnegative(in->issue->bytes_l2)) {
        /* L2 traffic behind L1 (the issue counts' sector reuse) replaces the seeds' count */
        l1f = *in;
        l1f.level_bytes[MODEL_LEVEL_L2] = in->issue->bytes_l2;
        in = &l1f;
    }
    why = predict_occupancy(in, out);
    if (why || !in->issue || !in->launch)
        return why;
    if (model_pipe_time(in->gpu, in->launch, &out->occ, in->issue, in->peak_flops,
                        in->bandwidth[MODEL_LEVEL_SHARED], in->bandwidth[MODEL_LEVEL_L1],
                        stage_latency(in), &out->pipes) != RK_OK)
        return "invalid input for the pipe model";
    if (out->pipes.time_s > out->terms.time_s) {
        out->time_s = in->launch_s + out->pipes.time_s;
        out->bound = in->launch_s > out->pipes.time_s ? MODEL_BOUND_LATENCY : out->pipes.bound;
    }
    if (in->issue->serial_loop > 0) {
        /* one warp's chain: its load rounds (the latency-bound DRAM term: rounds x the
         * round's latency at the launch's bytes in flight) and, serial with them, its own
         * instructions at one per cycle */
        double warps = in->launch->blocks * ceil(in->launch->threads_per_block / 32.0);
        double chain = out->terms.time_level_s[MODEL_LEVEL_DRAM] +
                       in->issue->instr_warp / warps / in->gpu->clock_hz;
        out->pipes.time_chain_s = chain;
        if (chain > out->time_s - in->launch_s) {
            out->time_s = in->launch_s + chain;
            out->bound = MODEL_BOUND_LATENCY;
        }
    }
    return NULL;
}

/*
 * overlap: the terms issue_counters took the largest of (predict_issue() filled
 * out), each in seconds, combined as their p-norm. A level's bytes and the same
 * level's wavefronts on the busiest SM are one resource: the larger of the two
 * is its term, as is the larger of flops / peak and the FMA pipe's cycles. For
 * shared memory the wavefronts alone are the term when the counts follow each
 * element load (smem_instr > 0: scalar loads, the seeds' kernels, whose widths
 * tests/kernels/sass-check.sh checks): the byte count charges a warp's 8-byte
 * broadcast 256 B, two wavefronts, where the pipe takes one (stso fp64: 4 against
 * 3 wavefronts a k step).
 */
static void combine_overlap(const struct model_predict_in *in, struct model_prediction *out)
{
    struct model_overlap *o = &out->overlap;
    const double clk = in->gpu->clock_hz;
    const double *lv = out->terms.time_level_s;
    double sum = 0.0;

    o->p = MODEL_OVERLAP_P;
    o->term_s[MODEL_OVL_DRAM] = lv[MODEL_LEVEL_DRAM];
    o->term_s[MODEL_OVL_L2] = lv[MODEL_LEVEL_L2];
    o->term_s[MODEL_OVL_L1] = fmax(lv[MODEL_LEVEL_L1], out->pipes.cycles_l1 / clk);
    o->term_s[MODEL_OVL_SHARED] = in->issue->smem_instr > 0
                                      ? out->pipes.cycles_smem / clk
                                      : fmax(lv[MODEL_LEVEL_SHARED], out->pipes.cycles_smem / clk);
    o->term_s[MODEL_OVL_FMA] = fmax(out->terms.time_compute_s, out->pipes.cycles_fma / clk);
    o->term_s[MODEL_OVL_ISSUE] = out->pipes.cycles_issue / clk;
    o->term_s[MODEL_OVL_STAGE] = out->pipes.cycles_stage / clk;
    o->term_s[MODEL_OVL_CHAIN] = out->pipes.time_chain_s;
    if (known_positive(in->dram_write_bytes) && known_positive(in->level_bytes[MODEL_LEVEL_DRAM])) {
        /* a block writes its C tile after it has computed it, and the blocks of a wave do
         * so together: the writes of the last tile a block computes are not hidden under
         * any of its work (those of earlier tiles are, under the next tile's) */
        double share = fmin(1.0, in->dram_write_bytes / in->level_bytes[MODEL_LEVEL_DRAM]);
        double tiles = in->epilogue_tiles > 1.0 ? in->epilogue_tiles : 1.0;
        o->epilogue_s = o->term_s[MODEL_OVL_DRAM] * share / tiles;
        o->term_s[MODEL_OVL_DRAM] -= o->epilogue_s;
    }
    o->largest_s = 0.0;
    for (int i = 0; i < MODEL_OVL_COUNT; i++) {
        double t = o->term_s[i];
        if (t > o->largest_s)
            o->largest_s = t;
    }
    /* scaled by the largest term: no overflow or underflow of t^p */
    for (int i = 0; i < MODEL_OVL_COUNT && o->largest_s > 0.0; i++)
        sum += pow(o->term_s[i] / o->largest_s, o->p);
    o->norm_s = o->largest_s > 0.0 ? o->largest_s * pow(sum, 1.0 / o->p) : 0.0;
    if (in->launch && out->occ.blocks_per_sm == 1 && in->issue->tiles == 0 &&
        known_positive(in->gpu->mem_latency_cycles)) {
        /* a block stages its small operand, then waits for its first loads of the large one:
         * the tcf model's start (docs/model.md, ISM2's tcf). With one block resident a SM
         * nothing on the SM hides it, so each of the busiest SM's blocks pays it; with more,
         * co-resident blocks drift apart and cover each other's, and staged tiles have their
         * latency in the stage term */
        o->start_s = ceil(in->launch->blocks / in->gpu->sms) * model_start_s(in->gpu);
    }
    out->time_s = in->launch_s + o->norm_s + o->epilogue_s + o->start_s;
    /* the bound is the one issue_counters names (the largest term's) when that resource is
     * busy for MODEL_BOUND_SATURATED of the time, else latency */
    double busy = 0.0;
    switch (out->bound) {
    case MODEL_BOUND_DRAM:
        busy = o->term_s[MODEL_OVL_DRAM] + o->epilogue_s;
        break;
    case MODEL_BOUND_L2:
        busy = o->term_s[MODEL_OVL_L2];
        break;
    case MODEL_BOUND_L1:
        busy = o->term_s[MODEL_OVL_L1];
        break;
    case MODEL_BOUND_SHARED:
        busy = o->term_s[MODEL_OVL_SHARED];
        break;
    case MODEL_BOUND_COMPUTE:
        busy = fmax(o->term_s[MODEL_OVL_FMA], o->term_s[MODEL_OVL_ISSUE]);
        break;
    default:
        busy = out->time_s; /* latency already */
    }
    if (out->time_s > 0.0 && busy < MODEL_BOUND_SATURATED * out->time_s)
        out->bound = MODEL_BOUND_LATENCY;
}

static const char *predict_overlap(const struct model_predict_in *in, struct model_prediction *out)
{
    const char *why = predict_issue(in, out);
    if (why)
        return why;
    combine_overlap(in, out);
    if (!known_positive(out->time_s))
        return "overlap time not finite";
    return NULL;
}

static const char *predict_tsm2(const struct model_predict_in *in, struct model_prediction *out)
{
    const char *why;
    if (!in->gpu || !in->tsm2)
        return "no tsm2 description";
    if ((why = model_check_gpu(in->gpu)) != NULL)
        return why;
    if ((why = model_check_tsm2(in->tsm2, 1)) != NULL)
        return why;
    if (model_tsm2_evaluate(in->gpu, in->tsm2, &out->tsm2) != RK_OK)
        return "invalid tsm2 input";
    out->time_s = out->tsm2.predicted_time_s;
    out->bound = out->tsm2.bound;
    if (!known_positive(out->time_s))
        return "tsm2 time not finite";
    return NULL;
}

int model_predict(enum model_kind kind, const struct model_predict_in *in,
                  struct model_prediction *out, const char **why)
{
    const char *reason;
    if (why)
        *why = NULL;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (!in) {
        reason = "missing input";
    } else {
        switch (kind) {
        case MODEL_KIND_ROOFLINE:
            reason = predict_roofline(in, out);
            break;
        case MODEL_KIND_HIERARCHICAL:
            reason = predict_hierarchical(in, out);
            break;
        case MODEL_KIND_TSM2:
            reason = predict_tsm2(in, out);
            break;
        case MODEL_KIND_COUNTERS:
            reason = predict_counters(in, out);
            break;
        case MODEL_KIND_OCCUPANCY:
            reason = predict_occupancy(in, out);
            break;
        case MODEL_KIND_ISSUE:
            reason = predict_issue(in, out);
            break;
        case MODEL_KIND_ISSUE_COUNTERS:
            reason =
                in->issue && in->launch ? predict_issue(in, out) : "instructions or launch unknown";
            break;
        case MODEL_KIND_OVERLAP:
            reason = in->issue && in->launch ? predict_overlap(in, out)
                                             : "instructions or launch unknown";
            break;
        default:
            reason = "unknown model";
            break;
        }
    }
    if (reason) {
        memset(out, 0, sizeof *out);
        out->kind = kind;
        if (why)
            *why = reason;
        return RK_EUSAGE;
    }
    return RK_OK;
}
