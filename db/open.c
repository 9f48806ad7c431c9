/*
 * open.c - opening a roofkit database without ever damaging a file that is not
 * one, migrating older schemas, the explicit and per-row transactions, and the
 * one-line messages for SQLite's errors.
 *
 * db_open runs these states in order; each runs only while all is well, and
 * nothing before WRITE can change the file:
 *
 *     STAT ──missing──► (DB_RO: refuse) (DB_RW: create) ──────────────────► WRITE
 *       │ exists (DB_RW: and writable, checked with access(), else refuse)
 *       ▼
 *     HEADER   first 100 bytes read with stdio: SQLite magic, page size,
 *       │      in-header page count against the file size (truncation)
 *       ▼
 *     VALIDATE SQLite connection with PRAGMA query_only=1 and no checkpoint on
 *       │      close: application_id, user_version, tables, quick_check
 *       ▼
 *     DECIDE   not roofkit's / newer / corrupt ─► close, refuse (file untouched)
 *       │      DB_RO: keep this connection (older schema or empty: refuse)
 *       ▼
 *     WRITE    (DB_RW) journal_mode=WAL, then migrations, one step per
 *              BEGIN IMMEDIATE transaction, re-reading user_version inside it so
 *              two processes opening one new file do not both create it.
 *
 * Assumes one thread per connection (SQLite's default serialized mode is fine),
 * and that a file whose header is in rollback-journal mode can be validated with
 * SQLITE_OPEN_READONLY (no side files) while a WAL file needs its -shm, so it is
 * validated read-write with query_only on.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const unsigned char sqlite_magic[16] = "SQLite format 3";

/* quick_check reads every page of the b-trees: run it on open below this size. */
#define QUICK_CHECK_MAX_BYTES (64ll << 20)

