/*
 * session.c - one collection session: which launches are recorded, when counter batches are
 * decoded, which mode a CUPTI failure leads to, and how Activity records and counter ranges
 * are matched to launches. Plain C over the backend table (backend.h), so all of it runs in
 * CPU tests with a fake backend.
 *
 * Assumptions, from measurements on the H100 with CUPTI 13:
 *   - AutoRange + KernelReplay makes one range per kernel launched while the profiler is
 *     started, in launch order, and keeps the kernel's side effects; AutoRange + UserReplay
 *     (a one-pass set of hardware counters, backend_cupti.cpp) does the same with nothing
 *     replayed.
 *   - The counter data image holds at most max_ranges ranges and overflows silently, so a
 *     batch is decoded after max_ranges launches.
 *   - Activity records carry the launch's correlation id; in counter mode their timestamps
 *     are 0, so durations come from gpu__time_duration.sum.
 *
 * Counter state of one context (SQLite pager.c style). ERROR is sticky for the session: the
 * session drops to timing mode and never starts the profiler again.
 *
 *        ctx_enable()            start_range()                batch full / unselected launch
 *   INIT ------------> CONFIGURED -------------> IN_RANGE ----------------------------------+
 *     |                    ^                                  stop_decode(): Stop, Decode,  |
 *     |                    +---------------------------------- evaluate, re-initialize <----+
 *     +--- any CUPTI failure (enable, start, stop, decode, reset) ---> ERROR
 *
 * A launch is "selected" when its name passes the name filters (--kernel-name and --kernel-id in
 * Nsight Compute's syntax, matched on the name of --kernel-name-base by common/kname.h's rule)
 * and it falls inside the --launch-skip/--launch-count window, which counts the launches that
 * passed (filter.c); only selected launches are recorded and profiled. A runtime launch
 * (cudaLaunchKernel) is one launch even when the driver call inside it (cuLaunchKernel) reports
 * again: the backend marks the inner one nested and its correlation id becomes an alias of the
 * outer launch.
 *
 * Hand-over as launches complete (options' emit, `roofkit profile`): a launch is complete when
 * its launch call has returned and, in counter mode, its batch was decoded (or failed), in timing
 * mode its Activity record arrived. It is then handed to emit at once and the session keeps only
 * its bookkeeping, so that a process killed later loses only what was not complete. To bound
 * what is not: a batch is also decoded at the end of a synchronizing call (the GPU has finished
 * its kernels; a program that is about to be killed has usually just waited for one), and at the
 * end of a launch call once it has been open flush_interval; a background thread asks CUPTI for
 * the Activity records of finished kernels every flush_interval (cuptiActivityFlushAll(0), which
 * the CUPTI header allows from any thread), and at once after a synchronizing call.
 *
 * NVTX and the profiler API (options' nvtx, nvtx_filter, from_start_off; ncu's --nvtx,
 * --nvtx-include/--nvtx-exclude and --profile-from-start off): a launch is also selected only
 * when the NVTX ranges its thread is in pass the filter (nvtx.c, asked on the launching thread
 * at the launch call) and while recording is on: from the program's start unless
 * from_start_off, then off at each cu(da)ProfilerStop and on again at each cu(da)ProfilerStart,
 * as Nsight Compute does (ncu 2025.3 profiles no launch after cudaProfilerStop even without
 * --profile-from-start off); the launch window counts the launches that passed every filter. A
 * graph's
 * kernels take the answer of their graph's launch call.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "collect.h"
#include "common.h"
#include "filter.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CTX 16

const struct bk_ops *bk_active = &bk_cupti;

enum cs_state { CS_INIT, CS_CONFIGURED, CS_IN_RANGE, CS_ERROR };

struct ctx_state {
    void *ctx;
    void *prof;
    enum cs_state state;
    long *batch; /* launch indexes of the ranges in the current batch */
    int nbatch;
    int ndecoded;  /* batches decoded, for dump file names */
    long *done;    /* the batch being decoded (stop_decode), whose launches are then complete */
    double t_open; /* when the batch's range profiler was started */
};

/* What a graph launch call's kernels take when their records come (session header). */
struct graph_launch {
    uint32_t corr;
    int selected; /* its NVTX ranges passed the filter, inside a profiler start..stop */
    char *nvtx;   /* its thread's ranges then (collect_nvtx_path), or NULL */
};

/* A recorded launch while the session runs. */
struct rec {
    struct collect_launch pub;
    double *raw;    /* plan->nraw values when counters were collected */
    int has_config; /* launch configuration read from the launch call */
    int ptxas_regs; /* pub.registers came from cuFuncGetAttribute */
    double t_enter; /* when the launch call began (counter mode), for t_launch */
    /* hand-over (emit): */
    int pending;     /* in a counter batch not yet decoded */
    int wait_record; /* timing mode: complete once its Activity record arrives */
    int waiting;     /* counted in nwaiting */
    int exited;      /* its launch call returned */
    int emitted;     /* handed over; name and raw are freed */
};

