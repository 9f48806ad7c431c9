/*
 * profile.c - `roofkit profile -- PROGRAM`: parses and checks the command line;
 * the CUPTI injection library that records the launches comes with the collect
 * issue, so until then it says so and exits with RK_ENOTYET.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"

#include <getopt.h>
#include <string.h>

int cmd_profile(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"metrics", required_argument, NULL, 'm'},
        {"kernel", required_argument, NULL, 'k'},
        {"launch-skip", required_argument, NULL, 's'},
        {"launch-count", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    long skip = 0, count = 0;
    int c;
    (void)ctx;
    rk_getopt_reset();
    /* "+" stops at the first non-option: PROGRAM's own options are not ours. */
    while ((c = rk_getopt(argc, argv, "+:", opts)) != -1) {
        switch (c) {
        case 'm':
        case 'k':
            if (!*optarg)
                return rk_error(RK_EUSAGE, "option needs a non-empty value; see 'roofkit help profile'");
            break;
        case 's':
            if (rk_opt_long("launch-skip", optarg, 0, 1L << 40, &skip) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'c':
            if (rk_opt_long("launch-count", optarg, 1, 1L << 40, &count) != RK_OK)
                return RK_EUSAGE;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind >= argc)
        return rk_error(RK_EUSAGE, "no program to profile; write 'roofkit profile -- PROGRAM [ARGS...]'");
    return rk_error(RK_ENOTYET,
                    "'profile' is not available in this version yet (it comes with the collect issue)");
}
