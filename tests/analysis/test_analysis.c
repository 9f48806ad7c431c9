/*
 * test_analysis.c - unit tests of analysis/ with ceilings and measurements built in memory
 * (no GPU, no database file): the unit table, the DRAM curve, the ceiling policy, and the
 * inputs each model takes, row by row against docs/model.md's table "Which numbers each
 * model takes". ctest label `unit`.
 *
 *   A1  analysis_unit_si: decimal and binary byte rates, FLOP/s and OP/s, times, cycles;
 *       an unknown unit and a non-positive ceiling give NaN
 *   A2  analysis_dram_curve: points in any order; equal byte counts keep the best
 *       bandwidth; a dip is raised to the best at fewer bytes; utilisation over the best
 *   A3  analysis_dram_curve: NULL, no params, no "points", malformed pairs, fewer than
 *       two usable points, or max < 2 give 0
 *   A4  analysis_judge_of: cuBLAS fp64 / fp16 / bf16 / tf32=1 on the tensor pipe, cuBLAS
 *       fp32 without tf32 and every other kernel on CUDA cores; shared-load width
 *   A5  analysis_ceiling, compute: every precision on each pipe, and the fallback of
 *       tensor fp64 to the FMA peak; nothing for an unknown precision
 *   A6  analysis_ceiling, memory and latency: DRAM read else copy; shared _32 for 4-byte
 *       loads else the 16-byte one; FMA latency by precision; a device-wide choice
 *   A7  the table, roofline: compute and DRAM ceilings, the analytic DRAM bytes
 *   A8  the table, roofline_counters: DRAM bytes from the counters, L2 and shared where
 *       the counters have them, no L1
 *   A9  the table, hierarchical: the compulsory DRAM bytes of a registry kernel, every
 *       level's ceiling; a kernel outside the registry keeps its stored analytic bytes
 *   A10 the table, occupancy: + launch, DRAM latency; without a launch no occupancy term
 *   A11 the table, issue: + FMA latency, L1, shared, the shared issue cycles; a tiled
 *       kernel adds the L2 latencies and the staging round
 *   A12 the table, issue_counters and overlap: measured DRAM bytes; skipped without
 *       inst_executed; overlap takes a library's measured L2 and shared bytes
 *   A13 the table, tsm2: FMA peak, DRAM, DRAM and FMA latency; only TSM2/ISM2 kernels;
 *       a missing ceiling or parameter gives a reason, never a number
 *   A14 analysis_place: counters give flops (the busiest pipe's executed operations) and
 *       bytes together, drawn under that pipe's peak; else the analytic ones; the roof of
 *       each level; no device, no roof
 *   A15 analysis_counter_flops: all-path counter else the sum of the paths; the busiest
 *       slot by time at the device's peaks; nothing measured
 *   A16 a profiled kernel (no analytic counts): the analytic models give a reason; the
 *       counter models predict it with the operations of every pipe, each at its peak, and
 *       the counters' bytes
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "common.h"

/* ------------------------------------------------------------ the fixture */

#define C(id_, name_, kind_, level_, prec_, value_, unit_)                                         \
    {                                                                                              \
        .id = id_, .capture_id = 1, .name = name_, .kind = kind_, .level = level_,                 \
        .precision = prec_, .value = value_, .unit = unit_                                         \
    }

/* Every ceiling the policy can choose, each with a distinct id and value. */
static struct db_ceiling all_ceilings[] = {
    C(1, "peak_fp64_fma", "compute", NULL, "fp64", 60.0, "TFLOP/s"),
    C(2, "peak_fp32_fma", "compute", NULL, "fp32", 61.0, "TFLOP/s"),
    C(3, "peak_tensor_fp64", "compute", NULL, "fp64", 62.0, "TFLOP/s"),
    C(4, "peak_tensor_tf32", "compute", NULL, "tf32", 400.0, "TFLOP/s"),
    C(5, "peak_tensor_fp16", "compute", NULL, "fp16", 800.0, "TFLOP/s"),
    C(6, "peak_tensor_bf16", "compute", NULL, "bf16", 801.0, "TFLOP/s"),
    C(7, "peak_fp16x2_fma", "compute", NULL, "fp16", 120.0, "TFLOP/s"),
    C(8, "peak_bf16x2_fma", "compute", NULL, "bf16", 121.0, "TFLOP/s"),
    C(9, "bw_dram_read", "bandwidth", "dram", NULL, 3000.0, "GB/s"),
    C(10, "bw_dram_copy", "bandwidth", "dram", NULL, 2900.0, "GB/s"),
    C(11, "bw_l2_read", "bandwidth", "l2", NULL, 10000.0, "GB/s"),
    C(12, "bw_l1_read", "bandwidth", "l1", NULL, 30000.0, "GB/s"),
    C(13, "bw_shared_read", "bandwidth", "shared", NULL, 33000.0, "GB/s"),
    C(14, "bw_shared_read_32", "bandwidth", "shared", NULL, 32000.0, "GB/s"),
    C(15, "lat_chase_dram", "latency", "dram", NULL, 660.0, "cycles"),
    C(16, "lat_fma_fp64", "latency", "register", "fp64", 8.0, "cycles"),
    C(17, "lat_fma_fp32", "latency", "register", "fp32", 4.0, "cycles"),
    C(18, "launch_async", "launch", "host", NULL, 2.0, "us"),
    C(19, "lat_chase_l2", "latency", "l2", NULL, 260.0, "cycles"),
    C(20, "lat_chase_l2_far", "latency", "l2", NULL, 470.0, "cycles"),
    C(21, "lat_issue_shared", "latency", "shared", NULL, 2.0, "cycles"),
    C(22, "lat_stage_extra", "latency", "shared", NULL, 40.0, "cycles"),
};
enum { NCEIL = sizeof all_ceilings / sizeof all_ceilings[0] };

