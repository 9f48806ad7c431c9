/*
 * charts.c - the report's charts: one gnuplot script and one data file per chart
 * in plots/, written so that a user can edit a script and re-plot it alone
 * (`gnuplot NAME.gp` in plots/), and plots/all.gp that loads them all, which the
 * report runs in ONE gnuplot process (gnuplot.c).
 *
 *   roofline-d<ID>, roofline-levels-d<ID>   roofline.c
 *   roofline-gpus, peer-<name>, ranks-<k>   gpucharts.c: several GPUs and ranks, when there
 *   predmeas-<model>       predicted against measured time, log-log, y = x and +-10%
 *   latency-d<ID>          the pointer-chase curve with the plateaus marked
 *   gflops-d<ID>-<family>  GFLOP/s against N, cuBLAS beside (003 Fig. 2)
 *   speedup-d<ID>-<family> speedup over cuBLAS against N (000 Fig. 10)
 *   bw-d<ID>-<family>-<p>  TSM2 / ISM2 memory-bandwidth utilisation against cuBLAS
 *                          (004 Fig. 5, Fig. 14)
 *
 * Assumes: only measurements that passed verification (or were not checked) are
 * drawn: a result that failed its check is never charted. A roofline point's height and
 * intensity take one flop count (rp_meas.pt: the counters' executed operations of the busiest
 * pipe, or the analytic useful flops), the size charts the useful (analytic) GFLOP/s. A
 * prediction without a time is a model's reason for not applying: never drawn. Data files use '?'
 * for a missing value. Text is drawn with the svg terminal's noenhanced mode, so names with '_'
 * print as they are.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* ------------------------------------------------- predicted vs measured */

static void predmeas_chart(const struct rp_data *d, const char *model, struct rp_charts *cs,
                           struct rp_out *o)
{
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, plot = {0};
    double lo = INFINITY, hi = 0;
    int nblk = 0, npts = 0, in10 = 0;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "predmeas-%s", model);
    rp_file_safe(c.name);
    snprintf(c.title, sizeof c.title, "Predicted against measured time: %s model", model);
    c.section = RP_SEC_MODEL;
    rp_gp_head(&s, &c, "a model's predicted time against the measured time");
    rp_buf_puts(&dat, "# measured[s] predicted[s] id; one block per family\n");
    for (int f = 0; f < d->nfamilies; f++) {
        int n = 0;
        for (int i = 0; i < d->nrows; i++) {
            const struct rp_meas *x = &d->meas[i];
            const struct db_prediction *p;
            if (!x->charted || strcmp(rp_family(x), d->families[f]) ||
                !(p = rp_prediction(x, model)) || !(p->predicted_time_ns > 0))
                continue;
            double ps = p->predicted_time_ns * 1e-9;
            if (n++ == 0)
                rp_buf_printf(&dat, "# family %s\n", *d->families[f] ? d->families[f] : "-");
            rp_dat_num(&dat, x->pt.time_s);
            rp_dat_num(&dat, ps);
            rp_buf_printf(&dat, " %lld\n", (long long)x->row->m.id);
            lo = fmin(lo, fmin(x->pt.time_s, ps));
            hi = fmax(hi, fmax(x->pt.time_s, ps));
            in10 += fabs(ps / x->pt.time_s - 1.0) <= 0.1;
        }
        if (!n)
            continue;
        rp_buf_puts(&dat, "\n\n");
        rp_buf_printf(&plot,
                      ", \\\n     '%s.dat' index %d using 1:2 with points pt 7 ps 0.6 lc %d title ",
                      c.name, nblk, nblk + 1);
        rp_gp_str(&plot, *d->families[f] ? d->families[f] : "(no family)");
        nblk++;
        npts += n;
    }
    if (!(lo < hi)) {
        lo = lo < INFINITY ? lo / 2 : 1e-6;
        hi = lo * 4;
    }
    rp_buf_printf(
        &s,
        "set logscale xy\nset xlabel 'measured time [s]'\nset ylabel 'predicted time [s]'\n"
        "set format x '%%.0e'\nset format y '%%.0e'\nset size ratio -1\n"
        "lo = %.4g\nhi = %.4g\nset xrange [lo:hi]\nset yrange [lo:hi]\nset samples 200\n"
        "plot '+' using 1:(0.9*$1):(1.1*$1) with filledcurves fc rgb '#cfe3f7' "
        "fs solid 1.0 noborder title '±10%%', \\\n"
        "     x with lines lc rgb '#333333' lw 1 title 'y = x'%s\n",
        lo / 1.3, hi * 1.3, plot.p ? plot.p : "");
    snprintf(c.caption, sizeof c.caption,
             "%d measurement%s, coloured by family; the band is y = x ±10%%: %d of them (%.0f%%) "
             "lie in it.",
             npts, npts == 1 ? "" : "s", in10, npts ? 100.0 * in10 / npts : 0.0);
    if (npts) /* a model that applies to no charted row (each holds its reason): no chart */
        rp_chart_add(cs, o, &c, &s, &dat);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&plot);
}

