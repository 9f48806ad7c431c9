/*
 * write.c - the typed inserts of db.h. Each public function is one row
 * transaction (dbi_tx_begin/dbi_tx_end): a measurement commits with all its
 * metrics or not at all, a latency curve commits whole, and inside a caller's
 * db_begin() each becomes a savepoint that rolls back alone.
 *
 * Values are bound with sqlite3_bind_* in the order of the INSERT's columns by a
 * small binder that stops at the first failure (SQLite's rc chain); NaN doubles,
 * NULL strings and 0 ids become SQL NULL (db.h "Numbers").
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include "common.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Binds parameters 1, 2, ... in order; rc holds the first failure. */
struct bind {
    sqlite3_stmt *st;
    int i;
    int rc;
};

static void b_text(struct bind *b, const char *s)
{
    if (b->rc == SQLITE_OK)
        b->rc = s ? sqlite3_bind_text(b->st, ++b->i, s, -1, SQLITE_TRANSIENT)
                  : sqlite3_bind_null(b->st, ++b->i);
}

static void b_int(struct bind *b, int64_t v)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->st, ++b->i, v);
}

/* 0 ("none") is NULL. */
static void b_id(struct bind *b, int64_t v)
{
    if (b->rc == SQLITE_OK)
        b->rc = v ? sqlite3_bind_int64(b->st, ++b->i, v) : sqlite3_bind_null(b->st, ++b->i);
}

/* Negative ("none") is NULL. */
static void b_opt(struct bind *b, int64_t v)
{
    if (b->rc == SQLITE_OK)
        b->rc = v >= 0 ? sqlite3_bind_int64(b->st, ++b->i, v) : sqlite3_bind_null(b->st, ++b->i);
}

/* NaN ("unknown") is NULL; infinities are stored as SQLite's 1e999. */
static void b_real(struct bind *b, double v)
{
    if (b->rc == SQLITE_OK)
        b->rc = isnan(v) ? sqlite3_bind_null(b->st, ++b->i) : sqlite3_bind_double(b->st, ++b->i, v);
}

/* Runs a bound statement that returns no row; RK_OK or the printed error. */
static int run(struct db *db, struct bind *b, const char *what)
{
    int src = b->rc;
    if (src == SQLITE_OK) {
        src = sqlite3_step(b->st);
        if (src == SQLITE_DONE)
            src = SQLITE_OK;
    }
    return src == SQLITE_OK ? RK_OK : dbi_error(db, src, what);
}

/* Prepares sql, binds with fill(), runs it once, all inside one row transaction. */
static int insert_one(struct db *db, const char *sql, const char *what,
                      void (*fill)(struct bind *, const void *), const void *row, int64_t *id)
{
    sqlite3_stmt *st = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db, sql, &st, what);
    if (rc == RK_OK) {
        b.st = st;
        fill(&b, row);
        rc = run(db, &b, what);
    }
    if (rc == RK_OK && id)
        *id = sqlite3_last_insert_rowid(db->h);
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

/* ---------------------------------------------------------------- devices */

