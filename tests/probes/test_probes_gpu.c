/*
 * test_probes_gpu.c - every probe on the GPU at hand, within sane ranges
 * (ctest label gpu). Runs the whole registry once (quick mode; pass "full" for the
 * full mode) in the group setup, prints the results as a table with each probe's
 * wall time, then checks them (exit 77, ctest: skipped, without a GPU). Sane ranges hold for any
 * CUDA GPU of the last decade; how close an H100 comes to its datasheet is reported by `roofkit
 * probe`, not asserted.
 *
 * Case ids:
 *   G1  every probe that is not waived returns RK_OK
 *   G2  every result is well formed (result_check.h): finite positive value = median,
 *       min <= median <= max, reps >= 1, params a JSON object without nan, value <= 1.05 x
 *       the theoretical ceiling where there is one
 *   G3  bandwidth: DRAM in 100 GB/s..20 TB/s; L2 > DRAM; L1 and shared > L2;
 *       copy >= 0.9 x cudaMemcpy; host copies 1..200 GB/s
 *   G4  latency: >= 20 curve points up to >= 2 GB, sorted; plateaus l1 < l2 < dram
 *       with l1 in 10..100 cycles; shared 10..100 cycles; FMA latency 2..40 cycles;
 *       the loaded DRAM latency at least 0.8x the chase's DRAM plateau and under 20x
 *       it (queues add to the unloaded latency, they do not remove any), its knee's
 *       bandwidth within 0.6..1.2x the DRAM read ceiling
 *   G5  flops: CUDA-core FMA rates 50%..103% of SMs x lanes x 2 x clock (every probe not
 *       waived has a result, checked where the lane table knows the GPU); tensor bf16, unless
 *       waived, above the fp32 CUDA-core rate
 *   G6  launch: asynchronous 0.3..100 us per launch; the synchronous round trip
 *       no shorter than half of it and under 1 ms
 *   G7  a full quick run takes under 60 s of wall time
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gpu.h"
#include "probes.h"
#include "result_check.h"

static int quick = 1;
static struct probes *S;
static struct probes_output OUT;
static int RCS[64];
static double WALL[64], TOTAL;

static int setup(void **state)
{
    (void)state;
    /* main has returned 77 (skipped) without a GPU: with one, failing to open it fails */
    if (probes_open(0, quick, &S) != RK_OK)
        return -1;
    double t0 = rk_now_s();
    for (int i = 0; i < probes_count(); i++) {
        int first = OUT.n_results;
        double t = rk_now_s();
        RCS[i] = probes_waived(S, i) ? -1 : probes_run(S, i, &OUT);
        WALL[i] = rk_now_s() - t;
        printf("# %-18s %6.2f s  rc %d\n", probes_get(i)->name, WALL[i], RCS[i]);
        for (int k = first; k < OUT.n_results; k++) {
            const struct probes_result *r = &OUT.results[k];
            printf("%-22s %11.2f %-7s min %10.2f max %10.2f theory %10.2f (%5.1f%%) clk %5.0f "
                   "W %5.0f C %3.0f | %s\n",
                   r->name, r->value, r->unit, r->min, r->max, r->theoretical,
                   100 * r->value / r->theoretical, r->sm_clock_mhz, r->power_w, r->temp_c,
                   r->params);
        }
        fflush(stdout);
    }
    TOTAL = rk_now_s() - t0;
    printf("# total %.2f s (%s)\n", TOTAL, quick ? "quick" : "full");
    for (int i = 0; i < OUT.n_points; i++)
        printf("chase %12lld B %8.1f cycles %8.1f ns\n", (long long)OUT.points[i].footprint_bytes,
               OUT.points[i].cycles, OUT.points[i].ns);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    probes_output_release(&OUT);
    probes_close(S);
    return 0;
}

static const struct probes_result *get(const char *name)
{
    for (int i = 0; i < OUT.n_results; i++)
        if (strcmp(OUT.results[i].name, name) == 0)
            return &OUT.results[i];
    return NULL;
}

static double val(const char *name)
{
    const struct probes_result *r = get(name);
    if (!r)
        fail_msg("no result named %s", name);
    return r->value;
}

static void in_range(const char *name, double lo, double hi)
{
    double v = val(name);
    if (!(v >= lo && v <= hi))
        fail_msg("%s = %g, outside %g..%g", name, v, lo, hi);
}

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!S)                                                                                    \
            skip();                                                                                \
    } while (0)

static void g1_all_ran(void **state)
{
    (void)state;
    NEED_GPU();
    for (int i = 0; i < probes_count(); i++)
        if (RCS[i] != RK_OK && RCS[i] != -1)
            fail_msg("probe %s returned %d", probes_get(i)->name, RCS[i]);
}

static void g2_well_formed(void **state)
{
    (void)state;
    NEED_GPU();
    assert_true(OUT.n_results > 20);
    for (int i = 0; i < OUT.n_results; i++)
        check_result_well_formed(&OUT.results[i]);
}

