/*
 * test_reference.c - analysis/reference.c with measurements built in memory: which cuBLAS
 * measurement judges a kernel, its effective bandwidth and the ceiling that holds it. ctest
 * label `unit`.
 *
 *   R1  analysis_reference_ok: a verified cuBLAS call of the kernel's capture, GPU, precision,
 *       shape and cache state is accepted; each of those differing, a failed or missing
 *       verification, no time, GemmEx with tf32 1, a kernel that is not cuBLAS, cuBLAS judged
 *       against cuBLAS and a row without a shape are refused
 *   R2  analysis_reference_pick: the faster of Sgemm and GemmEx whichever is faster and in
 *       either order, never one that is refused however fast (TF32, another capture), the
 *       smaller id on a tie, NULL when none; folding over a list gives the fastest accepted
 *   R3  analysis_effective_bytes/_bandwidth: (mk + kn + mn) x element size over the median
 *       time for fp32 and fp64, NaN without a shape, element size or time
 *   R4  analysis_copy_ceiling: bw_dram_copy when the device has it, NULL otherwise or when
 *       its value is not usable
 *   R5  analysis_speedups: per kernel and precision, the geomean over shapes of the faster
 *       reference's time over the kernel's best verified configuration, the worst shape;
 *       cuBLAS rows, failed rows and shapes without a reference left out; too many groups
 *       give RK_ENOMEM with the first ones filled
 *   R7  analysis_floors: per kernel and precision, the geomean over shapes of the floor's time
 *       over the kernel's best verified configuration, the worst, the shapes below 0.9; moves,
 *       cuBLAS rows and shapes without a floor left out
 *   R6  analysis_floor_ok/_pick: a verified move of the kernel's capture, GPU, precision, shape
 *       and cache state is its floor, the faster of two; cuBLAS and the kernel itself are not,
 *       a move has none, and a move is never a reference nor judged by one
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "analysis.h"

/* A kernel measurement in capture 7 and cuBLAS calls beside it. */
static struct db_measurement meas(int64_t id, const char *kernel, const char *family,
                                  const char *params, double t_ns)
{
    struct db_measurement m;
    memset(&m, 0, sizeof m);
    m.id = id;
    m.capture_id = 7;
    m.kernel = kernel;
    m.family = family;
    m.precision = "fp32";
    m.m = 20480;
    m.n = 8;
    m.k = 20480;
    m.params = params;
    m.time_median_ns = t_ns;
    m.verified = 1;
    m.cache_state = "cold";
    m.source = "suite";
    return m;
}

static void r1_ok(void **state)
{
    (void)state;
    const struct db_measurement x = meas(1, "tsm2", "tsm2", "{\"t1\":128}", 1000);
    const struct db_measurement c = meas(2, "cublas_sgemm", "cublas", "{}", 1500);
    struct db_measurement v;
    assert_true(analysis_reference_ok(&x, &c));
    assert_false(analysis_reference_ok(&x, NULL));
    assert_false(analysis_reference_ok(NULL, &c));
    assert_false(analysis_reference_ok(&x, &x));
    v = c, v.capture_id = 8;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.device_id = 3;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.precision = "fp64";
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.precision = NULL;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.cache_state = "warm";
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.n = 16;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.k = 10240;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.m = 10240;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.verified = 0;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.verified = -1;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.time_median_ns = NAN;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.time_median_ns = 0;
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.kernel = "cublas_gemmex", v.params = "{\"tf32\":1}";
    assert_false(analysis_reference_ok(&x, &v));
    v.params = "{\"tf32\":0}";
    assert_true(analysis_reference_ok(&x, &v));
    v = c, v.family = "tsm2";
    assert_false(analysis_reference_ok(&x, &v));
    v = c, v.family = NULL;
    assert_false(analysis_reference_ok(&x, &v));
    v = x, v.family = "cublas", v.kernel = "cublas_gemmex";
    assert_false(analysis_reference_ok(&v, &c)); /* cuBLAS is not judged by cuBLAS */
    v = x, v.m = v.n = v.k = 0, v.source = "profile";
    struct db_measurement w = c;
    w.m = w.n = w.k = 0;
    assert_false(analysis_reference_ok(&v, &w)); /* a profiled kernel has no shape */
}

