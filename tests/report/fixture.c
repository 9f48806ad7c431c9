/*
 * fixture.c - builds the report tests' database through db/db.h only (no SQL):
 * see fixture.h. Values are H100-like but invented; times follow a roofline with
 * deterministic noise so that every chart has something to draw.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "db.h"
#include "fixture.h"

static unsigned long long lcg = 88172645463325252ULL;

/* Deterministic noise in [0.8, 1.25). */
static double noise(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.8 + 0.45 * (double)(lcg >> 11) / 9007199254740992.0;
}

static int add_ceilings(struct db *db, int64_t cap)
{
    static const struct {
        const char *name, *kind, *level, *prec;
        double value;
        const char *unit;
        double theo;
        const char *params;
    } c[] = {
        {"bw_dram_read", "bandwidth", "dram", NULL, 3000, "GB/s", 3352, NULL},
        {"bw_l2_read", "bandwidth", "l2", NULL, 9000, "GB/s", NAN, NULL},
        {"bw_l1_read", "bandwidth", "l1", NULL, 25000, "GB/s", 33000, NULL},
        {"bw_shared_read", "bandwidth", "shared", NULL, 30000, "GB/s", 33000, NULL},
        {"peak_fp32_fma", "compute", NULL, "fp32", 51.2, "TFLOP/s", 66.9, NULL},
        {"peak_fp64_fma", "compute", NULL, "fp64", 25.6, "TFLOP/s", 33.5, NULL},
        {"peak_tensor_bf16", "compute", NULL, "bf16", 700, "TFLOP/s", 989, NULL},
        {"lat_chase_l1", "latency", "l1", NULL, 33, "cycles", NAN,
         "{\"from_bytes\": 4096, \"to_bytes\": 131072}"},
        {"lat_chase_l2", "latency", "l2", NULL, 260, "cycles", NAN,
         "{\"from_bytes\": 1048576, \"to_bytes\": 16777216}"},
        {"lat_chase_dram", "latency", "dram", NULL, 780, "cycles", NAN,
         "{\"from_bytes\": 268435456, \"to_bytes\": 2147483648}"},
        {"lat_fma", "latency", "register", "fp32", 4, "cycles", NAN, NULL},
        {"launch_empty", "launch", "host", NULL, 2.5, "us", NAN, NULL},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct db_ceiling x;
        int rc;
        memset(&x, 0, sizeof x);
        x.name = c[i].name;
        x.kind = c[i].kind;
        x.level = c[i].level;
        x.precision = c[i].prec;
        x.value = x.median = c[i].value;
        x.min = c[i].value * 0.98;
        x.max = c[i].value * 1.01;
        x.unit = c[i].unit;
        x.theoretical = c[i].theo;
        x.method = "fixture, invented";
        x.params = c[i].params;
        x.reps = 10;
        x.sm_clock_mhz = 1980;
        x.power_w = x.temp_c = NAN;
        if ((rc = db_insert_ceiling(db, cap, &x, NULL)) != RK_OK)
            return rc;
    }
    struct db_latency_point pts[40];
    int n = 0;
    for (long long fp = 4096; fp <= (2LL << 30); fp *= 2) {
        double cyc = fp <= 131072 ? 33 : fp <= (16LL << 20) ? 260 : fp <= (64LL << 20) ? 500 : 780;
        pts[n].footprint_bytes = fp;
        pts[n].stride_bytes = 128;
        pts[n].cycles = cyc * (1.0 + 0.01 * (n % 3));
        pts[n].ns = pts[n].cycles / 1.98;
        n++;
    }
    return db_insert_latency_points(db, cap, pts, n);
}

