/*
 * energy.c - the report's energy section (RP_SEC_ENERGY): each device's energy roofline, the
 * energy of each measurement beside its time, the energy spans of profiled programs, and which
 * of a TSM2/ISM2 kernel and its cuBLAS reference costs fewer joules for the same product.
 *
 * The energy roofline is Choi, Bedard, Fowler and Vuduc's ("A roofline model of energy", IPDPS
 * 2013): with E = W eps_flop + Q eps_mem + P0 T and T = max(W / F, Q / B) (the time roofline),
 * the energy efficiency at intensity I = W / Q is
 *
 *     W / E = 1 / (eps_flop + eps_mem / I + P0 max(1 / F, 1 / (I B)))      [FLOP/J]
 *
 * (their "arch line"). Under a power cap P_cap the power W eps_flop / T + Q eps_mem / T + P0 may
 * not exceed P_cap, so T >= (W eps_flop + Q eps_mem) / (P_cap - P0): the capped line adds that
 * bound to the max. The constants are the device's energy ceilings (analysis_energy_of:
 * energy_flop_<op>, energy_byte_<level>, energy_static); a DRAM byte costs the DRAM's and the
 * L2's energy per byte (the energy probe's DRAM sweep counts its bytes at both levels); F is
 * the compute ceiling of the precision on the CUDA cores and B the DRAM bandwidth by the
 * ceiling policy; P_cap the ceiling power_limit [W] when the database has one (NVML's enforced
 * power limit). Points: measurements with an energy reading, their roofline point's flops
 * (analysis_place) over their energy, at their DRAM intensity.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "internal.h"

#define LINE_POINTS 160 /* intensities sampled for the lines, log-spaced */
#define I_LO        0.01
#define I_HI        1000.0

/* A measurement with an energy reading of one launch. */
static int has_energy(const struct rp_meas *x)
{
    const struct db_measurement *m = &x->row->m;
    return m->energy_launches > 0 && isfinite(m->energy_j) && m->energy_j > 0;
}

/* Its roofline point's efficiency [GFLOP/J]; NaN when its flops are unknown. */
static double gflop_per_j(const struct rp_meas *x)
{
    return has_energy(x) && x->pt.flops > 0 ? x->pt.flops / x->row->m.energy_j * 1e-9 : NAN;
}

/* The power cap of device v [W], or NaN. */
static double power_cap(const struct rp_dev *v)
{
    const struct db_ceiling *c = analysis_find_ceiling(&v->a, "power_limit");
    return c && c->unit && strcmp(c->unit, "W") == 0 ? c->value : NAN;
}

/* The arch line at intensity i [GFLOP/J] (the header's formula); cap NaN: uncapped. */
static double arch(double eps_flop, double eps_mem, double p0, double f, double b, double cap,
                   double i)
{
    double dyn = eps_flop + eps_mem / i;
    double t = fmax(1.0 / f, 1.0 / (i * b));
    if (!isnan(cap)) {
        if (!(cap > p0))
            return NAN;
        t = fmax(t, dyn / (cap - p0));
    }
    return 1e-9 / (dyn + p0 * t);
}

/* The prediction of x that carries an energy: its device's best model's, else the first. */
static const struct db_prediction *energy_prediction(const struct rp_data *d,
                                                     const struct rp_meas *x)
{
    const struct db_prediction *best = NULL;
    const char *model = x->dev >= 0 ? d->devs[x->dev].model : NULL;
    for (int i = 0; i < x->row->n_predictions; i++) {
        const struct db_prediction *p = &x->row->predictions[i];
        if (!(p->predicted_energy_j > 0))
            continue;
        if (model && strcmp(p->model, model) == 0)
            return p;
        if (!best)
            best = p;
    }
    return best;
}

