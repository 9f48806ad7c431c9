/*
 * test_emit.c - a session that hands launches over as they complete (collect_options' emit, what
 * `roofkit profile` writes to its journals so that a killed program keeps them), driven by the
 * scripted backend of fake_backend.c; and application replay's files written and read a launch
 * at a time. No GPU, no CUPTI. Label `unit`.
 *
 * Case map:
 *   E1 counter mode: a launch is handed over when its batch is decoded, in launch order, with its
 *      counters; what is left at the end follows; the result then holds no launches
 *   E2 a synchronizing call decodes the open batch at once; without emit it changes nothing
 *   E3 a batch open longer than flush_interval is decoded at the end of the next launch
 *   E4 timing mode: a launch waits for its Activity record (collect_session_poll delivers it);
 *      launches whose record never came are handed over at the end, untimed
 *   E5 counter mode does not wait for records; a record after the hand-over is not a second one
 *   E6 the device, context and stream ids of the launch call reach a launch handed over before
 *      its record
 *   E7 the background thread asks for records every flush_interval and after a synchronizing
 *      call, without any call from the program
 *   E8 replay files a launch at a time: a torn last line (a run killed in a write) is skipped and
 *      counted; launches join their line by index and name, once; unused lines are counted
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

static int ctx_a;
#define CTX_A ((void *)&ctx_a)

/* What emit received, in order. */
static struct got {
    uint64_t seq;
    uint32_t corr, device, stream;
    int has_counters, has_record;
    double duration, value; /* value: dram_read_bytes, NaN when NULL */
} got[64];
static int ngot;

static void emit(void *arg, const struct collect_plan *plan, struct collect_launch *l)
{
    (void)arg;
    assert_non_null(plan);
    assert_true(ngot < 64);
    struct got *g = &got[ngot++];
    g->seq = l->seq;
    g->corr = l->correlation;
    g->device = l->device;
    g->stream = l->stream;
    g->has_counters = l->has_counters;
    g->has_record = l->has_record;
    g->duration = l->duration_ns;
    g->value = NAN;
    for (int i = 0; i < l->nvalues; i++)
        if (l->values[i].alias && strcmp(l->values[i].alias, "dram_read_bytes") == 0 &&
            !l->values[i].is_null)
            g->value = l->values[i].value;
}

static int setup(void **state)
{
    (void)state;
    fake_reset();
    rk_set_quiet(1);
    ngot = 0;
    return 0;
}

static struct collect_session *begin(struct collect_options *opt)
{
    struct collect_session *s = NULL;
    opt->emit = emit;
    if (opt->flush_interval == 0)
        opt->flush_interval = -1; /* no thread: the test drives it */
    assert_int_equal(collect_session_begin(opt, &s), RK_OK);
    return s;
}

static struct collect_result *end(struct collect_session *s)
{
    struct collect_result *r = NULL;
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    return r;
}

/* E1 */
static void e1_counters_at_decode(void **state)
{
    (void)state;
    struct collect_options opt = {.max_ranges = 4};
    struct collect_session *s = begin(&opt);
    for (uint32_t c = 1; c <= 10; c++) {
        fake_launch(CTX_A, c, "_Z4copyPfPKfm");
        assert_int_equal(ngot, (int)(c / 4) * 4); /* a batch at a time */
    }
    struct collect_result *r = end(s);
    assert_int_equal(ngot, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(got[i].seq, i);
        assert_int_equal(got[i].corr, i + 1);
        assert_true(got[i].has_counters);
        assert_false(isnan(got[i].value));
    }
    assert_int_equal(r->nlaunch, 0);
    assert_int_equal(r->nemitted, 10);
    assert_int_equal(r->nemitted_counters, 10);
    collect_result_free(r);
}

