/*
 * cost.c - flops and bytes per memory level for each kernel family of the seeds:
 * the single place where roofkit counts a kernel's work and traffic (kernels/ names
 * the family in its registry; nothing counts bytes inline beside a launch).
 *
 * Every shared-memory GEMM of the seeds is one pattern: a thread block owns a
 * tile_m x tile_n tile of C, walks k in steps of tile_k, stages the A and B strips
 * of each step in shared memory, and each thread accumulates scale_m x scale_n
 * outputs in registers. struct tiling describes a family in those terms and
 * count_tiled() counts it; TSM2/ISM2 (004) have their own counts below.
 *
 * Counting conventions (model.h "struct model_cost", docs/model.md):
 *   - flops = 2mnk; flops_exec adds the work of padded or zero-filled tiles.
 *   - bytes_dram is the seeds' "memory operations": each element a thread loads
 *     from or stores to global memory, no reuse through caches (000 §6, 003 Q5.B,
 *     004 §3.6.3). bytes_l2 and bytes_l1 equal it (every global request crosses
 *     L1TEX and L2). bytes_dram_min is the compulsory traffic (extension).
 *   - Shared memory: every staged element is stored once; per k step a thread
 *     loads scale_m elements of A and scale_n of B (the operands of its outer
 *     product, kept in registers across its scale_m x scale_n multiply-adds).
 * Assumes sizes fit a double exactly up to 2^53 elements; no allocation, no I/O.
 */
#include <math.h>
#include <string.h>

#include "model.h"

/* A family as the tiled pattern above. */
struct tiling {
    double tm, tn, tk; /* tile of C per block, k step */
    double sm, sn;     /* outputs per thread along m, n */
    int shared;        /* stages A and B through shared memory */
    int padded;        /* operands padded to tile multiples before the launch */
    int reads_c;       /* C = alpha AB + beta C reads C (001's kernels) */
};

static const char *const family_names[MODEL_FAM_COUNT] = {
    [MODEL_FAM_NAIVE] = "naive",
    [MODEL_FAM_STSO] = "stso",
    [MODEL_FAM_STMO] = "stmo",
    [MODEL_FAM_STMVB] = "stmvb",
    [MODEL_FAM_SMEM_TILED] = "smem_tiled",
    [MODEL_FAM_BLOCKTILE_1D] = "blocktile_1d",
    [MODEL_FAM_TILED] = "tiled",
    [MODEL_FAM_RECT_PADDED] = "rect_padded",
    [MODEL_FAM_RECT_BORDER] = "rect_border",
    [MODEL_FAM_TSM2_V0] = "tsm2_v0",
    [MODEL_FAM_TSM2_V1] = "tsm2_v1",
    [MODEL_FAM_TSM2_V2] = "tsm2_v2",
    [MODEL_FAM_TSM2_V3] = "tsm2_v3",
    [MODEL_FAM_ISM2] = "ism2",
    [MODEL_FAM_ISM2_OPT2] = "ism2_opt2",
    [MODEL_FAM_CUBLAS] = "cublas",
    [MODEL_FAM_REGTILE] = "regtile",
    [MODEL_FAM_MOVE] = "move",
};

