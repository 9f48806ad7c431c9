/*
 * tune.c - `roofkit tune tsm2|ism2`: the parameters the model chooses (004 §3.6.3 Alg. 5
 * by gradient descent, and the exhaustive integer search; for ISM2 also the tcf model of
 * model/tune.c) against an empirical sweep of the same space on the GPU (kernels/tune.c),
 * and the regret time(model's choice) / time(best found) (docs/model.md "tune").
 *
 * Order of work, so that bad input, a missing GPU and a missing probe never write:
 *   1. parse and check everything (family, kernel, shape, precision, axes);
 *   2. open the GPU (RK_ENOGPU);
 *   3. read the device's measured ceilings from the database (RK_ENODATA when the file,
 *      the device or its probe capture is missing: "run 'roofkit probe' first"), build
 *      the model's GPU; prepare the inputs (RK_ENOMEM, refused before allocating);
 *   4. store the device, begin a capture of kind 'tune';
 *   5. measure the kernel's defaults, then every configuration of the space (invalid ones
 *      are skipped and counted, never stored), one measurement per row, checking
 *      rk_interrupted between rows;
 *   6. the model's choices: C of §3.6.2 (regs_fixed) from the registers the sweep's
 *      kernels compiled to (offline profiling, as the seed says; no time is used), both
 *      searches, each choice mapped onto a configuration the kernel instantiates
 *      (map_by_model; the nearest runnable one when it cannot run) and looked up in the
 *      sweep (measured once more when it is not in it);
 *   7. the capture's note holds the result as one JSON object (the model's choices with
 *      their measurement ids, the best, the regrets), the same object --json prints.
 * The model's GPU comes from analysis_tsm2_gpu, as `roofkit model` builds it.
 */
#define _POSIX_C_SOURCE 200809L
#include "analysis.h"
#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernels.h"
#include "model.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OVERRIDE 32

struct tune_opts {
    int ism2; /* 0: tsm2, 1: ism2 */
    struct kernels_shape shape;
    int prec;
    const struct kernels_kernel *kernel;
    struct kernels_options kopt;
    long top;
    int json;
    long *override; /* --t1 (tsm2) or --tcf (ism2) values, or NULL */
    int n_override;
    int entry; /* --exhaustive or --kernel tsm2: the entry point's choice against a sweep */
};

/* One measured configuration. */
enum { ROLE_DEFAULT = 1, ROLE_SWEEP = 2, ROLE_ALG5 = 4, ROLE_EXH = 8, ROLE_EXTRA = 16 };
struct tune_row {
    long params[KERNELS_MAX_PARAMS]; /* resolved */
    char json[384];
    double time_ns; /* median */
    int verified;
    int64_t id; /* measurement id */
    int registers;
    long smem; /* static + dynamic per block */
    int role;
};

/* The model's choice of one search, before and after mapping. */
struct tune_choice {
    const char *name; /* "alg5", "exhaustive" */
    struct model_tsm2_choice c;
    long tcf;                      /* ISM2: the tcf model's choice at the mapped t3; 0 for TSM2 */
    double tcf_pred_s;             /* its predicted time */
    long want[KERNELS_MAX_PARAMS]; /* the configuration asked for (unresolved) */
    int mapped;                    /* t2 or t3 moved onto an instantiated value */
    char mapping[256];             /* what moved, in words */
    int row;                       /* index in rows, -1 when not measured */
};

struct tune_state {
    struct tune_row *rows;
    int n, cap;
    long skipped, failed;
    char first_skip[480];
};

/* ------------------------------------------------------------------ options */

