/*
 * inject.c - libroofkit-inject.so, the CUDA injection library behind `roofkit profile`.
 *
 * The CUDA driver loads the library named by CUDA_INJECTION64_PATH at cuInit and calls its
 * InitializeInjection() (as CUPTI's cupti_trace_injection sample shows). We start
 * a collection session there and write each recorded launch, as soon as it is complete (its
 * counter batch decoded, or its Activity record in), as one measurement with its counters to a
 * journal file of this process (db.h "journal"); `roofkit profile`, which outlives the program
 * however it ends, stores the journals in the database. So a process killed with SIGKILL (the
 * OOM killer, a batch system's time limit), which runs no exit handler, keeps every launch that
 * was complete before it died; collect/session.c says how long a launch can stay incomplete.
 * Child processes inherit the environment and are injected the same way, each with a journal.
 *
 * Configuration comes from the environment that `roofkit profile` (cli/profile.c) sets:
 *   ROOFKIT_JOURNAL       the journal folder (required; without it we do nothing)
 *   ROOFKIT_CAPTURE       capture id the measurements belong to (required)
 *   ROOFKIT_FLUSH         seconds a launch may stay incomplete (collect_options'
 *                         flush_interval; unset: 0.5)
 *   ROOFKIT_NVTX          "1": record each launch's NVTX ranges (profile --nvtx); roofkit
 *                         profile also points NVTX_INJECTION64_PATH at this library, whose
 *                         InitializeInjectionNvtx2 makes it the program's NVTX tool (nvtx.c)
 *   ROOFKIT_NVTX_INCLUDE / ROOFKIT_NVTX_EXCLUDE   --nvtx-include / --nvtx-exclude expressions,
 *                         one per line (Nsight Compute's syntax, nvtx.c)
 *   ROOFKIT_FROM_START    "off": record only between cu(da)ProfilerStart and Stop
 *   ROOFKIT_METRICS       comma-separated names, "none", or empty for the default set
 *   ROOFKIT_KERNEL        regex on kernel names
 *   ROOFKIT_KERNEL_NAME   --kernel-name: an exact name, or "regex:EXPR" (common/kname.h)
 *   ROOFKIT_KERNEL_BASE   --kernel-name-base: function (unset or empty), demangled or mangled
 *   ROOFKIT_KERNEL_ID     --kernel-id: "::[regex:]NAME:INVOCATION", Nsight Compute's syntax
 *                         (profile sets these three; ROOFKIT_KERNEL, on the mangled or the
 *                         demangled name, is the older form, kept for scripts)
 *   ROOFKIT_LAUNCH_SKIP / ROOFKIT_LAUNCH_COUNT   launch window, per process
 *   ROOFKIT_STATUS        file to which each process appends one status line:
 *                         pid TAB mode TAB launches TAB with-counters TAB passes TAB
 *                         t_enable TAB t_launch TAB t_decode TAB t_flush TAB t_store TAB
 *                         t_process TAB unmatched TAB reason   (times in seconds, collect.h)
 *   ROOFKIT_DUMP_DIR      where to write raw counter data images (golden-test capture)
 *   ROOFKIT_ENERGY        profile --energy: a folder; NVML's energy counter is polled while the
 *                         program runs (energy.c) and, in timing mode, the energy of each
 *                         kernel and NVTX range whose launches cover enough of the counter's
 *                         windows goes to c<CAPTURE>-<PID>.energy there at exit
 * and, for application replay (one run of the program per pass group, collect.h):
 *   ROOFKIT_REPLAY        "G/N": this is run G of N (0-based)
 *   ROOFKIT_REPLAY_DIR    the runs' files: runG-procP.txt, and seqG, the counter that numbers
 *                         the CUDA processes of run G in the order they start
 *   ROOFKIT_RAW           the raw metrics this run collects (comma-separated)
 * Every run but the last writes its file instead of a journal, a launch at a time; the last
 * loads the files of the same process number when it starts and joins their values into each
 * launch before writing it.
 *
 * Rules: never change what the program does. We print nothing (roofkit profile reports), never
 * exit, and every failure only loses measurements. A process that forked from an injected one
 * without exec does not write the parent's launches again (pid check) and closes its copy of
 * the journal, so that the journal's lock (db.h) ends with the process that writes it.
 */
