/*
 * help.c - roofkit's help, written three ways from one source: `roofkit --help` (the text
 * below and the summaries of rk_commands[]), the man page roofkit.1 (`roofkit --help-man`,
 * roff) and the bash completion (`roofkit --help-completion`). The build runs the last two
 * (cli/CMakeLists.txt), so the man page and the completion are never copies to keep in step
 * by hand: a command, an option or a listing added to the table or its usage text is in both.
 *
 * What the completion reads from each command's usage text (commands.c):
 *   - its options: every "--name" the text mentions (the common options included);
 *   - an option's values: the word after "--name " when it is a choice, two or more words
 *     separated by | or , of which the lowercase ones are offered ("--format text|csv|json",
 *     "--device N|UUID|LIST|all" gives "all");
 *   - its first words: the word after "roofkit NAME " on a synopsis line when it is such a
 *     choice or one lowercase word ("list kernels|suites|...", "model explain", "tune tsm2|ism2").
 */
#include "cli.h"
#include "common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

static const char main_usage[] =
    "usage: roofkit [--db FILE] [--device N|all|LIST] [--serial] [--quiet] COMMAND [ARGS...]\n"
    "       roofkit help COMMAND | roofkit COMMAND --help | roofkit --version\n";

static const char main_about[] =
    "roofkit measures what a GPU can do, what each kernel did, and what a model says it\n"
    "should have done, and keeps all three in one SQLite file.\n";

static const char main_output[] =
    "probe, run, model and list print their data on standard output as aligned text, or with\n"
    "--format csv or --format json as CSV (a header line always) or one JSON array of objects\n"
    "(NaN and infinities as null); export writes a database table the same ways. Progress,\n"
    "notes and errors go to standard error.\n";

static const char common_options[] =
    "  --db FILE     the database (default ./roofkit.db); %h (host), %p (pid), %r (the\n"
    "                launcher's rank), %q{VAR} (a variable) and %% are replaced, as\n"
    "                Nsight Systems does: --db 'job-%h-%r.db' gives one file per rank\n"
    "  --device D    the GPU: a CUDA index, a UUID (or a prefix of one), a list of them\n"
    "                or 'all' (see 'roofkit list gpus'); probe, run, tune and all run\n"
    "                on every GPU of a list at once, one roofkit per GPU. Default: the\n"
    "                GPU of the launcher's local rank under mpirun or srun, else 0\n"
    "  --serial      with several GPUs, one after another instead of at once\n"
    "  --quiet       print errors only\n"
    "  -h, --help    this help, or a command's help after its name\n"
    "  --version     print roofkit's version and the CUDA runtime, CUDA driver, CUPTI and\n"
    "                SQLite versions it was built with and runs with\n";

static const char exit_codes[] =
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
    "   13  'diff': a kernel is slower than the baseline beyond noise and the threshold\n"
    "  130  interrupted (rows already stored are complete)\n";

void rk_print_main_help(FILE *to)
{
    fprintf(to, "%s\n%s\ncommands:\n", main_usage, main_about);
    for (const struct rk_cmd *c = rk_commands; c->name; c++)
        fprintf(to, "  %-9s %s\n", c->name, c->summary);
    fprintf(to, "\n%s\ncommon options:\n%s\nexit codes:\n%s", main_output, common_options,
            exit_codes);
}

/* ------------------------------------------------------------------ man page */

/* Text as roff shows it verbatim: \ as \e, - as \- (a real minus, so that options copy and
 * paste), a line that starts with . or ' protected by \&. */
static void roff_text(FILE *to, const char *s)
{
    int bol = 1;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", to);
        bol = *s == '\n';
        if (*s == '\\')
            fputs("\\e", to);
        else if (*s == '-')
            fputs("\\-", to);
        else
            fputc(*s, to);
    }
}

/* A block kept as it is written (the help's own line breaks and alignment). */
static void roff_verbatim(FILE *to, const char *s)
{
    fputs(".nf\n", to);
    roff_text(to, s);
    if (*s && s[strlen(s) - 1] != '\n')
        fputc('\n', to);
    fputs(".fi\n", to);
}

