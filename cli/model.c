/*
 * model.c - `roofkit model` and `roofkit model explain`.
 *
 * `model explain` evaluates the TSM2 model of 004_dab40fe45003313a.txt §3.6 with no
 * GPU and no database: the GPU and the problem come from options, every
 * intermediate quantity of model_tsm2_fields[] is printed with its unit (or as one
 * JSON object), then the (t2, t3) that Alg. 5's gradient descent and the exhaustive
 * search choose. Options not given take an H100 SXM's values (REFERENCE.md), and
 * the output says which ones were defaulted.
 *
 * `model` alone writes one prediction per model (roofline, hierarchical, TSM2) for
 * every stored measurement from its device's measured ceilings, and `model --check`
 * recomputes them without writing; see the section below and docs/model.md
 * "Predictions".
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"
#include "kernels.h"
#include "model.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

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
 * dependent latency about 8 cycles (REFERENCE.md; the probes measure both). */
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

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void json_choice(FILE *f, const char *key, const struct model_tsm2_choice *c, int last)
{
    fprintf(f, "    \"%s\": {\"t1\": %d, \"t2\": %d, \"t3\": %d, \"t2_raw\": ", key, c->t1, c->t2,
            c->t3);
    json_number(f, c->t2_raw);
    fputs(", \"t3_raw\": ", f);
    json_number(f, c->t3_raw);
    fputs(", \"predicted_time_s\": ", f);
    json_number(f, c->predicted_time_s);
    fprintf(f,
            ", \"bound\": \"%s\", \"alg5_branch\": %d, \"iterations\": %ld, \"converged\": %s}%s\n",
            model_bound_name(c->bound), c->alg5_branch, c->iterations,
            c->converged ? "true" : "false", last ? "" : ",");
}

static void print_json(const struct explain_opt *o, const struct model_tsm2_eval *ev, int t2,
                       int t3, const struct model_tsm2_choice *gd,
                       const struct model_tsm2_choice *ex)
{
    FILE *f = stdout;
    fputs("{\n  \"inputs\": {", f);
    for (int i = 0; i < X_COUNT; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", o[i].name);
        json_number(f, o[i].value);
    }
    fputs("},\n  \"defaulted\": [", f);
    for (int i = 0, first = 1; i < X_COUNT; i++) {
        if (!o[i].given && !o[i].required && i < X_T1) {
            fprintf(f, "%s\"%s\"", first ? "" : ", ", o[i].name);
            first = 0;
        }
    }
    fprintf(f, "],\n  \"evaluated_t2\": %d,\n  \"evaluated_t3\": %d,\n", t2, t3);
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *fd = &model_tsm2_fields[i];
        fprintf(f, "  \"%s\": ", fd->key);
        if (fd->type == MODEL_F_BOUND)
            fprintf(f, "\"%s\"", model_bound_name((enum model_bound)model_field_double(fd, ev)));
        else
            json_number(f, model_field_double(fd, ev));
        fputs(",\n", f);
    }
    fprintf(f, "  \"t2\": %d,\n  \"t3\": %d,\n  \"search\": {\n", ex->t2, ex->t3);
    json_choice(f, "gradient_descent", gd, 0);
    json_choice(f, "exhaustive", ex, 1);
    fputs("  }\n}\n", f);
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

static int cmd_model_explain(int argc, char **argv)
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
        print_json(o, &ev, prob.t2, prob.t3, &gd, &ex);
    else
        print_text(o, &ev, prob.t2, prob.t3, o[X_T2].given, &gd, &ex);
    return RK_OK;
}

/* ==============================================================================
 * `roofkit model [--capture ID] [--model LIST] [--check]`: predictions for stored
 * measurements from their device's measured ceilings (docs/model.md "Predictions").
 *
 *   select   the measurements: of --capture, or of every run/profile capture that
 *            has some; each measurement's device (its capture's; the only device
 *            of the database when a profile capture names none)
 *   ceilings for each device, its current ceilings (db_query_ceilings by device:
 *            the newest probe of each name) and latency curve; a device without a
 *            probe capture stops the command before anything is written (RK_ENODATA)
 *   predict  predict_one(): chooses the ceilings and counts, calls model_predict()
 *            (pure, model/), writes the details JSON. Shared by writing and --check
 *   write    one capture of kind model, predictions in transactions of
 *            WRITE_BATCH measurements, capture ended done (failed, interrupted)
 *   check    (--check, read-only) recomputes every stored prediction and compares
 *            time (relative difference <= CHECK_REL_TOL) and bound
 * ============================================================================== */

#define WRITE_BATCH    256  /* measurements per write transaction */
#define CHECK_REL_TOL  1e-9 /* --check: |stored - recomputed| <= tol * |recomputed| */
#define CHECK_MAX_SHOW 10   /* --check: mismatches printed */

/* ------------------------------------------------------------ string buffer */

/* A growing string for the details JSON; `oom` is sticky. */
struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 512;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
}

/* A JSON number: %.17g round-trips a double; null for NaN and infinities. */
static void sb_num(struct sbuf *b, const char *key, double v)
{
    if (isfinite(v))
        sb_printf(b, "\"%s\":%.17g", key, v);
    else
        sb_printf(b, "\"%s\":null", key);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void sb_str(struct sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            sb_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            sb_printf(b, "\\u%04x", ch);
        else
            sb_printf(b, "%c", ch);
    }
    sb_printf(b, "\"");
}

/* ------------------------------------------------------------------ devices */

/* One device's description and its current ceilings. */
struct dev_info {
    int64_t id;
    struct db_device dev;
    int64_t probe_capture; /* newest done/interrupted probe capture of the device */
    struct db_ceiling *ceil;
    int nceil;
    struct db_latency_point *pts;
    int npts;
    double curve_bytes[RK_DRAM_CURVE_MAX], curve_util[RK_DRAM_CURVE_MAX]; /* lat_dram_loaded */
    int ncurve;
};

struct devices {
    struct dev_info *d;
    int n;
};

static void devices_release(struct devices *ds)
{
    for (int i = 0; i < ds->n; i++) {
        db_device_release(&ds->d[i].dev);
        db_free_ceilings(ds->d[i].ceil, ds->d[i].nceil);
        free(ds->d[i].pts);
    }
    free(ds->d);
    ds->d = NULL;
    ds->n = 0;
}

/* Finds or loads device `id`. RK_ENODATA (printed) when it has no probe capture. */
static int devices_get(struct db *db, struct devices *ds, int64_t id, struct dev_info **out)
{
    struct dev_info *di, *grown;
    int rc;
    for (int i = 0; i < ds->n; i++) {
        if (ds->d[i].id == id) {
            *out = &ds->d[i];
            return RK_OK;
        }
    }
    grown = realloc(ds->d, sizeof *grown * (size_t)(ds->n + 1));
    if (!grown)
        return rk_error(RK_ENOMEM, "out of host memory");
    ds->d = grown;
    di = &ds->d[ds->n];
    memset(di, 0, sizeof *di);
    di->id = id;
    rc = db_get_device(db, id, &di->dev);
    if (rc == RK_ENODATA)
        return rk_error(RK_ENODATA,
                        "device %lld is not in database '%s'; the database is "
                        "inconsistent: restore it from a copy",
                        (long long)id, db_path(db));
    if (rc != RK_OK)
        return rc;
    ds->n++; /* from here on devices_release frees what it holds */
    rc = db_latest_capture(db, DB_CAPTURE_PROBE, id, &di->probe_capture);
    if (rc == RK_ENODATA)
        return rk_error(RK_ENODATA,
                        "no probe capture of device '%s' (id %lld) in '%s': the model needs its "
                        "measured ceilings; run 'roofkit probe' on that GPU first",
                        di->dev.name, (long long)id, db_path(db));
    if (rc == RK_OK)
        rc = db_query_ceilings(db, id, 0, &di->ceil, &di->nceil);
    if (rc == RK_OK)
        rc = db_query_latency_points(db, id, 0, &di->pts, &di->npts);
    if (rc == RK_OK) {
        di->ncurve = rk_dram_curve(rk_find_ceiling(di->ceil, di->nceil, "lat_dram_loaded"),
                                   di->curve_bytes, di->curve_util, RK_DRAM_CURVE_MAX);
        *out = di;
    }
    return rc;
}

static const struct db_ceiling *find_ceiling(const struct dev_info *d, const char *name)
{
    return rk_find_ceiling(d->ceil, d->nceil, name);
}

/* ------------------------------------------------------------ one prediction */

