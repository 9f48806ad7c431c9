/*
 * load.c - reads what the report shows out of the database (through db/ only) and
 * derives each measurement's figures once, so that every table and chart shows the
 * same numbers.
 *
 * Assumes:
 *   - A measurement's device is the GPU it names (a profiled program's launch on one of
 *     several GPUs), else its capture's device, loaded once with its current ceilings and
 *     latency curve (analysis_device_load).
 *   - Every figure a row is judged by comes from analysis/: its roofline placement
 *     (analysis_place: intensity, roof, % of roof, bound) uses the same ceiling policy as
 *     the model, so a row's roof here is the roof of its roofline prediction; the
 *     device-wide bandwidth of each level drawn in the charts is the policy's too.
 *   - Several GPUs and ranks (rp_data.gpus, peer_names, groups) are derived here once, for
 *     the tables of gpus.c and the charts of gpucharts.c alike: the GPUs with ceilings of
 *     their own, the names of the ceilings of GPU pairs, and the profile captures with a
 *     launcher rank grouped by the program they ran (the ranks of one MPI job merged into
 *     one database). A program profiled as one rank forms no group.
 */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "kname.h"
#include "internal.h"
#include "model.h"

const char *rp_family(const struct rp_meas *m)
{
    return m->row->m.family ? m->row->m.family : "";
}

const struct db_prediction *rp_prediction(const struct rp_meas *m, const char *model)
{
    for (int i = 0; i < m->row->n_predictions; i++)
        if (strcmp(m->row->predictions[i].model, model) == 0)
            return &m->row->predictions[i];
    return NULL;
}

double rp_metric(const struct rp_meas *m, const char *name)
{
    const double v = analysis_metric(m->row, name);
    return isfinite(v) ? v : NAN;
}

const struct db_ceiling *rp_peak_ceiling(const struct rp_dev *d, const char *precision)
{
    const struct analysis_judge j = {precision, ANALYSIS_PIPE_CUDA, 0};
    return analysis_ceiling(&d->a, &j, ANALYSIS_USE_COMPUTE);
}

const char *rp_dev_label(const struct rp_data *d, int dev, char *buf, size_t len)
{
    if (dev < 0 || dev >= d->ndevs)
        snprintf(buf, len, "no device");
    else
        snprintf(buf, len, "#%lld %s", (long long)d->devs[dev].a.dev.id, d->devs[dev].a.dev.name);
    return buf;
}

int rp_shape_cmp(const struct rp_meas *a, const struct rp_meas *b)
{
    const struct db_measurement *x = &a->row->m, *y = &b->row->m;
    int c;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    c = strcmp(x->precision ? x->precision : "", y->precision ? y->precision : "");
    if (c)
        return c;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return 0;
}

static int cmp_shape_time(const void *pa, const void *pb)
{
    const struct rp_meas *a = *(const struct rp_meas *const *)pa;
    const struct rp_meas *b = *(const struct rp_meas *const *)pb;
    int c = rp_shape_cmp(a, b);
    if (c)
        return c;
    if (a->pt.time_s != b->pt.time_s)
        return a->pt.time_s < b->pt.time_s ? -1 : 1;
    return a->row->m.id < b->row->m.id ? -1 : a->row->m.id > b->row->m.id;
}

int rp_select(const struct rp_data *d, int (*keep)(const struct rp_meas *),
              const struct rp_meas ***out, int *n)
{
    const struct rp_meas **v = NULL;
    int k = 0;
    *out = NULL;
    *n = 0;
    for (int i = 0; i < d->nrows; i++)
        if (d->meas[i].charted && keep(&d->meas[i]))
            k++;
    if (k == 0)
        return RK_OK;
    v = malloc((size_t)k * sizeof *v);
    if (!v)
        return rk_error(RK_ENOMEM, "out of memory sorting %d measurements", k);
    k = 0;
    for (int i = 0; i < d->nrows; i++)
        if (d->meas[i].charted && keep(&d->meas[i]))
            v[k++] = &d->meas[i];
    qsort(v, (size_t)k, sizeof *v, cmp_shape_time);
    *out = v;
    *n = k;
    return RK_OK;
}

