/*
 * compare.c - two captures side by side, as a CI job asks: which kernels got slower, which
 * faster, which moved only within their noise, and did the GPU's ceilings move under them
 * (analysis.h, analysis_compare; `roofkit diff` and the report's comparison with a baseline).
 *
 * Matching: a suite measurement is one kernel configuration, keyed by (kernel, precision, m,
 * n, k, params, cache state); params is the JSON text kernels/ writes, its keys always in
 * the registry's order, so equal configurations have equal text. A profiled launch is keyed
 * by its kernel name alone: a kernel's launches in one capture are its repetitions. Both
 * sides are sorted by key and merged; a key on one side only is listed as such, but for one
 * case: a shape each capture ran in a single configuration, with other parameters on each
 * side (an automatic choice that changed, or an explicit --param), is compared as one
 * configuration (params_b): that is the regression a CI job must see.
 *
 * Samples: every repetition's time where the row stores them (schema 3), a profiled launch's
 * own time, else the row's min/median/max, compared approximately (model/ratio.c says how).
 * A key stored twice in one capture pools its repetitions. Measurements that failed
 * verification are counted and left out: a wrong result's time says nothing.
 *
 * Ceilings: a probe capture's own; a run's, tune's or profile's device's as they were when
 * it ran: per ceiling name, the newest done or interrupted probe of that device stored before
 * it (a smaller id in its database), else the device's current ones.
 *
 * Reads through db/ only; prints nothing but the database's errors.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- keys */

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int is_profiled(const struct db_measurement *m)
{
    return m->source && strcmp(m->source, "profile") == 0;
}

static int cmp_i64(int64_t x, int64_t y)
{
    return (x > y) - (x < y);
}

/* The order of keys: suite rows before profiled ones, then kernel, and for suite rows the
 * precision, shape, params and cache state. */
static int key_cmp(const struct db_measurement *x, const struct db_measurement *y)
{
    int px = is_profiled(x), py = is_profiled(y), c;
    if (px != py)
        return px - py;
    if ((c = strcmp(x->kernel, y->kernel)) != 0 || px)
        return c;
    if ((c = strcmp(or_empty(x->precision), or_empty(y->precision))) != 0)
        return c;
    if ((c = cmp_i64(x->m, y->m)) || (c = cmp_i64(x->n, y->n)) || (c = cmp_i64(x->k, y->k)))
        return c;
    if ((c = strcmp(or_empty(x->params), or_empty(y->params))) != 0)
        return c;
    return strcmp(or_empty(x->cache_state), or_empty(y->cache_state));
}

static int by_key(const void *a, const void *b)
{
    const struct db_measurement_row *x = *(const struct db_measurement_row *const *)a;
    const struct db_measurement_row *y = *(const struct db_measurement_row *const *)b;
    int c = key_cmp(&x->m, &y->m);
    return c ? c : (x > y) - (x < y); /* stored order within a key */
}

/* ------------------------------------------------------------- samples */

/* What one side holds of one key. */
struct side {
    double *t; /* every known time (repetitions, launches) */
    size_t n, cap;
    int summary_only;              /* some row has only min/median/max */
    struct model_time_summary sum; /* the pooled summary of all its rows */
    double medians[64];            /* row medians of summary-only rows, for the pooled median */
    int nmedians;
    long count; /* repetitions (or launches) in all */
    int oom;
};

static void side_push(struct side *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        double *p = realloc(s->t, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->t = p;
        s->cap = cap;
    }
    s->t[s->n++] = v;
}

static void side_widen(struct side *s, double lo, double hi)
{
    if (!(s->sum.min <= lo))
        s->sum.min = lo;
    if (!(s->sum.max >= hi))
        s->sum.max = hi;
}

/* Adds row m to side s: its stored repetitions, its time (a profiled launch, or one
 * repetition), or its summary. Rows with no usable time are skipped. */
