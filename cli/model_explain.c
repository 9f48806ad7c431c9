/*
 * model_explain.c - `roofkit model explain`: evaluates the TSM2 model of
 * 004_dab40fe45003313a.txt §3.6 with no GPU and no database. The GPU and the problem come
 * from options, every intermediate quantity of model_tsm2_fields[] is printed with its unit
 * (or as one JSON object), then the (t2, t3) that Alg. 5's gradient descent and the
 * exhaustive search choose. Options not given take an H100 SXM's values (measured by
 * roofkit's probes on one), and the output says which ones were defaulted.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "model.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One number option of `model explain`: where it goes and its H100 default. */
struct explain_opt {
    const char *name;
    const char *unit;
    int required;
    double def;   /* default when not required */
    double value; /* parsed or default */
    int given;
};

enum {
    X_PEAK,
    X_BW,
    X_SMS,
    X_CLOCK,
    X_REGS,
    X_SMEM,
    X_THREADS,
    X_MEMLAT,
    X_COMPLAT,
    X_ELEM,
    X_M,
    X_N,
    X_K,
    X_T1,
    X_T2,
    X_T3,
    X_COUNT
};

/* H100 SXM defaults: 132 SMs, 1.98 GHz seen, 64 Ki registers and 228 KiB shared
 * memory per SM, 2048 threads per SM; DRAM latency 661 cycles at 512 MB and FP64 FMA
 * dependent latency about 8 cycles, as roofkit's probes measured them on one. */
static void explain_defaults(struct explain_opt *o)
{
    const struct explain_opt init[X_COUNT] = {
        [X_PEAK] = {"peak-flops", "FLOP/s", 1, 0, 0, 0},
        [X_BW] = {"bandwidth", "B/s", 1, 0, 0, 0},
        [X_SMS] = {"sms", "SMs", 0, 132, 0, 0},
        [X_CLOCK] = {"clock", "Hz", 0, 1.98e9, 0, 0},
        [X_REGS] = {"regs-per-sm", "registers", 0, 65536, 0, 0},
        [X_SMEM] = {"smem-per-sm", "B", 0, 233472, 0, 0},
        [X_THREADS] = {"max-threads-per-sm", "threads", 0, 2048, 0, 0},
        [X_MEMLAT] = {"mem-latency", "cycles", 0, 661, 0, 0},
        [X_COMPLAT] = {"comp-latency", "cycles", 0, 8, 0, 0},
        [X_ELEM] = {"elem-bytes", "B", 0, 8, 0, 0},
        [X_M] = {"m", "rows", 1, 0, 0, 0},
        [X_N] = {"n", "columns", 1, 0, 0, 0},
        [X_K] = {"k", "", 1, 0, 0, 0},
        [X_T1] = {"t1", "", 0, 0, 0, 0},
        [X_T2] = {"t2", "", 0, 0, 0, 0},
        [X_T3] = {"t3", "", 0, 0, 0, 0},
    };
    for (int i = 0; i < X_COUNT; i++) {
        o[i] = init[i];
        o[i].value = o[i].def;
    }
}

/* The search's choice c as the JSON object "key": {...}. */
static void json_choice(struct rk_buf *b, const char *key, const struct model_tsm2_choice *c,
                        int last)
{
    rk_buf_printf(b, "    \"%s\": {\"t1\": %d, \"t2\": %d, \"t3\": %d, \"t2_raw\": ", key, c->t1,
                  c->t2, c->t3);
    rk_json_num(b, c->t2_raw);
    rk_buf_puts(b, ", \"t3_raw\": ");
    rk_json_num(b, c->t3_raw);
    rk_buf_puts(b, ", \"predicted_time_s\": ");
    rk_json_num(b, c->predicted_time_s);
    rk_buf_printf(
        b, ", \"bound\": \"%s\", \"alg5_branch\": %d, \"iterations\": %ld, \"converged\": %s}%s\n",
        model_bound_name(c->bound), c->alg5_branch, c->iterations, c->converged ? "true" : "false",
        last ? "" : ",");
}

