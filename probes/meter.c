/*
 * meter.c - the energy meter of probes.h: NVML's energy counter read by a thread while the
 * caller's batch of launches runs (probes.h says how a reading is made).
 *
 * NVML's counter (nvmlDeviceGetTotalEnergyConsumption) is in mJ and moves in steps about every
 * 100 ms on an H100: a reading over one step is only as good as where the step falls. So the
 * thread polls it every ~0.5 ms and keeps the time of each change; the energy between two
 * changes is exact up to the counter's resolution, and the time between them is the number of
 * updates x the median interval between updates, taken over the last HIST intervals of every
 * reading (a late sighting of one update moves nothing; the median of one window's three or
 * four intervals moved with a single late sighting: 13.7 % between five readings of one kernel
 * on an H100).
 * SM clock, temperature and NVML's power reading are sampled beside it every ~10 ms.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CHANGES 8192
#define MAX_SAMPLES PT_MAX_SAMPLES /* what pt_median reads at most */
#define HIST        256            /* intervals between updates kept across readings */
#define NVML_OK     0

struct probes_meter {
    struct pt_nvml nvml;
    pthread_t thread;
    int running;
    atomic_int stop; /* set by end, read by the thread */
    double t_begin, t_end;
    int n_changes;
    double t[MAX_CHANGES];
    unsigned long long mj[MAX_CHANGES];
    int n_samples;
    double clock_mhz[MAX_SAMPLES], temp_c[MAX_SAMPLES], power_w[MAX_SAMPLES];
    double hist[HIST]; /* the intervals between updates of the last readings (a ring) */
    int n_hist, next_hist;
};

int probes_meter_open(const char *pci_bus_id, struct probes_meter **out, char *why, size_t len)
{
    struct probes_meter *m = calloc(1, sizeof *m);
    unsigned long long mj = 0;
    int e;

    *out = NULL;
    if (!m)
        return rk_error(RK_ENOMEM, "out of host memory");
    if (pt_nvml_open(&m->nvml, pci_bus_id) != 0) {
        snprintf(why, len, "NVML (libnvidia-ml.so.1) could not be opened for GPU %s", pci_bus_id);
        free(m);
        return RK_ENODATA;
    }
    if (!m->nvml.get_energy) {
        snprintf(why, len, "this driver's NVML has no energy counter");
    } else if ((e = m->nvml.get_energy(m->nvml.device, &mj)) != NVML_OK) {
        /* nvmlReturn_t: 3 not supported, 4 no permission */
        snprintf(why, len, "%s",
                 e == 3   ? "the GPU has no energy counter (NVML: not supported)"
                 : e == 4 ? "no permission to read the energy counter (NVML: no permission)"
                          : "NVML refused to read the energy counter");
    } else {
        *out = m;
        return RK_OK;
    }
    pt_nvml_close(&m->nvml);
    free(m);
    return RK_ENODATA;
}

void probes_meter_close(struct probes_meter *m)
{
    if (!m)
        return;
    if (m->running) {
        m->stop = 1;
        pthread_join(m->thread, NULL);
    }
    pt_nvml_close(&m->nvml);
    free(m);
}

