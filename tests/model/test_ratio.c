/*
 * test_ratio.c - model/ratio.c: the ratio of two samples of times with its interval, which
 * `roofkit diff` classes as faster, slower or within noise.
 *
 * Case map:
 *   R01 the distributions it stands on: the Mann-Whitney U's CDF against exact fractions
 *       (3x3, 4x5, 10x10 around its 2.5 % point, 20x20), the normal quantile, d2(n)
 *   R02 known samples: b = 2a gives ratio 2 inside its interval; the 10x10 interval is the
 *       24th smallest and 24th largest pairwise ratio, checked against a brute force over
 *       every pair, at 95.7 % reached confidence
 *   R03 identical samples: ratio 1, the interval holds 1, within noise
 *   R04 a 10 % slowdown under 1 % noise (10 repetitions a side) is slower, its interval inside
 *       [1.08, 1.12]; 10 % faster is faster
 *   R05 coverage by simulation: 1000 pairs of lognormal samples (10 a side, 3 % noise, true
 *       ratio 1.07): the interval holds 1.07 at least 93 % of the time; with ratio 1, at most
 *       7 % are classed slower or faster
 *   R06 small samples: 3 a side reach 90 % (the full range of the pairwise ratios); 2 a side
 *       give no interval (within noise whatever the values); 1 against 40 reaches 95 %
 *   R07 large samples: 30x30 uses the normal approximation and still flags a 5 % change under
 *       1 % noise; 100,000 launches a side take well under a second
 *   R08 from min/median/max: identical summaries within noise, scaled by 1.3 slower with the
 *       interval around 1.3, a side of one value has no interval, and a wide range (an
 *       outlier) makes a 5 % change within noise
 *   R09 bad input: an empty side, zero, NaN, infinity, conf outside (0, 1), a summary with
 *       min > median: RK_EUSAGE
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

/* A reproducible normal generator: a 64-bit LCG and Box-Muller. */
static uint64_t lcg_state;
static double uniform01(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(lcg_state >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}
/* n times of median `center` with relative noise `noise` (lognormal). */
static void sample(double *v, size_t n, double center, double noise)
{
    for (size_t i = 0; i < n; i++)
        v[i] = center * exp(noise * gauss());
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------- R01 */

static void r01_distributions(void **state)
{
    (void)state;
    /* exact values from the U recurrence in rational arithmetic */
    assert_true(fabs(model_mann_whitney_cdf(0, 3, 3) - 0.05) < 1e-12);
    assert_true(fabs(model_mann_whitney_cdf(3, 4, 5) - 5.0 / 90.0) < 1e-12);
    assert_true(fabs(model_mann_whitney_cdf(22, 10, 10) - 0.01773149451168027) < 1e-12);
    assert_true(fabs(model_mann_whitney_cdf(23, 10, 10) - 0.02162852627248912) < 1e-12);
    assert_true(fabs(model_mann_whitney_cdf(24, 10, 10) - 0.026212951135551756) < 1e-12);
    assert_true(fabs(model_mann_whitney_cdf(50, 20, 20) - 7.823171241462096e-06) < 1e-15);
    assert_true(model_mann_whitney_cdf(-1, 3, 3) == 0.0);
    assert_true(model_mann_whitney_cdf(9, 3, 3) == 1.0);
    assert_true(isnan(model_mann_whitney_cdf(1, 21, 20))); /* beyond the exact table */
    assert_true(isnan(model_mann_whitney_cdf(1, 0, 3)));

    assert_true(fabs(model_normal_quantile(0.975) - 1.9599639845400536) < 1e-9);
    assert_true(fabs(model_normal_quantile(0.5)) < 1e-12);
    assert_true(fabs(model_normal_quantile(0.05) + 1.6448536269514722) < 1e-9);
    assert_true(isnan(model_normal_quantile(0.0)) && isnan(model_normal_quantile(1.0)));

    /* d2: 2 / sqrt(pi) for two values, the quality-control tables' 1.693, 2.326, 3.078 */
    assert_true(fabs(model_expected_range(2) - 2.0 / sqrt(3.14159265358979323846)) < 1e-6);
    assert_true(fabs(model_expected_range(3) - 1.692569) < 1e-5);
    assert_true(fabs(model_expected_range(5) - 2.325929) < 1e-5);
    assert_true(fabs(model_expected_range(10) - 3.077505) < 1e-5);
    assert_true(isnan(model_expected_range(1)));
}

/* ------------------------------------------------------------------- R02 */

static void r02_known(void **state)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5];
    double x[10], y[10], d[100];
    struct model_ratio r;
    (void)state;
    for (int i = 0; i < 5; i++)
        b[i] = 2 * a[i];
    assert_int_equal(model_ratio_interval(a, 5, b, 5, 0.95, &r), RK_OK);
    assert_true(fabs(r.ratio - 2.0) < 1e-12);
    assert_true(r.lo < 2.0 && r.hi > 2.0);
    assert_int_equal(r.method, MODEL_RATIO_EXACT);

    /* 10 x 10: k = 24 (P(U <= 23) = 0.0216 < 0.025 <= P(U <= 24)); brute force over pairs */
    lcg_state = 11;
    sample(x, 10, 1000.0, 0.05);
    sample(y, 10, 1030.0, 0.05);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++)
            d[i * 10 + j] = log(y[j]) - log(x[i]);
    qsort(d, 100, sizeof *d, cmp_double);
    assert_int_equal(model_ratio_interval(x, 10, y, 10, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_EXACT);
    assert_true(fabs(log(r.lo) - d[23]) < 1e-12);
    assert_true(fabs(log(r.hi) - d[76]) < 1e-12);
    assert_true(fabs(log(r.ratio) - 0.5 * (d[49] + d[50])) < 1e-12);
    assert_true(fabs(r.conf - (1 - 2 * 0.02162852627248912)) < 1e-9);
    /* the inputs are untouched */
    assert_true(x[0] != x[1] || x[1] != x[2]);
}

