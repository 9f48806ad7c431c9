/*
 * test_report.c - report/ against a database built through db/db.h (fixture.c).
 *
 * Case map:
 *   R1 full report: every file exists (index.html, report.md, csv/, plots/NAME.gp,
 *      .dat, .svg, the marker); the measurement tables have one row per
 *      measurement of their family, and their numbers (shape, times, GFLOP/s,
 *      predictions) equal the database's; every SVG (file and inlined copy) is
 *      well-formed XML; the page has no script and the label at its top
 *   R2 CSV row counts of devices, ceilings and accuracy; the summary against cuBLAS and the
 *      floor; the failed measurement is listed but not drawn
 *   R3 an empty database gives a report that says what is missing
 *   R4 gnuplot missing: RK_ENOTOOL, yet tables, CSV, Markdown and scripts exist
 *   R5 a directory holding someone else's files is refused and left unchanged;
 *      a path under a regular file cannot be created: RK_EIO
 *   R6 a second report into the same directory replaces it and removes the files
 *      of the first that it does not write
 *   R7 report_parse_formats
 *   R8 the measurements of tune captures (sweeps) are left out of the tables and charts,
 *      and both pages say how many
 *   R9 profiled kernels: one roofline series named after the program; the overview's roofline
 *      holds every row's point at each level with bytes (the hierarchical roofline, which
 *      had a chart of its own, is folded into it); the ten kernels that take the most time
 *      are numbered on it, and with --family none the overview's table names profiled kernels
 *      by short names; the tables give useful and executed GFLOP/s and the pipe; a prediction
 *      without a time (a model's reason) is no prediction in any table, and the captions say
 *      which flops the rooflines use
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "db.h"
#include "files.h"
#include "fixture.h"
#include "report.h"

static char tmpdir[256];

static void path(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", tmpdir, rel);
}

static struct db *open_fixture(const char *name, int nmeas)
{
    char p[512];
    struct db *db = NULL;
    path(p, sizeof p, name);
    if (nmeas >= 0)
        assert_int_equal(fixture_make_db(p, nmeas), RK_OK);
    else
        assert_int_equal(db_open(p, DB_RW, &db), RK_OK); /* empty */
    if (!db)
        assert_int_equal(db_open(p, DB_RO, &db), RK_OK);
    return db;
}

