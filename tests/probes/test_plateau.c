/*
 * test_plateau.c - the plateau detector of probes/plateau.c on synthetic curves.
 *
 * Case ids:
 *   P1  an H100's 64-bit chase (L1 32, L2 near 293, far 472, DRAM 661 at
 *       512 MB), sampled 3 points per octave with transitions between: every level
 *       found within 5%
 *   P2  an H100's 32-bit-index curve (38.9 / 283-289 / 503-510 / 658-692)
 *   P3  the same H100 curve with +-3% deterministic noise
 *   P4  a GPU with one L2 partition (A100-like): no l2_far
 *   P5  a flat curve: one plateau, labelled l1, nothing else
 *   P6  degenerate input: fewer than 2 points, max 0, NULL: nothing found
 *   P7  the ns medians follow the cycles at the clock given
 *   K1  probes_find_knee on a saturating curve bw = peak f / (f + peak L0): the knee is
 *       the first point at >= 95% of the peak; the crossing lies between it and the point
 *       below, within 10% of the curve's exact crossing, and the latency is the crossing
 *       over 95% of the peak; the least-loaded latency is the first point's
 *   K4  a knee whose neighbour below is just under 95% and one just over give latencies
 *       within 5% of each other (sampled at factors of two, the knee point alone gives 2x)
 *   K2  the same points shuffled give the same knee
 *   K3  non-finite and non-positive points are ignored; fewer than two usable points,
 *       NULL or a frac outside (0, 1] give RK_EUSAGE and index -1
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "probes.h"

#define MB      (1024.0 * 1024.0)
#define L2_H100 ((int64_t)50 * 1024 * 1024)

/* Cycles of a curve given as (footprint, cycles) knots, flat between a knot and the
 * next one's start (a step at the next knot). */
struct knot {
    double bytes, cycles;
};

static int make_curve(const struct knot *k, int nk, int per_octave, double noise, double mhz,
                      struct probes_point *pts, int max)
{
    int n = 0;
    for (int f = 0; n < max; f++) {
        double fp = 4096.0 * pow(2.0, (double)f / per_octave);
        double c = k[0].cycles;
        if (fp > 2.0 * 1024 * MB + 1)
            break;
        for (int i = 0; i < nk; i++)
            if (fp >= k[i].bytes)
                c = k[i].cycles;
        /* deterministic noise in [-noise, +noise] */
        c *= 1.0 + noise * sin(12.9898 * (f + 1));
        pts[n].footprint_bytes = (int64_t)fp;
        pts[n].stride_bytes = 128;
        pts[n].cycles = c;
        pts[n].ns = c / mhz * 1e3;
        n++;
    }
    return n;
}

static const struct probes_plateau *find(const struct probes_plateau *pl, int n, const char *lv)
{
    for (int i = 0; i < n; i++)
        if (pl[i].level && strcmp(pl[i].level, lv) == 0)
            return &pl[i];
    return NULL;
}

static void assert_within(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * want))
        fail_msg("got %.2f, want %.2f within %.0f%%", got, want, rel * 100);
}

/* An H100's 64-bit chase with the transitions a real curve shows. */
static const struct knot h100[] = {
    {0, 32},         {224 * 1024, 120}, {300 * 1024, 293}, {3.5 * MB, 317},  {10 * MB, 390},
    {14 * MB, 440},  {19 * MB, 472},    {45 * MB, 530},    {60 * MB, 570},   {90 * MB, 610},
    {160 * MB, 650}, {300 * MB, 661},   {700 * MB, 685},   {1400 * MB, 690},
};

static void p1_reference_64bit(void **state)
{
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(h100, sizeof h100 / sizeof h100[0], 3, 0, 1980, pts, 128);
    int k = probes_find_plateaus(pts, n, L2_H100, 0.08, pl, 32);
    assert_true(k >= 4);
    assert_non_null(find(pl, k, "l1"));
    assert_non_null(find(pl, k, "l2"));
    assert_non_null(find(pl, k, "l2_far"));
    assert_non_null(find(pl, k, "dram"));
    assert_within(find(pl, k, "l1")->cycles, 32, 0.05);
    assert_within(find(pl, k, "l2")->cycles, 293, 0.05);
    assert_within(find(pl, k, "l2_far")->cycles, 472, 0.05);
    assert_within(find(pl, k, "dram")->cycles, 661, 0.05);
    /* plateaus are in footprint order and do not overlap */
    for (int i = 1; i < k; i++)
        assert_true(pl[i].first > pl[i - 1].last);
}

