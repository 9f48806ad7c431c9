/*
 * reference.c - what a TSM2/ISM2 measurement is compared with, decided here once for the
 * report, the run summary and the CI checks (analysis.h "the cuBLAS reference"):
 *
 *   - its reference is the faster of the cuBLAS calls (cublasSgemm/Dgemm and cublasGemmEx)
 *     measured on the same shape, precision and cache state in the same capture, verified
 *     and on the same arithmetic: a GemmEx that rounds fp32 to TF32 computes another product
 *     and is never a reference;
 *   - its effective bandwidth counts A, B and C once, (m k + k n + m n) x element size over
 *     the median time, as 004_dab40fe45003313a.txt Fig. 5 and Fig. 14 do;
 *   - the ceiling that bandwidth is held to is the copy's (bw_dram_copy: read + written
 *     bytes of a device-to-device copy, what such a kernel does at best);
 *   - its floor is the kernel move measured beside it (the same capture, GPU, precision,
 *     cache state and shape, verified): the shape's bytes moved and nothing computed, what
 *     the copy ceiling comes to at this size, launch and ramp-up included. It is never a
 *     reference, nor judged by one.
 * Pure functions of the rows: no database; analysis_speedups allocates one scratch array.
 */
#include "analysis.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int is_cublas(const struct db_measurement *m)
{
    return same_str(m->family, "cublas");
}

static int is_move(const struct db_measurement *m)
{
    return same_str(m->family, "move");
}

/* c was measured beside x: the same capture and GPU, precision, cache state and shape (m > 0),
 * verified, with a median time. */
static int beside(const struct db_measurement *x, const struct db_measurement *c)
{
    if (c->capture_id != x->capture_id || c->device_id != x->device_id)
        return 0; /* another run: another GPU state, another clock, another day */
    if (!same_str(c->precision, x->precision) || !same_str(c->cache_state, x->cache_state))
        return 0;
    if (x->m <= 0 || c->m != x->m || c->n != x->n || c->k != x->k)
        return 0;
    return c->verified == 1 && c->time_median_ns > 0;
}

int analysis_reference_ok(const struct db_measurement *x, const struct db_measurement *c)
{
    long tf32 = 0;
    if (!x || !c || x == c || is_cublas(x) || is_move(x) || !is_cublas(c) || !beside(x, c))
        return 0;
    if (c->params && rk_json_long(c->params, "tf32", &tf32) == RK_OK && tf32 == 1)
        return 0;
    return 1;
}

int analysis_floor_ok(const struct db_measurement *x, const struct db_measurement *f)
{
    return x && f && x != f && !is_move(x) && is_move(f) && beside(x, f);
}

/* Of a and b, the faster that ok accepts for x; NULL when neither. */
static const struct db_measurement *
pick(const struct db_measurement *x, const struct db_measurement *a, const struct db_measurement *b,
     int (*ok)(const struct db_measurement *, const struct db_measurement *))
{
    if (!ok(x, a))
        a = NULL;
    if (!ok(x, b))
        b = NULL;
    if (!a || !b)
        return a ? a : b;
    if (a->time_median_ns != b->time_median_ns)
        return a->time_median_ns < b->time_median_ns ? a : b;
    return a->id <= b->id ? a : b;
}

const struct db_measurement *analysis_floor_pick(const struct db_measurement *x,
                                                 const struct db_measurement *a,
                                                 const struct db_measurement *b)
{
    return pick(x, a, b, analysis_floor_ok);
}

const struct db_measurement *analysis_reference_pick(const struct db_measurement *x,
                                                     const struct db_measurement *a,
                                                     const struct db_measurement *b)
{
    return pick(x, a, b, analysis_reference_ok);
}

double analysis_effective_bytes(const struct db_measurement *m)
{
    const int e = m && m->precision ? analysis_elem_bytes(m->precision) : 0;
    if (!e || m->m <= 0 || m->n <= 0 || m->k <= 0)
        return NAN;
    return ((double)m->m * (double)m->k + (double)m->k * (double)m->n +
            (double)m->m * (double)m->n) *
           e;
}

