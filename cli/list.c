/*
 * list.c - `roofkit list kernels|suites|metrics|captures|devices|gpus [--format F]`. Each
 * listing is a row of the small table below (git's OPT_SUBCOMMAND style). Tables go to stdout:
 * as text for a person (the layout below), or through format.c's writer as CSV or JSON, one
 * row per item with raw numbers (bytes, not MiB) and 0/1 for yes/no; notes go to stderr;
 * kernels and suites need no database, captures and devices open it read-only (a
 * missing file is an error, never created); metrics asks CUPTI's host API about the
 * chip (no GPU needed) and takes options of its own.
 */
#include "cli.h"
#include "collect.h"
#include "common.h"
#include "db.h"
#include "gpu.h"
#include "kernels.h"
#include "model.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table for --format csv|json; NULL (and the text header to print) for text. */
static int table_or_text(enum rk_format fmt, const struct rk_col *cols, int ncols,
                         struct rk_table **t)
{
    *t = NULL;
    return fmt == RK_FMT_TEXT ? RK_OK : rk_table_new(fmt, stdout, cols, ncols, t);
}

static int list_kernels(struct rk_ctx *ctx, enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"kernel", RK_COL_TEXT, 0},       {"family", RK_COL_TEXT, 0},
        {"layout", RK_COL_TEXT, 0},       {"precisions", RK_COL_TEXT, 0},
        {"cost_formula", RK_COL_TEXT, 0}, {"parameters", RK_COL_TEXT, 0},
        {"description", RK_COL_TEXT, 0},  {"seed", RK_COL_TEXT, 0},
    };
    struct rk_table *t;
    int rc;
    (void)ctx;
    if ((rc = table_or_text(fmt, cols, 8, &t)) != RK_OK)
        return rc;
    if (!t)
        printf("%-16s %-12s %-13s %-9s %-13s %s\n", "kernel", "family", "layout", "precision",
               "cost formula", "parameters (default)");
    for (int i = 0; i < kernels_count() && rc == RK_OK; i++) {
        const struct kernels_kernel *k = kernels_get(i);
        char prec[16] = "";
        char params[256] = "";
        /* the entry point's measurements are costed by the variant each ran */
        const char *cost = kernels_costed_as_variant(k)
                               ? "by variant"
                               : model_family_name((enum model_kernel_family)k->cost_family);
        size_t used = 0;
        for (int p = 0; p < KERNELS_NPREC; p++)
            if (k->precisions & KERNELS_PREC_BIT(p))
                snprintf(prec + strlen(prec), sizeof prec - strlen(prec), "%s%s",
                         prec[0] ? "," : "", kernels_precision_name(p));
        for (int p = 0; p < k->n_params && used < sizeof params; p++) {
            const struct kernels_param *kp = &k->params[p];
            int w;
            if ((kp->flags & KERNELS_PARAM_AUTO) && kp->def == 0)
                w = snprintf(params + used, sizeof params - used, "%s%s=auto", p ? " " : "",
                             kp->name);
            else
                w = snprintf(params + used, sizeof params - used, "%s%s=%ld", p ? " " : "",
                             kp->name, kp->def);
            if (w < 0)
                break;
            used += (size_t)w;
        }
        if (t) {
            rc = rk_table_row(t);
            rk_table_str(t, k->name);
            rk_table_str(t, k->family);
            rk_table_str(t, kernels_layout_name(k->layout));
            rk_table_str(t, prec);
            rk_table_str(t, cost);
            rk_table_str(t, params);
            rk_table_str(t, k->description);
            rk_table_str(t, k->seed);
            continue;
        }
        printf("%-16s %-12s %-13s %-9s %-13s %s\n", k->name, k->family,
               kernels_layout_name(k->layout), prec, cost, params[0] ? params : "-");
        printf("%-16s   %s (%s)\n", "", k->description, k->seed);
    }
    return rk_table_done(t, rc);
}

