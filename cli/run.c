/*
 * run.c - `roofkit run`: runs kernels of the suite (kernels/) over shapes and
 * parameter sets, verifies and times each through the kernels/ harness, takes its
 * analytic flops and bytes from model/ (kernels_cost) and stores one measurement
 * per configuration in one capture (db/).
 *
 * Order of work, so that bad input and a missing GPU never write:
 *   1. parse and check everything (names, parameters, sizes, --metrics);
 *   2. open the GPU (RK_ENOGPU); 3. open the database, store the device, begin the
 *   capture; 4. for each suite entry, shape, precision: prepare the inputs (a shape
 *   that does not fit is refused before allocating: RK_ENOMEM), then for each kernel
 *   and parameter combination measure and insert (one transaction per row),
 *   checking rk_interrupted between rows; 5. end the capture done / failed /
 *   interrupted; 6. once done, one line per kernel and precision against the faster
 *   cuBLAS call of the run (analysis_speedups), on stderr.
 * Counters (--metrics; the default set unless 'none'): after the timed repetitions each
 * configuration is launched once more, untimed, inside a CUPTI session (run_counters.c), and
 * the values are stored with the measurement in the same transaction. The timings never run
 * under the profiler. Without counter permission the timings are still stored (run_counters.c
 * says when the run warns and when it fails).
 * Data (one line per measurement) goes to stdout, progress and warnings to stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernels.h"
#include "kname.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAM_SPECS 8
#define MAX_VALUES      64
#define MAX_SHAPES      64

struct param_spec {
    char *name;
    long *values;
    int n;
};

struct run_opts {
    const struct kernels_suite *suite;
    char **kernel_pats; /* --kernel patterns, or NULL */
    int n_kernel_pats;
    struct rk_kname_filter *kernel_filters; /* each pattern by common/kname.h's rule */
    struct kernels_shape sizes[MAX_SHAPES]; /* --sizes, replaces the suite's shapes */
    int n_sizes;
    unsigned precisions; /* KERNELS_PREC_BIT mask */
    struct param_spec specs[MAX_PARAM_SPECS];
    int n_specs;
    struct kernels_options kopt;
    const char *metrics;          /* --metrics as given; NULL = the default set */
    struct rk_counters *counters; /* NULL for --metrics none */
    struct rk_table *table;       /* --format csv|json: the stored measurements; NULL: text */
    struct rk_energy *energy;     /* NVML's energy counter; NULL: no energy to read */
    int no_energy;                /* --energy off */
};

/* What a run has done so far, for progress, the summary and the exit code. */
struct tally {
    long done;   /* configurations gone through (stored, skipped or refused) */
    long stored; /* measurements stored */
    int failed;  /* stored but failed verification */
    int skipped; /* invalid for the shape or parameters */
};

/* The work: entries of (kernels, shapes). Built from the suite or from --kernel. */
struct plan_entry {
    const struct kernels_kernel *kernels[64];
    int n_kernels;
    const struct kernels_suite_entry *from; /* the suite entry whose shapes it runs; NULL: */
    const struct kernels_shape *shapes;     /* --sizes */
    int n_shapes;
};

struct plan {
    struct plan_entry entries[KERNELS_SUITE_MAX_ENTRIES];
    int n_entries;
    long total; /* measurements planned, for the progress line */
};

/* Shape i of a plan entry: its suite entry's (a list or a grid), or --sizes' */
static void plan_shape(const struct plan_entry *pe, int i, struct kernels_shape *out /* OUT */)
{
    if (pe->from)
        kernels_suite_entry_shape(pe->from, i, out);
    else
        *out = pe->shapes[i];
}

static void free_opts(struct run_opts *o)
{
    rk_counters_free(o->counters);
    rk_energy_free(o->energy);
    free(o->kopt.times_ns);
    for (int i = 0; o->kernel_filters && i < o->n_kernel_pats; i++)
        rk_kname_filter_release(&o->kernel_filters[i]);
    free(o->kernel_filters);
    rk_free_name_list(o->kernel_pats, o->n_kernel_pats);
    for (int i = 0; i < o->n_specs; i++) {
        free(o->specs[i].name);
        free(o->specs[i].values);
    }
}

