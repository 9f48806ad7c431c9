/*
 * report.c - report_write(): the report directory and the order of the work
 * (load, tables, charts, one gnuplot run, the printers), and the rule that the
 * report replaces only roofkit's own files. The selection (report_opts.select) is read and
 * checked first: a refused one leaves the directory as it was, or absent.
 *
 * Ownership: a report directory carries .roofkit-report, the list of the files the
 * last report wrote. A directory that holds anything but has no marker is not
 * touched (RK_EIO). The marker is written first (with the previous list, so an
 * interrupted report leaves a directory that the next one may still replace) and
 * again at the end with this report's list; files of the previous list that this
 * report did not write are removed.
 *
 * Every file is written to a temporary name and renamed over the old one
 * (rp_out_write), so a failure leaves the previous version of that file. The SVG
 * charts are the exception: gnuplot writes them itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MARKER "/.roofkit-report"

int report_parse_formats(const char *list, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"html", REPORT_HTML}, {"md", REPORT_MD}, {"csv", REPORT_CSV}};
    unsigned bits = 0;
    char **items = NULL;
    int n = 0, rc = rk_parse_name_list(list, &items, &n);
    for (int k = 0; k < n && rc == RK_OK; k++) {
        size_t i = 0;
        while (i < sizeof names / sizeof names[0] && strcmp(items[k], names[i].name) != 0)
            i++;
        if (i == sizeof names / sizeof names[0])
            rc = RK_EUSAGE;
        else
            bits |= names[i].bit;
    }
    rk_free_name_list(items, n);
    if (rc == RK_OK)
        *out = bits;
    return rc;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    int rc = RK_OK;
    if (!p)
        return rk_error(RK_ENOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = rk_error(RK_EIO,
                          "cannot create the report directory '%s': %s; pass --out "
                          "with a directory you can write",
                          p, strerror(errno));
            break;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}

/* Reads the marker's file list into old (one relative path per line). */
static int read_marker(const char *dir, struct rp_out *old)
{
    char *data = NULL;
    size_t len;
    int rc = RK_OK;
    if (rp_read_file(dir, MARKER + 1, &data, &len) != RK_OK)
        return RK_OK;
    for (char *line = strtok(data, "\n"); line && rc == RK_OK; line = strtok(NULL, "\n"))
        if (line[0] != '#' && line[0] != '/' && !strstr(line, ".."))
            rc = rp_out_record(old, line);
    free(data);
    return rc;
}

static int write_marker(struct rp_out *o, const struct rp_out *list)
{
    struct rp_buf b = {0};
    int rc;
    rp_buf_puts(&b, "# Files written by `roofkit report` into this directory, one per line.\n"
                    "# roofkit replaces or removes only these; delete this file to stop it.\n");
    for (int i = 0; i < list->nfiles; i++)
        rp_buf_printf(&b, "%s\n", list->files[i]);
    if (b.oom)
        return rk_error(RK_ENOMEM, "out of memory writing the report");
    /* written like the others, but not listed in itself */
    struct rp_out tmp = {o->dir, NULL, 0, 0};
    rc = rp_out_write(&tmp, MARKER + 1, b.p, b.len);
    rp_out_release(&tmp);
    rp_buf_free(&b);
    return rc;
}

/*
 * Creates dir or checks that it is a report directory (or empty); reads the
 * previous file list into old and marks the directory as roofkit's.
 */
