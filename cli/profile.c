/*
 * profile.c - `roofkit profile -- PROGRAM [ARGS...]`: runs PROGRAM with roofkit's CUDA injection
 * library (collect/inject.c) and stores every kernel launch it makes, with counters, as
 * measurements of one capture.
 *
 * What happens, in order; nothing is written before the command line is known to be good:
 *   1. options, the metric list (aliases or CUPTI names, checked with CUPTI's host API for the
 *      GPU at hand, or GH100 without one), the kernel filters (Nsight Compute's --kernel-name,
 *      --kernel-name-base and --kernel-id, common/kname.h) and PROGRAM on PATH are checked;
 *   2. the database is opened and a `profile` capture begun;
 *   3. PROGRAM runs with CUDA_INJECTION64_PATH and ROOFKIT_* set (inject.c lists them): the
 *      driver loads the library into it and into every child process that uses CUDA, and each
 *      process appends each launch, once complete, to a journal of its own; when PROGRAM has
 *      ended, whatever way (SIGKILL included), the journals are stored in the database
 *      (profile_journal.c), and a program killed by a signal leaves an interrupted capture
 *      (failed for a crash) whose note says how many launches were kept;
 *   4. the processes' status lines (one per process, in a temporary file) say which mode ran;
 *      one warning says why counters were missing and how to enable them, and the capture's
 *      note keeps it;
 *   5. the capture's kernels, summed up per name as `nsys stats` does (analysis's
 *      analysis_kernel_summary), go to standard output: the top 10 as text, all of them with
 *      --format csv|json. `--summary` prints that table for a stored capture, running nothing.
 * --energy (profile_energy.c) reads NVML's energy counter around the stored run and, in timing
 * mode, lets the injection library apportion it to kernels and NVTX ranges: energy spans of the
 * capture, shown with the summary.
 * PROGRAM's standard streams are its own; roofkit only adds its lines on stderr. The exit code
 * is PROGRAM's (128 + N when signal N killed it).
 *
 * Application replay (--replay application, the default): when the metrics cost more than one
 * pass, they are split into single-pass groups (collect_plan_groups) and PROGRAM runs once per
 * group. Every run but the last is silent (standard input from /dev/null, output discarded)
 * and leaves its values in a temporary folder; the last run, the one the user sees, merges them
 * launch by launch and stores the measurements. Nothing is replayed inside a run, so no device
 * memory is saved or restored (CUPTI's kernel replay does that for each pass after the first),
 * a group of hardware counters runs under user replay (~1.3 ms a launch on the H100 instead of
 * ~41 ms), and each kernel's counters start from the caches the program left. The
 * price: PROGRAM runs N times, and a program whose launches differ between runs loses the
 * other runs' counters of the launches that differ (a warning says how many; --replay kernel
 * runs it once).
 */
#define _GNU_SOURCE
#include "analysis.h"
#include "cli.h"
#include "collect.h"
#include "common.h"
#include "db.h"
#include "gpu.h"
#include "profile_energy.h"
#include "profile_journal.h"
#include "profile_nvtx.h"
#include "kname.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#define INJECT_NAME "libroofkit-inject.so"

