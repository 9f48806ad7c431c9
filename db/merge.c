/*
 * merge.c - db_merge_check and db_merge: the databases of many ranks and nodes (one file
 * per process, each with its own ids) into one, `roofkit merge OUT.db IN.db...`.
 *
 * How one input is merged, all inside one BEGIN IMMEDIATE transaction on OUT, so that a
 * failed input leaves OUT as it was:
 *
 *     ATTACH the input as `rk_in` (an authorizer refuses any write to it)
 *       │
 *     devices      joined by uuid (UNIQUE): an input device OUT has maps to OUT's row, whose
 *       │          descriptive columns stay (one warning line per device that differs);
 *       │          first_seen/last_seen become the min/max of both. Others are inserted.
 *     captures     keyed by uid: a capture OUT has is skipped with every row under it ("already
 *       │          present": merging a file twice adds nothing the second time); the others
 *       │          get ids past OUT's largest (old id + offset).
 *     ceilings, latency points, measurements (old id + offset), metrics, predictions, energy
 *                  spans of the new captures, every foreign key remapped through the device
 *                  and capture maps (temporary tables) and the measurement offset.
 *
 * All of it is set-based: one INSERT ... SELECT per table, never a row at a time, with foreign
 * keys off and, when no other connection has OUT open, a rollback journal instead of WAL for
 * the length of the transaction (struct bulk says why); both are restored before db_merge
 * returns. A capture without a uid (a row written by hand) cannot be recognised: it is new
 * every time.
 *
 * A prediction belongs to two captures: its measurement's and the model capture that made
 * it. It is copied when its measurement is. When its measurement's capture is already present
 * but its model capture is new (a file merged, then `roofkit model` run on it, then merged
 * again), the prediction is kept too: OUT's copy of the measurement is found by its position
 * in the capture (rows are appended in id order) and checked by content (kernel, shape, cache
 * state, median time); one prediction per (measurement, model) as db_insert_prediction keeps
 * it, the newer (created_at) winning. A prediction whose measurement OUT holds differently is
 * dropped and counted, with one warning.
 *
 * An input of an older schema is copied (SQLite's backup API) to a temporary file that is
 * upgraded with db_open(DB_RW); the user's file is only read. Captures of schema 1 had no uid:
 * the copy's get one derived from what identifies them (id, device uuid, kind, start time,
 * command line, tool version, and what it stored: the count and sum of its measurements'
 * median times, ceilings' values and predicted times, so that two ranks sharing a GPU that
 * started at the same second still differ), so the same old file merged twice adds nothing
 * the second time. A newer schema is refused.
 *
 * Left as the input had it: host, rank and the other origin columns of a capture; the ids
 * written inside JSON text (a prediction's details name the ceilings it used by their input
 * ids, a tune capture's note its probe capture). A capture that OUT already holds is never
 * updated, even if the input's copy has grown since (a run still going when merged first).
 *
 * Assumes SQLite >= 3.25 (window functions) and that OUT is not inside db_begin (ATTACH
 * cannot run in a transaction).
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The descriptive columns of a device, compared between OUT and an input (X-macro). */
#define DEVICE_COLUMNS(X)                                                                          \
    X("name")                                                                                      \
    X("pci_bus_id")                                                                                \
    X("cc_major")                                                                                  \
    X("cc_minor")                                                                                  \
    X("sm_count")                                                                                  \
    X("sm_clock_mhz")                                                                              \
    X("mem_clock_mhz")                                                                             \
    X("bus_width_bits")                                                                            \
    X("l2_bytes")                                                                                  \
    X("memory_bytes")                                                                              \
    X("smem_per_sm_bytes")                                                                         \
    X("smem_per_block_optin_bytes")                                                                \
    X("regs_per_sm")                                                                               \
    X("max_threads_per_sm")                                                                        \
    X("driver_version")                                                                            \
    X("runtime_version")                                                                           \
    X("host")

#define COLUMN(c)   c ", "
#define S_COLUMN(c) "s." c ", "
/* ", name 'X'" when input (s) and OUT (d) differ on the column, else ''; then " || ". */
#define THEIRS(c) "(CASE WHEN s." c " IS d." c " THEN '' ELSE ', " c " ' || quote(s." c ") END) || "
#define OURS(c)   "(CASE WHEN s." c " IS d." c " THEN '' ELSE ', " c " ' || quote(d." c ") END) || "