/* Of list[0..n) (sorted by shape), the one pick folds to for x (analysis/ decides), or NULL. */
static const struct rp_meas *judge_at(const struct rp_meas *const *list, int n,
                                      const struct rp_meas *x, analysis_pick_fn pick)
{
    const struct db_measurement *best = NULL;
    const struct rp_meas *ref = NULL;
    int lo = 0, hi = n;
    while (lo < hi) { /* the first of x's device, precision and shape */
        int mid = lo + (hi - lo) / 2;
        if (rp_shape_cmp(list[mid], x) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = lo; i < n && rp_shape_cmp(list[i], x) == 0; i++) {
        const struct db_measurement *b = pick(&x->row->m, best, &list[i]->row->m);
        if (b != best) {
            best = b;
            ref = list[i];
        }
    }
    return ref;
}

const struct rp_meas *rp_cublas_at(const struct rp_data *d, const struct rp_meas *x)
{
    return judge_at(d->cublas, d->ncublas, x, analysis_reference_pick);
}

const struct rp_meas *rp_floor_at(const struct rp_data *d, const struct rp_meas *x)
{
    return judge_at(d->floors, d->nfloors, x, analysis_floor_pick);
}

int rp_cmp_time_desc(const void *a, const void *b)
{
    const struct rp_meas *x = *(const struct rp_meas *const *)a;
    const struct rp_meas *y = *(const struct rp_meas *const *)b;
    if (x->pt.time_s != y->pt.time_s)
        return x->pt.time_s > y->pt.time_s ? -1 : 1;
    return (x->row->m.id > y->row->m.id) - (x->row->m.id < y->row->m.id);
}

static int is_cublas(const struct rp_meas *x)
{
    return strcmp(rp_family(x), "cublas") == 0;
}

static int is_move(const struct rp_meas *x)
{
    return strcmp(rp_family(x), "move") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted distinct strings of list (n entries) into *out / *nout; list is reordered. */
static int distinct(const char **list, int n, const char ***out, int *nout)
{
    int k = 0;
    if (n > 0)
        qsort(list, (size_t)n, sizeof *list, cmp_str);
    for (int i = 0; i < n; i++)
        if (k == 0 || strcmp(list[k - 1], list[i]))
            list[k++] = list[i];
    *out = list;
    *nout = k;
    return RK_OK;
}

/* The index of device `dev_id` in d->devs, or -1. */
static int device_index(const struct rp_data *d, int64_t dev_id)
{
    for (int i = 0; dev_id && i < d->ndevs; i++)
        if (d->devs[i].a.dev.id == dev_id)
            return i;
    return -1;
}

/* The device index of measurement m: the GPU it names, else its capture's; -1 when none. */
static int device_of(const struct rp_data *d, const struct db_measurement *m)
{
    int k = device_index(d, m->device_id);
    if (k >= 0)
        return k;
    for (int i = 0; i < d->ncaps; i++)
        if (d->caps[i].id == m->capture_id)
            return device_index(d, d->caps[i].device_id);
    return -1;
}

const char *rp_program_of(const char *cmdline)
{
    const char *args = cmdline ? strstr(cmdline, " -- ") : NULL;
    if (!cmdline)
        return "";
    return args ? args + 4 : cmdline;
}

/* The bandwidth of each level the charts draw: the policy's device-wide choice. */
static void derive_device(struct rp_dev *v)
{
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        v->bw_c[l] = analysis_ceiling(&v->a, NULL, analysis_level_use((enum model_level_id)l));
        v->bw[l] = analysis_ceiling_si(v->bw_c[l]);
        if (isnan(v->bw[l]))
            v->bw_c[l] = NULL;
    }
}

static void derive_meas(const struct rp_data *d, struct rp_meas *x)
{
    const struct db_measurement *m = &x->row->m;
    struct analysis_point *p = &x->pt;
    x->dev = device_of(d, m);
    analysis_place(x->dev >= 0 ? &d->devs[x->dev].a : NULL, x->row, p);
    x->gflops = m->flops / p->time_s * 1e-9;
    x->point_gflops = p->flop_rate * 1e-9;
    x->gbs = p->dram_rate * 1e-9;
    x->eff_gbs = analysis_effective_bandwidth(m) * 1e-9;

    double gld = rp_metric(x, "gld_throughput");
    if (isfinite(gld) && gld > 0) {
        x->bw_util = gld * 1e-9;
        x->bw_src = "gld_throughput";
    } else {
        x->bw_util = x->gbs;
        x->bw_src = x->pt.counters ? "dram counters" : "cost formula";
    }
    x->charted = m->verified != 0 && isfinite(x->pt.time_s);
}

static int leave_out_tune(struct rp_data *d, const struct rp_sel *sel);
static int load_gpus(struct rp_data *d);
static int load_rank_groups(struct rp_data *d);

/* Moves the elements of v (n of size sz) for which keep[i] to the front, in order, the others
 * behind them in order; returns how many are kept. */
static int partition(void *v, size_t sz, int n, const unsigned char *keep)
{
    char *tmp, *p = v;
    int k = 0, o = 0;
    if (n == 0)
        return 0;
    if (!(tmp = malloc((size_t)n * sz)))
        return -1;
    for (int i = 0; i < n; i++)
        k += keep[i] != 0;
    for (int i = 0; i < n; i++)
        memcpy(tmp + (size_t)(keep[i] ? o++ : k + (i - o)) * sz, p + (size_t)i * sz, sz);
    memcpy(p, tmp, (size_t)n * sz);
    free(tmp);
    return k;
}

/* The index in devs of the device of measurement m (the GPU it names, else its capture's); -1. */
static int row_device(const struct db_measurement *m, const struct db_device *devs, int ndevs,
                      const struct db_capture *caps, int ncaps)
{
    int64_t id = m->device_id;
    for (int i = 0; i < ncaps && !id; i++)
        if (caps[i].id == m->capture_id)
            id = caps[i].device_id;
    for (int i = 0; id && i < ndevs; i++)
        if (devs[i].id == id)
            return i;
    return -1;
}

/*
 * The selection (select.c): which rows, devices and captures the report keeps. Rows and
 * captures left out move behind the kept ones (freed with them); *dev_keep says which devices
 * to load.
 */
static int apply_selection(struct db *db, const struct report_select *select, struct rp_data *d,
                           const struct db_device *devs, int ndevs, struct rp_sel **sel,
                           unsigned char **dev_keep)
{
    unsigned char *rkeep = NULL, *ckeep = NULL, *dkeep = NULL;
    int rc = rp_sel_open(db, select, devs, ndevs, d->caps, d->ncaps, sel), k;
    if (rc != RK_OK)
        return rc;
    rkeep = malloc((size_t)(d->nrows ? d->nrows : 1));
    ckeep = calloc((size_t)(d->ncaps ? d->ncaps : 1), 1);
    dkeep = calloc((size_t)(ndevs ? ndevs : 1), 1);
    if (!rkeep || !ckeep || !dkeep) {
        rc = rk_error(RK_ENOMEM, "out of memory reading %d measurements", d->nrows);
        goto out;
    }
    for (int i = 0; i < d->nrows; i++) {
        int dev = row_device(&d->rows[i].m, devs, ndevs, d->caps, d->ncaps);
        rkeep[i] = (unsigned char)rp_sel_row(*sel, &d->rows[i], dev);
        if (rkeep[i] && dev >= 0)
            dkeep[dev] = 1;
        for (int c = 0; rkeep[i] && c < d->ncaps; c++)
            ckeep[c] |= d->caps[c].id == d->rows[i].m.capture_id;
    }
    for (int i = 0; i < ndevs; i++)
        if (rp_sel_has_devices(*sel) || !rp_sel_has_captures(*sel))
            dkeep[i] = (unsigned char)rp_sel_device(*sel, i);
    for (int c = 0; c < d->ncaps; c++) {
        const struct db_capture *cap = &d->caps[c];
        int dev = -1, on = 0;
        for (int i = 0; i < ndevs && cap->device_id; i++)
            if (devs[i].id == cap->device_id)
                dev = i;
        if (rp_sel_has_captures(*sel) && rp_sel_capture(*sel, cap->id) && dev >= 0 &&
            !rp_sel_has_devices(*sel))
            dkeep[dev] = 1; /* a selected probe capture shows its device */
        on = !cap->device_id || (dev >= 0 && rp_sel_device(*sel, dev));
        if (rp_sel_has_captures(*sel))
            on = on && rp_sel_capture(*sel, cap->id);
        ckeep[c] |= (unsigned char)on;
    }
    k = partition(d->rows, sizeof *d->rows, d->nrows, rkeep);
    if (k >= 0 && (rc = rp_sel_check_rows(*sel, d->rows, d->nrows, k)) != RK_OK)
        goto out;
    if (k >= 0) {
        d->n_unselected = d->nrows - k;
        d->nrows = k;
        k = partition(d->caps, sizeof *d->caps, d->ncaps, ckeep);
    }
    if (k < 0) {
        rc = rk_error(RK_ENOMEM, "out of memory reading %d measurements", d->nrows);
        goto out;
    }
    d->ncaps_all = d->ncaps;
    d->ncaps = k;
    rp_sel_describe(*sel, d->selection, sizeof d->selection);
    *dev_keep = dkeep;
    dkeep = NULL;
out:
    free(rkeep);
    free(ckeep);
    free(dkeep);
    return rc;
}

/* The energy spans of the reported captures on reported devices (or naming none), first. */
static int load_spans(struct db *db, struct rp_data *d)
{
    int rc = db_query_energy_spans(db, 0, &d->spans, &d->nspans_all);
    if (rc != RK_OK)
        return rc;
    for (int i = 0; i < d->nspans_all; i++) {
        const struct db_energy_span *s = &d->spans[i];
        int cap = 0, dev = s->device_id == 0;
        for (int k = 0; k < d->ncaps && !cap; k++)
            cap = d->caps[k].id == s->capture_id;
        for (int k = 0; k < d->ndevs && !dev; k++)
            dev = d->devs[k].a.dev.id == s->device_id;
        if (cap && dev) {
            struct db_energy_span t = d->spans[d->nspans];
            d->spans[d->nspans++] = *s;
            d->spans[i] = t;
        }
    }
    return RK_OK;
}

int rp_load(struct db *db, const struct report_select *select, struct rp_data *out)
{
    struct rp_data d;
    struct db_device *devs = NULL;
    struct rp_sel *sel = NULL;
    unsigned char *dev_keep = NULL;
    const char **names = NULL;
    int ndevs = 0, nkeep = 0, rc;

    memset(&d, 0, sizeof d);
    d.db_path = db_path(db);
    rc = db_list_devices(db, &devs, &ndevs);
    if (rc == RK_OK)
        rc = db_list_captures(db, &d.caps, &d.ncaps);
    if (rc == RK_OK) {
        d.ncaps_all = d.ncaps;
        rc = db_query_measurements(db, 0, &d.rows, &d.nrows);
    }
    if (rc != RK_OK)
        goto out;
    d.nrows_all = d.nrows;
    if ((rc = apply_selection(db, select, &d, devs, ndevs, &sel, &dev_keep)) != RK_OK)
        goto out;
    for (int i = 0; i < ndevs; i++)
        nkeep += dev_keep[i] != 0;
    if (nkeep > 0) {
        d.devs = calloc((size_t)nkeep, sizeof *d.devs);
        if (!d.devs) {
            rc = rk_error(RK_ENOMEM, "out of memory reading the devices");
            goto out;
        }
    }
    for (int i = 0; i < ndevs; i++) {
        if (!dev_keep[i])
            continue;
        rc = analysis_device_load(db, devs[i].id, &d.devs[d.ndevs].a);
        if (rc != RK_OK)
            goto out;
        derive_device(&d.devs[d.ndevs++]);
    }

    if ((rc = leave_out_tune(&d, sel)) != RK_OK)
        goto out;
    if (d.nrows > 0) {
        d.meas = calloc((size_t)d.nrows, sizeof *d.meas);
        names = malloc((size_t)d.nrows * sizeof *names);
        if (!d.meas || !names) {
            rc = rk_error(RK_ENOMEM, "out of memory reading %d measurements", d.nrows);
            goto out;
        }
    }
    for (int i = 0; i < d.nrows; i++) {
        d.meas[i].row = &d.rows[i];
        derive_meas(&d, &d.meas[i]);
        if (d.meas[i].dev >= 0)
            d.devs[d.meas[i].dev].nmeas++;
        names[i] = rp_family(&d.meas[i]);
        d.n_predictions += d.rows[i].n_predictions;
    }
    distinct(names, d.nrows, &d.families, &d.nfamilies);
    names = NULL;
    if (d.n_predictions > 0) {
        const char **models = malloc((size_t)d.n_predictions * sizeof *models);
        int k = 0;
        if (!models) {
            rc = rk_error(RK_ENOMEM, "out of memory reading the predictions");
            goto out;
        }
        for (int i = 0; i < d.nrows; i++)
            for (int j = 0; j < d.rows[i].n_predictions; j++)
                models[k++] = d.rows[i].predictions[j].model;
        distinct(models, k, &d.models, &d.nmodels);
    }
    rc = rp_select(&d, is_cublas, &d.cublas, &d.ncublas);
    if (rc == RK_OK)
        rc = rp_select(&d, is_move, &d.floors, &d.nfloors);
    if (rc == RK_OK)
        rc = load_spans(db, &d);
    if (rc == RK_OK)
        rc = load_gpus(&d);
    if (rc == RK_OK)
        rc = load_rank_groups(&d);
    if (rc == RK_OK)
        rc = rp_overview_load(&d);
out:
    free(names);
    free(dev_keep);
    rp_sel_free(sel);
    if (devs)
        db_free_devices(devs, ndevs);
    if (rc != RK_OK)
        rp_data_release(&d);
    else
        *out = d;
    return rc;
}

/*
 * `roofkit tune` stores every configuration of its sweep (up to a hundred per shape) as a
 * measurement; charted beside the suites they would bury them. Their rows move behind the
 * others, in id order, and d->nrows counts the rest; the pages say how many were left out. A
 * tune capture selected by --capture is reported like any other.
 */
static int leave_out_tune(struct rp_data *d, const struct rp_sel *sel)
{
    unsigned char *keep;
    int kept;
    for (int c = 0; c < d->ncaps; c++)
        d->n_tune_caps += d->caps[c].kind == DB_CAPTURE_TUNE && d->caps[c].n_measurements > 0 &&
                          !rp_sel_capture(sel, d->caps[c].id);
    if (d->n_tune_caps == 0 || d->nrows == 0)
        return RK_OK;
    if (!(keep = malloc((size_t)d->nrows)))
        return rk_error(RK_ENOMEM, "out of memory reading %d measurements", d->nrows);
    for (int i = 0; i < d->nrows; i++) {
        int tune = 0;
        for (int c = 0; c < d->ncaps && !tune; c++)
            tune = d->caps[c].id == d->rows[i].m.capture_id && d->caps[c].kind == DB_CAPTURE_TUNE &&
                   !rp_sel_capture(sel, d->caps[c].id);
        keep[i] = !tune;
    }
    kept = partition(d->rows, sizeof *d->rows, d->nrows, keep);
    free(keep);
    if (kept < 0)
        return rk_error(RK_ENOMEM, "out of memory reading %d measurements", d->nrows);
    d->n_tune_rows = d->nrows - kept;
    d->nrows = kept;
    return RK_OK;
}

/* ------------------------------------------------------ names */

enum { SHORT_NAME_MAX = 28 }; /* characters of a short kernel name */

/* Is a word of a command line an interpreter whose program is its first argument? */
static int interpreter(const char *w, size_t n)
{
    static const char *const names[] = {"env", "sh", "bash", "node", "perl", "ruby", NULL};
    if (n >= 6 && strncmp(w, "python", 6) == 0)
        return 1;
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && strncmp(w, names[i], n) == 0)
            return 1;
    return 0;
}

