/*
 * run_counters.c - hardware counters for `roofkit run` (cli.h "rk_counters"): the wiring between
 * the kernels/ harness and collect/, kept apart from run.c so that a CPU test drives it with
 * collect's fake backend and a real database.
 *
 * How a measured configuration gets its counters (timing repetitions never run under replay;
 * counter passes are separate):
 *   1. run.c times the configuration with kernels_session_measure (CUDA events, no CUPTI);
 *   2. it launches it once more per single-pass group of the metrics (rk_counters_groups: 3
 *      for the default set on GH100: two of hardware counters, one of SASS-patched ones) with
 *      kernels_session_launch, the L2 flushed before each as before a timed repetition; the hook
 *      calls rk_counters_begin / rk_counters_end right around the launch call(s): a collect
 *      session (range profiler, AutoRange, one pass: user replay for hardware counters, kernel
 *      replay for SASS ones, nothing saved or restored) records that launch, or the several
 *      kernels a cuBLAS call or a split-k reduction makes; the last group's end joins the
 *      groups' raw values (collect_result_merge) and collect_result_combine adds them up.
 *      One launch per group instead of CUPTI replaying passes inside one launch: a replayed
 *      pass starts after a memory restore, whose dirty lines the DRAM write counters then
 *      count (5-8% on 256 MB writers, docs/perf-notes.md "collect");
 *   3. the values become db_metric rows (alias and raw CUPTI name, unit) inserted with the
 *      measurement in its one transaction.
 *
 * Degrading: when a session cannot read counters (no permission, virtual GPU, another
 * profiler holds CUPTI) the timing is stored anyway and no later configuration tries again.
 * With the default set one warning says why; with metrics named on the command line the run
 * ends with RK_ECUPTI instead, after storing everything. The capture's note keeps the mode.
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
    int device;
    int ngroups;  /* 0 until rk_counters_groups; then the pass groups (1: no grouping) */
    int group;    /* the group the next begin/end pair collects */
    char ***graw; /* graw[g]: the raw names of group g */
    int *gn;      /* gn[g]: how many */
    struct collect_result *pending;      /* groups collected so far for this configuration */
    double t_enable, t_launch, t_decode; /* summed over the sessions (collect_result) */
    double t_begin, t_end;               /* in collect_session_begin / _end, all of it */
    double t_mark, t_between; /* from begin's return to end's call: the launch under CUPTI */
    char reason[600];         /* why counters stopped, when they did */
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
    c->device = device;
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
    collect_result_free(c->pending);
    for (int g = 0; c->graw && g < c->ngroups; g++)
        rk_free_name_list(c->graw[g], c->gn[g]);
    free(c->graw);
    free(c->gn);
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

/* The pass groups of c's metrics on the device's chip; leaves c->ngroups 1 when they cannot be
 * had (the session's kernel replay then covers every pass). */
static void find_groups(struct rk_counters *c)
{
    struct collect_plan *plan = NULL;
    char **lists = NULL, chip[64];
    int ng = 0;
    c->ngroups = 1;
    if (collect_plan_new((const char *const *)c->names, c->nnames, &plan) != RK_OK)
        return;
    collect_chip_name(c->device, chip, sizeof chip);
    /* A chip that lacks some of the default set is left to kernel replay (the session drops
     * what the chip lacks), without a word. */
    int all = 1;
    for (int i = 0; i < plan->nraw && all; i++) {
        int sup = 0;
        all = collect_metric_supported(chip, plan->raw[i], &sup, NULL) == RK_OK && sup;
    }
    if (all && collect_plan_group_names(plan, chip, &lists, &ng) == RK_OK && ng > 1) {
        c->graw = calloc((size_t)ng, sizeof *c->graw);
        c->gn = calloc((size_t)ng, sizeof *c->gn);
        int ok = c->graw && c->gn;
        for (int g = 0; g < ng && ok; g++)
            ok = rk_parse_name_list(lists[g], &c->graw[g], &c->gn[g]) == RK_OK;
        c->ngroups = ok ? ng : 1;
        if (!ok) {
            for (int g = 0; c->graw && c->gn && g < ng; g++)
                rk_free_name_list(c->graw[g], c->gn[g]);
            free(c->graw);
            free(c->gn);
            c->graw = NULL;
            c->gn = NULL;
        }
    }
    rk_free_name_list(lists, ng);
    collect_plan_free(plan);
}

int rk_counters_groups(struct rk_counters *c)
{
    /* ROOFKIT_RUN_GROUPS=off: one launch under kernel replay, as before (a diagnostic) */
    const char *how = getenv("ROOFKIT_RUN_GROUPS");
    if (c && c->ngroups == 0 && how && strcmp(how, "off") == 0)
        c->ngroups = 1;
    if (c && c->ngroups == 0)
        find_groups(c);
    return c && c->ngroups > 1 ? c->ngroups : 1;
}