/* E2 */
static void e2_sync_decodes(void **state)
{
    (void)state;
    struct collect_options opt = {0};
    struct collect_session *s = begin(&opt);
    for (uint32_t c = 1; c <= 3; c++)
        fake_launch(CTX_A, c, "_Z4copyv");
    assert_int_equal(ngot, 0);
    fake_sync(CTX_A); /* the program waited for its kernels: it may be killed next */
    assert_int_equal(fake.decodes, 1);
    assert_int_equal(ngot, 3);
    assert_true(got[2].has_counters);
    fake_sync(CTX_A); /* nothing open: nothing more */
    assert_int_equal(fake.decodes, 1);
    collect_result_free(end(s));

    /* without emit (roofkit run), a synchronizing call changes nothing */
    fake_reset();
    struct collect_options plain = {0};
    struct collect_session *p = NULL;
    assert_int_equal(collect_session_begin(&plain, &p), RK_OK);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_sync(CTX_A);
    assert_int_equal(fake.decodes, 0);
    struct collect_result *r = end(p);
    assert_int_equal(r->nlaunch, 1);
    collect_result_free(r);
}

/* E3 */
static void e3_batch_age(void **state)
{
    (void)state;
    struct collect_options opt = {.flush_interval = 0.02};
    struct collect_session *s = NULL;
    opt.emit = emit;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_launch(CTX_A, 2, "_Z4copyv");
    assert_int_equal(ngot, 0);
    usleep(40000);
    fake_launch(CTX_A, 3, "_Z4copyv"); /* ends 40 ms after the batch began */
    assert_int_equal(fake.decodes, 1);
    assert_int_equal(ngot, 3);
    collect_result_free(end(s));
}

/* E4 */
static void e4_timing_waits_for_records(void **state)
{
    (void)state;
    struct collect_options opt = {.nmetrics = -1};
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_launch(CTX_A, 2, "_Z4copyv");
    fake_launch(CTX_A, 3, "_Z4copyv");
    assert_int_equal(ngot, 0);
    fake_record(2, "_Z4copyv", 1000, 1500, 0);
    fake_record(1, "_Z4copyv", 100, 400, 0);
    collect_session_poll(s);
    assert_int_equal(fake.polls, 1);
    assert_int_equal(ngot, 2);
    for (int i = 0; i < 2; i++) /* in the order the records came */
        assert_true(got[i].duration == (got[i].corr == 2 ? 500.0 : 300.0));
    assert_int_not_equal(got[0].corr, got[1].corr);
    collect_session_poll(s);
    struct collect_result *r = end(s);
    assert_int_equal(ngot, 3); /* the third never got its record */
    assert_int_equal(got[2].corr, 3);
    assert_false(got[2].has_record);
    assert_true(isnan(got[2].duration));
    assert_int_equal(r->nemitted, 3);
    assert_int_equal(r->nemitted_counters, 0);
    collect_result_free(r);
}

/* E5 */
static void e5_counters_do_not_wait(void **state)
{
    (void)state;
    struct collect_options opt = {.max_ranges = 2};
    struct collect_session *s = begin(&opt);
    fake_launch(CTX_A, 1, "_Z4copyv");
    fake_launch(CTX_A, 2, "_Z4copyv");
    assert_int_equal(ngot, 2);
    assert_false(got[0].has_record);
    fake_record(1, "_Z4copyv", 0, 0, 0);
    fake_record(2, "_Z4copyv", 0, 0, 0);
    collect_session_poll(s); /* nothing waits for a record: no poll reaches CUPTI */
    assert_int_equal(fake.polls, 0);
    struct collect_result *r = end(s); /* its flush delivers the two records */
    assert_int_equal(ngot, 2);
    assert_int_equal(r->nemitted, 2);
    collect_result_free(r);
}

/* E6 */
static void e6_ids_from_the_call(void **state)
{
    (void)state;
    struct collect_options opt = {0};
    struct collect_session *s = begin(&opt);
    fake_launch_ids(CTX_A, 7, "_Z4copyv", 3, 13);
    fake_sync(CTX_A);
    assert_int_equal(ngot, 1);
    assert_int_equal(got[0].device, 3);
    assert_int_equal(got[0].stream, 13);
    collect_result_free(end(s));
}

