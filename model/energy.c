/*
 * energy.c - the energy model (extension beyond the seeds: Choi, Bedard, Fowler and Vuduc, "A
 * roofline model of energy", IPDPS 2013; docs/model.md "Energy"). A kernel's energy is the
 * sum of an energy per flop of each pipe and precision, an energy per byte served at each
 * memory level and a constant power over its time:
 *
 *     E = sum_op W_op eps_op + sum_level Q_level eps_level + p0 T
 *
 * The paper fits eps_flop, eps_mem and pi_0 by least squares from microbenchmarks that sweep
 * the intensity W/Q; model_energy_fit does the same for every op and level of the sweep at
 * once (one joint fit), on relative errors. Pure C: no I/O.
 */
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *model_energy_op_name(enum model_energy_op op)
{
    static const char *const names[MODEL_EOP_COUNT] = {"fp32", "fp64", "tc_bf16", "tc_fp16",
                                                       "tc_fp64"};
    return (unsigned)op < MODEL_EOP_COUNT ? names[op] : "?";
}

int model_energy_op_of(const char *precision, int tensor)
{
    if (!precision)
        return -1;
    if (!tensor)
        return strcmp(precision, "fp32") == 0   ? MODEL_EOP_FP32
               : strcmp(precision, "fp64") == 0 ? MODEL_EOP_FP64
                                                : -1;
    return strcmp(precision, "bf16") == 0   ? MODEL_EOP_TC_BF16
           : strcmp(precision, "fp16") == 0 ? MODEL_EOP_TC_FP16
           : strcmp(precision, "fp64") == 0 ? MODEL_EOP_TC_FP64
                                            : -1;
}

/* The unknowns of a fit: the ops, then the levels, then p0 (column indices of the matrix). */
enum { NCOL_MAX = MODEL_EOP_COUNT + MODEL_LEVEL_COUNT + 1 };

/* Static reasons per column (why must be static: model/ allocates nothing it returns). */
static const char *const no_eps[NCOL_MAX] = {
    "no energy per flop for fp32",    "no energy per flop for fp64",
    "no energy per flop for tc_bf16", "no energy per flop for tc_fp16",
    "no energy per flop for tc_fp64", "no energy per byte for dram",
    "no energy per byte for l2",      "no energy per byte for l1",
    "no energy per byte for shared",  "no constant power",
};
static const char *const inseparable[NCOL_MAX] = {
    "the points cannot separate the energy per flop of fp32 from the other terms",
    "the points cannot separate the energy per flop of fp64 from the other terms",
    "the points cannot separate the energy per flop of tc_bf16 from the other terms",
    "the points cannot separate the energy per flop of tc_fp16 from the other terms",
    "the points cannot separate the energy per flop of tc_fp64 from the other terms",
    "the points cannot separate the energy per byte of dram from the other terms",
    "the points cannot separate the energy per byte of l2 from the other terms",
    "the points cannot separate the energy per byte of l1 from the other terms",
    "the points cannot separate the energy per byte of shared from the other terms",
    "the points cannot separate the constant power from the other terms",
};
static const char *const negative[NCOL_MAX] = {
    "energy per flop of fp32 fitted negative: the points do not constrain it",
    "energy per flop of fp64 fitted negative: the points do not constrain it",
    "energy per flop of tc_bf16 fitted negative: the points do not constrain it",
    "energy per flop of tc_fp16 fitted negative: the points do not constrain it",
    "energy per flop of tc_fp64 fitted negative: the points do not constrain it",
    "energy per byte of dram fitted negative: the points do not constrain it",
    "energy per byte of l2 fitted negative: the points do not constrain it",
    "energy per byte of l1 fitted negative: the points do not constrain it",
    "energy per byte of shared fitted negative: the points do not constrain it",
    "constant power fitted negative: the points do not constrain it",
};

static void set_why(const char **why, const char *s)
{
    if (why)
        *why = s;
}

static void all_nan(struct model_energy *e)
{
    for (int i = 0; i < MODEL_EOP_COUNT; i++)
        e->eps_flop[i] = NAN;
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        e->eps_byte[i] = NAN;
    e->p0_w = NAN;
}

