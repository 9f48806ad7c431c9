/*
 * ratio.c - how much slower or faster is B than A, and is it more than noise? The ratio of two
 * samples of kernel times with a confidence interval, for `roofkit diff` and the report's
 * comparison with a baseline (docs/compare.md says why this method and what it assumes).
 *
 * Two ways, chosen by what was stored (model.h "Comparing two samples of times"):
 *   - every repetition known: the Hodges-Lehmann estimate of the shift of log times and the
 *     interval of the inverted Mann-Whitney test, exact for small samples (the U distribution
 *     by its recurrence), normal with continuity correction for large ones;
 *   - min, median and max only: an approximate normal interval on the log of the ratio of the
 *     medians, each side's spread estimated from its range.
 *
 * The k-th smallest of the na x nb pairwise differences is found without forming them: a
 * bisection over the doubles (in the order of their bit patterns, so at most 64 steps), each
 * step counting the pairs at or below a value in one merge-like pass over the two sorted
 * samples. Memory O(na + nb) whatever the sizes (a profiled kernel may have 10^5 launches).
 *
 * Pure C11 + libm, no I/O, no global state; allocates the sorted copies and the U
 * distribution's table, freed before returning.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

const char *model_ratio_method_name(enum model_ratio_method m)
{
    switch (m) {
    case MODEL_RATIO_EXACT:
        return "hodges-lehmann";
    case MODEL_RATIO_NORMAL:
        return "hodges-lehmann (normal)";
    case MODEL_RATIO_SUMMARY:
        return "min/median/max";
    case MODEL_RATIO_NONE:
    default:
        return "none";
    }
}

const char *model_change_name(enum model_change c)
{
    switch (c) {
    case MODEL_CHANGE_FASTER:
        return "faster";
    case MODEL_CHANGE_SLOWER:
        return "slower";
    case MODEL_CHANGE_NOISE:
    default:
        return "within noise";
    }
}

enum model_change model_ratio_change_floor(const struct model_ratio *r, double noise)
{
    double widen = noise > 0.0 ? 1.0 + noise : 1.0;
    if (r->method == MODEL_RATIO_NONE)
        return MODEL_CHANGE_NOISE;
    if (r->lo / widen > 1.0)
        return MODEL_CHANGE_SLOWER;
    if (r->hi * widen < 1.0)
        return MODEL_CHANGE_FASTER;
    return MODEL_CHANGE_NOISE;
}

enum model_change model_ratio_change(const struct model_ratio *r)
{
    return model_ratio_change_floor(r, 0.0);
}

/* ------------------------------------------------------------ distributions */

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

