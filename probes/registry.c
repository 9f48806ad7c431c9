/*
 * registry.c - the table of probes (nvbandwidth's registry with filter()): each
 * row is a greppable name, its group, a waive filter and the run function with
 * the variant it measures. `--only` selects rows by group name or name prefix.
 *
 * Adding a probe: a row here, its run function in the *.cu file of its group,
 * its sane range in tests/probes/test_probes_gpu.c, a line in docs/perf-notes.md.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static const char *need_cc(const struct rk_gpu *d, int major, int minor, const char *why)
{
    return (d->cc_major > major || (d->cc_major == major && d->cc_minor >= minor)) ? NULL : why;
}

static const char *waive_bf16(const struct rk_gpu *d, int arg)
{
    (void)arg;
    return need_cc(d, 8, 0, "bf16 arithmetic needs compute capability 8.0");
}

static const char *waive_tensor(const struct rk_gpu *d, int arg)
{
    switch (arg) {
    case PT_TC_BF16:
    case PT_TC_TF32:
        return need_cc(d, 8, 0, "bf16 and tf32 tensor cores need compute capability 8.0");
    case PT_TC_FP16:
        return need_cc(d, 7, 0, "fp16 tensor cores need compute capability 7.0");
    case PT_TC_INT8:
        return need_cc(d, 7, 5, "int8 tensor cores need compute capability 7.5");
    case PT_TC_FP8:
        return need_cc(d, 8, 9, "fp8 tensor cores need compute capability 8.9");
    case PT_TC_FP64:
        /* Only the data-centre parts (8.0, 9.0, 10.0) have fp64 tensor cores. */
        if ((d->cc_major == 8 && d->cc_minor == 0) || d->cc_major == 9 || d->cc_major == 10)
            return NULL;
        return "fp64 tensor cores exist only on compute capability 8.0, 9.0 and 10.0";
    default:
        return NULL;
    }
}

