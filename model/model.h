/*
 * model.h - roofkit's analytic model: the whole public interface of model/.
 *
 * What it answers: "what should this kernel have done?" From a kernel's shape and
 * parameters it counts flops and bytes at each memory level (the seeds' cost
 * formulas), bounds its time with a roofline or a hierarchical roofline, evaluates
 * the TSM2 performance model of 004 §3.6 with its parameter search (Alg. 5), and
 * compares predictions with measurements (error statistics).
 *
 * Invariants:
 *   - Pure C11 + libm: no CUDA, no SQLite, no I/O, no global state. Every function
 *     is reentrant; only the percentile/median helpers allocate (a sorted copy,
 *     freed before they return).
 *   - Functions that can fail return an enum rk_err (RK_OK, RK_EUSAGE for invalid
 *     input, RK_ENOMEM) and print nothing; the model_check_*() helpers give the
 *     caller a one-line lowercase reason to print.
 *   - Each formula cites its seed by file name and section (e.g.
 *     "004_dab40fe45003313a.txt §3.6.2"). Where roofkit adds something (L2-aware
 *     bytes, latency floor, unit-consistent utilisation) it is marked "extension"
 *     and sits beside the seed's version, never replacing it.
 *
 * Units: FLOP (a fused multiply-add counts 2), bytes, seconds, FLOP/s, B/s, cycles.
 * Shapes follow the BLAS convention C (m x n) = A (m x k) * B (k x n); for TSM2 and
 * ISM2 (004) A is the large m x k matrix and B the tall-and-skinny k x n one.
 */
#ifndef RK_MODEL_H
#define RK_MODEL_H

#include <stddef.h>

#include "common.h" /* enum rk_err: the return codes */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------
 * Bounds and roofline
 * ------------------------------------------------------------------------------ */

/* What limits a predicted time. Stored as text in the database's prediction.bound. */
enum model_bound {
    MODEL_BOUND_COMPUTE = 0,
    MODEL_BOUND_DRAM,
    MODEL_BOUND_L2,
    MODEL_BOUND_L1,
    MODEL_BOUND_SHARED,
    MODEL_BOUND_LATENCY,
    MODEL_BOUND_COUNT
};

/* "compute", "dram", "l2", "l1", "shared", "latency"; "?" for an invalid value. */
const char *model_bound_name(enum model_bound b);
/* Inverse of model_bound_name(). Returns RK_OK or RK_EUSAGE for an unknown name. */
int model_bound_from_name(const char *name, enum model_bound *out /* OUT */);

/* Memory levels of the hierarchical roofline. */
enum model_level_id {
    MODEL_LEVEL_DRAM = 0,
    MODEL_LEVEL_L2,
    MODEL_LEVEL_L1,
    MODEL_LEVEL_SHARED,
    MODEL_LEVEL_COUNT
};

/* "dram", "l2", "l1", "shared"; "?" for an invalid value. */
const char *model_level_name(enum model_level_id id);
/* The bound a level stands for (MODEL_LEVEL_L2 -> MODEL_BOUND_L2, ...). */
enum model_bound model_level_bound(enum model_level_id id);

/* One level's traffic and ceiling: bytes moved at that level, its bandwidth in B/s. */
struct model_level {
    enum model_level_id id;
    double bytes;
    double bandwidth;
};

/*
 * Roofline (003_d5ffc223df97ef85.txt Q5.A; docs/model.md "Roofline"):
 *   attainable = min(peak_flops, intensity * bandwidth)  [FLOP/s]
 *   ridge      = peak_flops / bandwidth                    [FLOP/B]
 * intensity in FLOP/B. Both return NAN when an argument is not finite and
 * positive (intensity may be 0 for the attainable rate).
 */
double model_roofline_attainable(double peak_flops, double bandwidth, double intensity);
double model_ridge_point(double peak_flops, double bandwidth);

/* A predicted time and what bounds it. */
struct model_time {
    double time_s;                          /* predicted time: the largest term below */
    enum model_bound bound;                 /* which term it is */
    double time_compute_s;                  /* flops / peak_flops */
    double time_memory_s;                   /* largest level term (0 if no level) */
    double time_level_s[MODEL_LEVEL_COUNT]; /* bytes_i / bandwidth_i; 0 for absent levels */
    double intensity;        /* flops / bytes of the bounding level, or of DRAM when compute-bound
                                and DRAM is given; 0 if no level [FLOP/B] */
    double attainable_flops; /* flops / time_s [FLOP/s] */
};

/*
 * Classic roofline time: max(flops / peak_flops, bytes / bandwidth); the memory
 * term is reported as MODEL_BOUND_DRAM. Ties go to compute (at the ridge point the
 * roof is the peak). flops >= 0, bytes >= 0, peak_flops and bandwidth > 0, all
 * finite, else RK_EUSAGE.
 */
int model_roofline_time(double flops, double peak_flops, double bytes, double bandwidth,
                        struct model_time *out /* OUT */);

/*
 * Hierarchical roofline: one term per memory level, each with its own traffic and
 * bandwidth; time = max(flops / peak, max_i bytes_i / bw_i, latency_s).
 * latency_s (extension) is a floor such as the launch cost or a dependent-latency
 * chain; pass 0 for none; it wins only when strictly larger than every other term.
 * Ties among the rest go to compute, then to the first level in array order.
 * nlevels may be 0 (pure compute bound). A level id may appear once. Every value
 * must be finite, bytes >= 0, bandwidth > 0, else RK_EUSAGE.
 */
int model_hierarchical_time(double flops, double peak_flops, const struct model_level *levels,
                            int nlevels, double latency_s, struct model_time *out /* OUT */);

/* ------------------------------------------------------------------------------
 * The seeds' own closed forms (used by the tests to check the general formulas)
 * ------------------------------------------------------------------------------ */

/* 000_51b464feae8766fa.txt §6: q = n / (2n/(pb) + 1) [multiply-adds per element
 * moved to or from global memory] for STMVB; b = BLOCK_SIZE, p = PARALLEL. Its limit
 * for large n is pb/2. NAN unless n, b, p > 0. */
double model_q_stmvb(double n, double b, double p);
/* 003_d5ffc223df97ef85.txt Q5.B: q = (TM*TN*N) / (N*(TM+TN) + TM*TN) [multiply-adds
 * per element] for one TILEDIM_M x TILEDIM_N tile with inner dimension N. NAN unless
 * all > 0. */
double model_q_tiled(double tile_m, double tile_n, double n);
/* 003_d5ffc223df97ef85.txt Q5.A: peak = SMs * cores/SM * FLOP/cycle/core * clock
 * [FLOP/s], e.g. 40 * 64 * 2 * 1.5e9 = 7.68e12 for a T4. NAN unless all > 0. */
double model_peak_flops(int sms, int cores_per_sm, double flops_per_cycle, double clock_hz);

/* ------------------------------------------------------------------------------
 * Kernel cost formulas
 * ------------------------------------------------------------------------------ */

enum model_kernel_family {
    MODEL_FAM_NAIVE = 0,    /* one thread per C element, operands from global memory */
    MODEL_FAM_STSO,         /* 000 §1.1: shared-memory tiles, one output per thread */
    MODEL_FAM_STMO,         /* 000 §1.2: OP_PER_THREAD outputs per thread, one block */
    MODEL_FAM_STMVB,        /* 000 §1.3: PARALLEL x PARALLEL blocks per thread */
    MODEL_FAM_SMEM_TILED,   /* 001: shared-memory SGEMM, one output per thread */
    MODEL_FAM_BLOCKTILE_1D, /* 001: 1D block tiling, n_entries outputs per thread */
    MODEL_FAM_TILED,        /* 003 Q1-Q2: TILEDIM_M/N/K tiles, TILESCALE_M/N per thread */
    MODEL_FAM_RECT_PADDED,  /* 002 §III Listing 1: operands padded to the block size */
    MODEL_FAM_RECT_BORDER,  /* 002 §III Algorithm 2: border checks in the kernel */
    MODEL_FAM_TSM2_V0,      /* 004 §4.2 V0 = Alg. 1, inner product */
    MODEL_FAM_TSM2_V1,      /* 004 §4.2 V1 = Alg. 2, outer product */
    MODEL_FAM_TSM2_V2,      /* 004 §4.2 V2 = Alg. 3, + shared memory for B */
    MODEL_FAM_TSM2_V3,      /* 004 §4.2 V3 = Alg. 4, + prefetching */
    MODEL_FAM_ISM2,         /* 004 §5.2 optimisation 1 (Alg. 6) */
    MODEL_FAM_ISM2_OPT2,    /* 004 §5.2 optimisation 2 (Alg. 7) */
    MODEL_FAM_CUBLAS,       /* reference library: minimal (compulsory) traffic */
    MODEL_FAM_REGTILE,      /* 2D register-tiled GEMM, counted like MODEL_FAM_TILED */
    MODEL_FAM_MOVE,         /* the shape's compulsory bytes moved, no arithmetic (kernel move) */
    MODEL_FAM_COUNT
};

