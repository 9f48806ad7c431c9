/*
 * metrics.c - the metric aliases as data, and plans that turn requested names into the raw
 * CUPTI metrics to collect and back into alias values.
 *
 * Hopper has no nvprof metrics; each classic name is a linear recipe over PerfWorks metrics,
 * from the Nsight Compute "Nvprof Transition Guide" mapping. Every raw name below is accepted
 * by CUPTI's host API for "GH100" (tests/collect/test_host.c checks it). The default set fits
 * in 3 replay passes on GH100 (measured with cuptiProfilerHostGetNumOfPasses; test_host.c
 * asserts it). Its tensor counters cover the wgmma paths of bf16, fp16, tf32 and int8
 * (`sm__ops_path_tensor_op_hgmma_*`, `..._igmma_*`: Hopper GEMMs) and fp8 and fp64 on every
 * path. Kernels that use mma.sync for fp16, bf16, tf32 or int8 (Ampere-style kernels, such as
 * cutlass_80 ones, and WMMA) are not in it: name the `*_mma` aliases or the all-path ones
 * (`tensor_ops_fp16`, ...). Any one of those fits beside the default set in its 3 passes;
 * together they cost more (the four `*_mma` ones: 7).
 *
 * Tensor operations count as CUPTI counts them: 2 per multiply-add, of the work the tensor
 * cores executed (a tile padded beyond the matrix counts in full), not the useful 2mnk.
 *
 * Assumes nothing about CUPTI itself: this file is plain C and runs in CPU unit tests.
 */
#define _POSIX_C_SOURCE 200809L
#include "collect.h"

#include "common.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FADD "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
#define FMUL "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
#define FFMA "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
#define DADD "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"
#define DMUL "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"
#define DFMA "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
#define HADD "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum"
#define HMUL "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum"
#define HFMA "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"

/* One-term alias and three-term FLOP alias, to keep the table readable. */
#define ONE(alias, unit, dflt, raw, desc)                                                          \
    {                                                                                              \
        alias, unit, dflt, 1, {raw}, {1.0}, desc                                                   \
    }
#define FLOPS(alias, add, mul, fma, desc)                                                          \
    {                                                                                              \
        alias, "flop", 1, 3, {add, mul, fma}, {1.0, 1.0, 2.0}, desc                                \
    }

