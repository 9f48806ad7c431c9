/*
 * fuzz_cmdline.c - roofkit's command line: the input is split into arguments at NUL
 * bytes and newlines, then goes through what main() does before a command touches a
 * GPU or a database: the common options (cli/main.c's take_common_options, reached by
 * including main.c with its main() renamed), the command table, --help, and the option
 * parsing of the commands that parse before doing anything else: run (run_glue.c), tune,
 * and model explain (pure computation: cmd_model never opens the database for it).
 * Commands that would write (probe, profile, report, export, all) are not run. tune parses,
 * then opens the GPU: the target hides every GPU (CUDA_VISIBLE_DEVICES="") so that on a machine
 * with one it stops there as it does on CI's, instead of sweeping kernels for each input.
 */
#define main roofkit_main
int roofkit_main(int argc, char **argv);
#include "../../cli/main.c"
#undef main

#include "fuzz.h"

int fuzz_run_parse(int argc, char **argv);
void fuzz_run_shape(const char *s);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[64];
    int argc = 0, want_help = 0, want_version = 0;
    struct rk_ctx ctx = {.db_path = "roofkit.db", .device = 0};
    static int hidden;
    if (!hidden) /* before the CUDA runtime's first call reads it */
        hidden = setenv("CUDA_VISIBLE_DEVICES", "", 1) == 0;
    char *buf = fuzz_argv(data, size, "roofkit", argv, 64, &argc);
    const struct rk_cmd *cmd;
    if (!buf)
        return 0;
    for (int i = 1; i < argc; i++)
        fuzz_run_shape(argv[i]);
    if (take_common_options(&argc, argv, &ctx, &want_help, &want_version) != RK_OK || argc < 2)
        goto out;
    FUZZ_CHECK(argv[argc] == NULL && ctx.db_path && *ctx.db_path);
    FUZZ_CHECK(ctx.device >= 0 && ctx.device <= 1024);
    cmd = rk_find_command(argv[1]);
    if (!cmd || want_help || rk_wants_help(argc - 1, argv + 1))
        goto out;
    if (strcmp(cmd->name, "run") == 0)
        (void)fuzz_run_parse(argc - 1, argv + 1);
    else if (strcmp(cmd->name, "tune") == 0)
        (void)cmd_tune(argc - 1, argv + 1, &ctx);
    else if (strcmp(cmd->name, "model") == 0 && argc >= 3 && strcmp(argv[2], "explain") == 0)
        (void)cmd_model(argc - 1, argv + 1, &ctx);
    FUZZ_CHECK(ctx.db == NULL);
out:
    free(buf);
    return 0;
}
