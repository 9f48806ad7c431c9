/*
 * test_report_gpus.c - the report's section of several GPUs, hosts and ranks (report/gpus.c,
 * report/gpucharts.c) against the database of fixture_gpus.c, whose numbers it knows.
 *
 * Case map:
 *   G1 ceilings across GPUs (CSV): one row per ceiling of the GPUs' own, one column per GPU,
 *      min / median / max; a value stored in TB/s shown in the row's GB/s; the flagged column
 *      names the GPU 6 % below on a bandwidth and the one 6 % above on a latency, and no GPU
 *      that is 3 % or 4 % off or better than the median
 *   G2 the same flags in the HTML (the marker, the CSS class, the "Flags" list above the
 *      table, exactly two lines) and in the Markdown
 *   G3 the matrix of each ceiling of GPU pairs: the cells of both directions, the diagonal
 *      "—" (empty in the CSV), the colour scale in the cells' inline style, darker is better
 *      (the higher bandwidth, the lower latency)
 *   G4 kernel time per rank: launches, kernel time, share and time / mean of each rank, the
 *      GPUs a rank's launches named, the imbalance in the HTML and Markdown; a program
 *      profiled as one rank forms no group
 *   G5 the captures table: host, rank, local rank, world size, other GPUs measured at the
 *      same time, other GPUs busy
 *   G6 the charts: every GPU's DRAM and peaks on one roofline, a heat map per pair ceiling, a
 *      bar chart per group of ranks; every SVG well-formed and inlined, no script; the
 *      ceilings table names the peer of a pair ceiling; a launch that names its GPU is listed
 *      under that GPU
 *   G7 a one-GPU database: no section, no file of it, also when its captures name their host;
 *      a capture beside a busy GPU brings the captures table alone
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

#include "common.h"
#include "db.h"
#include "files.h"
#include "fixture.h"
#include "report.h"

static char tmpdir[256];
static char out[512]; /* the report of the fixture of several GPUs */

static const char *const gpu_col[3] = {
    "#1 NVIDIA H100 80GB HBM3 GPU-aaaaaaaa (host n1)",
    "#2 NVIDIA H100 80GB HBM3 GPU-bbbbbbbb (host n1)",
    "#3 NVIDIA H100 80GB HBM3 GPU-cccccccc (host n2)",
};

static char *read_out(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", out, rel);
    char *s = slurp(p, NULL);
    if (!s)
        fail_msg("cannot read %s", p);
    return s;
}

static void read_csv(const char *rel, struct csv *c)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", out, rel);
    if (csv_read(p, c) != 0)
        fail_msg("cannot read %s", p);
}

/* The row of c whose column col is v; fails when none. */
static int csv_row(const struct csv *c, const char *col, const char *v)
{
    for (int r = 1; r < c->nrows; r++)
        if (strcmp(csv_get(c, r, col), v) == 0)
            return r;
    fail_msg("no row with %s = %s", col, v);
    return -1;
}

static double num(const struct csv *c, int r, const char *col)
{
    const char *s = csv_get(c, r, col);
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end)
        fail_msg("column %s of row %d is not a number: '%s'", col, r, s);
    return v;
}