/* Machine formats: one row per suite, entry and shape. */
static int suites_table(enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"suite", RK_COL_TEXT, 0},
        {"entry", RK_COL_INT, 0},
        {"kernels", RK_COL_TEXT, 0},
        {"m", RK_COL_INT, 0},
        {"n", RK_COL_INT, 0},
        {"k", RK_COL_INT, 0},
        {"description", RK_COL_TEXT, 0},
    };
    struct rk_table *t;
    int rc = rk_table_new(fmt, stdout, cols, 7, &t);
    for (int i = 0; i < kernels_suites_count() && rc == RK_OK; i++) {
        const struct kernels_suite *s = kernels_suite_get(i);
        for (int e = 0; e < s->n_entries && rc == RK_OK; e++) {
            const struct kernels_suite_entry *en = &s->entries[e];
            struct rk_buf names = RK_BUF_INIT;
            rk_buf_puts(&names, "");
            for (int k = 0; k < KERNELS_SUITE_MAX_KERNELS && en->kernels[k]; k++)
                rk_buf_printf(&names, "%s%s", k ? " " : "", en->kernels[k]);
            for (int h = 0; h < kernels_suite_entry_size(en) && rc == RK_OK && !names.oom; h++) {
                struct kernels_shape sh;
                kernels_suite_entry_shape(en, h, &sh);
                rc = rk_table_row(t);
                rk_table_str(t, s->name);
                rk_table_int(t, e);
                rk_table_str(t, names.s);
                rk_table_int(t, sh.m);
                rk_table_int(t, sh.n);
                rk_table_int(t, sh.k);
                rk_table_str(t, s->description);
            }
            if (names.oom)
                rc = rk_error(RK_ENOMEM, "out of host memory");
            rk_buf_release(&names);
        }
    }
    return rk_table_done(t, rc);
}

static int list_suites(struct rk_ctx *ctx, enum rk_format fmt)
{
    (void)ctx;
    if (fmt != RK_FMT_TEXT)
        return suites_table(fmt);
    for (int i = 0; i < kernels_suites_count(); i++) {
        const struct kernels_suite *s = kernels_suite_get(i);
        printf("%s: %s\n", s->name, s->description);
        for (int e = 0; e < s->n_entries; e++) {
            const struct kernels_suite_entry *en = &s->entries[e];
            char shapes[1024];
            printf("  kernels:");
            for (int k = 0; k < KERNELS_SUITE_MAX_KERNELS && en->kernels[k]; k++)
                printf(" %s", en->kernels[k]);
            printf("\n  shapes (m x n x k): %s (%d shapes)\n",
                   kernels_suite_entry_describe(en, shapes, sizeof shapes),
                   kernels_suite_entry_size(en));
        }
    }
    return RK_OK;
}

static const struct rk_col metric_cols[] = {
    {"metric", RK_COL_TEXT, 0},          {"unit", RK_COL_TEXT, 0},  {"in_default", RK_COL_INT, 0},
    {"on_chip", RK_COL_INT, 0},          {"cupti", RK_COL_TEXT, 0}, {"description", RK_COL_TEXT, 0},
    {"checked_on_h100", RK_COL_TEXT, 0},
};

/* The CUPTI side of an output: its raw metric, or a formula "a + b + 2*c" (plan's text). A row
 * of t for --format csv|json, else text. */
static int print_metric_row(struct rk_table *t, const char *name, const char *unit,
                            const char *mark, const char *avail, const char *raw,
                            const char *description, const char *holds)
{
    if (t) {
        int rc = rk_table_row(t);
        rk_table_str(t, name);
        rk_table_str(t, unit);
        rk_table_int(t, strcmp(mark, "yes") == 0);
        rk_table_int(t, strcmp(avail, "yes") == 0);
        rk_table_str(t, raw);
        rk_table_str(t, description ? description : "raw CUPTI metric");
        rk_table_str(t, holds);
        return rc;
    }
    printf("%-32s %-17s %-8s %-9s %s\n", name, unit ? unit : "-", mark, avail,
           description ? description : "raw CUPTI metric");
    printf("%-32s = %s\n", "", raw);
    if (holds)
        printf("%-32s   checked on H100: %s\n", "", holds);
    return RK_OK;
}

