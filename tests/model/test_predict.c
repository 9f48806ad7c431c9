/*
 * test_predict.c - unit tests of model_predict(): the three models `roofkit model`
 * stores, on numbers computed by hand. Runs anywhere: ctest label `unit`.
 *
 * Case map (id: what):
 *   P1  names: model_kind_name / model_kind_from_name round-trip; unknown refused
 *   P2  roofline: a DRAM-bound and a compute-bound GEMM, times and bound by hand
 *   P3  hierarchical: L2 binds when DRAM traffic is compulsory only; a level with
 *       0 bytes needs no ceiling; shared binds; every term by hand
 *   P4  tsm2: equals model_tsm2_evaluate() at the kernel's (t2, t3); hand time
 *   P5  missing numbers: each model names what it lacks (NaN flops, no bandwidth,
 *       NaN bytes, no gpu, t2 > n) and zeroes *out; NULL arguments
 *   P6  deterministic: two calls give the same bits
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"

/* H100-like ceilings [SI]: the fixture of tests/cli/model_fixture.c uses the same. */
static struct model_predict_in h100_in(void)
{
    struct model_predict_in in;
    memset(&in, 0, sizeof in);
    in.peak_flops = 50e12;
    in.bandwidth[MODEL_LEVEL_DRAM] = 3.0e12;
    in.bandwidth[MODEL_LEVEL_L2] = 10.0e12;
    in.bandwidth[MODEL_LEVEL_L1] = 25.0e12;
    in.bandwidth[MODEL_LEVEL_SHARED] = 30.0e12;
    return in;
}

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("got %.17g, want %.17g (rel tol %g)", got, want, tol);
}

static void test_p1_names(void **state)
{
    (void)state;
    enum model_kind k;
    for (int i = 0; i < MODEL_KIND_COUNT; i++) {
        assert_int_equal(model_kind_from_name(model_kind_name((enum model_kind)i), &k), RK_OK);
        assert_int_equal((int)k, i);
    }
    assert_string_equal(model_kind_name(MODEL_KIND_HIERARCHICAL), "hierarchical");
    assert_string_equal(model_kind_name(MODEL_KIND_COUNT), "?");
    assert_int_equal(model_kind_from_name("Roofline", &k), RK_EUSAGE);
    assert_int_equal(model_kind_from_name(NULL, &k), RK_EUSAGE);
}

static void test_p2_roofline(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;
    const char *why = "x";

    /* 2e9 FLOP at 50e12 = 40 us; 6e9 B at 3e12 = 2 ms: DRAM */
    in.flops = 2e9;
    in.roofline_bytes = 6e9;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_OK);
    assert_null(why);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    assert_rel(p.time_s, 2e-3, 1e-15);
    assert_rel(p.terms.time_compute_s, 4e-5, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_DRAM], 2e-3, 1e-15);
    /* 1e12 FLOP = 20 ms; 1e9 B = 0.333 ms: compute; level bytes are not read */
    in.flops = 1e12;
    in.roofline_bytes = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_COMPUTE);
    assert_rel(p.time_s, 0.02, 1e-15);
    assert_int_equal(p.kind, MODEL_KIND_ROOFLINE);
}

static void test_p3_hierarchical(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;

    /* compulsory DRAM 1e9 B (0.333 ms), L2 = L1 = 6e9 B (0.6 ms, 0.24 ms), shared 3e9 B
     * (0.1 ms), flops 2e9 (40 us): L2 binds */
    in.flops = 2e9;
    in.roofline_bytes = 6e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = 6e9;
    in.level_bytes[MODEL_LEVEL_L1] = 6e9;
    in.level_bytes[MODEL_LEVEL_SHARED] = 3e9;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_L2);
    assert_rel(p.time_s, 6e-4, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_DRAM], 1e9 / 3e12, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_L1], 2.4e-4, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_SHARED], 1e-4, 1e-15);
    assert_rel(p.terms.time_compute_s, 4e-5, 1e-15);

    /* no shared traffic: the missing shared ceiling does not matter */
    in.level_bytes[MODEL_LEVEL_SHARED] = 0;
    in.bandwidth[MODEL_LEVEL_SHARED] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_L2);
    assert_true(p.terms.time_level_s[MODEL_LEVEL_SHARED] == 0.0);

    /* shared traffic dominates: 6e10 B at 30e12 = 2 ms */
    in.bandwidth[MODEL_LEVEL_SHARED] = 30e12;
    in.level_bytes[MODEL_LEVEL_SHARED] = 6e10;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_SHARED);
    assert_rel(p.time_s, 2e-3, 1e-15);
}

