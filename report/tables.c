/*
 * tables.c - the report's tables, built once from struct rp_data and printed by
 * the HTML, Markdown and CSV printers:
 *
 *   devices                 each device as the database describes it
 *   ceilings                measured ceilings with the datasheet value and their ratio
 *   measurements-<family>   one row per measurement: shape, parameters, time, GFLOP/s,
 *                           GB/s, intensity, % of roof, each model's predicted time,
 *                           error and bound
 *   accuracy                each model per family: mean / median / worst absolute
 *                           percentage error (model_mape, model_median_ape, max)
 *   tsm2-threshold          004_dab40fe45003313a.txt §3.6.2: t2_threshold =
 *                           Peak Perf. / Peak Band. * bytes, from measured ceilings
 *   tsm2-parameters         004 §3.6.3 Alg. 5 (gradient descent as written and the
 *                           exhaustive search) for each TSM2 shape measured, beside
 *                           the fastest parameters measured
 *
 * and, from gpus.c, the section of several GPUs, hosts and ranks when the database holds
 * them (captures with their origin, ceilings across GPUs, GPU pairs, kernel time per rank),
 * and, from overview.c, each device's kernels that take the most time (the overview).
 *
 * Each row of a measurement table carries the HTML id m-<measurement id>: every point of every
 * chart links to it.
 *
 * Assumes: the measurement tables keep the database's order (by id) and print
 * its numbers unchanged in CSV (17 digits), so CI can compare them with the
 * database; derived columns are computed in load.c only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

struct rp_table *rp_tabs_new(struct rp_tabs *ts, const char *id, const char *title, int section)
{
    if (ts->n == ts->cap) {
        int cap = ts->cap ? 2 * ts->cap : 16;
        struct rp_table *p = realloc(ts->t, (size_t)cap * sizeof *p);
        if (!p) {
            ts->oom = 1;
            return NULL;
        }
        ts->t = p;
        ts->cap = cap;
    }
    struct rp_table *t = &ts->t[ts->n++];
    rp_table_init(t, id, title, section);
    return t;
}

static void cols(struct rp_table *t, const char *const *names)
{
    for (; *names; names++)
        rp_table_col(t, *names);
}

static void cell_opt_int(struct rp_table *t, long long v)
{
    if (v)
        rp_cell_int(t, v);
    else
        rp_cell_str(t, "");
}

/* ------------------------------------------------------ devices, ceilings */

static void devices_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"device",
                                    "name",
                                    "uuid",
                                    "compute capability",
                                    "SMs",
                                    "SM clock [MHz]",
                                    "memory clock [MHz]",
                                    "bus width [bit]",
                                    "L2 [bytes]",
                                    "memory [bytes]",
                                    "shared memory per SM [bytes]",
                                    "registers per SM",
                                    "max threads per SM",
                                    "driver",
                                    "runtime",
                                    "host",
                                    "measurements",
                                    NULL};
    struct rp_table *t = rp_tabs_new(ts, "devices", "Devices", RP_SEC_DEVICE);
    if (!t)
        return;
    cols(t, c);
    if (d->ndevs == 0)
        snprintf(t->note, sizeof t->note,
                 "The database holds no device: run 'roofkit probe' on a GPU machine.");
    for (int i = 0; i < d->ndevs; i++) {
        const struct db_device *v = &d->devs[i].a.dev;
        char cc[32], drv[32], rt[32];
        snprintf(cc, sizeof cc, "%d.%d", v->cc_major, v->cc_minor);
        snprintf(drv, sizeof drv, "%d.%d", v->driver_version / 1000, v->driver_version % 1000 / 10);
        snprintf(rt, sizeof rt, "%d.%d", v->runtime_version / 1000, v->runtime_version % 1000 / 10);
        rp_cell_int(t, v->id);
        rp_cell_str(t, v->name);
        rp_cell_str(t, v->uuid);
        rp_cell_str(t, cc);
        cell_opt_int(t, v->sm_count);
        cell_opt_int(t, v->sm_clock_mhz);
        cell_opt_int(t, v->mem_clock_mhz);
        cell_opt_int(t, v->bus_width_bits);
        cell_opt_int(t, v->l2_bytes);
        cell_opt_int(t, v->memory_bytes);
        cell_opt_int(t, v->smem_per_sm_bytes);
        cell_opt_int(t, v->regs_per_sm);
        cell_opt_int(t, v->max_threads_per_sm);
        rp_cell_str(t, v->driver_version ? drv : "");
        rp_cell_str(t, v->runtime_version ? rt : "");
        rp_cell_str(t, v->host);
        rp_cell_int(t, d->devs[i].nmeas);
    }
}

