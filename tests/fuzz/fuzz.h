/*
 * fuzz.h - what the fuzz targets of tests/fuzz share: the libFuzzer entry point's
 * prototype (built by clang with -fsanitize=fuzzer, or by any compiler with replay.c's
 * main(), which feeds it each corpus file) and turning the fuzzer's bytes into C strings.
 *
 * A target must never crash, leak or hit undefined behaviour on any input; a finding is
 * reported by the sanitizers (or by FUZZ_CHECK, for a property the target asserts).
 */
#ifndef RK_FUZZ_H
#define RK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property a target checks: a violation aborts, which libFuzzer reports as a crash. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a NUL-terminated string (stops at the first NUL byte); malloc'd. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/*
 * Splits a malloc'd copy of the input into at most max - 1 arguments at each NUL or
 * newline byte, after argv[0] = name; argv[*argc] is NULL. Returns the buffer to free
 * (argv points into it), or NULL.
 */
static inline char *fuzz_argv(const uint8_t *data, size_t size, const char *name, char **argv,
                              int max, int *argc)
{
    char *buf = malloc(size + 1);
    int n = 0;
    if (!buf)
        return NULL;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[n++] = (char *)name;
    for (size_t i = 0, start = 0; i <= size && n < max - 1; i++) {
        if (i == size || buf[i] == '\0' || buf[i] == '\n') {
            buf[i] = '\0';
            if (i > start || i < size)
                argv[n++] = buf + start;
            start = i + 1;
        }
    }
    argv[n] = NULL;
    *argc = n;
    return buf;
}

#endif /* RK_FUZZ_H */