static void side_add(struct side *s, const struct db_measurement *m)
{
    if (m->n_times > 0 && m->times_ns) {
        for (int i = 0; i < m->n_times; i++)
            if (isfinite(m->times_ns[i]) && m->times_ns[i] > 0) {
                side_push(s, m->times_ns[i]);
                side_widen(s, m->times_ns[i], m->times_ns[i]);
                s->count++;
            }
        return;
    }
    if (!(isfinite(m->time_median_ns) && m->time_median_ns > 0))
        return;
    if (is_profiled(m) || m->reps <= 1) {
        side_push(s, m->time_median_ns);
        side_widen(s, m->time_median_ns, m->time_median_ns);
        s->count++;
        return;
    }
    s->summary_only = 1;
    side_widen(s,
               isfinite(m->time_min_ns) && m->time_min_ns > 0 ? m->time_min_ns : m->time_median_ns,
               isfinite(m->time_max_ns) && m->time_max_ns >= m->time_median_ns ? m->time_max_ns
                                                                               : m->time_median_ns);
    if (s->nmedians < (int)(sizeof s->medians / sizeof s->medians[0]))
        s->medians[s->nmedians++] = m->time_median_ns;
    s->count += m->reps;
}

/* The side's median and its summary (min/median/max and count). NaN when empty. */
static double side_finish(struct side *s)
{
    double med = NAN;
    if (s->n > 0 && !s->summary_only) {
        double *c = malloc(s->n * sizeof *c);
        if (!c) {
            s->oom = 1;
            return NAN;
        }
        memcpy(c, s->t, s->n * sizeof *c);
        med = model_median(c, s->n);
        free(c);
    } else if (s->summary_only) {
        /* the median of the rows' medians and of the single times beside them */
        double all[128];
        int n = 0;
        for (int i = 0; i < s->nmedians; i++)
            all[n++] = s->medians[i];
        for (size_t i = 0; i < s->n && n < 128; i++)
            all[n++] = s->t[i];
        med = model_median(all, (size_t)n);
    }
    s->sum.median = med;
    s->sum.n = s->count;
    if (isfinite(med)) {
        side_widen(s, med, med);
    }
    return med;
}

static void side_release(struct side *s)
{
    free(s->t);
    memset(s, 0, sizeof *s);
}

/* --------------------------------------------------------------- rows */

struct rows {
    struct analysis_cmp_row *r;
    int n, cap;
};

static struct analysis_cmp_row *rows_new(struct rows *rs)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 32;
        struct analysis_cmp_row *p = realloc(rs->r, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        rs->r = p;
        rs->cap = cap;
    }
    memset(&rs->r[rs->n], 0, sizeof rs->r[0]);
    return &rs->r[rs->n++];
}

/* The key of measurement m into row r (pointers into m). */
static void row_key(struct analysis_cmp_row *r, const struct db_measurement *m)
{
    r->kernel = m->kernel;
    r->profiled = is_profiled(m);
    if (!r->profiled) {
        r->precision = m->precision;
        r->m = m->m;
        r->n = m->n;
        r->k = m->k;
        r->params = m->params;
        r->cache_state = m->cache_state;
    }
}

/* Compares one key: group ga[0..na) of A's rows against gb[0..nb) of B's. RK_OK or
 * RK_ENOMEM (printed). */