static void ceilings_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"device",
                                    "ceiling",
                                    "kind",
                                    "level",
                                    "precision",
                                    "measured",
                                    "unit",
                                    "theoretical",
                                    "measured / theoretical",
                                    "min",
                                    "max",
                                    "repetitions",
                                    "SM clock [MHz]",
                                    "method",
                                    NULL};
    struct rp_table *t =
        rp_tabs_new(ts, "ceilings", "Ceilings: measured and datasheet", RP_SEC_DEVICE);
    int n = 0, peer = d->npeer_names > 0; /* a column for the other GPU of a pair, when any */
    if (!t)
        return;
    for (int k = 0; c[k]; k++) {
        rp_table_col(t, c[k]);
        if (peer && k == 1)
            rp_table_col(t, "peer device");
    }
    for (int i = 0; i < d->ndevs; i++) {
        const struct rp_dev *v = &d->devs[i];
        for (int j = 0; j < v->a.nceil; j++) {
            const struct db_ceiling *x = &v->a.ceil[j];
            double ratio =
                (isfinite(x->theoretical) && x->theoretical > 0) ? x->value / x->theoretical : NAN;
            rp_cell_int(t, v->a.dev.id);
            rp_cell_str(t, x->name);
            if (peer)
                cell_opt_int(t, x->peer_device_id);
            rp_cell_str(t, x->kind);
            rp_cell_str(t, x->level);
            rp_cell_str(t, x->precision);
            rp_cell_num(t, x->value);
            rp_cell_str(t, x->unit);
            rp_cell_num(t, x->theoretical);
            rp_cell_num(t, ratio);
            rp_cell_num(t, x->min);
            rp_cell_num(t, x->max);
            cell_opt_int(t, x->reps);
            rp_cell_num(t, x->sm_clock_mhz);
            rp_cell_str(t, x->method);
            n++;
        }
    }
    snprintf(t->note, sizeof t->note, "%s",
             n ? (peer ? "Each device's current ceilings (the newest probe of each). The ratio is "
                         "measured over the datasheet formula at the clock seen during the probe. "
                         "A ceiling of a pair of GPUs names the other one (peer device); the "
                         "matrices under \"Several GPUs, hosts and ranks\" set them side by side."
                       : "Each device's current ceilings (the newest probe of each). The ratio is "
                         "measured over the datasheet formula at the clock seen during the probe.")
               : "No ceilings in the database: run 'roofkit probe' to measure them. Without "
                 "them there is no roof: the roofline chart and the % of roof column stay "
                 "empty.");
}

/* ----------------------------------------------------------- measurements */

/* x's prediction of `model` when it has a time, else NULL: a model that cannot be applied to a
 * row stores its reason in a prediction without a time, which is no prediction. */
static const struct db_prediction *timed_prediction(const struct rp_meas *x, const char *model)
{
    const struct db_prediction *p = rp_prediction(x, model);
    return p && isfinite(p->predicted_time_ns) ? p : NULL;
}

/* Does any measurement of `family` have a prediction of `model`? */
static int family_has_model(const struct rp_data *d, const char *family, const char *model)
{
    for (int i = 0; i < d->nrows; i++)
        if (strcmp(rp_family(&d->meas[i]), family) == 0 && timed_prediction(&d->meas[i], model))
            return 1;
    return 0;
}

/* The pipe whose operations a row's point counts: the counters' busiest slot ("none" when they
 * saw no operations), else the precision and pipe the row is judged on ("fp64 tensor"). */
const char *rp_pipe_name(const struct rp_meas *x, char *buf, size_t len)
{
    const struct analysis_point *p = &x->pt;
    if (p->counters)
        return p->cf.slot >= 0 ? analysis_slot_name((enum analysis_slot)p->cf.slot) : "none";
    if (!p->judge.precision)
        return "";
    snprintf(buf, len, "%s %s", p->judge.precision,
             p->judge.pipe == ANALYSIS_PIPE_TENSOR ? "tensor" : "cuda");
    return buf;
}

/* x against the measurement j that judges it (its cuBLAS reference or its floor): j's median
 * time over x's and j's id; two empty cells when there is none. */
static void judge_cells(struct rp_table *t, const struct rp_meas *x, const struct rp_meas *j)
{
    rp_cell_num(t, j ? j->pt.time_s / x->pt.time_s : NAN);
    if (j)
        rp_cell_int(t, j->row->m.id);
    else
        rp_cell_str(t, "");
}

