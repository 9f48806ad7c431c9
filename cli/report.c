/*
 * report.c - `roofkit report`: checks the command line, opens the database
 * read-only and writes the report directory through report/ (report_write).
 * Bad input is refused before the database is opened: nothing is read or written.
 * The selection (--capture, --device, --kernel, --family) is parsed here and checked
 * against the database by report/ before it writes anything; so is --baseline's comparison
 * (report/compare.c, as `roofkit diff` compares).
 */
#define _GNU_SOURCE
#include "analysis.h" /* ANALYSIS_CMP_NOISE */
#include "cli.h"
#include "common.h"
#include "report.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The parsed selection's storage. */
struct sel_lists {
    long long *caps;
    char **devs, **fams;
    int ndevs, nfams;
};

static void sel_lists_free(struct sel_lists *l)
{
    free(l->caps);
    rk_free_name_list(l->devs, l->ndevs);
    rk_free_name_list(l->fams, l->nfams);
}

static int parse_captures(const char *arg, struct sel_lists *l, struct report_select *s)
{
    long *v = NULL;
    int n = 0, rc = rk_parse_long_list(arg, &v, &n);
    if (rc == RK_ENOMEM)
        return rk_error(RK_ENOMEM, "out of memory");
    if (rc != RK_OK)
        return rk_error(RK_EUSAGE,
                        "option '--capture' needs capture ids such as 2 or 2,5, not '%s'", arg);
    free(l->caps);
    if (!(l->caps = malloc((size_t)n * sizeof *l->caps))) {
        free(v);
        return rk_error(RK_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        l->caps[i] = v[i];
    free(v);
    s->captures = l->caps;
    s->ncaptures = n;
    return RK_OK;
}

static int parse_names(const char *arg, const char *option, const char *example, char ***names,
                       int *n)
{
    rk_free_name_list(*names, *n);
    *names = NULL;
    *n = 0;
    int rc = rk_parse_name_list(arg, names, n);
    if (rc == RK_ENOMEM)
        return rk_error(RK_ENOMEM, "out of memory");
    if (rc != RK_OK)
        return rk_error(RK_EUSAGE, "option '%s' needs %s, not '%s'", option, example, arg);
    return RK_OK;
}

/* --baseline A or A:B (capture ids) into base. */
static int parse_baseline(const char *arg, struct report_baseline *base)
{
    char a[32] = "";
    const char *colon = strchr(arg, ':');
    long va = 0, vb = 0;
    size_t la = colon ? (size_t)(colon - arg) : strlen(arg);
    if (la < sizeof a)
        memcpy(a, arg, la), a[la] = '\0';
    if (la >= sizeof a || rk_parse_long(a, &va) != RK_OK || va < 1 ||
        (colon && (rk_parse_long(colon + 1, &vb) != RK_OK || vb < 1)))
        return rk_error(RK_EUSAGE,
                        "option '--baseline' needs a capture id A or A:B such as 2 or 2:5, not "
                        "'%s'",
                        arg);
    base->capture = va;
    base->current = vb;
    return RK_OK;
}

int cmd_report(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"capture", required_argument, NULL, 'c'},
        {"kernel", required_argument, NULL, 'k'},
        {"family", required_argument, NULL, 'F'},
        {"baseline", required_argument, NULL, 'B'},
        {"threshold", required_argument, NULL, 't'},
        {"noise", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    struct report_baseline base = {0, 0, 0.05, ANALYSIS_CMP_NOISE};
    struct report_opts ro = {.out_dir = "roofkit-report", .formats = REPORT_ALL};
    struct sel_lists l = {NULL, NULL, NULL, 0, 0};
    char *out_dir = NULL;
    int c, rc = RK_OK;
    rk_getopt_reset();
    while (rc == RK_OK && (c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg)
                rc = rk_error(RK_EUSAGE, "option '--out' needs a directory name");
            ro.out_dir = optarg;
            break;
        case 'f':
            if (report_parse_formats(optarg, &ro.formats) != RK_OK)
                rc = rk_error(RK_EUSAGE, "option '--format' takes html,md,csv, not '%s'", optarg);
            break;
        case 'c':
            rc = parse_captures(optarg, &l, &ro.select);
            break;
        case 'k':
            ro.select.kernel = optarg;
            break;
        case 'F':
            rc = parse_names(optarg, "--family", "family names such as tsm2,cublas or none",
                             &l.fams, &l.nfams);
            ro.select.families = (const char *const *)l.fams;
            ro.select.nfamilies = l.nfams;
            break;
        case 'B':
            rc = parse_baseline(optarg, &base);
            break;
        case 't':
            rc = rk_opt_percent("threshold", optarg, &base.threshold);
            break;
        case 'n':
            rc = rk_opt_percent("noise", optarg, &base.noise);
            break;
        default:
            rc = RK_EUSAGE;
        }
    }
    if (rc == RK_OK && optind < argc)
        rc = rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help report'",
                      argv[optind]);
    /* --device (a common option): the database's device ids or UUIDs; 'all' selects all */
    if (rc == RK_OK && ctx->device_spec && strcmp(ctx->device_spec, "all") != 0) {
        rc = parse_names(ctx->device_spec, "--device", "device ids or UUIDs", &l.devs, &l.ndevs);
        ro.select.devices = (const char *const *)l.devs;
        ro.select.ndevices = l.ndevs;
    }
    if (rc == RK_OK)
        rc = report_select_check(&ro.select);
    if (rc == RK_OK)
        rc = rk_ctx_expand(ctx, ro.out_dir, &out_dir);
    if (rc == RK_OK) {
        ro.out_dir = out_dir;
        if ((rc = rk_ctx_open_db(ctx, 0)) == RK_OK)
            rc = report_write_compare(ctx->db, &ro, base.capture ? &base : NULL);
    }
    free(out_dir);
    sel_lists_free(&l);
    return rc;
}
