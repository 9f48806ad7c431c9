/*
 * test_run_counters.c - the counter wiring of `roofkit run` (cli/run_counters.c) on a CPU:
 * collect/'s scripted fake backend plays the CUPTI side, a real database in a temporary
 * directory receives the rows through db_insert_measurement, as cli/run.c stores them.
 * Label `unit`.
 *
 * The fake evaluates raw metric j of the range of the launch with correlation id c to
 * 1000 * c + j (tests/collect/fake_backend.c), so each expected value is known.
 *
 * Case map (id: what):
 *   W1  default set: one launch -> one row per default alias, name = alias, raw_name = CUPTI
 *       metric or formula, unit from the table; values read back from the database equal the
 *       fake's (flop_count_sp = add + mul + 2 fma)
 *   W2  named list with a raw CUPTI name: checked against the chip (unit from the host API),
 *       stored under the raw name; 'default' alone is the default set, not a named list
 *   W3  one call launching two kernels (cuBLAS, split-k): counts added, rates averaged weighted
 *       by each launch's gpu__time_duration
 *   W4  pass groups: the fake backend splits the set in 2 groups (the default set is 3 on
 *       GH100); one launch per group, each session enabling only its group's raw metrics;
 *       the joined values equal each group's (fake: 1000 c + the metric's place in its
 *       group); the note says 2 launches per measurement; a group whose launch differs
 *       (another kernel) leaves the measurement without counters
 *   W5  a library call (grid 0 in the harness, as cuBLAS): rk_counters_fill_launch stores the
 *       grid, block, registers and shared memory of the longest recorded launch (fake: grid =
 *       correlation id, the larger id the longer); a kernel with its own grid keeps it; no
 *       recorded launch leaves the measurement untouched
 *   W6  the same when no duration is known (a named set without gpu_time, untimed records):
 *       the launch with the most threads, not the first
 *   F1  no counter permission (CUPTI 35), default set: timing row stored without metrics, one
 *       warning, no second session, capture note says why, exit status RK_OK
 *   F2  the same with a named list: rows stored, status RK_ECUPTI
 *   F3  another profiler holds CUPTI (39): mode off, same as F1
 *   F4  counter ranges that do not match the launches: rows stored as NULL, not "with counters"
 *   U1  'none' gives no counters; unknown names are usage errors; ',' is one too
 */
#define _POSIX_C_SOURCE 200809L
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

#include "cli.h"
#include "collect.h"
#include "common.h"
#include "db.h"
#include "fake_backend.h"

static int ctx_a;
#define CTX ((void *)&ctx_a)