/* The ceilings a prediction used, for its details. */
enum {
    U_COMPUTE,
    U_DRAM,
    U_L2,
    U_L1,
    U_SHARED,
    U_MEM_LAT,
    U_COMP_LAT,
    U_LAUNCH,
    U_L2_LAT,
    U_L2_FAR_LAT,
    U_ISSUE_SHARED,
    U_STAGE_EXTRA,
    U_COUNT
};
static const char *const use_names[U_COUNT] = {
    "compute",    "dram",           "l2",           "l1",
    "shared",     "mem_latency",    "comp_latency", "launch",
    "l2_latency", "l2_far_latency", "issue_shared", "stage_extra"};

struct used {
    const struct db_ceiling *c[U_COUNT];
};

/* Looks up an integer "key": value in a flat JSON object such as the measurement's
 * params ({"t1":128,"t2":16}). RK_OK or RK_ENODATA. */
static int json_long(const char *json, const char *key, long *out)
{
    size_t klen = strlen(key);
    const char *p = json;
    while (p && (p = strchr(p, '"')) != NULL) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '"') {
            const char *q = p + 2 + klen;
            char *end;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q != ':')
                return RK_ENODATA;
            q++;
            errno = 0;
            long v = strtol(q, &end, 10);
            if (end == q || errno)
                return RK_ENODATA;
            *out = v;
            return RK_OK;
        }
        p++;
    }
    return RK_ENODATA;
}

/* The measurement's registry kernel, or NULL (profiled kernels, renamed kernels). */
static const struct kernels_kernel *registry_kernel(const struct db_measurement *m)
{
    return m->kernel ? kernels_find(m->kernel) : NULL;
}

/* The compute ceiling of a measurement (docs/model.md "Which ceilings"). */
static const struct db_ceiling *compute_ceiling(const struct dev_info *d,
                                                const struct db_measurement *m)
{
    const char *p = m->precision;
    int cublas = m->family && strcmp(m->family, "cublas") == 0;
    long tf32 = 0;
    const struct db_ceiling *c = NULL;
    if (!p)
        return NULL;
    if (cublas && m->params)
        json_long(m->params, "tf32", &tf32);
    if (strcmp(p, "fp64") == 0) {
        if (cublas) /* cuBLAS DGEMM runs on the fp64 tensor cores (DMMA) where they exist */
            c = find_ceiling(d, "peak_tensor_fp64");
        return c ? c : find_ceiling(d, "peak_fp64_fma");
    }
    if (strcmp(p, "fp32") == 0)
        return find_ceiling(d, cublas && tf32 == 1 ? "peak_tensor_tf32" : "peak_fp32_fma");
    if (strcmp(p, "tf32") == 0)
        return find_ceiling(d, "peak_tensor_tf32");
    if (strcmp(p, "fp16") == 0)
        return find_ceiling(d, cublas ? "peak_tensor_fp16" : "peak_fp16x2_fma");
    if (strcmp(p, "bf16") == 0)
        return find_ceiling(d, cublas ? "peak_tensor_bf16" : "peak_bf16x2_fma");
    return NULL;
}

/* Shared-memory bandwidth: the ceiling of the load width the kernel uses (kernels_smem_load_bytes):
 * bw_shared_read_32 for one 4-byte element a load, else bw_shared_read (16-byte loads; 8-byte
 * ones reach the same). On the H100 the two are equal (127.4 and 127.2 B/clk/SM). */
static const struct db_ceiling *shared_ceiling(const struct dev_info *d,
                                               const struct db_measurement *m)
{
    const struct kernels_kernel *k = registry_kernel(m);
    int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    const struct db_ceiling *c = NULL;
    if (k && prec >= 0 && kernels_smem_load_bytes(k, prec) == 4)
        c = find_ceiling(d, "bw_shared_read_32");
    return c ? c : find_ceiling(d, "bw_shared_read");
}

/* DRAM bandwidth: the read ceiling (the kernels' traffic is nearly all reads), else
 * the copy ceiling. */
static const struct db_ceiling *dram_ceiling(const struct dev_info *d)
{
    const struct db_ceiling *c = find_ceiling(d, "bw_dram_read");
    return c ? c : find_ceiling(d, "bw_dram_copy");
}

static int elem_bytes_of(const char *precision)
{
    if (!precision)
        return 0;
    if (strcmp(precision, "fp64") == 0)
        return 8;
    if (strcmp(precision, "fp32") == 0 || strcmp(precision, "tf32") == 0)
        return 4;
    if (strcmp(precision, "fp16") == 0 || strcmp(precision, "bf16") == 0)
        return 2;
    return 0;
}

/* The measurement's stored parameters in registry order; RK_ENODATA when one is missing. */
static int registry_params(const struct kernels_kernel *k, const struct db_measurement *m,
                           long *p /* OUT: KERNELS_MAX_PARAMS */)
{
    for (int i = 0; i < k->n_params; i++)
        if (!m->params || json_long(m->params, k->params[i].name, &p[i]) != RK_OK)
            return RK_ENODATA;
    return RK_OK;
}

/*
 * The registry kernel of m with its stored parameters in the model's terms (the registry's
 * own translation, kernels_model_params) and its precision; NULL when m is not a registry
 * kernel, its precision is unknown or a parameter was not stored.
 */
static const struct kernels_kernel *registry_model_params(const struct db_measurement *m,
                                                          struct model_params *mp, int *prec)
{
    const struct kernels_kernel *k = registry_kernel(m);
    long p[KERNELS_MAX_PARAMS] = {0};
    *prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    if (!k || *prec < 0 || registry_params(k, m, p) != RK_OK)
        return NULL;
    kernels_model_params(k, *prec, p, mp);
    return k;
}

/*
 * The counts of a registry kernel (model_cost), recomputed from its shape and stored
 * parameters, so that a correction in model/cost.c reaches measurements stored before
 * it; RK_ENODATA when the kernel is not in the registry or a parameter is missing.
 */
static int registry_cost(const struct db_measurement *m, struct model_cost *cost)
{
    const struct kernels_kernel *k = registry_kernel(m);
    long p[KERNELS_MAX_PARAMS];
    struct kernels_shape sh = {(long)m->m, (long)m->n, (long)m->k};
    int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    if (!k || prec < 0 || m->m <= 0 || m->n <= 0 || m->k <= 0)
        return RK_ENODATA;
    if (registry_params(k, m, p) != RK_OK)
        return RK_ENODATA;
    return kernels_cost(k, prec, &sh, p, cost) == RK_OK ? RK_OK : RK_ENODATA;
}

/* Whether model `kind` applies to the measurement at all (tsm2: TSM2/ISM2 kernels). */
static int applies(enum model_kind kind, const struct db_measurement *m)
{
    if (kind != MODEL_KIND_TSM2)
        return 1;
    return m->family && (strcmp(m->family, "tsm2") == 0 || strcmp(m->family, "ism2") == 0);
}

/* The result of predict_one(). */
struct pred {
    double time_ns;
    const char *bound; /* static */
    char *details;     /* malloc'd JSON */
};

static void details_ceilings(struct sbuf *b, const struct used *u)
{
    int first = 1;
    sb_printf(b, ",\"ceilings\":{");
    for (int i = 0; i < U_COUNT; i++) {
        const struct db_ceiling *c = u->c[i];
        if (!c)
            continue;
        sb_printf(b, "%s\"%s\":{\"id\":%lld,\"name\":", first ? "" : ",", use_names[i],
                  (long long)c->id);
        sb_str(b, c->name);
        sb_printf(b, ",");
        sb_num(b, "value", c->value);
        sb_printf(b, ",\"unit\":");
        sb_str(b, c->unit);
        sb_printf(b, ",\"capture\":%lld}", (long long)c->capture_id);
        first = 0;
    }
    sb_printf(b, "}");
}