static void test_p4_tsm2(void **state)
{
    (void)state;
    struct model_gpu g = {25e12, 3e12, 1.98e9, 132, 65536, 233472, 2048, 780, 8, 0};
    struct model_tsm2_problem pr = {20480, 16, 20480, 8, 128, 16, 8};
    struct model_predict_in in;
    struct model_prediction p;
    struct model_tsm2_eval ev;

    memset(&in, 0, sizeof in);
    in.flops = NAN; /* tsm2 does not read the roofline numbers */
    in.gpu = &g;
    in.tsm2 = &pr;
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, NULL), RK_OK);
    assert_int_equal(model_tsm2_evaluate(&g, &pr, &ev), RK_OK);
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *f = &model_tsm2_fields[i];
        double x = model_field_double(f, &p.tsm2), y = model_field_double(f, &ev);
        assert_true(x == y || (isnan(x) && isnan(y)));
    }
    assert_true(p.time_s == ev.predicted_time_s);
    assert_int_equal(p.bound, ev.bound);
    /* by hand: R_thread = (3*16 + 2*8)*8/4 = 128 registers -> 512 threads/SM (registers
     * bind: S_SM/S_thread = 233472/128 = 1824, HW 2048); util_mem = 512*8 / (780 *
     * 3e12/(132*1.98e9)) = 4096/8953.3 = 0.4575; r = 16/8 * 3e12/25e12 = 0.24 -> memory:
     * time = m*k*n/t2*8 / (3e12*0.4575) */
    assert_rel(ev.max_occupancy, 512.0, 1e-12);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    double util = 512.0 * 8 / (780.0 * 3e12 / (132 * 1.98e9));
    double want = 20480.0 * 20480.0 * 16 / 16 * 8 / (3e12 * util);
    assert_rel(p.time_s, want, 1e-12);
}

static void test_p5_missing(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;
    const char *why = NULL;
    struct model_gpu g = {25e12, 3e12, 1.98e9, 132, 65536, 233472, 2048, 780, 8, 0};
    struct model_tsm2_problem pr = {20480, 4, 20480, 8, 128, 16, 8};

    in.flops = NAN;
    in.roofline_bytes = 1e9;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "flops unknown");
    assert_true(p.time_s == 0.0);

    in.flops = 1e9;
    in.bandwidth[MODEL_LEVEL_DRAM] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no dram bandwidth");

    in = h100_in();
    in.flops = 1e9;
    in.peak_flops = 0;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no compute ceiling");

    in = h100_in();
    in.flops = 1e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = 1e9;
    in.level_bytes[MODEL_LEVEL_L1] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "l1 bytes unknown");
    in.level_bytes[MODEL_LEVEL_L1] = 1e9;
    in.bandwidth[MODEL_LEVEL_L2] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no l2 bandwidth");

    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no tsm2 description");
    in.gpu = &g;
    in.tsm2 = &pr; /* t2 = 16 > n = 4 */
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "t2 must not exceed n");
    g.mem_latency_cycles = NAN;
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "memory latency must be positive");

    assert_int_equal(model_predict(MODEL_KIND_COUNT, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "unknown model");
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, NULL, &p, &why), RK_EUSAGE);
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, NULL, &why), RK_EUSAGE);
}

static void test_p6_deterministic(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction a, b;
    in.flops = 3.3e9;
    in.roofline_bytes = 7.1e8;
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        in.level_bytes[i] = 1.7e8 * (i + 1);
    for (int k = MODEL_KIND_ROOFLINE; k <= MODEL_KIND_HIERARCHICAL; k++) {
        assert_int_equal(model_predict((enum model_kind)k, &in, &a, NULL), RK_OK);
        assert_int_equal(model_predict((enum model_kind)k, &in, &b, NULL), RK_OK);
        assert_true(a.time_s == b.time_s);
        assert_int_equal(a.bound, b.bound);
        for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
            assert_true(a.terms.time_level_s[i] == b.terms.time_level_s[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p1_names),        cmocka_unit_test(test_p2_roofline),
        cmocka_unit_test(test_p3_hierarchical), cmocka_unit_test(test_p4_tsm2),
        cmocka_unit_test(test_p5_missing),      cmocka_unit_test(test_p6_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
