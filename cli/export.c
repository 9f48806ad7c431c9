/*
 * export.c - `roofkit export --format csv|json [--table NAME]`: one table of the
 * database on standard output, for other tools. The rows come from db/
 * (db_dump_table: every column, by rowid, REAL with 17 significant digits); this
 * file only prints them. CSV follows RFC 4180 with a header line (none for a table
 * with no rows: the names come with the rows); JSON is an array of objects, SQL NULL
 * (and an infinite REAL, which JSON cannot write) as null, numbers bare.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"
#include "db.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FMT_NONE, FMT_CSV, FMT_JSON };

struct dump {
    int format;
    long rows;
    FILE *to;
};

static void csv_field(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int print_row(int ncols, const char *const *names, const char *const *values,
                     const enum db_type *types, void *user)
{
    struct dump *d = user;
    if (d->format == FMT_CSV) {
        if (d->rows == 0) {
            for (int i = 0; i < ncols; i++) {
                if (i)
                    fputc(',', d->to);
                csv_field(d->to, names[i]);
            }
            fputs("\r\n", d->to);
        }
        for (int i = 0; i < ncols; i++) {
            if (i)
                fputc(',', d->to);
            csv_field(d->to, values[i]);
        }
        fputs("\r\n", d->to);
    } else {
        struct rk_buf b = RK_BUF_INIT;
        rk_buf_puts(&b, d->rows ? ",\n{" : "\n{");
        for (int i = 0; i < ncols; i++) {
            rk_buf_puts(&b, i ? "," : "");
            rk_json_str(&b, names[i]);
            rk_buf_puts(&b, ":");
            if (!values[i] || types[i] == DB_NULL)
                rk_buf_puts(&b, "null");
            else if (types[i] == DB_INTEGER)
                rk_buf_puts(&b, values[i]);
            else if (types[i] == DB_REAL) /* the same 17 digits; an infinity as null */
                rk_json_num(&b, strtod(values[i], NULL));
            else
                rk_json_str(&b, values[i]);
        }
        rk_buf_puts(&b, "}");
        const int oom = b.oom;
        if (!oom)
            fputs(b.s, d->to);
        rk_buf_release(&b);
        if (oom)
            return rk_error(RK_ENOMEM, "out of host memory");
    }
    d->rows++;
    return ferror(d->to) ? RK_EIO : 0;
}

int cmd_export(int argc, char **argv, struct rk_ctx *ctx)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"table", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    struct dump d = {FMT_NONE, 0, stdout};
    const char *table = "measurement";
    int c, rc, known = 0;
    rk_getopt_reset();
    while ((c = rk_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "csv") == 0)
                d.format = FMT_CSV;
            else if (strcmp(optarg, "json") == 0)
                d.format = FMT_JSON;
            else
                return rk_error(RK_EUSAGE, "option '--format' takes csv or json, not '%s'", optarg);
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
    if (d.format == FMT_NONE)
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
    if (d.format == FMT_JSON)
        fputc('[', stdout);
    rc = db_dump_table(ctx->db, table, print_row, &d);
    if (rc == RK_OK && d.format == FMT_JSON)
        fputs(d.rows ? "\n]\n" : "]\n", stdout);
    if (fflush(stdout) != 0 || ferror(stdout))
        return rk_error(RK_EIO, "cannot write the export to standard output");
    return rc;
}
