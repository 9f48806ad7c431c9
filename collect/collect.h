/*
 * collect.h - the whole public interface of collect/: what a kernel did, read from CUPTI.
 *
 * Three things live here:
 *   1. The metric aliases: classic nvprof names (gld_throughput, flop_count_sp, ...) kept as
 *      data, each a linear recipe over CUPTI (PerfWorks) metrics. Users may also name any raw
 *      CUPTI metric. A collect_plan turns the requested names into the raw metrics to collect
 *      and evaluates the aliases from them.
 *   2. Host-side questions that need no GPU: does a chip know a metric, how many replay
 *      passes does a set cost ("roofkit list metrics").
 *   3. A collection session: every kernel launch between collect_session_begin() and
 *      collect_session_end() is recorded with its launch configuration (CUPTI Activity) and,
 *      in counter mode, its hardware counters (CUPTI Range Profiler, one range per launch;
 *      user replay for a one-pass set of hardware counters, kernel replay otherwise). The same
 *      session runs in-process for `roofkit run` and inside the injection library
 *      libroofkit-inject.so for `roofkit profile -- PROGRAM`; both collect one pass group per
 *      launch or run when the metrics need several (only_raw, collect_result_merge,
 *      collect_replay_merge).
 *
 * Timing rule: a counter session replays each kernel once per pass and CUPTI reports no
 * Activity timestamps while the range profiler is on; in counter mode a launch's duration is
 * the counter gpu__time_duration.sum. Callers that want event timings run their timed
 * repetitions outside any session.
 *
 * Degrading cleanly: a session never fails the program it watches. Without counter
 * permission, on a virtual GPU or an unsupported device it records timing only; when CUPTI
 * cannot trace at all (another tool such as ncu holds it) it records nothing.
 * The result says which mode ran and why.
 *
 * Thread-safety: the session's bookkeeping is locked; CUPTI's callbacks may come from any
 * thread. One session at a time per process.
 */
#ifndef RK_COLLECT_H
#define RK_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ metric aliases */

#define COLLECT_MAX_TERMS 4

/*
 * One alias: value = sum over i of coef[i] * raw[i] (FLOPs = add + mul + 2 fma). A value is
 * NULL (unknown) when any term is NaN, which CUPTI returns for metrics it did not collect.
 */
struct collect_metric {
    const char *alias; /* classic name, e.g. "gld_throughput" */
    const char *unit;  /* unit of the value: "byte", "byte/second", "percent", ... */
    int in_default;    /* 1 when part of the default set (3 passes on GH100) */
    int nterms;        /* 1..COLLECT_MAX_TERMS */
    const char *raw[COLLECT_MAX_TERMS]; /* CUPTI metric names */
    double coef[COLLECT_MAX_TERMS];
    const char *description; /* one line for `roofkit list metrics` */
};

/* The alias table, in display order. collect_metric_get returns NULL out of range. */
int collect_metric_count(void);
const struct collect_metric *collect_metric_get(int i);
/* The alias named `alias` (exact match), or NULL. */
const struct collect_metric *collect_metric_find(const char *alias);
/* How far `m`'s counts were found to hold on the H100 (one line: "exact: ...", "ncu +-1%"),
 * or NULL when not checked. */
const char *collect_metric_holds(const struct collect_metric *m);

/*
 * A plan: the requested outputs and the distinct raw CUPTI metrics they need.
 *   out[i].alias is the alias, or NULL for a raw metric the user named directly;
 *   out[i].raw is the raw CUPTI name, or for a multi-term alias its formula text
 *   ("a + b + 2*c"). Both are stored with each value.
 */
struct collect_output {
    char *alias;
    char *raw;
    const char *unit; /* NULL for a raw metric until collect_plan_check() fills it */
    int nterms;
    int term[COLLECT_MAX_TERMS]; /* indexes into plan->raw */
    double coef[COLLECT_MAX_TERMS];
};