#define _GNU_SOURCE
#include "collect.h"
#include "common.h"
#include "db.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The entry point the CUDA driver calls; the only symbol the library exports. */
int InitializeInjection(void) __attribute__((visibility("default")));
/* The entry point NVTX calls when NVTX_INJECTION64_PATH names this library (nvtxInit.h). */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
    __attribute__((visibility("default")));

static struct collect_session *session;
static pid_t session_pid;
static double t_init; /* when InitializeInjection ran */

static char **metric_names;
static int nmetric_names;
static char **raw_names; /* ROOFKIT_RAW */
static int nraw_names;
static int replay_run = -1, replay_runs; /* ROOFKIT_REPLAY, -1 without */
static long replay_proc;                 /* this process's number in its run */

/* Where complete launches go (emit_launch), all under the session's lock. */
static int out_fd = -1;    /* the journal, or an early run's replay file */
static int out_failed;     /* a write failed: the rest is lost, said in the status */
static char out_mode[600]; /* the last "mode" note written */
static struct collect_replay_src **replay_src; /* the last run: earlier runs' files */
static long replay_unmatched;                  /* launches that found no partner in one of them */
static double t_emit; /* seconds spent writing launches (status: t_store) */
static struct collect_nvtx_filter *nvtx_filter; /* ROOFKIT_NVTX_INCLUDE / _EXCLUDE */

/* profile --energy (ROOFKIT_ENERGY): the meter, and each timed launch's GPU time with the
 * groups it counts towards (a kernel of a GPU, an NVTX path of a GPU), kept until exit. */
static struct collect_energy_meter *meter;
struct e_launch {
    uint64_t start, end;
    int kernel, nvtx; /* indices into e_names; nvtx -1: in no range */
};
struct e_name {
    char *name;
    unsigned device;
    int nvtx; /* 1: an NVTX path, 0: a kernel */
};
static struct e_launch *e_launch;
static long e_nlaunch, e_cap;
static struct e_name *e_names;
static int e_nnames;
static int e_lost; /* a launch could not be kept (E_MAX_LAUNCHES, memory): no kernel figures */
#define E_MAX_LAUNCHES (1L << 23) /* 8M launches, 200 MB */

static long env_long(const char *name)
{
    const char *v = getenv(name);
    long x = 0;
    return v && *v && rk_parse_long(v, &x) == RK_OK && x > 0 ? x : 0;
}

/* Frees a list of split_metrics (n < 0: "none": nothing to free). */
static void free_names(char ***names, int n)
{
    if (n > 0)
        rk_free_name_list(*names, n);
    *names = NULL;
}

/* Splits "a,b,c" (common's rk_parse_name_list); unset or empty gives n = 0, "none" n = -1. */
static int split_metrics(const char *list, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!list || !*list)
        return RK_OK;
    if (strcmp(list, "none") == 0) {
        *n = -1;
        return RK_OK;
    }
    return rk_parse_name_list(list, out, n);
}

/*
 * The UUID of the program's CUDA device `ordinal` ("GPU-...", as nvidia-smi prints it) through
 * the driver the program loaded, so that `roofkit profile` can store the GPU its launches ran
 * on; "" when it cannot be read (the launch is stored without it). Read once per device.
 */
