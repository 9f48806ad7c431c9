/*
 * test_energy_schema.c - the schema step of energy (step 5): the ceiling table rebuilt so that
 * its kind allows 'energy', a measurement's energy reading, a prediction's energy and the
 * energy spans of a profile capture, through migration, inserts, queries, journals and merge.
 * Label `unit`.
 *
 * Case map:
 *   E1 a file of the previous schema version (ceilings, a measurement and its prediction) is
 *      refused read-only as older, then migrated by a read-write open: user_version is this
 *      build's, every row kept with its id and values, the new columns NULL; the rebuilt
 *      ceiling table keeps its indexes and takes kind 'energy', which the old one refused;
 *      any other kind is still refused
 *   E2 round trips: a measurement with a reading (energy, power, clock, temperature, launches)
 *      and one without (zero-initialised: all five NULL, not 0); through a journal too; a
 *      prediction's energy (0 stored as NULL); an energy ceiling; energy spans (scope refused
 *      when not one of the three)
 *   E3 roofkit merge copies the reading, the predicted energy and the spans (device remapped)
 */
#define _POSIX_C_SOURCE 200809L
#include "db_fixture.h"

#include "common.h"
#include "internal.h" /* white box: the migration steps' text (dbi_migrations) */

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file of the schema before the last step with a probe capture's two ceilings, a run
 * capture's measurement and a prediction of it. */
static void make_previous(const char *path)
{
    char sql[160];
    for (int i = 0; i < dbi_nmigrations - 1; i++)
        raw_exec(path, dbi_migrations[i]);
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             DB_APPLICATION_ID, dbi_nmigrations - 1);
    raw_exec(path, sql);
    raw_exec(
        path,
        "INSERT INTO device (id, name, uuid) VALUES (3, 'H100', 'GPU-e1');"
        "INSERT INTO capture (id, device_id, kind, status, started_at, uid) VALUES"
        " (5, 3, 'probe', 'done', '2026-01-01T00:00:00Z', '0123456789abcdef0123456789abcdef'),"
        " (6, 3, 'run', 'done', '2026-01-01T00:01:00Z', '1123456789abcdef0123456789abcdef');"
        "INSERT INTO ceiling (id, capture_id, name, kind, level, value, unit, params, power_w,"
        " peer_device_id) VALUES"
        " (21, 5, 'bw_dram_read', 'bandwidth', 'dram', 3000.5, 'GB/s', '{\"a\":1}', 350, NULL),"
        " (22, 5, 'peer_bw', 'bandwidth', 'peer', 400, 'GB/s', NULL, NULL, 3);"
        "INSERT INTO measurement (id, capture_id, kernel, reps, time_min_ns, time_median_ns,"
        " time_max_ns, cache_state, source) VALUES (11, 6, 'triad', 5, 90, 100, 110, 'warm',"
        " 'suite');"
        "INSERT INTO prediction (id, measurement_id, model, predicted_time_ns) VALUES"
        " (31, 11, 'roofline', 95);");
}

static void e1_migrate(void **state)
{
    (void)state;
    char path[512];
    struct db *db = NULL;
    new_path(path, sizeof path, "e1");
    make_previous(path);
    expect_refused(path, DB_RO, "older than this roofkit");
    open_rw(path, &db);
    db_close(db);
    assert_int_equal(raw_int(path, "PRAGMA user_version"), dbi_nmigrations);
    assert_int_equal(raw_int(path,
                             "SELECT count(*) FROM ceiling WHERE id = 21 AND value = 3000.5"
                             " AND params = '{\"a\":1}' AND power_w = 350 AND capture_id = 5"),
                     1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling WHERE id = 22"
                                   " AND peer_device_id = 3"),
                     1);
    assert_int_equal(raw_int(path,
                             "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                             " AND name IN ('ceiling_capture', 'ceiling_name', 'ceiling_peer')"),
                     3);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ceiling_v5'"),
                     0);
    assert_int_equal(raw_int(path,
                             "SELECT count(*) FROM measurement WHERE id = 11 AND"
                             " energy_j IS NULL AND power_w IS NULL AND energy_launches IS NULL"),
                     1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM prediction WHERE id = 31 AND"
                                   " predicted_energy_j IS NULL"),
                     1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM energy_span"), 0);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);

    /* kind 'energy' is taken now; a kind outside the list is still refused */
    open_rw(path, &db);
    struct db_ceiling c = sample_ceiling("energy_fp32_fma", 4.7);
    c.kind = "energy";
    c.level = NULL;
    c.precision = "fp32";
    c.unit = "pJ/FLOP";
    assert_int_equal(db_insert_ceiling(db, 5, &c, NULL), RK_OK);
    c.kind = "power";
    stderr_begin();
    assert_int_equal(db_insert_ceiling(db, 5, &c, NULL), RK_EDB);
    assert_non_null(strstr(stderr_end(), "CHECK"));
    struct db_ceiling *cs = NULL;
    int n = 0;
    assert_int_equal(db_query_ceilings(db, 0, 5, &cs, &n), RK_OK);
    assert_int_equal(n, 3);
    assert_int_equal(cs[0].id, 21);
    assert_string_equal(cs[2].kind, "energy");
    assert_string_equal(cs[2].unit, "pJ/FLOP");
    db_free_ceilings(cs, n);
    db_close(db);
}