/* Text without "usage: " in front of each synopsis line. */
static void roff_synopsis(FILE *to, const char *usage)
{
    fputs(".nf\n", to);
    for (const char *p = usage; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        const char *l = line;
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        if (strncmp(line, "usage: ", 7) == 0)
            l += 7;
        while (*l == ' ')
            l++;
        roff_text(to, l);
        fputc('\n', to);
        p += n + (nl ? 1 : 0);
    }
    fputs(".fi\n", to);
}

int rk_write_man(FILE *to)
{
    fprintf(to, ".\\\" roofkit.1 - generated by 'roofkit --help-man' from the help texts of\n"
                ".\\\" cli/commands.c and cli/help.c; edit those, not this file.\n");
    fprintf(to, ".TH ROOFKIT 1 \"\" \"roofkit %s\" \"User Commands\"\n", RK_VERSION);
    fputs(".SH NAME\nroofkit \\- GPU roofline and performance\\-model toolkit\n", to);
    fputs(".SH SYNOPSIS\n", to);
    roff_synopsis(to, main_usage);
    fputs(".SH DESCRIPTION\n", to);
    roff_text(to, main_about);
    fputs(".PP\n", to);
    roff_text(to, main_output);
    fputs(".SH COMMANDS\n", to);
    for (const struct rk_cmd *c = rk_commands; c->name; c++) {
        fprintf(to, ".SS %s\n", c->name);
        roff_text(to, c->summary);
        fputs(".\n.PP\n", to);
        roff_verbatim(to, c->usage);
    }
    fputs(".SH OPTIONS\nThe common options may stand before or after the command's name, never "
          "after \\-\\-.\n.PP\n",
          to);
    roff_verbatim(to, common_options);
    fputs(".SH EXIT STATUS\n", to);
    roff_verbatim(to, exit_codes);
    fputs(".SH FILES\n.TP\n.I ./roofkit.db\nthe database, unless \\-\\-db names another\n", to);
    fputs(".SH SEE ALSO\n.BR sqlite3 (1),\n.BR gnuplot (1)\n", to);
    return ferror(to) ? rk_error(RK_EIO, "cannot write the man page; check the disk") : RK_OK;
}

/* ---------------------------------------------------------------- completion */

/* A growing list of distinct words. */
struct words {
    char w[64][48];
    int n;
};

static void words_add(struct words *ws, const char *w, size_t len)
{
    if (len == 0 || len >= sizeof ws->w[0] || ws->n == 64)
        return;
    for (int i = 0; i < ws->n; i++)
        if (strlen(ws->w[i]) == len && strncmp(ws->w[i], w, len) == 0)
            return;
    memcpy(ws->w[ws->n], w, len);
    ws->w[ws->n][len] = '\0';
    ws->n++;
}

static int is_word_char(char c)
{
    return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '_';
}

/*
 * The lowercase words of a choice at p ("text|csv|json", "N|UUID|LIST|all", "explain"):
 * added to ws when the token has a separator, or (single) is one lowercase word. The token
 * ends at a blank, ']' or ')'.
 */
static void choice_words(const char *p, int single, struct words *ws)
{
    size_t end = strcspn(p, " \t\n])");
    int parts = 0;
    for (size_t i = 0; i < end; i++) /* non-empty parts between separators */
        parts += p[i] != '|' && p[i] != ',' && (i == 0 || p[i - 1] == '|' || p[i - 1] == ',');
    if (parts < (single ? 1 : 2))
        return;
    for (size_t i = 0; i < end;) {
        size_t j = i;
        while (j < end && p[j] != '|' && p[j] != ',')
            j++;
        int ok = j > i;
        for (size_t k = i; k < j; k++)
            ok &= is_word_char(p[k]);
        if (ok)
            words_add(ws, p + i, j - i);
        i = j + 1;
    }
}

/* Every "--name" of text. */
static void options_of(const char *text, struct words *ws)
{
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
        size_t n = 2;
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
            continue;
        while (is_word_char(p[n]) || (p[n] == '-' && is_word_char(p[n + 1])))
            n++;
        if (n > 2 && islower((unsigned char)p[2]))
            words_add(ws, p, n);
    }
}