/*
 * The program a profile capture ran, for a series name: the command line after " -- " (what
 * `roofkit profile -- PROGRAM` ran), its first word that is neither an interpreter (python3,
 * env, ...) nor an option or assignment after one, as a basename ("python3 a/b/torch_mix.py"
 * gives "torch_mix.py"); the whole command line when it has no " -- "; "?" when none.
 */
void rp_program_name(const char *cmdline, char *out, size_t len)
{
    const char *args = cmdline ? strstr(cmdline, " -- ") : NULL, *s;
    int after_interp = 0;
    if (!cmdline || !*cmdline) {
        snprintf(out, len, "?");
        return;
    }
    if (!args) {
        snprintf(out, len, "%s", cmdline);
        return;
    }
    for (s = args += 4;;) {
        s += strspn(s, " \t");
        size_t n = strcspn(s, " \t");
        if (n == 0)
            break;
        const char *base = s;
        for (const char *p = s; p < s + n; p++)
            if (*p == '/')
                base = p + 1;
        size_t bn = (size_t)(s + n - base);
        int skip = after_interp && (*s == '-' || memchr(s, '=', n) != NULL);
        if (!skip && !interpreter(base, bn)) {
            snprintf(out, len, "%.*s", (int)bn, base);
            return;
        }
        after_interp |= !skip;
        s += n;
    }
    snprintf(out, len, "%s", args);
}

