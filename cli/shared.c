/*
 * shared.c - what several subcommands need alike: the database rows that describe the GPU at
 * hand (probe, run, tune) and one measured configuration (run, tune), file names with their
 * placeholders expanded. Kept here so that each
 * subcommand file stays wiring; the measured ceilings and what the model takes from them
 * are analysis/'s.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "db.h"
#include "kernels.h"
#include "model.h"
#include "probes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

void rk_device_row(const struct rk_gpu *d, const char *host, struct db_device *dv)
{
    memset(dv, 0, sizeof *dv);
    dv->name = d->name;
    dv->uuid = d->uuid;
    dv->pci_bus_id = d->pci_bus_id[0] ? d->pci_bus_id : NULL;
    dv->cc_major = d->cc_major;
    dv->cc_minor = d->cc_minor;
    dv->sm_count = d->sm_count;
    dv->sm_clock_mhz = d->sm_clock_mhz;
    dv->mem_clock_mhz = d->mem_clock_mhz;
    dv->bus_width_bits = d->bus_width_bits;
    dv->l2_bytes = d->l2_bytes;
    dv->memory_bytes = d->memory_bytes;
    dv->smem_per_sm_bytes = d->smem_per_sm_bytes;
    dv->smem_per_block_optin_bytes = d->smem_per_block_optin_bytes;
    dv->regs_per_sm = d->regs_per_sm;
    dv->max_threads_per_sm = d->max_threads_per_sm;
    dv->driver_version = d->driver_version;
    dv->runtime_version = d->runtime_version;
    dv->host = host;
}

void rk_measurement_row(const struct kernels_kernel *k, int prec, const struct kernels_shape *sh,
                        const struct kernels_result *r, const struct model_cost *cost,
                        struct db_measurement *m)
{
    memset(m, 0, sizeof *m);
    m->kernel = k->name;
    m->family = k->family;
    m->precision = kernels_precision_name(prec);
    m->m = sh->m;
    m->n = sh->n;
    m->k = sh->k;
    m->params = r->params_json;
    for (int d = 0; d < 3; d++) {
        m->grid[d] = (int)r->grid[d];
        m->block[d] = (int)r->block[d];
    }
    m->registers = r->registers;
    m->smem_static = (int)r->smem_static;
    m->smem_dynamic = (int)r->smem_dynamic;
    m->reps = r->reps;
    m->time_min_ns = r->time_min_ns;
    m->time_median_ns = r->time_median_ns;
    m->time_max_ns = r->time_max_ns;
    m->times_ns = r->times_ns;
    m->n_times = r->times_ns ? r->reps : 0;
    m->flops = cost ? cost->flops : NAN;
    m->bytes_dram = cost ? cost->bytes_dram : NAN;
    m->bytes_l2 = cost ? cost->bytes_l2 : NAN;
    m->bytes_l1 = cost ? cost->bytes_l1 : NAN;
    m->bytes_shared = cost ? cost->bytes_shared : NAN;
    m->verified = r->verified ? 1 : 0;
    m->rel_error = r->rel_error;
    m->cache_state = r->warm ? "warm" : "cold";
    m->source = "suite";
    m->launch_index = -1;
    m->correlation_id = -1;
}

int rk_store_device(struct rk_ctx *ctx, const struct rk_gpu *d, int64_t *device_id)
{
    struct db_device dv;
    rk_device_row(d, ctx->host[0] ? ctx->host : NULL, &dv);
    return db_device_upsert(ctx->db, &dv, device_id);
}

int rk_ctx_expand(const struct rk_ctx *ctx, const char *pattern, char **out)
{
    return rk_expand_name(pattern, &ctx->launch, ctx->host[0] ? ctx->host : NULL, (long)getpid(),
                          rk_getenv, NULL, out);
}

int rk_begin_device_capture(struct rk_ctx *ctx, const struct rk_gpu *d, int kind, int64_t *capture)
{
    int64_t device_id = 0;
    int rc = rk_store_device(ctx, d, &device_id);
    if (rc == RK_OK) /* whether other GPUs are busy as this one starts: NVML, if it answers */
        rc = rk_ctx_set_origin(ctx, d->pci_bus_id[0] ? probes_gpus_busy(d->pci_bus_id) : -1);
    if (rc == RK_OK)
        rc = db_capture_begin(ctx->db, device_id, (enum db_capture_kind)kind, ctx->cmdline,
                              RK_VERSION, capture);
    return rc;
}
