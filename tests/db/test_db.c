/*
 * test_db.c - db/: opening, refusing, migrating, every table's round trip, transactions,
 * cascades, the dump and the import. Fault injection and two processes: test_db_faults.c.
 *
 * Case map:
 *   D01 create a new file: schema version, application id, WAL; reopen RW and RO
 *   D02 migrate from version 0: an empty SQLite file, a zero-byte file, a file
 *       marked roofkit's at version 0
 *   D03 refuse a text file            (RW and RO; byte-for-byte unchanged, no side files)
 *   D04 refuse random bytes           (idem)
 *   D05 refuse a truncated roofkit database (idem)
 *   D06 refuse another program's SQLite database, application id 0 or another
 *   D07 refuse a newer schema         (idem, WAL-mode file)
 *   D08 refuse a corrupt page behind a valid header (idem)
 *   D09 DB_RO never creates a file, refuses an empty one, and aborts on a write
 *   D10 refuse a read-only file in DB_RW (skipped as root: root writes anyway)
 *   D11 round trip of every table, NaN <-> NULL, upserts, latest capture,
 *       per-device ceilings, counts in the capture list
 *   D12 a measurement and its metrics are atomic: a NULL or duplicate metric name
 *       leaves no trace of the measurement
 *   D13 inside db_begin a failing row rolls back alone; an interrupted capture
 *       rolls back the open transaction and keeps the committed rows
 *   D18 ON DELETE CASCADE from capture and device
 *   D19 db_dump_table: every table, names and types; unknown table is RK_EUSAGE;
 *       db_dump_columns: the names alone
 *   D22 a profile capture learns its GPU: db_capture_gpu_uuids lists the distinct
 *       "uuid" of its measurements' params, sorted (none before any launch; launches
 *       without one skipped), db_capture_set_device sets it; a capture that does not
 *       exist is RK_EDB
 */
#define _POSIX_C_SOURCE 200809L
#include "db_fixture.h"

#include "common.h"
#include "internal.h" /* white box: the connection */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------- D01 */
static void d01_create_and_reopen(void **state)
{
    char path[300];
    struct db *db = NULL;
    (void)state;
    new_path(path, sizeof path, "d01");
    open_rw(path, &db);
    assert_string_equal(db_path(db), path);
    assert_int_equal(db_check(db), RK_OK);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(raw_int(path, "PRAGMA application_id"), DB_APPLICATION_ID);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 8);
    {
        long n = 0;
        unsigned char *b = slurp(path, &n);
        assert_true(n >= 100);
        assert_int_equal(b[18], 2); /* WAL */
        free(b);
    }
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(db_open(path, DB_RO, &db), RK_OK);
    db_close(db);
    /* A clean close leaves no side files. */
    assert_false(side_exists(path, "-wal"));
    assert_false(side_exists(path, "-shm"));
    assert_true(db_schema_version() >= 1);
}

/* ------------------------------------------------------------------- D02 */
static void d02_migrate_from_zero(void **state)
{
    char path[300];
    struct db *db = NULL;
    (void)state;

    /* An SQLite file with no tables, user_version 0, rollback journal. */
    new_path(path, sizeof path, "d02a");
    raw_exec(path, "CREATE TABLE t(x); DROP TABLE t;");
    assert_int_equal(raw_int(path, "PRAGMA user_version"), 0);
    assert_int_equal(db_open(path, DB_RO, &db), RK_EDB); /* RO cannot initialise */
    assert_null(db);
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(raw_int(path, "PRAGMA application_id"), DB_APPLICATION_ID);

    /* A zero-byte file (touch roofkit.db). */
    new_path(path, sizeof path, "d02b");
    write_file(path, "", 0);
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());

    /* Marked roofkit's at version 0: every step runs. */
    new_path(path, sizeof path, "d02c");
    raw_exec(path, "PRAGMA application_id = 1383034726; CREATE TABLE t(x); DROP TABLE t;");
    assert_int_equal(raw_int(path, "PRAGMA application_id"), DB_APPLICATION_ID);
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'metric'"), 1);
}

/* ------------------------------------------------------------------- D03 */
static void d03_refuse_text(void **state)
{
    char path[300];
    const char text[] = "this is a note about GPUs, not a database\n";
    (void)state;
    new_path(path, sizeof path, "d03");
    write_file(path, text, sizeof text - 1);
    expect_refused(path, DB_RW, "is not a SQLite database");
    expect_refused(path, DB_RO, "is not a SQLite database");
}

/* ------------------------------------------------------------------- D04 */
static void d04_refuse_random(void **state)
{
    char path[300];
    unsigned char buf[8192];
    unsigned x = 12345;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    new_path(path, sizeof path, "d04");
    write_file(path, buf, sizeof buf);
    expect_refused(path, DB_RW, "is not a SQLite database");
    expect_refused(path, DB_RO, "is not a SQLite database");
}

/* ------------------------------------------------------------------- D05 */
static void d05_refuse_truncated(void **state)
{
    char path[300];
    long n = 0;
    unsigned char *b;
    (void)state;
    new_path(path, sizeof path, "d05");
    make_roofkit_db(path);
    b = slurp(path, &n);
    assert_true(n >= 4 * 4096);
    write_file(path, b, (size_t)n / 2);
    expect_refused(path, DB_RW, "truncated");
    expect_refused(path, DB_RO, "truncated");
    /* Cut inside the 100-byte header too. */
    write_file(path, b, 60);
    expect_refused(path, DB_RW, "truncated");
    free(b);
}

