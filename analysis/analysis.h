/*
 * analysis.h - the one place where a stored measurement and its device's measured
 * ceilings become what the model takes and what the report draws.
 *
 * The model (model/) is pure arithmetic and the database (db/) only stores; between
 * them, someone must decide which ceiling a measurement is judged against, which byte
 * and flop counts stand for it (the analytic ones of roofkit's own kernels, or the
 * counters), and where it sits on the roofline. This module decides that, once, for
 * `roofkit model`, `roofkit tune` and `roofkit report` alike, so that a row's roof in
 * the report is the roof its roofline prediction used.
 *
 *   analysis_device_load()    a device row, its current ceilings (the newest probe of
 *                             each name), its latency curve and its DRAM curve
 *   analysis_judge_of()       what a measurement is judged as: precision, pipe (CUDA or
 *                             tensor cores), width of its shared-memory loads
 *   analysis_ceiling()        THE ceiling policy: (device, judge, use) -> ceiling
 *   analysis_predict()        model inputs from a measurement (one builder per group of
 *                             inputs), model_predict(), the prediction's details JSON
 *   analysis_place()          the roofline placement: intensity per level, roof, % of
 *                             roof, bound
 *   analysis_kernel_summary() a capture's kernels summed up per name (launches, times,
 *                             share, % of roof and bound of the launches the model judged)
 *   analysis_compare()        two captures kernel by kernel (the ratio of their times with
 *                             its interval, faster / slower / within noise) and their
 *                             devices' ceilings side by side
 *   analysis_reference_pick() the cuBLAS measurement a kernel is compared with (the faster
 *                             call of its own run); its effective bandwidth (A, B, C once)
 *                             and the copy ceiling that holds it
 *
 * Invariants:
 *   - Reads through db/ only; writes nothing. Which ceilings and counts each model
 *     takes is docs/model.md's table "Which numbers each model takes"; the unit tests
 *     (tests/analysis/) check this module against it row by row.
 *   - Functions return enum rk_err; RK_ENODATA with a static reason when a model
 *     cannot be applied to a row (a number is unknown), never a made-up number.
 *   - Ceiling values in SI units (B/s, FLOP/s, OP/s, s, cycles); NaN when unknown.
 */
#ifndef RK_ANALYSIS_H
#define RK_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "model.h"

/* --------------------------------------------------------------- devices */

enum { ANALYSIS_CURVE_MAX = 64 }; /* points of the DRAM curve kept */

/* One device with its current ceilings and latency curve. */
struct analysis_device {
    int64_t id;
    struct db_device dev;
    int64_t probe_capture; /* newest done/interrupted probe capture; 0 when none */
    struct db_ceiling *ceil;
    int nceil;
    struct db_latency_point *pts; /* the latency curve, by footprint */
    int npts;
    /* DRAM bandwidth against bytes in flight (probe lat_dram_loaded) as model_gpu's
     * dram_curve: bytes ascending, utilisation of the curve's best; ncurve 0 when not
     * measured */
    double curve_bytes[ANALYSIS_CURVE_MAX], curve_util[ANALYSIS_CURVE_MAX];
    int ncurve;
};

/*
 * analysis_device_load: device `id` of db with its current ceilings (db_query_ceilings by
 * device), latency curve and DRAM curve. A device without a probe capture loads with
 * probe_capture 0 and no ceilings. RK_OK, RK_ENODATA (not printed) when db has no such
 * device, or the database's error (printed). Release with analysis_device_release.
 */
int analysis_device_load(struct db *db, int64_t id, struct analysis_device *out /* OUT */);
/* analysis_device_find_uuid: the same for the device whose UUID is uuid; RK_ENODATA
 * (not printed) when db has none. */
int analysis_device_find_uuid(struct db *db, const char *uuid,
                              struct analysis_device *out /* OUT */);
void analysis_device_release(struct analysis_device *d);

/* The ceiling called `name` among d's, or NULL. */
const struct db_ceiling *analysis_find_ceiling(const struct analysis_device *d, const char *name);

