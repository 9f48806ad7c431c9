/*
 * test_session.c - collect/session.c driven by the scripted backend of fake_backend.c: no GPU,
 * no CUPTI calls. Label `unit`.
 *
 * Case map (id: what):
 *   B1  batching: 10 launches, 4 ranges per batch -> 3 decodes; every launch gets the values
 *       of its own range (values encode the correlation id); derived FLOPs = add+mul+2fma;
 *       duration from gpu__time_duration.sum when Activity has no timestamps
 *   B2  a batch closes at an unselected launch, which is never inside a range
 *   M1  Activity records arriving in any order attach to their launch by correlation id
 *   M2  a runtime launch with a nested driver launch is one launch; the driver call's context
 *       enables the profiler; a record with the driver's correlation id matches it; registers
 *       are ptxas's (from the driver call), the record's allocation is kept beside them;
 *       grid, block and dynamic shared memory stay the driver call's
 *   M3  decode returns a different range count: no launch of the batch gets counters
 *   F1  --kernel regex, --launch-skip, --launch-count select the right launches
 *   F2  a bad regex is a usage error
 *   F3  --kernel-name (Nsight Compute's rule): an exact name of the function base matches every
 *       overload and template instance of it, not a longer name; "regex:" matches anywhere;
 *       --kernel-name-base demangled and mangled compare those names whole
 *   F4  --kernel-id "::NAME:N" records the N-th launch of NAME only, counted per kernel name
 *       (each name its own count with a regex name or an empty one); an invocation expression;
 *       with --kernel-name and the launch window, the window counts what both let through
 *   F5  a bad --kernel-name, --kernel-name-base or --kernel-id is a usage error
 *   D1  each range-profiler enable failure (33, 35, 40..45, 27) -> timing mode, launches kept,
 *       reason names the CUPTI code; 35 and 40 carry the how-to-enable advice
 *   D2  tracing fails (39: another profiler) -> mode off, nothing recorded
 *   D3  Start fails -> timing mode; stop or decode fail -> timing, open batch has no counters
 *   D4  --metrics none -> timing mode, the profiler is never enabled, timestamps kept
 *   D5  an unknown metric at enable: dropped, retried, counters for the rest
 *   N1  a NaN raw value makes the aliases that use it NULL, and only those
 *   G1  a graph launch closes the batch; its kernels' records are recorded, timing only
 *   X1  context destruction decodes the open batch and disables the profiler
 *   R1  only_raw (a pass group of application replay): only those raw metrics reach the
 *       profiler, each value lands at its own plan index, the others are NULL
 *   R2  application replay: run 1's file merged into run 2's launches gives every value and
 *       the duration from gpu__time_duration.sum; merging is exact (%.17g)
 *   R4  collect_result_merge (run's one launch per pass group, in one process): values joined
 *       launch by launch; a launch whose name differs or has no partner loses has_counters;
 *       results of different plans are refused
 *   R5  replay mode: the backend may use user replay for a set of hardware counters only; a
 *       SASS-patched metric in the set, or ROOFKIT_CUPTI_REPLAY=kernel, keeps kernel replay
 *   R3  launches that differ between runs (a name, a missing launch) are counted unmatched
 *       and get none of the file's values; a missing or foreign file is RK_EIO
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"
#include "fake_backend.h"

static int ctx_a, ctx_b; /* addresses used as context handles */
#define CTX_A ((void *)&ctx_a)
#define CTX_B ((void *)&ctx_b)

