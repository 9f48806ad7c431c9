/*
 * model_fixture.c - builds the databases that tests/cli/model_cli.py runs
 * `roofkit model` on, through db/db.h only (no SQL):
 *
 *   model_fixture full FILE      one H100-like device; a probe capture with the
 *                                ceilings probes/ stores (names, kinds, levels,
 *                                units as the probes write them) and a latency
 *                                curve; a run capture of TSM2 V0-V3, ISM2, cuBLAS,
 *                                STMVB, tiled and naive measurements whose flops and
 *                                bytes come from kernels_cost() as cli/run.c stores
 *                                them, one failed verification, one with unknown
 *                                counts; a profile capture that names no device
 *   model_fixture noprobe FILE   the same device and run capture, no probe capture
 *   model_fixture profile FILE   the full fixture, then a profile capture on the device:
 *                                launches of four kernels with fp32 flop and DRAM counters,
 *                                one without counters, two without a time (profile_cli.py)
 *
 * The ceiling values are those of docs/perf-notes.md (H100 measured); the times are
 * invented. tests/cli/model_cli.py holds the same numbers for its hand computation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "db.h"
#include "kernels.h"

static int add_ceilings(struct db *db, int64_t cap)
{
    static const struct {
        const char *name, *kind, *level, *prec;
        double value;
        const char *unit;
    } c[] = {
        {"bw_dram_read", "bandwidth", "dram", NULL, 3174, "GB/s"},
        {"bw_dram_write", "bandwidth", "dram", NULL, 3269, "GB/s"},
        {"bw_dram_copy", "bandwidth", "dram", NULL, 2979, "GB/s"},
        {"bw_l2_read", "bandwidth", "l2", NULL, 8177, "GB/s"},
        {"bw_l1_read", "bandwidth", "l1", NULL, 33190, "GB/s"},
        {"bw_shared_read", "bandwidth", "shared", NULL, 33270, "GB/s"},
        {"bw_h2d", "bandwidth", "host", NULL, 55, "GB/s"},
        {"lat_chase_l1", "latency", "l1", NULL, 32, "cycles"},
        {"lat_chase_l1_ns", "latency", "l1", NULL, 16.2, "ns"},
        {"lat_chase_l2", "latency", "l2", NULL, 283.6, "cycles"},
        {"lat_chase_l2_far", "latency", "l2", NULL, 529, "cycles"},
        {"lat_chase_dram", "latency", "dram", NULL, 693, "cycles"},
        {"lat_chase_dram_ns", "latency", "dram", NULL, 350, "ns"},
        {"lat_shared", "latency", "shared", NULL, 30, "cycles"},
        {"lat_fma_fp32", "latency", "register", "fp32", 4, "cycles"},
        {"lat_fma_fp64", "latency", "register", "fp64", 8, "cycles"},
        {"peak_fp64_fma", "compute", NULL, "fp64", 33.4, "TFLOP/s"},
        {"peak_fp32_fma", "compute", NULL, "fp32", 66.2, "TFLOP/s"},
        {"peak_tensor_fp64", "compute", NULL, "fp64", 59.1, "TFLOP/s"},
        {"peak_tensor_tf32", "compute", NULL, "tf32", 378, "TFLOP/s"},
        {"peak_tensor_bf16", "compute", NULL, "bf16", 750, "TFLOP/s"},
        {"launch_async", "launch", NULL, NULL, 2.2, "us"},
    };
    struct db_latency_point pts[20];
    int n = 0, rc;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct db_ceiling x;
        memset(&x, 0, sizeof x);
        x.name = c[i].name;
        x.kind = c[i].kind;
        x.level = c[i].level;
        x.precision = c[i].prec;
        x.value = x.median = x.min = x.max = c[i].value;
        x.unit = c[i].unit;
        x.method = "model fixture";
        x.reps = 5;
        x.theoretical = NAN;
        x.sm_clock_mhz = 1980;
        x.power_w = x.temp_c = NAN;
        if ((rc = db_insert_ceiling(db, cap, &x, NULL)) != RK_OK)
            return rc;
    }
    for (long long fp = 4096; fp <= (1LL << 31) && n < 20; fp *= 4) {
        pts[n].footprint_bytes = fp;
        pts[n].stride_bytes = 128;
        pts[n].cycles = fp <= 131072 ? 32 : fp <= (16LL << 20) ? 283 : 693;
        pts[n].ns = pts[n].cycles / 1.98;
        n++;
    }
    return db_insert_latency_points(db, cap, pts, n);
}

/* One measurement of registry kernel `name` with analytic counts from kernels_cost(). */
static int add_kernel(struct db *db, int64_t run, const char *name, const char *prec, long m,
                      long n, long k, const long *params, int registers, double time_ns,
                      int verified)
{
    const struct kernels_kernel *kk = kernels_find(name);
    struct kernels_shape sh = {m, n, k};
    struct model_cost cost;
    struct db_measurement x;
    char pj[256];
    int p = kernels_precision_parse(prec);

    if (!kk || p < 0 || kernels_cost(kk, p, &sh, params, &cost) != RK_OK) {
        fprintf(stderr, "model_fixture: no cost for %s %s\n", name, prec);
        return RK_EFAIL;
    }
    kernels_params_json(kk, params, pj, sizeof pj);
    memset(&x, 0, sizeof x);
    x.kernel = kk->name;
    x.family = kk->family;
    x.precision = prec;
    x.m = m;
    x.n = n;
    x.k = k;
    x.params = pj;
    x.grid[0] = x.grid[1] = x.grid[2] = 1;
    x.block[0] = 128;
    x.block[1] = x.block[2] = 1;
    x.registers = registers;
    x.reps = 10;
    x.time_min_ns = time_ns * 0.98;
    x.time_median_ns = time_ns;
    x.time_max_ns = time_ns * 1.03;
    x.flops = cost.flops;
    x.bytes_dram = cost.bytes_dram;
    x.bytes_l2 = cost.bytes_l2;
    x.bytes_l1 = cost.bytes_l1;
    x.bytes_shared = cost.bytes_shared;
    x.verified = verified;
    x.rel_error = verified ? 1e-7 : 0.3;
    x.cache_state = "cold";
    x.source = "suite";
    x.launch_index = x.correlation_id = -1;
    return db_insert_measurement(db, run, &x, NULL, 0, NULL);
}