/*
 * A value in `unit` in SI units: B/s (also from KB/s .. PB/s and KiB/s .. TiB/s, binary
 * prefixes as powers of 1024), FLOP/s and OP/s (K .. P), s (also ms, us, ns), cycles.
 * NaN for a unit roofkit does not know. analysis_ceiling_si: a ceiling's value so, NaN
 * for NULL or a value that is not finite and positive.
 */
double analysis_unit_si(double v, const char *unit);
double analysis_ceiling_si(const struct db_ceiling *c);

/*
 * The DRAM curve of ceiling c (lat_dram_loaded: params "points" = [[bytes in flight,
 * GB/s], ...]) as model_gpu's dram_curve: at most max points, bytes strictly ascending
 * (the best bandwidth of equal byte counts), utilisation = the best bandwidth at or below
 * those bytes over the curve's best. Returns the number of points; 0 when c is NULL or
 * holds fewer than two usable points.
 */
int analysis_dram_curve(const struct db_ceiling *c, double *bytes, double *util, int max);

/* ------------------------------------------------------- the ceiling policy */

/* The pipe a measurement's arithmetic runs on. */
enum analysis_pipe { ANALYSIS_PIPE_CUDA = 0, ANALYSIS_PIPE_TENSOR };

/* What a measurement is judged as. */
struct analysis_judge {
    const char *precision;   /* "fp64", "fp32", "tf32", "fp16", "bf16"; NULL: unknown */
    enum analysis_pipe pipe; /* CUDA cores unless a library call runs on tensor cores */
    int smem_load_bytes;     /* bytes one shared-memory load moves (0: unknown, 16-byte) */
};

/*
 * What measurement m is judged as: its precision; the tensor pipe for cuBLAS calls of
 * fp64 (DMMA), fp16, bf16, tf32 and fp32 with the "tf32" parameter 1, CUDA cores for
 * everything else; the shared-load width its registry kernel uses (kernels_smem_load_bytes).
 */
void analysis_judge_of(const struct db_measurement *m, struct analysis_judge *j /* OUT */);

/* The ceilings a prediction or a roofline placement can use. */
enum analysis_use {
    ANALYSIS_USE_COMPUTE,      /* peak of the judge's precision on its pipe */
    ANALYSIS_USE_DRAM,         /* bw_dram_read, else bw_dram_copy */
    ANALYSIS_USE_L2,           /* bw_l2_read */
    ANALYSIS_USE_L1,           /* bw_l1_read */
    ANALYSIS_USE_SHARED,       /* bw_shared_read_32 for 4-byte loads, else bw_shared_read */
    ANALYSIS_USE_MEM_LAT,      /* lat_chase_dram */
    ANALYSIS_USE_COMP_LAT,     /* lat_fma_fp64 for fp64, else lat_fma_fp32 */
    ANALYSIS_USE_LAUNCH,       /* launch_async */
    ANALYSIS_USE_L2_LAT,       /* lat_chase_l2 */
    ANALYSIS_USE_L2_FAR_LAT,   /* lat_chase_l2_far */
    ANALYSIS_USE_ISSUE_SHARED, /* lat_issue_shared */
    ANALYSIS_USE_STAGE_EXTRA,  /* lat_stage_extra */
    ANALYSIS_USE_COUNT
};

/* The name of a use in the details JSON ("compute", "dram", ... "stage_extra"). */
const char *analysis_use_name(enum analysis_use u);

/*
 * THE ceiling policy: the ceiling of device d that a measurement judged as j is held
 * to for `use` (the comments of enum analysis_use, docs/model.md "Which ceilings"), or
 * NULL when d has none. Compute: fp64 on the tensor pipe takes peak_tensor_fp64, else
 * peak_fp64_fma; fp32 peak_fp32_fma (tensor: peak_tensor_tf32); tf32 peak_tensor_tf32;
 * fp16 peak_fp16x2_fma (tensor: peak_tensor_fp16); bf16 likewise. j may be NULL for a
 * device-wide choice (CUDA cores, 16-byte shared loads, no precision). fp8 and int8 run on
 * the tensor pipe only (peak_tensor_fp8, peak_tensor_int8).
 */
