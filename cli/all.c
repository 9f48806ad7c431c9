/*
 * all.c - `roofkit all`, the main job. On a machine with a GPU: probe, run the
 * default suite, model, report, all into one database (--db, ./roofkit.db). On a
 * machine without one it says so and makes the report from the example database
 * recorded on an H100 (examples/h100.sql), loaded into a temporary file, and the
 * report says on every page that it shows that example: nothing is measured and
 * the user's database is not touched.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"
#include "gpu.h"
#include "probes.h"
#include "report.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RK_SOURCE_EXAMPLE
#define RK_SOURCE_EXAMPLE ""
#endif

/* Where the example is: $ROOFKIT_EXAMPLE, beside an installed roofkit
 * (PREFIX/share/roofkit/examples), then the source tree it was built from. */
static int find_example(char *buf, size_t len)
{
    const char *env = getenv("ROOFKIT_EXAMPLE");
    char exe[PATH_MAX];
    ssize_t n;
    if (env && *env) {
        if (access(env, R_OK) != 0)
            return rk_error(RK_EIO, "ROOFKIT_EXAMPLE names '%s', which cannot be read", env);
        snprintf(buf, len, "%s", env);
        return RK_OK;
    }
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        char *slash;
        exe[n] = '\0';
        if ((slash = strrchr(exe, '/')) != NULL) {
            *slash = '\0';
            if ((size_t)snprintf(buf, len, "%s/../share/roofkit/examples/h100.sql", exe) < len &&
                access(buf, R_OK) == 0)
                return RK_OK;
        }
    }
    if (*RK_SOURCE_EXAMPLE && access(RK_SOURCE_EXAMPLE, R_OK) == 0) {
        snprintf(buf, len, "%s", RK_SOURCE_EXAMPLE);
        return RK_OK;
    }
    return rk_error(RK_ENODATA,
                    "no GPU here, and the example database (examples/h100.sql) is not installed; "
                    "reinstall roofkit or set ROOFKIT_EXAMPLE to the file");
}

static int report_example(const char *out_dir, const char *why)
{
    char sql[PATH_MAX], dir[] = "/tmp/roofkit-all-XXXXXX", path[sizeof dir + 16];
    char label[512];
    struct db *db = NULL;
    struct db_device *devs = NULL;
    struct report_opts ro = {
        .out_dir = out_dir, .formats = REPORT_ALL, .source = "examples/h100.sql"};
    int ndev = 0, rc;

    rk_info("no usable CUDA GPU here (%s): making the report from the example data instead", why);
    if ((rc = find_example(sql, sizeof sql)) != RK_OK)
        return rc;
    if (!mkdtemp(dir))
        return rk_error(RK_EIO, "cannot make a temporary folder in /tmp for the example database");
    snprintf(path, sizeof path, "%s/example.db", dir);
    rc = db_import_sql(path, sql);
    if (rc == RK_OK)
        rc = db_open(path, DB_RO, &db);
    if (rc == RK_OK)
        rc = db_list_devices(db, &devs, &ndev);
    if (rc == RK_OK) {
        snprintf(label, sizeof label,
                 "Example data recorded by roofkit on %.200s (examples/h100.sql), not measured "
                 "on this machine",
                 ndev > 0 && devs[0].name ? devs[0].name : "an NVIDIA H100");
        ro.label = label;
        rc = report_write(db, &ro);
    }
    db_free_devices(devs, ndev);
    db_close(db);
    unlink(path);
    rmdir(dir);
    return rc;
}

int cmd_all(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    const char *out_dir = "roofkit-report";
    char why[256] = "";
    int c, rc;
    size_t first = 0, last = 4; /* the steps below this process runs */
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                return rk_error(RK_EUSAGE, "option '--out' needs a directory name");
            out_dir = optarg;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help all'",
                        argv[optind]);

    if (rk_gpu_count(why, sizeof why) == 0) {
        char *dir = NULL;
        if ((rc = rk_ctx_expand(ctx, out_dir, &dir)) == RK_OK)
            rc = report_example(dir, why);
        free(dir);
        return rc;
    }
    if (ctx->gpus) /* after one roofkit per GPU probed and ran: the pairs, model and report */
        first = 0;
    if (ctx->per_gpu_child) /* one GPU of a list: the parent predicts and reports for all */
        last = 2;

    {
        /* The steps are the subcommands themselves, on one database. */
        char *probe[] = {"probe", NULL};
        char *run[] = {"run", "--suite", "default", NULL};
        char *model[] = {"model", NULL};
        char *report[] = {"report", "--out", (char *)out_dir, NULL};
        struct {
            const char *what;
            char **argv;
            int argc;
        } steps[] = {
            {"probe the GPU's ceilings", probe, 1},
            {"run the default suite", run, 3},
            {"predict every measurement", model, 1},
            {"write the report", report, 3},
        };
        int (*fns[])(int, char **, struct rk_ctx *) = {cmd_probe, cmd_run, cmd_model, cmd_report};
        for (size_t i = first; i < last; i++) {
            if (rk_interrupted)
                return RK_EINTR;
            if (ctx->gpus && i == 1)
                continue; /* the suites ran on each GPU; probe did the pairs */
            rk_info("step %zu of %zu: %s", i + 1, sizeof steps / sizeof steps[0],
                    ctx->gpus && i == 0 ? "probe every pair of GPUs" : steps[i].what);
            if (i == 3) {
                /* --device named the GPUs to measure; the report covers every device of the
                 * database (report's own --device selects the database's devices) */
                struct rk_ctx rctx = *ctx;
                rctx.device_spec = NULL;
                rc = fns[i](steps[i].argc, steps[i].argv, &rctx);
                ctx->db = rctx.db; /* opened for the report, closed by main */
            } else {
                rc = fns[i](steps[i].argc, steps[i].argv, ctx);
            }
            if (rc != RK_OK)
                return rc;
        }
    }
    return RK_OK;
}