/* Does --kernel pattern i select kernel `name`? kname.h's rule: "regex:EXPR" is an expression;
 * else kernels_match: a registry name selects that kernel alone ("tsm2", the entry point), any
 * other the kernels it is a prefix or glob of ("tsm2_*", "*_v3"). */
static int pattern_match(const struct run_opts *o, int i, const char *name)
{
    if (o->kernel_filters[i].regex)
        return rk_kname_filter_match(&o->kernel_filters[i], name);
    return kernels_match(o->kernel_pats[i], name);
}

static int kernel_wanted(const struct run_opts *o, const struct kernels_kernel *k)
{
    if (!o->kernel_pats)
        return 1;
    for (int i = 0; i < o->n_kernel_pats; i++)
        if (pattern_match(o, i, k->name))
            return 1;
    return 0;
}

static int parse_shape(const char *s, struct kernels_shape *sh)
{
    long v[3];
    int n = 0;
    const char *p = s, *x = NULL;
    char buf[32];
    while (n < 3) {
        x = strchr(p, 'x');
        size_t len = x ? (size_t)(x - p) : strlen(p);
        if (len == 0 || len >= sizeof buf)
            return RK_EUSAGE;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (rk_parse_long(buf, &v[n]) != RK_OK || v[n] < 1)
            return RK_EUSAGE;
        n++;
        if (!x)
            break;
        p = x + 1;
    }
    if (n == 1) {
        sh->m = sh->n = sh->k = v[0];
        return RK_OK;
    }
    if (n == 3 && !x) { /* a fourth dimension ("1x2x3x4") is an error, not ignored */
        sh->m = v[0];
        sh->n = v[1];
        sh->k = v[2];
        return RK_OK;
    }
    return RK_EUSAGE;
}