/* The "checked on H100" line of an alias (collect_metric_holds); raw names get none. */
static const char *holds_of(const struct collect_metric *m)
{
    const char *h = m ? collect_metric_holds(m) : NULL;
    return h ? h : m ? "not yet" : NULL;
}

/*
 * `list metrics [--metrics LIST] [--chip NAME]`: every alias (or only those named) with its
 * unit, whether it is in the default set, whether the chip has it, the CUPTI metric(s) and a
 * description; then the replay passes of the default set (or of LIST). CUPTI's host API
 * answers the chip questions without a GPU; without a GPU the chip is GH100, and the listing
 * says so.
 */
static int list_metrics(int argc, char **argv, struct rk_ctx *ctx, enum rk_format fmt)
{
    static const struct option longopts[] = {
        {"metrics", required_argument, NULL, 'm'},
        {"chip", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *metrics = NULL, *chip_opt = NULL;
    char chip[64], where[128], **names = NULL;
    int c, n = 0, passes = 0, rc, *supported = NULL, nin_default = 0, ndflt = 0;
    const char **dflt = NULL;
    struct collect_plan *plan = NULL;
    struct rk_table *t = NULL;

    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":m:c:", longopts)) != -1) {
        if (c == 'm')
            metrics = optarg;
        else if (c == 'c' && *optarg)
            chip_opt = optarg;
        else if (c == 'c')
            return rk_error(RK_EUSAGE, "option '--chip' needs a CUPTI chip name such as GH100");
        else
            return RK_EUSAGE;
    }
    for (int i = optind; i < argc; i++)
        if (strcmp(argv[i], "metrics") != 0)
            return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help list'",
                            argv[i]);
    if (metrics && rk_parse_name_list(metrics, &names, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--metrics' needs metric names separated by commas; "
                                   "see 'roofkit list metrics'");
    /* Names first (no CUPTI): an unknown one is a usage error. */
    if ((rc = collect_plan_new((const char *const *)names, n, &plan)) != RK_OK)
        goto out;
    if (chip_opt) {
        snprintf(chip, sizeof chip, "%s", chip_opt);
        snprintf(where, sizeof where, "%s (--chip)", chip);
    } else if (collect_chip_name(ctx->device, chip, sizeof chip) == RK_OK) {
        snprintf(where, sizeof where, "%s (device %d)", chip, ctx->device);
    } else {
        snprintf(where, sizeof where, "%s (no usable GPU: assumed)", chip);
    }
    if (!metrics) {
        /* The default set's passes count what the chip has of it (a chip before Hopper lacks
         * the wgmma counters). */
        const int na = collect_metric_count();
        if (!(supported = calloc((size_t)na, sizeof *supported)) ||
            !(dflt = calloc((size_t)na, sizeof *dflt))) {
            rc = rk_error(RK_ENOMEM, "out of host memory");
            goto out;
        }
        for (int i = 0; i < na; i++) {
            const struct collect_metric *m = collect_metric_get(i);
            if ((rc = collect_metric_supported(chip, m->alias, &supported[i], NULL)) != RK_OK)
                goto out;
            if (m->in_default) {
                nin_default++;
                if (supported[i])
                    dflt[ndflt++] = m->alias;
            }
        }
        if (ndflt > 0 && (rc = collect_count_passes_for(chip, dflt, ndflt, &passes)) != RK_OK)
            goto out;
    } else if ((rc = collect_count_passes_for(chip, (const char *const *)names, n, &passes)) !=
               RK_OK) {
        goto out;
    }

    if ((rc = table_or_text(fmt, metric_cols, 7, &t)) != RK_OK)
        goto out;
    if (!t)
        printf("%-32s %-17s %-8s %-9s %s\n", "metric", "unit", "default", "on chip", "description");
    if (!metrics) {
        for (int i = 0; i < collect_metric_count() && rc == RK_OK; i++) {
            const struct collect_metric *m = collect_metric_get(i);
            struct collect_plan *one = NULL;
            if ((rc = collect_plan_new(&m->alias, 1, &one)) != RK_OK)
                goto out;
            rc = print_metric_row(t, m->alias, m->unit, m->in_default ? "yes" : "-",
                                  supported[i] ? "yes" : "no", one->out[0].raw, m->description,
                                  holds_of(m));
            collect_plan_free(one);
        }
    } else {
        /* Only the named ones (all known to the chip: counting passes checked them). */
        if ((rc = collect_plan_check(plan, chip)) != RK_OK)
            goto out;
        for (int i = 0; i < plan->nout && rc == RK_OK; i++) {
            const struct collect_output *o = &plan->out[i];
            const struct collect_metric *m = o->alias ? collect_metric_find(o->alias) : NULL;
            rc = print_metric_row(t, o->alias ? o->alias : o->raw,
                                  o->unit ? o->unit : plan->raw_units[o->term[0]],
                                  m && m->in_default ? "yes" : "-", "yes", o->raw,
                                  m ? m->description : NULL, holds_of(m));
        }
    }
    if (rc != RK_OK)
        goto out;
    if (t) { /* the data only; what it was asked of goes to stderr */
        rc = rk_table_end(t);
        t = NULL;
        rk_info("chip %s: %d replay pass%s per kernel launch for %s", where, passes,
                passes == 1 ? "" : "es", metrics ? "these metrics" : "the default set");
        goto out;
    }
    printf("\nchip: %s\n", where);
    if (metrics)
        printf("these metrics: %d metric%s, %d CUPTI metric%s, %d replay pass%s per kernel "
               "launch\n",
               plan->nout, plan->nout == 1 ? "" : "s", plan->nraw, plan->nraw == 1 ? "" : "s",
               passes, passes == 1 ? "" : "es");
    else
        printf("default set: %d of its %d metrics on this chip, %d replay pass%s per kernel "
               "launch\nany other CUPTI metric may be named as such (dram__bytes_read.sum); "
               "'--metrics LIST' counts the passes of a set\n",
               ndflt, nin_default, passes, passes == 1 ? "" : "es");
out:
    rk_table_free(t);
    free(supported);
    free(dflt);
    collect_plan_free(plan);
    rk_free_name_list(names, n);
    return rc;
}