/* ----------------------------------------------------------------- latency */

/* True when x is the ns twin of a cycles ceiling also stored (name + "_ns"). */
static int has_cycles_twin(const struct rp_dev *v, const struct db_ceiling *x)
{
    size_t n = strlen(x->name);
    if (strcmp(x->unit, "cycles") == 0 || n < 4 || strcmp(x->name + n - 3, "_ns") != 0)
        return 0;
    for (int i = 0; i < v->a.nceil; i++)
        if (strlen(v->a.ceil[i].name) == n - 3 && strncmp(v->a.ceil[i].name, x->name, n - 3) == 0 &&
            strcmp(v->a.ceil[i].unit, "cycles") == 0)
            return 1;
    return 0;
}

static void latency_chart(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0};
    char lbl[300];
    double ratio = NAN; /* cycles per ns along the curve (median of the points') */
    int nplat = 0;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "latency-d%lld", (long long)v->a.dev.id);
    snprintf(c.title, sizeof c.title, "Memory latency of %s",
             rp_dev_label(d, dev, lbl, sizeof lbl));
    c.section = RP_SEC_DEVICE;
    rp_gp_head(&s, &c, "the pointer-chase latency curve with its plateaus");
    rp_buf_puts(&dat, "# block 0: footprint[bytes] stride[bytes] cycles ns\n");
    double *r = malloc((size_t)(v->a.npts ? v->a.npts : 1) * sizeof *r);
    int nr = 0;
    for (int i = 0; i < v->a.npts; i++) {
        const struct db_latency_point *p = &v->a.pts[i];
        rp_buf_printf(&dat, "%lld %lld", (long long)p->footprint_bytes, (long long)p->stride_bytes);
        rp_dat_num(&dat, p->cycles);
        rp_dat_num(&dat, p->ns);
        rp_buf_puts(&dat, "\n");
        if (r && p->cycles > 0 && p->ns > 0)
            r[nr++] = p->cycles / p->ns;
    }
    if (r && nr)
        model_percentile(r, (size_t)nr, 50, &ratio);
    free(r);
    int64_t fmin_b = v->a.npts ? v->a.pts[0].footprint_bytes : 1024;
    int64_t fmax_b = v->a.npts ? v->a.pts[v->a.npts - 1].footprint_bytes : (int64_t)1 << 30;
    rp_buf_puts(&dat, "\n\n# block 1: plateaus: from[bytes] to[bytes] cycles label\n");
    for (int i = 0; i < v->a.nceil; i++) {
        const struct db_ceiling *x = &v->a.ceil[i];
        double cyc, from, to;
        if (strcmp(x->kind, "latency") || !x->level ||
            !(strncmp(x->name, "lat_chase", 9) == 0 || strcmp(x->level, "l1") == 0 ||
              strcmp(x->level, "l2") == 0 || strcmp(x->level, "dram") == 0))
            continue;
        if (has_cycles_twin(v, x))
            continue; /* lat_chase_l2_ns beside lat_chase_l2: one plateau, drawn once */
        if (strcmp(x->unit, "cycles") == 0) {
            cyc = x->value;
        } else {
            cyc = analysis_unit_si(x->value, x->unit) * 1e9 * ratio;
        }
        if (!isfinite(cyc))
            continue;
        if (rk_json_number(x->params, "from_bytes", &from) ||
            rk_json_number(x->params, "to_bytes", &to)) {
            from = (double)fmin_b;
            to = (double)fmax_b;
        }
        rp_buf_printf(&dat, "%.9g %.9g %.9g \"%s %.0f cycles\"\n", from, to, cyc, x->name, cyc);
        nplat++;
    }
    if (!nplat)
        rp_buf_puts(&dat, "? ? ? \"\"\n");
    rp_buf_printf(
        &s,
        "set logscale x 2\nset xlabel 'footprint [bytes]'\nset ylabel 'latency [cycles]'\n"
        "set format x '%%.0b %%BB'\nset xrange [%lld:%lld]\nset yrange [0:*]\n",
        (long long)fmin_b / 2, (long long)fmax_b * 2);
    if (v->a.dev.l2_bytes > 0)
        rp_buf_printf(&s,
                      "l2_bytes = %lld\nset arrow 1 from l2_bytes, graph 0 to l2_bytes, graph 1 "
                      "nohead dt 3 lc rgb '#888888'\nset label 1 'L2 size' at l2_bytes, graph 0.97 "
                      "offset 0.5,0 textcolor rgb '#666666'\n",
                      (long long)v->a.dev.l2_bytes);
    rp_buf_printf(&s,
                  "plot '%s.dat' index 0 using 1:3 with linespoints pt 7 ps 0.5 lc rgb '#1f77b4' "
                  "title 'pointer chase'",
                  c.name);
    if (nplat)
        rp_buf_printf(&s, ", \\\n     '' index 1 using 1:3:($2-$1):(0) with vectors nohead lw 4 "
                          "lc rgb '#d62728' title 'plateaus (ceilings)', \\\n"
                          "     '' index 1 using (sqrt($1*$2)):3:4 with labels offset 0,1 "
                          "font ',10' notitle");
    rp_buf_puts(&s, "\n");
    snprintf(c.caption, sizeof c.caption,
             "%d point%s of the pointer chase (cycles per dependent load against footprint); "
             "%d plateau%s marked from the latency ceilings%s.",
             v->a.npts, v->a.npts == 1 ? "" : "s", nplat, nplat == 1 ? "" : "s",
             v->a.npts ? "" : " (no curve in the database: run 'roofkit probe --only latency')");
    rp_chart_add(cs, o, &c, &s, &dat);
    rp_buf_free(&s);
    rp_buf_free(&dat);
}

