/*
 * test_kernels_gpu.c - every kernel of the registry, in every precision it has,
 * verified against the float64 cuBLAS reference (move: against the copy of A it must
 * write) on small and odd shapes: 1x1x1, primes, and sizes that no tile size divides
 * (ctest label gpu).
 *
 * Cases:
 *   registry_static      every registry entry is consistent: defaults pass
 *                        kernels_check, names unique, cost formula accepts them
 *   all_kernels_odd      every kernel x precision x shape of odd_shapes[], defaults
 *   tsm2_variants        tsm2_v2/v3 and ism2 over t1, t2, t3, ksplit/tcf variants on
 *                        shapes where k, n and m are no multiple of t1, t2, t3
 *   tsm2_entry           the entry point tsm2's choice on odd shapes (m 1000-1003, n 1-7, k 1,
 *                        3, 17; n 12, 24, 32), each variant given, V3's extra column tiles
 *   seed_variants        STMO/STMVB/tiled/rect/smem/blocktile parameter variants
 *   move_paths           move exact on shapes of both its paths, n above and below k, C's
 *                        columns in groups
 *   tf32_is_detected     cublas_gemmex tf32=1 passes its own tolerance but shows an
 *                        error far above fp32's: the check distinguishes precisions
 *   bad_params_refused   out-of-range or inconsistent parameters give RK_EUSAGE
 *   too_big_refused      a shape beyond the GPU's memory gives RK_ENOMEM before
 *                        allocating
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static struct kernels_session *sess;

static const struct kernels_shape odd_shapes[] = {
    {1, 1, 1},       {7, 13, 5},      {31, 37, 41},   {127, 131, 137},
    {257, 263, 269}, {1000, 3, 1001}, {129, 17, 515},
};

static const struct kernels_options quick = {2, 1, 1, NULL};

static int setup(void **state)
{
    (void)state;
    return kernels_session_open(0, 20261122ULL, &sess) == RK_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kernels_session_close(sess);
    return 0;
}

/* Measures k with params (NULL: defaults), asserts it verified and returns the result. */
static struct kernels_result verified(const struct kernels_kernel *k, const long *params,
                                      const struct kernels_shape *sh, int prec)
{
    struct kernels_result r;
    int rc = kernels_session_measure(sess, k, params, &quick, &r);
    if (rc != RK_OK || !r.verified)
        fprintf(stderr, "FAILED %s %s %ldx%ldx%ld %s: rc %d err %.3e nonfinite %ld\n", k->name,
                kernels_precision_name(prec), sh->m, sh->n, sh->k, r.params_json, rc, r.rel_error,
                r.nonfinite);
    assert_int_equal(rc, RK_OK);
    assert_true(r.verified);
    assert_false(isnan(r.rel_error));
    assert_true(r.time_median_ns > 0);
    return r;
}

/* verified(), the result not needed. */
static void expect_verified(const struct kernels_kernel *k, const long *params,
                            const struct kernels_shape *sh, int prec)
{
    (void)verified(k, params, sh, prec);
}

static void registry_static(void **state)
{
    (void)state;
    assert_true(kernels_count() >= 18);
    for (int i = 0; i < kernels_count(); i++) {
        const struct kernels_kernel *k = kernels_get(i);
        char why[200];
        long p[KERNELS_MAX_PARAMS];
        struct model_cost cost;
        struct kernels_shape sh = {256, 256, 256};
        assert_non_null(k->impl);
        assert_ptr_equal(kernels_find(k->name), k);
        for (int j = 0; j < k->n_params; j++)
            p[j] = k->params[j].def;
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            if (!(k->precisions & KERNELS_PREC_BIT(prec)))
                continue;
            assert_int_equal(kernels_check(k, prec, p, why, sizeof why), RK_OK);
            /* AUTO parameters are resolved at run time; give the model plausible values. */
            long q[KERNELS_MAX_PARAMS];
            memcpy(q, p, sizeof q);
            for (int j = 0; j < k->n_params; j++)
                if (q[j] == 0)
                    q[j] = 1;
            assert_int_equal(kernels_cost(k, prec, &sh, q, &cost), RK_OK);
            assert_true(cost.flops ==
                        (k->cost_family == MODEL_FAM_MOVE ? 0.0 : 2.0 * 256 * 256 * 256));
        }
    }
    assert_non_null(kernels_suite_find("seeds"));
    assert_non_null(kernels_suite_find("tsm2"));
    assert_non_null(kernels_suite_find("ism2"));
    assert_non_null(kernels_suite_find("default"));
    assert_true(kernels_match("tsm2_*", "tsm2_v3"));
    assert_false(kernels_match("tsm2", "tsm2_v3")); /* the entry point's name alone */
    assert_true(kernels_match("*_v3", "tsm2_v3"));
    assert_false(kernels_match("ism2", "tsm2_v3"));
}

