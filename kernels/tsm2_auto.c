/*
 * tsm2_auto.c - the entry point `tsm2`: C = A B for a tall-and-skinny or large A (m x k)
 * and a skinny B (k x n), any m, n, k, fp32 or fp64, without naming a variant. It chooses
 * one of the variants of tsm2.cu (TSM2 V2 and V3, 004_dab40fe45003313a.txt §3.3-3.5; ISM2
 * opt. 1 and 2, §5.2) and its parameters, then runs it exactly as the variant's own
 * registry entry would (the same resolve, workspace and launch).
 *
 * How it chooses (kernels_tsm2_choose; docs/model.md "the tsm2 entry point"):
 *   1. the family by k: k <= KERNELS_TSM2_ISM2_K is ISM2's regime (004 §5.1: B small, the
 *      kernel latency-bound), else TSM2's;
 *   2. a short list of candidate configurations for the family, precision and n, in the
 *      order that sweeps of every plausible configuration on an H100 ranked them
 *      (docs/perf-log.md 2026-11-26, `roofkit tune --exhaustive`); for TSM2, V3 streaming A
 *      to registers with every column in one pass (apipe = 3 FMAs, 4 tensor cores:
 *      tsm2_stream.cu) first where those sweeps ranked it first (stream_pick), then taken
 *      whenever it runs;
 *   3. for each, the variant's own resolve (split of k, tcf, shared memory, registers),
 *      the CUDA occupancy calculator (resident blocks), and the model's cost
 *      (model_tsm2_plan_evaluate: DRAM bytes, passes over A and waves at the bandwidth that
 *      the bytes in flight sustain, against multiply-adds, instructions and loads issued),
 *      with the measured ceilings of the device when the caller gave them, else its
 *      datasheet figures;
 *   4. the first candidate, unless (TSM2 only) a later one is predicted more than
 *      KERNELS_TSM2_MARGIN faster. The margin is wide on purpose: the sweeps found the model unable
 * to rank one-pass configurations of equal bytes (it called them equal within 1 % where they
 *      differed by up to 3x: few resident warps, register-capped tiles); what it does
 *      rank, passes over A and waves, differs by far more.
 * The variant and the reason are stored with each measurement in its params JSON ("kernel",
 * "why"); the parameter "variant" (1 tsm2_v2, 2 tsm2_v3, 3 ism2_opt1, 4 ism2_opt2; 0 asks
 * for the choice) and the variant's resolved parameters are stored as numbers, so that
 * analysis/ recomputes the cost of a stored measurement through the variant's formula.
 */
#include "common.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The entry point's parameters (registry.c lists them in this order): the variant, then the
 * variants' common ones in tsm2.cu's order (t1, t2, t3, ksplit or tcf, apipe, rpt, cblocks). */
enum { E_VARIANT = 0, E_T1, E_T2, E_T3, E_SPLIT, E_APIPE, E_RPT, E_CB, E_COUNT };

#define KERNELS_TSM2_MARGIN 0.10
#define MAX_CANDS           48
#define LOOP_INSTR                                                                                 \
    12.0 /* per group of t3: address, counter, branch, ring bookkeeping;                           \
            counted from the loop body in the SASS, not fitted */

static const char *const variant_name[] = {NULL, "tsm2_v2", "tsm2_v3", "ism2_opt1", "ism2_opt2"};
#define N_VARIANTS 5

static const struct kernels_kernel *variant_kernel(long code)
{
    return code >= 1 && code < N_VARIANTS ? kernels_find(variant_name[code]) : NULL;
}

/* The variant's parameter vector from the entry point's: a zero (or apipe -1) keeps the
 * variant's registry default. */
static const struct kernels_kernel *to_variant(const long *e, long *vp)
{
    const struct kernels_kernel *vk = variant_kernel(e[E_VARIANT]);
    if (!vk)
        return NULL;
    for (int i = 0; i < KERNELS_MAX_PARAMS; i++)
        vp[i] = i < vk->n_params ? vk->params[i].def : 0;
    for (int i = 0; i < vk->n_params && i + 1 < E_COUNT; i++) {
        const long v = e[i + 1];
        if (i + 1 == E_APIPE ? v >= 0 : v != 0)
            vp[i] = v;
    }
    if (e[E_VARIANT] == 2) /* V3's column blocks, the slot past its registry parameters */
        vp[KERN_TSM2_V3_CBLOCKS] = e[E_CB];
    return vk;
}

/* The entry point's vector from a variant's resolved one (V2 and opt. 2: registers, 1 row). */
static void from_variant(long code, const struct kernels_kernel *vk, const long *vp, long *e)
{
    e[E_VARIANT] = code;
    for (int i = 0; i + 1 < E_CB; i++)
        e[i + 1] = i < vk->n_params ? vp[i] : i + 1 == E_APIPE ? 0 : 1;
    e[E_CB] = code == 2 && vp[KERN_TSM2_V3_CBLOCKS] > 1 ? vp[KERN_TSM2_V3_CBLOCKS] : 1;
}

