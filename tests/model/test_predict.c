/*
 * test_predict.c - unit tests of model_predict(): the three models `roofkit model`
 * stores, on numbers computed by hand. Runs anywhere: ctest label `unit`.
 *
 * Case map (id: what):
 *   P1  names: model_kind_name / model_kind_from_name round-trip; unknown refused
 *   P2  roofline: a DRAM-bound and a compute-bound GEMM, times and bound by hand
 *   P3  hierarchical: L2 binds when DRAM traffic is compulsory only; a level with
 *       0 bytes needs no ceiling; shared binds; every term by hand
 *   P4  tsm2: equals model_tsm2_evaluate() at the kernel's (t2, t3); hand time
 *   P5  missing numbers: each model names what it lacks (NaN flops, no bandwidth,
 *       NaN bytes, no gpu, t2 > n) and zeroes *out; NULL arguments
 *   P6  deterministic: two calls give the same bits
 *   P7  model_blocks_per_sm: thread, register (256-register units), shared memory
 *       (+1 KiB reserved) limits by hand; a block that does not fit gives 0
 *   P8  model_little_util and model_occupancy: Little's law by hand, a grid
 *       smaller than one wave
 *   P9  roofline_counters: measured bytes as the levels' traffic; DRAM unknown
 *   P10 occupancy: launch + hierarchical at bw * util; latency-bound below util 0.95,
 *       DRAM-bound at 0.97; no launch: util 1; a tiny kernel is latency-bound; no launch
 *       cost refused
 *   P11 model_issue_counts: stso fp32/fp64, naive, a 2-way bank conflict (row
 *       stride of 32 words) against stride 16, TSM2 V0's coalesced A; refusals
 *   P12 model_pipe_time: busiest SM share, FMA chains limiting the FMA rate,
 *       shared, issue and compute bounds by hand; issue with no counts = occupancy
 *   P13 staging and L1 reuse: naive's L2 bytes behind L1, tiles and load rounds
 *       of stso, tiled (runtime loops), regtile (prefetched), blocktile_1d; the
 *       staging term of model_pipe_time by hand; model_predict mixing the DRAM
 *       and L2 latencies by the miss share, adding a round's measured extra cycles,
 *       and using the counts' L2 bytes
 *   P14 issue_counters: chains unknown (acc_per_thread 0) leave the FMA pipe at its
 *       peak; measured instructions bind the issue pipe; it equals issue on the same
 *       counts and refuses a row without counts or launch; a serial loop's chain (DRAM
 *       rounds, then the warp's own instructions) by hand; shared instructions' extra issue
 *       cycles
 *   P15 overlap: two equal terms give 2^(1/3) of one, plus the small ones, by hand; one
 *       dominant term gives issue_counters' time; never below issue_counters; the
 *       chain term is the warp chain; scalar shared loads take the wavefront count,
 *       others the larger of bytes and wavefronts; the epilogue (C written after a
 *       block's last tile) added after the norm, by hand; no resource busy for 60 % of the
 *       time: latency-bound; terms named; refuses what issue_counters refuses
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"

/* H100-like ceilings [SI]: the fixture of tests/cli/model_fixture.c uses the same. */
static struct model_predict_in h100_in(void)
{
    struct model_predict_in in;
    memset(&in, 0, sizeof in);
    in.peak_flops = 50e12;
    in.bandwidth[MODEL_LEVEL_DRAM] = 3.0e12;
    in.bandwidth[MODEL_LEVEL_L2] = 10.0e12;
    in.bandwidth[MODEL_LEVEL_L1] = 25.0e12;
    in.bandwidth[MODEL_LEVEL_SHARED] = 30.0e12;
    return in;
}

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("got %.17g, want %.17g (rel tol %g)", got, want, tol);
}

static void test_p1_names(void **state)
{
    (void)state;
    enum model_kind k;
    for (int i = 0; i < MODEL_KIND_COUNT; i++) {
        assert_int_equal(model_kind_from_name(model_kind_name((enum model_kind)i), &k), RK_OK);
        assert_int_equal((int)k, i);
    }
    assert_string_equal(model_kind_name(MODEL_KIND_HIERARCHICAL), "hierarchical");
    assert_string_equal(model_kind_name(MODEL_KIND_COUNT), "?");
    assert_int_equal(model_kind_from_name("Roofline", &k), RK_EUSAGE);
    assert_int_equal(model_kind_from_name(NULL, &k), RK_EUSAGE);
}

static void test_p2_roofline(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;
    const char *why = "x";

    /* 2e9 FLOP at 50e12 = 40 us; 6e9 B at 3e12 = 2 ms: DRAM */
    in.flops = 2e9;
    in.roofline_bytes = 6e9;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_OK);
    assert_null(why);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    assert_rel(p.time_s, 2e-3, 1e-15);
    assert_rel(p.terms.time_compute_s, 4e-5, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_DRAM], 2e-3, 1e-15);
    /* 1e12 FLOP = 20 ms; 1e9 B = 0.333 ms: compute; level bytes are not read */
    in.flops = 1e12;
    in.roofline_bytes = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_COMPUTE);
    assert_rel(p.time_s, 0.02, 1e-15);
    assert_int_equal(p.kind, MODEL_KIND_ROOFLINE);
}

