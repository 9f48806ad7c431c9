/*
 * test_merge.c - db/merge.c: one database from many (db_merge_check, db_merge), and the
 * migration of a schema 1 file that merge relies on.
 *
 * Case map:
 *   M01 a merge renumbers ids past OUT's and remaps every foreign key: each table's rows, read
 *       through their parents (capture uid, device uuid), are the same in OUT as in the input;
 *       a peer ceiling's peer_device_id and a profiled launch's device_id name OUT's row of
 *       that GPU; no foreign key dangles; the input is byte for byte unchanged, no side file
 *       left; OUT is back in WAL with foreign keys on
 *   M02 the same input twice: the second merge adds nothing (all captures already present);
 *       the first runs while another connection reads OUT (in WAL then, without waiting)
 *   M03 two inputs describe one GPU (same uuid) differently: one device row, OUT's kept, one
 *       warning line naming both values; first_seen/last_seen widened to both
 *   M04 an input of schema 1 merges from an upgraded copy: rows, derived uids, the file
 *       unchanged and still schema 1, no temporary file left; merged twice, nothing added;
 *       another rank's schema 1 file alike but for its measurements adds its own captures
 *   M05 schema 1 -> 2 migration in place (schema.c: every change has a test that migrates a
 *       file of the previous version; schema 1 ends at the current one): rows kept, a unique
 *       uid per capture, new columns NULL
 *   M06 refusals, OUT and input unchanged, one error line each: OUT as its own input (any
 *       spelling of the path), a missing input, a folder, a text file, another program's
 *       database, a newer schema
 *   M07 an input that fails mid-way (disk full after some tables): OUT as it was, settings
 *       restored; the same merge succeeds once there is room
 *   M08 a model capture made after the first merge: its predictions go to OUT's copies of the
 *       measurements (the newer replaces, a new model adds); those whose measurement OUT holds
 *       differently are dropped, counted and warned about once
 */
#define _POSIX_C_SOURCE 200809L
#include "db_fixture.h"

#include "common.h"
#include "internal.h" /* white box: the connection, schema 1's text (dbi_migrations[0]) */

#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

