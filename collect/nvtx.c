/*
 * nvtx.c - NVTX ranges for `roofkit profile --nvtx`: which ranges a launch runs in (the stored
 * path), and whether Nsight Compute's --nvtx-include / --nvtx-exclude expressions select it.
 *
 * How the ranges are known: the injection library is also the program's NVTX tool.
 * `roofkit profile --nvtx` points NVTX_INJECTION64_PATH at libroofkit-inject.so; the NVTX
 * headers the program was built with (NVTX3 is header-only) load it at the program's first NVTX
 * call, before or after cuInit, and call its InitializeInjectionNvtx2 (inject.c) with their
 * export table, which collect_nvtx_attach fills with the handlers below. So every push, pop,
 * start and end reaches this file from the program's own thread, from the first one on, without
 * CUPTI (whose NVTX callbacks need libcupti itself as the NVTX tool, loaded before our CUPTI
 * subscriber exists). Several NVTX copies in one process (a program and a library each with
 * NVTX3 compiled in) each attach; they all share this state.
 *
 * State (nvtxTypes.h / nvToolsExt.h semantics):
 *   - push/pop ranges: a stack per thread and per domain; a pop ends the innermost range of
 *     its domain on its thread. Kept per thread as one list in push order, with each frame's
 *     domain, so that a thread's stacks of every domain are one array;
 *   - start/end ranges: process-wide, in start order; an end names its range by the id the
 *     start returned, from any thread;
 *   - domains (nvtxDomainCreateA/W) and registered strings are never freed (handles stay
 *     valid for the process's life, as NVTX allows); the default domain is the NULL handle.
 * A launch asks collect_nvtx_here on its own thread: the view of its thread's push/pop
 * ranges and the open start/end ranges, matched against the filter and formatted as the
 * stored path; the answer is cached per thread until a range changes.
 *
 * Expressions (Nsight Compute's NVTX filtering, as its CLI documents it):
 *   [DOMAIN@]BODY              without DOMAIN@: the default domain
 *   push/pop BODY: a '/'-separated path, marked as push/pop by a '/' anywhere (a single range:
 *     "A/"): "A/B" is B pushed directly inside A, anywhere on the thread's stack of the domain;
 *     '[' first: the path starts at the bottom of the stack; ']' last: it ends at its top;
 *     '*' as an item of the path stands for any number of ranges (none too), '+' for exactly
 *     one (items A, *, B: any ranges between A and B; A, +, B: one range between them); a
 *     path that starts with '*' is refused: Nsight Compute refuses one too ('*\/', 'D@*\/B/':
 *     "Invalid configuration") or selects nothing with it ('[*]', and 'D@*'; ncu 2025.3), so
 *     such an expression is a mistake to be told of, not a way to select every launch
 *   start/end BODY: a range name, or names separated by ',': the launch is inside every one
 *     of them (open start/end ranges of the domain)
 *   '\' makes the next character plain (a name with '/', '@', ',', '[', ']', '*', '+', '\').
 * A launch is selected when no include is given or any include matches, and no exclude
 * matches. Refused with a message: "regex:" expressions (not implemented), empty names, a
 * second '@', '*' and '+' in a start/end expression (DOMAIN@* too), a push/pop path that
 * starts with '*', '[' or ']' anywhere else.
 *
 * The stored path (measurement.nvtx; docs/metrics.md): one part per domain with ranges, the
 * default domain first, then the others in the order they were created, separated by ';':
 * "[DOMAIN@]A/B/" for the thread's push/pop stack of the domain (bottom first, each name
 * followed by '/'), "[DOMAIN@]X,Y" for its open start/end ranges (start order); names escaped
 * as in expressions. Each part is itself an include expression that selects the launch.
 */
#define _GNU_SOURCE
#include "collect.h"
#include "common.h"

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ------------------------------------------------------------------ expressions */

enum item_type { IT_NAME, IT_STAR, IT_PLUS };
struct item {
    enum item_type type;
    char *name;
};
enum expr_kind { EX_PUSHPOP, EX_STARTEND };
struct expr {
    char *domain; /* NULL: the default domain */
    enum expr_kind kind;
    int bottom, top; /* '[' and ']' */
    struct item *items;
    int nitems;
};
struct collect_nvtx_filter {
    struct expr *inc, *exc;
    int ninc, nexc;
    unsigned long serial; /* names this filter in the per-thread cache (never 0) */
};
static unsigned long filter_serial;