int dbi_error(struct db *db, int src, const char *what)
{
    const char *path = db ? db->path : "?";
    const char *msg = (db && db->h) ? sqlite3_errmsg(db->h) : sqlite3_errstr(src);

    switch (src & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return rk_error(RK_EDB, "database '%s' is locked by another process; retry or use --db",
                        path);
    case SQLITE_FULL:
        return rk_error(RK_EDB,
                        "cannot %s in database '%s': the disk is full; free space and retry", what,
                        path);
    case SQLITE_READONLY:
        return rk_error(RK_EDB,
                        "cannot %s in database '%s': %s; make the file and its folder writable "
                        "or use --db",
                        what, path, msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return rk_error(RK_EDB,
                        "database '%s' is corrupt (%s); restore it from a copy or pass --db", path,
                        msg);
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return rk_error(RK_EDB,
                        "cannot %s in database '%s': %s; check the disk and the permissions, "
                        "or pass --db",
                        what, path, msg);
    case SQLITE_NOMEM:
        return rk_error(RK_ENOMEM, "cannot %s in database '%s': out of memory", what, path);
    default:
        return rk_error(RK_EDB, "cannot %s in database '%s': %s", what, path, msg);
    }
}

int dbi_exec(struct db *db, const char *sql, const char *what)
{
    int src = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
    return src == SQLITE_OK ? RK_OK : dbi_error(db, src, what);
}

int dbi_prepare(struct db *db, const char *sql, sqlite3_stmt **st, const char *what)
{
    int src = sqlite3_prepare_v2(db->h, sql, -1, st, NULL);
    return src == SQLITE_OK ? RK_OK : dbi_error(db, src, what);
}

void dbi_need_rw(const struct db *db, const char *fn)
{
    if (db->readonly) {
        fprintf(stderr, "roofkit: bug: %s called on a database opened read-only\n", fn);
        RK_BUG("write on a DB_RO connection");
    }
}

int dbi_tx_begin(struct db *db, int *nested, const char *what)
{
    int rc;

    dbi_need_rw(db, what);
    if (db->in_tx && sqlite3_get_autocommit(db->h))
        return rk_error(RK_EDB,
                        "cannot %s in database '%s': an earlier error rolled the transaction "
                        "back; run the command again",
                        what, db->path);
    if (!db->in_tx && !sqlite3_get_autocommit(db->h)) {
        /* A rollback that failed earlier (out of memory) left a transaction open. */
        rc = dbi_exec(db, "ROLLBACK", what);
        if (rc != RK_OK)
            return rc;
    }
    *nested = db->in_tx;
    return dbi_exec(db, *nested ? "SAVEPOINT rk_row" : "BEGIN IMMEDIATE", what);
}

int dbi_tx_end(struct db *db, int nested, int rc, const char *what)
{
    if (rc == RK_OK)
        rc = dbi_exec(db, nested ? "RELEASE rk_row" : "COMMIT", what);
    if (rc == RK_OK)
        return RK_OK;
    /* Some errors (disk full, I/O, out of memory) already rolled everything back. */
    if (!sqlite3_get_autocommit(db->h) &&
        sqlite3_exec(db->h, nested ? "ROLLBACK TO rk_row; RELEASE rk_row" : "ROLLBACK", NULL, NULL,
                     NULL) != SQLITE_OK &&
        nested)
        db->broken = 1; /* half a row may stay in the caller's transaction */
    return rc;
}

/* Reads one integer from constant SQL ("PRAGMA user_version"). */
static int query_int(struct db *db, const char *sql, long long *out, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(db, sql, &st, what);
    if (rc == RK_OK) {
        int src = sqlite3_step(st);
        if (src == SQLITE_ROW)
            *out = sqlite3_column_int64(st, 0);
        else
            rc = dbi_error(db, src == SQLITE_DONE ? SQLITE_CORRUPT : src, what);
    }
    sqlite3_finalize(st);
    return rc;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The SQLite file header's size [bytes] (fileformat2.html §1.3). */
#define HEADER_BYTES 100

/* One read of the file's header into h and, on the same descriptor after it, its size. */
static int read_header(const char *path, unsigned char (*h)[HEADER_BYTES], size_t *got,
                       long long *size)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rk_error(RK_EDB,
                        "cannot read '%s': %s; check the path and its permissions, or "
                        "pass --db",
                        path, strerror(errno));
    *got = fread(*h, 1, sizeof *h, f);
    *size = fstat(fileno(f), &st) == 0 ? (long long)st.st_size : 0;
    fclose(f);
    return RK_OK;
}

/*
 * How long a header that counts more pages than the file holds is read again before the file
 * is called truncated [ms], and how often. A writer in another process (a checkpoint, a
 * commit) writes page 1 with the new page count before the pages past the old end, so for a
 * moment a growing database looks truncated: two `roofkit model` runs on one database saw
 * 102400 bytes under a header of 200704. A truncated file stays so.
 */
#define HEADER_SETTLE_MS 1000
#define HEADER_RETRY_MS  20

/*
 * HEADER: checks the SQLite file header with plain reads, before SQLite sees the
 * file (https://www.sqlite.org/fileformat2.html §1.3). *wal is set when the file
 * is in WAL mode (read/write versions 2).
 */
static int check_header(const char *path, int *wal)
{
    unsigned char h[HEADER_BYTES];
    size_t got;
    unsigned page_size;
    uint32_t npages;
    long long size = 0;
    int rc;

    for (int waited = 0;; waited += HEADER_RETRY_MS) {
        if ((rc = read_header(path, &h, &got, &size)) != RK_OK)
            return rc;
        if (got < sizeof sqlite_magic || memcmp(h, sqlite_magic, sizeof sqlite_magic) != 0)
            return rk_error(RK_EDB,
                            "'%s' is not a SQLite database; pass --db with a roofkit database "
                            "or a new file name",
                            path);
        if (got < sizeof h)
            return rk_error(RK_EDB,
                            "database '%s' is truncated (%lld bytes); restore it from a copy or "
                            "pass --db",
                            path, size);
        page_size = (unsigned)h[16] << 8 | h[17];
        if (page_size == 1)
            page_size = 65536;
        if (page_size < 512 || (page_size & (page_size - 1)) != 0)
            return rk_error(RK_EDB,
                            "database '%s' is corrupt (page size %u in its header); restore it "
                            "from a copy or pass --db",
                            path, page_size);
        /* The in-header page count is valid when bytes 92..95 equal the change counter. */
        npages = be32(h + 28);
        if (npages == 0 || be32(h + 92) != be32(h + 24) || (long long)npages * page_size <= size)
            break;
        if (waited >= HEADER_SETTLE_MS)
            return rk_error(RK_EDB,
                            "database '%s' is truncated (%lld bytes, its header says %lld); "
                            "restore it from a copy or pass --db",
                            path, size, (long long)npages * page_size);
        nanosleep(&(struct timespec){0, HEADER_RETRY_MS * 1000000L}, NULL);
    }
    *wal = h[18] == 2 || h[19] == 2;
    return RK_OK;
}

static int open_connection(struct db *db, int flags)
{
    int src = sqlite3_open_v2(db->path, &db->h, flags, NULL);
    if (src != SQLITE_OK && (src & 0xff) == SQLITE_CANTOPEN)
        return rk_error(RK_EDB,
                        "cannot open database '%s': %s; check that its folder exists and is "
                        "writable, or pass --db",
                        db->path, db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(src));
    if (src != SQLITE_OK)
        return dbi_error(db, src, "open the file");
    sqlite3_extended_result_codes(db->h, 1);
    src = sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);
    if (src != SQLITE_OK)
        return dbi_error(db, src, "set the busy timeout");
    return RK_OK;
}

