/*
 * replay.c - application replay's files (collect.h): what one run of a program collected, per
 * process, for the last run to merge.
 *
 * Why: under CUPTI's kernel replay every pass of every launch pays the range profiler's
 * per-launch cost (~41 ms for the default set's hardware counters on the H100) and each pass
 * after the first starts after a memory restore (whose dirty lines the DRAM write counters
 * then count). Running the program once per single-pass group replays nothing inside a run
 * (a hardware group runs under user replay, ~1.3 ms a launch; docs/perf-notes.md, "What each
 * counter costs"), and these files carry the values between the runs.
 *
 * Format (text, one file per process and run):
 *   roofkit-replay 1
 *   raw N
 *   NAME                       N lines: the plan's raw metric names, in plan order
 *   launch SEQ MANGLED V1 .. VN   one line per launch with counters ("nan" = not collected)
 * Mangled names carry no spaces; values are printed with %.17g so they read back exactly.
 */
#define _GNU_SOURCE
#include "collect.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "roofkit-replay 1"

int collect_replay_write(const char *path, const struct collect_result *r)
{
    const struct collect_plan *plan = r->plan;
    FILE *f = fopen(path, "w");
    if (!f)
        return RK_EIO;
    int nraw = plan ? plan->nraw : 0;
    fprintf(f, "%s\nraw %d\n", MAGIC, nraw);
    for (int i = 0; i < nraw; i++)
        fprintf(f, "%s\n", plan->raw[i]);
    for (int k = 0; k < r->nlaunch; k++) {
        const struct collect_launch *l = &r->launch[k];
        if (!l->has_counters || !l->raw || !l->name || strpbrk(l->name, " \t\n"))
            continue;
        fprintf(f, "launch %llu %s", (unsigned long long)l->seq, l->name);
        for (int i = 0; i < nraw; i++)
            fprintf(f, isnan(l->raw[i]) ? " nan" : " %.17g", l->raw[i]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    return fclose(f) != 0 || bad ? RK_EIO : RK_OK;
}

/* Values and duration of a launch from its raw values (after a merge). */
static int reeval(const struct collect_plan *plan, int time_raw, struct collect_launch *l)
{
    if (!l->values && plan->nout > 0) {
        if (!(l->values = calloc((size_t)plan->nout, sizeof *l->values)))
            return RK_ENOMEM;
        l->nvalues = plan->nout;
    }
    if (l->values)
        collect_plan_eval(plan, l->raw, l->values);
    l->has_counters = 1;
    if (!l->start_ns && time_raw >= 0 && !isnan(l->raw[time_raw]))
        l->duration_ns = l->raw[time_raw];
    return RK_OK;
}

/* Copies vals (column j to plan raw index map[j], or j itself when map is NULL; NaN and
 * columns the plan lacks are skipped) into l's raw values, then re-evaluates l. */
static int join_raw(const struct collect_plan *plan, int time_raw, struct collect_launch *l,
                    const int *map, const double *vals, int nvals)
{
    if (!l->raw) {
        if (!(l->raw = malloc(((size_t)plan->nraw + 1) * sizeof *l->raw)))
            return RK_ENOMEM;
        for (int i = 0; i < plan->nraw; i++)
            l->raw[i] = NAN;
    }
    for (int j = 0; j < nvals; j++) {
        const int i = map ? map[j] : j;
        if (i >= 0 && i < plan->nraw && !isnan(vals[j]))
            l->raw[i] = vals[j];
    }
    return reeval(plan, time_raw, l);
}

/* The launch with index seq: launches are recorded in seq order, so usually r->launch[seq]. */
static struct collect_launch *find_seq(struct collect_result *r, unsigned long long seq)
{
    if (seq < (unsigned long long)r->nlaunch && r->launch[seq].seq == seq)
        return &r->launch[seq];
    for (int k = 0; k < r->nlaunch; k++)
        if (r->launch[k].seq == seq)
            return &r->launch[k];
    return NULL;
}

int collect_replay_merge(const char *path, struct collect_result *r, long *unmatched)
{
    const struct collect_plan *plan = r->plan;
    char *line = NULL;
    size_t cap = 0;
    int nfile = -1, rc = RK_OK, time_raw;
    int *map = NULL;      /* file column -> plan raw index, -1 when the plan lacks it */
    char *touched = NULL; /* launches that got values from the file */
    double *vals = NULL;
    *unmatched = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return RK_EIO;
    if (!plan || getline(&line, &cap, f) < 0 || strncmp(line, MAGIC, strlen(MAGIC)) != 0 ||
        getline(&line, &cap, f) < 0 || sscanf(line, "raw %d", &nfile) != 1 || nfile < 0 ||
        nfile > 4096) {
        rc = RK_EIO;
        goto out;
    }
    time_raw = collect_plan_raw_find(plan, COLLECT_TIME_RAW);
    map = malloc(((size_t)nfile + 1) * sizeof *map);
    vals = malloc(((size_t)nfile + 1) * sizeof *vals);
    touched = calloc((size_t)r->nlaunch + 1, 1);
    if (!map || !vals || !touched) {
        rc = RK_ENOMEM;
        goto out;
    }
    for (int j = 0; j < nfile; j++) {
        if (getline(&line, &cap, f) < 0) {
            rc = RK_EIO;
            goto out;
        }
        line[strcspn(line, "\n")] = '\0';
        map[j] = -1;
        for (int i = 0; i < plan->nraw && map[j] < 0; i++)
            if (strcmp(plan->raw[i], line) == 0)
                map[j] = i;
    }
    while (getline(&line, &cap, f) >= 0) {
        char *save = NULL, *tok = strtok_r(line, " \n", &save);
        char *seq_s = strtok_r(NULL, " \n", &save);
        char *name = strtok_r(NULL, " \n", &save);
        char *end = NULL;
        int ok = tok && strcmp(tok, "launch") == 0 && seq_s && name;
        unsigned long long seq = ok ? strtoull(seq_s, &end, 10) : 0;
        ok = ok && end && *end == '\0';
        for (int j = 0; ok && j < nfile; j++) {
            char *v = strtok_r(NULL, " \n", &save);
            ok = v != NULL;
            if (ok)
                vals[j] = strtod(v, &end), ok = *end == '\0';
        }
        ok = ok && !strtok_r(NULL, " \n", &save); /* exactly N values */
        struct collect_launch *l = ok ? find_seq(r, seq) : NULL;
        if (!l || !l->name || strcmp(l->name, name) != 0 || touched[l - r->launch]) {
            (*unmatched)++;
            continue;
        }
        touched[l - r->launch] = 1;
        if ((rc = join_raw(plan, time_raw, l, map, vals, nfile)) != RK_OK)
            goto out;
    }
    for (int k = 0; k < r->nlaunch; k++)
        *unmatched += !touched[k];
out:
    free(line);
    free(map);
    free(vals);
    free(touched);
    fclose(f);
    return rc;
}

int collect_result_merge(struct collect_result *dst, const struct collect_result *src,
                         long *unmatched)
{
    const struct collect_plan *plan = dst->plan, *sp = src->plan;
    *unmatched = 0;
    if (!plan || !sp || plan->nraw != sp->nraw)
        return RK_EFAIL;
    for (int i = 0; i < plan->nraw; i++)
        if (strcmp(plan->raw[i], sp->raw[i]) != 0)
            return RK_EFAIL;
    const int time_raw = collect_plan_raw_find(plan, COLLECT_TIME_RAW);
    const int n = dst->nlaunch < src->nlaunch ? dst->nlaunch : src->nlaunch;
    *unmatched = (long)(dst->nlaunch > src->nlaunch ? dst->nlaunch - src->nlaunch
                                                    : src->nlaunch - dst->nlaunch);
    for (int k = n; k < dst->nlaunch; k++)
        dst->launch[k].has_counters = 0; /* no partner: its values are incomplete */
    for (int k = 0; k < n; k++) {
        struct collect_launch *l = &dst->launch[k];
        const struct collect_launch *o = &src->launch[k];
        if (!l->name || !o->name || strcmp(l->name, o->name) != 0) {
            (*unmatched)++;
            l->has_counters = 0;
            continue;
        }
        const int had = l->has_counters;
        if (o->has_counters && o->raw) {
            int rc = join_raw(plan, time_raw, l, NULL, o->raw, plan->nraw);
            if (rc != RK_OK)
                return rc;
        }
        /* complete only when both runs counted it */
        l->has_counters = had && o->has_counters && o->raw;
    }
    return RK_OK;
}