struct collect_plan {
    int nout;
    struct collect_output *out;
    int nraw;
    char **raw;       /* distinct raw names, in first-use order */
    char **raw_units; /* unit of each raw metric once checked, else NULL */
    int ndropped;
    char **dropped; /* names collect_plan_check() removed because the chip lacks them */
};

/*
 * collect_plan_new: names[0..n) are aliases or raw CUPTI names ("dram__bytes_read.sum");
 * n == 0 selects the default set. A name that is neither a known alias nor shaped like a
 * CUPTI metric (unit__counter.rollup) is a usage error. Returns RK_OK, RK_EUSAGE (message
 * printed) or RK_ENOMEM. Free with collect_plan_free().
 */
int collect_plan_new(const char *const *names, int n, struct collect_plan **out /* OUT */);
/* The raw metric a launch's duration comes from in counter mode (no Activity timestamps). */
#define COLLECT_TIME_RAW "gpu__time_duration.sum"
/* The index of raw CUPTI metric `raw` in plan->raw, or -1. */
int collect_plan_raw_find(const struct collect_plan *plan, const char *raw);
void collect_plan_free(struct collect_plan *plan);

/*
 * collect_plan_check: asks CUPTI's host API whether `chip` ("GH100"; NULL = the current GPU's
 * chip, or GH100 without one) knows every raw metric; outputs that need an unknown metric are
 * removed and listed in plan->dropped (a warning names them). Fills units. No GPU needed.
 * Returns RK_OK, RK_EUSAGE when nothing is left, or RK_ECUPTI when the host API fails.
 */
int collect_plan_check(struct collect_plan *plan, const char *chip);

/*
 * One stored value: alias (NULL for a user-named raw metric), raw name or formula, value,
 * unit. is_null is 1 when CUPTI returned NaN or the launch was not profiled.
 */
struct collect_value {
    const char *alias;
    const char *raw;
    const char *unit;
    double value;
    int is_null;
};

/*
 * collect_plan_eval: raw[0..plan->nraw) measured values (NaN = unknown) to
 * out[0..plan->nout). The strings in out point into the plan.
 */
void collect_plan_eval(const struct collect_plan *plan, const double *raw,
                       struct collect_value *out /* OUT: plan->nout entries */);

/*
 * collect_output_additive: 1 when output i of the plan is a count that adds up over launches
 * (every CUPTI term is a `.sum` rollup: bytes, flops, instructions, gpu__time_duration), 0 for a
 * rate, ratio, percentage or average.
 */
int collect_output_additive(const struct collect_plan *plan, int i);

/* --------------------------------------------------------- host API (no GPU needed) */

/*
 * collect_chip_name: the CUPTI chip name of CUDA device `device` ("GH100"). Returns RK_OK, or
 * RK_ENOGPU when no driver or GPU answers (buf then holds "GH100", the default chip).
 */
int collect_chip_name(int device, char *buf /* OUT */, size_t size);

/*
 * collect_count_passes_for: replay passes that names[0..n) (aliases or raw names; n == 0 = the
 * default set) cost on `chip` (NULL = the current GPU's chip, or GH100 without a GPU). Returns
 * RK_OK, RK_EUSAGE for an unknown name (message printed) or RK_ECUPTI.
 */
int collect_count_passes_for(const char *chip, const char *const *names, int n,
                             int *passes /* OUT */);

/*
 * collect_metric_supported: *supported = 1 when `chip` (NULL = current GPU's chip or GH100)
 * knows every raw metric of `name` (an alias or a raw name). *passes, when not NULL, gets the
 * passes the metric costs alone. Returns RK_OK or RK_ECUPTI.
 */
int collect_metric_supported(const char *chip, const char *name, int *supported /* OUT */,
                             int *passes /* OUT, may be NULL */);