static const struct collect_metric aliases[] = {
    /* ---- the default set (3 passes on GH100) ---- */
    ONE("gld_throughput", "byte/second", 1,
        "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second",
        "global load throughput seen by L1; loads through TMA (the bulk tensor copy engine "
        "that Hopper wgmma GEMMs load with) are not counted: 0 for such kernels"),
    ONE("gld_efficiency", "percent", 1,
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
        "requested / transferred bytes of global loads"),
    ONE("achieved_occupancy", "percent", 1, "sm__warps_active.avg.pct_of_peak_sustained_active",
        "active warps / maximum warps per SM, while active"),
    ONE("dram_read_bytes", "byte", 1, "dram__bytes_read.sum", "bytes read from DRAM"),
    ONE("dram_write_bytes", "byte", 1, "dram__bytes_write.sum", "bytes written to DRAM"),
    ONE("l2_bytes", "byte", 1, "lts__t_bytes.sum", "bytes accessed in L2 (all operations)"),
    ONE("l1_bytes", "byte", 1, "l1tex__t_bytes.sum", "bytes accessed in L1"),
    ONE("shared_bytes", "byte", 1, "sm__sass_data_bytes_mem_shared.sum",
        "bytes loaded and stored in shared memory by SASS instructions"),
    FLOPS("flop_count_sp", FADD, FMUL, FFMA, "FP32 operations: add + mul + 2 fma"),
    FLOPS("flop_count_dp", DADD, DMUL, DFMA, "FP64 operations: add + mul + 2 fma"),
    FLOPS("flop_count_hp", HADD, HMUL, HFMA,
          "FP16 operations: add + mul + 2 fma (HFMA counts include nvcc's HFMA2.MMA moves)"),
    ONE("tensor_ops_bf16_wgmma", "flop", 1, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
        "tensor operations of wgmma with bf16 inputs (2 per multiply-add)"),
    ONE("tensor_ops_fp16_wgmma", "flop", 1, "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
        "tensor operations of wgmma with fp16 inputs"),
    ONE("tensor_ops_tf32_wgmma", "flop", 1, "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum",
        "tensor operations of wgmma with tf32 inputs"),
    ONE("tensor_ops_int8_wgmma", "op", 1, "sm__ops_path_tensor_op_igmma_src_int8.sum",
        "tensor operations of wgmma with int8 inputs"),
    ONE("tensor_ops_fp8", "flop", 1, "sm__ops_path_tensor_src_fp8.sum",
        "tensor operations with fp8 inputs, all paths"),
    ONE("tensor_ops_fp64", "flop", 1, "sm__ops_path_tensor_src_fp64.sum",
        "tensor operations with fp64 inputs (DMMA), all paths"),
    ONE("inst_executed", "instruction", 1, "smsp__sass_inst_executed.sum",
        "warp instructions executed (SASS-patched count: exact, clock-independent)"),
    ONE("gpu_time", "nanosecond", 1, "gpu__time_duration.sum",
        "kernel duration under the profiler (clocks not locked)"),
    ONE("sm_clock", "cycle/second", 1, "sm__cycles_elapsed.avg.per_second",
        "SM clock during the kernel"),

    /* ---- by name (each costs passes beyond the default set, or adds rows) ---- */
    ONE("flop_count_sp_add", "instruction", 0, FADD, "thread FADD instructions"),
    ONE("flop_count_sp_mul", "instruction", 0, FMUL, "thread FMUL instructions"),
    ONE("flop_count_sp_fma", "instruction", 0, FFMA, "thread FFMA instructions"),
    ONE("flop_count_dp_add", "instruction", 0, DADD, "thread DADD instructions"),
    ONE("flop_count_dp_mul", "instruction", 0, DMUL, "thread DMUL instructions"),
    ONE("flop_count_dp_fma", "instruction", 0, DFMA, "thread DFMA instructions"),
    ONE("flop_count_hp_add", "instruction", 0, HADD, "thread HADD instructions"),
    ONE("flop_count_hp_mul", "instruction", 0, HMUL, "thread HMUL instructions"),
    ONE("flop_count_hp_fma", "instruction", 0, HFMA, "thread HFMA instructions"),
    ONE("gld_transactions", "sector", 0, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "sectors of global loads"),
    ONE("gst_transactions", "sector", 0, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "sectors of global stores"),
    ONE("gst_throughput", "byte/second", 0,
        "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum.per_second",
        "global store throughput seen by L1"),
    ONE("gst_efficiency", "percent", 0,
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
        "requested / transferred bytes of global stores"),
    ONE("dram_read_throughput", "byte/second", 0, "dram__bytes_read.sum.per_second",
        "DRAM read bandwidth"),
    ONE("dram_write_throughput", "byte/second", 0, "dram__bytes_write.sum.per_second",
        "DRAM write bandwidth"),
    ONE("dram_read_transactions", "sector", 0, "dram__sectors_read.sum", "DRAM sectors read"),
    ONE("dram_write_transactions", "sector", 0, "dram__sectors_write.sum", "DRAM sectors written"),
    ONE("dram_utilization", "percent", 0, "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM throughput / peak"),
    {"l2_read_transactions",
     "sector",
     0,
     3,
     {"lts__t_sectors_op_read.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum"},
     {1.0, 1.0, 1.0},
     "L2 sectors read, atomics and reductions included"},
    {"l2_write_transactions",
     "sector",
     0,
     3,
     {"lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum"},
     {1.0, 1.0, 1.0},
     "L2 sectors written, atomics and reductions included"},
    ONE("l2_tex_hit_rate", "percent", 0, "lts__t_sector_hit_rate.pct", "L2 sector hit rate"),
    ONE("global_hit_rate", "percent", 0, "l1tex__t_sector_hit_rate.pct", "L1 sector hit rate"),
    ONE("shared_load_transactions", "wavefront", 0,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared-memory load wavefronts"),
    ONE("shared_store_transactions", "wavefront", 0,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared-memory store wavefronts"),
    ONE("shared_efficiency", "percent", 0,
        "smsp__sass_average_data_bytes_per_wavefront_mem_shared.pct",
        "requested / transferred bytes of shared memory"),
    ONE("tensor_ops_bf16", "flop", 0, "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "tensor operations with bf16 inputs, all paths"),
    ONE("tensor_ops_fp16", "flop", 0, "sm__ops_path_tensor_src_fp16.sum",
        "tensor operations with fp16 inputs, all paths"),
    ONE("tensor_ops_tf32", "flop", 0, "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
        "tensor operations with tf32 inputs, all paths"),
    ONE("tensor_ops_int8", "op", 0, "sm__ops_path_tensor_src_int8.sum",
        "tensor operations with int8 inputs, all paths"),
    ONE("tensor_ops_bf16_mma", "flop", 0, "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
        "tensor operations of mma.sync (HMMA) with bf16 inputs"),
    ONE("tensor_ops_fp16_mma", "flop", 0, "sm__ops_path_tensor_op_hmma_src_fp16.sum",
        "tensor operations of mma.sync (HMMA) with fp16 inputs"),
    ONE("tensor_ops_tf32_mma", "flop", 0, "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum",
        "tensor operations of mma.sync (HMMA) with tf32 inputs"),
    ONE("tensor_ops_int8_mma", "op", 0, "sm__ops_path_tensor_op_imma_src_int8.sum",
        "tensor operations of mma.sync (IMMA) with int8 inputs"),
    ONE("tensor_pipe_inst", "instruction", 0, "sm__inst_executed_pipe_tensor.sum",
        "warp instructions issued to the tensor pipe, including the HFMA2.MMA register moves "
        "nvcc emits; not a count of MMA instructions"),
    {"tensor_inst_mma",
     "instruction",
     0,
     3,
     {"sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_dmma.sum",
      "sm__inst_executed_pipe_tensor_op_imma.sum"},
     {1.0, 1.0, 1.0},
     "MMA warp instructions: wgmma, DMMA and IMMA; mma.sync fp16/bf16/tf32 (HMMA) instructions "
     "are not in it (their pipe also runs nvcc's HFMA2.MMA moves)"},
    ONE("tensor_inst_wgmma", "instruction", 0, "sm__inst_executed_pipe_tensor_op_gmma.sum",
        "wgmma warp instructions"),
    ONE("tensor_precision_fu_utilization", "percent", 0,
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "tensor (hmma) pipe busy cycles / active cycles"),
    ONE("flop_sp_efficiency", "percent", 0,
        "smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.avg.pct_of_peak_sustained_"
        "elapsed",
        "FP32 rate / peak"),
    ONE("flop_dp_efficiency", "percent", 0,
        "smsp__sass_thread_inst_executed_ops_dadd_dmul_dfma_pred_on.avg.pct_of_peak_sustained_"
        "elapsed",
        "FP64 rate / peak"),
    ONE("ipc", "instruction/cycle", 0, "smsp__inst_executed.avg.per_cycle_active",
        "warp instructions per active cycle, per SM sub-partition"),
    ONE("sm_efficiency", "percent", 0, "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed",
        "cycles with at least one warp active / elapsed"),
};

#define NALIASES ((int)(sizeof aliases / sizeof aliases[0]))

/*
 * What each alias was checked against on the H100, as `roofkit list metrics` shows it: a GPU
 * test of known work (tests/collect/test_gpu_counters.cu, K1-K10; an entry starting with
 * "exact" is asserted there for the tensor precisions K7 runs), Nsight Compute on the same runs
 * (tests/collect/device-check.sh: ncu --replay-mode application --clock-control none
 * --cache-control none, 100 launches, worst launch; docs/perf-notes.md "collect"), or `roofkit
 * profile` of PyTorch programs whose kernels' work is known (a GEMM's 2mnk, a convolution's
 * 2NHWKCRS). An alias not listed has not been checked: the listing says "not yet".
 */
static const struct {
    const char *alias, *holds;
} checks[] = {
    {"gld_throughput", "ncu +-1.7% (a rate; clocks unlocked in both)"},
    {"gld_efficiency", "= ncu"},
    {"achieved_occupancy", "ncu +-0.5%"},
    {"dram_read_bytes",
     "ncu +-0.02% above 1 MiB; copy of 4 GiB: read + write = 2 x size +-1% (K1)"},
    {"dram_write_bytes",
     "ncu +-0.89% above 1 MiB; depends on what the L2 holds dirty when the kernel starts"},
    {"l2_bytes", "ncu +-0.12% above 1 MiB"},
    {"shared_bytes", "= ncu (kernels without shared memory only)"},
    {"flop_count_sp", "exact: FMA loop (K2); = ncu"},
    {"flop_count_dp", "= ncu"},
    {"flop_count_hp", "= ncu, but counts nvcc's HFMA2.MMA moves: not a flop count"},
    {"tensor_pipe_inst",
     "= ncu; not an MMA count: 1.311e6 on a PyTorch softmax kernel with no tensor instruction "
     "(= its HFMA thread instructions / 32, the HFMA2.MMA moves), 2.79e5 on a random-number "
     "kernel; = the hmma pipe's count there"},
    {"tensor_inst_mma",
     "each term = tensor_pipe_inst where it applies (PyTorch): gmma on wgmma GEMMs, dmma on "
     "fp64 DMMA GEMMs, imma on a cutlass_80 int8 mma.sync GEMM"},
    {"tensor_inst_wgmma", "= tensor_pipe_inst on PyTorch's wgmma GEMMs"},
    {"tensor_ops_bf16_wgmma",
     "exact: 2mnk of a cuBLASLt bf16 GEMM (K3, K7) and a PyTorch bf16 wgmma GEMM 4096^3; = ncu"},
    {"tensor_ops_bf16", "exact: 2mnk of a cuBLASLt bf16 GEMM (K3, K7)"},
    {"tensor_ops_fp16_wgmma",
     "exact: 2mnk of a cuBLASLt fp16 GEMM (K7) and a PyTorch fp16 wgmma GEMM 4096^3"},
    {"tensor_ops_fp16", "exact: 2mnk of a cuBLASLt fp16 GEMM (K7)"},
    {"tensor_ops_tf32_wgmma",
     "exact: 2mnk of a PyTorch tf32 wgmma GEMM 2048^3 (= tensor_ops_tf32 there)"},
    {"tensor_ops_tf32",
     "exact: 2mnk of a cuBLASLt tf32 GEMM (K7) and a PyTorch tf32 wgmma GEMM 2048^3; "
     "2NHWKCRS of a cuDNN tf32 implicit-GEMM convolution"},
    {"tensor_ops_fp64",
     "exact: 2mnk of a cuBLASLt fp64 GEMM (K7) and a PyTorch DMMA GEMM 2048^3; executed work, "
     "not useful work: 8192 x 12 x 2048 reads 2.67 x 2mnk (n padded to 32)"},
    {"tensor_ops_int8",
     "exact: 2mnk of a cuBLASLt int8 GEMM (K7) and a PyTorch cutlass_80 int8 mma.sync GEMM "
     "4096^3"},
    {"tensor_ops_int8_mma", "exact: 2mnk of a PyTorch cutlass_80 int8 mma.sync GEMM 4096^3"},
    {"tensor_ops_int8_wgmma",
     "0 on a PyTorch cutlass_80 int8 mma.sync GEMM 4096^3; an int8 wgmma GEMM: not yet"},
    {"tensor_ops_fp8", "exact: 2mnk of a cuBLASLt fp8 (e4m3) GEMM (K7) and a PyTorch fp8 GEMM "
                       "4096^3"},
    {"inst_executed", "FMA loop: FFMA warp instructions + loop control (K2)"},
    {"gpu_time", "ncu +-1.8% (clocks unlocked in both)"},
    {"sm_clock", "ncu +-1.0%"},
};

const char *collect_metric_holds(const struct collect_metric *m)
{
    for (size_t i = 0; m && i < sizeof checks / sizeof *checks; i++)
        if (strcmp(checks[i].alias, m->alias) == 0)
            return checks[i].holds;
    return NULL;
}

int collect_metric_count(void)
{
    return NALIASES;
}

const struct collect_metric *collect_metric_get(int i)
{
    return i >= 0 && i < NALIASES ? &aliases[i] : NULL;
}

const struct collect_metric *collect_metric_find(const char *alias)
{
    for (int i = 0; alias && i < NALIASES; i++)
        if (strcmp(aliases[i].alias, alias) == 0)
            return &aliases[i];
    return NULL;
}

/* A raw CUPTI name looks like unit__counter[.rollup[.submetric]]: letters, digits, '_', '.'. */
static int looks_raw(const char *s)
{
    if (!strstr(s, "__") || !strchr(s, '.'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
            return 0;
    return 1;
}

int collect_plan_raw_find(const struct collect_plan *plan, const char *raw)
{
    for (int i = 0; plan && i < plan->nraw; i++)
        if (strcmp(plan->raw[i], raw) == 0)
            return i;
    return -1;
}

static int raw_index(struct collect_plan *plan, const char *raw)
{
    int i = collect_plan_raw_find(plan, raw);
    if (i >= 0)
        return i;
    char **r = realloc(plan->raw, (size_t)(plan->nraw + 1) * sizeof *r);
    if (!r)
        return -1;
    plan->raw = r;
    if (!(plan->raw[plan->nraw] = strdup(raw)))
        return -1;
    return plan->nraw++;
}

static int has_output(const struct collect_plan *plan, const char *alias, const char *raw)
{
    for (int i = 0; i < plan->nout; i++) {
        const struct collect_output *o = &plan->out[i];
        if (alias ? (o->alias && strcmp(o->alias, alias) == 0)
                  : (!o->alias && raw && strcmp(o->raw, raw) == 0))
            return 1;
    }
    return 0;
}

/* Formula text of a multi-term alias: "a + b + 2*c". */
static char *formula(const struct collect_metric *m)
{
    size_t len = 1;
    for (int i = 0; i < m->nterms; i++)
        len += strlen(m->raw[i]) + 32;
    char *s = malloc(len);
    if (!s)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < m->nterms; i++) {
        const char *sep = i ? " + " : "";
        if (m->coef[i] == 1.0)
            at += (size_t)snprintf(s + at, len - at, "%s%s", sep, m->raw[i]);
        else
            at += (size_t)snprintf(s + at, len - at, "%s%g*%s", sep, m->coef[i], m->raw[i]);
    }
    return s;
}

static int add_alias(struct collect_plan *plan, const struct collect_metric *m)
{
    if (has_output(plan, m->alias, NULL))
        return RK_OK;
    struct collect_output *o = realloc(plan->out, (size_t)(plan->nout + 1) * sizeof *o);
    if (!o)
        return RK_ENOMEM;
    plan->out = o;
    o = &plan->out[plan->nout];
    memset(o, 0, sizeof *o);
    o->alias = strdup(m->alias);
    o->raw = m->nterms == 1 ? strdup(m->raw[0]) : formula(m);
    o->unit = m->unit;
    o->nterms = m->nterms;
    plan->nout++; /* counted now so collect_plan_free releases the strings on failure */
    if (!o->alias || !o->raw)
        return RK_ENOMEM;
    for (int t = 0; t < m->nterms; t++) {
        if ((o->term[t] = raw_index(plan, m->raw[t])) < 0)
            return RK_ENOMEM;
        o->coef[t] = m->coef[t];
    }
    return RK_OK;
}

static int add_raw(struct collect_plan *plan, const char *raw)
{
    if (has_output(plan, NULL, raw))
        return RK_OK;
    struct collect_output *o = realloc(plan->out, (size_t)(plan->nout + 1) * sizeof *o);
    if (!o)
        return RK_ENOMEM;
    plan->out = o;
    o = &plan->out[plan->nout];
    memset(o, 0, sizeof *o);
    o->raw = strdup(raw);
    o->nterms = 1;
    o->coef[0] = 1.0;
    plan->nout++;
    if (!o->raw || (o->term[0] = raw_index(plan, raw)) < 0)
        return RK_ENOMEM;
    return RK_OK;
}

int collect_plan_new(const char *const *names, int n, struct collect_plan **out)
{
    struct collect_plan *plan = calloc(1, sizeof *plan);
    int rc = RK_OK;
    *out = NULL;
    if (!plan)
        return rk_error(RK_ENOMEM, "out of memory building the metric list");
    if (n <= 0) {
        static const char *const dflt[] = {"default"};
        names = dflt;
        n = 1;
    }
    for (int i = 0; i < n && rc == RK_OK; i++) {
        const struct collect_metric *m = collect_metric_find(names[i]);
        if (strcmp(names[i], "default") == 0) {
            for (int a = 0; a < NALIASES && rc == RK_OK; a++)
                if (aliases[a].in_default)
                    rc = add_alias(plan, &aliases[a]);
        } else if (m) {
            rc = add_alias(plan, m);
        } else if (looks_raw(names[i])) {
            rc = add_raw(plan, names[i]);
        } else {
            rc = rk_error(RK_EUSAGE,
                          "unknown metric '%s'; see 'roofkit list metrics' for aliases, or name a "
                          "CUPTI metric such as dram__bytes_read.sum",
                          names[i]);
        }
    }
    if (rc == RK_OK && !(plan->raw_units = calloc((size_t)plan->nraw + 1, sizeof(char *))))
        rc = RK_ENOMEM;
    if (rc != RK_OK) {
        collect_plan_free(plan);
        return rc == RK_ENOMEM ? rk_error(RK_ENOMEM, "out of memory building the metric list") : rc;
    }
    *out = plan;
    return RK_OK;
}

void collect_plan_free(struct collect_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->nout; i++) {
        free(plan->out[i].alias);
        free(plan->out[i].raw);
    }
    for (int i = 0; i < plan->nraw; i++) {
        free(plan->raw[i]);
        if (plan->raw_units)
            free(plan->raw_units[i]);
    }
    for (int i = 0; i < plan->ndropped; i++)
        free(plan->dropped[i]);
    free(plan->out);
    free(plan->raw);
    free(plan->raw_units);
    free(plan->dropped);
    free(plan);
}

void collect_plan_eval(const struct collect_plan *plan, const double *raw,
                       struct collect_value *out)
{
    for (int i = 0; i < plan->nout; i++) {
        const struct collect_output *o = &plan->out[i];
        double v = 0.0;
        int null = raw == NULL;
        for (int t = 0; t < o->nterms && !null; t++) {
            double x = raw[o->term[t]];
            if (isnan(x) || isinf(x))
                null = 1;
            else
                v += o->coef[t] * x;
        }
        out[i].alias = o->alias;
        out[i].raw = o->raw;
        out[i].unit = o->unit ? o->unit : plan->raw_units[o->term[0]];
        out[i].value = null ? 0.0 : v;
        out[i].is_null = null;
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int collect_output_additive(const struct collect_plan *plan, int i)
{
    const struct collect_output *o = &plan->out[i];
    for (int t = 0; t < o->nterms; t++)
        if (!ends_with(plan->raw[o->term[t]], ".sum"))
            return 0;
    return o->nterms > 0;
}

int collect_result_combine(const struct collect_result *r, struct collect_value *out)
{
    const struct collect_plan *plan = r->plan;
    for (int i = 0; plan && i < plan->nout; i++) {
        const struct collect_output *o = &plan->out[i];
        int additive = collect_output_additive(plan, i), null = r->nlaunch == 0;
        double sum = 0.0, wsum = 0.0;
        for (int l = 0; l < r->nlaunch && !null; l++) {
            const struct collect_launch *la = &r->launch[l];
            if (!la->has_counters || !la->values || i >= la->nvalues || la->values[i].is_null) {
                null = 1;
            } else if (additive || r->nlaunch == 1) {
                sum += la->values[i].value;
            } else if (isnan(la->duration_ns) || la->duration_ns <= 0.0) {
                null = 1; /* no weight for this launch's rate */
            } else {
                sum += la->duration_ns * la->values[i].value;
                wsum += la->duration_ns;
            }
        }
        out[i].alias = o->alias;
        out[i].raw = o->raw;
        out[i].unit = o->unit ? o->unit : plan->raw_units ? plan->raw_units[o->term[0]] : NULL;
        out[i].is_null = null;
        out[i].value = null ? 0.0 : (additive || r->nlaunch == 1) ? sum : sum / wsum;
    }
    return r->nlaunch;
}