/* One integer from sql run on a raw connection to `out` with `in` attached as `i`. */
static long long joint_int(const char *out, const char *in, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char attach[600];
    long long v;
    assert_int_equal(sqlite3_open_v2(out, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    snprintf(attach, sizeof attach, "ATTACH '%s' AS i", in);
    assert_int_equal(sqlite3_exec(h, attach, NULL, NULL, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sqlite3_errmsg(h), sql);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* q with every "S." replaced by schema "." (q names its tables S.device, S.capture, ...). */
static void in_schema(char *dst, size_t size, const char *q, const char *schema)
{
    size_t n = 0;
    for (; *q && n + 16 < size; q++) {
        if (q[0] == 'S' && q[1] == '.' && (n == 0 || dst[n - 1] == ' ' || dst[n - 1] == '(')) {
            n += (size_t)snprintf(dst + n, size - n, "%s", schema);
            continue;
        }
        dst[n++] = *q;
    }
    dst[n] = '\0';
}

/*
 * The rows that q (with S. tables) selects are the same in OUT (main) as in the input (i):
 * none of the input's `expect` rows (distinct ones) is missing from OUT.
 */
static void same_rows(const char *out, const char *in, const char *q, long long expect)
{
    char a[2048], b[2048], sql[4400];
    in_schema(a, sizeof a, q, "i");
    in_schema(b, sizeof b, q, "main");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s EXCEPT %s)", a, b);
    if (joint_int(out, in, sql) != 0)
        fail_msg("rows of the input missing from OUT: %s", q);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s)", a);
    assert_int_equal(joint_int(out, in, sql), expect);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s INTERSECT %s)", b, a);
    assert_int_equal(joint_int(out, in, sql), expect);
}

/* Each table's rows through their parents: what a merge must keep, whatever the ids. */
static const char q_captures[] =
    "SELECT c.uid, c.kind, c.status, c.cmdline, c.host, c.rank, d.uuid FROM S.capture c"
    " LEFT JOIN S.device d ON d.id = c.device_id";
static const char q_ceilings[] =
    "SELECT c.uid, e.name, e.value, e.params, p.uuid FROM S.ceiling e JOIN S.capture c"
    " ON c.id = e.capture_id LEFT JOIN S.device p ON p.id = e.peer_device_id";
static const char q_latency[] =
    "SELECT c.uid, l.footprint_bytes, l.stride_bytes, l.ns FROM S.latency_point l"
    " JOIN S.capture c ON c.id = l.capture_id";
static const char q_measurements[] =
    "SELECT c.uid, m.kernel, m.time_median_ns, m.params, d.uuid FROM S.measurement m"
    " JOIN S.capture c ON c.id = m.capture_id LEFT JOIN S.device d ON d.id = m.device_id";
static const char q_metrics[] =
    "SELECT c.uid, m.kernel, m.launch_index, x.name, x.raw_name, x.value FROM S.metric x"
    " JOIN S.measurement m ON m.id = x.measurement_id JOIN S.capture c ON c.id = m.capture_id";
static const char q_predictions[] =
    "SELECT c.uid, m.kernel, m.launch_index, p.model, p.predicted_time_ns, p.details, pc.uid"
    " FROM S.prediction p"
    " JOIN S.measurement m ON m.id = p.measurement_id JOIN S.capture c ON c.id = m.capture_id"
    " LEFT JOIN S.capture pc ON pc.id = p.capture_id";

/* What OUT holds, as text that changes when any row does (malloc'd). */
static char *fingerprint(const char *path)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char *text;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(
            h,
            "SELECT (SELECT group_concat(id || name || uuid || first_seen || last_seen)"
            " FROM device) || ';' || (SELECT group_concat(id || uid || status)"
            " FROM capture) || ';' || (SELECT count(*) || total(id) FROM ceiling)"
            " || ';' || (SELECT count(*) || total(id) FROM latency_point) || ';'"
            " || (SELECT count(*) || total(id) FROM measurement) || ';' ||"
            " (SELECT count(*) || total(id) || total(value) FROM metric) || ';' ||"
            " (SELECT count(*) || total(id) || total(predicted_time_ns)"
            " FROM prediction)",
            -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    text = strdup((const char *)sqlite3_column_text(st, 0));
    assert_non_null(text);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return text;
}

/* OUT holds what it held: print (from fingerprint, freed here) is its text still. */
static void unchanged(const char *path, char *print)
{
    char *now = fingerprint(path);
    assert_string_equal(now, print);
    free(now);
    free(print);
}

/* The file at path still holds `before` (size bytes, from slurp; freed here). */
static void same_bytes(const char *path, unsigned char *before, long size)
{
    long n = 0;
    unsigned char *now = slurp(path, &n);
    assert_int_equal(n, size);
    assert_memory_equal(before, now, (size_t)size);
    free(now);
    free(before);
}

static char *journal_mode(struct db *db)
{
    static char mode[16];
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db->h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return mode;
}

static long long conn_int(struct db *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v;
    assert_int_equal(sqlite3_prepare_v2(db->h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* OUT's settings after a merge: WAL, foreign keys on, synchronous NORMAL as db_open set. */
static void settings_restored(struct db *db)
{
    assert_string_equal(journal_mode(db), "wal");
    assert_int_equal(conn_int(db, "PRAGMA foreign_keys"), 1);
    assert_int_equal(conn_int(db, "PRAGMA synchronous"), 1);
}

/*
 * An input as one rank writes it: GPU-B is stored before GPU-A (so its ids are not OUT's);
 * a probe capture of GPU-A with a ceiling, a peer ceiling towards GPU-B and a latency curve;
 * a profile capture on GPU-A whose second launch ran on GPU-B; a model capture predicting
 * both launches. *meas receives the two measurement ids (may be NULL).
 */
static void make_input(const char *path, const char *tag, int64_t *meas)
{
    struct db *db = NULL;
    struct db_device a = sample_device("GPU-A"), b = sample_device("GPU-B");
    struct db_ceiling bw = sample_ceiling("bw_dram_read", 3000.0);
    struct db_ceiling peer = sample_ceiling("bw_peer_ce_read", 380.0);
    struct db_latency_point pts[3] = {
        {16384, 128, 33.5, 17.0}, {1 << 20, 128, 260.0, 131.3}, {1 << 30, 128, 690.0, 348.5}};
    struct db_measurement m = sample_measurement(tag);
    int64_t da = 0, dbb = 0, probe = 0, prof = 0, model = 0, mid[2] = {0, 0};
    const char *models[] = {"roofline", "tsm2"};

    b.name = "NVIDIA H100 PCIe";
    open_rw(path, &db);
    assert_int_equal(db_device_upsert(db, &b, &dbb), RK_OK);
    assert_int_equal(db_device_upsert(db, &a, &da), RK_OK);
    assert_int_equal(db_capture_begin(db, da, DB_CAPTURE_PROBE, "roofkit probe", "0.1.0", &probe),
                     RK_OK);
    assert_int_equal(db_insert_ceiling(db, probe, &bw, NULL), RK_OK);
    peer.peer_device_id = dbb;
    assert_int_equal(db_insert_ceiling(db, probe, &peer, NULL), RK_OK);
    assert_int_equal(db_insert_latency_points(db, probe, pts, 3), RK_OK);
    assert_int_equal(db_capture_end(db, probe, DB_DONE), RK_OK);
    assert_int_equal(
        db_capture_begin(db, da, DB_CAPTURE_PROFILE, "roofkit profile", "0.1.0", &prof), RK_OK);
    m.source = "profile";
    for (int i = 0; i < 2; i++) {
        m.launch_index = i;
        m.time_median_ns = 1000.0 + i;
        m.device_id = i == 1 ? dbb : 0;
        assert_int_equal(
            db_insert_measurement(db, prof, &m, sample_metrics, NSAMPLE_METRICS, &mid[i]), RK_OK);
    }
    assert_int_equal(db_capture_end(db, prof, DB_DONE), RK_OK);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_MODEL, "roofkit model", "0.1.0", &model),
                     RK_OK);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            struct db_prediction p = {0,
                                      mid[i],
                                      model,
                                      models[j],
                                      900.0 + i + 10 * j,
                                      "dram",
                                      "{\"ceilings\":{\"dram\":{\"id\":1}}}",
                                      NAN};
            assert_int_equal(db_insert_prediction(db, &p, NULL), RK_OK);
        }
    assert_int_equal(db_capture_end(db, model, DB_DONE), RK_OK);
    db_close(db);
    if (meas)
        memcpy(meas, mid, sizeof mid);
}

/* OUT with rows of its own: GPU-A (id 1), GPU-C (id 2) and a run capture of 3 measurements. */
static void make_out(const char *path, struct db **out)
{
    struct db_device a = sample_device("GPU-A"), c = sample_device("GPU-C");
    struct db_measurement m = sample_measurement("own");
    int64_t da = 0, dc = 0, run = 0;
    open_rw(path, out);
    assert_int_equal(db_device_upsert(*out, &a, &da), RK_OK);
    assert_int_equal(db_device_upsert(*out, &c, &dc), RK_OK);
    assert_int_equal(db_capture_begin(*out, da, DB_CAPTURE_RUN, "roofkit run", "0.1.0", &run),
                     RK_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(db_insert_measurement(*out, run, &m, sample_metrics, 2, NULL), RK_OK);
    assert_int_equal(db_capture_end(*out, run, DB_DONE), RK_OK);
}

/* db_merge must succeed without printing an error. */
static void merge_ok(struct db *out, const char *in, struct db_merge_stats *st)
{
    assert_int_equal(db_merge_check(in, db_path(out)), RK_OK);
    assert_int_equal(db_merge(out, in, st), RK_OK);
}

/* ------------------------------------------------------------------- M01 */
static void m01_renumber_and_remap(void **state)
{
    char in[512], out_path[512];
    struct db *out = NULL;
    struct db_merge_stats st;
    long size_before = 0;
    unsigned char *before;
    (void)state;

    new_path(in, sizeof in, "m01-in");
    new_path(out_path, sizeof out_path, "m01-out");
    make_input(in, "k01", NULL);
    make_out(out_path, &out);
    before = slurp(in, &size_before);

    merge_ok(out, in, &st);
    assert_int_equal(st.captures_added, 3);
    assert_int_equal(st.captures_present, 0);
    assert_int_equal(st.devices_added, 1); /* GPU-B */
    assert_int_equal(st.devices_joined, 1);
    assert_int_equal(st.devices_differ, 0);
    assert_int_equal(st.upgraded, 0);
    /* 1 device, 3 captures, 2 ceilings, 3 points, 2 measurements, 10 metrics, 4 predictions */
    assert_int_equal(st.rows_added, 1 + 3 + 2 + 3 + 2 + 2 * NSAMPLE_METRICS + 4);
    settings_restored(out);
    db_close(out);
    /* the input only read */
    same_bytes(in, before, size_before);
    assert_false(side_exists(in, "-wal"));
    assert_false(side_exists(in, "-shm"));

    /* every row of the input, through its parents, is in OUT */
    same_rows(out_path, in, q_captures, 3);
    same_rows(out_path, in, q_ceilings, 2);
    same_rows(out_path, in, q_latency, 3);
    same_rows(out_path, in, q_measurements, 2);
    same_rows(out_path, in, q_metrics, 2 * NSAMPLE_METRICS);
    same_rows(out_path, in, q_predictions, 4);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* ids renumbered past OUT's own rows */
    assert_int_equal(
        raw_int(out_path, "SELECT min(id) FROM capture WHERE cmdline <> 'roofkit run'"), 2);
    assert_int_equal(raw_int(out_path, "SELECT min(id) FROM measurement WHERE kernel = 'k01'"), 4);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM device"), 3);
    /* the GPU-B references: OUT's row of GPU-B (id 3), not the input's id 1 (OUT's GPU-A) */
    assert_int_equal(raw_int(out_path, "SELECT id FROM device WHERE uuid = 'GPU-B'"), 3);
    assert_int_equal(
        raw_int(out_path, "SELECT peer_device_id FROM ceiling WHERE name = 'bw_peer_ce_read'"), 3);
    assert_int_equal(raw_int(out_path, "SELECT device_id FROM measurement WHERE launch_index = 1"),
                     3);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM measurement WHERE launch_index = 0"
                                       " AND device_id IS NULL"),
                     1);
    /* a model capture's predictions name OUT's id of that capture */
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM prediction p JOIN capture c"
                                       " ON c.id = p.capture_id WHERE c.kind = 'model'"),
                     4);
}

