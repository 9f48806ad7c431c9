/*
 * stats.c - how roofkit scores a model against measurements: signed relative
 * error, mean / median / percentile absolute percentage error, geometric mean
 * (docs/model.md "Error statistics"). The model-validation targets (e.g. a
 * 90th-percentile error) are computed here so that the report and the tests agree.
 *
 * Assumes: inputs are caller-owned arrays that are never modified (the median and
 * percentiles sort a malloc'd copy, freed before returning), except model_median's, which
 * it sorts in place. No I/O.
 */
#include <math.h>
#include <stdlib.h>

#include "model.h"

double model_rel_error(double predicted, double measured)
{
    if (!isfinite(predicted) || !isfinite(measured) || measured == 0.0)
        return NAN;
    return (predicted - measured) / measured;
}

/* APE_i in percent into ape[] (n entries); RK_EUSAGE on a bad pair. */
static int fill_ape(const double *pred, const double *meas, size_t n, double *ape)
{
    for (size_t i = 0; i < n; i++) {
        double r = model_rel_error(pred[i], meas[i]);
        if (isnan(r))
            return RK_EUSAGE;
        ape[i] = 100.0 * fabs(r);
    }
    return RK_OK;
}

int model_mape(const double *pred, const double *meas, size_t n, double *out)
{
    if (!pred || !meas || !out || n == 0)
        return RK_EUSAGE;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = model_rel_error(pred[i], meas[i]);
        if (isnan(r))
            return RK_EUSAGE;
        sum += 100.0 * fabs(r);
    }
    *out = sum / (double)n;
    return RK_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile of a sorted array, linear interpolation between order statistics
 * (position pct/100 * (n - 1), the "linear" method of NumPy and R type 7). */
static double sorted_percentile(const double *x, size_t n, double pct)
{
    double pos = pct / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return x[lo] + (x[hi] - x[lo]) * frac;
}

double model_median(double *v, size_t n)
{
    if (!v || n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int model_percentile(const double *x, size_t n, double pct, double *out)
{
    double *copy = NULL;
    int rc = RK_OK;

    if (!x || !out || n == 0 || !(pct >= 0.0 && pct <= 100.0))
        return RK_EUSAGE;
    copy = malloc(n * sizeof *copy);
    if (!copy)
        return RK_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            rc = RK_EUSAGE;
            goto out;
        }
        copy[i] = x[i];
    }
    qsort(copy, n, sizeof *copy, cmp_double);
    *out = sorted_percentile(copy, n, pct);
out:
    free(copy);
    return rc;
}

int model_ape_percentile(const double *pred, const double *meas, size_t n, double pct, double *out)
{
    double *ape = NULL;
    int rc;

    if (!pred || !meas || !out || n == 0 || !(pct >= 0.0 && pct <= 100.0))
        return RK_EUSAGE;
    ape = malloc(n * sizeof *ape);
    if (!ape)
        return RK_ENOMEM;
    rc = fill_ape(pred, meas, n, ape);
    if (rc != RK_OK)
        goto out;
    qsort(ape, n, sizeof *ape, cmp_double);
    *out = sorted_percentile(ape, n, pct);
out:
    free(ape);
    return rc;
}

int model_ape_within(const double *pred, const double *meas, size_t n, double pct, size_t *out)
{
    size_t within = 0;
    if (!pred || !meas || !out || n == 0 || !(pct >= 0.0))
        return RK_EUSAGE;
    for (size_t i = 0; i < n; i++) {
        double r = model_rel_error(pred[i], meas[i]);
        if (isnan(r))
            return RK_EUSAGE;
        within += 100.0 * fabs(r) <= pct;
    }
    *out = within;
    return RK_OK;
}

int model_ape_summarize(const double *pred, const double *meas, size_t n,
                        struct model_ape_summary *out)
{
    int rc;
    if (!out)
        return RK_EUSAGE;
    if ((rc = model_mape(pred, meas, n, &out->mean)) != RK_OK ||
        (rc = model_median_ape(pred, meas, n, &out->median)) != RK_OK ||
        (rc = model_ape_percentile(pred, meas, n, 90.0, &out->p90)) != RK_OK ||
        (rc = model_ape_within(pred, meas, n, 10.0, &out->within10)) != RK_OK ||
        (rc = model_ape_within(pred, meas, n, 25.0, &out->within25)) != RK_OK)
        return rc;
    return RK_OK;
}

int model_median_ape(const double *pred, const double *meas, size_t n, double *out)
{
    return model_ape_percentile(pred, meas, n, 50.0, out);
}

int model_geomean(const double *x, size_t n, double *out)
{
    if (!x || !out || n == 0)
        return RK_EUSAGE;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] <= 0.0)
            return RK_EUSAGE;
        sum += log(x[i]); /* logs: no overflow for products of many large values */
    }
    *out = exp(sum / (double)n);
    return RK_OK;
}