/*
 * collect_plan_groups: splits the plan's raw metrics into groups that each cost one replay
 * pass on `chip` (NULL = the current GPU's chip, or GH100), first fit in raw order; a metric
 * that costs more than one pass alone gets a group of its own. group[i] (plan->nraw entries)
 * gets raw i's group, *ngroups the number of groups. Running a program once per group
 * collects the whole set with nothing replayed inside a run (application replay, `roofkit
 * profile`). Returns RK_OK, RK_ENOMEM or RK_ECUPTI (message printed).
 */
int collect_plan_groups(const struct collect_plan *plan, const char *chip, int *group /* OUT */,
                        int *ngroups /* OUT */);
/* The same groups as lists: (*lists)[g] is group g's raw names joined by commas, in plan order
 * (what ROOFKIT_RAW and collect_options.only_raw take); *ngroups of them, each and the array
 * malloc'd. Returns as collect_plan_groups. */
int collect_plan_group_names(const struct collect_plan *plan, const char *chip,
                             char ***lists /* OUT */, int *ngroups /* OUT */);

/* ------------------------------------------------------------------------ sessions */

enum collect_mode {
    COLLECT_MODE_OFF = 0,      /* CUPTI could not trace: nothing recorded (reason says why) */
    COLLECT_MODE_TIMING = 1,   /* launches and timestamps, no counters */
    COLLECT_MODE_COUNTERS = 2, /* launches and counters (durations from gpu__time_duration) */
};

/* "off", "timing", "counters". */
const char *collect_mode_name(enum collect_mode mode);

struct collect_launch;      /* below: what a session hands over */
struct collect_nvtx_filter; /* NVTX expressions (nvtx.c) */

struct collect_options {
    /* Metric names (aliases or raw); nmetrics == 0 = default set; nmetrics < 0 = none
     * (timing only, with Activity timestamps). */
    const char *const *metrics;
    int nmetrics;
    const char
        *kernel_regex; /* POSIX extended regex on the demangled or mangled name; NULL = all */
    /* Nsight Compute's filters, by common/kname.h's rule; NULL or "" = all. */
    const char *kernel_name; /* an exact name or "regex:EXPR" (ncu --kernel-name) */
    const char *kernel_base; /* "function" (NULL, ""), "demangled" or "mangled" */
    const char *kernel_id;   /* "::[regex:]NAME:INVOCATION" (ncu --kernel-id) */
    long launch_skip;        /* skip the first N matching launches */
    long launch_count;       /* record at most N matching launches; 0 = no limit */
    int max_ranges;          /* launches per counter batch; 0 = 64 */
    /* Where counter batches are dumped as raw counter data images (for golden tests), or
     * NULL. */
    const char *dump_dir;
    int silent; /* 1: never print (the injection library reports through its status file) */
    /* Application replay: collect only these raw metrics of the plan (one pass group); the
     * others stay NaN in each launch's raw values until collect_replay_merge fills them.
     * NULL = every raw metric of the plan. */
    const char *const *only_raw;
    int nonly_raw;
    /*
     * Hand-over as launches complete (`roofkit profile`, so that a program killed later keeps
     * them): emit(emit_arg, plan, l) receives each recorded launch once it is complete (its
     * launch call returned; counter mode: its batch decoded or failed; timing mode: its Activity
     * record arrived), in about launch order, from whichever thread completed it, while the
     * session's lock is held: it must not call the session. l and plan are valid during the call
     * only; emit may change l->raw and l->values (application replay joins other runs' values).
     * The session then keeps no copy: collect_session_end hands over what is left the same way
     * and returns a result without launches. NULL: launches are kept until collect_session_end.
     */
    void (*emit)(void *arg, const struct collect_plan *plan, struct collect_launch *l);
    void *emit_arg;
    /* With emit: a counter batch open this long (seconds) is decoded at the next launch's end,
     * and Activity records are asked for this often from a background thread; 0 = 0.5, < 0 =
     * neither (tests call collect_session_poll). */
    double flush_interval;
    /* NVTX (`roofkit profile --nvtx`): nvtx = 1 records the ranges each launch ran in
     * (collect_launch's nvtx); nvtx_filter, when not NULL, also records only the launches it
     * selects (implies nvtx; collect_nvtx_filter_new). The program must have loaded the injection
     * library as its NVTX tool (inject.c): without it no range is known. */
    int nvtx;
    const struct collect_nvtx_filter *nvtx_filter;
    /* 1: record only between the program's cu(da)ProfilerStart and cu(da)ProfilerStop, none
     * before the first start (ncu --profile-from-start off). 0: record from the start; a
     * cu(da)ProfilerStop still stops recording until the next start, as ncu does. */
    int from_start_off;
};

