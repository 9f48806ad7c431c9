/*
 * test_energy.c - the energy model (model/energy.c): the fit recovers known constants from
 * synthetic points with noise, refuses degenerate input with a reason, and the prediction
 * adds its terms as docs/model.md "Energy" writes them. Label `unit`.
 *
 * Case map:
 *   F1 noiseless points of a sweep (memory-bound to compute-bound, three levels, two
 *      precisions, an idle point): every constant back within 1e-9 relative, residuals ~0
 *   F2 the same with 1 % multiplicative noise (fixed seed): constants within 5 %, |residual|
 *      median under 1.5 %
 *   F3 refused: no points, a point with energy 0, NaN work, fewer points than unknowns,
 *      two columns always in the same ratio (rank-deficient), a constant fitted negative;
 *      bounded (clamped): that constant fixed at 0 and named, the others fitted; a fit with
 *      nothing negative unchanged
 *   P1 prediction: hand-computed sum; a missing eps named; L1 bytes without an eps skipped;
 *      time 0 refused
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "model.h"

/* The machine of the synthetic points (H100-like magnitudes). */
static struct model_energy truth(void)
{
    struct model_energy e;
    for (int i = 0; i < MODEL_EOP_COUNT; i++)
        e.eps_flop[i] = NAN;
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        e.eps_byte[i] = NAN;
    e.eps_flop[MODEL_EOP_FP32] = 2.5e-12;
    e.eps_flop[MODEL_EOP_FP64] = 6e-12;
    e.eps_byte[MODEL_LEVEL_DRAM] = 45e-12;
    e.eps_byte[MODEL_LEVEL_L2] = 12e-12;
    e.eps_byte[MODEL_LEVEL_SHARED] = 2e-12;
    e.p0_w = 120;
    return e;
}

/* A deterministic uniform in [-1, 1). */
static double noise(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* Points of a sweep as roofkit's energy probe makes them: per level and precision, k in
 * {0, 4, 16, 64, 256} FMAs per element; the time from a roofline of the level; plus an idle
 * point. rel_noise multiplies each energy by 1 + rel_noise x U(-1, 1). */
static int sweep(struct model_energy_work *p, double rel_noise)
{
    static const double bw[MODEL_LEVEL_COUNT] = {3.3e12, 10e12, 0, 30e12};
    static const int levels[] = {MODEL_LEVEL_DRAM, MODEL_LEVEL_L2, MODEL_LEVEL_SHARED};
    static const double ks[] = {0, 4, 16, 64, 256};
    struct model_energy e = truth();
    unsigned st = 12345;
    int n = 0;
    for (int op = MODEL_EOP_FP32; op <= MODEL_EOP_FP64; op++)
        for (int l = 0; l < 3; l++)
            for (int q = 0; q < 5; q++) {
                int lev = levels[l];
                double elem = op == MODEL_EOP_FP32 ? 4 : 8, bytes = 1e9;
                double flops = 2 * ks[q] * bytes / elem;
                double peak = op == MODEL_EOP_FP32 ? 60e12 : 30e12;
                memset(&p[n], 0, sizeof p[n]);
                p[n].flops[op] = flops;
                p[n].bytes[lev] = bytes;
                if (lev == MODEL_LEVEL_DRAM)
                    p[n].bytes[MODEL_LEVEL_L2] = bytes; /* DRAM bytes cross L2 */
                p[n].time_s = fmax(flops / peak, bytes / bw[lev]);
                model_energy_predict(&e, &p[n], &p[n].energy_j, NULL);
                p[n].energy_j *= 1 + rel_noise * noise(&st);
                n++;
            }
    memset(&p[n], 0, sizeof p[n]);
    p[n].time_s = 0.4;
    p[n].energy_j = e.p0_w * 0.4 * (1 + rel_noise * noise(&st));
    return n + 1;
}

static void expect_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.6g, want %.6g (within %.3g)", got, want, rel);
}

static void expect_fit(const struct model_energy *f, double rel)
{
    struct model_energy e = truth();
    for (int i = 0; i < MODEL_EOP_COUNT; i++)
        if (isnan(e.eps_flop[i]))
            assert_true(isnan(f->eps_flop[i]));
        else
            expect_close(f->eps_flop[i], e.eps_flop[i], rel);
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        if (isnan(e.eps_byte[i]))
            assert_true(isnan(f->eps_byte[i]));
        else
            expect_close(f->eps_byte[i], e.eps_byte[i], rel);
    expect_close(f->p0_w, e.p0_w, rel);
}

static void f1_exact(void **state)
{
    (void)state;
    struct model_energy_work p[64];
    struct model_energy f;
    double res[64];
    const char *why = "unset";
    int n = sweep(p, 0);
    assert_int_equal(model_energy_fit(p, n, &f, res, NULL, &why), RK_OK);
    assert_null(why);
    expect_fit(&f, 1e-9);
    for (int i = 0; i < n; i++)
        assert_true(fabs(res[i]) < 1e-9);
}

static void f2_noise(void **state)
{
    (void)state;
    struct model_energy_work p[64];
    struct model_energy f;
    double res[64], ares[64], med = 0;
    int n = sweep(p, 0.01);
    assert_int_equal(model_energy_fit(p, n, &f, res, NULL, NULL), RK_OK);
    expect_fit(&f, 0.05);
    for (int i = 0; i < n; i++)
        ares[i] = fabs(res[i]);
    med = model_median(ares, (size_t)n);
    assert_true(med > 0 && med < 0.015);
}

