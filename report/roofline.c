/*
 * roofline.c - the overview's roofline of each device (internal.h, rp_roofline_charts), the
 * first chart of the report:
 *
 *   roofline-d<ID>          every selected measurement of the device on one log-log roofline:
 *                           at its DRAM intensity (filled marker) and, where counters measured
 *                           them, at its L2, L1 and shared intensity (open marker of the same
 *                           colour), as the hierarchical roofline of Nsight Compute draws them;
 *                           one series per family, profiled kernels one per program, each with
 *                           its own colour and marker; the kernels of the overview's table
 *                           numbered (overview.c) and their points across levels joined
 *   roofline-d<ID>-<prec>   the same, one chart per precision (fp64, fp32 and tf32, fp16 and
 *                           bf16, fp8 and int8) when one chart would hold more than 8 ceilings:
 *                           each with the bandwidths and that precision's compute ceilings, and
 *                           the measurements judged in it
 *
 * Ceilings are labelled on their lines, not in the key: bandwidths along their slope, compute
 * ceilings at the right end; measured ones dark, the datasheet's light and dashed. The key lists
 * the series only. Every point carries a title and a link to its row (marks.c).
 *
 * Size: a chart of 10,000 measurements with counters would draw 40,000 points. Points of one
 * series and level that fall within 3 pixels of one already drawn (in the order of time taken,
 * longest first) are not drawn again: the drawn one's title counts them. At most
 * ROOFLINE_POINTS_MAX points are drawn; beyond that the shortest measurements' points are left
 * out, and the caption says how many (their rows are in the tables).
 *
 * A point's height and intensity take one flop count (rp_meas.pt: the counters' executed
 * operations of the busiest pipe, or the analytic useful flops). The layout is fixed in pixels
 * (margins set at screen positions), so that labels and the thinning know where things land.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

enum {
    CW = 960,       /* chart width [px] */
    PLOT_H = 560,   /* plot area height [px] */
    CW_SPLIT = 720, /* the same of a chart per precision (two side by side on the page) */
    PLOT_H_SPLIT = 430,
    LM = 72,          /* left margin: y tics and label */
    RM = 24,          /* right margin */
    TM = 36,          /* top margin: the title */
    BM_BASE = 56,     /* bottom margin above the key: x tics and label */
    KEY_ROW = 17,     /* one row of the key [px] */
    KEY_COLS = 4,     /* entries per row of the key (3 on a chart per precision) */
    CEILINGS_MAX = 8, /* more ceilings than this on one chart: one chart per precision */
    LABEL_CHAR_W = 6, /* width of one character of a ceiling's label (font 9) [px] */
    LABEL_H = 12,     /* height of a label [px] */
    ROOFLINE_POINTS_MAX = 4000
};

static const char *const level_label[] = {"DRAM", "L2", "L1", "shared"};
/* A measurement's point at each level: its series' marker at DRAM (filled), open glyphs at the
 * others: triangle (L2), square (L1), diamond (shared). */