static void measurement_table(const struct rp_data *d, const char *family, struct rp_tabs *ts)
{
    static const char *const c[] = {"id",
                                    "device",
                                    "kernel",
                                    "precision",
                                    "m",
                                    "n",
                                    "k",
                                    "parameters",
                                    "cache",
                                    "verified",
                                    "repetitions",
                                    "time median [ns]",
                                    "time min [ns]",
                                    "GFLOP/s",
                                    "executed GFLOP/s",
                                    "pipe",
                                    "GB/s",
                                    "intensity [FLOP/B]",
                                    "intensity from",
                                    "% of roof",
                                    NULL};
    char id[96], title[160], name[160];
    int *models = NULL, nm = 0;
    /* TSM2/ISM2 and the cuBLAS calls they are compared with: effective bandwidth (A, B, C
     * once, 004 Fig. 5 and 14) and, for the kernels, the speedup over their reference */
    const int tsm2 = strncmp(family, "tsm2", 4) == 0 || strncmp(family, "ism2", 4) == 0;
    const int eff = tsm2 || strcmp(family, "cublas") == 0 || strcmp(family, "move") == 0;

    snprintf(id, sizeof id, "measurements-%s", *family ? family : "other");
    for (char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            *p = '_';
    int profiled = 0, nvtx = 0; /* nvtx: a profiled launch stored its NVTX ranges (--nvtx) */
    for (int i = 0; i < d->nrows && !*family && !profiled; i++)
        profiled = !d->meas[i].row->m.family && d->meas[i].row->m.source &&
                   strcmp(d->meas[i].row->m.source, "profile") == 0;
    for (int i = 0; i < d->nrows && !*family && !nvtx; i++)
        nvtx = d->meas[i].row->m.nvtx != NULL;
    snprintf(title, sizeof title, "Measurements: %s",
             *family    ? family
             : profiled ? "kernels of no family (profiled kernels)"
                        : "kernels of no family");
    struct rp_table *t = rp_tabs_new(ts, id, title, RP_SEC_KERNELS);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "%s", family);
    t->compact = 1; /* one row per measurement: the page's largest part */
    cols(t, c);
    if (eff)
        rp_table_col(t, "effective GB/s");
    if (tsm2) {
        rp_table_col(t, "speedup over cuBLAS");
        rp_table_col(t, "cuBLAS reference");
        rp_table_col(t, "of the floor");
        rp_table_col(t, "floor (move)");
    }
    if (d->nmodels) {
        models = malloc((size_t)d->nmodels * sizeof *models);
        if (!models) {
            t->oom = 1;
            return;
        }
    }
    for (int j = 0; j < d->nmodels; j++) {
        if (!family_has_model(d, family, d->models[j]))
            continue;
        models[nm++] = j;
        snprintf(name, sizeof name, "%s [ns]", d->models[j]);
        rp_table_col(t, name);
        snprintf(name, sizeof name, "%s error [%%]", d->models[j]);
        rp_table_col(t, name);
        snprintf(name, sizeof name, "%s bound", d->models[j]);
        rp_table_col(t, name);
    }
    if (nvtx) /* the launches of one range together: sort or filter on this column */
        rp_table_col(t, "NVTX range");
    snprintf(t->note, sizeof t->note,
             "Times are medians. GFLOP/s: useful work (analytic, 2mnk for a GEMM; empty for "
             "profiled kernels). Executed GFLOP/s: the counters' operations of the busiest pipe "
             "(pipe; without counters, the pipe it is judged on). Intensity from counters "
             "(executed operations over DRAM bytes) or the cost "
             "formula (useful flops over its bytes), never mixed; %% of roof: that point's "
             "GFLOP/s over the roof of its pipe at that intensity (policy's DRAM bandwidth). "
             "Error = (predicted - measured) / measured.%s",
             eff ? " Effective GB/s: A, B and C each counted once, (mk + kn + mn) x element size "
                   "over the median time (004 Fig. 5, 14)."
                 : "");
    if (tsm2)
        snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
                 " Speedup over cuBLAS: the reference's median time over this one's; the "
                 "reference is the faster cuBLAS call (Sgemm/Dgemm or GemmEx, not TF32) of the "
                 "same run, shape, precision and cache state (its id in cuBLAS reference). Of "
                 "the floor: the median time of the kernel move on the same shape in the same "
                 "run (its id in floor), which moves A, B and C once and computes nothing, over "
                 "this one's: 1 is as fast as the shape's bytes allow at this size.");
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        const struct db_measurement *m = &x->row->m;
        char pipe[64], anchor[32];
        if (strcmp(rp_family(x), family))
            continue;
        rp_row_id(t, rp_row_anchor(x, anchor, sizeof anchor)); /* the charts' points link here */
        rp_cell_int(t, m->id);
        if (x->dev >= 0)
            rp_cell_int(t, d->devs[x->dev].a.dev.id);
        else
            rp_cell_str(t, "");
        rp_cell_str(t, m->kernel);
        rp_cell_str(t, m->precision);
        rp_cell_int(t, m->m);
        rp_cell_int(t, m->n);
        rp_cell_int(t, m->k);
        rp_cell_str(t, m->params);
        rp_cell_str(t, m->cache_state);
        rp_cell_str(t, m->verified == 1 ? "yes" : m->verified == 0 ? "FAILED" : "not checked");
        rp_cell_int(t, m->reps);
        rp_cell_num(t, m->time_median_ns);
        rp_cell_num(t, m->time_min_ns);
        rp_cell_num(t, x->gflops);
        rp_cell_num(t, x->pt.counters ? x->point_gflops : NAN);
        rp_cell_str(t, rp_pipe_name(x, pipe, sizeof pipe));
        rp_cell_num(t, x->gbs);
        rp_cell_num(t, x->pt.intensity[MODEL_LEVEL_DRAM]);
        rp_cell_str(t, isfinite(x->pt.intensity[MODEL_LEVEL_DRAM])
                           ? (x->pt.counters ? "counters" : "cost formula")
                           : "");
        rp_cell_num(t, x->pt.pct_roof);
        if (eff)
            rp_cell_num(t, x->eff_gbs);
        if (tsm2) {
            judge_cells(t, x, x->charted ? rp_cublas_at(d, x) : NULL);
            judge_cells(t, x, x->charted ? rp_floor_at(d, x) : NULL);
        }
        for (int j = 0; j < nm; j++) {
            const struct db_prediction *p = timed_prediction(x, d->models[models[j]]);
            if (!p) { /* none, or the model's reason why it does not apply */
                rp_cell_str(t, "");
                rp_cell_str(t, "");
                rp_cell_str(t, "");
                continue;
            }
            rp_cell_num(t, p->predicted_time_ns);
            rp_cell_num(t, 100.0 * model_rel_error(p->predicted_time_ns, m->time_median_ns));
            rp_cell_str(t, p->bound);
        }
        if (nvtx)
            rp_cell_str(t, m->nvtx ? m->nvtx : "");
    }
    free(models);
}