/* The measurements of the input that are copied: those of its new captures. */
#define COPIED_MEASUREMENTS                                                                        \
    "(SELECT s.id FROM rk_in.measurement s JOIN temp.rk_merge_cap c ON c.old = s.capture_id"       \
    " AND NOT c.dup)"

static const char sql_maps[] =
    "CREATE TEMP TABLE rk_merge_dev (old INTEGER PRIMARY KEY, new INTEGER NOT NULL,"
    " joined INTEGER NOT NULL);"
    "CREATE TEMP TABLE rk_merge_cap (old INTEGER PRIMARY KEY, new INTEGER NOT NULL,"
    " dup INTEGER NOT NULL);"
    "CREATE TEMP TABLE rk_merge_meas (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);";

static const char sql_drop_maps[] =
    "DROP TABLE temp.rk_merge_dev; DROP TABLE temp.rk_merge_cap; DROP TABLE temp.rk_merge_meas";

static const char sql_devices_joined[] =
    "INSERT INTO temp.rk_merge_dev (old, new, joined)"
    " SELECT s.id, d.id, 1 FROM rk_in.device s JOIN main.device d ON d.uuid = s.uuid";

static const char sql_devices_differ[] =
    "SELECT s.uuid, substr(" DEVICE_COLUMNS(THEIRS) "'', 3), substr(" DEVICE_COLUMNS(
        OURS) "'', 3) FROM rk_in.device s JOIN main.device d ON d.uuid = s.uuid ORDER BY s.id";

static const char sql_devices_seen[] =
    "UPDATE main.device SET"
    " first_seen = min(first_seen, (SELECT s.first_seen FROM rk_in.device s"
    " WHERE s.uuid = device.uuid)),"
    " last_seen = max(last_seen, (SELECT s.last_seen FROM rk_in.device s"
    " WHERE s.uuid = device.uuid))"
    " WHERE id IN (SELECT new FROM temp.rk_merge_dev WHERE joined)";

static const char sql_devices_add[] = "INSERT INTO main.device (" DEVICE_COLUMNS(
    COLUMN) "uuid, first_seen, last_seen)"
            " SELECT " DEVICE_COLUMNS(
                S_COLUMN) "s.uuid, s.first_seen, s.last_seen FROM rk_in.device s"
                          " WHERE s.id NOT IN (SELECT old FROM temp.rk_merge_dev) ORDER BY s.id";

static const char sql_devices_added[] =
    "INSERT INTO temp.rk_merge_dev (old, new, joined)"
    " SELECT s.id, d.id, 0 FROM rk_in.device s JOIN main.device d ON d.uuid = s.uuid"
    " WHERE s.id NOT IN (SELECT old FROM temp.rk_merge_dev)";

/* Offsets that put the input's new captures and measurements past OUT's largest ids. */
static const char sql_offsets[] = "SELECT (SELECT coalesce(max(id), 0) FROM main.capture) + 1"
                                  " - (SELECT coalesce(min(id), 1) FROM rk_in.capture),"
                                  " (SELECT coalesce(max(id), 0) FROM main.measurement) + 1"
                                  " - (SELECT coalesce(min(id), 1) FROM rk_in.measurement)";

static const char sql_captures_present[] =
    "INSERT INTO temp.rk_merge_cap (old, new, dup)"
    " SELECT s.id, c.id, 1 FROM rk_in.capture s JOIN main.capture c ON c.uid = s.uid";

static const char sql_captures_new[] =
    "INSERT INTO temp.rk_merge_cap (old, new, dup)"
    " SELECT id, id + ?1, 0 FROM rk_in.capture WHERE id NOT IN (SELECT old FROM temp.rk_merge_cap)";

static const char sql_captures_add[] =
    "INSERT INTO main.capture (id, device_id, kind, status, cmdline, tool_version, started_at,"
    " ended_at, note, uid, host, rank, local_rank, world_size, gpus_concurrent, gpus_busy)"
    " SELECT c.new, d.new, s.kind, s.status, s.cmdline, s.tool_version, s.started_at, s.ended_at,"
    " s.note, s.uid, s.host, s.rank, s.local_rank, s.world_size, s.gpus_concurrent, s.gpus_busy"
    " FROM rk_in.capture s JOIN temp.rk_merge_cap c ON c.old = s.id AND NOT c.dup"
    " LEFT JOIN temp.rk_merge_dev d ON d.old = s.device_id ORDER BY s.id";