static const int level_pt[] = {0, 8, 4, 12};
/* Series: 10 colours by 6 filled markers, a colour and a marker per series. */
static const char *const ser_color[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
static const int ser_pt[] = {7, 5, 9, 13, 11, 15};
#define NCOLOR (int)(sizeof ser_color / sizeof ser_color[0])
#define NMARK  (int)(sizeof ser_pt / sizeof ser_pt[0])
static const char ceil_color[] = "#333333", ds_color[] = "#c4c4c4";

/* Which flops and bytes a roofline point stands on: every roofline caption says it. */
static const char flops_sentence[] =
    "Height and intensity: executed operations of the busiest pipe over the bytes the counters "
    "saw (counters), or the analytic useful flops over the analytic bytes (cost formula); never "
    "mixed.";

/* ------------------------------------------------------------ precisions */

static const struct {
    const char *key, *name;
} groups[] = {{"fp64", "fp64"},
              {"fp32", "fp32 and tf32"},
              {"fp16", "fp16 and bf16"},
              {"8bit", "fp8 and int8"},
              {"other", "other precisions"}};
enum { NGROUPS = sizeof groups / sizeof groups[0] };

/* The chart of a precision when one chart per precision is drawn. */
static int prec_group(const char *p)
{
    if (!p)
        return NGROUPS - 1;
    if (strcmp(p, "fp64") == 0)
        return 0;
    if (strcmp(p, "fp32") == 0 || strcmp(p, "tf32") == 0)
        return 1;
    if (strncmp(p, "fp16", 4) == 0 || strncmp(p, "bf16", 4) == 0)
        return 2;
    if (strcmp(p, "fp8") == 0 || strcmp(p, "int8") == 0)
        return 3;
    return NGROUPS - 1;
}

/* Is ceiling c a compute ceiling with a usable value? Its value [GFLOP/s] in *g. */
static int compute_ceiling(const struct db_ceiling *c, double *g)
{
    if (strcmp(c->kind, "compute") || c->peer_device_id)
        return 0;
    *g = analysis_unit_si(c->value, c->unit) * 1e-9;
    return isfinite(*g) && *g > 0;
}

/* ---------------------------------------------------------------- series */

/* A series: a family; the profiled kernels (no family) of one program; the other rows of no
 * family. Ordered by rank, then name; its colour and marker by its place. */
enum series_rank { SER_FAMILY = 0, SER_NO_FAMILY, SER_PROFILED };

struct series {
    char name[112];
    int rank;
    int n; /* its measurements on the chart being drawn */
};

static int cmp_series(const void *a, const void *b)
{
    const struct series *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

static int is_profiled(const struct rp_meas *x)
{
    return !x->row->m.family && x->row->m.source && strcmp(x->row->m.source, "profile") == 0;
}

/* x's series name into buf; returns its rank. */
static int row_series(const struct rp_data *d, const struct rp_meas *x, char *buf, size_t len)
{
    const char *f = rp_family(x);
    if (*f) {
        snprintf(buf, len, "%s", f);
        return SER_FAMILY;
    }
    if (is_profiled(x)) {
        char prog[96];
        rp_program_name(rp_capture_cmdline(d, x->row->m.capture_id), prog, sizeof prog);
        snprintf(buf, len, "profiled: %s", prog);
        return SER_PROFILED;
    }
    snprintf(buf, len, "(no family)");
    return SER_NO_FAMILY;
}

/* Is x drawn on device dev's roofline (at some level)? */
static int on_roofline(const struct rp_meas *x, int dev)
{
    if (x->dev != dev || !x->charted || !(x->point_gflops > 0))
        return 0;
    if (x->pt.intensity[MODEL_LEVEL_DRAM] > 0)
        return 1;
    for (int l = 1; x->pt.counters && l < MODEL_LEVEL_COUNT; l++)
        if (x->pt.intensity[l] > 0)
            return 1;
    return 0;
}

/* The series of device dev's rooflines: *out (malloc'd, in order; NULL when none) and idx[i],
 * the series of row i (-1: not drawn). Returns how many, or -1 when out of memory. */
static int device_series(const struct rp_data *d, int dev, struct series **out, int *idx)
{
    struct series *ser = NULL, one;
    int n = 0, cap = 0;
    *out = NULL;
    memset(&one, 0, sizeof one);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < d->nrows; i++) {
            int k = 0;
            idx[i] = -1;
            if (!on_roofline(&d->meas[i], dev))
                continue;
            one.rank = row_series(d, &d->meas[i], one.name, sizeof one.name);
            while (k < n && strcmp(ser[k].name, one.name))
                k++;
            if (pass == 1) {
                idx[i] = k;
                continue;
            }
            if (k < n)
                continue;
            if (n == cap) {
                struct series *p = realloc(ser, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *p);
                if (!p) {
                    free(ser);
                    return -1;
                }
                ser = p;
            }
            ser[n++] = one;
        }
        if (pass == 0 && n > 1)
            qsort(ser, (size_t)n, sizeof *ser, cmp_series);
    }
    *out = ser;
    return n;
}

/* ------------------------------------------------------------ geometry */

/* A log-log chart's ranges, its plot area's size [px], and the pixel positions in it (origin
 * bottom left). */
struct loglog {
    double xlo, xhi, ylo, yhi;
    double w, h;
};

static double px_x(const struct loglog *r, double x)
{
    return r->w * log10(x / r->xlo) / log10(r->xhi / r->xlo);
}

static double px_y(const struct loglog *r, double y)
{
    return r->h * log10(y / r->ylo) / log10(r->yhi / r->ylo);
}

static double x_px(const struct loglog *r, double px)
{
    return r->xlo * pow(r->xhi / r->xlo, px / r->w);
}

static double y_px(const struct loglog *r, double py)
{
    return r->ylo * pow(r->yhi / r->ylo, py / r->h);
}

