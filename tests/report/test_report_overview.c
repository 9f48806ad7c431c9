/*
 * test_report_overview.c - the report's overview, its points' titles and links, and the
 * selection (report/roofline.c, overview.c, marks.c, select.c), on databases built through db/.
 *
 * Case map:
 *   O1 index.html opens with the overview: the first chart comes before the first table, the
 *      overview's table right after its device's roofline, the contents after both
 *   O2 every plotted point has a <title>: in every chart, the data lines of its "points:"
 *      blocks are as many as the titles in plots/NAME.svg and in the page's inlined copy; every
 *      link of a point leads to a table row of the page (<tr id="m-ID">); no script, no event
 *      handler attribute, every SVG well-formed
 *   O3 the overview's numbers equal the database: the kernels grouped by name, shape, precision
 *      and parameters, their summed median times, shares, summed predictions of the model the
 *      table names and errors, the 10 that take the most time, in order
 *   O4 selection on a database of 2 run captures x 2 families: --capture, --family, --kernel
 *      (exact, function name, regex:), --device (id, UUID prefix) each keep only what they
 *      select, in the tables, the charts' data and the page's rows
 *   O5 refused selections (a capture, device or family the database does not hold, a bad
 *      regular expression, a selection that leaves no measurement): RK_EUSAGE, nothing written
 *   O6 a chart that reads at a glance: ceilings labelled on their lines (no ceiling in the
 *      key), datasheet lines light and dashed, series told apart by colour and marker; more
 *      than 8 ceilings split the roofline per precision, each chart with at most 8
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
#include "model.h"
#include "report.h"

static char tmpdir[256];

static void path(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", tmpdir, rel);
}

static char *read_in(const char *dir, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return slurp(p, NULL);
}

/* The fixture's database (fixture.c) with its report in out. */
static struct db *fixture_report(const char *name, char *out, size_t len)
{
    char p[512];
    struct db *db = NULL;
    path(p, sizeof p, name);
    if (access(p, F_OK) != 0)
        assert_int_equal(fixture_make_db(p, 0), RK_OK);
    assert_int_equal(db_open(p, DB_RO, &db), RK_OK);
    snprintf(out, len, "%s/rep-%s", tmpdir, name);
    struct report_opts o = {.out_dir = out, .label = "overview test"};
    assert_int_equal(report_write(db, &o), RK_OK);
    return db;
}

/* O1 */
static void test_order(void **state)
{
    char out[512];
    (void)state;
    struct db *db = fixture_report("order.db", out, sizeof out);
    char *html = read_in(out, "index.html");
    assert_non_null(html);
    const char *fig = strstr(html, "<figure"), *tab = strstr(html, "<table");
    assert_non_null(fig);
    assert_non_null(tab);
    assert_true(fig < tab); /* the first chart before the first table */
    const char *ov = strstr(html, "<section id=\"overview\">");
    const char *roof = strstr(html, "<figure id=\"c-roofline-d1\">");
    const char *top = strstr(html, "<table id=\"top-kernels-d1\">");
    const char *nav = strstr(html, "<nav>");
    const char *dev = strstr(html, "<section id=\"devices\">");
    assert_non_null(ov);
    assert_non_null(roof);
    assert_non_null(top);
    assert_non_null(nav);
    assert_non_null(dev);
    assert_true(ov < roof && roof < top && top < nav && nav < dev);
    assert_true(strstr(html, "<table") == top); /* the overview's is the first table */
    assert_null(strstr(html, "<script"));
    free(html);
    char *md = read_in(out, "report.md");
    assert_non_null(md);
    assert_true(strstr(md, "## Overview") < strstr(md, "## Devices and ceilings"));
    free(md);
    db_close(db);
}

/* Data lines of the blocks of a .dat file that carry a "points:" heading. */
static int dat_points(const char *dat)
{
    int n = 0, in = 0;
    for (const char *l = dat; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (len == 0)
            in = 0; /* a blank line ends a block */
        else if (*l == '#') {
            for (size_t k = 0; k + 7 <= len; k++)
                in |= strncmp(l + k, "points:", 7) == 0;
        } else if (in)
            n++;
        l += len + (e != NULL);
    }
    return n;
}

