/*
 * report.c - `roofkit report`: checks the command line, opens the database
 * read-only and writes the report directory through report/ (report_write).
 * Bad input is refused before the database is opened: nothing is read or written.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "report.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    struct report_opts ro = {"roofkit-report", REPORT_ALL, NULL, NULL, NULL, NULL};
    char *out_dir = NULL;
    int c, rc;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                return rk_error(RK_EUSAGE, "option '--out' needs a directory name");
            ro.out_dir = optarg;
            break;
        case 'f':
            if (report_parse_formats(optarg, &ro.formats) != RK_OK)
                return rk_error(RK_EUSAGE, "option '--format' takes html,md,csv, not '%s'", optarg);
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help report'",
                        argv[optind]);
    if ((rc = rk_ctx_expand(ctx, ro.out_dir, &out_dir)) != RK_OK)
        return rc;
    ro.out_dir = out_dir;
    if ((rc = rk_ctx_open_db(ctx, 0)) == RK_OK)
        rc = report_write(ctx->db, &ro);
    free(out_dir);
    return rc;
}