static const char sql_ceilings_add[] =
    "INSERT INTO main.ceiling (capture_id, name, kind, level, precision, value, unit, method,"
    " params, reps, min, median, max, theoretical, sm_clock_mhz, power_w, temp_c,"
    " peer_device_id)"
    " SELECT c.new, s.name, s.kind, s.level, s.precision, s.value, s.unit, s.method, s.params,"
    " s.reps, s.min, s.median, s.max, s.theoretical, s.sm_clock_mhz, s.power_w, s.temp_c, p.new"
    " FROM rk_in.ceiling s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " LEFT JOIN temp.rk_merge_dev p ON p.old = s.peer_device_id ORDER BY s.id";

static const char sql_latency_add[] =
    "INSERT INTO main.latency_point (capture_id, footprint_bytes, stride_bytes, cycles, ns)"
    " SELECT c.new, s.footprint_bytes, s.stride_bytes, s.cycles, s.ns"
    " FROM rk_in.latency_point s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " ORDER BY s.id";

static const char sql_measurements_add[] =
    "INSERT INTO main.measurement (id, capture_id, kernel, family, precision, m, n, k, params,"
    " grid_x, grid_y, grid_z, block_x, block_y, block_z, registers, smem_static, smem_dynamic,"
    " reps, time_min_ns, time_median_ns, time_max_ns, flops, bytes_dram, bytes_l2, bytes_l1,"
    " bytes_shared, verified, rel_error, cache_state, source, launch_index, correlation_id,"
    " device_id, times_ns, nvtx, energy_j, power_w, sm_clock_mhz, temp_c, energy_launches)"
    " SELECT s.id + ?1, c.new, s.kernel, s.family, s.precision, s.m, s.n, s.k, s.params,"
    " s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z, s.registers, s.smem_static,"
    " s.smem_dynamic, s.reps, s.time_min_ns, s.time_median_ns, s.time_max_ns, s.flops,"
    " s.bytes_dram, s.bytes_l2, s.bytes_l1, s.bytes_shared, s.verified, s.rel_error,"
    " s.cache_state, s.source, s.launch_index, s.correlation_id, d.new, s.times_ns, s.nvtx,"
    " s.energy_j, s.power_w, s.sm_clock_mhz, s.temp_c, s.energy_launches"
    " FROM rk_in.measurement s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " LEFT JOIN temp.rk_merge_dev d ON d.old = s.device_id ORDER BY s.id";

static const char sql_metrics_add[] =
    "INSERT INTO main.metric (measurement_id, name, raw_name, value, unit)"
    " SELECT s.measurement_id + ?1, s.name, s.raw_name, s.value, s.unit FROM rk_in.metric s"
    " WHERE +s.measurement_id IN " COPIED_MEASUREMENTS " ORDER BY s.id";

static const char sql_predictions_add[] =
    "INSERT INTO main.prediction (measurement_id, capture_id, model, predicted_time_ns, bound,"
    " details, created_at, predicted_energy_j)"
    " SELECT s.measurement_id + ?1, c.new, s.model, s.predicted_time_ns, s.bound, s.details,"
    " s.created_at, s.predicted_energy_j FROM rk_in.prediction s LEFT JOIN temp.rk_merge_cap c ON "
    "c.old = s.capture_id"
    " WHERE +s.measurement_id IN " COPIED_MEASUREMENTS " ORDER BY s.id";

/* Predictions of new model captures for measurements of captures OUT already has. */
static const char sql_late_predictions[] =
    "SELECT count(*) FROM rk_in.prediction s"
    " JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " WHERE +s.measurement_id NOT IN " COPIED_MEASUREMENTS;

/* OUT's copy of each measurement of a present capture: same position, same content. */
static const char sql_match_measurements[] =
    "WITH a AS (SELECT s.id, c.new AS cap, s.kernel, s.m, s.n, s.k, s.cache_state,"
    " s.time_median_ns, row_number() OVER (PARTITION BY s.capture_id ORDER BY s.id) AS i"
    " FROM rk_in.measurement s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND c.dup),"
    " b AS (SELECT o.id, o.capture_id AS cap, o.kernel, o.m, o.n, o.k, o.cache_state,"
    " o.time_median_ns, row_number() OVER (PARTITION BY o.capture_id ORDER BY o.id) AS i"
    " FROM main.measurement o WHERE o.capture_id IN (SELECT new FROM temp.rk_merge_cap WHERE dup))"
    " INSERT INTO temp.rk_merge_meas (old, new) SELECT a.id, b.id FROM a JOIN b ON b.cap = a.cap"
    " AND b.i = a.i AND b.kernel = a.kernel AND b.m IS a.m AND b.n IS a.n AND b.k IS a.k"
    " AND b.cache_state = a.cache_state AND b.time_median_ns IS a.time_median_ns";