/* O2 */
static void test_titles(void **state)
{
    char out[512], dir[600];
    (void)state;
    struct db *db = fixture_report("titles.db", out, sizeof out);
    char *html = read_in(out, "index.html");
    assert_non_null(html);
    snprintf(dir, sizeof dir, "%s/plots", out);
    DIR *dh = opendir(dir);
    struct dirent *e;
    int charts = 0, total = 0;
    assert_non_null(dh);
    while ((e = readdir(dh))) {
        size_t l = strlen(e->d_name);
        char rel[400], name[300];
        if (l < 5 || strcmp(e->d_name + l - 4, ".dat"))
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(l - 4), e->d_name);
        snprintf(rel, sizeof rel, "plots/%s.dat", name);
        char *dat = read_in(out, rel);
        snprintf(rel, sizeof rel, "plots/%s.svg", name);
        char *svg = read_in(out, rel);
        assert_non_null(dat);
        assert_non_null(svg);
        int want = dat_points(dat);
        if (count_str(svg, "</title><use") != want)
            fail_msg("%s: %d points in the data, %d titled in the SVG", name, want,
                     count_str(svg, "</title><use"));
        /* the page's copy */
        char fig[400];
        snprintf(fig, sizeof fig, "<figure id=\"c-%s\">", name);
        const char *f = strstr(html, fig), *fe = f ? strstr(f, "</figure>") : NULL;
        assert_non_null(fe);
        int inl = 0;
        for (const char *s = f; (s = strstr(s, "</title><use")) && s < fe; s++)
            inl++;
        if (inl != want)
            fail_msg("%s: %d points in the data, %d titled in index.html", name, want, inl);
        total += want;
        charts++;
        free(dat);
        free(svg);
    }
    closedir(dh);
    assert_true(charts >= 10);
    assert_true(total > 100);
    /* every link of a point leads to a row of the page */
    int links = 0;
    for (const char *s = html; (s = strstr(s, "<a href=\"#m-")); s++) {
        char id[64];
        long long v = atoll(s + 12);
        snprintf(id, sizeof id, "<tr id=\"m-%lld\">", v);
        if (!strstr(html, id))
            fail_msg("a point links to m-%lld, no row has that id", v);
        links++;
    }
    assert_true(links > 100);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "onmousemove"));
    assert_null(strstr(html, "onclick"));
    assert_null(strstr(html, "href=\"../index.html")); /* made local when inlined */
    assert_true(inlined_svgs(html) >= 10);
    /* the SVG files link to the page */
    char *svg = read_in(out, "plots/roofline-d1.svg");
    assert_non_null(strstr(svg, "<a href=\"../index.html#m-"));
    assert_true(xml_ok(svg, strlen(svg)));
    free(svg);
    /* a title says which kernel, its shape, time, GFLOP/s, intensity, bound and prediction */
    const char *t = strstr(html, "<a href=\"#m-");
    t = strstr(t, "<title>");
    const char *te = strstr(t, "</title>");
    char one[600];
    snprintf(one, sizeof one, "%.*s", (int)(te - t), t);
    assert_non_null(strstr(one, " GFLOP/s"));
    assert_non_null(strstr(one, " FLOP/B ("));
    assert_non_null(strstr(one, " bound, "));
    assert_non_null(strstr(one, " % of roof"));
    free(html);
    db_close(db);
}

/* One group of the overview: a kernel's launches with one shape, precision and parameters. */
struct grp {
    const struct db_measurement_row *r;
    double t, pred, pred_meas;
    int n, npred;
};

static int same_kernel(const struct db_measurement *a, const struct db_measurement *b)
{
#define S(x) ((x) ? (x) : "")
    return strcmp(S(a->kernel), S(b->kernel)) == 0 &&
           strcmp(S(a->precision), S(b->precision)) == 0 && a->m == b->m && a->n == b->n &&
           a->k == b->k && strcmp(S(a->params), S(b->params)) == 0;
#undef S
}

static int cmp_grp(const void *pa, const void *pb)
{
    const struct grp *a = pa, *b = pb;
    return a->t != b->t ? (a->t > b->t ? -1 : 1) : 0;
}