/* Widens [*xlo, *xhi] to show every ridge point of device v (top: the highest peak). */
static void ridge_range(const struct rp_dev *v, double top, double *xlo, double *xhi)
{
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        if (v->bw_c[l]) {
            *xlo = fmin(*xlo, top / (v->bw[l] * 1e-9) / 30);
            *xhi = fmax(*xhi, top / (v->bw[l] * 1e-9) * 10);
        }
}

/* A label's box [px], for collisions. */
struct box {
    double l, r, b, t;
};

static int hits(const struct box *placed, int n, const struct box *x)
{
    for (int i = 0; i < n; i++)
        if (x->l < placed[i].r && placed[i].l < x->r && x->b < placed[i].t && placed[i].b < x->t)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ ceilings */

/* What one chart draws: its ceilings (keep[i] for the compute ceilings of v), its points. */
struct chart_in {
    const struct rp_dev *v;
    int group; /* -1: every precision */
    const unsigned char *keep;
    double top;   /* the highest compute ceiling drawn (measured or datasheet) [GFLOP/s] */
    double bwtop; /* the highest bandwidth [GB/s] */
    int npeak;
};

/* "fp64_fma 33.4 TFLOP/s" */
static void peak_label(const struct db_ceiling *c, char *buf, size_t len)
{
    const char *n = strncmp(c->name, "peak_", 5) == 0 ? c->name + 5 : c->name;
    snprintf(buf, len, "%s %.4g %s", n, c->value, c->unit);
}

/*
 * The ceilings of one chart: values into script s (bw_<level> in GB/s, pk_<i> in GFLOP/s, the
 * datasheet's as *_ds; top, bwtop and the line functions), their lines into plot (datasheet
 * light and dashed first, then the measured ones), their labels into s.
 */
static void ceilings(struct rp_buf *s, struct rp_plot *plot, struct chart_in *ci,
                     const struct loglog *r)
{
    const struct rp_dev *v = ci->v;
    char n1[32], n2[32], txt[160];
    struct box placed[32];
    int nplaced = 0, lab = 1, lab_done = 0;
    rp_buf_puts(s, "# Measured ceilings (dark) and the datasheet's (light, dashed: *_ds; NaN = "
                   "none).\n# Bandwidths in GB/s, peaks in GFLOP/s.\n");
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        const struct db_ceiling *bc = v->bw_c[l];
        if (!bc)
            continue;
        rp_buf_printf(s, "bw_%s = %.6g    # %s\nbw_%s_ds = %s\n", model_level_name(l),
                      v->bw[l] * 1e-9, bc->name, model_level_name(l),
                      rp_gpv(n1, analysis_unit_si(bc->theoretical, bc->unit) * 1e-9));
    }
    for (int i = 0; i < v->a.nceil; i++) {
        const struct db_ceiling *pc = &v->a.ceil[i];
        double val;
        if (!ci->keep[i] || !compute_ceiling(pc, &val))
            continue;
        rp_buf_printf(s, "pk_%d = %.6g    # %s (%s)\npk_%d_ds = %s\n", i, val, pc->name,
                      pc->precision ? pc->precision : "", i,
                      rp_gpv(n1, analysis_unit_si(pc->theoretical, pc->unit) * 1e-9));
    }
    rp_buf_printf(s,
                  "top = %.6g    # the highest peak: bandwidth lines stop there\n"
                  "bwtop = %s  # the highest bandwidth: peaks start on its line\n"
                  "bwline(x, bw) = (bw == bw && x * bw <= top) ? x * bw : 1/0\n"
                  "pkline(x, p) = (p == p && (bwtop != bwtop || x * bwtop >= p)) ? p : 1/0\n",
                  ci->top, rp_gpv(n2, ci->bwtop > 0 ? ci->bwtop : NAN));
    for (int ds = 1; ds >= 0; ds--) { /* the datasheet's behind the measured ones */
        for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
            if (!v->bw_c[l])
                continue;
            rp_plot_next(plot);
            rp_buf_printf(&plot->b, "bwline(x, bw_%s%s) with lines lw %s lc rgb '%s' notitle",
                          model_level_name(l), ds ? "_ds" : "", ds ? "1 dt 2" : "1.6",
                          ds ? ds_color : ceil_color);
        }
        for (int i = 0; i < v->a.nceil; i++) {
            double val;
            if (!ci->keep[i] || !compute_ceiling(&v->a.ceil[i], &val))
                continue;
            rp_plot_next(plot);
            rp_buf_printf(&plot->b, "pkline(x, pk_%d%s) with lines lw %s lc rgb '%s' notitle", i,
                          ds ? "_ds" : "", ds ? "1 dt 2" : "1.6", ds ? ds_color : ceil_color);
        }
    }

    /* Compute labels: at the right end of their line, above it, else below it, else further
     * left; the highest first. */
    rp_buf_puts(s, "# Labels on the ceilings' lines\n");
    unsigned char *done = calloc((size_t)(v->a.nceil ? v->a.nceil : 1), 1);
    for (int k = 0; done && k < v->a.nceil; k++) {
        int best = -1;
        double bv = 0, val;
        for (int i = 0; i < v->a.nceil; i++)
            if (ci->keep[i] && !done[i] && compute_ceiling(&v->a.ceil[i], &val) && val > bv) {
                best = i;
                bv = val;
            }
        if (best < 0)
            break;
        done[best] = 1;
        peak_label(&v->a.ceil[best], txt, sizeof txt);
        double w = LABEL_CHAR_W * (double)strlen(txt), py = px_y(r, bv);
        struct box bx = {0, 0, 0, 0};
        int ok = 0;
        for (int t = 0; t < 8 && !ok; t++) {
            double right = r->w - 6 - (t / 2) * (w + 14);
            bx.r = right;
            bx.l = right - w;
            bx.b = t % 2 ? py - 3 - LABEL_H : py + 3;
            bx.t = bx.b + LABEL_H;
            ok = !hits(placed, nplaced, &bx) && bx.l > px_x(r, ci->bwtop > 0 ? bv / ci->bwtop : 0);
        }
        if (nplaced < 32)
            placed[nplaced++] = bx;
        rp_buf_printf(s, "set label %d ", lab++);
        rp_gp_str(s, txt);
        rp_buf_printf(s, " at %.6g, %.6g right front boxed font ',9' tc rgb '%s'\n", x_px(r, bx.r),
                      y_px(r, (bx.b + bx.t) / 2), ceil_color);
    }
    free(done);

    /* Bandwidth labels: along each line, just above it, low in the plot (or where the line
     * enters from the left); a label that would sit on a neighbour's moves up its line. */
    const double s_px = (r->h / log10(r->yhi / r->ylo)) / (r->w / log10(r->xhi / r->xlo));
    const double ang = atan(s_px), sn = sin(ang), cs = cos(ang);
    double lb[MODEL_LEVEL_COUNT][3]; /* placed: offset b of the line, label's py from, to */
    int nlb = 0;
    for (int k = 0; k < MODEL_LEVEL_COUNT; k++) {
        int l = -1; /* the highest bandwidth not labelled yet: the leftmost line */
        for (int q = 0; q < MODEL_LEVEL_COUNT; q++)
            if (v->bw_c[q] && !(lab_done & (1 << q)) && (l < 0 || v->bw[q] > v->bw[l]))
                l = q;
        if (l < 0)
            break;
        lab_done |= 1 << l;
        double bw = v->bw[l] * 1e-9;
        snprintf(txt, sizeof txt, "%s %.0f GB/s", level_label[l], bw);
        const double len = LABEL_CHAR_W * (double)strlen(txt);
        /* the line in pixels: py = s_px * px + b */
        const double b = px_y(r, bw * r->xlo);
        double py = fmax(0.14 * r->h, b + s_px * 8); /* not left of the plot */
        const double ptop = px_y(r, ci->top) - len * sn - 4;
        for (int tries = 0; tries < 8; tries++) {
            int clash = 0;
            for (int m = 0; m < nlb && !clash; m++)
                clash = fabs(lb[m][0] - b) * cs < LABEL_H + 2 && py < lb[m][2] + 4 &&
                        lb[m][1] < py + len * sn + 4;
            if (!clash)
                break;
            py += len * sn + 8;
        }
        if (py > ptop)
            py = fmax(b + s_px * 8, ptop);
        lb[nlb][0] = b;
        lb[nlb][1] = py;
        lb[nlb++][2] = py + len * sn;
        double px = (py - b) / s_px;
        rp_buf_printf(s, "set label %d ", lab++);
        rp_gp_str(s, txt);
        rp_buf_printf(s, " at %.6g, %.6g left rotate by %.2f front boxed font ',9' tc rgb '%s'\n",
                      x_px(r, px - 6 * sn), y_px(r, py + 6 * cs), ang * 57.29577951308232,
                      ceil_color);
    }
}