double analysis_effective_bandwidth(const struct db_measurement *m)
{
    const double bytes = analysis_effective_bytes(m);
    if (!m || !(m->time_median_ns > 0) || isnan(bytes))
        return NAN;
    return bytes / (m->time_median_ns * 1e-9);
}

const struct db_ceiling *analysis_copy_ceiling(const struct analysis_device *d)
{
    const struct db_ceiling *c = d ? analysis_find_ceiling(d, "bw_dram_copy") : NULL;
    return isnan(analysis_ceiling_si(c)) ? NULL : c;
}

/* The group of (kernel, precision) in out[0..*n), added when new; NULL when out is full. */
static struct analysis_speedup *group_of(const struct db_measurement *x,
                                         struct analysis_speedup *out, int max, int *n)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].kernel, x->kernel) == 0 && strcmp(out[i].precision, x->precision) == 0)
            return &out[i];
    if (*n == max)
        return NULL;
    memset(&out[*n], 0, sizeof out[*n]);
    snprintf(out[*n].kernel, sizeof out[*n].kernel, "%s", x->kernel);
    snprintf(out[*n].precision, sizeof out[*n].precision, "%s", x->precision);
    out[*n].worst = INFINITY;
    return &out[(*n)++];
}

/* x's judge among rows[0..n) (its reference or its floor) over x: the judge's median time over
 * x's; NaN when it has none. */
static double ratio_of(const struct db_measurement_row *rows, int n, const struct db_measurement *x,
                       analysis_pick_fn judge)
{
    const struct db_measurement *j = NULL;
    for (int i = 0; i < n; i++)
        j = judge(x, j, &rows[i].m);
    return j && x->time_median_ns > 0 ? j->time_median_ns / x->time_median_ns : NAN;
}

/* 1 when x and y are one kernel's configurations of one shape, precision and cache state. */
static int same_shape(const struct db_measurement *x, const struct db_measurement *y)
{
    return same_str(y->kernel, x->kernel) && same_str(y->precision, x->precision) && y->m == x->m &&
           y->n == x->n && y->k == x->k && same_str(y->cache_state, x->cache_state);
}

/* analysis_speedups and analysis_floors: the ratios to each row's judge, per kernel and
 * precision, each shape's best configuration. */
static int sum_up(const struct db_measurement_row *rows, int n, struct analysis_speedup *out,
                  int max, int *nout, analysis_pick_fn judge)
{
    double *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    int rc = RK_OK;
    *nout = 0;
    if (!r)
        return RK_ENOMEM;
    for (int i = 0; i < n; i++) {
        const struct db_measurement *x = &rows[i].m;
        r[i] = is_cublas(x) || is_move(x) || x->verified == 0 || !x->precision
                   ? NAN
                   : ratio_of(rows, n, x, judge);
    }
    for (int i = 0; i < n && rc == RK_OK; i++) {
        const struct db_measurement *x = &rows[i].m;
        double best = r[i];
        int later = 0;
        if (isnan(best))
            continue;
        /* one value per shape: its best configuration, counted at the shape's first row */
        for (int j = 0; j < n && !later; j++) {
            if (j == i || isnan(r[j]) || !same_shape(x, &rows[j].m))
                continue;
            later = j < i;
            best = r[j] > best ? r[j] : best;
        }
        if (later)
            continue;
        struct analysis_speedup *g = group_of(x, out, max, nout);
        if (!g) {
            rc = RK_ENOMEM;
            break;
        }
        g->geomean += log(best); /* the sum of logs until the end */
        g->shapes++;
        g->below_90 += best < 0.9;
        if (best < g->worst) {
            g->worst = best;
            g->worst_m = x->m, g->worst_n = x->n, g->worst_k = x->k;
        }
    }
    for (int i = 0; i < *nout; i++)
        out[i].geomean = exp(out[i].geomean / out[i].shapes);
    free(r);
    return rc;
}

int analysis_speedups(const struct db_measurement_row *rows, int n, struct analysis_speedup *out,
                      int max, int *nout)
{
    return sum_up(rows, n, out, max, nout, analysis_reference_pick);
}

int analysis_floors(const struct db_measurement_row *rows, int n, struct analysis_speedup *out,
                    int max, int *nout)
{
    return sum_up(rows, n, out, max, nout, analysis_floor_pick);
}