/* "naive", "stso", "stmo", "stmvb", "smem_tiled", "blocktile_1d", "tiled",
 * "rect_padded", "rect_border", "tsm2_v0".."tsm2_v3", "ism2", "ism2_opt2", "cublas",
 * "regtile", "move"; "?" for an invalid value. */
const char *model_family_name(enum model_kernel_family fam);
/* Inverse of model_family_name(). Returns RK_OK or RK_EUSAGE for an unknown name. */
int model_family_from_name(const char *name, enum model_kernel_family *out /* OUT */);

struct model_shape {
    long m, n, k;   /* C is m x n, A is m x k, B is k x n; all > 0 */
    int elem_bytes; /* 2, 4 or 8 */
};

/*
 * The named integer parameters of the seeds' kernels. A family reads only the ones
 * model_family_needs() lists; the others are ignored (leave them 0).
 */
struct model_params {
    int block;      /* b: BLOCK_SIZE (000 §1, 002 §III), BlockSize (001) */
    int per_thread; /* p: OP_PER_THREAD (000 §1.2), PARALLEL (000 §1.3), n_entries (001) */
    int tile_m;     /* TILEDIM_M (003 Q1.A) / BM of regtile and blocktile_1d */
    int tile_n;     /* TILEDIM_N / BN */
    int tile_k;     /* TILEDIM_K / BK */
    int scale_m;    /* TILESCALE_M (003 Q2.A): outputs per thread along m (TM of regtile) */
    int scale_n;    /* TILESCALE_N: outputs per thread along n (TN of regtile) */
    int t1, t2, t3; /* TSM2/ISM2 tile sizes of B, C, A (004 §3.6.1) */
    int tcf;        /* ISM2 thread count factor (004 §5.2) */
    /* roofkit's H100 extensions of TSM2 V3 / ISM2 opt. 1 (optional: 0 is the paper) */
    int rows_per_thread; /* rpt: rows of A a thread multiplies by each value of B it reads
                            from shared memory; 0 or 1: one */
    int a_staged;        /* 1: A goes through a cp.async ring in shared memory (written
                            and read once more); 0: straight into registers */
    int b_rows;          /* on the tensor cores: rows of A each value of B read from shared
                            memory is multiplied with, a warp's tiles of 16 rows together
                            (mma.sync spreads B's fragment over the warp: every value read
                            once per warp and k step); 0: rows_per_thread's rule (CUDA cores) */
};

/* Bits of model_family_needs(): which struct model_params fields a family reads. */
enum {
    MODEL_P_BLOCK = 1 << 0,
    MODEL_P_PER_THREAD = 1 << 1,
    MODEL_P_TILE_M = 1 << 2,
    MODEL_P_TILE_N = 1 << 3,
    MODEL_P_TILE_K = 1 << 4,
    MODEL_P_SCALE_M = 1 << 5,
    MODEL_P_SCALE_N = 1 << 6,
    MODEL_P_T1 = 1 << 7,
    MODEL_P_T2 = 1 << 8,
    MODEL_P_T3 = 1 << 9,
    MODEL_P_TCF = 1 << 10,
};
/* The MODEL_P_* bits of the parameters a family needs (0 for naive and cublas). */
unsigned model_family_needs(enum model_kernel_family fam);

/*
 * Work and traffic of one kernel launch. Conventions (docs/model.md "Cost formulas"):
 *   flops          useful work, 2mnk (an FMA is 2 FLOP): what GFLOP/s is quoted against.
 *   flops_exec     executed work including padded or out-of-range tiles that still
 *                  compute (what CUPTI's FMA counters see).
 *   bytes_dram     the seed's count of global-memory traffic: every element a thread
 *                  loads from or stores to global memory, times elem_bytes, with no
 *                  reuse through caches (the denominators of the seeds' q: 000 §6,
 *                  003 Q5.B, 004 §3.6.3 Total_memory). For cublas: bytes_dram_min.
 *   bytes_dram_min extension: compulsory traffic, each operand read once and C
 *                  written once (read too when the kernel reads C): what a DRAM
 *                  behind a perfect L2 would see. A lower bound.
 *   bytes_l2       extension: traffic between the SMs and L2 = every global request
 *                  (no L1 reuse): equal to bytes_dram for the seeds' kernels.
 *   bytes_l1       extension: global requests through L1TEX; equal to bytes_l2.
 *   bytes_shared   shared-memory loads plus stores by threads, times elem_bytes.
 * The seed's roofline uses bytes_dram at DRAM bandwidth; the L2-aware hierarchical
 * roofline (extension) uses bytes_dram_min at DRAM, bytes_l2 at L2, bytes_shared at
 * shared memory.
 */
struct model_cost {
    double flops;
    double flops_exec;
    double bytes_dram;
    double bytes_dram_min;
    double bytes_l2;
    double bytes_l1;
    double bytes_shared;
    const char *seed; /* the seed sections the formula comes from (static string) */
};

/*
 * NULL if shape and params are valid for fam, else a static lowercase reason
 * ("m must be positive", "tile_m must be a multiple of scale_m", ...).
 */
const char *model_check_cost(enum model_kernel_family fam, const struct model_shape *shape,
                             const struct model_params *params);

/*
 * Fills *out for one launch of fam on shape with params. Returns RK_OK, or
 * RK_EUSAGE when model_check_cost() gives a reason (out is then zeroed) or an
 * argument is NULL.
 */
int model_cost(enum model_kernel_family fam, const struct model_shape *shape,
               const struct model_params *params, struct model_cost *out /* OUT */);

/* ------------------------------------------------------------------------------
 * TSM2 performance model (004_dab40fe45003313a.txt §3.6)
 * ------------------------------------------------------------------------------ */

/* The GPU as the TSM2 model sees it. */
struct model_gpu {
    double peak_flops;          /* Peak Perf. [FLOP/s] of the precision used */
    double bandwidth;           /* Peak Band. [B/s] */
    double clock_hz;            /* core_clock [Hz] */
    int sms;                    /* #_of_SM */
    int regs_per_sm;            /* R_SM [32-bit registers] */
    double smem_per_sm;         /* S_SM [bytes] */
    int max_threads_per_sm;     /* HW_MAX [threads] */
    double mem_latency_cycles;  /* latency_mem [cycles], from the latency probe */
    double comp_latency_cycles; /* latency_comp [cycles], from the probes */
    double regs_fixed;          /* C of §3.6.2: registers for "CUDA initial setup", found by
                                   offline profiling (numRegs of a compiled TSM2 kernel minus
                                   its (3t2+2t3)*elem_bytes/4); 0 when not profiled */
    /* Optional (n = 0: absent), an extension: DRAM read bandwidth against GPU-wide bytes in
     * flight as measured (probe lat_dram_loaded's points), n >= 2 strictly ascending byte
     * counts and the utilisation there (bandwidth / the curve's best, non-decreasing, in
     * (0, 1], the last 1). With it model_dram_util() reads the utilisation off the curve
     * instead of Little's law with one latency; the caller keeps the arrays alive. */
    const double *dram_curve_bytes, *dram_curve_util;
    int dram_curve_n;
    double issue_cycles_shared; /* extension: issue cycles a shared-memory instruction takes on
                                   its sub-partition (probe lat_issue_shared; 0: one) */
};

/* NULL if gpu is valid, else a static lowercase reason naming the field. */
const char *model_check_gpu(const struct model_gpu *gpu);

