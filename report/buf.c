/*
 * buf.c - the report's text plumbing: a growable buffer, number formatting for
 * people and for machines, and the table model that the HTML, Markdown and CSV
 * printers share (one result model, several printers: nvbandwidth's output.h).
 *
 * Assumes: single-threaded use; an allocation failure is remembered in the buffer
 * (oom) and reported once by whoever uses it, so appends need no error checks.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int buf_reserve(struct rp_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void rp_buf_add(struct rp_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void rp_buf_puts(struct rp_buf *b, const char *s)
{
    rp_buf_add(b, s, strlen(s));
}

void rp_buf_printf(struct rp_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        rp_buf_add(b, small, (size_t)n);
        return;
    }
    if (buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void html_escape(struct rp_buf *b, const char *s, int quotes)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            if (!quotes)
                continue;
            rep = "&quot;";
            break;
        default:
            continue;
        }
        rp_buf_add(b, run, (size_t)(s - run));
        rp_buf_puts(b, rep);
        run = s + 1;
    }
    rp_buf_add(b, run, (size_t)(s - run));
}

void rp_buf_html(struct rp_buf *b, const char *s)
{
    html_escape(b, s, 1);
}

void rp_buf_html_text(struct rp_buf *b, const char *s)
{
    html_escape(b, s, 0);
}

void rp_buf_free(struct rp_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

const char *rp_fmt_num(char *buf, double v)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return buf;
    }
    double a = fabs(v);
    if (a != 0.0 && (a >= 1e7 || a < 1e-3))
        snprintf(buf, 32, "%.4g", v);
    else if (a >= 1000.0)
        snprintf(buf, 32, "%.0f", v);
    else
        snprintf(buf, 32, "%.4g", v);
    return buf;
}

const char *rp_fmt_exact(char *buf, double v)
{
    if (!isfinite(v))
        buf[0] = '\0';
    else
        snprintf(buf, 32, "%.17g", v);
    return buf;
}

/* ------------------------------------------------------------------ tables */

void rp_table_init(struct rp_table *t, const char *id, const char *title, int section)
{
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "%s", id);
    snprintf(t->title, sizeof t->title, "%s", title);
    t->section = section;
}

/* Stores s in the table's text; returns its offset. */
static size_t table_str(struct rp_table *t, const char *s)
{
    size_t off = t->text.len;
    rp_buf_add(&t->text, s, strlen(s) + 1); /* keep the NUL: strings are back to back */
    if (t->text.oom)
        t->oom = 1;
    return off;
}

void rp_table_col(struct rp_table *t, const char *name)
{
    size_t *p = realloc(t->colname, (size_t)(t->ncols + 1) * sizeof *p);
    if (!p) {
        t->oom = 1;
        return;
    }
    t->colname = p;
    t->colname[t->ncols++] = table_str(t, name);
}

/* Appends one cell given both texts; the row is complete after ncols cells. */
static void cell2(struct rp_table *t, const char *human, const char *csv)
{
    if (t->oom || t->ncols == 0)
        return;
    size_t pos = 2 * ((size_t)t->nrows * (size_t)t->ncols + (size_t)t->pending);
    if (pos + 2 > t->capcells) {
        size_t cap = t->capcells ? 2 * t->capcells : 64 * (size_t)t->ncols;
        size_t *p = realloc(t->cells, cap * sizeof *p);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->cells = p;
        t->capcells = cap;
    }
    t->cells[pos] = table_str(t, human);
    t->cells[pos + 1] = strcmp(human, csv) ? table_str(t, csv) : t->cells[pos];
    if (++t->pending == t->ncols) {
        t->pending = 0;
        t->nrows++;
    }
}

void rp_cell_two(struct rp_table *t, const char *human, const char *csv)
{
    cell2(t, human, csv);
}

void rp_cell_str(struct rp_table *t, const char *s)
{
    cell2(t, s ? s : "", s ? s : "");
}

void rp_cell_num(struct rp_table *t, double v)
{
    char h[32], m[32];
    cell2(t, rp_fmt_num(h, v), rp_fmt_exact(m, v));
}

void rp_cell_int(struct rp_table *t, long long v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", v);
    cell2(t, s, s);
}

