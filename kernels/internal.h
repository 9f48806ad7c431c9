/*
 * internal.h - what the files of kernels/ share and nothing outside includes:
 * the launcher interface that each registry entry points to (kernels.h calls it
 * `impl`), and the names of the launchers defined in the .cu files. Cross-file
 * names start with kern_ (curl's Curl_ convention); everything else is static.
 *
 * A launcher sees the inputs as plain device buffers in the layout its registry
 * entry declares, tightly packed:
 *   column-major: A[i + j*m], B[j + p*k], C[i + p*m]
 *   row-major:    A[i*k + j], B[j*n + p], C[i*n + p]
 * and computes C = A * B (alpha = 1, beta = 0), writing every element of C.
 */
#ifndef RK_KERNELS_INTERNAL_H
#define RK_KERNELS_INTERNAL_H

#include "kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kern_args {
    int prec; /* enum kernels_precision */
    long m, n, k;
    const void *a, *b; /* inputs of the precision */
    void *c;           /* output, m*n elements */
    const long *p;     /* resolved parameter values, registry order */
    void *ws;          /* workspace of ops->workspace() bytes, or NULL */
    size_t ws_bytes;
    cudaStream_t stream;
    cublasHandle_t cublas;
    const struct rk_gpu *dev;
    const struct model_gpu *gpu; /* measured ceilings of the precision (kernels_session_set_gpu),
                                    or NULL: what the entry point tsm2 chooses with */
    char *note;                  /* NULL, or room for note_len bytes: a resolve may say why it
                                    chose what it did (stored in the params JSON as "why") */
    size_t note_len;
};

/* What one timed call launched, for the measurement row. */
struct kern_launch {
    unsigned grid[3], block[3];
    size_t dyn_smem;  /* dynamic shared memory per block */
    const void *func; /* the __global__ function for cudaFuncGetAttributes, or NULL */
    int launches;
};

/* info for one launch of func on a gx x gy grid of bx x by blocks with smem bytes of dynamic
 * shared memory (a launcher adds its further launches to info->launches). */
static inline void kern_launched(struct kern_launch *info, const void *func, unsigned gx,
                                 unsigned gy, unsigned bx, unsigned by, size_t smem)
{
    info->grid[0] = gx;
    info->grid[1] = gy;
    info->grid[2] = 1;
    info->block[0] = bx;
    info->block[1] = by;
    info->block[2] = 1;
    info->dyn_smem = smem;
    info->func = func;
    info->launches = 1;
}

struct kern_ops {
    /*
     * Checks the parameters (p, in registry order) for the precision and, when the
     * shape is known (a != NULL), replaces AUTO zeros by the run-time choice.
     * Returns RK_OK or RK_EUSAGE with the reason in why (nothing printed).
     */
    int (*resolve)(const struct kern_args *a, long *p, char *why, size_t why_len);
    /* Workspace bytes for these arguments (p resolved); NULL means none. */
    size_t (*workspace)(const struct kern_args *a);
    /* Untimed preparation (padding the inputs into the workspace); may be NULL. */
    int (*prepare)(const struct kern_args *a);
    /* The timed part: enqueue on a->stream, fill *info. Checks launch errors. */
    int (*launch)(const struct kern_args *a, struct kern_launch *info);
    /* Untimed completion (copying C out of a padded buffer); may be NULL. */
    int (*finish)(const struct kern_args *a);
    /* Tolerance on the relative error; NULL: the precision's default (session.cu). */
    double (*tolerance)(const struct kern_args *a);
    /* For a kernel that does not compute A B (move): enqueues on a->stream, in `blocks` blocks,
     * the comparison of C with what it must hold, adding to the device's stats[0..2] as
     * session.cu's verify_kernel does. NULL: C is compared with the float64 cuBLAS product. */
    int (*check)(const struct kern_args *a, double *stats, int blocks);
};

/* ceil(a / b) for a >= 0, b > 0: blocks to cover a elements, b a block. */
static inline long kern_ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