struct model_tsm2_problem {
    long m, n, k;   /* A m x k (large), B k x n (tall and skinny), C m x n */
    int elem_bytes; /* bytes_per_element: 4 or 8 (2 accepted) */
    int t1, t2, t3; /* 004 §3.6.1; t1 is not in the model's equations (only in the
                       search's default t3 bound), t2 and t3 must be >= 1 */
};

/* NULL if prob is valid (t2, t3 checked only when check_tiles), else a reason. */
const char *model_check_tsm2(const struct model_tsm2_problem *prob, int check_tiles);

/*
 * Every quantity of 004 §3.6.2 for one (t2, t3), plus the times of Alg. 5 (§3.6.3).
 * model_tsm2_fields[] describes each field (key, unit, help) for printers.
 */
struct model_tsm2_eval {
    double regs_per_thread;         /* R_thread = (3 t2 + 2 t3) * bytes/4 + C [registers] */
    double smem_per_thread;         /* S_thread = t2 * bytes [B] */
    double occ_hw;                  /* HW_MAX [threads/SM] */
    double occ_regs;                /* R_SM / R_thread [threads/SM] */
    double occ_smem;                /* S_SM / S_thread [threads/SM] */
    double max_occupancy;           /* MaxOccup_SM = min of the three [threads/SM] */
    double concurrent_mem;          /* MaxOccup * t3 [loads in flight/SM] */
    double throughput_max_mem;      /* Peak Band. / (#SM * clock) [B/cycle/SM] */
    double concurrent_max_mem;      /* latency_mem * throughput_max_mem [B/SM] */
    double util_mem;                /* concurrent_mem / concurrent_max_mem, as written (may
                                       exceed 1) [1] */
    double util_mem_bytes;          /* extension: concurrent_mem * bytes / concurrent_max_mem,
                                       same unit on both sides; not used for times [1] */
    double concurrent_comp;         /* MaxOccup * t3 * t2 [FMA in flight/SM] */
    double throughput_max_comp;     /* Peak Perf. / (#SM * clock) [FLOP/cycle/SM] */
    double concurrent_max_comp;     /* latency_comp * throughput_max_comp [FLOP/SM] */
    double util_comp;               /* concurrent_comp / concurrent_max_comp (may exceed 1) [1] */
    double time_comp;               /* t3 t2 / (Peak Perf. * #SM * MaxOccup) [s] */
    double time_mem;                /* t3 bytes / (Peak Band. * #SM * MaxOccup) [s] */
    double r;                       /* time_comp / time_mem = t2/bytes * Band/Perf [1] */
    double t2_threshold;            /* Peak Perf. / Peak Band. * bytes [elements] */
    enum model_bound bound;         /* this (t2, t3): compute if r > 1, else dram */
    enum model_bound problem_bound; /* original problem: compute if n > t2_threshold */
    double total_memory;            /* Alg. 5: m k n / t2 * bytes [B] */
    double total_flops;             /* Alg. 5: 2 m k n [FLOP] */
    double bandwidth_eff;           /* Peak Band. * min(1, util_mem) [B/s] */
    double compute_eff;             /* Peak Perf. * min(1, util_comp) [FLOP/s] */
    double time_mem_total_s;        /* total_memory / bandwidth_eff [s] */
    double time_comp_total_s;       /* total_flops / compute_eff [s] */
    double predicted_time_s;        /* time_mem_total_s if r <= 1, else time_comp_total_s [s] */
};

/* Which C type a descriptor's field has. */
enum model_field_type { MODEL_F_DOUBLE, MODEL_F_INT, MODEL_F_BOUND };

/* Describes one field of a result struct, for printers that do not know the struct. */
struct model_field {
    const char *key;  /* JSON key and label, e.g. "max_occupancy" */
    const char *unit; /* e.g. "threads/SM", "s", "1" for a ratio */
    const char *help; /* one line: the formula and its seed section */
    size_t offset;    /* offsetof() in the described struct */
    enum model_field_type type;
};

/* Every field of struct model_tsm2_eval, in printing order. */
extern const struct model_field model_tsm2_fields[];
extern const int model_tsm2_nfields;

/* A field's value as a double (a bound gives its enum value); base points at the
 * described struct. */
double model_field_double(const struct model_field *f, const void *base);

/*
 * C of 004 §3.6.2 (registers a thread holds beyond its tiles) by offline profiling: the
 * registers a kernel compiled to minus the tiles' (3 t2 + 2 t3) elem_bytes / 4, at least 0.
 */
double model_tsm2_regs_fixed(double registers, double t2, double t3, int elem_bytes);

/*
 * Evaluates 004 §3.6.2 (and the times of §3.6.3) for prob's t2 and t3. Returns
 * RK_OK, or RK_EUSAGE when model_check_gpu() or model_check_tsm2(prob, 1) gives a
 * reason.
 */
int model_tsm2_evaluate(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                        struct model_tsm2_eval *out /* OUT */);

/* 004 §3.6.2: t2_threshold = Peak Perf. / Peak Band. * bytes_per_elem [elements];
 * NAN unless all > 0. */
double model_tsm2_t2_threshold(double peak_flops, double bandwidth, int elem_bytes);

/*
 * The box both searches work in: t2_min <= t2 <= t2_max, t3_min <= t3 <= t3_max.
 * Alg. 5 gives 1 <= t2 <= n and 1 <= t3 with no upper bound for t3; roofkit bounds
 * t3 by t1 (Alg. 4 line 26 steps through a t1-row tile t3 rows at a time) or, when t1
 * is 0, by k and by MODEL_MAX_REGS_PER_THREAD: R_thread = (3 t2 + 2 t3) bytes/4 + C must
 * fit in a thread's registers even at t2 = 1 and C = 0; the same bounds t2 (at t3 = 1)
 * below n: 84 in fp32, 42 in fp64. Without them the exhaustive search walked n x k points
 * (27 million, 1.8 s, for k = 853807, n = 32; 96 million for n = 8.7 million, k = 11). The
 * same box applies to both searches.
 */
#define MODEL_MAX_REGS_PER_THREAD                                                                  \
    255 /* every NVIDIA GPU since Kepler (CUDA Programming                                         \
           Guide, "Technical Specifications") */
struct model_tsm2_bounds {
    int t2_min, t2_max;
    int t3_min, t3_max;
};
/* Fills the default box above. RK_EUSAGE if prob is invalid (tiles unchecked). */
int model_tsm2_default_bounds(const struct model_tsm2_problem *prob,
                              struct model_tsm2_bounds *out /* OUT */);

/* Alg. 5's gradient descent, as written in 004 §3.6.3. */
#define MODEL_GD_START    1.0      /* initial t2 and t3 */
#define MODEL_GD_STEP     0.1      /* step size */
#define MODEL_GD_STOP     1e-4     /* stop threshold */
#define MODEL_GD_MAX_ITER 1000000L /* safety cap (not in the seed) */

/* The parameters a search chose. */
struct model_tsm2_choice {
    int t1;                  /* prob->t1, unchanged: Alg. 5 leaves t1 to offline profiling */
    int t2, t3;              /* the choice (integers) */
    double t2_raw, t3_raw;   /* gradient descent before rounding; = t2, t3 for exhaustive */
    double predicted_time_s; /* model_tsm2_evaluate() at (t2, t3) */
    enum model_bound bound;  /* its bound at (t2, t3) */
    int alg5_branch;         /* 1: lines 1-5 (problem memory-bound); 2: lines 7-11 (Time_1,
                                compute); 3: lines 12-16 (Time_2, memory) */
    long iterations;         /* GD steps over all runs, or points evaluated */
    int converged;           /* GD: every run stopped at the threshold, not the cap */
};

/*
 * Alg. 5 (004 §3.6.3) with gradient descent exactly as the seed states it: start at
 * t2 = t3 = 1, step 0.1, stop when a step moves (t2, t3) by less than 1e-4, round
 * to the nearest integers. Readings roofkit had to make are documented in
 * model/tsm2.c and docs/model.md (objective normalised by its value at the start
 * point, finite-difference gradient, projection onto the box). bounds may be NULL
 * for model_tsm2_default_bounds(). prob's t2 and t3 are ignored. Returns RK_OK or
 * RK_EUSAGE.
 */