static void close_connection(struct db *db)
{
    if (db->h && !sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close_v2(db->h);
    db->h = NULL;
}

/*
 * The first row of quick_check/integrity_check: "ok", or the first problem,
 * which may span lines; it is printed on one line, shortened.
 */
static int check_result(const struct db *db, const char *text)
{
    char line[160];
    size_t i;

    if (text && strcmp(text, "ok") == 0)
        return RK_OK;
    snprintf(line, sizeof line, "%s", text ? text : "no answer");
    for (i = 0; line[i]; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    return rk_error(RK_EDB, "database '%s' is corrupt (%s); restore it from a copy or pass --db",
                    db->path, line);
}

/* What VALIDATE found. */
struct found {
    long long app_id, version, nobjects;
};

/*
 * VALIDATE: reads what DECIDE needs through a connection that cannot write
 * (query_only) and will not checkpoint on close. Errors are printed.
 */
static int validate(struct db *db, long long size, struct found *f)
{
    int rc = RK_OK;
    sqlite3_stmt *st = NULL;
    int src;

    if (sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL) != SQLITE_OK)
        return dbi_error(db, sqlite3_errcode(db->h), "configure the connection");
    rc = dbi_exec(db, "PRAGMA query_only = 1", "configure the connection");
    /* One snapshot: another process may be creating the schema meanwhile. */
    if (rc == RK_OK)
        rc = dbi_exec(db, "BEGIN", "read the schema");
    if (rc == RK_OK)
        rc = query_int(db, "PRAGMA application_id", &f->app_id, "read the application id");
    if (rc == RK_OK)
        rc = query_int(db, "PRAGMA user_version", &f->version, "read the schema version");
    if (rc == RK_OK)
        rc = query_int(db, "SELECT count(*) FROM sqlite_master", &f->nobjects, "read the schema");
    if (!sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    if (rc != RK_OK || size > QUICK_CHECK_MAX_BYTES)
        return rc;
    rc = dbi_prepare(db, "PRAGMA quick_check(1)", &st, "check the file");
    if (rc != RK_OK)
        return rc;
    src = sqlite3_step(st);
    if (src != SQLITE_ROW)
        rc = dbi_error(db, src == SQLITE_DONE ? SQLITE_CORRUPT : src, "check the file");
    else
        rc = check_result(db, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

/* DECIDE: whether a validated file may be used in `mode`. */
static int decide(const struct db *db, enum db_mode mode, const struct found *f)
{
    if (f->app_id != DB_APPLICATION_ID && (f->app_id != 0 || f->nobjects > 0))
        return rk_error(RK_EDB,
                        "'%s' is not a roofkit database (it belongs to another program); pass "
                        "--db with a roofkit database or a new file name",
                        db->path);
    if (f->version > dbi_nmigrations)
        return rk_error(RK_EDB,
                        "'%s' was written by a newer roofkit (schema %lld, this one knows %d); "
                        "upgrade roofkit",
                        db->path, f->version, dbi_nmigrations);
    if (mode == DB_RO && f->app_id == 0)
        return rk_error(RK_EDB,
                        "database '%s' is empty; run 'roofkit probe' or 'roofkit all' first, or "
                        "pass --db",
                        db->path);
    if (mode == DB_RO && f->version < dbi_nmigrations)
        return rk_error(RK_EDB,
                        "database '%s' has schema %lld, older than this roofkit's %d; run a "
                        "command that writes (roofkit probe) once to upgrade it",
                        db->path, f->version, dbi_nmigrations);
    return RK_OK;
}

/* WRITE: brings the schema to this build's version, one transaction per step. */
static int migrate(struct db *db)
{
    const char *what = "upgrade the schema";
    int rc = RK_OK;

    while (rc == RK_OK) {
        struct found f = {0, 0, 0};
        char pragma[96];

        rc = dbi_exec(db, "BEGIN IMMEDIATE", what);
        if (rc != RK_OK)
            break;
        rc = query_int(db, "PRAGMA application_id", &f.app_id, what);
        if (rc == RK_OK)
            rc = query_int(db, "PRAGMA user_version", &f.version, what);
        if (rc == RK_OK)
            rc = query_int(db, "SELECT count(*) FROM sqlite_master", &f.nobjects, what);
        /* Another process may have changed the file since VALIDATE. */
        if (rc == RK_OK)
            rc = decide(db, DB_RW, &f);
        if (rc == RK_OK && f.version == dbi_nmigrations)
            return dbi_tx_end(db, 0, RK_OK, what);
        if (rc == RK_OK)
            rc = dbi_exec(db, dbi_migrations[f.version], what);
        if (rc == RK_OK) {
            snprintf(pragma, sizeof pragma, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                     DB_APPLICATION_ID, (int)f.version + 1);
            rc = dbi_exec(db, pragma, what);
        }
        rc = dbi_tx_end(db, 0, rc, what);
    }
    return rc;
}

/* Pragmas of a writing connection, then the schema. */
static int setup_rw(struct db *db)
{
    int rc = RK_OK;
    sqlite3_stmt *st = NULL;

    if (sqlite3_db_readonly(db->h, "main") == 1)
        return rk_error(RK_EDB,
                        "database '%s' is read-only; make it writable, or pass --db with a "
                        "writable file",
                        db->path);
    if (sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL) != SQLITE_OK)
        return dbi_error(db, sqlite3_errcode(db->h), "configure the connection");
    rc =
        dbi_exec(db, "PRAGMA query_only = 0; PRAGMA foreign_keys = ON", "configure the connection");
    if (rc == RK_OK)
        rc = dbi_prepare(db, "PRAGMA journal_mode = WAL", &st, "switch to WAL");
    if (rc == RK_OK) {
        /*
         * The switch takes an exclusive lock and, while another process is creating
         * the same file, may answer SQLITE_BUSY without calling the busy handler:
         * retry for as long as the busy timeout.
         */
        int src = sqlite3_step(st);
        int waited = 0;
        while ((src & 0xff) == SQLITE_BUSY && waited < DB_BUSY_TIMEOUT_MS) {
            sqlite3_reset(st);
            sqlite3_sleep(10);
            waited += 10;
            src = sqlite3_step(st);
        }
        if (src != SQLITE_ROW)
            rc = dbi_error(db, src, "switch to WAL");
        else if (strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0)
            rc = rk_error(RK_EDB,
                          "cannot switch database '%s' to WAL mode (it stays '%s'); put it on a "
                          "local file system or pass --db",
                          db->path, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    if (rc == RK_OK)
        rc = dbi_exec(db, "PRAGMA synchronous = NORMAL", "configure the connection");
    if (rc == RK_OK)
        rc = migrate(db);
    return rc;
}

int db_open(const char *path, enum db_mode mode, struct db **out)
{
    struct db *db = NULL;
    struct stat st;
    struct stat wal_st;
    int rc = RK_OK;
    int wal = 0;
    int had_wal_frames = 0;
    struct found f = {0, 0, 0};

    *out = NULL;
    if (!path || !*path)
        return rk_error(RK_EDB, "no database file given; pass --db FILE");
    db = calloc(1, sizeof *db);
    if (db) {
        db->path = strdup(path);
        db->origin = (struct db_origin){NULL, -1, -1, -1, -1, -1};
    }
    if (!db || !db->path) {
        rc = rk_error(RK_ENOMEM, "out of memory opening database '%s'", path);
        goto out;
    }

    /* STAT */
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
            rc = rk_error(RK_EDB, "cannot open database '%s': %s; check the path or pass --db",
                          path, strerror(errno));
            goto out;
        }
        if (mode == DB_RO) {
            rc = rk_error(RK_EDB,
                          "database '%s' does not exist; run 'roofkit probe' or 'roofkit all' "
                          "first, or pass --db",
                          path);
            goto out;
        }
        rc = open_connection(db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        if (rc == RK_OK)
            rc = setup_rw(db);
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = rk_error(RK_EDB, "'%s' is a folder, not a database; pass --db FILE", path);
        goto out;
    }

    /* Writing needs a writable file: refuse before SQLite opens it read-only. */
    if (mode == DB_RW && access(path, W_OK) != 0) {
        rc = rk_error(RK_EDB,
                      "database '%s' is read-only (%s); make it writable, or pass --db with a "
                      "writable file",
                      path, strerror(errno));
        goto out;
    }

    /* HEADER and VALIDATE (an empty file is a new database) */
    if (st.st_size > 0) {
        char *wal_path = NULL;
        rc = check_header(path, &wal);
        if (rc != RK_OK)
            goto out;
        if (wal && (wal_path = sqlite3_mprintf("%s-wal", path)) != NULL) {
            had_wal_frames = stat(wal_path, &wal_st) == 0 && wal_st.st_size > 0;
            sqlite3_free(wal_path);
        }
        rc = open_connection(db, wal ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
        if (rc == RK_OK)
            rc = validate(db, (long long)st.st_size, &f);
        /* DECIDE */
        if (rc == RK_OK)
            rc = decide(db, mode, &f);
        if (rc != RK_OK) {
            /*
             * Refused. Without frames of someone else's WAL to protect, let SQLite
             * checkpoint (a no-op) and remove the -wal/-shm files it created.
             */
            if (db->h && !had_wal_frames)
                sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
            goto out;
        }
        if (mode == DB_RO) {
            db->readonly = 1;
            if (sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL) != SQLITE_OK)
                rc = dbi_error(db, sqlite3_errcode(db->h), "configure the connection");
            if (rc == RK_OK)
                rc = dbi_exec(db, "PRAGMA foreign_keys = ON", "configure the connection");
            goto out;
        }
        if (!wal) {
            close_connection(db);
            rc = open_connection(db, SQLITE_OPEN_READWRITE);
            if (rc != RK_OK)
                goto out;
        }
    } else {
        if (mode == DB_RO) {
            rc = rk_error(RK_EDB,
                          "database '%s' is empty; run 'roofkit probe' or 'roofkit all' first, "
                          "or pass --db",
                          path);
            goto out;
        }
        rc = open_connection(db, SQLITE_OPEN_READWRITE);
        if (rc != RK_OK)
            goto out;
    }

    /* WRITE */
    rc = setup_rw(db);

out:
    if (rc != RK_OK) {
        if (db)
            close_connection(db);
        if (db)
            free(db->path);
        free(db);
        return rc;
    }
    *out = db;
    return RK_OK;
}

void db_close(struct db *db)
{
    if (!db)
        return;
    close_connection(db);
    free((char *)db->origin.host);
    free(db->path);
    free(db);
}

const char *db_path(const struct db *db)
{
    return db->path;
}

int db_set_busy_timeout(struct db *db, int ms)
{
    int src;
    if (ms < 0)
        RK_BUG("negative busy timeout");
    src = sqlite3_busy_timeout(db->h, ms);
    return src == SQLITE_OK ? RK_OK : dbi_error(db, src, "set the busy timeout");
}

int db_check(struct db *db)
{
    sqlite3_stmt *st = NULL;
    int rc = dbi_prepare(db, "PRAGMA integrity_check(1)", &st, "check the file");
    int src;

    if (rc != RK_OK)
        return rc;
    src = sqlite3_step(st);
    if (src != SQLITE_ROW)
        rc = dbi_error(db, src == SQLITE_DONE ? SQLITE_CORRUPT : src, "check the file");
    else
        rc = check_result(db, (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

int db_begin(struct db *db)
{
    int rc;

    dbi_need_rw(db, "db_begin");
    if (db->in_tx)
        RK_BUG("db_begin inside a transaction (transactions do not nest)");
    if (!sqlite3_get_autocommit(db->h)) {
        /* A rollback that failed earlier (out of memory) left a transaction open. */
        rc = dbi_exec(db, "ROLLBACK", "start a transaction");
        if (rc != RK_OK)
            return rc;
    }
    rc = dbi_exec(db, "BEGIN IMMEDIATE", "start a transaction");
    if (rc == RK_OK) {
        db->in_tx = 1;
        db->broken = 0;
    }
    return rc;
}

int db_commit(struct db *db)
{
    int rc;

    if (!db->in_tx)
        RK_BUG("db_commit without db_begin");
    db->in_tx = 0;
    if (sqlite3_get_autocommit(db->h))
        return rk_error(RK_EDB,
                        "cannot commit to database '%s': an earlier error rolled the transaction "
                        "back; run the command again",
                        db->path);
    if (db->broken) {
        db->broken = 0;
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
        return rk_error(RK_EDB,
                        "cannot commit to database '%s': a failed row could not be undone, so "
                        "nothing of this transaction was stored; run the command again",
                        db->path);
    }
    rc = dbi_exec(db, "COMMIT", "commit");
    if (rc != RK_OK && !sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int db_rollback(struct db *db)
{
    db->in_tx = 0;
    db->broken = 0;
    if (sqlite3_get_autocommit(db->h))
        return RK_OK;
    return dbi_exec(db, "ROLLBACK", "roll back");
}