/* R9 */
static void test_profiled_and_levels(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("profiled.db", 0);
    struct db_measurement_row *rows = NULL;
    int nrows = 0, nprof = 0, ncounters = 0;
    struct report_opts o = {.out_dir = out};
    size_t len;
    (void)state;
    path(out, sizeof out, "rep-profiled");
    assert_int_equal(report_write(db, &o), RK_OK);
    assert_int_equal(db_query_measurements(db, 0, &rows, &nrows), RK_OK);
    for (int i = 0; i < nrows; i++) {
        nprof += rows[i].m.family == NULL;
        for (int j = 0; j < rows[i].n_metrics; j++)
            ncounters +=
                strcmp(rows[i].metrics[j].name, "dram_read_bytes") == 0 && rows[i].m.verified != 0;
    }
    assert_int_equal(nprof, FIXTURE_PROFILED);
    assert_true(ncounters > 40);

    /* the profiled kernels: one series named after the program, in the overview's roofline */
    snprintf(p, sizeof p, "%s/plots/roofline-d1.dat", out);
    char *dat = slurp(p, &len);
    assert_non_null(dat);
    assert_non_null(strstr(dat, "\n# points: profiled: torch_mix.py at DRAM\n"));
    assert_null(strstr(dat, "# points: (no family)")); /* no block of no family */
    /* the hierarchical roofline's points are in it: every level with bytes of the rows with
     * counters (the former hierarchical chart kept 40 rows; the overview keeps them all, but
     * for points within 3 px of another of their series and level) */
    static const char *const levels[] = {"DRAM", "L2", "L1", "shared"};
    for (int l = 0; l < 4; l++) {
        char head[64];
        int n = 0;
        snprintf(head, sizeof head, " at %s\n", levels[l]);
        for (const char *b = dat; (b = strstr(b, head)); b += strlen(head)) {
            const char *e = strstr(b, "\n\n");
            for (const char *q = b + strlen(head); q < e; q = strchr(q, '\n') + 1)
                n++;
        }
        assert_true(n >= 1 && n <= ncounters + 40);
        if (l == 1)
            assert_true(n > 30);
    }
    free(dat);
    assert_false(exists(out, "plots/roofline-levels-d1.svg")); /* folded into the overview */
    snprintf(p, sizeof p, "%s/plots/roofline-d1.gp", out);
    char *gp = slurp(p, &len);
    assert_non_null(gp);
    char want[128];
    assert_non_null(strstr(gp, "title 'profiled: torch_mix.py ("));
    /* the ten kernels that take the most time are numbered beside their point */
    for (int k = 1; k <= 10; k++) {
        snprintf(want, sizeof want, "'%d' at ", k);
        assert_non_null(strstr(gp, want));
    }
    free(gp);

    /* the profiled kernels alone (--family none): the overview lists them by short names */
    char out2[512];
    const char *const only_none[] = {"none"};
    struct report_opts o2 = {.out_dir = out2, .select = {.families = only_none, .nfamilies = 1}};
    path(out2, sizeof out2, "rep-profiled-only");
    assert_int_equal(report_write(db, &o2), RK_OK);
    struct csv c;
    snprintf(p, sizeof p, "%s/csv/top-kernels-d1.csv", out2);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 10);
    char names[2048] = "";
    for (int r = 1; r < c.nrows; r++) {
        const char *name = csv_get(&c, r, "kernel");
        assert_true(strlen(name) > 0 && strlen(name) <= 28);
        assert_null(strstr(name, "void"));
        assert_null(strpbrk(name, "<>():"));
        strncat(names, name, sizeof names - strlen(names) - 2);
        strcat(names, "|");
        assert_non_null(strstr(csv_get(&c, r, "shape or launch"), "torch_mix.py, grid "));
    }
    csv_free(&c);
    assert_non_null(strstr(names, "vectorized_gather_kernel|"));
    assert_non_null(strstr(names, "reduce_kernel|"));
    assert_non_null(strstr(names, "vectorized_layer_norm_kernel|")); /* 28: kept whole */
    assert_non_null(strstr(names, "cutlass_80_s...8x4_nn_align1|")); /* the wrapper's argument */

    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "where counters measured them, at its L2, L1 and shared "
                                 "intensity"));
    assert_non_null(strstr(html, "executed operations of the busiest pipe over the bytes the "
                                 "counters saw (counters), or the analytic useful flops over the "
                                 "analytic bytes (cost formula); never mixed"));
    snprintf(want, sizeof want, "(and %d rows where a model does not apply, with its reason)",
             2 * FIXTURE_PROFILED);
    assert_non_null(strstr(html, want));
    free(html);

    /* the table of no family: useful GFLOP/s empty, executed GFLOP/s and pipe from counters,
     * no column of a model that only gave its reasons */
    snprintf(p, sizeof p, "%s/csv/measurements-other.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, FIXTURE_PROFILED);
    assert_null(csv_opt(&c, 0, "roofline [ns]"));
    assert_null(csv_opt(&c, 0, "hierarchical [ns]"));
    assert_non_null(csv_opt(&c, 0, "roofline_counters [ns]"));
    int tensor = 0, none = 0;
    for (int r = 1; r < c.nrows; r++) {
        const char *pipe = csv_get(&c, r, "pipe");
        assert_string_equal(csv_get(&c, r, "GFLOP/s"), "");
        assert_string_equal(csv_get(&c, r, "intensity from"), "counters");
        tensor += strcmp(pipe, "tensor bf16") == 0;
        if (strcmp(pipe, "none") == 0) { /* a copy: no operations */
            none++;
            assert_true(strtod(csv_get(&c, r, "executed GFLOP/s"), NULL) == 0);
        } else {
            assert_true(strtod(csv_get(&c, r, "executed GFLOP/s"), NULL) > 0);
        }
        assert_true(strtod(csv_get(&c, r, "roofline_counters [ns]"), NULL) > 0);
    }
    assert_true(tensor > 0 && none > 0);
    csv_free(&c);

    /* a family's table: executed GFLOP/s only with counters; the pipe either way */
    snprintf(p, sizeof p, "%s/csv/measurements-tiled.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    int with = 0, without = 0;
    for (int r = 1; r < c.nrows; r++) {
        if (strcmp(csv_get(&c, r, "intensity from"), "counters") == 0) {
            with++;
            assert_string_equal(csv_get(&c, r, "pipe"), "fp32");
            assert_true(strtod(csv_get(&c, r, "executed GFLOP/s"), NULL) > 0);
        } else {
            without++;
            assert_string_equal(csv_get(&c, r, "pipe"), "fp32 cuda");
            assert_string_equal(csv_get(&c, r, "executed GFLOP/s"), "");
        }
        assert_true(strtod(csv_get(&c, r, "GFLOP/s"), NULL) > 0);
    }
    assert_true(with > 0 && without > 0);
    csv_free(&c);

    /* accuracy: the reasons are no predictions */
    snprintf(p, sizeof p, "%s/csv/accuracy.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    for (int r = 1; r < c.nrows; r++)
        if (strcmp(csv_get(&c, r, "family"), "(no family)") == 0)
            assert_string_equal(csv_get(&c, r, "model"), "roofline_counters");
    csv_free(&c);
    db_free_measurements(rows, nrows);
    db_close(db);
}

/* R1, R2 */
static void test_full_report(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("full.db", 0);
    struct db_measurement_row *rows = NULL;
    int nrows = 0;
    struct report_opts o = {.out_dir = out, .label = "example data recorded on an H100"};
    (void)state;
    path(out, sizeof out, "rep");
    assert_int_equal(report_write(db, &o), RK_OK);
    assert_int_equal(db_query_measurements(db, 0, &rows, &nrows), RK_OK);
    assert_true(nrows > 30);

    static const char *const files[] = {"index.html",
                                        "report.md",
                                        ".roofkit-report",
                                        "csv/devices.csv",
                                        "csv/ceilings.csv",
                                        "csv/accuracy.csv",
                                        "csv/measurements-tiled.csv",
                                        "csv/measurements-tsm2.csv",
                                        "csv/tsm2-threshold.csv",
                                        "csv/tsm2-parameters.csv",
                                        "plots/all.gp",
                                        "plots/roofline-d1.gp",
                                        "plots/roofline-d1.dat",
                                        "plots/roofline-d1.svg",
                                        "csv/top-kernels-d1.csv",
                                        "csv/measurements-other.csv",
                                        "plots/latency-d1.svg",
                                        "plots/predmeas-roofline.svg",
                                        "plots/predmeas-hierarchical.svg",
                                        "plots/gflops-d1-tiled.svg",
                                        "plots/speedup-d1-tiled.svg",
                                        "plots/bw-d1-tsm2-fp32.svg",
                                        "plots/bw-d1-tsm2-fp64.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!exists(out, files[i]))
            fail_msg("missing %s", files[i]);

    /* one row per measurement, numbers equal to the database's */
    static const char *const fams[] = {"tiled", "stmvb", "cublas", "tsm2", "move", NULL};
    int total = 0;
    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
        struct csv c;
        int want = 0;
        snprintf(p, sizeof p, "%s/csv/measurements-%s.csv", out, fams[f] ? fams[f] : "other");
        assert_int_equal(csv_read(p, &c), 0);
        for (int i = 0; i < nrows; i++)
            want += fams[f] ? rows[i].m.family && strcmp(rows[i].m.family, fams[f]) == 0
                            : rows[i].m.family == NULL;
        assert_int_equal(c.nrows - 1, want);
        total += want;
        for (int r = 1; r < c.nrows; r++) {
            long long id = atoll(csv_get(&c, r, "id"));
            const struct db_measurement_row *x = NULL;
            for (int i = 0; i < nrows; i++)
                if (rows[i].m.id == id)
                    x = &rows[i];
            assert_non_null(x);
            assert_string_equal(csv_get(&c, r, "kernel"), x->m.kernel);
            if (fams[f])
                assert_string_equal(fams[f], x->m.family);
            else
                assert_null(x->m.family);
            assert_int_equal(atoll(csv_get(&c, r, "m")), x->m.m);
            assert_int_equal(atoll(csv_get(&c, r, "n")), x->m.n);
            assert_int_equal(atoll(csv_get(&c, r, "k")), x->m.k);
            assert_true(strtod(csv_get(&c, r, "time median [ns]"), NULL) == x->m.time_median_ns);
            assert_true(strtod(csv_get(&c, r, "time min [ns]"), NULL) == x->m.time_min_ns);
            if (x->m.flops == 0.0) { /* move: the bytes alone */
                assert_true(strtod(csv_get(&c, r, "GFLOP/s"), NULL) == 0.0);
            } else if (isfinite(x->m.flops)) {
                double gf = strtod(csv_get(&c, r, "GFLOP/s"), NULL);
                assert_true(fabs(gf / (x->m.flops / x->m.time_median_ns) - 1) < 1e-12);
            } else { /* a profiled kernel: its useful flops are unknown */
                assert_string_equal(csv_get(&c, r, "GFLOP/s"), "");
            }
            if (x->m.params)
                assert_string_equal(csv_get(&c, r, "parameters"), x->m.params);
            for (int j = 0; j < x->n_predictions; j++) {
                char col[128];
                snprintf(col, sizeof col, "%s [ns]", x->predictions[j].model);
                if (isnan(x->predictions[j].predicted_time_ns)) { /* a reason: no prediction */
                    const char *v = csv_opt(&c, r, col);
                    assert_true(v == NULL || *v == '\0');
                    continue;
                }
                assert_true(strtod(csv_get(&c, r, col), NULL) ==
                            x->predictions[j].predicted_time_ns);
                snprintf(col, sizeof col, "%s bound", x->predictions[j].model);
                assert_string_equal(csv_get(&c, r, col), x->predictions[j].bound);
            }
            if (x->m.verified == 0)
                assert_string_equal(csv_get(&c, r, "verified"), "FAILED");
        }
        csv_free(&c);
    }
    assert_int_equal(total, nrows);

    /* R2: other tables */
    struct csv c;
    snprintf(p, sizeof p, "%s/csv/devices.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 1);
    assert_string_equal(csv_get(&c, 1, "name"), "NVIDIA H100 80GB HBM3");
    csv_free(&c);
    snprintf(p, sizeof p, "%s/csv/ceilings.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 12);
    assert_string_equal(csv_get(&c, 1, "ceiling"), "bw_dram_read");
    assert_true(strtod(csv_get(&c, 1, "measured / theoretical"), NULL) == 3000.0 / 3352.0);
    csv_free(&c);
    snprintf(p, sizeof p, "%s/csv/accuracy.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    /* 2 models x (all + 5 families, move among them), roofline_counters x (all + no family) */
    assert_int_equal(c.nrows - 1, 2 * (1 + 5) + 2);
    for (int r = 1; r < c.nrows; r++) { /* median <= p90 <= worst; within 10% <= within 25% */
        double md = strtod(csv_get(&c, r, "median APE [%]"), NULL);
        double p9 = strtod(csv_get(&c, r, "p90 APE [%]"), NULL);
        double wo = strtod(csv_get(&c, r, "worst APE [%]"), NULL);
        assert_true(md <= p9 && p9 <= wo);
        assert_true(strtod(csv_get(&c, r, "within 10% [% of measurements]"), NULL) <=
                    strtod(csv_get(&c, r, "within 25% [% of measurements]"), NULL));
    }
    csv_free(&c);
    snprintf(p, sizeof p, "%s/csv/tsm2-parameters.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 6); /* 3 sizes x 2 precisions */
    assert_true(atoi(csv_get(&c, 1, "exhaustive t2")) >= 1);
    csv_free(&c);
    /* in sum: tiled_gemm and stmvb (fp32, 4 sizes) and tsm2_v3 and tsm2_v0 (both precisions, 3
     * sizes) against cuBLAS; the TSM2 ones against the floor on the one size it was measured */
    snprintf(p, sizeof p, "%s/csv/summary-cublas.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 6);
    for (int r = 1; r < c.nrows; r++) {
        const int tsm2 = strncmp(csv_get(&c, r, "kernel"), "tsm2_", 5) == 0;
        const double gm = strtod(csv_get(&c, r, "speedup over cuBLAS (geomean)"), NULL);
        assert_int_equal(atoi(csv_get(&c, r, "shapes")), tsm2 ? 3 : 4);
        assert_true(gm > 0 && strtod(csv_get(&c, r, "worst speedup"), NULL) <= gm);
        if (tsm2) {
            assert_int_equal(atoi(csv_get(&c, r, "shapes with a floor")), 1);
            assert_true(strtod(csv_get(&c, r, "of the floor (geomean)"), NULL) > 0);
            assert_true(atoi(csv_get(&c, r, "shapes below 0.9 of the floor")) <= 1);
        } else {
            assert_string_equal(csv_get(&c, r, "shapes with a floor"), "");
        }
    }
    csv_free(&c);

    /* the failed measurement (1000^3) is not drawn */
    size_t len;
    snprintf(p, sizeof p, "%s/plots/roofline-d1.dat", out);
    char *dat = slurp(p, &len);
    assert_non_null(dat);
    for (int i = 0; i < nrows; i++)
        if (rows[i].m.verified == 0) {
            char needle[64];
            snprintf(needle, sizeof needle, " %lld\n", (long long)rows[i].m.id);
            assert_null(strstr(dat, needle));
        }
    free(dat);

    /* every SVG file is XML; the page inlines each, still XML, with no script */
    snprintf(p, sizeof p, "%s/plots", out);
    int nsvg = count_files(p, ".svg");
    assert_true(nsvg >= 10);
    DIR *dh = opendir(p);
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".svg"))
            continue;
        char q[1024];
        snprintf(q, sizeof q, "%s/plots/%s", out, e->d_name);
        char *svg = slurp(q, &len);
        assert_non_null(svg);
        if (!xml_ok(svg, len))
            fail_msg("%s is not well-formed XML", q);
        free(svg);
    }
    closedir(dh);
    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_int_equal(count_str(html, "<svg"), nsvg);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "http://www.w3.org/1999/xhtml\"><script"));
    assert_non_null(strstr(html, "example data recorded on an H100"));
    for (const char *s = strstr(html, "<svg"); s; s = strstr(s + 1, "<svg")) {
        const char *end = strstr(s, "</svg>");
        assert_non_null(end);
        if (!xml_ok(s, (size_t)(end + 6 - s)))
            fail_msg("an inlined SVG of index.html is not well-formed XML");
    }
    /* the HTML measurement table of tsm2 has one row per tsm2 measurement (each row carries its
     * id since the charts' points link to it: "<tr id=...>") */
    const char *t = strstr(html, "<table id=\"measurements-tsm2\">");
    assert_non_null(t);
    const char *tend = strstr(t, "</table>");
    int ntsm2 = 0, want = 0;
    for (const char *s = strstr(t, "<tr"); s && s < tend; s = strstr(s + 1, "<tr"))
        ntsm2++;
    for (int i = 0; i < nrows; i++)
        want += rows[i].m.family && strcmp(rows[i].m.family, "tsm2") == 0;
    assert_int_equal(ntsm2 - 1, want); /* minus the header row */
    free(html);

    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = slurp(p, &len);
    assert_non_null(md);
    assert_non_null(strstr(md, "![Roofline of #1 NVIDIA H100 80GB HBM3](plots/roofline-d1.svg)"));
    free(md);
    db_free_measurements(rows, nrows);
    db_close(db);
}

/* R8 */
static void test_tune_left_out(void **state)
{
    char out[512], p[1024];
    struct db *db = NULL;
    struct db_measurement_row *rows = NULL;
    int nrows = 0, want = 0;
    int64_t cap = 0;
    size_t len;
    struct report_opts o = {.out_dir = out};
    (void)state;
    path(p, sizeof p, "tune.db");
    assert_int_equal(fixture_make_db(p, 0), RK_OK);
    assert_int_equal(db_open(p, DB_RW, &db), RK_OK);
    assert_int_equal(db_query_measurements(db, 0, &rows, &nrows), RK_OK);
    for (int i = 0; i < nrows; i++)
        want += rows[i].m.family && strcmp(rows[i].m.family, "tsm2") == 0;
    db_free_measurements(rows, nrows);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_TUNE, "roofkit tune tsm2", "test", &cap),
                     RK_OK);
    for (int i = 0; i < 3; i++) {
        struct db_measurement x;
        memset(&x, 0, sizeof x);
        x.kernel = "tsm2_v3";
        x.family = "tsm2";
        x.precision = "fp32";
        x.m = x.k = 10240;
        x.n = 8;
        x.params = "{\"t1\":128}";
        x.reps = 5;
        x.time_min_ns = x.time_median_ns = x.time_max_ns = 150e3 + i;
        x.verified = 1;
        x.cache_state = "cold";
        x.source = "suite";
        x.launch_index = x.correlation_id = -1;
        assert_int_equal(db_insert_measurement(db, cap, &x, NULL, 0, NULL), RK_OK);
    }
    assert_int_equal(db_capture_end(db, cap, DB_DONE), RK_OK);

    path(out, sizeof out, "rep-tune");
    assert_int_equal(report_write(db, &o), RK_OK);
    struct csv c;
    snprintf(p, sizeof p, "%s/csv/measurements-tsm2.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, want); /* the suite's tsm2 rows, not the sweep's */
    csv_free(&c);
    snprintf(p, sizeof p, "%s/report.md", out);
    char *md = slurp(p, &len);
    assert_non_null(md);
    assert_non_null(strstr(md, "Left out: 3 measurements of 1 `roofkit tune` capture "));
    free(md);
    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "Left out: 3 measurements of 1 <code>roofkit tune</code>"));
    free(html);
    db_close(db);
}

