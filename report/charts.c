/*
 * charts.c - the report's charts: one gnuplot script and one data file per chart
 * in plots/, written so that a user can edit a script and re-plot it alone
 * (`gnuplot NAME.gp` in plots/), and plots/all.gp that loads them all, which the
 * report runs in ONE gnuplot process (gnuplot.c).
 *
 *   roofline-d<ID>[-<precision>]   roofline.c: the overview's roofline of each device
 *   roofline-gpus, peer-<name>, ranks-<k>   gpucharts.c: several GPUs and ranks, when there
 *   predmeas-<model>       predicted against measured time, log-log, y = x and +-10%
 *   latency-d<ID>          the pointer-chase curve with the plateaus marked
 *   gflops-d<ID>-<family>  GFLOP/s against N, cuBLAS beside (003 Fig. 2)
 *   speedup-d<ID>-<family> speedup over cuBLAS against N (000 Fig. 10)
 *   bw-d<ID>-<family>-<p>  TSM2 / ISM2 memory-bandwidth utilisation against cuBLAS
 *                          (004 Fig. 5, Fig. 14)
 *   eff-d<ID>-<family>-<p>-m<M>  TSM2 / ISM2 effective bandwidth (A, B, C once) against n at
 *                          one m, the reference cuBLAS call beside, the copy ceiling drawn;
 *                          for the m swept over n (2+ values), at most EFF_CHARTS_MAX of them
 *
 * Assumes: only measurements that passed verification (or were not checked) are
 * drawn: a result that failed its check is never charted. A roofline point's height and
 * intensity take one flop count (rp_meas.pt: the counters' executed operations of the busiest
 * pipe, or the analytic useful flops), the size charts the useful (analytic) GFLOP/s. A
 * prediction without a time is a model's reason for not applying: never drawn. Data files use '?'
 * for a missing value. Every point carries a title and a link to its table row (marks.c): each
 * data block of points has a "# points:" heading and its own notitle clause, its key entry
 * another clause that draws nothing. Text is drawn with the svg terminal's noenhanced mode, so
 * names with '_' print as they are.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

static void add_marked(struct rp_charts *cs, struct rp_out *o, struct rp_chart *c,
                       struct rp_marks *mk, struct rp_buf *s, struct rp_buf *dat);

/* ------------------------------------------------- predicted vs measured */

/* The plot area of a predicted-against-measured chart (square, key at the right), about [px]:
 * for thinning only. At most PREDMEAS_POINTS_MAX points are drawn (the longest-running; one chart
 * per model: a database of 10,000 measurements and eight models would draw 80,000); the
 * accuracy table and the measurement tables hold every prediction. */
enum { PREDMEAS_PX = 520, PREDMEAS_POINTS_MAX = 600 };