/* ---------------------------------------------------------------- points */

/* One point of a chart: measurement x at level l. */
struct point {
    const struct rp_meas *x;
    int level, ser;
    int merged; /* points of its series and level within CELL px, counted in its title */
    int drawn;
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *p = a, *q = b;
    if (p->x != q->x) {
        if (p->x->pt.time_s != q->x->pt.time_s)
            return p->x->pt.time_s > q->x->pt.time_s ? -1 : 1;
        return p->x->row->m.id < q->x->row->m.id ? -1 : 1;
    }
    return p->level - q->level;
}

static double point_x(const struct point *p)
{
    return p->x->pt.intensity[p->level];
}

/*
 * Thinning (see the header): each point, longest-running first, is drawn unless one of its
 * series and level was drawn in its CELL-pixel cell; then at most ROOFLINE_POINTS_MAX drawn.
 * Returns the points drawn; *merged and *capped: those counted in a title, those left out.
 */
static int thin(struct point *pt, int n, const struct loglog *r, int *merged, int *capped)
{
    struct rp_thin t;
    int drawn = 0;
    *merged = *capped = 0;
    if (rp_thin_init(&t, n) != RK_OK)
        return -1;
    for (int i = 0; i < n; i++) {
        int at = rp_thin_put(&t, pt[i].ser * MODEL_LEVEL_COUNT + pt[i].level,
                             px_x(r, point_x(&pt[i])), px_y(r, pt[i].x->point_gflops), i);
        if (at >= 0) {
            pt[at].merged++;
            (*merged)++;
        } else if (drawn < ROOFLINE_POINTS_MAX) {
            pt[i].drawn = 1;
            drawn++;
        } else {
            (*capped)++;
        }
    }
    rp_thin_free(&t);
    return drawn;
}