static const char *device_uuid(unsigned ordinal)
{
    enum { MAX_DEVICES = 64 };
    static char uuids[MAX_DEVICES][48];
    static int tried[MAX_DEVICES];
    int (*get)(int *, int) = NULL;
    int (*get_uuid)(unsigned char *, int) = NULL;
    unsigned char bytes[16];
    int dev;
    void *cuda, *sym;

    if (ordinal >= MAX_DEVICES)
        return "";
    if (tried[ordinal])
        return uuids[ordinal];
    tried[ordinal] = 1;
    if (!(cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)))
        return "";
    /* dlsym returns an object pointer; copied, not cast, into the function pointers (ISO C) */
    if ((sym = dlsym(cuda, "cuDeviceGet")) != NULL)
        memcpy(&get, &sym, sizeof get);
    if ((sym = dlsym(cuda, "cuDeviceGetUuid_v2")) != NULL)
        memcpy(&get_uuid, &sym, sizeof get_uuid);
    if (get && get_uuid && get(&dev, (int)ordinal) == 0 && get_uuid(bytes, dev) == 0)
        rk_gpu_uuid(bytes, uuids[ordinal], sizeof uuids[ordinal]);
    dlclose(cuda);
    return uuids[ordinal];
}

/* Launch l as one measurement with its counters, appended to the journal out_fd. */
static int journal_launch(const struct collect_launch *l, const char *mode)
{
    struct rk_buf params = RK_BUF_INIT;
    rk_buf_puts(&params, "{");
    rk_json_key_str(&params, "mangled", l->name);
    rk_buf_printf(&params,
                  ",\"pid\":%ld,\"device\":%u,\"context\":%u,\"stream\":%u,\"cluster\":[%u,%u,%u],"
                  "\"local_mem_per_thread\":%d,",
                  (long)getpid(), l->device, l->context, l->stream, l->cluster[0], l->cluster[1],
                  l->cluster[2], l->local_mem);
    rk_json_key_str(&params, "mode", mode);
    rk_buf_puts(&params, ",");
    rk_json_key_str(&params, "uuid", device_uuid(l->device));
    rk_buf_puts(&params, ",");
    rk_json_key_str(&params, "timed_by",
                    l->start_ns ? "activity"
                                : (isnan(l->duration_ns) ? "none" : "gpu__time_duration"));
    rk_buf_puts(&params, "}");
    if (params.oom) {
        rk_buf_release(&params);
        return RK_ENOMEM;
    }

    struct db_measurement m;
    memset(&m, 0, sizeof m);
    m.kernel = l->demangled ? l->demangled : l->name;
    m.params = params.s;
    for (int i = 0; i < 3; i++) {
        m.grid[i] = (int)l->grid[i];
        m.block[i] = (int)l->block[i];
    }
    m.registers = l->registers;
    m.smem_static = l->static_smem;
    m.smem_dynamic = l->dynamic_smem;
    m.reps = 1;
    m.time_min_ns = m.time_median_ns = m.time_max_ns = l->duration_ns;
    m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = NAN;
    m.verified = -1;
    m.rel_error = NAN;
    m.cache_state = "warm"; /* as the program left it: profile flushes no cache */
    m.source = "profile";
    m.launch_index = (int64_t)l->seq;
    m.correlation_id = l->correlation;
    m.nvtx = l->nvtx;

    struct db_metric *mv = NULL;
    int nm = 0;
    if (l->has_counters && l->nvalues > 0) {
        if (!(mv = calloc((size_t)l->nvalues, sizeof *mv))) {
            rk_buf_release(&params);
            return RK_ENOMEM;
        }
        for (int i = 0; i < l->nvalues; i++) {
            const struct collect_value *v = &l->values[i];
            mv[nm].name = v->alias ? v->alias : v->raw;
            mv[nm].raw_name = v->raw;
            mv[nm].value = v->is_null ? NAN : v->value;
            mv[nm].unit = v->unit;
            nm++;
        }
    }
    int rc = db_journal_append(out_fd, &m, mv, nm);
    free(mv);
    rk_buf_release(&params);
    return rc;
}