/* ------------------------------------------------------------------- D06 */
static void d06_refuse_other_app(void **state)
{
    char path[300];
    (void)state;
    new_path(path, sizeof path, "d06a");
    raw_exec(path, "CREATE TABLE contacts(name TEXT, phone TEXT);"
                   "INSERT INTO contacts VALUES ('ada', '123');");
    expect_refused(path, DB_RW, "is not a roofkit database");
    expect_refused(path, DB_RO, "is not a roofkit database");

    new_path(path, sizeof path, "d06b");
    raw_exec(path, "PRAGMA application_id = 1234; PRAGMA journal_mode = WAL;"
                   "CREATE TABLE t(x);");
    expect_refused(path, DB_RW, "is not a roofkit database");
    expect_refused(path, DB_RO, "is not a roofkit database");
}

/* ------------------------------------------------------------------- D07 */
static void d07_refuse_newer(void **state)
{
    char path[300];
    char sql[64];
    (void)state;
    new_path(path, sizeof path, "d07");
    make_roofkit_db(path);
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", db_schema_version() + 1);
    raw_exec(path, sql);
    expect_refused(path, DB_RW, "was written by a newer roofkit");
    expect_refused(path, DB_RO, "upgrade roofkit");
}

/* ------------------------------------------------------------------- D08 */
static void d08_refuse_corrupt(void **state)
{
    char path[300];
    long n = 0;
    unsigned char *b;
    long i;
    (void)state;
    new_path(path, sizeof path, "d08");
    make_roofkit_db(path);
    b = slurp(path, &n);
    /* Garbage over pages 2..4: b-tree pages of the schema's tables. */
    for (i = 4096; i < 4 * 4096 && i < n; i++)
        b[i] = (unsigned char)(i * 7 + 3);
    write_file(path, b, (size_t)n);
    free(b);
    expect_refused(path, DB_RW, "corrupt");
    expect_refused(path, DB_RO, "corrupt");
}

/* ------------------------------------------------------------------- D09 */
static void d09_ro_never_creates(void **state)
{
    char path[300];
    struct db *db = NULL;
    const char *msg;
    pid_t pid;
    int status = 0;
    (void)state;

    new_path(path, sizeof path, "d09");
    stderr_begin();
    assert_int_equal(db_open(path, DB_RO, &db), RK_EDB);
    msg = stderr_end();
    assert_non_null(strstr(msg, "does not exist"));
    assert_int_equal(count_lines(msg), 1);
    assert_null(db);
    assert_false(exists(path));
    assert_false(side_exists(path, "-wal"));

    write_file(path, "", 0);
    expect_refused(path, DB_RO, "is empty");

    /* A write through a DB_RO connection is a programmer error: it aborts. */
    new_path(path, sizeof path, "d09b");
    make_roofkit_db(path);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int64_t id = 0;
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        if (db_open(path, DB_RO, &db) != RK_OK)
            _exit(3);
        db_capture_begin(db, 0, DB_CAPTURE_MODEL, NULL, NULL, &id);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture"), 1);
}

/* ------------------------------------------------------------------- D10 */
static void d10_refuse_readonly_file(void **state)
{
    char path[300];
    struct db *db = NULL;
    (void)state;
    if (geteuid() == 0)
        skip(); /* root may write a 0444 file: nothing to test */
    new_path(path, sizeof path, "d10");
    make_roofkit_db(path);
    assert_int_equal(chmod(path, 0444), 0);
    expect_refused(path, DB_RW, "read-only");
    assert_int_equal(db_open(path, DB_RO, &db), RK_OK);
    db_close(db);
}

