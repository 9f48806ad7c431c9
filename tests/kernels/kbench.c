/*
 * kbench.c - a driver for kernels/ without the database: runs kernels over shapes
 * and parameter sets through the same harness as `roofkit run` and prints one line
 * per measurement (kernel, precision, shape, parameters, median/min/max time,
 * GFLOP/s, effective bandwidth counting A, B and C once, verification). Used by
 * tests/kernels/device-check.sh to tune defaults and take the closing figures on
 * the GPU machine in few calls; not a test itself.
 *
 *   kbench [--suite NAME | --kernel PAT[,PAT...]] [--sizes N|MxNxK,...]
 *          [--precision fp32,fp64] [--param NAME=V1,V2 ...] [--reps N] [--warm]
 *          [--copy]   (first: device-to-device cudaMemcpy bandwidth, the copy ceiling)
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "kernels.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPECS  8
#define MAX_VALUES 16

struct pspec {
    char name[32];
    long v[MAX_VALUES];
    int n;
};

static int parse_shape(const char *s, struct kernels_shape *sh)
{
    long a, b, c;
    char tail;
    if (sscanf(s, "%ldx%ldx%ld%c", &a, &b, &c, &tail) == 3) {
        sh->m = a;
        sh->n = b;
        sh->k = c;
        return 0;
    }
    if (sscanf(s, "%ld%c", &a, &tail) == 1) {
        sh->m = sh->n = sh->k = a;
        return 0;
    }
    return -1;
}

static double copy_bandwidth(void)
{
    const size_t bytes = (size_t)2 << 30;
    void *src = NULL, *dst = NULL;
    cudaEvent_t e0, e1;
    float ms, best = 1e30f;
    if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess)
        return NAN;
    cudaMemset(src, 1, bytes);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double all[10];
    for (int i = 0; i < 12; i++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 2)
            all[i - 2] = ms;
        if (i >= 2 && ms < best)
            best = ms;
    }
    ms = (float)model_median(all, 10);
    cudaFree(src);
    cudaFree(dst);
    printf("copy: cudaMemcpy D2D 2 GiB: median %.1f GB/s (read+write), best %.1f GB/s\n",
           2.0 * bytes / (ms * 1e6), 2.0 * bytes / (best * 1e6));
    return 2.0 * bytes / (ms * 1e6);
}

/* Runs k over all combinations of the specs that apply to it. */
static int run_kernel(struct kernels_session *s, const struct kernels_kernel *k, int prec,
                      const struct kernels_shape *sh, const struct pspec *specs, int nspecs,
                      const struct kernels_options *opt, int *failures)
{
    long base[KERNELS_MAX_PARAMS];
    int idx[MAX_SPECS] = {0}, map[MAX_SPECS];
    for (int i = 0; i < k->n_params; i++)
        base[i] = k->params[i].def;
    for (int j = 0; j < nspecs; j++)
        map[j] = kernels_param_index(k, specs[j].name);
    for (;;) {
        long p[KERNELS_MAX_PARAMS];
        char why[200];
        struct kernels_result r;
        struct model_cost cost;
        memcpy(p, base, sizeof p);
        for (int j = 0; j < nspecs; j++)
            if (map[j] >= 0)
                p[map[j]] = specs[j].v[idx[j]];
        if (kernels_check(k, prec, p, why, sizeof why) != RK_OK) {
            printf("%-16s %s %ldx%ldx%ld skipped: %s\n", k->name, kernels_precision_name(prec),
                   sh->m, sh->n, sh->k, why);
        } else {
            int rc = kernels_session_measure(s, k, p, opt, &r);
            if (rc == RK_ECUDA)
                return rc;
            if (rc == RK_OK) {
                double e = prec == KERNELS_FP64 ? 8 : 4;
                double t = r.time_median_ns * 1e-9;
                double bytes =
                    ((double)sh->m * sh->k + (double)sh->k * sh->n + (double)sh->m * sh->n) * e;
                double model_bytes = NAN;
                if (kernels_cost(k, prec, sh, r.params, &cost) == RK_OK)
                    model_bytes = cost.bytes_dram;
                printf("%-16s %s %6ldx%-6ldx%-6ld %-44s med %10.2f us min %10.2f max %10.2f "
                       "%9.1f GFLOP/s %7.1f GB/s eff  %s err %.2e regs %d grid %ux%u blk %u "
                       "model_bytes %.3g\n",
                       k->name, kernels_precision_name(prec), sh->m, sh->n, sh->k, r.params_json,
                       r.time_median_ns / 1e3, r.time_min_ns / 1e3, r.time_max_ns / 1e3,
                       2.0 * sh->m * sh->n * sh->k / t / 1e9, bytes / t / 1e9,
                       r.verified ? "ok  " : "FAIL", r.rel_error, r.registers, r.grid[0], r.grid[1],
                       r.block[0], model_bytes);
                if (!r.verified)
                    (*failures)++;
            }
        }
        fflush(stdout);
        /* next combination */
        int j = 0;
        for (; j < nspecs; j++) {
            if (map[j] < 0)
                continue;
            if (++idx[j] < specs[j].n)
                break;
            idx[j] = 0;
        }
        if (j == nspecs)
            return RK_OK;
    }
}