/* ------------------------------------------------------------- the chart */

/* The compute ceilings of chart group g (-1: all) into keep; returns how many. */
static int keep_ceilings(const struct rp_dev *v, int g, unsigned char *keep)
{
    int n = 0;
    double val;
    for (int i = 0; i < v->a.nceil; i++) {
        keep[i] = compute_ceiling(&v->a.ceil[i], &val) &&
                  (g < 0 || prec_group(v->a.ceil[i].precision) == g);
        n += keep[i];
    }
    return n;
}

static int nbandwidths(const struct rp_dev *v)
{
    int n = 0;
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        n += v->bw_c[l] != NULL;
    return n;
}

/* Is row x on the chart of group g (-1: every precision)? */
static int in_group(const struct rp_meas *x, int g)
{
    return g < 0 || prec_group(x->pt.judge.precision) == g;
}

/* Appends to the text in buf (len bytes), cutting it short rather than overflowing. */
static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t len, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (n < len)
        vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

/* Device dev's roofline of precision group g (-1: all); first: the device's first chart. */
static void roofline_chart(const struct rp_data *d, int dev, int g, int first,
                           const struct series *ser0, int nser, const int *idx,
                           struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, title = {0}, key = {0};
    struct rp_plot plot = {{0}, 0};
    struct series *ser = NULL;
    struct point *pt = NULL;
    unsigned char *keep = calloc((size_t)(v->a.nceil ? v->a.nceil : 1), 1);
    char lbl[300], caption[sizeof c.caption];
    int n = 0, nrows = 0, nlev = 0, merged = 0, capped = 0, drawn = 0, blk = 0;
    int used_level[MODEL_LEVEL_COUNT] = {0};
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;

    memset(&c, 0, sizeof c);
    if (g < 0)
        snprintf(c.name, sizeof c.name, "roofline-d%lld", (long long)v->a.dev.id);
    else
        snprintf(c.name, sizeof c.name, "roofline-d%lld-%s", (long long)v->a.dev.id, groups[g].key);
    snprintf(c.title, sizeof c.title, "Roofline of %s%s%s", rp_dev_label(d, dev, lbl, sizeof lbl),
             g < 0 ? "" : ": ", g < 0 ? "" : groups[g].name);
    snprintf(c.family, sizeof c.family, "d%lld", (long long)v->a.dev.id);
    c.section = RP_SEC_OVERVIEW;
    c.marks = calloc(1, sizeof *c.marks);
    ser = nser ? malloc((size_t)nser * sizeof *ser) : NULL;
    for (int i = 0; i < d->nrows; i++)
        n += idx[i] >= 0 && in_group(&d->meas[i], g) ? MODEL_LEVEL_COUNT : 0;
    pt = malloc((size_t)(n ? n : 1) * sizeof *pt);
    if (!keep || !c.marks || (nser && !ser) || !pt) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    if (nser)
        memcpy(ser, ser0, (size_t)nser * sizeof *ser);

    /* the points: each row at DRAM, and at the other levels with counters */
    n = 0;
    for (int i = 0; i < d->nrows; i++) {
        const struct rp_meas *x = &d->meas[i];
        if (idx[i] < 0 || !in_group(x, g))
            continue;
        nrows++;
        ser[idx[i]].n++;
        for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
            if (!(x->pt.intensity[l] > 0) || (l > 0 && !x->pt.counters))
                continue;
            pt[n++] = (struct point){x, l, idx[i], 0, 0};
            xlo = fmin(xlo, x->pt.intensity[l]);
            xhi = fmax(xhi, x->pt.intensity[l]);
            ylo = fmin(ylo, x->point_gflops);
            yhi = fmax(yhi, x->point_gflops);
        }
    }
    qsort(pt, (size_t)n, sizeof *pt, cmp_point);

    /* the ceilings and the ranges: every ridge point and every point in view */
    struct chart_in ci = {v, g, keep, 0, 0, keep_ceilings(v, g, keep)};
    for (int i = 0; i < v->a.nceil; i++) {
        double val, dsv;
        if (!keep[i] || !compute_ceiling(&v->a.ceil[i], &val))
            continue;
        dsv = analysis_unit_si(v->a.ceil[i].theoretical, v->a.ceil[i].unit) * 1e-9;
        ci.top = fmax(ci.top, isfinite(dsv) ? fmax(val, dsv) : val);
    }
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        if (v->bw_c[l])
            ci.bwtop = fmax(ci.bwtop, v->bw[l] * 1e-9);
    if (ci.top == 0)
        ci.top = fmax(1e5, yhi);
    ridge_range(v, ci.top, &xlo, &xhi);
    if (!(xlo < xhi)) {
        xlo = 0.01;
        xhi = 1000;
    }
    if (!(ylo < INFINITY))
        ylo = ci.top / 1e4;
    ylo = fmin(ylo, ci.top / 1e3);
    yhi = fmax(yhi, ci.top);
    const int cw = g < 0 ? CW : CW_SPLIT, ph = g < 0 ? PLOT_H : PLOT_H_SPLIT;
    const int kcols = g < 0 ? KEY_COLS : KEY_COLS - 1;
    const struct loglog range = {xlo / 2, xhi * 2, ylo / 2, yhi * 2, cw - LM - RM, ph};
    if ((drawn = thin(pt, n, &range, &merged, &capped)) < 0) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }

    /* the key: the series of this chart, the glyphs of the levels, the datasheet's lines */
    int nkey = 1;
    for (int k = 0; k < nser; k++)
        nkey += ser[k].n > 0;
    for (int i = 0; i < n; i++)
        used_level[pt[i].level] |= pt[i].drawn;
    for (int l = 1; l < MODEL_LEVEL_COUNT; l++)
        nlev += used_level[l];
    nkey += nlev;
    const int krows = (nkey + kcols - 1) / kcols, bm = BM_BASE + krows * KEY_ROW + 10;
    const int height = TM + ph + bm;
    rp_buf_printf(&key,
                  "at screen 0.5, %.4f center top horizontal maxcols %d font ',10' "
                  "samplen 1.2 spacing 1.05 width 1 reverse Left",
                  (double)(bm - BM_BASE + 4) / height, kcols);
    rp_gp_head_wh(&s, &c, "the roofline of one device", cw, height, key.p);
    rp_buf_printf(&s,
                  "set lmargin at screen %.5f\nset rmargin at screen %.5f\n"
                  "set tmargin at screen %.5f\nset bmargin at screen %.5f\n"
                  "set style textbox opaque noborder margins 0.5,0.3  # labels above the points\n"
                  "set logscale xy\nset xlabel 'operational intensity [FLOP/B]' offset 0,0.3\n"
                  "set ylabel 'performance [GFLOP/s]'\nset samples 500\n"
                  "set format y '%%g'\nset format x '%%g'\nset grid lc rgb '#e8e8e8'\n"
                  "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n\n",
                  (double)LM / cw, (double)(cw - RM) / cw, 1.0 - (double)TM / height,
                  (double)bm / height, range.xlo, range.xhi, range.ylo, range.yhi);
    ceilings(&s, &plot, &ci, &range);

    /* data: one block per series and level, the points in the order of time taken */
    rp_buf_printf(&dat,
                  "# roofline of device %lld%s%s: one block per series (family, or profiled "
                  "program) and level\n# intensity[FLOP/B] GFLOP/s id; points within %d px of a "
                  "longer-running one of their block are counted in its title, not listed\n",
                  (long long)v->a.dev.id, g < 0 ? "" : ", ", g < 0 ? "" : groups[g].name,
                  RP_THIN_CELL);
    for (int k = 0; k < nser; k++) {
        for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
            int from = c.marks->n, m = 0;
            for (int i = 0; i < n; i++) {
                const struct point *p = &pt[i];
                if (p->ser != k || p->level != l || !p->drawn)
                    continue;
                if (m++ == 0)
                    rp_buf_printf(&dat, "# points: %s at %s\n", ser[k].name, level_label[l]);
                rp_buf_printf(&dat, "%.9g %.9g %lld\n", point_x(p), p->x->point_gflops,
                              (long long)p->x->row->m.id);
                title.len = 0;
                rp_point_title(d, p->x, l, v->model, p->merged, &title);
                rp_mark(c.marks, p->x->row->m.id, title.p ? title.p : "");
            }
            if (!m)
                continue;
            rp_buf_puts(&dat, "\n\n");
            rp_marks_bind(c.marks, from, rp_plot_next(&plot));
            rp_buf_printf(&plot.b,
                          "'%s.dat' index %d using 1:2 with points pt %d ps %s lc rgb '%s' "
                          "notitle",
                          c.name, blk++, l ? level_pt[l] : ser_pt[k % NMARK], l ? "0.55" : "0.7",
                          ser_color[k % NCOLOR]);
        }
    }

    /* the numbered kernels: their points across levels joined, their number by their point */
    int njoin = 0, lab = 100, nnum = 0;
    struct box nums[16];
    for (int i = 0; i < n; i++) {
        const struct point *p = &pt[i];
        if (!p->x->top || (i > 0 && pt[i - 1].x == p->x))
            continue;
        int m = 0;
        for (int j = i; j < n && pt[j].x == p->x; j++)
            m++;
        if (m > 1) {
            if (njoin++ == 0)
                rp_buf_puts(&dat, "# joins: each numbered kernel's points across levels\n");
            for (int j = i; j < i + m; j++)
                rp_buf_printf(&dat, "%.9g %.9g\n", point_x(&pt[j]), pt[j].x->point_gflops);
            rp_buf_puts(&dat, "\n");
        }
        /* beside the point where no number was put yet: right, left, above, below */
        static const double off[][2] = {{6, 2},  {6, -14}, {-6, 2},  {-6, -14},
                                        {6, 12}, {-6, 12}, {6, -24}, {-6, -24}};
        const double w = 7.0 * (p->x->top >= 10 ? 2 : 1), px = px_x(&range, point_x(p)),
                     py = px_y(&range, p->x->point_gflops);
        struct box bx = {0, 0, 0, 0};
        for (size_t t = 0; t < sizeof off / sizeof off[0]; t++) {
            bx.l = off[t][0] > 0 ? px + off[t][0] : px + off[t][0] - w;
            bx.r = bx.l + w;
            bx.b = py + off[t][1];
            bx.t = bx.b + LABEL_H;
            if (!hits(nums, nnum, &bx))
                break;
        }
        if (nnum < (int)(sizeof nums / sizeof nums[0]))
            nums[nnum++] = bx;
        rp_buf_printf(
            &s, "set label %d '%d' at %.6g, %.6g left front boxed font ',10' tc rgb '#000000'\n",
            lab++, p->x->top, x_px(&range, bx.l), y_px(&range, (bx.b + bx.t) / 2));
    }
    if (njoin) {
        rp_buf_puts(&dat, "\n");
        rp_plot_next(&plot);
        rp_buf_printf(&plot.b,
                      "'%s.dat' index %d using 1:2 with lines lw 0.8 lc rgb '#9a9a9a' notitle",
                      c.name, blk++);
    }

    /* the key: one clause per entry that draws nothing */
    for (int k = 0; k < nser; k++) {
        char t[160];
        if (!ser[k].n)
            continue;
        rp_plot_next(&plot);
        rp_buf_printf(&plot.b, "1/0 with points pt %d ps 0.9 lc rgb '%s' title ", ser_pt[k % NMARK],
                      ser_color[k % NCOLOR]);
        snprintf(t, sizeof t, "%s (%d)", ser[k].name, ser[k].n);
        rp_gp_str(&plot.b, t);
    }
    for (int l = 1; l < MODEL_LEVEL_COUNT; l++) {
        if (!used_level[l])
            continue;
        rp_plot_next(&plot);
        rp_buf_printf(&plot.b, "1/0 with points pt %d ps 0.7 lc rgb '#555555' title '%s point'",
                      level_pt[l], level_label[l]);
    }
    rp_plot_next(&plot);
    rp_buf_printf(&plot.b, "1/0 with lines lw 1 dt 2 lc rgb '%s' title 'datasheet'", ds_color);
    rp_buf_printf(&s, "\nplot %s\n", plot.b.p);

    /* caption: the whole of it under the device's first chart, the rest say what differs */
    caption[0] = '\0';
    if (first) {
        cat(caption, sizeof caption,
            "%d measurement%s of this device%s%s, each at its DRAM intensity (filled: the colour "
            "and marker of its family or profiled program)",
            nrows, nrows == 1 ? "" : "s", g < 0 ? "" : " judged in ", g < 0 ? "" : groups[g].name);
        if (nlev)
            cat(caption, sizeof caption,
                " and, where counters measured them, at its L2, L1 and shared intensity (open, "
                "same colour)");
        cat(caption, sizeof caption,
            ". Ceilings on their lines: measured dark, datasheet light "
            "and dashed%s.",
            g < 0 ? ""
                  : "; more than 8 on one chart, so one chart per precision, each with the "
                    "measurements judged in it");
        if (v->ntop)
            cat(caption, sizeof caption, " Numbers: the kernels of the table below%s.",
                njoin ? ", their points across levels joined" : "");
        cat(caption, sizeof caption,
            " Hover a point for its kernel, time, GFLOP/s, intensity, bound and the %s model's "
            "prediction; click it for its row.",
            v->model ? v->model : "(no)");
    } else {
        cat(caption, sizeof caption, "%d measurement%s judged in %s, drawn as in the first chart.",
            nrows, nrows == 1 ? "" : "s", groups[g].name);
    }
    if (merged || capped)
        cat(caption, sizeof caption,
            " %d point%s drawn: %d within %d px of a longer-running one of their series are "
            "counted in its title%s",
            drawn, drawn == 1 ? "" : "s", merged, RP_THIN_CELL, capped ? ", and " : ".");
    if (capped)
        cat(caption, sizeof caption, "%d of the shortest-running beyond %d are left out.", capped,
            ROOFLINE_POINTS_MAX);
    if (first)
        cat(caption, sizeof caption, " %s", flops_sentence);
    snprintf(c.caption, sizeof c.caption, "%s", caption);
    if (c.marks->oom || title.oom) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    rp_chart_add(cs, o, &c, &s, &dat);
    if (cs->rc == RK_OK)
        c.marks = NULL; /* the chart list owns them */
