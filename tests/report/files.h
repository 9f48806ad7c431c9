/*
 * files.h - reading back what a report wrote, for the report's tests (test_report.c,
 * test_report_gpus.c): the helpers both use, so that each checks the same way.
 */
#ifndef RK_TEST_REPORT_FILES_H
#define RK_TEST_REPORT_FILES_H

#include <stddef.h>

/* The whole file at p, NUL-terminated (malloc'd; *len its length when len is not NULL), or
 * NULL when it cannot be read. */
char *slurp(const char *p, size_t *len);
/* Is dir/rel a regular file that is not empty? */
int exists(const char *dir, const char *rel);
/* Is text well-formed XML (the error printed when not)? */
int xml_ok(const char *text, size_t len);

/* A CSV file read whole: rows of fields, row 0 the header. */
struct csv {
    int nrows, ncols;
    char **f; /* nrows * ncols */
};

/* Reads the CSV file p into c: 0, or -1 when it cannot be read or its rows differ in width. */
int csv_read(const char *p, struct csv *c);
/* The cell of column col in row r; fails the test when there is no such column. */
const char *csv_get(const struct csv *c, int r, const char *col);
/* The cell of column col in row r, or NULL when the table has no such column. */
const char *csv_opt(const struct csv *c, int r, const char *col);
void csv_free(struct csv *c);

/* The SVGs inlined in a page, each checked to be well-formed XML: their number, or -1 when one
 * is not well-formed or not closed. */
int inlined_svgs(const char *html);

/* Files in dir whose names end in suffix. */
int count_files(const char *dir, const char *suffix);
/* Occurrences of needle in hay. */
int count_str(const char *hay, const char *needle);

#endif
