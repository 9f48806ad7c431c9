/*
 * test_schema.c - the schema steps after the first two (db/schema.c: every change is a new
 * step with a test that migrates a file of the previous version), and what each step's
 * columns carry through db/'s inserts, queries and merge.
 *
 * Case map:
 *   S01 schema 2 -> 3 in place: a schema 2 file (its two steps run raw, rows in every table
 *       a measurement touches) is refused read-only as older, then migrated by a read-write
 *       open: the current user_version, every row kept with its id, times_ns NULL on the old rows
 * and read as no times; the column's CHECK refuses text that is not a JSON array S02 every
 * repetition's time round-trips: db_insert_measurement with 12 times (17 digits, 1e9 and a fraction
 * of a ns) stores one JSON array and db_query_measurements reads the same doubles in the same
 * order; n_times 0 or a NULL array stores SQL NULL S03 roofkit merge copies times_ns with its
 * measurement
 */
#define _POSIX_C_SOURCE 200809L
#include "db_fixture.h"

#include "common.h"
#include "internal.h" /* white box: the migration steps' text (dbi_migrations) */

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static const double times12[12] = {1100.25,  1187.5, 1099.0,  1234.5678901234567, 1e9,
                                   0.015625, 1100.0, 1100.25, 1300.1250000001,    1001.0,
                                   1050.5,   1111.0};

/* A schema 2 file with a device, a probe and a run capture, one ceiling and two measurements
 * (one with a metric and a prediction), as roofkit 0.1.0 wrote it. */
static void make_v2(const char *path)
{
    char sql[160];
    raw_exec(path, dbi_migrations[0]);
    raw_exec(path, dbi_migrations[1]);
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = 2;"
             " PRAGMA journal_mode = WAL",
             DB_APPLICATION_ID);
    raw_exec(path, sql);
    raw_exec(path,
             "INSERT INTO device (id, name, uuid) VALUES (3, 'NVIDIA H100 80GB HBM3', 'GPU-V2');"
             "INSERT INTO capture (id, device_id, kind, status, cmdline, started_at, uid) VALUES"
             " (1, 3, 'probe', 'done', 'roofkit probe', '2026-01-01T00:00:00Z',"
             " '0123456789abcdef0123456789abcdef'),"
             " (2, 3, 'run', 'done', 'roofkit run', '2026-01-01T00:01:00Z',"
             " 'fedcba9876543210fedcba9876543210');"
             "INSERT INTO ceiling (capture_id, name, kind, level, value, unit) VALUES"
             " (1, 'bw_dram_read', 'bandwidth', 'dram', 3000, 'GB/s');"
             "INSERT INTO measurement (id, capture_id, kernel, reps, time_min_ns, time_median_ns,"
             " time_max_ns, cache_state, source) VALUES (8, 2, 'tsm2_v3', 10, 990, 1000, 1100,"
             " 'cold', 'suite'), (9, 2, 'stmvb', 10, 1990, 2000, 2100, 'cold', 'suite');"
             "INSERT INTO metric (measurement_id, name, value) VALUES (8, 'gpu_time', 1);"
             "INSERT INTO capture (id, kind, status, started_at, uid) VALUES (4, 'model', 'done',"
             " '2026-01-01T00:02:00Z', '00112233445566778899aabbccddeeff');"
             "INSERT INTO prediction (measurement_id, capture_id, model, predicted_time_ns)"
             " VALUES (8, 4, 'roofline', 900);");
}

/* Whether sql fails on a raw connection to path (a CHECK constraint refusing a row). */
static int raw_fails(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    int rc;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    sqlite3_close(h);
    return rc != SQLITE_OK;
}

/* A run capture on a new device in db whose first measurement stores times12 (with two
 * metrics); *m is that measurement, for more rows. Returns the capture's id. */
static int64_t run_with_times(struct db *db, const char *uuid, struct db_measurement *m)
{
    struct db_device dv = sample_device(uuid);
    int64_t dev = 0, run = 0;
    assert_int_equal(db_device_upsert(db, &dv, &dev), RK_OK);
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_RUN, "roofkit run", "0.1.0", &run),
                     RK_OK);
    *m = sample_measurement("tsm2_v3");
    m->times_ns = times12;
    m->n_times = 12;
    assert_int_equal(db_insert_measurement(db, run, m, sample_metrics, 2, NULL), RK_OK);
    return run;
}