/* R3 */
static void test_empty_db(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("empty.db", -1);
    struct report_opts o = {.out_dir = out};
    size_t len;
    (void)state;
    path(out, sizeof out, "rep-empty");
    assert_int_equal(report_write(db, &o), RK_OK);
    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, &len);
    assert_non_null(html);
    assert_non_null(strstr(html, "No measurements: run 'roofkit run'"));
    assert_non_null(strstr(html, "No device"));
    free(html);
    assert_true(exists(out, "report.md"));
    assert_true(exists(out, "csv/devices.csv"));
    db_close(db);
}

/* R4 */
static void test_no_gnuplot(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("nognuplot.db", 0);
    struct report_opts o = {.out_dir = out, .gnuplot = "/nonexistent/gnuplot"};
    (void)state;
    path(out, sizeof out, "rep-nognuplot");
    assert_int_equal(report_write(db, &o), RK_ENOTOOL);
    assert_true(exists(out, "index.html"));
    assert_true(exists(out, "report.md"));
    assert_true(exists(out, "csv/measurements-tiled.csv"));
    assert_true(exists(out, "plots/roofline-d1.gp"));
    assert_true(exists(out, "plots/roofline-d1.dat"));
    snprintf(p, sizeof p, "%s/plots", out);
    assert_int_equal(count_files(p, ".svg"), 0);
    snprintf(p, sizeof p, "%s/index.html", out);
    char *html = slurp(p, NULL);
    assert_non_null(strstr(html, "gnuplot is not installed"));
    free(html);
    db_close(db);
}

