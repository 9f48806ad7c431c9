/*
 * read.c - the typed queries of db.h and the table dump of `roofkit export`.
 *
 * Queries return malloc'd arrays of the db.h structs; every string in them is a
 * copy the array owns, released by the matching db_free_*. A query that reads
 * several tables (measurements with their metrics and predictions) runs inside one
 * read transaction, so it sees one snapshot even while another process writes.
 *
 * SQL is constant text; the only values that vary are bound with sqlite3_bind_*.
 * db_dump_table splices a table name into SQL only after finding it in the fixed
 * list of schema.c, and then splices that list's own string, never the caller's.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads columns 0, 1, ... of the current row in order; oom records a failed copy. */
struct col {
    sqlite3_stmt *st;
    int i;
    int oom;
};

static const char *c_text(struct col *c)
{
    int i = c->i++;
    const unsigned char *t;
    char *copy;

    if (sqlite3_column_type(c->st, i) == SQLITE_NULL)
        return NULL;
    t = sqlite3_column_text(c->st, i);
    copy = t ? strdup((const char *)t) : NULL;
    if (!copy)
        c->oom = 1;
    return copy;
}

/* NULL reads as 0. */
static int64_t c_int(struct col *c)
{
    return sqlite3_column_int64(c->st, c->i++);
}

/* NULL reads as -1 ("none"). */
static int64_t c_opt(struct col *c)
{
    int i = c->i++;
    return sqlite3_column_type(c->st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(c->st, i);
}

/* NULL reads as NaN ("unknown"). */
static double c_real(struct col *c)
{
    int i = c->i++;
    return sqlite3_column_type(c->st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(c->st, i);
}

static void free_str(const char *s)
{
    free((void *)s);
}

/*
 * A JSON array of numbers (measurement.times_ns, written by write.c) into a malloc'd array:
 * *n its length; NULL and 0 for SQL NULL, an empty array or an element that is not a finite
 * number (the schema's CHECK keeps it an array; roofkit writes only numbers in it).
 */
static const double *c_times(struct col *c, int *n)
{
    int i = c->i++;
    const char *t, *p;
    double *v = NULL;
    int count = 0, cap = 0;

    *n = 0;
    if (sqlite3_column_type(c->st, i) == SQLITE_NULL)
        return NULL;
    if (!(t = (const char *)sqlite3_column_text(c->st, i))) {
        c->oom = 1;
        return NULL;
    }
    for (p = t; *p == ' ' || *p == '[';)
        p++;
    while (*p && *p != ']') {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !isfinite(x)) {
            free(v);
            return NULL;
        }
        if (count == cap) {
            int ncap = cap ? 2 * cap : 16;
            double *grown = realloc(v, (size_t)ncap * sizeof *v);
            if (!grown) {
                free(v);
                c->oom = 1;
                return NULL;
            }
            v = grown;
            cap = ncap;
        }
        v[count++] = x;
        for (p = end; *p == ' ' || *p == ',';)
            p++;
    }
    *n = count;
    return v;
}

/*
 * Runs sql with int64 parameters args[0..nargs) and reads every row into a
 * growing array of elements of `size` bytes with read_row. On failure the partial
 * array is released with free_rows and *out is NULL.
 */
static int select_rows(struct db *db, const char *sql, const int64_t *args, int nargs, size_t size,
                       void (*read_row)(struct col *, void *), void (*free_rows)(void *, int),
                       void **out, int *n, const char *what)
{
    sqlite3_stmt *st = NULL;
    char *rows = NULL;
    int count = 0, cap = 0;
    int rc = dbi_prepare(db, sql, &st, what);
    int src = SQLITE_OK;
    int i;

    *out = NULL;
    *n = 0;
    for (i = 0; rc == RK_OK && src == SQLITE_OK && i < nargs; i++)
        src = sqlite3_bind_int64(st, i + 1, args[i]);
    while (rc == RK_OK && src == SQLITE_OK) {
        struct col c = {st, 0, 0};
        int step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            src = step;
            break;
        }
        if (count == cap) {
            int ncap = cap ? 2 * cap : 16;
            char *grown = realloc(rows, (size_t)ncap * size);
            if (!grown) {
                rc = rk_error(RK_ENOMEM, "out of memory: cannot %s from database '%s'", what,
                              db->path);
                break;
            }
            rows = grown;
            cap = ncap;
        }
        memset(rows + (size_t)count * size, 0, size);
        read_row(&c, rows + (size_t)count * size);
        count++;
        if (c.oom)
            rc = rk_error(RK_ENOMEM, "out of memory: cannot %s from database '%s'", what, db->path);
    }
    if (rc == RK_OK && src != SQLITE_OK)
        rc = dbi_error(db, src, what);
    sqlite3_finalize(st);
    if (rc != RK_OK) {
        free_rows(rows, count);
        return rc;
    }
    *out = rows;
    *n = count;
    return RK_OK;
}

