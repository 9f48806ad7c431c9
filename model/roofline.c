/*
 * roofline.c - the roofline and the hierarchical roofline: a kernel's time is
 * bounded below by its work at the peak rate and by its traffic at each memory
 * level's bandwidth; the largest term is the prediction and names the bound.
 * Also the seeds' own closed forms (000 §6 q, 003 Q5.A peak, 003 Q5.B q), which the
 * tests use to check the general cost formulas of cost.c.
 *
 * Assumes: values are finite doubles in SI units (FLOP, B, s); nothing here
 * allocates or prints. Invalid input gives RK_EUSAGE (or NAN for the functions that
 * return a double).
 */
#include <math.h>
#include <string.h>

#include "model.h"

static const char *const bound_names[MODEL_BOUND_COUNT] = {
    [MODEL_BOUND_COMPUTE] = "compute", [MODEL_BOUND_DRAM] = "dram",
    [MODEL_BOUND_L2] = "l2",           [MODEL_BOUND_L1] = "l1",
    [MODEL_BOUND_SHARED] = "shared",   [MODEL_BOUND_LATENCY] = "latency",
};

static const char *const level_names[MODEL_LEVEL_COUNT] = {
    [MODEL_LEVEL_DRAM] = "dram",
    [MODEL_LEVEL_L2] = "l2",
    [MODEL_LEVEL_L1] = "l1",
    [MODEL_LEVEL_SHARED] = "shared",
};

const char *model_bound_name(enum model_bound b)
{
    if ((int)b < 0 || b >= MODEL_BOUND_COUNT)
        return "?";
    return bound_names[b];
}

int model_bound_from_name(const char *name, enum model_bound *out)
{
    if (!name || !out)
        return RK_EUSAGE;
    for (int i = 0; i < MODEL_BOUND_COUNT; i++) {
        if (strcmp(name, bound_names[i]) == 0) {
            *out = (enum model_bound)i;
            return RK_OK;
        }
    }
    return RK_EUSAGE;
}

const char *model_level_name(enum model_level_id id)
{
    if ((int)id < 0 || id >= MODEL_LEVEL_COUNT)
        return "?";
    return level_names[id];
}

enum model_bound model_level_bound(enum model_level_id id)
{
    switch (id) {
    case MODEL_LEVEL_DRAM:
        return MODEL_BOUND_DRAM;
    case MODEL_LEVEL_L2:
        return MODEL_BOUND_L2;
    case MODEL_LEVEL_L1:
        return MODEL_BOUND_L1;
    case MODEL_LEVEL_SHARED:
        return MODEL_BOUND_SHARED;
    case MODEL_LEVEL_COUNT:
        break;
    }
    return MODEL_BOUND_COUNT;
}

static int positive(double x)
{
    return isfinite(x) && x > 0.0;
}

static int nonnegative(double x)
{
    return isfinite(x) && x >= 0.0;
}

/* 003_d5ffc223df97ef85.txt Q5.A: the roof is min(peak, intensity * bandwidth). */
double model_roofline_attainable(double peak_flops, double bandwidth, double intensity)
{
    if (!positive(peak_flops) || !positive(bandwidth) || !nonnegative(intensity))
        return NAN;
    return fmin(peak_flops, intensity * bandwidth);
}

/* 003 Q5.A: "(7680GFLOPS/s) / 320GB/s = 24 FLOP/Byte" - the ridge is peak / bandwidth. */
double model_ridge_point(double peak_flops, double bandwidth)
{
    if (!positive(peak_flops) || !positive(bandwidth))
        return NAN;
    return peak_flops / bandwidth;
}

int model_roofline_time(double flops, double peak_flops, double bytes, double bandwidth,
                        struct model_time *out)
{
    struct model_level dram = {MODEL_LEVEL_DRAM, bytes, bandwidth};
    return model_hierarchical_time(flops, peak_flops, &dram, 1, 0.0, out);
}