void rp_cell_attr(struct rp_table *t, const char *cls, const char *style)
{
    if (t->oom || t->ncols == 0 || (t->nrows == 0 && t->pending == 0))
        return;
    /* the cell appended last */
    size_t cell = (size_t)t->nrows * (size_t)t->ncols + (size_t)t->pending - 1;
    if (2 * cell + 2 > t->nattr) {
        size_t n = 2 * ((size_t)t->nrows + 1) * (size_t)t->ncols;
        size_t *p = realloc(t->attr, n * sizeof *p);
        if (!p) {
            t->oom = 1;
            return;
        }
        memset(p + t->nattr, 0, (n - t->nattr) * sizeof *p);
        t->attr = p;
        t->nattr = n;
    }
    if (cls)
        t->attr[2 * cell] = table_str(t, cls) + 1;
    if (style)
        t->attr[2 * cell + 1] = table_str(t, style) + 1;
}

/* Grows *v (of *n entries, zero-filled) to hold index i. */
static int grow_offsets(size_t **v, size_t *n, size_t i)
{
    if (i < *n)
        return 0;
    size_t cap = *n ? 2 * *n : 64;
    while (cap <= i)
        cap *= 2;
    size_t *p = realloc(*v, cap * sizeof *p);
    if (!p)
        return -1;
    memset(p + *n, 0, (cap - *n) * sizeof *p);
    *v = p;
    *n = cap;
    return 0;
}

void rp_row_id(struct rp_table *t, const char *id)
{
    size_t n = (size_t)t->nrowid;
    if (t->oom || grow_offsets(&t->rowid, &n, (size_t)t->nrows)) {
        t->oom = 1;
        return;
    }
    t->nrowid = (int)n;
    t->rowid[t->nrows] = table_str(t, id) + 1;
}

void rp_cell_link(struct rp_table *t, const char *href)
{
    if (t->oom || t->ncols == 0 || (t->nrows == 0 && t->pending == 0))
        return;
    size_t cell = (size_t)t->nrows * (size_t)t->ncols + (size_t)t->pending - 1;
    if (grow_offsets(&t->link, &t->nlink, cell)) {
        t->oom = 1;
        return;
    }
    t->link[cell] = table_str(t, href) + 1;
}

const char *rp_table_rowid(const struct rp_table *t, int r)
{
    return r < t->nrowid && t->rowid[r] ? t->text.p + t->rowid[r] - 1 : NULL;
}

const char *rp_table_link(const struct rp_table *t, int r, int c)
{
    size_t i = (size_t)r * (size_t)t->ncols + (size_t)c;
    return i < t->nlink && t->link[i] ? t->text.p + t->link[i] - 1 : NULL;
}

void rp_table_item(struct rp_table *t, const char *line)
{
    size_t *p = realloc(t->items, (size_t)(t->nitems + 1) * sizeof *p);
    if (!p) {
        t->oom = 1;
        return;
    }
    t->items = p;
    t->items[t->nitems++] = table_str(t, line);
}

const char *rp_table_itemtxt(const struct rp_table *t, int i)
{
    return t->text.p + t->items[i];
}

/* Attribute k (0 class, 1 style) of a cell, or NULL. */
static const char *cell_attr(const struct rp_table *t, int r, int c, int k)
{
    size_t i = 2 * ((size_t)r * (size_t)t->ncols + (size_t)c) + (size_t)k;
    return i < t->nattr && t->attr[i] ? t->text.p + t->attr[i] - 1 : NULL;
}

const char *rp_table_cls(const struct rp_table *t, int r, int c)
{
    return cell_attr(t, r, c, 0);
}

const char *rp_table_style(const struct rp_table *t, int r, int c)
{
    return cell_attr(t, r, c, 1);
}

const char *rp_table_colname(const struct rp_table *t, int c)
{
    return t->text.p + t->colname[c];
}

const char *rp_table_txt(const struct rp_table *t, int r, int c)
{
    return t->text.p + t->cells[2 * ((size_t)r * (size_t)t->ncols + (size_t)c)];
}

const char *rp_table_csv(const struct rp_table *t, int r, int c)
{
    return t->text.p + t->cells[2 * ((size_t)r * (size_t)t->ncols + (size_t)c) + 1];
}

void rp_table_release(struct rp_table *t)
{
    free(t->colname);
    free(t->cells);
    free(t->attr);
    free(t->rowid);
    free(t->link);
    free(t->items);
    rp_buf_free(&t->text);
    memset(t, 0, sizeof *t);
}

void rp_free_tables(struct rp_table *t, int n)
{
    for (int i = 0; i < n; i++)
        rp_table_release(&t[i]);
    free(t);
}
