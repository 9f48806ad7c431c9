/*
 * import.c - db_import_sql: a new database file from SQL text, the form in which
 * examples/ keeps a real H100 database (`sqlite3 x.db .dump` plus the two pragmas
 * that mark it as roofkit's).
 *
 * The text is input, not code we trust: an authorizer lets it create tables and
 * indexes, insert rows, run transactions and set the few pragmas a dump holds,
 * and refuses everything else (ATTACH, which could write other files, first of
 * all). The result must then pass db_open's own validation and an integrity
 * check; a file that does not is removed, so a failure leaves nothing behind.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest SQL text accepted; the H100 example is a few MiB. */
#define IMPORT_MAX_BYTES (256l << 20)

static int allowed_pragma(const char *name)
{
    static const char *const ok[] = {"application_id", "user_version", "foreign_keys",
                                     "writable_schema"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (name && strcmp(name, ok[i]) == 0)
            return strcmp(name, "writable_schema") != 0; /* a dump of a plain db never needs it */
    return 0;
}

static int authorize(void *user, int action, const char *a, const char *b, const char *dbname,
                     const char *trigger)
{
    (void)user, (void)b, (void)trigger;
    if (dbname && strcmp(dbname, "main") != 0 && strcmp(dbname, "temp") != 0)
        return SQLITE_DENY;
    switch (action) {
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_INDEX:
    case SQLITE_REINDEX: /* CREATE INDEX fills the new index */
    case SQLITE_INSERT:
    case SQLITE_DELETE: /* DELETE FROM sqlite_sequence in dumps of AUTOINCREMENT tables */
    case SQLITE_UPDATE: /* the schema table while CREATE runs */
    case SQLITE_READ:   /* columns that CREATE INDEX and constraints read */
    /* No SQLITE_SELECT: a dump inserts VALUES only, and INSERT ... SELECT let a
     * few lines ("INSERT INTO t SELECT x FROM t" forty times) run for hours and fill
     * the disk before the result could be refused. */
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        return SQLITE_OK; /* scalar functions only: the library has no file functions */
    case SQLITE_PRAGMA:
        return allowed_pragma(a) ? SQLITE_OK : SQLITE_DENY;
    default:
        return SQLITE_DENY;
    }
}

static int read_text(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long size;
    if (!f)
        return rk_error(RK_EIO, "cannot read '%s': %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return rk_error(RK_EIO, "cannot read '%s': %s", path, strerror(errno));
    }
    if (size > IMPORT_MAX_BYTES) {
        fclose(f);
        return rk_error(RK_EUSAGE, "'%s' is %ld bytes, more than the %ld an example may hold", path,
                        size, IMPORT_MAX_BYTES);
    }
    buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return rk_error(RK_ENOMEM, "out of memory reading '%s'", path);
    }
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return rk_error(RK_EIO, "cannot read '%s': short read", path);
    }
    fclose(f);
    buf[size] = '\0';
    if (strlen(buf) != (size_t)size) {
        free(buf);
        return rk_error(RK_EUSAGE, "'%s' is not SQL text (it holds a NUL byte)", path);
    }
    *out = buf;
    return RK_OK;
}

int db_import_sql(const char *path, const char *sql_path)
{
    sqlite3 *h = NULL;
    char *sql = NULL, *err = NULL;
    struct db *db = NULL;
    int src, rc;

    if (!path || !*path || !sql_path || !*sql_path)
        return rk_error(RK_EUSAGE, "db_import_sql needs a database and an SQL file");
    if (access(path, F_OK) == 0)
        return rk_error(RK_EDB, "'%s' already exists; import only makes new databases", path);
    if ((rc = read_text(sql_path, &sql)) != RK_OK)
        return rc;

    src = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (src != SQLITE_OK) {
        rc = rk_error(RK_EDB, "cannot create '%s': %s", path,
                      h ? sqlite3_errmsg(h) : sqlite3_errstr(src));
        goto fail;
    }
    sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_set_authorizer(h, authorize, NULL);
    src = sqlite3_exec(h, sql, NULL, NULL, &err);
    if (src != SQLITE_OK) {
        rc = rk_error(RK_EDB, "cannot load '%s' into '%s': %s", sql_path, path,
                      err ? err : sqlite3_errstr(src));
        goto fail;
    }
    if (!sqlite3_get_autocommit(h)) {
        rc = rk_error(RK_EDB, "cannot load '%s': its transaction is never committed", sql_path);
        goto fail;
    }
    src = sqlite3_close(h);
    h = NULL;
    if (src != SQLITE_OK) {
        rc = rk_error(RK_EDB, "cannot finish '%s': %s", path, sqlite3_errstr(src));
        goto fail;
    }
    /* Now it must be a roofkit database of this schema, whole. */
    if ((rc = db_open(path, DB_RO, &db)) != RK_OK || (rc = db_check(db)) != RK_OK)
        goto fail;
    db_close(db);
    free(sql);
    return RK_OK;

fail:
    sqlite3_free(err);
    if (h)
        sqlite3_close(h);
    if (db)
        db_close(db);
    free(sql);
    unlink(path);
    return rc;
}