static void details_terms(struct sbuf *b, const struct model_predict_in *in,
                          const struct model_prediction *p, int hier, const char *dram_source)
{
    sb_num(b, "flops", in->flops);
    sb_printf(b, ",");
    sb_num(b, "peak_flops", in->peak_flops);
    sb_printf(b, ",");
    sb_num(b, "time_compute_s", p->terms.time_compute_s);
    sb_printf(b, ",");
    sb_num(b, "intensity", p->terms.intensity);
    sb_printf(b, ",");
    sb_num(b, "attainable_flops", p->terms.attainable_flops);
    if (!hier) {
        sb_printf(b, ",");
        sb_num(b, "bytes_dram", in->roofline_bytes);
        sb_printf(b, ",");
        sb_num(b, "bandwidth_dram", in->bandwidth[MODEL_LEVEL_DRAM]);
        sb_printf(b, ",");
        sb_num(b, "time_dram_s", p->terms.time_level_s[MODEL_LEVEL_DRAM]);
        sb_printf(b, ",");
        sb_num(b, "ridge", model_ridge_point(in->peak_flops, in->bandwidth[MODEL_LEVEL_DRAM]));
        return;
    }
    sb_printf(b, ",\"dram_bytes\":\"%s\",\"levels\":{", dram_source);
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++) {
        sb_printf(b, "%s\"%s\":{", i ? "," : "", model_level_name((enum model_level_id)i));
        sb_num(b, "bytes", in->level_bytes[i]);
        sb_printf(b, ",");
        sb_num(b, "bandwidth", in->level_bytes[i] > 0 ? in->bandwidth[i] : NAN);
        sb_printf(b, ",");
        sb_num(b, "time_s", p->terms.time_level_s[i]);
        sb_printf(b, "}");
    }
    sb_printf(b, "}");
}

static void details_tsm2(struct sbuf *b, const struct model_predict_in *in,
                         const struct model_prediction *p, long t2_kernel, long t3_kernel)
{
    const struct model_gpu *g = in->gpu;
    const struct model_tsm2_problem *pr = in->tsm2;
    sb_printf(b,
              "\"m\":%ld,\"n\":%ld,\"k\":%ld,\"elem_bytes\":%d,\"t1\":%d,\"t2\":%d,\"t3\":%d,"
              "\"t2_kernel\":%ld,\"t3_kernel\":%ld,\"gpu\":{",
              pr->m, pr->n, pr->k, pr->elem_bytes, pr->t1, pr->t2, pr->t3, t2_kernel, t3_kernel);
    sb_num(b, "peak_flops", g->peak_flops);
    sb_printf(b, ",");
    sb_num(b, "bandwidth", g->bandwidth);
    sb_printf(b, ",");
    sb_num(b, "clock_hz", g->clock_hz);
    sb_printf(b, ",\"sms\":%d,\"regs_per_sm\":%d,", g->sms, g->regs_per_sm);
    sb_num(b, "smem_per_sm", g->smem_per_sm);
    sb_printf(b, ",\"max_threads_per_sm\":%d,", g->max_threads_per_sm);
    sb_num(b, "mem_latency_cycles", g->mem_latency_cycles);
    sb_printf(b, ",");
    sb_num(b, "comp_latency_cycles", g->comp_latency_cycles);
    sb_printf(b, ",");
    sb_num(b, "regs_fixed", g->regs_fixed);
    sb_printf(b, "},\"eval\":{");
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *f = &model_tsm2_fields[i];
        if (i)
            sb_printf(b, ",");
        if (f->type == MODEL_F_BOUND)
            sb_printf(b, "\"%s\":\"%s\"", f->key,
                      model_bound_name((enum model_bound)model_field_double(f, &p->tsm2)));
        else
            sb_num(b, f->key, model_field_double(f, &p->tsm2));
    }
    sb_printf(b, "}");
}

/*
 * The TSM2 problem and GPU of a tsm2/ism2 measurement (docs/model.md "TSM2 from a
 * measurement"). Returns NULL or the reason the model cannot be applied.
 */
static const char *tsm2_inputs(const struct dev_info *d, const struct db_measurement *m,
                               struct used *u, struct model_gpu *g, struct model_tsm2_problem *pr,
                               long *t2_kernel, long *t3_kernel)
{
    const struct kernels_kernel *k = registry_kernel(m);
    long t1 = 0, t2 = 0, t3 = 0;
    int e = elem_bytes_of(m->precision);

    if (!k)
        return "kernel not in the registry";
    if (e != 4 && e != 8)
        return "precision not fp32 or fp64";
    if (m->m <= 0 || m->n <= 0 || m->k <= 0)
        return "shape unknown";
    if (!m->params || json_long(m->params, "t1", &t1) != RK_OK)
        return "t1 unknown";
    switch (k->cost_family) {
    case MODEL_FAM_TSM2_V0: /* Alg. 1: one output register, one element of A at a time */
        t2 = 1;
        t3 = 1;
        break;
    case MODEL_FAM_TSM2_V1: /* Alg. 2: all n outputs in registers, one element of A */
        t2 = (long)m->n;
        t3 = 1;
        break;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        if (json_long(m->params, "t2", &t2) != RK_OK || json_long(m->params, "t3", &t3) != RK_OK)
            return "t2 or t3 unknown";
        break;
    default:
        return "not a tsm2 or ism2 kernel";
    }
    if (t1 < 0 || t1 > 1 << 20 || t2 < 1 || t3 < 1 || t2 > 1 << 20 || t3 > 1 << 20)
        return "t1, t2 or t3 out of range";
    *t2_kernel = t2;
    *t3_kernel = t3;
    /* A kernel whose tile is wider than the matrix computes min(t2, n) columns per pass. */
    pr->m = (long)m->m;
    pr->n = (long)m->n;
    pr->k = (long)m->k;
    pr->elem_bytes = e;
    pr->t1 = (int)t1;
    pr->t2 = (int)(t2 < m->n ? t2 : m->n);
    pr->t3 = (int)(t3 < m->k ? t3 : m->k);

    const struct db_ceiling *used[RK_GPU_NUSED];
    rk_tsm2_gpu(&d->dev, d->ceil, d->nceil, d->pts, d->npts, e, g, used);
    u->c[U_COMPUTE] = used[RK_GPU_COMPUTE];
    u->c[U_DRAM] = used[RK_GPU_DRAM];
    u->c[U_MEM_LAT] = used[RK_GPU_MEM_LAT];
    u->c[U_COMP_LAT] = used[RK_GPU_COMP_LAT];
    /* C of 004 §3.6.2 by offline profiling: the kernel's registers minus the tiles' */
    if (m->registers > 0) {
        double c = m->registers - (3.0 * pr->t2 + 2.0 * pr->t3) * e / 4.0;
        g->regs_fixed = c > 0 ? c : 0;
    }
    if (!u->c[U_COMPUTE])
        return e == 8 ? "no peak_fp64_fma ceiling" : "no peak_fp32_fma ceiling";
    if (!u->c[U_DRAM])
        return "no bw_dram_read or bw_dram_copy ceiling";
    if (!u->c[U_COMP_LAT])
        return e == 8 ? "no lat_fma_fp64 ceiling" : "no lat_fma_fp32 ceiling";
    return NULL;
}

/*
 * One model's prediction for one measurement on device d. Returns RK_OK (*out
 * filled, out->details malloc'd), RK_ENODATA with *why when the model cannot be
 * applied to this row (a number is unknown), or RK_ENOMEM (printed).
 */
/* A counter's value by alias; NaN when the measurement has none. */
static double metric_value(const struct db_measurement_row *row, const char *name)
{
    for (int i = 0; i < row->n_metrics; i++)
        if (row->metrics[i].name && strcmp(row->metrics[i].name, name) == 0)
            return row->metrics[i].value;
    return NAN;
}

/*
 * Bytes one thread of a TSM2/ISM2 kernel keeps in flight (docs/model.md
 * "occupancy"): V2, V3 and ISM2 fetch t3 elements of A before they use them (004
 * §3.5, the t3 of §3.6.2's Concurrent_mem), V0 and V1 the elements of one unrolled step of
 * their loop over k (KERNELS_TSM2_V0_UNROLL, KERNELS_TSM2_V1_UNROLL). Through
 * the cp.async ring (a_staged) a thread has KERNELS_TSM2_RING_STAGES groups of t3 x rpt
 * elements in flight while it waits for the oldest, fewer when its block streams fewer
 * groups (its k chunk / t3 per row tile, times the row tiles it takes). NaN for every
 * other kernel: not modelled, no derating.
 */
