/*
 * export.c - `roofkit export --format csv|json|text [--table NAME]`: one table of the
 * database on standard output, for other tools. The rows come from db/ (db_dump_table:
 * every column, by rowid; db_dump_columns: the names, so that an empty table still has its
 * CSV header); format.c's table writer prints them: CSV per RFC 4180 with a header line
 * always, JSON an array of objects with SQL NULL (and an infinite REAL, which JSON cannot
 * write) as null, integers and reals as bare numbers (reals the shortest text that reads
 * back as the stored double), text as strings.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dump {
    enum rk_format format;
    struct rk_table *t;
};

/* db_dump_columns: the table's columns, then the rows. */
static int open_table(int ncols, const char *const *names, const char *const *values,
                      const enum db_type *types, void *user)
{
    struct dump *d = user;
    struct rk_col *cols = calloc((size_t)ncols, sizeof *cols);
    int rc;
    (void)values;
    (void)types;
    if (!cols)
        return rk_error(RK_ENOMEM, "out of host memory");
    for (int i = 0; i < ncols; i++)
        cols[i] = (struct rk_col){names[i], RK_COL_TEXT, -1};
    rc = rk_table_new(d->format, stdout, cols, ncols, &d->t);
    free(cols);
    return rc;
}

static int add_row(int ncols, const char *const *names, const char *const *values,
                   const enum db_type *types, void *user)
{
    struct dump *d = user;
    int rc = rk_table_row(d->t);
    (void)names;
    for (int i = 0; i < ncols && rc == RK_OK; i++) {
        if (!values[i] || types[i] == DB_NULL)
            rk_table_null(d->t);
        else if (types[i] == DB_INTEGER)
            rk_table_int(d->t, strtoll(values[i], NULL, 10));
        else if (types[i] == DB_REAL) /* 17 digits: the same double */
            rk_table_real(d->t, strtod(values[i], NULL));
        else
            rk_table_str(d->t, values[i]);
    }
    return rc;
}

int cmd_export(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"table", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    struct dump d = {RK_FMT_CSV, NULL};
    const char *table = "measurement";
    int c, rc, known = 0, have_format = 0;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'f':
            if (rk_parse_format(optarg, &d.format) != RK_OK)
                return RK_EUSAGE;
            have_format = 1;
            break;
        case 't':
            table = optarg;
            break;
        default:
            return RK_EUSAGE;
        }
    }
    if (optind < argc)
        return rk_error(RK_EUSAGE, "unexpected argument '%s'; see 'roofkit help export'",
                        argv[optind]);
    if (!have_format)
        return rk_error(RK_EUSAGE, "export needs --format csv or --format json");
    for (int i = 0; db_table_name(i); i++)
        known |= strcmp(db_table_name(i), table) == 0;
    if (!known) {
        char list[512] = "";
        for (int i = 0; db_table_name(i); i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     db_table_name(i));
        return rk_error(RK_EUSAGE, "no table named '%s'; --table takes one of %s", table, list);
    }
    if ((rc = rk_ctx_open_db(ctx, 0)) != RK_OK)
        return rc;
    if ((rc = db_dump_columns(ctx->db, table, open_table, &d)) == RK_OK)
        rc = db_dump_table(ctx->db, table, add_row, &d);
    return rk_table_done(d.t, rc);
}