/* A device holding all_ceilings except those named in `without` (NULL-terminated). */
static struct analysis_device device_without(struct db_ceiling *buf, const char *const *without)
{
    struct analysis_device d;
    int n = 0;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < NCEIL; i++) {
        int skip = 0;
        for (int k = 0; without && without[k]; k++)
            skip |= strcmp(all_ceilings[i].name, without[k]) == 0;
        if (!skip)
            buf[n++] = all_ceilings[i];
    }
    d.id = 1;
    d.probe_capture = 1;
    d.dev.name = "test GPU";
    d.dev.sm_count = 132;
    d.dev.sm_clock_mhz = 1980;
    d.dev.regs_per_sm = 65536;
    d.dev.smem_per_sm_bytes = 233472;
    d.dev.max_threads_per_sm = 2048;
    d.ceil = buf;
    d.nceil = n;
    return d;
}

static struct db_ceiling g_buf[NCEIL];
static struct analysis_device full(void)
{
    return device_without(g_buf, NULL);
}

/* A measurement row: kernel, family, precision, shape 1024^3, params, launch 64x64 blocks
 * of 16x16 threads (0 blocks when launch is 0), and the metrics given. */
static struct db_measurement_row row_of(const char *kernel, const char *family, const char *prec,
                                        const char *params, int launch, struct db_metric *metrics,
                                        int nmetrics)
{
    struct db_measurement_row r;
    memset(&r, 0, sizeof r);
    r.m.id = 7;
    r.m.kernel = kernel;
    r.m.family = family;
    r.m.precision = prec;
    r.m.m = r.m.n = r.m.k = 1024;
    r.m.params = params;
    for (int i = 0; i < 3; i++) {
        r.m.grid[i] = launch ? (i < 2 ? 64 : 1) : 0;
        r.m.block[i] = launch ? (i < 2 ? 16 : 1) : 0;
    }
    r.m.registers = 40;
    r.m.time_median_ns = 1e6;
    r.m.flops = 2.0 * 1024 * 1024 * 1024;
    r.m.bytes_dram = 3.0 * 1024 * 1024 * 4 * 5; /* the stored analytic count: 5x compulsory */
    r.m.bytes_l2 = 1e8;
    r.m.bytes_l1 = 2e8;
    r.m.bytes_shared = 3e8;
    r.m.verified = 1;
    r.metrics = metrics;
    r.n_metrics = nmetrics;
    return r;
}

static struct db_metric counters[] = {
    {0, 7, "dram_read_bytes", "dram__bytes_read.sum", 4.0e7, "byte"},
    {0, 7, "dram_write_bytes", "dram__bytes_write.sum", 4.0e6, "byte"},
    {0, 7, "l2_bytes", "lts__t_bytes.sum", 9.0e9, "byte"},
    {0, 7, "shared_bytes", "sm__sass_data_bytes_mem_shared.sum", 8.0e9, "byte"},
    {0, 7, "inst_executed", "smsp__inst_executed.sum", 5.0e7, "inst"},
    {0, 7, "flop_count_sp", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.0e9, "flop"},
};
enum { NCOUNTERS = sizeof counters / sizeof counters[0] };

/* The details' ceiling of `use` ("compute", "dram", ...) names `name` (NULL: none used). */
static int used(const char *details, const char *use, const char *name)
{
    char want[128];
    const char *c = strstr(details, "\"ceilings\":{");
    if (!c)
        return 0;
    snprintf(want, sizeof want, "\"%s\":{", use);
    const char *u = strstr(c, want);
    if (!name)
        return u == NULL;
    snprintf(want, sizeof want, "\"%s\":{\"id\":", use);
    if (!u || strncmp(u, want, strlen(want)) != 0)
        return 0;
    snprintf(want, sizeof want, "\"name\":\"%s\"", name);
    const char *end = strchr(u, '}');
    const char *at = strstr(u, want);
    return at && at < end;
}

/* Predicts `kind` for r on d; returns the details (free them), NULL with *why when skipped. */
static char *predict(const struct analysis_device *d, const struct db_measurement_row *r,
                     enum model_kind kind, const char **why)
{
    struct analysis_prediction p;
    int rc = analysis_predict(d, r, kind, &p, why);
    if (rc != RK_OK) {
        assert_int_equal(rc, RK_ENODATA);
        assert_non_null(*why);
        return NULL;
    }
    assert_non_null(p.details);
    assert_true(p.time_ns > 0);
    return p.details;
}

/* The same, for a row the model must predict. */
static char *predict_ok(const struct analysis_device *d, const struct db_measurement_row *r,
                        enum model_kind kind)
{
    const char *why = NULL;
    char *x = predict(d, r, kind, &why);
    assert_non_null(x);
    return x;
}