static double bytes_in_flight_per_thread(const struct db_measurement *m)
{
    const struct kernels_kernel *k = registry_kernel(m);
    int e = elem_bytes_of(m->precision);
    int prec = m->precision ? kernels_precision_parse(m->precision) : -1;
    struct model_params mp;
    double kchunk, tiles, groups, t3;
    if (!k || e <= 0 || prec < 0 || m->m <= 0 || m->k <= 0)
        return NAN;
    switch (k->cost_family) {
    case MODEL_FAM_TSM2_V0:
        return (double)KERNELS_TSM2_V0_UNROLL * e;
    case MODEL_FAM_TSM2_V1:
        return (double)KERNELS_TSM2_V1_UNROLL(kernels_tsm2_cols(m->n)) * e;
    case MODEL_FAM_TSM2_V2:
    case MODEL_FAM_TSM2_V3:
    case MODEL_FAM_ISM2:
    case MODEL_FAM_ISM2_OPT2:
        if (!registry_model_params(m, &mp, &prec) || mp.t3 < 1)
            return NAN;
        kchunk = m->grid[1] > 0 ? ceil((double)m->k / m->grid[1]) : (double)m->k;
        t3 = mp.t3 < kchunk ? mp.t3 : kchunk;
        if (!mp.a_staged || mp.t1 < 1 || m->grid[0] < 1)
            return t3 * e;
        tiles = ceil(ceil((double)m->m / ((double)mp.t1 * mp.rows_per_thread)) / m->grid[0]);
        groups = ceil(kchunk / mp.t3) * tiles;
        return (groups < KERNELS_TSM2_RING_STAGES ? groups : KERNELS_TSM2_RING_STAGES) * t3 *
               mp.rows_per_thread * e;
    default:
        return NAN;
    }
}

/*
 * The SM resources, clock, DRAM bandwidth and DRAM latency of device d, and the DRAM
 * curve (bandwidth against bytes in flight, probe lat_dram_loaded) when it was measured:
 * the utilisation a launch's bytes in flight reach is read off that curve, which holds
 * both the unloaded latency of a few loads in flight and the queueing near full
 * bandwidth; without it, Little's law at the unloaded chase plateau (docs/model.md
 * "occupancy"). The chase latency also times the issue model's staging loads.
 */
static void occupancy_gpu(const struct dev_info *d, struct used *u, struct model_gpu *g)
{
    memset(g, 0, sizeof *g);
    u->c[U_MEM_LAT] = find_ceiling(d, "lat_chase_dram");
    if (d->ncurve >= 2) {
        g->dram_curve_bytes = d->curve_bytes;
        g->dram_curve_util = d->curve_util;
        g->dram_curve_n = d->ncurve;
    }
    g->sms = d->dev.sm_count;
    g->regs_per_sm = d->dev.regs_per_sm;
    g->smem_per_sm = d->dev.smem_per_sm_bytes;
    g->max_threads_per_sm = d->dev.max_threads_per_sm;
    g->clock_hz = d->dev.sm_clock_mhz > 0 ? d->dev.sm_clock_mhz * 1e6 : NAN;
    g->bandwidth = rk_ceiling_si(u->c[U_DRAM]);
    g->mem_latency_cycles = rk_ceiling_si(u->c[U_MEM_LAT]);
    if (!isfinite(g->mem_latency_cycles) && d->npts > 0) {
        u->c[U_MEM_LAT] = NULL; /* no DRAM plateau: the curve's largest footprint */
        g->mem_latency_cycles = d->pts[d->npts - 1].cycles;
    }
}

/*
 * An L2 hit's latency for the issue model's staging term [cycles]: H100's L2 is two
 * partitions and addresses are spread over both, so an SM's loads find half their
 * lines in the near partition (lat_chase_l2) and half in the far one
 * (lat_chase_l2_far): the mean of the two, or the near one alone when the far one
 * was not measured. NaN when neither was.
 */
static double l2_latency(const struct dev_info *d, struct used *u)
{
    double near, far;
    u->c[U_L2_LAT] = find_ceiling(d, "lat_chase_l2");
    u->c[U_L2_FAR_LAT] = find_ceiling(d, "lat_chase_l2_far");
    near = rk_ceiling_si(u->c[U_L2_LAT]);
    far = rk_ceiling_si(u->c[U_L2_FAR_LAT]);
    if (!isfinite(near)) {
        u->c[U_L2_LAT] = u->c[U_L2_FAR_LAT] = NULL;
        return NAN;
    }
    if (!isfinite(far)) {
        u->c[U_L2_FAR_LAT] = NULL;
        return near;
    }
    return (near + far) / 2.0;
}

static void details_pipes(struct sbuf *b, const struct model_pipes *q)
{
    sb_printf(b, ",\"pipes\":{");
    sb_num(b, "busiest_share", q->busiest_share);
    sb_printf(b, ",");
    sb_num(b, "warps_per_sp", q->warps_per_sp);
    sb_printf(b, ",");
    sb_num(b, "fma_rate", q->fma_rate);
    sb_printf(b, ",");
    sb_num(b, "cycles_fma", q->cycles_fma);
    sb_printf(b, ",");
    sb_num(b, "cycles_issue", q->cycles_issue);
    sb_printf(b, ",");
    sb_num(b, "cycles_smem", q->cycles_smem);
    sb_printf(b, ",");
    sb_num(b, "cycles_l1", q->cycles_l1);
    sb_printf(b, ",");
    sb_num(b, "stage_latency", q->stage_latency);
    sb_printf(b, ",");
    sb_num(b, "cycles_stage", q->cycles_stage);
    sb_printf(b, ",");
    if (q->time_chain_s > 0) {
        sb_num(b, "time_chain_s", q->time_chain_s);
        sb_printf(b, ",");
    }
    sb_num(b, "time_s", q->time_s);
    sb_printf(b, ",\"bound\":\"%s\"}", model_bound_name(q->bound));
}

static void details_overlap(struct sbuf *b, const struct model_overlap *o)
{
    sb_printf(b, ",\"overlap\":{");
    sb_num(b, "p", o->p);
    sb_printf(b, ",\"terms_s\":{");
    for (int i = 0; i < MODEL_OVL_COUNT; i++) {
        sb_printf(b, "%s", i ? "," : "");
        sb_num(b, model_overlap_term_name((enum model_overlap_term)i), o->term_s[i]);
    }
    sb_printf(b, "},");
    sb_num(b, "largest_s", o->largest_s);
    sb_printf(b, ",");
    sb_num(b, "norm_s", o->norm_s);
    sb_printf(b, ",");
    sb_num(b, "epilogue_s", o->epilogue_s);
    sb_printf(b, ",");
    sb_num(b, "start_s", o->start_s);
    sb_printf(b, "}");
}

static void details_occupancy(struct sbuf *b, const struct model_predict_in *in,
                              const struct model_prediction *p)
{
    const struct model_occupancy *o = &p->occ;
    sb_printf(b, ",");
    sb_num(b, "launch_s", in->launch_s);
    sb_printf(b, ",\"occupancy\":{");
    if (in->launch) {
        sb_num(b, "blocks", in->launch->blocks);
        sb_printf(b, ",\"threads_per_block\":%d,\"regs_per_thread\":%d,",
                  in->launch->threads_per_block, in->launch->regs_per_thread);
        sb_num(b, "smem_per_block", in->launch->smem_per_block);
        sb_printf(b, ",");
        sb_num(b, "bytes_in_flight_per_thread", in->launch->bytes_in_flight_per_thread);
        sb_printf(b, ",\"blocks_per_sm\":%d,", o->blocks_per_sm);
        sb_num(b, "active_sms", o->active_sms);
        sb_printf(b, ",");
        sb_num(b, "resident_threads", o->resident_threads);
        sb_printf(b, ",");
        sb_num(b, "waves", o->waves);
        sb_printf(b, ",");
        sb_num(b, "bytes_in_flight", o->bytes_in_flight);
        sb_printf(b, ",");
        sb_num(b, "bytes_needed", o->bytes_needed);
        sb_printf(b, ",");
    }
    sb_num(b, "util", o->util);
    sb_printf(b, "}");
}

/*
 * The instruction and wavefront counts of the issue model for measurement m
 * (docs/model.md "issue"); RK_ENODATA for a kernel without them (TSM2 V1-V3, ISM2 and
 * cuBLAS are refused by model_issue_counts).
 */
static int issue_counts(const struct db_measurement *m, struct model_issue_counts *c)
{
    struct model_params mp;
    int prec;
    struct model_shape ms = {(long)m->m, (long)m->n, (long)m->k, elem_bytes_of(m->precision)};
    int cols = m->block[0] > 32 ? 32 : m->block[0];
    const struct kernels_kernel *k = registry_model_params(m, &mp, &prec);
    if (!k || cols < 1)
        return RK_ENODATA;
    if (model_issue_counts(k->cost_family, &ms, &mp, cols, c) != RK_OK)
        return RK_ENODATA;
    /* the counts' shared instructions move one element each: the seeds' kernels; a kernel that
     * loads vectors issues fewer, not counted (kernels_smem_load_bytes) */
    if (kernels_smem_load_bytes(k, prec) != ms.elem_bytes)
        c->smem_instr = 0;
    return RK_OK;
}

