/*
 * test_tune.c - the model side of `roofkit tune` (model/tune.c): mapping onto instantiated
 * values, the regret, and ISM2's tcf model, on hand-computed numbers.
 *
 * Cases:
 *   nearest_log2     t2 = 3 -> 4, t3 = 6 -> 8, 40 -> 16, 0.5 -> 1, sqrt(8) (a tie in log2
 *                    between 2 and 4) -> 2, exact values stay; NaN, 0, n = 0 refused (-1)
 *   regret           1.1 ms / 1.0 ms = 1.1; NaN for a zero or non-finite time
 *   tcf_hand         one launch computed by hand: blocks, waves, bytes in flight (a short
 *                    stream that does not fill the pipeline), the DRAM time at full
 *                    utilisation; a grid smaller than the GPU loses the idle SMs' share
 *   tcf_latency      a DRAM latency so long that Little's law is not met: util < 1, bound
 *                    latency, slower than at the short latency
 *   tcf_search       the search equals a brute force over 1..64 with ties to the smaller
 *                    tcf, for both ISM2 families and both precisions
 *   tcf_refused      wrong family, bad tiles, tcf 0, a block that does not fit
 *   map_tsm2         the TSM2 choice onto instantiated values: the neighbour pair the model
 *                    predicts fastest (t3 = 10 -> 16 when 8 leaves utilisation under 1), a
 *                    tie to the larger t3, exact values stay, the ends clamp, refusals
 *   plan_hand        the entry point's cost of a configuration (model_tsm2_plan_evaluate) by
 *                    hand: one saturated wave is its bytes at the bandwidth plus one start; a
 *                    partial second wave with bytes in flight under Little's law is slower
 *                    wave by wave (latency-bound); load/store instructions past the DRAM time
 *                    make it compute-bound; invalid inputs refused
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model.h"

#define CLOSE(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * fabs(b))

static void nearest_log2(void **state)
{
    const long v[] = {1, 2, 4, 8, 16};
    (void)state;
    assert_int_equal(v[model_tune_nearest(3, v, 5)], 4);
    assert_int_equal(v[model_tune_nearest(6, v, 5)], 8);
    assert_int_equal(v[model_tune_nearest(40, v, 5)], 16);
    assert_int_equal(v[model_tune_nearest(0.5, v, 5)], 1);
    assert_int_equal(v[model_tune_nearest(sqrt(8.0), v, 5)], 2);
    for (int i = 0; i < 5; i++)
        assert_int_equal(model_tune_nearest((double)v[i], v, 5), i);
    assert_int_equal(model_tune_nearest(NAN, v, 5), -1);
    assert_int_equal(model_tune_nearest(0, v, 5), -1);
    assert_int_equal(model_tune_nearest(3, v, 0), -1);
    assert_int_equal(model_tune_nearest(3, NULL, 5), -1);
}

static void regret(void **state)
{
    (void)state;
    CLOSE(model_tune_regret(1.1e-3, 1.0e-3), 1.1);
    CLOSE(model_tune_regret(2e-6, 2e-6), 1.0);
    assert_true(isnan(model_tune_regret(0, 1)));
    assert_true(isnan(model_tune_regret(1, 0)));
    assert_true(isnan(model_tune_regret(INFINITY, 1)));
    assert_true(isnan(model_tune_regret(NAN, 1)));
}

/* An H100-like GPU: 132 SMs at 1.98 GHz, 3.2 TB/s, 800-cycle DRAM latency. */
static struct model_gpu h100(void)
{
    struct model_gpu g;
    memset(&g, 0, sizeof g);
    g.peak_flops = 67e12;
    g.bandwidth = 3.2e12;
    g.clock_hz = 1.98e9;
    g.sms = 132;
    g.regs_per_sm = 65536;
    g.smem_per_sm = 233472;
    g.max_threads_per_sm = 2048;
    g.mem_latency_cycles = 800;
    g.comp_latency_cycles = 4;
    return g;
}

static struct model_ism2_tcf_in ism2_in(const struct model_gpu *g, long m, int kn, int e)
{
    struct model_ism2_tcf_in in = {0};
    in.gpu = g;
    in.fam = MODEL_FAM_ISM2;
    in.shape = (struct model_shape){m, kn, kn, e};
    in.t1 = 128;
    in.t2 = kn;
    in.t3 = 8;
    in.rows_per_thread = 1;
    in.stages = 4;
    in.regs_per_thread = 128; /* 4 warps x 4096 = 16384 registers a block: 4 per SM */
    in.smem_per_block = 128.0 * kn * e;
    in.bw_l2 = NAN;
    return in;
}