static void write_status(const struct collect_result *r, long stored, double t_store,
                         long unmatched)
{
    const char *path = getenv("ROOFKIT_STATUS");
    if (!path || !*path)
        return;
    long with_counters = r->nemitted_counters;
    char line[1024];
    int n = snprintf(
        line, sizeof line, "%ld\t%s\t%ld\t%ld\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%ld\t%s\n",
        (long)getpid(), collect_mode_name(r->mode), stored, with_counters, r->passes, r->t_enable,
        r->t_launch, r->t_decode, r->t_flush, t_store, rk_now_s() - t_init, unmatched, r->reason);
    if (n < 0)
        return;
    if (n >= (int)sizeof line)
        n = (int)sizeof line - 1, line[n - 1] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return;
    /* One write with O_APPEND: lines of concurrent processes do not interleave. */
    if (write(fd, line, (size_t)n) != n) {
        /* nothing more to do: roofkit profile will miss this process's line */
    }
    close(fd);
}

/* Waits for the work queued on the current context: records of unfinished kernels would be lost. */
static void sync_device(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!cuda)
        return;
    int (*ctx_sync)(void) = NULL;
    /* POSIX's way to store dlsym's object pointer into a function pointer. */
    *(void **)&ctx_sync = dlsym(cuda, "cuCtxSynchronize");
    if (ctx_sync)
        ctx_sync();
    dlclose(cuda);
}

/* The next number from the counter file `path` (0 for the first process), under a lock. */
static long next_number(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    long n = -1;
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX) == 0) {
        char buf[32] = "";
        ssize_t got = read(fd, buf, sizeof buf - 1);
        n = got > 0 ? strtol(buf, NULL, 10) : 0;
        int w = snprintf(buf, sizeof buf, "%ld\n", n + 1);
        if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, buf, (size_t)w) != w)
            n = -1;
        flock(fd, LOCK_UN);
    }
    close(fd);
    return n;
}

static void replay_path(char *buf, size_t size, int run)
{
    snprintf(buf, size, "%s/run%d-proc%ld.txt", getenv("ROOFKIT_REPLAY_DIR"), run, replay_proc);
}

/* Application replay: ROOFKIT_REPLAY "G/N" and this process's number. 0 when not replaying. */
static int replay_setup(void)
{
    const char *v = getenv("ROOFKIT_REPLAY"), *dir = getenv("ROOFKIT_REPLAY_DIR");
    int g = -1, n = 0;
    char path[4096];
    if (!v || !dir || !*dir || sscanf(v, "%d/%d", &g, &n) != 2 || g < 0 || n < 2 || g >= n)
        return 0;
    snprintf(path, sizeof path, "%s/seq%d", dir, g);
    if ((replay_proc = next_number(path)) < 0)
        return 0;
    replay_run = g;
    replay_runs = n;
    return 1;
}

/* The last run: the earlier runs' files of this process, loaded once (collect.h). */
static void replay_load(void)
{
    if (!(replay_src = calloc((size_t)replay_runs, sizeof *replay_src)))
        return;
    for (int g = 0; g < replay_runs - 1; g++) {
        char path[4096];
        long malformed = 0;
        replay_path(path, sizeof path, g);
        if (collect_replay_load(path, &replay_src[g], &malformed) != RK_OK)
            replay_src[g] = NULL; /* that run left nothing for this process */
        replay_unmatched += malformed;
    }
}

/* The last run: the earlier runs' values of launch l joined into it. */
static void replay_join(const struct collect_plan *plan, struct collect_launch *l)
{
    for (int g = 0; replay_src && g < replay_runs - 1; g++)
        if (!replay_src[g] || collect_replay_join(replay_src[g], plan, l) != RK_OK)
            replay_unmatched++;
}

