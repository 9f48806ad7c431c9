/* cli/probe.c - `roofkit probe`: placeholder until the probes issue lands. */
#include "cli.h"
#include "common.h"

int cmd_probe(int argc, char **argv, struct rk_ctx *ctx)
{
    (void)argc;
    (void)argv;
    (void)ctx;
    return rk_error(RK_ENOTYET, "'probe' is not available in this version yet (probes issue)");
}
