/*
 * test_report_nvtx.c - the report's "NVTX range" column: the profiled kernels' table shows the
 * NVTX ranges each launch ran in (`roofkit profile --nvtx`, measurement.nvtx), so that the
 * launches of one range can be taken together; a database without ranges keeps its table as it
 * was. Label `unit`.
 *
 * Case map:
 *   T1 the fixture's profiled launches, half of them given ranges: measurements-other.csv has
 *      the column, each row its launch's ranges (empty for none), in the database's order
 *   T2 the fixture as it is (no ranges): no such column
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common.h"
#include "db.h"
#include "files.h"
#include "fixture.h"
#include "report.h"

static char tmp[256];

/* The report's CSV tables of the fixture database `name`, its profiled launches given ranges
 * when ranges is set: the profiled kernels' table read into c. */
static void report_of(const char *name, int ranges, struct csv *c)
{
    char db_path[512], out[512], csv[600];
    struct db *db = NULL;
    snprintf(db_path, sizeof db_path, "%s/%s.db", tmp, name);
    snprintf(out, sizeof out, "%s/%s-report", tmp, name);
    assert_int_equal(fixture_make_db(db_path, 0), RK_OK);
    if (ranges) {
        sqlite3 *h = NULL;
        assert_int_equal(sqlite3_open(db_path, &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h,
                                      "UPDATE measurement SET nvtx = 'step/forward/;Solver@"
                                      "assemble/' WHERE source = 'profile' AND id % 2 = 0",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(h);
    }
    assert_int_equal(db_open(db_path, DB_RO, &db), RK_OK);
    struct report_opts o = {.out_dir = out, .formats = REPORT_CSV};
    assert_int_equal(report_write(db, &o), RK_OK);
    db_close(db);
    snprintf(csv, sizeof csv, "%s/csv/measurements-other.csv", out);
    assert_int_equal(csv_read(csv, c), 0);
}

/* T1 */
static void t1_column(void **state)
{
    (void)state;
    struct csv c;
    report_of("ranges", 1, &c);
    assert_int_equal(c.nrows - 1, FIXTURE_PROFILED);
    assert_non_null(csv_opt(&c, 0, "NVTX range"));
    int with = 0;
    for (int r = 1; r < c.nrows; r++) {
        long id = atol(csv_get(&c, r, "id"));
        const char *v = csv_get(&c, r, "NVTX range");
        assert_string_equal(v, id % 2 == 0 ? "step/forward/;Solver@assemble/" : "");
        with += *v != '\0';
    }
    assert_true(with > 0 && with < FIXTURE_PROFILED);
    csv_free(&c);
}

/* T2 */
static void t2_none(void **state)
{
    (void)state;
    struct csv c;
    report_of("plain", 0, &c);
    assert_null(csv_opt(&c, 0, "NVTX range"));
    csv_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t1_column),
        cmocka_unit_test(t2_none),
    };
    const char *base = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/roofkit-test-report-nvtx-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmp))
        return 1;
    rk_set_quiet(1);
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp);
    }
    return failed;
}