struct collect_session {
    pthread_mutex_t mu; /* recursive: CUPTI may call back into us while we hold it */
    const struct bk_ops *bk;
    struct collect_plan *plan;
    enum collect_mode mode;
    char reason[512];
    int passes;
    int max_ranges;
    int silent;
    char *dump_dir;
    struct collect_filter filter; /* which launches are recorded (filter.c) */
    struct rec *rec;
    long nrec, caprec;
    uint32_t *map_key; /* correlation id -> launch index + 1 (open addressing) */
    long *map_val;
    long map_cap, map_used;
    struct ctx_state ctx[MAX_CTX];
    int nctx;
    int time_raw; /* index of gpu__time_duration.sum in plan->raw, or -1 */
    long nmismatch;
    long ndropped_records;
    int any_decoded; /* a batch was evaluated: the plan's raw order is fixed from now on */
    char **only;     /* options' only_raw (copies), or NULL: collect every raw metric */
    int nonly;
    const char **sel; /* the raw names the profiler collects (into plan->raw) */
    int *sel_idx;     /* their indexes in plan->raw */
    int nsel;
    double t_enable, t_launch, t_decode, t_flush; /* seconds, see collect_result */
    struct bk_hooks hooks;
    /* hand-over as launches complete (options' emit) */
    void (*emit)(void *, const struct collect_plan *, struct collect_launch *);
    void *emit_arg;
    double flush_interval; /* seconds; <= 0: no background thread */
    long nemitted, nemitted_counters;
    long nwaiting; /* emitted launches still waiting for their Activity record */
    pthread_t poller;
    int poller_on, poller_stop, poll_now;
    pthread_mutex_t poll_mu; /* guards poller_stop, poll_now; never held with mu */
    pthread_cond_t poll_cv;
    /* NVTX ranges and the profiler API */
    int nvtx; /* record each launch's ranges (nvtx.c) */
    const struct collect_nvtx_filter *nvtx_filter;
    int profiling;               /* 0: recording off (after a stop, or before the first start
                                    with from_start_off) */
    struct graph_launch *graphs; /* graph launch calls, for their kernels' records */
    long ngraphs, capgraphs;
};

/*
 * ptxas's register counts by mangled kernel name, from every module loaded while a session
 * ran (cubin.c). Process-wide: modules load once, sessions come and go.
 */
static pthread_mutex_t regs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *name;
    int registers;
} * regs_table;
static long regs_n, regs_cap;

static void regs_add(void *arg, const char *name, int registers)
{
    (void)arg;
    for (long i = 0; i < regs_n; i++)
        if (strcmp(regs_table[i].name, name) == 0) {
            regs_table[i].registers = registers;
            return;
        }
    if (regs_n == regs_cap) {
        long ncap = regs_cap ? 2 * regs_cap : 64;
        void *t = realloc(regs_table, (size_t)ncap * sizeof *regs_table);
        if (!t)
            return;
        regs_table = t;
        regs_cap = ncap;
    }
    if ((regs_table[regs_n].name = strdup(name)))
        regs_table[regs_n++].registers = registers;
}

/* ptxas's registers of the kernel named `name`, or -1 when no loaded module told us. */
static int regs_lookup(const char *name)
{
    int r = -1;
    pthread_mutex_lock(&regs_mu);
    for (long i = 0; name && i < regs_n && r < 0; i++)
        if (strcmp(regs_table[i].name, name) == 0)
            r = regs_table[i].registers;
    pthread_mutex_unlock(&regs_mu);
    return r;
}

/* The launch an outer (runtime) callback reported, for the nested driver callback. */
static _Thread_local long tl_outer = -1;    /* launch index, -1 when not selected */
static _Thread_local int tl_outer_open;     /* inside an outer launch callback pair */
static _Thread_local int tl_outer_acted;    /* the counter action for it is done */
static _Thread_local int tl_outer_selected; /* the outer launch is selected */

const char *collect_mode_name(enum collect_mode mode)
{
    switch (mode) {
    case COLLECT_MODE_OFF:
        return "off";
    case COLLECT_MODE_TIMING:
        return "timing";
    case COLLECT_MODE_COUNTERS:
        return "counters";
    }
    return "unknown";
}

const char *collect_counter_advice(void)
{
    return "to enable counters run as root, or add 'options nvidia "
           "NVreg_RestrictProfilingToAdminUsers=0' to a file in /etc/modprobe.d/, run "
           "'update-initramfs -u' and reboot (containers also need --cap-add=SYS_ADMIN)";
}

/* ------------------------------------------------------------------ bookkeeping */

/* Launch configuration known from the launch call itself (driver parameters, ptxas's
 * registers). The Activity record, when it comes, adds timing and the allocation; it
 * fills grid, block and dynamic shared memory only for a launch whose call did not give
 * them: on the H100 with CUDA 13, under the default metric set (kernel replay), cuBLAS's
 * kernels came back from it as grid 1x1x1, block 1x1x1, no shared memory, where the
 * driver call said 1x160x33 x 64 threads and 16896 B (`roofkit run --kernel
 * cublas_sgemm` with and without `--metrics gpu_time`). */
static void set_config(struct collect_session *s, long idx, const struct bk_launch *l)
{
    if (idx < 0 || !l->has_config)
        return;
    struct collect_launch *p = &s->rec[idx].pub;
    memcpy(p->grid, l->grid, sizeof p->grid);
    memcpy(p->block, l->block, sizeof p->block);
    p->dynamic_smem = l->dynamic_smem;
    if (l->registers >= 0)
        p->registers = l->registers;
    if (l->static_smem >= 0)
        p->static_smem = l->static_smem;
    if (l->local_mem >= 0)
        p->local_mem = l->local_mem;
    s->rec[idx].has_config = 1;
    s->rec[idx].ptxas_regs = l->registers >= 0;
    if (l->has_ids && !p->has_record) { /* the record, when it comes, says the same */
        p->device = l->device;
        p->context = l->context;
        p->stream = l->stream;
    }
}