/* PROGRAM as execvp would find it: a path with '/', else the first executable on PATH. */
static int find_program(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char *copy = strdup(path);
    int found = 0;
    for (char *save = NULL, *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char full[PATH_MAX];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", *dir ? dir : ".", prog);
        found = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* The injection library: $ROOFKIT_INJECT, else beside roofkit, its lib/ or the build tree. */
static int find_injection(char *out, size_t size)
{
    const char *env = getenv("ROOFKIT_INJECT");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return access(out, R_OK) == 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    static const char *const rel[] = {"", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu",
                                      "/../collect"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        int w = snprintf(out, size, "%s%s/%s", exe, rel[i], INJECT_NAME);
        if (w > 0 && (size_t)w < size && access(out, R_OK) == 0)
            return 1;
    }
    return 0;
}

/*
 * Checks --metrics (NULL = default set) against the GPU at hand (GH100 without one) and returns in
 * *checked the names left after dropping those the chip lacks (malloc'd; "" for the default set,
 * "none" for none).
 */
static int check_metrics(const char *list, char **checked)
{
    char **names = NULL;
    int n = 0, rc;
    struct collect_plan *plan = NULL;
    *checked = NULL;
    if (list && strcmp(list, "none") == 0)
        return (*checked = strdup("none")) ? RK_OK : rk_error(RK_ENOMEM, "out of memory");
    if (list && rk_parse_name_list(list, &names, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--metrics' needs a comma-separated list of names");
    /* The default set needs no check here (the ~0.3 s host-API start): the injection library
     * drops what the chip lacks, with the rest still collected. */
    if ((rc = collect_plan_new((const char *const *)names, n, &plan)) == RK_OK &&
        (!list || (rc = collect_plan_check(plan, NULL)) == RK_OK)) {
        size_t len = 1;
        for (int i = 0; i < plan->nout; i++)
            len += strlen(plan->out[i].alias ? plan->out[i].alias : plan->out[i].raw) + 1;
        if (!(*checked = calloc(1, len))) {
            rc = rk_error(RK_ENOMEM, "out of memory");
        } else if (list) {
            for (int i = 0; i < plan->nout; i++) {
                if (i)
                    strcat(*checked, ",");
                strcat(*checked, plan->out[i].alias ? plan->out[i].alias : plan->out[i].raw);
            }
        }
    }
    collect_plan_free(plan);
    rk_free_name_list(names, n);
    return rc;
}

/* A status line of one process (collect/inject.c). */
struct proc_status {
    long pid, launches, with_counters, unmatched;
    int passes;
    double t[6]; /* enable, launch calls, decode, flush, store, whole process (s) */
    char mode[16];
    char reason[1024];
};

static int read_status(const char *path, struct proc_status **out, int *n)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    *out = NULL;
    *n = 0;
    if (!f)
        return RK_OK;
    while (fgets(line, sizeof line, f)) {
        struct proc_status st;
        memset(&st, 0, sizeof st);
        line[strcspn(line, "\n")] = '\0';
        if (sscanf(line, "%ld\t%15[^\t]\t%ld\t%ld\t%d\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%ld", &st.pid,
                   st.mode, &st.launches, &st.with_counters, &st.passes, &st.t[0], &st.t[1],
                   &st.t[2], &st.t[3], &st.t[4], &st.t[5], &st.unmatched) != 12)
            continue;
        const char *r = line;
        for (int tabs = 0; *r && tabs < 12; r++)
            tabs += *r == '\t';
        snprintf(st.reason, sizeof st.reason, "%s", r);
        struct proc_status *p = realloc(*out, (size_t)(*n + 1) * sizeof *p);
        if (!p)
            break;
        *out = p;
        (*out)[(*n)++] = st;
    }
    fclose(f);
    return RK_OK;
}

/* Runs argv with the injection environment; *status gets waitpid's status. quiet: standard
 * input from /dev/null, output discarded (the silent runs of application replay). */
static int run_program(char **argv, char *const *env_kv, int nenv, int quiet, int *status)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return rk_error(RK_EFAIL, "cannot create a pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return rk_error(RK_EFAIL, "cannot start '%s': %s", argv[0], strerror(errno));
    }
    if (pid == 0) {
        for (int i = 0; i + 1 < nenv * 2; i += 2)
            setenv(env_kv[i], env_kv[i + 1], 1);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int null = quiet ? open("/dev/null", O_RDWR) : -1;
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
            close(null);
        }
        execvp(argv[0], argv);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) != (ssize_t)sizeof e) {
            /* the parent then sees an empty pipe and reports no exec error */
        }
        _exit(127);
    }
    close(pipefd[1]);
    int e = 0;
    ssize_t got;
    while ((got = read(pipefd[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(pipefd[0]);
    /* SIGINT from a terminal reaches the program too (same process group); a signal sent to
     * roofkit alone (a job scheduler's SIGTERM) is passed on once, so the program ends as it
     * would without roofkit and its recorded launches are stored. The signals are blocked and
     * taken with sigwaitinfo, so one that comes before the wait starts is not lost: a blocking
     * waitpid would have slept through it. SIGCHLD is blocked too, so it stays pending (its
     * default action would discard it) and wakes the wait when the program ends. */
    sigset_t wake, old;
    sigemptyset(&wake);
    sigaddset(&wake, SIGINT);
    sigaddset(&wake, SIGTERM);
    sigaddset(&wake, SIGCHLD);
    sigprocmask(SIG_BLOCK, &wake, &old);
    int forwarded = 0, rc = RK_OK;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            rc = rk_error(RK_EFAIL, "cannot wait for '%s': %s", argv[0], strerror(errno));
            break;
        }
        if (rk_interrupted && !forwarded) {
            kill(pid, rk_interrupted);
            forwarded = 1;
        }
        int sig = sigwaitinfo(&wake, NULL);
        if (sig == SIGINT || sig == SIGTERM)
            rk_interrupted = sig;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc != RK_OK)
        return rc;
    if (got == (ssize_t)sizeof e)
        return rk_error(RK_EUSAGE, "cannot run '%s': %s", argv[0], strerror(e));
    return RK_OK;
}

/* Prints the summary, the one warning, and keeps the mode in the capture's note. st[0..nst)
 * are the statuses of the run whose launches were stored; all[0..nall) those of every run
 * (the same for one run), whose times are summed; runs > 1 for application replay. Returns
 * the launches stored. */
static long report(struct rk_ctx *ctx, int64_t capture, const struct proc_status *st, int nst,
                   const struct proc_status *all, int nall, int runs, int counters_wanted)
{
    long launches = 0, with_counters = 0, unmatched = 0;
    int first_bad = -1, nbad = 0, passes = 0;
    double t[6] = {0};
    char note[1600], times[256], how[96];
    for (int i = 0; i < nall; i++) {
        int bad = strcmp(all[i].mode, "counters") != 0;
        nbad += bad;
        if (bad && first_bad < 0)
            first_bad = i;
        for (int k = 0; k < 6; k++)
            t[k] += all[i].t[k];
    }
    for (int i = 0; i < nst; i++) {
        launches += st[i].launches;
        with_counters += st[i].with_counters;
        unmatched += st[i].unmatched;
        if (st[i].passes > passes)
            passes = st[i].passes;
    }
    if (runs > 1)
        snprintf(how, sizeof how, "application replay: %d runs of the program, one per pass", runs);
    else
        snprintf(how, sizeof how, "%d replay pass%s each", passes, passes == 1 ? "" : "es");
    /* Where the time went, summed over processes: what `profile` costs beyond the program. */
    snprintf(times, sizeof times,
             "time: %.2f s in launch calls (replay), %.2f s enabling counters, %.2f s decoding, "
             "%.2f s flushing, %.2f s storing; %.2f s in profiled processes",
             t[1], t[0], t[2], t[3], t[4], t[5]);
    if (first_bad >= 0) {
        const struct proc_status *b = &all[first_bad];
        if (counters_wanted)
            rk_warn("%s", b->reason);
        snprintf(note, sizeof note, "mode %s in %d of %d processes: %s; %s; %s", b->mode, nbad,
                 nall, b->reason, how, times);
    } else {
        snprintf(note, sizeof note, "mode counters (%s) in %d processes; %s", how, nall, times);
    }
    if (unmatched > 0) {
        rk_warn("%ld launches differed between the %d runs of application replay (order or "
                "kernel name); their counters from the other runs are missing. Use '--replay "
                "kernel' for a program that does not launch the same kernels each run",
                unmatched, runs);
        size_t at = strlen(note);
        snprintf(note + at, sizeof note - at, "; %ld launches unmatched between runs", unmatched);
    }
    rk_info("recorded %ld kernel launches (%ld with counters, %s) from %d CUDA process%s in "
            "capture %lld",
            launches, with_counters, how, nst, nst == 1 ? "" : "es", (long long)capture);
    if (nall > 0) {
        rk_info("%s", times);
        db_capture_note(ctx->db, capture, note);
    }
    return launches;
}

/*
 * The statuses of the stored run, st[0..nst) (and their copies among all[0..nall)), with what
 * the journals say: the launches stored from each process's journals and the time spent storing
 * them; a process that wrote no status line (it was killed) gets one from its journal.
 */
static void journal_status(const struct profile_journal *pj, struct proc_status **st, int *nst,
                           struct proc_status **all, int *nall)
{
    for (int i = 0; i < pj->nproc; i++) {
        const struct pj_proc *p = &pj->proc[i];
        int found = 0;
        for (int k = 0; k < *nst + *nall; k++) {
            struct proc_status *s = k < *nst ? &(*st)[k] : &(*all)[k - *nst];
            if (s->pid != p->pid)
                continue;
            s->launches = p->stored;
            s->with_counters = p->with_counters;
            s->t[4] = p->t_store;
            found |= k < *nst;
        }
        if (found)
            continue;
        struct proc_status s;
        memset(&s, 0, sizeof s);
        s.pid = p->pid;
        s.launches = p->stored;
        s.with_counters = p->with_counters;
        s.t[4] = p->t_store;
        const char *m = p->mode[0] ? p->mode : "killed", *colon = strstr(m, ": ");
        snprintf(s.mode, sizeof s.mode, "%.*s", colon ? (int)(colon - m) : (int)strlen(m), m);
        snprintf(s.reason, sizeof s.reason, "%s",
                 colon ? colon + 2 : "the process died before it finished");
        struct proc_status *g1 = realloc(*st, (size_t)(*nst + 1) * sizeof **st);
        if (g1)
            *st = g1, (*st)[(*nst)++] = s;
        struct proc_status *g2 = realloc(*all, (size_t)(*nall + 1) * sizeof **all);
        if (g2)
            *all = g2, (*all)[(*nall)++] = s;
    }
}

/* Removes the application-replay folder and the files in it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    if (d)
        closedir(d);
    rmdir(dir);
}

/*
 * The GPUs the recorded launches ran on: the UUID each launch's process read from its driver
 * (inject.c) is looked up among the GPUs this process sees (rk_gpu_read) and stored; the first
 * by UUID becomes the capture's device, so that the model and the report find its ceilings,
 * and each launch names its own GPU (a program that ran on several). Failures only warn: the
 * launches are stored either way.
 */
static void capture_device(struct rk_ctx *ctx, int64_t capture)
{
    char **uuids = NULL;
    int n = 0, ngpu = 0, named = 0;
    if (db_capture_gpu_uuids(ctx->db, capture, &uuids, &n) != RK_OK)
        return;
    if (n > 0 && cudaGetDeviceCount(&ngpu) != cudaSuccess)
        ngpu = 0;
    for (int i = 0; i < n; i++) {
        int found = 0;
        if (!uuids[i][0])
            continue;
        for (int g = 0; g < ngpu && !found; g++) {
            struct rk_gpu gpu;
            int64_t device_id = 0;
            if (rk_gpu_read(g, &gpu) != RK_OK || strcmp(gpu.uuid, uuids[i]) != 0)
                continue;
            found = 1;
            if (rk_store_device(ctx, &gpu, &device_id) != RK_OK ||
                db_capture_set_launch_device(ctx->db, capture, uuids[i], device_id) != RK_OK ||
                (!named && db_capture_set_device(ctx->db, capture, device_id) != RK_OK))
                continue;
            named++;
        }
        if (!found)
            rk_warn("a GPU the launches ran on (%s) is not visible to roofkit; its launches in "
                    "capture %lld name no device, and the model cannot predict them",
                    uuids[i], (long long)capture);
    }
    if (named > 1)
        rk_info("the program ran on %d GPUs; each launch names its own", named);
    rk_free_name_list(uuids, n);
}

/*
 * --device for the profiled program: the GPUs it names (indices are this process's, as
 * everywhere in roofkit) become the program's CUDA_VISIBLE_DEVICES, by UUID, so that the
 * program sees those GPUs alone (as its devices 0, 1, ...). Without --device the program sees
 * what it would see anyway: under mpirun each rank's program picks its own GPU.
 */
static int visible_devices(const struct rk_ctx *ctx, char **out /* OUT: malloc'd or NULL */)
{
    struct rk_gpu *g = NULL;
    struct rk_buf b = RK_BUF_INIT;
    int *idx = NULL, n = 0, ngpu = 0, rc;
    *out = NULL;
    if (!ctx->device_spec)
        return RK_OK;
    if ((rc = rk_gpu_resolve(ctx->device_spec, &idx, &n)) != RK_OK)
        return rc;
    if ((rc = rk_gpu_list(&g, &ngpu)) == RK_OK) {
        for (int i = 0; i < n; i++)
            rk_buf_printf(&b, "%s%s", i ? "," : "", g[idx[i]].uuid);
        if (b.oom)
            rc = rk_error(RK_ENOMEM, "out of host memory");
    }
    free(idx);
    free(g);
    if (rc != RK_OK) {
        rk_buf_release(&b);
        return rc;
    }
    *out = b.s;
    return RK_OK;
}

/* Which launches are recorded: the kernel filters as given (checked), and the launch window. */
struct launch_filter {
    const char *name; /* --kernel-name, or NULL */
    const char *base; /* --kernel-name-base, or NULL (function) */
    const char *id;   /* --kernel-id, or NULL */
    long skip, count;
};

/*
 * Steps 2-4 of the header: capture, run (once, or once per pass group: groups[0..ngroups) are
 * the groups' comma-separated raw metrics), report. Returns PROGRAM's exit code, or an rk_err
 * when roofkit itself failed before PROGRAM ran; *stored gets the capture once PROGRAM ran and
 * the capture ended (0 otherwise).
 */
static int profile_run(struct rk_ctx *ctx, char **prog, const char *inject, const char *metrics,
                       const struct launch_filter *flt, char *const *groups, int ngroups,
                       struct profile_energy *pe, int64_t *stored /* OUT */)
{
    char dbabs[PATH_MAX], status_path[] = "/tmp/roofkit-status-XXXXXX";
    char replay_dir[] = "/tmp/roofkit-replay-XXXXXX", replay_s[32];
    char capture_s[32], skip_s[32], count_s[32];
    struct proc_status *st = NULL, *all = NULL;
    int64_t capture = 0;
    int rc, nst = 0, nall = 0, wstatus = 0, fd = -1, runs = ngroups > 1 ? ngroups : 1;
    enum db_status end = DB_FAILED;
    struct profile_journal pj;

    *stored = 0;
    if ((rc = rk_ctx_open_db(ctx, 1)) != RK_OK)
        return rc;
    if (!realpath(db_path(ctx->db), dbabs))
        return rk_error(RK_EIO, "cannot resolve the path of '%s': %s", db_path(ctx->db),
                        strerror(errno));
    if ((rc = profile_journal_open(ctx, dbabs, &pj)) != RK_OK)
        return rc;
    if ((rc = db_capture_begin(ctx->db, 0, DB_CAPTURE_PROFILE, ctx->cmdline, RK_VERSION,
                               &capture)) != RK_OK) {
        profile_journal_close(&pj);
        return rc;
    }
    if ((rc = profile_journal_lock(&pj, capture)) != RK_OK)
        goto out;
    if (runs > 1 && !mkdtemp(replay_dir)) {
        rc = rk_error(RK_EIO, "cannot create a temporary folder in /tmp: %s", strerror(errno));
        goto out;
    }
    snprintf(capture_s, sizeof capture_s, "%lld", (long long)capture);
    snprintf(skip_s, sizeof skip_s, "%ld", flt->skip);
    snprintf(count_s, sizeof count_s, "%ld", flt->count);
    char *no_activity = getenv("ROOFKIT_NO_ACTIVITY");
    if (!no_activity)
        no_activity = "";
    for (int run = 0; run < runs; run++) {
        if ((fd = mkstemp(status_path)) < 0) {
            rc = rk_error(RK_EIO, "cannot create a temporary file in /tmp: %s", strerror(errno));
            goto out;
        }
        close(fd);
        snprintf(replay_s, sizeof replay_s, "%d/%d", run, runs);
        char *env[] = {
            "CUDA_INJECTION64_PATH",
            (char *)inject,
            "ROOFKIT_DB",
            dbabs,
            "ROOFKIT_CAPTURE",
            capture_s,
            "ROOFKIT_METRICS",
            (char *)metrics,
            "ROOFKIT_KERNEL", /* the older regex form: cleared, the three below select */
            "",
            "ROOFKIT_KERNEL_NAME",
            (char *)(flt->name ? flt->name : ""),
            "ROOFKIT_KERNEL_BASE",
            (char *)(flt->base ? flt->base : ""),
            "ROOFKIT_KERNEL_ID",
            (char *)(flt->id ? flt->id : ""),
            "ROOFKIT_LAUNCH_SKIP",
            skip_s,
            "ROOFKIT_LAUNCH_COUNT",
            count_s,
            "ROOFKIT_STATUS",
            status_path,
            "ROOFKIT_JOURNAL",
            pj.dir,
            "ROOFKIT_ENERGY", /* cleared unless this run reads each kernel's energy */
            (char *)profile_energy_env(pe),
            /* application replay only (the last four pairs are left out otherwise); the
             * runs before the last store nothing but counters, so they skip CUPTI's Activity
             * records (~4 ms a launch on the H100) */
            "ROOFKIT_REPLAY",
            replay_s,
            "ROOFKIT_REPLAY_DIR",
            replay_dir,
            "ROOFKIT_RAW",
            runs > 1 ? groups[run] : "",
            "ROOFKIT_NO_ACTIVITY",
            run < runs - 1 ? "1" : no_activity,
        };
        int nenv = (int)(sizeof env / sizeof *env / 2) - (runs > 1 ? 0 : 4);
        int last = run == runs - 1;
        if (runs > 1 && !ctx->quiet)
            rk_info("application replay: run %d of %d%s", run + 1, runs,
                    last ? "" : " (output discarded)");
        if (last)
            profile_energy_mark(pe, 0);
        rc = run_program(prog, env, nenv, !last, &wstatus);
        if (last)
            profile_energy_mark(pe, 1);
        /* The last run's processes are the stored ones; every run's times count. */
        struct proc_status *got = NULL;
        int ngot = 0;
        read_status(status_path, &got, &ngot);
        unlink(status_path);
        strcpy(status_path, "/tmp/roofkit-status-XXXXXX");
        struct proc_status *grown = ngot ? realloc(all, (size_t)(nall + ngot) * sizeof *all) : all;
        if (grown) {
            all = grown;
            memcpy(all + nall, got, (size_t)ngot * sizeof *got);
            nall += ngot;
        }
        if (last) {
            st = got;
            nst = ngot;
        } else {
            free(got);
        }
        if (rc != RK_OK)
            goto out;
        int killed = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
        if (!last && (rk_interrupted || killed == SIGINT || killed == SIGTERM)) {
            end = DB_INTERRUPTED;
            rc = rk_error(RK_EINTR,
                          "interrupted: '%s' ended by %s in run %d of %d of application replay; "
                          "nothing was stored in capture %lld",
                          prog[0], strsignal(killed ? killed : rk_interrupted), run + 1, runs,
                          (long long)capture);
            goto out;
        }
        if (!last && (killed || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0))
            rk_warn("run %d of %d of '%s' (application replay, output discarded) %s %d", run + 1,
                    runs, prog[0], killed ? "was killed by signal" : "exited with status",
                    killed               ? killed
                    : WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
                                         : -1);
    }
    profile_journal_store(ctx, &pj); /* a failure was printed; what was stored stays */
    journal_status(&pj, &st, &nst, &all, &nall);
    long launches = report(ctx, capture, st, nst, all, nall, runs, strcmp(metrics, "none") != 0);
    if (launches == 0 && nst > 0 && (flt->name || flt->id)) {
        /* a filter that matched nothing says so, instead of an empty capture alone */
        struct rk_buf b = RK_BUF_INIT;
        if (flt->name)
            rk_buf_printf(&b, "--kernel-name '%s'", flt->name);
        if (flt->id)
            rk_buf_printf(&b, "%s--kernel-id '%s'", flt->name ? " and " : "", flt->id);
        rk_warn("no kernel launch of '%s' matched %s (compared with each kernel's %s name); "
                "profile without the filter to see the names, or write 'regex:EXPR'",
                prog[0], b.s ? b.s : "", flt->base ? flt->base : "function");
        rk_buf_release(&b);
    }
    capture_device(ctx, capture);
    profile_energy_store(ctx, pe, capture, prog);
    int killed = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    end = rk_interrupted ? DB_INTERRUPTED : profile_end_status(killed);
    rc = killed ? 128 + killed : WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : RK_EFAIL;
    profile_journal_note_kill(ctx, &pj, capture, prog[0],
                              killed == SIGINT || killed == SIGTERM ? 0 : killed);
    if (killed == SIGINT || killed == SIGTERM || rk_interrupted)
        rc = rk_error(RK_EINTR,
                      "interrupted: '%s' ended by %s; the launches recorded before are stored "
                      "in capture %lld",
                      prog[0], strsignal(killed ? killed : rk_interrupted), (long long)capture);
out:
    if (runs > 1 && strcmp(replay_dir, "/tmp/roofkit-replay-XXXXXX") != 0)
        remove_dir(replay_dir);
    profile_journal_close(&pj);
    if (db_capture_end(ctx->db, capture, end) == RK_OK && end == DB_DONE)
        *stored = capture;
    free(st);
    free(all);
    return rc;
}

/*
 * Application replay's pass groups of `metrics` (the checked list; "" = default set): the
 * comma-separated raw names of each group in *groups (malloc'd), *ngroups of them; 1 group
 * (and *groups NULL) when the set fits one pass.
 */
static int pass_groups(const char *metrics, char ***groups, int *ngroups)
{
    char **names = NULL;
    int n = 0, rc;
    struct collect_plan *plan = NULL;
    *groups = NULL;
    *ngroups = 1;
    if (*metrics && rk_parse_name_list(metrics, &names, &n) != RK_OK)
        return rk_error(RK_ENOMEM, "out of memory");
    if ((rc = collect_plan_new((const char *const *)names, n, &plan)) == RK_OK &&
        (rc = collect_plan_check(plan, NULL)) == RK_OK &&
        (rc = collect_plan_group_names(plan, NULL, groups, ngroups)) == RK_OK && *ngroups <= 1) {
        rk_free_name_list(*groups, *ngroups);
        *groups = NULL;
        *ngroups = 1;
    }
    collect_plan_free(plan);
    rk_free_name_list(names, n);
    return rc;
}

/* After the kernel table: the capture's program and NVTX energy (profile --energy), one line
 * each on stderr, saying the scope each figure comes from. */
static void print_spans(struct rk_ctx *ctx, int64_t capture)
{
    struct db_energy_span *s = NULL;
    int n = 0;
    if (db_query_energy_spans(ctx->db, capture, &s, &n) != RK_OK)
        return;
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].scope, "kernel") != 0)
            rk_info("energy (%s scope%s%s): %.4g J over %.4g s, %.4g W average%s", s[i].scope,
                    strcmp(s[i].scope, "nvtx") == 0 ? ", kernels in range " : "",
                    strcmp(s[i].scope, "nvtx") == 0 ? s[i].name : "", s[i].energy_j,
                    s[i].time_ns * 1e-9, s[i].power_w,
                    strcmp(s[i].scope, "program") == 0 ? " (the whole program on its GPU)" : "");
    db_free_energy_spans(s, n);
}