/* Element size of a precision. */
static inline size_t kern_elem(int prec)
{
    return prec == KERNELS_FP64 ? 8 : 4;
}

/*
 * TSM2 V3 / ISM2 opt. 1 (the kernels with apipe and rpt): apipe = 1 runs A through the
 * cp.async ring in shared memory, and only the ring puts rpt rows on a thread. tsm2.cu
 * launches by this rule and registry.c gives it to the cost model (model_params a_staged,
 * rows_per_thread), so that the two cannot drift apart.
 */
static inline int kern_tsm2_ring(long apipe)
{
    return apipe == 1;
}

/*
 * TSM2 V3 with apipe = 3 (tsm2_stream.cu): A straight to registers, a vector of rows per
 * thread (kern_tsm2_stream_rows), every column of C in one pass
 * (t2 = n, 1 to KERN_TSM2_STREAM_MAXN), B through shared memory in stages of
 * KERN_TSM2_STREAM_KC values of k; t3 is the granularity of the split of k.
 */
#define KERN_TSM2_STREAM_MAXN 32
#define KERN_TSM2_STREAM_KC   64
#define KERN_TSM2_STREAM_T3   16
static inline int kern_tsm2_stream(long apipe)
{
    return apipe == 3;
}
/* Rows per thread: fp32 4 up to 12 columns, 2 above; fp64 2 up to 20, 1 above (the
 * accumulators' registers: more spilled or left one block per SM). */
#define KERN_TSM2_STREAM_ROWS(fp64, t2) ((fp64) ? ((t2) <= 20 ? 2 : 1) : (t2) <= 12 ? 4 : 2)
static inline long kern_tsm2_stream_rows(int prec, long t2)
{
    return KERN_TSM2_STREAM_ROWS(prec == KERNELS_FP64, t2);
}
/* The kernel for t2 columns (a tsm2.cu split-k kernel's signature), NULL when not
 * instantiated; its dynamic shared memory [bytes]. */
const void *kern_tsm2_stream_kernel(int prec, long t2);
size_t kern_tsm2_stream_smem(int prec, long t2);

/*
 * apipe = 4 (tsm2_stream.cu): the same stream of A multiplied on the tensor cores, fp64 by
 * DMMA (m16n8k4, sm_90), fp32 by 3xTF32 (m16n8k8, fp32's accuracy); n in tiles of 8 up to 32;
 * kernel and shared memory as above. rpt is the rows a thread loads, 2 or 4: a warp owns rpt / 2
 * tiles of 16 rows (8 rpt rows). kern_tsm2_tc_rpt gives the default: fp64 2 (90 registers at
 * 32 columns against 150 with 4, more blocks an SM: 1-5 % faster on the H100), fp32 4.
 */
static inline long kern_tsm2_tc_rpt(int prec)
{
    return prec == KERNELS_FP64 ? 2 : 4;
}
/* Rows of A a warp multiplies on the tensor cores: rpt / 2 tiles of 16. */
static inline long kern_tsm2_tc_warp_rows(long rpt)
{
    return 8 * rpt;
}
static inline int kern_tsm2_dmma(long apipe)
{
    return apipe == 4;
}
/* A streamed straight to registers, on CUDA cores (apipe 3) or tensor cores (4). */
static inline int kern_tsm2_streams_a(long apipe)
{
    return kern_tsm2_stream(apipe) || kern_tsm2_dmma(apipe);
}
/* The tensor-core stream kernel (tsm2_stream.cu) for t2 columns and rpt rows a thread; in fp32
 * m picks how many steps of A it keeps in flight at 25-32 columns (2 below 16384 rows, else 4).
 * NULL outside t2 1-32, rpt 2 or 4. */
const void *kern_tsm2_tc_kernel(int prec, long t2, long rpt, long m);
/* fp32 3xTF32 below this many rows keeps 2 steps of A in flight at 25-32 columns as well
 * (tsm2_stream.cu, tf32x3_steps) and runs 17-32 columns at t1 256 (tsm2_auto.c). */