/* --------------------------------------------------------------- accuracy */

/* One accuracy row over the measurements of family (NULL: all) with model. */
static void accuracy_row(const struct rp_data *d, const char *model, const char *family,
                         double *pred, double *meas, const int64_t *ids, struct rp_table *t)
{
    size_t n = 0;
    double worst = -1.0;
    int64_t worst_id = 0;
    struct model_ape_summary a = {NAN, NAN, NAN, 0, 0};
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        const struct db_prediction *p;
        if (!x->charted || (family && strcmp(rp_family(x), family)))
            continue;
        if (!(p = timed_prediction(x, model)) || !(x->row->m.time_median_ns > 0))
            continue;
        pred[n] = p->predicted_time_ns;
        meas[n] = x->row->m.time_median_ns;
        double ape = 100.0 * fabs(model_rel_error(pred[n], meas[n]));
        if (ape > worst) {
            worst = ape;
            worst_id = ids[i];
        }
        n++;
    }
    if (n == 0)
        return;
    if (model_ape_summarize(pred, meas, n, &a) != RK_OK)
        a.mean = a.median = a.p90 = NAN;
    rp_cell_str(t, model);
    rp_cell_str(t, family ? (*family ? family : "(no family)") : "all");
    rp_cell_int(t, (long long)n);
    rp_cell_num(t, a.mean);
    rp_cell_num(t, a.median);
    rp_cell_num(t, a.p90);
    rp_cell_num(t, worst);
    rp_cell_int(t, worst_id);
    rp_cell_num(t, 100.0 * a.within10 / (double)n);
    rp_cell_num(t, 100.0 * a.within25 / (double)n);
}

