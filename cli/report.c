/*
 * report.c - `roofkit report`: parses and checks the command line; the report
 * itself comes with the reports issue.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"

#include <getopt.h>
#include <string.h>

int cmd_report(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    int c;
    (void)ctx;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                return rk_error(RK_EUSAGE, "option '--out' needs a directory name");
            break;
        case 'f': {
            char **names;
            int n, bad = 0;
            if (rk_parse_name_list(optarg, &names, &n) != RK_OK)
                return rk_error(RK_EUSAGE, "option '--format' takes html,md,csv, not '%s'", optarg);
            for (int i = 0; i < n; i++)
                if (strcmp(names[i], "html") && strcmp(names[i], "md") && strcmp(names[i], "csv"))
                    bad = 1;
            rk_free_name_list(names, n);
            if (bad)
                return rk_error(RK_EUSAGE, "option '--format' takes html,md,csv, not '%s'", optarg);
            break;
        }
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help report'", argv[optind]);
    return rk_error(RK_ENOTYET, "'report' is not available in this version yet (reports issue)");
}
