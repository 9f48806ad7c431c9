/*
 * roofline.c - the roofline charts of each device (internal.h, rp_roofline_charts):
 *
 *   roofline-d<ID>         log-log roofline: measured ceilings of DRAM, L2, L1, shared and
 *                          each precision, datasheet ones dashed; each measurement at its
 *                          measured intensity and its predicted point beside it, joined (003
 *                          Q5.A, 000 §6); one series per family, profiled kernels one per
 *                          program, the profiled kernels that take the most time labelled
 *   roofline-levels-d<ID>  the hierarchical roofline (as Nsight Compute's): each measurement
 *                          with counters at the intensity of each level it has bytes of, one
 *                          height, joined; the rows that take most time
 *
 * A point's height and intensity take one flop count (rp_meas.pt: the counters' executed
 * operations of the busiest pipe, or the analytic useful flops).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* ---------------------------------------------------------------- roofline */

static const char *const level_label[] = {"DRAM", "L2", "L1", "shared"};
static const char *const level_color[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};
/* The hierarchical roofline's point of each level: filled circle, triangle, square, diamond. */
static const int level_pt[] = {7, 9, 5, 13};
static const char *const peak_color[] = {"#d62728", "#ff7f0e", "#e377c2", "#bcbd22",
                                         "#17becf", "#7f7f7f", "#000000", "#aa4400"};
/* Profiled programs' series: dark colours, filled squares, apart from the families' circles. */
static const char *const profiled_color[] = {"#222222", "#a0522d", "#4b0082", "#006400"};

enum {
    LEVELS_MAX_ROWS = 40, /* rows of the hierarchical roofline: the ones that take most time */
    LABELS_MAX = 10,      /* profiled kernels labelled on the roofline */
    SHORT_NAME_MAX = 28   /* characters of a label */
};

/* Which flops and bytes a roofline point stands on: every roofline caption says it. */
static const char flops_sentence[] =
    "Height and intensity: executed operations of the busiest pipe over the bytes the counters "
    "saw (counters), or the analytic useful flops over the analytic bytes (cost formula); never "
    "mixed.";

/* The model whose predictions on device dev have the lowest median APE, or NULL. Rows a model
 * could not be applied to (a reason, no time) are not predictions. */
static const char *best_model(const struct rp_data *d, int dev)
{
    const char *best = NULL;
    double best_v = INFINITY;
    double *p = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *p);
    double *m = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *m);
    for (int j = 0; p && m && j < d->nmodels; j++) {
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
    free(p);
    free(m);
    return best;
}

/* The head of a roofline chart: log-log, 960 x 900, the key below in at most maxrows rows. */
static void roofline_head(struct rp_buf *s, const struct rp_chart *c, const char *what, int maxrows,
                          const char *xlabel, const char *ylabel)
{
    char key[96];
    snprintf(key, sizeof key, "outside below center horizontal maxrows %d spacing 1.0 font ',10'",
             maxrows);
    rp_gp_head_sized(s, c, what, 900, key);
    rp_buf_printf(s,
                  "set logscale xy\nset xlabel '%s'\nset ylabel '%s'\nset samples 500\n"
                  "set format y '%%g'\nset format x '%%g'\n\n",
                  xlabel, ylabel);
}

/* Widens [*xlo, *xhi] to show every ridge point of device v (top: the highest peak). */
static void ridge_range(const struct rp_dev *v, double top, double *xlo, double *xhi)
{
    for (int l = 0; l < 4; l++)
        if (v->bw_c[l]) {
            *xlo = fmin(*xlo, top / (v->bw[l] * 1e-9) / 30);
            *xhi = fmax(*xhi, top / (v->bw[l] * 1e-9) * 10);
        }
}

/* Starts the next clause of a plot command. */
static void clause(struct rp_buf *plot)
{
    if (plot->len)
        rp_buf_puts(plot, ", \\\n     ");
}

/*
 * The ceilings of device v: their values into script s (bw_<level> in GB/s, pk_<i> in
 * GFLOP/s, the datasheet's as *_ds when ds; top, bwtop and the line functions) and their
 * clauses into plot: every level's bandwidth by the ceiling policy and each compute ceiling i
 * for which keep[i] (keep NULL: every one). Returns the number of compute ceilings drawn;
 * *top_out: the highest peak (1e5 when none).
 */