static const char sql_late_predictions_add[] =
    "INSERT INTO main.prediction (measurement_id, capture_id, model, predicted_time_ns, bound,"
    " details, created_at, predicted_energy_j)"
    " SELECT x.new, c.new, s.model, s.predicted_time_ns, s.bound, s.details, s.created_at,"
    " s.predicted_energy_j"
    " FROM rk_in.prediction s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " JOIN temp.rk_merge_meas x ON x.old = s.measurement_id WHERE true ORDER BY s.id"
    " ON CONFLICT (measurement_id, model) DO UPDATE SET capture_id = excluded.capture_id,"
    " predicted_time_ns = excluded.predicted_time_ns, bound = excluded.bound,"
    " details = excluded.details, created_at = excluded.created_at,"
    " predicted_energy_j = excluded.predicted_energy_j"
    " WHERE excluded.created_at >= prediction.created_at";

static const char sql_energy_spans_add[] =
    "INSERT INTO main.energy_span (capture_id, device_id, scope, name, energy_j, time_ns,"
    " power_w, launches)"
    " SELECT c.new, d.new, s.scope, s.name, s.energy_j, s.time_ns, s.power_w, s.launches"
    " FROM rk_in.energy_span s JOIN temp.rk_merge_cap c ON c.old = s.capture_id AND NOT c.dup"
    " LEFT JOIN temp.rk_merge_dev d ON d.old = s.device_id ORDER BY s.id";

/* One db_merge call. */
struct merge {
    struct db *out;
    const char *name; /* the input as the caller named it, for messages */
    char *what;       /* "merge 'x.db'", for dbi_error */
    struct db_merge_stats *st;
};

/* A failure met while merging: corruption may be the input's, so both files are named. */
static int merge_error(struct merge *mg, int src)
{
    if ((src & 0xff) == SQLITE_CORRUPT || (src & 0xff) == SQLITE_NOTADB)
        return rk_error(RK_EDB,
                        "cannot merge '%s' into '%s': %s; one of them is damaged: check both "
                        "with sqlite3 FILE 'PRAGMA integrity_check'",
                        mg->name, mg->out->path, sqlite3_errmsg(mg->out->h));
    return dbi_error(mg->out, src, mg->what);
}

/* Runs one statement to its end with ?1 bound to arg; *changes (may be NULL) += its rows. */
static int merge_exec(struct merge *mg, const char *sql, int64_t arg, int64_t *changes)
{
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(mg->out, sql, &st, mg->what);
    int src = SQLITE_OK;

    if (rc != RK_OK)
        return rc;
    if (sqlite3_bind_parameter_count(st) > 0)
        src = sqlite3_bind_int64(st, 1, arg);
    while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
        src = SQLITE_OK;
    if (src != SQLITE_DONE)
        rc = merge_error(mg, src);
    else if (changes)
        *changes += sqlite3_changes(mg->out->h);
    sqlite3_finalize(st);
    return rc;
}

/* Reads the one row of sql: its first n (<= 2) columns as integers. */
static int merge_query(struct merge *mg, const char *sql, int64_t *v, int n)
{
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(mg->out, sql, &st, mg->what);
    int src;

    if (rc != RK_OK)
        return rc;
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        for (int i = 0; i < n; i++)
            v[i] = sqlite3_column_int64(st, i);
    } else {
        rc = merge_error(mg, src == SQLITE_DONE ? SQLITE_CORRUPT : src);
    }
    sqlite3_finalize(st);
    return rc;
}

/* One warning line per device that OUT and the input describe differently. */
static int warn_devices(struct merge *mg)
{
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(mg->out, sql_devices_differ, &st, mg->what);
    int src;

    if (rc != RK_OK)
        return rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *theirs = (const char *)sqlite3_column_text(st, 1);
        if (!theirs || !*theirs)
            continue;
        rk_warn("device %s differs: '%s' has %s, '%s' keeps %s", sqlite3_column_text(st, 0),
                mg->name, theirs, mg->out->path, sqlite3_column_text(st, 2));
        mg->st->devices_differ++;
    }
    if (src != SQLITE_DONE)
        rc = merge_error(mg, src);
    sqlite3_finalize(st);
    return rc;
}

