/*
 * test_energy.c - the energy meter's arithmetic and its file (collect.h "energy",
 * collect/energy.c): readings of NVML's energy counter apportioned to kernel launches, on
 * made-up samples with known answers. No GPU. Label `unit`.
 *
 * Case map:
 *   E1 collect_energy_between: linear inside a window, the edge windows' power beyond them;
 *      fewer than 2 samples or t1 < t0 give NaN
 *   E2 two-level apportioning: idle power from the windows without a launch, the rest of each
 *      window to its launches; enough windows -> read
 *   E3 two groups sharing windows split by GPU time; a group under 3 windows' worth not read
 *   E4 launches outside every window: counted, not apportioned, not read
 *   E5 no window without a launch: each window split by time (idle unknown, NaN)
 *   E6 the file for roofkit profile: round trip, a tab in a name, a torn last line skipped
 *   E7 collect_energy_open: a meter, or RK_ENODATA with a reason (no NVML here)
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"

#define MS 1000000ull
/* |a - b| <= eps (this cmocka has no assert_double_equal) */
#define near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* n windows of 100 ms from t = 0; e[i] the energy of window i [J]. */
static struct collect_energy_sample *windows(const double *e, int n)
{
    struct collect_energy_sample *s = calloc((size_t)n + 1, sizeof *s);
    assert_non_null(s);
    for (int i = 0; i <= n; i++) {
        s[i].t_ns = (uint64_t)i * 100 * MS;
        s[i].j = i ? s[i - 1].j + e[i - 1] : 1000.0;
    }
    return s;
}

static void e1_between(void **state)
{
    (void)state;
    const double e[] = {10, 20};
    struct collect_energy_sample *s = windows(e, 2);
    near(collect_energy_between(s, 3, 50 * MS, 150 * MS), 15.0, 1e-9);
    near(collect_energy_between(s, 3, 0, 200 * MS), 30.0, 1e-9);
    /* beyond the samples: the last window's 200 W, the first's 100 W */
    near(collect_energy_between(s, 3, 200 * MS, 250 * MS), 10.0, 1e-9);
    near(collect_energy_between(s, 3, 0, 0), 0.0, 1e-12);
    assert_true(isnan(collect_energy_between(s, 1, 0, 10 * MS)));
    assert_true(isnan(collect_energy_between(s, 3, 20 * MS, 10 * MS)));
    free(s);
}

static void e2_two_levels(void **state)
{
    (void)state;
    /* 4 idle windows at 100 W, then 6 with kernel 0 busy 50 ms of each at 400 W */
    double e[10];
    struct collect_energy_busy b[6];
    for (int i = 0; i < 4; i++)
        e[i] = 10.0;
    for (int i = 4; i < 10; i++) {
        e[i] = 100 * 0.05 + 400 * 0.05;
        b[i - 4] = (struct collect_energy_busy){(uint64_t)i * 100 * MS + 20 * MS,
                                                (uint64_t)i * 100 * MS + 70 * MS, 0};
    }
    struct collect_energy_sample *s = windows(e, 10);
    struct collect_energy_share sh[1];
    double idle = 0;
    assert_int_equal(collect_energy_apportion(s, 11, b, 6, sh, 1, &idle), RK_OK);
    near(idle, 100.0, 1e-9);
    near(sh[0].energy_j, 6 * 20.0, 1e-9);
    near(sh[0].busy_ns, 6 * 50.0 * MS, 1e-3);
    near(sh[0].windows, 3.0, 1e-12);
    near(sh[0].outside_ns, 0.0, 1e-12);
    assert_int_equal(sh[0].launches, 6);
    assert_int_equal(collect_energy_read(&sh[0]), 1);
    free(s);
}

static void e3_shared_windows(void **state)
{
    (void)state;
    /* window 0 idle (100 W); windows 1-8: group 0 runs 60 ms, group 1 30 ms (of window 1
     * only), the rest idle */
    double e[9];
    struct collect_energy_busy b[9];
    int nb = 0;
    e[0] = 10;
    for (int w = 1; w < 9; w++) {
        uint64_t t = (uint64_t)w * 100 * MS;
        b[nb++] = (struct collect_energy_busy){t, t + 60 * MS, 0};
        if (w == 1)
            b[nb++] = (struct collect_energy_busy){t + 60 * MS, t + 90 * MS, 1};
        e[w] = w == 1 ? 100 * 0.01 + 300 * 0.09 : 100 * 0.04 + 300 * 0.06;
    }
    struct collect_energy_sample *s = windows(e, 9);
    struct collect_energy_share sh[2];
    double idle = 0;
    assert_int_equal(collect_energy_apportion(s, 10, b, nb, sh, 2, &idle), RK_OK);
    near(idle, 100.0, 1e-9);
    near(sh[0].energy_j, 8 * 300 * 0.06, 1e-9);
    near(sh[1].energy_j, 300 * 0.03, 1e-9);
    near(sh[0].windows, 8 * 0.6, 1e-12);
    near(sh[1].windows, 0.3, 1e-12);
    assert_int_equal(collect_energy_read(&sh[0]), 1);
    assert_int_equal(collect_energy_read(&sh[1]), 0);
    /* a group out of range is skipped, not counted */
    struct collect_energy_busy bad = {0, 10 * MS, 5};
    assert_int_equal(collect_energy_apportion(s, 10, &bad, 1, sh, 2, &idle), RK_OK);
    assert_int_equal(sh[0].launches + sh[1].launches, 0);
    free(s);
}