static void expr_free(struct expr *e)
{
    free(e->domain);
    for (int i = 0; i < e->nitems; i++)
        free(e->items[i].name);
    free(e->items);
}

void collect_nvtx_filter_free(struct collect_nvtx_filter *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->ninc; i++)
        expr_free(&f->inc[i]);
    for (int i = 0; i < f->nexc; i++)
        expr_free(&f->exc[i]);
    free(f->inc);
    free(f->exc);
    free(f);
}

/* The characters of s[from, to) with escapes removed: malloc'd. */
static char *unescape(const char *s, size_t from, size_t to)
{
    char *out = malloc(to - from + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = from; i < to; i++) {
        if (s[i] == '\\' && i + 1 < to)
            i++;
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

/* Index of the first unescaped c in s[from, to), or (size_t)-1. */
static size_t find_plain(const char *s, size_t from, size_t to, char c)
{
    for (size_t i = from; i < to; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] == c)
            return i;
    }
    return (size_t)-1;
}

static int add_item(struct expr *e, enum item_type t, char *name)
{
    struct item *grown = realloc(e->items, (size_t)(e->nitems + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        return RK_ENOMEM;
    }
    e->items = grown;
    e->items[e->nitems].type = t;
    e->items[e->nitems++].name = name;
    return RK_OK;
}

/* Whether s[i] is escaped: an odd number of '\\' right before it, after from. */
static int escaped(const char *s, size_t from, size_t i)
{
    size_t n = 0;
    while (i > from + n && s[i - n - 1] == '\\')
        n++;
    return n % 2;
}

/* Whether s[from, to) is exactly the unescaped character c. */
static int is_plain(const char *s, size_t from, size_t to, char c)
{
    return to == from + 1 && s[from] == c;
}

/* Parses one expression (file header); the message names `opt` and says why. */
static int parse_expr(const char *s, const char *opt, struct expr *e)
{
    size_t len = strlen(s), at, b;
    memset(e, 0, sizeof *e);
#define BAD(...) (expr_free(e), rk_error(RK_EUSAGE, __VA_ARGS__))
    if (strncmp(s, "regex:", 6) == 0)
        return BAD("option '%s' '%s': regular expressions ('regex:') are not supported in NVTX "
                   "expressions; name the ranges, with '*' for any number of them",
                   opt, s);
    if ((at = find_plain(s, 0, len, '@')) != (size_t)-1) {
        if (at == 0)
            return BAD("option '%s' '%s': no domain name before '@'; leave out 'DOMAIN@' for the "
                       "default domain",
                       opt, s);
        if (find_plain(s, at + 1, len, '@') != (size_t)-1)
            return BAD("option '%s' '%s': more than one '@'; write '\\@' for an '@' in a name", opt,
                       s);
        if (!(e->domain = unescape(s, 0, at)))
            return BAD("out of memory");
        b = at + 1;
    } else {
        b = 0;
    }
    if (b == len)
        return BAD("option '%s' '%s': no range named; write 'RANGE' (start/end) or 'RANGE/' "
                   "(push/pop)",
                   opt, s);
    size_t end = len;
    if (s[b] == '[')
        e->bottom = 1, b++;
    if (end > b && s[end - 1] == ']' && !escaped(s, b, end - 1))
        e->top = 1, end--;
    int pushpop = e->bottom || e->top || find_plain(s, b, end, '/') != (size_t)-1;
    if (!pushpop) {
        e->kind = EX_STARTEND;
        for (size_t from = b; from <= end;) {
            size_t comma = find_plain(s, from, end, ',');
            size_t to = comma == (size_t)-1 ? end : comma;
            if (to == from)
                return BAD("option '%s' '%s': an empty range name; names are separated by ',' "
                           "(start/end ranges) or '/' (push/pop ranges)",
                           opt, s);
            if (is_plain(s, from, to, '*') || is_plain(s, from, to, '+'))
                return BAD("option '%s' '%s': '*' and '+' stand for push/pop ranges between "
                           "named ones ('A/*/B'); there is no expression for any range of a "
                           "domain (Nsight Compute selects nothing with 'DOMAIN@*'): name the "
                           "ranges",
                           opt, s);
            char *name = unescape(s, from, to);
            if (!name || add_item(e, IT_NAME, name) != RK_OK)
                return BAD("out of memory");
            from = to + 1;
        }
        return RK_OK;
    }
    e->kind = EX_PUSHPOP;
    if (end > b && s[end - 1] == '/' && !escaped(s, b, end - 1))
        end--; /* the trailing '/' that marks a push/pop range */
    for (size_t from = b; from <= end;) {
        size_t slash = find_plain(s, from, end, '/');
        size_t to = slash == (size_t)-1 ? end : slash;
        if (to == from)
            return BAD("option '%s' '%s': an empty range name between '/'; write 'A/B' (B inside "
                       "A) or 'A/*/B' (any ranges between)",
                       opt, s);
        if (find_plain(s, from, to, '[') != (size_t)-1 ||
            find_plain(s, from, to, ']') != (size_t)-1)
            return BAD("option '%s' '%s': '[' goes first (the bottom of the stack) and ']' last "
                       "(its top); write '\\[' or '\\]' in a name",
                       opt, s);
        int rc = is_plain(s, from, to, '*')   ? add_item(e, IT_STAR, NULL)
                 : is_plain(s, from, to, '+') ? add_item(e, IT_PLUS, NULL)
                                              : add_item(e, IT_NAME, unescape(s, from, to));
        if (rc != RK_OK ||
            (e->items[e->nitems - 1].type == IT_NAME && !e->items[e->nitems - 1].name))
            return BAD("out of memory");
        if (e->nitems == 1 && e->items[0].type == IT_STAR)
            return BAD("option '%s' '%s': a path cannot start with '*' (Nsight Compute refuses "
                       "it or selects nothing); '*' stands for ranges after a named one: 'A/*/B' "
                       "or 'A/*'",
                       opt, s);
        from = to + 1;
    }
    return RK_OK;
#undef BAD
}

int collect_nvtx_filter_new(const char *const *include, int ninclude, const char *const *exclude,
                            int nexclude, struct collect_nvtx_filter **out)
{
    struct collect_nvtx_filter *f = calloc(1, sizeof *f);
    int rc = RK_OK;
    *out = NULL;
    if (!f || (ninclude && !(f->inc = calloc((size_t)ninclude, sizeof *f->inc))) ||
        (nexclude && !(f->exc = calloc((size_t)nexclude, sizeof *f->exc)))) {
        collect_nvtx_filter_free(f);
        return rk_error(RK_ENOMEM, "out of memory");
    }
    for (; rc == RK_OK && f->ninc < ninclude; f->ninc++)
        if ((rc = parse_expr(include[f->ninc], "--nvtx-include", &f->inc[f->ninc])) != RK_OK)
            break;
    for (; rc == RK_OK && f->nexc < nexclude; f->nexc++)
        if ((rc = parse_expr(exclude[f->nexc], "--nvtx-exclude", &f->exc[f->nexc])) != RK_OK)
            break;
    if (rc != RK_OK) {
        collect_nvtx_filter_free(f);
        return rc;
    }
    f->serial = __atomic_add_fetch(&filter_serial, 1, __ATOMIC_RELAXED);
    *out = f;
    return RK_OK;
}

/* ------------------------------------------------------------------ matching */

static int same_domain(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Does items[pi..) match stack[si..k) for some k (k == n when top)? */
static int match_from(const struct expr *e, int pi, const char *const *stack, int n, int si)
{
    if (pi == e->nitems)
        return !e->top || si == n;
    const struct item *it = &e->items[pi];
    if (it->type == IT_STAR) {
        for (int k = si; k <= n; k++)
            if (match_from(e, pi + 1, stack, n, k))
                return 1;
        return 0;
    }
    if (si == n || (it->type == IT_NAME && strcmp(it->name, stack[si]) != 0))
        return 0;
    return match_from(e, pi + 1, stack, n, si + 1);
}

static int expr_match(const struct expr *e, const struct collect_nvtx_view *v)
{
    int n = 0;
    for (int i = 0; i < v->npushpop; i++)
        n += same_domain(v->pushpop[i].domain, e->domain);
    if (e->kind == EX_STARTEND) {
        for (int k = 0; k < e->nitems; k++) {
            int found = 0;
            for (int i = 0; i < v->nstartend && !found; i++)
                found = same_domain(v->startend[i].domain, e->domain) &&
                        strcmp(v->startend[i].name, e->items[k].name) == 0;
            if (!found)
                return 0;
        }
        return 1;
    }
    const char **stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!stack)
        return 0;
    n = 0;
    for (int i = 0; i < v->npushpop; i++)
        if (same_domain(v->pushpop[i].domain, e->domain))
            stack[n++] = v->pushpop[i].name;
    int hit = 0;
    for (int si = 0; si <= (e->bottom ? 0 : n) && !hit; si++)
        hit = match_from(e, 0, stack, n, si);
    free(stack);
    return hit;
}

int collect_nvtx_match(const struct collect_nvtx_filter *f, const struct collect_nvtx_view *v)
{
    int in = !f || f->ninc == 0;
    for (int i = 0; f && !in && i < f->ninc; i++)
        in = expr_match(&f->inc[i], v);
    for (int i = 0; f && in && i < f->nexc; i++)
        in = !expr_match(&f->exc[i], v);
    return in;
}

/* ------------------------------------------------------------------ the path */

static void put_escaped(struct rk_buf *b, const char *s)
{
    for (; s && *s; s++) {
        char c[3] = {'\\', *s, '\0'};
        rk_buf_puts(b, strchr("/@,;[]*+\\", *s) ? c : c + 1);
    }
}

char *collect_nvtx_path(const struct collect_nvtx_view *v)
{
    struct rk_buf b = RK_BUF_INIT;
    /* the domains in order of first appearance; NULL (default) first */
    const char **doms = malloc(((size_t)(v->npushpop + v->nstartend) + 2) * sizeof *doms);
    int ndom = 0, has_default = 0;
    if (!doms)
        return NULL;
    for (int i = 0; i < v->npushpop + v->nstartend; i++) {
        const char *d =
            i < v->npushpop ? v->pushpop[i].domain : v->startend[i - v->npushpop].domain;
        int seen = 0;
        if (!d) {
            has_default = 1;
            continue;
        }
        for (int k = 0; k < ndom && !seen; k++)
            seen = strcmp(doms[k], d) == 0;
        if (!seen)
            doms[ndom++] = d;
    }
    for (int k = -1; k < ndom; k++) {
        const char *d = k < 0 ? NULL : doms[k];
        if (k < 0 && !has_default)
            continue;
        for (int part = 0; part < 2; part++) { /* push/pop, then start/end */
            int first = 1;
            int n = part == 0 ? v->npushpop : v->nstartend;
            const struct collect_nvtx_range *r = part == 0 ? v->pushpop : v->startend;
            for (int i = 0; i < n; i++) {
                if (!same_domain(r[i].domain, d))
                    continue;
                if (first) {
                    if (b.len)
                        rk_buf_puts(&b, ";");
                    if (d) {
                        put_escaped(&b, d);
                        rk_buf_puts(&b, "@");
                    }
                } else if (part == 1) {
                    rk_buf_puts(&b, ",");
                }
                put_escaped(&b, r[i].name);
                if (part == 0)
                    rk_buf_puts(&b, "/");
                first = 0;
            }
        }
    }
    free(doms);
    if (b.oom) {
        rk_buf_release(&b);
        return NULL;
    }
    return b.s; /* NULL when there is no range */
}

/* ------------------------------------------------------------------ the NVTX tool */

struct nvtx_domain {
    char *name;
    struct nvtx_domain *next;
};
struct nvtx_string {
    char *text;
    struct nvtx_string *next; /* every registered string, for the life of the process */
};
struct frame {
    const struct nvtx_domain *domain; /* NULL: the default domain */
    char *name;
};
struct se_range {
    uint64_t id;
    const struct nvtx_domain *domain;
    char *name;
};
/* One thread's push/pop ranges and its cached answer. */
struct nvtx_thread {
    struct frame *frames;
    int n, cap;
    unsigned long version; /* bumped by every push and pop of this thread */
    /* the last answer of collect_nvtx_here */
    int cached;
    unsigned long c_version, c_global;
    unsigned long c_filter; /* its serial, 0 for none */
    int c_selected;
    char *c_path;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* domains, strings, start/end ranges */
static struct nvtx_domain *domains;
static struct se_range *ranges;
static int nranges, capranges;
static uint64_t next_id;
static unsigned long global_version; /* bumped by every start and end (under mu) */
static _Thread_local struct nvtx_thread *self;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_free(void *p)
{
    struct nvtx_thread *t = p;
    for (int i = 0; t && i < t->n; i++)
        free(t->frames[i].name);
    if (t) {
        free(t->frames);
        free(t->c_path);
        free(t);
    }
}

static void make_key(void)
{
    if (pthread_key_create(&thread_key, thread_free) != 0)
        thread_key = 0;
}

static struct nvtx_thread *this_thread(void)
{
    if (!self && (self = calloc(1, sizeof *self))) {
        pthread_once(&key_once, make_key);
        pthread_setspecific(thread_key, self); /* freed when the thread ends */
    }
    return self;
}

/* A wide message as UTF-8 (malloc'd). */
static char *narrow(const wchar_t *w)
{
    struct rk_buf b = RK_BUF_INIT;
    for (; w && *w; w++) {
        unsigned long c = (unsigned long)*w;
        char u[5] = {0};
        if (c < 0x80) {
            u[0] = (char)c;
        } else if (c < 0x800) {
            u[0] = (char)(0xc0 | (c >> 6)), u[1] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            u[0] = (char)(0xe0 | (c >> 12)), u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            u[2] = (char)(0x80 | (c & 0x3f));
        } else {
            u[0] = (char)(0xf0 | ((c >> 18) & 0x07)), u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            u[2] = (char)(0x80 | ((c >> 6) & 0x3f)), u[3] = (char)(0x80 | (c & 0x3f));
        }
        rk_buf_puts(&b, u);
    }
    if (b.oom) {
        rk_buf_release(&b);
        return NULL;
    }
    return b.s ? b.s : strdup("");
}

/* The message of an event's attributes (malloc'd; "" without one). */
static char *message_of(const nvtxEventAttributes_t *a)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return strdup("");
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return strdup(a->message.ascii ? a->message.ascii : "");
    case NVTX_MESSAGE_TYPE_UNICODE:
        return narrow(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
        const struct nvtx_string *s = (const struct nvtx_string *)a->message.registered;
        return strdup(s && s->text ? s->text : "");
    }
    default:
        return strdup("");
    }
}