static int list_captures(struct rk_ctx *ctx, enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"id", RK_COL_INT, 0},           {"kind", RK_COL_TEXT, 0},
        {"status", RK_COL_TEXT, 0},      {"started", RK_COL_TEXT, 0},
        {"ended", RK_COL_TEXT, 0},       {"device", RK_COL_TEXT, 0},
        {"ceilings", RK_COL_INT, 0},     {"latency_points", RK_COL_INT, 0},
        {"measurements", RK_COL_INT, 0}, {"predictions", RK_COL_INT, 0},
        {"host", RK_COL_TEXT, 0},        {"rank", RK_COL_INT, 0},
    };
    struct db_capture *caps = NULL;
    struct rk_table *t = NULL;
    int n = 0, rc;
    rc = rk_ctx_open_db(ctx, 0);
    if (rc != RK_OK)
        return rc;
    rc = db_list_captures(ctx->db, &caps, &n);
    if (rc != RK_OK)
        return rc;
    if (fmt != RK_FMT_TEXT) {
        rc = rk_table_new(fmt, stdout, cols, 12, &t);
        for (int i = 0; i < n && rc == RK_OK; i++) {
            const struct db_capture *c = &caps[i];
            rc = rk_table_row(t);
            rk_table_int(t, c->id);
            rk_table_str(t, db_capture_kind_name(c->kind));
            rk_table_str(t, db_status_name(c->status));
            rk_table_str(t, c->started_at);
            rk_table_str(t, c->ended_at);
            rk_table_str(t, c->device_name);
            rk_table_int(t, c->n_ceilings);
            rk_table_int(t, c->n_latency_points);
            rk_table_int(t, c->n_measurements);
            rk_table_int(t, c->n_predictions);
            rk_table_str(t, c->host);
            if (c->rank >= 0)
                rk_table_int(t, c->rank);
            else
                rk_table_null(t);
        }
        db_free_captures(caps, n);
        return rk_table_done(t, rc);
    }
    printf("%-5s %-8s %-11s %-21s %-21s %-28s %8s %8s %8s %8s %-12s %5s\n", "id", "kind", "status",
           "started", "ended", "device", "ceilings", "latency", "measure", "predict", "host",
           "rank");
    for (int i = 0; i < n; i++) {
        const struct db_capture *c = &caps[i];
        char rank[16] = "-";
        if (c->rank >= 0)
            snprintf(rank, sizeof rank, "%d", c->rank);
        printf("%-5" PRId64 " %-8s %-11s %-21s %-21s %-28.28s %8" PRId64 " %8" PRId64 " %8" PRId64
               " %8" PRId64 " %-12.12s %5s\n",
               c->id, db_capture_kind_name(c->kind), db_status_name(c->status),
               c->started_at ? c->started_at : "-", c->ended_at ? c->ended_at : "-",
               c->device_name ? c->device_name : "-", c->n_ceilings, c->n_latency_points,
               c->n_measurements, c->n_predictions, c->host ? c->host : "-", rank);
    }
    if (n == 0)
        rk_info("no captures in '%s' yet; 'roofkit probe' or 'roofkit run' makes one",
                db_path(ctx->db));
    db_free_captures(caps, n);
    return RK_OK;
}