double model_normal_quantile(double p)
{
    double lo = -40.0, hi = 40.0;
    if (!(p > 0.0 && p < 1.0))
        return NAN;
    for (int i = 0; i < 200 && hi - lo > 1e-14; i++) {
        double mid = 0.5 * (lo + hi);
        if (normal_cdf(mid) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The density of the range of n standard normal values integrated against x: Simpson's rule
 * on [-12, 12], where the integrand 1 - F^n - (1 - F)^n is below 1e-30 outside. */
double model_expected_range(long n)
{
    const int steps = 4800;
    const double a = -12.0, h = 24.0 / steps;
    double sum = 0.0;
    if (n < 2)
        return NAN;
    for (int i = 0; i <= steps; i++) {
        double x = a + i * h, f = normal_cdf(x);
        double g = 1.0 - pow(f, (double)n) - pow(1.0 - f, (double)n);
        sum += g * (i == 0 || i == steps ? 1.0 : (i % 2 ? 4.0 : 2.0));
    }
    return sum * h / 3.0;
}

/*
 * pmf[0 .. m*n] of the Mann-Whitney U for sizes m and n (no ties), by the recurrence on the
 * largest of the m + n values: with probability m / (m + n) it is a first-sample value, above
 * all n others (U gains n), else a second-sample one (U gains 0):
 *   p(u; m, n) = m / (m + n) p(u - n; m - 1, n) + n / (m + n) p(u; m, n - 1),
 *   p(u; 0, n) = p(u; m, 0) = [u = 0].
 * Two layers of (n + 1) rows of m*n + 1 probabilities. RK_OK or RK_ENOMEM.
 */
static int mw_pmf(long m, long n, double *pmf)
{
    const size_t len = (size_t)(m * n + 1);
    double *prev = calloc((size_t)(n + 1) * len, sizeof *prev);
    double *cur = calloc((size_t)(n + 1) * len, sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return RK_ENOMEM;
    }
    for (long j = 0; j <= n; j++)
        prev[(size_t)j * len] = 1.0; /* m' = 0 */
    for (long i = 1; i <= m; i++) {
        memset(cur, 0, (size_t)(n + 1) * len * sizeof *cur);
        cur[0] = 1.0; /* n' = 0 */
        for (long j = 1; j <= n; j++) {
            const double wa = (double)i / (double)(i + j), wb = (double)j / (double)(i + j);
            double *c = cur + (size_t)j * len;
            const double *up = prev + (size_t)j * len, *left = cur + (size_t)(j - 1) * len;
            for (long u = 0; u <= i * j; u++)
                c[u] = wb * left[u] + (u >= j ? wa * up[u - j] : 0.0);
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    memcpy(pmf, prev + (size_t)n * len, len * sizeof *pmf);
    free(prev);
    free(cur);
    return RK_OK;
}

double model_mann_whitney_cdf(long u, long m, long n)
{
    double *pmf, sum = 0.0;
    if (m < 1 || n < 1 || m * n > MODEL_RATIO_EXACT_MAX)
        return NAN;
    if (u < 0)
        return 0.0;
    if (u >= m * n)
        return 1.0;
    if (!(pmf = malloc((size_t)(m * n + 1) * sizeof *pmf)))
        return NAN;
    if (mw_pmf(m, n, pmf) != RK_OK) {
        free(pmf);
        return NAN;
    }
    for (long i = 0; i <= u; i++)
        sum += pmf[i];
    free(pmf);
    return sum > 1.0 ? 1.0 : sum;
}

/* --------------------------------------------------- pairwise differences */

/* Doubles in the order of a 64-bit key, so that a bisection over keys visits each double
 * between two finite values at most once: negative values have every bit flipped, positive
 * ones the sign bit set. */
static uint64_t key_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
}

static double double_of(uint64_t k)
{
    uint64_t b = (k >> 63) ? k & ~((uint64_t)1 << 63) : ~k;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The number of pairs (i, j) with y[j] - x[i] <= t; x and y ascending. y[j] - x[i] falls as i
 * grows and rises with j, so the first i where it is <= t only moves forward. */
static size_t count_le(const double *x, size_t nx, const double *y, size_t ny, double t)
{
    size_t count = 0, i = 0;
    for (size_t j = 0; j < ny; j++) {
        while (i < nx && y[j] - x[i] > t)
            i++;
        count += nx - i;
    }
    return count;
}

/* The k-th smallest (1-based) of the differences y[j] - x[i]: the least double t with
 * count_le(t) >= k, which is one of the differences. */
static double kth_difference(const double *x, size_t nx, const double *y, size_t ny, size_t k)
{
    double lo = y[0] - x[nx - 1], hi = y[ny - 1] - x[0];
    uint64_t klo, khi;
    if (count_le(x, nx, y, ny, lo) >= k)
        return lo;
    klo = key_of(lo); /* count(lo) < k <= count(hi) */
    khi = key_of(hi);
    while (khi - klo > 1) {
        uint64_t kmid = klo + (khi - klo) / 2;
        if (count_le(x, nx, y, ny, double_of(kmid)) >= k)
            khi = kmid;
        else
            klo = kmid;
    }
    return double_of(khi);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted logs of v[0..n) into a malloc'd array; RK_EUSAGE for a value that is not finite and
 * positive, RK_ENOMEM. */
static int sorted_logs(const double *v, size_t n, double **out)
{
    double *l = malloc(n * sizeof *l);
    if (!l)
        return RK_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(v[i]) && v[i] > 0.0)) {
            free(l);
            return RK_EUSAGE;
        }
        l[i] = log(v[i]);
    }
    qsort(l, n, sizeof *l, cmp_double);
    *out = l;
    return RK_OK;
}

static void no_interval(struct model_ratio *out, double ratio)
{
    out->ratio = ratio;
    out->lo = 0.0;
    out->hi = INFINITY;
    out->conf = NAN;
    out->method = MODEL_RATIO_NONE;
}

/*
 * k for the interval [D(k), D(mn - k + 1)] at confidence conf, and the confidence reached:
 * exact: the least c with P(U <= c) >= alpha / 2 (R's qwilcox), 1 when that is 0; reached
 * 1 - 2 P(U <= k - 1). Normal: k = floor(mn / 2 - z sd + 1 / 2), reached = conf.
 */
static int interval_rank(long m, long n, double conf, size_t *k, double *reached,
                         enum model_ratio_method *method)
{
    const double alpha = 1.0 - conf, mn = (double)m * (double)n;
    if ((double)m * (double)n <= MODEL_RATIO_EXACT_MAX) {
        double *pmf = malloc((size_t)(m * n + 1) * sizeof *pmf), cdf = 0.0;
        long c = 0;
        if (!pmf)
            return RK_ENOMEM;
        if (mw_pmf(m, n, pmf) != RK_OK) {
            free(pmf);
            return RK_ENOMEM;
        }
        /* a relative tolerance: a P(U <= c) that equals alpha / 2 in exact arithmetic counts */
        for (c = 0; c < m * n; c++) {
            cdf += pmf[c];
            if (cdf >= alpha / 2 * (1 - 1e-12))
                break;
        }
        if (c == 0)
            c = 1;
        cdf = 0.0;
        for (long u = 0; u < c; u++)
            cdf += pmf[u];
        free(pmf);
        *k = (size_t)c;
        *reached = 1.0 - 2.0 * cdf;
        *method = MODEL_RATIO_EXACT;
        return RK_OK;
    }
    double z = model_normal_quantile(1.0 - alpha / 2);
    double sd = sqrt(mn * ((double)m + (double)n + 1.0) / 12.0);
    double kk = floor(mn / 2.0 - z * sd + 0.5);
    *k = kk < 1.0 ? 1 : (size_t)kk;
    *reached = conf;
    *method = MODEL_RATIO_NORMAL;
    return RK_OK;
}

int model_ratio_interval(const double *a, size_t na, const double *b, size_t nb, double conf,
                         struct model_ratio *out)
{
    double *x = NULL, *y = NULL, reached = NAN, est;
    size_t k = 0, mn;
    enum model_ratio_method method = MODEL_RATIO_NONE;
    int rc;

    if (!a || !b || !out || na == 0 || nb == 0 || !(conf > 0.0 && conf < 1.0))
        return RK_EUSAGE;
    if ((rc = sorted_logs(a, na, &x)) != RK_OK)
        return rc;
    if ((rc = sorted_logs(b, nb, &y)) != RK_OK) {
        free(x);
        return rc;
    }
    mn = na * nb;
    /* the Hodges-Lehmann estimate: the median of the mn differences of logs */
    if (mn % 2)
        est = kth_difference(x, na, y, nb, (mn + 1) / 2);
    else
        est =
            0.5 * (kth_difference(x, na, y, nb, mn / 2) + kth_difference(x, na, y, nb, mn / 2 + 1));
    rc = interval_rank((long)na, (long)nb, conf, &k, &reached, &method);
    if (rc == RK_OK) {
        const double floor_conf = conf < MODEL_RATIO_MIN_CONF ? conf : MODEL_RATIO_MIN_CONF;
        if (reached < floor_conf * (1 - 1e-12) || k > mn - k + 1) {
            no_interval(out, exp(est));
        } else {
            out->ratio = exp(est);
            out->lo = exp(kth_difference(x, na, y, nb, k));
            out->hi = exp(kth_difference(x, na, y, nb, mn - k + 1));
            out->conf = reached;
            out->method = method;
        }
    }
    free(x);
    free(y);
    return rc;
}

int model_ratio_interval_summary(const struct model_time_summary *a,
                                 const struct model_time_summary *b, double conf,
                                 struct model_ratio *out)
{
    const struct model_time_summary *s[2] = {a, b};
    const double pi = 3.14159265358979323846;
    double se2 = 0.0, est, z;
    if (!a || !b || !out || !(conf > 0.0 && conf < 1.0))
        return RK_EUSAGE;
    for (int i = 0; i < 2; i++)
        if (!(isfinite(s[i]->min) && isfinite(s[i]->max) && s[i]->min > 0.0 &&
              s[i]->min <= s[i]->median && s[i]->median <= s[i]->max && s[i]->n >= 1))
            return RK_EUSAGE;
    est = log(b->median / a->median);
    if (a->n < 2 || b->n < 2) {
        no_interval(out, exp(est));
        return RK_OK;
    }
    for (int i = 0; i < 2; i++) {
        double sigma = log(s[i]->max / s[i]->min) / model_expected_range(s[i]->n);
        se2 += pi / 2.0 * sigma * sigma / (double)s[i]->n;
    }
    z = model_normal_quantile(1.0 - (1.0 - conf) / 2.0);
    out->ratio = exp(est);
    out->lo = exp(est - z * sqrt(se2));
    out->hi = exp(est + z * sqrt(se2));
    out->conf = conf;
    out->method = MODEL_RATIO_SUMMARY;
    return RK_OK;
}