/* Pushes name (owned) on domain d's stack of this thread; the range's level, or -1. */
static int push(const struct nvtx_domain *d, char *name)
{
    struct nvtx_thread *t = this_thread();
    int level = 0;
    if (!t || !name) {
        free(name);
        return -1;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        struct frame *grown = realloc(t->frames, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(name);
            return -1;
        }
        t->frames = grown;
        t->cap = cap;
    }
    for (int i = 0; i < t->n; i++)
        level += t->frames[i].domain == d;
    t->frames[t->n].domain = d;
    t->frames[t->n++].name = name;
    t->version++;
    return level;
}

/* Ends the innermost push/pop range of domain d on this thread; its level, or -1 (none). */
static int pop(const struct nvtx_domain *d)
{
    struct nvtx_thread *t = self;
    int level = -1, at = -1;
    for (int i = 0; t && i < t->n; i++)
        if (t->frames[i].domain == d)
            at = i, level++;
    if (at < 0)
        return -1;
    free(t->frames[at].name);
    memmove(&t->frames[at], &t->frames[at + 1], (size_t)(t->n - at - 1) * sizeof *t->frames);
    t->n--;
    t->version++;
    return level;
}

static nvtxRangeId_t start(const struct nvtx_domain *d, char *name)
{
    nvtxRangeId_t id = 0;
    if (!name)
        return 0;
    pthread_mutex_lock(&mu);
    if (nranges == capranges) {
        int cap = capranges ? 2 * capranges : 16;
        struct se_range *grown = realloc(ranges, (size_t)cap * sizeof *grown);
        if (grown)
            ranges = grown, capranges = cap;
    }
    if (nranges < capranges) {
        id = ++next_id;
        ranges[nranges].id = id;
        ranges[nranges].domain = d;
        ranges[nranges++].name = name;
        name = NULL;
        __atomic_add_fetch(&global_version, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&mu);
    free(name);
    return id;
}

static void end(nvtxRangeId_t id)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nranges; i++)
        if (ranges[i].id == id) {
            free(ranges[i].name);
            memmove(&ranges[i], &ranges[i + 1], (size_t)(nranges - i - 1) * sizeof *ranges);
            nranges--;
            __atomic_add_fetch(&global_version, 1, __ATOMIC_RELEASE);
            break;
        }
    pthread_mutex_unlock(&mu);
}