/*
 * Step 5: the kernels of `capture` summed up per name (analysis_kernel_summary), largest total
 * time first, as a table on standard output; `top` > 0 keeps the first top rows (a line on
 * stderr says how many more there are). RK_OK, or the error printed.
 */
static int print_summary(struct rk_ctx *ctx, int64_t capture, enum rk_format fmt, int top)
{
    static const struct rk_col cols[] = {
        {"time_pct", RK_COL_REAL, 1}, {"total_ns", RK_COL_REAL, 0},
        {"launches", RK_COL_INT, 0},  {"median_ns", RK_COL_REAL, 0},
        {"roof_pct", RK_COL_REAL, 1}, {"bound", RK_COL_TEXT, 0},
        {"energy_j", RK_COL_REAL, 0}, {"j_per_launch", RK_COL_REAL, 0},
        {"power_w", RK_COL_REAL, 0},  {"energy_from", RK_COL_TEXT, 0},
        {"kernel", RK_COL_TEXT, 0},
    };
    struct analysis_kernel_sum *k = NULL;
    struct rk_table *t = NULL;
    int n = 0, rc = analysis_kernel_summary(ctx->db, capture, &k, &n);
    if (rc == RK_OK && n == 0 && top > 0) /* nothing recorded: the line above said so */
        return RK_OK;
    if (rc == RK_ENODATA)
        rc = rk_error(RK_ENODATA, "no capture %lld in '%s'; see 'roofkit list captures'",
                      (long long)capture, db_path(ctx->db));
    if (rc == RK_OK)
        rc = rk_table_new(fmt, stdout, cols, (int)(sizeof cols / sizeof *cols), &t);
    int shown = top > 0 && n > top ? top : n;
    for (int i = 0; rc == RK_OK && i < shown; i++) {
        if ((rc = rk_table_row(t)) != RK_OK)
            break;
        rk_table_real(t, k[i].share_pct);
        rk_table_real(t, k[i].total_ns);
        rk_table_int(t, k[i].launches);
        rk_table_real(t, k[i].median_ns);
        rk_table_real(t, k[i].pct_roof);
        rk_table_str(t, k[i].bound);
        rk_table_real(t, k[i].energy_j);
        rk_table_real(t, k[i].energy_per_launch_j);
        rk_table_real(t, k[i].power_w);
        rk_table_str(t, k[i].energy_scope);
        rk_table_str(t, k[i].kernel);
    }
    if (t && rc == RK_OK)
        rc = rk_table_end(t);
    else
        rk_table_free(t);
    if (rc == RK_OK && shown < n)
        rk_info("%d more kernels: 'roofkit profile --summary --capture %lld' lists them all",
                n - shown, (long long)capture);
    analysis_kernel_summary_free(k, n);
    if (rc == RK_OK)
        print_spans(ctx, capture);
    return rc;
}