/* One measurement with two predictions. */
static int add_meas(struct db *db, int64_t run, int64_t model, const char *kernel,
                    const char *family, const char *prec, long long m, long long n, long long k,
                    const char *params, int counters, int verified)
{
    struct db_measurement x;
    struct db_metric met[6];
    struct db_prediction p;
    int64_t id;
    int rc, eb = strcmp(prec, "fp64") == 0 ? 8 : 4;
    double peak = eb == 8 ? 25.6e12 : 51.2e12, bw = 3.0e12;
    double eff = strcmp(family, "cublas") == 0 ? 0.8 : strcmp(family, "tsm2") == 0 ? 0.7 : 0.35;

    memset(&x, 0, sizeof x);
    x.kernel = kernel;
    x.family = family;
    x.precision = prec;
    x.m = m;
    x.n = n;
    x.k = k;
    x.params = params;
    x.grid[0] = (int)((m + 63) / 64);
    x.grid[1] = x.grid[2] = 1;
    x.block[0] = 256;
    x.block[1] = x.block[2] = 1;
    x.registers = 64;
    x.reps = 20;
    x.flops = 2.0 * (double)m * (double)n * (double)k;
    x.bytes_dram = (double)eb * ((double)m * k + (double)k * n + 2.0 * (double)m * n);
    x.bytes_l2 = x.bytes_l1 = x.bytes_dram * 2;
    x.bytes_shared = x.bytes_dram * 4;
    double roof = fmin(peak, x.flops / x.bytes_dram * bw);
    x.time_median_ns = x.flops / (roof * eff) * 1e9 * noise() + 2000.0;
    if (strcmp(family, "move") == 0) { /* the floor: the bytes alone, nothing computed */
        x.flops = 0.0;
        x.bytes_dram = (double)eb * ((double)m * k + (double)k * n + (double)m * n);
        x.time_median_ns = x.bytes_dram / (0.9 * bw) * 1e9 * noise() + 2000.0;
    }
    x.time_min_ns = x.time_median_ns * 0.97;
    x.time_max_ns = x.time_median_ns * 1.05;
    x.verified = verified;
    x.rel_error = verified == 1 ? 1e-7 : verified == 0 ? 0.5 : NAN;
    x.cache_state = "warm";
    x.source = "suite";
    x.launch_index = x.correlation_id = -1;
    memset(met, 0, sizeof met);
    met[0].name = "dram_read_bytes";
    met[0].value = x.bytes_dram * 0.9;
    met[0].unit = "bytes";
    met[1].name = "dram_write_bytes";
    met[1].value = (double)eb * m * n;
    met[1].unit = "bytes";
    met[2].name = eb == 8 ? "flop_count_dp" : "flop_count_sp";
    met[2].value = x.flops * 1.02;
    met[3].name = "gld_throughput";
    met[3].raw_name = "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second";
    met[3].value = x.bytes_dram * 1.1 / (x.time_median_ns * 1e-9);
    met[3].unit = "bytes/second";
    met[4].name = "l2_bytes"; /* the hierarchical roofline's levels */
    met[4].value = x.bytes_dram * 1.6;
    met[4].unit = "bytes";
    met[5].name = "shared_bytes";
    met[5].value = strcmp(family, "cublas") ? x.bytes_shared : NAN;
    met[5].unit = "bytes";
    if ((rc = db_insert_measurement(db, run, &x, met, counters ? 6 : 0, &id)) != RK_OK)
        return rc;
    memset(&p, 0, sizeof p);
    p.measurement_id = id;
    p.capture_id = model;
    p.model = "roofline";
    p.predicted_time_ns = x.flops / roof * 1e9;
    p.bound = x.flops / peak > x.bytes_dram / bw ? "compute" : "dram";
    p.details = "{\"fixture\": 1}";
    if ((rc = db_insert_prediction(db, &p, NULL)) != RK_OK)
        return rc;
    p.model = "hierarchical";
    p.predicted_time_ns = x.time_median_ns * (0.95 + 0.1 * (noise() - 0.8) / 0.45);
    return db_insert_prediction(db, &p, NULL);
}

/* Kernels of a profiled program, as CUPTI names them. */
static const char *const profiled_kernels[] = {
    "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, "
    "long, long, bool)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()("
    "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> "
    ">(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, "
    "float)#1}>, unsigned int, float, 4>)",
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_"
    "256x128_8x4_nn_align1::Params)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, "
    "false>(int, float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::elementwise_kernel<128, 2, "
    "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> "
    ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, "
    "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> "
    ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(float const*)",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
    "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float)",
    "void at::native::tensor_kernel_scan_innermost_dim<float, std::plus<float> >(float*, float "
    "const*, unsigned int, unsigned int, unsigned int, float, std::plus<float>)",
    "void at::native::index_elementwise_kernel<128, 4>(long)",
};