static void *poll_counter(void *arg)
{
    enum { CLOCK_SM = 1, TEMPERATURE_GPU = 0 };
    struct probes_meter *m = arg;
    unsigned long long last = 0, mj;
    for (long i = 0; !m->stop; i++) {
        if (m->nvml.get_energy(m->nvml.device, &mj) == NVML_OK &&
            (m->n_changes == 0 || mj != last) && m->n_changes < MAX_CHANGES) {
            m->t[m->n_changes] = rk_now_s();
            m->mj[m->n_changes++] = mj;
            last = mj;
        }
        if (i % 20 == 0 && m->n_samples < MAX_SAMPLES) {
            unsigned v;
            int k = m->n_samples++;
            m->clock_mhz[k] = m->nvml.get_clock(m->nvml.device, CLOCK_SM, &v) == NVML_OK ? v : NAN;
            m->temp_c[k] =
                m->nvml.get_temp(m->nvml.device, TEMPERATURE_GPU, &v) == NVML_OK ? v : NAN;
            m->power_w[k] = m->nvml.get_power(m->nvml.device, &v) == NVML_OK ? v * 1e-3 : NAN;
        }
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int probes_meter_begin(struct probes_meter *m)
{
    if (m->running)
        RK_BUG("probes_meter_begin twice");
    m->n_changes = m->n_samples = 0;
    m->stop = 0;
    m->t_begin = rk_now_s();
    if (rk_thread_start(&m->thread, poll_counter, m) != 0)
        return rk_error(RK_EFAIL, "cannot start the thread that reads the energy counter");
    m->running = 1;
    return RK_OK;
}

int probes_meter_end(struct probes_meter *m, long launches, struct probes_energy *out)
{
    int a = -1, b = -1;
    if (!m->running)
        RK_BUG("probes_meter_end without probes_meter_begin");
    m->t_end = rk_now_s();
    m->stop = 1;
    pthread_join(m->thread, NULL);
    m->running = 0;
    memset(out, 0, sizeof *out);
    out->launches = launches;
    out->batch_s = m->t_end - m->t_begin;
    out->sm_clock_mhz = pt_median(m->clock_mhz, m->n_samples);
    out->temp_c = pt_median(m->temp_c, m->n_samples);
    out->power_sampled_w = pt_median(m->power_w, m->n_samples);
    out->energy_j = out->power_w = out->window_s = NAN;
    /* change 0 is the first reading, not a change */
    for (int i = 1; i < m->n_changes; i++) {
        if (a < 0 && m->t[i] >= m->t_begin + PROBES_ENERGY_LEAD_S)
            a = i;
        if (m->t[i] <= m->t_end)
            b = i;
    }
    if (a < 0 || b <= a || m->t[b] - m->t[a] < PROBES_ENERGY_WINDOW_S || launches < 1)
        return RK_ENODATA;
    out->updates = b - a;
    /* The driver updates the counter on a steady period, but a poll may see an update late (a
     * slow NVML call: 13 ms once in ten readings on an H100, 4 % of a 0.3 s window). The window
     * is its updates x the median interval between updates, over this reading's and the last
     * readings' (change 0 is the first poll, not an update), which late sightings cannot move. */
    for (int i = 1; i + 1 < m->n_changes; i++) {
        m->hist[m->next_hist] = m->t[i + 1] - m->t[i];
        m->next_hist = (m->next_hist + 1) % HIST;
        if (m->n_hist < HIST)
            m->n_hist++;
    }
    out->window_s =
        m->n_hist >= 3 ? out->updates * pt_median(m->hist, m->n_hist) : m->t[b] - m->t[a];
    out->power_w = (double)(m->mj[b] - m->mj[a]) * 1e-3 / out->window_s;
    out->energy_j = out->power_w * out->batch_s / (double)launches;
    return RK_OK;
}

long probes_energy_launches(double launch_s)
{
    if (!(launch_s > 0))
        return 1;
    double n = ceil(PROBES_ENERGY_BATCH_S / launch_s);
    return n < 1 ? 1 : n > 1e9 ? 1000000000L : (long)n;
}

/* A reading under way: what the bracket's begin and end work on. */
struct reading {
    struct probes_meter *m;
    long launches; /* of the batch under way */
    int status;    /* probes_meter_end's answer for it */
    struct probes_energy *out;
    double *seconds;
};

static int reading_begin(void *arg)
{
    struct reading *r = arg;
    return probes_meter_begin(r->m);
}

static int reading_end(void *arg)
{
    struct reading *r = arg;
    r->status = probes_meter_end(r->m, r->launches, r->out);
    if (r->seconds)
        *r->seconds += r->out->batch_s;
    return RK_OK;
}

int probes_meter_read(struct probes_meter *m, long launches, probes_batch_fn batch, void *arg,
                      struct probes_energy *out, double *seconds)
{
    struct reading r = {m, launches, RK_ENODATA, out, seconds};
    const struct probes_bracket b = {&r, reading_begin, reading_end};
    int rc = RK_OK;
    memset(out, 0, sizeof *out);
    out->energy_j = out->power_w = NAN;
    for (int attempt = 0; attempt < 2 && r.status == RK_ENODATA && rc == RK_OK; attempt++) {
        if (attempt)
            r.launches *= 2;
        rc = batch(arg, r.launches, &b);
    }
    return rc != RK_OK ? rc : r.status;
}