#define KERN_TSM2_TF32X3_FEW_ROWS 16384L
size_t kern_tsm2_tc_smem(int prec, long t2);
/* One tile a warp (rpt 2) and k within one stage (KERN_TSM2_STREAM_KC), ISM2's shapes: B staged
 * once a block, each warp walking row tiles (tsm2_stream.cu, tsm2_dmma_rows_kernel and
 * tsm2_tf32x3_rows_kernel), launched with at most KERN_TSM2_ROWS_BLOCKS blocks an SM; its
 * shared memory [bytes]. */
#define KERN_TSM2_ROWS_BLOCKS 16
/* fp64's ring, how A reaches the tensor cores: KERN_TSM2_RING_NONE in registers
 * (tsm2_dmma_rows_kernel); KERN_TSM2_RING_ASYNC through a ring of KERN_TSM2_RING_STAGES tiles of
 * 16 rows a warp in shared memory filled by cp.async (tsm2_dmma_ring_kernel), for warps that walk
 * at least that many tiles; KERN_TSM2_RING_BULK through a block's ring filled, and C written, by
 * Hopper's bulk copies (tsm2_dmma_bulk_kernel), m even and from KERN_TSM2_BULK_ROWS rows, where
 * an H100 measured it ahead of both (docs/model.md "Hopper's bulk copies"). fp32 ignores it.
 * kern_tsm2_tc_rows_kernel takes m for the walks in registers: at odd m their instantiations that
 * load and store the fragments' own rows. */
#define KERN_TSM2_RING_STAGES 4
#define KERN_TSM2_RING_NONE   0
#define KERN_TSM2_RING_ASYNC  1
#define KERN_TSM2_RING_BULK   2
#define KERN_TSM2_BULK_ROWS   500000L
#define KERN_TSM2_BULK_MAXK   32 /* its stage of B; above, the cp.async ring */
const void *kern_tsm2_tc_rows_kernel(int prec, long t2, int ring, long m);
/* Whether kern_tsm2_tc_rows_kernel picks a walk's odd-m instantiation: fp32's walk at odd m,
 * fp64's where A stays in registers (ring NONE). */
static inline int kern_tsm2_walk_odd_at(int prec, int ring, long m)
{
    return m % 2 != 0 && (prec == KERNELS_FP32 || ring == KERN_TSM2_RING_NONE);
}
/* Whether V3 with resolved parameters p runs a row walk's odd-m instantiation on a's shape. */
int kern_tsm2_walk_odd(const struct kern_args *a, const long *p);
size_t kern_tsm2_tc_rows_smem(int prec, long t2, long k, long threads, int ring);

/* ISM2's kernels (ism2.cu) for a (t2, t3) tile: opt. 1 with B whole in shared memory (apipe 2)
 * and opt. 2; NULL when not instantiated. Arguments (A, B, C, m, n, k). */
const void *kern_ism2_rows_kernel(int prec, long t2, long t3);
const void *kern_ism2_opt2_kernel(int prec, long t2, long t3);
/* ISM2 opt. 1 with rows in vectors (apipe 3, ism2.cu ism2_vec_kernel): k <= KERN_ISM2_VEC_MAXK,
 * t3 the K covering k that the kernel is instantiated for (kern_ism2_vec_k), t2 = n (every column
 * in one pass), rpt the rows of a vector (kern_ism2_vec_rows), tcf the vectors a thread walks; NULL
 * for a t3 not instantiated. */
#define KERN_ISM2_VEC_MAXK 32
/* ISM2 opt. 1 at k <= 2 (apipe 5, ism2.cu ism2_outer_kernel): C = A B an outer product or a
 * rank-2 update, one vector of rows a thread at a time, every column of its slice stored from
 * it; the vector kernel's t2 (slices of the columns), rpt and tcf, t3 = k. */