void fixture_launch(struct db_measurement *x, const char *kernel, int i, double t_ns)
{
    memset(x, 0, sizeof *x);
    x->kernel = kernel;
    x->grid[0] = 1024;
    x->grid[1] = x->grid[2] = 1;
    x->block[0] = 128;
    x->block[1] = x->block[2] = 1;
    x->registers = 32;
    x->reps = 1;
    x->time_min_ns = x->time_median_ns = x->time_max_ns = t_ns;
    x->flops = x->bytes_dram = x->bytes_l2 = x->bytes_l1 = x->bytes_shared = NAN;
    x->verified = -1;
    x->rel_error = NAN;
    x->cache_state = "warm";
    x->source = "profile";
    x->launch_index = i;
    x->correlation_id = 100 + i;
}

/*
 * The launches of a profiled program (capture `prof`, command line after " -- "): no family,
 * precision or shape, no analytic counts; flops and bytes from counters (the copies execute no
 * flops at all). The counter model predicts each; two other models store their reason.
 */
static int add_profiled(struct db *db, int64_t prof, int64_t model, int n)
{
    const int nk = (int)(sizeof profiled_kernels / sizeof profiled_kernels[0]);
    int rc = RK_OK;
    for (int i = 0; i < n && rc == RK_OK; i++) {
        struct db_measurement x;
        struct db_metric met[7];
        struct db_prediction p;
        int64_t id;
        const int kern = i % nk, copy = kern == 9 || kern == 11, tensor = kern == 2 || kern == 3;
        const double t = 4000.0 + 1.0e5 * noise() / (1 + kern);
        const double dram = 2.0e12 * t * 1e-9 * (0.2 + 0.5 * noise());
        fixture_launch(&x, profiled_kernels[kern], i, t);
        memset(met, 0, sizeof met);
        met[0].name = "dram_read_bytes";
        met[0].value = dram * 0.7;
        met[1].name = "dram_write_bytes";
        met[1].value = dram * 0.3;
        met[2].name = "l2_bytes";
        met[2].value = dram * (1.5 + noise());
        met[3].name = "l1_bytes";
        met[3].value = dram * (3.0 + noise());
        met[4].name = "shared_bytes";
        met[4].value = kern % 3 == 0 ? dram * 2.0 : 0.0;
        met[5].name = "flop_count_sp";
        met[5].value = copy ? 0.0 : dram * (tensor ? 0.5 : 2.0) * noise();
        met[6].name = "tensor_ops_bf16";
        met[6].value = tensor ? dram * 300.0 * noise() : 0.0;
        if ((rc = db_insert_measurement(db, prof, &x, met, 7, &id)) != RK_OK)
            break;
        memset(&p, 0, sizeof p);
        p.measurement_id = id;
        p.capture_id = model;
        p.model = "roofline_counters";
        p.predicted_time_ns = t * (0.6 + 0.3 * noise());
        p.bound = "dram";
        p.details = "{\"fixture\": 1}";
        if ((rc = db_insert_prediction(db, &p, NULL)) != RK_OK)
            break;
        for (int k = 0; k < 2 && rc == RK_OK; k++) { /* reasons, no time */
            p.model = k ? "hierarchical" : "roofline";
            p.predicted_time_ns = NAN;
            p.bound = NULL;
            p.details = k ? "{\"model\": \"hierarchical\", \"skipped\": \"the cost formula's "
                            "bytes are unknown\"}"
                          : "{\"model\": \"roofline\", \"skipped\": \"the analytic flops are "
                            "unknown\"}";
            rc = db_insert_prediction(db, &p, NULL);
        }
    }
    return rc;
}

