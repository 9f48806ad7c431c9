/*
 * merge.c - `roofkit merge OUT.db IN.db...`: one database from the files of many ranks and
 * nodes (`mpirun ... roofkit --db 'job-%h-%r.db' all`, then `roofkit merge job.db job-*.db`).
 * db/ does the merging (db_merge_check, db_merge); this file checks the command line, checks
 * every input before OUT is created or written, merges them one by one, and prints the sum.
 *
 * OUT is positional, so the common --db is refused here rather than ignored: with it a user
 * could believe it names the output while the first input became OUT. (main keeps no flag
 * for "--db given", so a --db naming the default, roofkit.db, passes unnoticed.) An input that
 * fails the checks stops the command before anything is written; an input that fails while merging
 * (disk full) leaves OUT with the inputs before it, each complete, and running the same
 * command again adds only what is missing (captures already present are skipped).
 */
#include "cli.h"
#include "common.h"
#include "db.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* "s" when n is not 1. */
static const char *plural(int64_t n)
{
    return n == 1 ? "" : "s";
}

int cmd_merge(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {{NULL, 0, NULL, 0}};
    struct db_merge_stats sum = {0};
    struct db *out = NULL;
    const char *out_path;
    int rc = RK_OK, n, done = 0;

    rk_getopt_reset();
    if (rk_getopt(argc, argv, ":", opts) != -1)
        return RK_EUSAGE; /* merge has no options of its own: the message is printed */
    if (strcmp(ctx->db_path, "roofkit.db") != 0)
        return rk_error(RK_EUSAGE,
                        "merge takes its output database as its first argument, not --db; run "
                        "'roofkit merge OUT.db IN.db...'");
    if (argc - optind < 1)
        return rk_error(RK_EUSAGE, "merge needs an output database and at least one input: "
                                   "'roofkit merge OUT.db IN.db...'");
    out_path = argv[optind];
    n = argc - optind - 1;
    if (n < 1)
        return rk_error(RK_EUSAGE,
                        "merge needs at least one input database after '%s': 'roofkit merge "
                        "OUT.db IN.db...'",
                        out_path);

    for (int i = 0; i < n; i++) {
        rk_progress("checking", i, n);
        if ((rc = db_merge_check(argv[optind + 1 + i], out_path)) != RK_OK)
            return rc;
    }
    rk_progress_end();
    if ((rc = db_open(out_path, DB_RW, &out)) != RK_OK)
        return rc;
    for (int i = 0; i < n && rc == RK_OK; i++) {
        const char *in = argv[optind + 1 + i];
        struct db_merge_stats st;
        if (rk_interrupted)
            break; /* between inputs: each is merged whole or not at all */
        rk_progress("merging", i, n);
        if ((rc = db_merge(out, in, &st)) != RK_OK)
            break;
        done++;
        if (st.upgraded)
            rk_info("'%s' has an older schema: merged from an upgraded copy, the file unchanged",
                    in);
        sum.captures_added += st.captures_added;
        sum.captures_present += st.captures_present;
        sum.devices_added += st.devices_added;
        sum.devices_joined += st.devices_joined;
        sum.rows_added += st.rows_added;
    }
    rk_progress_end();
    db_close(out);
    if (rc != RK_OK && done > 0)
        rk_info("'%s' holds the %d input%s merged before the failure; run the same command again "
                "once it is fixed (what is there already is skipped)",
                out_path, done, done == 1 ? "" : "s");
    if (rc == RK_OK)
        rk_info("merged %d input%s into '%s': %lld capture%s added, %lld already present; %lld "
                "device%s added, %lld joined; %lld row%s added",
                done, done == 1 ? "" : "s", out_path, (long long)sum.captures_added,
                plural(sum.captures_added), (long long)sum.captures_present,
                (long long)sum.devices_added, plural(sum.devices_added),
                (long long)sum.devices_joined, (long long)sum.rows_added, plural(sum.rows_added));
    return rc;
}
