/*
 * energy.c - the energy model's inputs (analysis.h "energy"): which stored ceilings are a
 * device's energy constants and which flops and bytes of a measurement they are charged to.
 * The work is the roofline placement's (analysis_place: the counters when the row has them,
 * else the analytic counts, never mixed); its flops go to the energy per flop of the pipe and
 * precision the placement judges them by; each level's bytes to that level's energy per byte
 * (L1 is not charged: the energy probe has no L1 sweep).
 */
#include "analysis.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int analysis_energy_of(const struct analysis_device *d, struct model_energy *e)
{
    char name[48];
    int found = 0;
    const struct db_ceiling *c;
    for (int o = 0; o < MODEL_EOP_COUNT; o++) {
        snprintf(name, sizeof name, "energy_flop_%s",
                 model_energy_op_name((enum model_energy_op)o));
        c = analysis_find_ceiling(d, name);
        e->eps_flop[o] = c && c->unit && strcmp(c->unit, "pJ/FLOP") == 0 ? c->value * 1e-12 : NAN;
        found += !isnan(e->eps_flop[o]);
    }
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++) {
        snprintf(name, sizeof name, "energy_byte_%s", model_level_name((enum model_level_id)l));
        c = analysis_find_ceiling(d, name);
        e->eps_byte[l] = c && c->unit && strcmp(c->unit, "pJ/B") == 0 ? c->value * 1e-12 : NAN;
        found += !isnan(e->eps_byte[l]);
    }
    c = analysis_find_ceiling(d, "energy_static");
    e->p0_w = c && c->unit && strcmp(c->unit, "W") == 0 ? c->value : NAN;
    found += !isnan(e->p0_w);
    return found;
}

/* The energy op of what a measurement is judged as; -1 when none is fitted. */
static int op_of(const struct analysis_judge *j)
{
    return model_energy_op_of(j->precision, j->pipe == ANALYSIS_PIPE_TENSOR);
}

int analysis_energy_predict(const struct analysis_device *d, const struct db_measurement_row *row,
                            double time_s, double *joules, const char **why)
{
    struct model_energy e;
    struct model_energy_work w;
    struct analysis_point p;
    int op;

    *joules = NAN;
    *why = NULL;
    if (!d || analysis_energy_of(d, &e) == 0) {
        *why = "no energy ceilings (probe energy_fit)";
        return RK_ENODATA;
    }
    analysis_place(d, row, &p);
    memset(&w, 0, sizeof w);
    if (!(p.flops >= 0)) {
        *why = "flops unknown";
        return RK_ENODATA;
    }
    op = op_of(&p.judge);
    if (p.flops > 0 && op < 0) {
        *why = "no energy per flop for its precision and pipe";
        return RK_ENODATA;
    }
    if (p.flops > 0)
        w.flops[op] = p.flops;
    for (int l = 0; l < MODEL_LEVEL_COUNT; l++)
        w.bytes[l] = l == MODEL_LEVEL_L1 ? 0 : p.bytes[l];
    w.time_s = time_s;
    return model_energy_predict(&e, &w, joules, why) == RK_OK ? RK_OK : RK_ENODATA;
}