static void p2_reference_32bit(void **state)
{
    static const struct knot k32[] = {
        {0, 38.9},       {256 * 1024, 150}, {400 * 1024, 286}, {6 * MB, 313},
        {12 * MB, 420},  {20 * MB, 506},    {48 * MB, 540},    {60 * MB, 570},
        {128 * MB, 620}, {200 * MB, 658},   {700 * MB, 687},   {1500 * MB, 692},
    };
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(k32, sizeof k32 / sizeof k32[0], 3, 0, 1980, pts, 128);
    int k = probes_find_plateaus(pts, n, L2_H100, 0.08, pl, 32);
    assert_within(find(pl, k, "l1")->cycles, 38.9, 0.05);
    assert_within(find(pl, k, "l2")->cycles, 286, 0.05);
    assert_within(find(pl, k, "l2_far")->cycles, 506, 0.05);
    assert_within(find(pl, k, "dram")->cycles, 670, 0.05);
}

static void p3_noisy(void **state)
{
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(h100, sizeof h100 / sizeof h100[0], 3, 0.03, 1980, pts, 128);
    int k = probes_find_plateaus(pts, n, L2_H100, 0.08, pl, 32);
    assert_within(find(pl, k, "l1")->cycles, 32, 0.05);
    assert_within(find(pl, k, "l2")->cycles, 293, 0.05);
    assert_within(find(pl, k, "l2_far")->cycles, 472, 0.05);
    assert_within(find(pl, k, "dram")->cycles, 661, 0.05);
}

static void p4_one_partition(void **state)
{
    static const struct knot a100[] = {
        {0, 33}, {192 * 1024, 100}, {256 * 1024, 200}, {41 * MB, 420}, {60 * MB, 480},
    };
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(a100, sizeof a100 / sizeof a100[0], 3, 0, 1410, pts, 128);
    int k = probes_find_plateaus(pts, n, (int64_t)40 * 1024 * 1024, 0.08, pl, 32);
    assert_within(find(pl, k, "l1")->cycles, 33, 0.01);
    assert_within(find(pl, k, "l2")->cycles, 200, 0.01);
    assert_null(find(pl, k, "l2_far"));
    assert_within(find(pl, k, "dram")->cycles, 480, 0.01);
}

static void p5_flat(void **state)
{
    static const struct knot flat[] = {{0, 100}};
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(flat, 1, 2, 0, 1000, pts, 128);
    int k = probes_find_plateaus(pts, n, L2_H100, 0.08, pl, 32);
    assert_int_equal(k, 1);
    assert_string_equal(pl[0].level, "l1");
    assert_int_equal(pl[0].first, 0);
    assert_int_equal(pl[0].last, n - 1);
    assert_null(find(pl, k, "dram"));
}

static void p6_degenerate(void **state)
{
    struct probes_point pts[2] = {{4096, 128, 30, 15}, {8192, 128, 30, 15}};
    struct probes_plateau pl[4];
    (void)state;
    assert_int_equal(probes_find_plateaus(pts, 1, L2_H100, 0.08, pl, 4), 0);
    assert_int_equal(probes_find_plateaus(pts, 2, L2_H100, 0.08, pl, 0), 0);
    assert_int_equal(probes_find_plateaus(NULL, 2, L2_H100, 0.08, pl, 4), 0);
    assert_int_equal(probes_find_plateaus(pts, 2, L2_H100, 0.0, pl, 4), 0);
    assert_int_equal(probes_find_plateaus(pts, 2, L2_H100, 0.08, pl, 4), 1);
}

static void p7_ns(void **state)
{
    struct probes_point pts[128];
    struct probes_plateau pl[32];
    (void)state;
    int n = make_curve(h100, sizeof h100 / sizeof h100[0], 3, 0, 2000, pts, 128);
    int k = probes_find_plateaus(pts, n, L2_H100, 0.08, pl, 32);
    for (int i = 0; i < k; i++)
        assert_within(pl[i].ns, pl[i].cycles / 2.0, 1e-9);
}

/* A saturating curve: 3.2 TB/s peak, 0.5 us unloaded latency, 1 KB .. 64 MB in flight. */
#define KNEE_N 17
static void knee_curve(double *f, double *b)
{
    const double peak = 3.2e12, l0 = 0.5e-6;
    for (int i = 0; i < KNEE_N; i++) {
        f[i] = 1024.0 * pow(2.0, i);
        b[i] = peak * f[i] / (f[i] + peak * l0);
    }
}