/* stso (a seeds' kernel with analytic counts and 4-byte shared loads in fp32) with counters. */
static struct db_measurement_row stso_row(const char *prec)
{
    return row_of("stso", "stso", prec, "{\"block_size\":32}", 1, counters, NCOUNTERS);
}

static double details_number(const char *details, const char *key)
{
    double v = NAN;
    char want[64];
    snprintf(want, sizeof want, "\"%s\":", key);
    const char *at = strstr(details, want);
    if (at)
        v = strtod(at + strlen(want), NULL);
    return v;
}

/* ------------------------------------------------------------------ units */

static void a1_units(void **state)
{
    (void)state;
    assert_true(analysis_unit_si(3.0, "GB/s") == 3e9);
    assert_true(analysis_unit_si(3.0, "TB/s") == 3e12);
    assert_true(analysis_unit_si(3.0, "GiB/s") == 3.0 * 1024 * 1024 * 1024);
    assert_true(analysis_unit_si(2.0, "KiB/s") == 2048.0);
    assert_true(analysis_unit_si(5.0, "TFLOP/s") == 5e12);
    assert_true(analysis_unit_si(5.0, "TOP/s") == 5e12);
    assert_true(analysis_unit_si(5.0, "GOP/s") == 5e9);
    assert_true(analysis_unit_si(5.0, "FLOP/s") == 5.0);
    assert_true(analysis_unit_si(2.0, "us") == 2e-6);
    assert_true(analysis_unit_si(2.0, "ms") == 2e-3);
    assert_true(analysis_unit_si(2.0, "ns") == 2e-9);
    assert_true(analysis_unit_si(7.0, "cycles") == 7.0);
    assert_true(isnan(analysis_unit_si(1.0, "GiFLOP/s"))); /* binary prefixes: bytes only */
    assert_true(isnan(analysis_unit_si(1.0, "furlongs")));
    assert_true(isnan(analysis_unit_si(1.0, NULL)));
    struct db_ceiling c = all_ceilings[8];
    assert_true(analysis_ceiling_si(&c) == 3e12);
    c.value = 0;
    assert_true(isnan(analysis_ceiling_si(&c)));
    c.value = NAN;
    assert_true(isnan(analysis_ceiling_si(&c)));
    assert_true(isnan(analysis_ceiling_si(NULL)));
}

/* ------------------------------------------------------------- DRAM curve */

static struct db_ceiling with_params(const char *params)
{
    struct db_ceiling c = {0};
    c.name = "lat_dram_loaded";
    c.params = params;
    return c;
}

static void a2_curve(void **state)
{
    (void)state;
    /* 4 MB twice (2000 and 3000 GB/s), 8 MB dips to 2900, 1 MB at 500, 2 MB at 1500 */
    struct db_ceiling c = with_params("{\"frac\":0.95,\"points\":[[4000000,2000.0],[1000000,500.0],"
                                      "[8000000,2900.0],[4000000,3000.0],[2000000,1500.0]]}");
    double b[8], u[8];
    int n = analysis_dram_curve(&c, b, u, 8);
    assert_int_equal(n, 4);
    const double want_b[4] = {1e6, 2e6, 4e6, 8e6}, want_u[4] = {500 / 3e3, 0.5, 1.0, 1.0};
    for (int i = 0; i < 4; i++) {
        assert_true(b[i] == want_b[i]);
        assert_true(fabs(u[i] - want_u[i]) < 1e-12);
    }
    assert_int_equal(analysis_dram_curve(&c, b, u, 2), 2); /* the first two pairs: 1 and 4 MB */
    assert_true(b[0] == 1e6 && b[1] == 4e6 && u[1] == 1.0);
}

static void a3_curve_refused(void **state)
{
    (void)state;
    double b[8], u[8];
    struct db_ceiling none = with_params(NULL), nopts = with_params("{\"frac\":0.95}"),
                      bad = with_params("{\"points\":[[1000000;5.0],[2000000,6.0]]}"),
                      one = with_params("{\"points\":[[1000000,5.0],[0,6.0],[3,-1]]}"),
                      ok = with_params("{\"points\":[[1000000,5.0],[2000000,6.0]]}");
    assert_int_equal(analysis_dram_curve(NULL, b, u, 8), 0);
    assert_int_equal(analysis_dram_curve(&none, b, u, 8), 0);
    assert_int_equal(analysis_dram_curve(&nopts, b, u, 8), 0);
    assert_int_equal(analysis_dram_curve(&bad, b, u, 8), 0);
    assert_int_equal(analysis_dram_curve(&one, b, u, 8), 0);
    assert_int_equal(analysis_dram_curve(&ok, b, u, 1), 0);
    assert_int_equal(analysis_dram_curve(&ok, b, u, 8), 2);
}

/* --------------------------------------------------------- ceiling policy */