static void predmeas_chart(const struct rp_data *d, const char *model, struct rp_charts *cs,
                           struct rp_out *o)
{
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, title = {0};
    struct rp_plot plot = {{0}, 0};
    struct rp_thin th = {0, NULL, NULL};
    const struct rp_meas **v = NULL;
    double lo = INFINITY, hi = 0;
    int nblk = 0, npts = 0, in10 = 0, nv = 0, merged = 0, drawn = 0, capped = 0, *mcount = NULL;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "predmeas-%s", model);
    rp_file_safe(c.name);
    snprintf(c.title, sizeof c.title, "Predicted against measured time: %s model", model);
    c.section = RP_SEC_MODEL;
    c.marks = calloc(1, sizeof *c.marks);
    v = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *v);
    mcount = calloc((size_t)(d->nrows ? d->nrows : 1), sizeof *mcount);
    if (!c.marks || !v || !mcount || rp_thin_init(&th, d->nrows) != RK_OK) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    /* the points with a prediction, longest first (the one drawn where several meet) */
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        const struct db_prediction *p;
        if (!x->charted || !(p = rp_prediction(x, model)) || !(p->predicted_time_ns > 0))
            continue;
        double ps = p->predicted_time_ns * 1e-9;
        v[nv++] = x;
        lo = fmin(lo, fmin(x->pt.time_s, ps));
        hi = fmax(hi, fmax(x->pt.time_s, ps));
        in10 += fabs(ps / x->pt.time_s - 1.0) <= 0.1;
    }
    if (!(lo < hi)) {
        lo = lo < INFINITY ? lo / 2 : 1e-6;
        hi = lo * 4;
    }
    lo /= 1.3;
    hi *= 1.3;
    qsort((void *)v, (size_t)nv, sizeof *v, rp_cmp_time_desc);
    for (int i = 0; i < nv; i++) { /* thinning: one point per 3 px of a family, then a cap */
        int f = 0;
        while (f < d->nfamilies && strcmp(rp_family(v[i]), d->families[f]))
            f++;
        double ps = rp_prediction(v[i], model)->predicted_time_ns * 1e-9;
        int at = rp_thin_put(&th, f, PREDMEAS_PX * log(v[i]->pt.time_s / lo) / log(hi / lo),
                             PREDMEAS_PX * log(ps / lo) / log(hi / lo), i);
        if (at >= 0) { /* counted in the title of the point there, unless that one is left out */
            mcount[at] += mcount[at] >= 0;
            mcount[i] = -1;
            merged += mcount[at] >= 0;
            capped += mcount[at] < 0;
        } else if (++drawn > PREDMEAS_POINTS_MAX) {
            mcount[i] = -1;
            capped++;
        }
    }
    rp_buf_puts(&dat, "# measured[s] predicted[s] id; one block per family; a measurement within 3 "
                      "px of a longer-running one of its family is counted in its title, not "
                      "listed\n");
    for (int f = 0; f < d->nfamilies; f++) {
        int n = 0, from = c.marks->n;
        for (int i = 0; i < nv; i++) {
            const struct rp_meas *x = v[i];
            if (mcount[i] < 0 || strcmp(rp_family(x), d->families[f]))
                continue;
            if (n++ == 0)
                rp_buf_printf(&dat, "# points: family %s\n",
                              *d->families[f] ? d->families[f] : "-");
            rp_dat_num(&dat, x->pt.time_s);
            rp_dat_num(&dat, rp_prediction(x, model)->predicted_time_ns * 1e-9);
            rp_buf_printf(&dat, " %lld\n", (long long)x->row->m.id);
            title.len = 0;
            rp_point_title(d, x, -1, model, mcount[i], &title);
            rp_mark(c.marks, x->row->m.id, title.p ? title.p : "");
        }
        if (!n)
            continue;
        rp_buf_puts(&dat, "\n\n");
        rp_marks_bind(c.marks, from, rp_plot_next(&plot) + 2); /* after the band and y = x */
        rp_buf_printf(&plot.b, "'%s.dat' index %d using 1:2 with points pt 7 ps 0.6 lc %d notitle",
                      c.name, nblk, nblk + 1);
        rp_plot_next(&plot);
        rp_buf_printf(&plot.b, "1/0 with points pt 7 ps 0.6 lc %d title ", nblk + 1);
        rp_gp_str(&plot.b, *d->families[f] ? d->families[f] : "(no family)");
        nblk++;
        npts += n;
    }
    rp_gp_head(&s, &c, "a model's predicted time against the measured time");
    rp_buf_printf(
        &s,
        "set logscale xy\nset xlabel 'measured time [s]'\nset ylabel 'predicted time [s]'\n"
        "set format x '%%.0e'\nset format y '%%.0e'\nset size ratio -1\n"
        "lo = %.4g\nhi = %.4g\nset xrange [lo:hi]\nset yrange [lo:hi]\nset samples 200\n"
        "plot '+' using 1:(0.9*$1):(1.1*$1) with filledcurves fc rgb '#cfe3f7' "
        "fs solid 1.0 noborder title '±10%%', \\\n"
        "     x with lines lc rgb '#333333' lw 1 title 'y = x'%s%s\n",
        lo, hi, plot.n ? ", \\\n     " : "", plot.n ? plot.b.p : "");
    snprintf(c.caption, sizeof c.caption,
             "%d measurement%s, coloured by family; the band is y = x ±10%%: %d of them (%.0f%%) "
             "lie in it.%s Hover a point for its kernel and times; click it for its row.",
             nv, nv == 1 ? "" : "s", in10, nv ? 100.0 * in10 / nv : 0.0,
             merged ? " Points within 3 px of a longer-running one of their family are counted "
                      "in its title, not drawn."
                    : "");
    if (capped) {
        size_t l = strlen(c.caption);
        snprintf(c.caption + l, sizeof c.caption - l,
                 " The %d shortest-running of them beyond %d points are left out (the tables "
                 "hold them).",
                 capped, PREDMEAS_POINTS_MAX);
    }
    if (c.marks->oom || title.oom) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    if (npts) { /* a model that applies to no charted row (each holds its reason): no chart */
        rp_chart_add(cs, o, &c, &s, &dat);
        if (cs->rc == RK_OK)
            c.marks = NULL;
    }