static void test_p3_hierarchical(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;

    /* compulsory DRAM 1e9 B (0.333 ms), L2 = L1 = 6e9 B (0.6 ms, 0.24 ms), shared 3e9 B
     * (0.1 ms), flops 2e9 (40 us): L2 binds */
    in.flops = 2e9;
    in.roofline_bytes = 6e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = 6e9;
    in.level_bytes[MODEL_LEVEL_L1] = 6e9;
    in.level_bytes[MODEL_LEVEL_SHARED] = 3e9;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_L2);
    assert_rel(p.time_s, 6e-4, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_DRAM], 1e9 / 3e12, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_L1], 2.4e-4, 1e-15);
    assert_rel(p.terms.time_level_s[MODEL_LEVEL_SHARED], 1e-4, 1e-15);
    assert_rel(p.terms.time_compute_s, 4e-5, 1e-15);

    /* no shared traffic: the missing shared ceiling does not matter */
    in.level_bytes[MODEL_LEVEL_SHARED] = 0;
    in.bandwidth[MODEL_LEVEL_SHARED] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_L2);
    assert_true(p.terms.time_level_s[MODEL_LEVEL_SHARED] == 0.0);

    /* shared traffic dominates: 6e10 B at 30e12 = 2 ms */
    in.bandwidth[MODEL_LEVEL_SHARED] = 30e12;
    in.level_bytes[MODEL_LEVEL_SHARED] = 6e10;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, NULL), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_SHARED);
    assert_rel(p.time_s, 2e-3, 1e-15);
}

static void test_p4_tsm2(void **state)
{
    (void)state;
    struct model_gpu g = {25e12, 3e12, 1.98e9, 132,  65536, 233472, 2048,
                          780,   8,    0,      NULL, NULL,  0,      0};
    struct model_tsm2_problem pr = {20480, 16, 20480, 8, 128, 16, 8};
    struct model_predict_in in;
    struct model_prediction p;
    struct model_tsm2_eval ev;

    memset(&in, 0, sizeof in);
    in.flops = NAN; /* tsm2 does not read the roofline numbers */
    in.gpu = &g;
    in.tsm2 = &pr;
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, NULL), RK_OK);
    assert_int_equal(model_tsm2_evaluate(&g, &pr, &ev), RK_OK);
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *f = &model_tsm2_fields[i];
        double x = model_field_double(f, &p.tsm2), y = model_field_double(f, &ev);
        assert_true(x == y || (isnan(x) && isnan(y)));
    }
    assert_true(p.time_s == ev.predicted_time_s);
    assert_int_equal(p.bound, ev.bound);
    /* by hand: R_thread = (3*16 + 2*8)*8/4 = 128 registers -> 512 threads/SM (registers
     * bind: S_SM/S_thread = 233472/128 = 1824, HW 2048); util_mem = 512*8 / (780 *
     * 3e12/(132*1.98e9)) = 4096/8953.3 = 0.4575; r = 16/8 * 3e12/25e12 = 0.24 -> memory:
     * time = m*k*n/t2*8 / (3e12*0.4575) */
    assert_rel(ev.max_occupancy, 512.0, 1e-12);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    double util = 512.0 * 8 / (780.0 * 3e12 / (132 * 1.98e9));
    double want = 20480.0 * 20480.0 * 16 / 16 * 8 / (3e12 * util);
    assert_rel(p.time_s, want, 1e-12);
}

static void test_p5_missing(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;
    const char *why = NULL;
    struct model_gpu g = {25e12, 3e12, 1.98e9, 132,  65536, 233472, 2048,
                          780,   8,    0,      NULL, NULL,  0,      0};
    struct model_tsm2_problem pr = {20480, 4, 20480, 8, 128, 16, 8};

    in.flops = NAN;
    in.roofline_bytes = 1e9;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "flops unknown");
    assert_true(p.time_s == 0.0);

    in.flops = 1e9;
    in.bandwidth[MODEL_LEVEL_DRAM] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no dram bandwidth");

    in = h100_in();
    in.flops = 1e9;
    in.peak_flops = 0;
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no compute ceiling");

    in = h100_in();
    in.flops = 1e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e9;
    in.level_bytes[MODEL_LEVEL_L2] = 1e9;
    in.level_bytes[MODEL_LEVEL_L1] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "l1 bytes unknown");
    in.level_bytes[MODEL_LEVEL_L1] = 1e9;
    in.bandwidth[MODEL_LEVEL_L2] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_HIERARCHICAL, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no l2 bandwidth");

    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no tsm2 description");
    in.gpu = &g;
    in.tsm2 = &pr; /* t2 = 16 > n = 4 */
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "t2 must not exceed n");
    g.mem_latency_cycles = NAN;
    assert_int_equal(model_predict(MODEL_KIND_TSM2, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "memory latency must be positive");

    assert_int_equal(model_predict(MODEL_KIND_COUNT, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "unknown model");
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, NULL, &p, &why), RK_EUSAGE);
    assert_int_equal(model_predict(MODEL_KIND_ROOFLINE, &in, NULL, &why), RK_EUSAGE);
}

static void test_p6_deterministic(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction a, b;
    in.flops = 3.3e9;
    in.roofline_bytes = 7.1e8;
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
        in.level_bytes[i] = 1.7e8 * (i + 1);
    for (int k = MODEL_KIND_ROOFLINE; k <= MODEL_KIND_HIERARCHICAL; k++) {
        assert_int_equal(model_predict((enum model_kind)k, &in, &a, NULL), RK_OK);
        assert_int_equal(model_predict((enum model_kind)k, &in, &b, NULL), RK_OK);
        assert_true(a.time_s == b.time_s);
        assert_int_equal(a.bound, b.bound);
        for (int i = 0; i < MODEL_LEVEL_COUNT; i++)
            assert_true(a.terms.time_level_s[i] == b.terms.time_level_s[i]);
    }
}