static int print_json(const struct explain_opt *o, const struct model_tsm2_eval *ev, int t2, int t3,
                      const struct model_tsm2_choice *gd, const struct model_tsm2_choice *ex)
{
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, "{\n  \"inputs\": {");
    for (int i = 0; i < X_COUNT; i++) {
        rk_buf_printf(&b, "%s\"%s\": ", i ? ", " : "", o[i].name);
        rk_json_num(&b, o[i].value);
    }
    rk_buf_puts(&b, "},\n  \"defaulted\": [");
    for (int i = 0, first = 1; i < X_COUNT; i++) {
        if (!o[i].given && !o[i].required && i < X_T1) {
            rk_buf_printf(&b, "%s\"%s\"", first ? "" : ", ", o[i].name);
            first = 0;
        }
    }
    rk_buf_printf(&b, "],\n  \"evaluated_t2\": %d,\n  \"evaluated_t3\": %d,\n", t2, t3);
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *fd = &model_tsm2_fields[i];
        rk_buf_printf(&b, "  \"%s\": ", fd->key);
        if (fd->type == MODEL_F_BOUND)
            rk_buf_printf(&b, "\"%s\"",
                          model_bound_name((enum model_bound)model_field_double(fd, ev)));
        else
            rk_json_num(&b, model_field_double(fd, ev));
        rk_buf_puts(&b, ",\n");
    }
    rk_buf_printf(&b, "  \"t2\": %d,\n  \"t3\": %d,\n  \"search\": {\n", ex->t2, ex->t3);
    json_choice(&b, "gradient_descent", gd, 0);
    json_choice(&b, "exhaustive", ex, 1);
    rk_buf_puts(&b, "  }\n}\n");
    if (b.oom) {
        rk_buf_release(&b);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    fputs(b.s, stdout);
    rk_buf_release(&b);
    return RK_OK;
}

static void print_text(const struct explain_opt *o, const struct model_tsm2_eval *ev, int t2,
                       int t3, int user_tiles, const struct model_tsm2_choice *gd,
                       const struct model_tsm2_choice *ex)
{
    FILE *f = stdout;
    fprintf(f,
            "TSM2 model (004_dab40fe45003313a.txt section 3.6), C(m x n) = A(m x k) B(k x n)\n\n");
    fprintf(f, "inputs:\n");
    for (int i = 0; i < X_COUNT; i++) {
        if (i >= X_T1 && !o[i].given)
            continue;
        fprintf(f, "  %-20s %-14.6g %s%s\n", o[i].name, o[i].value, o[i].unit,
                (!o[i].given && !o[i].required) ? "  (default: H100 SXM)" : "");
    }
    fprintf(f, "\nevaluated at t2 = %d, t3 = %d (%s):\n", t2, t3,
            user_tiles ? "as given" : "the exhaustive search's choice");
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *fd = &model_tsm2_fields[i];
        if (fd->type == MODEL_F_BOUND)
            fprintf(f, "  %-20s %-14s       %s\n", fd->key,
                    model_bound_name((enum model_bound)model_field_double(fd, ev)), fd->help);
        else
            fprintf(f, "  %-20s %-14.6g %-6s %s\n", fd->key, model_field_double(fd, ev), fd->unit,
                    fd->help);
    }
    fprintf(f, "\nparameter search (Alg. 5):\n");
    fprintf(f,
            "  gradient descent     t2 = %d, t3 = %d (raw %.4g, %.4g), predicted %.6g s, %s-bound, "
            "%ld steps%s\n",
            gd->t2, gd->t3, gd->t2_raw, gd->t3_raw, gd->predicted_time_s,
            model_bound_name(gd->bound), gd->iterations, gd->converged ? "" : " (not converged)");
    fprintf(f, "  exhaustive search    t2 = %d, t3 = %d, predicted %.6g s, %s-bound, %ld points\n",
            ex->t2, ex->t3, ex->predicted_time_s, model_bound_name(ex->bound), ex->iterations);
}