/* R5 */
static void test_foreign_dir(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("foreign.db", 0);
    struct report_opts o = {.out_dir = out, .formats = REPORT_CSV};
    (void)state;
    path(out, sizeof out, "mine");
    mkdir(out, 0777);
    snprintf(p, sizeof p, "%s/index.html", out);
    FILE *f = fopen(p, "w");
    fputs("my own page\n", f);
    fclose(f);
    assert_int_equal(report_write(db, &o), RK_EIO);
    char *s = slurp(p, NULL);
    assert_string_equal(s, "my own page\n");
    free(s);
    snprintf(p, sizeof p, "%s/csv", out);
    assert_int_equal(access(p, F_OK), -1);

    path(out, sizeof out, "mine/index.html/sub"); /* under a regular file */
    assert_int_equal(report_write(db, &o), RK_EIO);
    db_close(db);
}

/* R6 */
static void test_rerun(void **state)
{
    char out[512], p[1024];
    struct db *db = open_fixture("rerun.db", 0);
    struct report_opts o = {.out_dir = out};
    (void)state;
    path(out, sizeof out, "rep-rerun");
    assert_int_equal(report_write(db, &o), RK_OK);
    assert_true(exists(out, "plots/roofline-d1.svg"));
    o.formats = REPORT_CSV; /* no charts this time: the old chart files go */
    assert_int_equal(report_write(db, &o), RK_OK);
    assert_false(exists(out, "plots/roofline-d1.svg"));
    assert_false(exists(out, "plots/roofline-d1.gp"));
    assert_false(exists(out, "index.html"));
    assert_true(exists(out, "csv/measurements-tiled.csv"));
    snprintf(p, sizeof p, "%s/.roofkit-report", out);
    char *m = slurp(p, NULL);
    assert_non_null(strstr(m, "csv/measurements-tiled.csv\n"));
    assert_null(strstr(m, "index.html"));
    free(m);
    db_close(db);
}