static int ceiling_lines(struct rp_buf *s, struct rp_buf *plot, const struct rp_dev *v,
                         const unsigned char *keep, int ds, double *top_out)
{
    double top = 0, bwtop = 0;
    int npeak = 0, k = 0;
    char n1[32], n2[32];
    rp_buf_puts(s, ds ? "# Measured ceilings (solid) and the datasheet's (dashed, *_ds; NaN = "
                        "none).\n# Bandwidths in GB/s, peaks in GFLOP/s.\n"
                      : "# Measured ceilings: bandwidths in GB/s, peaks in GFLOP/s.\n");
    for (int l = 0; l < 4; l++) {
        const struct db_ceiling *bc = v->bw_c[l];
        if (!bc)
            continue;
        rp_buf_printf(s, "bw_%s = %.6g    # %s\n", model_level_name(l), v->bw[l] * 1e-9, bc->name);
        if (ds)
            rp_buf_printf(s, "bw_%s_ds = %s\n", model_level_name(l),
                          rp_gpv(n1, analysis_unit_si(bc->theoretical, bc->unit) * 1e-9));
        bwtop = fmax(bwtop, v->bw[l] * 1e-9);
    }
    for (int i = 0; i < v->a.nceil; i++) {
        const struct db_ceiling *pc = &v->a.ceil[i];
        if (strcmp(pc->kind, "compute") || (keep && !keep[i]))
            continue;
        double val = analysis_unit_si(pc->value, pc->unit) * 1e-9;
        if (!isfinite(val) || val <= 0)
            continue;
        double dsv = analysis_unit_si(pc->theoretical, pc->unit) * 1e-9;
        rp_buf_printf(s, "pk_%d = %.6g    # %s (%s)\n", i, val, pc->name,
                      pc->precision ? pc->precision : "");
        if (ds)
            rp_buf_printf(s, "pk_%d_ds = %s\n", i, rp_gpv(n1, dsv));
        top = fmax(top, val);
        if (ds && isfinite(dsv))
            top = fmax(top, dsv);
        npeak++;
    }
    if (top == 0)
        top = 1e5;
    rp_buf_printf(s,
                  "top = %.6g    # the highest peak: bandwidth lines stop there\n"
                  "bwtop = %s  # the highest bandwidth: peaks start on its line\n"
                  "bwline(x, bw) = (bw == bw && x * bw <= top) ? x * bw : 1/0\n"
                  "pkline(x, p) = (p == p && (bwtop != bwtop || x * bwtop >= p)) ? p : 1/0\n",
                  top, rp_gpv(n2, bwtop > 0 ? bwtop : NAN));
    for (int l = 0; l < 4; l++) {
        const char *ln = model_level_name(l);
        if (!v->bw_c[l])
            continue;
        clause(plot);
        rp_buf_printf(plot,
                      "bwline(x, bw_%s) with lines lw 2 lc rgb '%s' title sprintf('%s %%.0f GB/s', "
                      "bw_%s)",
                      ln, level_color[l], level_label[l], ln);
        if (ds)
            rp_buf_printf(plot,
                          ", \\\n     bwline(x, bw_%s_ds) with lines lw 1 dt 2 lc rgb '%s' title "
                          "'%s datasheet'",
                          ln, level_color[l], level_label[l]);
    }
    for (int i = 0; i < v->a.nceil; i++) {
        const struct db_ceiling *pc = &v->a.ceil[i];
        double val;
        if (strcmp(pc->kind, "compute"))
            continue;
        val = analysis_unit_si(pc->value, pc->unit);
        if (!isfinite(val) || val <= 0)
            continue;
        const char *col = peak_color[k++ % 8]; /* by the ceiling, so both charts agree */
        if (keep && !keep[i])
            continue;
        clause(plot);
        rp_buf_printf(plot,
                      "pkline(x, pk_%d) with lines lw 2 lc rgb '%s' title sprintf('%%s %%.0f "
                      "GFLOP/s', ",
                      i, col);
        rp_gp_str(plot, pc->name);
        rp_buf_printf(plot, ", pk_%d)", i);
        if (ds)
            rp_buf_printf(plot,
                          ", \\\n     pkline(x, pk_%d_ds) with lines lw 1 dt 2 lc rgb '%s' notitle",
                          i, col);
    }
    *top_out = top;
    return npeak;
}