int fixture_make_db(const char *path, int nmeas)
{
    struct db *db = NULL;
    struct db_device dev;
    int64_t dev_id, probe, run, model, prof;
    int rc, count = 0;
    static const char *const tsm2_params[] = {"{\"t1\": 128, \"t2\": 8, \"t3\": 4}",
                                              "{\"t1\": 128, \"t2\": 16, \"t3\": 8}"};

    memset(&dev, 0, sizeof dev);
    dev.name = "NVIDIA H100 80GB HBM3";
    dev.uuid = "GPU-00000000-fixture";
    dev.pci_bus_id = "0000:19:00.0";
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
    dev.driver_version = dev.runtime_version = 13000;
    dev.host = "fixture";
    if ((rc = db_open(path, DB_RW, &db)) != RK_OK)
        return rc;
    rc = db_device_upsert(db, &dev, &dev_id);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev_id, DB_CAPTURE_PROBE, "roofkit probe", "test", &probe);
    if (rc == RK_OK)
        rc = add_ceilings(db, probe);
    if (rc == RK_OK)
        rc = db_capture_end(db, probe, DB_DONE);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev_id, DB_CAPTURE_RUN, "roofkit run", "test", &run);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev_id, DB_CAPTURE_PROFILE,
                              "roofkit --db fixture.db profile -- python3 -u "
                              "/home/someone/bench/torch_mix.py --steps 3",
                              "test", &prof);
    if (rc == RK_OK)
        rc = db_capture_begin(db, 0, DB_CAPTURE_MODEL, "roofkit model", "test", &model);
    if (rc == RK_OK)
        rc = db_begin(db);
    for (int round = 0; rc == RK_OK && (round == 0 || count < nmeas); round++) {
        /* square GEMMs: N = 256, 512, 1024, 2048 (then 16-step sizes for bigger sets) */
        for (int i = 0; i < 4 && rc == RK_OK; i++) {
            long long N = round == 0 ? 256LL << i : 128 + 16LL * (4 * round + i);
            const char *tp = "{\"tile_m\": 64, \"tile_n\": 64, \"tile_k\": 8, \"scale_m\": 4, "
                             "\"scale_n\": 4}";
            rc = add_meas(db, run, model, "tiled_gemm", "tiled", "fp32", N, N, N, tp, i % 2, 1);
            if (rc == RK_OK)
                rc = add_meas(db, run, model, "stmvb", "stmvb", "fp32", N, N, N,
                              "{\"block\": 16, \"per_thread\": 4}", 0, 1);
            if (rc == RK_OK)
                rc =
                    add_meas(db, run, model, "cublas_sgemm", "cublas", "fp32", N, N, N, NULL, 1, 1);
            count += 3;
        }
        /* TSM2: m = k large, n = 8, fp32 and fp64, two parameter sets, V0 and V3 */
        for (int i = 0; i < 3 && rc == RK_OK; i++) {
            long long M = round == 0 ? 4096LL << i : 2048 + 256LL * (3 * round + i);
            for (int p = 0; p < 2 && rc == RK_OK; p++) {
                const char *prec = p ? "fp64" : "fp32";
                rc = add_meas(db, run, model, "tsm2_v3", "tsm2", prec, M, 8, M, tsm2_params[0], 1,
                              1);
                if (rc == RK_OK)
                    rc = add_meas(db, run, model, "tsm2_v3", "tsm2", prec, M, 8, M, tsm2_params[1],
                                  1, 1);
                if (rc == RK_OK)
                    rc = add_meas(db, run, model, "tsm2_v0", "tsm2", prec, M, 8, M, tsm2_params[0],
                                  0, 1);
                if (rc == RK_OK)
                    rc = add_meas(db, run, model, p ? "cublas_dgemm" : "cublas_sgemm", "cublas",
                                  prec, M, 8, M, NULL, 1, 1);
                count += 4;
                if (rc == RK_OK && round == 0 && i == 0) { /* the floor of one shape a precision */
                    rc = add_meas(db, run, model, "move", "move", prec, M, 8, M, NULL, 0, 1);
                    count++;
                }
            }
        }
        if (round == 0 && rc == RK_OK) { /* one that failed verification: listed, never drawn */
            rc = add_meas(db, run, model, "tiled_gemm", "tiled", "fp32", 1000, 1000, 1000,
                          "{\"tile_m\": 64, \"tile_n\": 64, \"tile_k\": 8, \"scale_m\": 4, "
                          "\"scale_n\": 4}",
                          0, 0);
            count++;
        }
    }
    if (rc == RK_OK)
        rc = add_profiled(db, prof, model, FIXTURE_PROFILED);
    if (rc == RK_OK)
        rc = db_commit(db);
    else
        db_rollback(db);
    if (rc == RK_OK)
        rc = db_capture_end(db, run, DB_DONE);
    if (rc == RK_OK)
        rc = db_capture_end(db, prof, DB_DONE);
    if (rc == RK_OK)
        rc = db_capture_end(db, model, DB_DONE);
    db_close(db);
    return rc;
}
