/*
 * gpus.c - the report's section for several GPUs, hosts and ranks (RP_SEC_GPUS): what a
 * node probed GPU by GPU (`roofkit probe --device all`) and MPI ranks merged into one
 * database (`roofkit merge`) hold that one GPU's report has no place for. Each table
 * appears only when its data is there, so a one-GPU database's report has none of them:
 *
 *   captures           every capture with where it ran: host, launcher rank, local rank
 *                      and world size, the other GPUs measured at the same time and the
 *                      other GPUs busy; when that says more than "one GPU of one host"
 *   ceilings-by-gpu    one row per ceiling name (not of a pair), one column per GPU, then
 *                      min / median / max across GPUs; a GPU 5 % or more worse than the
 *                      median flagged (cell marker, CSS class, a line in "Flags"); when 2 or
 *                      more GPUs have ceilings
 *   peer-<name>        per ceiling of GPU pairs (bw_peer_*, lat_peer_chase): source GPU by
 *                      destination GPU, the diagonal "—", the cell's background a colour
 *                      scale (inline style: the page stays script-free)
 *   ranks-<k>          per program profiled as 2 or more ranks: each rank's launches, kernel
 *                      time and share, and the imbalance max / mean rank time
 *
 * Assumes: the GPUs, the names of the pair ceilings and the rank groups come from load.c
 * (rp_data), which gpucharts.c draws from too, so a chart and its table agree. Values are
 * compared in SI units (analysis_unit_si) and shown in the unit of the row's first GPU.
 * "Worse" depends on the ceiling: lower for bandwidth and compute, higher for latency and
 * launch ceilings (rp_lower_is_better).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* A GPU this far or more worse than the median of the GPUs is flagged. */
#define FLAG_FRACTION 0.05
#define FLAG_MARK     "⚠"

/* "GPU-0a1b2c3d": "GPU-" and the first 8 hex digits of device dev's UUID. */
static const char *short_uuid(const struct rp_data *d, int dev, char *buf, size_t len)
{
    const char *u = d->devs[dev].a.dev.uuid ? d->devs[dev].a.dev.uuid : "";
    snprintf(buf, len, "%.*s", strncmp(u, "GPU-", 4) == 0 ? 12 : 8, u);
    return buf;
}

const char *rp_gpu_label(const struct rp_data *d, int dev, char *buf, size_t len)
{
    char u[64];
    if (dev < 0 || dev >= d->ndevs) {
        snprintf(buf, len, "no device");
        return buf;
    }
    const char *host = d->devs[dev].a.dev.host;
    if (host && *host)
        snprintf(buf, len, "%s (host %s)", short_uuid(d, dev, u, sizeof u), host);
    else
        snprintf(buf, len, "%s", short_uuid(d, dev, u, sizeof u));
    return buf;
}

int rp_lower_is_better(const struct db_ceiling *c)
{
    static const char *const time_units[] = {"ns", "us", "ms", "s", "cycles", NULL};
    if (strcmp(c->kind, "latency") == 0 || strcmp(c->kind, "launch") == 0)
        return 1;
    for (int i = 0; time_units[i]; i++)
        if (strcmp(c->unit, time_units[i]) == 0)
            return 1;
    return 0;
}

double rp_ceiling_in(const struct db_ceiling *c, const char *unit)
{
    if (strcmp(c->unit, unit) == 0)
        return isfinite(c->value) ? c->value : NAN;
    double v = analysis_unit_si(c->value, c->unit), one = analysis_unit_si(1.0, unit);
    return isfinite(v) && isfinite(one) && one > 0 ? v / one : NAN;
}

const struct db_ceiling *rp_peer_ceiling(const struct rp_dev *v, const char *name, int64_t peer_id)
{
    for (int i = 0; i < v->a.nceil; i++)
        if (v->a.ceil[i].peer_device_id == peer_id && strcmp(v->a.ceil[i].name, name) == 0)
            return &v->a.ceil[i];
    return NULL;
}

/* The ceiling `name` of device v that is its own (not of a pair), or NULL. */
static const struct db_ceiling *own_ceiling(const struct rp_dev *v, const char *name)
{
    return rp_peer_ceiling(v, name, 0);
}

/* The cell of a number that may be missing. */
static void cell_opt(struct rp_table *t, int v)
{
    if (v >= 0)
        rp_cell_int(t, v);
    else
        rp_cell_str(t, "");
}

/* ----------------------------------------------------------- captures */

/* Does where the captures ran tell more than "one GPU of one host"? Some capture ran under a
 * launcher or beside other GPUs measured or busy, or the captures name 2 or more hosts, or the
 * database holds 2 or more devices. */
