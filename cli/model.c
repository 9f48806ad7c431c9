/*
 * model.c - `roofkit model [--capture ID] [--model LIST] [--check]`, and the dispatch of
 * `roofkit model explain` (model_explain.c).
 *
 * `model` writes one prediction per model (roofline, hierarchical, TSM2 and roofkit's
 * extensions) for every stored measurement from its device's measured ceilings, and
 * `model --check` recomputes them without writing. What each model takes from a
 * measurement and which ceilings judge it is decided in analysis/ (analysis_predict);
 * this file selects the measurements, writes or checks, and prints the summary.
 * docs/model.md "Predictions".
 */
#define _GNU_SOURCE
#include "analysis.h"
#include "cli.h"
#include "common.h"
#include "db.h"
#include "model.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

/*
 *   select   the measurements: of --capture, or of every run/profile capture that
 *            has some; each measurement's device (its capture's; the only device
 *            of the database when a profile capture names none)
 *   ceilings for each device, its current ceilings and latency curve
 *            (analysis_device_load); a device without a probe capture stops the
 *            command before anything is written (RK_ENODATA)
 *   predict  analysis_predict(): the ceilings and counts (the ceiling policy),
 *            model_predict() (pure, model/), the details JSON. Shared by writing and
 *            --check
 *   write    one capture of kind model, predictions in transactions of
 *            WRITE_BATCH measurements, capture ended done (failed, interrupted)
 *   check    (--check, read-only) recomputes every stored prediction and compares
 *            time (relative difference <= CHECK_REL_TOL) and bound
 */

#define WRITE_BATCH    256  /* measurements per write transaction */
#define CHECK_REL_TOL  1e-9 /* --check: |stored - recomputed| <= tol * |recomputed| */
#define CHECK_MAX_SHOW 10   /* --check: mismatches printed */

/* ------------------------------------------------------------------ devices */

/* The devices of the selected captures, each loaded once (analysis_device_load). */
struct devices {
    struct analysis_device **d; /* each malloc'd: pointers to them stay valid */
    int n;
};

static void devices_release(struct devices *ds)
{
    for (int i = 0; i < ds->n; i++) {
        analysis_device_release(ds->d[i]);
        free(ds->d[i]);
    }
    free(ds->d);
    ds->d = NULL;
    ds->n = 0;
}

/* Finds or loads device `id`. RK_ENODATA (printed) when it has no probe capture. */
static int devices_get(struct db *db, struct devices *ds, int64_t id,
                       const struct analysis_device **out)
{
    struct analysis_device *di, **grown;
    int rc;
    for (int i = 0; i < ds->n; i++) {
        if (ds->d[i]->id == id) {
            *out = ds->d[i];
            return RK_OK;
        }
    }
    grown = realloc(ds->d, sizeof *grown * (size_t)(ds->n + 1));
    if (!grown)
        return rk_error(RK_ENOMEM, "out of host memory");
    ds->d = grown;
    if (!(di = calloc(1, sizeof *di)))
        return rk_error(RK_ENOMEM, "out of host memory");
    rc = analysis_device_load(db, id, di);
    if (rc == RK_ENODATA)
        rc = rk_error(RK_ENODATA,
                      "device %lld is not in database '%s'; the database is "
                      "inconsistent: restore it from a copy",
                      (long long)id, db_path(db));
    if (rc != RK_OK) {
        free(di);
        return rc;
    }
    ds->d[ds->n++] = di; /* from here on devices_release frees it */
    if (di->probe_capture == 0)
        return rk_error(RK_ENODATA,
                        "no probe capture of device '%s' (id %lld) in '%s': the model needs its "
                        "measured ceilings; run 'roofkit probe' on that GPU first",
                        di->dev.name, (long long)id, db_path(db));
    *out = di;
    return RK_OK;
}

/* --------------------------------------------------------------- selection */

struct model_opts {
    int64_t capture; /* 0: every run/profile capture with measurements */
    unsigned models; /* bits 1 << enum model_kind */
    int check;
    enum rk_format fmt; /* --format: the summary (or the check's count) as text, CSV or JSON */
};

