/*
 * test_run_counters_gpu.c - `roofkit run` with counters on a real GPU (label gpu, H100; counters
 * need permission, which the GPU machine grants as root). Runs the roofkit binary of the same
 * build into a temporary database and reads the rows back through db/.
 *
 * The kernels are copy-like, so their DRAM traffic is known in advance: ISM2 on 1e7 x 16 x 16
 * (fp64) reads A (m x k) once and writes C (m x n) once, 2.56 GB; TSM2 V3 on 20480 x 4 x 20480
 * (fp32) reads A once, 1.68 GB. Both are over 30x the L2, so what stays in L2 (dirty C lines at
 * the end, clean lines of the flush buffer at the start) is under 5 % of the traffic.
 *
 * Case map (id: what):
 *   G1  ism2_opt1 fp64 --metrics dram_read_bytes,dram_write_bytes,gpu_time,gld_throughput:
 *       exit 0, one verified measurement, DRAM read = (mk + kn) 8 B and write = mn 8 B within
 *       5 %, their sum within 5 % of the compulsory count, units and raw names stored, gpu_time
 *       within 2x of the event-timed median (the timed repetitions are not the profiled launch)
 *   G2  tsm2_v3 fp32 with the default set (no --metrics): every default alias stored, DRAM read
 *       = (mk + kn) 4 B within 5 %, the capture's note says how many have counters
 *   G3  --metrics none: the measurement is stored without metric rows
 *   G4  cublas_sgemm 2048^3 with --metrics gpu_time: the stored launch is cuBLAS's kernel as
 *       CUPTI recorded it (grid > 0, block 32..1024 threads, registers 1..255); with
 *       --metrics none the row keeps grid 0 (nothing recorded)
 * Without a GPU (roofkit exits 4) each case is skipped.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"
#include "db.h"

static char roofkit[PATH_MAX + 32];
static char dir[64], dbpath[128];

/* The roofkit of this build: $ROOFKIT_BIN, else build/cli/roofkit beside build/tests/cli/. */
static void find_roofkit(void)
{
    const char *env = getenv("ROOFKIT_BIN");
    char exe[PATH_MAX];
    ssize_t n;
    if (env && *env) {
        snprintf(roofkit, sizeof roofkit, "%s", env);
        return;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(roofkit, sizeof roofkit, "%s/../../cli/roofkit", exe);
}

static int setup(void **state)
{
    (void)state;
    find_roofkit();
    snprintf(dir, sizeof dir, "/tmp/rk-run-gpu-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(dbpath, sizeof dbpath, "%s/run.db", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[256];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs `roofkit --db DB run ARGS`; returns its exit code. Skips the case without a GPU. */
static int run_roofkit(const char *args)
{
    char cmd[PATH_MAX + 512];
    snprintf(cmd, sizeof cmd, "'%s' --db '%s' run --reps 3 %s", roofkit, dbpath, args);
    fprintf(stderr, "+ %s\n", cmd);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    int rc = WEXITSTATUS(st);
    if (rc == RK_ENOGPU) {
        fprintf(stderr, "no usable GPU: skipped\n");
        skip();
    }
    return rc;
}

static struct db_measurement_row *read_rows(struct db **db, int *n)
{
    struct db_measurement_row *rows = NULL;
    assert_int_equal(db_open(dbpath, DB_RO, db), RK_OK);
    assert_int_equal(db_query_measurements(*db, 0, &rows, n), RK_OK);
    return rows;
}

static const struct db_metric *metric(const struct db_measurement_row *r, const char *name)
{
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

static void near(const char *what, double got, double want, double tol)
{
    fprintf(stderr, "%s: %.6g, expected %.6g (%+.2f %%)\n", what, got, want,
            100.0 * (got - want) / want);
    assert_false(isnan(got));
    assert_true(fabs(got - want) <= tol * want);
}

static void g1_ism2_named(void **state)
{
    (void)state;
    const double m = 1e7, n = 16, k = 16, e = 8;
    struct db *db = NULL;
    int nrows = 0;
    assert_int_equal(run_roofkit("--kernel ism2_opt1 --sizes 10000000x16x16 --precision fp64 "
                                 "--metrics dram_read_bytes,dram_write_bytes,gpu_time,"
                                 "gld_throughput"),
                     RK_OK);
    struct db_measurement_row *rows = read_rows(&db, &nrows);
    assert_int_equal(nrows, 1);
    assert_int_equal(rows[0].m.verified, 1);
    assert_int_equal(rows[0].n_metrics, 4);
    const struct db_metric *rd = metric(&rows[0], "dram_read_bytes");
    const struct db_metric *wr = metric(&rows[0], "dram_write_bytes");
    const struct db_metric *t = metric(&rows[0], "gpu_time");
    const struct db_metric *g = metric(&rows[0], "gld_throughput");
    assert_non_null(rd);
    assert_non_null(wr);
    assert_non_null(t);
    assert_non_null(g);
    assert_string_equal(rd->raw_name, "dram__bytes_read.sum");
    assert_string_equal(rd->unit, "byte");
    assert_string_equal(g->unit, "byte/second");
    near("DRAM read", rd->value, (m * k + k * n) * e, 0.05);
    near("DRAM write", wr->value, m * n * e, 0.05);
    near("DRAM read + write", rd->value + wr->value, (m * k + k * n + m * n) * e, 0.05);
    assert_true(g->value > 0);
    /* within 2x both ways: near()'s tolerance of 1.0 alone bounds it from above only */
    const double ev = rows[0].m.time_median_ns;
    fprintf(stderr, "gpu_time %.6g ns, event median %.6g ns (x %.3f)\n", t->value, ev,
            t->value / ev);
    assert_true(ev > 0);
    assert_true(t->value >= 0.5 * ev && t->value <= 2.0 * ev);
    db_free_measurements(rows, nrows);
    db_close(db);
}

static void g2_tsm2_default(void **state)
{
    (void)state;
    const double m = 20480, n = 4, k = 20480, e = 4;
    struct db *db = NULL;
    struct db_capture *caps = NULL;
    int nrows = 0, ncaps = 0, ndefault = 0;
    assert_int_equal(run_roofkit("--kernel tsm2_v3 --sizes 20480x4x20480 --precision fp32"), RK_OK);
    struct db_measurement_row *rows = read_rows(&db, &nrows);
    assert_int_equal(nrows, 1);
    assert_int_equal(rows[0].m.verified, 1);
    for (int i = 0; i < collect_metric_count(); i++) {
        const struct collect_metric *cm = collect_metric_get(i);
        if (!cm->in_default)
            continue;
        ndefault++;
        assert_non_null(metric(&rows[0], cm->alias));
    }
    assert_int_equal(rows[0].n_metrics, ndefault);
    near("DRAM read", metric(&rows[0], "dram_read_bytes")->value, (m * k + k * n) * e, 0.05);
    assert_int_equal(db_list_captures(db, &caps, &ncaps), RK_OK);
    assert_int_equal(ncaps, 1);
    assert_non_null(caps[0].note);
    fprintf(stderr, "note: %s\n", caps[0].note);
    assert_non_null(strstr(caps[0].note, "counters: 1 of 1 measurements"));
    db_free_captures(caps, ncaps);
    db_free_measurements(rows, nrows);
    db_close(db);
}

static void g3_none(void **state)
{
    (void)state;
    struct db *db = NULL;
    int nrows = 0;
    assert_int_equal(
        run_roofkit("--kernel tsm2_v3 --sizes 10240x4x10240 --precision fp32 --metrics none"),
        RK_OK);
    struct db_measurement_row *rows = read_rows(&db, &nrows);
    assert_int_equal(nrows, 1);
    assert_int_equal(rows[0].n_metrics, 0);
    assert_true(rows[0].m.time_median_ns > 0);
    db_free_measurements(rows, nrows);
    db_close(db);
}

static void g4_cublas_launch(void **state)
{
    (void)state;
    struct db *db = NULL;
    int nrows = 0;
    assert_int_equal(run_roofkit("--kernel cublas_sgemm --sizes 2048 --precision fp32 "
                                 "--metrics gpu_time"),
                     RK_OK);
    struct db_measurement_row *rows = read_rows(&db, &nrows);
    assert_int_equal(nrows, 1);
    const struct db_measurement *m = &rows[0].m;
    fprintf(stderr,
            "cublas_sgemm 2048^3: grid %dx%dx%d block %dx%dx%d, %d registers, %d + %d B "
            "shared\n",
            m->grid[0], m->grid[1], m->grid[2], m->block[0], m->block[1], m->block[2], m->registers,
            m->smem_static, m->smem_dynamic);
    assert_true(m->grid[0] > 0 && m->grid[1] > 0 && m->grid[2] > 0);
    const int threads = m->block[0] * m->block[1] * m->block[2];
    assert_true(threads >= 32 && threads <= 1024);
    assert_true(m->registers >= 1 && m->registers <= 255);
    db_free_measurements(rows, nrows);
    db_close(db);

    assert_int_equal(
        run_roofkit("--kernel cublas_sgemm --sizes 2048 --precision fp32 --metrics none"), RK_OK);
    rows = read_rows(&db, &nrows);
    assert_int_equal(nrows, 2); /* the same database: the row above, then this one */
    assert_true(rows[0].m.grid[0] > 0);
    assert_int_equal(rows[1].m.grid[0], 0);
    db_free_measurements(rows, nrows);
    db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(g1_ism2_named, setup, teardown),
        cmocka_unit_test_setup_teardown(g2_tsm2_default, setup, teardown),
        cmocka_unit_test_setup_teardown(g3_none, setup, teardown),
        cmocka_unit_test_setup_teardown(g4_cublas_launch, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