/* ------------------------------------------------------------------- M02 */
static void m02_twice_adds_nothing(void **state)
{
    char in[512], out_path[512];
    struct db *out = NULL;
    struct db_merge_stats st;
    char *print;
    sqlite3 *reader = NULL;
    double t0;
    (void)state;

    new_path(in, sizeof in, "m02-in");
    new_path(out_path, sizeof out_path, "m02-out");
    make_input(in, "k02", NULL);
    make_out(out_path, &out);
    /* the first merge while another connection reads OUT: it stays in WAL, and waits for no one */
    assert_int_equal(sqlite3_open_v2(out_path, &reader, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(reader, "SELECT count(*) FROM capture", NULL, NULL, NULL),
                     SQLITE_OK);
    t0 = rk_now_s();
    merge_ok(out, in, &st);
    assert_true(rk_now_s() - t0 < DB_BUSY_TIMEOUT_MS / 2000.0);
    assert_int_equal(st.captures_added, 3);
    settings_restored(out);
    sqlite3_close(reader);
    print = fingerprint(out_path);

    merge_ok(out, in, &st);
    assert_int_equal(st.captures_added, 0);
    assert_int_equal(st.captures_present, 3);
    assert_int_equal(st.devices_added, 0);
    assert_int_equal(st.devices_joined, 2);
    assert_int_equal(st.rows_added, 0);
    assert_int_equal(st.predictions_dropped, 0);
    settings_restored(out);
    db_close(out);
    unchanged(out_path, print);
}

/* ------------------------------------------------------------------- M03 */
static void m03_device_described_differently(void **state)
{
    char a[512], b[512], out_path[512];
    struct db *db = NULL;
    struct db_device d = sample_device("GPU-X");
    struct db_merge_stats st;
    const char *msg;
    int64_t id = 0, cap = 0;
    (void)state;

    new_path(a, sizeof a, "m03-a");
    new_path(b, sizeof b, "m03-b");
    new_path(out_path, sizeof out_path, "m03-out");
    for (int i = 0; i < 2; i++) {
        open_rw(i ? b : a, &db);
        d.name = i ? "NVIDIA H100 PCIe" : "NVIDIA H100 80GB HBM3";
        d.sm_clock_mhz = i ? 1755 : 1980;
        assert_int_equal(db_device_upsert(db, &d, &id), RK_OK);
        assert_int_equal(db_capture_begin(db, id, DB_CAPTURE_PROBE, NULL, NULL, &cap), RK_OK);
        db_close(db);
    }
    raw_exec(a, "UPDATE device SET first_seen = '2026-02-01T00:00:00Z',"
                " last_seen = '2026-02-03T00:00:00Z'");
    raw_exec(b, "UPDATE device SET first_seen = '2026-01-15T00:00:00Z',"
                " last_seen = '2026-02-02T00:00:00Z'");

    open_rw(out_path, &db);
    merge_ok(db, a, &st);
    assert_int_equal(st.devices_added, 1);
    stderr_begin();
    assert_int_equal(db_merge(db, b, &st), RK_OK);
    msg = stderr_end();
    assert_int_equal(st.devices_joined, 1);
    assert_int_equal(st.devices_differ, 1);
    assert_int_equal(st.captures_added, 1);
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "roofkit: warning: device GPU-X differs"));
    assert_non_null(strstr(msg, "name 'NVIDIA H100 PCIe', sm_clock_mhz 1755"));
    assert_non_null(strstr(msg, "keeps name 'NVIDIA H100 80GB HBM3', sm_clock_mhz 1980"));
    assert_non_null(strstr(msg, b));
    db_close(db);

    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM device"), 1);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM device WHERE name ="
                                       " 'NVIDIA H100 80GB HBM3' AND sm_clock_mhz = 1980"),
                     1);
    assert_int_equal(raw_int(out_path,
                             "SELECT count(*) FROM device WHERE first_seen ="
                             " '2026-01-15T00:00:00Z' AND last_seen = '2026-02-03T00:00:00Z'"),
                     1);
    /* both captures name the one device */
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM capture WHERE device_id = 1"), 2);
}

