/*
 * cli/probe.c - `roofkit probe`: measures the GPU's ceilings with probes/ and
 * stores them as one capture (the database's ceiling and latency_point rows).
 *
 * Order matters: the GPU is opened BEFORE anything is written, so a machine with no
 * GPU gets one line, exit code RK_ENOGPU (4) and an untouched database. Then the
 * device row is upserted and a capture begun (status running) as run and tune do
 * (rk_begin_device_capture), and each probe's
 * results stored as they come: each ceiling is one insert (its own transaction),
 * the latency curve one transaction. A failing probe is reported and the others
 * still run (the capture ends `failed`, the exit code is the first failure's);
 * SIGINT stops between probes and marks the capture `interrupted`.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"
#include "gpu.h"
#include "probes.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int list_probes(enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"probe", RK_COL_TEXT, 0}, {"group", RK_COL_TEXT, 0}, {"summary", RK_COL_TEXT, 0}};
    struct rk_table *t = NULL;
    int rc = RK_OK;
    if (fmt == RK_FMT_TEXT)
        printf("%-18s %-10s %s\n", "probe", "group", "what it measures");
    else if ((rc = rk_table_new(fmt, stdout, cols, 3, &t)) != RK_OK)
        return rc;
    for (int i = 0; i < probes_count() && rc == RK_OK; i++) {
        const struct probes_info *p = probes_get(i);
        if (!t) {
            printf("%-18s %-10s %s\n", p->name, probes_group_name(p->group), p->summary);
            continue;
        }
        rc = rk_table_row(t);
        rk_table_str(t, p->name);
        rk_table_str(t, probes_group_name(p->group));
        rk_table_str(t, p->summary);
    }
    return rk_table_done(t, rc);
}

/* --format csv|json: the ceilings of the run, one row each, after it. */
static int results_table(enum rk_format fmt, const struct probes_output *out)
{
    static const struct rk_col cols[] = {
        {"name", RK_COL_TEXT, 0},    {"kind", RK_COL_TEXT, 0},
        {"level", RK_COL_TEXT, 0},   {"precision", RK_COL_TEXT, 0},
        {"value", RK_COL_REAL, 2},   {"unit", RK_COL_TEXT, 0},
        {"min", RK_COL_REAL, 2},     {"median", RK_COL_REAL, 2},
        {"max", RK_COL_REAL, 2},     {"theoretical", RK_COL_REAL, 2},
        {"reps", RK_COL_INT, 0},     {"sm_clock_mhz", RK_COL_REAL, 0},
        {"power_w", RK_COL_REAL, 1}, {"temp_c", RK_COL_REAL, 1},
        {"method", RK_COL_TEXT, 0},  {"params", RK_COL_TEXT, 0},
    };
    struct rk_table *t = NULL;
    int rc = rk_table_new(fmt, stdout, cols, 16, &t);
    for (int i = 0; i < out->n_results && rc == RK_OK; i++) {
        const struct probes_result *r = &out->results[i];
        rc = rk_table_row(t);
        rk_table_str(t, r->name);
        rk_table_str(t, r->kind);
        rk_table_str(t, r->level);
        rk_table_str(t, r->precision);
        rk_table_real(t, r->value);
        rk_table_str(t, r->unit);
        rk_table_real(t, r->min);
        rk_table_real(t, r->median);
        rk_table_real(t, r->max);
        rk_table_real(t, r->theoretical);
        rk_table_int(t, r->reps);
        rk_table_real(t, r->sm_clock_mhz);
        rk_table_real(t, r->power_w);
        rk_table_real(t, r->temp_c);
        rk_table_str(t, r->method);
        rk_table_str(t, r->params);
    }
    return rk_table_done(t, rc);
}

/* Stores results [first, out->n_results) and points [first_pt, out->n_points); peer: the other
 * GPU's device id for the ceilings of a pair, else 0. */