static void kernels_table(const struct rp_data *d, struct rp_tabs *ts)
{
    struct rp_table *t =
        rp_tabs_new(ts, "energy-measurements", "Energy per launch beside time", RP_SEC_ENERGY);
    char buf[400], anchor[32];
    if (!t)
        return;
    snprintf(t->note, sizeof t->note,
             "Each measurement with an energy reading: NVML's energy counter read over a batch "
             "of back-to-back launches (energy launches), divided by them. GFLOP/J: the useful "
             "flops (2mnk for a GEMM; a profiled kernel's counted flops) over the energy of one "
             "launch (the energy roofline's points use the roofline point's flops instead). "
             "Predicted: the energy model (docs/model.md \"Energy\") at the "
             "prediction's time, from the device's best model when it predicted one; error = "
             "(predicted - measured) / measured.");
    static const char *const cols[] = {
        "kernel",       "device",    "shape",       "precision",       "median time [us]",
        "J per launch", "average W", "GFLOP/J",     "energy launches", "SM clock [MHz]",
        "predicted J",  "error [%]", "energy model"};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        rp_table_col(t, cols[c]);
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        const struct db_measurement *m = &x->row->m;
        if (!has_energy(x))
            continue;
        const struct db_prediction *p = energy_prediction(d, x);
        rp_cell_str(t, m->kernel);
        rp_cell_link(t, rp_row_anchor(x, anchor, sizeof anchor)); /* its row in its family's */
        rp_cell_str(t, x->dev >= 0 ? rp_dev_label(d, x->dev, buf, sizeof buf) : "");
        rp_shape_text(d, x, buf, sizeof buf);
        rp_cell_str(t, buf);
        rp_cell_str(t, m->precision ? m->precision : "");
        rp_cell_num(t, m->time_median_ns * 1e-3);
        rp_cell_num(t, m->energy_j);
        rp_cell_num(t, m->power_w);
        rp_cell_num(t, (isfinite(x->pt.flops_useful) ? x->pt.flops_useful * 1e-9 / m->energy_j
                                                     : gflop_per_j(x)));
        rp_cell_int(t, (long long)m->energy_launches);
        rp_cell_num(t, m->sm_clock_mhz);
        rp_cell_num(t, p ? p->predicted_energy_j : NAN);
        rp_cell_num(t, p ? 100.0 * (p->predicted_energy_j - m->energy_j) / m->energy_j : NAN);
        rp_cell_str(t, p ? p->model : "");
    }
    if (t->nrows == 0)
        snprintf(t->note + strlen(t->note), sizeof t->note - strlen(t->note),
                 " No measurement in the selection has an energy reading.");
}

static void spans_table(const struct rp_data *d, struct rp_tabs *ts)
{
    char buf[300];
    if (d->nspans == 0)
        return;
    struct rp_table *t = rp_tabs_new(ts, "energy-spans",
                                     "Energy of profiled programs, kernels "
                                     "and NVTX ranges",
                                     RP_SEC_ENERGY);
    if (!t)
        return;
    snprintf(t->note, sizeof t->note,
             "From 'roofkit profile --energy' (docs/metrics.md \"Energy in profile\"). program: "
             "the GPU's energy counter from the program's start to its end, all of it (CUDA's "
             "start, host work, idle GPU). kernel: NVML's ~100 ms counter windows apportioned to "
             "the kernel's launches by GPU time (idle power for the rest of each window), kept "
             "only when its launches cover 3 windows' worth or more. nvtx: the same for the "
             "kernels launched inside the range. The kernels' sum is below the program's by the "
             "idle and host time.");
    static const char *const cols[] = {"capture",  "program",     "device",   "scope",
                                       "name",     "energy [J]",  "time [s]", "average W",
                                       "launches", "J per launch"};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        rp_table_col(t, cols[c]);
    for (int i = 0; i < d->nspans; i++) {
        const struct db_energy_span *s = &d->spans[i];
        int dev = -1;
        for (int k = 0; k < d->ndevs; k++)
            if (d->devs[k].a.dev.id == s->device_id)
                dev = k;
        rp_cell_int(t, (long long)s->capture_id);
        rp_program_name(rp_capture_cmdline(d, s->capture_id), buf, sizeof buf);
        rp_cell_str(t, buf);
        rp_cell_str(t, dev >= 0 ? rp_dev_label(d, dev, buf, sizeof buf) : "");
        rp_cell_str(t, s->scope);
        rp_cell_str(t, s->name);
        rp_cell_num(t, s->energy_j);
        rp_cell_num(t, s->time_ns * 1e-9);
        rp_cell_num(t, s->power_w);
        if (s->launches >= 0)
            rp_cell_int(t, (long long)s->launches);
        else
            rp_cell_str(t, "");
        rp_cell_num(t, s->launches > 0 ? s->energy_j / (double)s->launches : NAN);
    }
}