/* ------------------------------------------------------------------- M04, M05 */

/* A roofkit database of schema 1 (schema.c's first step, as a build of that time wrote it):
 * a device, a probe with a ceiling and a point, a run with two measurements and metrics, a
 * model capture with a prediction. */
static void make_v1(const char *path)
{
    char sql[160];
    raw_exec(path, dbi_migrations[0]);
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = 1;"
             " PRAGMA journal_mode = WAL",
             DB_APPLICATION_ID);
    raw_exec(path, sql);
    raw_exec(path,
             "INSERT INTO device (id, name, uuid) VALUES (7, 'NVIDIA H100 80GB HBM3', 'GPU-OLD');"
             "INSERT INTO capture (id, device_id, kind, status, cmdline, started_at) VALUES"
             " (1, 7, 'probe', 'done', 'roofkit probe', '2026-01-01T00:00:00Z'),"
             " (2, 7, 'run', 'done', 'roofkit run', '2026-01-01T00:01:00Z'),"
             " (3, NULL, 'model', 'done', 'roofkit model', '2026-01-01T00:02:00Z');"
             "INSERT INTO ceiling (capture_id, name, kind, level, value, unit) VALUES"
             " (1, 'bw_dram_read', 'bandwidth', 'dram', 3000, 'GB/s');"
             "INSERT INTO latency_point (capture_id, footprint_bytes, stride_bytes, ns) VALUES"
             " (1, 16384, 128, 17.5);"
             "INSERT INTO measurement (id, capture_id, kernel, time_median_ns, cache_state, source)"
             " VALUES (5, 2, 'old_a', 100.5, 'cold', 'suite'), (6, 2, 'old_b', 200.5, 'cold',"
             " 'suite');"
             "INSERT INTO metric (measurement_id, name, value) VALUES (5, 'gpu_time', 1),"
             " (5, 'l2_bytes', 2), (6, 'gpu_time', 3);"
             "INSERT INTO prediction (measurement_id, capture_id, model, predicted_time_ns)"
             " VALUES (5, 3, 'roofline', 90), (6, 3, 'roofline', 190);");
}

