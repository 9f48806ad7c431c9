/*
 * run_glue.c - the option parsing of `roofkit run` (cli/run.c's static parse_args and
 * build_plan), reached without editing run.c: this file includes it. fuzz_run_parse()
 * does what cmd_run does before it looks for a GPU, then what run_combos and measure_one
 * check on the CPU for each planned configuration (kernels_check, kernels_cost,
 * kernels_bytes_needed), one parameter value at a time.
 */
#include "../../cli/run.c"

#include "fuzz.h"

int fuzz_run_parse(int argc, char **argv);
void fuzz_run_shape(const char *s);

/* One --sizes item: accepted only as N or MxNxK, every dimension >= 1 (a fourth
 * dimension was once dropped silently). */
void fuzz_run_shape(const char *s)
{
    struct kernels_shape sh;
    int xs = 0;
    for (const char *p = s; *p; p++)
        xs += *p == 'x';
    if (parse_shape(s, &sh) == RK_OK)
        FUZZ_CHECK((xs == 0 || xs == 2) && sh.m >= 1 && sh.n >= 1 && sh.k >= 1);
}

int fuzz_run_parse(int argc, char **argv)
{
    struct run_opts o;
    struct plan pl;
    int rc;
    memset(&o, 0, sizeof o);
    rc = parse_args(argc, argv, &o);
    if (rc == RK_OK)
        rc = build_plan(&o, &pl);
    for (int e = 0; rc == RK_OK && e < pl.n_entries; e++) {
        const struct plan_entry *pe = &pl.entries[e];
        FUZZ_CHECK(pe->n_kernels >= 1 && pe->n_kernels <= 64);
        for (int i = 0; i < pe->n_kernels; i++) {
            const struct kernels_kernel *k = pe->kernels[i];
            for (int prec = 0; prec < KERNELS_NPREC; prec++) {
                if (!(o.precisions & k->precisions & KERNELS_PREC_BIT(prec)))
                    continue;
                for (int j = -1; j < o.n_specs; j++) {
                    int at = j < 0 ? -1 : spec_index(k, &o.specs[j]);
                    int nv = j < 0 ? 1 : o.specs[j].n;
                    if (j >= 0 && at < 0)
                        continue;
                    for (int v = 0; v < nv; v++) {
                        long p[KERNELS_MAX_PARAMS];
                        char why[200];
                        for (int q = 0; q < k->n_params; q++)
                            p[q] = k->params[q].def;
                        if (at >= 0)
                            p[at] = o.specs[j].values[v];
                        if (kernels_check(k, prec, p, why, sizeof why) != RK_OK)
                            continue;
                        for (int si = 0; si < pe->n_shapes; si++) {
                            struct model_cost cost;
                            struct kernels_shape shape;
                            char json[256];
                            plan_shape(pe, si, &shape);
                            (void)kernels_cost(k, prec, &shape, p, &cost);
                            (void)kernels_bytes_needed(prec, &shape);
                            kernels_params_json(k, p, json, sizeof json);
                            FUZZ_CHECK(memchr(json, '\0', sizeof json) != NULL);
                        }
                    }
                }
            }
        }
    }
    free_opts(&o);
    return rc;
}
