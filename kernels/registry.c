/*
 * registry.c - the table of roofkit's kernels (kernels.h): for each
 * kernel its family, layout, precisions, parameters with defaults and ranges, the
 * model/ cost formula that describes it, the seed section it comes from, and its
 * launcher (internal.h). `roofkit list kernels` prints this table and
 * `roofkit run` walks it (nvbandwidth's test list and BabelStream's kernel table
 * are the models: one entry per kernel, data rather than branches). The suites
 * that run these kernels on shapes are in suites.c.
 *
 * Adding a kernel: write its kern_ops in a .cu file (internal.h lists them), add
 * an entry here and, when its parameters are not those of an existing family, a
 * case in kernels_model_params(); the GPU test (tests/kernels/) picks it up from the table.
 */
#include "common.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The tables below are data: kept one entry per few lines, not clang-formatted. */
/* clang-format off */
#define FP32 KERNELS_PREC_BIT(KERNELS_FP32)
#define FP64 KERNELS_PREC_BIT(KERNELS_FP64)
#define AUTO KERNELS_PARAM_AUTO
#define POW2 KERNELS_PARAM_POW2

#define P_BLOCK(def) {"block_size", def, 1, 32, 0, "threads per block side (block_size^2 threads)"}
#define P_T1 {"t1", 128, 32, 1024, 0, "tile_size_B: rows of B per tile = threads per block"}
#define P_T2                                                                                       \
    {"t2", 0, 0, 16, AUTO | POW2,                                                                  \
     "tile_size_C: columns of C per pass (1,2,4,8,16; 0: smallest >= n)"}
#define P_T2X                                                                                      \
    {"t2", 0, 0, 32, AUTO,                                                                         \
     "tile_size_C: columns of C per pass (1,2,4,8,16; fp32 with apipe = 1 also 3,5,6,7,20,24 "   \
     "with their t3 and rpt; apipe = 3 any n up to 32, one pass; 0: smallest power of two "        \
     ">= n, n with apipe = 3)"}
#define P_T2R                                                                                      \
    {"t2", 0, 0, 32, AUTO,                                                                         \
     "tile_size_C: columns of C per pass (1,2,4,8,16; with apipe = 2 also 24, 32 at t3 >= 4; "   \
     "0: smallest power of two >= n)"}
#define P_APIPE                                                                                    \
    {"apipe", 1, 0, 4, 0,                                                                          \
     "1: next A groups via a 4-stage cp.async ring in shared memory (H100 extension); 0: "        \
     "registers, Alg. 4; 3: A streamed to registers, 128 bytes a thread in flight, every "       \
     "column in one pass, B staged by cp.async; 4: the same on tensor cores (fp64 DMMA, fp32 "   \
     "3xTF32) "                                                                                  \
     "(H100 extensions; 2 is ISM2's)"}
#define P_APIPE_ISM2                                                                               \
    {"apipe", 2, 0, 5, 0,                                                                          \
     "2: B whole in shared memory once per block, the next group of A in registers (H100 "      \
     "extension; 1 when B does not fit); 3: k <= 32, rows in 16-byte vectors, 128 bytes of A a " \
     "thread in flight, every column in one pass (H100 extension); 5: k <= 2, the outer "        \
     "product or rank-2 update, a 16-byte vector of rows a thread (H100 extension); 1: cp.async ring as in TSM2 " \
     "V3; 0: registers, Alg. 4"}
#define P_RPT                                                                                      \
    {"rpt", 0, 0, 4, AUTO,                                                                         \
     "rows per thread with apipe = 1 (1, 2 or 4; 0: TSM2 4 for fp32 at n > 8, else 2; ISM2 1; " \
     "apipe = 3 sets it by precision and n; apipe = 4: 2 or 4, one or two tiles of 16 rows a "   \
     "warp, 0: fp64 2, fp32 4; ISM2 with apipe = 3: a 16-byte vector's rows, fp32 4, fp64 2); "  \
     "1 is the paper's"}
#define P_T3(def) {"t3", def, 1, 16, POW2, "tile_size_A: elements of A loaded at a time (1..16)"}