static int compare_key(struct analysis_cmp *c, struct analysis_cmp_row *r,
                       struct db_measurement_row *const *ga, int na,
                       struct db_measurement_row *const *gb, int nb)
{
    struct side s[2];
    int rc = RK_OK;
    memset(s, 0, sizeof s);
    s[0].sum.min = s[0].sum.max = s[1].sum.min = s[1].sum.max = NAN;
    for (int i = 0; i < na; i++)
        side_add(&s[0], &ga[i]->m);
    for (int i = 0; i < nb; i++)
        side_add(&s[1], &gb[i]->m);
    r->median_a_ns = na ? side_finish(&s[0]) : NAN;
    r->median_b_ns = nb ? side_finish(&s[1]) : NAN;
    r->n_a = s[0].count;
    r->n_b = s[1].count;
    r->r.ratio = NAN;
    r->r.lo = 0.0;
    r->r.hi = INFINITY;
    r->r.conf = NAN;
    r->r.method = MODEL_RATIO_NONE;
    if (s[0].oom || s[1].oom) {
        rc = rk_error(RK_ENOMEM, "out of memory comparing captures");
        goto out;
    }
    if (r->in == 3 && isfinite(r->median_a_ns) && isfinite(r->median_b_ns)) {
        if (!s[0].summary_only && !s[1].summary_only)
            rc = model_ratio_interval(s[0].t, s[0].n, s[1].t, s[1].n, c->opts.conf, &r->r);
        else {
            rc = model_ratio_interval_summary(&s[0].sum, &s[1].sum, c->opts.conf, &r->r);
            c->approx++;
        }
        if (rc == RK_ENOMEM)
            rc = rk_error(RK_ENOMEM, "out of memory comparing captures");
        else if (rc != RK_OK) /* a time that no sample should hold: no interval */
            rc = RK_OK;
    }
    r->change = model_ratio_change_floor(&r->r, c->opts.noise);
    r->regression = r->change == MODEL_CHANGE_SLOWER && r->r.ratio > 1.0 + c->opts.threshold;
out:
    side_release(&s[0]);
    side_release(&s[1]);
    return rc;
}

/* c->shift: the median ratio of the rows compared (NaN when none has one). */
static int run_shift(struct analysis_cmp *c)
{
    double *v = malloc((size_t)(c->nrows ? c->nrows : 1) * sizeof *v);
    size_t n = 0;
    if (!v)
        return rk_error(RK_ENOMEM, "out of memory comparing captures");
    for (int i = 0; i < c->nrows; i++)
        if (c->rows[i].in == 3 && isfinite(c->rows[i].r.ratio))
            v[n++] = c->rows[i].r.ratio;
    c->shift = n ? model_median(v, n) : NAN;
    free(v);
    return RK_OK;
}

/* Sorted pointers to the verified rows of a side; *unverified counts the others. */
static int sorted_rows(struct db_measurement_row *rows, int n, struct db_measurement_row ***out,
                       int *nout, long *unverified)
{
    struct db_measurement_row **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    int k = 0;
    if (!p)
        return rk_error(RK_ENOMEM, "out of memory comparing captures");
    for (int i = 0; i < n; i++) {
        if (rows[i].m.verified == 0)
            (*unverified)++;
        else
            p[k++] = &rows[i];
    }
    qsort(p, (size_t)k, sizeof *p, by_key);
    *out = p;
    *nout = k;
    return RK_OK;
}

/* Where a row's repetitions are: A's sorted rows [ia, ia + na), B's [jb, jb + nb). */
struct span {
    int ia, na, jb, nb;
};

/* The same kernel, precision, shape and cache state (suite rows): the key but its params. */
static int same_shape(const struct analysis_cmp_row *x, const struct analysis_cmp_row *y)
{
    return !x->profiled && !y->profiled && strcmp(x->kernel, y->kernel) == 0 &&
           strcmp(or_empty(x->precision), or_empty(y->precision)) == 0 && x->m == y->m &&
           x->n == y->n && x->k == y->k &&
           strcmp(or_empty(x->cache_state), or_empty(y->cache_state)) == 0;
}

/*
 * A shape that each capture ran in one configuration only, with other parameters (a kernel
 * whose automatic choice, or an explicit --param, changed): its two one-sided rows become one
 * row, compared, with params_b set. A shape run in several configurations on either side (a
 * sweep) is left alone: which configuration answers which is not known. Rows are in key order,
 * so a shape's rows are adjacent.
 */