int kernels_costed_as_variant(const struct kernels_kernel *k)
{
    return k && k->impl == (const void *)&kern_tsm2_auto;
}

const struct kernels_kernel *kern_tsm2_entry_variant(const struct kernels_kernel *k, const long *p,
                                                     long *vp)
{
    if (!k || k->impl != (const void *)&kern_tsm2_auto || !p)
        return NULL;
    return to_variant(p, vp);
}

/* ---- the model's view of one configuration --------------------------------------- */

struct cand {
    long code;
    long vp[KERNELS_MAX_PARAMS]; /* resolved */
    double passes;
    struct model_tsm2_plan_eval ev;
};

/* Resolves want (a variant's vector) on the shape and prices it; RK_EUSAGE to skip it. */
static int price(const struct kern_args *a0, const struct model_gpu *g, long code, const long *want,
                 struct cand *c)
{
    const struct kernels_kernel *vk = variant_kernel(code);
    const struct kern_ops *ops = (const struct kern_ops *)vk->impl;
    struct kern_args a = *a0;
    struct model_tsm2_plan_in in;
    char why[200];
    int bps = 0, regs = 0, grid[3];
    const struct kernels_shape sh = {a0->m, a0->n, a0->k};
    const double e = (double)kern_elem(a0->prec), m = (double)a0->m, n = (double)a0->n,
                 k = (double)a0->k;

    memset(c, 0, sizeof *c);
    memcpy(c->vp, want, sizeof c->vp);
    c->code = code;
    a.p = c->vp;
    a.note = NULL;
    if (ops->resolve(&a, c->vp, why, sizeof why) != RK_OK ||
        kern_tsm2_occupancy(&a, (int)code - 1, c->vp, &bps, &regs) != RK_OK)
        return RK_EUSAGE;

    const long *p = c->vp;
    const int ia = kernels_param_index(vk, "apipe"), ir = kernels_param_index(vk, "rpt");
    const long apipe = ia >= 0 ? p[ia] : 0;
    const int ring = ia >= 0 && kern_tsm2_ring(apipe);
    const int rows_kernel = code == 3 && apipe == 2, vec = code == 3 && kern_ism2_vec(apipe);
    const double rpt = ia >= 0 && ir >= 0 ? (double)kern_tsm2_rows(apipe, p[ir]) : 1.0;
    const double t1 = (double)p[0], t2 = (double)p[1], t3 = (double)p[2], split = (double)p[3];
    double gx, gy;
    const double ncb =
        code == 2 && p[KERN_TSM2_V3_CBLOCKS] > 1 ? (double)p[KERN_TSM2_V3_CBLOCKS] : 1.0;
    if (code <= 2) { /* V2, V3: a row tile per block (ncb side by side), k split across y */
        gx = ceil(m / (t1 * rpt)) * ncb;
        gy = split;
    } else { /* ISM2: tcf row tiles per block; the vector kernel's slices of columns across y */
        gx = ceil(m / (t1 * rpt * split));
        gy = vec ? ceil(n / t2) : 1;
    }
    grid[0] = (int)gx;
    grid[1] = (int)gy;
    grid[2] = 1;
    const double blocks = gx * gy, resident = fmin(blocks, (double)bps * a0->dev->sm_count);
    const double bif = kernels_bytes_in_flight(vk, a0->prec, &sh, p, grid);
    if (!(bif > 0))
        return RK_EUSAGE;
    c->passes = ceil(n / t2);
    /* A once per pass of t2 columns (the rows kernel re-reads a row's k <= 64 elements from L1
     * in its next pass; column blocks, and the vector kernel's slices of columns, side by side
     * share their reads through the L2), B, C written, split-k's partial sums written and
     * read. */
    in.bytes_dram = (rows_kernel || vec ? 1.0 : ceil(c->passes / ncb)) * m * k * e + k * n * e +
                    m * n * e + (code <= 2 && gy > 1 ? 2.0 * gy * m * n * e : 0.0);
    in.blocks = blocks;
    in.resident = resident;
    in.bif_block = t1 * bif;
    in.fma = m * ceil(k / t3) * t3 * c->passes * t2;
    /* per group of t3 elements of A and rpt rows of a thread: the FMAs; through the load/store
     * pipe the loads of B from shared memory (16 bytes each) and A's copies and their reads
     * (ring) or its loads; the loop */
    const double lsu = t2 * ceil(t3 * e / 16.0) + (ring ? 2.0 : 1.0) * t3;
    const double groups = m / rpt * ceil(k / t3) * c->passes;
    in.lsu = groups * lsu;
    in.instr = groups * (rpt * t2 * t3 + lsu + LOOP_INSTR);
    return model_tsm2_plan_evaluate(g, &in, &c->ev);
}

/* ---- the choice --------------------------------------------------------------------- */

