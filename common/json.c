/*
 * json.c - one growing string buffer, one JSON writer and one JSON reader for the flat objects
 * roofkit stores (probe parameters, kernel parameters, curves) and prints (--json, export).
 *
 * The reader is a small scanner, not a general parser: it walks the members of the top-level
 * object, skips every value that is not the one asked for (strings, nested objects and arrays
 * included, so a key inside them or a key that appears as a string value never matches), and
 * never reads past the terminating NUL, whatever the input (tests/fuzz feeds it).
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the buffer ---- */

/* Room for `extra` more bytes and a NUL; 0 (and oom set) when memory runs out. */
static int buf_reserve(struct rk_buf *b, size_t extra)
{
    if (b->oom)
        return 0;
    if (extra > SIZE_MAX - 1 - b->len) {
        b->oom = 1;
        return 0;
    }
    size_t need = b->len + extra + 1;
    if (b->s && need <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    if (!b->s)
        s[0] = '\0';
    b->s = s;
    b->cap = cap;
    return 1;
}

static void buf_add(struct rk_buf *b, const char *p, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void rk_buf_printf(struct rk_buf *b, const char *fmt, ...)
{
    if (!buf_reserve(b, 0))
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) { /* an encoding error: nothing sensible to append */
        b->s[b->len] = '\0';
        b->oom = 1;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (!buf_reserve(b, (size_t)n)) {
            if (b->s)
                b->s[b->len] = '\0';
            return;
        }
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void rk_buf_puts(struct rk_buf *b, const char *s)
{
    buf_add(b, s ? s : "", s ? strlen(s) : 0);
}

void rk_buf_release(struct rk_buf *b)
{
    free(b->s);
    *b = (struct rk_buf)RK_BUF_INIT;
}

/* ---- writing ---- */

void rk_json_str(struct rk_buf *b, const char *s)
{
    if (!s) {
        buf_add(b, "null", 4);
        return;
    }
    buf_add(b, "\"", 1);
    const char *run = s; /* bytes not yet copied that need no escape */
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c != '\0' && c != '"' && c != '\\' && c >= 0x20)
            continue;
        buf_add(b, run, (size_t)(p - run));
        if (c == '\0')
            break;
        run = p + 1;
        switch (c) {
        case '"':
            buf_add(b, "\\\"", 2);
            break;
        case '\\':
            buf_add(b, "\\\\", 2);
            break;
        case '\n':
            buf_add(b, "\\n", 2);
            break;
        case '\r':
            buf_add(b, "\\r", 2);
            break;
        case '\t':
            buf_add(b, "\\t", 2);
            break;
        default:
            rk_buf_printf(b, "\\u%04x", c);
            break;
        }
    }
    buf_add(b, "\"", 1);
}

void rk_json_num(struct rk_buf *b, double v)
{
    if (isfinite(v))
        rk_buf_printf(b, "%.17g", v);
    else
        buf_add(b, "null", 4);
}

void rk_json_key_num(struct rk_buf *b, const char *key, double v)
{
    rk_json_str(b, key);
    buf_add(b, ":", 1);
    rk_json_num(b, v);
}

void rk_json_key_str(struct rk_buf *b, const char *key, const char *s)
{
    rk_json_str(b, key);
    buf_add(b, ":", 1);
    rk_json_str(b, s);
}

/* ---- reading ---- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p at the opening quote: the byte after the closing quote, NULL if the string is unterminated. */
static const char *skip_string(const char *p)
{
    for (p++; *p != '"'; p++) {
        if (*p == '\0')
            return NULL;
        if (*p == '\\' && *++p == '\0')
            return NULL;
    }
    return p + 1;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return 0; /* a NUL stops here too, before p[i + 1] is read */
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/*
 * p at the opening quote of a member's name: compares it, escapes decoded, with key. Returns
 * the byte after the closing quote (NULL if malformed) and sets *match.
 */
static const char *scan_key(const char *p, const char *key, int *match)
{
    const unsigned char *k = (const unsigned char *)key;
    int same = 1;
    for (p++; *p != '"'; p++) {
        unsigned c = (unsigned char)*p;
        if (c == '\0')
            return NULL;
        if (c == '\\') {
            p++;
            switch (*p) {
            case '"':
            case '\\':
            case '/':
                c = (unsigned char)*p;
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            case 'u':
                if (!hex4(p + 1, &c))
                    return NULL;
                p += 4;
                if (c == 0 || c >= 0x80) /* roofkit's keys are ASCII */
                    same = 0;
                break;
            default:
                return NULL;
            }
        }
        if (same && *k == c)
            k++;
        else
            same = 0;
    }
    *match = same && *k == '\0';
    return p + 1;
}

static const char *skip_value(const char *p)
{
    if (*p == '"')
        return skip_string(p);
    if (*p == '{' || *p == '[') {
        long depth = 0;
        do {
            if (*p == '"') {
                p = skip_string(p);
                if (!p)
                    return NULL;
                continue;
            }
            if (*p == '\0')
                return NULL;
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']')
                depth--;
            p++;
        } while (depth > 0);
        return p;
    }
    /* a number, true, false or null */
    const char *start = p;
    while (*p != '\0' && !strchr(",}] \t\n\r", *p))
        p++;
    return p == start || *p == '\0' ? NULL : p;
}

/* The value of the top-level member `key` of the object json; NULL if absent or malformed. */
static const char *find_value(const char *json, const char *key)
{
    if (!json || !key)
        return NULL;
    const char *p = skip_ws(json);
    if (*p != '{')
        return NULL;
    p = skip_ws(p + 1);
    if (*p == '}')
        return NULL;
    for (;;) {
        if (*p != '"')
            return NULL;
        int match = 0;
        p = scan_key(p, key, &match);
        if (!p)
            return NULL;
        p = skip_ws(p);
        if (*p != ':')
            return NULL;
        p = skip_ws(p + 1);
        if (match)
            return p;
        p = skip_value(p);
        if (!p)
            return NULL;
        p = skip_ws(p);
        if (*p != ',')
            return NULL; /* '}': the end, the key is not there */
        p = skip_ws(p + 1);
    }
}

/*
 * A JSON number at p (RFC 8259's grammar: no '+', no leading zeros, no hex, inf or nan),
 * followed by whitespace or one of the bytes in `after`. Returns the byte after it, NULL if
 * none; *integral is 1 when it has no fraction and no exponent.
 */
static const char *scan_number(const char *p, const char *after, double *out, int *integral)
{
    const char *start = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    *integral = 1;
    if (*p == '.') {
        *integral = 0;
        if (!(*++p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        *integral = 0;
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    const char *end = p;
    p = skip_ws(p);
    if (*p == '\0' || !strchr(after, *p))
        return NULL; /* also a truncated input: "12" may have been "123" */
    char tmp[128];
    size_t n = (size_t)(end - start);
    if (n >= sizeof tmp)
        return NULL;
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL); /* overflow gives ±HUGE_VAL, as it should */
    return end;
}

int rk_json_number(const char *json, const char *key, double *out)
{
    const char *p = find_value(json, key);
    double v;
    int integral;
    if (!p || !scan_number(p, ",}", &v, &integral))
        return RK_ENODATA;
    *out = v;
    return RK_OK;
}

int rk_json_long(const char *json, const char *key, long *out)
{
    const char *p = find_value(json, key);
    double v;
    int integral;
    if (!p || !scan_number(p, ",}", &v, &integral) || !integral)
        return RK_ENODATA;
    errno = 0;
    long l = strtol(p, NULL, 10);
    if (errno == ERANGE)
        return RK_ENODATA;
    *out = l;
    return RK_OK;
}

int rk_json_pairs(const char *json, const char *key, double (*pairs)[2], int max)
{
    const char *p = find_value(json, key);
    if (!p || *p != '[')
        return 0;
    p = skip_ws(p + 1);
    int n = 0;
    if (*p == ']')
        return 0;
    for (;;) {
        double v[2];
        int integral;
        if (*p != '[')
            return 0;
        p = scan_number(skip_ws(p + 1), ",", &v[0], &integral);
        if (!p)
            return 0;
        p = skip_ws(p);
        p = scan_number(skip_ws(p + 1), "]", &v[1], &integral);
        if (!p)
            return 0;
        p = skip_ws(skip_ws(p) + 1);
        if (n < max) {
            pairs[n][0] = v[0];
            pairs[n][1] = v[1];
            n++;
        }
        if (*p == ']')
            return n;
        if (*p != ',')
            return 0;
        p = skip_ws(p + 1);
    }
}