static void accuracy_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"model",
                                    "family",
                                    "measurements",
                                    "mean APE [%]",
                                    "median APE [%]",
                                    "p90 APE [%]",
                                    "worst APE [%]",
                                    "worst measurement",
                                    "within 10% [% of measurements]",
                                    "within 25% [% of measurements]",
                                    NULL};
    struct rp_table *t = rp_tabs_new(ts, "accuracy", "Model accuracy", RP_SEC_MODEL);
    double *pred = NULL, *meas = NULL;
    int64_t *ids = NULL;
    if (!t)
        return;
    cols(t, c);
    if (d->nmodels == 0) {
        snprintf(t->note, sizeof t->note,
                 "No predictions in the database: run 'roofkit model' to write them.");
        return;
    }
    snprintf(t->note, sizeof t->note,
             "APE = 100 |predicted - measured| / measured, over the measurements that "
             "passed verification (or were not checked). Mean, median and 90th percentile as "
             "model_mape(), model_median_ape() and model_ape_percentile(); worst is the "
             "largest.");
    pred = malloc((size_t)d->nrows * sizeof *pred);
    meas = malloc((size_t)d->nrows * sizeof *meas);
    ids = malloc((size_t)d->nrows * sizeof *ids);
    if (!pred || !meas || !ids) {
        t->oom = 1;
        goto out;
    }
    for (int i = 0; i < d->nrows; i++)
        ids[i] = d->rows[i].m.id;
    for (int j = 0; j < d->nmodels; j++) {
        accuracy_row(d, d->models[j], NULL, pred, meas, ids, t);
        for (int f = 0; f < d->nfamilies; f++)
            accuracy_row(d, d->models[j], d->families[f], pred, meas, ids, t);
    }
out:
    free(pred);
    free(meas);
    free(ids);
}

/* ------------------------------------------------------------------- TSM2 */

static int is_tsm2(const struct rp_meas *x)
{
    return strncmp(rp_family(x), "tsm2", 4) == 0;
}

/* A latency ceiling of `level` in cycles, or NaN. */
static double latency_cycles(const struct rp_dev *v, const char *level)
{
    double best = NAN;
    for (int i = 0; i < v->a.nceil; i++) {
        const struct db_ceiling *c = &v->a.ceil[i];
        if (strcmp(c->kind, "latency") || !c->level || strcmp(c->level, level) ||
            strcmp(c->unit, "cycles") || !isfinite(c->value))
            continue;
        if (isnan(best) || c->value > best)
            best = c->value; /* "l2_far" beside "l2": the dram plateau is unique */
    }
    return best;
}

/* Fills the TSM2 model's view of device v for precision; NULL or what is missing. */
static const char *tsm2_gpu(const struct rp_dev *v, const char *precision, struct model_gpu *g)
{
    const struct db_ceiling *pk = rp_peak_ceiling(v, precision);
    memset(g, 0, sizeof *g);
    if (!pk)
        return "no compute ceiling of this precision";
    if (!v->bw_c[MODEL_LEVEL_DRAM])
        return "no DRAM bandwidth ceiling";
    g->peak_flops = analysis_unit_si(pk->value, pk->unit);
    g->bandwidth = v->bw[MODEL_LEVEL_DRAM];
    g->clock_hz = v->a.dev.sm_clock_mhz * 1e6;
    g->sms = v->a.dev.sm_count;
    g->regs_per_sm = v->a.dev.regs_per_sm;
    g->smem_per_sm = v->a.dev.smem_per_sm_bytes;
    g->max_threads_per_sm = v->a.dev.max_threads_per_sm;
    g->mem_latency_cycles = latency_cycles(v, "dram");
    g->comp_latency_cycles = latency_cycles(v, "register");
    if (isnan(g->mem_latency_cycles))
        return "no DRAM latency ceiling in cycles (roofkit probe --only latency)";
    if (isnan(g->comp_latency_cycles))
        return "no arithmetic latency ceiling (level register, in cycles)";
    return model_check_gpu(g);
}