/* E7 */
static void e7_background_thread(void **state)
{
    (void)state;
    struct collect_options opt = {.nmetrics = -1, .flush_interval = 0.05};
    struct collect_session *s = NULL;
    opt.emit = emit;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    /* each record is queued before its launch: the thread reads the queue only while a launch
     * waits, so the test never writes the queue while the thread reads it */
    fake_record(1, "_Z4copyv", 10, 20, 0);
    fake_launch(CTX_A, 1, "_Z4copyv");
    for (int i = 0; i < 100 && ngot == 0; i++)
        usleep(10000); /* the thread polls within 50 ms */
    assert_int_equal(ngot, 1);
    assert_true(got[0].has_record);
    /* a synchronizing call wakes it at once */
    fake_record(2, "_Z4copyv", 30, 40, 0);
    fake_launch(CTX_A, 2, "_Z4copyv");
    fake_sync(CTX_A);
    for (int i = 0; i < 100 && ngot == 1; i++)
        usleep(1000);
    assert_int_equal(ngot, 2);
    collect_result_free(end(s));
}

/* E8 */
static void e8_replay_files(void **state)
{
    (void)state;
    char path[] = "/tmp/roofkit-test-emit-XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    close(tmp);
    /* run 1 writes its launches as they complete */
    struct collect_options opt = {.max_ranges = 2};
    struct collect_session *s = NULL;
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    for (uint32_t c = 1; c <= 3; c++)
        fake_launch(CTX_A, c, "_Z4copyv");
    struct collect_result *first = end(s);
    int fd = -1;
    assert_int_equal(collect_replay_open(path, first->plan, &fd), RK_OK);
    for (int k = 0; k < first->nlaunch; k++)
        assert_int_equal(collect_replay_append(fd, first->plan, &first->launch[k]), RK_OK);
    assert_int_equal(write(fd, "launch 3 _Z4copyv 1", 19), 19); /* killed inside a write */
    close(fd);

    /* the last run joins each launch as it comes */
    fake_reset();
    assert_int_equal(collect_session_begin(&opt, &s), RK_OK);
    for (uint32_t c = 11; c <= 13; c++)
        fake_launch(CTX_A, c, c == 12 ? "_Z5otherv" : "_Z4copyv");
    struct collect_result *last = end(s);
    struct collect_replay_src *src = NULL;
    long malformed = 0;
    assert_int_equal(collect_replay_load(path, &src, &malformed), RK_OK);
    assert_int_equal(malformed, 1);
    assert_int_equal(collect_replay_join(src, last->plan, &last->launch[0]), RK_OK);
    assert_int_equal(collect_replay_join(src, last->plan, &last->launch[0]), RK_ENODATA);
    assert_int_equal(collect_replay_join(src, last->plan, &last->launch[1]), RK_ENODATA);
    assert_int_equal(collect_replay_join(src, last->plan, &last->launch[2]), RK_OK);
    assert_int_equal(collect_replay_unused(src), 1); /* launch 1 of run 1: a different kernel */
    collect_replay_free(src);
    unlink(path);
    collect_result_free(first);
    collect_result_free(last);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(e1_counters_at_decode, setup),
        cmocka_unit_test_setup(e2_sync_decodes, setup),
        cmocka_unit_test_setup(e3_batch_age, setup),
        cmocka_unit_test_setup(e4_timing_waits_for_records, setup),
        cmocka_unit_test_setup(e5_counters_do_not_wait, setup),
        cmocka_unit_test_setup(e6_ids_from_the_call, setup),
        cmocka_unit_test_setup(e7_background_thread, setup),
        cmocka_unit_test_setup(e8_replay_files, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