/* The handlers, one per NVTX call we follow (nvToolsExt.h's signatures). */
static int h_push_a(const char *message)
{
    return push(NULL, strdup(message ? message : ""));
}
static int h_push_w(const wchar_t *message)
{
    return push(NULL, narrow(message));
}
static int h_push_ex(const nvtxEventAttributes_t *a)
{
    return push(NULL, message_of(a));
}
static int h_pop(void)
{
    return pop(NULL);
}
static nvtxRangeId_t h_start_a(const char *message)
{
    return start(NULL, strdup(message ? message : ""));
}
static nvtxRangeId_t h_start_w(const wchar_t *message)
{
    return start(NULL, narrow(message));
}
static nvtxRangeId_t h_start_ex(const nvtxEventAttributes_t *a)
{
    return start(NULL, message_of(a));
}
static void h_end(nvtxRangeId_t id)
{
    end(id);
}
static int h_domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return push((const struct nvtx_domain *)d, message_of(a));
}
static int h_domain_pop(nvtxDomainHandle_t d)
{
    return pop((const struct nvtx_domain *)d);
}
static nvtxRangeId_t h_domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return start((const struct nvtx_domain *)d, message_of(a));
}
static void h_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d; /* ids are unique across domains */
    end(id);
}

static nvtxDomainHandle_t domain_create(char *name)
{
    struct nvtx_domain *d = NULL;
    if (!name)
        return NULL;
    pthread_mutex_lock(&mu);
    for (d = domains; d && strcmp(d->name, name) != 0; d = d->next) {
    }
    if (!d && (d = calloc(1, sizeof *d))) {
        struct nvtx_domain **tail = &domains;
        while (*tail)
            tail = &(*tail)->next;
        d->name = name; /* kept in creation order */
        name = NULL;
        *tail = d;
    }
    pthread_mutex_unlock(&mu);
    free(name);
    return (nvtxDomainHandle_t)d;
}
static nvtxDomainHandle_t h_domain_create_a(const char *name)
{
    return domain_create(strdup(name ? name : ""));
}
static nvtxDomainHandle_t h_domain_create_w(const wchar_t *name)
{
    return domain_create(narrow(name));
}
static void h_domain_destroy(nvtxDomainHandle_t d)
{
    (void)d; /* kept: launches may still name it */
}
/* A registered string's handle stays valid until the process ends (NVTX's contract), so the
 * strings are kept, like the domains, in a list that lives as long. */
