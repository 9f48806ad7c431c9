/*
 * charts.c - the report's charts: one gnuplot script and one data file per chart
 * in plots/, written so that a user can edit a script and re-plot it alone
 * (`gnuplot NAME.gp` in plots/), and plots/all.gp that loads them all, which the
 * report runs in ONE gnuplot process (starting gnuplot costs more than drawing).
 *
 *   roofline-d<ID>         log-log roofline of each device: measured ceilings of
 *                          DRAM, L2, L1, shared and each precision, datasheet ones
 *                          dashed; each measurement at its measured intensity and its
 *                          predicted point beside it, joined (003 Q5.A, 000 §6); one
 *                          series per family, profiled kernels one per program, the
 *                          profiled kernels that take the most time labelled
 *   roofline-levels-d<ID>  the hierarchical roofline (as Nsight Compute's): each
 *                          measurement with counters at the intensity of each level it
 *                          has bytes of, one height, joined; the rows that take most time
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
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "model.h"

struct charts {
    struct rp_chart *c;
    int n, cap;
    struct rp_buf all; /* all.gp */
    int rc;
};

/* Appends s as a gnuplot single-quoted string. */
static void gp_str(struct rp_buf *b, const char *s)
{
    rp_buf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            rp_buf_puts(b, "''");
        else if (*s == '\n')
            rp_buf_puts(b, " ");
        else
            rp_buf_add(b, s, 1);
    }
    rp_buf_puts(b, "'");
}

/* A data value: "?" for a missing one. */
static void dat_num(struct rp_buf *b, double v)
{
    if (isfinite(v))
        rp_buf_printf(b, " %.9g", v);
    else
        rp_buf_puts(b, " ?");
}

/* A number for a script: gnuplot's NaN for a missing one. */
static const char *gpv(char *buf, double v)
{
    if (isfinite(v))
        snprintf(buf, 32, "%.6g", v);
    else
        snprintf(buf, 32, "NaN");
    return buf;
}

static void file_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            *s = '_';
}

/* height: the SVG's height in pixels; key: gnuplot's `set key` arguments. Charts with
 * many series put the key below the plot, so the plot keeps the page's width. */
static void gp_head_sized(struct rp_buf *s, const struct rp_chart *c, const char *what, int height,
                          const char *key)
{
    rp_buf_printf(s,
                  "# %s.gp - %s\n"
                  "# Written by `roofkit report`. Edit it and run `gnuplot %s.gp` in this folder\n"
                  "# to re-plot %s.svg; the data are in %s.dat ('?' = missing value).\n",
                  c->name, what, c->name, c->name, c->name);
    rp_buf_printf(s,
                  "reset\nset encoding utf8\nset terminal svg size 960,%d noenhanced font "
                  "'Helvetica,12' background rgb 'white'\n",
                  height);
    rp_buf_printf(s, "set output '%s.svg'\nset datafile missing '?'\nset title ", c->name);
    gp_str(s, c->title);
    rp_buf_printf(s, "\nset grid\nset key %s\nset border lc rgb '#444444'\n", key);
}

static void gp_head(struct rp_buf *s, const struct rp_chart *c, const char *what)
{
    gp_head_sized(s, c, what, 600, "outside right top spacing 1.1");
}

