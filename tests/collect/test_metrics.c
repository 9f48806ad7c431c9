/*
 * test_metrics.c - the alias table and plans of collect/metrics.c: pure C, no CUPTI. Label
 * `unit`.
 *
 * Case map (id: what):
 *   A1  the table: unique aliases, 1..4 terms, raw names shaped like CUPTI's, a unit each;
 *       the aliases the default set must have are in it; tensor_pipe_inst (the tensor pipe,
 *       HFMA2.MMA moves included) is not, and the old name tensor_inst is gone;
 *       tensor_inst_mma sums the gmma, dmma and imma pipes (never hmma); every tensor_ops_*
 *       alias counts 2 per multiply-add ("flop", "op" for int8); the per-path ones name their
 *       path (hgmma/igmma for *_wgmma, hmma/imma for *_mma)
 *   A2  collect_metric_find / collect_metric_get bounds
 *   P1  the default plan: one output per default alias, distinct raw names, shared terms once
 *   P2  aliases and raw names mix; duplicates collapse; "default" expands in place
 *   P3  unknown names are usage errors; raw-looking names are accepted
 *   E1  evaluation: FLOPs = add + mul + 2 fma; a NaN or infinite term makes the value NULL;
 *       a NULL raw array (launch not profiled) makes every value NULL
 *   A3  what `roofkit list metrics` says was checked: every default alias has a line but
 *       l1_bytes (not yet checked); a tensor precision's "exact" claim is asserted by the GPU
 *       test K7; unknown aliases have none
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"

/* A1 */
static void test_table(void **state)
{
    (void)state;
    int n = collect_metric_count();
    assert_true(n >= 30);
    for (int i = 0; i < n; i++) {
        const struct collect_metric *m = collect_metric_get(i);
        assert_non_null(m);
        assert_true(m->nterms >= 1 && m->nterms <= COLLECT_MAX_TERMS);
        assert_non_null(m->unit);
        assert_non_null(m->description);
        for (int t = 0; t < m->nterms; t++) {
            assert_non_null(strstr(m->raw[t], "__"));
            assert_true(m->coef[t] != 0.0);
        }
        for (int j = 0; j < i; j++)
            assert_string_not_equal(collect_metric_get(j)->alias, m->alias);
    }
    const char *wanted[] = {"gld_throughput",
                            "gld_efficiency",
                            "achieved_occupancy",
                            "dram_read_bytes",
                            "dram_write_bytes",
                            "l2_bytes",
                            "l1_bytes",
                            "shared_bytes",
                            "flop_count_sp",
                            "flop_count_dp",
                            "flop_count_hp",
                            "tensor_ops_bf16_wgmma",
                            "tensor_ops_fp16_wgmma",
                            "tensor_ops_tf32_wgmma",
                            "tensor_ops_int8_wgmma",
                            "tensor_ops_fp8",
                            "tensor_ops_fp64",
                            "inst_executed",
                            "gpu_time",
                            "sm_clock"};
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++) {
        const struct collect_metric *m = collect_metric_find(wanted[i]);
        assert_non_null(m);
        assert_true(m->in_default);
    }
    assert_null(collect_metric_find("tensor_inst"));
    const struct collect_metric *pipe = collect_metric_find("tensor_pipe_inst");
    assert_non_null(pipe);
    assert_false(pipe->in_default);
    assert_string_equal(pipe->raw[0], "sm__inst_executed_pipe_tensor.sum");
    const struct collect_metric *mma = collect_metric_find("tensor_inst_mma");
    assert_non_null(mma);
    assert_false(mma->in_default);
    assert_int_equal(mma->nterms, 3);
    assert_string_equal(mma->raw[0], "sm__inst_executed_pipe_tensor_op_gmma.sum");
    assert_string_equal(mma->raw[1], "sm__inst_executed_pipe_tensor_op_dmma.sum");
    assert_string_equal(mma->raw[2], "sm__inst_executed_pipe_tensor_op_imma.sum");
    for (int t = 0; t < 3; t++)
        assert_true(mma->coef[t] == 1.0);
    for (int i = 0; i < n; i++) {
        const struct collect_metric *m = collect_metric_get(i);
        if (strncmp(m->alias, "tensor_ops_", 11) != 0)
            continue;
        assert_int_equal(m->nterms, 1);
        assert_true(m->coef[0] == 1.0);
        assert_string_equal(m->unit, strstr(m->alias, "int8") ? "op" : "flop");
        if (strstr(m->alias, "_wgmma"))
            assert_non_null(
                strstr(m->raw[0], strstr(m->alias, "int8") ? "_op_igmma_" : "_op_hgmma_"));
        else if (strstr(m->alias, "_mma"))
            assert_non_null(
                strstr(m->raw[0], strstr(m->alias, "int8") ? "_op_imma_" : "_op_hmma_"));
        else
            assert_non_null(strstr(m->raw[0], "sm__ops_path_tensor_src_"));
    }
    const char *paths[] = {"tensor_ops_fp16_mma", "tensor_ops_bf16_mma", "tensor_ops_tf32_mma",
                           "tensor_ops_int8_mma"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        assert_non_null(collect_metric_find(paths[i]));
        assert_false(collect_metric_find(paths[i])->in_default);
    }
    const struct collect_metric *f = collect_metric_find("flop_count_dp");
    assert_int_equal(f->nterms, 3);
    assert_true(f->coef[0] == 1.0 && f->coef[1] == 1.0 && f->coef[2] == 2.0);
    assert_non_null(strstr(f->raw[2], "dfma"));
}

/* A2 */
static void test_find_get(void **state)
{
    (void)state;
    assert_null(collect_metric_get(-1));
    assert_null(collect_metric_get(collect_metric_count()));
    assert_null(collect_metric_find("no_such_alias"));
    assert_null(collect_metric_find(NULL));
    assert_string_equal(collect_metric_find("shared_bytes")->raw[0],
                        "sm__sass_data_bytes_mem_shared.sum");
}

