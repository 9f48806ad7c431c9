/*
 * test_combine.c - collect_result_combine and collect_output_additive (collect/metrics.c): the
 * values of all the launches one measured call made (cuBLAS, split-k) folded into one value per
 * metric. Pure C over a hand-built result. Label `unit`.
 *
 * Case map (id: what):
 *   A1  additivity: .sum counts and the FLOP formula add; .per_second, .pct, .avg.* do not
 *   C1  one launch: values copied as they are (a rate needs no duration)
 *   C2  two launches: counts added, rates weighted by duration_ns
 *   N1  no launch recorded, a launch without counters, a NULL value in one launch, a rate of two
 *       launches with one duration unknown: NULL, and only where it applies
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"

/* dram_read_bytes (count), gld_throughput (rate), flop_count_sp (formula of counts). */
static const char *const names[] = {"dram_read_bytes", "gld_throughput", "flop_count_sp"};
#define NOUT 3

struct built {
    struct collect_result r;
    struct collect_launch l[2];
    struct collect_value v[2][NOUT];
};

static void build(struct built *b, int nlaunch)
{
    struct collect_plan *plan = NULL;
    memset(b, 0, sizeof *b);
    assert_int_equal(collect_plan_new(names, NOUT, &plan), 0);
    b->r.plan = plan;
    b->r.mode = COLLECT_MODE_COUNTERS;
    b->r.nlaunch = nlaunch;
    b->r.launch = b->l;
    for (int l = 0; l < nlaunch; l++) {
        b->l[l].has_counters = 1;
        b->l[l].values = b->v[l];
        b->l[l].nvalues = NOUT;
        b->l[l].duration_ns = 100.0 * (l + 1); /* 100, 200 */
        for (int i = 0; i < NOUT; i++)
            b->v[l][i].value = 10.0 * (l + 1) + i; /* 10,11,12 and 20,21,22 */
    }
}

static void release(struct built *b)
{
    collect_plan_free((struct collect_plan *)b->r.plan);
}

static void a1_additive(void **state)
{
    (void)state;
    const char *more[] = {"dram_read_bytes", "gld_throughput",
                          "flop_count_sp",   "achieved_occupancy",
                          "gpu_time",        "sm__inst_executed.avg.per_cycle_active"};
    struct collect_plan *plan = NULL;
    assert_int_equal(collect_plan_new(more, 6, &plan), 0);
    assert_int_equal(collect_output_additive(plan, 0), 1);
    assert_int_equal(collect_output_additive(plan, 1), 0); /* .sum.per_second */
    assert_int_equal(collect_output_additive(plan, 2), 1); /* add + mul + 2 fma */
    assert_int_equal(collect_output_additive(plan, 3), 0); /* .avg.pct_of_peak_... */
    assert_int_equal(collect_output_additive(plan, 4), 1); /* gpu__time_duration.sum */
    assert_int_equal(collect_output_additive(plan, 5), 0);
    collect_plan_free(plan);
}

static void c1_one_launch(void **state)
{
    (void)state;
    struct built b;
    struct collect_value out[NOUT];
    build(&b, 1);
    b.l[0].duration_ns = NAN; /* not needed for one launch */
    assert_int_equal(collect_result_combine(&b.r, out), 1);
    for (int i = 0; i < NOUT; i++) {
        assert_false(out[i].is_null);
        assert_true(out[i].value == 10.0 + i);
    }
    assert_string_equal(out[0].alias, "dram_read_bytes");
    assert_string_equal(out[0].raw, "dram__bytes_read.sum");
    assert_string_equal(out[0].unit, "byte");
    assert_string_equal(out[1].unit, "byte/second");
    release(&b);
}

static void c2_two_launches(void **state)
{
    (void)state;
    struct built b;
    struct collect_value out[NOUT];
    build(&b, 2);
    assert_int_equal(collect_result_combine(&b.r, out), 2);
    assert_true(out[0].value == 10.0 + 20.0);
    assert_true(fabs(out[1].value - (100.0 * 11.0 + 200.0 * 21.0) / 300.0) < 1e-12);
    assert_true(out[2].value == 12.0 + 22.0);
    release(&b);
}

static void n1_nulls(void **state)
{
    (void)state;
    struct built b;
    struct collect_value out[NOUT];

    build(&b, 0);
    collect_result_combine(&b.r, out);
    for (int i = 0; i < NOUT; i++)
        assert_true(out[i].is_null);
    release(&b);

    build(&b, 2);
    b.l[1].has_counters = 0;
    collect_result_combine(&b.r, out);
    for (int i = 0; i < NOUT; i++)
        assert_true(out[i].is_null);
    release(&b);

    build(&b, 2);
    b.v[0][2].is_null = 1;
    collect_result_combine(&b.r, out);
    assert_false(out[0].is_null);
    assert_false(out[1].is_null);
    assert_true(out[2].is_null);
    release(&b);

    build(&b, 2);
    b.l[0].duration_ns = NAN;
    collect_result_combine(&b.r, out);
    assert_false(out[0].is_null); /* counts need no duration */
    assert_true(out[1].is_null);
    assert_false(out[2].is_null);
    release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a1_additive),
        cmocka_unit_test(c1_one_launch),
        cmocka_unit_test(c2_two_launches),
        cmocka_unit_test(n1_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
