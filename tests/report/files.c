/*
 * files.c - reading back what a report wrote, for the report's tests (files.h): whole files,
 * XML well-formedness (expat), the CSV tables (a small RFC 4180 reader) and counting.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"

char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = (size_t)n;
    fclose(f);
    return buf;
}

int exists(const char *dir, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int xml_ok(const char *text, size_t len)
{
    XML_Parser p = XML_ParserCreate(NULL);
    int ok = XML_Parse(p, text, (int)len, 1) == XML_STATUS_OK;
    if (!ok)
        fprintf(stderr, "xml error: %s at line %lu\n", XML_ErrorString(XML_GetErrorCode(p)),
                (unsigned long)XML_GetCurrentLineNumber(p));
    XML_ParserFree(p);
    return ok;
}

int csv_read(const char *p, struct csv *c)
{
    size_t len;
    char *t = slurp(p, &len), *s;
    int cap = 0, n = 0, cols = 0, row_cols = 0;
    memset(c, 0, sizeof *c);
    if (!t)
        return -1;
    c->f = NULL;
    s = t;
    while (*s) {
        char *field = malloc(len + 1);
        size_t k = 0;
        if (*s == '"') {
            s++;
            for (;;) {
                if (*s == '"' && s[1] == '"') {
                    field[k++] = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    field[k++] = *s++;
                }
            }
        } else {
            while (*s && *s != ',' && *s != '\r' && *s != '\n')
                field[k++] = *s++;
        }
        field[k] = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            c->f = realloc(c->f, (size_t)cap * sizeof *c->f);
        }
        c->f[n++] = field;
        row_cols++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n')
            s++;
        if (cols == 0)
            cols = row_cols;
        if (row_cols != cols) {
            free(t);
            return -1;
        }
        row_cols = 0;
    }
    free(t);
    c->ncols = cols;
    c->nrows = cols ? n / cols : 0;
    return 0;
}

const char *csv_get(const struct csv *c, int r, const char *col)
{
    for (int j = 0; j < c->ncols; j++)
        if (strcmp(c->f[j], col) == 0)
            return c->f[r * c->ncols + j];
    fail_msg("no column '%s'", col);
    return NULL;
}

void csv_free(struct csv *c)
{
    for (int i = 0; i < c->nrows * c->ncols; i++)
        free(c->f[i]);
    free(c->f);
}

int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        n += l > s && strcmp(e->d_name + l - s, suffix) == 0;
    }
    closedir(d);
    return n;
}

int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The cell of column col in row r, or NULL when the table has no such column. */
const char *csv_opt(const struct csv *c, int r, const char *col)
{
    for (int j = 0; j < c->ncols; j++)
        if (strcmp(c->f[j], col) == 0)
            return c->f[r * c->ncols + j];
    return NULL;
}

int inlined_svgs(const char *html)
{
    int n = 0;
    for (const char *s = strstr(html, "<svg"); s; s = strstr(s + 1, "<svg")) {
        const char *end = strstr(s, "</svg>");
        if (!end || !xml_ok(s, (size_t)(end + 6 - s)))
            return -1;
        n++;
    }
    return n;
}
