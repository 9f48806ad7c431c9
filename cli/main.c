/*
 * main.c - the roofkit command: pulls the common options out of the command
 * line, finds the subcommand in rk_commands[], does the set-up its flags ask
 * for (open the database), runs it, and turns its enum rk_err into the exit code.
 *
 * Common options (--db, --device, --serial, --quiet, --help, --version) may appear before or
 * after the subcommand's name, but never after a "--" (what follows "--" belongs to
 * the program that `roofkit profile` runs). `roofkit --help-man` and `--help-completion`
 * (help.c) are for the build, which writes the man page and the bash completion with them.
 * This is the only file that exits.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "common.h"
#include "db.h"
#include "gpu.h"
#include "launch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
    rk_interrupted = sig; /* profile forwards it to the program it runs */
}

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Joins argv into one string for capture.cmdline; malloc'd. */
static char *join_args(int argc, char **argv)
{
    size_t len = 1;
    char *s;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* Whether a --device value looks like one: "all", or indices 0-1024 and UUIDs separated by
 * commas (whether the GPUs exist is checked when a command needs them). */
static int device_spec_ok(const char *val)
{
    char **names = NULL;
    int n = 0, ok;
    if (strcmp(val, "all") == 0)
        return 1;
    if (rk_parse_name_list(val, &names, &n) != RK_OK)
        return 0;
    ok = n > 0;
    for (int i = 0; i < n && ok; i++) {
        long v;
        ok = strncmp(names[i], "GPU-", 4) == 0 || strncmp(names[i], "MIG-", 4) == 0 ||
             (rk_parse_long(names[i], &v) == RK_OK && v >= 0 && v <= 1024);
    }
    rk_free_name_list(names, n);
    return ok;
}

/*
 * Removes the common options from argv (before any "--"), storing them in ctx.
 * Returns RK_OK, RK_EUSAGE; sets *want_help / *want_version.
 */
static int take_common_options(int *argc, char **argv, struct rk_ctx *ctx, int *want_help,
                               int *want_version)
{
    int out = 1, i;
    for (i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--") == 0)
            break;
        if (strcmp(a, "--db") == 0 || strncmp(a, "--db=", 5) == 0) {
            if (a[4] == '=')
                val = a + 5;
            else if (i + 1 < *argc)
                val = argv[++i];
            if (!val || !*val)
                return rk_error(RK_EUSAGE, "option '--db' needs a file name, e.g. --db roofkit.db");
            ctx->db_path = val;
        } else if (strcmp(a, "--device") == 0 || strncmp(a, "--device=", 9) == 0) {
            long n;
            if (a[8] == '=')
                val = a + 9;
            else if (i + 1 < *argc)
                val = argv[++i];
            if (!val || !device_spec_ok(val))
                return rk_error(RK_EUSAGE,
                                "option '--device' needs a device index such as 0, a UUID "
                                "(GPU-...), a list of them or 'all', not '%s'",
                                val ? val : "");
            ctx->device_spec = val;
            if (rk_parse_long(val, &n) == RK_OK)
                ctx->device = (int)n;
        } else if (strcmp(a, "--serial") == 0) {
            ctx->serial = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            ctx->quiet = 1;
        } else if (strcmp(a, "--version") == 0) {
            *want_version = 1;
        } else if (out == 1 && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            /* --help before the command's name; after it, the command handles it. */
            *want_help = 1;
        } else {
            argv[out++] = argv[i];
        }
    }
    for (; i < *argc; i++)
        argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    return RK_OK;
}

/* The --format a command line asks for when it is csv or json (NULL otherwise), for a
 * command run on several GPUs at once. */
static const char *machine_format(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = strncmp(argv[i], "--format=", 9) == 0              ? argv[i] + 9
                        : strcmp(argv[i], "--format") == 0 && i + 1 < argc ? argv[i + 1]
                                                                           : NULL;
        if (v && (strcmp(v, "csv") == 0 || strcmp(v, "json") == 0))
            return v;
    }
    return NULL;
}

/*
 * Where this process runs: the host, the launcher's rank, the --db placeholders, and what a
 * parent roofkit told it. RK_OK or RK_EUSAGE / RK_ENOMEM (printed).
 */
static int take_origin(struct rk_ctx *ctx, char **db_path /* OUT: malloc'd */)
{
    const char *parent = getenv(RK_PER_GPU_ENV);
    long v;
    if (gethostname(ctx->host, sizeof ctx->host) != 0)
        snprintf(ctx->host, sizeof ctx->host, "localhost");
    ctx->host[sizeof ctx->host - 1] = '\0';
    rk_launch_detect(rk_getenv, NULL, &ctx->launch);
    /* Alone: no other GPU is measured; under a launcher, every rank of this host may be. */
    ctx->gpus_concurrent = ctx->launch.rank < 0         ? 0
                           : ctx->launch.local_size > 0 ? ctx->launch.local_size - 1
                                                        : -1;
    if (parent && rk_parse_long(parent, &v) == RK_OK && v >= 0 && v < 4096) {
        ctx->gpus_concurrent = (int)v;
        ctx->per_gpu_child = 1;
    }
    if (ctx->per_gpu_child) /* the parent expanded the name already */
        return (*db_path = strdup(ctx->db_path)) ? RK_OK
                                                 : rk_error(RK_ENOMEM, "out of host memory");
    return rk_ctx_expand(ctx, ctx->db_path, db_path);
}