/* P1 */
static void test_default_plan(void **state)
{
    (void)state;
    struct collect_plan *p = NULL;
    assert_int_equal(collect_plan_new(NULL, 0, &p), RK_OK);
    int ndefault = 0, nterms = 0;
    for (int i = 0; i < collect_metric_count(); i++)
        if (collect_metric_get(i)->in_default) {
            ndefault++;
            nterms += collect_metric_get(i)->nterms;
        }
    assert_int_equal(p->nout, ndefault);
    assert_true(p->nraw <= nterms);
    for (int i = 0; i < p->nraw; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(p->raw[i], p->raw[j]);
    for (int o = 0; o < p->nout; o++) {
        assert_non_null(p->out[o].alias);
        for (int t = 0; t < p->out[o].nterms; t++)
            assert_true(p->out[o].term[t] >= 0 && p->out[o].term[t] < p->nraw);
    }
    assert_int_equal(p->ndropped, 0);
    collect_plan_free(p);
}

/* P2 */
static void test_mixed_plan(void **state)
{
    (void)state;
    const char *names[] = {"flop_count_sp", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                           "flop_count_sp_fma", "flop_count_sp", "lts__t_sectors_op_read.sum"};
    struct collect_plan *p = NULL;
    assert_int_equal(collect_plan_new(names, 5, &p), RK_OK);
    assert_int_equal(p->nout, 4); /* the repeated alias collapses */
    assert_int_equal(p->nraw, 4); /* fadd, fmul, ffma, lts read */
    assert_null(p->out[1].alias);
    assert_string_equal(p->out[1].raw, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    assert_int_equal(p->out[1].term[0], p->out[0].term[2]);
    assert_string_equal(p->out[0].raw, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum + "
                                       "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum + "
                                       "2*smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    collect_plan_free(p);

    const char *withdef[] = {"l2_tex_hit_rate", "default", "dram_read_bytes"};
    struct collect_plan *d = NULL, *q = NULL;
    assert_int_equal(collect_plan_new(NULL, 0, &d), RK_OK);
    assert_int_equal(collect_plan_new(withdef, 3, &q), RK_OK);
    assert_int_equal(q->nout, d->nout + 1);
    assert_string_equal(q->out[0].alias, "l2_tex_hit_rate");
    collect_plan_free(d);
    collect_plan_free(q);
}

/* P3 */
static void test_unknown_names(void **state)
{
    (void)state;
    struct collect_plan *p = (struct collect_plan *)1;
    const char *bad[] = {"dram_read_bytes", "gld_thruput"};
    assert_int_equal(collect_plan_new(bad, 2, &p), RK_EUSAGE);
    assert_null(p);
    const char *bad2[] = {"dram__bytes read.sum"};
    assert_int_equal(collect_plan_new(bad2, 1, &p), RK_EUSAGE);
    const char *raw[] = {"sm__whatever_the_user_names.avg.pct_of_peak_sustained_active"};
    assert_int_equal(collect_plan_new(raw, 1, &p), RK_OK);
    assert_int_equal(p->nout, 1);
    collect_plan_free(p);
}

/* E1 */
static void test_eval(void **state)
{
    (void)state;
    const char *names[] = {"flop_count_sp", "dram_read_bytes", "l2_read_transactions"};
    struct collect_plan *p = NULL;
    assert_int_equal(collect_plan_new(names, 3, &p), RK_OK);
    assert_int_equal(p->nraw, 7);
    double raw[7] = {3, 5, 7, 1e9, 10, 20, 30}; /* fadd fmul ffma dram read atom red */
    struct collect_value v[3];
    collect_plan_eval(p, raw, v);
    assert_true(v[0].value == 3 + 5 + 2 * 7);
    assert_false(v[0].is_null);
    assert_string_equal(v[0].alias, "flop_count_sp");
    assert_string_equal(v[0].unit, "flop");
    assert_true(v[1].value == 1e9);
    assert_string_equal(v[1].raw, "dram__bytes_read.sum");
    assert_true(v[2].value == 60);

    raw[4] = NAN;
    collect_plan_eval(p, raw, v);
    assert_false(v[0].is_null);
    assert_true(v[2].is_null);
    raw[4] = 10;
    raw[1] = INFINITY;
    collect_plan_eval(p, raw, v);
    assert_true(v[0].is_null);
    assert_false(v[2].is_null);

    collect_plan_eval(p, NULL, v);
    for (int i = 0; i < 3; i++)
        assert_true(v[i].is_null);
    collect_plan_free(p);
}

/* A3 */
static void test_holds(void **state)
{
    (void)state;
    int checked = 0;
    for (int i = 0; i < collect_metric_count(); i++) {
        const struct collect_metric *m = collect_metric_get(i);
        const char *h = collect_metric_holds(m);
        if (m->in_default && strcmp(m->alias, "l1_bytes") != 0) {
            if (!h)
                fail_msg("default alias %s has no 'checked on H100' line", m->alias);
        }
        if (h) {
            assert_true(strlen(h) > 0 && !strchr(h, '\n'));
            checked++;
        }
    }
    assert_true(checked >= 15);
    assert_null(collect_metric_holds(NULL));
    assert_non_null(
        strstr(collect_metric_holds(collect_metric_find("tensor_ops_bf16_wgmma")), "exact"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_find_get),
        cmocka_unit_test(test_default_plan),  cmocka_unit_test(test_mixed_plan),
        cmocka_unit_test(test_unknown_names), cmocka_unit_test(test_eval),
        cmocka_unit_test(test_holds),
    };
    rk_set_quiet(1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