static int map_put(struct collect_session *s, uint32_t key, long idx)
{
    if (2 * (s->map_used + 1) > s->map_cap) {
        long ncap = s->map_cap ? 2 * s->map_cap : 1024;
        uint32_t *nk = calloc((size_t)ncap, sizeof *nk);
        long *nv = calloc((size_t)ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return RK_ENOMEM;
        }
        for (long i = 0; i < s->map_cap; i++) {
            if (!s->map_val[i])
                continue;
            long j = (long)(s->map_key[i] * 2654435761u) & (ncap - 1);
            while (nv[j])
                j = (j + 1) & (ncap - 1);
            nk[j] = s->map_key[i];
            nv[j] = s->map_val[i];
        }
        free(s->map_key);
        free(s->map_val);
        s->map_key = nk;
        s->map_val = nv;
        s->map_cap = ncap;
    }
    long j = (long)(key * 2654435761u) & (s->map_cap - 1);
    while (s->map_val[j] && s->map_key[j] != key)
        j = (j + 1) & (s->map_cap - 1);
    if (!s->map_val[j])
        s->map_used++;
    s->map_key[j] = key;
    s->map_val[j] = idx + 1;
    return RK_OK;
}

static long map_get(const struct collect_session *s, uint32_t key)
{
    if (!s->map_cap)
        return -1;
    long j = (long)(key * 2654435761u) & (s->map_cap - 1);
    while (s->map_val[j]) {
        if (s->map_key[j] == key)
            return s->map_val[j] - 1;
        j = (j + 1) & (s->map_cap - 1);
    }
    return -1;
}

/* Appends a launch record; returns its index or -1 when out of memory. */
static long add_rec(struct collect_session *s, const char *symbol, uint32_t corr)
{
    if (s->nrec == s->caprec) {
        long ncap = s->caprec ? 2 * s->caprec : 256;
        struct rec *r = realloc(s->rec, (size_t)ncap * sizeof *r);
        if (!r)
            return -1;
        s->rec = r;
        s->caprec = ncap;
    }
    struct rec *r = &s->rec[s->nrec];
    memset(r, 0, sizeof *r);
    r->pub.seq = (uint64_t)s->nrec;
    r->pub.correlation = corr;
    r->pub.duration_ns = NAN;
    if (symbol && !(r->pub.name = strdup(symbol)))
        return -1;
    if (map_put(s, corr, s->nrec) != RK_OK) {
        free(r->pub.name);
        return -1;
    }
    return s->nrec++;
}

/* ------------------------------------------------------------------ mode decisions */

static void degrade(struct collect_session *s, enum collect_mode to, const char *why, int code)
{
    if (s->mode <= to)
        return;
    s->mode = to;
    const char *what = s->bk->strerror ? s->bk->strerror(code) : "unknown error";
    int perm = code == BK_INSUFFICIENT_PRIVILEGES || code == BK_VIRTUALIZED_INSUFFICIENT_PRIVILEGES;
    snprintf(s->reason, sizeof s->reason, "%s: %s (CUPTI error %d)%s%s", why, what, code,
             to == COLLECT_MODE_TIMING ? "; recording timing only" : "; recording nothing",
             perm ? "; " : "");
    if (perm) {
        size_t at = strlen(s->reason);
        snprintf(s->reason + at, sizeof s->reason - at, "%s", collect_counter_advice());
    }
    if (!s->silent)
        rk_warn("%s", s->reason);
}

/* Why the range profiler could not be enabled, in words, from its error code. */
static const char *enable_why(int code)
{
    switch (code) {
    case BK_INSUFFICIENT_PRIVILEGES:
        return "no permission to read GPU performance counters";
    case BK_VIRTUALIZED_INSUFFICIENT_PRIVILEGES:
        return "the hypervisor does not allow reading GPU performance counters";
    case BK_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return "this virtual GPU has no performance counters";
    case BK_CONFIDENTIAL_COMPUTING:
        return "performance counters are off under confidential computing";
    case BK_CMP_DEVICE:
    case BK_MIG_DEVICE:
    case BK_SLI_DEVICE:
    case BK_WSL_DEVICE:
    case BK_NOT_SUPPORTED:
    case BK_NOT_COMPATIBLE:
        return "this GPU configuration does not support counter profiling";
    case BK_MULTIPLE_SUBSCRIBERS:
        return "another profiler (ncu, nsys, cuda-gdb) holds CUPTI";
    default:
        return "cannot start the CUPTI range profiler";
    }
}

static void ctx_fail(struct collect_session *s, struct ctx_state *cs, const char *why, int code)
{
    cs->state = CS_ERROR;
    /* Launches of the open batch keep NULL counters. */
    for (int i = 0; i < cs->nbatch; i++)
        s->nmismatch++;
    cs->nbatch = 0;
    if (cs->prof) {
        s->bk->prof_disable(cs->prof);
        cs->prof = NULL;
    }
    degrade(s, COLLECT_MODE_TIMING, why, code);
}

/* Rewrites the plan without the outputs whose raw metrics the chip lacks. */
static int drop_unknown(struct collect_session *s, const char *chip)
{
    int rc = collect_plan_check(s->plan, chip);
    s->time_raw = collect_plan_raw_find(s->plan, COLLECT_TIME_RAW);
    return rc;
}

static struct ctx_state *ctx_find(struct collect_session *s, void *ctx)
{
    for (int i = 0; i < s->nctx; i++)
        if (s->ctx[i].ctx == ctx)
            return &s->ctx[i];
    return NULL;
}