/* ------------------------------------------------------------------- R03 */

static void r03_identical(void **state)
{
    double a[10];
    struct model_ratio r;
    (void)state;
    lcg_state = 3;
    sample(a, 10, 5000.0, 0.02);
    assert_int_equal(model_ratio_interval(a, 10, a, 10, 0.95, &r), RK_OK);
    assert_true(r.ratio == 1.0);
    assert_true(r.lo <= 1.0 && r.hi >= 1.0);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_NOISE);
    assert_string_equal(model_change_name(model_ratio_change(&r)), "within noise");
    assert_string_equal(model_ratio_method_name(r.method), "hodges-lehmann");
}

/* ------------------------------------------------------------------- R04 */

static void r04_slowdown(void **state)
{
    double a[10], b[10];
    struct model_ratio r;
    (void)state;
    lcg_state = 4;
    sample(a, 10, 20000.0, 0.01);
    sample(b, 10, 22000.0, 0.01);
    assert_int_equal(model_ratio_interval(a, 10, b, 10, 0.95, &r), RK_OK);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_SLOWER);
    assert_true(r.lo > 1.08 && r.hi < 1.12);
    assert_true(fabs(r.ratio - 1.1) < 0.01);
    /* a 10 % change: beyond a 5 % noise floor, within a 15 % one */
    assert_int_equal(model_ratio_change_floor(&r, 0.05), MODEL_CHANGE_SLOWER);
    assert_int_equal(model_ratio_change_floor(&r, 0.15), MODEL_CHANGE_NOISE);
    assert_int_equal(model_ratio_change_floor(&r, 0.0), MODEL_CHANGE_SLOWER);
    assert_int_equal(model_ratio_interval(b, 10, a, 10, 0.95, &r), RK_OK);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_FASTER);
    assert_int_equal(model_ratio_change_floor(&r, 0.05), MODEL_CHANGE_FASTER);
    assert_int_equal(model_ratio_change_floor(&r, 0.15), MODEL_CHANGE_NOISE);
    assert_string_equal(model_change_name(MODEL_CHANGE_FASTER), "faster");
    assert_string_equal(model_change_name(MODEL_CHANGE_SLOWER), "slower");
}

/* ------------------------------------------------------------------- R05 */

static void r05_coverage(void **state)
{
    double a[10], b[10];
    struct model_ratio r;
    int covered = 0, flagged = 0;
    (void)state;
    lcg_state = 5;
    for (int t = 0; t < 1000; t++) {
        sample(a, 10, 1000.0, 0.03);
        sample(b, 10, 1070.0, 0.03);
        assert_int_equal(model_ratio_interval(a, 10, b, 10, 0.95, &r), RK_OK);
        covered += r.lo <= 1.07 && 1.07 <= r.hi;
    }
    assert_true(covered >= 930);
    for (int t = 0; t < 1000; t++) {
        sample(a, 10, 1000.0, 0.03);
        sample(b, 10, 1000.0, 0.03);
        assert_int_equal(model_ratio_interval(a, 10, b, 10, 0.95, &r), RK_OK);
        flagged += model_ratio_change(&r) != MODEL_CHANGE_NOISE;
    }
    assert_true(flagged <= 70);
}

/* ------------------------------------------------------------------- R06 */