static struct nvtx_string *strings;
static nvtxStringHandle_t string_register(char *text)
{
    struct nvtx_string *s = text ? malloc(sizeof *s) : NULL;
    if (!s) {
        free(text);
        return NULL;
    }
    s->text = text;
    pthread_mutex_lock(&mu);
    s->next = strings;
    strings = s;
    pthread_mutex_unlock(&mu);
    return (nvtxStringHandle_t)s;
}
static nvtxStringHandle_t h_register_a(nvtxDomainHandle_t d, const char *text)
{
    (void)d;
    return string_register(strdup(text ? text : ""));
}
static nvtxStringHandle_t h_register_w(nvtxDomainHandle_t d, const wchar_t *text)
{
    (void)d;
    return string_register(narrow(text));
}

/* Stores handler fn at slot id of an NVTX module's table (n usable slots). */
static void set_slot(NvtxFunctionTable table, unsigned n, unsigned id, NvtxFunctionPointer fn)
{
    if (table && id < n && table[id])
        *table[id] = fn;
}

int collect_nvtx_attach(const void *(*get_export_table)(uint32_t id))
{
    const NvtxExportTableCallbacks *cb =
        get_export_table ? (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS)
                         : NULL;
    NvtxFunctionTable core = NULL, core2 = NULL;
    unsigned ncore = 0, ncore2 = 0;
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &ncore))
        return 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &ncore2))
        core2 = NULL;