/* The measurements to work on, with the device of each. */
struct selection {
    struct db_measurement_row **rows; /* one array per capture */
    int *nrows;
    const struct analysis_device **dev_of_cap; /* device of each capture (NULL: none) */
    int64_t *caps;
    int ncaps;
    long total;
    struct devices devs;
};

static void selection_release(struct selection *s)
{
    for (int i = 0; i < s->ncaps; i++)
        db_free_measurements(s->rows[i], s->nrows[i]);
    free(s->rows);
    free(s->nrows);
    free(s->dev_of_cap);
    free(s->caps);
    devices_release(&s->devs);
    memset(s, 0, sizeof *s);
}

/* A capture whose measurements the model predicts (run, profile); --check takes
 * every capture with measurements, so that no stored prediction is left out. */
static int is_measurement_capture(const struct db_capture *c, int check)
{
    if (c->n_measurements <= 0)
        return 0;
    return check || c->kind == DB_CAPTURE_RUN || c->kind == DB_CAPTURE_PROFILE;
}

/*
 * Fills s with the measurements of the chosen captures and loads each one's device
 * with its ceilings. Writes nothing. RK_ENODATA (printed) when there is nothing to
 * work on or a device has no probe capture.
 */
static int select_measurements(struct db *db, const struct model_opts *o, struct selection *s)
{
    struct db_capture *caps = NULL;
    struct db_device *alldev = NULL;
    int ncaps = 0, ndev = 0, rc, want = 0;
    char list[256] = "";
    size_t used = 0;

    memset(s, 0, sizeof *s);
    if ((rc = db_list_captures(db, &caps, &ncaps)) != RK_OK)
        return rc;
    if ((rc = db_list_devices(db, &alldev, &ndev)) != RK_OK)
        goto out;
    if (o->capture) {
        int found = -1;
        for (int i = 0; i < ncaps; i++)
            if (caps[i].id == o->capture)
                found = i;
        if (found < 0) {
            rc = rk_error(RK_ENODATA,
                          "there is no capture %lld in '%s'; see 'roofkit list captures'",
                          (long long)o->capture, db_path(db));
            goto out;
        }
        if (!is_measurement_capture(&caps[found], o->check)) {
            rc = rk_error(RK_ENODATA,
                          "capture %lld is a %s capture with no measurements; pass a run or "
                          "profile capture (see 'roofkit list captures')",
                          (long long)o->capture, db_capture_kind_name(caps[found].kind));
            goto out;
        }
    }
    for (int i = 0; i < ncaps; i++)
        if (o->capture ? caps[i].id == o->capture : is_measurement_capture(&caps[i], o->check))
            want++;
    if (want == 0) {
        rc = rk_error(RK_ENODATA,
                      "no run or profile capture with measurements in '%s'; run "
                      "'roofkit run' or 'roofkit profile' first",
                      db_path(db));
        goto out;
    }
    s->rows = calloc((size_t)want, sizeof *s->rows);
    s->nrows = calloc((size_t)want, sizeof *s->nrows);
    s->dev_of_cap = calloc((size_t)want, sizeof *s->dev_of_cap);
    s->caps = calloc((size_t)want, sizeof *s->caps);
    if (!s->rows || !s->nrows || !s->dev_of_cap || !s->caps) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    for (int i = 0; i < ncaps && rc == RK_OK; i++) {
        const struct db_capture *c = &caps[i];
        int64_t dev = c->device_id;
        int j = s->ncaps;
        if (!(o->capture ? c->id == o->capture : is_measurement_capture(c, o->check)))
            continue;
        if (dev == 0 && ndev == 1)
            dev = alldev[0].id; /* a profile capture names no device: the only one there is */
        s->caps[j] = c->id;
        rc = db_query_measurements(db, c->id, &s->rows[j], &s->nrows[j]);
        if (rc != RK_OK)
            break;
        s->ncaps++;
        s->total += s->nrows[j];
        if (dev != 0)
            rc = devices_get(db, &s->devs, dev, &s->dev_of_cap[j]);
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%lld", j ? ", " : "",
                                     (long long)c->id);
    }
    if (rc == RK_OK && !o->check)
        rk_info("model: %ld measurement%s of capture%s %s (%s)", s->total, s->total == 1 ? "" : "s",
                s->ncaps == 1 ? "" : "s", list,
                o->capture ? "as given" : "every run and profile capture with measurements");