static int store_output(struct db *db, int64_t capture, const struct probes_output *out, int first,
                        int first_pt, int64_t peer)
{
    int rc = RK_OK;
    for (int i = first; i < out->n_results && rc == RK_OK; i++) {
        const struct probes_result *r = &out->results[i];
        struct db_ceiling c;
        memset(&c, 0, sizeof c);
        c.name = r->name;
        c.kind = r->kind;
        c.level = r->level;
        c.precision = r->precision;
        c.value = r->value;
        c.unit = r->unit;
        c.method = r->method;
        c.params = r->params;
        c.reps = r->reps;
        c.min = r->min;
        c.median = r->median;
        c.max = r->max;
        c.theoretical = r->theoretical;
        c.sm_clock_mhz = r->sm_clock_mhz;
        c.power_w = r->power_w;
        c.temp_c = r->temp_c;
        c.peer_device_id = peer;
        rc = db_insert_ceiling(db, capture, &c, NULL);
    }
    if (rc == RK_OK && out->n_points > first_pt) {
        int n = out->n_points - first_pt;
        struct db_latency_point *p = malloc((size_t)n * sizeof *p);
        if (!p)
            return rk_error(RK_ENOMEM, "out of host memory storing the latency curve");
        for (int i = 0; i < n; i++) {
            p[i].footprint_bytes = out->points[first_pt + i].footprint_bytes;
            p[i].stride_bytes = out->points[first_pt + i].stride_bytes;
            p[i].cycles = out->points[first_pt + i].cycles;
            p[i].ns = out->points[first_pt + i].ns;
        }
        rc = db_insert_latency_points(db, capture, p, n);
        free(p);
    }
    return rc;
}

/* One line per ceiling on stdout: the data of the run. */
static void print_result(const struct probes_result *r)
{
    printf("%-22s %12.2f %-8s  min %10.2f  max %10.2f", r->name, r->value, r->unit, r->min, r->max);
    if (!isnan(r->theoretical) && r->theoretical > 0)
        printf("  theory %10.2f (%5.1f%%)", r->theoretical, 100.0 * r->value / r->theoretical);
    printf("\n");
}

/*
 * --only and the pair probes, which are not in the registry of one GPU's probes: *peers is 1
 * when the pairs are wanted (no list, or "peer" in it), and *rest is the list without "peer"
 * (malloc'd; NULL when the list was NULL; "" when only "peer" was named).
 */
static int split_only(const char *only, char **rest /* OUT */, int *peers /* OUT */)
{
    char **names = NULL;
    int n = 0, rc;
    struct rk_buf b = RK_BUF_INIT;
    *rest = NULL;
    *peers = 1;
    if (!only)
        return RK_OK;
    if ((rc = rk_parse_name_list(only, &names, &n)) != RK_OK)
        return rc == RK_ENOMEM ? rk_error(rc, "out of host memory")
                               : rk_error(rc, "option '--only' has an empty name: '%s'", only);
    *peers = 0;
    rk_buf_puts(&b, "");
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "peer") == 0) {
            *peers = 1;
            continue;
        }
        rk_buf_printf(&b, "%s%s", b.len ? "," : "", names[i]);
    }
    rk_free_name_list(names, n);
    if (b.oom) {
        rk_buf_release(&b);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    *rest = b.s;
    return RK_OK;
}

/* The device row of CUDA device `index` (read and upserted). */
static int store_gpu(struct rk_ctx *ctx, int index, struct rk_gpu *g, int64_t *id)
{
    int rc = rk_gpu_read(index, g);
    return rc != RK_OK ? rc : rk_store_device(ctx, g, id);
}

/*
 * The ceilings of every ordered pair of the GPUs a list probed one by one: peer bandwidth and
 * latency, one after another (the pairs share links). Each source GPU's rows go into a probe
 * capture of that GPU, each ceiling naming the other GPU.
 *
 * Always the peer probes' short set (quick): on two H100s joined by NVLink the full sweep (three
 * copy sizes, both streams, twelve launch shapes, the chase on eight SMs) found every ceiling
 * within 0.3 % of the short set's (1 GiB copies, four launch shapes, three SMs) at 4 times the
 * time, 2.2 s against 0.56 s a pair, and a node of 8 GPUs has 56 ordered pairs. The full sweep
 * stays in probes/ for a link where it may matter (tests/probes/test_peer_gpu.c "full").
 */