/* A row of the kind `roofkit profile` stores: no family, no analytic counts. */
static int add_profiled(struct db *db, int64_t cap)
{
    struct db_measurement x;
    memset(&x, 0, sizeof x);
    x.kernel = "void at::native::elementwise_kernel<128, 4>(int)";
    x.grid[0] = x.grid[1] = x.grid[2] = 1;
    x.block[0] = x.block[1] = x.block[2] = 1;
    x.reps = 1;
    x.time_min_ns = x.time_median_ns = x.time_max_ns = 5120;
    x.flops = x.bytes_dram = x.bytes_l2 = x.bytes_l1 = x.bytes_shared = NAN;
    x.verified = -1;
    x.rel_error = NAN;
    x.cache_state = "warm";
    x.source = "profile";
    x.launch_index = 3;
    x.correlation_id = 77;
    return db_insert_measurement(db, cap, &x, NULL, 0, NULL);
}

/*
 * The launches of a profiled program, as the injection library stores them (one measurement
 * each, demangled name, counters as metrics): profile_cli.py holds the same numbers for its
 * hand computation of `roofkit profile --summary`.
 */
static int add_profile_launches(struct db *db, int64_t cap)
{
    static const struct {
        const char *kernel;
        double ns, flops, dram; /* flops NaN: no counters */
    } l[] = {
        {"void gemm<float>(float const*, float*, int)", 40000, 2.4e9, 1e6},
        {"triad(double*, double const*, double const*, double, unsigned long)", 50000, 2e6, 1.2e8},
        {"void gemm<float>(float const*, float*, int)", 10000, 0.4e9, 1e6},
        {"copy_kernel(float*)", 40000, NAN, NAN},
        {"void gemm<float>(float const*, float*, int)", 20000, 0.6e9, 1e6},
        {"triad(double*, double const*, double const*, double, unsigned long)", 50000, 2e6, 1.2e8},
        {"noop()", NAN, NAN, NAN},
        {"void gemm<float>(float const*, float*, int)", 30000, 1.2e9, 1e6},
        {"triad(double*, double const*, double const*, double, unsigned long)", 60000, 2e6, 1.2e8},
        {"noop()", NAN, NAN, NAN},
    };
    int rc = RK_OK;
    for (size_t i = 0; i < sizeof l / sizeof *l && rc == RK_OK; i++) {
        struct db_measurement x;
        struct db_metric mv[3] = {
            {0, 0, "flop_count_sp", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
             l[i].flops, "flop"},
            {0, 0, "dram_read_bytes", "dram__bytes_read.sum", l[i].dram * 0.75, "byte"},
            {0, 0, "dram_write_bytes", "dram__bytes_write.sum", l[i].dram * 0.25, "byte"},
        };
        memset(&x, 0, sizeof x);
        x.kernel = l[i].kernel;
        x.grid[0] = 132;
        x.grid[1] = x.grid[2] = 1;
        x.block[0] = 256;
        x.block[1] = x.block[2] = 1;
        x.reps = 1;
        x.time_min_ns = x.time_median_ns = x.time_max_ns = l[i].ns;
        x.flops = x.bytes_dram = x.bytes_l2 = x.bytes_l1 = x.bytes_shared = NAN;
        x.verified = -1;
        x.rel_error = NAN;
        x.cache_state = "warm";
        x.source = "profile";
        x.launch_index = (int64_t)i;
        x.correlation_id = 100 + (int64_t)i;
        rc = db_insert_measurement(db, cap, &x, mv, isnan(l[i].flops) ? 0 : 3, NULL);
    }
    /* profile --energy: the program, triad's launches (read) and an NVTX range */
    const struct db_energy_span sp[] = {
        {0, 0, 0, "program", "app", 2.5, 1e7, 250, -1},
        {0, 0, 0, "kernel", l[1].kernel, 0.048, 160000, 300, 3},
        {0, 0, 0, "nvtx", "step/", 0.06, 200000, 300, 4},
    };
    if (rc == RK_OK)
        rc = db_insert_energy_spans(db, cap, sp, 3);
    return rc;
}