static void pair_by_shape(struct rows *rs, struct span *sp)
{
    int out = 0;
    for (int i = 0; i < rs->n;) {
        int j = i, na = 0, nb = 0, ia = -1, ib = -1;
        while (j < rs->n && same_shape(&rs->r[i], &rs->r[j])) {
            na += (rs->r[j].in & 1) != 0;
            nb += (rs->r[j].in & 2) != 0;
            ia = rs->r[j].in == 1 ? j : ia;
            ib = rs->r[j].in == 2 ? j : ib;
            j++;
        }
        if (j == i) /* a profiled kernel: its own group */
            j = i + 1;
        if (j - i == 2 && na == 1 && nb == 1 && ia >= 0 && ib >= 0) {
            struct analysis_cmp_row r = rs->r[ia];
            struct span s = sp[ia];
            r.in = 3;
            r.params_b = rs->r[ib].params;
            s.jb = sp[ib].jb;
            s.nb = sp[ib].nb;
            rs->r[out] = r;
            sp[out++] = s;
        } else {
            for (int k = i; k < j; k++, out++) {
                rs->r[out] = rs->r[k];
                sp[out] = sp[k];
            }
        }
        i = j;
    }
    rs->n = out;
}

static int compare_measurements(struct analysis_cmp *c)
{
    struct db_measurement_row **a = NULL, **b = NULL;
    struct rows rs = {NULL, 0, 0};
    struct span *sp = NULL;
    int na = 0, nb = 0, i = 0, j = 0, cap = 0, rc;

    if ((rc = sorted_rows(c->mrows[0], c->nm[0], &a, &na, &c->unverified)) != RK_OK)
        return rc;
    if ((rc = sorted_rows(c->mrows[1], c->nm[1], &b, &nb, &c->unverified)) != RK_OK) {
        free(a);
        return rc;
    }
    /* the keys of both sides, merged in key order */
    while (rc == RK_OK && (i < na || j < nb)) {
        int ia = i, jb = j, cmp;
        struct analysis_cmp_row *r;
        if (i < na && j < nb)
            cmp = key_cmp(&a[i]->m, &b[j]->m);
        else
            cmp = i < na ? -1 : 1;
        if (cmp <= 0)
            while (i < na && key_cmp(&a[i]->m, &a[ia]->m) == 0)
                i++;
        if (cmp >= 0)
            while (j < nb && key_cmp(&b[j]->m, &b[jb]->m) == 0)
                j++;
        if (rs.n == cap) {
            struct span *g = realloc(sp, (size_t)(cap = cap ? 2 * cap : 32) * sizeof *g);
            if (!g) {
                rc = rk_error(RK_ENOMEM, "out of memory comparing captures");
                break;
            }
            sp = g;
        }
        if (!(r = rows_new(&rs))) {
            rc = rk_error(RK_ENOMEM, "out of memory comparing captures");
            break;
        }
        row_key(r, cmp <= 0 ? &a[ia]->m : &b[jb]->m);
        r->in = (cmp <= 0 ? 1 : 0) | (cmp >= 0 ? 2 : 0);
        sp[rs.n - 1] = (struct span){ia, i - ia, jb, j - jb};
    }
    if (rc == RK_OK)
        pair_by_shape(&rs, sp);
    for (int k = 0; k < rs.n && rc == RK_OK; k++) {
        struct analysis_cmp_row *r = &rs.r[k];
        rc = compare_key(c, r, a + sp[k].ia, sp[k].na, b + sp[k].jb, sp[k].nb);
        if (rc != RK_OK)
            break;
        if (r->in == 1)
            c->only_a++;
        else if (r->in == 2)
            c->only_b++;
        else {
            c->compared++;
            c->params_differ += r->params_b != NULL;
            c->slower += r->change == MODEL_CHANGE_SLOWER;
            c->faster += r->change == MODEL_CHANGE_FASTER;
            c->noise += r->change == MODEL_CHANGE_NOISE;
            c->regressions += r->regression;
        }
    }
    free(a);
    free(b);
    free(sp);
    c->rows = rs.r;
    c->nrows = rs.n;
    if (rc == RK_OK)
        rc = run_shift(c);
    return rc;
}