/* The plan's raw metrics this session collects: all, or those of options' only_raw. */
static int select_raw(struct collect_session *s)
{
    const char **sel = realloc(s->sel, ((size_t)s->plan->nraw + 1) * sizeof *sel);
    if (sel)
        s->sel = sel;
    int *idx = realloc(s->sel_idx, ((size_t)s->plan->nraw + 1) * sizeof *idx);
    if (idx)
        s->sel_idx = idx;
    if (!sel || !idx)
        return RK_ENOMEM;
    s->nsel = 0;
    for (int i = 0; i < s->plan->nraw; i++) {
        int want = !s->only;
        for (int j = 0; j < s->nonly && !want; j++)
            want = strcmp(s->only[j], s->plan->raw[i]) == 0;
        if (want) {
            s->sel[s->nsel] = s->plan->raw[i];
            s->sel_idx[s->nsel++] = i;
        }
    }
    return RK_OK;
}

/*
 * Whether the backend may collect s->sel under CUPTI's user replay when it fits one pass: a
 * one-pass set of hardware counters needs no replay, and the range profiler's per-launch cost
 * falls from ~41 ms (kernel replay) to ~1.3 ms on the H100 with the same values (perf-notes
 * "collect", tests/collect/diag/replay-mode-cost.sh). SASS-patched metrics (PerfWorks names
 * with "sass") read 0 under it, so a set with one keeps kernel replay.
 * ROOFKIT_CUPTI_REPLAY=kernel forces kernel replay (a diagnostic).
 */
static int user_replay_ok(const struct collect_session *s)
{
    const char *force = getenv("ROOFKIT_CUPTI_REPLAY");
    if (force && strcmp(force, "kernel") == 0)
        return 0;
    for (int i = 0; i < s->nsel; i++)
        if (strstr(s->sel[i], "sass"))
            return 0;
    return 1;
}

/* The context's counter state, enabling the range profiler on first use. */
static struct ctx_state *ctx_get(struct collect_session *s, void *ctx)
{
    struct ctx_state *cs = ctx_find(s, ctx);
    if (cs)
        return cs;
    if (s->nctx == MAX_CTX)
        return NULL; /* more contexts than we profile: their launches get timing only */
    cs = &s->ctx[s->nctx++];
    memset(cs, 0, sizeof *cs);
    cs->ctx = ctx;
    cs->state = CS_INIT;
    if (!(cs->batch = calloc((size_t)s->max_ranges, sizeof *cs->batch)) ||
        !(cs->done = calloc((size_t)s->max_ranges, sizeof *cs->done))) {
        cs->state = CS_ERROR;
        return cs;
    }
    char chip[64] = "";
    double t0 = rk_now_s();
    for (int attempt = 0; attempt < 2; attempt++) {
        if (select_raw(s) != RK_OK) {
            ctx_fail(s, cs, "out of memory", BK_UNKNOWN);
            return cs;
        }
        int rc = s->bk->prof_enable(ctx, s->sel, s->nsel, s->max_ranges, user_replay_ok(s),
                                    &cs->prof, &s->passes, chip, sizeof chip);
        if (rc == BK_SUCCESS) {
            cs->state = CS_CONFIGURED;
            s->t_enable += rk_now_s() - t0;
            return cs;
        }
        /* An unknown metric (CUPTI says INVALID_METRIC_NAME or, from ConfigAddMetrics,
         * INVALID_PARAMETER): drop it with a warning and retry once with the rest. Only
         * before any launch holds raw values, which are indexed by the plan. */
        if ((rc == BK_INVALID_METRIC_NAME || rc == BK_INVALID_PARAMETER) && attempt == 0 &&
            !s->any_decoded && chip[0]) {
            int prc = drop_unknown(s, chip);
            if (prc == RK_OK && s->plan->ndropped > 0)
                continue;
        }
        ctx_fail(s, cs, enable_why(rc), rc);
        s->t_enable += rk_now_s() - t0;
        return cs;
    }
    return cs;
}

static void dump_batch(struct collect_session *s, struct ctx_state *cs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/counters-%ld-%d-%d.bin", s->dump_dir, (long)getpid(),
             (int)(cs - s->ctx), cs->ndecoded);
    if (s->bk->prof_dump(cs->prof, path) != BK_SUCCESS && !s->silent)
        rk_warn("cannot write the counter data image '%s'", path);
}

/* Stop, decode, evaluate and re-arm: IN_RANGE -> CONFIGURED (stop_decode times it). */
static void stop_decode_batch(struct collect_session *s, struct ctx_state *cs)
{
    int rc, nranges = 0, ndropped = 0;
    if ((rc = s->bk->prof_stop(cs->prof)) != BK_SUCCESS) {
        ctx_fail(s, cs, "cannot stop the CUPTI range profiler", rc);
        return;
    }
    if ((rc = s->bk->prof_decode(cs->prof, &nranges, &ndropped)) != BK_SUCCESS) {
        ctx_fail(s, cs, "cannot decode the counter data", rc);
        return;
    }
    if (s->dump_dir)
        dump_batch(s, cs);
    cs->ndecoded++;
    s->any_decoded = 1;
    if (nranges != cs->nbatch || ndropped != 0) {
        /* Ranges are matched to launches by order only; a different count means we cannot
         * tell which range belongs to which launch, so none gets counters. */
        s->nmismatch += cs->nbatch;
        if (!s->silent)
            rk_warn("counter batch of %d launches returned %d ranges (%d dropped); their "
                    "counters are not stored",
                    cs->nbatch, nranges, ndropped);
    } else {
        double *got = malloc((size_t)(s->nsel ? s->nsel : 1) * sizeof *got);
        for (int i = 0; i < cs->nbatch; i++) {
            struct rec *r = &s->rec[cs->batch[i]];
            double *v = malloc((size_t)(s->plan->nraw ? s->plan->nraw : 1) * sizeof *v);
            if (!v || !got || s->bk->prof_eval(cs->prof, i, got) != BK_SUCCESS) {
                free(v);
                s->nmismatch++;
                continue;
            }
            /* Values of the selected metrics go to their places in the plan; the rest (other
             * pass groups of application replay) stay unknown. */
            for (int k = 0; k < s->plan->nraw; k++)
                v[k] = NAN;
            for (int j = 0; j < s->nsel; j++)
                v[s->sel_idx[j]] = got[j];
            r->raw = v;
            r->pub.has_counters = 1;
        }
        free(got);
    }
    cs->nbatch = 0;
    if ((rc = s->bk->prof_reset(cs->prof)) != BK_SUCCESS) {
        ctx_fail(s, cs, "cannot re-initialize the counter data image", rc);
        return;
    }
    cs->state = CS_CONFIGURED;
}