void kernels_tsm2_nominal_gpu(const struct rk_gpu *dev, int prec, struct model_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->clock_hz = dev->sm_clock_mhz * 1e6;
    g->sms = dev->sm_count;
    /* FMA lanes per SM of sm_80/sm_90 datacenter parts: 128 fp32, 64 fp64 */
    g->peak_flops = 2.0 * g->sms * g->clock_hz * (prec == KERNELS_FP64 ? 64 : 128);
    g->bandwidth = 2.0 * dev->mem_clock_mhz * 1e6 * dev->bus_width_bits / 8.0; /* DDR */
    g->regs_per_sm = dev->regs_per_sm;
    g->smem_per_sm = dev->smem_per_sm_bytes;
    g->max_threads_per_sm = dev->max_threads_per_sm;
    g->mem_latency_cycles = 800; /* loaded DRAM latency of an H100 (probe lat_dram_loaded) */
    g->comp_latency_cycles = prec == KERNELS_FP64 ? 8 : 4;
}

/* The smallest column tile >= n that runs in one pass: a power of two up to 16 or one of
 * KERNELS_TSM2_XCOLS the precision has; 0 when there is none. */
static long cover_cols(int prec, long n)
{
    static const int x[] = {KERNELS_TSM2_XCOLS};
    long best = n <= 16 ? kernels_tsm2_cols(n) : 0, t3, rpt;
    for (int i = 0; i < (int)(sizeof x / sizeof x[0]); i++)
        if (x[i] >= n && (best == 0 || x[i] < best) &&
            kern_tsm2_xcols_config(prec, x[i], &t3, &rpt))
            best = x[i];
    return best;
}

struct want {
    long code;
    long p[KERNELS_MAX_PARAMS];
};

static void add(struct want *w, int *nw, long code, long t1, long t2, long t3, long split,
                long apipe, long rpt, long cblocks)
{
    const struct kernels_kernel *vk = variant_kernel(code);
    long e[E_COUNT] = {code, t1, t2, t3, split, apipe, rpt, cblocks};
    if (*nw >= MAX_CANDS || !vk)
        return;
    w[*nw].code = code;
    to_variant(e, w[*nw].p);
    (*nw)++;
}

/*
 * Where a stream kernel comes first, and which (V3 with apipe = 3, FMAs, or 4, tensor cores:
 * tsm2_stream.cu) with how many threads a block: the shapes on which the H100 sweeps ranked it
 * ahead of the cp.async ring (docs/perf-log.md 2026-11-26, m = k in {10240, 20480, 40960}).
 *   fp64: the FMA kernel up to 12 columns (1.00-1.04 of the copy ceiling), DMMA above (1.00
 *         up to 24 columns, 0.93-0.98 at 25-32, where the ring takes two passes: 0.36-0.50);
 *   fp32: the FMA kernel up to 12 columns once a split of k of at most about 13 fills the GPU
 *         (m >= 16384), 3xTF32 above 12 (the FMA kernel is issue-bound there: 3xTF32 reached
 *         0.76-0.95 of the copy ceiling at 17-32 columns); below 16384 rows 3xTF32 from 9
 *         columns (m = 10240: 143.5-145.0 us at 9-16 columns against the ring's 149.6-153.6
 *         and the FMA kernel's 148.5-165.7, whose split of 19-26 costs more in partial sums
 *         than it gains), the ring up to 8; 128 threads a block, but 256 for 3xTF32 at 17-24
 *         columns and, below 16384 rows, at 25-32 (the grids' sweeps on an H100, the same split
 *         of k: 0.954-0.991 of t1 128's time at 17-24, 0.975-0.981 at 10240 x 25-32; at
 *         20480-40960 x 25-32, 165 registers, t1 256 leaves one block an SM and ran 1.13-1.17x
 *         slower; at 9-16 columns, 95 registers, 1.07-1.08x). Where m is not a multiple of 4
 *         (A's columns not 16-byte aligned) the ring copies A element by element and ran
 *         0.32-0.39 of cuBLAS at 10241 and 10243 x 1-8 columns, 0.57-0.69 at 10242 (kbench on
 *         an H100, 524-608 us against the FMA kernel's 151-157): there the FMA kernel up to 12
 *         columns (10241 x 12 159.6 us against 3xTF32's 201.7), 3xTF32 above.
 * Short and small (k <= SMALL_K and m <= SMALL_M, far from the grid's m = k >= 10240): the tensor
 * cores in both precisions, which an H100 measured ahead of the ring and the FMA stream on
 * 10^4 and 3 x 10^4 rows x 5, 17, 32 columns x k 65, 100, 256 (fp32 10^4 x 5 x 256 35.1 -> 12.3
 * us, 10^4 x 17 x 65 17.8 -> 11.7; fp64 10^4 x 5 x 100 15.1 -> 10.2; the one exception fp32
 * 3 x 10^4 x 17 x 256, the FMA stream 15 % ahead): a split of k cannot fill the GPU there (one
 * to four stages of B), and the tensor cores' fewer instructions a row shorten each block.
 * 0 when the ring's candidates come first.
 */
#define SMALL_K 256
#define SMALL_M 32768L