/* The function name (common/kname.h, as profile's filters see it) of in[0, inlen): no
 * template arguments, argument lists or namespaces; "void at::native::(anonymous
 * namespace)::f<float>(int)" gives "f". Empty when out of memory. */
static void strip_name(const char *in, size_t inlen, char *out, size_t len)
{
    char *s = strndup(in, inlen), *f = s ? rk_kname_function(s) : NULL;
    snprintf(out, len, "%s", f ? f : "");
    free(f);
    free(s);
}

/* Does a kernel's name say nothing of it: "Kernel", "Kernel2", "kernel", "device_kernel"? */
static int generic_wrapper(const char *name)
{
    if (strncmp(name, "device_", 7) == 0)
        name += 7;
    if ((*name != 'K' && *name != 'k') || strncmp(name + 1, "ernel", 5))
        return 0;
    return strspn(name + 6, "0123456789") == strlen(name + 6);
}

/*
 * A short label for a kernel's demangled name: strip_name's, or, for a generic wrapper
 * ("cutlass::Kernel2<cutlass_80_simt_sgemm_...>(...)"), its first template argument's; at most
 * SHORT_NAME_MAX characters, a longer one cut in the middle ("nvjet_sm90_t...bz_coopA_NNT").
 */
void rp_short_kernel_name(const char *in, char *out, size_t len)
{
    char buf[256];
    strip_name(in, strlen(in), buf, sizeof buf);
    if (generic_wrapper(buf)) {
        const char *lt = strchr(in, '<'); /* the wrapper's first template argument */
        if (lt) {
            size_t e = 1;
            int depth = 0;
            for (; lt[e] && !(depth == 0 && (lt[e] == ',' || lt[e] == '>')); e++)
                depth += (lt[e] == '<' || lt[e] == '(') - (lt[e] == '>' || lt[e] == ')');
            char arg[256];
            strip_name(lt + 1, e - 1, arg, sizeof arg);
            if (*arg)
                snprintf(buf, sizeof buf, "%s", arg);
        }
    }
    if (!*buf)
        snprintf(buf, sizeof buf, "%s", in);
    size_t n = strlen(buf);
    if (n > SHORT_NAME_MAX) { /* head and tail: kernels of one family differ in either */
        memmove(buf + SHORT_NAME_MAX / 2 + 1, buf + n - (SHORT_NAME_MAX / 2 - 1),
                SHORT_NAME_MAX / 2);
        memcpy(buf + SHORT_NAME_MAX / 2 - 2, "...", 3);
    }
    snprintf(out, len, "%s", buf);
}