static void g3_bandwidth(void **state)
{
    (void)state;
    NEED_GPU();
    in_range("bw_dram_read", 100, 20000);
    in_range("bw_dram_write", 100, 20000);
    in_range("bw_dram_copy", 100, 20000);
    in_range("bw_dram_triad", 100, 20000);
    assert_true(val("bw_l2_read") > val("bw_dram_read"));
    assert_true(val("bw_l1_read") > val("bw_l2_read"));
    assert_true(val("bw_shared_read") > val("bw_l2_read"));
    /* 4-byte loads use the same banks: never above the 16-byte rate, at least half of it */
    assert_true(val("bw_shared_read_32") <= 1.02 * val("bw_shared_read"));
    assert_true(val("bw_shared_read_32") >= 0.5 * val("bw_shared_read"));
    double ratio = 0;
    assert_int_equal(rk_json_number(get("bw_dram_copy")->params, "ratio_to_cudamemcpy", &ratio),
                     RK_OK);
    if (!(ratio >= 0.9))
        fail_msg("copy kernel at %.3f of cudaMemcpy", ratio);
    in_range("bw_h2d", 1, 200);
    in_range("bw_d2h", 1, 200);
}

static void g4_latency(void **state)
{
    (void)state;
    NEED_GPU();
    assert_true(OUT.n_points >= 20);
    assert_true(OUT.points[OUT.n_points - 1].footprint_bytes >= ((int64_t)2 << 30));
    for (int i = 1; i < OUT.n_points; i++)
        assert_true(OUT.points[i].footprint_bytes > OUT.points[i - 1].footprint_bytes);
    in_range("lat_chase_l1", 10, 100);
    /* a shared load takes at least one issue cycle and, on any GPU since Volta, a few */
    in_range("lat_issue_shared", 0.5, 4);
    assert_true(val("lat_chase_l2") > 3 * val("lat_chase_l1"));
    assert_true(val("lat_chase_dram") > val("lat_chase_l2"));
    assert_true(val("lat_chase_l1_ns") > 0);
    in_range("lat_shared", 10, 100);
    /* a staging round is a load from L2 plus a shared store, a barrier and the loop: more
     * than the chase's L2 hit, less than four of them; what it adds, under one such hit */
    in_range("lat_stage_l2", 0.9 * val("lat_chase_l2"), 4 * val("lat_chase_l2"));
    in_range("lat_stage_extra", 0, val("lat_chase_l2"));
    in_range("lat_fma_fp32", 2, 40);
    in_range("lat_fma_fp64", 2, 40);
    in_range("lat_fma_fp16", 2, 40);
    in_range("lat_dram_loaded", 0.8 * val("lat_chase_dram"), 20 * val("lat_chase_dram"));
    assert_true(val("lat_dram_loaded_ns") > 0);
    const struct probes_result *ld = get("lat_dram_loaded");
    assert_non_null(ld);
    double knee_gbps = 0;
    assert_int_equal(rk_json_number(ld->params, "knee_gbps", &knee_gbps), RK_OK);
    double curve[64][2];
    assert_true(rk_json_pairs(ld->params, "points", curve, 64) >= 2);
    assert_true(knee_gbps > 0.6 * val("bw_dram_read") && knee_gbps < 1.2 * val("bw_dram_read"));
}

/* Whether the registry's probe `name` is waived on this GPU. */
static int waived(const char *name)
{
    for (int i = 0; i < probes_count(); i++)
        if (strcmp(probes_get(i)->name, name) == 0)
            return probes_waived(S, i) != NULL;
    fail_msg("no probe named %s in the registry", name);
    return 1;
}

static void g5_flops(void **state)
{
    static const char *names[] = {"peak_fp64_fma", "peak_fp32_fma", "peak_fp16x2_fma",
                                  "peak_bf16x2_fma"};
    static const char *precs[] = {"fp64", "fp32", "fp16x2", "bf16x2"};
    const struct rk_gpu *d;
    (void)state;
    NEED_GPU();
    d = probes_device(S);
    for (int i = 0; i < 4; i++) {
        const struct probes_result *r = get(names[i]);
        /* only a waived probe or a GPU missing from the lane table goes unchecked */
        if (waived(names[i]))
            continue;
        if (!r)
            fail_msg("%s: not waived, but no result", names[i]);
        if (probes_lanes_per_sm(d->cc_major, d->cc_minor, precs[i]) == 0)
            continue;
        if (!(r->value >= 0.5 * r->theoretical && r->value <= 1.03 * r->theoretical))
            fail_msg("%s: %g of theoretical %g", names[i], r->value, r->theoretical);
    }
    if (!waived("peak_tensor_bf16"))
        assert_true(val("peak_tensor_bf16") > val("peak_fp32_fma"));
}

static void g6_launch(void **state)
{
    (void)state;
    NEED_GPU();
    in_range("launch_async", 0.3, 100);
    in_range("launch_event", 0.3, 100);
    assert_true(val("launch_sync") >= 0.5 * val("launch_async"));
    /* one launch on the GPU's side alone: never slower than a launch the host waits for */
    assert_true(val("launch_event") <= val("launch_sync"));
    assert_true(val("launch_sync") < 1000);
}

static void g7_time(void **state)
{
    (void)state;
    NEED_GPU();
    if (quick && !(TOTAL < 60))
        fail_msg("a quick run took %.1f s", TOTAL);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g1_all_ran),   cmocka_unit_test(g2_well_formed),
        cmocka_unit_test(g3_bandwidth), cmocka_unit_test(g4_latency),
        cmocka_unit_test(g5_flops),     cmocka_unit_test(g6_launch),
        cmocka_unit_test(g7_time),
    };
    if (argc > 1 && strcmp(argv[1], "full") == 0)
        quick = 0;
    /* cmocka counts skipped cases as passed: without a GPU, say so to ctest (skipped) instead */
    char why[256] = "";
    if (rk_gpu_count(why, sizeof why) < 1) {
        printf("no GPU: skipped (%s)\n", why);
        return 77;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
