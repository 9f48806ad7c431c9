/*
 * test_model.c - unit tests of model/: the seeds' own numbers, hand-computed TSM2
 * quantities, the properties the model must keep over sweeps, and bad input.
 * Runs anywhere (no GPU, no database): ctest label `unit`.
 *
 * Case map (id: what; seed):
 *   R1  attainable rate and ridge point; T4 ridge 24 FLOP/B          003 Q5.A
 *   R2  roofline time: memory or compute bound, ties go to compute
 *   R3  hierarchical roofline picks the level that binds; latency floor; bad input
 *   N1  names of families and bounds round-trip; unknown names refused
 *   C1  cost: bad shapes and parameters return RK_EUSAGE
 *   C2  cost: flops = 2mnk for every family; bytes_dram >= bytes_dram_min;
 *       padded == border-checked when sizes divide; padded moves more when not  002 §III
 *   C3  cost: STMVB and tiled reproduce the seeds' q at other sizes        000 §6, 003 Q5.B
 *   C4  cost: TSM2 V0 > V1 > V2 = V3 in DRAM traffic; A part = Total_memory 004 §3.2-3.6
 *   T1  TSM2: bad GPU, problem and search box return RK_EUSAGE
 *   T2  TSM2: over a sweep, r <= 1 exactly when memory-bound; r's closed form;
 *       t2 below the threshold is memory-bound                          004 §3.6.2
 *   T3  TSM2: over a sweep, the exhaustive search is never slower than Alg. 5's
 *       gradient descent, both stay in the box                          004 §3.6.3
 *   T4  TSM2: each of HW_MAX, R_SM/R_thread, S_SM/S_thread binds somewhere  004 §3.6.2
 *   T5  TSM2: the field table names every required key; values match the struct
 *   S1  statistics: relative error, MAPE, median, percentile, geomean; inputs untouched
 *       (model_median sorts its input in place)
 *   D1  measured DRAM curve: utilisation exact at its points, linear in log(bytes) between,
 *       proportional below the first, 1 beyond the last; without a curve Little's law;
 *       model_check_gpu refuses a curve that descends, exceeds 1 or ends below 1
 *   G   golden files tests/data/model-NNNN.txt, one case each (list below)
 *
 * Golden files (curl's tests/data style): one case per file, lines of
 *   name    free text                  what the case checks
 *   seed    free text                  the seed section the numbers come from
 *   eval    q_stmvb|q_tiled|peak|t2_threshold|cost|tsm2
 *   in      KEY VALUE                  an input (numbers, or a family name)
 *   expect  KEY VALUE [TOL]            an output within an absolute tolerance (0 if
 *                                      omitted); a non-numeric VALUE compares names
 * '#' starts a comment line. Every input must be used and every expected key must
 * exist, so a typo fails the case instead of passing it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"

static const char *const golden_cases[] = {
    "model-0001.txt", /* 000 §6 q(1024, 16, 4) = 31.03 */
    "model-0002.txt", /* 000 §6 the same q from the STMVB cost formula */
    "model-0003.txt", /* 000 §6 q -> pb/2 = 32 */
    "model-0004.txt", /* 003 Q5.A T4 peak 7680 GFLOP/s, ridge 24 FLOP/B */
    "model-0005.txt", /* 003 Q5.B q = 41.796 */
    "model-0006.txt", /* 003 Q5.B the same q from the tiled cost formula */
    "model-0007.txt", /* 004 §4 K40c t2 threshold ~ 40 */
    "model-0008.txt", /* 004 §4.4 M40 t2 threshold ~ 6 */
    "model-0009.txt", /* 004 §4.4 P100 t2 threshold ~ 50 */
    "model-0010.txt", /* 004 §3.6.2 every quantity by hand, shared memory binds */
    "model-0011.txt", /* 004 §3.6.2 by hand, registers bind */
    "model-0012.txt", /* 004 §4.4 M40 n = 16 compute-bound */
    "model-0013.txt", /* 004 §4.4 P100 n = 16 memory-bound */
    "model-0014.txt", /* 002 §III border-checked kernel counted by hand */
    "model-0015.txt", /* 002 §III padded kernel counted by hand */
    "model-0016.txt", /* 004 §3.3, Alg. 5 TSM2 V3 traffic by hand */
};

/* ---------------------------------------------------------------------------- */
/* Shared fixtures                                                               */

/* The K40c of 004 §4.1 with 000 §1's latencies (400 / 20 cycles). */
static struct model_gpu gpu_k40c(void)
{
    struct model_gpu g = {1430e9, 288e9, 745e6, 15,   65536, 49152, 2048,
                          400,    20,    10,    NULL, NULL,  0,     0};
    return g;
}

static struct model_gpu gpu_m40(void)
{
    struct model_gpu g = {213e9, 288e9, 1114e6, 24,   65536, 98304, 2048,
                          400,   20,    0,      NULL, NULL,  0,     0};
    return g;
}

static struct model_gpu gpu_p100(void)
{
    struct model_gpu g = {4600e9, 720e9, 1328e6, 56,   65536, 65536, 2048,
                          400,    20,    0,      NULL, NULL,  0,     0};
    return g;
}

/* An H100 SXM: peak = 132 SMs x lanes x 2 x 1.98 GHz for the precision, the datasheet's
 * 3.35 TB/s, the DRAM latency of its 64-bit pointer chase; FMA latency assumed 4 cycles. */
static struct model_gpu gpu_h100(int elem_bytes)
{
    struct model_gpu g = {.peak_flops = elem_bytes == 8 ? 33.4e12 : 66.9e12,
                          .bandwidth = 3.35e12,
                          .clock_hz = 1.98e9,
                          .sms = 132,
                          .regs_per_sm = 65536,
                          .smem_per_sm = 233472,
                          .max_threads_per_sm = 2048,
                          .mem_latency_cycles = 661,
                          .comp_latency_cycles = 4,
                          .regs_fixed = 16};
    return g;
}

static int close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol;
}

/* ---------------------------------------------------------------------------- */
/* R: roofline                                                                   */

static void test_r1_attainable_ridge(void **state)
{
    (void)state;
    double peak = model_peak_flops(40, 64, 2.0, 1.5e9);
    assert_true(close_to(peak, 7.68e12, 1.0));
    assert_true(close_to(model_ridge_point(peak, 320e9), 24.0, 1e-12));
    /* below the ridge the slope, above it the roof, at it both */
    assert_true(close_to(model_roofline_attainable(peak, 320e9, 10.0), 3.2e12, 1.0));
    assert_true(close_to(model_roofline_attainable(peak, 320e9, 100.0), peak, 1.0));
    assert_true(close_to(model_roofline_attainable(peak, 320e9, 24.0), peak, 1.0));
    assert_true(model_roofline_attainable(peak, 320e9, 0.0) == 0.0);
    assert_true(isnan(model_ridge_point(peak, 0.0)));
    assert_true(isnan(model_ridge_point(-1.0, 1.0)));
    assert_true(isnan(model_roofline_attainable(peak, 0.0, 1.0)));
    assert_true(isnan(model_roofline_attainable(peak, 1.0, -1.0)));
    assert_true(isnan(model_roofline_attainable(NAN, 1.0, 1.0)));
    assert_true(isnan(model_peak_flops(0, 64, 2.0, 1.5e9)));
}