struct collect_launch {
    uint64_t seq;    /* 0, 1, ... in launch order among the recorded launches */
    char *name;      /* mangled name as CUPTI reports it */
    char *demangled; /* demangled (== a copy of name when it does not demangle) */
    uint32_t grid[3], block[3], cluster[3];
    int registers;             /* per thread, as ptxas assigned them (cuFuncGetAttribute) */
    int registers_alloc;       /* per thread, as allocated (Activity; rounded up to 8) */
    int static_smem;           /* bytes per block */
    int dynamic_smem;          /* bytes per block */
    int local_mem;             /* bytes per thread */
    uint64_t start_ns, end_ns; /* 0, 0 when not timed (counter mode) */
    double duration_ns; /* end - start, or gpu__time_duration.sum in counter mode; NaN if unknown */
    uint32_t correlation, device, context, stream;
    int has_record;               /* the Activity record arrived */
    int has_counters;             /* counters were collected for this launch */
    struct collect_value *values; /* plan->nout values (all NULL when !has_counters) */
    int nvalues;
    double *raw; /* plan->nraw raw values (NaN = not collected); NULL when !has_counters */
    char *nvtx;  /* the NVTX ranges it ran in (collect_nvtx_path), NULL: none or not asked */
};

struct collect_result {
    enum collect_mode mode;
    char reason[512]; /* why the mode is not "counters" (empty when it is) */
    int passes;       /* replay passes per launch in counter mode */
    int nlaunch;
    struct collect_launch *launch;
    long nmismatch;                   /* launches whose counter range could not be matched */
    long ndropped_records;            /* Activity records CUPTI dropped */
    const struct collect_plan *plan;  /* owned by the result */
    long nemitted, nemitted_counters; /* launches handed to options' emit, with counters */
    /* Where the session's time went, in seconds (for overhead reports): enabling the range
     * profiler, inside recorded launch calls (kernel replay happens there), decoding and
     * evaluating batches, flushing Activity at the end. */
    double t_enable, t_launch, t_decode, t_flush;
};

struct collect_session;

/*
 * collect_session_begin: starts recording kernel launches of this process. Call with the CUDA
 * context already created (or not: contexts created later are handled). Returns RK_OK with
 * *out set even when CUPTI is unusable (the session then runs in mode off or timing, and
 * collect_session_mode says why); RK_EUSAGE for bad options (message printed); RK_ENOMEM.
 */
int collect_session_begin(const struct collect_options *opt,
                          struct collect_session **out /* OUT */);

/* The mode the session runs in now, and why it is not counters (never NULL). */
enum collect_mode collect_session_mode(const struct collect_session *s, const char **reason);

/*
 * collect_session_end: the caller has synchronized the device (cudaDeviceSynchronize): CUPTI
 * flushes but does not wait. Ends the session and hands over every recorded launch in launch
 * order; *out is owned by the caller (collect_result_free). The session is freed. Returns
 * RK_OK or RK_ENOMEM.
 */
int collect_session_end(struct collect_session *s, struct collect_result **out /* OUT */);
void collect_result_free(struct collect_result *r);