/* ------------------------------------------------------------------- D11 */
static void d11_roundtrip(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-1111");
    struct db_device d2 = sample_device("GPU-2222");
    struct db_device got;
    struct db_device *devs = NULL;
    struct db_capture *caps = NULL;
    struct db_capture cap;
    struct db_ceiling c1 = sample_ceiling("bw_dram_read", 3000.0);
    struct db_ceiling c2 = sample_ceiling("bw_l2_read", 9000.0);
    struct db_ceiling *cs = NULL;
    struct db_latency_point pts[3] = {
        {16384, 128, 33.5, 17.0}, {1 << 20, 128, 260.0, 131.3}, {1 << 30, 128, 690.0, NAN}};
    struct db_latency_point *ps = NULL;
    struct db_measurement m = sample_measurement("tsm2_v3");
    struct db_measurement_row *rows = NULL;
    struct db_prediction pr = {0, 0, 0, "roofline", 950.0, "dram", "{\"intensity\":0.5}", NAN};
    struct db_prediction *preds = NULL;
    int64_t dev = 0, dev_again = 0, dev2 = 0, probe1 = 0, probe2 = 0, run = 0, model = 0;
    int64_t mid = 0, pid = 0, pid2 = 0, latest = 0;
    int n = 0, i;
    (void)state;

    new_path(path, sizeof path, "d11");
    open_rw(path, &db);

    /* devices: insert, update by uuid, second device */
    assert_int_equal(db_device_upsert(db, &d, &dev), RK_OK);
    d.sm_clock_mhz = 1755;
    d.host = "other-host";
    assert_int_equal(db_device_upsert(db, &d, &dev_again), RK_OK);
    assert_true(dev > 0);
    assert_int_equal(dev, dev_again);
    assert_int_equal(db_device_upsert(db, &d2, &dev2), RK_OK);
    assert_int_not_equal(dev, dev2);
    assert_int_equal(db_get_device(db, dev, &got), RK_OK);
    assert_string_equal(got.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(got.uuid, "GPU-1111");
    assert_string_equal(got.pci_bus_id, "0000:19:00.0");
    assert_int_equal(got.cc_major, 9);
    assert_int_equal(got.sm_count, 132);
    assert_int_equal(got.sm_clock_mhz, 1755);
    assert_int_equal(got.mem_clock_mhz, 2619);
    assert_int_equal(got.bus_width_bits, 5120);
    assert_int_equal(got.l2_bytes, 52428800);
    assert_int_equal(got.memory_bytes, 84929216512ll);
    assert_int_equal(got.smem_per_sm_bytes, 233472);
    assert_int_equal(got.smem_per_block_optin_bytes, 232448);
    assert_int_equal(got.regs_per_sm, 65536);
    assert_int_equal(got.max_threads_per_sm, 2048);
    assert_int_equal(got.driver_version, 13000);
    assert_string_equal(got.host, "other-host");
    assert_non_null(got.first_seen);
    assert_int_equal(strlen(got.last_seen), 20); /* YYYY-MM-DDTHH:MM:SSZ */
    db_device_release(&got);
    assert_int_equal(db_get_device(db, 999, &got), RK_ENODATA);
    assert_int_equal(db_list_devices(db, &devs, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_string_equal(devs[1].uuid, "GPU-2222");
    db_free_devices(devs, n);

    /* captures and ceilings: two probe runs, the second remeasures one ceiling */
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_PROBE, 0, &latest), RK_ENODATA);
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_PROBE, "roofkit probe", "0.1.0", &probe1),
                     RK_OK);
    assert_int_equal(db_insert_ceiling(db, probe1, &c1, NULL), RK_OK);
    assert_int_equal(db_insert_ceiling(db, probe1, &c2, NULL), RK_OK);
    assert_int_equal(db_insert_latency_points(db, probe1, pts, 3), RK_OK);
    /* running captures are not "latest" */
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_PROBE, dev, &latest), RK_ENODATA);
    assert_int_equal(db_capture_end(db, probe1, DB_DONE), RK_OK);
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_PROBE, dev, &latest), RK_OK);
    assert_int_equal(latest, probe1);
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_PROBE, NULL, NULL, &probe2), RK_OK);
    c1.value = 3100.0;
    assert_int_equal(db_insert_ceiling(db, probe2, &c1, NULL), RK_OK);
    assert_int_equal(db_capture_end(db, probe2, DB_INTERRUPTED), RK_OK);
    assert_int_equal(db_capture_note(db, probe2, "stopped by ^C"), RK_OK);
    assert_int_equal(db_capture_end(db, 4242, DB_DONE), RK_EDB);

    assert_int_equal(db_query_ceilings(db, 0, probe1, &cs, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_string_equal(cs[0].name, "bw_dram_read");
    assert_int_equal(cs[0].capture_id, probe1);
    assert_string_equal(cs[0].kind, "bandwidth");
    assert_string_equal(cs[0].level, "dram");
    assert_null(cs[0].precision);
    assert_true(cs[0].value == 3000.0);
    assert_string_equal(cs[0].unit, "GB/s");
    assert_string_equal(cs[0].method, "read kernel, 8 GiB buffer");
    assert_string_equal(cs[0].params, "{\"bytes\":8589934592}");
    assert_int_equal(cs[0].reps, 30);
    assert_true(cs[0].min == 3000.0 * 0.99);
    assert_true(cs[0].max == 3000.0 * 1.01);
    assert_true(cs[0].theoretical == 3352.0);
    assert_true(cs[0].sm_clock_mhz == 1980.0);
    assert_true(isnan(cs[0].power_w));
    assert_true(cs[0].temp_c == 45.0);
    db_free_ceilings(cs, n);
    /* per device: the newest value of each name */
    assert_int_equal(db_query_ceilings(db, dev, 0, &cs, &n), RK_OK);
    assert_int_equal(n, 2);
    for (i = 0; i < n; i++) {
        if (strcmp(cs[i].name, "bw_dram_read") == 0)
            assert_true(cs[i].value == 3100.0 && cs[i].capture_id == probe2);
        else
            assert_true(cs[i].value == 9000.0 && cs[i].capture_id == probe1);
    }
    db_free_ceilings(cs, n);
    assert_int_equal(db_query_ceilings(db, dev2, 0, &cs, &n), RK_OK);
    assert_int_equal(n, 0);
    assert_null(cs);
    assert_int_equal(db_query_ceilings(db, 0, 0, &cs, &n), RK_OK);
    assert_int_equal(n, 3);
    db_free_ceilings(cs, n);
    /* a ceiling without a value or with a bad kind is refused */
    c2.value = NAN;
    stderr_begin();
    assert_int_equal(db_insert_ceiling(db, probe1, &c2, NULL), RK_EDB);
    c2.value = 1;
    c2.kind = "speed";
    assert_int_equal(db_insert_ceiling(db, probe1, &c2, NULL), RK_EDB);
    c2.kind = "bandwidth";
    c2.params = "{not json";
    assert_int_equal(db_insert_ceiling(db, probe1, &c2, NULL), RK_EDB);
    stderr_end();

    /* latency curve: by capture, by device (newest capture that has points) */
    assert_int_equal(db_query_latency_points(db, dev, 0, &ps, &n), RK_OK);
    assert_int_equal(n, 3);
    assert_int_equal(ps[0].footprint_bytes, 16384);
    assert_int_equal(ps[0].stride_bytes, 128);
    assert_true(ps[1].cycles == 260.0);
    assert_true(ps[1].ns == 131.3);
    assert_true(isnan(ps[2].ns));
    free(ps);
    assert_int_equal(db_query_latency_points(db, 0, probe2, &ps, &n), RK_OK);
    assert_int_equal(n, 0);
    free(ps);

    /* measurements, metrics, predictions */
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_RUN, "roofkit run", "0.1.0", &run),
                     RK_OK);
    assert_int_equal(db_insert_measurement(db, run, &m, sample_metrics, NSAMPLE_METRICS, &mid),
                     RK_OK);
    m.kernel = "stmvb";
    m.verified = -1;
    m.rel_error = NAN;
    m.cache_state = "warm";
    m.source = "profile";
    m.launch_index = 7;
    m.correlation_id = 0;
    m.params = NULL;
    assert_int_equal(db_insert_measurement(db, run, &m, NULL, 0, NULL), RK_OK);
    assert_int_equal(db_capture_end(db, run, DB_DONE), RK_OK);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_MODEL, "roofkit model", "0.1.0", &model),
                     RK_OK);
    pr.measurement_id = mid;
    pr.capture_id = model;
    assert_int_equal(db_insert_prediction(db, &pr, &pid), RK_OK);
    pr.model = "tsm2";
    pr.bound = "latency";
    pr.details = NULL;
    pr.predicted_time_ns = NAN;
    assert_int_equal(db_insert_prediction(db, &pr, NULL), RK_OK);
    /* a newer roofline prediction replaces the older one */
    pr.model = "roofline";
    pr.predicted_time_ns = 960.0;
    pr.bound = "compute";
    pr.details = "{\"intensity\":0.6}";
    assert_int_equal(db_insert_prediction(db, &pr, &pid2), RK_OK);
    assert_int_equal(pid, pid2);
    assert_int_equal(db_capture_end(db, model, DB_DONE), RK_OK);

    assert_int_equal(db_query_measurements(db, run, &rows, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].m.id, mid);
    assert_int_equal(rows[0].m.capture_id, run);
    assert_string_equal(rows[0].m.kernel, "tsm2_v3");
    assert_string_equal(rows[0].m.family, "tsm2");
    assert_string_equal(rows[0].m.precision, "fp64");
    assert_int_equal(rows[0].m.m, 10240);
    assert_int_equal(rows[0].m.n, 16);
    assert_int_equal(rows[0].m.k, 10240);
    assert_string_equal(rows[0].m.params, "{\"t1\":128,\"t2\":16,\"t3\":32}");
    assert_int_equal(rows[0].m.grid[0], 80);
    assert_int_equal(rows[0].m.block[0], 128);
    assert_int_equal(rows[0].m.block[2], 1);
    assert_int_equal(rows[0].m.registers, 96);
    assert_int_equal(rows[0].m.smem_dynamic, 16384);
    assert_int_equal(rows[0].m.reps, 20);
    assert_true(rows[0].m.time_min_ns == 1000.5);
    assert_true(rows[0].m.time_median_ns == 1100.25);
    assert_true(rows[0].m.time_max_ns == 1300.125);
    assert_true(rows[0].m.flops == 2.0 * 10240 * 16 * 10240);
    assert_true(isnan(rows[0].m.bytes_l2));
    assert_true(rows[0].m.bytes_shared == 12345.0);
    assert_int_equal(rows[0].m.verified, 1);
    assert_true(rows[0].m.rel_error == 1.5e-15);
    assert_string_equal(rows[0].m.cache_state, "cold");
    assert_string_equal(rows[0].m.source, "suite");
    assert_int_equal(rows[0].m.launch_index, -1);
    assert_int_equal(rows[0].n_metrics, NSAMPLE_METRICS);
    for (i = 0; i < NSAMPLE_METRICS; i++) {
        assert_string_equal(rows[0].metrics[i].name, sample_metrics[i].name);
        assert_int_equal(rows[0].metrics[i].measurement_id, mid);
    }
    assert_string_equal(rows[0].metrics[0].raw_name,
                        "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second");
    assert_true(rows[0].metrics[0].value == 2.5e12);
    assert_string_equal(rows[0].metrics[1].unit, "%");
    assert_true(isnan(rows[0].metrics[3].value)); /* NaN -> NULL -> NaN */
    assert_null(rows[0].metrics[3].raw_name);
    assert_int_equal(rows[0].n_predictions, 2);
    assert_string_equal(rows[0].predictions[0].model, "roofline");
    assert_true(rows[0].predictions[0].predicted_time_ns == 960.0);
    assert_string_equal(rows[0].predictions[0].bound, "compute");
    assert_string_equal(rows[0].predictions[0].details, "{\"intensity\":0.6}");
    assert_int_equal(rows[0].predictions[0].capture_id, model);
    assert_string_equal(rows[0].predictions[1].model, "tsm2");
    assert_true(isnan(rows[0].predictions[1].predicted_time_ns));
    assert_null(rows[0].predictions[1].details);
    assert_string_equal(rows[1].m.kernel, "stmvb");
    assert_int_equal(rows[1].m.verified, -1);
    assert_true(isnan(rows[1].m.rel_error));
    assert_null(rows[1].m.params);
    assert_string_equal(rows[1].m.source, "profile");
    assert_int_equal(rows[1].m.launch_index, 7);
    assert_int_equal(rows[1].m.correlation_id, 0);
    assert_int_equal(rows[1].n_metrics, 0);
    assert_null(rows[1].metrics);
    assert_int_equal(rows[1].n_predictions, 0);
    db_free_measurements(rows, n);
    assert_int_equal(db_query_measurements(db, probe1, &rows, &n), RK_OK);
    assert_int_equal(n, 0);
    db_free_measurements(rows, n);
    assert_int_equal(db_query_measurements(db, 0, &rows, &n), RK_OK);
    assert_int_equal(n, 2);
    db_free_measurements(rows, n);
    assert_int_equal(db_query_predictions(db, run, &preds, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(preds[0].measurement_id, mid);
    db_free_predictions(preds, n);
    /* NaN metric is NULL in the file, not a number */
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric WHERE name = 'flop_count_dp'"
                                   " AND value IS NULL"),
                     1);

    /* capture list with counts */
    assert_int_equal(db_list_captures(db, &caps, &n), RK_OK);
    assert_int_equal(n, 4);
    assert_int_equal(caps[0].id, probe1);
    assert_int_equal(caps[0].kind, DB_CAPTURE_PROBE);
    assert_int_equal(caps[0].status, DB_DONE);
    assert_string_equal(caps[0].device_name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(caps[0].cmdline, "roofkit probe");
    assert_string_equal(caps[0].tool_version, "0.1.0");
    assert_non_null(caps[0].started_at);
    assert_non_null(caps[0].ended_at);
    assert_int_equal(caps[0].n_ceilings, 2);
    assert_int_equal(caps[0].n_latency_points, 3);
    assert_int_equal(caps[1].status, DB_INTERRUPTED);
    assert_string_equal(caps[1].note, "stopped by ^C");
    assert_null(caps[1].cmdline);
    assert_int_equal(caps[2].n_measurements, 2);
    assert_int_equal(caps[3].kind, DB_CAPTURE_MODEL);
    assert_int_equal(caps[3].device_id, 0);
    assert_null(caps[3].device_name);
    assert_int_equal(caps[3].n_predictions, 2);
    db_free_captures(caps, n);
    assert_int_equal(db_get_capture(db, run, &cap), RK_OK);
    assert_int_equal(cap.kind, DB_CAPTURE_RUN);
    db_capture_release(&cap);
    assert_int_equal(db_get_capture(db, 777, &cap), RK_ENODATA);
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_ANY, 0, &latest), RK_OK);
    assert_int_equal(latest, model);
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_PROBE, 0, &latest), RK_OK);
    assert_int_equal(latest, probe2); /* interrupted captures hold complete rows */
    assert_string_equal(db_capture_kind_name(DB_CAPTURE_TUNE), "tune");
    assert_string_equal(db_status_name(DB_FAILED), "failed");
    assert_string_equal(db_status_name((enum db_status)99), "?");
    db_close(db);

    /* everything reads back the same through a DB_RO connection */
    assert_int_equal(db_open(path, DB_RO, &db), RK_OK);
    assert_int_equal(db_query_measurements(db, 0, &rows, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].n_metrics, NSAMPLE_METRICS);
    db_free_measurements(rows, n);
    db_close(db);
    assert_false(side_exists(path, "-wal"));
}

