/*
 * test_tune_space.c - the configurations `roofkit tune` sweeps (kernels/tune.c), without a
 * GPU (ctest label unit, CI included).
 *
 * Cases:
 *   tsm2_axes        tsm2_v3 on the tsm2 suite's shapes: t1 {64..512} x t2 up to the tile
 *                    covering n x t3 {1..16}; sizes 40, 60, 80, 100 for n = 2, 4, 8, 16
 *   ism2_axes        ism2_opt1 / opt2: t3 up to the tile covering k x 12 tcf values
 *   enumeration      every index gives a distinct configuration, the last axis fastest,
 *                    other parameters at their registry defaults, each passes
 *                    kernels_check for both precisions
 *   override         --t1 / --tcf replace the run-time axis (sorted); duplicates, values
 *                    out of the parameter's range and too many values are refused
 *   refused          kernels that are not TSM2 V2/V3 or ISM2, and bad shapes
 *   same             kernels_tune_same compares the axes only
 *   entry_sweep      kernels_tsm2_sweep for the entry point tsm2: every vector distinct and
 *                    valid for its precision (kernels_check), the covering tile where fp32
 *                    has one (t2 5 at n = 5, 20 at n = 17) and never in fp64, column blocks
 *                    only above 16 columns, ISM2's wide tile at k <= 64, n = 32
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"
#include "kernels.h"

#include <string.h>

static void tsm2_axes(void **state)
{
    const struct kernels_kernel *k = kernels_find("tsm2_v3");
    const long ns[] = {2, 4, 8, 16}, sizes[] = {40, 60, 80, 100};
    struct kernels_tune_space sp;
    char why[200];
    (void)state;
    assert_non_null(k);
    assert_true(kernels_tune_kernel_ok(k, 0));
    assert_false(kernels_tune_kernel_ok(k, 1));
    for (int i = 0; i < 4; i++) {
        struct kernels_shape sh = {10240, ns[i], 10240};
        assert_int_equal(kernels_tune_space_init(k, &sh, NULL, 0, &sp, why, sizeof why), RK_OK);
        assert_int_equal(sp.n_axes, 3);
        assert_string_equal(sp.axes[0].name, "t1");
        assert_string_equal(sp.axes[1].name, "t2");
        assert_string_equal(sp.axes[2].name, "t3");
        assert_int_equal(sp.axes[1].values[sp.axes[1].n - 1], ns[i]);
        assert_int_equal(kernels_tune_space_size(&sp), sizes[i]);
    }
    /* n = 3: t2 up to 4, the tile that covers n in one pass */
    struct kernels_shape odd = {1000, 3, 1000};
    assert_int_equal(kernels_tune_space_init(k, &odd, NULL, 0, &sp, why, sizeof why), RK_OK);
    assert_int_equal(sp.axes[1].n, 3);
    assert_int_equal(sp.axes[1].values[2], 4);
    /* n = 100: t2 at most 16 */
    struct kernels_shape wide = {1000, 100, 1000};
    assert_int_equal(kernels_tune_space_init(k, &wide, NULL, 0, &sp, why, sizeof why), RK_OK);
    assert_int_equal(sp.axes[1].values[sp.axes[1].n - 1], 16);
    assert_true(kernels_tune_kernel_ok(kernels_find("tsm2_v2"), 0));
}

static void ism2_axes(void **state)
{
    struct kernels_tune_space sp;
    char why[200];
    (void)state;
    for (int v = 0; v < 2; v++) {
        const struct kernels_kernel *k = kernels_find(v ? "ism2_opt2" : "ism2_opt1");
        struct kernels_shape s8 = {1000000, 8, 8}, s16 = {1000000, 16, 16};
        assert_non_null(k);
        assert_true(kernels_tune_kernel_ok(k, 1));
        assert_int_equal(kernels_tune_space_init(k, &s8, NULL, 0, &sp, why, sizeof why), RK_OK);
        assert_int_equal(sp.n_axes, 2);
        assert_string_equal(sp.axes[0].name, "t3");
        assert_string_equal(sp.axes[1].name, "tcf");
        assert_int_equal(sp.axes[0].n, 4);
        assert_int_equal(sp.axes[1].n, 12);
        assert_int_equal(kernels_tune_space_size(&sp), 48);
        assert_int_equal(kernels_tune_space_init(k, &s16, NULL, 0, &sp, why, sizeof why), RK_OK);
        assert_int_equal(kernels_tune_space_size(&sp), 60);
    }
}