int main(int argc, char **argv)
{
    const char *suite = NULL, *kern = NULL, *sizes = NULL, *precs = "fp32,fp64";
    struct pspec specs[MAX_SPECS];
    int nspecs = 0, failures = 0, rc, do_copy = 0;
    struct kernels_options opt = {10, 0, 0, NULL};
    struct kernels_session *s = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--suite") && v)
            suite = argv[++i];
        else if (!strcmp(a, "--kernel") && v)
            kern = argv[++i];
        else if (!strcmp(a, "--sizes") && v)
            sizes = argv[++i];
        else if (!strcmp(a, "--precision") && v)
            precs = argv[++i];
        else if (!strcmp(a, "--reps") && v)
            opt.reps = atoi(argv[++i]);
        else if (!strcmp(a, "--warm"))
            opt.warm = 1;
        else if (!strcmp(a, "--copy"))
            do_copy = 1;
        else if (!strcmp(a, "--param") && v && nspecs < MAX_SPECS) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            char *eq = strchr(buf, '=');
            if (!eq)
                return fprintf(stderr, "bad --param %s\n", buf), 2;
            *eq = '\0';
            if (strlen(buf) >= sizeof specs[nspecs].name)
                return fprintf(stderr, "parameter name too long\n"), 2;
            memcpy(specs[nspecs].name, buf, strlen(buf) + 1);
            long *vals = NULL;
            int nv = 0;
            if (rk_parse_long_list(eq + 1, &vals, &nv) != RK_OK || nv > MAX_VALUES) {
                free(vals);
                return fprintf(stderr, "bad --param values %s\n", eq + 1), 2;
            }
            memcpy(specs[nspecs].v, vals, sizeof *vals * (size_t)nv);
            specs[nspecs].n = nv;
            free(vals);
            nspecs++;
        } else {
            fprintf(stderr, "kbench: unknown argument '%s'\n", a);
            return 2;
        }
    }
    rc = kernels_session_open(0, 0x5eedULL, &s);
    if (rc != RK_OK)
        return rc;
    printf("device: %s, %d SMs, L2 %lld B\n", kernels_session_device(s)->name,
           kernels_session_device(s)->sm_count, (long long)kernels_session_device(s)->l2_bytes);
    if (do_copy)
        copy_bandwidth();

    /* Work list: (patterns, shapes) entries from the suite, or from --kernel/--sizes. */
    struct kernels_suite custom;
    const struct kernels_suite *su;
    if (suite) {
        su = kernels_suite_find(suite);
        if (!su)
            return fprintf(stderr, "no suite %s\n", suite), 2;
    } else {
        /* kpats is kept to the end: the entry's patterns point into it */
        static char **kpats;
        static int nk;
        char **shapes = NULL;
        int nshapes = 0;
        if (!sizes)
            sizes = "1024";
        memset(&custom, 0, sizeof custom);
        custom.n_entries = 1;
        if ((kern && rk_parse_name_list(kern, &kpats, &nk) != RK_OK) ||
            nk > KERNELS_SUITE_MAX_KERNELS - 1)
            return fprintf(stderr, "bad --kernel list %s\n", kern), 2;
        for (int k = 0; k < nk; k++)
            custom.entries[0].kernels[k] = kpats[k];
        if (rk_parse_name_list(sizes, &shapes, &nshapes) != RK_OK)
            return fprintf(stderr, "bad --sizes list %s\n", sizes), 2;
        /* one suite entry holds at most KERNELS_SUITE_MAX_SHAPES: more, or a shape that does
         * not parse, is refused rather than dropped (a bench that silently runs fewer shapes
         * than it was given reads as complete) */
        int ns = 0, bad = nshapes > KERNELS_SUITE_MAX_SHAPES;
        for (int k = 0; k < nshapes && !bad; k++)
            bad = parse_shape(shapes[k], &custom.entries[0].shapes[ns++]) != 0;
        rk_free_name_list(shapes, nshapes);
        if (bad)
            return fprintf(stderr, "bad --sizes list %s: at most %d shapes N or MxNxK\n", sizes,
                           KERNELS_SUITE_MAX_SHAPES),
                   2;
        custom.entries[0].n_shapes = ns;
        su = &custom;
    }
    if (suite && kern) {
        /* filter suite kernels by --kernel */
    }
    for (int e = 0; e < su->n_entries; e++) {
        const struct kernels_suite_entry *en = &su->entries[e];
        for (int si = 0; si < kernels_suite_entry_size(en); si++) {
            struct kernels_shape shape;
            kernels_suite_entry_shape(en, si, &shape);
            for (int prec = 0; prec < KERNELS_NPREC; prec++) {
                if (!strstr(precs, kernels_precision_name(prec)))
                    continue;
                rc = kernels_session_prepare(s, prec, &shape);
                if (rc != RK_OK) {
                    if (rc == RK_ENOMEM)
                        continue;
                    goto out;
                }
                for (int ki = 0; ki < kernels_count(); ki++) {
                    const struct kernels_kernel *k = kernels_get(ki);
                    int hit = 0;
                    for (int pi = 0; en->kernels[pi]; pi++)
                        hit |= kernels_match(en->kernels[pi], k->name);
                    if (suite && kern && !kernels_match(kern, k->name))
                        hit = 0;
                    if (!hit || !(k->precisions & KERNELS_PREC_BIT(prec)))
                        continue;
                    rc = run_kernel(s, k, prec, &shape, specs, nspecs, &opt, &failures);
                    if (rc != RK_OK)
                        goto out;
                }
            }
        }
    }
    rc = RK_OK;
out:
    kernels_session_close(s);
    printf("kbench: %d verification failures, rc %d\n", failures, rc);
    return rc != RK_OK ? rc : (failures ? RK_EVERIFY : 0);
}
