/*
 * test_kernels_registry.c - the kernel registry and suites without a GPU (ctest
 * label unit, CI included): everything `roofkit list kernels|suites` and the
 * argument checks of `roofkit run` rely on.
 *
 * Cases:
 *   defaults_valid       every kernel's defaults pass kernels_check in each of its
 *                        precisions and the model's cost formula accepts them
 *   names_unique         names are unique and kernels_find returns the entry
 *   match_prefix_glob    exact names, prefixes and globs select what they should
 *   bad_params_refused   out-of-range, non-power-of-two and inconsistent values and
 *                        missing precisions give RK_EUSAGE with a reason
 *   params_json_text     the JSON text of a parameter set
 *   suites_well_formed   every suite entry names kernels that exist and has shapes;
 *                        the tsm2 and ism2 suites hold the seed's shapes (004 §4.1, §6)
 *   suite_grids          tsm2-grid and ism2-grid: every shape of their cross products once
 *                        and nothing else, the entry point tsm2 and the faster-cuBLAS
 *                        references beside it, and how `roofkit list suites` words a grid
 *                        and a listed entry
 *   cost_extensions      apipe and rpt reach the cost model: the cp.async ring adds
 *                        shared traffic, rpt = 4 divides B's shared reads; apipe = 0
 *                        and 2 (no ring) ignore rpt; DRAM counts do not change
 *   model_facts          what the model reads of the kernels: kernels_model_params (the
 *                        ring and rows per thread), kernels_smem_load_bytes (the seeds'
 *                        scalar shared loads, the vector ones, none), V1's columns and
 *                        V0/V1's unrolls
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"
#include "kernels.h"

#include <string.h>

static void defaults_valid(void **state)
{
    (void)state;
    for (int i = 0; i < kernels_count(); i++) {
        const struct kernels_kernel *k = kernels_get(i);
        long p[KERNELS_MAX_PARAMS] = {0};
        char why[200] = "";
        for (int j = 0; j < k->n_params; j++)
            p[j] = k->params[j].def;
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            struct kernels_shape sh = {1000, 16, 1000};
            struct model_cost cost;
            long q[KERNELS_MAX_PARAMS];
            if (!(k->precisions & KERNELS_PREC_BIT(prec)))
                continue;
            if (kernels_check(k, prec, p, why, sizeof why) != RK_OK)
                fail_msg("%s %s: %s", k->name, kernels_precision_name(prec), why);
            memcpy(q, p, sizeof q);
            for (int j = 0; j < k->n_params; j++)
                if (q[j] == 0) /* AUTO: give the model a plausible resolved value */
                    q[j] = strcmp(k->params[j].name, "t1") == 0 ? 128 : 1;
            assert_int_equal(kernels_cost(k, prec, &sh, q, &cost), RK_OK);
            assert_true(cost.flops ==
                        (k->cost_family == MODEL_FAM_MOVE ? 0.0 : 2.0 * 1000 * 16 * 1000));
            assert_true(cost.bytes_dram > 0);
        }
    }
}

static void names_unique(void **state)
{
    (void)state;
    assert_true(kernels_count() >= 18);
    assert_null(kernels_get(-1));
    assert_null(kernels_get(kernels_count()));
    for (int i = 0; i < kernels_count(); i++) {
        const struct kernels_kernel *k = kernels_get(i);
        assert_ptr_equal(kernels_find(k->name), k);
        assert_non_null(k->impl);
        assert_non_null(k->description);
        assert_non_null(k->seed);
        assert_true(k->precisions != 0);
        for (int j = i + 1; j < kernels_count(); j++)
            assert_string_not_equal(k->name, kernels_get(j)->name);
    }
    assert_null(kernels_find("tsm2_v"));
    assert_non_null(kernels_find("tsm2")); /* the entry point */
}

static void match_prefix_glob(void **state)
{
    (void)state;
    assert_true(kernels_match("tsm2_v3", "tsm2_v3"));
    /* a kernel's exact name selects that kernel alone: "tsm2" is the entry point */
    assert_true(kernels_match("tsm2", "tsm2"));
    assert_false(kernels_match("tsm2", "tsm2_v0"));
    assert_true(kernels_match("tsm2_*", "tsm2_v0"));
    assert_false(kernels_match("tsm2_*", "tsm2"));
    assert_true(kernels_match("tsm2_v", "tsm2_v1"));
    assert_true(kernels_match("ism2", "ism2_opt2"));
    assert_true(kernels_match("cublas", "cublas_gemmex"));
    assert_true(kernels_match("*_v3", "tsm2_v3"));
    assert_true(kernels_match("tsm2_v?", "tsm2_v2"));
    assert_true(kernels_match("*", "naive"));
    assert_false(kernels_match("ism2", "tsm2_v3"));
    assert_false(kernels_match("*_v3", "tsm2_v2"));
    assert_false(kernels_match("tsm2_v3x", "tsm2_v3"));
}