static const struct kernels_kernel registry[] = {
    {"naive", "naive", MODEL_FAM_NAIVE, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {P_BLOCK(16)}, "000 §3 Table 1",
     "one thread per output, A and B read from global memory", &kern_naive},
    {"stso", "stso", MODEL_FAM_STSO, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {P_BLOCK(32)}, "000 §1.1",
     "single thread single output: BLOCK_SIZE^2 tiles of A and B in shared memory", &kern_stso},
    {"stmo", "stmo", MODEL_FAM_STMO, KERNELS_ROW_MAJOR, FP32 | FP64, 2,
     {P_BLOCK(32),
      {"op_per_thread", 4, 1, 8, POW2, "outputs per thread, STRIDE rows apart (1,2,4,8)"}},
     "000 §1.2", "single thread multiple outputs (OP_PER_THREAD per thread)", &kern_stmo},
    {"stmvb", "stmvb", MODEL_FAM_STMVB, KERNELS_ROW_MAJOR, FP32 | FP64, 2,
     {P_BLOCK(16), {"parallel", 4, 1, 8, POW2, "blocks per thread in each direction (1,2,4,8)"}},
     "000 §1.3, §6",
     "single thread multiple vertical blocks: PARALLEL^2 outputs per thread", &kern_stmvb},
    {"smem_001", "smem_tiled", MODEL_FAM_SMEM_TILED, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {P_BLOCK(32)}, "001 \"Copying to the Shared Memory\"",
     "shared-memory SGEMM, 1D block of BlockSize^2 threads, one output each", &kern_smem001},
    {"blocktile1d_001", "blocktile_1d", MODEL_FAM_BLOCKTILE_1D, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {{"n_entries", 8, 4, 8, POW2, "outputs per thread along m (4 or 8); BM=BN=64, BK=8"}},
     "001 \"Kernel 1D Blocktiling\"",
     "1D block tiling: a column of n_entries outputs per thread in registers", &kern_blocktile1d},
    {"tiled_003", "tiled", MODEL_FAM_TILED, KERNELS_ROW_MAJOR, FP32 | FP64, 5,
     {{"tiledim_m", 128, 1, 1024, 0, "TILEDIM_M: rows of C per block"},
      {"tiledim_n", 64, 1, 1024, 0, "TILEDIM_N: columns of C per block"},
      {"tiledim_k", 16, 1, 256, 0, "TILEDIM_K: step along k"},
      {"tilescale_m", 8, 1, 8, POW2, "TILESCALE_M: outputs per thread along m (by = TILEDIM_M/it)"},
      {"tilescale_n", 4, 1, 4, POW2, "TILESCALE_N: outputs per thread along n (bx = TILEDIM_N/it)"}},
     "003 Q1.A, Q2.A-C", "tiled GEMM with TILEDIM/TILESCALE and thread-block geometry",
     &kern_tiled003},
    {"rect_padded", "rect_padded", MODEL_FAM_RECT_PADDED, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {P_BLOCK(32)}, "002 §III Listing 1",
     "rectangular GEMM on operands zero-padded to multiples of the block (padding untimed)",
     &kern_rect_padded},
    {"rect_border", "rect_border", MODEL_FAM_RECT_BORDER, KERNELS_ROW_MAJOR, FP32 | FP64, 1,
     {P_BLOCK(32)}, "002 §III Algorithm 2",
     "rectangular GEMM with border checks in the kernel", &kern_rect_border},
    {"tsm2_v0", "tsm2", MODEL_FAM_TSM2_V0, KERNELS_COL_MAJOR, FP32 | FP64, 1, {P_T1},
     "004 §3.2 Alg. 1, §4.2 V0", "TSM2 V0: one thread per row of A, inner product", &kern_tsm2_v0},
    {"tsm2_v1", "tsm2", MODEL_FAM_TSM2_V1, KERNELS_COL_MAJOR, FP32 | FP64, 1, {P_T1},
     "004 §3.2 Alg. 2, §4.2 V1", "TSM2 V1: one thread per row of A, outer product",
     &kern_tsm2_v1},
    {"tsm2_v2", "tsm2", MODEL_FAM_TSM2_V2, KERNELS_COL_MAJOR, FP32 | FP64, 4,
     {P_T1, P_T2, P_T3(8),
      {"ksplit", 0, 0, 1024, AUTO,
       "blocks sharing k (roofkit's H100 extension; 1: the paper; 0: one full wave)"}},
     "004 §3.3-3.4 Alg. 3, §4.2 V2", "TSM2 V2: outer product, tile of B in shared memory",
     &kern_tsm2_v2},
    {"tsm2_v3", "tsm2", MODEL_FAM_TSM2_V3, KERNELS_COL_MAJOR, FP32 | FP64, 6,
     {{"t1", 0, 0, 1024, AUTO,
       "tile_size_B: rows of B per tile = threads per block (0: 256 with apipe = 1 for fp32 and "
       "for fp64 at n > 8, else 128)"},
      P_T2X,
      {"t3", 0, 0, 16, AUTO | POW2,
       "tile_size_A: elements of A loaded at a time (0: 16; 8 at n > 8)"},
      {"ksplit", 0, 0, 1024, AUTO,
       "blocks sharing k (roofkit's H100 extension; 1: the paper; 0: one full wave)"},
      P_APIPE, P_RPT},
     "004 §3.5 Alg. 4, §4.2 V3", "TSM2 V3: V2 plus prefetching of A and B", &kern_tsm2_v3},
    {"tsm2", "tsm2", MODEL_FAM_TSM2_V3, KERNELS_COL_MAJOR, FP32 | FP64, 8,
     {{"variant", 0, 0, 4, AUTO,
       "1 tsm2_v2, 2 tsm2_v3, 3 ism2_opt1, 4 ism2_opt2 (then the variant's parameters); 0: "
       "chosen with the model for the shape and this GPU's ceilings"},
      {"t1", 0, 0, 1024, AUTO, "the variant's t1 (0: its default)"},
      {"t2", 0, 0, 32, AUTO, "the variant's t2 (0: its default)"},
      {"t3", 0, 0, 16, AUTO, "the variant's t3 (0: its default)"},
      {"split", 0, 0, 1000000, AUTO, "the variant's ksplit (TSM2) or tcf (ISM2) (0: its choice)"},
      {"apipe", -1, -1, 5, 0, "the variant's apipe (-1: its default; 0 for V2 and opt. 2)"},
      {"rpt", 0, 0, 4, AUTO, "the variant's rpt (0: its choice; 1 for V2 and opt. 2)"},
      {"cblocks", 0, 0, 8, AUTO,
       "tsm2_v3 with apipe = 1: column blocks, the blocks of a row tile side by side, each its "
       "share of the column tiles, A read once from DRAM (0, 1: the tiles are passes in a block)"}},
     "004 §3.6, §4.2, §5.2",
     "TSM2/ISM2 entry point: runs the variant and parameters chosen for the shape and GPU "
     "(costed as that variant)",
     &kern_tsm2_auto},
    {"ism2_opt1", "ism2", MODEL_FAM_ISM2, KERNELS_COL_MAJOR, FP32 | FP64, 6,
     {P_T1, P_T2R,
      {"t3", 0, 0, 32, AUTO,
       "tile_size_A: elements of A loaded at a time (0: 8, 4 at k <= 4; with apipe 1: 4, 8 or "
       "16 >= k, 8 for fp64 at k > 8; with apipe 3 the least of 1, 2, 3, 4, 6, 8, 12, 16, 24, "
       "32 >= k; 24 and 32 with apipe 3 only)"},
      {"tcf", 0, 0, 1000000, AUTO,
       "thread count factor: m/tcf threads (apipe 3: m/(rpt tcf)); 0: 2 with apipe 2, 1 for "
       "m < 2 x t1 x SMs; otherwise one full wave, at most 16)"},
      P_APIPE_ISM2, P_RPT},
     "004 §5.2 Alg. 6", "ISM2 optimisation 1: TSM2 V3 with m/tcf threads looping over rows",
     &kern_ism2_opt1},
    {"ism2_opt2", "ism2", MODEL_FAM_ISM2_OPT2, KERNELS_COL_MAJOR, FP32 | FP64, 4,
     {P_T1, P_T2, P_T3(8),
      {"tcf", 0, 0, 1000000, AUTO, "thread count factor: m/tcf threads (0: one full wave)"}},
     "004 §5.2 Alg. 7",
     "ISM2 optimisation 2: B tile loaded once, rows interleaved, C and A prefetched",
     &kern_ism2_opt2},
    {"regtile", "regtile", MODEL_FAM_REGTILE, KERNELS_ROW_MAJOR, FP32 | FP64, 0, {{0}},
     "beyond the seeds (003 §6 even/odd buffers)",
     "register-tiled GEMM: 2D block tiling, 16-byte loads, double-buffered shared memory",
     &kern_regtile},
    {"cublas_sgemm", "cublas", MODEL_FAM_CUBLAS, KERNELS_COL_MAJOR, FP32, 0, {{0}},
     "004 §2.2 (reference)", "cublasSgemm, pedantic math: CUDA cores, no TF32",
     &kern_cublas_sgemm},
    {"cublas_dgemm", "cublas", MODEL_FAM_CUBLAS, KERNELS_COL_MAJOR, FP64, 0, {{0}},
     "004 §2.2 (reference)", "cublasDgemm", &kern_cublas_dgemm},
    {"cublas_gemmex", "cublas", MODEL_FAM_CUBLAS, KERNELS_COL_MAJOR, FP32 | FP64, 1,
     {{"tf32", 0, 0, 1, 0, "1: fp32 on the tensor cores in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32)"}},
     "004 §2.2 (reference)", "cublasGemmEx with CUBLAS_COMPUTE_32F / 64F", &kern_cublas_gemmex},
    {"move", "move", MODEL_FAM_MOVE, KERNELS_COL_MAJOR, FP32 | FP64, 0, {{0}},
     "004 Fig. 5, 14: the bytes they count",
     "the shape's bytes moved, nothing computed: A, B read once, C(:, p) = A(:, p mod k) "
     "written once; the floor under the shape's kernels", &kern_move},
};

