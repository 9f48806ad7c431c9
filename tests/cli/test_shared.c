/*
 * test_shared.c - unit tests of cli/shared.c's parsing of stored ceilings (no GPU, no
 * database): ctest label `unit`.
 *
 *   C1  rk_dram_curve: points in any order; equal byte counts keep the best bandwidth; a
 *       dip is raised to the best at fewer bytes; utilisation over the best, the last 1
 *   C2  rk_dram_curve: NULL, no params, no "points", malformed pairs, fewer than two
 *       usable points, or max < 2 give 0
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "cli.h"
#include "db.h"

static struct db_ceiling with_params(const char *params)
{
    struct db_ceiling c = {0};
    c.name = "lat_dram_loaded";
    c.params = params;
    return c;
}

static void c1_curve(void **state)
{
    (void)state;
    /* 4 MB twice (2000 and 3000 GB/s), 8 MB dips to 2900, 1 MB at 500, 2 MB at 1500 */
    struct db_ceiling c = with_params("{\"frac\":0.95,\"points\":[[4000000,2000.0],[1000000,500.0],"
                                      "[8000000,2900.0],[4000000,3000.0],[2000000,1500.0]]}");
    double b[8], u[8];
    int n = rk_dram_curve(&c, b, u, 8);
    assert_int_equal(n, 4);
    const double want_b[4] = {1e6, 2e6, 4e6, 8e6}, want_u[4] = {500 / 3e3, 0.5, 1.0, 1.0};
    for (int i = 0; i < 4; i++) {
        assert_true(b[i] == want_b[i]);
        assert_true(fabs(u[i] - want_u[i]) < 1e-12);
    }
    assert_int_equal(rk_dram_curve(&c, b, u, 2), 2); /* the first two pairs read: 1 and 4 MB */
    assert_true(b[0] == 1e6 && b[1] == 4e6 && u[1] == 1.0);
}

static void c2_curve_refused(void **state)
{
    (void)state;
    double b[8], u[8];
    struct db_ceiling none = with_params(NULL), nopts = with_params("{\"frac\":0.95}"),
                      bad = with_params("{\"points\":[[1000000;5.0],[2000000,6.0]]}"),
                      one = with_params("{\"points\":[[1000000,5.0],[0,6.0],[3,-1]]}"),
                      ok = with_params("{\"points\":[[1000000,5.0],[2000000,6.0]]}");
    assert_int_equal(rk_dram_curve(NULL, b, u, 8), 0);
    assert_int_equal(rk_dram_curve(&none, b, u, 8), 0);
    assert_int_equal(rk_dram_curve(&nopts, b, u, 8), 0);
    assert_int_equal(rk_dram_curve(&bad, b, u, 8), 0);
    assert_int_equal(rk_dram_curve(&one, b, u, 8), 0);
    assert_int_equal(rk_dram_curve(&ok, b, u, 1), 0);
    assert_int_equal(rk_dram_curve(&ok, b, u, 8), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(c1_curve),
        cmocka_unit_test(c2_curve_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