/* O3 */
static void test_overview_numbers(void **state)
{
    char out[512], p[1024];
    struct db_measurement_row *rows = NULL;
    int nrows = 0, ng = 0;
    (void)state;
    struct db *db = fixture_report("numbers.db", out, sizeof out);
    assert_int_equal(db_query_measurements(db, 0, &rows, &nrows), RK_OK);
    struct csv c;
    snprintf(p, sizeof p, "%s/csv/top-kernels-d1.csv", out);
    assert_int_equal(csv_read(p, &c), 0);
    assert_int_equal(c.nrows - 1, 10);
    /* the model: named in the predicted column's header */
    char model[64] = "";
    for (int k = 0; k < c.ncols; k++)
        if (sscanf(c.f[k], "predicted [µs] (%63[^)])", model) == 1)
            break;
    assert_true(*model);
    struct grp *g = calloc((size_t)nrows, sizeof *g);
    double total = 0;
    for (int i = 0; i < nrows; i++) {
        const struct db_measurement *m = &rows[i].m;
        if (m->verified == 0 || !isfinite(m->time_median_ns))
            continue; /* not charted */
        int k = 0;
        while (k < ng && !same_kernel(&g[k].r->m, m))
            k++;
        if (k == ng)
            g[ng++].r = &rows[i];
        g[k].n++;
        g[k].t += m->time_median_ns;
        total += m->time_median_ns;
        for (int j = 0; j < rows[i].n_predictions; j++)
            if (strcmp(rows[i].predictions[j].model, model) == 0 &&
                isfinite(rows[i].predictions[j].predicted_time_ns)) {
                g[k].npred++;
                g[k].pred += rows[i].predictions[j].predicted_time_ns;
                g[k].pred_meas += m->time_median_ns;
            }
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_grp);
    for (int r = 1; r < c.nrows; r++) {
        const struct grp *x = &g[r - 1];
        double t = strtod(csv_get(&c, r, "time [µs]"), NULL);
        assert_int_equal(atoi(csv_get(&c, r, "#")), r);
        assert_true(fabs(t / (x->t * 1e-3) - 1) < 1e-12);
        assert_int_equal(atoi(csv_get(&c, r, "launches")), x->n);
        assert_true(fabs(strtod(csv_get(&c, r, "share [%]"), NULL) / (100 * x->t / total) - 1) <
                    1e-12);
        char col[96];
        snprintf(col, sizeof col, "predicted [µs] (%s)", model);
        if (x->npred) {
            assert_true(fabs(strtod(csv_get(&c, r, col), NULL) / (x->pred * 1e-3) - 1) < 1e-12);
            assert_true(fabs(strtod(csv_get(&c, r, "error [%]"), NULL) -
                             100 * model_rel_error(x->pred, x->pred_meas)) < 1e-9);
        } else {
            assert_string_equal(csv_get(&c, r, col), "");
        }
        /* its row: the group's longest launch, which the kernel cell links to */
        long long id = atoll(csv_get(&c, r, "measurement"));
        const struct db_measurement_row *rep = NULL;
        for (int i = 0; i < nrows; i++)
            if (rows[i].m.id == id)
                rep = &rows[i];
        assert_non_null(rep);
        assert_true(same_kernel(&rep->m, &x->r->m));
        if (rep->m.family) /* a suite kernel by its name (a profiled one by a short name) */
            assert_string_equal(csv_get(&c, r, "kernel"), rep->m.kernel);
        const char *b = csv_get(&c, r, "bound");
        assert_true(strcmp(b, "dram") == 0 || strcmp(b, "compute") == 0);
    }
    csv_free(&c);
    free(g);
    db_free_measurements(rows, nrows);
    db_close(db);
}

/* ------------------------------------------------------------- selection */

/* A database of one device, its ceilings, and two run captures each with measurements of two
 * families (tiled: tiled_gemm, tsm2: tsm2_v3); ids: capture A's 1-4, B's 5-8. */