/* Files in the folder `dir` (the temporary copies merge may leave). */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void m04_schema1_input(void **state)
{
    char in[512], in2[512], out_path[512], tmp[512], *saved_tmp;
    struct db *out = NULL;
    struct db_merge_stats st;
    long size_before = 0;
    unsigned char *before;
    (void)state;

    new_path(in, sizeof in, "m04-in");
    new_path(in2, sizeof in2, "m04-in2");
    new_path(out_path, sizeof out_path, "m04-out");
    snprintf(tmp, sizeof tmp, "%s/m04-tmp", tmpdir);
    assert_int_equal(mkdir(tmp, 0700), 0);
    make_v1(in);
    before = slurp(in, &size_before);
    saved_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);

    make_out(out_path, &out);
    merge_ok(out, in, &st);
    assert_int_equal(st.upgraded, 1);
    assert_int_equal(st.captures_added, 3);
    assert_int_equal(st.devices_added, 1);
    /* 1 device, 3 captures, 1 ceiling, 1 point, 2 measurements, 3 metrics, 2 predictions */
    assert_int_equal(st.rows_added, 13);
    assert_int_equal(files_in(tmp), 0);
    /* merged again: the derived uids are the same, nothing is added */
    merge_ok(out, in, &st);
    assert_int_equal(st.captures_added, 0);
    assert_int_equal(st.captures_present, 3);
    assert_int_equal(st.rows_added, 0);
    /* another rank's file, same GPU, ids, second and command line, other measurements: its run
     * and model captures are its own; its probe, identical, is taken for the one merged */
    make_v1(in2);
    raw_exec(in2, "UPDATE measurement SET time_median_ns = time_median_ns + 1;"
                  " UPDATE prediction SET predicted_time_ns = predicted_time_ns + 1");
    merge_ok(out, in2, &st);
    assert_int_equal(st.captures_added, 2);
    assert_int_equal(st.captures_present, 1);
    assert_int_equal(st.rows_added, 2 + 2 + 3 + 2);
    settings_restored(out);
    db_close(out);
    if (saved_tmp)
        setenv("TMPDIR", saved_tmp, 1);
    else
        unsetenv("TMPDIR");
    free(saved_tmp);

    assert_int_equal(raw_int(out_path, "SELECT count(DISTINCT uid) FROM capture WHERE length(uid) ="
                                       " 32 AND uid NOT GLOB '*[^0-9a-f]*'"),
                     6);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM metric x JOIN measurement m"
                                       " ON m.id = x.measurement_id WHERE m.kernel = 'old_a'"),
                     4);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM prediction p JOIN measurement m"
                                       " ON m.id = p.measurement_id JOIN capture c ON c.id ="
                                       " p.capture_id WHERE c.kind = 'model' AND m.kernel LIKE"
                                       " 'old_%' AND p.predicted_time_ns + 10 = m.time_median_ns"
                                       " - 0.5"),
                     4);
    /* the probe once, each rank's run; the model captures name no device */
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM capture c JOIN device d ON d.id ="
                                       " c.device_id WHERE d.uuid = 'GPU-OLD'"),
                     3);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* the user's file: the same bytes, still schema 1 */
    same_bytes(in, before, size_before);
    assert_int_equal(raw_int(in, "PRAGMA user_version"), 1);
}