static int origin_matters(const struct rp_data *d)
{
    const char *host = NULL;
    if (d->ndevs >= 2)
        return 1;
    for (int i = 0; i < d->ncaps; i++) {
        const struct db_capture *c = &d->caps[i];
        if (c->rank >= 0 || c->gpus_concurrent > 0 || c->gpus_busy > 0)
            return 1;
        if (c->host && host && strcmp(c->host, host) != 0)
            return 1;
        if (c->host)
            host = c->host;
    }
    return 0;
}

static void captures_table(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const c[] = {"capture",
                                    "kind",
                                    "status",
                                    "device",
                                    "GPU",
                                    "host",
                                    "rank",
                                    "local rank",
                                    "world size",
                                    "other GPUs measured at the same time",
                                    "other GPUs busy",
                                    "started",
                                    "ended",
                                    "ceilings",
                                    "measurements",
                                    "command line",
                                    NULL};
    if (!origin_matters(d))
        return;
    struct rp_table *t = rp_tabs_new(ts, "captures", "Captures: where each ran", RP_SEC_GPUS);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "captures");
    for (int k = 0; c[k]; k++)
        rp_table_col(t, c[k]);
    snprintf(t->note, sizeof t->note,
             "Every capture with the host it ran on and, under mpirun or srun, its launcher "
             "rank, local rank and world size. Other GPUs measured at the same time: the GPUs "
             "this roofkit probed beside this one (shared host links and power make bandwidth "
             "ceilings measured at once lower than alone); other GPUs busy: GPUs of the host "
             "running other work when it started. Empty: unknown.");
    for (int i = 0; i < d->ncaps; i++) {
        const struct db_capture *k = &d->caps[i];
        char gpu[128] = "";
        int dev = -1;
        for (int j = 0; j < d->ndevs; j++)
            if (k->device_id && d->devs[j].a.dev.id == k->device_id)
                dev = j;
        if (dev >= 0)
            rp_gpu_label(d, dev, gpu, sizeof gpu);
        rp_cell_int(t, k->id);
        rp_cell_str(t, db_capture_kind_name(k->kind));
        rp_cell_str(t, db_status_name(k->status));
        if (k->device_id)
            rp_cell_int(t, k->device_id);
        else
            rp_cell_str(t, "");
        rp_cell_str(t, gpu);
        rp_cell_str(t, k->host);
        cell_opt(t, k->rank);
        cell_opt(t, k->local_rank);
        cell_opt(t, k->world_size);
        cell_opt(t, k->gpus_concurrent);
        cell_opt(t, k->gpus_busy);
        rp_cell_str(t, k->started_at);
        rp_cell_str(t, k->ended_at);
        rp_cell_int(t, k->n_ceilings);
        rp_cell_int(t, k->n_measurements);
        rp_cell_str(t, k->cmdline);
    }
}

/* ---------------------------------------------------- ceilings across GPUs */

/* The distinct names of the GPUs' own ceilings, in the order the GPUs list them (the first
 * GPU's, then names only later GPUs have). *out malloc'd, strings owned by d. */
static int own_names(const struct rp_data *d, const char ***out, int *n)
{
    int cap = 0, k = 0;
    for (int g = 0; g < d->ngpus; g++)
        cap += d->devs[d->gpus[g]].a.nceil;
    const char **v = malloc((size_t)(cap ? cap : 1) * sizeof *v);
    if (!v)
        return RK_ENOMEM;
    for (int g = 0; g < d->ngpus; g++) {
        const struct rp_dev *dv = &d->devs[d->gpus[g]];
        for (int j = 0; j < dv->a.nceil; j++) {
            const struct db_ceiling *c = &dv->a.ceil[j];
            int seen = c->peer_device_id != 0;
            for (int i = 0; i < k && !seen; i++)
                seen = strcmp(v[i], c->name) == 0;
            if (!seen)
                v[k++] = c->name;
        }
    }
    *out = v;
    *n = k;
    return RK_OK;
}

/* One ceiling across the GPUs: each GPU's value in `unit` (NaN: none), min, median, max. */
struct across {
    const struct db_ceiling *first; /* the first GPU's ceiling: kind and unit of the row */
    double *v;                      /* d->ngpus values */
    double min, median, max;
    int n, lower; /* GPUs with a value; lower is better */
};

