/*
 * profile_nvtx.c - `roofkit profile --nvtx`, `--nvtx-include`, `--nvtx-exclude` and
 * `--profile-from-start`, Nsight Compute's options with its syntax (collect/nvtx.c says which
 * expressions and what a launch's stored ranges look like), kept apart from profile.c's other
 * options: parsed here, checked before PROGRAM runs, handed to the injection library through
 * the environment PROGRAM inherits (collect/inject.c lists the variables).
 *
 * An include or exclude implies --nvtx (ncu insists on --nvtx; a filter without it would be
 * meaningless, so roofkit takes it as asked). Several expressions travel in one variable, one
 * per line: an expression may not hold a newline.
 */
#define _POSIX_C_SOURCE 200809L
#include "profile_nvtx.h"

#include "collect.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

static int add(const char **list, int *n, const char *arg, const char *opt)
{
    if (*n == PROFILE_NVTX_MAX)
        return rk_error(RK_EUSAGE,
                        "option '%s' given more than %d times; write fewer ranges, with "
                        "'*' for any number of them",
                        opt, PROFILE_NVTX_MAX);
    list[(*n)++] = arg;
    return RK_OK;
}

int profile_nvtx_option(struct profile_nvtx *nv, int code, const char *arg)
{
    switch (code) {
    case PROFILE_OPT_NVTX:
        nv->on = 1;
        return RK_OK;
    case PROFILE_OPT_NVTX_INCLUDE:
    case PROFILE_OPT_NVTX_EXCLUDE: {
        const char *opt = code == PROFILE_OPT_NVTX_INCLUDE ? "--nvtx-include" : "--nvtx-exclude";
        if (strchr(arg, '\n'))
            return rk_error(RK_EUSAGE, "option '%s' takes an expression of one line", opt);
        nv->on = 1;
        return code == PROFILE_OPT_NVTX_INCLUDE ? add(nv->include, &nv->ninclude, arg, opt)
                                                : add(nv->exclude, &nv->nexclude, arg, opt);
    }
    case PROFILE_OPT_FROM_START:
        if (strcmp(arg, "on") == 0 || strcmp(arg, "yes") == 0 || strcmp(arg, "off") == 0 ||
            strcmp(arg, "no") == 0) {
            nv->from_start_off = strcmp(arg, "off") == 0 || strcmp(arg, "no") == 0;
            return RK_OK;
        }
        return rk_error(RK_EUSAGE,
                        "option '--profile-from-start' needs 'on' or 'off' (as Nsight Compute: "
                        "off records only between cudaProfilerStart and cudaProfilerStop), not "
                        "'%s'",
                        arg);
    default:
        RK_BUG("not an NVTX option");
    }
}

/* "a\nb\nc": the list joined by newlines (malloc'd; NULL when empty or out of memory). */
static char *lines(const char *const *list, int n)
{
    struct rk_buf b = RK_BUF_INIT;
    for (int i = 0; i < n; i++)
        rk_buf_printf(&b, "%s%s", i ? "\n" : "", list[i]);
    if (b.oom)
        rk_buf_release(&b);
    return b.s;
}

/* setenv(name, value) or, value NULL, unsetenv(name). */
static int put(const char *name, const char *value)
{
    if (value ? setenv(name, value, 1) : unsetenv(name))
        return rk_error(RK_ENOMEM, "cannot set the environment variable %s", name);
    return RK_OK;
}

int profile_nvtx_setup(const struct profile_nvtx *nv, const char *inject)
{
    struct collect_nvtx_filter *f = NULL;
    int rc = collect_nvtx_filter_new(nv->include, nv->ninclude, nv->exclude, nv->nexclude, &f);
    collect_nvtx_filter_free(f);
    if (rc != RK_OK)
        return rc;
    char *inc = lines(nv->include, nv->ninclude), *exc = lines(nv->exclude, nv->nexclude);
    if ((nv->ninclude && !inc) || (nv->nexclude && !exc))
        rc = rk_error(RK_ENOMEM, "out of memory");
    /* the program's NVTX calls reach the injection library only when it is their tool */
    if (rc == RK_OK && nv->on)
        rc = put("NVTX_INJECTION64_PATH", inject);
    if (rc == RK_OK)
        rc = put("ROOFKIT_NVTX", nv->on ? "1" : NULL);
    if (rc == RK_OK)
        rc = put("ROOFKIT_NVTX_INCLUDE", inc);
    if (rc == RK_OK)
        rc = put("ROOFKIT_NVTX_EXCLUDE", exc);
    if (rc == RK_OK)
        rc = put("ROOFKIT_FROM_START", nv->from_start_off ? "off" : NULL);
    free(inc);
    free(exc);
    return rc;
}
