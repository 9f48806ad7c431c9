/*
 * summary.c - a capture's kernels summed up per name, as `nsys stats` sums up a program's GPU
 * kernels (launches, total and median time, share of the GPU time), with where each kernel
 * stands against its roofs once the model has judged its launches (analysis.h,
 * analysis_kernel_summary). `roofkit profile` prints it after a run and on `--summary`.
 *
 * The roof and bound of a launch are analysis_place()'s, the ceiling policy of the model and
 * the report: nothing here picks a ceiling. A kernel's % of roof is the time-weighted mean of its
 * launches' (100 x the time the roofs allow over the time taken, summed over its launches), so
 * that its long launches weigh as much as they cost; its bound is the one of most of that time.
 *
 * Energy comes from the capture's energy spans (profile --energy): a kernel's figure is its
 * 'kernel' spans' (the counter's windows apportioned to its launches, collect/energy.c), never
 * a share of the program's energy made up here; a kernel without one says "too short".
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The devices the launches ran on, loaded once each. */
struct devs {
    int64_t *id;
    struct analysis_device *d;
    int *ok;
    int n;
};

static const struct analysis_device *dev_get(struct db *db, struct devs *v, int64_t id)
{
    if (id <= 0)
        return NULL;
    for (int i = 0; i < v->n; i++)
        if (v->id[i] == id)
            return v->ok[i] ? &v->d[i] : NULL;
    int64_t *ids = realloc(v->id, (size_t)(v->n + 1) * sizeof *ids);
    if (ids)
        v->id = ids;
    struct analysis_device *d = realloc(v->d, (size_t)(v->n + 1) * sizeof *d);
    if (d)
        v->d = d;
    int *ok = realloc(v->ok, (size_t)(v->n + 1) * sizeof *ok);
    if (ok)
        v->ok = ok;
    if (!ids || !d || !ok)
        return NULL; /* no roof for this launch, as for an unknown device */
    int i = v->n++;
    v->id[i] = id;
    v->ok[i] = analysis_device_load(db, id, &v->d[i]) == RK_OK;
    return v->ok[i] ? &v->d[i] : NULL;
}

static void devs_release(struct devs *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->ok[i])
            analysis_device_release(&v->d[i]);
    free(v->id);
    free(v->d);
    free(v->ok);
}

/* Pointers to the measurement rows, by kernel name, then in stored order. */
static int by_name(const void *a, const void *b)
{
    const struct db_measurement_row *x = *(const struct db_measurement_row *const *)a;
    const struct db_measurement_row *y = *(const struct db_measurement_row *const *)b;
    int c = strcmp(x->m.kernel, y->m.kernel);
    return c ? c : (x > y) - (x < y);
}

static int by_total(const void *a, const void *b)
{
    const struct analysis_kernel_sum *x = a, *y = b;
    int kx = isfinite(x->total_ns), ky = isfinite(y->total_ns);
    if (kx != ky)
        return ky - kx; /* known times first */
    if (kx && x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->kernel, y->kernel);
}