static void test_r2_roofline_time(void **state)
{
    (void)state;
    struct model_time t;
    /* 1e12 FLOP at 1e12 FLOP/s = 1 s; 2e11 B at 1e11 B/s = 2 s: memory */
    assert_int_equal(model_roofline_time(1e12, 1e12, 2e11, 1e11, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_DRAM);
    assert_true(close_to(t.time_s, 2.0, 1e-12));
    assert_true(close_to(t.time_compute_s, 1.0, 1e-12));
    assert_true(close_to(t.intensity, 5.0, 1e-12));
    assert_true(close_to(t.attainable_flops, 5e11, 1.0));
    /* compute */
    assert_int_equal(model_roofline_time(4e12, 1e12, 2e11, 1e11, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_COMPUTE);
    assert_true(close_to(t.time_s, 4.0, 1e-12));
    /* exactly at the ridge: compute */
    assert_int_equal(model_roofline_time(2e12, 1e12, 2e11, 1e11, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_COMPUTE);
    assert_int_equal(model_roofline_time(1e12, 1e12, 1e11, 0.0, &t), RK_EUSAGE);
    assert_int_equal(model_roofline_time(-1.0, 1e12, 1e11, 1e11, &t), RK_EUSAGE);
    assert_int_equal(model_roofline_time(1.0, 0.0, 1e11, 1e11, &t), RK_EUSAGE);
    assert_int_equal(model_roofline_time(1.0, 1e12, NAN, 1e11, &t), RK_EUSAGE);
    assert_int_equal(model_roofline_time(1.0, 1e12, 1.0, 1e11, NULL), RK_EUSAGE);
}

static void test_r3_hierarchical(void **state)
{
    (void)state;
    struct model_time t;
    /* compute 1 s; dram 1 s; l2 3 s; l1 0.5 s; shared 2 s -> l2 binds */
    struct model_level lv[] = {
        {MODEL_LEVEL_DRAM, 3e12, 3e12},
        {MODEL_LEVEL_L2, 30e12, 10e12},
        {MODEL_LEVEL_L1, 10e12, 20e12},
        {MODEL_LEVEL_SHARED, 64e12, 32e12},
    };
    assert_int_equal(model_hierarchical_time(60e12, 60e12, lv, 4, 0.0, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_L2);
    assert_true(close_to(t.time_s, 3.0, 1e-12));
    assert_true(close_to(t.time_level_s[MODEL_LEVEL_SHARED], 2.0, 1e-12));
    assert_true(close_to(t.time_memory_s, 3.0, 1e-12));
    assert_true(close_to(t.intensity, 2.0, 1e-12));

    /* each level binds in turn when its traffic grows */
    for (int i = 0; i < 4; i++) {
        struct model_level v[4];
        memcpy(v, lv, sizeof v);
        v[i].bytes = v[i].bandwidth * 10.0; /* 10 s */
        assert_int_equal(model_hierarchical_time(60e12, 60e12, v, 4, 0.0, &t), RK_OK);
        assert_int_equal(t.bound, model_level_bound(v[i].id));
        assert_true(close_to(t.time_s, 10.0, 1e-12));
    }
    /* compute binds when flops grow; latency floor only when strictly larger */
    assert_int_equal(model_hierarchical_time(600e12, 60e12, lv, 4, 0.0, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_COMPUTE);
    assert_int_equal(model_hierarchical_time(60e12, 60e12, lv, 4, 5.0, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_LATENCY);
    assert_true(close_to(t.time_s, 5.0, 1e-12));
    assert_int_equal(model_hierarchical_time(60e12, 60e12, lv, 4, 3.0, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_L2);
    /* no level: compute only */
    assert_int_equal(model_hierarchical_time(1e12, 1e12, NULL, 0, 0.0, &t), RK_OK);
    assert_int_equal(t.bound, MODEL_BOUND_COMPUTE);
    assert_true(close_to(t.time_s, 1.0, 1e-12));

    /* bad input: zero bandwidth, negative bytes, duplicate level, bad id, NULL */
    struct model_level bad[2] = {{MODEL_LEVEL_DRAM, 1e9, 0.0}, {MODEL_LEVEL_L2, 1e9, 1e12}};
    assert_int_equal(model_hierarchical_time(1e12, 1e12, bad, 2, 0.0, &t), RK_EUSAGE);
    bad[0].bandwidth = 1e12;
    bad[0].bytes = -1.0;
    assert_int_equal(model_hierarchical_time(1e12, 1e12, bad, 2, 0.0, &t), RK_EUSAGE);
    bad[0].bytes = 1e9;
    bad[1].id = MODEL_LEVEL_DRAM;
    assert_int_equal(model_hierarchical_time(1e12, 1e12, bad, 2, 0.0, &t), RK_EUSAGE);
    bad[1].id = (enum model_level_id)42;
    assert_int_equal(model_hierarchical_time(1e12, 1e12, bad, 2, 0.0, &t), RK_EUSAGE);
    assert_int_equal(model_hierarchical_time(1e12, 1e12, NULL, 1, 0.0, &t), RK_EUSAGE);
    assert_int_equal(model_hierarchical_time(1e12, 1e12, lv, 4, -1.0, &t), RK_EUSAGE);
    assert_int_equal(model_hierarchical_time(1e12, 1e12, lv, 5, 0.0, &t), RK_EUSAGE);
}

/* ---------------------------------------------------------------------------- */
/* N: names                                                                      */

static void test_n1_names(void **state)
{
    (void)state;
    for (int i = 0; i < MODEL_FAM_COUNT; i++) {
        enum model_kernel_family f;
        const char *name = model_family_name((enum model_kernel_family)i);
        assert_string_not_equal(name, "?");
        assert_int_equal(model_family_from_name(name, &f), RK_OK);
        assert_int_equal(f, i);
    }
    for (int i = 0; i < MODEL_BOUND_COUNT; i++) {
        enum model_bound b;
        assert_int_equal(model_bound_from_name(model_bound_name((enum model_bound)i), &b), RK_OK);
        assert_int_equal(b, i);
    }
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        assert_string_equal(model_level_name((enum model_level_id)i),
                            model_bound_name(model_level_bound((enum model_level_id)i)));
    enum model_kernel_family f;
    enum model_bound b;
    assert_int_equal(model_family_from_name("tsm2_v4", &f), RK_EUSAGE);
    assert_int_equal(model_family_from_name(NULL, &f), RK_EUSAGE);
    assert_int_equal(model_bound_from_name("DRAM", &b), RK_EUSAGE);
    assert_string_equal(model_family_name(MODEL_FAM_COUNT), "?");
    assert_string_equal(model_bound_name(MODEL_BOUND_COUNT), "?");
    assert_string_equal(model_family_name(MODEL_FAM_TSM2_V3), "tsm2_v3");
    assert_string_equal(model_bound_name(MODEL_BOUND_SHARED), "shared");
}

/* ---------------------------------------------------------------------------- */
/* C: cost formulas                                                              */

/* Parameters valid for every family at once. */
static struct model_params all_params(void)
{
    struct model_params p = {.block = 16,
                             .per_thread = 4,
                             .tile_m = 128,
                             .tile_n = 64,
                             .tile_k = 16,
                             .scale_m = 8,
                             .scale_n = 4,
                             .t1 = 128,
                             .t2 = 4,
                             .t3 = 4,
                             .tcf = 2};
    return p;
}

static void test_c1_cost_bad_input(void **state)
{
    (void)state;
    struct model_cost c;
    struct model_params p = all_params();
    struct model_shape s = {256, 256, 256, 4};
    for (int f = 0; f < MODEL_FAM_COUNT; f++) {
        struct model_shape b = s;
        b.m = 0;
        assert_int_equal(model_cost((enum model_kernel_family)f, &b, &p, &c), RK_EUSAGE);
        assert_true(c.flops == 0.0 && c.seed == NULL); /* zeroed on failure */
        b = s;
        b.n = -5;
        assert_int_equal(model_cost((enum model_kernel_family)f, &b, &p, &c), RK_EUSAGE);
        b = s;
        b.k = 0;
        assert_int_equal(model_cost((enum model_kernel_family)f, &b, &p, &c), RK_EUSAGE);
        b = s;
        b.elem_bytes = 3;
        assert_int_equal(model_cost((enum model_kernel_family)f, &b, &p, &c), RK_EUSAGE);
        assert_int_equal(model_cost((enum model_kernel_family)f, &s, NULL, &c), RK_EUSAGE);
        assert_int_equal(model_cost((enum model_kernel_family)f, NULL, &p, &c), RK_EUSAGE);
        /* every needed parameter at 0 is refused, and named */
        unsigned needs = model_family_needs((enum model_kernel_family)f);
        struct model_params zero = {0};
        if (needs) {
            assert_int_equal(model_cost((enum model_kernel_family)f, &s, &zero, &c), RK_EUSAGE);
            assert_non_null(model_check_cost((enum model_kernel_family)f, &s, &zero));
        } else {
            assert_int_equal(model_cost((enum model_kernel_family)f, &s, &zero, &c), RK_OK);
        }
    }
    assert_int_equal(model_cost(MODEL_FAM_COUNT, &s, &p, &c), RK_EUSAGE);
    p.block = 16;
    p.per_thread = 3; /* 000 §1.2: STRIDE = BLOCK_SIZE / OP_PER_THREAD must divide */
    assert_int_equal(model_cost(MODEL_FAM_STMO, &s, &p, &c), RK_EUSAGE);
    p = all_params();
    p.scale_m = 3; /* 003 Q2.A: TILEDIM_M = TILESCALE_M * by */
    assert_int_equal(model_cost(MODEL_FAM_TILED, &s, &p, &c), RK_EUSAGE);
    assert_string_equal(model_check_cost(MODEL_FAM_TILED, &s, &p),
                        "tile_m must be a multiple of scale_m (003 Q2.A)");
    p = all_params();
    p.t2 = -1;
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &p, &c), RK_EUSAGE);
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &p, NULL), RK_EUSAGE);
}

static void test_c2_cost_invariants(void **state)
{
    (void)state;
    struct model_params p = all_params();
    const long sizes[] = {1, 7, 64, 100, 1000, 1024, 2049};
    for (int f = 0; f < MODEL_FAM_COUNT; f++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
                struct model_shape s = {sizes[i], sizes[j], sizes[(i + j) % 7], 8};
                struct model_cost c;
                assert_int_equal(model_cost((enum model_kernel_family)f, &s, &p, &c), RK_OK);
                double mnk = (double)s.m * s.n * s.k;
                /* move moves the bytes and computes nothing */
                assert_true(c.flops == (f == MODEL_FAM_MOVE ? 0.0 : 2.0 * mnk));
                assert_true(c.flops_exec >= c.flops);
                assert_true(c.bytes_dram >= c.bytes_dram_min);
                assert_true(c.bytes_dram_min >=
                            8.0 * ((double)s.m * s.k + (double)s.k * s.n + (double)s.m * s.n));
                assert_true(c.bytes_l2 == c.bytes_dram && c.bytes_l1 == c.bytes_dram);
                assert_true(c.bytes_shared >= 0.0);
                assert_non_null(c.seed);
            }
        }
    }
    /* 002 §III: when the block size divides every dimension the two approaches move the
     * same data; when it does not, padding moves more and computes the same padded work */
    struct model_params b = {.block = 32};
    struct model_shape even = {256, 128, 64, 4}, odd = {257, 129, 65, 4};
    struct model_cost pad, bor;
    assert_int_equal(model_cost(MODEL_FAM_RECT_PADDED, &even, &b, &pad), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_RECT_BORDER, &even, &b, &bor), RK_OK);
    assert_true(pad.bytes_dram == bor.bytes_dram && pad.flops_exec == bor.flops_exec);
    assert_true(pad.flops_exec == pad.flops);
    assert_int_equal(model_cost(MODEL_FAM_RECT_PADDED, &odd, &b, &pad), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_RECT_BORDER, &odd, &b, &bor), RK_OK);
    assert_true(pad.bytes_dram > bor.bytes_dram);
    assert_true(pad.flops_exec == bor.flops_exec && pad.flops_exec > pad.flops);
    /* naive: each thread reads k of A and k of B, writes one C */
    struct model_cost nv;
    assert_int_equal(model_cost(MODEL_FAM_NAIVE, &odd, &b, &nv), RK_OK);
    assert_true(nv.bytes_dram == 4.0 * (2.0 * 257 * 129 * 65 + 257.0 * 129));
    assert_true(nv.bytes_shared == 0.0 && nv.flops_exec == nv.flops);
    /* cublas: the compulsory traffic */
    assert_int_equal(model_cost(MODEL_FAM_CUBLAS, &odd, &b, &nv), RK_OK);
    assert_true(nv.bytes_dram == 4.0 * (257.0 * 65 + 65.0 * 129 + 257.0 * 129));
    /* STSO and STMO share tiles, so DRAM traffic; STMO reads less shared memory */
    struct model_params q = {.block = 16, .per_thread = 4};
    struct model_shape sq = {1024, 1024, 1024, 4};
    struct model_cost so, mo;
    assert_int_equal(model_cost(MODEL_FAM_STSO, &sq, &q, &so), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_STMO, &sq, &q, &mo), RK_OK);
    assert_true(so.bytes_dram == mo.bytes_dram && mo.bytes_shared < so.bytes_shared);
    /* STSO: 2 shared loads per FMA + one store per staged element */
    assert_true(so.bytes_shared == 4.0 * (2.0 * 1024 * 1024 * 1024 + 2.0 * 1024 * 1024 * 64));
}