/*
 * collect_session_poll: asks CUPTI for the Activity records of kernels that have finished and
 * hands over (options' emit) the launches they complete. The background thread of a session with
 * emit calls it every flush_interval; call it from no CUPTI callback.
 */
void collect_session_poll(struct collect_session *s);

/*
 * Application replay (`roofkit profile`): the program runs once per pass group
 * (collect_plan_groups), each run collecting one group with nothing replayed. Every process of
 * every run but the last writes its launches' raw values to a file; the same process of the
 * last run (the n-th CUDA process to start, counted per run) merges them into its own result
 * before storing, matching launches by their index and mangled name.
 *
 * collect_replay_write: writes the raw values r collected (its plan's raw names, then one line
 * per launch with counters) to `path`. RK_OK or RK_EIO (nothing printed).
 * collect_replay_merge: reads such a file and fills the raw values of r's launches that it
 * has (allocating raw for a launch without counters), then re-evaluates their values and, in
 * counter mode, their durations. *unmatched gets the launches on either side that found no
 * partner (a program whose launches differ between runs); their values from the file are
 * left out. RK_OK, RK_EIO (no file, or not one of ours) or RK_ENOMEM.
 */
int collect_replay_write(const char *path, const struct collect_result *r);
int collect_replay_merge(const char *path, struct collect_result *r, long *unmatched /* OUT */);

/*
 * The same, a launch at a time, as launches are handed over (options' emit), so that a run
 * killed later leaves what it had:
 * collect_replay_open creates (truncates) path with plan's raw names; collect_replay_append
 * adds one launch with counters (others are skipped) with one write(2). RK_OK, RK_EIO or
 * RK_ENOMEM (nothing printed).
 * collect_replay_load reads a file (a torn or malformed line is skipped and counted in
 * *malformed); collect_replay_join fills l's raw values from the file's line of the same index
 * and mangled name, once, and re-evaluates l (RK_ENODATA: no partner); collect_replay_unused
 * counts the file's lines no launch joined. load: RK_OK, RK_EIO or RK_ENOMEM.
 */
struct collect_replay_src;
int collect_replay_open(const char *path, const struct collect_plan *plan, int *fd /* OUT */);
int collect_replay_append(int fd, const struct collect_plan *plan, const struct collect_launch *l);
int collect_replay_load(const char *path, struct collect_replay_src **out /* OUT */,
                        long *malformed /* OUT */);
int collect_replay_join(struct collect_replay_src *src, const struct collect_plan *plan,
                        struct collect_launch *l);
long collect_replay_unused(const struct collect_replay_src *src);
void collect_replay_free(struct collect_replay_src *src);

/*
 * collect_result_merge: the same join within one process (`roofkit run`: one untimed launch of
 * a configuration per pass group): dst and src come from sessions of the same metrics with
 * different only_raw; launch k of src joins launch k of dst when their mangled names agree.
 * dst's values are re-evaluated; a launch stays has_counters only when both sides counted it.
 * *unmatched gets the launches without a partner. RK_OK, RK_EFAIL (different plans: a bug) or
 * RK_ENOMEM.
 */
int collect_result_merge(struct collect_result *dst, const struct collect_result *src,
                         long *unmatched /* OUT */);

/*
 * collect_result_combine: one value per plan output for all the launches of r together, for a
 * measurement whose one call launched several kernels (cuBLAS, a split-k reduction). Counts
 * (collect_output_additive) are added; rates, ratios and percentages are averaged, weighted by
 * each launch's duration_ns (a single launch is copied as is). A value is NULL when no launch was
 * recorded, when any launch lacks counters or has that value NULL, and, for an average of
 * several launches, when a duration is unknown. out[i].alias/raw/unit point into r->plan.
 * Returns the number of launches combined (r->nlaunch).
 */
int collect_result_combine(const struct collect_result *r,
                           struct collect_value *out /* OUT: r->plan->nout entries */);

/* ------------------------------------------------------------------------ NVTX */