const char *rp_capture_cmdline(const struct rp_data *d, int64_t id)
{
    for (int i = 0; i < d->ncaps_all; i++)
        if (d->caps[i].id == id)
            return d->caps[i].cmdline;
    return NULL;
}

/* ------------------------------------------------------ several GPUs */

/* d->gpus: the devices with a ceiling of their own; d->peer_names and d->peer_devs: the
 * ceilings of GPU pairs and the GPUs at either end of one. */
static int load_gpus(struct rp_data *d)
{
    int npeer = 0;
    unsigned char *in_pair = NULL;
    if (d->ndevs == 0)
        return RK_OK;
    d->gpus = malloc((size_t)d->ndevs * sizeof *d->gpus);
    d->peer_devs = malloc((size_t)d->ndevs * sizeof *d->peer_devs);
    in_pair = calloc((size_t)d->ndevs, 1);
    if (!d->gpus || !d->peer_devs || !in_pair) {
        free(in_pair);
        return rk_error(RK_ENOMEM, "out of memory reading the devices");
    }
    for (int i = 0; i < d->ndevs; i++) {
        const struct analysis_device *a = &d->devs[i].a;
        int own = 0;
        for (int j = 0; j < a->nceil; j++) {
            if (!a->ceil[j].peer_device_id) {
                own = 1;
                continue;
            }
            int k = device_index(d, a->ceil[j].peer_device_id);
            in_pair[i] = 1;
            if (k >= 0)
                in_pair[k] = 1;
            npeer++;
        }
        if (own)
            d->gpus[d->ngpus++] = i;
    }
    for (int i = 0; i < d->ndevs; i++)
        if (in_pair[i])
            d->peer_devs[d->npeer_devs++] = i;
    free(in_pair);
    if (npeer == 0)
        return RK_OK;
    const char **names = malloc((size_t)npeer * sizeof *names);
    if (!names)
        return rk_error(RK_ENOMEM, "out of memory reading the ceilings of GPU pairs");
    npeer = 0;
    for (int i = 0; i < d->ndevs; i++)
        for (int j = 0; j < d->devs[i].a.nceil; j++)
            if (d->devs[i].a.ceil[j].peer_device_id)
                names[npeer++] = d->devs[i].a.ceil[j].name;
    return distinct(names, npeer, &d->peer_names, &d->npeer_names);
}

