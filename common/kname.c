/*
 * kname.c - selecting kernels by name as Nsight Compute does: the name rule (an exact name, or
 * "regex:EXPR"), the function name of a demangled name, and ncu's kernel id. kname.h states the
 * rule and the grammar; this file only implements them, once, for `roofkit profile` (inside the
 * injection library) and `roofkit run --kernel` alike.
 *
 * The function name is cut from the demangled text from the right, because only the end of a
 * demangled name has a fixed shape: the last balanced (...) is the parameter list, a balanced
 * <...> before it the template arguments (parentheses inside them, as in "(char)1" or a lambda's
 * "{lambda(int)#1}", are skipped), and the identifier before that the function.
 */
#define _POSIX_C_SOURCE 200809L
#include "kname.h"
#include "common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const base_names[] = {"function", "demangled", "mangled"};

int rk_kname_base_parse(const char *s, enum rk_kname_base *out)
{
    if (!s || !*s) {
        *out = RK_KNAME_FUNCTION;
        return RK_OK;
    }
    for (int i = 0; i < 3; i++)
        if (strcmp(s, base_names[i]) == 0) {
            *out = (enum rk_kname_base)i;
            return RK_OK;
        }
    return rk_error(
        RK_EUSAGE, "option '--kernel-name-base' takes function, demangled or mangled, not '%s'", s);
}