/*
 * overlap, for a kernel whose traffic roofkit does not count (a library's, TSM2 V1-V3, ISM2):
 * the L2 and shared-memory bytes the counters measured, where they exceed the compulsory
 * or analytic ones (cuBLAS's tiles move their operands through L2 and shared memory many
 * times; its compulsory count has them once).
 */
static void measured_levels(const struct dev_info *d, const struct db_measurement_row *row,
                            const struct db_measurement *m, struct model_predict_in *in,
                            struct used *u)
{
    double l2 = metric_value(row, "l2_bytes"), sh = metric_value(row, "shared_bytes");
    if (isfinite(l2) && l2 > in->level_bytes[MODEL_LEVEL_L2]) {
        in->level_bytes[MODEL_LEVEL_L2] = l2;
        u->c[U_L2] = find_ceiling(d, "bw_l2_read");
    }
    if (isfinite(sh) && sh > in->level_bytes[MODEL_LEVEL_SHARED]) {
        in->level_bytes[MODEL_LEVEL_SHARED] = sh;
        u->c[U_SHARED] = shared_ceiling(d, m);
    }
}

/*
 * Row tiles one block computes in turn before it is done (overlap's epilogue term): ISM2's
 * tcf (004 §5.2, Alg. 6 and 7), one for every other kernel and for a library's.
 */
static double epilogue_tiles(const struct db_measurement *m)
{
    struct model_params mp;
    int prec;
    const struct kernels_kernel *k = registry_model_params(m, &mp, &prec);
    if (!k || (k->cost_family != MODEL_FAM_ISM2 && k->cost_family != MODEL_FAM_ISM2_OPT2))
        return 1.0;
    return mp.tcf > 1 ? (double)mp.tcf : 1.0;
}

/*
 * The counts of issue_counters and overlap: the warp instructions the counters measured
 * (inst_executed) in place of the counted ones; a kernel without analytic counts
 * (counted = 0: TSM2 V1-V3, ISM2, cuBLAS) gets counts holding only those, its FMAs
 * from the measured flop count of its precision (0 when that pipe is unused: cuBLAS
 * DGEMM runs on the tensor cores) with no chain limit (its independent chains are not
 * known). RK_ENODATA when instructions were not measured.
 */
static int measured_issue_counts(const struct db_measurement_row *row,
                                 const struct db_measurement *m, int counted,
                                 struct model_issue_counts *c)
{
    double inst = metric_value(row, "inst_executed");
    if (!(isfinite(inst) && inst > 0))
        return RK_ENODATA;
    if (!counted) {
        int e = elem_bytes_of(m->precision);
        double fl = metric_value(row, e == 8   ? "flop_count_dp"
                                      : e == 2 ? "flop_count_hp"
                                               : "flop_count_sp");
        memset(c, 0, sizeof *c);
        c->fma_warp = isfinite(fl) && fl > 0 ? fl / (2.0 * 32.0) : 0;
        c->acc_per_thread = 0; /* unknown: no chain limit */
        {
            const struct kernels_kernel *k = registry_kernel(m);
            c->serial_loop = k && k->cost_family == MODEL_FAM_TSM2_V1;
        }
        c->bytes_dram = c->bytes_in_flight_per_thread = c->bytes_l2 = NAN;
    }
    c->instr_warp = inst;
    return RK_OK;
}

static int predict_one(const struct dev_info *d, const struct db_measurement_row *row,
                       enum model_kind kind, struct pred *out, const char **why)
{
    const struct db_measurement *m = &row->m;
    struct model_launch launch;
    struct model_issue_counts ic;
    struct model_predict_in in;
    struct model_prediction p;
    struct model_gpu g;
    struct model_tsm2_problem pr;
    struct used u;
    struct sbuf b = {NULL, 0, 0, 0};
    const char *dram_source = "analytic bytes_dram (no reuse)";
    long t2k = 0, t3k = 0;
    /* overlap takes issue_counters' inputs and terms */
    const int measured_issue = kind == MODEL_KIND_ISSUE_COUNTERS || kind == MODEL_KIND_OVERLAP;
    const int issue_like = kind == MODEL_KIND_ISSUE || measured_issue;

