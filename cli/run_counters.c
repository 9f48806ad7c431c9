/*
 * run_counters.c - hardware counters for `roofkit run` (cli.h "rk_counters"): the wiring between
 * the kernels/ harness and collect/, kept apart from run.c so that a CPU test drives it with
 * collect's fake backend and a real database.
 *
 * How a measured configuration gets its counters (issue 5: "timing repetitions never run under
 * replay; counter passes are separate"):
 *   1. run.c times the configuration with kernels_session_measure (CUDA events, no CUPTI);
 *   2. it launches it once more with kernels_session_launch, whose hook calls
 *      rk_counters_begin / rk_counters_end right around the launch call(s): a collect session
 *      (range profiler, AutoRange + KernelReplay) records that launch, or the several kernels a
 *      cuBLAS call or a split-k reduction makes, and collect_result_combine adds them up;
 *   3. the values become db_metric rows (alias and raw CUPTI name, unit) inserted with the
 *      measurement in its one transaction.
 *
 * Degrading (CUPTI.md §5): when a session cannot read counters (no permission, virtual GPU,
 * another profiler holds CUPTI) the timing is stored anyway and no later configuration tries
 * again. With the default set one warning says why; with metrics named on the command line the
 * run ends with RK_ECUPTI instead, after storing everything. The capture's note keeps the mode.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "collect.h"
#include "common.h"
#include "db.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rk_counters {
    char **names; /* checked names for each session; NULL = the default set */
    char **units; /* the host API's unit of each named output (a session leaves raw names'
                     units unknown) */
    int nnames;
    int named;  /* metrics were named on the command line (not the default set) */
    int active; /* still collecting */
    struct collect_session *session;
    struct collect_result *result; /* of the last session: rows point into its plan */
    struct collect_value *values;
    struct db_metric *rows;
    int nrows, cap;
    long with, partial; /* measurements with every counter; with some launch unmatched */
    int passes;
    int warned_partial;
    char reason[600]; /* why counters stopped, when they did */
};