static const char *const family_seeds[MODEL_FAM_COUNT] = {
    [MODEL_FAM_NAIVE] = "002_7222581b62a7e2b5.txt §III eq. (1); 000_51b464feae8766fa.txt §3",
    [MODEL_FAM_STSO] = "000_51b464feae8766fa.txt §1.1, §6",
    [MODEL_FAM_STMO] = "000_51b464feae8766fa.txt §1.2, §6",
    [MODEL_FAM_STMVB] = "000_51b464feae8766fa.txt §1.3, §6",
    [MODEL_FAM_SMEM_TILED] = "001_7cc6b74500dcf7c8.txt (Copying to the Shared Memory)",
    [MODEL_FAM_BLOCKTILE_1D] = "001_7cc6b74500dcf7c8.txt (Kernel 1D Blocktiling)",
    [MODEL_FAM_TILED] = "003_d5ffc223df97ef85.txt Q1.A, Q2.A, Q5.B",
    [MODEL_FAM_RECT_PADDED] = "002_7222581b62a7e2b5.txt §III Listing 1",
    [MODEL_FAM_RECT_BORDER] = "002_7222581b62a7e2b5.txt §III Algorithm 2",
    [MODEL_FAM_TSM2_V0] = "004_dab40fe45003313a.txt §3.2 Alg. 1, §4.2 V0",
    [MODEL_FAM_TSM2_V1] = "004_dab40fe45003313a.txt §3.2 Alg. 2, §4.2 V1",
    [MODEL_FAM_TSM2_V2] = "004_dab40fe45003313a.txt §3.3 Alg. 3, §4.2 V2",
    [MODEL_FAM_TSM2_V3] = "004_dab40fe45003313a.txt §3.5 Alg. 4, §3.6.3, §4.2 V3",
    [MODEL_FAM_ISM2] = "004_dab40fe45003313a.txt §5.2 Alg. 6",
    [MODEL_FAM_ISM2_OPT2] = "004_dab40fe45003313a.txt §5.2 Alg. 7",
    [MODEL_FAM_CUBLAS] = "none: compulsory traffic (A, B read once, C written once, beta = 0)",
    [MODEL_FAM_REGTILE] = "003_d5ffc223df97ef85.txt Q5.B (counted as the tiled kernel)",
    [MODEL_FAM_MOVE] = "none: compulsory traffic, no arithmetic (004_dab40fe45003313a.txt Fig. 5 "
                       "and Fig. 14 count these bytes)",
};

const char *model_family_name(enum model_kernel_family fam)
{
    if ((int)fam < 0 || fam >= MODEL_FAM_COUNT)
        return "?";
    return family_names[fam];
}

int model_family_from_name(const char *name, enum model_kernel_family *out)
{
    if (!name || !out)
        return RK_EUSAGE;
    for (int i = 0; i < MODEL_FAM_COUNT; i++) {
        if (strcmp(name, family_names[i]) == 0) {
            *out = (enum model_kernel_family)i;
            return RK_OK;
        }
    }
    return RK_EUSAGE;
}

unsigned model_family_needs(enum model_kernel_family fam)
{
    switch (fam) {
    case MODEL_FAM_NAIVE:
    case MODEL_FAM_CUBLAS:
    case MODEL_FAM_MOVE:
    case MODEL_FAM_TSM2_V0:
    case MODEL_FAM_TSM2_V1:
        return 0;
    case MODEL_FAM_STSO:
    case MODEL_FAM_SMEM_TILED:
    case MODEL_FAM_RECT_PADDED:
    case MODEL_FAM_RECT_BORDER:
        return MODEL_P_BLOCK;
    case MODEL_FAM_STMO:
    case MODEL_FAM_STMVB:
        return MODEL_P_BLOCK | MODEL_P_PER_THREAD;
    case MODEL_FAM_BLOCKTILE_1D:
        return MODEL_P_TILE_M | MODEL_P_TILE_N | MODEL_P_TILE_K | MODEL_P_PER_THREAD;
    case MODEL_FAM_TILED:
    case MODEL_FAM_REGTILE:
        return MODEL_P_TILE_M | MODEL_P_TILE_N | MODEL_P_TILE_K | MODEL_P_SCALE_M | MODEL_P_SCALE_N;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
        return MODEL_P_T1 | MODEL_P_T2 | MODEL_P_T3;
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        return MODEL_P_T1 | MODEL_P_T2 | MODEL_P_T3 | MODEL_P_TCF;
    case MODEL_FAM_COUNT:
        break;
    }
    return 0;
}