/* H100 SXM SM resources with round numbers for the rest (hand-computable). */
static struct model_gpu occ_gpu(void)
{
    struct model_gpu g;
    memset(&g, 0, sizeof g);
    g.sms = 132;
    g.regs_per_sm = 65536;
    g.smem_per_sm = 233472;
    g.max_threads_per_sm = 2048;
    g.clock_hz = 2e9;
    g.bandwidth = 3e12;
    g.mem_latency_cycles = 700; /* 350 ns: Little's law needs 3e12 * 3.5e-7 = 1.05e6 B */
    return g;
}

static void test_p7_blocks_per_sm(void **state)
{
    (void)state;
    struct model_gpu g = occ_gpu();
    /* tsm2_v3 fp32: 256 threads, 128 regs (8 warps * 4096 = 32768: 2 blocks), 132 KiB
     * of shared memory: 233472 / (135168 + 1024) = 1.7 -> 1 */
    struct model_launch l = {120, 256, 128, 135168, NAN};
    assert_int_equal(model_blocks_per_sm(&g, &l), 1);
    /* 128 threads, 32 regs, no shared: threads 16, regs 65536 / (4 * 1024) = 16 */
    l = (struct model_launch){80, 128, 32, 0, 8};
    assert_int_equal(model_blocks_per_sm(&g, &l), 16);
    /* 100 threads = 4 warps, 33 regs: 33 * 32 = 1056 -> 1280 per warp, 5120 per block,
     * 65536 / 5120 = 12.8 -> 12 (threads allow 20) */
    l = (struct model_launch){1, 100, 33, 0, 0};
    assert_int_equal(model_blocks_per_sm(&g, &l), 12);
    /* 32 threads, 0 regs (unknown), no shared: threads allow 64, at most 32 blocks */
    l = (struct model_launch){1, 32, 0, 0, 0};
    assert_int_equal(model_blocks_per_sm(&g, &l), 32);
    /* 1024 threads of 255 regs: 32 warps * 8192 > 65536 -> does not fit */
    l = (struct model_launch){1, 1024, 255, 0, 0};
    assert_int_equal(model_blocks_per_sm(&g, &l), 0);
    l.threads_per_block = 0;
    assert_int_equal(model_blocks_per_sm(&g, &l), -1);
    assert_int_equal(model_blocks_per_sm(NULL, &l), -1);
}

static void test_p8_little(void **state)
{
    (void)state;
    struct model_gpu g = occ_gpu();
    struct model_launch l = {80, 128, 32, 0, 8};
    struct model_occupancy o;
    assert_rel(model_little_util(1000, 1e12, 2e-9), 0.5, 1e-15);
    assert_rel(model_little_util(5000, 1e12, 2e-9), 1.0, 0);
    assert_true(isnan(model_little_util(-1, 1e12, 2e-9)));
    assert_true(isnan(model_little_util(1, 0, 2e-9)));
    /* 80 blocks < 132 SMs: 80 active SMs, 80 * 128 = 10240 resident threads, each 8 B
     * in flight: 81920 B against 1.05e6 B -> util 0.078019047619... */
    assert_int_equal(model_occupancy(&g, &l, &o), RK_OK);
    assert_int_equal(o.blocks_per_sm, 16);
    assert_rel(o.active_sms, 80, 0);
    assert_rel(o.resident_threads, 10240, 0);
    assert_rel(o.waves, 80.0 / (16 * 132), 1e-15);
    assert_rel(o.bytes_in_flight, 81920, 0);
    assert_rel(o.bytes_needed, 1.05e6, 1e-12);
    assert_rel(o.util, 81920 / 1.05e6, 1e-12);
    /* unknown loads in flight: no derating */
    l.bytes_in_flight_per_thread = NAN;
    assert_int_equal(model_occupancy(&g, &l, &o), RK_OK);
    assert_rel(o.util, 1.0, 0);
    /* a block that does not fit */
    l = (struct model_launch){1, 1024, 255, 0, 8};
    assert_int_equal(model_occupancy(&g, &l, &o), RK_EUSAGE);
    assert_int_equal(o.blocks_per_sm, 0);
}

static void test_p9_counters(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_prediction p;
    const char *why = NULL;
    in.flops = 1e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 3e9;   /* 1 ms at 3e12 */
    in.level_bytes[MODEL_LEVEL_L2] = 20e9;    /* 2 ms at 10e12: binds */
    in.level_bytes[MODEL_LEVEL_SHARED] = 3e9; /* 0.1 ms */
    assert_int_equal(model_predict(MODEL_KIND_COUNTERS, &in, &p, &why), RK_OK);
    assert_rel(p.time_s, 2e-3, 1e-15);
    assert_int_equal(p.bound, MODEL_BOUND_L2);
    assert_int_equal(p.kind, MODEL_KIND_COUNTERS);
    assert_string_equal(model_kind_name(MODEL_KIND_COUNTERS), "roofline_counters");
    in.level_bytes[MODEL_LEVEL_DRAM] = NAN;
    assert_int_equal(model_predict(MODEL_KIND_COUNTERS, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "dram counter unknown");
}

static void test_p10_occupancy(void **state)
{
    (void)state;
    struct model_predict_in in = h100_in();
    struct model_gpu g = occ_gpu();
    struct model_launch l = {80, 128, 32, 0, 8};
    struct model_prediction p;
    const char *why = NULL;
    double util = 81920 / 1.05e6;
    in.flops = 1e9;                         /* 20 us at 50e12 */
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e9; /* 333 us at 3e12, 4.27 ms at 3e12 * util */
    in.gpu = &g;
    in.launch = &l;
    in.launch_s = 4e-6;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_OK);
    assert_rel(p.time_s, 4e-6 + 1e9 / (3e12 * util), 1e-12);
    assert_int_equal(p.bound, MODEL_BOUND_LATENCY); /* DRAM term stretched by util < 1 */
    assert_rel(p.occ.util, util, 1e-12);
    /* within MODEL_LATENCY_UTIL of the bandwidth the DRAM term stays bandwidth-bound */
    l.bytes_in_flight_per_thread = 0.97 * 1.05e6 / (80 * 128);
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_OK);
    assert_rel(p.occ.util, 0.97, 1e-12);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    l.bytes_in_flight_per_thread = 0.90 * 1.05e6 / (80 * 128);
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_LATENCY);
    l.bytes_in_flight_per_thread = 8;
    assert_string_equal(model_kind_name(MODEL_KIND_OCCUPANCY), "occupancy");
    /* no launch configuration: util 1 */
    in.launch = NULL;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_OK);
    assert_rel(p.time_s, 4e-6 + 1e9 / 3e12, 1e-12);
    assert_rel(p.occ.util, 1.0, 0);
    assert_int_equal(p.bound, MODEL_BOUND_DRAM);
    /* a tiny kernel: 1 KB, 1 kFLOP; the launch cost is larger than every term */
    in.flops = 1e3;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e3;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_OK);
    assert_int_equal(p.bound, MODEL_BOUND_LATENCY);
    assert_rel(p.time_s, 4e-6 + 1e3 / 3e12, 1e-12);
    in.launch_s = NAN;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_EUSAGE);
    assert_string_equal(why, "no launch cost");
    in.launch_s = 4e-6;
    l.threads_per_block = 4096; /* does not fit */
    in.launch = &l;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &p, &why), RK_EUSAGE);
    assert_rel(p.time_s, 0, 0);
}

