/*
 * bench_merge.c - the speed target of `roofkit merge`: 100 inputs of 10,000 measurements,
 * each with 21 metrics and 3 predictions as a real run and model capture store them (the
 * metric names and CUPTI names of the default set, prediction details of the sizes the
 * roofline, hierarchical and tsm2 models write), merged into a new file in under 10 s.
 *
 *   bench_merge [INPUTS [MEASUREMENTS [DIR]]]     (defaults 100, 10000, a new /tmp folder)
 *
 * One template database is built through db/ (a probe capture with ceilings and a latency
 * curve, a run capture, a model capture), then copied byte for byte once per input, each copy
 * given fresh capture uids, its own GPU uuid, host and rank, as the files of one process per
 * GPU of a job would differ. Only the merge is timed: db_merge_check and db_merge of every
 * input, as `roofkit merge` runs them. Prints the figures; exits non-zero when the merged file
 * does not hold INPUTS times the template's rows. Not a test of speed (a timed test fails on
 * a loaded machine): ctest runs it small, for its checks only.
 */
#define _DEFAULT_SOURCE /* sync */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "db.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NMETRICS 21

/* The default counter set as `roofkit run` stores it: alias, CUPTI name, unit. */
static const char *const metric_names[NMETRICS][3] = {
    {"gld_throughput", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second", "byte/second"},
    {"gld_efficiency", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", "percent"},
    {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "percent"},
    {"dram_read_bytes", "dram__bytes_read.sum", "byte"},
    {"dram_write_bytes", "dram__bytes_write.sum", "byte"},
    {"l2_bytes", "lts__t_bytes.sum", "byte"},
    {"l1_bytes", "l1tex__t_bytes.sum", "byte"},
    {"shared_bytes", "sm__sass_data_bytes_mem_shared.sum", "byte"},
    {"flop_count_sp",
     "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum + "
     "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum + "
     "2*smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
     "flop"},
    {"flop_count_dp",
     "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum + "
     "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum + "
     "2*smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
     "flop"},
    {"flop_count_hp",
     "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum + "
     "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum + "
     "2*smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
     "flop"},
    {"tensor_ops_bf16_wgmma", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", "flop"},
    {"tensor_ops_fp16_wgmma", "sm__ops_path_tensor_op_hgmma_src_fp16.sum", "flop"},
    {"tensor_ops_tf32_wgmma", "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", "flop"},
    {"tensor_ops_int8_wgmma", "sm__ops_path_tensor_op_igmma_src_int8.sum", "op"},
    {"tensor_ops_fp8", "sm__ops_path_tensor_src_fp8.sum", "flop"},
    {"tensor_ops_fp64", "sm__ops_path_tensor_src_fp64.sum", "flop"},
    {"inst_executed", "smsp__sass_inst_executed.sum", "instruction"},
    {"gpu_time", "gpu__time_duration.sum", "nanosecond"},
    {"sm_clock", "sm__cycles_elapsed.avg.per_second", "cycle/second"},
    {"l2_hit_rate", "lts__t_sector_hit_rate.pct", "percent"},
};

/* The models of the template and the size of the details each writes (bytes, as stored by
 * a real model capture). */
static const struct {
    const char *name;
    int details_bytes;
} models[] = {{"roofline", 564}, {"hierarchical", 1140}, {"tsm2", 1669}};
#define NMODELS ((int)(sizeof models / sizeof models[0]))

/* CPU seconds of this process, user and system: steadier than the clock on a shared machine. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_merge: %s\n", what);
    return 1;
}

/* A details object of about `bytes` bytes: named terms with numbers, as analysis writes. */
static void make_details(char *out, size_t size, const char *model, int bytes, long i)
{
    int n = snprintf(out, size, "{\"model\":\"%s\",\"predicted_time_s\":%.17g", model,
                     1e-4 * (1 + i % 97));
    for (int t = 0; n + 40 < bytes && (size_t)n + 48 < size; t++)
        n += snprintf(out + n, size - (size_t)n, ",\"term_%d\":%.17g", t, 1.0 / (3.0 + t + i));
    snprintf(out + n, size - (size_t)n, "}");
}

/* The template: a probe, a run of n measurements with their metrics, a model capture. */
static int make_template(const char *path, long n)
{
    struct db *db = NULL;
    struct db_device d = {0};
    int64_t dev = 0, probe = 0, run = 0, model = 0;
    int rc;

    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-template";
    d.cc_major = 9;
    d.sm_count = 132;
    d.sm_clock_mhz = 1980;
    d.host = "template";
    if ((rc = db_open(path, DB_RW, &db)) != RK_OK)
        return rc;
    rc = db_device_upsert(db, &d, &dev);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev, DB_CAPTURE_PROBE, "roofkit probe", "0.1.0", &probe);
    for (int i = 0; rc == RK_OK && i < 40; i++) {
        char name[32];
        struct db_ceiling c = {0};
        snprintf(name, sizeof name, "bw_probe_%d", i);
        c.name = name;
        c.kind = "bandwidth";
        c.level = "dram";
        c.value = 3000 + i;
        c.unit = "GB/s";
        c.params = "{\"bytes\":8589934592,\"blocks\":1056,\"threads\":1024,\"unroll\":4}";
        c.reps = 30;
        c.min = c.median = c.max = c.value;
        c.theoretical = c.sm_clock_mhz = c.power_w = c.temp_c = NAN;
        rc = db_insert_ceiling(db, probe, &c, NULL);
    }
    if (rc == RK_OK) {
        struct db_latency_point p[58];
        for (int i = 0; i < 58; i++)
            p[i] =
                (struct db_latency_point){1024ll << (i % 29), 64 << (i / 29), 30.0 + i, 15.0 + i};
        rc = db_insert_latency_points(db, probe, p, 58);
    }
    if (rc == RK_OK)
        rc = db_capture_end(db, probe, DB_DONE);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev, DB_CAPTURE_RUN, "roofkit run", "0.1.0", &run);
    if (rc == RK_OK)
        rc = db_capture_begin(db, dev, DB_CAPTURE_MODEL, "roofkit model", "0.1.0", &model);
    if (rc == RK_OK)
        rc = db_begin(db);
    for (long i = 0; rc == RK_OK && i < n; i++) {
        struct db_measurement m = {0};
        struct db_metric mt[NMETRICS];
        int64_t mid = 0;
        char details[2048];
        m.kernel = "tsm2_v3";
        m.family = "tsm2";
        m.precision = i % 2 ? "fp64" : "fp32";
        m.m = m.k = 1024 * (1 + i % 16);
        m.n = 16;
        m.params = "{\"t1\":256,\"t2\":4,\"t3\":16,\"ksplit\":3,\"apipe\":1,\"rpt\":2}";
        m.grid[0] = 80, m.grid[1] = m.grid[2] = 1;
        m.block[0] = 256, m.block[1] = m.block[2] = 1;
        m.registers = 96;
        m.reps = 10;
        m.time_min_ns = 1000.0 + i, m.time_median_ns = 1100.0 + i, m.time_max_ns = 1300.0 + i;
        m.flops = 2.0 * m.m * m.n * m.k;
        m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = 8.0 * m.m * m.k;
        m.verified = 1;
        m.rel_error = 1e-15;
        m.cache_state = "cold";
        m.source = "suite";
        m.launch_index = m.correlation_id = -1;
        for (int j = 0; j < NMETRICS; j++)
            mt[j] = (struct db_metric){0,
                                       0,
                                       metric_names[j][0],
                                       metric_names[j][1],
                                       1e9 * (j + 1) + i,
                                       metric_names[j][2]};
        rc = db_insert_measurement(db, run, &m, mt, NMETRICS, &mid);
        for (int j = 0; rc == RK_OK && j < NMODELS; j++) {
            struct db_prediction p = {0,          mid,    model,   models[j].name,
                                      1000.0 + i, "dram", details, NAN};
            make_details(details, sizeof details, models[j].name, models[j].details_bytes, i);
            rc = db_insert_prediction(db, &p, NULL);
        }
    }
    if (rc == RK_OK)
        rc = db_commit(db);
    if (rc == RK_OK)
        rc = db_capture_end(db, run, DB_DONE);
    if (rc == RK_OK)
        rc = db_capture_end(db, model, DB_DONE);
    db_close(db);
    return rc;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    unsigned char *buf = NULL;
    if (f && fstat(fileno(f), &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL &&
        fread(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size) {
        *size = (size_t)st.st_size;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

/* Input i: the template's bytes, then fresh uids, its own GPU, host and rank. */
static int make_input(const char *path, const unsigned char *bytes, size_t size, int i)
{
    FILE *f = fopen(path, "wb");
    sqlite3 *h = NULL;
    char sql[512];
    int ok = f && fwrite(bytes, 1, size, f) == size;

    if (f && fclose(f) != 0)
        ok = 0;
    snprintf(sql, sizeof sql,
             "UPDATE capture SET uid = lower(hex(randomblob(16))), host = 'node%03d', rank = %d,"
             " local_rank = %d, world_size = 1000;"
             "UPDATE device SET uuid = 'GPU-bench-%06d', host = 'node%03d'",
             i / 8, i, i % 8, i, i / 8);
    ok = ok && sqlite3_open(path, &h) == SQLITE_OK &&
         sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(h);
    return ok ? 0 : 1;
}

static long long count_rows(sqlite3 *h, const char *table)
{
    char sql[96];
    sqlite3_stmt *st = NULL;
    long long n = -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Rows of every table of path: into total, and each table's into per[] (may be NULL). */
static long long table_rows(const char *path, long long *per)
{
    sqlite3 *h = NULL;
    long long total = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return -1;
    }
    for (int t = 0; db_table_name(t); t++) {
        long long n = count_rows(h, db_table_name(t));
        if (per)
            per[t] = n;
        total += n;
    }
    sqlite3_close(h);
    return total;
}

int main(int argc, char **argv)
{
    int ninputs = argc > 1 ? atoi(argv[1]) : 100;
    long nmeas = argc > 2 ? atol(argv[2]) : 10000;
    char dir[256], tmpl[300], in[320], out[300];
    unsigned char *bytes;
    size_t size = 0;
    long long per_in[16] = {0}, per_out[16] = {0}, rows_in, rows_out;
    struct db_merge_stats total = {0};
    struct db *db = NULL;
    double t0, t_check = 0, t_merge = 0, cpu0;
    int reuse;

    if (ninputs < 1 || nmeas < 1)
        return fail("usage: bench_merge [INPUTS [MEASUREMENTS [DIR]]]");
    if (argc > 3)
        snprintf(dir, sizeof dir, "%s", argv[3]);
    else if (snprintf(dir, sizeof dir, "/tmp/rk-bench-merge-XXXXXX") < 0 || !mkdtemp(dir))
        return fail("cannot create a temporary folder");
    snprintf(tmpl, sizeof tmpl, "%s/template.db", dir);
    snprintf(out, sizeof out, "%s/merged.db", dir);
    unlink(out);
    rk_set_quiet(1);

    /* A DIR that holds the inputs of an earlier run with the same INPUTS and MEASUREMENTS
     * (and `reuse` in it) is merged again as it is: the benchmark without the set-up. */
    snprintf(in, sizeof in, "%s/reuse", dir);
    reuse = access(in, F_OK) == 0;
    t0 = rk_now_s();
    if (!reuse) {
        unlink(tmpl);
        if (make_template(tmpl, nmeas) != RK_OK)
            return fail("cannot build the template database");
    }
    if (!(bytes = slurp(tmpl, &size)))
        return fail("cannot read the template database");
    rows_in = table_rows(tmpl, per_in);
    for (int i = 0; i < ninputs && !reuse; i++) {
        snprintf(in, sizeof in, "%s/in-%04d.db", dir, i);
        if (make_input(in, bytes, size, i) != 0)
            return fail("cannot write an input database");
    }
    free(bytes);
    sync(); /* the inputs on disk, as a job leaves them, before the clock starts */
    printf("inputs: %d files of %.1f MB (%lld rows each: %lld measurements, %lld metrics, %lld "
           "predictions), made in %.1f s\n",
           ninputs, size / 1e6, rows_in, per_in[4], per_in[5], per_in[6], rk_now_s() - t0);

    cpu0 = cpu_s();
    if (db_open(out, DB_RW, &db) != RK_OK)
        return fail("cannot create the output database");
    for (int i = 0; i < ninputs; i++) {
        struct db_merge_stats st;
        double t1 = rk_now_s(), t2;
        snprintf(in, sizeof in, "%s/in-%04d.db", dir, i);
        if (db_merge_check(in, out) != RK_OK)
            return fail("an input was refused");
        t2 = rk_now_s();
        if (db_merge(db, in, &st) != RK_OK)
            return fail("a merge failed");
        t_check += t2 - t1;
        t_merge += rk_now_s() - t2;
        total.captures_added += st.captures_added;
        total.rows_added += st.rows_added;
    }
    t0 = rk_now_s();
    db_close(db); /* the last checkpoint */
    t_merge += rk_now_s() - t0;
    cpu0 = cpu_s() - cpu0;

    rows_out = table_rows(out, per_out);
    printf("merged: %d inputs, %lld captures, %lld rows (%lld measurements, %lld metrics, %lld "
           "predictions) in %.2f s (checks %.2f s, merges %.2f s; %.2f s of CPU): %.2f M rows/s, "
           "%.0f MB/s of input\n",
           ninputs, (long long)total.captures_added, (long long)total.rows_added, per_out[4],
           per_out[5], per_out[6], t_check + t_merge, t_check, t_merge, cpu0,
           total.rows_added / (t_check + t_merge) / 1e6,
           ninputs * (size / 1e6) / (t_check + t_merge));
    /* Every table holds INPUTS copies of the template's rows, devices included (one GPU each). */
    for (int t = 0; db_table_name(t); t++)
        if (per_out[t] != per_in[t] * ninputs) {
            fprintf(stderr, "bench_merge: table %s holds %lld rows, expected %lld\n",
                    db_table_name(t), per_out[t], per_in[t] * ninputs);
            return 1;
        }
    if (rows_out != total.rows_added)
        return fail("the merge's row count differs from the file's");
    if (argc <= 3) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_merge: could not remove %s\n", dir);
    }
    return 0;
}