/* The text of HTML element <tag id="id"> up to its closing tag (malloc'd). */
static char *html_part(const char *html, const char *open, const char *close)
{
    const char *b = strstr(html, open), *e = b ? strstr(b, close) : NULL;
    if (!e)
        fail_msg("no %s ... %s in the page", open, close);
    size_t n = (size_t)(e - b) + strlen(close);
    char *s = malloc(n + 1);
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

/* G1 */
static void test_ceilings_by_gpu(void **state)
{
    struct csv c;
    (void)state;
    read_csv("csv/ceilings-by-gpu.csv", &c);
    assert_int_equal(c.nrows - 1, 9); /* the 9 ceilings of each GPU, none of a pair */
    for (int g = 0; g < 3; g++)
        assert_non_null(csv_opt(&c, 0, gpu_col[g]));
    assert_null(csv_opt(&c, 0, "bw_peer_ce_uni"));
    for (int r = 1; r < c.nrows; r++)
        assert_null(strstr(csv_get(&c, r, "ceiling"), "peer"));

    int r = csv_row(&c, "ceiling", "bw_dram_read");
    assert_string_equal(csv_get(&c, r, "unit"), "GB/s");
    assert_string_equal(csv_get(&c, r, "better"), "higher");
    assert_true(num(&c, r, gpu_col[1]) == 2820);
    assert_true(num(&c, r, "min") == 2820);
    assert_true(num(&c, r, "median") == 3000);
    assert_true(num(&c, r, "max") == 3000);
    assert_string_equal(csv_get(&c, r, "flagged"), "GPU-bbbbbbbb (host n1) 6.0 % below");

    r = csv_row(&c, "ceiling", "lat_chase_dram");
    assert_string_equal(csv_get(&c, r, "better"), "lower");
    assert_true(num(&c, r, gpu_col[2]) == 826.8);
    assert_true(num(&c, r, "min") == 780);
    assert_true(num(&c, r, "median") == 780);
    assert_true(num(&c, r, "max") == 826.8);
    assert_string_equal(csv_get(&c, r, "flagged"), "GPU-cccccccc (host n2) 6.0 % above");

    r = csv_row(&c, "ceiling", "bw_shared_read"); /* B stored 30 TB/s */
    assert_string_equal(csv_get(&c, r, "unit"), "GB/s");
    assert_true(num(&c, r, gpu_col[1]) == 30000);
    assert_true(num(&c, r, "max / min") == 1);

    /* 3 % below, 4 % above, better than the median: not flagged */
    static const char *const quiet[] = {"bw_l2_read", "lat_chase_l1", "lat_chase_l2",
                                        "launch_async", "peak_fp32_fma"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
        assert_string_equal(csv_get(&c, csv_row(&c, "ceiling", quiet[i]), "flagged"), "");
    r = csv_row(&c, "ceiling", "bw_l2_read");
    assert_true(num(&c, r, "min") == 8730);
    assert_true(num(&c, r, "median") == 9000);
    r = csv_row(&c, "ceiling", "launch_async");
    assert_string_equal(csv_get(&c, r, "better"), "lower");
    assert_true(num(&c, r, "min") == 2.425);
    csv_free(&c);
}

/* G2 */
static void test_flags_pages(void **state)
{
    (void)state;
    char *html = read_out("index.html");
    char *tab = html_part(html, "<h3 id=\"t-ceilings-by-gpu\">", "</table>");
    char *flags = html_part(tab, "<div class=\"flags\"", "</div>");
    assert_non_null(strstr(flags, "<b>Flags</b>"));
    assert_int_equal(count_str(flags, "<li>"), 2);
    assert_non_null(strstr(flags, "<li>GPU-bbbbbbbb (host n1) bw_dram_read 6.0 % below the "
                                  "median (2820 against 3000 GB/s)</li>"));
    assert_non_null(strstr(flags, "<li>GPU-cccccccc (host n2) lat_chase_dram 6.0 % above the "
                                  "median (826.8 against 780 cycles): higher is worse</li>"));
    assert_true(strstr(tab, "<div class=\"flags\"") < strstr(tab, "<table")); /* above it */
    assert_int_equal(count_str(tab, "<td class=\"n flag\">"), 2);
    assert_non_null(strstr(tab, "<td class=\"n flag\">2820 ⚠</td>"));
    assert_non_null(strstr(tab, "<td class=\"n flag\">826.8 ⚠</td>"));
    assert_non_null(strstr(tab, "higher is better"));
    assert_non_null(strstr(tab, "lower is better"));
    assert_non_null(strstr(html, "tr td.flag{")); /* its style, in the page's head */
    free(flags);
    free(tab);
    free(html);

    char *md = read_out("report.md");
    assert_non_null(strstr(md, "## Several GPUs, hosts and ranks\n"));
    assert_non_null(strstr(md, "### Ceilings across GPUs\n"));
    assert_non_null(strstr(md, "**Flags:**\n\n- GPU-bbbbbbbb (host n1) bw_dram_read 6.0 % below "
                               "the median (2820 against 3000 GB/s)\n- GPU-cccccccc (host n2) "
                               "lat_chase_dram 6.0 % above the median (826.8 against 780 "
                               "cycles): higher is worse\n\n"));
    assert_non_null(strstr(md, "| 2820 ⚠ |"));
    free(md);
}

/* G3 */
static void test_peer_matrix(void **state)
{
    struct csv c;
    (void)state;
    read_csv("csv/peer-bw_peer_ce_uni.csv", &c);
    assert_int_equal(c.ncols, 3); /* the pair's two GPUs: C has no pair ceiling */
    assert_int_equal(c.nrows - 1, 2);
    assert_string_equal(c.f[0], "source \\ destination");
    assert_string_equal(c.f[1], "GPU-aaaaaaaa (host n1)");
    assert_string_equal(c.f[2], "GPU-bbbbbbbb (host n1)");
    int a = csv_row(&c, "source \\ destination", "GPU-aaaaaaaa (host n1)");
    int b = csv_row(&c, "source \\ destination", "GPU-bbbbbbbb (host n1)");
    assert_string_equal(csv_get(&c, a, "GPU-aaaaaaaa (host n1)"), "");
    assert_true(num(&c, a, "GPU-bbbbbbbb (host n1)") == 50);
    assert_true(num(&c, b, "GPU-aaaaaaaa (host n1)") == 48);
    assert_string_equal(csv_get(&c, b, "GPU-bbbbbbbb (host n1)"), "");
    csv_free(&c);
    read_csv("csv/peer-lat_peer_chase.csv", &c);
    assert_true(num(&c, 1, "GPU-bbbbbbbb (host n1)") == 900);
    assert_true(num(&c, 2, "GPU-aaaaaaaa (host n1)") == 950);
    csv_free(&c);

    char *html = read_out("index.html");
    char *bw = html_part(html, "<table id=\"peer-bw_peer_ce_uni\">", "</table>");
    assert_int_equal(count_str(bw, "<td class=\"diag\">—</td>"), 2);
    /* darker is better: the higher bandwidth darkest, the lower lightest */
    assert_non_null(strstr(bw, "style=\"background:#08519c;color:#fff\">50</td>"));
    assert_non_null(strstr(bw, "style=\"background:#f7fbff\">48</td>"));
    char *lat = html_part(html, "<table id=\"peer-lat_peer_chase\">", "</table>");
    assert_non_null(strstr(lat, "style=\"background:#08519c;color:#fff\">900</td>"));
    assert_non_null(strstr(lat, "style=\"background:#f7fbff\">950</td>"));
    free(bw);
    free(lat);
    assert_non_null(strstr(html, "Best: GPU-aaaaaaaa (host n1) to GPU-bbbbbbbb (host n1), 50 "
                                 "GB/s; worst: GPU-bbbbbbbb (host n1) to GPU-aaaaaaaa (host n1), "
                                 "48 GB/s."));
    free(html);
    char *md = read_out("report.md");
    assert_non_null(strstr(md, "### GPU pairs: bw_peer_ce_uni [GB/s]\n"));
    assert_non_null(strstr(md, "| GPU-aaaaaaaa (host n1) | — | 50 |"));
    free(md);
}

/* G4 */
static void test_ranks(void **state)
{
    struct csv c;
    char p[1024];
    (void)state;
    read_csv("csv/ranks-1.csv", &c);
    assert_int_equal(c.nrows - 1, 2);
    int r0 = csv_row(&c, "rank", "0"), r1 = csv_row(&c, "rank", "1");
    assert_string_equal(csv_get(&c, r0, "host"), "n1");
    assert_string_equal(csv_get(&c, r0, "GPU"), "GPU-aaaaaaaa, GPU-bbbbbbbb");
    assert_string_equal(csv_get(&c, r0, "local rank"), "0");
    assert_true(num(&c, r0, "launches") == 3);
    assert_true(fabs(num(&c, r0, "kernel time [ms]") - 0.6) < 1e-12);
    assert_true(fabs(num(&c, r0, "share [%]") - 37.5) < 1e-9);
    assert_true(fabs(num(&c, r0, "time / mean") - 0.75) < 1e-12);
    assert_string_equal(csv_get(&c, r1, "host"), "n2");
    assert_string_equal(csv_get(&c, r1, "GPU"), "GPU-cccccccc");
    assert_true(num(&c, r1, "launches") == 2);
    assert_true(fabs(num(&c, r1, "kernel time [ms]") - 1.0) < 1e-12);
    assert_true(fabs(num(&c, r1, "share [%]") - 62.5) < 1e-9);
    assert_true(fabs(num(&c, r1, "time / mean") - 1.25) < 1e-12);
    csv_free(&c);
    snprintf(p, sizeof p, "%s/csv/ranks-2.csv", out); /* ./other: one rank, no group */
    assert_int_equal(access(p, F_OK), -1);

    static const char imb[] = "Imbalance (max / mean rank time): 1.250, the slowest rank 1 (1 ms "
                              "against a mean of 0.8 ms)";
    char *html = read_out("index.html");
    assert_non_null(strstr(html, "Kernel time per rank: ./app --steps 2"));
    assert_non_null(strstr(html, imb));
    assert_null(strstr(html, "Kernel time per rank: ./other"));
    free(html);
    char *md = read_out("report.md");
    assert_non_null(strstr(md, imb));
    free(md);
}

/* G5 */
static void test_captures(void **state)
{
    struct csv c;
    (void)state;
    read_csv("csv/captures.csv", &c);
    assert_int_equal(c.nrows - 1, 6);
    for (int r = 1; r <= 3; r++) { /* the probes */
        assert_string_equal(csv_get(&c, r, "kind"), "probe");
        assert_string_equal(csv_get(&c, r, "rank"), "");
        assert_string_equal(csv_get(&c, r, "other GPUs measured at the same time"),
                            r < 3 ? "1" : "0");
        assert_string_equal(csv_get(&c, r, "other GPUs busy"), r < 3 ? "0" : "1");
    }
    assert_string_equal(csv_get(&c, 3, "host"), "n2");
    assert_string_equal(csv_get(&c, 3, "GPU"), "GPU-cccccccc (host n2)");
    assert_string_equal(csv_get(&c, 5, "kind"), "profile");
    assert_string_equal(csv_get(&c, 5, "host"), "n2");
    assert_string_equal(csv_get(&c, 5, "rank"), "1");
    assert_string_equal(csv_get(&c, 5, "local rank"), "0");
    assert_string_equal(csv_get(&c, 5, "world size"), "2");
    assert_string_equal(csv_get(&c, 5, "other GPUs busy"), "");
    assert_string_equal(csv_get(&c, 5, "measurements"), "2");
    csv_free(&c);
}

/* G6 */
static void test_charts(void **state)
{
    char p[1024];
    size_t len;
    (void)state;
    static const char *const files[] = {
        "plots/roofline-gpus.svg", "plots/peer-bw_peer_ce_uni.svg", "plots/peer-lat_peer_chase.svg",
        "plots/ranks-1.svg",       "plots/roofline-d1.svg",         "plots/roofline-d3.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!exists(out, files[i]))
            fail_msg("missing %s", files[i]);
    char *gp = read_out("plots/roofline-gpus.gp");
    for (int g = 0; g < 3; g++) { /* each GPU's DRAM line in its colour, named in the key */
        char want[160];
        snprintf(want, sizeof want, "bwline(x, bw_%d, top_%d) with lines lw 2", g, g);
        assert_non_null(strstr(gp, want));
    }
    assert_non_null(strstr(gp, "bw_1 = 2820    # GPU-bbbbbbbb (host n1): bw_dram_read"));
    assert_non_null(strstr(gp, "title 'GPU-cccccccc (host n2): DRAM 3000 GB/s'"));
    assert_non_null(strstr(gp, "pkline(x, pk_2_1, bw_2)")); /* C's fp64 peak */
    assert_non_null(strstr(gp, "title 'peak_fp64_fma'"));
    free(gp);
    char *dat = read_out("plots/ranks-1.dat");
    assert_non_null(strstr(dat, "0 0.6 "));
    assert_non_null(strstr(dat, "1 1 "));
    free(dat);

    snprintf(p, sizeof p, "%s/plots", out);
    int nsvg = count_files(p, ".svg");
    char *html = read_out("index.html");
    assert_int_equal(inlined_svgs(html), nsvg); /* each well-formed XML */
    assert_null(strstr(html, "<script"));
    /* the roofline of all GPUs under the ceilings across GPUs, each heat map under its matrix */
    const char *t = strstr(html, "<table id=\"ceilings-by-gpu\">");
    const char *f = strstr(html, "<figure id=\"c-roofline-gpus\">");
    const char *m = strstr(html, "<table id=\"peer-bw_peer_ce_uni\">");
    assert_true(t && f && m && t < f && f < m);
    assert_true(m < strstr(html, "<figure id=\"c-peer-bw_peer_ce_uni\">"));
    free(html);
    char *svg = read_out("plots/peer-bw_peer_ce_uni.svg");
    len = strlen(svg);
    assert_true(xml_ok(svg, len));
    free(svg);

    struct csv c;
    read_csv("csv/ceilings.csv", &c); /* the pair ceilings name their peer */
    int n = 0;
    for (int r = 1; r < c.nrows; r++)
        if (strcmp(csv_get(&c, r, "ceiling"), "bw_peer_ce_uni") == 0) {
            assert_string_equal(csv_get(&c, r, "peer device"),
                                strcmp(csv_get(&c, r, "device"), "1") == 0 ? "2" : "1");
            n++;
        }
    assert_int_equal(n, 2);
    csv_free(&c);
    read_csv("csv/measurements-other.csv", &c); /* rank 0's second launch ran on GPU B */
    int onb = 0;
    for (int r = 1; r < c.nrows; r++)
        onb += strcmp(csv_get(&c, r, "device"), "2") == 0;
    assert_int_equal(onb, 2); /* that launch and ./other's */
    csv_free(&c);
}

/* G7 */
static void test_one_gpu(void **state)
{
    char p[1024], o1[512];
    struct db *db = NULL;
    (void)state;
    snprintf(p, sizeof p, "%s/one.db", tmpdir);
    snprintf(o1, sizeof o1, "%s/rep-one", tmpdir);
    assert_int_equal(fixture_make_db(p, 0), RK_OK);
    assert_int_equal(db_open(p, DB_RO, &db), RK_OK);
    struct report_opts o = {.out_dir = o1};
    assert_int_equal(report_write(db, &o), RK_OK);
    db_close(db);
    static const char *const none[] = {"csv/captures.csv", "csv/ceilings-by-gpu.csv",
                                       "plots/roofline-gpus.gp", "csv/ranks-1.csv"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        assert_false(exists(o1, none[i]));
    snprintf(p, sizeof p, "%s/index.html", o1);
    char *html = slurp(p, NULL);
    assert_non_null(html);
    assert_null(strstr(html, "Several GPUs"));
    assert_null(strstr(html, "td.flag"));
    assert_null(strstr(html, "peer device"));
    free(html);
    snprintf(p, sizeof p, "%s/report.md", o1);
    char *md = slurp(p, NULL);
    assert_non_null(md);
    assert_null(strstr(md, "Several GPUs"));
    free(md);

    /* a capture that names its host adds nothing; one beside a busy GPU adds the captures */
    int64_t cap;
    snprintf(p, sizeof p, "%s/one.db", tmpdir);
    assert_int_equal(db_open(p, DB_RW, &db), RK_OK);
    for (int busy = 0; busy < 2; busy++) {
        struct db_origin og = {"n1", -1, -1, -1, 0, busy};
        assert_int_equal(db_set_origin(db, &og), RK_OK);
        assert_int_equal(db_capture_begin(db, 1, DB_CAPTURE_PROBE, "roofkit probe", "t", &cap),
                         RK_OK);
        assert_int_equal(db_capture_end(db, cap, DB_DONE), RK_OK);
        assert_int_equal(report_write(db, &o), RK_OK);
        assert_int_equal(exists(o1, "csv/captures.csv"), busy);
        assert_false(exists(o1, "csv/ceilings-by-gpu.csv"));
    }
    db_close(db);
}

static int setup(void **state)
{
    char p[512];
    struct db *db = NULL;
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rk-test-report-gpus-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    rk_set_quiet(1);
    snprintf(p, sizeof p, "%s/gpus.db", tmpdir);
    snprintf(out, sizeof out, "%s/rep", tmpdir);
    if (fixture_make_gpus_db(p) != RK_OK || db_open(p, DB_RO, &db) != RK_OK)
        return -1;
    struct report_opts o = {.out_dir = out};
    int rc = report_write(db, &o);
    db_close(db);
    return rc == RK_OK ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[300];
    (void)state;
    if (getenv("RK_KEEP_TMP")) {
        fprintf(stderr, "kept %s\n", tmpdir);
        return 0;
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ceilings_by_gpu), cmocka_unit_test(test_flags_pages),
        cmocka_unit_test(test_peer_matrix),     cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_captures),        cmocka_unit_test(test_charts),
        cmocka_unit_test(test_one_gpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