/* Every step of one input, inside the caller's transaction. */
static int merge_rows(struct merge *mg)
{
    struct db_merge_stats *st = mg->st;
    int64_t off[2] = {0, 0}, late = 0, matched[2] = {0, 0};
    int rc = dbi_exec(mg->out, sql_maps, mg->what);

    if (rc == RK_OK)
        rc = merge_exec(mg, sql_devices_joined, 0, &st->devices_joined);
    if (rc == RK_OK && st->devices_joined)
        rc = warn_devices(mg);
    if (rc == RK_OK && st->devices_joined)
        rc = merge_exec(mg, sql_devices_seen, 0, NULL);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_devices_add, 0, &st->devices_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_devices_added, 0, NULL);
    if (rc == RK_OK)
        rc = merge_query(mg, sql_offsets, off, 2);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_captures_present, 0, &st->captures_present);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_captures_new, off[0], NULL);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_captures_add, 0, &st->captures_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_ceilings_add, 0, &st->rows_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_latency_add, 0, &st->rows_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_measurements_add, off[1], &st->rows_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_metrics_add, off[1], &st->rows_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_predictions_add, off[1], &st->rows_added);
    if (rc == RK_OK)
        rc = merge_exec(mg, sql_energy_spans_add, 0, &st->rows_added);
    if (rc == RK_OK && st->captures_present)
        rc = merge_query(mg, sql_late_predictions, &late, 1);
    if (rc == RK_OK && late)
        rc = merge_exec(mg, sql_match_measurements, 0, NULL);
    if (rc == RK_OK && late)
        rc = merge_exec(mg, sql_late_predictions_add, 0, &matched[0]);
    if (rc == RK_OK && late)
        rc = merge_query(mg,
                         "SELECT count(*) FROM rk_in.prediction s JOIN temp.rk_merge_cap c"
                         " ON c.old = s.capture_id AND NOT c.dup"
                         " JOIN temp.rk_merge_meas x ON x.old = s.measurement_id",
                         &matched[1], 1);
    if (rc == RK_OK && late > matched[1]) {
        st->predictions_dropped = late - matched[1];
        rk_warn("%lld prediction%s of '%s' not merged: %s for measurements of captures that '%s' "
                "holds differently",
                (long long)st->predictions_dropped, st->predictions_dropped == 1 ? "" : "s",
                mg->name, st->predictions_dropped == 1 ? "it is" : "they are", mg->out->path);
    }
    st->rows_added += matched[0] + st->devices_added + st->captures_added;
    if (rc == RK_OK)
        rc = dbi_exec(mg->out, sql_drop_maps, mg->what);
    return rc;
}

/* ------------------------------------------------------------------ inputs */

/* Whether a and b name the same file (both must exist). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/*
 * The schema version in the file header (https://www.sqlite.org/fileformat2.html §1.3:
 * user_version at offset 60, application_id at 68), or -1 when the header is not a roofkit
 * database's. Only a hint for choosing the path: a WAL file's header may lag its WAL, and
 * db_open or the checks after ATTACH decide.
 */
static long header_version(const char *path)
{
    unsigned char h[72];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(h, 1, sizeof h, f) : 0;

    if (f)
        fclose(f);
    if (got < sizeof h || memcmp(h, "SQLite format 3", 16) != 0 ||
        be32(h + 68) != DB_APPLICATION_ID)
        return -1;
    return (long)be32(h + 60);
}

/* The refusals that need no SQLite: the input is missing, a folder, or OUT itself. */
static int check_path(const char *path, const char *out_path)
{
    struct stat st;

    if (!path || !*path)
        return rk_error(RK_EUSAGE, "an input database has an empty name");
    if (stat(path, &st) != 0)
        return rk_error(RK_EDB, "cannot merge '%s': %s; check the path", path,
                        errno == ENOENT ? "it does not exist" : strerror(errno));
    if (S_ISDIR(st.st_mode))
        return rk_error(RK_EDB, "cannot merge '%s': it is a folder, not a database", path);
    if (out_path && same_file(path, out_path))
        return rk_error(RK_EUSAGE,
                        "cannot merge '%s' into itself; name an output database that is not "
                        "one of the inputs",
                        path);
    return RK_OK;
}

/*
 * rk_merge_uid(...): 32 hex digits from its arguments, two 64-bit FNV-1a lanes over their
 * text (NULL hashed apart from ''). A stable identity for captures of schema 1.
 */
