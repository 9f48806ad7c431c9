/*
 * device.c - a device of the database with its current ceilings, and the ceiling policy:
 * which of those ceilings a measurement is judged against (analysis.h).
 *
 * The policy is a table, not branches spread over the callers: for each use (compute,
 * each memory level, each latency) the ceiling names tried in order, chosen by the
 * measurement's precision and pipe where the use depends on them. `roofkit model`, `roofkit
 * tune` and `roofkit report` all take their ceilings from analysis_ceiling(), so a row's roof
 * in the report is the roof its prediction used.
 */
#include "analysis.h"
#include "common.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int analysis_device_load(struct db *db, int64_t id, struct analysis_device *out)
{
    int rc;
    memset(out, 0, sizeof *out);
    out->id = id;
    rc = db_get_device(db, id, &out->dev);
    if (rc != RK_OK) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    rc = db_latest_capture(db, DB_CAPTURE_PROBE, id, &out->probe_capture);
    if (rc == RK_ENODATA) {
        out->probe_capture = 0;
        rc = RK_OK;
    }
    if (rc == RK_OK)
        rc = db_query_ceilings(db, id, 0, &out->ceil, &out->nceil);
    if (rc == RK_OK)
        rc = db_query_latency_points(db, id, 0, &out->pts, &out->npts);
    if (rc != RK_OK) {
        analysis_device_release(out);
        return rc;
    }
    out->ncurve = analysis_dram_curve(analysis_find_ceiling(out, "lat_dram_loaded"),
                                      out->curve_bytes, out->curve_util, ANALYSIS_CURVE_MAX);
    return RK_OK;
}

int analysis_device_find_uuid(struct db *db, const char *uuid, struct analysis_device *out)
{
    struct db_device *devs = NULL;
    int64_t id = 0;
    int n = 0, rc;
    memset(out, 0, sizeof *out);
    if ((rc = db_list_devices(db, &devs, &n)) != RK_OK)
        return rc;
    for (int i = 0; i < n && uuid; i++)
        if (devs[i].uuid && strcmp(devs[i].uuid, uuid) == 0)
            id = devs[i].id;
    db_free_devices(devs, n);
    return id ? analysis_device_load(db, id, out) : RK_ENODATA;
}

void analysis_device_release(struct analysis_device *d)
{
    db_device_release(&d->dev);
    db_free_ceilings(d->ceil, d->nceil);
    free(d->pts);
    memset(d, 0, sizeof *d);
}

const struct db_ceiling *analysis_find_ceiling(const struct analysis_device *d, const char *name)
{
    for (int i = 0; d && i < d->nceil; i++)
        if (strcmp(d->ceil[i].name, name) == 0)
            return &d->ceil[i];
    return NULL;
}

/* ------------------------------------------------------------------- units */

double analysis_unit_si(double v, const char *unit)
{
    static const struct {
        const char *prefix;
        double scale;
    } prefixes[] = {
        {"", 1.0},   {"K", 1e3},     {"k", 1e3},     {"M", 1e6},     {"G", 1e9},     {"T", 1e12},
        {"P", 1e15}, {"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40},
    };
    static const char *const rates[] = {"B/s", "FLOP/s", "OP/s"};
    static const struct {
        const char *unit;
        double scale;
    } plain[] = {{"cycles", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    if (!unit)
        return NAN;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strcmp(unit, plain[i].unit) == 0)
            return v * plain[i].scale;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i].prefix);
        if (strncmp(unit, prefixes[i].prefix, pl) != 0)
            continue;
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            /* binary prefixes are for bytes only (KiB/s); decimal ones for all rates */
            if (strchr(prefixes[i].prefix, 'i') && r != 0)
                continue;
            if (strcmp(unit + pl, rates[r]) == 0)
                return v * prefixes[i].scale;
        }
    }
    return NAN;
}

double analysis_ceiling_si(const struct db_ceiling *c)
{
    double v;
    if (!c || !isfinite(c->value) || c->value <= 0)
        return NAN;
    v = analysis_unit_si(c->value, c->unit);
    return isfinite(v) && v > 0 ? v : NAN;
}

int analysis_dram_curve(const struct db_ceiling *c, double *bytes, double *util, int max)
{
    double pairs[ANALYSIS_CURVE_MAX][2];
    int np, n = 0;
    if (!c || !c->params || !bytes || !util || max < 2)
        return 0;
    np = rk_json_pairs(c->params, "points", pairs,
                       max < ANALYSIS_CURVE_MAX ? max : ANALYSIS_CURVE_MAX);
    for (int i = 0; i < np; i++) { /* [bytes, GB/s] pairs, any order */
        const double f = pairs[i][0], gbps = pairs[i][1];
        int j = 0;
        if (!(isfinite(f) && f > 0 && isfinite(gbps) && gbps > 0))
            continue;
        while (j < n && bytes[j] < f) /* sorted insert; equal byte counts keep the best */
            j++;
        if (j < n && bytes[j] == f) {
            util[j] = gbps > util[j] ? gbps : util[j];
            continue;
        }
        memmove(bytes + j + 1, bytes + j, (size_t)(n - j) * sizeof *bytes);
        memmove(util + j + 1, util + j, (size_t)(n - j) * sizeof *util);
        bytes[j] = f;
        util[j] = gbps;
        n++;
    }
    if (n < 2)
        return 0;
    for (int i = 1; i < n; i++) /* more bytes in flight never lose bandwidth: running best */
        util[i] = util[i] > util[i - 1] ? util[i] : util[i - 1];
    const double best = util[n - 1];
    for (int i = 0; i < n; i++)
        util[i] /= best;
    util[n - 1] = 1.0;
    return n;
}