const char *model_check_cost(enum model_kernel_family fam, const struct model_shape *shape,
                             const struct model_params *p)
{
    if ((int)fam < 0 || fam >= MODEL_FAM_COUNT)
        return "unknown kernel family";
    if (!shape || !p)
        return "missing shape or parameters";
    if (shape->m <= 0)
        return "m must be positive";
    if (shape->n <= 0)
        return "n must be positive";
    if (shape->k <= 0)
        return "k must be positive";
    if (shape->elem_bytes != 2 && shape->elem_bytes != 4 && shape->elem_bytes != 8)
        return "elem_bytes must be 2, 4 or 8";

    static const struct {
        unsigned bit;
        size_t off;
        const char *why;
    } fields[] = {
        {MODEL_P_BLOCK, offsetof(struct model_params, block), "block must be positive"},
        {MODEL_P_PER_THREAD, offsetof(struct model_params, per_thread),
         "per_thread must be positive"},
        {MODEL_P_TILE_M, offsetof(struct model_params, tile_m), "tile_m must be positive"},
        {MODEL_P_TILE_N, offsetof(struct model_params, tile_n), "tile_n must be positive"},
        {MODEL_P_TILE_K, offsetof(struct model_params, tile_k), "tile_k must be positive"},
        {MODEL_P_SCALE_M, offsetof(struct model_params, scale_m), "scale_m must be positive"},
        {MODEL_P_SCALE_N, offsetof(struct model_params, scale_n), "scale_n must be positive"},
        {MODEL_P_T1, offsetof(struct model_params, t1), "t1 must be positive"},
        {MODEL_P_T2, offsetof(struct model_params, t2), "t2 must be positive"},
        {MODEL_P_T3, offsetof(struct model_params, t3), "t3 must be positive"},
        {MODEL_P_TCF, offsetof(struct model_params, tcf), "tcf must be positive"},
    };
    unsigned needs = model_family_needs(fam);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        int v;
        memcpy(&v, (const char *)p + fields[i].off, sizeof v);
        if ((needs & fields[i].bit) && v <= 0)
            return fields[i].why;
    }
    switch (fam) {
    case MODEL_FAM_STMO:
        /* 000 §1.2: STRIDE = BLOCK_SIZE / OP_PER_THREAD */
        if (p->block % p->per_thread != 0)
            return "block must be a multiple of per_thread (000 §1.2 STRIDE)";
        break;
    case MODEL_FAM_BLOCKTILE_1D:
        if (p->tile_m % p->per_thread != 0)
            return "tile_m must be a multiple of per_thread";
        break;
    case MODEL_FAM_TILED:
    case MODEL_FAM_REGTILE:
        /* 003 Q2.A: TILEDIM_M = TILESCALE_M * by, TILEDIM_N = TILESCALE_N * bx */
        if (p->tile_m % p->scale_m != 0)
            return "tile_m must be a multiple of scale_m (003 Q2.A)";
        if (p->tile_n % p->scale_n != 0)
            return "tile_n must be a multiple of scale_n (003 Q2.A)";
        break;
    default:
        break;
    }
    return NULL;
}

static double round_up(double x, double to)
{
    return ceil(x / to) * to;
}

/* The tiled pattern of the file header, for the seeds' GEMM kernels. */
static void count_tiled(const struct model_shape *s, const struct tiling *t, struct model_cost *out)
{
    double e = s->elem_bytes;
    double m = (double)s->m, n = (double)s->n, k = (double)s->k;
    /* Padded extents: the grid covers ceil(m/tm) x ceil(n/tn) blocks, ceil(k/tk) steps. */
    double mp = round_up(m, t->tm), np = round_up(n, t->tn), kp = round_up(k, t->tk);

    out->flops = 2.0 * m * n * k;
    double loads_a, loads_b, c_elems, min_elems;
    if (t->padded) {
        /* 002 Listing 1: NewA, NewB are padded copies; the kernel sees only them. */
        loads_a = mp * kp * (np / t->tn);
        loads_b = kp * np * (mp / t->tm);
        c_elems = mp * np;
        min_elems = mp * kp + kp * np + mp * np;
    } else {
        /* Border checks (000 §1.1, 002 Algorithm 2, 003 "zero padding"): only in-range
         * elements are loaded; out-of-range slots of a tile are zero-filled. Each of the
         * ceil(n/tn) block columns streams all of A, each of ceil(m/tm) block rows all of B. */
        loads_a = m * k * (np / t->tn);
        loads_b = k * n * (mp / t->tm);
        c_elems = m * n;
        min_elems = m * k + k * n + m * n;
    }
    if (t->reads_c) {
        c_elems *= 2.0;
        min_elems += t->padded ? mp * np : m * n;
    }
    /* Shared-memory kernels compute whole tiles, zeros included (002 Algorithm 2 "Do the
     * multiplication for the sub matrix" for every thread; 003 Q1.A); a kernel without
     * shared memory lets out-of-range threads do nothing (000 §1.1). */
    out->flops_exec = t->shared || t->padded ? 2.0 * mp * np * kp : out->flops;

    double global = loads_a + loads_b + c_elems;
    out->bytes_dram = global * e;
    out->bytes_l2 = out->bytes_dram;
    out->bytes_l1 = out->bytes_dram;
    out->bytes_dram_min = min_elems * e;
    if (t->shared) {
        double stores = mp * kp * (np / t->tn) + kp * np * (mp / t->tm); /* whole tiles */
        double loads = mp * np * kp * (1.0 / t->sn + 1.0 / t->sm);
        out->bytes_shared = (stores + loads) * e;
    } else {
        out->bytes_shared = 0.0;
    }
}

