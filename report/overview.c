/*
 * overview.c - what the report shows first, under each device's roofline: the kernels that
 * take the most time on that device, as a performance engineer reads `nsys stats` before
 * anything else. Computed once in rp_load() (rp_dev.top), so that the table and the rank
 * numbers on the roofline agree.
 *
 * A kernel here is the launches of one kernel name with one shape, precision and parameters on
 * one device: a profiled program's launches of a kernel (they carry no shape), or one
 * configuration of a suite kernel (measured once, or again by a later run). Over its launches:
 *   time       the sum of their median times; share = time / the device's time (every charted
 *              measurement of the device, that is verified or not checked, with a time)
 *   % of roof  time-weighted: 100 x sum(flops / roof) / sum(time), each launch's roof and flops
 *              from analysis_place() (the roof its roofline prediction uses)
 *   bound      analysis_place()'s bound of the most time
 *   predicted  the sum of the device's best model's predicted times (the model with the lowest
 *              median absolute percentage error on the device's charted rows), over the launches
 *              it predicted; error = (predicted - measured) / measured over the same launches
 * The numbers come from the stored rows and predictions unchanged, so CI recomputes them from
 * the database (tests/report/check_report.py C6).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

enum { TOP_MAX = 10 };

const char *rp_row_anchor(const struct rp_meas *x, char *buf, size_t len)
{
    snprintf(buf, len, "m-%lld", (long long)x->row->m.id);
    return buf;
}

/* The model whose predictions on device dev have the lowest median APE, or NULL. Rows a model
 * could not be applied to (a reason, no time) are not predictions. */
static const char *best_model(const struct rp_data *d, int dev, double *p, double *m)
{
    const char *best = NULL;
    double best_v = INFINITY;
    for (int j = 0; j < d->nmodels; j++) {
        size_t n = 0;
        double v;
        for (int i = 0; i < d->nrows; i++) {
            const struct db_prediction *pr;
            if (d->meas[i].dev != dev || !d->meas[i].charted ||
                !(pr = rp_prediction(&d->meas[i], d->models[j])) ||
                !isfinite(pr->predicted_time_ns))
                continue;
            p[n] = pr->predicted_time_ns;
            m[n++] = d->rows[i].m.time_median_ns;
        }
        if (n && model_median_ape(p, m, n, &v) == RK_OK && v < best_v) {
            best_v = v;
            best = d->models[j];
        }
    }
    return best;
}

static int strcmp0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* Orders a device's charted rows by kernel, precision, shape and parameters. */
static int cmp_kernel(const void *pa, const void *pb)
{
    const struct db_measurement *x = &(*(const struct rp_meas *const *)pa)->row->m;
    const struct db_measurement *y = &(*(const struct rp_meas *const *)pb)->row->m;
    int c = strcmp0(x->kernel, y->kernel);
    if (!c)
        c = strcmp0(x->precision, y->precision);
    if (!c && x->m != y->m)
        c = x->m < y->m ? -1 : 1;
    if (!c && x->n != y->n)
        c = x->n < y->n ? -1 : 1;
    if (!c && x->k != y->k)
        c = x->k < y->k ? -1 : 1;
    if (!c)
        c = strcmp0(x->params, y->params);
    return c;
}

static int cmp_top(const void *pa, const void *pb)
{
    const struct rp_top *a = pa, *b = pb;
    if (a->time_s != b->time_s)
        return a->time_s > b->time_s ? -1 : 1;
    return (a->rep->row->m.id > b->rep->row->m.id) - (a->rep->row->m.id < b->rep->row->m.id);
}

/* One kernel from its launches v[0..n). */
static void sum_kernel(const struct rp_meas *const *v, int n, const char *model, struct rp_top *t)
{
    double roof_t = 0, roof_w = 0, bt[2] = {0, 0};
    memset(t, 0, sizeof *t);
    t->rep = v[0];
    t->launches = n;
    for (int i = 0; i < n; i++) {
        const struct rp_meas *x = v[i];
        const double ts = x->pt.time_s;
        const struct db_prediction *p = model ? rp_prediction(x, model) : NULL;
        if (ts > t->rep->pt.time_s)
            t->rep = x;
        t->time_s += ts;
        if (isfinite(x->pt.pct_roof)) {
            roof_t += x->pt.pct_roof * ts;
            roof_w += ts;
        }
        if (x->pt.bound)
            bt[strcmp(x->pt.bound, "compute") == 0] += ts;
        if (p && isfinite(p->predicted_time_ns)) {
            t->npred++;
            t->pred_s += p->predicted_time_ns * 1e-9;
            t->pred_meas_s += ts;
        }
    }
    t->pct_roof = roof_w > 0 ? roof_t / roof_w : NAN;
    t->bound = bt[0] + bt[1] > 0 ? (bt[1] >= bt[0] ? "compute" : "dram") : NULL;
}

