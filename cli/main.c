/*
 * main.c - the roofkit command: pulls the common options out of the command
 * line, finds the subcommand in rk_commands[], does the set-up its flags ask
 * for (open the database), runs it, and turns its enum rk_err into the exit code.
 *
 * Common options (--db, --device, --quiet, --help, --version) may appear before or
 * after the subcommand's name, but never after a "--" (what follows "--" belongs to
 * the program that `roofkit profile` runs). This is the only file that exits.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "common.h"
#include "db.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

static const char exit_codes_text[] =
    "exit codes:\n"
    "    0  success\n"
    "    1  internal error (a bug: please report it)\n"
    "    2  bad command line (unknown option, malformed number, unknown name)\n"
    "    3  (retired, unused)\n"
    "    4  no usable CUDA GPU\n"
    "    5  a CUDA, cuBLAS or NVML call failed\n"
    "    6  a CUPTI call failed\n"
    "    7  database error (cannot open, not a roofkit database, corrupt, newer schema, locked)\n"
    "    8  a file or directory could not be read or written\n"
    "    9  verification failed (a kernel's result; a stored prediction in 'model --check')\n"
    "   10  not enough GPU or host memory for the request\n"
    "   11  an external program (gnuplot) is missing\n"
    "   12  the database holds nothing to work on\n"
    "  130  interrupted (rows already stored are complete)\n";

static void print_main_help(FILE *to)
{
    fprintf(to,
            "usage: roofkit [--db FILE] [--device N] [--quiet] COMMAND [ARGS...]\n"
            "       roofkit help COMMAND | roofkit COMMAND --help | roofkit --version\n\n"
            "roofkit measures what a GPU can do, what each kernel did, and what a model says it\n"
            "should have done, and keeps all three in one SQLite file.\n\ncommands:\n");
    for (const struct rk_cmd *c = rk_commands; c->name; c++)
        fprintf(to, "  %-9s %s\n", c->name, c->summary);
    fprintf(to,
            "\ncommon options:\n"
            "  --db FILE     the database (default ./roofkit.db)\n"
            "  --device N    the CUDA device index (default 0)\n"
            "  --quiet       print errors only\n"
            "  -h, --help    this help, or a command's help after its name\n"
            "  --version     print roofkit's version\n\n%s",
            exit_codes_text);
}

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
            if (!val || rk_parse_long(val, &n) != RK_OK || n < 0 || n > 1024)
                return rk_error(RK_EUSAGE,
                                "option '--device' needs a device index such as 0, not '%s'",
                                val ? val : "");
            ctx->device = (int)n;
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

int main(int argc, char **argv)
{
    struct rk_ctx ctx = {.db_path = "roofkit.db", .device = 0};
    const struct rk_cmd *cmd;
    int want_help = 0, want_version = 0, rc;
    char *cmdline = join_args(argc, argv);

    ctx.cmdline = cmdline ? cmdline : "roofkit";
    ctx.argv0 = argv[0];
    rc = take_common_options(&argc, argv, &ctx, &want_help, &want_version);
    if (rc != RK_OK)
        goto out;
    rk_set_quiet(ctx.quiet);

    if (want_version) {
        printf("roofkit %s\n", RK_VERSION);
        goto out;
    }
    if (argc < 2) {
        if (want_help) {
            print_main_help(stdout);
            goto out;
        }
        print_main_help(stderr);
        rc = rk_error(RK_EUSAGE, "no command given; try 'roofkit all' or 'roofkit --help'");
        goto out;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            print_main_help(stdout);
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
    free(cmdline);
    return rc;
}