/* ------------------------------------------------------- the ceiling policy */

void analysis_judge_of(const struct db_measurement *m, struct analysis_judge *j)
{
    const struct kernels_kernel *k = m->kernel ? kernels_find(m->kernel) : NULL;
    const int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    const int library = m->family && strcmp(m->family, "cublas") == 0;
    const char *p = m->precision;
    long tf32 = 0;

    memset(j, 0, sizeof *j);
    j->precision = p;
    j->pipe = ANALYSIS_PIPE_CUDA;
    if (p && library) {
        if (m->params)
            rk_json_long(m->params, "tf32", &tf32);
        /* cuBLAS DGEMM runs on the fp64 tensor cores (DMMA) where they exist; HGEMM and
         * bf16 on the tensor cores; SGEMM there only with TF32 allowed */
        if (strcmp(p, "fp64") == 0 || strcmp(p, "fp16") == 0 || strcmp(p, "bf16") == 0 ||
            strcmp(p, "tf32") == 0 || (strcmp(p, "fp32") == 0 && tf32 == 1))
            j->pipe = ANALYSIS_PIPE_TENSOR;
    }
    if (p && strcmp(p, "tf32") == 0)
        j->pipe = ANALYSIS_PIPE_TENSOR;
    j->smem_load_bytes = k && prec >= 0 ? kernels_smem_load_bytes(k, prec) : 0;
}

/* The compute ceilings of each precision and pipe, tried in order. */
static const struct {
    const char *precision;
    enum analysis_pipe pipe;
    const char *names[2];
} compute_policy[] = {
    {"fp64", ANALYSIS_PIPE_CUDA, {"peak_fp64_fma", NULL}},
    {"fp64", ANALYSIS_PIPE_TENSOR, {"peak_tensor_fp64", "peak_fp64_fma"}},
    {"fp32", ANALYSIS_PIPE_CUDA, {"peak_fp32_fma", NULL}},
    {"fp32", ANALYSIS_PIPE_TENSOR, {"peak_tensor_tf32", NULL}},
    {"tf32", ANALYSIS_PIPE_CUDA, {"peak_tensor_tf32", NULL}},
    {"tf32", ANALYSIS_PIPE_TENSOR, {"peak_tensor_tf32", NULL}},
    {"fp16", ANALYSIS_PIPE_CUDA, {"peak_fp16x2_fma", NULL}},
    {"fp16", ANALYSIS_PIPE_TENSOR, {"peak_tensor_fp16", NULL}},
    {"bf16", ANALYSIS_PIPE_CUDA, {"peak_bf16x2_fma", NULL}},
    {"bf16", ANALYSIS_PIPE_TENSOR, {"peak_tensor_bf16", NULL}},
    {"fp8", ANALYSIS_PIPE_TENSOR, {"peak_tensor_fp8", NULL}},
    {"int8", ANALYSIS_PIPE_TENSOR, {"peak_tensor_int8", NULL}},
};

/* The ceilings of every other use, tried in order. */
static const struct {
    const char *key;      /* the details JSON's name */
    const char *names[2]; /* tried in order */
} use_policy[ANALYSIS_USE_COUNT] = {
    [ANALYSIS_USE_COMPUTE] = {"compute", {NULL, NULL}}, /* compute_policy */
    /* the kernels' traffic is nearly all reads: the read ceiling, else the copy one */
    [ANALYSIS_USE_DRAM] = {"dram", {"bw_dram_read", "bw_dram_copy"}},
    [ANALYSIS_USE_L2] = {"l2", {"bw_l2_read", NULL}},
    [ANALYSIS_USE_L1] = {"l1", {"bw_l1_read", NULL}},
    [ANALYSIS_USE_SHARED] = {"shared", {"bw_shared_read", NULL}}, /* and _32 below */
    [ANALYSIS_USE_MEM_LAT] = {"mem_latency", {"lat_chase_dram", NULL}},
    [ANALYSIS_USE_COMP_LAT] = {"comp_latency", {NULL, NULL}}, /* by precision below */
    [ANALYSIS_USE_LAUNCH] = {"launch", {"launch_async", NULL}},
    [ANALYSIS_USE_L2_LAT] = {"l2_latency", {"lat_chase_l2", NULL}},
    [ANALYSIS_USE_L2_FAR_LAT] = {"l2_far_latency", {"lat_chase_l2_far", NULL}},
    [ANALYSIS_USE_ISSUE_SHARED] = {"issue_shared", {"lat_issue_shared", NULL}},
    [ANALYSIS_USE_STAGE_EXTRA] = {"stage_extra", {"lat_stage_extra", NULL}},
};