/* A measurement with a full reading. */
static struct db_measurement with_energy(const char *kernel)
{
    struct db_measurement m = sample_measurement(kernel);
    m.energy_j = 0.0125;
    m.power_w = 371.5;
    m.sm_clock_mhz = 1755;
    m.temp_c = 52.5;
    m.energy_launches = 400;
    return m;
}

/* The readings of capture cap's measurements in id order into e[i] = {J, W, MHz, C, launches}
 * (NaN for NULL, launches 0 for NULL); returns how many rows. */
static int energy_of(struct db *db, int64_t cap, double e[][5], int max)
{
    struct db_measurement_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_query_measurements(db, cap, &rows, &n), RK_OK);
    for (int i = 0; i < n && i < max; i++) {
        e[i][0] = rows[i].m.energy_j;
        e[i][1] = rows[i].m.power_w;
        e[i][2] = rows[i].m.sm_clock_mhz;
        e[i][3] = rows[i].m.temp_c;
        e[i][4] = (double)rows[i].m.energy_launches;
    }
    db_free_measurements(rows, n);
    return n;
}

static void expect_reading(const double *e)
{
    assert_true(e[0] == 0.0125 && e[1] == 371.5 && e[2] == 1755 && e[3] == 52.5 && e[4] == 400);
}

static void expect_none(const double *e)
{
    assert_true(isnan(e[0]) && isnan(e[1]) && isnan(e[2]) && isnan(e[3]) && e[4] == 0);
}

/* A database with a run capture (*cap) of two measurements, the first with a reading and a
 * prediction of energy; *dev is its device. */
static struct db *two_measurements(const char *stem, char *path, size_t size, int64_t *dev,
                                   int64_t *cap)
{
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-energy");
    open_rw(new_path(path, size, stem), &db);
    assert_int_equal(db_device_upsert(db, &d, dev), RK_OK);
    assert_int_equal(db_capture_begin(db, *dev, DB_CAPTURE_RUN, "roofkit run", "t", cap), RK_OK);
    struct db_measurement a = with_energy("triad"), b = sample_measurement("scale");
    int64_t mid = 0;
    assert_int_equal(db_insert_measurement(db, *cap, &a, NULL, 0, &mid), RK_OK);
    assert_int_equal(db_insert_measurement(db, *cap, &b, NULL, 0, NULL), RK_OK);
    struct db_prediction p = {0, mid, 0, "roofline", 1000, "dram", NULL, 0.011};
    assert_int_equal(db_insert_prediction(db, &p, NULL), RK_OK);
    struct db_energy_span s[2] = {
        {0, 0, 0, "program", "./app", 12.5, 4e10, 312.5, 1000},
        {0, 0, *dev, "nvtx", "solve/", NAN, 1e9, NAN, -1},
    };
    assert_int_equal(db_insert_energy_spans(db, *cap, s, 2), RK_OK);
    return db;
}

static void expect_spans(struct db *db, int64_t cap, int64_t dev)
{
    struct db_energy_span *s = NULL;
    int n = 0;
    assert_int_equal(db_query_energy_spans(db, cap, &s, &n), RK_OK);
    assert_int_equal(n, 2);
    assert_string_equal(s[0].scope, "program");
    assert_string_equal(s[0].name, "./app");
    assert_true(s[0].energy_j == 12.5 && s[0].time_ns == 4e10 && s[0].power_w == 312.5);
    assert_int_equal(s[0].launches, 1000);
    assert_int_equal(s[0].device_id, 0);
    assert_string_equal(s[1].scope, "nvtx");
    assert_true(isnan(s[1].energy_j) && isnan(s[1].power_w) && s[1].time_ns == 1e9);
    assert_int_equal(s[1].launches, -1);
    assert_int_equal(s[1].device_id, dev);
    db_free_energy_spans(s, n);
}