/* ------------------------------------------------- series and labels */

/* A roofline series: a family; the profiled kernels (no family) of one program; the other
 * rows of no family. Ordered by rank, then name. */
enum series_rank { SER_FAMILY = 0, SER_NO_FAMILY, SER_PROFILED };

struct series {
    char name[112];
    int rank;
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

/* Is a word of a command line an interpreter whose program is its first argument? */
static int interpreter(const char *w, size_t n)
{
    static const char *const names[] = {"env", "sh", "bash", "node", "perl", "ruby", NULL};
    if (n >= 6 && strncmp(w, "python", 6) == 0)
        return 1;
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && strncmp(w, names[i], n) == 0)
            return 1;
    return 0;
}

/*
 * The program a profile capture ran, for a series name: the command line after " -- " (what
 * `roofkit profile -- PROGRAM` ran), its first word that is neither an interpreter (python3,
 * env, ...) nor an option or assignment after one, as a basename ("python3 a/b/torch_mix.py"
 * gives "torch_mix.py"); the whole command line when it has no " -- "; "?" when none.
 */
static void program_name(const char *cmdline, char *out, size_t len)
{
    const char *args = cmdline ? strstr(cmdline, " -- ") : NULL, *s;
    int after_interp = 0;
    if (!cmdline || !*cmdline) {
        snprintf(out, len, "?");
        return;
    }
    if (!args) {
        snprintf(out, len, "%s", cmdline);
        return;
    }
    for (s = args += 4;;) {
        s += strspn(s, " \t");
        size_t n = strcspn(s, " \t");
        if (n == 0)
            break;
        const char *base = s;
        for (const char *p = s; p < s + n; p++)
            if (*p == '/')
                base = p + 1;
        size_t bn = (size_t)(s + n - base);
        int skip = after_interp && (*s == '-' || memchr(s, '=', n) != NULL);
        if (!skip && !interpreter(base, bn)) {
            snprintf(out, len, "%.*s", (int)bn, base);
            return;
        }
        after_interp |= !skip;
        s += n;
    }
    snprintf(out, len, "%s", args);
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
        const char *cmd = NULL;
        char prog[96];
        for (int i = 0; i < d->ncaps && !cmd; i++)
            if (d->caps[i].id == x->row->m.capture_id)
                cmd = d->caps[i].cmdline;
        program_name(cmd, prog, sizeof prog);
        snprintf(buf, len, "profiled: %s", prog);
        return SER_PROFILED;
    }
    snprintf(buf, len, "(no family)");
    return SER_NO_FAMILY;
}

/* Is x drawn on device dev's roofline? */
static int on_roofline(const struct rp_meas *x, int dev)
{
    return x->dev == dev && x->charted && x->pt.intensity[MODEL_LEVEL_DRAM] > 0 &&
           x->point_gflops > 0;
}

/* The series of device dev's roofline: *out (malloc'd, in order; NULL when none) and idx[i],
 * the series of row i (-1: not drawn). Returns how many, or -1 when out of memory. */