/* TSM2/ISM2 kernels against their cuBLAS reference (the faster call of the same run). */
static void cublas_table(const struct rp_data *d, struct rp_tabs *ts)
{
    struct rp_table *t = rp_tabs_new(
        ts, "energy-cublas", "TSM2/ISM2 against cuBLAS: which costs fewer joules", RP_SEC_ENERGY);
    char buf[400];
    int fewer = 0;
    if (!t)
        return;
    static const char *const cols[] = {
        "device",       "precision",           "shape m x n x k", "kernel",
        "kernel J",     "cuBLAS reference",    "cuBLAS J",        "kernel / cuBLAS J",
        "fewer joules", "kernel / cuBLAS time"};
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
        rp_table_col(t, cols[c]);
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        const char *fam = rp_family(x);
        if (!has_energy(x) || !x->charted || (strncmp(fam, "tsm2", 4) && strncmp(fam, "ism2", 4)))
            continue;
        const struct rp_meas *c = rp_cublas_at(d, x);
        if (!c || !has_energy(c))
            continue;
        double r = x->row->m.energy_j / c->row->m.energy_j;
        fewer += r < 1;
        rp_cell_str(t, x->dev >= 0 ? rp_dev_label(d, x->dev, buf, sizeof buf) : "");
        rp_cell_str(t, x->row->m.precision ? x->row->m.precision : "");
        snprintf(buf, sizeof buf, "%lld x %lld x %lld", (long long)x->row->m.m,
                 (long long)x->row->m.n, (long long)x->row->m.k);
        rp_cell_str(t, buf);
        rp_cell_str(t, x->row->m.kernel);
        rp_cell_num(t, x->row->m.energy_j);
        rp_cell_str(t, c->row->m.kernel);
        rp_cell_num(t, c->row->m.energy_j);
        rp_cell_num(t, r);
        rp_cell_str(t, r < 1 ? x->row->m.kernel : r > 1 ? "cuBLAS" : "same");
        rp_cell_num(t, x->row->m.time_median_ns / c->row->m.time_median_ns);
    }
    snprintf(t->note, sizeof t->note,
             "Each TSM2/ISM2 measurement with an energy reading beside its cuBLAS reference "
             "(the faster cuBLAS call of the same run, precision, shape and cache state, "
             "analysis_reference_pick) when that has one too: the energy of one launch of "
             "each, and their ratio (below 1: the kernel costs fewer joules). %d of %d shapes "
             "cost fewer joules with the kernel.",
             fewer, t->nrows);
}

void rp_energy_tables(const struct rp_data *d, struct rp_tabs *ts)
{
    int meas = 0, tsm2 = 0; /* without either (and spans), the section stays out of the page */
    for (int i = 0; i < d->nrows; i++) {
        const char *fam = rp_family(&d->meas[i]);
        if (!has_energy(&d->meas[i]))
            continue;
        meas = 1;
        tsm2 |= strncmp(fam, "tsm2", 4) == 0 || strncmp(fam, "ism2", 4) == 0;
    }
    if (meas)
        kernels_table(d, ts);
    spans_table(d, ts);
    if (tsm2)
        cublas_table(d, ts);
}

/* ---------------------------------------------------------------- the chart */

