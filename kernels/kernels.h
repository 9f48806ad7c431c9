/*
 * kernels.h - roofkit's kernel suite: the seeds' GEMM kernels, TSM2 and ISM2, a
 * register-tiled GEMM and the cuBLAS references; the registry that describes them;
 * the suites; and the harness that runs, verifies and times one kernel on one
 * shape. This header is the module's whole public interface.
 *
 * What the module promises:
 *   - Every result it returns was checked against a float64 cuBLAS product of the
 *     same random inputs (never zeros): the output is poisoned with NaN before the
 *     first launch, and the relative error ||out - ref|| / ||ref|| is returned with
 *     the timing. NaN or Inf anywhere in the output fails.
 *   - Timing: warm-up launches, then CUDA events around each launch, median of
 *     `reps` repetitions with min and max; the L2 is flushed before each timed
 *     repetition unless `warm` is set.
 *   - It never speaks SQL and never prints data; cli/run.c stores what it returns.
 *   - Flops and bytes are not computed here: the registry names the model/ cost
 *     family (model_cost()) that describes each kernel.
 *
 * Life cycle of a session (one per device):
 *
 *     kernels_session_open() -> kernels_session_prepare(prec, shape)
 *        -> kernels_session_measure(kernel, params) ...   (same inputs, same reference)
 *        -> kernels_session_prepare(next shape) ...
 *     kernels_session_close()
 *
 * Errors are enum rk_err values (common.h); a message has been printed with
 * rk_error() when a function returns anything but RK_OK.
 */
#ifndef RK_KERNELS_H
#define RK_KERNELS_H

#include <stddef.h>

#include "common.h" /* struct rk_gpu */
#include "model.h"  /* enum model_kernel_family, struct model_cost */

