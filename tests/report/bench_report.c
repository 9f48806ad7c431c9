/*
 * bench_report.c - how the report grows with the database: for each size N (default 100, 1,000
 * and 10,000 measurements) a database built through db/ (fixture.c: counters on most rows,
 * profiled launches, two models' predictions, and here five more models' as `roofkit model`
 * writes eight), then report_write() timed, then gnuplot timed alone on the same scripts.
 *
 *   bench_report [N...] [--dir DIR]
 *
 * Prints one line per size: measurements, index.html's size, its largest parts (SVG, tables),
 * report_write's time (gnuplot included: it runs once inside it) and gnuplot's time alone.
 * Exits 1 when an index.html reaches REPORT_HTML_MAX bytes (the report's size target: sizes are
 * deterministic); times are printed, never checked (a loaded machine would fail them). CTest
 * runs it with label `bench`.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "db.h"
#include "fixture.h"
#include "report.h"

#define REPORT_HTML_MAX (10L * 1000 * 1000) /* 10 MB for 10,000 measurements */

static unsigned long long lcg = 0x9E3779B97F4A7C15ULL;

static double noise(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.7 + 0.6 * (double)(lcg >> 11) / 9007199254740992.0;
}

/* The models `roofkit model` writes beside the fixture's two, each predicting every row. */
static int more_models(const char *path)
{
    static const char *const models[] = {"occupancy", "issue", "issue_counters", "overlap",
                                         "roofline_counters"};
    struct db *db = NULL;
    struct db_measurement_row *rows = NULL;
    int n = 0, rc;
    int64_t cap;
    if ((rc = db_open(path, DB_RW, &db)) != RK_OK)
        return rc;
    rc = db_query_measurements(db, 0, &rows, &n);
    if (rc == RK_OK)
        rc = db_capture_begin(db, 0, DB_CAPTURE_MODEL, "roofkit model", "bench", &cap);
    if (rc == RK_OK)
        rc = db_begin(db);
    for (int i = 0; i < n && rc == RK_OK; i++)
        for (size_t k = 0; k < sizeof models / sizeof models[0] && rc == RK_OK; k++) {
            struct db_prediction p;
            memset(&p, 0, sizeof p);
            p.measurement_id = rows[i].m.id;
            p.capture_id = cap;
            p.model = models[k];
            p.predicted_time_ns = rows[i].m.time_median_ns * noise();
            p.bound = k % 2 ? "dram" : "compute";
            p.details = "{\"bench\": 1}";
            rc = db_insert_prediction(db, &p, NULL);
        }
    if (rc == RK_OK)
        rc = db_commit(db);
    if (rc == RK_OK)
        rc = db_capture_end(db, cap, DB_DONE);
    db_free_measurements(rows, n);
    db_close(db);
    return rc;
}

/* Bytes of the inlined SVGs and of the tables in html. */
static void parts(const char *html, long *svg, long *tables)
{
    *svg = *tables = 0;
    for (const char *s = html; (s = strstr(s, "<svg")); s++) {
        const char *e = strstr(s, "</svg>");
        if (!e)
            break;
        *svg += e + 6 - s;
        s = e;
    }
    for (const char *s = html; (s = strstr(s, "<table")); s++) {
        const char *e = strstr(s, "</table>");
        if (!e)
            break;
        *tables += e + 8 - s;
        s = e;
    }
}

static int one_size(int n, const char *dir, int *over)
{
    char dbp[600], out[600], cmd[3000], html_path[700];
    struct db *db = NULL;
    struct stat st;
    int rc, nrows = 0;
    snprintf(dbp, sizeof dbp, "%s/bench-%d.db", dir, n);
    snprintf(out, sizeof out, "%s/report-%d", dir, n);
    unlink(dbp);
    if ((rc = fixture_make_db(dbp, n)) != RK_OK || (rc = more_models(dbp)) != RK_OK ||
        (rc = db_open(dbp, DB_RO, &db)) != RK_OK)
        return rc;
    struct db_measurement_row *rows = NULL;
    if (db_query_measurements(db, 0, &rows, &nrows) == RK_OK)
        db_free_measurements(rows, nrows);
    struct report_opts o = {.out_dir = out, .label = "benchmark data"};
    double t0 = rk_now_s();
    rc = report_write(db, &o);
    double t1 = rk_now_s();
    db_close(db);
    if (rc != RK_OK && rc != RK_ENOTOOL)
        return rc;
    /* gnuplot alone, on a copy of the scripts the report wrote */
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s/plots-again' && cp -r '%s/plots' '%s/plots-again' && cd "
             "'%s/plots-again' && gnuplot all.gp >/dev/null 2>&1",
             out, out, out, out);
    double t2 = rk_now_s();
    int grc = rc == RK_OK ? system(cmd) : -1; /* the copy's time included: small */
    double t3 = rk_now_s();
    snprintf(html_path, sizeof html_path, "%s/index.html", out);
    if (stat(html_path, &st) != 0)
        return RK_EIO;
    char *html = malloc((size_t)st.st_size + 1);
    FILE *f = fopen(html_path, "rb");
    long svg = 0, tables = 0;
    if (html && f && fread(html, 1, (size_t)st.st_size, f) == (size_t)st.st_size) {
        html[st.st_size] = '\0';
        parts(html, &svg, &tables);
    }
    if (f)
        fclose(f);
    free(html);
    printf("%6d measurements: index.html %8.2f MB (SVG %.2f MB, tables %.2f MB); report_write "
           "%.3f s (gnuplot included); gnuplot alone %s%.3f s\n",
           nrows, st.st_size / 1e6, svg / 1e6, tables / 1e6, t1 - t0, grc == 0 ? "" : "(failed) ",
           grc == 0 ? t3 - t2 : NAN);
    *over |= n >= 10000 && st.st_size >= REPORT_HTML_MAX;
    return RK_OK;
}

int main(int argc, char **argv)
{
    static const int defaults[] = {100, 1000, 10000};
    char dir[512] = "";
    int sizes[16], nsizes = 0, over = 0, rc = RK_OK;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            snprintf(dir, sizeof dir, "%s", argv[++i]);
        else if (nsizes < 16 && atoi(argv[i]) > 0)
            sizes[nsizes++] = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: bench_report [N...] [--dir DIR]\n");
            return RK_EUSAGE;
        }
    }
    if (!nsizes)
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            sizes[nsizes++] = defaults[i];
    if (!*dir) {
        snprintf(dir, sizeof dir, "/tmp/rk-bench-report-XXXXXX");
        if (!mkdtemp(dir))
            return RK_EIO;
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_report: cannot create %s: %s\n", dir, strerror(errno));
        return RK_EIO;
    }
    rk_set_quiet(1);
    printf("bench_report: the report of databases built through db/ (fixture.c, 7 models), in "
           "%s\n",
           dir);
    for (int i = 0; i < nsizes && rc == RK_OK; i++)
        rc = one_size(sizes[i], dir, &over);
    if (rc == RK_OK && over)
        printf("FAIL: index.html of 10,000 measurements reaches %ld bytes\n", REPORT_HTML_MAX);
    return rc != RK_OK ? rc : over;
}