#define SET(t, n, id, fn) set_slot(t, n, id, (NvtxFunctionPointer)(fn))
    SET(core, ncore, NVTX_CBID_CORE_RangePushA, h_push_a);
    SET(core, ncore, NVTX_CBID_CORE_RangePushW, h_push_w);
    SET(core, ncore, NVTX_CBID_CORE_RangePushEx, h_push_ex);
    SET(core, ncore, NVTX_CBID_CORE_RangePop, h_pop);
    SET(core, ncore, NVTX_CBID_CORE_RangeStartA, h_start_a);
    SET(core, ncore, NVTX_CBID_CORE_RangeStartW, h_start_w);
    SET(core, ncore, NVTX_CBID_CORE_RangeStartEx, h_start_ex);
    SET(core, ncore, NVTX_CBID_CORE_RangeEnd, h_end);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRangePushEx, h_domain_push);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRangePop, h_domain_pop);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRangeStartEx, h_domain_start);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRangeEnd, h_domain_end);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainCreateA, h_domain_create_a);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainCreateW, h_domain_create_w);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainDestroy, h_domain_destroy);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRegisterStringA, h_register_a);
    SET(core2, ncore2, NVTX_CBID_CORE2_DomainRegisterStringW, h_register_w);
#undef SET
    return 1;
}