static void a4_judge(void **state)
{
    static const struct {
        const char *kernel, *family, *prec, *params;
        enum analysis_pipe pipe;
        int smem;
    } cases[] = {
        {"cublas_dgemm", "cublas", "fp64", NULL, ANALYSIS_PIPE_TENSOR, 0},
        {"cublas_gemmex", "cublas", "fp16", NULL, ANALYSIS_PIPE_TENSOR, 0},
        {"cublas_gemmex", "cublas", "bf16", NULL, ANALYSIS_PIPE_TENSOR, 0},
        {"cublas_sgemm", "cublas", "fp32", "{\"tf32\":1}", ANALYSIS_PIPE_TENSOR, 0},
        {"cublas_sgemm", "cublas", "fp32", "{\"tf32\":0}", ANALYSIS_PIPE_CUDA, 0},
        {"cublas_sgemm", "cublas", "fp32", NULL, ANALYSIS_PIPE_CUDA, 0},
        {"stso", "stso", "fp32", "{\"block_size\":32}", ANALYSIS_PIPE_CUDA, 4},
        {"stso", "stso", "fp64", "{\"block_size\":32}", ANALYSIS_PIPE_CUDA, 8},
        {"tsm2_v3", "tsm2", "fp64", NULL, ANALYSIS_PIPE_CUDA, 16},
        {"naive", "naive", "fp64", NULL, ANALYSIS_PIPE_CUDA, 0},
        {"ampere_sgemm_128x64_nn", NULL, NULL, NULL, ANALYSIS_PIPE_CUDA, 0}, /* profiled */
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct db_measurement m = {0};
        struct analysis_judge j;
        m.kernel = cases[i].kernel;
        m.family = cases[i].family;
        m.precision = cases[i].prec;
        m.params = cases[i].params;
        analysis_judge_of(&m, &j);
        assert_int_equal(j.pipe, cases[i].pipe);
        assert_int_equal(j.smem_load_bytes, cases[i].smem);
        assert_ptr_equal(j.precision, cases[i].prec);
    }
}

static void a5_compute_policy(void **state)
{
    static const struct {
        const char *prec;
        enum analysis_pipe pipe;
        const char *want;
    } cases[] = {
        {"fp64", ANALYSIS_PIPE_CUDA, "peak_fp64_fma"},
        {"fp64", ANALYSIS_PIPE_TENSOR, "peak_tensor_fp64"},
        {"fp32", ANALYSIS_PIPE_CUDA, "peak_fp32_fma"},
        {"fp32", ANALYSIS_PIPE_TENSOR, "peak_tensor_tf32"},
        {"tf32", ANALYSIS_PIPE_CUDA, "peak_tensor_tf32"},
        {"tf32", ANALYSIS_PIPE_TENSOR, "peak_tensor_tf32"},
        {"fp16", ANALYSIS_PIPE_CUDA, "peak_fp16x2_fma"},
        {"fp16", ANALYSIS_PIPE_TENSOR, "peak_tensor_fp16"},
        {"bf16", ANALYSIS_PIPE_CUDA, "peak_bf16x2_fma"},
        {"bf16", ANALYSIS_PIPE_TENSOR, "peak_tensor_bf16"},
    };
    struct analysis_device d = full();
    struct db_ceiling buf[NCEIL];
    static const char *const no_tensor64[] = {"peak_tensor_fp64", "peak_tensor_fp16", NULL};
    struct analysis_device d2 = device_without(buf, no_tensor64);
    struct analysis_judge j = {NULL, ANALYSIS_PIPE_CUDA, 0};
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        j.precision = cases[i].prec;
        j.pipe = cases[i].pipe;
        const struct db_ceiling *c = analysis_ceiling(&d, &j, ANALYSIS_USE_COMPUTE);
        assert_non_null(c);
        assert_string_equal(c->name, cases[i].want);
    }
    j.precision = "fp64";
    j.pipe = ANALYSIS_PIPE_TENSOR; /* no DMMA peak measured: the FMA one */
    assert_string_equal(analysis_ceiling(&d2, &j, ANALYSIS_USE_COMPUTE)->name, "peak_fp64_fma");
    j.precision = "fp16"; /* no fallback from the tensor pipe to the CUDA cores' peak */
    assert_null(analysis_ceiling(&d2, &j, ANALYSIS_USE_COMPUTE));
    j.precision = "int8";
    assert_null(analysis_ceiling(&d, &j, ANALYSIS_USE_COMPUTE));
    assert_null(analysis_ceiling(&d, NULL, ANALYSIS_USE_COMPUTE));
    assert_null(analysis_ceiling(NULL, &j, ANALYSIS_USE_DRAM));
}

static void a6_memory_policy(void **state)
{
    struct analysis_device d = full();
    struct db_ceiling buf[NCEIL];
    static const char *const no_read[] = {"bw_dram_read", "bw_shared_read_32", NULL};
    struct analysis_device d2 = device_without(buf, no_read);
    struct analysis_judge j4 = {"fp32", ANALYSIS_PIPE_CUDA, 4},
                          j16 = {"fp64", ANALYSIS_PIPE_CUDA, 16};
    (void)state;
    assert_string_equal(analysis_ceiling(&d, &j4, ANALYSIS_USE_DRAM)->name, "bw_dram_read");
    assert_string_equal(analysis_ceiling(&d2, &j4, ANALYSIS_USE_DRAM)->name, "bw_dram_copy");
    assert_string_equal(analysis_ceiling(&d, &j4, ANALYSIS_USE_SHARED)->name, "bw_shared_read_32");
    assert_string_equal(analysis_ceiling(&d2, &j4, ANALYSIS_USE_SHARED)->name, "bw_shared_read");
    assert_string_equal(analysis_ceiling(&d, &j16, ANALYSIS_USE_SHARED)->name, "bw_shared_read");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_SHARED)->name, "bw_shared_read");
    assert_string_equal(analysis_ceiling(&d, &j4, ANALYSIS_USE_L2)->name, "bw_l2_read");
    assert_string_equal(analysis_ceiling(&d, &j4, ANALYSIS_USE_L1)->name, "bw_l1_read");
    assert_string_equal(analysis_ceiling(&d, &j4, ANALYSIS_USE_COMP_LAT)->name, "lat_fma_fp32");
    assert_string_equal(analysis_ceiling(&d, &j16, ANALYSIS_USE_COMP_LAT)->name, "lat_fma_fp64");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_MEM_LAT)->name, "lat_chase_dram");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_LAUNCH)->name, "launch_async");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_L2_LAT)->name, "lat_chase_l2");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_L2_FAR_LAT)->name,
                        "lat_chase_l2_far");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_ISSUE_SHARED)->name,
                        "lat_issue_shared");
    assert_string_equal(analysis_ceiling(&d, NULL, ANALYSIS_USE_STAGE_EXTRA)->name,
                        "lat_stage_extra");
    assert_string_equal(analysis_use_name(ANALYSIS_USE_L2_FAR_LAT), "l2_far_latency");
    assert_int_equal(analysis_level_use(MODEL_LEVEL_SHARED), ANALYSIS_USE_SHARED);
}