static void test_p11_issue_counts(void **state)
{
    (void)state;
    struct model_issue_counts c;
    struct model_params p = {0};
    struct model_shape s = {64, 64, 64, 4};
    p.block = 32;
    /* stso: 4096 threads, 8192 warp k-steps, broadcast A + one wavefront of B;
     * staged 16384 elements, C 4096 */
    assert_int_equal(model_issue_counts(MODEL_FAM_STSO, &s, &p, 1, &c), RK_OK);
    assert_rel(c.fma_warp, 8192, 1e-12);
    assert_rel(c.instr_warp, 8192 + 128 + 16384 + 1024, 1e-12);
    assert_rel(c.smem_wavefronts, 8192 * 2 + 512, 1e-12);
    assert_rel(c.l1_wavefronts, 128 + 512, 1e-12);
    assert_rel(c.acc_per_thread, 1, 1e-12);
    assert_true(isnan(c.bytes_dram) && isnan(c.bytes_in_flight_per_thread));
    s.elem_bytes = 8; /* B: 32 doubles = 2 wavefronts */
    assert_int_equal(model_issue_counts(MODEL_FAM_STSO, &s, &p, 1, &c), RK_OK);
    assert_rel(c.smem_wavefronts, 8192 * 3 + 1024, 1e-12);
    /* naive, 16 x 16 block: a warp spans 2 rows of A (2 wavefronts), 16 floats of B */
    s.elem_bytes = 4;
    memset(&p, 0, sizeof p);
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 16, &c), RK_OK);
    assert_rel(c.l1_wavefronts, 128 + 8192 * 3, 1e-12);
    assert_rel(c.instr_warp, 8192 + 128 + 16384, 1e-12);
    assert_rel(c.smem_wavefronts, 0, 1e-12);
    /* tiled 32 x 16 tile, one output per thread: a warp spans 2 rows of As; a row
     * stride of 32 words puts both in one bank (2 wavefronts), 16 words does not */
    struct model_shape t = {32, 16, 32, 4};
    p.tile_m = 32;
    p.tile_n = 16;
    p.tile_k = 32;
    p.scale_m = p.scale_n = 1;
    assert_int_equal(model_issue_counts(MODEL_FAM_TILED, &t, &p, 1, &c), RK_OK);
    assert_rel(c.smem_wavefronts, 512 * (2 + 1) + 48, 1e-12);
    p.tile_k = 16;
    assert_int_equal(model_issue_counts(MODEL_FAM_TILED, &t, &p, 1, &c), RK_OK);
    assert_rel(c.smem_wavefronts, 512 * (1 + 1) + 48, 1e-12);
    /* TSM2 V0: 40 warp iterations, 1 + 1 wavefronts each in fp32 (a warp's rows of A are
     * contiguous, B is a broadcast), 2 + 1 in fp64; A once per column; a serial loop, its
     * loads in flight left to the caller (the kernel's unroll) */
    struct model_shape v = {64, 2, 10, 4};
    memset(&p, 0, sizeof p);
    assert_int_equal(model_issue_counts(MODEL_FAM_TSM2_V0, &v, &p, 1, &c), RK_OK);
    assert_rel(c.fma_warp, 40, 1e-12);
    assert_rel(c.instr_warp, 120, 1e-12);
    assert_rel(c.l1_wavefronts, 40 * 2 + 8, 1e-12);
    assert_rel(c.bytes_dram, (1280 + 20 + 256) * 4.0, 1e-12);
    assert_true(isnan(c.bytes_in_flight_per_thread));
    assert_rel(c.serial_loop, 1, 0);
    v.elem_bytes = 8;
    assert_int_equal(model_issue_counts(MODEL_FAM_TSM2_V0, &v, &p, 1, &c), RK_OK);
    assert_rel(c.l1_wavefronts, 40 * 3 + 8, 1e-12);
    v.elem_bytes = 4;
    /* refusals */
    assert_int_equal(model_issue_counts(MODEL_FAM_CUBLAS, &s, &p, 1, &c), RK_EUSAGE);
    assert_rel(c.fma_warp + c.l1_wavefronts, 0, 1e-12);
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 0, &c), RK_EUSAGE);
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 33, &c), RK_EUSAGE);
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 1, NULL), RK_EUSAGE);
}

