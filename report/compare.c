/*
 * compare.c - the report's section "Comparison with a baseline" (`roofkit report --baseline
 * A[:B]`): what `roofkit diff A B` prints, as tables (every configuration, the ceilings) and
 * a chart of each configuration's ratio B/A with its interval, so that a person sees at a
 * glance which kernels moved and by how much beyond their noise.
 *
 * The comparison itself is analysis_compare()'s (analysis/compare.c; docs/compare.md): this
 * file only resolves B when it is not given (the newest done or interrupted capture of A's
 * kind other than A), and lays the result out. It is loaded once, before the tables, into
 * rp_data.cmp; without --baseline the section has no table and no chart, and the page leaves
 * it out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CMP_CONF 0.95

/* B when not given: the newest done or interrupted capture of A's kind other than A. */
static int newest_other(struct db *db, int64_t a, int64_t *b)
{
    struct db_capture *caps = NULL, ca;
    int n = 0, rc = db_get_capture(db, a, &ca);
    if (rc == RK_ENODATA)
        return rk_error(RK_EUSAGE,
                        "option '--baseline': the database holds no capture %lld; see "
                        "'roofkit list captures'",
                        (long long)a);
    if (rc != RK_OK)
        return rc;
    *b = 0;
    if ((rc = db_list_captures(db, &caps, &n)) == RK_OK)
        for (int i = n - 1; i >= 0 && !*b; i--)
            if (caps[i].id != a && caps[i].kind == ca.kind &&
                (caps[i].status == DB_DONE || caps[i].status == DB_INTERRUPTED))
                *b = caps[i].id;
    if (rc == RK_OK && !*b)
        rc = rk_error(RK_EUSAGE,
                      "option '--baseline': no other %s capture to compare capture %lld with; "
                      "name it as --baseline %lld:B",
                      db_capture_kind_name(ca.kind), (long long)a, (long long)a);
    db_free_captures(caps, n);
    db_capture_release(&ca);
    return rc;
}

int rp_compare_load(struct db *db, const struct report_baseline *base, struct rp_data *d)
{
    struct analysis_cmp_opts o = {base->threshold, CMP_CONF, base->noise};
    int64_t b = base->current;
    int rc = RK_OK;
    if (!b && (rc = newest_other(db, base->capture, &b)) != RK_OK)
        return rc;
    if (!(d->cmp = calloc(1, sizeof *d->cmp)))
        return rk_error(RK_ENOMEM, "out of memory comparing captures");
    rc = analysis_compare(db, base->capture, db, b, &o, d->cmp);
    if (rc == RK_ENODATA)
        rc = rk_error(RK_EUSAGE,
                      "option '--baseline': the database holds no capture %lld; see 'roofkit "
                      "list captures'",
                      (long long)(base->capture == b ? b
                                  : base->current    ? b
                                                     : base->capture));
    else if (rc == RK_EUSAGE)
        rc = rk_error(RK_EUSAGE,
                      "option '--baseline': captures %lld and %lld cannot be compared: both must "
                      "be of run, tune or profile, or both probe",
                      (long long)base->capture, (long long)b);
    if (rc != RK_OK) {
        free(d->cmp);
        d->cmp = NULL;
    }
    return rc;
}

void rp_compare_release(struct rp_data *d)
{
    if (!d->cmp)
        return;
    analysis_compare_release(d->cmp);
    free(d->cmp);
    d->cmp = NULL;
}

/* ------------------------------------------------------------------ tables */

/* The class's colour, for the table's cell and the chart's points. */
static const char *colour_of(const struct analysis_cmp_row *r)
{
    return r->regression                      ? "#c0392b"
           : r->change == MODEL_CHANGE_SLOWER ? "#e67e22"
           : r->change == MODEL_CHANGE_FASTER ? "#1e8449"
                                              : "#7f8c8d";
}