/* One kernel from its rows r[0..n): times, and the roofs of the launches the model judged. */
static int sum_kernel(struct db *db, struct devs *v, int64_t cap_device,
                      const struct db_measurement_row *const *rows, int n,
                      struct analysis_kernel_sum *k)
{
    double *t = malloc((size_t)n * sizeof *t);
    double allowed = 0, judged_time = 0, bound_time[2] = {0, 0};
    if (!t || !(k->kernel = strdup(rows[0]->m.kernel))) {
        free(t);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    k->launches = n;
    k->total_ns = 0;
    for (int i = 0; i < n; i++) {
        const struct db_measurement_row *r = rows[i];
        double ns = r->m.time_median_ns;
        if (isfinite(ns) && ns > 0) {
            t[k->timed++] = ns;
            k->total_ns += ns;
        }
        if (r->n_predictions == 0)
            continue; /* not judged by the model yet */
        struct analysis_point p;
        analysis_place(dev_get(db, v, r->m.device_id ? r->m.device_id : cap_device), r, &p);
        if (!isfinite(p.pct_roof) || !isfinite(p.time_s) || !p.bound)
            continue;
        k->judged++;
        allowed += p.pct_roof / 100.0 * p.time_s;
        judged_time += p.time_s;
        bound_time[strcmp(p.bound, "compute") == 0] += p.time_s;
    }
    if (k->timed == 0)
        k->total_ns = NAN;
    k->median_ns = k->timed ? model_median(t, (size_t)k->timed) : NAN;
    k->pct_roof = k->judged && judged_time > 0 ? 100.0 * allowed / judged_time : NAN;
    k->bound = k->judged ? (bound_time[1] >= bound_time[0] ? "compute" : "dram") : NULL;
    k->share_pct = NAN;
    free(t);
    return RK_OK;
}

/* Each kernel's energy from the capture's 'kernel' spans; a failed query leaves none. */
static void add_energy(struct db *db, int64_t capture_id, struct analysis_kernel_sum *k, int nk)
{
    struct db_energy_span *s = NULL;
    int ns = 0;
    for (int i = 0; i < nk; i++) {
        k[i].energy_j = k[i].energy_per_launch_j = k[i].power_w = NAN;
        k[i].energy_scope = NULL;
    }
    if (db_query_energy_spans(db, capture_id, &s, &ns) != RK_OK || ns == 0) {
        db_free_energy_spans(s, ns);
        return;
    }
    int parts = 0; /* kernel or NVTX readings: the launches were timed (no counters) */
    for (int x = 0; x < ns; x++)
        parts += strcmp(s[x].scope, "program") != 0;
    for (int i = 0; i < nk; i++) {
        double j = 0, t = 0;
        long launches = 0;
        int found = 0;
        for (int x = 0; x < ns; x++) {
            if (strcmp(s[x].scope, "kernel") != 0 || strcmp(s[x].name, k[i].kernel) != 0 ||
                !isfinite(s[x].energy_j))
                continue;
            found = 1;
            j += s[x].energy_j;
            t += isfinite(s[x].time_ns) ? s[x].time_ns : 0;
            launches += s[x].launches > 0 ? s[x].launches : 0;
        }
        k[i].energy_scope = found ? "kernel" : parts ? "too short" : "program only";
        if (!found)
            continue;
        k[i].energy_j = j;
        k[i].energy_per_launch_j = launches > 0 ? j / (double)launches : NAN;
        k[i].power_w = t > 0 ? j / (t * 1e-9) : NAN;
    }
    db_free_energy_spans(s, ns);
}

int analysis_kernel_summary(struct db *db, int64_t capture_id, struct analysis_kernel_sum **out,
                            int *n)
{
    struct db_measurement_row *rows = NULL;
    struct db_capture cap;
    struct devs v = {0};
    const struct db_measurement_row **by = NULL;
    int nrows = 0, nk = 0, rc;
    struct analysis_kernel_sum *k = NULL;
    double all = 0;

    *out = NULL;
    *n = 0;
    if ((rc = db_get_capture(db, capture_id, &cap)) != RK_OK)
        return rc;
    int64_t cap_device = cap.device_id;
    db_capture_release(&cap);
    if ((rc = db_query_measurements(db, capture_id, &rows, &nrows)) != RK_OK)
        return rc;
    if (nrows > 0 &&
        (!(by = malloc((size_t)nrows * sizeof *by)) || !(k = calloc((size_t)nrows, sizeof *k)))) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    for (int i = 0; i < nrows; i++)
        by[i] = &rows[i];
    if (nrows > 0)
        qsort(by, (size_t)nrows, sizeof *by, by_name);
    for (int i = 0; i < nrows && rc == RK_OK;) {
        int j = i + 1;
        while (j < nrows && strcmp(by[j]->m.kernel, by[i]->m.kernel) == 0)
            j++;
        rc = sum_kernel(db, &v, cap_device, by + i, j - i, &k[nk++]);
        i = j;
    }
    if (rc != RK_OK)
        goto out;
    for (int i = 0; i < nk; i++)
        if (isfinite(k[i].total_ns))
            all += k[i].total_ns;
    for (int i = 0; i < nk; i++)
        k[i].share_pct = isfinite(k[i].total_ns) && all > 0 ? 100.0 * k[i].total_ns / all : NAN;
    add_energy(db, capture_id, k, nk);
    if (nk > 0)
        qsort(k, (size_t)nk, sizeof *k, by_total);
    *out = k;
    *n = nk;
    k = NULL;
out:
    analysis_kernel_summary_free(k, nk);
    devs_release(&v);
    free(by);
    db_free_measurements(rows, nrows);
    return rc;
}

void analysis_kernel_summary_free(struct analysis_kernel_sum *s, int n)
{
    for (int i = 0; s && i < n; i++)
        free(s[i].kernel);
    free(s);
}