static void tcf_hand(void **state)
{
    struct model_gpu g = h100();
    struct model_ism2_tcf_in in = ism2_in(&g, 10000000, 16, 8);
    struct model_ism2_tcf_eval ev;
    struct model_cost cost;
    struct model_params mp = {0};
    (void)state;
    /* tcf = 2: 5e6 threads, 39063 blocks; 4 per SM (128 registers x 128 threads: 16384 a
     * SM of 65536) -> 528 per wave, 73.98 waves; groups 2 x 2 = 4 -> 4 x 8 x 8 = 256 B */
    assert_int_equal(model_ism2_tcf_evaluate(&in, 2, &ev), RK_OK);
    CLOSE(ev.blocks, 39063.0);
    assert_int_equal(ev.blocks_per_sm, 4);
    CLOSE(ev.waves, 39063.0 / 528.0);
    CLOSE(ev.bytes_in_flight_per_thread, 256.0);
    CLOSE(ev.util_full, 1.0);
    mp.t1 = 128;
    mp.t2 = 16;
    mp.t3 = 8;
    mp.tcf = 2;
    assert_int_equal(model_cost(MODEL_FAM_ISM2, &in.shape, &mp, &cost), RK_OK);
    /* the tail wave (519 blocks) covers every SM and still meets Little's law */
    CLOSE(ev.time_dram_s, cost.bytes_dram_min / g.bandwidth);
    assert_int_equal(ev.bound, MODEL_BOUND_DRAM);
    /* each of the 74 waves (73 full, the tail) starts with 2 DRAM latencies */
    CLOSE(ev.time_start_s, 74 * 2 * 800 / 1.98e9);
    CLOSE(ev.time_s, ev.time_dram_s + ev.time_start_s);

    /* tcf = 1: one row per thread, 2 groups: the pipeline holds 2 of its 4 stages */
    assert_int_equal(model_ism2_tcf_evaluate(&in, 1, &ev), RK_OK);
    CLOSE(ev.bytes_in_flight_per_thread, 2 * 8 * 8.0);

    /* m = 1e5, tcf = 64: ceil(1e5 / 64) = 1563 threads, 13 blocks on 13 of 132 SMs; in
     * flight 13 x 128 x 256 B = 425984 B of the 3.2e12 x 800 / 1.98e9 = 1292929 B needed */
    in = ism2_in(&g, 100000, 16, 8);
    assert_int_equal(model_ism2_tcf_evaluate(&in, 64, &ev), RK_OK);
    CLOSE(ev.blocks, 13.0);
    double need = g.bandwidth * g.mem_latency_cycles / g.clock_hz;
    CLOSE(ev.util_tail, 13.0 * 128 * 256 / need);
    mp.tcf = 64;
    assert_int_equal(model_cost(MODEL_FAM_ISM2, &in.shape, &mp, &cost), RK_OK);
    CLOSE(ev.time_dram_s, cost.bytes_dram_min / (g.bandwidth * (13.0 / 132) * ev.util_tail));
    assert_int_equal(ev.bound, MODEL_BOUND_LATENCY);
    CLOSE(ev.time_start_s, 2 * 800 / 1.98e9); /* one wave */

    /* at saturation, fewer waves win: ISM2 fp64 1e5 x 16 x 16 on the H100 runs 1.97 waves
     * at tcf = 1 (3 blocks per SM of 130 registers) and 0.99 at tcf = 2, and tcf = 1 is
     * 2.5 us slower (docs/perf-notes.md "tune"); without the start the two tie */
    in = ism2_in(&g, 100000, 16, 8);
    in.t3 = 16;
    in.stages = 1;
    in.regs_per_thread = 130;
    {
        struct model_ism2_tcf_eval one, two;
        assert_int_equal(model_ism2_tcf_evaluate(&in, 1, &one), RK_OK);
        assert_int_equal(model_ism2_tcf_evaluate(&in, 2, &two), RK_OK);
        assert_int_equal(one.blocks_per_sm, 3);
        assert_true(one.waves > 1.9 && two.waves < 1.0);
        assert_true(one.time_s > two.time_s);
        CLOSE(one.time_start_s, 2 * two.time_start_s);
    }
}