static int add_run(struct db *db, int64_t dev)
{
    /* params in registry order (kernels/registry.c), resolved as kernels_result has them */
    static const long v3[] = {256, 4, 16, 4, 1, 2};    /* t1 t2 t3 ksplit apipe rpt */
    static const long v3b[] = {256, 16, 8, 2, 1, 2};   /* fp64 n = 16 */
    static const long v2[] = {128, 16, 8, 2};          /* t1 t2 t3 ksplit */
    static const long v01[] = {128};                   /* t1 */
    static const long ism[] = {128, 16, 16, 16, 1, 1}; /* t1 t2 t3 tcf apipe rpt */
    static const long ism2[] = {128, 16, 8, 8};        /* t1 t2 t3 tcf */
    static const long stmvb[] = {16, 4};               /* block_size parallel */
    static const long tiled[] = {128, 64, 16, 8, 4};
    static const long naive[] = {16};
    static const long tf32[] = {1};
    static const long none[] = {0};
    int64_t run;
    int rc = db_capture_begin(db, dev, DB_CAPTURE_RUN, "roofkit run --suite tsm2", "test", &run);
    if (rc == RK_OK)
        rc = db_begin(db);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tsm2_v3", "fp32", 20480, 4, 20480, v3, 72, 1.62e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tsm2_v3", "fp64", 10240, 16, 10240, v3b, 120, 3.0e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tsm2_v2", "fp64", 10240, 16, 10240, v2, 96, 4.1e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tsm2_v1", "fp32", 10240, 8, 10240, v01, 40, 5.0e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tsm2_v0", "fp32", 10240, 2, 10240, v01, 32, 9.0e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "ism2_opt1", "fp32", 10000000, 16, 16, ism, 64, 5.2e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "ism2_opt2", "fp64", 1000000, 16, 16, ism2, 80, 2.5e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "cublas_dgemm", "fp64", 4096, 4096, 4096, none, 0, 2.9e6, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "cublas_gemmex", "fp32", 4096, 4096, 4096, tf32, 0, 5.0e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "cublas_sgemm", "fp32", 10240, 16, 10240, none, 0, 2.2e5, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "stmvb", "fp32", 2048, 2048, 2048, stmvb, 64, 2.0e6, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "tiled_003", "fp32", 2048, 2048, 2048, tiled, 90, 1.1e6, 1);
    if (rc == RK_OK)
        rc = add_kernel(db, run, "naive", "fp64", 1024, 1024, 1024, naive, 30, 2.4e7, 0);
    if (rc == RK_OK)
        rc = db_commit(db);
    if (rc == RK_OK)
        rc = db_capture_end(db, run, DB_DONE);
    return rc;
}