out:
    db_free_captures(caps, ncaps);
    db_free_devices(alldev, ndev);
    if (rc != RK_OK)
        selection_release(s);
    return rc;
}

/* ------------------------------------------------------------------- summary */

/* One prediction against its measurement, for the error statistics. */
struct sample {
    int kind;
    char family[48];
    double pred, meas;
};

struct samples {
    struct sample *v;
    size_t n, cap;
    long made[MODEL_KIND_COUNT];
    long skipped[MODEL_KIND_COUNT];
    const char *first_skip[MODEL_KIND_COUNT]; /* the first reason, static */
    long unverified;
};

/* One prediction pred of measured value meas (a time in ns, or an energy in J). */
static int samples_add(struct samples *ss, int kind, const struct db_measurement *m, double pred,
                       double meas)
{
    if (m->verified == 0 || !(meas > 0) || !isfinite(meas) || !isfinite(pred))
        return RK_OK; /* failed rows are never charted; nothing to compare with */
    if (ss->n == ss->cap) {
        size_t cap = ss->cap ? 2 * ss->cap : 256;
        struct sample *v = realloc(ss->v, cap * sizeof *v);
        if (!v)
            return rk_error(RK_ENOMEM, "out of host memory");
        ss->v = v;
        ss->cap = cap;
    }
    ss->v[ss->n].kind = kind;
    snprintf(ss->v[ss->n].family, sizeof ss->v[ss->n].family, "%s",
             m->family ? m->family : "(profiled)");
    ss->v[ss->n].pred = pred;
    ss->v[ss->n].meas = meas;
    ss->n++;
    return RK_OK;
}

/* The error statistics of one group of samples. */
struct stats {
    struct model_ape_summary a; /* APE [%] (NaN without samples) and rows within 10 / 25 % */
    size_t n;                   /* samples */
};

/* The statistics of the samples of `kind` (and `family`, if not NULL). */
static void stats_of(const struct samples *ss, int kind, const char *family, struct stats *st)
{
    double *p = malloc((ss->n ? ss->n : 1) * sizeof *p);
    double *q = malloc((ss->n ? ss->n : 1) * sizeof *q);
    size_t n = 0;
    memset(st, 0, sizeof *st);
    st->a.median = st->a.mean = st->a.p90 = NAN;
    if (p && q) {
        for (size_t i = 0; i < ss->n; i++) {
            if (ss->v[i].kind != kind || (family && strcmp(ss->v[i].family, family) != 0))
                continue;
            p[n] = ss->v[i].pred;
            q[n] = ss->v[i].meas;
            n++;
        }
        if (n > 0 && model_ape_summarize(p, q, n, &st->a) != RK_OK)
            st->a.median = st->a.mean = st->a.p90 = NAN;
    }
    free(p);
    free(q);
    st->n = n;
}

static void print_pct(double v)
{
    if (isfinite(v))
        printf(" %10.1f%%", v);
    else
        printf(" %11s", "-");
}

/* The four error columns of a summary row: median, mean, p90, rows within 10 / 25 %. */
static void print_stats(const struct stats *st)
{
    print_pct(st->a.median);
    print_pct(st->a.mean);
    print_pct(st->a.p90);
    printf(" %7zu %7zu", st->a.within10, st->a.within25);
}

/* Whether sample i is the first of its model and family: each family's row once, in the
 * order its first sample came. */
static int first_of_family(const struct samples *ss, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (ss->v[j].kind == ss->v[i].kind && strcmp(ss->v[j].family, ss->v[i].family) == 0)
            return 0;
    return 1;
}

/* The header of print_families' rows, its first column named `first`. */
static void print_families_header(const char *first)
{
    printf("%-17s %-16s %6s %11s %11s %11s %7s %7s\n", first, "family", "n", "median APE",
           "mean APE", "p90 APE", "<=10%", "<=25%");
}