static void try_emit(struct collect_session *s, long idx);

static void stop_decode(struct collect_session *s, struct ctx_state *cs)
{
    if (cs->state != CS_IN_RANGE)
        return;
    int n = cs->nbatch;
    memcpy(cs->done, cs->batch, (size_t)n * sizeof *cs->done);
    double t0 = rk_now_s();
    stop_decode_batch(s, cs);
    s->t_decode += rk_now_s() - t0;
    /* decoded or failed, the batch's launches are complete: handed over outside the timing */
    for (int i = 0; i < n; i++) {
        s->rec[cs->done[i]].pending = 0;
        try_emit(s, cs->done[i]);
    }
}

/* The counter action for a launch on ctx: start or extend a batch, or close one. */
static void counter_action(struct collect_session *s, void *ctx, long idx, int selected)
{
    if (s->mode != COLLECT_MODE_COUNTERS || !ctx)
        return;
    struct ctx_state *cs = selected ? ctx_get(s, ctx) : ctx_find(s, ctx);
    if (!cs || cs->state == CS_ERROR)
        return;
    if (!selected) {
        stop_decode(s, cs);
        return;
    }
    if (cs->state == CS_CONFIGURED) {
        int rc = s->bk->prof_start(cs->prof);
        if (rc != BK_SUCCESS) {
            ctx_fail(s, cs, "cannot start the CUPTI range profiler", rc);
            return;
        }
        cs->state = CS_IN_RANGE;
        cs->t_open = rk_now_s();
    }
    if (idx >= 0 && cs->state == CS_IN_RANGE) {
        cs->batch[cs->nbatch++] = idx;
        s->rec[idx].pending = 1;
    }
}

/* ------------------------------------------------------------------ backend hooks */

/* Remembers graph launch corr's answer (takes *nvtx) for its kernels' records. */
static void graph_launched(struct collect_session *s, uint32_t corr, int selected, char **nvtx)
{
    if (s->ngraphs == s->capgraphs) {
        long cap = s->capgraphs ? 2 * s->capgraphs : 16;
        struct graph_launch *grown = realloc(s->graphs, (size_t)cap * sizeof *grown);
        if (!grown)
            return;
        s->graphs = grown;
        s->capgraphs = cap;
    }
    struct graph_launch *g = &s->graphs[s->ngraphs++];
    g->corr = corr;
    g->selected = selected;
    g->nvtx = *nvtx;
    *nvtx = NULL;
}

/* The answer of graph launch corr (the newest of that id); 1 and no path when unknown. */
static const struct graph_launch *graph_of(const struct collect_session *s, uint32_t corr)
{
    for (long i = s->ngraphs - 1; i >= 0; i--)
        if (s->graphs[i].corr == corr)
            return &s->graphs[i];
    return NULL;
}

static void on_launch_enter(void *arg, const struct bk_launch *l, int nested)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->mu);
    if (nested) {
        /* The driver call inside a runtime launch: same launch, maybe its context. */
        if (tl_outer >= 0 && map_put(s, l->corr, tl_outer) != RK_OK)
            s->nmismatch++;
        set_config(s, tl_outer, l);
        if (tl_outer_open && !tl_outer_acted) {
            counter_action(s, l->ctx, tl_outer, tl_outer_selected);
            tl_outer_acted = 1;
        }
        pthread_mutex_unlock(&s->mu);
        return;
    }
    long idx = -1;
    int selected = 0, ranges_ok = s->profiling;
    char *nvtx = NULL;
    if (s->nvtx && s->mode != COLLECT_MODE_OFF) {
        int nvtx_ok = 1;
        collect_nvtx_here(s->nvtx_filter, &nvtx_ok, &nvtx);
        ranges_ok = ranges_ok && nvtx_ok;
    }
    if (l->graph) {
        /* A graph's kernels are not profiled one by one: close any open batch. */
        selected = 0;
        graph_launched(s, l->corr, ranges_ok, &nvtx);
    } else if (s->mode != COLLECT_MODE_OFF && collect_filter_name(&s->filter, l->symbol) &&
               ranges_ok && collect_filter_window(&s->filter)) {
        selected = 1;
        if ((idx = add_rec(s, l->symbol, l->corr)) < 0) {
            selected = 0;
            s->nmismatch++;
        }
        set_config(s, idx, l);
        if (idx >= 0) {
            s->rec[idx].wait_record = s->mode == COLLECT_MODE_TIMING;
            s->rec[idx].pub.nvtx = nvtx; /* moved */
            nvtx = NULL;
        }
    }
    free(nvtx);
    tl_outer = idx;
    tl_outer_open = 1;
    tl_outer_selected = selected;
    tl_outer_acted = l->ctx != NULL;
    if (l->ctx)
        counter_action(s, l->ctx, idx, selected);
    if (idx >= 0)
        s->rec[idx].t_enter = rk_now_s(); /* the launch call itself starts now */
    pthread_mutex_unlock(&s->mu);
}