const struct db_ceiling *analysis_ceiling(const struct analysis_device *d,
                                          const struct analysis_judge *j, enum analysis_use use);

/* The model level of a bandwidth use (DRAM, L2, L1, shared) and back. */
enum analysis_use analysis_level_use(enum model_level_id level);

/*
 * The TSM2 model's GPU (docs/model.md "Which numbers") from device d for elements of
 * elem_bytes (4 or 8), through the ceiling policy on CUDA cores; regs_fixed is left 0.
 * used[] (ANALYSIS_USE_COUNT entries, NULL where not used or missing) receives the
 * compute, DRAM, DRAM latency (NULL when the latency curve's largest footprint stood in)
 * and FMA latency ceilings.
 */
void analysis_tsm2_gpu(const struct analysis_device *d, int elem_bytes, struct model_gpu *g,
                       const struct db_ceiling **used /* OUT: ANALYSIS_USE_COUNT */);

/* ------------------------------------------------------------ predictions */

/* Bytes of one element of `precision`: 8 fp64, 4 fp32 and tf32, 2 fp16 and bf16; 0 otherwise. */
int analysis_elem_bytes(const char *precision);

/* Whether model `kind` applies to measurement m at all (tsm2: TSM2/ISM2 kernels only). */
int analysis_applies(enum model_kind kind, const struct db_measurement *m);

/* One model's prediction of one measurement. */
struct analysis_prediction {
    double time_ns;
    const char *bound; /* static */
    char *details;     /* malloc'd JSON object: inputs, terms, the ceilings used */
};

/*
 * One model's prediction for the measurement `row` on device d: builds the model's inputs
 * (docs/model.md "Which numbers each model takes"), calls model_predict() and writes the
 * details. RK_OK (out->details malloc'd: free it), RK_ENODATA with *why (static) when the
 * model cannot be applied to this row, or RK_ENOMEM (printed).
 */
int analysis_predict(const struct analysis_device *d, const struct db_measurement_row *row,
                     enum model_kind kind, struct analysis_prediction *out /* OUT */,
                     const char **why /* OUT */);

/* The value of metric `name` (alias or raw name) of row; NaN when it has none. */
double analysis_metric(const struct db_measurement_row *row, const char *name);

/* ------------------------------------------------------------ counter flops */

/* The pipes and precisions the counters count operations of. */
enum analysis_slot {
    ANALYSIS_SLOT_FP64 = 0,    /* CUDA cores: flop_count_dp */
    ANALYSIS_SLOT_FP32,        /* flop_count_sp */
    ANALYSIS_SLOT_FP16,        /* flop_count_hp (it also counts nvcc's HFMA2.MMA moves) */
    ANALYSIS_SLOT_TENSOR_FP64, /* tensor cores (DMMA): tensor_ops_fp64 */
    ANALYSIS_SLOT_TENSOR_TF32, /* tensor_ops_tf32, else its wgmma + mma.sync paths */
    ANALYSIS_SLOT_TENSOR_FP16, /* tensor_ops_fp16, else its paths */
    ANALYSIS_SLOT_TENSOR_BF16, /* tensor_ops_bf16, else its paths */
    ANALYSIS_SLOT_TENSOR_FP8,  /* tensor_ops_fp8 */
    ANALYSIS_SLOT_TENSOR_INT8, /* tensor_ops_int8, else its paths [OP] */
    ANALYSIS_SLOT_COUNT
};

/* The operations the counters saw, per slot: executed work, padding included. */
struct analysis_flops {
    double v[ANALYSIS_SLOT_COUNT]; /* [FLOP]; NaN where not measured */
    int measured;                  /* slots with a value */
    double total;                  /* sum over the measured slots */
    double time_s;                 /* sum of v / the slot's peak: the arithmetic's time if the
                                      pipes did not overlap (NaN when a peak is missing) */
    int slot; /* the slot that takes the most time at the device's peaks (the most operations
                 where a peak is unknown); -1 when nothing was measured or all are 0 */
};