static void energy_roofline(const struct rp_data *d, int dev, struct rp_charts *cs,
                            struct rp_out *o)
{
    static const char *const precs[] = {"fp32", "fp64"};
    static const enum model_energy_op ops[] = {MODEL_EOP_FP32, MODEL_EOP_FP64};
    static const char *const colours[] = {"#1f77b4", "#d62728"};
    const struct rp_dev *v = &d->devs[dev];
    struct model_energy e;
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, title = {0};
    struct rp_plot plot = {{0}, 0};
    struct rp_marks *mk;
    char lbl[300], num[32];
    double f[2], eps_mem, cap = power_cap(v), b = v->bw[MODEL_LEVEL_DRAM];
    int have[2], nlines = 0, npts = 0, blk = 0;

    if (analysis_energy_of(&v->a, &e) == 0)
        return;
    for (int i = 0; i < d->nrows; i++)
        npts += d->meas[i].dev == dev && d->meas[i].charted && gflop_per_j(&d->meas[i]) > 0 &&
                d->meas[i].pt.intensity[MODEL_LEVEL_DRAM] > 0;
    eps_mem = e.eps_byte[MODEL_LEVEL_DRAM] +
              (isnan(e.eps_byte[MODEL_LEVEL_L2]) ? 0 : e.eps_byte[MODEL_LEVEL_L2]);
    for (int p = 0; p < 2; p++) {
        const struct db_ceiling *pc = rp_peak_ceiling(v, precs[p]);
        f[p] = pc ? analysis_ceiling_si(pc) : NAN;
        have[p] =
            f[p] > 0 && b > 0 && !isnan(e.eps_flop[ops[p]]) && !isnan(eps_mem) && !isnan(e.p0_w);
        nlines += have[p];
    }
    if (nlines == 0 && npts == 0)
        return;
    if (!(mk = calloc(1, sizeof *mk))) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory drawing the energy roofline");
        return;
    }
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "energy-roofline-d%lld", (long long)v->a.dev.id);
    snprintf(c.title, sizeof c.title, "Energy roofline of %s",
             rp_dev_label(d, dev, lbl, sizeof lbl));
    c.section = RP_SEC_ENERGY;
    rp_gp_head(&s, &c, "the energy roofline of one device");
    rp_buf_printf(&s,
                  "set logscale xy\nset xlabel 'operational intensity [FLOP/B of DRAM]'\n"
                  "set ylabel 'energy efficiency [GFLOP/J]'\nset xrange [%g:%g]\n"
                  "set format x '%%g'\nset format y '%%g'\n",
                  I_LO, I_HI);
    /* block 0: the lines, one column per precision and cap */
    rp_buf_puts(&dat, "# intensity [FLOP/B], then GFLOP/J: fp32 arch, fp32 capped, fp64 arch, "
                      "fp64 capped\n");
    for (int k = 0; k < LINE_POINTS; k++) {
        double i = I_LO * pow(I_HI / I_LO, (double)k / (LINE_POINTS - 1));
        rp_buf_printf(&dat, "%.6g", i);
        for (int p = 0; p < 2; p++)
            for (int capped = 0; capped < 2; capped++) {
                rp_buf_puts(&dat, " ");
                rp_dat_num(&dat, have[p] ? arch(e.eps_flop[ops[p]], eps_mem, e.p0_w, f[p], b,
                                                capped ? cap : NAN, i)
                                         : NAN);
            }
        rp_buf_puts(&dat, "\n");
    }
    rp_buf_puts(&dat, "\n\n");
    blk = 1;
    for (int p = 0; p < 2; p++) {
        if (!have[p])
            continue;
        rp_plot_next(&plot);
        rp_buf_printf(&plot.b,
                      "'%s.dat' index 0 using 1:%d with lines lw 2 lc rgb '%s' title '%s arch "
                      "line (%s pJ/FLOP)'",
                      c.name, 2 + 2 * p, colours[p], precs[p],
                      rp_fmt_num(num, e.eps_flop[ops[p]] * 1e12));
        if (!isnan(cap)) {
            rp_plot_next(&plot);
            rp_buf_printf(&plot.b,
                          "'%s.dat' index 0 using 1:%d with lines lw 1.5 dt 2 lc rgb '%s' title "
                          "'%s under the %.0f W cap'",
                          c.name, 3 + 2 * p, colours[p], precs[p], cap);
        }
    }
    /* the measurements, one block per precision (others in a third) */
    for (int p = 0; p < 3; p++) {
        int from = mk->n, n = 0;
        rp_buf_printf(&dat, "# points: %s\n", p < 2 ? precs[p] : "other");
        for (int i = 0; i < d->nrows; i++) {
            const struct rp_meas *x = &d->meas[i];
            const char *pr = x->row->m.precision ? x->row->m.precision : "";
            int which = strcmp(pr, "fp32") == 0 ? 0 : strcmp(pr, "fp64") == 0 ? 1 : 2;
            double y = gflop_per_j(x), in = x->pt.intensity[MODEL_LEVEL_DRAM];
            if (x->dev != dev || !x->charted || which != p || !(y > 0) || !(in > 0))
                continue;
            rp_buf_printf(&dat, "%.9g %.9g %lld\n", in, y, (long long)x->row->m.id);
            title.len = 0;
            rp_point_title(d, x, MODEL_LEVEL_DRAM, v->model, 0, &title);
            rp_buf_printf(
                &title, "\nenergy: %.4g J a launch (%lld launches read), %.4g W, %.4g GFLOP/J",
                x->row->m.energy_j, (long long)x->row->m.energy_launches, x->row->m.power_w, y);
            rp_mark(mk, x->row->m.id, title.p ? title.p : "");
            n++;
        }
        rp_buf_puts(&dat, "\n\n");
        if (n > 0) { /* the points, then their key entry (a key sample is a point too) */
            const char *colour = p < 2 ? colours[p] : "#2ca02c";
            rp_marks_bind(mk, from, rp_plot_next(&plot));
            rp_buf_printf(&plot.b,
                          "'%s.dat' index %d using 1:2 with points pt 7 ps 0.8 lc rgb '%s' "
                          "notitle",
                          c.name, blk, colour);
            rp_plot_next(&plot);
            rp_buf_printf(&plot.b,
                          "1/0 with points pt 7 ps 0.8 lc rgb '%s' title '%s measurements'", colour,
                          p < 2 ? precs[p] : "other");
        }
        blk++;
    }
    if (plot.n == 0)
        rp_buf_puts(&plot.b, "1/0 notitle");
    rp_buf_printf(&s, "plot %s\n", plot.b.p);
    snprintf(c.caption, sizeof c.caption,
             "Energy efficiency against DRAM intensity (Choi et al., IPDPS 2013). Solid: the "
             "arch line, 1 / (eps_flop + eps_mem / I + P0 max(1/F, 1/(I B))), from the energy "
             "ceilings (eps_mem %s pJ/B: DRAM + L2; P0 %s W) and the time roofline (F the "
             "precision's compute ceiling, B the DRAM bandwidth). %s Points: measurements with "
             "an energy reading (%d), their flops over the energy of one launch. Hover a point "
             "for its kernel and numbers; click it for its row.",
             rp_fmt_num(num, eps_mem * 1e12), rp_fmt_num(lbl, e.p0_w),
             !isnan(cap) ? "Dashed: the same under the power cap (ceiling power_limit, NVML's "
                           "enforced power limit): the time stretches until the power fits."
                         : "No power cap in the database (ceiling power_limit), so no capped "
                           "line.",
             npts);
    mk->oom |= title.oom;
    c.marks = mk;
    if (mk->oom && cs->rc == RK_OK)
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
    rp_chart_add(cs, o, &c, &s, &dat);
    if (cs->rc != RK_OK) {
        rp_marks_release(mk);
        free(mk);
    }
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&title);
    rp_buf_free(&plot.b);
}

void rp_energy_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o)
{
    for (int i = 0; i < d->ndevs && cs->rc == RK_OK; i++)
        energy_roofline(d, i, cs, o);
}