/*
 * TSM2 and ISM2, 004 §3-§5: one thread per row of A (m threads; m/tcf for ISM2),
 * thread blocks of t1 threads, C computed t2 columns at a time, A fetched t3
 * elements at a time.
 */
static void count_tsm2(enum model_kernel_family fam, const struct model_shape *s,
                       const struct model_params *p, struct model_cost *out)
{
    double e = s->elem_bytes;
    double m = (double)s->m, n = (double)s->n, k = (double)s->k;
    double a = 0, b = 0, c = 0, sh_loads = 0, sh_stores = 0;
    double passes = 1.0; /* times each thread sweeps its row of A: ceil(n/t2) */

    switch (fam) {
    case MODEL_FAM_TSM2_V0:
        /* Alg. 1: for i in 1..n, for j in 1..k: C[t,i] += A[t,j] * B[j,i]: "each element of
         * matrix A is repeatedly referenced n times" (§3.2); every thread reads all of B. */
        a = m * k * n;
        b = m * k * n;
        c = 2.0 * m * n; /* C read once and written once per element (accumulated in a register) */
        passes = n;
        break;
    case MODEL_FAM_TSM2_V1:
        /* Alg. 2: outer product, "each element of matrix A is referenced only once"; each
         * thread still reads all of B from global memory (§3.3), C loaded and stored once. */
        a = m * k;
        b = m * k * n;
        c = 2.0 * m * n;
        break;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
        /* Alg. 3/4 (Alg. 6 repeats Alg. 4 for each of tcf row tiles): per t2-column pass the
         * whole of A is read once (§3.6.3 "Total_memory ~ m x k x n/t2"), each block of t1
         * threads loads all of B into shared memory once ("from n to n/t1 per element",
         * §3.3), C is loaded and stored once. Prefetching (V3) changes no count. For ISM2
         * opt. 1 the seed says B is loaded "tcf x n/t2 times, tcf times more than in TSM2"
         * (§5.2); counting Alg. 6 as written gives ceil(m/(t1 tcf)) blocks each loading B tcf
         * times, i.e. tcf times more per block and the same total as TSM2. That is what
         * roofkit counts (our reading of the seed's sentence: per block). */
        passes = ceil(n / p->t2);
        a = m * k * passes;
        if (fam == MODEL_FAM_ISM2)
            b = ceil(m / ((double)p->t1 * p->tcf)) * p->tcf * k * n;
        else
            b = ceil(m / p->t1) * k * n;
        c = 2.0 * m * n;
        sh_stores = b;
        /* t2 x t3 reads of currB per t3 elements of A, shared by the rows of a thread
         * (roofkit's rpt), or on the tensor cores by the rows of a warp's tiles (b_rows);
         * the cp.async ring (a_staged) writes A to shared memory and reads it back once */
        sh_loads = m * k * passes * p->t2 /
                   (p->b_rows > 0            ? p->b_rows
                    : p->rows_per_thread > 1 ? p->rows_per_thread
                                             : 1);
        if (p->a_staged) {
            sh_loads += a;
            sh_stores += a;
        }
        break;
    case MODEL_FAM_ISM2_OPT2:
        /* Alg. 7: "The elements of A and B are accessed only n/t2 times, though each element
         * of C is accessed k/t1 x n/t2 times" (§5.2). Counting Alg. 7 as written: A once per
         * t2-column pass; B once per block of t1 threads (shared by its tcf row tiles); C
         * loaded and stored once per t1-row step of k for every row (ceil(k/t1) times; the
         * seed's extra n/t2 factor counts passes over different columns, which do not reload
         * the same element - our reading). */
        passes = ceil(n / p->t2);
        a = m * k * passes;
        b = ceil(m / ((double)p->t1 * p->tcf)) * k * n;
        c = 2.0 * m * n * ceil(k / p->t1);
        sh_stores = b;
        sh_loads = m * k * passes * p->t2;
        break;
    default:
        RK_BUG("count_tsm2 called for a family that is not TSM2/ISM2");
    }
    out->flops = 2.0 * m * n * k;
    /* The last pass of Alg. 3/4 still multiplies t2 columns; V0 and V1 do exactly mnk FMAs. */
    out->flops_exec = (fam == MODEL_FAM_TSM2_V0 || fam == MODEL_FAM_TSM2_V1)
                          ? out->flops
                          : 2.0 * m * k * passes * p->t2;
    out->bytes_dram = (a + b + c) * e;
    out->bytes_l2 = out->bytes_dram;
    out->bytes_l1 = out->bytes_dram;
    /* Compulsory traffic of roofkit's kernels, which compute C = AB (beta = 0, like the
     * cuBLAS reference they are checked against): the seed's listings load C before
     * accumulating (Alg. 2 lines 1-4), which bytes_dram above keeps, but the kernels start
     * from zero and only store C, except ISM2 opt. 2, which reloads its partial sums when
     * k spans more than one t1-row tile of B. The H100 counters agree: ism2_opt1 fp32
     * 1e7 x 8 x 8 reads 320.04 MB (A is 320.0) and writes 320.8 MB (C is 320.0). */
    out->bytes_dram_min = (m * k + k * n + m * n) * e;
    if (fam == MODEL_FAM_ISM2_OPT2 && ceil(k / p->t1) > 1)
        out->bytes_dram_min += m * n * e;
    out->bytes_shared = (sh_loads + sh_stores) * e;
}