struct fixture {
    char dir[64];
    char path[128];
    struct db *db;
    int64_t capture;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rk-run-counters-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    rk_set_quiet(1);
    assert_int_equal(db_open(f->path, DB_RW, &f->db), RK_OK);
    assert_int_equal(db_capture_begin(f->db, 0, DB_CAPTURE_RUN, "roofkit run", "test", &f->capture),
                     RK_OK);
    fake_reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char side[160];
    db_close(f->db);
    unlink(f->path);
    snprintf(side, sizeof side, "%s-wal", f->path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", f->path);
    unlink(side);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Stores a measurement as cli/run.c does, with the rows of the last begin/end pair. */
static void store(struct fixture *f, const struct rk_counters *c, double median_ns)
{
    struct db_measurement m;
    const struct db_metric *rows = NULL;
    int n = 0;
    memset(&m, 0, sizeof m);
    m.kernel = "tsm2_v3";
    m.family = "tsm2";
    m.precision = "fp32";
    m.m = m.k = 1024;
    m.n = 4;
    m.reps = 10;
    m.time_min_ns = m.time_median_ns = m.time_max_ns = median_ns;
    m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = NAN;
    m.verified = 1;
    m.rel_error = 1e-7;
    m.cache_state = "cold";
    m.source = "suite";
    m.launch_index = m.correlation_id = -1;
    rk_counters_rows(c, &rows, &n);
    assert_int_equal(db_insert_measurement(f->db, f->capture, &m, rows, n, NULL), RK_OK);
}

/* store() for a library call: grid 0 until rk_counters_fill_launch fills it. */
static int store_library(struct fixture *f, const struct rk_counters *c)
{
    struct db_measurement m;
    const struct db_metric *rows = NULL;
    int n = 0, filled;
    memset(&m, 0, sizeof m);
    m.kernel = "cublas_sgemm";
    m.family = "cublas";
    m.precision = "fp32";
    m.m = m.n = m.k = 512;
    m.reps = 10;
    m.time_min_ns = m.time_median_ns = m.time_max_ns = 100.0;
    m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = NAN;
    m.verified = 1;
    m.cache_state = "cold";
    m.source = "suite";
    m.launch_index = m.correlation_id = -1;
    rk_counters_rows(c, &rows, &n);
    filled = rk_counters_fill_launch(c, &m);
    assert_int_equal(db_insert_measurement(f->db, f->capture, &m, rows, n, NULL), RK_OK);
    return filled;
}

/* The stored measurements of the fixture's capture (free with db_free_measurements). */
static struct db_measurement_row *stored(struct fixture *f, int *n)
{
    struct db_measurement_row *rows = NULL;
    assert_int_equal(db_query_measurements(f->db, f->capture, &rows, n), RK_OK);
    return rows;
}

static const struct db_metric *metric(const struct db_measurement_row *r, const char *name)
{
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

/* Index of a raw metric in the plan a session builds from these names (n == 0: default). */
static int raw_index(const char *const *names, int n, const char *raw)
{
    struct collect_plan *p = NULL;
    int idx = -1;
    assert_int_equal(collect_plan_new(names, n, &p), RK_OK);
    for (int i = 0; i < p->nraw; i++)
        if (strcmp(p->raw[i], raw) == 0)
            idx = i;
    collect_plan_free(p);
    return idx;
}

static const char *capture_note(struct fixture *f, char *buf, size_t size)
{
    struct db_capture *caps = NULL;
    int n = 0;
    assert_int_equal(db_list_captures(f->db, &caps, &n), RK_OK);
    assert_int_equal(n, 1);
    snprintf(buf, size, "%s", caps[0].note ? caps[0].note : "");
    db_free_captures(caps, n);
    return buf;
}

/* One measured configuration: the hook pair around the kernel's launches (corr ids). */
static void configuration(struct rk_counters *c, const uint32_t *corr, int n)
{
    assert_int_equal(rk_counters_begin(c), RK_OK);
    for (int i = 0; i < n; i++)
        fake_launch(CTX, corr[i], "_Z7tsm2_v3PfPKfS1_iii");
    assert_int_equal(rk_counters_end(c), RK_OK);
}

static void w1_default_set(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {7};
    int n = 0, ndefault = 0;
    char note[1024];

    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    assert_non_null(c);
    assert_true(rk_counters_active(c));
    configuration(c, corr, 1);
    store(f, c, 1234.0);
    rk_counters_note(c, f->db, f->capture, 1);
    assert_int_equal(rk_counters_status(c, 1), RK_OK);

    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 1);
    assert_true(rows[0].m.time_median_ns == 1234.0);
    for (int i = 0; i < collect_metric_count(); i++)
        ndefault += collect_metric_get(i)->in_default;
    assert_int_equal(rows[0].n_metrics, ndefault);

    const struct db_metric *d = metric(&rows[0], "dram_read_bytes");
    assert_non_null(d);
    assert_string_equal(d->raw_name, "dram__bytes_read.sum");
    assert_string_equal(d->unit, "byte");
    int j = raw_index(NULL, 0, "dram__bytes_read.sum");
    assert_true(j >= 0);
    assert_true(d->value == 7000.0 + j);

    const struct db_metric *fl = metric(&rows[0], "flop_count_sp");
    assert_non_null(fl);
    assert_string_equal(fl->unit, "flop");
    assert_non_null(strstr(fl->raw_name, "2*smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
    int ja = raw_index(NULL, 0, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
    int jm = raw_index(NULL, 0, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
    int jf = raw_index(NULL, 0, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    assert_true(fl->value == (7000.0 + ja) + (7000.0 + jm) + 2 * (7000.0 + jf));
    db_free_measurements(rows, n);

    assert_non_null(strstr(capture_note(f, note, sizeof note), "counters: 1 of 1 measurements"));
    assert_int_equal(fake.trace_starts, 1);
    assert_int_equal(fake.enables, 1);
    assert_int_equal(fake.disables, 1);
    assert_int_equal(fake.tracing, 0); /* the session let go of CUPTI */
    rk_counters_free(c);
}

static void w2_named_list(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {3};
    const char *names[] = {"dram_read_bytes", "lts__t_bytes.sum"};
    int n = 0;

    assert_int_equal(rk_counters_new("dram_read_bytes,lts__t_bytes.sum", 0, &c), RK_OK);
    assert_true(fake.host_checks >= 2); /* checked against the chip before any GPU work */
    configuration(c, corr, 1);
    store(f, c, 10.0);
    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(rows[0].n_metrics, 2);
    const struct db_metric *r = metric(&rows[0], "lts__t_bytes.sum");
    assert_non_null(r);
    assert_string_equal(r->raw_name, "lts__t_bytes.sum");
    assert_string_equal(r->unit, "fakeunit"); /* the host API's unit for a raw name */
    assert_true(r->value == 3000.0 + raw_index(names, 2, "lts__t_bytes.sum"));
    assert_non_null(metric(&rows[0], "dram_read_bytes"));
    db_free_measurements(rows, n);
    rk_counters_free(c);

    /* 'default' alone is the default set: its failures only warn. */
    fake.rc_enable = BK_INSUFFICIENT_PRIVILEGES;
    assert_int_equal(rk_counters_new("default", 0, &c), RK_OK);
    configuration(c, corr, 1);
    assert_int_equal(rk_counters_status(c, 1), RK_OK);
    rk_counters_free(c);
}

static void w3_two_launches(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {2, 5};
    int n = 0;

    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    configuration(c, corr, 2);
    store(f, c, 10.0);
    struct db_measurement_row *rows = stored(f, &n);

    int jd = raw_index(NULL, 0, "dram__bytes_write.sum");
    const struct db_metric *d = metric(&rows[0], "dram_write_bytes");
    assert_non_null(d);
    assert_true(d->value == (2000.0 + jd) + (5000.0 + jd));

    int jt = raw_index(NULL, 0, "gpu__time_duration.sum");
    const struct db_metric *t = metric(&rows[0], "gpu_time");
    assert_non_null(t);
    assert_true(t->value == (2000.0 + jt) + (5000.0 + jt)); /* durations add up */

    int jg = raw_index(NULL, 0, "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second");
    double w1 = 2000.0 + jt, w2 = 5000.0 + jt;
    double want = (w1 * (2000.0 + jg) + w2 * (5000.0 + jg)) / (w1 + w2);
    const struct db_metric *g = metric(&rows[0], "gld_throughput");
    assert_non_null(g);
    assert_true(fabs(g->value - want) <= 1e-9 * want);
    db_free_measurements(rows, n);
    rk_counters_free(c);
}

/* W4: where raw metric `raw` sits in the session of its pass group (the fake's j). */
static int place_in_group(const struct collect_plan *plan, const int *group, const char *raw)
{
    int i = 0, place = 0;
    while (i < plan->nraw && strcmp(plan->raw[i], raw) != 0)
        i++;
    assert_true(i < plan->nraw);
    for (int j = 0; j < i; j++)
        place += group[j] == group[i];
    return place;
}

static void w4_pass_groups(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    struct collect_plan *plan = NULL;
    const uint32_t corr[] = {7};
    int group[128], ng = 0, n = 0, enables = fake.enables;
    char note[1024];

    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    assert_int_equal(collect_plan_new(NULL, 0, &plan), RK_OK);
    assert_true(plan->nraw < 128);
    assert_int_equal(collect_plan_groups(plan, "GH100", group, &ng), RK_OK);
    assert_int_equal(ng, 2);
    assert_int_equal(rk_counters_groups(c), 2);
    for (int g = 0; g < 2; g++) {
        int want = 0;
        for (int i = 0; i < plan->nraw; i++)
            want += group[i] == g;
        rk_counters_set_group(c, g);
        configuration(c, corr, 1);
        assert_int_equal(fake.nraw, want); /* the session enabled its group only */
    }
    assert_int_equal(fake.enables - enables, 2);
    store(f, c, 55.0);
    rk_counters_note(c, f->db, f->capture, 1);
    assert_int_equal(rk_counters_status(c, 1), RK_OK);
    assert_non_null(strstr(capture_note(f, note, sizeof note), "from 2 untimed launches"));

    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 1);
    const struct db_metric *d = metric(&rows[0], "dram_read_bytes");
    assert_non_null(d);
    assert_true(d->value == 7000.0 + place_in_group(plan, group, "dram__bytes_read.sum"));
    const struct db_metric *fl = metric(&rows[0], "flop_count_sp");
    assert_non_null(fl);
    int ja = place_in_group(plan, group, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
    int jm = place_in_group(plan, group, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
    int jf = place_in_group(plan, group, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
    assert_true(fl->value == (7000.0 + ja) + (7000.0 + jm) + 2 * (7000.0 + jf));
    for (int i = 0; i < rows[0].n_metrics; i++)
        assert_false(isnan(rows[0].metrics[i].value)); /* every value from one of the groups */
    db_free_measurements(rows, n);

    /* the second group's launch is another kernel: nothing to join */
    rk_counters_set_group(c, 0);
    configuration(c, corr, 1);
    rk_counters_set_group(c, 1);
    assert_int_equal(rk_counters_begin(c), RK_OK);
    fake_launch(CTX, corr[0], "_Z5otherPf");
    assert_int_equal(rk_counters_end(c), RK_OK);
    const struct db_metric *rws = NULL;
    rk_counters_rows(c, &rws, &n);
    assert_true(n > 0);
    for (int i = 0; i < n; i++)
        assert_true(isnan(rws[i].value));
    collect_plan_free(plan);
    rk_counters_free(c);
}

static void w5_library_launch(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {2, 5};
    int n = 0;
    struct db_measurement own;

    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    /* nothing recorded yet: untouched */
    memset(&own, 0, sizeof own);
    assert_int_equal(rk_counters_fill_launch(c, &own), 0);
    assert_int_equal(own.grid[0], 0);

    /* the two launches of one library call, with their Activity records */
    assert_int_equal(rk_counters_begin(c), RK_OK);
    for (int i = 0; i < 2; i++) {
        fake_launch(CTX, corr[i], "_Z10sgemm_128x128PfPKfS1_iii");
        /* the second (correlation 5) runs 6x longer: the GEMM, not a reduction after it */
        fake_record(corr[i], "_Z10sgemm_128x128PfPKfS1_iii", 10000 * i,
                    10000 * i + (i ? 3000 : 500), 0);
    }
    assert_int_equal(rk_counters_end(c), RK_OK);
    assert_int_equal(store_library(f, c), 1);
    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].m.grid[0], 5); /* the longer launch */
    assert_int_equal(rows[0].m.grid[1], 1);
    assert_int_equal(rows[0].m.block[0], 256);
    assert_int_equal(rows[0].m.registers, 32);
    assert_int_equal(rows[0].m.smem_static, 1024);
    assert_int_equal(rows[0].m.smem_dynamic, 2048);
    db_free_measurements(rows, n);

    /* a kernel with its own launch keeps it */
    memset(&own, 0, sizeof own);
    own.grid[0] = 80;
    own.block[0] = 128;
    assert_int_equal(rk_counters_fill_launch(c, &own), 0);
    assert_int_equal(own.grid[0], 80);
    assert_int_equal(own.block[0], 128);
    rk_counters_free(c);
}

static void w6_library_launch_untimed(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {2, 5};
    int n = 0;

    assert_int_equal(rk_counters_new("dram_read_bytes", 0, &c), RK_OK);
    assert_int_equal(rk_counters_begin(c), RK_OK);
    for (int i = 0; i < 2; i++) { /* a smaller grid (2) first, then the bigger one (5) */
        fake_launch(CTX, corr[i], "_Z10sgemm_128x128PfPKfS1_iii");
        fake_record(corr[i], "_Z10sgemm_128x128PfPKfS1_iii", 0, 0, 0); /* untimed */
    }
    assert_int_equal(rk_counters_end(c), RK_OK);
    assert_int_equal(store_library(f, c), 1);
    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].m.grid[0], 5); /* the most threads */
    db_free_measurements(rows, n);
    rk_counters_free(c);
}

static void f1_no_permission_default(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {4};
    int n = 0;
    char note[1024];

    fake.rc_enable = BK_INSUFFICIENT_PRIVILEGES;
    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    configuration(c, corr, 1);
    assert_false(rk_counters_active(c)); /* given up for the rest of the run */
    store(f, c, 99.0);
    /* A second configuration: no session is started again, the timing is still stored. */
    assert_int_equal(rk_counters_begin(c), RK_OK);
    assert_int_equal(rk_counters_end(c), RK_OK);
    store(f, c, 98.0);
    assert_int_equal(fake.trace_starts, 1);

    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 2);
    assert_true(rows[0].m.time_median_ns == 99.0);
    assert_int_equal(rows[0].n_metrics, 0);
    assert_int_equal(rows[1].n_metrics, 0);
    db_free_measurements(rows, n);

    rk_counters_note(c, f->db, f->capture, 2);
    capture_note(f, note, sizeof note);
    assert_non_null(strstr(note, "counters: 0 of 2 measurements"));
    assert_non_null(strstr(note, "no permission to read GPU performance counters"));
    assert_non_null(strstr(note, "NVreg_RestrictProfilingToAdminUsers=0"));
    assert_int_equal(rk_counters_status(c, 2), RK_OK);
    rk_counters_free(c);
}

static void f2_no_permission_named(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {4};
    int n = 0;

    fake.rc_enable = BK_INSUFFICIENT_PRIVILEGES;
    assert_int_equal(rk_counters_new("dram_read_bytes", 0, &c), RK_OK);
    configuration(c, corr, 1);
    store(f, c, 50.0);
    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].n_metrics, 0);
    db_free_measurements(rows, n);
    assert_int_equal(rk_counters_status(c, 1), RK_ECUPTI);
    rk_counters_free(c);
}

static void f3_other_profiler(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {0};
    char note[1024];

    fake.rc_trace_start = BK_MULTIPLE_SUBSCRIBERS;
    assert_int_equal(rk_counters_new(NULL, 0, &c), RK_OK);
    configuration(c, corr, 0); /* without tracing no launch callback arrives */
    assert_false(rk_counters_active(c));
    store(f, c, 7.0);
    rk_counters_note(c, f->db, f->capture, 1);
    assert_non_null(strstr(capture_note(f, note, sizeof note), "another profiler"));
    assert_int_equal(rk_counters_status(c, 1), RK_OK);
    rk_counters_free(c);
}

static void f4_unmatched_ranges(void **state)
{
    struct fixture *f = *state;
    struct rk_counters *c = NULL;
    const uint32_t corr[] = {4};
    int n = 0;

    fake.extra_ranges = 1; /* decode reports a range more than launches ran */
    assert_int_equal(rk_counters_new("dram_read_bytes,dram_write_bytes", 0, &c), RK_OK);
    configuration(c, corr, 1);
    assert_true(rk_counters_active(c)); /* not a reason to stop trying */
    store(f, c, 7.0);
    struct db_measurement_row *rows = stored(f, &n);
    assert_int_equal(rows[0].n_metrics, 2);
    assert_true(isnan(rows[0].metrics[0].value)); /* stored as NULL */
    assert_true(isnan(rows[0].metrics[1].value));
    db_free_measurements(rows, n);
    assert_int_equal(rk_counters_status(c, 1), RK_ECUPTI);
    rk_counters_free(c);
}

static void u1_names(void **state)
{
    (void)state;
    struct rk_counters *c = (struct rk_counters *)&ctx_a;
    assert_int_equal(rk_counters_new("none", 0, &c), RK_OK);
    assert_null(c);
    assert_false(rk_counters_active(NULL));
    assert_int_equal(rk_counters_status(NULL, 3), RK_OK);
    assert_int_equal(rk_counters_new("dram_read_bytes,bogus", 0, &c), RK_EUSAGE);
    assert_null(c);
    assert_int_equal(rk_counters_new(",", 0, &c), RK_EUSAGE);
    fake.unknown_raw = "foo__bar.sum";
    assert_int_equal(rk_counters_new("foo__bar.sum", 0, &c), RK_EUSAGE); /* none left */
    assert_int_equal(fake.trace_starts, 0); /* nothing touched the "GPU" */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(w1_default_set, setup, teardown),
        cmocka_unit_test_setup_teardown(w2_named_list, setup, teardown),
        cmocka_unit_test_setup_teardown(w3_two_launches, setup, teardown),
        cmocka_unit_test_setup_teardown(w4_pass_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(w5_library_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(w6_library_launch_untimed, setup, teardown),
        cmocka_unit_test_setup_teardown(f1_no_permission_default, setup, teardown),
        cmocka_unit_test_setup_teardown(f2_no_permission_named, setup, teardown),
        cmocka_unit_test_setup_teardown(f3_other_profiler, setup, teardown),
        cmocka_unit_test_setup_teardown(f4_unmatched_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(u1_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
