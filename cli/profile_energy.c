/*
 * profile_energy.c - `roofkit profile --energy`: the energy of the profiled program, of its
 * kernels and of its NVTX ranges, stored as energy spans of the capture (db.h).
 *
 * Two readers of NVML's energy counter (collect/energy.c gives the method and its error):
 *   - this process polls it from just before the stored run of the program starts until it
 *     has ended: the 'program' span of each GPU the launches ran on (the whole process, CUDA's
 *     start and the host's work included, on the GPU's counter);
 *   - each profiled process polls it too, on CUPTI's clock, and at exit apportions the
 *     counter's windows to its timed launches by GPU time: a kernel (or an NVTX path: the
 *     kernels launched inside that range) whose launches cover enough of the windows gets a
 *     'kernel' ('nvtx') span, written to a file this process reads after the run.
 * Counter mode has no launch timestamps (collect.h's timing rule) and replays kernels, so with
 * counters only the program's span is read, and it includes the collection's own work.
 */
#define _GNU_SOURCE
#include "profile_energy.h"

#include "common.h"
#include "db.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int profile_energy_begin(struct profile_energy *pe, int wanted, int counters)
{
    char why[200] = "";
    memset(pe, 0, sizeof *pe);
    if (!wanted)
        return RK_OK;
    if (collect_energy_open(NULL, &pe->meter, why, sizeof why) != RK_OK) {
        rk_warn("no energy reading: %s; the capture stores no energy (run as root, or on a GPU "
                "with an energy counter)",
                why);
        return RK_OK;
    }
    snprintf(pe->dir, sizeof pe->dir, "/tmp/roofkit-energy-XXXXXX");
    if (!mkdtemp(pe->dir)) {
        collect_energy_close(pe->meter);
        pe->meter = NULL;
        return rk_error(RK_EIO, "cannot create a temporary folder in /tmp for --energy");
    }
    if (counters)
        rk_info("--energy with counters: the program's energy is read, and includes the "
                "collection's work; per-kernel energy needs '--metrics none'");
    pe->per_kernel = !counters;
    pe->on = 1;
    return RK_OK;
}

const char *profile_energy_env(const struct profile_energy *pe)
{
    return pe->on && pe->per_kernel ? pe->dir : "";
}

void profile_energy_mark(struct profile_energy *pe, int end)
{
    struct timespec ts;
    if (!pe->on)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (end)
        pe->t1 = t;
    else
        pe->t0 = t;
}

/* Adds line x to spans (summed with a span of the same scope, GPU and name). */
static int add_line(struct db_energy_span **s, int *n, const struct collect_energy_line *x,
                    int64_t device_id)
{
    for (int i = 0; i < *n; i++) {
        struct db_energy_span *y = &(*s)[i];
        if (y->device_id == device_id && strcmp(y->scope, x->scope) == 0 &&
            strcmp(y->name, x->name) == 0) {
            y->energy_j += x->energy_j;
            y->time_ns += x->busy_ns;
            y->launches += x->launches;
            return RK_OK;
        }
    }
    struct db_energy_span *grown = realloc(*s, (size_t)(*n + 1) * sizeof *grown);
    if (!grown)
        return RK_ENOMEM;
    *s = grown;
    struct db_energy_span *y = &grown[(*n)++];
    memset(y, 0, sizeof *y);
    y->device_id = device_id;
    y->scope = strcmp(x->scope, "kernel") == 0 ? "kernel" : "nvtx";
    y->name = x->name;
    y->energy_j = x->energy_j;
    y->time_ns = x->busy_ns;
    y->launches = x->launches;
    return RK_OK;
}

/* The id of the stored device with this UUID, 0 when none. */
static int64_t device_of(const struct db_device *d, int nd, const char *uuid)
{
    for (int i = 0; i < nd; i++)
        if (strcmp(d[i].uuid, uuid) == 0)
            return d[i].id;
    return 0;
}