static void across_fill(const struct rp_data *d, const char *name, struct across *a, double *tmp)
{
    a->first = NULL;
    a->n = 0;
    for (int g = 0; g < d->ngpus; g++) {
        const struct db_ceiling *c = own_ceiling(&d->devs[d->gpus[g]], name);
        a->v[g] = NAN;
        if (!c)
            continue;
        if (!a->first)
            a->first = c;
        a->v[g] = rp_ceiling_in(c, a->first->unit);
        if (isfinite(a->v[g]))
            tmp[a->n++] = a->v[g];
    }
    a->lower = a->first ? rp_lower_is_better(a->first) : 0;
    a->min = a->median = a->max = NAN;
    if (a->n) {
        a->median = model_median(tmp, (size_t)a->n); /* sorts tmp */
        a->min = tmp[0];
        a->max = tmp[a->n - 1];
    }
}

/* How much worse than the median value v is, as a fraction (> 0: worse). */
static double worse_by(const struct across *a, double v)
{
    if (!isfinite(v) || !(a->median > 0))
        return NAN;
    return a->lower ? v / a->median - 1.0 : 1.0 - v / a->median;
}

static void ceilings_by_gpu_table(const struct rp_data *d, struct rp_tabs *ts)
{
    const char **names = NULL;
    double *vals = NULL, *tmp = NULL;
    char col[400], lbl[128], line[512], h[32], m[32];
    int nnames = 0, nflags = 0;
    if (d->ngpus < 2)
        return;
    struct rp_table *t = rp_tabs_new(ts, "ceilings-by-gpu", "Ceilings across GPUs", RP_SEC_GPUS);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "ceilings-by-gpu");
    snprintf(t->items_title, sizeof t->items_title, "Flags");
    if (own_names(d, &names, &nnames) != RK_OK ||
        !(vals = malloc((size_t)d->ngpus * sizeof *vals)) ||
        !(tmp = malloc((size_t)d->ngpus * sizeof *tmp))) {
        t->oom = 1;
        goto out;
    }
    rp_table_col(t, "ceiling");
    rp_table_col(t, "kind");
    rp_table_col(t, "unit");
    rp_table_col(t, "better");
    for (int g = 0; g < d->ngpus; g++) {
        const struct db_device *v = &d->devs[d->gpus[g]].a.dev;
        snprintf(col, sizeof col, "#%lld %s %s", (long long)v->id, v->name,
                 rp_gpu_label(d, d->gpus[g], lbl, sizeof lbl));
        rp_table_col(t, col);
    }
    rp_table_col(t, "min");
    rp_table_col(t, "median");
    rp_table_col(t, "max");
    rp_table_col(t, "max / min");
    rp_table_col(t, "flagged");
    for (int i = 0; i < nnames; i++) {
        struct across a = {NULL, vals, NAN, NAN, NAN, 0, 0};
        struct rp_buf flagged = {0};
        across_fill(d, names[i], &a, tmp);
        if (!a.first)
            continue;
        rp_cell_str(t, names[i]);
        rp_cell_str(t, a.first->kind);
        rp_cell_str(t, a.first->unit);
        rp_cell_str(t, a.lower ? "lower" : "higher");
        for (int g = 0; g < d->ngpus; g++) {
            double w = worse_by(&a, a.v[g]);
            if (!(a.n >= 2 && w >= FLAG_FRACTION - 1e-12)) {
                rp_cell_num(t, a.v[g]);
                continue;
            }
            /* flagged: the number and the mark for people, the number alone in the CSV */
            snprintf(col, sizeof col, "%s %s", rp_fmt_num(h, a.v[g]), FLAG_MARK);
            rp_cell_two(t, col, rp_fmt_exact(m, a.v[g]));
            rp_cell_attr(t, "flag", NULL);
            rp_gpu_label(d, d->gpus[g], lbl, sizeof lbl);
            snprintf(line, sizeof line, "%s %s %.1f %% %s the median (%s against %s %s)%s", lbl,
                     names[i], 100.0 * w, a.lower ? "above" : "below", rp_fmt_num(h, a.v[g]),
                     rp_fmt_num(m, a.median), a.first->unit, a.lower ? ": higher is worse" : "");
            rp_table_item(t, line);
            rp_buf_printf(&flagged, "%s%s %.1f %% %s", flagged.len ? "; " : "", lbl, 100.0 * w,
                          a.lower ? "above" : "below");
            nflags++;
        }
        rp_cell_num(t, a.min);
        rp_cell_num(t, a.median);
        rp_cell_num(t, a.max);
        rp_cell_num(t, a.min > 0 ? a.max / a.min : NAN);
        rp_cell_str(t, flagged.p ? flagged.p : "");
        if (flagged.oom)
            t->oom = 1;
        rp_buf_free(&flagged);
    }
    snprintf(t->note, sizeof t->note,
             "Each GPU's current ceilings side by side (the newest probe of each), in the unit "
             "of the row; min, median and max across the %d GPUs. " FLAG_MARK
             " marks a GPU 5 %% or more worse than the median in the direction that matters: "
             "below it for bandwidth and compute (higher is better), above it for latency and "
             "launch ceilings (ns, us, cycles: lower is better). %s",
             d->ngpus,
             nflags ? "Each flag is listed above the table."
                    : "No GPU is 5 % or more worse than the median on any ceiling.");