int model_tsm2_search_gd(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                         const struct model_tsm2_bounds *bounds,
                         struct model_tsm2_choice *out /* OUT */);

/*
 * Every integer (t2, t3) in the same box, each scored by model_tsm2_evaluate()'s
 * predicted_time_s: never slower than model_tsm2_search_gd()'s choice. Ties go to
 * the smaller t2, then the smaller t3. Returns RK_OK or RK_EUSAGE.
 */
int model_tsm2_search_exhaustive(const struct model_gpu *gpu, const struct model_tsm2_problem *prob,
                                 const struct model_tsm2_bounds *bounds,
                                 struct model_tsm2_choice *out /* OUT */);

/*
 * The TSM2 entry point's cost of one configuration (extension beyond 004 §3.6, which models
 * one kernel's t2 and t3; docs/model.md "the tsm2 entry point"). A launch of `blocks` blocks,
 * `resident` of them at once, each moving bytes_dram / blocks through DRAM with
 * bif_block bytes in flight, issuing fma multiply-adds (idle columns of a tile included)
 * among instr thread instructions, lsu of them through the load/store pipe:
 *   time_dram = sum over waves of its bytes / (bandwidth x model_dram_util(its blocks x
 *               bif_block)): a last, partial wave keeps fewer bytes in flight
 *   time_comp = max(2 fma / peak_flops, instr / (#SM x MODEL_ISSUE_LANES x clock),
 *                   lsu / (#SM x MODEL_LSU_LANES x clock))
 *   time      = max(time_dram, time_comp) + waves x model_start_s()
 * The issue and load/store terms are what separate configurations that the roofline calls
 * equal: an idle column costs multiply-adds, one row per thread costs a shared load of B per
 * t3 multiply-adds.
 */
#define MODEL_ISSUE_LANES                                                                          \
    128 /* thread instructions an SM issues per cycle: 4 schedulers x 32                           \
           lanes (sm_70 to sm_90), an architecture constant */
#define MODEL_LSU_LANES                                                                            \
    32 /* thread instructions its load/store units take per cycle (32                              \
          LD/ST units per SM, sm_70 to sm_90) */
struct model_tsm2_plan_in {
    double bytes_dram; /* DRAM bytes of the launch(es) [B] */
    double blocks;     /* blocks of the grid, >= 1 */
    double resident;   /* blocks resident at once on the GPU (occupancy x #SM), >= 1 */
    double bif_block;  /* bytes a block keeps in flight (its threads' sum) [B] */
    double fma;        /* multiply-adds executed */
    double instr;      /* thread instructions issued, fma and lsu included */
    double lsu;        /* thread instructions through the load/store pipe */
};
struct model_tsm2_plan_eval {
    double time_s, time_dram_s, time_comp_s;
    double util;            /* model_dram_util of the first wave */
    double waves;           /* ceil(blocks / resident) */
    enum model_bound bound; /* MODEL_BOUND_DRAM, _LATENCY (util < 1) or _COMPUTE */
};
/* RK_OK, or RK_EUSAGE for an invalid gpu or input (*out zeroed). */
int model_tsm2_plan_evaluate(const struct model_gpu *gpu, const struct model_tsm2_plan_in *in,
                             struct model_tsm2_plan_eval *out /* OUT */);

/* ------------------------------------------------------------------------------
 * Occupancy and Little's law (extension beyond the seeds: the latency-bound regime of
 * 004 §5.1 and the unit-consistent form of 004 §3.6.2's Util_mem)
 * ------------------------------------------------------------------------------ */

/* Hopper (sm_90) allocation rules of the CUDA occupancy calculator: registers are
 * given to a warp in units of 256, CUDA reserves 1 KiB of shared memory per block,
 * at most 32 resident blocks per SM. Architecture constants, not fitted. */
#define MODEL_REG_ALLOC_UNIT    256
#define MODEL_SMEM_RESERVED     1024.0
#define MODEL_MAX_BLOCKS_PER_SM 32

/* One launch as the occupancy model sees it. */
struct model_launch {
    double blocks;                     /* grid size [blocks], > 0 */
    int threads_per_block;             /* > 0 */
    int regs_per_thread;               /* >= 0 (0: unknown, no register limit) */
    double smem_per_block;             /* static + dynamic [B], >= 0 */
    double bytes_in_flight_per_thread; /* independent global loads a thread issues
                                         before it waits, in bytes; NaN or 0: unknown */
};

/* What model_occupancy() found. */
struct model_occupancy {
    int blocks_per_sm;       /* min of the thread, register, shared and block limits */
    double active_sms;       /* min(SMs, blocks): a grid smaller than the GPU idles SMs */
    double resident_threads; /* min(blocks, blocks_per_sm * SMs) * threads_per_block */
    double waves;            /* blocks / (blocks_per_sm * SMs) [1] */
    double bytes_in_flight;  /* resident_threads * bytes_in_flight_per_thread [B] */
    double bytes_needed;     /* bandwidth * mem latency: Little's law [B] */
    double util;             /* min(1, bytes_in_flight / bytes_needed); 1 when unknown */
};

/*
 * Resident blocks per SM of launch l on gpu (sms, regs_per_sm, smem_per_sm,
 * max_threads_per_sm used): min(max_threads / threads, regs_per_sm / (warps *
 * ceil(regs * 32 / 256) * 256), smem_per_sm / (smem + 1 KiB), 32). 0 when one block
 * does not fit; -1 for invalid input.
 */
int model_blocks_per_sm(const struct model_gpu *gpu, const struct model_launch *l);

/* Little's law: min(1, bytes_in_flight / (bandwidth * latency_s)); NAN unless
 * bytes_in_flight >= 0 and bandwidth, latency_s > 0, all finite. */
double model_little_util(double bytes_in_flight, double bandwidth, double latency_s);

/*
 * The fraction of gpu->bandwidth that bytes_in_flight (GPU-wide) sustain. With a measured
 * curve (dram_curve_n >= 2): linear in log(bytes) between its points, proportional to the
 * bytes below the first (Little's law at the least-loaded point's latency), 1 from the
 * last on. Without one: model_little_util at mem_latency_cycles / clock_hz. NAN for
 * invalid input.
 */
double model_dram_util(const struct model_gpu *gpu, double bytes_in_flight);

/*
 * Fills *out for launch l on gpu (gpu->bandwidth, clock_hz, mem_latency_cycles for
 * Little's law). RK_OK, or RK_EUSAGE (*out zeroed) for invalid input or a block
 * that does not fit on an SM.
 */
int model_occupancy(const struct model_gpu *gpu, const struct model_launch *l,
                    struct model_occupancy *out /* OUT */);

/* ------------------------------------------------------------------------------
 * Instruction issue and pipe wavefronts of the CUDA-core GEMMs (extension beyond the
 * seeds; docs/model.md "issue"). Counts from the kernel's tiling, whole launch.
 * ------------------------------------------------------------------------------ */

struct model_issue_counts {
    double fma_warp;                   /* warp-wide FMA instructions [warp instr] */
    double instr_warp;                 /* FMA + load/store warp instructions counted (a lower bound:
                                          address arithmetic, loop control not counted) [warp instr] */
    double smem_wavefronts;            /* shared-memory wavefronts (128 B each, bank conflicts
                                          serialise into extra wavefronts) [1] */
    double l1_wavefronts;              /* L1TEX wavefronts of global loads and stores [1] */
    double acc_per_thread;             /* independent FMA accumulator chains per thread; 0:
                                          unknown (no chain limit: the pipe's peak) [1] */
    double bytes_dram;                 /* DRAM bytes the access pattern moves (sector-counted, TSM2
                                          V0); NaN: the caller's compulsory count stands [B] */
    double bytes_in_flight_per_thread; /* bytes one thread keeps in flight, when the counts
                                 know it; NaN: the caller's value stands [B] */
    double bytes_l2;     /* L2 traffic behind L1 (naive: a sector is fetched once per warp
                            while it serves consecutive k); NaN: the caller's count stands [B] */
    double tiles;        /* k tiles each block stages through shared memory; 0: none [1] */
    double stage_rounds; /* dependent global-load rounds per tile and thread before the
                            barrier (loads of one round are independent; 0: prefetched) [1] */
    double smem_instr;   /* warp shared-memory load and store instructions when the kernel moves
                            one element per instruction (0: vectorised or unknown: issue_instr
                            counts them once) [warp instr] */
    double serial_loop;  /* 1: a warp waits for each round of its own DRAM loads and then
                            issues the instructions that use them (no prefetch: TSM2 V0, V1),
                            so its instructions add to its latency; 0: they overlap [1] */
};