/* Column c's work in point w (c as in the enum above). */
static double work_of(const struct model_energy_work *w, int c)
{
    if (c < MODEL_EOP_COUNT)
        return w->flops[c];
    if (c < MODEL_EOP_COUNT + MODEL_LEVEL_COUNT)
        return w->bytes[c - MODEL_EOP_COUNT];
    return w->time_s;
}

int model_energy_predict(const struct model_energy *e, const struct model_energy_work *w,
                         double *joules, const char **why)
{
    double sum = 0;
    *joules = NAN;
    if (!(w->time_s > 0) || !isfinite(w->time_s))
        return set_why(why, "time unknown"), RK_EUSAGE;
    if (!(e->p0_w >= 0))
        return set_why(why, no_eps[NCOL_MAX - 1]), RK_EUSAGE;
    for (int c = 0; c < NCOL_MAX - 1; c++) {
        double x = work_of(w, c);
        double eps = c < MODEL_EOP_COUNT ? e->eps_flop[c] : e->eps_byte[c - MODEL_EOP_COUNT];
        int level_l1 = c == MODEL_EOP_COUNT + MODEL_LEVEL_L1;
        if (c < MODEL_EOP_COUNT && !(x >= 0))
            return set_why(why, "flops unknown"), RK_EUSAGE;
        if (isnan(x) || x == 0 || (level_l1 && isnan(eps)))
            continue;
        if (isnan(eps))
            return set_why(why, no_eps[c]), RK_EUSAGE;
        sum += x * eps;
    }
    *joules = sum + e->p0_w * w->time_s;
    set_why(why, NULL);
    return RK_OK;
}

/* A point a fit accepts: time and energy finite and > 0, no NaN or negative work. */
static int point_ok(const struct model_energy_work *w)
{
    if (!(w->time_s > 0) || !isfinite(w->time_s) || !(w->energy_j > 0) || !isfinite(w->energy_j))
        return 0;
    for (int c = 0; c < NCOL_MAX - 1; c++)
        if (!(work_of(w, c) >= 0) || !isfinite(work_of(w, c)))
            return 0;
    return 1;
}

/* Householder QR of the n x k matrix a (column-major, a[j * n + i]) applied to b; R in a's upper
 * triangle. Returns the first column (in order) whose diagonal falls below tol, else -1. */
static int householder(double *a, double *b, int n, int k, double tol)
{
    for (int j = 0; j < k; j++) {
        double *cj = a + (size_t)j * n, norm = 0;
        for (int i = j; i < n; i++)
            norm += cj[i] * cj[i];
        norm = sqrt(norm);
        if (norm <= tol)
            return j;
        double alpha = cj[j] > 0 ? -norm : norm, v0 = cj[j] - alpha, vnorm2 = v0 * v0;
        for (int i = j + 1; i < n; i++)
            vnorm2 += cj[i] * cj[i];
        /* v = (v0, cj[j+1..n)); H = I - 2 v v^T / (v^T v) */
        for (int c = j + 1; c <= k; c++) {
            double *x = c < k ? a + (size_t)c * n : b, dot = v0 * x[j];
            for (int i = j + 1; i < n; i++)
                dot += cj[i] * x[i];
            double f = 2 * dot / vnorm2;
            x[j] -= f * v0;
            for (int i = j + 1; i < n; i++)
                x[i] -= f * cj[i];
        }
        cj[j] = alpha;
    }
    return -1;
}

/* The fit once its columns are known: a (n x k) and b (n) are the caller's workspace. A
 * coefficient fitted negative refuses the fit, *neg then the index (in cols) of the most
 * negative one. */
static int solve(const struct model_energy_work *pts, int n, const int *cols, int k, double *a,
                 double *b, struct model_energy *out, const char **why, int *neg);