int db_device_upsert(struct db *db, const struct db_device *d, int64_t *id)
{
    static const char sql[] =
        "INSERT INTO device (name, uuid, pci_bus_id, cc_major, cc_minor, sm_count, sm_clock_mhz,"
        " mem_clock_mhz, bus_width_bits, l2_bytes, memory_bytes, smem_per_sm_bytes,"
        " smem_per_block_optin_bytes, regs_per_sm, max_threads_per_sm, driver_version,"
        " runtime_version, host) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, pci_bus_id = excluded.pci_bus_id,"
        " cc_major = excluded.cc_major, cc_minor = excluded.cc_minor,"
        " sm_count = excluded.sm_count, sm_clock_mhz = excluded.sm_clock_mhz,"
        " mem_clock_mhz = excluded.mem_clock_mhz, bus_width_bits = excluded.bus_width_bits,"
        " l2_bytes = excluded.l2_bytes, memory_bytes = excluded.memory_bytes,"
        " smem_per_sm_bytes = excluded.smem_per_sm_bytes,"
        " smem_per_block_optin_bytes = excluded.smem_per_block_optin_bytes,"
        " regs_per_sm = excluded.regs_per_sm, max_threads_per_sm = excluded.max_threads_per_sm,"
        " driver_version = excluded.driver_version, runtime_version = excluded.runtime_version,"
        " host = excluded.host, last_seen = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
    const char *what = "store the device";
    sqlite3_stmt *st = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db, sql, &st, what);
    if (rc == RK_OK) {
        b.st = st;
        b_text(&b, d->name);
        b_text(&b, d->uuid);
        b_text(&b, d->pci_bus_id);
        b_int(&b, d->cc_major);
        b_int(&b, d->cc_minor);
        b_int(&b, d->sm_count);
        b_int(&b, d->sm_clock_mhz);
        b_int(&b, d->mem_clock_mhz);
        b_int(&b, d->bus_width_bits);
        b_int(&b, d->l2_bytes);
        b_int(&b, d->memory_bytes);
        b_int(&b, d->smem_per_sm_bytes);
        b_int(&b, d->smem_per_block_optin_bytes);
        b_int(&b, d->regs_per_sm);
        b_int(&b, d->max_threads_per_sm);
        b_int(&b, d->driver_version);
        b_int(&b, d->runtime_version);
        b_text(&b, d->host);
        rc = run(db, &b, what);
    }
    sqlite3_finalize(st);
    st = NULL;
    /* last_insert_rowid is not set by the UPDATE branch of an upsert: look it up. */
    if (rc == RK_OK)
        rc = dbi_prepare(db, "SELECT id FROM device WHERE uuid = ?", &st, what);
    if (rc == RK_OK) {
        int src = sqlite3_bind_text(st, 1, d->uuid, -1, SQLITE_TRANSIENT);
        if (src == SQLITE_OK)
            src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
            if (id)
                *id = sqlite3_column_int64(st, 0);
        } else {
            rc = dbi_error(db, src == SQLITE_DONE ? SQLITE_CORRUPT : src, what);
        }
    }
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

/* --------------------------------------------------------------- captures */

static const char *const kind_names[] = {"any",   "probe", "run",   "profile",
                                         "model", "tune",  "import"};
static const char *const status_names[] = {"running", "done", "failed", "interrupted"};

const char *db_capture_kind_name(enum db_capture_kind kind)
{
    if ((int)kind < 0 || (size_t)kind >= sizeof kind_names / sizeof kind_names[0])
        return "?";
    return kind_names[kind];
}

const char *db_status_name(enum db_status status)
{
    if ((int)status < 0 || (size_t)status >= sizeof status_names / sizeof status_names[0])
        return "?";
    return status_names[status];
}

struct capture_row {
    int64_t device_id;
    const char *kind, *cmdline, *tool_version;
    const struct db_origin *o;
};

static void fill_capture(struct bind *b, const void *row)
{
    const struct capture_row *c = row;
    b_id(b, c->device_id);
    b_text(b, c->kind);
    b_text(b, c->cmdline);
    b_text(b, c->tool_version);
    b_text(b, c->o->host);
    b_opt(b, c->o->rank);
    b_opt(b, c->o->local_rank);
    b_opt(b, c->o->world_size > 0 ? c->o->world_size : -1);
    b_opt(b, c->o->gpus_concurrent);
    b_opt(b, c->o->gpus_busy);
}

int db_set_origin(struct db *db, const struct db_origin *o)
{
    char *host = NULL;
    if (o->host && !(host = strdup(o->host)))
        return rk_error(RK_ENOMEM, "out of host memory");
    free((char *)db->origin.host);
    db->origin = *o;
    db->origin.host = host;
    return RK_OK;
}

int db_capture_begin(struct db *db, int64_t device_id, enum db_capture_kind kind,
                     const char *cmdline, const char *tool_version, int64_t *id)
{
    struct capture_row c = {device_id, NULL, cmdline, tool_version, &db->origin};
    if (kind <= DB_CAPTURE_ANY || kind > DB_CAPTURE_IMPORT)
        RK_BUG("db_capture_begin: bad capture kind");
    c.kind = kind_names[kind];
    return insert_one(db,
                      "INSERT INTO capture (device_id, kind, cmdline, tool_version, host, rank,"
                      " local_rank, world_size, gpus_concurrent, gpus_busy, uid)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, lower(hex(randomblob(16))))",
                      "start a capture", fill_capture, &c, id);
}

/* UPDATE of one capture that must exist; its one value is text (device_id 0) or, with
 * text NULL and device_id != 0, a device id. */