/* A read snapshot across several SELECTs, unless the caller holds a transaction. */
static int snapshot_begin(struct db *db, int *began)
{
    *began = sqlite3_get_autocommit(db->h);
    return *began ? dbi_exec(db, "BEGIN", "start a read transaction") : RK_OK;
}

static void snapshot_end(struct db *db, int began)
{
    if (began && !sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- devices */

#define DEVICE_COLUMNS                                                                             \
    "id, name, uuid, pci_bus_id, cc_major, cc_minor, sm_count, sm_clock_mhz, mem_clock_mhz,"       \
    " bus_width_bits, l2_bytes, memory_bytes, smem_per_sm_bytes, smem_per_block_optin_bytes,"      \
    " regs_per_sm, max_threads_per_sm, driver_version, runtime_version, host, first_seen,"         \
    " last_seen"

static void read_device(struct col *c, void *elem)
{
    struct db_device *d = elem;
    d->id = c_int(c);
    d->name = c_text(c);
    d->uuid = c_text(c);
    d->pci_bus_id = c_text(c);
    d->cc_major = (int)c_int(c);
    d->cc_minor = (int)c_int(c);
    d->sm_count = (int)c_int(c);
    d->sm_clock_mhz = (int)c_int(c);
    d->mem_clock_mhz = (int)c_int(c);
    d->bus_width_bits = (int)c_int(c);
    d->l2_bytes = c_int(c);
    d->memory_bytes = c_int(c);
    d->smem_per_sm_bytes = (int)c_int(c);
    d->smem_per_block_optin_bytes = (int)c_int(c);
    d->regs_per_sm = (int)c_int(c);
    d->max_threads_per_sm = (int)c_int(c);
    d->driver_version = (int)c_int(c);
    d->runtime_version = (int)c_int(c);
    d->host = c_text(c);
    d->first_seen = c_text(c);
    d->last_seen = c_text(c);
}

void db_device_release(struct db_device *d)
{
    if (!d)
        return;
    free_str(d->name);
    free_str(d->uuid);
    free_str(d->pci_bus_id);
    free_str(d->host);
    free_str(d->first_seen);
    free_str(d->last_seen);
    memset(d, 0, sizeof *d);
}

void db_free_devices(struct db_device *devs, int n)
{
    int i;
    for (i = 0; i < n; i++)
        db_device_release(&devs[i]);
    free(devs);
}

static void free_devices(void *rows, int n)
{
    db_free_devices(rows, n);
}

int db_list_devices(struct db *db, struct db_device **out, int *n)
{
    return select_rows(db, "SELECT " DEVICE_COLUMNS " FROM device ORDER BY id", NULL, 0,
                       sizeof **out, read_device, free_devices, (void **)out, n, "list devices");
}

int db_get_device(struct db *db, int64_t id, struct db_device *out)
{
    struct db_device *rows = NULL;
    int n = 0;
    int rc =
        select_rows(db, "SELECT " DEVICE_COLUMNS " FROM device WHERE id = ?", &id, 1, sizeof *rows,
                    read_device, free_devices, (void **)&rows, &n, "read a device");
    memset(out, 0, sizeof *out);
    if (rc != RK_OK)
        return rc;
    if (n == 0) {
        free(rows);
        return RK_ENODATA;
    }
    *out = rows[0];
    free(rows);
    return RK_OK;
}

/* --------------------------------------------------------------- captures */

static enum db_capture_kind kind_from_text(const char *s)
{
    int k;
    for (k = DB_CAPTURE_PROBE; s && k <= DB_CAPTURE_IMPORT; k++)
        if (strcmp(s, db_capture_kind_name((enum db_capture_kind)k)) == 0)
            return (enum db_capture_kind)k;
    return DB_CAPTURE_ANY;
}

static enum db_status status_from_text(const char *s)
{
    int k;
    for (k = DB_RUNNING; s && k <= DB_INTERRUPTED; k++)
        if (strcmp(s, db_status_name((enum db_status)k)) == 0)
            return (enum db_status)k;
    return DB_FAILED;
}

#define CAPTURE_SELECT                                                                             \
    "SELECT k.id, k.device_id, d.name, k.kind, k.status, k.cmdline, k.tool_version, k.note,"       \
    " k.started_at, k.ended_at,"                                                                   \
    " (SELECT count(*) FROM ceiling WHERE capture_id = k.id),"                                     \
    " (SELECT count(*) FROM latency_point WHERE capture_id = k.id),"                               \
    " (SELECT count(*) FROM measurement WHERE capture_id = k.id),"                                 \
    " (SELECT count(*) FROM prediction WHERE capture_id = k.id),"                                  \
    " k.uid, k.host, k.rank, k.local_rank, k.world_size, k.gpus_concurrent, k.gpus_busy"           \
    " FROM capture k LEFT JOIN device d ON d.id = k.device_id"

static void read_capture(struct col *c, void *elem)
{
    struct db_capture *k = elem;
    int i;
    k->id = c_int(c);
    k->device_id = c_int(c);
    k->device_name = c_text(c);
    i = c->i++;
    k->kind = kind_from_text((const char *)sqlite3_column_text(c->st, i));
    i = c->i++;
    k->status = status_from_text((const char *)sqlite3_column_text(c->st, i));
    k->cmdline = c_text(c);
    k->tool_version = c_text(c);
    k->note = c_text(c);
    k->started_at = c_text(c);
    k->ended_at = c_text(c);
    k->n_ceilings = c_int(c);
    k->n_latency_points = c_int(c);
    k->n_measurements = c_int(c);
    k->n_predictions = c_int(c);
    k->uid = c_text(c);
    k->host = c_text(c);
    k->rank = (int)c_opt(c);
    k->local_rank = (int)c_opt(c);
    k->world_size = (int)c_opt(c);
    k->gpus_concurrent = (int)c_opt(c);
    k->gpus_busy = (int)c_opt(c);
}

void db_capture_release(struct db_capture *k)
{
    if (!k)
        return;
    free_str(k->device_name);
    free_str(k->cmdline);
    free_str(k->tool_version);
    free_str(k->note);
    free_str(k->started_at);
    free_str(k->ended_at);
    free_str(k->uid);
    free_str(k->host);
    memset(k, 0, sizeof *k);
}

void db_free_captures(struct db_capture *caps, int n)
{
    int i;
    for (i = 0; i < n; i++)
        db_capture_release(&caps[i]);
    free(caps);
}

static void free_captures(void *rows, int n)
{
    db_free_captures(rows, n);
}

int db_list_captures(struct db *db, struct db_capture **out, int *n)
{
    return select_rows(db, CAPTURE_SELECT " ORDER BY k.id", NULL, 0, sizeof **out, read_capture,
                       free_captures, (void **)out, n, "list captures");
}

int db_get_capture(struct db *db, int64_t id, struct db_capture *out)
{
    struct db_capture *rows = NULL;
    int n = 0;
    int rc = select_rows(db, CAPTURE_SELECT " WHERE k.id = ?", &id, 1, sizeof *rows, read_capture,
                         free_captures, (void **)&rows, &n, "read a capture");
    memset(out, 0, sizeof *out);
    if (rc != RK_OK)
        return rc;
    if (n == 0) {
        free(rows);
        return RK_ENODATA;
    }
    *out = rows[0];
    free(rows);
    return RK_OK;
}

int db_latest_capture(struct db *db, enum db_capture_kind kind, int64_t device_id, int64_t *id)
{
    const char *what = "find the latest capture";
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(db,
                         "SELECT id FROM capture WHERE (?1 IS NULL OR kind = ?1)"
                         " AND (?2 = 0 OR device_id = ?2) AND status IN ('done', 'interrupted')"
                         " ORDER BY id DESC LIMIT 1",
                         &st, what);
    int src;

    if (rc != RK_OK)
        return rc;
    src = kind == DB_CAPTURE_ANY
              ? sqlite3_bind_null(st, 1)
              : sqlite3_bind_text(st, 1, db_capture_kind_name(kind), -1, SQLITE_STATIC);
    if (src == SQLITE_OK)
        src = sqlite3_bind_int64(st, 2, device_id);
    if (src == SQLITE_OK)
        src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else if (src == SQLITE_DONE)
        rc = RK_ENODATA;
    else
        rc = dbi_error(db, src, what);
    sqlite3_finalize(st);
    return rc;
}

int db_capture_gpu_uuids(struct db *db, int64_t capture_id, char ***out, int *n)
{
    const char *what = "list the GPUs of a capture's launches";
    sqlite3_stmt *st = NULL;
    char **v = NULL;
    int k = 0, src, rc;

    *out = NULL;
    *n = 0;
    rc = dbi_prepare(db,
                     "SELECT DISTINCT json_extract(params, '$.uuid') AS u FROM measurement"
                     " WHERE capture_id = ?1 AND json_valid(params) AND u IS NOT NULL"
                     " ORDER BY u",
                     &st, what);
    if (rc != RK_OK)
        return rc;
    src = sqlite3_bind_int64(st, 1, capture_id);
    while (src == SQLITE_OK || src == SQLITE_ROW) {
        if ((src = sqlite3_step(st)) != SQLITE_ROW)
            break;
        const char *u = (const char *)sqlite3_column_text(st, 0);
        char **grown = realloc(v, sizeof *v * (size_t)(k + 1));
        if (!grown || !u || !(grown[k] = strdup(u))) {
            v = grown ? grown : v;
            rc = rk_error(RK_ENOMEM, "out of host memory");
            break;
        }
        v = grown;
        k++;
    }
    if (rc == RK_OK && src != SQLITE_DONE)
        rc = dbi_error(db, src, what);
    sqlite3_finalize(st);
    if (rc != RK_OK) {
        rk_free_name_list(v, k);
        return rc;
    }
    *out = v;
    *n = k;
    return RK_OK;
}

/* --------------------------------------------------------------- ceilings */

#define CEILING_COLUMNS                                                                            \
    "c.id, c.capture_id, c.name, c.kind, c.level, c.precision, c.value, c.unit, c.method,"         \
    " c.params, c.reps, c.min, c.median, c.max, c.theoretical, c.sm_clock_mhz, c.power_w,"         \
    " c.temp_c, c.peer_device_id"

static void read_ceiling(struct col *c, void *elem)
{
    struct db_ceiling *e = elem;
    e->id = c_int(c);
    e->capture_id = c_int(c);
    e->name = c_text(c);
    e->kind = c_text(c);
    e->level = c_text(c);
    e->precision = c_text(c);
    e->value = c_real(c);
    e->unit = c_text(c);
    e->method = c_text(c);
    e->params = c_text(c);
    e->reps = (int)c_int(c);
    e->min = c_real(c);
    e->median = c_real(c);
    e->max = c_real(c);
    e->theoretical = c_real(c);
    e->sm_clock_mhz = c_real(c);
    e->power_w = c_real(c);
    e->temp_c = c_real(c);
    e->peer_device_id = c_int(c);
}

void db_free_ceilings(struct db_ceiling *c, int n)
{
    int i;
    for (i = 0; c && i < n; i++) {
        free_str(c[i].name);
        free_str(c[i].kind);
        free_str(c[i].level);
        free_str(c[i].precision);
        free_str(c[i].unit);
        free_str(c[i].method);
        free_str(c[i].params);
    }
    free(c);
}

static void free_ceilings(void *rows, int n)
{
    db_free_ceilings(rows, n);
}

int db_query_ceilings(struct db *db, int64_t device_id, int64_t capture_id, struct db_ceiling **out,
                      int *n)
{
    static const char by_capture[] =
        "SELECT " CEILING_COLUMNS " FROM ceiling c WHERE c.capture_id = ? ORDER BY c.id";
    /* Per name, the row of the newest complete capture of the device that has it. */
    static const char by_device[] =
        "SELECT " CEILING_COLUMNS " FROM ceiling c WHERE c.id = ("
        " SELECT c2.id FROM ceiling c2 JOIN capture k ON k.id = c2.capture_id"
        " WHERE k.device_id = ?1 AND k.status IN ('done', 'interrupted') AND c2.name = c.name"
        " AND c2.peer_device_id IS c.peer_device_id"
        " ORDER BY c2.capture_id DESC, c2.id DESC LIMIT 1) ORDER BY c.id";
    static const char all[] = "SELECT " CEILING_COLUMNS " FROM ceiling c ORDER BY c.id";
    const char *sql = capture_id ? by_capture : device_id ? by_device : all;
    int64_t arg = capture_id ? capture_id : device_id;

    return select_rows(db, sql, &arg, (capture_id || device_id) ? 1 : 0, sizeof **out, read_ceiling,
                       free_ceilings, (void **)out, n, "read ceilings");
}

/* ----------------------------------------------------------- latency curve */

static void read_point(struct col *c, void *elem)
{
    struct db_latency_point *p = elem;
    p->footprint_bytes = c_int(c);
    p->stride_bytes = c_int(c);
    p->cycles = c_real(c);
    p->ns = c_real(c);
}

static void free_points(void *rows, int n)
{
    (void)n;
    free(rows);
}

int db_query_latency_points(struct db *db, int64_t device_id, int64_t capture_id,
                            struct db_latency_point **out, int *n)
{
    static const char by_capture[] =
        "SELECT footprint_bytes, stride_bytes, cycles, ns FROM latency_point"
        " WHERE capture_id = ? ORDER BY footprint_bytes, stride_bytes, id";
    static const char by_device[] =
        "SELECT footprint_bytes, stride_bytes, cycles, ns FROM latency_point WHERE capture_id = ("
        " SELECT k.id FROM capture k WHERE k.device_id = ?1"
        " AND k.status IN ('done', 'interrupted')"
        " AND EXISTS (SELECT 1 FROM latency_point p WHERE p.capture_id = k.id)"
        " ORDER BY k.id DESC LIMIT 1) ORDER BY footprint_bytes, stride_bytes, id";
    static const char all[] = "SELECT footprint_bytes, stride_bytes, cycles, ns FROM latency_point"
                              " ORDER BY footprint_bytes, stride_bytes, id";
    const char *sql = capture_id ? by_capture : device_id ? by_device : all;
    int64_t arg = capture_id ? capture_id : device_id;

    return select_rows(db, sql, &arg, (capture_id || device_id) ? 1 : 0, sizeof **out, read_point,
                       free_points, (void **)out, n, "read the latency curve");
}

/* ------------------------------------------------------------ predictions */

static void read_prediction(struct col *c, void *elem)
{
    struct db_prediction *p = elem;
    p->id = c_int(c);
    p->measurement_id = c_int(c);
    p->capture_id = c_int(c);
    p->model = c_text(c);
    p->predicted_time_ns = c_real(c);
    p->bound = c_text(c);
    p->details = c_text(c);
    p->predicted_energy_j = c_real(c);
}

void db_free_predictions(struct db_prediction *p, int n)
{
    int i;
    for (i = 0; p && i < n; i++) {
        free_str(p[i].model);
        free_str(p[i].bound);
        free_str(p[i].details);
    }
    free(p);
}

static void free_predictions(void *rows, int n)
{
    db_free_predictions(rows, n);
}

static const char predictions_sql[] =
    "SELECT p.id, p.measurement_id, p.capture_id, p.model, p.predicted_time_ns, p.bound,"
    " p.details, p.predicted_energy_j FROM prediction p JOIN measurement m ON m.id = "
    "p.measurement_id"
    " WHERE ?1 = 0 OR m.capture_id = ?1 ORDER BY p.measurement_id, p.model";

int db_query_predictions(struct db *db, int64_t capture_id, struct db_prediction **out, int *n)
{
    return select_rows(db, predictions_sql, &capture_id, 1, sizeof **out, read_prediction,
                       free_predictions, (void **)out, n, "read predictions");
}

/* ----------------------------------------------------- measurements, metrics */

static void read_measurement(struct col *c, void *elem)
{
    struct db_measurement_row *r = elem;
    struct db_measurement *m = &r->m;
    m->id = c_int(c);
    m->capture_id = c_int(c);
    m->kernel = c_text(c);
    m->family = c_text(c);
    m->precision = c_text(c);
    m->m = c_int(c);
    m->n = c_int(c);
    m->k = c_int(c);
    m->params = c_text(c);
    m->grid[0] = (int)c_int(c);
    m->grid[1] = (int)c_int(c);
    m->grid[2] = (int)c_int(c);
    m->block[0] = (int)c_int(c);
    m->block[1] = (int)c_int(c);
    m->block[2] = (int)c_int(c);
    m->registers = (int)c_int(c);
    m->smem_static = (int)c_int(c);
    m->smem_dynamic = (int)c_int(c);
    m->reps = (int)c_int(c);
    m->time_min_ns = c_real(c);
    m->time_median_ns = c_real(c);
    m->time_max_ns = c_real(c);
    m->flops = c_real(c);
    m->bytes_dram = c_real(c);
    m->bytes_l2 = c_real(c);
    m->bytes_l1 = c_real(c);
    m->bytes_shared = c_real(c);
    m->verified = (int)c_opt(c);
    m->rel_error = c_real(c);
    m->cache_state = c_text(c);
    m->source = c_text(c);
    m->launch_index = c_opt(c);
    m->correlation_id = c_opt(c);
    m->device_id = c_int(c);
    m->times_ns = c_times(c, &m->n_times);
    m->nvtx = c_text(c);
    m->energy_j = c_real(c);
    m->power_w = c_real(c);
    m->sm_clock_mhz = c_real(c);
    m->temp_c = c_real(c);
    m->energy_launches = c_int(c);
}

static void read_metric(struct col *c, void *elem)
{
    struct db_metric *m = elem;
    m->id = c_int(c);
    m->measurement_id = c_int(c);
    m->name = c_text(c);
    m->raw_name = c_text(c);
    m->value = c_real(c);
    m->unit = c_text(c);
}

static void free_metric_strings(struct db_metric *m, int n)
{
    int i;
    for (i = 0; m && i < n; i++) {
        free_str(m[i].name);
        free_str(m[i].raw_name);
        free_str(m[i].unit);
    }
}

static void free_metrics(void *rows, int n)
{
    free_metric_strings(rows, n);
    free(rows);
}

void db_free_measurements(struct db_measurement_row *rows, int n)
{
    int i;
    for (i = 0; rows && i < n; i++) {
        struct db_measurement *m = &rows[i].m;
        free_str(m->kernel);
        free_str(m->family);
        free_str(m->precision);
        free_str(m->params);
        free_str(m->cache_state);
        free_str(m->source);
        free((void *)m->times_ns);
        free_str(m->nvtx);
        free_metrics(rows[i].metrics, rows[i].n_metrics);
        db_free_predictions(rows[i].predictions, rows[i].n_predictions);
    }
    free(rows);
}

static void free_measurements(void *rows, int n)
{
    db_free_measurements(rows, n);
}

/*
 * Gives each measurement row (sorted by id) its metrics and predictions (sorted by
 * measurement id): first every per-row array is allocated zeroed, so that a failure
 * leaves nothing half-owned, then the structs are copied and their strings change
 * owner. Every metric and prediction belongs to a measurement read in the same
 * snapshot.
 */
static int distribute(struct db_measurement_row *rows, int nrows, const struct db_metric *mt,
                      int nmt, const struct db_prediction *pr, int npr)
{
    int pass, r, i, j;

    for (pass = 0; pass < 2; pass++) {
        for (r = 0, i = 0; i < nmt; i = j) {
            for (j = i; j < nmt && mt[j].measurement_id == mt[i].measurement_id; j++)
                ;
            while (r < nrows && rows[r].m.id < mt[i].measurement_id)
                r++;
            if (r == nrows || rows[r].m.id != mt[i].measurement_id)
                continue;
            if (pass == 0) {
                rows[r].metrics = calloc((size_t)(j - i), sizeof *mt);
                if (!rows[r].metrics)
                    return RK_ENOMEM;
                rows[r].n_metrics = j - i;
            } else {
                memcpy(rows[r].metrics, mt + i, (size_t)(j - i) * sizeof *mt);
            }
        }
        for (r = 0, i = 0; i < npr; i = j) {
            for (j = i; j < npr && pr[j].measurement_id == pr[i].measurement_id; j++)
                ;
            while (r < nrows && rows[r].m.id < pr[i].measurement_id)
                r++;
            if (r == nrows || rows[r].m.id != pr[i].measurement_id)
                continue;
            if (pass == 0) {
                rows[r].predictions = calloc((size_t)(j - i), sizeof *pr);
                if (!rows[r].predictions)
                    return RK_ENOMEM;
                rows[r].n_predictions = j - i;
            } else {
                memcpy(rows[r].predictions, pr + i, (size_t)(j - i) * sizeof *pr);
            }
        }
    }
    return RK_OK;
}

int db_query_measurements(struct db *db, int64_t capture_id, struct db_measurement_row **out,
                          int *n)
{
    static const char measurements_sql[] =
        "SELECT id, capture_id, kernel, family, precision, m, n, k, params, grid_x, grid_y,"
        " grid_z, block_x, block_y, block_z, registers, smem_static, smem_dynamic, reps,"
        " time_min_ns, time_median_ns, time_max_ns, flops, bytes_dram, bytes_l2, bytes_l1,"
        " bytes_shared, verified, rel_error, cache_state, source, launch_index, correlation_id,"
        " device_id, times_ns, nvtx, energy_j, power_w, sm_clock_mhz, temp_c, energy_launches"
        " FROM measurement WHERE ?1 = 0 OR capture_id = ?1 ORDER BY id";
    static const char metrics_sql[] =
        "SELECT mt.id, mt.measurement_id, mt.name, mt.raw_name, mt.value, mt.unit"
        " FROM metric mt JOIN measurement m ON m.id = mt.measurement_id"
        " WHERE ?1 = 0 OR m.capture_id = ?1 ORDER BY mt.measurement_id, mt.id";
    struct db_measurement_row *rows = NULL;
    struct db_metric *metrics = NULL;
    struct db_prediction *preds = NULL;
    int nrows = 0, nmetrics = 0, npreds = 0;
    int began = 0;
    int rc = snapshot_begin(db, &began);

    *out = NULL;
    *n = 0;
    if (rc == RK_OK)
        rc = select_rows(db, measurements_sql, &capture_id, 1, sizeof *rows, read_measurement,
                         free_measurements, (void **)&rows, &nrows, "read measurements");
    if (rc == RK_OK)
        rc = select_rows(db, metrics_sql, &capture_id, 1, sizeof *metrics, read_metric,
                         free_metrics, (void **)&metrics, &nmetrics, "read metrics");
    if (rc == RK_OK)
        rc = select_rows(db, predictions_sql, &capture_id, 1, sizeof *preds, read_prediction,
                         free_predictions, (void **)&preds, &npreds, "read predictions");
    snapshot_end(db, began);
    if (rc == RK_OK && distribute(rows, nrows, metrics, nmetrics, preds, npreds) != RK_OK)
        rc = rk_error(RK_ENOMEM, "out of memory: cannot read measurements from database '%s'",
                      db->path);
    if (rc == RK_OK) {
        /* The strings now belong to rows. */
        free(metrics);
        free(preds);
        *out = rows;
        *n = nrows;
        return RK_OK;
    }
    db_free_measurements(rows, nrows);
    free_metrics(metrics, nmetrics);
    free_predictions(preds, npreds);
    return rc;
}

/* ------------------------------------------------------------ energy spans */

static void read_span(struct col *c, void *elem)
{
    struct db_energy_span *s = elem;
    s->id = c_int(c);
    s->capture_id = c_int(c);
    s->device_id = c_int(c);
    s->scope = c_text(c);
    s->name = c_text(c);
    s->energy_j = c_real(c);
    s->time_ns = c_real(c);
    s->power_w = c_real(c);
    s->launches = c_opt(c);
}

void db_free_energy_spans(struct db_energy_span *s, int n)
{
    for (int i = 0; s && i < n; i++) {
        free_str(s[i].scope);
        free_str(s[i].name);
    }
    free(s);
}

static void free_spans(void *rows, int n)
{
    db_free_energy_spans(rows, n);
}

int db_query_energy_spans(struct db *db, int64_t capture_id, struct db_energy_span **out, int *n)
{
    static const char sql[] =
        "SELECT id, capture_id, device_id, scope, name, energy_j, time_ns, power_w, launches"
        " FROM energy_span WHERE ?1 = 0 OR capture_id = ?1 ORDER BY id";
    return select_rows(db, sql, &capture_id, 1, sizeof **out, read_span, free_spans, (void **)out,
                       n, "read energy spans");
}

/* --------------------------------------------------------------- export */

/* The statement that reads every row of `table`, one of db_table_name() (else RK_EUSAGE). */
static int dump_prepare(struct db *db, const char *table, sqlite3_stmt **st)
{
    const char *known = NULL;
    char sql[96];
    char list[160] = "";
    for (int i = 0; db_table_name(i); i++) {
        if (table && strcmp(table, db_table_name(i)) == 0)
            known = db_table_name(i);
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 db_table_name(i));
    }
    if (!known)
        return rk_error(RK_EUSAGE, "unknown table '%s'; the tables are %s", table ? table : "",
                        list);
    snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY rowid", known);
    return dbi_prepare(db, sql, st, "export a table");
}

int db_dump_columns(struct db *db, const char *table, db_row_fn cb, void *user)
{
    sqlite3_stmt *st = NULL;
    const char **names = NULL;
    int ncols, rc = dump_prepare(db, table, &st);
    if (rc != RK_OK)
        return rc;
    ncols = sqlite3_column_count(st);
    if (!(names = calloc((size_t)ncols + 1, sizeof *names)))
        rc = rk_error(RK_ENOMEM, "out of memory: cannot export from database '%s'", db->path);
    for (int i = 0; i < ncols && rc == RK_OK; i++)
        if (!(names[i] = sqlite3_column_name(st, i)))
            rc = rk_error(RK_ENOMEM, "out of memory: cannot export from database '%s'", db->path);
    if (rc == RK_OK)
        rc = cb(ncols, names, NULL, NULL, user);
    sqlite3_finalize(st);
    free(names);
    return rc;
}

int db_dump_table(struct db *db, const char *table, db_row_fn cb, void *user)
{
    const char *what = "export a table";
    sqlite3_stmt *st = NULL;
    const char **names = NULL;
    const char **values = NULL;
    enum db_type *types = NULL;
    char *reals = NULL;
    int ncols = 0;
    int rc = RK_OK;
    int i;

    rc = dump_prepare(db, table, &st);
    if (rc != RK_OK)
        return rc;
    ncols = sqlite3_column_count(st);
    names = calloc((size_t)ncols, sizeof *names);
    values = calloc((size_t)ncols, sizeof *values);
    types = calloc((size_t)ncols, sizeof *types);
    reals = calloc((size_t)ncols, 32);
    if (!names || !values || !types || !reals) {
        rc = rk_error(RK_ENOMEM, "out of memory: cannot export from database '%s'", db->path);
        goto out;
    }
    for (;;) {
        int src = sqlite3_step(st);
        if (src == SQLITE_DONE)
            break;
        if (src != SQLITE_ROW) {
            rc = dbi_error(db, src, what);
            break;
        }
        /* Names are read after the step: a re-prepare there would invalidate them. */
        for (i = 0; i < ncols && rc == RK_OK; i++)
            if (!(names[i] = sqlite3_column_name(st, i)))
                rc = rk_error(RK_ENOMEM, "out of memory: cannot export from database '%s'",
                              db->path);
        if (rc != RK_OK)
            break;
        for (i = 0; i < ncols; i++) {
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_NULL:
                types[i] = DB_NULL;
                values[i] = NULL;
                break;
            case SQLITE_INTEGER:
                types[i] = DB_INTEGER;
                values[i] = (const char *)sqlite3_column_text(st, i);
                break;
            case SQLITE_FLOAT:
                types[i] = DB_REAL;
                snprintf(reals + 32 * i, 32, "%.17g", sqlite3_column_double(st, i));
                values[i] = reals + 32 * i;
                break;
            default:
                types[i] = DB_TEXT;
                values[i] = (const char *)sqlite3_column_text(st, i);
                break;
            }
        }
        rc = cb(ncols, names, values, types, user);
        if (rc != 0)
            break;
    }
out:
    sqlite3_finalize(st);
    free(names);
    free(values);
    free(types);
    free(reals);
    return rc;
}
