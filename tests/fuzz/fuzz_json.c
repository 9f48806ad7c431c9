/*
 * fuzz_json.c - the JSON roofkit writes and reads back, through common/'s one writer and
 * one reader. A measurement's params are written by kernels_params_json (kernels/registry.c)
 * and read back by rk_json_long and rk_json_number (the analysis and the report read them so);
 * a ceiling's DRAM curve by rk_json_pairs; the details JSON of a prediction is written by
 * rk_json_str / rk_json_key_num and is not read back by roofkit.
 *
 * The input's first line is a key, the rest a JSON text for the readers. Then, as
 * properties: the first bytes choose a kernel and its parameter values, whose params
 * JSON must read back to the same values through both number readers; and the input
 * written as a JSON string by rk_json_str must be a well-formed JSON string (quotes,
 * backslashes and control characters escaped).
 */
#include "common.h"
#include "fuzz.h"
#include "kernels.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when s is exactly one JSON string literal of the bytes of want (up to want's NUL). */
static int json_string_ok(const char *s, const char *want)
{
    if (*s++ != '"')
        return 0;
    for (;;) {
        unsigned char c = (unsigned char)*s++;
        if (c == '"')
            return *s == '\0' && *want == '\0';
        if (c < 0x20 || c == '\0')
            return 0;
        if (c == '\\') {
            unsigned int u;
            char e = *s++;
            if (e == '"' || e == '\\') {
                c = (unsigned char)e;
            } else if (e == 'n' || e == 'r' || e == 't') {
                c = e == 'n' ? '\n' : e == 'r' ? '\r' : '\t';
            } else if (e == 'u' && sscanf(s, "%4x", &u) == 1 && u < 0x20) {
                c = (unsigned char)u;
                s += 4;
            } else {
                return 0;
            }
        }
        if ((unsigned char)*want++ != c)
            return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    char *nl;
    long l;
    double d;
    struct rk_buf b = RK_BUF_INIT;
    double pairs[8][2];
    if (!s)
        return 0;

    /* Both readers on arbitrary text. */
    nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        (void)rk_json_long(nl + 1, s, &l);
        (void)rk_json_number(nl + 1, s, &d);
        FUZZ_CHECK(rk_json_pairs(nl + 1, s, pairs, 8) <= 8);
        *nl = '\n';
    }

    /* Params JSON round trip for a kernel of the registry. */
    if (size >= 1 + KERNELS_MAX_PARAMS && kernels_count() > 0) {
        const struct kernels_kernel *k = kernels_get(data[0] % kernels_count());
        long p[KERNELS_MAX_PARAMS];
        char json[256];
        for (int i = 0; i < KERNELS_MAX_PARAMS; i++) {
            /* small values, negative ones, and the extremes of long */
            uint8_t x = data[1 + i];
            p[i] = x == 255 ? LONG_MAX : x == 254 ? LONG_MIN : (long)(int8_t)x * 1000003L;
        }
        kernels_params_json(k, p, json, sizeof json);
        for (int i = 0; i < k->n_params; i++) {
            long back = 0;
            double dback = 0;
            FUZZ_CHECK(rk_json_long(json, k->params[i].name, &back) == RK_OK && back == p[i]);
            FUZZ_CHECK(rk_json_number(json, k->params[i].name, &dback) == RK_OK &&
                       dback == (double)p[i]);
        }
    }

    /* The details writer's strings are well-formed JSON. */
    rk_json_str(&b, s);
    FUZZ_CHECK(!b.oom && b.s && json_string_ok(b.s, s));
    rk_buf_release(&b);
    free(s);
    return 0;
}
