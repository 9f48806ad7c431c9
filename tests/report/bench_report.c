/*
 * bench_report.c - the report's speed target: a database of N measurements
 * (default 10,000, built through db/ with fixture.c), then report_write() timed
 * alone. Prints the time; not a test (a timed test would fail on a loaded machine).
 *   bench_report [N] [DIR]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "db.h"
#include "fixture.h"
#include "report.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    char dir[256], dbp[300], out[300];
    struct db *db = NULL;
    int rc;
    if (argc > 2)
        snprintf(dir, sizeof dir, "%s", argv[2]);
    else {
        snprintf(dir, sizeof dir, "/tmp/rk-bench-report-XXXXXX");
        if (!mkdtemp(dir))
            return 1;
    }
    snprintf(dbp, sizeof dbp, "%s/bench.db", dir);
    snprintf(out, sizeof out, "%s/report", dir);
    unlink(dbp);
    double t0 = rk_now_s();
    if ((rc = fixture_make_db(dbp, n)) != RK_OK || (rc = db_open(dbp, DB_RO, &db)) != RK_OK)
        return rc;
    double t1 = rk_now_s();
    struct report_opts o = {out, 0, "benchmark data", NULL, NULL, NULL};
    rk_set_quiet(1);
    rc = report_write(db, &o);
    double t2 = rk_now_s();
    db_close(db);
    printf("database of %d+ measurements built in %.2f s; report_write: %.3f s (rc %d) -> %s\n", n,
           t1 - t0, t2 - t1, rc, out);
    return rc;
}