#define KERN_ISM2_OUTER 5
static inline int kern_ism2_outer(long apipe)
{
    return apipe == KERN_ISM2_OUTER;
}
static inline int kern_ism2_vec(long apipe)
{
    return apipe == 3 || kern_ism2_outer(apipe);
}
static inline long kern_ism2_vec_rows(int prec)
{
    return 16 / (long)kern_elem(prec); /* the kernel's V: one 16-byte vector */
}
/* The vectors of rows a thread has in flight at once: 8 / t3, at least one (about 128 bytes of
 * A; 96-512 from t3 = 6). */
static inline long kern_ism2_vec_inflight(long t3)
{
    return t3 >= 8 ? 1 : 8 / (t3 < 1 ? 1 : t3);
}
/* The K the vector kernel is instantiated for (ism2.cu's vec_table instantiates each). */
#define KERN_ISM2_VEC_KS 1, 2, 3, 4, 6, 8, 12, 16, 24, 32
/* The smallest of them that covers k (the largest for k past them). */
static inline long kern_ism2_vec_k(long k)
{
    static const long ks[] = {KERN_ISM2_VEC_KS};
    const int nk = (int)(sizeof ks / sizeof ks[0]);
    for (int i = 0; i < nk - 1; i++)
        if (k <= ks[i])
            return ks[i];
    return ks[nk - 1];
}
/* The vector kernel's layouts for m not a multiple of the vector (a column of A or C not 16-byte
 * aligned): ROWS (vectors of V consecutive rows, element by element where a column is not
 * aligned; the only layout at aligned m), SIDE (vector v is V single rows 32 apart, a warp's 32
 * vectors 32 V consecutive rows: its loads and stores of a column are rows side by side) and LINE
 * (SIDE's rows, C stored in whole 128-byte lines, its values rotated between lanes: ism2.cu
 * store_lines; whole warps only). */
#define KERN_ISM2_VEC_ROWS 0
#define KERN_ISM2_VEC_SIDE 1
#define KERN_ISM2_VEC_LINE 2
/* From this many rows the vector kernel at unaligned m may take ROWS or LINE, and the
 * outer-product kernel LINE (where n >= 8, k <= 2, as below). */
#define KERN_ISM2_VEC_WIDE_ROWS 300000L
const void *kern_ism2_vec_kernel(int prec, long t3, int layout);
/*
 * AHEAD, the vector kernel at aligned m with a thread's next round of A copied (cp.async, 16 bytes
 * a column) into its own slots of shared memory while this round's columns are summed and stored:
 * fp32 only, instantiated for K 12-32. Where a thread walks several rounds (tcf >= 2) and a
 * round's columns are many (t2 >= K / 2): with one vector a thread in flight (U = 1 from K = 8) it
 * otherwise waits for each round's A before its FMAs. On an H100 (kbench, the entry point, fp32
 * m 300000-2000000 x n 1-32 x k 12-32, each way twice in one call): 10^6 x 16 x 16 45.8 -> 41.7
 * us, x 32 x 16 71.3 -> 67.0, x 16 x 32 73.4 -> 70.6, x 24 x 24 74.2 -> 71.1, x 32 x 32 103.2
 * -> 101.2, 500000 x 24 / 32 x 24 0.91 / 0.89 of the time; with t2 >= K / 2 0.88-1.01 of it,
 * with fewer columns up to 1.10x slower (10^6 x 4 x 24; a short round does not hide the copy's
 * longer way through shared memory). Not in fp64: at K 16 mostly 1.02-1.12x slower, at K 12
 * 0.89-0.96 at 300000-500000 rows but 1.04-1.15x at 10^6. One round a thread (tcf 1): nothing
 * to overlap, up to 1.13x slower (fp32 10^7 x 32 x 32).
 */