/* Device dev's kernels: the TOP_MAX that take the most time into v->top. */
static int device_top(struct rp_data *d, int dev, const struct rp_meas **v, double *p, double *m)
{
    struct rp_dev *dv = &d->devs[dev];
    struct rp_top *all = NULL;
    int n = 0, nk = 0;
    dv->model = best_model(d, dev, p, m);
    for (int i = 0; i < d->nrows; i++)
        if (d->meas[i].dev == dev && d->meas[i].charted)
            v[n++] = &d->meas[i];
    if (n == 0)
        return RK_OK;
    qsort((void *)v, (size_t)n, sizeof *v, cmp_kernel);
    if (!(all = malloc((size_t)n * sizeof *all)))
        return rk_error(RK_ENOMEM, "out of memory summing %d measurements", n);
    for (int i = 0, e; i < n; i = e) {
        for (e = i + 1; e < n && cmp_kernel(&v[i], &v[e]) == 0; e++)
            ;
        sum_kernel(v + i, e - i, dv->model, &all[nk]);
        dv->time_s += all[nk++].time_s;
    }
    qsort(all, (size_t)nk, sizeof *all, cmp_top);
    dv->nkernels = nk;
    dv->ntop = nk < TOP_MAX ? nk : TOP_MAX;
    for (int k = 0; k < nk; k++)
        all[k].share_pct = dv->time_s > 0 ? 100.0 * all[k].time_s / dv->time_s : NAN;
    for (int k = 0; k < dv->ntop; k++)
        ((struct rp_meas *)all[k].rep)->top = k + 1;
    if ((dv->top = malloc((size_t)dv->ntop * sizeof *all))) /* the ten, not all */
        memcpy(dv->top, all, (size_t)dv->ntop * sizeof *all);
    free(all);
    return dv->top ? RK_OK : rk_error(RK_ENOMEM, "out of memory summing %d measurements", n);
}

int rp_overview_load(struct rp_data *d)
{
    const struct rp_meas **v = NULL;
    double *p = NULL, *m = NULL;
    int rc = RK_OK;
    if (d->nrows == 0)
        return RK_OK;
    v = malloc((size_t)d->nrows * sizeof *v);
    p = malloc((size_t)d->nrows * sizeof *p);
    m = malloc((size_t)d->nrows * sizeof *m);
    if (!v || !p || !m)
        rc = rk_error(RK_ENOMEM, "out of memory summing %d measurements", d->nrows);
    for (int i = 0; i < d->ndevs && rc == RK_OK; i++)
        rc = device_top(d, i, v, p, m);
    free((void *)v);
    free(p);
    free(m);
    return rc;
}

/* ------------------------------------------------------------------- table */

/* "4096×8×4096 t1=128 t2=8 t3=4" for a shape, "torch_mix.py, grid 1024x1x1, block 128x1x1" for
 * a profiled launch. */
void rp_shape_text(const struct rp_data *d, const struct rp_meas *x, char *buf, size_t len)
{
    const struct db_measurement *m = &x->row->m;
    if (m->m > 0 || m->n > 0 || m->k > 0) {
        int o =
            snprintf(buf, len, "%lld×%lld×%lld", (long long)m->m, (long long)m->n, (long long)m->k);
        size_t k = o > 0 && (size_t)o < len ? (size_t)o : 0;
        if (k && m->params && *m->params && k + 1 < len)
            buf[k++] = ' ';
        for (const char *s = m->params; k && s && *s && k + 1 < len; s++) /* t1=128 t2=8 */
            if (!strchr("{}\" ", *s))
                buf[k++] = *s == ':' ? '=' : *s == ',' ? ' ' : *s;
        if (k)
            buf[k] = '\0';
        return;
    }
    char prog[96];
    rp_program_name(rp_capture_cmdline(d, m->capture_id), prog, sizeof prog);
    snprintf(buf, len, "%s, grid %dx%dx%d, block %dx%dx%d", prog, m->grid[0], m->grid[1],
             m->grid[2], m->block[0], m->block[1], m->block[2]);
}

