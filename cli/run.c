/* cli/run.c - `roofkit run`: placeholder until the kernel-suite issue lands. */
#include "cli.h"
#include "common.h"

int cmd_run(int argc, char **argv, struct rk_ctx *ctx)
{
    (void)argc;
    (void)argv;
    (void)ctx;
    return rk_error(RK_ENOTYET, "'run' is not available in this version yet (kernel-suite issue)");
}