/*
 * The GPU (or GPUs) of a command that runs on one: --device as given, else the GPU of the
 * launcher's local rank (local rank modulo the GPUs present), else 0. For a command with
 * RK_PER_GPU, a list of several GPUs comes back in *gpus (malloc'd, *n >= 2); otherwise
 * ctx->device is set and *n is 0.
 */
static int choose_gpus(struct rk_ctx *ctx, const struct rk_cmd *cmd, int **gpus, int *n)
{
    long v;
    *gpus = NULL;
    *n = 0;
    if (!(cmd->flags & RK_PER_GPU))
        return RK_OK; /* the command reads ctx->device or ctx->device_spec itself */
    if (!ctx->device_spec) {
        char why[200];
        int count;
        if (ctx->launch.local_rank < 0)
            return RK_OK;
        if ((count = rk_gpu_count(why, sizeof why)) > 0) {
            ctx->device = ctx->launch.local_rank % count;
            rk_info("rank %d (local rank %d) on %s: GPU %d of %d", ctx->launch.rank,
                    ctx->launch.local_rank, ctx->host, ctx->device, count);
        }
        return RK_OK;
    }
    if (rk_parse_long(ctx->device_spec, &v) == RK_OK)
        return RK_OK; /* one index: ctx->device already */
    {
        int rc = rk_gpu_resolve(ctx->device_spec, gpus, n);
        if (rc != RK_OK)
            return rc;
        if (*n == 1) {
            ctx->device = (*gpus)[0];
            free(*gpus);
            *gpus = NULL;
            *n = 0;
        }
    }
    return RK_OK;
}

int main(int argc, char **argv)
{
    struct rk_ctx ctx = {.db_path = "roofkit.db", .device = 0};
    const struct rk_cmd *cmd;
    int want_help = 0, want_version = 0, rc, *gpus = NULL, ngpus = 0;
    char *cmdline = join_args(argc, argv), *db_path = NULL;

    ctx.cmdline = cmdline ? cmdline : "roofkit";
    ctx.argv0 = argv[0];
    rc = take_common_options(&argc, argv, &ctx, &want_help, &want_version);
    if (rc != RK_OK)
        goto out;
    rk_set_quiet(ctx.quiet);

    if (want_version) {
        rc = rk_print_version(stdout);
        goto out;
    }
    if (argc == 2 && strcmp(argv[1], "--help-man") == 0) { /* the build's man page */
        rc = rk_write_man(stdout);
        goto out;
    }
    if (argc == 2 && strcmp(argv[1], "--help-completion") == 0) { /* ... and completion */
        rc = rk_write_completion(stdout);
        goto out;
    }
    if (argc < 2) {
        if (want_help) {
            rk_print_main_help(stdout);
            goto out;
        }
        rk_print_main_help(stderr);
        rc = rk_error(RK_EUSAGE, "no command given; try 'roofkit all' or 'roofkit --help'");
        goto out;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            rk_print_main_help(stdout);
            goto out;
        }
        cmd = rk_find_command(argv[2]);
        if (!cmd) {
            rc = rk_error(RK_EUSAGE, "no command named '%s'; see 'roofkit --help'", argv[2]);
            goto out;
        }
        rk_print_usage(cmd, stdout);
        goto out;
    }
    cmd = rk_find_command(argv[1]);
    if (!cmd) {
        rc = rk_error(RK_EUSAGE, "'%s' is not a roofkit command; see 'roofkit --help'", argv[1]);
        goto out;
    }
    if (want_help || rk_wants_help(argc - 1, argv + 1)) {
        rk_print_usage(cmd, stdout);
        goto out;
    }

    install_signal_handlers();
    if ((rc = take_origin(&ctx, &db_path)) != RK_OK)
        goto out;
    ctx.db_path = db_path;
    if ((rc = choose_gpus(&ctx, cmd, &gpus, &ngpus)) != RK_OK)
        goto out;
    if (ngpus > 1 && machine_format(argc - 1, argv + 1)) {
        /* Each GPU's roofkit would print a table of its own, prefixed by its GPU: not one
         * CSV or JSON text. */
        rc = rk_error(RK_EUSAGE,
                      "--format %s takes one GPU; give one --device at a time, or read every "
                      "GPU's rows afterwards with 'roofkit export --format %s'",
                      machine_format(argc - 1, argv + 1), machine_format(argc - 1, argv + 1));
        goto out;
    }
    if (ngpus > 1) {
        /* One roofkit per GPU, then, for a command that has one, the work of all together. */
        rc = rk_run_per_gpu(&ctx, argc - 1, argv + 1, gpus, ngpus);
        if (rc != RK_OK || !(cmd->flags & RK_AFTER_GPUS))
            goto out;
        ctx.gpus = gpus;
        ctx.ngpus = ngpus;
    }
    if (cmd->flags & (RK_NEED_DB | RK_NEED_DB_RO)) {
        rc = db_open(ctx.db_path, (cmd->flags & RK_NEED_DB) ? DB_RW : DB_RO, &ctx.db);
        if (rc != RK_OK)
            goto out;
    }
    rc = cmd->fn(argc - 1, argv + 1, &ctx);
    if (rc == RK_OK && rk_interrupted) /* a command that finished its row as the signal came */
        rc = rk_error(RK_EINTR, "interrupted by %s; what was stored is complete",
                      strsignal(rk_interrupted));
out:
    if (ctx.db)
        db_close(ctx.db);
    free(gpus);
    free(db_path);
    free(cmdline);
    return rc;
}