/* The tiling of a family of the tiled pattern (file header): 1 and *out filled, or 0
 * for TSM2/ISM2 and cuBLAS. p must have passed model_check_cost(). */
static int family_tiling(enum model_kernel_family fam, const struct model_params *p,
                         struct tiling *out)
{
    switch (fam) {
    case MODEL_FAM_NAIVE:
        /* One thread per C element reads a row of A and a column of B from global memory
         * (eq. (1) of 002 §III with no shared memory): a 1 x 1 "tile" per thread. */
        *out = (struct tiling){1, 1, 1, 1, 1, 0, 0, 0};
        break;
    case MODEL_FAM_STSO:
        /* 000 §1.1: BLOCK_SIZE x BLOCK_SIZE blocks, one entry per thread. */
        *out = (struct tiling){p->block, p->block, p->block, 1, 1, 1, 0, 0};
        break;
    case MODEL_FAM_STMO:
        /* 000 §1.2: same tiles, OP_PER_THREAD rows per thread (AS[ty + STRIDE*i][k]); the
         * seed's loop reads BS[k][tx] inside the i loop: it is invariant there and nvcc keeps
         * it in a register, so roofkit counts p + 1 shared loads per k step (our reading). */
        *out = (struct tiling){p->block, p->block, p->block, p->per_thread, 1, 1, 0, 0};
        break;
    case MODEL_FAM_STMVB:
        /* 000 §1.3, §6: a thread owns one entry in each of PARALLEL x PARALLEL blocks, so a
         * block of b x b threads covers a pb x pb tile of C and loads p blocks of A and p of
         * B per step of b; this reproduces §6's q = n / (2n/(pb) + 1) (tested). */
        *out = (struct tiling){(double)p->per_thread * p->block,
                               (double)p->per_thread * p->block,
                               p->block,
                               p->per_thread,
                               p->per_thread,
                               1,
                               0,
                               0};
        break;
    case MODEL_FAM_SMEM_TILED:
        /* 001 sgemm_shared_mem: BlockSize x BlockSize tiles, one output per thread,
         * C = alpha AB + beta C reads C. */
        *out = (struct tiling){p->block, p->block, p->block, 1, 1, 1, 0, 1};
        break;
    case MODEL_FAM_BLOCKTILE_1D:
        /* 001 sgemm_1d_blocktiling: n_entries outputs per thread along m, tmpB kept in a
         * register across them, reads C (beta). The seed's listing fixes BlockSize = 64 for
         * both tile and k step with 256 threads, which covers only a quarter of the tile;
         * roofkit takes the tile and step as parameters (BM, BN, BK) instead. */
        *out = (struct tiling){p->tile_m, p->tile_n, p->tile_k, p->per_thread, 1, 1, 0, 1};
        break;
    case MODEL_FAM_TILED:
    case MODEL_FAM_REGTILE:
        /* 003 Q1.A, Q2.A: TILEDIM_M x TILEDIM_N tile, TILEDIM_K step, TILESCALE_M x
         * TILESCALE_N outputs per thread in registers, zero padding by border checks; this
         * reproduces Q5.B's q (tested). regtile: the same count with its BM/BN/BK/TM/TN. */
        *out = (struct tiling){p->tile_m, p->tile_n, p->tile_k, p->scale_m, p->scale_n, 1, 0, 0};
        break;
    case MODEL_FAM_RECT_PADDED:
        /* 002 §III Listing 1: every dimension padded to the next multiple of BLOCK_SIZE, the
         * kernel multiplies the padded operands without branches. The padding copies are made
         * before the launch and are not the kernel's traffic. */
        *out = (struct tiling){p->block, p->block, p->block, 1, 1, 1, 1, 0};
        break;
    case MODEL_FAM_RECT_BORDER:
        /* 002 §III Algorithm 2: the kernel zero-fills out-of-range slots of the shared tiles
         * and writes only legal results. */
        *out = (struct tiling){p->block, p->block, p->block, 1, 1, 1, 0, 0};
        break;
    default:
        return 0; /* TSM2/ISM2 and cuBLAS: not the tiled pattern */
    }
    return 1;
}

