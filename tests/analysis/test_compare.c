/*
 * test_compare.c - analysis/compare.c: two captures matched kernel by kernel, each change
 * classed, the devices' ceilings side by side; on database files built through db/ in a
 * temporary folder (no GPU). ctest label `unit`.
 *
 *   C01 matching: configurations in both, in A only and in B only, keyed by kernel, precision,
 *       shape, params and cache state (the same kernel warm and cold, or with other params, is
 *       another configuration); rows come in key order with their repetition counts and medians
 *   C02 classes: B = A x 1.10 under 1 % noise is slower and a regression at a 5 % threshold,
 *       not at 20 %; A x 0.90 is faster; a repeat with other noise and a capture against
 *       itself are within noise; the counts add up
 *   C03 rows without stored repetitions (min/median/max only) are compared approximately and
 *       counted: identical ones within noise, one scaled by 1.3 slower; against a side with
 *       repetitions, the approximate method too
 *   C04 profiled launches grouped by kernel name, the launches being the repetitions: 25
 *       launches against 20 (the normal approximation), one kernel 1.3x slower, the other
 *       within noise
 *   C05 measurements that failed verification are left out and counted; a configuration
 *       stored twice in a capture pools its repetitions
 *   C06 ceilings: each run shows the newest probe of its device stored before it (a ceiling
 *       measured only by an older probe kept), with the ratio B / A and a unit converted
 *       (GB/s against TB/s); a run with no probe before it takes the device's current ones;
 *       two probe captures compare their own ceilings and no kernels
 *   C07 two database files: A from one, B from the other
 *   C08 refusals: a missing capture (RK_ENODATA), a model capture, a probe against a run
 *       (RK_EUSAGE); nothing is left allocated
 *   C09 a shape each capture ran in one configuration, with other parameters (t3 16 in A, 1 in
 *       B, twice as slow): one row compared across parameters (params_b), a regression; a
 *       shape swept in two configurations a side, one of them different, is not paired
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "common.h"
#include "db.h"

static char tmpdir[256];
static const struct analysis_cmp_opts opts5 = {0.05, 0.95, 0.0};

/* A reproducible normal generator: a 64-bit LCG and Box-Muller. */
static uint64_t lcg_state = 1;
static double gauss(void)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
        u[i] = ((double)(lcg_state >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(2.0 * 3.14159265358979323846 * u[1]);
}

static const char *path_of(char *buf, size_t len, const char *stem)
{
    snprintf(buf, len, "%s/%s.db", tmpdir, stem);
    unlink(buf);
    return buf;
}

static struct db *open_new(const char *path)
{
    struct db *db = NULL;
    assert_int_equal(db_open(path, DB_RW, &db), RK_OK);
    return db;
}

static int64_t device(struct db *db)
{
    struct db_device d;
    int64_t id = 0;
    memset(&d, 0, sizeof d);
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-00000000-1111-2222-3333-444444444444";
    assert_int_equal(db_device_upsert(db, &d, &id), RK_OK);
    return id;
}

static int64_t capture(struct db *db, int64_t dev, enum db_capture_kind kind)
{
    int64_t id = 0;
    assert_int_equal(db_capture_begin(db, dev, kind, "roofkit test", "0.1.0", &id), RK_OK);
    assert_int_equal(db_capture_end(db, id, DB_DONE), RK_OK);
    return id;
}

/* A configuration: kernel, precision, shape, params, cache state. */
struct cfg {
    const char *kernel, *precision;
    int64_t m, n, k;
    const char *params, *cache;
};

/*
 * Stores one suite measurement of cfg: reps repetitions around center with relative noise
 * `noise` (stored as times_ns when with_times, else as min/median/max only).
 */
static void store(struct db *db, int64_t cap, const struct cfg *c, double center, double noise,
                  int reps, int with_times, int verified)
{
    struct db_measurement m;
    double t[64], s[64];
    memset(&m, 0, sizeof m);
    for (int i = 0; i < reps; i++)
        s[i] = t[i] = center * exp(noise * gauss());
    m.kernel = c->kernel;
    m.family = "tsm2";
    m.precision = c->precision;
    m.m = c->m;
    m.n = c->n;
    m.k = c->k;
    m.params = c->params;
    m.reps = reps;
    m.time_median_ns = model_median(s, (size_t)reps); /* sorts s */
    m.time_min_ns = s[0];
    m.time_max_ns = s[reps - 1];
    m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = NAN;
    m.verified = verified;
    m.rel_error = 1e-7;
    m.cache_state = c->cache;
    m.source = "suite";
    m.launch_index = m.correlation_id = -1;
    if (with_times) {
        m.times_ns = t;
        m.n_times = reps;
    }
    assert_int_equal(db_insert_measurement(db, cap, &m, NULL, 0, NULL), RK_OK);
}

/* One profiled launch of `kernel` taking time_ns. */
static void launch(struct db *db, int64_t cap, const char *kernel, double time_ns, int64_t index)
{
    struct db_measurement m;
    memset(&m, 0, sizeof m);
    m.kernel = kernel;
    m.reps = 1;
    m.time_min_ns = m.time_median_ns = m.time_max_ns = time_ns;
    m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = NAN;
    m.verified = -1;
    m.rel_error = NAN;
    m.cache_state = "warm";
    m.source = "profile";
    m.launch_index = index;
    m.correlation_id = index + 100;
    assert_int_equal(db_insert_measurement(db, cap, &m, NULL, 0, NULL), RK_OK);
}

static void ceiling(struct db *db, int64_t cap, const char *name, double value, const char *unit)
{
    struct db_ceiling c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.kind = strncmp(name, "bw_", 3) == 0 ? "bandwidth" : "compute";
    c.value = value;
    c.unit = unit;
    c.reps = 10;
    c.min = c.median = c.max = c.theoretical = c.sm_clock_mhz = c.power_w = c.temp_c = NAN;
    assert_int_equal(db_insert_ceiling(db, cap, &c, NULL), RK_OK);
}

static const struct analysis_cmp_row *find(const struct analysis_cmp *c, const char *kernel,
                                           const char *cache, const char *params)
{
    for (int i = 0; i < c->nrows; i++) {
        const struct analysis_cmp_row *r = &c->rows[i];
        if (strcmp(r->kernel, kernel) == 0 &&
            (!cache || (r->cache_state && strcmp(r->cache_state, cache) == 0)) &&
            (!params || (r->params && strcmp(r->params, params) == 0)))
            return r;
    }
    fail_msg("no row for %s", kernel);
    return NULL;
}

static const struct cfg K1 = {"tsm2_v3", "fp32", 20480, 16, 20480, "{\"t1\":128}", "cold"};
static const struct cfg K1W = {"tsm2_v3", "fp32", 20480, 16, 20480, "{\"t1\":128}", "warm"};
static const struct cfg K1P = {"tsm2_v3", "fp32", 20480, 16, 20480, "{\"t1\":256}", "cold"};
static const struct cfg K2 = {"stmvb", "fp64", 4096, 4096, 4096, "{}", "cold"};
static const struct cfg K3 = {"ism2_opt1", "fp32", 10240, 10240, 16, "{}", "cold"};
static const struct cfg K4 = {"naive", "fp32", 1024, 1024, 1024, "{}", "cold"};

/* ------------------------------------------------------------------- C01 */

static void c01_matching(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c01"));
    struct analysis_cmp c;
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN);
    (void)state;
    store(db, a, &K1, 1000, 0.01, 10, 1, 1);
    store(db, a, &K1W, 800, 0.01, 10, 1, 1);
    store(db, a, &K2, 5000, 0.01, 10, 1, 1);
    store(db, a, &K3, 3000, 0.01, 10, 1, 1); /* A only */
    int64_t b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1000, 0.01, 12, 1, 1);
    store(db, b, &K1W, 800, 0.01, 10, 1, 1);
    store(db, b, &K1P, 900, 0.01, 10, 1, 1); /* B only: other params */
    store(db, b, &K2, 5000, 0.01, 10, 1, 1);

    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.nrows, 5);
    /* key order: kernel, then precision, shape, params, cache */
    assert_string_equal(c.rows[0].kernel, "ism2_opt1");
    assert_string_equal(c.rows[1].kernel, "stmvb");
    assert_string_equal(c.rows[2].kernel, "tsm2_v3");
    assert_string_equal(c.rows[2].cache_state, "cold");
    assert_string_equal(c.rows[2].params, "{\"t1\":128}");
    assert_string_equal(c.rows[3].cache_state, "warm");
    assert_string_equal(c.rows[4].params, "{\"t1\":256}");
    assert_int_equal(c.rows[0].in, 1);
    assert_int_equal(c.rows[4].in, 2);
    assert_int_equal(c.rows[2].in, 3);
    assert_int_equal(c.rows[2].n_a, 10);
    assert_int_equal(c.rows[2].n_b, 12);
    assert_true(fabs(c.rows[2].median_a_ns / 1000 - 1) < 0.03);
    assert_true(isnan(c.rows[0].median_b_ns) && isnan(c.rows[4].median_a_ns));
    assert_int_equal(c.rows[0].r.method, MODEL_RATIO_NONE);
    assert_int_equal(c.compared, 3);
    assert_int_equal(c.only_a, 1);
    assert_int_equal(c.only_b, 1);
    assert_int_equal(c.approx, 0);
    assert_int_equal(c.cap[0].id, a);
    assert_int_equal(c.cap[1].id, b);
    assert_string_equal(c.dev[1].name, "NVIDIA H100 80GB HBM3");
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C02 */