/* The sector (32 B) and wavefront (128 B) sizes of sm_90's L1TEX and L2; the 32 banks
 * of 4 B of shared memory. Architecture constants, not fitted. */
#define MODEL_SECTOR_BYTES    32.0
#define MODEL_WAVEFRONT_BYTES 128.0
#define MODEL_SMEM_BANKS      32

/*
 * Fills *out for fam on shape with params. warp_cols: threads of one warp along
 * n (1..32) for MODEL_FAM_NAIVE, whose block is not in its parameters (ignored for
 * the others: tile_n / scale_n). RK_OK, or RK_EUSAGE (out zeroed) for invalid input
 * or a family without instruction counts (TSM2 V1-V3, ISM2, cuBLAS).
 */
int model_issue_counts(enum model_kernel_family fam, const struct model_shape *shape,
                       const struct model_params *params, int warp_cols,
                       struct model_issue_counts *out /* OUT */);

/* The busiest SM's pipes (model_predict's issue model). */
struct model_pipes {
    double busiest_share;   /* ceil(blocks / SMs) / blocks: the share of the launch on the
                               most loaded SM [1] */
    double warps_per_sp;    /* resident warps per SM sub-partition (4 per SM) [1] */
    double fma_rate;        /* warp FMAs / cycle / SM: min(peak, 4 * warps_per_sp *
                               acc / lat_fma) [1/cycle] */
    double cycles_fma;      /* busiest SM: fma_warp share / fma_rate [cycles] */
    double cycles_issue;    /* (instr_warp + (issue_cycles_shared - 1) smem_instr) share / 4
                               (one cycle per sub-partition each, a shared one more) */
    double cycles_smem;     /* smem_wavefronts share / shared wavefronts per cycle */
    double cycles_l1;       /* l1_wavefronts share / L1 wavefronts per cycle */
    double stage_latency;   /* one staging round's latency (the caller's) [cycles] */
    double cycles_stage;    /* staged tiles with their load latency exposed: ceil(busiest /
                               resident blocks) * tiles * (stage_rounds * stage_latency +
                               throughput cycles of one block's tile); 0 without tiles */
    double time_s;          /* max of the five / clock [s] */
    double time_chain_s;    /* serial_loop counts: one warp's DRAM rounds + its instructions
                               (set by model_predict's issue models; 0 otherwise) [s] */
    enum model_bound bound; /* compute (fma, issue), latency (fma chain-limited or staging),
                               shared, l1 */
};

/*
 * The busiest SM's pipe time for counts c of launch l (docs/model.md "issue"): the
 * SM that receives ceil(blocks / SMs) blocks does that share of the work; per cycle
 * it issues 4 warp instructions (one per sub-partition), peak_flops / (64 SMs clock)
 * warp FMAs, bw_shared / (128 B SMs clock) shared wavefronts, bw_l1 / (128 B SMs
 * clock) L1 wavefronts. The FMA rate is also capped by dependent latency: each
 * sub-partition keeps warps_per_sp * acc_per_thread independent FMA chains, each of
 * which issues once per comp_latency_cycles. occ from model_occupancy() of l.
 * Staging (c->tiles > 0): each tile a block waits stage_rounds global-load latencies
 * (stage_latency_cycles, >= 0) before its barrier, then does its share of the pipes'
 * work; the blocks resident on the SM hide each other's waits, one block's own wait
 * is not hidden: cycles_stage = ceil(busiest / resident) * tiles * (rounds * latency +
 * W), W = the largest pipe term / (busiest * tiles). RK_OK or RK_EUSAGE (out zeroed).
 */
int model_pipe_time(const struct model_gpu *gpu, const struct model_launch *l,
                    const struct model_occupancy *occ, const struct model_issue_counts *c,
                    double peak_flops, double bw_shared, double bw_l1, double stage_latency_cycles,
                    struct model_pipes *out /* OUT */);

/* The models `roofkit model` applies; stored as text in prediction.model. */
enum model_kind {
    MODEL_KIND_ROOFLINE = 0,   /* max(flops / peak, seed DRAM bytes / DRAM bandwidth) */
    MODEL_KIND_HIERARCHICAL,   /* one term per level (model_hierarchical_time) */
    MODEL_KIND_TSM2,           /* 004 §3.6 for one (t2, t3) (model_tsm2_evaluate) */
    MODEL_KIND_COUNTERS,       /* extension: the hierarchical roofline on measured bytes */
    MODEL_KIND_OCCUPANCY,      /* extension: hierarchical + Little's law + launch cost */
    MODEL_KIND_ISSUE,          /* extension: occupancy + the busiest SM's pipes (issue.c) */
    MODEL_KIND_ISSUE_COUNTERS, /* extension: issue on the measured warp instructions */
    MODEL_KIND_OVERLAP,        /* extension: issue_counters' terms as a p-norm (model_overlap) */
    MODEL_KIND_COUNT
};

/* "roofline", "hierarchical", "tsm2", "roofline_counters", "occupancy", "issue",
 * "issue_counters", "overlap"; "?" for an invalid value. */
const char *model_kind_name(enum model_kind kind);
/* Inverse of model_kind_name(). Returns RK_OK or RK_EUSAGE for an unknown name. */
int model_kind_from_name(const char *name, enum model_kind *out /* OUT */);

/*
 * Everything one prediction needs, as numbers (SI units). NaN means unknown or not
 * measured. Which fields a model reads:
 *   roofline      flops, peak_flops, roofline_bytes, bandwidth[MODEL_LEVEL_DRAM]
 *   hierarchical  flops, peak_flops, level_bytes[], bandwidth[] of each level whose
 *                 bytes are > 0 (a level with 0 bytes has no term)
 *   tsm2          gpu and tsm2 (both non-NULL); gpu->peak_flops and gpu->bandwidth
 *                 are the ceilings the caller chose
 *   roofline_counters  as hierarchical, with level_bytes[] holding the bytes the
 *                 counters measured (DRAM read + write, L2, shared); DRAM bytes must
 *                 be known. A counter-informed model: bytes moved are causes, the
 *                 measured time is never an input
 *   occupancy     as hierarchical, plus launch_s, launch and gpu (sms, regs_per_sm,
 *                 smem_per_sm, max_threads_per_sm, bandwidth, clock_hz,
 *                 mem_latency_cycles; needed only with a launch; a NULL launch is an
 *                 unknown configuration and gives util 1): time = launch_s + max(flops / peak, dram
 * bytes / (bw_dram * util), other levels), util = model_little_util() of the bytes the resident
 * threads keep in flight (1 when launch.bytes_in_flight_per_thread is NaN or 0: unknown)
 *   issue         as occupancy, plus issue (may be NULL), launch and gpu (sms, clock_hz,
 *                 comp_latency_cycles), bandwidth[L1] and [SHARED] for the wavefront rates:
 *                 time = launch_s + max(occupancy's body, busiest SM's pipes (struct
 *                 model_pipes)); with a NULL issue or launch it equals occupancy. The
 *                 issue counts' bytes_l2 (when finite) replaces level_bytes[L2]; the
 *                 staging latency is f * mem latency + (1 - f) * l2_latency_cycles +
 *                 stage_extra_cycles with f = min(1, DRAM bytes / L2 bytes), the share of L2
 *                 requests that miss
 *   issue_counters  as issue, with issue and launch required: the caller puts the warp
 *                 instructions the counters measured (CUPTI smsp__sass_inst_executed) in
 *                 issue->instr_warp, and for a kernel without analytic counts (TSM2 V1-V3,
 *                 ISM2, cuBLAS) gives counts holding only those instructions; cli/model.c
 *                 also puts the DRAM bytes the counters measured in level_bytes[DRAM]. Like
 *                 roofline_counters, causes the counters measured, never the time
 *   overlap       as issue_counters; the terms it takes the largest of are combined as
 *                 a p-norm instead (struct model_overlap), and the share of the DRAM term
 *                 that is C written after a block's last tile (dram_write_bytes /
 *                 epilogue_tiles) is added after it
 */