/* Where the launches of this process go, opened at the first one. RK_OK or RK_EIO. */
static int out_open(const struct collect_plan *plan)
{
    char path[4096];
    if (out_fd >= 0)
        return RK_OK;
    if (out_failed)
        return RK_EIO;
    int rc;
    if (replay_run >= 0 && replay_run < replay_runs - 1) {
        replay_path(path, sizeof path, replay_run);
        rc = collect_replay_open(path, plan, &out_fd);
    } else {
        rc = db_journal_create(getenv("ROOFKIT_JOURNAL"), env_long("ROOFKIT_CAPTURE"), path,
                               sizeof path, &out_fd);
    }
    out_failed = rc != RK_OK;
    return rc;
}

/* The index of (name, device, nvtx) in e_names, added when new; -1 when out of memory. */
static int e_group(const char *name, unsigned device, int nvtx)
{
    for (int i = e_nnames - 1; i >= 0; i--)
        if (e_names[i].device == device && e_names[i].nvtx == nvtx &&
            strcmp(e_names[i].name, name) == 0)
            return i;
    struct e_name *grown = realloc(e_names, (size_t)(e_nnames + 1) * sizeof *grown);
    if (!grown)
        return -1;
    e_names = grown;
    if (!(e_names[e_nnames].name = strdup(name)))
        return -1;
    e_names[e_nnames].device = device;
    e_names[e_nnames].nvtx = nvtx;
    return e_nnames++;
}

/* Keeps a timed launch's GPU time for the energy apportioning at exit. */
static void energy_note(const struct collect_launch *l)
{
    if (!meter || !l->start_ns || l->end_ns <= l->start_ns)
        return;
    if (e_lost)
        return;
    if (e_nlaunch == e_cap) {
        long cap = e_cap ? 2 * e_cap : 4096;
        struct e_launch *grown =
            cap <= E_MAX_LAUNCHES ? realloc(e_launch, (size_t)cap * sizeof *grown) : NULL;
        if (!grown) { /* a launch missing would under-count its kernel: no kernel figures */
            e_lost = 1;
            return;
        }
        e_launch = grown;
        e_cap = cap;
    }
    struct e_launch *e = &e_launch[e_nlaunch];
    e->start = l->start_ns;
    e->end = l->end_ns;
    e->kernel = e_group(l->demangled ? l->demangled : l->name, l->device, 0);
    e->nvtx = l->nvtx ? e_group(l->nvtx, l->device, 1) : -1;
    if (e->kernel >= 0)
        e_nlaunch++;
}

/*
 * At exit: the energy of each kernel and NVTX path, per GPU, apportioned from the meter's
 * windows (collect_energy_apportion), written for roofkit profile (collect_energy_write): the
 * groups read (collect_energy_read) and, as scope "short", how many were not with their energy.
 */
