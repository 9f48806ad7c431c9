/*
 * place.c - the operations the counters saw per pipe, and where a measurement sits on its
 * device's roofline (analysis.h).
 *
 * A point's height and its intensity must come from the same flop count, and its intensity
 * from flops and bytes of the same source, or it lands where no kernel can be: the cuBLAS
 * DGEMM that runs on the fp64 tensor cores, placed by its CUDA-core flop counter (almost
 * none) and its analytic flops (2mnk), sat a thousand times above its roof. So:
 *   - counters, when the row has flop counters and DRAM counters: the operations of the slot
 *     (pipe and precision) that took the most time at the device's peaks, over the bytes the
 *     counters saw at each level; the point is drawn under that slot's peak. These are the
 *     executed operations: a tensor instruction that pads its tile (DMMA on n = 12) counts
 *     the padding, which the useful flops (analytic, where the shape is known) do not;
 *   - else the analytic counts: the cost formula's useful flops over its bytes, judged as
 *     analysis_judge_of() says.
 * The roof of each level is min(peak, intensity x the policy's bandwidth of that level)
 * (model_roofline_attainable, 003_d5ffc223df97ef85.txt Q5.A); the DRAM level's is the roof
 * the roofline model judges the row by.
 */
#include "common.h"
#include "internal.h"

#include <math.h>
#include <string.h>

/* Each slot: its name, what it is judged as, and the aliases that count it, in order of
 * preference: the all-path counter alone, else the sum of the path counters measured. */
static const struct {
    const char *name;
    const char *precision;
    enum analysis_pipe pipe;
    const char *all;      /* counts every path; NULL: none */
    const char *paths[2]; /* wgmma, mma.sync */
} slots[ANALYSIS_SLOT_COUNT] = {
    [ANALYSIS_SLOT_FP64] = {"fp64", "fp64", ANALYSIS_PIPE_CUDA, "flop_count_dp", {NULL, NULL}},
    [ANALYSIS_SLOT_FP32] = {"fp32", "fp32", ANALYSIS_PIPE_CUDA, "flop_count_sp", {NULL, NULL}},
    [ANALYSIS_SLOT_FP16] = {"fp16", "fp16", ANALYSIS_PIPE_CUDA, "flop_count_hp", {NULL, NULL}},
    [ANALYSIS_SLOT_TENSOR_FP64] =
        {"tensor fp64", "fp64", ANALYSIS_PIPE_TENSOR, "tensor_ops_fp64", {NULL, NULL}},
    [ANALYSIS_SLOT_TENSOR_TF32] = {"tensor tf32",
                                   "tf32",
                                   ANALYSIS_PIPE_TENSOR,
                                   "tensor_ops_tf32",
                                   {"tensor_ops_tf32_wgmma", "tensor_ops_tf32_mma"}},
    [ANALYSIS_SLOT_TENSOR_FP16] = {"tensor fp16",
                                   "fp16",
                                   ANALYSIS_PIPE_TENSOR,
                                   "tensor_ops_fp16",
                                   {"tensor_ops_fp16_wgmma", "tensor_ops_fp16_mma"}},
    [ANALYSIS_SLOT_TENSOR_BF16] = {"tensor bf16",
                                   "bf16",
                                   ANALYSIS_PIPE_TENSOR,
                                   "tensor_ops_bf16",
                                   {"tensor_ops_bf16_wgmma", "tensor_ops_bf16_mma"}},
    [ANALYSIS_SLOT_TENSOR_FP8] =
        {"tensor fp8", "fp8", ANALYSIS_PIPE_TENSOR, "tensor_ops_fp8", {NULL, NULL}},
    [ANALYSIS_SLOT_TENSOR_INT8] = {"tensor int8",
                                   "int8",
                                   ANALYSIS_PIPE_TENSOR,
                                   "tensor_ops_int8",
                                   {"tensor_ops_int8_wgmma", "tensor_ops_int8_mma"}},
};

const char *analysis_slot_name(enum analysis_slot s)
{
    return s >= 0 && s < ANALYSIS_SLOT_COUNT ? slots[s].name : "?";
}

void analysis_slot_judge(enum analysis_slot s, struct analysis_judge *j)
{
    memset(j, 0, sizeof *j);
    if (s < 0 || s >= ANALYSIS_SLOT_COUNT)
        return;
    j->precision = slots[s].precision;
    j->pipe = slots[s].pipe;
}

/* A slot's operations: the all-path counter, else the sum of the path counters; NaN: none. */
static double slot_ops(const struct db_measurement_row *row, enum analysis_slot s)
{
    double v = analysis_metric(row, slots[s].all), sum = NAN;
    if (isfinite(v))
        return v;
    for (int i = 0; i < 2 && slots[s].paths[i]; i++) {
        v = analysis_metric(row, slots[s].paths[i]);
        if (isfinite(v))
            sum = isfinite(sum) ? sum + v : v;
    }
    return sum;
}