static void tsm2_threshold_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"device",
                                    "precision",
                                    "peak [GFLOP/s]",
                                    "DRAM bandwidth [GB/s]",
                                    "bytes per element",
                                    "t2 threshold [elements]",
                                    "n measured",
                                    "bound of the largest n",
                                    NULL};
    static const char *const precs[] = {"fp32", "fp64"};
    struct rp_table *t =
        rp_tabs_new(ts, "tsm2-threshold", "TSM2: compute/memory threshold", RP_SEC_TSM2);
    if (!t)
        return;
    cols(t, c);
    snprintf(t->note, sizeof t->note,
             "004_dab40fe45003313a.txt §3.6.2: t2_threshold = Peak Perf. / Peak Band. x "
             "bytes per element, from the measured ceilings; a TSM2 problem with n above it is "
             "compute bound, at or below it memory bound.");
    for (int i = 0; i < d->ndevs; i++) {
        const struct rp_dev *v = &d->devs[i];
        for (int p = 0; p < 2; p++) {
            const struct db_ceiling *pk = rp_peak_ceiling(v, precs[p]);
            if (!pk || !v->bw_c[MODEL_LEVEL_DRAM])
                continue;
            double peak = analysis_unit_si(pk->value, pk->unit);
            double thr = model_tsm2_t2_threshold(peak, v->bw[MODEL_LEVEL_DRAM],
                                                 analysis_elem_bytes(precs[p]));
            long nmax = 0;
            char ns[256] = "";
            size_t used = 0;
            for (int j = 0; j < d->nrows; j++) {
                const struct rp_meas *x = &d->meas[j];
                const char *pr = x->row->m.precision;
                if (x->dev != i || !is_tsm2(x) || !pr || strcmp(pr, precs[p]))
                    continue;
                long n = (long)x->row->m.n;
                char key[32];
                snprintf(key, sizeof key, "%s%ld,", used ? "" : ",", n);
                if (!strstr(ns, key) && used + strlen(key) + 1 < sizeof ns) {
                    /* a ",n," list: distinct values in order of appearance */
                    used += (size_t)snprintf(ns + used, sizeof ns - used, "%s", key);
                }
                if (n > nmax)
                    nmax = n;
            }
            rp_cell_int(t, v->a.dev.id);
            rp_cell_str(t, precs[p]);
            rp_cell_num(t, peak * 1e-9);
            rp_cell_num(t, v->bw[MODEL_LEVEL_DRAM] * 1e-9);
            rp_cell_int(t, analysis_elem_bytes(precs[p]));
            rp_cell_num(t, thr);
            if (used > 2) {
                ns[used - 1] = '\0';
                rp_cell_str(t, ns + 1);
                rp_cell_str(t, nmax > thr ? "compute" : "memory");
            } else {
                rp_cell_str(t, "");
                rp_cell_str(t, "");
            }
        }
    }
    if (t->nrows == 0)
        snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
                 " No device has both a DRAM bandwidth and an fp32 or fp64 compute ceiling: "
                 "run 'roofkit probe'.");
}

/* Measured time [ns] of the fastest run of `kernel` among g[0..n) with t2, t3 (any t1), or NaN;
 * g is one shape sorted by time. */
static double measured_at(const struct rp_meas *const *g, int n, const char *kernel, int t2, int t3)
{
    for (int i = 0; i < n; i++) {
        double a, b;
        if (strcmp(g[i]->row->m.kernel, kernel) || rk_json_number(g[i]->row->m.params, "t2", &a) ||
            rk_json_number(g[i]->row->m.params, "t3", &b))
            continue;
        if ((int)a == t2 && (int)b == t3)
            return g[i]->row->m.time_median_ns;
    }
    return NAN;
}

/*
 * Alg. 5's gradient descent walks thousands of steps per problem. Its objective is
 * the predicted time normalised by its value at the start point, and every term of
 * that time (004 §3.6.3: m k n / t2 * bytes / bandwidth_eff, 2 m k n / compute_eff)
 * is proportional to m k for a given (t2, t3), so the walk and its choice depend on
 * m and k only through the search box: problems that share device, precision, n and
 * box share the choice, and the report runs the search once for them.
 */
#define GD_MEMO 64
struct gd_memo {
    int dev, elem_bytes;
    long n;
    struct model_tsm2_bounds box;
    struct model_tsm2_choice choice;
};

static int gd_memo(struct gd_memo *memo, int *nmemo, int dev, const struct model_gpu *g,
                   const struct model_tsm2_problem *pr, struct model_tsm2_choice *out)
{
    struct model_tsm2_bounds box;
    int rc = model_tsm2_default_bounds(pr, &box);
    if (rc != RK_OK)
        return rc;
    for (int i = 0; i < *nmemo; i++)
        if (memo[i].dev == dev && memo[i].elem_bytes == pr->elem_bytes && memo[i].n == pr->n &&
            memcmp(&memo[i].box, &box, sizeof box) == 0) {
            *out = memo[i].choice;
            return RK_OK;
        }
    if ((rc = model_tsm2_search_gd(g, pr, &box, out)) != RK_OK)
        return rc;
    struct gd_memo *m = &memo[*nmemo < GD_MEMO ? (*nmemo)++ : GD_MEMO - 1];
    m->dev = dev;
    m->elem_bytes = pr->elem_bytes;
    m->n = pr->n;
    m->box = box;
    m->choice = *out;
    return RK_OK;
}