static void expect_refused(struct model_energy_work *p, int n, const char *needle)
{
    struct model_energy f;
    const char *why = NULL;
    assert_int_equal(model_energy_fit(p, n, &f, NULL, NULL, &why), RK_EUSAGE);
    assert_non_null(why);
    if (!strstr(why, needle))
        fail_msg("reason '%s' lacks '%s'", why, needle);
    assert_true(isnan(f.p0_w) && isnan(f.eps_flop[MODEL_EOP_FP32]));
}

static void f3_refused(void **state)
{
    (void)state;
    struct model_energy_work p[64];
    int n = sweep(p, 0);
    expect_refused(p, 0, "no points");
    expect_refused(NULL, 3, "no points");
    p[3].energy_j = 0;
    expect_refused(p, n, "energy");
    n = sweep(p, 0);
    p[5].bytes[MODEL_LEVEL_L2] = NAN;
    expect_refused(p, n, "NaN");
    n = sweep(p, 0);
    expect_refused(p, 3, "fewer points than unknowns"); /* fp32, dram, l2, p0 */
    /* L2 bytes always equal to DRAM bytes: the two cannot be told apart */
    struct model_energy_work q[8];
    memset(q, 0, sizeof q);
    for (int i = 0; i < 8; i++) {
        q[i].bytes[MODEL_LEVEL_DRAM] = q[i].bytes[MODEL_LEVEL_L2] = 1e9 * (i + 1);
        q[i].flops[MODEL_EOP_FP32] = 1e10 * (i % 3);
        q[i].time_s = 1e-3 * (1 + i * i);
        q[i].energy_j = 0.05 * (i + 1) + 0.1 * q[i].time_s;
    }
    expect_refused(q, 8, "cannot separate the energy per byte of l2");
    /* energy falling with bytes moved: a negative energy per byte */
    for (int i = 0; i < 8; i++) {
        q[i].bytes[MODEL_LEVEL_L2] = 0;
        q[i].flops[MODEL_EOP_FP32] = 0;
        q[i].time_s = 0.1;
        q[i].energy_j = 20 - 1e-9 * q[i].bytes[MODEL_LEVEL_DRAM];
    }
    expect_refused(q, 8, "fitted negative");
    /* bounded: the energy per byte fixed at 0, p0 fitted alone (the mean power, 200 W) */
    struct model_energy f;
    unsigned clamped = 99;
    const char *why = "unset";
    assert_int_equal(model_energy_fit(q, 8, &f, NULL, &clamped, &why), RK_OK);
    assert_null(why);
    assert_int_equal(clamped, 1u << (MODEL_EOP_COUNT + MODEL_LEVEL_DRAM));
    assert_true(f.eps_byte[MODEL_LEVEL_DRAM] == 0);
    assert_true(f.p0_w > 0);
    /* nothing to clamp: the same fit as without */
    int n2 = sweep(p, 0);
    assert_int_equal(model_energy_fit(p, n2, &f, NULL, &clamped, NULL), RK_OK);
    assert_int_equal(clamped, 0);
    expect_fit(&f, 1e-9);
}

static void p1_predict(void **state)
{
    (void)state;
    struct model_energy e = truth();
    struct model_energy_work w;
    double j = 0;
    const char *why = NULL;
    memset(&w, 0, sizeof w);
    w.flops[MODEL_EOP_FP32] = 1e12;
    w.bytes[MODEL_LEVEL_DRAM] = 1e9;
    w.bytes[MODEL_LEVEL_L2] = 2e9;
    w.bytes[MODEL_LEVEL_L1] = 5e9; /* no eps for L1: not charged */
    w.bytes[MODEL_LEVEL_SHARED] = NAN;
    w.time_s = 0.01;
    assert_int_equal(model_energy_predict(&e, &w, &j, &why), RK_OK);
    expect_close(j, 1e12 * 2.5e-12 + 1e9 * 45e-12 + 2e9 * 12e-12 + 120 * 0.01, 1e-12);
    w.flops[MODEL_EOP_TC_BF16] = 1e9;
    assert_int_equal(model_energy_predict(&e, &w, &j, &why), RK_EUSAGE);
    assert_string_equal(why, "no energy per flop for tc_bf16");
    assert_true(isnan(j));
    w.flops[MODEL_EOP_TC_BF16] = 0;
    w.time_s = 0;
    assert_int_equal(model_energy_predict(&e, &w, &j, &why), RK_EUSAGE);
    assert_string_equal(why, "time unknown");
    assert_string_equal(model_energy_op_name(MODEL_EOP_TC_FP64), "tc_fp64");
    assert_string_equal(model_energy_op_name(MODEL_EOP_COUNT), "?");
    assert_int_equal(model_energy_op_of("fp32", 0), MODEL_EOP_FP32);
    assert_int_equal(model_energy_op_of("fp64", 1), MODEL_EOP_TC_FP64);
    assert_int_equal(model_energy_op_of("bf16", 1), MODEL_EOP_TC_BF16);
    assert_int_equal(model_energy_op_of("tf32", 1), -1);
    assert_int_equal(model_energy_op_of("fp16", 0), -1);
    assert_int_equal(model_energy_op_of(NULL, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f1_exact),
        cmocka_unit_test(f2_noise),
        cmocka_unit_test(f3_refused),
        cmocka_unit_test(p1_predict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