static void all_kernels_odd(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof odd_shapes / sizeof odd_shapes[0]; s++) {
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            assert_int_equal(kernels_session_prepare(sess, prec, &odd_shapes[s]), RK_OK);
            for (int i = 0; i < kernels_count(); i++) {
                const struct kernels_kernel *k = kernels_get(i);
                if (k->precisions & KERNELS_PREC_BIT(prec))
                    expect_verified(k, NULL, &odd_shapes[s], prec);
            }
        }
    }
}

/* Runs `name` with each row of `sets` (values in registry order). */
static void variants(const char *name, const long (*sets)[KERNELS_MAX_PARAMS], int nsets,
                     const struct kernels_shape *shapes, int nshapes)
{
    const struct kernels_kernel *k = kernels_find(name);
    assert_non_null(k);
    for (int s = 0; s < nshapes; s++)
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            assert_int_equal(kernels_session_prepare(sess, prec, &shapes[s]), RK_OK);
            for (int v = 0; v < nsets; v++)
                expect_verified(k, sets[v], &shapes[s], prec);
        }
}

static void tsm2_variants(void **state)
{
    (void)state;
    static const struct kernels_shape shapes[] = {
        {1000, 3, 1001}, {257, 17, 1037}, {4099, 16, 333}, {100003, 8, 8}, {5, 2, 3000}};
    /* t1, t2, t3, ksplit (V2/V3) or tcf (ISM2), apipe and rpt (V3, ISM2 opt. 1) */
    static const long sets[][KERNELS_MAX_PARAMS] = {
        {128, 0, 8, 0, 1, 0},  {128, 1, 1, 1, 0, 0},  {32, 2, 4, 3, 1, 2},    {96, 4, 4, 2, 0, 0},
        {64, 8, 16, 1, 1, 1},  {128, 16, 8, 5, 0, 0}, {256, 16, 8, 0, 1, 2},  {160, 2, 8, 7, 1, 2},
        {32, 16, 1, 64, 0, 0}, {512, 4, 4, 0, 1, 1},  {128, 16, 16, 3, 0, 0}, {64, 16, 4, 2, 1, 2},
        {96, 8, 8, 0, 1, 2},   {64, 16, 4, 3, 1, 4},  {128, 8, 8, 0, 1, 4},   {32, 2, 16, 1, 1, 4},
    };
    const int nsets = (int)(sizeof sets / sizeof sets[0]);
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    variants("tsm2_v2", sets, nsets, shapes, nshapes);
    variants("tsm2_v3", sets, nsets, shapes, nshapes);
    variants("ism2_opt1", sets, nsets, shapes, nshapes);
    variants("ism2_opt2", sets, nsets, shapes, nshapes);
    /* ISM2 opt. 1 with B whole in shared memory (apipe = 2): every t2, t3, groups that
     * split a row (k > t3) and pad it (k % t3 != 0), n > t2 (several passes), tcf from
     * one row per thread to many (rows past m in the last block) */
    static const struct kernels_shape rshapes[] = {{1000, 3, 1001}, {4099, 16, 333}, {100003, 8, 8},
                                                   {5, 2, 1500},    {77777, 17, 13}, {1, 1, 1}};
    static const long rsets[][KERNELS_MAX_PARAMS] = {
        {128, 0, 0, 0, 2, 0}, {128, 1, 1, 1, 2, 0},  {32, 2, 4, 3, 2, 1},     {96, 4, 16, 2, 2, 0},
        {64, 8, 16, 1, 2, 1}, {256, 16, 8, 5, 2, 0}, {256, 16, 16, 64, 2, 0}, {160, 2, 8, 7, 2, 0},
    };
    variants("ism2_opt1", rsets, (int)(sizeof rsets / sizeof rsets[0]), rshapes,
             (int)(sizeof rshapes / sizeof rshapes[0]));
    /* the wide tiles (t2 24, 32): n below, at and past them, k padded to t3 */
    static const struct kernels_shape wshapes[] = {
        {77777, 17, 13}, {100003, 32, 33}, {1000, 30, 1}};
    static const long wsets[][KERNELS_MAX_PARAMS] = {{128, 24, 4, 0, 2, 0},
                                                     {128, 32, 8, 3, 2, 0},
                                                     {64, 32, 16, 1, 2, 0},
                                                     {256, 24, 16, 64, 2, 0}};
    variants("ism2_opt1", wsets, (int)(sizeof wsets / sizeof wsets[0]), wshapes,
             (int)(sizeof wshapes / sizeof wshapes[0]));
    /* ISM2 opt. 1 with rows in vectors (apipe 3, k <= 16): every K (t3 1-16 from k, and 16
     * given for smaller k), m a multiple of the vector and not (m mod 4 = 1, 2, 3: single rows
     * side by side, and from KERN_ISM2_VEC_WIDE_ROWS C in whole lines in fp32 where k <= 2 and
     * n >= 8), rows past m in a thread's last vectors and a warp's, one vector a thread (tcf 1)
     * to many, blocks of 32-256, the columns in slices (t2 1, 5: uneven, more than n; 0:
     * chosen) */
    static const struct kernels_shape vshapes[] = {
        {1000, 3, 1},     {1003, 7, 3},   {5, 2, 2},       {1, 1, 1},
        {100003, 32, 8},  {77777, 17, 5}, {4099, 1, 4},    {100000, 24, 1},
        {1001, 32, 13},   {20000, 5, 16}, {300001, 5, 3},  {300002, 9, 2},
        {300003, 32, 12}, {300001, 3, 5}, {300003, 32, 2}, {300001, 8, 1}};
    static const long vsets[][KERNELS_MAX_PARAMS] = {{256, 0, 0, 0, 3, 0}, {128, 0, 16, 1, 3, 0},
                                                     {32, 0, 0, 3, 3, 0},  {64, 0, 0, 64, 3, 0},
                                                     {128, 5, 0, 0, 3, 0}, {64, 1, 16, 2, 3, 0}};
    variants("ism2_opt1", vsets, (int)(sizeof vsets / sizeof vsets[0]), vshapes,
             (int)(sizeof vshapes / sizeof vshapes[0]));
    /* ... and the outer product and rank-2 update (apipe 5, k = 1, 2): m a multiple of the vector
     * and not (from KERN_ISM2_VEC_WIDE_ROWS with n >= 8 C in whole lines), fewer rows than a
     * vector, one vector a thread (tcf chosen) and several (tcf 3), slices of 1, 5 (uneven),
     * chosen and one (t2 32); t3 chosen (it is k) */
    static const struct kernels_shape oshapes[] = {
        {1000, 3, 1}, {1003, 7, 1},    {5, 2, 1},       {1, 1, 1},      {100003, 32, 1},
        {4099, 1, 1}, {100000, 24, 1}, {77777, 17, 1},  {1003, 7, 2},   {100003, 32, 2},
        {4098, 5, 2}, {1, 3, 2},       {300001, 17, 1}, {300003, 32, 2}};
    static const long osets[][KERNELS_MAX_PARAMS] = {{128, 0, 0, 0, 5, 0},
                                                     {256, 0, 0, 0, 5, 0},
                                                     {32, 5, 0, 3, 5, 0},
                                                     {64, 1, 0, 2, 5, 0},
                                                     {128, 32, 0, 1, 5, 0}};
    variants("ism2_opt1", osets, (int)(sizeof osets / sizeof osets[0]), oshapes,
             (int)(sizeof oshapes / sizeof oshapes[0]));
    /* ... and rows of 17-32: K 24 or 32 from k, 32 given for k <= 24, the columns sliced; at
     * unaligned m from KERN_ISM2_VEC_WIDE_ROWS element by element where n < k */
    static const struct kernels_shape v2shapes[] = {
        {3001, 9, 17},    {1003, 32, 24},   {2002, 5, 25},   {999, 31, 32},
        {100001, 12, 24}, {300001, 12, 24}, {300003, 32, 24}};
    static const long v2sets[][KERNELS_MAX_PARAMS] = {
        {128, 0, 0, 0, 3, 0}, {256, 0, 32, 1, 3, 0}, {64, 5, 0, 3, 3, 0}};
    variants("ism2_opt1", v2sets, (int)(sizeof v2sets / sizeof v2sets[0]), v2shapes,
             (int)(sizeof v2shapes / sizeof v2shapes[0]));
    /* ... and AHEAD (fp32, m a multiple of 4, K 12-32, tcf >= 2, t2 >= K / 2: A's next round
     * copied into shared memory ahead): k below K (zero-filled copies), rows past m in a thread's
     * last round, blocks of 32-256, the columns in one slice and in two */
    static const struct kernels_shape ashapes[] = {
        {4000, 12, 12}, {20000, 16, 13}, {40004, 32, 32}, {100000, 24, 17}, {9996, 31, 25}};
    static const long asets[][KERNELS_MAX_PARAMS] = {
        {128, 0, 0, 2, 3, 0}, {32, 0, 0, 3, 3, 0}, {256, 0, 0, 64, 3, 0}, {128, 16, 0, 5, 3, 0}};
    variants("ism2_opt1", asets, (int)(sizeof asets / sizeof asets[0]), ashapes,
             (int)(sizeof ashapes / sizeof ashapes[0]));
    /* AHEAD ran: its slots (128 threads x 33 vectors of 16 bytes) behind B (32 x 32 floats) */
    assert_int_equal(kernels_session_prepare(sess, KERNELS_FP32, &ashapes[2]), RK_OK);
    const struct kernels_result ar =
        verified(kernels_find("ism2_opt1"), asets[0], &ashapes[2], KERNELS_FP32);
    assert_int_equal(ar.smem_dynamic, 32 * 32 * 4 + 128 * 33 * 16);
    /* V3 streaming A (apipe 3: FMAs; 4: tensor cores with one or two tiles of 16 rows a warp,
     * rpt 2 or 4, walking row tiles at k <= 64 with rpt 2): t2 = n, odd m, n and k, partial
     * stages, a split of k, rows past m; at t1 32 and m >= 4 x 16 x 2112 (KERN_TSM2_RING_STAGES
     * tiles for each warp of 16 blocks an SM, 132 SMs) fp64's walk goes through the ring in
     * shared memory, with 8-byte copies at odd m; from KERN_TSM2_BULK_ROWS at even m through the
     * bulk copies (a last block tile part full, k not a multiple of 4, 1-4 fragments of 8
     * columns, blocks of 1, 4 and 8 warps) */
    static const struct kernels_shape sshapes[] = {
        {1001, 5, 1003},  {777, 32, 301},   {64, 1, 17},     {300, 21, 64},    {130, 13, 129},
        {33, 9, 7},       {100003, 24, 24}, {20001, 32, 48}, {140001, 21, 37}, {140002, 32, 64},
        {500002, 17, 19}, {500090, 32, 32}, {500010, 5, 30}};
    static const long ssets[][KERNELS_MAX_PARAMS] = {
        {128, 0, 0, 0, 3, 0}, {64, 0, 0, 2, 3, 0},  {128, 0, 0, 0, 4, 0}, {128, 0, 0, 0, 4, 2},
        {128, 0, 0, 0, 4, 4}, {256, 0, 0, 3, 4, 2}, {32, 0, 0, 1, 4, 2}};
    variants("tsm2_v3", ssets, (int)(sizeof ssets / sizeof ssets[0]), sshapes,
             (int)(sizeof sshapes / sizeof sshapes[0]));
    static const long t1sets[][KERNELS_MAX_PARAMS] = {{32}, {96}, {256}};
    variants("tsm2_v0", t1sets, 3, shapes, nshapes);
    variants("tsm2_v1", t1sets, 3, shapes, nshapes);
}