static void test_c3_cost_reproduces_q(void **state)
{
    (void)state;
    /* 000 §6 at other sizes and parameters: q from the STMVB cost = the closed form */
    const int bs[] = {8, 16, 24}, ps[] = {1, 2, 4, 8};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 4; j++) {
            long n = (long)bs[i] * ps[j] * 32; /* divisible, as §6 assumes */
            struct model_shape s = {n, n, n, 8};
            struct model_params p = {.block = bs[i], .per_thread = ps[j]};
            struct model_cost c;
            assert_int_equal(model_cost(MODEL_FAM_STMVB, &s, &p, &c), RK_OK);
            double q = (c.flops / 2.0) / (c.bytes_dram / 8.0);
            assert_true(close_to(q, model_q_stmvb((double)n, bs[i], ps[j]), 1e-9));
        }
    }
    /* 003 Q5.B for other tiles: the tiled cost = the per-tile closed form */
    const int tms[] = {32, 64, 128}, tns[] = {16, 64};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 2; j++) {
            struct model_shape s = {4096, 4096, 4096, 4};
            struct model_params p = {
                .tile_m = tms[i], .tile_n = tns[j], .tile_k = 8, .scale_m = 4, .scale_n = 4};
            struct model_cost c;
            assert_int_equal(model_cost(MODEL_FAM_TILED, &s, &p, &c), RK_OK);
            double q = (c.flops / 2.0) / (c.bytes_dram / 4.0);
            assert_true(close_to(q, model_q_tiled(tms[i], tns[j], 4096), 1e-9));
        }
    }
    assert_true(isnan(model_q_stmvb(0, 16, 4)));
    assert_true(isnan(model_q_tiled(128, 0, 4)));
}

