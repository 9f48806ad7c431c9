/*
 * test_select.c - a session's NVTX and profiler-API selection (collect_options' nvtx,
 * nvtx_filter, from_start_off): ranges come from the program's NVTX calls through the real NVTX3
 * header (static injection, as test_nvtx.c), launches from the scripted backend of
 * fake_backend.c. No GPU. Label `unit`.
 *
 * Case map:
 *   S1 --nvtx: every launch recorded with the ranges its thread was in at the launch call
 *   S2 an include: only the launches inside it; the launch window counts only those
 *   S3 --profile-from-start off: nothing before cuProfilerStart, nothing between a stop and the
 *      next start; a stop decodes the open batch; without it (recording from the start), a stop
 *      still stops recording until the next start, as Nsight Compute does
 *   S4 a graph's kernels take the answer of their graph's launch call
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"
#include "fake_backend.h"

#include <nvtx3/nvToolsExt.h>

static int NVTX_API init_tool(NvtxGetExportTableFunc_t get)
{
    return collect_nvtx_attach(get);
}
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = init_tool;

static int ctx_a;
#define CTX_A ((void *)&ctx_a)

static int setup(void **state)
{
    (void)state;
    fake_reset();
    return 0;
}

static struct collect_result *run(struct collect_options *opt, void (*body)(void))
{
    struct collect_session *s = NULL;
    struct collect_result *r = NULL;
    assert_int_equal(collect_session_begin(opt, &s), RK_OK);
    body();
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    return r;
}

/* The program of S1 and S2: launches 1..5 in and out of ranges. */
static void ranged_launches(void)
{
    fake_launch(CTX_A, 1, "_Z4plainv");
    nvtxRangePushA("step");
    fake_launch(CTX_A, 2, "_Z4stepv");
    nvtxRangePushA("forward");
    fake_launch(CTX_A, 3, "_Z7forwardv");
    nvtxRangeId_t id = nvtxRangeStartA("phase");
    fake_launch(CTX_A, 4, "_Z7forwardv");
    nvtxRangeEnd(id);
    nvtxRangePop();
    nvtxRangePop();
    fake_launch(CTX_A, 5, "_Z4plainv");
}

static void expect(const struct collect_result *r, int n, const uint32_t *corr,
                   const char *const *nvtx)
{
    assert_int_equal(r->nlaunch, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r->launch[i].correlation, corr[i]);
        if (!nvtx[i]) {
            assert_null(r->launch[i].nvtx);
        } else {
            assert_non_null(r->launch[i].nvtx);
            assert_string_equal(r->launch[i].nvtx, nvtx[i]);
        }
    }
}

/* S1 */
static void s1_paths(void **state)
{
    (void)state;
    struct collect_options opt = {.nvtx = 1};
    struct collect_result *r = run(&opt, ranged_launches);
    const uint32_t corr[] = {1, 2, 3, 4, 5};
    const char *const nvtx[] = {NULL, "step/", "step/forward/", "step/forward/;phase", NULL};
    expect(r, 5, corr, nvtx);
    collect_result_free(r);
    /* without nvtx, no range is asked for */
    fake_reset();
    struct collect_options plain = {0};
    r = run(&plain, ranged_launches);
    assert_int_equal(r->nlaunch, 5);
    assert_null(r->launch[2].nvtx);
    collect_result_free(r);
}

/* S2 */
static void s2_include(void **state)
{
    (void)state;
    struct collect_nvtx_filter *f = NULL;
    const char *inc[] = {"step/forward/"};
    assert_int_equal(collect_nvtx_filter_new(inc, 1, NULL, 0, &f), RK_OK);
    struct collect_options opt = {.nvtx_filter = f};
    struct collect_result *r = run(&opt, ranged_launches);
    const uint32_t corr[] = {3, 4};
    const char *const nvtx[] = {"step/forward/", "step/forward/;phase"};
    expect(r, 2, corr, nvtx);
    collect_result_free(r);
    /* the window counts what passed: skip 1 of the 2 */
    fake_reset();
    struct collect_options skip = {.nvtx_filter = f, .launch_skip = 1};
    r = run(&skip, ranged_launches);
    assert_int_equal(r->nlaunch, 1);
    assert_int_equal(r->launch[0].correlation, 4);
    collect_result_free(r);
    collect_nvtx_filter_free(f);
}

static void profiler_launches(void)
{
    fake_launch(CTX_A, 1, "_Z6beforev");
    fake_profiler(1);
    fake_launch(CTX_A, 2, "_Z2inv");
    fake_launch(CTX_A, 3, "_Z2inv");
    fake_profiler(0);
    fake_launch(CTX_A, 4, "_Z7betweenv");
    fake_profiler(1);
    fake_launch(CTX_A, 5, "_Z2inv");
    fake_profiler(0);
}

/* S3 */
static void s3_profiler(void **state)
{
    (void)state;
    struct collect_options opt = {.from_start_off = 1};
    struct collect_session *s = NULL;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    fake_launch(CTX_A, 1, "_Z6beforev");
    fake_profiler(1);
    fake_launch(CTX_A, 2, "_Z2inv");
    fake_launch(CTX_A, 3, "_Z2inv");
    assert_int_equal(fake.decodes, 0);
    fake_profiler(0); /* the open batch is decoded at the stop */
    assert_int_equal(fake.decodes, 1);
    fake_launch(CTX_A, 4, "_Z7betweenv");
    fake_profiler(1);
    fake_launch(CTX_A, 5, "_Z2inv");
    fake_profiler(0);
    struct collect_result *r = NULL;
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    const uint32_t corr[] = {2, 3, 5};
    const char *const none[] = {NULL, NULL, NULL};
    expect(r, 3, corr, none);
    for (int i = 0; i < 3; i++)
        assert_true(r->launch[i].has_counters);
    collect_result_free(r);
    /* recording from the start (the default): the first launch too, then as above */
    fake_reset();
    struct collect_options plain = {0};
    r = run(&plain, profiler_launches);
    const uint32_t corr_plain[] = {1, 2, 3, 5};
    const char *const none4[] = {NULL, NULL, NULL, NULL};
    expect(r, 4, corr_plain, none4);
    collect_result_free(r);
}

static void graph_launches(void)
{
    nvtxRangePushA("capture");
    fake_graph_launch(CTX_A, 10);
    nvtxRangePop();
    fake_graph_launch(CTX_A, 11);
    fake_record(10, "_Z5graphv", 100, 200, 7);
    fake_record(11, "_Z5graphv", 300, 400, 8);
}

/* S4 */
static void s4_graphs(void **state)
{
    (void)state;
    struct collect_nvtx_filter *f = NULL;
    const char *inc[] = {"capture/"};
    assert_int_equal(collect_nvtx_filter_new(inc, 1, NULL, 0, &f), RK_OK);
    struct collect_options opt = {.nvtx_filter = f};
    struct collect_result *r = run(&opt, graph_launches);
    const uint32_t corr[] = {10};
    const char *const nvtx[] = {"capture/"};
    expect(r, 1, corr, nvtx);
    assert_true(r->launch[0].has_record);
    collect_result_free(r);
    collect_nvtx_filter_free(f);
}

int main(void)
{
    unsetenv("NVTX_INJECTION64_PATH");
    rk_set_quiet(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(s1_paths, setup),
        cmocka_unit_test_setup(s2_include, setup),
        cmocka_unit_test_setup(s3_profiler, setup),
        cmocka_unit_test_setup(s4_graphs, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