int model_cost(enum model_kernel_family fam, const struct model_shape *shape,
               const struct model_params *p, struct model_cost *out)
{
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_cost(fam, shape, p))
        return RK_EUSAGE;

    struct tiling t;
    if (family_tiling(fam, p, &t)) {
        count_tiled(shape, &t, out);
        out->seed = family_seeds[fam];
        return RK_OK;
    }
    switch (fam) {
    case MODEL_FAM_TSM2_V0:
    case MODEL_FAM_TSM2_V1:
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        count_tsm2(fam, shape, p, out);
        out->seed = family_seeds[fam];
        return RK_OK;
    case MODEL_FAM_CUBLAS:
    case MODEL_FAM_MOVE: {
        /* No seed formula: the library's traffic is unknown, so roofkit charges it the
         * minimum any GEMM must move (beta = 0: C only written); move moves exactly that and
         * computes nothing. */
        double e = shape->elem_bytes;
        double m = (double)shape->m, n = (double)shape->n, k = (double)shape->k;
        out->flops = fam == MODEL_FAM_MOVE ? 0.0 : 2.0 * m * n * k;
        out->flops_exec = out->flops;
        out->bytes_dram_min = (m * k + k * n + m * n) * e;
        out->bytes_dram = out->bytes_dram_min;
        out->bytes_l2 = out->bytes_dram_min;
        out->bytes_l1 = out->bytes_dram_min;
        out->bytes_shared = 0.0;
        out->seed = family_seeds[fam];
        return RK_OK;
    }
    default:
        break;
    }
    return RK_EUSAGE;
}