static void tsm2_params_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"device",
                                    "precision",
                                    "m",
                                    "n",
                                    "k",
                                    "problem bound",
                                    "Alg. 5 (GD) t2",
                                    "Alg. 5 (GD) t3",
                                    "exhaustive t2",
                                    "exhaustive t3",
                                    "model time [ns]",
                                    "fastest kernel",
                                    "fastest parameters",
                                    "fastest time [ns]",
                                    "measured at exhaustive choice [ns]",
                                    "regret (choice / fastest)",
                                    "note",
                                    NULL};
    struct rp_table *t = rp_tabs_new(ts, "tsm2-parameters", "TSM2: chosen parameters", RP_SEC_TSM2);
    if (!t)
        return;
    t->compact = 1; /* one row per TSM2 shape measured */
    cols(t, c);
    snprintf(t->note, sizeof t->note,
             "For each TSM2 shape measured: the (t2, t3) that 004 §3.6.3 Alg. 5 chooses "
             "(gradient descent as written, and the exhaustive integer search), with the "
             "model's time, beside the fastest parameters measured. t1 comes from offline "
             "profiling in the seed and is kept as measured.");
    const struct rp_meas **v = NULL;
    struct gd_memo memo[GD_MEMO];
    int nv = 0, nmemo = 0;
    if (rp_select(d, is_tsm2, &v, &nv) != RK_OK) {
        t->oom = 1;
        return;
    }
    for (int i = 0, e; i < nv; i = e) {
        const struct rp_meas *x = v[i], *fast = v[i]; /* sorted: the fastest first */
        const struct db_measurement *m = &x->row->m;
        for (e = i + 1; e < nv && rp_shape_cmp(v[e], x) == 0; e++)
            ;
        if (x->dev < 0)
            continue;
        struct model_gpu g;
        struct model_tsm2_problem pr = {m->m, m->n, m->k, analysis_elem_bytes(m->precision),
                                        0,    1,    1};
        struct model_tsm2_choice gd, ex;
        double t1;
        const char *why = tsm2_gpu(&d->devs[x->dev], m->precision, &g);
        if (rk_json_number(fast->row->m.params, "t1", &t1) == RK_OK)
            pr.t1 = (int)t1;
        if (!why && !pr.elem_bytes)
            why = "precision has no element size";
        if (!why)
            why = model_check_tsm2(&pr, 0);
        if (!why && (gd_memo(memo, &nmemo, x->dev, &g, &pr, &gd) != RK_OK ||
                     model_tsm2_search_exhaustive(&g, &pr, NULL, &ex) != RK_OK))
            why = "the model's search refused the problem";
        rp_cell_int(t, d->devs[x->dev].a.dev.id);
        rp_cell_str(t, m->precision);
        rp_cell_int(t, m->m);
        rp_cell_int(t, m->n);
        rp_cell_int(t, m->k);
        if (why) {
            for (int k = 0; k < 5; k++)
                rp_cell_str(t, "");
        } else {
            double thr = model_tsm2_t2_threshold(g.peak_flops, g.bandwidth, pr.elem_bytes);
            rp_cell_str(t, (double)m->n > thr ? "compute" : "memory");
            rp_cell_int(t, gd.t2);
            rp_cell_int(t, gd.t3);
            rp_cell_int(t, ex.t2);
            rp_cell_int(t, ex.t3);
        }
        rp_cell_num(t, why ? NAN : ex.predicted_time_s * 1e9);
        rp_cell_str(t, fast->row->m.kernel);
        rp_cell_str(t, fast->row->m.params);
        rp_cell_num(t, fast->row->m.time_median_ns);
        double at = why ? NAN : measured_at(v + i, e - i, fast->row->m.kernel, ex.t2, ex.t3);
        rp_cell_num(t, at);
        rp_cell_num(t, at / fast->row->m.time_median_ns);
        rp_cell_str(t, why ? why : (isnan(at) ? "the exhaustive choice was not measured" : ""));
    }
    free((void *)v);
    if (t->nrows == 0)
        snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
                 " No TSM2 measurement in the database: run 'roofkit run --suite tsm2'.");
}

/* The floor summary of s (kernel and precision of a capture) in f[0..nf), or NULL. */
static const struct analysis_speedup *floor_of(const struct analysis_speedup *s,
                                               const struct analysis_speedup *f, int nf)
{
    for (int i = 0; i < nf; i++)
        if (!strcmp(f[i].kernel, s->kernel) && !strcmp(f[i].precision, s->precision))
            return &f[i];
    return NULL;
}