int cmd_model_explain(int argc, char **argv)
{
    static const struct option opts[] = {
        {"peak-flops", required_argument, NULL, X_PEAK},
        {"bandwidth", required_argument, NULL, X_BW},
        {"sms", required_argument, NULL, X_SMS},
        {"clock", required_argument, NULL, X_CLOCK},
        {"regs-per-sm", required_argument, NULL, X_REGS},
        {"smem-per-sm", required_argument, NULL, X_SMEM},
        {"max-threads-per-sm", required_argument, NULL, X_THREADS},
        {"mem-latency", required_argument, NULL, X_MEMLAT},
        {"comp-latency", required_argument, NULL, X_COMPLAT},
        {"elem-bytes", required_argument, NULL, X_ELEM},
        {"m", required_argument, NULL, X_M},
        {"n", required_argument, NULL, X_N},
        {"k", required_argument, NULL, X_K},
        {"t1", required_argument, NULL, X_T1},
        {"t2", required_argument, NULL, X_T2},
        {"t3", required_argument, NULL, X_T3},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    struct explain_opt o[X_COUNT];
    struct model_gpu gpu;
    struct model_tsm2_problem prob;
    struct model_tsm2_eval ev;
    struct model_tsm2_choice gd, ex;
    const char *why;
    int json = 0, c, rc;

    explain_defaults(o);
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        if (c == 'j') {
            json = 1;
        } else if (c >= 0 && c < X_COUNT) {
            if (rk_opt_double(o[c].name, optarg, &o[c].value) != RK_OK)
                return RK_EUSAGE;
            if (o[c].value <= 0)
                return rk_error(RK_EUSAGE, "option '--%s' must be positive, not '%s'", o[c].name,
                                optarg);
            if (c >= X_SMS && c != X_CLOCK && c != X_MEMLAT && c != X_COMPLAT &&
                (o[c].value != floor(o[c].value) || o[c].value > 2e9))
                return rk_error(RK_EUSAGE, "option '--%s' needs a whole number, not '%s'",
                                o[c].name, optarg);
            o[c].given = 1;
        } else {
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help model'",
                        argv[optind]);
    for (int i = 0; i < X_COUNT; i++)
        if (o[i].required && !o[i].given)
            return rk_error(RK_EUSAGE, "model explain needs --%s; see 'roofkit help model'",
                            o[i].name);
    if (o[X_ELEM].value != 2 && o[X_ELEM].value != 4 && o[X_ELEM].value != 8)
        return rk_error(RK_EUSAGE, "option '--elem-bytes' takes 2, 4 or 8, not %g",
                        o[X_ELEM].value);
    if (o[X_T2].given != o[X_T3].given)
        return rk_error(RK_EUSAGE,
                        "give both --t2 and --t3, or neither to use the search's choice");

    gpu = (struct model_gpu){
        .peak_flops = o[X_PEAK].value,
        .bandwidth = o[X_BW].value,
        .clock_hz = o[X_CLOCK].value,
        .sms = (int)o[X_SMS].value,
        .regs_per_sm = (int)o[X_REGS].value,
        .smem_per_sm = o[X_SMEM].value,
        .max_threads_per_sm = (int)o[X_THREADS].value,
        .mem_latency_cycles = o[X_MEMLAT].value,
        .comp_latency_cycles = o[X_COMPLAT].value,
        .regs_fixed = 0,
    };
    prob = (struct model_tsm2_problem){
        .m = (long)o[X_M].value,
        .n = (long)o[X_N].value,
        .k = (long)o[X_K].value,
        .elem_bytes = (int)o[X_ELEM].value,
        .t1 = (int)o[X_T1].value,
        .t2 = (int)o[X_T2].value,
        .t3 = (int)o[X_T3].value,
    };
    if ((why = model_check_gpu(&gpu)) != NULL)
        return rk_error(RK_EUSAGE, "invalid GPU description: %s", why);
    if ((why = model_check_tsm2(&prob, 0)) != NULL)
        return rk_error(RK_EUSAGE, "invalid problem: %s", why);

    rc = model_tsm2_search_gd(&gpu, &prob, NULL, &gd);
    if (rc == RK_OK)
        rc = model_tsm2_search_exhaustive(&gpu, &prob, NULL, &ex);
    if (rc != RK_OK)
        return rk_error(rc, "the parameter search failed for this problem (%s)", rk_strerror(rc));
    if (!o[X_T2].given) {
        prob.t2 = ex.t2;
        prob.t3 = ex.t3;
    }
    if ((why = model_check_tsm2(&prob, 1)) != NULL)
        return rk_error(RK_EUSAGE, "invalid problem: %s", why);
    rc = model_tsm2_evaluate(&gpu, &prob, &ev);
    if (rc != RK_OK)
        return rk_error(rc, "the model could not be evaluated for this problem");
    if (json)
        return print_json(o, &ev, prob.t2, prob.t3, &gd, &ex);
    print_text(o, &ev, prob.t2, prob.t3, o[X_T2].given, &gd, &ex);
    return RK_OK;
}