static void c02_classes(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c02"));
    struct analysis_cmp c;
    const struct analysis_cmp_opts opts20 = {0.20, 0.95, 0.0};
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN), b;
    (void)state;
    lcg_state = 2;
    store(db, a, &K1, 1000, 0.01, 10, 1, 1);
    store(db, a, &K2, 5000, 0.01, 10, 1, 1);
    store(db, a, &K4, 2000, 0.01, 10, 1, 1);
    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1100, 0.01, 10, 1, 1); /* 10 % slower */
    store(db, b, &K2, 4500, 0.01, 10, 1, 1); /* 10 % faster */
    store(db, b, &K4, 2000, 0.01, 10, 1, 1); /* a repeat */

    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_true(find(&c, "tsm2_v3", NULL, NULL)->regression);
    assert_true(fabs(find(&c, "tsm2_v3", NULL, NULL)->r.ratio - 1.1) < 0.02);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->r.method, MODEL_RATIO_EXACT);
    assert_int_equal(find(&c, "stmvb", NULL, NULL)->change, MODEL_CHANGE_FASTER);
    assert_false(find(&c, "stmvb", NULL, NULL)->regression);
    assert_int_equal(find(&c, "naive", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_int_equal(c.slower, 1);
    assert_int_equal(c.faster, 1);
    assert_int_equal(c.noise, 1);
    assert_int_equal(c.regressions, 1);
    assert_int_equal(c.compared, c.slower + c.faster + c.noise);
    analysis_compare_release(&c);

    assert_int_equal(analysis_compare(db, a, db, b, &opts20, &c), RK_OK);
    assert_int_equal(c.slower, 1);
    assert_int_equal(c.regressions, 0);
    analysis_compare_release(&c);

    /* against itself: everything within noise, ratio exactly 1 */
    assert_int_equal(analysis_compare(db, b, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.noise, 3);
    for (int i = 0; i < c.nrows; i++)
        assert_true(c.rows[i].r.ratio == 1.0);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C10 */

/*
 * The run-to-run noise floor: a second run 1 % slower as a whole (every configuration, tight
 * repetitions) is "slower" everywhere with the repetitions alone and within noise under a 2 %
 * floor, with the run's shift reported; a 10 % slowdown of one configuration stays slower (and a
 * regression) under the floor; a 3 % change is beyond a 2 % floor and within a 5 % one.
 */
static void c10_noise_floor(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c10"));
    struct analysis_cmp c;
    const struct analysis_cmp_opts floor2 = {0.05, 0.95, 0.02}, floor5 = {0.05, 0.95, 0.05};
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN), b;
    (void)state;
    lcg_state = 10;
    store(db, a, &K1, 1000, 0.001, 20, 1, 1);
    store(db, a, &K2, 5000, 0.001, 20, 1, 1);
    store(db, a, &K4, 2000, 0.001, 20, 1, 1);
    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1010, 0.001, 20, 1, 1);
    store(db, b, &K2, 5050, 0.001, 20, 1, 1);
    store(db, b, &K4, 2020, 0.001, 20, 1, 1);

    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.slower, 3); /* the repetitions alone: every one moved */
    assert_true(fabs(c.shift - 1.01) < 0.002);
    analysis_compare_release(&c);
    assert_int_equal(analysis_compare(db, a, db, b, &floor2, &c), RK_OK);
    assert_int_equal(c.noise, 3);
    assert_int_equal(c.slower + c.faster + c.regressions, 0);
    assert_true(fabs(c.shift - 1.01) < 0.002);
    analysis_compare_release(&c);

    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1100, 0.001, 20, 1, 1); /* 10 % slower */
    store(db, b, &K2, 5150, 0.001, 20, 1, 1); /* 3 % slower */
    store(db, b, &K4, 1940, 0.001, 20, 1, 1); /* 3 % faster */
    assert_int_equal(analysis_compare(db, a, db, b, &floor2, &c), RK_OK);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_true(find(&c, "tsm2_v3", NULL, NULL)->regression);
    assert_int_equal(find(&c, "stmvb", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_false(find(&c, "stmvb", NULL, NULL)->regression);
    assert_int_equal(find(&c, "naive", NULL, NULL)->change, MODEL_CHANGE_FASTER);
    assert_true(fabs(c.shift - 1.03) < 0.003);
    analysis_compare_release(&c);
    assert_int_equal(analysis_compare(db, a, db, b, &floor5, &c), RK_OK);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_int_equal(find(&c, "stmvb", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_int_equal(find(&c, "naive", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_int_equal(c.regressions, 1);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C03 */

static void c03_summary_only(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c03"));
    struct analysis_cmp c;
    struct db_measurement_row *rows = NULL;
    int n = 0;
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN), b, x;
    (void)state;
    lcg_state = 3;
    store(db, a, &K1, 1000, 0.01, 10, 0, 1);
    store(db, a, &K2, 5000, 0.01, 10, 0, 1);
    /* B: the same rows, K1's times scaled by 1.3, as an old row copied and edited */
    b = capture(db, dev, DB_CAPTURE_RUN);
    assert_int_equal(db_query_measurements(db, a, &rows, &n), RK_OK);
    for (int i = 0; i < n; i++) {
        struct db_measurement m = rows[i].m;
        if (strcmp(m.kernel, "tsm2_v3") == 0)
            m.time_min_ns *= 1.3, m.time_median_ns *= 1.3, m.time_max_ns *= 1.3;
        assert_int_equal(db_insert_measurement(db, b, &m, NULL, 0, NULL), RK_OK);
    }
    db_free_measurements(rows, n);

    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.approx, 2);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->r.method, MODEL_RATIO_SUMMARY);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_true(fabs(find(&c, "tsm2_v3", NULL, NULL)->r.ratio - 1.3) < 1e-9);
    assert_int_equal(find(&c, "stmvb", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_true(find(&c, "stmvb", NULL, NULL)->r.ratio == 1.0);
    assert_int_equal(c.regressions, 1);
    analysis_compare_release(&c);

    /* one side with repetitions, the other without: approximate as well */
    x = capture(db, dev, DB_CAPTURE_RUN);
    store(db, x, &K1, 1000, 0.01, 10, 1, 1);
    assert_int_equal(analysis_compare(db, a, db, x, &opts5, &c), RK_OK);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->r.method, MODEL_RATIO_SUMMARY);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_int_equal(c.approx, 1);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C04 */

static void c04_profiled(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c04"));
    struct analysis_cmp c;
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_PROFILE), b;
    (void)state;
    lcg_state = 4;
    for (int i = 0; i < 25; i++) {
        launch(db, a, "void gemm<float>(float*)", 10000 * exp(0.02 * gauss()), 2 * i);
        launch(db, a, "elementwise", 3000 * exp(0.02 * gauss()), 2 * i + 1);
    }
    b = capture(db, dev, DB_CAPTURE_PROFILE);
    for (int i = 0; i < 20; i++) {
        launch(db, b, "void gemm<float>(float*)", 13000 * exp(0.02 * gauss()), 2 * i);
        launch(db, b, "elementwise", 3000 * exp(0.02 * gauss()), 2 * i + 1);
    }
    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.nrows, 2);
    assert_true(c.rows[0].profiled && c.rows[1].profiled);
    assert_null(c.rows[0].precision);
    assert_int_equal(c.rows[0].n_a, 25);
    assert_int_equal(c.rows[0].n_b, 20);
    assert_int_equal(find(&c, "void gemm<float>(float*)", NULL, NULL)->change, MODEL_CHANGE_SLOWER);
    assert_int_equal(find(&c, "void gemm<float>(float*)", NULL, NULL)->r.method,
                     MODEL_RATIO_NORMAL);
    assert_true(fabs(find(&c, "void gemm<float>(float*)", NULL, NULL)->r.ratio - 1.3) < 0.03);
    assert_int_equal(find(&c, "elementwise", NULL, NULL)->change, MODEL_CHANGE_NOISE);
    assert_int_equal(c.regressions, 1);
    assert_int_equal(c.approx, 0);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C05 */

static void c05_unverified_and_pooled(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c05"));
    struct analysis_cmp c;
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN), b;
    (void)state;
    lcg_state = 5;
    store(db, a, &K1, 1000, 0.01, 10, 1, 1);
    store(db, a, &K1, 1000, 0.01, 10, 1, 1); /* the same configuration again: pooled */
    store(db, a, &K2, 5000, 0.01, 10, 1, 0); /* failed verification */
    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1000, 0.01, 10, 1, 1);
    store(db, b, &K2, 5000, 0.01, 10, 1, 1);
    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.unverified, 1);
    assert_int_equal(c.nrows, 2);
    assert_int_equal(find(&c, "tsm2_v3", NULL, NULL)->n_a, 20);
    assert_int_equal(find(&c, "stmvb", NULL, NULL)->in, 2);
    assert_int_equal(c.only_b, 1);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C06 */

static const struct analysis_cmp_ceiling *ceil_of(const struct analysis_cmp *c, const char *name)
{
    for (int i = 0; i < c->nceil; i++)
        if (strcmp(c->ceil[i].name, name) == 0)
            return &c->ceil[i];
    fail_msg("no ceiling %s", name);
    return NULL;
}

static void c06_ceilings(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c06"));
    struct analysis_cmp c;
    int64_t dev = device(db), p1, p2, p3, a, b, early;
    (void)state;
    early = capture(db, dev, DB_CAPTURE_RUN); /* before any probe */
    store(db, early, &K1, 1000, 0.01, 10, 1, 1);
    p1 = capture(db, dev, DB_CAPTURE_PROBE);
    ceiling(db, p1, "bw_dram_read", 3000, "GB/s");
    ceiling(db, p1, "peak_fp32_fma", 60, "TFLOP/s");
    p2 = capture(db, dev, DB_CAPTURE_PROBE); /* a probe --only bandwidth */
    ceiling(db, p2, "bw_dram_read", 3100, "GB/s");
    a = capture(db, dev, DB_CAPTURE_RUN);
    store(db, a, &K1, 1000, 0.01, 10, 1, 1);
    p3 = capture(db, dev, DB_CAPTURE_PROBE);
    ceiling(db, p3, "bw_dram_read", 2.79, "TB/s");
    ceiling(db, p3, "peak_fp32_fma", 66, "TFLOP/s");
    ceiling(db, p3, "bw_l2_read", 8000, "GB/s");
    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &K1, 1000, 0.01, 10, 1, 1);

    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    assert_int_equal(c.probe[0], p2);
    assert_int_equal(c.probe[1], p3);
    assert_false(c.ceil_after[0] || c.ceil_after[1]);
    assert_int_equal(c.nceil, 3);
    assert_true(ceil_of(&c, "bw_dram_read")->a == 3100);
    assert_true(ceil_of(&c, "bw_dram_read")->b == 2.79);
    assert_string_equal(ceil_of(&c, "bw_dram_read")->unit_b, "TB/s");
    assert_true(fabs(ceil_of(&c, "bw_dram_read")->ratio - 2790.0 / 3100.0) < 1e-12);
    assert_true(ceil_of(&c, "peak_fp32_fma")->a == 60); /* from the older probe p1 */
    assert_true(fabs(ceil_of(&c, "peak_fp32_fma")->ratio - 1.1) < 1e-12);
    assert_true(isnan(ceil_of(&c, "bw_l2_read")->a) && isnan(ceil_of(&c, "bw_l2_read")->ratio));
    analysis_compare_release(&c);

    /* no probe before it: the device's current ceilings */
    assert_int_equal(analysis_compare(db, early, db, b, &opts5, &c), RK_OK);
    assert_true(c.ceil_after[0]);
    assert_true(ceil_of(&c, "bw_dram_read")->a == 2.79);
    analysis_compare_release(&c);

    /* two probes: their own ceilings, no kernels */
    assert_int_equal(analysis_compare(db, p1, db, p3, &opts5, &c), RK_OK);
    assert_int_equal(c.nrows, 0);
    assert_int_equal(c.probe[0], p1);
    assert_int_equal(c.probe[1], p3);
    assert_int_equal(c.nceil, 3);
    assert_true(ceil_of(&c, "bw_dram_read")->a == 3000);
    analysis_compare_release(&c);
    db_close(db);
}

/* ------------------------------------------------------------------- C07 */

static void c07_two_files(void **state)
{
    char p1[320], p2[320];
    struct db *d1 = open_new(path_of(p1, sizeof p1, "c07a"));
    struct db *d2 = open_new(path_of(p2, sizeof p2, "c07b"));
    struct analysis_cmp c;
    int64_t a, b;
    (void)state;
    lcg_state = 7;
    capture(d2, device(d2), DB_CAPTURE_PROBE); /* other ids in the other file */
    a = capture(d1, device(d1), DB_CAPTURE_RUN);
    store(d1, a, &K1, 1000, 0.01, 10, 1, 1);
    b = capture(d2, device(d2), DB_CAPTURE_RUN);
    store(d2, b, &K1, 1250, 0.01, 10, 1, 1);
    assert_int_equal(analysis_compare(d1, a, d2, b, &opts5, &c), RK_OK);
    assert_int_equal(c.cap[1].id, 2);
    assert_int_equal(c.nrows, 1);
    assert_int_equal(c.rows[0].change, MODEL_CHANGE_SLOWER);
    assert_true(c.rows[0].regression);
    analysis_compare_release(&c);
    db_close(d1);
    db_close(d2);
}

/* ------------------------------------------------------------------- C08 */

static void c08_refused(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c08"));
    struct analysis_cmp c;
    int64_t dev = device(db), run = capture(db, dev, DB_CAPTURE_RUN);
    int64_t probe = capture(db, dev, DB_CAPTURE_PROBE), model = capture(db, 0, DB_CAPTURE_MODEL);
    (void)state;
    assert_int_equal(analysis_compare(db, run, db, 999, &opts5, &c), RK_ENODATA);
    assert_null(c.rows);
    assert_int_equal(analysis_compare(db, run, db, model, &opts5, &c), RK_EUSAGE);
    assert_int_equal(analysis_compare(db, probe, db, run, &opts5, &c), RK_EUSAGE);
    assert_int_equal(c.cap[0].id, 0);
    db_close(db);
}

/* ------------------------------------------------------------------- C09 */

static void c09_params_differ(void **state)
{
    char path[320];
    struct db *db = open_new(path_of(path, sizeof path, "c09"));
    struct analysis_cmp c;
    const struct cfg t16 = {"tsm2_v3", "fp64", 20480, 4, 20480, "{\"t3\":16}", "cold"};
    const struct cfg t1 = {"tsm2_v3", "fp64", 20480, 4, 20480, "{\"t3\":1}", "cold"};
    const struct cfg s4 = {"tsm2_v2", "fp32", 10240, 8, 10240, "{\"t3\":4}", "cold"};
    const struct cfg s8 = {"tsm2_v2", "fp32", 10240, 8, 10240, "{\"t3\":8}", "cold"};
    const struct cfg s16 = {"tsm2_v2", "fp32", 10240, 8, 10240, "{\"t3\":16}", "cold"};
    int64_t dev = device(db), a = capture(db, dev, DB_CAPTURE_RUN), b;
    (void)state;
    lcg_state = 9;
    store(db, a, &t16, 1000, 0.01, 10, 1, 1);
    store(db, a, &s4, 500, 0.01, 10, 1, 1);
    store(db, a, &s8, 400, 0.01, 10, 1, 1);
    b = capture(db, dev, DB_CAPTURE_RUN);
    store(db, b, &t1, 2000, 0.01, 10, 1, 1);
    store(db, b, &s4, 500, 0.01, 10, 1, 1);
    store(db, b, &s16, 450, 0.01, 10, 1, 1);
    assert_int_equal(analysis_compare(db, a, db, b, &opts5, &c), RK_OK);
    const struct analysis_cmp_row *r = find(&c, "tsm2_v3", NULL, NULL);
    assert_int_equal(r->in, 3);
    assert_string_equal(r->params, "{\"t3\":16}");
    assert_string_equal(r->params_b, "{\"t3\":1}");
    assert_int_equal(r->change, MODEL_CHANGE_SLOWER);
    assert_true(r->regression && fabs(r->r.ratio - 2) < 0.05);
    assert_int_equal(c.params_differ, 1);
    /* the sweep: t3 4 in both, 8 in A only, 16 in B only */
    assert_int_equal(c.nrows, 4);
    assert_int_equal(c.compared, 2);
    assert_int_equal(c.only_a, 1);
    assert_int_equal(c.only_b, 1);
    assert_null(find(&c, "tsm2_v2", NULL, "{\"t3\":4}")->params_b);
    analysis_compare_release(&c);
    db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(c01_matching),
        cmocka_unit_test(c02_classes),
        cmocka_unit_test(c03_summary_only),
        cmocka_unit_test(c04_profiled),
        cmocka_unit_test(c05_unverified_and_pooled),
        cmocka_unit_test(c06_ceilings),
        cmocka_unit_test(c07_two_files),
        cmocka_unit_test(c08_refused),
        cmocka_unit_test(c09_params_differ),
        cmocka_unit_test(c10_noise_floor),
    };
    char cmd[300];
    int failed;
    snprintf(tmpdir, sizeof tmpdir, "%s/rk-compare-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (!failed) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            return 1;
    }
    return failed;
}
