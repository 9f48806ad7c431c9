/*
 * options.c - option parsing shared by the subcommand files: getopt_long with
 * roofkit's own error messages, number options (comma-separated lists are common's
 * rk_parse_name_list / rk_parse_long_list), and opening the database on demand. Uses
 * getopt_long (glibc) rather than a parser of our own; each subcommand keeps its own
 * option table.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"

#include <getopt.h>
#include <string.h>

int rk_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

void rk_print_usage(const struct rk_cmd *cmd, FILE *to)
{
    fprintf(to, "%s", cmd->usage);
}

int rk_ctx_set_origin(struct rk_ctx *ctx, int gpus_busy)
{
    struct db_origin o;
    o.host = ctx->host[0] ? ctx->host : NULL;
    o.rank = ctx->launch.rank;
    o.local_rank = ctx->launch.local_rank;
    o.world_size = ctx->launch.world_size;
    o.gpus_concurrent = ctx->gpus_concurrent;
    o.gpus_busy = gpus_busy;
    return db_set_origin(ctx->db, &o);
}

int rk_ctx_open_db(struct rk_ctx *ctx, int rw)
{
    int rc;
    if (ctx->db)
        return RK_OK;
    rc = db_open(ctx->db_path, rw ? DB_RW : DB_RO, &ctx->db);
    if (rc == RK_OK && rw)
        rc = rk_ctx_set_origin(ctx, -1);
    return rc;
}

void rk_getopt_reset(void)
{
    optind = 0; /* glibc: 0 re-initialises the scanner */
}

int rk_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
    int prev = optind ? optind : 1;
    int c;
    opterr = 0;
    c = getopt_long(argc, argv, optstring, longopts, NULL);
    if (c == '?') {
        /* An unknown long option has just been stepped over, so it is argv[optind - 1]
         * even when GNU getopt skipped non-options to reach it. */
        const char *bad = (optopt == 0 && optind > 0 && optind <= argc) ? argv[optind - 1]
                          : (prev < argc)                               ? argv[prev]
                                                                        : "?";
        if (optopt && !(bad[0] == '-' && bad[1] == '-'))
            rk_error(RK_EUSAGE, "unknown option '-%c' for '%s'; see 'roofkit help %s'", optopt,
                     argv[0], argv[0]);
        else
            rk_error(RK_EUSAGE, "unknown option '%s' for '%s'; see 'roofkit help %s'", bad, argv[0],
                     argv[0]);
        return -2;
    }
    if (c == ':') {
        rk_error(RK_EUSAGE, "option '%s' needs a value; see 'roofkit help %s'",
                 (prev < argc) ? argv[prev] : "?", argv[0]);
        return -2;
    }
    return c;
}

int rk_opt_double(const char *name, const char *val, double *out)
{
    if (rk_parse_double(val, out) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--%s' needs a number such as 1430e9, not '%s'", name,
                        val ? val : "");
    return RK_OK;
}

int rk_opt_percent(const char *name, const char *val, double *out)
{
    char buf[64];
    size_t n = val ? strlen(val) : 0;
    double v;
    if (n == 0 || n >= sizeof buf)
        return rk_error(RK_EUSAGE, "option '--%s' needs a percentage such as 5%%", name);
    memcpy(buf, val, n + 1);
    if (buf[n - 1] == '%')
        buf[n - 1] = '\0';
    if (rk_parse_double(buf, &v) != RK_OK || v < 0 || v > 1000)
        return rk_error(RK_EUSAGE,
                        "option '--%s' needs a percentage from 0 to 1000 such as 5%%, not '%s'",
                        name, val);
    *out = v / 100.0;
    return RK_OK;
}

int rk_opt_long(const char *name, const char *val, long min, long max, long *out)
{
    long v;
    if (rk_parse_long(val, &v) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--%s' needs a whole number, not '%s'", name,
                        val ? val : "");
    if (v < min || v > max)
        return rk_error(RK_EUSAGE, "option '--%s' must be between %ld and %ld, not %ld", name, min,
                        max, v);
    *out = v;
    return RK_OK;
}
