/*
 * energy.c - the energy of a profiled program, its kernels and its NVTX ranges (collect.h
 * "energy"): NVML's energy counter polled by a thread, and the readings apportioned to the
 * kernels that ran between them.
 *
 * NVML's counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded) moves in
 * steps about every 100 ms on an H100. A reading over less than a step is only as good as where
 * the step falls, so the meter polls every GPU's counter every ~1 ms and keeps the time of each
 * change: the energy between two changes (a "window") is exact to the counter's mJ, and its
 * length to one poll (~1 % of a 100 ms window at each end). The first reading only sets the
 * base (the step before it began at an unknown time); windows start at the first change.
 *
 * Apportioning (collect_energy_apportion), a two-level power model per window: the GPU draws the
 * idle power P_idle while no recorded kernel runs and whatever is left while they do. P_idle is
 * the median power of the windows in which no kernel ran (none: the window's energy is split by
 * time alone, as if idle and busy drew the same). A window of length L and energy E whose kernels
 * ran B of it (their times summed, at most L) gives its kernels E - P_idle (L - B) (at least 0),
 * each group its share by GPU time. A group is read (collect_energy_read) when its kernels cover
 * COLLECT_ENERGY_MIN_WINDOWS windows' worth of time and nearly all of their time falls inside
 * windows: shorter work mixes with too few counter steps for a figure within a few per cent.
 *
 * Assumes: one writer (the thread) fills the samples until collect_energy_stop; readers read
 * after it. NVML is opened with dlopen (no nvml.h at build time, no link against the driver).
 */
#define _GNU_SOURCE
#include "backend.h"
#include "collect.h"
#include "common.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GPUS   64
#define POLL_NS    1000000L /* 1 ms */
#define NVML_OK    0
#define UUID_BYTES 96

typedef int (*nvml_fn0)(void);
typedef int (*nvml_count)(unsigned *);
typedef int (*nvml_handle)(unsigned, void **);
typedef int (*nvml_uuid)(void *, char *, unsigned);
typedef int (*nvml_energy)(void *, unsigned long long *);

struct gpu {
    void *dev;
    char uuid[UUID_BYTES];
    unsigned long long last_mj;
    struct collect_energy_sample *s;
    int n, cap;
    int oom;
};

struct collect_energy_meter {
    void *lib;
    nvml_fn0 shutdown;
    nvml_energy energy;
    uint64_t (*clock_ns)(void);
    struct gpu gpu[MAX_GPUS];
    int ngpu;
    pthread_t thread;
    int running;
    atomic_int stop;
};

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t collect_timestamp_ns(void)
{
    return bk_active && bk_active->timestamp ? bk_active->timestamp() : 0;
}

/* dlsym's object pointer copied into a function pointer (ISO C has no cast between them). */
static int sym(void *lib, const char *name, void *fn, size_t size)
{
    void *p = dlsym(lib, name);
    if (p)
        memcpy(fn, &p, size);
    return p != NULL;
}

static void poll_once(struct collect_energy_meter *m)
{
    for (int g = 0; g < m->ngpu; g++) {
        struct gpu *u = &m->gpu[g];
        unsigned long long mj = 0;
        if (m->energy(u->dev, &mj) != NVML_OK || mj == u->last_mj)
            continue;
        uint64_t t = m->clock_ns();
        u->last_mj = mj;
        if (u->n == u->cap) {
            int cap = u->cap ? 2 * u->cap : 1024;
            struct collect_energy_sample *grown = realloc(u->s, (size_t)cap * sizeof *grown);
            if (!grown) {
                u->oom = 1;
                continue;
            }
            u->s = grown;
            u->cap = cap;
        }
        u->s[u->n].t_ns = t;
        u->s[u->n].j = 1e-3 * (double)mj;
        u->n++;
    }
}