static void m05_migrate_schema1(void **state)
{
    char path[512];
    struct db *db = NULL;
    int64_t cap = 0;
    (void)state;

    new_path(path, sizeof path, "m05");
    make_v1(path);
    expect_refused(path, DB_RO, "older than this roofkit's");
    open_rw(path, &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_MODEL, NULL, NULL, &cap), RK_OK);
    db_close(db);
    /* schema 1 goes through every later step; each step has its own case (2 -> 3:
     * test_schema.c S01) */
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    /* the rows stay, ids and all */
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture"), 4);
    assert_int_equal(raw_int(path, "SELECT 10 * min(id) + max(id) FROM measurement"), 56);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM metric"), 3);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM prediction WHERE capture_id = 3"), 2);
    /* every capture, old and new, has its own uid; the new columns are unknown */
    assert_int_equal(
        raw_int(path, "SELECT count(DISTINCT uid) FROM capture WHERE length(uid) = 32"), 4);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM capture WHERE host IS NULL AND rank IS"
                                   " NULL AND local_rank IS NULL AND world_size IS NULL AND"
                                   " gpus_concurrent IS NULL AND gpus_busy IS NULL AND id <= 3"),
                     3);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM ceiling WHERE peer_device_id IS NULL"), 1);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM measurement WHERE device_id IS NULL"), 2);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name IN"
                                   " ('capture_uid', 'ceiling_peer', 'measurement_device')"),
                     3);
    assert_int_equal(raw_int(path, "SELECT count(*) FROM pragma_integrity_check WHERE"
                                   " integrity_check = 'ok'"),
                     1);
}