#define KERN_ISM2_VEC_AHEAD      3
#define KERN_ISM2_VEC_AHEAD_MINK 12
static inline int kern_ism2_vec_ahead_rule(int prec, long m, long t2, long t3, long tcf)
{
    return prec == KERNELS_FP32 && m % kern_ism2_vec_rows(prec) == 0 &&
           t3 >= KERN_ISM2_VEC_AHEAD_MINK && tcf >= 2 && 2 * t2 >= t3;
}
/* Whether the vector kernel with resolved parameters p runs AHEAD on a's shape: the rule, and its
 * slots leave as many blocks an SM as without them (else ROWS). */
int kern_ism2_vec_ahead(const struct kern_args *a, const long *p);
/*
 * The vector kernel's layout for a shape and t1 at m not a multiple of the vector: SIDE, but from
 * KERN_ISM2_VEC_WIDE_ROWS rows ROWS where k > 16 and n < k, and LINE in fp32 where k <= 2 and
 * n >= 8 (C's stores the most of the bytes). On an H100 (kbench, m = 100003, 1000002, 1000003,
 * 10000001 x n 2, 8, 32 x k 1, 2, 12, 24, each layout in one call, against ROWS everywhere but
 * the 100003-row shapes): SIDE fp32 1000003 x 8 x 12 41.4 -> 26.7 us, x 32 x 24 116.5 -> 102.5,
 * 10000001 x 8 x 12 373 -> 292, but 1000003 x 2 x 24 37.1 -> 40.1 and 10000001 x 8 x 24 472 ->
 * 491 (so ROWS there); LINE against SIDE fp32 10000001 x 32 x 1 602 -> 551 us (cuBLAS 563), x 32
 * x 2 706 -> 612, 1000003 x 32 x 2 63.4 -> 55.6, but 1000003 x 32 x 12 71.9 -> 83.2 and fp64
 * 1000003 x 8 x 2 28.8 -> 34.8 (V + 1 stores, a shuffle each, where SIDE has V).
 */
static inline int kern_ism2_vec_layout(int prec, long m, long n, long k, long t1)
{
    if (m % kern_ism2_vec_rows(prec) == 0)
        return KERN_ISM2_VEC_ROWS;
    if (m >= KERN_ISM2_VEC_WIDE_ROWS && k > 16 && n < k)
        return KERN_ISM2_VEC_ROWS;
    if (m >= KERN_ISM2_VEC_WIDE_ROWS && prec == KERNELS_FP32 && k <= 2 && n >= 8 && t1 % 32 == 0)
        return KERN_ISM2_VEC_LINE;
    return KERN_ISM2_VEC_SIDE;
}
/* The outer-product kernel for k = 1 or 2, its own instantiation where m is not a multiple of the
 * vector. */
const void *kern_ism2_outer_kernel(int prec, long m, long k);
/* Rows of A a thread owns: rpt through the ring (apipe 1), V3's stream and ISM2 opt. 1's vectors
 * (both apipe 3) and outer product (apipe 5), else one. */
static inline long kern_tsm2_rows(long apipe, long rpt)
{
    return (kern_tsm2_ring(apipe) || kern_tsm2_stream(apipe) || kern_ism2_outer(apipe)) && rpt > 1
               ? rpt
               : 1;
}

/*
 * The extra column tiles of the cp.async kernel (kernels.h KERNELS_TSM2_XCOLS), fp32 only:
 * each t2 is instantiated with one t3 and one rpt, by this rule (tsm2.cu instantiates with it,
 * the entry point and the tune space read it): groups of 16 and two rows per thread up to 8
 * columns, groups of 8 and two rows above (four rows would take 4 x 24 accumulators).
 */
#define KERN_XCOLS_T3(t2)  ((t2) <= 8 ? 16 : 8)
#define KERN_XCOLS_RPT(t2) 2