/* The text rows of model k per family, each labelled `label`: family, n, the error columns. */
static void print_families(const struct samples *ss, int k, const char *label)
{
    struct stats st;
    for (size_t i = 0; i < ss->n; i++) {
        if (ss->v[i].kind != k || !first_of_family(ss, i))
            continue;
        stats_of(ss, k, ss->v[i].family, &st);
        printf("%-17s %-16s %6zu", label, ss->v[i].family, st.n);
        print_stats(&st);
        printf("\n");
    }
}

/* Rows of the --format csv|json summary for one quantity: one per model (family null), then
 * one per model and family. alone: the energy model over each reading's own time (kind 0 of
 * its samples), named "energy", with no prediction counts. */
static int summary_rows(struct rk_table *t, const struct samples *ss, unsigned models,
                        const char *quantity, int alone)
{
    struct stats st;
    int rc = RK_OK;
    for (int k = 0; k < MODEL_KIND_COUNT && rc == RK_OK; k++) {
        if (alone && k > 0)
            break;
        for (long i = -1; i < (long)ss->n && rc == RK_OK; i++) {
            const char *family = i < 0 ? NULL : ss->v[i].family;
            if (i < 0 ? !alone && !(models & (1u << k))
                      : ss->v[i].kind != k || !first_of_family(ss, (size_t)i))
                continue;
            stats_of(ss, k, family, &st);
            rc = rk_table_row(t);
            rk_table_str(t, quantity);
            rk_table_str(t, alone ? "energy" : model_kind_name((enum model_kind)k));
            rk_table_str(t, family);
            if (family || alone) {
                rk_table_null(t);
                rk_table_null(t);
            } else {
                rk_table_int(t, ss->made[k]);
                rk_table_int(t, ss->skipped[k]);
            }
            rk_table_int(t, (int64_t)st.n);
            rk_table_real(t, st.a.median);
            rk_table_real(t, st.a.mean);
            rk_table_real(t, st.a.p90);
            rk_table_int(t, (int64_t)st.a.within10);
            rk_table_int(t, (int64_t)st.a.within25);
            rk_table_str(t, family || alone ? NULL : ss->first_skip[k]);
        }
    }
    return rc;
}

/*
 * --format csv|json: the text summary's three tables in one, told apart by quantity: "time"
 * (each model's time against the measured), "energy" (the energy model over each model's
 * time against NVML's counter) and "energy_own_time" (model "energy": over each reading's own
 * time, what the time models' errors do not blur).
 */
static int summary_table(const struct samples *ss, const struct samples *es,
                         const struct samples *em, unsigned models, enum rk_format fmt)
{
    static const struct rk_col cols[] = {
        {"quantity", RK_COL_TEXT, 0},       {"model", RK_COL_TEXT, 0},
        {"family", RK_COL_TEXT, 0},         {"predictions", RK_COL_INT, 0},
        {"skipped", RK_COL_INT, 0},         {"n", RK_COL_INT, 0},
        {"median_ape_pct", RK_COL_REAL, 1}, {"mean_ape_pct", RK_COL_REAL, 1},
        {"p90_ape_pct", RK_COL_REAL, 1},    {"within_10pct", RK_COL_INT, 0},
        {"within_25pct", RK_COL_INT, 0},    {"first_skip", RK_COL_TEXT, 0},
    };
    struct rk_table *t = NULL;
    int rc = rk_table_new(fmt, stdout, cols, 12, &t);
    if (rc == RK_OK)
        rc = summary_rows(t, ss, models, "time", 0);
    if (rc == RK_OK && es->n > 0)
        rc = summary_rows(t, es, models, "energy", 0);
    if (rc == RK_OK && em->n > 0)
        rc = summary_rows(t, em, models, "energy_own_time", 1);
    if (rc == RK_OK && ss->unverified)
        rk_info("%ld measurement%s that failed verification %s predicted but left out of the "
                "errors",
                ss->unverified, ss->unverified == 1 ? "" : "s", ss->unverified == 1 ? "is" : "are");
    return rk_table_done(t, rc);
}