static int stream_pick(int prec, long m, long n, long k, long *apipe, long *t1)
{
    if (n > KERN_TSM2_STREAM_MAXN)
        return 0;
    *t1 = 128;
    if (k <= SMALL_K && m <= SMALL_M) {
        *apipe = 4;
        return 1;
    }
    if (prec == KERNELS_FP32 && m < KERN_TSM2_TF32X3_FEW_ROWS) {
        const int unaligned = m % 4 != 0; /* the ring would copy A element by element */
        *apipe = unaligned && n <= 12 ? 3 : 4;
        *t1 = n > 16 ? 256 : 128;
        return n > 8 || unaligned;
    }
    *apipe = n <= 12 ? 3 : 4;
    if (prec == KERNELS_FP32 && n > 16 && n <= 24)
        *t1 = 256;
    return 1;
}

/* The grids measured 10^6 and 10^7 rows and nothing between: where a rule below differs at the
 * two, it switches here. */
#define ISM2_FEW_ROWS 4000000L

/*
 * Where ISM2's shapes go first to the tensor cores walking row tiles (V3 with apipe 4, one tile
 * of 16 rows a warp: tsm2_dmma_rows_kernel, tsm2_dmma_ring_kernel, tsm2_tf32x3_rows_kernel),
 * t1 256: where an H100 measured them ahead of opt. 1's FMAs on 10^5-10^7 rows
 * (docs/perf-log.md, "ISM2 on the tensor cores"). fp64 above k = 16 with 16 columns or more
 * (the grid's k = 24, 32: 0.94-1.07 of cuBLAS against opt. 1's 0.76-1.04; opt. 1 stays ahead
 * at k <= 16, 1.02-1.23); fp32 above k = 16 with more than 24 columns (0.91-1.04 against
 * 0.80-0.98), where 3xTF32's three products still leave the kernel memory-bound, and with 17-24
 * columns below ISM2_FEW_ROWS rows (10^5 x 24 x 32 1.07 against 0.95, 10^6 1.14 against
 * 1.06; at 10^7 opt. 1 was ahead, 1.11 against 1.00, and between the two no shape was
 * measured); with 16 columns or fewer opt. 1 is ahead. fp64 at k = 16 with 16 columns or more
 * up to ISM2_TILE_ROWS rows at even m too (10^5 x 16 / 24 / 32 x 16: 11.3 / 13.4 / 14.8 us against
 * opt. 1's 11.8 / 14.5 / 16.7; 3 x 10^5 within 1 % of it; at 10^6 opt. 1 2-4 % ahead).
 */
#define ISM2_TILE_ROWS 300000L

/*
 * Odd m below ISM2_TILE_ROWS rows with k 21-32 (fp32) or 17-32 (fp64) and 8 columns or more: the
 * tensor cores' row walk with its rows as the fragments hold them (the ODD instantiations of
 * tsm2_tf32x3_rows_kernel and tsm2_dmma_rows_kernel: a column's 8 lanes read 8 consecutive
 * rows), ahead of the vector kernel and the rows kernel. kbench on an H100, one call each, the
 * entry point before against after (m 100003 / 199999 / 299999):
 *   fp32 x 32 x 24 16.4 / 24.9 / 40.1 -> 14.8 / 24.4 / 39.1 us, x 16 x 24 12.0 / 17.5 / 26.6 ->
 *        11.1 / 16.0 / 21.7, x 8 x 24 10.1 / 13.8 / 20.3 -> 9.7 / 13.5 / 17.3, x 32 x 32 18.3 /
 *        28.1 / 44.5 -> 15.8 / 25.9 / 42.2, x 12 x 32 12.0 / 19.9 / 24.3 -> 11.4 / 15.9 / 22.7;
 *        at k 17 within -6 % to +9 %;
 *   fp64 (the walk forced) x 32 x 24 22.9 / 42.0 / 61.1 -> 19.3 / 42.4 / 60.5, x 24 x 24 20.0 /
 *        34.3 / 51.2 -> 17.0 / 32.4 / 50.1, x 8 x 17 11.7 / 18.9 / 24.1 -> 10.8 / 16.2 / 21.9,
 *        x 32 x 32 27.2 / 48.8 / 71.3 -> 20.9 / 47.4 / 64.0; behind at 199999 x 32 x 17 (40.5
 *        against 37.3) and 299999 x 16 x 24 (43.1 against 38.9).
 * With 1-4 columns the walk ran up to 1.24x slower than the vector kernel, at k 48 with 8 columns
 * up to 13 % behind the rows kernel. At 10^6 odd rows it stays behind (fp32 1000003 x 32 x 24
 * 165 us against 109).
 */
static int ism2_rows_odd(int prec, long m, long n, long k)
{
    return m % 2 != 0 && m < ISM2_TILE_ROWS && k > (prec == KERNELS_FP32 ? 20 : 16) && k <= 32 &&
           n >= 8;
}