static void e4_outside(void **state)
{
    (void)state;
    const double e[] = {10, 10, 10, 10};
    struct collect_energy_sample *s = windows(e, 4);
    for (int i = 0; i <= 4; i++)
        s[i].t_ns += 1000 * MS; /* the windows start at 1 s */
    struct collect_energy_busy b[2] = {{100 * MS, 500 * MS, 0}, {990 * MS, 1010 * MS, 1}};
    struct collect_energy_share sh[2];
    double idle = 0;
    assert_int_equal(collect_energy_apportion(s, 5, b, 2, sh, 2, &idle), RK_OK);
    near(sh[0].outside_ns, 400.0 * MS, 1e-3);
    near(sh[0].energy_j, 0.0, 1e-12);
    near(sh[1].outside_ns, 10.0 * MS, 1e-3);
    assert_true(sh[1].energy_j > 0);
    assert_int_equal(collect_energy_read(&sh[0]), 0);
    /* no windows at all: everything outside */
    assert_int_equal(collect_energy_apportion(s, 1, b, 2, sh, 2, &idle), RK_OK);
    near(sh[0].outside_ns, sh[0].busy_ns, 1e-9);
    assert_true(isnan(idle));
    free(s);
}

static void e5_no_idle_window(void **state)
{
    (void)state;
    double e[4] = {30, 30, 30, 30};
    struct collect_energy_busy b[4];
    for (int w = 0; w < 4; w++)
        b[w] = (struct collect_energy_busy){(uint64_t)w * 100 * MS,
                                            (uint64_t)w * 100 * MS + 80 * MS, 0};
    struct collect_energy_sample *s = windows(e, 4);
    struct collect_energy_share sh[1];
    double idle = 0;
    assert_int_equal(collect_energy_apportion(s, 5, b, 4, sh, 1, &idle), RK_OK);
    assert_true(isnan(idle));
    near(sh[0].energy_j, 4 * 30 * 0.8, 1e-9);
    free(s);
}

static void e6_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/rk-energy-test-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c1-2.energy", dir);
    char k[] = "void gemm<float>(int)", r[] = "train\tstep/";
    struct collect_energy_line w[2] = {
        {"kernel", "GPU-1234", 12.5, 3e8, 3.2, 40, k},
        {"nvtx", "GPU-1234", 20.25, 5e8, 5.1, 80, r},
    };
    assert_int_equal(collect_energy_write(path, w, 2), RK_OK);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("kernel\tGPU-1234\t1\t2\t3\t4\ttorn", f); /* no newline: its writer died */
    fclose(f);
    struct collect_energy_line *l = NULL;
    int n = 0;
    assert_int_equal(collect_energy_load(path, &l, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_string_equal(l[0].scope, "kernel");
    assert_string_equal(l[0].uuid, "GPU-1234");
    assert_string_equal(l[0].name, "void gemm<float>(int)");
    near(l[0].energy_j, 12.5, 1e-9);
    assert_int_equal(l[1].launches, 80);
    near(l[1].windows, 5.1, 1e-9);
    assert_string_equal(l[1].name, "train step/");
    collect_energy_lines_free(l, n);
    unlink(path);
    l = NULL;
    n = 0;
    assert_int_equal(collect_energy_load(path, &l, &n), RK_EIO);
    assert_int_equal(n, 0);
    rmdir(dir);
}

static void e7_open(void **state)
{
    (void)state;
    struct collect_energy_meter *m = NULL;
    char why[200] = "";
    int rc = collect_energy_open(NULL, &m, why, sizeof why);
    if (rc == RK_OK) { /* a machine with NVML and a counter */
        assert_non_null(m);
        assert_true(collect_energy_ngpus(m) > 0);
        assert_non_null(collect_energy_uuid(m, 0));
        assert_int_equal(collect_energy_find(m, collect_energy_uuid(m, 0)), 0);
        collect_energy_close(m);
    } else {
        assert_int_equal(rc, RK_ENODATA);
        assert_null(m);
        assert_true(strlen(why) > 0);
    }
    assert_int_equal(collect_energy_find(NULL, "GPU-x"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(e1_between),        cmocka_unit_test(e2_two_levels),
        cmocka_unit_test(e3_shared_windows), cmocka_unit_test(e4_outside),
        cmocka_unit_test(e5_no_idle_window), cmocka_unit_test(e6_file),
        cmocka_unit_test(e7_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
