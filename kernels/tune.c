/*
 * tune.c - the configurations `roofkit tune` sweeps (kernels.h "tune space"): for a
 * TSM2 kernel t1 x t2 x t3, for an ISM2 kernel t3 x tcf, each axis holding only the
 * values the kernel can run on the shape. t2 and t3 size register arrays and are
 * instantiated as powers of two 1..16 (tsm2.cu); t1 and tcf are run-time values,
 * so their axes are a choice: t1 in {64, 128, 256, 512} (multiples of 32 that hold
 * every t3; 1024 rarely fits the registers), tcf from 1 to 64 in steps of about
 * sqrt(2) (the default rule in tsm2.cu stays at or below 16 rows per thread).
 * Every other parameter keeps its registry default (an AUTO zero is resolved by
 * the kernel for the shape). Pure: no CUDA call, no I/O.
 */
#include "common.h"
#include "internal.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>

static const long pow2_16[] = {1, 2, 4, 8, 16};
static const long t1_axis[] = {64, 128, 256, 512};
static const long tcf_axis[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

static int is_tsm2(const struct kernels_kernel *k)
{
    /* the entry point tsm2 shares V3's cost family but is judged by kernels_tsm2_sweep */
    return (k->cost_family == MODEL_FAM_TSM2_V2 || k->cost_family == MODEL_FAM_TSM2_V3) &&
           strcmp(k->name, "tsm2") != 0;
}

static int is_ism2(const struct kernels_kernel *k)
{
    return k->cost_family == MODEL_FAM_ISM2 || k->cost_family == MODEL_FAM_ISM2_OPT2;
}

int kernels_tune_kernel_ok(const struct kernels_kernel *k, int ism2)
{
    return k && (ism2 ? is_ism2(k) : is_tsm2(k));
}

static int set_axis(struct kernels_tune_axis *a, const struct kernels_kernel *k, const char *name,
                    const long *values, int n, long max)
{
    memset(a, 0, sizeof *a);
    a->name = name;
    a->index = kernels_param_index(k, name);
    if (a->index < 0)
        return RK_EUSAGE;
    for (int i = 0; i < n && a->n < KERNELS_TUNE_MAX_VALUES; i++)
        if (values[i] <= max)
            a->values[a->n++] = values[i];
    return a->n > 0 ? RK_OK : RK_EUSAGE;
}

/* Replaces axis a's values by the n given ones (sorted, deduplicated by the caller's
 * check below). */
static int override_axis(struct kernels_tune_axis *a, const long *values, int n, char *why,
                         size_t len)
{
    if (n < 1 || n > KERNELS_TUNE_MAX_VALUES) {
        snprintf(why, len, "--%s takes 1 to %d values", a->name, KERNELS_TUNE_MAX_VALUES);
        return RK_EUSAGE;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (values[i] == values[j]) {
                snprintf(why, len, "--%s lists %ld twice", a->name, values[i]);
                return RK_EUSAGE;
            }
    a->n = n;
    for (int i = 0; i < n; i++)
        a->values[i] = values[i];
    /* ascending, for printing and for model_tune_nearest */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a->values[j - 1] > a->values[j]; j--) {
            long t = a->values[j];
            a->values[j] = a->values[j - 1];
            a->values[j - 1] = t;
        }
    return RK_OK;
}

int kernels_tune_space_init(const struct kernels_kernel *k, const struct kernels_shape *shape,
                            const long *override, int n_override, struct kernels_tune_space *out,
                            char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (!k || !shape || shape->m < 1 || shape->n < 1 || shape->k < 1) {
        snprintf(why, why_len, "no kernel or no shape");
        return RK_EUSAGE;
    }
    out->kernel = k;
    if (is_tsm2(k)) {
        /* t2 <= n as in Alg. 5's box, plus the one tile that covers n in one pass */
        if (set_axis(&out->axes[0], k, "t1", t1_axis, 4, 1024) != RK_OK ||
            set_axis(&out->axes[1], k, "t2", pow2_16, 5, kernels_tsm2_cols(shape->n)) != RK_OK ||
            set_axis(&out->axes[2], k, "t3", pow2_16, 5, 16) != RK_OK)
            goto bad;
        out->n_axes = 3;
        if (override && override_axis(&out->axes[0], override, n_override, why, why_len))
            return RK_EUSAGE;
    } else if (is_ism2(k)) {
        /* a t3 wider than the rounded-up k only loads padding */
        if (set_axis(&out->axes[0], k, "t3", pow2_16, 5, kernels_tsm2_cols(shape->k)) != RK_OK ||
            set_axis(&out->axes[1], k, "tcf", tcf_axis, 12, 1000000) != RK_OK)
            goto bad;
        out->n_axes = 2;
        if (override && override_axis(&out->axes[1], override, n_override, why, why_len))
            return RK_EUSAGE;
    } else {
        snprintf(why, why_len, "%s is not a TSM2 V2/V3 or ISM2 kernel", k->name);
        return RK_EUSAGE;
    }
    for (int a = 0; a < out->n_axes; a++) {
        const struct kernels_param *p = &k->params[out->axes[a].index];
        for (int i = 0; i < out->axes[a].n; i++) {
            long v = out->axes[a].values[i];
            if (v < (p->min > 1 ? p->min : 1) || v > p->max) {
                snprintf(why, why_len, "%s = %ld is outside %s's range %ld..%ld", p->name, v,
                         k->name, p->min > 1 ? p->min : 1, p->max);
                return RK_EUSAGE;
            }
        }
    }
    return RK_OK;
bad:
    snprintf(why, why_len, "%s has no tunable %s parameters", k->name,
             is_tsm2(k) ? "t1, t2, t3" : "t3, tcf");
    return RK_EUSAGE;
}

long kernels_tune_space_size(const struct kernels_tune_space *s)
{
    long n = s->n_axes > 0 ? 1 : 0;
    for (int a = 0; a < s->n_axes; a++)
        n *= s->axes[a].n;
    return n;
}

void kernels_tune_space_params(const struct kernels_tune_space *s, long i, long *params)
{
    const struct kernels_kernel *k = s->kernel;
    for (int p = 0; p < KERNELS_MAX_PARAMS; p++)
        params[p] = p < k->n_params ? k->params[p].def : 0;
    /* the last axis varies fastest */
    for (int a = s->n_axes - 1; a >= 0; a--) {
        const struct kernels_tune_axis *ax = &s->axes[a];
        params[ax->index] = ax->values[i % ax->n];
        i /= ax->n;
    }
}

int kernels_tune_same(const struct kernels_tune_space *s, const long *a, const long *b)
{
    for (int x = 0; x < s->n_axes; x++)
        if (a[s->axes[x].index] != b[s->axes[x].index])
            return 0;
    return 1;
}

/* ---- the entry point's sweep ------------------------------------------------------ */

static int push(long (*out)[KERNELS_MAX_PARAMS], int n, int max, long variant, long t1, long t2,
                long t3, long split, long apipe, long rpt, long cblocks)
{
    const long v[KERNELS_MAX_PARAMS] = {variant, t1, t2, t3, split, apipe, rpt, cblocks};
    if (n >= max)
        return n;
    for (int i = 0; i < n; i++) /* no configuration twice */
        if (memcmp(out[i], v, sizeof v) == 0)
            return n;
    memcpy(out[n], v, sizeof v);
    return n + 1;
}

int kernels_tsm2_sweep(int prec, const struct kernels_shape *shape, long (*out)[KERNELS_MAX_PARAMS],
                       int max)
{
    static const int xcols[] = {KERNELS_TSM2_XCOLS};
    const long c2 = kernels_tsm2_cols(shape->n), ck = kernels_tsm2_cols(shape->k);
    long x = 0;
    int n = 0;
    for (int i = 0; i < (int)(sizeof xcols / sizeof xcols[0]) && !x; i++)
        if (xcols[i] >= shape->n && xcols[i] != c2 && (shape->n > 16 || xcols[i] < c2) &&
            prec == KERNELS_FP32) /* fp32 has them only */
            x = xcols[i];
    if (shape->k <= KERNELS_TSM2_ISM2_K) {
        for (long t3 = 4; t3 <= 16 && t3 <= (ck > 4 ? ck : 4); t3 *= 2) {
            for (long tcf = 0; tcf <= 4; tcf = tcf ? 2 * tcf : 1)
                n = push(out, n, max, 3, 0, 0, t3, tcf, 2, 0, 0);
            if (shape->n > 16 && shape->n <= 32) /* KERNELS_ISM2_WIDE_COLS: one pass */
                n = push(out, n, max, 3, 0, shape->n <= 24 ? 24 : 32, t3, 0, 2, 0, 0);
        }
        if (shape->k <= KERN_ISM2_VEC_MAXK) /* rows in vectors, every column at once: tcf
                                               chosen, and from k = 3 one vector a thread */
            for (long t1 = 128; t1 <= 256; t1 *= 2) {
                n = push(out, n, max, 3, t1, 0, 0, 0, 3, 0, 0);
                if (shape->k >= 3)
                    n = push(out, n, max, 3, t1, 0, 0, 1, 3, 0, 0);
            }
        if (shape->k <= 2) /* outer product, rank-2 update: slices chosen, and one */
            for (long t1 = 128; t1 <= 256; t1 *= 2) {
                n = push(out, n, max, 3, t1, 0, 0, 0, KERN_ISM2_OUTER, 0, 0);
                n = push(out, n, max, 3, t1, shape->n, 0, 0, KERN_ISM2_OUTER, 0, 0);
            }
        n = push(out, n, max, 3, 0, 0, 0, 0, 1, 0, 0);
        n = push(out, n, max, 4, 0, 0, 0, 0, -1, 0, 0);
        if (shape->n <= KERN_TSM2_STREAM_MAXN) { /* TSM2 V3 streaming A: FMAs, tensor cores
                                                    (rpt 2: walking row tiles at k <= 64, t1
                                                    128 and the entry point's 256) */
            n = push(out, n, max, 2, 128, shape->n, KERN_TSM2_STREAM_T3, 0, 3, 0, 0);
            for (long rpt = 2; rpt <= 4; rpt *= 2)
                n = push(out, n, max, 2, 128, shape->n, KERN_TSM2_STREAM_T3, 0, 4, rpt, 0);
            n = push(out, n, max, 2, 256, shape->n, KERN_TSM2_STREAM_T3, 0, 4, 2, 0);
        }
        n = push(out, n, max, 2, 0, c2, 0, 0, 1, 0, 0);
        if (x)
            n = push(out, n, max, 2, 0, x, 0, 0, 1, 0, 0);
        return n;
    }
    if (shape->n <= KERN_TSM2_STREAM_MAXN) /* A streamed to registers, one pass: t1 64-256 */
        for (long t1 = 64; t1 <= 256; t1 *= 2) {
            n = push(out, n, max, 2, t1, shape->n, KERN_TSM2_STREAM_T3, 0, 3, 0, 0);
            if (t1 >= 128) /* and on the tensor cores (fp64 DMMA, fp32 3xTF32): one or two
                              tiles of 16 rows a warp */
                for (long rpt = 2; rpt <= 4; rpt *= 2)
                    n = push(out, n, max, 2, t1, shape->n, KERN_TSM2_STREAM_T3, 0, 4, rpt, 0);
        }
    for (long t1 = 128; t1 <= 256; t1 *= 2) {
        if (x)
            n = push(out, n, max, 2, t1, x, 0, 0, 1, 0, 0);
        for (long t3 = 8; t3 <= 16; t3 *= 2)
            for (long rpt = 1; rpt <= (prec == KERNELS_FP64 ? 2 : 4); rpt *= 2)
                n = push(out, n, max, 2, t1, c2, t3, 0, 1, rpt, 0);
    }
    for (long t3 = 8; t3 <= 16; t3 *= 2) {
        n = push(out, n, max, 2, 128, c2, t3, 0, 0, 1, 0);
        n = push(out, n, max, 1, 128, c2, t3, 0, -1, 0, 0);
    }
    if (shape->n > 16) /* column blocks side by side: t1 128 and 256, two and four rows */
        for (long t1 = 128; t1 <= 256; t1 *= 2)
            for (long rpt = 2; rpt <= (prec == KERNELS_FP64 ? 2 : 4); rpt *= 2)
                n = push(out, n, max, 2, t1, 16, 8, 0, 1, rpt, (shape->n + 15) / 16);
    return n;
}
