/*
 * shared.c - what several subcommands need alike: the database rows that describe the GPU
 * of a kernels/ session and one measured configuration (run, tune), the measured ceilings by
 * name in SI units, and the TSM2 model's GPU built from them (model, tune). Kept here so that each
 * subcommand file stays wiring.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "db.h"
#include "kernels.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

void rk_device_row(const struct kernels_device *d, const char *host, struct db_device *dv)
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
    dv->memory_bytes = (int64_t)d->total_mem;
    dv->smem_per_sm_bytes = (int)d->smem_per_sm;
    dv->smem_per_block_optin_bytes = (int)d->smem_per_block_optin;
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

int rk_begin_device_capture(struct rk_ctx *ctx, const struct kernels_device *d, int kind,
                            int64_t *capture)
{
    struct db_device dv;
    char host[256] = "";
    int64_t device_id = 0;
    int rc;
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    rk_device_row(d, host[0] ? host : NULL, &dv);
    rc = db_device_upsert(ctx->db, &dv, &device_id);
    if (rc == RK_OK)
        rc = db_capture_begin(ctx->db, device_id, (enum db_capture_kind)kind, ctx->cmdline,
                              RK_VERSION, capture);
    return rc;
}

const struct db_ceiling *rk_find_ceiling(const struct db_ceiling *c, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(c[i].name, name) == 0)
            return &c[i];
    return NULL;
}

void rk_tsm2_gpu(const struct db_device *dev, const struct db_ceiling *c, int nc,
                 const struct db_latency_point *pts, int npts, int elem_bytes, struct model_gpu *g,
                 const struct db_ceiling *used[RK_GPU_NUSED])
{
    const int fp64 = elem_bytes == 8;
    used[RK_GPU_COMPUTE] = rk_find_ceiling(c, nc, fp64 ? "peak_fp64_fma" : "peak_fp32_fma");
    used[RK_GPU_DRAM] = rk_find_ceiling(c, nc, "bw_dram_read");
    if (!used[RK_GPU_DRAM])
        used[RK_GPU_DRAM] = rk_find_ceiling(c, nc, "bw_dram_copy");
    used[RK_GPU_MEM_LAT] = rk_find_ceiling(c, nc, "lat_chase_dram");
    used[RK_GPU_COMP_LAT] = rk_find_ceiling(c, nc, fp64 ? "lat_fma_fp64" : "lat_fma_fp32");
    memset(g, 0, sizeof *g);
    g->peak_flops = rk_ceiling_si(used[RK_GPU_COMPUTE]);
    g->bandwidth = rk_ceiling_si(used[RK_GPU_DRAM]);
    g->clock_hz = dev->sm_clock_mhz > 0  ? dev->sm_clock_mhz * 1e6
                  : used[RK_GPU_COMPUTE] ? used[RK_GPU_COMPUTE]->sm_clock_mhz * 1e6
                                         : NAN;
    g->sms = dev->sm_count;
    g->regs_per_sm = dev->regs_per_sm;
    g->smem_per_sm = dev->smem_per_sm_bytes;
    g->max_threads_per_sm = dev->max_threads_per_sm;
    g->mem_latency_cycles = rk_ceiling_si(used[RK_GPU_MEM_LAT]);
    if (!isfinite(g->mem_latency_cycles) && npts > 0) {
        /* no DRAM plateau: the curve's largest footprint is past the L2 */
        used[RK_GPU_MEM_LAT] = NULL;
        g->mem_latency_cycles = pts[npts - 1].cycles;
    }
    g->comp_latency_cycles = rk_ceiling_si(used[RK_GPU_COMP_LAT]);
}

int rk_dram_curve(const struct db_ceiling *c, double *bytes, double *util, int max)
{
    const char *p = c && c->params ? strstr(c->params, "\"points\":[") : NULL;
    int n = 0;
    if (!p || !bytes || !util || max < 2)
        return 0;
    p += strlen("\"points\":[");
    while (*p == '[' && n < max) { /* [bytes,GB/s] pairs, any order */
        char *end;
        const double f = strtod(p + 1, &end);
        if (*end != ',')
            return 0;
        const double gbps = strtod(end + 1, &end);
        if (*end != ']')
            return 0;
        p = end + 1 + (end[1] == ',');
        if (!(isfinite(f) && f > 0 && isfinite(gbps) && gbps > 0))
            continue;
        int j = 0; /* sorted insert; equal byte counts keep the best bandwidth */
        while (j < n && bytes[j] < f)
            j++;
        if (j < n && bytes[j] == f) {
            util[j] = gbps > util[j] ? gbps : util[j];
            continue;
        }
        memmove(bytes + j + 1, bytes + j, (size_t)(n - j) * sizeof *bytes);
        memmove(util + j + 1, util + j, (size_t)(n - j) * sizeof *util);
        bytes[j] = f;
        util[j] = gbps;
        n++;
    }
    if (n < 2)
        return 0;
    for (int i = 1; i < n; i++) /* more bytes in flight never lose bandwidth: running best */
        util[i] = util[i] > util[i - 1] ? util[i] : util[i - 1];
    const double best = util[n - 1];
    for (int i = 0; i < n; i++)
        util[i] /= best;
    util[n - 1] = 1.0;
    return n;
}

double rk_ceiling_si(const struct db_ceiling *c)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {
        {"GB/s", 1e9},     {"TB/s", 1e12},   {"MB/s", 1e6},   {"B/s", 1.0},
        {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"FLOP/s", 1.0}, {"cycles", 1.0},
        {"us", 1e-6},      {"ns", 1e-9},     {"s", 1.0},
    };
    if (!c || !isfinite(c->value) || c->value <= 0 || !c->unit)
        return NAN;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(c->unit, units[i].unit) == 0)
            return c->value * units[i].scale;
    return NAN;
}