static void enumeration(void **state)
{
    const char *names[] = {"tsm2_v3", "tsm2_v2", "ism2_opt1", "ism2_opt2"};
    (void)state;
    for (int n = 0; n < 4; n++) {
        const struct kernels_kernel *k = kernels_find(names[n]);
        struct kernels_shape sh = {20480, 16, n < 2 ? 20480 : 16};
        struct kernels_tune_space sp;
        long p[KERNELS_MAX_PARAMS], q[KERNELS_MAX_PARAMS];
        char why[200];
        assert_int_equal(kernels_tune_space_init(k, &sh, NULL, 0, &sp, why, sizeof why), RK_OK);
        long size = kernels_tune_space_size(&sp);
        kernels_tune_space_params(&sp, 0, p);
        kernels_tune_space_params(&sp, 1, q);
        /* the last axis varies fastest */
        assert_int_equal(q[sp.axes[sp.n_axes - 1].index], sp.axes[sp.n_axes - 1].values[1]);
        assert_int_equal(q[sp.axes[0].index], sp.axes[0].values[0]);
        for (long i = 0; i < size; i++) {
            kernels_tune_space_params(&sp, i, p);
            for (int j = 0; j < k->n_params; j++) {
                int swept = 0;
                for (int a = 0; a < sp.n_axes; a++)
                    swept |= sp.axes[a].index == j;
                if (!swept)
                    assert_int_equal(p[j], k->params[j].def);
            }
            for (int prec = 0; prec < KERNELS_NPREC; prec++)
                if (kernels_check(k, prec, p, why, sizeof why) != RK_OK)
                    fail_msg("%s configuration %ld: %s", k->name, i, why);
            for (long j = 0; j < i; j++) {
                kernels_tune_space_params(&sp, j, q);
                assert_false(kernels_tune_same(&sp, p, q));
            }
        }
    }
}

static void override(void **state)
{
    const struct kernels_kernel *v3 = kernels_find("tsm2_v3"), *o1 = kernels_find("ism2_opt1");
    struct kernels_shape sh = {10240, 8, 10240}, is = {100000, 8, 8};
    struct kernels_tune_space sp;
    const long t1[] = {256, 128}, dup[] = {128, 128}, big[] = {2048}, tcf[] = {5, 1, 100};
    long many[KERNELS_TUNE_MAX_VALUES + 1];
    char why[200];
    (void)state;
    assert_int_equal(kernels_tune_space_init(v3, &sh, t1, 2, &sp, why, sizeof why), RK_OK);
    assert_int_equal(sp.axes[0].n, 2);
    assert_int_equal(sp.axes[0].values[0], 128);
    assert_int_equal(sp.axes[0].values[1], 256);
    assert_int_equal(kernels_tune_space_size(&sp), 2 * 4 * 5);
    assert_int_equal(kernels_tune_space_init(v3, &sh, dup, 2, &sp, why, sizeof why), RK_EUSAGE);
    assert_non_null(strstr(why, "twice"));
    assert_int_equal(kernels_tune_space_init(v3, &sh, big, 1, &sp, why, sizeof why), RK_EUSAGE);
    assert_non_null(strstr(why, "range"));
    for (int i = 0; i <= KERNELS_TUNE_MAX_VALUES; i++)
        many[i] = 32 * (i + 1);
    assert_int_equal(
        kernels_tune_space_init(v3, &sh, many, KERNELS_TUNE_MAX_VALUES + 1, &sp, why, sizeof why),
        RK_EUSAGE);
    assert_int_equal(kernels_tune_space_init(o1, &is, tcf, 3, &sp, why, sizeof why), RK_OK);
    assert_int_equal(sp.axes[1].values[0], 1);
    assert_int_equal(sp.axes[1].values[2], 100);
}

static void refused(void **state)
{
    struct kernels_tune_space sp;
    struct kernels_shape sh = {1024, 8, 1024}, bad = {0, 8, 1024};
    char why[200];
    (void)state;
    assert_false(kernels_tune_kernel_ok(kernels_find("tsm2_v0"), 0));
    assert_false(kernels_tune_kernel_ok(kernels_find("cublas_sgemm"), 1));
    assert_false(kernels_tune_kernel_ok(NULL, 0));
    assert_int_equal(
        kernels_tune_space_init(kernels_find("stmvb"), &sh, NULL, 0, &sp, why, sizeof why),
        RK_EUSAGE);
    assert_non_null(strstr(why, "not a TSM2"));
    assert_int_equal(
        kernels_tune_space_init(kernels_find("tsm2_v3"), &bad, NULL, 0, &sp, why, sizeof why),
        RK_EUSAGE);
}

static void same(void **state)
{
    struct kernels_tune_space sp;
    struct kernels_shape sh = {1024, 8, 1024};
    long a[KERNELS_MAX_PARAMS], b[KERNELS_MAX_PARAMS];
    char why[200];
    (void)state;
    assert_int_equal(
        kernels_tune_space_init(kernels_find("tsm2_v3"), &sh, NULL, 0, &sp, why, sizeof why),
        RK_OK);
    kernels_tune_space_params(&sp, 7, a);
    memcpy(b, a, sizeof b);
    b[kernels_param_index(sp.kernel, "ksplit")] = 9; /* not an axis */
    assert_true(kernels_tune_same(&sp, a, b));
    b[kernels_param_index(sp.kernel, "t3")] ^= 3;
    assert_false(kernels_tune_same(&sp, a, b));
}