/* What a slot is judged as: its precision and pipe. */
void analysis_slot_judge(enum analysis_slot s, struct analysis_judge *j /* OUT */);
/* "fp32", "tensor tf32", ...; "?" for an invalid slot. */
const char *analysis_slot_name(enum analysis_slot s);

/* The counters' operations of row per slot, judged against device d's peaks (d may be NULL:
 * the slot is then the one with the most operations). */
void analysis_counter_flops(const struct analysis_device *d, const struct db_measurement_row *row,
                            struct analysis_flops *f /* OUT */);

/* ------------------------------------------------------ the cuBLAS reference */

/*
 * What a kernel's measurement x is compared with (reference.c): cuBLAS measured in the same
 * run. c may be x's reference when it is a cuBLAS call (family "cublas": cublas_sgemm,
 * cublas_dgemm, cublas_gemmex) and x is neither that nor a move, of x's capture and GPU, precision,
 * shape (m > 0) and cache state, verified, with a median time, and not GemmEx with "tf32" 1 (TF32
 * rounds fp32 inputs: another product). 1 or 0.
 */
int analysis_reference_ok(const struct db_measurement *x, const struct db_measurement *c);
/*
 * Of a and b (either may be NULL), the one that judges x: those analysis_reference_ok accepts,
 * the faster of them (smaller median time; the smaller id on a tie); NULL when neither. Fold
 * it over the candidates, best = analysis_reference_pick(x, best, c), for x's reference: the
 * faster of cublasSgemm/Dgemm and cublasGemmEx, what a speedup over cuBLAS divides.
 */
const struct db_measurement *analysis_reference_pick(const struct db_measurement *x,
                                                     const struct db_measurement *a,
                                                     const struct db_measurement *b);
/*
 * The floor under x (reference.c): the kernel move (family "move": the shape's bytes moved,
 * nothing computed) measured beside x, in x's capture and on its GPU, with x's precision,
 * shape and cache state, verified, with a median time; x is not a move itself. f may be x's
 * floor: 1 or 0. analysis_floor_pick folds as analysis_reference_pick does, to the faster.
 * x's floor's time over x's says how close it came to what a plain stream of its bytes takes at
 * this size: the measure where the copy ceiling (measured on 1 GiB) is out of that stream's
 * reach, small shapes whose launch and ramp-up are most of their time.
 */
int analysis_floor_ok(const struct db_measurement *x, const struct db_measurement *f);
/* The type of the two folds, analysis_reference_pick and analysis_floor_pick: of a and b, the
 * one that judges x. */
typedef const struct db_measurement *(*analysis_pick_fn)(const struct db_measurement *x,
                                                         const struct db_measurement *a,
                                                         const struct db_measurement *b);
const struct db_measurement *analysis_floor_pick(const struct db_measurement *x,
                                                 const struct db_measurement *a,
                                                 const struct db_measurement *b);

/*
 * Effective bandwidth (docs/model.md "Effective bandwidth"; 004 Fig. 5 and Fig. 14): A, B and C
 * each counted once, (m k + k n + m n) x element size [B] over the median time [B/s]. NaN for
 * a row without a GEMM shape, a known element size or a time. It is the useful traffic, not
 * the traffic the counters see; the ceiling it is held to is analysis_copy_ceiling's.
 */
double analysis_effective_bytes(const struct db_measurement *m);
double analysis_effective_bandwidth(const struct db_measurement *m);
/* The ceiling effective bandwidth is held to: bw_dram_copy (bytes read + written by a copy,
 * what a kernel that reads A and B and writes C does at best); NULL when d has none. */
const struct db_ceiling *analysis_copy_ceiling(const struct analysis_device *d);

/* One kernel and precision of a set of measurements against their cuBLAS references (or their
 * floors: analysis_floors). */