void rp_compare_tables(const struct rp_data *d, struct rp_tabs *ts)
{
    static const char *const cols[] = {"kernel", "precision", "shape",  "params", "cache",
                                       "n A",    "n B",       "A [us]", "B [us]", "B/A",
                                       "low",    "high",      "method", "change", NULL};
    static const char *const ccols[] = {"ceiling", "unit A", "unit B", "A", "B", "B/A", NULL};
    const struct analysis_cmp *c = d->cmp;
    struct rp_table *t;
    char title[160];
    if (!c)
        return;
    snprintf(title, sizeof title, "Capture %lld against baseline %lld", (long long)c->cap[1].id,
             (long long)c->cap[0].id);
    if (!(t = rp_tabs_new(ts, "compare", title, RP_SEC_COMPARE)))
        return;
    snprintf(
        t->note, sizeof t->note,
        "B = capture %lld (%s, %s) against A = capture %lld (%s, %s): %ld configurations "
        "in both, %ld slower (%ld beyond %g %%: regressions), %ld faster, %ld within noise; "
        "%ld only in A, %ld only in B (%ld compared across other parameters, 'A -> B': a "
        "shape each ran in one configuration). B/A is the Hodges-Lehmann ratio of the "
        "repetitions' times, low and high its %g %% interval (Mann-Whitney); 'min/median/max': an "
        "approximate interval, the rows stored no repetition (docs/compare.md). Slower or "
        "faster: the interval widened by the run-to-run noise floor (%g %%) excludes 1; the "
        "median B/A of the whole run is %.3f. The same as 'roofkit diff %lld %lld'.",
        (long long)c->cap[1].id, db_capture_kind_name(c->cap[1].kind),
        c->cap[1].started_at ? c->cap[1].started_at : "?", (long long)c->cap[0].id,
        db_capture_kind_name(c->cap[0].kind), c->cap[0].started_at ? c->cap[0].started_at : "?",
        c->compared, c->slower, c->regressions, 100 * c->opts.threshold, c->faster, c->noise,
        c->only_a, c->only_b, c->params_differ, 100 * c->opts.conf, 100 * c->opts.noise, c->shift,
        (long long)c->cap[0].id, (long long)c->cap[1].id);
    for (const char *const *p = cols; *p; p++)
        rp_table_col(t, *p);
    for (int i = 0; i < c->nrows; i++) {
        const struct analysis_cmp_row *r = &c->rows[i];
        const int iv = r->in == 3 && r->r.method != MODEL_RATIO_NONE;
        char shape[96], style[48];
        analysis_cmp_shape(r, shape, sizeof shape);
        rp_cell_str(t, r->kernel);
        rp_cell_str(t, r->precision ? r->precision : "");
        rp_cell_str(t, shape);
        if (r->params_b) {
            char params[640];
            snprintf(params, sizeof params, "%s -> %s", r->params ? r->params : "{}", r->params_b);
            rp_cell_str(t, params);
        } else {
            rp_cell_str(t, r->params ? r->params : "");
        }
        rp_cell_str(t, r->cache_state ? r->cache_state : "");
        rp_cell_int(t, r->n_a);
        rp_cell_int(t, r->n_b);
        rp_cell_num(t, r->median_a_ns / 1e3);
        rp_cell_num(t, r->median_b_ns / 1e3);
        rp_cell_num(t, r->in == 3 ? r->r.ratio : NAN);
        rp_cell_num(t, iv ? r->r.lo : NAN);
        rp_cell_num(t, iv ? r->r.hi : NAN);
        rp_cell_str(t, r->in == 3 ? model_ratio_method_name(r->r.method) : "");
        rp_cell_str(t, analysis_cmp_change(r));
        snprintf(style, sizeof style, "color:%s;font-weight:600", colour_of(r));
        if (r->in == 3 && r->change != MODEL_CHANGE_NOISE)
            rp_cell_attr(t, NULL, style);
    }

    if (!c->nceil)
        return;
    snprintf(title, sizeof title, "Ceilings of capture %lld against baseline %lld",
             (long long)c->cap[1].id, (long long)c->cap[0].id);
    if (!(t = rp_tabs_new(ts, "compare-ceilings", title, RP_SEC_COMPARE)))
        return;
    snprintf(t->note, sizeof t->note,
             "Each capture's device's ceilings as they were when it ran: A from probe capture "
             "%lld%s, B from probe capture %lld%s. B/A in the same unit (a bandwidth or a peak "
             "higher is better, a latency lower).",
             (long long)c->probe[0], c->ceil_after[0] ? " (probed after A ran)" : "",
             (long long)c->probe[1], c->ceil_after[1] ? " (probed after B ran)" : "");
    for (const char *const *p = ccols; *p; p++)
        rp_table_col(t, *p);
    for (int i = 0; i < c->nceil; i++) {
        const struct analysis_cmp_ceiling *x = &c->ceil[i];
        rp_cell_str(t, x->name);
        rp_cell_str(t, isnan(x->a) ? "" : x->unit);
        rp_cell_str(t, x->unit_b ? x->unit_b : "");
        rp_cell_num(t, x->a);
        rp_cell_num(t, x->b);
        rp_cell_num(t, x->ratio);
    }
}

/* ------------------------------------------------------------------ chart */