static void *poller(void *arg)
{
    struct collect_energy_meter *m = arg;
    struct timespec nap = {0, POLL_NS};
    while (!atomic_load(&m->stop)) {
        poll_once(m);
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int collect_energy_open(uint64_t (*clock_ns)(void), struct collect_energy_meter **out, char *why,
                        size_t len)
{
    struct collect_energy_meter *m = calloc(1, sizeof *m);
    nvml_fn0 init = NULL;
    nvml_count count = NULL;
    nvml_handle handle = NULL;
    nvml_uuid uuid = NULL;
    unsigned n = 0;
    int e = NVML_OK;

    *out = NULL;
    if (!m)
        return RK_ENOMEM;
    m->clock_ns = clock_ns ? clock_ns : monotonic_ns;
    if (!(m->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL))) {
        snprintf(why, len, "NVML (libnvidia-ml.so.1) cannot be loaded");
        free(m);
        return RK_ENODATA;
    }
    if (!sym(m->lib, "nvmlInit_v2", &init, sizeof init) ||
        !sym(m->lib, "nvmlShutdown", &m->shutdown, sizeof m->shutdown) ||
        !sym(m->lib, "nvmlDeviceGetCount_v2", &count, sizeof count) ||
        !sym(m->lib, "nvmlDeviceGetHandleByIndex_v2", &handle, sizeof handle) ||
        !sym(m->lib, "nvmlDeviceGetUUID", &uuid, sizeof uuid) ||
        !sym(m->lib, "nvmlDeviceGetTotalEnergyConsumption", &m->energy, sizeof m->energy)) {
        snprintf(why, len, "this driver's NVML has no energy counter");
        dlclose(m->lib);
        free(m);
        return RK_ENODATA;
    }
    if (init() != NVML_OK) {
        snprintf(why, len, "NVML did not start (nvmlInit failed)");
        dlclose(m->lib);
        free(m);
        return RK_ENODATA;
    }
    if (count(&n) != NVML_OK)
        n = 0;
    for (unsigned i = 0; i < n && m->ngpu < MAX_GPUS; i++) {
        struct gpu *u = &m->gpu[m->ngpu];
        if (handle(i, &u->dev) != NVML_OK || uuid(u->dev, u->uuid, sizeof u->uuid) != NVML_OK)
            continue;
        if ((e = m->energy(u->dev, &u->last_mj)) != NVML_OK)
            continue;
        m->ngpu++;
    }
    if (m->ngpu == 0) {
        /* nvmlReturn_t: 3 not supported, 4 no permission */
        snprintf(why, len, "%s",
                 n == 0   ? "NVML sees no GPU"
                 : e == 3 ? "the GPU has no energy counter (NVML: not supported)"
                 : e == 4 ? "no permission to read the energy counter (NVML: no permission)"
                          : "NVML refused to read the energy counter");
        m->shutdown();
        dlclose(m->lib);
        free(m);
        return RK_ENODATA;
    }
    if (rk_thread_start(&m->thread, poller, m) != 0) {
        snprintf(why, len, "cannot start the thread that reads the energy counter");
        m->shutdown();
        dlclose(m->lib);
        free(m);
        return RK_ENODATA;
    }
    m->running = 1;
    *out = m;
    return RK_OK;
}

void collect_energy_stop(struct collect_energy_meter *m)
{
    if (!m || !m->running)
        return;
    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    m->running = 0;
}

int collect_energy_ngpus(const struct collect_energy_meter *m)
{
    return m ? m->ngpu : 0;
}

const char *collect_energy_uuid(const struct collect_energy_meter *m, int gpu)
{
    return m && gpu >= 0 && gpu < m->ngpu ? m->gpu[gpu].uuid : NULL;
}

int collect_energy_find(const struct collect_energy_meter *m, const char *uuid)
{
    for (int g = 0; m && uuid && g < m->ngpu; g++)
        if (strcmp(m->gpu[g].uuid, uuid) == 0)
            return g;
    return -1;
}

int collect_energy_samples(const struct collect_energy_meter *m, int gpu,
                           const struct collect_energy_sample **s)
{
    *s = NULL;
    if (!m || m->running || gpu < 0 || gpu >= m->ngpu)
        return 0;
    *s = m->gpu[gpu].s;
    return m->gpu[gpu].n;
}

void collect_energy_close(struct collect_energy_meter *m)
{
    if (!m)
        return;
    collect_energy_stop(m);
    for (int g = 0; g < m->ngpu; g++)
        free(m->gpu[g].s);
    m->shutdown();
    dlclose(m->lib);
    free(m);
}

/* ------------------------------------------------------------ the arithmetic */

/* The counter at time t [J]: linear between changes, the nearest window's power beyond them. */
static double energy_at(const struct collect_energy_sample *s, int n, uint64_t t)
{
    int lo = 0, hi = n - 1;
    if (t <= s[0].t_ns)
        lo = 0;
    else if (t >= s[n - 1].t_ns)
        lo = n - 2;
    else
        while (hi - lo > 1) { /* s[lo].t_ns <= t < s[hi].t_ns */
            int mid = (lo + hi) / 2;
            if (s[mid].t_ns <= t)
                lo = mid;
            else
                hi = mid;
        }
    double len = (double)(s[lo + 1].t_ns - s[lo].t_ns);
    double p = len > 0 ? (s[lo + 1].j - s[lo].j) / len : 0; /* J per ns */
    return s[lo].j + p * ((double)t - (double)s[lo].t_ns);
}

double collect_energy_between(const struct collect_energy_sample *s, int n, uint64_t t0,
                              uint64_t t1)
{
    if (!s || n < 2 || t1 < t0)
        return NAN;
    return energy_at(s, n, t1) - energy_at(s, n, t0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int collect_energy_apportion(const struct collect_energy_sample *s, int n,
                             const struct collect_energy_busy *b, int nb,
                             struct collect_energy_share *out, int ngroups, double *idle_w)
{
    int nw = n - 1, rc = RK_OK;
    double *busy = NULL, *idle = NULL;
    *idle_w = NAN;
    for (int g = 0; g < ngroups; g++)
        memset(&out[g], 0, sizeof out[g]);
    for (int i = 0; i < nb; i++)
        if (b[i].group >= 0 && b[i].group < ngroups && b[i].end_ns > b[i].start_ns) {
            out[b[i].group].busy_ns += (double)(b[i].end_ns - b[i].start_ns);
            out[b[i].group].launches++;
        }
    if (!s || nw < 1) {
        for (int g = 0; g < ngroups; g++)
            out[g].outside_ns = out[g].busy_ns;
        return RK_OK;
    }
    /* busy[w * ngroups + g]: group g's time inside window w */
    if (!(busy = calloc((size_t)nw * (size_t)ngroups, sizeof *busy)) ||
        !(idle = malloc((size_t)nw * sizeof *idle))) {
        rc = RK_ENOMEM;
        goto out;
    }
    for (int i = 0; i < nb; i++) {
        const struct collect_energy_busy *k = &b[i];
        if (k->group < 0 || k->group >= ngroups || k->end_ns <= k->start_ns)
            continue;
        int lo = 0, hi = nw; /* the first window whose end is after the kernel's start */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (s[mid + 1].t_ns <= k->start_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        double inside = 0;
        for (int w = lo; w < nw && s[w].t_ns < k->end_ns; w++) {
            uint64_t a = k->start_ns > s[w].t_ns ? k->start_ns : s[w].t_ns;
            uint64_t z = k->end_ns < s[w + 1].t_ns ? k->end_ns : s[w + 1].t_ns;
            if (z > a) {
                busy[(size_t)w * ngroups + k->group] += (double)(z - a);
                inside += (double)(z - a);
            }
        }
        out[k->group].outside_ns += (double)(k->end_ns - k->start_ns) - inside;
    }
    int nidle = 0;
    for (int w = 0; w < nw; w++) {
        double sum = 0, len = (double)(s[w + 1].t_ns - s[w].t_ns);
        for (int g = 0; g < ngroups; g++)
            sum += busy[(size_t)w * ngroups + g];
        if (sum == 0 && len > 0)
            idle[nidle++] = (s[w + 1].j - s[w].j) / (len * 1e-9);
    }
    if (nidle > 0) {
        qsort(idle, (size_t)nidle, sizeof *idle, cmp_double);
        *idle_w = nidle % 2 ? idle[nidle / 2] : 0.5 * (idle[nidle / 2 - 1] + idle[nidle / 2]);
    }
    for (int w = 0; w < nw; w++) {
        double sum = 0, len = (double)(s[w + 1].t_ns - s[w].t_ns), e = s[w + 1].j - s[w].j;
        for (int g = 0; g < ngroups; g++)
            sum += busy[(size_t)w * ngroups + g];
        if (sum <= 0 || len <= 0)
            continue;
        double bt = sum < len ? sum : len; /* concurrent kernels: the window at most */
        double eb = isnan(*idle_w) ? e * bt / len : e - *idle_w * (len - bt) * 1e-9;
        if (eb < 0)
            eb = 0;
        for (int g = 0; g < ngroups; g++) {
            double o = busy[(size_t)w * ngroups + g];
            if (o <= 0)
                continue;
            out[g].energy_j += eb * o / sum;
            out[g].windows += o / len;
        }
    }
out:
    free(busy);
    free(idle);
    return rc;
}

int collect_energy_read(const struct collect_energy_share *sh)
{
    return sh->windows >= COLLECT_ENERGY_MIN_WINDOWS &&
           sh->outside_ns <= COLLECT_ENERGY_MAX_OUTSIDE * sh->busy_ns;
}

/* ------------------------------------------------------- the file for the parent */

int collect_energy_write(const char *path, const struct collect_energy_line *l, int n)
{
    FILE *f = fopen(path, "we");
    int ok = f != NULL;
    for (int i = 0; ok && i < n; i++) {
        if (fprintf(f, "%s\t%s\t%.9g\t%.9g\t%ld\t%.6g\t", l[i].scope, l[i].uuid, l[i].energy_j,
                    l[i].busy_ns, l[i].launches, l[i].windows) < 0)
            ok = 0;
        for (const char *c = l[i].name ? l[i].name : ""; ok && *c; c++)
            ok = fputc(*c == '\t' || *c == '\n' ? ' ' : *c, f) != EOF;
        ok = ok && fputc('\n', f) != EOF;
    }
    if (f && fclose(f) != 0)
        ok = 0;
    return ok ? RK_OK : RK_EIO;
}

int collect_energy_load(const char *path, struct collect_energy_line **l, int *n)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = RK_OK;
    if (!f)
        return RK_EIO;
    while (rc == RK_OK && (got = getline(&line, &cap, f)) > 0) {
        struct collect_energy_line x;
        int at = 0;
        memset(&x, 0, sizeof x);
        if (line[got - 1] == '\n')
            line[got - 1] = '\0';
        else
            continue; /* a line cut short by the writer's death */
        if (sscanf(line, "%7[^\t]\t%95[^\t]\t%lf\t%lf\t%ld\t%lf\t%n", x.scope, x.uuid, &x.energy_j,
                   &x.busy_ns, &x.launches, &x.windows, &at) != 6 ||
            at == 0)
            continue;
        struct collect_energy_line *grown = realloc(*l, (size_t)(*n + 1) * sizeof *grown);
        if (!grown || !(x.name = strdup(line + at))) {
            if (grown)
                *l = grown;
            rc = RK_ENOMEM;
            break;
        }
        *l = grown;
        (*l)[(*n)++] = x;
    }
    free(line);
    fclose(f);
    return rc;
}

void collect_energy_lines_free(struct collect_energy_line *l, int n)
{
    for (int i = 0; i < n; i++)
        free(l[i].name);
    free(l);
}