static void print_summary(const struct samples *ss, unsigned models)
{
    struct stats st;
    printf("%-17s %11s %8s %11s %11s %11s %7s %7s\n", "model", "predictions", "skipped",
           "median APE", "mean APE", "p90 APE", "<=10%", "<=25%");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        if (!(models & (1u << k)))
            continue;
        stats_of(ss, k, NULL, &st);
        printf("%-17s %11ld %8ld", model_kind_name((enum model_kind)k), ss->made[k],
               ss->skipped[k]);
        print_stats(&st);
        printf("%s%s\n", ss->first_skip[k] ? "  first skip: " : "",
               ss->first_skip[k] ? ss->first_skip[k] : "");
    }
    printf("\n");
    print_families_header("model");
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        print_families(ss, k, model_kind_name((enum model_kind)k));
    if (ss->unverified)
        printf("\n%ld measurement%s that failed verification %s predicted but left out of the "
               "errors\n",
               ss->unverified, ss->unverified == 1 ? "" : "s", ss->unverified == 1 ? "is" : "are");
}

/* ------------------------------------------------------------- stored reasons */

/*
 * A model that cannot predict a measurement stores why, as a prediction without a time:
 * {"model":"overlap","skipped":"inst_executed not measured"}, so that every measurement has
 * a prediction or a reason per model. malloc'd; NULL when out of memory.
 */
static char *skipped_details(enum model_kind k, const char *why)
{
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, "{");
    rk_json_key_str(&b, "model", model_kind_name(k));
    rk_buf_puts(&b, ",");
    rk_json_key_str(&b, "skipped", why);
    rk_buf_puts(&b, "}");
    if (b.oom) {
        rk_buf_release(&b);
        return NULL;
    }
    return b.s;
}

/* --------------------------------------------------------------------- write */

/* The energy model alone (em: kind 0, the energy over each reading's own time a launch), all
 * and per family: what the time models' errors do not blur. */
static void print_energy_alone(const struct samples *em)
{
    struct stats st;
    printf("\nenergy model over the measured time of a launch:\n");
    print_families_header("energy");
    stats_of(em, 0, NULL, &st);
    printf("%-17s %-16s %6zu", "energy", "(all)", st.n);
    print_stats(&st);
    printf("\n");
    print_families(em, 0, "energy");
}

/* The energy model's energy of a launch of row over model k's time (analysis/energy.c) into
 * *joules (NaN when it cannot say), counted in es. */
static void energy_of(const struct analysis_device *d, const struct db_measurement_row *row, int k,
                      double time_ns, double *joules, struct samples *es)
{
    const char *why = NULL;
    if (analysis_energy_predict(d, row, time_ns * 1e-9, joules, &why) == RK_OK) {
        es->made[k]++;
        return;
    }
    *joules = NAN;
    es->skipped[k]++;
    if (!es->first_skip[k])
        es->first_skip[k] = why;
}

static int write_predictions(struct db *db, const char *cmdline, const struct model_opts *o,
                             struct selection *s)
{
    struct samples ss, es, em; /* times; energies over each model's time; over the measured */
    int64_t cap = 0;
    long done = 0, in_tx = 0;
    int rc, tx = 0;
    char note[512];