struct analysis_speedup {
    char kernel[64], precision[8];
    int shapes;                        /* shapes with a reference (each its best configuration) */
    double geomean;                    /* geometric mean of reference time / its time */
    double worst;                      /* the smallest of those ratios */
    int64_t worst_m, worst_n, worst_k; /* where */
    int below_90;                      /* shapes whose ratio is below 0.9 */
};
/*
 * analysis_speedups: each (kernel, precision) of rows[0..n) (one capture's, as `roofkit run`
 * sums its run up) that has a reference (analysis_reference_pick among the same rows) on at
 * least one shape: how much faster than the faster cuBLAS call it is, per shape the best of
 * its verified configurations. cuBLAS rows are references, never summed. Writes at most max
 * groups in the order of their first rows into out, their count into *nout. RK_OK, or
 * RK_ENOMEM (not printed) when there are more than max groups (the first max are filled).
 */
int analysis_speedups(const struct db_measurement_row *rows, int n, struct analysis_speedup *out,
                      int max, int *nout /* OUT */);
/* analysis_floors: the same against each shape's floor (analysis_floor_pick, the kernel move
 * beside it): how close to what its bytes alone take each (kernel, precision) came, per shape
 * its best verified configuration; moves and cuBLAS rows are never summed. */
int analysis_floors(const struct db_measurement_row *rows, int n, struct analysis_speedup *out,
                    int max, int *nout /* OUT */);

/* ------------------------------------------------------------------ energy */

/*
 * analysis_energy_of: device d's energy constants (model/'s struct model_energy, SI units) from
 * its energy ceilings: energy_flop_<op> [pJ/FLOP], energy_byte_<level> [pJ/B], energy_static
 * [W] (probe energy_fit); NaN where d has none. Returns how many it found (0: no energy fit).
 */
int analysis_energy_of(const struct analysis_device *d, struct model_energy *e /* OUT */);
/*
 * analysis_energy_predict: the energy of one launch of `row` on device d [J] over time_s (the
 * time model's prediction, or a measured time): the flops and bytes of its roofline placement
 * (analysis_place), the flops charged to the energy per flop of the pipe and precision it is
 * judged by, bytes of DRAM, L2 and shared memory to theirs (L1 not charged: not fitted). RK_OK,
 * or RK_ENODATA with *why static (no energy ceilings, flops unknown, no energy per flop for its
 * precision and pipe, a level's energy per byte missing).
 */
int analysis_energy_predict(const struct analysis_device *d, const struct db_measurement_row *row,
                            double time_s, double *joules /* OUT */, const char **why /* OUT */);

/* ------------------------------------------------------- roofline placement */

/* Where a measurement sits on its device's roofline. */
struct analysis_point {
    double time_s;       /* median time [s]; NaN if not stored */
    int counters;        /* 1: flops and bytes both from the counters (executed work of the slot
                            that took the most time, the DRAM/L2/L1/shared bytes they saw); 0: both
                            analytic (the cost formula's useful flops and bytes) */
    double flops;        /* the flops of the point, its height and its intensity alike [FLOP] */
    double flops_useful; /* analytic useful flops (2mnk for a GEMM); NaN when the shape is
                            not known (a profiled kernel) */
    struct analysis_flops cf;        /* the counters' operations per slot (measured = 0: none) */
    struct analysis_judge judge;     /* the pipe and precision it is drawn under */
    double bytes[MODEL_LEVEL_COUNT]; /* traffic per level [B] (NaN when unknown) */
    double intensity[MODEL_LEVEL_COUNT]; /* flops / bytes of each level [FLOP/B] */
    double flop_rate;                    /* flops / time [FLOP/s] */
    double dram_rate;                /* counters' DRAM bytes / time [B/s]; NaN without counters */
    const struct db_ceiling *peak_c; /* the compute ceiling of its pipe, or NULL */
    const struct db_ceiling *level_c[MODEL_LEVEL_COUNT]; /* each level's bandwidth ceiling */
    double peak;                          /* the compute ceiling's value [FLOP/s]; NaN: none */
    double roof_level[MODEL_LEVEL_COUNT]; /* min(peak, intensity x bandwidth) of each level
                                             (the hierarchical roofline's points) [FLOP/s] */
    double roof;       /* the DRAM level's: the roof the roofline model judges it by */
    double pct_roof;   /* 100 * flop_rate / roof */
    const char *bound; /* "compute" or "dram" at its DRAM intensity; NULL when unknown */
};