/* ---------------------------------------------- series against size charts */

/* One point of a series: the best value of a (series, shape). */
struct spt {
    char key[128];
    double x, y;
};

static int cmp_spt(const void *a, const void *b)
{
    const struct spt *p = a, *q = b;
    int c = strcmp(p->key, q->key);
    if (c)
        return c;
    return (p->x > q->x) - (p->x < q->x);
}

/* Sorts pts and keeps the highest y of equal (key, x); returns the new count. */
static int best_per_x(struct spt *pts, int n)
{
    int k = 0;
    qsort(pts, (size_t)n, sizeof *pts, cmp_spt);
    for (int i = 0; i < n; i++) {
        if (k && strcmp(pts[k - 1].key, pts[i].key) == 0 && pts[k - 1].x == pts[i].x) {
            pts[k - 1].y = fmax(pts[k - 1].y, pts[i].y);
            continue;
        }
        pts[k++] = pts[i];
    }
    return k;
}

/* The series key of measurement x: kernel, precision and the dimensions not swept. */
static void series_key(const struct rp_meas *x, const char *kernel, char *key, size_t len)
{
    const struct db_measurement *m = &x->row->m;
    int o = snprintf(key, len, "%s %s", kernel, m->precision ? m->precision : "");
    if (o > 0 && (size_t)o < len && m->n != m->m)
        o += snprintf(key + o, len - (size_t)o, " n=%lld", (long long)m->n);
    if (o > 0 && (size_t)o < len && m->k != m->m)
        snprintf(key + o, len - (size_t)o, " k=%lld", (long long)m->k);
}