/* -------------------------------------------- the table, model by model */

static void a7_roofline(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r =
        row_of("cublas_dgemm", "cublas", "fp64", NULL, 1, counters, NCOUNTERS);
    char *x;
    (void)state;
    x = predict_ok(&d, &r, MODEL_KIND_ROOFLINE);
    assert_true(used(x, "compute", "peak_tensor_fp64"));
    assert_true(used(x, "dram", "bw_dram_read"));
    assert_true(used(x, "l2", NULL) && used(x, "launch", NULL) && used(x, "mem_latency", NULL));
    assert_true(details_number(x, "bytes_dram") == r.m.bytes_dram); /* analytic, stored */
    assert_true(details_number(x, "peak_flops") == 62e12);
    free(x);
}

static void a8_roofline_counters(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r = stso_row("fp32");
    char *x;
    (void)state;
    x = predict_ok(&d, &r, MODEL_KIND_COUNTERS);
    assert_true(strstr(x, "\"dram_bytes\":\"counters dram_read_bytes + dram_write_bytes\""));
    assert_true(used(x, "compute", "peak_fp32_fma") && used(x, "dram", "bw_dram_read"));
    assert_true(used(x, "l2", "bw_l2_read") && used(x, "shared", "bw_shared_read_32"));
    assert_true(used(x, "l1", NULL) && used(x, "launch", NULL));
    assert_true(strstr(x, "\"dram\":{\"bytes\":44000000,"));
    free(x);
    r.n_metrics = 2; /* DRAM only: no L2 or shared term */
    x = predict_ok(&d, &r, MODEL_KIND_COUNTERS);
    assert_true(used(x, "l2", NULL) && used(x, "shared", NULL));
    free(x);
}

static void a9_hierarchical(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r = stso_row("fp64");
    struct db_measurement_row lib = /* a kernel roofkit does not know: its stored counts */
        row_of("my_kernel", NULL, "fp64", NULL, 1, counters, NCOUNTERS);
    char *x;
    (void)state;
    x = predict_ok(&d, &r, MODEL_KIND_HIERARCHICAL);
    assert_true(strstr(x, "\"dram_bytes\":\"compulsory (model_cost bytes_dram_min)\""));
    /* 3 matrices of 1024^2 fp64 elements once */
    assert_true(strstr(x, "\"dram\":{\"bytes\":25165824,"));
    assert_true(used(x, "compute", "peak_fp64_fma") && used(x, "dram", "bw_dram_read"));
    assert_true(used(x, "shared", "bw_shared_read")); /* 8-byte loads */
    assert_true(used(x, "launch", NULL));
    free(x);
    x = predict_ok(&d, &lib, MODEL_KIND_HIERARCHICAL);
    assert_true(strstr(x, "\"dram_bytes\":\"analytic bytes_dram (no reuse)\""));
    assert_true(used(x, "l2", "bw_l2_read") && used(x, "l1", "bw_l1_read"));
    assert_true(used(x, "shared", "bw_shared_read"));
    free(x);
}

static void a10_occupancy(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r = stso_row("fp32");
    const char *why;
    char *x;
    (void)state;
    x = predict_ok(&d, &r, MODEL_KIND_OCCUPANCY);
    assert_true(used(x, "launch", "launch_async") && used(x, "mem_latency", "lat_chase_dram"));
    assert_true(strstr(x, "\"occupancy\":{\"blocks\":4096,"));
    assert_true(used(x, "comp_latency", NULL) && used(x, "issue_shared", NULL));
    free(x);
    r = row_of("stso", "stso", "fp32", "{\"block_size\":32}", 0, counters, NCOUNTERS);
    x = predict(&d, &r, MODEL_KIND_OCCUPANCY, &why); /* no launch: no occupancy term */
    assert_non_null(x);
    assert_true(used(x, "launch", "launch_async") && used(x, "mem_latency", NULL));
    assert_null(strstr(x, "\"blocks\""));
    free(x);
}