static int ism2_tensor_first(int prec, long m, long n, long k)
{
    if (ism2_rows_odd(prec, m, n, k))
        return 1;
    if (prec == KERNELS_FP64 && k == 16 && n >= 16 && m <= ISM2_TILE_ROWS && m % 2 == 0)
        return 1; /* at odd m the vector kernel: 100003 / 199999 / 299999 x 16 x 16 12.0 / 19.7 /
                     28.7 us against the walk's 12.7 / 21.8 / 35.5 */
    if (k <= 16)
        return 0;
    if (prec == KERNELS_FP64)
        return n >= 16;
    return n > 24 || (n > 16 && m < ISM2_FEW_ROWS);
}

/*
 * Where ISM2's shapes go first to opt. 1 with rows in vectors (apipe 3, k <= 32: ism2.cu
 * ism2_vec_kernel, 128 bytes of A in flight a thread, 256 at k > 8): where an H100 measured it
 * ahead of the rows kernel (apipe 2; docs/perf-log.md, "ISM2 with rows in vectors"), t1 128.
 * Below ISM2_FEW_ROWS rows: every k <= 8 (10^6 rows: fp32 0.53-0.98 of the copy ceiling ->
 * 0.64-1.02, fp64 up to 1.12x faster at k = 1-2; 10^5 rows within 0.3 us of it or ahead, up to
 * 1.17x at n >= 6); k 9-16 (fp32 10^5 x 32 x 12 13.3 -> 10.9 us, 10^6 78 -> 66 us, within
 * 0.1 us below 8 columns; fp64 10^5 x 32 x 12 19.1 -> 16.0 us, 10^6 up to 1.07x faster, at
 * 10^5 with 4-8 columns -4 % to +4 %: the sweep's regret at 10^5 x 3 x 12 was 1.13 with the
 * rows kernel first, its vector kernel 1.01). At 10^7 rows: fp32 every k <= 16 (1 x 1: 50 -> 27 us,
 * 32 x 1 505 -> 423, 32 x 12 726 -> 654; at k 4-16 below 24 columns within 3 % of the rows kernel,
 * once the next round's loads overlap the stores), fp64 k = 1 or n k <= 4 (1 x 1: 63 -> 55 us;
 * elsewhere the rows kernel was 2-4 % faster). Between 10^6 and 10^7 rows no shape was
 * measured.
 * Rows of 17-32 (K = 24 or 32, kern_ism2_vec_k: 125 / 163 registers fp32, 126 / 158 fp64),
 * measured against the entry point's choice before them (the rows kernel in groups of 16, whose
 * second group of a row of 24 is half padding, or the tensor cores' row walk) on 10^5-10^7 rows
 * x k 20, 24, 32 x 1-32 columns (kbench, one call, docs/perf-log.md 2026-11-27), in this order
 * also ahead of the tensor cores:
 *   fp32 above ISM2_TILE_ROWS rows every n (10^6 x 12 x 20 67.2 -> 46.1 us, 0.64 -> 0.93 of
 *        the copy ceiling; 10^7 x 32 x 32 1045 -> 935 us against 3xTF32; the losses 2-3 %, at
 *        10^6 rows with k 32 and 1-4 columns); at 10^5 rows k <= 24 up to 16 columns (1.00-1.17x
 *        in 3 slices of the columns, 10^5 x 16 x 24 13.5 -> 11.2 us in the 2 that tsm2.cu now
 *        takes; with more columns the tensor cores, 0.77-0.82x);
 *   fp64 k <= 24 up to 12 columns (1.01-1.30x), at 10^7 rows from 8 columns only (1-4 columns
 *        2-3 % behind the rows kernel); at k 25-32 and from 16 columns within -6 % to +3 %;
 *        at odd m from ISM2_TILE_ROWS rows every n, where the tensor cores' row walk loses its
 *        bulk copies (16-byte aligned columns): 10000001 x 32 x 24 2649 -> 2005 us (cuBLAS
 *        1910), 1000003 x 32 x 24 255 -> 228;
 *   both, at m not a multiple of the vector at any rows, where k <= 24 or n > 16 (kbench, the
 *        entry point against the vector kernel with t1 128 in one call, its rows side by
 *        side): fp32 100003 x 32 x 24 19.3 -> 16.1 us (cuBLAS 13.0), 200001 x 32 x 32 34.5 ->
 *        28.0, 100003 x 24 x 24 15.9 -> 14.1; fp64 100003 x 32 x 17 27.0 -> 20.8, 99999 x 32 x
 *        24 26.7 -> 22.9, 200002 x 24 x 24 35.6 -> 33.2. At k > 24 with 16 columns the entry
 *        point's choice stayed ahead (fp32 100003 x 16 x 32: the rows kernel 12.6 against 13.6
 *        us; fp64 the tensor cores 18.3 against 19.9).
 */
