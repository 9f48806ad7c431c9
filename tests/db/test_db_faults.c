/*
 * test_db_faults.c - db/ under faults: atomic rows when allocations fail or the disk fills,
 * a lock held past the busy timeout, two processes writing one file, a failed creation.
 *
 * Case map:
 *   D14 fault injection: SQLite allocations fail at each step in turn; only
 *       complete measurements are ever stored
 *   D15 fault injection: disk full (max_page_count) mid-run; complete rows only
 *   D16 locked past the busy timeout gives RK_EDB "locked by another process"
 *   D17 two processes (fork) write 200 measurements each into one new file
 *   D20 fault injection: allocations fail at each step of creating a database;
 *       a failed open leaves a file that the next open completes, never half a
 *       schema
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

/* ------------------------------------------------------------------- D14 */

/* SQLite's allocator, wrapped so that allocation number `fail_at` fails. */
static sqlite3_mem_methods mem_real;
static long alloc_count;
static long fail_at;    /* 0 = never */
static int fail_sticky; /* once failing, every later allocation fails too */
static long fail_hits;

static int should_fail(void)
{
    if (fail_at == 0)
        return 0;
    alloc_count++;
    if (alloc_count == fail_at || (fail_sticky && alloc_count > fail_at)) {
        fail_hits++;
        return 1;
    }
    return 0;
}

static void *fm_malloc(int n)
{
    return should_fail() ? NULL : mem_real.xMalloc(n);
}

static void *fm_realloc(void *p, int n)
{
    return should_fail() ? NULL : mem_real.xRealloc(p, n);
}

static void install_fault_malloc(void)
{
    sqlite3_mem_methods m;
    sqlite3_shutdown();
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &mem_real) != SQLITE_OK)
        return;
    m = mem_real;
    m.xMalloc = fm_malloc;
    m.xRealloc = fm_realloc;
    sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
    sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0); /* every allocation goes through us */
    sqlite3_initialize();
}

static void d14_fault_malloc(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_measurement m = sample_measurement("fault");
    int64_t cap = 0;
    long ok = 0, failed = 0;
    int sticky;
    (void)state;
    if (!mem_real.xMalloc)
        skip();
    new_path(path, sizeof path, "d14");
    open_rw(path, &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_RUN, NULL, NULL, &cap), RK_OK);
    for (sticky = 0; sticky <= 1; sticky++) {
        long at;
        for (at = 1; at < 10000; at++) {
            int rc;
            alloc_count = 0;
            fail_hits = 0;
            fail_sticky = sticky;
            stderr_begin();
            fail_at = at;
            rc = db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL);
            fail_at = 0;
            stderr_end();
            if (rc == RK_OK)
                ok++;
            else
                failed++;
            /* Either the whole measurement is there or none of it. */
            assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), ok);
            assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), ok * NSAMPLE_METRICS);
            if (fail_hits == 0)
                break; /* the insert ran past every allocation */
        }
        assert_true(at < 10000);
    }
    assert_true(failed > 0);
    print_message("d14: %ld allocation failures injected, %ld inserts succeeded\n", failed, ok);
    db_close(db);
}

/* ------------------------------------------------------------------- D15 */
static void d15_disk_full(void **state)
{
    char path[300];
    struct db *db = NULL;
    struct db_measurement m = sample_measurement("full");
    int64_t cap = 0;
    long ok = 0;
    int rc = RK_OK;
    const char *msg = "";
    int i;
    (void)state;
    new_path(path, sizeof path, "d15");
    open_rw(path, &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_RUN, NULL, NULL, &cap), RK_OK);
    /* The connection may grow the file by only a few pages: then the disk is "full". */
    assert_int_equal(sqlite3_exec(db->h, "PRAGMA max_page_count = 12", NULL, NULL, NULL),
                     SQLITE_OK);
    for (i = 0; i < 10000; i++) {
        stderr_begin();
        rc = db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL);
        msg = stderr_end();
        if (rc != RK_OK)
            break;
        ok++;
    }
    assert_int_equal(rc, RK_EDB);
    assert_non_null(strstr(msg, "the disk is full"));
    assert_true(ok > 0);
    assert_int_equal(db_capture_end(db, cap, DB_FAILED), RK_OK);
    db_close(db);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement"), ok);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), ok * NSAMPLE_METRICS);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture WHERE status = 'failed'"), 1);
}