out:
    if (c.marks)
        rp_marks_release(c.marks);
    free(c.marks);
    free((void *)v);
    free(mcount);
    rp_thin_free(&th);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&title);
    rp_buf_free(&plot.b);
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
    struct rp_buf s = {0}, dat = {0}, title = {0};
    char lbl[300];
    double ratio = NAN; /* cycles per ns along the curve (median of the points') */
    int nplat = 0;
    memset(&c, 0, sizeof c);
    struct rp_marks *mk = calloc(1, sizeof *mk);
    if (!mk) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing the latency chart");
        return;
    }
    snprintf(c.name, sizeof c.name, "latency-d%lld", (long long)v->a.dev.id);
    snprintf(c.title, sizeof c.title, "Memory latency of %s",
             rp_dev_label(d, dev, lbl, sizeof lbl));
    c.section = RP_SEC_DEVICE;
    rp_gp_head(&s, &c, "the pointer-chase latency curve with its plateaus");
    rp_buf_puts(&dat, "# block 0: points: footprint[bytes] stride[bytes] cycles ns\n");
    double *r = malloc((size_t)(v->a.npts ? v->a.npts : 1) * sizeof *r);
    int nr = 0;
    for (int i = 0; i < v->a.npts; i++) {
        const struct db_latency_point *p = &v->a.pts[i];
        rp_buf_printf(&dat, "%lld %lld", (long long)p->footprint_bytes, (long long)p->stride_bytes);
        rp_dat_num(&dat, p->cycles);
        rp_dat_num(&dat, p->ns);
        rp_buf_puts(&dat, "\n");
        title.len = 0;
        rp_buf_printf(&title,
                      "footprint %lld bytes (%.4g MiB), stride %lld bytes\n%.4g cycles, "
                      "%.4g ns per dependent load",
                      (long long)p->footprint_bytes, (double)p->footprint_bytes / (1 << 20),
                      (long long)p->stride_bytes, p->cycles, p->ns);
        rp_mark(mk, 0, title.p ? title.p : "");
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
    if (!nplat && !v->a.npts) { /* nothing to draw: the page says what is missing */
        rp_marks_release(mk);
        free(mk);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&title);
        return;
    }
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
    /* clause 1: the points (titled, marks.c), clause 2 their key entry */
    rp_marks_bind(mk, 0, 1);
    rp_buf_printf(&s,
                  "plot '%s.dat' index 0 using 1:3 with linespoints pt 7 ps 0.5 lc rgb '#1f77b4' "
                  "notitle, \\\n     1/0 with linespoints pt 7 ps 0.5 lc rgb '#1f77b4' title "
                  "'pointer chase'",
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
    mk->oom |= title.oom;
    add_marked(cs, o, &c, mk, &s, &dat);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&title);
}

/* ---------------------------------------------- series against size charts */