/* ------------------------------------------------------------------- D12 */
static void d12_measurement_atomic(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_measurement m = sample_measurement("atomic");
    struct db_metric bad[NSAMPLE_METRICS];
    int64_t cap = 0, id = -5;
    const char *msg;
    (void)state;
    new_path(path, sizeof path, "d12");
    open_rw(path, &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_RUN, NULL, NULL, &cap), RK_OK);

    /* the last metric has no name: NOT NULL fails after the measurement was inserted */
    memcpy(bad, sample_metrics, sizeof bad);
    bad[NSAMPLE_METRICS - 1].name = NULL;
    stderr_begin();
    assert_int_equal(db_insert_measurement(db, cap, &m, bad, NSAMPLE_METRICS, &id), RK_EDB);
    msg = stderr_end();
    assert_int_equal(id, -5);
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "cannot store a measurement in database"));
    assert_non_null(strstr(msg, "NOT NULL"));
    /* a metric twice */
    memcpy(bad, sample_metrics, sizeof bad);
    bad[2].name = bad[1].name;
    stderr_begin();
    assert_int_equal(db_insert_measurement(db, cap, &m, bad, NSAMPLE_METRICS, NULL), RK_EDB);
    stderr_end();
    /* a bad cache state */
    m.cache_state = "lukewarm";
    stderr_begin();
    assert_int_equal(db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                     RK_EDB);
    stderr_end();
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), 0);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 0);

    /* and a good one goes through the same connection afterwards */
    open_rw(path, &db);
    m.cache_state = "warm";
    assert_int_equal(db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                     RK_OK);
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), NSAMPLE_METRICS);
}

