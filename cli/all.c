/*
 * all.c - `roofkit all`: the main job (probe, the default suite, model, report).
 * Its steps come with the probes, kernel-suite, model-validation and reports
 * issues; until they exist it says so.
 */
#include "cli.h"
#include "common.h"

#include <string.h>

int cmd_all(int argc, char **argv, struct rk_ctx *ctx)
{
    (void)ctx;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            i++;
            continue;
        }
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help all'", argv[i]);
    }
    return rk_error(RK_ENOTYET, "'all' is not available in this version yet: it needs probe, run, "
                                "model and report (their issues)");
}