/* 1 when one of the n vectors of out has parameter i (entry point order) equal to v. */
static int has(long (*out)[KERNELS_MAX_PARAMS], int n, int i, long v)
{
    for (int j = 0; j < n; j++)
        if (out[j][i] == v)
            return 1;
    return 0;
}

/* 1 when one of them has t2 (index 2) equal to t2 and apipe (index 5) equal to apipe. */
static int has_tile(long (*out)[KERNELS_MAX_PARAMS], int n, long t2, long apipe)
{
    for (int j = 0; j < n; j++)
        if (out[j][2] == t2 && out[j][5] == apipe)
            return 1;
    return 0;
}

static void entry_sweep(void **state)
{
    const struct kernels_kernel *e = kernels_find("tsm2");
    const struct kernels_shape shapes[] = {{20480, 5, 20480},  {20480, 17, 20480},
                                           {20480, 32, 20480}, {10000000, 32, 12},
                                           {1000, 1, 1},       {100000, 24, 2}};
    long out[64][KERNELS_MAX_PARAMS];
    char why[200];
    (void)state;
    assert_non_null(e);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            const int n = kernels_tsm2_sweep(prec, &shapes[s], out, 64);
            assert_true(n >= 3 && n < 64);
            for (int i = 0; i < n; i++) {
                assert_true(out[i][0] >= 1 && out[i][0] <= 4); /* a variant, never the choice */
                assert_int_equal(kernels_check(e, prec, out[i], why, sizeof why), RK_OK);
                for (int j = 0; j < i; j++)
                    assert_memory_not_equal(out[i], out[j], sizeof out[i]);
            }
            const long ncol = shapes[s].n, k = shapes[s].k;
            if (k > KERNELS_TSM2_ISM2_K) {
                /* the ring's extra column tiles: fp32 only */
                assert_int_equal(has_tile(out, n, ncol == 5 ? 5 : 20, 1),
                                 prec == KERNELS_FP32 && (ncol == 5 || ncol == 17));
                assert_int_equal(has(out, n, 7, 2), ncol > 16);
                /* the stream kernel, every column in one pass, both precisions */
                assert_true(has_tile(out, n, ncol, 3));
                /* on the tensor cores with one and with two tiles of 16 rows a warp */
                int tiles = 0;
                for (int j = 0; j < n; j++)
                    tiles |= out[j][5] == 4 && out[j][2] == ncol ? (int)out[j][6] : 0;
                assert_int_equal(tiles, 2 | 4);
            } else {
                if (ncol == 32)
                    assert_true(has(out, n, 2, 32)); /* the rows kernel's wide tile */
                /* ISM2 opt. 1 with rows in vectors (apipe 3) where k <= 16: t1 128 and 256, tcf
                 * chosen and, from k = 3, one */
                int vec = 0, one = 0;
                for (int j = 0; j < n; j++) {
                    vec += out[j][0] == 3 && out[j][5] == 3;
                    one += out[j][0] == 3 && out[j][5] == 3 && out[j][4] == 1;
                }
                assert_int_equal(vec, k > 16 ? 0 : k >= 3 ? 4 : 2);
                assert_int_equal(one, k <= 16 && k >= 3 ? 2 : 0);
                /* the outer-product kernel (apipe 5) where k <= 2: t1 128 and 256, the slices
                 * chosen and one */
                int outer = 0;
                for (int j = 0; j < n; j++)
                    outer += out[j][0] == 3 && out[j][5] == 5;
                assert_int_equal(outer, k <= 2 ? 4 : 0);
            }
        }
    assert_int_equal(kernels_tsm2_sweep(KERNELS_FP32, &shapes[0], out, 2), 2); /* max holds */
    /* the outer-product kernel (apipe 5): its t3 is k, at most 2 */
    for (long t3 = 0; t3 <= 4; t3++) {
        const long v[KERNELS_MAX_PARAMS] = {3, 128, 0, t3, 0, 5, 0, 0};
        for (int prec = 0; prec < KERNELS_NPREC; prec++)
            assert_int_equal(kernels_check(e, prec, v, why, sizeof why) == RK_OK, t3 <= 2);
    }
    /* rpt with apipe = 4 is the rows a thread loads: 2 or 4 (one or two tiles a warp) */
    for (long rpt = 0; rpt <= 5; rpt++) {
        const long v[KERNELS_MAX_PARAMS] = {2, 128, 32, 16, 0, 4, rpt, 0};
        for (int prec = 0; prec < KERNELS_NPREC; prec++)
            assert_int_equal(kernels_check(e, prec, v, why, sizeof why) == RK_OK,
                             rpt == 0 || rpt == 2 || rpt == 4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tsm2_axes),   cmocka_unit_test(ism2_axes), cmocka_unit_test(enumeration),
        cmocka_unit_test(override),    cmocka_unit_test(refused),   cmocka_unit_test(same),
        cmocka_unit_test(entry_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
