/*
 * test_nvtx_column.c - the schema step that adds measurement.nvtx (the NVTX ranges of a profiled
 * launch, `roofkit profile --nvtx`): a file of the version before it migrated in place, and the
 * column carried by inserts, queries, journals and merge. Label `unit`.
 *
 * Case map:
 *   V1 a file of the previous schema version (every step but the last run raw, a profile
 *      capture with two launches in it) is refused read-only as older, then migrated by a
 *      read-write open: user_version is this build's, every row kept with its id, nvtx NULL on
 *      the old rows
 *   V2 nvtx round-trips: a launch stored with a path (escapes and a second domain in it) and
 *      one without read back the same, NULL as NULL; through a journal too
 *   V3 roofkit merge copies nvtx with its measurement
 */
#define _POSIX_C_SOURCE 200809L
#include "db_fixture.h"

#include "common.h"
#include "internal.h" /* white box: the migration steps' text (dbi_migrations) */

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char path_a[] = "outer/in\\/ner/;phase;Solver@assemble/";

/* A file of the schema before the last step, with a profile capture and two launches. */
static void make_previous(const char *path)
{
    char sql[160];
    for (int i = 0; i < dbi_nmigrations - 1; i++)
        raw_exec(path, dbi_migrations[i]);
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             DB_APPLICATION_ID, dbi_nmigrations - 1);
    raw_exec(path, sql);
    raw_exec(path, "INSERT INTO capture (id, kind, status, cmdline, started_at, uid) VALUES"
                   " (5, 'profile', 'done', 'roofkit profile -- ./app', '2026-01-01T00:00:00Z',"
                   " '0123456789abcdef0123456789abcdef');"
                   "INSERT INTO measurement (id, capture_id, kernel, reps, time_min_ns,"
                   " time_median_ns, time_max_ns, cache_state, source, launch_index) VALUES"
                   " (11, 5, 'triad', 1, 100, 100, 100, 'warm', 'profile', 0),"
                   " (12, 5, 'scale', 1, 90, 90, 90, 'warm', 'profile', 1);");
}

static struct db_measurement launch(const char *kernel, const char *nvtx)
{
    struct db_measurement m = sample_measurement(kernel);
    m.source = "profile";
    m.cache_state = "warm";
    m.nvtx = nvtx;
    return m;
}

/* A new database at a fresh path (path gets it) with a profile capture (*cap) holding a launch
 * with path_a and one without ranges. */
static struct db *two_launches(const char *stem, char *path, size_t size, int64_t *cap)
{
    struct db *db = NULL;
    open_rw(new_path(path, size, stem), &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_PROFILE, "roofkit profile", "t", cap),
                     RK_OK);
    struct db_measurement a = launch("triad", path_a), b = launch("scale", NULL);
    assert_int_equal(db_insert_measurement(db, *cap, &a, NULL, 0, NULL), RK_OK);
    assert_int_equal(db_insert_measurement(db, *cap, &b, NULL, 0, NULL), RK_OK);
    return db;
}

/* ------------------------------------------------------------------- V1 */

static void v1_migrate(void **state)
{
    (void)state;
    char path[512];
    struct db *db = NULL;
    new_path(path, sizeof path, "v1");
    make_previous(path);
    expect_refused(path, DB_RO, "older than this roofkit");
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), dbi_nmigrations);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE id IN (11, 12) AND "
                                   "nvtx IS NULL"),
                     2);
    assert_int_equal(db_open(path, DB_RO, &db), RK_OK);
    struct db_measurement_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_query_measurements(db, 5, &rows, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].m.id, 11);
    assert_null(rows[0].m.nvtx);
    db_free_measurements(rows, n);
    db_close(db);
}

/* ------------------------------------------------------------------- V2 */

/* The nvtx of capture cap's measurements, in id order, into got[0..n). */
static int nvtx_of(struct db *db, int64_t cap, char got[][64], int max)
{
    struct db_measurement_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_query_measurements(db, cap, &rows, &n), RK_OK);
    for (int i = 0; i < n && i < max; i++)
        snprintf(got[i], 64, "%s", rows[i].m.nvtx ? rows[i].m.nvtx : "(null)");
    db_free_measurements(rows, n);
    return n;
}

static void v2_round_trip(void **state)
{
    (void)state;
    char path[512], dir[600], jpath[1024], got[4][64];
    int64_t cap = 0;
    int fd = -1;
    struct db *db = two_launches("v2", path, sizeof path, &cap);
    struct db_measurement a = launch("triad", path_a), b = launch("scale", NULL);
    /* and through a journal, as roofkit profile stores a program's launches */
    snprintf(dir, sizeof dir, "%s.journal", path);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(db_journal_create(dir, cap, jpath, sizeof jpath, &fd), RK_OK);
    assert_int_equal(db_journal_append(fd, &a, NULL, 0), RK_OK);
    assert_int_equal(db_journal_append(fd, &b, NULL, 0), RK_OK);
    close(fd);
    struct db_journal_stats st;
    assert_int_equal(db_journal_fold(db, cap, jpath, &st), RK_OK);
    assert_int_equal(nvtx_of(db, cap, got, 4), 4);
    assert_string_equal(got[0], path_a);
    assert_string_equal(got[1], "(null)");
    assert_string_equal(got[2], path_a);
    assert_string_equal(got[3], "(null)");
    db_close(db);
}

/* ------------------------------------------------------------------- V3 */

static void v3_merge(void **state)
{
    (void)state;
    char in[512], out[512], got[2][64];
    int64_t cap = 0;
    struct db *db = two_launches("v3-in", in, sizeof in, &cap);
    assert_int_equal(db_capture_end(db, cap, DB_DONE), RK_OK);
    db_close(db);
    open_rw(new_path(out, sizeof out, "v3-out"), &db);
    struct db_merge_stats st;
    assert_int_equal(db_merge_check(in, out), RK_OK);
    assert_int_equal(db_merge(db, in, &st), RK_OK);
    assert_int_equal(st.captures_added, 1);
    assert_int_equal(nvtx_of(db, 0, got, 2), 2);
    assert_string_equal(got[0], path_a);
    assert_string_equal(got[1], "(null)");
    db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v1_migrate),
        cmocka_unit_test(v2_round_trip),
        cmocka_unit_test(v3_merge),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