static void on_launch_exit(void *arg, const struct bk_launch *l, int nested)
{
    struct collect_session *s = arg;
    if (nested)
        return;
    pthread_mutex_lock(&s->mu);
    double now = rk_now_s();
    long idx = tl_outer;
    if (idx >= 0 && s->rec[idx].t_enter > 0)
        s->t_launch += now - s->rec[idx].t_enter;
    tl_outer = -1;
    tl_outer_open = 0;
    struct ctx_state *cs = l->ctx ? ctx_find(s, l->ctx) : NULL;
    if (cs && cs->state == CS_IN_RANGE &&
        (cs->nbatch >= s->max_ranges ||
         (s->emit && s->flush_interval > 0 && now - cs->t_open >= s->flush_interval)))
        stop_decode(s, cs);
    if (idx >= 0) {
        s->rec[idx].exited = 1;
        try_emit(s, idx);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_kernel(void *arg, const struct bk_kernel *k)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->mu);
    long idx = map_get(s, k->corr);
    const struct graph_launch *g = idx < 0 && k->graph_node ? graph_of(s, k->corr) : NULL;
    if (idx < 0 && k->graph_node && s->mode != COLLECT_MODE_OFF &&
        collect_filter_name(&s->filter, k->name) && (g ? g->selected : s->profiling) &&
        collect_filter_window(&s->filter) && (idx = add_rec(s, k->name, k->corr)) >= 0) {
        s->rec[idx].exited = 1; /* a graph's kernel: recorded, timing only */
        s->rec[idx].pub.nvtx = g && g->nvtx ? strdup(g->nvtx) : NULL;
    }
    if (idx >= 0 && s->rec[idx].emitted) {
        idx = -1; /* handed over already (counter mode does not wait for records) */
    } else if (idx >= 0) {
        struct collect_launch *p = &s->rec[idx].pub;
        if (!p->name && k->name)
            p->name = strdup(k->name);
        if (!s->rec[idx].has_config) {
            memcpy(p->grid, k->grid, sizeof p->grid);
            memcpy(p->block, k->block, sizeof p->block);
            p->dynamic_smem = k->dynamic_smem;
        }
        memcpy(p->cluster, k->cluster, sizeof p->cluster);
        p->registers_alloc = k->registers;
        if (!s->rec[idx].ptxas_regs)
            p->registers = k->registers;
        p->static_smem = k->static_smem;
        p->local_mem = k->local_mem;
        p->start_ns = k->start;
        p->end_ns = k->end;
        p->device = k->device;
        p->context = k->context;
        p->stream = k->stream;
        p->has_record = 1;
        try_emit(s, idx);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_context_destroy(void *arg, void *ctx)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->mu);
    struct ctx_state *cs = ctx_find(s, ctx);
    if (cs) {
        stop_decode(s, cs);
        if (cs->prof)
            s->bk->prof_disable(cs->prof);
        cs->prof = NULL;
        cs->ctx = NULL; /* the address may be reused by a new context */
        if (cs->state != CS_ERROR)
            cs->state = CS_ERROR;
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_module(void *arg, const void *cubin, size_t size)
{
    (void)arg;
    pthread_mutex_lock(&regs_mu);
    bk_cubin_registers(cubin, size, regs_add, NULL);
    pthread_mutex_unlock(&regs_mu);
}

static void on_dropped(void *arg, size_t n)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->mu);
    s->ndropped_records += (long)n;
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------ hand-over */

/*
 * The public form of recorded launch r, its strings and arrays moved out of r (collect_result's
 * ownership: free with launch_release). RK_OK or RK_ENOMEM.
 */
static int finish_launch(struct collect_session *s, struct rec *rec, struct collect_launch *l)
{
    *l = rec->pub;
    rec->pub.name = NULL; /* moved */
    rec->pub.nvtx = NULL;
    l->raw = rec->raw; /* moved */
    rec->raw = NULL;
    if (!l->name)
        l->name = strdup("(unknown)");
    l->demangled = l->name ? bk_demangle(l->name) : NULL;
    int ptxas = rec->ptxas_regs ? -1 : regs_lookup(l->name);
    if (ptxas > 0)
        l->registers = ptxas;
    if (s->mode != COLLECT_MODE_OFF && s->plan->nout > 0) {
        if (!(l->values = calloc((size_t)s->plan->nout, sizeof *l->values)))
            return RK_ENOMEM;
        l->nvalues = s->plan->nout;
        collect_plan_eval(s->plan, l->raw, l->values);
    }
    if (l->end_ns > l->start_ns && l->start_ns)
        l->duration_ns = (double)(l->end_ns - l->start_ns);
    else if (l->raw && s->time_raw >= 0 && !isnan(l->raw[s->time_raw]))
        l->duration_ns = l->raw[s->time_raw];
    return RK_OK;
}

static void launch_release(struct collect_launch *l)
{
    free(l->nvtx);
    free(l->name);
    free(l->demangled);
    free(l->values);
    free(l->raw);
}

/* Hands launch idx to emit when it is complete (session header). Called with mu held. */
static void try_emit(struct collect_session *s, long idx)
{
    struct rec *r = &s->rec[idx];
    if (!s->emit || r->emitted || r->pending || !r->exited)
        return;
    if (r->wait_record && !r->pub.has_record) {
        if (!r->waiting) {
            r->waiting = 1;
            s->nwaiting++;
        }
        return;
    }
    if (r->waiting) {
        r->waiting = 0;
        s->nwaiting--;
    }
    struct collect_launch l;
    r->emitted = 1;
    if (finish_launch(s, r, &l) == RK_OK) {
        s->emit(s->emit_arg, s->plan, &l);
        s->nemitted++;
        s->nemitted_counters += l.has_counters;
    } else {
        s->nmismatch++;
    }
    launch_release(&l);
}

/* The program's cu(da)ProfilerStart (on = 1) or cu(da)ProfilerStop (0): launches are selected
 * only while recording is on (session header); a stop decodes the open batches. */
static void on_profiler(void *arg, int on)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->mu);
    if (s->profiling != on) {
        s->profiling = on;
        for (int i = 0; !on && i < s->nctx; i++)
            stop_decode(s, &s->ctx[i]);
    }
    pthread_mutex_unlock(&s->mu);
}