    memset(&ss, 0, sizeof ss);
    memset(&es, 0, sizeof es);
    memset(&em, 0, sizeof em);
    if ((rc = db_capture_begin(db, 0, DB_CAPTURE_MODEL, cmdline, RK_VERSION, &cap)) != RK_OK)
        return rc;
    for (int c = 0; c < s->ncaps && rc == RK_OK; c++) {
        const struct analysis_device *d = s->dev_of_cap[c];
        for (int r = 0; r < s->nrows[c] && rc == RK_OK; r++) {
            const struct db_measurement *m = &s->rows[c][r].m;
            if (rk_interrupted) {
                rc = RK_EINTR;
                break;
            }
            if (!tx) {
                if ((rc = db_begin(db)) != RK_OK)
                    break;
                tx = 1;
            }
            if (m->verified == 0)
                ss.unverified++;
            if (d && m->energy_launches > 0 && m->power_w > 0) {
                /* the energy model alone: over the reading's own time a launch */
                double j = NAN;
                const char *ewhy = NULL;
                if (analysis_energy_predict(d, &s->rows[c][r], m->energy_j / m->power_w, &j,
                                            &ewhy) == RK_OK)
                    rc = samples_add(&em, 0, m, j, m->energy_j);
            }
            for (int k = 0; k < MODEL_KIND_COUNT && rc == RK_OK; k++) {
                struct analysis_prediction pd;
                const char *why = NULL;
                if (!(o->models & (1u << k)) || !analysis_applies((enum model_kind)k, m))
                    continue;
                if (!d) {
                    why = "its capture names no device";
                    rc = RK_ENODATA;
                } else {
                    rc = analysis_predict(d, &s->rows[c][r], (enum model_kind)k, &pd, &why);
                }
                if (rc == RK_ENODATA) {
                    ss.skipped[k]++;
                    if (!ss.first_skip[k])
                        ss.first_skip[k] = why;
                    pd = (struct analysis_prediction){NAN, NULL, skipped_details(k, why)};
                    if (!pd.details) {
                        rc = rk_error(RK_ENOMEM, "out of host memory");
                        break;
                    }
                } else if (rc != RK_OK) {
                    break;
                }
                struct db_prediction dp = {
                    0,          m->id,    cap,        model_kind_name((enum model_kind)k),
                    pd.time_ns, pd.bound, pd.details, NAN};
                if (pd.bound) /* the energy over the time this model predicts */
                    energy_of(d, &s->rows[c][r], k, pd.time_ns, &dp.predicted_energy_j, &es);
                rc = db_insert_prediction(db, &dp, NULL);
                if (rc == RK_OK && pd.bound) {
                    ss.made[k]++;
                    rc = samples_add(&ss, k, m, pd.time_ns, m->time_median_ns);
                }
                if (rc == RK_OK && pd.bound && m->energy_launches > 0)
                    rc = samples_add(&es, k, m, dp.predicted_energy_j, m->energy_j);
                free(pd.details);
            }
            done++;
            rk_progress("model", done, s->total);
            if (rc == RK_OK && ++in_tx >= WRITE_BATCH) {
                rc = db_commit(db);
                tx = 0;
                in_tx = 0;
            }
        }
    }
    if (rc == RK_OK && tx)
        rc = db_commit(db);
    rk_progress_end();
    if (rc == RK_EINTR) {
        db_capture_mark_interrupted(db, cap); /* rolls back the open batch */
        rk_warn("interrupted: predictions of the committed batches are stored in capture %lld",
                (long long)cap);
        goto out;
    }
    if (rc != RK_OK) {
        db_rollback(db);
        db_capture_end(db, cap, DB_FAILED);
        goto out;
    }
    {
        size_t used = (size_t)snprintf(note, sizeof note, "predictions for capture%s",
                                       s->ncaps == 1 ? "" : "s");
        for (int c = 0; c < s->ncaps && used < sizeof note; c++)
            used += (size_t)snprintf(note + used, sizeof note - used, "%s %lld", c ? "," : "",
                                     (long long)s->caps[c]);
        for (int i = 0; i < s->devs.n && used < sizeof note; i++)
            used += (size_t)snprintf(note + used, sizeof note - used,
                                     "%s ceilings of device %lld up to probe capture %lld",
                                     i ? "," : ";", (long long)s->devs.d[i]->id,
                                     (long long)s->devs.d[i]->probe_capture);
    }
    rc = db_capture_note(db, cap, note);
    if (rc == RK_OK)
        rc = db_capture_end(db, cap, DB_DONE);
    if (rc == RK_OK) {
        rk_info("model: capture %lld holds the predictions", (long long)cap);
        if (o->fmt == RK_FMT_TEXT)
            print_summary(&ss, o->models);
        else
            rc = summary_table(&ss, &es, &em, o->models, o->fmt);
        if (o->fmt == RK_FMT_TEXT && es.n > 0) {
            printf("\nenergy of one launch (the energy model over each model's time) against "
                   "NVML's counter:\n");
            print_summary(&es, o->models);
        }
        if (o->fmt == RK_FMT_TEXT && em.n > 0)
            print_energy_alone(&em);
    }
out:
    free(ss.v);
    free(es.v);
    free(em.v);
    return rc;
}

