/*
 * db_fixture.h - what the db/ tests share (db_fixture.c): a temporary folder, fresh paths,
 * raw SQLite access beside db/, stderr capture, sample rows, and the cmocka main.
 */
#ifndef RK_TEST_DB_FIXTURE_H
#define RK_TEST_DB_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "db.h"

/* The test's temporary folder (fixture_main makes it, removes it when every case passed). */
extern char tmpdir[256];

/* A fresh path in the temporary folder: <stem>-<n>.db. */
const char *new_path(char *buf, size_t size, const char *stem);
int exists(const char *path);
/* Whether path with suffix ("-wal", "-shm", "-journal") exists. */
int side_exists(const char *path, const char *suffix);
/* The whole file, malloc'd; *size its length. */
unsigned char *slurp(const char *path, long *size);
void write_file(const char *path, const void *data, size_t n);
/* SQL through SQLite directly, bypassing db/. */
void raw_exec(const char *path, const char *sql);
long long raw_int(const char *path, const char *sql);
/* Captures stderr between the two calls; stderr_end returns what was written. */
void stderr_begin(void);
const char *stderr_end(void);
int count_lines(const char *s);
/* db_open refuses path in mode with a message holding needle; the file is unchanged. */
void expect_refused(const char *path, enum db_mode mode, const char *needle);
void open_rw(const char *path, struct db **db);
/* Rows with every field set, for the round trips. */
struct db_measurement sample_measurement(const char *kernel);
enum { NSAMPLE_METRICS = 5 };
extern const struct db_metric sample_metrics[NSAMPLE_METRICS];
struct db_device sample_device(const char *uuid);
struct db_ceiling sample_ceiling(const char *name, double value);
/* A small roofkit database with rows in several pages; closed. */
void make_roofkit_db(const char *path);

/*
 * Runs the cases with the temporary folder made first; before (may be NULL) runs before any
 * SQLite call (sqlite3_config). Returns the number of failed cases.
 */
int fixture_main(const struct CMUnitTest *tests, size_t n, void (*before)(void));

#endif /* RK_TEST_DB_FIXTURE_H */