/* The end of a synchronizing call (cudaDeviceSynchronize, cuStreamSynchronize, ...): the GPU
 * has finished what it waited for, so the open batches are decoded and Activity records asked
 * for now (session header). */
static void on_sync(void *arg, void *ctx)
{
    struct collect_session *s = arg;
    (void)ctx;
    pthread_mutex_lock(&s->mu);
    int wake = s->emit && s->nwaiting > 0;
    for (int i = 0; s->emit && i < s->nctx; i++)
        if (s->ctx[i].state == CS_IN_RANGE && s->ctx[i].nbatch > 0)
            stop_decode(s, &s->ctx[i]);
    pthread_mutex_unlock(&s->mu);
    if (wake && s->poller_on) {
        pthread_mutex_lock(&s->poll_mu);
        s->poll_now = 1;
        pthread_cond_signal(&s->poll_cv);
        pthread_mutex_unlock(&s->poll_mu);
    }
}

void collect_session_poll(struct collect_session *s)
{
    pthread_mutex_lock(&s->mu);
    int want = s->nwaiting > 0 && s->mode != COLLECT_MODE_OFF;
    pthread_mutex_unlock(&s->mu);
    /* records are delivered through on_kernel, which takes mu: never hold it here */
    if (want && s->bk->trace_poll)
        s->bk->trace_poll();
}

/* The background thread: collect_session_poll every flush_interval, or at once when a
 * synchronizing call asks. */
static void *poller_main(void *arg)
{
    struct collect_session *s = arg;
    pthread_mutex_lock(&s->poll_mu);
    while (!s->poller_stop) {
        if (!s->poll_now) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            double t = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + s->flush_interval;
            until.tv_sec = (time_t)t;
            until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
            pthread_cond_timedwait(&s->poll_cv, &s->poll_mu, &until);
        }
        if (s->poller_stop)
            break;
        s->poll_now = 0;
        pthread_mutex_unlock(&s->poll_mu);
        collect_session_poll(s);
        pthread_mutex_lock(&s->poll_mu);
    }
    pthread_mutex_unlock(&s->poll_mu);
    return NULL;
}

static void poller_join(struct collect_session *s)
{
    if (!s->poller_on)
        return;
    pthread_mutex_lock(&s->poll_mu);
    s->poller_stop = 1;
    pthread_cond_signal(&s->poll_cv);
    pthread_mutex_unlock(&s->poll_mu);
    pthread_join(s->poller, NULL);
    s->poller_on = 0;
}

/* ------------------------------------------------------------------ public API */

static void session_free(struct collect_session *s)
{
    if (!s)
        return;
    poller_join(s);
    for (long i = 0; i < s->nrec; i++) {
        free(s->rec[i].pub.name);
        free(s->rec[i].pub.nvtx);
        free(s->rec[i].raw);
    }
    for (long i = 0; i < s->ngraphs; i++)
        free(s->graphs[i].nvtx);
    free(s->graphs);
    for (int i = 0; i < s->nctx; i++) {
        free(s->ctx[i].batch);
        free(s->ctx[i].done);
    }
    free(s->rec);
    free(s->map_key);
    free(s->map_val);
    free(s->dump_dir);
    for (int i = 0; i < s->nonly; i++)
        free(s->only[i]);
    free(s->only);
    free(s->sel);
    free(s->sel_idx);
    collect_filter_release(&s->filter);
    collect_plan_free(s->plan);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->poll_mu);
    pthread_cond_destroy(&s->poll_cv);
    free(s);
}