/* P12's launch: 5 blocks of 64 threads on 2 SMs at 1 GHz, 2 resident per SM, FMA latency 4. */
static void pipe_fixture(struct model_gpu *g, struct model_launch *l, struct model_occupancy *o)
{
    memset(g, 0, sizeof *g);
    g->sms = 2;
    g->clock_hz = 1e9;
    g->comp_latency_cycles = 4;
    *l = (struct model_launch){5, 64, 0, 0, NAN};
    memset(o, 0, sizeof *o);
    o->blocks_per_sm = 2;
}

/* pipe_fixture's GPU with what model_predict's occupancy step also needs: an SM of 64 K
 * registers, 100 KB of shared memory and 2048 threads, 3 TB/s at a 600-cycle latency */
static void predict_fixture(struct model_gpu *g)
{
    g->regs_per_sm = 65536;
    g->smem_per_sm = 1e5;
    g->max_threads_per_sm = 2048;
    g->bandwidth = 3e12;
    g->mem_latency_cycles = 600;
}

/* h100_in() for the issue-family models on predict_fixture's GPU (g from pipe_fixture), launch
 * l and counts c, 1000 flops */
static struct model_predict_in issue_in(struct model_gpu *g, const struct model_launch *l,
                                        const struct model_issue_counts *c)
{
    struct model_predict_in in = h100_in();
    predict_fixture(g);
    in.gpu = g;
    in.launch = l;
    in.issue = c;
    in.flops = 1e3;
    return in;
}

static void test_p12_pipes(void **state)
{
    (void)state;
    struct model_gpu g;
    struct model_launch l;
    struct model_occupancy o;
    pipe_fixture(&g, &l, &o);
    struct model_issue_counts c = {1000, 3000, 2500, 100, 1, NAN, NAN, NAN, 0, 0, 0, 0};
    struct model_pipes q;
    /* 512 GFLOP/s on 2 SMs at 1 GHz: 4 warp FMAs/cycle; 256 GB/s: 1 wavefront/cycle */
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.busiest_share, 0.6, 1e-12); /* ceil(5/2) = 3 of 5 blocks */
    assert_rel(q.warps_per_sp, 1, 1e-12);    /* min(3, 2) blocks x 2 warps / 4 */
    assert_rel(q.fma_rate, 1, 1e-12);        /* 4 x 1 warp x 1 chain / 4 cycles */
    assert_rel(q.cycles_fma, 600, 1e-12);
    assert_rel(q.cycles_issue, 450, 1e-12);
    assert_rel(q.cycles_smem, 1500, 1e-12);
    assert_rel(q.cycles_l1, 60, 1e-12);
    assert_rel(q.time_s, 1500e-9, 1e-12);
    assert_int_equal(q.bound, MODEL_BOUND_SHARED);
    c.smem_wavefronts = 0; /* one chain per thread: the FMA latency binds */
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.time_s, 600e-9, 1e-12);
    assert_int_equal(q.bound, MODEL_BOUND_LATENCY);
    c.acc_per_thread = 8; /* 8 chains: the peak rate (4), then issue binds */
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.fma_rate, 4, 1e-12);
    assert_rel(q.time_s, 450e-9, 1e-12);
    assert_int_equal(q.bound, MODEL_BOUND_COMPUTE);
    g.comp_latency_cycles = NAN;
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_EUSAGE);
    assert_rel(q.time_s, 0, 1e-12);

    /* issue with no counts is occupancy, bit for bit */
    struct model_predict_in in = h100_in();
    struct model_prediction a, b;
    in.flops = 2e9;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e8;
    in.launch_s = 4e-6;
    assert_int_equal(model_predict(MODEL_KIND_OCCUPANCY, &in, &a, NULL), RK_OK);
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &b, NULL), RK_OK);
    assert_memory_equal(&a.time_s, &b.time_s, sizeof a.time_s);
    assert_int_equal(a.bound, b.bound);
    assert_string_equal(model_kind_name(MODEL_KIND_ISSUE), "issue");
}