static int list_devices(struct rk_ctx *ctx, enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"id", RK_COL_INT, 0},
        {"name", RK_COL_TEXT, 0},
        {"cc", RK_COL_TEXT, 0},
        {"sm_count", RK_COL_INT, 0},
        {"sm_clock_mhz", RK_COL_INT, 0},
        {"mem_clock_mhz", RK_COL_INT, 0},
        {"bus_width_bits", RK_COL_INT, 0},
        {"l2_bytes", RK_COL_INT, 0},
        {"memory_bytes", RK_COL_INT, 0},
        {"host", RK_COL_TEXT, 0},
        {"uuid", RK_COL_TEXT, 0},
    };
    struct db_device *devs = NULL;
    struct rk_table *t = NULL;
    int n = 0, rc;
    rc = rk_ctx_open_db(ctx, 0);
    if (rc != RK_OK)
        return rc;
    rc = db_list_devices(ctx->db, &devs, &n);
    if (rc != RK_OK)
        return rc;
    if (fmt != RK_FMT_TEXT) {
        rc = rk_table_new(fmt, stdout, cols, 11, &t);
        for (int i = 0; i < n && rc == RK_OK; i++) {
            const struct db_device *d = &devs[i];
            char cc[24];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            rc = rk_table_row(t);
            rk_table_int(t, d->id);
            rk_table_str(t, d->name);
            rk_table_str(t, cc);
            rk_table_int(t, d->sm_count);
            rk_table_int(t, d->sm_clock_mhz);
            rk_table_int(t, d->mem_clock_mhz);
            rk_table_int(t, d->bus_width_bits);
            rk_table_int(t, d->l2_bytes);
            rk_table_int(t, d->memory_bytes);
            rk_table_str(t, d->host);
            rk_table_str(t, d->uuid);
        }
        db_free_devices(devs, n);
        return rk_table_done(t, rc);
    }
    printf("%-4s %-28s %-5s %5s %9s %9s %7s %9s %12s %-12s %s\n", "id", "name", "cc", "SMs",
           "SM MHz", "mem MHz", "bus bit", "L2 MiB", "memory GiB", "host", "uuid");
    for (int i = 0; i < n; i++) {
        const struct db_device *d = &devs[i];
        printf("%-4" PRId64 " %-28.28s %d.%-3d %5d %9d %9d %7d %9.1f %12.1f %-12.12s %s\n", d->id,
               d->name, d->cc_major, d->cc_minor, d->sm_count, d->sm_clock_mhz, d->mem_clock_mhz,
               d->bus_width_bits, (double)d->l2_bytes / 1048576.0,
               (double)d->memory_bytes / 1073741824.0, d->host ? d->host : "-", d->uuid);
    }
    if (n == 0)
        rk_info("no devices in '%s' yet; 'roofkit probe' records the GPU", db_path(ctx->db));
    db_free_devices(devs, n);
    return RK_OK;
}

