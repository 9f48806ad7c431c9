/*
 * marks.c - every point of every chart explained without JavaScript: an SVG <title> that a
 * browser shows on hover (kernel, shape or launch, time, GFLOP/s, intensity, bound, prediction)
 * and a link to the point's row in the tables.
 *
 * Why the report does this itself: gnuplot 5.4 (Debian 12) writes per-point text only as
 * "hypertext" labels (`with labels hypertext point`), and those need JavaScript either way.
 * With `set term svg mouse` it adds a <script> (a link to gnuplot's own script, or the whole
 * script inline with `standalone`); without `mouse` it still wraps each point in
 * <g onmousemove="gnuplot_svg.showHypertext(evt,'...')"> with an empty <title> - event handlers
 * calling a script that is not there. The report must stay script-free, so:
 *
 *   1. each chart draws its points with plain `with points` clauses (`notitle`: the key entry
 *      is a clause of its own, `1/0 ... title`, so no key sample sits among the points), one
 *      data block per clause, and records one mark (title, measurement id) per data line, in
 *      the order of the data file (rp_mark, rp_marks_bind with the clause's number);
 *   2. gnuplot writes each clause's elements inside <g id="gnuplot_plot_N"> (N counts the
 *      clauses of the plot command from 1) and each point as one
 *      <use xlink:href='#gpPtK' .../>, in the order of the data, skipping nothing that lies in
 *      the plot's ranges (the charts compute their ranges from their points);
 *   3. rp_marks_wrap() puts the k-th <use> of group N inside the k-th mark of clause N:
 *      <a href="../index.html#m-12"><title>...</title><use .../></a>.
 *
 * This keeps the scripts as they are (`gnuplot NAME.gp` still re-plots every point: the titles
 * are an addition, not a replacement of gnuplot's drawing), and it cannot put a title on the
 * wrong point without noticing: a group whose points are not exactly as many as its marks is
 * left untitled and counted (a warning names the chart). Writing the point layer ourselves over
 * gnuplot's axes was the other way; it would have to recompute gnuplot's plot area and symbol
 * shapes, and a script re-plotted by hand would lose its points.
 *
 * The links: the SVG files in plots/ point to ../index.html#m-ID; the page inlines them with
 * the link made local (#m-ID, pages.c), where the measurement tables give each row its id.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

int rp_plot_next(struct rp_plot *p)
{
    if (p->n)
        rp_buf_puts(&p->b, ", \\\n     ");
    return ++p->n;
}

void rp_mark(struct rp_marks *mk, int64_t id, const char *title)
{
    if (mk->oom)
        return;
    if (mk->n == mk->cap) {
        int cap = mk->cap ? 2 * mk->cap : 64;
        int *c = realloc(mk->clause, (size_t)cap * sizeof *c);
        if (c)
            mk->clause = c;
        int64_t *i = c ? realloc(mk->id, (size_t)cap * sizeof *i) : NULL;
        if (i)
            mk->id = i;
        size_t *t = i ? realloc(mk->title, (size_t)cap * sizeof *t) : NULL;
        if (!t) {
            mk->oom = 1;
            return;
        }
        mk->title = t;
        mk->cap = cap;
    }
    mk->clause[mk->n] = 0;
    mk->id[mk->n] = id;
    mk->title[mk->n] = mk->text.len;
    rp_buf_add(&mk->text, title, strlen(title) + 1);
    mk->oom |= mk->text.oom;
    mk->n++;
}

void rp_marks_bind(struct rp_marks *mk, int from, int clause)
{
    for (int i = from; i < mk->n; i++)
        mk->clause[i] = clause;
}

void rp_marks_release(struct rp_marks *mk)
{
    free(mk->clause);
    free(mk->id);
    free(mk->title);
    rp_buf_free(&mk->text);
    memset(mk, 0, sizeof *mk);
}

/* --------------------------------------------------------------- thinning */

int rp_thin_init(struct rp_thin *t, int n)
{
    t->cap = 64;
    while (t->cap < 2 * (size_t)n)
        t->cap *= 2;
    t->slot = malloc(t->cap * sizeof *t->slot);
    t->key = malloc(t->cap * sizeof *t->key);
    if (!t->slot || !t->key) {
        rp_thin_free(t);
        return rk_error(RK_ENOMEM, "out of memory placing %d points", n);
    }
    memset(t->slot, -1, t->cap * sizeof *t->slot);
    return RK_OK;
}