/* Best GFLOP/s of cuBLAS at x's shape and precision on x's device, or NaN; *bw its
 * memory throughput. */
static double cublas_at(const struct rp_data *d, const struct rp_meas *x, double *bw /* OUT */)
{
    const struct rp_meas *c = rp_cublas_at(d, x);
    if (bw)
        *bw = c ? c->bw_util : NAN;
    return c ? c->gflops : NAN;
}

/* Writes blocks of sorted points; plot clauses into plot. Returns the number of series. */
static int write_series(const struct spt *pts, int n, const char *name, struct rp_buf *dat,
                        struct rp_buf *plot, int dashed_from)
{
    /* gnuplot cycles 8 colours, so series of different kernels can share one; each
     * kernel (the key's first word) gets its own point shape as well. */
    static const int shapes[] = {7, 5, 9, 11, 13, 15, 3, 1};
    char kernels[8][64];
    int nk = 0, blk = 0;
    (void)dashed_from;
    for (int i = 0; i < n;) {
        int j = i, pt, ki;
        size_t w = strcspn(pts[i].key, " ");
        for (ki = 0; ki < nk; ki++)
            if (strlen(kernels[ki]) == w && strncmp(kernels[ki], pts[i].key, w) == 0)
                break;
        if (ki == nk && nk < 8)
            snprintf(kernels[nk++], sizeof kernels[0], "%.*s", (int)(w < 63 ? w : 63), pts[i].key);
        pt = shapes[ki % 8];
        rp_buf_printf(dat, "# %s\n", pts[i].key);
        for (; j < n && strcmp(pts[j].key, pts[i].key) == 0; j++)
            rp_buf_printf(dat, "%.9g %.9g\n", pts[j].x, pts[j].y);
        rp_buf_puts(dat, "\n\n");
        int cub = strncmp(pts[i].key, "cuBLAS", 6) == 0;
        rp_buf_printf(plot,
                      "%s'%s.dat' index %d using 1:2 with linespoints pt %d ps 0.6 lw %s %s title ",
                      blk ? ", \\\n     " : "", name, blk, cub ? 4 : pt, cub ? "1.5 dt 2" : "1.5",
                      cub ? "lc rgb '#000000'" : "");
        rp_gp_str(plot, pts[i].key);
        blk++;
        i = j;
    }
    return blk;
}

static void size_axis(struct rp_buf *s, const struct spt *pts, int n)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, pts[i].x);
        hi = fmax(hi, pts[i].x);
    }
    if (n && hi / lo > 16)
        rp_buf_puts(s, "set logscale x 2\nset format x '%.0s%c'\n");
}