static int update_capture(struct db *db, const char *sql, int64_t id, const char *text,
                          int64_t device_id, const char *what)
{
    sqlite3_stmt *st = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db, sql, &st, what);
    if (rc == RK_OK) {
        b.st = st;
        if (device_id)
            b_id(&b, device_id);
        else
            b_text(&b, text);
        b_int(&b, id);
        rc = run(db, &b, what);
    }
    if (rc == RK_OK && sqlite3_changes(db->h) != 1)
        rc = rk_error(RK_EDB, "cannot %s in database '%s': capture %lld does not exist", what,
                      db->path, (long long)id);
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

int db_capture_end(struct db *db, int64_t id, enum db_status status)
{
    if ((int)status < 0 || status > DB_INTERRUPTED)
        RK_BUG("db_capture_end: bad status");
    return update_capture(db,
                          "UPDATE capture SET status = ?,"
                          " ended_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
                          id, status_names[status], 0, "end the capture");
}

int db_capture_mark_interrupted(struct db *db, int64_t id)
{
    int rc = db_rollback(db);
    if (rc != RK_OK)
        return rc;
    return db_capture_end(db, id, DB_INTERRUPTED);
}

int db_capture_note(struct db *db, int64_t id, const char *note)
{
    return update_capture(db, "UPDATE capture SET note = ? WHERE id = ?", id, note, 0,
                          "set the capture's note");
}

int db_capture_set_device(struct db *db, int64_t id, int64_t device_id)
{
    if (device_id <= 0)
        RK_BUG("db_capture_set_device: no device");
    return update_capture(db, "UPDATE capture SET device_id = ? WHERE id = ?", id, NULL, device_id,
                          "set the capture's device");
}

int db_capture_set_launch_device(struct db *db, int64_t capture_id, const char *uuid,
                                 int64_t device_id)
{
    const char *what = "set the GPU of a capture's launches";
    sqlite3_stmt *st = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (device_id <= 0)
        RK_BUG("db_capture_set_launch_device: no device");
    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db,
                     "UPDATE measurement SET device_id = ?1 WHERE capture_id = ?2"
                     " AND json_valid(params) AND json_extract(params, '$.uuid') = ?3",
                     &st, what);
    if (rc == RK_OK) {
        b.st = st;
        b_id(&b, device_id);
        b_int(&b, capture_id);
        b_text(&b, uuid);
        rc = run(db, &b, what);
    }
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

/* --------------------------------------------------------------- ceilings */

struct ceiling_row {
    int64_t capture_id;
    const struct db_ceiling *c;
};

static void fill_ceiling(struct bind *b, const void *row)
{
    const struct ceiling_row *r = row;
    const struct db_ceiling *c = r->c;
    b_int(b, r->capture_id);
    b_text(b, c->name);
    b_text(b, c->kind);
    b_text(b, c->level);
    b_text(b, c->precision);
    b_real(b, c->value);
    b_text(b, c->unit);
    b_text(b, c->method);
    b_text(b, c->params);
    b_int(b, c->reps);
    b_real(b, c->min);
    b_real(b, c->median);
    b_real(b, c->max);
    b_real(b, c->theoretical);
    b_real(b, c->sm_clock_mhz);
    b_real(b, c->power_w);
    b_real(b, c->temp_c);
    b_id(b, c->peer_device_id);
}

int db_insert_ceiling(struct db *db, int64_t capture_id, const struct db_ceiling *c, int64_t *id)
{
    struct ceiling_row r = {capture_id, c};
    return insert_one(db,
                      "INSERT INTO ceiling (capture_id, name, kind, level, precision, value, unit,"
                      " method, params, reps, min, median, max, theoretical, sm_clock_mhz,"
                      " power_w, temp_c, peer_device_id)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      "store a ceiling", fill_ceiling, &r, id);
}

/* ----------------------------------------------------------- latency curve */

int db_insert_latency_points(struct db *db, int64_t capture_id, const struct db_latency_point *p,
                             int n)
{
    const char *what = "store the latency curve";
    sqlite3_stmt *st = NULL;
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);
    int i;

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db,
                     "INSERT INTO latency_point (capture_id, footprint_bytes, stride_bytes,"
                     " cycles, ns) VALUES (?, ?, ?, ?, ?)",
                     &st, what);
    for (i = 0; rc == RK_OK && i < n; i++) {
        struct bind b = {st, 0, sqlite3_reset(st)};
        b_int(&b, capture_id);
        b_int(&b, p[i].footprint_bytes);
        b_int(&b, p[i].stride_bytes);
        b_real(&b, p[i].cycles);
        b_real(&b, p[i].ns);
        rc = run(db, &b, what);
    }
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

