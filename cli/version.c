/*
 * version.c - `roofkit --version`: roofkit's version and, for each library whose version
 * decides what roofkit can do, the one it was built with (the headers' macros) beside the one
 * it runs with (the library's own answer): the CUDA runtime, the CUDA driver (the newest CUDA
 * version it supports; none on a machine without one, which is no error), CUPTI and SQLite.
 * A bug report that quotes this output says which build met which machine.
 */
#include "cli.h"
#include "common.h"

#include <cuda_runtime_api.h>
#include <cupti_version.h>
#include <sqlite3.h>
#include <stdio.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

/* 13000 -> "13.0" */
static void cuda_version(char *out, size_t len, int v)
{
    snprintf(out, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

int rk_print_version(FILE *to)
{
    char built[16], runs[16];
    int rt = 0, drv = 0;
    uint32_t cupti = 0;

    fprintf(to, "roofkit %s\n", RK_VERSION);
    cuda_version(built, sizeof built, CUDART_VERSION);
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess && rt > 0)
        cuda_version(runs, sizeof runs, rt);
    else
        snprintf(runs, sizeof runs, "unknown");
    fprintf(to, "CUDA runtime %s (built with %s)\n", runs, built);
    if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) {
        cuda_version(runs, sizeof runs, drv);
        fprintf(to, "CUDA driver %s (the newest CUDA it supports)\n", runs);
    } else {
        fprintf(to, "CUDA driver none found (roofkit needs one to measure; listings, model, "
                    "report and export work without)\n");
    }
    if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS)
        fprintf(to, "CUPTI API %u (built with %u)\n", (unsigned)cupti, (unsigned)CUPTI_API_VERSION);
    else
        fprintf(to, "CUPTI API unknown (built with %u)\n", (unsigned)CUPTI_API_VERSION);
    fprintf(to, "SQLite %s (built with %s)\n", sqlite3_libversion(), SQLITE_VERSION);
    return ferror(to) ? rk_error(RK_EIO, "cannot write the version; check standard output") : RK_OK;
}