static void test_p13_staging(void **state)
{
    (void)state;
    struct model_issue_counts c;
    struct model_params p = {0};
    struct model_shape s = {64, 64, 64, 4};
    /* naive 16 x 16 blocks: 128 warps x 2 rows x 256 B of A (8 sectors per row); 16
     * blocks x 64 k x one 64 B segment of B; C 4096 x 4 B */
    p.block = 16;
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 16, &c), RK_OK);
    assert_rel(c.bytes_l2, 128 * 2 * 256 + 16 * 64 * 64 + 16384, 1e-12);
    assert_rel(c.tiles, 0, 0);
    p.block = 0; /* block rows unknown: the caller's L2 count stands */
    assert_int_equal(model_issue_counts(MODEL_FAM_NAIVE, &s, &p, 16, &c), RK_OK);
    assert_true(isnan(c.bytes_l2));
    /* stso b = 32, k = 100: 4 tiles (k padded to 128), one round of loads each */
    struct model_shape t = {64, 64, 100, 4};
    p.block = 32;
    assert_int_equal(model_issue_counts(MODEL_FAM_STSO, &t, &p, 1, &c), RK_OK);
    assert_rel(c.tiles, 4, 0);
    assert_rel(c.stage_rounds, 1, 0);
    assert_true(isnan(c.bytes_l2));
    /* 003's tiled 128 x 64 x 16, 8 x 4 per thread: 16 x 16 threads; A 8 x 1 and B
     * 1 x 4 iterations of the run-time staging loops: 12 rounds; k = 256: 16 tiles */
    struct model_shape u = {256, 256, 256, 4};
    memset(&p, 0, sizeof p);
    p.tile_m = 128;
    p.tile_n = 64;
    p.tile_k = 16;
    p.scale_m = 8;
    p.scale_n = 4;
    assert_int_equal(model_issue_counts(MODEL_FAM_TILED, &u, &p, 1, &c), RK_OK);
    assert_rel(c.tiles, 16, 0);
    assert_rel(c.stage_rounds, 12, 0);
    p.tile_k = 8; /* regtile prefetches the next tile: nothing exposed */
    assert_int_equal(model_issue_counts(MODEL_FAM_REGTILE, &u, &p, 1, &c), RK_OK);
    assert_rel(c.tiles, 32, 0);
    assert_rel(c.stage_rounds, 0, 0);
    p.tile_m = p.tile_n = 64; /* 001's 1D blocktiling: two staging loops */
    p.per_thread = 8;
    assert_int_equal(model_issue_counts(MODEL_FAM_BLOCKTILE_1D, &u, &p, 1, &c), RK_OK);
    assert_rel(c.stage_rounds, 2, 0);

    /* model_pipe_time's staging term: P12's launch (5 blocks, 3 on the busiest SM, 2
     * resident: 2 waves), shared-bound at 1500 cycles: W = 1500 / (3 x 10) = 50 */
    struct model_gpu g;
    struct model_launch l;
    struct model_occupancy o;
    pipe_fixture(&g, &l, &o);
    struct model_issue_counts k = {1000, 3000, 2500, 100, 8, NAN, NAN, NAN, 10, 2, 0, 0};
    struct model_pipes q;
    /* 2 waves x 10 tiles x (2 x 100 + 50) = 5000 cycles */
    assert_int_equal(model_pipe_time(&g, &l, &o, &k, 512e9, 256e9, 256e9, 100.0, &q), RK_OK);
    assert_rel(q.cycles_smem, 1500, 1e-12);
    assert_rel(q.cycles_stage, 5000, 1e-12);
    assert_rel(q.stage_latency, 100, 0);
    assert_rel(q.time_s, 5000e-9, 1e-12);
    assert_int_equal(q.bound, MODEL_BOUND_LATENCY);
    /* 2 x 10 x (2 x 10 + 50) = 1400 < 1500: the shared pipe stays the bound */
    assert_int_equal(model_pipe_time(&g, &l, &o, &k, 512e9, 256e9, 256e9, 10.0, &q), RK_OK);
    assert_rel(q.cycles_stage, 1400, 1e-12);
    assert_rel(q.time_s, 1500e-9, 1e-12);
    assert_int_equal(q.bound, MODEL_BOUND_SHARED);
    assert_int_equal(model_pipe_time(&g, &l, &o, &k, 512e9, 256e9, 256e9, -1.0, &q), RK_EUSAGE);

    /* through model_predict: L2 bytes 4e6 replaced by the counts' 5e6, so 1e6 DRAM
     * bytes are a miss share f = 0.2: latency 0.2 x 600 + 0.8 x 100 = 200 cycles.
     * 32 blocks fit per SM, all 3 resident; issue binds the pipes (3000 x 0.6 / 4 =
     * 450 cycles), W = 450 / 30 = 15: 10 x (2 x 200 + 15) = 4150 cycles = 4.15 us,
     * beyond the body (L2 5e6 / 10e12 = 0.5 us), plus launch 1 us */
    struct model_predict_in in = issue_in(&g, &l, &k);
    struct model_prediction r;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e6;
    in.level_bytes[MODEL_LEVEL_L2] = 4e6;
    in.launch_s = 1e-6;
    in.l2_latency_cycles = 100;
    k.bytes_l2 = 5e6;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &r, NULL), RK_OK);
    assert_rel(r.pipes.stage_latency, 200, 1e-12);
    assert_rel(r.pipes.cycles_stage, 4150, 1e-12);
    assert_rel(r.time_s, 1e-6 + 4.15e-6, 1e-12);
    assert_int_equal(r.bound, MODEL_BOUND_LATENCY);
    /* a round's store, barrier and loop (probe lat_stage_extra, 50 cycles) add to each
     * round's latency: 10 x (2 x 250 + 15) = 5150 cycles */
    in.stage_extra_cycles = 50;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &r, NULL), RK_OK);
    assert_rel(r.pipes.stage_latency, 250, 1e-12);
    assert_rel(r.pipes.cycles_stage, 5150, 1e-12);
    in.stage_extra_cycles = NAN; /* unknown: nothing added */
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &r, NULL), RK_OK);
    assert_rel(r.pipes.stage_latency, 200, 1e-12);
    in.stage_extra_cycles = 0;
    in.l2_latency_cycles = 0; /* unknown: no latency; one wave of 10 tiles x W = 150
                                 cycles, under the issue pipe's 450 */
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &r, NULL), RK_OK);
    assert_rel(r.pipes.cycles_stage, 150, 1e-12);
    assert_rel(r.time_s, 1e-6 + 0.5e-6, 1e-12); /* the L2 term of the counts' bytes */
}