/*
 * The roofline placement of `row` on device d (NULL: no device; the roofs are then NaN).
 * Counters when the row has flop and DRAM counters, else the analytic counts; never mixed.
 * The roof of each level: the compute ceiling of the pipe the flops ran on and the policy's
 * bandwidth of that level (model_roofline_attainable, 003_d5ffc223df97ef85.txt Q5.A).
 */
void analysis_place(const struct analysis_device *d, const struct db_measurement_row *row,
                    struct analysis_point *p /* OUT */);

/* ------------------------------------------------------- kernel summary */

/* One kernel of a capture summed up over its launches, as `nsys stats` does (summary.c). */
struct analysis_kernel_sum {
    char *kernel;      /* the stored name (a profiled kernel's demangled name) */
    long launches;     /* its measurements: one per profiled launch */
    long timed;        /* those with a known time */
    double total_ns;   /* sum of the known times; NaN when none */
    double median_ns;  /* median of the known times; NaN when none */
    double share_pct;  /* 100 x total_ns / the sum over the capture's kernels; NaN: unknown */
    long judged;       /* launches with a stored prediction and a roofline placement */
    double pct_roof;   /* the time-weighted mean of the judged launches' % of roof
                          (analysis_place: 100 x sum(time the roof allows) / sum(time)); NaN */
    const char *bound; /* "compute" or "dram", the bound of most of the judged time; NULL */
    /* Energy (profile --energy): the capture's 'kernel' energy spans of this name, summed over
     * GPUs: energy_j of all its launches [J], per launch, average power over their GPU time
     * [W]; energy_scope "kernel" when read, "too short" when other kernels or NVTX ranges of the
     * capture were read but this kernel's launches covered too few of the counter's steps,
     * "program only" when the capture has the program's reading alone (counters collected, or
     * every kernel too short), NULL without energy readings. */
    double energy_j, energy_per_launch_j, power_w;
    const char *energy_scope;
};

/*
 * analysis_kernel_summary: the measurements of capture `capture_id` grouped by kernel name,
 * with their energy spans (db_query_energy_spans; scope 'kernel', by name),
 * largest total time first (kernels with no known time last), ties by name. A launch counts
 * towards pct_roof and bound once the model has judged it (a prediction of it is stored), with
 * analysis_place() on its GPU (the launch's own, else the capture's). *out is malloc'd (free with
 * analysis_kernel_summary_free), *n may be 0. RK_OK, RK_ENODATA (not printed) when there is no
 * such capture, or the database's error or RK_ENOMEM (printed).
 */
int analysis_kernel_summary(struct db *db, int64_t capture_id,
                            struct analysis_kernel_sum **out /* OUT */, int *n /* OUT */);
void analysis_kernel_summary_free(struct analysis_kernel_sum *s, int n);

/* ----------------------------------------------------- comparing two captures */

/* What analysis_compare() is asked. */
struct analysis_cmp_opts {
    double threshold; /* a slowdown counts as a regression above 1 + threshold (0.05) */
    double conf;      /* the intervals' confidence (0.95) */
    double noise;     /* the run-to-run noise floor (ANALYSIS_CMP_NOISE; 0: none): a change
                         within it is "within noise" (model_ratio_change_floor) */
};
/* The default run-to-run noise floor: two recordings of the same kernels on one H100 moved by
 * up to 1.4 % as a whole run (clocks, temperature) while each run's repetitions agreed far
 * closer; docs/compare.md gives the measurements. */
#define ANALYSIS_CMP_NOISE 0.02