/* ------------------------------------------------------------- ceilings */

/*
 * The ceilings side i shows, into c->crows[i]: a probe capture's own; else, per name, the
 * newest done/interrupted probe of the capture's device before it; else the device's current
 * ones. Pair ceilings (peer_device_id) are left out. RK_OK or the database's error.
 */
static int load_ceilings(struct db *db, struct analysis_cmp *c, int i)
{
    const struct db_capture *cap = &c->cap[i];
    struct db_capture *caps = NULL;
    struct db_ceiling *got = NULL;
    int ncaps = 0, ngot = 0, rc;

    if (cap->kind == DB_CAPTURE_PROBE) {
        c->probe[i] = cap->id;
        rc = db_query_ceilings(db, 0, cap->id, &got, &ngot);
    } else if (!cap->device_id) {
        return RK_OK;
    } else {
        if ((rc = db_list_captures(db, &caps, &ncaps)) != RK_OK)
            return rc;
        /* newest first: each name from the newest probe before the capture that has it */
        for (int k = ncaps - 1; k >= 0 && rc == RK_OK; k--) {
            const struct db_capture *p = &caps[k];
            struct db_ceiling *cs = NULL;
            int ncs = 0;
            if (p->kind != DB_CAPTURE_PROBE || p->device_id != cap->device_id || p->id >= cap->id ||
                (p->status != DB_DONE && p->status != DB_INTERRUPTED))
                continue;
            if ((rc = db_query_ceilings(db, 0, p->id, &cs, &ncs)) != RK_OK)
                break;
            for (int x = 0; x < ncs; x++) {
                int seen = cs[x].peer_device_id != 0;
                for (int y = 0; y < ngot && !seen; y++)
                    seen = strcmp(got[y].name, cs[x].name) == 0;
                if (seen)
                    continue;
                struct db_ceiling *g = realloc(got, (size_t)(ngot + 1) * sizeof *g);
                if (!g) {
                    rc = rk_error(RK_ENOMEM, "out of memory comparing captures");
                    break;
                }
                got = g;
                got[ngot++] = cs[x];
                memset(&cs[x], 0, sizeof cs[x]); /* its strings now belong to got */
                if (!c->probe[i])
                    c->probe[i] = p->id;
            }
            db_free_ceilings(cs, ncs);
        }
        db_free_captures(caps, ncaps);
        if (rc == RK_OK && ngot == 0) {
            c->ceil_after[i] = 1;
            rc = db_query_ceilings(db, cap->device_id, 0, &got, &ngot);
            for (int x = 0; x < ngot && !c->probe[i]; x++)
                c->probe[i] = got[x].capture_id;
        }
    }
    if (rc != RK_OK) {
        db_free_ceilings(got, ngot);
        return rc;
    }
    c->crows[i] = got;
    c->nc[i] = ngot;
    return RK_OK;
}

static double ceiling_ratio(const struct db_ceiling *a, const struct db_ceiling *b)
{
    double sa, sb;
    if (!a || !b || !isfinite(a->value) || !isfinite(b->value) || a->value == 0)
        return NAN;
    if (strcmp(a->unit, b->unit) == 0)
        return b->value / a->value;
    sa = analysis_unit_si(a->value, a->unit);
    sb = analysis_unit_si(b->value, b->unit);
    return isfinite(sa) && isfinite(sb) && sa != 0 ? sb / sa : NAN;
}