static void test_p14_issue_counters(void **state)
{
    (void)state;
    struct model_gpu g;
    struct model_launch l;
    struct model_occupancy o;
    pipe_fixture(&g, &l, &o);
    /* P12's launch: 1 warp per sub-partition, which with 1 chain a thread held the FMA rate
     * to 1 warp FMA a cycle; chains unknown: the pipe's 4 */
    struct model_issue_counts c = {1000, 3000, 0, 0, 0, NAN, NAN, NAN, 0, 0, 0, 0};
    struct model_pipes q;
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.fma_rate, 4, 1e-12);
    assert_rel(q.cycles_fma, 150, 1e-12);   /* 1000 x 0.6 / 4 */
    assert_rel(q.cycles_issue, 450, 1e-12); /* 3000 x 0.6 / 4 sub-partitions */
    assert_int_equal(q.bound, MODEL_BOUND_COMPUTE);
    c.acc_per_thread = -1;
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_EUSAGE);
    c.acc_per_thread = 0;
    /* shared instructions of 1.5 issue cycles (probe lat_issue_shared): 400 of them add 200
     * cycles of issue to the launch, 200 x 0.6 / 4 = 30 on the busiest sub-partition */
    g.issue_cycles_shared = 1.5;
    c.smem_instr = 400;
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.cycles_issue, 450 + 30, 1e-12);
    g.issue_cycles_shared = 0; /* not probed: one cycle, nothing added */
    assert_int_equal(model_pipe_time(&g, &l, &o, &c, 512e9, 256e9, 256e9, 0.0, &q), RK_OK);
    assert_rel(q.cycles_issue, 450, 1e-12);
    c.smem_instr = 0;

    /* through model_predict: 3e5 measured instructions x 0.6 / 4 = 45000 cycles = 45 us at
     * 1 GHz, beyond the DRAM body (1e6 B / 3e12 B/s); the same counts under issue agree */
    struct model_predict_in in = issue_in(&g, &l, &c);
    struct model_prediction a, b;
    c.instr_warp = 3e5;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e6;
    in.launch_s = 1e-6;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &a, NULL), RK_OK);
    assert_rel(a.pipes.cycles_issue, 45000, 1e-12);
    assert_rel(a.time_s, 1e-6 + 45e-6, 1e-12);
    assert_int_equal(a.bound, MODEL_BOUND_COMPUTE);
    assert_int_equal(model_predict(MODEL_KIND_ISSUE, &in, &b, NULL), RK_OK);
    assert_memory_equal(&a.time_s, &b.time_s, sizeof a.time_s);
    assert_string_equal(model_kind_name(MODEL_KIND_ISSUE_COUNTERS), "issue_counters");

    /* a serial loop (TSM2 V0/V1): one warp's chain is its DRAM rounds (1e8 B / 3e12 B/s =
     * 33.3 us, util 1: bytes in flight unknown) and then its own 3e5 / 10 warps = 3e4
     * instructions at one a cycle (30 us): 63.3 us, beyond the pipes' 45 us */
    c.serial_loop = 1;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e8;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &a, NULL), RK_OK);
    assert_rel(a.pipes.time_chain_s, 1e8 / 3e12 + 30e-6, 1e-12);
    assert_rel(a.time_s, 1e-6 + 1e8 / 3e12 + 30e-6, 1e-12);
    assert_int_equal(a.bound, MODEL_BOUND_LATENCY);
    c.serial_loop = 0;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &a, NULL), RK_OK);
    assert_rel(a.time_s, 1e-6 + 45e-6, 1e-12);

    const char *why = NULL;
    in.issue = NULL;
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &a, &why), RK_EUSAGE);
    assert_non_null(why);
}