/* ------------------------------------------------------------------- D16 */
static void d16_locked(void **state)
{
    char path[300];
    struct db *a = NULL, *b = NULL;
    struct db_ceiling c = sample_ceiling("bw_dram_write", 2900.0);
    int64_t cap = 0;
    const char *msg;
    (void)state;
    new_path(path, sizeof path, "d16");
    open_rw(path, &a);
    open_rw(path, &b);
    assert_int_equal(db_capture_begin(a, 0, DB_CAPTURE_PROBE, NULL, NULL, &cap), RK_OK);
    assert_int_equal(db_begin(a), RK_OK); /* a holds the write lock */
    assert_int_equal(db_set_busy_timeout(b, 50), RK_OK);
    stderr_begin();
    assert_int_equal(db_insert_ceiling(b, cap, &c, NULL), RK_EDB);
    msg = stderr_end();
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "is locked by another process; retry or use --db"));
    /* readers are not blocked by a writer (WAL) */
    {
        struct db_capture *caps = NULL;
        int n = 0;
        assert_int_equal(db_list_captures(b, &caps, &n), RK_OK);
        assert_int_equal(n, 1);
        db_free_captures(caps, n);
    }
    assert_int_equal(db_commit(a), RK_OK);
    assert_int_equal(db_insert_ceiling(b, cap, &c, NULL), RK_OK);
    db_close(a);
    db_close(b);
}

/* ------------------------------------------------------------------- D17 */
#define ROWS_PER_WRITER 200

static int writer(const char *path, int who)
{
    struct db *db = NULL;
    struct db_measurement m = sample_measurement(who ? "writer_b" : "writer_a");
    int64_t cap = 0;
    int i;
    int rc = db_open(path, DB_RW, &db);
    if (rc == RK_OK)
        rc = db_capture_begin(db, 0, DB_CAPTURE_RUN, "writer", NULL, &cap);
    for (i = 0; rc == RK_OK && i < ROWS_PER_WRITER; i++) {
        m.m = i;
        rc = db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL);
    }
    if (rc == RK_OK)
        rc = db_capture_end(db, cap, DB_DONE);
    db_close(db);
    return rc;
}

static void d17_two_processes(void **state)
{
    char path[300];
    pid_t pids[2];
    int w;
    (void)state;
    new_path(path, sizeof path, "d17"); /* new: both processes also race to create it */
    for (w = 0; w < 2; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0)
            _exit(writer(path, w));
    }
    for (w = 0; w < 2; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE kernel = 'writer_a'"),
                     ROWS_PER_WRITER);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE kernel = 'writer_b'"),
                     ROWS_PER_WRITER);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"),
                     2 * ROWS_PER_WRITER * NSAMPLE_METRICS);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture WHERE status = 'done'"), 2);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
}

/* ------------------------------------------------------------------- D20 */
static void d20_fault_open(void **state)
{
    char path[300];
    struct db *db = NULL;
    long at, failed = 0;
    (void)state;
    if (!mem_real.xMalloc)
        skip();
    /*
     * Every allocation of the open itself, then every 37th of the schema's creation
     * (five migration steps: ~21000 allocations, each run costs fsyncs: a full sweep takes a
     * minute).
     */
    for (at = 1; at < 60000; at += at < 150 ? 1 : 37) {
        int rc;
        new_path(path, sizeof path, "d20");
        alloc_count = 0;
        fail_hits = 0;
        fail_sticky = 0;
        stderr_begin();
        fail_at = at;
        rc = db_open(path, DB_RW, &db);
        fail_at = 0;
        stderr_end();
        if (rc == RK_OK) {
            db_close(db);
        } else {
            assert_null(db);
            failed++;
            /* whatever was left, the next open makes it a complete database */
            if (exists(path)) {
                open_rw(path, &db);
                db_close(db);
            }
        }
        if (exists(path)) {
            assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
            assert_int_equal(
                raw_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 8);
        }
        unlink(path);
        if (fail_hits == 0)
            break;
    }
    assert_true(at < 60000);
    assert_true(failed > 0);
    print_message("d20: %ld failed opens, each completed by the next one\n", failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(d14_fault_malloc), cmocka_unit_test(d15_disk_full),
        cmocka_unit_test(d16_locked),       cmocka_unit_test(d17_two_processes),
        cmocka_unit_test(d20_fault_open),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], install_fault_malloc);
}