static void e2_round_trip(void **state)
{
    (void)state;
    char path[512], dir[600], jpath[1024];
    double e[4][5];
    int64_t dev = 0, cap = 0;
    int fd = -1;
    struct db *db = two_measurements("e2", path, sizeof path, &dev, &cap);
    /* a zero-initialised reading is no reading, whatever its doubles hold */
    struct db_measurement z = sample_measurement("zero");
    z.energy_j = 5.0;
    assert_int_equal(db_insert_measurement(db, cap, &z, NULL, 0, NULL), RK_OK);
    assert_int_equal(energy_of(db, cap, e, 4), 3);
    expect_reading(e[0]);
    expect_none(e[1]);
    expect_none(e[2]);

    /* the predicted energy, and 0 as none */
    struct db_prediction *p = NULL;
    int n = 0;
    assert_int_equal(db_query_predictions(db, cap, &p, &n), RK_OK);
    assert_int_equal(n, 1);
    assert_true(p[0].predicted_energy_j == 0.011);
    struct db_prediction q = p[0];
    q.model = "tsm2";
    q.predicted_energy_j = 0;
    assert_int_equal(db_insert_prediction(db, &q, NULL), RK_OK);
    db_free_predictions(p, n);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM prediction WHERE model = 'tsm2'"
                                   " AND predicted_energy_j IS NULL"),
                     1);

    expect_spans(db, cap, dev);
    struct db_energy_span bad = {0, 0, 0, "region", "x", 1, 1, 1, 1};
    stderr_begin();
    assert_int_equal(db_insert_energy_spans(db, cap, &bad, 1), RK_EDB);
    assert_non_null(strstr(stderr_end(), "CHECK"));

    /* through a journal, as roofkit profile stores a program's launches */
    struct db_measurement a = with_energy("triad"), b = sample_measurement("scale");
    snprintf(dir, sizeof dir, "%s.journal", path);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(db_journal_create(dir, cap, jpath, sizeof jpath, &fd), RK_OK);
    assert_int_equal(db_journal_append(fd, &a, NULL, 0), RK_OK);
    assert_int_equal(db_journal_append(fd, &b, NULL, 0), RK_OK);
    close(fd);
    struct db_journal_stats st;
    assert_int_equal(db_journal_fold(db, cap, jpath, &st), RK_OK);
    assert_int_equal(st.stored, 2);
    double j[5][5];
    assert_int_equal(energy_of(db, cap, j, 5), 5);
    expect_reading(j[3]);
    expect_none(j[4]);
    db_close(db);
}

static void e3_merge(void **state)
{
    (void)state;
    char in[512], out[512];
    double e[2][5];
    int64_t dev = 0, cap = 0;
    struct db *db = two_measurements("e3-in", in, sizeof in, &dev, &cap);
    assert_int_equal(db_capture_end(db, cap, DB_DONE), RK_OK);
    db_close(db);
    open_rw(new_path(out, sizeof out, "e3-out"), &db);
    /* OUT has another device first, so that the input's device gets another id */
    struct db_device other = sample_device("GPU-other");
    int64_t odev = 0;
    assert_int_equal(db_device_upsert(db, &other, &odev), RK_OK);
    struct db_merge_stats st;
    assert_int_equal(db_merge_check(in, out), RK_OK);
    assert_int_equal(db_merge(db, in, &st), RK_OK);
    assert_int_equal(st.captures_added, 1);
    int64_t ncap = 0;
    assert_int_equal(db_latest_capture(db, DB_CAPTURE_RUN, 0, &ncap), RK_OK);
    assert_int_equal(energy_of(db, ncap, e, 2), 2);
    expect_reading(e[0]);
    expect_none(e[1]);
    assert_int_equal(
        raw_int(out, "SELECT count(*) FROM prediction WHERE predicted_energy_j = 0.011"), 1);
    int64_t ndev = raw_int(out, "SELECT id FROM device WHERE uuid = 'GPU-energy'");
    assert_true(ndev != dev);
    expect_spans(db, ncap, ndev);
    /* merged twice: nothing added */
    assert_int_equal(db_merge(db, in, &st), RK_OK);
    assert_int_equal(raw_int(out, "SELECT count(*) FROM energy_span"), 2);
    db_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(e1_migrate),
        cmocka_unit_test(e2_round_trip),
        cmocka_unit_test(e3_merge),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