/* One point of a series: the best value of a (series, shape), and the measurement that gave it. */
struct spt {
    char key[128];
    double x, y;
    const struct rp_meas *m;
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
            if (pts[i].y > pts[k - 1].y) {
                pts[k - 1].y = pts[i].y;
                pts[k - 1].m = pts[i].m;
            }
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

/* What a point of a series chart is (its title's last line). */
enum series_what { SER_GFLOPS, SER_SPEEDUP, SER_BW, SER_EFF };

/* The pixels of a series chart's plot area, about (960 wide, key at the right): for thinning. */
enum { SERIES_PX_W = 760, SERIES_PX_H = 520 };

/* Where point (x, y) lands, about, on a chart of pts[0..n) (log x as size_axis draws it). */
struct series_axes {
    int xlog, ylog;
    double xlo, xhi, ylo, yhi;
};

static struct series_axes series_axes(const struct spt *pts, int n, int ylog_ok)
{
    struct series_axes a = {0, 0, INFINITY, 0, INFINITY, 0};
    for (int i = 0; i < n; i++) {
        a.xlo = fmin(a.xlo, pts[i].x);
        a.xhi = fmax(a.xhi, pts[i].x);
        a.ylo = fmin(a.ylo, pts[i].y);
        a.yhi = fmax(a.yhi, pts[i].y);
    }
    a.xlog = n && a.xlo > 0 && a.xhi / a.xlo > 16;
    a.ylog = ylog_ok && n && a.ylo > 0 && a.yhi / a.ylo > 20;
    if (!a.ylog && !ylog_ok)
        a.ylo = 0; /* the charts that start at 0 */
    return a;
}

static void series_px(const struct series_axes *a, double x, double y, double *px, double *py)
{
    double fx = a->xlog ? log(x / a->xlo) / log(a->xhi / a->xlo) : (x - a->xlo) / (a->xhi - a->xlo);
    double fy = a->ylog ? log(y / a->ylo) / log(a->yhi / a->ylo) : (y - a->ylo) / (a->yhi - a->ylo);
    *px = SERIES_PX_W * (isfinite(fx) ? fx : 0);
    *py = SERIES_PX_H * (isfinite(fy) ? fy : 0);
}

/* Writes blocks of sorted points and their marks; plot clauses into plot (the clause numbers
 * count from clause0 + 1). Of the points of a series within the same RP_THIN_CELL px of x only
 * the best is drawn: its title counts the others (a sweep of thousands of sizes draws as its
 * upper envelope, not as a scribble). Returns the number of series; *merged the points not
 * drawn. */
static int write_series(const struct rp_data *d, const struct spt *pts, int n, const char *name,
                        struct rp_buf *dat, struct rp_plot *plot, int clause0, struct rp_marks *mk,
                        enum series_what what, int *merged)
{
    /* gnuplot cycles 8 colours, so series of different kernels can share one; each
     * kernel (the key's first word) gets its own point shape as well. */
    static const int shapes[] = {7, 5, 9, 11, 13, 15, 3, 1};
    char kernels[8][64];
    int nk = 0, blk = 0;
    int *more = calloc((size_t)(n ? n : 1), sizeof *more); /* -1: not drawn; else merged */
    struct rp_buf title = {0};
    const struct series_axes ax = series_axes(pts, n, what == SER_SPEEDUP);
    *merged = 0;
    if (!more) {
        mk->oom = 1;
        return 0;
    }
    for (int i = 0; i < n;) {
        int j = i, pt, ki, from = mk->n, last = i;
        double lx = 0;
        size_t w = strcspn(pts[i].key, " ");
        for (ki = 0; ki < nk; ki++)
            if (strlen(kernels[ki]) == w && strncmp(kernels[ki], pts[i].key, w) == 0)
                break;
        if (ki == nk && nk < 8)
            snprintf(kernels[nk++], sizeof kernels[0], "%.*s", (int)(w < 63 ? w : 63), pts[i].key);
        pt = shapes[ki % 8];
        /* thinning: one point per RP_THIN_CELL px of x in a series, the best there (the
         * series already keeps the best over parameters at each size) */
        for (; j < n && strcmp(pts[j].key, pts[i].key) == 0; j++) {
            double px, py;
            series_px(&ax, pts[j].x, pts[j].y, &px, &py);
            (void)py;
            if (j > i && floor(px / RP_THIN_CELL) == floor(lx / RP_THIN_CELL)) {
                int keep = pts[j].y > pts[last].y ? j : last, drop = keep == j ? last : j;
                more[keep] = more[last] + 1;
                more[drop] = -1;
                last = keep;
                (*merged)++;
                continue;
            }
            last = j;
            lx = px;
        }
        rp_buf_printf(dat, "# points: %s\n", pts[i].key);
        for (int k = i; k < j; k++) {
            const struct rp_meas *x = pts[k].m;
            if (more[k] < 0)
                continue;
            rp_buf_printf(dat, "%.9g %.9g %lld\n", pts[k].x, pts[k].y, (long long)x->row->m.id);
            title.len = 0;
            rp_point_title(d, x, -1, x->dev >= 0 ? d->devs[x->dev].model : NULL, 0, &title);
            if (what == SER_SPEEDUP)
                rp_buf_printf(&title, "\nspeedup over cuBLAS: %.3gx", pts[k].y);
            else if (what == SER_BW)
                rp_buf_printf(&title, "\nmemory throughput: %.3g %% of DRAM bandwidth (%s)",
                              pts[k].y, x->bw_src);
            else if (what == SER_EFF)
                rp_buf_printf(&title, "\neffective bandwidth: %.4g GB/s (A, B, C once)", pts[k].y);
            if (more[k] > 0)
                rp_buf_printf(&title, "\nthe best of %d sizes of this series within %d px",
                              more[k] + 1, RP_THIN_CELL);
            rp_mark(mk, x->row->m.id, title.p ? title.p : "");
        }
        rp_buf_puts(dat, "\n\n");
        int cub = strncmp(pts[i].key, "cuBLAS", 6) == 0;
        for (int key = 0; key < 2; key++) { /* the points, then their key entry */
            int cl = rp_plot_next(plot);
            if (key == 0)
                rp_marks_bind(mk, from, clause0 + cl);
            if (key)
                rp_buf_puts(&plot->b, "1/0");
            else
                rp_buf_printf(&plot->b, "'%s.dat' index %d using 1:2", name, blk);
            rp_buf_printf(&plot->b, " with linespoints pt %d ps 0.6 lw %s %s", cub ? 4 : pt,
                          cub ? "1.5 dt 2" : "1.5", cub ? "lc rgb '#000000'" : "");
            if (!cub)
                rp_buf_printf(&plot->b, "lc %d", blk % 8 + 1); /* the same colour for both */
            if (key) {
                rp_buf_puts(&plot->b, " title ");
                rp_gp_str(&plot->b, pts[i].key);
            } else {
                rp_buf_puts(&plot->b, " notitle");
            }
        }
        blk++;
        i = j;
    }
    mk->oom |= title.oom;
    rp_buf_free(&title);
    free(more);
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

/* Says in c's caption how many points thinning left undrawn, and that points have titles. */
static void thinned_caption(struct rp_chart *c, int merged)
{
    size_t n = strlen(c->caption);
    if (merged)
        snprintf(c->caption + n, sizeof c->caption - n,
                 " %d point%s within %d px of x of a better one of their series are counted in "
                 "its title, not drawn.",
                 merged, merged == 1 ? "" : "s", RP_THIN_CELL);
    n = strlen(c->caption);
    snprintf(c->caption + n, sizeof c->caption - n,
             " Hover a point for its kernel and numbers; click it for its row.");
}

/* Adds chart c with its marks mk (taken) or frees them. */
static void add_marked(struct rp_charts *cs, struct rp_out *o, struct rp_chart *c,
                       struct rp_marks *mk, struct rp_buf *s, struct rp_buf *dat)
{
    c->marks = mk;
    if (mk->oom && cs->rc == RK_OK)
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c->name);
    rp_chart_add(cs, o, c, s, dat);
    if (cs->rc != RK_OK) {
        rp_marks_release(mk);
        free(mk);
    }
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
        g[ng].m = x;
        g[ng++].y = x->gflops;
        const struct rp_meas *cb = rp_cublas_at(d, x);
        if (cb && cb->gflops > 0) {
            series_key(x, "cuBLAS", g[ng].key, sizeof g[ng].key);
            g[ng].x = (double)x->row->m.m;
            g[ng].m = cb;
            g[ng++].y = cb->gflops;
            sp[nsp] = g[ng - 2];
            sp[nsp++].y = x->gflops / cb->gflops;
        }
    }
    if (ng == 0)
        goto out;
    ng = best_per_x(g, ng);
    nsp = best_per_x(sp, nsp);