int rp_thin_put(struct rp_thin *t, int series, double px, double py, int i)
{
    const long long cx = (long long)floor(px / RP_THIN_CELL);
    const long long cy = (long long)floor(py / RP_THIN_CELL);
    const long long k = ((long long)series << 40) ^ ((cx & 0xfffff) << 20) ^ (cy & 0xfffff);
    size_t h = (size_t)((unsigned long long)k * 0x9E3779B97F4A7C15ULL >> 17) & (t->cap - 1);
    while (t->slot[h] >= 0 && t->key[h] != k)
        h = (h + 1) & (t->cap - 1);
    if (t->slot[h] >= 0)
        return t->slot[h];
    t->slot[h] = i;
    t->key[h] = k;
    return -1;
}

void rp_thin_free(struct rp_thin *t)
{
    free(t->slot);
    free(t->key);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ titles */

/* A time for people: "812 ns", "12.3 µs", "4.56 ms", "1.2 s". */
static const char *fmt_time(char *buf, size_t len, double s)
{
    const double ns = s * 1e9, a = fabs(ns);
    if (a < 1e3)
        snprintf(buf, len, "%.3g ns", ns);
    else if (a < 1e6)
        snprintf(buf, len, "%.3g µs", ns * 1e-3);
    else if (a < 1e9)
        snprintf(buf, len, "%.3g ms", ns * 1e-6);
    else
        snprintf(buf, len, "%.3g s", s);
    return buf;
}

static const char *const level_name[] = {"DRAM", "L2", "L1", "shared"};

/* A number with 3 significant digits, whole from 1000 up ("0.0123", "4.5", "1470"). */
static const char *fmt3(char *buf, size_t len, double v)
{
    snprintf(buf, len, fabs(v) >= 1000 ? "%.0f" : "%.3g", v);
    return buf;
}

/*
 * Three lines, kept short (a chart of thousands of points carries thousands of them):
 *   tsm2_v3 #12, 4096×8×4096 t1=128 t2=8 t3=4 fp32
 *   32.8 µs, 8181 GFLOP/s, 3.98 FLOP/B (DRAM, cost formula)
 *   dram bound, 68.6 % of roof; overlap 33.9 µs (+3 %)
 */
void rp_point_title(const struct rp_data *d, const struct rp_meas *x, int level, const char *model,
                    int merged, struct rp_buf *b)
{
    const struct db_measurement *m = &x->row->m;
    const struct analysis_point *p = &x->pt;
    char name[64], shape[320], t1[32], n1[32];
    int lv = level >= 0 ? level : MODEL_LEVEL_DRAM;
    if (m->family || !m->source || strcmp(m->source, "profile"))
        snprintf(name, sizeof name, "%.60s", m->kernel ? m->kernel : "?");
    else
        rp_short_kernel_name(m->kernel ? m->kernel : "?", name, sizeof name);
    rp_shape_text(d, x, shape, sizeof shape);
    rp_buf_printf(b, "%s #%lld, %s", name, (long long)m->id, shape);
    if (m->precision && (m->m > 0 || m->n > 0 || m->k > 0))
        rp_buf_printf(b, " %s", m->precision);
    rp_buf_printf(b, "\n%s, %s GFLOP/s", fmt_time(t1, sizeof t1, p->time_s),
                  fmt3(n1, sizeof n1, x->point_gflops));
    if (isfinite(p->intensity[lv]) && p->intensity[lv] > 0)
        rp_buf_printf(b, ", %s FLOP/B (%s, %s)", fmt3(n1, sizeof n1, p->intensity[lv]),
                      level_name[lv], p->counters ? "counters" : "cost formula");
    const struct db_prediction *pr = model ? rp_prediction(x, model) : NULL;
    const int predicted = pr && isfinite(pr->predicted_time_ns);
    if (p->bound && isfinite(p->pct_roof))
        rp_buf_printf(b, "\n%s bound, %.3g %% of roof%s", p->bound, p->pct_roof,
                      predicted ? "; " : "");
    else if (predicted)
        rp_buf_puts(b, "\n");
    if (predicted)
        rp_buf_printf(b, "%s %s (%+.0f %%)", model,
                      fmt_time(t1, sizeof t1, pr->predicted_time_ns * 1e-9),
                      100.0 * model_rel_error(pr->predicted_time_ns, m->time_median_ns));
    if (merged > 0)
        rp_buf_printf(b, "\n+%d more within %d px", merged, RP_THIN_CELL);
}

/* ------------------------------------------------------------------- SVG */

static const char group_tag[] = "<g id=\"gnuplot_plot_";
static const char point_tag[] = "<use xlink:href='#gpPt";

/* Orders mark indices by clause, then recording order. */
static const struct rp_marks *sort_mk;
static int cmp_mark(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (sort_mk->clause[i] != sort_mk->clause[j])
        return sort_mk->clause[i] < sort_mk->clause[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* Occurrences of s in [p, e). */
static int count_in(const char *p, const char *e, const char *s)
{
    int n = 0;
    size_t l = strlen(s);
    for (const char *q = p; (q = strstr(q, s)) && q < e; q += l)
        n++;
    return n;
}

int rp_marks_wrap(struct rp_buf *out, const char *svg, size_t len, const struct rp_marks *mk,
                  const char *href_prefix, int *bad)
{
    const char *p = svg, *end = svg + len;
    int *order = NULL, wrapped = 0;
    *bad = 0;
    if (!mk || mk->n == 0) {
        rp_buf_add(out, svg, len);
        return 0;
    }
    if (!(order = malloc((size_t)mk->n * sizeof *order))) {
        out->oom = 1;
        return 0;
    }
    for (int i = 0; i < mk->n; i++)
        order[i] = i;
    sort_mk = mk;
    qsort(order, (size_t)mk->n, sizeof *order, cmp_mark);
    int at = 0; /* the next mark in clause order */
    for (const char *g; (g = strstr(p, group_tag)) && g < end;) {
        int clause = atoi(g + sizeof group_tag - 1);
        const char *next = strstr(g + 1, group_tag);
        if (!next || next > end)
            next = end;
        rp_buf_add(out, p, (size_t)(g - p));
        while (at < mk->n && mk->clause[order[at]] < clause)
            at++;
        int a = at, b = at;
        while (b < mk->n && mk->clause[order[b]] == clause)
            b++;
        if (b == a || count_in(g, next, point_tag) != b - a) {
            *bad += b != a;
            rp_buf_add(out, g, (size_t)(next - g));
        } else {
            const char *q = g;
            for (int k = a; k < b; k++) {
                const char *u = strstr(q, point_tag), *ue = strstr(u, "/>");
                const int i = order[k];
                ue = ue ? ue + 2 : u + strlen(u);
                rp_buf_add(out, q, (size_t)(u - q));
                if (mk->id[i])
                    rp_buf_printf(out, "<a href=\"%sm-%lld\"><title>", href_prefix,
                                  (long long)mk->id[i]);
                else
                    rp_buf_puts(out, "<g><title>");
                rp_buf_html(out, mk->text.p + mk->title[i]);
                rp_buf_puts(out, "</title>");
                rp_buf_add(out, u, (size_t)(ue - u));
                rp_buf_puts(out, mk->id[i] ? "</a>" : "</g>");
                q = ue;
                wrapped++;
            }
            rp_buf_add(out, q, (size_t)(next - q));
        }
        at = b;
        p = next;
    }
    rp_buf_add(out, p, (size_t)(end - p));
    free(order);
    return wrapped;
}

int rp_chart_marks(struct rp_out *o, const struct rp_chart *c, int n)
{
    for (int i = 0; i < n; i++) {
        char rel[160], *svg = NULL;
        size_t len;
        struct rp_buf b = {0};
        int bad = 0, rc;
        if (!c[i].marks || c[i].marks->n == 0)
            continue;
        snprintf(rel, sizeof rel, "plots/%s.svg", c[i].name);
        if (rp_read_file(o->dir, rel, &svg, &len) != RK_OK)
            return rk_error(RK_EIO, "cannot read '%s/%s' that gnuplot wrote", o->dir, rel);
        rp_marks_wrap(&b, svg, len, c[i].marks, "../index.html#", &bad);
        free(svg);
        if (bad)
            rk_warn("chart %s: %d group%s of points not as gnuplot drew them; left without "
                    "titles",
                    c[i].name, bad, bad == 1 ? "" : "s");
        if (b.oom || c[i].marks->oom) {
            rp_buf_free(&b);
            return rk_error(RK_ENOMEM, "out of memory titling the points of chart %s", c[i].name);
        }
        rc = rp_out_write(o, rel, b.p, b.len);
        rp_buf_free(&b);
        if (rc != RK_OK)
            return rc;
    }
    return RK_OK;
}
