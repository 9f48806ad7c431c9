/*
 * report_fixture.c - writes the test fixture's database (fixture.c) and its report:
 *   report_fixture DIR   ->  DIR/fixture.db and DIR/report/
 * Used by browser.sh, and by hand to look at a report without a GPU.
 */
#include <stdio.h>
#include <unistd.h>

#include "common.h"
#include "db.h"
#include "fixture.h"
#include "report.h"

int main(int argc, char **argv)
{
    char dbp[1024], out[1024];
    struct db *db = NULL;
    int rc;
    if (argc != 2) {
        fprintf(stderr, "usage: report_fixture DIR\n");
        return RK_EUSAGE;
    }
    snprintf(dbp, sizeof dbp, "%s/fixture.db", argv[1]);
    snprintf(out, sizeof out, "%s/report", argv[1]);
    unlink(dbp);
    if ((rc = fixture_make_db(dbp, 0)) != RK_OK || (rc = db_open(dbp, DB_RO, &db)) != RK_OK)
        return rc;
    struct report_opts o = {.out_dir = out, .label = "test fixture: invented H100-like data"};
    rc = report_write(db, &o);
    db_close(db);
    return rc;
}
