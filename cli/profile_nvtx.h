/*
 * profile_nvtx.h - `roofkit profile`'s NVTX options and its profiler-API option, in Nsight
 * Compute's names and syntax (profile_nvtx.c): what profile.c asks to parse, check and hand to
 * the injection library.
 */
#ifndef RK_CLI_PROFILE_NVTX_H
#define RK_CLI_PROFILE_NVTX_H

/* The option codes profile.c's table gives these options (no short forms). */
enum {
    PROFILE_OPT_NVTX = 0x1100, /* --nvtx */
    PROFILE_OPT_NVTX_INCLUDE,  /* --nvtx-include EXPR (repeatable) */
    PROFILE_OPT_NVTX_EXCLUDE,  /* --nvtx-exclude EXPR (repeatable) */
    PROFILE_OPT_FROM_START,    /* --profile-from-start on|off */
};

#define PROFILE_NVTX_MAX 64 /* expressions of each kind */

struct profile_nvtx {
    int on; /* --nvtx, or any include/exclude */
    const char *include[PROFILE_NVTX_MAX], *exclude[PROFILE_NVTX_MAX]; /* borrowed (argv) */
    int ninclude, nexclude;
    int from_start_off; /* --profile-from-start off */
};

/* Takes option `code` (one of the above) with its argument; RK_OK, or RK_EUSAGE printed. */
int profile_nvtx_option(struct profile_nvtx *nv, int code, const char *arg);

/*
 * Checks the expressions (collect_nvtx_filter_new: a bad one is refused before PROGRAM runs)
 * and puts the options where the injection library (at `inject`) reads them:
 * NVTX_INJECTION64_PATH (the program's NVTX tool), ROOFKIT_NVTX, ROOFKIT_NVTX_INCLUDE,
 * ROOFKIT_NVTX_EXCLUDE and ROOFKIT_FROM_START in this process's environment, which PROGRAM
 * inherits; those not asked for are removed. RK_OK, or RK_EUSAGE / RK_ENOMEM printed.
 */
int profile_nvtx_setup(const struct profile_nvtx *nv, const char *inject);

#endif /* RK_CLI_PROFILE_NVTX_H */