/*
 * NVTX ranges (`roofkit profile --nvtx`, nvtx.c): which ranges a launch runs in, and Nsight
 * Compute's --nvtx-include / --nvtx-exclude expressions over them. nvtx.c's header gives the
 * expression syntax and the stored path's format.
 *
 * A view of the ranges a launch runs in: the launching thread's push/pop ranges of every domain
 * in push order (bottom first), and the process's open start/end ranges in start order. domain
 * NULL is the default domain.
 */
struct collect_nvtx_range {
    const char *domain;
    const char *name;
};
struct collect_nvtx_view {
    const struct collect_nvtx_range *pushpop;
    int npushpop;
    const struct collect_nvtx_range *startend;
    int nstartend;
};
struct collect_nvtx_filter;

/*
 * collect_nvtx_filter_new: parses include[0..ninclude) and exclude[0..nexclude). RK_OK, or
 * RK_EUSAGE with one message naming the option, the expression and what to write instead (what
 * ncu documents and roofkit does not follow is refused, never read otherwise), or RK_ENOMEM.
 */
int collect_nvtx_filter_new(const char *const *include, int ninclude, const char *const *exclude,
                            int nexclude, struct collect_nvtx_filter **out /* OUT */);
void collect_nvtx_filter_free(struct collect_nvtx_filter *f);

/* 1 when a launch in view v is profiled: no include or one matches, and no exclude matches (f
 * NULL: always). */
int collect_nvtx_match(const struct collect_nvtx_filter *f, const struct collect_nvtx_view *v);

/* The stored path of view v (malloc'd), NULL when v holds no range (or out of memory). */
char *collect_nvtx_path(const struct collect_nvtx_view *v);

/*
 * The NVTX tool: collect_nvtx_attach fills the handler table of one NVTX instance of the
 * program from its export-table function (what NVTX passes to InitializeInjectionNvtx2); 1 on
 * success, 0 when the table is not one it knows. collect_nvtx_here answers for the calling
 * thread now: *selected as collect_nvtx_match would (1 when nothing is known), *path its path
 * (malloc'd, NULL for none).
 */
int collect_nvtx_attach(const void *(*get_export_table)(uint32_t id));
void collect_nvtx_here(const struct collect_nvtx_filter *f, int *selected, char **path /* OUT */);

/* ------------------------------------------------------------------------ energy */

/*
 * The energy of a profiled program (energy.c: the method and its error). NVML's energy counter
 * of every GPU NVML sees is polled by a thread every ~1 ms; each change of the counter is one
 * sample (the counter in J, the time it was first seen on the meter's clock). Two consecutive
 * samples bound a window (~100 ms on an H100) whose energy is exact to the counter's mJ.
 *
 * collect_energy_open starts the meter on clock_ns (NULL: CLOCK_MONOTONIC; the injection library
 * passes collect_timestamp_ns, the Activity records' clock). RK_OK; RK_ENODATA with why (one
 * line: no NVML, no energy counter, no permission), *out NULL; RK_ENOMEM.
 * collect_energy_stop ends the polling (idempotent); the samples are read after it:
 * collect_energy_samples gives GPU gpu's (0..collect_energy_ngpus), *s valid until close.
 * collect_energy_find: the index of the GPU whose NVML UUID ("GPU-...") is uuid, or -1.
 */
struct collect_energy_sample {
    uint64_t t_ns; /* when the change was seen, on the meter's clock */
    double j;      /* the counter then [J] */
};
struct collect_energy_meter;
int collect_energy_open(uint64_t (*clock_ns)(void), struct collect_energy_meter **out /* OUT */,
                        char *why /* OUT */, size_t len);
void collect_energy_stop(struct collect_energy_meter *m);
int collect_energy_ngpus(const struct collect_energy_meter *m);
const char *collect_energy_uuid(const struct collect_energy_meter *m, int gpu);
int collect_energy_find(const struct collect_energy_meter *m, const char *uuid);
int collect_energy_samples(const struct collect_energy_meter *m, int gpu,
                           const struct collect_energy_sample **s /* OUT */);