static void test_p15_overlap(void **state)
{
    (void)state;
    struct model_gpu g;
    struct model_launch l;
    struct model_occupancy o;
    struct model_prediction a, b;
    enum model_kind k;
    pipe_fixture(&g, &l, &o);
    /* P14's counts: 3e5 instructions issued x 0.6 / 4 = 45000 cycles = 45 us at 1 GHz; DRAM 1.35e8
     * B / 3e12 B/s = 45 us too; the FMA term (1000 warp FMAs) is nanoseconds */
    struct model_issue_counts c = {1000, 3e5, 0, 0, 0, NAN, NAN, NAN, 0, 0, 0, 0};
    struct model_predict_in in = issue_in(&g, &l, &c);
    in.level_bytes[MODEL_LEVEL_DRAM] = 1.35e8;
    in.level_bytes[MODEL_LEVEL_L2] = 0;
    in.level_bytes[MODEL_LEVEL_L1] = 0;
    in.level_bytes[MODEL_LEVEL_SHARED] = 0;
    in.launch_s = 1e-6;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.p, 3.0, 0);
    assert_rel(a.overlap.term_s[MODEL_OVL_DRAM], 45e-6, 1e-12);
    assert_rel(a.overlap.term_s[MODEL_OVL_ISSUE], 45e-6, 1e-12);
    double f = a.overlap.term_s[MODEL_OVL_FMA];
    assert_true(f > 0 && f < 1e-8);
    assert_rel(a.overlap.largest_s, 45e-6, 1e-12);
    assert_rel(a.time_s, 1e-6 + cbrt(2.0 * 45e-6 * 45e-6 * 45e-6 + f * f * f), 1e-12);
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &b, NULL), RK_OK);
    assert_rel(b.time_s, 1e-6 + 45e-6, 1e-12);
    assert_true(a.time_s > b.time_s);
    assert_int_equal(a.bound, b.bound);     /* the largest term's, as issue_counters names it */
    assert_rel(a.overlap.epilogue_s, 0, 0); /* no write bytes: no epilogue */

    /* half the DRAM bytes are C written after the block's last tile: 22.5 us of the DRAM
     * term come after the norm, 22.5 us stay in it; with two tiles a block, half of that */
    in.dram_write_bytes = 0.675e8;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.epilogue_s, 22.5e-6, 1e-12);
    assert_rel(a.overlap.term_s[MODEL_OVL_DRAM], 22.5e-6, 1e-12);
    assert_rel(a.time_s,
               1e-6 + cbrt(45e-6 * 45e-6 * 45e-6 + 22.5e-6 * 22.5e-6 * 22.5e-6 + f * f * f) +
                   22.5e-6,
               1e-12);
    in.epilogue_tiles = 2;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.epilogue_s, 11.25e-6, 1e-12);
    assert_rel(a.overlap.term_s[MODEL_OVL_DRAM], 33.75e-6, 1e-12);
    in.dram_write_bytes = NAN; /* unknown: no epilogue */
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.epilogue_s, 0, 0);
    in.dram_write_bytes = 0;
    in.epilogue_tiles = 0;

    /* three resources each busy 0.55 of the time (instructions 45 us, L2 45 us, DRAM 22.5 us with a
     * 22.5 us epilogue, of 1 + cbrt(2 x 45^3 + 22.5^3) + 22.5 = 81.3 us): none near its rate,
     * overlap calls the row latency-bound (MODEL_BOUND_SATURATED); issue_counters still names
     * its largest term. Alone (no L2, no epilogue) the DRAM-issue pair stays bound: 0.78 */
    in.level_bytes[MODEL_LEVEL_L2] = 4.5e8;
    in.dram_write_bytes = 0.675e8;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.time_s,
               1e-6 + cbrt(2 * 45e-6 * 45e-6 * 45e-6 + 22.5e-6 * 22.5e-6 * 22.5e-6 + f * f * f) +
                   22.5e-6,
               1e-9);
    assert_int_equal(a.bound, MODEL_BOUND_LATENCY);
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &b, NULL), RK_OK);
    assert_true(b.bound != MODEL_BOUND_LATENCY);
    in.level_bytes[MODEL_LEVEL_L2] = 0;
    in.dram_write_bytes = 0;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_true(a.bound == MODEL_BOUND_DRAM || a.bound == MODEL_BOUND_COMPUTE);

    /* blocks starting: none with two blocks resident a SM; with one (60 of 100 KB of shared
     * memory a block), each of the busiest SM's ceil(5 / 2) = 3 blocks starts 2 DRAM
     * latencies late: 3 x 2 x 600 cycles at 1 GHz = 3.6 us after the norm; a kernel with
     * staged tiles has that latency in its stage term instead */
    assert_rel(a.overlap.start_s, 0, 0);
    l.smem_per_block = 6e4;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_int_equal(a.occ.blocks_per_sm, 1);
    assert_rel(a.overlap.start_s, 3.6e-6, 1e-12);
    assert_rel(a.time_s, 1e-6 + a.overlap.norm_s + a.overlap.epilogue_s + 3.6e-6, 1e-12);
    c.tiles = 4;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.start_s, 0, 0);
    c.tiles = 0;
    l.smem_per_block = 0;

    /* DRAM 100 times smaller: issue dominates, overlap is issue_counters' time to 1e-6 */
    in.level_bytes[MODEL_LEVEL_DRAM] = 1.35e6;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_int_equal(model_predict(MODEL_KIND_ISSUE_COUNTERS, &in, &b, NULL), RK_OK);
    assert_true(a.time_s >= b.time_s);
    assert_rel(a.time_s, b.time_s, 1e-6);

    /* a serial loop: its chain (1e8 B / 3e12 B/s + 30 us, P14) is a term of its own */
    c.serial_loop = 1;
    in.level_bytes[MODEL_LEVEL_DRAM] = 1e8;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.term_s[MODEL_OVL_CHAIN], 1e8 / 3e12 + 30e-6, 1e-12);
    assert_rel(a.overlap.term_s[MODEL_OVL_CHAIN], a.pipes.time_chain_s, 0);

    /* shared memory: 1e6 wavefronts x 0.6 of the launch / (30e12 / (128 x 2 SMs x 1 GHz))
     * per cycle = 5120 cycles = 5.12 us; the byte term 3e8 B / 30e12 B/s = 10 us. Scalar
     * loads (smem_instr > 0): the wavefronts are the term; otherwise the larger */
    c.serial_loop = 0;
    c.smem_wavefronts = 1e6;
    in.level_bytes[MODEL_LEVEL_SHARED] = 3e8;
    c.smem_instr = 1;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.term_s[MODEL_OVL_SHARED], 5.12e-6, 1e-12);
    c.smem_instr = 0;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, NULL), RK_OK);
    assert_rel(a.overlap.term_s[MODEL_OVL_SHARED], 10e-6, 1e-12);

    assert_string_equal(model_kind_name(MODEL_KIND_OVERLAP), "overlap");
    assert_int_equal(model_kind_from_name("overlap", &k), RK_OK);
    assert_int_equal(k, MODEL_KIND_OVERLAP);
    assert_string_equal(model_overlap_term_name(MODEL_OVL_DRAM), "dram");
    assert_string_equal(model_overlap_term_name(MODEL_OVL_CHAIN), "chain");
    assert_string_equal(model_overlap_term_name(MODEL_OVL_COUNT), "?");

    const char *why = NULL;
    in.issue = NULL;
    assert_int_equal(model_predict(MODEL_KIND_OVERLAP, &in, &a, &why), RK_EUSAGE);
    assert_non_null(why);
    assert_rel(a.time_s, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p1_names),         cmocka_unit_test(test_p2_roofline),
        cmocka_unit_test(test_p3_hierarchical),  cmocka_unit_test(test_p4_tsm2),
        cmocka_unit_test(test_p5_missing),       cmocka_unit_test(test_p6_deterministic),
        cmocka_unit_test(test_p7_blocks_per_sm), cmocka_unit_test(test_p8_little),
        cmocka_unit_test(test_p9_counters),      cmocka_unit_test(test_p10_occupancy),
        cmocka_unit_test(test_p11_issue_counts), cmocka_unit_test(test_p12_pipes),
        cmocka_unit_test(test_p13_staging),      cmocka_unit_test(test_p14_issue_counters),
        cmocka_unit_test(test_p15_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
