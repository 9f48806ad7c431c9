/*
 * list.c - `roofkit list kernels|suites|metrics|captures|devices`. Each listing is a
 * row of the small table below (git's OPT_SUBCOMMAND style). Tables go to stdout;
 * kernels and suites need no database, captures and devices open it read-only (a
 * missing file is an error, never created).
 */
#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernels.h"
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int list_kernels(struct rk_ctx *ctx)
{
    (void)ctx;
    printf("%-16s %-12s %-13s %-9s %-13s %s\n", "kernel", "family", "layout", "precision",
           "cost formula", "parameters (default)");
    for (int i = 0; i < kernels_count(); i++) {
        const struct kernels_kernel *k = kernels_get(i);
        char prec[16] = "";
        char params[256] = "";
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
        printf("%-16s %-12s %-13s %-9s %-13s %s\n", k->name, k->family,
               kernels_layout_name(k->layout), prec, model_family_name((enum model_kernel_family)k->cost_family), params[0] ? params : "-");
        printf("%-16s   %s (%s)\n", "", k->description, k->seed);
    }
    return RK_OK;
}

static int list_suites(struct rk_ctx *ctx)
{
    (void)ctx;
    for (int i = 0; i < kernels_suites_count(); i++) {
        const struct kernels_suite *s = kernels_suite_get(i);
        printf("%s: %s\n", s->name, s->description);
        for (int e = 0; e < s->n_entries; e++) {
            const struct kernels_suite_entry *en = &s->entries[e];
            printf("  kernels:");
            for (int k = 0; k < KERNELS_SUITE_MAX_KERNELS && en->kernels[k]; k++)
                printf(" %s", en->kernels[k]);
            printf("\n  shapes (m x n x k):");
            for (int h = 0; h < en->n_shapes; h++)
                printf("%s %ldx%ldx%ld", h ? "," : "", en->shapes[h].m, en->shapes[h].n,
                       en->shapes[h].k);
            printf("\n");
        }
    }
    return RK_OK;
}

static int list_metrics(struct rk_ctx *ctx)
{
    (void)ctx;
    return rk_error(RK_ENOTYET, "'list metrics' is not available in this version yet (it comes "
                                "with the collect issue)");
}

static int list_captures(struct rk_ctx *ctx)
{
    struct db_capture *caps = NULL;
    int n = 0, rc;
    rc = rk_ctx_open_db(ctx, 0);
    if (rc != RK_OK)
        return rc;
    rc = db_list_captures(ctx->db, &caps, &n);
    if (rc != RK_OK)
        return rc;
    printf("%-5s %-8s %-11s %-21s %-21s %-28s %8s %8s %8s %8s\n", "id", "kind", "status",
           "started", "ended", "device", "ceilings", "latency", "measure", "predict");
    for (int i = 0; i < n; i++) {
        const struct db_capture *c = &caps[i];
        printf("%-5" PRId64 " %-8s %-11s %-21s %-21s %-28.28s %8" PRId64 " %8" PRId64 " %8" PRId64
               " %8" PRId64 "\n",
               c->id, db_capture_kind_name(c->kind), db_status_name(c->status),
               c->started_at ? c->started_at : "-", c->ended_at ? c->ended_at : "-",
               c->device_name ? c->device_name : "-", c->n_ceilings, c->n_latency_points,
               c->n_measurements, c->n_predictions);
    }
    if (n == 0)
        rk_info("no captures in '%s' yet; 'roofkit probe' or 'roofkit run' makes one",
                db_path(ctx->db));
    db_free_captures(caps, n);
    return RK_OK;
}

static int list_devices(struct rk_ctx *ctx)
{
    struct db_device *devs = NULL;
    int n = 0, rc;
    rc = rk_ctx_open_db(ctx, 0);
    if (rc != RK_OK)
        return rc;
    rc = db_list_devices(ctx->db, &devs, &n);
    if (rc != RK_OK)
        return rc;
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

static const struct {
    const char *what;
    int (*fn)(struct rk_ctx *ctx);
} listings[] = {
    {"kernels", list_kernels}, {"suites", list_suites},     {"metrics", list_metrics},
    {"captures", list_captures}, {"devices", list_devices},
};

int cmd_list(int argc, char **argv, struct rk_ctx *ctx)
{
    if (argc < 2)
        return rk_error(RK_EUSAGE, "list what? say kernels, suites, metrics, captures or devices");
    if (argc > 2)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help list'", argv[2]);
    for (size_t i = 0; i < sizeof listings / sizeof listings[0]; i++)
        if (strcmp(argv[1], listings[i].what) == 0)
            return listings[i].fn(ctx);
    return rk_error(RK_EUSAGE, "cannot list '%s'; say kernels, suites, metrics, captures or devices",
                    argv[1]);
}