static void make_select_db(const char *p)
{
    struct db *db = NULL;
    struct db_device dev;
    int64_t dev_id, probe, cap[2];
    memset(&dev, 0, sizeof dev);
    dev.name = "NVIDIA H100 80GB HBM3";
    dev.uuid = "GPU-5e1ec7ed-0000-0000-0000-000000000001";
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.sm_clock_mhz = 1980;
    assert_int_equal(db_open(p, DB_RW, &db), RK_OK);
    assert_int_equal(db_device_upsert(db, &dev, &dev_id), RK_OK);
    assert_int_equal(db_capture_begin(db, dev_id, DB_CAPTURE_PROBE, "roofkit probe", "t", &probe),
                     RK_OK);
    static const struct {
        const char *name, *kind, *level, *prec;
        double v;
        const char *unit;
    } ce[] = {{"bw_dram_read", "bandwidth", "dram", NULL, 3000, "GB/s"},
              {"peak_fp32_fma", "compute", NULL, "fp32", 51.2, "TFLOP/s"}};
    for (size_t i = 0; i < 2; i++) {
        struct db_ceiling c;
        memset(&c, 0, sizeof c);
        c.name = ce[i].name;
        c.kind = ce[i].kind;
        c.level = ce[i].level;
        c.precision = ce[i].prec;
        c.value = c.median = c.min = c.max = ce[i].v;
        c.unit = ce[i].unit;
        c.theoretical = c.power_w = c.temp_c = NAN;
        c.reps = 3;
        assert_int_equal(db_insert_ceiling(db, probe, &c, NULL), RK_OK);
    }
    assert_int_equal(db_capture_end(db, probe, DB_DONE), RK_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(db_capture_begin(db, dev_id, DB_CAPTURE_RUN, "roofkit run", "t", &cap[k]),
                         RK_OK);
        for (int i = 0; i < 4; i++) {
            struct db_measurement x;
            memset(&x, 0, sizeof x);
            x.kernel = i < 2 ? "tiled_gemm" : "tsm2_v3";
            x.family = i < 2 ? "tiled" : "tsm2";
            x.precision = "fp32";
            x.m = x.k = 1024LL << i;
            x.n = i < 2 ? x.m : 8;
            x.reps = 5;
            x.flops = 2.0 * (double)x.m * (double)x.n * (double)x.k;
            x.bytes_dram = x.bytes_l2 = x.bytes_l1 = x.bytes_shared =
                4.0 * ((double)x.m * x.k + (double)x.k * x.n + (double)x.m * x.n);
            x.time_min_ns = x.time_median_ns = x.time_max_ns = 1e4 * (1 + i + 4 * k);
            x.verified = 1;
            x.rel_error = 1e-7;
            x.cache_state = "warm";
            x.source = "suite";
            x.launch_index = x.correlation_id = -1;
            assert_int_equal(db_insert_measurement(db, cap[k], &x, NULL, 0, NULL), RK_OK);
        }
        assert_int_equal(db_capture_end(db, cap[k], DB_DONE), RK_OK);
    }
    db_close(db);
}

/* The measurement ids the report at out shows: in its tables (CSV), in its roofline's data and
 * as rows of its page, as a bit set (ids 1-8); fails when the three disagree. */
static unsigned shown_ids(const char *out)
{
    unsigned csv_ids = 0, dat_ids = 0, html_ids = 0;
    static const char *const fams[] = {"tiled", "tsm2"};
    for (int f = 0; f < 2; f++) {
        char p[700];
        struct csv c;
        snprintf(p, sizeof p, "%s/csv/measurements-%s.csv", out, fams[f]);
        if (csv_read(p, &c) != 0)
            continue;
        for (int r = 1; r < c.nrows; r++)
            csv_ids |= 1u << atoi(csv_get(&c, r, "id"));
        csv_free(&c);
    }
    char *dat = read_in(out, "plots/roofline-d1.dat");
    assert_non_null(dat);
    for (const char *l = dat; *l; l = strchr(l, '\n') + 1) {
        double a, b;
        int id;
        if (*l != '#' && sscanf(l, "%lf %lf %d", &a, &b, &id) == 3)
            dat_ids |= 1u << id;
        if (!strchr(l, '\n'))
            break;
    }
    free(dat);
    char *html = read_in(out, "index.html");
    assert_non_null(html);
    for (int id = 1; id <= 8; id++) {
        char s[32];
        snprintf(s, sizeof s, "<tr id=\"m-%d\">", id);
        html_ids |= strstr(html, s) ? 1u << id : 0;
    }
    free(html);
    assert_int_equal(csv_ids, html_ids);
    assert_int_equal(csv_ids, dat_ids);
    return csv_ids;
}

#define IDS(a, b, c, d) ((1u << (a)) | (1u << (b)) | (1u << (c)) | (1u << (d)))