    memset(&in, 0, sizeof in);
    memset(&u, 0, sizeof u);
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (kind == MODEL_KIND_TSM2) {
        if ((*why = tsm2_inputs(d, m, &u, &g, &pr, &t2k, &t3k)) != NULL)
            return RK_ENODATA;
        in.gpu = &g;
        in.tsm2 = &pr;
    } else {
        u.c[U_COMPUTE] = compute_ceiling(d, m);
        u.c[U_DRAM] = dram_ceiling(d);
        in.flops = m->flops;
        in.peak_flops = rk_ceiling_si(u.c[U_COMPUTE]); /* NaN: model_predict says so */
        in.roofline_bytes = m->bytes_dram;
        in.bandwidth[MODEL_LEVEL_DRAM] = rk_ceiling_si(u.c[U_DRAM]);
        if (kind == MODEL_KIND_COUNTERS) {
            /* measured traffic; a level the counters do not give has no term */
            double l2 = metric_value(row, "l2_bytes"), sh = metric_value(row, "shared_bytes");
            in.level_bytes[MODEL_LEVEL_DRAM] =
                metric_value(row, "dram_read_bytes") + metric_value(row, "dram_write_bytes");
            in.level_bytes[MODEL_LEVEL_L2] = isfinite(l2) ? l2 : 0;
            in.level_bytes[MODEL_LEVEL_SHARED] = isfinite(sh) ? sh : 0;
            dram_source = "counters dram_read_bytes + dram_write_bytes";
            u.c[U_L2] = find_ceiling(d, "bw_l2_read");
            u.c[U_SHARED] = shared_ceiling(d, m);
            in.bandwidth[MODEL_LEVEL_L2] = rk_ceiling_si(u.c[U_L2]);
            in.bandwidth[MODEL_LEVEL_SHARED] = rk_ceiling_si(u.c[U_SHARED]);
            for (int i = MODEL_LEVEL_L2; i < MODEL_LEVEL_COUNT; i++)
                if (!(in.level_bytes[i] > 0))
                    u.c[U_DRAM + i] = NULL;
        }
        if (kind == MODEL_KIND_HIERARCHICAL || kind == MODEL_KIND_OCCUPANCY || issue_like) {
            struct model_cost rc;
            if (registry_cost(m, &rc) == RK_OK) {
                in.level_bytes[MODEL_LEVEL_DRAM] = rc.bytes_dram_min;
                in.level_bytes[MODEL_LEVEL_L2] = rc.bytes_l2;
                in.level_bytes[MODEL_LEVEL_L1] = rc.bytes_l1;
                in.level_bytes[MODEL_LEVEL_SHARED] = rc.bytes_shared;
                dram_source = "compulsory (model_cost bytes_dram_min)";
            } else {
                in.level_bytes[MODEL_LEVEL_DRAM] = m->bytes_dram;
                in.level_bytes[MODEL_LEVEL_L2] = m->bytes_l2;
                in.level_bytes[MODEL_LEVEL_L1] = m->bytes_l1;
                in.level_bytes[MODEL_LEVEL_SHARED] = m->bytes_shared;
            }
            u.c[U_L2] = find_ceiling(d, "bw_l2_read");
            u.c[U_L1] = find_ceiling(d, "bw_l1_read");
            u.c[U_SHARED] = shared_ceiling(d, m);
            in.bandwidth[MODEL_LEVEL_L2] = rk_ceiling_si(u.c[U_L2]);
            in.bandwidth[MODEL_LEVEL_L1] = rk_ceiling_si(u.c[U_L1]);
            in.bandwidth[MODEL_LEVEL_SHARED] = rk_ceiling_si(u.c[U_SHARED]);
            for (int i = MODEL_LEVEL_L2; i < MODEL_LEVEL_COUNT; i++)
                if (!(in.level_bytes[i] > 0))
                    u.c[U_DRAM + i] = NULL; /* no term: the ceiling was not used */
        }
        if (kind == MODEL_KIND_OCCUPANCY || issue_like) {
            long blocks = (long)m->grid[0] * m->grid[1] * m->grid[2];
            int threads = m->block[0] * m->block[1] * m->block[2];
            u.c[U_LAUNCH] = find_ceiling(d, "launch_async");
            in.launch_s = rk_ceiling_si(u.c[U_LAUNCH]);
            if (blocks > 0 && threads > 0) {
                /* the launch recorded with the measurement; a library call's (cuBLAS) is
                 * its longest kernel, recorded by `roofkit run`'s counter launches
                 * (rk_counters_fill_launch), and missing when it ran without counters */
                occupancy_gpu(d, &u, &g);
                launch = (struct model_launch){(double)blocks, threads,
                                               m->registers > 0 ? m->registers : 0,
                                               (double)(m->smem_static > 0 ? m->smem_static : 0) +
                                                   (m->smem_dynamic > 0 ? m->smem_dynamic : 0),
                                               bytes_in_flight_per_thread(m)};
                in.gpu = &g;
                in.launch = &launch;
                int counted = issue_like && issue_counts(m, &ic) == RK_OK;
                const int analytic = counted; /* roofkit counts this kernel's traffic */
                if (measured_issue) {
                    if (measured_issue_counts(row, m, counted, &ic) != RK_OK) {
                        *why = "inst_executed not measured";
                        return RK_ENODATA;
                    }
                    counted = 1;
                }
                if (counted) {
                    /* sector-counted DRAM bytes and the sector in flight (TSM2 V0) */
                    if (isfinite(ic.bytes_dram)) {
                        in.level_bytes[MODEL_LEVEL_DRAM] = ic.bytes_dram;
                        dram_source = "sectors the access pattern moves (issue counts)";
                    }
                    if (measured_issue) {
                        /* the DRAM traffic the counters saw, as roofline_counters takes it */
                        double r = metric_value(row, "dram_read_bytes");
                        double w = metric_value(row, "dram_write_bytes");
                        if (isfinite(r) && isfinite(w) && r + w > 0) {
                            in.level_bytes[MODEL_LEVEL_DRAM] = r + w;
                            dram_source = "counters dram_read_bytes + dram_write_bytes";
                            if (kind == MODEL_KIND_OVERLAP) { /* its epilogue term */
                                in.dram_write_bytes = w;
                                in.epilogue_tiles = epilogue_tiles(m);
                            }
                        }
                    }
                    if (kind == MODEL_KIND_OVERLAP && !analytic)
                        measured_levels(d, row, m, &in, &u);
                    if (isfinite(ic.bytes_in_flight_per_thread))
                        launch.bytes_in_flight_per_thread = ic.bytes_in_flight_per_thread;
                    if (isfinite(ic.bytes_l2)) /* sectors behind L1 (naive) */
                        in.level_bytes[MODEL_LEVEL_L2] = ic.bytes_l2;
                    if (ic.tiles > 0 && ic.stage_rounds > 0) {
                        in.l2_latency_cycles = l2_latency(d, &u);
                        /* the round's store, barrier and loop (probe); absent: nothing */
                        u.c[U_STAGE_EXTRA] = find_ceiling(d, "lat_stage_extra");
                        in.stage_extra_cycles = rk_ceiling_si(u.c[U_STAGE_EXTRA]);
                        if (!(in.stage_extra_cycles >= 0))
                            u.c[U_STAGE_EXTRA] = NULL;
                    }
                    u.c[U_COMP_LAT] = find_ceiling(
                        d, elem_bytes_of(m->precision) == 8 ? "lat_fma_fp64" : "lat_fma_fp32");
                    g.comp_latency_cycles = rk_ceiling_si(u.c[U_COMP_LAT]);
                    if (ic.smem_instr > 0) { /* a shared instruction's issue cycles (probe) */
                        u.c[U_ISSUE_SHARED] = find_ceiling(d, "lat_issue_shared");
                        g.issue_cycles_shared = rk_ceiling_si(u.c[U_ISSUE_SHARED]);
                        if (!(g.issue_cycles_shared > 0))
                            g.issue_cycles_shared = 0;
                    }
                    u.c[U_L1] = find_ceiling(d, "bw_l1_read");
                    u.c[U_SHARED] = shared_ceiling(d, m);
                    in.bandwidth[MODEL_LEVEL_L1] = rk_ceiling_si(u.c[U_L1]);
                    in.bandwidth[MODEL_LEVEL_SHARED] = rk_ceiling_si(u.c[U_SHARED]);
                    in.issue = &ic;
                }
            }
        }
    }
    if (model_predict(kind, &in, &p, why) != RK_OK)
        return RK_ENODATA;

    sb_printf(&b, "{\"model\":\"%s\",", model_kind_name(kind));
    sb_num(&b, "predicted_time_s", p.time_s);
    sb_printf(&b, ",\"bound\":\"%s\",", model_bound_name(p.bound));
    if (kind == MODEL_KIND_TSM2)
        details_tsm2(&b, &in, &p, t2k, t3k);
    else
        details_terms(&b, &in, &p, kind != MODEL_KIND_ROOFLINE, dram_source);
    if (kind == MODEL_KIND_OCCUPANCY || issue_like)
        details_occupancy(&b, &in, &p);
    if (issue_like && in.issue)
        details_pipes(&b, &p.pipes);
    if (kind == MODEL_KIND_OVERLAP)
        details_overlap(&b, &p.overlap);
    details_ceilings(&b, &u);
    sb_printf(&b, "}");
    if (b.oom) {
        free(b.s);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    out->time_ns = p.time_s * 1e9;
    out->bound = model_bound_name(p.bound);
    out->details = b.s;
    return RK_OK;
}

/* --------------------------------------------------------------- selection */

struct model_opts {
    int64_t capture; /* 0: every run/profile capture with measurements */
    unsigned models; /* bits 1 << enum model_kind */
    int check;
};

/* The measurements to work on, with the device of each. */
struct selection {
    struct db_measurement_row **rows; /* one array per capture */
    int *nrows;
    struct dev_info **dev_of_cap; /* device of each capture (NULL: none) */
    int64_t *caps;
    int ncaps;
    long total;
    struct devices devs;
};

static void selection_release(struct selection *s)
{
    for (int i = 0; i < s->ncaps; i++)
        db_free_measurements(s->rows[i], s->nrows[i]);
    free(s->rows);
    free(s->nrows);
    free(s->dev_of_cap);
    free(s->caps);
    devices_release(&s->devs);
    memset(s, 0, sizeof *s);
}

/* A capture whose measurements the model predicts (run, profile); --check takes
 * every capture with measurements, so that no stored prediction is left out. */
static int is_measurement_capture(const struct db_capture *c, int check)
{
    if (c->n_measurements <= 0)
        return 0;
    return check || c->kind == DB_CAPTURE_RUN || c->kind == DB_CAPTURE_PROFILE;
}

/*
 * Fills s with the measurements of the chosen captures and loads each one's device
 * with its ceilings. Writes nothing. RK_ENODATA (printed) when there is nothing to
 * work on or a device has no probe capture.
 */
static int select_measurements(struct db *db, const struct model_opts *o, struct selection *s)
{
    struct db_capture *caps = NULL;
    struct db_device *alldev = NULL;
    int ncaps = 0, ndev = 0, rc, want = 0;
    char list[256] = "";
    size_t used = 0;

    memset(s, 0, sizeof *s);
    if ((rc = db_list_captures(db, &caps, &ncaps)) != RK_OK)
        return rc;
    if ((rc = db_list_devices(db, &alldev, &ndev)) != RK_OK)
        goto out;
    if (o->capture) {
        int found = -1;
        for (int i = 0; i < ncaps; i++)
            if (caps[i].id == o->capture)
                found = i;
        if (found < 0) {
            rc = rk_error(RK_ENODATA,
                          "there is no capture %lld in '%s'; see 'roofkit list captures'",
                          (long long)o->capture, db_path(db));
            goto out;
        }
        if (!is_measurement_capture(&caps[found], o->check)) {
            rc = rk_error(RK_ENODATA,
                          "capture %lld is a %s capture with no measurements; pass a run or "
                          "profile capture (see 'roofkit list captures')",
                          (long long)o->capture, db_capture_kind_name(caps[found].kind));
            goto out;
        }
    }
    for (int i = 0; i < ncaps; i++)
        if (o->capture ? caps[i].id == o->capture : is_measurement_capture(&caps[i], o->check))
            want++;
    if (want == 0) {
        rc = rk_error(RK_ENODATA,
                      "no run or profile capture with measurements in '%s'; run "
                      "'roofkit run' or 'roofkit profile' first",
                      db_path(db));
        goto out;
    }
    s->rows = calloc((size_t)want, sizeof *s->rows);
    s->nrows = calloc((size_t)want, sizeof *s->nrows);
    s->dev_of_cap = calloc((size_t)want, sizeof *s->dev_of_cap);
    s->caps = calloc((size_t)want, sizeof *s->caps);
    if (!s->rows || !s->nrows || !s->dev_of_cap || !s->caps) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    for (int i = 0; i < ncaps && rc == RK_OK; i++) {
        const struct db_capture *c = &caps[i];
        int64_t dev = c->device_id;
        int j = s->ncaps;
        if (!(o->capture ? c->id == o->capture : is_measurement_capture(c, o->check)))
            continue;
        if (dev == 0 && ndev == 1)
            dev = alldev[0].id; /* a profile capture names no device: the only one there is */
        s->caps[j] = c->id;
        rc = db_query_measurements(db, c->id, &s->rows[j], &s->nrows[j]);
        if (rc != RK_OK)
            break;
        s->ncaps++;
        s->total += s->nrows[j];
        if (dev != 0)
            rc = devices_get(db, &s->devs, dev, &s->dev_of_cap[j]);
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%lld", j ? ", " : "",
                                     (long long)c->id);
    }
    if (rc == RK_OK && !o->check)
        rk_info("model: %ld measurement%s of capture%s %s (%s)", s->total, s->total == 1 ? "" : "s",
                s->ncaps == 1 ? "" : "s", list,
                o->capture ? "as given" : "every run and profile capture with measurements");
out:
    db_free_captures(caps, ncaps);
    db_free_devices(alldev, ndev);
    if (rc != RK_OK)
        selection_release(s);
    return rc;
}