    for (int pass = 0; pass < 2; pass++) {
        struct rp_chart c;
        struct rp_buf s = {0}, dat = {0};
        struct rp_plot plot = {{0}, 0};
        const struct spt *pts = pass ? sp : g;
        int n = pass ? nsp : ng;
        if (n == 0)
            continue;
        struct rp_marks *mk = calloc(1, sizeof *mk);
        if (!mk) {
            cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
            goto out;
        }
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
                      "# m[=N for square shapes] %s id; one block per series (best over "
                      "parameters)\n",
                      pass ? "speedup[GFLOP/s / cuBLAS GFLOP/s]" : "GFLOP/s");
        int merged, nser = write_series(d, pts, n, c.name, &dat, &plot, 0, mk,
                                        pass ? SER_SPEEDUP : SER_GFLOPS, &merged);
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
        rp_buf_printf(&s, "plot %s%s\n", plot.b.p,
                      pass ? ", \\\n     1 with lines dt 2 lc rgb '#888888' title 'cuBLAS = 1'"
                           : "");
        snprintf(c.caption, sizeof c.caption,
                 pass ? "Useful GFLOP/s (analytic flops, 2mnk for a GEMM, over the median time) "
                        "of each kernel of %s divided by cuBLAS's: the faster call (Sgemm/Dgemm or "
                        "GemmEx) of the same run, shape and precision (%d series; the best "
                        "parameters at each size), as in "
                        "000_51b464feae8766fa.txt Fig. 10."
                      : "Useful GFLOP/s (analytic flops, 2mnk for a GEMM, over the median time) "
                        "of each kernel of %s against N with cuBLAS (dashed) at the same "
                        "shapes (%d series; the best parameters at each size), as in "
                        "003_d5ffc223df97ef85.txt Fig. 2.",
                 *family ? family : "(no family)", nser);
        thinned_caption(&c, merged);
        add_marked(cs, o, &c, mk, &s, &dat);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&plot.b);
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
        if (x->dev != dev || !x->charted || strcmp(rp_family(x), family) || !x->row->m.precision ||
            strcmp(x->row->m.precision, prec) || !(x->bw_util > 0))
            continue;
        series_key(x, x->row->m.kernel, pts[n].key, sizeof pts[n].key);
        pts[n].x = (double)x->row->m.m;
        pts[n].m = x;
        pts[n++].y = 100.0 * x->bw_util / peak;
        if (!src)
            src = x->bw_src;
        else if (strcmp(src, x->bw_src))
            src = "mixed sources";
        const struct rp_meas *cb = rp_cublas_at(d, x);
        if (cb && cb->gflops > 0 && cb->bw_util > 0) {
            series_key(x, "cuBLAS", pts[n].key, sizeof pts[n].key);
            pts[n].x = (double)x->row->m.m;
            pts[n].m = cb;
            pts[n++].y = 100.0 * cb->bw_util / peak;
        }
    }
    if (n) {
        struct rp_chart c;
        struct rp_buf s = {0}, dat = {0};
        struct rp_plot plot = {{0}, 0};
        struct rp_marks *mk = calloc(1, sizeof *mk);
        if (!mk) {
            cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
            free(pts);
            return;
        }
        n = best_per_x(pts, n);
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "bw-d%lld-%s-%s", (long long)v->a.dev.id, family, prec);
        rp_file_safe(c.name);
        snprintf(c.title, sizeof c.title, "%s %s: memory bandwidth utilisation on %s", family, prec,
                 rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_TSM2;
        snprintf(c.family, sizeof c.family, "%s", family);
        rp_gp_head(&s, &c, "memory bandwidth utilisation against cuBLAS");
        rp_buf_puts(&dat, "# m %-of-measured-DRAM-bandwidth id; one block per series\n");
        int merged, nser = write_series(d, pts, n, c.name, &dat, &plot, 0, mk, SER_BW, &merged);
        size_axis(&s, pts, n);
        rp_buf_printf(&s,
                      "peak = %.6g  # GB/s: %s\nset xlabel 'm'\n"
                      "set ylabel '%% of measured DRAM bandwidth (%.0f GB/s)'\nset yrange [0:*]\n"
                      "plot %s\n",
                      peak, v->bw_c[MODEL_LEVEL_DRAM]->name, peak, plot.b.p);
        snprintf(c.caption, sizeof c.caption,
                 "Memory throughput (%s) of each %s kernel and of cuBLAS at the same shapes, as a "
                 "percentage of the measured DRAM bandwidth (%s), %d series; the best parameters "
                 "at each size. As in 004_dab40fe45003313a.txt Fig. 5 and Fig. 14.",
                 src ? src : "?", family, v->bw_c[MODEL_LEVEL_DRAM]->name, nser);
        thinned_caption(&c, merged);
        add_marked(cs, o, &c, mk, &s, &dat);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&plot.b);
    }
    free(pts);
}

