/*
 * format.c - the one table writer of cli/: what a command prints as data (a listing, the
 * ceilings of a probe, the measurements of a run, the model's summary, an exported table)
 * is a table of named, typed columns written as aligned text for a person, or as RFC 4180
 * CSV or strict JSON for a program, so that no command carries printers of its own
 * (nvbandwidth's "one result model, two printers").
 *
 * Invariants:
 *   - CSV: CRLF line ends, a header line always (an empty table is its header), a field
 *     quoted when it holds a comma, a quote, CR or LF (quotes doubled); a missing value is
 *     an empty field.
 *   - JSON: an array of objects, one object a line, keys in column order; strings through
 *     common's rk_json_str; a missing value, NaN and the infinities are null, so that every
 *     strict parser reads it.
 *   - Reals in CSV and JSON are the shortest text that reads back as the same double; the
 *     column's precision is for text only.
 *   - CSV and JSON rows are written as each row is complete (an export of a large table
 *     never sits in memory); text keeps every row until rk_table_end, to align the columns.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cell_kind { CELL_NONE, CELL_STR, CELL_INT, CELL_REAL };

struct cell {
    enum cell_kind kind;
    union {
        char *s;
        int64_t i;
        double r;
    } v;
};

struct rk_table {
    enum rk_format fmt;
    FILE *to;
    struct rk_col *cols; /* copies, names included */
    int ncols;
    struct cell *cells; /* text: every row; CSV/JSON: the current row only */
    size_t nrows, cap;  /* rows held in cells */
    int col;            /* the next cell of the current row; -1 before the first row */
    long written;       /* CSV/JSON rows written */
    int started;        /* CSV header / JSON '[' written */
    int oom;
};

static const char *const format_names[] = {"text", "csv", "json"};

int rk_parse_format(const char *s, enum rk_format *out)
{
    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, format_names[i]) == 0) {
            *out = (enum rk_format)i;
            return RK_OK;
        }
    return rk_error(RK_EUSAGE, "option '--format' takes text, csv or json, not '%s'", s ? s : "");
}

const char *rk_format_name(enum rk_format f)
{
    return (unsigned)f < 3 ? format_names[f] : "?";
}

int rk_table_new(enum rk_format fmt, FILE *to, const struct rk_col *cols, int ncols,
                 struct rk_table **out)
{
    struct rk_table *t = calloc(1, sizeof *t);
    *out = NULL;
    if (ncols < 1 || (unsigned)fmt > RK_FMT_JSON)
        RK_BUG("rk_table_new: no columns or an unknown format");
    if (!t || !(t->cols = calloc((size_t)ncols, sizeof *t->cols))) {
        free(t);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    t->fmt = fmt;
    t->to = to;
    t->ncols = ncols;
    t->col = -1;
    for (int i = 0; i < ncols; i++) {
        t->cols[i] = cols[i];
        if (!(t->cols[i].name = strdup(cols[i].name ? cols[i].name : ""))) {
            rk_table_free(t);
            return rk_error(RK_ENOMEM, "out of host memory");
        }
    }
    *out = t;
    return RK_OK;
}

static void cells_release(struct cell *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].kind == CELL_STR)
            free(c[i].v.s);
}

void rk_table_free(struct rk_table *t)
{
    if (!t)
        return;
    cells_release(t->cells, t->nrows * (size_t)t->ncols);
    for (int i = 0; i < t->ncols; i++)
        free((char *)t->cols[i].name);
    free(t->cols);
    free(t->cells);
    free(t);
}

/* ---- numbers as text ---- */

/* The shortest %.Ng (N = 15..17) that reads back as v; v finite. */
static void real_exact(char *out, size_t len, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, len, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* A cell as CSV/text shows it (not quoted); "" when missing. `text`: the column's precision. */
static void cell_text(const struct cell *c, const struct rk_col *col, int text, char *out,
                      size_t len)
{
    out[0] = '\0';
    switch (c->kind) {
    case CELL_INT:
        snprintf(out, len, "%" PRId64, c->v.i);
        break;
    case CELL_REAL:
        if (!isfinite(c->v.r))
            break;
        if (!text)
            real_exact(out, len, c->v.r);
        else if (col->prec >= 0)
            snprintf(out, len, "%.*f", col->prec, c->v.r);
        else
            snprintf(out, len, "%g", c->v.r);
        break;
    default:
        break;
    }
}

/* ---- CSV and JSON, a row at a time ---- */

static void csv_field(struct rk_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        rk_buf_puts(b, s);
        return;
    }
    rk_buf_puts(b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            rk_buf_puts(b, "\"\"");
        else
            rk_buf_printf(b, "%c", *p);
    }
    rk_buf_puts(b, "\"");
}