static void family_charts(const struct rp_data *d, int dev, const char *family,
                          struct rp_charts *cs, struct rp_out *o)
{
    struct spt *g = NULL, *sp = NULL;
    int ng = 0, nsp = 0;
    char lbl[300];
    g = malloc((size_t)2 * (size_t)d->nrows * sizeof *g);
    sp = malloc((size_t)d->nrows * sizeof *sp);
    if (!g || !sp) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
        goto out;
    }
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        if (x->dev != dev || !x->charted || strcmp(rp_family(x), family) || !(x->gflops > 0))
            continue;
        series_key(x, x->row->m.kernel, g[ng].key, sizeof g[ng].key);
        g[ng].x = (double)x->row->m.m;
        g[ng++].y = x->gflops;
        double cb = cublas_at(d, x, NULL);
        if (cb > 0) {
            series_key(x, "cuBLAS", g[ng].key, sizeof g[ng].key);
            g[ng].x = (double)x->row->m.m;
            g[ng++].y = cb;
            sp[nsp] = g[ng - 2];
            sp[nsp++].y = x->gflops / cb;
        }
    }
    if (ng == 0)
        goto out;
    ng = best_per_x(g, ng);
    nsp = best_per_x(sp, nsp);

    for (int pass = 0; pass < 2; pass++) {
        struct rp_chart c;
        struct rp_buf s = {0}, dat = {0}, plot = {0};
        const struct spt *pts = pass ? sp : g;
        int n = pass ? nsp : ng;
        if (n == 0)
            continue;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "%s-d%lld-%s", pass ? "speedup" : "gflops",
                 (long long)d->devs[dev].a.dev.id, family);
        rp_file_safe(c.name);
        snprintf(c.title, sizeof c.title,
                 pass ? "%s: speedup over cuBLAS on %s" : "%s: GFLOP/s on %s",
                 *family ? family : "(no family)", rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_KERNELS;
        snprintf(c.family, sizeof c.family, "%s", family);
        rp_gp_head(&s, &c, pass ? "speedup over cuBLAS against size" : "GFLOP/s against size");
        rp_buf_printf(&dat,
                      "# m[=N for square shapes] %s; one block per series (best over "
                      "parameters)\n",
                      pass ? "speedup[GFLOP/s / cuBLAS GFLOP/s]" : "GFLOP/s");
        int nser = write_series(pts, n, c.name, &dat, &plot, 0);
        size_axis(&s, pts, n);
        rp_buf_puts(&s, "set xlabel 'N (m; n and k in the series name when they differ)'\n");
        if (pass) {
            double lo = INFINITY, hi = 0;
            for (int i = 0; i < n; i++) {
                lo = fmin(lo, pts[i].y);
                hi = fmax(hi, pts[i].y);
            }
            if (hi / lo > 20)
                rp_buf_puts(&s, "set logscale y\n");
            rp_buf_puts(&s, "set ylabel 'speedup over cuBLAS [x]'\n");
        } else {
            rp_buf_puts(&s, "set ylabel 'useful performance [GFLOP/s]'\nset yrange [0:*]\n");
        }
        rp_buf_printf(&s, "plot %s%s\n", plot.p,
                      pass ? ", \\\n     1 with lines dt 2 lc rgb '#888888' title 'cuBLAS = 1'"
                           : "");
        snprintf(c.caption, sizeof c.caption,
                 pass ? "Useful GFLOP/s (analytic flops, 2mnk for a GEMM, over the median time) "
                        "of each kernel of %s divided by cuBLAS's at the same shape and "
                        "precision (%d series; the best parameters at each size), as in "
                        "000_51b464feae8766fa.txt Fig. 10."
                      : "Useful GFLOP/s (analytic flops, 2mnk for a GEMM, over the median time) "
                        "of each kernel of %s against N with cuBLAS (dashed) at the same "
                        "shapes (%d series; the best parameters at each size), as in "
                        "003_d5ffc223df97ef85.txt Fig. 2.",
                 *family ? family : "(no family)", nser);
        rp_chart_add(cs, o, &c, &s, &dat);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&plot);
    }
out:
    free(g);
    free(sp);
}