/* One kernel configuration of either capture. */
struct analysis_cmp_row {
    const char *kernel;      /* strings point into the loaded rows (valid until release) */
    const char *precision;   /* NULL: none (a profiled kernel) */
    int64_t m, n, k;         /* the shape; 0 for a profiled kernel */
    const char *params;      /* the parameters' JSON (A's); NULL for a profiled kernel */
    const char *params_b;    /* B's, when they differ: a shape each capture ran in one
                                configuration only, compared across parameters; NULL: same */
    const char *cache_state; /* "cold" or "warm"; NULL for a profiled kernel */
    int profiled;  /* profiled launches grouped by kernel name: they are the repetitions */
    int in;        /* 1: in A only, 2: in B only, 3: in both */
    long n_a, n_b; /* repetitions (launches) on each side */
    double median_a_ns, median_b_ns; /* their medians; NaN on a side that lacks it */
    struct model_ratio r;            /* B / A (in both only; else method NONE) */
    enum model_change change;        /* model_ratio_change_floor(&r, opts.noise) */
    int regression;                  /* slower, and r.ratio > 1 + threshold */
};

/* One ceiling of either side's device. */
struct analysis_cmp_ceiling {
    const char *name, *unit; /* A's unit, else B's */
    const char *unit_b;      /* B's unit (may differ: the ratio is then taken in SI units) */
    double a, b;             /* values; NaN on a side that lacks it */
    double ratio;            /* b / a; NaN when either is missing or the units do not convert */
};

struct analysis_cmp {
    struct db_capture cap[2]; /* A and B */
    struct db_device dev[2];  /* their devices (id 0: none) */
    /* The probe capture whose ceilings each side shows: the capture itself for a probe, else
     * the newest probe of its device stored before it (per ceiling name: the newest that measured
     * it); 0: none. ceil_after: no probe came before it, the device's current ceilings were
     * taken. */
    int64_t probe[2];
    int ceil_after[2];
    struct analysis_cmp_row *rows; /* in key order: kernel, precision, shape, params, cache */
    int nrows;
    struct analysis_cmp_ceiling *ceil;
    int nceil;
    long compared, slower, faster, noise; /* rows in both, and their classes */
    double shift; /* the run-wide shift: the median B/A of the rows in both (NaN: none), which
                     the noise floor is there to absorb; shown so that a reader sees it */
    long only_a, only_b, regressions;
    long params_differ; /* rows compared across parameters (params_b set) */
    long approx;        /* rows compared from min/median/max (no stored repetitions) */
    long unverified;    /* measurements left out: failed verification */
    struct analysis_cmp_opts opts;
    /* what the strings point into */
    struct db_measurement_row *mrows[2];
    int nm[2];
    struct db_ceiling *crows[2];
    int nc[2];
};

/*
 * analysis_compare: capture b of db_b against capture a of db_a (the same connection, or two
 * database files), as `roofkit diff A B` and the report's comparison with a baseline show it
 * (compare.c, docs/compare.md):
 *   - run and tune captures: each (kernel, precision, m, n, k, params, cache state) matched,
 *     the repetitions of that configuration (every repetition's time where stored, else the
 *     row's min/median/max) compared with model_ratio_interval (or _summary) at opts->conf;
 *     profile captures: launches grouped by kernel name; measurements that failed
 *     verification are left out; a configuration stored twice in a capture pools its times;
 *     a shape each capture ran in one configuration only is compared even when the parameters
 *     differ (params_b);
 *   - either kind's devices' ceilings side by side, by name, with their ratio; two probe
 *     captures: their own ceilings and no kernels.
 * Both captures must be of kind run, tune or profile, or both probe. RK_OK (*out filled;
 * release with analysis_compare_release), RK_ENODATA (not printed) when a capture is missing,
 * RK_EUSAGE (not printed) for kinds that cannot be compared, or the database's error or
 * RK_ENOMEM (printed).
 */
int analysis_compare(struct db *db_a, int64_t a, struct db *db_b, int64_t b,
                     const struct analysis_cmp_opts *opts, struct analysis_cmp *out /* OUT */);
void analysis_compare_release(struct analysis_cmp *c);
/* A row's change in words: "only in A", "only in B", "slower: regression", or
 * model_change_name's "faster", "slower", "within noise". */
const char *analysis_cmp_change(const struct analysis_cmp_row *r);
/* A row's shape as "MxNxK" into buf ("-" for a profiled kernel); returns buf. */
const char *analysis_cmp_shape(const struct analysis_cmp_row *r, char *buf, size_t len);

#endif /* RK_ANALYSIS_H */
