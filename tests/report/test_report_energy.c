/*
 * test_report_energy.c - the report's energy section (report/energy.c) on the fixture database
 * (fixture.c) given energy rows: energy readings of its TSM2 and cuBLAS measurements (400 W
 * over their median time, so each energy ratio equals the time ratio), an energy prediction of
 * the roofline model (+10 %), the energy ceilings of a fit and a power limit, and the energy spans
 * of its profiled program. Label `unit`.
 *
 * Case map:
 *   G1 energy-measurements.csv: one row per measurement with a reading, J per launch, W and
 *      GFLOP/J as stored and derived, predicted J and its error where the model predicted one
 *   G2 energy-cublas.csv: each TSM2 shape beside its cuBLAS reference, the energy ratio equal to
 *      the time ratio, "fewer joules" naming the cheaper one
 *   G3 energy-spans.csv: the program, kernel and NVTX spans as stored
 *   G4 the energy roofline: the arch line of each precision equals the formula at every sampled
 *      intensity, the capped line equals it while the power fits the cap and lies under it
 *      beyond; every drawn point has an SVG <title> (gnuplot present); the page stays
 *      script-free and has the section
 *   G5 a database without energy: no energy table, chart or section
 */
#define _POSIX_C_SOURCE 200809L
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
#include <sqlite3.h>

#include "common.h"
#include "db.h"
#include "files.h"
#include "fixture.h"
#include "report.h"

#define near(a, b, rel) assert_true(fabs((a) - (b)) <= (rel)*fmax(fabs(a), fabs(b)))

static char tmp[256];

/* The fixture's energy constants (SI) and the ceilings of fixture.c's add_ceilings. */
#define EPS_FP32 20e-12
#define EPS_FP64 40e-12
#define EPS_DRAM 50e-12
#define EPS_L2   10e-12
#define P0       100.0
#define CAP      700.0
#define PEAK32   51.2e12
#define PEAK64   25.6e12
#define BW       3000e9

static void sql(sqlite3 *h, const char *s)
{
    char *err = NULL;
    if (sqlite3_exec(h, s, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", s, err ? err : "?");
}

static void add_energy(const char *db_path)
{
    struct db *db = NULL;
    struct db_capture *caps = NULL;
    int ncaps = 0;
    int64_t probe = 0, prof = 0;
    static const struct {
        const char *name, *level, *prec, *unit;
        double value;
    } c[] = {
        {"energy_flop_fp32", NULL, "fp32", "pJ/FLOP", EPS_FP32 * 1e12},
        {"energy_flop_fp64", NULL, "fp64", "pJ/FLOP", EPS_FP64 * 1e12},
        {"energy_byte_dram", "dram", NULL, "pJ/B", EPS_DRAM * 1e12},
        {"energy_byte_l2", "l2", NULL, "pJ/B", EPS_L2 * 1e12},
        {"energy_static", NULL, NULL, "W", P0},
        {"power_limit", NULL, NULL, "W", CAP},
    };
    assert_int_equal(db_open(db_path, DB_RW, &db), RK_OK);
    assert_int_equal(db_list_captures(db, &caps, &ncaps), RK_OK);
    for (int i = 0; i < ncaps; i++) {
        if (caps[i].kind == DB_CAPTURE_PROBE && !probe)
            probe = caps[i].id;
        if (caps[i].kind == DB_CAPTURE_PROFILE && !prof)
            prof = caps[i].id;
    }
    db_free_captures(caps, ncaps);
    assert_true(probe > 0 && prof > 0);
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        struct db_ceiling x;
        memset(&x, 0, sizeof x);
        x.name = c[i].name;
        x.kind = "energy";
        x.level = c[i].level;
        x.precision = c[i].prec;
        x.value = x.median = x.min = x.max = c[i].value;
        x.unit = c[i].unit;
        x.method = "fixture, invented";
        x.reps = 30;
        x.theoretical = x.sm_clock_mhz = x.power_w = x.temp_c = NAN;
        assert_int_equal(db_insert_ceiling(db, probe, &x, NULL), RK_OK);
    }
    const struct db_energy_span sp[] = {
        {0, 0, 0, "program", "./app --steps 10", 120.0, 4e8, 300.0, -1},
        {0, 0, 0, "kernel", "void gemm<float>(float const*, float*, int)", 60.0, 2e8, 300.0, 500},
        {0, 0, 0, "nvtx", "step/", 80.0, 2.6e8, 307.7, 700},
    };
    assert_int_equal(db_insert_energy_spans(db, prof, sp, 3), RK_OK);
    db_close(db);

    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db_path, &h), SQLITE_OK);
    sql(h, "UPDATE measurement SET energy_j = time_median_ns * 1e-9 * 400, power_w = 400, "
           "sm_clock_mhz = 1755, temp_c = 55, energy_launches = 200 "
           "WHERE family IN ('tsm2', 'cublas') AND time_median_ns > 0");
    sql(h, "UPDATE prediction SET predicted_energy_j = (SELECT m.energy_j * 1.1 FROM measurement "
           "m WHERE m.id = prediction.measurement_id) WHERE model = 'roofline'");
    sqlite3_close(h);
}