/* The 12 times of times12, bit for bit. */
static void same_times(const struct db_measurement *m)
{
    assert_int_equal(m->n_times, 12);
    assert_non_null(m->times_ns);
    for (int i = 0; i < 12; i++)
        assert_memory_equal(&m->times_ns[i], &times12[i], sizeof(double));
}

/* ------------------------------------------------------------------- S01 */

static void s01_migrate_schema2(void **state)
{
    char path[512];
    struct db *db = NULL;
    struct db_measurement_row *rows = NULL;
    int n = 0;
    (void)state;

    new_path(path, sizeof path, "s01");
    make_v2(path);
    expect_refused(path, DB_RO, "older than this roofkit's");
    open_rw(path, &db); /* through step 3 and any after it */
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    /* the rows stay, ids and all; the old measurements have no times */
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture"), 3);
    assert_int_equal(raw_int(path, "SELECT 10 * min(id) + max(id) FROM measurement"), 89);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM prediction"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE times_ns IS NULL"), 2);
    assert_int_equal(db_query_measurements(db, 2, &rows, &n), RK_OK);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_null(rows[i].m.times_ns);
        assert_int_equal(rows[i].m.n_times, 0);
    }
    assert_true(rows[0].m.time_median_ns == 1000.0 && rows[0].m.reps == 10);
    db_free_measurements(rows, n);
    db_close(db);
    /* times_ns holds a JSON array or nothing */
    assert_true(raw_fails(path, "UPDATE measurement SET times_ns = '{\"a\":1}' WHERE id = 8"));
    assert_true(raw_fails(path, "UPDATE measurement SET times_ns = '[1,2' WHERE id = 8"));
    assert_false(raw_fails(path, "UPDATE measurement SET times_ns = '[1,2]' WHERE id = 8"));
    assert_int_equal(raw_int(path, "SELECT count(*) FROM pragma_integrity_check WHERE"
                                   " integrity_check = 'ok'"),
                     1);
}

/* ------------------------------------------------------------------- S02 */

static void s02_times_round_trip(void **state)
{
    char path[512];
    struct db *db = NULL;
    struct db_measurement m;
    struct db_measurement_row *rows = NULL;
    int64_t run;
    int n = 0;
    (void)state;

    new_path(path, sizeof path, "s02");
    open_rw(path, &db);
    run = run_with_times(db, "GPU-S02", &m);
    m.n_times = 0; /* no times: NULL */
    assert_int_equal(db_insert_measurement(db, run, &m, NULL, 0, NULL), RK_OK);
    m.times_ns = NULL;
    m.n_times = 5;
    assert_int_equal(db_insert_measurement(db, run, &m, NULL, 0, NULL), RK_OK);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE times_ns IS NULL"), 2);
    assert_int_equal(raw_int(path, "SELECT json_array_length(times_ns) FROM measurement WHERE"
                                   " times_ns IS NOT NULL"),
                     12);

    assert_int_equal(db_query_measurements(db, run, &rows, &n), RK_OK);
    assert_int_equal(n, 3);
    same_times(&rows[0].m);
    assert_int_equal(rows[0].n_metrics, 2);
    for (int r = 1; r < 3; r++) {
        assert_null(rows[r].m.times_ns);
        assert_int_equal(rows[r].m.n_times, 0);
    }
    db_free_measurements(rows, n);
    db_close(db);
}

/* ------------------------------------------------------------------- S03 */

static void s03_merge_copies_times(void **state)
{
    char in[512], out_path[512];
    struct db *db = NULL, *out = NULL;
    struct db_measurement m;
    struct db_measurement_row *rows = NULL;
    struct db_merge_stats st;
    int n = 0;
    (void)state;

    new_path(in, sizeof in, "s03-in");
    open_rw(in, &db);
    assert_int_equal(db_capture_end(db, run_with_times(db, "GPU-S03", &m), DB_DONE), RK_OK);
    db_close(db);

    new_path(out_path, sizeof out_path, "s03-out");
    open_rw(out_path, &out);
    assert_int_equal(db_merge_check(in, out_path), RK_OK);
    assert_int_equal(db_merge(out, in, &st), RK_OK);
    assert_int_equal(st.captures_added, 1);
    assert_int_equal(db_query_measurements(out, 0, &rows, &n), RK_OK);
    assert_int_equal(n, 1);
    same_times(&rows[0].m);
    db_free_measurements(rows, n);
    db_close(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(s01_migrate_schema2),
        cmocka_unit_test(s02_times_round_trip),
        cmocka_unit_test(s03_merge_copies_times),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