static void bad_params_refused(void **state)
{
    (void)state;
    char why[200] = "";
    const struct kernels_kernel *v3 = kernels_find("tsm2_v3");
    const struct kernels_kernel *stmo = kernels_find("stmo");
    const struct kernels_kernel *tiled = kernels_find("tiled_003");
    const long t3_not_pow2[KERNELS_MAX_PARAMS] = {128, 4, 3, 1, 1, 0};
    const long t1_not_warp[KERNELS_MAX_PARAMS] = {100, 4, 4, 1, 1, 0};
    const long t3_too_big[KERNELS_MAX_PARAMS] = {32, 4, 64, 1, 1, 0};
    const long rpt2_registers[KERNELS_MAX_PARAMS] = {128, 4, 4, 1, 0, 2};
    const long stmo_stride[KERNELS_MAX_PARAMS] = {12, 8};
    const long tiled_scale[KERNELS_MAX_PARAMS] = {128, 64, 16, 3, 4};
    assert_int_equal(kernels_check(v3, KERNELS_FP32, t3_not_pow2, why, sizeof why), RK_EUSAGE);
    assert_true(strstr(why, "t3") != NULL);
    assert_int_equal(kernels_check(v3, KERNELS_FP32, t1_not_warp, why, sizeof why), RK_EUSAGE);
    assert_true(strstr(why, "t1") != NULL);
    assert_int_equal(kernels_check(v3, KERNELS_FP32, t3_too_big, why, sizeof why), RK_EUSAGE);
    assert_int_equal(kernels_check(v3, KERNELS_FP64, rpt2_registers, why, sizeof why), RK_EUSAGE);
    assert_true(strstr(why, "rpt") != NULL);
    assert_int_equal(kernels_check(stmo, KERNELS_FP64, stmo_stride, why, sizeof why), RK_EUSAGE);
    assert_int_equal(kernels_check(tiled, KERNELS_FP32, tiled_scale, why, sizeof why), RK_EUSAGE);
    assert_int_equal(
        kernels_check(kernels_find("cublas_sgemm"), KERNELS_FP64, NULL, why, sizeof why),
        RK_EUSAGE);
    assert_true(strstr(why, "fp64") != NULL);
    assert_int_equal(kernels_check(v3, KERNELS_FP32, NULL, why, sizeof why), RK_OK);
}

static void params_json_text(void **state)
{
    (void)state;
    char buf[256];
    const long p[KERNELS_MAX_PARAMS] = {16, 4};
    kernels_params_json(kernels_find("stmvb"), p, buf, sizeof buf);
    assert_string_equal(buf, "{\"block_size\":16,\"parallel\":4}");
    kernels_params_json(kernels_find("regtile"), p, buf, sizeof buf);
    assert_string_equal(buf, "{}");
}

/* How many times suite s runs shape m x n x k (over its entries). */
static int suite_has(const struct kernels_suite *s, long m, long n, long k)
{
    int hits = 0;
    for (int e = 0; e < s->n_entries; e++)
        for (int i = 0; i < kernels_suite_entry_size(&s->entries[e]); i++) {
            struct kernels_shape sh;
            kernels_suite_entry_shape(&s->entries[e], i, &sh);
            hits += sh.m == m && sh.n == n && sh.k == k;
        }
    return hits;
}

/* 1 when entry en names kernel pattern `name` exactly. */
static int entry_names(const struct kernels_suite_entry *en, const char *name)
{
    for (int i = 0; en->kernels[i]; i++)
        if (strcmp(en->kernels[i], name) == 0)
            return 1;
    return 0;
}