/* ------------------------------------------------------------------- D13 */
static void d13_transactions_and_interrupt(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_ceiling c = sample_ceiling("bw_l1_read", 20000.0);
    struct db_measurement m = sample_measurement("tx");
    struct db_metric bad[NSAMPLE_METRICS];
    struct db_capture cap;
    int64_t probe = 0, run = 0;
    (void)state;
    new_path(path, sizeof path, "d13");
    open_rw(path, &db);

    /* inside db_begin, a failing measurement rolls back alone */
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_PROBE, NULL, NULL, &probe), RK_OK);
    assert_int_equal(db_begin(db), RK_OK);
    assert_int_equal(db_insert_ceiling(db, probe, &c, NULL), RK_OK);
    memcpy(bad, sample_metrics, sizeof bad);
    bad[0].name = NULL;
    stderr_begin();
    assert_int_equal(db_insert_measurement(db, probe, &m, bad, NSAMPLE_METRICS, NULL), RK_EDB);
    stderr_end();
    c.name = "bw_shared_read";
    assert_int_equal(db_insert_ceiling(db, probe, &c, NULL), RK_OK);
    assert_int_equal(db_commit(db), RK_OK);
    assert_int_equal(db_rollback(db), RK_OK); /* nothing open: no-op */
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling"), 2);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), 0);

    /* an explicit rollback drops the group */
    assert_int_equal(db_begin(db), RK_OK);
    assert_int_equal(db_insert_ceiling(db, probe, &c, NULL), RK_OK);
    assert_int_equal(db_rollback(db), RK_OK);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling"), 2);

    /* interrupted: committed rows stay, the open transaction goes */
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_RUN, NULL, NULL, &run), RK_OK);
    assert_int_equal(db_insert_measurement(db, run, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                     RK_OK);
    assert_int_equal(db_begin(db), RK_OK);
    assert_int_equal(db_insert_measurement(db, run, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                     RK_OK);
    assert_int_equal(db_capture_mark_interrupted(db, run), RK_OK);
    assert_int_equal(db_get_capture(db, run, &cap), RK_OK);
    assert_int_equal(cap.status, DB_INTERRUPTED);
    assert_non_null(cap.ended_at);
    assert_int_equal(cap.n_measurements, 1);
    db_capture_release(&cap);
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), NSAMPLE_METRICS);

    /* a process killed mid-transaction leaves only committed rows */
    {
        pid_t pid = fork();
        int status = 0;
        assert_true(pid >= 0);
        if (pid == 0) {
            struct db *cdb = NULL;
            if (db_open(path, DB_RW, &cdb) != RK_OK || db_begin(cdb) != RK_OK ||
                db_insert_measurement(cdb, run, &m, sample_metrics, NSAMPLE_METRICS, NULL) != RK_OK)
                _exit(3);
            raise(SIGKILL);
            _exit(4);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), NSAMPLE_METRICS);
}