out:
    free((void *)names);
    free(vals);
    free(tmp);
}

/* ------------------------------------------------------------ GPU pairs */

/* The background of a matrix cell: t in [0, 1] from light (0) to dark blue (1), the text
 * white on the dark half. */
static void scale_style(double t, char *buf, size_t len)
{
    static const int lo[3] = {0xf7, 0xfb, 0xff}, hi[3] = {0x08, 0x51, 0x9c};
    int c[3];
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(lo[k] + (hi[k] - lo[k]) * t);
    snprintf(buf, len, "background:#%02x%02x%02x%s", c[0], c[1], c[2],
             t > 0.55 ? ";color:#fff" : "");
}

/* The label of GPU i of the pairs (an index into peer_devs). */
static const char *pair_label(const struct rp_data *d, int i, char *buf, size_t len)
{
    return rp_gpu_label(d, d->peer_devs[i], buf, len);
}

const struct db_ceiling *rp_pair_ceiling(const struct rp_data *d, const char *name, int a, int b)
{
    if (a == b)
        return NULL;
    return rp_peer_ceiling(&d->devs[d->peer_devs[a]], name, d->devs[d->peer_devs[b]].a.dev.id);
}

static void peer_table(const struct rp_data *d, const char *name, struct rp_tabs *ts)
{
    const int n = d->npeer_devs;
    const struct db_ceiling *first = NULL;
    double lo = INFINITY, hi = -INFINITY;
    int at_lo[2] = {0, 0}, at_hi[2] = {0, 0}, ncells = 0;
    char id[96], title[160], lbl[128], lbl2[128], style[64], h[32];

    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const struct db_ceiling *c = rp_pair_ceiling(d, name, a, b);
            if (c && !first)
                first = c;
            double v = c ? rp_ceiling_in(c, first->unit) : NAN;
            if (!isfinite(v))
                continue;
            if (v < lo) {
                lo = v;
                at_lo[0] = a;
                at_lo[1] = b;
            }
            if (v > hi) {
                hi = v;
                at_hi[0] = a;
                at_hi[1] = b;
            }
            ncells++;
        }
    if (!first)
        return;
    const int lower = rp_lower_is_better(first);
    snprintf(id, sizeof id, "peer-%s", name);
    rp_file_safe(id);
    snprintf(title, sizeof title, "GPU pairs: %s [%s]", name, first->unit);
    struct rp_table *t = rp_tabs_new(ts, id, title, RP_SEC_GPUS);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "%.63s", id);
    rp_table_col(t, "source \\ destination");
    for (int b = 0; b < n; b++)
        rp_table_col(t, pair_label(d, b, lbl, sizeof lbl));
    for (int a = 0; a < n; a++) {
        rp_cell_str(t, pair_label(d, a, lbl, sizeof lbl));
        for (int b = 0; b < n; b++) {
            const struct db_ceiling *c = rp_pair_ceiling(d, name, a, b);
            double v = c ? rp_ceiling_in(c, first->unit) : NAN;
            if (a == b) {
                rp_cell_two(t, "—", "");
                rp_cell_attr(t, "diag", NULL);
                continue;
            }
            rp_cell_num(t, v);
            if (!isfinite(v))
                continue;
            double s = hi > lo ? (v - lo) / (hi - lo) : 1.0;
            scale_style(lower ? 1.0 - s : s, style, sizeof style);
            rp_cell_attr(t, "heat", style);
        }
    }
    const int *best = lower ? at_lo : at_hi, *worst = lower ? at_hi : at_lo;
    int o =
        snprintf(t->note, sizeof t->note,
                 "%s from the GPU of the row (whose probe measured it) to the GPU of the "
                 "column, %d pair%s; empty: not measured. The darker the cell, the better "
                 "(%s is better). Best: %s to %s, %s %s",
                 name, ncells, ncells == 1 ? "" : "s", lower ? "lower" : "higher",
                 pair_label(d, best[0], lbl, sizeof lbl), pair_label(d, best[1], lbl2, sizeof lbl2),
                 rp_fmt_num(h, lower ? lo : hi), first->unit);
    if (o > 0 && (size_t)o < sizeof t->note)
        snprintf(t->note + o, sizeof t->note - (size_t)o, "; worst: %s to %s, %s %s.",
                 pair_label(d, worst[0], lbl, sizeof lbl),
                 pair_label(d, worst[1], lbl2, sizeof lbl2), rp_fmt_num(h, lower ? hi : lo),
                 first->unit);
}