static void suite_grids(void **state)
{
    (void)state;
    static const long kn[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
    const struct kernels_suite *tg = kernels_suite_find("tsm2-grid");
    const struct kernels_suite *ig = kernels_suite_find("ism2-grid");
    char buf[1024];
    assert_non_null(tg);
    assert_non_null(ig);
    assert_int_equal(tg->n_entries, 1);
    assert_int_equal(ig->n_entries, 1);
    /* sizes equal to the cross products, each shape once: nothing else is in them */
    assert_int_equal(kernels_suite_entry_size(&tg->entries[0]), 3 * 32);
    assert_int_equal(kernels_suite_entry_size(&ig->entries[0]), 3 * 10 * 10);
    for (long m = 10240; m <= 40960; m *= 2)
        for (long n = 1; n <= 32; n++)
            assert_int_equal(suite_has(tg, m, n, m), 1);
    for (long m = 100000; m <= 10000000; m *= 10)
        for (int a = 0; a < 10; a++)
            for (int b = 0; b < 10; b++)
                assert_int_equal(suite_has(ig, m, kn[b], kn[a]), 1);
    assert_int_equal(suite_has(tg, 30720, 16, 30720), 0);
    /* the order: m slowest, then k, n fastest */
    struct kernels_shape sh;
    kernels_suite_entry_shape(&ig->entries[0], 11, &sh);
    assert_true(sh.m == 100000 && sh.k == 2 && sh.n == 2);
    kernels_suite_entry_shape(&tg->entries[0], 32, &sh);
    assert_true(sh.m == 20480 && sh.k == 20480 && sh.n == 1);
    /* both cuBLAS calls of each precision, so that the faster judges the kernel */
    for (int g = 0; g < 2; g++) {
        const struct kernels_suite_entry *en = &(g ? ig : tg)->entries[0];
        assert_true(entry_names(en, "cublas_sgemm"));
        assert_true(entry_names(en, "cublas_dgemm"));
        assert_true(entry_names(en, "cublas_gemmex"));
        assert_true(entry_names(en, "tsm2")); /* the entry point, at any m, n, k */
    }
    assert_string_equal(kernels_suite_entry_describe(&tg->entries[0], buf, sizeof buf),
                        "m in {10240, 20480, 40960}, n in 1..32, k = m");
    assert_string_equal(kernels_suite_entry_describe(&ig->entries[0], buf, sizeof buf),
                        "m in {100000, 1000000, 10000000}, n in {1, 2, 3, 4, 6, 8, 12, 16, 24, "
                        "32}, k in {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}");
    assert_string_equal(
        kernels_suite_entry_describe(&kernels_suite_find("default")->entries[0], buf, sizeof buf),
        "20480x4x20480, 20480x16x20480");
    /* m not a multiple of 4, each m mod 4, both sides of KERN_ISM2_VEC_WIDE_ROWS */
    const struct kernels_suite *og = kernels_suite_find("ism2-odd");
    assert_non_null(og);
    assert_int_equal(kernels_suite_entry_size(&og->entries[0]), 4 * 3 * 4);
    assert_int_equal(suite_has(og, 1000003, 32, 24), 1);
    assert_true(entry_names(&og->entries[0], "tsm2") && entry_names(&og->entries[0], "move"));
    /* TSM2 at m = k not a multiple of 4: each m mod 4 but 0, both sides of 16384 rows */
    const struct kernels_suite *tog = kernels_suite_find("tsm2-odd");
    assert_non_null(tog);
    assert_int_equal(kernels_suite_entry_size(&tog->entries[0]), 3 * 8);
    assert_int_equal(suite_has(tog, 10241, 5, 10241), 1);
    assert_int_equal(suite_has(tog, 20483, 32, 20483), 1);
    assert_true(entry_names(&tog->entries[0], "tsm2") && entry_names(&tog->entries[0], "move"));
    /* a short buffer is cut, always terminated */
    assert_int_equal(strlen(kernels_suite_entry_describe(&ig->entries[0], buf, 12)), 11);
}

static void suites_well_formed(void **state)
{
    (void)state;
    const struct kernels_suite *tsm2 = kernels_suite_find("tsm2");
    const struct kernels_suite *ism2 = kernels_suite_find("ism2");
    assert_non_null(kernels_suite_find("seeds"));
    assert_non_null(kernels_suite_find("default"));
    assert_null(kernels_suite_find("nope"));
    for (int s = 0; s < kernels_suites_count(); s++) {
        const struct kernels_suite *su = kernels_suite_get(s);
        assert_true(su->n_entries >= 1);
        for (int e = 0; e < su->n_entries; e++) {
            const struct kernels_suite_entry *en = &su->entries[e];
            assert_true(kernels_suite_entry_size(en) >= 1);
            assert_non_null(en->kernels[0]);
            for (int i = 0; en->kernels[i]; i++) {
                int hit = 0;
                for (int k = 0; k < kernels_count(); k++)
                    hit |= kernels_match(en->kernels[i], kernels_get(k)->name);
                assert_true(hit);
            }
        }
    }
    for (long m = 10240; m <= 30720; m += 10240)
        for (long n = 2; n <= 16; n *= 2)
            assert_true(suite_has(tsm2, m, n, m));
    for (long m = 100000; m <= 10000000; m *= 10) {
        assert_true(suite_has(ism2, m, 8, 8));
        assert_true(suite_has(ism2, m, 16, 16));
    }
    assert_true(suite_has(kernels_suite_find("seeds"), 1025, 1025, 1025));
    assert_true(suite_has(kernels_suite_find("seeds"), 4096, 4096, 4096));
}

static void cost_extensions(void **state)
{
    (void)state;
    const struct kernels_kernel *v3 = kernels_find("tsm2_v3"), *o1 = kernels_find("ism2_opt1");
    assert_non_null(v3);
    assert_non_null(o1);
    const struct kernels_shape sh = {10240, 16, 10240};
    /* t1, t2, t3, ksplit, apipe, rpt */
    const long reg[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 0, 1};
    const long ring1[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 1, 1};
    const long ring4[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 1, 4};
    const long reg4[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 0, 4};
    struct model_cost c0, c1, c4, c04;
    assert_int_equal(kernels_cost(v3, KERNELS_FP32, &sh, reg, &c0), RK_OK);
    assert_int_equal(kernels_cost(v3, KERNELS_FP32, &sh, ring1, &c1), RK_OK);
    assert_int_equal(kernels_cost(v3, KERNELS_FP32, &sh, ring4, &c4), RK_OK);
    assert_int_equal(kernels_cost(v3, KERNELS_FP32, &sh, reg4, &c04), RK_OK);
    const double a = 10240.0 * 10240 * 4; /* bytes of A, read once (t2 = n) */
    assert_true(c1.bytes_shared == c0.bytes_shared + 2 * a);
    assert_true(c4.bytes_shared == c1.bytes_shared - 16 * a * 3 / 4);
    assert_true(c04.bytes_shared == c0.bytes_shared); /* rpt only with the ring */
    assert_true(c0.bytes_dram == c4.bytes_dram && c0.bytes_dram_min == c4.bytes_dram_min);
    /* The tensor cores (apipe = 4): a warp reads each value of B once for its rpt / 2 tiles of
     * 16 rows, so B's shared loads are 1/16 (rpt 2) or 1/32 (rpt 4) of one per row: t2 = 16
     * values for each element of A, once (rpt 2) or half a time (rpt 4) */
    const long tc2[KERNELS_MAX_PARAMS] = {128, 16, 16, 1, 4, 2};
    const long tc4[KERNELS_MAX_PARAMS] = {128, 16, 16, 1, 4, 4};
    struct model_cost t2c, t4c;
    assert_int_equal(kernels_cost(v3, KERNELS_FP64, &sh, tc2, &t2c), RK_OK);
    assert_int_equal(kernels_cost(v3, KERNELS_FP64, &sh, tc4, &t4c), RK_OK);
    const double a8 = 2 * a;                            /* fp64 */
    const double b8 = 8.0 * (10240 / 128) * 10240 * 16; /* B into shared memory, a block each */
    assert_true(t2c.bytes_shared == b8 + 16 * a8 / 16);
    assert_true(t4c.bytes_shared == b8 + 16 * a8 / 32);
    /* the entry point is costed by the variant it ran, the variants by their own family */
    assert_true(kernels_costed_as_variant(kernels_find("tsm2")));
    assert_false(kernels_costed_as_variant(v3) || kernels_costed_as_variant(o1));
    /* ISM2 opt. 1, B whole in shared memory (apipe = 2): no ring of A */
    const struct kernels_shape ish = {1000000, 16, 16};
    const long rows[KERNELS_MAX_PARAMS] = {128, 16, 8, 2, 2, 1};
    const long iring[KERNELS_MAX_PARAMS] = {128, 16, 8, 2, 1, 1};
    struct model_cost r2, r1;
    assert_int_equal(kernels_cost(o1, KERNELS_FP32, &ish, rows, &r2), RK_OK);
    assert_int_equal(kernels_cost(o1, KERNELS_FP32, &ish, iring, &r1), RK_OK);
    assert_true(r1.bytes_shared == r2.bytes_shared + 2 * 1000000.0 * 16 * 4);
    /* ISM2 opt. 1 with rows in vectors (apipe = 3): A read once (t2 = n), rows of 16-byte
     * vectors shared B's loads (rpt 4 in fp32), 128 bytes in flight a thread (8 / t3 vectors of
     * t3 columns), fewer where a thread walks fewer vectors (tcf) */
    const struct kernels_shape vsh = {10000000, 3, 2};
    const long vec[KERNELS_MAX_PARAMS] = {256, 3, 2, 10, 3, 4};
    const long vec1[KERNELS_MAX_PARAMS] = {256, 3, 2, 1, 3, 4};
    const int grid[3] = {1000, 1, 1};
    struct model_cost vc;
    struct model_params vp;
    assert_int_equal(kernels_cost(o1, KERNELS_FP32, &vsh, vec, &vc), RK_OK);
    assert_true(vc.bytes_dram_min == (1e7 * 2 + 2 * 3 + 1e7 * 3) * 4);
    kernels_model_params(o1, KERNELS_FP32, vec, &vp);
    assert_int_equal(vp.rows_per_thread, 4);
    assert_int_equal(vp.a_staged, 0);
    assert_true(kernels_bytes_in_flight(o1, KERNELS_FP32, &vsh, vec, grid) == 128.0);
    assert_true(kernels_bytes_in_flight(o1, KERNELS_FP32, &vsh, vec1, grid) == 32.0);
}

static void model_facts(void **state)
{
    (void)state;
    const struct kernels_kernel *v3 = kernels_find("tsm2_v3");
    const long ring4[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 1, 4};
    const long reg4[KERNELS_MAX_PARAMS] = {256, 16, 8, 1, 0, 4};
    struct model_params mp;
    kernels_model_params(v3, KERNELS_FP32, ring4, &mp);
    assert_int_equal(mp.t1, 256);
    assert_int_equal(mp.t3, 8);
    assert_int_equal(mp.a_staged, 1);
    assert_int_equal(mp.rows_per_thread, 4);
    kernels_model_params(v3, KERNELS_FP32, reg4, &mp); /* rpt only with the ring */
    assert_int_equal(mp.a_staged, 0);
    assert_int_equal(mp.rows_per_thread, 1);

    static const char *const scalar[] = {"stso",      "stmo",        "stmvb",      "smem_001",
                                         "tiled_003", "rect_padded", "rect_border"};
    for (size_t i = 0; i < sizeof scalar / sizeof *scalar; i++) {
        const struct kernels_kernel *k = kernels_find(scalar[i]);
        assert_non_null(k);
        assert_int_equal(kernels_smem_load_bytes(k, KERNELS_FP32), 4);
        assert_int_equal(kernels_smem_load_bytes(k, KERNELS_FP64), 8);
    }
    assert_int_equal(kernels_smem_load_bytes(kernels_find("regtile"), KERNELS_FP32), 16);
    assert_int_equal(kernels_smem_load_bytes(kernels_find("tsm2_v3"), KERNELS_FP64), 16);
    assert_int_equal(kernels_smem_load_bytes(kernels_find("naive"), KERNELS_FP32), 0);
    assert_int_equal(kernels_smem_load_bytes(kernels_find("cublas_sgemm"), KERNELS_FP32), 0);
    assert_int_equal(kernels_smem_load_bytes(NULL, KERNELS_FP32), 0);

    assert_int_equal(kernels_tsm2_cols(1), 1);
    assert_int_equal(kernels_tsm2_cols(3), 4);
    assert_int_equal(kernels_tsm2_cols(8), 8);
    assert_int_equal(kernels_tsm2_cols(9), 16);
    assert_int_equal(kernels_tsm2_cols(100), 16);
    assert_int_equal(KERNELS_TSM2_V1_UNROLL(4), 4);
    assert_int_equal(KERNELS_TSM2_V1_UNROLL(8), 2);
    assert_int_equal(KERNELS_TSM2_V1_UNROLL(16), 1);
    assert_int_equal(KERNELS_TSM2_V0_UNROLL, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_valid),    cmocka_unit_test(names_unique),
        cmocka_unit_test(match_prefix_glob), cmocka_unit_test(bad_params_refused),
        cmocka_unit_test(params_json_text),  cmocka_unit_test(suites_well_formed),
        cmocka_unit_test(cost_extensions),   cmocka_unit_test(model_facts),
        cmocka_unit_test(suite_grids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