int model_energy_fit(const struct model_energy_work *pts, int n, struct model_energy *out,
                     double *residual, unsigned *clamped, const char **why)
{
    int cols[NCOL_MAX], k = 0, neg = -1;
    unsigned fixed = 0;

    all_nan(out);
    set_why(why, NULL);
    if (!pts || n < 1)
        return set_why(why, "no points"), RK_EUSAGE;
    for (int i = 0; i < n; i++)
        if (!point_ok(&pts[i]))
            return set_why(why, "a point has a time or energy not > 0, or NaN or negative work"),
                   RK_EUSAGE;
    for (int c = 0; c < NCOL_MAX; c++) {
        int used = c == NCOL_MAX - 1;
        for (int i = 0; i < n && !used; i++)
            used = work_of(&pts[i], c) > 0;
        if (used)
            cols[k++] = c;
    }
    if (n < k)
        return set_why(why, "fewer points than unknowns"), RK_EUSAGE;
    double *a = malloc(sizeof *a * (size_t)n * (size_t)(k + 1));
    if (!a)
        return set_why(why, "out of memory"), RK_ENOMEM;
    int rc = solve(pts, n, cols, k, a, a + (size_t)n * k, out, why, &neg);
    /* with clamped: the most negative unknown fixed at 0 (its bound), the others refitted */
    while (clamped && rc == RK_EUSAGE && neg >= 0 && k > 1) {
        fixed |= 1u << cols[neg];
        for (int j = neg; j + 1 < k; j++)
            cols[j] = cols[j + 1];
        k--;
        neg = -1;
        rc = solve(pts, n, cols, k, a, a + (size_t)n * k, out, why, &neg);
    }
    free(a);
    for (int c = 0; rc == RK_OK && c < NCOL_MAX; c++)
        if (fixed & (1u << c)) {
            if (c < MODEL_EOP_COUNT)
                out->eps_flop[c] = 0;
            else if (c < MODEL_EOP_COUNT + MODEL_LEVEL_COUNT)
                out->eps_byte[c - MODEL_EOP_COUNT] = 0;
            else
                out->p0_w = 0;
        }
    if (clamped)
        *clamped = rc == RK_OK ? fixed : 0;
    if (rc == RK_OK)
        set_why(why, NULL);
    for (int i = 0; rc == RK_OK && residual && i < n; i++) {
        double e = NAN;
        model_energy_predict(out, &pts[i], &e, NULL);
        residual[i] = (e - pts[i].energy_j) / pts[i].energy_j;
    }
    return rc;
}

static int solve(const struct model_energy_work *pts, int n, const int *cols, int k, double *a,
                 double *b, struct model_energy *out, const char **why, int *neg)
{
    double scale[NCOL_MAX], y[NCOL_MAX], worst = 0;
    all_nan(out);
    for (int j = 0; j < k; j++) {
        double norm = 0;
        for (int i = 0; i < n; i++) {
            double v = work_of(&pts[i], cols[j]) / pts[i].energy_j;
            a[(size_t)j * n + i] = v;
            norm += v * v;
        }
        scale[j] = sqrt(norm);
        for (int i = 0; i < n; i++)
            a[(size_t)j * n + i] /= scale[j];
    }
    for (int i = 0; i < n; i++)
        b[i] = 1.0;
    int bad = householder(a, b, n, k, 1e-9);
    if (bad >= 0)
        return set_why(why, inseparable[cols[bad]]), RK_EUSAGE;
    for (int j = k - 1; j >= 0; j--) {
        double v = b[j];
        for (int c = j + 1; c < k; c++)
            v -= a[(size_t)c * n + j] * y[c];
        y[j] = v / a[(size_t)j * n + j];
    }
    *neg = -1;
    for (int j = 0; j < k; j++)
        if (y[j] < worst) { /* in the scaled unknowns: relative to the column's weight */
            worst = y[j];
            *neg = j;
        }
    if (*neg >= 0)
        return all_nan(out), set_why(why, negative[cols[*neg]]), RK_EUSAGE;
    for (int j = 0; j < k; j++) {
        double v = y[j] / scale[j];
        if (cols[j] < MODEL_EOP_COUNT)
            out->eps_flop[cols[j]] = v;
        else if (cols[j] < MODEL_EOP_COUNT + MODEL_LEVEL_COUNT)
            out->eps_byte[cols[j] - MODEL_EOP_COUNT] = v;
        else
            out->p0_w = v;
    }
    return RK_OK;
}