/* `profile --summary [--capture ID]`: the table of a stored profile capture (the newest one by
 * default), read-only. */
static int summary_only(struct rk_ctx *ctx, long capture, enum rk_format fmt)
{
    struct db_capture cap;
    int64_t id = capture;
    int rc = rk_ctx_open_db(ctx, 0);
    if (rc != RK_OK)
        return rc;
    if (!id) {
        rc = db_latest_capture(ctx->db, DB_CAPTURE_PROFILE, 0, &id);
        if (rc == RK_ENODATA)
            return rk_error(RK_ENODATA,
                            "no finished profile capture in '%s'; run 'roofkit profile -- "
                            "PROGRAM' first",
                            db_path(ctx->db));
        if (rc != RK_OK)
            return rc;
    }
    if ((rc = db_get_capture(ctx->db, id, &cap)) == RK_ENODATA)
        return rk_error(RK_ENODATA, "no capture %lld in '%s'; see 'roofkit list captures'",
                        (long long)id, db_path(ctx->db));
    if (rc != RK_OK)
        return rc;
    enum db_capture_kind kind = cap.kind;
    db_capture_release(&cap);
    if (kind != DB_CAPTURE_PROFILE)
        return rk_error(RK_ENODATA,
                        "capture %lld is a %s capture, not a profile one; see 'roofkit list "
                        "captures'",
                        (long long)id, db_capture_kind_name(kind));
    return print_summary(ctx, id, fmt, 0);
}