static void report_of(const char *name, int energy, char *out, size_t len)
{
    char db_path[512];
    struct db *db = NULL;
    snprintf(db_path, sizeof db_path, "%s/%s.db", tmp, name);
    snprintf(out, len, "%s/%s-report", tmp, name);
    unlink(db_path);
    assert_int_equal(fixture_make_db(db_path, 0), RK_OK);
    if (energy)
        add_energy(db_path);
    assert_int_equal(db_open(db_path, DB_RO, &db), RK_OK);
    struct report_opts o = {.out_dir = out, .formats = REPORT_HTML | REPORT_CSV};
    assert_int_equal(report_write(db, &o), RK_OK);
    db_close(db);
}

static char out_e[600];

static void read_csv(const char *rel, struct csv *c)
{
    char p[800];
    snprintf(p, sizeof p, "%s/%s", out_e, rel);
    assert_int_equal(csv_read(p, c), 0);
}

/* G1 */
static void g1_measurements(void **state)
{
    (void)state;
    struct csv c;
    int predicted = 0;
    read_csv("csv/energy-measurements.csv", &c);
    assert_true(c.nrows - 1 >= 4);
    for (int r = 1; r < c.nrows; r++) {
        double t_us = atof(csv_get(&c, r, "median time [us]"));
        double j = atof(csv_get(&c, r, "J per launch"));
        near(j, t_us * 1e-6 * 400, 1e-9);
        near(atof(csv_get(&c, r, "average W")), 400.0, 1e-12);
        assert_int_equal(atol(csv_get(&c, r, "energy launches")), 200);
        assert_true(atof(csv_get(&c, r, "GFLOP/J")) > 0);
        const char *model = csv_get(&c, r, "energy model");
        if (strcmp(model, "roofline") == 0) {
            near(atof(csv_get(&c, r, "predicted J")), 1.1 * j, 1e-9);
            near(atof(csv_get(&c, r, "error [%]")), 10.0, 1e-6);
            predicted++;
        } else {
            assert_string_equal(model, "");
            assert_string_equal(csv_get(&c, r, "predicted J"), "");
        }
    }
    assert_true(predicted > 0);
    csv_free(&c);
}

/* G2 */
static void g2_cublas(void **state)
{
    (void)state;
    struct csv c;
    read_csv("csv/energy-cublas.csv", &c);
    assert_true(c.nrows - 1 >= 2);
    for (int r = 1; r < c.nrows; r++) {
        double kj = atof(csv_get(&c, r, "kernel J")), cj = atof(csv_get(&c, r, "cuBLAS J"));
        double ratio = atof(csv_get(&c, r, "kernel / cuBLAS J"));
        near(ratio, kj / cj, 1e-9);
        near(ratio, atof(csv_get(&c, r, "kernel / cuBLAS time")), 1e-9);
        assert_true(strncmp(csv_get(&c, r, "kernel"), "tsm2", 4) == 0);
        assert_true(strncmp(csv_get(&c, r, "cuBLAS reference"), "cublas", 6) == 0);
        assert_string_equal(csv_get(&c, r, "fewer joules"),
                            ratio < 1 ? csv_get(&c, r, "kernel") : "cuBLAS");
    }
    csv_free(&c);
}

/* G3 */
static void g3_spans(void **state)
{
    (void)state;
    struct csv c;
    read_csv("csv/energy-spans.csv", &c);
    assert_int_equal(c.nrows - 1, 3);
    assert_string_equal(csv_get(&c, 1, "scope"), "program");
    assert_string_equal(csv_get(&c, 1, "launches"), "");
    near(atof(csv_get(&c, 1, "energy [J]")), 120.0, 1e-12);
    assert_string_equal(csv_get(&c, 2, "scope"), "kernel");
    near(atof(csv_get(&c, 2, "J per launch")), 60.0 / 500, 1e-12);
    assert_string_equal(csv_get(&c, 3, "name"), "step/");
    near(atof(csv_get(&c, 3, "time [s]")), 0.26, 1e-12);
    csv_free(&c);
}