static int device_series(const struct rp_data *d, int dev, struct series **out, int *idx)
{
    struct series *ser = NULL, one;
    int n = 0, cap = 0;
    *out = NULL;
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

/* The name without template arguments, argument lists and namespaces, up to the first space:
 * "void at::native::(anonymous namespace)::f<float>(int)" gives "f". */
static void strip_name(const char *in, size_t inlen, char *out, size_t len)
{
    size_t k = 0;
    int depth = 0;
    if (inlen >= 5 && strncmp(in, "void ", 5) == 0) {
        in += 5;
        inlen -= 5;
    }
    for (size_t i = 0; i < inlen && len; i++) {
        char c = in[i];
        if (c == '<' || c == '(') {
            depth++;
        } else if (c == '>' || c == ')') {
            depth -= depth > 0;
        } else if (depth == 0 && c == ':' && i + 1 < inlen && in[i + 1] == ':') {
            k = 0; /* a namespace or class: what follows names the kernel */
            i++;
        } else if (depth == 0 && c == ' ') {
            if (k)
                break;
        } else if (depth == 0 && k + 1 < len) {
            out[k++] = c;
        }
    }
    if (len)
        out[k] = '\0';
}

/* Does a kernel's name say nothing of it: "Kernel", "Kernel2", "kernel", "device_kernel"? */
static int generic_wrapper(const char *name)
{
    if (strncmp(name, "device_", 7) == 0)
        name += 7;
    if ((*name != 'K' && *name != 'k') || strncmp(name + 1, "ernel", 5))
        return 0;
    return strspn(name + 6, "0123456789") == strlen(name + 6);
}

/*
 * A short label for a kernel's demangled name: strip_name's, or, for a generic wrapper
 * ("cutlass::Kernel2<cutlass_80_simt_sgemm_...>(...)"), its first template argument's; at most
 * SHORT_NAME_MAX characters, a longer one cut in the middle ("nvjet_sm90_t...bz_coopA_NNT").
 */
static void short_kernel_name(const char *in, char *out, size_t len)
{
    char buf[256];
    strip_name(in, strlen(in), buf, sizeof buf);
    if (generic_wrapper(buf)) {
        const char *lt = strchr(in, '<'); /* the wrapper's first template argument */
        if (lt) {
            size_t e = 1;
            int depth = 0;
            for (; lt[e] && !(depth == 0 && (lt[e] == ',' || lt[e] == '>')); e++)
                depth += (lt[e] == '<' || lt[e] == '(') - (lt[e] == '>' || lt[e] == ')');
            char arg[256];
            strip_name(lt + 1, e - 1, arg, sizeof arg);
            if (*arg)
                snprintf(buf, sizeof buf, "%s", arg);
        }
    }
    if (!*buf)
        snprintf(buf, sizeof buf, "%s", in);
    size_t n = strlen(buf);
    if (n > SHORT_NAME_MAX) { /* head and tail: kernels of one family differ in either */
        memmove(buf + SHORT_NAME_MAX / 2 + 1, buf + n - (SHORT_NAME_MAX / 2 - 1),
                SHORT_NAME_MAX / 2);
        memcpy(buf + SHORT_NAME_MAX / 2 - 2, "...", 3);
    }
    snprintf(out, len, "%s", buf);
}

static int cmp_kernel_name(const void *a, const void *b)
{
    const struct rp_meas *x = *(const struct rp_meas *const *)a;
    const struct rp_meas *y = *(const struct rp_meas *const *)b;
    return strcmp(x->row->m.kernel, y->row->m.kernel);
}

/* One profiled kernel: its launches' total time and its longest launch drawn. */
struct kernel_time {
    const struct rp_meas *longest;
    double total;
};

static int cmp_total_desc(const void *a, const void *b)
{
    const struct kernel_time *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return (x->longest->row->m.id > y->longest->row->m.id) -
           (x->longest->row->m.id < y->longest->row->m.id);
}

/* The plot area of a 960 x 900 roofline with its key below, in pixels, and a label's size. */
enum { PLOT_W = 866, PLOT_H = 670, LABEL_CHAR_W = 6, LABEL_H = 11, LABEL_GAP = 6 };

/* A log-log chart's ranges, to place labels in pixels. */
struct loglog {
    double xlo, xhi, ylo, yhi;
};

static double px_x(const struct loglog *r, double x)
{
    return PLOT_W * log10(x / r->xlo) / log10(r->xhi / r->xlo);
}

static double px_y(const struct loglog *r, double y)
{
    return PLOT_H * log10(y / r->ylo) / log10(r->yhi / r->ylo);
}

/*
 * The labels of device dev's roofline: the LABELS_MAX profiled kernels (by name) whose drawn
 * launches take the most time together, each at its longest launch, as one data block
 * ("intensity GFLOP/s "name" id shift side": shift, a factor of the height, moves a label up
 * or down a line or more where it would cover one placed before; side 1: right of the point,
 * -1: left of it, near the right edge; *sides: 1 when some are right, 2 left, 3 both). Returns
 * how many (0: no block written), -1 when out of memory.
 */
static int profiled_labels(const struct rp_data *d, const int *idx, const struct series *ser,
                           const struct loglog *range, struct rp_buf *dat, int *sides /* OUT */)
{
    const struct rp_meas **v;
    struct kernel_time *k;
    double box[LABELS_MAX][4]; /* left, right, bottom, top [px] of the labels placed */
    int n = 0, nk = 0;
    for (int i = 0; i < d->nrows; i++)
        n += idx[i] >= 0 && ser[idx[i]].rank == SER_PROFILED;
    if (n == 0)
        return 0;
    v = malloc((size_t)n * sizeof *v);
    k = malloc((size_t)n * sizeof *k);
    if (!v || !k) {
        free((void *)v);
        free(k);
        return -1;
    }
    n = 0;
    for (int i = 0; i < d->nrows; i++)
        if (idx[i] >= 0 && ser[idx[i]].rank == SER_PROFILED)
            v[n++] = &d->meas[i];
    qsort((void *)v, (size_t)n, sizeof *v, cmp_kernel_name);
    for (int i = 0; i < n; i++) {
        if (nk == 0 || strcmp(k[nk - 1].longest->row->m.kernel, v[i]->row->m.kernel)) {
            k[nk].longest = v[i];
            k[nk++].total = 0;
        }
        k[nk - 1].total += v[i]->pt.time_s;
        if (v[i]->pt.time_s > k[nk - 1].longest->pt.time_s)
            k[nk - 1].longest = v[i];
    }
    qsort(k, (size_t)nk, sizeof *k, cmp_total_desc);
    if (nk > LABELS_MAX)
        nk = LABELS_MAX;
    rp_buf_printf(dat,
                  "# labels: the %d profiled kernels that take the most total time, at their "
                  "longest launch\n# intensity[FLOP/B] GFLOP/s name id shift[factor of the "
                  "height] side[1 right, -1 left]\n",
                  nk);
    for (int i = 0; i < nk; i++) {
        const struct rp_meas *x = k[i].longest;
        char name[SHORT_NAME_MAX + 8];
        short_kernel_name(x->row->m.kernel, name, sizeof name);
        for (char *p = name; *p; p++)
            if (*p == '"')
                *p = '\'';
        /* right of the point, or left of it where it would leave the plot; then the first of
         * 0, +1, -1, +2, -2, ... lines that covers no label placed before */
        double w = LABEL_CHAR_W * (double)strlen(name),
               px = px_x(range, x->pt.intensity[MODEL_LEVEL_DRAM]);
        int side = px + LABEL_GAP + w <= PLOT_W ? 1 : -1;
        double l = side > 0 ? px + LABEL_GAP : px - LABEL_GAP - w, r = l + w;
        double b0 = px_y(range, x->point_gflops);
        int shift = 0;
        for (int t = 0; t < 2 * LABELS_MAX; t++) {
            int hit = 0;
            shift = (t + 1) / 2 * (t % 2 ? 1 : -1);
            double b = b0 + LABEL_GAP / 2.0 + shift * LABEL_H;
            for (int j = 0; j < i && !hit; j++)
                hit = l < box[j][1] && box[j][0] < r && b < box[j][3] && box[j][2] < b + LABEL_H;
            if (!hit)
                break;
        }
        *sides |= side > 0 ? 1 : 2;
        box[i][0] = l;
        box[i][1] = r;
        box[i][2] = b0 + LABEL_GAP / 2.0 + shift * LABEL_H;
        box[i][3] = box[i][2] + LABEL_H;
        rp_dat_num(dat, x->pt.intensity[MODEL_LEVEL_DRAM]);
        rp_dat_num(dat, x->point_gflops);
        rp_buf_printf(dat, " \"%s\" %lld %.6g %d\n", name, (long long)x->row->m.id,
                      pow(range->yhi / range->ylo, (double)shift * LABEL_H / PLOT_H), side);
    }
    rp_buf_puts(dat, "\n\n");
    free((void *)v);
    free(k);
    return nk;
}

/* ----------------------------------------------------------- the charts */

static void roofline_chart(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, plot = {0};
    struct series *ser = NULL;
    char lbl[300];
    const char *model = best_model(d, dev);
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, top = 0;
    int npeak, npts = 0, npred_all = 0, nser, nlab = 0, nprof = 0, sides = 0;
    int *idx = malloc((size_t)(d->nrows ? d->nrows : 1) * sizeof *idx);

    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "roofline-d%lld", (long long)v->a.dev.id);
    snprintf(c.title, sizeof c.title, "Roofline of %s", rp_dev_label(d, dev, lbl, sizeof lbl));
    c.section = RP_SEC_DEVICE;
    if (!idx || (nser = device_series(d, dev, &ser, idx)) < 0) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    roofline_head(&s, &c, "the roofline of one device", 8, "operational intensity [FLOP/B]",
                  "performance [GFLOP/s]");
    npeak = ceiling_lines(&s, &plot, v, NULL, 1, &top);

    /* data: one block per series: intensity, measured GFLOP/s, predicted GFLOP/s, id */
    rp_buf_printf(&dat,
                  "# roofline of device %lld: one block per series (family, or profiled "
                  "program)\n# intensity[FLOP/B] measured[GFLOP/s] predicted[GFLOP/s] (%s) id\n",
                  (long long)v->a.dev.id, model ? model : "no model");
    for (int k = 0; k < nser; k++) {
        int prof = ser[k].rank == SER_PROFILED, npred = 0;
        rp_buf_printf(&dat, "# %s\n", ser[k].name);
        for (int i = 0; i < d->nrows; i++) {
            const struct rp_meas *x = &d->meas[i];
            if (idx[i] != k)
                continue;
            const struct db_prediction *p = model ? rp_prediction(x, model) : NULL;
            double pg = p && p->predicted_time_ns > 0 ? x->pt.flops / p->predicted_time_ns : NAN;
            rp_dat_num(&dat, x->pt.intensity[MODEL_LEVEL_DRAM]);
            rp_dat_num(&dat, x->point_gflops);
            rp_dat_num(&dat, pg);
            rp_buf_printf(&dat, " %lld\n", (long long)x->row->m.id);
            xlo = fmin(xlo, x->pt.intensity[MODEL_LEVEL_DRAM]);
            xhi = fmax(xhi, x->pt.intensity[MODEL_LEVEL_DRAM]);
            ylo = fmin(ylo, x->point_gflops);
            yhi = fmax(yhi, x->point_gflops);
            if (isfinite(pg) && pg > 0) {
                ylo = fmin(ylo, pg);
                yhi = fmax(yhi, pg);
                npred++;
            }
            npts++;
        }
        rp_buf_puts(&dat, "\n\n");
        char col[48];
        if (prof)
            snprintf(col, sizeof col, "rgb '%s'", profiled_color[nprof++ % 4]);
        else
            snprintf(col, sizeof col, "%d", k + 1);
        clause(&plot);
        if (npred) /* a series the model predicts none of has no predicted points */
            rp_buf_printf(&plot,
                          "'%s.dat' index %d using 1:2:(0):($3-$2) with vectors nohead "
                          "lc rgb '#b0b0b0' notitle, \\\n     "
                          "'' index %d using 1:3 with points pt %d ps 0.6 lc %s notitle, \\\n     ",
                          c.name, k, k, prof ? 4 : 6, col);
        rp_buf_printf(&plot, "'%s.dat' index %d using 1:2 with points pt %d ps 0.6 lc %s title ",
                      c.name, k, prof ? 5 : 7, col);
        rp_gp_str(&plot, ser[k].name);
        npred_all += npred;
    }
    if (nser) {
        char t[128];
        clause(&plot);
        rp_buf_puts(&plot, "1/0 with points pt 6 lc rgb '#555555' title ");
        snprintf(t, sizeof t, "predicted (%s)", model ? model : "no model");
        rp_gp_str(&plot, t);
    }
    /* ranges: every ridge point and every measurement in view */
    ridge_range(v, top, &xlo, &xhi);
    if (!(xlo < xhi)) {
        xlo = 0.01;
        xhi = 1000;
    }
    if (!(ylo < INFINITY))
        ylo = top / 1e4;
    ylo = fmin(ylo, top / 1e3);
    yhi = fmax(yhi, top);
    const struct loglog range = {xlo / 2, xhi * 2, ylo / 2, yhi * 2};
    if (nser && (nlab = profiled_labels(d, idx, ser, &range, &dat, &sides)) < 0) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    for (int side = 1; side <= 2; side++) { /* beside the point, not on it: right or left, up */
        if (!(sides & side))
            continue;
        clause(&plot);
        rp_buf_printf(&plot,
                      "'%s.dat' index %d using 1:($6 %s 0 ? $2*$5 : 1/0):3 with labels %s "
                      "offset %s0.6,0.5 font ',8' tc rgb '#333333' notitle",
                      c.name, nser, side == 1 ? ">" : "<", side == 1 ? "left" : "right",
                      side == 1 ? "" : "-");
    }
    rp_buf_printf(&s, "set xrange [%.4g:%.4g]\nset yrange [%.4g:%.4g]\n\nplot ", range.xlo,
                  range.xhi, range.ylo, range.yhi);
    /* nothing to draw: an empty frame that says so */
    rp_buf_puts(&s, plot.len ? plot.p : "1/0 title 'no ceilings and no measurements'");
    rp_buf_puts(&s, "\n");
    char prof[160] = "";
    if (nprof)
        snprintf(prof, sizeof prof,
                 " Profiled kernels: one series per program (squares), the %d that take the most "
                 "total time labelled.",
                 nlab);
    snprintf(c.caption, sizeof c.caption,
             "%d measurement%s (filled), %d joined to their predicted point (open) of the %s "
             "model, the lowest median error on this device; %d compute ceiling%s, datasheet "
             "ones dashed.%s %s",
             npts, npts == 1 ? "" : "s", npred_all, model ? model : "(none)", npeak,
             npeak == 1 ? "" : "s", prof, flops_sentence);
    rp_chart_add(cs, o, &c, &s, &dat);
out:
    free(idx);
    free(ser);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&plot);
}

