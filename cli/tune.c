/*
 * tune.c - `roofkit tune tsm2|ism2`: parses and checks the problem; the sweep on the
 * GPU and the regret come with the model-validation issue, so until then it says
 * so and exits with RK_ENOTYET. `roofkit model explain` already shows the model's
 * choice without a GPU.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"

#include <getopt.h>
#include <string.h>

int cmd_tune(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"m", required_argument, NULL, 'm'},
        {"n", required_argument, NULL, 'n'},
        {"k", required_argument, NULL, 'k'},
        {"precision", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    long m = 0, n = 0, k = 0;
    int c;
    (void)ctx;
    rk_getopt_reset();
    /* argv[0] is "tune", so rk_getopt's messages name the command; GNU getopt moves
     * the family ("tsm2"/"ism2") behind the options. */
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'm':
            if (rk_opt_long("m", optarg, 1, 1L << 40, &m) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'n':
            if (rk_opt_long("n", optarg, 1, 1L << 40, &n) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'k':
            if (rk_opt_long("k", optarg, 1, 1L << 40, &k) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'p':
            if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "fp64") != 0)
                return rk_error(RK_EUSAGE, "option '--precision' takes fp32 or fp64, not '%s'",
                                optarg);
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind >= argc || (strcmp(argv[optind], "tsm2") != 0 && strcmp(argv[optind], "ism2") != 0))
        return rk_error(RK_EUSAGE, "tune needs 'tsm2' or 'ism2', e.g. 'roofkit tune tsm2 --m 10240 "
                                   "--n 8 --k 10240'");
    if (optind + 1 < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help tune'",
                        argv[optind + 1]);
    if (!m || !n || !k)
        return rk_error(RK_EUSAGE, "tune needs --m, --n and --k; see 'roofkit help tune'");
    return rk_error(RK_ENOTYET, "'tune' is not available in this version yet (model-validation "
                                "issue); 'roofkit model explain' shows the model's choice");
}