/* --------------------------------------------------------------------- check */

static int check_predictions(struct db *db, const struct model_opts *o, struct selection *s,
                             int64_t model_capture)
{
    long checked = 0, bad = 0, other = 0;
    int rc = RK_OK;

    for (int c = 0; c < s->ncaps && rc == RK_OK; c++) {
        const struct analysis_device *d = s->dev_of_cap[c];
        for (int r = 0; r < s->nrows[c] && rc == RK_OK; r++) {
            const struct db_measurement_row *row = &s->rows[c][r];
            for (int i = 0; i < row->n_predictions && rc == RK_OK; i++) {
                const struct db_prediction *sp = &row->predictions[i];
                enum model_kind k;
                struct analysis_prediction pd = {0, NULL, NULL};
                const char *why = NULL;
                char reason[160] = "";
                if (model_capture && sp->capture_id != model_capture)
                    continue;
                if (model_kind_from_name(sp->model, &k) != RK_OK) {
                    other++;
                    continue;
                }
                if (!(o->models & (1u << k)))
                    continue;
                checked++;
                if (!d)
                    why = "its capture names no device";
                else if (!analysis_applies(k, &row->m))
                    why = "the model does not apply to this kernel";
                else if ((rc = analysis_predict(d, row, k, &pd, &why)) == RK_ENODATA)
                    rc = RK_OK;
                if (rc != RK_OK)
                    break;
                if (!isfinite(sp->predicted_time_ns)) { /* a stored reason */
                    char *want = why ? skipped_details(k, why) : NULL;
                    if (!why)
                        snprintf(reason, sizeof reason, "stored no prediction, recomputed %.9g ns",
                                 pd.time_ns);
                    else if (!want || !sp->details || strcmp(want, sp->details) != 0)
                        snprintf(reason, sizeof reason, "stored %.60s, now skipped: %.60s",
                                 sp->details ? sp->details : "(nothing)", why);
                    free(want);
                } else if (why) {
                    snprintf(reason, sizeof reason, "cannot be recomputed (%s)", why);
                } else {
                    double diff = fabs(sp->predicted_time_ns - pd.time_ns);
                    if (!(diff <= CHECK_REL_TOL * fabs(pd.time_ns)))
                        snprintf(reason, sizeof reason, "stored %.9g ns, recomputed %.9g ns",
                                 sp->predicted_time_ns, pd.time_ns);
                    else if (!sp->bound || strcmp(sp->bound, pd.bound) != 0)
                        snprintf(reason, sizeof reason, "stored bound %s, recomputed %s",
                                 sp->bound ? sp->bound : "(none)", pd.bound);
                }
                free(pd.details);
                if (reason[0]) {
                    if (bad < CHECK_MAX_SHOW)
                        fprintf(stderr, "  measurement %lld (%s), %s: %s\n", (long long)row->m.id,
                                row->m.kernel, sp->model, reason);
                    bad++;
                }
            }
        }
    }
    if (rc != RK_OK)
        return rc;
    if (other)
        rk_info("model --check: %ld prediction%s of other models not checked", other,
                other == 1 ? "" : "s");
    if (o->fmt != RK_FMT_TEXT && checked > 0) { /* the counts as data; the verdict as usual */
        static const struct rk_col cols[] = {
            {"checked", RK_COL_INT, 0}, {"differ", RK_COL_INT, 0}, {"other_models", RK_COL_INT, 0}};
        struct rk_table *t = NULL;
        if ((rc = rk_table_new(o->fmt, stdout, cols, 3, &t)) == RK_OK)
            rc = rk_table_row(t);
        rk_table_int(t, checked);
        rk_table_int(t, bad);
        rk_table_int(t, other);
        if ((rc = rk_table_done(t, rc)) != RK_OK)
            return rc;
    }
    if (checked == 0)
        return rk_error(RK_ENODATA,
                        "no stored predictions to check in '%s'; run 'roofkit model' "
                        "first",
                        db_path(db));
    if (bad)
        return rk_error(RK_EVERIFY,
                        "%ld of %ld stored predictions differ from a recomputation with the "
                        "current ceilings (first %d shown above); run 'roofkit model' again",
                        bad, checked, bad < CHECK_MAX_SHOW ? (int)bad : CHECK_MAX_SHOW);
    if (o->fmt == RK_FMT_TEXT)
        printf("checked %ld prediction%s: each equals its recomputation from the current "
               "ceilings (relative difference <= %g, same bound)\n",
               checked, checked == 1 ? "" : "s", CHECK_REL_TOL);
    return RK_OK;
}