struct model_predict_in {
    double flops;                           /* useful work [FLOP] */
    double peak_flops;                      /* compute ceiling of the precision [FLOP/s] */
    double roofline_bytes;                  /* the seed's DRAM count (cost bytes_dram) [B] */
    double level_bytes[MODEL_LEVEL_COUNT];  /* traffic at each level [B] */
    double bandwidth[MODEL_LEVEL_COUNT];    /* each level's measured bandwidth [B/s] */
    const struct model_gpu *gpu;            /* tsm2 only */
    const struct model_tsm2_problem *tsm2;  /* tsm2 only: m, n, k, elem_bytes, t1..t3 */
    const struct model_launch *launch;      /* occupancy only */
    double launch_s;                        /* occupancy only: fixed cost of one launch [s] */
    const struct model_issue_counts *issue; /* issue only; NULL: no pipe term (= occupancy) */
    double l2_latency_cycles;  /* issue only: an L2 hit's latency (0 or NaN: no staging term) */
    double stage_extra_cycles; /* issue only: what a staging round adds to its load's latency
                                  (shared store, barrier, loop: probe lat_stage_extra); 0 or
                                  NaN: nothing */
    double dram_write_bytes;   /* overlap only: the DRAM bytes of level_bytes[DRAM] that are
                                  writes (counters); NaN or 0: no epilogue term [B] */
    double epilogue_tiles;     /* overlap only: row tiles a block computes before it is done
                                  (ISM2's tcf); its C writes overlap its next tile's work but
                                  the last tile's do not; <= 1 or NaN: one */
};

/*
 * The overlap model (extension, docs/model.md "overlap"): issue_counters takes the
 * largest of its terms, as if the resources overlapped perfectly, the busiest one
 * running at its rate throughout; the seeds' shared-memory kernels show two resources that each run
 * well below their rate when both are loaded (Nsight Compute on smem_001 fp32 2048^3: the shared
 * pipe at 0.79 of its wavefront rate, the schedulers at 0.69 of theirs, the warps waiting for
 * shared-load results). overlap combines the terms as time = launch_s + (sum_i t_i^p)^(1/p) which
 * is the largest term when one dominates and 2^(1/p) times it when two are equal. p is set from
 * that one kernel: its issue and shared terms by roofkit's counts are 0.81 and 0.79 of its measured
 * time on one H100 recording and 0.75 and 0.81 on the next, and t_issue^p + t_shared^p = 1 gives p
 * = 3.1 and 2.8 (Nsight Compute's pipe shares, 0.69 and 0.79, give 2.3). The example's accuracy is
 * flat for p in 2.75-3.25 (docs/perf-notes.md, model round 7).
 */
#define MODEL_OVERLAP_P 3.0

enum model_overlap_term {
    MODEL_OVL_DRAM = 0, /* DRAM bytes / (bandwidth * Little's-law util) */
    MODEL_OVL_L2,       /* L2 bytes / bandwidth */
    MODEL_OVL_L1,       /* max(L1 bytes / bandwidth, L1 wavefronts of the busiest SM) */
    MODEL_OVL_SHARED,   /* max(shared bytes / bandwidth, shared wavefronts, busiest SM) */
    MODEL_OVL_FMA,      /* max(flops / peak, FMA pipe or chains, busiest SM) */
    MODEL_OVL_ISSUE,    /* warp instructions of the busiest SM at one per cycle and SP */
    MODEL_OVL_STAGE,    /* staging latency exposed (model_pipes cycles_stage) */
    MODEL_OVL_CHAIN,    /* one warp's serial chain (model_pipes time_chain_s) */
    MODEL_OVL_COUNT
};

/* "dram", "l2", "l1", "shared", "fma", "issue", "stage", "chain"; "?" if invalid. */
const char *model_overlap_term_name(enum model_overlap_term t);

struct model_overlap {
    double p;                       /* MODEL_OVERLAP_P */
    double term_s[MODEL_OVL_COUNT]; /* each term (0: absent) [s]; dram without the epilogue */
    double largest_s;               /* max of the terms [s] */
    double norm_s;                  /* (sum term^p)^(1/p) [s] */
    double epilogue_s;              /* the DRAM term's share of C written after a block's last
                                       tile: dram term x write share / epilogue_tiles, added
                                       after the norm (0 without write bytes) [s] */
    double start_s;                 /* one resident block a SM and no staged tiles: each
                                       block's start, MODEL_TCF_START_LATENCIES DRAM latencies,
                                       for ceil(blocks / SMs) blocks on the busiest SM, added
                                       after the norm (0 otherwise) [s] */
};

/*
 * overlap names a row bound by a resource only when the model has that resource busy for at
 * least this share of the predicted time (its term, the DRAM term with its epilogue, the larger
 * of fma and issue for compute, over launch + norm + epilogue + start); below it no resource is
 * near its rate, the time is a mix of several and of waiting, and the row is `latency`. The
 * share is Nsight Compute's: its speed-of-light rule calls a kernel whose compute and memory
 * throughputs are all below 60 % of peak latency-bound.
 */
#define MODEL_BOUND_SATURATED 0.6

/* occupancy and the models built on it name a DRAM-bound row `latency` when Little's law
 * leaves it less than this share of the DRAM bandwidth: the measured DRAM curve rises to
 * its best over its last few percent, so a utilisation of 0.99 is the bandwidth's bound
 * within the curve's noise, not a latency limit. */
#define MODEL_LATENCY_UTIL 0.95

/* One model's prediction. */
struct model_prediction {
    enum model_kind kind;
    double time_s;                /* predicted time [s] */
    enum model_bound bound;       /* what limits it */
    struct model_time terms;      /* roofline and hierarchical: every term (zeroed for tsm2) */
    struct model_tsm2_eval tsm2;  /* tsm2: every quantity of 004 §3.6 (zeroed otherwise) */
    struct model_occupancy occ;   /* occupancy: residency and Little's law (zeroed otherwise) */
    struct model_pipes pipes;     /* issue: the busiest SM's pipes (zeroed otherwise) */
    struct model_overlap overlap; /* overlap: its terms (zeroed otherwise) */
};

/*
 * Predicts one kernel's time with model `kind` from in. Returns RK_OK, or
 * RK_EUSAGE when a number the model needs is unknown or invalid: *why (may be
 * NULL) then receives a static lowercase reason ("flops unknown", "no l2
 * bandwidth", ...) and *out is zeroed. Deterministic: the same inputs give the
 * same bits (`roofkit model --check` relies on it).
 */
int model_predict(enum model_kind kind, const struct model_predict_in *in,
                  struct model_prediction *out /* OUT */, const char **why /* OUT */);

/* ------------------------------------------------------------------------------
 * Error statistics (predicted against measured)
 * ------------------------------------------------------------------------------ */

/* (predicted - measured) / measured, signed; NAN if measured is 0 or either is not
 * finite. */
double model_rel_error(double predicted, double measured);

/*
 * Over n pairs, absolute percentage error APE_i = 100 * |pred_i - meas_i| / |meas_i|
 * [percent]:
 *   model_mape            mean APE
 *   model_median_ape      median APE (sorts a malloc'd copy; inputs untouched)
 *   model_ape_percentile  pct-th percentile of APE, pct in [0, 100], linear
 *                         interpolation between order statistics
 * Return RK_OK, RK_EUSAGE (n == 0, NULL, a measured value of 0, a non-finite value,
 * pct out of range) or RK_ENOMEM.
 */
int model_mape(const double *pred, const double *meas, size_t n, double *out /* OUT */);
int model_median_ape(const double *pred, const double *meas, size_t n, double *out /* OUT */);
int model_ape_percentile(const double *pred, const double *meas, size_t n, double pct,
                         double *out /* OUT */);
/* How many of the n pairs have APE <= pct (the accuracy targets' "rows within 10 % / 25 %");
 * same returns as above. */
int model_ape_within(const double *pred, const double *meas, size_t n, double pct,
                     size_t *out /* OUT */);