/* A fresh empty file for a replay file (path: a "...XXXXXX" template). */
static void temp_file(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const struct collect_value *value_of(const struct collect_launch *l, const char *alias)
{
    for (int i = 0; i < l->nvalues; i++)
        if (l->values[i].alias && strcmp(l->values[i].alias, alias) == 0)
            return &l->values[i];
    return NULL;
}

static struct collect_session *begin(const struct collect_options *opt)
{
    struct collect_session *s = NULL;
    assert_int_equal(collect_session_begin(opt, &s), RK_OK);
    assert_non_null(s);
    return s;
}

static struct collect_result *end(struct collect_session *s)
{
    struct collect_result *r = NULL;
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    assert_non_null(r);
    return r;
}

static const struct collect_value *raw_value_of(const struct collect_launch *l, const char *raw)
{
    for (int i = 0; i < l->nvalues; i++)
        if (!l->values[i].alias && strcmp(l->values[i].raw, raw) == 0)
            return &l->values[i];
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    rk_set_quiet(1);
    return 0;
}

/* B1 */
static void test_batching(void **state)
{
    (void)state;
    struct collect_options opt = {.max_ranges = 4};
    struct collect_session *s = begin(&opt);
    for (uint32_t c = 1; c <= 10; c++) {
        fake_launch(CTX_A, c, "_Z4copyPfPKfm");
        fake_record(c, "_Z4copyPfPKfm", 0, 0, 0);
    }
    assert_int_equal(fake.decodes, 2); /* two full batches so far */
    struct collect_result *r = end(s);
    assert_int_equal(r->mode, COLLECT_MODE_COUNTERS);
    assert_int_equal(r->passes, 2);
    assert_int_equal(r->nlaunch, 10);
    assert_int_equal(fake.enables, 1);
    assert_int_equal(fake.starts, 3);
    assert_int_equal(fake.stops, 3);
    assert_int_equal(fake.decodes, 3);
    assert_int_equal(fake.resets, 3);
    assert_int_equal(fake.disables, 1);
    assert_int_equal(fake.max_ranges, 4);
    assert_int_equal(r->nmismatch, 0);

    const struct collect_plan *p = r->plan;
    int t = collect_plan_raw_find(p, "gpu__time_duration.sum");
    int fadd = collect_plan_raw_find(p, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
    int fmul = collect_plan_raw_find(p, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
    int ffma = collect_plan_raw_find(p, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    int dram = collect_plan_raw_find(p, "dram__bytes_read.sum");
    assert_true(t >= 0 && fadd >= 0 && fmul >= 0 && ffma >= 0 && dram >= 0);
    for (int i = 0; i < r->nlaunch; i++) {
        const struct collect_launch *l = &r->launch[i];
        double c = (double)(i + 1);
        assert_int_equal(l->seq, i);
        assert_int_equal(l->correlation, i + 1);
        assert_true(l->has_counters);
        assert_true(l->has_record);
        assert_int_equal(l->grid[0], i + 1);
        assert_int_equal(l->registers, 32);
        assert_string_equal(l->demangled, "copy(float*, float const*, unsigned long)");
        const struct collect_value *v = value_of(l, "dram_read_bytes");
        assert_non_null(v);
        assert_false(v->is_null);
        assert_true(v->value == 1000.0 * c + dram);
        assert_string_equal(v->raw, "dram__bytes_read.sum");
        v = value_of(l, "flop_count_sp");
        assert_non_null(v);
        assert_true(v->value ==
                    (1000.0 * c + fadd) + (1000.0 * c + fmul) + 2 * (1000.0 * c + ffma));
        assert_non_null(strstr(v->raw, " + 2*smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
        assert_true(l->duration_ns == 1000.0 * c + t);
    }
    collect_result_free(r);
}

/* B2 */
static void test_batch_closes_at_unselected(void **state)
{
    (void)state;
    struct collect_options opt = {.kernel_regex = "^copy"};
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_launch(CTX_A, 2, "_Z4copyv");
    fake_launch(CTX_A, 3, "_Z5scalev"); /* closes the batch of 1, 2 */
    assert_int_equal(fake.decodes, 1);
    assert_false(fake.started);
    fake_launch(CTX_A, 4, "_Z4copyv");
    for (uint32_t c = 1; c <= 4; c++)
        fake_record(c, c == 3 ? "_Z5scalev" : "_Z4copyv", 0, 0, 0);
    struct collect_result *r = end(s);
    assert_int_equal(r->nlaunch, 3);
    assert_int_equal(fake.starts, 2);
    uint32_t want[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->launch[i].correlation, want[i]);
        assert_true(r->launch[i].has_counters);
        const struct collect_value *v = value_of(&r->launch[i], "gld_throughput");
        assert_true(v->value == 1000.0 * want[i] + 0);
    }
    collect_result_free(r);
}

/* A session over three metrics that collects only `only` (one pass group), n launches. */
static struct collect_result *group_run(const char *only, int n, const char *odd_name)
{
    static const char *names[] = {"dram_read_bytes", "dram_write_bytes", "gpu__time_duration.sum"};
    const char *only_raw[] = {only};
    struct collect_options opt = {
        .metrics = names, .nmetrics = 3, .only_raw = only_raw, .nonly_raw = 1};
    fake_reset();
    struct collect_session *s = begin(&opt);
    for (uint32_t c = 1; c <= (uint32_t)n; c++) {
        const char *name = odd_name && c == 2 ? odd_name : "_Z4copyv";
        fake_launch(CTX_A, c, name);
        fake_record(c, name, 0, 0, 0);
    }
    return end(s);
}

/* R1 */
static void test_only_raw(void **state)
{
    (void)state;
    struct collect_result *r = group_run("dram__bytes_write.sum", 3, NULL);
    assert_int_equal(fake.nraw, 1); /* the profiler saw one metric */
    for (int i = 0; i < 3; i++) {
        const struct collect_launch *l = &r->launch[i];
        assert_true(l->has_counters);
        assert_true(value_of(l, "dram_write_bytes")->value == 1000.0 * (i + 1));
        assert_false(value_of(l, "dram_write_bytes")->is_null);
        assert_true(value_of(l, "dram_read_bytes")->is_null);
        assert_true(raw_value_of(l, "gpu__time_duration.sum")->is_null);
        assert_true(isnan(l->duration_ns));
    }
    collect_result_free(r);
}

/* R2 */
static void test_replay_merge(void **state)
{
    (void)state;
    char path[] = "/tmp/roofkit-test-replay-XXXXXX";
    temp_file(path);
    struct collect_result *first = group_run("dram__bytes_read.sum", 3, NULL);
    first->launch[1].raw[0] = 0.1 + 1e-17 * 3; /* not exact in fewer than 17 digits */
    double exact = first->launch[1].raw[0];
    int read_i = collect_plan_raw_find(first->plan, "dram__bytes_read.sum");
    first->launch[2].raw[collect_plan_raw_find(first->plan, "gpu__time_duration.sum")] = 777.0;
    assert_int_equal(collect_replay_write(path, first), RK_OK);
    collect_result_free(first);

    struct collect_result *last = group_run("dram__bytes_write.sum", 3, NULL);
    long unmatched = -1;
    assert_int_equal(collect_replay_merge(path, last, &unmatched), RK_OK);
    assert_int_equal(unmatched, 0);
    for (int i = 0; i < 3; i++) {
        const struct collect_launch *l = &last->launch[i];
        assert_true(l->has_counters);
        assert_false(value_of(l, "dram_read_bytes")->is_null);
        assert_true(value_of(l, "dram_write_bytes")->value == 1000.0 * (i + 1)); /* kept */
        if (i != 1)
            assert_true(value_of(l, "dram_read_bytes")->value == 1000.0 * (i + 1));
    }
    assert_true(last->launch[1].raw[read_i] == exact);
    assert_true(value_of(&last->launch[1], "dram_read_bytes")->value == exact);
    assert_true(last->launch[2].duration_ns == 777.0);
    collect_result_free(last);
    unlink(path);
}

/* R3 */
static void test_replay_unmatched(void **state)
{
    (void)state;
    char path[] = "/tmp/roofkit-test-replay-XXXXXX";
    temp_file(path);
    struct collect_result *first = group_run("dram__bytes_read.sum", 3, NULL);
    assert_int_equal(collect_replay_write(path, first), RK_OK);
    collect_result_free(first);
    /* the second launch has another kernel, and there is a fourth launch */
    struct collect_result *last = group_run("dram__bytes_write.sum", 4, "_Z5otherv");
    long unmatched = -1;
    assert_int_equal(collect_replay_merge(path, last, &unmatched), RK_OK);
    /* file's launch 1 finds no partner; the last run's launches 1 and 3 got nothing */
    assert_int_equal(unmatched, 3);
    assert_false(value_of(&last->launch[0], "dram_read_bytes")->is_null);
    assert_true(value_of(&last->launch[1], "dram_read_bytes")->is_null);
    assert_false(value_of(&last->launch[2], "dram_read_bytes")->is_null);
    assert_true(value_of(&last->launch[3], "dram_read_bytes")->is_null);
    assert_false(value_of(&last->launch[3], "dram_write_bytes")->is_null);

    assert_int_equal(collect_replay_merge("/nonexistent/replay.txt", last, &unmatched), RK_EIO);
    write_file(path, "not a replay file\nlaunch 0 _Z4copyv 1 2 3\n");
    assert_int_equal(collect_replay_merge(path, last, &unmatched), RK_EIO);
    write_file(path, "roofkit-replay 1\nraw 3\ndram__bytes_read.sum\n"); /* cut short */
    assert_int_equal(collect_replay_merge(path, last, &unmatched), RK_EIO);
    /* malformed launch lines are unmatched, never crash */
    write_file(path, "roofkit-replay 1\nraw 1\ndram__bytes_read.sum\nlaunch x _Z4copyv 5\n"
                     "launch 0 _Z4copyv\nlaunch 0 _Z4copyv 5 6\nlaunch 0 _Z4copyv 5x\n");
    assert_int_equal(collect_replay_merge(path, last, &unmatched), RK_OK);
    assert_int_equal(unmatched, 4 + 4);
    collect_result_free(last);
    unlink(path);
}

/* M1 is covered by B1 (the fake delivers records newest first); M2 */
static void test_nested_launch(void **state)
{
    (void)state;
    struct collect_session *s = begin(NULL);
    fake_launch_nested(NULL, 7, CTX_B, 8, "_Z3fmav"); /* runtime call made the context */
    fake_record(8, "_Z3fmav", 0, 0, 0);               /* the record names the driver call */
    fake_launch_nested(CTX_B, 9, CTX_B, 10, "_Z3fmav");
    fake_record(9, "_Z3fmav", 0, 0, 0);
    assert_ptr_equal(fake.prof_ctx, CTX_B);
    struct collect_result *r = end(s);
    assert_int_equal(r->nlaunch, 2);
    assert_int_equal(r->launch[0].correlation, 7);
    assert_true(r->launch[0].has_record);
    assert_true(r->launch[0].has_counters);
    assert_true(value_of(&r->launch[0], "gld_throughput")->value == 7000.0);
    assert_true(r->launch[1].has_record);
    assert_true(value_of(&r->launch[1], "gld_throughput")->value == 9000.0);
    assert_int_equal(fake.enables, 1);
    /* registers: ptxas's from the driver call, the Activity record's allocation beside it */
    assert_int_equal(r->launch[0].registers, 12);
    assert_int_equal(r->launch[0].registers_alloc, 32);
    assert_int_equal(r->launch[0].dynamic_smem, 2048);
    /* grid and block: the driver call's (7 x 128), not the record's (grid.x = corr, 256) */
    assert_int_equal(r->launch[0].grid[0], 7);
    assert_int_equal(r->launch[0].block[0], 128);
    assert_int_equal(r->launch[1].grid[0], 7);
    collect_result_free(r);
}

/* M3 */
static void test_range_count_mismatch(void **state)
{
    (void)state;
    fake.extra_ranges = 1;
    struct collect_session *s = begin(NULL);
    for (uint32_t c = 1; c <= 3; c++)
        fake_launch(CTX_A, c, "_Z1kv");
    struct collect_result *r = end(s);
    assert_int_equal(r->nlaunch, 3);
    assert_int_equal(r->nmismatch, 3);
    for (int i = 0; i < 3; i++) {
        assert_false(r->launch[i].has_counters);
        assert_true(value_of(&r->launch[i], "dram_read_bytes")->is_null);
        assert_true(isnan(r->launch[i].duration_ns));
    }
    collect_result_free(r);
}

/* F1 */
static void test_filter_window(void **state)
{
    (void)state;
    struct collect_options opt = {.kernel_regex = "copy", .launch_skip = 1, .launch_count = 2};
    struct collect_session *s = begin(&opt);
    const char *names[] = {"_Z4copyv", "_Z5scalev", "_Z4copyv",
                           "_Z4copyv", "_Z5scalev", "_Z4copyv"};
    for (uint32_t c = 0; c < 6; c++) {
        fake_launch(CTX_A, c + 1, names[c]);
        fake_record(c + 1, names[c], 0, 0, 0);
    }
    struct collect_result *r = end(s);
    assert_int_equal(r->nlaunch, 2);
    assert_int_equal(r->launch[0].correlation, 3);
    assert_int_equal(r->launch[1].correlation, 4);
    assert_int_equal(r->launch[0].seq, 0);
    assert_true(r->launch[0].has_counters && r->launch[1].has_counters);
    assert_int_equal(fake.starts, 1); /* 3 and 4 are consecutive: one batch */
    collect_result_free(r);
}

/* F2 */
static void test_bad_regex(void **state)
{
    (void)state;
    struct collect_session *s = NULL;
    struct collect_options opt = {.kernel_regex = "("};
    assert_int_equal(collect_session_begin(&opt, &s), RK_EUSAGE);
    assert_null(s);
    opt.kernel_regex = NULL;
    opt.launch_skip = -1;
    assert_int_equal(collect_session_begin(&opt, &s), RK_EUSAGE);
    const char *bogus[] = {"not_a_metric"};
    struct collect_options o2 = {.metrics = bogus, .nmetrics = 1};
    assert_int_equal(collect_session_begin(&o2, &s), RK_EUSAGE);
    assert_int_equal(fake.trace_starts, 0);
}

/* The correlation ids a session recorded, in order, as "1,3,4". */
static void recorded(const struct collect_result *r, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < r->nlaunch && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%u", i ? "," : "",
                                 r->launch[i].correlation);
}

/* Launches names[0..n) (correlation ids 1..n) under opt; the recorded ids as recorded() writes. */
static void select_run(const struct collect_options *opt, const char *const *names, int n,
                       char *out, size_t size)
{
    fake_reset();
    struct collect_session *s = begin(opt);
    for (int c = 0; c < n; c++) {
        fake_launch(CTX_A, (uint32_t)c + 1, names[c]);
        fake_record((uint32_t)c + 1, names[c], 0, 0, 0);
    }
    struct collect_result *r = end(s);
    recorded(r, out, size);
    collect_result_free(r);
}

/* copy() copy<float>(float*) scale() copy() copy<float>(float*) copy_all() scale() */
static const char *const prog7[] = {"_Z4copyv",       "_Z4copyIfEvPT_", "_Z5scalev", "_Z4copyv",
                                    "_Z4copyIfEvPT_", "_Z8copy_allv",   "_Z5scalev"};

/* F3, F4: the filters of each case over prog7, and the correlation ids recorded. */
static const struct {
    const char *name, *base, *id, *want, *why;
} filter_cases[] = {
    /* F3 */
    {"copy", NULL, NULL, "1,2,4,5", "both copy functions, not copy_all"},
    {"regex:copy", NULL, NULL, "1,2,4,5,6", "anywhere in the name"},
    {"regex:^sc", NULL, NULL, "3,7", "an anchored expression"},
    {"copy()", "demangled", NULL, "1,4", "a whole signature"},
    {"void copy<float>(float*)", "demangled", NULL, "2,5", "a template instance"},
    {"copy", "demangled", NULL, "", "the function name is not the demangled one"},
    {"_Z5scalev", "mangled", NULL, "3,7", "a mangled name"},
    {"regex:^_Z4copy", "mangled", NULL, "1,2,4,5", "an expression on mangled names"},
    /* F4 */
    {NULL, NULL, "::copy:2", "2", "copy's launches are 1, 2, 4, 5"},
    {NULL, NULL, "::scale:2", "7", "scale's second"},
    {NULL, NULL, "::copy:5", "", "there is no fifth"},
    {NULL, NULL, "::regex:^(copy|scale)$:2", "2,7", "each name counts its own launches"},
    {NULL, NULL, ":::1", "1,3,6", "the first launch of every kernel"},
    {NULL, NULL, "::copy:2|4", "2,5", "an invocation expression"},
    {NULL, NULL, "::copy:", "1,2,4,5", "every invocation"},
    {NULL, "demangled", "::copy():2", "4", "a demangled name counts alone"},
    {"regex:copy_", NULL, "::copy:1", "", "both filters must pass"},
};

/* F3, F4 */
static void test_kernel_filters(void **state)
{
    (void)state;
    char got[128];
    for (size_t i = 0; i < sizeof filter_cases / sizeof *filter_cases; i++) {
        struct collect_options opt = {.kernel_name = filter_cases[i].name,
                                      .kernel_base = filter_cases[i].base,
                                      .kernel_id = filter_cases[i].id};
        select_run(&opt, prog7, 7, got, sizeof got);
        if (strcmp(got, filter_cases[i].want) != 0)
            fail_msg("case %zu (%s): recorded '%s', expected '%s'", i, filter_cases[i].why, got,
                     filter_cases[i].want);
    }
    /* both filters, then the window over what they let through */
    struct collect_options both = {
        .kernel_id = ":::2|3|4", .kernel_name = "regex:copy", .launch_skip = 1, .launch_count = 1};
    const char *const many[] = {"_Z4copyv",  "_Z4copyv", "_Z5scalev", "_Z4copyv",
                                "_Z5scalev", "_Z4copyv", "_Z5scalev", "_Z4copyv"};
    select_run(&both, many, 8, got, sizeof got);
    assert_string_equal(got, "4"); /* copy's 2nd (2) is skipped, its 3rd (4) recorded */
}

/* F5 */
static void test_bad_kernel_filters(void **state)
{
    (void)state;
    struct collect_session *s = NULL;
    struct collect_options opt = {.kernel_name = "regex:("};
    assert_int_equal(collect_session_begin(&opt, &s), RK_EUSAGE);
    assert_null(s);
    struct collect_options b = {.kernel_base = "signature"};
    assert_int_equal(collect_session_begin(&b, &s), RK_EUSAGE);
    struct collect_options id = {.kernel_id = "1:7:copy:2"};
    assert_int_equal(collect_session_begin(&id, &s), RK_EUSAGE);
    id.kernel_id = "copy";
    assert_int_equal(collect_session_begin(&id, &s), RK_EUSAGE);
    struct collect_options empty = {.kernel_name = "", .kernel_id = "", .kernel_base = ""};
    s = begin(&empty); /* empty strings: no filter */
    collect_result_free(end(s));
    assert_int_equal(fake.trace_starts, 1);
}

/* D1 */
static void test_enable_failures(void **state)
{
    (void)state;
    const int codes[] = {33, 35, 40, 41, 42, 43, 44, 45, 27};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fake_reset();
        fake.rc_enable = codes[i];
        struct collect_session *s = begin(NULL);
        fake_launch(CTX_A, 1, "_Z1kv");
        fake_launch(CTX_A, 2, "_Z1kv");
        fake_record(1, "_Z1kv", 10, 20, 0);
        fake_record(2, "_Z1kv", 30, 45, 0);
        const char *why = NULL;
        assert_int_equal(collect_session_mode(s, &why), COLLECT_MODE_TIMING);
        struct collect_result *r = end(s);
        assert_int_equal(r->mode, COLLECT_MODE_TIMING);
        assert_int_equal(r->passes, 0);
        assert_int_equal(fake.enables, 1); /* not retried for every launch */
        char code[32];
        snprintf(code, sizeof code, "CUPTI error %d", codes[i]);
        assert_non_null(strstr(r->reason, code));
        assert_non_null(strstr(r->reason, "recording timing only"));
        int perm = codes[i] == 35 || codes[i] == 40;
        assert_int_equal(strstr(r->reason, "NVreg_RestrictProfilingToAdminUsers=0") != NULL, perm);
        assert_int_equal(r->nlaunch, 2);
        assert_false(r->launch[0].has_counters);
        assert_true(r->launch[1].duration_ns == 15.0);
        collect_result_free(r);
    }
}

/* D2 */
static void test_trace_fails(void **state)
{
    (void)state;
    fake.rc_trace_start = 39;
    struct collect_session *s = begin(NULL);
    struct collect_result *r = end(s);
    assert_int_equal(r->mode, COLLECT_MODE_OFF);
    assert_non_null(strstr(r->reason, "another profiler"));
    assert_non_null(strstr(r->reason, "recording nothing"));
    assert_int_equal(r->nlaunch, 0);
    assert_int_equal(fake.flushes, 0);
    collect_result_free(r);
}

/* D3 */
static void test_start_stop_decode_fail(void **state)
{
    (void)state;
    fake.rc_start = 7;
    struct collect_session *s = begin(NULL);
    fake_launch(CTX_A, 1, "_Z1kv");
    fake_launch(CTX_A, 2, "_Z1kv");
    struct collect_result *r = end(s);
    assert_int_equal(r->mode, COLLECT_MODE_TIMING);
    assert_non_null(strstr(r->reason, "cannot start"));
    assert_int_equal(fake.starts, 1);
    assert_int_equal(r->nlaunch, 2);
    collect_result_free(r);

    for (int w = 0; w < 3; w++) {
        fake_reset();
        if (w == 0)
            fake.rc_stop = 1;
        else if (w == 1)
            fake.rc_decode = 1;
        else
            fake.rc_reset = 1;
        s = begin(NULL);
        fake_launch(CTX_A, 1, "_Z1kv");
        fake_launch(CTX_A, 2, "_Z1kv");
        r = end(s);
        assert_int_equal(r->mode, COLLECT_MODE_TIMING);
        /* A failed stop or decode loses the batch; a failed reset keeps it. */
        assert_int_equal(r->launch[0].has_counters, w == 2);
        assert_int_equal(fake.disables, 1);
        collect_result_free(r);
    }
}

/* D4 */
static void test_metrics_none(void **state)
{
    (void)state;
    struct collect_options opt = {.nmetrics = -1};
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z1kv");
    fake_record(1, "_Z1kv", 1000, 3500, 0);
    struct collect_result *r = end(s);
    assert_int_equal(r->mode, COLLECT_MODE_TIMING);
    assert_true(fake.timing_only);
    assert_int_equal(fake.enables, 0);
    assert_non_null(strstr(r->reason, "not requested"));
    assert_int_equal(r->nlaunch, 1);
    assert_true(r->launch[0].duration_ns == 2500.0);
    assert_int_equal(r->launch[0].start_ns, 1000);
    collect_result_free(r);
}

/* D5 */
static void test_unknown_metric_dropped(void **state)
{
    (void)state;
    fake.rc_enable = BK_INVALID_METRIC_NAME;
    fake.unknown_raw = "dram__bytes_read.sum";
    struct collect_session *s = begin(NULL);
    fake_launch(CTX_A, 1, "_Z1kv");
    struct collect_result *r = end(s);
    assert_int_equal(r->mode, COLLECT_MODE_COUNTERS);
    assert_int_equal(fake.enables, 2);
    assert_int_equal(r->plan->ndropped, 1);
    assert_string_equal(r->plan->dropped[0], "dram_read_bytes");
    assert_int_equal(collect_plan_raw_find(r->plan, "dram__bytes_read.sum"), -1);
    assert_null(value_of(&r->launch[0], "dram_read_bytes"));
    assert_true(r->launch[0].has_counters);
    /* the plan was re-indexed: values still match their raw metric */
    int w = collect_plan_raw_find(r->plan, "dram__bytes_write.sum");
    assert_true(value_of(&r->launch[0], "dram_write_bytes")->value == 1000.0 + w);
    assert_string_equal(value_of(&r->launch[0], "dram_write_bytes")->unit, "byte");
    collect_result_free(r);
}

/* N1 */
static void test_nan_is_null(void **state)
{
    (void)state;
    struct collect_session *s;
    const char *names[] = {"flop_count_sp", "dram_read_bytes"};
    struct collect_options opt = {.metrics = names, .nmetrics = 2};
    fake.nan_metric = 3; /* raw order: fadd, fmul, ffma, dram: ffma is NaN */
    s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z1kv");
    struct collect_result *r = end(s);
    assert_int_equal(r->plan->nraw, 4);
    assert_string_equal(r->plan->raw[2], "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    assert_true(value_of(&r->launch[0], "flop_count_sp")->is_null);
    assert_false(value_of(&r->launch[0], "dram_read_bytes")->is_null);
    collect_result_free(r);
}

/* G1 */
static void test_graph_launch(void **state)
{
    (void)state;
    struct collect_session *s = begin(NULL);
    fake_launch(CTX_A, 1, "_Z1kv");
    fake_graph_launch(CTX_A, 2);
    assert_int_equal(fake.decodes, 1);
    fake_record(1, "_Z1kv", 0, 0, 0);
    fake_record(100, "_Z9graphnodev", 500, 900, 5);
    fake_record(101, "_Z9graphnodev", 900, 1200, 6);
    struct collect_result *r = end(s);
    assert_int_equal(r->nlaunch, 3);
    assert_true(r->launch[0].has_counters);
    assert_false(r->launch[1].has_counters);
    assert_true(r->launch[1].duration_ns == 400.0 || r->launch[1].duration_ns == 300.0);
    collect_result_free(r);
}

/* X1 */
static void test_context_destroy(void **state)
{
    (void)state;
    struct collect_session *s = begin(NULL);
    fake_launch(CTX_A, 1, "_Z1kv");
    fake.hooks.context_destroy(fake.hooks.arg, CTX_A);
    assert_int_equal(fake.decodes, 1);
    assert_int_equal(fake.disables, 1);
    fake_launch(CTX_B, 2, "_Z1kv"); /* a new context is profiled on its own */
    struct collect_result *r = end(s);
    assert_int_equal(fake.enables, 2);
    assert_true(r->launch[0].has_counters);
    assert_true(r->launch[1].has_counters);
    collect_result_free(r);
}

/* R5 */
static void test_replay_mode(void **state)
{
    (void)state;
    struct collect_result *r = group_run("dram__bytes_write.sum", 1, NULL);
    assert_int_equal(fake.user_replay_ok, 1);
    collect_result_free(r);
    static const char *sass[] = {"dram_read_bytes", "flop_count_sp"};
    struct collect_options opt = {.metrics = sass, .nmetrics = 2};
    fake_reset();
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z4copyv");
    collect_result_free(end(s));
    assert_int_equal(fake.enables, 1);
    assert_int_equal(fake.user_replay_ok, 0);
    setenv("ROOFKIT_CUPTI_REPLAY", "kernel", 1);
    r = group_run("dram__bytes_write.sum", 1, NULL);
    unsetenv("ROOFKIT_CUPTI_REPLAY");
    assert_int_equal(fake.user_replay_ok, 0);
    collect_result_free(r);
}

/* R4 */
static void test_result_merge(void **state)
{
    (void)state;
    struct collect_result *a = group_run("dram__bytes_read.sum", 3, NULL);
    struct collect_result *b = group_run("dram__bytes_write.sum", 3, NULL);
    long unmatched = -1;
    assert_int_equal(collect_result_merge(a, b, &unmatched), RK_OK);
    assert_int_equal(unmatched, 0);
    for (int i = 0; i < 3; i++) {
        const struct collect_launch *l = &a->launch[i];
        assert_true(l->has_counters);
        assert_true(value_of(l, "dram_read_bytes")->value == 1000.0 * (i + 1));
        assert_true(value_of(l, "dram_write_bytes")->value == 1000.0 * (i + 1));
    }
    collect_result_free(b);
    /* the second launch is another kernel and a fourth launch has no partner */
    b = group_run("gpu__time_duration.sum", 4, "_Z5otherv");
    assert_int_equal(collect_result_merge(a, b, &unmatched), RK_OK);
    assert_int_equal(unmatched, 2);
    assert_true(a->launch[0].has_counters);
    assert_true(a->launch[0].duration_ns == 1000.0);
    assert_false(a->launch[1].has_counters);
    assert_true(a->launch[2].has_counters);
    collect_result_free(b);
    /* another plan */
    static const char *one[] = {"dram_read_bytes"};
    struct collect_options opt = {.metrics = one, .nmetrics = 1};
    fake_reset();
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_record(1, "_Z4copyv", 0, 0, 0);
    b = end(s);
    assert_int_equal(collect_result_merge(a, b, &unmatched), RK_EFAIL);
    collect_result_free(b);
    collect_result_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_batching, setup),
        cmocka_unit_test_setup(test_batch_closes_at_unselected, setup),
        cmocka_unit_test_setup(test_nested_launch, setup),
        cmocka_unit_test_setup(test_range_count_mismatch, setup),
        cmocka_unit_test_setup(test_filter_window, setup),
        cmocka_unit_test_setup(test_bad_regex, setup),
        cmocka_unit_test_setup(test_kernel_filters, setup),
        cmocka_unit_test_setup(test_bad_kernel_filters, setup),
        cmocka_unit_test_setup(test_enable_failures, setup),
        cmocka_unit_test_setup(test_trace_fails, setup),
        cmocka_unit_test_setup(test_start_stop_decode_fail, setup),
        cmocka_unit_test_setup(test_metrics_none, setup),
        cmocka_unit_test_setup(test_unknown_metric_dropped, setup),
        cmocka_unit_test_setup(test_nan_is_null, setup),
        cmocka_unit_test_setup(test_graph_launch, setup),
        cmocka_unit_test_setup(test_context_destroy, setup),
        cmocka_unit_test_setup(test_only_raw, setup),
        cmocka_unit_test_setup(test_replay_merge, setup),
        cmocka_unit_test_setup(test_replay_unmatched, setup),
        cmocka_unit_test_setup(test_result_merge, setup),
        cmocka_unit_test_setup(test_replay_mode, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