/* ------------------------------------------------------ ranks */

/* Orders a group's ranks by rank, then capture id. */
static int cmp_rank(const void *pa, const void *pb)
{
    const struct rp_rank *a = pa, *b = pb;
    if (a->cap->rank != b->cap->rank)
        return a->cap->rank < b->cap->rank ? -1 : 1;
    return (a->cap->id > b->cap->id) - (a->cap->id < b->cap->id);
}

/* Is capture c a rank of group g (the same program and world size)? */
static int same_job(const struct db_capture *c, const struct rp_rank_group *g)
{
    char prog[sizeof g->program];
    snprintf(prog, sizeof prog, "%s", rp_program_of(c->cmdline));
    return c->world_size == g->world_size && strcmp(prog, g->program) == 0;
}

static int is_rank(const struct db_capture *c)
{
    return c->kind == DB_CAPTURE_PROFILE && c->rank >= 0;
}

/* d->groups: the profile captures with a rank, grouped by program and world size; the groups
 * of 2 or more captures are kept, in the order of their first capture. */
static int load_rank_groups(struct rp_data *d)
{
    int nrank = 0;
    for (int c = 0; c < d->ncaps; c++)
        nrank += is_rank(&d->caps[c]);
    if (nrank < 2)
        return RK_OK;
    d->groups = calloc((size_t)nrank, sizeof *d->groups);
    if (!d->groups)
        return rk_error(RK_ENOMEM, "out of memory grouping %d ranks", nrank);
    for (int c = 0; c < d->ncaps; c++) {
        const struct db_capture *cap = &d->caps[c];
        struct rp_rank_group *g = NULL;
        if (!is_rank(cap))
            continue;
        for (int k = 0; k < d->ngroups && !g; k++)
            if (same_job(cap, &d->groups[k]))
                g = &d->groups[k];
        if (!g) {
            g = &d->groups[d->ngroups++];
            snprintf(g->program, sizeof g->program, "%s", rp_program_of(cap->cmdline));
            g->world_size = cap->world_size;
            if (!(g->rank = calloc((size_t)nrank, sizeof *g->rank)))
                return rk_error(RK_ENOMEM, "out of memory grouping %d ranks", nrank);
        }
        struct rp_rank *r = &g->rank[g->nrank++];
        r->cap = cap;
        for (int i = 0; i < d->nrows; i++)
            if (d->rows[i].m.capture_id == cap->id && isfinite(d->rows[i].m.time_median_ns)) {
                r->launches++;
                r->time_ns += d->rows[i].m.time_median_ns;
            }
    }
    int kept = 0;
    for (int k = 0; k < d->ngroups; k++) {
        struct rp_rank_group *g = &d->groups[k];
        if (g->nrank < 2) {
            free(g->rank);
            continue;
        }
        qsort(g->rank, (size_t)g->nrank, sizeof *g->rank, cmp_rank);
        for (int i = 0; i < g->nrank; i++) {
            g->total_ns += g->rank[i].time_ns;
            g->max_ns = fmax(g->max_ns, g->rank[i].time_ns);
            g->repeated |= i > 0 && g->rank[i].cap->rank == g->rank[i - 1].cap->rank;
        }
        g->mean_ns = g->total_ns / g->nrank;
        d->groups[kept++] = *g;
    }
    d->ngroups = kept;
    return RK_OK;
}

void rp_data_release(struct rp_data *d)
{
    for (int i = 0; i < d->ndevs; i++) {
        analysis_device_release(&d->devs[i].a);
        free(d->devs[i].top);
    }
    free(d->devs);
    db_free_captures(d->caps, d->ncaps_all);
    db_free_measurements(d->rows, d->nrows_all);
    db_free_energy_spans(d->spans, d->nspans_all);
    free(d->meas);
    free((void *)d->cublas);
    free((void *)d->floors);
    free((void *)d->models);
    free((void *)d->families);
    free(d->gpus);
    free((void *)d->peer_names);
    free(d->peer_devs);
    for (int k = 0; k < d->ngroups; k++)
        free(d->groups[k].rank);
    free(d->groups);
    memset(d, 0, sizeof *d);
}