void rk_counters_set_group(struct rk_counters *c, int group)
{
    if (c)
        c->group = c->ngroups > 1 && group > 0 && group < c->ngroups ? group : 0;
}

int rk_counters_begin(void *arg)
{
    struct rk_counters *c = arg;
    struct collect_options opt;
    if (c->group == 0) {
        c->nrows = 0;
        collect_result_free(c->result);
        c->result = NULL;
        collect_result_free(c->pending);
        c->pending = NULL;
    }
    if (!c->active || c->session)
        return RK_OK;
    memset(&opt, 0, sizeof opt);
    opt.metrics = (const char *const *)c->names;
    opt.nmetrics = c->nnames;
    opt.silent = 1; /* rk_counters_end says what happened, once */
    if (c->ngroups > 1) {
        opt.only_raw = (const char *const *)c->graw[c->group];
        opt.nonly_raw = c->gn[c->group];
    }
    const double t0 = rk_now_s();
    int rc = collect_session_begin(&opt, &c->session);
    c->t_mark = rk_now_s();
    c->t_begin += c->t_mark - t0;
    return rc;
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
    const double t0 = rk_now_s();
    c->t_between += t0 - c->t_mark;
    rc = collect_session_end(c->session, &r);
    c->t_end += rk_now_s() - t0;
    c->session = NULL;
    if (rc != RK_OK)
        return rc;
    c->t_enable += r->t_enable;
    c->t_launch += r->t_launch;
    c->t_decode += r->t_decode;
    if (r->mode != COLLECT_MODE_COUNTERS) {
        give_up(c, r->reason);
        collect_result_free(r);
        return RK_OK;
    }
    if (c->ngroups > 1) {
        /* groups before the last wait in c->pending; the last joins them */
        if (c->pending) {
            long unmatched = 0;
            rc = collect_result_merge(c->pending, r, &unmatched);
            collect_result_free(r);
            if (rc != RK_OK)
                return rk_error(rc, "cannot join the counters of the pass groups of a launch");
        } else {
            c->pending = r;
        }
        if (c->group < c->ngroups - 1)
            return RK_OK;
        r = c->pending;
        c->pending = NULL;
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

static double launch_threads(const struct collect_launch *l)
{
    return (double)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

/* The library call's main kernel: the longest launch; when no duration is known (a named
 * metric set without gpu_time, untimed records), the one with the most threads, so that a
 * small kernel launched first (an initialisation, a reduction) is not taken for it. */
int rk_counters_fill_launch(const struct rk_counters *c, struct db_measurement *m)
{
    const struct collect_launch *best = NULL;
    if (!c || !c->result || c->nrows == 0 || !m || m->grid[0] > 0)
        return 0;
    for (int i = 0; i < c->result->nlaunch; i++) {
        const struct collect_launch *l = &c->result->launch[i];
        if (!l->has_record || l->grid[0] == 0)
            continue;
        const int timed = isfinite(l->duration_ns),
                  best_timed = best && isfinite(best->duration_ns);
        if (!best || (timed && (!best_timed || l->duration_ns > best->duration_ns)) ||
            (!timed && !best_timed && launch_threads(l) > launch_threads(best)))
            best = l;
    }
    if (!best)
        return 0;
    for (int d = 0; d < 3; d++) {
        m->grid[d] = (int)best->grid[d];
        m->block[d] = (int)best->block[d];
    }
    m->registers = best->registers > 0 ? best->registers : best->registers_alloc;
    m->smem_static = best->static_smem > 0 ? best->static_smem : 0;
    m->smem_dynamic = best->dynamic_smem > 0 ? best->dynamic_smem : 0;
    return 1;
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
    char how[200];
    /* t_between holds the range profiler's enable and start on each session's first launch
     * (~0.3 s a session on the H100), t_enable the enable alone, t_launch the launch calls
     * after the start */
    snprintf(how, sizeof how,
             "; time: %.2f s starting sessions, %.2f s launching under CUPTI (%.2f s enabling "
             "counters, %.2f s in launch calls), %.2f s ending sessions (%.2f s decoding)",
             c->t_begin, c->t_between, c->t_enable, c->t_launch, c->t_end, c->t_decode);
    if (without(c, measured) == 0 && c->ngroups > 1)
        snprintf(note, sizeof note,
                 "counters: %ld of %ld measurements, from %d untimed launches per measurement "
                 "(one per pass group, nothing replayed)%s",
                 c->with, measured, c->ngroups, how);
    else if (without(c, measured) == 0)
        snprintf(note, sizeof note,
                 "counters: %ld of %ld measurements, %d replay pass%s each, from one untimed "
                 "launch per measurement%s",
                 c->with, measured, c->passes, c->passes == 1 ? "" : "es", how);
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