/* ------------------------------------------------------ measurements, metrics */

static void fill_measurement(struct bind *b, int64_t capture_id, const struct db_measurement *m)
{
    b_int(b, capture_id);
    b_text(b, m->kernel);
    b_text(b, m->family);
    b_text(b, m->precision);
    b_int(b, m->m);
    b_int(b, m->n);
    b_int(b, m->k);
    b_text(b, m->params);
    b_int(b, m->grid[0]);
    b_int(b, m->grid[1]);
    b_int(b, m->grid[2]);
    b_int(b, m->block[0]);
    b_int(b, m->block[1]);
    b_int(b, m->block[2]);
    b_int(b, m->registers);
    b_int(b, m->smem_static);
    b_int(b, m->smem_dynamic);
    b_int(b, m->reps);
    b_real(b, m->time_min_ns);
    b_real(b, m->time_median_ns);
    b_real(b, m->time_max_ns);
    b_real(b, m->flops);
    b_real(b, m->bytes_dram);
    b_real(b, m->bytes_l2);
    b_real(b, m->bytes_l1);
    b_real(b, m->bytes_shared);
    b_opt(b, m->verified);
    b_real(b, m->rel_error);
    b_text(b, m->cache_state);
    b_text(b, m->source);
    b_opt(b, m->launch_index);
    b_opt(b, m->correlation_id);
    b_id(b, m->device_id);
}

/* The energy reading (db.h): all NULL when no reading was taken (energy_launches 0). */
static void fill_energy(struct bind *b, const struct db_measurement *m)
{
    int taken = m->energy_launches > 0;
    b_real(b, taken ? m->energy_j : NAN);
    b_real(b, taken ? m->power_w : NAN);
    b_real(b, taken ? m->sm_clock_mhz : NAN);
    b_real(b, taken ? m->temp_c : NAN);
    b_id(b, taken ? m->energy_launches : 0);
}

/* The times as a JSON array ("[1200.5,1187]"), or NULL (SQL NULL) when there are none; the
 * buffer's oom says when memory ran out. */
static const char *times_json(const struct db_measurement *m, struct rk_buf *json)
{
    if (!m->times_ns || m->n_times <= 0)
        return NULL;
    rk_buf_puts(json, "[");
    for (int i = 0; i < m->n_times; i++) {
        if (i)
            rk_buf_puts(json, ",");
        rk_json_num(json, m->times_ns[i]);
    }
    rk_buf_puts(json, "]");
    return json->s;
}