static void tcf_latency(void **state)
{
    struct model_gpu g = h100(), slow = h100();
    struct model_ism2_tcf_in in = ism2_in(&g, 1000000, 8, 4), in_slow;
    struct model_ism2_tcf_eval a, b;
    (void)state;
    slow.mem_latency_cycles = 400000;
    in_slow = in;
    in_slow.gpu = &slow;
    assert_int_equal(model_ism2_tcf_evaluate(&in, 8, &a), RK_OK);
    assert_int_equal(model_ism2_tcf_evaluate(&in_slow, 8, &b), RK_OK);
    assert_true(b.util_tail < 1.0 || b.util_full < 1.0);
    assert_int_equal(b.bound, MODEL_BOUND_LATENCY);
    assert_true(b.time_s > a.time_s);
}

static void tcf_search(void **state)
{
    struct model_gpu g = h100();
    const long ms[] = {100000, 1000000, 10000000};
    (void)state;
    for (int fam = 0; fam < 2; fam++)
        for (int e = 4; e <= 8; e += 4)
            for (int i = 0; i < 3; i++)
                for (int kn = 8; kn <= 16; kn += 8) {
                    struct model_ism2_tcf_in in = ism2_in(&g, ms[i], kn, e);
                    struct model_ism2_tcf_eval best, ev;
                    long want = 0;
                    double tmin = INFINITY;
                    in.fam = fam ? MODEL_FAM_ISM2_OPT2 : MODEL_FAM_ISM2;
                    in.bw_l2 = fam ? 10e12 : NAN;
                    assert_int_equal(model_ism2_search_tcf(&in, 64, &best), RK_OK);
                    for (long t = 1; t <= 64; t++) {
                        assert_int_equal(model_ism2_tcf_evaluate(&in, t, &ev), RK_OK);
                        if (ev.time_s < tmin * (1 - 1e-9)) {
                            tmin = ev.time_s;
                            want = t;
                        }
                    }
                    assert_int_equal(best.tcf, want);
                    assert_true(best.time_s <= tmin * (1 + 1e-9));
                }
}

/* model_tune_map_tsm2: the neighbour pair the model predicts fastest, ties to the larger t3 */
static void map_tsm2(void **state)
{
    struct model_gpu g = h100();
    const long pow2[] = {1, 2, 4, 8, 16};
    struct model_tsm2_problem p = {10240, 4, 10240, 4, 256, 1, 1};
    struct model_tsm2_eval e8, e16;
    long t2 = 0, t3 = 0;
    (void)state;
    /* t3 = 10 lies between 8 and 16; t2 = 4 is instantiated, so only t3 moves. At 800
     * cycles both saturate (utilisation >= 1): a tie, which goes to the larger t3 */
    assert_int_equal(model_tune_map_tsm2(&g, &p, 4, 10, pow2, 5, pow2, 5, &t2, &t3), RK_OK);
    assert_int_equal(t2, 4);
    assert_int_equal(t3, 16);
    p.t2 = 4, p.t3 = 8;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e8), RK_OK);
    p.t3 = 16;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e16), RK_OK);
    CLOSE(e8.predicted_time_s, e16.predicted_time_s);
    /* at 8000 cycles neither saturates; 16 loads in flight are predicted faster than 8 */
    g.mem_latency_cycles = 8000;
    p.t3 = 8;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e8), RK_OK);
    p.t3 = 16;
    assert_int_equal(model_tsm2_evaluate(&g, &p, &e16), RK_OK);
    assert_true(e8.util_mem < 1 && e16.predicted_time_s < e8.predicted_time_s);
    assert_int_equal(model_tune_map_tsm2(&g, &p, 4, 10, pow2, 5, pow2, 5, &t2, &t3), RK_OK);
    assert_int_equal(t3, 16);
    g.mem_latency_cycles = 800;
    /* an instantiated choice stays; one past the ends goes to the end */
    assert_int_equal(model_tune_map_tsm2(&g, &p, 2, 8, pow2, 5, pow2, 5, &t2, &t3), RK_OK);
    assert_int_equal(t2, 2);
    assert_int_equal(t3, 8);
    assert_int_equal(model_tune_map_tsm2(&g, &p, 4, 40, pow2, 5, pow2, 5, &t2, &t3), RK_OK);
    assert_int_equal(t3, 16);
    /* refused: no axis, or nothing the model accepts (t2 above n = 4 is invalid) */
    assert_int_equal(model_tune_map_tsm2(&g, &p, 4, 10, pow2, 0, pow2, 5, &t2, &t3), RK_EUSAGE);
    const long wide[] = {8, 16};
    assert_int_equal(model_tune_map_tsm2(&g, &p, 8, 10, wide, 2, pow2, 5, &t2, &t3), RK_EUSAGE);
    assert_int_equal(t2, 8); /* the lower neighbours are kept */
    assert_int_equal(t3, 8);
}