int collect_session_begin(const struct collect_options *opt, struct collect_session **out)
{
    static const struct collect_options none;
    struct collect_session *s = NULL;
    pthread_mutexattr_t attr;
    int rc = RK_OK;
    *out = NULL;
    if (!opt)
        opt = &none;
    if (opt->launch_skip < 0 || opt->launch_count < 0 || opt->max_ranges < 0)
        return rk_error(RK_EUSAGE, "launch skip, launch count and batch size must not be negative");
    if (!(s = calloc(1, sizeof *s)))
        return rk_error(RK_ENOMEM, "out of memory starting a collection session");
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_mutex_init(&s->poll_mu, NULL);
    pthread_cond_init(&s->poll_cv, NULL);
    s->emit = opt->emit;
    s->emit_arg = opt->emit_arg;
    s->nvtx = opt->nvtx || opt->nvtx_filter;
    s->nvtx_filter = opt->nvtx_filter;
    s->profiling = !opt->from_start_off;
    s->flush_interval = opt->flush_interval == 0 ? 0.5 : opt->flush_interval;
    s->bk = bk_active;
    s->silent = opt->silent;
    s->max_ranges = opt->max_ranges ? opt->max_ranges : 64;
    s->time_raw = -1;
    s->mode = opt->nmetrics < 0 ? COLLECT_MODE_TIMING : COLLECT_MODE_COUNTERS;
    if (opt->nmetrics < 0)
        snprintf(s->reason, sizeof s->reason, "counters not requested (--metrics none)");
    if ((rc = collect_filter_init(&s->filter, opt)) != RK_OK)
        goto out;
    if (opt->dump_dir && !(s->dump_dir = strdup(opt->dump_dir))) {
        rc = rk_error(RK_ENOMEM, "out of memory starting a collection session");
        goto out;
    }
    if (opt->only_raw) {
        if (!(s->only = calloc((size_t)opt->nonly_raw + 1, sizeof *s->only))) {
            rc = rk_error(RK_ENOMEM, "out of memory starting a collection session");
            goto out;
        }
        for (; s->nonly < opt->nonly_raw; s->nonly++)
            if (!(s->only[s->nonly] = strdup(opt->only_raw[s->nonly]))) {
                rc = rk_error(RK_ENOMEM, "out of memory starting a collection session");
                goto out;
            }
    }
    if ((rc = collect_plan_new(opt->metrics, opt->nmetrics > 0 ? opt->nmetrics : 0, &s->plan)) !=
        RK_OK)
        goto out;
    s->time_raw = collect_plan_raw_find(s->plan, COLLECT_TIME_RAW);

    s->hooks.arg = s;
    s->hooks.launch_enter = on_launch_enter;
    s->hooks.launch_exit = on_launch_exit;
    s->hooks.kernel = on_kernel;
    s->hooks.context_destroy = on_context_destroy;
    s->hooks.module = on_module;
    s->hooks.dropped = on_dropped;
    s->hooks.sync = on_sync;
    s->hooks.profiler = on_profiler;
    /* the Activity records of finished kernels, asked for in the background (session header);
     * without the thread, records still come when CUPTI's buffers fill and at the end */
    if (s->emit && s->flush_interval > 0 && rk_thread_start(&s->poller, poller_main, s) == 0)
        s->poller_on = 1;
    int brc = s->bk->trace_start(&s->hooks, s->mode == COLLECT_MODE_TIMING);
    if (brc != BK_SUCCESS)
        degrade(s, COLLECT_MODE_OFF,
                brc == BK_MULTIPLE_SUBSCRIBERS || brc == BK_INSUFFICIENT_PRIVILEGES
                    ? enable_why(brc)
                    : "cannot trace kernel launches with CUPTI",
                brc);
out:
    if (rc != RK_OK) {
        session_free(s);
        return rc;
    }
    *out = s;
    return RK_OK;
}

enum collect_mode collect_session_mode(const struct collect_session *s, const char **reason)
{
    if (reason)
        *reason = s->reason;
    return s->mode;
}

int collect_session_end(struct collect_session *s, struct collect_result **out)
{
    struct collect_result *r = NULL;
    int rc = RK_OK;
    *out = NULL;
    poller_join(s);
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nctx; i++) {
        struct ctx_state *cs = &s->ctx[i];
        stop_decode(s, cs);
        if (cs->prof)
            s->bk->prof_disable(cs->prof);
        cs->prof = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    /* Flushing delivers Activity records from CUPTI's thread: never hold the lock here. */
    if (s->mode != COLLECT_MODE_OFF) {
        double t0 = rk_now_s();
        s->bk->trace_flush();
        s->bk->trace_stop();
        s->t_flush = rk_now_s() - t0;
    }

    pthread_mutex_lock(&s->mu);
    if (!(r = calloc(1, sizeof *r))) {
        rc = RK_ENOMEM;
        goto out;
    }
    r->mode = s->mode;
    memcpy(r->reason, s->reason, sizeof r->reason);
    r->passes = s->mode == COLLECT_MODE_COUNTERS ? s->passes : 0;
    r->nmismatch = s->nmismatch;
    r->ndropped_records = s->ndropped_records;
    r->t_enable = s->t_enable;
    r->t_launch = s->t_launch;
    r->t_decode = s->t_decode;
    r->t_flush = s->t_flush;
    if (s->emit) {
        /* what is left, complete or not, in launch order */
        for (long i = 0; i < s->nrec; i++) {
            s->rec[i].pending = s->rec[i].wait_record = 0;
            s->rec[i].exited = 1;
            try_emit(s, i);
        }
    } else if (s->nrec && !(r->launch = calloc((size_t)s->nrec, sizeof *r->launch))) {
        rc = RK_ENOMEM;
        goto out;
    }
    r->nemitted = s->nemitted;
    r->nemitted_counters = s->nemitted_counters;
    for (long i = 0; !s->emit && i < s->nrec; i++)
        if ((rc = finish_launch(s, &s->rec[i], &r->launch[r->nlaunch++])) != RK_OK)
            goto out;
    r->plan = s->plan;
    s->plan = NULL;
out:
    pthread_mutex_unlock(&s->mu);
    session_free(s);
    if (rc != RK_OK) {
        collect_result_free(r);
        return rk_error(rc, "out of memory collecting the kernel records");
    }
    *out = r;
    return RK_OK;
}

void collect_result_free(struct collect_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nlaunch; i++) {
        free(r->launch[i].nvtx);
        free(r->launch[i].name);
        free(r->launch[i].demangled);
        free(r->launch[i].values);
        free(r->launch[i].raw);
    }
    free(r->launch);
    collect_plan_free((struct collect_plan *)r->plan);
    free(r);
}