/* R7 */
static void test_parse_formats(void **state)
{
    unsigned f = 0;
    (void)state;
    assert_int_equal(report_parse_formats("html,md,csv", &f), RK_OK);
    assert_int_equal(f, REPORT_ALL);
    assert_int_equal(report_parse_formats("csv", &f), RK_OK);
    assert_int_equal(f, REPORT_CSV);
    assert_int_equal(report_parse_formats("pdf", &f), RK_EUSAGE);
    assert_int_equal(report_parse_formats("", &f), RK_EUSAGE);
    assert_int_equal(report_parse_formats("html,", &f), RK_EUSAGE);
    assert_int_equal(report_parse_formats("htmlx", &f), RK_EUSAGE);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rk-test-report-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    rk_set_quiet(1);
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    (void)state;
    if (!getenv("RK_KEEP_TMP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            return -1;
    } else {
        fprintf(stderr, "kept %s\n", tmpdir);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_report),   cmocka_unit_test(test_empty_db),
        cmocka_unit_test(test_no_gnuplot),    cmocka_unit_test(test_foreign_dir),
        cmocka_unit_test(test_rerun),         cmocka_unit_test(test_parse_formats),
        cmocka_unit_test(test_tune_left_out), cmocka_unit_test(test_profiled_and_levels),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
