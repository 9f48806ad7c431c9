/*
 * db_fixture.c - what the db/ tests share (db_fixture.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "db_fixture.h"

#include "common.h"
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char tmpdir[256];
static int file_counter;

/* A fresh path in the test's temporary folder. */
const char *new_path(char *buf, size_t size, const char *stem)
{
    snprintf(buf, size, "%s/%s-%d.db", tmpdir, stem, ++file_counter);
    return buf;
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int side_exists(const char *path, const char *suffix)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s", path, suffix);
    return exists(buf);
}

/* Whole file in memory (malloc'd); *size its length. */
unsigned char *slurp(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)*size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)*size, f), (size_t)*size);
    fclose(f);
    return buf;
}

void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Runs SQL on a raw SQLite connection (to build files db/ must refuse, or to look). */
void raw_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    char *err = NULL;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("raw sql failed: %s (%s)", err, sql);
    sqlite3_close(h);
}

long long raw_int(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    long long v;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* stderr captured into a temporary file around a call. */
static int saved_stderr = -1;
static char err_path[300];

void stderr_begin(void)
{
    int fd;
    fflush(stderr);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", tmpdir);
    fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Returns what was printed (static buffer). */
const char *stderr_end(void)
{
    static char text[4096];
    FILE *f;
    size_t n;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    f = fopen(err_path, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/*
 * Opens `path` in `mode`, expecting a refusal: RK_EDB, one line naming the file and
 * containing `needle`, and the file byte-for-byte as before, with no side files left.
 */
void expect_refused(const char *path, enum db_mode mode, const char *needle)
{
    long before_n = 0, after_n = 0;
    unsigned char *before = slurp(path, &before_n);
    unsigned char *after;
    struct db *db = (struct db *)1;
    const char *msg;
    int wal_before = side_exists(path, "-wal");
    int rc;

    stderr_begin();
    rc = db_open(path, mode, &db);
    msg = stderr_end();
    assert_int_equal(rc, RK_EDB);
    assert_null(db);
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "roofkit: error: "));
    assert_non_null(strstr(msg, path));
    if (!strstr(msg, needle))
        fail_msg("message '%s' lacks '%s'", msg, needle);
    after = slurp(path, &after_n);
    assert_int_equal(before_n, after_n);
    assert_memory_equal(before, after, (size_t)before_n);
    if (!wal_before) {
        assert_false(side_exists(path, "-wal"));
        assert_false(side_exists(path, "-shm"));
    }
    free(before);
    free(after);
}

void open_rw(const char *path, struct db **db)
{
    assert_int_equal(db_open(path, DB_RW, db), RK_OK);
    assert_non_null(*db);
}

/* A measurement with every field set; kernel names it. */
struct db_measurement sample_measurement(const char *kernel)
{
    struct db_measurement m;
    memset(&m, 0, sizeof m);
    m.kernel = kernel;
    m.family = "tsm2";
    m.precision = "fp64";
    m.m = 10240;
    m.n = 16;
    m.k = 10240;
    m.params = "{\"t1\":128,\"t2\":16,\"t3\":32}";
    m.grid[0] = 80;
    m.grid[1] = 1;
    m.grid[2] = 1;
    m.block[0] = 128;
    m.block[1] = 1;
    m.block[2] = 1;
    m.registers = 96;
    m.smem_static = 0;
    m.smem_dynamic = 16384;
    m.reps = 20;
    m.time_min_ns = 1000.5;
    m.time_median_ns = 1100.25;
    m.time_max_ns = 1300.125;
    m.flops = 2.0 * 10240 * 16 * 10240;
    m.bytes_dram = 8.0 * (10240.0 * 10240 + 2 * 10240 * 16);
    m.bytes_l2 = NAN;
    m.bytes_l1 = NAN;
    m.bytes_shared = 12345.0;
    m.verified = 1;
    m.rel_error = 1.5e-15;
    m.cache_state = "cold";
    m.source = "suite";
    m.launch_index = -1;
    m.correlation_id = -1;
    return m;
}

const struct db_metric sample_metrics[NSAMPLE_METRICS] = {
    {0, 0, "gld_throughput", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second", 2.5e12,
     "bytes/second"},
    {0, 0, "achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", 48.75, "%"},
    {0, 0, "dram_read_bytes", "dram__bytes_read.sum", 8.4e8, "bytes"},
    {0, 0, "flop_count_dp", NULL, NAN, NULL},
    {0, 0, "l2_bytes", "lts__t_bytes.sum", 1.0e9, "bytes"},
};

struct db_device sample_device(const char *uuid)
{
    struct db_device d;
    memset(&d, 0, sizeof d);
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = uuid;
    d.pci_bus_id = "0000:19:00.0";
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.sm_clock_mhz = 1980;
    d.mem_clock_mhz = 2619;
    d.bus_width_bits = 5120;
    d.l2_bytes = 52428800;
    d.memory_bytes = 84929216512ll;
    d.smem_per_sm_bytes = 233472;
    d.smem_per_block_optin_bytes = 232448;
    d.regs_per_sm = 65536;
    d.max_threads_per_sm = 2048;
    d.driver_version = 13000;
    d.runtime_version = 13000;
    d.host = "gpu-host";
    return d;
}

struct db_ceiling sample_ceiling(const char *name, double value)
{
    struct db_ceiling c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.kind = "bandwidth";
    c.level = "dram";
    c.precision = NULL;
    c.value = value;
    c.unit = "GB/s";
    c.method = "read kernel, 8 GiB buffer";
    c.params = "{\"bytes\":8589934592}";
    c.reps = 30;
    c.min = value * 0.99;
    c.median = value;
    c.max = value * 1.01;
    c.theoretical = 3352.0;
    c.sm_clock_mhz = 1980;
    c.power_w = NAN;
    c.temp_c = 45;
    return c;
}

/* Builds a small roofkit database with rows in several pages; closes it. */
void make_roofkit_db(const char *path)
{
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-make");
    struct db_measurement m = sample_measurement("filler");
    int64_t dev = 0, cap = 0;
    int i;
    open_rw(path, &db);
    assert_int_equal(db_device_upsert(db, &d, &dev), RK_OK);
    assert_int_equal(db_capture_begin(db, dev, DB_CAPTURE_RUN, "roofkit run", "0.1.0", &cap),
                     RK_OK);
    for (i = 0; i < 60; i++)
        assert_int_equal(db_insert_measurement(db, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                         RK_OK);
    assert_int_equal(db_capture_end(db, cap, DB_DONE), RK_OK);
    db_close(db);
}

int fixture_main(const struct CMUnitTest *tests, size_t n, void (*before)(void))
{
    const char *base = getenv("TMPDIR");
    char cmd[400];
    int failed;

    snprintf(tmpdir, sizeof tmpdir, "%s/roofkit-test-db-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot create a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    if (before)
        before();
    failed = _cmocka_run_group_tests("db", tests, n, NULL, NULL);
    if (failed == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmpdir);
    }
    return failed;
}