/* TSM2 / ISM2 bandwidth utilisation against cuBLAS (004 Fig. 5, Fig. 14). */
static void bw_chart(const struct rp_data *d, int dev, const char *family, const char *prec,
                     struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    struct spt *pts = NULL;
    int n = 0;
    char lbl[300];
    const char *src = NULL;
    if (!v->bw_c[MODEL_LEVEL_DRAM])
        return;
    double peak = v->bw[MODEL_LEVEL_DRAM] * 1e-9;
    pts = malloc((size_t)2 * (size_t)d->nrows * sizeof *pts);
    if (!pts) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
        return;
    }
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        double cbw;
        if (x->dev != dev || !x->charted || strcmp(rp_family(x), family) || !x->row->m.precision ||
            strcmp(x->row->m.precision, prec) || !(x->bw_util > 0))
            continue;
        series_key(x, x->row->m.kernel, pts[n].key, sizeof pts[n].key);
        pts[n].x = (double)x->row->m.m;
        pts[n++].y = 100.0 * x->bw_util / peak;
        if (!src)
            src = x->bw_src;
        else if (strcmp(src, x->bw_src))
            src = "mixed sources";
        if (cublas_at(d, x, &cbw) > 0 && cbw > 0) {
            series_key(x, "cuBLAS", pts[n].key, sizeof pts[n].key);
            pts[n].x = (double)x->row->m.m;
            pts[n++].y = 100.0 * cbw / peak;
        }
    }
    if (n) {
        struct rp_chart c;
        struct rp_buf s = {0}, dat = {0}, plot = {0};
        n = best_per_x(pts, n);
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "bw-d%lld-%s-%s", (long long)v->a.dev.id, family, prec);
        rp_file_safe(c.name);
        snprintf(c.title, sizeof c.title, "%s %s: memory bandwidth utilisation on %s", family, prec,
                 rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_TSM2;
        snprintf(c.family, sizeof c.family, "%s", family);
        rp_gp_head(&s, &c, "memory bandwidth utilisation against cuBLAS");
        rp_buf_puts(&dat, "# m %-of-measured-DRAM-bandwidth; one block per series\n");
        int nser = write_series(pts, n, c.name, &dat, &plot, 0);
        size_axis(&s, pts, n);
        rp_buf_printf(&s,
                      "peak = %.6g  # GB/s: %s\nset xlabel 'm'\n"
                      "set ylabel '%% of measured DRAM bandwidth (%.0f GB/s)'\nset yrange [0:*]\n"
                      "plot %s\n",
                      peak, v->bw_c[MODEL_LEVEL_DRAM]->name, peak, plot.p);
        snprintf(c.caption, sizeof c.caption,
                 "Memory throughput (%s) of each %s kernel and of cuBLAS at the same shapes, as a "
                 "percentage of the measured DRAM bandwidth (%s), %d series; the best parameters "
                 "at each size. As in 004_dab40fe45003313a.txt Fig. 5 and Fig. 14.",
                 src ? src : "?", family, v->bw_c[MODEL_LEVEL_DRAM]->name, nser);
        rp_chart_add(cs, o, &c, &s, &dat);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&plot);
    }
    free(pts);
}

int rp_build_charts(const struct rp_data *d, struct rp_out *o, struct rp_chart **out, int *n)
{
    static const char *const precs[] = {"fp32", "fp64", "fp16", "bf16"};
    struct rp_charts cs;
    memset(&cs, 0, sizeof cs);
    rp_buf_puts(&cs.all, "# all.gp - draws every chart of the report: `gnuplot all.gp`\n");
    for (int i = 0; i < d->ndevs && cs.rc == RK_OK; i++) {
        rp_roofline_charts(d, i, &cs, o);
        if (cs.rc == RK_OK)
            latency_chart(d, i, &cs, o);
        for (int f = 0; f < d->nfamilies && cs.rc == RK_OK; f++) {
            const char *fam = d->families[f];
            if (strcmp(fam, "cublas"))
                family_charts(d, i, fam, &cs, o);
            if (strncmp(fam, "tsm2", 4) == 0 || strncmp(fam, "ism2", 4) == 0)
                for (int p = 0; p < 4 && cs.rc == RK_OK; p++)
                    bw_chart(d, i, fam, precs[p], &cs, o);
        }
    }
    if (cs.rc == RK_OK)
        rp_gpu_charts(d, &cs, o);
    for (int j = 0; j < d->nmodels && cs.rc == RK_OK; j++)
        predmeas_chart(d, d->models[j], &cs, o);
    if (cs.rc == RK_OK && cs.all.oom)
        cs.rc = rk_error(RK_ENOMEM, "out of memory writing the charts");
    if (cs.rc == RK_OK)
        cs.rc = rp_out_write(o, "plots/all.gp", cs.all.p, cs.all.len);
    rp_buf_free(&cs.all);
    if (cs.rc != RK_OK) {
        free(cs.c);
        return cs.rc;
    }
    *out = cs.c;
    *n = cs.n;
    return RK_OK;
}