/* ------------------------------------------------------------------- M06 */

/* db_merge_check and db_merge refuse `in` with `code` and one line holding needle; OUT and
 * the input stay as they were. */
static void expect_merge_refused(struct db *out, const char *in, int code, const char *needle)
{
    char *print = fingerprint(db_path(out));
    long n0 = 0;
    struct stat sb;
    unsigned char *before = stat(in, &sb) == 0 && S_ISREG(sb.st_mode) ? slurp(in, &n0) : NULL;
    struct db_merge_stats st;
    const char *msg;

    for (int pass = 0; pass < 2; pass++) {
        stderr_begin();
        if (pass == 0)
            assert_int_equal(db_merge_check(in, db_path(out)), code);
        else
            assert_int_equal(db_merge(out, in, &st), code);
        msg = stderr_end();
        assert_int_equal(count_lines(msg), 1);
        assert_non_null(strstr(msg, "roofkit: error: "));
        if (!strstr(msg, needle))
            fail_msg("message '%s' lacks '%s'", msg, needle);
    }
    assert_int_equal(st.rows_added, 0);
    unchanged(db_path(out), print);
    settings_restored(out);
    if (before)
        same_bytes(in, before, n0);
}

static void m06_refusals(void **state)
{
    char out_path[512], other[512], path[512], alias[600];
    struct db *out = NULL;
    (void)state;

    new_path(out_path, sizeof out_path, "m06-out");
    make_out(out_path, &out);

    /* OUT as its own input, however the path is written */
    expect_merge_refused(out, out_path, RK_EUSAGE, "into itself");
    snprintf(alias, sizeof alias, "%s/./%s", tmpdir, strrchr(out_path, '/') + 1);
    expect_merge_refused(out, alias, RK_EUSAGE, "into itself");

    new_path(path, sizeof path, "m06-missing");
    expect_merge_refused(out, path, RK_EDB, "does not exist");
    expect_merge_refused(out, tmpdir, RK_EDB, "is a folder");
    new_path(path, sizeof path, "m06-text");
    write_file(path, "not a database\n", 15);
    expect_merge_refused(out, path, RK_EDB, "is not a SQLite database");
    new_path(other, sizeof other, "m06-other");
    raw_exec(other, "CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    expect_merge_refused(out, other, RK_EDB, "not a roofkit database");
    new_path(path, sizeof path, "m06-newer");
    make_roofkit_db(path);
    raw_exec(path, "PRAGMA user_version = 99");
    expect_merge_refused(out, path, RK_EDB, "newer roofkit");
    db_close(out);
}

/* ------------------------------------------------------------------- M07 */
static void m07_fails_midway(void **state)
{
    char in[512], out_path[512], sql[96];
    struct db *out = NULL;
    struct db *big = NULL;
    struct db_measurement m = sample_measurement("big");
    struct db_merge_stats st;
    int64_t cap = 0;
    long long pages;
    char *print;
    const char *msg;
    (void)state;

    /* an input with more rows than OUT can take once it is limited below */
    new_path(in, sizeof in, "m07-in");
    make_input(in, "k07", NULL);
    open_rw(in, &big);
    assert_int_equal(db_capture_begin(big, 0, DB_CAPTURE_RUN, NULL, NULL, &cap), RK_OK);
    assert_int_equal(db_begin(big), RK_OK);
    for (int i = 0; i < 400; i++)
        assert_int_equal(db_insert_measurement(big, cap, &m, sample_metrics, NSAMPLE_METRICS, NULL),
                         RK_OK);
    assert_int_equal(db_commit(big), RK_OK);
    db_close(big);

    new_path(out_path, sizeof out_path, "m07-out");
    make_out(out_path, &out);
    print = fingerprint(out_path);
    /* the disk "fills" after a few pages: the captures and ceilings fit, the metrics do not */
    pages = conn_int(out, "PRAGMA page_count");
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", pages + 8);
    assert_int_equal(sqlite3_exec(out->h, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(db_merge_check(in, out_path), RK_OK);
    stderr_begin();
    assert_int_equal(db_merge(out, in, &st), RK_EDB);
    msg = stderr_end();
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "the disk is full"));
    assert_int_equal(st.rows_added, 0);
    settings_restored(out);
    unchanged(out_path, print);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM capture"), 1);

    /* with room, the same input merges whole */
    assert_int_equal(sqlite3_exec(out->h, "PRAGMA max_page_count = 1000000", NULL, NULL, NULL),
                     SQLITE_OK);
    merge_ok(out, in, &st);
    assert_int_equal(st.captures_added, 4);
    db_close(out);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM measurement WHERE kernel = 'big'"),
                     400);
}