out:
    if (c.marks)
        rp_marks_release(c.marks);
    free(c.marks);
    free(keep);
    free(ser);
    free(pt);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&title);
    rp_buf_free(&key);
    rp_buf_free(&plot.b);
}

void rp_roofline_charts(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    struct series *ser = NULL;
    unsigned char *keep = calloc((size_t)(v->a.nceil ? v->a.nceil : 1), 1);
    int *idx = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *idx), nser, split, any = 0;
    if (!keep || !idx || (nser = device_series(d, dev, &ser, idx)) < 0) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing the roofline of device %lld",
                          (long long)v->a.dev.id);
        goto out;
    }
    split = nbandwidths(v) + keep_ceilings(v, -1, keep) > CEILINGS_MAX;
    for (int g = 0; split && g < NGROUPS && cs->rc == RK_OK; g++) {
        int has = 0;
        for (int i = 0; i < d->nrows && !has; i++)
            has = idx[i] >= 0 && in_group(&d->meas[i], g);
        if (has)
            roofline_chart(d, dev, g, !any++, ser, nser, idx, cs, o);
    }
    if (!any && cs->rc == RK_OK) /* one chart: few ceilings, or no measurement to split */
        roofline_chart(d, dev, -1, 1, ser, nser, idx, cs, o);
out:
    free(keep);
    free(idx);
    free(ser);
}