int rk_counters_new(const char *metrics, int device, struct rk_counters **out)
{
    struct rk_counters *c = NULL;
    struct collect_plan *plan = NULL;
    char **names = NULL;
    int n = 0, rc = RK_OK;
    *out = NULL;
    if (metrics && strcmp(metrics, "none") == 0)
        return RK_OK;
    if (metrics && rk_parse_name_list(metrics, &names, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--metrics' needs metric names, 'default' or 'none'; "
                                   "see 'roofkit list metrics'");
    if (n == 1 && strcmp(names[0], "default") == 0) {
        rk_free_name_list(names, n);
        names = NULL;
        n = 0;
    }
    /* Unknown names are usage errors here, before the GPU or the database is touched. */
    if ((rc = collect_plan_new((const char *const *)names, n, &plan)) != RK_OK)
        goto out;
    if (!(c = calloc(1, sizeof *c))) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    c->active = 1;
    if (n > 0) {
        /* Named metrics are checked against the chip now; the default set is left to the
         * session, which drops what the chip lacks (as `roofkit profile` does). */
        char chip[64];
        collect_chip_name(device, chip, sizeof chip); /* GH100 without a GPU */
        if ((rc = collect_plan_check(plan, chip)) != RK_OK)
            goto out;
        c->named = 1;
        if (!(c->names = calloc((size_t)plan->nout + 1, sizeof *c->names)) ||
            !(c->units = calloc((size_t)plan->nout + 1, sizeof *c->units))) {
            rc = rk_error(RK_ENOMEM, "out of host memory");
            goto out;
        }
        for (int i = 0; i < plan->nout; i++, c->nnames++) {
            const struct collect_output *o = &plan->out[i];
            const char *unit = o->unit ? o->unit : plan->raw_units[o->term[0]];
            if (!(c->names[i] = strdup(o->alias ? o->alias : o->raw)) ||
                (unit && !(c->units[i] = strdup(unit)))) {
                rc = rk_error(RK_ENOMEM, "out of host memory");
                goto out;
            }
        }
    }
out:
    collect_plan_free(plan);
    rk_free_name_list(names, n);
    if (rc != RK_OK) {
        rk_counters_free(c);
        return rc;
    }
    *out = c;
    return RK_OK;
}

void rk_counters_free(struct rk_counters *c)
{
    if (!c)
        return;
    if (c->session) {
        struct collect_result *r = NULL;
        if (collect_session_end(c->session, &r) == RK_OK)
            collect_result_free(r);
    }
    collect_result_free(c->result);
    rk_free_name_list(c->names, c->nnames);
    rk_free_name_list(c->units, c->nnames);
    free(c->values);
    free(c->rows);
    free(c);
}

int rk_counters_active(const struct rk_counters *c)
{
    return c && c->active;
}

int rk_counters_begin(void *arg)
{
    struct rk_counters *c = arg;
    struct collect_options opt;
    c->nrows = 0;
    collect_result_free(c->result);
    c->result = NULL;
    if (!c->active || c->session)
        return RK_OK;
    memset(&opt, 0, sizeof opt);
    opt.metrics = (const char *const *)c->names;
    opt.nmetrics = c->nnames;
    opt.silent = 1; /* rk_counters_end says what happened, once */
    return collect_session_begin(&opt, &c->session);
}

/* Gives up on counters for the rest of the run, saying why once. */
static void give_up(struct rk_counters *c, const char *reason)
{
    c->active = 0;
    snprintf(c->reason, sizeof c->reason, "%s", reason && *reason ? reason : "unknown reason");
    if (!c->named)
        rk_warn("%s", c->reason);
}

int rk_counters_end(void *arg)
{
    struct rk_counters *c = arg;
    struct collect_result *r = NULL;
    int rc;
    if (!c->session)
        return RK_OK;
    rc = collect_session_end(c->session, &r);
    c->session = NULL;
    if (rc != RK_OK)
        return rc;
    if (r->mode != COLLECT_MODE_COUNTERS) {
        give_up(c, r->reason);
        collect_result_free(r);
        return RK_OK;
    }
    const int nout = r->plan ? r->plan->nout : 0;
    if (nout > c->cap) {
        struct collect_value *v = realloc(c->values, (size_t)nout * sizeof *v);
        if (v)
            c->values = v;
        struct db_metric *m = realloc(c->rows, (size_t)nout * sizeof *m);
        if (m)
            c->rows = m;
        if (!v || !m) {
            collect_result_free(r);
            return rk_error(RK_ENOMEM, "out of host memory");
        }
        c->cap = nout;
    }
    int complete = r->nlaunch > 0;
    for (int i = 0; i < r->nlaunch; i++)
        complete &= r->launch[i].has_counters;
    collect_result_combine(r, c->values);
    for (int i = 0; i < nout; i++) {
        const struct collect_value *v = &c->values[i];
        struct db_metric *m = &c->rows[i];
        memset(m, 0, sizeof *m);
        m->name = v->alias ? v->alias : v->raw;
        m->raw_name = v->raw;
        m->value = v->is_null ? NAN : v->value;
        m->unit = v->unit;
        for (int k = 0; !m->unit && k < c->nnames; k++)
            if (strcmp(c->names[k], m->name) == 0)
                m->unit = c->units[k];
    }
    c->nrows = nout;
    c->result = r; /* the rows' strings live in its plan */
    if (r->passes > c->passes)
        c->passes = r->passes;
    if (complete) {
        c->with++;
    } else {
        c->partial++;
        if (!c->warned_partial)
            rk_warn(
                "the counters of %d kernel launch%s could not be matched to %s; they are stored "
                "as unknown",
                r->nlaunch, r->nlaunch == 1 ? "" : "es",
                r->nlaunch ? "their ranges" : "a launch (none was recorded)");
        c->warned_partial = 1;
    }
    return RK_OK;
}

void rk_counters_rows(const struct rk_counters *c, const struct db_metric **rows, int *n)
{
    *rows = c && c->nrows ? c->rows : NULL;
    *n = c ? c->nrows : 0;
}

static long without(const struct rk_counters *c, long measured)
{
    return measured > c->with ? measured - c->with : 0;
}

static const char *why_none(const struct rk_counters *c)
{
    return c->reason[0] ? c->reason : "launches could not be matched to their counter ranges";
}

void rk_counters_note(const struct rk_counters *c, struct db *db, int64_t capture, long measured)
{
    char note[900];
    if (!c || measured <= 0)
        return;
    if (without(c, measured) == 0)
        snprintf(note, sizeof note,
                 "counters: %ld of %ld measurements, %d replay pass%s each, from one untimed "
                 "launch per measurement",
                 c->with, measured, c->passes, c->passes == 1 ? "" : "es");
    else
        snprintf(note, sizeof note, "counters: %ld of %ld measurements; %s", c->with, measured,
                 why_none(c));
    db_capture_note(db, capture, note);
}

int rk_counters_status(const struct rk_counters *c, long measured)
{
    if (!c || !c->named || without(c, measured) == 0)
        return RK_OK;
    return rk_error(RK_ECUPTI,
                    "counters were not collected for %ld of %ld measurements (timings are "
                    "stored): %s",
                    without(c, measured), measured, why_none(c));
}