/*
 * Shared-memory wavefronts of one warp-wide load of `distinct` addresses that are
 * `stride_words` 4-byte words apart (distinct = 1: a broadcast). sm_90 serves 32
 * banks of 4 B per cycle (one 128 B wavefront); addresses in the same bank but
 * different words serialise. Consecutive elements (stride = e/4 words) fill
 * ceil(distinct e / 128) wavefronts; a stride that is a multiple of 32 words puts
 * every address in the same bank(s): distinct wavefronts, times e/4 for 8-byte words
 * only when they also overflow one wavefront.
 */
static double smem_wavefronts(double distinct, double stride_words, double e)
{
    double contiguous = ceil(distinct * e / MODEL_WAVEFRONT_BYTES);
    if (distinct <= 1.0)
        return 1.0;
    if (fmod(stride_words, MODEL_SMEM_BANKS) == 0.0)
        return distinct; /* every address in the same bank: one wavefront each */
    return contiguous < 1.0 ? 1.0 : contiguous;
}

/*
 * Dependent rounds of global loads a thread waits for per staged tile, from the
 * kernels' staging loops (kernels/seed00N.cu, regtile.cu): one round where each thread's loads of A
 * and B are unrolled and independent (000 §1.1-§1.3, 001 shared, 002 §III); 001's 1D blocktiling
 * stages A and B in two loops with a run-time stride (blockDim), one round each; 003's tiled kernel
 * walks its tile in run-time loops whose every iteration loads then stores, ceil(TM/by)·ceil(TK/bx)
 * + ceil(TK/by)·ceil(TN/bx) rounds (bx = TN/SN, by = TM/SM threads); regtile prefetches the next
 * tile into registers while it computes the current one: 0.
 */
static double stage_rounds(enum model_kernel_family fam, const struct tiling *t)
{
    double bx, by;
    switch (fam) {
    case MODEL_FAM_BLOCKTILE_1D:
        return 2.0;
    case MODEL_FAM_TILED:
        bx = t->tn / t->sn;
        by = t->tm / t->sm;
        return ceil(t->tm / by) * ceil(t->tk / bx) + ceil(t->tk / by) * ceil(t->tn / bx);
    case MODEL_FAM_REGTILE:
        return 0.0;
    default:
        return 1.0;
    }
}

/*
 * docs/model.md "issue". Per k step a thread of the tiled pattern issues sm*sn FMAs
 * and, for the shared-memory families, sm + sn shared loads (the operands of its
 * outer product: cost.c's bytes_shared count); naive issues 2 global loads. A warp
 * of the tiled pattern spans R = 32 / cols rows of C (cols = min(32, tile_n/scale_n)
 * threads along n): its load of A (As[row][k]) touches R rows tile_k words apart
 * (R = 1: a broadcast), its load of B (Bs[k][col]) touches cols consecutive
 * elements. Staging: every tile element is loaded from global memory and stored to
 * shared memory once per block (coalesced: e/128 wavefronts per element); C is
 * stored once (read too for reads_c). TSM2 V0 (004 Alg. 1): each thread walks its
 * own row of A, so one warp load touches 32 rows k elements apart: 32 sectors in 32
 * lines, 32 L1 wavefronts; B[j][i] is the same for the whole warp (1 wavefront).
 * The 32 B sector a miss brings holds 32/e consecutive elements of the thread's
 * row, which L1 keeps for the next iterations, so DRAM sees A once per column of C
 * (A does not fit in L2 for the suite's shapes; counters agree: dram_read_bytes =
 * m k n e): bytes_dram = (m k n + k n + 2 m n) e, one 32 B sector in flight per
 * thread.
 */