/* The GPUs this machine has (not the database's rows): what --device can name. */
static int list_gpus(struct rk_ctx *ctx, enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"index", RK_COL_INT, 0}, {"uuid", RK_COL_TEXT, 0},       {"name", RK_COL_TEXT, 0},
        {"cc", RK_COL_TEXT, 0},   {"pci_bus_id", RK_COL_TEXT, 0}, {"numa", RK_COL_INT, 0},
    };
    struct rk_gpu *g = NULL;
    struct rk_table *t = NULL;
    int n = 0, rc;
    (void)ctx;
    if ((rc = rk_gpu_list(&g, &n)) != RK_OK)
        return rc;
    if (fmt != RK_FMT_TEXT) {
        rc = rk_table_new(fmt, stdout, cols, 6, &t);
        for (int i = 0; i < n && rc == RK_OK; i++) {
            char cc[24];
            int node = rk_pci_numa_node(g[i].pci_bus_id);
            snprintf(cc, sizeof cc, "%d.%d", g[i].cc_major, g[i].cc_minor);
            rc = rk_table_row(t);
            rk_table_int(t, g[i].index);
            rk_table_str(t, g[i].uuid);
            rk_table_str(t, g[i].name);
            rk_table_str(t, cc);
            rk_table_str(t, g[i].pci_bus_id);
            if (node >= 0)
                rk_table_int(t, node);
            else
                rk_table_null(t);
        }
        free(g);
        return rk_table_done(t, rc);
    }
    printf("%-5s %-40s %-28s %-5s %-13s %4s\n", "index", "uuid", "name", "cc", "pci bus id",
           "numa");
    for (int i = 0; i < n; i++) {
        char numa[16] = "-";
        int node = rk_pci_numa_node(g[i].pci_bus_id);
        if (node >= 0)
            snprintf(numa, sizeof numa, "%d", node);
        printf("%-5d %-40s %-28.28s %d.%-3d %-13s %4s\n", g[i].index, g[i].uuid, g[i].name,
               g[i].cc_major, g[i].cc_minor, g[i].pci_bus_id, numa);
    }
    free(g);
    return RK_OK;
}

/* Listings without options take only ctx; `metrics` parses its own options. Every one takes
 * --format (cmd_list takes it out of argv first). */
static const struct {
    const char *what;
    int (*fn)(struct rk_ctx *ctx, enum rk_format fmt);
    int (*fn_args)(int argc, char **argv, struct rk_ctx *ctx, enum rk_format fmt);
} listings[] = {
    {"kernels", list_kernels, NULL}, {"suites", list_suites, NULL},
    {"metrics", NULL, list_metrics}, {"captures", list_captures, NULL},
    {"devices", list_devices, NULL}, {"gpus", list_gpus, NULL},
};

int cmd_list(int argc, char **argv, struct rk_ctx *ctx)
{
    enum rk_format fmt;
    if (rk_take_format(&argc, argv, &fmt) != RK_OK)
        return RK_EUSAGE;
    if (argc < 2)
        return rk_error(RK_EUSAGE,
                        "list what? say kernels, suites, metrics, captures, devices or gpus");
    for (size_t i = 0; i < sizeof listings / sizeof listings[0]; i++) {
        if (strcmp(argv[1], listings[i].what) != 0)
            continue;
        if (listings[i].fn_args)
            return listings[i].fn_args(argc, argv, ctx, fmt);
        if (argc > 2)
            return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help list'",
                            argv[2]);
        return listings[i].fn(ctx, fmt);
    }
    if (argc > 2)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help list'", argv[2]);
    return rk_error(RK_EUSAGE,
                    "cannot list '%s'; say kernels, suites, metrics, captures, devices or gpus",
                    argv[1]);
}