static int probe_pairs(struct rk_ctx *ctx)
{
    int rc = RK_OK, first_err = RK_OK, npairs = ctx->ngpus * (ctx->ngpus - 1), done = 0;
    int64_t *ids = calloc((size_t)ctx->ngpus, sizeof *ids);
    struct rk_gpu *g = calloc((size_t)ctx->ngpus, sizeof *g);

    if (!ids || !g) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    if ((rc = rk_ctx_open_db(ctx, 1)) != RK_OK)
        goto out;
    for (int i = 0; i < ctx->ngpus && rc == RK_OK; i++)
        rc = store_gpu(ctx, ctx->gpus[i], &g[i], &ids[i]);
    rk_info("probing %d pairs of GPUs into %s", npairs, ctx->db_path);
    for (int a = 0; a < ctx->ngpus && rc == RK_OK && !rk_interrupted; a++) {
        int64_t capture = 0;
        int first_a = RK_OK;
        if ((rc = rk_begin_device_capture(ctx, &g[a], DB_CAPTURE_PROBE, &capture)) != RK_OK)
            break;
        for (int b = 0; b < ctx->ngpus && rc == RK_OK && !rk_interrupted; b++) {
            struct probes_output out = {0};
            char label[64];
            int prc;
            char why[256] = "";
            if (a == b)
                continue;
            if (probes_peer_waived(ctx->gpus[a], ctx->gpus[b], why, sizeof why)) {
                rk_info("GPU %d -> GPU %d: waived: %s", ctx->gpus[a], ctx->gpus[b], why);
                done++;
                continue;
            }
            snprintf(label, sizeof label, "pair %d -> %d", ctx->gpus[a], ctx->gpus[b]);
            rk_progress(label, done, npairs);
            prc = probes_peer_run(ctx->gpus[a], ctx->gpus[b], 1, &out);
            rk_progress_end();
            done++;
            if (prc == RK_OK) {
                printf("GPU %d -> GPU %d\n", ctx->gpus[a], ctx->gpus[b]);
                for (int k = 0; k < out.n_results; k++)
                    print_result(&out.results[k]);
                fflush(stdout);
                rc = store_output(ctx->db, capture, &out, 0, out.n_points, ids[b]);
            } else if (prc != RK_EINTR) {
                rk_warn("peer probes of GPU %d -> GPU %d failed (%s); continuing with the others",
                        ctx->gpus[a], ctx->gpus[b], rk_strerror(prc));
                if (first_a == RK_OK)
                    first_a = prc;
            }
            probes_output_release(&out);
        }
        if (rk_interrupted)
            db_capture_mark_interrupted(ctx->db, capture);
        else
            db_capture_end(ctx->db, capture, rc == RK_OK && first_a == RK_OK ? DB_DONE : DB_FAILED);
        if (first_err == RK_OK)
            first_err = first_a;
    }
    if (rc == RK_OK)
        rc = rk_interrupted ? rk_error(RK_EINTR,
                                       "interrupted after %d of %d pairs; what was "
                                       "stored is complete",
                                       done, npairs)
                            : first_err;
out:
    free(ids);
    free(g);
    return rc;
}