static void device_table(const struct rp_data *d, int dev, struct rp_tabs *ts)
{
    const struct rp_dev *v = &d->devs[dev];
    char id[64], title[200], lbl[300], col[96], anchor[32];
    snprintf(id, sizeof id, "top-kernels-d%lld", (long long)v->a.dev.id);
    snprintf(title, sizeof title, "Kernels that take the most time on %s",
             rp_dev_label(d, dev, lbl, sizeof lbl));
    struct rp_table *t = rp_tabs_new(ts, id, title, RP_SEC_OVERVIEW);
    if (!t)
        return;
    snprintf(t->family, sizeof t->family, "d%lld", (long long)v->a.dev.id);
    static const char *const c[] = {"#",         "kernel",    "shape or launch", "pipe", "launches",
                                    "time [µs]", "share [%]", "% of roof",       "bound"};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++)
        rp_table_col(t, c[k]);
    snprintf(col, sizeof col, "predicted [µs] (%s)", v->model ? v->model : "no model");
    rp_table_col(t, col);
    rp_table_col(t, "error [%]");
    rp_table_col(t, "measurement");
    if (v->ntop == 0) {
        snprintf(t->note, sizeof t->note,
                 "No measurement on this device passed verification with a time: run 'roofkit "
                 "run' or 'roofkit profile -- PROGRAM'.");
        return;
    }
    double shown = 0;
    for (int k = 0; k < v->ntop; k++)
        shown += v->top[k].time_s;
    snprintf(t->note, sizeof t->note,
             "The %d of %d kernels (one name, shape, precision and parameters; a profiled "
             "kernel's launches together) that take the most time: %.1f %% of the %.6g ms that "
             "the %d measurements on this device take. Time: the sum of median times; %% of "
             "roof: time-weighted, under the roof of each launch's pipe (numbers on the roofline "
             "above); predicted: the %s model's times (the lowest median error on this device) "
             "over the launches it predicts, error = (predicted - measured) / measured. A "
             "kernel links to its longest launch's row.",
             v->ntop, v->nkernels, v->time_s > 0 ? 100.0 * shown / v->time_s : 0.0, v->time_s * 1e3,
             v->nmeas, v->model ? v->model : "(no)");
    for (int k = 0; k < v->ntop; k++) {
        const struct rp_top *x = &v->top[k];
        const struct db_measurement *m = &x->rep->row->m;
        char name[64], shape[320], pipe[48];
        rp_cell_int(t, k + 1);
        if (m->family || !m->source || strcmp(m->source, "profile"))
            snprintf(name, sizeof name, "%s", m->kernel ? m->kernel : "?");
        else
            rp_short_kernel_name(m->kernel ? m->kernel : "?", name, sizeof name);
        rp_cell_str(t, name);
        rp_cell_link(t, rp_row_anchor(x->rep, anchor, sizeof anchor));
        rp_shape_text(d, x->rep, shape, sizeof shape);
        rp_cell_str(t, shape);
        rp_cell_str(t, rp_pipe_name(x->rep, pipe, sizeof pipe));
        rp_cell_int(t, x->launches);
        rp_cell_num(t, x->time_s * 1e6);
        rp_cell_num(t, x->share_pct);
        rp_cell_num(t, x->pct_roof);
        rp_cell_str(t, x->bound ? x->bound : "");
        rp_cell_num(t, x->npred ? x->pred_s * 1e6 : NAN);
        rp_cell_num(t, x->npred ? 100.0 * model_rel_error(x->pred_s, x->pred_meas_s) : NAN);
        rp_cell_int(t, m->id);
    }
}

void rp_overview_tables(const struct rp_data *d, struct rp_tabs *ts)
{
    for (int i = 0; i < d->ndevs; i++)
        device_table(d, i, ts);
}