/* ------------------------------------------------------------------- summary */

/* One prediction against its measurement, for the error statistics. */
struct sample {
    int kind;
    char family[48];
    double pred, meas;
};

struct samples {
    struct sample *v;
    size_t n, cap;
    long made[MODEL_KIND_COUNT];
    long skipped[MODEL_KIND_COUNT];
    const char *first_skip[MODEL_KIND_COUNT]; /* the first reason, static */
    long unverified;
};

static int samples_add(struct samples *ss, int kind, const struct db_measurement *m, double pred)
{
    if (m->verified == 0 || !(m->time_median_ns > 0) || !isfinite(m->time_median_ns))
        return RK_OK; /* failed rows are never charted; nothing to compare with */
    if (ss->n == ss->cap) {
        size_t cap = ss->cap ? 2 * ss->cap : 256;
        struct sample *v = realloc(ss->v, cap * sizeof *v);
        if (!v)
            return rk_error(RK_ENOMEM, "out of host memory");
        ss->v = v;
        ss->cap = cap;
    }
    ss->v[ss->n].kind = kind;
    snprintf(ss->v[ss->n].family, sizeof ss->v[ss->n].family, "%s",
             m->family ? m->family : m->kernel);
    ss->v[ss->n].pred = pred;
    ss->v[ss->n].meas = m->time_median_ns;
    ss->n++;
    return RK_OK;
}

/* The error statistics of one group of samples. */
struct stats {
    struct model_ape_summary a; /* APE [%] (NaN without samples) and rows within 10 / 25 % */
    size_t n;                   /* samples */
};

/* The statistics of the samples of `kind` (and `family`, if not NULL). */
static void stats_of(const struct samples *ss, int kind, const char *family, struct stats *st)
{
    double *p = malloc((ss->n ? ss->n : 1) * sizeof *p);
    double *q = malloc((ss->n ? ss->n : 1) * sizeof *q);
    size_t n = 0;
    memset(st, 0, sizeof *st);
    st->a.median = st->a.mean = st->a.p90 = NAN;
    if (p && q) {
        for (size_t i = 0; i < ss->n; i++) {
            if (ss->v[i].kind != kind || (family && strcmp(ss->v[i].family, family) != 0))
                continue;
            p[n] = ss->v[i].pred;
            q[n] = ss->v[i].meas;
            n++;
        }
        if (n > 0 && model_ape_summarize(p, q, n, &st->a) != RK_OK)
            st->a.median = st->a.mean = st->a.p90 = NAN;
    }
    free(p);
    free(q);
    st->n = n;
}

static void print_pct(double v)
{
    if (isfinite(v))
        printf(" %10.1f%%", v);
    else
        printf(" %11s", "-");
}

/* The four error columns of a summary row: median, mean, p90, rows within 10 / 25 %. */
static void print_stats(const struct stats *st)
{
    print_pct(st->a.median);
    print_pct(st->a.mean);
    print_pct(st->a.p90);
    printf(" %7zu %7zu", st->a.within10, st->a.within25);
}

static void print_summary(const struct samples *ss, unsigned models)
{
    struct stats st;
    printf("%-17s %11s %8s %11s %11s %11s %7s %7s\n", "model", "predictions", "skipped",
           "median APE", "mean APE", "p90 APE", "<=10%", "<=25%");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        if (!(models & (1u << k)))
            continue;
        stats_of(ss, k, NULL, &st);
        printf("%-17s %11ld %8ld", model_kind_name((enum model_kind)k), ss->made[k],
               ss->skipped[k]);
        print_stats(&st);
        printf("%s%s\n", ss->first_skip[k] ? "  first skip: " : "",
               ss->first_skip[k] ? ss->first_skip[k] : "");
    }
    printf("\n%-17s %-16s %6s %11s %11s %11s %7s %7s\n", "model", "family", "n", "median APE",
           "mean APE", "p90 APE", "<=10%", "<=25%");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        for (size_t i = 0; i < ss->n; i++) {
            const struct sample *s = &ss->v[i];
            int seen = 0;
            if (s->kind != k)
                continue;
            for (size_t j = 0; j < i && !seen; j++)
                seen = ss->v[j].kind == k && strcmp(ss->v[j].family, s->family) == 0;
            if (seen)
                continue;
            stats_of(ss, k, s->family, &st);
            printf("%-17s %-16s %6zu", model_kind_name((enum model_kind)k), s->family, st.n);
            print_stats(&st);
            printf("\n");
        }
    }
    if (ss->unverified)
        printf("\n%ld measurement%s that failed verification %s predicted but left out of the "
               "errors\n",
               ss->unverified, ss->unverified == 1 ? "" : "s", ss->unverified == 1 ? "is" : "are");
}

/* --------------------------------------------------------------------- write */

static int write_predictions(struct db *db, const char *cmdline, const struct model_opts *o,
                             struct selection *s)
{
    struct samples ss;
    int64_t cap = 0;
    long done = 0, in_tx = 0;
    int rc, tx = 0;
    char note[512];

    memset(&ss, 0, sizeof ss);
    if ((rc = db_capture_begin(db, 0, DB_CAPTURE_MODEL, cmdline, RK_VERSION, &cap)) != RK_OK)
        return rc;
    for (int c = 0; c < s->ncaps && rc == RK_OK; c++) {
        const struct dev_info *d = s->dev_of_cap[c];
        for (int r = 0; r < s->nrows[c] && rc == RK_OK; r++) {
            const struct db_measurement *m = &s->rows[c][r].m;
            if (rk_interrupted) {
                rc = RK_EINTR;
                break;
            }
            if (!tx) {
                if ((rc = db_begin(db)) != RK_OK)
                    break;
                tx = 1;
            }
            if (m->verified == 0)
                ss.unverified++;
            for (int k = 0; k < MODEL_KIND_COUNT && rc == RK_OK; k++) {
                struct pred pd;
                const char *why = NULL;
                if (!(o->models & (1u << k)) || !applies((enum model_kind)k, m))
                    continue;
                if (!d) {
                    why = "its capture names no device";
                    rc = RK_ENODATA;
                } else {
                    rc = predict_one(d, &s->rows[c][r], (enum model_kind)k, &pd, &why);
                }
                if (rc == RK_ENODATA) {
                    ss.skipped[k]++;
                    if (!ss.first_skip[k])
                        ss.first_skip[k] = why;
                    rc = RK_OK;
                    continue;
                }
                if (rc != RK_OK)
                    break;
                struct db_prediction dp = {
                    0,          m->id,    cap,       model_kind_name((enum model_kind)k),
                    pd.time_ns, pd.bound, pd.details};
                rc = db_insert_prediction(db, &dp, NULL);
                if (rc == RK_OK) {
                    ss.made[k]++;
                    rc = samples_add(&ss, k, m, pd.time_ns);
                }
                free(pd.details);
            }
            done++;
            rk_progress("model", done, s->total);
            if (rc == RK_OK && ++in_tx >= WRITE_BATCH) {
                rc = db_commit(db);
                tx = 0;
                in_tx = 0;
            }
        }
    }
    if (rc == RK_OK && tx)
        rc = db_commit(db);
    rk_progress_end();
    if (rc == RK_EINTR) {
        db_capture_mark_interrupted(db, cap); /* rolls back the open batch */
        rk_warn("interrupted: predictions of the committed batches are stored in capture %lld",
                (long long)cap);
        goto out;
    }
    if (rc != RK_OK) {
        db_rollback(db);
        db_capture_end(db, cap, DB_FAILED);
        goto out;
    }
    {
        size_t used = (size_t)snprintf(note, sizeof note, "predictions for capture%s",
                                       s->ncaps == 1 ? "" : "s");
        for (int c = 0; c < s->ncaps && used < sizeof note; c++)
            used += (size_t)snprintf(note + used, sizeof note - used, "%s %lld", c ? "," : "",
                                     (long long)s->caps[c]);
        for (int i = 0; i < s->devs.n && used < sizeof note; i++)
            used += (size_t)snprintf(note + used, sizeof note - used,
                                     "%s ceilings of device %lld up to probe capture %lld",
                                     i ? "," : ";", (long long)s->devs.d[i].id,
                                     (long long)s->devs.d[i].probe_capture);
    }
    rc = db_capture_note(db, cap, note);
    if (rc == RK_OK)
        rc = db_capture_end(db, cap, DB_DONE);
    if (rc == RK_OK) {
        rk_info("model: capture %lld holds the predictions", (long long)cap);
        print_summary(&ss, o->models);
    }
out:
    free(ss.v);
    return rc;
}