/* The accuracy targets' statistics of n pairs: mean, median and 90th-percentile APE [%] and
 * the pairs within 10 % and 25 %, as the functions above give them. */
struct model_ape_summary {
    double mean, median, p90;
    size_t within10, within25;
};
/* Same returns as above; on an error *out is left partly filled. */
int model_ape_summarize(const double *pred, const double *meas, size_t n,
                        struct model_ape_summary *out /* OUT */);

/* pct-th percentile of x (linear interpolation; sorts a copy). RK_OK, RK_EUSAGE
 * (n == 0, non-finite value, pct outside [0, 100]) or RK_ENOMEM. */
int model_percentile(const double *x, size_t n, double pct, double *out /* OUT */);

/*
 * The median of a sample of measurements (repetition times, clock samples, a latency
 * curve's points): sorts v[0..n) in place (so v[0] and v[n - 1] are then its minimum and
 * maximum) and returns the middle value, or 0.5 * (sum of the two middle values) for an
 * even n; NaN when n == 0. v must hold no NaN. This is model_percentile(v, n, 50) written as
 * the measurement code has always computed it; the two can differ in the last bit when the
 * two middle values are more than a factor 2 apart.
 */
double model_median(double *v, size_t n);

/* Geometric mean exp(mean(log x_i)); every x_i must be finite and > 0, else RK_EUSAGE. */
int model_geomean(const double *x, size_t n, double *out /* OUT */);

/* ------------------------------------------------------------------------------
 * Comparing two samples of times (`roofkit diff`; model/ratio.c, docs/compare.md)
 * ------------------------------------------------------------------------------ */

/*
 * The ratio B/A of two samples of times (the repetitions of one kernel configuration in two
 * captures, or a profiled kernel's launches) with a confidence interval.
 *
 * With every repetition known (model_ratio_interval): the Hodges-Lehmann estimate on log
 * times, exp(median of all log b_j - log a_i), and the distribution-free interval of the
 * Mann-Whitney test inverted (Bauer 1972; R's wilcox.test(conf.int = TRUE)): the k-th smallest
 * and k-th largest of those na x nb differences, k from the exact distribution of the
 * Mann-Whitney U when na x nb <= MODEL_RATIO_EXACT_MAX, else from its normal approximation
 * with continuity correction. Its coverage holds, whatever the distribution of the times, when
 * B's times are A's scaled by a factor (a shift of log times); no seed, no resampling. Small
 * samples cannot reach every confidence: conf then says what was reached (3 repetitions a
 * side: 90 %); below MODEL_RATIO_MIN_CONF (or the asked one, if lower) there is no interval.
 *
 * From min, median and max alone (model_ratio_interval_summary; rows stored before every
 * repetition was): approximate. Each side's log-time spread is estimated from its range,
 * sigma = ln(max / min) / d2(n) (d2: model_expected_range), the median's standard error taken
 * as sqrt(pi / 2) sigma / sqrt(n) (normal times), and the interval is exp(ln(med_b / med_a)
 * -/+ z sqrt(se_a^2 + se_b^2)). An outlier widens it: it errs towards "within noise".
 */
enum model_ratio_method {
    MODEL_RATIO_NONE = 0, /* too few values for an interval: lo 0, hi +inf, conf NaN */
    MODEL_RATIO_EXACT,    /* Hodges-Lehmann, exact Mann-Whitney quantiles */
    MODEL_RATIO_NORMAL,   /* Hodges-Lehmann, normal approximation of the Mann-Whitney U */
    MODEL_RATIO_SUMMARY,  /* approximate, from min / median / max */
};
#define MODEL_RATIO_EXACT_MAX 400 /* na x nb up to which the U distribution is exact */
#define MODEL_RATIO_MIN_CONF  0.9 /* the least confidence an interval is given with */

struct model_ratio {
    double ratio;  /* the estimate of B / A */
    double lo, hi; /* the interval */
    double conf;   /* its confidence: the asked one, or less for small samples; NaN: none */
    enum model_ratio_method method;
};

/* "hodges-lehmann", "hodges-lehmann (normal)", "min/median/max", "none". */
const char *model_ratio_method_name(enum model_ratio_method m);

/*
 * a[0..na) and b[0..nb): times (any unit, the same for both), each finite and > 0; conf in
 * (0, 1), e.g. 0.95. Inputs untouched (sorted copies are made). RK_OK, RK_EUSAGE (na or nb
 * 0, a bad value, conf out of range) or RK_ENOMEM.
 */
int model_ratio_interval(const double *a, size_t na, const double *b, size_t nb, double conf,
                         struct model_ratio *out /* OUT */);

/* A sample described by its order statistics only. */
struct model_time_summary {
    double min, median, max; /* finite, 0 < min <= median <= max */
    long n;                  /* the number of values */
};
/* As model_ratio_interval from summaries; n < 2 on a side gives MODEL_RATIO_NONE (with the
 * ratio of the medians). RK_OK or RK_EUSAGE. */
int model_ratio_interval_summary(const struct model_time_summary *a,
                                 const struct model_time_summary *b, double conf,
                                 struct model_ratio *out /* OUT */);

/* What an interval says about B against A. */
enum model_change {
    MODEL_CHANGE_NOISE = 0, /* the interval holds 1 (or there is none): within noise */
    MODEL_CHANGE_FASTER,    /* hi < 1 */
    MODEL_CHANGE_SLOWER,    /* lo > 1 */
};
enum model_change model_ratio_change(const struct model_ratio *r);
/*
 * As model_ratio_change, with a run-to-run noise floor `noise` (a fraction, >= 0): the interval
 * widened to [lo / (1 + noise), hi * (1 + noise)] must exclude 1. The repetitions of one run do
 * not see what moves a whole run (clocks, temperature, the other processes of the node); the
 * floor bounds that shift (docs/compare.md). noise 0 is model_ratio_change.
 */
enum model_change model_ratio_change_floor(const struct model_ratio *r, double noise);
/* "within noise", "faster", "slower". */
const char *model_change_name(enum model_change c);

/* d2(n): the expected range of n independent standard normal values (d2(2) = 1.128,
 * d2(10) = 3.078), by numerical integration; NaN for n < 2. */
double model_expected_range(long n);
/* The standard normal quantile: x with P(Z <= x) = p, p in (0, 1); NaN outside. */
double model_normal_quantile(double p);
/* P(U <= u) for the Mann-Whitney U of samples of sizes m and n with no ties (U counts the
 * pairs where the first sample's value is the larger); for m * n <= MODEL_RATIO_EXACT_MAX
 * only, NaN above (and for m or n < 1). */
double model_mann_whitney_cdf(long u, long m, long n);

/* ------------------------------------------------------------------------------
 * Tuning (`roofkit tune`; model/tune.c, docs/model.md "tune")
 * ------------------------------------------------------------------------------ */

/*
 * Index of the value in values[0..n) (each > 0; values <= 0 are ignored) nearest to v
 * in log2 distance, ties to the smaller value: how a choice the model made over the
 * integers is mapped onto the powers of two a kernel instantiates (t2 = 3 -> 4,
 * t3 = 40 -> 16). -1 when n < 1, values is NULL or v is not finite and positive.
 */
int model_tune_nearest(double v, const long *values, int n);

/*
 * TSM2: the model's (t2, t3) onto the values a kernel instantiates (t2s[0..n2), t3s[0..n3),
 * ascending). On each axis the neighbours are the largest value <= and the smallest >= the
 * model's (the ends when it lies outside); of the (up to four) pairs, the one
 * model_tsm2_evaluate predicts fastest for prob wins, ties to the larger t3 (more loads in
 * flight: the direction §3.6.2's utilisation grows in, and a margin against the loaded DRAM
 * latency being longer than the unloaded one the model is given). On the H100's fp32
 * 10240x4x10240 the model predicts t3 = 8 and 16 alike (both saturate); rounding to the
 * nearest in log2 took 8 and cost 1.116x, the tie rule takes 16 (1.008). RK_OK, or RK_EUSAGE (bad
 * arguments, or no pair the model accepts: then the outputs are the lower neighbours).
 */
int model_tune_map_tsm2(const struct model_gpu *gpu, const struct model_tsm2_problem *prob, int t2,
                        int t3, const long *t2s, int n2, const long *t3s, int n3,
                        long *t2_out /* OUT */, long *t3_out /* OUT */);