#ifdef __cplusplus
extern "C" {
#endif

enum kernels_precision { KERNELS_FP32 = 0, KERNELS_FP64 = 1, KERNELS_NPREC = 2 };
#define KERNELS_PREC_BIT(p) (1u << (p))

/* "fp32" / "fp64"; kernels_precision_parse returns -1 for anything else. */
const char *kernels_precision_name(int prec);
int kernels_precision_parse(const char *s);

enum kernels_layout { KERNELS_ROW_MAJOR = 0, KERNELS_COL_MAJOR = 1 };
const char *kernels_layout_name(int layout); /* "row-major" / "column-major" */

/* C (m x n) = A (m x k) * B (k x n), in the kernel's layout. */
struct kernels_shape {
    long m, n, k;
};

#define KERNELS_MAX_PARAMS 8

/* One tunable parameter. `def` == 0 with KERNELS_PARAM_AUTO means "chosen at run time". */
struct kernels_param {
    const char *name; /* as on the command line: t1, t2, block_size, ... */
    long def;         /* default value */
    long min, max;    /* accepted range (further constraints: kernels_check) */
    int flags;        /* KERNELS_PARAM_* */
    const char *help; /* one line */
};
#define KERNELS_PARAM_AUTO 1 /* 0 selects the run-time choice described in help */
#define KERNELS_PARAM_POW2 2 /* only powers of two (compile-time instantiations) */

/*
 * A registry entry. The registry is a static table: pointers stay valid for the
 * program's life.
 */
struct kernels_kernel {
    const char *name;   /* tsm2_v3, stmvb, cublas_sgemm, ... (selected by name, prefix, glob) */
    const char *family; /* naive, stso, ..., tsm2, ism2, regtile, cublas */
    enum model_kernel_family cost_family; /* the model/ cost formula (kernels_cost) */
    int layout;                           /* enum kernels_layout */
    unsigned precisions;                  /* KERNELS_PREC_BIT(KERNELS_FP32) | ... */
    int n_params;
    struct kernels_param params[KERNELS_MAX_PARAMS];
    const char *seed;        /* where it comes from, e.g. "004 §3.5 Alg. 4" */
    const char *description; /* one line */
    const void *impl;        /* private to kernels/ */
};

int kernels_count(void);
const struct kernels_kernel *kernels_get(int i);             /* NULL when out of range */
const struct kernels_kernel *kernels_find(const char *name); /* exact name, or NULL */
/* 1 for the entry point tsm2, whose measurements are costed by the variant they ran (their
 * params' "variant"), not by the family it lists; else 0. */
int kernels_costed_as_variant(const struct kernels_kernel *k);

/*
 * kernels_match(pattern, name): pattern is a glob with * and ? ("tsm2_*" matches tsm2_v0..v3,
 * "*_v3"), a kernel's exact name (that kernel alone: "tsm2" is the entry point) or a prefix of
 * names ("cublas", "ism2", "tsm2_v"). Returns 1 or 0.
 */
int kernels_match(const char *pattern, const char *name);

/* Index of parameter `name` in k->params, or -1. */
int kernels_param_index(const struct kernels_kernel *k, const char *name);

/*
 * Suites: named lists of entries, each a set of kernel patterns run on a set of shapes.
 * An entry lists its shapes (n_shapes > 0: shapes[0..n_shapes)), or describes them as a
 * grid (n_shapes == 0): the cross product of value lists for m, n and k, where n or k
 * without values takes m's value (a square sweep: m = n = k; TSM2's m = k). A grid has
 * no limit but its lists'. Read either kind with kernels_suite_entry_size() and
 * kernels_suite_entry_shape(); kernels_suite_entry_describe() writes the shapes as a
 * person reads them.
 */
#define KERNELS_SUITE_MAX_ENTRIES 6
#define KERNELS_SUITE_MAX_SHAPES  24
#define KERNELS_SUITE_MAX_KERNELS 16
#define KERNELS_GRID_MAX_VALUES   32
struct kernels_grid { /* each list's count, then its values (n_n or n_k 0: equal to m) */
    int n_m;
    long m[KERNELS_GRID_MAX_VALUES];
    int n_n;
    long n[KERNELS_GRID_MAX_VALUES];
    int n_k;
    long k[KERNELS_GRID_MAX_VALUES];
};
struct kernels_suite_entry {
    const char *kernels[KERNELS_SUITE_MAX_KERNELS]; /* patterns, NULL-terminated */
    int n_shapes;                                   /* listed shapes; 0: the grid's */
    struct kernels_shape shapes[KERNELS_SUITE_MAX_SHAPES];
    struct kernels_grid grid;
};
struct kernels_suite {
    const char *name;
    const char *description;
    int n_entries;
    struct kernels_suite_entry entries[KERNELS_SUITE_MAX_ENTRIES];
};
/* Number of shapes of entry en: n_shapes, or the grid's product (m slowest, then k, n). */
int kernels_suite_entry_size(const struct kernels_suite_entry *en);
/* Shape i (0 <= i < kernels_suite_entry_size(en)) of entry en. */
void kernels_suite_entry_shape(const struct kernels_suite_entry *en, int i,
                               struct kernels_shape *out /* OUT */);
/* The shapes of en in words, into buf (always terminated): a listed entry as
 * "256x256x256, 512x512x512" (m x n x k), a grid as "m in {10240, 20480}, n in 1..32,
 * k = m" (a run of consecutive integers written as a range). Returns buf. */
const char *kernels_suite_entry_describe(const struct kernels_suite_entry *en, char *buf,
                                         size_t len);
int kernels_suites_count(void);
const struct kernels_suite *kernels_suite_get(int i);
const struct kernels_suite *kernels_suite_find(const char *name); /* or NULL */

/*
 * Checks parameter values (`params[i]` for k->params[i]; 0 for an AUTO parameter
 * asks for the run-time choice) against the kernel's constraints for a precision.
 * Returns RK_OK, or RK_EUSAGE with the reason written to `why` (no message
 * printed): such a configuration is skipped, not failed.
 */
int kernels_check(const struct kernels_kernel *k, int prec, const long *params, char *why,
                  size_t why_len);

/*
 * Bytes one thread reads from shared memory with one load instruction, for the ceiling that
 * fits it (bw_shared_read_32 for 4-byte loads, bw_shared_read for wider ones; equal on the
 * H100) and for the issue term's count of shared instructions: the element size for the
 * seeds' kernels, which index shared arrays one element at a time (stso, stmo, stmvb, smem_001,
 * tiled_003, rect_*: LDS in fp32, LDS.64 in fp64), 16 for the ones that load vectors (regtile,
 * blocktile1d_001, the TSM2/ISM2 kernels: mostly LDS.128), 0 for a kernel without shared memory
 * or unknown (cuBLAS). tests/kernels/sass-check.sh checks the seeds'.
 */
int kernels_smem_load_bytes(const struct kernels_kernel *k, int prec);

/*
 * The kernel's parameters (resolved values) as the model's struct model_params: what
 * kernels_cost() passes to model_cost(). Fields the family does not read stay 0.
 */
void kernels_model_params(const struct kernels_kernel *k, int prec, const long *params,
                          struct model_params *mp /* OUT */);

/*
 * Depth of the cp.async ring through which TSM2 V3 and ISM2 opt. 1 stream A when
 * apipe = 1 (kernels/tsm2.cu): a thread's copies of this many groups of t3 x rpt
 * elements are in flight while it waits for the oldest. The model's Little's law takes its
 * bytes in flight from it (kernels_bytes_in_flight).
 */
#define KERNELS_TSM2_RING_STAGES 4

/*
 * TSM2 V0 and V1 (kernels/tsm2_v01.cu) unroll their loop over k this many times, and the loads
 * of A of one unrolled step are issued together before the FMAs that use them, so a thread
 * has this many elements of A in flight (what the model's Little's law takes). V1 keeps
 * nc = kernels_tsm2_cols(n) columns of C per thread: 4 steps up to 4 columns, 2 at 8, 1 at
 * 16. These are the unrolls nvcc 13.0 chose by itself for sm_90 (read off cuobjdump),
 * written into the kernels so that they are the source's, not the compiler's;
 * tests/kernels/sass-check.sh checks the loads per step in the machine code.
 */
#define KERNELS_TSM2_V0_UNROLL     4
#define KERNELS_TSM2_V1_UNROLL(nc) ((nc) <= 4 ? 4 : (nc) <= 8 ? 2 : 1)

/* The smallest power of two >= n, at most 16: the columns of C one V1 thread keeps (a
 * compile-time count; wider n takes several passes), V2/V3's default t2 and the largest t2
 * and t3 `roofkit tune` sweeps. */
static inline long kernels_tsm2_cols(long n)
{
    long nc = 1;
    while (nc < n && nc < 16)
        nc *= 2;
    return nc;
}

/*
 * Column tiles t2 of TSM2 V3 (apipe = 1) and of the entry point beyond the powers of two
 * 1..16, fp32 only, each instantiated with one t3 and rpt (kernels/internal.h says which):
 * n = 3, 5, 6, 7 without idle columns, and n = 17..24 in one pass over A where t2 = 16 takes
 * two (docs/perf-log.md 2026-11-26: 10-14, 28, 32 and every fp64 one measured slower than the
 * power of two or the two passes they would replace).
 */
#define KERNELS_TSM2_XCOLS 3, 5, 6, 7, 20, 24

/* Column tiles beyond 16 of ISM2 opt. 1 with B whole in shared memory (apipe = 2), each with
 * t3 4, 8 or 16: a row's n = 17-32 outputs in one pass. */
#define KERNELS_ISM2_WIDE_COLS 24, 32

/*
 * Bytes one thread of a TSM2/ISM2 kernel keeps in flight (docs/model.md "occupancy"), for the
 * model's Little's law: V2, V3 and ISM2 fetch t3 elements of A before they use them (004 §3.5,
 * the t3 of §3.6.2's Concurrent_mem), V0 and V1 the elements of one unrolled step of their loop
 * over k (KERNELS_TSM2_V0_UNROLL, KERNELS_TSM2_V1_UNROLL). Through the cp.async ring (a_staged)
 * a thread has KERNELS_TSM2_RING_STAGES groups of t3 x rpt elements in flight while it waits
 * for the oldest, fewer when its block streams fewer groups (its k chunk / t3 per row tile,
 * times the row tiles it takes). grid is the launch's; params its resolved values, NULL when
 * one is unknown. NaN for every other kernel (not modelled: no derating) and where a number
 * it needs is unknown.
 */
double kernels_bytes_in_flight(const struct kernels_kernel *k, int prec,
                               const struct kernels_shape *shape, const long *params,
                               const int grid[3]);

/*
 * Analytic flops and bytes of one launch, from model_cost() for the kernel's
 * cost_family, with the kernel's parameters (resolved values, as in
 * kernels_result.params) translated to struct model_params. RK_OK or RK_EUSAGE
 * (nothing printed) when the model refuses the shape or parameters.
 */
int kernels_cost(const struct kernels_kernel *k, int prec, const struct kernels_shape *shape,
                 const long *params, struct model_cost *out /* OUT */);

/* Writes {"name":value,...} for the kernel's parameters into buf. */
void kernels_params_json(const struct kernels_kernel *k, const long *params, char *buf, size_t len);

/*
 * The entry point `tsm2` (kernels/tsm2_auto.c; docs/model.md "the tsm2 entry point"): for any
 * m, n, k and precision, the variant of TSM2/ISM2 and its parameters, chosen with the TSM2
 * model (model_tsm2_plan_evaluate) from a short list of candidates, each resolved as its own
 * registry entry would and given its occupancy by the CUDA runtime (so this needs the device
 * `dev` describes to be the current one; it launches nothing).
 *   gpu   the measured ceilings of the precision (analysis_tsm2_gpu), or NULL: the device's
 *         datasheet figures (kernels_tsm2_nominal_gpu).
 * RK_OK, or RK_EUSAGE when no variant can run the shape (nothing printed).
 */
#define KERNELS_TSM2_ISM2_K 64 /* k at or below which ISM2's variants are the candidates */
struct kernels_tsm2_choice {
    const struct kernels_kernel *kernel; /* the variant: tsm2_v2, tsm2_v3, ism2_opt1, ism2_opt2 */
    long params[KERNELS_MAX_PARAMS];     /* its resolved parameters, the variant's order */
    long entry[KERNELS_MAX_PARAMS];      /* the same as the entry point's parameters */
    double predicted_s;                  /* the model's time of the choice */
    enum model_bound bound;              /* and its bound */
    int candidates;                      /* configurations priced */
    int nominal;                         /* 1: datasheet figures, not measured ceilings */
    char why[160];                       /* the reason, one line (no quotes) */
};
int kernels_tsm2_choose(const struct rk_gpu *dev, const struct model_gpu *gpu, int prec,
                        const struct kernels_shape *shape,
                        struct kernels_tsm2_choice *out /* OUT */);

/* The model's time of the entry point's configuration params (variant 1-4 and its parameters,
 * as stored) on shape, as kernels_tsm2_choose prices its candidates: RK_OK with *time_s, or
 * RK_EUSAGE (*time_s NaN) when it cannot run. */
int kernels_tsm2_predict(const struct rk_gpu *dev, const struct model_gpu *gpu, int prec,
                         const struct kernels_shape *shape, const long *params,
                         double *time_s /* OUT */);

/* Datasheet figures of dev for the TSM2 model, where no probe measured its ceilings: FMA
 * lanes x clock, the memory bus's DDR rate, an H100's loaded DRAM latency. */
void kernels_tsm2_nominal_gpu(const struct rk_gpu *dev, int prec, struct model_gpu *out /* OUT */);

struct kernels_session;

/*
 * The measured ceilings of the session's device for one precision, as the TSM2 model takes
 * them (analysis_tsm2_gpu): what the entry point tsm2 chooses with. NULL forgets them (the
 * datasheet figures are used). Copied; a measured DRAM curve is not kept.
 */
void kernels_session_set_gpu(struct kernels_session *s, int prec, const struct model_gpu *gpu);

/*
 * Opens device `ordinal`: creates a stream, the cuBLAS handle and the L2 flush
 * buffer. `seed` seeds the random inputs. Returns RK_OK, RK_ENOGPU (no device, or
 * no device with that ordinal) or RK_ECUDA.
 */
int kernels_session_open(int ordinal, unsigned long long seed,
                         struct kernels_session **out /* OUT */);
void kernels_session_close(struct kernels_session *s); /* NULL is fine */
/* What the device is, read by kernels_session_open (common's rk_gpu_read). */
const struct rk_gpu *kernels_session_device(const struct kernels_session *s);

/*
 * Bytes of GPU memory that preparing this precision and shape needs, workspace
 * of any kernel included (an upper bound).
 */
size_t kernels_bytes_needed(int prec, const struct kernels_shape *shape);

/*
 * Frees the previous inputs, then allocates A, B, C and the float64 copies for
 * the reference, fills A and B with fresh uniform random numbers in [-1, 1), and
 * forgets the previous references. Refuses with RK_ENOMEM, before allocating
 * anything, when kernels_bytes_needed() exceeds the free memory cudaMemGetInfo
 * reports. RK_EUSAGE for a shape with a dimension < 1.
 */
int kernels_session_prepare(struct kernels_session *s, int prec, const struct kernels_shape *shape);

struct kernels_options {
    int reps;         /* timed repetitions, >= 1 (the CLI asks for >= 3, default 10) */
    int warm;         /* 1: do not flush the L2 between repetitions */
    int warmup;       /* untimed launches after the verified one, at least (default 2 when 0);
                         more until they have run 20 ms (session.cu WARMUP_S) */
    double *times_ns; /* NULL, or room for `reps` values: each repetition's time [ns] in the
                         order timed (what `roofkit diff` compares; kernels_result.times_ns) */
};

struct kernels_result {
    long params[KERNELS_MAX_PARAMS]; /* resolved values (AUTO replaced by the choice) */
    char params_json[384];           /* the same as {"t1":128,...}; the entry point tsm2 adds
                                        "kernel" and "why" (strings) */
    int verified;                    /* 1: every check passed */
    double rel_error;                /* largest ||out - ref|| / ||ref|| of the checks */
    double tolerance;                /* what verified was judged against */
    long nonfinite;                  /* NaN/Inf elements found in the output */
    int reps;
    int warm; /* cache state: 1 warm, 0 cold (flushed) */
    double time_min_ns, time_median_ns, time_max_ns;
    const double *times_ns;         /* options' times_ns, filled (reps values), or NULL */
    unsigned grid[3], block[3];     /* 0 when unknown (cuBLAS) */
    int registers;                  /* per thread; 0 when unknown */
    long smem_static, smem_dynamic; /* shared memory per block; 0 when unknown */
    int launches;                   /* kernel launches per timed call (split-k: 1) */
};

/*
 * Runs kernel `k` with `params` (as for kernels_check) on the prepared inputs: poisons
 * C, launches once and verifies, warms up, times `opts->reps` repetitions and
 * verifies the last output again. A failed verification is not an error: it
 * returns RK_OK with result->verified == 0. RK_EUSAGE (with message) when the
 * configuration is not valid for the prepared precision/shape; RK_ENOMEM when its
 * workspace does not fit; RK_ECUDA when a CUDA or cuBLAS call fails.
 */
int kernels_session_measure(struct kernels_session *s, const struct kernels_kernel *k,
                            const long *params, const struct kernels_options *opts,
                            struct kernels_result *result /* OUT */);

/*
 * Brackets the launch call(s) of an untimed extra launch, for a collector of hardware counters
 * (cli/run.c): begin(arg) runs right before the kernel's launch call(s), end(arg) after the
 * device has finished them, so that only the launches a timed repetition makes fall between
 * them (not the L2 flush, not prepare's padding copies). A non-RK_OK return is passed on.
 */
struct kernels_hook {
    void *arg;
    int (*begin)(void *arg);
    int (*end)(void *arg);
};

/*
 * kernels_session_launch: after kernels_session_measure() of the same kernel on the prepared
 * inputs, launches it once more with `params` (the resolved kernels_result.params), untimed and
 * unverified: flushes the L2 unless `warm`, runs the untimed preparation, then hook->begin, the
 * launch, cudaDeviceSynchronize, hook->end (called whenever begin succeeded). hook may be NULL.
 * Returns RK_OK, the hook's error, RK_EUSAGE (message printed) or RK_ECUDA.
 */
int kernels_session_launch(struct kernels_session *s, const struct kernels_kernel *k,
                           const long *params, int warm, const struct kernels_hook *hook);

/*
 * kernels_session_repeat: as kernels_session_launch, warm (no L2 flush), with n >= 1 launches
 * enqueued back to back between hook->begin and the synchronisation before hook->end: what an
 * energy reading of the kernel runs (cli/run_energy.c). The output is not verified (the launches
 * overwrite or accumulate into C; kernels_session_measure verified the kernel before).
 */
int kernels_session_repeat(struct kernels_session *s, const struct kernels_kernel *k,
                           const long *params, long n, const struct kernels_hook *hook);

/*
 * kernels_session_check: whether kernel k with params (as for kernels_check; NULL: the
 * defaults) can run on the prepared precision and shape of this device, without running
 * it and without printing: RK_OK with the resolved values in resolved (KERNELS_MAX_PARAMS
 * longs, may be NULL; AUTO zeros replaced by the kernel's choice), or RK_EUSAGE with the
 * reason in why (a configuration to skip).
 */
int kernels_session_check(struct kernels_session *s, const struct kernels_kernel *k,
                          const long *params, long *resolved /* OUT */, char *why, size_t why_len);

/*
 * The tune space (kernels/tune.c; `roofkit tune`): the configurations of one TSM2 or
 * ISM2 kernel on one shape that the sweep runs, as axes over the kernel's parameters.
 *   TSM2 V2/V3  t1 in {64, 128, 256, 512} x t2 in the powers of two up to the one that
 *               covers n (<= 16) x t3 in {1, 2, 4, 8, 16}
 *   ISM2        t3 in the powers of two up to the one that covers k (<= 16) x tcf in
 *               {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}
 * Every other parameter keeps its registry default. A configuration may still be
 * invalid for a precision or the device (kernels_check, or the RK_EUSAGE of
 * kernels_session_measure): the sweep skips and counts it.
 */
#define KERNELS_TUNE_MAX_AXES   3
#define KERNELS_TUNE_MAX_VALUES 32
struct kernels_tune_axis {
    const char *name; /* the parameter: "t1", "t2", "t3", "tcf" */
    int index;        /* its index in kernel->params */
    int n;
    long values[KERNELS_TUNE_MAX_VALUES]; /* ascending */
};
struct kernels_tune_space {
    const struct kernels_kernel *kernel;
    int n_axes;
    struct kernels_tune_axis axes[KERNELS_TUNE_MAX_AXES];
};

/* 1 when k can be tuned as TSM2 (ism2 == 0: tsm2_v2, tsm2_v3) or ISM2 (ism2_opt1/2). */
int kernels_tune_kernel_ok(const struct kernels_kernel *k, int ism2);

/*
 * Fills *out for kernel k on shape. override (may be NULL) replaces the run-time axis:
 * t1 for TSM2, tcf for ISM2 (n_override values, distinct, within the parameter's
 * range). RK_OK, or RK_EUSAGE with the reason in why (nothing printed).
 */
int kernels_tune_space_init(const struct kernels_kernel *k, const struct kernels_shape *shape,
                            const long *override, int n_override,
                            struct kernels_tune_space *out /* OUT */, char *why, size_t why_len);
/* Number of configurations: the product of the axes' lengths. */
long kernels_tune_space_size(const struct kernels_tune_space *s);
/* Configuration i (0 <= i < size; the last axis varies fastest) as a full parameter
 * vector (KERNELS_MAX_PARAMS longs: registry defaults, swept values in place). */
void kernels_tune_space_params(const struct kernels_tune_space *s, long i, long *params /* OUT */);
/* 1 when parameter vectors a and b agree on every axis of s. */
int kernels_tune_same(const struct kernels_tune_space *s, const long *a, const long *b);

/*
 * The sweep against which `roofkit tune tsm2 --kernel tsm2` judges the entry point's choice
 * (kernels/tune.c): up to max parameter vectors of the entry point tsm2 (variant 1-4 and its
 * parameters; 0 where the variant chooses), bounded to the plausible ones:
 *   k > KERNELS_TSM2_ISM2_K  tsm2_v3 ring: t1 128, 256 x (t2 the power of two covering n
 *                            (<= 16) x t3 8, 16 x rpt 1, 2, 4 (fp64: 1, 2); the extra column
 *                            tile covering n, KERNELS_TSM2_XCOLS); tsm2_v3 registers and
 *                            tsm2_v2 at t1 128 x t3 8, 16; n > 16: column blocks (cblocks)
 *                            at t1 128, 256 x rpt 2, 4 (fp64: 2)
 *   k <= KERNELS_TSM2_ISM2_K ism2_opt1 B whole: t3 4, 8, 16 (<= k rounded up) x tcf chosen,
 *                            1, 2, 4 (and t2 24 or 32 at n = 17-32); ism2_opt1 ring,
 *                            ism2_opt2; n <= 32: tsm2_v3 streaming A at t1 128 (apipe 3;
 *                            apipe 4 rpt 2, 4) and t1 256 (apipe 4 rpt 2, the row walk the
 *                            entry point picks); tsm2_v3 ring with defaults
 * Returns the number written. Pure: no CUDA call.
 */
int kernels_tsm2_sweep(int prec, const struct kernels_shape *shape,
                       long (*out)[KERNELS_MAX_PARAMS] /* OUT */, int max);

#ifdef __cplusplus
}
#endif
#endif /* RK_KERNELS_H */