const char *analysis_use_name(enum analysis_use u)
{
    return u >= 0 && u < ANALYSIS_USE_COUNT ? use_policy[u].key : "?";
}

enum analysis_use analysis_level_use(enum model_level_id level)
{
    switch (level) {
    case MODEL_LEVEL_L2:
        return ANALYSIS_USE_L2;
    case MODEL_LEVEL_L1:
        return ANALYSIS_USE_L1;
    case MODEL_LEVEL_SHARED:
        return ANALYSIS_USE_SHARED;
    default:
        return ANALYSIS_USE_DRAM;
    }
}

static const struct db_ceiling *first_of(const struct analysis_device *d,
                                         const char *const names[2])
{
    const struct db_ceiling *c = NULL;
    for (int i = 0; i < 2 && !c && names[i]; i++)
        c = analysis_find_ceiling(d, names[i]);
    return c;
}

const struct db_ceiling *analysis_ceiling(const struct analysis_device *d,
                                          const struct analysis_judge *j, enum analysis_use use)
{
    const char *p = j ? j->precision : NULL;
    const enum analysis_pipe pipe = j ? j->pipe : ANALYSIS_PIPE_CUDA;
    const struct db_ceiling *c = NULL;

    if (!d || use < 0 || use >= ANALYSIS_USE_COUNT)
        return NULL;
    switch (use) {
    case ANALYSIS_USE_COMPUTE:
        for (size_t i = 0; p && i < sizeof compute_policy / sizeof compute_policy[0]; i++)
            if (compute_policy[i].pipe == pipe && strcmp(compute_policy[i].precision, p) == 0)
                return first_of(d, compute_policy[i].names);
        return NULL;
    case ANALYSIS_USE_COMP_LAT:
        return analysis_find_ceiling(d,
                                     p && strcmp(p, "fp64") == 0 ? "lat_fma_fp64" : "lat_fma_fp32");
    case ANALYSIS_USE_SHARED:
        /* the ceiling of the load width the kernel uses: one 4-byte element a load, else
         * 16-byte loads (8-byte ones reach the same); equal on the H100 */
        if (j && j->smem_load_bytes == 4)
            c = analysis_find_ceiling(d, "bw_shared_read_32");
        return c ? c : first_of(d, use_policy[use].names);
    default:
        return first_of(d, use_policy[use].names);
    }
}

void analysis_tsm2_gpu(const struct analysis_device *d, int elem_bytes, struct model_gpu *g,
                       const struct db_ceiling **used)
{
    const struct analysis_judge j = {elem_bytes == 8 ? "fp64" : "fp32", ANALYSIS_PIPE_CUDA, 0};
    const struct db_device *dev = &d->dev;
    for (int i = 0; i < ANALYSIS_USE_COUNT; i++)
        used[i] = NULL;
    used[ANALYSIS_USE_COMPUTE] = analysis_ceiling(d, &j, ANALYSIS_USE_COMPUTE);
    used[ANALYSIS_USE_DRAM] = analysis_ceiling(d, &j, ANALYSIS_USE_DRAM);
    used[ANALYSIS_USE_MEM_LAT] = analysis_ceiling(d, &j, ANALYSIS_USE_MEM_LAT);
    used[ANALYSIS_USE_COMP_LAT] = analysis_ceiling(d, &j, ANALYSIS_USE_COMP_LAT);
    memset(g, 0, sizeof *g);
    g->peak_flops = analysis_ceiling_si(used[ANALYSIS_USE_COMPUTE]);
    g->bandwidth = analysis_ceiling_si(used[ANALYSIS_USE_DRAM]);
    g->clock_hz = dev->sm_clock_mhz > 0        ? dev->sm_clock_mhz * 1e6
                  : used[ANALYSIS_USE_COMPUTE] ? used[ANALYSIS_USE_COMPUTE]->sm_clock_mhz * 1e6
                                               : NAN;
    g->sms = dev->sm_count;
    g->regs_per_sm = dev->regs_per_sm;
    g->smem_per_sm = dev->smem_per_sm_bytes;
    g->max_threads_per_sm = dev->max_threads_per_sm;
    g->mem_latency_cycles = analysis_ceiling_si(used[ANALYSIS_USE_MEM_LAT]);
    if (!isfinite(g->mem_latency_cycles) && d->npts > 0) {
        /* no DRAM plateau: the curve's largest footprint is past the L2 */
        used[ANALYSIS_USE_MEM_LAT] = NULL;
        g->mem_latency_cycles = d->pts[d->npts - 1].cycles;
    }
    g->comp_latency_cycles = analysis_ceiling_si(used[ANALYSIS_USE_COMP_LAT]);
}
