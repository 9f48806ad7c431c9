/*
 * internal.h - what the files of db/ share and nothing outside db/ may include
 * (tests/db/ does, for fault injection on the connection): the connection struct,
 * SQLite error reporting, and the row-transaction helpers.
 *
 * The files: open.c (validation before any write, pragmas, migrations, explicit
 * transactions, errors), schema.c (the migration steps), write.c (typed inserts),
 * read.c (typed queries and the table dump), merge.c (one database from many).
 */
#ifndef RK_DB_INTERNAL_H
#define RK_DB_INTERNAL_H

#include "db.h"

#include <sqlite3.h>

struct db {
    sqlite3 *h;              /* the connection */
    char *path;              /* as given to db_open, for messages */
    int readonly;            /* opened DB_RO: PRAGMA query_only is on */
    int in_tx;               /* between db_begin and db_commit/db_rollback */
    int broken;              /* a failed row inside db_begin could not be undone: commit refuses */
    struct db_origin origin; /* stored with each capture begun; host malloc'd */
};

/* Migration step i takes user_version i to i + 1 (schema.c). */
extern const char *const dbi_migrations[];
extern const int dbi_nmigrations;

/*
 * Prints one message for SQLite result code `src` met while doing `what` ("store a
 * measurement"), naming the file and SQLite's message, and returns RK_EDB.
 * SQLITE_BUSY gives "database 'x' is locked by another process; ...".
 */
int dbi_error(struct db *db, int src, const char *what);

/* sqlite3_exec of constant SQL; RK_OK or dbi_error(..., what). */
int dbi_exec(struct db *db, const char *sql, const char *what);

/* sqlite3_prepare_v2 of constant SQL; RK_OK or dbi_error(..., what). */
int dbi_prepare(struct db *db, const char *sql, sqlite3_stmt **st /* OUT */, const char *what);

/*
 * A row transaction: dbi_tx_begin starts BEGIN IMMEDIATE, or a savepoint when the
 * caller already holds a transaction (db_begin); *nested says which. dbi_tx_end
 * commits when rc is RK_OK, else (or when the commit fails) rolls back, and returns
 * the final code. Together they make "everything of this row or nothing".
 */
int dbi_tx_begin(struct db *db, int *nested /* OUT */, const char *what);
int dbi_tx_end(struct db *db, int nested, int rc, const char *what);

/* Refuses writes on a DB_RO connection (a programmer error: RK_BUG). */
void dbi_need_rw(const struct db *db, const char *fn);

#endif /* RK_DB_INTERNAL_H */