static void uid_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x6c62272e07bb0142ull;
    char out[33];

    for (int i = 0; i < argc; i++) {
        const unsigned char *t = sqlite3_value_text(argv[i]);
        int n = t ? sqlite3_value_bytes(argv[i]) : 0;
        for (int j = -1; j <= n; j++) {
            /* a marker for NULL or text first, then the bytes, then a separator */
            unsigned c = j < 0 ? (t ? 1u : 2u) : j < n ? t[j] : 0xffu;
            a = (a ^ c) * 0x100000001b3ull;
            b = (b ^ (c + 0x9eu)) * 0x100000001b3ull;
            b ^= b >> 29;
        }
    }
    snprintf(out, sizeof out, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
    sqlite3_result_text(ctx, out, 32, SQLITE_TRANSIENT);
}

/* Copies `path` (read-only) into the new file `copy` with SQLite's backup API; *version is the
 * input's schema version. */
static int backup_copy(const char *path, const char *copy, long long *version)
{
    sqlite3 *src = NULL, *dst = NULL;
    sqlite3_backup *bk = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(src, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK)
        rc = sqlite3_open_v2(copy, &dst, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK && !(bk = sqlite3_backup_init(dst, "main", src, "main")))
        rc = sqlite3_errcode(dst);
    if (bk) {
        rc = sqlite3_backup_step(bk, -1);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        if (sqlite3_backup_finish(bk) != SQLITE_OK && rc == SQLITE_OK)
            rc = sqlite3_errcode(dst);
    }
    if (rc != SQLITE_OK)
        rc = rk_error(RK_EDB, "cannot read '%s' to upgrade a copy of it: %s; check the file", path,
                      src ? sqlite3_errmsg(src) : sqlite3_errstr(rc));
    sqlite3_close(dst);
    sqlite3_close(src);
    return rc;
}

/*
 * An input of an older schema: a temporary copy, upgraded by db_open(DB_RW); schema 1
 * captures get their derived uid. *copy (malloc'd) names it; the caller removes it.
 */
static int upgraded_copy(const char *path, char **copy)
{
    const char *tmp = getenv("TMPDIR");
    struct db *db = NULL;
    long long version = 0;
    int fd, rc = RK_OK;
    size_t size;

    if (!tmp || !*tmp)
        tmp = "/tmp";
    size = strlen(tmp) + sizeof "/roofkit-merge-XXXXXX";
    if (!(*copy = malloc(size)))
        return rk_error(RK_ENOMEM, "out of host memory");
    snprintf(*copy, size, "%s/roofkit-merge-XXXXXX", tmp);
    if ((fd = mkstemp(*copy)) < 0) {
        rc = rk_error(RK_EIO,
                      "cannot create a temporary copy of '%s' in '%s': %s; set TMPDIR to "
                      "a writable folder",
                      path, tmp, strerror(errno));
        free(*copy);
        *copy = NULL;
        return rc;
    }
    close(fd);
    rc = backup_copy(path, *copy, &version);
    if (rc == RK_OK)
        rc = db_open(*copy, DB_RW, &db);
    if (rc == RK_OK && version < 2 &&
        sqlite3_create_function(db->h, "rk_merge_uid", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                uid_function, NULL, NULL) != SQLITE_OK)
        rc = dbi_error(db, sqlite3_errcode(db->h), "upgrade a copy");
    if (rc == RK_OK && version < 2)
        rc = dbi_exec(db,
                      "UPDATE capture SET uid = rk_merge_uid(id, (SELECT uuid FROM device"
                      " WHERE device.id = capture.device_id), kind, started_at, cmdline,"
                      " tool_version, (SELECT count(*) || ' ' || total(time_median_ns)"
                      " FROM measurement m WHERE m.capture_id = capture.id),"
                      " (SELECT count(*) || ' ' || total(value) FROM ceiling e"
                      " WHERE e.capture_id = capture.id), (SELECT count(*) || ' ' ||"
                      " total(predicted_time_ns) FROM prediction p WHERE p.capture_id ="
                      " capture.id))",
                      "upgrade a copy");
    db_close(db);
    if (rc != RK_OK) {
        unlink(*copy);
        free(*copy);
        *copy = NULL;
    }
    return rc;
}

/* Removes a temporary copy and the side files a connection may have left. */
static void remove_copy(char *copy)
{
    static const char *const sides[] = {"-wal", "-shm", "-journal"};
    char *side;

    if (!copy)
        return;
    unlink(copy);
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++)
        if ((side = sqlite3_mprintf("%s%s", copy, sides[i])) != NULL) {
            unlink(side);
            sqlite3_free(side);
        }
    free(copy);
}

