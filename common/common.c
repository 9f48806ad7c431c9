/*
 * common.c - error printing, progress, number and name-list parsing, a monotonic clock and a GPU
 * UUID's text, shared by all modules. Assumes one thread prints at a time (roofkit's host code is
 * single-threaded apart from CUPTI callbacks, which never print progress).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strndup */
#include "common.h"

#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int rk_interrupted;

int rk_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits this mask */
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
static int quiet;
static int progress_open;

const char *rk_strerror(int err)
{
    switch (err) {
    case RK_OK:
        return "success";
    case RK_EFAIL:
        return "internal error";
    case RK_EUSAGE:
        return "bad command line";
    case RK_ENOGPU:
        return "no usable CUDA GPU";
    case RK_ECUDA:
        return "CUDA, cuBLAS or NVML call failed";
    case RK_ECUPTI:
        return "CUPTI call failed";
    case RK_EDB:
        return "database error";
    case RK_EIO:
        return "file input/output error";
    case RK_EVERIFY:
        return "verification failed";
    case RK_ENOMEM:
        return "not enough memory";
    case RK_ENOTOOL:
        return "external program missing";
    case RK_ENODATA:
        return "nothing to work on in the database";
    case RK_EREGRESSION:
        return "a kernel is slower than the baseline";
    case RK_EINTR:
        return "interrupted";
    default:
        return "unknown error";
    }
}

void rk_set_quiet(int q)
{
    quiet = q;
}

double rk_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void end_progress_line(void)
{
    if (progress_open) {
        fputc('\n', stderr);
        progress_open = 0;
    }
}

static void vprint(const char *prefix, const char *fmt, va_list ap)
{
    end_progress_line();
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int rk_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("roofkit: error: ", fmt, ap);
    va_end(ap);
    return code;
}

void rk_warn(const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start(ap, fmt);
    vprint("roofkit: warning: ", fmt, ap);
    va_end(ap);
}

void rk_info(const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start(ap, fmt);
    vprint("roofkit: ", fmt, ap);
    va_end(ap);
}

void rk_progress(const char *label, long done, long total)
{
    if (quiet || !isatty(STDERR_FILENO))
        return;
    if (total > 0)
        fprintf(stderr, "\r\033[K%s [%ld/%ld] %3.0f%%", label, done, total,
                100.0 * (double)done / (double)total);
    else
        fprintf(stderr, "\r\033[K%s [%ld]", label, done);
    fflush(stderr);
    progress_open = 1;
}

void rk_progress_end(void)
{
    if (progress_open) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        progress_open = 0;
    }
}

int rk_parse_double(const char *s, double *out)
{
    char *end;
    double v;
    if (!s || !*s)
        return RK_EUSAGE;
    /* strtod accepts hex floats, "inf" and "nan": a size or a rate is none of these. */
    for (const char *p = s; *p; p++)
        if (strchr("0123456789.eE+-", *p) == NULL)
            return RK_EUSAGE;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return RK_EUSAGE;
    *out = v;
    return RK_OK;
}

int rk_parse_long(const char *s, long *out)
{
    double d;
    long v;
    char *end;
    if (!s || !*s)
        return RK_EUSAGE;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno == 0 && end != s && *end == '\0') {
        *out = v;
        return RK_OK;
    }
    /* Accept integral values written in floating notation, e.g. "1e7" for 10^7. */
    if (rk_parse_double(s, &d) != RK_OK || d != floor(d) || fabs(d) > 9.0e18)
        return RK_EUSAGE;
    *out = (long)d;
    return RK_OK;
}

void rk_bug(const char *file, int line, const char *msg)
{
    fprintf(stderr, "roofkit: BUG at %s:%d: %s; please report it\n", file, line, msg);
    abort();
}

int rk_parse_name_list(const char *s, char ***out, int *n)
{
    char **names = NULL;
    int count = 0;
    const char *p = s;
    if (!s || !*s)
        return RK_EUSAGE;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char **grown;
        if (len == 0)
            goto bad;
        grown = realloc(names, sizeof *names * (size_t)(count + 1));
        if (!grown)
            goto oom;
        names = grown;
        names[count] = strndup(p, len);
        if (!names[count])
            goto oom;
        count++;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = names;
    *n = count;
    return RK_OK;
bad:
    rk_free_name_list(names, count);
    return RK_EUSAGE;
oom:
    rk_free_name_list(names, count);
    return RK_ENOMEM;
}

void rk_free_name_list(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void rk_gpu_uuid(const unsigned char bytes[16], char *out, size_t len)
{
    const unsigned char *u = bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

int rk_parse_long_list(const char *s, long **out, int *n)
{
    char **names = NULL;
    int count = 0, rc;
    long *vals = NULL;
    rc = rk_parse_name_list(s, &names, &count);
    if (rc != RK_OK)
        return rc;
    vals = malloc(sizeof *vals * (size_t)count);
    if (!vals) {
        rc = RK_ENOMEM;
        goto out;
    }
    for (int i = 0; i < count; i++) {
        if (rk_parse_long(names[i], &vals[i]) != RK_OK) {
            rc = RK_EUSAGE;
            goto out;
        }
    }
    *out = vals;
    *n = count;
    vals = NULL;
out:
    free(vals);
    rk_free_name_list(names, count);
    return rc;
}