/* The summary table, its columns and note; NULL when out of memory. */
static struct rp_table *summary_tab(struct rp_tabs *ts)
{
    static const char *const c[] = {"capture",
                                    "kernel",
                                    "precision",
                                    "shapes",
                                    "speedup over cuBLAS (geomean)",
                                    "worst speedup",
                                    "worst at (m x n x k)",
                                    "shapes with a floor",
                                    "of the floor (geomean)",
                                    "worst of the floor",
                                    "worst of the floor at",
                                    "shapes below 0.9 of the floor",
                                    NULL};
    struct rp_table *t =
        rp_tabs_new(ts, "summary-cublas", "Against cuBLAS and the floor, in sum", RP_SEC_OVERVIEW);
    if (!t)
        return NULL;
    cols(t, c);
    snprintf(t->note, sizeof t->note,
             "Each kernel and precision of a run that ran beside cuBLAS, each shape counted once "
             "at its best verified configuration: the geometric mean and the worst of the faster "
             "cuBLAS call's median time over its own (the column 'speedup over cuBLAS' of the "
             "measurement tables), and, where the run measured the kernel move on the same "
             "shapes, of the floor's time over its own ('of the floor').");
    return t;
}

/* A summary's geomean, worst and where: three cells. */
static void summary_cells(struct rp_table *t, const struct analysis_speedup *s)
{
    char at[96];
    rp_cell_num(t, s->geomean);
    rp_cell_num(t, s->worst);
    snprintf(at, sizeof at, "%lldx%lldx%lld", (long long)s->worst_m, (long long)s->worst_n,
             (long long)s->worst_k);
    rp_cell_str(t, at);
}

/*
 * Each run summed up, captures apart (a reference or a floor judges only its own run's rows):
 * per kernel and precision that ran beside cuBLAS, what `roofkit run` prints at its end,
 * against the faster cuBLAS call (analysis_speedups) and against the floor (analysis_floors).
 */
static void summary_table(const struct rp_data *d, struct rp_tabs *ts)
{
    struct db_measurement_row *sub = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *sub);
    struct rp_table *t = NULL;
    enum { MAXG = 32 };
    struct analysis_speedup sp[MAXG], fl[MAXG];
    if (!sub) {
        if ((t = summary_tab(ts)))
            t->oom = 1;
        return;
    }
    for (int ci = 0; ci < d->ncaps; ci++) {
        const int64_t cap = d->caps[ci].id;
        int n = 0, ns = 0, nf = 0;
        for (int i = 0; i < d->nrows; i++)
            if (d->rows[i].m.capture_id == cap)
                sub[n++] = d->rows[i];                  /* a shallow copy: the strings stay d's */
        (void)analysis_speedups(sub, n, sp, MAXG, &ns); /* more than MAXG: the first MAXG */
        (void)analysis_floors(sub, n, fl, MAXG, &nf);
        for (int g = 0; g < ns; g++) {
            const struct analysis_speedup *f = floor_of(&sp[g], fl, nf);
            if (!t && !(t = summary_tab(ts)))
                goto out;
            rp_cell_int(t, cap);
            rp_cell_str(t, sp[g].kernel);
            rp_cell_str(t, sp[g].precision);
            rp_cell_int(t, sp[g].shapes);
            summary_cells(t, &sp[g]);
            if (f) {
                rp_cell_int(t, f->shapes);
                summary_cells(t, f);
                rp_cell_int(t, f->below_90);
            } else {
                for (int e = 0; e < 5; e++)
                    rp_cell_str(t, "");
            }
        }
    }
out:
    free(sub);
}

int rp_build_tables(const struct rp_data *d, struct rp_table **out, int *n)
{
    struct rp_tabs ts = {NULL, 0, 0, 0};
    rp_overview_tables(d, &ts);
    summary_table(d, &ts); /* the answer first: how each run did against cuBLAS and the floor */
    devices_table(d, &ts);
    ceilings_table(d, &ts);
    for (int f = 0; f < d->nfamilies; f++)
        measurement_table(d, d->families[f], &ts);
    if (d->nrows == 0) {
        struct rp_table *t = rp_tabs_new(&ts, "measurements", "Measurements", RP_SEC_KERNELS);
        if (t)
            snprintf(t->note, sizeof t->note,
                     "No measurements in the database: run 'roofkit run' (the kernel suite) "
                     "or 'roofkit profile -- PROGRAM'.");
    }
    accuracy_table(d, &ts);
    tsm2_threshold_table(d, &ts);
    tsm2_params_table(d, &ts);
    rp_gpu_tables(d, &ts);
    rp_energy_tables(d, &ts);
    rp_compare_tables(d, &ts);
    for (int i = 0; i < ts.n; i++)
        ts.oom |= ts.t[i].oom;
    if (ts.oom) {
        rp_free_tables(ts.t, ts.n);
        return rk_error(RK_ENOMEM, "out of memory building the report's tables");
    }
    *out = ts.t;
    *n = ts.n;
    return RK_OK;
}
