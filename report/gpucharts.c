/*
 * gpucharts.c - the charts of several GPUs and ranks (RP_SEC_GPUS), each drawn under its
 * table of gpus.c (rp_chart.family = the table's key) and only when its data is there:
 *
 *   roofline-gpus     every GPU's roofline on one chart: its DRAM bandwidth (the ceiling
 *                     policy's, as on its own roofline) and each of its compute ceilings, one
 *                     colour per GPU, one dash type per compute ceiling; when 2 or more GPUs
 *                     have ceilings (the per-device rooflines stay as they are)
 *   peer-<name>       a heat map of a ceiling of GPU pairs, source GPU by destination GPU,
 *                     with each value written in its cell (a filled box per pair: a pair not
 * measured and the diagonal stay blank); darker is better, as in the table ranks-<k>         each
 * rank's kernel time of a program profiled as 2 or more ranks, as bars, with the mean dashed
 *
 * Assumes: the GPUs, pair ceilings and rank groups are load.c's (rp_data), the labels and
 * lookups gpus.c's, so a chart shows its table's numbers.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* One colour per GPU (cycled), dark enough for thin lines on white. */
static const char *const gpu_color[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                        "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

enum { GPU_COLORS = sizeof gpu_color / sizeof gpu_color[0] };

/* ------------------------------------------------------ all GPUs' rooflines */

/* The distinct names of the GPUs' compute ceilings, in the order the GPUs list them; *out
 * malloc'd (strings owned by d). */
static int compute_names(const struct rp_data *d, const char ***out, int *n)
{
    int cap = 1, k = 0;
    for (int g = 0; g < d->ngpus; g++)
        cap += d->devs[d->gpus[g]].a.nceil;
    const char **v = malloc((size_t)cap * sizeof *v);
    if (!v)
        return RK_ENOMEM;
    for (int g = 0; g < d->ngpus; g++) {
        const struct analysis_device *a = &d->devs[d->gpus[g]].a;
        for (int j = 0; j < a->nceil; j++) {
            int seen = strcmp(a->ceil[j].kind, "compute") != 0 || a->ceil[j].peer_device_id;
            for (int i = 0; i < k && !seen; i++)
                seen = strcmp(v[i], a->ceil[j].name) == 0;
            if (!seen)
                v[k++] = a->ceil[j].name;
        }
    }
    *out = v;
    *n = k;
    return RK_OK;
}

/* Compute ceiling `name` of device v in GFLOP/s, NaN when it has none. */
static double peak_gflops(const struct rp_dev *v, const char *name)
{
    const struct db_ceiling *c = rp_peer_ceiling(v, name, 0);
    double x = c ? analysis_unit_si(c->value, c->unit) * 1e-9 : NAN;
    return isfinite(x) && x > 0 ? x : NAN;
}

static void roofline_gpus_chart(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o)
{
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, plot = {0};
    const char **names = NULL;
    char lbl[128], n1[32], n2[32];
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    int nnames = 0, nlines = 0;

    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "roofline-gpus");
    snprintf(c.title, sizeof c.title, "Rooflines of the %d GPUs", d->ngpus);
    snprintf(c.family, sizeof c.family, "ceilings-by-gpu");
    c.section = RP_SEC_GPUS;
    if (compute_names(d, &names, &nnames) != RK_OK) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        return;
    }
    rp_gp_head_sized(&s, &c, "every GPU's DRAM bandwidth and compute ceilings on one roofline", 900,
                     "outside below center horizontal maxrows 6 spacing 1.0 font ',10'");
    rp_buf_puts(&s, "set logscale xy\nset xlabel 'operational intensity [FLOP/B]'\n"
                    "set ylabel 'performance [GFLOP/s]'\nset samples 500\n"
                    "set format x '%g'\nset format y '%g'\n\n"
                    "# Per GPU g: bw_g, its DRAM bandwidth [GB/s] (the ceiling policy's), top_g,\n"
                    "# its highest peak, and pk_g_j, its compute ceiling j [GFLOP/s]; NaN = none.\n"
                    "# Its DRAM line stops at top_g, each peak starts on its DRAM line.\n"
                    "bwline(x, bw, top) = (bw == bw && x * bw <= top) ? x * bw : 1/0\n"
                    "pkline(x, p, bw) = (p == p && (bw != bw || x * bw >= p)) ? p : 1/0\n");
    rp_buf_puts(&dat, "# every GPU's ceilings drawn: gpu uuid ceiling value[GB/s or GFLOP/s]\n");
    for (int g = 0; g < d->ngpus; g++) {
        const struct rp_dev *v = &d->devs[d->gpus[g]];
        const char *col = gpu_color[g % GPU_COLORS];
        double bw = v->bw_c[MODEL_LEVEL_DRAM] ? v->bw[MODEL_LEVEL_DRAM] * 1e-9 : NAN, top = 0;
        rp_gpu_label(d, d->gpus[g], lbl, sizeof lbl);
        for (int j = 0; j < nnames; j++) {
            double p = peak_gflops(v, names[j]);
            rp_buf_printf(&s, "pk_%d_%d = %s    # %s\n", g, j, rp_gpv(n1, p), names[j]);
            if (!isfinite(p))
                continue;
            top = fmax(top, p);
            ylo = fmin(ylo, p);
            if (isfinite(bw)) {
                xlo = fmin(xlo, p / bw);
                xhi = fmax(xhi, p / bw);
            }
            rp_buf_printf(&dat, "%d %s %s %.9g\n", g, v->a.dev.uuid, names[j], p);
        }
        rp_buf_printf(&s, "bw_%d = %s    # %s: %s\ntop_%d = %s\n", g, rp_gpv(n1, bw), lbl,
                      v->bw_c[MODEL_LEVEL_DRAM] ? v->bw_c[MODEL_LEVEL_DRAM]->name : "none", g,
                      rp_gpv(n2, top > 0 ? top : 1e5));
        if (isfinite(bw))
            rp_buf_printf(&dat, "%d %s %s %.9g\n", g, v->a.dev.uuid,
                          v->bw_c[MODEL_LEVEL_DRAM]->name, bw);
        yhi = fmax(yhi, top);
        /* the DRAM line carries the GPU's name in the key; its peaks follow untitled */
        if (plot.len)
            rp_buf_puts(&plot, ", \\\n     ");
        char title[200];
        if (isfinite(bw))
            snprintf(title, sizeof title, "%s: DRAM %.0f GB/s", lbl, bw);
        else
            snprintf(title, sizeof title, "%s: no DRAM ceiling", lbl);
        rp_buf_printf(&plot, "bwline(x, bw_%d, top_%d) with lines lw 2 lc rgb '%s' title ", g, g,
                      col);
        rp_gp_str(&plot, title);
        nlines += isfinite(bw);
        for (int j = 0; j < nnames; j++)
            if (isfinite(peak_gflops(v, names[j]))) {
                rp_buf_printf(&plot,
                              ", \\\n     pkline(x, pk_%d_%d, bw_%d) with lines lw 1.5 dt %d "
                              "lc rgb '%s' notitle",
                              g, j, g, j % 4 + 2, col);
                nlines++;
            }
    }
    for (int j = 0; j < nnames; j++) { /* the key of the dash types */
        rp_buf_printf(&plot, ", \\\n     1/0 with lines lw 1.5 dt %d lc rgb '#555555' title ",
                      j % 4 + 2);
        rp_gp_str(&plot, names[j]);
    }
    if (!(xlo < xhi)) {
        xlo = xlo < INFINITY ? xlo : 1;
        xhi = xlo * 10;
    }
    if (!(ylo < INFINITY))
        ylo = yhi = 1e4;
    rp_buf_printf(&s, "set xrange [%.4g:%.4g]\nset yrange [%.4g:%.4g]\n\nplot %s\n", xlo / 30,
                  xhi * 10, ylo / 1e3, yhi * 2, plot.p);
    snprintf(c.caption, sizeof c.caption,
             "Each GPU's DRAM bandwidth (solid, in its colour, the ceiling policy's as on its "
             "own roofline) and each of its compute ceilings (dashed, one dash type per "
             "ceiling): %d lines of %d GPUs, the numbers in the table above; lines of equal "
             "value lie on each other. A GPU whose roof lies under the others' is the slower "
             "one.",
             nlines, d->ngpus);
    rp_chart_add(cs, o, &c, &s, &dat);
    free((void *)names);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&plot);
}