const char *rk_kname_base_name(enum rk_kname_base base)
{
    return (unsigned)base < 3 ? base_names[base] : "?";
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

char *rk_kname_function(const char *d)
{
    size_t n = strlen(d), end = n, start;
    while (end > 0 && isspace((unsigned char)d[end - 1]))
        end--;
    if (end > 0 && d[end - 1] == ')') { /* the parameter list */
        int depth = 0;
        for (size_t i = end; i > 0; i--) {
            char c = d[i - 1];
            if (c == ')')
                depth++;
            else if (c == '(' && --depth == 0) {
                end = i - 1;
                break;
            }
        }
    }
    while (end > 0 && isspace((unsigned char)d[end - 1]))
        end--;
    if (end > 0 && d[end - 1] == '>') { /* the template arguments */
        int angle = 0, paren = 0;
        for (size_t i = end; i > 0; i--) {
            char c = d[i - 1];
            if (c == ')' || c == '}')
                paren++;
            else if (c == '(' || c == '{')
                paren--;
            else if (paren == 0 && c == '>')
                angle++;
            else if (paren == 0 && c == '<' && --angle == 0) {
                end = i - 1;
                break;
            }
        }
    }
    for (start = end; start > 0 && ident_char(d[start - 1]); start--) {
    }
    if (start == end) { /* nothing recognisable: the name is its own function name */
        start = 0;
        end = n;
    }
    return strndup(d + start, end - start);
}

/* regcomp of an extended expression; on failure, regerror's text (first letter lowercase, as
 * roofkit's messages are) in msg and 0. */
static int compile(regex_t *re, const char *expr, char *msg, size_t size)
{
    int rc = regcomp(re, expr, REG_EXTENDED | REG_NOSUB);
    if (rc == 0)
        return 1;
    regerror(rc, re, msg, size);
    msg[0] = (char)tolower((unsigned char)msg[0]);
    return 0;
}

int rk_kname_filter_init(struct rk_kname_filter *f, const char *spec, const char *option)
{
    memset(f, 0, sizeof *f);
    if (!spec || !*spec)
        return rk_error(RK_EUSAGE, "option '%s' needs a kernel name or 'regex:EXPR', not ''",
                        option);
    if (strncmp(spec, "regex:", 6) != 0) {
        if (!(f->exact = strdup(spec)))
            return rk_error(RK_ENOMEM, "out of host memory");
        return RK_OK;
    }
    const char *expr = spec + 6;
    if (!*expr)
        return rk_error(RK_EUSAGE,
                        "option '%s' needs an expression after 'regex:'; write e.g. 'regex:gemm'",
                        option);
    char msg[256];
    if (!compile(&f->re, expr, msg, sizeof msg))
        return rk_error(RK_EUSAGE,
                        "option '%s' has a bad regular expression '%s': %s; write a POSIX "
                        "extended expression such as 'regex:^gemm'",
                        option, expr, msg);
    f->regex = 1;
    return RK_OK;
}

int rk_kname_filter_match(const struct rk_kname_filter *f, const char *name)
{
    if (!name)
        return 0;
    if (f->regex)
        return regexec(&f->re, name, 0, NULL, 0) == 0;
    return f->exact && strcmp(f->exact, name) == 0;
}

void rk_kname_filter_release(struct rk_kname_filter *f)
{
    if (f->regex)
        regfree(&f->re);
    free(f->exact);
    memset(f, 0, sizeof *f);
}

#define KID_FORM "context-id:stream-id:[regex:]kernel-name:invocation-nr"

/* The invocation field: empty (any), a number from 1, or an expression on the whole number. */
static int parse_invocation(struct rk_kernel_id *id, const char *inv, const char *spec)
{
    if (!*inv)
        return RK_OK;
    if (strspn(inv, "0123456789") == strlen(inv)) {
        long n = 0;
        if (rk_parse_long(inv, &n) != RK_OK || n < 1)
            return rk_error(
                RK_EUSAGE,
                "option '--kernel-id' needs an invocation number from 1, not '%s' in '%s'; "
                "write e.g. '::gemm:1' for the first",
                inv, spec);
        id->invocation = n;
        return RK_OK;
    }
    size_t len = strlen(inv) + 5;
    char *anchored = malloc(len);
    if (!anchored)
        return rk_error(RK_ENOMEM, "out of host memory");
    snprintf(anchored, len, "^(%s)$", inv);
    char msg[256];
    int ok = compile(&id->inv_re, anchored, msg, sizeof msg);
    free(anchored);
    if (!ok)
        return rk_error(RK_EUSAGE,
                        "option '--kernel-id' has a bad invocation number or expression '%s': "
                        "%s; write a number from 1 or an expression such as '.*5|3'",
                        inv, msg);
    id->inv_regex = 1;
    return RK_OK;
}

int rk_kernel_id_init(struct rk_kernel_id *id, const char *spec)
{
    memset(id, 0, sizeof *id);
    id->any_name = 1;
    const char *c1 = spec ? strchr(spec, ':') : NULL;
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    const char *last = c2 ? strrchr(c2 + 1, ':') : NULL;
    if (!last)
        return rk_error(RK_EUSAGE,
                        "option '--kernel-id' needs " KID_FORM ", not '%s'; write e.g. "
                        "'::gemm:2' (an empty field matches all)",
                        spec ? spec : "");
    if (c1 != spec || c2 != c1 + 1) {
        int nctx = (int)(c1 - spec), nstream = (int)(c2 - c1 - 1);
        return rk_error(RK_EUSAGE,
                        "option '--kernel-id' cannot select %s%.*s%s%s%s%.*s%s in '%s': roofkit "
                        "selects kernels by name and invocation only; leave the first two fields "
                        "empty, e.g. '::gemm:2'",
                        nctx ? "context '" : "", nctx, spec, nctx ? "'" : "",
                        nctx && nstream ? " and " : "", nstream ? "stream '" : "", nstream, c1 + 1,
                        nstream ? "'" : "", spec);
    }
    int rc = parse_invocation(id, last + 1, spec);
    if (rc != RK_OK)
        return rc;
    size_t len = (size_t)(last - (c2 + 1));
    if (len > 0) {
        char *name = strndup(c2 + 1, len);
        if (!name)
            rc = rk_error(RK_ENOMEM, "out of host memory");
        else
            rc = rk_kname_filter_init(&id->name, name, "--kernel-id");
        free(name);
        if (rc != RK_OK) {
            if (id->inv_regex)
                regfree(&id->inv_re);
            memset(id, 0, sizeof *id);
            return rc;
        }
        id->any_name = 0;
    }
    return RK_OK;
}

int rk_kernel_id_name_match(const struct rk_kernel_id *id, const char *name)
{
    return id->any_name ? name != NULL : rk_kname_filter_match(&id->name, name);
}

int rk_kernel_id_invocation_match(const struct rk_kernel_id *id, long n)
{
    if (id->inv_regex) {
        char num[32];
        snprintf(num, sizeof num, "%ld", n);
        return regexec(&id->inv_re, num, 0, NULL, 0) == 0;
    }
    return id->invocation <= 0 || n == id->invocation;
}

void rk_kernel_id_release(struct rk_kernel_id *id)
{
    if (!id->any_name)
        rk_kname_filter_release(&id->name);
    if (id->inv_regex)
        regfree(&id->inv_re);
    memset(id, 0, sizeof *id);
}