int db_insert_measurement(struct db *db, int64_t capture_id, const struct db_measurement *m,
                          const struct db_metric *metrics, int nmetrics, int64_t *id)
{
    const char *what = "store a measurement";
    sqlite3_stmt *st = NULL;
    sqlite3_stmt *mst = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    struct rk_buf json = RK_BUF_INIT;
    const char *times = times_json(m, &json);
    int64_t mid = 0;
    int nested = 0;
    int rc;
    int i;

    if (json.oom) {
        rk_buf_release(&json);
        return rk_error(RK_ENOMEM, "out of memory: cannot %s in database '%s'", what, db->path);
    }
    if ((rc = dbi_tx_begin(db, &nested, what)) != RK_OK) {
        rk_buf_release(&json);
        return rc;
    }
    rc = dbi_prepare(
        db,
        "INSERT INTO measurement (capture_id, kernel, family, precision, m, n, k,"
        " params, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers,"
        " smem_static, smem_dynamic, reps, time_min_ns, time_median_ns, time_max_ns,"
        " flops, bytes_dram, bytes_l2, bytes_l1, bytes_shared, verified, rel_error,"
        " cache_state, source, launch_index, correlation_id, device_id, times_ns,"
        " nvtx, energy_j, power_w, sm_clock_mhz, temp_c, energy_launches)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
        "?,?,?,?,?)",
        &st, what);
    if (rc == RK_OK) {
        b.st = st;
        fill_measurement(&b, capture_id, m);
        b_text(&b, times);
        b_text(&b, m->nvtx);
        fill_energy(&b, m);
        rc = run(db, &b, what);
    }
    if (rc == RK_OK)
        mid = sqlite3_last_insert_rowid(db->h);
    if (rc == RK_OK && nmetrics > 0)
        rc = dbi_prepare(db,
                         "INSERT INTO metric (measurement_id, name, raw_name, value, unit)"
                         " VALUES (?, ?, ?, ?, ?)",
                         &mst, what);
    for (i = 0; rc == RK_OK && i < nmetrics; i++) {
        struct bind mb = {mst, 0, sqlite3_reset(mst)};
        b_int(&mb, mid);
        b_text(&mb, metrics[i].name);
        b_text(&mb, metrics[i].raw_name);
        b_real(&mb, metrics[i].value);
        b_text(&mb, metrics[i].unit);
        rc = run(db, &mb, what);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(mst);
    rk_buf_release(&json);
    rc = dbi_tx_end(db, nested, rc, what);
    if (rc == RK_OK && id)
        *id = mid;
    return rc;
}

/* ------------------------------------------------------------ predictions */

static void fill_prediction(struct bind *b, const void *row)
{
    const struct db_prediction *p = row;
    b_int(b, p->measurement_id);
    b_id(b, p->capture_id);
    b_text(b, p->model);
    b_real(b, p->predicted_time_ns);
    b_text(b, p->bound);
    b_text(b, p->details);
    b_real(b, p->predicted_energy_j > 0 ? p->predicted_energy_j : NAN);
}

int db_insert_prediction(struct db *db, const struct db_prediction *p, int64_t *id)
{
    static const char sql[] =
        "INSERT INTO prediction (measurement_id, capture_id, model, predicted_time_ns, bound,"
        " details, predicted_energy_j) VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (measurement_id, model) DO UPDATE SET capture_id = excluded.capture_id,"
        " predicted_time_ns = excluded.predicted_time_ns, bound = excluded.bound,"
        " details = excluded.details, predicted_energy_j = excluded.predicted_energy_j,"
        " created_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";
    const char *what = "store a prediction";
    sqlite3_stmt *st = NULL;
    struct bind b = {NULL, 0, SQLITE_OK};
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db, sql, &st, what);
    if (rc == RK_OK) {
        b.st = st;
        fill_prediction(&b, p);
        rc = run(db, &b, what);
    }
    sqlite3_finalize(st);
    st = NULL;
    /* As for devices: the UPDATE branch leaves last_insert_rowid alone. */
    if (rc == RK_OK && id)
        rc = dbi_prepare(db, "SELECT id FROM prediction WHERE measurement_id = ? AND model = ?",
                         &st, what);
    if (rc == RK_OK && id) {
        int src = sqlite3_bind_int64(st, 1, p->measurement_id);
        if (src == SQLITE_OK)
            src = sqlite3_bind_text(st, 2, p->model, -1, SQLITE_TRANSIENT);
        if (src == SQLITE_OK)
            src = sqlite3_step(st);
        if (src == SQLITE_ROW)
            *id = sqlite3_column_int64(st, 0);
        else
            rc = dbi_error(db, src == SQLITE_DONE ? SQLITE_CORRUPT : src, what);
    }
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}

/* ------------------------------------------------------------ energy spans */

int db_insert_energy_spans(struct db *db, int64_t capture_id, const struct db_energy_span *s, int n)
{
    const char *what = "store energy spans";
    sqlite3_stmt *st = NULL;
    int nested = 0;
    int rc = dbi_tx_begin(db, &nested, what);

    if (rc != RK_OK)
        return rc;
    rc = dbi_prepare(db,
                     "INSERT INTO energy_span (capture_id, device_id, scope, name, energy_j,"
                     " time_ns, power_w, launches) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     &st, what);
    for (int i = 0; rc == RK_OK && i < n; i++) {
        struct bind b = {st, 0, sqlite3_reset(st)};
        b_int(&b, capture_id);
        b_id(&b, s[i].device_id);
        b_text(&b, s[i].scope);
        b_text(&b, s[i].name);
        b_real(&b, s[i].energy_j);
        b_real(&b, s[i].time_ns);
        b_real(&b, s[i].power_w);
        b_opt(&b, s[i].launches);
        rc = run(db, &b, what);
    }
    sqlite3_finalize(st);
    return dbi_tx_end(db, nested, rc, what);
}