void analysis_counter_flops(const struct analysis_device *d, const struct db_measurement_row *row,
                            struct analysis_flops *f)
{
    double best = 0.0;
    int all_peaks = 1;
    memset(f, 0, sizeof *f);
    f->slot = -1;
    for (int s = 0; s < ANALYSIS_SLOT_COUNT; s++) {
        struct analysis_judge j;
        f->v[s] = slot_ops(row, (enum analysis_slot)s);
        if (!isfinite(f->v[s]))
            continue;
        f->measured++;
        f->total += f->v[s];
        analysis_slot_judge((enum analysis_slot)s, &j);
        const double peak = analysis_ceiling_si(analysis_ceiling(d, &j, ANALYSIS_USE_COMPUTE));
        all_peaks &= isfinite(peak) || f->v[s] == 0;
        if (isfinite(peak))
            f->time_s += f->v[s] / peak;
        const double weight = isfinite(peak) ? f->v[s] / peak : f->v[s];
        if (f->v[s] > 0 && (f->slot < 0 || weight > best)) {
            f->slot = s;
            best = weight;
        }
    }
    if (!all_peaks || !f->measured)
        f->time_s = NAN;
}

void analysis_counter_bytes(const struct db_measurement_row *row, double *bytes)
{
    const double rd = analysis_metric(row, "dram_read_bytes");
    const double wr = analysis_metric(row, "dram_write_bytes");
    bytes[MODEL_LEVEL_DRAM] =
        isfinite(rd) || isfinite(wr) ? (isfinite(rd) ? rd : 0.0) + (isfinite(wr) ? wr : 0.0) : NAN;
    bytes[MODEL_LEVEL_L2] = analysis_metric(row, "l2_bytes");
    bytes[MODEL_LEVEL_L1] = analysis_metric(row, "l1_bytes");
    bytes[MODEL_LEVEL_SHARED] = analysis_metric(row, "shared_bytes");
}

void analysis_place(const struct analysis_device *d, const struct db_measurement_row *row,
                    struct analysis_point *p)
{
    const struct db_measurement *m = &row->m;
    double cb[MODEL_LEVEL_COUNT];

    memset(p, 0, sizeof *p);
    p->time_s = m->time_median_ns > 0 ? m->time_median_ns * 1e-9 : NAN;
    p->flops_useful = m->flops;
    analysis_counter_flops(d, row, &p->cf);
    analysis_counter_bytes(row, cb);
    p->counters = p->cf.measured > 0 && isfinite(cb[MODEL_LEVEL_DRAM]);
    if (p->counters) {
        p->flops = p->cf.slot >= 0 ? p->cf.v[p->cf.slot] : 0.0;
        if (p->cf.slot >= 0)
            analysis_slot_judge((enum analysis_slot)p->cf.slot, &p->judge);
        else /* no operations at all: a data-movement kernel, judged on the CUDA cores */
            analysis_slot_judge(ANALYSIS_SLOT_FP32, &p->judge);
        memcpy(p->bytes, cb, sizeof cb);
    } else {
        p->flops = m->flops;
        analysis_judge_of(m, &p->judge);
        p->bytes[MODEL_LEVEL_DRAM] = m->bytes_dram;
        p->bytes[MODEL_LEVEL_L2] = m->bytes_l2;
        p->bytes[MODEL_LEVEL_L1] = m->bytes_l1;
        p->bytes[MODEL_LEVEL_SHARED] = m->bytes_shared;
    }
    p->flop_rate = p->flops / p->time_s;
    /* a DRAM bandwidth only from bytes the DRAM moved: no analytic count is one (the seeds'
     * count has no cache; docs/model.md "Analytic DRAM bytes against the counters") */
    p->dram_rate = p->counters ? p->bytes[MODEL_LEVEL_DRAM] / p->time_s : NAN;
    p->peak = p->roof = p->pct_roof = NAN;
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        p->intensity[l] = p->bytes[l] > 0 ? p->flops / p->bytes[l] : NAN;
        p->roof_level[l] = NAN;
    }
    if (!d)
        return;
    p->peak_c = analysis_ceiling(d, &p->judge, ANALYSIS_USE_COMPUTE);
    p->peak = analysis_ceiling_si(p->peak_c);
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        p->level_c[l] = analysis_ceiling(d, &p->judge, analysis_level_use((enum model_level_id)l));
        const double bw = analysis_ceiling_si(p->level_c[l]);
        if (isfinite(p->peak) && isfinite(bw) && isfinite(p->intensity[l]))
            p->roof_level[l] = model_roofline_attainable(p->peak, bw, p->intensity[l]);
    }
    p->roof = p->roof_level[MODEL_LEVEL_DRAM];
    if (isfinite(p->roof)) {
        const double bw = analysis_ceiling_si(p->level_c[MODEL_LEVEL_DRAM]);
        p->pct_roof = 100.0 * p->flop_rate / p->roof;
        p->bound =
            p->intensity[MODEL_LEVEL_DRAM] >= model_ridge_point(p->peak, bw) ? "compute" : "dram";
    }
}