static int ism2_vec_first(int prec, long m, long n, long k)
{
    if (k > KERN_ISM2_VEC_MAXK || ism2_rows_odd(prec, m, n, k))
        return 0;
    if (k > 16 && m % kern_ism2_vec_rows(prec) != 0 &&
        (k <= 24 || n > 16 || (prec == KERNELS_FP64 && m >= ISM2_TILE_ROWS)))
        return 1; /* unaligned m: ism2_vec_wide_first's last two */
    if (k > 16)
        return prec == KERNELS_FP32 ? m > ISM2_TILE_ROWS || (k <= 24 && n <= 16)
                                    : k <= 24 && n <= 12 && (m < ISM2_FEW_ROWS || n >= 8);
    return m < ISM2_FEW_ROWS || prec == KERNELS_FP32 || k == 1 || n * k <= 4;
}

/* The cp.async ring's candidates (V3 with apipe 0 or 1), in the order the sweeps ranked them. */
static void ring_candidates(struct want *w, int *nw, int prec, long n, long c2, long x)
{
    if (prec == KERNELS_FP32) {
        /* TSM2 fp32: V3 through the cp.async ring; up to 8 columns two rows per thread at t1
         * 256, 9-16 four rows at t1 128; 17-24 the tile that covers n in one pass; above, two
         * column blocks of 16 side by side (then two passes of 16 in one block) */
        if (n <= 8) {
            add(w, nw, 2, 256, c2, n >= 5 ? 8 : 16, 0, 1, 2, 0);
            if (x && x != c2)
                add(w, nw, 2, 256, x, 0, 0, 1, 0, 0);
        } else {
            if (n > 16 && x)
                add(w, nw, 2, 256, x, 0, 0, 1, 0, 0);
            if (n > 16) /* two column blocks side by side, A read once */
                add(w, nw, 2, 128, 16, 8, 0, 1, 4, 2);
            add(w, nw, 2, 128, 16, 8, 0, 1, 4, 0);
            add(w, nw, 2, 256, 16, 8, 0, 1, 4, 0);
        }
    } else {
        /* TSM2 fp64: up to 4 columns V3 with A in registers, up to 8 the ring at t1 128, above
         * the ring at t1 256 (two rows per thread, groups of 8), passes of 16 in one block
         * (column blocks side by side leave SMs idle: one block of 256 per SM) */
        if (n <= 4)
            add(w, nw, 2, 128, c2, 16, 0, 0, 1, 0);
        if (n <= 8)
            add(w, nw, 2, 128, c2, 8, 0, 1, 2, 0);
        add(w, nw, 2, 256, c2, 8, 0, 1, 2, 0);
        add(w, nw, 2, 128, c2, 8, 0, 1, 2, 0);
    }
}