static void energy_finish(void)
{
    struct collect_energy_line *lines = NULL;
    struct collect_energy_busy *busy = NULL;
    struct collect_energy_share *sh = NULL;
    int nlines = 0;
    collect_energy_stop(meter);
    if (e_lost) { /* said once by roofkit profile; nothing apportioned from a partial list */
        struct collect_energy_line x = {"lost", "-", 0, 0, 0, e_nlaunch, NULL};
        char path[4096];
        snprintf(path, sizeof path, "%s/c%ld-%ld.energy", getenv("ROOFKIT_ENERGY"),
                 env_long("ROOFKIT_CAPTURE"), (long)getpid());
        collect_energy_write(path, &x, 1);
        goto out;
    }
    if (e_nnames == 0 || !(lines = calloc((size_t)e_nnames + 192, sizeof *lines)) ||
        !(busy = malloc((size_t)e_nlaunch * 2 * sizeof *busy)) ||
        !(sh = calloc((size_t)e_nnames, sizeof *sh)))
        goto out;
    for (unsigned dev = 0; dev < 64; dev++) {
        const char *uuid = NULL;
        const struct collect_energy_sample *smp = NULL;
        double idle_w;
        int nb, ns, gpu, any = 0;
        struct collect_energy_line skipped;
        for (int i = 0; i < e_nnames && !any; i++)
            any = e_names[i].device == dev;
        if (!any || !(uuid = device_uuid(dev)) || (gpu = collect_energy_find(meter, uuid)) < 0)
            continue;
        ns = collect_energy_samples(meter, gpu, &smp);
        {
            /* "busy": the counter from the first launch's start to the last one's end, what the
             * kernels' figures are to add up to with the gaps between them (a check) */
            uint64_t first = UINT64_MAX, last = 0;
            for (long i = 0; i < e_nlaunch; i++) {
                const struct e_launch *e = &e_launch[i];
                if (e_names[e->kernel].device != dev)
                    continue;
                first = e->start < first ? e->start : first;
                last = e->end > last ? e->end : last;
            }
            double j = last > first ? collect_energy_between(smp, ns, first, last) : NAN;
            if (isfinite(j)) {
                static char busy_name[] = "first launch to last";
                struct collect_energy_line *x = &lines[nlines++];
                memset(x, 0, sizeof *x);
                snprintf(x->scope, sizeof x->scope, "busy");
                snprintf(x->uuid, sizeof x->uuid, "%s", uuid);
                x->energy_j = j;
                x->busy_ns = (double)(last - first);
                x->name = busy_name;
            }
        }
        /* kernels and NVTX paths apportioned apart: each launch once in either set */
        for (int pass = 0; pass < 2; pass++) {
            nb = 0;
            for (long i = 0; i < e_nlaunch; i++) {
                const struct e_launch *e = &e_launch[i];
                int group = pass ? e->nvtx : e->kernel;
                if (group >= 0 && e_names[e->kernel].device == dev)
                    busy[nb++] = (struct collect_energy_busy){e->start, e->end, group};
            }
            if (nb == 0)
                continue;
            if (collect_energy_apportion(smp, ns, busy, nb, sh, e_nnames, &idle_w) != RK_OK)
                goto out;
            memset(&skipped, 0, sizeof skipped);
            for (int g = 0; g < e_nnames; g++) {
                if (e_names[g].device != dev || e_names[g].nvtx != pass || sh[g].launches == 0)
                    continue;
                if (!collect_energy_read(&sh[g])) {
                    skipped.launches++;
                    skipped.energy_j += sh[g].energy_j;
                    skipped.busy_ns += sh[g].busy_ns;
                    continue;
                }
                struct collect_energy_line *x = &lines[nlines++];
                snprintf(x->scope, sizeof x->scope, "%s", pass ? "nvtx" : "kernel");
                snprintf(x->uuid, sizeof x->uuid, "%s", uuid);
                x->energy_j = sh[g].energy_j;
                x->busy_ns = sh[g].busy_ns;
                x->windows = sh[g].windows;
                x->launches = sh[g].launches;
                x->name = e_names[g].name;
            }
            if (skipped.launches > 0 && nlines < e_nnames + 192) {
                /* launches: how many groups were too short for a reading */
                struct collect_energy_line *x = &lines[nlines++];
                *x = skipped;
                snprintf(x->scope, sizeof x->scope, "%s", pass ? "nshort" : "kshort");
                snprintf(x->uuid, sizeof x->uuid, "%s", uuid);
                static char kernels[] = "kernels", paths[] = "NVTX paths";
                x->name = pass ? paths : kernels;
            }
        }
    }
    if (nlines > 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/c%ld-%ld.energy", getenv("ROOFKIT_ENERGY"),
                 env_long("ROOFKIT_CAPTURE"), (long)getpid());
        collect_energy_write(path, lines, nlines); /* a failure loses the per-kernel figures */
    }
out:
    free(lines); /* names point into e_names */
    free(busy);
    free(sh);
    collect_energy_close(meter);
    meter = NULL;
    for (int i = 0; i < e_nnames; i++)
        free(e_names[i].name);
    free(e_names);
    free(e_launch);
    e_names = NULL;
    e_launch = NULL;
    e_nnames = 0;
    e_nlaunch = e_cap = 0;
}