/* The key of x's series on an effective-bandwidth chart (n is its x axis): kernel, precision and
 * k where it is not m (ISM2's k sweep). */
static void eff_key(const struct rp_meas *x, const char *kernel, char *key, size_t len)
{
    const struct db_measurement *m = &x->row->m;
    if (m->k != m->m)
        snprintf(key, len, "%s %s k=%lld", kernel, m->precision, (long long)m->k);
    else
        snprintf(key, len, "%s %s", kernel, m->precision);
}

/* Effective-bandwidth charts per device, family and precision: one per m swept over n, the
 * first EFF_CHARTS_MAX such m in row order (the grids have 3 each; a database of thousands of
 * shapes at one n each draws none). */
enum { EFF_CHARTS_MAX = 8 };

/* 1 when x is a point of family's effective-bandwidth charts in precision prec on device dev. */
static int eff_point(const struct rp_meas *x, int dev, const char *family, const char *prec)
{
    return x->dev == dev && x->charted && !strcmp(rp_family(x), family) && x->row->m.precision &&
           !strcmp(x->row->m.precision, prec) && x->eff_gbs > 0;
}

/* p: the point of series (a kernel's name, "cuBLAS", "floor (move)") at x's n drawn from
 * measurement at; 1, or 0 when at is NULL or has no effective bandwidth. */