static void r6_floor(void **state)
{
    (void)state;
    const struct db_measurement x = meas(1, "tsm2", "tsm2", "{}", 1000);
    const struct db_measurement c = meas(2, "cublas_sgemm", "cublas", "{}", 1500);
    struct db_measurement f = meas(3, "move", "move", "{}", 900);
    struct db_measurement g = meas(4, "move", "move", "{}", 950), v;
    assert_true(analysis_floor_ok(&x, &f));
    assert_true(analysis_floor_ok(&c, &f)); /* cuBLAS has a floor too */
    assert_false(analysis_floor_ok(&x, &c));
    assert_false(analysis_floor_ok(&x, &x));
    assert_false(analysis_floor_ok(&f, &g)); /* a move has none */
    assert_false(analysis_floor_ok(NULL, &f));
    assert_false(analysis_floor_ok(&x, NULL));
    v = f, v.capture_id = 8;
    assert_false(analysis_floor_ok(&x, &v));
    v = f, v.cache_state = "warm";
    assert_false(analysis_floor_ok(&x, &v));
    v = f, v.n = 16;
    assert_false(analysis_floor_ok(&x, &v));
    v = f, v.precision = "fp64";
    assert_false(analysis_floor_ok(&x, &v));
    v = f, v.verified = 0;
    assert_false(analysis_floor_ok(&x, &v));
    assert_false(analysis_reference_ok(&x, &f)); /* never a reference */
    assert_false(analysis_reference_ok(&f, &c)); /* nor judged by one */
    assert_ptr_equal(analysis_floor_pick(&x, &g, &f), &f);
    assert_ptr_equal(analysis_floor_pick(&x, &f, &g), &f);
    assert_ptr_equal(analysis_floor_pick(&x, &c, &g), &g);
    assert_null(analysis_floor_pick(&x, &c, NULL));
}

static void r2_pick(void **state)
{
    (void)state;
    const struct db_measurement x = meas(1, "tsm2", "tsm2", "{}", 1000);
    struct db_measurement s = meas(2, "cublas_sgemm", "cublas", "{}", 1500);
    struct db_measurement g = meas(3, "cublas_gemmex", "cublas", "{\"tf32\":0}", 1200);
    struct db_measurement t = meas(4, "cublas_gemmex", "cublas", "{\"tf32\":1}", 100);
    struct db_measurement o = meas(5, "cublas_sgemm", "cublas", "{}", 50);
    o.capture_id = 9;
    assert_ptr_equal(analysis_reference_pick(&x, &s, &g), &g);
    assert_ptr_equal(analysis_reference_pick(&x, &g, &s), &g);
    g.time_median_ns = 1600;
    assert_ptr_equal(analysis_reference_pick(&x, &s, &g), &s);
    assert_ptr_equal(analysis_reference_pick(&x, &g, &s), &s);
    assert_ptr_equal(analysis_reference_pick(&x, &s, &t), &s); /* TF32: however fast */
    assert_ptr_equal(analysis_reference_pick(&x, &t, &s), &s);
    assert_ptr_equal(analysis_reference_pick(&x, &o, &s), &s); /* another capture */
    assert_ptr_equal(analysis_reference_pick(&x, NULL, &s), &s);
    assert_ptr_equal(analysis_reference_pick(&x, &s, NULL), &s);
    assert_null(analysis_reference_pick(&x, &t, &o));
    assert_null(analysis_reference_pick(&x, NULL, NULL));
    g.time_median_ns = s.time_median_ns; /* a tie: the smaller id */
    assert_ptr_equal(analysis_reference_pick(&x, &g, &s), &s);
    /* folded over a list, as the report does */
    const struct db_measurement *list[] = {&t, &g, &o, &s}, *best = NULL;
    g.time_median_ns = 1400;
    for (int i = 0; i < 4; i++)
        best = analysis_reference_pick(&x, best, list[i]);
    assert_ptr_equal(best, &g);
}