static void a11_issue(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r = stso_row("fp32");
    struct db_measurement_row t = row_of("tiled_003", "tiled", "fp32",
                                         "{\"tiledim_m\":128,\"tiledim_n\":64,\"tiledim_k\":16,"
                                         "\"tilescale_m\":8,\"tilescale_n\":4}",
                                         1, counters, NCOUNTERS);
    char *x;
    (void)state;
    x = predict_ok(&d, &r, MODEL_KIND_ISSUE);
    assert_true(used(x, "comp_latency", "lat_fma_fp32") && used(x, "l1", "bw_l1_read"));
    assert_true(used(x, "shared", "bw_shared_read_32"));
    assert_true(used(x, "issue_shared", "lat_issue_shared"));
    assert_true(strstr(x, "\"pipes\":{"));
    free(x);
    x = predict_ok(&d, &t, MODEL_KIND_ISSUE);
    assert_true(used(x, "l2_latency", "lat_chase_l2"));
    assert_true(used(x, "l2_far_latency", "lat_chase_l2_far"));
    assert_true(used(x, "stage_extra", "lat_stage_extra"));
    free(x);
    /* a library call has no counts of its own: no pipe term, the occupancy model */
    r = row_of("cublas_dgemm", "cublas", "fp64", NULL, 1, counters, NCOUNTERS);
    x = predict_ok(&d, &r, MODEL_KIND_ISSUE);
    assert_null(strstr(x, "\"pipes\":{"));
    free(x);
}

static void a12_measured_issue(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row lib =
        row_of("cublas_sgemm", "cublas", "fp32", "{\"tf32\":0}", 1, counters, NCOUNTERS);
    struct db_measurement_row r = stso_row("fp32");
    const char *why;
    char *x;
    (void)state;
    x = predict_ok(&d, &lib, MODEL_KIND_ISSUE_COUNTERS);
    assert_true(strstr(x, "\"dram_bytes\":\"counters dram_read_bytes + dram_write_bytes\""));
    assert_true(strstr(x, "\"pipes\":{"));
    assert_null(strstr(x, "\"l2\":{\"bytes\":9000000000,")); /* issue_counters: the cost's */
    free(x);
    x = predict_ok(&d, &lib, MODEL_KIND_OVERLAP);
    assert_true(strstr(x, "\"l2\":{\"bytes\":9000000000,")); /* overlap: the counters' */
    assert_true(strstr(x, "\"shared\":{\"bytes\":8000000000,"));
    assert_true(strstr(x, "\"overlap\":{"));
    free(x);
    x = predict(&d, &r, MODEL_KIND_OVERLAP, &why); /* counted kernel: its own L2 count */
    assert_non_null(x);
    assert_null(strstr(x, "\"l2\":{\"bytes\":9000000000,"));
    free(x);
    lib.n_metrics = 4; /* no inst_executed */
    assert_null(predict(&d, &lib, MODEL_KIND_ISSUE_COUNTERS, &why));
    assert_string_equal(why, "inst_executed not measured");
    assert_null(predict(&d, &lib, MODEL_KIND_OVERLAP, &why));
}

static void a13_tsm2(void **state)
{
    struct analysis_device d = full();
    struct db_ceiling buf[NCEIL];
    static const char *const no_lat[] = {"lat_fma_fp64", NULL};
    struct analysis_device d2 = device_without(buf, no_lat);
    struct db_measurement_row r =
        row_of("tsm2_v3", "tsm2", "fp64", "{\"t1\":128,\"t2\":16,\"t3\":8,\"apipe\":1,\"rpt\":2}",
               1, NULL, 0);
    struct db_measurement_row nok = row_of("tsm2_v3", "tsm2", "fp64", "{\"t1\":128}", 1, NULL, 0);
    struct db_measurement_row other =
        row_of("stso", "stso", "fp64", "{\"block_size\":32,\"t1\":128}", 1, NULL, 0);
    const char *why;
    char *x;
    (void)state;
    assert_true(analysis_applies(MODEL_KIND_TSM2, &r.m));
    assert_false(analysis_applies(MODEL_KIND_TSM2, &other.m));
    assert_true(analysis_applies(MODEL_KIND_ROOFLINE, &other.m));
    x = predict_ok(&d, &r, MODEL_KIND_TSM2);
    assert_true(used(x, "compute", "peak_fp64_fma") && used(x, "dram", "bw_dram_read"));
    assert_true(used(x, "mem_latency", "lat_chase_dram"));
    assert_true(used(x, "comp_latency", "lat_fma_fp64"));
    assert_true(strstr(x, "\"t1\":128,\"t2\":16,\"t3\":8,\"t2_kernel\":16,\"t3_kernel\":8"));
    free(x);
    assert_null(predict(&d, &nok, MODEL_KIND_TSM2, &why));
    assert_string_equal(why, "t2 or t3 unknown");
    assert_null(predict(&d2, &r, MODEL_KIND_TSM2, &why));
    assert_string_equal(why, "no lat_fma_fp64 ceiling");
    assert_null(predict(&d, &other, MODEL_KIND_TSM2, &why));
    assert_string_equal(why, "not a tsm2 or ism2 kernel");
}

/* The number after "key": in details x (NAN when absent). */
static double num_after(const char *x, const char *key)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\":", key);
    const char *p = strstr(x, want);
    return p ? strtod(p + strlen(want), NULL) : NAN;
}

/* overlap's epilogue: C written after a block's last row tile, over ISM2's tcf tiles; the entry
 * point tsm2 running ISM2 opt. 1 (variant 3) is costed as that variant, tcf included */