/* --------------------------------------------------------------------- check */

static int check_predictions(struct db *db, const struct model_opts *o, struct selection *s,
                             int64_t model_capture)
{
    long checked = 0, bad = 0, other = 0;
    int rc = RK_OK;

    for (int c = 0; c < s->ncaps && rc == RK_OK; c++) {
        const struct dev_info *d = s->dev_of_cap[c];
        for (int r = 0; r < s->nrows[c] && rc == RK_OK; r++) {
            const struct db_measurement_row *row = &s->rows[c][r];
            for (int i = 0; i < row->n_predictions && rc == RK_OK; i++) {
                const struct db_prediction *sp = &row->predictions[i];
                enum model_kind k;
                struct pred pd = {0, NULL, NULL};
                const char *why = NULL;
                char reason[160] = "";
                if (model_capture && sp->capture_id != model_capture)
                    continue;
                if (model_kind_from_name(sp->model, &k) != RK_OK) {
                    other++;
                    continue;
                }
                if (!(o->models & (1u << k)))
                    continue;
                checked++;
                if (!d)
                    why = "its capture names no device";
                else if (!applies(k, &row->m))
                    why = "the model does not apply to this kernel";
                else if ((rc = predict_one(d, row, k, &pd, &why)) == RK_ENODATA)
                    rc = RK_OK;
                if (rc != RK_OK)
                    break;
                if (why) {
                    snprintf(reason, sizeof reason, "cannot be recomputed (%s)", why);
                } else {
                    double diff = fabs(sp->predicted_time_ns - pd.time_ns);
                    if (!(diff <= CHECK_REL_TOL * fabs(pd.time_ns)))
                        snprintf(reason, sizeof reason, "stored %.9g ns, recomputed %.9g ns",
                                 sp->predicted_time_ns, pd.time_ns);
                    else if (!sp->bound || strcmp(sp->bound, pd.bound) != 0)
                        snprintf(reason, sizeof reason, "stored bound %s, recomputed %s",
                                 sp->bound ? sp->bound : "(none)", pd.bound);
                }
                free(pd.details);
                if (reason[0]) {
                    if (bad < CHECK_MAX_SHOW)
                        fprintf(stderr, "  measurement %lld (%s), %s: %s\n", (long long)row->m.id,
                                row->m.kernel, sp->model, reason);
                    bad++;
                }
            }
        }
    }
    if (rc != RK_OK)
        return rc;
    if (other)
        rk_info("model --check: %ld prediction%s of other models not checked", other,
                other == 1 ? "" : "s");
    if (checked == 0)
        return rk_error(RK_ENODATA,
                        "no stored predictions to check in '%s'; run 'roofkit model' "
                        "first",
                        db_path(db));
    if (bad)
        return rk_error(RK_EVERIFY,
                        "%ld of %ld stored predictions differ from a recomputation with the "
                        "current ceilings (first %d shown above); run 'roofkit model' again",
                        bad, checked, bad < CHECK_MAX_SHOW ? (int)bad : CHECK_MAX_SHOW);
    printf("checked %ld prediction%s: each equals its recomputation from the current ceilings "
           "(relative difference <= %g, same bound)\n",
           checked, checked == 1 ? "" : "s", CHECK_REL_TOL);
    return RK_OK;
}

/* ------------------------------------------------------------------- command */

static int parse_models(const char *arg, unsigned *models)
{
    char **names = NULL;
    int n = 0, rc = RK_OK;
    if (rk_parse_name_list(arg, &names, &n) != RK_OK)
        return rk_error(RK_EUSAGE, "option '--model' needs a list such as roofline,tsm2, not '%s'",
                        arg);
    *models = 0;
    for (int i = 0; i < n && rc == RK_OK; i++) {
        enum model_kind k;
        if (model_kind_from_name(names[i], &k) != RK_OK)
            rc = rk_error(RK_EUSAGE,
                          "unknown model '%s'; say roofline, hierarchical or tsm2 (the seeds'), "
                          "roofline_counters, occupancy, issue, issue_counters or overlap "
                          "(extensions)",
                          names[i]);
        else
            *models |= 1u << k;
    }
    rk_free_name_list(names, n);
    return rc;
}

static int cmd_model_predict(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"capture", required_argument, NULL, 'c'},
        {"model", required_argument, NULL, 'm'},
        {"check", no_argument, NULL, 'k'},
        {NULL, 0, NULL, 0},
    };
    struct model_opts o = {0, (1u << MODEL_KIND_COUNT) - 1, 0};
    struct selection sel;
    struct stat st;
    int64_t model_capture = 0;
    long v;
    int c, rc, have_st;

    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'c':
            if (rk_opt_long("capture", optarg, 1, LONG_MAX, &v) != RK_OK)
                return RK_EUSAGE;
            o.capture = v;
            break;
        case 'm':
            if (parse_models(optarg, &o.models) != RK_OK)
                return RK_EUSAGE;
            break;
        case 'k':
            o.check = 1;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help model'",
                        argv[optind]);
    /* The model reads measurements and ceilings: a missing or empty file holds none,
     * and must not be created or initialised by a read-write open. */
    have_st = stat(ctx->db_path, &st) == 0;
    if (!have_st && errno == ENOENT)
        return rk_error(RK_EDB,
                        "database '%s' does not exist; run 'roofkit probe' and 'roofkit run' "
                        "first, or pass --db",
                        ctx->db_path);
    if (have_st && S_ISREG(st.st_mode) && st.st_size == 0)
        return rk_error(RK_EDB,
                        "database '%s' is empty; run 'roofkit probe' and 'roofkit run' first, or "
                        "pass --db",
                        ctx->db_path);
    if ((rc = rk_ctx_open_db(ctx, !o.check)) != RK_OK)
        return rc;
    if (o.check && o.capture) {
        /* --check --capture may name the model capture whose predictions to check */
        struct db_capture cap;
        rc = db_get_capture(ctx->db, o.capture, &cap);
        if (rc == RK_OK && cap.kind == DB_CAPTURE_MODEL) {
            model_capture = o.capture;
            o.capture = 0;
        }
        if (rc == RK_OK)
            db_capture_release(&cap);
        else if (rc != RK_ENODATA)
            return rc;
    }
    if ((rc = select_measurements(ctx->db, &o, &sel)) != RK_OK)
        return rc;
    if (o.check)
        rc = check_predictions(ctx->db, &o, &sel, model_capture);
    else
        rc = write_predictions(ctx->db, ctx->cmdline, &o, &sel);
    selection_release(&sel);
    return rc;
}

int cmd_model(int argc, char **argv, struct rk_ctx *ctx)
{
    if (argc >= 2 && strcmp(argv[1], "explain") == 0) {
        argv[1] = argv[0]; /* messages name the command: "... for 'model'" */
        return cmd_model_explain(argc - 1, argv + 1);
    }
    return cmd_model_predict(argc, argv, ctx);
}