/* Is x drawn on device dev's hierarchical roofline: counters and the bytes of a level? */
static int on_levels(const struct rp_meas *x, int dev)
{
    if (x->dev != dev || !x->charted || !x->pt.counters || !(x->point_gflops > 0))
        return 0;
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        if (x->pt.intensity[l] > 0)
            return 1;
    return 0;
}

static int cmp_time_desc(const void *a, const void *b)
{
    const struct rp_meas *x = *(const struct rp_meas *const *)a;
    const struct rp_meas *y = *(const struct rp_meas *const *)b;
    if (x->pt.time_s != y->pt.time_s)
        return x->pt.time_s > y->pt.time_s ? -1 : 1;
    return (x->row->m.id > y->row->m.id) - (x->row->m.id < y->row->m.id);
}

/*
 * The hierarchical roofline of device dev, as Nsight Compute draws it: each measurement with
 * counters at the intensity of every level it has bytes of (one height: its executed FLOP/s),
 * its points joined; each level's bandwidth and the compute ceilings of the pipes drawn. At
 * most LEVELS_MAX_ROWS rows: the ones that take the most time. No chart when no row has
 * counters.
 */
static void levels_chart(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o)
{
    const struct rp_dev *v = &d->devs[dev];
    const struct rp_meas **r = NULL;
    unsigned char *keep = NULL;
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, plot = {0};
    char lbl[300], more[96] = "";
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, top = 0;
    int n = 0, shown, npeak, blk = 1, npts[MODEL_LEVEL_COUNT] = {0};

    for (int i = 0; i < d->nrows; i++)
        n += on_levels(&d->meas[i], dev);
    if (n == 0)
        return;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "roofline-levels-d%lld", (long long)v->a.dev.id);
    r = malloc((size_t)n * sizeof *r);
    keep = calloc((size_t)(v->a.nceil ? v->a.nceil : 1), 1);
    if (!r || !keep) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c.name);
        goto out;
    }
    n = 0;
    for (int i = 0; i < d->nrows; i++)
        if (on_levels(&d->meas[i], dev))
            r[n++] = &d->meas[i];
    qsort((void *)r, (size_t)n, sizeof *r, cmp_time_desc);
    shown = n < LEVELS_MAX_ROWS ? n : LEVELS_MAX_ROWS;
    for (int j = 0; j < shown; j++) /* the compute ceilings of the pipes drawn */
        for (int i = 0; r[j]->pt.peak_c && i < v->a.nceil; i++)
            keep[i] |= strcmp(v->a.ceil[i].name, r[j]->pt.peak_c->name) == 0;

    snprintf(c.title, sizeof c.title, "Hierarchical roofline of %s",
             rp_dev_label(d, dev, lbl, sizeof lbl));
    c.section = RP_SEC_DEVICE;
    roofline_head(&s, &c, "the hierarchical roofline of one device", 6,
                  "operational intensity of each level [FLOP/B]",
                  "performance [GFLOP/s] (executed operations)");
    npeak = ceiling_lines(&s, &plot, v, keep, 0, &top);

    rp_buf_printf(&dat,
                  "# hierarchical roofline of device %lld: the %d of %d measurements with "
                  "counters that take the most time\n"
                  "# block 0: each measurement's points across levels (DRAM, L2, L1, shared), "
                  "one line each\n",
                  (long long)v->a.dev.id, shown, n);
    for (int j = 0; j < shown; j++) {
        for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
            if (r[j]->pt.intensity[l] > 0)
                rp_buf_printf(&dat, "%.9g %.9g\n", r[j]->pt.intensity[l], r[j]->point_gflops);
        rp_buf_puts(&dat, "\n");
    }
    rp_buf_puts(&dat, "\n");
    clause(&plot);
    rp_buf_printf(&plot,
                  "'%s.dat' index 0 using 1:2 with lines lw 0.6 lc rgb '#b8b8b8' title 'one "
                  "kernel across levels'",
                  c.name);
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        for (int j = 0; j < shown; j++) {
            const struct rp_meas *x = r[j];
            if (!(x->pt.intensity[l] > 0))
                continue;
            if (npts[l]++ == 0)
                rp_buf_printf(&dat, "# block %d: %s: intensity[FLOP/B] GFLOP/s id\n", blk,
                              level_label[l]);
            rp_buf_printf(&dat, "%.9g %.9g %lld\n", x->pt.intensity[l], x->point_gflops,
                          (long long)x->row->m.id);
            xlo = fmin(xlo, x->pt.intensity[l]);
            xhi = fmax(xhi, x->pt.intensity[l]);
            ylo = fmin(ylo, x->point_gflops);
            yhi = fmax(yhi, x->point_gflops);
        }
        if (!npts[l])
            continue;
        rp_buf_puts(&dat, "\n\n");
        clause(&plot);
        rp_buf_printf(&plot,
                      "'%s.dat' index %d using 1:2 with points pt %d ps 0.7 lc rgb '%s' "
                      "title '%s (%d)'",
                      c.name, blk++, level_pt[l], level_color[l], level_label[l], npts[l]);
    }
    ridge_range(v, top, &xlo, &xhi);
    ylo = fmin(ylo, top / 1e3);
    yhi = fmax(yhi, top);
    rp_buf_printf(&s, "set xrange [%.4g:%.4g]\nset yrange [%.4g:%.4g]\n\nplot %s\n", xlo / 2,
                  xhi * 2, ylo / 2, yhi * 2, plot.p);
    if (shown < n)
        snprintf(more, sizeof more,
                 "The %d of %d measurements with counters that take the most time", shown, n);
    else
        snprintf(more, sizeof more, "%d measurement%s with counters", n, n == 1 ? "" : "s");
    snprintf(c.caption, sizeof c.caption,
             "%s, each at the intensity of every level it has bytes of (DRAM circle, L2 "
             "triangle, L1 square, shared diamond) at one height, joined; each level's bandwidth "
             "(ceiling policy) and the %d compute ceiling%s of their pipes. %s",
             more, npeak, npeak == 1 ? "" : "s", flops_sentence);
    rp_chart_add(cs, o, &c, &s, &dat);
out:
    free((void *)r);
    free(keep);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&plot);
}

void rp_roofline_charts(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o)
{
    roofline_chart(d, dev, cs, o);
    if (cs->rc == RK_OK)
        levels_chart(d, dev, cs, o);
}
