/*
 * fuzz_import_sql.c - SQL text loaded as a database (db_import_sql, db/import.c: how
 * `roofkit all` turns examples/h100.sql into a database without a GPU). The input is
 * written to a file and imported into a new database in a private temporary folder
 * (TMPDIR, best on a tmpfs such as /dev/shm); the database is removed after each input.
 *
 * Properties: a failed import leaves no file behind (db_import_sql's contract); a
 * successful one opens read-only and passes db_check; nothing outside the folder is
 * created (the authorizer refuses ATTACH and VACUUM INTO; the folder is checked).
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include "common.h"
#include "db.h"

#include <dirent.h>
#include <unistd.h>

static char dir[512], sql_path[600], out_path[600];

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rk-fuzz-sql-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_import_sql: mkdtemp");
        abort();
    }
    snprintf(sql_path, sizeof sql_path, "%s/in.sql", dir);
    snprintf(out_path, sizeof out_path, "%s/out.db", dir);
}

/* Number of entries in the folder besides in.sql. */
static int others(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    FUZZ_CHECK(d != NULL);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "in.sql"))
            n++;
    closedir(d);
    return n;
}

static void cleanup(void)
{
    unlink(out_path);
    unlink(sql_path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f;
    int rc;
    if (!dir[0]) {
        setup();
        atexit(cleanup);
    }
    f = fopen(sql_path, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(fwrite(data, 1, size, f) == size || size == 0);
    fclose(f);
    rc = db_import_sql(out_path, sql_path);
    if (rc == RK_OK) {
        struct db *db = NULL;
        FUZZ_CHECK(db_open(out_path, DB_RO, &db) == RK_OK);
        FUZZ_CHECK(db_check(db) == RK_OK);
        db_close(db);
        unlink(out_path);
        FUZZ_CHECK(others() == 0);
    } else {
        FUZZ_CHECK(others() == 0);
    }
    return 0;
}