int kernels_tsm2_choose(const struct rk_gpu *dev, const struct model_gpu *gpu, int prec,
                        const struct kernels_shape *shape, struct kernels_tsm2_choice *out)
{
    struct want w[MAX_CANDS];
    struct kern_args a;
    struct model_gpu nominal;
    struct cand best, c;
    int nw = 0, priced = 0, have = 0, sure = 0;
    const long n = shape->n, k = shape->k, c2 = kernels_tsm2_cols(shape->n);
    const long x = cover_cols(prec, n);

    memset(out, 0, sizeof *out);
    if (!dev || prec < 0 || prec >= KERNELS_NPREC || shape->m < 1 || n < 1 || k < 1)
        return RK_EUSAGE;
    if (!gpu || model_check_gpu(gpu)) {
        kernels_tsm2_nominal_gpu(dev, prec, &nominal);
        gpu = &nominal;
        out->nominal = 1;
    }
    memset(&a, 0, sizeof a);
    a.prec = prec;
    a.m = shape->m;
    a.n = n;
    a.k = k;
    a.dev = dev;

    if (k <= KERNELS_TSM2_ISM2_K) {
        /* ISM2: opt. 1 with B whole in shared memory, a row's k in groups of 4 (k <= 4) or of
         * the power of two covering it up to 16; tcf chosen (2), 1, 4 */
        const long t3 = k <= 4 ? 4 : kernels_tsm2_cols(k);
        const int tensor = ism2_tensor_first(prec, shape->m, n, k);
        const int vec = ism2_vec_first(prec, shape->m, n, k), vec_ahead = vec && k > 16;
        /* Outer products (k = 1) and rank-2 updates below ISM2_TILE_ROWS rows, and outer products
         * in fp64 from ISM2_FEW_ROWS: the outer-product kernel (apipe 5), slices and tcf chosen.
         * kbench on an H100 (each twice, one call, against the choice before it: opt. 1's rows
         * kernel with a row a thread, tcf 1, up to 4 columns, which had run 0.85-0.98 of the
         * vector kernel's time there, and the vector kernel above): at 10^5 rows x 1-32 columns
         * k = 1 0.86-0.95 of the time in fp64 (24 x 1 9.15-9.34 -> 8.70-9.15 us, 32 x 1
         * 10.82-10.98 -> 10.27-10.34), 0.82-0.96 in fp32; k = 2 0.91-0.99 (fp64 8 x 2 6.18 ->
         * 5.63 us, fp32 16 x 2 5.82 -> 5.38); at 10^7 rows fp64 4-16 columns 0.95-0.97, 1 and 32
         * columns within 0.5 %. fp32 at 10^7 rows and both precisions at 10^6 ran within 1 %
         * either way, or behind (the vector kernel keeps its next round's loads in flight
         * through its stores; rank 2: 0.97-1.07): not there. */
        if (k <= 2 && (shape->m < ISM2_TILE_ROWS ||
                       (k == 1 && prec == KERNELS_FP64 && shape->m >= ISM2_FEW_ROWS)))
            add(w, &nw, 3, 128, 0, 0, 0, KERN_ISM2_OUTER, 0, 0);
        if (tensor && !vec_ahead)
            add(w, &nw, 2, 256, n, KERN_TSM2_STREAM_T3, 1, 4, 2, 0);
        if (vec) /* t1 128, t2 (slices), t3, tcf chosen */
            add(w, &nw, 3, 128, 0, 0, 0, 3, 0, 0);
        if (tensor && vec_ahead)
            add(w, &nw, 2, 256, n, KERN_TSM2_STREAM_T3, 1, 4, 2, 0);
        if (n > 16 && n <= 32) /* a row's columns in one pass: groups of 4 up to k = 4, else 8
                                  (the sweeps' best but at fp32 1e7 x 32 x 32, 16 by 0.2 %;
                                  16 cost up to 1.26 at fp32 k = 24) */
            add(w, &nw, 3, 0, n <= 24 ? 24 : 32, k <= 4 ? 4 : 8, 0, 2, 0, 0);
        add(w, &nw, 3, 0, 0, t3, 0, 2, 0, 0);
        add(w, &nw, 3, 0, 0, t3, 1, 2, 0, 0);
        add(w, &nw, 3, 0, 0, t3, 4, 2, 0, 0);
    } else {
        long sp = 0, st1 = 0;
        if (stream_pick(prec, shape->m, n, k, &sp, &st1)) {
            /* A streamed to registers, every column in one pass (tsm2_stream.cu) */
            add(w, &nw, 2, st1, n, KERN_TSM2_STREAM_T3, 0, sp, 0, 0);
            sure = nw == 1;
        }
        ring_candidates(w, &nw, prec, n, c2, x);
    }

    /* ISM2: the first candidate that runs; the model's Little's law misjudges the rows kernel
     * (1749 us predicted, 385 us measured at fp32 1e7 x 24 x 1), so it only prices the choice;
     * TSM2: the stream kernel where stream_pick says the sweeps ranked it first, else the first
     * candidate unless a later one is predicted more than KERNELS_TSM2_MARGIN faster */
    const double margin = k <= KERNELS_TSM2_ISM2_K ? 1.0 : KERNELS_TSM2_MARGIN;
    for (int i = 0; i < nw; i++) {
        if (price(&a, gpu, w[i].code, w[i].p, &c) != RK_OK)
            continue;
        priced++;
        if (sure && i == 0) { /* runs: taken */
            best = c;
            have = 1;
            break;
        }
        if (!have || c.ev.time_s < best.ev.time_s * (1.0 - margin)) {
            best = c;
            have = 1;
        }
    }
    (void)cudaGetLastError(); /* a refused occupancy query must not reach the next launch */
    if (!have)
        return RK_EUSAGE;

    out->kernel = variant_kernel(best.code);
    memcpy(out->params, best.vp, sizeof out->params);
    from_variant(best.code, out->kernel, best.vp, out->entry);
    out->predicted_s = best.ev.time_s;
    out->bound = best.ev.bound;
    out->candidates = priced;
    snprintf(out->why, sizeof out->why,
             "%s k=%ld: t2 %ld in %.0f pass%s%s; %s-bound %.1f us (util %.2f), best of %d (%s "
             "ceilings)",
             k <= KERNELS_TSM2_ISM2_K ? "ISM2" : "TSM2", k, best.vp[1], best.passes,
             best.passes > 1 ? "es" : "",
             best.code == 2 && best.vp[KERN_TSM2_V3_CBLOCKS] > 1       ? " side by side"
             : best.code == 2 && kern_tsm2_stream(out->entry[E_APIPE]) ? ", A streamed"
             : best.code == 2 && kern_tsm2_dmma(out->entry[E_APIPE])
                 ? ", A streamed to tensor cores"
                 : "",
             model_bound_name(best.ev.bound), best.ev.time_s * 1e6, best.ev.util, priced,
             out->nominal ? "datasheet" : "measured");
    if (best.code == 3 && out->entry[E_APIPE] == 3 && shape->m % kern_ism2_vec_rows(prec) != 0) {
        /* the vector kernel at m not a multiple of its vector: how it reaches the columns */
        const int lay = kern_ism2_vec_layout(prec, shape->m, n, k, best.vp[0]);
        const char *how = lay == KERN_ISM2_VEC_LINE   ? "rows side by side, C in whole lines"
                          : lay == KERN_ISM2_VEC_SIDE ? "rows side by side"
                                                      : "element by element";
        const size_t len = strlen(out->why);
        snprintf(out->why + len, sizeof out->why - len, "; m unaligned: %s", how);
    }
    if (best.code == 2 && kern_tsm2_walk_odd(&a, best.vp)) {
        const size_t len = strlen(out->why);
        snprintf(out->why + len, sizeof out->why - len, "; odd m: the walk's fragments' own rows");
    }
    if (best.code == 3 && out->entry[E_APIPE] == 3 && kern_ism2_vec_ahead(&a, best.vp)) {
        const size_t len = strlen(out->why);
        snprintf(out->why + len, sizeof out->why - len, "; A's next round copied ahead");
    }
    return RK_OK;
}