static void r06_small(void **state)
{
    double a[3] = {100, 101, 102}, b[3] = {110, 111, 112}, one[1] = {100}, many[40];
    struct model_ratio r;
    (void)state;
    assert_int_equal(model_ratio_interval(a, 3, b, 3, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_EXACT);
    assert_true(fabs(r.conf - 0.9) < 1e-12);
    assert_true(fabs(r.lo - 110.0 / 102.0) < 1e-12 && fabs(r.hi - 112.0 / 100.0) < 1e-12);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_SLOWER);

    assert_int_equal(model_ratio_interval(a, 2, b, 2, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_NONE);
    assert_true(isnan(r.conf) && r.lo == 0.0 && isinf(r.hi));
    assert_true(fabs(r.ratio - 110.0 / 100.0) < 0.02);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_NOISE);
    assert_string_equal(model_ratio_method_name(r.method), "none");

    /* one launch against 40: P(U <= 0) = 1/41 < 0.025, so 95 % is reached */
    lcg_state = 6;
    sample(many, 40, 100.0, 0.01);
    one[0] = 130.0;
    assert_int_equal(model_ratio_interval(many, 40, one, 1, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_EXACT);
    assert_true(r.conf >= 0.95);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_SLOWER);
}

/* ------------------------------------------------------------------- R07 */

static void r07_large(void **state)
{
    double a[30], b[30], *x, *y;
    const size_t big = 100000;
    struct model_ratio r;
    clock_t t0;
    (void)state;
    lcg_state = 7;
    sample(a, 30, 1000.0, 0.01);
    sample(b, 30, 1050.0, 0.01);
    assert_int_equal(model_ratio_interval(a, 30, b, 30, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_NORMAL);
    assert_string_equal(model_ratio_method_name(r.method), "hodges-lehmann (normal)");
    assert_true(fabs(r.conf - 0.95) < 1e-12);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_SLOWER);
    assert_true(r.lo < 1.05 && r.hi > 1.05);

    x = malloc(big * sizeof *x);
    y = malloc(big * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    sample(x, big, 1000.0, 0.05);
    sample(y, big, 1000.0, 0.05);
    t0 = clock();
    assert_int_equal(model_ratio_interval(x, big, y, big, 0.95, &r), RK_OK);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
    assert_true(r.lo <= 1.0 && r.hi >= 1.0 && r.hi / r.lo < 1.01);
    free(x);
    free(y);
}

/* ------------------------------------------------------------------- R08 */

static void r08_summary(void **state)
{
    struct model_time_summary a = {98.0, 100.0, 103.0, 10}, b = a, one = {100, 100, 100, 1};
    struct model_time_summary wide = {95.0, 100.0, 180.0, 10}, wide_b;
    struct model_ratio r;
    (void)state;
    assert_int_equal(model_ratio_interval_summary(&a, &b, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_SUMMARY);
    assert_string_equal(model_ratio_method_name(r.method), "min/median/max");
    assert_true(r.ratio == 1.0 && r.lo < 1.0 && r.hi > 1.0);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_NOISE);

    b.min *= 1.3, b.median *= 1.3, b.max *= 1.3;
    assert_int_equal(model_ratio_interval_summary(&a, &b, 0.95, &r), RK_OK);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_SLOWER);
    assert_true(fabs(r.ratio - 1.3) < 1e-12 && r.lo > 1.25 && r.hi < 1.35);

    assert_int_equal(model_ratio_interval_summary(&one, &b, 0.95, &r), RK_OK);
    assert_int_equal(r.method, MODEL_RATIO_NONE);
    assert_true(fabs(r.ratio - 1.3) < 1e-12);

    wide_b = wide;
    wide_b.min *= 1.05, wide_b.median *= 1.05, wide_b.max *= 1.05;
    assert_int_equal(model_ratio_interval_summary(&wide, &wide_b, 0.95, &r), RK_OK);
    assert_int_equal(model_ratio_change(&r), MODEL_CHANGE_NOISE);
}

/* ------------------------------------------------------------------- R09 */

static void r09_bad(void **state)
{
    double a[3] = {1, 2, 3}, z[3] = {1, 0, 3}, n[3] = {1, NAN, 3}, inf[3] = {1, INFINITY, 3};
    struct model_time_summary s = {1, 2, 3, 10}, bad = {3, 2, 1, 10};
    struct model_ratio r;
    (void)state;
    assert_int_equal(model_ratio_interval(a, 0, a, 3, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(a, 3, z, 3, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(n, 3, a, 3, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(a, 3, inf, 3, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(a, 3, a, 3, 1.0, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(a, 3, a, 3, 0.0, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval(NULL, 3, a, 3, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval_summary(&s, &bad, 0.95, &r), RK_EUSAGE);
    assert_int_equal(model_ratio_interval_summary(&s, &s, 1.5, &r), RK_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(r01_distributions), cmocka_unit_test(r02_known),
        cmocka_unit_test(r03_identical),     cmocka_unit_test(r04_slowdown),
        cmocka_unit_test(r05_coverage),      cmocka_unit_test(r06_small),
        cmocka_unit_test(r07_large),         cmocka_unit_test(r08_summary),
        cmocka_unit_test(r09_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