static void test_c4_cost_tsm2(void **state)
{
    (void)state;
    struct model_shape s = {20480, 16, 20480, 8};
    struct model_params p = {.t1 = 128, .t2 = 4, .t3 = 4, .tcf = 4};
    struct model_cost v0, v1, v2, v3, i1, i2;
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V0, &s, &p, &v0), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V1, &s, &p, &v1), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V2, &s, &p, &v2), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &p, &v3), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_ISM2, &s, &p, &i1), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_ISM2_OPT2, &s, &p, &i2), RK_OK);
    /* §4.2: V1 needs "much lower number of global memory accesses" than V0; shared
     * memory (V2) reduces the accesses to B; prefetching (V3) moves the same data */
    assert_true(v0.bytes_dram > v1.bytes_dram);
    assert_true(v1.bytes_dram > v2.bytes_dram);
    assert_true(v2.bytes_dram == v3.bytes_dram && v2.bytes_shared == v3.bytes_shared);
    assert_true(v0.bytes_shared == 0.0 && v1.bytes_shared == 0.0);
    /* The A part of V3's traffic is Alg. 5's Total_memory = m k n/t2 bytes */
    double b_part = 8.0 * ceil(20480.0 / 128) * 20480 * 16, c_part = 8.0 * 2 * 20480 * 16;
    double total_memory = 20480.0 * 20480 * 16 / 4 * 8;
    assert_true(v3.bytes_dram - b_part - c_part == total_memory);
    /* Compulsory traffic: A and B read once, C only written (the kernels compute C = AB) */
    const double compulsory = 8.0 * (20480.0 * 20480 + 20480.0 * 16 + 20480.0 * 16);
    assert_true(v0.bytes_dram_min == compulsory && v3.bytes_dram_min == compulsory &&
                i1.bytes_dram_min == compulsory);
    /* roofkit's extensions: four rows per thread divide the shared reads of B by four; a
     * cp.async ring of A adds one shared store and one load per element of A */
    struct model_cost v3r;
    struct model_params pr = p;
    pr.rows_per_thread = 4;
    pr.a_staged = 1;
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &pr, &v3r), RK_OK);
    const double a_elems = 20480.0 * 20480 * 4, b_elems = ceil(20480.0 / 128) * 20480 * 16;
    assert_true(v3.bytes_shared == 8.0 * (a_elems * 4 + b_elems));
    assert_true(v3r.bytes_shared == 8.0 * (a_elems * 4 / 4 + a_elems + b_elems + a_elems));
    assert_true(v3r.bytes_dram == v3.bytes_dram && v3r.bytes_dram_min == v3.bytes_dram_min);
    /* On the tensor cores a warp reads each value of B once for its tiles of 16 rows
     * (b_rows 16: one tile), whatever rows_per_thread says; A straight to registers */
    struct model_cost v3t;
    struct model_params pt = p;
    pt.rows_per_thread = 4;
    pt.b_rows = 16;
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &pt, &v3t), RK_OK);
    assert_true(v3t.bytes_shared == 8.0 * (a_elems * 4 / 16 + b_elems));
    assert_true(v3t.bytes_dram == v3.bytes_dram && v3t.flops_exec == v3.flops_exec);
    /* ISM2 opt. 2 reloads its partial sums of C when k spans several tiles of B */
    assert_true(i2.bytes_dram_min == compulsory + 8.0 * 20480 * 16);
    /* With t2 = n, A is read once: V3 moves no more A than V1 */
    p.t2 = 16;
    assert_int_equal(model_cost(MODEL_FAM_TSM2_V3, &s, &p, &v3), RK_OK);
    assert_true(v3.bytes_dram < v1.bytes_dram);
    /* ISM2 opt. 1 moves what TSM2 moves when tcf divides the grid; opt. 2 moves B less
     * and C more (004 §5.2) */
    p.t2 = 4;
    assert_true(i1.bytes_dram == v2.bytes_dram);
    assert_true(i2.bytes_dram != i1.bytes_dram);
    struct model_shape small = {1000000, 16, 16, 8};
    p = (struct model_params){.t1 = 16, .t2 = 16, .t3 = 4, .tcf = 8};
    assert_int_equal(model_cost(MODEL_FAM_ISM2, &small, &p, &i1), RK_OK);
    assert_int_equal(model_cost(MODEL_FAM_ISM2_OPT2, &small, &p, &i2), RK_OK);
    assert_true(i2.bytes_dram < i1.bytes_dram);          /* k = t1: C once, B tcf times fewer */
    assert_true(i2.bytes_dram_min == i1.bytes_dram_min); /* k = t1: C is never reloaded */
}

/* ---------------------------------------------------------------------------- */
/* T: TSM2 model                                                                 */

static void test_t1_tsm2_bad_input(void **state)
{
    (void)state;
    struct model_gpu g = gpu_k40c();
    struct model_tsm2_problem p = {10240, 16, 10240, 8, 128, 16, 4};
    struct model_tsm2_eval e;
    struct model_tsm2_choice ch;
    struct model_tsm2_bounds b;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e), RK_OK);

    struct model_gpu bad = g;
    bad.bandwidth = 0.0;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    assert_string_equal(model_check_gpu(&bad), "bandwidth must be positive");
    assert_int_equal(model_tsm2_search_gd(&bad, &p, NULL, &ch), RK_EUSAGE);
    assert_int_equal(model_tsm2_search_exhaustive(&bad, &p, NULL, &ch), RK_EUSAGE);
    bad = g, bad.peak_flops = -1.0;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    bad = g, bad.sms = 0;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    bad = g, bad.clock_hz = NAN;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    bad = g, bad.mem_latency_cycles = 0;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    bad = g, bad.regs_fixed = -1;
    assert_int_equal(model_tsm2_evaluate(&bad, &p, &e), RK_EUSAGE);
    assert_int_equal(model_tsm2_evaluate(NULL, &p, &e), RK_EUSAGE);

    struct model_tsm2_problem q = p;
    q.m = 0;
    assert_int_equal(model_tsm2_evaluate(&g, &q, &e), RK_EUSAGE);
    assert_int_equal(model_tsm2_search_gd(&g, &q, NULL, &ch), RK_EUSAGE);
    q = p, q.n = -16;
    assert_int_equal(model_tsm2_evaluate(&g, &q, &e), RK_EUSAGE);
    q = p, q.t2 = 0;
    assert_int_equal(model_tsm2_evaluate(&g, &q, &e), RK_EUSAGE);
    q = p, q.t2 = 17; /* more columns than n */
    assert_int_equal(model_tsm2_evaluate(&g, &q, &e), RK_EUSAGE);
    assert_string_equal(model_check_tsm2(&q, 1), "t2 must not exceed n");
    assert_null(model_check_tsm2(&q, 0)); /* the searches ignore t2, t3 */
    assert_int_equal(model_tsm2_search_gd(&g, &q, NULL, &ch), RK_OK);
    q = p, q.elem_bytes = 5;
    assert_int_equal(model_tsm2_evaluate(&g, &q, &e), RK_EUSAGE);
    q = p, q.t1 = -1;
    assert_int_equal(model_tsm2_default_bounds(&q, &b), RK_EUSAGE);

    /* a box outside 1..n / 1..k, or empty */
    assert_int_equal(model_tsm2_default_bounds(&p, &b), RK_OK);
    assert_int_equal(b.t2_min, 1);
    assert_int_equal(b.t2_max, 16);
    assert_int_equal(b.t3_min, 1);
    assert_int_equal(b.t3_max, 128); /* t1 */
    /* no t1: k, or what a thread's 255 registers hold at t2 = 1, C = 0 */
    q = p, q.t1 = 0, q.k = 853807;
    assert_int_equal(model_tsm2_default_bounds(&q, &b), RK_OK);
    assert_int_equal(b.t3_max, q.elem_bytes == 8 ? 62 : 126); /* (255*4/bytes - 3) / 2 */
    q.k = 40;
    assert_int_equal(model_tsm2_default_bounds(&q, &b), RK_OK);
    assert_int_equal(b.t3_max, 40);
    assert_int_equal(model_tsm2_default_bounds(&p, &b), RK_OK);
    struct model_tsm2_bounds bb = b;
    bb.t2_max = 17;
    assert_int_equal(model_tsm2_search_gd(&g, &p, &bb, &ch), RK_EUSAGE);
    bb = b, bb.t3_min = 0;
    assert_int_equal(model_tsm2_search_exhaustive(&g, &p, &bb, &ch), RK_EUSAGE);
    bb = b, bb.t2_min = 9, bb.t2_max = 8;
    assert_int_equal(model_tsm2_search_exhaustive(&g, &p, &bb, &ch), RK_EUSAGE);
    /* too many points for the exhaustive search: a t1 that lets t3 reach k = 1e7 */
    q = p, q.n = 10000000, q.k = 10000000, q.t1 = 10000000;
    assert_int_equal(model_tsm2_search_exhaustive(&g, &q, NULL, &ch), RK_EUSAGE);
    assert_true(isnan(model_tsm2_t2_threshold(1e12, 0.0, 8)));
}