int kernels_tsm2_predict(const struct rk_gpu *dev, const struct model_gpu *gpu, int prec,
                         const struct kernels_shape *shape, const long *params, double *time_s)
{
    struct kern_args a;
    struct model_gpu nominal;
    struct cand c;
    long vp[KERNELS_MAX_PARAMS];
    *time_s = NAN;
    if (!dev || prec < 0 || prec >= KERNELS_NPREC || shape->m < 1 || shape->n < 1 || shape->k < 1 ||
        !to_variant(params, vp))
        return RK_EUSAGE;
    if (!gpu || model_check_gpu(gpu)) {
        kernels_tsm2_nominal_gpu(dev, prec, &nominal);
        gpu = &nominal;
    }
    memset(&a, 0, sizeof a);
    a.prec = prec;
    a.m = shape->m;
    a.n = shape->n;
    a.k = shape->k;
    a.dev = dev;
    int rc = price(&a, gpu, params[E_VARIANT], vp, &c);
    (void)cudaGetLastError();
    if (rc != RK_OK)
        return rc;
    *time_s = c.ev.time_s;
    return RK_OK;
}

/* ---- the entry point's kern_ops ------------------------------------------------------ */

static int resolve_auto(const struct kern_args *a, long *p, char *why, size_t len)
{
    long vp[KERNELS_MAX_PARAMS];
    const struct kernels_kernel *vk;
    struct kern_args va;
    int rc;

    if (p[E_VARIANT] < 0 || p[E_VARIANT] >= N_VARIANTS)
        return kern_why(why, len, "variant must be 0 (chosen) or 1-4, not %ld", p[E_VARIANT]);
    if (p[E_VARIANT] == 0) {
        struct kernels_tsm2_choice ch;
        for (int i = E_T1; i < E_COUNT; i++)
            if (p[i] != (i == E_APIPE ? -1 : 0))
                return kern_why(why, len, "give variant (1-4) with the variant's parameters");
        if (a->m <= 0)
            return RK_OK; /* no shape yet: the choice is made with it */
        if (kernels_tsm2_choose(a->dev, a->gpu, a->prec, &(struct kernels_shape){a->m, a->n, a->k},
                                &ch) != RK_OK)
            return kern_why(why, len, "no variant of TSM2 or ISM2 can run %ldx%ldx%ld", a->m, a->n,
                            a->k);
        memcpy(p, ch.entry, sizeof(long) * E_COUNT);
        if (a->note)
            snprintf(a->note, a->note_len, "\"kernel\":\"%s\",\"why\":\"%s\"", ch.kernel->name,
                     ch.why);
        return RK_OK;
    }
    vk = to_variant(p, vp);
    va = *a;
    va.p = vp;
    va.note = NULL;
    rc = ((const struct kern_ops *)vk->impl)->resolve(&va, vp, why, len);
    if (rc != RK_OK || a->m <= 0)
        return rc;
    from_variant(p[E_VARIANT], vk, vp, p);
    if (a->note)
        snprintf(a->note, a->note_len, "\"kernel\":\"%s\",\"why\":\"variant given\"", vk->name);
    return RK_OK;
}

/* The variant's ops and arguments for a resolved entry vector. */
static const struct kern_ops *delegate(const struct kern_args *a, struct kern_args *va, long *vp)
{
    const struct kernels_kernel *vk = to_variant(a->p, vp);
    if (!vk)
        RK_BUG("tsm2 launched without a resolved variant");
    *va = *a;
    va->p = vp;
    return (const struct kern_ops *)vk->impl;
}

static size_t workspace_auto(const struct kern_args *a)
{
    long vp[KERNELS_MAX_PARAMS];
    struct kern_args va;
    const struct kern_ops *ops = delegate(a, &va, vp);
    return ops->workspace ? ops->workspace(&va) : 0;
}

static int launch_auto(const struct kern_args *a, struct kern_launch *info)
{
    long vp[KERNELS_MAX_PARAMS];
    struct kern_args va;
    const struct kern_ops *ops = delegate(a, &va, vp);
    return ops->launch(&va, info);
}

const struct kern_ops kern_tsm2_auto = {resolve_auto, workspace_auto, NULL, launch_auto,
                                        NULL,         NULL,           NULL};