/* The current row (t->cells[0..ncols)) appended to b as one CSV line or JSON object. */
static void row_out(const struct rk_table *t, struct rk_buf *b)
{
    char num[64];
    if (t->fmt == RK_FMT_JSON)
        rk_buf_puts(b, t->written ? ",\n{" : "\n{");
    for (int i = 0; i < t->ncols; i++) {
        const struct cell *c = &t->cells[i];
        if (t->fmt == RK_FMT_CSV) {
            rk_buf_puts(b, i ? "," : "");
            if (c->kind == CELL_STR) {
                csv_field(b, c->v.s);
            } else {
                cell_text(c, &t->cols[i], 0, num, sizeof num);
                rk_buf_puts(b, num);
            }
            continue;
        }
        rk_buf_puts(b, i ? "," : "");
        rk_json_str(b, t->cols[i].name);
        rk_buf_puts(b, ":");
        if (c->kind == CELL_STR) {
            rk_json_str(b, c->v.s);
        } else {
            cell_text(c, &t->cols[i], 0, num, sizeof num);
            rk_buf_puts(b, num[0] ? num : "null"); /* missing, NaN, infinite: null */
        }
    }
    rk_buf_puts(b, t->fmt == RK_FMT_CSV ? "\r\n" : "}");
}

/* The CSV header or the JSON '[' once, before the first row or at the end. */
static void start_out(struct rk_table *t, struct rk_buf *b)
{
    if (t->started)
        return;
    t->started = 1;
    if (t->fmt == RK_FMT_JSON) {
        rk_buf_puts(b, "[");
        return;
    }
    for (int i = 0; i < t->ncols; i++) {
        rk_buf_puts(b, i ? "," : "");
        csv_field(b, t->cols[i].name);
    }
    rk_buf_puts(b, "\r\n");
}

/* Writes b to the table's file; RK_OK, or RK_ENOMEM / RK_EIO printed. */
static int put_buf(struct rk_table *t, struct rk_buf *b)
{
    int rc = RK_OK;
    if (b->oom || t->oom)
        rc = rk_error(RK_ENOMEM, "out of host memory");
    else if (b->s && fputs(b->s, t->to) == EOF)
        rc = rk_error(RK_EIO, "cannot write the output: %s; check the disk or the pipe",
                      strerror(errno));
    rk_buf_release(b);
    return rc;
}

/* Ends the current row: CSV/JSON write it and forget it; text keeps it. */
static int row_close(struct rk_table *t)
{
    struct rk_buf b = RK_BUF_INIT;
    if (t->col < 0)
        return RK_OK;
    t->col = -1;
    if (t->fmt == RK_FMT_TEXT)
        return RK_OK;
    start_out(t, &b);
    row_out(t, &b);
    cells_release(t->cells, (size_t)t->ncols);
    memset(t->cells, 0, (size_t)t->ncols * sizeof *t->cells);
    t->nrows = 0;
    t->written++;
    return put_buf(t, &b);
}

int rk_table_row(struct rk_table *t)
{
    int rc = row_close(t);
    if (rc != RK_OK)
        return rc;
    if (t->oom)
        return rk_error(RK_ENOMEM, "out of host memory");
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct cell *c = realloc(t->cells, cap * (size_t)t->ncols * sizeof *c);
        if (!c) {
            t->oom = 1;
            return rk_error(RK_ENOMEM, "out of host memory");
        }
        t->cells = c;
        t->cap = cap;
    }
    memset(&t->cells[t->nrows * (size_t)t->ncols], 0, (size_t)t->ncols * sizeof *t->cells);
    t->nrows++;
    t->col = 0;
    return RK_OK;
}

/* The next cell of the current row; NULL (oom set) after an allocation failure. */
static struct cell *next_cell(struct rk_table *t)
{
    if (t->col < 0 || t->col >= t->ncols)
        RK_BUG("a table cell outside a row, or more cells than columns");
    if (t->oom)
        return NULL;
    return &t->cells[(t->nrows - 1) * (size_t)t->ncols + (size_t)t->col++];
}