static void test_t2_r_and_bound(void **state)
{
    (void)state;
    struct model_gpu gpus[] = {gpu_k40c(), gpu_m40(), gpu_p100(), gpu_h100(8), gpu_h100(4)};
    const int ebytes[] = {8, 8, 8, 8, 4};
    long checked = 0, mem = 0, comp = 0;
    for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++) {
        double thr = model_tsm2_t2_threshold(gpus[gi].peak_flops, gpus[gi].bandwidth, ebytes[gi]);
        for (int n = 1; n <= 128; n *= 2) {
            for (int t2 = 1; t2 <= n; t2++) {
                for (int t3 = 1; t3 <= 32; t3 *= 2) {
                    struct model_tsm2_problem p = {15360, n, 15360, ebytes[gi], 128, t2, t3};
                    struct model_tsm2_eval e;
                    assert_int_equal(model_tsm2_evaluate(&gpus[gi], &p, &e), RK_OK);
                    /* §3.6.2: r > 1 compute-bound, otherwise memory-bound */
                    assert_true((e.r <= 1.0) == (e.bound == MODEL_BOUND_DRAM));
                    assert_true((e.r > 1.0) == (e.bound == MODEL_BOUND_COMPUTE));
                    /* r = t2/bytes * Band/Perf, and = time_comp / time_mem */
                    double r = (double)t2 / ebytes[gi] * gpus[gi].bandwidth / gpus[gi].peak_flops;
                    assert_true(close_to(e.r, r, 1e-12 * r));
                    assert_true(close_to(e.time_comp / e.time_mem, r, 1e-12 * r));
                    /* the threshold is where r = 1 */
                    assert_true(close_to(e.t2_threshold, thr, 1e-12 * thr));
                    if (t2 < thr)
                        assert_int_equal(e.bound, MODEL_BOUND_DRAM);
                    if (t2 > thr)
                        assert_int_equal(e.bound, MODEL_BOUND_COMPUTE);
                    assert_int_equal(e.problem_bound,
                                     n > thr ? MODEL_BOUND_COMPUTE : MODEL_BOUND_DRAM);
                    /* the prediction is the objective of the region */
                    assert_true(e.predicted_time_s ==
                                (e.r <= 1.0 ? e.time_mem_total_s : e.time_comp_total_s));
                    assert_true(e.predicted_time_s > 0.0 && isfinite(e.predicted_time_s));
                    mem += e.bound == MODEL_BOUND_DRAM;
                    comp += e.bound == MODEL_BOUND_COMPUTE;
                    checked++;
                }
            }
        }
    }
    /* the sweep crosses the threshold both ways (M40: ~6, fp32 H100: ~80) */
    assert_true(mem > 100 && comp > 100);
    assert_true(checked == mem + comp);
}

static void test_t3_exhaustive_never_slower(void **state)
{
    (void)state;
    struct model_gpu gpus[] = {gpu_k40c(), gpu_m40(), gpu_p100(), gpu_h100(8), gpu_h100(4)};
    const int ebytes[] = {8, 8, 8, 8, 4};
    const long ms[] = {10240, 1000000};
    const int t1s[] = {64, 256};
    int branches[4] = {0};
    for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++) {
        for (int n = 2; n <= 128; n *= 2) {
            for (size_t mi = 0; mi < 2; mi++) {
                for (size_t ti = 0; ti < 2; ti++) {
                    long k = ms[mi] == 1000000 ? 4096 : ms[mi];
                    struct model_tsm2_problem p = {ms[mi], n, k, ebytes[gi], t1s[ti], 0, 0};
                    struct model_tsm2_choice gd, ex;
                    struct model_tsm2_bounds b;
                    assert_int_equal(model_tsm2_default_bounds(&p, &b), RK_OK);
                    assert_int_equal(model_tsm2_search_gd(&gpus[gi], &p, NULL, &gd), RK_OK);
                    assert_int_equal(model_tsm2_search_exhaustive(&gpus[gi], &p, NULL, &ex), RK_OK);
                    assert_true(ex.predicted_time_s <= gd.predicted_time_s);
                    /* both inside the box; GD's choice is its raw result rounded */
                    assert_in_range(gd.t2, b.t2_min, b.t2_max);
                    assert_in_range(gd.t3, b.t3_min, b.t3_max);
                    assert_in_range(ex.t2, b.t2_min, b.t2_max);
                    assert_in_range(ex.t3, b.t3_min, b.t3_max);
                    assert_int_equal(gd.t2, (int)lround(gd.t2_raw));
                    assert_int_equal(gd.t3, (int)lround(gd.t3_raw));
                    assert_int_equal(gd.t1, t1s[ti]);
                    assert_true(gd.converged);
                    assert_true(gd.iterations > 0);
                    assert_int_equal(ex.iterations,
                                     (long)(b.t2_max - b.t2_min + 1) * (b.t3_max - b.t3_min + 1));
                    /* the choice's time is the model at the choice */
                    struct model_tsm2_problem at = p;
                    struct model_tsm2_eval e;
                    at.t2 = gd.t2, at.t3 = gd.t3;
                    assert_int_equal(model_tsm2_evaluate(&gpus[gi], &at, &e), RK_OK);
                    assert_true(e.predicted_time_s == gd.predicted_time_s);
                    assert_int_equal(e.bound, gd.bound);
                    /* Alg. 5 line 1 */
                    double thr = model_tsm2_t2_threshold(gpus[gi].peak_flops, gpus[gi].bandwidth,
                                                         ebytes[gi]);
                    assert_int_equal(gd.alg5_branch == 1, n <= thr);
                    branches[gd.alg5_branch]++;
                }
            }
        }
    }
    assert_true(branches[1] > 0 && branches[2] + branches[3] > 0);
    /* a custom box is honoured */
    struct model_tsm2_problem p = {10240, 16, 10240, 8, 128, 0, 0};
    struct model_tsm2_bounds b = {2, 3, 5, 6};
    struct model_tsm2_choice c;
    struct model_gpu g = gpu_k40c();
    assert_int_equal(model_tsm2_search_exhaustive(&g, &p, &b, &c), RK_OK);
    assert_in_range(c.t2, 2, 3);
    assert_in_range(c.t3, 5, 6);
    assert_int_equal(c.iterations, 4);
    assert_int_equal(model_tsm2_search_gd(&g, &p, &b, &c), RK_OK);
    assert_in_range(c.t2, 2, 3);
    assert_in_range(c.t3, 5, 6);
}

