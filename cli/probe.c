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
#include "probes.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_probes(FILE *to)
{
    fprintf(to, "%-18s %-10s %s\n", "probe", "group", "what it measures");
    for (int i = 0; i < probes_count(); i++) {
        const struct probes_info *p = probes_get(i);
        fprintf(to, "%-18s %-10s %s\n", p->name, probes_group_name(p->group), p->summary);
    }
}

/* Stores results [first, out->n_results) and points [first_pt, out->n_points). */
static int store_output(struct db *db, int64_t capture, const struct probes_output *out, int first,
                        int first_pt)
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
    int quick = 0, list = 0, c, rc = RK_OK, first_err = RK_OK, n_sel = 0, done = 0;
    unsigned char *sel = NULL;
    struct probes *s = NULL;
    struct probes_output out = {0};
    int64_t capture = 0;

    if (rk_wants_help(argc, argv)) {
        rk_print_usage(rk_find_command("probe"), stdout);
        return RK_OK;
    }
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
    if (list) {
        list_probes(stdout);
        return RK_OK;
    }
    sel = calloc((size_t)probes_count(), 1);
    if (!sel)
        return rk_error(RK_ENOMEM, "out of host memory");
    if ((rc = probes_select(only, sel)) != RK_OK)
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
        for (int k = first; k < out.n_results; k++)
            print_result(&out.results[k]);
        fflush(stdout);
        if ((rc = store_output(ctx->db, capture, &out, first, first_pt)) != RK_OK)
            goto out;
    }
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
    return rc;
}
