/*
 * launch.c - the launcher's rank from its environment, and file-name placeholders (launch.h).
 * Plain C with no I/O but the error messages, so that the CI machine tests every launcher's
 * variables without any of them installed.
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"

#include "common.h"

#include <stdlib.h>
#include <string.h>

const char *rk_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* A variable holding a whole number >= 0, else -1. */
static int env_int(rk_env_fn env, void *arg, const char *name)
{
    const char *s = env(name, arg);
    long v;
    if (!s || rk_parse_long(s, &v) != RK_OK || v < 0 || v > 1L << 30)
        return -1;
    return (int)v;
}

void rk_launch_detect(rk_env_fn env, void *arg, struct rk_launch *out)
{
    /* The variables of each launcher: rank, local rank, size, local size (NULL: none). */
    static const struct {
        const char *name, *rank, *local_rank, *size, *local_size;
    } launchers[] = {
        {"open-mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
         "OMPI_COMM_WORLD_LOCAL_SIZE"},
        {"hydra", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"},
        {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", NULL},
    };
    *out = (struct rk_launch){NULL, -1, -1, -1, -1};
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        int rank = env_int(env, arg, launchers[i].rank);
        if (rank < 0)
            continue;
        out->launcher = launchers[i].name;
        out->rank = rank;
        out->local_rank = env_int(env, arg, launchers[i].local_rank);
        out->world_size = env_int(env, arg, launchers[i].size);
        out->local_size = launchers[i].local_size ? env_int(env, arg, launchers[i].local_size) : -1;
        return;
    }
}

int rk_expand_name(const char *pattern, const struct rk_launch *l, const char *host, long pid,
                   rk_env_fn env, void *arg, char **out)
{
    struct rk_buf b = RK_BUF_INIT;
    const char *p = pattern;

    *out = NULL;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            rk_buf_puts(&b, p);
            break;
        }
        rk_buf_printf(&b, "%.*s", (int)(pct - p), p);
        switch (pct[1]) {
        case '%':
            rk_buf_puts(&b, "%");
            p = pct + 2;
            break;
        case 'h':
            rk_buf_puts(&b, host ? host : "localhost");
            p = pct + 2;
            break;
        case 'p':
            rk_buf_printf(&b, "%ld", pid);
            p = pct + 2;
            break;
        case 'r':
            rk_buf_printf(&b, "%d", l && l->rank >= 0 ? l->rank : 0);
            p = pct + 2;
            break;
        case 'q': {
            const char *close = pct[2] == '{' ? strchr(pct + 3, '}') : NULL;
            char name[256];
            const char *val;
            size_t len = close ? (size_t)(close - (pct + 3)) : 0;
            if (!close || len == 0 || len >= sizeof name) {
                rk_buf_release(&b);
                return rk_error(RK_EUSAGE,
                                "'%s': %%q needs a variable name in braces, such as %%q{USER}",
                                pattern);
            }
            memcpy(name, pct + 3, len);
            name[len] = '\0';
            if (!(val = env(name, arg))) {
                rk_buf_release(&b);
                return rk_error(RK_EUSAGE,
                                "'%s' names environment variable %s, which is not set; set it "
                                "or remove %%q{%s}",
                                pattern, name, name);
            }
            rk_buf_puts(&b, val);
            p = close + 1;
            break;
        }
        default:
            rk_buf_release(&b);
            return rk_error(RK_EUSAGE,
                            "'%s': unknown placeholder '%%%.1s'; use %%h (host), %%p (pid), %%r "
                            "(rank), %%q{VAR} (a variable) or %%%% (a percent sign)",
                            pattern, pct[1] ? pct + 1 : "");
        }
    }
    if (b.oom) {
        rk_buf_release(&b);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    if (!b.s || !*b.s) {
        rk_buf_release(&b);
        return rk_error(RK_EUSAGE, "'%s' expands to an empty file name", pattern);
    }
    *out = b.s;
    return RK_OK;
}

/* The index of the one GPU whose UUID starts with `name`; -1 (none) or -2 (several). */
static int find_uuid(const char *name, const char *const *uuids, int count)
{
    int found = -1;
    for (int i = 0; i < count; i++) {
        if (uuids[i] && strncmp(uuids[i], name, strlen(name)) == 0) {
            if (strcmp(uuids[i], name) == 0)
                return i;
            found = found == -1 ? i : -2;
        }
    }
    return found;
}

int rk_device_list_resolve(const char *spec, const char *const *uuids, int count, int **out, int *n)
{
    char **names = NULL;
    int nnames = 0, rc, *idx = NULL;

    *out = NULL;
    *n = 0;
    if (count <= 0)
        return rk_error(RK_ENOGPU, "no usable CUDA GPU; run roofkit on a machine with one");
    if (strcmp(spec, "all") == 0) {
        if (!(idx = malloc(sizeof *idx * (size_t)count)))
            return rk_error(RK_ENOMEM, "out of host memory");
        for (int i = 0; i < count; i++)
            idx[i] = i;
        *out = idx;
        *n = count;
        return RK_OK;
    }
    if ((rc = rk_parse_name_list(spec, &names, &nnames)) != RK_OK)
        return rc == RK_ENOMEM ? rc
                               : rk_error(RK_EUSAGE,
                                          "option '--device' needs 'all', indices or UUIDs "
                                          "separated by commas, not '%s'",
                                          spec);
    if (!(idx = malloc(sizeof *idx * (size_t)(nnames ? nnames : 1)))) {
        rk_free_name_list(names, nnames);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    for (int i = 0; i < nnames && rc == RK_OK; i++) {
        long v;
        int d;
        if (strncmp(names[i], "GPU-", 4) == 0 || strncmp(names[i], "MIG-", 4) == 0) {
            d = find_uuid(names[i], uuids, count);
            if (d < 0)
                rc = rk_error(RK_EUSAGE,
                              d == -1 ? "no GPU here has UUID '%s'; see 'roofkit list gpus'"
                                      : "'%s' starts the UUIDs of several GPUs; give more of it",
                              names[i]);
        } else if (rk_parse_long(names[i], &v) != RK_OK || v < 0 || v >= count) {
            rc = rk_error(RK_EUSAGE,
                          "option '--device': '%s' is not a GPU here: give an index 0-%d, a "
                          "UUID or 'all' (see 'roofkit list gpus')",
                          names[i], count - 1);
            d = -1;
        } else {
            d = (int)v;
        }
        for (int j = 0; j < *n && rc == RK_OK; j++)
            if (idx[j] == d)
                rc = rk_error(RK_EUSAGE, "option '--device' names GPU %d twice", d);
        if (rc == RK_OK)
            idx[(*n)++] = d;
    }
    rk_free_name_list(names, nnames);
    if (rc != RK_OK) {
        free(idx);
        *n = 0;
        return rc;
    }
    *out = idx;
    return RK_OK;
}