/* 1 with *t3 and *rpt when t2 is one of KERNELS_TSM2_XCOLS, else 0. */
static inline int kern_tsm2_xcols_config(int prec, long t2, long *t3, long *rpt)
{
    static const int cols[] = {KERNELS_TSM2_XCOLS};
    if (prec != KERNELS_FP32) /* not instantiated: kernels.h says why */
        return 0;
    for (int i = 0; i < (int)(sizeof cols / sizeof cols[0]); i++)
        if (cols[i] == t2) {
            *t3 = KERN_XCOLS_T3(t2);
            *rpt = KERN_XCOLS_RPT(t2);
            return 1;
        }
    return 0;
}

/*
 * TSM2 V3's column blocks (tsm2.cu): the slot of its parameter vector past its six registry
 * parameters, which only the entry point tsm2 sets (its parameter cblocks); 0 or 1 elsewhere:
 * one block takes every column tile of its rows, as the paper's. kernels_check and the
 * session zero the slots past a kernel's parameters.
 */
#define KERN_TSM2_V3_CBLOCKS 6

/* The variants behind the entry point tsm2 (tsm2.cu's order). */
enum kern_tsm2_variant { KERN_TSM2_V2 = 0, KERN_TSM2_V3, KERN_ISM2_OPT1, KERN_ISM2_OPT2 };

/*
 * Resident blocks per SM and registers per thread of a variant's kernel with resolved
 * parameters p (tsm2.cu; the occupancy calculator of the CUDA runtime). RK_OK, or
 * RK_EUSAGE when the kernel is not instantiated or a block does not fit.
 */
int kern_tsm2_occupancy(const struct kern_args *a, int variant, const long *p,
                        int *blocks_per_sm /* OUT */, int *regs /* OUT */);

/* Appends extra ("key":value pairs) to the JSON object in buf before its closing brace when
 * it fits; else leaves buf as it was (registry.c). */
void kern_json_append(char *buf, size_t len, const char *extra);

/* Formats a reason into why; returns RK_EUSAGE. */
int kern_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Checks cudaGetLastError() after a launch; prints and returns RK_ECUDA on failure. */
int kern_check_launch(const char *what);

/*
 * RK_EUSAGE (printed) when a block of `threads` exceeds what `func` allows with its
 * registers: a configuration to skip, not a CUDA failure.
 */
int kern_check_block(const void *func, unsigned threads, const char *name);

/* Raises a kernel's dynamic shared memory limit when it needs more than 48 KB. */
int kern_smem_optin(const void *func, size_t bytes, const struct rk_gpu *dev);

/* The launchers (tsm2.cu, tsm2_v01.cu, seed000.cu, seed001.cu, seed002.cu, seed003.cu, regtile.cu,
 * cublas.c). */
extern const struct kern_ops kern_tsm2_v0, kern_tsm2_v1, kern_tsm2_v2, kern_tsm2_v3;
extern const struct kern_ops kern_ism2_opt1, kern_ism2_opt2;
extern const struct kern_ops kern_tsm2_auto; /* tsm2_auto.c: the entry point tsm2 */

/* The variant behind the entry point tsm2 with vp its parameter vector (KERNELS_MAX_PARAMS),
 * when k is the entry point with a variant in p; else NULL (tsm2_auto.c). */
const struct kernels_kernel *kern_tsm2_entry_variant(const struct kernels_kernel *k, const long *p,
                                                     long *vp /* OUT */);
extern const struct kern_ops kern_naive, kern_stso, kern_stmo, kern_stmvb;
extern const struct kern_ops kern_smem001, kern_blocktile1d;
extern const struct kern_ops kern_rect_padded, kern_rect_border;
extern const struct kern_ops kern_tiled003;
extern const struct kern_ops kern_regtile;
extern const struct kern_ops kern_cublas_sgemm, kern_cublas_dgemm, kern_cublas_gemmex;
extern const struct kern_ops kern_move; /* move.cu: the shape's bytes moved, nothing computed */

#ifdef __cplusplus
}
#endif
#endif /* RK_KERNELS_INTERNAL_H */