/* The choices written after "--name " in text. */
static void values_of(const char *text, const char *opt, struct words *ws)
{
    size_t n = strlen(opt);
    for (const char *p = strstr(text, opt); p; p = strstr(p + n, opt))
        if (p[n] == ' ' && p[n + 1] != ' ' && (p == text || p[-1] != '-'))
            choice_words(p + n + 1, 0, ws);
}

/* The first words of `roofkit NAME WORD` synopsis lines. */
static void first_words(const struct rk_cmd *c, struct words *ws)
{
    char pat[64];
    size_t n = (size_t)snprintf(pat, sizeof pat, "roofkit %s ", c->name);
    for (const char *p = strstr(c->usage, pat); p; p = strstr(p + n, pat))
        if (p[n] != '[' && p[n] != '-')
            choice_words(p + n, 1, ws);
}

static void print_words(FILE *to, const struct words *ws)
{
    for (int i = 0; i < ws->n; i++)
        fprintf(to, "%s%s", i ? " " : "", ws->w[i]);
}

int rk_write_completion(FILE *to)
{
    struct words common = {0};
    options_of(common_options, &common);
    fprintf(to,
            "# bash completion for roofkit - generated by 'roofkit --help-completion' from the\n"
            "# help texts of cli/commands.c and cli/help.c; edit those, not this file.\n"
            "_roofkit()\n{\n"
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= nwords=0 i\n"
            "    [ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
            "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
            "        case ${COMP_WORDS[i]} in\n"
            "        --) [ -n \"$cmd\" ] && return 0 ;;\n"
            "        --db | --device) ((i++)) ;;\n"
            "        -*) ;;\n"
            "        *) if [ -z \"$cmd\" ]; then cmd=${COMP_WORDS[i]}; else ((nwords++)); fi ;;\n"
            "        esac\n"
            "    done\n"
            "    case $prev in\n"
            "    --db | --out) COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n"
            "    esac\n"
            "    local common=\"");
    print_words(to, &common);
    fputs("\" opts= words= values=\n    case $cmd in\n    '')\n        words=\"", to);
    for (const struct rk_cmd *c = rk_commands; c->name; c++)
        fprintf(to, "%s ", c->name);
    fputs("help\" ;;\n    help)\n        [ \"$nwords\" = 0 ] && words=\"", to);
    for (const struct rk_cmd *c = rk_commands; c->name; c++)
        fprintf(to, "%s%s", c == rk_commands ? "" : " ", c->name);
    fputs("\" ;;\n", to);
    for (const struct rk_cmd *c = rk_commands; c->name; c++) {
        struct words opts = {0}, first = {0};
        options_of(c->usage, &opts);
        first_words(c, &first);
        fprintf(to, "    %s)\n        opts=\"", c->name);
        print_words(to, &opts);
        fputs("\"\n", to);
        if (first.n) {
            fputs("        [ \"$nwords\" = 0 ] && words=\"", to);
            print_words(to, &first);
            fputs("\"\n", to);
        }
        fputs("        case $prev in\n", to);
        for (int i = 0; i < opts.n; i++) {
            struct words vals = {0};
            values_of(c->usage, opts.w[i], &vals);
            if (!vals.n)
                continue;
            fprintf(to, "        %s) values=\"", opts.w[i]);
            print_words(to, &vals);
            fputs("\" ;;\n", to);
        }
        fputs("        esac ;;\n", to);
    }
    fputs("    esac\n"
          "    if [ -z \"$values\" ] && [ \"$prev\" = --device ]; then\n"
          "        values=\"all\"\n"
          "    fi\n"
          "    if [ -n \"$values\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
          "    elif [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts $common\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    fi\n"
          "    return 0\n"
          "}\n"
          "complete -o bashdefault -o default -F _roofkit roofkit\n",
          to);
    return ferror(to) ? rk_error(RK_EIO, "cannot write the completion script; check the disk")
                      : RK_OK;
}