void rk_table_str(struct rk_table *t, const char *s)
{
    struct cell *c = next_cell(t);
    if (!c || !s)
        return;
    if (!(c->v.s = strdup(s))) {
        t->oom = 1;
        return;
    }
    c->kind = CELL_STR;
}

void rk_table_int(struct rk_table *t, int64_t v)
{
    struct cell *c = next_cell(t);
    if (c) {
        c->kind = CELL_INT;
        c->v.i = v;
    }
}

void rk_table_real(struct rk_table *t, double v)
{
    struct cell *c = next_cell(t);
    if (c) {
        c->kind = CELL_REAL;
        c->v.r = v;
    }
}

void rk_table_null(struct rk_table *t)
{
    next_cell(t);
}

/* ---- text: every row, aligned ---- */

/* A text cell: strings as they are, numbers with the column's precision, missing as "-". */
static const char *text_of(const struct rk_table *t, const struct cell *c, int col, char *num,
                           size_t len)
{
    if (c->kind == CELL_STR)
        return c->v.s;
    cell_text(c, &t->cols[col], 1, num, len);
    return num[0] ? num : "-";
}

static void text_out(const struct rk_table *t, struct rk_buf *b)
{
    size_t *w = calloc((size_t)t->ncols, sizeof *w);
    char num[64];
    if (!w) {
        b->oom = 1;
        return;
    }
    for (int i = 0; i < t->ncols; i++) {
        w[i] = strlen(t->cols[i].name);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t n =
                strlen(text_of(t, &t->cells[r * (size_t)t->ncols + (size_t)i], i, num, sizeof num));
            w[i] = n > w[i] ? n : w[i];
        }
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        struct rk_buf line = RK_BUF_INIT;
        for (int i = 0; i < t->ncols; i++) {
            const char *s = r == 0 ? t->cols[i].name
                                   : text_of(t, &t->cells[(r - 1) * (size_t)t->ncols + (size_t)i],
                                             i, num, sizeof num);
            int right = t->cols[i].kind != RK_COL_TEXT;
            rk_buf_printf(&line, right ? "%s%*s" : "%s%-*s", i ? "  " : "", (int)w[i], s);
        }
        while (line.len && line.s[line.len - 1] == ' ') /* no trailing blanks */
            line.s[--line.len] = '\0';
        rk_buf_puts(&line, "\n");
        rk_buf_puts(b, line.s);
        b->oom |= line.oom;
        rk_buf_release(&line);
    }
    free(w);
}

int rk_table_end(struct rk_table *t)
{
    struct rk_buf b = RK_BUF_INIT;
    int rc = row_close(t);
    if (rc == RK_OK) {
        if (t->fmt == RK_FMT_TEXT) {
            text_out(t, &b);
        } else {
            start_out(t, &b);
            if (t->fmt == RK_FMT_JSON)
                rk_buf_puts(&b, t->written ? "\n]\n" : "]\n");
        }
        rc = put_buf(t, &b);
    }
    if (rc == RK_OK && (fflush(t->to) != 0 || ferror(t->to)))
        rc = rk_error(RK_EIO, "cannot write the output: %s; check the disk or the pipe",
                      strerror(errno));
    rk_table_free(t);
    return rc;
}

int rk_table_done(struct rk_table *t, int rc)
{
    if (rc == RK_OK)
        return t ? rk_table_end(t) : RK_OK;
    rk_table_free(t);
    return rc;
}

int rk_take_format(int *argc, char **argv, enum rk_format *fmt)
{
    int out = 1, i;
    *fmt = RK_FMT_TEXT;
    for (i = 1; i < *argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--") == 0)
            break;
        if (strcmp(a, "--format") != 0 && strncmp(a, "--format=", 9) != 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (a[8] == '=')
            val = a + 9;
        else if (i + 1 < *argc)
            val = argv[++i];
        else
            return rk_error(RK_EUSAGE, "option '--format' needs a value: text, csv or json");
        if (rk_parse_format(val, fmt) != RK_OK)
            return RK_EUSAGE;
    }
    for (; i < *argc; i++)
        argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    return RK_OK;
}