static void k1_knee(void **state)
{
    (void)state;
    double f[KNEE_N], b[KNEE_N];
    struct probes_knee k;
    knee_curve(f, b);
    assert_int_equal(probes_find_knee(f, b, KNEE_N, 0.95, &k), 0);
    /* bw >= 0.95 peak_seen first at f >= 19 peak l0 (= 30.4 MB against the true peak) */
    int want = -1;
    for (int i = 0; i < KNEE_N && want < 0; i++)
        if (b[i] >= 0.95 * b[KNEE_N - 1])
            want = i;
    assert_int_equal(k.index, want);
    assert_true(k.inflight_bytes == f[want] && k.bandwidth_bps == b[want]);
    assert_true(k.peak_bps == b[KNEE_N - 1]);
    /* exact crossing of peak f / (f + peak l0) = 0.95 b_last */
    const double peak = 3.2e12, l0 = 0.5e-6, target = 0.95 * b[KNEE_N - 1];
    const double f_exact = target * peak * l0 / (peak - target);
    assert_true(k.crossing_bytes > f[want - 1] && k.crossing_bytes <= f[want]);
    assert_true(fabs(k.crossing_bytes / f_exact - 1.0) < 0.10);
    assert_within(k.latency_s, k.crossing_bytes / target, 1e-15);
    assert_true(k.latency_s > 10 * l0); /* loaded: far above the unloaded 0.5 us */
    assert_within(k.latency_min_s, f[0] / b[0], 1e-12);
    assert_within(k.latency_min_s, 0.5e-6, 0.01); /* the least-loaded point: ~l0 */
}

static void k2_knee_unordered(void **state)
{
    (void)state;
    double f[KNEE_N], b[KNEE_N], fs[KNEE_N], bs[KNEE_N];
    struct probes_knee k, ks;
    knee_curve(f, b);
    for (int i = 0; i < KNEE_N; i++) { /* a fixed permutation: 7 is coprime with 17 */
        fs[i] = f[(7 * i) % KNEE_N];
        bs[i] = b[(7 * i) % KNEE_N];
    }
    assert_int_equal(probes_find_knee(f, b, KNEE_N, 0.95, &k), 0);
    assert_int_equal(probes_find_knee(fs, bs, KNEE_N, 0.95, &ks), 0);
    assert_true(k.inflight_bytes == ks.inflight_bytes && k.latency_s == ks.latency_s);
    assert_true(fs[ks.index] == k.inflight_bytes);
}

static void k4_knee_stable(void **state)
{
    (void)state;
    /* 2, 4, 8 MB in flight; the 2 MB point at 94.9% or 95.1% of the 3.1 TB/s peak */
    double f[3] = {2e6, 4e6, 8e6}, lo[3] = {0.949 * 3.1e12, 3.05e12, 3.1e12},
           hi[3] = {0.951 * 3.1e12, 3.05e12, 3.1e12};
    struct probes_knee a, c;
    assert_int_equal(probes_find_knee(f, lo, 3, 0.95, &a), 0);
    assert_int_equal(probes_find_knee(f, hi, 3, 0.95, &c), 0);
    assert_int_equal(a.index, 1);
    assert_int_equal(c.index, 0);
    assert_true(fabs(a.latency_s / c.latency_s - 1.0) < 0.05);
    assert_within(c.latency_s, 2e6 / hi[0], 1e-15); /* no point below the knee */
}

static void k3_knee_degenerate(void **state)
{
    (void)state;
    double f[4] = {1e3, NAN, 4e3, 8e3}, b[4] = {1e9, 2e9, -1.0, 3e9};
    struct probes_knee k;
    /* usable: (1e3, 1e9) and (8e3, 3e9) */
    assert_int_equal(probes_find_knee(f, b, 4, 0.95, &k), 0);
    assert_int_equal(k.index, 3);
    assert_true(k.peak_bps == 3e9);
    b[3] = INFINITY; /* one usable point left */
    assert_int_not_equal(probes_find_knee(f, b, 4, 0.95, &k), 0);
    assert_int_equal(k.index, -1);
    assert_int_not_equal(probes_find_knee(NULL, b, 4, 0.95, &k), 0);
    assert_int_not_equal(probes_find_knee(f, b, 4, 0.0, &k), 0);
    assert_int_not_equal(probes_find_knee(f, b, 4, 1.5, &k), 0);
    assert_int_not_equal(probes_find_knee(f, b, 4, 0.95, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(p1_reference_64bit),
        cmocka_unit_test(p2_reference_32bit),
        cmocka_unit_test(p3_noisy),
        cmocka_unit_test(p4_one_partition),
        cmocka_unit_test(p5_flat),
        cmocka_unit_test(p6_degenerate),
        cmocka_unit_test(p7_ns),
        cmocka_unit_test(k1_knee),
        cmocka_unit_test(k2_knee_unordered),
        cmocka_unit_test(k3_knee_degenerate),
        cmocka_unit_test(k4_knee_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