/* clang-format off */
static const struct pt_probe registry[] = {
    {{"bw_dram_read", PROBES_BANDWIDTH, "DRAM read, 16-byte loads, buffers >= 8x L2"}, NULL, pt_bw_dram, PT_DRAM_READ},
    {{"bw_dram_write", PROBES_BANDWIDTH, "DRAM write, 16-byte stores"}, NULL, pt_bw_dram, PT_DRAM_WRITE},
    {{"bw_dram_copy", PROBES_BANDWIDTH, "DRAM copy b = a, against cudaMemcpy device to device"}, NULL, pt_bw_dram, PT_DRAM_COPY},
    {{"bw_dram_triad", PROBES_BANDWIDTH, "DRAM triad a = b + s*c (fp64)"}, NULL, pt_bw_dram, PT_DRAM_TRIAD},
    {{"bw_l2_read", PROBES_BANDWIDTH, "L2 read by all SMs, footprint well inside the L2"}, NULL, pt_bw_cache, PT_CACHE_L2},
    {{"bw_l1_read", PROBES_BANDWIDTH, "L1 read, per-SM rate summed over the SMs"}, NULL, pt_bw_cache, PT_CACHE_L1},
    {{"bw_shared_read", PROBES_BANDWIDTH, "shared-memory read (LDS.128), summed over the SMs"}, NULL, pt_bw_cache, PT_CACHE_SHARED},
    {{"bw_shared_read_32", PROBES_BANDWIDTH, "shared-memory read with 4-byte loads (LDS.32), summed over the SMs"}, NULL, pt_bw_cache, PT_CACHE_SHARED32},
    {{"bw_h2d", PROBES_BANDWIDTH, "host to device copy, pinned memory"}, NULL, pt_bw_host, PT_HOST_H2D},
    {{"bw_d2h", PROBES_BANDWIDTH, "device to host copy, pinned memory"}, NULL, pt_bw_host, PT_HOST_D2H},
    {{"lat_chase", PROBES_LATENCY, "pointer chase 4 KB..2 GB: curve and L1/L2/DRAM plateaus"}, NULL, pt_lat_chase, 0},
    {{"lat_dram_loaded", PROBES_LATENCY, "DRAM read bandwidth against bytes in flight: latency under load (Little's law)"}, NULL, pt_lat_loaded, 0},
    {{"lat_shared", PROBES_LATENCY, "shared-memory latency, 32-bit index chase"}, NULL, pt_lat_shared, 0},
    {{"lat_stage_l2", PROBES_LATENCY, "a tiled GEMM block's staging round from L2: load, store to shared, barrier"}, NULL, pt_lat_stage, 0},
    {{"lat_issue_shared", PROBES_LATENCY, "issue cycles of a 4-byte shared load among independent FFMAs"}, NULL, pt_issue_shared, 0},
    {{"lat_fma_fp32", PROBES_LATENCY, "dependent FFMA latency"}, NULL, pt_lat_fma, PT_FP32},
    {{"lat_fma_fp64", PROBES_LATENCY, "dependent DFMA latency"}, NULL, pt_lat_fma, PT_FP64},
    {{"lat_fma_fp16", PROBES_LATENCY, "dependent HFMA latency"}, NULL, pt_lat_fma, PT_FP16},
    {{"peak_fp64_fma", PROBES_FLOPS, "DFMA throughput of the CUDA cores"}, NULL, pt_peak_fma, PT_FP64},
    {{"peak_fp32_fma", PROBES_FLOPS, "FFMA throughput of the CUDA cores"}, NULL, pt_peak_fma, PT_FP32},
    {{"peak_fp16x2_fma", PROBES_FLOPS, "HFMA2 throughput of the CUDA cores"}, NULL, pt_peak_fma, PT_FP16X2},
    {{"peak_bf16x2_fma", PROBES_FLOPS, "HFMA2.BF16 throughput of the CUDA cores"}, waive_bf16, pt_peak_fma, PT_BF16X2},
    {{"peak_tensor_bf16", PROBES_FLOPS, "cuBLASLt bf16 GEMM 8192^3, against plain cuBLAS"}, waive_tensor, pt_peak_tensor, PT_TC_BF16},
    {{"peak_tensor_fp16", PROBES_FLOPS, "cuBLASLt fp16 GEMM 8192^3"}, waive_tensor, pt_peak_tensor, PT_TC_FP16},
    {{"peak_tensor_tf32", PROBES_FLOPS, "cuBLASLt tf32 GEMM 8192^3"}, waive_tensor, pt_peak_tensor, PT_TC_TF32},
    {{"peak_tensor_fp64", PROBES_FLOPS, "cuBLASLt fp64 GEMM 8192^3"}, waive_tensor, pt_peak_tensor, PT_TC_FP64},
    {{"peak_tensor_int8", PROBES_FLOPS, "cuBLASLt int8 GEMM 8192^3, int32 out"}, waive_tensor, pt_peak_tensor, PT_TC_INT8},
    {{"peak_tensor_fp8", PROBES_FLOPS, "cuBLASLt fp8 e4m3 GEMM 8192^3, bf16 out"}, waive_tensor, pt_peak_tensor, PT_TC_FP8},
    {{"launch_async", PROBES_LAUNCH, "empty kernel, back-to-back asynchronous launches"}, NULL, pt_launch, PT_LAUNCH_ASYNC},
    {{"launch_sync", PROBES_LAUNCH, "empty kernel, launch plus synchronise round trip"}, NULL, pt_launch, PT_LAUNCH_SYNC},
    {{"launch_event", PROBES_LAUNCH, "empty kernel, one launch between two events behind an L2 flush: the shortest kernel measurement"}, NULL, pt_launch, PT_LAUNCH_EVENT},
    {{"energy_fit", PROBES_ENERGY, "energy per flop, per byte (DRAM, L2, shared) and static power: intensity sweep read with NVML's energy counter, one least-squares fit"}, NULL, pt_energy, 0},
};
/* clang-format on */

#define N_PROBES ((int)(sizeof registry / sizeof registry[0]))

int probes_count(void)
{
    return N_PROBES;
}

const struct probes_info *probes_get(int i)
{
    return (i >= 0 && i < N_PROBES) ? &registry[i].info : NULL;
}