int model_hierarchical_time(double flops, double peak_flops, const struct model_level *levels,
                            int nlevels, double latency_s, struct model_time *out)
{
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (!nonnegative(flops) || !positive(peak_flops) || !nonnegative(latency_s) || nlevels < 0 ||
        nlevels > MODEL_LEVEL_COUNT || (nlevels > 0 && !levels))
        return RK_EUSAGE;

    int seen[MODEL_LEVEL_COUNT] = {0};
    for (int i = 0; i < nlevels; i++) {
        const struct model_level *l = &levels[i];
        if ((int)l->id < 0 || l->id >= MODEL_LEVEL_COUNT || seen[l->id] || !nonnegative(l->bytes) ||
            !positive(l->bandwidth))
            return RK_EUSAGE;
        seen[l->id] = 1;
    }

    out->time_compute_s = flops / peak_flops;
    out->time_s = out->time_compute_s;
    out->bound = MODEL_BOUND_COMPUTE;
    double bound_bytes = 0.0;
    for (int i = 0; i < nlevels; i++) {
        const struct model_level *l = &levels[i];
        double t = l->bytes / l->bandwidth;
        out->time_level_s[l->id] = t;
        if (t > out->time_memory_s)
            out->time_memory_s = t;
        if (t > out->time_s) { /* strictly: ties stay with compute / the earlier level */
            out->time_s = t;
            out->bound = model_level_bound(l->id);
            bound_bytes = l->bytes;
        }
    }
    if (out->bound == MODEL_BOUND_COMPUTE) {
        for (int i = 0; i < nlevels; i++)
            if (levels[i].id == MODEL_LEVEL_DRAM)
                bound_bytes = levels[i].bytes;
    }
    out->intensity = bound_bytes > 0.0 ? flops / bound_bytes : 0.0;
    if (latency_s > out->time_s) { /* extension: a floor the roofline does not see */
        out->time_s = latency_s;
        out->bound = MODEL_BOUND_LATENCY;
    }
    out->attainable_flops = out->time_s > 0.0 ? flops / out->time_s : 0.0;
    return RK_OK;
}

/*
 * 000_51b464feae8766fa.txt §6: "q = n^3 / ((n^2/p^2)(2np/b + p^2)) = n / (2n/(pb) + 1)";
 * an addition and a multiplication count as one operation, and the denominator
 * counts elements moved (n^2/p^2 threads, each loading 2np/b and storing p^2).
 */
double model_q_stmvb(double n, double b, double p)
{
    if (!positive(n) || !positive(b) || !positive(p))
        return NAN;
    return n / (2.0 * n / (p * b) + 1.0);
}

/*
 * 003_d5ffc223df97ef85.txt Q5.B: "q = (128*64*2048) / (2048*(64+128) + 128*64) =
 * 41.7959": multiply-adds of one tile over loads of its A and B strips plus the
 * store of the tile. (The seed then writes "approximately 10.449 GLOPS/word", which
 * is q/4: our reading is that it divided by the 4 bytes of a float and mislabelled
 * the unit; roofkit keeps q in multiply-adds per element.)
 */
double model_q_tiled(double tile_m, double tile_n, double n)
{
    if (!positive(tile_m) || !positive(tile_n) || !positive(n))
        return NAN;
    return (tile_m * tile_n * n) / (n * (tile_n + tile_m) + tile_m * tile_n);
}

/* 003_d5ffc223df97ef85.txt Q5.A: "40SMs * 64Cores * 2Ops/Cycle * 1.5 * 10^9 Cycles/s". */
double model_peak_flops(int sms, int cores_per_sm, double flops_per_cycle, double clock_hz)
{
    if (sms <= 0 || cores_per_sm <= 0 || !positive(flops_per_cycle) || !positive(clock_hz))
        return NAN;
    return (double)sms * (double)cores_per_sm * flops_per_cycle * clock_hz;
}