/* ------------------------------------------------------------------- D18 */
static void d18_cascade(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-cascade");
    struct db_ceiling c = sample_ceiling("bw_dram_read", 3000.0);
    struct db_latency_point p = {4096, 128, 30, 15};
    struct db_measurement m = sample_measurement("cascade");
    struct db_prediction pr = {0, 0, 0, "roofline", 1.0, "dram", NULL, NAN};
    int64_t dev = 0, run = 0, other = 0, mid = 0;
    (void)state;
    new_path(path, sizeof path, "d18");
    open_rw(path, &db);
    assert_int_equal(db_device_upsert(db, &d, &dev), RK_OK);
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_RUN, NULL, NULL, &run), RK_OK);
    assert_int_equal(db_insert_ceiling(db, run, &c, NULL), RK_OK);
    assert_int_equal(db_insert_latency_points(db, run, &p, 1), RK_OK);
    assert_int_equal(db_insert_measurement(db, run, &m, sample_metrics, NSAMPLE_METRICS, &mid),
                     RK_OK);
    pr.measurement_id = mid;
    assert_int_equal(db_insert_prediction(db, &pr, NULL), RK_OK);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_IMPORT, NULL, NULL, &other), RK_OK);
    assert_int_equal(db_insert_measurement(db, other, &m, sample_metrics, 1, NULL), RK_OK);
    /* foreign keys are enforced: a row of a capture that does not exist is refused */
    stderr_begin();
    assert_int_equal(db_insert_ceiling(db, 9999, &c, NULL), RK_EDB);
    stderr_end();
    db_close(db);

    raw_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM device;");
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling"), 0);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM latency_point"), 0);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM prediction"), 0);
    raw_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM capture;");
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), 0);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 0);
}