/* The view of this thread now: pp and se are malloc'd (free both; names borrowed). */
static int view_now(struct nvtx_thread *t, struct collect_nvtx_view *v,
                    struct collect_nvtx_range **pp, struct collect_nvtx_range **se)
{
    int n = t ? t->n : 0;
    *pp = malloc(((size_t)n + 1) * sizeof **pp);
    *se = NULL;
    if (!*pp)
        return RK_ENOMEM;
    for (int i = 0; i < n; i++) {
        (*pp)[i].domain = t->frames[i].domain ? t->frames[i].domain->name : NULL;
        (*pp)[i].name = t->frames[i].name;
    }
    v->pushpop = *pp;
    v->npushpop = n;
    v->startend = NULL;
    v->nstartend = 0;
    return RK_OK;
}

void collect_nvtx_here(const struct collect_nvtx_filter *f, int *selected, char **path)
{
    struct nvtx_thread *t = this_thread();
    unsigned long g = __atomic_load_n(&global_version, __ATOMIC_ACQUIRE);
    *selected = 1;
    *path = NULL;
    unsigned long serial = f ? f->serial : 0;
    if (t && t->cached && t->c_version == t->version && t->c_global == g && t->c_filter == serial) {
        *selected = t->c_selected;
        *path = t->c_path ? strdup(t->c_path) : NULL;
        return;
    }
    struct collect_nvtx_view v;
    struct collect_nvtx_range *pp = NULL, *se = NULL;
    if (view_now(t, &v, &pp, &se) != RK_OK)
        return;
    /* the start/end ranges, copied under the lock: names stay valid while it is held */
    pthread_mutex_lock(&mu);
    g = global_version;
    if (nranges && (se = malloc((size_t)nranges * sizeof *se))) {
        for (int i = 0; i < nranges; i++) {
            se[i].domain = ranges[i].domain ? ranges[i].domain->name : NULL;
            se[i].name = ranges[i].name;
        }
        v.startend = se;
        v.nstartend = nranges;
    }
    *selected = collect_nvtx_match(f, &v);
    char *p = collect_nvtx_path(&v);
    pthread_mutex_unlock(&mu);
    free(pp);
    free(se);
    if (t) {
        free(t->c_path);
        t->c_path = p;
        t->cached = 1;
        t->c_version = t->version;
        t->c_global = g;
        t->c_filter = serial;
        t->c_selected = *selected;
        *path = p ? strdup(p) : NULL;
    } else {
        *path = p;
    }
}