/* ------------------------------------------------------------------- command */

static int parse_models(const char *arg, unsigned *models)
{
    char **names = NULL;
    int n = 0, rc = RK_OK;
    if (rk_parse_name_list(arg, &names, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--model' needs a list such as roofline,tsm2, not '%s'",
                        arg);
    *models = 0;
    for (int i = 0; i < n && rc == RK_OK; i++) {
        enum model_kind k;
        if (model_kind_from_name(names[i], &k) != RK_OK)
            rc = rk_error(RK_EUSAGE,
                          "unknown model '%s'; say roofline, hierarchical or tsm2 (the seeds'), "
                          "roofline_counters, occupancy, issue, issue_counters or overlap "
                          "(extensions)",
                          names[i]);
        else
            *models |= 1u << k;
    }
    rk_free_name_list(names, n);
    return rc;
}

static int cmd_model_predict(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"capture", required_argument, NULL, 'c'},
        {"model", required_argument, NULL, 'm'},
        {"check", no_argument, NULL, 'k'},
        {NULL, 0, NULL, 0},
    };
    struct model_opts o = {0, (1u << MODEL_KIND_COUNT) - 1, 0, RK_FMT_TEXT};
    struct selection sel;
    struct stat st;
    int64_t model_capture = 0;
    long v;
    int c, rc, have_st;

    if (rk_take_format(&argc, argv, &o.fmt) != RK_OK)
        return RK_EUSAGE;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'c':
            if (rk_opt_long("capture", optarg, 1, LONG_MAX, &v) != RK_OK)
                return RK_EUSAGE;
            o.capture = v;
            break;
        case 'm':
            if (parse_models(optarg, &o.models) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'k':
            o.check = 1;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help model'",
                        argv[optind]);
    /* The model reads measurements and ceilings: a missing or empty file holds none,
     * and must not be created or initialised by a read-write open. */
    have_st = stat(ctx->db_path, &st) == 0;
    if (!have_st && errno == ENOENT)
        return rk_error(RK_EDB,
                        "database '%s' does not exist; run 'roofkit probe' and 'roofkit run' "
                        "first, or pass --db",
                        ctx->db_path);
    if (have_st && S_ISREG(st.st_mode) && st.st_size == 0)
        return rk_error(RK_EDB,
                        "database '%s' is empty; run 'roofkit probe' and 'roofkit run' first, or "
                        "pass --db",
                        ctx->db_path);
    if ((rc = rk_ctx_open_db(ctx, !o.check)) != RK_OK)
        return rc;
    if (o.check && o.capture) {
        /* --check --capture may name the model capture whose predictions to check */
        struct db_capture cap;
        rc = db_get_capture(ctx->db, o.capture, &cap);
        if (rc == RK_OK && cap.kind == DB_CAPTURE_MODEL) {
            model_capture = o.capture;
            o.capture = 0;
        }
        if (rc == RK_OK)
            db_capture_release(&cap);
        else if (rc != RK_ENODATA)
            return rc;
    }
    if ((rc = select_measurements(ctx->db, &o, &sel)) != RK_OK)
        return rc;
    if (o.check)
        rc = check_predictions(ctx->db, &o, &sel, model_capture);
    else
        rc = write_predictions(ctx->db, ctx->cmdline, &o, &sel);
    selection_release(&sel);
    return rc;
}

int cmd_model(int argc, char **argv, struct rk_ctx *ctx)
{
    if (argc >= 2 && strcmp(argv[1], "explain") == 0) {
        argv[1] = argv[0]; /* messages name the command: "... for 'model'" */
        return cmd_model_explain(argc - 1, argv + 1);
    }
    return cmd_model_predict(argc, argv, ctx);
}