/* ------------------------------------------------------------- heat maps */

/* The tics of the GPUs of the pairs on axis ax ("x" or "y"). */
static void pair_tics(const struct rp_data *d, struct rp_buf *s, const char *ax)
{
    char lbl[128];
    rp_buf_printf(s, "set %stics (", ax);
    for (int i = 0; i < d->npeer_devs; i++) {
        rp_buf_puts(s, i ? ", " : "");
        rp_gp_str(s, rp_gpu_label(d, d->peer_devs[i], lbl, sizeof lbl));
        rp_buf_printf(s, " %d", i);
    }
    rp_buf_puts(s, ")\n");
}

static void peer_chart(const struct rp_data *d, const char *name, struct rp_charts *cs,
                       struct rp_out *o)
{
    const int n = d->npeer_devs;
    const struct db_ceiling *first = NULL;
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0};
    double lo = INFINITY, hi = -INFINITY;
    int cells = 0;

    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "peer-%s", name);
    rp_file_safe(c.name);
    snprintf(c.family, sizeof c.family, "%.63s", c.name);
    c.section = RP_SEC_GPUS;
    rp_buf_printf(&dat, "# %s: source destination value (one block per source GPU; ? = none)\n",
                  name);
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            const struct db_ceiling *x = rp_pair_ceiling(d, name, a, b);
            if (x && !first)
                first = x;
            double v = x ? rp_ceiling_in(x, first->unit) : NAN;
            rp_buf_printf(&dat, "%d %d", b, a);
            rp_dat_num(&dat, v);
            rp_buf_puts(&dat, "\n");
            if (isfinite(v)) {
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                cells++;
            }
        }
        rp_buf_puts(&dat, "\n");
    }
    if (!first || !cells)
        goto out;
    const int lower = rp_lower_is_better(first);
    snprintf(c.title, sizeof c.title, "GPU pairs: %s [%s]", name, first->unit);
    rp_gp_head_sized(&s, &c, "a ceiling of GPU pairs as a heat map", 160 + 70 * (n < 12 ? n : 12),
                     "off");
    if (!(hi > lo)) {
        lo = lo * 0.99;
        hi = hi * 1.01 + 1e-9;
    }
    rp_buf_printf(&s,
                  "unset grid\nset size ratio -1\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n"
                  "set xlabel 'destination GPU'\nset ylabel 'source GPU'\nset xtics rotate by "
                  "-20 font ',9'\nset ytics font ',9'\nset tics scale 0\n"
                  "set cbrange [%.9g:%.9g]\nset cblabel '%s [%s]'\n"
                  "# darker is better: %s values are darker\n"
                  "set palette defined (0 '%s', 1 '%s')\n",
                  n - 1, n - 1, lo, hi, name, first->unit, lower ? "lower" : "higher",
                  lower ? "#08519c" : "#f7fbff", lower ? "#f7fbff" : "#08519c");
    pair_tics(d, &s, "x");
    pair_tics(d, &s, "y");
    rp_buf_printf(&s,
                  "plot '%s.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder "
                  "fc palette notitle, \\\n"
                  "     '' using 1:2:(sprintf('%%.4g', $3)) with labels font ',10' "
                  "tc rgb '#222222' notitle\n",
                  c.name);
    snprintf(c.caption, sizeof c.caption,
             "%s from the source GPU (row) to the destination GPU (column), %d pairs; darker is "
             "better (%s is better), blank: the diagonal or not measured.",
             name, cells, lower ? "lower" : "higher");
    rp_chart_add(cs, o, &c, &s, &dat);