/*
 * The entry point tsm2 on small and odd shapes (m 1000-1003, n 1-7 odd, k 1, 3, 17, and n
 * 12, 24, 32 past the powers of two): its choice verifies, and the params JSON names the
 * variant and the reason; six shapes a precision go where its rules send them; each variant given
 * explicitly, V3's column blocks (cblocks) among them; V3 with every extra column tile
 * (KERNELS_TSM2_XCOLS) on shapes that no tile divides, n == t2 and n one past a smaller one.
 */
static void tsm2_entry(void **state)
{
    (void)state;
    const struct kernels_kernel *e = kernels_find("tsm2"), *v3 = kernels_find("tsm2_v3");
    static const long ns[] = {1, 3, 5, 7}, ks[] = {1, 3, 17};
    static const struct kernels_shape more[] = {
        {3001, 12, 2000}, {2000, 21, 3000}, {1025, 32, 1500}, {100003, 24, 24}, {140002, 32, 32}};
    /* variant, t1, t2, t3, split, apipe, rpt, cblocks: V3's column blocks split n's tiles
     * evenly (16 + 16 at n = 32), unevenly (3 blocks of 4-column tiles at n = 21) and past
     * the tiles (8 blocks, clamped) */
    static const long given[][KERNELS_MAX_PARAMS] = {
        {1, 128, 4, 8, 0, -1, 0, 0}, {2, 0, 0, 0, 0, -1, 0, 0},  {2, 128, 4, 0, 3, 1, 0, 0},
        {3, 0, 0, 0, 0, 2, 0, 0},    {3, 128, 0, 0, 4, 1, 1, 0}, {4, 0, 0, 0, 0, -1, 0, 0},
        {2, 128, 16, 8, 0, 1, 4, 2}, {2, 256, 4, 8, 3, 1, 2, 3}, {2, 64, 1, 4, 0, 1, 1, 8}};
    static const int xcols[] = {KERNELS_TSM2_XCOLS};
    struct kernels_result r;
    assert_non_null(e);
    assert_non_null(v3);
    for (int prec = 0; prec < KERNELS_NPREC; prec++) {
        for (long m = 1000; m <= 1003; m++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 3; j++) {
                    const struct kernels_shape sh = {m, ns[i], ks[j]};
                    assert_int_equal(kernels_session_prepare(sess, prec, &sh), RK_OK);
                    expect_verified(e, NULL, &sh, prec);
                    assert_int_equal(kernels_session_measure(sess, e, NULL, &quick, &r), RK_OK);
                    assert_non_null(strstr(r.params_json, "\"why\":\""));
                    assert_non_null(strstr(r.params_json, "\"kernel\":\""));
                }
        /* the rules that send a shape to a kernel first: ISM2's outer products and rank-2
         * updates (k = 1, 2) to their kernel below 300000 rows, outer products in fp64 from 4e6
         * as well; ISM2's short rows to the vector kernel (below 4e6
         * rows, k <= 16; rows of 17-32, K 24 or 32, at 10^6 rows: fp32 every n, fp64 up to 12
         * columns), small m with k just past 64 to the tensor-core stream, so
         * are more than 8 columns in fp32 below 16384 rows (fp64: the FMA stream up to 12); fp64
         * ISM2 with k = 16 and 16 columns at 10^5 rows to the tensor cores' row walk (prec -1: both
         * precisions), and to the vector kernel at odd m from 300000 rows with k 17-32 (the row
         * walk's bulk copies need even m); ISM2 at odd m below 300000 rows with k 21-32 (fp64
         * 17-32) and 8 columns or more to the row walk (its fragments' own rows at odd m), with
         * fewer columns to the vector kernel, as fp64 with k = 16 at odd m; fp32 TSM2 below 16384
         * rows at m not a multiple of 4 to the FMA stream up to 12 columns (the ring copies such
         * columns element by element), 3xTF32 above; where the why names how a kernel runs
         * (the walk's odd-m instantiation, the vector kernel's copy ahead), that too */
        static const struct {
            struct kernels_shape sh;
            const char *kernel, *apipe;
            int prec;
            const char *why; /* NULL: not checked */
        } rule[] = {
            {{1000, 3, 1}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":5,", -1, NULL},
            {{1000, 3, 2}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":5,", -1, NULL},
            {{1000000, 3, 2}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", -1, NULL},
            {{10000000, 8, 1}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":5,", KERNELS_FP64, NULL},
            {{10000000, 8, 1}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", KERNELS_FP32, NULL},
            {{1003, 24, 13}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", -1, NULL},
            {{10000, 5, 100}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", -1, NULL},
            {{10000, 17, 1000}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", -1, NULL},
            {{10000, 12, 1000}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", KERNELS_FP32, NULL},
            {{10000, 12, 1000}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":3,", KERNELS_FP64, NULL},
            {{100000, 16, 16}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", KERNELS_FP64, NULL},
            {{1000000, 12, 24}, "\"t3\":24,", "\"apipe\":3,", -1, NULL},
            {{1000000, 32, 32},
             "\"t3\":32,",
             "\"apipe\":3,",
             KERNELS_FP32,
             "A's next round copied ahead"},
            {{1000000, 32, 32}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", KERNELS_FP64, NULL},
            {{1000003, 32, 24}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", KERNELS_FP64, NULL},
            {{100003, 8, 24},
             "\"kernel\":\"tsm2_v3\"",
             "\"apipe\":4,",
             -1,
             "odd m: the walk's fragments' own rows"},
            {{100003, 4, 24}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", -1, NULL},
            {{100003, 16, 16}, "\"kernel\":\"ism2_opt1\"", "\"apipe\":3,", KERNELS_FP64, NULL},
            {{10241, 5, 10241}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":3,", KERNELS_FP32, NULL},
            {{10242, 12, 10242}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":3,", KERNELS_FP32, NULL},
            {{10243, 13, 10243}, "\"kernel\":\"tsm2_v3\"", "\"apipe\":4,", KERNELS_FP32, NULL}};
        for (size_t x = 0; x < sizeof rule / sizeof rule[0]; x++) {
            if (rule[x].prec >= 0 && rule[x].prec != prec)
                continue;
            assert_int_equal(kernels_session_prepare(sess, prec, &rule[x].sh), RK_OK);
            assert_int_equal(kernels_session_measure(sess, e, NULL, &quick, &r), RK_OK);
            assert_true(r.verified);
            assert_non_null(strstr(r.params_json, rule[x].kernel));
            assert_non_null(strstr(r.params_json, rule[x].apipe));
            if (rule[x].why)
                assert_non_null(strstr(r.params_json, rule[x].why));
        }
        for (size_t s = 0; s < sizeof more / sizeof more[0]; s++) {
            assert_int_equal(kernels_session_prepare(sess, prec, &more[s]), RK_OK);
            expect_verified(e, NULL, &more[s], prec);
            for (size_t g = 0; g < sizeof given / sizeof given[0]; g++)
                expect_verified(e, given[g], &more[s], prec);
        }
        for (size_t x = 0; x < sizeof xcols / sizeof xcols[0]; x++) {
            const long t2 = xcols[x];
            if (prec != KERNELS_FP32) /* fp32 has them only */
                continue;
            const struct kernels_shape xs[] = {{1000, t2, 1001}, {257, t2 - 1, 1037}};
            const long sets[][KERNELS_MAX_PARAMS] = {{0, t2, 0, 0, 1, 0}, {128, t2, 0, 3, 1, 0}};
            for (int s = 0; s < 2; s++) {
                assert_int_equal(kernels_session_prepare(sess, prec, &xs[s]), RK_OK);
                for (int v = 0; v < 2; v++)
                    expect_verified(v3, sets[v], &xs[s], prec);
            }
        }
    }
}

static void seed_variants(void **state)
{
    (void)state;
    static const struct kernels_shape shapes[] = {{67, 131, 29}, {200, 45, 300}};
    const int ns = 2;
    static const long bs[][KERNELS_MAX_PARAMS] = {{1}, {5}, {8}, {16}, {24}, {32}};
    variants("naive", bs, 6, shapes, ns);
    variants("stso", bs, 6, shapes, ns);
    variants("smem_001", bs, 6, shapes, ns);
    variants("rect_padded", bs, 6, shapes, ns);
    variants("rect_border", bs, 6, shapes, ns);
    static const long stmo[][KERNELS_MAX_PARAMS] = {{8, 1}, {16, 2}, {32, 8}, {24, 4}, {12, 4}};
    variants("stmo", stmo, 5, shapes, ns);
    static const long stmvb[][KERNELS_MAX_PARAMS] = {{8, 8}, {16, 2}, {24, 4}, {32, 1}, {7, 4}};
    variants("stmvb", stmvb, 5, shapes, ns);
    static const long bt[][KERNELS_MAX_PARAMS] = {{4}, {8}};
    variants("blocktile1d_001", bt, 2, shapes, ns);
    static const long tiled[][KERNELS_MAX_PARAMS] = {{128, 64, 16, 8, 1}, {128, 64, 16, 8, 4},
                                                     {128, 64, 7, 4, 2},  {32, 32, 32, 1, 1},
                                                     {64, 64, 8, 4, 4},   {48, 40, 5, 2, 2}};
    variants("tiled_003", tiled, 6, shapes, ns);
}

static void tf32_is_detected(void **state)
{
    (void)state;
    const struct kernels_kernel *k = kernels_find("cublas_gemmex");
    const struct kernels_shape sh = {512, 512, 2048};
    const long tf32[KERNELS_MAX_PARAMS] = {1};
    struct kernels_result r;
    assert_int_equal(kernels_session_prepare(sess, KERNELS_FP32, &sh), RK_OK);
    assert_int_equal(kernels_session_measure(sess, k, tf32, &quick, &r), RK_OK);
    assert_true(r.verified);
    assert_true(r.rel_error > 1e-5); /* TF32's 10-bit mantissa shows */
    assert_int_equal(kernels_session_measure(sess, k, NULL, &quick, &r), RK_OK);
    assert_true(r.verified);
    assert_true(r.rel_error < 1e-5); /* plain fp32 */
}

/* move, the floor under a shape's kernels: exact (tolerance 0) with 16-byte vectors and where m
 * is no multiple of the vector (each of its layouts), 1, 2, 4 and 8 vectors of rows a thread,
 * n above and below k (C's columns in groups where the rows are few), k past one slice */
static void move_paths(void **state)
{
    (void)state;
    /* 8 vectors a thread: 1000003 x 5 x 1, 4000000 x 3 x 1, 2000001 x 9 x 1 (move.cu plan_of);
     * m not a multiple of 4: one row a vector below MOVE_SIDE_ROWS (999, 1001, 100003), rows
     * side by side from it (300001, 1000003, 2000001) and below it past MOVE_SIDE_K (20001 x 3
     * x 257), C in whole lines from MOVE_LINE_ROWS with n >= 8, k <= 2 (4000001 x 9 x 1,
     * 4000003 x 33 x 2; fp64 odd m only at 4000001 and 4000003) */
    static const struct kernels_shape shapes[] = {
        {300000, 7, 3},   {300000, 2, 19}, {600000, 33, 1},  {1001, 33, 4},
        {999, 3, 17},     {300001, 5, 9},  {64, 1, 1},       {1000003, 5, 1},
        {4000000, 3, 1},  {2000001, 9, 1}, {100000, 32, 1},  {100003, 8, 2},
        {300003, 32, 24}, {4000001, 9, 1}, {4000003, 33, 2}, {20001, 3, 257},
    };
    const struct kernels_kernel *mv = kernels_find("move");
    assert_non_null(mv);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            assert_int_equal(kernels_session_prepare(sess, prec, &shapes[s]), RK_OK);
            assert_true(verified(mv, NULL, &shapes[s], prec).rel_error == 0.0);
        }
}

static void bad_params_refused(void **state)
{
    (void)state;
    char why[200];
    const struct kernels_kernel *v3 = kernels_find("tsm2_v3"), *stmo = kernels_find("stmo");
    const long bad_t3[KERNELS_MAX_PARAMS] = {128, 4, 3, 1};
    const long bad_t1[KERNELS_MAX_PARAMS] = {100, 4, 4, 1};
    const long bad_stmo[KERNELS_MAX_PARAMS] = {12, 8};
    assert_int_equal(kernels_check(v3, KERNELS_FP32, bad_t3, why, sizeof why), RK_EUSAGE);
    assert_int_equal(kernels_check(v3, KERNELS_FP32, bad_t1, why, sizeof why), RK_EUSAGE);
    assert_int_equal(kernels_check(stmo, KERNELS_FP64, bad_stmo, why, sizeof why), RK_EUSAGE);
    assert_int_equal(
        kernels_check(kernels_find("cublas_sgemm"), KERNELS_FP64, NULL, why, sizeof why),
        RK_EUSAGE);
}

static void too_big_refused(void **state)
{
    (void)state;
    const struct kernels_shape huge = {2000000, 2000000, 16};
    assert_int_equal(kernels_session_prepare(sess, KERNELS_FP64, &huge), RK_ENOMEM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_static),    cmocka_unit_test(all_kernels_odd),
        cmocka_unit_test(tsm2_variants),      cmocka_unit_test(tsm2_entry),
        cmocka_unit_test(seed_variants),      cmocka_unit_test(tf32_is_detected),
        cmocka_unit_test(bad_params_refused), cmocka_unit_test(too_big_refused),
        cmocka_unit_test(move_paths),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
