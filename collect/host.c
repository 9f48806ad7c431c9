/*
 * host.c - the questions CUPTI's host API answers without a GPU: which chip this is, whether a
 * chip knows a metric, how many replay passes a metric set costs. `roofkit list metrics` and
 * the checks before a session use them.
 *
 * Assumes libcupti loads libnvperf_host.so itself (it is on the loader path wherever the CUDA
 * toolkit is installed) and needs no driver for these calls.
 */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"
#include "collect.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CHIP "GH100"

int collect_chip_name(int device, char *buf, size_t size)
{
    if (bk_active->chip_name(device, buf, size) == BK_SUCCESS && buf[0])
        return RK_OK;
    snprintf(buf, size, "%s", DEFAULT_CHIP);
    return RK_ENOGPU;
}

static const char *chip_or_default(const char *chip, char *buf, size_t size)
{
    if (chip)
        return chip;
    collect_chip_name(0, buf, size);
    return buf;
}

/* Rebuilds plan->raw from the outputs that are left, keeping first-use order. */
static int reindex(struct collect_plan *plan, char **units)
{
    int nraw = 0;
    char **raw = calloc((size_t)plan->nraw + 1, sizeof *raw);
    char **ru = calloc((size_t)plan->nraw + 1, sizeof *ru);
    int *map = malloc(((size_t)plan->nraw + 1) * sizeof *map);
    if (!raw || !ru || !map) {
        free(raw);
        free(ru);
        free(map);
        return RK_ENOMEM;
    }
    for (int i = 0; i < plan->nraw; i++)
        map[i] = -1;
    for (int o = 0; o < plan->nout; o++) {
        struct collect_output *out = &plan->out[o];
        for (int t = 0; t < out->nterms; t++) {
            int old = out->term[t];
            if (map[old] < 0) {
                map[old] = nraw;
                raw[nraw] = plan->raw[old];
                ru[nraw] = units[old];
                plan->raw[old] = NULL;
                units[old] = NULL;
                nraw++;
            }
            out->term[t] = map[old];
        }
    }
    for (int i = 0; i < plan->nraw; i++) {
        free(plan->raw[i]);
        free(units[i]);
    }
    free(plan->raw);
    free(units);
    free(map);
    plan->raw = raw;
    plan->raw_units = ru;
    plan->nraw = nraw;
    return RK_OK;
}

int collect_plan_check(struct collect_plan *plan, const char *chip)
{
    char chipbuf[64];
    int rc = RK_OK;
    int *bad = NULL;
    chip = chip_or_default(chip, chipbuf, sizeof chipbuf);
    if (!(bad = calloc((size_t)plan->nraw + 1, sizeof *bad)))
        return rk_error(RK_ENOMEM, "out of memory checking metrics");
    for (int i = 0; i < plan->nraw; i++) {
        char unit[64] = "";
        int brc = bk_active->host_check(chip, plan->raw[i], unit, sizeof unit);
        if (brc == BK_INVALID_METRIC_NAME || brc == BK_NOT_SUPPORTED) {
            bad[i] = 1;
        } else if (brc != BK_SUCCESS) {
            rc = rk_error(RK_ECUPTI, "cannot check metric '%s' for %s: %s (CUPTI error %d)",
                          plan->raw[i], chip, bk_active->strerror(brc), brc);
            goto out;
        } else if (!plan->raw_units[i] && !(plan->raw_units[i] = strdup(unit))) {
            rc = rk_error(RK_ENOMEM, "out of memory checking metrics");
            goto out;
        }
    }
    /* Drop the outputs that need an unknown metric. */
    int kept = 0;
    for (int o = 0; o < plan->nout; o++) {
        struct collect_output *out = &plan->out[o];
        int ok = 1;
        for (int t = 0; t < out->nterms; t++)
            ok &= !bad[out->term[t]];
        if (ok) {
            plan->out[kept++] = *out;
            continue;
        }
        char **d = realloc(plan->dropped, (size_t)(plan->ndropped + 1) * sizeof *d);
        if (!d) {
            rc = rk_error(RK_ENOMEM, "out of memory checking metrics");
            goto out;
        }
        plan->dropped = d;
        plan->dropped[plan->ndropped++] = out->alias ? out->alias : out->raw;
        if (out->alias)
            free(out->raw);
        else
            free(out->alias);
        rk_warn("metric '%s' is not available on %s; it is not collected",
                plan->dropped[plan->ndropped - 1], chip);
    }
    plan->nout = kept;
    if ((rc = reindex(plan, plan->raw_units)) != RK_OK) {
        rc = rk_error(rc, "out of memory checking metrics");
        goto out;
    }
    if (plan->nout == 0)
        rc = rk_error(RK_EUSAGE, "none of the requested metrics is available on %s", chip);
out:
    free(bad);
    return rc;
}