static int eff_add(struct spt *p, const struct rp_meas *x, const char *series,
                   const struct rp_meas *at)
{
    if (!at || !(at->eff_gbs > 0))
        return 0;
    eff_key(x, series, p->key, sizeof p->key);
    p->x = (double)x->row->m.n;
    p->m = at;
    p->y = at->eff_gbs;
    return 1;
}

/* TSM2 / ISM2 effective bandwidth against n, one chart per m (004 Fig. 5, Fig. 14 count A, B
 * and C once): each kernel, the cuBLAS call that judges it (rp_cublas_at) and its floor
 * (rp_floor_at: the kernel move, the shape's bytes alone), under the copy ceiling
 * (analysis_copy_ceiling); a floor below that ceiling says a plain stream of the shape's bytes
 * does not reach it at that size. */
static void eff_charts(const struct rp_data *d, int dev, const char *family, const char *prec,
                       struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    const struct db_ceiling *copy_c = analysis_copy_ceiling(&v->a);
    const double copy = copy_c ? analysis_ceiling_si(copy_c) * 1e-9 : NAN;
    struct spt *pts = malloc((size_t)3 * (size_t)(d->nrows ? d->nrows : 1) * sizeof *pts);
    char lbl[300];
    if (!pts) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
        return;
    }
    for (int first = 0, drawn = 0; first < d->nrows && cs->rc == RK_OK && drawn < EFF_CHARTS_MAX;
         first++) {
        const struct rp_meas *f = &d->meas[first];
        long long mm, n0 = -1;
        int n = 0, seen = 0, swept = 0;
        if (!eff_point(f, dev, family, prec))
            continue;
        mm = f->row->m.m;
        for (int i = 0; i < first && !seen; i++) /* one chart per m: at its first row */
            seen = d->meas[i].row->m.m == mm && eff_point(&d->meas[i], dev, family, prec);
        for (int i = first; i < d->nrows && !seen && !swept; i++) /* two n or more at this m */
            if (d->meas[i].row->m.m == mm && eff_point(&d->meas[i], dev, family, prec)) {
                swept = n0 >= 0 && d->meas[i].row->m.n != n0;
                n0 = d->meas[i].row->m.n;
            }
        if (seen || !swept)
            continue;
        drawn++;
        for (int i = first; i < d->nrows; i++) {
            const struct rp_meas *x = &d->meas[i];
            if (x->row->m.m != mm || !eff_point(x, dev, family, prec))
                continue;
            n += eff_add(&pts[n], x, x->row->m.kernel, x);
            n += eff_add(&pts[n], x, "cuBLAS", rp_cublas_at(d, x));
            n += eff_add(&pts[n], x, "floor (move)", rp_floor_at(d, x));
        }
        struct rp_chart c;
        struct rp_buf sc = {0}, dat = {0};
        struct rp_plot plot = {{0}, 0};
        struct rp_marks *mk = calloc(1, sizeof *mk);
        int merged, nser;
        if (!mk) {
            cs->rc = rk_error(RK_ENOMEM, "out of memory drawing family %s", family);
            break;
        }
        n = best_per_x(pts, n);
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "eff-d%lld-%s-%s-m%lld", (long long)v->a.dev.id, family,
                 prec, mm);
        rp_file_safe(c.name);
        snprintf(c.title, sizeof c.title, "%s %s: effective bandwidth against n, m = %lld, on %s",
                 family, prec, mm, rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_TSM2;
        snprintf(c.family, sizeof c.family, "%s", family);
        rp_gp_head(&sc, &c, "effective bandwidth against n");
        rp_buf_puts(&dat, "# n effective-GB/s id; one block per series\n");
        nser = write_series(d, pts, n, c.name, &dat, &plot, 0, mk, SER_EFF, &merged);
        rp_buf_puts(&sc, "set xlabel 'n'\nset ylabel 'effective bandwidth [GB/s]'\n"
                         "set xrange [0:*]\nset yrange [0:*]\n");
        if (copy_c) {
            rp_buf_printf(&sc, "copy = %.6g  # GB/s: %s\n", copy, copy_c->name);
            rp_buf_printf(&sc,
                          "plot %s, \\\n     copy with lines dt 2 lc rgb '#888888' title "
                          "'copy ceiling %.0f GB/s'\n",
                          plot.b.p, copy);
        } else {
            rp_buf_printf(&sc, "plot %s\n", plot.b.p);
        }
        snprintf(c.caption, sizeof c.caption,
                 "Effective bandwidth of each %s kernel, of its cuBLAS reference (the faster "
                 "call of the same run) and, where the run measured one, of its floor (the "
                 "kernel move: the shape's bytes moved, nothing computed) at m = %lld: A, B and "
                 "C each counted once, (mk + kn + mn) x element size over the median time, as "
                 "in 004_dab40fe45003313a.txt Fig. 5 and Fig. 14; %d series, the best "
                 "parameters at each n. %s",
                 family, mm, nser,
                 copy_c ? "Dashed: the copy ceiling (bw_dram_copy, bytes read + written)."
                        : "No copy ceiling in the database: run 'roofkit probe --only bandwidth'.");
        thinned_caption(&c, merged);
        add_marked(cs, o, &c, mk, &sc, &dat);
        rp_buf_free(&sc);
        rp_buf_free(&dat);
        rp_buf_free(&plot.b);
    }
    free(pts);
}