/* Regret: time_choice / time_best [1]; NAN unless both are finite and > 0. */
double model_tune_regret(double time_choice_s, double time_best_s);

/* ISM2's thread count factor tcf (extension: 004 §5.2 leaves it to offline profiling). */
struct model_ism2_tcf_in {
    const struct model_gpu *gpu;  /* sms, regs_per_sm, smem_per_sm, max_threads_per_sm,
                                     peak_flops, bandwidth, clock_hz, mem_latency_cycles */
    enum model_kernel_family fam; /* MODEL_FAM_ISM2 or MODEL_FAM_ISM2_OPT2 (cost formula) */
    struct model_shape shape;     /* m, n, k, elem_bytes 4 or 8 */
    int t1, t2, t3;               /* threads per block, the C and A tiles (resolved) */
    int rows_per_thread;          /* rows a thread takes per tcf step (rpt; 1 for the paper) */
    int stages;                   /* groups of t3 elements of A a thread keeps in flight
                                     (the cp.async ring's depth; 1 for Alg. 6 as written) */
    int regs_per_thread;          /* of the compiled kernel; 0: unknown (no register limit) */
    double smem_per_block;        /* static + dynamic [B] */
    double bw_l2;                 /* L2 bandwidth [B/s] for the bytes_l2 term; 0 or NaN: none */
};

/* Dependent DRAM round trips before a wave of ISM2 blocks streams A: B is staged, then
 * the first group of A arrives (model/tune.c). A count of the kernel's steps, not fitted. */
#define MODEL_TCF_START_LATENCIES 2.0

/* One start of a wave (the tcf model) or of a lone resident block (overlap):
 * MODEL_TCF_START_LATENCIES x gpu's DRAM latency / clock [s]. */
double model_start_s(const struct model_gpu *gpu);

/* What the tcf model says about one tcf (model/tune.c states the equations). */
struct model_ism2_tcf_eval {
    long tcf;
    double blocks;                     /* ceil(ceil(m / (tcf rpt)) / t1) */
    int blocks_per_sm;                 /* model_blocks_per_sm() */
    double waves;                      /* blocks / (blocks_per_sm #SM) */
    double bytes_in_flight_per_thread; /* min(stages, groups) t3 e [B] */
    double util_full, util_tail;       /* Little's law of a full wave, of the last one [1] */
    double time_dram_s;                /* sum over waves of bytes / usable bandwidth [s] */
    double time_start_s;               /* waves * MODEL_TCF_START_LATENCIES DRAM latencies [s] */
    double time_l2_s;                  /* bytes_l2 / bw_l2 (0 without bw_l2) [s] */
    double time_compute_s;             /* flops / peak_flops [s] */
    double time_s;                     /* max(dram + start, l2, compute) [s] */
    enum model_bound bound;            /* dram, latency (util < 1), l2 or compute */
};

/* NULL if in is valid for the tcf model, else a static lowercase reason. */
const char *model_check_ism2_tcf(const struct model_ism2_tcf_in *in);

/* The tcf model at one tcf >= 1. RK_OK, or RK_EUSAGE (out zeroed) for invalid input or a
 * block that does not fit on an SM. */
int model_ism2_tcf_evaluate(const struct model_ism2_tcf_in *in, long tcf,
                            struct model_ism2_tcf_eval *out /* OUT */);

/* Every tcf in [1, tcf_max] (at most 10^6): the fastest, ties (1e-9 relative) to the
 * smaller tcf (more threads). RK_OK or RK_EUSAGE. */
int model_ism2_search_tcf(const struct model_ism2_tcf_in *in, long tcf_max,
                          struct model_ism2_tcf_eval *out /* OUT */);

/* ------------------------------------------------------------------------------
 * Energy (extension: Choi, Bedard, Fowler, Vuduc, "A roofline model of energy", IPDPS
 * 2013; docs/model.md "Energy"; model/energy.c)
 * ------------------------------------------------------------------------------ */

/* The arithmetic an energy per flop is fitted for: CUDA cores by precision, tensor cores. */
enum model_energy_op {
    MODEL_EOP_FP32 = 0,
    MODEL_EOP_FP64,
    MODEL_EOP_TC_BF16,
    MODEL_EOP_TC_FP16,
    MODEL_EOP_TC_FP64,
    MODEL_EOP_COUNT
};
/* "fp32", "fp64", "tc_bf16", "tc_fp16", "tc_fp64"; "?" for an invalid value. */
const char *model_energy_op_name(enum model_energy_op op);
/* The op of arithmetic of `precision` ("fp32", "bf16", ...) on the CUDA cores (tensor 0) or the
 * tensor cores (tensor 1); -1 when no op is fitted for it (tf32, fp16 on CUDA cores, NULL). */
int model_energy_op_of(const char *precision, int tensor);

/*
 * A machine's energy constants: E = sum_op flops_op x eps_flop[op] + sum_level bytes_level x
 * eps_byte[level] + p0_w x time. eps in J/FLOP and J/B (NaN: not fitted), p0_w the constant
 * power [W] (static power and whatever does not scale with flops or bytes, clocks included).
 * Bytes of a level are the bytes that level serves: a DRAM byte also crosses L2, so it costs
 * eps_byte[L2] + eps_byte[DRAM] when bytes[L2] counts it too (the cost formulas' convention).
 */
struct model_energy {
    double eps_flop[MODEL_EOP_COUNT];
    double eps_byte[MODEL_LEVEL_COUNT];
    double p0_w;
};

/* One kernel's work for the energy model, or one measured point of a fit. */
struct model_energy_work {
    double flops[MODEL_EOP_COUNT];   /* [FLOP]; 0 where none (NaN refused) */
    double bytes[MODEL_LEVEL_COUNT]; /* [B]; 0 where none; NaN: unknown (a level without an
                                        eps is then skipped, with one fitted refused) */
    double time_s;                   /* [s], > 0 */
    double energy_j;                 /* measured [J] (a fit's point; the prediction ignores it) */
};

/*
 * The energy e predicts for w [J] into *joules: every term whose work is > 0 needs its eps
 * (RK_EUSAGE, *why "no energy per flop for fp64" / "no energy per byte for l2"); a level whose
 * bytes are NaN or whose eps is NaN with 0 bytes adds nothing; L1 bytes are not charged unless
 * eps_byte[L1] is known (the fit has no L1 sweep). RK_OK, or RK_EUSAGE with *why (may be NULL)
 * a static reason and *joules NaN (time not > 0, p0 unknown, a missing eps).
 */
int model_energy_predict(const struct model_energy *e, const struct model_energy_work *w,
                         double *joules /* OUT */, const char **why /* OUT */);

/*
 * Least squares of the energy model on n measured points (all fitted jointly): the unknowns
 * are p0_w and the eps of every op with flops > 0 and every level with bytes > 0 in some
 * point (others NaN in *out). Each point's equation is divided by its measured energy, so that
 * the fit minimises the sum of squared RELATIVE errors (a 1 mJ kernel counts as much as a 1 J
 * one). Solved by Householder QR with the columns scaled to unit norm.
 * Refused (RK_EUSAGE, *why a static reason, *out all NaN): n < 1 or a NULL array; a point
 * with a time or energy not finite and > 0, or a NaN or negative flops or bytes; fewer points
 * than unknowns; columns the points cannot tell apart (rank-deficient: "the points cannot
 * separate ..."); a fitted coefficient negative ("... fitted negative: the sweep does not
 * constrain it"); RK_ENOMEM ("out of memory"). residual (may be NULL) receives each point's
 * (predicted - measured) / measured.
 * clamped NULL: a negative coefficient refuses the fit as above. Else a bounded fit: the most
 * negative unknown is fixed at 0 (its bound) and the others fitted again, until none is
 * negative; *clamped receives the unknowns so fixed, bit c for column c (the ops 0..4, the
 * levels 5..8 in enum model_level_id's order, p0 9); 0 when none was.
 */
int model_energy_fit(const struct model_energy_work *pts, int n, struct model_energy *out /* OUT */,
                     double *residual /* OUT, n */, unsigned *clamped /* OUT, may be NULL */,
                     const char **why /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* RK_MODEL_H */