/* Whether path has a -wal file with frames in it (someone else's writes to protect). */
static int has_wal_frames(const char *path)
{
    struct stat st;
    char *wal = sqlite3_mprintf("%s-wal", path);
    int yes = wal && stat(wal, &st) == 0 && st.st_size > 0;
    sqlite3_free(wal);
    return yes;
}

/*
 * Validates `path` for merging, or makes the upgraded copy it needs: *copy is NULL (merge
 * path itself) or the copy. check_only: only validate (and remove a copy made for that).
 */
static int prepare_input(const char *path, const char *out_path, int check_only, char **copy)
{
    long version;
    int rc = check_path(path, out_path);
    struct db *db = NULL;

    *copy = NULL;
    if (rc != RK_OK)
        return rc;
    version = header_version(path);
    if (version >= 0 && version < db_schema_version()) {
        rc = upgraded_copy(path, copy);
        if (check_only) {
            remove_copy(*copy);
            *copy = NULL;
        }
        return rc;
    }
    /* The caller checked this schema's files with db_merge_check: no second quick_check. */
    if (!check_only && version == db_schema_version())
        return RK_OK;
    rc = db_open(path, DB_RO, &db);
    db_close(db);
    return rc;
}

int db_merge_check(const char *in_path, const char *out_path)
{
    char *copy = NULL;
    return prepare_input(in_path, out_path, 1, &copy);
}

/* Refuses writes to the attached input: merging only ever reads it. */
static int guard_input(void *user, int action, const char *a, const char *b, const char *dbname,
                       const char *trigger)
{
    (void)user, (void)a, (void)trigger;
    if (!dbname || strcmp(dbname, "rk_in") != 0)
        return SQLITE_OK;
    if (action == SQLITE_READ || action == SQLITE_SELECT || action == SQLITE_FUNCTION)
        return SQLITE_OK;
    return action == SQLITE_PRAGMA && !b ? SQLITE_OK : SQLITE_DENY;
}

/* ATTACHes the input (path) as rk_in and checks it is roofkit's at this schema. */
static int attach_input(struct merge *mg, const char *path)
{
    sqlite3_stmt *st = NULL;
    int64_t id[2] = {0, 0};
    int rc = dbi_prepare(mg->out, "ATTACH ?1 AS rk_in", &st, mg->what);
    int src;

    if (rc != RK_OK)
        return rc;
    src = sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
    if (src == SQLITE_OK)
        src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return merge_error(mg, src);
    rc = merge_query(mg, "PRAGMA rk_in.application_id", &id[0], 1);
    if (rc == RK_OK)
        rc = merge_query(mg, "PRAGMA rk_in.user_version", &id[1], 1);
    if (rc == RK_OK && (id[0] != DB_APPLICATION_ID || id[1] != db_schema_version()))
        rc = rk_error(RK_EDB,
                      "'%s' changed while being merged (it is no longer a roofkit database of "
                      "schema %d); run the merge again",
                      mg->name, db_schema_version());
    return rc;
}

/*
 * The connection settings of one merge, and the caller's to restore. Foreign keys are off:
 * every reference merge_rows writes comes from a join against rows of the same transaction
 * (the device and capture maps, the copied measurements), so checking each again only costs
 * (an eighth of the CPU time). OUT leaves WAL for a rollback journal when no other connection
 * has it open: WAL writes each new page twice (to the WAL, then to the file at the checkpoint)
 * and reads it back in between, while a rollback journal writes a new page once and journals
 * only the few pages that existed before; synchronous=FULL keeps a commit as durable as WAL
 * with NORMAL. Measured: the benchmark's merge 40% faster (docs/perf-notes.md).
 */
struct bulk {
    long long foreign_keys, synchronous, busy_ms;
    int rollback; /* OUT switched to a rollback journal: switch it back to WAL */
};

/* One PRAGMA's integer answer (reads are never refused). */
static int pragma_int(struct merge *mg, const char *sql, long long *v)
{
    int64_t x = 0;
    int rc = merge_query(mg, sql, &x, 1);
    *v = x;
    return rc;
}

