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
 * Written a line at a time as launches complete (collect_replay_append, one write(2) each), so
 * that a run killed later leaves whole lines for the last run to use.
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

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "roofkit-replay 1"

/* Writes all of b with one write: a run killed later leaves whole lines. */
static int write_buf(int fd, struct rk_buf *b)
{
    int rc = b->oom || !b->s ? RK_ENOMEM : RK_OK;
    if (rc == RK_OK && write(fd, b->s, b->len) != (ssize_t)b->len)
        rc = RK_EIO;
    rk_buf_release(b);
    return rc;
}

int collect_replay_open(const char *path, const struct collect_plan *plan, int *fd)
{
    struct rk_buf b = RK_BUF_INIT;
    int nraw = plan ? plan->nraw : 0;
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (*fd < 0)
        return RK_EIO;
    rk_buf_printf(&b, "%s\nraw %d\n", MAGIC, nraw);
    for (int i = 0; i < nraw; i++)
        rk_buf_printf(&b, "%s\n", plan->raw[i]);
    int rc = write_buf(*fd, &b);
    if (rc != RK_OK) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

int collect_replay_append(int fd, const struct collect_plan *plan, const struct collect_launch *l)
{
    struct rk_buf b = RK_BUF_INIT;
    if (!l->has_counters || !l->raw || !l->name || strpbrk(l->name, " \t\n"))
        return RK_OK;
    rk_buf_printf(&b, "launch %llu %s", (unsigned long long)l->seq, l->name);
    for (int i = 0; plan && i < plan->nraw; i++)
        rk_buf_printf(&b, isnan(l->raw[i]) ? " nan" : " %.17g", l->raw[i]);
    rk_buf_puts(&b, "\n");
    return write_buf(fd, &b);
}

int collect_replay_write(const char *path, const struct collect_result *r)
{
    int fd = -1, rc = collect_replay_open(path, r->plan, &fd);
    for (int k = 0; rc == RK_OK && k < r->nlaunch; k++)
        rc = collect_replay_append(fd, r->plan, &r->launch[k]);
    if (fd >= 0 && close(fd) != 0 && rc == RK_OK)
        rc = RK_EIO;
    return rc;
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

/* One launch line of a file. */
struct replay_entry {
    unsigned long long seq;
    char *name;
    double *vals; /* nfile of them */
    int used;
};

struct collect_replay_src {
    int nfile;
    char **names; /* the file's raw names */
    struct replay_entry *e;
    long n;
    const struct collect_plan *mapped; /* the plan map[] was made for */
    int *map;                          /* file column -> plan raw index, -1 when it lacks it */
};

void collect_replay_free(struct collect_replay_src *src)
{
    if (!src)
        return;
    for (int j = 0; j < src->nfile && src->names; j++)
        free(src->names[j]);
    for (long k = 0; k < src->n; k++) {
        free(src->e[k].name);
        free(src->e[k].vals);
    }
    free(src->names);
    free(src->e);
    free(src->map);
    free(src);
}

static int by_seq(const void *a, const void *b)
{
    const struct replay_entry *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Parses "launch SEQ MANGLED V1 .. VN" into e (exactly nfile values). 1, or 0 if malformed. */
static int parse_entry(char *line, int nfile, struct replay_entry *e)
{
    char *save = NULL, *end = NULL, *tok = strtok_r(line, " \n", &save);
    char *seq_s = strtok_r(NULL, " \n", &save);
    char *name = strtok_r(NULL, " \n", &save);
    if (!tok || strcmp(tok, "launch") != 0 || !seq_s || !name)
        return 0;
    e->seq = strtoull(seq_s, &end, 10);
    if (!end || *end != '\0' || !(e->vals = malloc(((size_t)nfile + 1) * sizeof *e->vals)))
        return 0;
    for (int j = 0; j < nfile; j++) {
        char *v = strtok_r(NULL, " \n", &save);
        if (!v || (e->vals[j] = strtod(v, &end), *end != '\0')) {
            free(e->vals);
            return 0;
        }
    }
    if (strtok_r(NULL, " \n", &save) || !(e->name = strdup(name))) { /* exactly N values */
        free(e->vals);
        return 0;
    }
    e->used = 0;
    return 1;
}

int collect_replay_load(const char *path, struct collect_replay_src **out, long *malformed)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = RK_OK;
    long cape = 0;
    struct collect_replay_src *src = NULL;
    *out = NULL;
    *malformed = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return RK_EIO;
    if (!(src = calloc(1, sizeof *src))) {
        rc = RK_ENOMEM;
        goto out;
    }
    if (getline(&line, &cap, f) < 0 || strncmp(line, MAGIC, strlen(MAGIC)) != 0 ||
        getline(&line, &cap, f) < 0 || sscanf(line, "raw %d", &src->nfile) != 1 || src->nfile < 0 ||
        src->nfile > 4096) {
        rc = RK_EIO;
        goto out;
    }
    if (!(src->names = calloc((size_t)src->nfile + 1, sizeof *src->names))) {
        rc = RK_ENOMEM;
        goto out;
    }
    for (int j = 0; j < src->nfile; j++) {
        if (getline(&line, &cap, f) < 0) {
            rc = RK_EIO;
            goto out;
        }
        line[strcspn(line, "\n")] = '\0';
        if (!(src->names[j] = strdup(line))) {
            rc = RK_ENOMEM;
            goto out;
        }
    }
    while ((len = getline(&line, &cap, f)) >= 0) {
        if (src->n == cape) {
            long ncap = cape ? 2 * cape : 256;
            void *grown = realloc(src->e, (size_t)ncap * sizeof *src->e);
            if (!grown) {
                rc = RK_ENOMEM;
                goto out;
            }
            src->e = grown;
            cape = ncap;
        }
        /* a line without its newline is the last write of a run that was killed */
        if (line[len - 1] != '\n' || !parse_entry(line, src->nfile, &src->e[src->n]))
            (*malformed)++;
        else
            src->n++;
    }
    if (src->n > 1)
        qsort(src->e, (size_t)src->n, sizeof *src->e, by_seq);
out:
    free(line);
    fclose(f);
    if (rc != RK_OK) {
        collect_replay_free(src);
        return rc;
    }
    *out = src;
    return RK_OK;
}

int collect_replay_join(struct collect_replay_src *src, const struct collect_plan *plan,
                        struct collect_launch *l)
{
    if (src->mapped != plan) {
        int *map = realloc(src->map, ((size_t)src->nfile + 1) * sizeof *map);
        if (!map)
            return RK_ENOMEM;
        src->map = map;
        for (int j = 0; j < src->nfile; j++) {
            map[j] = -1;
            for (int i = 0; i < plan->nraw && map[j] < 0; i++)
                if (strcmp(plan->raw[i], src->names[j]) == 0)
                    map[j] = i;
        }
        src->mapped = plan;
    }
    struct replay_entry key = {l->seq, NULL, NULL, 0};
    struct replay_entry *e =
        src->n ? bsearch(&key, src->e, (size_t)src->n, sizeof *src->e, by_seq) : NULL;
    if (!e || e->used || !l->name || strcmp(e->name, l->name) != 0)
        return RK_ENODATA;
    e->used = 1;
    return join_raw(plan, collect_plan_raw_find(plan, COLLECT_TIME_RAW), l, src->map, e->vals,
                    src->nfile);
}

long collect_replay_unused(const struct collect_replay_src *src)
{
    long n = 0;
    for (long k = 0; k < src->n; k++)
        n += !src->e[k].used;
    return n;
}

int collect_replay_merge(const char *path, struct collect_result *r, long *unmatched)
{
    struct collect_replay_src *src = NULL;
    long malformed = 0;
    int rc = RK_OK;
    *unmatched = 0;
    if (!r->plan)
        return RK_EIO;
    if ((rc = collect_replay_load(path, &src, &malformed)) != RK_OK)
        return rc;
    for (int k = 0; rc == RK_OK && k < r->nlaunch; k++) {
        int jrc = collect_replay_join(src, r->plan, &r->launch[k]);
        if (jrc == RK_ENODATA)
            (*unmatched)++;
        else
            rc = jrc;
    }
    *unmatched += collect_replay_unused(src) + malformed;
    collect_replay_free(src);
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