int cmd_probe(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option longopts[] = {
        {"only", required_argument, NULL, 'o'},
        {"quick", no_argument, NULL, 'k'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *only = NULL;
    char *rest = NULL;
    int quick = 0, list = 0, c, rc = RK_OK, first_err = RK_OK, n_sel = 0, done = 0, peers = 1;
    unsigned char *sel = NULL;
    struct probes *s = NULL;
    struct probes_output out = {0};
    int64_t capture = 0;
    enum rk_format fmt;

    if (rk_wants_help(argc, argv)) {
        rk_print_usage(rk_find_command("probe"), stdout);
        return RK_OK;
    }
    if (rk_take_format(&argc, argv, &fmt) != RK_OK)
        return RK_EUSAGE;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":h", longopts)) != -1) {
        switch (c) {
        case 'o':
            only = optarg;
            break;
        case 'k':
            quick = 1;
            break;
        case 'l':
            list = 1;
            break;
        case 'h':
            rk_print_usage(rk_find_command("probe"), stdout);
            return RK_OK;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "'probe' takes no argument '%s'; see 'roofkit help probe'",
                        argv[optind]);
    if (list)
        return list_probes(fmt);
    if ((rc = split_only(only, &rest, &peers)) != RK_OK)
        return rc;
    if (ctx->gpus) { /* after one roofkit per GPU: the pairs */
        rc = peers ? probe_pairs(ctx) : RK_OK;
        free(rest);
        return rc;
    }
    sel = calloc((size_t)probes_count(), 1);
    if (!sel) {
        free(rest);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    if (rest && !*rest) { /* only the pairs: nothing for one GPU */
        free(rest);
        free(sel);
        return ctx->per_gpu_child
                   ? RK_OK
                   : rk_error(RK_EUSAGE, "'--only peer' needs several GPUs: --device all or a "
                                         "list of them");
    }
    if ((rc = probes_select(rest, sel)) != RK_OK)
        goto out;
    for (int i = 0; i < probes_count(); i++)
        n_sel += sel[i];

    /* The GPU first: without one, nothing is written. */
    if ((rc = probes_open(ctx->device, quick, &s)) != RK_OK)
        goto out;
    if ((rc = rk_ctx_open_db(ctx, 1)) != RK_OK)
        goto out;
    if ((rc = rk_begin_device_capture(ctx, probes_device(s), DB_CAPTURE_PROBE, &capture)) != RK_OK)
        goto out;
    rk_info("probing %s (device %d, %d probes%s) into capture %lld of %s", probes_device(s)->name,
            ctx->device, n_sel, quick ? ", quick" : "", (long long)capture, ctx->db_path);

    for (int i = 0; i < probes_count() && !rk_interrupted; i++) {
        const struct probes_info *p = probes_get(i);
        const char *why;
        int first = out.n_results, first_pt = out.n_points, prc;
        if (!sel[i])
            continue;
        rk_progress(p->name, done, n_sel);
        if ((why = probes_waived(s, i)) != NULL) {
            rk_progress_end();
            rk_info("%s: waived: %s", p->name, why);
            done++;
            continue;
        }
        prc = probes_run(s, i, &out);
        rk_progress_end();
        if (prc == RK_EINTR)
            break;
        done++;
        if (prc != RK_OK) {
            rk_warn("probe %s failed (%s); continuing with the others", p->name, rk_strerror(prc));
            if (first_err == RK_OK)
                first_err = prc;
            continue;
        }
        for (int k = first; k < out.n_results && fmt == RK_FMT_TEXT; k++)
            print_result(&out.results[k]);
        fflush(stdout);
        if ((rc = store_output(ctx->db, capture, &out, first, first_pt, 0)) != RK_OK)
            goto out;
    }
    rc = fmt == RK_FMT_TEXT ? RK_OK : results_table(fmt, &out);
    if (rc == RK_OK)
        rc = first_err;
out:
    if (capture) {
        if (rk_interrupted)
            db_capture_mark_interrupted(ctx->db, capture);
        else
            db_capture_end(ctx->db, capture, rc == RK_OK ? DB_DONE : DB_FAILED);
    }
    if (rk_interrupted && (rc == RK_OK || rc == RK_EINTR))
        rc = capture ? rk_error(RK_EINTR,
                                "interrupted after %d of %d probes; the %d results stored in "
                                "capture %lld are complete",
                                done, n_sel, out.n_results, (long long)capture)
                     : rk_error(RK_EINTR, "interrupted before probing; nothing was stored");
    probes_output_release(&out);
    probes_close(s);
    free(sel);
    free(rest);
    return rc;
}