void collect_energy_close(struct collect_energy_meter *m);
/* Now on the clock of collect_launch's start_ns and end_ns (CUPTI's); 0 when unknown. */
uint64_t collect_timestamp_ns(void);

/* The energy between t0 and t1 [J] from samples s[0..n): linear inside a window, the first or
 * last window's power beyond the samples. NaN with fewer than 2 samples or t1 < t0. */
double collect_energy_between(const struct collect_energy_sample *s, int n, uint64_t t0,
                              uint64_t t1);

/* One kernel launch's GPU time, and the group (a kernel, an NVTX range) it counts towards. */
struct collect_energy_busy {
    uint64_t start_ns, end_ns;
    int group; /* 0..ngroups; others are skipped */
};
/* What a group of launches got. */
struct collect_energy_share {
    double energy_j;   /* the energy apportioned to it [J] */
    double busy_ns;    /* its launches' GPU time */
    double outside_ns; /* of it, the time outside every window (before the first change of the
                          counter or after the last): not apportioned */
    double windows;    /* windows' worth of time it covers: sum over windows of its time / the
                          window's length */
    long launches;
};
/* A group is read when its launches cover this many windows' worth of time ... */
#define COLLECT_ENERGY_MIN_WINDOWS 3.0
/* ... and at most this share of their time falls outside every window. */
#define COLLECT_ENERGY_MAX_OUTSIDE 0.05
/*
 * collect_energy_apportion: each window's energy to the launches b[0..nb) that ran in it, by
 * energy.c's two-level power model (idle power, the median of the windows without a launch, for
 * the time no launch ran; the rest to the launches by GPU time). out[0..ngroups) zeroed first;
 * *idle_w the idle power [W] (NaN: no window without a launch). RK_OK or RK_ENOMEM.
 */
int collect_energy_apportion(const struct collect_energy_sample *s, int n,
                             const struct collect_energy_busy *b, int nb,
                             struct collect_energy_share *out /* OUT */, int ngroups,
                             double *idle_w /* OUT */);
/* 1 when sh covers enough windows for a reading (the two limits above), else 0. */
int collect_energy_read(const struct collect_energy_share *sh);

/*
 * The file a profiled process leaves for `roofkit profile` (injection library -> parent): one
 * line per group read, "scope TAB uuid TAB energy_j TAB busy_ns TAB launches TAB windows TAB
 * name" (scope "kernel" or "nvtx"; "kshort" / "nshort": the kernels / NVTX paths of a GPU too
 * short for a reading, launches = how many, energy_j their apportioned sum; "busy": the
 * counter from a GPU's first launch's start to its last launch's end (busy_ns that time); "lost":
 * the process could not keep every launch, none apportioned; tabs and newlines in a name become
 * spaces).
 * collect_energy_write writes them (RK_OK or RK_EIO); collect_energy_load appends a file's
 * lines to *l (*n of them; malformed lines skipped): RK_OK, RK_EIO (no file), RK_ENOMEM.
 */
struct collect_energy_line {
    char scope[8];
    char uuid[96];
    double energy_j, busy_ns, windows;
    long launches;
    char *name; /* malloc'd */
};
int collect_energy_write(const char *path, const struct collect_energy_line *l, int n);
int collect_energy_load(const char *path, struct collect_energy_line **l /* IN/OUT */,
                        int *n /* IN/OUT */);
void collect_energy_lines_free(struct collect_energy_line *l, int n);

/*
 * The advice printed with the warning when counters are unavailable because of permissions,
 * and a short text for the other reasons: one line, lowercase.
 */
const char *collect_counter_advice(void);

#ifdef __cplusplus
}
#endif
#endif /* RK_COLLECT_H */