static void test_t4_occupancy_limiters(void **state)
{
    (void)state;
    struct model_gpu g = gpu_h100(4);
    struct model_tsm2_eval e;
    /* fp32, t2 = t3 = 1, C = 16: R = 5 + 16 = 21 -> 3120 > 2048: HW_MAX binds */
    struct model_tsm2_problem p = {10240, 16, 10240, 4, 128, 1, 1};
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e), RK_OK);
    assert_true(e.max_occupancy == 2048.0 && e.occ_regs > 2048.0 && e.occ_smem > 2048.0);
    assert_true(close_to(e.regs_per_thread, 21.0, 0.0));
    /* fp64, t2 = 16, t3 = 16: R = (48 + 32) * 2 + 16 = 176 -> 372.4; S = 128 -> 1824 */
    p.elem_bytes = 8, p.t2 = 16, p.t3 = 16;
    g = gpu_h100(8);
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e), RK_OK);
    assert_true(close_to(e.max_occupancy, 65536.0 / 176.0, 1e-9));
    /* shared memory binds with little of it: 48 KB and fp64 t2 = 16 -> 384 */
    g.smem_per_sm = 49152, p.t3 = 1;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e), RK_OK);
    assert_true(e.max_occupancy == 384.0 && e.occ_regs > 384.0);
    /* Util is the ratio of Little's-law concurrencies */
    assert_true(close_to(e.util_mem, e.concurrent_mem / e.concurrent_max_mem, 1e-15));
    assert_true(close_to(e.util_comp, e.concurrent_comp / e.concurrent_max_comp, 1e-15));
    assert_true(close_to(e.concurrent_comp, e.concurrent_mem * 16, 1e-9));
    assert_true(e.bandwidth_eff <= g.bandwidth && e.compute_eff <= g.peak_flops);
}

static void test_t5_field_table(void **state)
{
    (void)state;
    const char *required[] = {"t2_threshold", "max_occupancy",   "util_mem", "util_comp", "r",
                              "bound",        "predicted_time_s"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        int found = 0;
        for (int j = 0; j < model_tsm2_nfields; j++)
            found += strcmp(model_tsm2_fields[j].key, required[i]) == 0;
        assert_int_equal(found, 1);
    }
    struct model_gpu g = gpu_k40c();
    struct model_tsm2_problem p = {10240, 16, 10240, 8, 128, 16, 4};
    struct model_tsm2_eval e;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e), RK_OK);
    /* every field described once, inside the struct, with a unit and help */
    size_t covered = 0;
    for (int j = 0; j < model_tsm2_nfields; j++) {
        const struct model_field *f = &model_tsm2_fields[j];
        assert_non_null(f->unit);
        assert_true(strlen(f->help) > 10);
        assert_true(f->offset < sizeof e);
        for (int i = 0; i < j; i++) {
            assert_string_not_equal(model_tsm2_fields[i].key, f->key);
            assert_true(model_tsm2_fields[i].offset != f->offset);
        }
        covered += f->type == MODEL_F_DOUBLE ? sizeof(double) : sizeof(enum model_bound);
    }
    assert_true(covered <= sizeof e && covered + 8 >= sizeof e); /* no field left out */
    for (int j = 0; j < model_tsm2_nfields; j++) {
        const struct model_field *f = &model_tsm2_fields[j];
        if (strcmp(f->key, "r") == 0)
            assert_true(model_field_double(f, &e) == e.r);
        if (strcmp(f->key, "bound") == 0)
            assert_true(model_field_double(f, &e) == (double)e.bound);
        if (strcmp(f->key, "predicted_time_s") == 0)
            assert_true(model_field_double(f, &e) == e.predicted_time_s);
    }
}

/* ---------------------------------------------------------------------------- */
/* S: statistics                                                                 */

static void test_s1_stats(void **state)
{
    (void)state;
    assert_true(close_to(model_rel_error(110.0, 100.0), 0.1, 1e-15));
    assert_true(close_to(model_rel_error(90.0, 100.0), -0.1, 1e-15));
    assert_true(isnan(model_rel_error(1.0, 0.0)));
    assert_true(isnan(model_rel_error(INFINITY, 1.0)));

    double pred[] = {110, 50, 300, 10, 0.5};
    double meas[] = {100, 100, 200, 10, 1.0};
    double pred_copy[5], meas_copy[5], v;
    memcpy(pred_copy, pred, sizeof pred);
    memcpy(meas_copy, meas, sizeof meas);
    /* APE: 10, 50, 50, 0, 50 */
    assert_int_equal(model_mape(pred, meas, 5, &v), RK_OK);
    assert_true(close_to(v, 32.0, 1e-12));
    assert_int_equal(model_median_ape(pred, meas, 5, &v), RK_OK);
    assert_true(close_to(v, 50.0, 1e-12));
    assert_int_equal(model_median_ape(pred, meas, 4, &v), RK_OK); /* 0 10 50 50 -> 30 */
    assert_true(close_to(v, 30.0, 1e-12));
    assert_int_equal(model_ape_percentile(pred, meas, 5, 90.0, &v), RK_OK);
    assert_true(close_to(v, 50.0, 1e-12));
    assert_int_equal(model_ape_percentile(pred, meas, 5, 0.0, &v), RK_OK);
    assert_true(close_to(v, 0.0, 1e-12));
    size_t w;
    assert_int_equal(model_ape_within(pred, meas, 5, 10.0, &w), RK_OK); /* 0 and 10 */
    assert_int_equal(w, 2);
    assert_int_equal(model_ape_within(pred, meas, 5, 49.0, &w), RK_OK);
    assert_int_equal(w, 2);
    assert_int_equal(model_ape_within(pred, meas, 5, 50.0, &w), RK_OK);
    assert_int_equal(w, 5);
    assert_int_equal(model_ape_within(pred, (double[]){0.0}, 1, 10.0, &w), RK_EUSAGE);
    assert_int_equal(model_ape_within(pred, meas, 0, 10.0, &w), RK_EUSAGE);
    struct model_ape_summary a; /* the same figures at once */
    assert_int_equal(model_ape_summarize(pred, meas, 5, &a), RK_OK);
    assert_int_equal(model_ape_percentile(pred, meas, 5, 90.0, &v), RK_OK);
    assert_true(close_to(a.p90, v, 1e-12));
    assert_int_equal(model_median_ape(pred, meas, 5, &v), RK_OK);
    assert_true(close_to(a.median, v, 1e-12));
    assert_int_equal(model_mape(pred, meas, 5, &v), RK_OK);
    assert_true(close_to(a.mean, v, 1e-12));
    assert_int_equal(a.within10, 2);
    assert_int_equal(a.within25, 2);
    assert_int_equal(model_ape_summarize(pred, meas, 0, &a), RK_EUSAGE);
    assert_true(memcmp(pred, pred_copy, sizeof pred) == 0);
    assert_true(memcmp(meas, meas_copy, sizeof meas) == 0);

    double x[] = {4, 1, 3, 2};
    assert_int_equal(model_percentile(x, 4, 50.0, &v), RK_OK);
    assert_true(close_to(v, 2.5, 1e-12));
    assert_int_equal(model_percentile(x, 4, 90.0, &v), RK_OK); /* pos 2.7 -> 3.7 */
    assert_true(close_to(v, 3.7, 1e-12));
    assert_int_equal(model_percentile(x, 4, 100.0, &v), RK_OK);
    assert_true(close_to(v, 4.0, 1e-12));
    assert_int_equal(model_percentile(x, 1, 90.0, &v), RK_OK);
    assert_true(close_to(v, 4.0, 1e-12));
    assert_true(x[0] == 4 && x[1] == 1);

    double m4[] = {4, 1, 3, 2}, m3[] = {3, 1, 2}, m2[] = {0.1, 10};
    assert_true(model_median(m4, 4) == 2.5); /* the mean of the two middle values */
    assert_true(m4[0] == 1 && m4[1] == 2 && m4[2] == 3 && m4[3] == 4); /* sorted in place */
    assert_true(model_median(m3, 3) == 2);
    assert_true(model_median(m2, 2) == 0.5 * (0.1 + 10));
    assert_true(isnan(model_median(m3, 0)));

    double g[] = {1, 10, 100};
    assert_int_equal(model_geomean(g, 3, &v), RK_OK);
    assert_true(close_to(v, 10.0, 1e-12));
    double big[] = {1e300, 1e300};
    assert_int_equal(model_geomean(big, 2, &v), RK_OK);
    assert_true(close_to(v / 1e300, 1.0, 1e-12));

    /* bad input */
    double zero[] = {0.0}, neg[] = {-1.0}, nan[] = {NAN};
    assert_int_equal(model_mape(pred, zero, 1, &v), RK_EUSAGE);
    assert_int_equal(model_mape(pred, meas, 0, &v), RK_EUSAGE);
    assert_int_equal(model_mape(NULL, meas, 1, &v), RK_EUSAGE);
    assert_int_equal(model_median_ape(nan, meas, 1, &v), RK_EUSAGE);
    assert_int_equal(model_ape_percentile(pred, meas, 5, 101.0, &v), RK_EUSAGE);
    assert_int_equal(model_ape_percentile(pred, meas, 5, NAN, &v), RK_EUSAGE);
    assert_int_equal(model_percentile(x, 0, 50.0, &v), RK_EUSAGE);
    assert_int_equal(model_percentile(nan, 1, 50.0, &v), RK_EUSAGE);
    assert_int_equal(model_geomean(neg, 1, &v), RK_EUSAGE);
    assert_int_equal(model_geomean(zero, 1, &v), RK_EUSAGE);
    assert_int_equal(model_geomean(g, 0, &v), RK_EUSAGE);
}