static double arch(double eps, double peak, double cap, double i)
{
    double dyn = eps + (EPS_DRAM + EPS_L2) / i;
    double t = fmax(1 / peak, 1 / (i * BW));
    if (!isnan(cap))
        t = fmax(t, dyn / (cap - P0));
    return 1e-9 / (dyn + P0 * t);
}

/* G4 */
static void g4_roofline(void **state)
{
    (void)state;
    char p[800];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/plots/energy-roofline-d1.dat", out_e);
    char *dat = slurp(p, &len);
    assert_non_null(dat);
    int rows = 0, bound = 0;
    assert_true(dat[0] == '#'); /* the lines' block: its header, then one row per intensity */
    for (char *line = strtok(strchr(dat, '\n'), "\n"); line; line = strtok(NULL, "\n")) {
        double v[5];
        if (line[0] == '#')
            break; /* the points' blocks */
        assert_int_equal(sscanf(line, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4]), 5);
        near(v[1], arch(EPS_FP32, PEAK32, NAN, v[0]), 1e-5);
        near(v[2], arch(EPS_FP32, PEAK32, CAP, v[0]), 1e-5);
        near(v[3], arch(EPS_FP64, PEAK64, NAN, v[0]), 1e-5);
        near(v[4], arch(EPS_FP64, PEAK64, CAP, v[0]), 1e-5);
        assert_true(v[2] <= v[1] * (1 + 1e-9));
        bound += v[2] < v[1] * (1 - 1e-6);
        rows++;
    }
    assert_true(rows > 100);
    assert_true(bound > 0); /* fp32 at high intensity draws 20 pJ x 51.2 TFLOP/s > 600 W */
    free(dat);

    snprintf(p, sizeof p, "%s/index.html", out_e);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "<section id=\"energy\">"));
    assert_non_null(strstr(html, "Energy roofline of"));
    /* each kernel of the energy table links to its measurement row */
    const char *sec = strstr(html, "<table id=\"energy-measurements\">");
    assert_non_null(sec);
    const char *link = strstr(sec, "<a href=\"#m-");
    assert_non_null(link);
    char row[64];
    snprintf(row, sizeof row, "<tr id=\"%.*s\"", (int)strcspn(link + 10, "\""), link + 10);
    assert_non_null(strstr(html, row));
    assert_null(strstr(html, "<script"));
    free(html);
    snprintf(p, sizeof p, "%s/plots/energy-roofline-d1.svg", out_e);
    if (access(p, F_OK) != 0) {
        print_message("gnuplot absent: the SVG's titles are not checked\n");
        return;
    }
    char *svg = slurp(p, &len);
    assert_true(xml_ok(svg, len));
    int points = 0;
    snprintf(p, sizeof p, "%s/plots/energy-roofline-d1.dat", out_e);
    char *d2 = slurp(p, &len);
    for (char *a = strstr(d2, "# points:"); a; a = strstr(a + 1, "# points:"))
        for (char *l = strchr(a, '\n') + 1; *l && *l != '\n' && *l != '#'; l = strchr(l, '\n') + 1)
            points++;
    assert_true(points >= 4);
    assert_int_equal(count_str(svg, "<title>"),
                     points + count_str(svg, "<title>Gnuplot") +
                         count_str(svg, "<title>gnuplot_plot_")); /* gnuplot's own */
    assert_true(count_str(svg, "<a href=\"../index.html#m-") == points);
    free(d2);
    free(svg);
}

/* G5 */
static void g5_none(void **state)
{
    (void)state;
    char out[600], p[800];
    size_t len = 0;
    report_of("plain", 0, out, sizeof out);
    snprintf(p, sizeof p, "%s/csv/energy-measurements.csv", out);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/plots/energy-roofline-d1.gp", out);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_null(strstr(html, "<section id=\"energy\">"));
    free(html);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/rk-report-energy-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    report_of("energy", 1, out_e, sizeof out_e);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g1_measurements), cmocka_unit_test(g2_cublas), cmocka_unit_test(g3_spans),
        cmocka_unit_test(g4_roofline),     cmocka_unit_test(g5_none),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