/* ---------------------------------------------------------------- ranks */

/* Appends device dev's short UUID to buf (o: its length so far), comma-separated. */
static size_t add_gpu(const struct rp_data *d, int dev, char *buf, size_t len, size_t o)
{
    char u[64];
    int w = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", short_uuid(d, dev, u, sizeof u));
    return w < 0 || (size_t)w >= len - o ? o : o + (size_t)w;
}

/* The GPUs rank r's launches ran on (its capture's when it has none) into buf. */
static void rank_gpus(const struct rp_data *d, const struct rp_rank *r, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int j = 0; j < d->ndevs; j++) {
        int used = 0;
        for (int i = 0; i < d->nrows && !used; i++)
            used = d->meas[i].dev == j && d->rows[i].m.capture_id == r->cap->id;
        if (used)
            o = add_gpu(d, j, buf, len, o);
    }
    for (int j = 0; j < d->ndevs && o == 0; j++)
        if (r->cap->device_id && d->devs[j].a.dev.id == r->cap->device_id)
            o = add_gpu(d, j, buf, len, o);
}

static void ranks_table(const struct rp_data *d, int k, struct rp_tabs *ts)
{
    static const char *const c[] = {
        "rank",     "local rank",       "host",      "GPU",         "capture",
        "launches", "kernel time [ms]", "share [%]", "time / mean", NULL};
    const struct rp_rank_group *g = &d->groups[k];
    char id[96], title[160], ws[32] = "unknown";
    int slowest = 0;
    snprintf(id, sizeof id, "ranks-%d", k + 1);
    snprintf(title, sizeof title, "Kernel time per rank: %.100s%s", g->program,
             strlen(g->program) > 100 ? "..." : "");
    struct rp_table *t = rp_tabs_new(ts, id, title, RP_SEC_GPUS);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "%.63s", id);
    for (int j = 0; c[j]; j++)
        rp_table_col(t, c[j]);
    for (int i = 0; i < g->nrank; i++) {
        const struct rp_rank *r = &g->rank[i];
        char gpus[256];
        rank_gpus(d, r, gpus, sizeof gpus);
        rp_cell_int(t, r->cap->rank);
        cell_opt(t, r->cap->local_rank);
        rp_cell_str(t, r->cap->host);
        rp_cell_str(t, gpus);
        rp_cell_int(t, r->cap->id);
        rp_cell_int(t, r->launches);
        rp_cell_num(t, r->time_ns * 1e-6);
        rp_cell_num(t, g->total_ns > 0 ? 100.0 * r->time_ns / g->total_ns : NAN);
        rp_cell_num(t, g->mean_ns > 0 ? r->time_ns / g->mean_ns : NAN);
        if (r->time_ns > g->rank[slowest].time_ns)
            slowest = i;
    }
    if (g->world_size > 0)
        snprintf(ws, sizeof ws, "%d", g->world_size);
    snprintf(t->note, sizeof t->note,
             "%d ranks (world size %s) of one profiled program: each rank's launches and its "
             "kernel time, the sum of their median times. Imbalance (max / mean rank time): "
             "%.3f, the slowest rank %d (%.4g ms against a mean of %.4g ms); 1 is perfect "
             "balance.%s",
             g->nrank, ws, g->mean_ns > 0 ? g->max_ns / g->mean_ns : NAN,
             g->rank[slowest].cap->rank, g->max_ns * 1e-6, g->mean_ns * 1e-6,
             g->repeated ? " A rank appears in more than one capture: the program was profiled "
                           "more than once with the same command; each capture is one row."
                         : "");
}

void rp_gpu_tables(const struct rp_data *d, struct rp_tabs *ts)
{
    captures_table(d, ts);
    ceilings_by_gpu_table(d, ts);
    for (int i = 0; i < d->npeer_names; i++)
        peer_table(d, d->peer_names[i], ts);
    for (int k = 0; k < d->ngroups; k++)
        ranks_table(d, k, ts);
}