static void r3_effective(void **state)
{
    (void)state;
    struct db_measurement x = meas(1, "tsm2", "tsm2", "{}", 1e6); /* 1 ms */
    const double mk = 20480.0 * 20480, kn = 20480.0 * 8, mn = 20480.0 * 8;
    assert_true(fabs(analysis_effective_bytes(&x) - (mk + kn + mn) * 4) < 1e-3);
    assert_true(fabs(analysis_effective_bandwidth(&x) - (mk + kn + mn) * 4 / 1e-3) < 1);
    x.precision = "fp64";
    assert_true(fabs(analysis_effective_bandwidth(&x) - (mk + kn + mn) * 8 / 1e-3) < 1);
    x.m = 100000, x.n = 3, x.k = 24, x.time_median_ns = 2000; /* fp64 */
    const double want = (2400000.0 + 72 + 300000) * 8 / 2e-6;
    assert_true(fabs(analysis_effective_bandwidth(&x) / want - 1) < 1e-12);
    x.time_median_ns = NAN;
    assert_true(isnan(analysis_effective_bandwidth(&x)));
    x.time_median_ns = 2000, x.precision = NULL;
    assert_true(isnan(analysis_effective_bytes(&x)));
    assert_true(isnan(analysis_effective_bandwidth(&x)));
    x.precision = "fp32", x.n = 0;
    assert_true(isnan(analysis_effective_bandwidth(&x)));
    assert_true(isnan(analysis_effective_bandwidth(NULL)));
}

static void r4_copy(void **state)
{
    (void)state;
    struct db_ceiling c[2];
    struct analysis_device d;
    memset(c, 0, sizeof c);
    memset(&d, 0, sizeof d);
    c[0].name = "bw_dram_read", c[0].value = 3200, c[0].unit = "GB/s";
    c[1].name = "bw_dram_copy", c[1].value = 2980, c[1].unit = "GB/s";
    d.ceil = c;
    d.nceil = 2;
    assert_ptr_equal(analysis_copy_ceiling(&d), &c[1]);
    c[1].value = NAN;
    assert_null(analysis_copy_ceiling(&d));
    d.nceil = 1;
    assert_null(analysis_copy_ceiling(&d));
    assert_null(analysis_copy_ceiling(NULL));
}