out:
    rp_buf_free(&s);
    rp_buf_free(&dat);
}

/* ------------------------------------------------------------------ ranks */

static void ranks_chart(const struct rp_data *d, int k, struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_rank_group *g = &d->groups[k];
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0};
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "ranks-%d", k + 1);
    snprintf(c.family, sizeof c.family, "%.63s", c.name);
    snprintf(c.title, sizeof c.title, "Kernel time per rank: %.100s%s", g->program,
             strlen(g->program) > 100 ? "..." : "");
    c.section = RP_SEC_GPUS;
    rp_gp_head_sized(&s, &c, "each rank's kernel time", 440,
                     "outside below center horizontal spacing 1.0");
    rp_buf_puts(&dat, "# rank kernel-time[ms] capture label\n");
    for (int i = 0; i < g->nrank; i++) {
        const struct rp_rank *r = &g->rank[i];
        rp_buf_printf(&dat, "%d %.9g %lld \"%d%s%s%s\"\n", r->cap->rank, r->time_ns * 1e-6,
                      (long long)r->cap->id, r->cap->rank, r->cap->host ? " (" : "",
                      r->cap->host ? r->cap->host : "", r->cap->host ? ")" : "");
    }
    rp_buf_printf(&s,
                  "mean = %.9g  # ms\nset style fill solid 0.75 noborder\nset boxwidth 0.7\n"
                  "set ylabel 'kernel time [ms]'\nset yrange [0:%.6g]\n"
                  "set xrange [-0.6:%d.6]\nset grid noxtics\n"
                  "plot '%s.dat' using 0:2:xtic(4) with boxes lc rgb '#1f77b4' title 'kernel "
                  "time', \\\n     mean with lines dt 2 lw 1.5 lc rgb '#d62728' title "
                  "sprintf('mean %%.4g ms', mean)\n",
                  g->mean_ns * 1e-6, g->max_ns * 1e-6 * 1.15 + 1e-9, g->nrank - 1, c.name);
    snprintf(c.caption, sizeof c.caption,
             "Each rank's kernel time (the sum of its launches' median times), %d ranks, "
             "labelled rank (host); the mean dashed. Imbalance max / mean: %.3f.",
             g->nrank, g->mean_ns > 0 ? g->max_ns / g->mean_ns : NAN);
    rp_chart_add(cs, o, &c, &s, &dat);
    rp_buf_free(&s);
    rp_buf_free(&dat);
}

void rp_gpu_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o)
{
    if (d->ngpus >= 2)
        roofline_gpus_chart(d, cs, o);
    for (int i = 0; i < d->npeer_names && cs->rc == RK_OK; i++)
        peer_chart(d, d->peer_names[i], cs, o);
    for (int k = 0; k < d->ngroups && cs->rc == RK_OK; k++)
        ranks_chart(d, k, cs, o);
}
