/*
 * test_registry.c - the probe registry and session opening, on any machine.
 *
 * Case ids:
 *   R1  names are unique, prefixed by their group's convention, summaries present
 *   R2  --only: NULL/empty selects all; groups; prefixes; several at once
 *   R3  --only: an unknown name is RK_EUSAGE, also inside a list; so is an empty name
 *   R4  lane table: H100 figures (fp32 128, fp64 64), unknown GPU 0
 *   R5  without a GPU, probes_open returns RK_ENOGPU and no session (skipped where
 *       a GPU is present)
 *   R6  with fewer than two GPUs every pair is waived with a reason, and probes_peer_run
 *       returns RK_OK with nothing appended (skipped where two are present: test_peer_gpu)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "common.h"
#include "probes.h"

static int index_of(const char *name)
{
    for (int i = 0; i < probes_count(); i++)
        if (strcmp(probes_get(i)->name, name) == 0)
            return i;
    return -1;
}

static void r1_names(void **state)
{
    static const char *prefix[] = {"bw_", "lat_", "peak_", "launch_", "energy_"};
    (void)state;
    assert_true(probes_count() >= 20);
    assert_null(probes_get(-1));
    assert_null(probes_get(probes_count()));
    for (int i = 0; i < probes_count(); i++) {
        const struct probes_info *p = probes_get(i);
        int g = p->group == PROBES_BANDWIDTH ? 0
                : p->group == PROBES_LATENCY ? 1
                : p->group == PROBES_FLOPS   ? 2
                : p->group == PROBES_LAUNCH  ? 3
                                             : 4;
        assert_true(strncmp(p->name, prefix[g], strlen(prefix[g])) == 0);
        assert_true(p->summary && p->summary[0]);
        for (int k = 0; k < i; k++)
            assert_string_not_equal(p->name, probes_get(k)->name);
    }
}

static int count(const unsigned char *sel)
{
    int n = 0;
    for (int i = 0; i < probes_count(); i++)
        n += sel[i];
    return n;
}

static void r2_select(void **state)
{
    unsigned char sel[64];
    (void)state;
    assert_int_equal(probes_select(NULL, sel), RK_OK);
    assert_int_equal(count(sel), probes_count());
    assert_int_equal(probes_select("", sel), RK_OK);
    assert_int_equal(count(sel), probes_count());
    assert_int_equal(probes_select("launch", sel), RK_OK);
    assert_int_equal(count(sel), 3);
    assert_true(sel[index_of("launch_async")] && sel[index_of("launch_sync")] &&
                sel[index_of("launch_event")]);
    assert_int_equal(probes_select("bw_dram", sel), RK_OK);
    assert_int_equal(count(sel), 4);
    assert_int_equal(probes_select("lat_,peak_tensor_bf16", sel), RK_OK);
    assert_true(sel[index_of("lat_chase")] && sel[index_of("lat_fma_fp16")]);
    assert_true(sel[index_of("peak_tensor_bf16")] && !sel[index_of("peak_tensor_fp16")]);
    assert_int_equal(probes_select("flops,launch", sel), RK_OK);
    assert_true(sel[index_of("peak_fp32_fma")] && sel[index_of("launch_sync")]);
    assert_false(sel[index_of("bw_l2_read")]);
}

static void r3_select_bad(void **state)
{
    unsigned char sel[64];
    (void)state;
    assert_int_equal(probes_select("bogus", sel), RK_EUSAGE);
    assert_int_equal(probes_select("latency,bw_dram_reed", sel), RK_EUSAGE);
    assert_int_equal(probes_select("Bandwidth", sel), RK_EUSAGE);
    assert_int_equal(probes_select("latency,,launch", sel), RK_EUSAGE);
    assert_int_equal(probes_select("latency,", sel), RK_EUSAGE);
}

static void r4_lanes(void **state)
{
    (void)state;
    assert_int_equal(probes_lanes_per_sm(9, 0, "fp32"), 128);
    assert_int_equal(probes_lanes_per_sm(9, 0, "fp64"), 64);
    assert_int_equal(probes_lanes_per_sm(8, 0, "fp32"), 64);
    assert_int_equal(probes_lanes_per_sm(3, 5, "fp32"), 0);
    assert_int_equal(probes_lanes_per_sm(9, 0, "int4"), 0);
}

static void r5_no_gpu(void **state)
{
    int n = 0;
    struct probes *s = (struct probes *)&n;
    (void)state;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
        skip();
    assert_int_equal(probes_open(0, 1, &s), RK_ENOGPU);
    assert_null(s);
}

static void r6_peer_waived(void **state)
{
    struct probes_output out = {0};
    char why[256];
    int n = 0;
    (void)state;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n >= 2)
        skip();
    why[0] = '\0';
    assert_int_equal(probes_peer_waived(0, 1, why, sizeof why), 1);
    assert_true(why[0]);
    assert_int_equal(probes_peer_waived(0, 1, NULL, 0), 1);
    assert_int_equal(probes_peer_run(0, 1, 1, &out), RK_OK);
    assert_int_equal(out.n_results, 0);
    probes_output_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(r1_names), cmocka_unit_test(r2_select), cmocka_unit_test(r3_select_bad),
        cmocka_unit_test(r4_lanes), cmocka_unit_test(r5_no_gpu), cmocka_unit_test(r6_peer_waived),
    };
    rk_set_quiet(1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