/* ------------------------------------------------------------------- D22 */
static void d22_capture_gpus(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-d22");
    struct db_measurement m = sample_measurement("launch");
    struct db_capture cap;
    char **uuids = NULL;
    int n = -1;
    int64_t dev = 0, prof = 0;
    static const char *const params[] = {"{\"uuid\":\"GPU-bbbb\",\"device\":1}",
                                         "{\"device\":0,\"uuid\":\"GPU-aaaa\"}",
                                         "{\"uuid\":\"GPU-bbbb\"}", "{\"device\":0}", NULL};
    (void)state;
    new_path(path, sizeof path, "d22");
    open_rw(path, &db);
    assert_int_equal(db_device_upsert(db, &d, &dev), RK_OK);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_PROFILE, NULL, NULL, &prof), RK_OK);
    assert_int_equal(db_capture_gpu_uuids(db, prof, &uuids, &n), RK_OK);
    assert_int_equal(n, 0);
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        m.params = params[i];
        assert_int_equal(db_insert_measurement(db, prof, &m, NULL, 0, NULL), RK_OK);
    }
    assert_int_equal(db_capture_gpu_uuids(db, prof, &uuids, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_string_equal(uuids[0], "GPU-aaaa");
    assert_string_equal(uuids[1], "GPU-bbbb");
    rk_free_name_list(uuids, n);
    assert_int_equal(db_capture_set_device(db, prof, dev), RK_OK);
    assert_int_equal(db_get_capture(db, prof, &cap), RK_OK);
    assert_true(cap.device_id == dev);
    db_capture_release(&cap);
    stderr_begin();
    assert_int_equal(db_capture_set_device(db, 9999, dev), RK_EDB);
    stderr_end();
    db_close(db);
}

/* ------------------------------------------------------------------- D19 */
struct dump_state {
    int rows;
    int ncols;
    int saw_real, saw_null, saw_int, saw_text;
    char first_col[32];
    char kernel[32];
    int stop_after;
};

static int dump_cb(int ncols, const char *const *names, const char *const *values,
                   const enum db_type *types, void *user)
{
    struct dump_state *s = user;
    int i;
    s->rows++;
    s->ncols = ncols;
    snprintf(s->first_col, sizeof s->first_col, "%s", names[0]);
    for (i = 0; i < ncols; i++) {
        switch (types[i]) {
        case DB_NULL:
            s->saw_null += values[i] == NULL;
            break;
        case DB_INTEGER:
            s->saw_int++;
            break;
        case DB_REAL:
            s->saw_real++;
            if (strcmp(names[i], "time_median_ns") == 0 && strcmp(values[i], "1100.25") != 0)
                return 99;
            break;
        case DB_TEXT:
            s->saw_text++;
            if (strcmp(names[i], "kernel") == 0)
                snprintf(s->kernel, sizeof s->kernel, "%s", values[i]);
            break;
        }
    }
    return s->stop_after && s->rows >= s->stop_after ? 42 : 0;
}

static int columns_cb(int ncols, const char *const *names, const char *const *values,
                      const enum db_type *types, void *user)
{
    struct dump_state *s = user;
    if (values || types)
        return 99;
    s->rows++;
    s->ncols = ncols;
    snprintf(s->first_col, sizeof s->first_col, "%s", names[0]);
    return 0;
}

static void d19_dump(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct dump_state s;
    const char *msg;
    int i;
    (void)state;
    new_path(path, sizeof path, "d19");
    make_roofkit_db(path);
    assert_int_equal(db_open(path, DB_RO, &db), RK_OK);
    for (i = 0; db_table_name(i); i++) {
        memset(&s, 0, sizeof s);
        assert_int_equal(db_dump_table(db, db_table_name(i), dump_cb, &s), RK_OK);
    }
    assert_int_equal(i, 8);
    assert_null(db_table_name(-1));

    memset(&s, 0, sizeof s);
    assert_int_equal(db_dump_table(db, "measurement", dump_cb, &s), RK_OK);
    assert_int_equal(s.rows, 60);
    assert_int_equal(s.ncols, 41); /* times_ns: schema 3, nvtx: schema 4, energy: schema 5 */
    assert_string_equal(s.first_col, "id");
    assert_string_equal(s.kernel, "filler");
    assert_true(s.saw_real > 0 && s.saw_null > 0 && s.saw_int > 0 && s.saw_text > 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(db_dump_table(db, "metric", dump_cb, &s), RK_OK);
    assert_int_equal(s.rows, 60 * NSAMPLE_METRICS);
    memset(&s, 0, sizeof s);
    s.stop_after = 3;
    assert_int_equal(db_dump_table(db, "metric", dump_cb, &s), 42);
    assert_int_equal(s.rows, 3);

    /* db_dump_columns: the names alone, one call with no values, as many as the rows have */
    {
        struct dump_state cs;
        memset(&cs, 0, sizeof cs);
        assert_int_equal(db_dump_columns(db, "measurement", columns_cb, &cs), RK_OK);
        assert_int_equal(cs.rows, 1);
        assert_string_equal(cs.first_col, "id");
        memset(&s, 0, sizeof s);
        assert_int_equal(db_dump_table(db, "measurement", dump_cb, &s), RK_OK);
        assert_int_equal(cs.ncols, s.ncols);
    }

    /* only known names: user text never reaches SQL */
    stderr_begin();
    assert_int_equal(db_dump_table(db, "metric; DROP TABLE metric", dump_cb, &s), RK_EUSAGE);
    msg = stderr_end();
    assert_non_null(strstr(msg, "unknown table"));
    assert_non_null(strstr(msg, "device, capture, ceiling"));
    stderr_begin();
    assert_int_equal(db_dump_table(db, "sqlite_master", dump_cb, &s), RK_EUSAGE);
    stderr_end();
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 60 * NSAMPLE_METRICS);
}

/* D21: db_import_sql makes a new database from a dump, and refuses text that is
 * not a roofkit dump or tries to reach other files, leaving nothing behind. */
static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

static void d21_import(void **state)
{
    char src[300], sql[300], dst[300], bad[300], other[300], cmd[1024];
    struct db *db = NULL;
    struct db_capture *caps = NULL;
    unsigned char *before, *after;
    long nb, na;
    int n = 0;
    (void)state;
    new_path(src, sizeof src, "d21src");
    make_roofkit_db(src);
    snprintf(sql, sizeof sql, "%s/d21.sql", tmpdir);
    /* examples/ holds exactly this: the two pragmas, then sqlite3's dump */
    snprintf(cmd, sizeof cmd,
             "{ echo 'PRAGMA application_id=%d; PRAGMA user_version=%d;'; sqlite3 '%s' .dump; } "
             "> '%s'",
             DB_APPLICATION_ID, db_schema_version(), src, sql);
    assert_int_equal(system(cmd), 0);

    new_path(dst, sizeof dst, "d21dst");
    assert_int_equal(db_import_sql(dst, sql), RK_OK);
    assert_int_equal(db_open(dst, DB_RO, &db), RK_OK);
    assert_int_equal(db_list_captures(db, &caps, &n), RK_OK);
    assert_true(n >= 1);
    db_free_captures(caps, n);
    db_close(db);
    assert_int_equal(raw_int(dst, "SELECT count(*) FROM measurement"), 60);
    assert_int_equal(raw_int(dst, "SELECT count(*) FROM metric"), 60 * NSAMPLE_METRICS);

    /* an existing file is never overwritten */
    before = slurp(dst, &nb);
    stderr_begin();
    assert_int_equal(db_import_sql(dst, sql), RK_EDB);
    assert_non_null(strstr(stderr_end(), "already exists"));
    after = slurp(dst, &na);
    assert_int_equal(na, nb);
    assert_memory_equal(before, after, (size_t)nb);
    free(before);
    free(after);

    /* ATTACH would write another file: refused, nothing left */
    snprintf(other, sizeof other, "%s/d21-other.db", tmpdir);
    snprintf(bad, sizeof bad, "%s/d21-attach.sql", tmpdir);
    snprintf(cmd, sizeof cmd, "ATTACH '%s' AS x; CREATE TABLE x.t(a);", other);
    write_text(bad, cmd);
    new_path(dst, sizeof dst, "d21attach");
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EDB);
    assert_non_null(strstr(stderr_end(), "cannot load"));
    assert_false(exists(dst));
    assert_false(exists(other));

    /* valid SQL, but not a roofkit database */
    write_text(bad, "CREATE TABLE t(a); INSERT INTO t VALUES (1);");
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EDB);
    assert_non_null(strstr(stderr_end(), "not a roofkit database"));
    assert_false(exists(dst));

    /* a pragma a dump never holds */
    write_text(bad, "PRAGMA journal_mode=OFF;");
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EDB);
    stderr_end();
    assert_false(exists(dst));

    /* a transaction left open, and text that is not SQL */
    write_text(bad, "BEGIN; CREATE TABLE t(a);");
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EDB);
    assert_non_null(strstr(stderr_end(), "never committed"));
    assert_false(exists(dst));
    write_text(bad, "this is not SQL");
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EDB);
    stderr_end();
    assert_false(exists(dst));

    /* a missing SQL file */
    snprintf(bad, sizeof bad, "%s/d21-missing.sql", tmpdir);
    stderr_begin();
    assert_int_equal(db_import_sql(dst, bad), RK_EIO);
    assert_non_null(strstr(stderr_end(), "cannot read"));
    assert_false(exists(dst));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(d01_create_and_reopen),
        cmocka_unit_test(d02_migrate_from_zero),
        cmocka_unit_test(d03_refuse_text),
        cmocka_unit_test(d04_refuse_random),
        cmocka_unit_test(d05_refuse_truncated),
        cmocka_unit_test(d06_refuse_other_app),
        cmocka_unit_test(d07_refuse_newer),
        cmocka_unit_test(d08_refuse_corrupt),
        cmocka_unit_test(d09_ro_never_creates),
        cmocka_unit_test(d10_refuse_readonly_file),
        cmocka_unit_test(d11_roundtrip),
        cmocka_unit_test(d12_measurement_atomic),
        cmocka_unit_test(d13_transactions_and_interrupt),
        cmocka_unit_test(d18_cascade),
        cmocka_unit_test(d19_dump),
        cmocka_unit_test(d21_import),
        cmocka_unit_test(d22_capture_gpus),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