static int parse_sizes(const char *arg, struct run_opts *o)
{
    char **items = NULL;
    int n = 0, rc = RK_OK;
    if (rk_parse_name_list(arg, &items, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--sizes' needs sizes such as 1024 or 10240x16x10240");
    if (n > MAX_SHAPES) {
        rc = rk_error(RK_EUSAGE, "option '--sizes' takes at most %d sizes", MAX_SHAPES);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (parse_shape(items[i], &o->sizes[i]) != RK_OK) {
            rc = rk_error(RK_EUSAGE,
                          "bad size '%s': give N (N x N x N) or MxNxK with whole numbers >= 1",
                          items[i]);
            goto out;
        }
    }
    o->n_sizes = n;
out:
    rk_free_name_list(items, n);
    return rc;
}

static int parse_precisions(const char *arg, struct run_opts *o)
{
    char **items = NULL;
    int n = 0, rc = RK_OK;
    if (rk_parse_name_list(arg, &items, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--precision' needs fp32, fp64 or fp32,fp64");
    o->precisions = 0;
    for (int i = 0; i < n; i++) {
        int p = kernels_precision_parse(items[i]);
        if (p < 0) {
            rc = rk_error(RK_EUSAGE, "unknown precision '%s'; say fp32, fp64 or fp32,fp64",
                          items[i]);
            break;
        }
        o->precisions |= KERNELS_PREC_BIT(p);
    }
    rk_free_name_list(items, n);
    return rc;
}

static int parse_param(const char *arg, struct run_opts *o)
{
    const char *eq = strchr(arg, '=');
    struct param_spec *sp;
    if (o->n_specs == MAX_PARAM_SPECS)
        return rk_error(RK_EUSAGE, "at most %d --param options", MAX_PARAM_SPECS);
    if (!eq || eq == arg)
        return rk_error(RK_EUSAGE,
                        "option '--param' needs NAME=V1,V2,... such as t2=2,4,8, not "
                        "'%s'",
                        arg);
    sp = &o->specs[o->n_specs];
    sp->name = strndup(arg, (size_t)(eq - arg));
    if (!sp->name)
        return rk_error(RK_ENOMEM, "out of host memory");
    sp->values = NULL;
    if (rk_parse_long_list(eq + 1, &sp->values, &sp->n) != RK_OK || sp->n > MAX_VALUES) {
        int rc = rk_error(RK_EUSAGE,
                          "option '--param %s' needs up to %d whole numbers, such as "
                          "%s=2,4,8",
                          arg, MAX_VALUES, sp->name);
        free(sp->name);
        free(sp->values); /* parsed, but more than MAX_VALUES (fuzz_cmdline found the leak) */
        sp->values = NULL;
        return rc;
    }
    for (int i = 0; i < o->n_specs; i++)
        if (strcmp(o->specs[i].name, sp->name) == 0) {
            int rc = rk_error(RK_EUSAGE, "parameter '%s' is given twice; list its values once",
                              sp->name);
            free(sp->name);
            free(sp->values);
            return rc;
        }
    o->n_specs++;
    return RK_OK;
}

/* Comma-separated names of the kernels (for "valid names are ..." messages). */
static void kernel_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < kernels_count() && used < len; i++)
        used +=
            (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", kernels_get(i)->name);
}

static int parse_args(int argc, char **argv, struct run_opts *o)
{
    static const struct option longopts[] = {
        {"suite", required_argument, NULL, 's'},
        {"kernel", required_argument, NULL, 'k'},
        {"sizes", required_argument, NULL, 'S'},
        {"precision", required_argument, NULL, 'p'},
        {"param", required_argument, NULL, 'P'},
        {"reps", required_argument, NULL, 'r'},
        {"warm", no_argument, NULL, 'w'},
        {"metrics", required_argument, NULL, 'm'},
        {"energy", required_argument, NULL, 'E'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *suite = NULL;
    long reps = 10;
    int c, rc;

    o->precisions = KERNELS_PREC_BIT(KERNELS_FP32) | KERNELS_PREC_BIT(KERNELS_FP64);
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":s:k:S:p:P:r:wm:E:h", longopts)) != -1) {
        switch (c) {
        case 's':
            suite = optarg;
            break;
        case 'k':
            rk_free_name_list(o->kernel_pats, o->n_kernel_pats);
            o->kernel_pats = NULL;
            o->n_kernel_pats = 0; /* a bad second --kernel must not leave a stale count */
            if (strncmp(optarg, "regex:", 6) == 0) { /* one expression, commas and all */
                if (!(o->kernel_pats = calloc(1, sizeof *o->kernel_pats)) ||
                    !(o->kernel_pats[0] = strdup(optarg)))
                    return rk_error(RK_ENOMEM, "out of host memory");
                o->n_kernel_pats = 1;
            } else if (rk_parse_name_list(optarg, &o->kernel_pats, &o->n_kernel_pats) != RK_OK)
                return rk_error(RK_EUSAGE, "option '--kernel' needs kernel names; see "
                                           "'roofkit list kernels'");
            break;
        case 'S':
            if ((rc = parse_sizes(optarg, o)) != RK_OK)
                return rc;
            break;
        case 'p':
            if ((rc = parse_precisions(optarg, o)) != RK_OK)
                return rc;
            break;
        case 'P':
            if ((rc = parse_param(optarg, o)) != RK_OK)
                return rc;
            break;
        case 'r':
            if ((rc = rk_opt_long("reps", optarg, 3, 100000, &reps)) != RK_OK)
                return rc;
            break;
        case 'w':
            o->kopt.warm = 1;
            break;
        case 'm':
            o->metrics = optarg;
            break;
        case 'E':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
                return rk_error(RK_EUSAGE, "option '--energy' needs 'on' or 'off', not '%s'",
                                optarg);
            o->no_energy = strcmp(optarg, "off") == 0;
            break;
        case 'h':
            break; /* main() prints the usage before we get here */
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help run'",
                        argv[optind]);
    o->kopt.reps = (int)reps;
    /* every repetition's time is stored with the measurement (what `roofkit diff` compares) */
    if (!(o->kopt.times_ns = calloc((size_t)reps, sizeof *o->kopt.times_ns)))
        return rk_error(RK_ENOMEM, "out of host memory");

    if (suite) {
        o->suite = kernels_suite_find(suite);
        if (!o->suite) {
            char names[256] = "";
            size_t used = 0;
            for (int i = 0; i < kernels_suites_count(); i++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                         kernels_suite_get(i)->name);
            return rk_error(RK_EUSAGE, "no suite named '%s'; valid suites are %s", suite, names);
        }
    } else if (!o->kernel_pats) {
        o->suite = kernels_suite_find("default");
    }
    if (o->n_kernel_pats > 0 &&
        !(o->kernel_filters = calloc((size_t)o->n_kernel_pats, sizeof *o->kernel_filters)))
        return rk_error(RK_ENOMEM, "out of host memory");
    for (int i = 0; i < o->n_kernel_pats; i++)
        if ((rc = rk_kname_filter_init(&o->kernel_filters[i], o->kernel_pats[i], "--kernel")) !=
            RK_OK)
            return rc;
    for (int i = 0; i < o->n_kernel_pats; i++) {
        int hit = 0;
        for (int k = 0; k < kernels_count(); k++)
            hit |= pattern_match(o, i, kernels_get(k)->name);
        if (!hit) {
            char names[1024];
            kernel_names(names, sizeof names);
            return rk_error(RK_EUSAGE, "no kernel matches '%s'; valid kernels are %s",
                            o->kernel_pats[i], names);
        }
    }
    return RK_OK;
}

/* Every kernel of pats (a NULL-terminated suite pattern list) that --kernel keeps. */
static void add_kernels(struct plan_entry *e, const char *const *pats, const struct run_opts *o)
{
    for (int k = 0; k < kernels_count(); k++) {
        const struct kernels_kernel *kk = kernels_get(k);
        int hit = 0;
        for (int i = 0; pats && pats[i]; i++)
            hit |= kernels_match(pats[i], kk->name);
        if (!pats)
            hit = 1;
        if (hit && kernel_wanted(o, kk) && e->n_kernels < 64)
            e->kernels[e->n_kernels++] = kk;
    }
}

/* The shapes of the first suite entry that runs k (registry order), for --kernel alone. */
static const struct kernels_suite_entry *home_entry(const struct kernels_kernel *k)
{
    for (int s = 0; s < kernels_suites_count(); s++) {
        const struct kernels_suite *su = kernels_suite_get(s);
        for (int e = 0; e < su->n_entries; e++)
            for (int i = 0; su->entries[e].kernels[i]; i++)
                if (kernels_match(su->entries[e].kernels[i], k->name))
                    return &su->entries[e];
    }
    return NULL;
}

/* Index of spec j's parameter in k, or -1. */
static int spec_index(const struct kernels_kernel *k, const struct param_spec *sp)
{
    return kernels_param_index(k, sp->name);
}

static long combos(const struct kernels_kernel *k, const struct run_opts *o)
{
    long n = 1;
    for (int j = 0; j < o->n_specs; j++)
        if (spec_index(k, &o->specs[j]) >= 0)
            n *= o->specs[j].n;
    return n;
}

static int build_plan(const struct run_opts *o, struct plan *pl)
{
    memset(pl, 0, sizeof *pl);
    if (o->suite && o->n_sizes) {
        /* --sizes replaces the suite's shapes: one entry with all of its kernels. */
        struct plan_entry *pe = &pl->entries[0];
        for (int e = 0; e < o->suite->n_entries; e++) {
            struct plan_entry tmp;
            memset(&tmp, 0, sizeof tmp);
            add_kernels(&tmp, o->suite->entries[e].kernels, o);
            for (int i = 0; i < tmp.n_kernels; i++) {
                int dup = 0;
                for (int j = 0; j < pe->n_kernels; j++)
                    dup |= pe->kernels[j] == tmp.kernels[i];
                if (!dup && pe->n_kernels < 64)
                    pe->kernels[pe->n_kernels++] = tmp.kernels[i];
            }
        }
        pe->shapes = o->sizes;
        pe->n_shapes = o->n_sizes;
        pl->n_entries = pe->n_kernels ? 1 : 0;
        if (!pl->n_entries)
            return rk_error(RK_EUSAGE,
                            "suite '%s' has no kernel that --kernel selects; see "
                            "'roofkit list suites'",
                            o->suite->name);
    } else if (o->suite) {
        for (int e = 0; e < o->suite->n_entries; e++) {
            struct plan_entry *pe = &pl->entries[pl->n_entries];
            add_kernels(pe, o->suite->entries[e].kernels, o);
            if (!pe->n_kernels)
                continue;
            pe->from = &o->suite->entries[e];
            pe->n_shapes = kernels_suite_entry_size(pe->from);
            pl->n_entries++;
        }
        if (!pl->n_entries)
            return rk_error(RK_EUSAGE,
                            "suite '%s' has no kernel that --kernel selects; see "
                            "'roofkit list suites'",
                            o->suite->name);
    } else if (o->n_sizes) {
        add_kernels(&pl->entries[0], NULL, o);
        pl->entries[0].shapes = o->sizes;
        pl->entries[0].n_shapes = o->n_sizes;
        pl->n_entries = 1;
    } else {
        /* Each selected kernel on the shapes of the suite it belongs to. */
        for (int k = 0; k < kernels_count(); k++) {
            const struct kernels_kernel *kk = kernels_get(k);
            const struct kernels_suite_entry *home;
            struct plan_entry *pe = NULL;
            if (!kernel_wanted(o, kk))
                continue;
            home = home_entry(kk);
            if (!home)
                return rk_error(RK_EUSAGE, "kernel '%s' is in no suite; give --sizes", kk->name);
            for (int e = 0; e < pl->n_entries; e++)
                if (pl->entries[e].from == home)
                    pe = &pl->entries[e];
            if (!pe) {
                if (pl->n_entries == KERNELS_SUITE_MAX_ENTRIES)
                    return rk_error(RK_EUSAGE, "too many kernels from different suites; give "
                                               "--sizes or --suite");
                pe = &pl->entries[pl->n_entries++];
                pe->from = home;
                pe->n_shapes = kernels_suite_entry_size(home);
            }
            pe->kernels[pe->n_kernels++] = kk;
        }
    }

    /* Every --param must belong to at least one selected kernel. */
    for (int j = 0; j < o->n_specs; j++) {
        int used = 0;
        char names[512] = "";
        size_t len = 0;
        for (int e = 0; e < pl->n_entries; e++)
            for (int i = 0; i < pl->entries[e].n_kernels; i++) {
                const struct kernels_kernel *k = pl->entries[e].kernels[i];
                if (spec_index(k, &o->specs[j]) >= 0)
                    used = 1;
                for (int p = 0; p < k->n_params && len < sizeof names; p++)
                    if (!strstr(names, k->params[p].name))
                        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                                len ? ", " : "", k->params[p].name);
            }
        if (!used)
            return rk_error(RK_EUSAGE,
                            "no selected kernel has a parameter '%s'; their "
                            "parameters are %s",
                            o->specs[j].name, names[0] ? names : "(none)");
    }
    for (int e = 0; e < pl->n_entries; e++)
        for (int i = 0; i < pl->entries[e].n_kernels; i++) {
            const struct kernels_kernel *k = pl->entries[e].kernels[i];
            for (int p = 0; p < KERNELS_NPREC; p++)
                if ((o->precisions & KERNELS_PREC_BIT(p)) && (k->precisions & KERNELS_PREC_BIT(p)))
                    pl->total += pl->entries[e].n_shapes * combos(k, o);
        }
    if (pl->total == 0)
        return rk_error(RK_EUSAGE, "nothing to run: no selected kernel has the precisions asked "
                                   "for");
    return RK_OK;
}

/* --format csv|json: the columns of a stored measurement (GFLOP/s and GB/s as the text shows
 * them: 2mnk flops, each matrix moved once). */
static const struct rk_col run_cols[] = {
    {"kernel", RK_COL_TEXT, 0},
    {"precision", RK_COL_TEXT, 0},
    {"m", RK_COL_INT, 0},
    {"n", RK_COL_INT, 0},
    {"k", RK_COL_INT, 0},
    {"params", RK_COL_TEXT, 0},
    {"time_median_ns", RK_COL_REAL, 1},
    {"time_min_ns", RK_COL_REAL, 1},
    {"time_max_ns", RK_COL_REAL, 1},
    {"gflops", RK_COL_REAL, 1},
    {"gbs", RK_COL_REAL, 1},
    {"verified", RK_COL_INT, 0},
    {"rel_error", RK_COL_REAL, -1},
};

static int table_row(struct rk_table *t, const struct kernels_kernel *k,
                     const struct db_measurement *m, const struct kernels_shape *sh,
                     const struct kernels_result *r, double gflops, double gbs)
{
    int rc = rk_table_row(t);
    rk_table_str(t, k->name);
    rk_table_str(t, m->precision);
    rk_table_int(t, sh->m);
    rk_table_int(t, sh->n);
    rk_table_int(t, sh->k);
    rk_table_str(t, r->params_json);
    rk_table_real(t, r->time_median_ns);
    rk_table_real(t, r->time_min_ns);
    rk_table_real(t, r->time_max_ns);
    rk_table_real(t, gflops);
    rk_table_real(t, gbs);
    rk_table_int(t, r->verified != 0);
    rk_table_real(t, r->rel_error);
    return rc;
}

/* One measurement: measure, cost, store, print. Returns RK_OK, RK_EUSAGE (skipped) or fatal. */
static int measure_one(struct kernels_session *s, struct db *db, int64_t capture,
                       const struct kernels_kernel *k, int prec, const struct kernels_shape *sh,
                       const long *params, const struct run_opts *o, struct tally *t)
{
    struct kernels_result r;
    struct model_cost cost;
    struct db_measurement m;
    const struct db_metric *rows = NULL; /* counters, when collected */
    double e = prec == KERNELS_FP64 ? 8.0 : 4.0, secs, gflops, gbs;
    int have_cost, rc, nrows = 0;

    rc = kernels_session_measure(s, k, params, &o->kopt, &r);
    if (rc != RK_OK)
        return rc;
    if (rk_counters_active(o->counters)) {
        /* More launches, untimed, for the counters (the timing above ran without CUPTI): one
         * per pass group of the metrics, each collected in one pass. */
        const struct kernels_hook hook = {o->counters, rk_counters_begin, rk_counters_end};
        const int ng = rk_counters_groups(o->counters);
        for (int g = 0; g < ng && rk_counters_active(o->counters); g++) {
            rk_counters_set_group(o->counters, g);
            if ((rc = kernels_session_launch(s, k, r.params, o->kopt.warm, &hook)) != RK_OK)
                return rc;
        }
        rk_counters_rows(o->counters, &rows, &nrows);
    }
    have_cost = kernels_cost(k, prec, sh, r.params, &cost) == RK_OK;
    if (!have_cost)
        rk_warn("the model has no cost for %s %s %ldx%ldx%ld; flops and bytes stored as unknown",
                k->name, r.params_json, sh->m, sh->n, sh->k);

    rk_measurement_row(k, prec, sh, &r, have_cost ? &cost : NULL, &m);
    rk_counters_fill_launch(o->counters, &m); /* cuBLAS: the launch CUPTI recorded */
    if ((rc = rk_energy_read(o->energy, s, k, r.params, r.time_median_ns, &m)) != RK_OK)
        return rc;
    rc = db_insert_measurement(db, capture, &m, rows, nrows, NULL);
    if (rc != RK_OK)
        return rc;
    t->stored++;

    secs = r.time_median_ns * 1e-9;
    gflops = 2.0 * sh->m * sh->n * sh->k / secs / 1e9;
    gbs = ((double)sh->m * sh->k + (double)sh->k * sh->n + (double)sh->m * sh->n) * e / secs / 1e9;
    if (o->table)
        rc = table_row(o->table, k, &m, sh, &r, gflops, gbs);
    else
        printf("%-16s %s %7ldx%-6ldx%-7ld %-40s %11.2f us %9.1f GFLOP/s %7.1f GB/s %s %.1e\n",
               k->name, m.precision, sh->m, sh->n, sh->k, r.params_json, r.time_median_ns / 1e3,
               gflops, gbs, r.verified ? "verified" : "FAILED  ", r.rel_error);
    fflush(stdout);
    if (rc != RK_OK)
        return rc;
    if (!r.verified) {
        t->failed++;
        rk_warn("%s %s %ldx%ldx%ld %s failed verification: relative error %.3e (tolerance %.1e), "
                "%ld non-finite outputs",
                k->name, m.precision, sh->m, sh->n, sh->k, r.params_json, r.rel_error, r.tolerance,
                r.nonfinite);
    }
    return RK_OK;
}

/* Runs k on the prepared shape with every combination of the --param values. */
static int run_combos(struct kernels_session *s, struct db *db, int64_t capture,
                      const struct kernels_kernel *k, int prec, const struct kernels_shape *sh,
                      const struct run_opts *o, long total, struct tally *t)
{
    int idx[MAX_PARAM_SPECS] = {0}, map[MAX_PARAM_SPECS];
    for (int j = 0; j < o->n_specs; j++)
        map[j] = spec_index(k, &o->specs[j]);
    for (;;) {
        long p[KERNELS_MAX_PARAMS];
        char why[200];
        int rc;
        if (rk_interrupted)
            return RK_EINTR;
        for (int i = 0; i < k->n_params; i++)
            p[i] = k->params[i].def;
        for (int j = 0; j < o->n_specs; j++)
            if (map[j] >= 0)
                p[map[j]] = o->specs[j].values[idx[j]];
        rk_progress("run", t->done, total);
        if (kernels_check(k, prec, p, why, sizeof why) != RK_OK) {
            rk_warn("skipping %s %s: %s", k->name, kernels_precision_name(prec), why);
            t->skipped++;
        } else {
            rc = measure_one(s, db, capture, k, prec, sh, p, o, t);
            if (rc == RK_EUSAGE) {
                t->skipped++; /* invalid for this shape: message printed */
            } else if (rc != RK_OK) {
                return rc;
            }
        }
        t->done++;
        int j = 0;
        for (; j < o->n_specs; j++) {
            if (map[j] < 0)
                continue;
            if (++idx[j] < o->specs[j].n)
                break;
            idx[j] = 0;
        }
        if (j == o->n_specs)
            return RK_OK;
    }
}

/* The run summed up against cuBLAS (analysis_speedups): one line per kernel and precision that
 * ran beside a cuBLAS call of this run (the grid suites run both calls on every shape); then
 * against the floors (analysis_floors), where the run measured move beside it. */
static void speedup_lines(struct db *db, int64_t capture)
{
    struct db_measurement_row *rows = NULL;
    struct analysis_speedup sp[32];
    int n = 0, ns = 0;
    if (db_query_measurements(db, capture, &rows, &n) != RK_OK)
        return; /* the rows are stored; the summary is not worth a failure */
    (void)analysis_speedups(rows, n, sp, 32, &ns); /* more than 32: the first 32 */
    for (int i = 0; i < ns; i++)
        rk_info("%s %s: %.3fx the faster cuBLAS call of this run (geomean over %d shape%s; worst "
                "%.3fx at %lldx%lldx%lld)",
                sp[i].kernel, sp[i].precision, sp[i].geomean, sp[i].shapes,
                sp[i].shapes == 1 ? "" : "s", sp[i].worst, (long long)sp[i].worst_m,
                (long long)sp[i].worst_n, (long long)sp[i].worst_k);
    (void)analysis_floors(rows, n, sp, 32, &ns);
    for (int i = 0; i < ns; i++)
        rk_info("%s %s: at %.3f of its floor, the shape's bytes moved alone (geomean over %d "
                "shape%s; worst %.3f at %lldx%lldx%lld; %d below 0.9)",
                sp[i].kernel, sp[i].precision, sp[i].geomean, sp[i].shapes,
                sp[i].shapes == 1 ? "" : "s", sp[i].worst, (long long)sp[i].worst_m,
                (long long)sp[i].worst_n, (long long)sp[i].worst_k, sp[i].below_90);
    db_free_measurements(rows, n);
}

int cmd_run(int argc, char **argv, struct rk_ctx *ctx)
{
    struct run_opts o;
    struct plan pl;
    struct kernels_session *s = NULL;
    int64_t capture = 0;
    struct tally t = {0, 0, 0, 0};
    enum rk_format fmt = RK_FMT_TEXT;
    int rc, nomem = 0;

    memset(&o, 0, sizeof o);
    rc = rk_take_format(&argc, argv, &fmt);
    if (rc == RK_OK)
        rc = parse_args(argc, argv, &o);
    if (rc == RK_OK)
        rc = build_plan(&o, &pl);
    if (rc == RK_OK)
        rc = rk_counters_new(o.metrics, ctx->device, &o.counters);
    if (rc != RK_OK)
        goto out;

    /* The GPU first: no GPU, no database write. */
    rc = kernels_session_open(ctx->device, 0x726f6f666b6974ULL, &s);
    if (rc != RK_OK)
        goto out;
    rc = rk_ctx_open_db(ctx, 1);
    if (rc != RK_OK)
        goto out;
    rc = rk_begin_device_capture(ctx, kernels_session_device(s), DB_CAPTURE_RUN, &capture);
    if (rc == RK_OK) /* what the entry point tsm2 chooses with (datasheet figures without) */
        rk_session_ceilings(ctx, s);
    if (rc == RK_OK && !o.no_energy)
        rc = rk_energy_new(kernels_session_device(s)->pci_bus_id, &o.energy);
    if (rc == RK_OK && fmt != RK_FMT_TEXT)
        rc = rk_table_new(fmt, stdout, run_cols, 13, &o.table);
    if (rc != RK_OK)
        goto out;

    for (int e = 0; e < pl.n_entries && rc == RK_OK; e++) {
        const struct plan_entry *pe = &pl.entries[e];
        for (int si = 0; si < pe->n_shapes && rc == RK_OK; si++) {
            struct kernels_shape shape;
            plan_shape(pe, si, &shape);
            for (int prec = 0; prec < KERNELS_NPREC && rc == RK_OK; prec++) {
                int any = 0;
                if (!(o.precisions & KERNELS_PREC_BIT(prec)))
                    continue;
                for (int i = 0; i < pe->n_kernels; i++)
                    any |= (pe->kernels[i]->precisions & KERNELS_PREC_BIT(prec)) != 0;
                if (!any)
                    continue;
                if (rk_interrupted) {
                    rc = RK_EINTR;
                    break;
                }
                rc = kernels_session_prepare(s, prec, &shape);
                if (rc == RK_ENOMEM) { /* refused before allocating: go on with the rest */
                    nomem++;
                    for (int i = 0; i < pe->n_kernels; i++)
                        if (pe->kernels[i]->precisions & KERNELS_PREC_BIT(prec))
                            t.done += combos(pe->kernels[i], &o);
                    rc = RK_OK;
                    continue;
                }
                for (int i = 0; i < pe->n_kernels && rc == RK_OK; i++) {
                    const struct kernels_kernel *k = pe->kernels[i];
                    if (!(k->precisions & KERNELS_PREC_BIT(prec)))
                        continue;
                    rc = run_combos(s, ctx->db, capture, k, prec, &shape, &o, pl.total, &t);
                }
            }
        }
    }
    rk_progress_end();
    rk_counters_note(o.counters, ctx->db, capture, t.stored);
    rk_energy_summary(o.energy);

    if (rc == RK_EINTR || (rc == RK_OK && rk_interrupted)) {
        db_capture_mark_interrupted(ctx->db, capture);
        rc = rk_error(RK_EINTR,
                      "interrupted after %ld of %ld measurements; the stored rows are "
                      "complete",
                      t.done, pl.total);
        goto out;
    }
    if (rc != RK_OK) {
        db_capture_end(ctx->db, capture, DB_FAILED);
        goto out;
    }
    rc = db_capture_end(ctx->db, capture, DB_DONE);
    if (rc != RK_OK)
        goto out;
    rk_info("capture %lld: %ld measurements, %d failed verification, %d skipped",
            (long long)capture, t.stored, t.failed, t.skipped);
    speedup_lines(ctx->db, capture);
    if (t.failed)
        rc = rk_error(RK_EVERIFY, "%d measurement(s) failed verification (stored with their error)",
                      t.failed);
    else if (nomem)
        rc = rk_error(RK_ENOMEM, "%d shape(s) did not fit in GPU memory and were not run", nomem);
    else
        rc = rk_counters_status(o.counters, t.stored);
out:
    if (o.table) { /* what was stored, also after a failure: a whole CSV or JSON text */
        int wrc = rk_table_end(o.table);
        rc = rc == RK_OK ? wrc : rc;
    }
    kernels_session_close(s);
    free_opts(&o);
    return rc;
}
