/*
 * run_energy.c - energy readings of `roofkit run` (cli.h "rk_energy"): the wiring between the
 * kernels/ harness, which knows how to launch a configuration again, and probes/'s meter, which
 * reads NVML's energy counter (kernels/ may not depend on probes/, so cli/ joins the two).
 *
 * A reading: kernels_session_repeat launches the configuration back to back (warm: the L2 is
 * not flushed between launches, whatever the timed repetitions did) for about
 * PROBES_ENERGY_BATCH_S, with the meter running from the hook's begin to its end; if the counter
 * did not move over at least PROBES_ENERGY_WINDOW_S of whole updates, once more with twice the
 * launches (probes_meter_read, which the energy probe reads its points with too). What a run adds
 * is bounded by that: about 0.8 s a configuration, 2.4 s at most, printed at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernels.h"
#include "probes.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

struct rk_energy {
    struct probes_meter *meter;
    struct probes_energy r; /* the last reading */
    long readings, missed;
    double seconds; /* wall time the batches took */
};

int rk_energy_new(const char *pci_bus_id, struct rk_energy **out)
{
    char why[200] = "";
    struct probes_meter *m = NULL;
    *out = NULL;
    int rc = probes_meter_open(pci_bus_id, &m, why, sizeof why);
    if (rc == RK_ENODATA) {
        rk_warn("energy not measured: %s; the energy columns stay empty", why);
        return RK_OK;
    }
    if (rc != RK_OK)
        return rc;
    if (!(*out = calloc(1, sizeof **out))) {
        probes_meter_close(m);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    (*out)->meter = m;
    return RK_OK;
}

void rk_energy_free(struct rk_energy *e)
{
    if (!e)
        return;
    probes_meter_close(e->meter);
    free(e);
}

/* What a batch of a reading repeats. */
struct repeat {
    struct kernels_session *s;
    const struct kernels_kernel *k;
    const long *params;
};

/* A batch of probes_meter_read: the configuration n times back to back, the meter's bracket
 * as kernels_session_repeat's hook (the same layout). */
static int repeat_batch(void *arg, long n, const struct probes_bracket *b)
{
    const struct repeat *rp = arg;
    const struct kernels_hook hook = {b->arg, b->begin, b->end};
    return kernels_session_repeat(rp->s, rp->k, rp->params, n, &hook);
}

int rk_energy_read(struct rk_energy *e, struct kernels_session *s, const struct kernels_kernel *k,
                   const long *params, double time_ns, struct db_measurement *m)
{
    struct repeat rp = {s, k, params};
    m->energy_launches = 0;
    if (!e)
        return RK_OK;
    int rc = probes_meter_read(e->meter, probes_energy_launches(time_ns * 1e-9), repeat_batch, &rp,
                               &e->r, &e->seconds);
    if (rc != RK_OK && rc != RK_ENODATA)
        return rc;
    if (rc == RK_ENODATA) {
        e->missed++;
        rk_warn("%s: the energy counter did not move over %.2f s; no energy stored", k->name,
                e->r.batch_s);
        return RK_OK;
    }
    e->readings++;
    m->energy_j = e->r.energy_j;
    m->power_w = e->r.power_w;
    m->sm_clock_mhz = e->r.sm_clock_mhz;
    m->temp_c = e->r.temp_c;
    m->energy_launches = e->r.launches;
    return RK_OK;
}

void rk_energy_summary(const struct rk_energy *e)
{
    if (e)
        rk_info("energy: %ld readings (%ld without), %.1f s of back-to-back launches added",
                e->readings, e->missed, e->seconds);
}