void rp_compare_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o)
{
    static const char *const series[4] = {"within noise", "faster", "slower", "slower: regression"};
    const struct analysis_cmp *c = d->cmp;
    struct rp_chart ch;
    struct rp_buf s = {0}, dat = {0};
    double lo = 1.0, hi = 1.0 + (c ? c->opts.threshold : 0);
    int n = 0, labels;
    if (!c || cs->rc != RK_OK)
        return;
    for (int i = 0; i < c->nrows; i++)
        n += c->rows[i].in == 3 && isfinite(c->rows[i].r.ratio);
    if (n == 0)
        return;
    labels = n <= 60;
    memset(&ch, 0, sizeof ch);
    snprintf(ch.name, sizeof ch.name, "compare");
    snprintf(ch.title, sizeof ch.title,
             "Time of capture %lld over baseline %lld, per configuration", (long long)c->cap[1].id,
             (long long)c->cap[0].id);
    snprintf(ch.caption, sizeof ch.caption,
             "B/A for each kernel configuration in both captures, in the table's order, with its "
             "%g %% interval as an error bar (from the repetitions; a bar too short to see is a "
             "tight one). Above 1: B is slower. Red: slower beyond the %g %% threshold (a "
             "regression), orange: slower, green: faster, grey: within noise; the dashed lines "
             "are 1 and 1 + threshold.%s",
             100 * c->opts.conf, 100 * c->opts.threshold,
             labels ? "" : " Too many configurations to name each: the table names them.");
    ch.section = RP_SEC_COMPARE;
    rp_gp_head_sized(&s, &ch, "each configuration's time ratio with its interval", 600,
                     "outside right top spacing 1.1");
    /* one block per class: x ratio low high */
    for (int cls = 0; cls < 4; cls++) {
        int k = 0, x = 0;
        rp_buf_printf(&dat, "# block %d: %s: index ratio low high label\n", cls, series[cls]);
        for (int i = 0; i < c->nrows; i++) {
            const struct analysis_cmp_row *r = &c->rows[i];
            char shape[96];
            if (!(r->in == 3 && isfinite(r->r.ratio)))
                continue;
            x++;
            int rc_cls = r->regression                      ? 3
                         : r->change == MODEL_CHANGE_SLOWER ? 2
                         : r->change == MODEL_CHANGE_FASTER ? 1
                                                            : 0;
            if (rc_cls != cls)
                continue;
            const int iv = r->r.method != MODEL_RATIO_NONE;
            rp_buf_printf(&dat, "%d", x);
            rp_dat_num(&dat, r->r.ratio);
            rp_dat_num(&dat, iv ? r->r.lo : r->r.ratio);
            rp_dat_num(&dat, iv ? r->r.hi : r->r.ratio);
            analysis_cmp_shape(r, shape, sizeof shape);
            rp_buf_puts(&dat, " ");
            char label[200];
            snprintf(label, sizeof label, "%.40s %s %s", r->kernel,
                     r->precision ? r->precision : "", shape);
            for (char *p = label; *p; p++)
                if (*p == '"')
                    *p = '\'';
            rp_buf_printf(&dat, "\"%s\"\n", label);
            lo = fmin(lo, iv ? r->r.lo : r->r.ratio);
            hi = fmax(hi, iv ? r->r.hi : r->r.ratio);
            k++;
        }
        if (!k) /* an empty block would end the data early: one point off the chart */
            rp_buf_puts(&dat, "-1 1 1 1 \"\"\n");
        rp_buf_puts(&dat, "\n\n");
    }
    lo = fmax(lo / 1.05, 1e-3);
    hi = fmin(hi * 1.05, 1e3);
    rp_buf_printf(&s,
                  "set logscale y\nset yrange [%.6g:%.6g]\nset xrange [0:%d]\n"
                  "set ylabel 'B / A (time)'\nset xlabel 'configuration'\n",
                  lo, hi, n + 1);
    /* a log axis over a narrow range shows no tic of its own: name the usual ratios */
    static const double tics[] = {0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 0.95, 1.0, 1.05,
                                  1.1, 1.2, 1.3, 1.5,  2.0, 3.0, 5.0,  10.0};
    rp_buf_puts(&s, "set ytics (");
    for (size_t i = 0, k = 0; i < sizeof tics / sizeof tics[0]; i++)
        if (tics[i] >= lo && tics[i] <= hi)
            rp_buf_printf(&s, "%s'%g' %g", k++ ? ", " : "", tics[i], tics[i]);
    rp_buf_puts(&s, ")\n");
    if (labels)
        rp_buf_puts(&s, "set xtics rotate by -60 font ',8' nomirror\n");
    else
        rp_buf_puts(&s, "set xtics nomirror\n");
    rp_buf_printf(&s,
                  "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "
                  "'#444444'\nset arrow from graph 0, first %.6g to graph 1, first %.6g nohead "
                  "dt 2 lc rgb '#c0392b'\n",
                  1.0 + c->opts.threshold, 1.0 + c->opts.threshold);
    rp_buf_puts(&s, "plot ");
    for (int cls = 0; cls < 4; cls++) {
        static const char *const colour[4] = {"#7f8c8d", "#1e8449", "#e67e22", "#c0392b"};
        rp_buf_printf(&s,
                      "%s'compare.dat' index %d using 1:2:3:4%s with yerrorbars pt 7 ps 0.6 lc "
                      "rgb '%s' title '%s'",
                      cls ? ", \\\n     " : "", cls, labels ? ":xtic(5)" : "", colour[cls],
                      series[cls]);
    }
    rp_buf_puts(&s, "\n");
    rp_chart_add(cs, o, &ch, &s, &dat);
    rp_buf_free(&s);
    rp_buf_free(&dat);
}