int main(int argc, char **argv)
{
    struct db *db = NULL;
    struct db_device dev;
    int64_t dev_id, cap;
    int rc, full;

    if (argc != 3 || (strcmp(argv[1], "full") != 0 && strcmp(argv[1], "noprobe") != 0 &&
                      strcmp(argv[1], "profile") != 0)) {
        fprintf(stderr, "usage: model_fixture full|noprobe|profile FILE\n");
        return RK_EUSAGE;
    }
    full = strcmp(argv[1], "noprobe") != 0;
    memset(&dev, 0, sizeof dev);
    dev.name = "NVIDIA H100 80GB HBM3";
    dev.uuid = "GPU-00000000-model-fixture";
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.sm_clock_mhz = 1980;
    dev.mem_clock_mhz = 2619;
    dev.bus_width_bits = 5120;
    dev.l2_bytes = 50LL << 20;
    dev.memory_bytes = 80LL << 30;
    dev.smem_per_sm_bytes = 233472;
    dev.smem_per_block_optin_bytes = 232448;
    dev.regs_per_sm = 65536;
    dev.max_threads_per_sm = 2048;
    dev.host = "fixture";
    if ((rc = db_open(argv[2], DB_RW, &db)) != RK_OK)
        return rc;
    rc = db_device_upsert(db, &dev, &dev_id);
    if (rc == RK_OK && full) {
        rc = db_capture_begin(db, dev_id, DB_CAPTURE_PROBE, "roofkit probe", "test", &cap);
        if (rc == RK_OK)
            rc = add_ceilings(db, cap);
        if (rc == RK_OK)
            rc = db_capture_end(db, cap, DB_DONE);
    }
    if (rc == RK_OK)
        rc = add_run(db, dev_id);
    if (rc == RK_OK && full) {
        rc = db_capture_begin(db, 0, DB_CAPTURE_PROFILE, "roofkit profile -- app", "test", &cap);
        if (rc == RK_OK)
            rc = add_profiled(db, cap);
        if (rc == RK_OK)
            rc = db_capture_end(db, cap, DB_DONE);
    }
    if (rc == RK_OK && strcmp(argv[1], "profile") == 0) {
        rc = db_capture_begin(db, dev_id, DB_CAPTURE_PROFILE, "roofkit profile -- app", "test",
                              &cap);
        if (rc == RK_OK)
            rc = add_profile_launches(db, cap);
        if (rc == RK_OK)
            rc = db_capture_end(db, cap, DB_DONE);
    }
    db_close(db);
    return rc;
}