int cmd_profile(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"metrics", required_argument, NULL, 'm'},
        {"kernel-name", required_argument, NULL, 'k'},
        {"kernel-name-base", required_argument, NULL, 'B'},
        {"kernel-id", required_argument, NULL, 'I'},
        {"kernel", required_argument, NULL, 'K'}, /* the older name of --kernel-name */
        {"launch-skip", required_argument, NULL, 's'},
        {"launch-count", required_argument, NULL, 'c'},
        {"replay", required_argument, NULL, 'r'},
        {"summary", no_argument, NULL, 'S'},
        {"capture", required_argument, NULL, 'C'},
        {"format", required_argument, NULL, 'f'},
        {"energy", no_argument, NULL, 'E'},
        /* NVTX ranges and the profiler API (profile_nvtx.c) */
        {"nvtx", no_argument, NULL, PROFILE_OPT_NVTX},
        {"nvtx-include", required_argument, NULL, PROFILE_OPT_NVTX_INCLUDE},
        {"nvtx-exclude", required_argument, NULL, PROFILE_OPT_NVTX_EXCLUDE},
        {"profile-from-start", required_argument, NULL, PROFILE_OPT_FROM_START},
        {NULL, 0, NULL, 0},
    };
    struct profile_nvtx nvtx = {0};
    struct launch_filter flt = {0};
    const char *metrics = NULL;
    char inject[PATH_MAX], *checked = NULL, **groups = NULL, *visible = NULL;
    int c, rc, ngroups = 1, app_replay = 1, summary = 0, run_opts = 0, energy = 0;
    long capture = 0;
    enum rk_format fmt = RK_FMT_TEXT;
    rk_getopt_reset();
    /* "+" stops at the first non-option: PROGRAM's own options are not ours. */
    while ((c = rk_getopt(argc, argv, "+:k:s:c:", opts)) != -1) {
        run_opts += c != 'S' && c != 'C' && c != 'f';
        switch (c) {
        case 'm':
            if (!*optarg)
                return rk_error(RK_EUSAGE,
                                "option needs a non-empty value; see 'roofkit help profile'");
            metrics = optarg;
            break;
        case 'K':
            rk_warn("option '--kernel' is now '--kernel-name' (-k), as in Nsight Compute: an "
                    "exact name unless written 'regex:EXPR'; taking '--kernel-name %s'",
                    optarg);
            /* fall through */
        case 'k':
            flt.name = optarg;
            break;
        case 'B':
            flt.base = optarg;
            break;
        case 'I':
            flt.id = optarg;
            break;
        case 's':
            if (rk_opt_long("launch-skip", optarg, 0, 1L << 40, &flt.skip) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'c':
            if (rk_opt_long("launch-count", optarg, 1, 1L << 40, &flt.count) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'r':
            if (strcmp(optarg, "application") == 0 || strcmp(optarg, "kernel") == 0)
                app_replay = optarg[0] == 'a';
            else
                return rk_error(RK_EUSAGE,
                                "option '--replay' needs 'application' or 'kernel', not '%s'",
                                optarg);
            break;
        case 'S':
            summary = 1;
            break;
        case 'E':
            energy = 1;
            break;
        case 'C':
            if (rk_opt_long("capture", optarg, 1, LONG_MAX, &capture) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'f':
            if (rk_parse_format(optarg, &fmt) != RK_OK)
                return RK_EUSAGE;
            break;
        case PROFILE_OPT_NVTX:
        case PROFILE_OPT_NVTX_INCLUDE:
        case PROFILE_OPT_NVTX_EXCLUDE:
        case PROFILE_OPT_FROM_START:
            if ((rc = profile_nvtx_option(&nvtx, c, optarg)) != RK_OK)
                return rc;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (summary) {
        if (optind < argc || run_opts)
            return rk_error(RK_EUSAGE,
                            "'--summary' prints a stored capture and runs nothing; it takes "
                            "--capture and --format only");
        return summary_only(ctx, capture, fmt);
    }
    if (capture)
        return rk_error(RK_EUSAGE, "option '--capture' goes with '--summary'; write 'roofkit "
                                   "profile --summary --capture ID'");
    if (optind >= argc)
        return rk_error(RK_EUSAGE,
                        "no program to profile; write 'roofkit profile -- PROGRAM [ARGS...]'");
    char **prog = argv + optind;
    /* the filters as the injection library will read them: refused here, before anything runs */
    enum rk_kname_base base;
    struct rk_kname_filter f;
    struct rk_kernel_id kid;
    if ((rc = rk_kname_base_parse(flt.base, &base)) != RK_OK)
        return rc;
    if (flt.name) {
        if ((rc = rk_kname_filter_init(&f, flt.name, "--kernel-name")) != RK_OK)
            return rc;
        rk_kname_filter_release(&f);
    }
    if (flt.id) {
        int invocation;
        if ((rc = rk_kernel_id_init(&kid, flt.id)) != RK_OK)
            return rc;
        invocation = kid.invocation > 0 || kid.inv_regex;
        rk_kernel_id_release(&kid);
        /* as Nsight Compute: which invocation is counted before or after the skipped launches
         * would be ambiguous (ncu 2025.3: "--launch-skip is not compatible with --kernel-id
         * specified with context, stream, invocation filter") */
        if (invocation && flt.skip > 0)
            return rk_error(RK_EUSAGE, "option '--launch-skip' cannot be combined with a "
                                       "'--kernel-id' that names invocations, as in Nsight "
                                       "Compute; drop one of them");
    }
    if (!find_program(prog[0]))
        return rk_error(RK_EUSAGE, "cannot find program '%s'; give its path or put it on PATH",
                        prog[0]);
    if (!find_injection(inject, sizeof inject))
        return rk_error(RK_EIO,
                        "cannot find %s beside roofkit or in its lib/ folder; set "
                        "ROOFKIT_INJECT to its path",
                        INJECT_NAME);
    if ((rc = profile_nvtx_setup(&nvtx, inject)) != RK_OK)
        return rc;

    if ((rc = visible_devices(ctx, &visible)) != RK_OK)
        return rc;
    if (visible) {
        rk_info("'%s' sees GPU %s alone (--device %s)", prog[0], visible, ctx->device_spec);
        setenv("CUDA_VISIBLE_DEVICES", visible, 1); /* inherited by the program, not used here */
        free(visible);
    }
    if ((rc = check_metrics(metrics, &checked)) != RK_OK)
        return rc;
    if (app_replay && strcmp(checked, "none") != 0 &&
        (rc = pass_groups(checked, &groups, &ngroups)) != RK_OK) {
        free(checked);
        return rc;
    }
    int64_t stored = 0;
    struct profile_energy pe;
    if ((rc = profile_energy_begin(&pe, energy, strcmp(checked, "none") != 0)) != RK_OK) {
        rk_free_name_list(groups, groups ? ngroups : 0);
        free(checked);
        return rc;
    }
    rc = profile_run(ctx, prog, inject, checked, &flt, groups, ngroups, &pe, &stored);
    profile_energy_end(&pe);
    rk_free_name_list(groups, groups ? ngroups : 0);
    free(checked);
    /* The table is data (standard output); as text it is for a person, whom --quiet silences.
     * PROGRAM's exit code stays the command's even when the table cannot be written. */
    if (stored && (fmt != RK_FMT_TEXT || !ctx->quiet))
        print_summary(ctx, stored, fmt, fmt == RK_FMT_TEXT ? 10 : 0);
    return rc;
}