/* O4 */
static void test_select(void **state)
{
    char p[512], out[512];
    struct db *db = NULL;
    (void)state;
    path(p, sizeof p, "select.db");
    make_select_db(p);
    assert_int_equal(db_open(p, DB_RO, &db), RK_OK);
    const long long cap_b[] = {3}; /* the probe is capture 1, the runs 2 and 3 */
    const char *const tsm2[] = {"tsm2"}, *const both[] = {"tiled", "tsm2"};
    const char *const dev_id[] = {"1"}, *const dev_uuid[] = {"GPU-5e1ec7ed"};
    struct {
        const char *name;
        struct report_select s;
        unsigned want;
    } cases[] = {
        {"all", {0}, IDS(1, 2, 3, 4) | IDS(5, 6, 7, 8)},
        {"capture", {.captures = cap_b, .ncaptures = 1}, IDS(5, 6, 7, 8)},
        {"family", {.families = tsm2, .nfamilies = 1}, IDS(3, 4, 7, 8)},
        {"families", {.families = both, .nfamilies = 2}, IDS(1, 2, 3, 4) | IDS(5, 6, 7, 8)},
        {"capture-family",
         {.captures = cap_b, .ncaptures = 1, .families = tsm2, .nfamilies = 1},
         (1u << 7) | (1u << 8)},
        {"kernel", {.kernel = "tiled_gemm"}, IDS(1, 2, 5, 6)},
        {"kernel-regex", {.kernel = "regex:^tsm2_"}, IDS(3, 4, 7, 8)},
        {"kernel-regex-partial", {.kernel = "regex:gemm"}, IDS(1, 2, 5, 6)},
        {"device-id", {.devices = dev_id, .ndevices = 1}, IDS(1, 2, 3, 4) | IDS(5, 6, 7, 8)},
        {"device-uuid",
         {.devices = dev_uuid, .ndevices = 1, .captures = cap_b, .ncaptures = 1},
         IDS(5, 6, 7, 8)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(out, sizeof out, "%s/sel-%s", tmpdir, cases[i].name);
        struct report_opts o = {.out_dir = out, .select = cases[i].s};
        assert_int_equal(report_write(db, &o), RK_OK);
        unsigned got = shown_ids(out);
        if (got != cases[i].want)
            fail_msg("selection %s shows ids %#x, wants %#x", cases[i].name, got, cases[i].want);
        char *html = read_in(out, "index.html");
        if (i > 0) /* the page says what it covers */
            assert_non_null(strstr(html, "<p class=\"meta\">Selected: "));
        free(html);
    }
    /* a family left out has no table and no series */
    snprintf(out, sizeof out, "%s/sel-family", tmpdir);
    assert_false(exists(out, "csv/measurements-tiled.csv"));
    char *gp = read_in(out, "plots/roofline-d1.gp");
    assert_null(strstr(gp, "title 'tiled"));
    assert_non_null(strstr(gp, "title 'tsm2 (4)'"));
    free(gp);
    db_close(db);
}

/* O5 */
static void test_select_refused(void **state)
{
    char p[512], out[512];
    struct db *db = NULL;
    struct stat st;
    (void)state;
    path(p, sizeof p, "select2.db");
    make_select_db(p);
    assert_int_equal(db_open(p, DB_RO, &db), RK_OK);
    const long long nine[] = {9}, zero[] = {0};
    const char *const fam_x[] = {"tsm"}, *const dev_x[] = {"7"}, *const dev_short[] = {"GPU-"};
    const char *const tiled[] = {"tiled"}, *const empty[] = {""};
    struct report_select bad[] = {
        {.captures = nine, .ncaptures = 1},
        {.captures = zero, .ncaptures = 1},
        {.families = fam_x, .nfamilies = 1},
        {.families = empty, .nfamilies = 1},
        {.devices = dev_x, .ndevices = 1},
        {.devices = dev_short, .ndevices = 1},
        {.kernel = "regex:("},
        {.kernel = "regex:"},
        {.kernel = ""},
        {.kernel = "nope"},
        {.kernel = "tsm2_v3", .families = tiled, .nfamilies = 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(out, sizeof out, "%s/refused-%zu", tmpdir, i);
        struct report_opts o = {.out_dir = out, .select = bad[i]};
        if (report_write(db, &o) != RK_EUSAGE)
            fail_msg("selection %zu was not refused", i);
        assert_int_not_equal(stat(out, &st), 0); /* nothing written, not even the folder */
    }
    assert_int_equal(report_select_check(&bad[6]), RK_EUSAGE); /* checked without a database */
    assert_int_equal(report_select_check(&bad[1]), RK_EUSAGE);
    assert_int_equal(report_select_check(&bad[0]), RK_OK); /* known only to the database */
    db_close(db);
}

/* The script's clauses that draw measured ceilings (dark lines). */
static int measured_lines(const char *gp)
{
    return count_str(gp, "lw 1.6 lc rgb '#333333' notitle");
}

/* O6 */
static void test_glance(void **state)
{
    char out[512], p[512];
    (void)state;
    struct db *db = fixture_report("glance.db", out, sizeof out);
    char *gp = read_in(out, "plots/roofline-d1.gp");
    assert_non_null(gp);
    /* 4 bandwidths, 3 compute ceilings: one chart, each ceiling a line and a label on it */
    assert_int_equal(measured_lines(gp), 7);
    assert_int_equal(count_str(gp, "lw 1 dt 2 lc rgb '#c4c4c4' notitle"), 7); /* datasheet */
    assert_int_equal(count_str(gp, "rotate by"), 4);
    assert_non_null(strstr(gp, "set label 1 'tensor_bf16 700 TFLOP/s'"));
    assert_non_null(strstr(gp, "'DRAM 3000 GB/s' at "));
    assert_null(strstr(gp, "GFLOP/s', pk_")); /* no ceiling in the key */
    assert_null(strstr(gp, "title sprintf("));
    /* series: a colour and a marker each */
    assert_non_null(strstr(gp, "1/0 with points pt 7 ps 0.9 lc rgb '#1f77b4' title 'cublas"));
    assert_non_null(strstr(gp, "1/0 with points pt 5 ps 0.9 lc rgb '#d62728' title 'stmvb"));
    free(gp);
    db_close(db);

    /* more than 8 ceilings: one chart per precision */
    path(p, sizeof p, "glance.db");
    struct db *rw = NULL;
    int64_t probe, dev = 1;
    assert_int_equal(db_open(p, DB_RW, &rw), RK_OK);
    assert_int_equal(db_capture_begin(rw, dev, DB_CAPTURE_PROBE, "roofkit probe", "t", &probe),
                     RK_OK);
    static const char *const more[][2] = {{"peak_tensor_tf32", "tf32"},
                                          {"peak_tensor_fp16", "fp16"},
                                          {"peak_tensor_fp64", "fp64"},
                                          {"peak_fp16x2_fma", "fp16x2"}};
    for (size_t i = 0; i < 4; i++) {
        struct db_ceiling c;
        memset(&c, 0, sizeof c);
        c.name = more[i][0];
        c.kind = "compute";
        c.precision = more[i][1];
        c.value = c.median = c.min = c.max = 100.0 * (i + 1);
        c.unit = "TFLOP/s";
        c.theoretical = c.power_w = c.temp_c = NAN;
        assert_int_equal(db_insert_ceiling(rw, probe, &c, NULL), RK_OK);
    }
    assert_int_equal(db_capture_end(rw, probe, DB_DONE), RK_OK);
    db_close(rw);
    db = fixture_report("glance.db", out, sizeof out);
    assert_false(exists(out, "plots/roofline-d1.gp"));
    static const char *const split[] = {"fp64", "fp32", "fp16"};
    for (int i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "plots/roofline-d1-%s.gp", split[i]);
        gp = read_in(out, rel);
        if (!gp)
            fail_msg("no %s", rel);
        assert_true(measured_lines(gp) <= 8);
        assert_true(measured_lines(gp) >= 5); /* 4 bandwidths and its compute ceilings */
        free(gp);
    }
    char *html = read_in(out, "index.html");
    assert_non_null(strstr(html, "<div class=\"ov\">")); /* side by side */
    assert_non_null(strstr(html, "one chart per precision"));
    free(html);
    db_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rk-test-overview-XXXXXX");
    rk_set_quiet(1);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[400];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return getenv("RK_TEST_KEEP") || system(cmd) == 0 ? 0 : -1; /* RK_TEST_KEEP: look at it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_titles),
        cmocka_unit_test(test_overview_numbers),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_select_refused),
        cmocka_unit_test(test_glance),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