/* clang-format on */

#define N_KERNELS ((int)(sizeof registry / sizeof registry[0]))

int kernels_count(void)
{
    return N_KERNELS;
}

const struct kernels_kernel *kernels_get(int i)
{
    return (i >= 0 && i < N_KERNELS) ? &registry[i] : NULL;
}

const struct kernels_kernel *kernels_find(const char *name)
{
    for (int i = 0; i < N_KERNELS; i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

/* Iterative, with one backtrack point (the last '*'): time O(len(p) * len(s)). Trying each
 * '*' recursively took exponential time on patterns such as "*a*a*a*a*a*a*a*a*a*b". */
static int glob(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p && (*p == '?' || *p == *s)) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

int kernels_match(const char *pattern, const char *name)
{
    if (strpbrk(pattern, "*?"))
        return glob(pattern, name);
    if (kernels_find(pattern)) /* a kernel's name: that kernel alone ("tsm2", not tsm2_v3) */
        return strcmp(pattern, name) == 0;
    return strncmp(pattern, name, strlen(pattern)) == 0;
}

int kernels_param_index(const struct kernels_kernel *k, const char *name)
{
    for (int i = 0; i < k->n_params; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return i;
    return -1;
}

int kernels_check(const struct kernels_kernel *k, int prec, const long *params, char *why,
                  size_t why_len)
{
    const struct kern_ops *ops = (const struct kern_ops *)k->impl;
    struct kern_args a;
    long p[KERNELS_MAX_PARAMS] = {0}; /* zero past n_params: tsm2_v3's column blocks (tsm2.cu) */

    if (prec < 0 || prec >= KERNELS_NPREC || !(k->precisions & KERNELS_PREC_BIT(prec)))
        return kern_why(why, why_len, "%s has no %s version", k->name,
                        kernels_precision_name(prec));
    for (int i = 0; i < k->n_params; i++) {
        const struct kernels_param *d = &k->params[i];
        long v = params ? params[i] : d->def;
        p[i] = v;
        if (v == 0 && (d->flags & AUTO))
            continue;
        if (v < d->min || v > d->max)
            return kern_why(why, why_len, "%s must be between %ld and %ld, not %ld", d->name,
                            d->min, d->max, v);
        if ((d->flags & POW2) && (v & (v - 1)) != 0)
            return kern_why(why, why_len, "%s must be a power of two, not %ld", d->name, v);
    }
    memset(&a, 0, sizeof a);
    a.prec = prec;
    a.p = p;
    if (ops->resolve)
        return ops->resolve(&a, p, why, why_len);
    return RK_OK;
}

void kernels_params_json(const struct kernels_kernel *k, const long *params, char *buf, size_t len)
{
    struct rk_buf b = RK_BUF_INIT;
    if (!len)
        return;
    rk_buf_puts(&b, "{");
    for (int i = 0; i < k->n_params; i++) {
        rk_buf_puts(&b, i ? "," : "");
        rk_json_str(&b, k->params[i].name);
        rk_buf_printf(&b, ":%ld", params[i]); /* a long, exactly */
    }
    rk_buf_puts(&b, "}");
    snprintf(buf, len, "%s", b.oom ? "" : b.s);
    rk_buf_release(&b);
}

void kern_json_append(char *buf, size_t len, const char *extra)
{
    const size_t n = strlen(buf), x = strlen(extra);
    if (n < 2 || buf[n - 1] != '}' || n + x + 2 > len)
        return;
    snprintf(buf + n - 1, len - (n - 1), "%s%s}", n > 2 ? "," : "", extra);
}

/* The kernel's parameters as struct model_params (model.h) for its cost family. */
void kernels_model_params(const struct kernels_kernel *k, int prec, const long *p,
                          struct model_params *mp)
{
    long vp[KERNELS_MAX_PARAMS];
    const struct kernels_kernel *v = kern_tsm2_entry_variant(k, p, vp);
    if (v) { /* the entry point tsm2: its variant's */
        kernels_model_params(v, prec, vp, mp);
        return;
    }
    memset(mp, 0, sizeof *mp);
    switch (k->cost_family) {
    case MODEL_FAM_STSO:
    case MODEL_FAM_SMEM_TILED:
    case MODEL_FAM_RECT_PADDED:
    case MODEL_FAM_RECT_BORDER:
        mp->block = (int)p[0];
        break;
    case MODEL_FAM_STMO:
    case MODEL_FAM_STMVB:
        mp->block = (int)p[0];
        mp->per_thread = (int)p[1];
        break;
    case MODEL_FAM_BLOCKTILE_1D: /* seed001.cu: BM = BN = 64, BK = 8 */
        mp->tile_m = 64;
        mp->tile_n = 64;
        mp->tile_k = 8;
        mp->per_thread = (int)p[0];
        break;
    case MODEL_FAM_TILED:
        mp->tile_m = (int)p[0];
        mp->tile_n = (int)p[1];
        mp->tile_k = (int)p[2];
        mp->scale_m = (int)p[3];
        mp->scale_n = (int)p[4];
        break;
    case MODEL_FAM_REGTILE: /* regtile.cu's two configurations */
        mp->tile_m = mp->tile_n = prec == KERNELS_FP64 ? 64 : 128;
        mp->tile_k = 8;
        mp->scale_m = mp->scale_n = prec == KERNELS_FP64 ? 4 : 8;
        break;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        mp->t1 = (int)p[0];
        mp->t2 = (int)p[1];
        mp->t3 = (int)p[2];
        if (k->cost_family == MODEL_FAM_ISM2 || k->cost_family == MODEL_FAM_ISM2_OPT2)
            mp->tcf = (int)p[3];
        { /* V3 and ISM2 opt. 1 have apipe and rpt: tsm2.cu's rule (internal.h) */
            const int ia = kernels_param_index(k, "apipe"), ir = kernels_param_index(k, "rpt");
            mp->a_staged = ia >= 0 && kern_tsm2_ring(p[ia]);
            mp->rows_per_thread = ia >= 0 && ir >= 0 ? (int)kern_tsm2_rows(p[ia], p[ir]) : 1;
            /* tensor cores: B's values serve the rows of a warp's tiles */
            mp->b_rows = ia >= 0 && ir >= 0 && kern_tsm2_dmma(p[ia])
                             ? (int)kern_tsm2_tc_warp_rows(p[ir])
                             : 0;
        }
        break;
    case MODEL_FAM_NAIVE: /* block_size x block_size threads (seed000.cu): the issue counts'
                             L2 sectors per block; the cost formula reads nothing */
        mp->block = (int)p[0];
        break;
    default: /* tsm2_v0, tsm2_v1, cublas: no parameters in the model */
        break;
    }
}

int kernels_smem_load_bytes(const struct kernels_kernel *k, int prec)
{
    if (!k)
        return 0;
    switch (k->cost_family) {
    case MODEL_FAM_STSO:
    case MODEL_FAM_STMO:
    case MODEL_FAM_STMVB:
    case MODEL_FAM_SMEM_TILED:
    case MODEL_FAM_TILED:
    case MODEL_FAM_RECT_PADDED:
    case MODEL_FAM_RECT_BORDER:
        return (int)kern_elem(prec);
    case MODEL_FAM_BLOCKTILE_1D:
    case MODEL_FAM_REGTILE:
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        return 16;
    default: /* naive, TSM2 V0/V1 (no shared memory), cuBLAS (not known) */
        return 0;
    }
}

int kernels_cost(const struct kernels_kernel *k, int prec, const struct kernels_shape *shape,
                 const long *params, struct model_cost *out)
{
    struct model_params mp;
    struct model_shape ms = {shape->m, shape->n, shape->k, (int)kern_elem(prec)};
    long vp[KERNELS_MAX_PARAMS];
    const struct kernels_kernel *v = kern_tsm2_entry_variant(k, params, vp);
    if (v) /* the entry point tsm2: its variant's cost */
        return kernels_cost(v, prec, shape, vp, out);
    kernels_model_params(k, prec, params, &mp);
    return model_cost(k->cost_family, &ms, &mp, out);
}

double kernels_bytes_in_flight(const struct kernels_kernel *k, int prec,
                               const struct kernels_shape *shape, const long *params,
                               const int grid[3])
{
    struct model_params mp;
    const int e = prec == KERNELS_FP64 ? 8 : 4;
    double kchunk, tiles, groups, t3;
    int ia;
    long vp[KERNELS_MAX_PARAMS];
    const struct kernels_kernel *v = kern_tsm2_entry_variant(k, params, vp);
    if (v) /* the entry point tsm2: its variant's */
        return kernels_bytes_in_flight(v, prec, shape, vp, grid);
    if (!k || prec < 0 || shape->m <= 0 || shape->k <= 0)
        return NAN;
    switch (k->cost_family) {
    case MODEL_FAM_TSM2_V0:
        return (double)KERNELS_TSM2_V0_UNROLL * e;
    case MODEL_FAM_TSM2_V1:
        return (double)KERNELS_TSM2_V1_UNROLL(kernels_tsm2_cols(shape->n)) * e;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        if (!params)
            return NAN;
        kernels_model_params(k, prec, params, &mp);
        if (mp.t3 < 1)
            return NAN;
        kchunk = grid[1] > 0 ? ceil((double)shape->k / grid[1]) : (double)shape->k;
        t3 = mp.t3 < kchunk ? mp.t3 : kchunk;
        ia = kernels_param_index(k, "apipe");
        if (k->cost_family == MODEL_FAM_TSM2_V3 && ia >= 0 && kern_tsm2_streams_a(params[ia]))
            return 128.0; /* tsm2_stream.cu's ring of loads in registers */
        if (k->cost_family == MODEL_FAM_ISM2 && ia >= 0 && kern_ism2_vec(params[ia])) {
            /* ism2.cu's rows in vectors: U vectors of t3 columns (rpt rows each) at once, no
             * more than the tcf vectors a thread walks */
            const double u =
                kern_ism2_outer(params[ia]) ? 1.0 : (double)kern_ism2_vec_inflight(mp.t3);
            return (mp.tcf > 0 && mp.tcf < u ? mp.tcf : u) * mp.t3 * mp.rows_per_thread * e;
        }
        if (!mp.a_staged || mp.t1 < 1 || grid[0] < 1)
            return t3 * e;
        tiles = ceil(ceil((double)shape->m / ((double)mp.t1 * mp.rows_per_thread)) / grid[0]);
        groups = ceil(kchunk / mp.t3) * tiles;
        return (groups < KERNELS_TSM2_RING_STAGES ? groups : KERNELS_TSM2_RING_STAGES) * t3 *
               mp.rows_per_thread * e;
    default:
        return NAN;
    }
}