static void a13b_epilogue(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row v = row_of(
        "ism2_opt1", "ism2", "fp32",
        "{\"t1\":128,\"t2\":16,\"t3\":8,\"tcf\":4,\"apipe\":2,\"rpt\":1}", 1, counters, NCOUNTERS);
    struct db_measurement_row e =
        row_of("tsm2", "tsm2", "fp32",
               "{\"variant\":3,\"t1\":128,\"t2\":16,\"t3\":8,\"split\":4,\"apipe\":2,\"rpt\":1,"
               "\"cblocks\":1}",
               1, counters, NCOUNTERS);
    (void)state;
    char *xv = predict_ok(&d, &v, MODEL_KIND_OVERLAP);
    char *xe = predict_ok(&d, &e, MODEL_KIND_OVERLAP);
    const double ev = num_after(xv, "epilogue_s"), ee = num_after(xe, "epilogue_s");
    assert_true(ev > 0);
    assert_true(fabs(ee - ev) <= 1e-12 * ev);
    free(xv);
    free(xe);
}

/* ------------------------------------------------------------- placement */

static struct db_metric dgemm_counters[] = {
    {0, 7, "dram_read_bytes", "dram__bytes_read.sum", 4.0e7, "byte"},
    {0, 7, "dram_write_bytes", "dram__bytes_write.sum", 4.0e6, "byte"},
    {0, 7, "l2_bytes", "lts__t_bytes.sum", 9.0e9, "byte"},
    {0, 7, "flop_count_dp", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 1.0e6, "flop"},
    {0, 7, "tensor_ops_fp64", "sm__ops_path_tensor_src_fp64.sum", 2.5e9, "flop"},
};

static void a14_place(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row lib =
        row_of("cublas_dgemm", "cublas", "fp64", NULL, 1, dgemm_counters, 5);
    struct db_measurement_row plain =
        row_of("stso", "stso", "fp64", "{\"block_size\":32}", 1, NULL, 0);
    struct analysis_point p;
    (void)state;
    analysis_place(&d, &lib, &p);
    assert_true(p.counters);
    assert_int_equal(p.cf.slot, ANALYSIS_SLOT_TENSOR_FP64);
    /* executed (padded) tensor operations, not the useful 2mnk, over the counters' bytes */
    assert_true(p.flops == 2.5e9 && p.bytes[MODEL_LEVEL_DRAM] == 4.4e7);
    assert_true(p.flops_useful == lib.m.flops);
    assert_true(p.bytes[MODEL_LEVEL_L2] == 9e9 && isnan(p.bytes[MODEL_LEVEL_L1]));
    assert_string_equal(p.peak_c->name, "peak_tensor_fp64");
    assert_string_equal(p.level_c[MODEL_LEVEL_DRAM]->name, "bw_dram_read");
    assert_true(p.peak == 62e12);
    assert_true(p.roof == 62e12); /* 56.8 FLOP/B, past the ridge at 20.7 */
    assert_true(fabs(p.pct_roof - 100.0 * 2.5e9 / 1e-3 / p.roof) < 1e-9);
    assert_string_equal(p.bound, "compute");
    assert_true(fabs(p.roof_level[MODEL_LEVEL_L2] - 2.5e9 / 9e9 * 10000e9) < 1e-3);

    plain.m.bytes_dram = 1e9; /* 2.1 FLOP/B: under the ridge */
    analysis_place(&d, &plain, &p);
    assert_false(p.counters);
    assert_true(p.flops == plain.m.flops && p.bytes[MODEL_LEVEL_DRAM] == plain.m.bytes_dram);
    assert_string_equal(p.peak_c->name, "peak_fp64_fma");
    assert_true(fabs(p.roof - plain.m.flops / plain.m.bytes_dram * 3e12) < 1e-3);
    assert_string_equal(p.bound, "dram");
    assert_true(isfinite(p.pct_roof));

    analysis_place(NULL, &plain, &p);
    assert_true(isnan(p.roof) && isnan(p.peak) && p.bound == NULL);
    assert_true(isfinite(p.intensity[MODEL_LEVEL_DRAM]));
}