static int parse_args(int argc, char **argv, struct tune_opts *o)
{
    static const struct option opts[] = {
        {"m", required_argument, NULL, 'm'},
        {"n", required_argument, NULL, 'n'},
        {"k", required_argument, NULL, 'k'},
        {"precision", required_argument, NULL, 'p'},
        {"kernel", required_argument, NULL, 'K'},
        {"reps", required_argument, NULL, 'r'},
        {"top", required_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'j'},
        {"t1", required_argument, NULL, '1'},
        {"tcf", required_argument, NULL, 'c'},
        {"exhaustive", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *kname = NULL, *axis = NULL;
    long reps = 5;
    int c;

    o->prec = KERNELS_FP32;
    o->top = 5;
    rk_getopt_reset();
    /* argv[0] is "tune", so rk_getopt's messages name the command; GNU getopt moves
     * the family ("tsm2"/"ism2") behind the options. */
    while ((c = rk_getopt(argc, argv, ":h", opts)) != -1) {
        switch (c) {
        case 'm':
            if (rk_opt_long("m", optarg, 1, 1L << 40, &o->shape.m) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'n':
            if (rk_opt_long("n", optarg, 1, 1L << 40, &o->shape.n) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'k':
            if (rk_opt_long("k", optarg, 1, 1L << 40, &o->shape.k) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'p':
            if (strcmp(optarg, "fp32") != 0 && strcmp(optarg, "fp64") != 0)
                return rk_error(RK_EUSAGE, "option '--precision' takes fp32 or fp64, not '%s'",
                                optarg);
            o->prec = kernels_precision_parse(optarg);
            break;
        case 'K':
            kname = optarg;
            break;
        case 'r':
            if (rk_opt_long("reps", optarg, 3, 100000, &reps) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'T':
            if (rk_opt_long("top", optarg, 1, 1000, &o->top) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'x':
            o->entry = 1;
            break;
        case '1':
        case 'c':
            if (axis)
                return rk_error(RK_EUSAGE, "give '--%s' once", axis);
            axis = c == '1' ? "t1" : "tcf";
            if (rk_parse_long_list(optarg, &o->override, &o->n_override) != RK_OK)
                return rk_error(RK_EUSAGE, "option '--%s' needs whole numbers such as 64,128",
                                axis);
            break;
        case 'h':
            break; /* main() prints the usage before we get here */
        default:
            return RK_EUSAGE;
        }
    }
    if (optind >= argc || (strcmp(argv[optind], "tsm2") != 0 && strcmp(argv[optind], "ism2") != 0))
        return rk_error(RK_EUSAGE, "tune needs 'tsm2' or 'ism2', e.g. 'roofkit tune tsm2 --m 10240 "
                                   "--n 8 --k 10240'");
    o->ism2 = strcmp(argv[optind], "ism2") == 0;
    if (optind + 1 < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help tune'",
                        argv[optind + 1]);
    if (!o->shape.m || !o->shape.n || !o->shape.k)
        return rk_error(RK_EUSAGE, "tune needs --m, --n and --k; see 'roofkit help tune'");
    if (axis && strcmp(axis, o->ism2 ? "tcf" : "t1") != 0)
        return rk_error(RK_EUSAGE, "option '--%s' belongs to 'tune %s'", axis,
                        o->ism2 ? "tsm2" : "ism2");
    if (o->entry && kname && strcmp(kname, "tsm2") != 0)
        return rk_error(RK_EUSAGE, "--exhaustive judges the entry point tsm2, not '%s'", kname);
    if (!kname)
        kname = o->entry ? "tsm2" : o->ism2 ? "ism2_opt1" : "tsm2_v3";
    o->kernel = kernels_find(kname);
    if (o->kernel && strcmp(kname, "tsm2") == 0) { /* the entry point: its choice's regret */
        if (axis)
            return rk_error(RK_EUSAGE, "option '--%s' tunes a variant, not the entry point tsm2",
                            axis);
        o->entry = 1;
        o->kopt.reps = (int)reps;
        return RK_OK;
    }
    if (!kernels_tune_kernel_ok(o->kernel, o->ism2))
        return rk_error(RK_EUSAGE, "'tune %s' tunes %s, not '%s'", o->ism2 ? "ism2" : "tsm2",
                        o->ism2 ? "ism2_opt1 or ism2_opt2" : "tsm2_v3 or tsm2_v2", kname);
    o->kopt.reps = (int)reps;
    return RK_OK;
}

/* ------------------------------------------------------------ the ceilings */

/* Ceilings the tcf model uses beyond the TSM2 model's GPU (NaN: not measured). */
struct tune_extra {
    double bw_l2;          /* bw_l2_read [B/s] */
    double mem_lat_loaded; /* lat_dram_loaded [cycles]: Little's law under load */
};

/*
 * Loads the ceilings of the session's device and fills *g (docs/model.md "Which numbers":
 * the same ceilings `roofkit model` gives the TSM2 model, analysis_tsm2_gpu, with the GPU's
 * own description as the session sees it now). RK_OK, RK_ENODATA (printed: no database, no
 * device, no probe capture, a ceiling missing) or RK_EDB. *x gets the ceilings beyond the
 * TSM2 model's GPU that the tcf model uses.
 */
static int load_gpu(struct rk_ctx *ctx, const struct rk_gpu *kd, int prec,
                    struct analysis_device *d, struct model_gpu *g, struct tune_extra *x)
{
    int rc;
    const int e = prec == KERNELS_FP64 ? 8 : 4;
    const char *peak = e == 8 ? "peak_fp64_fma" : "peak_fp32_fma";
    const char *lat = e == 8 ? "lat_fma_fp64" : "lat_fma_fp32";
    const struct db_ceiling *used[ANALYSIS_USE_COUNT];
    struct analysis_device live;
    const char *why;

    if (access(ctx->db_path, F_OK) != 0)
        return rk_error(RK_ENODATA,
                        "no database '%s': tune needs this GPU's measured ceilings; run 'roofkit "
                        "probe' first (or pass --db)",
                        ctx->db_path);
    rc = rk_ctx_open_db(ctx, 1);
    if (rc == RK_OK)
        rc = analysis_device_find_uuid(ctx->db, kd->uuid, d);
    if (rc == RK_ENODATA || (rc == RK_OK && d->probe_capture == 0))
        return rk_error(RK_ENODATA,
                        "no probe capture of '%s' in '%s': tune needs its measured ceilings; "
                        "run 'roofkit probe' on this GPU first",
                        kd->name, ctx->db_path);
    if (rc != RK_OK)
        return rc;

    live = *d; /* the stored ceilings, the GPU as the session sees it (its clock now) */
    rk_device_row(kd, NULL, &live.dev);
    analysis_tsm2_gpu(&live, e, g, used);
    x->bw_l2 = analysis_ceiling_si(analysis_ceiling(d, NULL, ANALYSIS_USE_L2));
    x->mem_lat_loaded = analysis_ceiling_si(analysis_find_ceiling(d, "lat_dram_loaded"));

    why = !isfinite(g->peak_flops)            ? peak
          : !isfinite(g->bandwidth)           ? "bw_dram_read"
          : !isfinite(g->mem_latency_cycles)  ? "lat_chase_dram"
          : !isfinite(g->comp_latency_cycles) ? lat
                                              : NULL;
    if (why)
        return rk_error(RK_ENODATA,
                        "'%s' has no '%s' ceiling for '%s': the model needs it; run 'roofkit "
                        "probe' (without --only) on this GPU first",
                        ctx->db_path, why, kd->name);
    if ((why = model_check_gpu(g)) != NULL)
        return rk_error(RK_ENODATA,
                        "the ceilings of '%s' in '%s' do not describe a GPU: %s; run "
                        "'roofkit probe' again",
                        kd->name, ctx->db_path, why);
    return RK_OK;
}

int rk_session_ceilings(struct rk_ctx *ctx, struct kernels_session *s)
{
    const struct rk_gpu *kd = kernels_session_device(s);
    struct analysis_device d;
    int set = 0;
    memset(&d, 0, sizeof d);
    if (!ctx->db || analysis_device_find_uuid(ctx->db, kd->uuid, &d) != RK_OK)
        return 0;
    if (d.probe_capture != 0) {
        struct analysis_device live = d; /* the stored ceilings, the GPU as it is now */
        const double lat = analysis_ceiling_si(analysis_find_ceiling(&d, "lat_dram_loaded"));
        rk_device_row(kd, NULL, &live.dev);
        for (int prec = 0; prec < KERNELS_NPREC; prec++) {
            const struct db_ceiling *used[ANALYSIS_USE_COUNT];
            struct model_gpu g;
            analysis_tsm2_gpu(&live, prec == KERNELS_FP64 ? 8 : 4, &g, used);
            if (isfinite(lat) && lat > 0) /* Little's law under load, as tune's tcf model */
                g.mem_latency_cycles = lat;
            if (model_check_gpu(&g) == NULL) {
                kernels_session_set_gpu(s, prec, &g);
                set++;
            }
        }
    }
    analysis_device_release(&d);
    return set;
}

/* ------------------------------------------------------------------ sweep */

static int find_row(const struct tune_state *st, const struct kernels_tune_space *sp,
                    const long *resolved)
{
    for (int i = 0; i < st->n; i++)
        if ((st->rows[i].role & ~ROLE_DEFAULT) &&
            kernels_tune_same(sp, st->rows[i].params, resolved))
            return i;
    return -1;
}

static void note_skip(struct tune_state *st, const char *json, const char *why)
{
    if (!st->skipped)
        snprintf(st->first_skip, sizeof st->first_skip, "%.255s: %.200s", json, why);
    st->skipped++;
}

/*
 * Measures params (unresolved) and stores it as one measurement of capture. *row receives
 * the new row's index, or -1 when the configuration is invalid (skipped, counted). RK_OK,
 * or a fatal error.
 */
static int measure_store(struct kernels_session *s, struct db *db, int64_t capture,
                         const struct tune_opts *o, const long *params, int role,
                         struct tune_state *st, int *row)
{
    const struct kernels_kernel *k = o->kernel;
    struct kernels_result r;
    struct model_cost cost;
    struct db_measurement m;
    struct tune_row *tr;
    char why[200], json[384];
    long resolved[KERNELS_MAX_PARAMS];
    int have_cost, rc;

    *row = -1;
    if (kernels_session_check(s, k, params, resolved, why, sizeof why) != RK_OK) {
        kernels_params_json(k, params, json, sizeof json);
        note_skip(st, json, why);
        return RK_OK;
    }
    rc = kernels_session_measure(s, k, params, &o->kopt, &r);
    if (rc == RK_EUSAGE) { /* refused at launch (message printed): skip it too */
        kernels_params_json(k, params, json, sizeof json);
        note_skip(st, json, "refused at launch");
        return RK_OK;
    }
    if (rc != RK_OK)
        return rc;
    have_cost = kernels_cost(k, o->prec, &o->shape, r.params, &cost) == RK_OK;
    rk_measurement_row(k, o->prec, &o->shape, &r, have_cost ? &cost : NULL, &m);

    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 64;
        struct tune_row *grown = realloc(st->rows, sizeof *grown * (size_t)cap);
        if (!grown)
            return rk_error(RK_ENOMEM, "out of host memory");
        st->rows = grown;
        st->cap = cap;
    }
    tr = &st->rows[st->n];
    memset(tr, 0, sizeof *tr);
    rc = db_insert_measurement(db, capture, &m, NULL, 0, &tr->id);
    if (rc != RK_OK)
        return rc;
    memcpy(tr->params, r.params, sizeof tr->params);
    snprintf(tr->json, sizeof tr->json, "%s", r.params_json);
    tr->time_ns = r.time_median_ns;
    tr->verified = r.verified;
    tr->registers = r.registers;
    tr->smem = r.smem_static + r.smem_dynamic;
    tr->role = role;
    if (!r.verified) {
        st->failed++;
        rk_warn("%s %s %s failed verification: relative error %.3e (tolerance %.1e); stored, "
                "not ranked",
                k->name, m.precision, r.params_json, r.rel_error, r.tolerance);
    }
    *row = st->n++;
    return RK_OK;
}

/* ------------------------------------------------------------------ model */

/* C of 004 §3.6.2 by offline profiling: the median over the sweep's verified rows of the
 * registers the kernel compiled to minus the tiles' (3 t2 + 2 t3) e/4. */
static double regs_fixed(const struct tune_state *st, const struct tune_opts *o, int i_t2, int i_t3)
{
    double *v = malloc(sizeof *v * (size_t)(st->n ? st->n : 1)), r;
    int n = 0;
    const double e = o->prec == KERNELS_FP64 ? 8 : 4;
    if (!v)
        return 0;
    for (int i = 0; i < st->n; i++) {
        const struct tune_row *t = &st->rows[i];
        if (!t->verified || t->registers <= 0)
            continue;
        double t2 = (double)t->params[i_t2], t3 = (double)t->params[i_t3];
        if (t2 > o->shape.n)
            t2 = (double)o->shape.n;
        v[n++] = model_tsm2_regs_fixed(t->registers, t2, t3, (int)e);
    }
    if (n == 0 || model_percentile(v, (size_t)n, 50.0, &r) != RK_OK) /* the median */
        r = 0;
    free(v);
    return r;
}

static int axis_of(const struct kernels_tune_space *sp, const char *name)
{
    for (int a = 0; a < sp->n_axes; a++)
        if (strcmp(sp->axes[a].name, name) == 0)
            return a;
    return -1;
}

/* Maps value v of the model onto axis a of the space; says so in ch->mapping. */
static long map_axis(const struct kernels_tune_space *sp, int a, long v, struct tune_choice *ch)
{
    const struct kernels_tune_axis *ax = &sp->axes[a];
    int i = model_tune_nearest((double)v, ax->values, ax->n);
    long to = i >= 0 ? ax->values[i] : v;
    if (to != v) {
        size_t len = strlen(ch->mapping);
        snprintf(ch->mapping + len, sizeof ch->mapping - len, "%s%s %ld -> %ld", len ? ", " : "",
                 ax->name, v, to);
        ch->mapped = 1;
    }
    return to;
}

/*
 * The verified sweep row nearest to `want` when `want` itself cannot run (the model knows
 * the seed's registers and B tile, not the H100 kernel's cp.async ring of A, so its t3 may
 * not fit in shared memory at the default t1): t1 stays the kernel's default where any row
 * with it ran (Alg. 5 leaves t1 to offline profiling, so the model never chose another),
 * then the smallest |log2| distance over t2 and t3; -1 when no row qualifies. Moving t1
 * instead (t3 = 16 at t1 = 64) cost 1.16-1.60x on the H100's fp64 n = 16 shapes.
 */
static int nearest_runnable(const struct tune_state *st, const long *want, int i_t1, int i_t2,
                            int i_t3)
{
    int best = -1;
    double best_d = INFINITY;
    for (int r = 0; r < st->n; r++) {
        const struct tune_row *t = &st->rows[r];
        double d;
        if (!(t->role & ROLE_SWEEP) || !t->verified)
            continue;
        d = fabs(log2((double)t->params[i_t3] / (double)want[i_t3]));
        if (i_t2 >= 0)
            d += fabs(log2((double)t->params[i_t2] / (double)want[i_t2]));
        d += 100.0 * fabs(log2((double)t->params[i_t1] / (double)want[i_t1]));
        if (d < best_d) {
            best_d = d;
            best = r;
        }
    }
    return best;
}

/* TSM2: the model's (t2, t3) onto the instantiated values (model_tune_map_tsm2); says what
 * moved in ch->mapping. */
static void map_by_model(const struct kernels_tune_space *sp, int a_t2, int a_t3,
                         const struct model_gpu *g, const struct model_tsm2_problem *prob,
                         struct tune_choice *ch, long *t2_out, long *t3_out)
{
    const struct kernels_tune_axis *ax[2] = {&sp->axes[a_t2], &sp->axes[a_t3]};
    const long want[2] = {ch->c.t2, ch->c.t3};
    /* RK_EUSAGE only when the model accepts no neighbour: the lower ones are kept then */
    (void)model_tune_map_tsm2(g, prob, ch->c.t2, ch->c.t3, ax[0]->values, ax[0]->n, ax[1]->values,
                              ax[1]->n, t2_out, t3_out);
    for (int a = 0; a < 2; a++) {
        const long to = a ? *t3_out : *t2_out;
        size_t len = strlen(ch->mapping);
        if (to != want[a]) {
            snprintf(ch->mapping + len, sizeof ch->mapping - len, "%s%s %ld -> %ld",
                     len ? ", " : "", ax[a]->name, want[a], to);
            ch->mapped = 1;
        }
    }
    if (ch->mapped) {
        size_t len = strlen(ch->mapping);
        snprintf(ch->mapping + len, sizeof ch->mapping - len, " (the model's fastest neighbour)");
    }
}

/* ------------------------------------------------------------------ output */

struct tune_result {
    const struct tune_opts *o;
    const struct kernels_tune_space *sp;
    const struct tune_state *st;
    const struct rk_gpu *dev;
    int64_t capture, probe_capture;
    long configurations;
    double regs_fixed;
    int def_row, best_row;
    struct tune_choice ch[2];
    int *order; /* verified rows by time */
    int n_order;
};

/* time(row) / time(best); NaN when either is missing or the row failed verification. */
static double regret_of(const struct tune_result *t, int row)
{
    if (row < 0 || t->best_row < 0 || !t->st->rows[row].verified)
        return NAN;
    return model_tune_regret(t->st->rows[row].time_ns, t->st->rows[t->best_row].time_ns);
}

static void json_row(struct rk_buf *b, const struct tune_result *t, int row)
{
    if (row < 0) {
        rk_buf_puts(b, "null");
        return;
    }
    const struct tune_row *r = &t->st->rows[row];
    rk_buf_printf(b, "{\"measurement\":%lld,\"params\":%s,", (long long)r->id, r->json);
    rk_json_key_num(b, "time_ns", r->time_ns);
    rk_buf_printf(b, ",\"verified\":%s,", r->verified ? "true" : "false");
    rk_json_key_num(b, "regret", regret_of(t, row));
    rk_buf_puts(b, "}");
}

/* ,"top":[...]: the fastest verified rows, --top of them. */
static void json_top(struct rk_buf *b, const struct tune_result *t)
{
    rk_buf_puts(b, ",\"top\":[");
    for (int i = 0; i < t->n_order && i < t->o->top; i++) {
        rk_buf_puts(b, i ? "," : "");
        json_row(b, t, t->order[i]);
    }
    rk_buf_puts(b, "]");
}

/* The opening of both notes, up to "reps" and the comma after it: what was tuned, where. */
static void json_head(struct rk_buf *b, const struct tune_result *t)
{
    const struct tune_opts *o = t->o;
    rk_buf_puts(b, "{");
    rk_json_key_str(b, "tune", o->ism2 ? "ism2" : "tsm2");
    rk_buf_puts(b, ",");
    rk_json_key_str(b, "kernel", o->kernel->name);
    rk_buf_puts(b, ",");
    rk_json_key_str(b, "precision", kernels_precision_name(o->prec));
    rk_buf_printf(b, ",\"m\":%ld,\"n\":%ld,\"k\":%ld,", o->shape.m, o->shape.n, o->shape.k);
    rk_json_key_str(b, "device", t->dev->name);
    rk_buf_printf(b, ",\"capture\":%lld,\"probe_capture\":%lld,\"reps\":%d,", (long long)t->capture,
                  (long long)t->probe_capture, o->kopt.reps);
}

/* The result as one JSON object: the capture's note, and what --json prints. */
static void write_json(struct rk_buf *b, const struct tune_result *t)
{
    const struct tune_opts *o = t->o;
    json_head(b, t);
    rk_buf_puts(b, "\"space\":{");
    for (int a = 0; a < t->sp->n_axes; a++) {
        rk_buf_puts(b, a ? "," : "");
        rk_json_str(b, t->sp->axes[a].name);
        rk_buf_puts(b, ":[");
        for (int i = 0; i < t->sp->axes[a].n; i++)
            rk_buf_printf(b, "%s%ld", i ? "," : "", t->sp->axes[a].values[i]);
        rk_buf_puts(b, "]");
    }
    rk_buf_printf(b, "},\"configurations\":%ld,\"measured\":%d,\"skipped\":%ld,\"failed\":%ld,",
                  t->configurations, t->st->n, t->st->skipped, t->st->failed);
    rk_json_key_num(b, "regs_fixed", t->regs_fixed);
    rk_buf_puts(b, ",\"best\":");
    json_row(b, t, t->best_row);
    rk_buf_puts(b, ",\"default\":");
    json_row(b, t, t->def_row);
    for (int i = 0; i < 2; i++) {
        const struct tune_choice *ch = &t->ch[i];
        rk_buf_puts(b, ",");
        rk_json_str(b, ch->name);
        rk_buf_printf(b, ":{\"model\":{\"t1\":%d,\"t2\":%d,\"t3\":%d,", ch->c.t1, ch->c.t2,
                      ch->c.t3);
        rk_json_key_num(b, "t2_raw", ch->c.t2_raw);
        rk_buf_puts(b, ",");
        rk_json_key_num(b, "t3_raw", ch->c.t3_raw);
        rk_buf_puts(b, ",");
        rk_json_key_num(b, "predicted_time_s", ch->c.predicted_time_s);
        rk_buf_puts(b, ",");
        rk_json_key_str(b, "bound", model_bound_name(ch->c.bound));
        rk_buf_printf(b, ",\"alg5_branch\":%d", ch->c.alg5_branch);
        if (o->ism2) {
            rk_buf_printf(b, ",\"tcf\":%ld,", ch->tcf);
            rk_json_key_num(b, "tcf_predicted_time_s", ch->tcf_pred_s);
        }
        rk_buf_printf(b, "},\"mapped\":%s,", ch->mapped ? "true" : "false");
        rk_json_key_str(b, "mapping", ch->mapping);
        rk_buf_puts(b, ",\"measured\":");
        json_row(b, t, ch->row);
        rk_buf_puts(b, "}");
    }
    json_top(b, t);
    rk_buf_puts(b, "}");
}

static const struct tune_state *g_sort_state; /* for qsort's comparator only */
static int by_time(const void *a, const void *b)
{
    double x = g_sort_state->rows[*(const int *)a].time_ns;
    double y = g_sort_state->rows[*(const int *)b].time_ns;
    return x < y ? -1 : x > y ? 1 : (*(const int *)a - *(const int *)b);
}

/* t->order (allocated), n_order and best_row: st's verified rows, fastest first. RK_OK or
 * RK_ENOMEM (printed). */
static int rank_rows(struct tune_result *t, const struct tune_state *st)
{
    t->order = malloc(sizeof *t->order * (size_t)(st->n ? st->n : 1));
    if (!t->order)
        return rk_error(RK_ENOMEM, "out of host memory");
    for (int i = 0; i < st->n; i++)
        if (st->rows[i].verified)
            t->order[t->n_order++] = i;
    g_sort_state = st;
    qsort(t->order, (size_t)t->n_order, sizeof *t->order, by_time);
    t->best_row = t->n_order ? t->order[0] : -1;
    return RK_OK;
}

/* The exit code of a stored sweep: RK_EVERIFY when a configuration failed verification, or
 * when `missing` (then saying `what`), else RK_OK. */
static int sweep_status(const struct tune_state *st, int missing, const char *what)
{
    if (st->failed)
        return rk_error(RK_EVERIFY, "%ld configuration(s) failed verification (stored, not ranked)",
                        st->failed);
    return missing ? rk_error(RK_EVERIFY, "%s", what) : RK_OK;
}

/* Stores note as the capture's note and ends it done; a note out of memory ends it failed. */
static int end_with_note(struct rk_ctx *ctx, int64_t capture, const struct rk_buf *note)
{
    int rc;
    if (note->oom) {
        db_capture_end(ctx->db, capture, DB_FAILED);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    rc = db_capture_note(ctx->db, capture, note->s);
    if (rc == RK_OK)
        rc = db_capture_end(ctx->db, capture, DB_DONE);
    return rc;
}

static void print_line(const struct tune_result *t, const char *label, int row, const char *extra)
{
    const struct tune_state *st = t->st;
    if (row < 0) {
        printf("%-12s %-44s %12s %8s  %s\n", label, "(not measured: invalid configuration)", "-",
               "-", extra ? extra : "");
        return;
    }
    const struct tune_row *r = &st->rows[row];
    printf("%-12s %-44s %12.2f %8.3f  #%lld%s%s%s\n", label, r->json, r->time_ns / 1e3,
           regret_of(t, row), (long long)r->id, r->verified ? "" : " FAILED",
           extra && *extra ? "  " : "", extra ? extra : "");
}

static void print_text(const struct tune_result *t)
{
    const struct tune_opts *o = t->o;
    char model[200];
    printf("tune %s: %s %s %ldx%ldx%ld on %s (capture %lld, ceilings of probe capture %lld)\n",
           o->ism2 ? "ism2" : "tsm2", o->kernel->name, kernels_precision_name(o->prec), o->shape.m,
           o->shape.n, o->shape.k, t->dev->name, (long long)t->capture,
           (long long)t->probe_capture);
    printf("space:");
    for (int a = 0; a < t->sp->n_axes; a++) {
        printf(" %s", t->sp->axes[a].name);
        for (int i = 0; i < t->sp->axes[a].n; i++)
            printf("%c%ld", i ? ',' : '=', t->sp->axes[a].values[i]);
    }
    printf("; %ld configurations, %d measured, %ld skipped, %ld failed verification; reps %d; "
           "C = %.1f registers\n",
           t->configurations, t->st->n, t->st->skipped, t->st->failed, o->kopt.reps, t->regs_fixed);
    if (t->st->skipped)
        printf("first skipped: %s\n", t->st->first_skip);
    printf("\n%-12s %-44s %12s %8s  %s\n", "choice", "parameters (resolved)", "time [us]", "regret",
           "measurement, model");
    for (int i = 0; i < 2; i++) {
        const struct tune_choice *ch = &t->ch[i];
        int len = snprintf(model, sizeof model, "model t2=%d t3=%d", ch->c.t2, ch->c.t3);
        if (o->ism2)
            len += snprintf(model + len, sizeof model - (size_t)len, " tcf=%ld", ch->tcf);
        snprintf(model + len, sizeof model - (size_t)len, " (%.3g us)%s%s",
                 (o->ism2 ? ch->tcf_pred_s : ch->c.predicted_time_s) * 1e6,
                 ch->mapped ? "; mapped: " : "", ch->mapped ? ch->mapping : "");
        print_line(t, ch->name, ch->row, model);
    }
    print_line(t, "default", t->def_row, "the kernel's defaults");
    print_line(t, "best", t->best_row, "");
    printf("\ntop %ld:\n", o->top);
    for (int i = 0; i < t->n_order && i < o->top; i++) {
        char label[16];
        snprintf(label, sizeof label, "%d", i + 1);
        print_line(t, label, t->order[i], "");
    }
    printf("\nregret %s %s %s %ldx%ldx%ld alg5 %.3f exhaustive %.3f default %.3f best_us %.2f\n",
           o->ism2 ? "ism2" : "tsm2", o->kernel->name, kernels_precision_name(o->prec), o->shape.m,
           o->shape.n, o->shape.k, regret_of(t, t->ch[0].row), regret_of(t, t->ch[1].row),
           regret_of(t, t->def_row),
           t->best_row >= 0 ? t->st->rows[t->best_row].time_ns / 1e3 : NAN);
}

/* ------------------------------------------------------------------ command */

#define TUNE_SEED 0x726f6f6674756eULL /* the inputs' seed, the same for every configuration */

/* What one tune holds from the GPU's opening to its end (tune_run_init, tune_run_release). */
struct tune_run {
    struct kernels_session *s;
    struct analysis_device d; /* the device and its stored ceilings */
    struct model_gpu g;       /* the model's GPU built from them */
    struct tune_extra x;
    struct tune_state st;
    struct tune_result t;
    struct rk_buf note; /* the capture's note */
    int64_t capture;
    long done; /* configurations begun, the defaults' not counted */
};

static void tune_run_init(struct tune_run *r)
{
    const struct rk_buf empty = RK_BUF_INIT;
    memset(r, 0, sizeof *r);
    r->x.bw_l2 = r->x.mem_lat_loaded = NAN;
    r->note = empty;
}

static void tune_run_release(struct tune_run *r)
{
    kernels_session_close(r->s);
    analysis_device_release(&r->d);
    free(r->st.rows);
    free(r->t.order);
    rk_buf_release(&r->note);
}

/*
 * Steps 2 and 3 of the header: opens the GPU, loads its ceilings into r->d, r->g, r->x and
 * prepares the inputs of the shape. The entry point's session also gets the model's GPU, with
 * the loaded DRAM latency as the tcf model takes it (Little's law under load), to choose with.
 */
static int tune_open(struct rk_ctx *ctx, const struct tune_opts *o, struct tune_run *r)
{
    int rc = kernels_session_open(ctx->device, TUNE_SEED, &r->s);
    if (rc == RK_OK)
        rc = load_gpu(ctx, kernels_session_device(r->s), o->prec, &r->d, &r->g, &r->x);
    if (rc == RK_OK && o->entry) {
        if (isfinite(r->x.mem_lat_loaded) && r->x.mem_lat_loaded > 0)
            r->g.mem_latency_cycles = r->x.mem_lat_loaded;
        kernels_session_set_gpu(r->s, o->prec, &r->g);
        r->g.dram_curve_n = 0; /* as the session keeps it: analysis' arrays go with d */
    }
    if (rc == RK_OK)
        rc = kernels_session_prepare(r->s, o->prec, &o->shape);
    return rc;
}

/* The configurations of a sweep: the tune space's (sp), or else a list of n. */
struct sweep_list {
    const struct kernels_tune_space *sp;
    const long (*params)[KERNELS_MAX_PARAMS];
    long n;
};

/*
 * Step 5 of the header, into capture r->capture: the kernel's defaults (row *def_row), then
 * every configuration of l, one measurement each, with progress; r->done counts the
 * configurations begun. RK_OK, RK_EINTR (rk_interrupted, before or after the last) or
 * measure_store's error.
 */
static int tune_sweep(struct rk_ctx *ctx, const struct tune_opts *o, const struct sweep_list *l,
                      struct tune_run *r, int *def_row /* OUT */)
{
    const long total = l->n + 1;
    int row, rc;
    r->done = 0;
    rk_progress("tune", 0, total);
    rc = measure_store(r->s, ctx->db, r->capture, o, NULL, ROLE_DEFAULT, &r->st, def_row);
    for (long i = 0; i < l->n && rc == RK_OK; i++) {
        long p[KERNELS_MAX_PARAMS];
        rk_progress("tune", ++r->done, total);
        if (rk_interrupted) {
            rc = RK_EINTR;
            break;
        }
        if (l->sp)
            kernels_tune_space_params(l->sp, i, p);
        else
            memcpy(p, l->params[i], sizeof p);
        rc = measure_store(r->s, ctx->db, r->capture, o, p, ROLE_SWEEP, &r->st, &row);
    }
    rk_progress("tune", total, total);
    rk_progress_end();
    if (rc == RK_OK && rk_interrupted)
        rc = RK_EINTR;
    return rc;
}

/* After the sweep of `configurations` (rc its outcome): an interrupted capture is marked so, a
 * failed one ends failed, else r->st's verified rows are ranked into r->t, which then
 * describes the run. */
static int tune_rank(struct rk_ctx *ctx, const struct tune_opts *o, int rc, long configurations,
                     struct tune_run *r)
{
    if (rc == RK_EINTR) {
        db_capture_mark_interrupted(ctx->db, r->capture);
        return rk_error(RK_EINTR,
                        "interrupted after %ld of %ld configurations; the stored rows are "
                        "complete",
                        r->done, configurations + 1);
    }
    if (rc == RK_OK)
        rc = rank_rows(&r->t, &r->st);
    if (rc != RK_OK) {
        db_capture_end(ctx->db, r->capture, DB_FAILED);
        return rc;
    }
    r->t.o = o;
    r->t.st = &r->st;
    r->t.dev = kernels_session_device(r->s);
    r->t.capture = r->capture;
    r->t.probe_capture = r->d.probe_capture;
    r->t.configurations = configurations;
    return RK_OK;
}

/* The model's choices (step 6 of the header), measured when not in the sweep. */
static int model_choices(struct kernels_session *s, struct db *db, int64_t capture,
                         const struct tune_opts *o, const struct kernels_tune_space *sp,
                         const long *def, struct model_gpu *g, const struct tune_extra *x,
                         struct tune_state *st, struct tune_result *t)
{
    const struct kernels_kernel *k = o->kernel;
    const int i_t1 = kernels_param_index(k, "t1"), i_t2 = kernels_param_index(k, "t2"),
              i_t3 = kernels_param_index(k, "t3");
    const int a_t2 = axis_of(sp, "t2"), a_t3 = axis_of(sp, "t3");
    struct model_tsm2_problem prob;
    int rc;

    g->regs_fixed = t->regs_fixed = regs_fixed(st, o, i_t2, i_t3);
    memset(&prob, 0, sizeof prob);
    prob.m = o->shape.m;
    prob.n = o->shape.n;
    prob.k = o->shape.k;
    prob.elem_bytes = o->prec == KERNELS_FP64 ? 8 : 4;
    prob.t1 = (int)def[i_t1]; /* Alg. 5 leaves t1 to offline profiling: the kernel's default */
    prob.t2 = prob.t3 = 1;
    t->ch[0].name = "alg5";
    t->ch[1].name = "exhaustive";
    rc = model_tsm2_search_gd(g, &prob, NULL, &t->ch[0].c);
    if (rc == RK_OK)
        rc = model_tsm2_search_exhaustive(g, &prob, NULL, &t->ch[1].c);
    if (rc != RK_OK)
        return rk_error(RK_EFAIL, "the TSM2 model refused %ldx%ldx%ld with the stored ceilings",
                        prob.m, prob.n, prob.k);
    for (int i = 0; i < 2; i++) {
        struct tune_choice *ch = &t->ch[i];
        long resolved[KERNELS_MAX_PARAMS];
        char why[200];
        ch->row = -1;
        for (int p = 0; p < KERNELS_MAX_PARAMS; p++)
            ch->want[p] = p < k->n_params ? k->params[p].def : 0;
        ch->want[i_t1] = def[i_t1];
        if (a_t2 >= 0) {
            map_by_model(sp, a_t2, a_t3, g, &prob, ch, &ch->want[i_t2], &ch->want[i_t3]);
        } else {
            ch->want[i_t3] = map_axis(sp, a_t3, ch->c.t3, ch);
            if (ch->c.t2 != def[i_t2]) { /* ISM2: t2 is not swept; the kernel's covers n */
                size_t len = strlen(ch->mapping);
                snprintf(ch->mapping + len, sizeof ch->mapping - len, "%st2 %d -> %ld (not swept)",
                         len ? ", " : "", ch->c.t2, def[i_t2]);
                ch->mapped = 1;
            }
        }
        if (o->ism2) {
            /* tcf: the tcf model at the mapped t3, with that kernel's registers and
             * shared memory as the sweep found them (the defaults' when none matched) */
            const int i_tcf = kernels_param_index(k, "tcf");
            struct model_params mp; /* the resolved parameters as the model reads them */
            struct model_ism2_tcf_in in;
            struct model_ism2_tcf_eval ev;
            const struct tune_row *like = NULL;
            long want_def[KERNELS_MAX_PARAMS];
            memcpy(want_def, ch->want, sizeof want_def);
            want_def[i_tcf] = 0;
            if (kernels_session_check(s, k, want_def, resolved, why, sizeof why) != RK_OK)
                memcpy(resolved, def, sizeof resolved);
            for (int r = 0; r < st->n && !like; r++)
                if (st->rows[r].params[i_t3] == ch->want[i_t3] && st->rows[r].registers > 0)
                    like = &st->rows[r];
            memset(&in, 0, sizeof in);
            /* Little's law of the tcf model: the loaded DRAM latency (probe
             * lat_dram_loaded, where bandwidth crosses 95% of its best) when it was probed,
             * else the chase's unloaded plateau, which understates it. Not the measured
             * curve that `roofkit model` uses: every tcf the search compares sits near
             * saturation, where the curve's 1% steps (run-to-run noise) would decide the
             * choice; a clean saturated / not-saturated step does not (docs/model.md "tune") */
            struct model_gpu gl = *g;
            if (isfinite(x->mem_lat_loaded) && x->mem_lat_loaded > 0)
                gl.mem_latency_cycles = x->mem_lat_loaded;
            in.gpu = &gl;
            in.fam = k->cost_family;
            in.shape = (struct model_shape){o->shape.m, o->shape.n, o->shape.k, prob.elem_bytes};
            kernels_model_params(k, o->prec, resolved, &mp);
            in.t1 = mp.t1;
            in.t2 = mp.t2;
            in.t3 = mp.t3;
            in.rows_per_thread = mp.rows_per_thread;
            in.stages = mp.a_staged ? KERNELS_TSM2_RING_STAGES : 1;
            in.regs_per_thread = like ? like->registers : 0;
            in.smem_per_block = like ? (double)like->smem : 0;
            in.bw_l2 = x->bw_l2;
            const struct kernels_tune_axis *tcf_axis = &sp->axes[axis_of(sp, "tcf")];
            if (model_ism2_search_tcf(&in, tcf_axis->values[tcf_axis->n - 1], &ev) != RK_OK)
                return rk_error(RK_EFAIL, "the tcf model refused %ldx%ldx%ld (t3 = %ld)",
                                o->shape.m, o->shape.n, o->shape.k, ch->want[i_t3]);
            ch->tcf = ev.tcf;
            ch->tcf_pred_s = ev.time_s;
            ch->want[i_tcf] = ev.tcf;
        }
        if (kernels_session_check(s, k, ch->want, resolved, why, sizeof why) != RK_OK) {
            int near = o->ism2 ? -1 : nearest_runnable(st, ch->want, i_t1, i_t2, i_t3);
            size_t len = strlen(ch->mapping);
            if (near < 0) {
                rk_warn("the model's %s choice %s cannot run: %s", ch->name, ch->mapping, why);
                continue;
            }
            snprintf(ch->mapping + len, sizeof ch->mapping - len,
                     "%scannot run (%s), nearest runnable t1 %ld t2 %ld t3 %ld", len ? "; " : "",
                     strstr(why, "shared memory") ? "shared memory" : "limits",
                     st->rows[near].params[i_t1], st->rows[near].params[i_t2],
                     st->rows[near].params[i_t3]);
            ch->mapped = 1;
            ch->row = near;
            st->rows[near].role |= i == 0 ? ROLE_ALG5 : ROLE_EXH;
            continue;
        }
        ch->row = find_row(st, sp, resolved);
        if (ch->row < 0) { /* outside the swept grid (a tcf between its values): measure it */
            rc = measure_store(s, db, capture, o, ch->want, ROLE_EXTRA, st, &ch->row);
            if (rc != RK_OK)
                return rc;
        }
        if (ch->row >= 0)
            st->rows[ch->row].role |= i == 0 ? ROLE_ALG5 : ROLE_EXH;
    }
    return RK_OK;
}

/*
 * The entry point tsm2 (--exhaustive, --kernel tsm2): its choice, then every configuration of
 * kernels_tsm2_sweep on the same inputs, each stored as a measurement of tsm2 with its
 * variant given; regret = time(choice) / time(best of all), as for the model's choices above.
 */
#define ENTRY_SWEEP_MAX 64

/* "model T us": the entry point's model of row's configuration, for the text output. */
static const char *model_says(const struct tune_result *t, const struct model_gpu *g, int row,
                              char *buf, size_t len)
{
    double s = NAN;
    const struct kernels_shape *sh = &t->o->shape;
    if (row < 0 ||
        kernels_tsm2_predict(t->dev, g, t->o->prec, sh, t->st->rows[row].params, &s) != RK_OK)
        snprintf(buf, len, "model -");
    else
        snprintf(buf, len, "model %.1f us", s * 1e6);
    return buf;
}

static int tune_entry(struct rk_ctx *ctx, const struct tune_opts *o)
{
    struct tune_run r;
    struct tune_result *t = &r.t;
    long sweep[ENTRY_SWEEP_MAX][KERNELS_MAX_PARAMS];
    char extra[64];
    int rc, choice = -1, n_sweep;

    tune_run_init(&r);
    n_sweep = kernels_tsm2_sweep(o->prec, &o->shape, sweep, ENTRY_SWEEP_MAX);
    rc = tune_open(ctx, o, &r);
    if (rc == RK_OK)
        rc = rk_begin_device_capture(ctx, kernels_session_device(r.s), DB_CAPTURE_TUNE, &r.capture);
    if (rc != RK_OK)
        goto out;
    const struct sweep_list l = {NULL, (const long(*)[KERNELS_MAX_PARAMS])sweep, n_sweep};
    rc = tune_sweep(ctx, o, &l, &r, &choice);
    if ((rc = tune_rank(ctx, o, rc, n_sweep, &r)) != RK_OK)
        goto out;
    t->def_row = choice;

    json_head(&r.note, t); /* "kernel":"tsm2": o->kernel is the entry point */
    rk_buf_printf(&r.note,
                  "\"configurations\":%ld,\"measured\":%d,\"skipped\":%ld,\"failed\":%ld,"
                  "\"choice\":",
                  t->configurations, r.st.n, r.st.skipped, r.st.failed);
    json_row(&r.note, t, choice);
    rk_buf_puts(&r.note, ",\"best\":");
    json_row(&r.note, t, t->best_row);
    json_top(&r.note, t);
    rk_buf_puts(&r.note, "}");
    if ((rc = end_with_note(ctx, r.capture, &r.note)) != RK_OK)
        goto out;
    if (o->json) {
        printf("%s\n", r.note.s);
    } else {
        printf("tune %s: the entry point tsm2 %s %ldx%ldx%ld on %s (capture %lld, ceilings of "
               "probe capture %lld)\n",
               o->ism2 ? "ism2" : "tsm2", kernels_precision_name(o->prec), o->shape.m, o->shape.n,
               o->shape.k, t->dev->name, (long long)r.capture, (long long)r.d.probe_capture);
        printf("sweep: %ld configurations, %d measured, %ld skipped, %ld failed verification; "
               "reps %d\n",
               t->configurations, r.st.n, r.st.skipped, r.st.failed, o->kopt.reps);
        if (r.st.skipped)
            printf("first skipped: %s\n", r.st.first_skip);
        printf("\n%-12s %-44s %12s %8s  %s\n", "", "parameters (resolved)", "time [us]", "regret",
               "measurement");
        print_line(t, "choice", choice, model_says(t, &r.g, choice, extra, sizeof extra));
        print_line(t, "best", t->best_row, model_says(t, &r.g, t->best_row, extra, sizeof extra));
        printf("\ntop %ld:\n", o->top);
        for (int i = 0; i < t->n_order && i < o->top; i++) {
            char label[16];
            snprintf(label, sizeof label, "%d", i + 1);
            print_line(t, label, t->order[i],
                       model_says(t, &r.g, t->order[i], extra, sizeof extra));
        }
        printf("\nregret tsm2 %s %ldx%ldx%ld choice %.3f best_us %.2f\n",
               kernels_precision_name(o->prec), o->shape.m, o->shape.n, o->shape.k,
               regret_of(t, choice), t->best_row >= 0 ? r.st.rows[t->best_row].time_ns / 1e3 : NAN);
    }
    fflush(stdout);
    rc = sweep_status(&r.st, choice < 0 || t->best_row < 0,
                      "the entry point's choice did not run; nothing to compare");
out:
    tune_run_release(&r);
    return rc;
}

/* A variant against the sweep of its tune space (steps 1-7 of the header). */
static int tune_space(struct rk_ctx *ctx, const struct tune_opts *o)
{
    struct kernels_tune_space sp;
    struct tune_run r;
    struct tune_result *t = &r.t;
    struct model_tsm2_problem prob;
    long def[KERNELS_MAX_PARAMS];
    char why[200];
    int rc;
    const char *bad;

    tune_run_init(&r);
    if (kernels_tune_space_init(o->kernel, &o->shape, o->override, o->n_override, &sp, why,
                                sizeof why) != RK_OK)
        return rk_error(RK_EUSAGE, "cannot tune %s on %ldx%ldx%ld: %s", o->kernel->name, o->shape.m,
                        o->shape.n, o->shape.k, why);
    for (int a = 0; a < sp.n_axes; a++) /* the values of --t1 / --tcf, checked statically */
        for (int i = 0; i < sp.axes[a].n; i++) {
            long p[KERNELS_MAX_PARAMS];
            for (int j = 0; j < KERNELS_MAX_PARAMS; j++)
                p[j] = j < o->kernel->n_params ? o->kernel->params[j].def : 0;
            p[sp.axes[a].index] = sp.axes[a].values[i];
            if (kernels_check(o->kernel, o->prec, p, why, sizeof why) != RK_OK)
                return rk_error(RK_EUSAGE, "cannot tune %s: %s", o->kernel->name, why);
        }
    prob = (struct model_tsm2_problem){
        o->shape.m, o->shape.n, o->shape.k, o->prec == KERNELS_FP64 ? 8 : 4, 0, 1, 1};
    if ((bad = model_check_tsm2(&prob, 0)) != NULL)
        return rk_error(RK_EUSAGE, "the model refuses %ldx%ldx%ld: %s", o->shape.m, o->shape.n,
                        o->shape.k, bad);

    /* The GPU first: no GPU, no database read or write. */
    rc = tune_open(ctx, o, &r);
    if (rc == RK_OK && kernels_session_check(r.s, o->kernel, NULL, def, why, sizeof why) != RK_OK)
        rc = rk_error(RK_EUSAGE, "%s cannot run %ldx%ldx%ld with its defaults: %s", o->kernel->name,
                      o->shape.m, o->shape.n, o->shape.k, why);
    if (rc == RK_OK)
        rc = rk_begin_device_capture(ctx, kernels_session_device(r.s), DB_CAPTURE_TUNE, &r.capture);
    if (rc != RK_OK)
        goto out;

    /* The kernel's defaults, then the sweep; the model's choices; the rows ranked: the best
     * found is over everything measured. */
    const struct sweep_list l = {&sp, NULL, kernels_tune_space_size(&sp)};
    rc = tune_sweep(ctx, o, &l, &r, &t->def_row);
    if (rc == RK_OK)
        rc = model_choices(r.s, ctx->db, r.capture, o, &sp, def, &r.g, &r.x, &r.st, t);
    if ((rc = tune_rank(ctx, o, rc, l.n, &r)) != RK_OK)
        goto out;
    t->sp = &sp;

    write_json(&r.note, t);
    if ((rc = end_with_note(ctx, r.capture, &r.note)) != RK_OK)
        goto out;
    if (o->json)
        printf("%s\n", r.note.s);
    else
        print_text(t);
    fflush(stdout);
    rk_info("capture %lld: %d measurements, %ld skipped, %ld failed verification",
            (long long)r.capture, r.st.n, r.st.skipped, r.st.failed);
    rc = sweep_status(&r.st, t->best_row < 0, "no configuration was verified; nothing to rank");
out:
    tune_run_release(&r);
    return rc;
}

int cmd_tune(int argc, char **argv, struct rk_ctx *ctx)
{
    struct tune_opts o;
    int rc;

    memset(&o, 0, sizeof o);
    rc = parse_args(argc, argv, &o);
    if (rc == RK_OK)
        rc = o.entry ? tune_entry(ctx, &o) : tune_space(ctx, &o);
    free(o.override);
    return rc;
}