/* Session's emit: a complete launch, written at once (file header). */
static void emit_launch(void *arg, const struct collect_plan *plan, struct collect_launch *l)
{
    (void)arg;
    double t0 = rk_now_s();
    if (out_open(plan) != RK_OK)
        return;
    int rc;
    if (replay_run >= 0 && replay_run < replay_runs - 1) {
        rc = collect_replay_append(out_fd, plan, l);
    } else {
        const char *reason = "";
        enum collect_mode mode =
            session ? collect_session_mode(session, &reason) : COLLECT_MODE_COUNTERS;
        char note[600];
        snprintf(note, sizeof note, "%s%s%s", collect_mode_name(mode), *reason ? ": " : "", reason);
        if (strcmp(note, out_mode) != 0 && db_journal_note(out_fd, "mode", note) == RK_OK)
            snprintf(out_mode, sizeof out_mode, "%s", note);
        if (replay_run >= 0 && mode == COLLECT_MODE_COUNTERS)
            replay_join(plan, l);
        rc = journal_launch(l, collect_mode_name(mode));
        energy_note(l);
    }
    if (rc != RK_OK) { /* a full disk: the next writes would fail alike */
        close(out_fd);
        out_fd = -1;
        out_failed = 1;
    }
    t_emit += rk_now_s() - t0;
}

/* A child forked without exec keeps running the parent's code but is not the journal's
 * writer: its copy closed, the journal's lock ends with the parent (db.h). */
static void after_fork_child(void)
{
    meter = NULL; /* the parent's thread does not run here: its samples are the parent's */
    if (out_fd >= 0)
        close(out_fd);
    out_fd = -1;
    out_failed = 1;
}

static void finish(void)
{
    struct collect_result *r = NULL;
    if (!session || getpid() != session_pid)
        return;
    sync_device();
    struct collect_session *s = session;
    if (collect_session_end(s, &r) != RK_OK) { /* what was complete is in the journal already */
        session = NULL;
        return;
    }
    session = NULL;
    long unmatched = 0;
    if (replay_src) {
        unmatched = replay_unmatched;
        for (int g = 0; g < replay_runs - 1; g++)
            if (replay_src[g])
                unmatched += collect_replay_unused(replay_src[g]);
    }
    int early = replay_run >= 0 && replay_run < replay_runs - 1;
    if (out_fd >= 0 && !early)
        db_journal_note(out_fd, "end", "");
    if (out_fd >= 0)
        close(out_fd);
    out_fd = -1;
    if (meter)
        energy_finish();
    write_status(r, out_failed ? 0 : early ? r->nemitted_counters : r->nemitted, t_emit, unmatched);
    collect_result_free(r);
    collect_nvtx_filter_free(nvtx_filter);
    nvtx_filter = NULL;
    for (int g = 0; replay_src && g < replay_runs - 1; g++)
        collect_replay_free(replay_src[g]);
    free(replay_src);
    replay_src = NULL;
    free_names(&metric_names, nmetric_names);
    free_names(&raw_names, nraw_names);
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    return collect_nvtx_attach(get_export_table);
}

/* The lines of environment variable name (malloc'd copies in *out, *n of them). */
static int env_lines(const char *name, char ***out, int *n)
{
    const char *v = getenv(name);
    *out = NULL;
    *n = 0;
    for (const char *p = v; p && *p;) {
        size_t len = strcspn(p, "\n");
        char **grown = realloc(*out, (size_t)(*n + 1) * sizeof **out);
        if (!grown || !(grown[*n] = strndup(p, len))) {
            *out = grown ? grown : *out;
            rk_free_name_list(*out, *n);
            *out = NULL;
            *n = 0;
            return RK_ENOMEM;
        }
        *out = grown;
        (*n)++;
        p += len + (p[len] == '\n');
    }
    return RK_OK;
}