int model_issue_counts(enum model_kernel_family fam, const struct model_shape *s,
                       const struct model_params *p, int warp_cols, struct model_issue_counts *out)
{
    struct tiling t;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (model_check_cost(fam, s, p) || warp_cols < 1 || warp_cols > 32)
        return RK_EUSAGE;
    double e = s->elem_bytes, m = (double)s->m, n = (double)s->n, k = (double)s->k;
    out->bytes_dram = NAN;
    out->bytes_in_flight_per_thread = NAN;
    out->bytes_l2 = NAN;
    if (fam == MODEL_FAM_TSM2_V0) {
        double warps_k = ceil(m / 32.0) * k * n; /* warp iterations of Alg. 1's two loops */
        out->fma_warp = warps_k;
        out->instr_warp = 3.0 * warps_k; /* load A, load B, FMA */
        /* A[row + j m]: a warp's 32 rows of column j are contiguous (one line in fp32, two
         * in fp64); B[j + p k] is one broadcast */
        out->l1_wavefronts = warps_k * (ceil(32.0 * e / MODEL_WAVEFRONT_BYTES) + 1.0);
        out->l1_wavefronts += 2.0 * ceil(m / 32.0) * n; /* C read and written per warp */
        out->acc_per_thread = 1.0;
        out->bytes_dram = (m * k * n + k * n + 2.0 * m * n) * e;
        out->serial_loop = 1; /* no prefetch: each step's loads, then its FMA */
        return RK_OK;
    }
    if (!family_tiling(fam, p, &t))
        return RK_EUSAGE;
    double mp = round_up(m, t.tm), np = round_up(n, t.tn), kp = round_up(k, t.tk);
    double cols = fam == MODEL_FAM_NAIVE ? warp_cols : fmin(32.0, t.tn / t.sn);
    double rows = ceil(32.0 / cols); /* rows of C one warp spans */
    double threads = mp * np / (t.sm * t.sn);
    double warp_k = threads / 32.0 * kp; /* warp k-steps of the whole launch */
    double wf_b = ceil(cols * e / MODEL_WAVEFRONT_BYTES);
    if (wf_b < 1.0)
        wf_b = 1.0;
    out->fma_warp = warp_k * t.sm * t.sn;
    out->acc_per_thread = t.sm * t.sn;
    double c_elems = (t.padded ? mp * np : m * n) * (t.reads_c ? 2.0 : 1.0);
    out->l1_wavefronts = c_elems * e / MODEL_WAVEFRONT_BYTES;
    out->instr_warp = out->fma_warp + c_elems / 32.0;
    if (!t.shared) {
        /* naive: A[row][k] for rows rows (a sector each), B[k][col] shared by them */
        out->instr_warp += 2.0 * warp_k;
        out->l1_wavefronts += warp_k * (rows + wf_b);
        if (p->block > 0) {
            /* Behind L1: a warp's sector of A[row][..] serves 32/e consecutive k, so each
             * of its rows is fetched once (k·e bytes in sectors); the block's warps read
             * the same B[k][cols] segment together, fetched once per block and k. */
            double sector_row = ceil(kp * e / MODEL_SECTOR_BYTES) * MODEL_SECTOR_BYTES;
            double seg_b = ceil(cols * e / MODEL_SECTOR_BYTES) * MODEL_SECTOR_BYTES;
            double blocks = threads / (cols * p->block);
            out->bytes_l2 = threads / 32.0 * rows * sector_row + blocks * kp * seg_b + c_elems * e;
        }
        return RK_OK;
    }
    out->tiles = kp / t.tk;
    out->stage_rounds = stage_rounds(fam, &t);
    double wf_a = smem_wavefronts(rows, t.tk * e / 4.0, e);
    double staged = mp * kp * (np / t.tn) + kp * np * (mp / t.tm); /* whole tiles */
    out->instr_warp += warp_k * (t.sm + t.sn) + 2.0 * staged / 32.0;
    out->smem_instr = warp_k * (t.sm + t.sn) + staged / 32.0; /* LDS of the k steps, STS */
    out->smem_wavefronts =
        warp_k * (t.sm * wf_a + t.sn * wf_b) + staged * e / MODEL_WAVEFRONT_BYTES;
    out->l1_wavefronts += staged * e / MODEL_WAVEFRONT_BYTES;
    return RK_OK;
}