/* ------------------------------------------------------------------- M08 */
static void m08_predictions_after_merge(void **state)
{
    char in[512], out_path[512];
    struct db *db = NULL;
    struct db_merge_stats st;
    int64_t mid[2] = {0, 0}, model = 0;
    const char *msg;
    (void)state;

    new_path(in, sizeof in, "m08-in");
    new_path(out_path, sizeof out_path, "m08-out");
    make_input(in, "k08", mid);
    make_out(out_path, &db);
    merge_ok(db, in, &st);
    db_close(db);

    /* `roofkit model` run again on the input: roofline replaced, hierarchical new */
    open_rw(in, &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_MODEL, "roofkit model", "0.2.0", &model),
                     RK_OK);
    for (int i = 0; i < 2; i++) {
        struct db_prediction p = {0, mid[i], model, "roofline", 555.0 + i, "l2", NULL, NAN};
        assert_int_equal(db_insert_prediction(db, &p, NULL), RK_OK);
        p.model = "hierarchical";
        assert_int_equal(db_insert_prediction(db, &p, NULL), RK_OK);
    }
    assert_int_equal(db_capture_end(db, model, DB_DONE), RK_OK);
    db_close(db);
    /* OUT's copy of the second launch no longer matches the input's */
    raw_exec(out_path, "UPDATE measurement SET time_median_ns = 7 WHERE kernel = 'k08'"
                       " AND launch_index = 1");

    open_rw(out_path, &db);
    assert_int_equal(db_merge_check(in, out_path), RK_OK);
    stderr_begin();
    assert_int_equal(db_merge(db, in, &st), RK_OK);
    msg = stderr_end();
    assert_int_equal(st.captures_added, 1);
    assert_int_equal(st.captures_present, 3);
    assert_int_equal(st.predictions_dropped, 2);
    assert_int_equal(st.rows_added, 1 + 2); /* the capture, roofline replaced, hierarchical */
    assert_int_equal(count_lines(msg), 1);
    assert_non_null(strstr(msg, "roofkit: warning: 2 predictions of"));
    settings_restored(db);
    db_close(db);

    /* the first launch: its roofline from the new model capture, hierarchical added, tsm2 kept */
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM prediction p JOIN measurement m"
                                       " ON m.id = p.measurement_id JOIN capture c ON c.id ="
                                       " p.capture_id WHERE m.kernel = 'k08' AND m.launch_index"
                                       " = 0 AND ((p.model = 'roofline' AND c.tool_version ="
                                       " '0.2.0' AND p.predicted_time_ns = 555) OR (p.model ="
                                       " 'hierarchical' AND c.tool_version = '0.2.0') OR"
                                       " (p.model = 'tsm2' AND c.tool_version = '0.1.0'))"),
                     3);
    /* the second launch keeps what it had */
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM prediction p JOIN measurement m"
                                       " ON m.id = p.measurement_id WHERE m.kernel = 'k08' AND"
                                       " m.launch_index = 1"),
                     2);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM prediction p JOIN measurement m"
                                       " ON m.id = p.measurement_id WHERE m.kernel = 'k08' AND"
                                       " m.launch_index = 1 AND p.predicted_time_ns IN (901, 911)"),
                     2);
    assert_int_equal(raw_int(out_path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(m01_renumber_and_remap),
        cmocka_unit_test(m02_twice_adds_nothing),
        cmocka_unit_test(m03_device_described_differently),
        cmocka_unit_test(m04_schema1_input),
        cmocka_unit_test(m05_migrate_schema1),
        cmocka_unit_test(m06_refusals),
        cmocka_unit_test(m07_fails_midway),
        cmocka_unit_test(m08_predictions_after_merge),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
