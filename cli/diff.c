/*
 * diff.c - `roofkit diff A B`: capture B against capture A (the baseline), kernel by kernel
 * and shape by shape, as a CI job runs it: the ratio of the times with its interval, each
 * change classed faster, slower or within noise, the devices' ceilings side by side, and an
 * exit code (RK_EREGRESSION) when a kernel is slower beyond noise and beyond --threshold.
 *
 * Parsing and printing only: the matching, the intervals and the classes are
 * analysis_compare()'s (analysis/compare.c), the statistics model/ratio.c's; docs/compare.md
 * says what they assume. Both databases are opened read-only: nothing is written. Data goes
 * to stdout (text, or one csv/json table of kernel and ceiling rows); the verdict of a
 * regression to stderr.
 */
#define _GNU_SOURCE
#include "analysis.h"
#include "cli.h"
#include "common.h"
#include "db.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diff_opts {
    const char *ref[2]; /* A and B as given */
    const char *db_b;   /* --db-b, or NULL: B from --db */
    double threshold;   /* fraction */
    double noise;       /* the run-to-run noise floor, a fraction */
    enum rk_format fmt;
};

static int parse_args(int argc, char **argv, struct diff_opts *o)
{
    static const struct option longopts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"noise", required_argument, NULL, 'n'},
        {"db-b", required_argument, NULL, 'b'},
        {"format", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    int c, rc, n = 0;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", longopts)) != -1) {
        switch (c) {
        case 't':
            if ((rc = rk_opt_percent("threshold", optarg, &o->threshold)) != RK_OK)
                return rc;
            break;
        case 'n':
            if ((rc = rk_opt_percent("noise", optarg, &o->noise)) != RK_OK)
                return rc;
            break;
        case 'b':
            if (!*optarg)
                return rk_error(RK_EUSAGE, "option '--db-b' needs a database file");
            o->db_b = optarg;
            break;
        case 'f':
            if (rk_parse_format(optarg, &o->fmt) != RK_OK)
                return RK_EUSAGE;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    for (; optind < argc; optind++) {
        if (n == 2)
            return rk_error(RK_EUSAGE, "unexpected argument '%s'; diff compares two captures",
                            argv[optind]);
        o->ref[n++] = argv[optind];
    }
    if (n < 2)
        return rk_error(RK_EUSAGE, "diff needs two captures, A (the baseline) and B; see "
                                   "'roofkit list captures'");
    for (int i = 0; i < 2; i++) {
        long id;
        if (strcmp(o->ref[i], "last") != 0 && (rk_parse_long(o->ref[i], &id) != RK_OK || id < 1))
            return rk_error(RK_EUSAGE,
                            "'%s' is not a capture: give its id (see 'roofkit list "
                            "captures') or 'last'",
                            o->ref[i]);
    }
    return RK_OK;
}

/* A capture reference of db into *id: a number, or 'last' (the newest done or interrupted run
 * or profile capture). RK_OK, or RK_ENODATA / the database's error printed. */
static int resolve(struct db *db, const char *ref, int64_t *id)
{
    int rc;
    if (strcmp(ref, "last") == 0) {
        int64_t run = 0, prof = 0;
        if ((rc = db_latest_capture(db, DB_CAPTURE_RUN, 0, &run)) != RK_OK && rc != RK_ENODATA)
            return rc;
        if ((rc = db_latest_capture(db, DB_CAPTURE_PROFILE, 0, &prof)) != RK_OK && rc != RK_ENODATA)
            return rc;
        if (!run && !prof)
            return rk_error(RK_ENODATA,
                            "'last': database '%s' holds no done run or profile capture; run "
                            "'roofkit run' first",
                            db_path(db));
        *id = run > prof ? run : prof;
        return RK_OK;
    }
    long v = 0;
    (void)rk_parse_long(ref, &v); /* checked by parse_args */
    struct db_capture cap;
    rc = db_get_capture(db, v, &cap);
    if (rc == RK_ENODATA)
        return rk_error(RK_ENODATA,
                        "database '%s' holds no capture %ld; see 'roofkit list "
                        "captures'",
                        db_path(db), v);
    if (rc == RK_OK) {
        if (cap.status != DB_DONE && cap.status != DB_INTERRUPTED)
            rk_warn("capture %ld is %s: its rows are compared as they are", v,
                    db_status_name(cap.status));
        db_capture_release(&cap);
        *id = v;
    }
    return rc;
}

/* ---------------------------------------------------------------- printing */

/* A kernel name for the text table: a profiled kernel's demangled name can run to thousands
 * of characters; past 64 it is cut (csv and json keep it whole). */
static const char *short_name(const char *s, char *buf, size_t len)
{
    if (strlen(s) <= 64)
        return s;
    snprintf(buf, len, "%.61s...", s);
    return buf;
}

static void side_line(const struct analysis_cmp *c, int i, const char *path)
{
    const struct db_capture *k = &c->cap[i];
    printf("%c: capture %lld (%s, %s, %s) on %s%s%.12s in %s\n", i ? 'B' : 'A', (long long)k->id,
           db_capture_kind_name(k->kind), db_status_name(k->status),
           k->started_at ? k->started_at : "?", c->dev[i].name ? c->dev[i].name : "no device",
           c->dev[i].uuid ? " " : "", c->dev[i].uuid ? c->dev[i].uuid : "", path);
}

static const struct rk_col kernel_cols[] = {
    {"kernel", RK_COL_TEXT, 0}, {"precision", RK_COL_TEXT, 0}, {"shape", RK_COL_TEXT, 0},
    {"params", RK_COL_TEXT, 0}, {"cache", RK_COL_TEXT, 0},     {"n A", RK_COL_INT, 0},
    {"n B", RK_COL_INT, 0},     {"A us", RK_COL_REAL, 2},      {"B us", RK_COL_REAL, 2},
    {"B/A", RK_COL_REAL, 3},    {"interval", RK_COL_TEXT, 0},  {"change", RK_COL_TEXT, 0},
};

static const struct rk_col ceiling_cols[] = {
    {"ceiling", RK_COL_TEXT, 0}, {"unit", RK_COL_TEXT, 0}, {"A", RK_COL_REAL, -1},
    {"B", RK_COL_REAL, -1},      {"B/A", RK_COL_REAL, 3},
};

/* same_db: A and B come from one database (then one probe capture is one set of ceilings). */
static int print_text(const struct analysis_cmp *c, const char *path_a, const char *path_b,
                      int same_db)
{
    struct rk_table *t = NULL;
    int rc;
    side_line(c, 0, path_a);
    side_line(c, 1, path_b);
    printf("method: the ratio B/A of each configuration's times (Hodges-Lehmann) with its %g%% "
           "interval (Mann-Whitney), docs/compare.md; slower or faster: the interval widened by "
           "the run-to-run noise floor (%g%%) excludes 1; a regression is slower with B/A > %g\n\n",
           100 * c->opts.conf, 100 * c->opts.noise, 1 + c->opts.threshold);
    if (c->nrows) {
        if ((rc = rk_table_new(RK_FMT_TEXT, stdout, kernel_cols, 12, &t)) != RK_OK)
            return rc;
        for (int i = 0; i < c->nrows && rc == RK_OK; i++) {
            const struct analysis_cmp_row *r = &c->rows[i];
            char shape[96], iv[64] = "", name[72], params[640];
            analysis_cmp_shape(r, shape, sizeof shape);
            if (r->in == 3 && r->r.method != MODEL_RATIO_NONE)
                snprintf(iv, sizeof iv, "%s[%.3f, %.3f]",
                         r->r.method == MODEL_RATIO_SUMMARY ? "~" : "", r->r.lo, r->r.hi);
            else if (r->in == 3)
                snprintf(iv, sizeof iv, "too few");
            rc = rk_table_row(t);
            rk_table_str(t, short_name(r->kernel, name, sizeof name));
            rk_table_str(t, r->precision ? r->precision : "-");
            rk_table_str(t, shape);
            if (r->params_b) {
                snprintf(params, sizeof params, "%s -> %s", r->params ? r->params : "{}",
                         r->params_b);
                rk_table_str(t, params);
            } else {
                rk_table_str(t, r->profiled ? "-" : r->params ? r->params : "{}");
            }
            rk_table_str(t, r->cache_state ? r->cache_state : "-");
            rk_table_int(t, r->n_a);
            rk_table_int(t, r->n_b);
            rk_table_real(t, r->median_a_ns / 1e3);
            rk_table_real(t, r->median_b_ns / 1e3);
            rk_table_real(t, r->in == 3 ? r->r.ratio : NAN);
            rk_table_str(t, iv);
            rk_table_str(t, analysis_cmp_change(r));
        }
        if (rc != RK_OK) {
            rk_table_free(t);
            return rc;
        }
        if ((rc = rk_table_end(t)) != RK_OK)
            return rc;
        if (c->approx)
            printf("~: %ld interval%s from min/median/max only (rows stored before every "
                   "repetition was): approximate\n",
                   c->approx, c->approx == 1 ? "" : "s");
        printf("\n");
    }
    if (c->nceil && same_db && c->probe[0] == c->probe[1]) {
        printf("ceilings: both from probe capture %lld of one device (the same ceilings)\n\n",
               (long long)c->probe[0]);
    } else if (c->nceil) {
        printf("ceilings: A from probe capture %lld%s, B from probe capture %lld%s\n",
               (long long)c->probe[0], c->ceil_after[0] ? " (probed after A ran)" : "",
               (long long)c->probe[1], c->ceil_after[1] ? " (probed after B ran)" : "");
        if ((rc = rk_table_new(RK_FMT_TEXT, stdout, ceiling_cols, 5, &t)) != RK_OK)
            return rc;
        for (int i = 0; i < c->nceil && rc == RK_OK; i++) {
            const struct analysis_cmp_ceiling *x = &c->ceil[i];
            char unit[64];
            snprintf(unit, sizeof unit, "%s%s%s", x->unit,
                     x->unit_b && strcmp(x->unit_b, x->unit) ? " / " : "",
                     x->unit_b && strcmp(x->unit_b, x->unit) ? x->unit_b : "");
            rc = rk_table_row(t);
            rk_table_str(t, x->name);
            rk_table_str(t, unit);
            rk_table_real(t, x->a);
            rk_table_real(t, x->b);
            rk_table_real(t, x->ratio);
        }
        if (rc != RK_OK) {
            rk_table_free(t);
            return rc;
        }
        if ((rc = rk_table_end(t)) != RK_OK)
            return rc;
        printf("\n");
    } else {
        printf("ceilings: none stored for %s\n\n",
               c->probe[0] || c->probe[1] ? "one side" : "either device");
    }
    return RK_OK;
}

/* --format csv|json: one table, a row per kernel configuration then per ceiling. */
static const struct rk_col machine_cols[] = {
    {"item", RK_COL_TEXT, 0},
    {"name", RK_COL_TEXT, 0},
    {"precision", RK_COL_TEXT, 0},
    {"m", RK_COL_INT, 0},
    {"n", RK_COL_INT, 0},
    {"k", RK_COL_INT, 0},
    {"params", RK_COL_TEXT, 0},
    {"params_b", RK_COL_TEXT, 0},
    {"cache_state", RK_COL_TEXT, 0},
    {"in", RK_COL_TEXT, 0},
    {"n_a", RK_COL_INT, 0},
    {"n_b", RK_COL_INT, 0},
    {"a", RK_COL_REAL, -1},
    {"b", RK_COL_REAL, -1},
    {"unit", RK_COL_TEXT, 0},
    {"ratio", RK_COL_REAL, -1},
    {"low", RK_COL_REAL, -1},
    {"high", RK_COL_REAL, -1},
    {"confidence", RK_COL_REAL, -1},
    {"method", RK_COL_TEXT, 0},
    {"change", RK_COL_TEXT, 0},
    {"regression", RK_COL_INT, 0},
};

static int print_machine(const struct analysis_cmp *c, enum rk_format fmt)
{
    static const char *const in_name[] = {"", "a", "b", "both"};
    struct rk_table *t = NULL;
    int rc = rk_table_new(fmt, stdout, machine_cols, 22, &t);
    for (int i = 0; i < c->nrows && rc == RK_OK; i++) {
        const struct analysis_cmp_row *r = &c->rows[i];
        const int both = r->in == 3, iv = both && r->r.method != MODEL_RATIO_NONE;
        rc = rk_table_row(t);
        rk_table_str(t, "kernel");
        rk_table_str(t, r->kernel);
        rk_table_str(t, r->precision);
        if (r->profiled) {
            rk_table_null(t);
            rk_table_null(t);
            rk_table_null(t);
        } else {
            rk_table_int(t, r->m);
            rk_table_int(t, r->n);
            rk_table_int(t, r->k);
        }
        rk_table_str(t, r->params);
        rk_table_str(t, r->params_b);
        rk_table_str(t, r->cache_state);
        rk_table_str(t, in_name[r->in & 3]);
        rk_table_int(t, r->n_a);
        rk_table_int(t, r->n_b);
        rk_table_real(t, r->median_a_ns);
        rk_table_real(t, r->median_b_ns);
        rk_table_str(t, "ns");
        rk_table_real(t, both ? r->r.ratio : NAN);
        rk_table_real(t, iv ? r->r.lo : NAN);
        rk_table_real(t, iv ? r->r.hi : NAN);
        rk_table_real(t, iv ? r->r.conf : NAN);
        rk_table_str(t, both ? model_ratio_method_name(r->r.method) : NULL);
        rk_table_str(t, analysis_cmp_change(r));
        rk_table_int(t, r->regression);
    }
    for (int i = 0; i < c->nceil && rc == RK_OK; i++) {
        const struct analysis_cmp_ceiling *x = &c->ceil[i];
        const int in = (isnan(x->a) ? 0 : 1) | (isnan(x->b) ? 0 : 2);
        rc = rk_table_row(t);
        rk_table_str(t, "ceiling");
        rk_table_str(t, x->name);
        for (int k = 0; k < 7; k++) /* precision .. cache_state */
            rk_table_null(t);
        rk_table_str(t, in_name[in]);
        rk_table_null(t);
        rk_table_null(t);
        rk_table_real(t, x->a);
        rk_table_real(t, x->b);
        rk_table_str(t, x->unit_b && strcmp(x->unit_b, x->unit) ? NULL : x->unit);
        rk_table_real(t, x->ratio);
        for (int k = 0; k < 5; k++) /* low .. change */
            rk_table_null(t);
        rk_table_int(t, 0);
    }
    if (rc != RK_OK) {
        rk_table_free(t);
        return rc;
    }
    return rk_table_end(t);
}

/* The summary: one line, and the regressions named. */
static int verdict(const struct analysis_cmp *c, int text)
{
    char line[480], pd[96] = "", shift[96] = "";
    if (c->params_differ)
        snprintf(pd, sizeof pd, " (%ld across other parameters: A -> B)", c->params_differ);
    if (isfinite(c->shift))
        snprintf(shift, sizeof shift, "; the whole run: median B/A %.3f (noise floor %g%%)",
                 c->shift, 100 * c->opts.noise);
    snprintf(line, sizeof line,
             "%ld configuration%s compared%s: %ld slower (%ld beyond %g%%), %ld faster, %ld "
             "within noise; %ld only in A, %ld only in B%s%s",
             c->compared, c->compared == 1 ? "" : "s", pd, c->slower, c->regressions,
             100 * c->opts.threshold, c->faster, c->noise, c->only_a, c->only_b, shift,
             c->unverified ? "; measurements that failed verification left out" : "");
    if (text)
        printf("%s\n", line);
    else
        rk_info("%s", line);
    fflush(stdout);
    if (c->nrows && !c->compared)
        return rk_error(RK_ENODATA,
                        "captures %lld and %lld have no kernel configuration in common; compare "
                        "captures of the same suite or program",
                        (long long)c->cap[0].id, (long long)c->cap[1].id);
    if (!c->regressions)
        return RK_OK;
    struct rk_buf names = RK_BUF_INIT;
    int listed = 0;
    for (int i = 0; i < c->nrows; i++) {
        const struct analysis_cmp_row *r = &c->rows[i];
        char shape[96];
        if (!r->regression)
            continue;
        if (listed++ == 5) {
            rk_buf_puts(&names, ", ...");
            break;
        }
        analysis_cmp_shape(r, shape, sizeof shape);
        rk_buf_printf(&names, "%s%s %s %s x%.3f", listed > 1 ? ", " : "", r->kernel,
                      r->precision ? r->precision : "", shape, r->r.ratio);
    }
    rk_error(RK_EREGRESSION,
             "%ld kernel configuration%s slower than capture %lld beyond noise and %g%%: %s",
             c->regressions, c->regressions == 1 ? "" : "s", (long long)c->cap[0].id,
             100 * c->opts.threshold, names.oom || !names.s ? "" : names.s);
    rk_buf_release(&names);
    return RK_EREGRESSION;
}

int cmd_diff(int argc, char **argv, struct rk_ctx *ctx)
{
    struct diff_opts o = {{NULL, NULL}, NULL, 0.05, ANALYSIS_CMP_NOISE, RK_FMT_TEXT};
    struct analysis_cmp_opts co;
    struct analysis_cmp c;
    struct db *db_b = NULL;
    char *path_b = NULL;
    int64_t id[2] = {0, 0};
    int rc;

    if ((rc = parse_args(argc, argv, &o)) != RK_OK)
        return rc;
    if (o.db_b && (rc = rk_ctx_expand(ctx, o.db_b, &path_b)) != RK_OK)
        return rc;
    if ((rc = rk_ctx_open_db(ctx, 0)) != RK_OK)
        goto out;
    if (path_b && (rc = db_open(path_b, DB_RO, &db_b)) != RK_OK)
        goto out;
    if ((rc = resolve(ctx->db, o.ref[0], &id[0])) != RK_OK ||
        (rc = resolve(db_b ? db_b : ctx->db, o.ref[1], &id[1])) != RK_OK)
        goto out;
    co.threshold = o.threshold;
    co.conf = 0.95;
    co.noise = o.noise;
    rc = analysis_compare(ctx->db, id[0], db_b ? db_b : ctx->db, id[1], &co, &c);
    if (rc == RK_EUSAGE) {
        rc = rk_error(RK_EUSAGE,
                      "captures %lld and %lld cannot be compared: diff takes two captures of "
                      "run, tune or profile (kernels) or two probe captures (ceilings)",
                      (long long)id[0], (long long)id[1]);
        goto out;
    }
    if (rc == RK_ENODATA) { /* resolve() found both: a capture went away meanwhile */
        rc = rk_error(RK_ENODATA, "capture %lld or %lld is no longer in the database",
                      (long long)id[0], (long long)id[1]);
        goto out;
    }
    if (rc != RK_OK)
        goto out;
    if (o.fmt == RK_FMT_TEXT)
        rc = print_text(&c, db_path(ctx->db), db_b ? db_path(db_b) : db_path(ctx->db), !db_b);
    else
        rc = print_machine(&c, o.fmt);
    if (rc == RK_OK)
        rc = verdict(&c, o.fmt == RK_FMT_TEXT);
    analysis_compare_release(&c);
out:
    db_close(db_b);
    free(path_b);
    return rc;
}
