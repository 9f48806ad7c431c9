/*
 * fuzz_metrics.c - metric lists (--metrics of run and profile): the comma-separated list
 * (rk_parse_name_list), then collect_plan_new (collect/metrics.c: aliases, the default
 * set, names shaped like raw CUPTI metrics), a plan's evaluation over made-up raw values
 * (some NaN), whether each output is additive, and the combination of two launches.
 * The host API check (collect_plan_check) is left out: it loads CUPTI's libraries.
 *
 * Properties: every output points at raw metrics the plan holds; an output is null
 * exactly when one of its terms is NaN.
 */
#include "fuzz.h"

#include "collect.h"
#include "common.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    char **names = NULL;
    int n = 0;
    struct collect_plan *plan = NULL;
    if (!s)
        return 0;
    if (rk_parse_name_list(s, &names, &n) != RK_OK)
        goto out;
    if (collect_plan_new((const char *const *)names, n, &plan) != RK_OK)
        goto out;
    FUZZ_CHECK(plan->nout >= 1 && plan->nraw >= 1);
    {
        double *raw = calloc((size_t)plan->nraw, sizeof *raw);
        struct collect_value *v = calloc((size_t)plan->nout, sizeof *v);
        struct collect_value *combined = calloc((size_t)plan->nout, sizeof *combined);
        struct collect_launch la[2];
        struct collect_result r;
        FUZZ_CHECK(raw && v && combined);
        for (int i = 0; i < plan->nraw; i++)
            raw[i] = (i + size) % 5 == 0 ? NAN : (double)(i + 1) * 1e3;
        collect_plan_eval(plan, raw, v);
        for (int i = 0; i < plan->nout; i++) {
            const struct collect_output *o = &plan->out[i];
            int any_nan = 0;
            FUZZ_CHECK(o->nterms >= 1 && o->nterms <= COLLECT_MAX_TERMS && o->raw);
            for (int t = 0; t < o->nterms; t++) {
                FUZZ_CHECK(o->term[t] >= 0 && o->term[t] < plan->nraw);
                any_nan |= isnan(raw[o->term[t]]);
            }
            FUZZ_CHECK(v[i].is_null == any_nan);
            (void)collect_output_additive(plan, i);
        }
        memset(la, 0, sizeof la);
        memset(&r, 0, sizeof r);
        for (int l = 0; l < 2; l++) {
            la[l].has_counters = 1;
            la[l].values = v;
            la[l].nvalues = plan->nout;
            la[l].duration_ns = l ? 0.0 : 1e3;
        }
        r.plan = plan;
        r.launch = la;
        r.nlaunch = 2;
        FUZZ_CHECK(collect_result_combine(&r, combined) == 2);
        free(raw);
        free(v);
        free(combined);
    }
out:
    collect_plan_free(plan);
    rk_free_name_list(names, n);
    free(s);
    return 0;
}