void rp_free_charts(struct rp_chart *c, int n)
{
    for (int i = 0; i < n; i++)
        if (c[i].marks) {
            rp_marks_release(c[i].marks);
            free(c[i].marks);
        }
    free(c);
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
                for (int p = 0; p < 4 && cs.rc == RK_OK; p++) {
                    bw_chart(d, i, fam, precs[p], &cs, o);
                    if (cs.rc == RK_OK)
                        eff_charts(d, i, fam, precs[p], &cs, o);
                }
        }
    }
    if (cs.rc == RK_OK)
        rp_gpu_charts(d, &cs, o);
    if (cs.rc == RK_OK)
        rp_energy_charts(d, &cs, o);
    if (cs.rc == RK_OK)
        rp_compare_charts(d, &cs, o);
    for (int j = 0; j < d->nmodels && cs.rc == RK_OK; j++)
        predmeas_chart(d, d->models[j], &cs, o);
    if (cs.rc == RK_OK && cs.all.oom)
        cs.rc = rk_error(RK_ENOMEM, "out of memory writing the charts");
    if (cs.rc == RK_OK)
        cs.rc = rp_out_write(o, "plots/all.gp", cs.all.p, cs.all.len);
    rp_buf_free(&cs.all);
    if (cs.rc != RK_OK) {
        rp_free_charts(cs.c, cs.n);
        return cs.rc;
    }
    *out = cs.c;
    *n = cs.n;
    return RK_OK;
}