void profile_energy_store(struct rk_ctx *ctx, struct profile_energy *pe, int64_t capture,
                          char *const *prog)
{
    struct collect_energy_line *lines = NULL;
    struct db_energy_span *spans = NULL;
    struct db_device *devs = NULL;
    char **uuids = NULL, progname[512] = "";
    int nlines = 0, nspans = 0, nd = 0, nu = 0, rc;
    long kshort = 0, nshort = 0;
    double kshort_j = 0, program_j = 0, busy_j = 0;
    if (!pe->on)
        return;
    collect_energy_stop(pe->meter);
    for (int i = 0; prog[i]; i++) {
        size_t at = strlen(progname);
        snprintf(progname + at, sizeof progname - at, "%s%s", i ? " " : "", prog[i]);
    }
    /* the processes' files */
    DIR *dir = opendir(pe->dir);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char path[PATH_MAX];
        if (!strstr(e->d_name, ".energy"))
            continue;
        snprintf(path, sizeof path, "%s/%s", pe->dir, e->d_name);
        collect_energy_load(path, &lines, &nlines); /* an unreadable one: its figures missing */
    }
    if (dir)
        closedir(dir);
    if ((rc = db_list_devices(ctx->db, &devs, &nd)) != RK_OK ||
        (rc = db_capture_gpu_uuids(ctx->db, capture, &uuids, &nu)) != RK_OK)
        goto out;
    /* the program, on each GPU its launches ran on */
    for (int i = 0; i < nu; i++) {
        const struct collect_energy_sample *s = NULL;
        int gpu = collect_energy_find(pe->meter, uuids[i]);
        int ns = collect_energy_samples(pe->meter, gpu, &s);
        double j = collect_energy_between(s, ns, pe->t0, pe->t1);
        if (gpu < 0 || isnan(j) || pe->t1 <= pe->t0)
            continue;
        struct db_energy_span *grown = realloc(spans, (size_t)(nspans + 1) * sizeof *grown);
        if (!grown) {
            rc = RK_ENOMEM;
            goto out;
        }
        spans = grown;
        struct db_energy_span *y = &spans[nspans++];
        memset(y, 0, sizeof *y);
        y->device_id = device_of(devs, nd, uuids[i]);
        y->scope = "program";
        y->name = progname;
        y->energy_j = j;
        y->time_ns = (double)(pe->t1 - pe->t0);
        y->power_w = j / (y->time_ns * 1e-9);
        y->launches = -1;
        program_j += j;
    }
    for (int i = 0; i < nlines; i++) {
        const struct collect_energy_line *x = &lines[i];
        if (strcmp(x->scope, "busy") == 0) {
            busy_j += x->energy_j;
            continue;
        }
        if (strcmp(x->scope, "kshort") == 0 || strcmp(x->scope, "nshort") == 0) {
            if (x->scope[0] == 'k') {
                kshort += x->launches;
                kshort_j += x->energy_j;
            } else {
                nshort += x->launches;
            }
            continue;
        }
        if (strcmp(x->scope, "lost") == 0) {
            rk_warn("--energy: a process launched more kernels than the injection library keeps "
                    "for the apportioning (%ld kept); its kernels and NVTX ranges get no energy, "
                    "the program's figure stays",
                    x->launches);
            continue;
        }
        if (strcmp(x->scope, "kernel") != 0 && strcmp(x->scope, "nvtx") != 0)
            continue;
        if ((rc = add_line(&spans, &nspans, x, device_of(devs, nd, x->uuid))) != RK_OK)
            goto out;
    }
    for (int i = 0; i < nspans; i++)
        if (strcmp(spans[i].scope, "program") != 0)
            spans[i].power_w = spans[i].energy_j / (spans[i].time_ns * 1e-9);
    if (nspans > 0 && (rc = db_insert_energy_spans(ctx->db, capture, spans, nspans)) != RK_OK)
        goto out;
    {
        int nk = 0, nn = 0;
        double kj = 0;
        for (int i = 0; i < nspans; i++) {
            nk += strcmp(spans[i].scope, "kernel") == 0;
            nn += strcmp(spans[i].scope, "nvtx") == 0;
            kj += strcmp(spans[i].scope, "kernel") == 0 ? spans[i].energy_j : 0;
        }
        if (nspans == 0)
            rk_warn("--energy: no reading was stored (the program ran shorter than the energy "
                    "counter's steps, or on no GPU the counter reads)");
        else
            rk_info("energy: the program %.4g J on %d GPU%s; %d kernel%s read (%.4g J), %ld too "
                    "short for a reading (%.3g J apportioned, not stored); %d NVTX range%s read%s",
                    program_j, nu, nu == 1 ? "" : "s", nk, nk == 1 ? "" : "s", kj, kshort, kshort_j,
                    nn, nn == 1 ? "" : "s", nshort ? " (others too short)" : "");
        if (busy_j > 0)
            rk_info("energy: from the first kernel's start to the last one's end the GPU drew "
                    "%.4g J; the kernels got %.4g J of it (%.1f %%), the gaps between them the "
                    "rest",
                    busy_j, kj + kshort_j, 100.0 * (kj + kshort_j) / busy_j);
    }
out:
    if (rc != RK_OK)
        rk_warn("--energy: the readings of capture %lld were not stored (%s)", (long long)capture,
                rk_strerror(rc));
    collect_energy_lines_free(lines, nlines);
    free(spans);
    db_free_devices(devs, nd);
    rk_free_name_list(uuids, nu);
}

void profile_energy_end(struct profile_energy *pe)
{
    DIR *dir = pe->dir[0] ? opendir(pe->dir) : NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char path[PATH_MAX];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", pe->dir, e->d_name);
        unlink(path);
    }
    if (dir) {
        closedir(dir);
        rmdir(pe->dir);
    }
    collect_energy_close(pe->meter);
    memset(pe, 0, sizeof *pe);
}