/* ROOFKIT_NVTX, ROOFKIT_NVTX_INCLUDE, ROOFKIT_NVTX_EXCLUDE and ROOFKIT_FROM_START into opt. */
static int nvtx_setup(struct collect_options *opt)
{
    char **inc = NULL, **exc = NULL;
    int ninc = 0, nexc = 0, rc;
    const char *on = getenv("ROOFKIT_NVTX"), *from = getenv("ROOFKIT_FROM_START");
    opt->nvtx = on && strcmp(on, "1") == 0;
    opt->from_start_off = from && strcmp(from, "off") == 0;
    if ((rc = env_lines("ROOFKIT_NVTX_INCLUDE", &inc, &ninc)) == RK_OK &&
        (rc = env_lines("ROOFKIT_NVTX_EXCLUDE", &exc, &nexc)) == RK_OK && (ninc || nexc) &&
        (rc = collect_nvtx_filter_new((const char *const *)inc, ninc, (const char *const *)exc,
                                      nexc, &nvtx_filter)) == RK_OK)
        opt->nvtx_filter = nvtx_filter;
    rk_free_name_list(inc, ninc);
    rk_free_name_list(exc, nexc);
    return rc;
}

int InitializeInjection(void)
{
    struct collect_options opt;
    const char *journal = getenv("ROOFKIT_JOURNAL");
    if (session || !journal || !*journal || env_long("ROOFKIT_CAPTURE") <= 0)
        return 1;
    t_init = rk_now_s();
    /* Messages from roofkit's modules must not reach the program's stderr. */
    rk_set_quiet(1);
    memset(&opt, 0, sizeof opt);
    if (split_metrics(getenv("ROOFKIT_METRICS"), &metric_names, &nmetric_names) != RK_OK)
        return 1;
    opt.metrics = (const char *const *)metric_names;
    opt.nmetrics = nmetric_names;
    const char *re = getenv("ROOFKIT_KERNEL");
    opt.kernel_regex = re && *re ? re : NULL;
    opt.kernel_name = getenv("ROOFKIT_KERNEL_NAME");
    opt.kernel_base = getenv("ROOFKIT_KERNEL_BASE");
    opt.kernel_id = getenv("ROOFKIT_KERNEL_ID");
    opt.launch_skip = env_long("ROOFKIT_LAUNCH_SKIP");
    opt.launch_count = env_long("ROOFKIT_LAUNCH_COUNT");
    opt.max_ranges = (int)env_long("ROOFKIT_MAX_RANGES");
    const char *dump = getenv("ROOFKIT_DUMP_DIR");
    opt.dump_dir = dump && *dump ? dump : NULL;
    opt.silent = 1;
    if (replay_setup() && nmetric_names >= 0) {
        if (split_metrics(getenv("ROOFKIT_RAW"), &raw_names, &nraw_names) != RK_OK)
            return 1;
        opt.only_raw = (const char *const *)raw_names;
        opt.nonly_raw = nraw_names > 0 ? nraw_names : 0;
        if (replay_run == replay_runs - 1)
            replay_load();
    }
    opt.emit = emit_launch;
    const char *energy = getenv("ROOFKIT_ENERGY");
    if (energy && *energy && (replay_run < 0 || replay_run == replay_runs - 1)) {
        char why[200];
        if (collect_energy_open(collect_timestamp_ns, &meter, why, sizeof why) != RK_OK)
            meter = NULL; /* roofkit profile said why already: it read the counter first */
    }
    if (nvtx_setup(&opt) != RK_OK)
        return 1;
    const char *flush = getenv("ROOFKIT_FLUSH");
    double interval = 0;
    if (flush && *flush && rk_parse_double(flush, &interval) == RK_OK)
        opt.flush_interval = interval;
    if (collect_session_begin(&opt, &session) != RK_OK) {
        session = NULL;
        return 1;
    }
    session_pid = getpid();
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(finish);
    return 1;
}