/* The ceilings by name: A's order (own ceilings only), then B's names A lacks. */
static int compare_ceilings(struct analysis_cmp *c)
{
    int cap = c->nc[0] + c->nc[1], n = 0;
    struct analysis_cmp_ceiling *out = calloc((size_t)(cap ? cap : 1), sizeof *out);
    if (!out)
        return rk_error(RK_ENOMEM, "out of memory comparing captures");
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < c->nc[side]; i++) {
            const struct db_ceiling *x = &c->crows[side][i], *other = NULL;
            if (x->peer_device_id)
                continue;
            for (int j = 0; j < c->nc[1 - side] && !other; j++)
                if (!c->crows[1 - side][j].peer_device_id &&
                    strcmp(c->crows[1 - side][j].name, x->name) == 0)
                    other = &c->crows[1 - side][j];
            if (side == 1 && other)
                continue; /* listed with A's */
            const struct db_ceiling *a = side == 0 ? x : NULL, *b = side == 0 ? other : x;
            out[n].name = x->name;
            out[n].unit = a ? a->unit : b->unit;
            out[n].unit_b = b ? b->unit : NULL;
            out[n].a = a ? a->value : NAN;
            out[n].b = b ? b->value : NAN;
            out[n].ratio = ceiling_ratio(a, b);
            n++;
        }
    c->ceil = out;
    c->nceil = n;
    return RK_OK;
}

/* ------------------------------------------------------------ the entry */

static int measurement_kind(enum db_capture_kind k)
{
    return k == DB_CAPTURE_RUN || k == DB_CAPTURE_TUNE || k == DB_CAPTURE_PROFILE;
}

int analysis_compare(struct db *db_a, int64_t a, struct db *db_b, int64_t b,
                     const struct analysis_cmp_opts *opts, struct analysis_cmp *out)
{
    struct db *dbs[2] = {db_a, db_b};
    int64_t ids[2] = {a, b};
    int rc = RK_OK;

    memset(out, 0, sizeof *out);
    out->opts = *opts;
    for (int i = 0; i < 2 && rc == RK_OK; i++)
        rc = db_get_capture(dbs[i], ids[i], &out->cap[i]);
    if (rc == RK_OK) {
        const int ma = measurement_kind(out->cap[0].kind), mb = measurement_kind(out->cap[1].kind);
        const int pa = out->cap[0].kind == DB_CAPTURE_PROBE;
        const int pb = out->cap[1].kind == DB_CAPTURE_PROBE;
        if (!((ma && mb) || (pa && pb)))
            rc = RK_EUSAGE;
    }
    for (int i = 0; i < 2 && rc == RK_OK; i++) {
        if (out->cap[i].device_id &&
            (rc = db_get_device(dbs[i], out->cap[i].device_id, &out->dev[i])) == RK_ENODATA)
            rc = RK_OK; /* a capture that names no stored device: no ceilings */
        if (rc == RK_OK && out->cap[i].kind != DB_CAPTURE_PROBE)
            rc = db_query_measurements(dbs[i], ids[i], &out->mrows[i], &out->nm[i]);
        if (rc == RK_OK)
            rc = load_ceilings(dbs[i], out, i);
    }
    if (rc == RK_OK)
        rc = compare_measurements(out);
    if (rc == RK_OK)
        rc = compare_ceilings(out);
    if (rc != RK_OK)
        analysis_compare_release(out);
    return rc;
}

const char *analysis_cmp_change(const struct analysis_cmp_row *r)
{
    if (r->in == 1)
        return "only in A";
    if (r->in == 2)
        return "only in B";
    if (r->regression)
        return "slower: regression";
    return model_change_name(r->change);
}

const char *analysis_cmp_shape(const struct analysis_cmp_row *r, char *buf, size_t len)
{
    if (r->profiled)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%lldx%lldx%lld", (long long)r->m, (long long)r->n, (long long)r->k);
    return buf;
}

void analysis_compare_release(struct analysis_cmp *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->cap[i].id)
            db_capture_release(&c->cap[i]);
        if (c->dev[i].id)
            db_device_release(&c->dev[i]);
        db_free_measurements(c->mrows[i], c->nm[i]);
        db_free_ceilings(c->crows[i], c->nc[i]);
    }
    free(c->rows);
    free(c->ceil);
    memset(c, 0, sizeof *c);
}
