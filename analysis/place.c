/*
 * place.c - where a measurement sits on its device's roofline (analysis.h).
 *
 * Assumes:
 *   - Times are medians. The height is quoted against the analytic (useful) flops, 2mnk
 *     for a GEMM, as the seeds do (000 §4, 003 Q3, 004 §4).
 *   - The intensity comes from counters when the measurement has them (flop_count_sp +
 *     _dp + _hp over dram_read_bytes + dram_write_bytes: what the DRAM actually saw), else
 *     from the cost formula's flops over bytes_dram; the other levels from the counters
 *     (l2_bytes, shared_bytes) in the first case and the cost formula in the second.
 *   - The roof is the roofline model's: min(the policy's compute ceiling, DRAM intensity
 *     x the policy's DRAM ceiling) (model_roofline_attainable, 003_d5ffc223df97ef85.txt
 *     Q5.A), so that the report judges a row as its roofline prediction does.
 */
#include "analysis.h"
#include "common.h"

#include <math.h>
#include <string.h>

/* The counters' flops of every CUDA-core precision; NaN when none was measured. */
static double counter_flops(const struct db_measurement_row *row)
{
    static const char *const names[] = {"flop_count_sp", "flop_count_dp", "flop_count_hp"};
    double fl = 0.0;
    int have = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const double v = analysis_metric(row, names[i]);
        if (isfinite(v)) {
            fl += v;
            have = 1;
        }
    }
    return have ? fl : NAN;
}

/* The bytes of each level: counters (counters = 1) or the cost formula's. */
static void level_bytes(const struct db_measurement_row *row, int counters, double dram,
                        double *bytes)
{
    const struct db_measurement *m = &row->m;
    bytes[MODEL_LEVEL_DRAM] = dram;
    if (counters) {
        bytes[MODEL_LEVEL_L2] = analysis_metric(row, "l2_bytes");
        bytes[MODEL_LEVEL_L1] = NAN; /* no L1 byte counter among the aliases */
        bytes[MODEL_LEVEL_SHARED] = analysis_metric(row, "shared_bytes");
    } else {
        bytes[MODEL_LEVEL_L2] = m->bytes_l2;
        bytes[MODEL_LEVEL_L1] = m->bytes_l1;
        bytes[MODEL_LEVEL_SHARED] = m->bytes_shared;
    }
}

void analysis_place(const struct analysis_device *d, const struct db_measurement_row *row,
                    struct analysis_point *p)
{
    const struct db_measurement *m = &row->m;
    const double fl = counter_flops(row);
    const double rd = analysis_metric(row, "dram_read_bytes");
    const double wr = analysis_metric(row, "dram_write_bytes");
    const double cbytes = (isfinite(rd) ? rd : 0.0) + (isfinite(wr) ? wr : 0.0);
    struct analysis_judge j;

    memset(p, 0, sizeof *p);
    p->time_s = m->time_median_ns > 0 ? m->time_median_ns * 1e-9 : NAN;
    p->flops = m->flops;
    p->flop_rate = p->flops / p->time_s;
    p->counters = isfinite(fl) && fl > 0 && (isfinite(rd) || isfinite(wr)) && cbytes > 0;
    p->flops_i = p->counters ? fl : m->flops;
    level_bytes(row, p->counters, p->counters ? cbytes : m->bytes_dram, p->bytes);
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        p->intensity[l] = p->bytes[l] > 0 ? p->flops_i / p->bytes[l] : NAN;
    p->dram_rate = p->bytes[MODEL_LEVEL_DRAM] / p->time_s;

    p->peak = p->roof = p->pct_roof = NAN;
    if (!d)
        return;
    analysis_judge_of(m, &j);
    p->peak_c = analysis_ceiling(d, &j, ANALYSIS_USE_COMPUTE);
    p->dram_c = analysis_ceiling(d, &j, ANALYSIS_USE_DRAM);
    p->peak = analysis_ceiling_si(p->peak_c);
    const double bw = analysis_ceiling_si(p->dram_c);
    const double x = p->intensity[MODEL_LEVEL_DRAM];
    if (isfinite(p->peak) && isfinite(bw) && isfinite(x)) {
        p->roof = model_roofline_attainable(p->peak, bw, x);
        p->pct_roof = 100.0 * p->flop_rate / p->roof;
        p->bound = x >= model_ridge_point(p->peak, bw) ? "compute" : "dram";
    }
}