const char *probes_group_name(enum probes_group g)
{
    switch (g) {
    case PROBES_BANDWIDTH:
        return "bandwidth";
    case PROBES_LATENCY:
        return "latency";
    case PROBES_FLOPS:
        return "flops";
    case PROBES_LAUNCH:
        return "launch";
    case PROBES_ENERGY:
        return "energy";
    }
    return "?";
}

int probes_select(const char *list, unsigned char *selected)
{
    int all = !list || !*list, n = 0, rc = RK_OK;
    char **items = NULL;

    for (int i = 0; i < N_PROBES; i++)
        selected[i] = (unsigned char)all;
    if (all)
        return RK_OK;
    rc = rk_parse_name_list(list, &items, &n);
    if (rc == RK_ENOMEM)
        return rk_error(RK_ENOMEM, "out of host memory");
    if (rc != RK_OK)
        return rk_error(RK_EUSAGE,
                        "'%s' has an empty name; --only takes names separated by one "
                        "comma each",
                        list);
    for (int k = 0; k < n && rc == RK_OK; k++) {
        size_t len = strlen(items[k]);
        int hits = 0;
        for (int i = 0; i < N_PROBES; i++) {
            const char *g = probes_group_name(registry[i].info.group);
            const char *name = registry[i].info.name;
            if (strcmp(g, items[k]) == 0 || strncmp(name, items[k], len) == 0) {
                selected[i] = 1;
                hits++;
            }
        }
        if (!hits)
            rc = rk_error(
                RK_EUSAGE,
                "'%s' is neither a probe group (bandwidth, latency, flops, launch, energy) nor "
                "the start of a probe name; see 'roofkit probe --list'",
                items[k]);
    }
    rk_free_name_list(items, n);
    return rc;
}

const char *probes_waived(const struct probes *s, int i)
{
    if (i < 0 || i >= N_PROBES || !registry[i].waive)
        return NULL;
    return registry[i].waive(&s->dev, registry[i].arg);
}

int probes_lanes_per_sm(int cc_major, int cc_minor, const char *precision)
{
    /* CUDA C Programming Guide, "Arithmetic Instructions" throughput table, and the
     * architecture whitepapers (GA100, GH100); fp16x2/bf16x2 lanes do one packed FMA. */
    static const struct {
        int major, minor, fp64, fp32, fp16x2, bf16x2;
    } t[] = {
        {7, 0, 32, 64, 64, 0},  {7, 5, 2, 64, 64, 0},   {8, 0, 32, 64, 128, 128},
        {8, 6, 2, 128, 64, 64}, {8, 9, 2, 128, 64, 64}, {9, 0, 64, 128, 128, 128},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (t[i].major != cc_major || t[i].minor != cc_minor)
            continue;
        if (strcmp(precision, "fp64") == 0)
            return t[i].fp64;
        if (strcmp(precision, "fp32") == 0)
            return t[i].fp32;
        if (strcmp(precision, "fp16x2") == 0)
            return t[i].fp16x2;
        if (strcmp(precision, "bf16x2") == 0)
            return t[i].bf16x2;
    }
    return 0;
}

int probes_run(struct probes *s, int i, struct probes_output *out)
{
    int first = out->n_results, first_pt = out->n_points, rc;
    struct pt_samples *t = s->samples;

    if (i < 0 || i >= N_PROBES)
        RK_BUG("probes_run: no such probe");
    if (rk_interrupted)
        return RK_EINTR;
    t->n = 0;
    rc = registry[i].run(s, registry[i].arg, out);
    if (rc == RK_OK && rk_interrupted)
        rc = RK_EINTR;
    if (rc != RK_OK) {
        /* Nothing of a failed or interrupted probe is handed on. */
        out->n_results = first;
        out->n_points = first_pt;
        return rc;
    }
    for (int k = first; k < out->n_results; k++) {
        struct probes_result *r = &out->results[k];
        if (isnan(r->sm_clock_mhz))
            r->sm_clock_mhz = pt_median(t->clock_mhz, t->n);
        if (isnan(r->power_w))
            r->power_w = pt_median(t->power_w, t->n);
        if (isnan(r->temp_c))
            r->temp_c = pt_median(t->temp_c, t->n);
    }
    return RK_OK;
}