/* ---------------------------------------------------------------------------- */
/* G: golden files                                                               */

#define MAX_ITEMS 64

struct kv {
    char key[48];
    char val[64];
    double tol;
    int used;
};

struct golden {
    char path[512];
    char eval[48];
    struct kv in[MAX_ITEMS];
    int nin;
    struct kv expect[MAX_ITEMS];
    int nexpect;
    struct kv out[MAX_ITEMS]; /* val holds a name for bounds, else "" */
    double outv[MAX_ITEMS];
    int nout;
};

static void golden_fail(const struct golden *g, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail_msg("%s: %s", g->path, msg);
}

static void golden_load(struct golden *g, const char *file)
{
    char line[1024];
    FILE *f = NULL;

    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s/%s", RK_TEST_DATA, file);
    f = fopen(g->path, "r");
    if (!f)
        golden_fail(g, "cannot open");
    while (fgets(line, sizeof line, f)) {
        char a[48] = "", b[48] = "", c[64] = "", d[64] = "";
        if (line[0] == '#' || line[0] == '\n')
            continue;
        int n = sscanf(line, "%47s %47s %63s %63s", a, b, c, d);
        if (n < 1)
            continue;
        if (strcmp(a, "name") == 0 || strcmp(a, "seed") == 0)
            continue;
        if (strcmp(a, "eval") == 0 && n == 2) {
            snprintf(g->eval, sizeof g->eval, "%s", b);
        } else if (strcmp(a, "in") == 0 && n == 3 && g->nin < MAX_ITEMS) {
            struct kv *kv = &g->in[g->nin++];
            snprintf(kv->key, sizeof kv->key, "%s", b);
            snprintf(kv->val, sizeof kv->val, "%s", c);
        } else if (strcmp(a, "expect") == 0 && n >= 3 && g->nexpect < MAX_ITEMS) {
            struct kv *kv = &g->expect[g->nexpect++];
            snprintf(kv->key, sizeof kv->key, "%s", b);
            snprintf(kv->val, sizeof kv->val, "%s", c);
            kv->tol = n == 4 ? strtod(d, NULL) : 0.0;
        } else {
            fclose(f);
            golden_fail(g, "malformed line: %s", line);
        }
    }
    fclose(f);
    if (!g->eval[0] || g->nexpect == 0)
        golden_fail(g, "needs an eval line and at least one expect line");
}

static const char *in_str(struct golden *g, const char *key)
{
    for (int i = 0; i < g->nin; i++) {
        if (strcmp(g->in[i].key, key) == 0) {
            g->in[i].used = 1;
            return g->in[i].val;
        }
    }
    return NULL;
}

/* A numeric input: required ones fail the case when missing; optional give dflt. */
static double in_num(struct golden *g, const char *key, int required, double dflt)
{
    const char *s = in_str(g, key);
    char *end;
    if (!s) {
        if (required)
            golden_fail(g, "missing input '%s'", key);
        return dflt;
    }
    double v = strtod(s, &end);
    if (*end)
        golden_fail(g, "input '%s' is not a number: %s", key, s);
    return v;
}

static void out_num(struct golden *g, const char *key, double v)
{
    assert_true(g->nout < MAX_ITEMS);
    snprintf(g->out[g->nout].key, sizeof g->out[0].key, "%s", key);
    g->out[g->nout].val[0] = '\0';
    g->outv[g->nout++] = v;
}

static void out_name(struct golden *g, const char *key, const char *name)
{
    assert_true(g->nout < MAX_ITEMS);
    snprintf(g->out[g->nout].key, sizeof g->out[0].key, "%s", key);
    snprintf(g->out[g->nout].val, sizeof g->out[0].val, "%s", name);
    g->outv[g->nout++] = NAN;
}

static void golden_eval_cost(struct golden *g)
{
    const char *fam_name = in_str(g, "family");
    enum model_kernel_family fam;
    if (!fam_name || model_family_from_name(fam_name, &fam) != RK_OK)
        golden_fail(g, "missing or unknown family");
    struct model_shape s = {(long)in_num(g, "m", 1, 0), (long)in_num(g, "n", 1, 0),
                            (long)in_num(g, "k", 1, 0), (int)in_num(g, "elem_bytes", 1, 0)};
    struct model_params p = {
        .block = (int)in_num(g, "block", 0, 0),
        .per_thread = (int)in_num(g, "per_thread", 0, 0),
        .tile_m = (int)in_num(g, "tile_m", 0, 0),
        .tile_n = (int)in_num(g, "tile_n", 0, 0),
        .tile_k = (int)in_num(g, "tile_k", 0, 0),
        .scale_m = (int)in_num(g, "scale_m", 0, 0),
        .scale_n = (int)in_num(g, "scale_n", 0, 0),
        .t1 = (int)in_num(g, "t1", 0, 0),
        .t2 = (int)in_num(g, "t2", 0, 0),
        .t3 = (int)in_num(g, "t3", 0, 0),
        .tcf = (int)in_num(g, "tcf", 0, 0),
    };
    struct model_cost c;
    if (model_cost(fam, &s, &p, &c) != RK_OK)
        golden_fail(g, "model_cost refused: %s", model_check_cost(fam, &s, &p));
    out_num(g, "flops", c.flops);
    out_num(g, "flops_exec", c.flops_exec);
    out_num(g, "bytes_dram", c.bytes_dram);
    out_num(g, "bytes_dram_min", c.bytes_dram_min);
    out_num(g, "bytes_l2", c.bytes_l2);
    out_num(g, "bytes_l1", c.bytes_l1);
    out_num(g, "bytes_shared", c.bytes_shared);
    /* the seeds' q: multiply-adds per element moved (000 §6, 003 Q5.B) */
    out_num(g, "q", (c.flops / 2.0) / (c.bytes_dram / s.elem_bytes));
    out_num(g, "intensity", c.flops / c.bytes_dram);
}