static void r5_speedups(void **state)
{
    (void)state;
    struct db_measurement_row rows[10];
    struct analysis_speedup sp[4];
    int n = 0, ns = -1;
    memset(rows, 0, sizeof rows);
    /* shape 1: two configurations (ratios 1.5 and 2.0 against GemmEx, the faster call) */
    rows[n++].m = meas(1, "tsm2_v3", "tsm2", "{\"t1\":128}", 1000);
    rows[n++].m = meas(2, "tsm2_v3", "tsm2", "{\"t1\":256}", 750);
    rows[n++].m = meas(3, "cublas_sgemm", "cublas", "{}", 1800);
    rows[n++].m = meas(4, "cublas_gemmex", "cublas", "{\"tf32\":0}", 1500);
    /* shape 2: ratio 0.5; a failed configuration that would have been faster */
    rows[n].m = meas(5, "tsm2_v3", "tsm2", "{}", 2000), rows[n++].m.n = 16;
    rows[n].m = meas(6, "tsm2_v3", "tsm2", "{}", 10), rows[n].m.n = 16, rows[n++].m.verified = 0;
    rows[n].m = meas(7, "cublas_sgemm", "cublas", "{}", 1000), rows[n++].m.n = 16;
    /* no reference at its shape: left out */
    rows[n].m = meas(8, "tsm2_v3", "tsm2", "{}", 1000), rows[n++].m.n = 32;
    /* another kernel in fp64: ratio 3 */
    rows[n].m = meas(9, "ism2_opt1", "ism2", "{}", 100), rows[n++].m.precision = "fp64";
    rows[n].m = meas(10, "cublas_dgemm", "cublas", "{}", 300), rows[n++].m.precision = "fp64";
    assert_int_equal(analysis_speedups(rows, n, sp, 4, &ns), RK_OK);
    assert_int_equal(ns, 2);
    assert_string_equal(sp[0].kernel, "tsm2_v3");
    assert_string_equal(sp[0].precision, "fp32");
    assert_int_equal(sp[0].shapes, 2);
    assert_true(fabs(sp[0].geomean - 1.0) < 1e-12); /* sqrt(2.0 x 0.5) */
    assert_true(fabs(sp[0].worst - 0.5) < 1e-12);
    assert_true(sp[0].worst_m == 20480 && sp[0].worst_n == 16 && sp[0].worst_k == 20480);
    assert_string_equal(sp[1].kernel, "ism2_opt1");
    assert_string_equal(sp[1].precision, "fp64");
    assert_int_equal(sp[1].shapes, 1);
    assert_true(fabs(sp[1].geomean - 3.0) < 1e-12);
    /* room for one group: the first, and RK_ENOMEM */
    assert_int_equal(analysis_speedups(rows, n, sp, 1, &ns), RK_ENOMEM);
    assert_int_equal(ns, 1);
    assert_true(fabs(sp[0].geomean - 1.0) < 1e-12);
    /* nothing to compare */
    assert_int_equal(analysis_speedups(rows + 2, 2, sp, 4, &ns), RK_OK);
    assert_int_equal(ns, 0);
}

static void r7_floors(void **state)
{
    (void)state;
    struct db_measurement_row rows[8];
    struct analysis_speedup sp[4];
    int n = 0, ns = -1;
    memset(rows, 0, sizeof rows);
    /* shape 1: two configurations, the better at 0.95 of its floor; cuBLAS beside, summed never */
    rows[n++].m = meas(1, "tsm2", "tsm2", "{\"t1\":128}", 1000);
    rows[n++].m = meas(2, "tsm2", "tsm2", "{\"t1\":256}", 800);
    rows[n++].m = meas(3, "move", "move", "{}", 760);
    rows[n++].m = meas(4, "cublas_sgemm", "cublas", "{}", 1500);
    /* shape 2: at 0.5 of its floor */
    rows[n].m = meas(5, "tsm2", "tsm2", "{}", 2000), rows[n++].m.n = 16;
    rows[n].m = meas(6, "move", "move", "{}", 1000), rows[n++].m.n = 16;
    /* no floor at its shape: left out */
    rows[n].m = meas(7, "tsm2", "tsm2", "{}", 1000), rows[n++].m.n = 32;
    assert_int_equal(analysis_floors(rows, n, sp, 4, &ns), RK_OK);
    assert_int_equal(ns, 1);
    assert_string_equal(sp[0].kernel, "tsm2");
    assert_int_equal(sp[0].shapes, 2);
    assert_true(fabs(sp[0].geomean - sqrt(0.95 * 0.5)) < 1e-12);
    assert_true(fabs(sp[0].worst - 0.5) < 1e-12);
    assert_true(sp[0].worst_n == 16);
    assert_int_equal(sp[0].below_90, 1);
    /* no floor anywhere: nothing */
    assert_int_equal(analysis_floors(rows, 2, sp, 4, &ns), RK_OK);
    assert_int_equal(ns, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(r1_ok),     cmocka_unit_test(r2_pick),     cmocka_unit_test(r3_effective),
        cmocka_unit_test(r4_copy),   cmocka_unit_test(r5_speedups), cmocka_unit_test(r6_floor),
        cmocka_unit_test(r7_floors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