/* Adds chart c with script and data; takes ownership of nothing. */
static void add_chart(struct charts *cs, struct rp_out *o, const struct rp_chart *c,
                      struct rp_buf *script, struct rp_buf *data)
{
    char rel[160];
    if (cs->rc != RK_OK)
        return;
    if (script->oom || data->oom) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c->name);
        return;
    }
    rp_buf_puts(script, "unset output\n");
    if (cs->n == cs->cap) {
        int cap = cs->cap ? 2 * cs->cap : 16;
        struct rp_chart *p = realloc(cs->c, (size_t)cap * sizeof *p);
        if (!p) {
            cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c->name);
            return;
        }
        cs->c = p;
        cs->cap = cap;
    }
    snprintf(rel, sizeof rel, "plots/%s.dat", c->name);
    cs->rc = rp_out_write(o, rel, data->p ? data->p : "", data->len);
    snprintf(rel, sizeof rel, "plots/%s.gp", c->name);
    if (cs->rc == RK_OK)
        cs->rc = rp_out_write(o, rel, script->p, script->len);
    if (cs->rc != RK_OK)
        return;
    cs->c[cs->n++] = *c;
    rp_buf_printf(&cs->all, "load '%s.gp'\n", c->name);
}

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
    gp_head_sized(s, c, what, 900, key);
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
                          gpv(n1, analysis_unit_si(bc->theoretical, bc->unit) * 1e-9));
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
            rp_buf_printf(s, "pk_%d_ds = %s\n", i, gpv(n1, dsv));
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
                  top, gpv(n2, bwtop > 0 ? bwtop : NAN));
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
        gp_str(plot, pc->name);
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
        dat_num(dat, x->pt.intensity[MODEL_LEVEL_DRAM]);
        dat_num(dat, x->point_gflops);
        rp_buf_printf(dat, " \"%s\" %lld %.6g %d\n", name, (long long)x->row->m.id,
                      pow(range->yhi / range->ylo, (double)shift * LABEL_H / PLOT_H), side);
    }
    rp_buf_puts(dat, "\n\n");
    free((void *)v);
    free(k);
    return nk;
}

/* ----------------------------------------------------------- the charts */

static void roofline_chart(const struct rp_data *d, int dev, struct charts *cs, struct rp_out *o)
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
            dat_num(&dat, x->pt.intensity[MODEL_LEVEL_DRAM]);
            dat_num(&dat, x->point_gflops);
            dat_num(&dat, pg);
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
        gp_str(&plot, ser[k].name);
        npred_all += npred;
    }
    if (nser) {
        char t[128];
        clause(&plot);
        rp_buf_puts(&plot, "1/0 with points pt 6 lc rgb '#555555' title ");
        snprintf(t, sizeof t, "predicted (%s)", model ? model : "no model");
        gp_str(&plot, t);
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
    add_chart(cs, o, &c, &s, &dat);
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
static void levels_chart(const struct rp_data *d, int dev, struct charts *cs, struct rp_out *o)
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
    add_chart(cs, o, &c, &s, &dat);
out:
    free((void *)r);
    free(keep);
    rp_buf_free(&s);
    rp_buf_free(&dat);
    rp_buf_free(&plot);
}

/* ------------------------------------------------- predicted vs measured */

static void predmeas_chart(const struct rp_data *d, const char *model, struct charts *cs,
                           struct rp_out *o)
{
    struct rp_chart c;
    struct rp_buf s = {0}, dat = {0}, plot = {0};
    double lo = INFINITY, hi = 0;
    int nblk = 0, npts = 0, in10 = 0;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "predmeas-%s", model);
    file_safe(c.name);
    snprintf(c.title, sizeof c.title, "Predicted against measured time: %s model", model);
    c.section = RP_SEC_MODEL;
    gp_head(&s, &c, "a model's predicted time against the measured time");
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
            dat_num(&dat, x->pt.time_s);
            dat_num(&dat, ps);
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
        gp_str(&plot, *d->families[f] ? d->families[f] : "(no family)");
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
        add_chart(cs, o, &c, &s, &dat);
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