static void golden_eval_tsm2(struct golden *g)
{
    struct model_gpu gpu = {
        in_num(g, "peak_flops", 1, 0),
        in_num(g, "bandwidth", 1, 0),
        in_num(g, "clock_hz", 1, 0),
        (int)in_num(g, "sms", 1, 0),
        (int)in_num(g, "regs_per_sm", 1, 0),
        in_num(g, "smem_per_sm", 1, 0),
        (int)in_num(g, "max_threads_per_sm", 1, 0),
        in_num(g, "mem_latency", 1, 0),
        in_num(g, "comp_latency", 1, 0),
        in_num(g, "regs_fixed", 1, 0),
        NULL,
        NULL,
        0,
        0,
    };
    struct model_tsm2_problem p = {
        (long)in_num(g, "m", 1, 0),         (long)in_num(g, "n", 1, 0), (long)in_num(g, "k", 1, 0),
        (int)in_num(g, "elem_bytes", 1, 0), (int)in_num(g, "t1", 1, 0), (int)in_num(g, "t2", 1, 0),
        (int)in_num(g, "t3", 1, 0),
    };
    struct model_tsm2_eval e;
    if (model_tsm2_evaluate(&gpu, &p, &e) != RK_OK)
        golden_fail(g, "model_tsm2_evaluate refused: %s / %s", model_check_gpu(&gpu),
                    model_check_tsm2(&p, 1));
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *f = &model_tsm2_fields[i];
        double v = model_field_double(f, &e);
        if (f->type == MODEL_F_BOUND)
            out_name(g, f->key, model_bound_name((enum model_bound)v));
        else
            out_num(g, f->key, v);
    }
    struct model_tsm2_choice gd, ex;
    assert_int_equal(model_tsm2_search_gd(&gpu, &p, NULL, &gd), RK_OK);
    assert_int_equal(model_tsm2_search_exhaustive(&gpu, &p, NULL, &ex), RK_OK);
    assert_true(ex.predicted_time_s <= gd.predicted_time_s);
    out_num(g, "gd_t2", gd.t2);
    out_num(g, "gd_t3", gd.t3);
    out_num(g, "gd_branch", gd.alg5_branch);
    out_num(g, "gd_time_s", gd.predicted_time_s);
    out_num(g, "ex_t2", ex.t2);
    out_num(g, "ex_t3", ex.t3);
    out_num(g, "ex_time_s", ex.predicted_time_s);
}

static void golden_run(void **state)
{
    struct golden *g = malloc(sizeof *g);
    assert_non_null(g);
    golden_load(g, (const char *)*state);

    if (strcmp(g->eval, "q_stmvb") == 0) {
        out_num(g, "q",
                model_q_stmvb(in_num(g, "n", 1, 0), in_num(g, "b", 1, 0), in_num(g, "p", 1, 0)));
    } else if (strcmp(g->eval, "q_tiled") == 0) {
        out_num(g, "q",
                model_q_tiled(in_num(g, "tile_m", 1, 0), in_num(g, "tile_n", 1, 0),
                              in_num(g, "n", 1, 0)));
    } else if (strcmp(g->eval, "peak") == 0) {
        double peak =
            model_peak_flops((int)in_num(g, "sms", 1, 0), (int)in_num(g, "cores_per_sm", 1, 0),
                             in_num(g, "flops_per_cycle", 1, 0), in_num(g, "clock_hz", 1, 0));
        out_num(g, "peak_flops", peak);
        out_num(g, "ridge", model_ridge_point(peak, in_num(g, "bandwidth", 1, 0)));
    } else if (strcmp(g->eval, "t2_threshold") == 0) {
        out_num(g, "t2_threshold",
                model_tsm2_t2_threshold(in_num(g, "peak_flops", 1, 0), in_num(g, "bandwidth", 1, 0),
                                        (int)in_num(g, "elem_bytes", 1, 0)));
    } else if (strcmp(g->eval, "cost") == 0) {
        golden_eval_cost(g);
    } else if (strcmp(g->eval, "tsm2") == 0) {
        golden_eval_tsm2(g);
    } else {
        golden_fail(g, "unknown eval '%s'", g->eval);
    }

    for (int i = 0; i < g->nin; i++)
        if (!g->in[i].used)
            golden_fail(g, "input '%s' is not used by eval %s", g->in[i].key, g->eval);
    for (int i = 0; i < g->nexpect; i++) {
        const struct kv *x = &g->expect[i];
        int j = 0;
        while (j < g->nout && strcmp(g->out[j].key, x->key) != 0)
            j++;
        if (j == g->nout)
            golden_fail(g, "eval %s has no output '%s'", g->eval, x->key);
        char *end;
        double want = strtod(x->val, &end);
        if (g->out[j].val[0]) {
            if (strcmp(g->out[j].val, x->val) != 0)
                golden_fail(g, "%s: got %s, want %s", x->key, g->out[j].val, x->val);
        } else if (*end || !(fabs(g->outv[j] - want) <= x->tol)) {
            golden_fail(g, "%s: got %.10g, want %s +- %g", x->key, g->outv[j], x->val, x->tol);
        }
    }
    free(g);
}

static void test_d1_dram_curve(void **state)
{
    (void)state;
    static const double b[3] = {1e6, 4e6, 16e6}, u[3] = {0.4, 0.9, 1.0};
    static const double bad_u[3] = {0.4, 0.3, 1.0}, over[3] = {0.4, 1.2, 1.0},
                        short_u[3] = {0.4, 0.9, 0.95};
    struct model_gpu g = gpu_h100(4);
    assert_null(model_check_gpu(&g));
    /* no curve: Little's law at mem_latency_cycles */
    const double need = g.bandwidth * g.mem_latency_cycles / g.clock_hz;
    assert_true(fabs(model_dram_util(&g, need / 2) - 0.5) < 1e-12);
    assert_true(model_dram_util(&g, 2 * need) == 1.0);
    g.dram_curve_bytes = b;
    g.dram_curve_util = u;
    g.dram_curve_n = 3;
    assert_null(model_check_gpu(&g));
    for (int i = 0; i < 3; i++)
        assert_true(fabs(model_dram_util(&g, b[i]) - u[i]) < 1e-12);
    assert_true(fabs(model_dram_util(&g, 2e6) - 0.65) < 1e-12);  /* halfway in log2 */
    assert_true(fabs(model_dram_util(&g, 0.5e6) - 0.2) < 1e-12); /* proportional below */
    assert_true(model_dram_util(&g, 0.0) == 0.0);
    assert_true(model_dram_util(&g, 1e9) == 1.0);
    assert_true(isnan(model_dram_util(&g, NAN)) && isnan(model_dram_util(&g, -1.0)));
    g.dram_curve_util = bad_u;
    assert_non_null(model_check_gpu(&g));
    g.dram_curve_util = over;
    assert_non_null(model_check_gpu(&g));
    g.dram_curve_util = short_u;
    assert_non_null(model_check_gpu(&g));
    g.dram_curve_util = u;
    g.dram_curve_n = 1;
    assert_non_null(model_check_gpu(&g));
}

int main(void)
{
    struct CMUnitTest tests[32 + sizeof golden_cases / sizeof golden_cases[0]];
    size_t n = 0;
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_r1_attainable_ridge),
        cmocka_unit_test(test_r2_roofline_time),
        cmocka_unit_test(test_r3_hierarchical),
        cmocka_unit_test(test_n1_names),
        cmocka_unit_test(test_c1_cost_bad_input),
        cmocka_unit_test(test_c2_cost_invariants),
        cmocka_unit_test(test_c3_cost_reproduces_q),
        cmocka_unit_test(test_c4_cost_tsm2),
        cmocka_unit_test(test_t1_tsm2_bad_input),
        cmocka_unit_test(test_t2_r_and_bound),
        cmocka_unit_test(test_t3_exhaustive_never_slower),
        cmocka_unit_test(test_t4_occupancy_limiters),
        cmocka_unit_test(test_t5_field_table),
        cmocka_unit_test(test_s1_stats),
        cmocka_unit_test(test_d1_dram_curve),
    };
    for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++)
        tests[n++] = unit[i];
    for (size_t i = 0; i < sizeof golden_cases / sizeof golden_cases[0]; i++) {
        struct CMUnitTest t = cmocka_unit_test_prestate(golden_run, (void *)golden_cases[i]);
        t.name = golden_cases[i];
        tests[n++] = t;
    }
    return _cmocka_run_group_tests("model", tests, n, NULL, NULL);
}