static void tcf_refused(void **state)
{
    struct model_gpu g = h100();
    struct model_ism2_tcf_in in = ism2_in(&g, 100000, 8, 8);
    struct model_ism2_tcf_eval ev;
    (void)state;
    assert_null(model_check_ism2_tcf(&in));
    in.fam = MODEL_FAM_TSM2_V3;
    assert_non_null(model_check_ism2_tcf(&in));
    assert_int_equal(model_ism2_tcf_evaluate(&in, 1, &ev), RK_EUSAGE);
    in = ism2_in(&g, 100000, 8, 8);
    in.t3 = 0;
    assert_int_equal(model_ism2_search_tcf(&in, 64, &ev), RK_EUSAGE);
    in = ism2_in(&g, 100000, 8, 8);
    assert_int_equal(model_ism2_tcf_evaluate(&in, 0, &ev), RK_EUSAGE);
    in.smem_per_block = 1e9; /* does not fit on an SM */
    assert_int_equal(model_ism2_tcf_evaluate(&in, 1, &ev), RK_EUSAGE);
    assert_int_equal(model_ism2_search_tcf(&in, 64, &ev), RK_EUSAGE);
    assert_non_null(model_check_ism2_tcf(NULL));
}

static void plan_hand(void **state)
{
    const struct model_gpu g = h100();
    const double lat_s = 800 / 1.98e9, need = 3.2e12 * lat_s; /* Little's law: 1.29 MB */
    struct model_tsm2_plan_in in = {1.6e9, 264, 264, 256 * 512.0, 1e9, 2e9, 1e8};
    struct model_tsm2_plan_eval e;
    (void)state;
    /* one wave, 34.6 MB in flight: the bytes at the full bandwidth */
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_OK);
    CLOSE(e.waves, 1.0);
    CLOSE(e.util, 1.0);
    CLOSE(e.time_dram_s, 1.6e9 / 3.2e12);
    CLOSE(e.time_comp_s, 2e9 / (132 * 128 * 1.98e9)); /* issue beats 2 fma / peak and lsu */
    CLOSE(e.time_s, 1.6e9 / 3.2e12 + model_start_s(&g));
    assert_int_equal(e.bound, MODEL_BOUND_DRAM);

    /* 396 blocks, 264 at once, 4 KB each in flight: 1.08 MB then 0.54 MB, both short of 1.29 */
    in.blocks = 396;
    in.bif_block = 4096;
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_OK);
    const double pb = 1.6e9 / 396, u1 = 264 * 4096 / need, u2 = 132 * 4096 / need;
    CLOSE(e.waves, 2.0);
    CLOSE(e.util, u1);
    CLOSE(e.time_dram_s, 264 * pb / (3.2e12 * u1) + 132 * pb / (3.2e12 * u2));
    CLOSE(e.time_s, e.time_dram_s + 2 * model_start_s(&g));
    assert_int_equal(e.bound, MODEL_BOUND_LATENCY);
    assert_true(e.time_dram_s > 1.6e9 / 3.2e12 / u1);

    /* 1e11 loads through 32 LD/ST lanes an SM: 12 ms, past the DRAM time */
    in = (struct model_tsm2_plan_in){1.6e9, 264, 264, 256 * 512.0, 1e9, 2e11, 1e11};
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_OK);
    CLOSE(e.time_comp_s, 1e11 / (132 * 32 * 1.98e9));
    assert_int_equal(e.bound, MODEL_BOUND_COMPUTE);

    /* refusals: no output, fewer instructions than FMAs, nothing resident, no bytes */
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, NULL), RK_EUSAGE);
    in.instr = 1;
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_EUSAGE);
    in.instr = 2e11;
    in.resident = 0;
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_EUSAGE);
    in.resident = 264;
    in.bytes_dram = 0;
    assert_int_equal(model_tsm2_plan_evaluate(&g, &in, &e), RK_EUSAGE);
    assert_int_equal(model_tsm2_plan_evaluate(NULL, &in, &e), RK_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nearest_log2), cmocka_unit_test(regret),     cmocka_unit_test(tcf_hand),
        cmocka_unit_test(tcf_latency),  cmocka_unit_test(tcf_search), cmocka_unit_test(tcf_refused),
        cmocka_unit_test(map_tsm2),     cmocka_unit_test(plan_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