static void latency_chart(const struct rp_data *d, int dev, struct charts *cs, struct rp_out *o)
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
    gp_head(&s, &c, "the pointer-chase latency curve with its plateaus");
    rp_buf_puts(&dat, "# block 0: footprint[bytes] stride[bytes] cycles ns\n");
    double *r = malloc((size_t)(v->a.npts ? v->a.npts : 1) * sizeof *r);
    int nr = 0;
    for (int i = 0; i < v->a.npts; i++) {
        const struct db_latency_point *p = &v->a.pts[i];
        rp_buf_printf(&dat, "%lld %lld", (long long)p->footprint_bytes, (long long)p->stride_bytes);
        dat_num(&dat, p->cycles);
        dat_num(&dat, p->ns);
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
    add_chart(cs, o, &c, &s, &dat);
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
        gp_str(plot, pts[i].key);
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

static void family_charts(const struct rp_data *d, int dev, const char *family, struct charts *cs,
                          struct rp_out *o)
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
        file_safe(c.name);
        snprintf(c.title, sizeof c.title,
                 pass ? "%s: speedup over cuBLAS on %s" : "%s: GFLOP/s on %s",
                 *family ? family : "(no family)", rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_KERNELS;
        snprintf(c.family, sizeof c.family, "%s", family);
        gp_head(&s, &c, pass ? "speedup over cuBLAS against size" : "GFLOP/s against size");
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
        add_chart(cs, o, &c, &s, &dat);
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
                     struct charts *cs, struct rp_out *o)
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
        file_safe(c.name);
        snprintf(c.title, sizeof c.title, "%s %s: memory bandwidth utilisation on %s", family, prec,
                 rp_dev_label(d, dev, lbl, sizeof lbl));
        c.section = RP_SEC_TSM2;
        snprintf(c.family, sizeof c.family, "%s", family);
        gp_head(&s, &c, "memory bandwidth utilisation against cuBLAS");
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
        add_chart(cs, o, &c, &s, &dat);
        rp_buf_free(&s);
        rp_buf_free(&dat);
        rp_buf_free(&plot);
    }
    free(pts);
}

int rp_build_charts(const struct rp_data *d, struct rp_out *o, struct rp_chart **out, int *n)
{
    static const char *const precs[] = {"fp32", "fp64", "fp16", "bf16"};
    struct charts cs;
    memset(&cs, 0, sizeof cs);
    rp_buf_puts(&cs.all, "# all.gp - draws every chart of the report: `gnuplot all.gp`\n");
    for (int i = 0; i < d->ndevs && cs.rc == RK_OK; i++) {
        roofline_chart(d, i, &cs, o);
        if (cs.rc == RK_OK)
            levels_chart(d, i, &cs, o);
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

/* -------------------------------------------------------------- running it */

/* The gnuplot program to run, or NULL when it cannot be found. */
static char *find_program(const char *given)
{
    const char *path = getenv("PATH");
    if (given && strchr(given, '/'))
        return access(given, X_OK) == 0 ? strdup(given) : NULL;
    if (!given)
        given = "gnuplot";
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *full = malloc(len + strlen(given) + 2);
        if (!full)
            return NULL;
        snprintf(full, len + strlen(given) + 2, "%.*s/%s", (int)len, len ? p : ".", given);
        if (access(full, X_OK) == 0)
            return full;
        free(full);
        p += len + (e ? 1 : 0);
        if (!e)
            break;
    }
    return NULL;
}

int rp_run_gnuplot(struct rp_out *o, const char *gnuplot)
{
    char *prog = find_program(gnuplot);
    char *plots = NULL, *log = NULL;
    int rc = RK_OK, status = 0;
    pid_t pid;

    if (!prog)
        return rk_error(RK_ENOTOOL, "gnuplot is not installed; apt-get install gnuplot-nox "
                                    "(the tables and the scripts in plots/ are written)");
    size_t len = strlen(o->dir) + 32;
    plots = malloc(len);
    log = malloc(len);
    if (!plots || !log) {
        rc = rk_error(RK_ENOMEM, "out of memory running gnuplot");
        goto out;
    }
    snprintf(plots, len, "%s/plots", o->dir);
    snprintf(log, len, "%s/plots/gnuplot.log", o->dir);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        rc = rk_error(RK_EFAIL, "cannot start gnuplot: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_RDWR);
        if (fd < 0 || nul < 0 || chdir(plots) != 0)
            _exit(126);
        dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(prog, "gnuplot", "all.gp", (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            rc = rk_error(RK_EFAIL, "waiting for gnuplot failed: %s", strerror(errno));
            goto out;
        }
    }
    rp_out_record(o, "plots/gnuplot.log");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = rk_error(RK_EFAIL, "gnuplot failed on the report's scripts (%s %d); see %s",
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log);
out:
    free(prog);
    free(plots);
    free(log);
    return rc;
}