static void a15_counter_flops(void **state)
{
    struct analysis_device d = full();
    struct db_metric paths[] = {
        {0, 7, "tensor_ops_tf32_wgmma", NULL, 3.0e9, "flop"},
        {0, 7, "tensor_ops_tf32_mma", NULL, 1.0e9, "flop"},
        {0, 7, "flop_count_sp", NULL, 1.0e9, "flop"},
    };
    struct db_metric all[] = {
        {0, 7, "tensor_ops_tf32", NULL, 5.0e9, "flop"},
        {0, 7, "tensor_ops_tf32_wgmma", NULL, 3.0e9, "flop"},
        {0, 7, "tensor_ops_fp16_wgmma", NULL, 0.0, "flop"},
    };
    struct db_measurement_row r = row_of("k", NULL, NULL, NULL, 1, paths, 3);
    struct analysis_flops f;
    struct analysis_judge j;
    (void)state;
    analysis_counter_flops(&d, &r, &f);
    assert_int_equal(f.measured, 2);
    assert_true(f.v[ANALYSIS_SLOT_TENSOR_TF32] == 4.0e9); /* the two paths summed */
    assert_true(isnan(f.v[ANALYSIS_SLOT_FP64]));
    assert_true(f.total == 5.0e9);
    /* 1e9 on the CUDA cores (61 TFLOP/s) take longer than 4e9 on the tensor cores (400) */
    assert_int_equal(f.slot, ANALYSIS_SLOT_FP32);
    assert_true(fabs(f.time_s - (1e9 / 61e12 + 4e9 / 400e12)) < 1e-18);
    r.metrics = all;
    r.n_metrics = 3;
    analysis_counter_flops(&d, &r, &f);
    assert_true(f.v[ANALYSIS_SLOT_TENSOR_TF32] == 5.0e9); /* the all-path counter wins */
    assert_true(f.v[ANALYSIS_SLOT_TENSOR_FP16] == 0.0);
    assert_int_equal(f.slot, ANALYSIS_SLOT_TENSOR_TF32);
    analysis_slot_judge(ANALYSIS_SLOT_TENSOR_INT8, &j);
    assert_string_equal(j.precision, "int8");
    assert_int_equal(j.pipe, ANALYSIS_PIPE_TENSOR);
    assert_string_equal(analysis_slot_name(ANALYSIS_SLOT_TENSOR_BF16), "tensor bf16");
    r.n_metrics = 0;
    analysis_counter_flops(&d, &r, &f);
    assert_int_equal(f.measured, 0);
    assert_int_equal(f.slot, -1);
}

/* A profiled kernel: no analytic counts, counters only. */
static struct db_metric profiled_counters[] = {
    {0, 7, "dram_read_bytes", "dram__bytes_read.sum", 6.0e7, "byte"},
    {0, 7, "dram_write_bytes", "dram__bytes_write.sum", 2.0e7, "byte"},
    {0, 7, "l2_bytes", "lts__t_bytes.sum", 3.0e8, "byte"},
    {0, 7, "l1_bytes", "l1tex__t_bytes.sum", 2.0e8, "byte"},
    {0, 7, "shared_bytes", "sm__sass_data_bytes_mem_shared.sum", 4.0e8, "byte"},
    {0, 7, "inst_executed", "smsp__sass_inst_executed.sum", 2.0e6, "inst"},
    {0, 7, "flop_count_sp", NULL, 1.0e7, "flop"},
    {0, 7, "tensor_ops_bf16_wgmma", NULL, 1.0e11, "flop"},
};

static void a16_profiled(void **state)
{
    struct analysis_device d = full();
    struct db_measurement_row r =
        row_of("nvjet_sm90_tst_256x128", NULL, NULL, NULL, 1, profiled_counters, 8);
    const char *why;
    char *x;
    (void)state;
    r.m.flops = r.m.bytes_dram = r.m.bytes_l2 = r.m.bytes_l1 = r.m.bytes_shared = NAN;
    static const enum model_kind refused[] = {MODEL_KIND_ROOFLINE, MODEL_KIND_HIERARCHICAL,
                                              MODEL_KIND_OCCUPANCY, MODEL_KIND_ISSUE};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_null(predict(&d, &r, refused[i], &why));
        assert_non_null(strstr(why, "no analytic flops or bytes"));
    }
    x = predict_ok(&d, &r, MODEL_KIND_COUNTERS);
    assert_true(used(x, "compute", "peak_tensor_bf16"));
    assert_true(details_number(x, "flops") == 1.0e11 + 1.0e7);
    /* one peak that gives each pipe its own: (1e11 / 801e12 + 1e7 / 61e12) per the total */
    const double peak = (1.0e11 + 1.0e7) / (1.0e11 / 801e12 + 1.0e7 / 61e12);
    assert_true(fabs(details_number(x, "peak_flops") / peak - 1.0) < 1e-12);
    assert_true(strstr(x, "\"dram\":{\"bytes\":80000000,"));
    free(x);
    x = predict_ok(&d, &r, MODEL_KIND_OVERLAP);
    assert_true(strstr(x, "\"dram_bytes\":\"counters dram_read_bytes + dram_write_bytes\""));
    assert_true(strstr(x, "\"l1\":{\"bytes\":200000000,"));
    assert_true(strstr(x, "\"shared\":{\"bytes\":400000000,"));
    assert_true(used(x, "compute", "peak_tensor_bf16"));
    free(x);
    x = predict_ok(&d, &r, MODEL_KIND_ISSUE_COUNTERS);
    free(x);
    r.n_metrics = 5; /* counters without operations or instructions */
    assert_null(predict(&d, &r, MODEL_KIND_COUNTERS, &why));
    assert_string_equal(why, "flops unknown");
    assert_null(predict(&d, &r, MODEL_KIND_OVERLAP, &why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a1_units),          cmocka_unit_test(a2_curve),
        cmocka_unit_test(a3_curve_refused),  cmocka_unit_test(a4_judge),
        cmocka_unit_test(a5_compute_policy), cmocka_unit_test(a6_memory_policy),
        cmocka_unit_test(a7_roofline),       cmocka_unit_test(a8_roofline_counters),
        cmocka_unit_test(a9_hierarchical),   cmocka_unit_test(a10_occupancy),
        cmocka_unit_test(a11_issue),         cmocka_unit_test(a12_measured_issue),
        cmocka_unit_test(a13_tsm2),          cmocka_unit_test(a13b_epilogue),
        cmocka_unit_test(a14_place),         cmocka_unit_test(a15_counter_flops),
        cmocka_unit_test(a16_profiled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