int collect_count_passes_for(const char *chip, const char *const *names, int n, int *passes)
{
    struct collect_plan *plan = NULL;
    char chipbuf[64];
    int rc;
    *passes = 0;
    chip = chip_or_default(chip, chipbuf, sizeof chipbuf);
    if ((rc = collect_plan_new(names, n, &plan)) != RK_OK)
        return rc;
    /* Name each unknown metric: ConfigAddMetrics would only say "invalid parameter". */
    for (int i = 0; i < plan->nraw && rc == RK_OK; i++) {
        char unit[64];
        int brc = bk_active->host_check(chip, plan->raw[i], unit, sizeof unit);
        if (brc == BK_INVALID_METRIC_NAME || brc == BK_NOT_SUPPORTED)
            rc = rk_error(RK_EUSAGE,
                          "metric '%s' is not available on %s; see 'roofkit list "
                          "metrics'",
                          plan->raw[i], chip);
        else if (brc != BK_SUCCESS)
            rc = rk_error(RK_ECUPTI, "cannot check metric '%s' for %s: %s (CUPTI error %d)",
                          plan->raw[i], chip, bk_active->strerror(brc), brc);
    }
    if (rc == RK_OK) {
        int brc = bk_active->host_passes(chip, (const char *const *)plan->raw, plan->nraw, passes);
        if (brc != BK_SUCCESS)
            rc = rk_error(RK_ECUPTI, "cannot count replay passes for %s: %s (CUPTI error %d)", chip,
                          bk_active->strerror(brc), brc);
    }
    collect_plan_free(plan);
    return rc;
}

int collect_metric_supported(const char *chip, const char *name, int *supported, int *passes)
{
    const struct collect_metric *m = collect_metric_find(name);
    const char *one[1] = {name};
    const char *const *raw = m ? m->raw : one;
    int nraw = m ? m->nterms : 1;
    char chipbuf[64];
    chip = chip_or_default(chip, chipbuf, sizeof chipbuf);
    *supported = 0;
    if (passes)
        *passes = 0;
    for (int i = 0; i < nraw; i++) {
        char unit[64];
        int brc = bk_active->host_check(chip, raw[i], unit, sizeof unit);
        if (brc == BK_INVALID_METRIC_NAME || brc == BK_NOT_SUPPORTED)
            return RK_OK;
        if (brc != BK_SUCCESS)
            return rk_error(RK_ECUPTI, "cannot check metric '%s' for %s: %s (CUPTI error %d)",
                            raw[i], chip, bk_active->strerror(brc), brc);
    }
    *supported = 1;
    if (passes) {
        int brc = bk_active->host_passes(chip, raw, nraw, passes);
        if (brc != BK_SUCCESS)
            return rk_error(RK_ECUPTI, "cannot count replay passes of '%s' for %s: %s", name, chip,
                            bk_active->strerror(brc));
    }
    return RK_OK;
}

int collect_plan_groups(const struct collect_plan *plan, const char *chip, int *group, int *ngroups)
{
    char chipbuf[64];
    int rc = RK_OK;
    /* members of the group being tried: the group's raw names so far, then the candidate */
    const char **names = calloc((size_t)plan->nraw + 1, sizeof *names);
    chip = chip_or_default(chip, chipbuf, sizeof chipbuf);
    *ngroups = 0;
    if (!names)
        return rk_error(RK_ENOMEM, "out of memory grouping metrics");
    /* First fit: each metric joins the first group it still fits in one pass with. */
    for (int i = 0; i < plan->nraw && rc == RK_OK; i++) {
        group[i] = -1;
        for (int g = 0; g < *ngroups && group[i] < 0; g++) {
            int n = 0, passes = 0;
            for (int j = 0; j < i; j++)
                if (group[j] == g)
                    names[n++] = plan->raw[j];
            names[n++] = plan->raw[i];
            int brc = bk_active->host_passes(chip, names, n, &passes);
            if (brc != BK_SUCCESS)
                rc = rk_error(RK_ECUPTI, "cannot count replay passes for %s: %s (CUPTI error %d)",
                              chip, bk_active->strerror(brc), brc);
            else if (passes == 1)
                group[i] = g;
        }
        if (group[i] < 0)
            group[i] = (*ngroups)++;
    }
    free(names);
    return rc;
}

int collect_plan_group_names(const struct collect_plan *plan, const char *chip, char ***lists,
                             int *ngroups)
{
    int *group = calloc((size_t)plan->nraw + 1, sizeof *group), ng = 0, rc;
    char **out = NULL;
    *lists = NULL;
    *ngroups = 0;
    if (!group)
        return rk_error(RK_ENOMEM, "out of memory grouping metrics");
    if ((rc = collect_plan_groups(plan, chip, group, &ng)) == RK_OK && ng > 0 &&
        !(out = calloc((size_t)ng, sizeof *out)))
        rc = rk_error(RK_ENOMEM, "out of memory grouping metrics");
    for (int g = 0; out && g < ng && rc == RK_OK; g++) {
        size_t len = 1;
        for (int i = 0; i < plan->nraw; i++)
            len += group[i] == g ? strlen(plan->raw[i]) + 1 : 0;
        if (!(out[g] = calloc(1, len))) {
            rc = rk_error(RK_ENOMEM, "out of memory grouping metrics");
            break;
        }
        for (int i = 0; i < plan->nraw; i++)
            if (group[i] == g) {
                if (out[g][0])
                    strcat(out[g], ",");
                strcat(out[g], plan->raw[i]);
            }
    }
    free(group);
    if (rc != RK_OK) {
        for (int g = 0; out && g < ng; g++)
            free(out[g]);
        free(out);
        return rc;
    }
    *lists = out;
    *ngroups = ng;
    return RK_OK;
}