/* Whether `PRAGMA main.journal_mode = mode` took effect (never waits for other connections). */
static int set_journal(struct merge *mg, const char *sql, const char *mode)
{
    sqlite3_stmt *st = NULL;
    int done = 0;
    if (sqlite3_prepare_v2(mg->out->h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        done = strcmp((const char *)sqlite3_column_text(st, 0), mode) == 0;
    sqlite3_finalize(st);
    return done;
}

static int bulk_begin(struct merge *mg, struct bulk *b)
{
    long long wal = 0;
    int rc = pragma_int(mg, "PRAGMA foreign_keys", &b->foreign_keys);

    if (rc == RK_OK)
        rc = pragma_int(mg, "PRAGMA main.synchronous", &b->synchronous);
    if (rc == RK_OK)
        rc = pragma_int(mg, "PRAGMA busy_timeout", &b->busy_ms);
    if (rc == RK_OK)
        rc = pragma_int(mg, "SELECT journal_mode = 'wal' FROM pragma_journal_mode", &wal);
    if (rc == RK_OK)
        rc = dbi_exec(mg->out, "PRAGMA foreign_keys = OFF", mg->what);
    if (rc == RK_OK && wal) {
        /* Asked without waiting: another connection (a reader) keeps OUT in WAL, and then the
         * merge simply runs in WAL. */
        int src = sqlite3_busy_timeout(mg->out->h, 0);
        if (src == SQLITE_OK)
            b->rollback = set_journal(mg, "PRAGMA main.journal_mode = DELETE", "delete");
        if (src == SQLITE_OK)
            src = sqlite3_busy_timeout(mg->out->h, (int)b->busy_ms);
        if (src != SQLITE_OK)
            rc = dbi_error(mg->out, src, mg->what);
    }
    if (rc == RK_OK && b->rollback)
        rc = dbi_exec(mg->out, "PRAGMA main.synchronous = FULL", mg->what);
    return rc;
}

/* Restores the caller's settings; rc is the merge's result so far. */
static int bulk_end(struct merge *mg, const struct bulk *b, int rc)
{
    char sql[96];

    if (b->rollback && !set_journal(mg, "PRAGMA main.journal_mode = WAL", "wal"))
        rk_warn("'%s' stays in rollback-journal mode (another process opened it during the "
                "merge); the next roofkit command that writes it switches it back to WAL",
                mg->out->path);
    snprintf(sql, sizeof sql, "PRAGMA main.synchronous = %lld; PRAGMA foreign_keys = %lld",
             b->synchronous, b->foreign_keys);
    if (sqlite3_exec(mg->out->h, sql, NULL, NULL, NULL) != SQLITE_OK && rc == RK_OK)
        rc = dbi_error(mg->out, sqlite3_errcode(mg->out->h), mg->what);
    return rc;
}

int db_merge(struct db *out, const char *in_path, struct db_merge_stats *st)
{
    struct merge mg = {out, in_path, NULL, st};
    struct bulk bulk = {1, 1, DB_BUSY_TIMEOUT_MS, 0};
    char *copy = NULL;
    int rc, nested = 0, attached = 0, bulked = 0, protect_wal = 0;

    memset(st, 0, sizeof *st);
    dbi_need_rw(out, "db_merge");
    if (out->in_tx)
        RK_BUG("db_merge inside db_begin (ATTACH cannot run in a transaction)");
    mg.what = sqlite3_mprintf("merge '%s'", in_path ? in_path : "");
    if (!mg.what)
        return rk_error(RK_ENOMEM, "out of host memory");
    rc = prepare_input(in_path, out->path, 0, &copy);
    st->upgraded = copy != NULL;
    if (rc == RK_OK) {
        protect_wal = !copy && has_wal_frames(in_path);
        sqlite3_set_authorizer(out->h, guard_input, NULL);
        attached = 1;
        rc = attach_input(&mg, copy ? copy : in_path);
    }
    if (rc == RK_OK) {
        bulked = 1;
        rc = bulk_begin(&mg, &bulk);
    }
    if (rc == RK_OK)
        rc = dbi_tx_begin(out, &nested, mg.what);
    if (rc == RK_OK)
        rc = dbi_tx_end(out, nested, merge_rows(&mg), mg.what);
    if (bulked)
        rc = bulk_end(&mg, &bulk, rc);
    if (rc != RK_OK)
        memset(st, 0, sizeof *st);
    if (attached) {
        /* Leave another process's WAL frames where they are: no checkpoint on detach. */
        if (protect_wal)
            sqlite3_db_config(out->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        if (sqlite3_exec(out->h, "DETACH rk_in", NULL, NULL, NULL) != SQLITE_OK && rc == RK_OK)
            rc = dbi_error(out, sqlite3_errcode(out->h), mg.what);
        if (protect_wal)
            sqlite3_db_config(out->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
    }
    sqlite3_set_authorizer(out->h, NULL, NULL);
    remove_copy(copy);
    sqlite3_free(mg.what);
    return rc;
}