static int prepare_dir(struct rp_out *o, struct rp_out *old)
{
    DIR *dh;
    struct dirent *e;
    int other = 0, marked = 0, rc;
    struct stat st;

    if (stat(o->dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return rk_error(RK_EIO,
                        "'%s' exists and is not a directory; pass --out with a new or "
                        "report directory",
                        o->dir);
    if ((rc = make_dirs(o->dir)) != RK_OK)
        return rc;
    if (!(dh = opendir(o->dir)))
        return rk_error(RK_EIO, "cannot read the report directory '%s': %s", o->dir,
                        strerror(errno));
    while ((e = readdir(dh))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strcmp(e->d_name, MARKER + 1) == 0)
            marked = 1;
        else
            other = 1;
    }
    closedir(dh);
    if (other && !marked)
        return rk_error(RK_EIO,
                        "'%s' holds files that roofkit did not write (no .roofkit-report "
                        "in it); pass --out with a new or empty directory",
                        o->dir);
    if (access(o->dir, W_OK) != 0)
        return rk_error(RK_EIO,
                        "cannot write the report directory '%s': %s; pass --out with a "
                        "directory you can write",
                        o->dir, strerror(errno));
    if ((rc = read_marker(o->dir, old)) != RK_OK)
        return rc;
    return write_marker(o, old);
}

/* Removes the files of the previous report that this one did not write. */
static void remove_stale(const struct rp_out *o, const struct rp_out *old)
{
    for (int i = 0; i < old->nfiles; i++) {
        int kept = 0;
        for (int j = 0; j < o->nfiles && !kept; j++)
            kept = strcmp(old->files[i], o->files[j]) == 0;
        if (kept)
            continue;
        char *full = rp_out_path(o->dir, old->files[i], "");
        if (full && unlink(full) != 0 && errno != ENOENT)
            rk_warn("cannot remove the old report file '%s': %s", full, strerror(errno));
        free(full);
    }
}

/* ------------------------------------------------------------ report_write */

int report_write(struct db *db, const struct report_opts *opts)
{
    return report_write_compare(db, opts, NULL);
}

int report_write_compare(struct db *db, const struct report_opts *opts,
                         const struct report_baseline *base)
{
    struct rp_out o = {NULL, NULL, 0, 0}, old = {NULL, NULL, 0, 0};
    struct rp_data d;
    struct rp_table *tables = NULL;
    struct rp_chart *charts = NULL;
    int ntables = 0, ncharts = 0, rc, loaded = 0, chart_rc = RK_OK;
    unsigned formats = opts && opts->formats ? opts->formats : REPORT_ALL;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    struct rp_page pg;

    memset(&d, 0, sizeof d);
    memset(&pg, 0, sizeof pg);
    o.dir = strdup(opts && opts->out_dir && *opts->out_dir ? opts->out_dir : "roofkit-report");
    if (!o.dir) {
        rc = rk_error(RK_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t l = strlen(o.dir); l > 1 && o.dir[l - 1] == '/'; l--)
        o.dir[l - 1] = '\0';
    old.dir = o.dir;
    /* read (and check the selection) before the directory is touched: a refused selection
     * writes nothing */
    if ((rc = rp_load(db, opts ? &opts->select : NULL, &d)) != RK_OK)
        goto out;
    loaded = 1;
    if (base && (rc = rp_compare_load(db, base, &d)) != RK_OK)
        goto out;
    if ((rc = prepare_dir(&o, &old)) != RK_OK)
        goto out;
    if (opts && opts->source)
        d.db_path = opts->source;
    if ((rc = rp_build_tables(&d, &tables, &ntables)) != RK_OK)
        goto out;

    pg.d = &d;
    pg.opts = opts;
    pg.tables = tables;
    pg.ntables = ntables;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    pg.generated = when;
    if (formats & (REPORT_HTML | REPORT_MD)) {
        if ((rc = rp_build_charts(&d, &o, &charts, &ncharts)) != RK_OK)
            goto out;
        pg.charts = charts;
        pg.ncharts = ncharts;
        chart_rc = ncharts ? rp_run_gnuplot(&o, opts ? opts->gnuplot : NULL) : RK_OK;
        if (chart_rc == RK_ENOMEM) {
            rc = chart_rc;
            goto out;
        }
        pg.charts_drawn = chart_rc == RK_OK;
        if (chart_rc == RK_ENOTOOL)
            pg.charts_why = "gnuplot is not installed (apt-get install gnuplot-nox); the "
                            "scripts and data are in plots/: run `gnuplot all.gp` there";
        else if (chart_rc != RK_OK)
            pg.charts_why = "gnuplot failed on the scripts: see plots/gnuplot.log";
        for (int i = 0; pg.charts_drawn && i < ncharts; i++) {
            char rel[160];
            struct stat st;
            snprintf(rel, sizeof rel, "plots/%s.svg", charts[i].name);
            char *full = rp_out_path(o.dir, rel, "");
            if (full && stat(full, &st) == 0) /* recorded here, or when its points are titled */
                rc = charts[i].marks && charts[i].marks->n ? RK_OK : rp_out_record(&o, rel);
            else {
                rc = rk_error(RK_EFAIL, "gnuplot did not write '%s'; see %s/plots/gnuplot.log", rel,
                              o.dir);
                pg.charts_drawn = 0;
                pg.charts_why = "gnuplot did not write every chart: see plots/gnuplot.log";
                chart_rc = RK_EFAIL;
            }
            free(full);
            if (rc == RK_ENOMEM)
                goto out;
        }
        if (pg.charts_drawn && (rc = rp_chart_marks(&o, charts, ncharts)) != RK_OK)
            goto out;
    }
    if ((formats & REPORT_CSV) && (rc = rp_write_csv(&o, &pg)) != RK_OK)
        goto out;
    if ((formats & REPORT_MD) && (rc = rp_write_md(&o, &pg)) != RK_OK)
        goto out;
    if ((formats & REPORT_HTML) && (rc = rp_write_html(&o, &pg)) != RK_OK)
        goto out;
    remove_stale(&o, &old);
    if ((rc = write_marker(&o, &o)) != RK_OK)
        goto out;
    rc = chart_rc;
    if (rc == RK_OK || rc == RK_ENOTOOL)
        rk_info("wrote the report to %s/%s (%d measurement%s, %d chart%s%s)", o.dir,
                formats & REPORT_HTML ? "index.html"
                : formats & REPORT_MD ? "report.md"
                                      : "csv/",
                d.nrows, d.nrows == 1 ? "" : "s", ncharts, ncharts == 1 ? "" : "s",
                pg.charts_drawn || !ncharts ? "" : ", not drawn");
out:
    rp_compare_release(&d);
    if (loaded)
        rp_data_release(&d);
    rp_free_tables(tables, ntables);
    rp_free_charts(charts, ncharts);
    rp_out_release(&o);
    rp_out_release(&old);
    free(o.dir);
    return rc;
}
